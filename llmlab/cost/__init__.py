"""Serving-cost models: parameters, memory, speed and price of running a language model.

The package goes from chapter 01's back-of-the-envelope formulas to models exact for real
architectures, one idea per module:

- ``basics``: the textbook formulas (12·L·d², N·bytes, 2·L·n·d·B for the KV cache, "does it fit?").
- ``spec``: ``ModelSpec``, a real architecture read from its ``config.json``; exact parameter
  counts (equal to the Hugging Face model's), active parameters of an MoE (Mixtral, Qwen3-MoE,
  DeepSeek-V3 with latent attention and shared experts, gpt-oss), KV bytes, FLOPs.
- ``formats``: bits per weight of fp16, int8, llama.cpp Q8_0/Q4_0, GPTQ 4-bit, per tensor kind.
- ``hardware`` and ``catalog``: ``Hardware`` and the shipped catalogs of models and devices,
  every number with its source.
- ``memory``: weight memory per format and ``fit_check`` with its breakdown.
- ``speed``: the roofline with explicit efficiency factors: prefill, decode, TTFT, latency.
- ``serving``: chapter 07's serving budget, batching, shared capacity and cost per token.
- ``simulate``: static vs continuous batching, contiguous vs paged KV, speculative decoding.
- ``measured``, ``fit``, ``calibrate``: published measurements, fitting the efficiency factors,
  and measuring this machine (lab 08; ``benchmarks/bench_cost_cpu.py`` for llmlab and transformers).
- ``profiles``: the efficiency factors per **runtime and version** (llama.cpp by build era, Ollama =
  its llama.cpp, vLLM, MLX, transformers) and hardware family, fitted on the published tables of
  ``data/throughput.json``; every prediction carries its **band**, the profile's held-out error.
  The default is the newest profile; the older ones stay for comparison.

Held-out error of the profiles (median / 90th percentile of |predicted/measured - 1|, in %; from
``python -m llmlab.cost.profiles``; LODO = leave one device out, LORO = leave one row out):

=========================  ========  ==============  ==============  ==========================
profile                    family    decode          prefill         validation
=========================  ========  ==============  ==============  ==========================
llama.cpp 2025-08 (new)    nvidia    4.2 / 9.8       10.6 / 16.3     LODO, 6 GPUs incl. A100, H100
llama.cpp 2024-05          nvidia    2.6 / 9.1       10.9 / 16.2     LODO, 5 GeForce cards
llama.cpp 2023-12          nvidia    5.3 / 16.5      23.5 / 96.2     LODO, 6 GPUs
llama.cpp 2024-05 (new)    apple     8.9 / 16.9      8.5 / 10.1      LODO, M1/M1 Max/M2 Ultra/M3 Max
llama.cpp 2023-12          apple     3.7 / 6.8       12.3 / 17.2     LODO, M2 Ultra/M3 Max
mlx 2024-12                apple     0.3 / 0.4       10.1 / 10.5     LORO, one machine, one model
transformers 2024-01       nvidia    5.8 / 5.9       (none found)    LORO, one A100, 2 rows
vllm 2026-05 (new)         nvidia    8.4 / 11.9      (none found)    LODO, H100/A100 40GB/4090, 3 rows
vllm 2024-01               nvidia    (no band)       (no data)       one row (fewer than 3)
=========================  ========  ==============  ==============  ==========================

``DEFAULT_EFFICIENCY`` (every speed function's default) is the newest llama.cpp NVIDIA profile, read
from ``data/profiles.json``; the first fit (December 2023) stays as ``LLAMA_CPP_CUDA_2023_12``.

Tables the profiles were not fitted on (median |error| decode / prefill, %): the 2025 table
(llama.cpp discussion #15013, August 2025, six GPUs from RTX 3060 to H100) is missed by the older
builds: 13.3 / 27.3 by the 2024-05 profile, 26.8 / 30.9 by a fit on both older tables; the 2025
profile predicts the May 2024 table with 10.2 / 15.8. The check table set aside (llama.cpp PR #4766,
January 2024, RTX 3090/4090, never fitted on): 6.4 / 8.0 with the 2024-05 profile, 4.4 / 33.3 with
the 2023-12 one, 18.5 / 45.6 with the 2025-08 one (built for the newer MMQ kernels, see
``profiles``).

transformers' profile models batch-1 eager ``generate`` as host-bound: its per-layer overhead is
host time that overlaps the GPU's queued kernels (``Efficiency.overhead_overlaps``: a step is
max(device, host)), because premAI's float32 row is only 6 % slower than the float16 one while it
reads twice the bytes; with the overhead added to the memory time instead (the earlier model) the
held-out error was 27.1 / 33.2. Two rows on one A100 are weak evidence: the band is from them only,
and a later premAI table (Mistral-7B on the same A100, CUDA 12.1; a check, never fitted on) is missed by
17.7 % median (predicted faster than measured), more than the band says.

vLLM 2026-05 (vLLM 0.21-0.25, V1 engine) is fitted on three independent concurrency-1 tables, one GPU
each: H100 SXM (Llama-3.1-8B fp16, 0.21.0), A100 40GB (Llama-3.1-8B bf16, 0.23.0, a rounded "about 75
tokens/s") and RTX 4090 (Qwen2.5-7B bf16, 0.25.1); bandwidth and per-layer overhead fitted across the GPUs
as for llama.cpp 2025-08 (0.946, 117 000 cycles/layer). Its leave-one-device-out decode error is 8.4 / 11.9
on three rows only (a bandwidth-only fit, tried first, gave 15.6 % median: the fraction of the
bandwidth reached falls from the RTX 4090 to the H100, as a fixed per-layer time does on faster GPUs).
The one-row 2024-01 profile predicts those tables 15.7 % (H100, too slow), 6.8 % and 4.8 % off.
Neither version has a prefill row, nor has transformers: no time-to-first-token with a known prompt
length, at concurrency 1 on a catalogue GPU and model, was found in two searches (the second, in December
2026, went through vLLM issues and PRs, benchmark repositories, blogs and Hugging Face benchmark datasets:
what it found was batched, tensor-parallel, on other accelerators, for models outside the catalogue, or
cut off before its numbers). The sources looked at, used or rejected with the reason, are
``profiles.examined_sources()`` (``data/throughput.json``).

Two structural terms come from reading the tables, each tested (``tests/test_cost_profiles.py``):
llama.cpp's quantised CUDA prefill since its MMQ kernels (PR #8075, June 2024) scales with SM count
x clock, not with the tensor peak (on the 2025 table the achieved rate per SM-cycle varies by less
than 1.4x across GeForce and data-centre GPUs, per tensor peak by more than 3x); Metal decode of
quantised weights also pays the vector ALUs' unpacking work, which makes the M1 Max's Q4_K_M decode
ALU-bound (under half its bandwidth, while its fp16 decode reaches 70 %). With the M1 Max as the only
chip of its generation that cost could not be known when the M1 Max was held out (Apple 2024-05 decode:
11.7 / 22.1); the same table also measured the 7-core-GPU M1 (8 GB), the smallest chip and the second
of that generation, and with its row the held-out error is 8.9 / 16.9 (9.5 % median on the ten rows
without it; the M1 itself is predicted within 10 % when held out).

Units everywhere: bytes; ``GB = 1e9``, ``GiB = 2**30``; seconds; tokens/s.
"""

from .basics import (
    BYTES_PER_PARAM,
    GB,
    GiB,
    MiB,
    attention_cost,
    attention_flops,
    choose_model,
    fits_on_gpu,
    flops_per_token_ratio,
    inference_memory_gb,
    kv_cache_bytes,
    linear_param_count,
    mlp_param_count,
    moe_active_fraction,
    moe_weights_and_flops,
    param_breakdown,
    transformer_param_estimate,
    weight_memory,
)
from .catalog import get_hardware, get_model, hardware_entry, load_hardware_catalog, load_model_catalog, model_entry
from .formats import WEIGHT_FORMATS, WeightFormat, get_weight_format
from .hardware import Hardware
from .memory import FitReport, fit_check, max_batch, weight_bytes, weight_memory_table
from .serving import (
    api_cost,
    batched_decode,
    batching_curve,
    choose_deployment,
    cost_per_million_tokens,
    energy_per_token_j,
    kv_bytes,
    kv_bytes_per_token,
    kv_gib_for_context,
    kv_mib_per_token,
    latency_percentiles,
    latency_with_users,
    max_concurrent_sequences,
    serving_memory_gb,
    shared_latency_s,
    total_latency_s,
    weight_memory_gb,
)
from .simulate import (
    BatchingResult,
    KVAllocationResult,
    expected_tokens_per_pass,
    optimal_draft_length,
    paged_kv_usage,
    random_requests,
    simulate_batching,
    simulate_kv_allocation,
    simulate_speculative,
    speculative_speedup,
    vllm_block_bytes,
    vllm_num_blocks,
)
from . import profiles
from .profiles import Prediction, Profile, get_profile, predict_request, predict_speed, software_change
from .spec import SLIDING_CONVENTIONS, SUPPORTED_MODEL_TYPES, ModelSpec
from .speed import (
    DEFAULT_EFFICIENCY,
    IDEAL,
    LLAMA_CPP_CUDA_2023_12,
    Efficiency,
    StepTime,
    arithmetic_intensity,
    attainable_tflops,
    decode_step,
    decode_tokens_per_s,
    expected_experts_touched,
    generation,
    prefill,
    prefill_time_s,
    prefill_tokens_per_s,
    roofline_time,
    ttft_s,
)

__all__ = [
    # chapter 01 basics
    "GB", "GiB", "MiB", "BYTES_PER_PARAM", "linear_param_count", "transformer_param_estimate",
    "param_breakdown", "mlp_param_count", "weight_memory", "kv_cache_bytes", "inference_memory_gb",
    "fits_on_gpu", "moe_active_fraction", "moe_weights_and_flops", "flops_per_token_ratio", "choose_model", "attention_cost",
    "attention_flops",
    # real architectures, formats, hardware, catalogs
    "ModelSpec", "SUPPORTED_MODEL_TYPES", "SLIDING_CONVENTIONS", "WeightFormat", "WEIGHT_FORMATS",
    "get_weight_format", "Hardware", "load_model_catalog", "load_hardware_catalog", "get_model",
    "get_hardware", "model_entry", "hardware_entry",
    # memory
    "weight_bytes", "weight_memory_table", "FitReport", "fit_check", "max_batch",
    # speed
    "Efficiency", "IDEAL", "DEFAULT_EFFICIENCY", "LLAMA_CPP_CUDA_2023_12", "StepTime", "arithmetic_intensity", "roofline_time",
    "attainable_tflops", "expected_experts_touched", "decode_step", "decode_tokens_per_s", "prefill",
    "prefill_time_s", "prefill_tokens_per_s", "ttft_s", "generation",
    # runtime profiles (runtime, version, hardware family) with their held-out bands
    "profiles", "Profile", "Prediction", "get_profile", "predict_speed", "predict_request", "software_change",
    # serving
    "kv_bytes", "kv_bytes_per_token", "kv_mib_per_token", "kv_gib_for_context", "weight_memory_gb",
    "serving_memory_gb", "max_concurrent_sequences", "total_latency_s", "shared_latency_s",
    "latency_percentiles", "batched_decode", "batching_curve", "latency_with_users",
    "cost_per_million_tokens", "api_cost", "energy_per_token_j", "choose_deployment",
    # simulators
    "BatchingResult", "simulate_batching", "random_requests", "paged_kv_usage", "KVAllocationResult",
    "simulate_kv_allocation", "vllm_block_bytes", "vllm_num_blocks", "expected_tokens_per_pass",
    "speculative_speedup", "optimal_draft_length", "simulate_speculative",
]
