"""Which exercise of a lab the browser test answers, with which wrong answer, and what the check must say.

For the first exercise of the lab (so every cell above it runs without an unsolved exercise in the
way), the wrong answer is the first of its mutants (tests/mutants/labNN.py: a chapter's common
mistake) that the *visible* check catches, i.e. the check a student runs in their notebook. The check
runs in-process first: its Spanish message is what the browser must then show, word for word.
"""

from __future__ import annotations

import contextlib
import io
import types
import warnings
from dataclasses import dataclass

from labharness import LabRun, labtools, load_mutants, quiet_matplotlib


@dataclass(frozen=True)
class Attempt:
    lab: str
    answer_id: str
    test_id: str  # the check cell run after the answer
    mistake: str  # the mutant's name
    wrong: str  # the mutant's code, typed into the answer cell
    right: str  # the solution, as a student would type it
    message: str  # first line of what the visible check says about the wrong answer


def student_code(source: str) -> str:
    """The solution cell without nbgrader's markers: what a student who solved it writes."""
    markers = (labtools.SOLUTION_BEGIN, labtools.SOLUTION_END)
    return "\n".join(line for line in source.splitlines() if line.strip() not in markers)


def _visible(nb, grade_id: str) -> str:
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _namespace(lab: str, base: dict | None = None) -> types.ModuleType:
    """A notebook-like module namespace (LabRun._exec registers it in sys.modules while code runs)."""
    module = types.ModuleType(f"__browser_{lab.replace('-', '_')}__")
    module.__dict__.update({k: v for k, v in (base or {}).items() if k not in ("__name__", "__dict__")})
    return module


def first_attempt(lab: str) -> Attempt:
    solution = labtools.load_json_notebook(labtools.solution_path(lab))
    release = labtools.load_json_notebook(labtools.release_path(lab))
    first = next(iter(labtools.exercises(solution).values()))
    mutants = load_mutants(lab).MUTANTS[first.answer_id]
    module = _namespace(lab)
    with quiet_matplotlib(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in solution.cells:  # everything above the exercise, as the notebook runs it
            if cell.metadata.get("nbgrader", {}).get("grade_id") == first.answer_id:
                break
            if cell.cell_type == "code":
                LabRun._exec(cell.source, module, cell.id)
        for name, code in mutants.items():
            for test_id, _source, _points in first.tests:
                namespace = _namespace(lab, module.__dict__)
                LabRun._exec(code, namespace, "mutant")
                try:
                    LabRun._exec(_visible(release, test_id), namespace, test_id)
                except AssertionError as error:
                    return Attempt(lab, first.answer_id, test_id, name, code.strip("\n"),
                                   student_code(first.answer_source), str(error).splitlines()[0])
    raise AssertionError(f"{lab}: no mutant of {first.answer_id} is caught by its visible check")
