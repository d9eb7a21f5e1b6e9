"""How good are the shipped models' texts? The build report's quality measurements, on any models folder.

    python benchmarks/model_quality.py                          # the models in llmlab/data/models
    python benchmarks/model_quality.py --models-dir OLD_MODELS  # the same commands on another build ("before")
    python benchmarks/model_quality.py --quick                  # 10 samples and 10 questions (what `make bench` runs)

For each model folder: perplexity and bits per byte of es-base and es-mini on the corpus's validation and unseen
splits next to an add-k bigram trained with the folder's own tokenizer (bits per byte compare across tokenizers,
perplexities only within one); the valid-word rate (hunspell es_ES) and repetition rate of 100 sampled continuations
of 60 tokens; es-chat's answer perplexity on the chat validation split and the share of 50 held-out questions it
answers on topic (`makedata.quality`). Everything is seeded: the same folder gives the same numbers.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch

from llmlab import corpus, pretrained
from llmlab.train import encode_documents, evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "course" / "tools"))  # the build's own measures
from makedata import quality  # noqa: E402
from makedata.models import ngram_nll  # noqa: E402


def bits_per_byte(nll: float, tokens: int, n_bytes: int) -> float:
    return nll * (tokens - 1) / n_bytes / math.log(2)


def measure(models_dir, *, samples: int, questions: int) -> dict:
    tok = pretrained.load_tokenizer(models_dir=models_dir)
    docs = {s: corpus.load_documents(s) for s in corpus.SPLITS}
    streams = {s: encode_documents(d, tok) for s, d in docs.items()}
    n_bytes = {s: sum(len(x.encode("utf-8")) for x in d) for s, d in docs.items()}
    rows = {}
    bigram = {s: min(ngram_nll(streams["train"], streams[s], len(tok), 2, k) for k in (0.001, 0.003, 0.01, 0.03, 0.1))
              for s in ("validation", "unseen")}
    rows["bigram (add-k, best k)"] = {s: bigram[s] for s in bigram}
    models = {name: pretrained.load(name, models_dir=models_dir)[0] for name in pretrained.available(models_dir=models_dir)}
    for name in ("es-base", "es-mini"):
        model = models[name]
        row = {s: evaluate(model, streams[s]) for s in ("validation", "unseen")}
        continuations = quality.continuations(model, tok, n=samples)
        texts = [c["text"] for c in continuations]
        vw = quality.valid_word_rate(texts)
        row["valid_words"] = None if vw is None else vw["rate"]
        row["repetition"] = sum(quality.repetition_rate(t) for t in texts) / len(texts)
        row["examples"] = continuations[:5]
        rows[name] = row
    held_out = corpus.load_chat("validation")
    answers = quality.chat_answers(models["es-chat"], tok, quality.spread(held_out, questions))
    chat = {
        "answer_ppl": quality.chat_answer_perplexity(models["es-chat"], tok, held_out),
        "on_topic": sum(quality.on_topic(a["question"], a["answer"], a["reference"]) for a in answers) / len(answers),
        "reference_overlap": sum(quality.reference_overlap(a["answer"], a["reference"]) for a in answers) / len(answers),
    }
    return {"vocab": len(tok), "tokens": {s: int(v.numel()) for s, v in streams.items()}, "bytes": n_bytes, "rows": rows,
            "chat": chat, "samples": samples, "questions": questions}


def print_table(r: dict, label: str) -> None:
    t, b = r["tokens"], r["bytes"]
    print(f"== {label} (tokenizer of {r['vocab']} ids) ==")
    print(f"{'model':<24} {'val ppl':>8} {'val bpb':>8} {'unseen ppl':>11} {'unseen bpb':>11} {'valid words':>12} {'repetition':>11}")
    for name, row in r["rows"].items():
        vw = row.get("valid_words")
        vw_s = "" if "valid_words" not in row else ("no hunspell" if vw is None else f"{vw:.1%}")
        rep = f"{row['repetition']:.3f}" if "repetition" in row else ""
        print(f"{name:<24} {math.exp(row['validation']):>8.1f} {bits_per_byte(row['validation'], t['validation'], b['validation']):>8.3f}"
              f" {math.exp(row['unseen']):>11.1f} {bits_per_byte(row['unseen'], t['unseen'], b['unseen']):>11.3f} {vw_s:>12} {rep:>11}")
    c = r["chat"]
    print(f"es-chat: answer ppl {c['answer_ppl']:.1f}; on topic {c['on_topic']:.0%} and reference overlap {c['reference_overlap']:.0%}"
          f" of {r['questions']} held-out questions; {r['samples']} continuations of 60 tokens per model")
    print("The first five continuations of es-base (prompt i, seed i):")
    for c in r["rows"]["es-base"]["examples"]:
        print("-", (c["prompt"] + c["text"]).replace("\n", "⏎"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models-dir", action="append", help="a models folder (repeat to compare); default: the shipped one")
    parser.add_argument("--quick", action="store_true", help="10 samples and 10 questions")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    folders = args.models_dir or [None]
    n = 10 if args.quick else 100
    q = 10 if args.quick else 50
    for folder in folders:
        start = time.perf_counter()
        r = measure(folder, samples=n, questions=q)
        print_table(r, folder or "llmlab/data/models")
        print(f"({time.perf_counter() - start:.0f} s)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
