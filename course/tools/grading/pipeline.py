"""Grade a class: the stages put together, on the instructor's machine.

    release   nbgrader generate_assignment into <root>/release (never labs/), skipped when nothing changed; the
              labs that changed in one nbgrader process (generate_batch.py), each handed on as soon as it is ready
    kits      one per lab, with the reference transcript from grading the instructor's notebook (journaled)
    tasks     one per submission, on the executor; results merged as they arrive:
    merge     journal record, gradebook, autograded notebook, feedback (all atomic, this process only)
    export    grades.csv from the gradebook, grading_report.json
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from . import generate_batch, gradebook, report, stage, task
from .files import atomic_write_text, sha256, write_failure
from .journal import Journal, submission_key
from .kit import Kit, build
from .processes import start_kept
from .records import Result
from .sandbox import Limits, Sandbox


@dataclasses.dataclass
class Course:
    root: Path  # where the gradebook, autograded/, feedback/, journal/ and the report go
    course_dir: Path  # nbgrader's course folder (nbgrader_config.py)
    solutions: Path  # instructor notebooks: <solutions>/<lab>/<lab>.ipynb


def release(course: Course, labs: list[str], log) -> Iterator[str]:
    """Release the labs into <root>/release/<lab> and register them in the gradebook (nbgrader), those that changed;
    yields each lab once it is ready, in order. nbgrader releases them all in one process (generate_batch.py); its log
    goes to `log` (a text file)."""
    root = course.root
    digests, pending = {}, []
    for lab in labs:
        source = course.solutions / lab / f"{lab}.ipynb"
        digests[lab] = sha256(source.read_bytes() + b"\nas students get it")  # changes when this function does
        stamp = root / "release" / lab / ".llmlab-source"
        if stamp.exists() and stamp.read_text() == digests[lab] and (root / "gradebook.db").exists():
            yield lab
        else:
            pending.append(lab)
    if not pending:
        return
    options = [f"--CourseDirectory.root={root}", f"--CourseDirectory.db_url={gradebook.db_url(root)}",
               f"--CourseDirectory.source_directory={course.solutions}",
               f"--CourseDirectory.release_directory={root / 'release'}"]
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    log.write(f"$ nbgrader generate_assignment (one process) {' '.join(pending)}\n")
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errors:
        proc = start_kept(generate_batch.command(options, pending), cwd=course.course_dir, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=errors)
        done = []
        try:
            for line in proc.stdout:
                lab = generate_batch.released(line)
                if lab is None:
                    log.write(line)
                    continue
                _as_students_get_it(root / "release", lab)
                atomic_write_text(root / "release" / lab / ".llmlab-source", digests[lab])
                done.append(lab)
                yield lab
        finally:
            proc.stdout.close()
            code = proc.wait()
            errors.seek(0)
            nbgrader_log = errors.read()
            log.write(nbgrader_log + "\n")
    if code != 0 or len(done) < len(pending):
        lab = pending[len(done)]
        raise SystemExit(f"nbgrader no pudo publicar {lab}:\n{nbgrader_log[-4000:]}")


def _as_students_get_it(release_dir: Path, lab: str) -> None:
    """The release exactly as `make release` writes labs/ (find-the-bug cells show their buggy code)."""
    import importlib

    try:
        release_tool = importlib.import_module("release")  # course/tools/release.py, next to grade.py
    except ImportError:
        return  # the grading package used on its own: nbgrader's plain release
    release_tool.show_buggy_code([lab], release_dir)


class _Releases(threading.Thread):
    """Releases lab after lab in the background, so the first labs' tasks run while nbgrader does the rest."""

    def __init__(self, course: Course, labs: list[str]):
        super().__init__(daemon=True)
        self.course, self.labs = course, labs
        self.ready: queue.Queue = queue.Queue()  # lab names, then None; an exception if one failed
        self.seconds = 0.0

    def run(self) -> None:
        start = time.perf_counter()
        try:
            with open(self.course.root / "logs" / "nbgrader.log", "a", encoding="utf-8") as log:
                for lab in release(self.course, self.labs, log):
                    self.ready.put(lab)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            self.ready.put(exc)
        self.seconds = time.perf_counter() - start
        self.ready.put(None)


def discover(submitted: Path, labs: list[str]) -> tuple[list[str], dict[tuple[str, str], stage.Submission]]:
    """Every student and their submission of each lab (nbgrader layout, or a flat folder for one lab)."""
    flat = sorted(p for p in submitted.glob("*.ipynb") if not p.name.startswith("."))
    subs = {}
    if flat:
        if len(labs) != 1:
            raise SystemExit("!! Una carpeta plana de cuadernos (<alumno>.ipynb) es de un solo lab: di cuál, con "
                             "make grade SUBMITTED=carpeta LABS=<lab> (--labs LAB).")
        for path in flat:
            subs[(path.stem, labs[0])] = _read(stage.read_flat, path, path.stem, labs[0])
        return sorted({s for s, _ in subs}), subs
    students = sorted(p.name for p in submitted.iterdir()
                      if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")) if submitted.exists() else []
    for student in students:
        for lab in labs:
            subs[(student, lab)] = _read(stage.read_folder, submitted / student / lab, student, lab)
    return students, subs


def _read(reader, path: Path, student: str, lab: str) -> stage.Submission:
    """One submission read; whatever goes wrong reading it is that submission's FALLO, not the batch's end."""
    try:
        return reader(path, student, lab)
    except Exception as exc:  # noqa: BLE001 - odd files a student hands in: said in their result
        sub = stage.Submission(student, lab, None, present=True)
        sub.notes.append(f"la entrega no se pudo leer ({type(exc).__name__}: {str(exc)[:200]})")
        return sub


def settings(limits: Limits) -> str:
    return json.dumps(dataclasses.asdict(limits), sort_keys=True)


def grade_class(course: Course, submitted: Path, labs: list[str], executor, limits: Limits,
                fresh: bool = False, say=print) -> tuple[list[str], list[Result], dict]:
    """Grade every submission; returns (students, results, facts for the report).

    One submission going wrong (an odd file, a task that raises, a merge that fails) is that submission's
    result, never the end of the batch. Failures of the grader itself ("error del corrector") are reported and
    not journaled: the next run grades them again. Only an output folder that cannot be written stops the run
    (the caller says so; what was journaled is kept).
    """
    root = course.root
    root.mkdir(parents=True, exist_ok=True)
    (root / "logs").mkdir(exist_ok=True)
    started = time.perf_counter()
    set_aside = gradebook.set_aside_if_corrupt(root)
    if set_aside:
        say(f"!! El gradebook estaba dañado: se apartó como {set_aside.name} y se reconstruye desde el diario "
            "(las notas puestas a mano en formgrader están en esa copia).")
    sandbox = Sandbox.detect()
    if not sandbox.isolated:
        say(f"!! ATENCIÓN: se corrige SIN entorno aislado: {sandbox.reason}")
    releases = _Releases(course, labs)
    releases.start()
    options = task.Options(limits=limits, sandbox=sandbox if executor.name == "local" else None)
    journal = Journal(root)
    students, subs = discover(submitted, labs)
    kits: dict[str, Kit] = {}
    kit_digest: dict[str, str] = {}
    pending = {}
    results: dict[tuple[str, str], Result] = {}
    journaled: dict[tuple[str, str], tuple[task.Output, str | None]] = {}  # reused: checked against the gradebook
    kit_errors: dict[str, str] = {}
    reused = graded = grader_errors = 0
    sandbox_seconds, task_seconds, merge_seconds = [], [], 0.0

    def grader_error(student: str, lab: str, why: str) -> None:
        nonlocal grader_errors
        failed = Result(student, lab, max_score=kits[lab].max_score if lab in kits else 0.0)
        failed.flag("error del corrector", why)
        results[(student, lab)] = failed
        grader_errors += 1

    def start_lab(lab: str) -> None:
        """The lab is released: its kit is in the journal already, or its reference run starts now."""
        kit = build(lab, course.solutions / lab / f"{lab}.ipynb", root / "release" / lab)
        kit_digest[lab] = sha256(kit.digest + settings(limits))
        cached = None if fresh else journal.get_kit(lab, kit_digest[lab])
        if cached is not None:
            kits[lab] = Kit.from_dict(cached)
            submit_lab(lab)
        else:
            pending[executor.submit(task.kit_payload, kit.to_dict(), options)] = ("kit", lab, None)

    def submit_lab(lab: str) -> None:
        nonlocal reused
        kit_data = kits[lab].to_dict()
        for student in students:
            sub = subs[(student, lab)]
            if sub.notebook is None and not sub.present:  # nothing handed in: nothing to run
                missing = Result(student, lab, max_score=kits[lab].max_score)
                missing.flag("sin entrega", "; ".join(sub.notes) or None)
                results[(student, lab)] = missing
                continue
            try:
                key = submission_key(kit_digest[lab], sub.digest_parts, settings(limits))
                old = None if fresh else journal.get(lab, student, key)
                if old is not None:
                    results[(student, lab)] = old.result
                    journaled[(student, lab)] = (old, sub.timestamp)
                    reused += 1
                    continue
                pending[executor.submit(task.run_payload, kit_data, dataclasses.asdict(sub), options)] = (
                    "sub", lab, (student, key, sub.timestamp))
            except Exception as exc:  # noqa: BLE001 - this submission only
                if write_failure(exc):
                    raise
                grader_error(student, lab, f"error del corrector al preparar la entrega: {type(exc).__name__}: "
                                           f"{str(exc)[:200]}")

    releasing = True
    while releasing or pending:
        while releasing:  # labs nbgrader has released since we last looked
            try:
                lab = releases.ready.get_nowait() if pending else releases.ready.get()
            except queue.Empty:
                break
            if isinstance(lab, BaseException):
                raise lab
            if lab is None:
                releasing = False
            else:
                start_lab(lab)
        if not pending:
            continue
        done, _ = executor.wait_any(set(pending), timeout=0.5 if releasing else None)
        for future in done:
            kind, lab, info = pending.pop(future)
            try:
                value = executor.result(future)
            except Exception as exc:  # noqa: BLE001 - a task that raised: the grader's fault, retried next run
                value = {"error": f"{type(exc).__name__}: {str(exc)[:300]}", "raised": True}
            if kind == "kit":
                if "error" in value:  # the lab is broken, not the students: say so, grade the other labs
                    kit_errors[lab] = value["error"]
                    say(f"!! {value['error']}")
                    for student in students:
                        grader_error(student, lab, "error del corrector: la solución de referencia del profesor no "
                                                   "se pudo corregir (ver el aviso al final); se reintenta la "
                                                   "próxima vez")
                    continue
                kits[lab] = Kit.from_dict(value["kit"])
                journal.put_kit(lab, kit_digest[lab], value["kit"])
                say(f"{lab}: solución del profesor corregida ({report.count(len(kits[lab].tests), 'prueba')} "
                    "de referencia)")
                submit_lab(lab)
                continue
            student, key, timestamp = info
            if value.get("raised"):
                grader_error(student, lab, f"error del corrector: la corrección falló ({value['error']})")
                say(f"  {report.printable(student)} / {lab}: error del corrector")
                continue
            output = task.Output.from_dict(value)
            results[(student, lab)] = output.result
            if output.result.grader_error:  # not the student's: not journaled, graded again next run
                grader_errors += 1
                say(f"  {report.printable(student)} / {lab}: {report.cell_text(output.result)}")
                continue
            t0 = time.perf_counter()
            journal.put(lab, student, key, output)  # first: a crash after this line loses nothing
            try:
                merge(root, lab, student, output, timestamp)
            except Exception as exc:  # noqa: BLE001 - journaled: the gradebook catches up on the next run
                if write_failure(exc):
                    raise
                say(f"!! {report.printable(student)} / {lab}: no se pudo guardar en el gradebook "
                    f"({type(exc).__name__}: {str(exc)[:200]}); está en el diario y se reintenta al final")
                journaled[(student, lab)] = (output, timestamp)
            merge_seconds += time.perf_counter() - t0
            task_seconds.append(output.seconds)
            graded += 1
            sandbox_seconds.append(output.sandbox_seconds)
            say(f"  {report.printable(student)} / {lab}: {report.cell_text(output.result)}  ({output.seconds:.1f} s)")
    rebuilt = _catch_up(root, journaled, say)
    for (student, lab), result in results.items():
        if result.score is None and "sin entrega" in result.flags and lab in kits:
            result.max_score = kits[lab].max_score
    ordered = [results[(s, lab)] for s in students for lab in labs]
    facts = {"sandbox": {"mode": sandbox.mode, "isolated": sandbox.isolated, "reason": sandbox.reason},
             "kit_errors": kit_errors, "executor": executor.name, "workers": executor.jobs, "graded_now": graded,
             "reused_from_journal": reused, "grader_errors": grader_errors, "rebuilt_in_gradebook": rebuilt,
             "memory_bound_bytes": limits.jail_memory_bytes,
             "seconds": round(time.perf_counter() - started, 1), "release_seconds": round(releases.seconds, 1),
             "task_seconds_mean": _mean(task_seconds), "sandbox_seconds_mean": _mean(sandbox_seconds),
             "merge_seconds_mean": round(merge_seconds / graded, 3) if graded else None}
    return students, ordered, facts


def _catch_up(root: Path, journaled: dict, say) -> int:
    """The journal is the source of truth: whatever the gradebook or the files lack of it is written again."""
    entries = [(lab, student, output.result, timestamp)
               for (student, lab), (output, timestamp) in journaled.items() if "sin entrega" not in output.result.flags]
    stale = gradebook.stale(root, entries)
    for lab, student, result, timestamp in stale:
        try:
            gradebook.record(root, lab, student, result, timestamp)
        except Exception as exc:  # noqa: BLE001 - said, and tried again next run
            if write_failure(exc):
                raise
            say(f"!! {report.printable(student)} / {lab}: el gradebook no admite esta entrega "
                f"({type(exc).__name__}: {str(exc)[:200]})")
    for (student, lab), (output, _) in journaled.items():
        for folder, text, suffix in (("autograded", output.autograded, "ipynb"), ("feedback", output.feedback, "html")):
            path = root / folder / student / lab / f"{lab}.{suffix}"
            if text is not None and not path.exists():
                atomic_write_text(path, text)
    if stale:
        say(f"Gradebook al día con el diario: {report.count(len(stale), 'entrega rehecha', 'entregas rehechas')}.")
    return len(stale)


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def merge(root: Path, lab: str, student: str, output: task.Output, timestamp: str | None) -> None:
    """The trusted merge of one result: gradebook, autograded notebook and feedback (atomic files)."""
    result = output.result
    if "sin entrega" in result.flags:
        return
    gradebook.record(root, lab, student, result, timestamp)
    if output.autograded is not None:
        atomic_write_text(root / "autograded" / student / lab / f"{lab}.ipynb", output.autograded)
    if output.feedback is not None:
        atomic_write_text(root / "feedback" / student / lab / f"{lab}.html", output.feedback)
