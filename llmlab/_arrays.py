"""Input checking shared by the NumPy reference modules: turn what a student passes into a float array."""

from __future__ import annotations

import numpy as np


def as_float_array(name: str, x, min_ndim: int = 0, max_ndim: int | None = None) -> np.ndarray:
    """``x`` (NumPy, lists, numbers or a torch tensor) as a float64 array, or a clear error naming ``name``."""
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got {type(x).__name__}")
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor, without importing torch
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers ({exc})") from None
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}")
    if max_ndim is not None and arr.ndim > max_ndim:
        raise ValueError(f"{name} must have at most {max_ndim} dimension(s), got shape {arr.shape}")
    return arr
