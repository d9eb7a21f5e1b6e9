"""Adapt the shipped tiny models for real and measure it: ``llmlab/data/adapters/`` (results, report, best adapter).

    python course/tools/makedata adapters              # the real build (see REPORT.md for its time; a few minutes)
    python course/tools/makedata adapters --smoke      # a few steps, into a temporary folder (seconds)
    python course/tools/makedata adapters --out DIR    # write somewhere else than the package

What it does, on whatever models ``llmlab.pretrained`` ships (sizes are read, never assumed):

1. **Chat fine-tuning of the base model**, every method with the same data, steps, batches and
   seed, the loss on the answer tokens only (``llmlab.train.build_sft_examples``): LoRA on the
   attention projections at two ranks, LoRA on attention + MLP, and full fine-tuning. For each:
   trainable parameters, answer loss / perplexity on the chat validation split, perplexity on
   plain validation text (what the adaptation made the model forget), the bytes of weights,
   gradients and AdamW state read off the tensors after one step (``llmlab.lora.training_memory``)
   and the wall time. The shipped chat model is measured as a reference.
2. **The best adapter is shipped** (``<base>-chat-lora/``, a PEFT folder, float16) with
   ``checksums.sha256``; its numbers are re-measured on the files as written.
3. **Distillation**: a student with the small model's configuration, from the same random start,
   trained on the plain-text corpus twice with the same steps, batches and seed: once on the hard
   labels only (``lam = 0``) and once with the base model's soft targets (``llmlab.distill``).
4. **QLoRA** when ``llmlab.quant`` is available: the same LoRA on a frozen quantized base,
   memory and answer loss against LoRA on the float base.

Everything goes to ``results.json`` (read by lab 06) and ``REPORT.md``.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import math
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

from llmlab import __version__, corpus, distill, lora, pretrained
from llmlab.chat import STOP_TOKENS, encode_chat
from llmlab.datasets import contamination_rate, dataset_card
from llmlab.model import ModelConfig, Transformer, count_parameters, generate
from llmlab.train import build_sft_examples, encode_documents, evaluate, train

from . import DATA

__all__ = ["FULL", "SMOKE", "build", "main"]

# ----------------------------------------------------------------------------------------------
# The recipe
# ----------------------------------------------------------------------------------------------
# Learning rates: LoRA trains a small update from B = 0 and tolerates (needs) a larger rate than
# full fine-tuning, whose rate is the one the shipped chat model was trained with. No replay of
# plain text in any run: the plain-text perplexity after adaptation then shows what each method
# forgets.

FULL = {
    "threads": 1,  # one thread: on a shared machine a second one mostly spins (and the run stays repeatable)
    "seed": 1234,
    "base": "es-base",
    "chat_model": "es-chat",
    "student_like": "es-mini",
    "sft": dict(steps=80, batch_size=8, seq_len=256, warmup=10, eval_every=20, grad_clip=1.0),
    "runs": {
        "LoRA atención r=8": dict(targets="attention", r=8, alpha=16, lr=1e-2, weight_decay=0.0),
        "LoRA atención r=16": dict(targets="attention", r=16, alpha=32, lr=1e-2, weight_decay=0.0),
        "LoRA atención+MLP r=16": dict(targets="all-linear", r=16, alpha=32, lr=5e-3, weight_decay=0.0),
        "ajuste completo": dict(lr=5e-4, weight_decay=0.1),
    },
    "distill": dict(steps=200, batch_size=8, seq_len=256, lr=3e-3, warmup=20, eval_every=50, T=2.0, lam=0.5),
    "qlora_formats": ["q4_0"],  # the QLoRA recipe's 4 bits; "q8_0" works too
    "samples": 3,
    "sample_tokens": 40,
}

SMOKE = {
    **FULL,
    "threads": 1,
    "sft": dict(steps=3, batch_size=2, seq_len=64, warmup=1, eval_every=3, grad_clip=1.0),
    "runs": {
        "LoRA atención r=2": dict(targets="attention", r=2, alpha=4, lr=1e-2, weight_decay=0.0),
        "LoRA atención+MLP r=2": dict(targets="all-linear", r=2, alpha=4, lr=1e-2, weight_decay=0.0),
        "ajuste completo": dict(lr=5e-4, weight_decay=0.1),
    },
    "distill": dict(steps=3, batch_size=2, seq_len=64, lr=3e-3, warmup=1, eval_every=3, T=2.0, lam=0.5),
    "qlora_formats": ["q4_0"],
    "data_slice": 20,
    "samples": 1,
    "sample_tokens": 4,
}

ADAPTER_DTYPE = torch.float16  # on disk; loaded as float32


def _log(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def _ppl(nll: float) -> float:
    return math.exp(nll)


def _mb(n_bytes: int) -> float:
    return n_bytes / 1e6


# ----------------------------------------------------------------------------------------------
# Measurements
# ----------------------------------------------------------------------------------------------


def _one_step_memory(model: torch.nn.Module, rows, mask, batch_size: int, seq_len: int) -> dict:
    """``training_memory`` of a copy of ``model`` after one AdamW step (gradients and moments exist then)."""
    from llmlab.train import masked_mean, token_losses, get_batch

    m = copy.deepcopy(model).train()
    optimizer = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-6)
    x, y, mk = get_batch(rows, batch_size, seq_len, torch.Generator().manual_seed(0), mask)
    masked_mean(token_losses(m, x, y), mk).backward()
    optimizer.step()
    return lora.training_memory(m, optimizer)


def _chat_data(recipe: dict, tok) -> dict:
    chats = {split: corpus.load_chat(split) for split in ("train", "validation")}
    docs = {split: corpus.load_documents(split) for split in ("train", "validation")}
    cut = recipe.get("data_slice")
    if cut is not None:
        chats = {k: v[:cut] for k, v in chats.items()}
        docs = {k: v[: max(1, cut // 5)] for k, v in docs.items()}
    seq_len = recipe["sft"]["seq_len"]
    sft = {split: build_sft_examples(chats[split], tok, seq_len=seq_len) for split in chats}
    streams = {split: encode_documents(d, tok) for split, d in docs.items()}
    return {"chats": chats, "sft": sft, "streams": streams}


def _card(chats: dict, sft: dict) -> dict:
    questions = {split: [c[-2]["content"] for c in convs] for split, convs in chats.items()}
    # The values are Spanish: lab 06 prints this card to students.
    rate = contamination_rate(questions["train"], questions["validation"])
    return dataset_card(
        name="conversaciones del curso (llmlab/data/chat/qa.jsonl)",
        version=f"la del paquete llmlab {__version__}; partición por SHA-256 de cada conversación (1 de cada 10 a validación)",
        provenance="preguntas y respuestas escritas para el curso por sus autores (llmlab.corpus)",
        format="una conversación JSON por línea: mensajes de usuario y de asistente",
        size=(f"{len(chats['train'])} conversaciones de entrenamiento y {len(chats['validation'])} de validación; "
              f"{int(sft['train'][1].sum())} y {int(sft['validation'][1].sum())} tokens de respuesta"),
        quality="escritas a mano, respuestas breves; sin filtrado automático",
        license="CC BY 4.0, como el corpus del curso",
        coverage="español; definiciones, cuentas, ortografía, consejos cotidianos, negativas",
        gaps="sin respuestas largas, sin diálogos de varios turnos, sin código, sin otros idiomas",
        risks="pequeño y escrito por pocas personas: estilo estrecho; hay preguntas parecidas entre sí",
        contamination=f"{100 * rate:.1f} % de las preguntas de validación aparecen (normalizadas) en entrenamiento",
        traceability="python course/tools/makedata adapters lo reconstruye; la regla de partición está en llmlab.corpus",
    )


def _samples(model, tok, chats: list, n: int, n_tokens: int) -> list[str]:
    stops = [tok.special_tokens[t] for t in STOP_TOKENS["chatml"]]
    answers = []
    for conversation in chats[:n]:
        prompt = encode_chat(conversation[:-1], tok, "chatml", add_generation_prompt=True)
        n_new = min(n_tokens, model.config.max_seq_len - len(prompt))
        out = generate(model, torch.tensor(prompt), n_new, eos_token_id=stops)
        answers.append(tok.decode([i for i in out[len(prompt):].tolist() if i not in stops]))
    return answers


# ----------------------------------------------------------------------------------------------
# The build
# ----------------------------------------------------------------------------------------------


def build(out_dir, *, smoke: bool = False, threads: int | None = None, progress: bool = True, quiet: bool = False,
          models_dir=None) -> dict:
    """Run every adaptation into ``out_dir`` and return the measured results (also written there)."""
    recipe = SMOKE if smoke else FULL
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    threads = recipe["threads"] if threads is None else threads
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _build(recipe, out, smoke, threads, progress, quiet, models_dir)
    finally:
        torch.set_num_threads(previous)


def _build(recipe, out: Path, smoke: bool, threads: int, progress: bool, quiet: bool, models_dir) -> dict:
    t_start, cpu_start = time.perf_counter(), time.process_time()
    seed, sft = recipe["seed"], recipe["sft"]
    base, tok = pretrained.load(recipe["base"], models_dir=models_dir)
    data = _chat_data(recipe, tok)
    (train_rows, train_mask), (val_rows, val_mask) = data["sft"]["train"], data["sft"]["validation"]
    plain_val = data["streams"]["validation"]

    def answer_loss(model) -> float:
        return evaluate(model, val_rows, loss_mask=val_mask)

    def plain_loss(model) -> float:
        return evaluate(model, plain_val, seq_len=min(256, model.config.max_seq_len))

    results: dict = {"base": recipe["base"], "base_parameters": count_parameters(base), "references": {}, "runs": {}}
    _log(f"[1/5] references: {recipe['base']} and {recipe['chat_model']}", quiet)
    results["references"][recipe["base"]] = {"answer_loss": answer_loss(base), "plain_loss": plain_loss(base)}
    if recipe["chat_model"] in pretrained.available(models_dir=models_dir):
        chat_model = pretrained.load(recipe["chat_model"], models_dir=models_dir)[0]
        results["references"][recipe["chat_model"]] = {"answer_loss": answer_loss(chat_model),
                                                       "plain_loss": plain_loss(chat_model)}

    def run_one(model, spec: dict, name: str) -> dict:
        """Train ``model`` (in place) with the shared recipe and measure it."""
        summary = lora.trainable_summary(model)
        memory = _one_step_memory(model, train_rows, train_mask, sft["batch_size"], sft["seq_len"])
        history = train(
            model, train_rows, val_rows, loss_mask=train_mask, val_loss_mask=val_mask, steps=sft["steps"],
            batch_size=sft["batch_size"], seq_len=sft["seq_len"], lr=spec["lr"], warmup=sft["warmup"],
            weight_decay=spec["weight_decay"], grad_clip=sft["grad_clip"], eval_every=sft["eval_every"],
            seed=seed, progress=progress, desc=name,
        )
        row = {
            "method": "lora" if "targets" in spec else "full",
            "spec": spec,
            "layers": len(lora.lora_layers(model)),
            "trainable": summary["trainable"],
            "trainable_fraction": summary["trainable"] / results["base_parameters"],
            "memory": memory,
            "seconds": history["seconds"],
            "answer_loss": answer_loss(model),
            "plain_loss": plain_loss(model),
            "history": {k: history[k] for k in ("train_loss", "eval_step", "val_loss", "best_step")},
        }
        _log(f"  answer ppl {_ppl(row['answer_loss']):.1f}, plain ppl {_ppl(row['plain_loss']):.1f}, "
             f"{row['trainable']:,} trainable, {_mb(memory['total']):.1f} MB, {row['seconds']:.0f} s", quiet)
        return row

    # 1. Chat fine-tuning, one method at a time, same data, steps and seed.
    adapted = {}
    for i, (name, spec) in enumerate(recipe["runs"].items()):
        _log(f"[2/5] chat fine-tuning {i + 1}/{len(recipe['runs'])}: {name}", quiet)
        model = copy.deepcopy(base)
        if "targets" in spec:
            lora.add_lora(model, spec["targets"], r=spec["r"], alpha=spec["alpha"], seed=seed)
        results["runs"][name] = run_one(model, spec, name)
        adapted[name] = model

    # 2. Ship the best adapter, measured again on the files as written (float16 on disk).
    _log("[3/5] writing the best adapter", quiet)
    lora_runs = {k: v for k, v in results["runs"].items() if v["method"] == "lora"}
    best = min(lora_runs, key=lambda k: lora_runs[k]["answer_loss"])
    folder_name = f"{recipe['base']}-chat-lora"
    lora.save_adapter(adapted[best], out / folder_name, base_name=recipe["base"], dtype=ADAPTER_DTYPE)
    reloaded = lora.load_adapter(copy.deepcopy(base), out / folder_name)
    results["shipped"] = {
        "folder": folder_name,
        "run": best,
        "answer_loss": answer_loss(reloaded),
        "bytes": (out / folder_name / lora.ADAPTER_WEIGHTS).stat().st_size,
        "samples": [
            {"question": c[-2]["content"], "reference": c[-1]["content"], "adapter": a, "base": b}
            for c, a, b in zip(
                data["chats"]["validation"],
                _samples(reloaded, tok, data["chats"]["validation"], recipe["samples"], recipe["sample_tokens"]),
                _samples(base, tok, data["chats"]["validation"], recipe["samples"], recipe["sample_tokens"]),
            )
        ],
    }

    # 3. Distillation: the small model's architecture, hard labels vs the base model's soft targets.
    _log("[4/5] distillation: student from hard labels, then from soft targets", quiet)
    results["distill"] = _distillation(recipe, base, data["streams"], models_dir, progress, quiet)

    # 4. QLoRA: the best LoRA recipe again, on a frozen quantized base (if llmlab.quant is there).
    results["qlora"] = {}
    if importlib.util.find_spec("llmlab.quant") is not None:
        from llmlab.quant import quantize_model

        spec = recipe["runs"][best]
        for fmt in recipe["qlora_formats"]:
            name = f"QLoRA {fmt} ({best[len('LoRA '):]})"  # e.g. "QLoRA q4_0 (atención+MLP r=16)"
            _log(f"[5/5] {name}", quiet)
            model = lora.add_lora(quantize_model(base, fmt), spec["targets"], r=spec["r"], alpha=spec["alpha"], seed=seed)
            results["qlora"][name] = {"format": fmt, "like": best, "base_answer_loss": answer_loss(quantize_model(base, fmt)),
                                      **run_one(model, spec, name)}

    results.update(
        smoke=smoke, threads=threads, torch=torch.__version__, python=platform.python_version(),
        recipe=recipe, card=_card(data["chats"], data["sft"]),
        seconds_total=time.perf_counter() - t_start, cpu_seconds_total=time.process_time() - cpu_start,
    )
    (out / "results.json").write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (out / "REPORT.md").write_text(_report(results), encoding="utf-8")
    pretrained.write_checksums(out, ["results.json", f"{folder_name}/{lora.ADAPTER_CONFIG}",
                                     f"{folder_name}/{lora.ADAPTER_WEIGHTS}"])
    _log(f"done in {results['seconds_total']:.0f} s: {out}", quiet)
    return results


def _distillation(recipe, teacher, streams, models_dir, progress, quiet) -> dict:
    spec = recipe["distill"]
    like = recipe["student_like"]
    student_config = ModelConfig.from_dict(pretrained.info(like, models_dir=models_dir)["config"])
    runs = {}
    for label, lam in (("hard", 0.0), ("soft", spec["lam"])):
        torch.manual_seed(recipe["seed"])  # the same initial student for both
        student = Transformer(student_config)
        history = distill.distill_train(
            student, teacher, streams["train"], streams["validation"], steps=spec["steps"], T=spec["T"], lam=lam,
            batch_size=spec["batch_size"], seq_len=spec["seq_len"], lr=spec["lr"], warmup=spec["warmup"],
            eval_every=spec["eval_every"], seed=recipe["seed"], progress=progress,
        )
        runs[label] = {"lam": lam, "val_loss": history["best_val_loss"], "best_step": history["best_step"],
                       "seconds": history["seconds"], "eval_step": history["eval_step"], "curve": history["val_loss"]}
        _log(f"  {label}: validation ppl {_ppl(history['best_val_loss']):.1f}", quiet)
    return {
        "student_like": like,
        "student_parameters": count_parameters(Transformer(student_config)),
        "teacher_parameters": count_parameters(teacher),
        "teacher_val_loss": evaluate(teacher, streams["validation"], seq_len=spec["seq_len"]),
        "T": spec["T"], "lam": spec["lam"], "steps": spec["steps"],
        "runs": runs,
    }


# ----------------------------------------------------------------------------------------------
# REPORT.md
# ----------------------------------------------------------------------------------------------


def _report(r: dict) -> str:
    base, refs, runs = r["base"], r["references"], r["runs"]
    full = next((v for v in runs.values() if v["method"] == "full"), None)
    sft = r["recipe"]["sft"]
    lines = [
        "# Adapting the shipped models: build report",
        "",
        "Generated by `python course/tools/makedata adapters`" + (" --smoke (a smoke test, not the real results)" if r["smoke"] else "")
        + f" with torch {r['torch']}, {r['threads']} CPU threads, in {r['seconds_total'] / 60:.1f} min of wall time and"
        f" {r['cpu_seconds_total'] / 60:.1f} min of CPU time (the build machine is shared: wall times are indicative)."
        " Every number is measured by the build; `results.json` holds them all (lab 06 reads it).",
        "",
        "## The data",
        "",
        "| field | value |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in r["card"].items()],
        "",
        f"## Chat fine-tuning of {base} ({r['base_parameters']:,} parameters)",
        "",
        f"Every method: the same chat train split, {sft['steps']} steps of {sft['batch_size']} rows of {sft['seq_len']} tokens,"
        f" the same batches (seed {r['recipe']['seed']}), loss on the answer tokens only, no plain text mixed in; the"
        " weights of the best validation evaluation are kept. Answer perplexity: on the answer tokens of the chat"
        " validation split (questions never trained on). Plain-text perplexity: on the corpus validation split"
        " (what the model still knows of ordinary text).",
        "",
        "| model | trainable parameters | trainable % | answer loss | answer ppl | plain-text ppl | train time |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, ref in refs.items():
        what = "no adaptation" if name == base else "shipped chat model"
        lines.append(f"| {name} ({what}) | | | {ref['answer_loss']:.3f} | {_ppl(ref['answer_loss']):.1f} | "
                     f"{_ppl(ref['plain_loss']):.1f} | |")
    for name, row in runs.items():
        lines.append(f"| {name} | {row['trainable']:,} | {100 * row['trainable_fraction']:.2f} % | {row['answer_loss']:.3f} | "
                     f"{_ppl(row['answer_loss']):.1f} | {_ppl(row['plain_loss']):.1f} | {row['seconds']:.0f} s |")
    lines += [
        "",
        "**Training memory** (bytes of the tensors after one AdamW step, float32; activations not included: they"
        " depend on the batch, not on the method):",
        "",
        "| method | weights | gradients | AdamW state | total | vs full fine-tuning |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in runs.items():
        m = row["memory"]
        ratio = f"{m['total'] / full['memory']['total']:.2f}×" if full else ""
        lines.append(f"| {name} | {_mb(m['weights']):.2f} MB | {_mb(m['gradients']):.2f} MB | {_mb(m['optimizer']):.2f} MB |"
                     f" {_mb(m['total']):.2f} MB | {ratio} |")
    shipped = r["shipped"]
    lines += [
        "",
        "Every run holds the whole base model (the weights column); what LoRA saves is the gradients and the AdamW"
        " state of the frozen matrices: 12 of the 16 bytes that full fine-tuning spends per parameter. At this size"
        " that is a few megabytes; the same rule on a 7B model gives 112 GB for full fine-tuning against a little"
        " over 28 GB for LoRA (float32 weights, before activations).",
        "",
        f"**Shipped adapter**: `{shipped['folder']}/` ({shipped['run']}, the best answer loss among the LoRA runs),"
        f" {shipped['bytes'] / 1e3:.0f} kB of float16 weights in a PEFT folder; answer loss"
        f" {shipped['answer_loss']:.3f} (ppl {_ppl(shipped['answer_loss']):.1f}) measured after reloading it from disk"
        f" onto {base}. Load it with `llmlab.lora.load_adapter(model, folder)` or, exported with `to_hf`, with"
        " `peft.PeftModel.from_pretrained`.",
        "",
        "Greedy answers to chat validation questions (never trained on):",
        "",
    ]
    for s in shipped["samples"]:
        lines += [f"- *{_one_line(s['question'])}*", f"  - with the adapter: {_one_line(s['adapter'])}",
                  f"  - {base} alone: {_one_line(s['base'])}", f"  - reference: {_one_line(s['reference'])}"]
    if r["qlora"]:
        like = next(iter(r["qlora"].values()))["like"]
        lora_row = runs[like]
        lines += [
            "",
            f"## QLoRA: the same LoRA on a frozen quantized {base}",
            "",
            "The base's linear layers and embeddings are replaced by `llmlab.quant` layers that keep the weights packed"
            " (dequantized on the fly at each forward); only A and B train, in float32. Same recipe, steps and seed as"
            " the LoRA run it copies.",
            "",
            "| run | base answer ppl (quantized, no adapter) | answer loss | answer ppl | weights | gradients + AdamW | total | train time |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
            f"| {like} (float32 base) | {_ppl(refs[base]['answer_loss']):.1f} |"
            f" {lora_row['answer_loss']:.3f} | {_ppl(lora_row['answer_loss']):.1f} | {_mb(lora_row['memory']['weights']):.2f} MB |"
            f" {_mb(lora_row['memory']['gradients'] + lora_row['memory']['optimizer']):.2f} MB |"
            f" {_mb(lora_row['memory']['total']):.2f} MB | {lora_row['seconds']:.0f} s |",
        ]
        for name, row in r["qlora"].items():
            m = row["memory"]
            lines.append(f"| {name} | {_ppl(row['base_answer_loss']):.1f} | {row['answer_loss']:.3f} | {_ppl(row['answer_loss']):.1f} |"
                         f" {_mb(m['weights']):.2f} MB | {_mb(m['gradients'] + m['optimizer']):.2f} MB | {_mb(m['total']):.2f} MB |"
                         f" {row['seconds']:.0f} s |")
    d = r["distill"]
    lines += [
        "",
        "## Distillation",
        "",
        f"Student: the architecture of {d['student_like']} ({d['student_parameters']:,} parameters), from the same random"
        f" start in both runs; teacher: {base} ({d['teacher_parameters']:,} parameters, validation ppl"
        f" {_ppl(d['teacher_val_loss']):.1f}). Same corpus train split, {d['steps']} steps, same batches and seed."
        f" Soft targets: loss (1 − λ)·CE + λ·T²·KL with T = {d['T']:g}, λ = {d['lam']:g}.",
        "",
        "| student | validation loss | validation ppl | best step | time |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, row in d["runs"].items():
        label = "hard labels only (λ = 0)" if label == "hard" else f"soft targets (λ = {row['lam']:g})"
        lines.append(f"| {label} | {row['val_loss']:.3f} | {_ppl(row['val_loss']):.1f} | {row['best_step']} | {row['seconds']:.0f} s |")
    hard, soft = d["runs"]["hard"]["val_loss"], d["runs"]["soft"]["val_loss"]
    verdict = "helped" if soft < hard else "did not help"
    lines += [
        "",
        f"The teacher's soft targets {verdict} here: {soft - hard:+.3f} nats of validation loss vs the hard labels"
        " alone, same steps (negative means better).",
        "",
        "## Learning curves (answer loss on the chat validation split at each evaluation)",
        "",
    ]
    for name, row in runs.items():
        h = row["history"]
        lines.append(f"- **{name}**: " + ", ".join(f"{s}: {v:.3f}" for s, v in zip(h["eval_step"], h["val_loss"])))
    lines += [
        "",
        "## Reproducing",
        "",
        "`python course/tools/makedata adapters` (run it again whenever the shipped models change: the adapter records the"
        " fingerprint of its base, and `load_adapter` refuses another base).",
        "",
    ]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    return text.replace("\n", "⏎") if text.strip() else "(nothing)"


# ----------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python course/tools/makedata adapters", description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a few steps on a slice of the data (seconds)")
    parser.add_argument("--out", help="output folder (default: llmlab/data/adapters, or a temporary folder with --smoke)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: 1)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be >= 1")
    if args.out is not None:
        out = Path(args.out)
    elif args.smoke:
        out = Path(tempfile.mkdtemp(prefix="llmlab-adapters-smoke-"))
    else:
        out = DATA / "adapters"
    build(out, smoke=args.smoke, threads=args.threads, progress=not args.no_progress)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
