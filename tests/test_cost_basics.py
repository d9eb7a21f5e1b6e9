"""Chapter 01-03 formulas of llmlab.cost against the textbook's worked numbers (syllabus §1.3, §1.8)."""

import pytest

from llmlab.cost import (
    BYTES_PER_PARAM,
    attention_cost,
    attention_flops,
    choose_model,
    fits_on_gpu,
    flops_per_token_ratio,
    inference_memory_gb,
    kv_cache_bytes,
    linear_param_count,
    mlp_param_count,
    moe_active_fraction,
    moe_weights_and_flops,
    param_breakdown,
    transformer_param_estimate,
    weight_memory,
)


def test_linear_param_count_book_example():
    assert linear_param_count(4, 3) == 15  # 12 weights + 3 biases (E1.3)
    assert linear_param_count(4, 3, bias=False) == 12
    assert linear_param_count(4096, 4096, bias=False) == 4096 * 4096


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4"])
def test_linear_param_count_rejects_bad_sizes(bad):
    with pytest.raises((ValueError, TypeError)):
        linear_param_count(bad, 3)


def test_transformer_param_estimate_is_exact_int():
    n = transformer_param_estimate(32, 4096)
    assert n == 6_442_450_944 and isinstance(n, int)  # E1.4
    # squared in d, linear in L: the 12*L*d and 12*L**2*d mutants differ
    assert transformer_param_estimate(64, 4096) == 2 * n
    assert transformer_param_estimate(32, 8192) == 4 * n


def test_param_breakdown_mlp_is_two_thirds():
    b = param_breakdown(32, 4096)
    assert b == {"attn": 67_108_864, "mlp": 134_217_728, "per_layer": 201_326_592, "total": 6_442_450_944}
    assert b["mlp"] / b["per_layer"] == pytest.approx(2 / 3, abs=1e-15)


def test_mlp_param_count_plain_and_gated():
    assert mlp_param_count(4096) == 8 * 4096**2
    assert mlp_param_count(4096, 11008, gated=True) == 3 * 4096 * 11008  # Llama-2-7B's MLP
    assert mlp_param_count(768, bias=True) == 2 * 768 * 3072 + 3072 + 768  # GPT-2's MLP


@pytest.mark.parametrize(
    "dtype, gb, gib",
    [("fp16", 14.0, 13.038516), ("bf16", 14.0, 13.038516), ("int8", 7.0, 6.519258),
     ("4bit", 3.5, 3.259629), ("int4", 3.5, 3.259629), ("fp32", 28.0, 26.077032)],
)
def test_weight_memory_7b_table(dtype, gb, gib):
    got_gb, got_gib = weight_memory(7e9, dtype)  # E1.5
    assert got_gb == pytest.approx(gb, abs=1e-9)
    assert got_gib == pytest.approx(gib, abs=1e-6)


def test_weight_memory_quantised_formats_cost_their_scales():
    assert BYTES_PER_PARAM["q8_0"] == 34 / 32  # 32 int8 + one fp16 scale per block
    assert BYTES_PER_PARAM["q4_0"] == 18 / 32  # 16 bytes of nibbles + one fp16 scale
    assert BYTES_PER_PARAM["gptq-4bit-g128"] == (4 + 20 / 128) / 8
    assert weight_memory(7e9, "q4_0")[0] == pytest.approx(3.9375, abs=1e-12)
    assert weight_memory(7e9, "Q4_0")[0] == pytest.approx(3.9375, abs=1e-12)  # case-insensitive


def test_weight_memory_unknown_dtype_lists_valid_names():
    with pytest.raises(ValueError, match="fp16") as err:
        weight_memory(7e9, "fp12")
    assert "int8" in str(err.value) and "4bit" in str(err.value)
    with pytest.raises(TypeError):
        weight_memory(7e9, 2)
    with pytest.raises(ValueError):
        weight_memory(-1, "fp16")


def test_kv_cache_bytes_book_example():
    base = kv_cache_bytes(32, 4096, 4096)
    assert base == 2_147_483_648 == 2 * 2**30  # E1.6: exactly 2 GiB
    assert kv_cache_bytes(32, 8192, 4096) == 2 * base  # doubling the context doubles it
    assert kv_cache_bytes(32, 4096, 4096, batch=3) == 3 * base
    assert kv_cache_bytes(32, 4096, 4096, bytes_per_value=1) == base // 2  # fp8
    assert kv_cache_bytes(32, 4096, 4096, n_heads=32, n_kv_heads=8) == 536_870_912  # GQA /4
    assert kv_cache_bytes(32, 4096, 4096, n_heads=32, n_kv_heads=4) == 268_435_456  # /8
    assert kv_cache_bytes(32, 4096, 4096, n_heads=32, n_kv_heads=1) == 67_108_864  # MQA /32
    assert kv_cache_bytes(32, 0, 4096) == 0


def test_kv_cache_bytes_validation():
    with pytest.raises(ValueError, match="both"):
        kv_cache_bytes(32, 4096, 4096, n_heads=32)
    with pytest.raises(ValueError, match="divide"):
        kv_cache_bytes(32, 4096, 4096, n_heads=32, n_kv_heads=5)
    with pytest.raises(ValueError):
        kv_cache_bytes(32, 4096, 4096, n_heads=8, n_kv_heads=16)
    with pytest.raises(ValueError):
        kv_cache_bytes(32, 4096, 4096, bytes_per_value=0)
    with pytest.raises(TypeError):
        kv_cache_bytes(32.0, 4096, 4096)
    with pytest.raises(ValueError):
        kv_cache_bytes(32, -1, 4096)


def test_inference_memory_and_fit_book_example():
    kv_gb = 2 * 32 * 4096 * 4096 * 2 / 1e9
    fp16 = inference_memory_gb(14.0, kv_gb)
    four = inference_memory_gb(3.5, kv_gb)
    assert fp16 == pytest.approx(20.184, abs=1e-3) and round(fp16, 1) == 20.2  # E1.7
    assert four == pytest.approx(7.059, abs=1e-3) and round(four, 1) == 7.1
    # the overhead applies to weights + KV, not to the weights only (19.65 would be the mutant)
    assert fp16 != pytest.approx(14.0 * 1.25 + kv_gb, abs=0.1)
    assert not fits_on_gpu(14.0, kv_gb, 8)
    assert fits_on_gpu(3.5, kv_gb, 8)
    assert fits_on_gpu(14.0, kv_gb, 24)
    assert inference_memory_gb(10, 0, overhead=0) == 10
    with pytest.raises(ValueError):
        inference_memory_gb(-1, 1)
    with pytest.raises(ValueError):
        fits_on_gpu(1, 1, 0)


def test_moe_active_fraction():
    assert moe_active_fraction(600e9, 30e9) == pytest.approx(0.05, abs=1e-15)
    assert moe_active_fraction(70e9, 70e9) == 1.0  # dense: everything is active
    assert moe_active_fraction(671e9, 37e9) == pytest.approx(0.055142, abs=1e-6)  # DeepSeek-V3
    assert flops_per_token_ratio(70e9, 13e9) == pytest.approx(70 / 13, rel=1e-12)
    with pytest.raises(ValueError, match="exceed"):
        moe_active_fraction(30e9, 600e9)


CANDIDATES = [
    {"name": "7B-fp16", "n_params": 7e9, "dtype": "fp16", "kv_gb": 2.147483648, "quality": 3},
    {"name": "7B-4bit", "n_params": 7e9, "dtype": "4bit", "kv_gb": 2.147483648, "quality": 2},
    {"name": "1B-fp16", "n_params": 1e9, "dtype": "fp16", "kv_gb": 0.5, "quality": 1},
]


def test_choose_model_respects_the_memory_budget():
    assert choose_model(CANDIDATES, gpu_gb=8) == "7B-4bit"  # not the bigger FP16 (M1.3)
    assert choose_model(CANDIDATES, gpu_gb=24) == "7B-fp16"
    assert choose_model(CANDIDATES, gpu_gb=4) == "1B-fp16"
    with pytest.raises(ValueError, match="no candidate fits"):
        choose_model(CANDIDATES, gpu_gb=1)
    with pytest.raises(ValueError, match="missing"):
        choose_model([{"name": "x"}], gpu_gb=8)
    with pytest.raises(ValueError):
        choose_model([], gpu_gb=8)


def test_attention_cost_is_quadratic():
    assert attention_cost(1000) == 1_000_000
    assert attention_cost(2000) / attention_cost(1000) == 4
    assert attention_cost(10, d_k=64) == 6400
    assert attention_flops(1000, 64, 64) == 2 * 1000**2 * 64 * 2
    assert attention_flops(2000, 64, 64) == 4 * attention_flops(1000, 64, 64)
    assert attention_flops(4, 2, 3) == 2 * 16 * 2 + 2 * 16 * 3


def test_moe_weights_and_flops_memory_follows_total_compute_follows_active():
    assert moe_weights_and_flops(600e9, 30e9) == pytest.approx((1200.0, 6e10), rel=1e-12)
    assert moe_weights_and_flops(70e9, 70e9) == pytest.approx((140.0, 1.4e11), rel=1e-12)  # dense
    assert moe_weights_and_flops(46.7e9, 12.9e9, "4bit") == pytest.approx((23.35, 2.58e10), rel=1e-12)
    for bad in [(30e9, 600e9), (0, 0), (10e9, -1e9)]:
        with pytest.raises(ValueError):
            moe_weights_and_flops(*bad)
    with pytest.raises(ValueError):
        moe_weights_and_flops(10e9, 1e9, "fp12")
