"""A linear recurrence, the core of state-space models (chapter 05): O(n) in the sequence length.

Attention compares every token with every earlier one: ``n²/2`` dot products for ``n`` tokens.
A state-space model (Mamba and its relatives) instead carries a fixed-size state along the
sequence and updates it once per token::

    h_t = a ⊙ h_{t-1} + x_t,     h_{-1} = 0

so ``n`` tokens cost ``n`` updates, and generating one more token costs the same at token 10 as at
token 10 000 (no cache that grows). Real SSMs make ``a`` and the input map depend on the token
("selective") and read the state out through another projection; the cost argument is the same.

``linear_recurrence`` is the reference; ``attention_vs_recurrence_flops`` counts the
multiply-adds of both for a plot.
"""

from __future__ import annotations

import numpy as np

from llmlab._arrays import as_float_array

__all__ = ["linear_recurrence", "attention_vs_recurrence_flops"]


def linear_recurrence(x, a) -> np.ndarray:
    """All states ``h_0 … h_{n-1}`` of ``h_t = a ⊙ h_{t-1} + x_t`` (``h_{-1} = 0``), shape ``(n, d)``.

    ``x`` is ``(n, d)`` (one row per token); ``a`` is a number or a ``(d,)`` vector of decays
    (one per state channel). ``a = 0`` returns ``x``; ``a = 1`` the running sum.
    """
    x = as_float_array("x", x, min_ndim=2, max_ndim=2)
    a = as_float_array("a", a, max_ndim=1)
    if a.ndim == 1 and a.shape[0] != x.shape[1]:
        raise ValueError(f"a must be a number or a vector of length d={x.shape[1]}, got shape {a.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(a))):
        raise ValueError("x and a must be finite")
    h = np.zeros(x.shape[1])
    states = np.empty_like(x)
    for t in range(x.shape[0]):  # one cheap update per token: the state has a fixed size
        h = a * h + x[t]
        states[t] = h
    return states


def attention_vs_recurrence_flops(n: int, d: int) -> dict[str, int]:
    """Multiply-adds for ``n`` tokens of width ``d``: causal attention ``n(n+1)/2 · 2d`` (scores and
    mixing) against the recurrence's ``n · d`` (one multiply-add per channel and token)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"n and d must be ints >= 1, got n={n!r}, d={d!r}")
    return {"attention": n * (n + 1) // 2 * 2 * d, "recurrence": n * d}
