"""Same text, different counts: characters, bytes, llmlab's BPE and HF `tokenizers`' BPE.

    python benchmarks/compare_tokenizers.py [--quick] [--vocab-sizes 1024 2048 4096] [--repeats 3]

Both BPEs are trained on the corpus' train split with the same vocabulary size (256 bytes +
merges + the same 9 special tokens) and measured on text they never saw: the validation split
(same styles) and the "unseen" folder (other styles). A third BPE row is HF's trainer with
llmlab's pre-tokenizer regex, which separates "different regex" from "different trainer".
Training and encoding times are measured side by side in one run, interleaved, median of
``--repeats``. HF runs single-threaded (RAYON_NUM_THREADS=1) so the ratio compares algorithms.
Without the corpus (``llmlab/data/corpus/raw``) it falls back to the tiny test fixture.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time
import warnings

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from llmlab import corpus  # noqa: E402
from llmlab.tokenizer import DEFAULT_SPECIAL_TOKENS, BPETokenizer, compression_stats  # noqa: E402

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "data"


class Characters:
    """One token per Unicode character (code point)."""

    def encode(self, text):
        return list(text)


class Bytes:
    """One token per UTF-8 byte: what a byte-level BPE starts from."""

    def encode(self, text):
        return list(text.encode("utf-8"))


def train_hf(docs, vocab_size, pattern=None):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    if pattern is None:  # the standard GPT-2-style byte-level setup
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(DEFAULT_SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(docs, trainer)
    return tok


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab-sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (median is shown)")
    parser.add_argument("--quick", action="store_true", help="one vocabulary size (2048), one repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.vocab_sizes, args.repeats = [2048], 1
    try:
        import tokenizers
    except ImportError:
        print("HF `tokenizers` is not installed: pip install 'llmlab[test]'", file=sys.stderr)
        return 1

    data_dir = None
    if not corpus._txt_files(corpus.data_root() / "corpus" / "raw"):
        data_dir = FIXTURE
        args.vocab_sizes = [min(v, 450) for v in args.vocab_sizes[:1]]
        print(f"(no corpus in llmlab/data yet: using the test fixture, vocab {args.vocab_sizes[0]})\n")
    train = corpus.load_documents("train", data_dir)
    evals = {"validation": corpus.load_text("validation", data_dir=data_dir)}
    try:
        evals["unseen"] = corpus.load_text("unseen", data_dir=data_dir)
    except FileNotFoundError:
        pass
    stats = corpus.corpus_stats(data_dir)
    print(
        f"train: {stats['train']['documents']} documents, {stats['train']['bytes']:,} bytes, "
        f"{stats['train']['words']:,} words | "
        + " | ".join(f"{k}: {stats[k]['bytes']:,} bytes, {stats[k]['words']:,} words" for k in evals)
    )
    print(f"tokenizers {tokenizers.__version__}, RAYON_NUM_THREADS={os.environ['RAYON_NUM_THREADS']}, repeats={args.repeats}\n")

    for vocab_size in args.vocab_sizes:
        trainers = {
            "llmlab BPE": lambda v=vocab_size: BPETokenizer.train(train, v),
            "HF BPE (GPT-2 regex)": lambda v=vocab_size: train_hf(train, v),
            "HF BPE (llmlab regex)": lambda v=vocab_size: train_hf(train, v, BPETokenizer().pattern),
        }
        times = {name: [] for name in trainers}
        models = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a small fallback text may run out of pairs
            for _ in range(args.repeats):  # interleaved: each repeat trains every tokenizer once
                for name, make in trainers.items():
                    models[name], seconds = timed(make)
                    times[name].append(seconds)
        sizes = {
            name: (len(m) if isinstance(m, BPETokenizer) else m.get_vocab_size()) for name, m in models.items()
        }
        print(f"== vocabulary size {vocab_size} (actual: " + ", ".join(f"{n} {s}" for n, s in sizes.items()) + ")")
        rows = [("characters", Characters()), ("bytes (UTF-8)", Bytes())] + list(models.items())
        header = f"{'tokenizer':24s} {'split':11s} {'tokens':>9s} {'tok/word':>9s} {'chars/tok':>9s} {'bytes/tok':>9s} {'tok per 4k words':>17s}"
        print(header)
        print("-" * len(header))
        for split, text in evals.items():
            for name, tok in rows:
                s = compression_stats(tok, text)
                print(
                    f"{name:24s} {split:11s} {s['tokens']:9,d} {s['tokens_per_word']:9.3f} "
                    f"{s['characters_per_token']:9.3f} {s['bytes_per_token']:9.3f} {4000 * s['tokens_per_word']:17,.0f}"
                )
        train_text = "\n\n".join(train)
        encode_times = {name: [] for name in models}
        for _ in range(args.repeats):
            for name, m in models.items():
                if isinstance(m, BPETokenizer):
                    m._cache.clear()  # time a cold encode, not a cache lookup
                encode_times[name].append(timed(lambda m=m: m.encode(train_text))[1])
        base_train = statistics.median(times["llmlab BPE"])
        base_encode = statistics.median(encode_times["llmlab BPE"])
        print(f"\n{'tokenizer':24s} {'train s':>9s} {'vs llmlab':>10s} {'encode train s':>15s} {'vs llmlab':>10s}")
        for name in models:
            t, e = statistics.median(times[name]), statistics.median(encode_times[name])
            print(f"{name:24s} {t:9.3f} {base_train / t:9.1f}x {e:15.3f} {base_encode / e:9.1f}x")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
