"""llmlab.moe: the router of chapter 05, parameter accounting, load statistics and SparseMoE (no HF here;
parity with transformers lives in test_moe_hf_parity.py)."""

import math

import numpy as np
import pytest
import torch

from llmlab.model import ModelConfig, Transformer, count_parameters
from llmlab.moe import (
    SparseMoE,
    expert_load,
    load_balancing_loss,
    load_stats,
    moe_forward,
    moe_param_counts,
    route,
    router_logits,
    router_probs,
    solve_moe_split,
    top_k_renormalized,
)

G = np.array([0.62, 0.24, 0.09, 0.05])  # the chapter's router probabilities for E1..E4


# ---------------------------------------------------------------- the router (NumPy)


def test_top2_of_the_chapter_example():
    idx, w = top_k_renormalized(G, 2)
    assert idx.tolist() == [0, 1]
    np.testing.assert_allclose(w, [0.62 / 0.86, 0.24 / 0.86], rtol=0, atol=1e-15)
    assert round(float(w[0]), 3) == 0.721 and round(float(w[1]), 3) == 0.279


def test_route_reproduces_the_example_with_log_probabilities_as_weights():
    # W_r = log(g) as a column and x = [1]: softmax(log g) = g.
    idx, w = route(np.array([1.0]), np.log(G)[:, None], k=2)
    assert idx.tolist() == [0, 1]
    np.testing.assert_allclose(w, [0.7209302325581395, 0.2790697674418605], rtol=0, atol=1e-12)
    idx3, w3 = route([1.0], np.log(G)[:, None].tolist(), k=3)  # lists are accepted too
    np.testing.assert_allclose(w3, [0.65263158, 0.25263158, 0.09473684], rtol=0, atol=1e-8)


def test_renormalised_top_k_equals_softmax_over_the_chosen_logits():
    rng = np.random.default_rng(0)
    x, W = rng.normal(size=(20, 6)), rng.normal(size=(8, 6))
    idx, w = route(x, W, k=3)
    logits = x @ W.T
    chosen = np.take_along_axis(logits, idx, axis=1)
    e = np.exp(chosen - chosen.max(axis=1, keepdims=True))
    np.testing.assert_allclose(w, e / e.sum(axis=1, keepdims=True), rtol=0, atol=1e-12)
    assert np.all(np.diff(w, axis=1) <= 0)  # descending weights


def test_route_is_stable_for_huge_logits():
    idx, w = route(np.array([1.0]), np.array([[1000.0], [999.0], [-1000.0]]), k=2)
    assert idx.tolist() == [0, 1]
    np.testing.assert_allclose(w, [0.7310585786300049, 0.2689414213699951], rtol=0, atol=1e-12)
    np.testing.assert_allclose(router_probs([1000.0, 999.0]), [0.7310585786300049, 0.2689414213699951], atol=1e-12)


def test_ties_go_to_the_lowest_index():
    idx, w = top_k_renormalized([0.1, 0.3, 0.3, 0.3], 2)
    assert idx.tolist() == [1, 2]
    np.testing.assert_allclose(w, [0.5, 0.5], atol=1e-15)
    idx, _ = top_k_renormalized(np.full((3, 5), 0.2), 3)
    assert idx.tolist() == [[0, 1, 2]] * 3


def test_permuting_the_router_rows_permutes_the_choice():
    """Mistake 5-M1: experts are picked by router scores, nothing else."""
    rng = np.random.default_rng(1)
    x, W = rng.normal(size=5), rng.normal(size=(6, 5))
    perm = rng.permutation(6)
    idx, w = route(x, W, 2)
    idx_p, w_p = route(x, W[perm], 2)
    assert perm[idx_p].tolist() == idx.tolist()
    np.testing.assert_allclose(w_p, w, atol=1e-15)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: route(np.ones(3), np.ones((4, 3)), k=5), "k=5 cannot exceed n_experts=4"),
        (lambda: route(np.ones(3), np.ones((4, 3)), k=0), "k must be >= 1"),
        (lambda: route(np.ones(3), np.ones((4, 2)), k=2), "W_r must be"),
        (lambda: route(np.ones((2, 2, 3)), np.ones((4, 3)), k=2), "x must have at most 2"),
        (lambda: route(np.array([np.nan, 1, 1]), np.ones((4, 3)), k=2), "x must be finite"),
        (lambda: route(np.ones(3), np.full((4, 3), np.inf), k=2), "W_r must be finite"),
        (lambda: route(np.full(1, 1e200), np.full((2, 1), 1e200), k=1), "overflowed"),
        (lambda: router_probs([1.0, np.inf]), "logits must be finite"),
        (lambda: top_k_renormalized([0.5, -0.1], 1), "probs must be >= 0"),
        (lambda: top_k_renormalized([0.5, 0.5], 3), "k=3 cannot exceed"),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_k_must_be_an_int():
    with pytest.raises(TypeError, match="k must be an int"):
        route(np.ones(3), np.ones((4, 3)), k=2.0)


# ---------------------------------------------------------------- the mixture with callables


def test_moe_forward_calls_exactly_k_experts_per_token():
    calls = []

    def make(i):
        def expert(v):
            calls.append(i)
            return (i + 1) * v

        return expert

    rng = np.random.default_rng(2)
    x, W = rng.normal(size=(7, 4)), rng.normal(size=(5, 4))
    out = moe_forward(x, W, [make(i) for i in range(5)], k=2)
    assert len(calls) == 7 * 2
    idx, w = route(x, W, 2)
    expected = np.stack([sum(wi * (i + 1) * xt for i, wi in zip(r, ws)) for xt, r, ws in zip(x, idx, w)])
    np.testing.assert_allclose(out, expected, atol=1e-12)
    single = moe_forward(x[0], W, [make(i) for i in range(5)], k=2)
    np.testing.assert_allclose(single, expected[0], atol=1e-12)


def test_moe_forward_with_identical_experts_equals_one_expert():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 4))
    x, W = rng.normal(size=4), rng.normal(size=(3, 4))
    out = moe_forward(x, W, [lambda v: A @ v] * 3, k=3)
    np.testing.assert_allclose(out, A @ x, atol=1e-12)
    with pytest.raises(ValueError, match="experts has 2 entries"):
        moe_forward(x, W, [lambda v: v] * 2, k=1)


# ---------------------------------------------------------------- total vs active


def test_mixtral_counts_and_split():
    S, E = solve_moe_split(47e9, 13e9, 8, 2)
    assert E == pytest.approx(34e9 / 6, rel=1e-12) and S == pytest.approx(13e9 - 2 * 34e9 / 6, rel=1e-12)
    assert round(E / 1e9, 3) == 5.667 and round(S / 1e9, 3) == 1.667
    counts = moe_param_counts(S, E, 8, 2)
    assert counts["total"] == pytest.approx(47e9, rel=1e-12) and counts["active"] == pytest.approx(13e9, rel=1e-12)
    assert counts["active_fraction"] == pytest.approx(13 / 47, rel=1e-12)
    assert round(100 * 37 / 671, 1) == 5.5  # DeepSeek-V3's fraction, the chapter's "≈5.5 %"


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: moe_param_counts(1, 1, 8, 9), "cannot exceed"),
        (lambda: moe_param_counts(-1, 1, 8, 2), "shared must be"),
        (lambda: solve_moe_split(13e9, 47e9, 8, 2), "cannot exceed total"),
        (lambda: solve_moe_split(47e9, 13e9, 2, 2), "every expert is active"),
        (lambda: solve_moe_split(47e9, 1e9, 8, 2), "negative shared"),
    ],
)
def test_count_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------- load statistics


def test_load_of_a_collapsed_and_a_balanced_router():
    collapsed = np.tile([10.0, 0.0, 0.0, 0.0], (100, 1))
    share = expert_load(collapsed, k=1)
    assert share.tolist() == [1.0, 0.0, 0.0, 0.0]
    stats = load_stats(share)
    assert stats["max_share"] == 1.0 and stats["max_over_mean"] == 4.0
    assert stats["cv"] == pytest.approx(math.sqrt(3), rel=1e-12) and stats["entropy"] == 0.0
    balanced = load_stats([25, 25, 25, 25])
    assert balanced["cv"] == 0.0 and balanced["normalized_entropy"] == pytest.approx(1.0, abs=1e-12)
    assert balanced["max_over_mean"] == pytest.approx(1.0, abs=1e-12)


def test_expert_load_counts_k_assignments_per_token():
    logits = np.array([[3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0]])
    np.testing.assert_allclose(expert_load(logits, k=2), [0.25, 0.25, 0.25, 0.25])
    np.testing.assert_allclose(expert_load(torch.tensor(logits), k=1), [0.5, 0, 0, 0.5])


# ---------------------------------------------------------------- auxiliary loss


def test_aux_loss_extremes_and_gradient_direction():
    n, T = 4, 64
    uniform = torch.eye(n).repeat(T // n, 1) * 1e-3  # almost uniform probabilities, balanced top-1
    assert load_balancing_loss(uniform, k=1).item() == pytest.approx(1.0, abs=1e-3)
    assert load_balancing_loss(uniform, k=2).item() == pytest.approx(2.0, abs=1e-2)  # balanced gives k
    collapsed = torch.tensor([[30.0, 0, 0, 0]]).repeat(T, 1)
    assert load_balancing_loss(collapsed, k=1).item() == pytest.approx(n, rel=1e-6)  # collapse gives n
    # The gradient lowers the busy expert's logit.
    logits = torch.tensor([[2.0, 0.0, 0.0, 0.0]]).repeat(T, 1).requires_grad_()
    load_balancing_loss(logits, k=1).backward()
    assert logits.grad[:, 0].sum() > 0 and (logits.grad[:, 1:] < 0).all()


def test_aux_loss_bad_input():
    with pytest.raises(ValueError, match="cannot exceed"):
        load_balancing_loss(torch.zeros(3, 4), k=5)
    with pytest.raises(ValueError, match="finite"):
        load_balancing_loss(torch.tensor([[float("nan"), 0.0]]), k=1)
    with pytest.raises(ValueError, match="same shape"):
        load_balancing_loss([torch.zeros(3, 4), torch.zeros(2, 4)], k=1)
    with pytest.raises(ValueError, match="attention_mask"):
        load_balancing_loss(torch.zeros(3, 4), k=1, attention_mask=torch.ones(2, 2))


# ---------------------------------------------------------------- SparseMoE


def moe_block(**kw):
    settings = dict(d_model=16, d_ff=24, n_experts=5, k=2)
    settings.update(kw)
    torch.manual_seed(0)
    return SparseMoE(**settings)


def test_each_token_runs_through_exactly_k_experts():
    block = moe_block()
    seen = [0] * block.n_experts
    for e, expert in enumerate(block.experts):
        expert.register_forward_hook(lambda m, inp, out, e=e: seen.__setitem__(e, seen[e] + inp[0].shape[0]))
    x = torch.randn(3, 7, 16)
    out = block(x)
    assert out.shape == x.shape
    assert sum(seen) == 3 * 7 * 2
    assert block.tokens_per_expert.tolist() == seen
    assert block.expert_flops == 3 * 7 * 2 * 2 * 3 * 16 * 24
    assert block.last_router_logits.shape == (21, 5)


def test_sparse_moe_equals_the_dense_sum_over_chosen_experts():
    block = moe_block()
    x = torch.randn(9, 16)
    with torch.no_grad():
        out = block(x)
        logits, idx, w = block.route(x)
        expected = torch.stack([
            sum(w[t, j] * block.experts[int(idx[t, j])](x[t]) for j in range(2)) for t in range(9)
        ])
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=0)
    # the same routing as the NumPy reference
    np_idx, np_w = route(x.numpy().astype(np.float64), block.router.weight.detach().numpy().astype(np.float64), 2)
    assert np.array_equal(idx.numpy(), np_idx)
    np.testing.assert_allclose(w.numpy(), np_w, atol=1e-6)


def test_unnormalised_weights_and_shared_experts():
    block = moe_block(normalize=False, n_shared_experts=2)
    x = torch.randn(6, 16)
    with torch.no_grad():
        _, idx, w = block.route(x)
        probs = torch.softmax(block.router(x), dim=-1)
        torch.testing.assert_close(w, probs.gather(-1, idx), atol=1e-7, rtol=0)
        routed = torch.stack([sum(w[t, j] * block.experts[int(idx[t, j])](x[t]) for j in range(2)) for t in range(6)])
        torch.testing.assert_close(block(x), routed + block.shared(x), atol=1e-6, rtol=0)
    assert block.shared.down.in_features == 2 * 24
    block.reset_stats()
    assert block.expert_flops == 0 and block.tokens_per_expert.sum() == 0


def test_moe_transformer_config_params_and_aux_loss():
    cfg = ModelConfig.llama_style(vocab_size=61, d_model=32, n_heads=4, n_layers=3, max_seq_len=32,
                                  n_experts=4, n_experts_per_token=2, dense_layers=[0], moe_d_ff=40)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    model = Transformer(cfg)
    assert not isinstance(model.blocks[0].mlp, SparseMoE) and isinstance(model.blocks[2].mlp, SparseMoE)
    dense = Transformer(ModelConfig.llama_style(vocab_size=61, d_model=32, n_heads=4, n_layers=3, max_seq_len=32))
    per_expert = 3 * 32 * 40
    expected = count_parameters(dense) + 2 * (4 * per_expert + 4 * 32 - 3 * 32 * dense.config.d_ff)
    assert count_parameters(model) == expected
    model(torch.randint(0, 61, (2, 10)))
    loss = load_balancing_loss(router_logits(model), k=2)
    assert 1.0 < loss.item() <= 4.0
    loss.backward()
    assert model.blocks[1].mlp.router.weight.grad is not None


@pytest.mark.parametrize(
    "overrides, match",
    [
        (dict(n_experts=2, n_experts_per_token=3), "cannot exceed n_experts"),
        (dict(n_experts=4, mlp="gelu"), "mlp='swiglu'"),
        (dict(n_experts=4, dense_layers=[5]), "dense_layers"),
        (dict(n_shared_experts=1), "need n_experts > 0"),
        (dict(n_experts=-1), "n_experts must be >= 0"),
    ],
)
def test_bad_moe_configs(overrides, match):
    settings = dict(vocab_size=61, d_model=32, n_heads=4, n_layers=3)
    settings.update(overrides)
    with pytest.raises(ValueError, match=match):
        ModelConfig.llama_style(**settings)


def test_router_logits_needs_a_forward_pass_and_moe_layers():
    with pytest.raises(ValueError, match="no SparseMoE"):
        router_logits(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="forward pass first"):
        router_logits(moe_block())


def test_cost_spec_of_an_llmlab_moe_config_counts_like_the_model():
    from llmlab.cost.calibrate import spec_from_llmlab

    cfg = ModelConfig.llama_style(vocab_size=61, d_model=32, n_heads=4, n_kv_heads=2, n_layers=3, max_seq_len=32,
                                  n_experts=4, n_experts_per_token=2, n_shared_experts=1, dense_layers=[0],
                                  moe_d_ff=40, qk_norm=True)
    model = Transformer(cfg)
    spec = spec_from_llmlab(cfg)
    assert spec.param_count() == count_parameters(model)
    unused = 2 * (4 - 2) * 3 * 32 * 40  # two sparse layers, two experts skipped in each
    assert spec.active_param_count() == count_parameters(model) - unused


def test_dense_config_dict_has_no_moe_keys_and_moe_round_trips():
    dense = ModelConfig.llama_style(vocab_size=61, d_model=32, n_heads=4, n_layers=2)
    assert not {"n_experts", "qk_norm", "dense_layers"} & set(dense.to_dict())  # shipped model cards unchanged
    assert ModelConfig.from_dict(dense.to_dict()) == dense
    moe = ModelConfig.llama_style(vocab_size=61, d_model=32, n_heads=4, n_layers=2, n_experts=3,
                                  n_experts_per_token=1, qk_norm=True, dense_layers=[1])
    assert moe.to_dict()["n_experts"] == 3 and moe.to_dict()["qk_norm"] is True
    assert ModelConfig.from_dict(moe.to_dict()) == moe
