"""Quantising a weight matrix by hand: absmax, zero point, groups, and the error it costs.

The textbook's recipe (chapter 08's notebook) in three steps: find the largest weight in absolute
value, cut the range ``[-max, max]`` into equal steps, round every weight to the nearest step. In
formulas, for ``b`` bits (symmetric, "absmax")::

    qmax = 2**(b - 1) - 1               # 127 for int8, 7 for int4
    s    = max|w| / qmax                # the scale: the size of one step
    q    = clip(round(w / s), -qmax, qmax)
    w^   = s * q                        # dequantised: |w - w^| <= s / 2 for every weight

Convention of the course: the symmetric grid uses ``-qmax..qmax`` (255 levels for int8, not
256: keeping ``-128`` out makes the grid symmetric around 0), and ``round`` is NumPy's round half
to even. GGUF's blocks (``llmlab.quant.ggml``) round half away from zero instead, like C's
``roundf``.

Granularity decides which weights share a scale: the whole tensor (``axis=None``), each output
row of a ``[out, in]`` matrix (``axis=1``: the maximum is taken along the input axis), or each
group of ``group_size`` consecutive weights of a row (``quantize_groupwise``). One outlier
inflates the scale of everything that shares it, so finer granularity protects the other weights
at the price of more scales to store.

The asymmetric ("affine", zero-point) variant maps ``[min, max]`` onto ``0..2**b - 1``, which
wastes no levels when the weights are not centred on zero (activations after a ReLU, say).

No function here modifies its input (the chapter's "quantise in place" mistake: the "before"
baseline would silently become the "after"). Units: bytes; ``GB = 1e9``, ``GiB = 2**30``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "GB",
    "GiB",
    "weight_memory_bytes",
    "qmax_for_bits",
    "quantize_absmax",
    "quantize_int8_absmax",
    "dequantize",
    "quantize_affine",
    "dequantize_affine",
    "quantize_groupwise",
    "dequantize_groupwise",
    "fake_quantize",
    "relative_matvec_error",
    "max_abs_error",
    "quantized_nbytes",
    "quant_report",
]

GB = 1e9
GiB = 2**30


# ----------------------------------------------------------------------------------------------
# Memory: N weights of b bits take N * b / 8 bytes
# ----------------------------------------------------------------------------------------------


def weight_memory_bytes(n_params: float, bits: float) -> float:
    """Bytes to store ``n_params`` weights at ``bits`` bits each: ``N * b / 8``.

    ``weight_memory_bytes(7e9, 16) == 14e9`` (14 GB, 13.04 GiB); at 4 bits, 3.5e9 bytes.
    Effective bits of a group-wise format include its scales: 4-bit with a float16 scale per 64
    weights is ``4 + 16/64 = 4.25`` bits.
    """
    for name, value in (("n_params", n_params), ("bits", bits)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number, got {type(value).__name__}")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(n_params) * float(bits) / 8.0


# ----------------------------------------------------------------------------------------------
# Input checks shared by every function
# ----------------------------------------------------------------------------------------------


def _as_float_array(name: str, w) -> np.ndarray:
    """A float array view/copy of ``w`` (lists welcome); float32 stays float32, the rest float64."""
    arr = np.asarray(w)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be an array of numbers, got dtype {arr.dtype}")
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or Inf: quantisation needs finite values")
    return arr


def qmax_for_bits(bits: int) -> int:
    """Largest code of the symmetric grid: ``2**(bits-1) - 1`` (127 for 8 bits, 7 for 4, 1 for 2)."""
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
        raise TypeError(f"bits must be an int, got {type(bits).__name__}")
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be between 2 and 16, got {bits}")
    return 2 ** (int(bits) - 1) - 1


def _check_axis(axis, ndim: int):
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be None or an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for an array with {ndim} dimensions")
    return int(axis)


def _code_dtype(bits: int, signed: bool):
    if bits <= 8:
        return np.int8 if signed else np.uint8
    return np.int16 if signed else np.uint16


# ----------------------------------------------------------------------------------------------
# Symmetric (absmax)
# ----------------------------------------------------------------------------------------------


def quantize_absmax(w, bits: int = 8, axis: int | None = None):
    """Symmetric absmax quantisation: ``(q, scale)`` with ``w ~= q * scale``.

    - ``axis=None``: one scale for the whole tensor; ``scale`` is a Python float.
    - ``axis=k``: the maximum is taken along axis ``k``, so every slice along the *other* axes has
      its own scale (for a ``[out, in]`` matrix, ``axis=1`` gives one scale per output row, the
      "per channel" of the chapter); ``scale`` keeps the reduced axis with length 1, so
      ``q * scale`` broadcasts.

    ``q`` holds ints in ``[-qmax, qmax]`` (``qmax = 2**(bits-1) - 1``) as ``int8`` (``int16``
    above 8 bits). A slice of zeros gets scale 0 and codes 0. ``w`` is not modified.
    """
    arr = _as_float_array("w", w)
    qmax = qmax_for_bits(bits)
    axis = _check_axis(axis, arr.ndim)
    if axis is None:
        amax = np.abs(arr).max()
    else:
        amax = np.abs(arr).max(axis=axis, keepdims=True)
    scale = amax / qmax
    safe = np.where(scale == 0, 1, scale)  # all-zero slice: any scale gives q = 0
    q = np.clip(np.rint(arr / safe), -qmax, qmax).astype(_code_dtype(bits, signed=True))
    return q, (float(scale) if axis is None else scale)


def quantize_int8_absmax(w, axis: int | None = None):
    """``quantize_absmax(w, bits=8, axis=axis)``: the chapter's int8 with 127 steps on each side of 0."""
    return quantize_absmax(w, bits=8, axis=axis)


def dequantize(q, scale, zero_point=0) -> np.ndarray:
    """``scale * (q - zero_point)`` as floats (float32 if ``scale`` is float32, else float64)."""
    q_arr = np.asarray(q)
    if not np.issubdtype(q_arr.dtype, np.integer):
        raise TypeError(f"q must hold integer codes, got dtype {q_arr.dtype}")
    scale_arr = np.asarray(scale)
    dtype = np.float32 if scale_arr.dtype == np.float32 else np.float64
    return ((q_arr.astype(np.int64) - np.asarray(zero_point, dtype=np.int64)) * scale_arr).astype(dtype)


# ----------------------------------------------------------------------------------------------
# Asymmetric (affine, with a zero point)
# ----------------------------------------------------------------------------------------------


def quantize_affine(w, bits: int = 8, axis: int | None = None):
    """Asymmetric quantisation onto ``0..2**bits - 1``: ``(q, scale, zero_point)``.

    ``scale = (max - min) / (2**bits - 1)``, ``zero_point = round(-min / scale)`` (the code of the
    real number 0, clipped to the grid), ``q = clip(round(w / scale) + zero_point, 0, 2**bits - 1)``.
    The range always contains 0 (``min <= 0 <= max``), so zero is stored exactly (padding, ReLU
    outputs). ``w = [-1, 0, 0.6, 2]`` gives ``scale = 3/255``, ``zero_point = 85``,
    ``q = [0, 85, 136, 255]``. ``axis`` works as in :func:`quantize_absmax`; codes are ``uint8``
    up to 8 bits. ``dequantize_affine(q, scale, zero_point)`` goes back.
    """
    arr = _as_float_array("w", w)
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
        raise TypeError(f"bits must be an int, got {type(bits).__name__}")
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be between 2 and 16, got {bits}")
    levels = 2 ** int(bits) - 1
    axis = _check_axis(axis, arr.ndim)
    if axis is None:
        lo, hi = min(arr.min(), 0.0), max(arr.max(), 0.0)
        lo, hi = np.asarray(lo, dtype=arr.dtype), np.asarray(hi, dtype=arr.dtype)
    else:
        lo = np.minimum(arr.min(axis=axis, keepdims=True), 0)
        hi = np.maximum(arr.max(axis=axis, keepdims=True), 0)
    scale = (hi - lo) / levels
    safe = np.where(scale == 0, 1, scale)
    zero_point = np.clip(np.rint(-lo / safe), 0, levels).astype(np.int64)
    q = np.clip(np.rint(arr / safe) + zero_point, 0, levels).astype(_code_dtype(bits, signed=False))
    if axis is None:
        return q, float(scale), int(zero_point)
    return q, scale, zero_point


def dequantize_affine(q, scale, zero_point) -> np.ndarray:
    """``scale * (q - zero_point)``: the inverse of :func:`quantize_affine`."""
    return dequantize(q, scale, zero_point)


# ----------------------------------------------------------------------------------------------
# Group-wise: one scale per `group_size` consecutive weights of the last axis
# ----------------------------------------------------------------------------------------------


def _check_group(group_size, n: int) -> int:
    if isinstance(group_size, bool) or not isinstance(group_size, (int, np.integer)):
        raise TypeError(f"group_size must be an int, got {type(group_size).__name__}")
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    if n % group_size != 0:
        raise ValueError(f"the last axis ({n}) must be a multiple of group_size ({group_size})")
    return int(group_size)


def quantize_groupwise(w, bits: int = 4, group_size: int = 32):
    """Symmetric absmax with one scale per group of ``group_size`` weights along the last axis.

    Returns ``(q, scales)``: ``q`` has the shape of ``w``; ``scales`` has shape
    ``w.shape[:-1] + (w.shape[-1] // group_size,)``. With ``group_size = 32`` and ``bits = 4``
    an outlier only spoils the 31 weights of its group. Each float16 scale costs ``16 / group_size``
    extra bits per weight (4.5 bits for 4-bit g32, 4.125 for g128).
    """
    arr = _as_float_array("w", w)
    g = _check_group(group_size, arr.shape[-1])
    grouped = arr.reshape(*arr.shape[:-1], arr.shape[-1] // g, g)
    q, scale = quantize_absmax(grouped, bits=bits, axis=-1)
    return q.reshape(arr.shape), scale[..., 0]


def dequantize_groupwise(q, scales, group_size: int) -> np.ndarray:
    """Inverse of :func:`quantize_groupwise`: every code times the scale of its group."""
    q_arr = np.asarray(q)
    g = _check_group(group_size, q_arr.shape[-1])
    scales = np.asarray(scales)
    expected = q_arr.shape[:-1] + (q_arr.shape[-1] // g,)
    if scales.shape != expected:
        raise ValueError(f"scales must have shape {expected} for q of shape {q_arr.shape}, got {scales.shape}")
    grouped = q_arr.reshape(*q_arr.shape[:-1], q_arr.shape[-1] // g, g)
    return dequantize(grouped, scales[..., None]).reshape(q_arr.shape)


def fake_quantize(w, bits: int = 8, *, axis: int | None = None, group_size: int | None = None, symmetric: bool = True):
    """Quantise and dequantise in one go: the weights the model actually computes with.

    ``group_size`` (symmetric only) overrides ``axis``. The result has the float dtype of ``w``.
    """
    arr = _as_float_array("w", w)
    if group_size is not None:
        if not symmetric:
            raise ValueError("group-wise quantisation here is symmetric; use symmetric=True")
        q, scales = quantize_groupwise(arr, bits=bits, group_size=group_size)
        out = dequantize_groupwise(q, np.asarray(scales), group_size)
    elif symmetric:
        q, scale = quantize_absmax(arr, bits=bits, axis=axis)
        out = dequantize(q, scale)
    else:
        q, scale, zero = quantize_affine(arr, bits=bits, axis=axis)
        out = dequantize(q, scale, zero)
    return out.astype(arr.dtype)


# ----------------------------------------------------------------------------------------------
# Measuring: what did it cost?
# ----------------------------------------------------------------------------------------------


def relative_matvec_error(w, w_hat, x) -> float:
    """``||W x - W^ x|| / ||W x||``: how much a matrix-vector product moves (0.011 = 1.1 %).

    ``x`` is a vector ``[in]`` or a batch of column vectors ``[in, n]`` (Frobenius norms then).
    """
    w, w_hat, x = (_as_float_array(n, a) for n, a in (("w", w), ("w_hat", w_hat), ("x", x)))
    if w.shape != w_hat.shape:
        raise ValueError(f"w and w_hat must have the same shape, got {w.shape} and {w_hat.shape}")
    if w.ndim != 2 or x.ndim not in (1, 2) or x.shape[0] != w.shape[1]:
        raise ValueError(f"need w [out, in] and x [in] or [in, n], got w {w.shape} and x {x.shape}")
    exact = w.astype(np.float64) @ x.astype(np.float64)
    approx = w_hat.astype(np.float64) @ x.astype(np.float64)
    denom = np.linalg.norm(exact)
    if denom == 0:
        raise ValueError("W @ x is zero: the relative error is undefined")
    return float(np.linalg.norm(exact - approx) / denom)


def max_abs_error(w, w_hat) -> float:
    """Largest ``|w - w^|``: at most ``scale / 2`` for weights inside the grid's range."""
    w, w_hat = _as_float_array("w", w), _as_float_array("w_hat", w_hat)
    if w.shape != w_hat.shape:
        raise ValueError(f"w and w_hat must have the same shape, got {w.shape} and {w_hat.shape}")
    return float(np.abs(w.astype(np.float64) - w_hat.astype(np.float64)).max())


def quantized_nbytes(shape, bits: int, *, axis: int | None = None, group_size: int | None = None, scale_bytes: int = 4) -> int:
    """Bytes of the codes (``ceil(N * bits / 8)``) plus one ``scale_bytes`` scale per tensor, slice or group."""
    n = int(np.prod(shape))
    if group_size is not None:
        n_scales = n // _check_group(group_size, shape[-1])
    elif axis is None:
        n_scales = 1
    else:
        axis = _check_axis(axis, len(shape))
        n_scales = n // shape[axis]
    return math.ceil(n * bits / 8) + n_scales * scale_bytes


def quant_report(w, x, bits: int = 8, *, axis: int | None = None, group_size: int | None = None) -> dict:
    """Quantise ``w`` (absmax) and measure what it costs: memory *and* error, never one without the other.

    Keys: ``bits``; ``mem_ratio`` (float32 bytes / quantised code bytes, ``32 / bits``: 4.0 for
    int8); ``mem_ratio_with_scales`` (counting float32 scales, or float16 per group);
    ``rel_error`` (:func:`relative_matvec_error` on ``x``); ``max_error``; ``max_scale`` and
    ``error_bound = max_scale / 2`` (no in-range weight moves more). ``w`` is not modified.
    """
    arr = _as_float_array("w", w)
    if group_size is not None:
        q, scales = quantize_groupwise(arr, bits=bits, group_size=group_size)
        w_hat = dequantize_groupwise(q, scales, group_size)
        max_scale = float(np.max(scales))
        nbytes = quantized_nbytes(arr.shape, bits, group_size=group_size, scale_bytes=2)
    else:
        q, scale = quantize_absmax(arr, bits=bits, axis=axis)
        w_hat = dequantize(q, scale)
        max_scale = float(np.max(scale))
        nbytes = quantized_nbytes(arr.shape, bits, axis=axis, scale_bytes=4)
    return {
        "bits": int(bits),
        "mem_ratio": 32 / bits,
        "mem_ratio_with_scales": arr.size * 4 / nbytes,
        "rel_error": relative_matvec_error(arr, w_hat, x),
        "max_error": max_abs_error(arr, w_hat),
        "max_scale": max_scale,
        "error_bound": max_scale / 2,
    }
