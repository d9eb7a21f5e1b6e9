"""Every lab follows the course's anatomy (course design: "Anatomy of a lab notebook")."""

from __future__ import annotations

import re

import pytest

from labharness import labtools, load_alternatives, load_mutants

LABS = labtools.lab_names()


@pytest.fixture(scope="module", params=LABS)
def lab(request):
    return request.param


def _nb(lab):
    return labtools.load_json_notebook(labtools.solution_path(lab))


def test_header_has_title_colab_badge_chapter_and_time(lab):
    import hosting  # course/tools, on the path through labharness

    first = _nb(lab).cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# Lab ")
    assert f"]({hosting.settings().colab_url(lab)})" in first.source  # the address in pyproject.toml
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


def test_optional_extensions_each_with_a_stopping_point(lab):
    """«Para ir más allá»: 2 or 3 ungraded extensions, each saying when it is done («Para cuando…»)."""
    text = "\n".join(c.source for c in _nb(lab).cells if c.cell_type == "markdown")
    found = re.search(r"^## Para ir más allá \(opcional[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, "missing section «Para ir más allá (opcional…)»"
    items = re.split(r"^\d+\. ", found.group(1), flags=re.M)[1:]
    assert 2 <= len(items) <= 3, f"{len(items)} extensions (expected 2 or 3)"
    for item in items:
        assert "Para cuando" in item, f"an extension without its stopping point: {item[:80]!r}"


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


# --- Course-wide conventions (LAB-CONVENTIONS.md; CONTRIBUTING.md, "Authoring a lab") ---------------------------
# They apply to every lab, the ones to come included: an exercise heading with points, difficulty and time, hints
# before every check, a rubric for every manual answer, honest times, find-the-bug exercises, checks v2 in the
# visible checks, Spanish number formatting and «» quotes in the prose.

HEADING = re.compile(r"^#+ Ejercicio (\d+) · (.+) \((\d+) puntos? · dificultad ([★☆]{3}) · ~(\d+) min\)$", re.M)
MANUAL_HEADING = re.compile(r"^## .*\(corrección manual · (\d+) puntos? · ~(\d+) min\)$", re.M)
HINT_1, HINT_2 = "<details><summary>Pista 1</summary>", "<details><summary>Pista 2</summary>"


def _cells_with_ids(nb):
    return [(c, c.metadata.get("nbgrader", {}).get("grade_id")) for c in nb.cells]


def _exercise_layout(lab):
    """For each exercise: (answer index, heading match, [markdown between answer and first test], first test index)."""
    nb = _nb(lab)
    cells = _cells_with_ids(nb)
    index = {gid: i for i, (_, gid) in enumerate(cells) if gid}
    layout = []
    for answer_id, ex in labtools.exercises(nb).items():
        a = index[answer_id]
        heading = None
        for cell, _ in reversed(cells[:a]):
            if cell.cell_type == "markdown" and HEADING.search(cell.source):
                heading = list(HEADING.finditer(cell.source))[-1]
                break
        first_test = min(index[test_id] for test_id, _, _ in ex.tests)
        between = [cells[i][0].source for i in range(a + 1, first_test) if cells[i][0].cell_type == "markdown"]
        layout.append((ex, a, heading, between, first_test))
    return layout


def test_exercise_headings_state_points_difficulty_and_time(lab):
    numbers = []
    for ex, _, heading, _, _ in _exercise_layout(lab):
        assert heading, f"{ex.answer_id}: no heading «### Ejercicio N · `nombre` (P puntos · dificultad ★☆☆ · ~M min)»"
        number, names, points, stars, _minutes = heading.groups()
        numbers.append(int(number))
        assert int(points) == ex.points, f"{ex.answer_id}: the heading says {points} points, the tests give {ex.points}"
        assert re.fullmatch(r"★+☆*", stars), f"{ex.answer_id}: difficulty {stars!r} must be ★☆☆, ★★☆ or ★★★"
        for name in ex.function_names:
            assert f"`{name}`" in names, f"{ex.answer_id}: the heading does not name `{name}`"
        if labtools.buggy_code(ex.answer_source):
            assert "encuentra el error" in names or "encuentra los errores" in names, ex.answer_id
    assert numbers == list(range(1, len(numbers) + 1)), f"exercises are numbered {numbers}"


def test_progressive_hints_come_before_every_check(lab):
    for ex, _, _, between, _ in _exercise_layout(lab):
        text = "\n".join(between)
        assert HINT_1 in text and HINT_2 in text, f"{ex.answer_id}: hints «Pista 1» and «Pista 2» before its check cell"
        assert text.index(HINT_1) < text.index(HINT_2), f"{ex.answer_id}: Pista 1 comes before Pista 2"


def test_every_manual_answer_states_its_rubric_and_time(lab):
    nb = _nb(lab)
    manual = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
              and c.metadata.get("nbgrader", {}).get("solution") and c.metadata.nbgrader.get("grade")]
    assert manual
    for i, cell in manual:
        points = cell.metadata.nbgrader["points"]
        statement = nb.cells[i - 1].source
        match = re.search(r"\*\*Rúbrica \((\d+) puntos?\):\*\*", statement)
        assert match, f"{cell.metadata.nbgrader['grade_id']}: the statement must give its rubric, **Rúbrica (N puntos):**"
        assert int(match.group(1)) == points
        heading = next((c.source for c in reversed(nb.cells[:i]) if c.cell_type == "markdown"
                        and MANUAL_HEADING.search(c.source)), None)
        assert heading, "the manual question's heading says «(corrección manual · N puntos · ~M min)»"
        assert int(MANUAL_HEADING.search(heading).group(1)) == points


def _minutes(text):
    """'2 h 10 min' -> 130, '45 min' -> 45."""
    match = re.fullmatch(r"(?:(\d+) h)?\s*(?:(\d+) min)?", text.strip())
    assert match and any(match.groups()), f"cannot read a time from {text!r}"
    return int(match.group(1) or 0) * 60 + int(match.group(2) or 0)


def test_stated_times_add_up(lab):
    nb = _nb(lab)
    header = nb.cells[0].source
    total = re.search(r"duración estimada: \*\*(\d+) horas?( y media)?\*\*", header)
    reading = re.search(r"\((\d+) min\s+de lectura", header)
    work = re.search(r"y ((?:\d+ h )?\d+ min) de ejercicios", header)
    assert total and reading and work, "header: «duración estimada: **N horas** (M min de lectura … y X h Y min de ejercicios …)»"
    total_min = int(total.group(1)) * 60 + (30 if total.group(2) else 0)
    exercises = sum(int(h.group(5)) for _, _, h, _, _ in _exercise_layout(lab))
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    manual = sum(int(m.group(2)) for m in MANUAL_HEADING.finditer(text))
    assert exercises + manual == _minutes(work.group(1)), (
        f"the exercises take {exercises} min and the manual answer {manual} min, the header says {work.group(1)}")
    assert int(reading.group(1)) + exercises + manual == total_min, "reading + exercises must be the stated total"


def test_at_least_two_find_the_bug_exercises(lab):
    buggy = [ex.answer_id for ex in labtools.exercises(_nb(lab)).values() if labtools.buggy_code(ex.answer_source)]
    assert len(buggy) >= 2, f"only {buggy} are find-the-bug exercises (### BEGIN BUGGY): at least two per lab"


def test_released_find_the_bug_cells_show_the_bug():
    for lab in LABS:
        release = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
                   for c in labtools.load_json_notebook(labtools.release_path(lab)).cells}
        for ex in labtools.exercises(_nb(lab)).values():
            bug = labtools.buggy_code(ex.answer_source)
            if bug:
                assert "\n".join(bug) in release[ex.answer_id], f"{lab}/{ex.answer_id}: the release must show the bug"


def test_visible_checks_use_checked_call_inside_reference_blocked(lab):
    for ex in labtools.exercises(_nb(lab)).values():
        for test_id, source, _ in ex.tests:
            visible = source.split(labtools.HIDDEN_BEGIN, 1)[0]
            assert "checked_call(" in visible, f"{test_id}: call the student's code through checked_call"
            assert "with reference_blocked(" in visible, f"{test_id}: run the visible calls inside reference_blocked"
            assert labtools.HIDDEN_BEGIN in source, f"{test_id}: no hidden tests"


def test_no_nbval_ignore_comments_in_sources(lab):
    source = labtools.source_path(lab).read_text(encoding="utf-8")
    assert "NBVAL_IGNORE_OUTPUT" not in source, 'tag the cell instead: # %% tags=["nbval-ignore-output"]'


def test_printed_numbers_read_the_spanish_way(lab):
    for cell in _nb(lab).cells:
        for output in cell.get("outputs", []):
            text = output.get("text", "") or "".join(output.get("data", {}).get("text/plain", ""))
            assert not re.search(r"np\.(float|int|bool)\w*\(", text), f"{cell.id}: a NumPy scalar repr is printed"
            assert not re.search(r"\b\d{1,3}(?:,\d{3})+\b", text), f"{cell.id}: thousands with commas; use llmlab.spanish"


def _prose(markdown):
    """Markdown without code, LaTeX, HTML tags and link targets: what a reader reads as Spanish text."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    text = re.sub(r"\$[^$]*\$", "", text)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def test_prose_quotes_with_guillemets(lab):
    for cell in _nb(lab).cells:
        if cell.cell_type == "markdown":
            for line in _prose(cell.source).splitlines():
                assert '"' not in line, f"{cell.id}: use «» quotes in the prose: {line.strip()[:80]!r}"


def test_every_exercise_has_at_least_two_valid_alternatives(lab):
    alternatives = load_alternatives(lab)
    assert alternatives is not None, f"tests/alternatives/{lab[:5]}.py is missing"
    for answer_id in labtools.exercises(_nb(lab)):
        assert len(alternatives.ALTERNATIVES.get(answer_id, {})) >= 2, f"{answer_id} needs at least two alternatives"
