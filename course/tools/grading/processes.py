"""Children that die with the grader, even when it is killed with SIGKILL (nothing can catch that).

    die_with_parent()     in a worker process: the kernel sends it SIGKILL when its parent ends (PR_SET_PDEATHSIG)
    run_kept(cmd, ...)    subprocess.run for programs that start programs of their own (nbgrader runs alembic):
                          a small keeper leads a process group of its own, and when the grader ends it kills the
                          whole group, grandchildren included (start_kept: the same, as subprocess.Popen)

Jails need neither: bubblewrap runs with --die-with-parent and its PID namespace ends with it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1

# The keeper: SIGTERM when its parent ends (PDEATHSIG), then SIGKILL to its whole process group.
_KEEPER = r"""
import ctypes, os, signal, subprocess, sys
def stop(*_):
    os.killpg(0, signal.SIGKILL)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, signal.SIG_IGN)
ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)
if os.getppid() != int(sys.argv[1]):
    stop()
sys.exit(subprocess.call(sys.argv[2:]))
"""


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send `sig` to this process when its parent ends (Linux; elsewhere a no-op)."""
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent or parent == 1:  # the parent was gone before we asked
        os.kill(os.getpid(), sig)


def run_kept(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run(cmd), with `cmd` and everything it starts killed if this process ends first."""
    return subprocess.run(_kept(cmd), start_new_session=True, **kwargs)


def start_kept(cmd: list[str], **kwargs) -> subprocess.Popen:
    """subprocess.Popen(cmd), kept as run_kept keeps it: for reading its output while it runs."""
    return subprocess.Popen(_kept(cmd), start_new_session=True, **kwargs)


def _kept(cmd: list[str]) -> list[str]:
    return [sys.executable, "-I", "-c", _KEEPER, str(os.getpid()), *cmd]


def worker_init() -> None:
    """Initializer of local grading workers: Ctrl-C is the grader's to handle, and they die with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
