"""Run one prepared notebook in the jail and collect what came out, once every process in it has ended.

The trusted side starts bubblewrap, hands the job to the runner on its stdin, and reads the runner's JSON
lines with a byte cap and a wall-clock deadline. Past the deadline, or past the cap, the jail is killed (the
whole PID namespace goes with it). Nothing the jail wrote is read from disk: there is no disk it can write
that outlives it. While it runs, `JailMemory` adds up the memory of every process in it and what its tmpfs
folders hold; past `Limits.jail_memory_bytes` the jail is killed (cgroup v2 memory limits would do the same
where a grader may create cgroups; a watchdog works everywhere bubblewrap does).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
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
    peak_memory: int = 0  # the most the jail held at once (bytes: processes + tmpfs), as sampled
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
    package = _llmlab_package()
    if package:  # the kernel imports the llmlab this grader imports (bound read-only at the same path)
        env["PYTHONPATH"] = os.path.dirname(package)
    # The numerical code paths of MKL and of torch's kernels follow the instructor's environment, so the suite can
    # check that no grade depends on them (tests/test_numerics.py); threads stay at one for every submission.
    for key in NUMERICS_VARIABLES:
        value = os.environ.get(key)
        if value is not None and _SAFE_VALUE.fullmatch(value):  # a setting, not a way to smuggle text in
            env[key] = value
    return env


def _llmlab_package() -> str | None:
    """Where this process's llmlab package is (an editable install may point elsewhere than PYTHONPATH)."""
    import importlib.util

    spec = importlib.util.find_spec("llmlab")
    if spec and spec.submodule_search_locations:
        return os.path.realpath(list(spec.submodule_search_locations)[0])
    return None


# Variables that choose a numerical code path without changing what the code computes (up to rounding).
NUMERICS_VARIABLES = ("MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY")
_SAFE_VALUE = re.compile(r"[A-Za-z0-9_,.]{1,40}")


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
        _collect(cmd, payload, limits, out, cwd=cwd, isolated=sandbox.isolated)
    return out


def bootstrap_code(grader_dir: str, config: dict) -> str:
    """The runner's first request to the kernel: install the guard, leave no names behind."""
    return (f"__import__('sys').path.insert(0, {grader_dir!r}); "
            f"__import__('llmlab_guard').install({json.dumps(config)!r}); "
            f"__import__('sys').path.remove({grader_dir!r})")


def _collect(cmd: list[str], payload: bytes, limits: Limits, out: RunOutput, cwd: Path | None,
             isolated: bool = True) -> None:
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
    memory = JailMemory(proc.pid, tmpfs=isolated, tmpfs_size=limits.tmpfs_bytes)  # without a jail, /tmp is the host's: not the submission's
    next_sample = start
    try:
        while selector.get_map():
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                out.killed = f"superó el tiempo total de {limits.total_timeout} s"
                break
            if now >= next_sample:
                next_sample = now + MEMORY_SAMPLE_SECONDS
                processes, files = memory.sample(limits.jail_memory_bytes)
                out.peak_memory = max(out.peak_memory, processes + files)
                if processes + files > limits.jail_memory_bytes:
                    out.killed = (f"superó el límite de memoria de la entrega ({limits.jail_memory_bytes // 2**20} "
                                  f"MiB: {processes // 2**20} MiB en procesos y {files // 2**20} MiB en ficheros "
                                  "temporales)")
                    break
            for key, _ in selector.select(timeout=min(remaining, MEMORY_SAMPLE_SECONDS)):
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


MEMORY_SAMPLE_SECONDS = 0.5
JAIL_TMPFS = ("/tmp", "/dev/shm", HOME)


class JailMemory:
    """What a jail holds right now: the PSS of every process under bwrap (shared pages counted once) and the
    bytes its tmpfs folders hold (RAM too, and no process's). Read from /proc, outside the jail."""

    def __init__(self, bwrap_pid: int, tmpfs: bool = True, tmpfs_size: int = Limits.tmpfs_bytes):
        self.root, self.tmpfs, self.tmpfs_size = bwrap_pid, tmpfs, tmpfs_size
        self.page = os.sysconf("SC_PAGE_SIZE")

    def processes(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/stat", "rb") as fh:
                        ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                children.setdefault(ppid, []).append(int(entry.name))
        found, todo = [], [self.root]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def _rss(self, pid: int) -> int:
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                return int(fh.read().split()[1]) * self.page
        except (OSError, ValueError, IndexError):
            return 0

    def _pss(self, pid: int) -> int:
        """Proportional set size: shared pages (a forked child's, libraries) split between their users."""
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Pss:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError):
            pass
        return self._rss(pid)  # not ours to read (an undumpable process, no privileges): its resident pages

    def _tmpfs(self, pids: list[int]) -> int:
        for pid in pids:  # any process inside sees the jail's mounts through /proc/<pid>/root
            total, ok = 0, False
            for folder in JAIL_TMPFS:
                try:
                    st = os.statvfs(f"/proc/{pid}/root{folder}")
                except OSError:
                    continue
                if abs(st.f_blocks * st.f_frsize - self.tmpfs_size) > 2**20:
                    continue  # not the jail's tmpfs (bwrap before it mounted them: the host's /tmp)
                ok = True
                total += (st.f_blocks - st.f_bfree) * st.f_frsize
            if ok:
                return total
        return 0

    def sample(self, bound: int | None = None) -> tuple[int, int]:
        """(bytes in processes, bytes in tmpfs files). Resident sizes are cheap and never less than PSS: the
        exact PSS (which walks page tables) is read only when they add up to more than `bound`."""
        pids = self.processes()
        files = self._tmpfs(pids) if self.tmpfs else 0
        resident = sum(self._rss(pid) for pid in pids)
        if bound is not None and resident + files <= bound:
            return resident, files
        return sum(self._pss(pid) for pid in pids), files


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
