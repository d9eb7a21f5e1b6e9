"""Dissecting one call to a language model (chapter 08 and the inference guide; lab 09).

A call looks simple from outside: text in, text out. Inside it goes through tokens, a chat template,
a prefill that fills the KV cache, a decode loop that picks one token at a time, stop conditions and
an output contract. When something goes wrong, the first question is *which stage* to look at. This
module holds the small reference pieces lab 09 grades, one per stage:

- ``tokens_per_word``, ``words_per_second``: tokens are the unit of work, but tokenizers differ, so
  tok/s only compares across models after converting to words (guide G-3, G-M6).
- ``answer_perplexity``: how surprised a model is by a given answer after a given prompt; the
  measure that shows a wrong chat template hurts (guide G-M4).
- ``generate_with_stops``: the decode loop with its three stop reasons: ``"eos"``,
  ``"stop_sequence"`` and ``"max_tokens"`` (guide G-M7).
- ``fits_on_device``: weights plus KV cache against the device memory; supported context is not
  free context, and weight bits are not KV bytes (guide G-1, G-5, G-M1, G-M2).
- ``DIAGNOSIS``, ``diagnose``: chapter 08's table "symptom -> first stage to look at" (8-M6).
- ``score_options``: a weighted decision matrix with minimum thresholds (chapter 08's kit, 8-M1).

The KV rule of thumb itself (0.5 MiB per token for a 7B MHA model) lives in
``llmlab.cost.kv_mib_per_token``. Units: decimal GB (1e9 bytes) in ``fits_on_device``; seconds.
"""

from __future__ import annotations

import math
from numbers import Real

import torch

from llmlab.cost.footprint import kv_cache_values, memory_needed, weight_bytes

__all__ = [
    "DIAGNOSIS",
    "STOP_REASONS",
    "answer_perplexity",
    "diagnose",
    "fits_on_device",
    "generate_with_stops",
    "score_options",
    "tokens_per_word",
    "words_per_second",
]

STOP_REASONS = ("eos", "stop_sequence", "max_tokens")

# Chapter 08 (T8.14): symptom -> first stage of the call to look at. Keys are lower-case Spanish symptoms.
DIAGNOSIS = {
    "respuesta cortada": "contrato de salida",  # max_tokens, stop, timeout
    "json inválido": "decodificación",  # temperature, constrained decoding, schema, extra text
    "tarda en empezar": "prefill",  # input tokens, pasted documents, over-broad RAG
    "empieza rápido y acaba lento": "decode",  # output tokens, tok/s, batch, streaming
    "se queda sin memoria": "runtime",  # weights + KV + batch + context + margin
    "repite frases": "muestreo",  # repetition penalty, temperature
    "responde sin citar": "contexto",  # retrieval, output contract, groundedness
    "seguro pero equivocado": "evaluación",  # own data set, slices, human review
    "cambia entre ejecuciones": "reproducibilidad",  # seed, temperature, model version, provider
    "usa mal una herramienta": "herramientas",  # schema, permissions, arguments, validators
}


def _real(value, name: str, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def tokens_per_word(n_words: float, n_tokens: float) -> float:
    """Tokens per word of a text: 4,000 words in 5,000 tokens -> 1.25; in 7,500 -> 1.875 (guide G-3)."""
    return _real(n_tokens, "n_tokens") / _real(n_words, "n_words", positive=True)


def words_per_second(tokens_per_s: float, tokens_per_word: float) -> float:
    """Words per second from tok/s: 50 tok/s at 1.25 tokens/word -> 40 words/s (guide G-M6)."""
    return _real(tokens_per_s, "tokens_per_s") / _real(tokens_per_word, "tokens_per_word", positive=True)


def _ids(ids, name: str) -> list[int]:
    values = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    if not values:
        raise ValueError(f"{name} must hold at least one token id")
    return [int(t) for t in values]


def answer_perplexity(model, prompt_ids, answer_ids) -> float:
    """Perplexity of ``answer_ids`` after ``prompt_ids``: ``exp(mean NLL)`` over the answer tokens only.

    ``model(ids [1, t])`` returns logits ``[1, t, vocab]``; the logits at position ``i`` predict token
    ``i + 1``, so the answer's first token is scored by the prompt's last position. The prompt tokens
    are context, never scored.
    """
    prompt, answer = _ids(prompt_ids, "prompt_ids"), _ids(answer_ids, "answer_ids")
    ids = torch.tensor([prompt + answer])
    with torch.no_grad():
        logits = model(ids)[0].double()
    log_probs = torch.log_softmax(logits[len(prompt) - 1:-1], dim=-1)
    nll = -log_probs[torch.arange(len(answer)), torch.tensor(answer)]
    return float(torch.exp(nll.mean()))


def generate_with_stops(next_token, prompt_ids, max_tokens: int, eos_id: int | None = None,
                        stop_sequences=()) -> dict:
    """The decode loop with explicit stop conditions (guide TG.1 step 6, G-M7).

    ``next_token(ids) -> int`` picks the next token after ``ids`` (the prompt plus what was generated).
    Returns ``{"ids": generated ids, "stop_reason": "eos" | "stop_sequence" | "max_tokens"}``:

    - the EOS token ends the answer and is not part of it;
    - a stop sequence (a list of ids) ends it when the *generated* ids end with it, and is removed,
      like the ``stop`` parameter of OpenAI-style APIs;
    - at most ``max_tokens`` tokens are generated (``max_tokens = 0`` generates nothing).
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be an int >= 0, got {max_tokens!r}")
    stops = [list(s) for s in stop_sequences]
    if any(len(s) == 0 for s in stops):
        raise ValueError("a stop sequence must hold at least one token id")
    context, generated = list(prompt_ids), []
    while len(generated) < max_tokens:
        token = int(next_token(context + generated))
        if eos_id is not None and token == eos_id:
            return {"ids": generated, "stop_reason": "eos"}
        generated.append(token)
        for stop in stops:
            if generated[-len(stop):] == stop:
                return {"ids": generated[:-len(stop)], "stop_reason": "stop_sequence"}
    return {"ids": generated, "stop_reason": "max_tokens"}


def fits_on_device(n_params: float, weight_bits: float, context: int, n_layers: int, n_kv_heads: int,
                   head_dim: int, device_gb: float, kv_bytes: float = 2, batch: int = 1,
                   reserve_gb: float = 0.0) -> bool:
    """Do the weights and the KV cache of ``batch`` sequences of ``context`` tokens fit in ``device_gb``?

    ``weights = N · bits / 8`` and ``KV = 2 · L · B · S · H_kv · d_h · kv_bytes``, both in decimal GB,
    plus ``reserve_gb``; fits when the total is ``<= device_gb``. The weight bits and the KV bytes
    are separate knobs: 4-bit weights leave an fp16 KV cache as big as before (guide G-M2).
    7B, GQA-8, 128K tokens on 24 GB: fp16 weights 14 + 17.18 = 31.18 GB (no); 4-bit weights
    3.5 + 17.18 = 20.68 GB (yes).
    """
    weights = weight_bytes(_real(n_params, "n_params"), _real(weight_bits, "weight_bits", positive=True))
    for value, name in ((n_layers, "n_layers"), (n_kv_heads, "n_kv_heads"), (head_dim, "head_dim"), (batch, "batch")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if isinstance(context, bool) or not isinstance(context, int) or context < 0:
        raise ValueError(f"context must be an int >= 0, got {context!r}")
    kv = kv_cache_values(n_layers, batch, context, n_kv_heads, head_dim) * _real(kv_bytes, "kv_bytes", positive=True)
    device_gb = _real(device_gb, "device_gb", positive=True)
    return memory_needed(weights, kv) / 1e9 + _real(reserve_gb, "reserve_gb") <= device_gb


def diagnose(symptom: str) -> str:
    """The first stage of the call to look at for a symptom of ``DIAGNOSIS`` (case and spaces ignored)."""
    if not isinstance(symptom, str):
        raise ValueError(f"symptom must be a string, got {type(symptom).__name__}")
    key = " ".join(symptom.lower().split())
    if key not in DIAGNOSIS:
        raise ValueError(f"unknown symptom {symptom!r}; known: {', '.join(DIAGNOSIS)}")
    return DIAGNOSIS[key]


def score_options(options: dict, weights: dict, minimums: dict | None = None) -> list[tuple[str, float]]:
    """Rank options by their weighted score, best first (chapter 08's decision matrix).

    ``options`` maps each option to its scores per criterion (e.g. 1-5); ``weights`` maps criteria to
    weights >= 0 (not all zero), normalised to sum 1, so the score stays on the scale of the scores.
    Criteria without a weight do not count. Every weighted criterion must be scored for every option.
    ``minimums`` maps a criterion to the lowest acceptable score: an option below any minimum is
    left out, however high its total. Ties are broken by name, alphabetically.
    """
    if not weights or any(_real(w, f"weight of {c!r}") < 0 for c, w in weights.items()):
        raise ValueError("weights must be a non-empty dict of numbers >= 0")
    total = sum(float(w) for w in weights.values())
    if total == 0:
        raise ValueError("at least one weight must be > 0")
    minimums = {} if minimums is None else minimums
    ranked = []
    for name, scores in options.items():
        missing = [c for c in weights if c not in scores]
        if missing:
            raise ValueError(f"option {name!r} has no score for {missing}")
        if any(scores.get(c, -math.inf) < m for c, m in minimums.items()):
            continue
        ranked.append((name, sum(float(w) * float(scores[c]) for c, w in weights.items()) / total))
    return sorted(ranked, key=lambda item: (-item[1], item[0]))
