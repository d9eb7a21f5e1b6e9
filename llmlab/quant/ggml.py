"""GGUF's block formats Q8_0 and Q4_0, byte for byte as llama.cpp writes them.

A GGUF tensor is a sequence of rows; each row is cut into blocks of 32 consecutive weights, and
each block is stored on its own: a float16 scale ``d`` followed by the 32 codes.

Q8_0, 34 bytes per 32 weights (8.5 bits per weight)::

    bytes 0-1   d = max|x| / 127                      (float16, little endian)
    bytes 2-33  q[j] = round(x[j] / d)                 (int8; round half away from zero, as C's roundf)
    x[j] ~= d * q[j]

Q4_0, 18 bytes per 32 weights (4.5 bits per weight)::

    bytes 0-1   d = m / -8, m the weight of largest |x| *with its sign*   (float16)
    bytes 2-17  byte j (j = 0..15) holds element j in its low nibble and element j + 16 in its high one;
                each nibble is q = min(15, trunc(x / d + 8.5)), a code 0..15
    x[j] ~= d * (q[j] - 8)

Q4_0 divides by ``-8``, not ``+7``: the largest weight lands exactly on code 0 (``-8 * d = m``), the
end of the grid that has one more level, so the 16 codes are all used. Note the nibble order:
element j and element j + 16 share a byte (not j and j + 1).

The reference computation is llama.cpp's ``quantize_row_q8_0_ref`` / ``quantize_row_q4_0_ref``
(``ggml-quants.c``), in float32 arithmetic; the tests compare every byte with the ``gguf`` package
(``gguf.quants.quantize``). Non-finite input raises ``ValueError``, and so does a block whose scale
does not fit in float16 (llama.cpp would silently store ``inf``). Nothing here modifies its input.
"""

from __future__ import annotations

import numpy as np

from .blockformat import BLOCK_FORMATS, BlockFormat, as_blocks, as_bytes, get_block_format, round_half_away, scale_to_f16
from .kquants import dequantize_q6_k, quantize_q6_k

__all__ = [
    "QK",
    "BlockFormat",
    "BLOCK_FORMATS",
    "get_block_format",
    "round_half_away",
    "quantize_q8_0",
    "dequantize_q8_0",
    "quantize_q4_0",
    "dequantize_q4_0",
    "pack_q4_0_block",
    "unpack_q4_0_block",
    "quantize_blocks",
    "dequantize_blocks",
]

QK = 32  # weights per block of the "legacy" formats Q8_0, Q4_0


# ----------------------------------------------------------------------------------------------
# Shared pieces
# ----------------------------------------------------------------------------------------------


def _inverse(d: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(d == 0, np.float32(0), np.float32(1) / d).astype(np.float32)


def _codes_to_int8(values: np.ndarray) -> np.ndarray:
    # C converts the float to int8_t; only the rare NaN/inf of an overflowing inverse scale (subnormal
    # blocks) is out of range, and x86 turns it into 0, as NumPy does.
    with np.errstate(invalid="ignore"):
        return values.astype(np.int8)


# ----------------------------------------------------------------------------------------------
# Q8_0
# ----------------------------------------------------------------------------------------------


def quantize_q8_0(x) -> np.ndarray:
    """Q8_0 bytes of ``x`` (``[..., n]``, ``n`` a multiple of 32): ``uint8 [..., n // 32 * 34]``."""
    blocks, shape = as_blocks("x", x, QK)
    d = np.abs(blocks).max(axis=1, keepdims=True) / np.float32(127)  # [n_blocks, 1]
    with np.errstate(invalid="ignore"):
        q = _codes_to_int8(round_half_away(blocks * _inverse(d)))
    d16 = scale_to_f16(d, "Q8_0")
    out = np.concatenate([d16.view(np.uint8), q.view(np.uint8)], axis=1)  # scale first, then 32 codes
    return out.reshape(*shape[:-1], shape[-1] // QK * 34)


def dequantize_q8_0(data) -> np.ndarray:
    """float32 weights ``[..., n]`` from Q8_0 bytes ``[..., n // 32 * 34]``: ``d * q``."""
    arr = as_bytes("data", data, 34)
    blocks = arr.reshape(-1, 34)
    d = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    q = blocks[:, 2:].copy().view(np.int8).astype(np.float32)
    return (q * d).reshape(*arr.shape[:-1], arr.shape[-1] // 34 * QK)


# ----------------------------------------------------------------------------------------------
# Q4_0
# ----------------------------------------------------------------------------------------------


def pack_q4_0_block(scale: float, codes) -> np.ndarray:
    """The 18 bytes of one Q4_0 block from its scale and 32 codes (ints 0..15).

    Byte ``2 + j`` is ``codes[j] | codes[j + 16] << 4``: the first half of the block in the low
    nibbles, the second half in the high nibbles.
    """
    codes = np.asarray(codes)
    if codes.shape != (QK,) or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"codes must be 32 ints, got shape {codes.shape} and dtype {codes.dtype}")
    if codes.min() < 0 or codes.max() > 15:
        raise ValueError(f"Q4_0 codes are 0..15, got values in [{codes.min()}, {codes.max()}]")
    codes = codes.astype(np.uint8)
    d16 = scale_to_f16(np.asarray([scale], dtype=np.float32), "Q4_0")
    packed = codes[:16] | (codes[16:] << np.uint8(4))
    return np.concatenate([d16.view(np.uint8), packed])


def unpack_q4_0_block(block) -> tuple[float, np.ndarray]:
    """``(scale, codes)`` of one 18-byte Q4_0 block; the weights are ``scale * (codes - 8)``."""
    block = as_bytes("block", block, 18)
    if block.shape != (18,):
        raise ValueError(f"a Q4_0 block is 18 bytes, got shape {block.shape}")
    d = float(block[:2].copy().view(np.float16)[0])
    packed = block[2:]
    codes = np.concatenate([packed & np.uint8(0x0F), packed >> np.uint8(4)])
    return d, codes


def quantize_q4_0(x) -> np.ndarray:
    """Q4_0 bytes of ``x`` (``[..., n]``, ``n`` a multiple of 32): ``uint8 [..., n // 32 * 18]``."""
    blocks, shape = as_blocks("x", x, QK)
    # The weight of largest magnitude, with its sign (the first one if several tie, as in C).
    m = np.take_along_axis(blocks, np.abs(blocks).argmax(axis=1)[:, None], axis=1)
    d = m / np.float32(-8)
    with np.errstate(invalid="ignore"):  # inf/NaN only from a subnormal block (see _codes_to_int8)
        shifted = blocks * _inverse(d) + np.float32(8.5)  # code 8 is zero; trunc(v + 0.5) rounds v >= -0.5
        q = np.minimum(_codes_to_int8(np.trunc(shifted)), 15).astype(np.uint8)  # C: MIN(15, (int8_t)v)
    packed = q[:, :16] | (q[:, 16:] << np.uint8(4))
    d16 = scale_to_f16(d, "Q4_0")
    out = np.concatenate([d16.view(np.uint8), packed], axis=1)
    return out.reshape(*shape[:-1], shape[-1] // QK * 18)


def dequantize_q4_0(data) -> np.ndarray:
    """float32 weights ``[..., n]`` from Q4_0 bytes ``[..., n // 32 * 18]``: ``d * (q - 8)``."""
    arr = as_bytes("data", data, 18)
    blocks = arr.reshape(-1, 18)
    d = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    packed = blocks[:, 2:]
    q = np.concatenate([packed & np.uint8(0x0F), packed >> np.uint8(4)], axis=1).astype(np.int8) - np.int8(8)
    return (d * q.astype(np.float32)).reshape(*arr.shape[:-1], arr.shape[-1] // 18 * QK)


# ----------------------------------------------------------------------------------------------
# By name
# ----------------------------------------------------------------------------------------------


def quantize_blocks(x, fmt: str) -> np.ndarray:
    """GGUF bytes of ``x`` in block format ``fmt`` (``"q8_0"``, ``"q4_0"`` or ``"q6_k"``)."""
    name = get_block_format(fmt).name
    if name == "q6_k":
        return quantize_q6_k(x)
    return quantize_q8_0(x) if name == "q8_0" else quantize_q4_0(x)


def dequantize_blocks(data, fmt: str) -> np.ndarray:
    """float32 weights from GGUF bytes in block format ``fmt``."""
    name = get_block_format(fmt).name
    if name == "q6_k":
        return dequantize_q6_k(data)
    return dequantize_q8_0(data) if name == "q8_0" else dequantize_q4_0(data)
