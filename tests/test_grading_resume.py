"""No grade is lost and none changes by grading again: the journal makes grading resumable and idempotent, and
`make grade` never writes the handed-in files or labs/."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from labharness import REPO, labtools

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sysdeps)")]
GRADE = REPO / "course" / "tools" / "grade.py"
LAB = labtools.lab_names()[0]
STUDENTS = ["ana_correcta", "bruno_sin_tocar", "diego_errores", "elena_trampa", "ines_parchea"]


def _digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _outcomes(root):
    report = json.loads((root / "grading_report.json").read_text())
    return {(r["student"], r["lab"]): (r["score"], sorted(r["flags"]), r["tests"]) for r in report["results"]}


def test_killed_run_resumes_without_regrading_and_regrading_changes_nothing(tmp_path):
    submitted = tmp_path / "entregas"
    for student in STUDENTS:
        shutil.copytree(REPO / "course" / "submitted" / student / LAB, submitted / student / LAB)
    handed_in, labs_before = _digest(submitted), _digest(REPO / "labs")
    root = tmp_path / "curso"
    cmd = [sys.executable, str(GRADE), "--submitted", str(submitted), "--root", str(root), "--labs", LAB,
           "--jobs", "1"]

    # 1. Kill the grader (and its process group, as Ctrl-C or a crash would) once two submissions are done.
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    journal = root / "journal" / LAB
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and len(list(journal.glob("*.json"))) < 2 and proc.poll() is None:
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.stat().st_mtime_ns for p in journal.glob("*.json")}
    assert 2 <= len(finished) < len(STUDENTS), finished

    # 2. Run again: it resumes, grading only what was missing.
    resumed = subprocess.run(cmd, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert f"{len(finished)} reutilizadas" in resumed.stdout or f"{len(finished)} reutilizada " in resumed.stdout
    for name, mtime in finished.items():
        assert (journal / name).stat().st_mtime_ns == mtime, f"{name} was graded again"
    assert sorted(p.stem for p in journal.glob("*.json")) == sorted(STUDENTS)
    after_resume = _outcomes(root)

    # 3. Grade everything again from scratch: the same scores, flags and per-test results.
    fresh = subprocess.run(cmd + ["--fresh"], capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stdout[-3000:] + fresh.stderr[-3000:]
    assert _outcomes(root) == after_resume
    with open(root / "grades.csv") as fh:
        rows = fh.read().splitlines()[1:]
    assert sorted(r.split(",")[3] for r in rows) == sorted(STUDENTS)  # one row each: nothing lost or doubled

    # 4. Nothing handed in was written, and neither was labs/.
    assert _digest(submitted) == handed_in
    assert _digest(REPO / "labs") == labs_before
