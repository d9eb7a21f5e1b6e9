"""The pure task: (kit, submission) -> result, autograded notebook, feedback. Runs wherever an executor puts it.

    stage.rebuild -> instrument -> execute.run_job (jailed) -> verify.verify_test -> scan -> score.result

Nothing here writes outside a temporary folder of its own; the caller merges the output (gradebook.py).
`grade_solution` grades the instructor's notebook the same way to obtain the lab's reference transcript.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import time

from . import execute, feedback, scan, score, stage, verify
from .kit import Kit
from .records import Result
from .sandbox import Limits, Sandbox


@dataclasses.dataclass(frozen=True)
class Options:
    limits: Limits = Limits()
    sandbox: Sandbox | None = None  # None: detect where the task runs


@dataclasses.dataclass
class Output:
    result: Result
    autograded: str | None = None  # notebook JSON, hidden tests included (for the instructor)
    feedback: str | None = None  # HTML for the student
    seconds: float = 0.0
    sandbox_seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"result": self.result.to_dict(), "autograded": self.autograded, "feedback": self.feedback,
                "seconds": self.seconds, "sandbox_seconds": self.sandbox_seconds}

    @classmethod
    def from_dict(cls, data: dict) -> "Output":
        return cls(Result.from_dict(data["result"]), data.get("autograded"), data.get("feedback"),
                   data.get("seconds", 0.0), data.get("sandbox_seconds", 0.0))


class KitError(RuntimeError):
    """The instructor's own notebook does not pass its tests: the lab is broken, not the students."""


def grade(kit: Kit, sub: stage.Submission, options: Options) -> Output:
    start = time.perf_counter()
    staged = stage.rebuild(kit, sub)
    run, verdicts, prepared = None, {}, None
    if sub.notebook is not None and staged.unreadable is None:
        prepared = instrument(kit, staged)
        seed = dict(kit.support)
        seed.update(sub.extra)
        run = execute.run_job(prepared.job, prepared.guard, seed, options.limits, options.sandbox)
        verdicts = {gid: verify.verify_test(gid, pts, prepared.nonces[gid], run.cells.get(prepared.index[gid]),
                                            (kit.transcript or {}).get(gid) if kit.transcript is not None else None)
                    for gid, pts in kit.tests.items() if gid in prepared.nonces}
    report = scan.scan(kit, staged.cells)
    result = score.result(kit, sub, staged, run, verdicts, report, options.sandbox.isolated,
                          options.sandbox.reason)
    out = Output(result, seconds=time.perf_counter() - start, sandbox_seconds=run.wall if run else 0.0)
    if run is not None and run.ready:
        nb = autograded_notebook(kit, staged, run)
        out.autograded = json.dumps(nb, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        out.feedback = _feedback(nb, kit, result)
    return out


def grade_solution(kit: Kit, options: Options) -> Kit:
    """Grade the instructor's notebook; its check records become the kit's reference transcript."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    for c in kit.cells:
        cell = (nbformat.v4.new_code_cell if c["type"] == "code" else nbformat.v4.new_markdown_cell)(c["source"])
        cell.id = c["id"]
        if c["nbgrader"]:
            cell.metadata["nbgrader"] = c["nbgrader"]
        nb.cells.append(cell)
    sub = stage.Submission("(solución)", kit.lab, nbformat.writes(nb).encode("utf-8"))
    staged = stage.rebuild(kit, sub)
    prepared = instrument(kit, staged)
    run = execute.run_job(prepared.job, prepared.guard, dict(kit.support), options.limits, options.sandbox)
    if not run.ready:
        raise KitError(f"{kit.lab}: la solución no se pudo ejecutar: {run.error or run.killed}")
    transcript, failures = {}, []
    for gid, points in kit.tests.items():
        cell = run.cells.get(prepared.index[gid])
        verdict = verify.verify_test(gid, points, prepared.nonces[gid], cell, None)
        if not verdict.passed:
            failures.append(f"{gid} ({verdict.why}; {'; '.join(verdict.suspicious)[:300]})")
            continue
        leave = next(r for r in cell["records"] if isinstance(r, dict) and r.get("type") == "leave"
                     and r.get("nonce") == prepared.nonces[gid])
        transcript[gid] = leave["checks"]
    if failures:
        detail = "\n  ".join(failures)
        stopped = run.killed or run.error or (run.stop or {}).get("reason")
        raise KitError(f"{kit.lab}: la solución del profesor no pasa sus propias pruebas:\n  {detail}\n"
                       + (f"(la ejecución se detuvo: {stopped})\n" if stopped else "") + f"{run.stderr[-1500:]}")
    return dataclasses.replace(kit, transcript=transcript)


# ---------------------------------------------------------------------------------------------- instrument

@dataclasses.dataclass
class Prepared:
    job: dict
    guard: dict
    nonces: dict[str, str]  # test id -> nonce
    index: dict[str, int]  # test id -> position in the staged notebook


def instrument(kit: Kit, staged: stage.Staged) -> Prepared:
    """The requests the runner sends: test cells through the guard, instructor cells marked as trusted."""
    handle = f"__llmlab_{secrets.token_hex(6)}"
    cells, nonces, index, settled = [], {}, {}, False
    for i, cell in enumerate(staged.cells):
        if cell["type"] != "code" or not cell["source"].strip():
            continue
        role = cell["role"]
        if role == "test":
            nonce = secrets.token_hex(8)
            nonces[cell["grade_id"]], index[cell["grade_id"]] = nonce, i
            request = f"{handle}.run_test({nonce!r}, {cell['source']!r})"
            cells.append({"i": i, "source": request, "store_history": False})
        elif role in ("setup", "instructor"):
            spec = {"i": i, "source": cell["source"], "store_history": True, "trusted_setup": role == "setup",
                    "before": f"{handle}.trust({secrets.token_hex(8)!r}, {cell['source']!r})"}
            if role == "setup" and not settled:  # the guard's reference state: after the setup, before students
                spec["after"] = f"{handle}.settle({secrets.token_hex(8)!r})"
                settled = True
            cells.append(spec)
        else:
            cells.append({"i": i, "source": cell["source"], "store_history": True})
    guard = {"handle": handle, "handle_code": kit.handle_code, "uses_torch": kit.uses_torch,
             "final_token": secrets.token_hex(8)}
    return Prepared({"cells": cells}, guard, nonces, index)


# ---------------------------------------------------------------------------------------------- notebooks

def autograded_notebook(kit: Kit, staged: stage.Staged, run: execute.RunOutput) -> dict:
    """The graded notebook the instructor sees: trusted sources (hidden tests included) and sanitized outputs."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    count = 0
    for i, cell in enumerate(staged.cells):
        if cell["type"] == "code":
            new = nbformat.v4.new_code_cell(cell["source"])
            ran = run.cells.get(i)
            if ran is not None:
                count += 1
                new.execution_count = count
                new.outputs = feedback.sanitize_outputs(ran.get("outputs") or [])
        elif cell["type"] == "markdown":
            new = nbformat.v4.new_markdown_cell(cell["source"])
        else:
            new = nbformat.v4.new_raw_cell(cell["source"])
        new.id = cell["id"]
        if cell["nbgrader"]:
            new.metadata["nbgrader"] = dict(cell["nbgrader"])
        nb.cells.append(new)
    return nb


def _feedback(nb: dict, kit: Kit, result: Result) -> str:
    return feedback.render(nb, kit.lab, result.tests, kit.tests, result.score or 0.0, kit.max_score)


# ---------------------------------------------------------------------------------------------- payloads

_SANDBOX: Sandbox | None = None


def _options_here(options: Options) -> Options:
    """On a Dask worker the sandbox is this machine's: detect it once per worker process."""
    global _SANDBOX
    if options.sandbox is not None:
        return options
    if _SANDBOX is None:
        _SANDBOX = Sandbox.detect()
    return dataclasses.replace(options, sandbox=_SANDBOX)


def run_payload(kit: dict, submission: dict, options: Options) -> dict:
    """What executors run: plain data in, plain data out."""
    return grade(Kit.from_dict(kit), stage.Submission(**submission), _options_here(options)).to_dict()


def kit_payload(kit: dict, options: Options) -> dict:
    try:
        return {"kit": grade_solution(Kit.from_dict(kit), _options_here(options)).to_dict()}
    except KitError as exc:
        return {"error": str(exc)}
