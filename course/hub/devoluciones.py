"""Return the feedback of a lab to the students through nbgrader's exchange (the instructor, on the course hub).

    python course/hub/devoluciones.py <lab> [--dry-run]

`make grade SUBMITTED=<collected folder>` writes one page per submission in <course root>/feedback/<student>/<lab>/.
`nbgrader release_feedback` also needs, next to each page, the submission's timestamp.txt and
submission_secret.txt (the secret names the page in the exchange, so only its author can fetch it); nbgrader's
own generate_feedback copies them, the course's grader reads submissions without writing next to them. This
copies them from the collected submission, refuses a page older than the submission it answers (collected
again after grading: grade again first), draws the page again from the gradebook when a score was given by
hand in Formgrader after `make grade` (the course's own feedback renderer, on the autograded notebook, whose
outputs the grader already reduced to text and images), then runs `nbgrader release_feedback <lab>`.
The course root, the collected folder and the exchange come from the instructor's nbgrader config
(course/hub/profesor/nbgrader_config.py, on JUPYTER_CONFIG_PATH in the instructor's server).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

CARRIED = ("timestamp.txt", "submission_secret.txt")


def course_directory():
    from nbgrader.apps import NbGrader

    app = NbGrader()
    app.initialize([])
    return app.coursedir


def graded_timestamps(db_url: str, lab: str) -> dict[str, object]:
    """Each student's submission time as the gradebook recorded it when the lab was graded."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        try:
            assignment = gb.find_assignment(lab)
        except MissingEntry:
            return {}
        return {s.student.id: s.timestamp for s in assignment.submissions}


def redraw_with_manual_scores(coursedir, lab: str, student: str, page: Path) -> bool:
    """Draw `page` again with the gradebook's scores if some were given by hand. True when it did."""
    from nbgrader.api import Gradebook

    autograded = Path(coursedir.format_path(coursedir.autograded_directory, student, lab)) / f"{lab}.ipynb"
    with Gradebook(coursedir.db_url) as gb:
        nb = gb.find_submission_notebook(lab, lab, student)
        if not autograded.is_file() or all(g.manual_score is None for g in nb.grades):
            return False
        scores = {g.name: g.score for g in nb.grades}
        points = {g.name: g.max_score for g in nb.grades}
        score, max_score = nb.score, nb.max_score
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from grading import feedback

    html = feedback.render(json.loads(autograded.read_text(encoding="utf-8")), lab, scores, points, score, max_score)
    tmp = page.with_suffix(".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(page)
    return True


def prepare(coursedir, lab: str) -> tuple[list[str], dict[str, str]]:
    """Copy timestamp and secret next to every feedback page of `lab`. Returns (ready, {skipped: why})."""
    from nbgrader.utils import parse_utc

    # <step>/<student>/<lab> in nbgrader's layout; a placeholder student gives the folders above
    feedback = Path(coursedir.format_path(coursedir.feedback_directory, "_", lab)).parent.parent
    submitted = Path(coursedir.format_path(coursedir.submitted_directory, "_", lab)).parent.parent
    graded = graded_timestamps(coursedir.db_url, lab)
    ready, problems = [], {}
    for page in sorted(feedback.glob(f"*/{lab}/{lab}.html")):
        student = page.parent.parent.name
        source = submitted / student / lab
        if not all((source / name).is_file() for name in CARRIED):
            problems[student] = f"no hay entrega recogida con el exchange en {source}"
            continue
        stamp = parse_utc((source / "timestamp.txt").read_text().strip())
        when = graded.get(student)
        if when is None or abs((parse_utc(str(when)) - stamp).total_seconds()) > 1e-3:
            problems[student] = (f"la entrega recogida ({stamp}) no es la corregida ({when}); "
                                 "vuelve a corregir (make grade SUBMITTED=...) antes de devolver")
            continue
        for name in CARRIED:
            shutil.copyfile(source / name, page.parent / name)
        if redraw_with_manual_scores(coursedir, lab, student, page):
            print(f"{student}: devolución redibujada con las notas puestas a mano")
        ready.append(student)
    return ready, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Release a lab's feedback through nbgrader's exchange.")
    parser.add_argument("lab")
    parser.add_argument("--dry-run", action="store_true", help="prepare the pages, do not release them")
    args = parser.parse_args(argv)
    coursedir = course_directory()
    ready, problems = prepare(coursedir, args.lab)
    for student, why in problems.items():
        print(f"!! {student}: {why} (no se devuelve)", file=sys.stderr)
    if not ready:
        print(f"No hay devoluciones de {args.lab} listas para devolver.", file=sys.stderr)
        return 1
    print(f"Devoluciones de {args.lab} preparadas: {', '.join(ready)}")
    if args.dry_run:
        return 0
    skip = [f"--CourseDirectory.student_id_exclude={','.join(problems)}"] if problems else []
    proc = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "release_feedback", args.lab, *skip])
    if proc.returncode == 0:
        print("Devueltas: cada alumno ve la suya con «Fetch Feedback» en la pestaña Assignments.")
    return proc.returncode or (2 if problems else 0)


if __name__ == "__main__":
    sys.exit(main())
