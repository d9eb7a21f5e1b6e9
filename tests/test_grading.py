"""End-to-end grading with real nbgrader: the demo class, the solutions and the untouched release.

One grading run (module fixture) over a copy of course/submitted plus one extra "student" per
lab: `zz_solucion` hands in the instructor's solution notebook and must get full marks. The demo
class's `bruno_sin_tocar` hands in the untouched release, byte for byte, and must get 0.
"""

from __future__ import annotations

import csv
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys

import pytest

from labharness import REPO, labtools

import demo_class

pytestmark = pytest.mark.slow
LABS = labtools.lab_names()


def _digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("grading")
    submitted = base / "entregas"
    shutil.copytree(REPO / "course" / "submitted", submitted)
    for lab in LABS:
        dest = submitted / "zz_solucion" / lab / f"{lab}.ipynb"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(labtools.solution_path(lab), dest)
    root = base / "curso"
    before = (_digest(submitted), _digest(REPO / "labs"))
    proc = subprocess.run(
        [sys.executable, str(REPO / "course" / "tools" / "grade.py"), "--submitted", str(submitted), "--root", str(root)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (_digest(submitted), _digest(REPO / "labs")) == before  # handed-in files and labs/ are only read
    report = json.loads((root / "grading_report.json").read_text())
    results = {(r["student"], r["lab"]): r for r in report["results"]}
    return root, results, proc.stdout


def _auto_points(lab):
    return sum(ex.points for ex in labtools.exercises(labtools.load_json_notebook(labtools.solution_path(lab))).values())


@pytest.mark.parametrize("lab", LABS)
def test_solution_gets_full_marks(graded, lab):
    _, results, _ = graded
    r = results[("zz_solucion", lab)]
    assert r["score"] == _auto_points(lab), r
    assert all(v is not None and v > 0 for v in r["tests"].values()), r["tests"]
    assert set(r["flags"]) <= {"manual"}, r["flags"]  # the hidden tests in its cells are not tampering


@pytest.mark.parametrize("lab", LABS)
def test_untouched_release_scores_zero(graded, lab):
    _, results, _ = graded
    handed_in = REPO / "course" / "submitted" / "bruno_sin_tocar" / lab / f"{lab}.ipynb"
    assert handed_in.read_bytes() == labtools.release_path(lab).read_bytes()  # the release, untouched
    r = results[("bruno_sin_tocar", lab)]
    assert r["score"] == 0, r
    assert set(r["flags"]) <= {"manual"}, r["flags"]


DEMO = [(lab, student, spec["expected"]) for lab in demo_class.demo_labs()
        for student, spec in demo_class.load_spec(lab).items()]


@pytest.mark.parametrize("lab,student,expected", DEMO, ids=[f"{d[0][:5]}-{d[1]}" for d in DEMO])
def test_demo_class_gets_its_expected_grades(graded, lab, student, expected):
    _, results, _ = graded
    r = results[(student, lab)]
    if "score" in expected:
        assert r["score"] == expected["score"], r
    assert sorted(r["flags"]) == sorted(expected["flags"]), r
    for test_id, points in expected.get("tests", {}).items():
        assert r["tests"][test_id] == points, r["tests"]


def test_table_and_grades_csv(graded):
    root, results, stdout = graded
    assert "alumno" in stdout and "ana_correcta" in stdout
    with open(root / "grades.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    keys = {(row["student_id"], row["assignment"]) for row in rows}
    graded_ok = {k for k, r in results.items() if r["score"] is not None}
    assert graded_ok <= keys


def test_class_analytics_report_beside_grades_csv(graded):
    """analisis_clase.html (grading/analytics.py) for the class just graded: its figures and its numbers."""
    from grading import analytics
    from grading.records import Result

    root, results, stdout = graded
    page = (root / analytics.REPORT_NAME).read_text(encoding="utf-8")
    assert analytics.REPORT_NAME in stdout
    assert page.count("<svg") == 2 + len(LABS) and "<img" not in page  # figures inline: nothing fetched
    rows = [Result.from_dict(r) for r in results.values()]
    for lab in LABS:
        stats = analytics.lab_stats(rows, lab)
        assert stats.graded == 8  # 9 students, fede_roto's notebook cannot be read
        assert f"<td>{lab[:5]}</td><td>8</td><td>{analytics.number(stats.max_score)}</td>" \
               f"<td>{analytics.number(stats.mean)}</td>" in page
        layout = analytics.layout_from_notebook(root / "release" / lab / f"{lab}.ipynb")
        for ex in analytics.exercise_stats(rows, lab, layout):
            assert f"<td>{ex.exercise}</td><td>{analytics.number(ex.max_points)}</td>" in page
    assert "<td>ana_correcta</td>" not in page.split("<h2>Notas de cada lab</h2>")[0]  # she does not need help
    assert "<td>carla_parcial</td>" in page.split("<h2>Notas de cada lab</h2>")[0]


def _visible_text(path):
    text = re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))
    return html.unescape(text)


@pytest.mark.parametrize("lab", LABS)
def test_feedback_never_shows_hidden_tests(graded, lab):
    root, results, _ = graded
    secrets = labtools.secret_lines(labtools.load_json_notebook(labtools.solution_path(lab)))
    hidden_only = set()
    for cell in labtools.load_json_notebook(labtools.solution_path(lab)).cells:
        if labtools.HIDDEN_BEGIN in cell.source:
            hidden_only |= {line.strip() for line in cell.source.split(labtools.HIDDEN_BEGIN, 1)[1].splitlines()
                            if len(line.strip()) >= 20}
    files = sorted((root / "feedback").glob(f"*/{lab}/*.html"))
    assert len(files) >= sum(1 for (s, l), r in results.items() if l == lab and r["score"] is not None)
    for path in files:
        text = _visible_text(path)
        assert labtools.HIDDEN_BEGIN not in text
        for line in sorted(hidden_only & secrets):
            assert line not in text, f"{path.relative_to(root)} reveals hidden test line {line[:60]!r}"


def _failed_test_cells(notebook):
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("grade") and not meta.get("solution"):
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            if errors:
                yield meta["grade_id"], errors[0]


@pytest.mark.parametrize("lab", LABS)
def test_failing_tests_score_zero_with_full_tracebacks_for_the_instructor_only(graded, lab):
    """checks v2 renders failures as the Spanish message alone; the grader asks for full tracebacks
    (LLMLAB_TRACEBACK=full) in the autograded notebook, and the feedback keeps only the message."""
    root, results, _ = graded
    failed = dict(_failed_test_cells(root / "autograded" / "diego_errores" / lab / f"{lab}.ipynb"))
    assert failed, "diego_errores fails no test?"
    for test_id, error in failed.items():
        assert results[("diego_errores", lab)]["tests"][test_id] == 0
        assert len(error["traceback"]) > 2 and any("Traceback" in line or "File" in line or "line" in line
                                                  for line in error["traceback"]), error["traceback"][:3]
    page = _visible_text(root / "feedback" / "diego_errores" / lab / f"{lab}.html")
    assert "FalloComprobacion" in page
    assert "__llmlab" not in page and "llmlab_guard" not in page  # nothing of the grader's machinery
    for test_id in failed:  # a failed test shows its message, not a traceback into the checks
        assert "llmlab/checks.py" not in page


def _first_exercise(lab):
    """The first exercise with tests: its answer cell, its functions and its test ids (any lab)."""
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    first = next(e for e in labtools.exercises(nb).values() if e.tests)
    return first.answer_id, first.function_names, [t[0] for t in first.tests]


def _every_function(names, body):
    return "\n\n".join(f"def {name}(*args, **kwargs):\n{body}" for name in names)


def test_stuck_and_crashing_submissions_are_flagged_and_never_stop_the_class(tmp_path):
    """A student whose cell never ends, one who kills the kernel, and a good one, in one run."""
    lab = LABS[0]
    answer, names, tests = _first_exercise(lab)
    loop = _every_function(names, "    while True:\n        pass")
    die = "import os\n\n" + _every_function(names, "    os._exit(1)")
    base = tmp_path / "entregas"
    every = {gid: "solution" for gid in labtools.exercises(labtools.load_json_notebook(labtools.solution_path(lab)))}
    spec = {"bucle": {"answers": {**every, answer: loop}}, "muere": {"answers": {**every, answer: die}},
            "bien": {"answers": "solution"}}
    for student, answers in spec.items():
        dest = base / student / lab / f"{lab}.ipynb"
        dest.parent.mkdir(parents=True)
        dest.write_text(demo_class.build_submission(lab, answers), encoding="utf-8")
    root = tmp_path / "curso"
    proc = subprocess.run(
        [sys.executable, str(REPO / "course" / "tools" / "grade.py"), "--submitted", str(base), "--root", str(root),
         "--labs", lab, "--cell-timeout", "5"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {r["student"]: r for r in json.loads((root / "grading_report.json").read_text())["results"]}
    assert "tiempo" in results["bucle"]["flags"]
    assert all(results["bucle"]["tests"][t] == 0 for t in tests)
    assert results["bucle"]["score"] > 0  # the other exercises still ran after the interruption
    assert "FALLO" in results["muere"]["flags"] or all(results["muere"]["tests"][t] == 0 for t in tests)
    assert results["bien"]["score"] == _auto_points(lab) and "FALLO" not in results["bien"]["flags"]


def test_flat_folder_needs_exactly_one_lab(tmp_path):
    folder = tmp_path / "descargas"
    folder.mkdir()
    shutil.copy2(labtools.release_path(LABS[0]), folder / "ana.ipynb")
    proc = subprocess.run(
        [sys.executable, str(REPO / "course" / "tools" / "grade.py"), "--submitted", str(folder), "--root",
         str(tmp_path / "curso"), "--labs", *LABS[:2]],
        capture_output=True, text=True,
    )
    assert proc.returncode != 0 and "es de un solo lab" in (proc.stdout + proc.stderr)
