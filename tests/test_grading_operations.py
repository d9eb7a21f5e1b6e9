"""Operational faults against `grade.py`, end to end with real jails (issue 29).

One class is graded once (module fixture): a correct student, one whose name is a spreadsheet formula with a
newline in it, and one who handed in a folder named like the notebook. Then, each on a copy of that grading
root: the gradebook deleted or corrupt (rebuilt from the journal, `--export-only` never empties the report),
a second run while one holds the lock, a read-only output folder, a broken grading environment ("error del
corrector", not journaled, graded on the next run), SIGKILL of grade.py (no orphans, resume) and Ctrl-C.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labharness import REPO, labtools
from test_grading_faults import _descendants, _gone

sys.path.insert(0, str(REPO / "course" / "tools"))
from grading import files  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sysdeps)")]
GRADE = REPO / "course" / "tools" / "grade.py"
LAB = labtools.lab_names()[0]
FORMULA = "=1+1\nn_csv"


def _cmd(submitted: Path, root: Path, *extra: str) -> list[str]:
    return [sys.executable, str(GRADE), "--submitted", str(submitted), "--root", str(root), "--labs", LAB,
            "--jobs", "1", *extra]


def _report(root: Path) -> dict:
    return {(r["student"], r["lab"]): r for r in json.loads((root / "grading_report.json").read_text())["results"]}


def _csv(root: Path) -> list[dict]:
    with open(root / "grades.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _add(submitted: Path, name: str, source: str = "ana_correcta") -> None:
    shutil.copytree(REPO / "course" / "submitted" / source / LAB, submitted / name / LAB)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("operaciones")
    submitted, root = base / "entregas", base / "curso"
    _add(submitted, "ana")
    _add(submitted, FORMULA)
    (submitted / "carpeta" / LAB / f"{LAB}.ipynb").mkdir(parents=True)
    proc = subprocess.run(_cmd(submitted, root), capture_output=True, text=True, timeout=1800)
    return {"proc": proc, "submitted": submitted, "root": root, "base": base}


def _copy(graded, tmp_path) -> Path:
    root = tmp_path / "curso"
    shutil.copytree(graded["root"], root, symlinks=True)
    return root


def test_odd_files_and_names_do_not_stop_the_batch(graded):
    proc, root = graded["proc"], graded["root"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = _report(root)
    carpeta = results[("carpeta", LAB)]
    assert carpeta["flags"] == ["FALLO"] and "carpeta" in " ".join(carpeta["notes"])
    assert results[("ana", LAB)]["score"] == results[(FORMULA, LAB)]["score"] > 0
    progress = [line for line in proc.stdout.splitlines() if "n_csv" in line and f"/ {LAB}:" in line]
    assert progress and progress[0].startswith("  =1+1\\nn_csv / "), proc.stdout  # one line, the newline escaped
    row = next(r for r in _csv(root) if "n_csv" in r["student_id"])
    assert row["student_id"] == "'" + FORMULA  # a spreadsheet shows it as text, never evaluates it
    assert "Traceback" not in proc.stderr


def test_a_deleted_or_corrupt_gradebook_is_rebuilt_from_the_journal(graded, tmp_path):
    root = _copy(graded, tmp_path)
    expected = {k: (r["score"], r["tests"]) for k, r in _report(root).items()}
    rows = len(_csv(root))
    for damage in ("delete", "corrupt"):
        if damage == "delete":
            (root / "gradebook.db").unlink()
        else:
            (root / "gradebook.db").write_bytes(b"esto no es SQLite" * 100)
        proc = subprocess.run(_cmd(graded["submitted"], root), capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert "3 reutilizadas" in proc.stdout and "0 entregas corregidas ahora" in proc.stdout  # nothing re-run
        assert len(_csv(root)) == rows  # the gradebook holds them all again
        assert {k: (r["score"], r["tests"]) for k, r in _report(root).items()} == expected
        proc = subprocess.run(_cmd(graded["submitted"], root, "--export-only"), capture_output=True, text=True)
        assert proc.returncode == 0 and len(_csv(root)) == rows, proc.stdout + proc.stderr
    assert list(root.glob("gradebook.db.dañado-*"))  # the corrupt one is kept, set aside

    (root / "gradebook.db").unlink()  # `make grades` with no gradebook: says so, empties nothing
    before = (root / "grading_report.json").read_bytes(), (root / "grades.csv").read_bytes()
    proc = subprocess.run(_cmd(graded["submitted"], root, "--export-only"), capture_output=True, text=True)
    assert proc.returncode != 0 and "make grade" in proc.stderr and "Traceback" not in proc.stderr
    assert ((root / "grading_report.json").read_bytes(), (root / "grades.csv").read_bytes()) == before


def test_a_second_run_on_the_same_root_is_refused_in_spanish(graded, tmp_path):
    root = _copy(graded, tmp_path)
    with files.grading_lock(root):
        proc = subprocess.run(_cmd(graded["submitted"], root), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3 and "Ya hay otra corrección en marcha" in proc.stderr, proc.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1)")
def test_a_read_only_output_folder_is_explained_and_nothing_is_lost(graded, tmp_path):
    root = _copy(graded, tmp_path)
    _add(graded["base"] / "mas", "nuevo")  # something left to grade, so the run has to write
    submitted = tmp_path / "entregas"
    shutil.copytree(graded["submitted"], submitted, symlinks=True)
    shutil.copytree(graded["base"] / "mas" / "nuevo", submitted / "nuevo")
    journal = sorted(p.name for p in (root / "journal").rglob("*.json"))
    inner = " ".join(subprocess.list2cmdline([a]) for a in _cmd(submitted, root))
    script = f"mount --bind {root} {root} && mount -o remount,ro,bind {root} {root} && exec {inner}"
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "No se puede escribir" in proc.stderr and "solo lectura" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in (root / "journal").rglob("*.json")) == journal


def test_a_broken_grading_environment_is_the_graders_error_and_is_retried(graded, tmp_path):
    root = _copy(graded, tmp_path)
    submitted = tmp_path / "entregas"
    shutil.copytree(graded["submitted"], submitted, symlinks=True)
    _add(submitted, "nuevo")
    fake = tmp_path / "roto" / "llmlab"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('entorno roto a propósito')\n")
    env = dict(os.environ, PYTHONPATH=f"{fake.parent}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.run(_cmd(submitted, root), capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    nuevo = _report(root)[("nuevo", LAB)]
    assert nuevo["flags"] == ["error del corrector"] and nuevo["score"] is None, nuevo
    assert "error del corrector" in proc.stdout
    assert not (root / "journal" / LAB / "nuevo.json").exists()  # never journaled as final
    proc = subprocess.run(_cmd(submitted, root), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert _report(root)[("nuevo", LAB)]["score"] == _report(root)[("ana", LAB)]["score"]
    assert "1 entrega corregida ahora" in proc.stdout


def _start(cmd, **kw):
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _wait_for_a_jail(proc, seconds=600) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        family = _descendants(proc.pid)
        cmdlines = []
        for pid in family:
            try:
                cmdlines.append(Path(f"/proc/{pid}/cmdline").read_bytes())
            except OSError:
                pass
        if any(b"bwrap" in c for c in cmdlines) and any(b"ipykernel" in c for c in cmdlines):
            return family
        time.sleep(0.3)
    raise AssertionError("no jail started")


def test_sigkill_of_the_grader_leaves_no_process_and_the_run_resumes(graded, tmp_path):
    root = _copy(graded, tmp_path)
    submitted = tmp_path / "entregas"
    shutil.copytree(graded["submitted"], submitted, symlinks=True)
    _add(submitted, "nuevo")
    proc = _start(_cmd(submitted, root))
    family = _wait_for_a_jail(proc)
    proc.kill()  # grade.py only, as `kill -9 <pid>` does: not its process group
    proc.communicate()
    assert _gone(family + _descendants(proc.pid)) == []
    resumed = subprocess.run(_cmd(submitted, root), capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert "1 entrega corregida ahora, 3 reutilizadas" in resumed.stdout


def _add_slow(submitted: Path, name: str, seconds: int = 45) -> None:
    """ana's submission with a first cell that sleeps: a grading that is surely still running when we look."""
    import nbformat

    _add(submitted, name)
    path = submitted / name / LAB / f"{LAB}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(f"import time\ntime.sleep({seconds})"))
    nbformat.write(nb, path)


def test_ctrl_c_stops_quickly_says_what_was_kept_and_prints_no_traceback(graded, tmp_path):
    root = _copy(graded, tmp_path)
    submitted = tmp_path / "entregas"
    shutil.copytree(graded["submitted"], submitted, symlinks=True)
    _add_slow(submitted, "nuevo")  # still being graded whenever we look
    # A terminal's grade.py gets Ctrl-C; a test process may have SIGINT ignored (pytest-xdist workers in a full
    # run), and a child inherits that, so Python would never raise KeyboardInterrupt: give it the terminal's.
    proc = _start(_cmd(submitted, root), start_new_session=True,
                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    family = _wait_for_a_jail(proc)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: the whole foreground group gets it
    start = time.monotonic()
    out, err = proc.communicate(timeout=120)
    seconds = time.monotonic() - start
    assert proc.returncode == 130, out[-2000:] + err[-2000:]
    assert "Corrección interrumpida" in err and "seguirá donde lo" in err and "3 entregas" in err, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert _gone(family) == []
    print(f"Ctrl-C: grade.py ended {seconds:.1f} s after SIGINT")
