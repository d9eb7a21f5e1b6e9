"""Measurement helpers (tiny sizes, no timing assertions) and the efficiency fit."""

from dataclasses import replace

import numpy as np
import pytest

from llmlab.cost import DEFAULT_EFFICIENCY, LLAMA_CPP_CUDA_2023_12, Efficiency, Hardware
from llmlab.cost.calibrate import (
    cpu_hardware,
    layer_overhead_s,
    measure_llmlab_speed,
    measure_matmul_tflops,
    measure_matvec_bandwidth_gb_s,
    measure_read_bandwidth_gb_s,
    spec_from_llmlab,
    time_it,
)
from llmlab.cost.fit import fit_efficiency, nelder_mead, predict, score_efficiency
from llmlab.cost.measured import LLAMA2_NVIDIA, LLAMA3_NVIDIA, Measurement


def test_time_it_returns_the_median():
    calls = []
    assert time_it(lambda: calls.append(1), repeats=3, warmup=2) >= 0
    assert len(calls) == 5
    with pytest.raises(ValueError):
        time_it(lambda: None, repeats=0)
    with pytest.raises(TypeError):
        time_it(3)


def test_measurements_are_positive_and_build_a_hardware():
    assert measure_matmul_tflops(64, repeats=1) > 0
    assert measure_read_bandwidth_gb_s(1, repeats=1) > 0
    assert measure_matvec_bandwidth_gb_s(1, repeats=1) > 0
    hw = cpu_hardware(matmul_n=64, bandwidth_mb=1, repeats=1)
    assert isinstance(hw, Hardware) and hw.kind == "cpu" and hw.memory_gb > 0
    assert "measured" in hw.sources["bandwidth_gb_s"]
    with pytest.raises(ValueError):
        measure_matmul_tflops(4)
    with pytest.raises(ValueError):
        measure_read_bandwidth_gb_s(0)


model = pytest.importorskip("llmlab.model")


@pytest.mark.parametrize("style", ["llama_style", "gpt2_style"])
def test_spec_from_llmlab_counts_like_the_model(style):
    kw = dict(vocab_size=97, d_model=32, n_layers=3, n_heads=4, max_seq_len=64)
    if style == "llama_style":
        kw["n_kv_heads"] = 2
    cfg = getattr(model.ModelConfig, style)(**kw)
    spec = spec_from_llmlab(cfg)
    assert spec.param_count() == model.count_parameters(model.Transformer(cfg))
    with pytest.raises(TypeError):
        spec_from_llmlab({"d_model": 32})


def test_measure_llmlab_speed_and_overhead_on_a_tiny_model():
    cfg = model.ModelConfig.llama_style(vocab_size=64, d_model=32, n_layers=2, n_heads=4, max_seq_len=64)
    speed = measure_llmlab_speed(model.Transformer(cfg), prompt_tokens=16, decode_tokens=4, repeats=1)
    assert speed["prefill_tokens_per_s"] > 0 and speed["decode_tokens_per_s"] > 0
    assert layer_overhead_s(cfg, context=8, steps=4, repeats=1) > 0
    with pytest.raises(ValueError):
        measure_llmlab_speed(model.Transformer(cfg), prompt_tokens=60, decode_tokens=10)


def test_nelder_mead_finds_a_quadratic_minimum():
    x, fx = nelder_mead(lambda v: (v[0] - 3) ** 2 + 2 * (v[1] + 1) ** 2, [0.0, 0.0], step=[1.0, 1.0])
    assert np.allclose(x, [3, -1], atol=1e-3) and fx < 1e-6


@pytest.mark.slow
def test_fit_recovers_known_factors_from_synthetic_measurements():
    truth = replace(LLAMA_CPP_CUDA_2023_12, bandwidth=0.8, compute=0.4, layer_overhead_cycles=150_000.0)
    rows = [m for m in LLAMA2_NVIDIA if m.hardware in ("rtx-4090", "a100-80gb-pcie", "rtx-a6000")]
    synthetic = [replace(m, tokens_per_s=predict(m, truth)) for m in rows]
    fitted, report = fit_efficiency(synthetic)
    assert fitted.bandwidth == pytest.approx(0.8, abs=0.01)
    assert fitted.layer_overhead_cycles == pytest.approx(150_000, rel=0.03)
    assert fitted.compute == pytest.approx(0.4, abs=0.01)
    assert report["all"]["mape"] < 1.0


def test_fitted_defaults_are_the_fit_of_the_table():
    """LLAMA_CPP_CUDA_2023_12 must be what fit_efficiency gives on serving-facts §2b (its provenance)."""
    fitted, report = fit_efficiency(LLAMA2_NVIDIA)
    assert fitted.bandwidth == pytest.approx(LLAMA_CPP_CUDA_2023_12.bandwidth, abs=0.005)
    assert fitted.compute == pytest.approx(LLAMA_CPP_CUDA_2023_12.compute, abs=0.005)
    assert fitted.layer_overhead_cycles == pytest.approx(LLAMA_CPP_CUDA_2023_12.layer_overhead_cycles, rel=0.02)
    assert report["decode"]["mape"] < 8


def test_score_efficiency_and_measurement_validation():
    r = score_efficiency(LLAMA3_NVIDIA[:2])
    assert r["all"]["n"] == 2 and r["rows"][0]["predicted"] > 0
    with pytest.raises(ValueError):
        score_efficiency([])
    with pytest.raises(ValueError):
        Measurement("llama-2-7b", "rtx-4090", "train", "f16", 128, 10.0)
    with pytest.raises(ValueError):
        fit_efficiency([m for m in LLAMA2_NVIDIA if m.kind == "decode"])
    assert isinstance(LLAMA_CPP_CUDA_2023_12, Efficiency) and "serving-facts" in LLAMA_CPP_CUDA_2023_12.provenance
    assert isinstance(DEFAULT_EFFICIENCY, Efficiency) and "data/profiles.json" in DEFAULT_EFFICIENCY.provenance


def test_time_it_takes_a_clock_and_cpu_time_counts_only_this_process():
    import time

    ticks = iter(range(100))
    assert time_it(lambda: None, repeats=3, warmup=0, clock=lambda: next(ticks)) == 1
    assert time_it(lambda: time.sleep(0.02), repeats=1, warmup=0, clock=time.process_time) < 0.015
    with pytest.raises(TypeError):
        time_it(lambda: None, clock=3)


def test_transformers_speed_and_overhead_on_a_tiny_model():
    pytest.importorskip("transformers")
    from llmlab.convert_hf import to_hf
    from llmlab.cost.calibrate import hf_layer_overhead_s, measure_hf_speed

    cfg = model.ModelConfig.llama_style(vocab_size=64, d_model=32, n_layers=2, n_heads=4, max_seq_len=64)
    hf = to_hf(model.Transformer(cfg))
    speed = measure_hf_speed(hf, prompt_tokens=16, decode_tokens=4, repeats=1)
    assert speed["prefill_tokens_per_s"] > 0 and speed["decode_tokens_per_s"] > 0
    assert hf_layer_overhead_s(cfg, context=8, steps=4, repeats=1) > 0
    with pytest.raises(ValueError):
        measure_hf_speed(hf, prompt_tokens=60, decode_tokens=10)
    with pytest.raises(TypeError):
        measure_hf_speed(object())
