"""Fit the roofline's efficiency factors on published llama.cpp measurements and report the error.

    python benchmarks/fit_efficiency.py

1. Fit ``bandwidth`` + ``layer_overhead_cycles`` (decode rows) and ``compute`` (prefill rows) on
   the LLaMA-2 table of serving-facts §2b (XiongjieDai/GPU-Benchmarks-on-LLM-Inference, Dec 2023).
2. Print every row: measured, predicted, error; MAPE and worst case per kind.
3. Leave-one-GPU-out: refit without each GPU and predict it, an honest estimate of the error on
   a GPU the fit has not seen.
4. Predict the later LLaMA-3-8B table (May 2024, other model, Q4_K_M, tg512) without refitting.
5. Compare with the ideal roofline (no efficiency factors), which public calculators use.

No timing here: the numbers are arithmetic on published tables, so the output is deterministic.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from llmlab.cost import LLAMA_CPP_CUDA_2023_12, Efficiency  # noqa: E402
from llmlab.cost.fit import fit_efficiency, score_efficiency  # noqa: E402
from llmlab.cost.measured import LLAMA2_NVIDIA, LLAMA3_NVIDIA  # noqa: E402


def print_rows(report: dict, title: str) -> None:
    print(f"\n{title}")
    print(f"  {'GPU':<15} {'model':<12} {'kind':<8} {'format':<7} {'measured':>10} {'predicted':>10} {'error':>8}")
    for r in report["rows"]:
        m = r["measurement"]
        print(f"  {m.hardware:<15} {m.model:<12} {m.kind:<8} {m.weight_format:<7} {m.tokens_per_s:>10.1f} "
              f"{r['predicted']:>10.1f} {r['error_pct']:>+7.1f}%")
    print_summary(report)


def print_summary(report: dict, indent: str = "  ") -> None:
    for kind in ("decode", "prefill", "all"):
        s = report[kind]
        if s is None:
            continue
        w = s["worst"]["measurement"]
        print(f"{indent}{kind:<8} n={s['n']:>2}  MAPE {s['mape']:5.1f} %   worst {s['worst_pct']:+6.1f} % "
              f"({w.hardware} {w.model} {w.weight_format})   geometric-mean ratio {s['geo_mean_ratio']:.3f}")


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    fitted, report = fit_efficiency(LLAMA2_NVIDIA)
    print("Fitted on serving-facts §2b, LLaMA-2 table (27 points):")
    print(f"  bandwidth efficiency   η_bw = {fitted.bandwidth}")
    print(f"  compute efficiency     η_f  = {fitted.compute}   (of the fp16-accumulate tensor peak)")
    print(f"  per-layer overhead          = {fitted.layer_overhead_cycles:,.0f} cycles "
          f"(= {fitted.layer_overhead_cycles / 1.41e9 * 1e6:.0f} µs per layer on an A100 at 1.41 GHz)")
    same = (abs(fitted.bandwidth - LLAMA_CPP_CUDA_2023_12.bandwidth) < 0.005
            and abs(fitted.compute - LLAMA_CPP_CUDA_2023_12.compute) < 0.005
            and abs(fitted.layer_overhead_cycles - LLAMA_CPP_CUDA_2023_12.layer_overhead_cycles)
            <= 0.02 * LLAMA_CPP_CUDA_2023_12.layer_overhead_cycles)
    print(f"  LLAMA_CPP_CUDA_2023_12 in llmlab/cost/speed.py {'matches' if same else 'DIFFERS from'} this fit")
    print_rows(report, "Fit table (measured vs predicted tokens/s):")

    print("\nLeave-one-GPU-out (refit without the GPU, then predict it):")
    gpus = sorted({m.hardware for m in LLAMA2_NVIDIA})
    held_rows = []
    for gpu in gpus:
        train = [m for m in LLAMA2_NVIDIA if m.hardware != gpu]
        eff, _ = fit_efficiency(train)
        held = score_efficiency([m for m in LLAMA2_NVIDIA if m.hardware == gpu], eff)
        held_rows += held["rows"]
        print(f"  {gpu:<15} η_bw {eff.bandwidth:.3f}  η_f {eff.compute:.3f}  cycles {eff.layer_overhead_cycles:>9,.0f}"
              f"   decode MAPE {held['decode']['mape']:5.1f} %   prefill MAPE {held['prefill']['mape']:5.1f} %")
    dec = [abs(r["error_pct"]) for r in held_rows if r["measurement"].kind == "decode"]
    pre = [abs(r["error_pct"]) for r in held_rows if r["measurement"].kind == "prefill"]
    print(f"  held-out decode  MAPE {sum(dec) / len(dec):5.1f} %  worst {max(dec):5.1f} %")
    print(f"  held-out prefill MAPE {sum(pre) / len(pre):5.1f} %  worst {max(pre):5.1f} %")

    print_rows(score_efficiency(LLAMA3_NVIDIA, fitted),
               "Out of sample: LLaMA-3-8B table (May 2024 llama.cpp, Q4_K_M/F16, tg512/pp512), no refit:")

    ideal = replace(Efficiency(), accumulate="fp16")
    print("\nIdeal roofline (η = 1, no overhead), as public calculators do, on the fit table:")
    print_summary(score_efficiency(LLAMA2_NVIDIA, ideal))


if __name__ == "__main__":
    main()
