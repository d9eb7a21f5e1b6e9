"""Load balancing in a tiny mixture of experts: with and without the auxiliary loss, and the dense twin.

    nice -n 10 python benchmarks/moe_load_balance.py [--steps N | --quick] [--seeds S ...] [--out PATH] [--threads N]

Trains the runs of ``llmlab.moe_balance`` (MoE without aux loss, with the aux loss at Switch's 0.01 and
at 0.1, and the dense model of the same active size) from the same seed on the course corpus, once per seed of
``--seeds`` (default 0 1 2), prints a table of the first seed (validation loss,
busiest expert's share on the validation text and during training, wall time, parameters) and
the spread over the seeds, and writes the results as JSON, by default to ``llmlab/data/moe_load_balance.json``, which lab 05 plots.
The settings are ``llmlab.moe_balance.DEFAULTS``; ``--steps`` shortens the run for a quick look
(``--out`` then keeps the shipped file untouched); ``--quick`` (``make bench``) trains 20 steps.

Training wall times are measured on whatever else runs on the machine; the "step" columns time one
training step of the trained models taking turns (median of several), which is the comparison
that survives a busy machine.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import torch

from llmlab.moe_balance import DEFAULTS, RESULTS_FILE, RUNS, SEEDS, run_seeds, seed_spread

DEFAULT_OUT = pathlib.Path(__file__).resolve().parents[1] / "llmlab" / "data" / RESULTS_FILE


def _table(results: dict) -> str:
    rows = ["| run | val loss | max share (val) | max share (train windows) | train seconds | step (ms, side by side) "
            "| step / dense | params | active params |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name in RUNS:
        r = results["runs"][name]
        share = f"{r['max_share']:.3f}" if "max_share" in r else "—"
        train_share = f"{r['max_share_during_training']:.3f}" if "max_share_during_training" in r else "—"
        rows.append(f"| {name} | {r['val_loss']:.4f} | {share} | {train_share} | {r['seconds']:.1f} | "
                    f"{1000 * r['step_seconds']:.1f} | {r['step_vs_dense']:.2f} | {r['params']:,} | {r['active_params']:,} |")
    return "\n".join(rows)


def _spread_table(results: dict) -> str:
    spread = seed_spread(results)
    seeds = [entry["seed"] for entry in results["per_seed"]]
    rows = [f"over seeds {seeds}: mean (min-max)", "| run | val loss | max share (val) |", "|---|---:|---:|"]
    for name in RUNS:
        cells = []
        for key in ("val_loss", "max_share"):
            m = spread[name].get(key)
            cells.append(f"{m['mean']:.3f} ({m['min']:.3f}-{m['max']:.3f})" if m else "—")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=DEFAULTS["steps"])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="seeds, the first one's run in full")
    parser.add_argument("--out", type=pathlib.Path, default=None, help=f"JSON output (default {DEFAULT_OUT})")
    # One thread: these models are tiny (a second thread gains little and spins on a busy machine).
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="20 steps, nothing written (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps = 20
    torch.set_num_threads(args.threads)
    shipped = args.steps == DEFAULTS["steps"] and args.seeds == list(SEEDS)
    out = args.out or (DEFAULT_OUT if shipped else None)

    def progress(name, step, loss):
        print(f"  {name:<11} step {step:>5}  train loss {loss:.3f}", file=sys.stderr, flush=True)

    results = run_seeds(args.seeds, progress=progress, steps=args.steps)
    results["command"] = "python benchmarks/moe_load_balance.py" + (
        f" --steps {args.steps}" if args.steps != DEFAULTS["steps"] else "") + (
        f" --seeds {' '.join(map(str, args.seeds))}" if args.seeds != list(SEEDS) else "")
    print(_table(results))
    print(_spread_table(results))
    if out is None:
        print("(not the shipped settings: not written; pass --out PATH to keep it)")
        return 0
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
