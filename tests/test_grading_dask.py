"""Grading on Dask: a LocalCluster of two workers on loopback grades like the local pool, and a worker killed
in the middle of a task loses no grade and duplicates none."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from labharness import REPO, labtools

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed (the 'cluster' extra)")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make sysdeps)")]

from grading import gradebook
from grading.executors import DaskExecutor
from grading.pipeline import Course, grade_class
from grading.sandbox import Limits

LAB = labtools.lab_names()[0]
STUDENTS = ["ana_correcta", "carla_parcial", "elena_trampa", "ines_parchea", "fede_roto"]
GRADE = REPO / "course" / "tools" / "grade.py"


def _class(base):
    submitted = base / "entregas"
    for student in STUDENTS:
        shutil.copytree(REPO / "course" / "submitted" / student / LAB, submitted / student / LAB)
    return submitted


def _cluster():
    from distributed import LocalCluster

    return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                        dashboard_address=":0", silence_logs=40)


def _outcomes(root):
    report = json.loads((root / "grading_report.json").read_text())
    return {(r["student"], r["lab"]): (r["score"], sorted(r["flags"]), r["tests"]) for r in report["results"]}


def test_a_local_dask_cluster_grades_like_the_local_pool(tmp_path):
    submitted = _class(tmp_path)
    common = ["--submitted", str(submitted), "--labs", LAB, "--cell-timeout", "60"]
    local = subprocess.run([sys.executable, str(GRADE), *common, "--root", str(tmp_path / "local"), "--jobs", "2"],
                           capture_output=True, text=True)
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]
    with _cluster() as cluster:
        dask = subprocess.run([sys.executable, str(GRADE), *common, "--root", str(tmp_path / "dask"),
                               "--cluster", cluster.scheduler_address], capture_output=True, text=True)
    assert dask.returncode == 0, dask.stdout[-3000:] + dask.stderr[-3000:]
    assert "dask" in dask.stdout
    assert _outcomes(tmp_path / "dask") == _outcomes(tmp_path / "local")


def test_a_worker_killed_mid_task_loses_and_duplicates_nothing(tmp_path):
    submitted = _class(tmp_path)
    root = tmp_path / "curso"
    course = Course(root=root, course_dir=REPO / "course", solutions=REPO / "solutions")
    with _cluster() as cluster, distributed.Client(cluster) as client:
        executor = DaskExecutor(client=client)
        killed = []

        def killer():
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and not killed:
                busy = [w for w, keys in client.processing().items() if any("run_payload" in k for k in keys)]
                if busy:
                    time.sleep(3)  # well inside the task: its jail is running
                    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                time.sleep(0.5)

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        students, results, facts = grade_class(course, submitted, [LAB], executor, Limits(cell_timeout=60),
                                               say=lambda *a: None)
        thread.join(timeout=5)
    assert killed, "no worker was killed: the test did not test anything"
    assert sorted(r.student for r in results) == sorted(STUDENTS)
    journal = sorted(p.stem for p in (root / "journal" / LAB).glob("*.json"))
    assert journal == sorted(STUDENTS)
    from nbgrader.api import SubmittedAssignment

    with gradebook.open_gradebook(root) as gb:  # one submission per student: none lost, none twice
        submissions = sorted((s.student.id, s.assignment.name) for s in gb.db.query(SubmittedAssignment))
    assert submissions == [(s, LAB) for s in sorted(STUDENTS)], submissions
    # Same grades as without the kill: the demo class's expected scores.
    import demo_class

    spec = demo_class.load_spec(LAB)
    for r in results:
        expected = spec[r.student]["expected"]
        if "score" in expected:
            assert r.score == expected["score"], r
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _jail(p)]


JAIL_BASE = (10 + os.getpid() % 1000) * 1_000_000  # this test's jails only (see grading/sandbox.py: jail_uids)


@pytest.fixture(autouse=True)
def _own_jail_uids(monkeypatch):
    monkeypatch.setenv("LLMLAB_JAIL_UID_BASE", str(JAIL_BASE))


def _jail(pid: str) -> bool:
    try:
        return os.stat(f"/proc/{pid}").st_uid in range(JAIL_BASE, JAIL_BASE + 1_000_000)
    except OSError:
        return False
