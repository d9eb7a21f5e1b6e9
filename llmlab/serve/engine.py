"""The engine: requests in, tokens out, one step at a time.

``Engine.step()`` is the whole serving loop of chapter 07 in one function:

1. take the requests that arrived and the cancellations (thread-safe: a server adds them from
   another thread);
2. ask the ``Scheduler`` who runs this step (continuous batching, KV blocks, preemption);
3. run the model once over every scheduled token (``ModelRunner``; with a draft model,
   ``SpeculativeDecoder`` proposes tokens first and the same pass verifies them);
4. sample each request's next token with its own ``Sampler``, check its stops, and retire the
   requests that finished, giving their blocks back.

``Engine.generate(prompts, params)`` runs steps until every prompt is done (offline use, lab 08);
``LLM("es-chat")`` loads a shipped model and its tokenizer into an engine. The server
(``llmlab.serve.server``) drives ``step`` from a background thread, or from a child process
(``llmlab.serve.engine_process``).
"""

from __future__ import annotations

import itertools
import logging
import queue
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from llmlab.model import Transformer
from llmlab.sampling import Sampler

from .blocks import BlockAllocator, blocks_needed
from .paged_attention import PagedKVCache, Segment
from .params import SamplingParams
from .processors import RequestProcessor
from .request import Completion, Request, RequestOutput, RequestState
from .runner import ModelRunner
from .scheduler import POLICIES, Scheduler

__all__ = ["Engine", "KVStats", "LLM"]

log = logging.getLogger("llmlab.serve")


@dataclass(frozen=True)
class KVStats:
    """The paged KV cache right now (blocks, token slots, bytes) and since the engine started."""

    num_blocks: int
    block_size: int
    bytes_per_block: int
    used_blocks: int
    free_blocks: int
    cached_blocks: int  # free, but holding a reusable prefix
    shared_blocks: int  # in more than one block table
    running_requests: int
    waiting_requests: int
    tokens_cached: int  # sum over running requests of the tokens whose K/V are stored
    contiguous_slots: int  # slots a contiguous cache would reserve: max_seq_len per running request
    prefix_hit_tokens: int  # prompt tokens reused from the prefix cache, since start
    copies_on_write: int
    preemptions: int

    @property
    def used_slots(self) -> int:
        return self.used_blocks * self.block_size

    @property
    def usage(self) -> float:
        """Fraction of the blocks in use."""
        return self.used_blocks / self.num_blocks

    @property
    def wasted_slots(self) -> int:
        """Reserved but empty slots (the unfilled end of each sequence's last block); can be < 0 with sharing."""
        return self.used_slots - self.tokens_cached

    @property
    def contiguous_wasted_slots(self) -> int:
        """What reserving ``max_seq_len`` slots per running sequence would waste at this moment."""
        return self.contiguous_slots - self.tokens_cached


class Engine:
    """Serve many requests at once with one ``llmlab.model.Transformer``.

    - ``tokenizer``: optional; needed to pass prompts as text and to get text back (and ``stop`` strings).
    - ``block_size``, ``num_blocks``: the paged KV cache; by default room for ``max_num_seqs``
      sequences of ``max_seq_len`` tokens (``kv_memory_bytes`` sets it by memory instead).
    - ``max_num_seqs``: most requests in the running batch; ``max_num_batched_tokens``: most tokens
      per step (prompt chunks included).
    - ``policy``: ``"continuous"`` (default) or ``"static"`` batching; ``prefix_caching``.
    - ``draft_model``, ``num_speculative_tokens``: speculative decoding (see ``llmlab.serve.speculative``);
      prefix caching is then off (a cached block would lack the draft model's keys and values).

    ``step``, ``add_request`` and ``abort`` may be called from different threads (the server does);
    ``generate`` is for a notebook or a script that owns the engine.
    """

    def __init__(self, model: Transformer, tokenizer: Any = None, *, block_size: int = 16,
                 num_blocks: int | None = None, kv_memory_bytes: int | None = None, max_num_seqs: int = 32,
                 max_num_batched_tokens: int | None = None, policy: str = "continuous", prefix_caching: bool = True,
                 draft_model: Transformer | None = None, num_speculative_tokens: int = 4):
        if not isinstance(model, Transformer):
            raise TypeError(f"model must be an llmlab Transformer, got {type(model).__name__}")
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
            raise ValueError(f"block_size must be an int >= 1, got {block_size!r}")
        self.model = model
        self.tokenizer = tokenizer
        self.max_seq_len = model.config.max_seq_len
        gamma = num_speculative_tokens if draft_model is not None else 0
        if draft_model is not None:
            prefix_caching = False  # cached blocks would lack the draft model's keys and values
        per_block = PagedKVCache.block_bytes(model, block_size)
        if draft_model is not None:
            per_block += PagedKVCache.block_bytes(draft_model, block_size)
        if num_blocks is None:
            if kv_memory_bytes is not None:
                num_blocks = int(kv_memory_bytes // per_block)
            else:
                num_blocks = max_num_seqs * blocks_needed(self.max_seq_len + gamma, block_size)
        # One sequence of full length must always fit, or it could never finish.
        smallest = blocks_needed(self.max_seq_len + gamma, block_size)
        if not isinstance(num_blocks, int) or num_blocks < smallest:
            raise ValueError(f"the KV cache needs at least {smallest} blocks of {block_size} tokens "
                             f"(one sequence of max_seq_len={self.max_seq_len}), got num_blocks={num_blocks!r}")
        self.allocator = BlockAllocator(num_blocks, block_size, prefix_caching=prefix_caching)
        if max_num_batched_tokens is None:
            max_num_batched_tokens = max(512, max_num_seqs * (1 + gamma))
        self.scheduler = Scheduler(self.allocator, max_num_seqs=max_num_seqs,
                                   max_num_batched_tokens=max_num_batched_tokens, policy=policy, lookahead=gamma)
        self.runner = ModelRunner(model, num_blocks, block_size)
        self.bytes_per_block = per_block
        self.speculative = None
        if draft_model is not None:
            from .speculative import SpeculativeDecoder  # one idea per module

            self.speculative = SpeculativeDecoder(draft_model, num_blocks, block_size, num_speculative_tokens,
                                                  target_config=model.config)
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._requests: dict[str, Request] = {}
        self._grammar_engine = None
        self._ids = itertools.count()
        self.num_steps = 0
        self.prompt_tokens_total = 0  # tokens that went through the model as prompt (recomputes included)
        self.generation_tokens_total = 0

    # -- requests in -------------------------------------------------------------------------------

    def make_request(self, prompt: str | Sequence[int], params: SamplingParams | None = None, *,
                     request_id: str | None = None) -> Request:
        """Check ``prompt`` and ``params`` and build the ``Request`` (ValueError if they cannot be served)."""
        params = SamplingParams() if params is None else params
        if not isinstance(params, SamplingParams):
            raise TypeError(f"params must be a SamplingParams, got {type(params).__name__}")
        prompt_ids = self._encode(prompt)
        vocab = self.model.config.vocab_size
        if any(t >= vocab for t in prompt_ids):
            raise ValueError(f"prompt token ids must be < vocab_size={vocab}")
        if len(prompt_ids) + params.max_tokens > self.max_seq_len:
            raise ValueError(f"prompt ({len(prompt_ids)} tokens) + max_tokens ({params.max_tokens}) exceeds the "
                             f"model's context of {self.max_seq_len} tokens")
        if self.speculative is not None and params.logprobs is not None:
            raise ValueError("logprobs are not reported with speculative decoding (accepted draft tokens are "
                             "not sampled one by one)")
        if params.logit_bias and max(params.logit_bias) >= vocab:
            raise ValueError(f"logit_bias token ids must be < vocab_size={vocab}")
        grammar = self._grammar(params, len(prompt_ids)) if params.json_schema is not None else None
        processor = RequestProcessor(len(prompt_ids), logit_bias=params.logit_bias,
                                     presence_penalty=params.presence_penalty,
                                     frequency_penalty=params.frequency_penalty, min_tokens=params.min_tokens,
                                     stop_token_ids=params.stop_token_ids, grammar=grammar)
        constraint = None if processor.is_noop else processor
        request_id = f"req-{next(self._ids)}" if request_id is None else str(request_id)
        return Request(request_id, prompt_ids, params, max_seq_len=self.max_seq_len, tokenizer=self.tokenizer,
                       constraint=constraint)

    def add_request(self, prompt: str | Sequence[int] | Request, params: SamplingParams | None = None, *,
                    request_id: str | None = None) -> Request:
        """Queue a prompt (text, token ids, or a ``Request`` from ``make_request``); thread-safe."""
        request = prompt if isinstance(prompt, Request) else self.make_request(prompt, params, request_id=request_id)
        self._inbox.put(("add", request))
        return request

    def abort(self, request_id: str) -> None:
        """Cancel a request (its blocks are freed at the next step); thread-safe."""
        self._inbox.put(("abort", request_id))

    def _encode(self, prompt: str | Sequence[int]) -> list[int]:
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise ValueError("a text prompt needs an engine with a tokenizer; pass token ids instead")
            ids = self.tokenizer.encode(prompt)
            if getattr(self.tokenizer, "bos_id", None) is not None:
                ids = [self.tokenizer.bos_id] + ids
            return ids
        if isinstance(prompt, torch.Tensor):
            prompt = prompt.reshape(-1).tolist()
        if not isinstance(prompt, Sequence) or not all(
                isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in prompt):
            raise TypeError("prompt must be a string or a sequence of token ids (ints >= 0)")
        if len(prompt) == 0:
            raise ValueError("prompt must contain at least one token")
        return list(prompt)

    def _grammar(self, params: SamplingParams, prompt_length: int):
        """The request's grammar constraint (``llmlab.serve.grammar``); ValueError if the schema is refused."""
        if self.tokenizer is None:
            raise ValueError("json_schema needs an engine with a tokenizer (the grammar works on the tokens' bytes)")
        tok = self.tokenizer
        stops = list(params.stop_token_ids) or ([tok.eos_id] if tok.eos_id is not None else [])
        if not stops:
            raise ValueError("json_schema needs stop_token_ids (the token that ends the output)")
        if self._grammar_engine is None:
            from .grammar import GrammarEngine  # llguidance: only when a request asks for a schema

            self._grammar_engine = GrammarEngine(tok)
        # Like the OpenAI API, a max_tokens too small for the output cuts it (finish_reason "length").
        return self._grammar_engine.constraint(params.json_schema, stops, prompt_length)

    # -- one step ----------------------------------------------------------------------------------

    def has_unfinished(self) -> bool:
        return self.scheduler.has_work or not self._inbox.empty()

    def _take_inbox(self, outputs: list[RequestOutput]) -> None:
        while True:
            try:
                kind, item = self._inbox.get_nowait()
            except queue.Empty:
                return
            if kind == "add":
                if item.request_id in self._requests:
                    item.error = f"duplicate request id {item.request_id!r}"
                    item.transition(RequestState.FAILED)
                    outputs.append(item.output([]))
                    continue
                self._requests[item.request_id] = item
                self.scheduler.add(item)
            else:
                request = self._requests.get(item)
                if request is not None and not request.is_done:
                    request.finish_reason = "cancelled"
                    self._retire(request, RequestState.CANCELLED, outputs)

    def _retire(self, request: Request, state: RequestState, outputs: list[RequestOutput],
                new_tokens: Sequence[int] = ()) -> None:
        self.scheduler.finish(request, state)
        request.metrics.finished_s = time.perf_counter()
        request.finish_text()
        self._requests.pop(request.request_id, None)
        outputs.append(request.output(list(new_tokens)))

    def step(self) -> list[RequestOutput]:
        """Run one step; return what happened to each request it touched."""
        outputs: list[RequestOutput] = []
        self._take_inbox(outputs)
        plan = self.scheduler.schedule()
        for request in plan.failed:
            request.finish_reason = "error"
            self._retire(request, RequestState.FAILED, outputs)
        if not plan.segments:
            return outputs
        now = time.perf_counter()
        for seg in plan.segments:
            if seg.request.metrics.first_scheduled_s is None:
                seg.request.metrics.first_scheduled_s = now
        try:
            self.runner.copy_blocks(plan.copies)
            if self.speculative is not None:
                self.speculative.runner.copy_blocks(plan.copies)
                results = self.speculative.step(self, plan.segments)
            else:
                results = self._plain_step(plan.segments)
        except Exception as err:  # a bug or a bad model: fail this step's requests, keep serving the rest
            log.exception("engine step failed; failing its %d requests", len(plan.segments))
            for seg in plan.segments:
                if not seg.request.is_done:
                    seg.request.error = f"{type(err).__name__}: {err}"
                    seg.request.finish_reason = "error"
                    self._retire(seg.request, RequestState.FAILED, outputs)
            return outputs
        self.num_steps += 1
        for seg, new_tokens in zip(plan.segments, results):
            request = seg.request
            if request.is_done:  # failed while sampling
                outputs.append(request.output([]))
                continue
            self.prompt_tokens_total += max(0, min(seg.end, request.num_prompt_tokens) - seg.start)
            self.generation_tokens_total += len(new_tokens)
            self.scheduler.register_computed(request)
            if request.finish_reason is not None:
                self._retire(request, RequestState.FINISHED, outputs, new_tokens)
            elif new_tokens:
                outputs.append(request.output(new_tokens))
        return outputs

    def _plain_step(self, segments) -> list[list[int]]:
        """One forward pass, then one token for every segment that reached its request's end."""
        wants = ["last" if seg.samples else None for seg in segments]
        logits, spans = self.runner.run_rows(
            [Segment(seg.request.token_ids[seg.start:seg.end], seg.start, seg.request.block_table,
                     seq_id=seg.request.request_id) for seg in segments], wants)
        now = time.perf_counter()
        for seg in segments:
            seg.request.num_computed = seg.end
        results: list[list[int]] = [[] for _ in segments]
        sampled = [i for i, span in enumerate(spans) if span is not None]
        # Plain greedy requests (no constraint, penalty or logprobs) take one argmax over the batch:
        # the same token as their own Sampler (argmax of the same float32 logits, ties to the lowest id).
        # ``max(dim).indices`` is that argmax (first maximum on ties, NaN counted as the maximum) and
        # runs about 3x faster than ``argmax`` on a CPU; at 64 sequences it was 5 % of a step.
        fast = [i for i in sampled if _plain_greedy(segments[i].request)]
        if fast:
            rows = logits if len(fast) == logits.shape[0] else logits.index_select(
                0, torch.tensor([spans[i][0] for i in fast], dtype=torch.long, device=logits.device))
            for i, token in zip(fast, rows.float().max(dim=-1).indices.tolist()):
                segments[i].request.append_token(token, now)
                results[i] = [token]
        if len(fast) < len(sampled):
            chosen = set(fast)
            for i in sampled:
                if i not in chosen:
                    lo, hi = spans[i]
                    results[i] = self.sample_into(segments[i].request, logits[lo:hi], now)
        return results

    def sample_into(self, request: Request, logits: torch.Tensor, now: float) -> list[int]:
        """Choose the request's next token from ``logits [1, vocab]`` and append it; [] if sampling failed."""
        try:
            token = int(request.sampler(logits, request.ids_view())[0])
        except Exception as err:  # e.g. a constraint with no allowed token: this request fails, not the step
            return self.fail_request(request, err, now)
        if request.params.logprobs is not None:
            request.record_logprobs(token, logits)
        request.append_token(token, now)
        return [token]

    def fail_request(self, request: Request, err: Exception, now: float) -> list[int]:
        """Mark ``request`` failed (its blocks go back); the step's other requests go on."""
        request.error = f"{type(err).__name__}: {err}"
        request.finish_reason = "error"
        self.scheduler.finish(request, RequestState.FAILED)
        request.metrics.finished_s = now
        self._requests.pop(request.request_id, None)
        return []

    # -- offline use -------------------------------------------------------------------------------

    def generate(self, prompts: str | Sequence[int] | Sequence[str | Sequence[int]],
                 params: SamplingParams | Sequence[SamplingParams] | None = None) -> list[Completion]:
        """Serve every prompt (all queued at once) and return their ``Completion``s in order.

        ``params`` is one ``SamplingParams`` for all prompts or one per prompt. Each completion has
        the token ids, the text (with a tokenizer), the finish reason and the timings (TTFT,
        inter-token latencies).
        """
        if isinstance(prompts, str) or (isinstance(prompts, Sequence) and prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        prompts = list(prompts)
        if params is None or isinstance(params, SamplingParams):
            params = [params] * len(prompts)
        params = list(params)
        if len(params) != len(prompts):
            raise ValueError(f"got {len(prompts)} prompts and {len(params)} SamplingParams")
        requests = [self.make_request(p, sp) for p, sp in zip(prompts, params)]  # all checked before any runs
        for request in requests:
            self.add_request(request)
        while not all(r.is_done for r in requests):
            self.step()
        return [r.completion() for r in requests]

    # -- statistics --------------------------------------------------------------------------------

    def kv_stats(self) -> KVStats:
        running = self.scheduler.running
        return KVStats(
            num_blocks=self.allocator.num_blocks, block_size=self.allocator.block_size,
            bytes_per_block=self.bytes_per_block, used_blocks=self.allocator.num_used,
            free_blocks=self.allocator.num_free, cached_blocks=self.allocator.num_cached,
            shared_blocks=self.allocator.num_shared, running_requests=len(running),
            waiting_requests=len(self.scheduler.waiting),
            tokens_cached=sum(r.num_computed for r in running),
            contiguous_slots=len(running) * self.max_seq_len,
            prefix_hit_tokens=self.scheduler.prefix_hit_tokens, copies_on_write=self.allocator.copies_on_write,
            preemptions=self.scheduler.num_preemptions,
        )

    def spec_stats(self):
        """Speculative decoding counters (``SpecStats``), or None without a draft model."""
        return None if self.speculative is None else self.speculative.stats()


def _plain_greedy(request: Request) -> bool:
    sampler = request.sampler  # anything else than a plain greedy Sampler goes through its own call
    return (isinstance(sampler, Sampler) and not sampler.do_sample and sampler.constraint is None
            and sampler.repetition_penalty in (None, 1.0) and request.params.logprobs is None)


class LLM(Engine):
    """An ``Engine`` for a model shipped with llmlab, by name: ``LLM("es-chat").generate(["Hola"])``.

    ``draft`` names the draft model for speculative decoding (``LLM("es-base", draft="es-mini")``).
    Other keyword arguments go to ``Engine``.
    """

    def __init__(self, model: str = "es-chat", *, draft: str | None = None, models_dir=None, **engine_kwargs: Any):
        from llmlab import pretrained

        target, tokenizer = pretrained.load(model, models_dir=models_dir)
        if model in pretrained.PUBLISHED and models_dir is None and "num_blocks" not in engine_kwargs:
            # A real model's whole context times max_num_seqs would be gigabytes of KV cache.
            engine_kwargs.setdefault("kv_memory_bytes", 512 << 20)
        draft_model = pretrained.load(draft, models_dir=models_dir)[0] if draft is not None else None
        self.model_name = model
        self.chat_style = pretrained.info(model, models_dir=models_dir).get("chat_style")
        super().__init__(target, tokenizer, draft_model=draft_model, **engine_kwargs)

    def chat_prompt(self, messages: Sequence[dict]) -> list[int]:
        """Token ids of a conversation in the model's chat template, ready for the assistant's answer."""
        from llmlab.chat import encode_chat

        if self.chat_style is None:
            raise ValueError(f"{self.model_name} is not a chat model (it has no chat template)")
        return encode_chat(list(messages), self.tokenizer, self.chat_style, add_generation_prompt=True)

    def chat(self, conversations: Sequence[Sequence[dict]], params: SamplingParams | None = None) -> list[Completion]:
        """Answer each conversation (a list of ``{"role", "content"}`` messages) with the chat template.

        The template's end-of-turn tokens are added to ``params.stop_token_ids``.
        """
        import dataclasses

        params = SamplingParams() if params is None else params
        stops = list(dict.fromkeys([*params.stop_token_ids, *self.chat_stop_ids()]))
        params = dataclasses.replace(params, stop_token_ids=stops)
        return self.generate([self.chat_prompt(c) for c in conversations], params)

    def chat_stop_ids(self) -> list[int]:
        """The token ids that end an answer in the model's chat template."""
        from llmlab.chat import stop_ids

        return stop_ids(self.chat_style or "chatml", self.tokenizer)
