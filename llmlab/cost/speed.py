"""How fast: a roofline with explicit efficiency factors, for prefill and decode.

One forward pass moves ``bytes`` through memory and does ``flops`` of arithmetic. On a device with
bandwidth ``BW`` and peak ``F`` it cannot take less than ``max(bytes/BW, flops/F)``. Real runtimes
get a fraction of each peak and also pay a fixed latency per layer (kernel launches, small
kernels such as norms and rotary embeddings that cannot fill the GPU). So:

    time = max(bytes / (BW · η_bw), flops / (F · η_f)) + n_layers · t_layer

* **Decode** (one new token per sequence): ``bytes`` = every weight once (an MoE reads only the
  experts the batch touches; the embedding table only one row per token unless it doubles as
  the head) + the cached keys and values of the context; ``flops`` ≈ 2 · active params per token
  + attention. Arithmetic intensity ≈ batch size, so decode is memory-bound.
* **Prefill** (the prompt, in chunks of ``ubatch`` tokens): ``flops`` = 2 · params per token +
  causal attention; each chunk reads the weights once. Intensity ≈ chunk size: compute-bound.

``Efficiency()`` is the ideal roofline (no overheads). ``DEFAULT_EFFICIENCY`` is the newest llama.cpp
CUDA profile of ``llmlab.cost.profiles`` (read from ``data/profiles.json``; see its ``provenance``);
``LLAMA_CPP_CUDA_2023_12`` is the first fit (December 2023 builds, serving-facts §2b), kept for
comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from llmlab.arguments import int_at_least
from .formats import WeightFormat, get_weight_format
from .hardware import Hardware
from .spec import ModelSpec

__all__ = [
    "Efficiency",
    "IDEAL",
    "DEFAULT_EFFICIENCY",
    "LLAMA_CPP_CUDA_2023_12",
    "StepTime",
    "arithmetic_intensity",
    "roofline_time",
    "attainable_tflops",
    "expected_experts_touched",
    "decode_step",
    "decode_tokens_per_s",
    "prefill",
    "prefill_time_s",
    "prefill_tokens_per_s",
    "ttft_s",
    "generation",
]

FALLBACK_CLOCK_GHZ = 1.5  # for a device with no published clock: a typical GPU boost clock


@dataclass(frozen=True)
class Efficiency:
    """The explicit fudge factors of the roofline, each with a physical meaning.

    ``bandwidth``: fraction of peak memory bandwidth reached while streaming weights and KV.
    ``compute``: fraction of the peak matrix throughput reached by the matmuls on chips with matrix
    units (NVIDIA tensor cores: ``Hardware.kind == "gpu"``), whose peak is hard to reach.
    ``compute_simd``: the same on chips without them (Apple GPUs, CPUs: ``kind`` ``"apple"`` or
    ``"cpu"``), whose listed peak is the vector-ALU peak; tuned GEMMs get much closer to it.
    ``layer_overhead_cycles``: fixed latency per layer and forward pass, in device clock cycles
    (converted with ``Hardware.clock_ghz``); ``layer_overhead_s`` gives it in seconds instead.
    ``accumulate``: which fp16 peak the runtime can use ("fp16": fp16-accumulate GEMMs, full rate
    on GeForce; "fp32": PyTorch's default, half rate on GeForce).
    ``prefill_dequant``: quantised weights are expanded to an fp16 copy before the prefill GEMMs
    (writing and re-reading 2 bytes per weight per chunk), as llama.cpp's cuBLAS path does; only on
    ``kind == "gpu"`` (Metal and CPU kernels dequantise inside the matmul).
    ``quant_compute``: multiplier of the compute efficiency for prefill matmuls on quantised
    weights that the kernel dequantises itself (Metal, CPU: no fp16 copy): unpacking costs ALU
    time, so such GEMMs run slower than fp16 ones (1.0: as fast).
    ``mmq_flops_per_sm_cycle``: prefill matmuls on quantised weights run by kernels that read the
    quantised blocks themselves and are limited per streaming multiprocessor, not by the tensor peak
    (llama.cpp's MMQ, its default on NVIDIA since PR #8075 of June 2024): their FLOP/s is
    ``Hardware.sm_count · clock · mmq_flops_per_sm_cycle`` (no fp16 copy of the weights); ``None``:
    the tensor peak times ``compute``. Only on ``kind == "gpu"`` with a known ``sm_count`` and clock.
    ``unpack_flops_per_weight``: vector-ALU work, in FLOP-equivalents, to unpack one quantised matrix
    weight in a decode step (bit shifts, scales, the dot product's reduction) on chips without
    matrix units (``kind`` ``"apple"`` or ``"cpu"``). It adds to the step's compute term, so a
    quantised decode is compute-bound where the ALUs are slow for the bandwidth (0: never).
    ``ubatch``: prompt tokens per prefill chunk (each chunk reads the weights once).
    ``prefill_logits``: ``"last"`` if the runtime computes the output head only for the last prompt
    token (generation runtimes), ``"all"`` if for every position (a plain ``model(ids)`` call).
    ``overhead_overlaps``: the per-layer overhead is host time (an eager framework's Python and kernel
    launches) that runs while the accelerator works: PyTorch queues CUDA kernels and returns before
    they run, so a pass takes ``max(busy, overhead)``, not their sum. Only on accelerators
    (``kind`` ``"gpu"`` or ``"apple"``); on a CPU the host does the work itself and the terms add.
    """

    bandwidth: float = 1.0
    compute: float = 1.0
    compute_simd: float | None = None  # None: same as ``compute``
    layer_overhead_cycles: float = 0.0
    layer_overhead_s: float | None = None
    accumulate: str = "fp32"
    prefill_dequant: bool = False
    quant_compute: float = 1.0
    mmq_flops_per_sm_cycle: float | None = None
    unpack_flops_per_weight: float = 0.0
    ubatch: int = 512
    prefill_logits: str = "last"
    overhead_overlaps: bool = False
    name: str = "ideal roofline"
    provenance: str = ""

    def __post_init__(self):
        for attr in ("bandwidth", "compute", "compute_simd", "quant_compute"):
            v = getattr(self, attr)
            if attr == "compute_simd" and v is None:
                continue
            if not isinstance(v, (int, float)) or not 0 < v <= 1.5:
                raise ValueError(f"{attr} efficiency must be in (0, 1.5], got {v!r}")
        u = self.unpack_flops_per_weight
        if isinstance(u, bool) or not isinstance(u, (int, float)) or not 0 <= u <= 1e4:
            raise ValueError(f"unpack_flops_per_weight must be in [0, 1e4], got {u!r}")
        m = self.mmq_flops_per_sm_cycle
        if m is not None and (isinstance(m, bool) or not isinstance(m, (int, float)) or not 0 < m <= 1e5):
            raise ValueError(f"mmq_flops_per_sm_cycle must be in (0, 1e5], got {m!r}")
        if self.layer_overhead_cycles < 0 or (self.layer_overhead_s is not None and self.layer_overhead_s < 0):
            raise ValueError("layer overheads must be >= 0")
        if self.accumulate not in ("fp32", "fp16"):
            raise ValueError(f"accumulate must be 'fp32' or 'fp16', got {self.accumulate!r}")
        if not isinstance(self.ubatch, int) or self.ubatch <= 0:
            raise ValueError(f"ubatch must be a positive int, got {self.ubatch!r}")
        if self.prefill_logits not in ("last", "all"):
            raise ValueError(f"prefill_logits must be 'last' or 'all', got {self.prefill_logits!r}")
        if not isinstance(self.overhead_overlaps, bool):
            raise ValueError(f"overhead_overlaps must be a bool, got {self.overhead_overlaps!r}")

    def compute_for(self, hardware: Hardware) -> float:
        """The compute efficiency that applies to ``hardware`` (matrix units or not)."""
        if hardware.kind != "gpu" and self.compute_simd is not None:
            return self.compute_simd
        return self.compute

    def dequant_on(self, hardware: Hardware) -> bool:
        return self.prefill_dequant and hardware.kind == "gpu" and not self.mmq_on(hardware)

    def mmq_on(self, hardware: Hardware) -> bool:
        """Quantised prefill GEMMs use the per-SM (MMQ) roof on ``hardware``."""
        return (self.mmq_flops_per_sm_cycle is not None and hardware.kind == "gpu"
                and hardware.sm_count is not None and hardware.clock_ghz is not None)

    def layer_overhead(self, hardware: Hardware) -> float:
        """Seconds of fixed latency per layer per forward pass on ``hardware``."""
        if self.layer_overhead_s is not None:
            return self.layer_overhead_s
        clock = hardware.clock_ghz or FALLBACK_CLOCK_GHZ
        return self.layer_overhead_cycles / (clock * 1e9)


IDEAL = Efficiency()

# The first default, kept for comparison and as the fixed starting point of every profile fit
# (llmlab.cost.profiles): fitted by benchmarks/fit_efficiency.py on the XiongjieDai llama.cpp table (serving-facts §2b):
# 6 NVIDIA GPUs x {7B Q4_0, 7B F16} x {decode tg128, prefill pp512} + 70B Q4_0 decode, 27 points.
LLAMA_CPP_CUDA_2023_12 = Efficiency(
    bandwidth=0.942,
    compute=0.248,
    # Not fitted (no throughput table of such chips was used): tuned dense GEMM on hardware without
    # matrix units reaches roughly 0.6-0.9 of the vector-ALU peak (CPU BLAS near the top, GPU SIMD
    # GEMM lower); this machine's calibration reached 0.74-0.94 of its measured matmul roof.
    compute_simd=0.7,
    layer_overhead_cycles=255_000.0,
    accumulate="fp16",
    prefill_dequant=True,
    ubatch=512,
    prefill_logits="last",
    name="llama.cpp CUDA (Dec 2023), fitted",
    provenance=(
        "Fitted (least squares on log(predicted/measured); decode rows for bandwidth and overhead, "
        "prefill rows for compute) on the 27 points of serving-facts §2b: "
        "XiongjieDai/GPU-Benchmarks-on-LLM-Inference, llama.cpp Dec 2023, LLaMA-2-7B Q4_0/F16 "
        "tg128 and pp512 on RTX 3090/4080/4090, RTX A6000, A100 80GB PCIe, H100 PCIe, plus LLaMA-2-70B "
        "Q4_0 tg128. Decode: MAPE 6.2 %, worst +20.0 % (H100 PCIe, 70B Q4_0); leave-one-GPU-out "
        "MAPE 7.6 %, worst 23 %. Prefill: MAPE 31.5 %, worst +113 % (H100 PCIe Q4_0): that "
        "llama.cpp did not exploit the larger tensor cores of data-centre GPUs. On the later "
        "LLaMA-3-8B table (May 2024, not fitted) decode MAPE is 10 %, prefill is 36-50 % too "
        "slow (llama.cpp's prompt processing got about 2x faster in between). The compute factor "
        "is relative to NVIDIA tensor-core peaks; chips without tensor cores (Apple, CPUs) use "
        "compute_simd = 0.7, a prior from GEMM efficiency on vector units, not a fit; calibrate it "
        "for your chip with llmlab.cost.calibrate. Reproduce: python benchmarks/fit_efficiency.py"
    ),
)




def _newest_profile_efficiency(runtime: str = "llama.cpp", family: str = "nvidia") -> Efficiency:
    """The efficiency of the newest stored profile of ``runtime`` on ``family`` (``data/profiles.json``,
    written by ``python -m llmlab.cost.profiles --write``): one source of truth for the default."""
    import json
    from importlib import resources

    stored = json.loads(resources.files("llmlab").joinpath("data", "profiles.json").read_text(encoding="utf-8"))
    cands = [p for p in stored["profiles"] if p["runtime"] == runtime and p["family"] == family]
    if not cands:
        raise RuntimeError(f"no stored {runtime} profile for {family} in data/profiles.json")
    newest = max(cands, key=lambda p: tuple(int(x) for x in p["version"].split("-")[:2]))
    bands = {ph: b for ph, b in newest["bands"].items() if b}
    held = "; ".join(f"{ph} {b['median_pct']} / {b['p90_pct']} %" for ph, b in bands.items())
    return replace(LLAMA_CPP_CUDA_2023_12, **{"layer_overhead_s": None, **newest["efficiency"]},
                   name=f"{runtime} {newest['version']} ({family}), the newest profile",
                   provenance=(f"The newest {runtime} profile for {family} in data/profiles.json, fitted on "
                               f"{', '.join(newest['fitted_on'])} (data/throughput.json) by llmlab.cost.profiles; "
                               f"held-out error (median / p90 of |predicted/measured - 1|, {next(iter(bands.values()))['method']}): "
                               f"{held}. compute_simd is the vector-unit prior of LLAMA_CPP_CUDA_2023_12 unless the "
                               "profile fits it. The December 2023 fit stays as LLAMA_CPP_CUDA_2023_12."))


# The default of every speed function: the newest llama.cpp CUDA profile (see llmlab.cost.profiles).
DEFAULT_EFFICIENCY = _newest_profile_efficiency()


@dataclass(frozen=True)
class StepTime:
    """Roofline breakdown of one or more forward passes (seconds, FLOPs, bytes).

    For a single pass the busy time is ``max(compute_s, memory_s)``; for several passes run one
    after the other (prefill chunks) ``busy_s`` is the sum of each pass's max, while
    ``compute_s`` and ``memory_s`` are the summed terms, for information. The total is busy +
    overhead, or ``max(busy, overhead)`` when ``overlap`` (host overhead hidden behind device work,
    :attr:`Efficiency.overhead_overlaps`).
    """

    flops: float
    bytes: float
    compute_s: float
    memory_s: float
    overhead_s: float
    busy_s: float | None = None
    overlap: bool = False

    @property
    def total_s(self) -> float:
        busy = max(self.compute_s, self.memory_s) if self.busy_s is None else self.busy_s
        return max(busy, self.overhead_s) if self.overlap else busy + self.overhead_s

    @property
    def bound(self) -> str:
        """Which term dominates: ``"memory"``, ``"compute"`` or ``"overhead"``."""
        terms = {"memory": self.memory_s, "compute": self.compute_s, "overhead": self.overhead_s}
        return max(terms, key=terms.get)

    @property
    def arithmetic_intensity(self) -> float:
        """FLOPs per byte moved."""
        return arithmetic_intensity(self.flops, self.bytes)

    def __str__(self) -> str:
        return (f"{self.total_s * 1e3:.3f} ms ({self.bound}-bound): memory {self.memory_s * 1e3:.3f} ms, "
                f"compute {self.compute_s * 1e3:.3f} ms, overhead {self.overhead_s * 1e3:.3f} ms; "
                f"{self.bytes / 1e9:.3f} GB, {self.flops / 1e9:.3f} GFLOP, {self.arithmetic_intensity:.1f} FLOP/B")


def arithmetic_intensity(flops: float, nbytes: float) -> float:
    """FLOPs per byte; the roofline's x axis."""
    if nbytes <= 0:
        raise ValueError(f"bytes must be > 0, got {nbytes}")
    return flops / nbytes


def roofline_time(flops: float, nbytes: float, hardware: Hardware, efficiency: Efficiency = IDEAL) -> float:
    """``max(bytes / (BW·η_bw), flops / (F·η_f))`` in seconds (no per-layer overhead)."""
    if flops < 0 or nbytes < 0:
        raise ValueError("flops and bytes must be >= 0")
    compute = flops / (hardware.peak_flops(efficiency.accumulate) * efficiency.compute_for(hardware)) if flops else 0.0
    memory = nbytes / (hardware.bandwidth_bytes_s * efficiency.bandwidth)
    return max(compute, memory)


def attainable_tflops(intensity: float, hardware: Hardware, efficiency: Efficiency = IDEAL) -> float:
    """The roofline curve: ``min(F·η_f, intensity · BW·η_bw)`` in TFLOP/s, for plotting."""
    peak = hardware.peak_flops(efficiency.accumulate) * efficiency.compute_for(hardware)
    return min(peak, intensity * hardware.bandwidth_bytes_s * efficiency.bandwidth) / 1e12


def expected_experts_touched(spec: ModelSpec, tokens: int) -> float:
    """Experts per layer at least one of ``tokens`` tokens is routed to, with uniform routing:
    ``E · (1 - (1 - k/E)^tokens)``. One token touches k; a large batch touches all E."""
    if not spec.is_moe:
        return 1.0
    E, k = spec.n_experts, spec.experts_per_token
    return E * (1.0 - (1.0 - k / E) ** tokens)


def _weight_read_bytes(spec: ModelSpec, fmt: WeightFormat, tokens: int, head: bool = True) -> float:
    """Weight bytes one forward pass over ``tokens`` tokens (all sequences) streams from memory:
    the block matrices (only the experts touched), the vectors, one embedding row per token
    and, when logits are computed, the whole output head."""
    g = spec.tensor_groups(experts=expected_experts_touched(spec, tokens))
    rows = tokens * spec.hidden_size  # one token-embedding row per token
    pos_rows = rows if spec.learned_positions else 0
    if spec.tie_word_embeddings:
        # the table is the head: read whole when logits are computed, one row per token otherwise
        table = g["head"] if head else min(g["head"], rows)
        bits = table * fmt.head_bits + min(g["embedding"], pos_rows) * fmt.embedding_bits
    else:
        bits = (g["head"] * fmt.head_bits if head else 0) + min(g["embedding"], rows + pos_rows) * fmt.embedding_bits
    bits += g["matrices"] * fmt.matrix_bits + g["vectors"] * fmt.vector_bits
    return bits / 8


def _kv_bytes(spec: ModelSpec, kv_bytes_per_value: float | None, fmt: WeightFormat) -> float:
    b = fmt.kv_default_bytes if kv_bytes_per_value is None else kv_bytes_per_value
    if not isinstance(b, (int, float)) or b <= 0:
        raise ValueError(f"kv_bytes_per_value must be a number > 0, got {b!r}")
    return spec.kv_values_per_position * b  # a key and a value per KV head (or MLA's latent), per position and layer


def _pass(spec, hardware, efficiency, flops, nbytes, peak: float | None = None) -> StepTime:
    if peak is None:
        peak = hardware.peak_flops(efficiency.accumulate) * efficiency.compute_for(hardware)
    compute = flops / peak
    memory = nbytes / (hardware.bandwidth_bytes_s * efficiency.bandwidth)
    return StepTime(flops, nbytes, compute, memory, spec.n_layers * efficiency.layer_overhead(hardware),
                    overlap=efficiency.overhead_overlaps and hardware.kind != "cpu")


def _check(spec, hardware):
    if not isinstance(spec, ModelSpec):
        raise TypeError(f"spec must be a ModelSpec, got {type(spec).__name__}")
    if not isinstance(hardware, Hardware):
        raise TypeError(f"hardware must be a Hardware, got {type(hardware).__name__}")


def _nonneg_int(v, name):
    return int_at_least(v, name, minimum=0)


def decode_step(
    spec: ModelSpec,
    hardware: Hardware,
    weight_format: str = "f16",
    context: int = 512,
    batch: int = 1,
    kv_bytes_per_value: float | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
) -> StepTime:
    """One decode step: ``batch`` sequences each add one token after ``context`` cached tokens."""
    _check(spec, hardware)
    _nonneg_int(context, "context")
    if _nonneg_int(batch, "batch") == 0:
        raise ValueError("batch must be >= 1")
    fmt = get_weight_format(weight_format)
    kv_read = batch * _kv_bytes(spec, kv_bytes_per_value, fmt) * spec.attended_keys(1, context)
    nbytes = _weight_read_bytes(spec, fmt, batch) + kv_read
    flops = batch * spec.forward_flops(1, context=context)
    if efficiency.unpack_flops_per_weight and fmt.matrix_bits < 16 and hardware.kind != "gpu":
        flops += efficiency.unpack_flops_per_weight * spec.tensor_groups(
            experts=expected_experts_touched(spec, batch))["matrices"]
    return _pass(spec, hardware, efficiency, flops, nbytes)


def decode_tokens_per_s(
    spec: ModelSpec,
    hardware: Hardware,
    weight_format: str = "f16",
    context: int = 512,
    batch: int = 1,
    kv_bytes_per_value: float | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
) -> float:
    """Tokens per second **per sequence** at this context; the whole batch makes ``batch`` times more."""
    return 1.0 / decode_step(spec, hardware, weight_format, context, batch, kv_bytes_per_value, efficiency).total_s


def prefill(
    spec: ModelSpec,
    hardware: Hardware,
    n_tokens: int,
    weight_format: str = "f16",
    batch: int = 1,
    context: int = 0,
    kv_bytes_per_value: float | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
) -> StepTime:
    """Process ``n_tokens`` prompt tokens for each of ``batch`` sequences (after ``context`` cached).

    The prompt goes through in chunks of ``efficiency.ubatch`` tokens per sequence; each chunk
    reads the weights once, writes its keys and values and reads the cached ones for attention.
    """
    _check(spec, hardware)
    if _nonneg_int(n_tokens, "n_tokens") == 0:
        raise ValueError("n_tokens must be >= 1")
    if _nonneg_int(batch, "batch") == 0:
        raise ValueError("batch must be >= 1")
    _nonneg_int(context, "context")
    fmt = get_weight_format(weight_format)
    kv = _kv_bytes(spec, kv_bytes_per_value, fmt)
    dequant = efficiency.dequant_on(hardware) and fmt.matrix_bits < 16
    gemm_fmt = get_weight_format("fp16") if dequant else fmt
    mmq_peak = None
    if fmt.matrix_bits < 16 and efficiency.mmq_on(hardware):
        mmq_peak = hardware.sm_count * hardware.clock_ghz * 1e9 * efficiency.mmq_flops_per_sm_cycle
    elif fmt.matrix_bits < 16 and not dequant and efficiency.quant_compute != 1.0:
        q = efficiency.quant_compute  # in-kernel dequantisation slows the GEMMs
        simd = None if efficiency.compute_simd is None else min(1.5, efficiency.compute_simd * q)
        efficiency = replace(efficiency, compute=min(1.5, efficiency.compute * q), compute_simd=simd)
    total = None
    done = 0
    while done < n_tokens:
        chunk = min(efficiency.ubatch, n_tokens - done)
        ctx = context + done
        last = done + chunk == n_tokens
        logits = "all" if efficiency.prefill_logits == "all" else ("last" if last else "none")
        flops = batch * spec.forward_flops(chunk, context=ctx, logits=logits)
        nbytes = _weight_read_bytes(spec, gemm_fmt, batch * chunk, head=logits != "none")
        # keys/values: read the cached ones once per layer (flash-attention tiling), write the new ones
        nbytes += batch * kv * (sum(spec.kv_tokens_stored(ctx, "window")) + spec.n_layers * chunk)
        step = _pass(spec, hardware, efficiency, flops, nbytes, peak=mmq_peak)
        if dequant:
            # A separate memory-bound pass before the GEMMs: read the quantised weights, write an
            # fp16 copy (the GEMM then reads that copy, counted above).
            g = spec.tensor_groups(experts=expected_experts_touched(spec, batch * chunk))
            head = g["head"] if logits != "none" else 0
            params = g["matrices"] + head
            quant = g["matrices"] * fmt.matrix_bits / 8 + head * fmt.head_bits / 8
            step = _sum(StepTime(0.0, quant + 2 * params, 0.0,
                                 (quant + 2 * params) / (hardware.bandwidth_bytes_s * efficiency.bandwidth), 0.0), step)
        total = step if total is None else _sum(total, step)
        done += chunk
    return total


def _sum(a: StepTime, b: StepTime) -> StepTime:
    """Two passes one after the other: their totals add (busy is total minus overhead, so a pass
    whose overhead hid behind its work keeps its own total)."""
    return StepTime(a.flops + b.flops, a.bytes + b.bytes, a.compute_s + b.compute_s,
                    a.memory_s + b.memory_s, a.overhead_s + b.overhead_s,
                    busy_s=a.total_s - a.overhead_s + b.total_s - b.overhead_s)


def prefill_time_s(spec: ModelSpec, hardware: Hardware, n_tokens: int, weight_format: str = "f16",
                   batch: int = 1, efficiency: Efficiency = DEFAULT_EFFICIENCY,
                   kv_bytes_per_value: float | None = None) -> float:
    """Seconds to prefill ``n_tokens`` prompt tokens for each of ``batch`` sequences."""
    return prefill(spec, hardware, n_tokens, weight_format, batch, kv_bytes_per_value=kv_bytes_per_value,
                   efficiency=efficiency).total_s


def prefill_tokens_per_s(spec: ModelSpec, hardware: Hardware, n_tokens: int = 512, weight_format: str = "f16",
                         batch: int = 1, efficiency: Efficiency = DEFAULT_EFFICIENCY,
                         kv_bytes_per_value: float | None = None) -> float:
    """Prompt tokens processed per second (all sequences), like llama-bench's ``pp512``."""
    return batch * n_tokens / prefill_time_s(spec, hardware, n_tokens, weight_format, batch, efficiency,
                                             kv_bytes_per_value)


def ttft_s(spec: ModelSpec, hardware: Hardware, prompt_tokens: int, weight_format: str = "f16",
           batch: int = 1, efficiency: Efficiency = DEFAULT_EFFICIENCY) -> float:
    """Time to first token: the prefill of the prompt, whose last logits give the first token."""
    return prefill_time_s(spec, hardware, prompt_tokens, weight_format, batch, efficiency)


def generation(
    spec: ModelSpec,
    hardware: Hardware,
    prompt_tokens: int,
    new_tokens: int,
    weight_format: str = "f16",
    batch: int = 1,
    kv_bytes_per_value: float | None = None,
    efficiency: Efficiency = DEFAULT_EFFICIENCY,
) -> dict:
    """Latency of a whole request: ``ttft_s`` (prefill), ``decode_s`` (the other ``new_tokens - 1``
    tokens, each step reading a KV cache one token longer), ``total_s`` and the average
    ``decode_tokens_per_s`` per sequence. ``prompt_tokens=0`` times pure generation from an empty
    context (llama-bench's ``tg``), where every token is a decode step."""
    _nonneg_int(prompt_tokens, "prompt_tokens")
    if _nonneg_int(new_tokens, "new_tokens") == 0:
        raise ValueError("new_tokens must be >= 1")
    if prompt_tokens:
        first = ttft_s(spec, hardware, prompt_tokens, weight_format, batch, efficiency)
        contexts = range(prompt_tokens, prompt_tokens + new_tokens - 1)
    else:
        first = 0.0
        contexts = range(0, new_tokens)
    decode = sum(decode_step(spec, hardware, weight_format, c, batch, kv_bytes_per_value, efficiency).total_s
                 for c in contexts)
    n_steps = len(contexts)
    return {
        "ttft_s": first,
        "decode_s": decode,
        "total_s": first + decode,
        "decode_tokens_per_s": n_steps / decode if n_steps else math.nan,
        "new_tokens": new_tokens,
        "batch": batch,
    }
