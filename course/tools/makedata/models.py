"""Build the tiny Spanish models that ship in ``llmlab/data/models/`` (the ``make model`` target).

    python course/tools/makedata models                 # the real build (about 15 CPU minutes; 18 min on the shared machine)
    python course/tools/makedata models --smoke         # a few steps on a slice, into a temporary folder (seconds)
    python course/tools/makedata models --out DIR       # write somewhere else than the package
    python course/tools/makedata models --sweep         # how es-base's size was chosen (SWEEP.md; slow)
    python course/tools/makedata models --recipe next   # issue 24's recipe: ~16 M tokens per model, resumable (~2 h)
    python course/tools/makedata models --chat-only --recipe next-chat --out DIR
        # only es-chat's adapter again, on the models already in DIR (a copy of llmlab/data/models): ~16 min;
        # es-base, es-mini and the tokenizer stay byte for byte, so lab 06's shipped adapters stay valid

What it does, in order:

1. trains the BPE tokenizer on the **train** split of the corpus (validation and unseen text
   are never seen by the tokenizer nor by the models);
2. measures the add-k unigram and bigram baselines with that tokenizer;
3. pretrains ``es-mini`` and ``es-base`` on the train split, side by side in two threads of one
   intra-op thread each, keeping the weights with the best validation loss;
4. writes both (float16 safetensors), reloads ``es-base`` from its file and trains ``es-chat``
   on the chat train split (answers only, ``"chatml"`` template) as a **LoRA adapter** on it
   (``llmlab.lora``), saved as a PEFT-format folder instead of a second copy of the weights;
5. writes the configs, tokenizer, ``checksums.sha256``, ``training_log.json`` and ``REPORT.md``,
   whose numbers are measured here on the files as shipped (reloaded from disk, float16 weights
   loaded as float32): perplexities against the baselines, and the quality of the text itself
   (``makedata.quality``: valid-word rate with hunspell, repetition, chat answers on topic).

**Reproducibility.** Every random choice comes from fixed seeds and the tokenizer training is
deterministic, so the same command with the same torch version and the same number of threads
(``--threads``, default 1, set by the build itself) repeats the same run and writes the same
files, byte for byte (``checksums.sha256`` proves it). Across torch versions, CPUs or thread
counts the floating-point sums happen in another order: the weights differ in the last bits, the
runs drift apart slowly, and the losses in the report agree to about two decimals, not bit for
bit. What is guaranteed everywhere: the tokenizer (bit-exact), the data split, the configs and
the recipe.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

from llmlab import _safetensors, corpus, metrics, pretrained
from llmlab.chat import STOP_TOKENS, encode_chat
from llmlab.model import ModelConfig, Transformer, count_parameters, generate
from llmlab.sampling import Sampler
from llmlab.tokenizer import BPETokenizer
from llmlab.train import build_sft_examples, encode_documents, evaluate, stream_rows, train

from . import DATA, quality
from .common import log as _log, overridden, ppl as _ppl

__all__ = ["FULL", "NEXT", "RECIPES", "SMOKE", "SWEEP", "build", "heldout_report", "ngram_nll", "main", "resumable_train",
           "sweep"]

# ----------------------------------------------------------------------------------------------
# The recipe
# ----------------------------------------------------------------------------------------------
# The corpus has ~0.96 M training tokens with a 4096-token vocabulary (~4.1 bytes per token), most
# of them simple generated stories and dialogues. Compute, not data, is the limit here: the build
# runs on one intra-op thread (repeatable, and fair on a shared machine; es-mini trains in a second
# Python thread beside es-base) in about 15 CPU minutes, so es-base sees about 1.4 epochs. Its
# size was chosen by the sweep (SWEEP.md): after the same 80 steps d192-L4 had a lower validation
# loss than d256-L4 (4.101 vs 4.136) at under a quarter of the CPU time per step. With less than
# one epoch there is nothing to memorise: no dropout. Every run keeps the weights of its best
# validation loss anyway (measured on the first 20k validation tokens during training; the report
# uses all of them).

FULL = {
    "vocab_size": 4096,
    "threads": 1,
    "seed": 1234,
    "data_slice": None,  # use all documents
    "eval_tokens": 20_000,  # validation during training: the first 20k validation tokens (the report uses all)
    "train_eval_tokens": 20_000,  # the report's train loss (and the float16 check): the first 20k tokens
    "models": {
        "es-mini": {
            "config": dict(d_model=128, n_layers=4, n_heads=4, n_kv_heads=2, max_seq_len=256, dropout=0.0),
            "train": dict(steps=320, batch_size=16, seq_len=256, lr=3e-3, warmup=10, weight_decay=0.1,
                          grad_clip=1.0, eval_every=40, patience=None),
        },
        "es-base": {
            "config": dict(d_model=192, n_layers=4, n_heads=6, n_kv_heads=2, max_seq_len=256, dropout=0.0),
            "train": dict(steps=320, batch_size=16, seq_len=256, lr=2e-3, warmup=10, weight_decay=0.1,
                          grad_clip=1.0, eval_every=40, patience=None),
        },
    },
    "chat": {
        "parent": "es-base",
        "style": "chatml",
        # LoRA on every linear layer of the frozen es-base (llmlab.lora). Half a row of plain training
        # text per chat row ("replay") keeps es-chat's plain-text perplexity close to es-base's.
        "lora": dict(target_modules="all-linear", r=16, alpha=32, dropout=0.0),
        "replay": 0.5,
        "train": dict(steps=120, batch_size=16, seq_len=255, lr=2e-3, warmup=5, weight_decay=0.0,
                      grad_clip=1.0, eval_every=20, patience=None),
    },
    "quality": dict(samples=100, new_tokens=60, chat_questions=50),
    "sample_tokens": 48,
}

# The same pipeline on a few documents with a model of a few thousand parameters: seconds. Only the numbers
# change; everything else (seeds, dropout, the chat style, LoRA's targets, the replay share) is FULL's.
SMOKE = overridden(FULL, {
    "vocab_size": 300, "data_slice": 6, "eval_tokens": 2000, "train_eval_tokens": 2000,  # 6 documents per split
    "models": {
        "es-mini": {"config": dict(d_model=16, n_layers=1, n_heads=2, n_kv_heads=1),
                    "train": dict(steps=4, batch_size=2, seq_len=32, warmup=1, eval_every=2)},
        "es-base": {"config": dict(d_model=32, n_layers=1, n_heads=2, n_kv_heads=1),
                    "train": dict(steps=4, batch_size=2, seq_len=32, lr=3e-3, warmup=1, eval_every=2)},
    },
    "chat": {"lora": dict(r=4, alpha=8), "train": dict(steps=3, batch_size=2, lr=1e-3, warmup=1, eval_every=3)},
    "quality": dict(samples=4, new_tokens=8, chat_questions=3),
    "sample_tokens": 8,
})

# The recipe of issue 24 for the next build (``--recipe next``; run it after ``makedata corpus --recipe next``):
# es-base and es-mini see ~16 M tokens each instead of 1.3 M, resumably, within 2 hours of wall time on 2 cores.
# Sized from this session's measurements (build/sweep, one torch thread): d128-L4 trains at ~6,100 tokens per
# CPU second, d192-L4 at ~4,400, d256-L4 at ~3,300, d256-L6 at ~2,350 (alone on a core; in the shipped build,
# two models side by side on 2 cores, d192-L4 took 1.24 CPU s per 4,096-token step, ~3,300 tokens/s, and d128-L4
# 0.81). So: es-base d192-L4, 4,000 steps, ~83 min on one core; es-mini d128-L4, 4,000 steps, ~54 min on the
# other; then es-chat's LoRA, 900 steps (~20 min, 1.3 CPU s per step) on the chat set with the world facts and
# the sums; tokenizer, baselines and measuring (with the held-out set before and after) ~8 min: ~110 min in all
# on a quiet machine. The next corpus has ~4 M train tokens, so ~4 epochs: no dropout still, and the best
# validation weights are kept. Checkpoints every 200 steps in ``--checkpoints`` (default build/make-model/): an
# interrupted ``make model`` continues where it stopped. Evaluations every 400 steps on 20k validation tokens.
NEXT = overridden(FULL, {
    "models": {
        "es-mini": {"train": dict(steps=4000, lr=3e-3, warmup=100, eval_every=400)},
        "es-base": {"train": dict(steps=4000, lr=2e-3, warmup=100, eval_every=400)},
    },
    "chat": {"train": dict(steps=900, warmup=30, eval_every=100), "replay": 0.5},
    "quality": dict(samples=100, new_tokens=60, chat_questions=50),
    "checkpoint_every": 200,
    "heldout": True,
})
# The sweep's other answer: at equal CPU time the smaller model was ahead at every point measured (d128-L4 after
# 447 CPU s / 2.76 M tokens: validation 2.614 on the first 20k tokens, held-out text ppl 193.9; d192-L4 after
# 396 CPU s / 1.31 M tokens: 2.998 and 219.4), and for a 2-hour budget a compute-optimal size (~20 tokens per
# parameter) is ~1.6 M parameters. "next-small" trains es-base at d128-L4 for ~25 M tokens (6,000 steps, ~81 min)
# and es-mini at d96-L4 beside it; not measured beyond the sweep's 2.76 M tokens (~7 epochs of the next corpus).
NEXT_SMALL = overridden(NEXT, {
    "models": {
        "es-mini": {"config": dict(d_model=96, n_layers=4, n_heads=4, n_kv_heads=2), "train": dict(steps=6000)},
        "es-base": {"config": dict(d_model=128, n_layers=4, n_heads=4, n_kv_heads=2), "train": dict(steps=6000, lr=3e-3)},
    },
})
FULL["checkpoint_every"] = None  # the shipped recipe: no checkpoints, exactly the run of the shipped files
FULL["heldout"] = False
SMOKE["checkpoint_every"] = 2
SMOKE["heldout"] = False
# The chat step of issue 24's second round (``makedata corpus --recipe next-chat``, then ``makedata models --recipe
# next-chat --chat-only``): the same models, es-chat trained longer on the larger chat set.
NEXT_CHAT = overridden(NEXT_SMALL, {"chat": {"train": dict(steps=1500)}})
# The third round (issue 24, stop 39): a rank-64 adapter (half of d_model: room for the facts and the sums table),
# twice the steps, on ``makedata corpus --recipe next-chat2``. Measured (``--chat-only``, 4,003 s on a busy machine):
# on topic 48 % (set A) and 38 % (set B, blind) against next-chat's 50 / 33 %; sums 1/12 and 0/12 (it answers
# «El resultado es 10.» to almost every sum); the chat validation loss was lowest at step 1,800 and rose after.
NEXT_CHAT2 = overridden(NEXT_CHAT, {"chat": {"lora": dict(r=64, alpha=128), "train": dict(steps=3000)}})
# A fourth round (stop 40), outside the build so far: the same chat set as next-chat2 with every weight of es-base
# trained (embeddings and LM head included, lr 1e-3, no weight decay, best validation weights kept: step 400 of
# 2,000) instead of a LoRA: on topic 55 % (set A) and 48 % (set B), sums 1/12 on each set, clean stops 98 / 97 %.
# Better than every LoRA round on topic, no better on the sums; the chat validation loss rose after step 400.
# Sums alone (full fine-tune on 80 of the 100 pairs, 45 drills each, asked in a wording never trained on): 36 of
# the 80 trained pairs right after 150 steps, 47 after 300, then fewer as training went on (38, 29); 6-7 of the
# 20 held-out pairs. es-base can hold part of the table when it is drilled alone, and it does not generalise it.
RECIPES = {"shipped": FULL, "next": NEXT, "next-small": NEXT_SMALL, "next-chat": NEXT_CHAT, "next-chat2": NEXT_CHAT2, "smoke": SMOKE}
DEFAULT_RECIPE = "next-small"  # the recipe of the shipped models (issue 24)
CHECKPOINTS = Path(__file__).resolve().parents[3] / "build" / "make-model"

DESCRIPTIONS = {
    "es-base": "Modelo base en español ({params} parámetros, estilo Llama): continúa textos. Entrenado con el corpus del curso.",
    "es-mini": "Modelo diminuto ({params} parámetros) con el mismo tokenizador que es-base: para destilación y decodificación especulativa.",
    "es-chat": "es-base ajustado con instrucciones (SFT, adaptador LoRA) con las preguntas y respuestas del curso; plantilla de chat «chatml».",
}

PROMPTS = ["Había una vez", "La fotosíntesis es", "Querida abuela:", "Para preparar una tortilla"]
CHAT_QUESTIONS = 5  # the first questions of the chat validation split (never trained on)
ADAPTER = "es-chat-lora"  # the folder of es-chat's adapter


# ----------------------------------------------------------------------------------------------
# Baselines: add-k unigram and bigram models on the same tokens
# ----------------------------------------------------------------------------------------------


def ngram_nll(train_ids: torch.Tensor, eval_ids: torch.Tensor, vocab_size: int, order: int, k: float) -> float:
    """Mean NLL (nats) of ``eval_ids[1:]`` under an add-k smoothed unigram (``order=1``) or bigram (``order=2``) model.

    Unigram: ``p(w) = (c(w) + k) / (N + kV)``. Bigram: ``p(w | u) = (c(u, w) + k) / (c(u) + kV)``.
    Counts come from ``train_ids``; the scored positions are those ``evaluate`` scores for a model.
    """
    if order not in (1, 2):
        raise ValueError(f"order must be 1 (unigram) or 2 (bigram), got {order!r}")
    if not k > 0:
        raise ValueError(f"k must be > 0, got {k!r}")
    V = vocab_size
    train_ids, eval_ids = train_ids.long(), eval_ids.long()
    targets = eval_ids[1:]
    if order == 1:
        counts = torch.bincount(train_ids, minlength=V).double()
        logp = torch.log((counts + k) / (counts.sum() + k * V))
        return float(-logp[targets].mean())
    pairs = torch.bincount(train_ids[:-1] * V + train_ids[1:], minlength=V * V).double().view(V, V)
    context = pairs.sum(dim=1, keepdim=True)
    logp = torch.log((pairs[eval_ids[:-1], targets] + k) / (context[eval_ids[:-1], 0] + k * V))
    return float(-logp.mean())


def _best_k(train_ids, val_ids, vocab_size, order) -> float:
    # k is tuned on the validation split itself: this favours the baselines, so a model that beats
    # them beats their best version.
    grid = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0]
    return min(grid, key=lambda k: ngram_nll(train_ids, val_ids, vocab_size, order, k))


# ----------------------------------------------------------------------------------------------
# Resumable training: ``train``'s recipe, with a checkpoint every few steps
# ----------------------------------------------------------------------------------------------
# A two-hour build must survive an interruption (a closed laptop, a killed job): ``resumable_train``
# runs the same steps as ``llmlab.train.train`` (AdamW from ``make_optimizer``, ``lr_at``'s schedule,
# random windows from one seeded generator, the best validation weights kept) and every
# ``checkpoint_every`` steps writes the model, the optimizer, the batch generator's state, the history
# and the best weights to ``checkpoint`` (written to a temporary file, then renamed: a kill mid-write
# leaves the previous checkpoint intact). Called again with the same arguments it continues from the
# last checkpoint, so an interrupted run and an uninterrupted one see the same batches.


def resumable_train(model, train_ids, val_ids, *, steps: int, checkpoint: str | os.PathLike | None = None,
                    checkpoint_every: int = 200, batch_size: int = 16, seq_len: int = 128, lr: float = 1e-3,
                    warmup: int = 100, weight_decay: float = 0.1, grad_clip: float | None = 1.0, eval_every: int = 100,
                    eval_tokens: int | None = None, seed: int = 0, loss_mask=None, val_loss_mask=None,
                    min_lr_ratio: float = 0.1, patience: int | None = None, progress: bool = False, desc: str = "train",
                    extra_evals: dict | None = None, stop_after_steps: int | None = None) -> dict:
    """Train ``model`` in place like ``llmlab.train.train`` and return its history; resumable from ``checkpoint``.

    ``extra_evals`` (name -> 1-D ids) are also scored at every evaluation (``history["extra"][name]``), e.g. the
    unseen hand-written text, for the curves of the sweep. ``stop_after_steps`` ends this call early (the
    checkpoint is written first): the tests use it to simulate an interruption. ``patience`` is accepted for
    recipes written for ``train`` and ignored (a long build never stops early).
    """
    from llmlab.train import get_batch, lr_at, make_optimizer, masked_mean, token_losses

    del patience
    ckpt = Path(checkpoint) if checkpoint is not None else None
    # What the checkpoint must match to be resumed: the run's arguments, the data and the model's shapes.
    ids = torch.as_tensor(train_ids)
    fingerprint = {"steps": steps, "batch_size": batch_size, "seq_len": seq_len, "lr": lr, "warmup": warmup,
                   "weight_decay": weight_decay, "seed": seed, "eval_every": eval_every, "min_lr_ratio": min_lr_ratio,
                   "data": [list(ids.shape), int(ids.long().sum()), int((ids.long() * torch.arange(ids.numel()).view(ids.shape) % 1_000_003).sum())],
                   "model": {k: list(v.shape) for k, v in model.state_dict().items()}}
    optimizer = make_optimizer(model, lr, weight_decay)
    batches = torch.Generator().manual_seed(seed)
    history: dict = {"train_loss": [], "lr": [], "eval_step": [], "val_loss": [], "train_loss_avg": [],
                     "best_step": 0, "best_val_loss": math.inf, "steps_run": 0, "stopped_early": False,
                     "tokens_seen": 0, "seconds": 0.0, "cpu_seconds": 0.0, "resumed_at": [],
                     "extra": {k: [] for k in (extra_evals or {})}}
    best_state = None
    if ckpt is not None and ckpt.exists():
        state = torch.load(ckpt, weights_only=False)
        if state.get("fingerprint") != fingerprint:
            raise ValueError(f"{ckpt} was written by another run (other recipe, data or model); delete it"
                             " (or its folder) to start this one from scratch")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        batches.set_state(state["batches"])
        history, best_state = state["history"], state["best"]
        history["resumed_at"].append(history["steps_run"])
    torch.manual_seed(seed + history["steps_run"])  # dropout masks (the shipped recipes use none)

    def save() -> None:
        if ckpt is None:
            return
        ckpt.parent.mkdir(parents=True, exist_ok=True)
        tmp = ckpt.with_suffix(ckpt.suffix + ".tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "batches": batches.get_state(),
                    "history": history, "best": best_state, "fingerprint": fingerprint}, tmp)
        os.replace(tmp, ckpt)

    wall0, cpu0 = time.perf_counter() - history["seconds"], time.thread_time() - history["cpu_seconds"]
    model.train()
    first = history["steps_run"]
    for step in range(first, steps):
        rate = lr_at(step, lr=lr, warmup=warmup, steps=steps, min_lr_ratio=min_lr_ratio)
        for group in optimizer.param_groups:
            group["lr"] = rate
        inputs, targets, mask = get_batch(train_ids, batch_size, seq_len, batches, loss_mask)
        loss = masked_mean(token_losses(model, inputs, targets), mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        history["train_loss"].append(loss.item())
        history["lr"].append(rate)
        history["tokens_seen"] += int(inputs.numel())
        history["steps_run"] = step + 1
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            val = evaluate(model, val_ids, seq_len=seq_len, batch_size=batch_size, loss_mask=val_loss_mask,
                           max_tokens=eval_tokens)
            for name, ids in (extra_evals or {}).items():
                history["extra"][name].append(evaluate(model, ids, seq_len=seq_len, batch_size=batch_size))
            model.train()
            since = history["eval_step"][-1] if history["eval_step"] else 0
            history["eval_step"].append(step + 1)
            history["val_loss"].append(val)
            history["train_loss_avg"].append(sum(history["train_loss"][since:]) / (step + 1 - since))
            if val < history["best_val_loss"]:
                history["best_val_loss"], history["best_step"] = val, step + 1
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            history["seconds"] = time.perf_counter() - wall0
            history["cpu_seconds"] = time.thread_time() - cpu0
            _log(f"  {desc}: step {step + 1}/{steps}  train {history['train_loss_avg'][-1]:.3f}  val {val:.3f}"
                 f"  ({history['tokens_seen']:,} tokens, {history['cpu_seconds']:.0f} CPU s)", not progress)
        history["seconds"] = time.perf_counter() - wall0
        history["cpu_seconds"] = time.thread_time() - cpu0
        if (step + 1) % checkpoint_every == 0 or step + 1 == steps:
            save()
        if stop_after_steps is not None and step + 1 - first >= stop_after_steps and step + 1 < steps:
            save()
            history["interrupted"] = True
            return history
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    history.pop("interrupted", None)
    return history


# ----------------------------------------------------------------------------------------------
# The build
# ----------------------------------------------------------------------------------------------


def _sample(model, tok, prompt_ids, n_tokens, stop_ids, seed, **sampling) -> str:
    """Sampled continuation (fixed seed), decoded without the prompt and the stop token."""
    sampler = Sampler(generator=torch.Generator().manual_seed(seed), **sampling)
    n_tokens = min(n_tokens, model.config.max_seq_len - len(prompt_ids))
    out = generate(model, torch.tensor(prompt_ids), n_tokens, sampler=sampler, eos_token_id=stop_ids)
    new = [i for i in out[len(prompt_ids):].tolist() if i not in stop_ids]
    return tok.decode(new)


def _params_es(n: int) -> str:
    return f"{n / 1e6:.1f} M".replace(".", ",")


def build(out_dir: str | os.PathLike, *, smoke: bool = False, threads: int | None = None, progress: bool = True,
          quiet: bool = False, recipe: str | dict | None = None, checkpoints: str | os.PathLike | None = None,
          chat_only: bool = False) -> dict:
    """Run the whole build into ``out_dir`` and return the measured results (also written to the files).

    ``chat_only``: keep the tokenizer, es-base and es-mini already in ``out_dir`` (byte for byte) and train only
    es-chat's adapter again, then write the cards, the report and the held-out tables as a whole build does: the
    chat data can be changed and measured in ~20 minutes instead of two hours.

    ``recipe``: a key of ``RECIPES`` or a recipe dict (default: ``SMOKE`` with ``smoke``, else ``DEFAULT_RECIPE``).
    ``checkpoints``: where a recipe with ``checkpoint_every`` keeps its checkpoints (default ``CHECKPOINTS``);
    the same command run again after an interruption resumes from them.
    """
    if isinstance(recipe, str):
        recipe = RECIPES[recipe]
    recipe = recipe if recipe is not None else (SMOKE if smoke else RECIPES[DEFAULT_RECIPE])
    if checkpoints is None:  # a smoke build keeps its checkpoints in its own (temporary) folder
        checkpoints = Path(out_dir) / ".checkpoints" if recipe is SMOKE else CHECKPOINTS
    recipe = {**recipe, "checkpoints": str(checkpoints)}
    out = Path(out_dir)
    if chat_only:
        if not (out / "training_log.json").exists():
            raise FileNotFoundError(f"--chat-only needs the models of a whole build in {out} (no training_log.json there)")
        recipe["chat_only"] = True
    out.mkdir(parents=True, exist_ok=True)
    threads = recipe["threads"] if threads is None else threads
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)  # part of what makes the run repeatable: the order of float sums
    try:
        return _build(recipe, out, smoke, threads, progress, quiet)
    finally:
        torch.set_num_threads(previous_threads)


def _load_split_data(recipe: dict) -> tuple[dict, dict, dict]:
    records = {split: corpus.load_records(split) for split in corpus.SPLITS}
    chats = {split: corpus.load_chat(split) for split in ("train", "validation")}
    cut = recipe["data_slice"]
    if cut is not None:
        records = {split: r[:cut] for split, r in records.items()}
        chats = {split: c[: 5 * cut] for split, c in chats.items()}
    docs = {split: [r.text for r in rs] for split, rs in records.items()}
    return docs, records, chats


def _base_from_file(path: Path, config: ModelConfig) -> Transformer:
    """The model exactly as ``pretrained.load`` will see it: float16 weights from disk, as float32."""
    model = Transformer(config)
    model.load_state_dict({k: t.float() for k, t in _safetensors.load_file(path).items()})
    return model


def _train(recipe: dict, name: str, model, train_ids, val_ids, **kw) -> dict:
    """``llmlab.train.train`` for the shipped recipe; ``resumable_train`` with a checkpoint per model otherwise."""
    every = recipe.get("checkpoint_every")
    if not every:
        return train(model, train_ids, val_ids, **kw)
    return resumable_train(model, train_ids, val_ids, checkpoint=Path(recipe["checkpoints"]) / f"{name}.ckpt",
                           checkpoint_every=every, **kw)


def _template_rows(sft_ids: torch.Tensor, text_ids: torch.Tensor, tok: BPETokenizer) -> list[int]:
    """The special tokens the chat rows use and the pretraining text never does (the template's markers)."""
    specials = set(tok.special_tokens.values())
    return sorted((set(sft_ids.unique().tolist()) & specials) - set(torch.as_tensor(text_ids).unique().tolist()))


def _train_marker_rows(model: Transformer, rows: list[int], start_from: dict[int, int]):
    """Let the chat step train the rows ``rows`` of the embedding table and of the LM head besides the adapter.

    Pretraining never shows the chat markers, so their rows only learn to be unlikely: the LM head's
    ``<|end|>`` row ends so far below the others that a LoRA on the frozen es-base cannot make it win
    (es-chat then flattens its whole distribution where an answer should end, and never stops). The LM
    head is not tied to the embeddings in these models, so both tables are trained. ``start_from`` copies
    a row first (``<|end|>`` from ``<|eos|>``, the nearest meaning the model has learned). Every other row
    gets a zero gradient, and AdamW (the chat recipe has no weight decay) leaves it exactly as it was.
    Returns the function that freezes the tables again.
    """
    tables = [model.tok_emb.weight]
    if model.lm_head.weight is not model.tok_emb.weight:
        tables.append(model.lm_head.weight)
    keep = torch.zeros(tables[0].shape[0], 1)
    keep[rows] = 1.0
    hooks = []
    for weight in tables:
        with torch.no_grad():
            for row, source in start_from.items():
                if row in rows:
                    weight[row] = weight[source]
        weight.requires_grad_(True)
        hooks.append(weight.register_hook(lambda grad: grad * keep))

    def release() -> None:
        for weight, hook in zip(tables, hooks):
            hook.remove()
            weight.requires_grad_(False)

    return release


def _pretrain_all(recipe: dict, trained: dict, histories: dict, cpu: dict, pretrain, progress: bool, quiet: bool) -> None:
    """Pretrain every model of the recipe: es-base in this thread, es-mini in a second one beside it."""
    _log(f"[3/5] pretraining {', '.join(recipe['models'])} (two threads, one per model)", quiet)
    main_name, *others = list(recipe["models"])[::-1]  # es-base here, es-mini beside it
    workers = [threading.Thread(target=pretrain, args=(name, False), name=f"pretrain-{name}") for name in others]
    for worker in workers:
        worker.start()
    try:
        pretrain(main_name, progress)
    finally:
        for worker in workers:
            worker.join()
    missing = [name for name in recipe["models"] if name not in histories]
    if missing:
        raise RuntimeError(f"pretraining failed for {missing} (see the traceback above)")
    ordered = {name: histories.pop(name) for name in recipe["models"]}  # the recipe's order, whichever finished first
    histories.update(ordered)
    cpu.update({name: cpu.pop(name) for name in recipe["models"]})


def _pretrained_as_shipped(base_dir: Path, trained: dict, histories: dict, cpu: dict) -> None:
    """A chat-only build: the pretrained models are the shipped files, their histories the shipped training log's."""
    log = json.loads((base_dir / "training_log.json").read_text(encoding="utf-8"))
    for name, model in trained.items():
        trained[name] = _base_from_file(base_dir / f"{name}.safetensors", model.config)
        histories[name] = {"lr": [], **log["histories"][name]}
        cpu[name] = 0.0


def _build(recipe: dict, out: Path, smoke: bool, threads: int, progress: bool, quiet: bool) -> dict:
    t_start, cpu_start = time.perf_counter(), time.process_time()
    seed = recipe["seed"]
    before = _heldout_before(recipe, out, quiet) if recipe.get("heldout") else None
    docs, records, chats = _load_split_data(recipe)
    cpu = {}

    # 1. Tokenizer: train split only (a chat-only build keeps the shipped one).
    t0 = time.process_time()
    chat_only = recipe.get("chat_only", False)
    if chat_only:
        _log(f"[1/5] tokenizer, es-base and es-mini kept as they are in {out} (a chat-only build)", quiet)
        tok = BPETokenizer.load(out / "tokenizer.json")
    else:
        _log(f"[1/5] tokenizer: BPE, vocab {recipe['vocab_size']}, on {len(docs['train'])} train documents", quiet)
        tok = BPETokenizer.train(docs["train"], recipe["vocab_size"])
        tok.save(out / "tokenizer.json")
    streams = {split: encode_documents(d, tok) for split, d in docs.items()}
    V = len(tok)

    # 2. Baselines.
    _log("[2/5] unigram and bigram baselines", quiet)
    baselines = {}
    for name, order in (("unigram", 1), ("bigram", 2)):
        k = _best_k(streams["train"], streams["validation"], V, order)
        baselines[name] = {
            "k": k,
            **{split: ngram_nll(streams["train"], streams[split], V, order, k) for split in ("validation", "unseen")},
        }
    cpu["tokenizer and baselines"] = time.process_time() - t0

    # 3. Pretraining. Both models are built first, one after the other (their initial weights come
    # from the global seed); then es-mini trains in a second thread while es-base trains in this one.
    # Each uses one intra-op thread and its own batch generator, and neither draws from the global
    # random generator while training (no dropout), so the runs do not depend on how the two threads
    # interleave: the same files, byte for byte, on twice the cores.
    trained: dict[str, Transformer] = {}
    histories: dict[str, dict] = {}
    for name, spec in recipe["models"].items():
        torch.manual_seed(seed)
        trained[name] = Transformer(ModelConfig.llama_style(vocab_size=V, **spec["config"]))

    def pretrain(name: str, show: bool) -> None:
        t0 = time.thread_time()
        histories[name] = _train(
            recipe, name, trained[name], streams["train"], streams["validation"], seed=seed, eval_tokens=recipe["eval_tokens"],
            progress=show, desc=name, **recipe["models"][name]["train"],
        )
        cpu[name] = time.thread_time() - t0

    if chat_only:
        _pretrained_as_shipped(out, trained, histories, cpu)
    else:
        _pretrain_all(recipe, trained, histories, cpu, pretrain, progress, quiet)
        for name, model in trained.items():
            pretrained.save_model(model, out / f"{name}.safetensors")

    # 4. es-chat: a LoRA adapter on es-base as shipped (answer tokens only, plus some replayed text).
    chat = recipe["chat"]
    t0 = time.process_time()
    _log(f"[4/5] chat fine-tuning: LoRA {chat['lora']} on {chat['parent']} ({chat['style']} template, replay {chat['replay']})", quiet)
    from llmlab import lora

    sft_len = chat["train"]["seq_len"]
    sft_train, sft_train_mask = build_sft_examples(chats["train"], tok, seq_len=sft_len, style=chat["style"])
    sft_val, sft_val_mask = build_sft_examples(chats["validation"], tok, seq_len=sft_len, style=chat["style"])
    chat_tokens = {"train": int(sft_train_mask.sum()), "validation": int(sft_val_mask.sum()), "train_rows": len(sft_train)}
    replay = stream_rows(streams["train"], round(chat["replay"] * len(sft_train)), sft_len, seed=seed)
    sft_train = torch.cat([sft_train, replay])
    sft_train_mask = torch.cat([sft_train_mask, torch.ones_like(replay)])  # plain text: every token counts
    parent = trained[chat["parent"]]
    chat_model = _base_from_file(out / f"{chat['parent']}.safetensors", parent.config)
    lora.add_lora(chat_model, seed=seed, **chat["lora"])
    adapter_params = lora.trainable_summary(chat_model)
    rows = _template_rows(sft_train, streams["train"], tok)
    # A chat-only build keeps es-base byte for byte (and with it the base fingerprint of lab 06's shipped adapters):
    # its marker rows were trained by the full build that made it, so only the adapter trains here.
    release = (_train_marker_rows(chat_model, rows, start_from={tok.special_tokens["<|end|>"]: tok.eos_id})
               if not chat_only else (lambda: None))
    torch.manual_seed(seed)
    histories["es-chat"] = _train(
        recipe, "es-chat", chat_model, sft_train, sft_val, loss_mask=sft_train_mask, val_loss_mask=sft_val_mask, seed=seed,
        progress=progress, desc="es-chat", **chat["train"],
    )
    release()
    if not chat_only:
        with torch.no_grad():  # the trained rows belong to es-base as shipped (it never meets those tokens in text),
            for table in ("tok_emb", "lm_head"):  # rounded as the file stores them, so the adapter's base
                trained_rows = getattr(chat_model, table).weight[rows].half().float()  # fingerprint is the shipped es-base's
                getattr(chat_model, table).weight[rows] = trained_rows
                getattr(parent, table).weight[rows] = trained_rows
        pretrained.save_model(parent, out / f"{chat['parent']}.safetensors")
    lora.save_adapter(chat_model, out / ADAPTER, base_name=chat["parent"], dtype=torch.float16)
    trained["es-chat"] = chat_model
    cpu["es-chat"] = time.process_time() - t0

    # 5. Cards, manifest, checksums; then reload everything from disk and measure.
    _log("[5/5] writing files and measuring the shipped models", quiet)
    t0 = time.process_time()
    order = ["es-base", "es-mini", "es-chat"]
    for name in order:
        is_chat = name == "es-chat"
        model = trained[chat["parent"]] if is_chat else trained[name]
        card = pretrained.model_card(
            name, model,
            description=DESCRIPTIONS[name].format(params=_params_es(count_parameters(model))),
            chat_style=chat["style"] if is_chat else None,
            adapter=ADAPTER if is_chat else None,
            parent=chat["parent"] if is_chat else None,
            tokenizer="tokenizer.json",
            training={
                "data": ("chat train split (loss on the answers only) + replayed rows of corpus train text"
                         if is_chat else "corpus train split"),
                "method": f"LoRA {chat['lora']}" if is_chat else "pretraining",
                "adapter_parameters": adapter_params["trainable"] if is_chat else None,
                "steps_run": histories[name]["steps_run"],
                "best_step": histories[name]["best_step"],
                "seed": seed,
                "recipe": (chat if is_chat else recipe["models"][name])["train"],
                **({"rows_trained_with_es_chat": [tok.decode([r]) for r in rows]} if name == chat["parent"] else {}),
            },
        )
        (out / f"{name}.json").write_text(json.dumps(card, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    manifest = {"format": pretrained.FORMAT_NAME, "version": pretrained.FORMAT_VERSION,
                "tokenizer": "tokenizer.json", "models": order}
    (out / pretrained.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    adapter_files = [f"{ADAPTER}/{lora.ADAPTER_CONFIG}", f"{ADAPTER}/{lora.ADAPTER_WEIGHTS}"]
    shipped = ([pretrained.MANIFEST, "tokenizer.json"] + [f"{n}.json" for n in order]
               + [f"{n}.safetensors" for n in order if n != "es-chat"] + adapter_files)
    for stale in ("es-chat.safetensors",):  # es-chat used to ship full weights
        if (out / stale).exists():
            (out / stale).unlink()
    pretrained.write_checksums(out, shipped)

    sft_val_data = (sft_val, sft_val_mask)
    results = _measure(out, order, trained, streams, records, sft_val_data, chats, baselines, recipe, quiet)
    cpu["measuring"] = time.process_time() - t0
    results.update(
        smoke=smoke,
        threads=threads,
        torch=torch.__version__,
        python=platform.python_version(),
        seconds_total=time.perf_counter() - t_start,
        cpu_seconds_total=time.process_time() - cpu_start,
        cpu_seconds=cpu,
        seconds_train={name: h["seconds"] for name, h in histories.items()},
        histories=histories,
        tokens={split: int(s.numel()) for split, s in streams.items()},
        bytes={split: sum(len(d.encode("utf-8")) for d in docs[split]) for split in docs},
        chat_tokens=chat_tokens,
        adapter=adapter_params,
        recipe={**{k: v for k, v in recipe.items() if k != "checkpoints"}, "chat_only": chat_only},  # no machine paths
        files={f: (out / f).stat().st_size for f in shipped},
    )
    log = {k: results[k] for k in ("smoke", "threads", "torch", "seconds_total", "cpu_seconds_total", "cpu_seconds",
                                   "seconds_train", "tokens", "recipe")}
    log["histories"] = {
        name: {**{k: v for k, v in h.items() if k not in ("train_loss", "lr")},
               "train_loss": [round(x, 4) for x in h["train_loss"]]}
        for name, h in histories.items()
    }
    # Wall and CPU times differ from run to run: they live in training_log.json and REPORT.md, which
    # are not part of checksums.sha256 (the byte-for-byte promise covers the model files).
    (out / "training_log.json").write_text(json.dumps(log, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    from .models_report import report

    (out / "REPORT.md").write_text(report(results, out), encoding="utf-8")
    if recipe.get("heldout"):
        after = quality.heldout_measure(out, samples=recipe["quality"]["samples"])
        (out / "HELDOUT.md").write_text(heldout_report(before, after, out), encoding="utf-8")
        results["heldout"] = {"before": before, "after": after}
    _log(f"done in {results['seconds_total']:.0f} s ({results['cpu_seconds_total']:.0f} CPU seconds): {out}", quiet)
    return results


def _heldout_before(recipe: dict, out: Path, quiet: bool) -> dict | None:
    """The held-out measures of the models in ``out`` before this build overwrites them (``None`` if there are none).

    Kept in the checkpoint folder, so that a resumed build still compares with the models that were there first.
    """
    cache = Path(recipe["checkpoints"]) / "heldout_before.json"
    if cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    if not (out / pretrained.MANIFEST).exists():
        return None
    _log("[0/5] held-out measures of the models in the folder, before rebuilding them", quiet)
    before = quality.heldout_measure(out)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(before, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return before


def heldout_report(before: dict | None, after: dict, out: Path, *, answers: int = 20, continuations: int = 5) -> str:
    """HELDOUT.md: the held-out tables before and after (same function, both folders), 20 held-out chat answers and
    5 continuations of es-base, each printed as the model wrote it."""
    lines = ["# The shipped models on the held-out set (issue 24)", "",
             "Measured by `makedata.quality.heldout_measure` on the questions, sums and text of"
             " `course/tools/makedata/heldout/` (written apart from the training data, never trained on).", ""]
    if before is not None:
        lines += ["## Before this build", "", quality.heldout_table(before, "before"), ""]
    lines += ["## After this build", "", quality.heldout_table(after, "after"), "",
              f"## es-chat: {answers} held-out questions and the sums, greedy answers as generated", ""]
    for a in quality.spread(after["es-chat"]["answers"], answers) + after["es-chat"]["sum_answers"]:
        lines.append(f"- {'on topic' if a['ok'] else 'off topic / wrong'}: {a['q']} → {quality.one_line_answer(a['answer'])}")
    model, tok = pretrained.load("es-base", models_dir=out)
    lines += ["", f"## es-base: {continuations} continuations (temperature 0.8, top-p 0.95, seeds 0 to {continuations - 1})", ""]
    for c in quality.continuations(model, tok, n=continuations):
        lines.append(f"- {c['prompt']}|{c['text'].replace(chr(10), '⏎')}")
    return "\n".join(lines) + "\n"


def _bytes_of(texts: list[str]) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


@torch.no_grad()
def _draft_agreement(draft: Transformer, target: Transformer, ids: torch.Tensor, max_tokens: int = 20_000) -> float:
    """Share of positions where the draft's most likely next token is the target's (greedy speculative acceptance)."""
    ids = ids[:max_tokens]
    L = target.config.max_seq_len
    same = total = 0
    for s in range(0, ids.numel() - 1, L):
        window = ids[s:s + L][None]
        a = draft(window).argmax(-1)
        b = target(window).argmax(-1)
        same += int((a == b).sum())
        total += a.numel()
    return same / total


def _measure(out, order, trained, streams, records, sft_val, chats, baselines, recipe, quiet) -> dict:
    """Every number of the report, measured on the models reloaded from ``out`` (float16 on disk)."""
    models = {name: pretrained.load(name, models_dir=out)[0] for name in order}
    tok = pretrained.load_tokenizer(models_dir=out)
    ids, mask = sft_val
    # The parts of the validation text, as every lab names them (llmlab.metrics.validation_documents).
    val_by_source = {part: [r.text for r in records["validation"] if metrics.validation_part_of(r.source) == part]
                     for part in ("generated", "hand-written")}
    source_streams = {k: encode_documents(v, tok) for k, v in val_by_source.items() if v}
    results: dict = {"baselines": baselines, "models": {}}
    n_train = recipe["train_eval_tokens"]
    for name in order:
        model = models[name]
        row = {
            "parameters": count_parameters(model),
            "config": model.config.to_dict(),
            "train": evaluate(model, streams["train"], max_tokens=n_train),
            **{split: evaluate(model, streams[split]) for split in ("validation", "unseen")},
            "chat_validation": evaluate(model, ids, loss_mask=mask),
            # The cost of storing float16: the loss on the first validation tokens, float16 vs float32 weights.
            "validation_head": evaluate(model, streams["validation"], max_tokens=n_train),
            "validation_head_fp32": evaluate(trained[name], streams["validation"], max_tokens=n_train),
        }
        if name == "es-base":  # how hard each kind of validation text is
            row.update({f"validation {k}": evaluate(model, s) for k, s in source_streams.items()})
        results["models"][name] = row
        _log(f"  {name}: val {row['validation']:.3f} (ppl {_ppl(row['validation']):.1f}), unseen ppl {_ppl(row['unseen']):.1f}", quiet)
    results["source_bytes"] = {k: _bytes_of(v) for k, v in val_by_source.items()}
    results["source_tokens"] = {k: int(s.numel()) for k, s in source_streams.items()}

    # The text itself: 100 sampled continuations of 60 tokens per pretrained model.
    q = recipe["quality"]
    text_quality = {}
    for name in ("es-base", "es-mini"):
        samples = quality.continuations(models[name], tok, n=q["samples"], new_tokens=q["new_tokens"])
        texts = [s["text"] for s in samples]
        text_quality[name] = {
            "valid_words": quality.valid_word_rate(texts),
            "repetition": sum(quality.repetition_rate(t) for t in texts) / len(texts),
            "examples": samples[:3],
        }
    results["text_quality"] = text_quality
    results["draft_agreement"] = _draft_agreement(models["es-mini"], models["es-base"], streams["validation"])

    # Chat: held-out questions, answered greedily.
    held_out = quality.spread(chats["validation"], q["chat_questions"])
    chat_quality = {}
    for name in ("es-chat", "es-base"):
        answers = quality.chat_answers(models[name], tok, held_out)
        chat_quality[name] = {
            "on_topic": sum(quality.on_topic(a["question"], a["answer"], a["reference"]) for a in answers) / len(answers),
            "reference_overlap": sum(quality.reference_overlap(a["answer"], a["reference"]) for a in answers) / len(answers),
            "questions": len(answers),
            "answers": answers[:8] if name == "es-chat" else [],
        }
    results["chat_quality"] = chat_quality

    n = recipe["sample_tokens"]
    eos = [tok.eos_id]
    samples = []
    for i, prompt in enumerate(PROMPTS):
        prompt_ids = [tok.bos_id] + tok.encode(prompt)
        entry = {"prompt": prompt}
        for name in ("es-base", "es-mini"):
            entry[name] = _sample(models[name], tok, prompt_ids, n, eos, seed=i, do_sample=True, temperature=0.8, top_p=0.95)
        entry["es-base greedy"] = _sample(models["es-base"], tok, prompt_ids, n, eos, seed=i)
        samples.append(entry)
    style = pretrained.info("es-chat", models_dir=out)["chat_style"]
    stops = [tok.special_tokens[t] for t in STOP_TOKENS[style]]
    answers = []
    for i, conversation in enumerate(chats["validation"][:CHAT_QUESTIONS]):
        question = quality.question_of(conversation)
        prompt_ids = encode_chat(question, tok, style, add_generation_prompt=True)
        answers.append({
            "question": question[-1]["content"],
            "reference": conversation[len(question)]["content"],
            "es-chat": _sample(models["es-chat"], tok, prompt_ids, n, stops, seed=i),
            "es-chat sampled": _sample(models["es-chat"], tok, prompt_ids, n, stops, seed=i, do_sample=True, temperature=0.7),
            "es-base": _sample(models["es-base"], tok, prompt_ids, n, stops, seed=i),
        })
    results["samples"], results["chat_samples"] = samples, answers
    return results


# ----------------------------------------------------------------------------------------------
# Choosing es-base's size: a sweep of candidates on the same data, same tokens, same seed
# ----------------------------------------------------------------------------------------------
# Each candidate trains for the same number of tokens with the same recipe (a shortened copy of the
# real one), and the validation loss is recorded along the way together with the CPU time spent, so
# the candidates can be compared at equal tokens and at equal compute. ``--sweep`` writes SWEEP.md.
SWEEP = {
    "vocab_size": 4096,
    "threads": 1,
    "seed": 1234,
    "eval_tokens": 60_000,
    "train": dict(steps=80, batch_size=16, seq_len=256, lr=2e-3, warmup=10, weight_decay=0.1, grad_clip=1.0,
                  eval_every=20, patience=None),
    "candidates": {
        "d192-L4": dict(d_model=192, n_layers=4, n_heads=6, n_kv_heads=2, max_seq_len=256, dropout=0.0),
        "d256-L4": dict(d_model=256, n_layers=4, n_heads=8, n_kv_heads=2, max_seq_len=256, dropout=0.0),
        "d256-L6": dict(d_model=256, n_layers=6, n_heads=8, n_kv_heads=2, max_seq_len=256, dropout=0.0),
        "d320-L6": dict(d_model=320, n_layers=6, n_heads=5, n_kv_heads=1, max_seq_len=256, dropout=0.0),
    },
}


def sweep(out_dir: str | os.PathLike, *, only: str | None = None, threads: int | None = None, progress: bool = True,
          quiet: bool = False) -> dict:
    """Train the ``SWEEP`` candidates (or ``only`` one) and write ``sweep_<name>.json`` and ``SWEEP.md`` in ``out_dir``.

    Candidates are independent runs, so they may run as separate processes (``--sweep --only NAME``);
    ``SWEEP.md`` is rewritten from every ``sweep_*.json`` present after each run.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    threads = SWEEP["threads"] if threads is None else threads
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        docs = {split: corpus.load_documents(split) for split in ("train", "validation")}
        tok = BPETokenizer.train(docs["train"], SWEEP["vocab_size"])
        streams = {split: encode_documents(d, tok) for split, d in docs.items()}
        results = {"threads": threads, "torch": torch.__version__, "tokens": {k: int(v.numel()) for k, v in streams.items()},
                   "recipe": SWEEP["train"], "candidates": {}}
        if only is not None and only not in SWEEP["candidates"]:
            raise ValueError(f"unknown candidate {only!r}; known: {list(SWEEP['candidates'])}")
        for name, config in SWEEP["candidates"].items():
            if only is not None and name != only:
                continue
            _log(f"[sweep] {name}", quiet)
            torch.manual_seed(SWEEP["seed"])
            model = Transformer(ModelConfig.llama_style(vocab_size=len(tok), **config))
            cpu0 = time.process_time()
            history = train(model, streams["train"], streams["validation"], seed=SWEEP["seed"], eval_tokens=SWEEP["eval_tokens"],
                            progress=progress, desc=name, **SWEEP["train"])
            cpu = time.process_time() - cpu0
            results["candidates"][name] = {
                "parameters": count_parameters(model), "config": config, "threads": threads, "cpu_seconds": cpu, "wall_seconds": history["seconds"],
                "eval_step": history["eval_step"], "val_loss": history["val_loss"], "train_loss_avg": history["train_loss_avg"],
            }
            _log(f"  {name}: {count_parameters(model):,} parameters, val {history['val_loss'][-1]:.3f}, {cpu / 60:.1f} CPU-min", quiet)
            one = {**results, "candidates": {name: results["candidates"][name]}}
            (out / f"sweep_{name}.json").write_text(json.dumps(one, indent=1) + "\n", encoding="utf-8")
        merged = write_sweep_report(out)
        return merged
    finally:
        torch.set_num_threads(previous)


def write_sweep_report(out: Path) -> dict:
    """Merge every ``sweep_*.json`` in ``out`` (in the order of ``SWEEP``) and write ``SWEEP.md`` from them."""
    merged = None
    for path in sorted(Path(out).glob("sweep_*.json")):
        part = json.loads(path.read_text(encoding="utf-8"))
        for c in part["candidates"].values():
            c.setdefault("threads", part["threads"])  # files written before candidates recorded their own
        merged = part if merged is None else {**merged, "candidates": {**merged["candidates"], **part["candidates"]}}
    if merged is None:
        raise FileNotFoundError(f"no sweep_*.json in {out}")
    order = [k for k in SWEEP["candidates"] if k in merged["candidates"]]
    merged["candidates"] = {k: merged["candidates"][k] for k in order}
    (Path(out) / "SWEEP.md").write_text(_sweep_report(merged), encoding="utf-8")
    return merged


def _sweep_report(r: dict) -> str:
    t = r["recipe"]
    tokens_per_step = t["batch_size"] * t["seq_len"]
    lines = [
        "# Sizing es-base: the sweep",
        "",
        f"`python course/tools/makedata models --sweep` with torch {r['torch']}. Each candidate trains"
        f" {t['steps']} steps of {tokens_per_step:,} tokens ({t['steps'] * tokens_per_step:,} tokens, {t['steps'] * tokens_per_step / r['tokens']['train']:.2f}"
        f" epochs of the {r['tokens']['train']:,} train tokens) with the same seed, learning rate {t['lr']} and schedule;"
        " the validation loss is measured on the first 60,000 validation tokens.",
        "",
        "| candidate | parameters | threads | CPU seconds per step | " + " | ".join(f"val @ {s}" for s in next(iter(r["candidates"].values()))["eval_step"]) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(next(iter(r["candidates"].values()))["eval_step"]),
    ]
    for name, c in r["candidates"].items():
        lines.append(f"| {name} | {c['parameters']:,} | {c.get('threads', r['threads'])} | {c['cpu_seconds'] / t['steps']:.2f} | " + " | ".join(f"{v:.3f}" for v in c["val_loss"]) + " |")
    lines += ["", "CPU seconds per step depend on the thread count and on how loaded the machine was during each run, so"
              " the comparison at equal tokens (the table) is the firmer one. Validation loss at equal compute (each"
              " curve interpolated at the CPU time the cheapest candidate spent in all):", ""]
    budget = min(c["cpu_seconds"] for c in r["candidates"].values())
    for name, c in r["candidates"].items():
        per_step = c["cpu_seconds"] / t["steps"]
        xs = [s * per_step for s in c["eval_step"]]
        ys = c["val_loss"]
        if budget < xs[0]:
            lines.append(f"- {name}: not measured at {budget:.0f} CPU seconds (its first evaluation, step {c['eval_step'][0]},"
                         f" came after {xs[0]:.0f} CPU seconds, with validation loss {ys[0]:.3f})")
            continue
        value = ys[-1]
        for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
            if x0 <= budget <= x1:
                value = y0 + (y1 - y0) * (budget - x0) / (x1 - x0)
                break
        lines.append(f"- {name}: {value:.3f} at {budget:.0f} CPU seconds")
    lines.append("")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python course/tools/makedata models", description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a few steps on a slice of the data (seconds)")
    parser.add_argument("--out", help="output folder (default: llmlab/data/models, or a temporary folder with --smoke)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: 1; part of what makes a run repeatable)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--sweep", action="store_true", help="train the size candidates for es-base and write SWEEP.md (slow)")
    parser.add_argument("--only", help="with --sweep: train only this candidate")
    parser.add_argument("--recipe", choices=sorted(RECIPES), help=f"which recipe (default: {DEFAULT_RECIPE}; smoke with --smoke)")
    parser.add_argument("--checkpoints", help=f"checkpoint folder of a resumable recipe (default: {CHECKPOINTS})")
    parser.add_argument("--chat-only", action="store_true",
                        help="keep the tokenizer, es-base and es-mini in --out and retrain only es-chat's adapter")
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be >= 1")
    if args.sweep:
        out = Path(args.out) if args.out else DATA / "models"
        sweep(out, only=args.only, threads=args.threads, progress=not args.no_progress)
        print(out / "SWEEP.md")
        return 0
    if args.out is not None:
        out = Path(args.out)
    elif args.smoke:
        out = Path(tempfile.mkdtemp(prefix="llmlab-models-smoke-"))
    else:
        out = DATA / "models"
    build(out, smoke=args.smoke, threads=args.threads, progress=not args.no_progress, recipe=args.recipe,
          checkpoints=args.checkpoints, chat_only=args.chat_only)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
