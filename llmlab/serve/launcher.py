"""Start the server from a notebook: ``launch("es-chat")`` returns a handle with ``.url`` and ``.stop()``.

The server runs as a separate process (``python -m llmlab serve``), as it would in production, so
a notebook measures it from the outside, like any client. Nothing may outlive the notebook:

- ``with launch(...) as server:`` stops it when the block ends, also when a cell fails inside it;
- ``server.stop()`` stops it explicitly (standard input closed, then SIGTERM, then SIGKILL);
- a handle that is garbage-collected (the cell ran again and the name now points to a new
  server), and every handle still alive when Python exits (``atexit``), is stopped too;
- if the notebook's kernel dies without any of that (killed, crashed), the server notices that
  its standard input, a pipe from the kernel, was closed, and exits by itself.

Failures say why: if the server does not come up within ``timeout_s``, it is stopped and the
error carries the end of its log.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref

__all__ = ["ServerHandle", "launch", "stop_all"]

_LIVE: "weakref.WeakSet[ServerHandle]" = weakref.WeakSet()
_LOCK = threading.Lock()


def _stop_process(proc: subprocess.Popen, timeout_s: float) -> None:
    """Close stdin (the server's signal to exit), then SIGTERM, then SIGKILL; always reap it."""
    if proc.poll() is None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout_s / 2)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout_s / 2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    elif proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass


class ServerHandle:
    """A running ``llmlab serve`` process: ``url``, ``port``, ``pid``, ``stop()``, ``logs()``."""

    def __init__(self, proc: subprocess.Popen, workdir: str, host: str, model: str):
        self.proc = proc
        self.model = model
        self.host = host
        self.port: int | None = None
        self._workdir = workdir
        self.log_path = os.path.join(workdir, "server.log")
        # Runs on stop(), on garbage collection and at interpreter exit, whichever comes first.
        self._finalizer = weakref.finalize(self, _cleanup, proc, workdir)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:43121``; the OpenAI API is under ``url + "/v1"``."""
        if self.port is None:
            raise RuntimeError("the server has not started yet")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def logs(self) -> str:
        """What the server printed so far (its standard output and error)."""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the server and wait for it (idempotent)."""
        if self._finalizer.alive:
            self._finalizer.detach()
            _cleanup(self.proc, self._workdir, timeout_s)
        with _LOCK:
            _LIVE.discard(self)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.alive else f"stopped (exit code {self.proc.returncode})"
        where = self.url if self.port is not None else "starting"
        return f"<llmlab server {self.model} at {where}, pid {self.pid}, {state}>"


def _cleanup(proc: subprocess.Popen, workdir: str, timeout_s: float = 10.0) -> None:
    _stop_process(proc, timeout_s)
    shutil.rmtree(workdir, ignore_errors=True)


def launch(model: str = "es-chat", *, host: str = "127.0.0.1", port: int = 0, draft_model: str | None = None,
           num_speculative_tokens: int | None = None, max_num_seqs: int | None = None, max_waiting: int | None = None,
           kv_blocks: int | None = None, prefix_caching: bool = True, engine_process: bool = False,
           timeout_s: float = 120.0,
           extra_args: list[str] | None = None, env: dict[str, str] | None = None) -> ServerHandle:
    """Start ``python -m llmlab serve`` in a subprocess and wait until it answers ``/health``.

    ``port=0`` (the default) takes a free port; read it from ``handle.url``. The keyword arguments
    map to the command's options (``python -m llmlab serve --help``).
    """
    workdir = tempfile.mkdtemp(prefix="llmlab-serve-")
    port_file = os.path.join(workdir, "port")
    cmd = [sys.executable, "-m", "llmlab", "serve", "--model", model, "--host", host, "--port", str(port),
           "--port-file", port_file, "--exit-with-stdin"]
    options = {"--draft-model": draft_model, "--num-speculative-tokens": num_speculative_tokens,
               "--max-num-seqs": max_num_seqs, "--max-waiting": max_waiting, "--kv-blocks": kv_blocks}
    for flag, value in options.items():
        if value is not None:
            cmd += [flag, str(value)]
    if not prefix_caching:
        cmd.append("--no-prefix-caching")
    if engine_process:
        cmd.append("--engine-process")
    cmd += list(extra_args or [])
    log = open(os.path.join(workdir, "server.log"), "wb")
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, close_fds=True)
    finally:
        log.close()  # the child has its own copy
    handle = ServerHandle(proc, workdir, host, model)
    with _LOCK:
        _LIVE.add(handle)
    try:
        handle.port = _wait_ready(handle, port_file, timeout_s)
    except BaseException:
        logs = handle.logs()
        handle.stop()
        raise RuntimeError(f"the llmlab server ({' '.join(cmd[2:6])}) did not start; its log ends with:\n"
                           f"{logs[-3000:]}") from None
    return handle


def _wait_ready(handle: ServerHandle, port_file: str, timeout_s: float) -> int:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout_s
    port = None
    while time.monotonic() < deadline:
        if not handle.alive:
            raise RuntimeError(f"the server exited with code {handle.proc.returncode}")
        if port is None and os.path.exists(port_file):
            with open(port_file) as f:
                port = int(f.read().strip())
            handle.port = port
        if port is not None:
            try:
                with urllib.request.urlopen(f"{handle.url}/health", timeout=5) as answer:
                    if answer.status == 200:
                        return port
            except (urllib.error.URLError, OSError):
                pass
        time.sleep(0.05)
    raise TimeoutError(f"no answer from the server within {timeout_s} s")


def stop_all() -> None:
    """Stop every server this Python process launched."""
    with _LOCK:
        handles = list(_LIVE)
    for handle in handles:
        handle.stop()


atexit.register(stop_all)
