"""Run a lab's code in-process, fast: for mutant tests and structural checks.

Executing a notebook through a kernel costs seconds; here the code cells of the built solution
notebook run once in a fresh module namespace (registered in sys.modules like a notebook's
`__main__`, so `llmlab.checks.reference_blocked` sees the names it binds), and then each test
cell can be re-run against a replaced answer in milliseconds.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import sys
import types
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

import labtools


def _load_lab_module(folder: str, lab: str):
    path = Path(__file__).parent / folder / f"{lab[:5]}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"{folder}_{lab[:5]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_mutants(lab: str):
    """The mutants module of a lab (tests/mutants/labNN.py: MUTANTS, REFERENCES), or None."""
    return _load_lab_module("mutants", lab)


def load_alternatives(lab: str):
    """The valid alternatives of a lab (tests/alternatives/labNN.py: ALTERNATIVES), or None."""
    return _load_lab_module("alternatives", lab)


@contextlib.contextmanager
def quiet_matplotlib():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    show = plt.show
    plt.show = lambda *a, **k: plt.close("all")
    try:
        yield
    finally:
        plt.show = show
        plt.close("all")


class LabRun:
    """A lab's solution notebook executed once; test cells can then be replayed."""

    def __init__(self, lab: str, parameters: dict | None = None):
        self.lab = lab
        self.nb = labtools.load_json_notebook(labtools.solution_path(lab))
        self.exercises = labtools.exercises(self.nb)
        self.module = self._new_module()
        with quiet_matplotlib(), contextlib.redirect_stdout(io.StringIO()):
            for cell in self.nb.cells:
                if cell.cell_type != "code":
                    continue
                self._exec(cell.source, self.module, cell.id)
                if "parameters" in cell.metadata.get("tags", []) and parameters:
                    self.module.__dict__.update(parameters)

    def _new_module(self, base: dict | None = None) -> types.ModuleType:
        module = types.ModuleType(f"__lab_{self.lab.replace('-', '_')}__")
        if base:
            module.__dict__.update({k: v for k, v in base.items() if k not in ("__name__", "__dict__")})
        return module

    @staticmethod
    def _exec(source: str, module: types.ModuleType, name: str) -> None:
        code = compile(source, f"<{name}>", "exec")
        sys.modules[module.__name__] = module
        try:
            exec(code, module.__dict__)
        finally:
            sys.modules.pop(module.__name__, None)

    def failing_tests(self, answer_id: str, replacement: str) -> list[str]:
        """Run the answer's test cells with `replacement` as the answer; return the ids that fail."""
        exercise = self.exercises[answer_id]
        module = self._new_module(self.module.__dict__)
        failed = []
        with quiet_matplotlib(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # wrong code overflows and divides by zero: that is the point
            self._exec(replacement, module, f"{answer_id}-replacement")
            for test_id, source, _points in exercise.tests:
                try:
                    self._exec(source, module, test_id)
                except Exception:  # noqa: BLE001 - any error costs the test's points
                    failed.append(test_id)
        return failed


_RUNS: dict[str, LabRun] = {}


def lab_run(lab: str) -> LabRun:
    """The lab's solution executed once per test process and shared by every file that replays its test cells
    (test_lab_mutants, test_lab_alternatives, test_mistakes_rates; conftest.py's SHARED_UNITS keeps them on one
    pytest-xdist worker). Replays run in a copy of its namespace (`failing_tests`), as they did with one run per file.
    """
    if lab not in _RUNS:
        _RUNS[lab] = LabRun(lab)
    return _RUNS[lab]


def reference_mutant(exercise: labtools.Exercise, references: dict[str, str]) -> str:
    """A 'solution' that only forwards every function of the answer cell to llmlab's reference."""
    parts = []
    for name in exercise.function_names:
        if name not in references:
            raise KeyError(f"no reference declared for {name} in {exercise.answer_id}")
        parts.append(f"def {name}(*args, **kwargs):\n    return {references[name]}(*args, **kwargs)\n")
    return "\n".join(parts)


def function_names(source: str) -> list[str]:
    return [n.name for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
