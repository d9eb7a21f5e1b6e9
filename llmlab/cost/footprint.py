"""The memory of a model being served, each formula written once: the KV cache, the weights, and what they need.

Every function of the course that answers one of these questions (``basics``, ``serving``, ``spec``,
``llmlab.dissect``) checks its own arguments and then calls one of these, so the formula itself lives here only.
"""

from __future__ import annotations


def kv_cache_values(n_layers: int, batch: int, tokens: int, n_kv_heads: int, head_dim: int) -> int:
    """Numbers held by a KV cache, ``2 · L · B · S · H_kv · d_h``: a key and a value per K/V head,
    per token, per layer and per sequence (times the bytes per value, the cache's size in bytes)."""
    return 2 * n_layers * batch * tokens * n_kv_heads * head_dim


def weight_bytes(n_params: float, bits_per_weight: float) -> float:
    """Bytes of ``n_params`` weights stored with ``bits_per_weight`` bits each, ``N · bits / 8``."""
    return n_params * bits_per_weight / 8


def memory_needed(weights: float, kv: float, *, overhead: float = 0.0) -> float:
    """What weights and KV cache need together, ``(weights + KV) · (1 + overhead)`` (any one unit);
    it fits when this is at most the memory there is."""
    return (weights + kv) * (1.0 + overhead)
