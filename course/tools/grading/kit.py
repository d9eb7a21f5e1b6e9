"""A lab's grading kit: everything a task needs to grade one submission of that lab, as plain data.

    cells        the instructor's source notebook, cell by cell, with each cell's role and public version
                 (test cells carry their hidden tests; answer cells their solution, used only for the kit run)
    handle_code  the setup cell's imports: what the guard binds for the tests before any student code runs
    support      the release folder's other files (data the lab reads), copied into each jail
    transcript   the instructor's own run, check by check: what every submission is compared with

The kit is built on the instructor's machine (`build`) and sent to every worker; `with_transcript` adds the
transcript once the solution has been graded like any submission (see task.grade_solution).
"""

from __future__ import annotations

import ast
import base64
import dataclasses
import json
from pathlib import Path

from .files import sha256

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
GRADER_VERSION = "llmlab-grading-3"  # part of every journal key: bump when grading semantics change


@dataclasses.dataclass
class Kit:
    lab: str
    cells: list[dict]
    handle_code: str
    handle_names: list[str]
    uses_torch: bool
    support: dict[str, bytes]
    max_score: float
    transcript: dict[str, list] | None = None

    @property
    def tests(self) -> dict[str, float]:
        return {c["grade_id"]: c["points"] for c in self.cells if c["role"] == "test"}

    @property
    def digest(self) -> str:
        """Changes whenever anything that could change a grade changes (tests, setup, support files)."""
        data = dict(self.to_dict(), transcript=None)
        return sha256(GRADER_VERSION + json.dumps(data, sort_keys=True))

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["support"] = {k: base64.b64encode(v).decode() for k, v in self.support.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Kit":
        data = dict(data)
        data["support"] = {k: base64.b64decode(v) for k, v in data["support"].items()}
        return cls(**data)


def build(lab: str, source_nb: Path, release_dir: Path) -> Kit:
    """The kit of `lab` from the instructor's notebook and the folder nbgrader released it to."""
    import nbformat

    source = nbformat.read(str(source_nb), as_version=4)
    release = nbformat.read(str(release_dir / f"{lab}.ipynb"), as_version=4)
    public = {c.metadata.get("nbgrader", {}).get("grade_id") or c.get("id"): c.source for c in release.cells}
    cells, setup = [], []
    for index, cell in enumerate(source.cells):
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        role = _role(cell.cell_type, meta)
        key = gid or cell.get("id") or f"cell-{index:03d}"
        cells.append({
            "id": cell.get("id") or key, "type": cell.cell_type, "source": cell.source, "grade_id": gid,
            "role": role, "points": float(meta.get("points", 0) or 0),
            "public": public.get(key, strip_hidden(cell.source)), "nbgrader": dict(meta),
        })
        if role == "setup":
            setup.append(cell.source)
    handle_code, handle_names = handles_from_setup(setup)
    support = {}
    for path in sorted(release_dir.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name != f"{lab}.ipynb" \
                and not any(part.startswith(".") for part in path.relative_to(release_dir).parts):
            support[str(path.relative_to(release_dir))] = path.read_bytes()
    everything = "\n".join(c.source for c in source.cells if c.cell_type == "code")
    max_score = sum(c["points"] for c in cells if c["role"] in ("test", "manual") or
                    (c["role"] == "answer" and c["nbgrader"].get("grade")))
    return Kit(lab, cells, handle_code, handle_names, "torch" in everything, support, max_score)


def _role(cell_type: str, meta: dict) -> str:
    if not meta:
        return "instructor" if cell_type == "code" else "prose"
    if meta.get("solution") and (meta.get("grade") or meta.get("task")):
        return "manual" if cell_type != "code" else "answer"
    if meta.get("task"):
        return "manual"
    if meta.get("solution"):
        return "answer"
    if meta.get("grade"):
        return "test"
    if cell_type == "code":
        return "setup"  # locked instructor code: the setup cell and any other read-only code
    return "locked"


def strip_hidden(source: str) -> str:
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == HIDDEN_BEGIN:
            inside = True
        elif line.strip() == HIDDEN_END:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def handles_from_setup(sources: list[str]) -> tuple[str, list[str]]:
    """The imports of the locked setup cells, and assignments of plain references (`REFS = (F.a, F.b)`).

    Only top-level statements that import or name existing objects: running them again in the guard's private
    namespace has no side effect beyond the imports themselves.
    """
    kept, names = [], []
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not any(a.name == "*" for a in node.names):
                kept.append(ast.unparse(node))
                names += [(a.asname or a.name).split(".")[0] for a in node.names]
            elif isinstance(node, ast.Assign) and _only_references(node.value) and all(
                    isinstance(t, ast.Name) for t in node.targets):
                kept.append(ast.unparse(node))
                names += [t.id for t in node.targets]
    return "\n".join(kept) + "\n", sorted(set(names))


def _only_references(node) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_only_references(e) for e in node.elts)
    if isinstance(node, ast.Attribute):
        return _only_references(node.value)
    return isinstance(node, (ast.Name, ast.Constant))
