"""Chapter 07's serving budget (17.18 / 4.29 / 0.54 GB; 7.52 s vs 20.85 s) and its refinements."""

import pytest

from llmlab.cost import (
    api_cost,
    batched_decode,
    batching_curve,
    cost_per_million_tokens,
    energy_per_token_j,
    get_hardware,
    get_model,
    kv_bytes,
    kv_bytes_per_token,
    kv_gib_for_context,
    kv_mib_per_token,
    latency_percentiles,
    latency_with_users,
    max_concurrent_sequences,
    serving_memory_gb,
    shared_latency_s,
    total_latency_s,
    weight_memory_gb,
)


def test_kv_by_attention_type_chapter_07():
    # L=32, B=8, S=4096, d_h=128, fp16 (code at L3427-L3446)
    mha, gqa, mqa = (kv_bytes(32, 8, 4096, h, 128, 2) for h in (32, 8, 1))
    assert (mha, gqa, mqa) == (17_179_869_184, 4_294_967_296, 536_870_912)
    assert [round(x / 1e9, 2) for x in (mha, gqa, mqa)] == [17.18, 4.29, 0.54]
    assert mha / 2**30 == 16.0  # the same number in GiB (a GB/GiB mix-up gives 17.18 vs 16.00)
    assert kv_bytes(32, 4, 4096, 8, 128) == 2_147_483_648  # chapter 08's example


def test_kv_rule_of_thumb_guide():
    assert kv_bytes_per_token(32, 32, 128) == 524_288
    assert kv_mib_per_token(32, 32, 128) == 0.5  # exactly, in MiB (not 0.524 MB)
    assert kv_mib_per_token(32, 8, 128) == 0.125
    assert kv_mib_per_token(32, 32, 128, bytes_per_value=1) == 0.25  # fp8 KV halves it
    assert [kv_gib_for_context(t, 32, 32, 128) for t in (4096, 32768, 131072)] == [2.0, 16.0, 64.0]
    assert get_model("llama-2-7b").kv_bytes_per_token() == kv_bytes_per_token(32, 32, 128)


def test_weights_and_serving_memory():
    assert [weight_memory_gb(7e9, b) for b in (16, 8, 4)] == pytest.approx([14.0, 7.0, 3.5], abs=1e-12)
    mem = serving_memory_gb(7e9, 16, 32, 8, 4096, 32, 128)
    assert mem["total"] == pytest.approx(31.18, abs=0.005) and mem["kv"] > mem["weights"]  # KV outweighs weights
    assert serving_memory_gb(7e9, 16, 32, 8, 4096, 8, 128)["total"] == pytest.approx(18.29, abs=0.005)
    # 4-bit weights do not shrink an fp16 KV cache (GQA-8, 128K context)
    g5 = serving_memory_gb(7e9, 4, 32, 1, 131072, 8, 128)
    assert g5["total"] == pytest.approx(20.68, abs=0.005)


def test_max_concurrent_sequences_on_80gb():
    per_seq = [kv_bytes(32, 1, 4096, h, 128) / 1e9 for h in (32, 8, 1)]
    assert [max_concurrent_sequences(80, 14, kv) for kv in per_seq] == [30, 122, 983]
    assert max_concurrent_sequences(80, 90, per_seq[0]) == 0
    assert max_concurrent_sequences(80, 14, per_seq[0], reserve_frac=0.1) == 27
    with pytest.raises(ValueError):
        max_concurrent_sequences(80, 14, 0)


def test_latency_alone_and_shared_chapter_07():
    solo = total_latency_s(0.85, 300, 45)
    shared = shared_latency_s(0.85, 300, 180, 12)
    assert solo == pytest.approx(7.516667, abs=1e-6) and round(solo, 2) == 7.52
    assert shared == pytest.approx(20.85, abs=1e-9)
    assert shared / solo == pytest.approx(2.774, abs=1e-3)  # "almost triples"
    assert shared_latency_s(0.85, 300, 45, 1) == pytest.approx(solo, abs=1e-12)
    assert shared_latency_s(0.85, 300, 180, 24) > shared
    with pytest.raises(ValueError):
        shared_latency_s(0.85, 300, 180, 0)
    with pytest.raises(ValueError):
        total_latency_s(0.85, 300, 0)


def test_latency_percentiles_are_not_the_mean():
    samples = [0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5, 2.0, 3.5, 9.0]
    p = latency_percentiles(samples)
    assert p[50] == pytest.approx(1.25, abs=1e-9)
    assert p[95] == pytest.approx(6.525, abs=1e-9)
    assert p[99] == pytest.approx(8.505, abs=1e-9)
    with pytest.raises(ValueError):
        latency_percentiles([])


def test_batched_decode_throughput_grows_while_users_slow_down():
    spec, a100 = get_model("llama-2-7b"), get_hardware("a100-80gb-sxm")
    curve = batching_curve(spec, a100, batches=(1, 4, 16, 64), context=1024)
    agg = [c["aggregate_tokens_per_s"] for c in curve]
    user = [c["per_user_tokens_per_s"] for c in curve]
    assert agg == sorted(agg) and user == sorted(user, reverse=True)
    assert user[1] > user[0] / 4  # far better than a fixed capacity split four ways
    one = batched_decode(spec, a100, 1, 1024)
    assert one["aggregate_tokens_per_s"] == pytest.approx(one["per_user_tokens_per_s"], rel=1e-12)
    r = latency_with_users(spec, a100, users=12, prompt_tokens=200, new_tokens=300)
    r1 = latency_with_users(spec, a100, users=1, prompt_tokens=200, new_tokens=300)
    assert r1["total_s"] < r["total_s"] < 12 * r1["total_s"]


def test_cost_and_energy():
    assert cost_per_million_tokens(2.50, 1000) == pytest.approx(0.6944, abs=1e-4)
    # llm-analysis convention: 1000 * $/h * n_gpus / 3600 / tok_s per 1k tokens (serving-facts §2d)
    assert cost_per_million_tokens(2.21, 25.44, n_devices=2) / 1000 == pytest.approx(0.0483, abs=2e-4)
    assert api_cost(1_000_000, 500_000, 3.0, 15.0) == pytest.approx(10.5)
    assert energy_per_token_j(700, 1400) == pytest.approx(0.5, abs=1e-12)
    with pytest.raises(ValueError):
        cost_per_million_tokens(2.5, 0)
