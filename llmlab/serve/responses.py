"""What the server answers: OpenAI's JSON objects, whole or as server-sent events, for ``n`` choices.

A request with ``n`` choices is ``n`` engine requests (``choice i`` gets ``seed + i``, so a seeded
request is reproducible choice by choice). ``Answer`` follows them:

- ``Answer.collect`` waits for all of them and builds one ``chat.completion`` / ``text_completion``
  object, while watching the client: one that disconnects cancels every choice (their KV blocks
  go back at once; nothing runs on for nobody);
- ``Answer.events`` yields the chunks of a stream as tokens arrive, choices interleaved, each chunk
  naming its ``index``; a client that leaves mid-stream cancels them the same way.

Log-probabilities are the model's own (``log_softmax`` of its logits), in the two shapes of the API:
chat's ``{"content": [{"token", "logprob", "bytes", "top_logprobs"}]}`` and completions'
``{"tokens", "token_logprobs", "top_logprobs", "text_offset"}``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from .protocol import APIError
from .request import RequestOutput, TokenLogprob

__all__ = ["Answer", "merge_streams"]

_MARKER = "\x00llmlab-text\x00"  # stands for a chunk's text in its template (never in real text: NUL)
DISCONNECT_POLL_S = 0.1  # how often a waiting non-streaming request checks that its client is still there


def _token_text(tokenizer, token_id: int) -> tuple[str, list[int]]:
    raw = tokenizer.token_bytes(token_id)
    return raw.decode("utf-8", errors="replace"), list(raw)


def chat_logprobs(tokenizer, entries: Sequence[TokenLogprob]) -> dict[str, Any]:
    def one(token_id: int, logprob: float) -> dict[str, Any]:
        text, raw = _token_text(tokenizer, token_id)
        return {"token": text, "logprob": logprob, "bytes": raw}

    return {"content": [{**one(e.token_id, e.logprob), "top_logprobs": [one(t, lp) for t, lp in e.top]}
                        for e in entries], "refusal": None}


def completion_logprobs(tokenizer, entries: Sequence[TokenLogprob]) -> dict[str, Any]:
    tokens, offsets, offset = [], [], 0
    for e in entries:
        text = _token_text(tokenizer, e.token_id)[0]
        tokens.append(text)
        offsets.append(offset)
        offset += len(text)
    return {"tokens": tokens, "token_logprobs": [e.logprob for e in entries],
            "top_logprobs": [{_token_text(tokenizer, t)[0]: lp for t, lp in e.top} for e in entries],
            "text_offset": offsets}


async def merge_streams(streams: Sequence[AsyncIterator[RequestOutput]]) -> AsyncIterator[tuple[int, RequestOutput]]:
    """``(choice index, output)`` from several engine streams as they come; closing it cancels them all."""
    if len(streams) == 1:
        try:
            async for output in streams[0]:
                yield 0, output
        finally:
            await streams[0].aclose()
        return
    queue: asyncio.Queue = asyncio.Queue()

    async def pump(i: int, stream: AsyncIterator[RequestOutput]) -> None:
        try:
            async for output in stream:
                queue.put_nowait((i, output))
        finally:
            queue.put_nowait((i, None))

    tasks = [asyncio.ensure_future(pump(i, s)) for i, s in enumerate(streams)]
    try:
        remaining = len(streams)
        while remaining:
            i, output = await queue.get()
            if output is None:
                remaining -= 1
            else:
                yield i, output
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for stream in streams:
            await stream.aclose()  # each unfinished one aborts its request


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


class Answer:
    """The answer to one HTTP request of ``n`` choices (``chat`` or text completion)."""

    def __init__(self, *, request_id: str, model_name: str, fingerprint: str, tokenizer, chat: bool,
                 logprobs: bool, streams: Sequence[AsyncIterator[RequestOutput]]):
        self.request_id, self.model_name, self.fingerprint = request_id, model_name, fingerprint
        self.tokenizer, self.chat, self.logprobs = tokenizer, chat, logprobs
        self.streams = streams
        self.created = int(time.time())
        self._templates: dict[tuple[int, bool], tuple[str, str]] = {}

    def _logprobs(self, entries: Sequence[TokenLogprob]) -> dict[str, Any] | None:
        if not self.logprobs:
            return None
        return chat_logprobs(self.tokenizer, entries) if self.chat else completion_logprobs(self.tokenizer, entries)

    def _envelope(self, kind: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": self.request_id, "object": kind, "created": self.created, "model": self.model_name,
                "system_fingerprint": self.fingerprint, "choices": choices}

    # -- whole -------------------------------------------------------------------------------------

    async def collect(self, is_disconnected: Callable[[], Any]) -> dict[str, Any] | None:
        """The whole answer; None if the client disconnected first (every choice is then cancelled)."""
        task = asyncio.ensure_future(self._gather())
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=DISCONNECT_POLL_S)
                if done:
                    break
                if await is_disconnected():
                    return None
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        last, entries = task.result()
        for output in last:
            if output.finish_reason == "error":
                raise APIError(500, f"generation failed: {output.error}", type="server_error")
        choices = []
        for i, output in enumerate(last):
            if self.chat:
                message = {"role": "assistant", "content": output.text, "refusal": None}
                choices.append({"index": i, "message": message, "finish_reason": output.finish_reason,
                                "logprobs": self._logprobs(entries[i])})
            else:
                choices.append({"index": i, "text": output.text, "finish_reason": output.finish_reason,
                                "logprobs": self._logprobs(entries[i])})
        body = self._envelope("chat.completion" if self.chat else "text_completion", choices)
        body["usage"] = _usage(last[0].num_prompt_tokens, sum(o.num_output_tokens for o in last))
        return body

    async def _gather(self) -> tuple[list[RequestOutput], list[list[TokenLogprob]]]:
        last: list[RequestOutput | None] = [None] * len(self.streams)
        entries: list[list[TokenLogprob]] = [[] for _ in self.streams]
        async for i, output in merge_streams(self.streams):
            last[i] = output
            entries[i].extend(output.new_logprobs)
        return last, entries

    # -- streamed ----------------------------------------------------------------------------------

    def _chunk(self, index: int, text: str | None, *, finish_reason: str | None = None, first: bool = False,
               entries: Sequence[TokenLogprob] = (), include_usage: bool = False) -> str:
        logprobs = self._logprobs(entries) if entries else None
        if self.chat:
            delta = {"role": "assistant", "content": ""} if first else ({} if text is None else {"content": text})
            choice = {"index": index, "delta": delta, "finish_reason": finish_reason, "logprobs": logprobs}
            kind = "chat.completion.chunk"
        else:
            choice = {"index": index, "text": text or "", "finish_reason": finish_reason, "logprobs": logprobs}
            kind = "text_completion"
        event = self._envelope(kind, [choice])
        if include_usage:
            event["usage"] = None
        return f"data: {json.dumps(event, ensure_ascii=False)}\n\n"

    def _text_chunk(self, index: int, text: str, include_usage: bool) -> str:
        """``_chunk(index, text)`` without logprobs, from a template: only the text is encoded per token."""
        template = self._templates.get((index, include_usage))
        if template is None:
            marker = json.dumps(_MARKER, ensure_ascii=False)
            head, tail = self._chunk(index, _MARKER, include_usage=include_usage).split(marker)
            template = self._templates[(index, include_usage)] = (head, tail)
        return template[0] + json.dumps(text, ensure_ascii=False) + template[1]

    async def events(self, include_usage: bool) -> AsyncIterator[str]:
        """Server-sent events: the chunks, then ``data: [DONE]``."""
        n = len(self.streams)
        sent = [0] * n
        pending: list[list[TokenLogprob]] = [[] for _ in range(n)]  # logprobs of tokens whose text is held back
        finished: list[RequestOutput | None] = [None] * n
        merged = merge_streams(self.streams)
        try:
            if self.chat:
                for i in range(n):
                    yield self._chunk(i, None, first=True, include_usage=include_usage)
            async for i, output in merged:
                pending[i].extend(output.new_logprobs)
                ready = getattr(self.streams[i], "ready", None) if n == 1 else None
                if ready is not None and not output.finished:
                    for later in ready():  # arrived while this loop was busy: one chunk for all of them
                        pending[i].extend(later.new_logprobs)
                        output = later
                if len(output.text) > sent[i] or (pending[i] and output.finished):
                    text = output.text[sent[i]:]
                    yield (self._chunk(i, text, entries=pending[i], include_usage=include_usage) if pending[i]
                           else self._text_chunk(i, text, include_usage))
                    sent[i], pending[i] = len(output.text), []
                if output.finished:
                    finished[i] = output
                    if output.finish_reason == "error":
                        error = APIError(500, f"generation failed: {output.error}", type="server_error")
                        yield f"data: {json.dumps(error.body())}\n\n"
                    else:
                        yield self._chunk(i, None, finish_reason=output.finish_reason, include_usage=include_usage)
            if include_usage and all(f is not None for f in finished):
                event = self._envelope("chat.completion.chunk" if self.chat else "text_completion", [])
                event["usage"] = _usage(finished[0].num_prompt_tokens, sum(f.num_output_tokens for f in finished))
                yield f"data: {json.dumps(event)}\n\n"
            yield "data: [DONE]\n\n"
        finally:
            await merged.aclose()  # a client that left mid-stream: every choice is aborted, its blocks freed
