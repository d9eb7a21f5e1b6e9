"""llmlab.attention: the chapters' numbers, the properties of attention, and parity with torch / llmlab.model."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from llmlab import attention as att

# Chapter 03, "El banco aprobó préstamo" (already projected, d_k = 2).
Q3 = np.array([[-0.01, -0.04], [0.47, 0.00], [-0.03, 0.51], [0.43, 0.58]])
K3 = np.array([[0.18, -0.19], [0.17, -0.23], [0.51, 0.21], [0.45, 0.25]])
V3 = np.array([[-0.02, 0.24], [0.51, -0.04], [0.23, 0.50], [0.75, 0.16]])
A3 = np.array(
    [
        [1.0, 0.0, 0.0, 0.0],
        [0.500831, 0.499169, 0.0, 0.0],
        [0.319183, 0.314678, 0.366139, 0.0],
        [0.218168, 0.213967, 0.284193, 0.283671],
    ]
)
O3 = np.array([[-0.02, 0.24], [0.244560, 0.100233], [0.238314, 0.247086], [0.382878, 0.231286]])
S3 = np.array(
    [
        [0.0041, 0.0053, -0.0095, -0.0103],
        [0.0598, 0.0565, 0.1695, 0.1496],
        [-0.0723, -0.0866, 0.0649, 0.0806],
        [-0.0232, -0.0426, 0.2412, 0.2394],
    ]
)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _mha_loop(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=True):
    """Independent reference: one head at a time, with explicit column slices."""
    d_head = W_Q.shape[1] // n_heads
    d_v = W_V.shape[1] // n_kv_heads
    outs = []
    for h in range(n_heads):
        g = h // (n_heads // n_kv_heads)
        q = X @ W_Q[:, h * d_head : (h + 1) * d_head]
        k = X @ W_K[:, g * d_head : (g + 1) * d_head]
        v = X @ W_V[:, g * d_v : (g + 1) * d_v]
        s = q @ k.T / math.sqrt(d_head)
        if causal:
            s = s + np.triu(np.full(s.shape, -np.inf), k=1)
        a = np.exp(s - s.max(-1, keepdims=True))
        outs.append(a / a.sum(-1, keepdims=True) @ v)
    return np.concatenate(outs, axis=-1) @ W_O


# ---------------------------------------------------------------------------------------------
# Chapter numbers
# ---------------------------------------------------------------------------------------------


def test_attention_row_chapter02_banco():
    w, o = att.attention_row([0.2, 2.0, 1.0], [[0.1, 0.0], [1.0, 0.2], [0.4, 1.0]])
    np.testing.assert_allclose(w, [0.107815, 0.652240, 0.239946], atol=1e-6)
    np.testing.assert_allclose(o, [0.759000, 0.370394], atol=1e-6)
    assert w.sum() == pytest.approx(1.0, abs=1e-12)


def test_chapter03_scores_weights_outputs():
    np.testing.assert_allclose(att.attention_scores(Q3, K3), S3, atol=1e-4)
    O, A = att.causal_attention(Q3, K3, V3)
    np.testing.assert_allclose(A, A3, atol=1e-6)
    np.testing.assert_allclose(O, O3, atol=1e-6)
    np.testing.assert_allclose(O[0], V3[0], atol=0)  # the first token only sees itself


def test_scores_divide_by_sqrt_dk():
    Q = np.ones((1, 64))
    K = np.ones((1, 64))
    assert att.attention_scores(Q, K)[0, 0] == pytest.approx(64 / 8, abs=1e-12)


def test_causal_mask_values():
    m = att.causal_mask(4)
    expected = np.array([[0, -1e9, -1e9, -1e9], [0, 0, -1e9, -1e9], [0, 0, 0, -1e9], [0, 0, 0, 0]], dtype=float)
    np.testing.assert_array_equal(m, expected)
    assert m.dtype == np.float64
    np.testing.assert_array_equal(att.causal_mask(1), [[0.0]])
    assert np.isneginf(att.causal_mask(3, neg=-np.inf)[0, 2])


@pytest.mark.parametrize("bad", [0, -2])
def test_causal_mask_rejects_bad_n(bad):
    with pytest.raises(ValueError, match="n"):
        att.causal_mask(bad)


def test_causal_mask_rejects_non_int_and_positive_neg():
    with pytest.raises(TypeError):
        att.causal_mask(2.5)
    with pytest.raises(ValueError, match="neg"):
        att.causal_mask(3, neg=1.0)


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


def test_softmax_rows_stable_and_batched():
    S = _rng().normal(0, 300, size=(3, 5, 7))
    A = att.softmax_rows(S)
    assert np.isfinite(A).all()
    np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(att.softmax_rows([1000.0, 999.0, 998.0]), [0.665241, 0.244728, 0.090031], atol=1e-6)
    # Normalised along the last axis, not the second one.
    assert not np.allclose(A.sum(-2), 1.0)


def test_causal_attention_properties_large_magnitude():
    rng = _rng(1)
    Q, K = rng.normal(0, 5, size=(2, 6, 8))
    V = rng.normal(size=(6, 3))  # d_v != d_k
    O, A = att.causal_attention(Q, K, V)
    assert O.shape == (6, 3) and A.shape == (6, 6)
    np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-12)
    assert np.all(A[np.triu_indices(6, k=1)] == 0.0)
    assert np.all(np.diag(A) > 0)
    np.testing.assert_allclose(O[0], V[0], atol=1e-12)


def test_future_perturbation_does_not_change_the_past():
    rng = _rng(2)
    X = rng.normal(size=(7, 8))
    W_Q, W_K, W_V = rng.normal(size=(3, 8, 4))
    O, _ = att.attention_from_X(X, W_Q, W_K, W_V)
    X2 = X.copy()
    X2[4:] += rng.normal(0, 10, size=(3, 8))
    O2, _ = att.attention_from_X(X2, W_Q, W_K, W_V)
    np.testing.assert_allclose(O2[:4], O[:4], atol=1e-12)
    assert not np.allclose(O2[4:], O[4:])
    # Without the mask the past does see the future.
    Ob, _ = att.attention_from_X(X, W_Q, W_K, W_V, causal=False)
    Ob2, _ = att.attention_from_X(X2, W_Q, W_K, W_V, causal=False)
    assert not np.allclose(Ob[:4], Ob2[:4])


def test_projections_make_scores_asymmetric():
    rng = _rng(3)
    X = rng.normal(size=(5, 6))
    W_Q, W_K, W_V = rng.normal(size=(3, 6, 6))
    Q, K, V = att.qkv_project(X, W_Q, W_K, W_V)
    np.testing.assert_allclose(Q, X @ W_Q, atol=1e-12)
    S = att.attention_scores(Q, K)
    assert not np.allclose(S, S.T)
    S_same = att.attention_scores(X, X)
    np.testing.assert_allclose(S_same, S_same.T, atol=1e-12)


def test_masks_additive_and_boolean_agree():
    rng = _rng(4)
    Q, K, V = rng.normal(size=(3, 2, 5, 4))
    allowed = np.tril(np.ones((5, 5), dtype=bool))
    O1, A1 = att.scaled_dot_product_attention(Q, K, V, mask=att.causal_mask(5))
    O2, A2 = att.scaled_dot_product_attention(Q, K, V, mask=allowed)
    np.testing.assert_allclose(O1, O2, atol=1e-12)
    np.testing.assert_allclose(A1, A2, atol=1e-12)
    with pytest.raises(ValueError):
        att.scaled_dot_product_attention(Q, K, V, mask=np.zeros((5, 5), dtype=bool))  # nothing to look at


def test_multi_head_matches_loop_and_single_head():
    rng = _rng(5)
    X = rng.normal(size=(6, 8))
    W_Q, W_K, W_V = rng.normal(size=(3, 8, 8))
    W_O = rng.normal(size=(8, 8))
    for H in (1, 2, 4):
        np.testing.assert_allclose(
            att.multi_head_attention(X, W_Q, W_K, W_V, W_O, H), _mha_loop(X, W_Q, W_K, W_V, W_O, H, H), atol=1e-10
        )
    O1, _ = att.attention_from_X(X, W_Q, W_K, W_V)
    np.testing.assert_allclose(att.multi_head_attention(X, W_Q, W_K, W_V, W_O, 1), O1 @ W_O, atol=1e-12)
    # Batched input gives the same rows as one sequence at a time.
    Xb = rng.normal(size=(3, 6, 8))
    Ob = att.multi_head_attention(Xb, W_Q, W_K, W_V, W_O, 2)
    for b in range(3):
        np.testing.assert_allclose(Ob[b], att.multi_head_attention(Xb[b], W_Q, W_K, W_V, W_O, 2), atol=1e-12)


def test_split_heads_is_not_a_plain_reshape():
    x = np.arange(2 * 3 * 4, dtype=float).reshape(3, 8)[:, :8]  # (n=3, 2 heads * 4)
    heads = att.split_heads(x, 2)
    assert heads.shape == (2, 3, 4)
    np.testing.assert_array_equal(heads[1], x[:, 4:])
    np.testing.assert_array_equal(att.merge_heads(heads), x)


def test_gqa_conventions():
    rng = _rng(6)
    X = rng.normal(0, 2, size=(2, 5, 12))
    H, d_head = 6, 2
    W_Q = rng.normal(size=(12, H * d_head))
    W_O = rng.normal(size=(H * 3, 12))
    for H_kv in (1, 2, 3, 6):
        W_K = rng.normal(size=(12, H_kv * d_head))
        W_V = rng.normal(size=(12, H_kv * 3))  # d_v per head = 3 != d_head
        got = att.grouped_query_attention(X, W_Q, W_K, W_V, W_O, H, H_kv)
        for b in range(2):
            np.testing.assert_allclose(got[b], _mha_loop(X[b], W_Q, W_K, W_V, W_O, H, H_kv), atol=1e-10)
    # n_kv_heads == n_heads is MHA.
    W_K = rng.normal(size=(12, H * d_head))
    W_V = rng.normal(size=(12, H * 3))
    np.testing.assert_allclose(
        att.grouped_query_attention(X, W_Q, W_K, W_V, W_O, H, H),
        att.multi_head_attention(X, W_Q, W_K, W_V, W_O, H),
        atol=1e-12,
    )
    # MQA equals MHA whose K/V heads are all copies of the single shared one.
    W_K1 = rng.normal(size=(12, d_head))
    W_V1 = rng.normal(size=(12, 3))
    np.testing.assert_allclose(
        att.grouped_query_attention(X, W_Q, W_K1, W_V1, W_O, H, 1),
        att.multi_head_attention(X, W_Q, np.tile(W_K1, H), np.tile(W_V1, H), W_O, H),
        atol=1e-10,
    )
    with pytest.raises(ValueError, match="n_kv_heads"):
        att.grouped_query_attention(X, W_Q, W_K1, W_V1, W_O, H, 4)


def test_gqa_group_mapping_is_repeat_interleave_not_tile():
    rng = _rng(7)
    X = rng.normal(0, 3, size=(5, 8))
    W_Q = rng.normal(size=(8, 8))
    W_K = rng.normal(size=(8, 4))
    W_V = rng.normal(size=(8, 4))
    W_O = np.eye(8)
    _, A = att.grouped_query_attention(X, W_Q, W_K, W_V, W_O, 4, 2, return_weights=True)
    # Query head 1 must use K/V head 0 (1 // 2 = 0); with np.tile it would use K/V head 1.
    _, a1 = att.causal_attention(X @ W_Q[:, 2:4], X @ W_K[:, 0:2], X @ W_V[:, 0:2])
    np.testing.assert_allclose(A[1], a1, atol=1e-12)
    _, wrong = att.causal_attention(X @ W_Q[:, 2:4], X @ W_K[:, 2:4], X @ W_V[:, 2:4])
    assert not np.allclose(A[1], wrong)


def test_cross_attention_rectangular():
    rng = _rng(8)
    Xq = rng.normal(size=(3, 6))
    Y = rng.normal(size=(7, 5))
    W_Q = rng.normal(size=(6, 4))
    W_K = rng.normal(size=(5, 4))
    W_V = rng.normal(size=(5, 2))
    O, A = att.cross_attention(Xq, Y, W_Q, W_K, W_V)
    assert O.shape == (3, 2) and A.shape == (3, 7)
    np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-12)
    assert np.all(A > 0)  # no mask: every query sees every key
    O2, _ = att.scaled_dot_product_attention(Xq @ W_Q, Y @ W_K, Y @ W_V)
    np.testing.assert_allclose(O, O2, atol=1e-12)


def test_kv_cache_decode_equals_full_causal_attention():
    rng = _rng(9)
    X = rng.normal(0, 3, size=(8, 6))
    W_Q, W_K = rng.normal(size=(2, 6, 4))
    W_V = rng.normal(size=(6, 3))
    O_full, _ = att.attention_from_X(X, W_Q, W_K, W_V)
    cache = att.KVCache()
    rows = []
    for t in range(8):
        rows.append(att.decode_step(X[t], cache, W_Q, W_K, W_V))
        assert len(cache) == t + 1
        assert cache.keys.shape == (t + 1, 4) and cache.values.shape == (t + 1, 3)
    np.testing.assert_allclose(np.array(rows), O_full, atol=1e-10)
    assert cache.nbytes == 8 * (4 + 3) * 8  # float64
    # Batched decoding, one sequence per row.
    Xb = rng.normal(size=(2, 5, 6))
    cache = att.KVCache()
    rows = np.stack([att.decode_step(Xb[:, t], cache, W_Q, W_K, W_V) for t in range(5)], axis=1)
    np.testing.assert_allclose(rows, att.attention_from_X(Xb, W_Q, W_K, W_V)[0], atol=1e-10)
    with pytest.raises(TypeError):
        att.decode_step(X[0], [], W_Q, W_K, W_V)


def test_bad_shapes_raise_clear_errors():
    with pytest.raises(ValueError, match="d_k"):
        att.attention_scores(np.ones((3, 2)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="W_Q"):
        att.qkv_project(np.ones((3, 4)), np.ones((5, 2)), np.ones((4, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="n_k"):
        att.scaled_dot_product_attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="values"):
        att.attention_row([1.0, 2.0], [[1.0, 0.0]])
    with pytest.raises(ValueError, match="divisible"):
        att.multi_head_attention(np.ones((3, 6)), np.ones((6, 6)), np.ones((6, 6)), np.ones((6, 6)), np.ones((6, 6)), 4)
    with pytest.raises(ValueError, match="queries"):
        att.causal_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 2)))
    with pytest.raises(TypeError):
        att.attention_scores("abc", np.ones((2, 2)))


# ---------------------------------------------------------------------------------------------
# Parity with torch and with llmlab.model
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_parity_with_torch_sdpa(n_kv_heads):
    rng = _rng(10)
    B, n, d_model, H, d_head = 2, 7, 16, 4, 4
    X = rng.normal(0, 2, size=(B, n, d_model))
    W_Q = rng.normal(size=(d_model, H * d_head))
    W_K = rng.normal(size=(d_model, n_kv_heads * d_head))
    W_V = rng.normal(size=(d_model, n_kv_heads * d_head))
    W_O = rng.normal(size=(H * d_head, d_model))
    ours = att.grouped_query_attention(X, W_Q, W_K, W_V, W_O, H, n_kv_heads)

    t = lambda a: torch.from_numpy(a)  # noqa: E731 - float64 tensors
    q = (t(X) @ t(W_Q)).view(B, n, H, d_head).transpose(1, 2)
    k = (t(X) @ t(W_K)).view(B, n, n_kv_heads, d_head).transpose(1, 2)
    v = (t(X) @ t(W_V)).view(B, n, n_kv_heads, d_head).transpose(1, 2)
    k = k.repeat_interleave(H // n_kv_heads, dim=1)
    v = v.repeat_interleave(H // n_kv_heads, dim=1)
    out = TF.scaled_dot_product_attention(q, k, v, is_causal=True)
    theirs = out.transpose(1, 2).reshape(B, n, H * d_head) @ t(W_O)
    np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-10)
    if n_kv_heads == H:
        np.testing.assert_allclose(att.multi_head_attention(X, W_Q, W_K, W_V, W_O, H), theirs.numpy(), atol=1e-10)


def test_parity_with_torch_sdpa_masks():
    rng = _rng(11)
    Q, K = rng.normal(0, 3, size=(2, 3, 5, 4))
    V = rng.normal(size=(3, 5, 6))
    allowed = rng.random((5, 5)) < 0.6
    allowed[:, 0] = True  # every row may see at least one key
    O, A = att.scaled_dot_product_attention(Q, K, V, mask=allowed)
    ref = TF.scaled_dot_product_attention(torch.from_numpy(Q), torch.from_numpy(K), torch.from_numpy(V), attn_mask=torch.from_numpy(allowed))
    np.testing.assert_allclose(O, ref.numpy(), atol=1e-10)
    O_add, _ = att.scaled_dot_product_attention(Q, K, V, mask=att.causal_mask(5))
    ref = TF.scaled_dot_product_attention(torch.from_numpy(Q), torch.from_numpy(K), torch.from_numpy(V), is_causal=True)
    np.testing.assert_allclose(O_add, ref.numpy(), atol=1e-10)


def _numpy_weights(module):
    # nn.Linear stores (out, in) and computes x W^T: our row-vector W is the transpose.
    return [getattr(module, name).weight.detach().double().numpy().T for name in ("q_proj", "k_proj", "v_proj", "o_proj")]


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_parity_with_llmlab_model_attention(n_kv_heads):
    from llmlab.model import CausalSelfAttention, ModelConfig

    config = ModelConfig.gpt2_style(d_model=16, n_heads=4, n_kv_heads=n_kv_heads, bias=False, n_layers=1)
    module = CausalSelfAttention(config, layer_idx=0).double().eval()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    with torch.no_grad():
        out_fast, _ = module(x)
        out, weights = module(x, need_weights=True)
    W_Q, W_K, W_V, W_O = _numpy_weights(module)
    ours, A = att.grouped_query_attention(x.numpy(), W_Q, W_K, W_V, W_O, 4, n_kv_heads, return_weights=True)
    np.testing.assert_allclose(ours, out.numpy(), atol=1e-10)
    np.testing.assert_allclose(ours, out_fast.numpy(), atol=1e-10)
    np.testing.assert_allclose(A, weights.numpy(), atol=1e-10)


def test_parity_with_transformer_return_attention():
    from llmlab.model import ModelConfig, Transformer

    config = ModelConfig.gpt2_style(vocab_size=50, d_model=16, n_heads=2, n_layers=1, max_seq_len=16)
    model = Transformer(config).double().eval()
    ids = torch.tensor([[3, 17, 42, 8, 3]])
    with torch.no_grad():
        _, attentions = model(ids, return_attention=True)
        block = model.blocks[0]
        h = block.attn_norm(model.tok_emb(ids) + model.pos_emb(torch.arange(5)))
    mod = block.attn
    W_Q, W_K, W_V, _ = _numpy_weights(mod)
    b = [getattr(mod, n).bias.detach().double().numpy() for n in ("q_proj", "k_proj", "v_proj")]
    # The GPT-2 style projections have biases: fold them into the projected Q, K, V.
    q, k, v = h[0].numpy() @ W_Q + b[0], h[0].numpy() @ W_K + b[1], h[0].numpy() @ W_V + b[2]
    _, A = att.causal_attention(att.split_heads(q, 2), att.split_heads(k, 2), att.split_heads(v, 2))
    np.testing.assert_allclose(A, attentions[0][0].numpy(), atol=1e-10)


def test_most_attended_reads_the_row():
    from llmlab.attention import most_attended

    A = np.array([[1.0, 0.0, 0.0], [0.7, 0.3, 0.0], [0.1, 0.2, 0.7]])
    assert most_attended(A, 1) == 0  # the column of token 1 would say 1
    assert most_attended(A.tolist(), 2) == 2
    assert most_attended([[0.5, 0.5]], 0) == 0  # ties: lowest index
    for bad in (-1, 3):
        with pytest.raises(IndexError):
            most_attended(A, bad)
