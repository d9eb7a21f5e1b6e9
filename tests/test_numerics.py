"""Stored outputs and grades do not depend on how this CPU rounds floats.

The solution notebooks carry outputs made on one machine. A student's laptop, Colab or a CI machine runs the same
cells with other matrix kernels, another thread count or another MKL code path, and the last bits of float32
results move. The notebook layer (nbval) runs under the machine's own defaults; this layer runs every solution
notebook again under other settings and compares with the same stored outputs, and grades part of the demo class
under another setting, expecting the same scores. Nothing here pins a setting for the rest of the suite: the
outputs must hold without `MKL_CBWR=COMPATIBLE`.

The settings:
- `OMP_NUM_THREADS` / `MKL_NUM_THREADS`: how many threads split a reduction (its summation order);
- `MKL_CBWR`: which of MKL's code paths runs (`COMPATIBLE` is the same on every x86 CPU, `AVX2` another one);
- `ATEN_CPU_CAPABILITY`: which of torch's vectorised kernels runs (`default`, `avx2`, `avx512`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from labharness import REPO, labtools

import demo_class

pytestmark = [pytest.mark.slow, pytest.mark.numerics]

# Each differs from the notebook layer's run (the machine's defaults) in threads, MKL path and torch kernels.
NUMERICS = {
    "un-hilo-compatible": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MKL_CBWR": "COMPATIBLE",
                           "ATEN_CPU_CAPABILITY": "default"},
    "avx2-dos-hilos": {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "MKL_CBWR": "AVX2",
                       "ATEN_CPU_CAPABILITY": "avx2"},
}


def _nbval(env: dict[str, str], notebooks: list[str]) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header", "-o", "addopts=",
           "--nbval", "--nbval-current-env", "--nbval-sanitize-with", str(REPO / "course" / "nbval_sanitize.cfg"),
           "--nbval-cell-timeout=600", *notebooks]
    # The optional sections on the real published model skip as when grading (NBGRADER_EXECUTION): their outputs
    # are not compared (nbval-ignore-output) and the notebook layer already runs them once; here they would only
    # add minutes.
    return subprocess.run(cmd, cwd=REPO, env={**os.environ, "NBGRADER_EXECUTION": "autograde", **env},
                          capture_output=True, text=True)


@pytest.mark.parametrize("name", NUMERICS)
def test_stored_outputs_hold_under_other_numerics(name):
    notebooks = [str(labtools.solution_path(lab).relative_to(REPO)) for lab in labtools.lab_names()]
    proc = _nbval(NUMERICS[name], notebooks)
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAILED")]
    assert proc.returncode == 0, (f"under {NUMERICS[name]} these stored outputs differ:\n" + "\n".join(failed)
                                  + "\n\n" + proc.stdout[-6000:] + proc.stderr[-2000:])
    ran = re.search(r"(\d+) passed", proc.stdout)
    assert ran and int(ran.group(1)) > len(notebooks), proc.stdout[-2000:]  # every notebook's cells really ran


def test_the_settings_reach_the_kernel(tmp_path):
    """A guard for the test above: nbval's kernels see the variables (else the second run would prove nothing)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    code = "import os, torch\nprint(os.environ.get('MKL_CBWR'), torch.get_num_threads(), torch.backends.cpu.get_cpu_capability())"
    cell = nbformat.v4.new_code_cell(code)
    cell.execution_count = 1
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="COMPATIBLE 1 DEFAULT\n")]
    nb.cells = [cell]
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    proc = _nbval(NUMERICS["un-hilo-compatible"], [str(path)])
    assert proc.returncode == 0, proc.stdout[-3000:]


# Full marks and the typical mistakes of every chapter: between them they reach every test cell with a score
# that is neither all nor nothing, where a rounding difference would show first.
STUDENTS = ("ana_correcta", "diego_errores")


def test_grades_hold_under_other_numerics(tmp_path):
    submitted = tmp_path / "entregas"
    for student in STUDENTS:
        shutil.copytree(REPO / "course" / "submitted" / student, submitted / student)
    root = tmp_path / "curso"
    env = {**os.environ, **NUMERICS["avx2-dos-hilos"]}
    proc = subprocess.run([sys.executable, str(REPO / "course" / "tools" / "grade.py"), "--submitted", str(submitted),
                           "--root", str(root)], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    report = json.loads((root / "grading_report.json").read_text())
    results = {(r["student"], r["lab"]): r for r in report["results"]}
    checked = 0
    for lab in demo_class.demo_labs():
        for student, spec in demo_class.load_spec(lab).items():
            if student not in STUDENTS:
                continue
            expected, r = spec["expected"], results[(student, lab)]
            if "score" in expected:
                assert r["score"] == expected["score"], (lab, student, r)
            for test_id, points in expected.get("tests", {}).items():
                assert r["tests"][test_id] == points, (lab, student, test_id, r["tests"])
            checked += 1
    assert checked == len(STUDENTS) * len(demo_class.demo_labs())
