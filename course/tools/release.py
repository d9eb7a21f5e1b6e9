"""Generate the student release of every lab with nbgrader: solutions/<lab> -> labs/<lab>.

    python course/tools/release.py [LAB ...]          # writes labs/
    python course/tools/release.py --to DIR           # writes DIR/<lab>/ instead (used by the tests)

Find-the-bug answer cells then show their buggy code in place of the stub (labtools.put_buggy_code). After
releasing, the student notebooks are scanned: no solution or hidden-test text may remain.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import labtools


def generate(labs: list[str], release_dir: Path | None = None) -> None:
    """Run `nbgrader generate_assignment` for each lab (release_dir None means labs/)."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # nbgrader runs alembic
    with tempfile.TemporaryDirectory() as scratch:
        overrides = []
        if release_dir is not None:
            overrides = [
                f"--CourseDirectory.root={scratch}",
                f"--CourseDirectory.db_url=sqlite:///{scratch}/gradebook.db",
                f"--CourseDirectory.release_directory={Path(release_dir).resolve()}",
            ]
        for lab in labs:
            proc = subprocess.run(
                [sys.executable, "-m", "nbgrader", "generate_assignment", lab, "--force", *overrides],
                cwd=labtools.COURSE, env=env, capture_output=True, text=True,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"nbgrader could not release {lab}:\n{proc.stdout}\n{proc.stderr}")
    show_buggy_code(labs, release_dir)


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
            if path.suffix == ".py":
                found.append(f"{path}: authoring script released")
            if not path.is_file() or path.suffix != ".ipynb":
                continue
            text = "\n".join(c.source for c in labtools.load_json_notebook(path).cells)
            for marker in markers:
                if marker in text:
                    found.append(f"{path}: contains {marker!r}")
            lines = {line.strip() for line in text.splitlines()}
            for secret in sorted(secrets & lines):
                found.append(f"{path}: contains solution/hidden line {secret[:70]!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Release the student notebooks.")
    parser.add_argument("labs", nargs="*")
    parser.add_argument("--to", type=Path, help="release into this folder instead of labs/")
    args = parser.parse_args(argv)
    labs = args.labs or labtools.lab_names()
    generate(labs, args.to)
    target = args.to or labtools.LABS
    problems = leaks(labs, target)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    for lab in labs:
        print(f"{lab}: released to {Path(target) / lab}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
