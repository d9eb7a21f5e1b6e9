"""Grading that survives faults, stage by stage (issue 29). End to end with grade.py: test_grading_operations.py.

Without kernels: odd files become one submission's FALLO, grader failures are told apart from the student's,
the lock, CSV formula injection, names that break lines, non-UTF-8 bytes, harmless code not accused, the
kernel's numerics settings, output folders that cannot be written. With real processes: children and
grandchildren die with the grader on SIGKILL. With real jails (bubblewrap): the memory bound of a whole
submission (libc-forked children; /tmp and /dev/shm filled) and what /proc/self/mountinfo shows inside.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from labharness import REPO, labtools

sys.path.insert(0, str(REPO / "course" / "tools"))
import demo_class  # noqa: E402
from grading import execute, files, gradebook, kit, pipeline, report, scan, score, stage  # noqa: E402
from grading.records import Result  # noqa: E402
from grading.sandbox import Limits, Sandbox  # noqa: E402

LAB = labtools.lab_names()[0]
BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed (make sysdeps)")


@pytest.fixture(scope="module")
def lab_kit():
    return kit.build(LAB, labtools.solution_path(LAB), labtools.LABS / LAB)


# ---------------------------------------------------------------------------------------------- (1) odd files

def test_a_folder_named_like_the_notebook_is_that_submissions_fallo(tmp_path):
    (tmp_path / "carla" / LAB / f"{LAB}.ipynb").mkdir(parents=True)
    (tmp_path / "ana" / LAB).mkdir(parents=True)
    (tmp_path / "ana" / LAB / f"{LAB}.ipynb").write_text(demo_class.build_submission(LAB, {"answers": "solution"}))
    with pytest.raises(files.UnsafeFile, match="carpeta"):
        files.read_regular_file(tmp_path / "carla" / LAB / f"{LAB}.ipynb", 1000)
    students, subs = pipeline.discover(tmp_path, [LAB])
    assert students == ["ana", "carla"]
    carla = subs[("carla", LAB)]
    assert carla.present and carla.notebook is None and "es una carpeta" in carla.notes[0]
    assert subs[("ana", LAB)].notebook


def test_any_error_reading_one_submission_stays_in_that_submission(tmp_path, monkeypatch):
    for name in ("ana", "bruno"):
        (tmp_path / name / LAB).mkdir(parents=True)

    def broken(folder, student, lab):
        if student == "bruno":
            raise IsADirectoryError(21, "Is a directory")
        return stage.Submission(student, lab, b"{}", present=True)

    monkeypatch.setattr(stage, "read_folder", broken)
    _, subs = pipeline.discover(tmp_path, [LAB])
    assert subs[("ana", LAB)].notebook == b"{}"
    bruno = subs[("bruno", LAB)]
    assert bruno.present and bruno.notebook is None and "IsADirectoryError" in bruno.notes[0]


# ---------------------------------------------------------------------------------------------- (5) grader errors

def test_a_jail_that_never_got_ready_is_an_error_of_the_grader(lab_kit):
    sub = stage.Submission("ana", LAB, demo_class.build_submission(LAB, {"answers": "solution"}).encode(),
                           present=True)
    staged = stage.rebuild(lab_kit, sub)
    run = execute.RunOutput(ready=False, error="el guardián de la corrección no se pudo instalar "
                                               "(ModuleNotFoundError: No module named 'llmlab')")
    r = score.result(lab_kit, sub, staged, run, {}, scan.ScanReport(), True)
    assert r.grader_error and "FALLO" not in r.flags and r.score is None
    assert "error del corrector" in r.evidence["error del corrector"][0]
    assert "E" in report.cell_text(r, compact=True)


# ---------------------------------------------------------------------------------------------- (6) the lock

def test_a_second_run_on_the_same_root_is_refused(tmp_path):
    with files.grading_lock(tmp_path):
        with pytest.raises(files.Busy, match=str(os.getpid())):
            with files.grading_lock(tmp_path):
                pass
    with files.grading_lock(tmp_path):  # released: the next run may go
        pass


# ---------------------------------------------------------------------------------------------- (7) CSV

@pytest.mark.parametrize("name", ["=1+1 n_csv", "+suma", "-resta", "@arroba", "\tTAB", "\rCR", "=HYPERLINK(\"x\")"])
def test_csv_fields_that_a_spreadsheet_would_evaluate_are_neutralised(name):
    out = io.StringIO()
    csv.writer(out).writerow([gradebook._cell(name), "1.0"])
    field = next(csv.reader(io.StringIO(out.getvalue())))[0]
    assert field == "'" + name  # read back: text starting with a quote, the original kept after it
    assert gradebook._cell("ana") == "ana" and gradebook._cell("ana-maria") == "ana-maria"


# ---------------------------------------------------------------------------------------------- (9) writes

def test_what_counts_as_an_output_folder_that_cannot_be_written():
    assert "solo lectura" in files.write_failure(OSError(errno.EROFS, "Read-only file system"))
    assert "espacio" in files.write_failure(OSError(errno.ENOSPC, "No space left on device"))
    wrapped = RuntimeError("commit failed")
    wrapped.__cause__ = Exception("(sqlite3.OperationalError) database or disk is full")
    assert "espacio" in files.write_failure(wrapped)
    assert files.write_failure(ValueError("a bug")) is None


# ---------------------------------------------------------------------------------------------- (10) accusations

def _scan(lab_kit, code: str) -> list[str]:
    cells = [{"type": "code", "role": "student", "source": code, "id": "c1", "grade_id": None}]
    return scan.scan(lab_kit, cells).reasons


HARMLESS = textwrap.dedent('''
    import io, os, resource, shutil, sys, tempfile, zipfile
    blando, duro = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (blando, duro))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("datos/a.txt", "hola")
    zipfile.ZipFile(buf).extractall("datos_extraidos")
    with open("/tmp/relleno.bin", "wb") as fh:
        fh.write(bytes(2**20))
    with open("/dev/shm/otro.bin", "wb") as fh:
        fh.write(bytes(2**20))
    shutil.rmtree("datos_extraidos")
    print(os.getcwd(), sys.version, tempfile.gettempdir())
''')


def test_harmless_use_of_the_machine_is_not_flagged(lab_kit):
    assert _scan(lab_kit, HARMLESS) == []


def test_what_tampers_or_reaches_out_is_still_flagged(lab_kit):
    reasons = " ".join(_scan(lab_kit, "import os, sys\nos.fork()\nsys.modules['numpy'] = None\n"
                                      "open('/work/main/solutions/x.ipynb')\nimport ctypes\n"))
    for needle in (".fork", "sys.modules", "/work/main", "ctypes"):
        assert needle in reasons, reasons


def test_each_flag_keeps_its_evidence():
    r = Result("ana", LAB)
    r.flag("sospechosa", "importa ctypes (celda c1)")
    r.flag("reparada", "celdas restauradas")
    assert r.to_dict()["evidence"] == {"sospechosa": ["importa ctypes (celda c1)"], "reparada": ["celdas restauradas"]}
    assert Result.from_dict(json.loads(json.dumps(r.to_dict()))).evidence == r.evidence


# ---------------------------------------------------------------------------------------------- (11) smaller

def test_a_non_utf8_byte_in_a_markdown_cell_is_repaired_and_graded(lab_kit):
    nb = json.loads(demo_class.build_submission(LAB, {"answers": "solution"}))
    md = next(c for c in nb["cells"] if c["cell_type"] == "markdown" and not c["metadata"].get("nbgrader"))
    md["source"] = "Notas: MARCA"
    data = json.dumps(nb).encode().replace(b"MARCA", b"caf\xe9")  # Latin-1 é: not UTF-8
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    staged = stage.rebuild(lab_kit, stage.Submission("ana", LAB, data, present=True))
    assert staged.unreadable is None
    assert any("no son UTF-8" in note for note in staged.flags["reparada"])
    assert any(c["source"] == "Notas: caf\ufffd" for c in staged.cells)
    answers = [c for c in staged.cells if c["role"] == "answer"]
    assert answers and all(c["student_changed"] for c in answers)  # the answers are the student's, graded


def test_a_name_with_a_newline_stays_on_one_line():
    assert report.printable("ana\nlópez\t\x1b[2J") == "ana\\nlópez\\t\\x1b[2J"
    line = report.table([Result("ana\nb", LAB, score=1.0, max_score=2.0)], [LAB], ["ana\nb"])
    assert len(line.splitlines()) == 3  # header, rule, one row


def test_cpu_numerics_settings_reach_the_kernel(monkeypatch):
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default; rm -rf /")  # not a setting: not passed
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setenv("SECRET_TOKEN", "x")
    env = execute.kernel_env()
    assert env["MKL_CBWR"] == "COMPATIBLE" and "ATEN_CPU_CAPABILITY" not in env and "SECRET_TOKEN" not in env
    assert env["OMP_NUM_THREADS"] == "1"  # every submission gets one thread, whatever the machine
    assert os.path.isdir(os.path.join(env["PYTHONPATH"], "llmlab"))  # the llmlab this grader replays with


# ---------------------------------------------------------------------------------------------- (3) orphans

def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as fh:
                    children.setdefault(int(fh.read().rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
            except (OSError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _gone(pids, seconds=30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.2)
    return left


PARENT = textwrap.dedent('''
    import sys, time
    sys.path.insert(0, {tools!r})
    from grading.executors import LocalExecutor
    from grading.processes import run_kept
    import threading
    ex = LocalExecutor(2)
    futures = [ex.submit(time.sleep, 300) for _ in range(2)]
    threading.Thread(target=run_kept, args=(["sh", "-c", "sleep 301 & sleep 302; wait"],), daemon=True).start()
    print("listo", flush=True)
    time.sleep(300)
''')


def test_workers_keepers_and_grandchildren_die_when_the_grader_is_sigkilled():
    proc = subprocess.Popen([sys.executable, "-c", PARENT.format(tools=str(REPO / "course" / "tools"))],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "listo"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # two workers, the resource tracker, the keeper, sh and two sleeps
        family = _descendants(proc.pid)
        if len(family) >= 7:
            break
        time.sleep(0.2)
    assert len(family) >= 7, family
    proc.kill()
    proc.wait()
    assert _gone(family) == []


# ---------------------------------------------------------------------------------------------- (2) memory

FORKS = textwrap.dedent('''
    import ctypes, os, time
    libc = ctypes.CDLL(None)
    for _ in range({n}):
        if libc.fork() == 0:
            data = bytearray({mib} * 2**20)
            for i in range(0, len(data), 4096):
                data[i] = 1
            time.sleep(120)
            libc._exit(0)
    time.sleep(120)
''')
FILLS = textwrap.dedent('''
    import time
    for folder in ("/tmp", "/dev/shm", "/home/alumno"):
        with open(folder + "/relleno.bin", "wb") as fh:
            for _ in range({mib}):
                fh.write(bytes(2**20))
    time.sleep(120)
''')


def _jailed(code: str, limits: Limits) -> execute.RunOutput:
    sandbox = Sandbox.detect()
    if not sandbox.isolated:
        pytest.skip(f"no jail here: {sandbox.reason}")
    cmd = sandbox.command([sys.executable, "-I", "-c", code], None, limits, execute.kernel_env())
    out = execute.RunOutput()
    execute._collect(cmd, b"", limits, out, cwd=None, isolated=True)
    return out


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("what, code", [
    ("libc-forked children", FORKS.format(n=8, mib=120)),  # 8 x 120 MiB: each far below the per-process limit
    ("tmpfs files", FILLS.format(mib=200)),  # 3 x 200 MiB in /tmp, /dev/shm and the home: no process holds it
])
def test_a_submission_is_bounded_as_a_whole(what, code):
    limits = Limits(total_timeout=60, jail_memory_bytes=500 * 2**20, memory_bytes=1024 * 2**20)
    out = _jailed(code, limits)
    assert out.killed and "límite de memoria de la entrega (500 MiB" in out.killed, (what, out.killed, out.stderr)
    assert out.peak_memory > 500 * 2**20
    assert out.wall < 60  # killed by the bound, not by the total timeout
    print(f"{what}: killed at {out.peak_memory / 2**20:.0f} MiB sampled ({out.killed})")


@needs_bwrap
@pytest.mark.slow
def test_a_submission_under_the_bound_is_not_killed():
    limits = Limits(total_timeout=60, jail_memory_bytes=800 * 2**20, memory_bytes=1024 * 2**20)
    out = _jailed(FORKS.format(n=2, mib=60).replace("time.sleep(120)", "time.sleep(3)"), limits)
    assert out.killed is None and 120 * 2**20 < out.peak_memory < 800 * 2**20, (out.killed, out.peak_memory)


@needs_bwrap
@pytest.mark.slow
def test_mountinfo_in_the_jail_shows_no_grading_paths(tmp_path):
    """Bind mounts show their source path in mountinfo (kernel behaviour, field 4): the system and the Python
    environment bound read-only appear, by necessity. Nothing of the grading run does: not the grading root,
    the submissions, the solutions, the course, the journal."""
    code = "import sys; sys.stderr.write(open('/proc/self/mountinfo').read())"
    limits = Limits(total_timeout=60)
    out = _jailed(code, limits)
    text = out.stderr
    assert "/tmp" in text and "/home/alumno" in text, text
    for secret in (str(REPO / "solutions"), str(REPO / "course"), str(REPO / "build"), str(tmp_path), "/work/notes"):
        assert secret not in text, (secret, text)
    print(text)
