"""llmlab.recurrence: the linear recurrence of state-space models and its O(n) cost (chapter 05)."""

import numpy as np
import pytest

from llmlab.recurrence import attention_vs_recurrence_flops, linear_recurrence


def test_linear_recurrence_special_cases_and_closed_form():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 3))
    np.testing.assert_allclose(linear_recurrence(x, 0.0), x, atol=0)
    np.testing.assert_allclose(linear_recurrence(x, 1.0), np.cumsum(x, axis=0), atol=1e-12)
    a = np.array([0.5, 0.9, -0.3])
    expected = np.stack([sum(a ** (t - s) * x[s] for s in range(t + 1)) for t in range(7)])
    np.testing.assert_allclose(linear_recurrence(x, a), expected, atol=1e-12)
    before = x.copy()
    linear_recurrence(x, a)
    np.testing.assert_array_equal(x, before)  # the input is not modified
    with pytest.raises(ValueError, match="length d"):
        linear_recurrence(x, [0.5, 0.5])


def test_flop_counts():
    f = attention_vs_recurrence_flops(1000, 64)
    assert f["recurrence"] == 64_000 and f["attention"] == 1000 * 1001 // 2 * 128
    assert attention_vs_recurrence_flops(2000, 64)["attention"] / f["attention"] == pytest.approx(4.0, rel=1e-3)
