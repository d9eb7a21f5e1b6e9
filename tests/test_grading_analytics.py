"""The class analytics report (course/tools/grading/analytics.py) on numbers known in advance.

- a three-student gradebook whose statistics are computed by hand below;
- the demo class: its results rebuilt from course/demo/<lab>.py (what each fictional student solved), checked
  against the README's table (per-student totals out of 220) before the statistics are read from them.
The report of the demo class as `make grade` writes it is checked in test_grading.py (one grading run for both).
"""

from __future__ import annotations

import json
import math
import re

import pytest

from labharness import REPO, labtools

import demo_class
from grading import analytics
from grading.records import Result

# --- A small gradebook: exercise `a` (2 points, tests a1 and a2 worth 1 each) and `b` (1 point).

LAYOUT = [analytics.Exercise("a", {"test_a1": 1.0, "test_a2": 1.0}), analytics.Exercise("b", {"test_b": 1.0})]


def _result(student, a1, a2, b, flags=(), score=True, manual=None):
    r = Result(student, "lab01-x", score=(a1 + a2 + b) if score else None, max_score=5.0, manual_score=manual,
               tests={"test_a1": a1, "test_a2": a2, "test_b": b} if score else {})
    r.flags = list(flags)
    return r


SMALL = [
    _result("s1", 1, 1, 1, manual=2.0),  # 5/5
    _result("s2", 1, 1, 0),  # 2/5
    _result("s3", 0, 0, 0, flags=["tiempo"]),  # 0/5
    _result("s4", 0, 0, 0, flags=["FALLO"], score=False),  # not counted in the statistics
]


def test_exercise_statistics_by_hand():
    a, b = analytics.exercise_stats(SMALL, "lab01-x", LAYOUT)
    assert (a.graded, a.max_points) == (3, 2.0)
    assert a.mean == pytest.approx(4 / 3) and a.full_share == pytest.approx(2 / 3)
    assert b.mean == pytest.approx(1 / 3) and b.full_share == pytest.approx(1 / 3)
    # a = [2, 2, 0] against the rest of the lab [1, 0, 0]: deviations (2/3, 2/3, -4/3) and (2/3, -1/3, -1/3),
    # sxy = 2/3, sxx = 24/9, syy = 6/9, r = (2/3) / (12/9) = 0.5. The same pair seen from b.
    assert a.discrimination == pytest.approx(0.5) and b.discrimination == pytest.approx(0.5)


def test_discrimination_is_undefined_without_spread_or_students():
    same = [_result(f"s{i}", 1, 1, 1) for i in range(4)]
    assert analytics.exercise_stats(same, "lab01-x", LAYOUT)[0].discrimination is None
    assert analytics.pearson([1.0, 0.0], [0.0, 1.0]) is None  # two students say nothing
    assert analytics.pearson([0, 1, 2], [2, 1, 0]) == pytest.approx(-1.0)


def test_lab_totals_flags_and_who_needs_help():
    lab = analytics.lab_stats(SMALL, "lab01-x")
    assert lab.totals == [5.0, 2.0, 0.0] and lab.median == 2.0 and lab.mean == pytest.approx(7 / 3)
    assert lab.flags == {"FALLO": 1, "tiempo": 1}
    help_ = {s.student: s.reasons for s in analytics.student_summaries(SMALL, ["lab01-x"], ["s1", "s2", "s3", "s4"])}
    assert help_["s1"] == []
    assert help_["s2"] == ["40 % de los puntos corregidos (menos de 50 %)"]
    assert help_["s4"] == ["no se pudo corregir lab01 (cuaderno ilegible o roto)"]


def test_unscored_tests_are_counted():
    r = _result("s5", 1, 1, 1)
    r.tests["test_a2"] = None  # the kernel died before this test ran
    a, b = analytics.exercise_stats([*SMALL, r], "lab01-x", LAYOUT)
    assert (a.unscored, b.unscored) == (1, 0)


def test_layout_from_a_notebook_groups_tests_under_their_answer():
    layout = analytics.layout_from_notebook(labtools.solution_path("lab01-que-es-un-llm"))
    by_name = {e.name: e for e in layout}
    assert by_name["softmax"].max_points == 2 and by_name["inference_memory"].max_points == 2
    assert all(t.startswith(f"test_{e.name}") for e in layout for t in e.tests)
    assert sum(e.max_points for e in layout) == 20  # the autograded points of lab01 (+3 by hand: 23)


def test_the_page_is_self_contained_and_spanish(tmp_path):
    text = analytics.render(["lab01-x"], ["s1", "s2", "s3", "s4"], SMALL, {"lab01-x": LAYOUT})
    assert text.count("<svg") == 3  # lab totals, course totals, lab01's exercises
    assert not re.search(r"<(img|script|link)\b", text)  # nothing fetched: figures are inline SVG
    assert not re.search(r"""(src|href)=["']?https?:""", text)
    for words in ("Alumnos que necesitan ayuda", "discriminación", "con todos los puntos", "0,5"):
        assert words in text
    path = analytics.write_class_report(tmp_path, ["lab01-x"], ["s1"], SMALL[:1])
    assert path == tmp_path / "analisis_clase.html" and "<svg" in path.read_text(encoding="utf-8")


# --- The demo class.

LABS = demo_class.demo_labs()
# Where what a student solved is not what they earn: lab07's quant_report uses their wrong quantize_int8.
EARNS_NOTHING = {("lab07-cuantizacion", "diego_errores", "quant_report")}


def _max_score(path):
    """Every graded cell's points (written answers included), read as plain JSON (no schema validation)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(float(c["metadata"]["nbgrader"]["points"]) for c in cells
               if c.get("metadata", {}).get("nbgrader", {}).get("grade"))


@pytest.fixture(scope="module")
def demo():
    """The demo class's results as `make grade` gives them, rebuilt from its specs (manual answers pending)."""
    layouts = {lab: analytics.layout_from_notebook(labtools.solution_path(lab)) for lab in LABS}
    maxima = {lab: _max_score(labtools.solution_path(lab)) for lab in LABS}
    results = []
    for lab in LABS:
        for student, spec in demo_class.load_spec(lab).items():
            expected, answers = spec["expected"], spec.get("answers")
            r = Result(student, lab, max_score=maxima[lab], flags=list(expected["flags"]))
            if expected.get("score") is not None:
                for ex in layouts[lab]:
                    solved = answers == "solution" or (isinstance(answers, dict) and answers.get(ex.name) == "solution")
                    solved = solved and (lab, student, ex.name) not in EARNS_NOTHING
                    r.tests.update({t: (p if solved else 0.0) for t, p in ex.tests.items()})
                r.tests.update(expected.get("tests", {}))
                r.score = sum(r.tests.values())
                assert r.score == expected["score"], (lab, student)  # the rebuilt per-test points add up
            results.append(r)
    students = sorted({r.student for r in results})
    return students, results, layouts


def _readme_totals():
    """student -> course total of the table `make grade` prints, as the README shows it (lines ending in /220)."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    rows = [line.split() for line in lines if re.fullmatch(r"[a-z_]+\s.*\s\d+/220", line)]
    return {row[0]: float(row[-1].split("/")[0]) for row in rows}


def test_demo_class_totals_are_the_readme_table(demo):
    students, results, _ = demo
    readme = _readme_totals()
    assert len(readme) == 8
    summaries = {s.student: s for s in analytics.student_summaries(results, LABS, students)}
    assert {s: summaries[s].total for s in readme} == readme
    assert {s.course_maximum for s in summaries.values()} == {220}


def test_demo_class_lab01_softmax(demo):
    _, results, layouts = demo
    lab = "lab01-que-es-un-llm"
    stats = {s.exercise: s for s in analytics.exercise_stats(results, lab, layouts[lab])}
    softmax = stats["softmax"]
    # Graded: 7 (fede_roto cannot be read); softmax solved by ana, carla, elena and ines: 2 points each.
    assert softmax.graded == 7 and softmax.mean == pytest.approx(8 / 7) and softmax.full_share == pytest.approx(4 / 7)
    # softmax (2, 0, 2, 0, 2, 0, 2) against the rest of lab01 (18, 0, 5, 2, 16, 0, 4), students in name order.
    x, y = [2, 0, 2, 0, 2, 0, 2], [18, 0, 5, 2, 16, 0, 4]
    mx, my = sum(x) / 7, sum(y) / 7
    r = sum((a - mx) * (b - my) for a, b in zip(x, y)) / math.sqrt(
        sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))
    assert softmax.discrimination == pytest.approx(r) and round(r, 3) == 0.721
    # Only ana and elena solve choose_model: the exercise the class failed most in lab01 shows under half.
    assert stats["choose_model"].mean == pytest.approx(4 / 7)


def test_demo_class_needs_help(demo):
    students, results, _ = demo
    reasons = {s.student: s.reasons for s in analytics.student_summaries(results, LABS, students)}
    assert reasons["ana_correcta"] == []
    assert reasons["carla_parcial"] == ["33 % de los puntos corregidos (menos de 50 %)"]  # 73/220
    assert any("manipulada" in why for why in reasons["elena_trampa"])  # 167/220, but tampered with a test
    assert reasons["fede_roto"] == ["no se pudo corregir " + ", ".join(lab[:5] for lab in LABS)
                                    + " (cuaderno ilegible o roto)"]
    assert sorted(s for s, why in reasons.items() if why) == sorted(set(students) - {"ana_correcta"})


def test_demo_class_page(demo):
    students, results, layouts = demo
    text = analytics.render(LABS, students, results, layouts)
    assert text.count("<svg") == 2 + len(LABS)
    for lab in LABS:
        assert f"<h3 id=\"{lab[:5]}\">" in text
