"""Quantised tiny models, measured: perplexity, memory and decode speed of every format, in one run.

For each shipped model (es-base, es-mini) and each format of ``llmlab.quant.quantize_model``:

- validation perplexity (the corpus' validation split, as ``llmlab.train.evaluate`` scores it) and
  its change relative to float32;
- memory in RAM (bytes of every tensor of the quantised model, ``module_nbytes``), on disk
  (``torch.save`` of its state dict) and, for the formats GGUF has, the size of the ``.gguf`` file
  ``llmlab.export.to_gguf`` writes;
- an int8 KV cache (keys per channel, values per token) on the float32 model: perplexity and bytes.

Where llama-cpp-python is installed (optional: it compiles llama.cpp), the exported es-base runs in
llama.cpp and its logits are compared with llmlab's model loaded from the same GGUF file.

Then decode speed, batch 1: tokens/s of float32 vs the quantised models, interleaved repeats in the
same process (median), next to what ``llmlab.cost``'s roofline predicts from the bytes each step moves.

    python benchmarks/bench_quant.py            # full validation split (a few minutes on one core)
    python benchmarks/bench_quant.py --quick    # 1500 tokens, fewer formats (smoke run, ~30 s)

The issue's targets for es-base (int8 per channel and Q8_0 <= +0.5 % perplexity, Q4_0 <= +5 %)
are checked and printed here, not in a test: the models are retrained from time to time.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time

import numpy as np
import torch

from llmlab import metrics, pretrained
from llmlab.cost import decode_tokens_per_s
from llmlab.cost.calibrate import cpu_hardware, layer_overhead_s, spec_from_llmlab
from llmlab.cost.speed import Efficiency
from llmlab.quant import QuantizedKVCache, module_nbytes, quantize_model, quantized_layers
from llmlab.train import encode_documents, evaluate

FORMATS = ["f32", "f16", "int8", "int8_channel", "q8_0", "q4_0", "int4_g32", "int4_g128", "int3_g32", "int2_g32"]
QUICK_FORMATS = ["f32", "int8_channel", "q8_0", "q4_0", "int2_g32"]
GGUF_FORMATS = {"f32", "f16", "q8_0", "q4_0"}
SPEED_FORMATS = ["f32", "f16", "int8_channel", "q8_0", "q4_0", "int4_g32"]
TARGETS = {"int8_channel": 0.5, "q8_0": 0.5, "q4_0": 5.0}  # max % perplexity increase for es-base (issue 10)


def quantized(model, fmt):
    return model if fmt == "f32" else quantize_model(model, fmt)


def disk_bytes(model, fmt, tokenizer, folder) -> tuple[int, int | None]:
    path = os.path.join(folder, f"{fmt}.pt")
    torch.save(model.state_dict(), path)
    size = os.path.getsize(path)
    gguf_size = None
    if fmt in GGUF_FORMATS:
        try:
            from llmlab.export import to_gguf

            gguf_size = os.path.getsize(to_gguf(model, tokenizer, os.path.join(folder, f"{fmt}.gguf"), fmt))
        except ImportError:
            pass  # the gguf package is optional
    return size, gguf_size


@torch.inference_mode()
def nll_with_int8_kv(model, ids, seq_len):
    """Mean NLL (nats) like ``evaluate``, but every window's keys and values go through a QuantizedKVCache."""
    total, count = 0.0, 0
    nbytes = 0
    for start in range(0, ids.numel() - 1, seq_len):
        window = ids[start : start + seq_len + 1]
        cache = QuantizedKVCache(model.config.n_layers)
        logits = model(window[None, :-1], cache=cache)
        losses = torch.nn.functional.cross_entropy(logits[0], window[1:], reduction="sum")
        total += float(losses)
        count += window.numel() - 1
        nbytes = max(nbytes, cache.nbytes)
    return total / count, nbytes


@torch.inference_mode()
def decode_speeds(models: dict, prompt_tokens: int, steps: int, repeats: int) -> dict:
    """Median tokens/s of ``steps`` single-token decode steps after a prompt, interleaved across models."""
    gen = torch.Generator().manual_seed(0)
    any_model = next(iter(models.values()))
    prompt = torch.randint(0, any_model.config.vocab_size, (1, prompt_tokens), generator=gen)
    tokens = torch.randint(0, any_model.config.vocab_size, (steps, 1, 1), generator=gen)

    def run(model):
        cache = model.new_cache()
        model(prompt, cache=cache)
        t0 = time.perf_counter()
        for tok in tokens:
            model(tok, cache=cache)
        return time.perf_counter() - t0

    for model in models.values():
        run(model)  # warm-up
    times = {name: [] for name in models}
    names = list(models)
    for r in range(repeats):
        for name in names if r % 2 == 0 else reversed(names):
            times[name].append(run(models[name]))
    return {name: steps / statistics.median(t) for name, t in times.items()}


def fmt_bytes(n) -> str:
    return "—" if n is None else f"{n / 1e6:.2f} MB"


def bench_model(name: str, formats: list[str], max_tokens: int | None, folder: str) -> dict:
    model, tok = pretrained.load(name)
    ids = encode_documents(metrics.validation_documents("all"), tok)  # the whole validation text, both parts
    if max_tokens:
        ids = ids[:max_tokens]
    print(f"\n## {name}: {sum(p.numel() for p in model.parameters()):,} parameters, validation {ids.numel():,} tokens")
    print("| format | bits/weight (matrices) | RAM | disk (torch.save) | GGUF file | perplexity | vs f32 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rows = {}
    base_nll = None
    for fmt in formats:
        qm = quantized(model, fmt)
        nll = evaluate(qm, ids)
        base_nll = nll if fmt == "f32" else base_nll
        layers = [m for m in quantized_layers(qm).values()]
        bits = (8 * sum(m.weight_bytes for m in layers) / sum(m.packed.rows * m.packed.cols for m in layers)) if layers else 32.0
        ram = module_nbytes(qm)
        disk, gguf_size = disk_bytes(qm if fmt != "f32" else model, fmt, tok, folder)
        change = 100 * (math.exp(nll - base_nll) - 1)
        rows[fmt] = {"nll": nll, "ppl": math.exp(nll), "change_pct": change, "ram": ram, "disk": disk, "gguf": gguf_size, "bits": bits}
        print(f"| {fmt} | {bits:.2f} | {fmt_bytes(ram)} | {fmt_bytes(disk)} | {fmt_bytes(gguf_size)} | {math.exp(nll):.2f} | {change:+.2f} % |")
    kv_nll, kv_bytes = nll_with_int8_kv(model, ids, model.config.max_seq_len)
    f32_kv = 2 * model.config.n_layers * model.config.n_kv_heads * model.config.head_dim * 4 * model.config.max_seq_len
    print(f"\nint8 KV cache (f32 weights): perplexity {math.exp(kv_nll):.2f} ({100 * (math.exp(kv_nll - base_nll) - 1):+.2f} % vs f32), "
          f"{kv_bytes:,} bytes for a full window of {model.config.max_seq_len} tokens vs {f32_kv:,} in float32 "
          f"({f32_kv / kv_bytes:.2f}x smaller)")
    return {"model": model, "rows": rows}


@torch.inference_mode()
def compare_llama_cpp(name: str, folder: str) -> None:
    """Logits of llama.cpp on the exported GGUF vs llmlab on the same file (``from_gguf``), one prompt."""
    try:
        import llama_cpp

        from llmlab.export import from_gguf, to_gguf
    except ImportError as err:
        print(f"\n(llama.cpp comparison skipped: {err})")
        return
    model, tok = pretrained.load(name)
    ids = [tok.bos_id] + tok.encode("Había una vez un pescador que vivía junto al mar. Cada mañana salía en su barca")
    print(f"\n## llama.cpp (llama-cpp-python {llama_cpp.__version__}) on the exported {name}, {len(ids)} prompt tokens")
    print("| GGUF | file | max abs logit difference | relative to max logit | same argmax | llama.cpp decode tok/s |")
    print("|---|---:|---:|---:|---:|---:|")
    rows, llms = {}, {}
    for fmt in ("f32", "f16", "q8_0", "q4_0"):
        path = str(to_gguf(model, tok, os.path.join(folder, f"{name}-{fmt}.gguf"), fmt, name=name))
        ours = from_gguf(path)[0](torch.tensor([ids]))[0].numpy()
        llm = llama_cpp.Llama(model_path=path, n_ctx=model.config.max_seq_len, logits_all=True, verbose=False, n_threads=1)
        llm.eval(ids)
        theirs = np.asarray(llm.scores[: len(ids)])
        rows[fmt] = (os.path.getsize(path), float(np.abs(theirs - ours).max()), float(np.abs(ours).max()),
                     float((theirs.argmax(-1) == ours.argmax(-1)).mean()))
        llms[fmt] = llm

    def decode(llm) -> float:  # 32 single-token steps after the prompt: decode, batch 1
        llm.reset()
        llm.eval(ids)
        t0 = time.perf_counter()
        for token in ids[1:33]:
            llm.eval([token])
        return time.perf_counter() - t0

    times = {fmt: [] for fmt in llms}
    for r in range(5):  # interleaved repeats, median
        for fmt in list(llms) if r % 2 == 0 else reversed(list(llms)):
            times[fmt].append(decode(llms[fmt]))
    for fmt, (size, diff, top, same) in rows.items():
        speed = 32 / statistics.median(times[fmt])
        print(f"| {fmt} | {fmt_bytes(size)} | {diff:.2e} | {diff / top:.2e} | {same:.0%} | {speed:.0f} "
              f"({speed * statistics.median(times['f32']) / 32:.2f}x f32) |")
    print("(llama.cpp multiplies Q8_0/Q4_0 weights with activations it quantises to 8 bits, hence the larger gap there)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1500 validation tokens, fewer formats, fewer repeats")
    parser.add_argument("--models", nargs="+", default=["es-base", "es-mini"])
    args = parser.parse_args()
    torch.set_num_threads(1)
    formats = QUICK_FORMATS if args.quick else FORMATS
    max_tokens = 1500 if args.quick else None
    print(f"# bench_quant: torch {torch.__version__}, 1 thread; perplexity = exp(mean NLL) on the validation split")
    with tempfile.TemporaryDirectory() as folder:
        results = {name: bench_model(name, formats, max_tokens, folder) for name in args.models}
        compare_llama_cpp(args.models[0], folder)

    base = results.get("es-base")
    if base:
        print("\nTargets for es-base (issue 10):", end=" ")
        print(", ".join(f"{fmt} {base['rows'][fmt]['change_pct']:+.2f} % (target <= +{t} %: "
                        f"{'met' if base['rows'][fmt]['change_pct'] <= t else 'MISSED'})"
                        for fmt, t in TARGETS.items() if fmt in base["rows"]))

    # Decode speed on the first model, with the roofline's prediction next to it.
    name = args.models[0]
    model = results[name]["model"]
    speed_formats = SPEED_FORMATS if not args.quick else ["f32", "q8_0", "q4_0"]
    models = {fmt: quantized(model, fmt) for fmt in speed_formats}
    steps, repeats = (16, 3) if args.quick else (64, 5)
    speeds = decode_speeds(models, prompt_tokens=64, steps=steps, repeats=repeats)
    hw = cpu_hardware(bandwidth_mb=64 if args.quick else 256, repeats=3)
    spec = spec_from_llmlab(model.config, name)
    overhead = layer_overhead_s(model.config, context=64, steps=steps, repeats=3)
    eff = Efficiency(layer_overhead_s=overhead)
    print(f"\n## decode speed, {name}, batch 1, prompt 64, {steps} steps, median of {repeats} interleaved runs")
    print(f"this CPU: read bandwidth {hw.bandwidth_gb_s:.1f} GB/s (a {64 if args.quick else 256} MB array), "
          f"float32 matmul {hw.fp16_tflops * 1e3:.1f} GFLOP/s, fixed cost {overhead * 1e3:.3f} ms per layer per step")
    print("| format | weight bytes | tok/s measured | vs f32 | bytes moved per step (ours) | roofline: packed read only | roofline: ours |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    cost_names = {"f32": "fp32", "f16": "fp16", "q8_0": "q8_0", "q4_0": "q4_0"}
    for fmt, qm in models.items():
        packed = module_nbytes(qm)
        # Our linear layers dequantise every matrix to a fresh float32 copy each step: write it, then the matmul
        # reads it (the embedding only dequantises the rows it looks up).
        linear = [m for m in quantized_layers(qm).values() if hasattr(m, "in_features")]
        moved = packed + 2 * 4 * sum(m.in_features * m.out_features for m in linear)
        ideal = decode_tokens_per_s(spec, hw, cost_names[fmt], context=64, efficiency=eff) if fmt in cost_names else None
        ours = 1 / (moved / (hw.bandwidth_gb_s * 1e9) + overhead * model.config.n_layers)
        print(f"| {fmt} | {fmt_bytes(packed)} | {speeds[fmt]:.1f} | {speeds[fmt] / speeds['f32']:.2f}x | {fmt_bytes(moved)} | "
              f"{'—' if ideal is None else f'{ideal:.0f} tok/s'} | {ours:.0f} tok/s |")
    print("\nReading: 'packed read only' is llmlab.cost's prediction for a runtime that reads the packed weights "
          "and dequantises in registers (llama.cpp); 'ours' charges the float32 copy that QuantizedLinear writes "
          "and reads back every step. A model this small also fits in the CPU caches and spends most of a step in "
          "fixed per-layer costs, so neither bandwidth saving shows up here.")


if __name__ == "__main__":
    main()
