"""Generate the student release of every lab with nbgrader: solutions/<lab> -> labs/<lab>.

    python course/tools/release.py [LAB ...]          # writes labs/ (never over a student's work, see below)
    python course/tools/release.py --force [LAB ...]  # ... even over it, keeping a copy next to it
    python course/tools/release.py --to DIR           # writes DIR/<lab>/ instead (used by the tests)

nbgrader releases into a scratch folder, where find-the-bug answer cells then get their buggy code in place of
the stub (labtools.put_buggy_code); the notebooks are then copied into labs/. A notebook in labs/ that is
neither the last release written by this tool (build/release-manifest.json) nor the committed one (git) was
changed by someone, typically a student who worked in labs/: it is not overwritten unless --force (make
release FORCE=1), and then it is first copied to labs/<lab>/<lab>.copia-<date>.ipynb.

After releasing, the student notebooks are scanned: no solution or hidden-test text may remain.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import labtools
from grading import generate_batch

MANIFEST = labtools.REPO / "build" / "release-manifest.json"
BACKUP_TAG = ".copia-"


class ReleaseError(RuntimeError):
    """A lab that could not be released; the message says, in Spanish, what to do."""


def generate(labs: list[str], release_dir: Path | None = None, force: bool = False) -> list[str]:
    """Release `labs` into release_dir/<lab> (None: labs/, protected). Returns what was refused, if anything."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # nbgrader runs alembic
    refused = []
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "release"
        overrides = [
            f"--CourseDirectory.root={scratch}",
            f"--CourseDirectory.db_url=sqlite:///{scratch}/gradebook.db",
            f"--CourseDirectory.release_directory={out}",
        ]
        # Every lab in one nbgrader process (grading/generate_batch.py: its imports once, not once per lab).
        proc = subprocess.run(generate_batch.command(overrides, labs), cwd=labtools.COURSE, env=env,
                              capture_output=True, text=True)
        done = [lab for lab in map(generate_batch.released, proc.stdout.splitlines()) if lab is not None]
        for lab in done:
            show_buggy_code([lab], out)
            if release_dir is not None:
                target = Path(release_dir) / lab
                if target.exists():
                    shutil.rmtree(target)
                shutil.copytree(out / lab, target)
            else:
                refused += install(lab, out / lab, labtools.LABS / lab, force)
        if proc.returncode != 0 or len(done) < len(labs):
            lab = labs[min(len(done), len(labs) - 1)]
            raise ReleaseError(f"nbgrader no pudo generar la versión de los alumnos de {lab}:\n"
                               f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}\nRevisa solutions/{lab}/{lab}.ipynb "
                               f"(reconstrúyelo con make solutions LABS={lab}) y vuelve a ejecutar make release.")
    return refused


def install(lab: str, source: Path, target: Path, force: bool, manifest_path: Path = MANIFEST) -> list[str]:
    """Copy one lab's release into labs/, file by file, never over changes nobody released."""
    manifest = _read_manifest(manifest_path)
    refused = []
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        rel = path.relative_to(source)
        dest = target / rel
        new = path.read_bytes()
        key = f"{lab}/{rel}"
        if dest.exists() and dest.read_bytes() != new and not _released(dest, key, manifest):
            if not force:
                refused.append(_shown(dest))
                continue
            backup = dest.with_name(f"{dest.stem}{BACKUP_TAG}{time.strftime('%Y%m%d-%H%M%S')}{dest.suffix}")
            shutil.copy2(dest, backup)
            print(f"copia de seguridad: {_shown(backup)}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists() or dest.read_bytes() != new:
            dest.write_bytes(new)
        manifest[key] = _sha(new)
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return refused


def _shown(path: Path) -> str:
    return str(path.relative_to(labtools.REPO)) if path.is_relative_to(labtools.REPO) else str(path)


def _released(path: Path, key: str, manifest: dict) -> bool:
    """Is this file exactly a release: the last one this tool wrote, or the committed one?"""
    data = path.read_bytes()
    if manifest.get(key) == _sha(data):
        return True
    if not path.resolve().is_relative_to(labtools.REPO):
        return False
    try:
        committed = subprocess.run(["git", "-C", str(labtools.REPO), "show",
                                    f"HEAD:{path.resolve().relative_to(labtools.REPO)}"],
                                   capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return committed.returncode == 0 and committed.stdout == data


def _read_manifest(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def nbgrader_code_stub() -> str:
    """The stub nbgrader writes where a solution was (course/nbgrader_config.py)."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(labtools.COURSE)).load_config()
    return config.ClearSolutions.code_stub["python"]


def show_buggy_code(labs: list[str], release_dir: Path | None = None) -> None:
    """Find-the-bug exercises: the released answer cell shows the buggy code, not the stub."""
    stub = nbgrader_code_stub()
    for lab in labs:
        path = Path(release_dir or labtools.LABS) / lab / f"{lab}.ipynb"
        nb = labtools.load_json_notebook(path)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.source = labtools.put_buggy_code(cell.source, stub)
        labtools.write_notebook(nb, path)


def leaks(labs: list[str], release_dir: Path) -> list[str]:
    """Solution or hidden-test text found in the released notebooks (empty list: clean)."""
    found = []
    markers = (labtools.SOLUTION_BEGIN, labtools.SOLUTION_END, labtools.HIDDEN_BEGIN, labtools.HIDDEN_END,
               labtools.BUGGY_BEGIN, labtools.BUGGY_END)
    for lab in labs:
        folder = Path(release_dir) / lab
        secrets = labtools.secret_lines(labtools.load_json_notebook(labtools.solution_path(lab)))
        for path in sorted(folder.rglob("*")):
            if BACKUP_TAG in path.name:
                continue  # a student's own work, kept by --force: not part of the release
            if path.suffix == ".py":
                found.append(f"{path}: se publicó un guion de autor (.py), que no va en la versión de los alumnos")
            if not path.is_file() or path.suffix != ".ipynb":
                continue
            text = "\n".join(c.source for c in labtools.load_json_notebook(path).cells)
            for marker in markers:
                if marker in text:
                    found.append(f"{path}: contiene {marker!r}")
            lines = {line.strip() for line in text.splitlines()}
            for secret in sorted(secrets & lines):
                found.append(f"{path}: contiene una línea de la solución o de una prueba oculta: {secret[:70]!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Release the student notebooks.")
    parser.add_argument("labs", nargs="*")
    parser.add_argument("--to", type=Path, help="release into this folder instead of labs/")
    parser.add_argument("--force", action="store_true",
                        help="overwrite notebooks in labs/ that someone changed (a copy is kept next to each)")
    args = parser.parse_args(argv)
    labs = args.labs or labtools.lab_names()
    unknown = [lab for lab in labs if lab not in labtools.lab_names()]
    if unknown:
        print(f"!! No existe el lab {', '.join(unknown)}. Los labs son: {', '.join(labtools.lab_names())}.",
              file=sys.stderr)
        return 2
    try:
        refused = generate(labs, args.to, force=args.force)
    except ReleaseError as exc:
        print(f"!! {exc}", file=sys.stderr)
        return 1
    target = args.to or labtools.LABS
    problems = leaks(labs, target)
    if refused:
        print("\nNo se sobrescribe lo que alguien cambió en labs/ (¿trabajo de un alumno, o el botón «Generate» "
              "de una versión anterior de Formgrader?):", file=sys.stderr)
        for path in refused:
            print(f"  {path}", file=sys.stderr)
        print("Trabaja sobre una copia (make lab la crea). Para publicar de todos modos, con copia de seguridad "
              "al lado: make release FORCE=1", file=sys.stderr)
    if problems:
        print("\n!! La versión de los alumnos contiene texto que solo debe ver el profesor:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        if refused:
            print("Es un cuaderno de labs/ que no escribió make release (por ejemplo, el de nbgrader sin el código "
                  "con errores de los ejercicios de encontrar el fallo, donde quedan los bloques «### BEGIN BUGGY»). "
                  "Ejecuta make release FORCE=1: lo rehace y guarda el que había como <lab>.copia-<fecha>.ipynb "
                  "al lado.", file=sys.stderr)
        else:
            print("Revisa las marcas de esas celdas en solutions/<lab>/<lab>.py (### BEGIN/END SOLUTION, HIDDEN "
                  "TESTS, BUGGY), reconstruye con make solutions LABS=<lab> y vuelve a ejecutar make release.",
                  file=sys.stderr)
        return 1
    for lab in labs:
        print(f"{lab}: publicado en {Path(target) / lab}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
