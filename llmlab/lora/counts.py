"""LoRA by the numbers: how many parameters it trains (F6.11, F6.16) and its update on plain matrices (F6.10, F6.12).

Works on NumPy arrays and torch tensors alike; these are the references lab 06 checks against.
"""

from __future__ import annotations

import math

from ..arguments import check_float, check_int  # the same errors as the model's

__all__ = [
    "adapter_param_count",
    "full_param_count",
    "lora_delta",
    "lora_fraction",
    "lora_param_count",
    "lora_scaling",
    "merge_lora",
    "unmerge_lora",
]


# ----------------------------------------------------------------------------------------------
# Counting trainable parameters (F6.11, F6.16)
# ----------------------------------------------------------------------------------------------


def full_param_count(d_out: int, d_in: int) -> int:
    """Weights of a ``d_out x d_in`` matrix, all trained by full fine-tuning: ``d_out * d_in``."""
    check_int("d_out", d_out)
    check_int("d_in", d_in)
    return d_out * d_in


def lora_param_count(d_out: int, d_in: int, r: int) -> int:
    """Trainable numbers of a rank-``r`` LoRA on a ``d_out x d_in`` matrix: ``r * (d_in + d_out)``.

    ``A`` has ``r * d_in`` and ``B`` has ``d_out * r``. ``r = 0`` means no adapter (0). A rank
    above ``min(d_out, d_in)`` is refused: ``B A`` cannot have a rank larger than that, so the
    extra columns would only cost memory.
    """
    check_int("d_out", d_out)
    check_int("d_in", d_in)
    check_int("r", r, minimum=0)
    if r > min(d_out, d_in):
        raise ValueError(f"r={r} exceeds min(d_out, d_in)={min(d_out, d_in)}: B A cannot have a higher rank")
    return r * (d_in + d_out)


def lora_fraction(d_out: int, d_in: int, r: int) -> float:
    """LoRA's trainable parameters as a fraction of the matrix: ``r (d_in + d_out) / (d_in d_out)``."""
    return lora_param_count(d_out, d_in, r) / full_param_count(d_out, d_in)


def adapter_param_count(d: int, bottleneck: int, bias: bool = False) -> int:
    """Weights of a bottleneck adapter (Houlsby): down ``d -> m`` and up ``m -> d``: ``2 d m`` (+ ``m + d`` biases)."""
    check_int("d", d)
    check_int("bottleneck", bottleneck)
    if not isinstance(bias, bool):
        raise TypeError(f"bias must be a bool, got {bias!r}")
    return 2 * d * bottleneck + (bottleneck + d if bias else 0)


# ----------------------------------------------------------------------------------------------
# The update on plain matrices (F6.10, F6.12)
# ----------------------------------------------------------------------------------------------


def lora_scaling(alpha: float, r: int, use_rslora: bool = False) -> float:
    """``s = alpha / r`` (LoRA) or ``alpha / sqrt(r)`` (rsLoRA, which keeps large ranks from learning too slowly)."""
    check_float("alpha", alpha)
    check_int("r", r)
    return float(alpha) / (math.sqrt(r) if use_rslora else r)


def _check_factors(W, A, B) -> None:
    if A.ndim != 2 or B.ndim != 2 or W.ndim != 2:
        raise ValueError(f"W, A and B must be matrices, got shapes W {tuple(W.shape)}, A {tuple(A.shape)}, B {tuple(B.shape)}")
    if B.shape[1] != A.shape[0] or W.shape != (B.shape[0], A.shape[1]):
        raise ValueError(
            f"shapes do not fit y = W x + s B A x: W {tuple(W.shape)} must be (d_out, d_in), "
            f"A {tuple(A.shape)} (r, d_in) and B {tuple(B.shape)} (d_out, r)"
        )


def lora_delta(A, B, alpha: float, r: int, use_rslora: bool = False):
    """The update ``s * B @ A`` (``[d_out, d_in]``) for NumPy arrays or torch tensors."""
    if B.shape[1] != A.shape[0]:
        raise ValueError(f"B {tuple(B.shape)} and A {tuple(A.shape)} do not multiply: B must be (d_out, r), A (r, d_in)")
    return lora_scaling(alpha, r, use_rslora) * (B @ A)


def merge_lora(W, A, B, alpha: float, r: int, use_rslora: bool = False):
    """``W' = W + s * B @ A``: one matrix of the shape of ``W`` that computes base + adapter. ``W`` is not modified."""
    _check_factors(W, A, B)
    return W + lora_delta(A, B, alpha, r, use_rslora)


def unmerge_lora(W_merged, A, B, alpha: float, r: int, use_rslora: bool = False):
    """``W = W' - s * B @ A``: the base weights back (up to floating-point rounding)."""
    _check_factors(W_merged, A, B)
    return W_merged - lora_delta(A, B, alpha, r, use_rslora)
