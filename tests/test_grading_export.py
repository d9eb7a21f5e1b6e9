"""`make grade` on a flat folder of notebooks, then `make grades` (grade.py --export-only): grades.csv and the report
rebuilt from the gradebook, manual scores included, without running the autograder again.

The flat folder is graded once (module fixture); the test that scores by hand works on a copy of that grading.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys

import pytest

from labharness import REPO, labtools

pytestmark = pytest.mark.slow
GRADE = REPO / "course" / "tools" / "grade.py"
LAB = labtools.lab_names()[0]


def _manual_cell(lab):
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    return next(c.metadata.nbgrader for c in nb.cells
                if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade"))


def _auto_points(lab):
    return sum(e.points for e in labtools.exercises(labtools.load_json_notebook(labtools.solution_path(lab))).values())


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    """`make grade SUBMITTED=dir LABS=lab`: a folder of <student>.ipynb files downloaded from an LMS, paula's the
    solution and quique's the untouched release."""
    base = tmp_path_factory.mktemp("plana")
    folder = base / "descargas"
    folder.mkdir()
    shutil.copy2(labtools.solution_path(LAB), folder / "paula.ipynb")
    shutil.copy2(labtools.release_path(LAB), folder / "quique.ipynb")
    root = base / "curso"
    proc = subprocess.run(
        [sys.executable, str(GRADE), "--submitted", str(folder), "--root", str(root), "--labs", LAB],
        capture_output=True, text=True,
    )
    return folder, root, proc


def test_instructor_flat_folder_of_notebooks(flat):
    folder, root, proc = flat
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {r["student"]: r for r in json.loads((root / "grading_report.json").read_text())["results"]}
    assert results["paula"]["score"] == _auto_points(LAB)
    assert results["quique"]["score"] == 0
    assert (root / "grades.csv").exists() and sorted(p.name for p in (root / "feedback").iterdir()) == ["paula", "quique"]
    assert sorted(p.name for p in folder.iterdir()) == ["paula.ipynb", "quique.ipynb"]  # originals untouched


def test_export_only_picks_up_manual_scores_without_regrading(flat, tmp_path):
    _, graded, proc = flat
    assert proc.returncode == 0, proc.stdout + proc.stderr
    root = tmp_path / "curso"
    shutil.copytree(graded, root, symlinks=True)  # scored by hand here, not in the grading the other test reads
    before = json.loads((root / "grading_report.json").read_text())
    paula = next(r for r in before["results"] if r["student"] == "paula")
    assert "manual" in paula["flags"] and paula["manual_score"] is None

    # The instructor grades paula's written answer in formgrader: that writes manual_score in the gradebook.
    manual = _manual_cell(LAB)
    from grading.gradebook import open_gradebook

    with open_gradebook(root) as gb:
        grade = gb.find_grade(manual["grade_id"], LAB, LAB, "paula")
        grade.manual_score = manual["points"] - 1
        grade.needs_manual_grade = False
        gb.find_comment(manual["grade_id"], LAB, LAB, "paula").manual_comment = "Falta la unidad del resultado."
        gb.db.commit()
    page_path = root / "feedback" / "paula" / LAB / f"{LAB}.html"
    stale = page_path.read_text(encoding="utf-8")
    assert "Falta la unidad del resultado." not in stale
    autograded = sorted(p.stat().st_mtime_ns for p in (root / "autograded").rglob("*.ipynb"))

    proc = subprocess.run([sys.executable, str(GRADE), "--export-only", "--root", str(root)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 entrega puntuada a mano" in proc.stdout
    after = {r["student"]: r for r in json.loads((root / "grading_report.json").read_text())["results"]}
    assert after["paula"]["manual_score"] == manual["points"] - 1
    assert "manual" not in after["paula"]["flags"]
    assert after["paula"]["score"] == paula["score"]  # autograded points untouched
    with open(root / "grades.csv", newline="") as fh:
        rows = {row["student_id"]: row for row in csv.DictReader(fh)}
    assert float(rows["paula"]["score"]) == paula["score"] + manual["points"] - 1
    assert float(rows["paula"]["manual_score"]) == manual["points"] - 1
    assert float(rows["quique"]["score"]) == 0.0
    # Nothing was graded again.
    assert sorted(p.stat().st_mtime_ns for p in (root / "autograded").rglob("*.ipynb")) == autograded
    # The feedback page follows the gradebook: the new total, the hand score of the answer, the comment.
    page = page_path.read_text(encoding="utf-8")
    total = paula["score"] + manual["points"] - 1
    assert f"(Nota: {float(total):.1f} / " in page and f"(Nota: {float(total):.1f} / " not in stale
    assert "Falta la unidad del resultado." in page and "Comentario del profesor" in page
    assert "1 página" in proc.stdout  # only paula's page had anything new to say
    assert "Test cell" not in page and "Student's answer" not in page

    # nbgrader's own tools read what the grader wrote: formgrader's API lists the submissions, and
    # `nbgrader generate_feedback` (after manual grading) builds pages from our autograded notebooks.
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    assert sorted(s["student"] for s in api.get_submissions(LAB)) == ["paula", "quique"]
    assert len(api.get_notebook_submission_indices(LAB, LAB)) == 2
    feedback = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_feedback", LAB, "--force", f"--CourseDirectory.root={root}",
         f"--CourseDirectory.db_url=sqlite:///{root / 'gradebook.db'}"],
        cwd=REPO / "course", capture_output=True, text=True)
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    page = (root / "feedback" / "paula" / LAB / f"{LAB}.html").read_text(encoding="utf-8")
    assert f"{paula['score'] + manual['points'] - 1:g}" in page or f"{paula['score'] + manual['points'] - 1}" in page


def test_export_only_without_a_gradebook_says_so(tmp_path):
    proc = subprocess.run([sys.executable, str(GRADE), "--export-only", "--root", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "make grade" in proc.stderr


def test_feedback_names_every_check_by_its_exercise():
    import nbformat
    from grading.feedback import exercise_labels

    nb = nbformat.read(labtools.release_path(LAB), as_version=4)
    labels = exercise_labels(nb)
    tests = [c.metadata.nbgrader["grade_id"] for c in nb.cells
             if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
             and not c.metadata.nbgrader.get("solution")]
    names = [labels[t] for t in tests]
    assert len(set(names)) == len(names) == len(tests) > 1  # no two checks with the same name
    assert names[0].startswith("Ejercicio 1 · ") and all(n.startswith("Ejercicio ") for n in names)
    assert labels[_manual_cell(LAB)["grade_id"]].startswith("Respuesta razonada")


def test_spanish_counts():
    from grading.report import count

    assert count(1, "entrega corregida") == "1 entrega corregida"
    assert count(0, "entrega corregida") == "0 entregas corregidas"
    assert count(3, "celda de prueba") == "3 celdas de prueba"  # only the words that change
    assert count(2, "pendiente") == "2 pendientes"


def test_without_a_jail_grading_goes_on_and_says_so_loudly(tmp_path):
    """Where bubblewrap cannot run, the class is still graded, and every result and the table say it."""
    folder = tmp_path / "descargas"
    folder.mkdir()
    shutil.copy2(labtools.solution_path(LAB), folder / "paula.ipynb")
    root = tmp_path / "curso"
    env = dict(__import__("os").environ, LLMLAB_SANDBOX="none")
    proc = subprocess.run([sys.executable, str(GRADE), "--submitted", str(folder), "--root", str(root), "--labs", LAB],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SIN ENTORNO AISLADO" in proc.stdout
    report = json.loads((root / "grading_report.json").read_text())
    assert report["sandbox"]["isolated"] is False
    (paula,) = report["results"]
    assert "sin aislar" in paula["flags"] and paula["score"] == _auto_points(LAB)
