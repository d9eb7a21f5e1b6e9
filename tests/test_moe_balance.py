"""llmlab.moe_balance: the load-balancing experiment of lab 05 (a tiny run) and its shipped results."""

import math

import pytest

from llmlab.moe_balance import DEFAULTS, RUNS, SEEDS, load_results, model_configs, run_experiment, run_seeds, seed_spread


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


@pytest.mark.slow
def test_other_seeds_start_elsewhere_and_their_spread_brackets_them(monkeypatch):
    from llmlab import moe_balance

    vocab, train, val = moe_balance._corpus_ids()  # cached: encoded once per process
    # a slice of the validation text: evaluating 8 tiny models on all of it took a minute
    monkeypatch.setattr(moe_balance, "_corpus_ids", lambda: (vocab, train[:20_000], val[:2_000]))
    tiny = dict(steps=2, record_every=1, batch_size=2, seq_len=16, d_model=16, n_heads=2, n_layers=1, expert_d_ff=8,
                timing_repeats=1)
    r = run_seeds([5, 6], **tiny)
    assert r["settings"]["seed"] == 5 and [e["seed"] for e in r["per_seed"]] == [5, 6]
    assert r["per_seed"][0]["runs"]["moe_aux"]["val_loss"] == r["runs"]["moe_aux"]["val_loss"]  # the first seed in full
    losses = [e["runs"]["moe_no_aux"]["val_loss"] for e in r["per_seed"]]
    assert losses[0] != losses[1]  # another seed: other initial weights and batches
    spread = seed_spread(r)["moe_no_aux"]["val_loss"]
    assert spread["min"] == min(losses) and spread["max"] == max(losses) and spread["n"] == 2
    assert "max_share" not in seed_spread(r)["dense"]


def test_seed_spread_is_the_mean_and_range_of_each_measure():
    per_seed = [{"seed": s, "runs": {"moe_aux": {"val_loss": v, "max_share": m}, "dense": {"val_loss": v + 1}}}
                for s, v, m in ((0, 4.0, 0.30), (1, 5.0, 0.40), (2, 6.0, 0.35))]
    spread = seed_spread({"per_seed": per_seed})
    assert spread["moe_aux"]["val_loss"] == {"mean": 5.0, "min": 4.0, "max": 6.0, "n": 3}
    assert spread["moe_aux"]["max_share"]["min"] == 0.30 and spread["moe_aux"]["max_share"]["max"] == 0.40
    assert spread["dense"]["val_loss"]["mean"] == 6.0 and set(spread["dense"]) == {"val_loss"}
    with pytest.raises(ValueError, match="one seed"):
        seed_spread({"runs": {}})
    for bad in ([], [1, 1], [0.5], [True]):
        with pytest.raises(ValueError, match="distinct integers"):
            run_seeds(bad)


def test_shipped_results_are_complete():
    r = load_results()
    assert r["settings"]["steps"] == DEFAULTS["steps"] and set(r["runs"]) == set(RUNS)
    for name in RUNS:
        run = r["runs"][name]
        assert run["val_loss"] > 0 and run["seconds"] > 0 and run["step_seconds"] > 0
        assert run["history"]["step"][-1] == DEFAULTS["steps"]
    assert r["runs"]["moe_no_aux"]["active_params"] == r["runs"]["moe_aux"]["active_params"]
    assert r["runs"]["moe_aux"]["params"] > r["runs"]["dense"]["params"]
    # the spread the lab prints: every seed of SEEDS, the first one being the run shown in full
    assert [e["seed"] for e in r["per_seed"]] == list(SEEDS) and r["settings"]["seed"] == SEEDS[0]
    assert r["per_seed"][0]["runs"]["moe_no_aux"]["val_loss"] == r["runs"]["moe_no_aux"]["val_loss"]
    assert all(0.25 <= e["runs"][name]["max_share"] <= 0.5 for e in r["per_seed"] for name in RUNS if name != "dense")


def test_shipped_seeds_say_what_lab05_says():
    """lab05's sentence after the spread table (the claim lab05-moe-seeds), on the shipped results themselves."""
    spread = seed_spread(load_results())
    share = {name: spread[name]["max_share"] for name in RUNS if name != "dense"}
    assert share["moe_aux"]["mean"] >= share["moe_no_aux"]["mean"] - 0.005  # 0.01 does not spread the load
    assert share["moe_aux_strong"]["mean"] < share["moe_no_aux"]["mean"] - 0.02  # 0.1 does, on average...
    assert share["moe_aux_strong"]["max"] >= share["moe_no_aux"]["min"]  # ...but not on every seed
    loss = {name: spread[name]["val_loss"] for name in RUNS}
    means = [m["mean"] for m in loss.values()]
    assert min(m["max"] - m["min"] for m in loss.values()) > max(means) - min(means)
