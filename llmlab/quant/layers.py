"""Quantised layers for ``llmlab.model`` and ``quantize_model``: the weights stay packed in memory.

``QuantizedLinear`` replaces an ``nn.Linear``: it keeps the packed tensors of ``llmlab.quant.storage``
as buffers and dequantises them to float32 on every forward (weight-only quantisation: the
activations stay float). So memory shrinks by the format's ratio, while each matrix product pays
for unpacking first; whether that is faster or slower depends on whether moving bytes or doing
arithmetic limits the step (``benchmarks/bench_quant.py`` measures it).

The API other code may rely on (QLoRA builds on it)::

    layer = QuantizedLinear.from_linear(linear, "q4_0")
    layer(x)                 # F.linear(x, layer.dequantize(), layer.bias)
    layer.dequantize()       # float32 [out_features, in_features], a fresh tensor
    layer.weight             # the same, as a read-only property (no gradient reaches the codes)
    layer.weight_bytes       # bytes of the packed weight (codes + scales, padding included)
    layer.bits_per_weight    # 8 * weight_bytes / (out_features * in_features)
    layer.format             # the QuantFormat

The packed tensors are buffers, not parameters: an optimiser never sees them, so a quantised base
model is frozen by construction and gradients still flow through ``x``.

``quantize_model(model, "q4_0")`` returns a *new* model (the original is untouched, so "before" and
"after" can be compared) with every ``nn.Linear`` and the token embedding replaced. Norm weights
stay float32, as in GGUF files.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from .storage import QuantFormat, pack_rows, pad_columns, parse_format, unpack_rows

__all__ = ["QuantizedLinear", "QuantizedEmbedding", "quantize_model", "module_nbytes", "quantized_layers"]


class _PackedWeight(nn.Module):
    """The packed tensors of a ``[rows, cols]`` matrix as buffers, and how to unpack them."""

    def __init__(self, weight: torch.Tensor, fmt: QuantFormat | str):
        super().__init__()
        self.format = parse_format(fmt)
        rows, cols = weight.shape
        self.rows, self.cols = int(rows), int(cols)
        for key, tensor in pack_rows(pad_columns(weight.detach(), self.format.row_multiple), self.format).items():
            self.register_buffer(key, tensor)

    def _packed(self, index=None) -> dict[str, torch.Tensor]:
        packed = {name: buf for name, buf in self.named_buffers(recurse=False)}
        if index is not None:
            packed["codes"] = packed["codes"][index]
            if self._row_scales:
                packed["scales"] = packed["scales"][index]
        return packed

    @property
    def _row_scales(self) -> bool:
        """Whether ``scales`` has one row per weight row (not a single per-tensor scale)."""
        return self.format.kind == "int" and self.format.granularity != "tensor"

    def dequantize(self, index=None) -> torch.Tensor:
        """float32 ``[rows, cols]`` (or only the rows ``index``), padding dropped."""
        packed = self._packed(index)
        codes = packed["codes"]
        flat = codes.reshape(-1, codes.shape[-1])
        scales = packed.get("scales")
        if scales is not None and self._row_scales:
            scales = scales.reshape(-1, scales.shape[-1])
        rows = unpack_rows({"codes": flat, **({"scales": scales} if scales is not None else {})}, self.format)
        return rows[:, : self.cols].reshape(*codes.shape[:-1], self.cols)

    @property
    def nbytes(self) -> int:
        return sum(buf.numel() * buf.element_size() for buf in self.buffers(recurse=False))


class _HasPackedWeight:
    """What a layer with a ``packed`` weight offers: its format, the float weight and the bytes it takes."""

    packed: _PackedWeight

    @property
    def format(self) -> QuantFormat:
        return self.packed.format

    def dequantize(self) -> torch.Tensor:
        """The float32 weight the layer computes with (a new tensor, padding dropped)."""
        return self.packed.dequantize()

    @property
    def weight(self) -> torch.Tensor:
        return self.dequantize()

    @property
    def weight_bytes(self) -> int:
        """Bytes of the packed weight (codes and scales; a bias is not counted)."""
        return self.packed.nbytes


class QuantizedLinear(_HasPackedWeight, nn.Module):
    """``y = x W^T + b`` with ``W`` stored packed and dequantised on the fly (see the module docstring)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, fmt: QuantFormat | str):
        super().__init__()
        if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
            raise ValueError("weight must be a 2-D tensor [out_features, in_features]")
        self.out_features, self.in_features = int(weight.shape[0]), int(weight.shape[1])
        self.packed = _PackedWeight(weight, fmt)
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())

    @classmethod
    def from_linear(cls, linear: nn.Linear, fmt: QuantFormat | str) -> QuantizedLinear:
        if not isinstance(linear, nn.Linear):
            raise TypeError(f"expected an nn.Linear, got {type(linear).__name__}")
        return cls(linear.weight, linear.bias, fmt)

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.weight_bytes / (self.out_features * self.in_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.dequantize().to(x.dtype)
        return F.linear(x, w, None if self.bias is None else self.bias.to(x.dtype))

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, format={self.format.name}, "
            f"bits_per_weight={self.bits_per_weight:.3f}, bias={self.bias is not None}"
        )


class QuantizedEmbedding(_HasPackedWeight, nn.Module):
    """An ``nn.Embedding`` whose table is packed row by row; a lookup dequantises only the rows it needs."""

    def __init__(self, weight: torch.Tensor, fmt: QuantFormat | str):
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(weight.shape[0]), int(weight.shape[1])
        self.packed = _PackedWeight(weight, fmt)

    @classmethod
    def from_embedding(cls, embedding: nn.Embedding, fmt: QuantFormat | str) -> QuantizedEmbedding:
        if not isinstance(embedding, nn.Embedding):
            raise TypeError(f"expected an nn.Embedding, got {type(embedding).__name__}")
        return cls(embedding.weight, fmt)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.packed.dequantize(ids)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, format={self.format.name}"


def quantized_layers(model: nn.Module) -> dict[str, nn.Module]:
    """``{name: layer}`` of every ``QuantizedLinear`` / ``QuantizedEmbedding`` in ``model``."""
    return {n: m for n, m in model.named_modules() if isinstance(m, (QuantizedLinear, QuantizedEmbedding))}


def module_nbytes(module: nn.Module) -> int:
    """Bytes of every parameter and buffer of ``module``, each storage counted once (tied weights too).

    This is the memory the weights take in RAM, measured on the tensors themselves.
    """
    seen, total = set(), 0
    for tensor in list(module.parameters()) + list(module.buffers()):
        key = (tensor.untyped_storage().data_ptr(), tensor.device)
        if key in seen:
            continue
        seen.add(key)
        total += tensor.untyped_storage().nbytes()
    return total


def quantize_model(model: nn.Module, fmt: QuantFormat | str, *, embeddings: bool = True, skip: tuple[str, ...] = ()) -> nn.Module:
    """A copy of ``model`` with its linear layers (and token embedding) stored in format ``fmt``.

    - Every ``nn.Linear`` becomes a :class:`QuantizedLinear`, the LM head included, unless its name
      is in ``skip`` (for example ``skip=("lm_head",)``).
    - ``embeddings=True`` also packs every ``nn.Embedding`` (the token table is a large share of a
      small model). A tied LM head shares the packed table with the embedding, as it shared the
      float one.
    - Norm weights and everything else stay as they are. The model is returned in eval mode.

    ``model`` itself is never modified. ``fmt``: see ``llmlab.quant.storage`` (``"f16"``,
    ``"int8"``, ``"int8_channel"``, ``"q8_0"``, ``"q4_0"``, ``"int4_g32"``, ...).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    fmt = parse_format(fmt)
    if isinstance(skip, str) or not all(isinstance(s, str) for s in skip):
        raise TypeError("skip must be a tuple of module names")
    new = copy.deepcopy(model)
    replaced: dict[int, _PackedWeight] = {}  # id of a float weight -> its packed form (tied weights)

    def packed_for(weight: torch.Tensor) -> _PackedWeight | None:
        return replaced.get(id(weight))

    # Embeddings first, so that a tied LM head finds the packed table.
    for name, module in list(new.named_modules()):
        if embeddings and isinstance(module, nn.Embedding) and name not in skip:
            q = QuantizedEmbedding.from_embedding(module, fmt)
            replaced[id(module.weight)] = q.packed
            _set_submodule(new, name, q)
    for name, module in list(new.named_modules()):
        if isinstance(module, nn.Linear) and name not in skip:
            shared = packed_for(module.weight)
            if shared is not None:
                q = QuantizedLinear.__new__(QuantizedLinear)
                nn.Module.__init__(q)
                q.out_features, q.in_features = module.out_features, module.in_features
                q.packed = shared
                q.register_buffer("bias", None if module.bias is None else module.bias.detach().float().clone())
            else:
                q = QuantizedLinear.from_linear(module, fmt)
                replaced[id(module.weight)] = q.packed
            _set_submodule(new, name, q)
    return new.eval()


def _set_submodule(root: nn.Module, name: str, module: nn.Module) -> None:
    parent_name, _, child = name.rpartition(".")
    parent = root.get_submodule(parent_name) if parent_name else root
    setattr(parent, child, module)
