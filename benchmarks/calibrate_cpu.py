"""Calibrate the roofline on this CPU and check it against an llmlab model's real speed.

    python benchmarks/calibrate_cpu.py [--quick] [--threads 1]

In one process, with interleaved repeats (median of each):

1. measure this CPU: float32 matmul throughput and memory read bandwidth -> a ``Hardware``;
2. time an ``llmlab.model`` Llama-style model (vocab 4096, d_model 256, 6 layers, GQA 8/4 heads,
   about 6.5 M parameters): prefill of a 256-token prompt and 64 decode steps after it;
3. time a tiny copy of the model (same depth, width 16): the fixed cost per layer;
4. predict prefill and decode tokens/s from the roofline, first ideal (η = 1, no overhead),
   then with the measured per-layer overhead, then also with the bandwidth a matrix-vector
   product reaches instead of a plain read; print predicted vs measured and their ratio;
5. print the efficiency factors that would make the roofline match this machine (the lab-08
   exercise: they are what ``Efficiency`` needs for this CPU and PyTorch).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from llmlab.cost import Efficiency, Hardware, decode_step, generation, prefill  # noqa: E402
from llmlab.cost.calibrate import (  # noqa: E402
    layer_overhead_s,
    measure_llmlab_speed,
    measure_matmul_tflops,
    measure_matvec_bandwidth_gb_s,
    measure_read_bandwidth_gb_s,
    spec_from_llmlab,
)
from llmlab.model import ModelConfig, Transformer, count_parameters  # noqa: E402

PROMPT, DECODE = 256, 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a smaller bandwidth array")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: stable on a shared machine)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rounds = 3 if args.quick else 5
    bw_mb = 128 if args.quick else 256

    config = ModelConfig.llama_style(vocab_size=4096, d_model=256, n_layers=6, n_heads=8, n_kv_heads=4,
                                     max_seq_len=1024)
    model = Transformer(config).eval()
    spec = spec_from_llmlab(config, name="llmlab llama-style 6x256")
    assert spec.param_count() == count_parameters(model), "ModelSpec disagrees with the model's parameter count"
    weights_mb = 4 * spec.param_count() / 1e6

    samples = {k: [] for k in ("tflops", "bw", "matvec", "prefill", "decode", "overhead")}
    for _ in range(rounds):  # interleaved: every quantity sees the same machine load
        samples["tflops"].append(measure_matmul_tflops(1024, repeats=3))
        samples["bw"].append(measure_read_bandwidth_gb_s(bw_mb, repeats=3))
        samples["matvec"].append(measure_matvec_bandwidth_gb_s(bw_mb, repeats=3))
        speed = measure_llmlab_speed(model, PROMPT, DECODE, repeats=1)
        samples["prefill"].append(speed["prefill_tokens_per_s"])
        samples["decode"].append(speed["decode_tokens_per_s"])
        samples["overhead"].append(layer_overhead_s(config, context=PROMPT, steps=DECODE, repeats=1))
    med = {k: statistics.median(v) for k, v in samples.items()}

    cpu = Hardware("this-cpu", memory_gb=16, bandwidth_gb_s=med["bw"], fp16_tflops=med["tflops"], kind="cpu",
                   display_name=f"this CPU, {args.threads} thread(s)")
    ideal = Efficiency(ubatch=PROMPT, prefill_logits="all", name="ideal roofline")
    with_overhead = replace(ideal, layer_overhead_s=med["overhead"], name="roofline + measured overhead")

    # The bandwidth a matrix-vector product actually reaches is the honest roof for batch-1 decode.
    cpu_matvec = replace(cpu, bandwidth_gb_s=med["matvec"])

    def predict(eff, hw=cpu):
        pre = prefill(spec, hw, PROMPT, "fp32", efficiency=eff)
        dec = generation(spec, hw, PROMPT, DECODE + 1, "fp32", efficiency=eff)
        return PROMPT / pre.total_s, dec["decode_tokens_per_s"]

    print(f"Model: {spec.name}, {spec.param_count():,} parameters ({weights_mb:.1f} MB in float32), "
          f"prompt {PROMPT}, {DECODE} decode steps, batch 1, {args.threads} thread(s), median of {rounds} rounds")
    print(f"Machine: matmul {med['tflops'] * 1e3:.1f} GFLOP/s (float32, 1024x1024)   "
          f"read bandwidth {med['bw']:.1f} GB/s ({bw_mb} MB array)   "
          f"mat-vec bandwidth {med['matvec']:.1f} GB/s   per-layer overhead {med['overhead'] * 1e6:.0f} µs")
    print()
    print(f"{'quantity':<14} {'model':<30} {'predicted':>10} {'measured':>10} {'measured/predicted':>19}")
    rows = [(ideal.name, ideal, cpu), (with_overhead.name, with_overhead, cpu),
            ("same, mat-vec bandwidth", with_overhead, cpu_matvec)]
    for label, eff, hw in rows:
        p_pre, p_dec = predict(eff, hw)
        print(f"{'prefill tok/s':<14} {label:<30} {p_pre:>10.0f} {med['prefill']:>10.0f} {med['prefill'] / p_pre:>19.2f}")
        print(f"{'decode tok/s':<14} {label:<30} {p_dec:>10.1f} {med['decode']:>10.1f} {med['decode'] / p_dec:>19.2f}")

    # The factors that close the gap, with the overhead kept: the calibrated Efficiency for this CPU.
    step = decode_step(spec, cpu, "fp32", PROMPT + DECODE // 2, efficiency=with_overhead)
    busy = 1 / med["decode"] - step.overhead_s
    eta_bw = step.memory_s / busy if busy > 0 else float("nan")
    pre = prefill(spec, cpu, PROMPT, "fp32", efficiency=with_overhead)
    eta_f = pre.compute_s / (PROMPT / med["prefill"] - pre.overhead_s)
    print()
    print(f"Decode step at context {PROMPT + DECODE // 2}: {step.bytes / 1e6:.1f} MB read, {step.flops / 1e6:.1f} MFLOP, "
          f"intensity {step.arithmetic_intensity:.2f} FLOP/B -> {step.bound}-bound")
    print(f"Calibrated for this CPU: Efficiency(bandwidth={eta_bw:.2f}, compute={eta_f:.2f}, "
          f"layer_overhead_s={med['overhead']:.2e}, prefill_logits='all')")


if __name__ == "__main__":
    main()
