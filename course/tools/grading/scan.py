"""Static analysis of the student's code (the AST, not regular expressions): reasons to review a submission.

This is one of two independent witnesses. It catches intent written in the source even when it never ran
(or ran where the guard could not see it); the guard (guard/) catches what ran, however it was spelled.
Neither decides points alone: points come from verified results (verify.py). Findings here flag the
submission "sospechosa" with the reason; code that reads variables only the hidden tests define also zeroes
the tests that define them (`ScanReport.zero`).
"""

from __future__ import annotations

import ast
import dataclasses

from .kit import Kit, strip_hidden

# Modules a lab answer has no business importing: they reach the interpreter's internals, the kernel, the
# network or other processes. Not here: what only acts inside the jail (os, sys, shutil, tempfile, resource,
# zipfile, threading): an answer may set limits, unpack an attached zip or fill /tmp; the jail contains that, and
# the dangerous parts of those modules (os.fork, sys.modules, sys.settrace...) are flagged as attributes below.
SUSPECT_MODULES = {
    "ctypes", "gc", "importlib", "signal", "subprocess", "multiprocessing", "socket", "marshal", "pickle", "code",
    "codeop", "linecache", "atexit", "__main__", "IPython", "ipykernel", "jupyter_client", "zmq", "pty",
    "faulthandler", "llmlab_guard", "builtins", "inspect", "_thread", "dis", "urllib", "http", "requests",
    "types", "runpy",
}
# Absolute paths a cell may open: the jail's own folders (what is outside them does not exist in the jail, but
# trying to reach it is worth a look).
JAIL_PATHS = ("/home/alumno/", "/tmp/", "/dev/shm/", "/seed/", "/dev/null")
# Attributes that reach frames, code objects, namespaces, the kernel or the process.
SUSPECT_ATTRS = {
    "__code__", "__globals__", "__closure__", "__builtins__", "__dict__", "__class__", "__bases__", "__base__",
    "__mro__", "__subclasses__", "__getattribute__", "__self__", "__func__", "__wrapped__", "__defaults__",
    "__kwdefaults__", "__import__", "__loader__", "__spec__", "f_back", "f_locals", "f_globals", "f_code",
    "tb_frame", "gi_frame", "cr_frame", "co_consts", "co_code", "co_names", "cell_contents", "_getframe",
    "settrace", "setprofile", "modules", "_exit", "fork", "forkpty", "kill", "killpg", "system", "popen",
    "_current_frames", "addaudithook", "run_cell", "run_code", "run_ast_nodes", "showtraceback",
    "set_custom_exc", "ast_transformers", "input_transformers_post", "input_transformers_cleanup",
    "user_ns", "user_global_ns", "excepthook", "displayhook", "setrecursionlimit", "setswitchinterval",
    "get_parent", "_parent_header", "shell_handlers", "execl", "execv", "execve", "execvp", "spawnv",
    "posix_spawn", "pthread_kill", "setitimer", "alarm",
}
# Builtins that read or rewrite namespaces, or run code from strings.
SUSPECT_CALLS = {"exec", "eval", "compile", "globals", "vars", "setattr", "delattr", "__import__", "breakpoint",
                 "get_ipython", "memoryview", "exit", "quit"}
# Names that are modules wherever they appear in a lab.
_MODULE_NAMES = {"np", "numpy", "torch", "math", "llmlab", "builtins", "__builtins__", "sys", "os", "plt",
                 "matplotlib", "scipy", "F", "TF", "nn"}
# IPython's names for the history of inputs and outputs.
HISTORY_NAMES = {"In", "Out", "_ih", "_oh", "_i", "_ii", "_iii", "_dh", "__builtins__", "__builtin__"}


@dataclasses.dataclass
class ScanReport:
    found: dict[tuple[str, str], list[str]] = dataclasses.field(default_factory=dict)  # (what, cell) -> details
    zero: dict[str, str] = dataclasses.field(default_factory=dict)  # test id -> why it scores 0

    def add(self, what: str, detail: str, where: str) -> None:
        details = self.found.setdefault((what, where), [])
        if detail not in details and len(details) < 8:
            details.append(detail)

    @property
    def reasons(self) -> list[str]:
        """'redefine check_close, check_equal (celda X)': one line per kind of finding and cell."""
        return [f"{what} {', '.join(details)} (celda {where})" for (what, where), details in self.found.items()]


def scan(kit: Kit, cells: list[dict]) -> ScanReport:
    """Scan the code cells the student wrote or changed (`cells`: staged cells with roles)."""
    report = ScanReport()
    protected = set(kit.handle_names)
    hidden = hidden_names(kit)
    imports = _imports(kit.handle_code)
    for cell in cells:
        if cell["type"] != "code" or cell["role"] not in ("answer", "student"):
            continue
        if cell["role"] == "answer" and not cell.get("student_changed"):
            continue
        try:
            tree = ast.parse(cell["source"])
        except SyntaxError:
            continue  # it will fail when it runs; nothing to review
        where = cell.get("grade_id") or cell["id"]
        _Visitor(report, where, protected, hidden, imports).visit(tree)
    return report


def _imports(code: str) -> dict[str, str]:
    """name -> what the setup cell imports under it ('np' -> 'numpy', 'check_close' -> 'llmlab.checks.check_close')."""
    out = {}
    for node in ast.parse(code).body:
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def hidden_names(kit: Kit) -> dict[str, list[str]]:
    """Names bound only by the hidden part of test cells -> the test cells that bind them."""
    public: set[str] = set()
    for cell in kit.cells:
        if cell["type"] == "code":
            source = strip_hidden(cell["source"]) if cell["role"] == "test" else cell["public"]
            public |= _bound(source)
    out: dict[str, list[str]] = {}
    for cell in kit.cells:
        if cell["role"] == "test":
            for name in _bound(cell["source"]) - public:
                out.setdefault(name, []).append(cell["grade_id"])
    return out


def _bound(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


class _Visitor(ast.NodeVisitor):
    def __init__(self, report: ScanReport, where: str, protected: set[str], hidden: dict[str, list[str]],
                 imports: dict[str, str]):
        self.report, self.where, self.protected, self.hidden = report, where, protected, hidden
        self.setup_imports = imports
        self.depth = 0  # 0: the cell's top level
        self.local_names: list[set[str]] = []
        self.imported: set[str] = set()

    def add(self, what: str, detail: str, node) -> None:
        self.report.add(what, f"{detail} (línea {getattr(node, 'lineno', '?')})", self.where)

    # -- imports
    def visit_Import(self, node):
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            self.imported.add(name)
            self._module(alias.name, node)
            if self.setup_imports.get(name) != (alias.name if alias.asname else alias.name.split(".")[0]):
                self._rebinds(name, node)  # `import numpy as np` again is harmless; `import x as np` is not

    def visit_ImportFrom(self, node):
        self._module(node.module or "", node)
        for alias in node.names:
            name = alias.asname or alias.name
            self.imported.add(name)
            if alias.name == "*":
                self.add("importa todo de", str(node.module), node)
            if self.setup_imports.get(name) != f"{node.module}.{alias.name}":
                self._rebinds(name, node)

    def _module(self, name: str, node) -> None:
        if name.split(".")[0] in SUSPECT_MODULES:
            self.add("importa", name, node)

    # -- names and attributes
    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            if node.id in HISTORY_NAMES:
                self.add("usa", node.id, node)
            elif node.id in self.hidden and not any(node.id in s for s in self.local_names):
                tests = self.hidden[node.id]
                self.add("lee variables que solo definen las pruebas ocultas:", node.id, node)
                for test in tests:
                    self.report.zero[test] = f"lee '{node.id}' de las pruebas ocultas"
        elif self.depth == 0:
            self._rebinds(node.id, node)

    def visit_Attribute(self, node):
        if node.attr in SUSPECT_ATTRS:
            self.add("usa", "." + node.attr, node)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and self._foreign(node.value):
            self.add("reasigna", _dotted(node) or "un atributo de otro módulo", node)
        self.generic_visit(node)

    def _foreign(self, node) -> bool:
        """Is this object someone else's: a module, the setup's names, the kernel? (not `self.x = ...`)"""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        if isinstance(node, ast.Call):
            return True  # get_ipython().run_cell = ..., type(x).method = ...
        return isinstance(node, ast.Name) and (node.id in self.protected or node.id in self.imported
                                                or node.id in _MODULE_NAMES)

    def visit_Subscript(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            base = _dotted(node.value)
            if base in ("sys.modules", "__builtins__", "builtins.__dict__") or (
                    isinstance(node.value, ast.Call) and _dotted(node.value.func) in ("globals", "vars")):
                self.add("escribe en", base or "globals()", node)
        self.generic_visit(node)

    def visit_Call(self, node):
        name = _dotted(node.func)
        if name in SUSPECT_CALLS:
            self.add("llama a", name + "()", node)
        elif name == "getattr" and node.args:
            target = _dotted(node.args[0])
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant) or target in self.protected:
                self.add("usa getattr con un nombre construido o sobre", target or "un objeto", node)
        elif name in ("open", "io.open", "os.open") and node.args:
            path = node.args[0]
            if isinstance(path, ast.Constant) and isinstance(path.value, str) and (
                    (path.value.startswith("/") and not path.value.startswith(JAIL_PATHS)) or ".." in path.value):
                self.add("abre", repr(path.value), node)
        self.generic_visit(node)

    def visit_Raise(self, node):
        if node.exc is not None and _dotted(getattr(node.exc, "func", node.exc)) in ("SystemExit", "KeyboardInterrupt"):
            self.add("termina el kernel con", "SystemExit", node)
        self.generic_visit(node)

    # -- definitions
    def visit_FunctionDef(self, node):
        if self.depth == 0:
            self._rebinds(node.name, node)
        for deco in node.decorator_list:
            self.visit(deco)
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        args = node.args
        params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        locals_ = params | {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self.depth += 1
        self.local_names.append(locals_)
        for stmt in node.body:
            self.visit(stmt)
        self.local_names.pop()
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.local_names.append({a.arg for a in node.args.args})
        self.generic_visit(node)
        self.local_names.pop()

    def _visit_comprehension(self, node):
        """A comprehension is a scope of its own: `[d for d in xs]` never reads a global `d`.

        Its first iterable is evaluated outside that scope, as Python does.
        """
        generators = node.generators
        self.visit(generators[0].iter)
        self.local_names.append({n.id for g in generators for n in ast.walk(g.target) if isinstance(n, ast.Name)})
        for k, generator in enumerate(generators):
            if k:
                self.visit(generator.iter)
            for condition in generator.ifs:
                self.visit(condition)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self.visit(part)
        self.local_names.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension

    def visit_ClassDef(self, node):
        if self.depth == 0:
            self._rebinds(node.name, node)
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def _rebinds(self, name: str, node) -> None:
        if self.depth == 0 and name in self.protected:
            self.add("redefine nombres de la celda de preparación:", name, node)


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""
