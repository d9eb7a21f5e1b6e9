"""Decoding policies: how the next token is chosen from the logits.

A language model only scores every token of the vocabulary (the logits). A *decoding policy* turns
those scores into one token id. The pieces, in the order ``generate`` applies them by default (the order of
Hugging Face ``transformers``: heat first, then cut, then sample):

1. ``apply_repetition_penalty``: make tokens already in the context (prompt included) less likely.
2. a constraint (``llmlab.constrained``), if any: forbid tokens that would break the output format.
3. ``apply_temperature``: divide the logits by T (T < 1 sharpens, T > 1 flattens).
4. ``top_k_filter``, ``top_p_filter``, ``min_p_filter``: remove unlikely candidates.
5. softmax and one draw (``torch.multinomial``), or ``argmax`` for greedy decoding.

The order is a convention of each library, not a law: llama.cpp's default chain cuts first (top-k, top-p,
min-p) and applies the temperature last, so there the temperature never changes *which* tokens survive.
``Sampler(temperature_last=True)`` follows that order (lab 04 compares both).

Every filter returns a *new* tensor in which the removed tokens are ``-inf`` (probability 0 after the
softmax). The functions reproduce the logits processors of Hugging Face ``transformers``
(``TemperatureLogitsWarper``, ``TopKLogitsWarper``, ``TopPLogitsWarper``, ``MinPLogitsWarper``,
``RepetitionPenaltyLogitsProcessor``) operation by operation, so that ``Sampler`` gives bit-identical
processed logits and, with the same seed, the same tokens as ``model.generate(do_sample=True)``;
``tests/test_sampling_hf_parity.py`` checks it. Where HF accepts an argument that produces NaN or is
meaningless (an infinite temperature, a NaN top_p, an integer temperature it rejects only by type),
these functions raise a ``ValueError`` or accept the number instead; the docstrings say which.

One deliberate difference with HF ``generate``: there, an unset ``top_k`` defaults to 50. Here
``top_k=None`` means no top-k filter, so nothing is applied that the caller did not ask for.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = [
    "apply_temperature",
    "top_k_filter",
    "top_p_filter",
    "min_p_filter",
    "apply_repetition_penalty",
    "Sampler",
    "PRESETS",
    "sample_next_token",
]

_NEG_INF = float("-inf")


# --------------------------------------------------------------------------------------------------
# Argument checks (shared by the functions and by Sampler)
# --------------------------------------------------------------------------------------------------

def _check_logits(logits: Any, name: str = "logits") -> None:
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor of shape [..., vocab], got {type(logits).__name__}")
    if not logits.is_floating_point():
        raise TypeError(f"`{name}` must have a floating-point dtype, got {logits.dtype}")
    if logits.dim() < 1 or logits.shape[-1] == 0:
        raise ValueError(f"`{name}` must have shape [..., vocab] with vocab >= 1, got {tuple(logits.shape)}")


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _check_positive_float(value: Any, name: str, hint: str = "") -> float:
    if not _is_real(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"`{name}` must be a finite number > 0, got {value!r}.{hint}")
    return float(value)


def _check_unit_interval(value: Any, name: str) -> float:
    # `not (0 <= value <= 1)` is also true for NaN, which HF lets through.
    if not _is_real(value) or not (0.0 <= value <= 1.0):
        raise ValueError(f"`{name}` must be a number in [0, 1], got {value!r}")
    return float(value)


def _check_positive_int(value: Any, name: str) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"`{name}` must be an integer >= 1, got {value!r}")
    return int(value)


_GREEDY_HINT = " For greedy decoding (the limit T -> 0) use do_sample=False instead."


# --------------------------------------------------------------------------------------------------
# The processors, one function each
# --------------------------------------------------------------------------------------------------

def apply_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Return ``logits / temperature`` (formula F4.15: ``p_i(T) = softmax(z / T)_i``).

    ``temperature`` must be a finite number > 0. T = 0 is not a temperature but greedy decoding
    (``Sampler(do_sample=False)``); HF raises for it too. Unlike HF, an ``int`` such as ``2`` is
    accepted, and ``inf`` is rejected (HF accepts it and turns ``-inf`` logits into NaN).
    ``-inf`` entries stay ``-inf``.
    """
    _check_logits(logits)
    temperature = _check_positive_float(temperature, "temperature", _GREEDY_HINT)
    # A division, not a multiplication by 1/T: the same float operation as HF, hence identical bits.
    return logits / temperature


def top_k_filter(logits: torch.Tensor, k: int, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep the ``k`` largest logits along the last axis, set the rest to ``-inf``.

    HF semantics: every token whose logit is *equal* to the k-th largest is kept, so ties at the
    boundary can leave more than ``k`` candidates. ``k`` is raised to ``min_tokens_to_keep`` and
    clipped to the vocabulary size. If the k-th largest value is itself ``-inf`` nothing more is
    removed (already removed tokens stay ``-inf``).
    """
    _check_logits(logits)
    k = _check_positive_int(k, "k")
    min_tokens_to_keep = _check_positive_int(min_tokens_to_keep, "min_tokens_to_keep")
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    kth_largest = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth_largest, _NEG_INF)


def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Nucleus filter (F4.17): keep the smallest set of most likely tokens whose probability reaches ``p``.

    The token that *crosses* ``p`` is kept: with probabilities [0.696, 0.256, 0.035, 0.013] and
    p = 0.9 the cumulative sums are 0.696, 0.952, ... and two tokens survive. At least
    ``min_tokens_to_keep`` tokens (the most likely ones) always survive.

    Edges, as in HF ``TopPLogitsWarper``: ``p = 0`` keeps only the most likely token
    (``min_tokens_to_keep`` of them); ``p = 1`` keeps every token with a non-zero probability (tokens
    whose probability underflows to exactly 0 in float32, e.g. a logit 1e4 below the maximum, become
    ``-inf``; the distribution does not change). Among tied logits at the boundary, which one survives
    follows ``torch.sort``'s order, like HF.
    """
    _check_logits(logits)
    p = _check_unit_interval(p, "p")
    min_tokens_to_keep = _check_positive_int(min_tokens_to_keep, "min_tokens_to_keep")
    # HF's formulation, kept for bit-exact parity: sort *ascending* and drop the low tail whose total
    # mass is at most 1 - p. What is left is exactly the nucleus, crossing token included.
    sorted_logits, sorted_indices = torch.sort(logits, descending=False, dim=-1)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    sorted_to_remove = cumulative_probs <= (1 - p)
    sorted_to_remove[..., -min_tokens_to_keep:] = False  # the last positions are the most likely
    to_remove = sorted_to_remove.scatter(-1, sorted_indices, sorted_to_remove)
    return logits.masked_fill(to_remove, _NEG_INF)


def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Min-p filter (F4.18): drop tokens whose probability is below ``min_p`` times the top probability.

    The comparison is strict (a token exactly at the threshold is kept), so ``min_p = 1`` keeps the
    tokens tied with the maximum and ``min_p = 0`` keeps everything. The ``min_tokens_to_keep`` most
    likely tokens are always kept (clipped to the vocabulary size), as in HF ``MinPLogitsWarper``.
    """
    _check_logits(logits)
    min_p = _check_unit_interval(min_p, "min_p")
    min_tokens_to_keep = _check_positive_int(min_tokens_to_keep, "min_tokens_to_keep")
    probs = torch.softmax(logits, dim=-1)
    top_probs = probs.amax(dim=-1, keepdim=True)
    to_remove = probs < min_p * top_probs
    keep = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    to_remove = to_remove.scatter(-1, keep, False)
    return logits.masked_fill(to_remove, _NEG_INF)


def apply_repetition_penalty(logits: torch.Tensor, input_ids: torch.Tensor, penalty: float) -> torch.Tensor:
    """CTRL-style repetition penalty on every token present in ``input_ids`` (prompt included).

    A positive logit is divided by ``penalty`` and a negative one multiplied by it, so with
    ``penalty > 1`` a repeated token always becomes less likely (``penalty < 1`` rewards repetition);
    each token is penalised once however often it appears. ``logits`` has shape ``[..., vocab]`` and
    ``input_ids`` shape ``[..., t]`` with the same leading dimensions. As in HF, ids ``>= vocab`` are
    ignored (they occur when the embedding table is larger than the output layer); negative ids raise.
    ``penalty`` must be a finite number > 0; HF also rejects a non-float such as ``2``, this accepts it.
    """
    _check_logits(logits)
    penalty = _check_positive_float(penalty, "penalty")
    if not isinstance(input_ids, torch.Tensor) or input_ids.dtype not in (torch.int64, torch.int32, torch.int16,
                                                                            torch.int8, torch.uint8):
        raise TypeError("`input_ids` must be an integer torch.Tensor of shape [..., t]")
    if input_ids.shape[:-1] != logits.shape[:-1] or input_ids.dim() != logits.dim():
        raise ValueError(f"`input_ids` must have shape [..., t] with the same leading dimensions as `logits` "
                         f"{tuple(logits.shape[:-1])}, got {tuple(input_ids.shape)}")
    if input_ids.numel() and int(input_ids.min()) < 0:
        raise IndexError("`input_ids` contains negative token ids")
    vocab = logits.shape[-1]
    scores = logits.reshape(-1, vocab)
    ids = input_ids.reshape(scores.shape[0], -1).long().clamp(max=vocab)
    # One extra column absorbs the ids >= vocab, then it is dropped.
    scores = torch.nn.functional.pad(scores, (0, 1))
    picked = torch.gather(scores, 1, ids)
    picked = torch.where(picked < 0, picked * penalty, picked / penalty)
    return scores.scatter(1, ids, picked)[:, :vocab].reshape(logits.shape)


# --------------------------------------------------------------------------------------------------
# Sampler: the whole policy in one object
# --------------------------------------------------------------------------------------------------

@dataclass
class Sampler:
    """A decoding policy: ``sampler(logits, input_ids) -> next token ids``.

    ``logits`` is ``FloatTensor[batch, vocab]`` (the last position), ``input_ids`` is
    ``LongTensor[batch, t]`` (prompt + tokens generated so far); the result is ``LongTensor[batch]``.
    This is the protocol ``llmlab.model.generate`` uses.

    The chain is HF ``generate``'s (``_get_logits_processor``): repetition penalty, then the
    ``constraint`` (masking comes before the warpers), and only when ``do_sample`` is true:
    temperature (skipped at 1.0), top-k, top-p (skipped at 1.0), min-p; finally a draw with
    ``torch.multinomial(softmax(scores), 1, generator=generator)``. With ``do_sample=False`` the token
    is the ``argmax`` of the penalised, constrained logits and the sampling knobs are ignored (a
    warning says so, like HF). The logits are cast to float32 first, as HF does.

    With ``temperature_last=True`` the temperature moves to the end of the warpers (top-k, top-p, min-p,
    then temperature), the default order of llama.cpp's sampler chain.

    ``generator`` (a ``torch.Generator``) makes the draws reproducible; with ``None`` the global torch
    RNG is used, exactly as HF does, so ``torch.manual_seed(s)`` reproduces HF's tokens.
    ``constraint`` is any callable ``(input_ids, scores) -> scores`` (an HF-style logits processor),
    typically one from ``llmlab.constrained``.
    """

    do_sample: bool = False
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    min_tokens_to_keep: int = 1
    generator: torch.Generator | None = field(default=None, repr=False, compare=False)
    constraint: Any = None
    temperature_last: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.do_sample, bool):
            raise TypeError(f"`do_sample` must be a bool, got {self.do_sample!r}")
        if not isinstance(self.temperature_last, bool):
            raise TypeError(f"`temperature_last` must be a bool, got {self.temperature_last!r}")
        self.temperature = _check_positive_float(self.temperature, "temperature", _GREEDY_HINT)
        if self.top_k is not None:
            self.top_k = _check_positive_int(self.top_k, "top_k")
        if self.top_p is not None:
            self.top_p = _check_unit_interval(self.top_p, "top_p")
        if self.min_p is not None:
            self.min_p = _check_unit_interval(self.min_p, "min_p")
        if self.repetition_penalty is not None:
            self.repetition_penalty = _check_positive_float(self.repetition_penalty, "repetition_penalty")
        self.min_tokens_to_keep = _check_positive_int(self.min_tokens_to_keep, "min_tokens_to_keep")
        if self.generator is not None and not isinstance(self.generator, torch.Generator):
            raise TypeError(f"`generator` must be a torch.Generator or None, got {type(self.generator).__name__}")
        if self.constraint is not None and not callable(self.constraint):
            raise TypeError("`constraint` must be callable as constraint(input_ids, scores) -> scores")
        if not self.do_sample:
            ignored = [name for name, value, neutral in (
                ("temperature", self.temperature, 1.0), ("top_k", self.top_k, None),
                ("top_p", self.top_p, None), ("min_p", self.min_p, None)) if value != neutral]
            if ignored:
                warnings.warn(f"do_sample=False (greedy decoding) ignores {', '.join(ignored)}; "
                              "pass do_sample=True to sample.", UserWarning, stacklevel=3)

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> "Sampler":
        """Build a sampler from ``PRESETS[name]``; keyword arguments override the preset's values."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; available: {sorted(PRESETS)}")
        kwargs = {k: v for k, v in PRESETS[name].items() if k != "description"}
        kwargs.update(overrides)
        return cls(**kwargs)

    def process(self, logits: torch.Tensor, input_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Return the final processed logits (float32, removed tokens at ``-inf``), before the draw.

        ``softmax`` of the result is the distribution the next token is drawn from. ``input_ids`` is
        needed only for the repetition penalty and the constraint.
        """
        _check_logits(logits)
        scores = logits.to(torch.float32, copy=True)  # like HF: never hand back the caller's tensor
        needs_ids = (self.repetition_penalty is not None and self.repetition_penalty != 1.0) or (
            self.constraint is not None)
        if needs_ids and input_ids is None:
            raise ValueError("`input_ids` (prompt + generated tokens) is required by the repetition penalty "
                             "and by constraints")
        if self.repetition_penalty is not None and self.repetition_penalty != 1.0:
            scores = apply_repetition_penalty(scores, input_ids, self.repetition_penalty)
        if self.constraint is not None:
            scores = self.constraint(input_ids, scores)
        if self.do_sample:
            # Same skips as HF: temperature 1 and top_p 1 are not applied at all.
            if self.temperature != 1.0 and not self.temperature_last:
                scores = apply_temperature(scores, self.temperature)
            if self.top_k is not None:
                scores = top_k_filter(scores, self.top_k, self.min_tokens_to_keep)
            if self.top_p is not None and self.top_p < 1.0:
                scores = top_p_filter(scores, self.top_p, self.min_tokens_to_keep)
            if self.min_p is not None:
                scores = min_p_filter(scores, self.min_p, self.min_tokens_to_keep)
            if self.temperature != 1.0 and self.temperature_last:
                scores = apply_temperature(scores, self.temperature)
        return scores

    def probs(self, logits: torch.Tensor, input_ids: torch.Tensor | None = None) -> torch.Tensor:
        """The distribution of the next token: ``softmax(process(logits, input_ids))``."""
        return torch.softmax(self.process(logits, input_ids), dim=-1)

    def __call__(self, logits: torch.Tensor, input_ids: torch.Tensor | None = None) -> torch.Tensor:
        _check_logits(logits)
        if logits.dim() not in (1, 2):
            raise ValueError(f"`logits` must have shape [batch, vocab] or [vocab], got {tuple(logits.shape)}")
        scores = self.process(logits, input_ids)
        if bool((scores == _NEG_INF).all(dim=-1).any()):
            raise RuntimeError("every token of a row was removed (all logits are -inf); nothing can be chosen")
        if not self.do_sample:
            return torch.argmax(scores, dim=-1)  # ties go to the lowest id, as in HF
        probs = torch.softmax(scores, dim=-1)
        return torch.multinomial(probs, num_samples=1, generator=self.generator).squeeze(-1)


def sample_next_token(logits: torch.Tensor, input_ids: torch.Tensor | None = None, **sampler_kwargs: Any
                      ) -> torch.Tensor:
    """One-shot convenience: ``Sampler(**sampler_kwargs)(logits, input_ids)``.

    ``logits`` of shape ``[vocab]`` gives a 0-d ``LongTensor`` (use ``int(...)``), shape
    ``[batch, vocab]`` gives ``LongTensor[batch]``. Example:
    ``sample_next_token(logits, do_sample=True, temperature=0.7, top_p=0.9, generator=g)``.
    """
    return Sampler(**sampler_kwargs)(logits, input_ids)


# --------------------------------------------------------------------------------------------------
# Presets per use case
# --------------------------------------------------------------------------------------------------

PRESETS: dict[str, dict[str, Any]] = {
    "precise": {
        "description": ("Trabajo preciso o factual (extraer datos, clasificar, responder con JSON): "
                        "temperatura baja y top-k restringido. Combínalo con pocos tokens, secuencias "
                        "de parada explícitas y decodificación restringida para JSON."),
        "do_sample": True,
        "temperature": 0.2,
        "top_k": 10,
    },
    "creative": {
        "description": ("Trabajo creativo (ideas, historias, titulares): temperatura media-alta y top-p "
                        "amplio. Genera varios candidatos y elige después."),
        "do_sample": True,
        "temperature": 0.9,
        "top_p": 0.95,
    },
    "code": {
        "description": ("Programación: una primera pasada conservadora con temperatura baja. Sube la "
                        "temperatura solo cuando quieras explorar alternativas a propósito."),
        "do_sample": True,
        "temperature": 0.3,
        "top_p": 0.9,
    },
    "deterministic": {
        "description": ("Evaluaciones y depuración: greedy (siempre el token más probable), la misma "
                        "salida en cada ejecución. No es «más correcto»: puede repetirse o quedarse en "
                        "lo genérico."),
        "do_sample": False,
    },
}
"""Named ``Sampler`` settings per use case, each with a Spanish ``description`` for the labs.

Source: the inference guide, table TG.7 "Settings per use case" (guide §G, G100-G104, in
``syllabus/ch05-08-and-guide.md``): precise work at a low temperature of **0.1-0.3** with a restricted
top-k (plus short max tokens, explicit stop sequences and constrained decoding for JSON); creative work
at a medium-high **0.7-1.2** with a broad top-p; programming at a low **0.1-0.5**, "conservative first
pass". The exact values (0.2 / top_k 10, 0.9 / top_p 0.95, 0.3 / top_p 0.9) are our choice inside those
bands. ``"deterministic"`` (greedy) is the guide's "deterministic settings for evaluations"; the guide
also warns that greedy is not more accurate (G-M5). Stop sequences and the token budget are arguments
of ``llmlab.model.generate``, not of the sampler.
"""
