"""Fit the roofline's efficiency factors to measured throughput, and score a model on a table.

Few parameters, each with a meaning, fitted where they matter:

1. ``bandwidth`` (η_bw) and ``layer_overhead_cycles`` on **decode** rows: batch-1 decode is
   memory-bound, so its time is ``bytes/(BW·η_bw) + n_layers·cycles/clock``. Two model sizes
   and two formats per GPU separate the two terms (bytes change, layers do not).
2. ``compute`` (η_f) on **prefill** rows, with the decode factors held fixed.

The loss is the mean squared log ratio predicted/measured, so a 2x over- and a 2x
under-prediction cost the same. The minimiser is a plain Nelder–Mead simplex (no SciPy needed).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .catalog import get_hardware, get_model
from .measured import Measurement
from .speed import DEFAULT_EFFICIENCY, LLAMA_CPP_CUDA_2023_12, Efficiency, generation, prefill_tokens_per_s

__all__ = ["predict", "score_efficiency", "fit_efficiency", "nelder_mead"]


def predict(m: Measurement, efficiency: Efficiency = DEFAULT_EFFICIENCY, spec=None, hardware=None) -> float:
    """Predicted tokens/s for the set-up of measurement ``m``."""
    spec = spec or get_model(m.model)
    hardware = hardware or get_hardware(m.hardware)
    if m.kind == "decode":
        return generation(spec, hardware, 0, m.tokens, m.weight_format, efficiency=efficiency)["decode_tokens_per_s"]
    return prefill_tokens_per_s(spec, hardware, m.tokens, m.weight_format, efficiency=efficiency)


def score_efficiency(measurements: list[Measurement], efficiency: Efficiency = DEFAULT_EFFICIENCY) -> dict:
    """Score ``efficiency`` on a table: per-row predictions and, per kind and overall, the mean
    absolute percentage error (``mape``, %), the worst row and the bias (geometric mean ratio)."""
    if not measurements:
        raise ValueError("measurements must not be empty")
    rows = []
    for m in measurements:
        p = predict(m, efficiency)
        rows.append({"measurement": m, "predicted": p, "ratio": p / m.tokens_per_s,
                     "error_pct": 100.0 * (p / m.tokens_per_s - 1.0)})

    def summary(sel):
        if not sel:
            return None
        errs = np.array([r["error_pct"] for r in sel])
        worst = max(sel, key=lambda r: abs(r["error_pct"]))
        return {"n": len(sel), "mape": float(np.mean(np.abs(errs))), "worst": worst,
                "worst_pct": worst["error_pct"],
                "geo_mean_ratio": float(np.exp(np.mean([math.log(r["ratio"]) for r in sel])))}

    return {
        "rows": rows,
        "decode": summary([r for r in rows if r["measurement"].kind == "decode"]),
        "prefill": summary([r for r in rows if r["measurement"].kind == "prefill"]),
        "all": summary(rows),
    }


def nelder_mead(f, x0, step, max_iter: int = 300, tol: float = 1e-10) -> tuple[np.ndarray, float]:
    """Minimise ``f`` from ``x0`` with the Nelder–Mead simplex (reflection, expansion,
    contraction, shrink). ``step`` sets the initial simplex size per coordinate."""
    x0 = np.asarray(x0, dtype=float)
    n = x0.size
    simplex = [x0] + [x0 + np.eye(n)[i] * step[i] for i in range(n)]
    values = [f(x) for x in simplex]
    for _ in range(max_iter):
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if abs(values[-1] - values[0]) < tol:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]
        reflected = centroid + (centroid - worst)
        fr = f(reflected)
        if fr < values[0]:
            expanded = centroid + 2.0 * (centroid - worst)
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (worst - centroid)
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:  # shrink towards the best point
                simplex = [simplex[0]] + [simplex[0] + 0.5 * (x - simplex[0]) for x in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    best = int(np.argmin(values))
    return simplex[best], values[best]


def _loss(measurements, efficiency, cache) -> float:
    errs = []
    for m in measurements:
        spec, hw = cache[m]
        errs.append(math.log(predict(m, efficiency, spec, hw) / m.tokens_per_s))
    return float(np.mean(np.square(errs)))


def fit_efficiency(measurements: list[Measurement], start: Efficiency = LLAMA_CPP_CUDA_2023_12) -> tuple[Efficiency, dict]:
    """Fit ``bandwidth`` and ``layer_overhead_cycles`` on the decode rows, then ``compute`` on the
    prefill rows; the other fields of ``start`` (accumulate, dequant, ubatch) are kept.

    Returns the fitted :class:`Efficiency` and :func:`score_efficiency` of it on ``measurements``.
    """
    decode = [m for m in measurements if m.kind == "decode"]
    prefill_rows = [m for m in measurements if m.kind == "prefill"]
    if not decode or not prefill_rows:
        raise ValueError("need both decode and prefill measurements to fit all three factors")
    cache = {m: (get_model(m.model), get_hardware(m.hardware)) for m in measurements}
    eff = replace(start, layer_overhead_s=None)

    def decode_loss(x):
        bw, kcycles = x
        if not 0.05 <= bw <= 1.5 or kcycles < 0:
            return 1e9
        return _loss(decode, replace(eff, bandwidth=bw, layer_overhead_cycles=kcycles * 1e3), cache)

    (bw, kcycles), _ = nelder_mead(decode_loss, [0.8, 100.0], step=[0.1, 50.0])
    eff = replace(eff, bandwidth=float(round(bw, 3)), layer_overhead_cycles=float(round(kcycles * 1e3, -3)))

    def prefill_loss(x):
        (eta,) = x
        if not 0.01 <= eta <= 1.5:
            return 1e9
        return _loss(prefill_rows, replace(eff, compute=eta), cache)

    (eta,), _ = nelder_mead(prefill_loss, [0.5], step=[0.1])
    eff = replace(eff, compute=float(round(eta, 3)), name=start.name)
    return eff, score_efficiency(measurements, eff)
