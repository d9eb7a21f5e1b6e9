"""From token ids to the input tensor of a transformer (chapter 02), in NumPy.

Two steps, each one line of algebra:

1. **Look up** the row of the embedding matrix ``E`` (shape ``(V, d_model)``, one learned row per
   token of the vocabulary) for every id: ``E[ids]``. A sequence of ``n`` ids becomes an
   ``(n, d_model)`` matrix; a batch of ``B`` sequences, ``(B, n, d_model)``.
2. **Add the positions**: ``X = E[ids] + P[:n]``, where row ``t`` of ``P`` (shape
   ``(max_len, d_model)``) describes position ``t`` (see :mod:`llmlab.positional`). Without this
   step the same id gives the same row wherever it appears, and attention cannot tell word order.

Row-vector convention, as in the book: one row per token. Ids are checked strictly: NumPy would
silently read ``E[-1]`` (the last row) for a negative id, which is never what a tokenizer meant.
"""

from __future__ import annotations

import numpy as np

__all__ = ["embed", "build_input"]


def _ids_array(ids) -> np.ndarray:
    """``ids`` as an integer array of shape ``(n,)`` or ``(B, n)``, or a clear error."""
    if hasattr(ids, "detach") and hasattr(ids, "cpu"):  # a torch tensor
        ids = ids.detach().cpu().numpy()
    arr = np.asarray(ids)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise TypeError(f"ids must be integer token ids, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2):
        raise ValueError(f"ids must have shape (n,) or (B, n), got shape {arr.shape}")
    return arr.astype(np.int64, copy=False)


def _matrix(name: str, x) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
    return arr


def embed(ids, E) -> np.ndarray:
    """Rows of the embedding matrix for each id: ``E[ids]``.

    ``ids``: integers of shape ``(n,)`` or ``(B, n)``; ``E``: ``(V, d_model)``.
    Returns a float64 array of shape ``(n, d_model)`` or ``(B, n, d_model)``: one row per token,
    so the same id always gives the same row. An id outside ``[0, V)`` raises ``IndexError``
    (negative ids included: no wrap-around to the end of the table).
    """
    ids = _ids_array(ids)
    E = _matrix("E", E)
    V = E.shape[0]
    if ids.size and (ids.min() < 0 or ids.max() >= V):
        bad = ids[(ids < 0) | (ids >= V)].ravel()[0]
        raise IndexError(f"token id {int(bad)} is outside the vocabulary [0, {V}) of E")
    return E[ids]


def build_input(ids, E, P) -> np.ndarray:
    """The transformer's input ``X = E[ids] + P[:n]``: token meaning plus position.

    ``P`` is a position table of shape ``(max_len, d_model)`` (sinusoidal, or learned): row ``t``
    is added to the token at position ``t`` (positions count from 0), whatever its id. With a batch
    ``(B, n)`` of ids the same ``P[:n]`` is added to every sequence. A sequence longer than the
    table (``n > max_len``) raises ``ValueError``; so does a ``P`` whose width is not ``d_model``.
    """
    x = embed(ids, E)
    P = _matrix("P", P)
    n, d_model = x.shape[-2], x.shape[-1]
    if P.shape[1] != d_model:
        raise ValueError(f"P has {P.shape[1]} columns but the embeddings have d_model={d_model}")
    if n > P.shape[0]:
        raise ValueError(f"sequence of {n} tokens is longer than the position table (max_len={P.shape[0]})")
    return x + P[:n]  # row t of P goes with position t, not with the token's id
