"""Build the demo class's submissions from the student release of each lab.

Each lab has a spec, course/demo/<lab>.py, defining STUDENTS: a dict from student id to what that
fictional student did. The submissions are generated from labs/<lab>/<lab>.ipynb, so they always
match the current release, and are committed under course/submitted/ so `make grade` has a class
to grade out of the box.

    python course/tools/demo_class.py            # (re)write course/submitted/
    python course/tools/demo_class.py --check    # fail if the committed submissions are stale

A student spec may contain:
    answers      "solution" (every answer cell solved), or {grade_id: code | "solution"}
    edit_cells   {grade_id: new source} for cells the student should not have touched
    delete_cells [grade_id, ...]
    prepend_code code inserted as a new cell right after the setup cell
    raw          the file's literal text (for unreadable submissions)
    expected     {"score": points, "flags": [...], "tests": {test_id: points}} checked by the tests
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import sys
from pathlib import Path

import labtools

DEMO = labtools.COURSE / "demo"
SUBMITTED = labtools.COURSE / "submitted"


def load_spec(lab: str) -> dict:
    path = DEMO / f"{lab}.py"
    spec = importlib.util.spec_from_file_location(f"demo_{lab.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.STUDENTS


def student_solution(source: str) -> str:
    """What a student who solved the cell would have written: the solution without the markers."""
    lines = [line for line in source.splitlines()
             if line.strip() not in (labtools.SOLUTION_BEGIN, labtools.SOLUTION_END)]
    return "\n".join(lines)


def build_submission(lab: str, spec: dict) -> str:
    import nbformat

    if "raw" in spec:
        return spec["raw"]
    release = labtools.load_json_notebook(labtools.release_path(lab))
    solutions = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in labtools.load_json_notebook(labtools.solution_path(lab)).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    nb = copy.deepcopy(release)
    answers = spec.get("answers", {})
    if answers == "solution":
        answers = {gid: "solution" for gid in solutions}
    unknown = set(answers) | set(spec.get("edit_cells", {})) | set(spec.get("delete_cells", []))
    unknown -= {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    if unknown:
        raise ValueError(f"{lab}: the demo spec names cells that do not exist: {sorted(unknown)}")
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            code = answers[gid]
            cell.source = student_solution(solutions[gid]) if code == "solution" else code.strip("\n")
        if gid in spec.get("edit_cells", {}):
            cell.source = spec["edit_cells"][gid].strip("\n")
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in spec.get("delete_cells", [])]
    if "prepend_code" in spec:
        at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "preparacion")
        extra = nbformat.v4.new_code_cell(spec["prepend_code"].strip("\n"))
        extra.id = "celda-del-alumno"
        nb.cells.insert(at + 1, extra)
    return nbformat.writes(nb) + "\n"


def targets(lab: str) -> dict[Path, str]:
    return {
        SUBMITTED / student / lab / f"{lab}.ipynb": build_submission(lab, spec)
        for student, spec in load_spec(lab).items()
    }


def demo_labs() -> list[str]:
    return [lab for lab in labtools.lab_names() if (DEMO / f"{lab}.py").exists()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the demo class's submissions.")
    parser.add_argument("--check", action="store_true", help="only check the committed files are current")
    args = parser.parse_args(argv)
    stale = []
    for lab in demo_labs():
        for path, text in targets(lab).items():
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != text:
                stale.append(path)
                if not args.check:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
    if args.check:
        for path in stale:
            print(f"stale demo submission: {path.relative_to(labtools.REPO)}", file=sys.stderr)
        return 1 if stale else 0
    print(f"demo class: {len(stale)} submission(s) written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
