"""llmlab.cost.choose_deployment: chapter 07's edge-vs-cloud rule (lab 08's reference)."""

import pytest

from llmlab.cost import choose_deployment, kv_bytes


def test_privacy_does_not_make_a_model_fit():
    kv = kv_bytes(32, 1, 2048, 8, 128) / 1e9
    assert choose_deployment(14.0, kv, 8.0, private=True) == "ninguno"  # 7B fp16 on an 8 GB device
    assert choose_deployment(3.5, kv, 8.0, private=True) == "local"  # the same model at 4 bits
    assert choose_deployment(3.5, kv, 8.0) == "nube"
    assert choose_deployment(3.5, kv, 8.0, offline=True) == "local"


def test_fit_counts_the_cache_and_the_reserve_and_an_exact_fit_fits():
    assert choose_deployment(4.0, 2.0, 8.0, offline=True, reserve_frac=0.25) == "local"  # 6 <= 6
    assert choose_deployment(4.0, 2.5, 8.0, offline=True, reserve_frac=0.25) == "ninguno"
    assert choose_deployment(5.0, 4.0, 8.0, offline=True, reserve_frac=0.0) == "ninguno"  # weights alone fit


@pytest.mark.parametrize("args", [(-1.0, 0.5, 8.0), (1.0, -0.5, 8.0), (1.0, 0.5, 0.0)])
def test_bad_memory_raises(args):
    with pytest.raises(ValueError):
        choose_deployment(*args)


def test_reserve_out_of_range_raises():
    with pytest.raises(ValueError):
        choose_deployment(1.0, 0.5, 8.0, reserve_frac=1.0)
