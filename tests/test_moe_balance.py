"""llmlab.moe_balance: the load-balancing experiment of lab 05 (a tiny run) and its shipped results."""

import math

import pytest

from llmlab.moe_balance import DEFAULTS, RUNS, load_results, model_configs, run_experiment


def test_dense_twin_has_the_moe_active_size():
    configs = model_configs(100, d_model=32, n_layers=2, n_heads=4, n_experts=4, k=2, expert_d_ff=24, seq_len=16)
    assert configs["dense"].d_ff == 2 * 24 and configs["moe"].n_experts == 4
    from llmlab.cost.calibrate import spec_from_llmlab

    moe, dense = (spec_from_llmlab(configs[k]) for k in ("moe", "dense"))
    assert moe.active_param_count() - dense.param_count() == 2 * 32 * 4  # only the routers differ


@pytest.mark.slow
def test_a_tiny_run_records_shares_and_shares_its_seed():
    r = run_experiment(steps=3, record_every=1, batch_size=2, seq_len=16, d_model=16, n_heads=2, n_layers=1,
                       expert_d_ff=8, timing_repeats=1)
    assert set(r["runs"]) == set(RUNS)
    no_aux, aux = r["runs"]["moe_no_aux"], r["runs"]["moe_aux"]
    # same initial weights and batch: the first step's LM loss is identical; the aux loss only changes the update
    assert no_aux["history"]["train_loss"][0] == aux["history"]["train_loss"][0]
    assert no_aux["history"]["step"] == [1, 2, 3]
    for shares in no_aux["history"]["share"]:
        assert len(shares) == 1 and math.isclose(sum(shares[0]), 1.0, abs_tol=1e-12)
    assert 0.25 <= no_aux["max_share"] <= 0.5  # top-2 of 4: 1/4 balanced, 1/2 when one expert takes every token
    assert r["runs"]["dense"]["step_vs_dense"] == 1.0
    with pytest.raises(ValueError, match="unknown settings"):
        run_experiment(step=3)


def test_shipped_results_are_complete():
    r = load_results()
    assert r["settings"]["steps"] == DEFAULTS["steps"] and set(r["runs"]) == set(RUNS)
    for name in RUNS:
        run = r["runs"][name]
        assert run["val_loss"] > 0 and run["seconds"] > 0 and run["step_seconds"] > 0
        assert run["history"]["step"][-1] == DEFAULTS["steps"]
    assert r["runs"]["moe_no_aux"]["active_params"] == r["runs"]["moe_aux"]["active_params"]
    assert r["runs"]["moe_aux"]["params"] > r["runs"]["dense"]["params"]
