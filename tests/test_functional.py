import numpy as np
import pytest

from llmlab import functional as F


def test_softmax_chapter_numbers():
    np.testing.assert_allclose(F.softmax([5.0, 2.0, 0.0]), [0.946499, 0.047123, 0.006377], atol=1e-6)
    np.testing.assert_allclose(F.softmax([5.0, 2.0, 0.0], temperature=0.5), [0.997482, 0.002473, 0.000045], atol=1e-6)
    np.testing.assert_allclose(F.softmax([5.0, 2.0, 0.0], temperature=2.0), [0.766157, 0.170953, 0.062890], atol=1e-6)
    np.testing.assert_allclose(F.softmax([4.0, 3.0, 1.0, 0.0]), [0.696387, 0.256187, 0.034671, 0.012755], atol=1e-6)


def test_softmax_is_stable_and_shift_invariant():
    np.testing.assert_allclose(F.softmax([1000.0, 999.0, 998.0]), [0.665241, 0.244728, 0.090031], atol=1e-6)
    z = np.random.default_rng(0).normal(size=(3, 5))
    np.testing.assert_allclose(F.softmax(z), F.softmax(z + 123.0), atol=1e-12)


def test_softmax_axis_and_neg_inf():
    z = np.array([[1.0, 2.0, -np.inf], [0.0, 0.0, 0.0]])
    p = F.softmax(z)
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-12)
    assert p[0, 2] == 0.0
    np.testing.assert_allclose(F.softmax(z.T, axis=0), p.T, atol=1e-12)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_softmax_rejects_bad_temperature(bad):
    with pytest.raises(ValueError, match="temperature"):
        F.softmax([1.0, 2.0], temperature=bad)


def test_softmax_rejects_degenerate_input():
    with pytest.raises(ValueError):
        F.softmax([-np.inf, -np.inf])
    with pytest.raises(ValueError):
        F.softmax([])
    with pytest.raises(ValueError):
        F.softmax(3.0)


def test_log_softmax_matches_log_of_softmax():
    z = np.random.default_rng(1).normal(0, 30, size=(4, 9))
    np.testing.assert_allclose(F.log_softmax(z), np.log(F.softmax(z)), atol=1e-10)
    assert np.isfinite(F.log_softmax([0.0, -1e6])).all()


def test_entropy_of_chapter_temperatures():
    z = np.array([4.0, 3.0, 1.0, 0.0])
    got = [float(F.entropy(F.softmax(z, temperature=t))) for t in (0.5, 1.0, 2.0)]
    np.testing.assert_allclose(got, [0.3826, 0.7731, 1.1379], atol=1e-4)
    assert F.entropy([0.5, 0.5], base=2) == pytest.approx(1.0)
