"""Grade a class: every submission in its own jail, results verified and merged by the trusted side.

    python course/tools/grade.py                         # the demo class in course/submitted
    python course/tools/grade.py --submitted DIR         # an instructor's own collected submissions
    python course/tools/grade.py --submitted DIR --labs lab01-que-es-un-llm
    python course/tools/grade.py --cluster tcp://scheduler:8786   # on a Dask cluster (or DASK_SCHEDULER_ADDRESS)
    python course/tools/grade.py --export-only           # grades.csv and the report again, from the gradebook

DIR uses nbgrader's layout, DIR/<student>/<lab>/<lab>.ipynb, or, with a single lab given in --labs, a flat
folder of notebooks named after each student (DIR/<student>.ipynb). Grading an instructor's folder happens in
build/grading/<name of DIR>/ and never touches course/. Handed-in files are only read, never written; labs/ is
never written either (the release used for grading goes to <root>/release/).

Grading is journaled per submission: run it again after an interruption and it resumes where it stopped;
run it again on the same class and it reuses every result whose lab and files did not change (--fresh
re-grades everything). How it works: course/tools/grading/__init__.py.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

import labtools
from grading import analytics
from grading import gradebook as gbook
from grading import report as rpt
from grading.executors import DaskExecutor, LocalExecutor
from grading.files import Busy, grading_lock, write_failure
from grading.journal import Journal
from grading.pipeline import Course, grade_class
from grading.records import Result
from grading.sandbox import Limits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Grade a class, each submission isolated.")
    parser.add_argument("--submitted", type=Path, help="an instructor's folder of submissions")
    parser.add_argument("--root", type=Path, help="where to grade (default: course/ or build/grading/<DIR>)")
    parser.add_argument("--labs", nargs="*", help="labs to grade (default: all)")
    parser.add_argument("--cell-timeout", type=int, default=120, help="seconds per cell (default 120)")
    parser.add_argument("--total-timeout", type=int, default=900, help="seconds per submission (default 900)")
    parser.add_argument("--memory", type=int, default=4096, help="MiB of address space per process (default 4096)")
    parser.add_argument("--jail-memory", type=int, default=Limits.jail_memory_bytes // 2**20,
                        help="MiB for a whole submission: all its processes plus its temporary files "
                             f"(default {Limits.jail_memory_bytes // 2**20})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="submissions graded at once on this machine (default: every core)")
    parser.add_argument("--cluster", default=os.environ.get("DASK_SCHEDULER_ADDRESS"),
                        help="Dask scheduler address, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS)")
    parser.add_argument("--fresh", action="store_true", help="re-grade everything, ignoring the journal")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--export-only", action="store_true",
                        help="rebuild grades.csv and the report from the gradebook (manual scores included) "
                             "without grading anything")
    args = parser.parse_args(argv)

    if args.submitted is not None and not args.export_only and not args.submitted.is_dir():
        raise SystemExit(f"!! {args.submitted} no es una carpeta. Da la carpeta de las entregas: make grade "
                         "SUBMITTED=carpeta (carpeta/<alumno>/<lab>/<lab>.ipynb, o carpeta/<alumno>.ipynb con "
                         "LABS=<lab>).")
    if args.submitted is not None:
        root = args.root or labtools.REPO / "build" / "grading" / args.submitted.resolve().name
    else:
        root = args.root or labtools.COURSE
    root = Path(root).resolve()
    try:
        with grading_lock(root):
            return export_only(root, args.labs) if args.export_only else grade(args, root)
    except Busy as exc:
        print(f"!! Ya hay otra corrección en marcha en {root} ({exc}): no se corrige dos veces a la vez. Espera a "
              "que termine (o deténla) y vuelve a ejecutar esta orden.", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not interrupt the goodbye
        print(f"\n!! Corrección interrumpida. {_kept(root)} Vuelve a ejecutar la misma orden y seguirá donde lo "
              "dejó, sin repetir lo ya corregido.", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - a folder that cannot be written is explained; the rest is logged
        why = write_failure(exc)
        if why is None:
            return _unexpected(root, exc)
        print(f"\n!! No se puede escribir en {root}: {why} ({type(exc).__name__}: {str(exc)[:160]}). "
              f"{_kept(root)} Libera espacio o da permiso de escritura y vuelve a ejecutar la misma orden: seguirá "
              "donde lo dejó.", file=sys.stderr)
        return 4


def _unexpected(root: Path, exc: Exception) -> int:
    """An error of the grader itself: the traceback goes to a log, the instructor reads what to do."""
    import traceback

    log = root / "logs" / f"error-{time.strftime('%Y%m%d-%H%M%S')}.log"
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
        where = f"El detalle está en {log}."
    except OSError:
        where = "".join(traceback.format_exception(exc))
    print(f"\n!! Error inesperado del corrector ({type(exc).__name__}: {str(exc)[:200]}). {where} {_kept(root)} "
          "Vuelve a ejecutar la misma orden; si se repite, guarda ese fichero para quien mantiene el curso.",
          file=sys.stderr)
    return 5


def _kept(root: Path) -> str:
    n = sum(1 for p in (root / "journal").glob("*/*.json") if p.parent.name != "kits")
    return (f"Lo ya corregido está a salvo en el diario ({rpt.count(n, 'entrega')} en {root / 'journal'}); "
            "gradebook.db, grades.csv y el informe se rehacen desde él.")


def grade(args, root: Path) -> int:
    labs = args.labs or labtools.lab_names()
    unknown = [lab for lab in labs if lab not in labtools.lab_names()]
    if unknown:
        raise SystemExit(f"!! No existe el lab {', '.join(unknown)}. Los labs son: {', '.join(labtools.lab_names())} "
                         "(LABS=\"lab01-... lab02-...\").")
    submitted = args.submitted.resolve() if args.submitted is not None else root / "submitted"
    limits = Limits(cell_timeout=args.cell_timeout, total_timeout=args.total_timeout,
                    cpu_seconds=args.total_timeout, memory_bytes=args.memory * 2**20,
                    jail_memory_bytes=args.jail_memory * 2**20)
    course = Course(root=root, course_dir=labtools.COURSE, solutions=labtools.SOLUTIONS)
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    executor = DaskExecutor(args.cluster) if args.cluster else LocalExecutor(args.jobs)
    start = time.perf_counter()
    try:
        students, results, facts = grade_class(course, submitted, labs, executor, limits, fresh=args.fresh, say=say)
    except BaseException:
        executor.abort()  # Ctrl-C, a full disk: stop the workers and their jails now, not after their tasks
        raise
    executor.close()
    results = gbook.with_manual_scores(root, results)
    gbook.export_csv(root, results)
    rpt.write_report(root, labs, students, results, facts)
    # A submission scored by hand before this run keeps its hand scores and comments on its feedback page.
    gbook.rewrite_feedback(root, labs)
    analytics.write_class_report(root, labs, students, results)  # analisis_clase.html, beside grades.csv
    print()
    if not facts["sandbox"]["isolated"]:
        print(f"!! SIN ENTORNO AISLADO: {facts['sandbox']['reason']}. El código de los alumnos corrió con acceso a "
              "esta máquina (marca '!').\n")
    print(rpt.table(results, labs, students))
    print()
    lines = rpt.explanations(results)
    if lines:
        print("\n".join(lines))
        print()
    print(f"{rpt.count(facts['graded_now'], 'entrega corregida')} ahora, "
          f"{rpt.count(facts['reused_from_journal'], 'reutilizada', 'reutilizadas')} del diario "
          f"({executor.name}, {rpt.count(executor.jobs, 'proceso')}; aislamiento: {facts['sandbox']['mode']}; "
          f"memoria por entrega: {limits.jail_memory_bytes / 2**30:g} GiB entre procesos y ficheros temporales).")
    if facts["grader_errors"]:
        print(f"!! {rpt.count(facts['grader_errors'], 'entrega', 'entregas')} con error del corrector (no del "
              "alumno): no se guardaron como nota; vuelve a ejecutar la misma orden para corregirlas.")
    print(f"Notas: {root / 'grades.csv'}   Devoluciones: {root / 'feedback'}/<alumno>/<lab>/")
    print(f"Informe: {root / 'grading_report.json'}   Análisis de la clase: {root / analytics.REPORT_NAME}   "
          f"Registros: {root / 'logs'}/")
    print(f"Tiempo total: {time.perf_counter() - start:.1f} s")
    for lab, error in facts["kit_errors"].items():
        print(f"\n!! {lab} no se corrigió: {error}", file=sys.stderr)
    return 2 if facts["kit_errors"] else 0


def export_only(root: Path, labs: list[str] | None) -> int:
    """`make grades`: grades.csv and the report again, from the gradebook (with formgrader's manual scores).

    The journal is the source of truth for autograded results: the gradebook first catches up with it. What
    cannot be rebuilt is said, and the existing report and grades.csv are left as they are, never emptied.
    """
    root = Path(root)
    journaled = Journal(root).results(labs)
    aside = gbook.set_aside_if_corrupt(root)
    if aside:
        print(f"!! El gradebook estaba dañado: se apartó como {aside.name}.")
    if not (root / "gradebook.db").exists():
        if journaled:
            print(f"!! No hay gradebook en {root}, pero el diario tiene {rpt.count(len(journaled), 'entrega')}: "
                  "ejecuta `make grade` (con las mismas opciones), que lo reconstruye desde el diario sin volver a "
                  "corregir. No se ha tocado grades.csv ni el informe.", file=sys.stderr)
            return 2
        raise SystemExit(f"!! No hay gradebook en {root}: corrige primero esta clase con make grade (con el mismo "
                         "SUBMITTED=, y LABS=<lab> si es una carpeta plana) y vuelve a ejecutar make grades.")
    entries = [(r.lab, r.student, r, None) for r in journaled if "sin entrega" not in r.flags and not r.grader_error]
    for lab, student, result, _ in gbook.stale(root, entries):
        try:
            gbook.record(root, lab, student, result)
        except Exception as exc:  # noqa: BLE001 - e.g. a lab nbgrader never registered here: said, not fatal
            if write_failure(exc):
                raise
            print(f"!! {rpt.printable(student)} / {lab}: no se pudo rehacer en el gradebook ({type(exc).__name__}); "
                  "ejecuta `make grade`.", file=sys.stderr)
    old = rpt.read_report(root) or {}
    reported = [Result.from_dict(r) for r in old.get("results", [])]
    known = {(r.student, r.lab) for r in journaled}
    # Journaled results first; from the report, what the journal never holds (errors of the grader, no submission).
    previous = journaled + [r for r in reported if (r.student, r.lab) not in known] if journaled else reported
    labs, students, results = gbook.results_from_gradebook(root, labs, previous)
    if not results and (old.get("results") or journaled):
        print(f"!! El gradebook de {root} no tiene ninguna entrega y el informe o el diario sí: no se sobrescribe "
              "nada con una tabla vacía. Ejecuta `make grade`, que lo reconstruye desde el diario.", file=sys.stderr)
        return 2
    csv_path = gbook.export_csv(root, results)
    extra = {k: v for k, v in old.items() if k not in ("root", "labs", "students", "flags", "results")}
    rpt.write_report(root, labs, students, results, extra)
    rewritten = gbook.rewrite_feedback(root, labs)  # the students' pages say what grades.csv says
    analytics.write_class_report(root, labs, students, results)  # analisis_clase.html, beside grades.csv
    print(rpt.table(results, labs, students))
    print()
    graded = sum(1 for r in results if r.manual_score is not None)
    pending = sum(1 for r in results if r.manual_pending)
    print(f"Notas manuales: {rpt.count(graded, 'entrega puntuada', 'entregas puntuadas')} a mano, "
          f"{rpt.count(pending, 'pendiente')}.")
    print(f"Notas: {csv_path}   Informe: {root / 'grading_report.json'}")
    print(f"Devoluciones rehechas con las notas y comentarios de Formgrader: {rpt.count(rewritten, 'página')} en "
          f"{root / 'feedback'}/<alumno>/<lab>/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
