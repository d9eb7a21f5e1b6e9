"""How good is a language model at predicting text? Loss, log-probabilities and perplexity.

A language model factorises the probability of a sequence with the chain rule,
``P(x_1..x_T) = prod_t P(x_t | x_<t)``. Multiplying many numbers below 1 underflows quickly,
so everything here works with logarithms: the log-probability of a sequence is a *sum*.

- ``nll``: the negative log-likelihood (the training loss), summed or averaged over tokens.
- ``perplexity``: ``exp(mean NLL)``, "how many equally likely options per token".
- ``validation_documents`` and ``model_perplexity``: *the* validation text of the course and *the* perplexity
  of a model on it. Every lab, the build report and the benchmarks call these two, so a number printed anywhere
  means the same thing: the validation split of ``llmlab.corpus``, in one of its ``VALIDATION_PARTS``
  (``"hand-written"``: the files written by hand; ``"generated"``: the ``gen_*`` files of the corpus generator;
  ``"all"``: both, in file order), encoded as ``<|bos|> text <|eos|>`` per document and scored by
  ``llmlab.train.evaluate`` (windows of the model's context, every token after the first predicted once).

Logarithms are natural (nats) unless ``base`` says otherwise. Perplexity does not depend on the
base as long as the same base is used to take the log and to exponentiate.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

__all__ = [
    "nll",
    "sequence_log_prob",
    "perplexity",
    "perplexity_from_loss",
    "surprisal",
    "masked_mean_nll",
    "VALIDATION_PARTS",
    "validation_documents",
    "validation_part_of",
    "model_perplexity",
]

VALIDATION_PARTS = ("hand-written", "generated", "all")


def _check_probs(probs) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 1:
        p = p.reshape(-1)
    if p.size == 0:
        raise ValueError("need at least one probability (one token)")
    if np.any(np.isnan(p)):
        raise ValueError("probabilities contain NaN")
    if np.any(p <= 0) or np.any(p > 1):
        bad = p[(p <= 0) | (p > 1)][0]
        raise ValueError(
            f"each probability must be in (0, 1], got {bad!r}; a probability of 0 means an "
            "infinite loss (the model ruled out the token that actually came)"
        )
    return p


def surprisal(probs, base: float = math.e) -> np.ndarray:
    """Per-token information ``-log p`` (nats by default, ``base=2`` for bits)."""
    p = _check_probs(probs)
    return -np.log(p) / math.log(base)


def nll(probs: Iterable[float], base: float = math.e, reduction: str = "sum") -> float:
    """Negative log-likelihood of the probabilities the model gave to the *correct* tokens.

    ``reduction="sum"`` is the loss of the whole sequence (the textbook's L); ``"mean"`` is the
    loss per token (what training curves usually show).

    >>> round(nll([0.5, 0.25, 0.8]), 6)   # "la casa azul"
    2.302585
    """
    if reduction not in ("sum", "mean"):
        raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
    if base <= 0 or base == 1:
        raise ValueError("the logarithm base must be > 0 and != 1")
    s = surprisal(probs, base)
    return float(s.sum() if reduction == "sum" else s.mean())


def sequence_log_prob(cond_probs: Iterable[float]) -> float:
    """``log P(x_1..x_T) = sum_t log P(x_t | x_<t)`` in nats, without underflow.

    The product of 1000 probabilities of 0.01 is 1e-2000, which is 0.0 in float64; its log,
    -4605.17, is perfectly representable.
    """
    return float(np.sum(np.log(_check_probs(cond_probs))))


def perplexity_from_loss(total_loss: float, n_tokens: int) -> float:
    """``exp(L / n)``: perplexity from a summed loss in nats over ``n_tokens`` tokens."""
    if int(n_tokens) != n_tokens or n_tokens <= 0:
        raise ValueError(f"n_tokens must be a positive integer, got {n_tokens!r}")
    if total_loss < 0:
        raise ValueError("a negative log-likelihood cannot be negative")
    return float(math.exp(total_loss / n_tokens))


def perplexity(probs: Iterable[float]) -> float:
    """Perplexity of the probabilities given to the correct tokens: ``exp(mean NLL)``.

    >>> round(perplexity([0.5, 0.25, 0.8]), 6)
    2.154435
    """
    p = _check_probs(probs)
    return perplexity_from_loss(float(-np.log(p).sum()), p.size)


def masked_mean_nll(token_log_probs, loss_mask) -> float:
    """Mean NLL over the positions where ``loss_mask`` is true (e.g. only the answer tokens).

    Chat fine-tuning scores only what the assistant says; prompt and template tokens are masked
    out so they neither count in the loss nor in the perplexity.
    """
    lp = np.asarray(token_log_probs, dtype=np.float64)
    mask = np.asarray(loss_mask, dtype=bool)
    if lp.shape != mask.shape:
        raise ValueError(f"token_log_probs {lp.shape} and loss_mask {mask.shape} differ in shape")
    if not mask.any():
        raise ValueError("loss_mask selects no token")
    if np.any(lp > 0):
        raise ValueError("log-probabilities must be <= 0")
    return float(-lp[mask].mean())


def validation_part_of(source: str) -> str:
    """``"generated"`` for a corpus document written by the generator (its file is named ``gen_*``), else
    ``"hand-written"``. ``source`` is a ``llmlab.corpus.Document.source`` (``"corpus/raw/gen_cuentos_01.txt"``)."""
    return "generated" if source.rsplit("/", 1)[-1].startswith("gen_") else "hand-written"


def validation_documents(part: str = "hand-written", data_dir=None) -> list[str]:
    """The texts of the course's validation text, one part of it: see ``VALIDATION_PARTS``.

    ``"hand-written"`` (the default) is the part that says most about natural Spanish; ``"generated"`` is
    template output, much easier to predict; ``"all"`` is the whole validation split.
    """
    if part not in VALIDATION_PARTS:
        raise ValueError(f"part must be one of {VALIDATION_PARTS}, got {part!r}")
    from llmlab import corpus  # lazy: metrics itself needs only numpy

    records = corpus.load_records("validation", data_dir)
    if part != "all":
        records = [r for r in records if validation_part_of(r.source) == part]
    if not records:
        raise ValueError(f"the validation split has no {part!r} document")
    return [r.text for r in records]


def model_perplexity(model, tokenizer, documents="hand-written", *, max_tokens: int | None = None,
                     data_dir=None) -> dict:
    """The perplexity of ``model`` on a text, the one way the course measures it.

    ``documents`` is a part of the validation text (a name of ``VALIDATION_PARTS``) or a list of strings.
    Returns ``{"perplexity", "nll", "tokens", "part"}``: ``exp`` of the mean NLL per token (nats) that
    ``llmlab.train.evaluate`` gives on the documents encoded with ``llmlab.train.encode_documents``,
    ``tokens`` the number of tokens scored from (after ``max_tokens``, the first tokens only), ``part``
    the part's name or ``"custom"``.
    """
    from llmlab.train import encode_documents, evaluate  # lazy: torch

    if isinstance(documents, str):
        part, docs = documents, validation_documents(documents, data_dir)
    else:
        part, docs = "custom", list(documents)
    ids = encode_documents(docs, tokenizer)
    if max_tokens is not None:
        ids = ids[:max_tokens]
    loss = evaluate(model, ids)
    return {"perplexity": float(math.exp(loss)), "nll": float(loss), "tokens": int(ids.numel()), "part": part}
