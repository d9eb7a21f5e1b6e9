"""Grade a class: release every lab, autograde the submissions, write feedback and grades.csv.

    python course/tools/grade.py                         # the demo class in course/submitted
    python course/tools/grade.py --submitted DIR         # an instructor's own collected submissions
    python course/tools/grade.py --submitted DIR --labs lab01-que-es-un-llm

DIR uses nbgrader's layout, DIR/<student>/<lab>/<lab>.ipynb, or, with a single lab given in --labs,
a flat folder of notebooks named after each student (DIR/<student>.ipynb). Grading of an
instructor's folder happens in build/grading/<name of DIR>/ and never touches course/. Submissions are
first copied to <root>/staged/, where repairs happen: the handed-in files are never modified.

A broken submission never stops the others: it is flagged in the table and in the report.
Flags:
  FALLO       could not be graded (unreadable notebook, dead kernel, grader error)
  tiempo      a cell hit the per-cell time limit and was interrupted
  manipulada  a test or read-only cell was edited (nbgrader restores the original before grading)
  reparada    test cells were deleted or renamed; they were restored from the release
  sospechosa  code that tampers with the checks (rebinding numpy/llmlab functions, os._exit, ...)
  manual      written answers waiting for the instructor (formgrader)
  sin entrega no notebook for this lab
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import labtools

FLAG_ORDER = ["sin entrega", "FALLO", "tiempo", "manipulada", "reparada", "sospechosa", "manual"]

# Code a student has no business writing in an answer cell: it tampers with the grader.
SUSPICIOUS = [
    (r"\b(np|numpy|math|torch|llmlab(\.\w+)*|checks)\.\w+\s*=[^=]", "reasigna una función de una biblioteca"),
    (r"\bsetattr\s*\(", "usa setattr"),
    (r"\b__builtins__\b|\bimport\s+builtins\b|\bbuiltins\.", "toca builtins"),
    (r"\bsys\.modules\b", "toca sys.modules"),
    (r"\bos\._exit\b|\bsys\.exit\b", "termina el kernel"),
    (r"\bsignal\.", "manipula señales"),
    (r"\b(check_\w+|reference_blocked|hidden)\s*=[^=]", "redefine una comprobación"),
    (r"\bdef\s+(check_\w+|reference_blocked|hidden)\s*\(", "redefine una comprobación"),
    (r"\bglobals\s*\(\s*\)\s*\[", "escribe en globals()"),
]


@dataclass
class Result:
    student: str
    lab: str
    score: float | None = None
    max_score: float = 0.0
    manual_pending: bool = False
    flags: list[str] = field(default_factory=list)
    tests: dict[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def flag(self, name: str, note: str | None = None) -> None:
        if name not in self.flags:
            self.flags.append(name)
        if note:
            self.notes.append(note)


# ------------------------------------------------------------------------------ nbgrader

def nbgrader(args: list[str], overrides: list[str], log: Path) -> int:
    """Run one nbgrader command from course/ (so it reads our config); append its output to log."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # alembic
    env.setdefault("PYTHONHASHSEED", "0")
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # plots inline, even if Agg was exported
    env["OMP_NUM_THREADS"] = "1"  # tiny tensors: a second torch thread only spins; same results everywhere
    cmd = [sys.executable, "-m", "nbgrader", *args, *overrides]
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"\n$ nbgrader {' '.join(args)}\n")
        fh.flush()
        proc = subprocess.run(cmd, cwd=labtools.COURSE, stdout=fh, stderr=subprocess.STDOUT, env=env)
    return proc.returncode


# ------------------------------------------------------------------------------ submissions

def stage(source: Path, staged: Path, labs: list[str]) -> None:
    """Copy the submissions to grade into staged/ (nbgrader layout); the originals are never modified.

    `source` uses nbgrader's layout (<student>/<lab>/<lab>.ipynb) or, for a single lab, is a flat
    folder of <student>.ipynb files.
    """
    if staged.exists():
        shutil.rmtree(staged)
    staged.mkdir(parents=True)
    flat = sorted(source.glob("*.ipynb"))
    if flat:
        if len(labs) != 1:
            raise SystemExit("A flat folder of notebooks needs exactly one lab: --labs LAB")
        for nb in flat:
            dest = staged / nb.stem / labs[0] / f"{labs[0]}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(nb, dest)
    else:
        shutil.copytree(source, staged, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))


def students_in(base: Path) -> list[str]:
    return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")) if base.exists() else []


def precheck(path: Path, release, result: Result) -> None:
    """Inspect (and, where safe, repair) a submission before nbgrader sees it."""
    import nbformat

    folder = path.parent
    if not path.exists():
        others = sorted(folder.glob("*.ipynb")) if folder.exists() else []
        if len(others) == 1:  # right lab, wrong file name: nbgrader would silently skip it
            shutil.copy2(others[0], path)
            result.flag("reparada", f"cuaderno renombrado: {others[0].name} -> {path.name}")
        else:
            result.flag("sin entrega")
            return
    try:
        nb = labtools.load_json_notebook(path)
        nbformat.validate(nb)
    except Exception as exc:  # invalid JSON, wrong schema, ...
        result.flag("FALLO", f"cuaderno ilegible: {type(exc).__name__}: {str(exc)[:120]}")
        return

    locked = {
        c.metadata.nbgrader["grade_id"]: c
        for c in release.cells
        if c.metadata.get("nbgrader", {}).get("locked")
    }
    present = {}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id:
            present.setdefault(grade_id, cell)
    for grade_id, original in locked.items():
        cell = present.get(grade_id)
        if cell is not None and (_public(cell.source) != _public(original.source) or cell.cell_type != original.cell_type):
            result.flag("manipulada", f"celda protegida modificada: {grade_id}")

    # Re-insert deleted test cells where the release has them, so the exercise can still be graded.
    missing = [
        c for c in release.cells
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")
        and c.metadata["nbgrader"]["grade_id"] not in present
    ]
    if missing:
        order = [c.metadata.get("nbgrader", {}).get("grade_id") for c in release.cells]
        for cell in missing:
            gid = cell.metadata["nbgrader"]["grade_id"]
            previous = order[: order.index(gid)]
            position = 0
            for prev_id in reversed(previous):
                hits = [i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == prev_id]
                if prev_id and hits:
                    position = hits[0] + 1
                    break
            nb.cells.insert(position, nbformat.from_dict(json.loads(json.dumps(cell))))
            present[gid] = cell
        result.flag("reparada", "celdas de prueba restauradas: " + ", ".join(
            c.metadata["nbgrader"]["grade_id"] for c in missing))
        labtools.write_notebook(nb, path)

    shipped = {c.source for c in release.cells if c.cell_type == "code"}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("locked") or cell.source in shipped:
            continue  # only code the student wrote or changed is scanned
        for pattern, why in SUSPICIOUS:
            match = re.search(pattern, cell.source)
            if match:
                result.flag("sospechosa", f"{why}: {match.group(0).strip()[:60]!r}")
                break


def _public(source: str) -> str:
    """A cell's source as students see it: hidden tests removed, trailing whitespace ignored.

    The instructor's own notebook (with hidden tests) then does not count as tampered.
    """
    text = labtools.strip_between(source, labtools.HIDDEN_BEGIN, labtools.HIDDEN_END)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def postcheck(autograded: Path, result: Result) -> None:
    """Read the executed notebook for interrupted cells and dead kernels."""
    if not autograded.exists():
        return
    text = autograded.read_text(encoding="utf-8", errors="replace")
    if "CellTimeoutError" in text or "Timeout waiting for" in text:
        result.flag("tiempo", "al menos una celda superó el límite de tiempo y se interrumpió")
    if "DeadKernelError" in text:
        result.flag("FALLO", "el kernel murió durante la corrección")


def read_gradebook(db_url: str, lab: str, student: str, result: Result) -> bool:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        try:
            sub = gb.find_submission(lab, student)
        except MissingEntry:
            return False
        nb = gb.find_submission_notebook(lab, lab, student)
        result.max_score = float(sub.max_score)
        auto = 0.0
        graded_any = False
        for grade in nb.grades:
            if grade.cell_type == "code" and grade.auto_score is not None:
                graded_any = True
            if grade.cell_type == "code":
                result.tests[grade.name] = None if grade.auto_score is None else float(grade.auto_score)
            score = grade.manual_score if grade.manual_score is not None else grade.auto_score
            auto += float(score or 0.0)
            if grade.needs_manual_grade and grade.cell_type == "markdown":
                result.manual_pending = True
        if not graded_any and any(g.cell_type == "code" for g in nb.grades):
            return False
        result.score = auto
        return True


# ------------------------------------------------------------------------------ reporting

FLAG_CODES = {"sin entrega": "-", "FALLO": "F", "tiempo": "T", "manipulada": "X", "reparada": "R",
              "sospechosa": "S", "manual": "m"}


def cell_text(result: Result, compact: bool = False) -> str:
    text = "—" if result.score is None else f"{result.score:g}/{result.max_score:g}"
    flags = [f for f in FLAG_ORDER if f in result.flags]
    if not flags:
        return text
    if compact:
        return text + " " + "".join(FLAG_CODES[f] for f in flags)
    return text + " [" + ", ".join(flags) + "]"


def print_table(results: list[Result], labs: list[str], students: list[str], max_width: int = 120) -> str:
    """Student × lab table; flags in words, or as one-letter codes with a legend when it gets wide."""
    by_key = {(r.student, r.lab): r for r in results}
    short = [re.sub(r"^(lab\d+).*$", r"\1", lab) for lab in labs]

    def build(compact: bool) -> list[str]:
        rows = [["alumno", *short, "total"]]
        for s in students:
            row, total, maximum = [s], 0.0, 0.0
            for lab in labs:
                r = by_key[(s, lab)]
                row.append(cell_text(r, compact))
                total += r.score or 0.0
                maximum += r.max_score
            row.append(f"{total:g}/{maximum:g}")
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return lines

    lines = build(compact=False)
    if max(len(line) for line in lines) > max_width:
        lines = build(compact=True)
        lines.append("marcas: " + "  ".join(f"{code}={name}" for name, code in FLAG_CODES.items()))
    table = "\n".join(lines)
    print(table)
    return table


# ------------------------------------------------------------------------------ main

def grade_lab(lab: str, ctx: dict) -> list[Result]:
    """Precheck, autograde, postcheck and feedback for one lab (labs may run in parallel)."""
    t0 = time.perf_counter()
    log, overrides, staged, root, db_url = ctx["log_dir"] / f"{lab}.log", ctx["overrides"], ctx["staged"], ctx["root"], ctx["db_url"]
    log.write_text("", encoding="utf-8")
    release = labtools.load_json_notebook(ctx["release_dir"] / lab / f"{lab}.ipynb")
    lab_results = []
    for student in ctx["students"]:
        r = Result(student, lab)
        precheck(staged / student / lab / f"{lab}.ipynb", release, r)
        lab_results.append(r)
    to_grade = [r for r in lab_results if "sin entrega" not in r.flags]
    if to_grade:
        code = nbgrader(["autograde", lab, "--force"], overrides, log)
        if code != 0:  # some submission failed: make sure each of the others got its chance
            for r in to_grade:
                if not read_gradebook(db_url, lab, r.student, Result(r.student, lab)):
                    nbgrader(["autograde", lab, "--force", f"--student={r.student}"], overrides, log)
    for r in lab_results:
        if "sin entrega" in r.flags:
            continue
        postcheck(root / "autograded" / r.student / lab / f"{lab}.ipynb", r)
        if not read_gradebook(db_url, lab, r.student, r):
            r.flag("FALLO", f"nbgrader no pudo corregir esta entrega (detalles en logs/{lab}.log)")
        if r.manual_pending and r.score is not None:
            r.flag("manual")
    if to_grade:
        nbgrader(["generate_feedback", lab, "--force"], overrides, log)
    ctx["say"](f"{lab}: {len(to_grade)} entregas corregidas en {time.perf_counter() - t0:.1f} s")
    return lab_results


def grade(root: Path, submitted: Path, labs: list[str], release_to_labs: bool, quiet: bool = False,
          cell_timeout: int | None = None, jobs: int = 1) -> list[Result]:
    """Grade the submissions in `submitted` inside the course root `root`, `jobs` labs at a time."""
    from concurrent.futures import ThreadPoolExecutor

    root = root.resolve()
    log_dir = root / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    # SQLite serialises writers; labs graded in parallel wait for each other's short transactions.
    db_url = "sqlite:///" + str(root / "gradebook.db") + "?timeout=120"
    staged = root / "staged"
    stage(submitted, staged, labs)
    overrides = [
        f"--CourseDirectory.root={root}",
        f"--CourseDirectory.db_url={db_url}",
        "--CourseDirectory.submitted_directory=staged",
    ]
    if cell_timeout:
        overrides.append(f"--Execute.timeout={int(cell_timeout)}")
    if not release_to_labs:
        overrides.append(f"--CourseDirectory.release_directory={root / 'release'}")
    release_dir = labtools.LABS if release_to_labs else root / "release"

    setup_log = log_dir / "nbgrader.log"
    setup_log.write_text("", encoding="utf-8")
    for lab in labs:  # releasing writes the gradebook's source cells: one lab at a time
        if nbgrader(["generate_assignment", lab, "--force"], overrides, setup_log) != 0:
            raise SystemExit(f"Could not release {lab}: see {setup_log}")

    ctx = {
        "log_dir": log_dir, "overrides": overrides, "staged": staged, "root": root, "db_url": db_url,
        "release_dir": release_dir, "students": students_in(staged),
        "say": (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True)),
    }
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        per_lab = list(pool.map(lambda lab: grade_lab(lab, ctx), labs))
    results = [r for lab_results in per_lab for r in lab_results]

    nbgrader(["export", f"--CsvExportPlugin.to={root / 'grades.csv'}"], overrides, setup_log)
    # Students with no submission at all for a lab still get a row with max scores in the report.
    for r in results:
        if r.score is None and r.max_score == 0:
            r.max_score = lab_max(release_dir, r.lab)
    report = {
        "root": str(root),
        "labs": labs,
        "students": ctx["students"],
        "results": [asdict(r) for r in results],
    }
    (root / "grading_report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return results


def lab_max(release_dir: Path, lab: str) -> float:
    nb = labtools.load_json_notebook(release_dir / lab / f"{lab}.ipynb")
    return sum(float(c.metadata.get("nbgrader", {}).get("points", 0)) for c in nb.cells
               if c.metadata.get("nbgrader", {}).get("grade"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Grade a class with nbgrader.")
    parser.add_argument("--submitted", type=Path, help="an instructor's folder of submissions")
    parser.add_argument("--root", type=Path, help="course root to grade in (default: course/ or build/grading/<DIR>)")
    parser.add_argument("--labs", nargs="*", help="labs to grade (default: all)")
    parser.add_argument("--cell-timeout", type=int, help="seconds per cell (default: nbgrader_config.py)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="labs graded at the same time (default: 2, or 1 on a single core)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    labs = args.labs or labtools.lab_names()
    unknown = [lab for lab in labs if lab not in labtools.lab_names()]
    if unknown:
        raise SystemExit(f"Unknown lab(s): {', '.join(unknown)}. Known: {', '.join(labtools.lab_names())}")
    if args.submitted:
        if not args.submitted.is_dir():
            raise SystemExit(f"{args.submitted} is not a folder")
        submitted = args.submitted.resolve()
        root = args.root or labtools.REPO / "build" / "grading" / submitted.name
        root.mkdir(parents=True, exist_ok=True)
        for stale in ("gradebook.db", "autograded", "feedback"):
            target = root / stale
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        release_to_labs = False
    else:
        root = args.root or labtools.COURSE
        submitted = root / "submitted"
        release_to_labs = root.resolve() == labtools.COURSE.resolve()
    start = time.perf_counter()
    results = grade(root, submitted, labs, release_to_labs, quiet=args.quiet, cell_timeout=args.cell_timeout, jobs=args.jobs)
    print()
    print_table(results, labs, students_in(root / "staged"))
    print()
    flagged = [r for r in results if set(r.flags) - {"manual"}]
    for r in flagged:
        print(f"- {r.student} / {r.lab}: " + "; ".join(r.notes or r.flags))
    print(f"\nNotas: {root / 'grades.csv'}   Devoluciones: {root / 'feedback'}/<alumno>/<lab>/")
    print(f"Informe: {root / 'grading_report.json'}   Registros: {root / 'logs'}/")
    print(f"Tiempo total: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
