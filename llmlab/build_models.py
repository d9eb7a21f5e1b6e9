"""Build the tiny Spanish models that ship in ``llmlab/data/models/`` (the ``make model`` target).

    python -m llmlab.build_models                 # the real build (about 15 min on 2 free CPU cores)
    python -m llmlab.build_models --smoke         # a few steps on a slice, into a temporary folder (seconds)
    python -m llmlab.build_models --out DIR       # write somewhere else than the package

What it does, in order:

1. trains the BPE tokenizer on the **train** split of the corpus (validation and unseen text
   are never seen by the tokenizer nor by the models);
2. measures the add-k unigram and bigram baselines with that tokenizer;
3. pretrains ``es-mini`` and ``es-base`` on the train split, keeping the weights with the best
   validation loss (early stopping);
4. fine-tunes ``es-base`` on the chat train split (answers only, ``"chatml"`` template): ``es-chat``;
5. writes the weights (float16 safetensors), configs, tokenizer, ``checksums.sha256``,
   ``training_log.json`` and ``REPORT.md``, whose numbers are measured here on the files as shipped
   (reloaded from disk, float16 weights loaded as float32).

**Reproducibility.** Every random choice comes from fixed seeds and the tokenizer training is
deterministic, so the same command with the same torch version and the same number of threads
(``--threads``, default 2) repeats the same run and writes the same files. Across torch versions,
CPUs or thread counts the floating-point sums happen in another order: the weights differ in the
last bits, the runs drift apart slowly, and the losses in the report agree to about two decimals,
not bit for bit. What is guaranteed everywhere: the tokenizer (bit-exact), the data split, the
configs and the recipe.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

from . import corpus, pretrained
from .chat import STOP_TOKENS, encode_chat
from .model import ModelConfig, Transformer, count_parameters, generate
from .sampling import Sampler
from .tokenizer import BPETokenizer
from .train import build_sft_examples, encode_documents, evaluate, stream_rows, train

__all__ = ["FULL", "SMOKE", "build", "ngram_nll", "main"]

# ----------------------------------------------------------------------------------------------
# The recipe
# ----------------------------------------------------------------------------------------------
# The corpus has ~120k training tokens (vocabulary 2048). That is very little: a 3.8M-parameter model
# memorises it within a few epochs (a trial with dropout 0.1 reached train loss 2.9 vs validation 4.5).
# So es-base gets dropout 0.25 and ~17 epochs (1000 steps x 8 x 256 tokens), and every run keeps the
# weights with the best validation loss. A small vocabulary also helps: every id is seen often enough
# to learn its embedding. es-mini is too small to memorise much and gets less dropout.

FULL = {
    "vocab_size": 2048,
    "threads": 2,
    "seed": 1234,
    "data_slice": None,  # use all documents
    "eval_tokens": None,  # validate on the whole validation split
    "models": {
        "es-mini": {
            "config": dict(d_model=128, n_layers=2, n_heads=4, n_kv_heads=2, max_seq_len=256, dropout=0.1),
            "train": dict(steps=800, batch_size=8, seq_len=256, lr=3e-3, warmup=50, weight_decay=0.1,
                          grad_clip=1.0, eval_every=50, patience=4),
        },
        "es-base": {
            "config": dict(d_model=256, n_layers=4, n_heads=8, n_kv_heads=2, max_seq_len=256, dropout=0.25),
            "train": dict(steps=1000, batch_size=8, seq_len=256, lr=2e-3, warmup=50, weight_decay=0.1,
                          grad_clip=1.0, eval_every=50, patience=4),
        },
    },
    "chat": {
        "parent": "es-base",
        "style": "chatml",
        # One row of plain training text per row of chat ("replay"). In a trial it left the chat
        # validation loss unchanged (3.83) and kept the plain-text perplexity at ~100 instead of ~146;
        # a higher learning rate (1e-3) without replay was worse on both.
        "replay": 1.0,
        "train": dict(steps=300, batch_size=8, seq_len=256, lr=5e-4, warmup=20, weight_decay=0.1,
                      grad_clip=1.0, eval_every=20, patience=3),
    },
    "sample_tokens": 48,
}

# The same pipeline on a few documents with a model of a few thousand parameters: seconds.
SMOKE = {
    "vocab_size": 300,
    "threads": 1,
    "seed": 1234,
    "data_slice": 6,  # the first 6 documents of each split, 30 conversations
    "eval_tokens": 2000,
    "models": {
        "es-mini": {
            "config": dict(d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, max_seq_len=256, dropout=0.0),
            "train": dict(steps=4, batch_size=2, seq_len=32, lr=3e-3, warmup=1, weight_decay=0.1,
                          grad_clip=1.0, eval_every=2, patience=None),
        },
        "es-base": {
            "config": dict(d_model=32, n_layers=1, n_heads=2, n_kv_heads=1, max_seq_len=256, dropout=0.0),
            "train": dict(steps=4, batch_size=2, seq_len=32, lr=3e-3, warmup=1, weight_decay=0.1,
                          grad_clip=1.0, eval_every=2, patience=None),
        },
    },
    "chat": {
        "parent": "es-base",
        "style": "chatml",
        "replay": 1.0,
        "train": dict(steps=3, batch_size=2, seq_len=255, lr=1e-3, warmup=1, weight_decay=0.1,
                      grad_clip=1.0, eval_every=3, patience=None),
    },
    "sample_tokens": 8,
}

DESCRIPTIONS = {
    "es-base": "Modelo base en español ({params} parámetros, estilo Llama): continúa textos. Entrenado con el corpus del curso.",
    "es-mini": "Modelo diminuto ({params} parámetros) con el mismo tokenizador que es-base: para destilación y decodificación especulativa.",
    "es-chat": "es-base ajustado con instrucciones (SFT) con las preguntas y respuestas del curso; plantilla de chat «chatml».",
}

PROMPTS = ["Había una vez", "La fotosíntesis es", "Querida abuela:", "Para preparar una tortilla"]
CHAT_QUESTIONS = 5  # the first questions of the chat validation split (never trained on)


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
# The build
# ----------------------------------------------------------------------------------------------


def _log(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def _sample(model, tok, prompt_ids, n_tokens, stop_ids, seed, **sampling) -> str:
    """Sampled continuation (fixed seed), decoded without the prompt and the stop token."""
    sampler = Sampler(generator=torch.Generator().manual_seed(seed), **sampling)
    n_tokens = min(n_tokens, model.config.max_seq_len - len(prompt_ids))
    out = generate(model, torch.tensor(prompt_ids), n_tokens, sampler=sampler, eos_token_id=stop_ids)
    new = [i for i in out[len(prompt_ids):].tolist() if i not in stop_ids]
    return tok.decode(new)


def _params_es(n: int) -> str:
    return f"{n / 1e6:.1f} M".replace(".", ",")


def _ppl(nll: float) -> float:
    return math.exp(nll)


def build(out_dir: str | os.PathLike, *, smoke: bool = False, threads: int | None = None, progress: bool = True,
          quiet: bool = False) -> dict:
    """Run the whole build into ``out_dir`` and return the measured results (also written to the files)."""
    recipe = SMOKE if smoke else FULL
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    threads = recipe["threads"] if threads is None else threads
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _build(recipe, out, smoke, threads, progress, quiet)
    finally:
        torch.set_num_threads(previous_threads)


def _build(recipe: dict, out: Path, smoke: bool, threads: int, progress: bool, quiet: bool) -> dict:
    t_start, cpu_start = time.perf_counter(), time.process_time()
    seed = recipe["seed"]
    cut = recipe["data_slice"]
    docs = {split: corpus.load_documents(split) for split in corpus.SPLITS}
    chats = {split: corpus.load_chat(split) for split in ("train", "validation")}
    if cut is not None:
        docs = {split: d[:cut] for split, d in docs.items()}
        chats = {split: c[: 5 * cut] for split, c in chats.items()}

    # 1. Tokenizer: train split only.
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

    # 3. Pretraining.
    trained: dict[str, Transformer] = {}
    histories: dict[str, dict] = {}
    for i, (name, spec) in enumerate(recipe["models"].items()):
        _log(f"[3/5] pretraining {name} ({i + 1}/{len(recipe['models'])})", quiet)
        torch.manual_seed(seed)
        model = Transformer(ModelConfig.llama_style(vocab_size=V, **spec["config"]))
        histories[name] = train(
            model, streams["train"], streams["validation"], seed=seed, eval_tokens=recipe["eval_tokens"],
            progress=progress, desc=name, **spec["train"],
        )
        trained[name] = model

    # 4. Chat fine-tuning of the base model (answer tokens only).
    chat = recipe["chat"]
    _log(f"[4/5] chat fine-tuning of {chat['parent']} ({chat['style']} template, replay {chat['replay']})", quiet)
    sft_len = chat["train"]["seq_len"]
    sft_train, sft_train_mask = build_sft_examples(chats["train"], tok, seq_len=sft_len, style=chat["style"])
    sft_val, sft_val_mask = build_sft_examples(chats["validation"], tok, seq_len=sft_len, style=chat["style"])
    chat_tokens = {"train": int(sft_train_mask.sum()), "validation": int(sft_val_mask.sum())}
    replay = stream_rows(streams["train"], round(chat["replay"] * len(sft_train)), sft_len, seed=seed)
    sft_train = torch.cat([sft_train, replay])
    sft_train_mask = torch.cat([sft_train_mask, torch.ones_like(replay)])  # plain text: every token counts
    torch.manual_seed(seed)
    chat_model = Transformer(trained[chat["parent"]].config)
    chat_model.load_state_dict(trained[chat["parent"]].state_dict())
    histories["es-chat"] = train(
        chat_model, sft_train, sft_val, loss_mask=sft_train_mask, val_loss_mask=sft_val_mask, seed=seed,
        progress=progress, desc="es-chat", **chat["train"],
    )
    trained["es-chat"] = chat_model

    # 5. Write, reload from disk, measure.
    _log("[5/5] writing files and measuring the shipped models", quiet)
    order = ["es-base", "es-mini", "es-chat"]
    for name in order:
        model = trained[name]
        pretrained.save_model(model, out / f"{name}.safetensors")
        card = pretrained.model_card(
            name, model,
            description=DESCRIPTIONS[name].format(params=_params_es(count_parameters(model))),
            chat_style=chat["style"] if name == "es-chat" else None,
            parent=chat["parent"] if name == "es-chat" else None,
            tokenizer="tokenizer.json",
            training={
                "data": ("chat train split (loss on the answers only) + as many rows of corpus train text"
                         if name == "es-chat" else "corpus train split"),
                "steps_run": histories[name]["steps_run"],
                "best_step": histories[name]["best_step"],
                "seed": seed,
                "recipe": (chat if name == "es-chat" else recipe["models"][name])["train"],
            },
        )
        (out / f"{name}.json").write_text(json.dumps(card, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    manifest = {"format": pretrained.FORMAT_NAME, "version": pretrained.FORMAT_VERSION,
                "tokenizer": "tokenizer.json", "models": order}
    (out / pretrained.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    shipped = [pretrained.MANIFEST, "tokenizer.json"] + [f"{n}{ext}" for n in order for ext in (".json", ".safetensors")]
    pretrained.write_checksums(out, shipped)

    results = _measure(out, order, trained, streams, (sft_val, sft_val_mask), chats, baselines, recipe, quiet)
    results.update(
        smoke=smoke,
        threads=threads,
        torch=torch.__version__,
        python=platform.python_version(),
        seconds_total=time.perf_counter() - t_start,
        cpu_seconds_total=time.process_time() - cpu_start,
        seconds_train={name: h["seconds"] for name, h in histories.items()},
        histories=histories,
        tokens={split: int(s.numel()) for split, s in streams.items()},
        chat_tokens=chat_tokens,
        recipe={k: v for k, v in recipe.items()},
        files={f: (out / f).stat().st_size for f in shipped},
    )
    log = {k: results[k] for k in ("smoke", "threads", "torch", "seconds_total", "cpu_seconds_total", "seconds_train",
                                   "tokens", "recipe")}
    log["histories"] = {
        name: {**{k: v for k, v in h.items() if k not in ("train_loss", "lr")},
               "train_loss": [round(x, 4) for x in h["train_loss"]]}
        for name, h in histories.items()
    }
    (out / "training_log.json").write_text(json.dumps(log, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (out / "REPORT.md").write_text(_report(results, out), encoding="utf-8")
    _log(f"done in {results['seconds_total']:.0f} s: {out}", quiet)
    return results


def _measure(out, order, trained, streams, sft_val, chats, baselines, recipe, quiet) -> dict:
    """Every number of the report, measured on the models reloaded from ``out`` (float16 on disk)."""
    models = {name: pretrained.load(name, models_dir=out)[0] for name in order}
    tok = pretrained.load_tokenizer(models_dir=out)
    ids, mask = sft_val
    results: dict = {"baselines": baselines, "models": {}}
    for name in order:
        model = models[name]
        row = {
            "parameters": count_parameters(model),
            "config": model.config.to_dict(),
            **{split: evaluate(model, streams[split]) for split in ("train", "validation", "unseen")},
            "chat_validation": evaluate(model, ids, loss_mask=mask),
            # The cost of storing float16: the same validation loss with the float32 weights.
            "validation_fp32": evaluate(trained[name], streams["validation"]),
        }
        results["models"][name] = row
        _log(f"  {name}: val {row['validation']:.3f} (ppl {_ppl(row['validation']):.1f}), unseen ppl {_ppl(row['unseen']):.1f}", quiet)

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
        question = conversation[:1] if conversation[0]["role"] == "user" else conversation[:2]
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
# REPORT.md
# ----------------------------------------------------------------------------------------------


def _report(r: dict, out: Path) -> str:
    b, m = r["baselines"], r["models"]
    size = sum(r["files"].values())
    lines = [
        "# The shipped models: training report",
        "",
        "Generated by `python -m llmlab.build_models`" + (" --smoke (a smoke test, not the real models)" if r["smoke"] else "")
        + f" with torch {r['torch']}, {r['threads']} CPU threads, in {r['seconds_total'] / 60:.1f} min of wall time and"
        f" {r['cpu_seconds_total'] / 60:.1f} min of CPU time (about {r['cpu_seconds_total'] / 60 / r['threads']:.1f} min of wall"
        f" time on {r['threads']} free cores; the build machine is shared, so wall times are indicative). Every number below is measured by the build"
        " on the files as shipped (float16 weights reloaded as float32).",
        "",
        "## Data and tokenizer",
        "",
        f"Byte-level BPE with {len(pretrained.load_tokenizer(models_dir=out))} ids (256 bytes, merges, 9 special tokens),"
        " trained on the train split only. Each document is `<|bos|> text <|eos|>`.",
        "",
        "| split | tokens |",
        "|---|---:|",
        *[f"| {split} | {n:,} |" for split, n in r["tokens"].items()],
        f"| chat train / validation (answer tokens, the SFT loss) | {r['chat_tokens']['train']:,} / {r['chat_tokens']['validation']:,} |",
        "",
        "## Models",
        "",
        "All Llama-style (RoPE, RMSNorm, SwiGLU, grouped-query attention, untied LM head).",
        "",
        "| model | parameters | layers | d_model | heads / KV heads | d_ff | context | dropout | steps run (best) | train time |",
        "|---|---:|---:|---:|---|---:|---:|---:|---|---:|",
    ]
    for name, row in m.items():
        c, h = row["config"], r["histories"][name]
        lines.append(
            f"| {name} | {row['parameters']:,} | {c['n_layers']} | {c['d_model']} | {c['n_heads']} / {c['n_kv_heads']} | "
            f"{c['d_ff']} | {c['max_seq_len']} | {c['dropout']} | {h['steps_run']} ({h['best_step']}) | {r['seconds_train'][name] / 60:.1f} min |"
        )
    chat_recipe = r["recipe"]["chat"]
    lines += [
        "",
        f"es-chat is {chat_recipe['parent']} fine-tuned on the chat train split with the `{chat_recipe['style']}` template of"
        " `llmlab.chat` (`<|user|>` ... `<|end|>`, `<|assistant|>` ... `<|end|>`): the loss counts only the answer tokens"
        f" and the `<|end|>` that closes them, and {chat_recipe['replay']:g} row of plain train text is mixed in per chat"
        " row (replay). Prompt it with `encode_chat(messages, tok, \"chatml\", add_generation_prompt=True)` and stop at"
        " `<|end|>`.",
        "",
        f"Shipped files: {size / 1e6:.2f} MB in total ({', '.join(f'{k} {v / 1e6:.2f} MB' for k, v in r['files'].items() if k.endswith('.safetensors'))}).",
        "",
        "## Loss and perplexity",
        "",
        "Mean negative log-likelihood per token (nats) and perplexity (exp of it), on every token of each split"
        " after the first (the positions a bigram can score). Baselines use the same tokenizer and are add-k smoothed;"
        f" k was tuned on validation (unigram k = {b['unigram']['k']}, bigram k = {b['bigram']['k']}), which favours them.",
        "",
        "| model | train loss | validation loss | validation ppl | unseen loss | unseen ppl |",
        "|---|---:|---:|---:|---:|---:|",
        f"| unigram (add-k) | | {b['unigram']['validation']:.3f} | {_ppl(b['unigram']['validation']):.1f} | {b['unigram']['unseen']:.3f} | {_ppl(b['unigram']['unseen']):.1f} |",
        f"| bigram (add-k) | | {b['bigram']['validation']:.3f} | {_ppl(b['bigram']['validation']):.1f} | {b['bigram']['unseen']:.3f} | {_ppl(b['bigram']['unseen']):.1f} |",
    ]
    for name, row in m.items():
        lines.append(
            f"| {name} | {row['train']:.3f} | {row['validation']:.3f} | {_ppl(row['validation']):.1f} | "
            f"{row['unseen']:.3f} | {_ppl(row['unseen']):.1f} |"
        )
    base = m["es-base"]
    lines += [
        "",
        f"es-base vs the bigram: validation perplexity {_ppl(base['validation']):.1f} vs {_ppl(b['bigram']['validation']):.1f}"
        f" (the bigram's is {_ppl(b['bigram']['validation']) / _ppl(base['validation']):.2f} times es-base's); unseen text {_ppl(base['unseen']):.1f} vs"
        f" {_ppl(b['bigram']['unseen']):.1f}. Train vs validation loss: {base['train']:.3f} vs {base['validation']:.3f}"
        " (the gap is what the model memorised).",
        "",
        f"es-mini, with {m['es-base']['parameters'] / m['es-mini']['parameters']:.1f} times fewer parameters, is only"
        f" {m['es-mini']['validation'] - base['validation']:.3f} nats worse on validation: with ~{r['tokens']['train'] // 1000}k"
        " training tokens the data, more than the size, limits both models.",
        "",
        "Storing float16 instead of float32 changes the validation loss by "
        + ", ".join(f"{name} {row['validation'] - row['validation_fp32']:+.5f}" for name, row in m.items()) + " nats.",
        "",
        "**Chat.** Loss on the answer tokens of the chat validation split (questions never trained on), with the"
        " chatml template:",
        "",
        "| model | answer loss | answer ppl |",
        "|---|---:|---:|",
        *[f"| {name} | {row['chat_validation']:.3f} | {_ppl(row['chat_validation']):.1f} |" for name, row in m.items()],
        "",
        f"On plain text (validation split) es-chat has perplexity {_ppl(m['es-chat']['validation']):.1f},"
        f" es-base {_ppl(base['validation']):.1f}: fine-tuning costs some plain-text skill, even with one row of"
        " pretraining text replayed per chat row (without replay a trial gave ~146).",
        "",
        "## Learning curves (validation loss at each evaluation)",
        "",
    ]
    for name, h in r["histories"].items():
        points = ", ".join(f"{s}: {v:.3f}" for s, v in zip(h["eval_step"], h["val_loss"]))
        lines.append(f"- **{name}** (step: loss{'; stopped early' if h['stopped_early'] else ''}): {points}")
    lines += [
        "",
        "## Samples",
        "",
        "What to expect from models this small: Spanish-looking words and local grammar, punctuation and dialogue"
        " layout, but meaning drifts within a sentence and invented words appear. es-chat has learnt the format (it"
        " answers briefly and closes its turn) far more than any knowledge, and under greedy decoding it often falls"
        " back on the most frequent answer of its data («No lo sé»).",
        "",
        "Sampled with temperature 0.8 and top-p 0.95 (seed = prompt number), and greedy for es-base;"
        f" at most {r['recipe']['sample_tokens']} new tokens, stopping at `<|eos|>`.",
        "",
    ]
    for s in r["samples"]:
        lines.append(f"**«{s['prompt']}»**")
        lines.append("")
        for key in ("es-base", "es-base greedy", "es-mini"):
            lines.append(f"- {key}: {s['prompt']}{_one_line(s[key])}")
        lines.append("")
    lines += ["**Chat** (questions from the chat validation split, never trained on; greedy unless it says otherwise):", ""]
    for s in r["chat_samples"]:
        lines += [
            f"- *{_one_line(s['question'])}*",
            f"  - es-chat: {_one_line(s['es-chat'])}",
            f"  - es-chat, sampled at temperature 0.7: {_one_line(s['es-chat sampled'])}",
            f"  - es-base with the same template: {_one_line(s['es-base'])}",
            f"  - reference answer: {_one_line(s['reference'])}",
        ]
    lines += [
        "",
        "## Reproducing",
        "",
        "`make model` (or `python -m llmlab.build_models`). Same torch version and thread count: the same run and"
        " the same files. Other torch versions, CPUs or thread counts: the same recipe and tokenizer, weights that"
        " differ in the last bits and losses that agree to about two decimals.",
        "",
    ]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    # Line breaks drawn as ⏎ so that each sample stays on one Markdown line. No strip(): the
    # continuation of a prompt usually starts with a space, and that space is part of the token.
    return text.replace("\n", "⏎") if text.strip() else "(nothing)"


# ----------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m llmlab.build_models", description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a few steps on a slice of the data (seconds)")
    parser.add_argument("--out", help="output folder (default: llmlab/data/models, or a temporary folder with --smoke)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: 2; part of what makes a run repeatable)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be >= 1")
    if args.out is not None:
        out = Path(args.out)
    elif args.smoke:
        out = Path(tempfile.mkdtemp(prefix="llmlab-models-smoke-"))
    else:
        out = Path(__file__).resolve().parent / "data" / "models"
    build(out, smoke=args.smoke, threads=args.threads, progress=not args.no_progress)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
