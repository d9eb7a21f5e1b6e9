"""A request's life, as an explicit state, and what it records on the way (tokens, text, timings).

::

    WAITING ──schedule──▶ RUNNING ──EOS / stop / max_tokens──▶ FINISHED
       ▲                   │  │
       └─── PREEMPTED ◀────┘  └──abort──▶ CANCELLED
    (and from any live state: ──error──▶ FAILED)
            (blocks taken back; the tokens so far are recomputed when it runs again)

A request holds KV blocks only while RUNNING. Leaving RUNNING for any reason gives every block
back (``llmlab.serve.scheduler`` does it); the tests check that nothing leaks.

Timings (``time.perf_counter`` seconds) give the serving metrics of chapter 07: the *time to first
token* (TTFT: arrival until the first token exists, queueing and prefill included), the
*inter-token latencies* (the gaps between consecutive tokens) and the end-to-end latency.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from llmlab.tokenizer import StreamDecoder

from .params import SamplingParams

__all__ = ["Completion", "Request", "RequestMetrics", "RequestOutput", "RequestState", "TokenLogprob"]


class RequestState(enum.Enum):
    WAITING = "waiting"  # queued; holds no KV blocks
    RUNNING = "running"  # in the batch; holds KV blocks
    PREEMPTED = "preempted"  # was running, its blocks were taken back; waits to be recomputed
    FINISHED = "finished"  # stopped by EOS, a stop sequence or max_tokens
    CANCELLED = "cancelled"  # aborted (a client that went away)
    FAILED = "failed"  # an error while serving it (the others go on)

    @property
    def is_done(self) -> bool:
        return self in (RequestState.FINISHED, RequestState.CANCELLED, RequestState.FAILED)


_ALLOWED = {
    RequestState.WAITING: {RequestState.RUNNING, RequestState.CANCELLED, RequestState.FAILED},
    RequestState.RUNNING: {RequestState.PREEMPTED, RequestState.FINISHED, RequestState.CANCELLED,
                           RequestState.FAILED},
    RequestState.PREEMPTED: {RequestState.RUNNING, RequestState.CANCELLED, RequestState.FAILED},
    RequestState.FINISHED: set(),
    RequestState.CANCELLED: set(),
    RequestState.FAILED: set(),
}


@dataclass
class RequestMetrics:
    """Time stamps (``time.perf_counter`` seconds) and counters of one request."""

    arrival_s: float
    first_scheduled_s: float | None = None
    first_token_s: float | None = None
    finished_s: float | None = None
    token_times_s: list[float] = field(default_factory=list)  # when each output token appeared
    num_preemptions: int = 0
    prefix_cached_tokens: int = 0  # prompt tokens found in the prefix cache (not recomputed)

    @property
    def queue_s(self) -> float | None:
        """Waiting before the first step that worked on the request."""
        return None if self.first_scheduled_s is None else self.first_scheduled_s - self.arrival_s

    @property
    def ttft_s(self) -> float | None:
        """Time to first token: arrival until the first output token (queueing and prefill included)."""
        return None if self.first_token_s is None else self.first_token_s - self.arrival_s

    @property
    def itl_s(self) -> list[float]:
        """Inter-token latencies: the gap before each output token after the first."""
        t = self.token_times_s
        return [b - a for a, b in zip(t, t[1:])]

    @property
    def e2e_s(self) -> float | None:
        """End-to-end latency: arrival until the request finished."""
        return None if self.finished_s is None else self.finished_s - self.arrival_s

    @property
    def decode_tokens_per_s(self) -> float | None:
        """Output tokens per second after the first one (the speed the user sees the text grow)."""
        gaps = self.itl_s
        return len(gaps) / sum(gaps) if gaps and sum(gaps) > 0 else None


@dataclass
class Completion:
    """The result of one request (``Engine.generate`` returns one per prompt, in order)."""

    request_id: str
    prompt_token_ids: list[int]
    token_ids: list[int]
    text: str | None
    finish_reason: str | None  # "stop" | "length" | "cancelled" | "error"
    metrics: RequestMetrics
    error: str | None = None
    logprobs: list[TokenLogprob] | None = None  # one per output token, when params.logprobs is set

    @property
    def ttft_s(self) -> float | None:
        return self.metrics.ttft_s

    @property
    def itl_s(self) -> list[float]:
        return self.metrics.itl_s


@dataclass(frozen=True)
class RequestOutput:
    """What one engine step did to one request: a snapshot, safe to hand to another thread."""

    request_id: str
    new_token_ids: tuple[int, ...]
    num_output_tokens: int
    text: str  # the text safe to show so far (see ``Request.stream_text``)
    finished: bool
    finish_reason: str | None
    error: str | None
    num_prompt_tokens: int
    metrics: RequestMetrics | None = None  # set once finished
    new_logprobs: tuple[TokenLogprob, ...] = ()  # one per new token when the request asked for logprobs


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token's log-probability under the model (``log_softmax`` of its logits) and the
    ``top`` most likely alternatives at that step, as ``(token_id, logprob)`` pairs, best first."""

    token_id: int
    logprob: float
    top: tuple[tuple[int, float], ...]


class Request:
    """One prompt being served: its tokens, sampler, KV bookkeeping, state and timings.

    ``token_ids`` is the prompt followed by the output. ``num_computed`` counts the leading tokens
    whose keys and values are in the KV cache (so ``token_ids[num_computed:]`` still has to go
    through the model); ``block_table`` lists the KV blocks that hold them, in order.
    """

    def __init__(self, request_id: str, prompt_ids: list[int], params: SamplingParams, *, max_seq_len: int,
                 tokenizer: Any = None, constraint: Any = None, arrival_s: float | None = None):
        self.request_id = request_id
        self.params = params
        self.state = RequestState.WAITING
        self.finish_reason: str | None = None
        self.error: str | None = None
        self.token_ids: list[int] = list(prompt_ids)
        self.num_prompt_tokens = len(prompt_ids)
        self.max_seq_len = max_seq_len
        # KV bookkeeping (owned by the scheduler)
        self.block_table: list[int] = []
        self.num_computed = 0
        self.num_registered_blocks = 0  # leading full blocks already offered to the prefix cache
        self.draft_computed = 0  # the same, for the draft model of speculative decoding
        # Sampling: the sampler sees [1, t] ids (prompt + output) for the repetition penalty and constraints.
        self.generator = params.make_generator()
        self.constraint = constraint
        self.sampler = params.make_sampler(constraint=constraint, generator=self.generator)
        self._ids = torch.zeros(max_seq_len, dtype=torch.long)
        self._ids[: len(prompt_ids)] = torch.tensor(prompt_ids, dtype=torch.long)
        self._ids_filled = len(prompt_ids)  # _ids is written when a sampler asks for it, not per token
        # Text (when the engine has a tokenizer): decoded incrementally, special tokens not shown.
        self.tokenizer = tokenizer
        self.text = ""
        self._decoder = None if tokenizer is None else StreamDecoder(tokenizer)
        self.logprobs: list[TokenLogprob] = []
        self._holdback = max((len(s) for s in params.stop), default=1) - 1
        self.metrics = RequestMetrics(arrival_s=time.perf_counter() if arrival_s is None else arrival_s)

    # -- state ---------------------------------------------------------------------------------------

    def transition(self, new_state: RequestState) -> None:
        if new_state not in _ALLOWED[self.state]:
            raise RuntimeError(f"request {self.request_id}: {self.state.value} -> {new_state.value} is not allowed")
        self.state = new_state

    @property
    def is_done(self) -> bool:
        return self.state.is_done

    # -- tokens --------------------------------------------------------------------------------------

    @property
    def output_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens:]

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    def ids_view(self) -> torch.Tensor:
        """``[1, t]`` view of prompt + output, what ``Sampler(logits, input_ids)`` receives."""
        n = len(self.token_ids)
        if self._ids_filled < n:
            # Greedy requests never look at it: copying each token into the tensor as it came
            # cost more per step than the argmax that chose it.
            self._ids[self._ids_filled:n] = torch.tensor(self.token_ids[self._ids_filled:n], dtype=torch.long)
            self._ids_filled = n
        return self._ids[None, :n]

    def ids_with(self, extra: list[int]) -> torch.Tensor:
        """``[1, t + len(extra)]``: prompt + output + ``extra`` (draft tokens not accepted yet)."""
        n = self.ids_view().shape[1]
        if extra:
            self._ids[n:n + len(extra)] = torch.tensor(extra, dtype=torch.long)
        return self._ids[None, :n + len(extra)]

    def append_token(self, token_id: int, now: float) -> bool:
        """Record one new output token; return True if it ends the request (``finish_reason`` set)."""
        tokens = self.token_ids
        tokens.append(token_id)
        metrics = self.metrics
        if metrics.first_token_s is None:
            metrics.first_token_s = now
        metrics.token_times_s.append(now)
        params = self.params
        stop_text = self._extend_text(token_id)
        n_output = len(tokens) - self.num_prompt_tokens
        if token_id in params.stop_token_ids or stop_text or any(
                tokens[-len(s):] == s for s in params.stop_sequences if len(s) <= n_output):
            self.finish_reason = "stop"
        elif n_output >= params.max_tokens or len(tokens) >= self.max_seq_len:
            self.finish_reason = "length"
        return self.finish_reason is not None

    def _extend_text(self, token_id: int) -> bool:
        """Add the token's characters to ``text``; True if a ``stop`` string appeared (text cut before it)."""
        if self._decoder is None:
            return False
        before = len(self.text)
        self.text += self._decoder.push(token_id)
        for stop in self.params.stop:
            at = self.text.find(stop, max(0, before - len(stop) + 1))
            if at >= 0:
                self.text = self.text[:at]
                return True
        return False

    def stream_text(self) -> str:
        """The text that is safe to show now: a possible beginning of a ``stop`` string is held back."""
        if self.is_done or self.finish_reason is not None or self._holdback == 0:
            return self.text
        return self.text[: max(0, len(self.text) - self._holdback)]

    def finish_text(self) -> None:
        """Flush an unfinished UTF-8 character at the end (shown as U+FFFD), unless the text was cut by a stop."""
        if self.tokenizer is not None and self.finish_reason != "stop":
            self.text += self._decoder.flush()

    def record_logprobs(self, token_id: int, logits: torch.Tensor) -> None:
        """Keep the log-probability of the token just chosen and the ``params.logprobs`` best alternatives."""
        logprobs = torch.log_softmax(logits.reshape(-1).float(), dim=-1)
        k = self.params.logprobs
        top = ()
        if k:
            values, ids = torch.topk(logprobs, k)
            top = tuple(zip(ids.tolist(), values.tolist()))
        self.logprobs.append(TokenLogprob(token_id, float(logprobs[token_id]), top))

    def output(self, new_token_ids: list[int]) -> RequestOutput:
        done = self.is_done
        return RequestOutput(
            request_id=self.request_id, new_token_ids=tuple(new_token_ids), num_output_tokens=len(self.output_ids),
            text=self.stream_text(), finished=done, finish_reason=self.finish_reason, error=self.error,
            num_prompt_tokens=self.num_prompt_tokens, metrics=self.metrics if done else None,
            new_logprobs=tuple(self.logprobs[len(self.logprobs) - len(new_token_ids):]) if self.logprobs else (),
        )

    def completion(self) -> Completion:
        return Completion(
            request_id=self.request_id, prompt_token_ids=self.token_ids[: self.num_prompt_tokens],
            token_ids=self.output_ids, text=self.text if self.tokenizer is not None else None,
            finish_reason=self.finish_reason, metrics=self.metrics, error=self.error,
            logprobs=list(self.logprobs) if self.params.logprobs is not None else None,
        )

    def __repr__(self) -> str:
        return (f"Request({self.request_id!r}, state={self.state.value}, prompt={self.num_prompt_tokens}, "
                f"output={len(self.output_ids)}, computed={self.num_computed}, blocks={len(self.block_table)})")
