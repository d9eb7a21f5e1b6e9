"""llmlab.positional: the sinusoidal table, RoPE and why attention needs positions at all."""

import math

import numpy as np
import pytest
import torch

from llmlab import attention as att
from llmlab import model as lm
from llmlab import positional as pos


# ---------------------------------------------------------------------------------- sinusoidal

def test_sinusoidal_chapter_values():
    P = pos.sinusoidal_positions(50, 8)
    assert P.shape == (50, 8) and P.dtype == np.float64
    np.testing.assert_array_equal(P[0], [0, 1, 0, 1, 0, 1, 0, 1])  # sin 0 = 0, cos 0 = 1
    assert np.all(np.abs(P) <= 1.0)
    assert len({tuple(np.round(row, 12)) for row in P}) == 50  # every position has its own row
    np.testing.assert_allclose(P[3, :2], [math.sin(3), math.cos(3)], atol=1e-15)  # pair 0: 1 rad per step
    np.testing.assert_allclose(P[3, 2:4], [math.sin(3 / 10), math.cos(3 / 10)], atol=1e-15)  # 10000^(2/8) = 10


def test_sinusoidal_formula_column_by_column():
    n, d, base = 7, 6, 100.0
    P = pos.sinusoidal_positions(n, d, base=base)
    for p in range(n):
        for j in range(d):
            angle = p / base ** (2 * (j // 2) / d)
            np.testing.assert_allclose(P[p, j], math.sin(angle) if j % 2 == 0 else math.cos(angle), atol=1e-15)


def test_sinusoidal_agrees_with_llmlab_model():
    for n, d in [(16, 4), (128, 64), (64, 10)]:
        np.testing.assert_allclose(pos.sinusoidal_positions(n, d), lm.sinusoidal_positions(n, d).numpy(), atol=1e-5)
    cfg = lm.ModelConfig.gpt2_style(pos_encoding="sinusoidal", vocab_size=10, d_model=8, n_heads=2, n_layers=1, max_seq_len=20)
    table = lm.Transformer(cfg).pos_emb.table.numpy()
    np.testing.assert_allclose(pos.sinusoidal_positions(20, 8), table, atol=1e-6)


def test_sinusoidal_odd_dimension_ends_with_a_lone_sine():
    P5 = pos.sinusoidal_positions(9, 5)
    assert P5.shape == (9, 5)
    angles = np.arange(9) / 10000 ** (4 / 5)
    np.testing.assert_allclose(P5[:, 4], np.sin(angles), atol=1e-15)
    np.testing.assert_allclose(pos.sinusoidal_positions(1, 1), [[0.0]], atol=0)


def test_sinusoidal_swapped_or_rescaled_tables_differ():
    P = pos.sinusoidal_positions(10, 6)
    swapped = P.copy()
    swapped[:, 0::2], swapped[:, 1::2] = P[:, 1::2], P[:, 0::2]
    assert not np.allclose(P, swapped)
    assert not np.allclose(P, pos.sinusoidal_positions(10, 6, base=1000.0))


@pytest.mark.parametrize("args,error", [((-1, 4), ValueError), ((4, 0), ValueError), ((2.5, 4), TypeError),
                                        ((4, 4, 0.0), ValueError), ((4, 4, float("inf")), ValueError)])
def test_sinusoidal_rejects_bad_arguments(args, error):
    with pytest.raises(error):
        pos.sinusoidal_positions(*args)


# ---------------------------------------------------------------------------------- RoPE

def test_rope_frequencies_and_angles():
    np.testing.assert_allclose(pos.rope_frequencies(4), [1.0, 0.01], atol=1e-15)
    ang = pos.rope_angles(3, 4)
    assert ang.shape == (3, 2)
    np.testing.assert_allclose(ang[2], [2.0, 0.02], atol=1e-15)
    with pytest.raises(ValueError, match="even"):
        pos.rope_frequencies(5)


def test_rope_rotates_pair_i_with_i_plus_half():
    d = 6
    x = np.zeros((2, d))
    x[:, 0] = 1.0  # unit vector on the first coordinate of pair 0
    out = pos.apply_rope(x)
    np.testing.assert_allclose(out[0], x[0], atol=1e-15)  # position 0: no rotation
    expected = np.zeros(d)
    expected[0], expected[3] = math.cos(1.0), math.sin(1.0)  # its partner is dimension 0 + d/2 = 3
    np.testing.assert_allclose(out[1], expected, atol=1e-15)


def test_rope_keeps_lengths_and_position_zero_is_identity():
    x = np.random.default_rng(0).normal(size=(3, 9, 8))
    out = pos.apply_rope(x)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), atol=1e-12)
    np.testing.assert_allclose(out[:, 0], x[:, 0], atol=1e-15)


def test_rope_agrees_with_llmlab_model():
    x = np.random.default_rng(1).normal(size=(2, 3, 11, 16))  # [batch, heads, seq, head_dim]
    positions = torch.arange(4, 15)
    cos, sin = lm.RotaryEmbedding(16, theta=500.0)(positions)
    expected = lm.apply_rope(torch.tensor(x, dtype=torch.float32), cos, sin).numpy()
    got = pos.apply_rope(x, positions=np.arange(4, 15), base=500.0)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose(pos.rotate_half(x), lm.rotate_half(torch.tensor(x)).numpy(), atol=0)


def test_rope_agrees_with_hf_llama():
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama import modeling_llama as hf

    config = transformers.LlamaConfig(hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
                                      head_dim=16, rope_theta=10000.0, max_position_embeddings=64)
    rotary = hf.LlamaRotaryEmbedding(config)
    q = torch.randn(1, 2, 9, 16, dtype=torch.float64)
    k = torch.randn(1, 2, 9, 16, dtype=torch.float64)
    position_ids = torch.arange(9)[None]
    cos, sin = rotary(q, position_ids)
    q_hf, k_hf = hf.apply_rotary_pos_emb(q, k, cos, sin)
    np.testing.assert_allclose(pos.apply_rope(q.numpy()), q_hf.numpy(), atol=1e-6)
    np.testing.assert_allclose(pos.apply_rope(k.numpy()), k_hf.numpy(), atol=1e-6)


def test_interleaved_layout_is_the_same_rotation_with_permuted_coordinates():
    x = np.random.default_rng(2).normal(size=(5, 8))
    to_half = np.r_[np.arange(0, 8, 2), np.arange(1, 8, 2)]  # (x0, x2, x4, x6, x1, x3, x5, x7)
    via_half = pos.apply_rope(x[:, to_half])[:, np.argsort(to_half)]
    np.testing.assert_allclose(pos.apply_rope(x, interleaved=True), via_half, atol=1e-14)
    assert not np.allclose(pos.apply_rope(x, interleaved=True), pos.apply_rope(x))


def test_rope_score_depends_only_on_relative_distance():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=16), rng.normal(size=16)
    starts = np.array([0, 1, 7, 100, 1000])
    for offset in (0, 1, 5, -3):
        scores = pos.rope_score(q, k, starts + offset, starts)
        np.testing.assert_allclose(scores, scores[0], atol=1e-10)
    assert not np.isclose(pos.rope_score(q, k, 5, 0), pos.rope_score(q, k, 6, 0))
    np.testing.assert_allclose(pos.rope_score(q, k, 0, 0), q @ k, atol=1e-12)


def test_rope_attention_scores_are_constant_along_diagonals():
    rng = np.random.default_rng(4)
    x = np.tile(rng.normal(size=8), (6, 1))  # the same token six times
    S = pos.apply_rope(x) @ pos.apply_rope(x).T
    for offset in range(-5, 6):
        diag = np.diagonal(S, offset)
        np.testing.assert_allclose(diag, diag[0], atol=1e-12)


def test_apply_rope_validation():
    with pytest.raises(ValueError, match="even"):
        pos.apply_rope(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="position"):
        pos.apply_rope(np.zeros(4))
    with pytest.raises(ValueError):
        pos.rope_score(np.zeros(4), np.zeros(6), 0, 0)


# ------------------------------------------------------------------- a bag of words without positions

def _self_attention(W_Q, W_K, W_V, causal=False):
    return lambda X: att.attention_from_X(X, W_Q, W_K, W_V, causal=causal)[0]


def test_attention_without_positions_is_permutation_equivariant():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6, 4))
    Ws = [rng.normal(size=(4, 4)) for _ in range(3)]
    perm = rng.permutation(6)
    assert pos.is_permutation_equivariant(_self_attention(*Ws), X, perm)
    assert pos.is_permutation_equivariant(_self_attention(*Ws), rng.normal(size=(2, 6, 4)), perm)  # batch
    P = pos.sinusoidal_positions(6, 4)
    with_positions = lambda X: _self_attention(*Ws)(X + P)  # noqa: E731
    assert not pos.is_permutation_equivariant(with_positions, X, perm)
    assert not pos.is_permutation_equivariant(_self_attention(*Ws, causal=True), X, perm)
    assert pos.is_permutation_equivariant(lambda X: X, X, np.arange(6))
    assert not pos.is_permutation_equivariant(lambda X: X.sum(axis=-1), X, perm)  # no token axis left


def test_rope_attention_is_not_permutation_equivariant():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(5, 8))
    W_Q, W_K = rng.normal(size=(8, 8)), rng.normal(size=(8, 8))

    def rope_attention(X):
        Q, K = pos.apply_rope(X @ W_Q), pos.apply_rope(X @ W_K)
        return att.scaled_dot_product_attention(Q, K, X)[0]

    assert not pos.is_permutation_equivariant(rope_attention, X, [4, 3, 2, 1, 0])


def test_permutation_check_validation():
    with pytest.raises(ValueError, match="permutation"):
        pos.is_permutation_equivariant(lambda X: X, np.zeros((3, 2)), [0, 0, 1])
    with pytest.raises(TypeError):
        pos.is_permutation_equivariant("not callable", np.zeros((3, 2)), [0, 1, 2])
    with pytest.raises(ValueError):
        pos.is_permutation_equivariant(lambda X: X, np.zeros(3), [0, 1, 2])
