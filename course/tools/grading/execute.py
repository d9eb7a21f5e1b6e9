"""Run one prepared notebook in the jail and collect what came out, once every process in it has ended.

The trusted side starts bubblewrap, hands the job to the runner on its stdin, and reads the runner's JSON
lines with a byte cap and a wall-clock deadline. Past the deadline, or past the cap, the jail is killed (the
whole PID namespace goes with it). Nothing the jail wrote is read from disk: there is no disk it can write
that outlives it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .sandbox import GRADER, HOME, Limits, Sandbox

MPL_CACHE = "/grader-cache/matplotlib"


@dataclasses.dataclass
class RunOutput:
    """What the runner said, as parsed on the trusted side (still untrusted content)."""

    ready: bool = False
    cells: dict[int, dict] = dataclasses.field(default_factory=dict)
    stop: dict | None = None
    final: list[dict] | None = None
    error: str | None = None
    killed: str | None = None  # why the trusted side killed the jail, if it did
    wall: float = 0.0
    stderr: str = ""


def kernel_env() -> dict[str, str]:
    """The environment of the runner and the kernel: nothing of the instructor's own environment leaks in."""
    env = {
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": HOME,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "JUPYTER_RUNTIME_DIR": "/tmp/jupyter-runtime",
        "JUPYTER_CONFIG_DIR": "/tmp/jupyter-config",
        "IPYTHONDIR": "/tmp/ipython",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "LLMLAB_MPL_SEED": MPL_CACHE,
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "NBGRADER_EXECUTION": "autograde",
        # Full tracebacks in the autograded notebooks (the instructor's view); feedback keeps only the Spanish
        # message (feedback.render). LLMLAB_TRACEBACK=short in the instructor's environment turns it off.
        "LLMLAB_TRACEBACK": os.environ.get("LLMLAB_TRACEBACK", "full"),
    }
    # The numerical code paths of MKL and of torch's kernels follow the instructor's environment, so the suite can
    # check that no grade depends on them (tests/test_numerics.py); threads stay at one for every submission.
    for key in NUMERICS_VARIABLES:
        if key in os.environ:
            env[key] = os.environ[key]
    return env


# Variables that choose a numerical code path without changing what the code computes (up to rounding).
NUMERICS_VARIABLES = ("MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY")


def matplotlib_cache() -> Path:
    """Matplotlib's font list, built once per machine so each jail does not spend a second rebuilding it."""
    cache = Path(tempfile.gettempdir()) / f"llmlab-grading-mpl-{os.getuid()}"
    if not (cache / ".ready").exists():
        cache.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "MPLCONFIGDIR": str(cache)}
        subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env, check=False,
                       capture_output=True)
        for path in cache.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        cache.chmod(0o755)
        (cache / ".ready").touch()
    return cache


def run_job(job: dict, guard_config: dict, seed_files: dict[str, bytes], limits: Limits,
            sandbox: Sandbox) -> RunOutput:
    """Run `job` (cells, see runner.py) in a fresh jail seeded with `seed_files` {relative name: bytes}."""
    out = RunOutput()
    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="llmlab-seed-") as scratch:
        seed = Path(scratch) / "seed"
        seed.mkdir()
        for name, data in seed_files.items():
            path = seed / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        for path in [seed, *seed.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        env = kernel_env()
        if sandbox.isolated:
            grader, runner, cwd = GRADER, f"{GRADER}/runner.py", None
        else:  # no jail: the same programs, from host paths (the report says loudly that nothing was isolated)
            grader = Path(scratch) / "grader"
            grader.mkdir()
            shutil.copytree(here / "guard", grader / "llmlab_guard", ignore=shutil.ignore_patterns("__pycache__"))
            runner, cwd = str(here / "runner.py"), seed
            env.update(HOME=str(seed), JUPYTER_RUNTIME_DIR=str(Path(scratch) / "runtime"),
                       IPYTHONDIR=str(Path(scratch) / "ipython"), MPLCONFIGDIR=str(Path(scratch) / "mpl"),
                       LLMLAB_MPL_SEED=str(matplotlib_cache()))
        job = {**job, "bootstrap": bootstrap_code(str(grader), guard_config),
               "final": f"{guard_config['handle']}.final({guard_config['final_token']!r})",
               "env": env, "cell_timeout": limits.cell_timeout, "startup_timeout": 120,
               "output_bytes": limits.output_bytes}
        cmd = sandbox.command([sys.executable, "-I", runner], seed, limits, env,
                              readonly={MPL_CACHE: matplotlib_cache()})
        payload = json.dumps(job, ensure_ascii=False).encode("utf-8")
        _collect(cmd, payload, limits, out, cwd=cwd)
    return out


def bootstrap_code(grader_dir: str, config: dict) -> str:
    """The runner's first request to the kernel: install the guard, leave no names behind."""
    return (f"__import__('sys').path.insert(0, {grader_dir!r}); "
            f"__import__('llmlab_guard').install({json.dumps(config)!r}); "
            f"__import__('sys').path.remove({grader_dir!r})")


def _collect(cmd: list[str], payload: bytes, limits: Limits, out: RunOutput, cwd: Path | None) -> None:
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, cwd=cwd)
    feeder = threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True)
    feeder.start()
    deadline = start + limits.total_timeout
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "out")
    selector.register(proc.stderr, selectors.EVENT_READ, "err")
    buffer, received, stderr = bytearray(), 0, bytearray()
    try:
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                out.killed = f"superó el tiempo total de {limits.total_timeout} s"
                break
            for key, _ in selector.select(timeout=min(remaining, 1.0)):
                chunk = os.read(key.fileobj.fileno(), 1 << 20)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                if key.data == "err":
                    stderr += chunk
                    del stderr[:-65536]
                    continue
                received += len(chunk)
                if received > limits.result_bytes:
                    out.killed = f"devolvió más de {limits.result_bytes // 2**20} MiB"
                    break
                buffer += chunk
                *lines, rest = bytes(buffer).split(b"\n")
                buffer = bytearray(rest)
                for line in lines:
                    _take(line, out)
            if out.killed:
                break
    finally:
        selector.close()
        if proc.poll() is None:
            _kill(proc)
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            stream.close()
    out.wall = time.monotonic() - start
    out.stderr = stderr.decode("utf-8", "replace")[-4000:]
    if not out.ready and not out.error and not out.killed:
        out.error = f"el corrector no arrancó (código {proc.returncode}): {out.stderr[-600:]}"


def _feed(stdin, payload: bytes) -> None:
    try:
        stdin.write(payload)
        stdin.close()
    except (BrokenPipeError, OSError):
        pass


def _kill(proc: subprocess.Popen) -> None:
    """Kill the jail: bwrap, its PID namespace (and every process in it) go at once."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _take(line: bytes, out: RunOutput) -> None:
    try:
        message = json.loads(line)
    except ValueError:
        return
    if not isinstance(message, dict):
        return
    kind = message.get("kind")
    if kind == "ready":
        out.ready = True
        out.cells[-1] = {"records": message.get("records") or []}
    elif kind == "cell" and isinstance(message.get("i"), int) and message["i"] not in out.cells:
        out.cells[message["i"]] = message
    elif kind == "stop" and out.stop is None:
        out.stop = message
    elif kind == "final" and out.final is None:
        out.final = message.get("records") or []
    elif kind == "error" and out.error is None:
        detail = " ".join(f"{o.get('ename', '')}: {o.get('evalue', '')}" for o in message.get("outputs") or []
                          if isinstance(o, dict) and o.get("output_type") == "error")
        out.error = (str(message.get("what")) + (f" ({detail})" if detail else ""))[:2000]
