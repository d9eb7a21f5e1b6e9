"""The guard's audit hook: what the student's code does that only tampering needs.

Python raises audit events for the operations that reach frames, code objects, the garbage collector, ctypes,
tracing and processes. The hook blames the frame that caused each one (walking past helper modules such as
`inspect`), ignores library code, records the rest for the trusted side, and refuses outright to let the
student's code create processes or send signals.
"""

from __future__ import annotations

import os
import types

# Audit events that only tampering needs; which of them count depends on who raised them (see judge).
_FRAME_EVENTS = frozenset({"sys._getframe", "sys._current_frames"})
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
_PROCESS_EVENTS = frozenset({"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system", "os.exec", "os.kill",
                   "os.killpg", "subprocess.Popen", "pty.spawn", "signal.pthread_kill", "os.startfile"})
_ALWAYS_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile",
                  "function.__new__", "code.__new__", "marshal.loads", "marshal.load", "ctypes.dlopen",
                  "ctypes.dlsym", "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at", "ctypes.cdata",
                  "ctypes.call_function", "ctypes.create_string_buffer", "ctypes.set_errno",
                  "sys.addaudithook", "cpython.PyInterpreterState_Clear", "socket.connect", "socket.bind",
                  "compile", "exec"})
_WATCHED_EVENTS = _ALWAYS_EVENTS | _PROCESS_EVENTS | _FRAME_EVENTS | {"object.__getattr__", "object.__setattr__",
                                                                     "open"}
# Library modules that only serve to reach frames, code or processes: the caller behind them is who counts.
HELPERS = ("inspect", "traceback", "types", "functools", "contextlib", "importlib", "runpy", "code", "codeop",
           "subprocess", "os", "pty", "multiprocessing", "concurrent", "threading", "linecache", "tokenize",
           "io", "pathlib", "shutil", "platform", "builtins", "ast", "pickle", "copyreg", "marshal")
OWN_PATHS = ("/home/alumno/", "/tmp/", "/dev/shm/", "/seed/")


def hook_for(guard):
    """The audit hook, holding what it needs itself (an attribute set on the guard cannot switch it off)."""
    busy, get_ident, watched = guard.busy, guard._get_ident, _WATCHED_EVENTS

    def hook(event: str, args: tuple) -> None:
        if event not in watched:
            return
        ident = get_ident()
        if ident in busy:
            return
        busy.add(ident)
        try:
            judge(guard, event, args)
        except PermissionError:
            raise
        except Exception:  # noqa: BLE001 - the hook must never break the kernel
            pass
        finally:
            busy.discard(ident)

    return hook


def judge(guard, event: str, args: tuple) -> None:
    # Frames: 0 judge, 1 the hook; the audited C function has none, so 2 is the Python code that raised it.
    culprit = guard._student_frame(guard._getframe(2))
    if culprit is None:
        return
    where = f"{os.path.basename(culprit.f_code.co_filename)}:{culprit.f_lineno}"
    if event in _PROCESS_EVENTS:
        guard._event("high", f"intenta crear o señalar procesos ({event}) en {where}")
        raise PermissionError("la corrección no permite crear procesos ni enviar señales")
    if event in _FRAME_EVENTS:
        target = args[0] if args else None
        if event == "sys._current_frames" or (target is not None and guard._is_library_code(target.f_code)):
            guard._event("high", f"inspecciona marcos de ejecución ajenos ({event}) en {where}")
    elif event == "object.__getattr__":
        obj, attr = args[0], args[1]
        if attr in _FRAME_ATTRS:
            frame = obj if attr == "f_back" else getattr(obj, attr, None)
            code = getattr(frame, "f_code", None)
            if code is not None and guard._is_library_code(code):
                guard._event("high", f"inspecciona marcos de ejecución ajenos ({attr}) en {where}")
        elif attr == "__code__":
            code = getattr(obj, "__code__", None)
            if code is not None and guard._is_library_code(code):
                guard._event("high", f"lee el código de {getattr(obj, '__qualname__', '?')} (__code__) en {where}")
    elif event == "object.__setattr__":
        obj, attr = args[0], args[1]
        if isinstance(obj, types.FunctionType):
            if guard._is_library_code(obj.__code__):
                guard._event("high", f"modifica {obj.__qualname__}.{attr} en {where}")
        elif isinstance(obj, type) and obj.__module__ != "__main__":
            guard._event("high", f"modifica la clase {obj.__module__}.{obj.__qualname__} ({attr}) en {where}")
    elif event == "open":
        path = args[0] if args else None
        if isinstance(path, (str, bytes)):
            path = os.fsdecode(path)
            real = os.path.realpath(path)
            if real.startswith(OWN_PATHS) or real in ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"):
                return
            if real.startswith(guard.library_roots):
                guard._event("low", f"lee un fichero del entorno ({os.path.basename(real)}) en {where}")
            else:
                guard._event("high", f"abre {path} en {where}")
    else:
        guard._event("high", f"{event} en {where}")
