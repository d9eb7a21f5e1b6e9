"""An instructor's own class, end to end in a real browser: `make grade SUBMITTED=dir`, `make formgrader
SUBMITTED=dir`, a written answer scored and commented by hand, `make grades`, and the student's feedback page.

A flat folder with one student's notebook of one lab is graded as `make grade SUBMITTED=<dir> LABS=<lab>` grades
it (course/tools/grade.py; --root keeps the grading out of build/), and JupyterLab is started the way `make
formgrader` starts it (course/tools/lab.py: the class's config written by `class_config`, the server's root
holding the class). Then:

- Formgrader lists that class (not the demo one), in Spanish, without nbgrader's release, collect, autograde and
  feedback buttons and without the exchange warning;
- a score and a comment given in the grading view reach grades.csv *and* the regenerated feedback page through
  `grade.py --export-only` (`make grades`); the page names each check by its exercise and its check messages
  stay inside the page at 1280 px;
- JupyterLab's menus are in Spanish (language pack, locale es_ES set by the course) and no news pop-up shows.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
import time

import pytest

from browser import chromium, jupyterlab as jl
from labharness import REPO, labtools

import lab as lab_tool

pytestmark = pytest.mark.slow
LAB = labtools.lab_names()[0]
STUDENT = "diego"  # the demo class's diego_errores: fails checks, leaves the written answer to the instructor
GRADE = REPO / "course" / "tools" / "grade.py"
ENGLISH = ("Manage Assignments", "Manual Grading", "Manage Students", "Release Feedback", "Generate Feedback",
           "Collect", "exchange directory", "Instructions", "Show All Names", "Student's answer", "Submission #",
           "Next", "Full credit", "No credit", "Score", "extra credit")


def _manual_cell(lab: str):
    nb = labtools.load_json_notebook(labtools.release_path(lab))
    return next(c.metadata.nbgrader for c in nb.cells
                if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade"))


def _visible_english(page) -> list[str]:
    text = page.inner_text("body")
    return [w for w in ENGLISH if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text)]


def _heading(path) -> str:
    return re.search(r"<h4>(.*?)</h4>", path.read_text(encoding="utf-8")).group(1)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, browser_context):
    base = tmp_path_factory.mktemp("clase")
    flat = base / "entregas"
    flat.mkdir()
    source = REPO / "course" / "submitted" / "diego_errores" / LAB / f"{LAB}.ipynb"
    (flat / f"{STUDENT}.ipynb").write_bytes(source.read_bytes())
    root = base / "corregida"
    proc = subprocess.run([sys.executable, str(GRADE), "--submitted", str(flat), "--labs", LAB, "--root", str(root),
                           "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert lab_tool.class_root(root) == root
    server = jl.start(lab_tool.server_root(root), base / "scratch", config_dir=lab_tool.class_config(root))
    yield server, root
    server.stop()


@pytest.fixture
def page(browser_context, graded_class):
    """A page logged in to the server (Formgrader's scripts call its API with the login cookie)."""
    server, _ = graded_class
    page = chromium.guarded_page(browser_context)
    page.goto(f"{server.url}/login?next=/formgrader")
    if page.locator("input#password_input").count():
        page.fill("input#password_input", server.token)
        page.click("#login_submit")
    page.wait_for_url("**/formgrader/**", timeout=60_000)
    yield page
    page.close()


def test_make_formgrader_refuses_a_class_not_graded_yet(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "course" / "tools" / "lab.py"), "--no-copies", "--class",
                           str(tmp_path / "sin-corregir")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "make grade SUBMITTED=" in proc.stderr and "Traceback" not in proc.stderr


def test_formgrader_shows_the_class_in_spanish_without_the_unsafe_buttons(page, graded_class):
    server, _ = graded_class
    page.goto(f"{server.url}/formgrader/manage_assignments?token={server.token}")
    page.wait_for_selector(f"text={LAB}", timeout=60_000)
    page.wait_for_selector("text=Tareas", timeout=30_000)
    assert _visible_english(page) == []
    headers = [h.strip() for h in page.locator("thead th:visible").all_inner_texts()]
    assert "Generar" in headers and "Nombre" in headers
    assert not {"Publicar", "Recoger", "Publicar devolución", "Generar devolución"} & set(headers)
    assert page.locator("#warning-exchange:visible").count() == 0
    chromium.screenshot(page, "formgrader-clase-tareas")

    page.goto(f"{server.url}/formgrader/manage_students?token={server.token}")
    page.wait_for_selector(f"text={STUDENT}", timeout=60_000)
    students = page.locator("table").first.inner_text()
    assert STUDENT in students and "diego_errores" not in students  # this class, not the demo one
    assert _visible_english(page) == []


def test_a_hand_score_and_comment_reach_the_regenerated_feedback_page(page, graded_class):
    server, root = graded_class
    manual = _manual_cell(LAB)
    given, comment = manual["points"] - 1, "Bien razonado; te falta decir cuánto crece."
    feedback = root / "feedback" / STUDENT / LAB / f"{LAB}.html"
    before = re.search(r"Nota: ([\d.]+) / ([\d.]+)", _heading(feedback))
    auto, maximum = float(before.group(1)), float(before.group(2))

    page.goto(f"{server.url}/formgrader/gradebook/{LAB}/{LAB}?token={server.token}")
    page.wait_for_selector("table tbody tr a", timeout=60_000)
    page.get_by_text("Mostrar todos los nombres").click()
    page.get_by_role("link", name=STUDENT).click()
    score = page.locator(f"input.score#{manual['grade_id']}")
    score.wait_for(timeout=60_000)
    jl.wait_formgrader_ready(page)
    page.wait_for_selector("text=Respuesta del alumno", timeout=30_000)
    assert _visible_english(page) == []
    box = page.locator(f"textarea#{manual['grade_id']}-comment")
    box.fill(comment)
    box.press("Tab")  # formgrader saves a field when it loses focus
    score.fill(str(given))
    score.press("Tab")
    from grading.gradebook import open_gradebook

    deadline = time.monotonic() + 120  # a busy 2-core machine can take a while to save
    while True:
        with open_gradebook(root) as gb:
            saved = gb.find_grade(manual["grade_id"], LAB, LAB, STUDENT).manual_score
            said = gb.find_comment(manual["grade_id"], LAB, LAB, STUDENT).manual_comment
        if (saved == given and said == comment) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert (saved, said) == (given, comment), "formgrader did not save the score and the comment"
    chromium.screenshot(page, "formgrader-clase-corregir")
    assert f"Nota: {auto:.1f} / {maximum:.1f}" in _heading(feedback)  # still the autograded page

    proc = subprocess.run([sys.executable, str(GRADE), "--export-only", "--root", str(root)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Devoluciones rehechas" in proc.stdout
    with open(root / "grades.csv", newline="", encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if r["student_id"] == STUDENT)
    assert float(row["score"]) == auto + given
    assert f"Nota: {auto + given:.1f} / {maximum:.1f}" in _heading(feedback)

    page.goto(feedback.as_uri())
    page.wait_for_load_state("load")
    text = page.inner_text("body")
    assert comment in text and "Comentario del profesor" in text
    toc = page.locator("#toc").inner_text()
    assert "Ejercicio 1 · " in toc and "Test cell" not in toc and "Respuesta razonada" in toc
    for english in ("Test cell", "Student's answer", "Grade cell", "Score:", "Comments:"):
        assert english not in text, english
    # Every check message stays inside the page at 1280 px (the context's viewport): nothing scrolls sideways.
    wide = page.evaluate("""() => [...document.querySelectorAll('.output_area pre, .output_subarea')]
        .filter(e => e.scrollWidth > e.clientWidth + 1).length""")
    assert wide == 0
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1280
    page.get_by_text(comment).scroll_into_view_if_needed()
    chromium.screenshot(page, "devolucion-con-nota-a-mano")
    assert page.guard.external(ignore=("colab-badge.svg",)) == []


def test_jupyterlab_menus_are_in_spanish_and_no_news_pop_up(page, graded_class):
    server, _ = graded_class
    page.goto(f"{server.url}/lab?reset&token={server.token}")
    page.wait_for_selector("#jp-MainMenu .lm-MenuBar-itemLabel", timeout=120_000)
    page.wait_for_function("""() => [...document.querySelectorAll('#jp-MainMenu .lm-MenuBar-itemLabel')]
        .some(e => e.textContent.trim() === 'Archivo')""", timeout=60_000)
    labels = [t.strip() for t in page.locator("#jp-MainMenu .lm-MenuBar-itemLabel").all_inner_texts()]
    assert {"Archivo", "Editar", "Ver"} <= set(labels), labels
    assert not {"File", "Edit", "View", "Help"} & set(labels), labels
    time.sleep(2)  # the news question, where enabled, shows in the first seconds
    assert "Jupyter news" not in page.inner_text("body")
    chromium.screenshot(page, "jupyterlab-en-espanol")
