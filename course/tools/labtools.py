"""Shared helpers for the course tooling: where labs live and how their notebooks are built.

A lab is authored once, as a jupytext "percent" script, `solutions/<lab>/<lab>.py`, which holds
the prose, the solutions and the hidden tests. From it we build:

    solutions/<lab>/<lab>.ipynb   the nbgrader source notebook, executed, with outputs (nbval checks them)
    labs/<lab>/<lab>.ipynb        the student release, produced by `nbgrader generate_assignment`

Cell metadata in the script may be abbreviated, e.g. `nbgrader={"grade_id": "nll", "solution": true}`;
`normalize_nbgrader` fills in the rest exactly as nbgrader's "create assignment" toolbar would. The
repository address in the Colab badge and setup cell comes from pyproject.toml (see `hosting`).
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COURSE = REPO / "course"
SOLUTIONS = REPO / "solutions"
LABS = REPO / "labs"

SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
# Find-the-bug exercises: the commented-out code between these markers (right after the solution region)
# is what the release shows in place of nbgrader's stub. See `put_buggy_code`.
BUGGY_BEGIN, BUGGY_END = "### BEGIN BUGGY", "### END BUGGY"

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3"}


def lab_names() -> list[str]:
    """Every lab that has an authored source, in order (lab01-..., lab02-..., ...)."""
    return sorted(p.name for p in SOLUTIONS.glob("lab*") if (p / f"{p.name}.py").is_file())


def source_path(lab: str) -> Path:
    return SOLUTIONS / lab / f"{lab}.py"


def solution_path(lab: str) -> Path:
    return SOLUTIONS / lab / f"{lab}.ipynb"


def release_path(lab: str) -> Path:
    return LABS / lab / f"{lab}.ipynb"


def normalize_nbgrader(meta: dict, cell_type: str) -> dict:
    """Complete abbreviated nbgrader metadata (schema 3) and check it is coherent."""
    grade_id = meta.get("grade_id")
    if not grade_id or not re.fullmatch(r"[A-Za-z0-9_\-]+", grade_id):
        raise ValueError(f"nbgrader cell needs a grade_id made of letters, digits, _ or -: {meta}")
    solution = bool(meta.get("solution", False))
    grade = bool(meta.get("grade", False))
    task = bool(meta.get("task", False))
    locked = bool(meta.get("locked", grade and not solution))
    out = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": task,
    }
    if grade or task:
        if "points" not in meta:
            raise ValueError(f"graded cell {grade_id} needs 'points'")
        out["points"] = meta["points"]
    if cell_type == "markdown" and grade and not solution and not task:
        raise ValueError(f"markdown cell {grade_id} cannot be an autograder test")
    return out


def read_source(lab_or_path: str | os.PathLike) -> "nbformat.NotebookNode":  # noqa: F821
    """Read a lab's percent script into a notebook with full nbgrader metadata and stable ids."""
    import jupytext
    import nbformat

    import hosting

    path = Path(lab_or_path)
    if not path.suffix:
        path = source_path(str(lab_or_path))
    nb = jupytext.read(path, fmt="py:percent")
    nb.metadata = nbformat.from_dict(
        {"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO}
    )
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):
        meta = dict(cell.metadata)
        meta.pop("lines_to_next_cell", None)  # jupytext layout hint, not notebook content
        if "nbgrader" in meta:
            meta["nbgrader"] = normalize_nbgrader(meta["nbgrader"], cell.cell_type)
            cell_id = meta["nbgrader"]["grade_id"]
            if cell_id in seen:
                raise ValueError(f"{path.name}: duplicate grade_id {cell_id!r}")
            seen.add(cell_id)
        else:
            cell_id = f"cell-{index:03d}"
        cell.metadata = nbformat.from_dict(meta)
        cell.id = cell_id  # stable ids keep rebuilds byte-identical
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    hosting.stamp(nb, path.stem)  # the configured repository address, whatever the script says
    nbformat.validate(nb)
    return nb


def cell_sources(nb) -> list[tuple[str, str, dict]]:
    """(cell_type, source, nbgrader metadata) for every cell: what "in sync" compares."""
    return [(c.cell_type, c.source, dict(c.metadata.get("nbgrader", {}))) for c in nb.cells]


# ---------------------------------------------------------------------------- exercises

@dataclass
class Exercise:
    """An autograded answer cell and the test cells that grade it."""

    answer_id: str
    answer_source: str
    function_names: list[str]
    tests: list[tuple[str, str, float]] = field(default_factory=list)  # (grade_id, source, points)

    @property
    def points(self) -> float:
        return sum(p for _, _, p in self.tests)


def exercises(nb) -> dict[str, Exercise]:
    """Map answer grade_id -> Exercise. Test cells are named `test_<answer_id>[...]`."""
    found: dict[str, Exercise] = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
            names = [
                node.name
                for node in ast.parse(cell.source).body
                if isinstance(node, (ast.FunctionDef, ast.ClassDef))
            ]
            found[meta["grade_id"]] = Exercise(meta["grade_id"], cell.source, names)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            owner = max(
                (a for a in found if meta["grade_id"].startswith(f"test_{a}")),
                key=len,
                default=None,
            )
            if owner is None:
                raise ValueError(f"test cell {meta['grade_id']} does not name an answer cell")
            found[owner].tests.append((meta["grade_id"], cell.source, float(meta["points"])))
    return found


def strip_between(source: str, begin: str, end: str, keep_markers: bool = False) -> str:
    """Remove the lines between (and including) `begin` and `end` markers."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == begin:
            inside = True
            if keep_markers:
                out.append(line)
            continue
        if line.strip() == end:
            inside = False
            if keep_markers:
                out.append(line)
            continue
        if not inside:
            out.append(line)
    return "\n".join(out)


def buggy_code(source: str) -> list[str] | None:
    """The buggy version kept in a find-the-bug answer cell (uncommented lines), or None if it has none.

    In the source the block follows the solution region, every line commented out once:

        ### BEGIN SOLUTION
        return math.exp(total_loss / n_tokens)
        ### END SOLUTION
        ### BEGIN BUGGY
        # return math.exp(total_loss)
        ### END BUGGY
    """
    lines = source.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == BUGGY_BEGIN]
    if not starts:
        return None
    ends = [i for i, line in enumerate(lines) if line.strip() == BUGGY_END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(f"a find-the-bug cell needs exactly one {BUGGY_BEGIN} ... {BUGGY_END} block")
    out = []
    for line in lines[starts[0] + 1:ends[0]]:
        indent, rest = re.match(r"(\s*)(.*)", line).groups()
        if rest and not rest.startswith("#"):
            raise ValueError(f"every line of the {BUGGY_BEGIN} block must be commented out: {line!r}")
        text = rest[2:] if rest.startswith("# ") else rest[1:]
        out.append(indent + text if text else "")
    return out


def put_buggy_code(released_source: str, stub: str) -> str:
    """Show the buggy code instead of nbgrader's stub in a released find-the-bug cell.

    nbgrader replaced the solution region by `stub` (indented like the region); the buggy block comes right
    after it. The stub lines are swapped for the uncommented buggy lines and the block disappears.
    """
    bug = buggy_code(released_source)
    if bug is None:
        return released_source
    lines = released_source.splitlines()
    begin = next(i for i, line in enumerate(lines) if line.strip() == BUGGY_BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == BUGGY_END)
    stub_lines = [line.strip() for line in stub.split("\n")]
    start = begin - len(stub_lines)
    if start < 0 or [line.strip() for line in lines[start:begin]] != stub_lines:
        raise ValueError(f"the {BUGGY_BEGIN} block must come right after the solution region")
    return "\n".join(lines[:start] + bug + lines[end + 1:])


def secret_lines(nb, min_length: int = 20) -> set[str]:
    """Distinctive lines of solutions and hidden tests: none may appear in student material."""
    public: set[str] = set()
    secret: set[str] = set()
    for cell in nb.cells:
        src = cell.source
        public_src = strip_between(strip_between(src, SOLUTION_BEGIN, SOLUTION_END), HIDDEN_BEGIN, HIDDEN_END)
        public.update(line.strip() for line in public_src.splitlines())
        public.update(line.strip() for line in buggy_code(src) or [])  # find-the-bug code is shown on purpose
        inside = False
        for line in src.splitlines():
            s = line.strip()
            if s in (SOLUTION_BEGIN, HIDDEN_BEGIN):
                inside = True
                continue
            if s in (SOLUTION_END, HIDDEN_END):
                inside = False
                continue
            if inside and len(s) >= min_length:
                secret.add(s)
    return secret - public


def load_json_notebook(path: Path):
    import nbformat

    with open(path, encoding="utf-8") as fh:
        return nbformat.read(fh, as_version=4)


def write_notebook(nb, path: Path) -> None:
    import nbformat

    path.parent.mkdir(parents=True, exist_ok=True)
    text = nbformat.writes(nb) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def notebook_json(nb) -> str:
    return json.dumps(nb, sort_keys=True, ensure_ascii=False)
