"""The bridge between the engine (one thread, stepping) and the HTTP server (asyncio, many clients).

``Engine.step`` is plain blocking Python; the server must keep answering while it runs. So the
engine lives in its own thread, stepping whenever there is work and sleeping otherwise. A request
handler calls ``submit``, which hands the request to the engine and returns an async iterator of
its ``RequestOutput``s: after every step the engine thread leaves the outputs in a mailbox for
the event loop that is waiting for them and wakes that loop (``call_soon_threadsafe``) unless it
is already awake for the previous step's; the loop hands each output to its request's queue. A
consumer that fell behind takes what has arrived at once (``RequestStream.ready``), and the server
sends it as one chunk. A handler whose client went away
calls ``abort``; the next step frees the request's blocks.

Admission control lives here too: at most ``max_waiting`` requests may wait beyond the
``max_num_seqs`` that run; one more is refused at once (``QueueFull``, HTTP 429) instead of piling
up until memory or latency gives out.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable

from .engine import Engine, KVStats
from .request import Request, RequestOutput

__all__ = ["EngineThread", "QueueFull", "RequestStream"]

log = logging.getLogger("llmlab.serve")


class QueueFull(RuntimeError):
    """Too many requests are queued: try again later (HTTP 429)."""


class RequestStream:
    """The outputs of one submitted request, as an async iterator. ``aclose()`` before the last
    output aborts the request (its blocks are freed at the next step), whether iteration started or not."""

    def __init__(self, thread: EngineThread, request_id: str, outputs: asyncio.Queue):
        self.thread, self.request_id, self._outputs = thread, request_id, outputs
        self.finished = self._closed = False

    def __aiter__(self) -> RequestStream:
        return self

    async def __anext__(self) -> RequestOutput:
        if self.finished or self._closed:
            raise StopAsyncIteration
        output = await self._outputs.get()
        self.finished = output.finished
        return output

    def ready(self) -> list[RequestOutput]:
        """The outputs that have already arrived, without waiting (a consumer that fell behind
        sends them as one chunk)."""
        outputs = []
        while not self.finished and not self._closed and not self._outputs.empty():
            output = self._outputs.get_nowait()
            self.finished = output.finished
            outputs.append(output)
        return outputs

    async def aclose(self) -> None:
        if not self.finished and not self._closed:
            self.thread.abort(self.request_id)
        self._closed = True


class EngineThread:
    """Runs ``engine.step()`` in a background thread and routes outputs to asyncio consumers.

    ``on_finished(request_output)`` is called in the engine thread for every finished request
    (the server records its latencies there).
    """

    def __init__(self, engine: Engine, *, max_waiting: int = 256,
                 on_finished: Callable[[RequestOutput], None] | None = None, idle_wait_s: float = 0.05):
        self.engine = engine
        self.capacity = engine.scheduler.max_num_seqs + max_waiting
        self.on_finished = on_finished
        self._idle_wait_s = idle_wait_s
        self._lock = threading.Lock()
        self._streams: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="llmlab-engine", daemon=True)
        self.kv_stats: KVStats = engine.kv_stats()  # refreshed after every step (read by /metrics)
        self.tokens_per_s = 0.0  # generated tokens per second over the last few seconds
        self._window: list[tuple[float, int]] = []
        self.error: BaseException | None = None
        # Outputs waiting for their event loop to take them, and the loops already woken for them.
        self._mailbox: dict[asyncio.AbstractEventLoop, list] = {}

    # -- life --------------------------------------------------------------------------------------

    def start(self) -> EngineThread:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def in_flight(self) -> int:
        return len(self._streams)

    # -- requests ----------------------------------------------------------------------------------

    def submit(self, request: Request) -> RequestStream:
        """Queue ``request`` (built with ``engine.make_request``) and return its outputs as they come."""
        loop = asyncio.get_running_loop()
        outputs: asyncio.Queue = asyncio.Queue()
        with self._lock:
            if len(self._streams) >= self.capacity:
                raise QueueFull(f"{len(self._streams)} requests are in flight (limit {self.capacity}); "
                                "retry later")
            self._streams[request.request_id] = (loop, outputs)
        self._send_request(request)
        return RequestStream(self, request.request_id, outputs)

    def abort(self, request_id: str) -> None:
        self.engine.abort(request_id)
        self._wake.set()

    def _send_request(self, request: Request) -> None:
        self.engine.add_request(request)
        self._wake.set()

    def spec_stats(self):
        """The engine's speculative decoding counters (``SpecStats``), or None without a draft model."""
        return self.engine.spec_stats()

    # -- the engine thread -------------------------------------------------------------------------

    def _run(self) -> None:
        engine = self.engine
        while not self._stop.is_set():
            if not engine.has_unfinished():
                self._wake.wait(self._idle_wait_s)
                self._wake.clear()
                self._publish([], engine.kv_stats())
                continue
            try:
                outputs = engine.step()
            except BaseException as err:  # the engine itself broke: report it, fail what is waiting
                log.exception("the engine loop stopped")
                self.error = err
                self._fail_all(err)
                return
            self._publish(outputs, engine.kv_stats())

    def _publish(self, outputs: list[RequestOutput], kv_stats: KVStats) -> None:
        now = time.perf_counter()
        self.kv_stats = kv_stats
        new_tokens = sum(len(o.new_token_ids) for o in outputs)
        self._window = [(t, n) for t, n in self._window if now - t < 5.0] + ([(now, new_tokens)] if new_tokens else [])
        span = now - self._window[0][0] if self._window else 0.0
        self.tokens_per_s = sum(n for _, n in self._window) / max(span, 1.0) if self._window else 0.0
        deliveries: dict[asyncio.AbstractEventLoop, list] = {}
        for output in outputs:
            if output.finished and self.on_finished is not None:
                try:
                    self.on_finished(output)
                except Exception:  # metrics must never stop the engine
                    log.exception("on_finished callback failed")
            with self._lock:
                target = self._streams.get(output.request_id)
                if output.finished:
                    self._streams.pop(output.request_id, None)
            if target is not None:
                loop, queue = target
                deliveries.setdefault(loop, []).append((queue, output))
        # At most one wake-up per event loop, however many steps and requests: the loop thread and
        # this one share the GIL, and every wake-up is a hand-over of it (at 16 clients it cost a
        # tenth of the engine's time). A loop that has not yet taken the last step's outputs finds
        # this step's in the same mailbox.
        wake = []
        with self._lock:
            for loop, items in deliveries.items():
                box = self._mailbox.get(loop)
                if box is None:
                    self._mailbox[loop] = items
                    wake.append(loop)
                else:
                    box.extend(items)
        for loop in wake:
            try:
                loop.call_soon_threadsafe(self._deliver, loop)
            except RuntimeError:  # that event loop is closed: nobody is listening any more
                with self._lock:
                    self._mailbox.pop(loop, None)

    def _deliver(self, loop: asyncio.AbstractEventLoop) -> None:
        """In the event loop: hand every output waiting for this loop to its request's queue."""
        with self._lock:
            items = self._mailbox.pop(loop, [])
        for queue, output in items:
            queue.put_nowait(output)

    def _fail_all(self, err: BaseException, only: str | None = None) -> None:
        """End every request in flight (or just ``only``) with an error output."""
        with self._lock:
            if only is None:
                streams, self._streams = self._streams, {}
            else:
                streams = {only: self._streams.pop(only)} if only in self._streams else {}
        for request_id, (loop, queue) in streams.items():
            output = RequestOutput(request_id=request_id, new_token_ids=(), num_output_tokens=0, text="",
                                   finished=True, finish_reason="error", error=f"engine stopped: {err}",
                                   num_prompt_tokens=0)
            try:
                loop.call_soon_threadsafe(queue.put_nowait, output)
            except RuntimeError:
                pass
