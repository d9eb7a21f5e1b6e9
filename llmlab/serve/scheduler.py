"""The scheduler: which requests go through the model at each step, and with which KV blocks.

Continuous batching (chapter 07): the batch is rebuilt at *every* step. A request that finishes
leaves at once and a waiting one takes its place in the next step, instead of the whole batch
waiting for its longest member (static batching, ``policy="static"``, kept for comparison).

One step, in order:

1. Running requests, oldest first; the ones decoding (one token each) before the ones still
   reading their prompt. Each gets KV slots for what it feeds this step (plus ``lookahead`` slots
   for speculative decoding). When the blocks run out, the *newest* running request is preempted:
   its blocks are taken back and it returns to the front of the queue, to be recomputed later
   (preemption by recompute, vLLM's default; its tokens so far are kept, so its output does not
   change, and the prefix cache often makes the recompute cheap).
2. Waiting requests, first come first served, while there is room: a free sequence slot
   (``max_num_seqs``), token budget (``max_num_batched_tokens``) and blocks (keeping a small
   ``watermark`` free so that the running requests can still grow). A long prompt is read in
   chunks of at most the remaining budget (chunked prefill), so a 200-token prompt does not stall
   31 requests that are decoding.

The scheduler only does bookkeeping on ``Request`` objects and the ``BlockAllocator``; running the
model is the engine's job.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .blocks import BlockAllocator, OutOfBlocks, blocks_needed
from .request import Request, RequestState

__all__ = ["ScheduledSegment", "Scheduler", "SchedulerOutput", "POLICIES"]

POLICIES = ("continuous", "static")


@dataclass
class ScheduledSegment:
    """``request.token_ids[start:start + n_tokens]`` go through the model in this step."""

    request: Request
    start: int
    n_tokens: int

    @property
    def end(self) -> int:
        return self.start + self.n_tokens

    @property
    def samples(self) -> bool:
        """True if this reaches the request's last token: its logits choose the next token."""
        return self.end == self.request.num_tokens


@dataclass
class SchedulerOutput:
    segments: list[ScheduledSegment] = field(default_factory=list)
    preempted: list[Request] = field(default_factory=list)
    copies: list[tuple[int, int]] = field(default_factory=list)  # copy-on-write (src, dst), before the step
    failed: list[Request] = field(default_factory=list)  # could never fit in the KV cache


class Scheduler:
    """Continuous (or static) batching over a ``BlockAllocator``.

    ``lookahead``: extra KV slots a decoding request gets each step (the draft tokens of
    speculative decoding). ``watermark``: fraction of the blocks kept free when admitting.
    """

    def __init__(self, allocator: BlockAllocator, *, max_num_seqs: int = 32, max_num_batched_tokens: int = 512,
                 policy: str = "continuous", lookahead: int = 0, watermark: float = 0.01):
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        for name, value, low in (("max_num_seqs", max_num_seqs, 1), ("lookahead", lookahead, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        if not isinstance(max_num_batched_tokens, int) or max_num_batched_tokens < max_num_seqs * (1 + lookahead):
            raise ValueError(f"max_num_batched_tokens must be an int >= max_num_seqs * (1 + lookahead) = "
                             f"{max_num_seqs * (1 + lookahead)}, got {max_num_batched_tokens!r}")
        self.allocator = allocator
        self.block_size = allocator.block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.policy = policy
        self.lookahead = lookahead
        self.watermark_blocks = int(watermark * allocator.num_blocks)
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.num_preemptions = 0
        self.prefix_hit_tokens = 0

    # -- queue -------------------------------------------------------------------------------------

    def add(self, request: Request) -> None:
        if request.state is not RequestState.WAITING:
            raise ValueError(f"only a new request can be added, got {request!r}")
        self.waiting.append(request)

    @property
    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def finish(self, request: Request, state: RequestState = RequestState.FINISHED) -> None:
        """Move a request to a final state (finished, cancelled, failed) and give its blocks back."""
        if request.is_done:
            return
        if request.state is RequestState.RUNNING:
            self.running.remove(request)
        elif request in self.waiting:
            self.waiting.remove(request)
        self._release(request)
        request.transition(state)

    def _release(self, request: Request) -> None:
        self.allocator.free_all(request.block_table)
        request.block_table = []
        request.num_computed = request.num_registered_blocks = request.draft_computed = 0

    def _preempt(self, request: Request, output: SchedulerOutput) -> None:
        self.running.remove(request)
        dropped = set(request.block_table)
        output.copies = [(src, dst) for src, dst in output.copies if dst not in dropped]
        self._release(request)
        request.transition(RequestState.PREEMPTED)
        request.metrics.num_preemptions += 1
        self.num_preemptions += 1
        self.waiting.appendleft(request)  # first in line to come back
        output.preempted.append(request)

    # -- blocks of one request ---------------------------------------------------------------------

    def _reserve(self, request: Request, n_slots: int, output: SchedulerOutput) -> bool:
        """Give ``request`` blocks for its first ``n_slots`` positions; the block that receives the
        first new token is made writable (copy-on-write). False if the blocks ran out."""
        table = request.block_table
        first = request.num_computed // self.block_size
        try:
            if first < len(table):
                block, shared = self.allocator.ensure_writable(table[first])
                if shared is not None:
                    table[first] = block
                    output.copies.append((shared, block))
            while len(table) < blocks_needed(n_slots, self.block_size):
                table.append(self.allocator.allocate())
        except OutOfBlocks:
            return False
        return True

    def register_computed(self, request: Request) -> None:
        """Offer the request's newly completed full blocks to the prefix cache."""
        bs = self.block_size
        full = request.num_computed // bs
        for i in range(request.num_registered_blocks, full):
            previous = request.block_table[i - 1] if i else None
            self.allocator.register(request.block_table[i], previous, request.token_ids[i * bs:(i + 1) * bs])
        request.num_registered_blocks = max(request.num_registered_blocks, full)

    def trim(self, request: Request, n_slots: int) -> None:
        """Give back the blocks past the first ``n_slots`` positions (rejected draft tokens)."""
        keep = blocks_needed(n_slots, self.block_size)
        if len(request.block_table) > keep:
            self.allocator.free_all(request.block_table[keep:])
            del request.block_table[keep:]

    # -- one step ----------------------------------------------------------------------------------

    def schedule(self) -> SchedulerOutput:
        output = SchedulerOutput()
        budget = self.max_num_batched_tokens
        decoding = [r for r in self.running if r.num_tokens - r.num_computed == 1]
        prefilling = [r for r in self.running if r.num_tokens - r.num_computed > 1]
        scheduled: set[int] = set()
        for request in decoding + prefilling:
            if request.state is not RequestState.RUNNING or budget == 0:
                continue
            n = min(request.num_tokens - request.num_computed, budget)
            lookahead = self.lookahead_for(request) if n == 1 else 0
            while not self._reserve(request, request.num_computed + n + lookahead, output):
                victim = next(r for r in reversed(self.running) if id(r) not in scheduled)
                self._preempt(victim, output)
                if victim is request:
                    break
            if request.state is RequestState.RUNNING:
                scheduled.add(id(request))
                output.segments.append(ScheduledSegment(request, request.num_computed, n))
                budget -= n
        if output.preempted or (self.policy == "static" and self.running):
            return output  # no room to spare, or a static batch still running: nobody joins
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            request = self.waiting[0]
            segment = self._admit(request, budget, output)
            if segment is None:
                break
            self.waiting.popleft()
            if request.state is RequestState.FAILED:
                output.failed.append(request)
                continue
            output.segments.append(segment)
            budget -= segment.n_tokens
        return output

    def lookahead_for(self, request: Request) -> int:
        """Draft slots this decoding request gets now: ``lookahead``, fewer near its max_tokens or the context."""
        if self.lookahead == 0:
            return 0
        room = min(request.params.max_tokens - len(request.output_ids), request.max_seq_len - request.num_tokens)
        return max(0, min(self.lookahead, room - 1))

    def _admit(self, request: Request, budget: int, output: SchedulerOutput) -> ScheduledSegment | None:
        """Start (or restart) ``request`` if its first chunk fits, reusing its cached prefix; else None.

        A request that could not fit even with nothing else running is marked FAILED.
        """
        bs = self.block_size
        cached = self.allocator.find_prefix(request.token_ids)
        n_cached = len(cached) * bs
        # The last token always goes through the model: its logits choose the next token.
        start = min(n_cached, request.num_tokens - 1)
        n = min(request.num_tokens - start, budget)
        revived = sum(1 for b in cached if self.allocator.refcount(b) == 0)  # cached blocks count as free
        copy = 1 if start < n_cached else 0  # the last cached block will be written: copy-on-write
        need = blocks_needed(start + n, bs) - len(cached) + copy
        available = self.allocator.num_free - revived
        if need > available - (self.watermark_blocks if self.running else 0):
            if not self.running and need > available:
                request.error = (f"needs {need} KV blocks for its first {start + n} tokens, "
                                 f"more than the {self.allocator.num_blocks} blocks of the cache")
                request.transition(RequestState.FAILED)
                return ScheduledSegment(request, start, n)
            return None
        request.block_table = [self.allocator.share(b) for b in cached]
        request.num_registered_blocks = len(cached)
        request.num_computed = start
        if not self._reserve(request, start + n, output):  # cannot happen: the room was checked
            self._release(request)
            return None
        request.metrics.prefix_cached_tokens = max(request.metrics.prefix_cached_tokens, start)
        self.prefix_hit_tokens += start
        request.transition(RequestState.RUNNING)
        self.running.append(request)
        return ScheduledSegment(request, start, n)
