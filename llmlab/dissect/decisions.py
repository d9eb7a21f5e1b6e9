"""Chapter 08's two tables for deciding: which stage of the call to look at first, and which option to choose."""

from __future__ import annotations

import math

from llmlab.arguments import real_number

# Chapter 08 (T8.14): symptom -> first stage of the call to look at. Keys are lower-case Spanish symptoms.
DIAGNOSIS = {
    "respuesta cortada": "contrato de salida",  # max_tokens, stop, timeout
    "json inválido": "decodificación",  # temperature, constrained decoding, schema, extra text
    "tarda en empezar": "prefill",  # input tokens, pasted documents, over-broad RAG
    "empieza rápido y acaba lento": "decode",  # output tokens, tok/s, batch, streaming
    "se queda sin memoria": "entorno de ejecución",  # the runtime: weights + KV + batch + context + margin
    "repite frases": "muestreo",  # repetition penalty, temperature
    "responde sin citar": "contexto",  # retrieval, output contract, groundedness
    "seguro pero equivocado": "evaluación",  # own data set, slices, human review
    "cambia entre ejecuciones": "reproducibilidad",  # seed, temperature, model version, provider
    "usa mal una herramienta": "herramientas",  # schema, permissions, arguments, validators
}


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
    if not weights or any(real_number(w, f"weight of {c!r}") < 0 for c, w in weights.items()):
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


# The inference guide's model types (TG.10), in the order a recommendation checks them.
MODEL_TYPES = ("base", "instruido", "chat", "razonamiento", "herramientas")


def recommend_model_type(turns: int, *, fine_tune: bool = False, tools: bool = False, reasoning: bool = False) -> str:
    """Which kind of checkpoint to start from (guide TG.10), one of ``MODEL_TYPES``.

    Checked in this order: a fine-tuning of your own starts from ``"base"``; tool calls or strict JSON
    need ``"herramientas"``; multi-step maths, logic or verification ``"razonamiento"``; a dialogue of
    more than one turn ``"chat"``; a one-off instruction ``"instruido"``. ``turns`` is an int >= 1.
    """
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
        raise ValueError(f"turns must be an int >= 1, got {turns!r}")
    if fine_tune:
        return "base"
    if tools:
        return "herramientas"
    if reasoning:
        return "razonamiento"
    return "chat" if turns > 1 else "instruido"
