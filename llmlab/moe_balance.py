"""The load-balancing experiment of lab 05: does a tiny MoE need the auxiliary loss?

Four small Llama-style models are trained on the course corpus from the same seed (same initial
weights where they share a shape, same batches):

- ``moe_no_aux``: every MLP is a ``SparseMoE`` with ``n_experts`` experts, top-``k``, trained on
  the language-model loss alone;
- ``moe_aux``: the same, plus ``aux_coef · load_balancing_loss`` (the Switch/Mixtral loss, with
  Switch's coefficient 0.01);
- ``moe_aux_strong``: the same with ten times the coefficient (``aux_coef_strong``), to see the
  effect grow;
- ``dense``: the dense twin with the same *active* size: one SwiGLU of width ``k · expert_d_ff``,
  so a token goes through as many MLP weights as in the MoE.

During training each MoE layer counts how many tokens its router sends to each expert; every
``record_every`` steps the share of each expert in that window is stored, which is what the lab
plots. At the end: validation loss, the busiest expert's share, wall time and parameter counts.
Wall time on a shared machine drifts with the load, so the three trained models are also timed
side by side: one training step (forward and backward) on the same batch, interleaved, median of
``timing_repeats``; ``step_seconds`` and its ratio to the dense model are the comparable numbers.

At this scale the split also moves with the seed, so one run cannot say whether the auxiliary loss
helped: ``run_seeds`` repeats the experiment from other seeds and keeps, per seed and run, the
numbers the lab compares (validation loss and the busiest expert's share), and ``seed_spread``
sums them up as mean, minimum and maximum.

``python benchmarks/moe_load_balance.py`` runs it with the shipped settings (seeds 0, 1 and 2) and
writes ``llmlab/data/moe_load_balance.json``; ``load_results()`` reads that file, so the notebook
plots the measured run without training. ``run_experiment(steps=...)`` repeats a short version live.
"""

from __future__ import annotations

import functools
import json
import os
import time
from importlib import resources

import torch
import torch.nn.functional as F

from llmlab.cost.calibrate import spec_from_llmlab
from llmlab.model import ModelConfig, Transformer, count_parameters
from llmlab.moe import SparseMoE, load_balancing_loss, load_stats, router_logits
from llmlab.train import encode_documents, evaluate, get_batch, lr_at, make_optimizer

__all__ = ["RUNS", "DEFAULTS", "SEEDS", "model_configs", "run_experiment", "run_seeds", "seed_spread", "load_results",
           "RESULTS_FILE"]

RUNS = ("moe_no_aux", "moe_aux", "moe_aux_strong", "dense")
RESULTS_FILE = "moe_load_balance.json"

# The settings of the shipped run (a few minutes on 2 cores).
DEFAULTS = dict(
    steps=400, batch_size=16, seq_len=64, lr=3e-3, warmup=30, aux_coef=0.01, aux_coef_strong=0.1,
    record_every=20, seed=0,
    d_model=64, n_layers=2, n_heads=4, n_experts=4, k=2, expert_d_ff=64, timing_repeats=7,
)
SEEDS = (0, 1, 2)  # the shipped run is the first; the others measure the spread
# What each seed keeps of a run: the numbers the lab's table compares.
_PER_SEED = ("val_loss", "max_share", "max_share_during_training")


def model_configs(vocab_size: int, *, d_model: int, n_layers: int, n_heads: int, n_experts: int, k: int,
                  expert_d_ff: int, seq_len: int) -> dict[str, ModelConfig]:
    """The MoE config (both MoE runs) and its dense twin of the same active MLP width."""
    common = dict(vocab_size=vocab_size, d_model=d_model, n_layers=n_layers, n_heads=n_heads, max_seq_len=seq_len)
    moe = ModelConfig.llama_style(**common, n_experts=n_experts, n_experts_per_token=k, moe_d_ff=expert_d_ff)
    dense = ModelConfig.llama_style(**common, d_ff=k * expert_d_ff)
    return {"moe": moe, "dense": dense}


@functools.lru_cache(maxsize=1)  # run_seeds trains from the same token ids once per seed
def _corpus_ids():
    from llmlab import corpus, pretrained  # lazy: reading the corpus is only needed to train

    tok = pretrained.load_tokenizer()
    train = encode_documents(corpus.load_documents("train"), tok)
    val = encode_documents(corpus.load_documents("validation"), tok)
    return tok.vocab_size, train, val


def _train_one(name: str, config: ModelConfig, train_ids, val_ids, s: dict, progress) -> dict:
    torch.manual_seed(s["seed"])  # same initial weights for the two MoE runs
    model = Transformer(config)
    moe_layers = [m for m in model.modules() if isinstance(m, SparseMoE)]
    aux_coef = {"moe_aux": s["aux_coef"], "moe_aux_strong": s["aux_coef_strong"]}.get(name, 0.0)
    optimizer = make_optimizer(model, s["lr"], 0.1)
    batches = torch.Generator().manual_seed(s["seed"])  # same batches for every run
    history = {"step": [], "share": [], "train_loss": [], "aux_loss": []}
    window_loss, window_aux = [], []
    start = time.perf_counter()
    model.train()
    for step in range(s["steps"]):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, lr=s["lr"], warmup=s["warmup"], steps=s["steps"])
        inputs, targets, _ = get_batch(train_ids, s["batch_size"], s["seq_len"], batches)
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        total = loss
        if moe_layers:
            aux = load_balancing_loss(router_logits(model), s["k"])
            window_aux.append(aux.item())
            total = loss + aux_coef * aux
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        window_loss.append(loss.item())
        if (step + 1) % s["record_every"] == 0 or step + 1 == s["steps"]:
            history["step"].append(step + 1)
            history["train_loss"].append(sum(window_loss) / len(window_loss))
            history["aux_loss"].append(sum(window_aux) / len(window_aux) if window_aux else None)
            counts = [m.tokens_per_expert.tolist() for m in moe_layers]
            history["share"].append([[c / max(1, sum(row)) for c in row] for row in counts])
            for m in moe_layers:
                m.reset_stats()
            window_loss, window_aux = [], []
            if progress:
                progress(name, step + 1, history["train_loss"][-1])
    seconds = time.perf_counter() - start
    model.eval()
    for m in moe_layers:
        m.reset_stats()  # from here on the counters see the validation text only
    val_loss = evaluate(model, val_ids, seq_len=s["seq_len"], batch_size=s["batch_size"])
    val_share = [[c / max(1, sum(row)) for c in row] for row in (m.tokens_per_expert.tolist() for m in moe_layers)]
    spec = spec_from_llmlab(config, name=name)
    result = {
        "history": history,
        "val_loss": val_loss,
        "seconds": seconds,
        "params": count_parameters(model),
        "active_params": spec.active_param_count(),
        "val_share": val_share,
    }
    if moe_layers:
        result["max_share"] = max(max(layer) for layer in val_share)
        result["max_share_during_training"] = max(max(layer) for shares in history["share"] for layer in shares)
        result["load_stats"] = [load_stats(layer) for layer in val_share]
    return result, model


def _time_steps(models: dict, train_ids, s: dict) -> dict[str, float]:
    """Median seconds of one forward + backward pass per model, the models taking turns."""
    inputs, targets, _ = get_batch(train_ids, s["batch_size"], s["seq_len"], torch.Generator().manual_seed(s["seed"]))
    times: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(s["timing_repeats"]):
        for name, model in models.items():
            model.train()
            start = time.perf_counter()
            logits = model(inputs)
            F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)).backward()
            times[name].append(time.perf_counter() - start)
            model.zero_grad(set_to_none=True)
    return {name: sorted(t)[len(t) // 2] for name, t in times.items()}


def _load_average() -> float | None:
    """The machine's 1-minute load average (None where the OS has none): context for the wall times."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def run_experiment(progress=None, **settings) -> dict:
    """Train the runs of ``RUNS`` with ``DEFAULTS`` updated by ``settings``; returns the results.

    ``progress(run_name, step, train_loss)`` is called at every record (e.g. to print).
    """
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown settings {unknown}; known: {sorted(DEFAULTS)}")
    s = {**DEFAULTS, **settings}
    vocab, train_ids, val_ids = _corpus_ids()
    configs = model_configs(vocab, d_model=s["d_model"], n_layers=s["n_layers"], n_heads=s["n_heads"],
                            n_experts=s["n_experts"], k=s["k"], expert_d_ff=s["expert_d_ff"], seq_len=s["seq_len"])
    results = {"settings": s, "torch": torch.__version__, "threads": torch.get_num_threads(),
               "load_average_at_start": _load_average(),
               "train_tokens": int(train_ids.numel()), "val_tokens": int(val_ids.numel()),
               "configs": {k: v.to_dict() for k, v in configs.items()}, "runs": {}}
    models = {}
    for name in RUNS:
        config = configs["dense" if name == "dense" else "moe"]
        results["runs"][name], models[name] = _train_one(name, config, train_ids, val_ids, s, progress)
    step_seconds = _time_steps(models, train_ids, s)
    results["load_average_at_end"] = _load_average()
    for name in RUNS:
        results["runs"][name]["step_seconds"] = step_seconds[name]
        results["runs"][name]["step_vs_dense"] = step_seconds[name] / step_seconds["dense"]
    return results


def run_seeds(seeds=SEEDS, progress=None, **settings) -> dict:
    """``run_experiment`` from each seed: the first seed's whole results, plus ``per_seed``.

    ``per_seed`` is a list, one entry per seed in order: ``{"seed": s, "runs": {run: {val_loss, max_share,
    max_share_during_training}}}`` (the dense run has no shares).
    """
    seeds = list(seeds)
    if not seeds or len(set(seeds)) != len(seeds) or not all(isinstance(x, int) and not isinstance(x, bool) for x in seeds):
        raise ValueError(f"seeds must be distinct integers, at least one; got {seeds!r}")
    first, per_seed = None, []
    for seed in seeds:
        results = run_experiment(progress=progress, **{**settings, "seed": seed})
        first = first or results
        per_seed.append({"seed": seed, "runs": {name: {key: run[key] for key in _PER_SEED if key in run}
                                                 for name, run in results["runs"].items()}})
    first["per_seed"] = per_seed
    first["load_average_at_end"] = _load_average()
    return first


def seed_spread(results: dict) -> dict[str, dict[str, dict[str, float]]]:
    """{run: {measure: {"mean", "min", "max", "n"}}} over ``results["per_seed"]`` (see ``run_seeds``)."""
    per_seed = results.get("per_seed")
    if not per_seed:
        raise ValueError("these results come from one seed (no 'per_seed'): run run_seeds")
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in per_seed[0]["runs"]:
        out[name] = {}
        for key in _PER_SEED:
            values = [entry["runs"][name][key] for entry in per_seed if key in entry["runs"][name]]
            if values:
                out[name][key] = {"mean": sum(values) / len(values), "min": min(values), "max": max(values),
                                  "n": len(values)}
    return out


def load_results() -> dict:
    """The shipped results of ``python benchmarks/moe_load_balance.py`` (``llmlab/data/moe_load_balance.json``)."""
    text = resources.files("llmlab").joinpath("data", RESULTS_FILE).read_text(encoding="utf-8")
    return json.loads(text)
