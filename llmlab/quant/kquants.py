"""GGUF's Q6_K, a "k-quant": super-blocks of 256 weights with two levels of scales.

A Q6_K super-block (210 bytes per 256 weights, 6.5625 bits per weight) is 16 sub-blocks of 16
weights. Each sub-block has its own scale, stored as an int8 multiple of one float16 super-scale,
so a scale costs 8 bits instead of 16::

    bytes   0-127  ql      low 4 bits of the 256 codes
    bytes 128-191  qh      high 2 bits of the codes, four codes per byte
    bytes 192-207  scales  16 int8 sub-block scales
    bytes 208-209  d       float16 super-scale
    x ~= d * scales[i // 16] * (q - 32),   q in 0..63

The codes of one half (128 weights) are interleaved: byte ``l`` of ``ql`` holds element ``l`` in
its low nibble and element ``l + 64`` in its high one, byte ``l + 32`` elements ``l + 32`` and
``l + 96``; byte ``l`` of ``qh`` holds the top two bits of elements ``l, l + 32, l + 64, l + 96``.

Unlike Q8_0, the sub-block scale is not simply ``max / 32``: llama.cpp tries 19 candidate scales
around it and keeps the one that minimises the squared error weighted by ``x**2`` (large weights
matter more), in float32 arithmetic, accumulating in order. This module does the same operations
in the same order, so the bytes are identical to llama.cpp's ``quantize_row_q6_K_ref``; the tests
check that against bytes produced by the C code and check the decoding against the ``gguf``
package.
"""

from __future__ import annotations

import numpy as np

from .blockformat import as_blocks, as_bytes, scale_to_f16

__all__ = ["QK_K", "quantize_q6_k", "dequantize_q6_k", "nearest_int"]

QK_K = 256  # weights per super-block
_SUB = 16  # weights per sub-block
_NMAX = 32  # codes -32..31 inside a sub-block (stored as 0..63)
_EPS = np.float32(1e-15)  # below this a group counts as all zeros (GROUP_MAX_EPS in llama.cpp)
_F = np.float32


def nearest_int(x: np.ndarray) -> np.ndarray:
    """llama.cpp's rounding trick: add 1.5 * 2**23 in float32 and read the low mantissa bits.

    For ``|x| < 2**22`` this is round-half-to-even; beyond, it wraps around exactly as the C
    code does (which only matters for bit-exactness on absurd inputs).
    """
    val = (x.astype(np.float32) + _F(12582912.0)).view(np.int32)
    return (val & np.int32(0x007FFFFF)) - np.int32(0x00400000)


def _subblock_scales(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """llama.cpp's ``make_qx_quants(16, 32, x, L, rmse_type=1)`` on every row of ``x`` ``[n, 16]``.

    Returns the float32 scale of each row and its codes ``L`` (0..63).
    """
    n = x.shape[0]
    ax = np.abs(x)
    imax = ax.argmax(axis=1)  # the first of equal maxima, like the C loop's strict '>'
    amax = ax[np.arange(n), imax]
    signed_max = x[np.arange(n), imax]
    zero = amax < _EPS
    safe_max = np.where(zero, _F(1), signed_max).astype(np.float32)
    weight = x * x  # rmse_type 1: big weights count more

    def codes_and_sums(iscale: np.ndarray):
        levels = np.clip(nearest_int(iscale[:, None] * x), -_NMAX, _NMAX - 1)
        lf = levels.astype(np.float32)
        sumlx = np.zeros(n, dtype=np.float32)
        suml2 = np.zeros(n, dtype=np.float32)
        for i in range(_SUB):  # in order, one float32 add at a time, as the C loop does
            sumlx = sumlx + weight[:, i] * x[:, i] * lf[:, i]
            suml2 = suml2 + weight[:, i] * lf[:, i] * lf[:, i]
        return levels, sumlx, suml2

    iscale = _F(-_NMAX) / safe_max
    levels, sumlx, suml2 = codes_and_sums(iscale)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(suml2 != 0, sumlx / suml2, _F(0)).astype(np.float32)
    best = scale * sumlx
    for step in range(-9, 10):
        if step == 0:
            continue
        iscale = -(_F(_NMAX) + _F(0.1) * _F(step)) / safe_max
        new_levels, sumlx, suml2 = codes_and_sums(iscale)
        better = (suml2 > 0) & (sumlx * sumlx > best * suml2)
        with np.errstate(divide="ignore", invalid="ignore"):
            new_scale = (sumlx / suml2).astype(np.float32)
        levels = np.where(better[:, None], new_levels, levels)
        scale = np.where(better, new_scale, scale)
        best = np.where(better, scale * sumlx, best)
    levels = np.where(zero[:, None], -_NMAX, levels)  # all-zero group: codes 0 (= -32 + 32)
    scale = np.where(zero, _F(0), scale).astype(np.float32)
    return scale, (levels + _NMAX).astype(np.int32)


def quantize_q6_k(x) -> np.ndarray:
    """Q6_K bytes of ``x`` (``[..., n]``, ``n`` a multiple of 256): ``uint8 [..., n // 256 * 210]``."""
    blocks, shape = as_blocks("x", x, QK_K)
    # Huge weights overflow x**3 in float32 exactly as they do in C: IEEE inf compares the same way.
    with np.errstate(over="ignore", invalid="ignore"):
        return _quantize_q6_k(blocks, shape)


def _quantize_q6_k(blocks: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    nb = blocks.shape[0]
    sub = blocks.reshape(nb * QK_K // _SUB, _SUB)
    scales, codes = _subblock_scales(sub)
    scales = scales.reshape(nb, QK_K // _SUB)
    codes = codes.reshape(nb, QK_K // _SUB, _SUB)

    # The super-scale: the sub-block scale of largest magnitude (first one on ties) maps to -128.
    imax = np.abs(scales).argmax(axis=1)
    max_scale = scales[np.arange(nb), imax]
    empty = np.abs(max_scale) < _EPS
    iscale = _F(-128) / np.where(empty, _F(1), max_scale).astype(np.float32)
    with np.errstate(divide="ignore"):
        d16 = scale_to_f16(np.where(empty, _F(0), _F(1) / iscale).astype(np.float32), "Q6_K")
    int_scales = np.minimum(127, nearest_int(iscale[:, None] * scales))
    int_scales = np.where(empty[:, None], 0, int_scales).astype(np.int8)

    # Re-quantise each sub-block with the scale that will actually be stored (d16 * int8 scale).
    d_sub = d16.astype(np.float32)[:, None] * int_scales.astype(np.float32)  # [nb, 16]
    usable = d_sub != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        requant = np.clip(nearest_int(blocks.reshape(nb, QK_K // _SUB, _SUB) / d_sub[..., None]), -_NMAX, _NMAX - 1)
    codes = np.where(usable[..., None], requant + _NMAX, codes)  # a zero scale keeps the first codes
    codes = np.where(empty[:, None, None], 0, codes).astype(np.uint8)

    # Pack: per half of 128, q[k, l] is element 32 k + l.
    q = codes.reshape(nb, 2, 4, 32)
    low, high = q & np.uint8(0x0F), q >> np.uint8(4)
    ql = np.stack([low[:, :, 0] | (low[:, :, 2] << np.uint8(4)), low[:, :, 1] | (low[:, :, 3] << np.uint8(4))], axis=2)
    qh = high[:, :, 0] | (high[:, :, 1] << np.uint8(2)) | (high[:, :, 2] << np.uint8(4)) | (high[:, :, 3] << np.uint8(6))
    out = np.concatenate(
        [ql.reshape(nb, 128), qh.reshape(nb, 64), int_scales.view(np.uint8), d16.reshape(nb, 1).view(np.uint8)], axis=1
    )
    return out.reshape(*shape[:-1], shape[-1] // QK_K * 210)


def dequantize_q6_k(data) -> np.ndarray:
    """float32 weights ``[..., n]`` from Q6_K bytes ``[..., n // 256 * 210]``."""
    arr = as_bytes("data", data, 210)
    blocks = arr.reshape(-1, 210)
    nb = blocks.shape[0]
    ql = blocks[:, :128].reshape(nb, 2, 2, 32)
    qh = blocks[:, 128:192].reshape(nb, 2, 32)
    scales = blocks[:, 192:208].copy().view(np.int8).astype(np.float32)
    d = blocks[:, 208:210].copy().view(np.float16).astype(np.float32)  # [nb, 1]
    low = np.stack([ql[:, :, 0] & 0x0F, ql[:, :, 1] & 0x0F, ql[:, :, 0] >> 4, ql[:, :, 1] >> 4], axis=2)
    high = np.stack([(qh >> shift) & 0x03 for shift in (0, 2, 4, 6)], axis=2)
    q = (low | (high << 4)).astype(np.int8).astype(np.float32) - 32  # [nb, 2, 4, 32] -> element 128h + 32k + l
    sub_scale = (d * scales).reshape(nb, 16, 1)
    return (sub_scale * q.reshape(nb, 16, 16)).reshape(*arr.shape[:-1], arr.shape[-1] // 210 * QK_K)
