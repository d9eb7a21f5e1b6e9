"""Scaled dot-product attention in NumPy, one readable function per idea (chapters 02 and 03).

Conventions, the same as the book's:

- **Row vectors.** ``X`` has one row per token, shape ``(n, d_model)``; projections are ``X @ W``.
  Every function also accepts leading batch dimensions (``(..., n, d)``) unless it says otherwise.
- ``d_k`` is the last dimension of ``Q`` (and ``K``); ``d_v``, the last dimension of ``V``, may differ.
- The causal mask is **additive**: ``0`` where a query may look (key position ``j <= i``) and a very
  negative number (``-1e9``) above the diagonal, added to the scores *before* the softmax, so that
  ``exp`` turns the blocked positions into exactly 0 and each row renormalises over what it may see.
- Multi-head layouts follow ``llmlab.model`` (and Llama / HF): ``W_Q`` is ``(d_model, n_heads * d_head)``
  and head ``h`` owns columns ``h * d_head : (h + 1) * d_head``; with grouped K/V heads, query head
  ``h`` uses K/V head ``h // (n_heads // n_kv_heads)`` (each K/V head is repeated in a row).

These are the reference implementations that the lab notebooks compare against. They favour
clarity over speed; ``llmlab.model`` has the PyTorch version used for real models.
"""

from __future__ import annotations

import math

import numpy as np

from llmlab._arrays import as_float_array
from llmlab.functional import softmax

__all__ = [
    "attention_row",
    "most_attended",
    "qkv_project",
    "attention_scores",
    "causal_mask",
    "softmax_rows",
    "scaled_dot_product_attention",
    "causal_attention",
    "attention_from_X",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "grouped_query_attention",
    "cross_attention",
    "KVCache",
    "decode_step",
]

NEG = -1e9  # "minus infinity" for masks: exp(NEG - max) is exactly 0.0 in float64, and never NaN


# ----------------------------------------------------------------------------------------------
# Input validation
# ----------------------------------------------------------------------------------------------


def _array(name: str, x, min_ndim: int = 1, max_ndim: int | None = None) -> np.ndarray:
    """``x`` as a float64 array with at least ``min_ndim`` dimensions and no NaN, or a clear error."""
    arr = as_float_array(name, x, min_ndim, max_ndim)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    return arr


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def _check_projection(name: str, W: np.ndarray, d_model: int) -> None:
    if W.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (d_model, d_out), got shape {W.shape}")
    if W.shape[0] != d_model:
        raise ValueError(
            f"{name} has {W.shape[0]} rows but X has d_model={d_model} columns "
            f"(row vectors: X @ {name} needs {name}.shape[0] == X.shape[-1])"
        )


# ----------------------------------------------------------------------------------------------
# Chapter 02: one row of attention, projections, scaled dot-product attention
# ----------------------------------------------------------------------------------------------


def attention_row(scores, values) -> tuple[np.ndarray, np.ndarray]:
    """Attention of one token: ``weights = softmax(scores)``, ``output = weights @ values``.

    ``scores`` has shape ``(n,)`` (one score per token looked at) and ``values`` ``(n, d_v)``.
    The chapter 02 example ("banco" looking at "El banco aprobó"): scores ``[0.2, 2.0, 1.0]``
    give weights ``[0.107815, 0.652240, 0.239946]`` and output ``[0.759000, 0.370394]``.
    """
    s = _array("scores", scores, 1, 1)
    v = _array("values", values, 2, 2)
    if v.shape[0] != s.shape[0]:
        raise ValueError(
            f"values must have one row per score: scores has {s.shape[0]} entries, values shape {v.shape}"
        )
    weights = softmax(s)
    return weights, weights @ v


def most_attended(A, i: int) -> int:
    """Index of the token that token ``i`` attends to most: the argmax of **row** ``i`` of ``A`` ``(n, n)``.

    Rows are queries (who looks), columns keys (who is looked at): the column would answer "who looks at
    token i most". Ties go to the lowest index; ``i`` outside ``0 … n-1`` raises ``IndexError``.
    """
    A = _array("A", A, 2, 2)
    if isinstance(i, bool) or int(i) != i or not 0 <= i < A.shape[0]:
        raise IndexError(f"token {i!r} is not a row of an attention matrix with {A.shape[0]} rows")
    return int(np.argmax(A[int(i)]))


def qkv_project(X, W_Q, W_K, W_V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``Q = X W_Q``, ``K = X W_K``, ``V = X W_V`` for ``X`` of shape ``(..., n, d_model)``.

    The three matrices have ``d_model`` rows; their column counts (``d_k``, ``d_k``, ``d_v``) may
    differ from ``d_model`` and ``W_V`` may differ from the other two.
    """
    X = _array("X", X, 2)
    Ws = {"W_Q": _array("W_Q", W_Q, 2, 2), "W_K": _array("W_K", W_K, 2, 2), "W_V": _array("W_V", W_V, 2, 2)}
    for name, W in Ws.items():
        _check_projection(name, W, X.shape[-1])
    if Ws["W_Q"].shape[1] != Ws["W_K"].shape[1]:
        raise ValueError(
            f"W_Q and W_K must have the same number of columns d_k (queries and keys are compared "
            f"by a dot product), got {Ws['W_Q'].shape} and {Ws['W_K'].shape}"
        )
    return X @ Ws["W_Q"], X @ Ws["W_K"], X @ Ws["W_V"]


def attention_scores(Q, K) -> np.ndarray:
    """Scores ``S = Q Kᵀ / sqrt(d_k)``, shape ``(..., n_q, n_k)``; ``d_k = Q.shape[-1]``.

    Dividing by ``sqrt(d_k)`` keeps the scores' spread independent of ``d_k`` (a dot product of
    ``d_k`` terms grows with ``d_k``), so the softmax does not saturate into a one-hot vector.
    """
    Q = _array("Q", Q, 2)
    K = _array("K", K, 2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share the last dimension d_k, got Q {Q.shape} and K {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)


def causal_mask(n: int, neg: float = NEG) -> np.ndarray:
    """Additive causal mask ``(n, n)``: ``0.0`` on and below the diagonal, ``neg`` above it.

    Row ``i`` is the query at position ``i``; column ``j > i`` is the future, which it must not see.
    ``neg`` is a very negative number (``-1e9`` by default, as in the book) or ``-np.inf``.
    """
    n = _positive_int("n", n)
    neg = float(neg)
    if not neg < 0:
        raise ValueError(f"neg must be negative (it is added to blocked scores), got {neg}")
    future = np.triu(np.ones((n, n), dtype=bool), k=1)  # j > i
    return np.where(future, neg, 0.0)


def softmax_rows(S) -> np.ndarray:
    """Numerically stable softmax along the last axis (each row of a score matrix sums to 1)."""
    S = _array("S", S, 1)
    return softmax(S, axis=-1)


def _apply_mask(S: np.ndarray, mask) -> np.ndarray:
    m = np.asarray(mask)
    if m.dtype == bool:
        try:
            np.broadcast_shapes(m.shape, S.shape)
        except ValueError:
            raise ValueError(f"mask of shape {m.shape} does not broadcast to the scores' shape {S.shape}") from None
        # Boolean masks follow torch's convention: True = this query may attend to this key.
        return np.where(m, S, -np.inf)
    m = _array("mask", m, 0)
    try:
        return S + m
    except ValueError:
        raise ValueError(f"mask of shape {m.shape} does not broadcast to the scores' shape {S.shape}") from None


def scaled_dot_product_attention(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """``O = softmax(Q Kᵀ / sqrt(d_k) + mask) V``; returns ``(O, A)``.

    Shapes: ``Q (..., n_q, d_k)``, ``K (..., n_k, d_k)``, ``V (..., n_k, d_v)``; ``O (..., n_q, d_v)``,
    ``A (..., n_q, n_k)``. Leading batch (and head) dimensions broadcast.

    ``mask`` (broadcastable to ``(..., n_q, n_k)``) is either

    - **additive** (float): added to the scores before the softmax, e.g. ``causal_mask(n)``; or
    - **boolean**: ``True`` where the query may attend (``torch``'s ``attn_mask`` convention);
      ``False`` positions get weight exactly 0.

    A row where every key is blocked has no valid distribution and raises ``ValueError``.
    """
    Q = _array("Q", Q, 2)
    K = _array("K", K, 2)
    V = _array("V", V, 2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have one row per key (same n_k), got K {K.shape} and V {V.shape}")
    S = attention_scores(Q, K)
    if mask is not None:
        S = _apply_mask(S, mask)
    A = softmax_rows(S)
    return A @ V, A


def causal_attention(Q, K, V) -> tuple[np.ndarray, np.ndarray]:
    """Masked self-attention: each position looks only at itself and the past. Returns ``(O, A)``.

    ``A`` is lower-triangular (its strict upper triangle is exactly 0), and row 0 of ``O`` is ``V[0]``.
    Needs ``n_q == n_k`` (the same sequence for queries and keys).
    """
    Q = _array("Q", Q, 2)
    K = _array("K", K, 2)
    if Q.shape[-2] != K.shape[-2]:
        raise ValueError(
            f"causal self-attention needs as many queries as keys, got Q {Q.shape} and K {K.shape}"
        )
    return scaled_dot_product_attention(Q, K, V, mask=causal_mask(Q.shape[-2]))


def attention_from_X(X, W_Q, W_K, W_V, causal: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Project ``X`` to Q, K, V and attend (causally by default). Returns ``(O, A)``."""
    Q, K, V = qkv_project(X, W_Q, W_K, W_V)
    if causal:
        return causal_attention(Q, K, V)
    return scaled_dot_product_attention(Q, K, V)


# ----------------------------------------------------------------------------------------------
# Chapter 03: several heads, shared K/V heads (GQA / MQA), cross-attention
# ----------------------------------------------------------------------------------------------


def split_heads(x, n_heads: int) -> np.ndarray:
    """``(..., n, n_heads * d_head) -> (..., n_heads, n, d_head)``.

    The reshape splits the features; the transpose then puts the head axis before the tokens.
    (Reshaping straight to ``(n_heads, n, d_head)`` would mix tokens across heads.)
    """
    x = _array("x", x, 2)
    n_heads = _positive_int("n_heads", n_heads)
    *lead, n, d = x.shape
    if d % n_heads != 0:
        raise ValueError(f"the feature dimension {d} is not divisible by n_heads={n_heads}")
    return np.swapaxes(x.reshape(*lead, n, n_heads, d // n_heads), -3, -2)


def merge_heads(x) -> np.ndarray:
    """``(..., n_heads, n, d_head) -> (..., n, n_heads * d_head)``: concatenate the heads' features."""
    x = _array("x", x, 3)
    *lead, h, n, d = x.shape
    return np.swapaxes(x, -3, -2).reshape(*lead, n, h * d)


def grouped_query_attention(
    X, W_Q, W_K, W_V, W_O, n_heads: int, n_kv_heads: int, causal: bool = True, return_weights: bool = False
):
    """Attention with ``n_heads`` query heads sharing ``n_kv_heads`` key/value heads.

    ``n_kv_heads == n_heads`` is ordinary multi-head attention (MHA), ``n_kv_heads == 1`` is
    multi-query attention (MQA), anything in between that divides ``n_heads`` is GQA. Query head
    ``h`` uses K/V head ``h // (n_heads // n_kv_heads)`` (the Llama convention).

    Shapes: ``X (..., n, d_model)``, ``W_Q (d_model, n_heads * d_head)``,
    ``W_K (d_model, n_kv_heads * d_head)``, ``W_V (d_model, n_kv_heads * d_v_head)``,
    ``W_O (n_heads * d_v_head, d_model_out)``. Returns ``O (..., n, d_model_out)``; with
    ``return_weights=True`` returns ``(O, A)`` with ``A (..., n_heads, n, n)``.
    """
    X = _array("X", X, 2)
    n_heads = _positive_int("n_heads", n_heads)
    n_kv_heads = _positive_int("n_kv_heads", n_kv_heads)
    if n_kv_heads > n_heads or n_heads % n_kv_heads != 0:
        raise ValueError(
            f"n_kv_heads must divide n_heads (1 = MQA, n_heads = MHA), got n_heads={n_heads}, n_kv_heads={n_kv_heads}"
        )
    W_Q, W_K, W_V, W_O = (_array(name, W, 2, 2) for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        _check_projection(name, W, X.shape[-1])
    for name, W, heads in (("W_Q", W_Q, n_heads), ("W_K", W_K, n_kv_heads), ("W_V", W_V, n_kv_heads)):
        if W.shape[1] % heads != 0:
            raise ValueError(f"{name} has {W.shape[1]} columns, not divisible into {heads} heads")
    if W_Q.shape[1] // n_heads != W_K.shape[1] // n_kv_heads:
        raise ValueError(
            f"query and key heads must have the same size d_head: W_Q gives {W_Q.shape[1] // n_heads}, "
            f"W_K gives {W_K.shape[1] // n_kv_heads}"
        )
    d_v_head = W_V.shape[1] // n_kv_heads
    if W_O.shape[0] != n_heads * d_v_head:
        raise ValueError(
            f"W_O must have n_heads * d_v_head = {n_heads * d_v_head} rows (the concatenated heads), got {W_O.shape}"
        )

    q = split_heads(X @ W_Q, n_heads)  # (..., H, n, d_head)
    k = split_heads(X @ W_K, n_kv_heads)  # (..., H_kv, n, d_head)
    v = split_heads(X @ W_V, n_kv_heads)
    group = n_heads // n_kv_heads
    k = np.repeat(k, group, axis=-3)  # K/V head g serves query heads g*group .. (g+1)*group - 1
    v = np.repeat(v, group, axis=-3)
    if causal:
        out, A = causal_attention(q, k, v)
    else:
        out, A = scaled_dot_product_attention(q, k, v)
    O = merge_heads(out) @ W_O
    return (O, A) if return_weights else O


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads: int, causal: bool = True, return_weights: bool = False):
    """``MultiHead(X) = Concat(head_1, ..., head_H) W_O`` with ``head_h = Attention(X W_Q^(h), X W_K^(h), X W_V^(h))``.

    Head ``h`` owns columns ``h * d_head : (h + 1) * d_head`` of ``W_Q``, ``W_K`` and ``W_V``
    (shapes ``(d_model, n_heads * d_head)``); ``W_O`` is ``(n_heads * d_v_head, d_model_out)``.
    Returns ``O (..., n, d_model_out)``, or ``(O, A)`` with ``A (..., n_heads, n, n)`` when
    ``return_weights=True``.
    """
    return grouped_query_attention(
        X, W_Q, W_K, W_V, W_O, n_heads, n_heads, causal=causal, return_weights=return_weights
    )


def cross_attention(X_q, Y_kv, W_Q, W_K, W_V) -> tuple[np.ndarray, np.ndarray]:
    """Queries from one sequence, keys and values from another; no causal mask. Returns ``(O, A)``.

    ``X_q (..., n_x, d_x)`` asks, ``Y_kv (..., n_y, d_y)`` answers: ``Q = X_q W_Q``, ``K = Y_kv W_K``,
    ``V = Y_kv W_V``. ``A`` is rectangular, ``(..., n_x, n_y)``, and every row sums to 1
    (a translation decoder looking at the source sentence; text looking at image patches).
    """
    X_q = _array("X_q", X_q, 2)
    Y_kv = _array("Y_kv", Y_kv, 2)
    W_Q = _array("W_Q", W_Q, 2, 2)
    W_K = _array("W_K", W_K, 2, 2)
    W_V = _array("W_V", W_V, 2, 2)
    _check_projection("W_Q", W_Q, X_q.shape[-1])
    _check_projection("W_K", W_K, Y_kv.shape[-1])
    _check_projection("W_V", W_V, Y_kv.shape[-1])
    return scaled_dot_product_attention(X_q @ W_Q, Y_kv @ W_K, Y_kv @ W_V)


# ----------------------------------------------------------------------------------------------
# Chapter 03: the KV cache
# ----------------------------------------------------------------------------------------------


class KVCache:
    """Keys and values of the tokens decoded so far, for one attention head.

    With a causal mask the keys and values of past tokens never change when a new token arrives,
    so they are computed once and kept: each step appends one ``k`` and one ``v`` row.
    ``keys`` is ``(t, d_k)`` and ``values`` ``(t, d_v)`` after ``t`` steps (``(..., t, d)`` if the
    appended rows carry batch dimensions).
    """

    def __init__(self) -> None:
        self._keys: np.ndarray | None = None
        self._values: np.ndarray | None = None

    def __len__(self) -> int:
        return 0 if self._keys is None else int(self._keys.shape[-2])

    @property
    def keys(self) -> np.ndarray:
        if self._keys is None:
            raise ValueError("the cache is empty: no keys yet")
        return self._keys

    @property
    def values(self) -> np.ndarray:
        if self._values is None:
            raise ValueError("the cache is empty: no values yet")
        return self._values

    @property
    def nbytes(self) -> int:
        """Memory held by the cached keys and values, in bytes."""
        return 0 if self._keys is None else int(self._keys.nbytes + self._values.nbytes)

    def append(self, k, v) -> None:
        """Add the key ``k (..., d_k)`` and value ``v (..., d_v)`` of one new token."""
        k = _array("k", k, 1)[..., None, :]
        v = _array("v", v, 1)[..., None, :]
        if k.shape[:-1] != v.shape[:-1]:
            raise ValueError(f"k and v must have the same batch dimensions, got {k.shape[:-2]} and {v.shape[:-2]}")
        if self._keys is None:
            self._keys, self._values = k, v
            return
        if k.shape[:-2] != self._keys.shape[:-2] or k.shape[-1] != self._keys.shape[-1]:
            raise ValueError(f"k of shape {k.shape[:-2] + k.shape[-1:]} does not match the cached keys {self._keys.shape}")
        if v.shape[-1] != self._values.shape[-1]:
            raise ValueError(f"v has size {v.shape[-1]}, the cached values have {self._values.shape[-1]}")
        self._keys = np.concatenate([self._keys, k], axis=-2)
        self._values = np.concatenate([self._values, v], axis=-2)

    def reset(self) -> None:
        self._keys = self._values = None

    def __repr__(self) -> str:
        return f"KVCache(len={len(self)}, nbytes={self.nbytes})"


def decode_step(x_t, cache: KVCache, W_Q, W_K, W_V) -> np.ndarray:
    """One step of incremental decoding for the newest token ``x_t (..., d_model)``.

    Computes only the new token's ``q, k, v``, appends ``k, v`` to ``cache`` and attends from ``q``
    to every cached key (the token itself included). After ``t`` steps the outputs equal the rows
    ``0 .. t-1`` of ``causal_attention`` on the whole sequence. Returns the output ``(..., d_v)``.
    """
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache, got {type(cache).__name__}")
    x_t = _array("x_t", x_t, 1)
    W_Q = _array("W_Q", W_Q, 2, 2)
    W_K = _array("W_K", W_K, 2, 2)
    W_V = _array("W_V", W_V, 2, 2)
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        _check_projection(name, W, x_t.shape[-1])
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    K, V = cache.keys, cache.values  # (..., t, d_k), (..., t, d_v)
    scores = (K @ q[..., None])[..., 0] / math.sqrt(q.shape[-1])  # (..., t): one score per cached token
    weights = softmax(scores, axis=-1)
    return (weights[..., None, :] @ V)[..., 0, :]
