"""The checks students read: they must fail when they should, and say why in Spanish."""

import numpy as np
import pytest

from llmlab import checks, metrics
from llmlab.checks import check_close, check_equal, check_raises, check_shape, check_type, hidden, reference_blocked


def test_check_close_accepts_within_tolerance_and_rejects_outside():
    check_close([0.1, 0.2], [0.1, 0.2 + 1e-8], atol=1e-6)
    with pytest.raises(AssertionError, match="se esperaba"):
        check_close([0.1, 0.2], [0.1, 0.3], atol=1e-6)


def test_check_close_shape_nan_and_none():
    with pytest.raises(AssertionError, match="forma"):
        check_close([[1.0, 2.0]], [1.0, 2.0])
    with pytest.raises(AssertionError, match="NaN"):
        check_close([float("nan")], [1.0])
    with pytest.raises(AssertionError, match="None"):
        check_close(None, 1.0)


def test_check_close_handles_torch_tensors():
    torch = pytest.importorskip("torch")
    check_close(torch.tensor([0.5, 0.25]), [0.5, 0.25])


def test_hint_is_shown():
    with pytest.raises(AssertionError, match="Pista: resta el máximo"):
        check_close(1.0, 2.0, hint="resta el máximo")


def test_check_equal_type_shape_raises():
    check_equal(np.int64(15), 15)
    with pytest.raises(AssertionError):
        check_equal(2, 15)
    with pytest.raises(AssertionError, match="tipo int"):
        check_type(15.0, int)
    with pytest.raises(AssertionError):
        check_shape(np.zeros((2, 3)), (3, 2))
    check_raises(lambda: int("x"), ValueError)
    with pytest.raises(AssertionError, match="no lanzó"):
        check_raises(lambda: None, ValueError)
    with pytest.raises(AssertionError, match="lanzó TypeError"):
        check_raises(lambda: len(3), ValueError)


def test_hidden_reveals_nothing_of_the_case():
    with pytest.raises(AssertionError) as info:
        with hidden("casos aleatorios"):
            check_close(0.123456, 0.654321)
    message = str(info.value)
    assert "prueba oculta" in message and "casos aleatorios" in message
    assert "0.123456" not in message and "0.654321" not in message


def test_reference_blocked_catches_every_binding_and_restores():
    original = metrics.nll
    alias = metrics.nll

    def wrapper(p):
        return metrics.nll(p)

    with reference_blocked(metrics.nll):
        with pytest.raises(AssertionError, match="referencia"):
            wrapper([0.5])
        assert metrics.nll is not original
    assert metrics.nll is original
    assert alias is original
    assert wrapper([0.5]) == pytest.approx(0.693147, abs=1e-6)


def test_checks_survive_a_rebound_numpy(monkeypatch):
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)  # what a student might try in a notebook
    monkeypatch.setattr(np, "asarray", lambda *a, **k: np.zeros(1))
    with pytest.raises(AssertionError):
        check_close([1.0], [2.0])
    assert checks.check_close is check_close


def test_show_caught_prints_how_a_mistake_is_caught(capsys):
    from llmlab.checks import show_caught

    show_caught("exp(L)", lambda: check_close(10.0, 2.154435, what="perplejidad"))
    show_caught("no es un error", lambda: check_close(1.0, 1.0))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "✘ exp(L)" and "se esperaba 2.154435" in out[1]
    assert out[2].startswith("?? no es un error")
