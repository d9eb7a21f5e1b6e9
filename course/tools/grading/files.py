"""File helpers for the trusted side: atomic writes, and reads that never follow a link.

Everything the grader writes (gradebook aside, which is SQLite's job) goes through `atomic_write_*`: a
temporary file in the same folder, fsync, then rename. A crash or a kill leaves the old file or the new one,
never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


class UnsafeFile(Exception):
    """A file the grader refuses to read: a link, not a regular file, or too large."""


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file, opened without following a symbolic link in its last component."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if os.path.islink(path):
            raise UnsafeFile(f"{Path(path).name} es un enlace simbólico: no se sigue") from None
        raise UnsafeFile(f"{Path(path).name} no se puede abrir: {exc.strerror}") from None
    try:  # what it is, before anything reads it (a folder opens too, with O_RDONLY)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(f"{Path(path).name} no es un fichero normal"
                             + (" (es una carpeta)" if stat.S_ISDIR(info.st_mode) else ""))
        if info.st_size > max_bytes:
            raise UnsafeFile(f"{Path(path).name} ocupa {info.st_size / 1e6:.1f} MB (máximo {max_bytes / 1e6:.0f} MB)")
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UnsafeFile(f"{Path(path).name} supera {max_bytes / 1e6:.0f} MB")
    return data


def sha256(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def tree_digest(paths: list[Path], root: Path) -> str:
    """One hash over the relative names and contents of files (for "has anything changed?" checks)."""
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(str(Path(path).relative_to(root)).encode())
        h.update(b"\0")
        h.update(Path(path).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------- the run's lock

class Busy(Exception):
    """Another grading run holds this grading root."""


@contextlib.contextmanager
def grading_lock(root: Path):
    """One run per grading root at a time: a second one is refused (Busy), never graded twice at once.

    flock on <root>/.grading.lock: the kernel drops it when the holder ends, even on SIGKILL.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / ".grading.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 100, 0).decode("ascii", "replace").strip()
            raise Busy(f"proceso {holder}" if holder else "otro proceso") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


# Errors that mean "the output folder cannot be written" (read-only, full, no permission), from the OS or SQLite.
_WRITE_ERRNOS = {errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM}
_SQLITE_WRITE = ("database or disk is full", "readonly database", "unable to open database file", "disk i/o error")


def write_failure(exc: BaseException) -> str | None:
    """Why `exc` means the output folder cannot be written (Spanish), or None if it is something else."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS:
            return {errno.EROFS: "la carpeta es de solo lectura", errno.ENOSPC: "no queda espacio en el disco",
                    errno.EDQUOT: "se agotó la cuota de disco"}.get(exc.errno, "no hay permiso para escribir")
        text = str(exc).lower()
        if any(s in text for s in _SQLITE_WRITE):
            return "no queda espacio en el disco" if "full" in text else "el gradebook no se puede escribir"
        exc = exc.__cause__ or exc.__context__
    return None
