"""Hostile submissions, built from the real release and solution of whichever lab they target.

Every case starts from one of two honest students of that lab:

    full   every exercise solved (the instructor's solution code, as a student would hand it in)
    wrong  the same, except the first exercise, whose functions just `return 0`

and then does something a grader must survive. Its expected outcome is stated against those two, which are
graded in the same batch: a tampering case may never score more on any test than the honest `wrong` student
(no undeserved points), and must be flagged with a reason; a case that only abuses the machine must score what
the honest student scores. `Expect` says which.

Nothing here is specific to a lab: the first exercise, its functions, its test cells and its llmlab reference
are read from the notebooks, so labs added later get the same treatment.
"""

from __future__ import annotations

import ast
import base64
import copy
import dataclasses
import json
import sys
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[2]

import demo_class
import labtools


@dataclasses.dataclass
class Expect:
    like: str | None  # "full" or "wrong": per-test points compared with that honest student; None: not graded
    relation: str = "equal"  # "equal" or "at_most"
    flags: frozenset = frozenset()  # flags that must be there
    no_flags: frozenset = frozenset({"sin aislar"})  # flags that must not
    one_of: frozenset = frozenset()  # at least one of these flags
    outputs: tuple = ()  # text that must appear in the autograded notebook's outputs
    no_outputs: tuple = ()  # text that must not
    notes: tuple = ()  # text that must appear in one of the grading record's notes


@dataclasses.dataclass
class Case:
    name: str
    what: str  # one line, for the report
    build: Callable  # (Lab, context) -> {relative path: bytes | ("symlink", target)}
    expect: Expect
    fast: bool = False  # part of `make test`; the rest runs in CI (.ci/run) and on demand
    folder: str | None = None  # the student's folder name, when it is not the case's name

    @property
    def student(self) -> str:
        return self.folder or self.name


# ---------------------------------------------------------------------------------------------- the lab

class Lab:
    """What the cases need to know about one lab, read from its notebooks."""

    def __init__(self, name: str):
        self.name = name
        self.solution = labtools.load_json_notebook(labtools.solution_path(name))
        tested = [e for e in labtools.exercises(self.solution).values() if e.tests and e.function_names]
        # The first exercise whose hidden tests block an llmlab reference (every lab has some; the cases that
        # capture or copy the reference need one).
        for first in tested:
            self.reference = _reference_of(self.solution, [t[0] for t in first.tests])
            if self.reference is not None:
                break
        else:
            raise ValueError(f"{name}: no exercise's tests call reference_blocked (see LAB-CONVENTIONS, checks v2)")
        self.first = first.answer_id
        self.functions = first.function_names
        self.tests = [t[0] for t in first.tests]

    def notebook(self, wrong: bool = False) -> dict:
        spec = {"answers": "solution"}
        nb = json.loads(demo_class.build_submission(self.name, spec))
        for cell in nb["cells"]:  # one string per source, whatever nbformat chose
            if isinstance(cell.get("source"), list):
                cell["source"] = "".join(cell["source"])
        if wrong:
            self.set_answer(nb, self.first, wrong_answer(self.functions))
        return nb

    @staticmethod
    def cell(nb: dict, grade_id: str) -> dict:
        return next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)

    def set_answer(self, nb: dict, grade_id: str, code: str) -> None:
        self.cell(nb, grade_id)["source"] = code

    @staticmethod
    def insert_after(nb: dict, grade_id: str | None, code: str, kind: str = "code") -> None:
        """A new student cell after `grade_id` (None: at the very top, before the setup cell)."""
        cell = {"cell_type": kind, "id": f"hostil-{len(nb['cells'])}", "metadata": {}, "source": code}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        if grade_id is None:
            nb["cells"].insert(0, cell)
            return
        at = next(i for i, c in enumerate(nb["cells"])
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)
        nb["cells"].insert(at + 1, cell)


def wrong_answer(functions: list[str]) -> str:
    return "\n\n".join(f"def {name}(*args, **kwargs):\n    return 0" for name in functions)


def _reference_of(nb, tests: list[str]) -> str | None:
    """The llmlab function the hidden tests block for this exercise, as the notebook spells it (`F.softmax`)."""
    setup = next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "preparacion")
    aliases = {}
    for node in ast.parse(setup).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)) and isinstance(
                node.targets[0], ast.Name):
            aliases[node.targets[0].id] = ast.unparse(node.value.elts[0])
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in tests:
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Call) and ast.unparse(node.func) == "reference_blocked" and node.args:
                    arg = node.args[0]
                    if isinstance(arg, ast.Starred):
                        name = ast.unparse(arg.value)
                        return aliases.get(name, name + "[0]")
                    return ast.unparse(arg)
    return None


def _nb(nb: dict) -> bytes:
    return (json.dumps(nb, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _single(build):
    """A case whose submission is one notebook named like the lab's."""
    def files(lab: Lab, ctx: dict) -> dict:
        return {f"{lab.name}.ipynb": build(lab, ctx)}
    return files


# ---------------------------------------------------------------------------------------------- attacks

NOOP_CODE = '''
import llmlab.checks as _c
def _nada(*args, **kwargs):
    return None
for _n in dir(_c):
    if _n.startswith("check"):
        getattr(_c, _n).__code__ = _nada.__code__
'''

NOOP_MODULE = '''
import numpy as np
import llmlab.checks
_nada = lambda *args, **kwargs: None
for _n in [n for n in dir(llmlab.checks) if n.startswith("check")]:
    setattr(llmlab.checks, _n, _nada)
np.allclose = np.isclose = lambda *args, **kwargs: True
np.asarray = lambda x, *args, **kwargs: 0.0
check_close = check_equal = check_raises = check_true = check_shape = check_type = _nada
'''

OBFUSCATED = "import base64\nexec(base64.b64decode({payload!r}).decode())\n"
OBFUSCATED_PAYLOAD = (
    "m = __import__('llmlab.' + 'che' + 'cks', fromlist=['_'])\n"
    "for n in list(vars(m)):\n"
    "    if n[:5] == 'check':\n"
    "        setattr(getattr(m, n), '__co' + 'de__', (lambda *a, **k: None).__code__)\n"
    "getattr(__builtins__, 'setattr')(m, 'hid' + 'den', lambda *a, **k: __import__('contextlib').nullcontext())\n"
)

BUILTINS = '''
import builtins
builtins.float = lambda *args, **kwargs: 0.0
builtins.isinstance = lambda *args: True
builtins.abs = lambda x: 0
'''

SYS_MODULES = '''
import contextlib, sys, types
_falso = types.ModuleType("llmlab.checks")
for _n in ["check_close", "check_equal", "check_raises", "check_true", "check_shape", "check_type", "ok",
           "show_caught"]:
    setattr(_falso, _n, lambda *args, **kwargs: None)
_falso.hidden = _falso.reference_blocked = lambda *args, **kwargs: contextlib.nullcontext()
_falso.FalloComprobacion = AssertionError
sys.modules["llmlab.checks"] = _falso
import numpy
_np_falso = types.ModuleType("numpy")
_np_falso.__dict__.update(numpy.__dict__)
_np_falso.allclose = lambda *args, **kwargs: True
sys.modules["numpy"] = _np_falso
'''

RUN_CELL = '''
_ip = get_ipython()
_original = _ip.run_cell_async
async def _sin_pruebas(raw_cell, *args, **kwargs):
    if "check_" in raw_cell or "run_test" in raw_cell:
        raw_cell = "print('✔ comprobado')"
    return await _original(raw_cell, *args, **kwargs)
_ip.run_cell_async = _sin_pruebas
_ip.should_run_async = lambda *args, **kwargs: True
'''

HIDE_ERRORS = '''
import sys
_ip = get_ipython()
_ip.showtraceback = lambda *args, **kwargs: None
_ip.set_custom_exc((BaseException,), lambda shell, etype, value, tb, tb_offset=None: None)
sys.excepthook = lambda *args: None
'''

SETTRACE = '''
import sys

def {name}(*args, **kwargs):
    caller = sys._getframe(1)
    last = max(line for _, _, line in caller.f_code.co_lines() if line is not None)

    def saltar(frame, event, arg):
        if frame is caller and event == "line" and frame.f_lineno != last:
            try:
                frame.f_lineno = last
            except ValueError:
                pass
        return saltar

    caller.f_trace = saltar
    sys.settrace(lambda *a: None)
    return 0
'''

FRAMES = '''
import inspect, sys

def {name}(*args, **kwargs):
    frame = sys._getframe(1)
    while frame is not None:
        for key, value in list(frame.f_locals.items()):
            if key.startswith("esper") or key.startswith("expected"):
                return value[0] if isinstance(value, list) else value
        frame = frame.f_back
    for info in inspect.stack():
        for key, value in info.frame.f_locals.items():
            if key.startswith("esper"):
                return value
    return 0
'''

SNOOP = '''
import linecache

def {name}(*args, **kwargs):
    espacio = globals()
    for clave in ("esperados", "esperado", "expected", "casos", "obtenidos"):
        if clave in espacio:
            return espacio[clave][0]
    fuente = "".join("".join(v[2]) for v in list(linecache.cache.values()) if len(v) > 2 and v[2])
    peticion = get_ipython().kernel.get_parent("shell").get("content", {{}}).get("code", "")
    historia = "".join(In) if "In" in espacio else ""
    print("pistas:", len(fuente), len(peticion), len(historia))
    return 0
'''

CAPTURE = '''
def {name}(*args, _referencia={reference}, **kwargs):
    return _referencia(*args, **kwargs)
'''

CODE_COPY = '''
import types
_copia = types.FunctionType({reference}.__code__, {reference}.__globals__, "copia")

def {name}(*args, **kwargs):
    return _copia(*args, **kwargs)
'''

LIAR = '''
class _Mentira(float):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __sub__(self, other):
        return 0.0
    __rsub__ = __sub__
    def __abs__(self):
        return 0.0

def {name}(*args, **kwargs):
    return _Mentira(0.0)
'''

GUARD_HEIST = '''
import sys, threading
_g = sys.modules.get("llmlab_guard")
if _g is not None and _g._state is not None:
    _s = _g._state
    _s.busy.add(threading.get_ident())
    _s.trusted_files.update(k for k in __import__("linecache").cache)
    _s.snapshot.diff = lambda *args, **kwargs: []
    _s.emit = lambda record: None
for _nombre in list(globals()):
    if _nombre.startswith("__llmlab"):
        print("asa encontrada:", _nombre)
'''

READ_SOLUTIONS = '''
import json, os, sys
entorno = (sys.prefix, sys.base_prefix, "/usr", "/proc", "/sys", "/dev")

def _buscar(nombre):
    hallados = []
    for raiz in ("/", os.path.expanduser("~"), "..", "../.."):
        for base, carpetas, ficheros in os.walk(raiz):
            carpetas[:] = [d for d in carpetas if not os.path.join(base, d).startswith(entorno)]
            hallados += [os.path.join(base, f) for f in ficheros if nombre(base, f)]
    return hallados

soluciones = _buscar(lambda base, f: f.endswith(".ipynb") and "solution" in base)
for ruta in soluciones:
    for celda in json.load(open(ruta))["cells"]:
        if "### BEGIN SOLUTION" in "".join(celda["source"]):
            exec("".join(celda["source"]))
print("soluciones encontradas:", len(soluciones))
'''

OTHER_STUDENTS = '''
import glob, os, sys
entorno = (sys.prefix, sys.base_prefix, "/usr", "/proc", "/sys")
ajenos = []
for base, carpetas, ficheros in os.walk("/"):
    carpetas[:] = [d for d in carpetas if not os.path.join(base, d).startswith(entorno)]
    ajenos += [os.path.join(base, f) for f in ficheros if f.endswith(".ipynb")]
ajenos += glob.glob("../*/*/*.ipynb") + glob.glob("../../submitted/*/*/*.ipynb") + glob.glob("/work/*/*/course/*")
print("cuadernos ajenos:", len(ajenos), ajenos[:3])
'''

VANDAL = '''
import os, sys
destrozados = 0
entorno = (sys.prefix, sys.base_prefix, "/usr", "/proc", "/sys", "/dev")
for base, carpetas, ficheros in os.walk("/"):
    carpetas[:] = [d for d in carpetas if not os.path.join(base, d).startswith(entorno)]
    for f in ficheros:
        if f.endswith((".db", ".ipynb", ".csv", ".json", ".html", ".py")):
            try:
                with open(os.path.join(base, f), "w") as fh:
                    fh.write("destrozado")
                destrozados += 1
            except OSError:
                pass
for ruta in ("/work", "/root", "{root}", "{submitted}", "../../gradebook.db"):
    try:
        os.makedirs(ruta, exist_ok=True)
        open(os.path.join(ruta, "gradebook.db"), "w").write("no es una base de datos")
        print("escrito (dentro del entorno aislado):", ruta)
    except OSError:
        pass
print("ficheros destrozados dentro:", destrozados)
'''

NETWORK = '''
import socket
for destino in (("1.1.1.1", 80), ("127.0.0.1", {port}), ("10.0.0.1", 22)):
    try:
        socket.create_connection(destino, timeout=3).close()
        print("red: conectado a", destino)
    except OSError as error:
        print("sin red:", destino[0], type(error).__name__)
'''

BACKGROUND = '''
import ctypes, os, subprocess, time
try:
    subprocess.Popen(["sh", "-c", "sleep 8; echo hackeado > /tmp/x"])
    print("popen lanzado")
except Exception as error:
    print("popen bloqueado:", type(error).__name__)
_libc = ctypes.CDLL(None)
_pid = _libc.fork()
if _pid == 0:  # the child: outlive the kernel, then try to rewrite the results
    _libc.setsid()
    time.sleep(8)
    for ruta in ("{root}/grades.csv", "{root}/gradebook.db", "{root}/grading_report.json", "/tmp/tarde"):
        try:
            open(ruta, "w").write("{{17/20}}")
        except OSError:
            pass
    os._exit(0)
print("proceso en segundo plano:", _pid > 0)
'''

BIG_FILE = '''
try:
    with open("enorme.bin", "wb") as fh:
        for _ in range(2048):
            fh.write(bytes(2**20))
    print("escritos 2 GB")
except OSError as error:
    print("no se pudo escribir el fichero enorme: errno", error.errno)
'''

PRINT_50MB = 'print("x" * 50_000_000)\n'

FORK_CTYPES = '''
import ctypes, time
_libc = ctypes.CDLL(None)
hijos = 0
for _ in range(400):
    pid = _libc.fork()
    if pid == 0:
        time.sleep(3600)
        _libc._exit(0)
    if pid < 0:
        break
    hijos += 1
print("hijos creados:", hijos)
'''


def _wrong_plus(code: str, before_setup: bool = False):
    def build(lab: Lab, ctx: dict) -> bytes:
        nb = lab.notebook(wrong=True)
        lab.insert_after(nb, None if before_setup else "preparacion", code.format(**ctx))
        return _nb(nb)
    return _single(build)


def _full_plus(code: str):
    def build(lab: Lab, ctx: dict) -> bytes:
        nb = lab.notebook()
        lab.insert_after(nb, lab.first, code.format(**ctx))
        return _nb(nb)
    return _single(build)


def _first_is(template: str):
    """The first exercise replaced by `template` (formatted with its function name and llmlab reference)."""
    def build(lab: Lab, ctx: dict) -> bytes:
        nb = lab.notebook()
        code = "\n\n".join(template.format(name=name, reference=lab.reference, **ctx) for name in lab.functions)
        lab.set_answer(nb, lab.first, code)
        return _nb(nb)
    return _single(build)


def _edit(fn):
    def build(lab: Lab, ctx: dict) -> bytes:
        return _nb(fn(lab))
    return _single(build)


def _delete_test(lab: Lab) -> dict:
    nb = lab.notebook()
    nb["cells"].remove(lab.cell(nb, lab.tests[0]))
    return nb


def _empty_test(lab: Lab) -> dict:
    nb = lab.notebook(wrong=True)
    lab.cell(nb, lab.tests[0])["source"] = ""
    return nb


def _duplicate(lab: Lab) -> dict:
    nb = lab.notebook()
    for gid in (lab.first, lab.tests[0]):
        cell = lab.cell(nb, gid)
        twin = copy.deepcopy(cell)
        twin["id"] = cell["id"] + "-copia"
        nb["cells"].insert(nb["cells"].index(cell) + 1, twin)
    return nb


def _retype(lab: Lab) -> dict:
    nb = lab.notebook()
    cell = lab.cell(nb, lab.first)
    cell["cell_type"] = "markdown"
    cell.pop("outputs", None)
    cell.pop("execution_count", None)
    return nb


def _reorder(lab: Lab) -> dict:
    nb = lab.notebook()
    test = lab.cell(nb, lab.tests[0])
    answer = lab.cell(nb, lab.first)
    nb["cells"].remove(test)
    nb["cells"].insert(nb["cells"].index(answer), test)  # the test now comes before its answer
    graded = [c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    last = graded[-1]
    nb["cells"].remove(last)
    nb["cells"].insert(3, last)
    return nb


def _answer_in_markdown(lab: Lab) -> dict:
    nb = lab.notebook()
    solved = lab.cell(nb, lab.first)["source"]
    release = json.loads(labtools.release_path(lab.name).read_text(encoding="utf-8"))
    lab.set_answer(nb, lab.first, "".join(lab.cell(release, lab.first)["source"]))
    lab.insert_after(nb, lab.first, "```python\n" + solved + "\n```", kind="markdown")
    return nb


def _kernelspec(lab: Lab) -> dict:
    nb = lab.notebook()
    nb["metadata"]["kernelspec"] = {"display_name": "Julia 1.9", "language": "julia", "name": "julia-1.9"}
    nb["metadata"]["language_info"] = {"name": "julia"}
    return nb


def _huge_notebook(lab: Lab) -> dict:
    nb = lab.notebook()
    cell = lab.cell(nb, lab.first)
    cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                        "data": {"text/plain": "relleno " * 6_600_000}}]
    return nb


def _symlink(lab: Lab, ctx: dict) -> dict:
    return {f"{lab.name}.ipynb": ("symlink", str(labtools.solution_path(lab.name)))}


def _raw(data: bytes):
    def build(lab: Lab, ctx: dict) -> dict:
        return {f"{lab.name}.ipynb": data}
    return build


FORK_MEMORY = '''
import ctypes, sys, time
# posix_spawn(), not fork(): a fork()ed copy of the kernel (a CPython with several threads) can hang at its first
# switch of the GIL, waiting for a thread that exists only in the parent (5 of 8 children did, under load), and the
# submission then never passes its bound. A spawned child is a fresh interpreter, started below Python's own hooks.
_libc = ctypes.CDLL(None, use_errno=True)
_programa = (b"import time\\n"
             b"datos = bytearray(400 * 2**20)\\n"  # each child well under the per-process limit
             b"for i in range(0, len(datos), 4096):\\n    datos[i] = 1\\n"
             b"time.sleep(3600)\\n")
_argv = (ctypes.c_char_p * 4)(sys.executable.encode(), b"-c", _programa, None)
_env = (ctypes.c_char_p * 2)(b"PATH=/usr/bin:/bin", None)
lanzados = 0
for _ in range(8):  # together past the submission's bound
    pid = ctypes.c_int()
    if _libc.posix_spawn(ctypes.byref(pid), sys.executable.encode(), None, None, _argv, _env) == 0:
        lanzados += 1
print("procesos lanzados:", lanzados, flush=True)
time.sleep(60)
'''

HARMLESS = '''
import io, os, resource, shutil, tempfile, zipfile
blando, duro = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(blando, 256), duro))
memoria = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, memoria)
paquete = io.BytesIO()
with zipfile.ZipFile(paquete, "w") as z:
    z.writestr("datos/tabla.csv", "a,b\\n1,2\\n")
with open("adjunto.zip", "wb") as fh:
    fh.write(paquete.getvalue())
zipfile.ZipFile("adjunto.zip").extractall("extraido")
shutil.unpack_archive("adjunto.zip", "extraido2")
for carpeta, mib in (("/tmp", 300), ("/dev/shm", 100), (tempfile.gettempdir(), 50)):
    with tempfile.NamedTemporaryFile(dir=carpeta, delete=False) as fh:
        for _ in range(mib):
            fh.write(bytes(2**20))
print("uso inofensivo:", sorted(os.listdir("extraido")), open("extraido2/datos/tabla.csv").read().split())
'''

MOUNTINFO = '''
ajenas = [linea for linea in open("/proc/self/mountinfo").read().splitlines()
          if any(r in linea for r in ({root!r}, {submitted!r}, "/solutions", "/course/"))]
print("rutas ajenas:", len(ajenas), ajenas[:2])
'''


def _folder_as_notebook(lab: Lab, ctx: dict) -> dict:
    return {f"{lab.name}.ipynb": ("dir",)}


def _latin1_markdown(lab: Lab, ctx: dict) -> dict:
    nb = lab.notebook()
    lab.insert_after(nb, lab.first, "Mi explicación: MARCA", kind="markdown")
    return {f"{lab.name}.ipynb": _nb(nb).replace("MARCA".encode(), "café con leña".encode("latin-1"))}


TAMPER = dict(like="wrong", relation="at_most", flags=frozenset({"sospechosa"}))

CASES = [
    Case("control_full", "todo resuelto, sin trampas", _edit(lambda lab: lab.notebook()),
         Expect("full", no_flags=frozenset({"sospechosa", "FALLO", "tiempo", "manipulada", "reparada",
                                            "sin aislar"})), fast=True),
    Case("control_wrong", "todo resuelto salvo el primer ejercicio (return 0), sin trampas",
         _edit(lambda lab: lab.notebook(wrong=True)),
         Expect("wrong", no_flags=frozenset({"sospechosa", "FALLO", "tiempo", "manipulada", "reparada",
                                             "sin aislar"})), fast=True),
    Case("infinite_loop", "bucle infinito en el primer ejercicio", _first_is("def {name}(*args, **kwargs):\n"
                                                                            "    while True:\n        pass"),
         Expect("wrong", "at_most", flags=frozenset({"tiempo"}))),
    Case("sigint_ignored", "ignora SIGINT y entra en un bucle",
         _first_is("import signal\n\ndef {name}(*args, **kwargs):\n    signal.signal(signal.SIGINT, signal.SIG_IGN)"
                   "\n    while True:\n        pass"),
         Expect("wrong", "at_most", flags=frozenset({"sospechosa"}), one_of=frozenset({"FALLO", "tiempo"}))),
    Case("memory_bomb", "pide 64 GiB de memoria", _first_is("def {name}(*args, **kwargs):\n"
                                                           "    return bytearray(64 * 2**30)"),
         Expect("wrong", "at_most")),
    Case("memory_creep", "llena la memoria poco a poco", _first_is(
        "def {name}(*args, **kwargs):\n    bloques = []\n    while True:\n        bloques.append(bytearray(2**27))"),
         Expect("wrong", "at_most")),
    Case("fork_bomb", "bomba de procesos con os.fork", _first_is(
        "import os\n\ndef {name}(*args, **kwargs):\n    while True:\n        os.fork()"),
         Expect("wrong", "at_most", flags=frozenset({"sospechosa"}))),
    Case("fork_ctypes", "cientos de procesos con fork() de libc (sin pasar por Python)", _full_plus(FORK_CTYPES),
         Expect("full", "at_most", flags=frozenset({"sospechosa"}))),
    Case("os_exit", "os._exit() dentro de la función", _first_is(
        "import os\n\ndef {name}(*args, **kwargs):\n    os._exit(3)"),
         Expect("wrong", "at_most", flags=frozenset({"FALLO", "sospechosa"})), fast=True),
    Case("sys_exit", "SystemExit dentro de la función", _first_is("def {name}(*args, **kwargs):\n"
                                                                 "    raise SystemExit(0)"),
         Expect("wrong", "at_most", flags=frozenset({"sospechosa"}))),
    Case("print_50mb", "una celda imprime 50 MB", _full_plus(PRINT_50MB),
         Expect("full", outputs=("salida recortada",))),
    Case("file_2gb", "escribe un fichero de 2 GB", _full_plus(BIG_FILE),
         Expect("full", outputs=("no se pudo escribir el fichero enorme",))),
    Case("notebook_50mb", "cuaderno de 50 MB (salidas enormes)", _edit(_huge_notebook), Expect("full")),
    Case("deleted_test", "borra la celda de prueba", _edit(_delete_test), Expect("full", flags=frozenset({"reparada"}))),
    Case("emptied_test", "vacía la celda de prueba", _edit(_empty_test), Expect("wrong", flags=frozenset({"manipulada"}))),
    Case("duplicated_cells", "duplica la respuesta y su prueba", _edit(_duplicate),
         Expect("full", flags=frozenset({"reparada"}))),
    Case("retyped_answer", "convierte la respuesta en texto", _edit(_retype),
         Expect("wrong", "at_most", flags=frozenset({"reparada"}))),
    Case("reordered_cells", "mueve la prueba antes de la respuesta y baraja celdas", _edit(_reorder),
         Expect("full", flags=frozenset({"reparada"}))),
    Case("answer_in_markdown", "escribe la respuesta en una celda de texto", _edit(_answer_in_markdown),
         Expect("wrong", "at_most")),
    Case("wrong_kernelspec", "kernelspec de Julia", _edit(_kernelspec), Expect("full")),
    Case("invalid_json", "JSON inválido", _raw(b'{"cells": [{"cell_type": "code", "source": "def f('), Expect(None, flags=frozenset({"FALLO"})), fast=True),
    Case("empty_file", "fichero vacío", _raw(b""), Expect(None, flags=frozenset({"FALLO"}))),
    Case("symlink_to_solution", "entrega un enlace simbólico a la solución del profesor", _symlink,
         Expect(None, flags=frozenset({"FALLO"})), fast=True),
    Case("rebind_names", "redefine las comprobaciones en el cuaderno",
         _wrong_plus("check_close = check_equal = check_raises = check_true = check_shape = check_type = "
                     "lambda *a, **k: None"), Expect(**TAMPER)),
    Case("rebind_modules", "reasigna funciones de llmlab.checks y numpy", _wrong_plus(NOOP_MODULE), Expect(**TAMPER)),
    Case("swap_code", "cambia el __code__ de las comprobaciones", _wrong_plus(NOOP_CODE), Expect(**TAMPER), fast=True),
    Case("obfuscated", "lo mismo, ofuscado con exec, base64, getattr y setattr",
         _wrong_plus(OBFUSCATED.format(payload=base64.b64encode(OBFUSCATED_PAYLOAD.encode()).decode())),
         Expect(**TAMPER)),
    Case("builtins", "cambia float, isinstance y abs en builtins", _wrong_plus(BUILTINS), Expect(**TAMPER)),
    Case("sys_modules", "sustituye llmlab.checks y numpy en sys.modules antes de la preparación",
         _wrong_plus(SYS_MODULES, before_setup=True), Expect(**TAMPER)),
    Case("ipython_run_cell", "cambia run_cell_async de IPython para no ejecutar las pruebas",
         _wrong_plus(RUN_CELL), Expect(**TAMPER)),
    Case("ipython_hide_errors", "oculta los errores: showtraceback, set_custom_exc, excepthook",
         _wrong_plus(HIDE_ERRORS), Expect(**TAMPER), fast=True),
    Case("settrace_skip", "un trazador salta las líneas de la prueba", _first_is(SETTRACE), Expect(**TAMPER)),
    Case("frame_peek", "lee los valores esperados de los marcos de la prueba", _first_is(FRAMES),
         Expect(**TAMPER), fast=True),
    Case("snoop_test_source", "busca la prueba en globals(), linecache, In y la petición del kernel",
         _first_is(SNOOP), Expect(**TAMPER)),
    Case("reference_capture", "guarda la referencia de llmlab en un argumento por defecto", _first_is(CAPTURE),
         Expect(**TAMPER)),
    Case("reference_code_copy", "copia el __code__ de la referencia de llmlab", _first_is(CODE_COPY),
         Expect(**TAMPER)),
    Case("lying_object", "devuelve un objeto que dice ser igual a todo", _first_is(LIAR), Expect("wrong", "at_most")),
    Case("guard_heist", "busca el guardián de la corrección y lo desactiva", _wrong_plus(GUARD_HEIST + NOOP_CODE),
         Expect(**TAMPER)),
    Case("read_solutions", "busca los cuadernos de soluciones del profesor y los ejecuta",
         _wrong_plus(READ_SOLUTIONS), Expect("wrong", "at_most", outputs=("soluciones encontradas: 0",))),
    Case("other_students", "busca cuadernos de otros alumnos", _full_plus(OTHER_STUDENTS),
         Expect("full", outputs=("cuadernos ajenos: 0",))),
    Case("vandal", "intenta destrozar el gradebook, las entregas y todo fichero que alcance", _full_plus(VANDAL),
         Expect("full", outputs=("ficheros destrozados dentro",))),
    Case("network", "intenta conectarse a internet y a un puerto de la máquina", _full_plus(NETWORK),
         Expect("full", outputs=("sin red: 1.1.1.1", "sin red: 127.0.0.1"), no_outputs=("red: conectado",))),
    Case("background_rewrite", "deja un proceso que reescribe las notas después", _full_plus(BACKGROUND),
         Expect("full", flags=frozenset({"sospechosa"}), outputs=("popen bloqueado",))),
    # Issue 29: faults as well as attacks.
    Case("folder_as_notebook", "una carpeta con el nombre del cuaderno", _folder_as_notebook,
         Expect(None, flags=frozenset({"FALLO"})), fast=True),
    Case("fork_memory", "8 procesos lanzados con posix_spawn() de libc, cada uno bajo su límite, juntos por encima "
         "del de la entrega", _full_plus(FORK_MEMORY),
         Expect("full", "at_most", flags=frozenset({"FALLO"}), notes=("superó el límite de memoria de la entrega",))),
    Case("harmless_machine_use", "setrlimit dentro de sus límites, descomprime un zip, llena /tmp y /dev/shm",
         _full_plus(HARMLESS), Expect("full", no_flags=frozenset({"sospechosa", "FALLO", "sin aislar"}),
                                      outputs=("uso inofensivo:",)), fast=True),
    Case("latin1_markdown", "un byte que no es UTF-8 en una celda de texto", _latin1_markdown,
         Expect("full", flags=frozenset({"reparada"}), no_flags=frozenset({"FALLO", "sin aislar"}))),
    Case("formula_newline_name", "se llama '=1+1' con un salto de línea (CSV, consola)",
         _edit(lambda lab: lab.notebook()), Expect("full"), fast=True, folder="=1+1\nn_csv"),
    Case("mountinfo", "busca rutas del corrector en /proc/self/mountinfo", _full_plus(MOUNTINFO),
         Expect("full", outputs=("rutas ajenas: 0",))),
]
