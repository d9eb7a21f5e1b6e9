"""The roofline: decode is bandwidth-bound (bytes of weights + KV per token), prefill compute-bound
(2 FLOPs per weight per token + attention); the fitted factors reproduce the published table."""

import math
from dataclasses import replace

import pytest

from llmlab.cost import (
    DEFAULT_EFFICIENCY,
    IDEAL,
    Efficiency,
    Hardware,
    arithmetic_intensity,
    attainable_tflops,
    decode_step,
    decode_tokens_per_s,
    expected_experts_touched,
    generation,
    get_hardware,
    get_model,
    prefill,
    prefill_time_s,
    prefill_tokens_per_s,
    roofline_time,
    ttft_s,
    weight_bytes,
)
from llmlab.cost.fit import score_efficiency
from llmlab.cost.measured import LLAMA2_NVIDIA, LLAMA3_NVIDIA

SYNTH = Hardware("synthetic", memory_gb=80, bandwidth_gb_s=1000, fp16_tflops=100)  # syllabus E7.12


def test_roofline_primitives_syllabus_numbers():
    assert 1 / roofline_time(0, 14e9, SYNTH) == pytest.approx(71.43, abs=0.01)  # 7B fp16 at 1 TB/s
    h100 = get_hardware("h100-sxm")
    assert 1 / roofline_time(0, 14e9, h100) == pytest.approx(239.3, abs=0.1)  # §S.3
    assert 1 / roofline_time(0, 3.5e9, h100) == pytest.approx(957.1, abs=0.1)
    assert SYNTH.ridge_point() == pytest.approx(100.0, rel=1e-12)  # FLOPs per byte
    assert h100.ridge_point() == pytest.approx(295.2, abs=0.1)
    assert roofline_time(2 * 7e9 * 10_000, 14e9, h100) == pytest.approx(0.1416, abs=1e-3)  # prefill 10k
    assert attainable_tflops(1.0, SYNTH) == pytest.approx(1.0, rel=1e-12)
    assert attainable_tflops(1e6, SYNTH) == pytest.approx(100.0, rel=1e-12)
    assert arithmetic_intensity(200, 100) == pytest.approx(2.0, rel=1e-12)
    with pytest.raises(ValueError):
        arithmetic_intensity(1, 0)


def test_decode_step_counts_weights_once_and_kv_per_sequence():
    spec = get_model("llama-2-7b")
    step = decode_step(spec, SYNTH, "fp16", context=4095, batch=8, efficiency=IDEAL)
    weights = weight_bytes(spec, "fp16") - 2 * 32000 * 4096 + 8 * 4096 * 2  # embedding: one row per token
    kv = 8 * 4096 * 524_288  # each sequence reads its 4095 cached tokens + the new one
    assert step.bytes == pytest.approx(weights + kv, rel=1e-12)
    assert step.memory_s == pytest.approx((weights + kv) / 1e12, rel=1e-12)
    assert step.total_s == pytest.approx(step.memory_s, rel=1e-12) and step.overhead_s == 0
    assert step.bound == "memory"
    # §S.3: 14 + 8 x 2.147 = 31.18 GB per step -> ~859 tok/s in aggregate (ours: embedding not re-read)
    assert 8 / step.total_s == pytest.approx(8 / 31.18e-3, rel=0.03)


def test_decode_intensity_grows_with_batch_until_compute_bound():
    spec, a100 = get_model("llama-2-7b"), get_hardware("a100-80gb-sxm")
    ai = [decode_step(spec, a100, "fp16", 16, b, efficiency=IDEAL).arithmetic_intensity for b in (1, 8, 64)]
    assert ai[0] == pytest.approx(1.0, rel=0.05) and ai[1] == pytest.approx(8, rel=0.05)
    assert decode_step(spec, a100, "fp16", 16, 1, efficiency=IDEAL).bound == "memory"
    assert decode_step(spec, a100, "fp16", 16, 512, efficiency=IDEAL).bound == "compute"
    # aggregate throughput grows with the batch while each user slows down
    one, many = (decode_tokens_per_s(spec, a100, "fp16", 1024, b) for b in (1, 32))
    assert many < one and 32 * many > 5 * one


def test_quantisation_speeds_up_decode_by_the_byte_ratio():
    spec = get_model("llama-2-7b")
    f16 = decode_tokens_per_s(spec, SYNTH, "f16", context=0, efficiency=IDEAL)
    q4 = decode_tokens_per_s(spec, SYNTH, "q4_0", context=0, efficiency=IDEAL)
    assert q4 / f16 == pytest.approx(16 / 4.5, rel=0.05)


def test_moe_decode_reads_only_the_touched_experts():
    spec = get_model("mixtral-8x7b-v0.1")
    assert expected_experts_touched(spec, 1) == pytest.approx(2.0, abs=1e-12)
    assert expected_experts_touched(spec, 1000) == pytest.approx(8.0, abs=1e-9)
    assert expected_experts_touched(get_model("llama-2-7b"), 7) == 1.0
    step = decode_step(spec, SYNTH, "fp16", context=0, batch=1, efficiency=IDEAL)
    active = spec.active_param_count() - 32000 * 4096  # embedding: one row only
    assert step.bytes == pytest.approx(2 * active + 2 * 4096 + 131_072, rel=1e-9)
    assert step.bytes < 0.3 * weight_bytes(spec, "fp16")


def test_sliding_window_caps_decode_kv_reads():
    spec = get_model("mistral-7b-v0.1")
    assert decode_step(spec, SYNTH, "fp16", 8000).bytes == decode_step(spec, SYNTH, "fp16", 20000).bytes
    full = get_model("llama-3-8b")
    assert decode_step(full, SYNTH, "fp16", 8000).bytes < decode_step(full, SYNTH, "fp16", 20000).bytes


def test_prefill_is_compute_bound_and_chunked():
    spec, a100 = get_model("llama-2-7b"), get_hardware("a100-80gb-sxm")
    p = prefill(spec, a100, 512, "fp16", efficiency=IDEAL)
    assert p.bound == "compute" and p.arithmetic_intensity > 300
    assert p.flops == spec.forward_flops(512)
    assert p.total_s == pytest.approx(spec.forward_flops(512) / 312e12, rel=1e-9)
    # 2048 tokens go through in 4 chunks of 512 and cost more than 4x512 (longer attention)
    long = prefill(spec, a100, 2048, "fp16", efficiency=IDEAL)
    assert long.flops == spec.forward_flops(2048)
    assert long.total_s > 4 * p.total_s
    assert ttft_s(spec, a100, 2048, "fp16", efficiency=IDEAL) == pytest.approx(long.total_s, rel=1e-12)
    assert prefill_time_s(spec, a100, 512, "fp16", efficiency=IDEAL) == pytest.approx(p.total_s, rel=1e-12)
    assert prefill_tokens_per_s(spec, a100, 512, "fp16", efficiency=IDEAL) == pytest.approx(512 / p.total_s, rel=1e-12)


def test_dequant_pass_slows_quantised_prefill():
    spec, g = get_model("llama-2-7b"), get_hardware("rtx-3090")
    from llmlab import cost as C

    old = C.LLAMA_CPP_CUDA_2023_12  # the cuBLAS era: quantised weights copied to fp16 before the GEMMs
    with_dequant = prefill_tokens_per_s(spec, g, 512, "q4_0", efficiency=old)
    without = prefill_tokens_per_s(spec, g, 512, "q4_0", efficiency=replace(old, prefill_dequant=False))
    assert with_dequant < without
    # the MMQ era (the default profile): no fp16 copy, the per-SM roof instead
    assert DEFAULT_EFFICIENCY.mmq_on(g) and not DEFAULT_EFFICIENCY.dequant_on(g)
    mmq = prefill_tokens_per_s(spec, g, 512, "q4_0")
    half = prefill_tokens_per_s(spec, g, 512, "q4_0", efficiency=replace(
        DEFAULT_EFFICIENCY, mmq_flops_per_sm_cycle=DEFAULT_EFFICIENCY.mmq_flops_per_sm_cycle / 2))
    assert 1.6 < mmq / half <= 2.0  # compute-bound: half the per-SM rate, about half the speed
    assert prefill_tokens_per_s(spec, g, 512, "f16") == pytest.approx(
        prefill_tokens_per_s(spec, g, 512, "f16", efficiency=replace(DEFAULT_EFFICIENCY, mmq_flops_per_sm_cycle=None)))
    assert without == pytest.approx(prefill_tokens_per_s(spec, g, 512, "f16", efficiency=old), rel=0.01)


def test_layer_overhead_uses_the_clock():
    eff = Efficiency(layer_overhead_cycles=1e6)
    assert eff.layer_overhead(get_hardware("a100-80gb-sxm")) == pytest.approx(1e6 / 1.41e9)
    assert eff.layer_overhead(SYNTH) == pytest.approx(1e6 / 1.5e9)  # fallback clock
    assert Efficiency(layer_overhead_s=2e-5, layer_overhead_cycles=1e6).layer_overhead(SYNTH) == pytest.approx(2e-5, rel=1e-12)
    spec = get_model("llama-2-7b")
    step = decode_step(spec, get_hardware("a100-80gb-sxm"), "f16", 0, efficiency=eff)
    assert step.overhead_s == pytest.approx(32 * 1e6 / 1.41e9)


def test_overlapping_host_overhead_takes_the_max_not_the_sum():
    """An eager framework's host time hides behind the GPU's queued work (max); on a CPU it adds."""
    spec, gpu = get_model("llama-2-7b"), get_hardware("a100-80gb-sxm")
    add = Efficiency(layer_overhead_s=1e-4)
    ovl = replace(add, overhead_overlaps=True)
    a = decode_step(spec, gpu, "f16", 0, efficiency=add)
    o = decode_step(spec, gpu, "f16", 0, efficiency=ovl)
    assert a.total_s == pytest.approx(a.memory_s + 32e-4)
    assert o.total_s == pytest.approx(max(o.memory_s, 32e-4)) and o.total_s < a.total_s
    big = replace(ovl, layer_overhead_s=1e-3)  # host-bound: the bytes no longer matter
    assert decode_step(spec, gpu, "fp32", 0, efficiency=big).total_s == decode_step(spec, gpu, "f16", 0, efficiency=big).total_s
    cpu = get_hardware("laptop-cpu-ddr5")
    c = decode_step(spec, cpu, "f16", 0, efficiency=ovl)
    assert c.total_s == pytest.approx(max(c.compute_s, c.memory_s) + 32e-4)
    # chunked prefill: the passes' totals add, each pass keeping its max
    pre = prefill(spec, gpu, 1024, "f16", efficiency=replace(big, ubatch=512))
    one = prefill(spec, gpu, 512, "f16", efficiency=replace(big, ubatch=512))
    assert pre.total_s == pytest.approx(2 * one.total_s, rel=0.05) and one.total_s >= one.overhead_s
    with pytest.raises(ValueError):
        Efficiency(overhead_overlaps="yes")


def test_generation_adds_ttft_and_growing_decode_steps():
    spec, g = get_model("llama-2-7b"), get_hardware("rtx-4090")
    r = generation(spec, g, prompt_tokens=100, new_tokens=11, weight_format="q4_0")
    steps = [decode_step(spec, g, "q4_0", c).total_s for c in range(100, 110)]
    assert r["ttft_s"] == pytest.approx(ttft_s(spec, g, 100, "q4_0"), rel=1e-12)
    assert r["decode_s"] == pytest.approx(sum(steps), rel=1e-12)
    assert r["total_s"] == pytest.approx(r["ttft_s"] + r["decode_s"], rel=1e-12)
    assert r["decode_tokens_per_s"] == pytest.approx(10 / sum(steps), rel=1e-12)
    tg = generation(spec, g, 0, 128, "q4_0")  # llama-bench tg128: 128 decode steps from empty
    assert tg["ttft_s"] == 0 and math.isfinite(tg["decode_tokens_per_s"])


def test_first_fit_reproduces_its_table():
    from llmlab.cost import LLAMA_CPP_CUDA_2023_12

    report = score_efficiency(LLAMA2_NVIDIA, LLAMA_CPP_CUDA_2023_12)
    assert report["decode"]["n"] == 15 and report["prefill"]["n"] == 12
    assert report["decode"]["mape"] < 8.0 and abs(report["decode"]["worst_pct"]) < 25
    assert report["prefill"]["mape"] < 35.0
    assert 0.9 < report["decode"]["geo_mean_ratio"] < 1.1
    # without the efficiency factors the roofline over-predicts batch-1 decode a lot
    ideal = score_efficiency(LLAMA2_NVIDIA, Efficiency(accumulate="fp16"))
    assert ideal["decode"]["geo_mean_ratio"] > 1.5


def test_default_efficiency_transfers_to_the_llama3_decode_table():
    report = score_efficiency(LLAMA3_NVIDIA, DEFAULT_EFFICIENCY)
    assert report["decode"]["mape"] < 15.0


def test_efficiency_and_argument_validation():
    with pytest.raises(ValueError):
        Efficiency(bandwidth=0)
    with pytest.raises(ValueError):
        Efficiency(accumulate="fp8")
    with pytest.raises(ValueError):
        Efficiency(ubatch=0)
    spec = get_model("gpt2")
    with pytest.raises(TypeError):
        decode_step("gpt2", SYNTH)
    with pytest.raises(ValueError):
        decode_step(spec, SYNTH, batch=0)
    with pytest.raises(ValueError):
        prefill(spec, SYNTH, 0)
    with pytest.raises(ValueError):
        generation(spec, SYNTH, 10, 0)
    with pytest.raises(ValueError, match="fp16"):
        decode_step(spec, Hardware("bw-only", 8, 100, None))


def test_chips_without_matrix_units_use_the_simd_compute_efficiency():
    from dataclasses import replace

    import llmlab.cost as C

    spec = C.get_model("llama-2-7b")
    apple, nvidia = C.get_hardware("apple-m2-ultra"), C.get_hardware("rtx-4090")
    eff = C.DEFAULT_EFFICIENCY
    assert eff.compute_for(apple) == eff.compute_simd and eff.compute_for(nvidia) == eff.compute
    # Prefill on Apple is compute-bound at compute_simd: halving it halves the speed.
    fast = C.prefill_tokens_per_s(spec, apple, weight_format="f16")
    slow = C.prefill_tokens_per_s(spec, apple, weight_format="f16", efficiency=replace(eff, compute_simd=eff.compute_simd / 2))
    assert slow / fast == pytest.approx(0.5, rel=0.05)
    # The fp16 copy of quantised weights (cuBLAS path, llama.cpp before MMQ) is a CUDA thing: Metal prefill
    # pays nothing for Q4_0.
    old = C.LLAMA_CPP_CUDA_2023_12
    assert old.dequant_on(nvidia) and not old.dequant_on(apple) and not eff.dequant_on(apple)
    assert C.prefill_tokens_per_s(spec, apple, weight_format="q4_0") == pytest.approx(fast, rel=0.02)
    assert (C.prefill_tokens_per_s(spec, nvidia, weight_format="q4_0", efficiency=old)
            < C.prefill_tokens_per_s(spec, nvidia, weight_format="f16", efficiency=old))
    with pytest.raises(ValueError):
        replace(eff, compute_simd=0.0)
