"""The engine in its own process (``python -m llmlab serve --engine-process``): it dies with the
server, however the server ends, and its failures reach the clients as 5xx JSON errors, not hangs.

The behaviour the server shares with the threaded engine (same tokens, streaming, cancellation,
logprobs, limits, metrics) is tested against both modes in ``tests/test_serve_server.py``.
"""

import multiprocessing
import os
import signal
import threading
import time

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from llmlab import pretrained  # noqa: E402
from llmlab.serve import Engine, SamplingParams, launch  # noqa: E402
from llmlab.serve.engine_process import run_engine_loop  # noqa: E402

LONG = {"model": "es-chat", "messages": [{"role": "user", "content": "Cuéntame una historia."}], "max_tokens": 200,
        "ignore_eos": True}


def _children(pid: int) -> list[int]:
    """Every process under ``pid`` (children of all its threads, and theirs)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            continue
        for kid in kids:
            found += [kid, *_children(kid)]
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited
    except OSError:
        return False


def _wait_gone(pids, timeout_s: float = 15.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _engine_pid(server) -> int:
    """The engine process: the child of the server that imported torch (the other is multiprocessing's tracker)."""
    for pid in _children(server.pid):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"spawn_main" in f.read():
                return pid
    raise AssertionError(f"no engine process under {server.pid}: {_children(server.pid)}")


@pytest.mark.parametrize("how", ["stop", "SIGTERM", "SIGKILL"])
def test_the_engine_process_dies_with_the_server(how):
    server = launch("es-chat", max_num_seqs=4, engine_process=True)
    try:
        assert httpx.post(server.url + "/v1/chat/completions", json={**LONG, "max_tokens": 4}, timeout=60).status_code == 200
        engine = _engine_pid(server)
        family = _children(server.pid)
        assert engine in family and _alive(engine)
        if how == "stop":
            server.stop()
        else:
            os.kill(server.pid, getattr(signal, how))
            server.proc.wait(30)
        assert _wait_gone(family) == [], f"left behind after {how}: {family}"
    finally:
        server.stop()


def test_metrics_before_any_request_describe_the_engine_process_cache():
    with launch("es-chat", max_num_seqs=8, engine_process=True) as process, launch("es-chat", max_num_seqs=8) as thread:
        def blocks(server):
            text = httpx.get(server.url + "/metrics", timeout=10).text
            return next(line for line in text.splitlines() if line.startswith("llmlab_kv_blocks_total"))

        assert blocks(process) == blocks(thread)  # not the one-sequence cache the HTTP process checks requests with


def test_an_engine_process_that_dies_fails_its_requests_with_500_and_health_says_503():
    with launch("es-chat", max_num_seqs=4, engine_process=True) as server:
        engine = _engine_pid(server)
        answers = {}

        def ask():
            answers["whole"] = httpx.post(server.url + "/v1/chat/completions", json=LONG, timeout=60)

        asker = threading.Thread(target=ask)
        asker.start()
        with httpx.stream("POST", server.url + "/v1/chat/completions", json={**LONG, "stream": True},
                          timeout=60) as stream:
            lines = stream.iter_lines()
            for _ in range(4):  # the stream has started: the engine is generating
                next(lines)
            os.kill(engine, signal.SIGKILL)
            rest = "\n".join(lines)
        asker.join(60)
        assert not asker.is_alive(), "a request hung after the engine died"
        whole = answers["whole"]
        assert whole.status_code == 500 and whole.json()["error"]["type"] == "server_error"
        assert "engine" in whole.json()["error"]["message"]
        assert '"error"' in rest and "data: [DONE]" in rest  # the stream ends with an error event
        health = httpx.get(server.url + "/health", timeout=10)
        assert health.status_code == 503 and health.json()["error"]["type"] == "server_error"
        late = httpx.post(server.url + "/v1/chat/completions", json={**LONG, "max_tokens": 4}, timeout=30)
        assert late.status_code == 500  # answered at once, not queued for an engine that is gone


def test_the_engine_loop_reports_an_engine_that_raises_and_stops():
    model, tok = pretrained.load("es-chat")
    engine = Engine(model, tok, max_num_seqs=2)

    def broken_step():
        raise RuntimeError("a broken kernel")

    engine.step = broken_step
    ours, theirs = multiprocessing.Pipe()
    loop = threading.Thread(target=run_engine_loop, args=(theirs, engine))
    loop.start()
    ours.send(("add", "r1", [tok.bos_id, 5, 6], SamplingParams(max_tokens=3), time.perf_counter()))
    assert ours.poll(30)
    assert ours.recv() == ("error", "RuntimeError: a broken kernel")
    loop.join(10)
    assert not loop.is_alive()


def test_the_engine_loop_answers_steps_and_stops_when_the_pipe_closes():
    model, tok = pretrained.load("es-chat")
    engine = Engine(model, tok, max_num_seqs=2)
    ours, theirs = multiprocessing.Pipe()
    loop = threading.Thread(target=run_engine_loop, args=(theirs, engine))
    loop.start()
    prompt = [tok.bos_id] + tok.encode("Hola")
    ours.send(("add", "r1", prompt, SamplingParams(max_tokens=5, temperature=0), time.perf_counter()))
    tokens, last = [], None
    while last is None or not last.finished:
        assert ours.poll(30)
        kind, outputs, kv, _ = ours.recv()
        assert kind == "step"
        for output in outputs:
            tokens += output.new_token_ids
            last = output
    assert tokens == Engine(model, tok).generate([prompt], SamplingParams(max_tokens=5, temperature=0))[0].token_ids
    assert kv.used_blocks == 0 and kv.running_requests == 0
    ours.close()  # the server is gone: the loop must end
    loop.join(10)
    assert not loop.is_alive()
