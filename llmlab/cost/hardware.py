"""``Hardware``: the few numbers of a chip that bound how fast a model can run on it.

Decode is bounded by memory bandwidth (every weight is read once per generated token), prefill by
matrix throughput (2 FLOPs per weight per token). So a device is, to first order, three numbers:
memory (GB), bandwidth (GB/s) and dense fp16 matrix throughput (TFLOP/s).

Spec-sheet traps this class makes explicit (serving-facts §3):

* NVIDIA prints "X | 2X*" where * is 2:4 sparsity; the **dense** value is the first one.
* GeForce cards run fp16 matrices at full rate only with fp16 accumulation; with fp32
  accumulation (what PyTorch uses) they run at half rate. ``fp16_tflops`` is the fp32-accumulate
  figure; ``fp16_acc16_tflops`` the fp16-accumulate one where it differs.
* Not all memory is usable: vLLM takes 90 % by default, macOS lets Metal use about 70-78 % of
  unified memory (``usable_memory_fraction``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Hardware"]

_KINDS = ("gpu", "apple", "cpu")


def _positive(value, name: str, optional: bool = False):
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Hardware:
    """A device for the roofline model. Units: GB (1e9 bytes), GB/s, TFLOP/s (1e12), GHz."""

    name: str
    memory_gb: float
    bandwidth_gb_s: float
    fp16_tflops: float | None  # dense fp16/bf16 matrix throughput with fp32 accumulation
    int8_tops: float | None = None  # dense int8 matrix throughput
    fp16_acc16_tflops: float | None = None  # with fp16 accumulation, when it differs (GeForce: 2x)
    clock_ghz: float | None = None  # boost clock; scales the fixed per-layer latency
    sm_count: int | None = None  # streaming multiprocessors (NVIDIA): bounds kernels limited per SM, not by tensor peak
    kind: str = "gpu"
    usable_memory_fraction: float = 0.9
    display_name: str = ""
    sources: dict = field(default_factory=dict, compare=False, hash=False, repr=False)
    notes: str = field(default="", compare=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("name must be a non-empty string")
        for attr in ("memory_gb", "bandwidth_gb_s"):
            object.__setattr__(self, attr, _positive(getattr(self, attr), attr))
        for attr in ("fp16_tflops", "int8_tops", "fp16_acc16_tflops", "clock_ghz"):
            object.__setattr__(self, attr, _positive(getattr(self, attr), attr, optional=True))
        if self.sm_count is not None and (isinstance(self.sm_count, bool) or not isinstance(self.sm_count, int)
                                          or self.sm_count <= 0):
            raise ValueError(f"sm_count must be an int > 0, got {self.sm_count!r}")
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        frac = self.usable_memory_fraction
        if not isinstance(frac, (int, float)) or not 0 < frac <= 1:
            raise ValueError(f"usable_memory_fraction must be in (0, 1], got {frac!r}")

    @property
    def bandwidth_bytes_s(self) -> float:
        return self.bandwidth_gb_s * 1e9

    @property
    def usable_memory_gb(self) -> float:
        """Memory a model may actually use, ``memory_gb · usable_memory_fraction`` (decimal GB)."""
        return self.memory_gb * self.usable_memory_fraction

    def peak_flops(self, accumulate: str = "fp32") -> float:
        """Dense fp16 matrix peak in FLOP/s; ``accumulate="fp16"`` uses the fp16-accumulate figure
        where one is published (it is the same on data-centre parts)."""
        if accumulate not in ("fp32", "fp16"):
            raise ValueError(f"accumulate must be 'fp32' or 'fp16', got {accumulate!r}")
        if self.fp16_tflops is None:
            raise ValueError(
                f"{self.name} has no published fp16 throughput; pass a Hardware with fp16_tflops "
                "(for example measured with llmlab.cost.calibrate)"
            )
        tflops = self.fp16_acc16_tflops if accumulate == "fp16" and self.fp16_acc16_tflops else self.fp16_tflops
        return tflops * 1e12

    def ridge_point(self, accumulate: str = "fp32") -> float:
        """Arithmetic intensity (FLOPs per byte) above which a kernel is compute-bound."""
        return self.peak_flops(accumulate) / self.bandwidth_bytes_s

    def __str__(self) -> str:
        tf = f"{self.fp16_tflops:g} TFLOP/s fp16" if self.fp16_tflops else "fp16 n/a"
        return f"{self.display_name or self.name}: {self.memory_gb:g} GB, {self.bandwidth_gb_s:g} GB/s, {tf}"
