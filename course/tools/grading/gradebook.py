"""The trusted merge into nbgrader's gradebook, and grades.csv built from it.

The gradebook (SQLite, `<root>/gradebook.db`) is nbgrader's: formgrader reads it and writes the manual scores
there. Only this module writes it, from the instructor's machine, one submission per transaction. grades.csv
is rebuilt from the gradebook (so it includes manual scores) and written atomically.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

from .files import atomic_write_text
from .records import FLAG_ORDER, Result

CSV_COLUMNS = [  # nbgrader's CsvExportPlugin columns, then ours
    "assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
    "raw_score", "late_submission_penalty", "score", "max_score",
    "auto_score", "manual_score", "manual_pending", "flags",
]


def db_url(root: Path) -> str:
    # SQLite serialises writers; a reader (formgrader) waiting on our short transactions gets 120 s.
    return "sqlite:///" + str(Path(root).resolve() / "gradebook.db") + "?timeout=120"


@contextlib.contextmanager
def open_gradebook(root: Path):
    from nbgrader.api import Gradebook

    with Gradebook(db_url(root), "llmlab") as gb:
        yield gb


def record(root: Path, lab: str, student: str, result: Result, timestamp: str | None = None) -> None:
    """Write one graded submission into the gradebook (one transaction). Manual scores are never touched."""
    import warnings

    from nbgrader.api import MissingEntry

    with open_gradebook(root) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's autoflush notes inside nbgrader's add_submission
        gb.update_or_create_student(student)
        try:
            gb.find_submission(lab, student)
        except MissingEntry:
            gb.add_submission(lab, student)
        submission = gb.find_submission(lab, student)
        if timestamp:
            try:
                from nbgrader.utils import parse_utc

                submission.timestamp = parse_utc(timestamp)
            except Exception:  # noqa: BLE001 - a bad timestamp.txt is not worth a failed merge
                pass
        nb = gb.find_submission_notebook(lab, lab, student)
        for grade in nb.grades:
            if grade.cell_type == "code" and grade.name in result.tests and result.score is not None:
                grade.auto_score = float(result.tests[grade.name])
            elif grade.cell_type == "code":
                grade.auto_score = None  # could not be graded: formgrader shows it as pending
            else:  # a written answer: untouched is 0, anything else waits for the instructor
                grade.auto_score = None if result.manual_pending else 0.0
            # As nbgrader does: a score set by hand earlier, or none at all, asks the instructor to look again.
            grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
        nb.flagged = "sospechosa" in result.flags
        gb.db.commit()


def _expected_auto(nb, result: Result) -> dict[str, float | None]:
    """The autograded score `record` gives each code cell of `nb` for `result`."""
    return {g.name: (float(result.tests[g.name]) if g.name in result.tests and result.score is not None else None)
            for g in nb.grades if g.cell_type == "code"}


def stale(root: Path, entries: list[tuple[str, str, Result, str | None]]) -> list[tuple]:
    """The (lab, student, result, timestamp) entries the gradebook lacks or holds with other autograded scores."""
    from nbgrader.api import MissingEntry

    if not entries:
        return []
    out = []
    with open_gradebook(root) as gb:
        for entry in entries:
            lab, student, result, _ = entry
            try:
                nb = gb.find_submission_notebook(lab, lab, student)
            except MissingEntry:
                out.append(entry)
                continue
            if {g.name: g.auto_score for g in nb.grades if g.cell_type == "code"} != _expected_auto(nb, result):
                out.append(entry)
    return out


def set_aside_if_corrupt(root: Path) -> Path | None:
    """A gradebook SQLite cannot read is moved aside (kept, for its manual scores); returns where, or None."""
    import sqlite3
    import time

    path = Path(root) / "gradebook.db"
    if not path.exists():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=120)) as db:
            ok = db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            ok = ok and db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'assignment'").fetchone()[0] == 1
    except sqlite3.DatabaseError:
        ok = False
    if ok:
        return None
    aside = path.with_name(f"gradebook.db.dañado-{time.strftime('%Y%m%d-%H%M%S')}")
    path.rename(aside)
    return aside


def _notebook_totals(nb) -> tuple[float, float | None, bool, dict[str, float | None]]:
    """(autograded points, manual points or None, manual answers pending, per-test points) of one notebook."""
    auto, manual, pending, tests = 0.0, None, False, {}
    for grade in nb.grades:
        if grade.cell_type == "code":
            score = grade.manual_score if grade.manual_score is not None else grade.auto_score
            tests[grade.name] = None if score is None else float(score)
            auto += float(score or 0.0)
        else:  # a written answer
            if grade.manual_score is not None:  # (an untouched answer gets auto_score 0: nothing to add)
                manual = (manual or 0.0) + float(grade.manual_score)
            if grade.needs_manual_grade:
                pending = True
    return auto, manual, pending, tests


def results_from_gradebook(root: Path, labs: list[str] | None = None,
                           previous: list[Result] | None = None) -> tuple[list[str], list[str], list[Result]]:
    """Every submission in the gradebook as a Result (manual scores included), keeping earlier flags and notes.

    Returns (labs, students, results).
    """
    from nbgrader.api import MissingEntry

    old = {(r.student, r.lab): r for r in previous or []}
    results = []
    with open_gradebook(root) as gb:
        known_labs = [a.name for a in gb.assignments]
        labs = [lab for lab in (labs or sorted(known_labs)) if lab in known_labs]
        students = sorted(s.id for s in gb.students)
        for lab in labs:
            assignment = gb.find_assignment(lab)
            for student in students:
                before = old.get((student, lab))
                r = Result(student, lab, max_score=float(assignment.max_score))
                try:
                    gb.find_submission(lab, student)
                    nb = gb.find_submission_notebook(lab, lab, student)
                except MissingEntry:
                    r.flags = list(before.flags) if before else ["sin entrega"]
                    r.notes = list(before.notes) if before else []
                    r.score = before.score if before else None
                    results.append(r)
                    continue
                auto, manual, pending, tests = _notebook_totals(nb)
                failed = before is not None and before.score is None
                r.score = None if failed else auto
                r.manual_score, r.manual_pending, r.tests = manual, pending, tests
                if before:
                    r.flags = [f for f in before.flags if f != "manual"]
                    r.notes = list(before.notes)
                if pending and not failed:
                    r.flag("manual")
                results.append(r)
    return labs, students, results


def with_manual_scores(root: Path, results: list[Result]) -> list[Result]:
    """The results, with what the gradebook knows about written answers (manual scores, still pending)."""
    from nbgrader.api import MissingEntry

    out = []
    with open_gradebook(root) as gb:
        for r in results:
            r = Result.from_dict(r.to_dict())
            if r.score is not None:
                try:
                    nb = gb.find_submission_notebook(r.lab, r.lab, r.student)
                except MissingEntry:
                    nb = None
                if nb is not None:
                    _, r.manual_score, r.manual_pending, _ = _notebook_totals(nb)
                    r.flags = [f for f in r.flags if f != "manual"]
                    if r.manual_pending:
                        r.flag("manual")
            out.append(r)
    return out


def export_csv(root: Path, results: list[Result]) -> Path:
    """grades.csv from the gradebook (nbgrader's columns, plus auto/manual split and flags), atomically."""
    from nbgrader.api import MissingEntry

    by_key = {(r.student, r.lab): r for r in results}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    with open_gradebook(root) as gb:
        for assignment in sorted(gb.assignments, key=lambda a: a.name):
            for student in sorted(gb.students, key=lambda s: s.id):
                r = by_key.get((student.id, assignment.name))
                row = {
                    "assignment": assignment.name, "duedate": assignment.duedate or "", "student_id": student.id,
                    "last_name": student.last_name or "", "first_name": student.first_name or "",
                    "email": student.email or "", "max_score": _num(assignment.max_score),
                    "timestamp": "", "raw_score": "0.0", "late_submission_penalty": "0.0", "score": "0.0",
                    "auto_score": "", "manual_score": "", "manual_pending": "",
                    "flags": " ".join(f.replace(" ", "_") for f in FLAG_ORDER if r and f in r.flags),
                }
                try:
                    submission = gb.find_submission(assignment.name, student.id)
                except MissingEntry:
                    pass
                else:
                    penalty = submission.late_submission_penalty or 0.0
                    row.update(timestamp=submission.timestamp or "", raw_score=_num(submission.score),
                               late_submission_penalty=_num(penalty),
                               score=_num(max(0.0, submission.score - penalty)))
                    nb = gb.find_submission_notebook(assignment.name, assignment.name, student.id)
                    auto, manual, pending, _ = _notebook_totals(nb)
                    row.update(auto_score=_num(auto), manual_score="" if manual is None else _num(manual),
                               manual_pending="sí" if pending else "no")
                writer.writerow([_cell(row[c]) if c in _TEXT_COLUMNS else row[c] for c in CSV_COLUMNS])
    path = Path(root) / "grades.csv"
    atomic_write_text(path, out.getvalue())
    return path


_TEXT_COLUMNS = {"assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email", "flags",
                 "manual_pending"}
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _cell(value) -> str:
    """A text field a spreadsheet shows as text (OWASP, CSV injection): a leading = + - @ tab or CR is
    prefixed with a single quote, so `=1+1` is never evaluated; the csv module quotes what needs it."""
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _num(x) -> str:
    return repr(float(x or 0.0))


def _feedback_inputs(nb) -> tuple[dict, dict, dict, bool]:
    """(scores, points, comments, graded by hand) of one submitted notebook, as the gradebook holds them now."""
    scores, points, comments, by_hand = {}, {}, {}, False
    for grade in nb.grades:
        score = grade.manual_score if grade.manual_score is not None else grade.auto_score
        if score is not None:
            scores[grade.name] = float(score)
        points[grade.name] = float(grade.max_score or 0.0)
        by_hand = by_hand or grade.manual_score is not None
    for comment in nb.comments:
        text = comment.manual_comment if comment.manual_comment else comment.auto_comment
        if text and text.strip():
            comments[comment.name] = text
            by_hand = by_hand or bool(comment.manual_comment)
    return scores, points, comments, by_hand


HAND_MARK = 'name="llmlab-corregida-a-mano"'  # in the head of a feedback page that carries hand scores


def rewrite_feedback(root: Path, labs: list[str] | None = None) -> int:
    """The feedback pages again, from the autograded notebooks and the gradebook as it is now, so that the scores
    and comments given by hand in Formgrader reach the student's page (`make grades`, and `make grade` after it
    rewrote a page). Only the pages that need it: a submission with a hand score or comment, or whose page carried
    some (they were removed). Returns how many pages were written.
    """
    from . import feedback

    root = Path(root)
    jobs = []
    with open_gradebook(root) as gb:
        for assignment in gb.assignments:
            if labs and assignment.name not in labs:
                continue
            lab = assignment.name
            for submission in assignment.submissions:
                student = submission.student.id
                source = root / "autograded" / student / lab / f"{lab}.ipynb"
                if not source.exists():
                    continue
                nb = next((n for n in submission.notebooks if n.name == lab), None)
                if nb is None:
                    continue
                scores, points, comments, by_hand = _feedback_inputs(nb)
                page = root / "feedback" / student / lab / f"{lab}.html"
                if not by_hand and not (page.exists() and HAND_MARK in page.read_text(encoding="utf-8")):
                    continue  # the page written when it was graded already says all there is
                jobs.append((page, lab, source, scores, points, comments, by_hand, float(assignment.max_score or 0)))
    for page, lab, source, scores, points, comments, by_hand, max_score in jobs:
        nb = json.loads(source.read_text(encoding="utf-8"))
        html = feedback.render(nb, lab, scores, points, sum(scores.values()), max_score, comments, by_hand)
        atomic_write_text(page, html)
    return len(jobs)
