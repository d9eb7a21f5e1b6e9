"""llmlab.embeddings: E[ids] and X = E[ids] + P[:n], with the chapter 02 example and its mistakes."""

import numpy as np
import pytest
import torch

from llmlab import embeddings as emb
from llmlab import model as lm
from llmlab import positional as pos

IDS = [42, 981, 774, 42, 1503]  # "El banco aprobó el préstamo", chapter 02


def _table(v=2000, d=4, seed=0):
    return np.random.default_rng(seed).normal(size=(v, d))


def test_embed_selects_rows_with_shape_n_by_d():
    E = _table()
    x = emb.embed(IDS, E)
    assert x.shape == (5, 4)  # one row per token, not (d, n)
    np.testing.assert_array_equal(x[1], E[981])
    np.testing.assert_array_equal(x[0], x[3])  # "El" and "el" share id 42: same row before positions
    assert x.dtype == np.float64


def test_embed_batch_keeps_the_batch_dimension():
    E = _table(v=50, d=3)
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    x = emb.embed(ids, E)
    assert x.shape == (2, 3, 3)
    np.testing.assert_array_equal(x[1, 2], E[6])


def test_embed_equals_one_hot_times_E():
    E = _table(v=30, d=6, seed=1)
    ids = np.array([3, 0, 29, 3])
    one_hot = np.eye(30)[ids]
    np.testing.assert_allclose(emb.embed(ids, E), one_hot @ E, atol=1e-12)


def test_embed_accepts_torch_ids_and_matches_nn_embedding():
    table = torch.nn.Embedding(20, 5)
    ids = torch.tensor([[0, 7, 19], [3, 3, 1]])
    np.testing.assert_allclose(emb.embed(ids, table.weight), table(ids).detach().numpy(), atol=1e-7)


@pytest.mark.parametrize("bad", [[-1], [0, 2000], [[1, 2], [3, -5]]])
def test_embed_rejects_ids_outside_the_vocabulary(bad):
    with pytest.raises(IndexError, match="outside the vocabulary"):
        emb.embed(bad, _table())


@pytest.mark.parametrize("ids,error", [([1.0, 2.0], TypeError), ([True, False], TypeError), (np.zeros((1, 1, 2), int), ValueError)])
def test_embed_rejects_bad_ids(ids, error):
    with pytest.raises(error):
        emb.embed(ids, _table())


def test_embed_rejects_a_table_that_is_not_a_matrix():
    with pytest.raises(ValueError, match="2-D"):
        emb.embed([0], np.zeros(4))


def test_build_input_adds_position_by_position_not_by_id():
    E = _table()
    P = pos.sinusoidal_positions(16, 4)
    X = emb.build_input(IDS, E, P)
    np.testing.assert_allclose(X, E[IDS] + P[:5], atol=1e-12)
    assert not np.allclose(X[0], X[3])  # same id, different positions: different rows
    np.testing.assert_allclose(X[0] - X[3], P[0] - P[3], atol=1e-12)
    np.testing.assert_allclose(X[0], E[42] + [0.0, 1.0, 0.0, 1.0], atol=1e-12)  # PE[0] = [0, 1, 0, 1]


def test_build_input_batch_adds_the_same_positions_to_every_sequence():
    E = _table(v=40, d=6, seed=2)
    P = _table(v=10, d=6, seed=3)
    ids = np.array([[1, 2, 3, 4], [4, 3, 2, 1]])
    X = emb.build_input(ids, E, P)
    assert X.shape == (2, 4, 6)
    np.testing.assert_allclose(X[1], E[ids[1]] + P[:4], atol=1e-12)


def test_order_matters_only_with_positions():
    E = _table(v=40, d=6, seed=4)
    P = pos.sinusoidal_positions(8, 6)
    a, b = [5, 9, 12], [12, 9, 5]  # "perro muerde hombre" / "hombre muerde perro"
    np.testing.assert_allclose(emb.embed(a, E)[::-1], emb.embed(b, E), atol=1e-12)  # a bag of words
    assert not np.allclose(emb.build_input(a, E, P)[::-1], emb.build_input(b, E, P))


def test_build_input_matches_llmlab_model_embeddings():
    cfg = lm.ModelConfig.gpt2_style(vocab_size=60, d_model=8, n_heads=2, n_layers=1, max_seq_len=12)
    model = lm.Transformer(cfg)
    ids = torch.tensor([[3, 14, 15, 9, 2, 6]])
    with torch.no_grad():
        expected = model.tok_emb(ids) + model.pos_emb(torch.arange(6))
    X = emb.build_input(ids[0], model.tok_emb.weight, model.pos_emb.table.weight)
    np.testing.assert_allclose(X, expected[0].numpy(), atol=1e-7)


def test_build_input_rejects_too_long_sequences_and_wrong_widths():
    E = _table()
    with pytest.raises(ValueError, match="max_len=3"):
        emb.build_input(IDS, E, pos.sinusoidal_positions(3, 4))
    with pytest.raises(ValueError, match="d_model"):
        emb.build_input(IDS, E, pos.sinusoidal_positions(8, 6))
    with pytest.raises(IndexError):
        emb.build_input([2000], E, pos.sinusoidal_positions(8, 4))
