"""Every lab follows the course's anatomy (course design: "Anatomy of a lab notebook")."""

from __future__ import annotations

import re

import pytest

from labharness import labtools, load_mutants

LABS = labtools.lab_names()


@pytest.fixture(scope="module", params=LABS)
def lab(request):
    return request.param


def _nb(lab):
    return labtools.load_json_notebook(labtools.solution_path(lab))


def test_header_has_title_colab_badge_chapter_and_time(lab):
    first = _nb(lab).cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# Lab ")
    assert f"colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/{lab}/{lab}.ipynb" in first.source
    assert re.search(r"Capítulo 0\d", first.source)
    assert "duración estimada" in first.source


def test_setup_cell_is_read_only_and_colab_safe(lab):
    nb = _nb(lab)
    setup = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "preparacion")
    assert setup.metadata.nbgrader["locked"] and not setup.metadata.nbgrader["solution"]
    assert 'if "google.colab" in sys.modules' in setup.source  # installs nothing outside Colab
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1


def test_at_least_six_autograded_exercises_with_hidden_tests(lab):
    exercises = labtools.exercises(_nb(lab))
    assert len(exercises) >= 6
    for ex in exercises.values():
        assert ex.tests, f"{ex.answer_id} has no test cell"
        assert any(labtools.HIDDEN_BEGIN in src for _, src, _ in ex.tests), f"{ex.answer_id}: no hidden tests"
        for _, src, _ in ex.tests:
            hidden_part = src.split(labtools.HIDDEN_BEGIN, 1)[-1]
            if labtools.HIDDEN_BEGIN in src:
                assert "with hidden(" in hidden_part, "hidden tests must run inside `with hidden(...)`"


def test_test_cells_are_locked_and_scored(lab):
    for cell in _nb(lab).cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            assert meta["locked"] and meta["points"] > 0


def test_has_a_manually_graded_answer(lab):
    manual = [c for c in _nb(lab).cells if c.cell_type == "markdown"
              and c.metadata.get("nbgrader", {}).get("solution") and c.metadata.nbgrader.get("grade")]
    assert manual


def test_sections_common_mistakes_summary_further_reading(lab):
    text = "\n".join(c.source for c in _nb(lab).cells if c.cell_type == "markdown")
    for heading in ("Errores frecuentes", "Resumen", "Para saber más"):
        assert re.search(rf"^##+ .*{heading}", text, re.M), f"missing section {heading!r}"


def test_at_least_three_plots(lab):
    images = sum(1 for c in _nb(lab).cells if c.cell_type == "code"
                 for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    assert images >= 3


def test_executed_solution_has_no_errors(lab):
    for cell in _nb(lab).cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", f"cell {cell.id} raised {output.get('ename')}"


def test_every_exercise_has_at_least_two_mutants(lab):
    mutants = load_mutants(lab)
    assert mutants is not None, f"tests/mutants/{lab[:5]}.py is missing"
    for answer_id in labtools.exercises(_nb(lab)):
        assert len(mutants.MUTANTS.get(answer_id, {})) >= 2, f"{answer_id} needs at least two mutants"
