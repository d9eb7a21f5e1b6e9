"""The HTTP server: an OpenAI-compatible API over the engine (FastAPI + uvicorn, loopback by default).

Endpoints (the ones the OpenAI Python client, ``curl`` and vLLM's clients use):

- ``POST /v1/completions``: a prompt (text or token ids) continued;
- ``POST /v1/chat/completions``: messages rendered with the model's chat template
  (``llmlab.chat``), ``"stream": true`` for server-sent events, ``response_format`` (``json_object``
  or a JSON schema, enforced by ``llmlab.serve.grammar``), ``n`` choices, ``logprobs``;
- ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /tokenize``, ``POST /detokenize``,
  ``GET /health``, ``GET /metrics`` (Prometheus, ``llmlab.serve.metrics``).

Every error is answered the OpenAI way, ``{"error": {"message", "type", "param", "code"}}`` with a
4xx status (5xx only for the server's own failures), and the server keeps serving: malformed JSON,
an unknown field or model, a bad type or value, a refused schema keyword, a prompt or ``max_tokens``
beyond the context (400/404); no API key when one is set (401); a body too large (413) or too slow
(408), a full queue (429), all refused before anything reaches the engine (``llmlab.serve.transport``).

``create_app`` puts the pieces together, one function per idea: the transport gate, the error
handlers, the information routes, the generation routes (``protocol`` checks a body, ``responses``
writes the answer). ``python -m llmlab serve --model es-chat`` runs ``serve``;
``llmlab.serve.launch`` starts it in a subprocess for notebooks.
"""

from __future__ import annotations

import hashlib
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
from .protocol import (APIError, ChatCompletionRequest, CompletionRequest, DetokenizeRequest, TokenizeRequest,
                       to_sampling_params)
from .responses import Answer

try:  # FastAPI reads the routes' annotations from this module's globals
    from starlette.requests import Request as HTTPRequest
except ImportError:  # pragma: no cover - the engine works without the serve extra
    HTTPRequest = Any

__all__ = ["DEFAULT_BODY_TIMEOUT_S", "DEFAULT_HEADER_TIMEOUT_S", "DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_WAITING",
           "create_app", "serve"]

log = logging.getLogger("llmlab.serve")

DEFAULT_MAX_BODY_BYTES = 1_000_000  # 1 MB: far more than a 256-token prompt needs
DEFAULT_MAX_WAITING = 256  # requests queued beyond the running batch before answering 429
DEFAULT_HEADER_TIMEOUT_S = 10.0  # a connection's request headers must arrive within this
DEFAULT_BODY_TIMEOUT_S = 30.0  # and its body within this
KEEP_ALIVE_S = 75  # seconds an idle client connection stays open (nginx's default)


def _error_response(err: APIError):
    from fastapi.responses import JSONResponse

    return JSONResponse(err.body(), status_code=err.status)


class _Served:
    """What the routes need: the engine thread, the model's name and chat template, the limits."""

    def __init__(self, engine: Engine, model_name: str, chat_style: str | None, thread: EngineThread):
        self.engine, self.model_name, self.chat_style, self.thread = engine, model_name, chat_style, thread
        self.tokenizer = engine.tokenizer
        self.context = engine.max_seq_len
        self.created = int(time.time())
        # Names the weights and the code that serve: the same fingerprint means the same answers for a seed.
        from llmlab import __version__

        config = json.dumps(getattr(engine.model.config, "__dict__", {}), sort_keys=True, default=str)
        self.fingerprint = "fp_" + hashlib.sha256(f"{model_name}|{__version__}|{config}".encode()).hexdigest()[:12]

    def check_model(self, model: str | None) -> None:
        if model is not None and model != self.model_name:
            raise APIError(404, f"the model {model!r} does not exist; this server serves {self.model_name!r}",
                           param="model", code="model_not_found")

    def model_card(self) -> dict[str, Any]:
        return {"id": self.model_name, "object": "model", "created": self.created, "owned_by": "llmlab",
                "max_model_len": self.context}

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

    def check_ids(self, ids: list[int], param: str) -> None:
        vocab = len(self.tokenizer)
        if any(t < 0 or t >= vocab for t in ids):
            raise APIError(400, f"{param}: token ids must lie in [0, {vocab})", param=param)

    def chat_prompt(self, messages, add_generation_prompt: bool = True) -> list[int]:
        from llmlab.chat import encode_chat

        if self.chat_style is None:
            raise APIError(400, f"{self.model_name} is not a chat model (no chat template): use /v1/completions",
                           param="model")
        plain = [{"role": "system" if m.role == "developer" else m.role, "content": m.text()} for m in messages]
        try:
            return encode_chat(plain, self.tokenizer, self.chat_style, add_generation_prompt=add_generation_prompt)
        except (ValueError, TypeError) as err:
            raise APIError(400, f"messages: {err}", param="messages") from None

    def text_prompt(self, prompt: str | list) -> list[int]:
        if isinstance(prompt, list) and prompt and isinstance(prompt[0], str):
            if len(prompt) != 1:
                raise APIError(400, "a list of several prompts is not supported: send one request per prompt",
                               param="prompt")
            prompt = prompt[0]
        tok = self.tokenizer
        if isinstance(prompt, str):
            return ([tok.bos_id] if tok.bos_id is not None else []) + tok.encode(prompt)
        if not prompt:
            raise APIError(400, "prompt token ids must be a non-empty list", param="prompt")
        self.check_ids(prompt, "prompt")
        return list(prompt)

    def chat_stops(self) -> list[int]:
        from llmlab.chat import stop_ids

        return stop_ids(self.chat_style, self.tokenizer)  # a GGUF model's own end-of-turn tokens included


def create_app(engine: Engine, *, model_name: str, chat_style: str | None = None,
               max_waiting: int = DEFAULT_MAX_WAITING, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
               body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S, api_key: str | None = None,
               allowed_origins: list[str] | None = None, engine_spec=None):
    """The FastAPI application serving ``engine`` under the name ``model_name``.

    The engine thread starts and stops with the application (its lifespan). ``api_key``: every route
    but ``/health`` needs ``Authorization: Bearer <api_key>``. ``allowed_origins``: the browser
    origins CORS lets in (``["*"]`` for any). ``engine_spec`` (an ``EngineSpec``): the engine steps
    in a child process built from it (``llmlab.serve.engine_process``), and ``engine``, built with
    the same arguments, only checks requests.
    """
    from fastapi import FastAPI

    from . import transport

    if engine.tokenizer is None:
        raise ValueError("the server needs an engine with a tokenizer")
    metrics = ServerMetrics()
    if engine_spec is None:
        thread = EngineThread(engine, max_waiting=max_waiting, on_finished=metrics.observe_finished)
    else:
        from .engine_process import EngineProcess

        thread = EngineProcess(engine, engine_spec, max_waiting=max_waiting, on_finished=metrics.observe_finished)
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
    transport.install(app, max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s, api_key=api_key,
                      allowed_origins=allowed_origins,
                      on_reject=lambda status: metrics.rejected.labels(status=str(status)).inc())
    _add_error_handlers(app, metrics)
    _add_info_routes(app, served, metrics)
    _add_generation_routes(app, served)
    return app


def _add_error_handlers(app, metrics: ServerMetrics) -> None:
    """Every error as OpenAI's ``{"error": ...}``: ours, pydantic's, Starlette's (404, 405), and bugs (500)."""
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException

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
        if first.get("type") == "extra_forbidden":
            return reject(APIError(400, f"Unrecognized request argument supplied: {where}", param=where))
        if first.get("type") == "model_attributes_type" and not loc:
            return reject(APIError(400, "the body must be a JSON object"))
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


def _add_info_routes(app, served: _Served, metrics: ServerMetrics) -> None:
    """Routes that answer without generating: health, models, tokenizer, metrics."""
    from fastapi.responses import Response
    from prometheus_client import CONTENT_TYPE_LATEST

    @app.get("/health")
    async def health():
        if not served.thread.alive:
            raise APIError(503, f"the engine stopped: {served.thread.error}", type="server_error")
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [served.model_card()]}

    @app.get("/v1/models/{model_id:path}")
    async def model(model_id: str):
        served.check_model(model_id)
        return served.model_card()

    @app.post("/tokenize")
    async def tokenize(body: TokenizeRequest):
        served.check_model(body.model)
        if (body.prompt is None) == (body.messages is None):
            raise APIError(400, "give either prompt or messages", param="prompt")
        if body.messages is not None:
            ids = served.chat_prompt(body.messages, add_generation_prompt=body.add_generation_prompt)
        else:
            tok = served.tokenizer
            bos = [tok.bos_id] if body.add_special_tokens and tok.bos_id is not None else []
            ids = bos + tok.encode(body.prompt)
        return {"tokens": ids, "count": len(ids), "max_model_len": served.context}

    @app.post("/detokenize")
    async def detokenize(body: DetokenizeRequest):
        served.check_model(body.model)
        served.check_ids(body.tokens, "tokens")
        return {"prompt": served.tokenizer.decode(body.tokens)}

    @app.get("/metrics")
    async def prometheus():
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)


def _add_generation_routes(app, served: _Served) -> None:
    """``/v1/completions`` and ``/v1/chat/completions``: check the body, queue ``n`` requests, answer."""
    from fastapi.responses import StreamingResponse

    @app.post("/v1/completions")
    async def completions(body: CompletionRequest, http: HTTPRequest):
        served.check_model(body.model)
        prompt_ids = served.text_prompt(body.prompt)
        max_tokens = served.room_for(prompt_ids, body.max_tokens, default=16)
        tok = served.tokenizer
        stops = [tok.eos_id] if tok.eos_id is not None and not body.ignore_eos else []
        return await _answer(body, http, prompt_ids, chat=False, max_tokens=max_tokens, stops=stops,
                             logprobs=body.logprobs, json_schema=None)

    @app.post("/v1/chat/completions")
    async def chat_completions(body: ChatCompletionRequest, http: HTTPRequest):
        served.check_model(body.model)
        logprobs = body.choice_logprobs()
        json_schema = body.json_schema()
        prompt_ids = served.chat_prompt(body.messages)
        requested = body.max_completion_tokens if body.max_completion_tokens is not None else body.max_tokens
        max_tokens = served.room_for(prompt_ids, requested, default=None)
        stops = [] if body.ignore_eos else served.chat_stops()
        return await _answer(body, http, prompt_ids, chat=True, max_tokens=max_tokens, stops=stops,
                             logprobs=logprobs, json_schema=json_schema)

    async def _answer(body, http, prompt_ids: list[int], *, chat: bool, max_tokens: int, stops: list[int],
                      logprobs: int | None, json_schema):
        if body.stop_token_ids:
            served.check_ids(body.stop_token_ids, "stop_token_ids")
        n = body.n or 1
        base_id = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex[:24]}"
        requests = []
        for i in range(n):
            seed = None if body.seed is None else body.seed + i
            params = to_sampling_params(body, max_tokens=max_tokens, stop_token_ids=stops, json_schema=json_schema,
                                        logprobs=logprobs, seed=seed)
            try:
                requests.append(served.engine.make_request(prompt_ids, params, request_id=f"{base_id}-{i}"))
            except ValueError as err:
                raise APIError(400, str(err), param="response_format" if json_schema is not None else None) from None
        streams = []
        try:
            for request in requests:
                streams.append(served.thread.submit(request))
        except QueueFull as err:
            for stream in streams:
                await stream.aclose()
            raise APIError(429, f"server busy: {err}", type="rate_limit_error", code="rate_limit_exceeded") from None
        answer = Answer(request_id=base_id, model_name=served.model_name, fingerprint=served.fingerprint,
                        tokenizer=served.tokenizer, chat=chat, logprobs=logprobs is not None, streams=streams)
        if body.stream:
            usage = bool(body.stream_options and body.stream_options.include_usage)
            return StreamingResponse(answer.events(usage), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        result = await answer.collect(http.is_disconnected)
        if result is None:  # the client left: its requests were cancelled; nobody reads this
            from fastapi.responses import Response

            return Response(status_code=499)
        return result


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
          on_ready=None, api_key: str | None = None, allowed_origins: list[str] | None = None,
          header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S, body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
          engine_spec=None) -> None:
    """Serve ``engine`` over HTTP until interrupted (blocks).

    ``port=0`` picks a free port. ``port_file``: once the server accepts connections, the port is
    written there (how ``launch`` learns it). ``exit_with_stdin``: stop when standard input is
    closed, which happens when the parent process ends, however it ends. ``api_key``,
    ``allowed_origins``: see ``create_app``; a connection's headers must arrive within
    ``header_timeout_s`` and its body within ``body_timeout_s`` (slow or silent clients are cut off).
    ``engine_spec``: run the engine in its own process (see ``create_app``).
    """
    import uvicorn

    from .transport import timed_protocol

    _raise_open_files_limit()
    app = create_app(engine, model_name=model_name, chat_style=chat_style, max_waiting=max_waiting,
                     max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s, api_key=api_key,
                     allowed_origins=allowed_origins, engine_spec=engine_spec)
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
                            backlog=2048, timeout_keep_alive=KEEP_ALIVE_S, http=timed_protocol(header_timeout_s))
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


def request_json(url: str, body: Any = None, timeout_s: float = 30.0, api_key: str | None = None) -> Any:
    """A tiny stdlib HTTP helper (GET, or POST of a JSON body) returning the decoded JSON answer."""
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data else {}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout_s) as answer:
        return json.loads(answer.read().decode())
