"""Serving benchmarks for ``llmlab.serve`` on this CPU, measured side by side in one run.

1. batching: continuous vs static vs one-at-a-time on a mixed-length workload (throughput ratio,
   p95 latency, same tokens in every mode);
2. KV memory: paged blocks vs a contiguous max_seq_len reservation per sequence, at that workload
   (slots wasted per sequence; sequences that fit in the same memory);
3. speculative decoding, es-mini drafting for es-base: acceptance rate, tokens per target pass vs
   (1 - α^(γ+1)) / (1 - α), wall-clock speed-up (or slow-down: these models are tiny and the CPU is
   not memory-bound the way a GPU is);
4. the engine's decode step vs ``llmlab.cost``'s roofline prediction for this CPU (calibrated in
   the same run, as in ``benchmarks/calibrate_cpu.py``);
5. load test on the real server (``python -m llmlab serve``, loopback): 64 streaming clients for
   60 s: requests, failures, p50/p95/p99 TTFT and inter-token latency, throughput;
6. with ``--soak``: the same load for 10 minutes, the server's memory (RSS) sampled every minute;
7. ``hf``: the engine vs HF ``generate`` batched (left padding, greedy, the same es-chat weights
   through ``llmlab.model.to_hf``) at batch 1, 4, 16, 64 (goal: engine >= 1.5x);
8. ``server``: the server with 16 streaming clients vs the offline engine with 16 sequences, the
   same prompts and ``max_tokens`` (``ignore_eos``), in tokens per second (goal: >= 70 %), with the
   engine in the server's thread and in its own process (``--engine-process``).

    python benchmarks/bench_serve.py --quick          # a smoke run (about a minute)
    python benchmarks/bench_serve.py                  # everything but the soak (a few minutes)
    python benchmarks/bench_serve.py --soak           # plus the 10-minute soak
    python benchmarks/bench_serve.py --only batching,speculative

Timings on a shared machine are noisy: compare the ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from llmlab import pretrained  # noqa: E402
from llmlab.cost import (  # noqa: E402
    Efficiency,
    decode_step,
    expected_tokens_per_pass,
    latency_percentiles,
    paged_kv_usage,
)
from llmlab.cost.calibrate import (  # noqa: E402
    layer_overhead_s,
    measure_matmul_tflops,
    measure_matvec_bandwidth_gb_s,
    measure_read_bandwidth_gb_s,
    spec_from_llmlab,
)
from llmlab.cost.hardware import Hardware  # noqa: E402
from llmlab.model import generate  # noqa: E402
from llmlab.serve import Engine, SamplingParams, launch, run_load  # noqa: E402

SECTIONS = ("batching", "kv", "speculative", "cost", "load", "hf", "server")


def p95(values) -> float:
    return latency_percentiles(values, (95,))[95]


def mixed_workload(n: int, seed: int = 0):
    """``n`` requests: prompts of 8-96 tokens, outputs mostly short (4-32) and one in four long (96-150)."""
    g = torch.Generator().manual_seed(seed)
    prompts, params = [], []
    for i in range(n):
        prompts.append(torch.randint(5, 2000, (int(torch.randint(8, 97, (1,), generator=g)),), generator=g).tolist())
        long = i % 4 == 0
        out = int(torch.randint(96, 151, (1,), generator=g)) if long else int(torch.randint(4, 33, (1,), generator=g))
        params.append(SamplingParams(max_tokens=out, temperature=0))  # no stop token: exactly max_tokens tokens
    return prompts, params


# -- 1 and 2: batching and KV memory -------------------------------------------------------------------


def run_engine(engine: Engine, prompts, params, watch_kv: bool = False):
    """Serve everything; return (wall seconds, completions, KV samples per step)."""
    requests = [engine.make_request(p, sp) for p, sp in zip(prompts, params)]
    kv = []
    start = time.perf_counter()
    for r in requests:
        engine.add_request(r)
    while engine.has_unfinished():
        engine.step()
        if watch_kv:
            kv.append((engine.kv_stats(), [r.num_computed for r in engine.scheduler.running]))
    wall = time.perf_counter() - start
    return wall, [r.completion() for r in requests], kv


def bench_batching(model, tok, n: int, rounds: int, batch: int) -> None:
    prompts, params = mixed_workload(n)
    total_tokens = sum(sp.max_tokens for sp in params)
    modes = {
        "continuous": dict(max_num_seqs=batch, policy="continuous"),
        "static": dict(max_num_seqs=batch, policy="static"),
        "one at a time": dict(max_num_seqs=1),
    }
    print(f"\n1) batching: {n} requests at once (prompts 8-96 tokens; outputs 4-32, one in four 96-150; "
          f"{total_tokens} tokens to generate), es-base, batch limit {batch}, greedy; median of {rounds} "
          "interleaved rounds")
    results = {m: [] for m in modes}
    tokens = {}
    for r in range(rounds):
        for mode in (list(modes) if r % 2 == 0 else list(reversed(modes))):
            engine = Engine(model, tok, **modes[mode])
            wall, outs, _ = run_engine(engine, prompts, params)
            results[mode].append((wall, [o.metrics.e2e_s for o in outs], [o.ttft_s for o in outs], engine.num_steps))
            tokens[mode] = [o.token_ids for o in outs]
    same = all(tokens[m] == tokens["continuous"] for m in modes)
    print(f"{'mode':15s} {'tokens/s':>9s} {'p50 e2e s':>10s} {'p95 e2e s':>10s} {'p95 TTFT s':>11s} {'steps':>6s} "
          f"{'throughput vs continuous':>25s}")
    rate = {}
    for mode in modes:
        walls = [w for w, *_ in results[mode]]
        wall = statistics.median(walls)
        e2e = results[mode][walls.index(wall)][1]
        ttft = results[mode][walls.index(wall)][2]
        rate[mode] = total_tokens / wall
        print(f"{mode:15s} {rate[mode]:9.1f} {statistics.median(e2e):10.2f} {p95(e2e):10.2f} {p95(ttft):11.2f} "
              f"{results[mode][0][3]:6d} {rate[mode] / rate['continuous']:24.2f}x")
    print(f"continuous / static throughput: {rate['continuous'] / rate['static']:.2f}x; continuous / one at a time: "
          f"{rate['continuous'] / rate['one at a time']:.2f}x; same tokens in every mode: {'yes' if same else 'NO'}")


def bench_kv(model, tok, n: int, batch: int) -> None:
    prompts, params = mixed_workload(n, seed=1)
    max_len = model.config.max_seq_len
    print(f"\n2) KV memory, paged (blocks of 16 tokens) vs contiguous (max_seq_len = {max_len} slots reserved per "
          f"sequence), same workload as 1) ({n} requests, batch limit {batch}), sampled after every step")
    engine = Engine(model, tok, max_num_seqs=batch, prefix_caching=False)
    _, _, samples = run_engine(engine, prompts, params, watch_kv=True)
    samples = [(s, lengths) for s, lengths in samples if s.running_requests]
    seqs = sum(s.running_requests for s, _ in samples)
    cached = sum(s.tokens_cached for s, _ in samples) / seqs
    paged_waste = sum(s.wasted_slots for s, _ in samples) / seqs
    contiguous_waste = sum(s.contiguous_wasted_slots for s, _ in samples) / seqs
    print(f"{'per running sequence, averaged over steps':45s} {'paged':>9s} {'contiguous':>11s}")
    print(f"{'tokens cached':45s} {cached:9.1f} {cached:11.1f}")
    print(f"{'slots reserved':45s} {cached + paged_waste:9.1f} {cached + contiguous_waste:11.1f}")
    print(f"{'slots wasted (reserved, empty)':45s} {paged_waste:9.1f} {contiguous_waste:11.1f}")
    print(f"{'wasted fraction of the reservation':45s} {paged_waste / (cached + paged_waste):9.1%} "
          f"{contiguous_waste / (cached + contiguous_waste):11.1%}")
    # Chapter 07's formula (llmlab.cost.paged_kv_usage) on the busiest step's sequence lengths.
    busiest, lengths = max(samples, key=lambda item: item[0].running_requests)
    formula = paged_kv_usage(lengths, block_size=16, max_ctx=max_len)
    print(f"busiest step, {busiest.running_requests} sequences, {busiest.tokens_cached} tokens: engine reserves "
          f"{busiest.used_slots} slots (formula {formula['paged_reserved']}), contiguous "
          f"{busiest.contiguous_slots} (formula {formula['contiguous_reserved']})")
    # Same memory, how many sequences at once: 8 full-length sequences' worth of blocks.
    blocks = 8 * max_len // 16
    tight = Engine(model, tok, max_num_seqs=64, num_blocks=blocks, prefix_caching=False)
    wall_paged, _, samples = run_engine(tight, prompts, params, watch_kv=True)
    contiguous_engine = Engine(model, tok, max_num_seqs=8, num_blocks=blocks, prefix_caching=False)
    wall_contig, _, _ = run_engine(contiguous_engine, prompts, params)
    running = [s.running_requests for s, _ in samples if s.running_requests]
    print(f"in the memory of 8 contiguous sequences ({blocks} blocks = {blocks * 16} slots, "
          f"{blocks * engine.bytes_per_block / 2**20:.1f} MiB): paged runs {statistics.mean(running):.1f} sequences "
          f"on average (peak {max(running)}, {tight.kv_stats().preemptions} preemptions), contiguous at most 8; "
          f"throughput {wall_contig / wall_paged:.2f}x")


# -- 3. speculative decoding ---------------------------------------------------------------------------


def bench_speculative(target, draft, tok, n_prompts: int, max_tokens: int, gammas, batch_sizes, rounds: int) -> None:
    texts = ["Había una vez", "La luna", "El mar es", "Mi abuela decía", "En la escuela", "El tren salió",
             "Cuando llegó el invierno", "La ciudad"]
    prompts = [[tok.bos_id] + tok.encode(texts[i % len(texts)]) for i in range(n_prompts)]
    print(f"\n3) speculative decoding: es-mini (draft, {sum(p.numel() for p in draft.parameters()):,} params) for "
          f"es-base (target, {sum(p.numel() for p in target.parameters()):,}); {n_prompts} prompts, {max_tokens} "
          f"tokens each (no stop token); target alone and with the draft alternate, median of {rounds} rounds")
    print(f"{'sampling':9s} {'batch':>5s} {'γ':>2s} {'α (acc.)':>9s} {'tok/pass':>9s} {'formula':>8s} "
          f"{'draft c':>8s} {'pred. x':>8s} {'tok/s':>8s} {'target tok/s':>12s} {'speed-up':>9s}  same as target")
    n_tokens = n_prompts * max_tokens
    for label, temperature in (("greedy", 0.0), ("T=0.8", 0.8)):
        params = [SamplingParams(max_tokens=max_tokens, temperature=temperature, seed=i) for i in range(n_prompts)]
        for batch in batch_sizes:
            for gamma in gammas:
                plain_walls, spec_walls = [], []
                for r in range(rounds):
                    order = ("plain", "spec") if r % 2 == 0 else ("spec", "plain")
                    for kind in order:
                        draft_model = draft if kind == "spec" else None
                        engine = Engine(target, tok, max_num_seqs=batch, draft_model=draft_model,
                                        num_speculative_tokens=gamma)
                        t0 = time.perf_counter()
                        outs = engine.generate(prompts, params)
                        (spec_walls if kind == "spec" else plain_walls).append(time.perf_counter() - t0)
                        if kind == "spec":
                            spec_engine, spec_outs = engine, outs
                        else:
                            plain_outs = outs
                s = spec_engine.spec_stats()
                # c: one draft step relative to one target pass, from the time each side took
                c = (s.draft_s / max(s.proposed / max(s.passes, 1), 1e-9)) / s.verify_s if s.verify_s else float("nan")
                predicted = s.predicted_tokens_per_pass / (gamma * c + 1)
                rate, target_rate = n_tokens / statistics.median(spec_walls), n_tokens / statistics.median(plain_walls)
                same = (all(a.token_ids == b.token_ids for a, b in zip(spec_outs, plain_outs))
                        if temperature == 0 else None)
                print(f"{label:9s} {batch:5d} {gamma:2d} {s.acceptance_rate:9.2f} {s.tokens_per_pass:9.2f} "
                      f"{expected_tokens_per_pass(s.acceptance_rate, gamma):8.2f} {c:8.2f} {predicted:7.2f}x "
                      f"{rate:8.1f} {target_rate:12.1f} {rate / target_rate:8.2f}x  "
                      f"{'-' if same is None else 'yes' if same else 'NO'}")
    print("α = accepted / tested draft tokens; formula = (1 - α^(γ+1)) / (1 - α); c = time of one draft step / "
          "time of one target pass; pred. x = formula / (γ·c + 1)")


# -- 4. decode step vs the cost model ------------------------------------------------------------------


def bench_cost(model, tok, rounds: int, batches, context: int) -> None:
    config = model.config
    spec = spec_from_llmlab(config, name="es-base")
    tflops = statistics.median(measure_matmul_tflops(512, repeats=3) for _ in range(rounds))
    bandwidth = statistics.median(measure_read_bandwidth_gb_s(128, repeats=3) for _ in range(rounds))
    matvec = statistics.median(measure_matvec_bandwidth_gb_s(64, repeats=3) for _ in range(rounds))
    overhead = statistics.median(layer_overhead_s(config, context=context, steps=32, repeats=1) for _ in range(rounds))
    cpu = Hardware("this-cpu", memory_gb=16, bandwidth_gb_s=matvec, fp16_tflops=tflops, kind="cpu")
    eff = Efficiency(ubatch=512, prefill_logits="all", layer_overhead_s=overhead, name="calibrated")
    print(f"\n4) decode step of the engine vs llmlab.cost.decode_step on this CPU: es-base, context {context}; "
          f"measured here: matmul {tflops * 1e3:.1f} GFLOP/s, read {bandwidth:.1f} GB/s, mat-vec {matvec:.1f} GB/s, "
          f"per-layer overhead {overhead * 1e6:.0f} µs (generate on a width-16 copy)")
    print(f"{'batch':>5s} {'predicted ms':>13s} {'bound':>8s} {'engine forward ms':>18s} {'engine step ms':>15s} "
          f"{'step/predicted':>15s}")
    g = torch.Generator().manual_seed(0)
    for batch in batches:
        engine = Engine(model, tok, max_num_seqs=batch)
        prompts = [torch.randint(5, 2000, (context,), generator=g).tolist() for _ in range(batch)]
        for p in prompts:
            engine.add_request(p, SamplingParams(max_tokens=40, temperature=0))
        while any(len(r.output_ids) == 0 for r in engine.scheduler.running) or engine.scheduler.waiting \
                or not engine.scheduler.running:
            engine.step()
        forward, steps = [], []
        real_run = engine.runner.run_rows

        def timed_run(*args, **kwargs):
            t = time.perf_counter()
            out = real_run(*args, **kwargs)
            forward.append(time.perf_counter() - t)
            return out

        engine.runner.run_rows = timed_run
        for _ in range(24):
            t = time.perf_counter()
            engine.step()
            steps.append(time.perf_counter() - t)
        predicted = decode_step(spec, cpu, "fp32", context + 12, batch, efficiency=eff)
        step_ms, fwd_ms = 1e3 * statistics.median(steps), 1e3 * statistics.median(forward)
        print(f"{batch:5d} {predicted.total_s * 1e3:13.2f} {predicted.bound:>8s} {fwd_ms:18.2f} {step_ms:15.2f} "
              f"{step_ms / (predicted.total_s * 1e3):14.2f}x")
    print("predicted = roofline (bytes / mat-vec bandwidth vs FLOPs / matmul rate) + per-layer overhead x layers; "
          "the engine step adds the paged gather and one Sampler call per request")


# -- 5 and 6: the real server --------------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and its children still running (Linux /proc); nan elsewhere."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids = [pid, *map(int, f.read().split())]
        total = 0.0
        for p in pids:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime in clock ticks
        return total / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return float("nan")


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def bench_load(clients: int, duration_s: float, max_tokens: int, soak_minutes: float) -> None:
    print(f"\n5) load test: python -m llmlab serve --model es-chat on loopback; {clients} concurrent streaming chat "
          f"clients for {duration_s:.0f} s, max_tokens {max_tokens}, greedy")
    with launch("es-chat", max_num_seqs=max(32, clients), max_waiting=4 * clients, env=_thread_env()) as server:
        run_load(server.url, clients=4, max_requests=8, duration_s=None, max_tokens=4)  # warm-up
        rss0 = rss_mb(server.pid)
        report = run_load(server.url, clients=clients, duration_s=duration_s, max_tokens=max_tokens)
        print(report.table())
        if report.errors:
            print("first errors:", report.errors)
        print(f"server RSS before {rss0:.0f} MB, after {rss_mb(server.pid):.0f} MB")
        if soak_minutes > 0:
            print(f"\n6) soak: the same load for {soak_minutes:.0f} minutes, server RSS after each minute")
            print(f"{'minute':>6s} {'requests':>9s} {'failures':>9s} {'tokens/s':>9s} {'p95 TTFT ms':>12s} "
                  f"{'RSS MB':>7s}")
            rss = []
            for minute in range(1, int(soak_minutes) + 1):
                r = run_load(server.url, clients=clients, duration_s=60, max_tokens=max_tokens)
                rss.append(rss_mb(server.pid))
                print(f"{minute:6d} {r.requests:9d} {r.failures:9d} {r.throughput_tokens_per_s:9.1f} "
                      f"{1e3 * r.percentiles('ttft_s')[95]:12.1f} {rss[-1]:7.0f}")
            print(f"RSS minute 1 -> minute {len(rss)}: {rss[0]:.0f} -> {rss[-1]:.0f} MB "
                  f"({rss[-1] - rss[0]:+.0f} MB, {100 * (rss[-1] - rss[0]) / rss[0]:+.1f} %)")


def _chat_prompts(tok, n: int) -> list[list[int]]:
    from llmlab.chat import encode_chat
    from llmlab.serve.loadgen import DEFAULT_PROMPTS

    return [encode_chat([{"role": "user", "content": DEFAULT_PROMPTS[i % len(DEFAULT_PROMPTS)]}], tok, "chatml",
                        add_generation_prompt=True) for i in range(n)]


def bench_hf(batches, new_tokens: int, rounds: int) -> None:
    from llmlab.model import to_hf

    model, tok = pretrained.load("es-chat")
    hf = to_hf(model).eval()
    pad = tok.pad_id if tok.pad_id is not None else 0
    print(f"\n7) engine vs HF generate batched: es-chat, greedy, {new_tokens} new tokens per sequence, "
          f"best of {rounds} (wall clock; and this thread's CPU time, steadier when others share the machine); "
          "where the time goes: the prompt pass (a run of 1 new token) and one decode step "
          f"((run of {new_tokens} - run of 1) / {new_tokens - 1}), in ms, for each side")
    print(f"{'batch':>5s} {'engine tok/s':>13s} {'HF tok/s':>9s} {'engine/HF':>10s} {'by CPU time':>12s} "
          f"{'prompt ms eng/HF':>17s} {'step ms eng/HF':>15s}")
    for batch in batches:
        prompts = _chat_prompts(tok, batch)
        width = max(map(len, prompts))
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        engine = Engine(model, tok, max_num_seqs=batch)
        params = SamplingParams(max_tokens=new_tokens, temperature=0)  # no stop token: every row makes new_tokens

        def run_engine_side(n: int) -> None:
            engine.generate(prompts, replace(params, max_tokens=n))

        def run_hf_side(n: int) -> None:
            with torch.inference_mode():
                hf.generate(ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                            pad_token_id=pad)

        engine.generate(prompts[:2], replace(params, max_tokens=4))
        with torch.inference_mode():
            hf.generate(ids[:2], attention_mask=mask[:2], max_new_tokens=4, do_sample=False, pad_token_id=pad)
        best = {(side, n): float("inf") for side in ("engine", "hf") for n in (1, new_tokens)}
        cpu = {"engine": float("inf"), "hf": float("inf")}
        for _ in range(rounds):  # interleaved: both see the same machine load
            for n in (new_tokens, 1):
                for side, run in (("engine", run_engine_side), ("hf", run_hf_side)):
                    t0, c0 = time.perf_counter(), time.thread_time()
                    run(n)
                    best[side, n] = min(best[side, n], time.perf_counter() - t0)
                    if n == new_tokens:
                        cpu[side] = min(cpu[side], time.thread_time() - c0)
        tokens = batch * new_tokens
        full_engine, full_hf = best["engine", new_tokens], best["hf", new_tokens]
        step = {side: (best[side, new_tokens] - best[side, 1]) / (new_tokens - 1) for side in ("engine", "hf")}
        print(f"{batch:5d} {tokens / full_engine:13.0f} {tokens / full_hf:9.0f} {full_hf / full_engine:10.2f} "
              f"{cpu['hf'] / cpu['engine']:12.2f} {1e3 * best['engine', 1]:8.1f}/{1e3 * best['hf', 1]:<8.1f} "
              f"{1e3 * step['engine']:7.2f}/{1e3 * step['hf']:<7.2f}")


def _thread_env() -> dict[str, str]:
    """The environment of a launched server: as many torch threads as this process (a fair comparison)."""
    n = str(torch.get_num_threads())
    return {"OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n}


def bench_server_vs_engine(clients: int, max_tokens: int, requests: int, rounds: int) -> None:
    import contextlib

    model, tok = pretrained.load("es-chat")
    prompts = _chat_prompts(tok, requests)
    params = SamplingParams(max_tokens=max_tokens, temperature=0)
    print(f"\n8) server vs offline engine: {requests} requests of {max_tokens} tokens (ignore_eos), "
          f"{clients} at a time, greedy; the engine in the server's thread and in its own process "
          f"(--engine-process); {torch.get_num_threads()} torch thread(s) each, alternating, best and median "
          f"of {rounds}")
    offline, served = [], {"thread": [], "process": []}
    # Where a served run's CPU goes, per token: the server's processes and this (client) process, vs
    # the offline engine's. On a machine with few cores they compete for the same cores.
    cpu_per_token = {"offline engine": [], "server, thread": [], "server, process": [], "clients": []}
    failures = 0
    with contextlib.ExitStack() as stack:
        servers = {mode: stack.enter_context(launch("es-chat", max_num_seqs=clients, max_waiting=4 * clients,
                                                    engine_process=mode == "process", env=_thread_env()))
                   for mode in served}
        for server in servers.values():
            run_load(server.url, clients=4, max_requests=8, duration_s=None, max_tokens=4)  # warm-up
        for r in range(rounds):  # one runs at a time; the others idle
            engine = Engine(model, tok, max_num_seqs=clients)
            engine.generate(prompts[:2], replace(params, max_tokens=4))
            t0, c0 = time.perf_counter(), time.process_time()
            engine.generate(prompts, params)  # all queued at once; at most `clients` run together
            offline.append(requests * max_tokens / (time.perf_counter() - t0))
            cpu_per_token["offline engine"].append((time.process_time() - c0) / (requests * max_tokens))
            for mode in (list(served) if r % 2 == 0 else list(reversed(served))):
                s0, c0 = cpu_s(servers[mode].proc.pid), time.process_time()
                report = run_load(servers[mode].url, clients=clients, max_requests=requests, duration_s=None,
                                  max_tokens=max_tokens, ignore_eos=True)
                n_tokens = max(1, report.output_tokens)
                cpu_per_token["server, " + mode].append((cpu_s(servers[mode].proc.pid) - s0) / n_tokens)
                cpu_per_token["clients"].append((time.process_time() - c0) / n_tokens)
                failures += report.failures
                served[mode].append(report.throughput_tokens_per_s)
    best, median = max(offline), statistics.median(offline)
    print(f"{'':16s} {'best tok/s':>11s} {'median':>8s} {'best/best':>10s} {'median/median':>14s}")
    print(f"{'offline engine':16s} {best:11.0f} {median:8.0f}")
    for mode, rates in served.items():
        print(f"{'server, ' + mode:16s} {max(rates):11.0f} {statistics.median(rates):8.0f} {max(rates) / best:10.2f} "
              f"{statistics.median(rates) / median:14.2f}")
    print(f"({failures} failures; goal: server/engine >= 0.70)")
    print("CPU time per generated token, median (us): "
          + ", ".join(f"{name} {1e6 * statistics.median(v):.0f}" for name, v in cpu_per_token.items())
          + f" ({os.cpu_count()} CPUs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads, a 5-second load test")
    parser.add_argument("--soak", action="store_true", help="add the 10-minute soak (not in CI)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated subset of {SECTIONS}")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: steadier on a shared machine)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    unknown = only - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), float32, CPU"
          + (" [--quick]" if args.quick else ""))
    target, tok = pretrained.load("es-base")
    if "batching" in only:
        bench_batching(target, tok, n=16 if args.quick else 48, rounds=1 if args.quick else 3, batch=16)
    if "kv" in only:
        bench_kv(target, tok, n=16 if args.quick else 48, batch=16)
    if "speculative" in only:
        draft, _ = pretrained.load("es-mini")
        bench_speculative(target, draft, tok, n_prompts=4 if args.quick else 8, max_tokens=32 if args.quick else 64,
                          gammas=(4,) if args.quick else (2, 4, 6), batch_sizes=(1,) if args.quick else (1, 8),
                          rounds=1 if args.quick else 3)
    if "cost" in only:
        bench_cost(target, tok, rounds=1 if args.quick else 3, batches=(1, 8) if args.quick else (1, 8, 32),
                   context=128)
    if "hf" in only:
        bench_hf(batches=(1, 16) if args.quick else (1, 4, 16, 64), new_tokens=32 if args.quick else 64,
                 rounds=1 if args.quick else 3)
    if "server" in only:
        bench_server_vs_engine(clients=16, max_tokens=32 if args.quick else 64, requests=32 if args.quick else 96,
                               rounds=1 if args.quick else 3)
    if "load" in only:
        bench_load(clients=16 if args.quick else 64, duration_s=5 if args.quick else 60, max_tokens=32,
                   soak_minutes=10 if args.soak else 0)


if __name__ == "__main__":
    main()
