"""Inside the grading kernel, installed before any student code runs: the grader's eyes in a hostile process.

The student's code shares this process with the test cells, so nothing here is a wall: everything it holds can
be reached and changed. What it gives the trusted side (outside the jail) is *evidence*, sent as records on
the kernel's output channel (MIME type `MIME`):

- `checks` (in each `leave` record): the arguments and outcome of every `llmlab.checks` call a test cell makes, converted to
  plain data without calling any method of the student's objects. The trusted side replays each check outside
  the jail on those values and compares them with the instructor's run: a check that "passed" here because the
  machinery was tampered with fails there. Forging a record needs the correct values: solving the exercise.
- `enter`/`leave` records, one pair per test cell, bound to a nonce the cell carries: the cell really ran,
  top to bottom, through IPython's own execution path, with the machinery as it was at start-up (an integrity
  diff of llmlab, numpy, torch, builtins, sys hooks, signal handlers and IPython internals).
- `event` records: what an audit hook saw the student's code do (frames, gc, ctypes, code objects, tracing,
  processes, files outside its folder). Process creation from student code is refused outright.

Missing or inconsistent records never earn points: the trusted side treats them as tampering.

Test cells reach the check machinery through a handle object (`config["handle"]`, a name with a random part)
whose attributes were bound here, from the genuine modules, before the notebook ran: rebinding `check_close`,
`np` or `sys.modules` entries in the notebook changes what the student's code sees, not what the tests use.
While a test cell runs, its source is hidden from the process (linecache, the kernel's request) and its
variables live in a function scope, so a student's function cannot read the expected values from globals.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import json
import linecache
import os
import sys
import threading
import types

from . import audit
from .integrity import DIFF, Snapshot
from .plain import Plain
from .testcells import HandleNames, function_safe

MIME = "application/vnd.llmlab.grading+json"

_state: "_Guard | None" = None



def install(config: str | dict) -> None:
    """Called once, by the runner, before the notebook's first cell (config: JSON text or a dict)."""
    global _state
    if isinstance(config, str):
        config = json.loads(config)
    if _state is not None:
        raise RuntimeError("llmlab guard already installed")
    _state = _Guard(config)
    _state.start()


class _Guard:
    def __init__(self, config: dict):
        from IPython import get_ipython

        self.config = config
        self.shell = get_ipython()
        self.kernel = self.shell.kernel
        self.session = self.kernel.session
        self.iopub = self.kernel.iopub_socket
        self.window: str | None = None  # nonce of the test cell running now
        self.used_tokens: set[str] = set()
        self.settled = False
        self.trusted_files: set[str] = set()
        self.events: list[dict] = []
        self.checks: list[dict] = []
        self.busy: set[int] = set()
        self.seq = 0
        roots = [sys.base_prefix, sys.prefix, sys.exec_prefix, os.path.dirname(__file__)]
        roots += [os.path.realpath(r) for r in roots]
        for name in ("llmlab",):
            module = sys.modules.get(name) or __import__(name)
            roots.append(os.path.dirname(os.path.realpath(module.__file__)))
        self.library_roots = tuple(sorted({r.rstrip("/") + "/" for r in roots}))
        self._get_ident = threading.get_ident
        self._getframe = sys._getframe
        self.own_classes = (_Guard, _Handle, Plain)  # watched like IPython's classes (integrity.py)

    # ------------------------------------------------------------------------------------------ start-up

    def start(self) -> None:
        self.handles = self._build_handles(self.config["handle_code"])
        self.handle = _Handle(self)
        self.shell.user_ns[self.config["handle"]] = self.handle
        self.path_codes = self._execution_path()
        self.snapshot = Snapshot.take(self)
        sys.addaudithook(audit.hook_for(self))
        self.emit({"type": "ready", "python": sys.version.split()[0]})

    def _build_handles(self, code: str) -> dict:
        """Run the setup cell's imports in a private namespace: the genuine objects the tests will use."""
        import llmlab.checks as checks

        namespace: dict = {"__builtins__": builtins, "__name__": "__llmlab_handles__"}
        exec(compile(code, "<llmlab-handles>", "exec"), namespace)  # noqa: S102 - the instructor's setup code
        del namespace["__builtins__"], namespace["__name__"]
        self.checks_module = checks
        self.genuine_checks = {}
        for name in dir(checks):
            value = getattr(checks, name)
            if name.startswith("check") and isinstance(value, types.FunctionType):
                self.genuine_checks[name] = value
        wrapped = {id(fn): self._recording(name, fn) for name, fn in self.genuine_checks.items()}
        for name, value in list(namespace.items()):
            if id(value) in wrapped:
                namespace[name] = wrapped[id(value)]
            elif value is checks.reference_blocked:
                namespace[name] = self._blocked_factory(value)
        for name, fn in self.genuine_checks.items():  # tests may reach checks not imported by the setup cell
            namespace.setdefault(f"__checks_{name}", wrapped[id(fn)])
        if self.config.get("uses_torch"):
            import torch  # noqa: F401 - so tensors are read with torch's own methods, captured now
        self.plain = Plain()
        return namespace

    def _execution_path(self) -> set:
        """Code objects IPython runs a cell through (seen now, from the runner's start-up request)."""
        codes = set()
        frame = self._getframe(2)  # 0: here, 1: start, 2: install, 3: the start-up cell, 4...: IPython
        while frame is not None:
            codes.add(frame.f_code)
            frame = frame.f_back
        return codes

    # ------------------------------------------------------------------------------------------ records

    def emit(self, record: dict) -> None:
        record["seq"] = self.seq
        self.seq += 1
        content = {"data": {MIME: record}, "metadata": {}, "transient": {}}
        try:
            self.session.send(self.iopub, "display_data", content, parent=self.kernel.get_parent("shell"),
                              ident=b"display_data")
        except Exception:  # noqa: BLE001 - a broken channel means missing records: the trusted side fails closed
            pass

    def take_events(self) -> list[dict]:
        events, self.events = self.events, []
        return events

    def _recording(self, kind: str, fn):
        guard = self

        def check(*args, **kwargs):
            nonce = guard.window
            if nonce is None:
                return fn(*args, **kwargs)
            record = {"kind": kind, "args": [guard.plain(a) for a in args],
                      "kwargs": {str(k): guard.plain(v) for k, v in kwargs.items()}}
            guard.checks.append(record)  # sent with the test's "leave" record
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                record["outcome"] = "fail"
                record["error"] = type(exc).__name__
                raise
            record["outcome"] = "ok"
            return result

        check.__name__ = check.__qualname__ = kind
        return check

    # ------------------------------------------------------------------------------------------ test cells

    def run_test(self, nonce: str, source: str, caller) -> None:
        """Run one test cell: names of the setup cell bound to the genuine objects, variables in a function scope.

        `caller` is the frame of the request that called us (the cell IPython is running).
        """
        filename = f"<prueba {nonce}>"
        if not self.enter(nonce, caller, filename):
            return
        tree = ast.parse(source, filename)
        HandleNames(self.config["handle"], self.handles).visit(tree)
        scoped = function_safe(tree)
        if scoped:  # def __llmlab_t_<nonce>(): <the cell>; return locals()
            body = tree.body + [ast.Return(ast.Call(ast.Name("locals", ast.Load()), [], []))]
            tree = ast.Module([ast.FunctionDef(f"__llmlab_t_{nonce}", ast.arguments([], [], None, [], [], None, []),
                                               body, [], None)], [])
            ast.fix_missing_locations(tree)
        code = compile(tree, filename, "exec")
        user_ns = self.shell.user_ns
        try:
            if scoped:
                namespace: dict = {}
                exec(code, user_ns, namespace)  # noqa: S102 - the instructor's test, rebuilt above
                published = namespace[f"__llmlab_t_{nonce}"]()
            else:
                exec(code, user_ns)  # noqa: S102
                published = {}
        except BaseException as exc:
            self.leave(nonce, False, filename, source)
            if scoped:  # as a cell run at top level would: what it assigned before failing stays defined
                self._publish(_locals_of(exc.__traceback__, f"__llmlab_t_{nonce}"))
            raise
        self.leave(nonce, True, filename, source)
        self._publish(published)

    def _publish(self, names: dict) -> None:
        user_ns = self.shell.user_ns
        for key, value in names.items():
            if not key.startswith("__llmlab"):
                user_ns[key] = value

    def enter(self, nonce: str, caller, filename: str) -> bool:
        if nonce in self.used_tokens or self.window is not None:
            self._event("high", "entrada repetida o anidada en una celda de prueba")
            return False
        self.used_tokens.add(nonce)
        path_ok = caller is not None and caller.f_code.co_name == "<module>"
        frame = caller.f_back if caller is not None else None
        while path_ok and frame is not None:
            path_ok = frame.f_code in self.path_codes
            frame = frame.f_back
        problems = [] if path_ok else ["la celda de prueba no se ejecutó por el camino normal de IPython"]
        self.trusted_files.update({caller.f_code.co_filename if caller is not None else "", filename})
        self._hide_source(caller.f_code.co_filename if caller is not None else "")
        problems += DIFF(self.snapshot, self)
        self.window = nonce
        self.checks = []
        self.emit({"type": "enter", "nonce": nonce, "problems": problems, "events": self.take_events()})
        return True

    def leave(self, nonce: str, ok: bool, filename: str, source: str) -> None:
        # The source comes back (under the test's own name) for the traceback IPython is about to print.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        problems = DIFF(self.snapshot, self)
        events = self.take_events()
        self.window = None
        checks, self.checks = self.checks, []
        self.emit({"type": "leave", "nonce": nonce, "ok": bool(ok), "problems": problems, "events": events,
                   "checks": checks})

    def settle(self, token: str) -> None:
        """After the setup cell (trusted, before any student code): what it configured is the new normal."""
        if token in self.used_tokens or self.settled:
            self._event("high", "intenta rehacer la foto de referencia de la corrección")
            return
        self.used_tokens.add(token)
        self.settled = True
        swapped = [name for name, (module, _) in self.snapshot.modules.items() if sys.modules.get(name) is not module]
        new = Snapshot.take(self)
        for name in swapped:  # the setup cell never swaps modules: keep the originals as the reference
            if name in self.snapshot.modules:
                new.modules[name] = self.snapshot.modules[name]
        self.snapshot = new

    def trust(self, token: str, source: str) -> None:
        """The runner announces an unchanged instructor cell before sending it (one-time token): the code
        IPython compiles from that source is the instructor's, not the student's."""
        if token in self.used_tokens:
            self._event("low", "reutiliza la marca de una celda del profesor")
            return
        self.used_tokens.add(token)
        self.trusted_files.add(self.shell.compile.get_code_name(source, source, 0))

    def final(self, token: str) -> None:
        if token in self.used_tokens:
            return
        self.used_tokens.add(token)
        self.emit({"type": "final", "problems": DIFF(self.snapshot, self), "events": self.take_events()})

    def _hide_source(self, filename: str) -> None:
        """While a test cell runs, its source (hidden tests included) is not reachable from the process."""
        linecache.cache.pop(filename, None)  # the request that carries the test is never needed again
        for holder in (self.kernel.get_parent("shell"), getattr(self.shell, "parent_header", None)):
            content = holder.get("content") if isinstance(holder, dict) else None
            if isinstance(content, dict) and "code" in content:
                content["code"] = ""

    # ------------------------------------------------------------------------------------------ reference_blocked

    def _blocked_factory(self, genuine):
        """reference_blocked, watched: a student function that kept a blocked reference, or a copy of its
        code, is reported (the genuine one already blocks names and, for plain functions, the code itself)."""
        guard = self

        @contextlib.contextmanager
        def reference_blocked(*functions):
            codes = [fn.__code__ for fn in functions if isinstance(fn, types.FunctionType)]
            guard._report_captures(functions, codes)
            with genuine(*functions):
                yield

        return reference_blocked

    def _report_captures(self, functions, codes) -> None:
        """A student function that keeps a blocked reference, or a copy of its code, is forwarding to it."""
        targets = {id(f) for f in functions}
        for name, value in list(self.shell.user_ns.items()):
            for holder, inner in [(None, value), *_captured_values(value)]:
                if holder is not None and id(inner) in targets and not self._is_library_code(
                        getattr(holder, "__code__", None)):
                    self._event("high", f"'{name}' guarda una referencia a {getattr(inner, '__qualname__', '?')} "
                                        "(se salta el bloqueo de la referencia)")
                    return
                if isinstance(inner, types.FunctionType) and id(inner) not in targets and inner.__code__ in codes:
                    self._event("high", f"'{name}' es una copia del código de la referencia {inner.__qualname__}")
                    return

    # ------------------------------------------------------------------------------------------ audit hook

    def _event(self, severity: str, what: str) -> None:
        if len(self.events) < 200:
            self.events.append({"severity": severity, "what": what[:300], "window": self.window})

    def _is_library_code(self, code) -> bool:
        if code is None:
            return True
        name = code.co_filename
        return name.startswith(self.library_roots) or name.startswith("<frozen ") or name in self.trusted_files

    def _student_frame(self, frame):
        """The frame to blame: the first one, walking out, that is not a helper module; None if library code."""
        while frame is not None:
            module = frame.f_globals.get("__name__", "") if isinstance(frame.f_globals, dict) else ""
            if self._is_library_code(frame.f_code) and module.split(".")[0] in audit.HELPERS:
                frame = frame.f_back
                continue
            return None if self._is_library_code(frame.f_code) else frame
        return None

class _Handle:
    """What test cells reach the guard and the genuine checks through (bound under a randomised name)."""

    def __init__(self, guard: _Guard):
        object.__setattr__(self, "_guard", guard)

    def __getattr__(self, name):
        try:
            return self._guard.handles[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self._guard._event("high", f"modifica el objeto de la corrección ({name})")

    def run_test(self, nonce, source):
        self._guard.run_test(nonce, source, self._guard._getframe(1))

    def trust(self, token, source):
        self._guard.trust(token, source)

    def settle(self, token):
        self._guard.settle(token)

    def final(self, token):
        self._guard.final(token)



def _locals_of(tb, function_name: str) -> dict:
    """The local variables of `function_name`'s frame in a traceback (empty if it is not there)."""
    while tb is not None:
        if tb.tb_frame.f_code.co_name == function_name:
            return dict(tb.tb_frame.f_locals)
        tb = tb.tb_next
    return {}


def _captured_values(value, depth: int = 0):
    """(holder, value) pairs a function or class keeps: defaults, closure cells, class attributes."""
    if depth > 2:
        return
    if isinstance(value, types.FunctionType):
        for inner in (value.__defaults__ or ()) + tuple((value.__kwdefaults__ or {}).values()):
            yield value, inner
            yield from _captured_values(inner, depth + 1)
        for cell in value.__closure__ or ():
            try:
                inner = cell.cell_contents
            except ValueError:
                continue
            yield value, inner
            yield from _captured_values(inner, depth + 1)
    elif isinstance(value, type) and value.__module__ == "__main__":
        for inner in list(vars(value).values()):
            inner = getattr(inner, "__func__", inner)
            yield value, inner
            yield from _captured_values(inner, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)) and depth:
        for inner in list(value)[:50]:
            yield value, inner
    elif type(value).__name__ == "partial":
        yield value, getattr(value, "func", None)


