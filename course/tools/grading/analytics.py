"""Class analytics: which exercise the class failed and which students need help, as one HTML page.

`make grade` (and `make grades`) write `<root>/analisis_clase.html` beside grades.csv:

    per exercise   mean points, share of students with full marks, item discrimination (Pearson correlation of
                   the exercise's points with the rest of the lab's autograded points: near 0 or negative, the
                   exercise does not tell strong students from weak ones), tests left without a score
    per lab        the distribution of lab totals (mean, median, quartiles) and how many submissions carry each
                   flag of the grading records (tiempo, manipulada, FALLO...)
    per student    who needs help: under half of the points graded so far, a lab not handed in or not gradable
    figures        matplotlib, rendered to inline SVG: the page is self-contained and works offline

Statistics count only the submissions that were graded (a score, not "sin entrega", not "FALLO", not an error of
the grader): a missing notebook says nothing about an exercise. Identifiers are English; the page is Spanish.
The module reads only plain data (`Result`s, the release notebooks' nbgrader metadata), so it also runs on its own:

    python course/tools/grading/analytics.py ROOT     # ROOT holds grading_report.json (course/ by default)
"""

from __future__ import annotations

import html
import io
import json
import math
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import the grading package next to this file
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "grading"

from .files import atomic_write_text  # noqa: E402
from .records import FLAG_ORDER, FLAGS, Result  # noqa: E402
from .report import count  # noqa: E402

REPORT_NAME = "analisis_clase.html"
HELP_SHARE = 0.5  # a student under this share of the points graded so far needs help
WEAK_DISCRIMINATION = 0.2  # below this, an exercise hardly separates strong from weak students
# Flags that say something about the submission (not "manual", which only says a written answer is pending).
REPORTED_FLAGS = [f for f in FLAG_ORDER if f != "manual"]


# ---------------------------------------------------------------------------------------------------------------
# The data: which tests make up each exercise, and the statistics computed from the results.

@dataclass
class Exercise:
    """One answer cell of a lab and the test cells that grade it (test ids are `test_<answer id>...`)."""

    name: str
    tests: dict[str, float]  # test cell id -> points

    @property
    def max_points(self) -> float:
        return sum(self.tests.values())


@dataclass
class ExerciseStats:
    lab: str
    exercise: str
    max_points: float
    graded: int  # submissions counted
    mean: float | None
    full_share: float | None  # share of those submissions with every point of the exercise
    discrimination: float | None  # None: fewer than 3 submissions, or no spread to correlate
    unscored: int  # submissions where a test of this exercise has no score (time-out, kernel died...)


@dataclass
class LabStats:
    lab: str
    max_score: float  # every graded cell, written answers included
    totals: list[float]  # points so far (autograded + manual) of each graded submission
    flags: dict[str, int] = field(default_factory=dict)  # flag -> submissions carrying it (all, graded or not)

    @property
    def graded(self) -> int:
        return len(self.totals)

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.totals) if self.totals else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.totals) if self.totals else None

    def quartiles(self) -> tuple[float, float] | None:
        if len(self.totals) < 2:
            return None
        q = statistics.quantiles(self.totals, n=4, method="inclusive")
        return q[0], q[2]


@dataclass
class StudentSummary:
    student: str
    total: float  # points so far, every lab
    maximum: float  # the points of the labs counted in total (graded submissions)
    course_maximum: float  # every lab's points
    reasons: list[str]  # why this student needs help (Spanish); empty: doing fine


def layout_from_notebook(path: Path) -> list[Exercise]:
    """The exercises of a lab from its (release or source) notebook's nbgrader metadata."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    answers, tests = [], {}
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or "grade_id" not in meta:
            continue
        if meta.get("solution") and not meta.get("grade"):
            answers.append(meta["grade_id"])
        elif meta.get("grade") and not meta.get("solution"):
            tests[meta["grade_id"]] = float(meta.get("points") or 0.0)
    exercises = {name: Exercise(name, {}) for name in answers}
    for test_id, points in tests.items():
        owner = max((a for a in answers if test_id.startswith(f"test_{a}")), key=len, default=None)
        if owner is None:  # a test cell that names no answer: an exercise of its own
            exercises[test_id] = Exercise(test_id, {})
            owner = test_id
        exercises[owner].tests[test_id] = points
    return [e for e in exercises.values() if e.tests]


def layout_from_results(results: list[Result], lab: str) -> list[Exercise]:
    """Without the notebook: every test its own exercise, worth the most points any submission earned there."""
    best: dict[str, float] = {}
    for r in results:
        if r.lab == lab:
            for test_id, points in r.tests.items():
                best[test_id] = max(best.get(test_id, 0.0), points or 0.0)
    return [Exercise(test_id, {test_id: points}) for test_id, points in best.items()]


def counted(results: list[Result], lab: str) -> list[Result]:
    """The submissions of `lab` that were graded: the ones the statistics describe."""
    return [r for r in results if r.lab == lab and r.score is not None and not r.grader_error
            and "sin entrega" not in r.flags and "FALLO" not in r.flags]


def pearson(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's correlation; None with fewer than 3 pairs or when either side does not vary."""
    if len(xs) < 3:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return sxy / math.sqrt(sxx * syy)


def exercise_stats(results: list[Result], lab: str, exercises: list[Exercise]) -> list[ExerciseStats]:
    graded = counted(results, lab)
    out = []
    for ex in exercises:
        points = [sum(r.tests.get(t) or 0.0 for t in ex.tests) for r in graded]
        rest = [(r.score or 0.0) - p for r, p in zip(graded, points)]
        out.append(ExerciseStats(
            lab=lab, exercise=ex.name, max_points=ex.max_points, graded=len(graded),
            mean=statistics.fmean(points) if points else None,
            full_share=(sum(p >= ex.max_points - 1e-9 for p in points) / len(points)) if points else None,
            discrimination=pearson(points, rest),
            unscored=sum(any(r.tests.get(t) is None for t in ex.tests) for r in graded),
        ))
    return out


def lab_stats(results: list[Result], lab: str) -> LabStats:
    mine = [r for r in results if r.lab == lab]
    max_score = max((r.max_score for r in mine), default=0.0)
    flags = {f: sum(f in r.flags for r in mine) for f in REPORTED_FLAGS}
    return LabStats(lab, max_score, [r.total for r in counted(results, lab)], {f: n for f, n in flags.items() if n})


def student_summaries(results: list[Result], labs: list[str], students: list[str]) -> list[StudentSummary]:
    by_key = {(r.student, r.lab): r for r in results}
    lab_max = {lab: max((r.max_score for r in results if r.lab == lab), default=0.0) for lab in labs}
    out = []
    for student in students:
        total = maximum = 0.0
        reasons, missing, failed, review = [], [], [], []
        for lab in labs:
            r = by_key.get((student, lab))
            if r is None or "sin entrega" in r.flags:
                missing.append(short(lab))
            elif r.score is None or "FALLO" in r.flags:
                failed.append(short(lab))
            else:
                total += r.total
                maximum += r.max_score
                if "sospechosa" in r.flags or "manipulada" in r.flags:
                    review.append(short(lab))
        if maximum and total / maximum < HELP_SHARE:
            reasons.append(f"{percent(total / maximum)} de los puntos corregidos (menos de {percent(HELP_SHARE)})")
        if missing:
            reasons.append("no entregó " + ", ".join(missing))
        if failed:
            reasons.append("no se pudo corregir " + ", ".join(failed) + " (cuaderno ilegible o roto)")
        if review:
            reasons.append("revisa a mano " + ", ".join(review) + " (manipulada o sospechosa)")
        out.append(StudentSummary(student, total, maximum, sum(lab_max.values()), reasons))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Numbers and words, in Spanish.

def short(lab: str) -> str:
    """'lab06-adaptar-modelos' -> 'lab06'."""
    return lab.split("-", 1)[0]


def number(x: float | None, digits: int = 1) -> str:
    """Spanish decimals: 2,5; a whole number without decimals; '—' for nothing."""
    if x is None:
        return "—"
    if abs(x - round(x)) < 1e-9:
        return str(int(round(x)))
    return f"{x:.{digits}f}".replace(".", ",")


def percent(share: float | None) -> str:
    return "—" if share is None else f"{share * 100:.0f} %"


# ---------------------------------------------------------------------------------------------------------------
# Figures: matplotlib's object API (no pyplot, no backend, no window), rendered to SVG text.

def _svg(fig) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "llmlab", "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # inline in the page: without the XML prologue


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def exercise_figure(lab: str, rows: list[ExerciseStats]) -> str:
    """Bars: the class's mean share of each exercise's points; red under half."""
    fig = _figure(7, 0.35 * len(rows) + 1.2)
    ax = fig.add_subplot()
    shares = [(s.mean or 0.0) / s.max_points if s.max_points else 0.0 for s in rows]
    names = [s.exercise for s in rows]
    ax.barh(range(len(rows)), shares, color=["#c0392b" if v < HELP_SHARE else "#2e86c1" for v in shares])
    ax.set_yticks(range(len(rows)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.axvline(HELP_SHARE, color="#888", lw=0.8, ls="--")
    ax.set_xlabel("media de la clase (fracción de los puntos del ejercicio)")
    ax.set_title(f"{short(lab)}: ¿qué ejercicio falló la clase?", fontsize=10)
    return _svg(fig)


def totals_figure(labs: list[LabStats]) -> str:
    """Box plot of each lab's totals, as a share of its points, with every student as a dot."""
    fig = _figure(7, 3.2)
    ax = fig.add_subplot()
    data = [[t / s.max_score for t in s.totals] if s.max_score else [] for s in labs]
    ax.boxplot([d or [0.0] for d in data], widths=0.5)
    for i, values in enumerate(data, start=1):
        ax.plot([i] * len(values), values, "o", color="#2e86c1", alpha=0.6, ms=4)
    ax.set_xticks(range(1, len(labs) + 1), [short(s.lab) for s in labs], fontsize=8)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("nota del lab (fracción)")
    ax.set_title("Distribución de las notas de cada lab", fontsize=10)
    return _svg(fig)


def course_figure(summaries: list[StudentSummary]) -> str:
    """Histogram of the students' course totals (share of every lab's points)."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure(7, 2.8)
    ax = fig.add_subplot()
    shares = [s.total / s.course_maximum for s in summaries if s.course_maximum]
    ax.hist(shares, bins=[i / 10 for i in range(11)], color="#2e86c1", edgecolor="white")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # students come whole
    ax.axvline(HELP_SHARE, color="#c0392b", lw=1, ls="--")
    ax.set_xlim(0, 1)
    ax.set_xlabel("nota del curso (fracción de todos los puntos)")
    ax.set_ylabel("alumnos")
    ax.set_title("Distribución de las notas del curso", fontsize=10)
    return _svg(fig)


# ---------------------------------------------------------------------------------------------------------------
# The page.

_STYLE = """
body { font-family: sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.weak { background: #fde2e0; } td.text { text-align: left; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
p.note { color: #555; font-size: 0.9rem; }
"""


def _table(header: list[str], rows: list[list[tuple[str, str]]]) -> str:
    """An HTML table; each cell is (text, css class)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td class="{c}">{html.escape(t)}</td>' if c else f"<td>{html.escape(t)}</td>"
                                    for t, c in row) + "</tr>\n" for row in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}</table>\n"


def render(labs: list[str], students: list[str], results: list[Result], layouts: dict[str, list[Exercise]]) -> str:
    lab_rows = [lab_stats(results, lab) for lab in labs]
    summaries = student_summaries(results, labs, students)
    parts = [f"<h1>Análisis de la clase</h1>\n<p>{count(len(students), 'alumno')}, {count(len(labs), 'lab', 'labs')}. "
             "Solo cuentan las entregas corregidas (no las que faltan ni las que no se pudieron corregir). "
             "La discriminación es la correlación entre los puntos del ejercicio y el resto de puntos del lab: "
             "cerca de 0 o negativa, el ejercicio no distingue a quien domina el lab de quien no.</p>\n"]

    parts.append("<h2>Alumnos que necesitan ayuda</h2>\n")
    needing = [s for s in summaries if s.reasons]
    if needing:
        parts.append(_table(["alumno", "puntos", "de", "motivo"],
                            [[(s.student, ""), (number(s.total), ""), (number(s.maximum), ""),
                              ("; ".join(s.reasons), "text")] for s in needing]))
    else:
        parts.append("<p>Ninguno.</p>\n")

    parts.append("<h2>Notas de cada lab</h2>\n")
    parts.append(_table(
        ["lab", "corregidas", "máximo", "media", "mediana", "cuartiles", "marcas"],
        [[(short(s.lab), ""), (str(s.graded), ""), (number(s.max_score), ""), (number(s.mean), ""),
          (number(s.median), ""),
          ("—" if s.quartiles() is None else " – ".join(number(q) for q in s.quartiles()), ""),
          (", ".join(f"{f}: {n}" for f, n in s.flags.items()) or "—", "text")] for s in lab_rows]))
    parts.append(f"<figure>{totals_figure(lab_rows)}</figure>\n<figure>{course_figure(summaries)}</figure>\n")

    parts.append("<h2>Ejercicios</h2>\n")
    for lab in labs:
        rows = exercise_stats(results, lab, layouts.get(lab) or layout_from_results(results, lab))
        if not rows:
            continue
        parts.append(f"<h3 id=\"{html.escape(short(lab))}\">{html.escape(lab)}</h3>\n")
        parts.append(_table(
            ["ejercicio", "puntos", "media", "con todos los puntos", "discriminación", "pruebas sin nota"],
            [[(s.exercise, ""), (number(s.max_points), ""),
              (number(s.mean, 2), "weak" if s.mean is not None and s.mean < HELP_SHARE * s.max_points else ""),
              (percent(s.full_share), ""),
              (number(s.discrimination, 2),
               "weak" if s.discrimination is not None and s.discrimination < WEAK_DISCRIMINATION else ""),
              (str(s.unscored), "")] for s in rows]))
        parts.append(f"<figure>{exercise_figure(lab, rows)}</figure>\n")

    legend = "".join(f"<li><b>{html.escape(f)}</b>: {html.escape(FLAGS[f][1])}</li>" for f in REPORTED_FLAGS)
    parts.append(f"<h2>Marcas</h2>\n<ul>{legend}</ul>\n")
    return ("<!DOCTYPE html>\n<html lang=\"es\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>Análisis de la clase</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            + "".join(parts) + "</body>\n</html>\n")


def layouts_for(root: Path, labs: list[str]) -> dict[str, list[Exercise]]:
    """Each lab's exercises from the release the grading used (<root>/release/<lab>/<lab>.ipynb), if there."""
    out = {}
    for lab in labs:
        path = Path(root) / "release" / lab / f"{lab}.ipynb"
        if path.exists():
            try:
                out[lab] = layout_from_notebook(path)
            except (OSError, ValueError):
                pass
    return out


def write_class_report(root: Path, labs: list[str], students: list[str], results: list[Result]) -> Path:
    """Write <root>/analisis_clase.html (atomically) and return its path."""
    path = Path(root) / REPORT_NAME
    atomic_write_text(path, render(labs, students, results, layouts_for(root, labs)))
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parents[2]
    report = json.loads((root / "grading_report.json").read_text(encoding="utf-8"))
    results = [Result.from_dict(r) for r in report["results"]]
    print(write_class_report(root, report["labs"], report["students"], results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
