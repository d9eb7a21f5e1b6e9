"""`make dist`: the instructor bundle holds what it promises, leaks nothing, and grades like the repository.

The bundle is built once into a scratch folder (course/tools/dist.py). Grading "with the bundle's wheel"
means what an instructor does with it: an environment with llmlab installed from the bundle's wheel and
the course tooling (its `course` extra), running the course's grader on demo-class submissions (every lab);
the scores and flags must be those the repository's own grading gives (course/demo/<lab>.py, checked
against the repository by tests/test_grading.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile

import pytest

import hosted
from labharness import REPO, labtools

import demo_class
import dist

pytestmark = pytest.mark.slow
LABS = labtools.lab_names()
VERSION = dist.version()
# Graded with the bundle's wheel: the student with the chapter's typical mistakes (failing checks, partial
# scores) in the first and the last lab (the last one loads the shipped chat model and its adapter from the
# wheel), and the one who gets everything right in the first lab. Every lab with the repository's own code is
# test_grading.py's job; this one checks that the wheel grades the same, at a fraction of the time.
GRADED = [("diego_errores", LABS[0]), ("diego_errores", LABS[-1]), ("ana_correcta", LABS[0])]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    start = time.perf_counter()
    archive = dist.build_bundle(out)
    measured = REPO / "build" / "measurements" / "dist.json"
    measured.parent.mkdir(parents=True, exist_ok=True)
    measured.write_text(json.dumps({"bundle_s": round(time.perf_counter() - start, 1),
                                    "bundle_bytes": archive.stat().st_size}))
    folder = out / f"llmlab-curso-{VERSION}"
    return archive, folder


def test_bundle_is_versioned_and_complete(bundle):
    archive, folder = bundle
    assert archive.name == f"llmlab-curso-{VERSION}.zip"
    names = set(zipfile.ZipFile(archive).namelist())
    files = {p.relative_to(folder.parent).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert names == files  # the zip is the folder
    top = f"llmlab-curso-{VERSION}/"
    for expected in (f"cuadernos-{VERSION}.zip", f"llmlab-{VERSION}-py3-none-any.whl", "curso/nbgrader_config.py",
                     "curso/tools/mathml.py", "CORREGIR.md", "CHANGELOG.md", "SHA256SUMS"):
        assert top + expected in names, expected
    notebooks = set(zipfile.ZipFile(folder / f"cuadernos-{VERSION}.zip").namelist())
    assert notebooks == {f"labs/{lab}/{lab}.ipynb" for lab in LABS}
    for lab in LABS:  # the students' notebooks, byte for byte as released
        data = zipfile.ZipFile(folder / f"cuadernos-{VERSION}.zip").read(f"labs/{lab}/{lab}.ipynb")
        assert data == labtools.release_path(lab).read_bytes()


def test_changelog_and_instructions(bundle):
    _, folder = bundle
    changelog = (folder / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {VERSION}" in changelog and changelog.strip() != f"# llmlab {VERSION}"
    instructions = (folder / "CORREGIR.md").read_text(encoding="utf-8")
    assert "{version}" not in instructions and VERSION in instructions
    for words in ("Cómo corregir", "make grade", "Formgrader", "make grades", "sha256sum -c SHA256SUMS"):
        assert words in instructions


def test_a_version_without_changelog_entry_is_refused(tmp_path):
    (tmp_path / "CHANGELOG.md").write_text("# Cambios\n\n## 0.0.9\n\n- antes\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=f"no entry for version {VERSION}"):
        dist.changelog_entry(VERSION, tmp_path / "CHANGELOG.md")


def test_checksums_cover_every_file(bundle):
    _, folder = bundle
    listed = {}
    for line in (folder / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        listed[name] = digest
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert set(listed) == files
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


def test_bundle_holds_no_solution_and_no_hidden_test(bundle, tmp_path):
    _, folder = bundle
    assert dist.leaks(folder) == []
    # The scan can fail: the same bundle with an instructor notebook slipped into its zip.
    leaky = tmp_path / "leaky"
    shutil.copytree(folder, leaky)
    with zipfile.ZipFile(leaky / f"cuadernos-{VERSION}.zip", "a") as zf:
        zf.writestr(f"labs/{LABS[0]}/copia.ipynb", labtools.solution_path(LABS[0]).read_bytes())
    assert dist.leaks(leaky)


def test_bundled_config_loads_its_own_modules(bundle, tmp_path):
    """The nbgrader config works from the bundle: its preprocessors and math filter come with it."""
    _, folder = bundle
    code = ("from nbgrader.apps import NbGrader; from nbconvert import HTMLExporter; import sys\n"
            "a = NbGrader(); a.initialize([])\n"
            "e = HTMLExporter(config=a.config)\n"
            "import mathml, feedback; print(mathml.__file__); print(feedback.__file__)\n"
            "print(e.environment.filters['markdown2html'].__module__)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=folder / "curso", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    mathml_file, feedback_file, filter_module = proc.stdout.split()
    assert mathml_file.startswith(str(folder)) and feedback_file.startswith(str(folder))
    assert filter_module == "mathml"


def test_grading_with_the_bundle_wheel_gives_the_repository_scores(bundle, tmp_path):
    _, folder = bundle
    env = hosted.instructor_env()
    hosted.install(env, folder / f"llmlab-{VERSION}-py3-none-any.whl")
    python = env / "bin" / "python"
    # The instructor's environment only: its own bin/ first, nothing of the repository's .venv.
    environ = hosted.clean_environ(tmp_path)
    environ["PATH"] = os.pathsep.join([str(env / "bin")] + [p for p in environ["PATH"].split(os.pathsep)
                                                            if not p.startswith(str(REPO))])
    where = subprocess.run([str(python), "-c", "import llmlab; print(llmlab.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, env=environ)
    assert where.stdout.strip().startswith(str(env)), where.stdout + where.stderr  # the wheel, not the repo

    submitted = tmp_path / "entregas"
    for student, lab in GRADED:
        shutil.copytree(REPO / "course" / "submitted" / student / lab, submitted / student / lab)
    root = tmp_path / "curso"
    proc = subprocess.run(
        [str(python), str(REPO / "course" / "tools" / "grade.py"), "--submitted", str(submitted),
         "--root", str(root), "--quiet"],
        capture_output=True, text=True, cwd=tmp_path, env=environ,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((root / "grading_report.json").read_text())
    results = {(r["student"], r["lab"]): r for r in report["results"]}
    for student, lab in GRADED:
        expected, got = demo_class.load_spec(lab)[student]["expected"], results[(student, lab)]
        assert got["score"] == expected["score"], (lab, student, got)
        assert sorted(got["flags"]) == sorted(expected["flags"]), (lab, student, got["flags"])
        for test_id, points in expected.get("tests", {}).items():
            assert got["tests"][test_id] == points, (lab, student, test_id)


def test_wheel_in_bundle_is_the_one_make_wheel_builds(bundle, tmp_path):
    """Same files, same contents (wheels differ only in timestamps)."""
    _, folder = bundle
    rebuilt = dist.build_wheel(tmp_path)

    def contents(path):
        with zipfile.ZipFile(path) as zf:
            return {n: zf.read(n) for n in zf.namelist() if not n.endswith("RECORD")}

    assert contents(folder / rebuilt.name) == contents(rebuilt)

