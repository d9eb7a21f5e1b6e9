"""Measure this machine, predict a model's speed with the roofline, measure the model, compare.

The lab-08 recipe:

1. ``cpu_hardware()`` measures the two numbers the roofline needs: matrix throughput (a large
   matmul, 2·n³ FLOPs) and memory bandwidth (summing a big array, which only reads). It returns
   a :class:`~llmlab.cost.hardware.Hardware`.
2. ``spec_from_llmlab(config)`` turns an ``llmlab.model.ModelConfig`` into a
   :class:`~llmlab.cost.spec.ModelSpec`, so the same formulas used for Llama-3 apply.
3. ``measure_llmlab_speed(model)`` times prefill and decode of the real model.
4. ``layer_overhead_s(config)`` times a tiny copy of the model (same depth, almost no width): what
   is left is the fixed Python/PyTorch cost per layer, the CPU analogue of a GPU's kernel-launch
   latency. It goes into ``Efficiency(layer_overhead_s=...)``.

5. ``measure_hf_speed(hf_model)`` and ``hf_layer_overhead_s(config)`` do the same for the
   transformers copy of a model (``llmlab.convert_hf.to_hf``), so both runtimes are predicted and
   measured on the same machine.

Timings use ``time.perf_counter`` (wall clock) by default and report the median of several
repeats. On a shared machine pass ``clock=time.process_time`` (CPU seconds of this process, which
other processes do not inflate; meaningful with one torch thread) and compare ratios measured in
the same run.
"""

from __future__ import annotations

import inspect
import os
import statistics
import time
from datetime import date

import torch

from .hardware import Hardware
from .spec import ModelSpec

__all__ = [
    "time_it",
    "measure_matmul_tflops",
    "measure_read_bandwidth_gb_s",
    "measure_matvec_bandwidth_gb_s",
    "cpu_hardware",
    "spec_from_llmlab",
    "measure_llmlab_speed",
    "layer_overhead_s",
    "measure_hf_speed",
    "hf_layer_overhead_s",
]


def time_it(fn, repeats: int = 5, warmup: int = 1, clock=time.perf_counter) -> float:
    """Median time of ``fn()`` in seconds over ``repeats`` runs, after ``warmup`` runs, read
    with ``clock`` (wall time by default; ``time.process_time`` for CPU time)."""
    if not callable(fn) or not callable(clock):
        raise TypeError("fn and clock must be callable")
    if not isinstance(repeats, int) or repeats < 1 or not isinstance(warmup, int) or warmup < 0:
        raise ValueError("repeats must be an int >= 1 and warmup an int >= 0")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def measure_matmul_tflops(n: int = 1024, dtype: torch.dtype = torch.float32, repeats: int = 5,
                          clock=time.perf_counter) -> float:
    """TFLOP/s of an ``n×n @ n×n`` matmul (2·n³ FLOPs), the compute roof for large batches."""
    if not isinstance(n, int) or n < 16:
        raise ValueError(f"n must be an int >= 16, got {n!r}")
    a = torch.randn(n, n, dtype=dtype)
    b = torch.randn(n, n, dtype=dtype)
    seconds = time_it(lambda: a @ b, repeats=repeats, clock=clock)
    return 2 * n**3 / seconds / 1e12


def measure_read_bandwidth_gb_s(size_mb: float = 256, repeats: int = 5, clock=time.perf_counter) -> float:
    """GB/s reading a ``size_mb`` MB float32 array once (``x.sum()``). Make it much larger than the
    last-level cache to measure DRAM; a small one measures the cache instead."""
    if not isinstance(size_mb, (int, float)) or size_mb <= 0:
        raise ValueError(f"size_mb must be > 0, got {size_mb!r}")
    n = max(1, int(size_mb * 1e6 / 4))
    x = torch.ones(n, dtype=torch.float32)
    seconds = time_it(lambda: x.sum(), repeats=repeats, clock=clock)
    return n * 4 / seconds / 1e9


def measure_matvec_bandwidth_gb_s(size_mb: float = 256, repeats: int = 5, clock=time.perf_counter) -> float:
    """GB/s of a matrix-vector product over a ``size_mb`` MB float32 matrix: exactly what batch-1
    decode does with every weight matrix."""
    if not isinstance(size_mb, (int, float)) or size_mb <= 0:
        raise ValueError(f"size_mb must be > 0, got {size_mb!r}")
    cols = 1024
    rows = max(1, int(size_mb * 1e6 / 4 / cols))
    w = torch.randn(rows, cols)
    v = torch.randn(cols)
    seconds = time_it(lambda: w @ v, repeats=repeats, clock=clock)
    return rows * cols * 4 / seconds / 1e9


def _memory_gb() -> float:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    except (ValueError, OSError, AttributeError):  # not available on every OS
        return 16.0


def cpu_hardware(name: str = "this-cpu", matmul_n: int = 1024, bandwidth_mb: float = 256,
                 repeats: int = 5) -> Hardware:
    """A :class:`Hardware` for this CPU from measurements (float32, the dtype CPUs compute in).

    ``fp16_tflops`` holds the measured float32 matmul throughput: it is the peak for the dtype
    the model will actually run in. Threads: whatever ``torch.get_num_threads()`` is now.
    """
    tflops = measure_matmul_tflops(matmul_n, repeats=repeats)
    bandwidth = measure_read_bandwidth_gb_s(bandwidth_mb, repeats=repeats)
    stamp = f"measured by llmlab.cost.calibrate on {date.today().isoformat()} with {torch.get_num_threads()} thread(s)"
    return Hardware(
        name=name, memory_gb=_memory_gb(), bandwidth_gb_s=bandwidth, fp16_tflops=tflops, kind="cpu",
        usable_memory_fraction=0.8, display_name=f"{name} ({torch.get_num_threads()} threads)",
        sources={"bandwidth_gb_s": f"x.sum() over {bandwidth_mb} MB float32, {stamp}",
                 "fp16_tflops": f"float32 {matmul_n}x{matmul_n} matmul, {stamp}",
                 "memory_gb": "os.sysconf physical pages"},
    )


def spec_from_llmlab(config, name: str = "llmlab-model") -> ModelSpec:
    """:class:`ModelSpec` of an ``llmlab.model.ModelConfig`` (same parameter count as the model)."""
    for attr in ("vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "head_dim", "d_ff", "mlp",
                 "norm", "bias", "tie_embeddings", "pos_encoding", "max_seq_len"):
        if not hasattr(config, attr):
            raise TypeError(f"config must be an llmlab.model.ModelConfig (missing {attr!r})")
    if config.norm == "layernorm" and not config.bias:
        raise ValueError("LayerNorm without bias is not representable in ModelSpec (it counts weight and bias)")
    return ModelSpec(
        name=name, model_type="llmlab", vocab_size=config.vocab_size, hidden_size=config.d_model,
        n_layers=config.n_layers, n_heads=config.n_heads, n_kv_heads=config.n_kv_heads,
        head_dim=config.head_dim, intermediate_size=config.d_ff, max_position_embeddings=config.max_seq_len,
        tie_word_embeddings=config.tie_embeddings, gated_mlp=config.mlp == "swiglu", qkv_bias=config.bias,
        o_bias=config.bias, mlp_bias=config.bias, norm=config.norm, norms_per_layer=2,
        learned_positions=config.max_seq_len if config.pos_encoding == "learned" else 0,
        qk_norm=getattr(config, "qk_norm", False), **_moe_fields(config),
    )


def _moe_fields(config) -> dict:
    """The MoE fields of ``ModelSpec`` for an llmlab config with ``n_experts > 0`` (else none)."""
    n_experts = getattr(config, "n_experts", 0)
    if not n_experts:
        return {}
    return dict(n_experts=n_experts, experts_per_token=config.n_experts_per_token,
                moe_intermediate_size=config.moe_d_ff, n_shared_experts=config.n_shared_experts,
                mlp_types=tuple("moe" if config.is_moe_layer(i) else "dense" for i in range(config.n_layers)))


@torch.inference_mode()
def measure_llmlab_speed(model, prompt_tokens: int = 256, decode_tokens: int = 64, repeats: int = 3,
                         clock=time.perf_counter) -> dict:
    """Time an ``llmlab.model.Transformer``: ``prefill_tokens_per_s`` (one forward pass over a
    ``prompt_tokens`` prompt, filling a KV cache) and ``decode_tokens_per_s`` (``decode_tokens``
    single-token steps after it). Medians over ``repeats`` runs, batch 1."""
    if not hasattr(model, "new_cache") or not hasattr(model, "config"):
        raise TypeError("model must be an llmlab.model.Transformer")
    if prompt_tokens + decode_tokens > model.config.max_seq_len:
        raise ValueError("prompt_tokens + decode_tokens exceeds the model's max_seq_len")
    model.eval()
    gen = torch.Generator().manual_seed(0)
    prompt = torch.randint(0, model.config.vocab_size, (1, prompt_tokens), generator=gen)
    steps = torch.randint(0, model.config.vocab_size, (decode_tokens, 1, 1), generator=gen)

    def run_prefill():
        cache = model.new_cache()
        model(prompt, cache=cache)
        return cache

    def run_decode():
        cache = run_prefill()
        t0 = clock()
        for tok in steps:
            model(tok, cache=cache)
        return clock() - t0

    prefill_s = time_it(run_prefill, repeats=repeats, clock=clock)
    run_decode()  # warm-up
    decode_s = statistics.median(run_decode() for _ in range(repeats))
    return {"prefill_tokens_per_s": prompt_tokens / prefill_s, "decode_tokens_per_s": decode_tokens / decode_s,
            "prefill_s": prefill_s, "decode_step_s": decode_s / decode_tokens,
            "prompt_tokens": prompt_tokens, "decode_tokens": decode_tokens}


@torch.inference_mode()
def layer_overhead_s(config, context: int = 256, steps: int = 64, repeats: int = 3, clock=time.perf_counter) -> float:
    """Fixed seconds per layer per decode step of an llmlab model, from a tiny copy of it (same
    depth and design, width 16, vocabulary 64): its arithmetic and memory traffic are negligible,
    so what remains is Python and PyTorch dispatch. Includes the per-step cost outside the layers,
    spread over them."""
    model = _tiny_copy(config, context + steps)
    speed = measure_llmlab_speed(model, prompt_tokens=context, decode_tokens=steps, repeats=repeats, clock=clock)
    return speed["decode_step_s"] / config.n_layers


def _tiny_copy(config, max_seq_len: int):
    """Same depth and design, width 16, vocabulary 64: only the fixed costs are left."""
    from llmlab.model import ModelConfig, Transformer  # lazy: only calibration needs the model

    tiny = config.to_dict()
    tiny.update(vocab_size=64, d_model=16, n_heads=2, n_kv_heads=1 if config.n_kv_heads < config.n_heads else 2,
                head_dim=None, d_ff=None, max_seq_len=max(max_seq_len, 8))
    return Transformer(ModelConfig.from_dict(tiny))


@torch.inference_mode()
def measure_hf_speed(hf_model, prompt_tokens: int = 256, decode_tokens: int = 64, repeats: int = 3,
                     clock=time.perf_counter) -> dict:
    """Time a transformers causal LM like :func:`measure_llmlab_speed`: one forward pass over the
    prompt with ``use_cache=True``, then ``decode_tokens`` single-token steps on its
    ``past_key_values``. Medians over ``repeats`` runs, batch 1."""
    if not hasattr(hf_model, "config") or not hasattr(hf_model.config, "vocab_size"):
        raise TypeError("hf_model must be a transformers PreTrainedModel")
    limit = getattr(hf_model.config, "max_position_embeddings", None)
    if limit is not None and prompt_tokens + decode_tokens > limit:
        raise ValueError("prompt_tokens + decode_tokens exceeds the model's max_position_embeddings")
    hf_model.eval()
    gen = torch.Generator().manual_seed(0)
    vocab = hf_model.config.vocab_size
    prompt = torch.randint(0, vocab, (1, prompt_tokens), generator=gen)
    steps = torch.randint(0, vocab, (decode_tokens, 1, 1), generator=gen)

    # transformers renamed ``past_key_values`` to ``cache`` (5.x); use whichever forward takes
    key = "cache" if "cache" in inspect.signature(hf_model.forward).parameters else "past_key_values"

    def run_prefill():
        return getattr(hf_model(prompt, use_cache=True), key)

    def run_decode():
        past = run_prefill()
        t0 = clock()
        for tok in steps:
            past = getattr(hf_model(tok, use_cache=True, **{key: past}), key)
        return clock() - t0

    prefill_s = time_it(run_prefill, repeats=repeats, clock=clock)
    run_decode()  # warm-up
    decode_s = statistics.median(run_decode() for _ in range(repeats))
    return {"prefill_tokens_per_s": prompt_tokens / prefill_s, "decode_tokens_per_s": decode_tokens / decode_s,
            "prefill_s": prefill_s, "decode_step_s": decode_s / decode_tokens,
            "prompt_tokens": prompt_tokens, "decode_tokens": decode_tokens}


def hf_layer_overhead_s(config, context: int = 256, steps: int = 64, repeats: int = 3, clock=time.perf_counter) -> float:
    """:func:`layer_overhead_s` for transformers: the tiny copy exported with ``to_hf`` and timed
    with :func:`measure_hf_speed` (its Python and module overhead per layer and decode step)."""
    from llmlab.convert_hf import to_hf  # lazy: needs transformers

    hf = to_hf(_tiny_copy(config, context + steps))
    speed = measure_hf_speed(hf, prompt_tokens=context, decode_tokens=steps, repeats=repeats, clock=clock)
    return speed["decode_step_s"] / config.n_layers
