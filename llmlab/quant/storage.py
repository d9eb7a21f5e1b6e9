"""How a quantised weight matrix sits in memory: the formats ``quantize_model`` understands.

A weight matrix ``[rows, n]`` is stored row by row as a few tensors (the *packed* form) and turned
back into float32 when it is used (``unpack_rows``). Format names:

=====================  ================================================  ======================
name                   stored per row                                    bits per weight
=====================  ================================================  ======================
``f32``, ``f16``,      the floats themselves                             32, 16, 16
``bf16``
``int8``, ``intB``     B-bit codes, one float32 scale for the tensor     B (+ 32 per tensor)
``intB_channel``       B-bit codes, one float32 scale per row            B + 32 / n
``intB_gG``            B-bit codes, one float16 scale per G weights      B + 16 / G
``q8_0``, ``q4_0``     GGUF blocks, byte-exact (``llmlab.quant.ggml``)   8.5, 4.5
=====================  ================================================  ======================

``B`` is 2..8 and codes are symmetric (``-qmax..qmax``, round half to even, as in
``llmlab.quant.basics``). Codes of fewer than 8 bits are bit-packed: 8 codes of B bits fill B bytes
(so int3 really costs 3 bits, not a byte). Rows whose length is not a multiple of what the format
needs (32 for GGUF blocks, G for groups, 8 for bit-packing) are padded with zeros, which changes
no result and costs a few bytes (``row_multiple``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import torch

from . import ggml

__all__ = ["QuantFormat", "EXAMPLE_FORMATS", "parse_format", "pad_columns", "pack_rows", "unpack_rows"]

_FLOATS = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
_INT = re.compile(r"^int([2-8])(?:_(channel)|_g(\d+))?$")

EXAMPLE_FORMATS = (
    "f32", "f16", "bf16", "int8", "int8_channel", "q8_0", "q4_0",
    "int4_g32", "int4_g64", "int4_g128", "int3_g32", "int2_g32",
)  # fmt: skip


@dataclass(frozen=True)
class QuantFormat:
    """A parsed format name (see the module docstring)."""

    name: str
    kind: str  # "float" | "int" | "ggml"
    bits: int  # bits of one code (or of one float)
    granularity: str  # "none" | "tensor" | "channel" | "group" | "block"
    group_size: int | None = None  # weights per scale for "group" and "block"

    @property
    def row_multiple(self) -> int:
        """Rows are padded to a multiple of this many weights."""
        if self.kind == "ggml":
            return ggml.QK
        if self.kind == "int" and self.bits < 8:
            return math.lcm(8, self.group_size or 1)
        return self.group_size or 1

    def nominal_bits(self, n: int) -> float:
        """Bits per weight of a row of ``n`` weights (after padding), scales included, tensor scale excluded."""
        if self.kind == "float":
            return float(self.bits)
        if self.kind == "ggml":
            return ggml.get_block_format(self.name).bits_per_weight
        if self.granularity == "group":
            return self.bits + 16 / self.group_size
        if self.granularity == "channel":
            return self.bits + 32 / n
        return float(self.bits)


def parse_format(name) -> QuantFormat:
    """``QuantFormat`` for a name such as ``"f16"``, ``"int8_channel"``, ``"int4_g32"`` or ``"q4_0"``."""
    if isinstance(name, QuantFormat):
        return name
    if not isinstance(name, str):
        raise TypeError(f"format must be a str, got {type(name).__name__}")
    key = name.strip().lower()
    if key in _FLOATS:
        return QuantFormat(key, "float", torch.finfo(_FLOATS[key]).bits, "none")
    if key in ("q8_0", "q4_0"):
        return QuantFormat(key, "ggml", 8 if key == "q8_0" else 4, "block", ggml.QK)
    match = _INT.match(key)
    if match:
        bits, channel, group = int(match.group(1)), match.group(2), match.group(3)
        if group is not None:
            g = int(group)
            if g < 1:
                raise ValueError(f"group size must be >= 1 in {name!r}")
            return QuantFormat(key, "int", bits, "group", g)
        return QuantFormat(key, "int", bits, "channel" if channel else "tensor")
    raise ValueError(
        f"unknown quantisation format {name!r}; use f32, f16, bf16, q8_0, q4_0, intB, intB_channel or intB_gG "
        f"(B = 2..8), for example {', '.join(EXAMPLE_FORMATS)}"
    )


def pad_columns(w: torch.Tensor, multiple: int) -> torch.Tensor:
    """``w`` ``[rows, n]`` with zero columns appended up to a multiple of ``multiple``."""
    extra = (-w.shape[1]) % multiple
    return torch.nn.functional.pad(w, (0, extra)) if extra else w


# ----------------------------------------------------------------------------------------------
# Bit-packing: 8 codes of B bits <-> B bytes
# ----------------------------------------------------------------------------------------------


def _pack_bits(codes: torch.Tensor, bits: int) -> torch.Tensor:
    rows, n = codes.shape
    c = codes.reshape(rows, n // 8, 8).long()
    word = sum(c[..., j] << (bits * j) for j in range(8))  # 8 * bits <= 64 bits
    return torch.stack([(word >> (8 * k)) & 0xFF for k in range(bits)], dim=-1).to(torch.uint8).reshape(rows, -1)


def _unpack_bits(packed: torch.Tensor, bits: int) -> torch.Tensor:
    rows = packed.shape[0]
    p = packed.reshape(rows, -1, bits).long()
    word = sum(p[..., k] << (8 * k) for k in range(bits))
    shifts = torch.arange(0, 8 * bits, bits, device=packed.device)
    return ((word[..., None] >> shifts) & ((1 << bits) - 1)).reshape(rows, -1)


# ----------------------------------------------------------------------------------------------
# Pack and unpack
# ----------------------------------------------------------------------------------------------


def _int_scales(w: torch.Tensor, fmt: QuantFormat, qmax: int) -> torch.Tensor:
    """The scale of every weight's tensor / row / group, already rounded to its storage dtype."""
    rows, n = w.shape
    if fmt.granularity == "tensor":
        return (w.abs().max() / qmax).reshape(1, 1).float()
    if fmt.granularity == "channel":
        return (w.abs().amax(dim=1, keepdim=True) / qmax).float()
    grouped = w.reshape(rows, n // fmt.group_size, fmt.group_size)
    return (grouped.abs().amax(dim=2) / qmax).to(torch.float16)  # [rows, n_groups]


def _expand(scales: torch.Tensor, fmt: QuantFormat, n: int) -> torch.Tensor:
    """Per-weight scales ``[rows, n]`` (or broadcastable) as float32."""
    scales = scales.float()
    if fmt.granularity == "group":
        return scales.repeat_interleave(fmt.group_size, dim=1)
    return scales


def pack_rows(w: torch.Tensor, fmt: QuantFormat | str) -> dict[str, torch.Tensor]:
    """Packed tensors of ``w`` ``[rows, n]`` (``n`` a multiple of ``fmt.row_multiple``).

    Keys: ``"codes"`` always; ``"scales"`` for the int formats (GGUF blocks carry their scales inside).
    """
    fmt = parse_format(fmt)
    if w.dim() != 2 or w.shape[1] % fmt.row_multiple:
        raise ValueError(f"{fmt.name} packs a [rows, n] matrix with n a multiple of {fmt.row_multiple}, got {tuple(w.shape)}")
    w = w.detach().float()
    if not torch.isfinite(w).all():
        raise ValueError("the weights contain NaN or Inf: they cannot be quantised")
    if fmt.kind == "float":
        return {"codes": w.to(_FLOATS[fmt.name]).clone()}
    if fmt.kind == "ggml":
        data = ggml.quantize_blocks(w.cpu().numpy(), fmt.name)
        return {"codes": torch.from_numpy(np.ascontiguousarray(data)).to(w.device)}
    qmax = 2 ** (fmt.bits - 1) - 1
    scales = _int_scales(w, fmt, qmax)
    per_weight = _expand(scales, fmt, w.shape[1])
    safe = torch.where(per_weight == 0, torch.ones_like(per_weight), per_weight)
    q = torch.round(w / safe).clamp(-qmax, qmax)  # torch.round is half to even, like np.rint
    if fmt.bits == 8:
        codes = q.to(torch.int8)
    else:
        codes = _pack_bits((q + qmax).to(torch.uint8), fmt.bits)  # unsigned codes 0..2*qmax
    return {"codes": codes, "scales": scales}


def unpack_rows(packed: dict[str, torch.Tensor], fmt: QuantFormat | str) -> torch.Tensor:
    """float32 ``[rows, n]`` from the tensors of :func:`pack_rows` (works on any subset of rows)."""
    fmt = parse_format(fmt)
    codes = packed["codes"]
    rows = codes.shape[0]
    if fmt.kind == "float":
        return codes.float()
    if fmt.name == "q8_0":
        blocks = codes.reshape(rows, -1, 34)
        d = blocks[..., :2].contiguous().view(torch.float16).float()  # [rows, n_blocks, 1]
        q = blocks[..., 2:].contiguous().view(torch.int8).float()
        return (q * d).reshape(rows, -1)
    if fmt.name == "q4_0":
        blocks = codes.reshape(rows, -1, 18)
        d = blocks[..., :2].contiguous().view(torch.float16).float()
        nibbles = blocks[..., 2:]
        q = torch.cat((nibbles & 0x0F, nibbles >> 4), dim=-1).float() - 8  # element j and j + 16 share a byte
        return (q * d).reshape(rows, -1)
    qmax = 2 ** (fmt.bits - 1) - 1
    q = codes.float() if fmt.bits == 8 else (_unpack_bits(codes, fmt.bits) - qmax).float()
    return q * _expand(packed["scales"], fmt, q.shape[1])
