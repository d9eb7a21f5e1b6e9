"""The course's generated material is exactly what the tools generate, and leaks nothing."""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

import build_solutions
import demo_class
import labtools
import release

LABS = labtools.lab_names()


def test_there_are_labs():
    assert "lab01-que-es-un-llm" in LABS


@pytest.mark.parametrize("lab", LABS)
def test_solution_notebook_matches_its_script(lab):
    assert build_solutions.out_of_sync(lab) == []


@pytest.fixture(scope="module")
def fresh_release(tmp_path_factory):
    out = tmp_path_factory.mktemp("release")
    release.generate(LABS, out)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS)
def test_labs_folder_is_exactly_the_release(lab, fresh_release):
    generated = {p.relative_to(fresh_release / lab): p.read_bytes() for p in (fresh_release / lab).rglob("*") if p.is_file()}
    committed = {p.relative_to(REPO / "labs" / lab): p.read_bytes() for p in (REPO / "labs" / lab).rglob("*") if p.is_file()}
    assert sorted(committed) == sorted(generated), "run `make release`"
    for name in generated:
        assert committed[name] == generated[name], f"labs/{lab}/{name} is stale: run `make release`"


@pytest.mark.parametrize("lab", LABS)
def test_release_leaks_no_solution_or_hidden_test(lab):
    assert release.leaks([lab], REPO / "labs") == []


@pytest.mark.parametrize("lab", LABS)
def test_release_has_stubs_where_solutions_were(lab):
    nb = labtools.load_json_notebook(labtools.release_path(lab))
    solution = labtools.load_json_notebook(labtools.solution_path(lab))
    buggy = {c.metadata["nbgrader"]["grade_id"]: labtools.buggy_code(c.source) for c in solution.cells
             if c.cell_type == "code" and labtools.buggy_code(c.source)}
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert answers
    for cell in answers:
        if cell.metadata.nbgrader["grade_id"] in buggy:  # find-the-bug: the buggy code instead of a stub
            assert "\n".join(buggy[cell.metadata.nbgrader["grade_id"]]) in cell.source
            assert "raise EjercicioSinHacer()" not in cell.source
        elif cell.cell_type == "code":
            assert "raise EjercicioSinHacer()" in cell.source
        else:
            assert "ESCRIBE AQUÍ TU RESPUESTA" in cell.source
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("lab", LABS)
def test_setup_cell_imports_what_the_stubs_raise(lab):
    # nbgrader's stub (course/nbgrader_config.py) raises EjercicioSinHacer: the setup cell must define it.
    nb = labtools.load_json_notebook(labtools.release_path(lab))
    setup = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "preparacion")
    assert re.search(r"^from llmlab\.checks import .*EjercicioSinHacer", setup.source, re.M | re.S)


def test_leak_scanner_would_notice_a_leak(tmp_path):
    lab = LABS[0]
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    labtools.write_notebook(nb, tmp_path / lab / f"{lab}.ipynb")  # "releasing" the solutions as they are
    assert release.leaks([lab], tmp_path)


def test_demo_class_submissions_are_current():
    assert demo_class.main(["--check"]) == 0


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + [d for extra in project["optional-dependencies"].values() for d in extra]
    names = {re.split(r"[<>=!~ \[]", d, maxsplit=1)[0].lower() for d in wanted}
    env = (REPO / "environment.yml").read_text()
    deps = env.split("dependencies:", 1)[1]
    listed = {re.split(r"[<>=!~ \[]", line.strip()[2:].strip(), maxsplit=1)[0].lower()
              for line in deps.splitlines() if line.strip().startswith("- ") and not line.strip().startswith("- pip")}
    listed -= {"python", "-e"}
    listed = {"torch" if name == "pytorch" else name for name in listed}  # conda calls torch "pytorch"
    assert names <= listed, f"missing from environment.yml: {sorted(names - listed)}"
    assert listed <= names, f"in environment.yml but not pyproject.toml: {sorted(listed - names)}"
    assert "python>=3.10" in env.replace(" ", "")


def test_nbval_sanitizers_are_valid_regexes():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "course" / "nbval_sanitize.cfg")
    assert cfg.sections()
    for section in cfg.sections():
        re.compile(cfg[section]["regex"])


def test_nbval_ignores_only_the_float32_noise_of_large_numbers():
    """A CPU that sums float32 in another order moves the second decimal of lab07's 2-bit row (9188.27,
    +6657.88 %); the sanitizer hides those decimals, and nothing of a number below 1000."""
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "course" / "nbval_sanitize.cfg")

    def clean(text):
        for section in cfg.sections():
            text = re.sub(cfg[section]["regex"], cfg[section]["replace"], text)
        return text

    assert clean("int2_g32   9188.27 +6657.88 %") == clean("int2_g32   9188.28 +6657.89 %")
    assert clean("int2_g32   9188.27 +6657.88 %") != clean("int2_g32   9189.27 +6657.88 %")
    assert clean("f32   135.96 +0.00 %") != clean("f32   135.97 +0.00 %")
