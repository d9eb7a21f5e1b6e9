"""Three small simulators from chapter 07, to run and plot in a notebook.

1. **Batching** (:func:`simulate_batching`): static batches wait for their longest request;
   continuous (in-flight) batching refills a slot as soon as its request ends.
2. **KV allocation** (:func:`paged_kv_usage`, :func:`simulate_kv_allocation`): reserving a
   contiguous max-context slab per request wastes most of it; paging in fixed blocks (vLLM's
   PagedAttention) wastes less than one block per request, so more requests fit.
3. **Speculative decoding** (:func:`expected_tokens_per_pass`, :func:`speculative_speedup`,
   :func:`simulate_speculative`): a cheap draft proposes γ tokens, the target verifies them in
   one pass and always contributes one token of its own.

Time is counted in decode steps (one token per active request per step); memory in tokens or blocks.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from numbers import Real

import numpy as np

from llmlab.arguments import int_at_least

__all__ = [
    "BatchingResult",
    "simulate_batching",
    "random_requests",
    "paged_kv_usage",
    "KVAllocationResult",
    "simulate_kv_allocation",
    "vllm_block_bytes",
    "vllm_num_blocks",
    "expected_tokens_per_pass",
    "speculative_speedup",
    "optimal_draft_length",
    "simulate_speculative",
]


_int = int_at_least


def _int_list(values, name, minimum=1) -> list[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a list of ints")
    out = [_int(v, f"{name}[{i}]", minimum) for i, v in enumerate(values)]
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


# -- 1. batching ----------------------------------------------------------------------------


@dataclass
class BatchingResult:
    """Outcome of :func:`simulate_batching`. ``timeline[t]`` lists the request ids decoding at step t
    (``None`` for an idle slot), which is what a Gantt chart needs."""

    mode: str
    slots: int
    steps: int
    useful_slot_steps: int
    start: list[int]
    finish: list[int]
    arrival: list[int]
    timeline: list[list[int | None]] = field(repr=False)

    @property
    def utilisation(self) -> float:
        """Fraction of slot-steps that produced a token: ``Σ lengths / (steps · slots)``."""
        return self.useful_slot_steps / (self.steps * self.slots) if self.steps else 0.0

    @property
    def latencies(self) -> list[int]:
        """Steps from arrival to the last token, per request."""
        return [f - a for f, a in zip(self.finish, self.arrival)]

    @property
    def throughput(self) -> float:
        """Tokens per step over the whole run."""
        return self.useful_slot_steps / self.steps if self.steps else 0.0


def simulate_batching(lengths, slots: int, mode: str = "continuous", arrivals=None) -> BatchingResult:
    """Decode requests that need ``lengths[i]`` tokens each on a server with ``slots`` slots.

    ``mode="static"``: a batch takes up to ``slots`` waiting requests (first come, first served)
    and runs until its longest request ends; finished slots sit idle. ``mode="continuous"``: a
    free slot takes the next waiting request at the next step. ``arrivals[i]`` (steps, default
    all 0) is when request i can start.

    Chapter example: lengths [8, 2, 2, 2], 2 slots → static 10 steps, utilisation 0.70;
    continuous 8 steps, 0.875.
    """
    lengths = _int_list(lengths, "lengths")
    slots = _int(slots, "slots")
    if mode not in ("static", "continuous"):
        raise ValueError(f"mode must be 'static' or 'continuous', got {mode!r}")
    n = len(lengths)
    arrival = [0] * n if arrivals is None else _int_list(arrivals, "arrivals", minimum=0)
    if len(arrival) != n:
        raise ValueError(f"arrivals has {len(arrival)} entries for {n} lengths")
    order = sorted(range(n), key=lambda i: (arrival[i], i))  # first come, first served
    waiting = deque(order)
    start, finish = [-1] * n, [-1] * n
    remaining = list(lengths)
    active: list[int | None] = [None] * slots
    timeline: list[list[int | None]] = []
    t = 0
    while waiting or any(a is not None for a in active):
        batch_empty = all(a is None for a in active)
        if mode == "continuous" or batch_empty:
            for s in range(slots):
                if active[s] is None and waiting and arrival[waiting[0]] <= t:
                    i = waiting.popleft()
                    active[s], start[i] = i, t
        if all(a is None for a in active):  # nothing has arrived yet: idle step
            timeline.append([None] * slots)
            t += 1
            continue
        timeline.append([i if i is not None and remaining[i] > 0 else None for i in active])
        for s, i in enumerate(active):
            if i is not None and remaining[i] > 0:
                remaining[i] -= 1
                if remaining[i] == 0:
                    finish[i] = t + 1
                    if mode == "continuous":
                        active[s] = None
        t += 1
        if mode == "static" and all(remaining[i] == 0 for i in active if i is not None):
            active = [None] * slots  # the whole batch leaves together
    return BatchingResult(mode, slots, t, sum(lengths), start, finish, arrival, timeline)


def random_requests(n: int, mean_length: float = 128.0, rate: float | None = None,
                    seed: int = 0) -> tuple[list[int], list[int]]:
    """``n`` request lengths (geometric, mean ``mean_length`` tokens) and arrival steps (Poisson
    with ``rate`` requests per step; all at 0 if ``rate`` is None), reproducible from ``seed``."""
    n = _int(n, "n")
    if not isinstance(mean_length, Real) or mean_length < 1:
        raise ValueError(f"mean_length must be >= 1, got {mean_length!r}")
    rng = np.random.default_rng(seed)
    lengths = rng.geometric(1.0 / mean_length, size=n).astype(int).tolist()
    if rate is None:
        return lengths, [0] * n
    if not isinstance(rate, Real) or rate <= 0:
        raise ValueError(f"rate must be > 0 requests per step, got {rate!r}")
    arrivals = np.floor(np.cumsum(rng.exponential(1.0 / rate, size=n))).astype(int).tolist()
    return lengths, arrivals


# -- 2. KV-cache allocation ----------------------------------------------------------------


def paged_kv_usage(seq_lens, block_size: int = 16, max_ctx: int = 4096) -> dict:
    """KV slots (tokens) used and reserved by contiguous vs paged allocation, at one moment.

    Contiguous reserves ``max_ctx`` per sequence; paged reserves ``ceil(len / block_size)``
    blocks, so it wastes less than one block per sequence. [100, 37, 250] with blocks of 16 and
    max_ctx 4096: used 387; contiguous reserves 12,288 (96.85 % wasted); paged 416 (29 wasted).
    """
    seq_lens = _int_list(seq_lens, "seq_lens", minimum=0)
    block_size, max_ctx = _int(block_size, "block_size"), _int(max_ctx, "max_ctx")
    if max(seq_lens) > max_ctx:
        raise ValueError(f"a sequence of {max(seq_lens)} tokens exceeds max_ctx={max_ctx}")
    used = sum(seq_lens)
    blocks = [math.ceil(s / block_size) for s in seq_lens]
    contiguous = max_ctx * len(seq_lens)
    paged = block_size * sum(blocks)
    return {
        "used": used,
        "contiguous_reserved": contiguous,
        "paged_reserved": paged,
        "paged_blocks": sum(blocks),
        "contiguous_waste": contiguous - used,
        "paged_waste": paged - used,
        "contiguous_waste_frac": (contiguous - used) / contiguous,
        "paged_waste_frac": (paged - used) / paged if paged else 0.0,
    }


@dataclass
class KVAllocationResult:
    """Outcome of :func:`simulate_kv_allocation`; per-step series for plotting."""

    policy: str
    steps: int
    finished: int
    preemptions: int
    active: list[int] = field(repr=False)
    used_tokens: list[int] = field(repr=False)
    reserved_tokens: list[int] = field(repr=False)

    @property
    def max_concurrent(self) -> int:
        return max(self.active) if self.active else 0

    @property
    def mean_concurrent(self) -> float:
        return float(np.mean(self.active)) if self.active else 0.0

    @property
    def mean_waste_frac(self) -> float:
        """Average over steps of the reserved-but-unused fraction of reserved memory."""
        fr = [1 - u / r for u, r in zip(self.used_tokens, self.reserved_tokens) if r]
        return float(np.mean(fr)) if fr else 0.0


def simulate_kv_allocation(requests, capacity_tokens: int, policy: str = "paged", block_size: int = 16,
                           max_ctx: int = 4096, max_steps: int = 1_000_000) -> KVAllocationResult:
    """Serve ``requests`` = ``[(prompt_tokens, output_tokens), ...]`` (all waiting at step 0) with a
    KV pool of ``capacity_tokens`` tokens.

    ``policy="contiguous"``: a request is admitted only when a whole ``max_ctx`` slab is free.
    ``policy="paged"``: it needs blocks for its prompt plus the first new token; it takes a new
    block whenever it crosses a block boundary. If no block is free, the most recently admitted
    request is preempted (its blocks freed, its progress recomputed later), as vLLM does.
    Each step every running request generates one token.
    """
    if policy not in ("paged", "contiguous"):
        raise ValueError(f"policy must be 'paged' or 'contiguous', got {policy!r}")
    capacity_tokens, block_size, max_ctx = (_int(capacity_tokens, "capacity_tokens"),
                                            _int(block_size, "block_size"), _int(max_ctx, "max_ctx"))
    reqs = []
    for i, r in enumerate(requests):
        if not isinstance(r, (tuple, list)) or len(r) != 2:
            raise ValueError(f"requests[{i}] must be a (prompt_tokens, output_tokens) pair, got {r!r}")
        p, o = _int(r[0], f"requests[{i}][0]", 0), _int(r[1], f"requests[{i}][1]")
        if p + o > max_ctx:
            raise ValueError(f"requests[{i}] needs {p + o} tokens > max_ctx={max_ctx}")
        reqs.append((p, o))
    if not reqs:
        raise ValueError("requests must not be empty")
    slab = max_ctx if policy == "contiguous" else block_size
    total_units = capacity_tokens // slab  # slabs or blocks in the pool
    if policy == "contiguous" and total_units == 0:
        raise ValueError(f"capacity_tokens={capacity_tokens} cannot hold one max_ctx={max_ctx} slab")

    def units_for(tokens):
        return 1 if policy == "contiguous" else math.ceil(tokens / block_size)

    too_big = [i for i, (p, o) in enumerate(reqs) if units_for(p + o) > total_units]
    if too_big:
        raise ValueError(f"requests {too_big[:5]} alone need more than capacity_tokens={capacity_tokens}")
    waiting = deque(range(len(reqs)))
    running: list[int] = []  # admission order
    length = {}  # tokens in cache per running request
    held = {}  # units (slabs or blocks) held per running request
    done = preempted = 0
    free = total_units
    act, used, reserved = [], [], []
    step = 0
    while (waiting or running) and step < max_steps:
        # admit first come, first served while memory allows
        while waiting:
            i = waiting[0]
            need = units_for(reqs[i][0] + 1)
            if need > free:
                break
            waiting.popleft()
            running.append(i)
            length[i], held[i] = reqs[i][0], need
            free -= need
        if not running:
            raise ValueError("a single request does not fit in the pool; increase capacity_tokens")
        # every running request writes one more token; paged ones may need a new block
        for i in list(running):
            if i not in length:
                continue  # preempted earlier in this step
            new_len = length[i] + 1
            need = units_for(new_len) - held[i]
            while need > free:
                victim = running[-1]
                running.pop()
                free += held.pop(victim)
                del length[victim]
                waiting.appendleft(victim)
                preempted += 1
                if victim == i:
                    break
            if i not in length:
                continue
            free -= need
            held[i] += need
            length[i] = new_len
        # finished requests leave
        for i in list(running):
            if length[i] - reqs[i][0] >= reqs[i][1]:
                running.remove(i)
                free += held.pop(i)
                del length[i]
                done += 1
        act.append(len(running))
        used.append(sum(length.values()))
        reserved.append((total_units - free) * slab)
        step += 1
    return KVAllocationResult(policy, step, done, preempted, act, used, reserved)


def vllm_block_bytes(n_layers: int, n_kv_heads: int, head_dim: int, block_size: int = 16,
                     bytes_per_value: float = 2) -> int:
    """Bytes of one vLLM KV block: ``dtype_size · layers · 2 · block_size · kv_heads · head_size``
    (``CacheEngine.get_cache_block_size``, serving-facts §4e). Llama-2-7B fp16, 16 tokens: 8 MiB."""
    total = bytes_per_value * _int(n_layers, "n_layers") * 2 * _int(block_size, "block_size") \
        * _int(n_kv_heads, "n_kv_heads") * _int(head_dim, "head_dim")
    return int(round(total))


def vllm_num_blocks(total_gpu_memory_bytes: float, peak_memory_bytes: float, block_bytes: int,
                    gpu_memory_utilization: float = 0.9) -> int:
    """``int((total · utilization - peak) // block_bytes)``: vLLM's KV pool after profiling
    (``determine_num_available_blocks``; ``peak`` = weights + activations of a dummy pass)."""
    if not 0 < gpu_memory_utilization <= 1:
        raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization!r}")
    if block_bytes <= 0 or total_gpu_memory_bytes <= 0 or peak_memory_bytes < 0:
        raise ValueError("memory sizes must be positive (peak >= 0)")
    return max(0, int((total_gpu_memory_bytes * gpu_memory_utilization - peak_memory_bytes) // block_bytes))


# -- 3. speculative decoding ---------------------------------------------------------------


def _alpha_gamma(alpha, gamma):
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha (acceptance rate) must be in [0, 1], got {alpha!r}")
    return float(alpha), _int(gamma, "gamma", minimum=0)


def expected_tokens_per_pass(alpha: float, gamma: int) -> float:
    """Expected tokens per target pass with acceptance rate ``alpha`` and ``gamma`` drafted tokens:
    ``(1 - α^(γ+1)) / (1 - α)`` (Leviathan et al. 2023). Counts the target's own token, so it is
    1 when nothing is accepted and γ+1 when everything is. α=0.75, γ=4 → 3.0508."""
    alpha, gamma = _alpha_gamma(alpha, gamma)
    if alpha == 1.0:
        return float(gamma + 1)
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def speculative_speedup(alpha: float, gamma: int, cost_ratio: float) -> float:
    """Wall-time speed-up over plain decoding once the draft is paid for: ``E / (γ·c + 1)``,
    ``c`` = cost of one draft step relative to one target step. α=0.75, γ=4, c=0.05 → 2.54x."""
    if isinstance(cost_ratio, bool) or not isinstance(cost_ratio, Real) or cost_ratio < 0:
        raise ValueError(f"cost_ratio must be >= 0, got {cost_ratio!r}")
    return expected_tokens_per_pass(alpha, gamma) / (gamma * cost_ratio + 1.0)


def optimal_draft_length(alpha: float, cost_ratio: float, max_gamma: int = 16) -> int:
    """The draft length γ in ``0..max_gamma`` with the largest :func:`speculative_speedup`."""
    return max(range(_int(max_gamma, "max_gamma", 0) + 1), key=lambda g: speculative_speedup(alpha, g, cost_ratio))


def simulate_speculative(alpha: float, gamma: int, n_passes: int = 10_000, seed: int = 0) -> dict:
    """Monte Carlo of :func:`expected_tokens_per_pass`: each drafted token is accepted with
    probability ``alpha`` until the first rejection; the target then adds one token. Returns the
    mean tokens per pass and the histogram ``counts[k]`` of passes yielding k tokens."""
    alpha, gamma = _alpha_gamma(alpha, gamma)
    n_passes = _int(n_passes, "n_passes")
    rng = np.random.default_rng(seed)
    accepted = rng.random((n_passes, gamma)) < alpha
    # accepted prefix length = index of the first rejection (gamma if none)
    first_reject = np.where(accepted.all(axis=1), gamma, np.argmin(accepted, axis=1)) if gamma else np.zeros(n_passes, int)
    tokens = first_reject + 1
    return {"mean_tokens_per_pass": float(tokens.mean()),
            "counts": np.bincount(tokens, minlength=gamma + 2).tolist(),
            "expected": expected_tokens_per_pass(alpha, gamma)}
