"""From verdicts to a Result: points per test, flags, and the notes that explain them."""

from __future__ import annotations

from .execute import RunOutput
from .kit import Kit
from .records import Result
from .scan import ScanReport
from .stage import Staged, Submission
from .verify import TestVerdict


def result(kit: Kit, sub: Submission, staged: Staged, run: RunOutput | None, verdicts: dict[str, TestVerdict],
           scan: ScanReport, isolated: bool, sandbox_reason: str = "") -> Result:
    r = Result(sub.student, kit.lab, max_score=kit.max_score)
    if not isolated:
        r.flag("sin aislar", "corregida sin entorno aislado: " + (sandbox_reason or "bubblewrap no disponible"))
    if sub.notebook is None:
        if sub.present:
            r.flag("FALLO", "no se pudo leer el cuaderno: " + ("; ".join(sub.notes) or "?"))
        else:
            r.flag("sin entrega", "; ".join(sub.notes) or None)
        return r
    for note in sub.notes:
        if not sub.repaired or not note.startswith("cuaderno renombrado"):
            r.note(note)
    if staged.unreadable:
        r.flag("FALLO", staged.unreadable)
        return r
    for flag, notes in staged.flags.items():
        for note in notes:
            r.flag(flag, note)
    if run is None or not run.ready:  # nothing of the student's had run yet: the grader failed, not them
        r.flag("error del corrector", _why_not_run(run))
        return r
    tests = {}
    for test_id, points in kit.tests.items():
        verdict = verdicts.get(test_id) or TestVerdict(0.0, False, "no se ejecutó")
        if test_id in scan.zero and verdict.passed:
            verdict = TestVerdict(0.0, False, scan.zero[test_id], verdict.suspicious)
        tests[test_id] = verdict.points
        for reason in verdict.suspicious:
            r.flag("sospechosa", reason)
    for reason in scan.reasons:
        r.flag("sospechosa", reason)
    for record in [*(run.cells.get(-1, {}).get("records") or []), *(run.final or [])]:
        if isinstance(record, dict):
            for problem in record.get("problems") or []:
                r.flag("sospechosa", f"al final: {problem}")
            for event in record.get("events") or []:
                if isinstance(event, dict):
                    r.flag("sospechosa", str(event.get("what")))
    for cell in run.cells.values():
        for record in cell.get("records") or []:  # events reported when a test cell started (student cells)
            if isinstance(record, dict) and record.get("type") == "enter":
                for event in record.get("events") or []:
                    if isinstance(event, dict):
                        r.flag("sospechosa", str(event.get("what")))
    if any(c.get("status") == "timeout" for c in run.cells.values()):
        r.flag("tiempo", "al menos una celda superó el límite de tiempo y se interrumpió")
    if run.stop:
        cause = {"dead": "el kernel murió (os._exit, memoria, señal...)",
                 "stuck": "el kernel no atendió la interrupción (¿ignora SIGINT?) y se detuvo"}.get(
            run.stop.get("reason"), "el kernel se detuvo")
        r.flag("FALLO", f"{cause}; las pruebas que faltaban cuentan 0")
    if run.killed:
        r.flag("FALLO", f"la entrega {run.killed} y se detuvo; las pruebas que faltaban cuentan 0")
    elif run.error:
        r.flag("FALLO", f"el corrector se detuvo: {run.error[:300]}")
    r.tests = tests
    r.score = float(sum(tests.values()))
    manual = [c for c in staged.cells if c["role"] == "manual"]
    r.manual_pending = any(c.get("student_changed") for c in manual)
    if r.manual_pending:
        r.flag("manual")
    return r


def _why_not_run(run: RunOutput | None) -> str:
    if run is None:
        return "error del corrector: no se ejecutó"
    if run.killed:
        return f"error del corrector: el entorno de corrección {run.killed} antes de empezar a ejecutar la entrega"
    return f"error del corrector: no se pudo preparar la ejecución ({run.error or 'el corrector no arrancó'})"
