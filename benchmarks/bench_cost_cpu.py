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

Why prefill is measured at about half the prediction (decode within 10 %): the prediction prices a
prompt as its FLOPs at the calibration matmul's rate (a hot 512x512x512 float32 product) plus the
per-layer overhead of the width-16 copy. The last lines of the output split the measured prefill:
the share spent inside the model's ``nn.Linear`` calls and the rate they reach there. When this was
written (es-base, 128 tokens, one thread) about two thirds of the prefill was inside the linears,
at about two thirds of the calibration rate (in a separate test the same shapes, 192-4096 wide, with
their weights cycled through 64 MB so that each call reads them cold, ran at about 0.7 of it),
and most of the rest was work the FLOP count does not carry at full width (attention's softmax,
RoPE, norms, SiLU, KV-cache writes, casts), beyond the dispatch cost the width-16 copy measures. Decode has neither problem: it is priced by the mat-vec bandwidth, measured
the way decode reads its weights. Not fixed in the prediction: a per-element term for that work
would be one more factor fitted on this machine's two models.

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


def prefill_breakdown(model, clock=CLOCK) -> dict:
    """One ``PROMPT``-token llmlab prefill: ``total_s``, ``linear_s`` (time inside the model's
    ``nn.Linear`` calls, from forward hooks) and ``linear_gflop_s`` (their FLOPs over that time)."""
    prompt = torch.randint(0, model.config.vocab_size, (1, PROMPT), generator=torch.Generator().manual_seed(0))
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    acc = {"s": 0.0, "flops": 0.0}
    starts = {}

    def pre(mod, inp):
        starts[mod] = clock()

    def post(mod, inp, out):
        acc["s"] += clock() - starts[mod]
        acc["flops"] += 2.0 * inp[0].numel() * mod.out_features

    with torch.no_grad():
        model(prompt, cache=model.new_cache())  # warm-up
        t0 = clock()
        model(prompt, cache=model.new_cache())
        total = clock() - t0
        hooks = [m.register_forward_pre_hook(pre) for m in linears] + [m.register_forward_hook(post) for m in linears]
        try:
            model(prompt, cache=model.new_cache())
        finally:
            for h in hooks:
                h.remove()
    return {"total_s": total, "linear_s": acc["s"], "linear_gflop_s": acc["flops"] / acc["s"] / 1e9}


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
    split = [prefill_breakdown(models["es-base"][0]) for _ in range(args.rounds)]
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
    share = statistics.median(b["linear_s"] / b["total_s"] for b in split)
    rate = statistics.median(b["linear_gflop_s"] for b in split)
    print(f"es-base llmlab prefill split: {share:.2f} of its time inside nn.Linear, which reach "
          f"{rate / (med['tflops'] * 1e3):.2f} of the calibration matmul's rate; the rest ({1 - share:.2f}) is "
          "attention, norms, activations, KV writes and dispatch")


if __name__ == "__main__":
    main()
