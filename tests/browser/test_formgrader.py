"""The instructor's path: `make lab` → Nbgrader → Formgrader, in a real browser.

A scratch course root is graded the way `make grade` grades (course/tools/grade.py, one lab, two students
of the demo class), the rest of the demo class is registered in its gradebook, and JupyterLab is started
as `make lab` starts it, reading the course's nbgrader_config.py (through a config that only moves the
course root to the scratch folder). Then:

- Formgrader lists every lab and every student of the demo class;
- a written answer scored by hand in Formgrader reaches grades.csv through `grade.py --export-only`
  (`make grades`), without grading anything again;
- the math of the grading view and of the feedback pages is drawn offline (MathML from the latex2mathml
  package; the test's network guard refuses every request that leaves the machine).
"""

from __future__ import annotations

import csv
import subprocess
import sys
import time

import pytest

from browser import chromium, jupyterlab as jl
from labharness import REPO, labtools

import lab as lab_tool

pytestmark = pytest.mark.slow
LAB = labtools.lab_names()[0]
GRADED = ["ana_correcta", "diego_errores"]
DEMO_CLASS = sorted(p.name for p in (REPO / "course" / "submitted").iterdir() if p.is_dir())
GRADE = REPO / "course" / "tools" / "grade.py"


def _manual_cell(lab: str):
    nb = labtools.load_json_notebook(labtools.release_path(lab))
    return next(c.metadata.nbgrader for c in nb.cells
                if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade"))


@pytest.fixture(scope="module")
def course(tmp_path_factory, browser_context):
    base = tmp_path_factory.mktemp("formgrader")
    root = base / "curso"
    for student in GRADED:
        dest = root / "submitted" / student / LAB
        dest.mkdir(parents=True)
        for path in (REPO / "course" / "submitted" / student / LAB).iterdir():
            (dest / path.name).write_bytes(path.read_bytes())
    proc = subprocess.run([sys.executable, str(GRADE), "--root", str(root), "--labs", LAB, "--quiet"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    from grading.gradebook import open_gradebook

    with open_gradebook(root) as gb:  # the class list, as an instructor imports it
        for student in DEMO_CLASS:
            gb.update_or_create_student(student)
    config = base / "config"
    config.mkdir()
    (config / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"load_subconfig({str(REPO / 'course' / 'nbgrader_config.py')!r})\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.CourseDirectory.db_url = {'sqlite:///' + str(root / 'gradebook.db')!r}\n"
    )
    server = jl.start(base, base / "scratch", config_dir=config)
    yield server, root
    server.stop()


@pytest.fixture
def fg_page(browser_context, course):
    page = chromium.guarded_page(browser_context)
    yield page
    page.close()


def test_make_lab_environment_finds_the_course_config_from_anywhere(tmp_path):
    code = "from nbgrader.apps import NbGrader; a = NbGrader(); a.initialize([]); print(a.coursedir.root)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env=lab_tool.jupyter_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(labtools.COURSE)
    assert "No nbgrader_config.py" not in proc.stderr
    bare = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert "No nbgrader_config.py" in bare.stderr  # what the instructor saw before


def test_formgrader_lists_every_lab_and_the_demo_class(fg_page, course):
    server, _ = course
    fg_page.goto(f"{server.url}/formgrader/manage_assignments?token={server.token}")
    fg_page.wait_for_selector("text=" + labtools.lab_names()[-1], timeout=60_000)
    assignments = fg_page.locator("table").first.inner_text()
    for lab in labtools.lab_names():
        assert lab in assignments
    assert "No nbgrader_config.py" not in fg_page.inner_text("body")
    chromium.screenshot(fg_page, "formgrader-tareas")

    fg_page.goto(f"{server.url}/formgrader/manage_students")
    fg_page.wait_for_selector("text=" + DEMO_CLASS[-1], timeout=60_000)
    students = fg_page.locator("table").first.inner_text()
    for student in DEMO_CLASS:
        assert student in students
    assert fg_page.guard.external() == []


def test_a_score_given_in_formgrader_reaches_grades_csv(fg_page, course):
    server, root = course
    manual = _manual_cell(LAB)
    given = manual["points"] - 1
    fg_page.goto(f"{server.url}/formgrader/gradebook/{LAB}/{LAB}?token={server.token}")
    fg_page.wait_for_selector("table tbody tr a", timeout=60_000)
    fg_page.get_by_text("Mostrar todos los nombres").click()  # Formgrader in Spanish (course/jupyter/formgrader_es.py)
    fg_page.get_by_role("link", name="ana_correcta").click()
    score = fg_page.locator(f"input.score#{manual['grade_id']}")
    score.wait_for(timeout=60_000)
    jl.wait_formgrader_ready(fg_page)

    # The grading view draws the lab's formulas itself: MathML, nothing fetched.
    heights = fg_page.evaluate("() => [...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().height)")
    assert heights and all(h > 0 for h in heights)
    assert "$$" not in fg_page.locator("#notebook").first.inner_text()

    score.fill(str(given))
    score.press("Tab")  # formgrader saves a score when its field loses focus
    from grading.gradebook import open_gradebook

    deadline = time.monotonic() + 120  # a busy 2-core machine (CI) can take a while to save
    while True:
        with open_gradebook(root) as gb:
            saved = gb.find_grade(manual["grade_id"], LAB, LAB, "ana_correcta").manual_score
        if saved == given or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert saved == given, "formgrader did not save the score"
    score.scroll_into_view_if_needed()
    chromium.screenshot(fg_page, "formgrader-respuesta-razonada")
    assert fg_page.guard.external(ignore=("colab-badge.svg",)) == []

    autograded = sorted(p.stat().st_mtime_ns for p in (root / "autograded").rglob("*.ipynb"))
    proc = subprocess.run([sys.executable, str(GRADE), "--export-only", "--root", str(root)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(root / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(fh)}
    row = rows[("ana_correcta", LAB)]
    assert float(row["manual_score"]) == given
    assert float(row["score"]) == float(row["auto_score"]) + given
    assert sorted(p.stat().st_mtime_ns for p in (root / "autograded").rglob("*.ipynb")) == autograded


def test_feedback_pages_draw_math_offline_and_speak_spanish(fg_page, course):
    _, root = course
    page = root / "feedback" / "diego_errores" / LAB / f"{LAB}.html"
    fg_page.goto(page.as_uri())
    fg_page.wait_for_load_state("load")
    heights = fg_page.evaluate("() => [...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().height)")
    assert heights and all(h > 0 for h in heights)
    assert fg_page.guard.external(ignore=("colab-badge.svg",)) == []
    # The failed checks speak Spanish, with their hint, and no Python traceback around them.
    checks = [t for t in fg_page.locator(".output_error").all_inner_texts() if "Pista:" in t]
    assert checks, "diego_errores fails checks: their messages must be in the feedback"
    for text in checks:
        assert "Traceback" not in text and "File \"" not in text, text
    fg_page.locator(".output_error").first.scroll_into_view_if_needed()
    chromium.screenshot(fg_page, "devolucion-diego_errores")
