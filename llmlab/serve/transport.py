"""The HTTP edge of the server: what every connection and request meets before a route sees it.

- ``TimedH11Protocol``: uvicorn's HTTP/1.1 protocol with a *header timeout*. A connection that opens
  and sends nothing, or sends its headers a byte at a time (slowloris), is closed after
  ``header_timeout_s``; uvicorn alone keeps it open for ever.
- ``Gate`` (ASGI middleware), in this order: the request id (``x-request-id``: the client's, or a
  new one, echoed on every answer); the API key (``Authorization: Bearer <key>``, 401 without it,
  on every route but ``/health``); the body, read whole before the route: more than
  ``max_body_bytes`` is a 413 (announced by Content-Length or counted while a chunked body
  arrives), a body that does not arrive within ``body_timeout_s`` is a 408.
- CORS (``allowed_origins``) is Starlette's own middleware, added by ``install``.

Errors use the OpenAI shape, like every other answer of the server.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import uuid
from collections.abc import Callable, Sequence

from uvicorn.protocols.http.h11_impl import H11Protocol

from .protocol import APIError

__all__ = ["Gate", "TimedH11Protocol", "install", "timed_protocol"]

OPEN_PATHS = ("/health",)  # answered without the API key (a load balancer's probe)


class TimedH11Protocol(H11Protocol):
    """H11Protocol that closes a connection whose request headers take longer than ``header_timeout_s``."""

    header_timeout_s = 10.0

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer = None
        self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._on_header_timeout)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm_header_timer()  # the headers are in: the request is being served
        else:
            self._arm_header_timer()  # bytes of a next request's headers: they get the same deadline

    def on_response_complete(self) -> None:
        super().on_response_complete()  # arms the keep-alive timer for the idle connection
        self._disarm_header_timer()

    def _on_header_timeout(self) -> None:
        self._header_timer = None
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()

    def connection_lost(self, exc) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)


def timed_protocol(header_timeout_s: float) -> type[TimedH11Protocol]:
    """A ``TimedH11Protocol`` class with this header timeout (what ``uvicorn.Config(http=...)`` takes)."""
    return type("TimedH11Protocol", (TimedH11Protocol,), {"header_timeout_s": float(header_timeout_s)})


async def _send_error(send, error: APIError, request_id: str, extra_headers: Sequence[tuple[bytes, bytes]] = ()):
    body = json.dumps(error.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"x-request-id", request_id.encode()), (b"connection", b"close"), *extra_headers]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Gate:
    """ASGI middleware: request id, API key, and the body read whole under a size and a time limit."""

    def __init__(self, app, *, max_body_bytes: int, body_timeout_s: float, api_key: str | None = None,
                 on_reject: Callable[[int], None] | None = None):
        self.app, self.max_body_bytes, self.body_timeout_s = app, max_body_bytes, body_timeout_s
        self.api_key, self.on_reject = api_key, on_reject

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(b"x-request-id", b"").decode("latin-1")[:128] or f"req-{uuid.uuid4().hex}"
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"x-request-id", request_id.encode())]}
            await send(message)

        async def reject(error: APIError, extra_headers=()):
            if self.on_reject is not None:
                self.on_reject(error.status)
            await _send_error(send, error, request_id, extra_headers)

        if self.api_key is not None and scope["path"] not in OPEN_PATHS and scope.get("method") != "OPTIONS":
            given = headers.get(b"authorization", b"").decode("latin-1")
            expected = f"Bearer {self.api_key}"
            if not hmac.compare_digest(given.encode(), expected.encode()):
                return await reject(APIError(401, "invalid or missing API key: send 'Authorization: Bearer <key>'",
                                             type="authentication_error", code="invalid_api_key"),
                                    [(b"www-authenticate", b"Bearer")])
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            await self._drain(receive, int(length))
            return await reject(self._too_large())
        try:
            body = await asyncio.wait_for(self._read_body(receive), self.body_timeout_s)
        except _TooLarge:
            await self._drain(receive, 64 * self.max_body_bytes)
            return await reject(self._too_large())
        except asyncio.TimeoutError:
            return await reject(APIError(408, f"the request body did not arrive within {self.body_timeout_s:g} s",
                                         code="request_timeout"))
        if body is None:  # the client left while sending
            return
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: only http.disconnect can come

        await self.app(scope, replay, send_with_id)

    async def _drain(self, receive, budget: int) -> None:
        """Read (and drop) what the client is still sending, up to a bound and a deadline, so that it
        sees the 413 instead of a reset connection; a larger body is cut off."""
        budget = min(budget, 64 * self.max_body_bytes)

        async def drain():
            nonlocal budget
            while budget > 0:
                message = await receive()
                if message["type"] != "http.request":
                    return
                budget -= len(message.get("body", b""))
                if not message.get("more_body", False):
                    return

        try:
            await asyncio.wait_for(drain(), self.body_timeout_s)
        except asyncio.TimeoutError:
            pass

    def _too_large(self) -> APIError:
        return APIError(413, f"request body larger than {self.max_body_bytes} bytes", code="request_too_large")

    async def _read_body(self, receive) -> bytes | None:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


class _TooLarge(Exception):
    pass


def install(app, *, max_body_bytes: int, body_timeout_s: float, api_key: str | None,
            allowed_origins: Sequence[str] | None, on_reject: Callable[[int], None] | None = None) -> None:
    """Add the gate (and CORS, when origins are given) to a Starlette/FastAPI app."""
    app.add_middleware(Gate, max_body_bytes=max_body_bytes, body_timeout_s=body_timeout_s, api_key=api_key,
                       on_reject=on_reject)
    if allowed_origins:
        from starlette.middleware.cors import CORSMiddleware

        # Added last, so it runs first: a browser's preflight (OPTIONS) is answered before the API key check.
        app.add_middleware(CORSMiddleware, allow_origins=list(allowed_origins), allow_methods=["GET", "POST"],
                           allow_headers=["authorization", "content-type", "x-request-id"],
                           expose_headers=["x-request-id"])
