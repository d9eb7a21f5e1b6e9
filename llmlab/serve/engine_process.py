"""The engine in its own process: the event loop and the engine stop sharing one interpreter lock.

With ``EngineThread`` the engine steps in a thread of the HTTP server's process. Python runs one
thread at a time (the GIL): every step's bookkeeping waits while the event loop encodes chunks and
writes sockets, and every wake-up of the loop hands the lock over (measured at 16 streaming
clients: a fifth of the engine thread's time was spent getting the lock back after waking the
loop). ``EngineProcess`` runs the same ``Engine`` in a child process instead:

- the HTTP process keeps its own ``Engine`` built with the same arguments (and a KV cache of one
  sequence) only to check and build requests (``make_request``: a bad request is still a 400 before
  anything is queued); what crosses the pipe is the request's id, prompt ids and ``SamplingParams``;
- the child builds the serving engine (``EngineSpec.build``), then loops: commands in (add, abort,
  stop), ``engine.step()``, and one message per step out: that step's ``RequestOutput``s (text
  already decoded in the child, so the HTTP process does no detokenisation) and the KV snapshot;
- in the HTTP process a reader thread receives each step and routes its outputs exactly as
  ``EngineThread`` does (one wake-up per event loop, ``RequestStream``s, admission control).

Failure and shutdown: if the child dies or its engine raises, every request in flight ends with an
error output (the server answers a 5xx JSON error, or an error event in a stream) and ``/health``
answers 503. The child exits when it is told to stop, and also as soon as its pipe closes, so it
never outlives the server, however the server ends.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .engine import Engine
from .engine_thread import EngineThread
from .request import Request, RequestOutput

__all__ = ["EngineProcess", "EngineSpec", "run_engine_loop"]

log = logging.getLogger("llmlab.serve")

IDLE_WAIT_S = 0.05  # how long the idle child waits for a command before looking again


@dataclass(frozen=True)
class EngineSpec:
    """How the child builds its engine: a shipped (or ``models_dir``) model by name, an optional
    draft model, and ``Engine``'s keyword arguments. Picklable: it crosses to the child process."""

    model: str
    draft: str | None = None
    models_dir: str | None = None
    engine_kwargs: dict[str, Any] = field(default_factory=dict)

    def build(self, **overrides: Any) -> Engine:
        from llmlab import pretrained

        target, tokenizer = pretrained.load(self.model, models_dir=self.models_dir)
        draft = pretrained.load(self.draft, models_dir=self.models_dir)[0] if self.draft else None
        return Engine(target, tokenizer, draft_model=draft, **{**self.engine_kwargs, **overrides})


def _failed(request_id: str, error: str) -> RequestOutput:
    return RequestOutput(request_id=request_id, new_token_ids=(), num_output_tokens=0, text="", finished=True,
                         finish_reason="error", error=error, num_prompt_tokens=0)


def run_engine_loop(conn, engine: Engine, idle_wait_s: float = IDLE_WAIT_S) -> None:
    """The child's loop over ``conn`` (a ``multiprocessing`` connection): returns when told to stop
    or when the other end is gone; an engine that raises is reported as ``("error", message)``."""
    while True:
        try:
            timeout = 0.0 if engine.has_unfinished() else idle_wait_s
            while conn.poll(timeout):
                command = conn.recv()
                kind = command[0]
                if kind == "add":
                    _, request_id, prompt_ids, params, arrival_s = command
                    try:
                        request = engine.make_request(prompt_ids, params, request_id=request_id)
                    except ValueError as err:  # checked in the HTTP process already: should not happen
                        conn.send(("step", [_failed(request_id, str(err))], engine.kv_stats(), engine.spec_stats()))
                        continue
                    request.metrics.arrival_s = arrival_s  # perf_counter is one clock for every process
                    engine.add_request(request)
                elif kind == "abort":
                    engine.abort(command[1])
                elif kind == "stop":
                    return
                timeout = 0.0
            if not engine.has_unfinished():
                continue
            try:
                outputs = engine.step()
            except Exception as err:
                log.exception("the engine loop stopped")
                conn.send(("error", f"{type(err).__name__}: {err}"))
                return
            conn.send(("step", outputs, engine.kv_stats(), engine.spec_stats()))
        except (EOFError, OSError, BrokenPipeError):
            return  # the HTTP process is gone: so are we


def _child_main(conn, spec: EngineSpec) -> None:
    try:
        engine = spec.build()
    except Exception as err:
        conn.send(("error", f"{type(err).__name__}: {err}"))
        return
    conn.send(("ready", (engine.kv_stats(), engine.spec_stats())))
    run_engine_loop(conn, engine)


class EngineProcess(EngineThread):
    """``EngineThread``'s interface, with the engine stepping in a child process built from ``spec``.

    ``engine`` is the HTTP process's own engine (the same model and arguments), used to check and
    build requests; it never steps.
    """

    def __init__(self, engine: Engine, spec: EngineSpec, *, max_waiting: int = 256,
                 on_finished: Callable[[RequestOutput], None] | None = None, start_timeout_s: float = 300.0):
        super().__init__(engine, max_waiting=max_waiting, on_finished=on_finished)
        self.spec = spec
        self.start_timeout_s = start_timeout_s
        context = multiprocessing.get_context("spawn")  # fork after torch's threads started is not safe
        self._conn, self._child_conn = context.Pipe()
        self._process = context.Process(target=_child_main, args=(self._child_conn, spec), name="llmlab-engine",
                                        daemon=True)
        self._thread.name = "llmlab-engine-reader"
        self._send_lock = threading.Lock()
        self._spec_stats = engine.spec_stats()

    # -- life --------------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The child process's id (None before ``start``)."""
        return self._process.pid

    def start(self) -> EngineProcess:
        self._process.start()
        self._child_conn.close()  # the child has it: when the child ends, our end reads EOF
        try:
            ready = self._conn.poll(self.start_timeout_s)
            kind, info = self._conn.recv() if ready else ("error", f"no answer within {self.start_timeout_s} s")
        except (EOFError, OSError):
            kind, info = "error", f"it exited with code {self._process.exitcode}"
        if kind != "ready":
            self.stop()
            raise RuntimeError(f"the engine process did not start: {info}")
        self.kv_stats, self._spec_stats = info  # the child's cache, not this process's one-sequence one
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        self._send(("stop",))
        if self._process.pid is not None:
            self._process.join(timeout_s)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(timeout_s)
        if self._thread.is_alive():
            self._thread.join(timeout_s)  # the child's end closed: the reader reads EOF and returns
        self._conn.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self._process.is_alive()

    # -- requests ----------------------------------------------------------------------------------

    def _send(self, message: tuple) -> bool:
        try:
            with self._send_lock:
                self._conn.send(message)
            return True
        except (OSError, ValueError):  # the child is gone (or the pipe closed at stop)
            return False

    def _send_request(self, request: Request) -> None:
        sent = self.error is None and self._send(("add", request.request_id, request.token_ids[:],
                                                  request.params, request.metrics.arrival_s))
        if not sent:  # nobody will ever answer it: it fails now
            self._fail_all(self.error or RuntimeError("the engine process is not running"),
                           only=request.request_id)

    def abort(self, request_id: str) -> None:
        self._send(("abort", request_id))

    def spec_stats(self):
        return self._spec_stats

    # -- the reader thread -------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                if not self._stop.is_set():
                    self._died(RuntimeError(f"the engine process exited (code {self._process.exitcode})"))
                return
            if message[0] == "step":
                _, outputs, kv_stats, self._spec_stats = message
                self._publish(outputs, kv_stats)
            elif message[0] == "error":
                self._died(RuntimeError(message[1]))
                return

    def _died(self, err: BaseException) -> None:
        log.error("the engine process stopped: %s", err)
        self.error = err
        self._fail_all(err)
        self.tokens_per_s = 0.0
