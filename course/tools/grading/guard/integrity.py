"""The check machinery as it was when the notebook started, and what changed since.

A snapshot holds the identity of every attribute of the watched modules (llmlab, NumPy, torch, math,
builtins...), the code objects and defaults of their Python functions, the dictionaries of IPython's and
ipykernel's classes on a cell's execution path, the shell's hooks and transformer lists, sys hooks and signal
handlers. `diff` names what differs: each name is a reason, and any reason zeroes the test cell it shows up in.
"""

from __future__ import annotations

import builtins
import signal
import sys
import threading
import types

_PACKAGE = __name__.rpartition(".")[0]  # this guard's own modules are watched too


class Snapshot:
    """The check machinery as it was at start-up, to compare with at every test cell."""

    WATCHED_MODULES = ("llmlab", "numpy", "numpy.linalg", "numpy.random", "numpy.fft", "math", "builtins",
                       "torch", "torch.nn", "torch.nn.functional", "torch.linalg", "operator", "functools")

    @classmethod
    def take(cls, guard) -> "Snapshot":
        snap = cls()
        snap.modules = {}
        for name, module in list(sys.modules.items()):
            if isinstance(module, types.ModuleType) and (name in cls.WATCHED_MODULES or name.startswith("llmlab.")
                                                         or name == _PACKAGE or name.startswith(_PACKAGE + ".")):
                snap.modules[name] = (module, dict(vars(module)))
        snap.codes = {}
        for name, (module, namespace) in snap.modules.items():
            for key, value in namespace.items():
                for qual, fn in _functions(key, value, module):
                    snap.codes[(name, qual)] = (fn, fn.__code__, fn.__defaults__, fn.__kwdefaults__)
        for key, value in guard.handles.items():
            for qual, fn in _functions(key, value, None):
                snap.codes[("handles", qual)] = (fn, fn.__code__, fn.__defaults__, fn.__kwdefaults__)
        snap.handles = dict(guard.handles)
        snap.classes = {}
        for cls_ in _ipython_classes(guard):
            snap.classes[f"{cls_.__module__}.{cls_.__qualname__}"] = (cls_, dict(vars(cls_)))
        snap.shell_attrs = {k: v for k, v in vars(guard.shell).items() if callable(v) or k in _SHELL_STATE}
        snap.shell_lists = _shell_lists(guard.shell)
        snap.kernel_handlers = dict(guard.kernel.shell_handlers)
        snap.hooks = _hooks()
        snap.handle = guard.handle
        snap.handle_name = guard.config["handle"]
        snap.user_builtins = guard.shell.user_ns.get("__builtins__")
        return snap

    def diff(self, guard) -> list[str]:
        problems: list[str] = []
        for name, (module, namespace) in self.modules.items():
            if sys.modules.get(name) is not module:
                problems.append(f"sys.modules['{name}'] sustituido")
            now = vars(module)
            for key, value in namespace.items():
                if (now.get(key, _MISSING) is not value and not key.startswith("__")
                        and (name, key) not in _CHANGED_BY_KERNEL and not _torch_wrapper(now.get(key), value)):
                    problems.append(f"{name}.{key} reasignado")
        for (where, qual), (fn, code, defaults, kwdefaults) in self.codes.items():
            if fn.__code__ is not code:
                problems.append(f"código de {qual} cambiado")
            elif fn.__defaults__ is not defaults or fn.__kwdefaults__ is not kwdefaults:
                problems.append(f"valores por defecto de {qual} cambiados")
        for key, value in self.handles.items():
            if guard.handles.get(key, _MISSING) is not value:
                problems.append(f"objeto de la corrección alterado ({key})")
        for name, (cls_, namespace) in self.classes.items():
            now = vars(cls_)
            for key, value in namespace.items():
                if now.get(key, _MISSING) is not value:
                    problems.append(f"{name}.{key} sustituido")
            for key in now.keys() - namespace.keys():
                problems.append(f"{name}.{key} añadido")
        shell_now = vars(guard.shell)
        for key, value in self.shell_attrs.items():
            if not _same(shell_now.get(key, _MISSING), value):
                problems.append(f"IPython: {key} sustituido")
        for key, value in shell_now.items():
            if key not in self.shell_attrs and callable(value) and not isinstance(value, type):
                problems.append(f"IPython: {key} añadido a la instancia")
        for what, before, now in zip(_SHELL_LISTS, self.shell_lists, _shell_lists(guard.shell)):
            if any(not any(_same(b, n) for n in now) for b in before):
                problems.append(f"IPython: se quitó algo de {what}")
            for item in now:
                if not any(_same(b, item) for b in before) and not guard._is_library_code(_code_of(item)):
                    problems.append(f"IPython: {what} con código del alumno")
        if dict(guard.kernel.shell_handlers) != self.kernel_handlers:
            problems.append("ipykernel: manejadores de mensajes cambiados")
        for what, (before, now) in _compare(self.hooks, _hooks()).items():
            problems.append(f"{what} cambiado")
        if guard.shell.user_ns.get(self.handle_name) is not self.handle:
            problems.append("objeto de la corrección sustituido en el cuaderno")
        if guard.shell.user_ns.get("__builtins__") is not self.user_builtins:
            problems.append("__builtins__ del cuaderno sustituido")
        if guard.busy or sys.gettrace() is not None or sys.getprofile() is not None:
            problems.append("hay una función de traza o de perfilado activa")
        return problems[:50]


DIFF = Snapshot.diff  # called through this reference: an attribute set on the instance does not replace it
_MISSING = object()
# ipykernel swaps these on every request (input() reads from the frontend): not tampering.
def _torch_wrapper(new, old) -> bool:
    """torch wraps some of its own functions when a submodule is first imported (torch._dynamo wraps
    torch.manual_seed): a wrapper of the very same function, whose code is torch's own, is not tampering."""
    torch = sys.modules.get("torch")
    code = getattr(new, "__code__", None)
    if torch is None or code is None or getattr(new, "__wrapped__", None) is not old:
        return False
    import os

    return os.path.realpath(code.co_filename).startswith(os.path.dirname(os.path.realpath(torch.__file__)) + os.sep)


_CHANGED_BY_KERNEL = {("builtins", "input"), ("builtins", "raw_input"), ("getpass", "getpass")}
_SHELL_STATE = ("compile", "ast_transformers", "input_transformers_post", "input_transformer_manager",
                "events", "custom_exceptions", "CustomTB", "InteractiveTB", "SyntaxTB", "displayhook",
                "display_pub", "user_ns", "user_global_ns", "kernel", "display_trap", "builtin_trap")


def _functions(key, value, module):
    """(qualified name, function) pairs of plain Python functions in a namespace entry (classes: their methods)."""
    if isinstance(value, types.FunctionType):
        if module is None or getattr(value, "__module__", None) == module.__name__:
            yield key, value
    elif isinstance(value, type) and module is not None and value.__module__ == module.__name__:
        for attr, inner in list(vars(value).items()):
            inner = getattr(inner, "__func__", inner)
            if isinstance(inner, types.FunctionType):
                yield f"{key}.{attr}", inner


def _ipython_classes(guard) -> list[type]:
    out = []
    for obj in (guard.shell, guard.kernel, guard.shell.compile, guard.shell.displayhook, guard.shell.display_pub,
                guard.session, sys.stdout, sys.stderr):
        for cls_ in type(obj).__mro__:
            if cls_ is not object and cls_ not in out:
                out.append(cls_)
    from IPython.core.interactiveshell import ExecutionResult, InteractiveShell

    out += [c for c in (ExecutionResult, InteractiveShell, *guard.own_classes, Snapshot) if c not in out]
    return out


_SHELL_LISTS = ("ast_transformers", "input_transformers_post", "cleanup_transforms", "line_transforms",
                "token_transformers", "events", "custom_exceptions")


def _shell_lists(shell) -> tuple:
    manager = shell.input_transformer_manager
    events = [cb for _, callbacks in sorted(shell.events.callbacks.items()) for cb in callbacks]
    return (list(shell.ast_transformers), list(shell.input_transformers_post), list(manager.cleanup_transforms),
            list(manager.line_transforms), list(manager.token_transformers), events,
            list(shell.custom_exceptions or ()))


def _same(a, b) -> bool:
    """Identity, or equality for bound methods (each attribute access makes a new one)."""
    return a is b or (type(a) is types.MethodType and type(b) is types.MethodType and a == b)


def _code_of(obj):
    """The code that would run for a callable or a transformer object (None: C code)."""
    obj = getattr(obj, "__func__", obj)
    if isinstance(obj, types.FunctionType):
        return obj.__code__
    if isinstance(obj, type):
        return None
    for name in ("__call__", "visit", "transform"):
        fn = getattr(type(obj), name, None)
        fn = getattr(fn, "__func__", fn)
        if isinstance(fn, types.FunctionType):
            return fn.__code__
    return None


def _hooks() -> dict:
    hooks = {"sys.excepthook": sys.excepthook, "sys.displayhook": sys.displayhook,
             "sys.breakpointhook": sys.breakpointhook, "sys.stdout": sys.stdout, "sys.stderr": sys.stderr,
             "threading.settrace": getattr(threading, "_trace_hook", None),
             "threading.setprofile": getattr(threading, "_profile_hook", None),
             "builtins.__import__": builtins.__import__}
    for name in ("SIGINT", "SIGTERM", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGXCPU", "SIGVTALRM", "SIGPROF"):
        sig = getattr(signal, name, None)
        if sig is not None:
            hooks[f"manejador de {name}"] = signal.getsignal(sig)
    return hooks


def _compare(before: dict, now: dict) -> dict:
    return {k: (before[k], now.get(k)) for k in before if not _same(before[k], now.get(k))}



