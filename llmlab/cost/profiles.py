"""Runtime profiles: the roofline's efficiency factors per (runtime, version, hardware family).

The same GPU runs the same model at very different speeds depending on the software: llama.cpp's
prompt processing on an RTX 4090 went from about 7 300 to 9 400 tokens/s for an F16 7-8B model
between December 2023 and May 2024. So a prediction names its runtime and version, and each
(runtime, version, family) has its own fitted :class:`~llmlab.cost.speed.Efficiency`:

* **decode** rows fit ``bandwidth`` and ``layer_overhead_cycles`` (two model sizes or two formats
  per device separate them); a runtime measured on a single device fits the overhead only, with
  the bandwidth of the llama.cpp profile of the same family and era (stated in its provenance);
* **prefill** rows fit ``compute`` (``compute_simd`` on chips without matrix units). llama.cpp builds
  from :data:`MMQ_SINCE` on (CUDA) multiply quantised weights with their own int8 kernels: those
  rows fit ``mmq_flops_per_sm_cycle`` (a per-SM roof), fp16 rows ``compute``; a table with no fp16
  rows borrows ``compute`` from the newest older profile that has them, and says so;
* Apple tables with both fp16 and quantised decode rows also fit ``unpack_flops_per_weight`` (the
  vector-ALU work of unpacking a quantised weight in a decode step).

Every number comes from ``data/throughput.json`` (published tables, each with its source, date,
build and conditions). Validation is by design, never by the fit:

* **leave-one-device-out** (LODO): refit without a device, predict it; the held-out errors of
  all devices give the profile's **band** (median and 90th percentile of |error| per phase);
* **leave-one-table-out** (LOTO): fit on the other tables of the same runtime and family (other
  versions), predict this one: how much the software moved;
* **check** tables are never fitted on; they only check a profile;
* **drift**: every table predicted by the profiles of the other versions of its runtime and family
  (llama.cpp's three build eras, vLLM 2024-01 and 2026-05).

The fitted factors and bands are stored in ``data/profiles.json`` by ``python -m
llmlab.cost.profiles --write`` (deterministic arithmetic, no timing); ``tests/test_cost_profiles.py``
refits and compares. Ollama is llama.cpp inside: ``get_profile("ollama", "2024-05")`` is the
llama.cpp profile of that build era. MLX, transformers and vLLM 2024-01 were each found measured on
one device only, so their bands come from leaving one row out (or are missing), and say so; vLLM
2026-05 (vLLM 0.21-0.25) has one row on each of three GPUs from three independent tables, so its decode
band is leave-one-device-out, on three rows. What was searched and rejected, and why, is
:func:`examined_sources` (``data/throughput.json``), so that a later search does not repeat it.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from .catalog import get_hardware, get_model
from .formats import get_weight_format
from .fit import nelder_mead
from .hardware import Hardware
from .spec import ModelSpec
from .speed import LLAMA_CPP_CUDA_2023_12, Efficiency, decode_step, generation, prefill_tokens_per_s

__all__ = [
    "RUNTIMES",
    "Row",
    "Table",
    "Band",
    "Profile",
    "Prediction",
    "load_tables",
    "ExaminedSource",
    "examined_sources",
    "family_of",
    "predict_row",
    "fit_rows",
    "leave_one_device_out",
    "validate",
    "profiles",
    "get_profile",
    "predict_speed",
    "predict_request",
    "software_change",
]

RUNTIMES = ("llama.cpp", "ollama", "vllm", "transformers", "mlx")
PHASES = ("decode", "prefill")
_FAMILY_OF_KIND = {"gpu": "nvidia", "apple": "apple", "cpu": "cpu"}
# A runtime cannot stream weights faster than the memory's peak: the fitted fraction is at most 1. (With one
# model size per device, as in the 2025 CUDA table, bandwidth and per-layer overhead trade off and an
# unbounded fit drifts above 1.)
MAX_BANDWIDTH = 1.0


@dataclass(frozen=True)
class Row:
    """One published number: ``tokens_per_s`` of ``phase`` for ``tokens`` tokens, batch 1."""

    model: str
    hardware: str
    phase: str
    weight_format: str
    tokens: int
    tokens_per_s: float
    runtime: str
    table: str


@dataclass(frozen=True)
class Table:
    """A published table: its rows and where, when and how they were measured."""

    id: str
    runtime: str
    version: str
    family: str
    role: str  # "fit" or "check"
    date: str
    source: str
    build: str
    conditions: str
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Band:
    """Held-out |error| of a profile for one phase, in % (``n`` held-out rows, ``method``)."""

    median_pct: float
    p90_pct: float
    n: int
    method: str

    def interval(self, value: float) -> tuple[float, float]:
        """The measured value lies in this interval when |predicted/measured - 1| <= p90."""
        e = self.p90_pct / 100.0
        return value / (1.0 + e), (value / (1.0 - e) if e < 1 else math.inf)


@dataclass(frozen=True)
class Profile:
    runtime: str
    version: str
    family: str
    efficiency: Efficiency
    fitted_on: tuple[str, ...]
    bands: dict  # phase -> Band or None (no held-out error could be computed)
    provenance: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return self.runtime, self.version, self.family


@dataclass(frozen=True)
class Prediction:
    """A predicted speed with its band: ``low``-``high`` is where the measurement should fall
    (the profile's 90th-percentile held-out error); ``None`` when no held-out error exists."""

    tokens_per_s: float
    phase: str
    profile: Profile
    band: Band | None

    @property
    def low(self) -> float | None:
        return None if self.band is None else self.band.interval(self.tokens_per_s)[0]

    @property
    def high(self) -> float | None:
        return None if self.band is None else self.band.interval(self.tokens_per_s)[1]

    def __str__(self) -> str:
        p = self.profile
        head = f"{self.tokens_per_s:.4g} tok/s {self.phase} ({p.runtime} {p.version}, {p.family})"
        if self.band is None:
            return head + ", no held-out error available"
        return head + f", 90 % band {self.low:.4g}-{self.high:.4g} (held-out p90 {self.band.p90_pct:.0f} %)"


# ---------------------------------------------------------------- data

def _read_json(name: str) -> dict:
    return json.loads(resources.files("llmlab").joinpath("data", name).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def load_tables() -> tuple[Table, ...]:
    """Every published table of ``data/throughput.json``."""
    tables = []
    for t in _read_json("throughput.json")["tables"]:
        rows = []
        for r in t["rows"]:
            runtime = r[6] if len(r) > 6 else t["runtime"]
            if r[2] not in PHASES or not r[5] > 0:
                raise ValueError(f"bad row {r!r} in table {t['id']}")
            rows.append(Row(r[0], r[1], r[2], r[3], int(r[4]), float(r[5]), runtime, t["id"]))
        tables.append(Table(t["id"], t["runtime"], t["version"], t["family"], t["role"], t["date"],
                            t["source"], t["build"], t["conditions"], tuple(rows)))
    return tuple(tables)


@dataclass(frozen=True)
class ExaminedSource:
    """A source looked at for a runtime's tables: ``verdict`` "used" (with the ``table`` it gave)
    or "rejected" (``reason`` says why), so that a later search does not repeat it."""

    runtime: str
    phase: str
    verdict: str
    source: str
    reason: str
    table: str | None = None


@lru_cache(maxsize=None)
def examined_sources() -> tuple[ExaminedSource, ...]:
    """The record of ``data/throughput.json`` ``examined_sources``, checked against its tables."""
    tables = {t.id for t in load_tables()}
    out = []
    for x in _read_json("throughput.json")["examined_sources"]:
        e = ExaminedSource(**x)
        if e.verdict not in ("used", "rejected") or e.phase not in PHASES or e.runtime not in RUNTIMES:
            raise ValueError(f"bad examined source {x!r}")
        if (e.verdict == "used") != (e.table is not None) or (e.table is not None and e.table not in tables):
            raise ValueError(f"examined source {e.source!r}: a used source names its table, a rejected one none")
        if not e.reason.strip():
            raise ValueError(f"examined source {e.source!r} has no reason")
        out.append(e)
    return tuple(out)


def family_of(hardware: Hardware) -> str:
    """``"nvidia"``, ``"apple"`` or ``"cpu"`` from ``Hardware.kind``."""
    return _FAMILY_OF_KIND[hardware.kind]


def _rows_of(runtime: str, version: str, family: str, role: str = "fit") -> list[Row]:
    return [r for t in load_tables() if t.version == version and t.family == family and t.role == role
            for r in t.rows if r.runtime == runtime]


# ---------------------------------------------------------------- prediction

@lru_cache(maxsize=None)
def _spec_hw(model: str, hardware: str) -> tuple[ModelSpec, Hardware]:
    return get_model(model), get_hardware(hardware)


def _decode_tps(spec, hw, fmt, tokens, eff) -> float:
    """llama-bench ``tg``: ``tokens`` decode steps from an empty context. Step time is linear in
    the context while memory-bound, so Simpson's rule on three contexts gives the mean (to half
    a token of context)."""
    h = tokens // 2
    t = [decode_step(spec, hw, fmt, c, 1, efficiency=eff).total_s for c in (0, h, 2 * h)]
    return 1.0 / ((t[0] + 4 * t[1] + t[2]) / 6)


def predict_row(row: Row, efficiency: Efficiency) -> float:
    """Predicted tokens/s for the set-up of ``row``."""
    spec, hw = _spec_hw(row.model, row.hardware)
    if row.phase == "decode":
        return _decode_tps(spec, hw, row.weight_format, row.tokens, efficiency)
    return prefill_tokens_per_s(spec, hw, row.tokens, row.weight_format, efficiency=efficiency)


def _errors(rows, eff) -> list[float]:
    return [100.0 * (predict_row(r, eff) / r.tokens_per_s - 1.0) for r in rows]


# ---------------------------------------------------------------- fitting

# What the runtimes do, not fitted: llama.cpp's CUDA prefill of quantised weights expands them to
# fp16 for cuBLAS and uses fp16-accumulate GEMMs; PyTorch accumulates in fp32 and computes every
# position's logits in a plain forward pass.
_STRUCTURE = {
    "llama.cpp": dict(accumulate="fp16", prefill_dequant=True, ubatch=512, prefill_logits="last"),
    "vllm": dict(accumulate="fp32", prefill_dequant=False, ubatch=2048, prefill_logits="last"),
    "mlx": dict(accumulate="fp32", prefill_dequant=False, ubatch=2048, prefill_logits="last"),
    "transformers": dict(accumulate="fp32", prefill_dequant=False, ubatch=4096, prefill_logits="all",
                         overhead_overlaps=True),
}
# transformers' ``generate`` runs the model eagerly: per layer and token, Python and the dispatch of
# PyTorch operators on the host, while CUDA runs the queued kernels asynchronously (PyTorch's CUDA
# semantics: a kernel call returns once queued). A step costs the slower of the two, host or device,
# and the host's time is in host seconds (``layer_overhead_s``), not in GPU clock cycles.


def _with_overhead(eff: Efficiency, k: float) -> Efficiency:
    """``eff`` with per-layer overhead ``k``: thousands of GPU cycles, or microseconds of host time
    for a runtime whose overhead overlaps the device work."""
    if eff.overhead_overlaps:
        return replace(eff, layer_overhead_s=k * 1e-6, layer_overhead_cycles=0.0)
    return replace(eff, layer_overhead_cycles=k * 1e3)


def _rounded_overhead(eff: Efficiency, k: float) -> Efficiency:
    if eff.overhead_overlaps:
        return replace(eff, layer_overhead_s=round(float(k) * 1e-6, 7), layer_overhead_cycles=0.0)
    return replace(eff, layer_overhead_cycles=float(round(k * 1e3, -3)))


# llama.cpp's CUDA prefill of quantised weights switched from "dequantise to fp16 + cuBLAS" to its own
# int8 tensor-core kernels (MMQ) by default in PR #8075 (merged June 2024): a build from July 2024 on is
# modelled with the per-SM roof of ``Efficiency.mmq_flops_per_sm_cycle`` for quantised weights (fp16
# weights still go through cuBLAS). The start value is replaced by the fit.
MMQ_SINCE = "2024-07"
_MMQ_START = 500.0


def _uses_mmq(runtime: str, version: str | None, family: str) -> bool:
    return runtime == "llama.cpp" and family == "nvidia" and version is not None and _month(version) >= _month(MMQ_SINCE)


def _start(runtime: str, version: str | None = None, family: str = "nvidia") -> Efficiency:
    extra = {"mmq_flops_per_sm_cycle": _MMQ_START} if _uses_mmq(runtime, version, family) else {}
    return replace(LLAMA_CPP_CUDA_2023_12, layer_overhead_s=None, **_STRUCTURE[runtime], **extra)


def _mse_log(rows, eff) -> float:
    return float(np.mean([math.log(predict_row(r, eff) / r.tokens_per_s) ** 2 for r in rows]))


def fit_rows(rows: list[Row], family: str, runtime: str, bandwidth: float | None = None,
             version: str | None = None, compute: float | None = None) -> Efficiency:
    """Fit a profile on ``rows``: decode -> ``bandwidth`` (unless given) and
    ``layer_overhead_cycles``; prefill -> ``compute`` (``compute_simd`` off NVIDIA). For a llama.cpp
    ``version`` with MMQ kernels (:data:`MMQ_SINCE`) quantised prefill rows fit
    ``mmq_flops_per_sm_cycle`` and fp16 rows ``compute``; with no fp16 rows ``compute`` is the given
    one (taken from an older profile)."""
    eff = _start(runtime, version, family)
    decode = [r for r in rows if r.phase == "decode"]
    pre = [r for r in rows if r.phase == "prefill"]
    if not decode:
        raise ValueError("need decode rows to fit a profile")
    if bandwidth is None:
        def loss(x):
            if not 0.05 <= x[0] <= MAX_BANDWIDTH or x[1] < 0:
                return 1e9
            return _mse_log(decode, _with_overhead(replace(eff, bandwidth=x[0]), x[1]))
        k0 = 1000.0 if eff.overhead_overlaps else 100.0
        (bw, kc), _ = nelder_mead(loss, [0.8, k0], step=[0.1, k0 / 2])
    else:
        def loss(x):
            return 1e9 if x[0] < 0 else _mse_log(decode, _with_overhead(replace(eff, bandwidth=bandwidth), x[0]))
        bw = bandwidth
        # start where the overhead shows: an overlapping one below the device time is invisible (flat loss)
        k0 = 1000.0 if eff.overhead_overlaps else 100.0
        (kc,), _ = nelder_mead(loss, [k0], step=[k0 / 2])
        if kc < 1.0:
            # Even with no overhead the assumed bandwidth is too slow for these rows: this runtime
            # streams weights faster, so fit its bandwidth instead, with no per-layer overhead.
            def bw_loss(x):
                if not 0.05 <= x[0] <= 1.0:
                    return 1e9
                return _mse_log(decode, replace(eff, bandwidth=x[0], layer_overhead_cycles=0.0))
            (bw,), _ = nelder_mead(bw_loss, [bandwidth], step=[0.05])
            kc = 0.0
    eff = _rounded_overhead(replace(eff, bandwidth=float(round(bw, 3))), kc)
    quant_dec = {get_weight_format(r.weight_format).matrix_bits < 16 for r in decode}
    if family != "nvidia" and bandwidth is None and quant_dec == {True, False}:
        # Both kinds of decode rows on chips without matrix units: fp16 rows fix the bandwidth, the
        # quantised ones may be slower than their bytes allow (unpacking on the vector ALUs).
        def uloss(x):
            if not 0.05 <= x[0] <= MAX_BANDWIDTH or x[1] < 0 or not 0 <= x[2] <= 1e4:
                return 1e9
            return _mse_log(decode, replace(eff, bandwidth=x[0], layer_overhead_cycles=x[1] * 1e3,
                                            unpack_flops_per_weight=x[2]))
        (bw, kc, u), _ = nelder_mead(uloss, [eff.bandwidth, eff.layer_overhead_cycles / 1e3, 10.0], step=[0.05, 50.0, 10.0])
        eff = replace(eff, bandwidth=float(round(bw, 3)), layer_overhead_cycles=float(round(kc * 1e3, -3)),
                      unpack_flops_per_weight=float(round(u, 1)))
    if pre and eff.mmq_flops_per_sm_cycle is not None:
        quant = [r for r in pre if get_weight_format(r.weight_format).matrix_bits < 16]
        full = [r for r in pre if get_weight_format(r.weight_format).matrix_bits >= 16]
        if not quant:
            raise ValueError("an MMQ-era profile needs quantised prefill rows")

        def mloss(x):
            return 1e9 if not 1.0 <= x[0] <= 1e5 else _mse_log(quant, replace(eff, mmq_flops_per_sm_cycle=x[0]))
        (m,), _ = nelder_mead(mloss, [_MMQ_START], step=[100.0])
        eff = replace(eff, mmq_flops_per_sm_cycle=float(round(m, 1)))
        if full:
            def floss(x):
                return 1e9 if not 0.01 <= x[0] <= 1.5 else _mse_log(full, replace(eff, compute=x[0]))
            (eta,), _ = nelder_mead(floss, [0.5], step=[0.1])
            eff = replace(eff, compute=float(round(eta, 3)))
        elif compute is not None:
            eff = replace(eff, compute=compute)
        return eff
    if pre:
        attr = "compute" if family == "nvidia" else "compute_simd"
        # A second factor for quantised GEMMs only where the kernel dequantises in place (not the
        # CUDA fp16-copy path) and both kinds of rows are there to tell them apart.
        in_kernel = not (eff.prefill_dequant and family == "nvidia")
        formats = {get_weight_format(r.weight_format).matrix_bits < 16 for r in pre}
        if in_kernel and formats == {True, False}:
            def ploss(x):
                if not (0.01 <= x[0] <= 1.5 and 0.2 <= x[1] <= 1.5):
                    return 1e9
                return _mse_log(pre, replace(eff, **{attr: x[0]}, quant_compute=x[1]))
            (eta, q), _ = nelder_mead(ploss, [0.5, 1.0], step=[0.1, 0.1])
            eff = replace(eff, quant_compute=float(round(q, 3)))
        else:
            def ploss(x):
                return 1e9 if not 0.01 <= x[0] <= 1.5 else _mse_log(pre, replace(eff, **{attr: x[0]}))
            (eta,), _ = nelder_mead(ploss, [0.5], step=[0.1])
        eff = replace(eff, **{attr: float(round(eta, 3))})
    return eff


def _borrowed_compute(runtime: str, version: str, family: str) -> tuple[float | None, str]:
    """An MMQ-era llama.cpp table without fp16 prefill rows: the fp16 (cuBLAS) compute factor of the
    newest older llama.cpp profile of the family that has them."""
    rows = _rows_of(runtime, version, family)
    if not _uses_mmq(runtime, version, family) or any(
            r.phase == "prefill" and get_weight_format(r.weight_format).matrix_bits >= 16 for r in rows):
        return None, ""
    older = [v for v in _llama_versions(family) if _month(v) < _month(version)
             and any(r.phase == "prefill" and get_weight_format(r.weight_format).matrix_bits >= 16
                     for r in _rows_of("llama.cpp", v, family))]
    if not older:
        return None, ""
    base = older[-1]
    c = fit_rows(_rows_of("llama.cpp", base, family), family, "llama.cpp", version=base).compute
    return c, (f"quantised prefill: MMQ kernels, per-SM roof fitted on this table; fp16 prefill (cuBLAS) has no "
               f"rows here: compute factor {c} taken from llama.cpp {base} [assumption]. The argument: MMQ "
               "(PR #8075) replaced only the quantised matmuls; fp16 weights still go to cuBLAS GEMMs, whose "
               "efficiency is NVIDIA's library, not llama.cpp's code, and the changes of the builds in between "
               "that this table shows (CUDA graphs, flash attention: its FA-off columns are used) act on decode "
               "steps and attention, not on the weight GEMMs of a 512-token prompt. Not checked: no published "
               "2025 fp16 pp512 row of a catalogue GPU was found, so the prefill band (Q4_0 rows) does not "
               "cover fp16 prefill")


def _fit_spec(runtime: str, version: str, family: str) -> tuple[list[Row], float | None, str]:
    """Rows to fit on, fixed bandwidth (single-device runtimes) and the note saying so."""
    rows = _rows_of(runtime, version, family)
    if runtime == "llama.cpp":
        return rows, None, _borrowed_compute(runtime, version, family)[1]
    if len({r.hardware for r in rows}) > 1:
        devices, tables = {r.hardware for r in rows}, {r.table for r in rows}
        note = (f"{len(devices)} devices from {len(tables)} independent tables: bandwidth and per-layer overhead "
                "fitted across them (the two scale differently from GPU to GPU: bytes over bandwidth, cycles over "
                "clock); the band is leave-one-device-out")
        if len(rows) < 6:
            note += f" on {len(rows)} held-out rows only (weak evidence)"
        if not any(r.phase == "prefill" for r in rows):
            note += ("; no prefill rows (no time-to-first-token with a known prompt length was found for this "
                     "version; see examined_sources in data/throughput.json)")
        return rows, None, note
    ref = _llama_versions(family)
    if not ref:
        raise ValueError(f"no llama.cpp profile on {family} to take the bandwidth from")
    base = min(ref, key=lambda v: abs(_month(v) - _month(version)))
    bw = fit_rows(_rows_of("llama.cpp", base, family), family, "llama.cpp", version=base).bandwidth
    note = (f"measured on one device only: bandwidth efficiency taken from llama.cpp {base} on "
            f"{family} ({bw}), only the per-layer overhead is fitted [assumption]; if the rows are "
            "faster than that bandwidth allows, the bandwidth is fitted instead, with no overhead")
    if _STRUCTURE[runtime].get("overhead_overlaps"):
        note += ("; eager PyTorch: the per-layer overhead is host time (Python, operator dispatch, kernel "
                 "launches) that overlaps the GPU's queued work, so a step is max(device, host), not their sum; that host time is the benchmark machine's (its CPU is not named) and does not scale with the GPU")
    if len(rows) < 3:
        note += (f"; only {len(rows)} published row{'s' if len(rows) != 1 else ''} of this version found "
                 "(fewer than 3 usable): the band needs a held-out row per phase and is missing where there is none")
    return rows, bw, note


def _month(version: str) -> int:
    y, m = version.split("-")[:2]
    return int(y) * 12 + int(m)


def _llama_versions(family: str) -> list[str]:
    return sorted({t.version for t in load_tables() if t.runtime == "llama.cpp" and t.family == family
                   and t.role == "fit"}, key=_month)


def _profile_keys() -> list[tuple[str, str, str]]:
    keys = set()
    for t in load_tables():
        if t.role == "fit":
            keys |= {(r.runtime, t.version, t.family) for r in t.rows}
    return sorted(keys, key=lambda k: (k[0], k[2], _month(k[1])))


def leave_one_device_out(runtime: str, version: str, family: str) -> list[dict]:
    """Refit without each device and predict its rows. One dict per held-out row (``row``,
    ``predicted``, ``error_pct``); empty for a profile measured on a single device."""
    rows, bw, _ = _fit_spec(runtime, version, family)
    devices = sorted({r.hardware for r in rows})
    if len(devices) < 2:
        return []
    out = []
    for d in devices:
        train = [r for r in rows if r.hardware != d]
        if not [r for r in train if r.phase == "decode"]:
            continue
        eff = fit_rows(train, family, runtime, bandwidth=bw, version=version,
                       compute=_borrowed_compute(runtime, version, family)[0])
        for r in (r for r in rows if r.hardware == d):
            p = predict_row(r, eff)
            out.append({"row": r, "predicted": p, "error_pct": 100.0 * (p / r.tokens_per_s - 1.0)})
    return out


def _leave_one_row_out(runtime, version, family) -> list[dict]:
    """For single-device runtimes (one fitted parameter per phase): refit without each row."""
    rows, bw, _ = _fit_spec(runtime, version, family)
    if bw is None:
        return []
    out = []
    for r in rows:
        train = [x for x in rows if x is not r]
        if not any(x.phase == "decode" for x in train) or not any(x.phase == r.phase for x in train):
            continue
        eff = fit_rows(train, family, runtime, bandwidth=bw, version=version)
        p = predict_row(r, eff)
        out.append({"row": r, "predicted": p, "error_pct": 100.0 * (p / r.tokens_per_s - 1.0)})
    return out


def _band(held: list[dict], phase: str, method: str) -> Band | None:
    errs = np.abs([h["error_pct"] for h in held if h["row"].phase == phase])
    if errs.size == 0:
        return None
    return Band(float(round(np.median(errs), 1)), float(round(np.percentile(errs, 90), 1)), int(errs.size), method)


def _summary(errs) -> dict | None:
    a = np.abs(errs)
    if a.size == 0:
        return None
    return {"n": int(a.size), "median_pct": float(np.median(a)), "p90_pct": float(np.percentile(a, 90)),
            "bias_pct": float(np.median(errs))}


def validate() -> dict:
    """Fit every profile and compute its held-out errors. Returns ``{"profiles": {key: {...}},
    "loto": [...], "drift": [...], "check": [...]}`` with per-phase summaries (median, p90, bias of error %)."""
    out = {"profiles": {}, "loto": [], "check": []}
    fitted = {}
    for key in _profile_keys():
        runtime, version, family = key
        rows, bw, note = _fit_spec(*key)
        eff = fit_rows(rows, family, runtime, bandwidth=bw, version=version,
                       compute=_borrowed_compute(*key)[0])
        fitted[key] = eff
        held = leave_one_device_out(*key)
        method = "leave-one-device-out"
        if not held:
            held = _leave_one_row_out(*key)
            method = "leave-one-row-out (single device)"
        fit_err = _errors(rows, eff)
        out["profiles"][key] = {
            "efficiency": eff, "rows": rows, "note": note, "method": method, "held_out": held,
            "fit": {ph: _summary([e for e, r in zip(fit_err, rows) if r.phase == ph]) for ph in PHASES},
            "heldout": {ph: _summary([h["error_pct"] for h in held if h["row"].phase == ph]) for ph in PHASES},
            "bands": {ph: _band(held, ph, method) for ph in PHASES},
        }
    # Leave one table out: each llama.cpp table predicted by the fit on the other tables of its family.
    for t in load_tables():
        if t.role != "fit" or t.runtime != "llama.cpp":
            continue
        others = [r for u in load_tables() if u.role == "fit" and u.runtime == "llama.cpp"
                  and u.family == t.family and u.id != t.id for r in u.rows]
        if not others:
            continue
        # the structure of the held-out table's build (MMQ or not), its factors from the other builds
        eff = fit_rows(others, t.family, "llama.cpp", version=t.version)
        errs = _errors(t.rows, eff)
        out["loto"].append({"table": t.id, "family": t.family, "fitted_on": sorted({r.table for r in others}),
                            **{ph: _summary([e for e, r in zip(errs, t.rows) if r.phase == ph]) for ph in PHASES}})
    # Software drift: each table's rows of a runtime predicted by the profile of every other version of
    # that runtime and family (for the newest table, the error of the profiles that came before it: what
    # the issue measured). llama.cpp and vLLM have more than one version.
    out["drift"] = []
    for t in load_tables():
        if t.role != "fit":
            continue
        for runtime in sorted({r.runtime for r in t.rows}):
            rows = [r for r in t.rows if r.runtime == runtime]
            for key, eff in fitted.items():
                if key[0] != runtime or key[2] != t.family or key[1] == t.version:
                    continue
                errs = _errors(rows, eff)
                out["drift"].append({"table": t.id, "profile": key,
                                     **{ph: _summary([e for e, r in zip(errs, rows) if r.phase == ph]) for ph in PHASES}})
    # Check tables: predicted by every profile of the same runtime and family, never fitted on.
    for t in load_tables():
        if t.role != "check":
            continue
        for key, eff in fitted.items():
            if key[0] != t.runtime or key[2] != t.family:
                continue
            errs = _errors(t.rows, eff)
            out["check"].append({"table": t.id, "profile": key,
                                 **{ph: _summary([e for e, r in zip(errs, t.rows) if r.phase == ph]) for ph in PHASES}})
    return out


# ---------------------------------------------------------------- stored profiles

_EFF_FIELDS = ("bandwidth", "compute", "compute_simd", "quant_compute", "layer_overhead_cycles", "layer_overhead_s",
               "overhead_overlaps", "accumulate", "prefill_dequant", "mmq_flops_per_sm_cycle",
               "unpack_flops_per_weight", "ubatch", "prefill_logits")


def _to_json(report: dict) -> dict:
    profs = []
    for (runtime, version, family), p in report["profiles"].items():
        eff = p["efficiency"]
        profs.append({
            "runtime": runtime, "version": version, "family": family,
            "efficiency": {f: getattr(eff, f) for f in _EFF_FIELDS},
            "fitted_on": sorted({r.table for r in p["rows"]}),
            "bands": {ph: (None if b is None else {"median_pct": b.median_pct, "p90_pct": b.p90_pct, "n": b.n,
                                                   "method": b.method}) for ph, b in p["bands"].items()},
            "note": p["note"],
        })
    return {"_about": "Written by `python -m llmlab.cost.profiles --write` from data/throughput.json; do not edit.",
            "profiles": profs}


@lru_cache(maxsize=None)
def profiles() -> tuple[Profile, ...]:
    """The stored profiles (``data/profiles.json``), oldest version first per runtime and family."""
    out = []
    for p in _read_json("profiles.json")["profiles"]:
        e = p["efficiency"]
        eff = replace(LLAMA_CPP_CUDA_2023_12, **{"layer_overhead_s": None, **e},
                      name=f"{p['runtime']} {p['version']} ({p['family']})",
                      provenance=f"fitted on {', '.join(p['fitted_on'])} (data/throughput.json). {p['note']}".strip())
        bands = {ph: (None if b is None else Band(**b)) for ph, b in p["bands"].items()}
        out.append(Profile(p["runtime"], p["version"], p["family"], eff, tuple(p["fitted_on"]), bands,
                           eff.provenance))
    return tuple(out)


def get_profile(runtime: str = "llama.cpp", version: str | None = None, hardware: Hardware | str = "nvidia") -> Profile:
    """The profile of ``runtime`` (``version`` ``"YYYY-MM"``; default the newest) for the family of
    ``hardware`` (a :class:`Hardware`, a catalog name or ``"nvidia"``/``"apple"``)."""
    if runtime not in RUNTIMES:
        raise ValueError(f"unknown runtime {runtime!r}; known: {', '.join(RUNTIMES)}")
    if isinstance(hardware, Hardware):
        family = family_of(hardware)
    elif hardware in ("nvidia", "apple", "cpu"):
        family = hardware
    else:
        family = family_of(get_hardware(hardware))
    if runtime == "ollama":  # Ollama ships llama.cpp: its speed is that of the bundled build
        runtime = "llama.cpp"
    if family == "cpu":
        raise ValueError("no published CPU profile: calibrate this machine with llmlab.cost.calibrate "
                         "(benchmarks/bench_cost_cpu.py)")
    cands = [p for p in profiles() if p.runtime == runtime and p.family == family]
    if not cands:
        raise ValueError(f"no {runtime} profile for {family} hardware; have: "
                         + ", ".join(f"{p.runtime} {p.version} {p.family}" for p in profiles()))
    if version is None:
        return max(cands, key=lambda p: _month(p.version))
    for p in cands:
        if p.version == version:
            return p
    raise ValueError(f"no {runtime} {version} profile for {family}; versions: "
                     + ", ".join(p.version for p in cands))


def predict_speed(spec: ModelSpec, hardware: Hardware, phase: str = "decode", weight_format: str = "f16",
                  tokens: int | None = None, runtime: str = "llama.cpp", version: str | None = None) -> Prediction:
    """Batch-1 tokens/s of ``phase`` with the profile of ``runtime``/``version`` and its band.
    ``tokens``: decode steps from an empty context (default 128) or prompt length (default 512)."""
    if phase not in PHASES:
        raise ValueError(f"phase must be 'decode' or 'prefill', got {phase!r}")
    prof = get_profile(runtime, version, hardware)
    n = tokens if tokens is not None else (128 if phase == "decode" else 512)
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"tokens must be an int >= 1, got {n!r}")
    if phase == "decode":
        value = _decode_tps(spec, hardware, weight_format, n, prof.efficiency)
    else:
        value = prefill_tokens_per_s(spec, hardware, n, weight_format, efficiency=prof.efficiency)
    return Prediction(value, phase, prof, prof.bands.get(phase))


def predict_request(spec: ModelSpec, hardware: Hardware, prompt_tokens: int, new_tokens: int,
                    weight_format: str = "f16", runtime: str = "llama.cpp", version: str | None = None) -> dict:
    """Latency of one request (batch 1) with a profile: ``ttft_s`` (prefill of the prompt),
    ``decode_s`` (the other tokens, each reading a longer KV cache), ``total_s``, each with its
    ``(low, high)`` interval from the profile's bands (``None`` where a band is missing), and the
    ``profile``. A slower-than-predicted phase means more seconds, so a tokens/s interval
    ``[v/(1+e), v/(1-e)]`` becomes ``[t(1-e), t(1+e)]`` in seconds."""
    prof = get_profile(runtime, version, hardware)
    g = generation(spec, hardware, prompt_tokens, new_tokens, weight_format, efficiency=prof.efficiency)

    def interval(seconds, phase):
        band = prof.bands.get(phase)
        if band is None:
            return None
        e = band.p90_pct / 100.0
        return seconds * max(0.0, 1.0 - e), seconds * (1.0 + e)

    ttft, dec = interval(g["ttft_s"], "prefill"), interval(g["decode_s"], "decode")
    total = None if ttft is None or dec is None else (ttft[0] + dec[0], ttft[1] + dec[1])
    return {"ttft_s": g["ttft_s"], "decode_s": g["decode_s"], "total_s": g["total_s"],
            "decode_tokens_per_s": g["decode_tokens_per_s"], "ttft_band": ttft, "decode_band": dec,
            "total_band": total, "profile": prof}


def software_change(spec: ModelSpec, hardware: Hardware, weight_format: str = "f16",
                    runtime: str = "llama.cpp") -> list[tuple[str, Prediction, Prediction]]:
    """``[(version, decode, prefill), ...]`` for every stored version of ``runtime`` on the family
    of ``hardware``, oldest first: the same device, the software changing."""
    fam = family_of(hardware)
    out = []
    for p in sorted((p for p in profiles() if p.runtime == runtime and p.family == fam), key=lambda p: _month(p.version)):
        out.append((p.version, predict_speed(spec, hardware, "decode", weight_format, runtime=runtime, version=p.version),
                    predict_speed(spec, hardware, "prefill", weight_format, runtime=runtime, version=p.version)))
    return out


# ---------------------------------------------------------------- command line

def _print(report: dict) -> None:
    def fmt(s):
        return "   -" if s is None else f"n={s['n']:>2} median {s['median_pct']:5.1f} % p90 {s['p90_pct']:5.1f} %"
    print("Profiles (fit error and held-out error, |predicted/measured - 1|):")
    for (rt, v, fam), p in report["profiles"].items():
        e = p["efficiency"]
        simd = f" η_simd {e.compute_simd} (quantised x{e.quant_compute})" if fam != "nvidia" else f" η_f {e.compute}"
        if e.unpack_flops_per_weight:
            simd += f", decode unpacking {e.unpack_flops_per_weight} FLOP per quantised weight"
        if e.mmq_flops_per_sm_cycle is not None:
            simd += f" (fp16 weights), quantised: MMQ {e.mmq_flops_per_sm_cycle} FLOP/cycle/SM"
        ov = (f"host overhead {e.layer_overhead_s * 1e6:.1f} µs/layer, overlapping the GPU's work"
              if e.layer_overhead_s is not None else f"overhead {e.layer_overhead_cycles:,.0f} cycles/layer")
        print(f"\n  {rt} {v} {fam}: η_bw {e.bandwidth}{simd} {ov}")
        if p["note"]:
            print(f"    {p['note']}")
        for ph in PHASES:
            print(f"    {ph:<8} fit {fmt(p['fit'][ph])}   held-out ({p['method']}) {fmt(p['heldout'][ph])}")
    print("\nLeave one table out (fit on the other versions of the same runtime and family):")
    for x in report["loto"]:
        print(f"  {x['table']:<26} from {', '.join(x['fitted_on'])}: decode {fmt(x['decode'])} | prefill {fmt(x['prefill'])}")
    print("\nSoftware drift (a table predicted by the profile of another version of the same runtime and family):")
    for x in report["drift"]:
        print(f"  {x['table']:<26} with {' '.join(x['profile'])}: decode {fmt(x['decode'])} | prefill {fmt(x['prefill'])}")
    print("\nCheck tables (never fitted on):")
    for x in report["check"]:
        print(f"  {x['table']:<22} with {' '.join(x['profile'])}: decode {fmt(x['decode'])} | prefill {fmt(x['prefill'])}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Fit and validate the runtime profiles")
    parser.add_argument("--write", action="store_true", help="write data/profiles.json")
    args = parser.parse_args(argv)
    report = validate()
    _print(report)
    if args.write:
        path = Path(__file__).resolve().parents[1] / "data" / "profiles.json"
        path.write_text(json.dumps(_to_json(report), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
