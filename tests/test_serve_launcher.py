"""llmlab.serve.launch: a server started from a notebook never outlives it.

Stopped on ``stop()``, at the end of a ``with`` block (also when the block raises), when the handle
is garbage-collected, when Python exits, and when the parent process is killed outright.
"""

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from llmlab.serve import launch, launcher  # noqa: E402
from llmlab.serve.server import request_json  # noqa: E402

pytestmark = pytest.mark.slow  # every test starts a server (a few seconds each)


def _gone(pid: int, timeout_s: float = 15.0) -> bool:
    """True once no process ``pid`` exists (reaped or not our child any more)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie child of ours counts as gone once reaped
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


def test_a_with_block_serves_then_stops_the_server_even_when_a_cell_fails_inside_it():
    with pytest.raises(ZeroDivisionError):
        with launch("es-chat") as server:
            assert server.alive and server.url.startswith("http://127.0.0.1:")
            assert request_json(server.url + "/health") == {"status": "ok"}
            assert "es-chat" in repr(server) and "running" in repr(server)
            pid, workdir = server.pid, server._workdir
            1 / 0  # the cell fails
    assert not server.alive and _gone(pid) and not os.path.exists(workdir)
    assert "stopped" in repr(server)
    server.stop()  # idempotent


def test_a_forgotten_handle_is_stopped_when_garbage_collected():
    server = launch("es-chat")
    pid = server.pid
    del server
    gc.collect()
    assert _gone(pid)


def _parent_script(body: str) -> str:
    return textwrap.dedent(f"""
        import sys, time
        from llmlab.serve import launch
        server = launch("es-chat")
        print(server.pid, server.url, server._workdir, flush=True)
        {body}
    """)


def test_the_server_exits_when_its_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", _parent_script("time.sleep(600)")], stdout=subprocess.PIPE,
                              text=True)
    try:
        line = parent.stdout.readline()
        assert line, "the parent script did not start a server"
        pid, workdir = int(line.split()[0]), line.split()[2]
        assert os.path.isdir(workdir)
        parent.send_signal(signal.SIGKILL)  # no atexit, no finally: only the closed pipe tells the server
        parent.wait(10)
        assert _gone(pid), "the server outlived its killed parent"
        assert not os.path.exists(workdir)  # it removed launch()'s folder on its way out
    finally:
        if parent.poll() is None:
            parent.kill()


def test_the_server_is_stopped_when_the_parent_exits_without_stopping_it():
    parent = subprocess.run([sys.executable, "-c", _parent_script("sys.exit(0)")], capture_output=True, text=True,
                            timeout=120)
    assert parent.returncode == 0, parent.stderr
    pid, workdir = int(parent.stdout.split()[0]), parent.stdout.split()[2]
    assert _gone(pid) and not os.path.exists(workdir)


def test_a_server_that_cannot_start_is_stopped_and_its_log_explains_why(monkeypatch):
    started = []
    real_popen = launcher.subprocess.Popen

    def recording_popen(*args, **kwargs):
        started.append(real_popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(launcher.subprocess, "Popen", recording_popen)
    with pytest.raises(RuntimeError, match="did not start(.|\n)*modelo desconocido"):
        launch("no-such-model", timeout_s=60)
    assert started and started[0].poll() is not None
