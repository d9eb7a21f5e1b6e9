"""The HTTP server: an OpenAI-compatible API over the engine (FastAPI + uvicorn, loopback by default).

Endpoints (the ones the OpenAI Python client and ``curl`` use):

- ``POST /v1/completions``: a prompt (text or token ids) continued;
- ``POST /v1/chat/completions``: messages rendered with the model's chat template
  (``llmlab.chat``), ``"stream": true`` for server-sent events, ``response_format`` with a JSON
  schema for constrained output (``llmlab.constrained``);
- ``GET /v1/models``, ``GET /health``, ``GET /metrics`` (Prometheus, ``llmlab.serve.metrics``).

Every error is answered the OpenAI way, ``{"error": {"message", "type", "param", "code"}}`` with a
4xx status (5xx only for the server's own failures), and the server keeps serving: malformed JSON,
an unknown model (404), missing messages, a prompt or ``max_tokens`` beyond the context, a bad
sampling value, an invalid schema, a body larger than ``max_body_bytes`` (413) and a full queue
(429) are all refused before anything reaches the engine.

``python -m llmlab serve --model es-chat`` runs ``serve``; ``llmlab.serve.launch`` starts it in a
subprocess for notebooks.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import socket
import sys
import threading
import time
import uuid
from contextlib import asynccontextmanager
from typing import Any

from .engine import Engine
from .engine_thread import EngineThread, QueueFull
from .metrics import ServerMetrics
from .protocol import APIError, ChatCompletionRequest, CompletionRequest, to_sampling_params

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_WAITING", "create_app", "serve"]

log = logging.getLogger("llmlab.serve")

DEFAULT_MAX_BODY_BYTES = 1_000_000  # 1 MB: far more than a 256-token prompt needs
DEFAULT_MAX_WAITING = 256  # requests queued beyond the running batch before answering 429
KEEP_ALIVE_S = 75  # seconds an idle client connection stays open (nginx's default)


def _error_response(err: APIError):
    from fastapi.responses import JSONResponse

    return JSONResponse(err.body(), status_code=err.status)


class BodySizeLimit:
    """ASGI middleware: refuse request bodies larger than ``max_bytes`` with 413 (checked on the
    Content-Length header, and counted while reading for chunked uploads)."""

    def __init__(self, app, max_bytes: int, on_reject=None):
        self.app, self.max_bytes, self.on_reject = app, max_bytes, on_reject

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        error = APIError(413, f"request body larger than {self.max_bytes} bytes", code="request_too_large")
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await self._reject(error, scope, receive, send, drain=int(length))
        received = 0
        started = False

        async def limited_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return message

        async def tracking_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._reject(error, scope, receive, send, drain=0)

    async def _reject(self, error: APIError, scope, receive, send, drain: int):
        if self.on_reject is not None:
            self.on_reject(error.status)
        # Read (and drop) what the client is still sending, up to a bound, so that it sees the
        # answer instead of a reset connection; a larger body is cut off.
        budget = min(drain, 64 * self.max_bytes)
        while budget > 0:
            message = await receive()
            if message["type"] != "http.request":
                break
            budget -= len(message.get("body", b""))
            if not message.get("more_body", False):
                break
        await _error_response(error)(scope, receive, send)


class _TooLarge(Exception):
    pass


class _Served:
    """What the routes need: the engine thread, the model's name and chat template, the limits."""

    def __init__(self, engine: Engine, model_name: str, chat_style: str | None, thread: EngineThread):
        self.engine, self.model_name, self.chat_style, self.thread = engine, model_name, chat_style, thread
        self.tokenizer = engine.tokenizer
        self.context = engine.max_seq_len
        self.created = int(time.time())

    def check_model(self, model: str) -> None:
        if model != self.model_name:
            raise APIError(404, f"the model {model!r} does not exist; this server serves {self.model_name!r}",
                           param="model", code="model_not_found")

    def room_for(self, prompt_ids: list[int], max_tokens: int | None, default: int | None) -> int:
        """Check the prompt and ``max_tokens`` against the context; return max_tokens."""
        room = self.context - len(prompt_ids)
        if room < 1:
            raise APIError(400, f"the prompt has {len(prompt_ids)} tokens; this model's context is {self.context} "
                                "tokens and the answer needs at least one", param="messages",
                           code="context_length_exceeded")
        max_tokens = (room if default is None else min(default, room)) if max_tokens is None else max_tokens
        if max_tokens < 1:
            raise APIError(400, f"max_tokens must be >= 1, got {max_tokens}", param="max_tokens")
        if max_tokens > room:
            raise APIError(400, f"this model's context is {self.context} tokens: the prompt has {len(prompt_ids)} "
                                f"and max_tokens is {max_tokens} (at most {room})", param="max_tokens",
                           code="context_length_exceeded")
        return max_tokens


def create_app(engine: Engine, *, model_name: str, chat_style: str | None = None,
               max_waiting: int = DEFAULT_MAX_WAITING, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES):
    """The FastAPI application serving ``engine`` under the name ``model_name``.

    The engine thread starts and stops with the application (its lifespan).
    """
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, Response, StreamingResponse
    from prometheus_client import CONTENT_TYPE_LATEST
    from starlette.exceptions import HTTPException

    if engine.tokenizer is None:
        raise ValueError("the server needs an engine with a tokenizer")
    metrics = ServerMetrics()
    thread = EngineThread(engine, max_waiting=max_waiting, on_finished=metrics.observe_finished)
    metrics.attach(thread)
    served = _Served(engine, model_name, chat_style, thread)

    @asynccontextmanager
    async def lifespan(app):
        thread.start()
        yield
        thread.stop()

    app = FastAPI(title="llmlab serve", version="1", lifespan=lifespan,
                  description=f"OpenAI-compatible API for the llmlab model {model_name!r}")
    app.state.served, app.state.metrics = served, metrics
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes,
                       on_reject=lambda status: metrics.rejected.labels(status=str(status)).inc())

    def reject(err: APIError):
        metrics.rejected.labels(status=str(err.status)).inc()
        return _error_response(err)

    @app.exception_handler(APIError)
    async def api_error(request, err: APIError):
        return reject(err)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request, err: RequestValidationError):
        first = err.errors()[0] if err.errors() else {}
        loc = [str(p) for p in first.get("loc", ()) if p != "body"]
        if first.get("type") == "json_invalid":
            return reject(APIError(400, f"the body is not valid JSON: {first.get('ctx', {}).get('error', '')}".strip()))
        where = ".".join(loc) or "body"
        return reject(APIError(400, f"{where}: {first.get('msg', 'invalid value')}", param=loc[0] if loc else None))

    @app.exception_handler(HTTPException)
    async def http_error(request, err: HTTPException):
        kind = "not_found" if err.status_code == 404 else None
        return reject(APIError(err.status_code, str(err.detail), code=kind))

    @app.exception_handler(Exception)
    async def server_error(request, err: Exception):
        log.exception("unexpected error")
        return JSONResponse(APIError(500, f"internal error: {type(err).__name__}", type="server_error").body(),
                            status_code=500)

    @app.get("/health")
    async def health():
        if not thread.alive:
            raise APIError(503, f"the engine stopped: {thread.error}", type="server_error")
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": model_name, "object": "model", "created": served.created,
                                            "owned_by": "llmlab", "max_model_len": served.context}]}

    @app.get("/metrics")
    async def prometheus():
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @app.post("/v1/completions")
    async def completions(body: CompletionRequest):
        served.check_model(body.model)
        prompt = body.prompt
        if isinstance(prompt, list) and prompt and isinstance(prompt[0], str):
            if len(prompt) != 1:
                raise APIError(400, "a list of several prompts is not supported: send one request per prompt",
                               param="prompt")
            prompt = prompt[0]
        tok = served.tokenizer
        if isinstance(prompt, str):
            prompt_ids = ([tok.bos_id] if tok.bos_id is not None else []) + tok.encode(prompt)
        else:
            prompt_ids = list(prompt)
            if not prompt_ids or any(t < 0 or t >= len(tok) for t in prompt_ids):
                raise APIError(400, f"prompt token ids must be a non-empty list of ids in [0, {len(tok)})",
                               param="prompt")
        max_tokens = served.room_for(prompt_ids, body.max_tokens, default=16)
        stops = [tok.eos_id] if tok.eos_id is not None and not body.ignore_eos else []
        params = to_sampling_params(body, max_tokens=max_tokens, stop_token_ids=stops)
        return await _run(body, prompt_ids, params, chat=False)

    @app.post("/v1/chat/completions")
    async def chat_completions(body: ChatCompletionRequest):
        from llmlab.chat import encode_chat, stop_ids

        served.check_model(body.model)
        if served.chat_style is None:
            raise APIError(400, f"{model_name} is not a chat model (no chat template): use /v1/completions",
                           param="model")
        messages = [{"role": "system" if m.role == "developer" else m.role, "content": m.text()}
                    for m in body.messages]
        try:
            prompt_ids = encode_chat(messages, served.tokenizer, served.chat_style, add_generation_prompt=True)
        except (ValueError, TypeError) as err:
            raise APIError(400, f"messages: {err}", param="messages") from None
        requested = body.max_completion_tokens if body.max_completion_tokens is not None else body.max_tokens
        max_tokens = served.room_for(prompt_ids, requested, default=None)
        stops = [] if body.ignore_eos else stop_ids(served.chat_style, served.tokenizer)
        params = to_sampling_params(body, max_tokens=max_tokens, stop_token_ids=stops, json_schema=body.json_schema())
        return await _run(body, prompt_ids, params, chat=True)

    async def _run(body, prompt_ids: list[int], params, *, chat: bool):
        request_id = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex[:24]}"
        try:
            request = engine.make_request(prompt_ids, params, request_id=request_id)
        except ValueError as err:
            raise APIError(400, str(err), param="response_format" if params.json_schema is not None else None) from None
        try:
            outputs = thread.submit(request)
        except QueueFull as err:
            raise APIError(429, f"server busy: {err}", type="rate_limit_error", code="rate_limit_exceeded") from None
        if body.stream:
            usage = bool(body.stream_options and body.stream_options.include_usage)
            return StreamingResponse(_events(outputs, request_id, chat, usage), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        last = None
        async for last in outputs:
            pass
        if last.finish_reason == "error":
            raise APIError(500, f"generation failed: {last.error}", type="server_error")
        usage = _usage(last)
        if chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": last.text},
                      "finish_reason": last.finish_reason, "logprobs": None}
            return {"id": request_id, "object": "chat.completion", "created": int(time.time()), "model": model_name,
                    "choices": [choice], "usage": usage}
        choice = {"index": 0, "text": last.text, "finish_reason": last.finish_reason, "logprobs": None}
        return {"id": request_id, "object": "text_completion", "created": int(time.time()), "model": model_name,
                "choices": [choice], "usage": usage}

    async def _events(outputs, request_id: str, chat: bool, include_usage: bool):
        created = int(time.time())
        kind = "chat.completion.chunk" if chat else "text_completion"

        def chunk(text: str | None, finish_reason: str | None = None, first: bool = False) -> str:
            if chat:
                delta = {"role": "assistant", "content": ""} if first else ({} if text is None else {"content": text})
                choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            else:
                choice = {"index": 0, "text": text or "", "finish_reason": finish_reason, "logprobs": None}
            event = {"id": request_id, "object": kind, "created": created, "model": model_name, "choices": [choice]}
            if include_usage:
                event["usage"] = None
            return f"data: {json.dumps(event, ensure_ascii=False)}\n\n"

        sent = 0
        try:
            if chat:
                yield chunk(None, first=True)
            async for output in outputs:
                if len(output.text) > sent:
                    yield chunk(output.text[sent:])
                    sent = len(output.text)
                if output.finished:
                    if output.finish_reason == "error":
                        error = APIError(500, f"generation failed: {output.error}", type="server_error")
                        yield f"data: {json.dumps(error.body())}\n\n"
                    else:
                        yield chunk(None, finish_reason=output.finish_reason)
                        if include_usage:
                            event = {"id": request_id, "object": kind, "created": created, "model": model_name,
                                     "choices": [], "usage": _usage(output)}
                            yield f"data: {json.dumps(event)}\n\n"
            yield "data: [DONE]\n\n"
        finally:
            await outputs.aclose()  # a client that left mid-stream: the request is aborted, its blocks freed

    return app


def _usage(output) -> dict[str, int]:
    return {"prompt_tokens": output.num_prompt_tokens, "completion_tokens": output.num_output_tokens,
            "total_tokens": output.num_prompt_tokens + output.num_output_tokens}


# ------------------------------------------------------------------------------------------------
# Running it
# ------------------------------------------------------------------------------------------------


def _raise_open_files_limit() -> None:
    """Each client is a socket: lift the soft limit on open files to the hard one (1,000 clients)."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    except (ValueError, OSError):
        pass


def serve(engine: Engine, *, model_name: str, chat_style: str | None = None, host: str = "127.0.0.1",
          port: int = 8000, max_waiting: int = DEFAULT_MAX_WAITING, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
          port_file: str | None = None, exit_with_stdin: bool = False, log_level: str = "warning",
          on_ready=None) -> None:
    """Serve ``engine`` over HTTP until interrupted (blocks).

    ``port=0`` picks a free port. ``port_file``: once the server accepts connections, the port is
    written there (how ``launch`` learns it). ``exit_with_stdin``: stop when standard input is
    closed, which happens when the parent process ends, however it ends.
    """
    import uvicorn

    _raise_open_files_limit()
    app = create_app(engine, model_name=model_name, chat_style=chat_style, max_waiting=max_waiting,
                     max_body_bytes=max_body_bytes)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    actual_port = sock.getsockname()[1]
    # Keep idle connections longer than clients do (httpx and the openai client drop theirs after 5 s):
    # a server that closes first can do it just as the client sends its next request on it, which
    # the client sees as a reset connection.
    config = uvicorn.Config(app, log_level=log_level, access_log=False, timeout_graceful_shutdown=5,
                            backlog=2048, timeout_keep_alive=KEEP_ALIVE_S)
    server = uvicorn.Server(config)

    if exit_with_stdin:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read(65536):
                    pass
            except (OSError, ValueError):
                pass
            server.should_exit = True

        threading.Thread(target=watch_stdin, name="llmlab-stdin-watch", daemon=True).start()

    def announce():
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        if server.started:
            url = f"http://{host if family == socket.AF_INET else f'[{host}]'}:{actual_port}"
            if port_file:
                tmp = f"{port_file}.tmp"
                with open(tmp, "w") as f:
                    f.write(str(actual_port))
                os.replace(tmp, port_file)  # atomic: the reader never sees half a number
            if on_ready is not None:
                on_ready(url)

    threading.Thread(target=announce, name="llmlab-announce", daemon=True).start()
    server.run(sockets=[sock])


def request_json(url: str, body: Any = None, timeout_s: float = 30.0) -> Any:
    """A tiny stdlib HTTP helper (GET, or POST of a JSON body) returning the decoded JSON answer."""
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=timeout_s) as answer:
        return json.loads(answer.read().decode())
