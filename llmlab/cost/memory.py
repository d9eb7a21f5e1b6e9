"""Does it fit? Weight memory per format, KV cache, overhead and the usable part of a device.

``fit_check`` answers with its working shown, so a student can see *which* term breaks the budget:

    weights (format)  +  KV cache (context × batch)  +  overhead  ≤  memory × usable fraction

Defaults: the overhead is 10 % of weights + KV (activations, runtime buffers, fragmentation), and
the usable fraction comes from the device (0.9 on NVIDIA GPUs, vLLM's default; about 0.78 of
unified memory on Apple chips, the Metal working-set limit). Chapter 01's rule of thumb, 25 % on
top and the whole device usable, is ``fit_check(..., overhead=0.25, usable_fraction=1.0)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .basics import GB, GiB
from .formats import WeightFormat, get_weight_format
from .hardware import Hardware
from .spec import ModelSpec

__all__ = ["weight_bytes", "weight_memory_table", "FitReport", "fit_check", "max_batch"]


def weight_bytes(spec: ModelSpec, weight_format: str | WeightFormat = "fp16") -> float:
    """Bytes of the stored weights of ``spec`` in ``weight_format`` (see ``llmlab.cost.formats``).

    Each group of tensors is charged its own bits per weight: block matrices, embedding table,
    output head (the shared table when tied) and the norm/bias vectors.
    """
    if not isinstance(spec, ModelSpec):
        raise TypeError(f"spec must be a ModelSpec, got {type(spec).__name__}")
    fmt = get_weight_format(weight_format)
    g = spec.tensor_groups()
    bits = (g["matrices"] * fmt.matrix_bits + g["embedding"] * fmt.embedding_bits
            + g["head"] * fmt.head_bits + g["vectors"] * fmt.vector_bits)
    return bits / 8


def weight_memory_table(spec: ModelSpec, formats=("fp32", "fp16", "int8", "q8_0", "q4_0", "gptq-4bit-g128")) -> dict:
    """``{format: {"bytes", "GB", "GiB", "bits_per_weight"}}`` for a few formats, for a bar chart."""
    n = spec.param_count()
    out = {}
    for name in formats:
        b = weight_bytes(spec, name)
        out[name] = {"bytes": b, "GB": b / GB, "GiB": b / GiB, "bits_per_weight": 8 * b / n}
    return out


@dataclass(frozen=True)
class FitReport:
    """The working of :func:`fit_check`; all sizes in decimal GB."""

    model: str
    hardware: str
    weight_format: str
    context: int
    batch: int
    weights_gb: float
    kv_gb: float
    overhead_gb: float
    required_gb: float
    memory_gb: float
    usable_fraction: float
    usable_gb: float

    @property
    def fits(self) -> bool:
        return self.required_gb <= self.usable_gb

    @property
    def headroom_gb(self) -> float:
        """Usable memory left over (negative when it does not fit)."""
        return self.usable_gb - self.required_gb

    def __bool__(self) -> bool:
        return self.fits

    def __str__(self) -> str:
        verdict = "fits" if self.fits else "does NOT fit"
        return "\n".join([
            f"{self.model} ({self.weight_format}) on {self.hardware}, context {self.context} x batch {self.batch}:",
            f"  weights   {self.weights_gb:9.2f} GB",
            f"  KV cache  {self.kv_gb:9.2f} GB",
            f"  overhead  {self.overhead_gb:9.2f} GB",
            f"  required  {self.required_gb:9.2f} GB",
            f"  usable    {self.usable_gb:9.2f} GB  ({self.usable_fraction:.0%} of {self.memory_gb:g} GB)",
            f"  -> {verdict} (headroom {self.headroom_gb:+.2f} GB)",
        ])


def _kv_bytes_per_value(kv_bytes_per_value, fmt: WeightFormat) -> float:
    if kv_bytes_per_value is None:
        return fmt.kv_default_bytes
    if not isinstance(kv_bytes_per_value, (int, float)) or kv_bytes_per_value <= 0:
        raise ValueError(f"kv_bytes_per_value must be a number > 0, got {kv_bytes_per_value!r}")
    return kv_bytes_per_value


def fit_check(
    spec: ModelSpec,
    hardware: Hardware,
    weight_format: str = "fp16",
    context: int = 4096,
    batch: int = 1,
    kv_bytes_per_value: float | None = None,
    overhead: float = 0.10,
    usable_fraction: float | None = None,
    sliding: str = "hf",
) -> FitReport:
    """Can ``batch`` sequences of ``context`` tokens run on ``hardware``? Returns a :class:`FitReport`
    (truthy when it fits) with the breakdown weights / KV / overhead / usable memory.

    ``kv_bytes_per_value`` defaults to 2 (fp16 KV; KV quantisation is separate from weight
    quantisation). ``overhead`` is a fraction of weights + KV.
    """
    if not isinstance(hardware, Hardware):
        raise TypeError(f"hardware must be a Hardware, got {type(hardware).__name__}")
    fmt = get_weight_format(weight_format)
    if not isinstance(overhead, (int, float)) or overhead < 0:
        raise ValueError(f"overhead must be a fraction >= 0, got {overhead!r}")
    frac = hardware.usable_memory_fraction if usable_fraction is None else usable_fraction
    if not isinstance(frac, (int, float)) or not 0 < frac <= 1:
        raise ValueError(f"usable_fraction must be in (0, 1], got {frac!r}")
    weights = weight_bytes(spec, fmt) / GB
    kv = spec.kv_cache_bytes(context, batch=batch, bytes_per_value=_kv_bytes_per_value(kv_bytes_per_value, fmt),
                             sliding=sliding) / GB
    extra = overhead * (weights + kv)
    return FitReport(
        model=spec.name, hardware=hardware.name, weight_format=fmt.name, context=context, batch=batch,
        weights_gb=weights, kv_gb=kv, overhead_gb=extra, required_gb=weights + kv + extra,
        memory_gb=hardware.memory_gb, usable_fraction=frac, usable_gb=hardware.memory_gb * frac,
    )


def max_batch(
    spec: ModelSpec,
    hardware: Hardware,
    context: int,
    weight_format: str = "fp16",
    kv_bytes_per_value: float | None = None,
    overhead: float = 0.10,
    usable_fraction: float | None = None,
    sliding: str = "hf",
) -> int:
    """Largest number of concurrent ``context``-token sequences that fit (0 if not even one does)."""
    report = fit_check(spec, hardware, weight_format, context, 1, kv_bytes_per_value, overhead,
                       usable_fraction, sliding)
    per_seq = report.kv_gb * (1 + overhead)
    free = report.usable_gb - report.weights_gb * (1 + overhead)
    if free < per_seq:
        return 0
    if per_seq == 0:
        raise ValueError("context 0 needs no KV cache: the batch is not limited by memory")
    return int(math.floor(free / per_seq + 1e-12))


