"""The "Abrir en Colab" badge works: it opens a ref that exists, its picture is local, a failed install says what to do.

`make tag` (course/tools/dist.py --tag) creates the ref the badges open (v<version>); the test of the committed
badges fails until it has been run for this version (and the tag fetched: `git fetch --tags`).
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys

import pytest

from labharness import REPO, labtools

import dist
import hosting

LABS = labtools.lab_names()
REF = re.compile(r"https://colab\.research\.google\.com/github/[^/\s)]+/[^/\s)]+/blob/([^/\s)]+)/")


def _badge_refs() -> dict[str, set[str]]:
    """ref -> the files of labs/ and solutions/ whose badges open it (sources and built notebooks)."""
    refs: dict[str, set[str]] = {}
    for folder in ("labs", "solutions"):
        for path in sorted((REPO / folder).glob("*/*")):
            if path.suffix in (".ipynb", ".py"):
                for ref in REF.findall(path.read_text(encoding="utf-8")):
                    refs.setdefault(ref, set()).add(str(path.relative_to(REPO)))
    return refs


def _git(*args, cwd=REPO):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def test_every_badge_opens_a_ref_of_this_repository():
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout (a bundle): nothing to resolve the refs in")
    if not _git("tag", "--list").stdout.strip():
        pytest.skip("this clone carries no tags (git fetch --tags): the version tags the badges open cannot be looked up")
    refs = _badge_refs()
    assert len({p for files in refs.values() for p in files}) >= 2 * len(LABS)  # every lab, source and built
    missing = {ref: sorted(files)[:3] for ref, files in refs.items()
               if ref != "main" and _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0}
    assert not missing, f"badges open refs that do not exist (run `make tag`, or `git fetch --tags`): {missing}"


def test_the_badge_picture_is_local():
    nb = labtools.read_source(LABS[0])
    nb.cells[0].source = nb.cells[0].source.replace(hosting.badge_image(), hosting.EXTERNAL_BADGE)
    assert hosting.stamp(nb, LABS[0]) and hosting.EXTERNAL_BADGE not in nb.cells[0].source
    url = hosting.settings().colab_url(LABS[0])
    assert f"[![Abrir en Colab]({hosting.badge_image()})]({url})" in nb.cells[0].source
    assert hosting.badge_image().startswith("data:image/svg+xml;base64,")
    assert hosting.stamp(nb, LABS[0]) == []  # idempotent


@pytest.mark.parametrize("lab", LABS)
def test_released_notebooks_carry_no_external_picture(lab):
    for path in (labtools.solution_path(lab), labtools.release_path(lab)):
        assert hosting.EXTERNAL_BADGE not in labtools.load_json_notebook(path).cells[0].source, \
            f"{path}: run `make release`"


def test_a_failed_wheel_install_names_llmlab_wheel(monkeypatch):
    monkeypatch.setattr("importlib.metadata.version", lambda name: "0.0.1")
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: subprocess.CompletedProcess(argv, 1, "", "404"))
    monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    with pytest.raises(RuntimeError) as error, contextlib.redirect_stdout(io.StringIO()):
        exec(hosting.colab_block(hosting.settings()), {"sys": sys})
    message = str(error.value)
    assert "No se pudo instalar llmlab" in message and "LLMLAB_WHEEL" in message and "vuelve a ejecutar" in message


def _tiny_repo(tmp_path):
    repo = tmp_path / "curso"
    (repo / "labs").mkdir(parents=True)
    (repo / "labs" / "a.txt").write_text("a\n")
    shutil.copy2(REPO / "pyproject.toml", repo / "pyproject.toml")
    for args in (("init", "-q"), ("add", "-A"),
                 ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")):
        assert _git(*args, cwd=repo).returncode == 0
    return repo


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_make_tag_creates_the_badges_ref_once(tmp_path, monkeypatch):
    repo = _tiny_repo(tmp_path)
    monkeypatch.setattr(labtools, "REPO", repo)
    monkeypatch.setenv("GIT_COMMITTER_NAME", "t")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@t")
    ref = hosting.settings().ref
    assert dist.tag() == ref
    assert _git("rev-parse", f"{ref}^{{commit}}", cwd=repo).stdout == _git("rev-parse", "HEAD", cwd=repo).stdout
    assert dist.tag() == ref  # again on the same commit: nothing to do
    (repo / "labs" / "a.txt").write_text("changed\n")
    with pytest.raises(SystemExit, match="sin confirmar"):
        dist.tag()
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two", cwd=repo)
    with pytest.raises(SystemExit, match="ya existe en otro commit"):
        dist.tag()
