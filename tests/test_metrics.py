import math

import numpy as np
import pytest

from llmlab import metrics as M

CASA_AZUL = [0.5, 0.25, 0.8]


def test_la_casa_azul():
    assert M.nll(CASA_AZUL) == pytest.approx(2.302585, abs=1e-6)
    assert M.nll(CASA_AZUL) == pytest.approx(math.log(10), abs=1e-12)
    assert M.nll(CASA_AZUL, reduction="mean") == pytest.approx(0.767528, abs=1e-6)
    assert M.nll(CASA_AZUL, base=2) == pytest.approx(3.321928, abs=1e-6)
    assert M.perplexity(CASA_AZUL) == pytest.approx(2.154435, abs=1e-6)
    assert M.sequence_log_prob(CASA_AZUL) == pytest.approx(math.log(0.1), abs=1e-12)


def test_after_training_numbers():
    assert M.nll([0.8, 0.6, 0.95]) == pytest.approx(0.785262, abs=1e-6)
    assert M.perplexity([0.8, 0.6, 0.95]) == pytest.approx(1.299207, abs=1e-6)


def test_perplexity_anchors_and_base_independence():
    assert M.perplexity([1.0, 1.0]) == 1.0
    assert M.perplexity([1 / 50] * 50) == pytest.approx(50.0)
    total_bits = M.nll(CASA_AZUL, base=2)
    assert 2 ** (total_bits / 3) == pytest.approx(M.perplexity(CASA_AZUL))
    assert M.perplexity_from_loss(M.nll(CASA_AZUL), 3) == pytest.approx(M.perplexity(CASA_AZUL))


def test_no_underflow_in_log_space():
    assert M.sequence_log_prob([0.01] * 1000) == pytest.approx(-4605.170186, abs=1e-4)
    assert np.prod([0.01] * 1000) == 0.0  # why the log space matters


@pytest.mark.parametrize("bad", [[0.0], [1.2], [-0.1], [], [float("nan")]])
def test_invalid_probabilities(bad):
    with pytest.raises(ValueError):
        M.nll(bad)


def test_invalid_arguments():
    with pytest.raises(ValueError, match="reduction"):
        M.nll([0.5], reduction="max")
    with pytest.raises(ValueError):
        M.perplexity_from_loss(1.0, 0)
    with pytest.raises(ValueError):
        M.nll([0.5], base=1)


def test_masked_mean_nll_only_counts_targets():
    log_probs = np.log([0.1, 0.1, 0.5, 0.25])
    mask = [False, False, True, True]
    assert M.masked_mean_nll(log_probs, mask) == pytest.approx(-(math.log(0.5) + math.log(0.25)) / 2)
    with pytest.raises(ValueError):
        M.masked_mean_nll(log_probs, [False] * 4)
    with pytest.raises(ValueError):
        M.masked_mean_nll(log_probs, [True] * 3)
