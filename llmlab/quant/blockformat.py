"""What every GGUF block format shares: its size in weights and bytes, and the checks and roundings of the C code.

``ggml`` (Q8_0, Q4_0) and ``kquants`` (Q6_K) build on these; ``BLOCK_FORMATS`` lists the three by name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BlockFormat:
    """A GGUF block format: how many weights a block holds and how many bytes it takes."""

    name: str
    block_size: int  # weights per block
    type_size: int  # bytes per block
    ggml_type: int  # the number GGUF files store (ggml_type in ggml.h)

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.type_size / self.block_size

    def nbytes(self, n_weights: int) -> int:
        """Bytes of ``n_weights`` weights (a multiple of ``block_size``)."""
        if n_weights % self.block_size:
            raise ValueError(f"{self.name} stores whole blocks of {self.block_size} weights, got {n_weights}")
        return n_weights // self.block_size * self.type_size


def _registry() -> dict[str, BlockFormat]:
    return {
        "q8_0": BlockFormat("q8_0", 32, 34, 8),
        "q4_0": BlockFormat("q4_0", 32, 18, 2),
        "q6_k": BlockFormat("q6_k", 256, 210, 14),
    }


BLOCK_FORMATS: dict[str, BlockFormat] = _registry()


def get_block_format(name: str) -> BlockFormat:
    """``"q8_0"``, ``"q4_0"`` or ``"q6_k"`` (case-insensitive)."""
    if not isinstance(name, str) or name.lower() not in BLOCK_FORMATS:
        raise ValueError(f"unknown GGUF block format {name!r}; valid: {', '.join(BLOCK_FORMATS)}")
    return BLOCK_FORMATS[name.lower()]


def round_half_away(x: np.ndarray) -> np.ndarray:
    """C's ``roundf``: halves go away from zero (2.5 -> 3, -2.5 -> -3); NumPy's ``rint`` would give 2.

    ``floor(|x| + 0.5)`` would be wrong for the float just below 0.5 (the sum rounds up to 1), so
    the fractional part is compared with one half exactly instead.
    """
    a = np.abs(x)
    whole = np.floor(a)
    return np.sign(x) * (whole + np.floor(2 * (a - whole)))


def as_blocks(name: str, x, block_size: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """``x`` as float32 blocks ``[n_blocks, block_size]``, plus its original shape."""
    arr = np.asarray(x)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be an array of numbers, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] % block_size != 0:
        raise ValueError(
            f"the last axis of {name} must be a multiple of the block size {block_size}, got shape {arr.shape}"
        )
    arr = arr.astype(np.float32)  # GGUF quantises from float32 (a copy: the caller's array is untouched)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or Inf (after conversion to float32): it cannot be quantised")
    return arr.reshape(-1, block_size), arr.shape


def scale_to_f16(d: np.ndarray, fmt: str) -> np.ndarray:
    with np.errstate(over="ignore"):
        d16 = d.astype(np.float16)
    if np.isinf(d16).any():
        worst = float(np.abs(d).max())
        raise ValueError(
            f"{fmt}: a block scale of {worst:.6g} does not fit in float16 (max 65504); the weights are too large "
            "for this format (llama.cpp would store inf)"
        )
    return d16


def as_bytes(name: str, data, type_size: int) -> np.ndarray:
    arr = np.asarray(data)
    if arr.dtype != np.uint8:
        raise TypeError(f"{name} must be a uint8 array of packed blocks, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] % type_size != 0:
        raise ValueError(f"the last axis of {name} must be a multiple of {type_size} bytes, got shape {arr.shape}")
    return np.ascontiguousarray(arr)
