"""Every lab as a student meets it, in JupyterLab, in a real browser.

For each lab:
- the solved notebook runs top to bottom from the menu (Ejecutar → Ejecutar todas las celdas): no cell shows an error,
  and every plot is drawn as an image;
- in the student's working copy (what `make lab` creates), the setup cell runs and prints nothing;
  the first exercise, untouched, says in Spanish that it is not done; a wrong answer typed through the
  browser (a common mistake of the chapter) gets the check's Spanish message and no traceback; the
  right answer gets the success line.
"""

from __future__ import annotations

import re

import pytest

from browser import chromium, exercises, jupyterlab as jl
from labharness import labtools

pytestmark = pytest.mark.slow
LABS = labtools.lab_names()
# Signs that Python's machinery, not the course, is talking to the student.
TRACEBACK_SIGNS = ("Traceback", "File \"", ".py:", "----> ")


def _cell_index(nb, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _images(nb) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def _no_traceback(text: str, where: str) -> None:
    for sign in TRACEBACK_SIGNS:
        assert sign not in text, f"{where}: the student sees {sign!r}:\n{text[:1500]}"
    # Python's own last line ("NotImplementedError: ...", "AssertionError") is not what a tutor says.
    bare = [line for line in text.splitlines() if re.match(r"\s*[A-Z]\w*(Error|Exception)\b", line)]
    assert not bare, f"{where}: the student sees a bare exception: {bare}"


WIDGET = "application/vnd.jupyter.widget-view+json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _error_shown(page, server, path: str, grade_id: str) -> str:
    """Save, then read what the check cell's error output displays (its rendered traceback lines).

    Warnings the student's own code prints (numpy overflow, say) are stream output, not the error.
    """
    jl.save(page)
    nb = labtools.load_json_notebook(server.root / path)
    outputs = nb.cells[_cell_index(nb, grade_id)].get("outputs", [])
    return "\n".join(ANSI.sub("", line) for o in outputs if o.get("output_type") == "error" for line in o["traceback"])


@pytest.mark.parametrize("lab", LABS)
def test_solved_lab_runs_top_to_bottom_from_the_menu(page, lab_server, lab):
    jl.open_notebook(page, lab_server, f"resuelto/{lab}.ipynb")
    jl.menu(page, ("Ejecutar", "Run"), "Ejecutar todas las celdas")
    jl.wait_all_run(page, timeout_s=600)
    jl.save(page)

    ran = labtools.load_json_notebook(lab_server.root / "resuelto" / f"{lab}.ipynb")
    errors = [(i, o.get("ename"), o.get("evalue")) for i, c in enumerate(ran.cells) for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, f"cells with errors: {errors}"
    shown = jl.output_text(page.locator(".jp-NotebookPanel .jp-Notebook"))
    assert "Traceback" not in shown
    assert not re.search(r"np\.(float|int|bool)\w*\(", shown), "a NumPy scalar repr is printed"

    # Widgets (sliders...) are drawn, and none of their labels is cut off.
    stored_nb = labtools.load_json_notebook(labtools.solution_path(lab))
    if any(WIDGET in o.get("data", {}) for c in stored_nb.cells for o in c.get("outputs", [])):
        labels = jl.widget_labels(page)
        assert labels, "the lab shows widgets, but none was drawn"
        cut = [label["text"] for label in labels if label["cut"]]
        assert not cut, f"widget labels cut off: {cut}"

    images = jl.rendered_images(page)
    stored = _images(stored_nb)
    assert all(img["complete"] and img["w"] > 0 and img["h"] > 0 for img in images), images
    assert len(images) >= stored >= 3  # live widgets may add plots; none may go missing
    assert _images(ran) >= stored

    first_plot = page.locator(".jp-NotebookPanel .jp-OutputArea-output img").first
    first_plot.scroll_into_view_if_needed()
    chromium.screenshot(page, f"{lab}-resuelto")
    assert page.guard.external(ignore=("colab-badge.svg",)) == []


@pytest.mark.parametrize("lab", LABS)
def test_student_notebook_setup_wrong_and_right_answer(page, lab_server, lab):
    attempt = exercises.first_attempt(lab)
    copy = f"mis-labs/{lab}/{lab}.ipynb"
    nb = labtools.load_json_notebook(lab_server.root / copy)
    jl.open_notebook(page, lab_server, copy)
    cells = jl.cells(page)

    setup = cells.nth(_cell_index(nb, "preparacion"))
    jl.run(page, setup)
    assert jl.output_text(setup).strip() == "", "outside Colab the setup cell prints nothing"

    answer = cells.nth(_cell_index(nb, attempt.answer_id))
    check = cells.nth(_cell_index(nb, attempt.test_id))
    jl.select(answer)
    jl.menu(page, ("Ejecutar", "Run"), "Ejecutar todo por encima de la celda seleccionada")
    jl.wait_kernel_idle(page, timeout_s=300)

    # Untouched: the check says, in Spanish, that the exercise is still to be done.
    jl.run(page, answer)
    jl.run(page, check)
    untouched = _error_shown(page, lab_server, copy, attempt.test_id)
    assert "ESCRIBE TU CÓDIGO AQUÍ" in answer.inner_text()
    assert "sin hacer" in untouched, untouched  # says, in Spanish, that the exercise is still to be done
    assert untouched.strip() and untouched.strip() in jl.output_text(check), "the untouched check must say why"
    _no_traceback(untouched, f"{lab} untouched {attempt.answer_id}")

    # A common mistake, typed by hand: the check's own Spanish message, and nothing else.
    jl.type_code(page, answer, attempt.wrong)
    jl.run(page, answer)
    jl.run(page, check)
    assert attempt.message in jl.output_text(check), f"the page does not show {attempt.message!r}"
    wrong = _error_shown(page, lab_server, copy, attempt.test_id)
    assert attempt.message in wrong, f"expected {attempt.message!r}, the error output is:\n{wrong[:1500]}"
    _no_traceback(wrong, f"{lab} {attempt.mistake}")
    check.scroll_into_view_if_needed()
    chromium.screenshot(page, f"{lab}-respuesta-incorrecta")

    # The right answer: the success line.
    jl.type_code(page, answer, attempt.right)
    jl.run(page, answer)
    jl.run(page, check)
    right = jl.output_text(check)
    assert "✔" in right and attempt.message not in right, right[:1500]
    assert _error_shown(page, lab_server, copy, attempt.test_id) == ""
    chromium.screenshot(page, f"{lab}-respuesta-correcta")
    assert page.guard.external(ignore=("colab-badge.svg",)) == []


def test_the_cut_label_check_can_fail(page, lab_server):
    """A slider with a long description and the default label width is reported as cut off."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import ipywidgets as widgets\n"
        "widgets.IntSlider(description='una etiqueta demasiado larga (0 = no)')")],
        metadata=labtools.load_json_notebook(labtools.release_path(LABS[0])).metadata)  # its kernel
    path = lab_server.root / "pruebas" / "etiqueta.ipynb"
    path.parent.mkdir(exist_ok=True)
    nbformat.write(nb, path)
    jl.open_notebook(page, lab_server, "pruebas/etiqueta.ipynb")
    jl.menu(page, ("Ejecutar", "Run"), "Ejecutar todas las celdas")
    jl.wait_all_run(page, timeout_s=120)
    page.wait_for_selector(".jp-NotebookPanel .jupyter-widgets .widget-label", timeout=60_000)
    assert [label["cut"] for label in jl.widget_labels(page)] == [True]
