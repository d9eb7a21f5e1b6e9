"""The KV caches of ``generate``: the keys and values of past tokens, kept so each step computes one token.

``KVCache`` grows with every step (simple); ``StaticKVCache`` allocates its buffers once. Both hold one
``[batch, n_kv_heads, t, head_dim]`` pair per layer; ``llmlab.serve`` keeps the K/V of many sequences in blocks
and ``llmlab.quant.kv`` stores them in int8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from llmlab.arguments import check_int

if TYPE_CHECKING:
    from llmlab.generation import DecodeWeights
    from llmlab.transformer import Transformer


class KVCache:
    """Keys and values of the tokens seen so far, one ``[batch, n_kv_heads, t, head_dim]`` pair per layer.

    With a causal mask, the K and V of a past token never change when new tokens arrive, so they
    are computed once and appended here; each decoding step then only computes the new token.
    This one grows with ``torch.cat`` (simple; every step copies the whole cache): ``StaticKVCache``
    allocates its buffers once, and ``llmlab.serve`` keeps the K/V of many sequences in blocks.

    What the model needs from a cache: ``n_layers``, ``seq_len`` (the position of the next token)
    and ``update(layer, k, v) -> (all keys, all values)``. A cache that serves a batch of
    independent sequences (``llmlab.serve.paged_attention.PagedBatch``) instead provides
    ``positions`` (one position per new token) and ``attend(layer, q, k, v)``, which stores k, v and
    computes the attention itself.
    """

    def __init__(self, n_layers: int):
        check_int("n_layers", n_layers)
        self.keys: list[torch.Tensor | None] = [None] * n_layers
        self.values: list[torch.Tensor | None] = [None] * n_layers

    @property
    def n_layers(self) -> int:
        return len(self.keys)

    @property
    def seq_len(self) -> int:
        """Number of tokens cached (the position of the next token)."""
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def __len__(self) -> int:
        return self.seq_len

    @property
    def nbytes(self) -> int:
        """Memory held, in bytes: ``2 * n_layers * batch * n_kv_heads * head_dim * bytes_per_value * tokens``."""
        return sum(t.numel() * t.element_size() for t in self.keys + self.values if t is not None)

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new ``k``, ``v`` of ``layer`` and return all keys and values of that layer."""
        if self.keys[layer] is not None:
            k = torch.cat((self.keys[layer], k), dim=2)
            v = torch.cat((self.values[layer], v), dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v

    def crop(self, seq_len: int) -> None:
        """Forget every token after the first ``seq_len`` (e.g. rejected draft tokens)."""
        check_int("seq_len", seq_len, minimum=0)
        for i in range(self.n_layers):
            if self.keys[i] is not None:
                self.keys[i] = self.keys[i][:, :, :seq_len]
                self.values[i] = self.values[i][:, :, :seq_len]

    def reset(self) -> None:
        self.keys = [None] * self.n_layers
        self.values = [None] * self.n_layers

    def __repr__(self) -> str:
        return f"KVCache(n_layers={self.n_layers}, seq_len={self.seq_len}, nbytes={self.nbytes})"


class StaticKVCache:
    """A ``KVCache`` whose buffers are allocated once, for ``max_len`` tokens (what ``generate`` uses).

    Appending writes the new keys and values into the next free positions, where ``KVCache``
    concatenates (a new tensor, and a copy of everything cached, at every step). Attention then reads
    ``keys[layer][:, :, :seq_len]``, a view. The price: ``max_len`` positions are reserved from the start,
    used or not (``nbytes`` counts them; ``used_nbytes`` counts the filled ones). ``llmlab.serve``
    avoids that waste with blocks allocated on demand.
    """

    def __init__(self, n_layers: int, batch: int, n_kv_heads: int, head_dim: int, max_len: int, *,
                 dtype: torch.dtype = torch.float32, device=None):
        for name, value in (("n_layers", n_layers), ("batch", batch), ("n_kv_heads", n_kv_heads),
                            ("head_dim", head_dim), ("max_len", max_len)):
            check_int(name, value)
        shape = (batch, n_kv_heads, max_len, head_dim)
        self.keys = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(n_layers)]
        self.values = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(n_layers)]
        self.lengths = [0] * n_layers  # tokens filled per layer (layer 0 is written first)
        self.max_len = max_len
        self.decode_weights: DecodeWeights | None = None  # generate() puts the model's, rearranged, here

    @classmethod
    def for_model(cls, model: "Transformer", batch: int = 1, max_len: int | None = None) -> "StaticKVCache":
        """Buffers shaped for ``model`` (its dtype and device), ``max_len`` defaulting to its context."""
        config = model.config
        weight = model.tok_emb.weight
        return cls(config.n_layers, batch, config.n_kv_heads, config.head_dim, max_len or config.max_seq_len,
                   dtype=weight.dtype, device=weight.device)

    @property
    def n_layers(self) -> int:
        return len(self.keys)

    @property
    def seq_len(self) -> int:
        """Number of tokens cached (the position of the next token)."""
        return self.lengths[0]

    def __len__(self) -> int:
        return self.seq_len

    @property
    def nbytes(self) -> int:
        """Memory reserved, in bytes (all ``max_len`` positions)."""
        return sum(t.numel() * t.element_size() for t in self.keys + self.values)

    @property
    def used_nbytes(self) -> int:
        """Memory holding cached tokens, in bytes (what ``KVCache.nbytes`` would be)."""
        return self.nbytes * self.seq_len // self.max_len

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the new ``k``, ``v`` of ``layer`` after the cached ones; return views of all of them."""
        start = self.lengths[layer]
        end = start + k.shape[2]
        if end > self.max_len:
            raise ValueError(f"StaticKVCache holds {self.max_len} tokens; {start} cached + {k.shape[2]} new do not fit")
        self.keys[layer][:, :, start:end] = k
        self.values[layer][:, :, start:end] = v
        self.lengths[layer] = end
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]

    def crop(self, seq_len: int) -> None:
        """Forget every token after the first ``seq_len`` (the buffers stay allocated)."""
        check_int("seq_len", seq_len, minimum=0)
        self.lengths = [min(n, seq_len) for n in self.lengths]

    def reset(self) -> None:
        self.lengths = [0] * self.n_layers

    def __repr__(self) -> str:
        return f"StaticKVCache(n_layers={self.n_layers}, seq_len={self.seq_len}, max_len={self.max_len}, nbytes={self.nbytes})"
