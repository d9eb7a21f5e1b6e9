"""Write the generated part of the corpus and of the chat data, and the corpus report.

    python course/tools/makedata corpus            # rewrite llmlab/data/corpus/raw/gen_*.txt, chat/gen_qa.jsonl, corpus/REPORT.md
    python course/tools/makedata corpus --check    # regenerate in memory and compare with the files (exit 1 if they differ)
    python course/tools/makedata corpus --recipe next   # the larger corpus of issue 24 (see RECIPES), for the next models

The output is a pure function of the code: the same version of llmlab writes the same bytes on
any machine. Stories and dialogues are written seed after seed; one that is too similar to one
already kept (Jaccard similarity of word 5-grams ≥ ``REJECT_ABOVE``) is dropped, so the corpus
has no near-twins. The generated files are committed (so the wheel, the tests and ``make model``
need nothing but the package data), and ``--check`` proves they are what the code writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import DATA
from . import chat, dialogues, facts, stories, world
from .diversity import MinHashIndex, shingles

__all__ = ["GENERATED", "generate", "main", "write"]

SEED = 17
REJECT_ABOVE = 0.4  # drop a new document this similar to one already kept
SATURATED_AFTER = 2000  # this many near-twins in a row: the writer is saturated (never reached by the shipped recipe)
TARGET_BYTES = {"cuentos": 2_750_000, "dialogos": 1_000_000}  # UTF-8 bytes of text per generated style
DOCS_PER_FILE = {"cuentos": 200, "dialogos": 250, "fichas": 250, "mundo": 250}
TITLES = {
    "cuentos": "Cuentos sencillos (generados por makedata.corpus_writer)",
    "dialogos": "Diálogos de cada día (generados por makedata.corpus_writer)",
    "fichas": "Fichas, trabajos de clase y lecciones (generados por makedata.corpus_writer)",
    "mundo": "Cosas de cada día: usos, animales, oficios y estaciones (generados por makedata.corpus_writer)",
}
# What generated data there is, relative to llmlab/data: a test checks that nothing else is named gen_*.
GENERATED = ("corpus/raw/gen_*.txt", "chat/gen_qa.jsonl")

# Recipes. "next" (the default) writes exactly the committed files (``--check`` compares with it): the corpus of
# issue 24, on which the shipped models were trained: four times the stories and dialogues, the world-knowledge texts and chat of
# ``world.py`` (every everyday fact in several frames, asked in many phrasings; every one-digit sum), fewer
# reading-comprehension drills (they were 3,000 of the ~6,000 chat pairs), and the hand-written texts of
# ``handwritten/`` copied in as ``corpus/raw/escritos_*.txt``. "shipped" is the smaller corpus of the v0.1.0
# models, kept to rebuild them for comparison (the "before" of the build report).
RECIPES = {
    "shipped": {"target_bytes": TARGET_BYTES, "world_documents": 0, "world_chat": False, "n_comprehension": 3000,
                "handwritten": False},
    "next": {"target_bytes": {k: 4 * v for k, v in TARGET_BYTES.items()}, "world_documents": 3000, "world_chat": True,
             "n_comprehension": 1200, "handwritten": True},
}
# "next-chat" (issue 24, second round): the same corpus text, and a larger chat set for es-chat alone (``makedata
# models --recipe next-chat --chat-only``): every fact in 14 phrasings plus 8 wrapped in an everyday carrier, the
# answers naming their topic first, every sum asked in 12 phrasings and always answered «a + b = c.».
RECIPES["next-chat"] = {**RECIPES["next"], "world_chat": {"phrasings_per_fact": 14, "carried_per_fact": 8, "echo_subject": True},
                        "sums": {"per_pair": 12, "answers": ["{a} + {b} = {c}."]}}
# "next-chat2" (issue 24, third round): next-chat with every sum drilled 45 times (each phrasing three times).
RECIPES["next-chat2"] = {**RECIPES["next-chat"], "sums": {"per_pair": 45, "answers": ["{a} + {b} = {c}."]}}
DEFAULT_RECIPE = "next"
HANDWRITTEN = Path(__file__).resolve().parent / "handwritten"


def _collect(writer, target_bytes: int, seed_base: int) -> tuple[list[str], list[str], int]:
    """Documents from ``writer(seed)`` until ``target_bytes``, skipping near-twins; (texts, labels, rejected)."""
    index = MinHashIndex(REJECT_ABOVE)
    texts, labels, size, rejected, seed, in_a_row = [], [], 0, 0, seed_base, 0
    while size < target_bytes:
        label, text = writer(seed)
        seed += 1
        sh = shingles(text)
        if index.best_match(sh)[1] >= REJECT_ABOVE:
            rejected += 1
            in_a_row += 1
            if in_a_row >= SATURATED_AFTER:  # the writer has nothing new left to say: stop short of the target
                break
            continue
        in_a_row = 0
        index.add(sh)
        texts.append(text)
        labels.append(label)
        size += len(text.encode("utf-8"))
    return texts, labels, rejected


def generate(recipe: str | None = None) -> dict:
    """Everything the writer produces: ``{"cuentos": [...], "dialogos": [...], "fichas": [...], "chat": [...], ...}``.

    ``recipe`` is a key of ``RECIPES`` (default ``DEFAULT_RECIPE``); "next" adds ``"mundo"`` (world-knowledge texts)
    and ``"escritos"`` (``{file name: text}`` of the hand-written texts).
    """
    r = RECIPES[recipe or DEFAULT_RECIPE]
    story_texts, story_plots, story_rejected = _collect(stories.write_story, r["target_bytes"]["cuentos"], SEED * 1_000_000)
    dialogue_texts, dialogue_scenes, dialogue_rejected = _collect(dialogues.write_dialogue, r["target_bytes"]["dialogos"],
                                                                  SEED * 1_000_000 + 500_000)
    chat_convs, chat_kinds = chat.conversations(SEED, n_comprehension=r["n_comprehension"], with_kinds=True)
    if r["world_chat"]:
        chat_options = r["world_chat"] if isinstance(r["world_chat"], dict) else {}
        extra = world.world_chat(SEED, **chat_options) + world.sum_conversations(SEED, **r.get("sums", {}))
        chat_convs, chat_kinds = chat_convs + extra, chat_kinds + ["world"] * len(extra)
    out = {
        "cuentos": story_texts,
        "dialogos": dialogue_texts,
        "fichas": facts.fact_documents(SEED),
        "chat": chat_convs,
        "labels": {"cuentos": story_plots, "dialogos": dialogue_scenes, "chat": chat_kinds},
        "rejected": {"cuentos": story_rejected, "dialogos": dialogue_rejected},
    }
    if r["world_documents"]:
        out["mundo"] = world.world_documents(SEED, n=r["world_documents"])
    if r["handwritten"]:
        out["escritos"] = {p.name: p.read_text(encoding="utf-8") for p in sorted(HANDWRITTEN.glob("*.txt"))}
    return out


def _files(generated: dict) -> dict[str, str]:
    """``{path relative to llmlab/data: file content}`` for every generated file."""
    out = {}
    for style in ("cuentos", "dialogos", "fichas", "mundo"):
        if style not in generated:
            continue
        docs = generated[style]
        per = DOCS_PER_FILE[style]
        n_files = -(-len(docs) // per)
        for i in range(n_files):
            chunk = docs[i * per:(i + 1) * per]
            out[f"corpus/raw/gen_{style}_{i + 1:02d}.txt"] = (
                f"# {TITLES[style]}, {i + 1}/{n_files}\n" + "\n---\n".join(chunk) + "\n"
            )
    for name, text in generated.get("escritos", {}).items():
        out[f"corpus/raw/escritos_{name}"] = text
    out["chat/gen_qa.jsonl"] = "".join(json.dumps({"messages": c}, ensure_ascii=False) + "\n" for c in generated["chat"])
    return out


def write(data_dir: Path, generated: dict | None = None, recipe: str | None = None) -> dict:
    """Write the generated files into ``data_dir`` (removing stale ``gen_*`` and ``escritos_*`` files) and return what
    was generated."""
    generated = generated or generate(recipe)
    files = _files(generated)
    stale = [*(data_dir / "corpus" / "raw").glob("gen_*.txt"), *(data_dir / "corpus" / "raw").glob("escritos_*.txt")]
    for old in stale:
        if f"corpus/raw/{old.name}" not in files:
            old.unlink()
    for rel, content in files.items():
        path = data_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return generated


def check(data_dir: Path, recipe: str | None = None) -> list[str]:
    """Paths whose content differs from what the writer produces now (empty: all as committed)."""
    files = _files(generate(recipe))
    bad = [rel for rel, content in files.items()
           if not (data_dir / rel).is_file() or (data_dir / rel).read_text(encoding="utf-8") != content]
    extra = [f"corpus/raw/{p.name}" for p in (data_dir / "corpus" / "raw").glob("gen_*.txt") if f"corpus/raw/{p.name}" not in files]
    return sorted(bad + extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python course/tools/makedata corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(DATA))
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    parser.add_argument("--no-report", action="store_true", help="do not rewrite corpus/REPORT.md")
    parser.add_argument("--recipe", choices=sorted(RECIPES), default=None,
                        help=f"which corpus to write (default: {DEFAULT_RECIPE}, the committed one)")
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir)
    if args.check:
        bad = check(data_dir, args.recipe)
        for rel in bad:
            print(f"differs from the writer's output: {rel}", file=sys.stderr)
        return 1 if bad else 0
    generated = write(data_dir, recipe=args.recipe)
    if not args.no_report:
        from .report import write_report

        write_report(data_dir, generated)
    print(data_dir)
    return 0
