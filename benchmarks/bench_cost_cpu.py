"""This machine as a data point: predicted vs measured prefill and decode of the shipped models,
run by llmlab and by transformers, on this CPU.

    python benchmarks/bench_cost_cpu.py [--rounds 5] [--threads 1]

For ``es-base`` and ``es-chat`` (the shipped models) and for two runtimes (llmlab's own
``Transformer`` and its transformers export, ``llmlab.convert_hf.to_hf``):

1. measure this CPU: float32 matmul throughput and memory read bandwidth -> a ``Hardware``;
2. measure each runtime's fixed cost per layer and decode step on a tiny copy of the model (same
   depth, width 16): the CPU counterpart of a GPU's kernel-launch latency;
3. predict prefill (a PROMPT-token prompt, all logits computed, as a plain forward does) and
   decode (DECODE steps after it) with the roofline + that overhead;
4. measure both, and print measured/predicted and the transformers/llmlab ratios, measured and
   predicted.

The machine is shared (when this was written: 2 cores for 7 workers). So every timing is CPU time
of this process (``time.process_time``) with one torch thread, which other processes do not
inflate, and every quantity is measured in interleaved rounds and reported as the median of the
rounds. Absolute numbers still vary between machines and runs; the ratios are the result.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from llmlab import pretrained  # noqa: E402
from llmlab.convert_hf import to_hf  # noqa: E402
from llmlab.cost import Efficiency, Hardware, generation, prefill_tokens_per_s  # noqa: E402
from llmlab.cost import calibrate as cal  # noqa: E402

PROMPT, DECODE = 128, 64
CLOCK = time.process_time


def measure_round(models: dict) -> dict:
    """One interleaved round: the machine, then every model and runtime."""
    out = {"tflops": cal.measure_matmul_tflops(512, repeats=3, clock=CLOCK),
           "bw": cal.measure_read_bandwidth_gb_s(128, repeats=3, clock=CLOCK),
           "matvec": cal.measure_matvec_bandwidth_gb_s(128, repeats=3, clock=CLOCK)}
    for name, (model, hf) in models.items():
        llm = cal.measure_llmlab_speed(model, PROMPT, DECODE, repeats=1, clock=CLOCK)
        hfs = cal.measure_hf_speed(hf, PROMPT, DECODE, repeats=1, clock=CLOCK)
        out[name] = {
            ("llmlab", "prefill"): llm["prefill_tokens_per_s"], ("llmlab", "decode"): llm["decode_tokens_per_s"],
            ("transformers", "prefill"): hfs["prefill_tokens_per_s"], ("transformers", "decode"): hfs["decode_tokens_per_s"],
            ("llmlab", "overhead"): cal.layer_overhead_s(model.config, PROMPT, DECODE, repeats=1, clock=CLOCK),
            ("transformers", "overhead"): cal.hf_layer_overhead_s(model.config, PROMPT, DECODE, repeats=1, clock=CLOCK),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    models = {}
    for name in ("es-base", "es-chat"):
        model, _ = pretrained.load(name)
        models[name] = (model.eval(), to_hf(model))

    rounds = [measure_round(models) for _ in range(args.rounds)]
    med = {k: statistics.median(r[k] for r in rounds) for k in ("tflops", "bw", "matvec")}
    for name in models:
        med[name] = {k: statistics.median(r[name][k] for r in rounds) for k in rounds[0][name]}
    cpu = Hardware("this-cpu", memory_gb=16, bandwidth_gb_s=med["bw"], fp16_tflops=med["tflops"], kind="cpu")
    # the bandwidth a matrix-vector product reaches: the honest roof for batch-1 decode
    cpu_mv = Hardware("this-cpu-matvec", memory_gb=16, bandwidth_gb_s=med["matvec"], fp16_tflops=med["tflops"], kind="cpu")

    print(f"This CPU, {args.threads} torch thread(s), CPU time, median of {args.rounds} interleaved rounds "
          f"(shared machine): matmul {med['tflops'] * 1e3:.1f} GFLOP/s float32, read bandwidth {med['bw']:.1f} GB/s, "
          f"mat-vec bandwidth {med['matvec']:.1f} GB/s")
    print(f"Prefill: {PROMPT}-token prompt; decode: {DECODE} steps after it; batch 1; float32.\n")
    print(f"{'model':<8} {'runtime':<13} {'phase':<8} {'overhead/layer':>15} {'predicted':>10} {'measured':>10} "
          f"{'measured/predicted':>19} {'(mat-vec roof)':>15}")
    for name, (model, _) in models.items():
        spec = cal.spec_from_llmlab(model.config, name)
        pred = {}
        for runtime in ("llmlab", "transformers"):
            ov = med[name][(runtime, "overhead")]
            eff = Efficiency(layer_overhead_s=ov, ubatch=PROMPT, prefill_logits="all", name=runtime)
            pred[(runtime, "prefill")] = prefill_tokens_per_s(spec, cpu, PROMPT, "fp32", efficiency=eff)
            pred[(runtime, "decode")] = generation(spec, cpu, PROMPT, DECODE + 1, "fp32", efficiency=eff)["decode_tokens_per_s"]
            mv = {"prefill": prefill_tokens_per_s(spec, cpu_mv, PROMPT, "fp32", efficiency=eff),
                  "decode": generation(spec, cpu_mv, PROMPT, DECODE + 1, "fp32", efficiency=eff)["decode_tokens_per_s"]}
            for phase in ("prefill", "decode"):
                m, p = med[name][(runtime, phase)], pred[(runtime, phase)]
                print(f"{name:<8} {runtime:<13} {phase:<8} {ov * 1e6:>12.0f} µs {p:>10.0f} {m:>10.0f} {m / p:>19.2f} "
                      f"{m / mv[phase]:>15.2f}")
        for phase in ("prefill", "decode"):
            m = med[name][("transformers", phase)] / med[name][("llmlab", phase)]
            p = pred[("transformers", phase)] / pred[("llmlab", phase)]
            print(f"{name:<8} transformers/llmlab {phase:<8} measured {m:.2f}  predicted {p:.2f}")
        print()


if __name__ == "__main__":
    main()
