"""The three simulators: batching, KV allocation, speculative decoding."""

import numpy as np
import pytest

from llmlab.cost import (
    expected_tokens_per_pass,
    get_model,
    optimal_draft_length,
    paged_kv_usage,
    random_requests,
    simulate_batching,
    simulate_kv_allocation,
    simulate_speculative,
    speculative_speedup,
    vllm_block_bytes,
    vllm_num_blocks,
)


def test_batching_toy_example():
    static = simulate_batching([8, 2, 2, 2], slots=2, mode="static")
    cont = simulate_batching([8, 2, 2, 2], slots=2, mode="continuous")
    assert static.steps == 10 and static.utilisation == pytest.approx(0.70, abs=1e-12)
    assert cont.steps == 8 and cont.utilisation == pytest.approx(0.875, abs=1e-12)
    assert static.finish == [8, 2, 10, 10] and cont.finish == [8, 2, 4, 6]
    assert static.timeline[2] == [0, None]  # the finished slot idles until the batch ends
    assert cont.timeline[2] == [0, 2]  # ... continuous batching refills it at once
    assert cont.throughput == pytest.approx(14 / 8, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_continuous_never_worse_than_static(seed):
    lengths, arrivals = random_requests(40, mean_length=32, rate=0.3, seed=seed)
    s = simulate_batching(lengths, 4, "static", arrivals)
    c = simulate_batching(lengths, 4, "continuous", arrivals)
    assert c.steps <= s.steps
    assert np.mean(c.latencies) <= np.mean(s.latencies)
    for r in (s, c):  # every request runs exactly its length, never before it arrives
        assert r.useful_slot_steps == sum(lengths)
        assert all(st >= a for st, a in zip(r.start, r.arrival))
        assert all(f - st >= n for f, st, n in zip(r.finish, r.start, lengths))
        assert sum(i is not None for row in r.timeline for i in row) == sum(lengths)


def test_batching_waits_for_arrivals_and_validates():
    r = simulate_batching([2], slots=1, mode="continuous", arrivals=[3])
    assert r.steps == 5 and r.start == [3] and r.latencies == [2]
    with pytest.raises(ValueError):
        simulate_batching([2, 0], 2)
    with pytest.raises(ValueError):
        simulate_batching([2], 2, mode="dynamic")
    with pytest.raises(ValueError):
        simulate_batching([2, 3], 2, arrivals=[0])


def test_paged_vs_contiguous_toy_example():
    u = paged_kv_usage([100, 37, 250], block_size=16, max_ctx=4096)
    assert u["used"] == 387
    assert u["contiguous_reserved"] == 12_288 and u["contiguous_waste"] == 11_901
    assert u["contiguous_waste_frac"] == pytest.approx(0.9685, abs=1e-4)
    assert u["paged_reserved"] == 416 and u["paged_waste"] == 29 and u["paged_blocks"] == 26
    # paging wastes less than one block per sequence
    lens = list(range(1, 200, 7))
    assert paged_kv_usage(lens)["paged_waste"] < 16 * len(lens)
    with pytest.raises(ValueError):
        paged_kv_usage([5000])


def test_kv_allocation_paged_fits_more_requests():
    reqs = [(100, 200)] * 40
    cont = simulate_kv_allocation(reqs, capacity_tokens=8 * 4096, policy="contiguous", max_ctx=4096)
    paged = simulate_kv_allocation(reqs, capacity_tokens=8 * 4096, policy="paged", max_ctx=4096)
    assert cont.max_concurrent == 8 and paged.max_concurrent == 40
    assert cont.finished == paged.finished == 40
    assert paged.steps < cont.steps and paged.mean_waste_frac < 0.1 < cont.mean_waste_frac
    # when the pool runs out, the newest request is preempted and recomputed, and all still finish
    tight = simulate_kv_allocation([(50, 400)] * 30, capacity_tokens=4000, policy="paged")
    assert tight.preemptions > 0 and tight.finished == 30
    assert max(tight.reserved_tokens) <= 4000
    with pytest.raises(ValueError):
        simulate_kv_allocation([(100, 5000)], 10_000, max_ctx=4096)
    with pytest.raises(ValueError):
        simulate_kv_allocation([(1000, 1000)], 1000, policy="paged")


def test_vllm_block_math():
    spec = get_model("llama-2-7b")
    block = vllm_block_bytes(spec.n_layers, spec.n_kv_heads, spec.head_dim, block_size=16)
    assert block == 16 * spec.kv_bytes_per_token() == 8 * 2**20
    # 80 GB card, 0.9 utilisation, 14 GB weights + 1 GB activations peak
    n = vllm_num_blocks(80e9, 15e9, block, gpu_memory_utilization=0.9)
    assert n == int((72e9 - 15e9) // block)
    assert vllm_num_blocks(80e9, 90e9, block) == 0
    with pytest.raises(ValueError):
        vllm_num_blocks(80e9, 15e9, block, gpu_memory_utilization=1.2)


def test_speculative_expectation_and_speedup():
    assert expected_tokens_per_pass(0.75, 4) == pytest.approx(3.0508, abs=1e-4)
    assert expected_tokens_per_pass(0.8, 4) == pytest.approx(3.3616, abs=1e-4)
    assert expected_tokens_per_pass(0.5, 4) == pytest.approx(1.9375, abs=1e-12)
    assert expected_tokens_per_pass(0.0, 4) == pytest.approx(1.0, abs=1e-12)
    assert expected_tokens_per_pass(1.0, 4) == pytest.approx(5.0, abs=1e-12)
    assert expected_tokens_per_pass(0.75, 0) == pytest.approx(1.0, abs=1e-12)
    assert speculative_speedup(0.75, 4, 0.05) == pytest.approx(2.54, abs=0.005)
    assert speculative_speedup(0.3, 8, 0.5) < 1  # a slow draft with low acceptance hurts
    g = optimal_draft_length(0.75, 0.05)
    assert all(speculative_speedup(0.75, g, 0.05) >= speculative_speedup(0.75, k, 0.05) for k in range(17))
    with pytest.raises(ValueError):
        expected_tokens_per_pass(1.2, 4)


def test_speculative_monte_carlo_matches_formula():
    sim = simulate_speculative(0.75, 4, n_passes=20_000, seed=0)
    assert sim["mean_tokens_per_pass"] == pytest.approx(sim["expected"], abs=0.03)
    assert sum(sim["counts"]) == 20_000 and sim["counts"][0] == 0
    assert simulate_speculative(0.0, 3, 100)["mean_tokens_per_pass"] == pytest.approx(1.0, abs=1e-12)
