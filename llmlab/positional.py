"""Where position comes from (chapter 02): sinusoidal tables and rotary embeddings (RoPE), in NumPy.

Why positions at all: self-attention compares every token with every other one by dot products,
and a dot product does not care where a vector sits in the sequence. Permute the input rows and
the output rows come out permuted the same way (:func:`is_permutation_equivariant`), so without
positions "perro muerde hombre" and "hombre muerde perro" are the same bag of words.

Three ways to put order back, the three of :mod:`llmlab.model`:

- **sinusoidal** (the original Transformer): a fixed table added to the embeddings,
  ``PE[pos, 2i] = sin(pos / base^(2i/d))`` and ``PE[pos, 2i+1] = cos(pos / base^(2i/d))``.
  Low dimensions oscillate fast, high ones slowly, like the hands of a clock.
- **learned** (BERT, GPT-2): a trainable table of the same shape; it knows nothing past the
  longest position seen in training (``llmlab.model.LearnedPositions``).
- **RoPE** (Llama and most modern LLMs): nothing is added to the embeddings; instead ``q`` and
  ``k`` are rotated, pair of dimensions by pair of dimensions, by an angle proportional to their
  position. A rotation by ``a`` against a rotation by ``b`` leaves a dot product that depends on
  ``a - b`` only, so attention scores depend on the *relative* distance (:func:`rope_score`).

**RoPE pairing convention.** Dimension ``i`` is paired with dimension ``i + d/2`` ("rotate half"),
the layout of HF Llama and of ``llmlab.model.apply_rope``. The original RoFormer paper pairs
neighbours ``(2i, 2i+1)`` instead (``interleaved=True`` here, as in GPT-J); both rotate the same
pairs by the same angles, only the order in which the coordinates are stored differs, so a model
trained with one layout needs its weight columns permuted to run with the other.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Callable

import numpy as np

__all__ = [
    "sinusoidal_positions",
    "rope_frequencies",
    "rope_angles",
    "rotate_half",
    "apply_rope",
    "rope_score",
    "is_permutation_equivariant",
]


def _int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _base(base) -> float:
    if isinstance(base, bool) or not isinstance(base, Real) or not math.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a finite number > 0, got {base!r}")
    return float(base)


# ----------------------------------------------------------------------------------------------
# Sinusoidal table
# ----------------------------------------------------------------------------------------------


def sinusoidal_positions(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The fixed position table of the original Transformer, shape ``(n, d)``, float64.

    Column ``j`` uses the frequency ``1 / base^(2i/d)`` with ``i = j // 2``: even columns hold
    ``sin(pos · freq)``, odd columns ``cos(pos · freq)``. Row 0 is ``[0, 1, 0, 1, ...]`` and every
    value lies in ``[-1, 1]``. For an odd ``d`` the same formula is applied column by column, so
    the last column is a sine without its cosine partner. Agrees with
    ``llmlab.model.sinusoidal_positions`` (float32) for even ``d``.
    """
    n = _int("n", n, 0)
    d = _int("d", d, 1)
    base = _base(base)
    pos = np.arange(n, dtype=np.float64)[:, None]  # (n, 1)
    two_i = 2 * (np.arange(d) // 2)  # 0, 0, 2, 2, 4, 4, ... one exponent per sin/cos pair
    angles = pos / base ** (two_i / d)  # (n, d)
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


# ----------------------------------------------------------------------------------------------
# RoPE
# ----------------------------------------------------------------------------------------------


def rope_frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """Angular speed of each of the ``d/2`` rotated pairs: ``base^(-2i/d)``, shape ``(d/2,)``.

    Pair 0 turns by 1 radian per position; the last pair, almost not at all. ``d`` must be even.
    """
    d = _int("d", d, 2)
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions: d must be even, got {d}")
    return _base(base) ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def _positions(positions, n: int | None) -> np.ndarray:
    if positions is None:
        return np.arange(n, dtype=np.float64)
    p = np.asarray(positions)
    if p.dtype == bool or not np.issubdtype(p.dtype, np.number):
        raise TypeError(f"positions must be numbers, got dtype {p.dtype}")
    return p.astype(np.float64)


def rope_angles(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """Rotation angle of each pair at positions ``0 .. n-1``: ``pos · base^(-2i/d)``, shape ``(n, d/2)``."""
    n = _int("n", n, 0)
    return np.arange(n, dtype=np.float64)[:, None] * rope_frequencies(d, base)[None, :]


def rotate_half(x) -> np.ndarray:
    """``[x1, x2] -> [-x2, x1]`` on the two halves of the last axis (NumPy twin of ``llmlab.model.rotate_half``)."""
    x = np.asarray(x, dtype=np.float64)
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x, positions=None, base: float = 10000.0, interleaved: bool = False) -> np.ndarray:
    """Rotate the vectors ``x`` (shape ``(..., n, d)``, ``d`` even) by their positions.

    ``positions`` (shape ``(n,)``, or anything that broadcasts against ``x[..., 0]``) defaults to
    ``0 .. n-1``. Pair ``i`` of the vector at position ``p`` is rotated by the angle
    ``p · base^(-2i/d)``. With the default "rotate half" layout pair ``i`` is ``(x[i], x[i + d/2])``
    (HF Llama, ``llmlab.model``); with ``interleaved=True`` it is ``(x[2i], x[2i+1])`` (RoFormer).
    Rotations keep lengths: ``|apply_rope(x)| == |x|`` row by row.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 1:
        raise ValueError("x must have at least one dimension (the vector)")
    d = x.shape[-1]
    freqs = rope_frequencies(d, base)
    if positions is None and x.ndim < 2:
        raise ValueError("x of shape (d,) has no sequence axis: pass its position(s) explicitly")
    pos = _positions(positions, x.shape[-2] if x.ndim >= 2 else None)
    angles = pos[..., None] * freqs  # (..., n, d/2)
    cos, sin = np.cos(angles), np.sin(angles)
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = np.empty(np.broadcast_shapes(x.shape, angles.shape[:-1] + (d,)))
        out[..., 0::2] = x1 * cos - x2 * sin
        out[..., 1::2] = x2 * cos + x1 * sin
        return out
    cos2, sin2 = np.concatenate([cos, cos], axis=-1), np.concatenate([sin, sin], axis=-1)
    return x * cos2 + rotate_half(x) * sin2  # the same formula as llmlab.model.apply_rope


def rope_score(q, k, pos_q, pos_k, base: float = 10000.0) -> np.ndarray:
    """Dot product of ``q`` rotated to position ``pos_q`` with ``k`` rotated to ``pos_k``.

    ``q`` and ``k`` are single vectors of even length ``d``; ``pos_q`` and ``pos_k`` are numbers or
    arrays that broadcast together. The result depends on ``pos_q - pos_k`` only::

        rope_score(q, k, [3, 10, 50], [0, 7, 47])   # three equal numbers: distance 3 every time
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.ndim != 1 or k.shape != q.shape:
        raise ValueError(f"q and k must be single vectors of the same length, got {q.shape} and {k.shape}")
    pq, pk = np.broadcast_arrays(_positions(pos_q, None), _positions(pos_k, None))
    rq = apply_rope(np.broadcast_to(q, pq.shape + q.shape), pq, base)
    rk = apply_rope(np.broadcast_to(k, pk.shape + k.shape), pk, base)
    return np.sum(rq * rk, axis=-1)


# ----------------------------------------------------------------------------------------------
# Why positions: attention alone is a bag of words
# ----------------------------------------------------------------------------------------------


def is_permutation_equivariant(fn: Callable, X, perm, atol: float = 1e-8) -> bool:
    """Does reordering the tokens of ``X`` just reorder the rows of ``fn(X)`` the same way?

    ``X`` has shape ``(n, d)`` or ``(B, n, d)``; ``perm`` is a permutation of ``range(n)`` applied
    to the token axis (the second to last). Returns ``True`` when
    ``fn(X[..., perm, :])`` equals ``fn(X)[..., perm, :]`` within ``atol``. Self-attention without
    positions passes (it sees a bag of words); once positions are added inside ``fn``, or with a
    causal mask, it fails.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim not in (2, 3):
        raise ValueError(f"X must have shape (n, d) or (B, n, d), got {X.shape}")
    perm = np.asarray(perm)
    n = X.shape[-2]
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        raise ValueError(f"perm must be a permutation of range({n}), got {perm.tolist()}")
    out = np.asarray(fn(X), dtype=np.float64)
    out_of_permuted = np.asarray(fn(X[..., perm, :]), dtype=np.float64)
    if out.shape != out_of_permuted.shape or out.ndim < 2 or out.shape[-2] != n:
        return False
    return bool(np.allclose(out_of_permuted, out[..., perm, :], rtol=0.0, atol=atol))
