"""Runtime profiles: published tables with their sources, fitted profiles, held-out validation.

The held-out bounds asserted here are the ones documented in the llmlab.cost package docstring and
the closing note of issue 31: the issue's goal (median held-out error <= 10 % decode, <= 20 % prefill)
where a profile meets it, and the documented miss where it does not (2023-12 CUDA prefill).
"""

from dataclasses import replace

import pytest

from llmlab.cost import get_hardware, get_model, prefill_tokens_per_s
from llmlab.cost import profiles as P
from llmlab.cost.catalog import load_hardware_catalog, load_model_catalog
from llmlab.cost.formats import get_weight_format


@pytest.fixture(scope="module")
def report():
    return P.validate()


def test_every_table_names_its_source_date_build_and_conditions():
    tables = P.load_tables()
    assert len(tables) >= 5 and len({t.id for t in tables}) == len(tables)
    models, devices = load_model_catalog(), load_hardware_catalog()
    for t in tables:
        for field in ("source", "date", "build", "conditions"):
            assert getattr(t, field).strip(), f"{t.id}.{field}"
        assert t.role in ("fit", "check") and t.family in ("nvidia", "apple")
        for r in t.rows:
            assert r.model in models and r.hardware in devices, (t.id, r)
            assert P.family_of(devices[r.hardware]) == t.family, (t.id, r)
            get_weight_format(r.weight_format)
            assert r.tokens >= 128 and r.tokens_per_s > 0
    assert any(t.role == "check" for t in tables), "a table must be set aside for checking only"


def test_no_row_beats_the_ideal_memory_roofline():
    """A transcription error (or a mislabelled run) would show up as faster than physics allows."""
    from llmlab.cost import IDEAL, decode_tokens_per_s

    for t in P.load_tables():
        for r in t.rows:
            if r.phase == "decode":
                spec, hw = get_model(r.model), get_hardware(r.hardware)
                ideal = decode_tokens_per_s(spec, hw, r.weight_format, context=0, efficiency=IDEAL)
                assert r.tokens_per_s < ideal, (t.id, r)


def test_stored_profiles_are_the_fit_of_the_tables(report):
    stored = {p.key: p for p in P.profiles()}
    assert set(stored) == set(report["profiles"])
    for key, fresh in report["profiles"].items():
        a, b = stored[key].efficiency, fresh["efficiency"]
        assert a.bandwidth == pytest.approx(b.bandwidth, abs=0.003), key
        assert a.compute_for(get_hardware("rtx-4090")) == pytest.approx(b.compute_for(get_hardware("rtx-4090")), abs=0.003)
        assert a.compute_simd == pytest.approx(b.compute_simd, abs=0.003), key
        assert a.quant_compute == pytest.approx(b.quant_compute, abs=0.003), key
        assert a.layer_overhead_cycles == pytest.approx(b.layer_overhead_cycles, rel=0.02, abs=2000), key
        assert a.overhead_overlaps == b.overhead_overlaps, key
        assert (a.layer_overhead_s is None) == (b.layer_overhead_s is None), key
        if a.layer_overhead_s is not None:
            assert a.layer_overhead_s == pytest.approx(b.layer_overhead_s, rel=0.01), key
        for phase, band in fresh["bands"].items():
            s = stored[key].bands[phase]
            assert (s is None) == (band is None), (key, phase)
            if band is not None:
                assert s.median_pct == pytest.approx(band.median_pct, abs=0.3) and s.n == band.n


# (runtime, version, family) -> documented leave-one-device-out median bound per phase (%).
DOCUMENTED_LODO = {
    ("llama.cpp", "2025-08", "nvidia"): {"decode": 10.0, "prefill": 20.0},  # goal met (4.2 / 10.6), the default
    ("llama.cpp", "2024-05", "nvidia"): {"decode": 10.0, "prefill": 20.0},  # goal met
    ("llama.cpp", "2023-12", "apple"): {"decode": 10.0, "prefill": 20.0},  # goal met
    ("llama.cpp", "2023-12", "nvidia"): {"decode": 10.0, "prefill": 30.0},  # prefill misses the goal (23.5)
    ("llama.cpp", "2024-05", "apple"): {"decode": 10.0, "prefill": 20.0},  # goal met (8.9 / 8.5) since the M1 row
}


@pytest.mark.parametrize("key", sorted(DOCUMENTED_LODO))
def test_held_out_errors_stay_within_the_documented_bounds(report, key):
    p = report["profiles"][key]
    assert p["method"] == "leave-one-device-out"
    for phase, bound in DOCUMENTED_LODO[key].items():
        s = p["heldout"][phase]
        assert s["n"] >= 6, (key, phase)
        assert s["median_pct"] <= bound, (key, phase, s)
        # the band shipped with the profile is this held-out error
        band = P.get_profile(key[0], key[1], key[2]).bands[phase]
        assert band.median_pct == pytest.approx(s["median_pct"], abs=0.3)
        assert band.p90_pct >= band.median_pct


def test_the_check_table_is_predicted_within_the_goal_by_the_profile_of_its_era(report):
    """The check table (January 2024, cuBLAS prefill) is never fitted on. The profile nearest in time
    (2024-05, same kernels) meets the goal on it; the MMQ-era default (2025-08) does not on prefill, as
    documented: it predicts the newer kernels."""
    checks = {(c["table"], c["profile"][1]): c for c in report["check"]}
    new = checks[("pr4766-cuda-2024-01", "2024-05")]
    assert new["decode"]["median_pct"] <= 10.0 and new["prefill"]["median_pct"] <= 20.0
    old = checks[("pr4766-cuda-2024-01", "2023-12")]
    assert old["prefill"]["median_pct"] > new["prefill"]["median_pct"]
    mmq = checks[("pr4766-cuda-2024-01", "2025-08")]
    assert mmq["prefill"]["median_pct"] > 30.0


def test_the_2025_table_held_out_by_the_older_builds(report):
    """The issue's measurement: the 2025 CUDA table (discussion #15013) predicted by profiles that never
    saw it. The older builds miss it (software moved); the 2025 profile, fitted on it, then predicts
    the May 2024 table it was not fitted on within the prefill goal."""
    loto = {x["table"]: x for x in report["loto"]}["lcpp15013-cuda-2025-08"]
    assert loto["decode"]["median_pct"] > 20.0 and loto["prefill"]["median_pct"] > 20.0
    drift = {(x["table"], x["profile"][1]): x for x in report["drift"]}
    by_2024 = drift[("lcpp15013-cuda-2025-08", "2024-05")]
    assert by_2024["decode"]["median_pct"] > 10.0 and by_2024["prefill"]["median_pct"] > 20.0
    back = drift[("xd-llama3-cuda-2024-05", "2025-08")]
    assert back["prefill"]["median_pct"] <= 20.0 and back["decode"]["median_pct"] <= 11.0


def test_2025_quantised_prefill_scales_with_multiprocessors_not_tensor_peak():
    """Why the 2025 profile has an MMQ roof: on the 2025 table the achieved prefill FLOP/s divided by
    SM count x clock is nearly the same on every GPU, GeForce or data-centre, while divided by the
    tensor peak it varies more than threefold."""
    t = next(t for t in P.load_tables() if t.id == "lcpp15013-cuda-2025-08")
    per_sm, per_peak = [], []
    for r in (r for r in t.rows if r.phase == "prefill"):
        spec, hw = get_model(r.model), get_hardware(r.hardware)
        achieved = r.tokens_per_s * spec.forward_flops(r.tokens, logits="last") / r.tokens
        per_sm.append(achieved / (hw.sm_count * hw.clock_ghz * 1e9))
        per_peak.append(achieved / hw.peak_flops("fp16"))
    assert len(per_sm) == 6
    assert max(per_sm) / min(per_sm) < 1.4
    assert max(per_peak) / min(per_peak) > 3.0
    eff = P.get_profile("llama.cpp", "2025-08", "nvidia").efficiency
    assert min(per_sm) < eff.mmq_flops_per_sm_cycle < max(per_sm)


def test_apple_2024_quantised_decode_is_unpacking_bound_on_the_m1_max():
    """The M1 Max outlier of the 2024 Metal table: its Q4_K_M decode moves 2.5-3e11 weights/s for the
    8B and the 70B model (within a fifth), at under half its bandwidth, while its fp16 decode reaches
    70 %: the vector ALUs unpacking K-quants are the limit, not the memory. The profile's unpacking
    term models that, and it brings the M1 Max rows closer when the M1 Max is held out."""
    from llmlab.cost import IDEAL, decode_tokens_per_s

    t = next(t for t in P.load_tables() if t.id == "xd-llama3-metal-2024-05")
    m1 = {(r.model, r.weight_format): r.tokens_per_s for r in t.rows if r.hardware == "apple-m1-max" and r.phase == "decode"}
    w8, w70 = (get_model(m).tensor_groups()["matrices"] for m in ("llama-3-8b", "llama-3-70b"))
    rate8, rate70 = m1[("llama-3-8b", "q4_k_m")] * w8, m1[("llama-3-70b", "q4_k_m")] * w70
    assert abs(rate70 / rate8 - 1) < 0.2
    hw = get_hardware("apple-m1-max")

    def share(model, fmt):  # fraction of the bandwidth roof reached
        return m1[(model, fmt)] / decode_tokens_per_s(get_model(model), hw, fmt, context=0, efficiency=IDEAL)
    assert share("llama-3-8b", "q4_k_m") < 0.5 and share("llama-3-70b", "q4_k_m") < 0.5
    assert share("llama-3-8b", "f16") > 0.7
    metal = P.get_profile("llama.cpp", "2024-05", "apple").efficiency
    assert metal.unpack_flops_per_weight > 0
    held = {(h["row"].model, h["row"].weight_format): h["error_pct"]
            for h in P.leave_one_device_out("llama.cpp", "2024-05", "apple")
            if h["row"].hardware == "apple-m1-max" and h["row"].phase == "decode"}
    without = P.fit_rows([r for r in P._rows_of("llama.cpp", "2024-05", "apple") if r.hardware != "apple-m1-max"],
                         "apple", "llama.cpp", version="2024-05")
    without = replace(without, unpack_flops_per_weight=0.0)
    r70 = next(r for r in t.rows if r.hardware == "apple-m1-max" and r.model == "llama-3-70b" and r.phase == "decode")
    assert abs(held[("llama-3-70b", "q4_k_m")]) < abs(100 * (P.predict_row(r70, without) / r70.tokens_per_s - 1))


def test_apple_2024_the_m1_row_informs_the_unpacking_cost_honestly(report):
    """The M1 (7-core GPU) row of the May 2024 Metal table is the second chip of the M1 GPU generation and
    the smallest of the table: its Q4_K_M decode is unpacking-bound in the profile (compute term above the
    memory term). Held out, it is predicted within 10 %. The goal is met on the ten rows the table had
    without it (not by the new row's own error), and leaving the M1 out of every fold makes the M1 Max's
    held-out errors larger: the small chip is what tells the fit how expensive unpacking is."""
    import numpy as np

    from llmlab.cost import decode_step

    key = ("llama.cpp", "2024-05", "apple")
    held = report["profiles"][key]["held_out"]
    m1 = [h for h in held if h["row"].hardware == "apple-m1-7c"]
    assert {h["row"].phase for h in m1} == {"decode", "prefill"}
    assert all(abs(h["error_pct"]) < 10.0 for h in m1)
    step = decode_step(get_model("llama-3-8b"), get_hardware("apple-m1-7c"), "q4_k_m", 256,
                       efficiency=P.get_profile(*key).efficiency)
    assert step.compute_s > step.memory_s
    others = [abs(h["error_pct"]) for h in held if h["row"].phase == "decode" and h["row"].hardware != "apple-m1-7c"]
    assert len(others) == 10 and np.median(others) <= 10.0

    rows = [r for r in P._rows_of(*key) if r.hardware != "apple-m1-7c"]

    def m1_max_errors(train_rows):
        eff = P.fit_rows([r for r in train_rows if r.hardware != "apple-m1-max"], "apple", "llama.cpp", version="2024-05")
        return [abs(P.predict_row(r, eff) / r.tokens_per_s - 1) for r in rows
                if r.hardware == "apple-m1-max" and r.phase == "decode" and r.weight_format == "q4_k_m"]
    with_m1 = m1_max_errors(P._rows_of(*key))
    without_m1 = m1_max_errors(rows)
    assert max(with_m1) < max(without_m1) and sum(with_m1) < sum(without_m1)


def test_the_default_efficiency_is_the_newest_profile():
    import llmlab.cost as C

    newest = P.get_profile("llama.cpp", hardware="nvidia").efficiency
    for f in P._EFF_FIELDS:
        assert getattr(C.DEFAULT_EFFICIENCY, f) == getattr(newest, f), f
    assert C.LLAMA_CPP_CUDA_2023_12.mmq_flops_per_sm_cycle is None  # the first fit stays for comparison


def test_two_years_of_software_move_prefill_far_more_than_decode(report):
    """Leave one table out: the December 2023 profile on the May 2024 CUDA table."""
    loto = {x["table"]: x for x in report["loto"]}
    newer = loto["xd-llama3-cuda-2024-05"]
    assert newer["prefill"]["median_pct"] > 30.0 > newer["decode"]["median_pct"]
    assert {"xd-llama2-cuda-2023-12", "xd-llama2-metal-2023-12", "xd-llama3-metal-2024-05"} <= set(loto)


def test_single_device_runtimes_say_what_they_could_not_validate(report):
    vllm = report["profiles"][("vllm", "2024-01", "nvidia")]
    assert "one device" in vllm["note"] and vllm["bands"]["decode"] is None
    mlx = report["profiles"][("mlx", "2024-12", "apple")]
    assert mlx["method"].startswith("leave-one-row-out") and mlx["efficiency"].bandwidth <= 1.0
    hf = report["profiles"][("transformers", "2024-01", "nvidia")]
    assert hf["bands"]["decode"] is not None and hf["bands"]["decode"].method.startswith("leave-one-row-out")
    assert hf["bands"]["prefill"] is None


# transformers 2024-01 (premAI A100, float32 and float16 rows, one device): leave-one-row-out decode
# median 5.8 % since the host overhead overlaps the GPU's work (27.1 % with the overhead added to it).
DOCUMENTED_HF_LORO_DECODE = 10.0


def test_transformers_decode_is_host_bound_and_within_its_documented_bound(report):
    """premAI's transformers rows: float32 reads twice the bytes of float16 and is only 6 % slower, so
    batch-1 eager generate is not memory-bound. With the host overhead overlapping the GPU (a step
    is max(device, host)) each row predicts the other within the goal."""
    rows = {r.weight_format: r for r in report["profiles"][("transformers", "2024-01", "nvidia")]["rows"]}
    assert set(rows) == {"fp32", "fp16"}
    assert rows["fp16"].tokens_per_s / rows["fp32"].tokens_per_s < 1.1
    hf = report["profiles"][("transformers", "2024-01", "nvidia")]
    assert hf["efficiency"].overhead_overlaps and hf["efficiency"].layer_overhead_s > 0
    s = hf["heldout"]["decode"]
    assert s["n"] == 2 and s["median_pct"] <= DOCUMENTED_HF_LORO_DECODE, s
    band = P.get_profile("transformers", "2024-01", "nvidia").bands["decode"]
    assert band.median_pct == pytest.approx(s["median_pct"], abs=0.3)
    assert "fewer than 3" in hf["note"] and "max(device, host)" in hf["note"]


def test_an_additive_overhead_misses_the_transformers_rows(monkeypatch):
    """The model the profile replaced: overhead added to the memory time cannot fit both rows."""
    monkeypatch.setitem(P._STRUCTURE, "transformers", {**P._STRUCTURE["transformers"], "overhead_overlaps": False})
    held = P._leave_one_row_out("transformers", "2024-01", "nvidia")
    errs = sorted(abs(h["error_pct"]) for h in held)
    assert len(errs) == 2 and errs[0] > 15.0


def test_vllm_2024_has_too_few_rows_for_a_band_and_its_drift_to_the_2026_tables(report):
    """One fitted vLLM row (January 2024): no band, said in the note. The 2026 tables (vLLM 0.21-0.25)
    were never fitted on by it; it predicts the H100 row 15.7 % too slow (measured when written):
    vLLM got faster there."""
    v = report["profiles"][("vllm", "2024-01", "nvidia")]
    assert len(v["rows"]) == 1 and v["bands"]["decode"] is None and "fewer than 3" in v["note"]
    drift = {(x["table"], x["profile"]): x for x in report["drift"]}
    h100 = drift[("yobitel-h100-vllm-2026-05", ("vllm", "2024-01", "nvidia"))]
    assert h100["decode"]["n"] == 1 and 10.0 < h100["decode"]["median_pct"] < 25.0
    assert h100["decode"]["bias_pct"] < 0  # predicted slower than measured
    back = drift[("prem-a100-2024-01", ("vllm", "2026-05", "nvidia"))]
    assert back["decode"]["n"] == 1 and back["prefill"] is None


# vllm 2026-05: one row on each of three GPUs (H100 SXM, A100 40GB, RTX 4090), three independent tables;
# leave-one-device-out decode median 8.4 %, p90 11.9 % (measured when written): the goal (<= 10 %) on
# three held-out rows only. No prefill rows were found (examined_sources), so no prefill band.
DOCUMENTED_VLLM_2026_LODO_DECODE = 10.0


def test_vllm_2026_decode_band_is_leave_one_device_out_within_the_goal(report):
    key = ("vllm", "2026-05", "nvidia")
    p = report["profiles"][key]
    assert p["method"] == "leave-one-device-out"
    devices = {r.hardware for r in p["rows"]}
    assert devices == {"h100-sxm", "a100-40gb-sxm", "rtx-4090"} and len({r.table for r in p["rows"]}) == 3
    s = p["heldout"]["decode"]
    assert s["n"] == 3 and s["median_pct"] <= DOCUMENTED_VLLM_2026_LODO_DECODE, s
    assert p["heldout"]["prefill"] is None and p["bands"]["prefill"] is None
    band = P.get_profile(*key).bands["decode"]
    assert band.method == "leave-one-device-out" and band.n == 3
    assert band.median_pct == pytest.approx(s["median_pct"], abs=0.3) and band.p90_pct >= band.median_pct
    assert "weak evidence" in p["note"] and "examined_sources" in p["note"]
    # every held-out device is predicted by a fit that never saw it: a refit on all three is closer
    assert p["fit"]["decode"]["median_pct"] < s["median_pct"]


def test_transformers_2024_misses_another_table_of_its_runtime(report):
    """premAI's Mistral-7B table (a check, never fitted on; CUDA 12.1, a later run) is 15-20 % slower than
    the host-bound 2024-01 profile predicts: the profile's 5.8 % band, from leaving out one of two rows of one
    table, understates the error on another run (17.7 % median, measured when written)."""
    check = {c["table"]: c for c in report["check"]}["prem-mistral-a100-2024"]
    assert check["profile"] == ("transformers", "2024-01", "nvidia")
    assert check["decode"]["n"] == 2 and 10.0 < check["decode"]["median_pct"] < 25.0
    assert check["decode"]["bias_pct"] > 0  # predicted faster than measured
    assert check["decode"]["median_pct"] > P.get_profile("transformers", "2024-01", "nvidia").bands["decode"].p90_pct


def test_examined_sources_record_every_vllm_and_transformers_table_and_the_prefill_search():
    sources = P.examined_sources()
    used = {e.table for e in sources if e.verdict == "used"}
    for t in P.load_tables():
        if {r.runtime for r in t.rows} & {"vllm", "transformers"}:
            assert t.id in used, t.id
    assert all(e.reason.strip() and e.source.strip() for e in sources)
    assert sum(e.verdict == "rejected" for e in sources) >= 10
    # transformers and vLLM prefill: searched twice (the second search, December 2026, looked at 32 more
    # sources for either runtime), nothing usable, hence no band
    for runtime, version in (("transformers", "2024-01"), ("vllm", "2026-05")):
        searched = [e for e in sources if e.runtime == runtime and e.phase == "prefill"]
        assert len(searched) >= 10 and all(e.verdict == "rejected" for e in searched), runtime
        assert P.get_profile(runtime, version, "nvidia").bands["prefill"] is None


def test_a_prefill_band_exists_only_where_prefill_rows_were_held_out_and_its_absence_is_explained(report):
    """No profile carries a prefill band it did not earn: the stored band is there exactly when the
    profile was fitted on prefill rows that could be held out; where there are none, the search for
    them is on record (examined_sources) and the profile's note points there or says why."""
    sources = P.examined_sources()
    for key, p in report["profiles"].items():
        runtime, version, family = key
        has_rows = any(r.phase == "prefill" for r in p["rows"])
        stored = P.get_profile(runtime, version, family).bands["prefill"]
        assert (stored is not None) == (p["heldout"]["prefill"] is not None), key
        if stored is not None:
            assert has_rows and stored.n == p["heldout"]["prefill"]["n"], key
        if not has_rows and runtime != "llama.cpp":
            assert any(e.runtime == runtime and e.phase == "prefill" for e in sources), key
            assert "examined_sources" in p["note"] or "fewer than 3" in p["note"], key


def test_examined_sources_refuse_a_used_source_without_its_table(monkeypatch):
    data = P._read_json("throughput.json")
    bad = {**data, "examined_sources": [{"runtime": "vllm", "phase": "decode", "verdict": "used",
                                         "source": "somewhere", "reason": "a row", "table": "no-such-table"}]}
    monkeypatch.setattr(P, "_read_json", lambda name: bad if name == "throughput.json" else data)
    P.examined_sources.cache_clear()
    try:
        with pytest.raises(ValueError, match="names its table"):
            P.examined_sources()
    finally:
        monkeypatch.undo()
        P.examined_sources.cache_clear()


def test_the_2025_profile_says_why_it_borrows_the_fp16_prefill_factor():
    p = P.get_profile("llama.cpp", "2025-08", "nvidia")
    assert "[assumption]" in p.provenance and "cuBLAS" in p.provenance and "does not cover fp16 prefill" in p.provenance
    assert p.efficiency.compute == P.get_profile("llama.cpp", "2024-05", "nvidia").efficiency.compute


def test_get_profile_defaults_to_the_newest_and_knows_ollama_and_mlx():
    p = P.get_profile("llama.cpp", hardware=get_hardware("rtx-4090"))
    assert p.version == "2025-08" and p.family == "nvidia"
    assert P.get_profile("ollama", "2023-12", "apple") == P.get_profile("llama.cpp", "2023-12", "apple")
    assert P.get_profile("llama.cpp", hardware="apple-m2-ultra").family == "apple"
    mlx = P.get_profile("mlx", hardware="apple-m3-max")
    assert mlx.version == "2024-12" and "one device" in mlx.provenance
    with pytest.raises(ValueError, match="no mlx profile for nvidia"):
        P.get_profile("mlx", hardware="rtx-4090")
    with pytest.raises(ValueError, match="calibrate"):
        P.get_profile("transformers", hardware="laptop-cpu-ddr5")
    with pytest.raises(ValueError, match="unknown runtime"):
        P.get_profile("tensorflow")
    with pytest.raises(ValueError, match="versions"):
        P.get_profile("llama.cpp", "2019-01", "nvidia")


def test_a_prediction_carries_its_band():
    spec, hw = get_model("llama-3-8b"), get_hardware("rtx-4090")
    d = P.predict_speed(spec, hw, "decode", "q4_k_m", tokens=512, version="2024-05")
    assert d.band is not None and d.low < d.tokens_per_s < d.high
    assert d.band.interval(d.tokens_per_s) == (d.low, d.high)
    measured = 130.58  # xd-llama3-cuda-2024-05, in the fit: inside its own band
    assert d.low <= measured <= d.high
    v = P.predict_speed(spec, get_hardware("a100-80gb-sxm"), "decode", "fp16", runtime="vllm", version="2024-01")
    assert v.band is None and v.low is None and "no held-out" in str(v)
    v26 = P.predict_speed(spec, get_hardware("a100-80gb-sxm"), "decode", "fp16", runtime="vllm")
    assert v26.profile.version == "2026-05" and v26.band.method == "leave-one-device-out"
    assert P.predict_speed(spec, get_hardware("a100-80gb-sxm"), "prefill", "fp16", runtime="vllm").band is None
    with pytest.raises(ValueError):
        P.predict_speed(spec, hw, "train")
    with pytest.raises(ValueError):
        P.predict_speed(spec, hw, "decode", tokens=0)


def test_software_change_on_the_same_gpu():
    rows = P.software_change(get_model("llama-2-7b"), get_hardware("rtx-4090"), "f16")
    assert [v for v, _, _ in rows] == ["2023-12", "2024-05", "2025-08"]
    (_, d0, p0), (_, d1, p1), _ = rows
    assert p1.tokens_per_s > 1.3 * p0.tokens_per_s  # prompt processing got much faster
    assert abs(d1.tokens_per_s / d0.tokens_per_s - 1) < 0.15  # decode was already at the memory wall


def test_fit_recovers_known_factors_from_synthetic_rows():
    truth = replace(P._start("llama.cpp"), bandwidth=0.8, layer_overhead_cycles=150_000.0, compute=0.4)
    rows = [r for r in P.load_tables()[0].rows if r.hardware in ("rtx-4090", "a100-80gb-pcie", "rtx-a6000")]
    synthetic = [replace(r, tokens_per_s=P.predict_row(r, truth)) for r in rows]
    fitted = P.fit_rows(synthetic, "nvidia", "llama.cpp")
    assert fitted.bandwidth == pytest.approx(0.8, abs=0.01)
    assert fitted.layer_overhead_cycles == pytest.approx(150_000, rel=0.03)
    assert fitted.compute == pytest.approx(0.4, abs=0.01)


def test_quant_compute_slows_only_in_kernel_quantised_prefill():
    spec = get_model("llama-2-7b")
    apple, nvidia = get_hardware("apple-m2-ultra"), get_hardware("rtx-4090")
    metal = P.get_profile("llama.cpp", "2024-05", "apple").efficiency
    assert metal.quant_compute < 1.0
    q4 = prefill_tokens_per_s(spec, apple, 512, "q4_0", efficiency=metal)
    f16 = prefill_tokens_per_s(spec, apple, 512, "f16", efficiency=metal)
    assert q4 < f16
    same = replace(metal, quant_compute=1.0)
    assert prefill_tokens_per_s(spec, apple, 512, "q4_0", efficiency=same) == pytest.approx(
        prefill_tokens_per_s(spec, apple, 512, "f16", efficiency=same), rel=0.02)
    cuda = P.get_profile("llama.cpp", "2024-05", "nvidia").efficiency
    assert prefill_tokens_per_s(spec, nvidia, 512, "f16", efficiency=replace(cuda, quant_compute=0.5)) == \
        prefill_tokens_per_s(spec, nvidia, 512, "f16", efficiency=cuda)
    with pytest.raises(ValueError):
        replace(metal, quant_compute=0.0)


def test_predict_request_gives_seconds_with_bands():
    import llmlab.cost as C

    spec, hw = get_model("llama-3.1-8b"), get_hardware("rtx-4090")
    r = C.predict_request(spec, hw, 2000, 100, "f16")
    g = C.generation(spec, hw, 2000, 100, "f16", efficiency=r["profile"].efficiency)
    assert r["ttft_s"] == pytest.approx(g["ttft_s"]) and r["decode_s"] == pytest.approx(g["decode_s"])
    lo, hi = r["ttft_band"]
    assert lo < r["ttft_s"] < hi
    assert r["total_band"][0] < r["total_s"] < r["total_band"][1]
    e = r["profile"].bands["decode"].p90_pct / 100
    assert r["decode_band"] == pytest.approx((r["decode_s"] * (1 - e), r["decode_s"] * (1 + e)))
    v = C.predict_request(spec, get_hardware("a100-80gb-sxm"), 100, 10, "fp16", runtime="vllm", version="2024-01")
    assert v["decode_band"] is None and v["total_band"] is None
    v26 = C.predict_request(spec, get_hardware("a100-80gb-sxm"), 100, 10, "fp16", runtime="vllm")
    assert v26["decode_band"] is not None and v26["ttft_band"] is None and v26["total_band"] is None


def test_lab08_states_the_profiles_bandwidth_range():
    """lab08's sentence «entre el X y el Y % del ancho de banda» is the range of the shipped profiles' bandwidth factors."""
    import re
    from pathlib import Path

    script = next(Path(__file__).resolve().parents[1].glob("solutions/lab08-*/lab08-*.py")).read_text(encoding="utf-8")
    text = " ".join(line.lstrip("# ") for line in script.splitlines())
    ((low, high),) = re.findall(r"entre el (\d+) y el (\d+) % del ancho de banda", text)
    factors = [p.efficiency.bandwidth for p in P.profiles()]
    assert (int(low), int(high)) == (round(100 * min(factors)), round(100 * max(factors)))
