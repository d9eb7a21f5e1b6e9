"""The jail one submission runs in: bubblewrap, a dedicated user id, resource limits.

What the student's code sees (everything else does not exist for it):

    /usr /etc /bin /lib...      the system, read-only
    <python> <venv> <llmlab>    the installed environment, read-only, at their usual paths
    /grader                     the runner and the kernel guard (our code), read-only
    /seed                       this submission's support files, read-only (copied to the home on start)
    /home/alumno                its working folder: a private tmpfs, size-limited
    /tmp, /dev/shm              private tmpfs, size-limited
    /proc                       a new procfs: only the jail's processes

No network (a new network namespace holds only loopback), a new PID namespace (when the runner ends, the
kernel and anything it started are killed with it), a user id of its own (so RLIMIT_NPROC counts only this
submission's processes), no capabilities, no_new_privs, and prlimit's limits on CPU time, address space,
processes, open files and file size.

Where bubblewrap is missing or cannot create namespaces, `Sandbox.detect()` says so and grading falls back to
running with resource limits only: the report and the table say it loudly (flag "sin aislar").
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

HOME = "/home/alumno"
GRADER = "/grader"
SEED = "/seed"
MIB = 2**20


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits for one submission (all of its processes, or each one for per-process limits)."""

    cell_timeout: int = 120  # seconds of wall time per cell
    total_timeout: int = 900  # seconds of wall time for the whole submission
    cpu_seconds: int = 900  # CPU time per process
    memory_bytes: int = 4 * 1024 * MIB  # address space per process (torch alone maps ~0.8 GiB)
    # The whole submission: the memory of all its processes (PSS) plus what its tmpfs folders hold. Watched
    # from outside (execute.JailMemory) and the jail killed past it: per-process limits do not add up.
    jail_memory_bytes: int = 6 * 1024 * MIB
    processes: int = 128  # processes and threads of the jail's user (kernel and runner: ~25 threads)
    open_files: int = 512
    file_bytes: int = 256 * MIB  # largest file it may write
    tmpfs_bytes: int = 512 * MIB  # each of /home/alumno, /tmp and /dev/shm
    output_bytes: int = 200_000  # text kept per cell output (the rest is cut, with a note)
    result_bytes: int = 256 * MIB  # everything the runner may send back


@dataclasses.dataclass(frozen=True)
class Sandbox:
    """How submissions are jailed on this machine: 'bwrap' (as root), 'bwrap-user' (unprivileged) or 'none'."""

    mode: str
    reason: str = ""

    @property
    def isolated(self) -> bool:
        return self.mode != "none"

    @classmethod
    def detect(cls) -> "Sandbox":
        """Try bubblewrap once; say why not when it cannot be used (LLMLAB_SANDBOX=none: don't even try)."""
        if os.environ.get("LLMLAB_SANDBOX") == "none":
            return cls("none", "LLMLAB_SANDBOX=none en el entorno")
        bwrap = shutil.which("bwrap")
        if not bwrap:
            return cls("none", "bubblewrap no está instalado (apt-get install bubblewrap; make sysdeps)")
        mode = "bwrap" if os.geteuid() == 0 and shutil.which("setpriv") else "bwrap-user"
        probe = cls(mode)
        cmd = probe._bwrap_args(seed=None, uid=_jail_uid()) + ["--", "/bin/true"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return cls("none", f"bubblewrap no arranca: {exc}")
        if proc.returncode != 0:
            return cls("none", f"bubblewrap no puede crear el entorno aislado: {proc.stderr.strip()[:200]}")
        return probe

    # ------------------------------------------------------------------------------------------ command line

    def command(self, argv: list[str], seed: Path | None, limits: Limits, env: dict[str, str],
                readonly: dict[str, Path] | None = None) -> list[str]:
        """The full command line that runs `argv` (a program and its arguments) jailed.

        `seed` is bound read-only at /seed, and each `readonly` {path in the jail: host path} likewise.
        """
        uid = _jail_uid()
        limit_args = [
            "prlimit", f"--cpu={limits.cpu_seconds}", f"--as={limits.memory_bytes}",
            f"--nproc={self._nproc(limits)}", f"--nofile={limits.open_files}", f"--fsize={limits.file_bytes}",
            "--core=0", "--",
        ]
        if self.mode == "none":
            return ["env", "-i", *[f"{k}={v}" for k, v in env.items()], *limit_args, *argv]
        cmd = self._bwrap_args(seed=seed, uid=uid, limits=limits)
        created: set[str] = {HOME.rsplit("/", 1)[0]}
        for dest, src in (readonly or {}).items():
            cmd += _parents(dest, created) + ["--ro-bind", str(src), dest]
        cmd += ["--clearenv"]
        for key, value in env.items():
            cmd += ["--setenv", key, value]
        cmd += ["--"]
        if self.mode == "bwrap":  # root outside: become a user of our own, with no capabilities at all
            cmd += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
                    "--inh-caps=-all", "--bounding-set=-all"]
        return cmd + limit_args + argv

    def _nproc(self, limits: Limits) -> int:
        if self.mode == "bwrap":
            return limits.processes  # a user id of its own: only this jail counts
        # Our own user id: RLIMIT_NPROC counts every process of the instructor too; leave room for them.
        return limits.processes + _processes_of_this_user()

    def _bwrap_args(self, seed: Path | None, uid: int, limits: Limits | None = None) -> list[str]:
        limits = limits or Limits()
        size = str(limits.tmpfs_bytes)
        args = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "corrector"]
        if self.mode == "bwrap-user":
            args += ["--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL"]
        # The private /proc, /dev and /tmp first: the environment bound below may live under /tmp (a venv there).
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
                 "--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        created: set[str] = {"/proc", "/dev", "/dev/shm", "/tmp"}
        for src, dest in _readonly_paths():
            args += _parents(dest, created)
            if os.path.islink(src) and src.startswith("/") and src.count("/") == 1:
                args += ["--symlink", os.readlink(src), dest]  # /bin -> usr/bin on merged-/usr systems
            else:
                args += ["--ro-bind", src, dest]
        grader = grader_copy()
        args += _parents(GRADER, created)
        args += ["--perms", "0755", "--dir", GRADER,
                 "--ro-bind", str(grader / "runner.py"), f"{GRADER}/runner.py",
                 "--ro-bind", str(grader / "llmlab_guard"), f"{GRADER}/llmlab_guard"]
        if seed is not None:
            args += ["--ro-bind", str(seed), SEED]
        args += _parents(HOME, created)
        args += ["--perms", "1777", "--size", size, "--tmpfs", HOME, "--chdir", HOME]
        return args


def grader_copy() -> Path:
    """The runner and the guard, copied out of the grading checkout (so the jail's mountinfo, which names the
    source of every bind mount, does not show where the grading code lives). One copy per content."""
    import hashlib
    import tempfile

    here = Path(__file__).resolve().parent
    sources = [here / "runner.py", *sorted((here / "guard").glob("*.py"))]
    digest = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in sources)).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"llmlab-grader-{os.getuid()}-{digest}"
    if not (target / ".ready").exists():
        staging = Path(tempfile.mkdtemp(prefix="llmlab-grader-", dir=tempfile.gettempdir()))
        (staging / "llmlab_guard").mkdir()
        shutil.copy(here / "runner.py", staging / "runner.py")
        for path in sources[1:]:
            shutil.copy(path, staging / "llmlab_guard" / path.name)
        for path in [staging, *staging.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        (staging / ".ready").touch()
        try:
            staging.rename(target)
        except OSError:  # another worker made it first
            shutil.rmtree(staging, ignore_errors=True)
    return target


def jail_uids() -> range:
    """The user ids this grader's jails use (LLMLAB_JAIL_UID_BASE moves them, e.g. for one test run)."""
    base = int(os.environ.get("LLMLAB_JAIL_UID_BASE", "3000000"))
    return range(base, base + 1_000_000)


def _jail_uid() -> int:
    """A user id no other live jail on this host has: derived from the pid of the process that starts it."""
    return jail_uids()[os.getpid() % 1_000_000]


def _processes_of_this_user() -> int:
    uid, n = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    n += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return n


def _parents(path: str, created: set[str]) -> list[str]:
    """bwrap creates missing parent folders with mode 0700 (unreadable for the jail's user): create them 0755."""
    out = []
    parts = Path(path).parts[1:-1]
    for i in range(len(parts)):
        d = "/" + "/".join(parts[: i + 1])
        if d not in created:
            created.add(d)
            out += ["--perms", "0755", "--dir", d]
    return out


def _readonly_paths() -> list[tuple[str, str]]:
    """The system and the Python environment, read-only, at their usual paths (nothing else of the host)."""
    paths = []
    for top in ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.lexists(top):
            paths.append((top, top))
    env_roots = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    real_python = os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))
    env_roots.add(real_python)
    if sys.prefix != os.path.realpath(sys.prefix):  # a venv reached through a link: keep both paths working
        env_roots.add(sys.prefix)
    spec = importlib.util.find_spec("llmlab")  # an editable install lives in the repository: only the package
    if spec and spec.submodule_search_locations:
        env_roots.add(os.path.realpath(list(spec.submodule_search_locations)[0]))
    for root in sorted(env_roots):
        if not any(root == p or root.startswith(p + "/") for p, _ in paths):
            paths.append((root, root))
    return paths
