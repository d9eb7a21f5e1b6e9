"""An int8 KV cache: keys quantised per channel, values per token (the KIVI recipe at 8 bits).

Weights are quantised once; the KV cache grows by one token per step, so its quantisation has to
work as the tokens arrive. Keys and values behave differently:

- **Keys** have a few channels (dimensions of ``head_dim``) with much larger values than the rest,
  the same channels for every token. A scale per *channel* isolates them. But a channel's scale
  needs several tokens, so keys are kept in float32 until a group of ``group_size`` tokens is
  complete, and then that group is quantised with one scale per (head, channel).
- **Values** have no such channels; each token's vector gets its own scale per head, so a value
  is quantised as soon as it arrives.

``QuantizedKVCache`` has the interface of ``llmlab.model.KVCache`` (``update``, ``seq_len``,
``n_layers``, ``crop``, ``reset``, ``nbytes``), so the model uses it unchanged::

    cache = QuantizedKVCache(model.config.n_layers)
    logits = model(ids, cache=cache)             # prefill
    logits = model(next_ids, cache=cache)        # decode, one token at a time
    generate(use_quantized_kv_cache(model), ids, 20)   # or let generate build it

Scales are float16 (2 bytes); codes int8. Per token and head the cache then stores
``2 * head_dim`` bytes of codes plus a value scale, against ``8 * head_dim`` in float32.
"""

from __future__ import annotations

import copy

import torch

__all__ = ["QuantizedKVCache", "quantize_per_channel", "quantize_per_token", "kv_quantization_error", "use_quantized_kv_cache"]

_QMAX = 127


def quantize_per_token(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 codes and float16 scales ``[..., t, 1]``: one scale per vector of the last axis."""
    scale = (x.abs().amax(dim=-1, keepdim=True) / _QMAX).to(torch.float16)
    safe = torch.where(scale == 0, torch.ones_like(scale), scale).float()
    return torch.round(x / safe).clamp(-_QMAX, _QMAX).to(torch.int8), scale


def quantize_per_channel(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 codes and float16 scales ``[..., 1, d]``: one scale per channel, shared by the tokens (axis -2)."""
    scale = (x.abs().amax(dim=-2, keepdim=True) / _QMAX).to(torch.float16)
    safe = torch.where(scale == 0, torch.ones_like(scale), scale).float()
    return torch.round(x / safe).clamp(-_QMAX, _QMAX).to(torch.int8), scale


def _dequantize(codes: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return (codes.float() * scale.float()).to(dtype)


class _Layer:
    """One layer's cache: groups of int8 keys, a float tail of keys, int8 values."""

    def __init__(self):
        self.key_groups: list[tuple[torch.Tensor, torch.Tensor]] = []  # (codes [b,h,g,d], scale [b,h,1,d])
        self.key_tail: torch.Tensor | None = None  # float keys not yet quantised [b,h,t<g,d]
        self.values: tuple[torch.Tensor, torch.Tensor] | None = None  # (codes [b,h,t,d], scale [b,h,t,1])
        self.dtype = torch.float32

    @property
    def seq_len(self) -> int:
        return 0 if self.values is None else self.values[0].shape[2]

    def keys(self) -> torch.Tensor:
        parts = [_dequantize(c, s, self.dtype) for c, s in self.key_groups]
        if self.key_tail is not None:
            parts.append(self.key_tail)
        return torch.cat(parts, dim=2)

    def values_float(self) -> torch.Tensor:
        return _dequantize(*self.values, self.dtype)

    def nbytes(self) -> int:
        tensors = [t for pair in self.key_groups for t in pair] + ([self.key_tail] if self.key_tail is not None else [])
        tensors += list(self.values) if self.values is not None else []
        return sum(t.numel() * t.element_size() for t in tensors)


class QuantizedKVCache:
    """Drop-in replacement for ``llmlab.model.KVCache`` that stores keys and values in int8.

    ``group_size`` tokens of keys share their per-channel scales; until a group is full those keys
    stay float32 (at most ``group_size - 1`` tokens per layer).
    """

    def __init__(self, n_layers: int, *, group_size: int = 32):
        for name, value in (("n_layers", n_layers), ("group_size", group_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        self.group_size = group_size
        self.layers = [_Layer() for _ in range(n_layers)]

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def seq_len(self) -> int:
        return self.layers[0].seq_len

    def __len__(self) -> int:
        return self.seq_len

    @property
    def nbytes(self) -> int:
        """Bytes held: int8 codes, float16 scales and the float32 tail of keys."""
        return sum(layer.nbytes() for layer in self.layers)

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the new ``k``, ``v`` (``[batch, kv_heads, t, head_dim]``); return all keys and values, dequantised."""
        entry = self.layers[layer]
        entry.dtype = k.dtype
        codes, scale = quantize_per_token(v.float())
        if entry.values is None:
            entry.values = (codes, scale)
        else:
            entry.values = (torch.cat((entry.values[0], codes), dim=2), torch.cat((entry.values[1], scale), dim=2))
        tail = k.float() if entry.key_tail is None else torch.cat((entry.key_tail, k.float()), dim=2)
        g = self.group_size
        while tail.shape[2] >= g:
            entry.key_groups.append(quantize_per_channel(tail[:, :, :g]))
            tail = tail[:, :, g:]
        entry.key_tail = tail if tail.shape[2] else None
        return entry.keys().to(k.dtype), entry.values_float().to(v.dtype)

    def crop(self, seq_len: int) -> None:
        """Forget every token after the first ``seq_len`` (the partial group goes back to float)."""
        if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len < 0:
            raise ValueError(f"seq_len must be an int >= 0, got {seq_len!r}")
        for entry in self.layers:
            if entry.values is None or seq_len >= entry.seq_len:
                continue
            keys = entry.keys()[:, :, :seq_len]
            full = seq_len // self.group_size
            entry.key_groups = entry.key_groups[:full]
            tail = keys[:, :, full * self.group_size :]
            entry.key_tail = tail.float() if tail.shape[2] else None
            entry.values = (entry.values[0][:, :, :seq_len], entry.values[1][:, :, :seq_len])
            if seq_len == 0:
                entry.__init__()

    def reset(self) -> None:
        self.layers = [_Layer() for _ in range(self.n_layers)]

    def __repr__(self) -> str:
        return f"QuantizedKVCache(n_layers={self.n_layers}, seq_len={self.seq_len}, nbytes={self.nbytes})"


def kv_quantization_error(k: torch.Tensor, v: torch.Tensor, *, group_size: int = 32) -> dict[str, float]:
    """Relative error (Frobenius) of keys per channel, keys per token and values per token, on ``[.., t, d]``.

    The comparison the recipe rests on: with outlier channels, per-channel keys beat per-token keys.
    """
    cache = QuantizedKVCache(1, group_size=group_size)
    k_hat, v_hat = cache.update(0, k, v)
    k_tok = _dequantize(*quantize_per_token(k.float()), torch.float32)

    def rel(a, b):
        return float((a.float() - b.float()).norm() / a.float().norm().clamp_min(1e-30))

    return {"keys_per_channel": rel(k, k_hat), "keys_per_token": rel(k, k_tok), "values_per_token": rel(v, v_hat)}


def use_quantized_kv_cache(model, *, group_size: int = 32):
    """A shallow copy of ``model`` whose ``new_cache()`` returns a :class:`QuantizedKVCache`.

    The weights are shared with ``model`` (nothing is copied but the Python object), so
    ``llmlab.model.generate`` runs with an int8 cache without any change to it.
    """
    if not hasattr(model, "config") or not hasattr(model, "new_cache"):
        raise TypeError("model must be an llmlab Transformer (it needs .config and .new_cache)")
    twin = copy.copy(model)
    n_layers = model.config.n_layers
    twin.new_cache = lambda: QuantizedKVCache(n_layers, group_size=group_size)
    return twin
