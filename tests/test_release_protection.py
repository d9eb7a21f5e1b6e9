"""`make release` never overwrites a student's work in labs/ unless told to, and then keeps a copy."""

from __future__ import annotations


from labharness import REPO, labtools

import release

LAB = labtools.lab_names()[0]


def _release(tmp_path, text: str):
    source = tmp_path / "nuevo" / LAB
    source.mkdir(parents=True)
    (source / f"{LAB}.ipynb").write_text(text)
    return source


def test_a_notebook_last_written_by_release_is_updated(tmp_path):
    target, manifest = tmp_path / "labs" / LAB, tmp_path / "manifest.json"
    assert release.install(LAB, _release(tmp_path / "a", "v1"), target, False, manifest) == []
    assert release.install(LAB, _release(tmp_path / "b", "v2"), target, False, manifest) == []
    assert (target / f"{LAB}.ipynb").read_text() == "v2"


def test_a_changed_notebook_is_kept_unless_forced_and_then_backed_up(tmp_path):
    target, manifest = tmp_path / "labs" / LAB, tmp_path / "manifest.json"
    release.install(LAB, _release(tmp_path / "a", "v1"), target, False, manifest)
    notebook = target / f"{LAB}.ipynb"
    notebook.write_text("el trabajo de una alumna")
    refused = release.install(LAB, _release(tmp_path / "b", "v2"), target, False, manifest)
    assert refused == [str(notebook)]
    assert notebook.read_text() == "el trabajo de una alumna"
    assert release.install(LAB, _release(tmp_path / "c", "v3"), target, True, manifest) == []
    assert notebook.read_text() == "v3"
    backups = list(target.glob(f"{LAB}{release.BACKUP_TAG}*.ipynb"))
    assert [b.read_text() for b in backups] == ["el trabajo de una alumna"]


def test_a_backup_is_not_part_of_the_release(tmp_path):
    """A student's copy may hold solved exercises: the leak scan of the release skips it."""
    folder = tmp_path / LAB
    folder.mkdir()
    (folder / f"{LAB}.ipynb").write_bytes(labtools.release_path(LAB).read_bytes())
    (folder / f"{LAB}{release.BACKUP_TAG}20260101-120000.ipynb").write_bytes(labtools.solution_path(LAB).read_bytes())
    assert release.leaks([LAB], tmp_path) == []


def test_the_committed_release_counts_as_released(tmp_path):
    """A fresh clone has no manifest: the notebook as committed in git may be replaced."""
    path = labtools.release_path(LAB)
    assert release._released(path, f"{LAB}/{path.name}", {})


def test_make_lab_gives_a_working_copy_and_never_overwrites_it(tmp_path):
    import workcopy

    labs, work = tmp_path / "labs", tmp_path / "mis-labs"
    (labs / LAB).mkdir(parents=True)
    (labs / LAB / f"{LAB}.ipynb").write_text("v1")
    (labs / LAB / "datos.txt").write_text("datos")
    assert workcopy.copy_missing(labs, work) == [LAB]
    assert (work / LAB / "datos.txt").read_text() == "datos"
    (work / LAB / f"{LAB}.ipynb").write_text("el trabajo de un alumno")
    (labs / LAB / f"{LAB}.ipynb").write_text("v2")  # a new release
    assert workcopy.copy_missing(labs, work) == []
    assert (work / LAB / f"{LAB}.ipynb").read_text() == "el trabajo de un alumno"
