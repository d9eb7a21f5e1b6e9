"""Stage a submission: read what the student handed in, safely, and rebuild the notebook to grade from the kit.

Reading never follows a symbolic link, never reads a special file and stops at size limits. The handed-in
files are only read; what gets graded is a new notebook:

- locked and test cells come from the kit (the instructor's source, hidden tests included), whatever the
  student's file says; a changed one is flagged "manipulada", a missing one is restored ("reparada");
- answer cells come from the student (found by their nbgrader id; a deleted, duplicated or retyped one is
  repaired from the release and flagged "reparada");
- the student's other cells keep their place after the graded cell they followed, so cells the student moved
  around are put back in the lab's order ("reparada");
- the kernelspec is the course's, outputs are dropped.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from pathlib import Path

from .files import UnsafeFile, read_regular_file
from .kit import Kit, strip_hidden

MAX_NOTEBOOK = 100 * 2**20
MAX_EXTRA_BYTES = 20 * 2**20
MAX_EXTRA_FILES = 200


@dataclasses.dataclass
class Submission:
    """One student's handed-in files for one lab, as data (so it can travel to a worker)."""

    student: str
    lab: str
    notebook: bytes | None
    extra: dict[str, bytes] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)  # what reading found (links skipped, renames)
    present: bool = False  # a notebook was handed in (even if it could not be read)
    repaired: bool = False
    timestamp: str | None = None

    @property
    def digest_parts(self) -> list[bytes]:
        parts = [self.notebook or b""]
        for name in sorted(self.extra):
            parts += [name.encode(), self.extra[name]]
        return parts


def read_folder(folder: Path, student: str, lab: str) -> Submission:
    """A submission in nbgrader's layout: <folder>/<lab>.ipynb plus the other files the student put there."""
    sub = Submission(student, lab, None)
    if not folder.is_dir() or folder.is_symlink():
        if folder.is_symlink():
            sub.notes.append(f"la carpeta {folder.name} es un enlace simbólico: no se sigue")
        return sub
    entries = sorted(os.scandir(folder), key=lambda e: e.name)
    notebooks = [e for e in entries if e.name.endswith(".ipynb") and not e.name.startswith(".")]
    chosen = next((e for e in notebooks if e.name == f"{lab}.ipynb"), None)
    if chosen is None and len(notebooks) == 1:
        chosen = notebooks[0]
        sub.notes.append(f"cuaderno renombrado: {chosen.name} -> {lab}.ipynb")
        sub.repaired = True
    if chosen is not None:
        sub.present = True
        try:
            sub.notebook = read_regular_file(Path(chosen.path), MAX_NOTEBOOK)
        except UnsafeFile as exc:
            sub.notes.append(str(exc))
    total = 0
    for entry in _walk(folder, sub):
        rel = os.path.relpath(entry.path, folder)
        if entry.name.endswith(".ipynb") or entry.name == "timestamp.txt" or len(sub.extra) >= MAX_EXTRA_FILES:
            if entry.name == "timestamp.txt":
                try:
                    sub.timestamp = read_regular_file(Path(entry.path), 1000).decode("utf-8", "replace").strip()
                except UnsafeFile:
                    pass
            continue
        try:
            data = read_regular_file(Path(entry.path), MAX_EXTRA_BYTES - total)
        except UnsafeFile as exc:
            sub.notes.append(f"{rel}: {exc}")
            continue
        total += len(data)
        sub.extra[rel] = data
    return sub


def read_flat(path: Path, student: str, lab: str) -> Submission:
    """A submission that is a single notebook (a flat folder of <student>.ipynb files)."""
    sub = Submission(student, lab, None, present=True)
    try:
        sub.notebook = read_regular_file(path, MAX_NOTEBOOK)
    except UnsafeFile as exc:
        sub.notes.append(str(exc))
    return sub


def _walk(folder: Path, sub: Submission, depth: int = 0):
    if depth > 3:
        return
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            sub.notes.append(f"{entry.name} es un enlace simbólico: no se sigue")
        elif stat.S_ISDIR(mode):
            yield from _walk(Path(entry.path), sub, depth + 1)
        elif stat.S_ISREG(mode):
            yield entry


# ---------------------------------------------------------------------------------------------- rebuild

@dataclasses.dataclass
class Staged:
    """The notebook to grade: its cells in order, and what staging found."""

    cells: list[dict]  # {"id", "type", "source", "role", "grade_id", "nbgrader", "student_changed"}
    flags: dict[str, list[str]]  # flag -> notes
    unreadable: str | None = None


def rebuild(kit: Kit, sub: Submission) -> Staged:
    staged = Staged([], {})
    if sub.notebook is None:
        return staged
    try:
        cells, repair = _student_cells(sub.notebook)
    except ValueError as exc:
        staged.unreadable = str(exc)
        return staged
    if sub.repaired:
        staged.flags.setdefault("reparada", []).extend(sub.notes)
    if repair:
        staged.flags.setdefault("reparada", []).append(repair)

    kit_ids = {c["grade_id"]: c for c in kit.cells if c["grade_id"]}
    order = [c["grade_id"] for c in kit.cells if c["grade_id"]]
    anchors: dict[str, dict] = {}
    attached: dict[str | None, list[dict]] = {}
    current: str | None = None
    duplicates, moved = [], False
    for cell in cells:
        gid = cell["grade_id"]
        if gid in kit_ids and gid not in anchors:
            if current in order and order.index(gid) < order.index(current):
                moved = True
            anchors[gid] = cell
            current = gid
            continue
        if gid in kit_ids:  # a second copy of a graded cell
            duplicates.append(gid)
            if kit_ids[gid]["role"] in ("test", "setup", "locked"):
                continue  # the lab's own copy is the one that counts
        cell = dict(cell, grade_id=None, nbgrader={})
        attached.setdefault(current, []).append(cell)
    if duplicates:
        staged.flags.setdefault("reparada", []).append("celdas duplicadas: " + ", ".join(sorted(set(duplicates))))
    if moved:
        staged.flags.setdefault("reparada", []).append("celdas cambiadas de orden: se corrigen en el orden del lab")

    restored, tampered, retyped = [], [], []
    student_sources = {c["source"] for c in cells}
    first_code_done = False
    for kc in kit.cells:
        gid = kc["grade_id"]
        if gid is None:  # an unmarked cell of the lab: the student's copy travels with the attached cells
            if kc["type"] == "code" and kc["public"] not in student_sources and not _present(kc, cells):
                staged.cells.append(_cell(kc, kc["public"], "instructor"))
                restored.append(kc["id"])
            continue
        mine = anchors.get(gid)
        role = kc["role"]
        if role in ("setup", "locked", "test"):
            if mine is None:
                restored.append(gid)
            elif mine["type"] != kc["type"] or _norm(strip_hidden(mine["source"])) != _norm(kc["public"]):
                tampered.append(gid)
            staged.cells.append(_cell(kc, kc["source"], role))
        elif role == "answer":
            if mine is None:
                restored.append(gid)
                staged.cells.append(_cell(kc, kc["public"], role, changed=False))
            elif mine["type"] != kc["type"]:
                retyped.append(gid)
                staged.cells.append(_cell(kc, kc["public"], role, changed=False))
                attached.setdefault(gid, []).insert(0, dict(mine, grade_id=None, nbgrader={}))
            else:
                staged.cells.append(_cell(kc, mine["source"], role, changed=mine["source"] != kc["public"]))
        else:  # a written answer
            source = mine["source"] if mine is not None else kc["public"]
            if mine is None:
                restored.append(gid)
            staged.cells.append(_cell(kc, source, role, changed=mine is not None and source != kc["public"]))
        if role == "setup" and not first_code_done:
            first_code_done = True
            for cell in attached.pop(None, []):  # what the student put above the setup runs after it
                staged.cells.append(_student(cell, kit))
        for cell in attached.pop(gid, []):
            staged.cells.append(_student(cell, kit))
    for leftovers in attached.values():
        staged.cells.extend(_student(c, kit) for c in leftovers)
    if tampered:
        staged.flags.setdefault("manipulada", []).append("celdas protegidas modificadas (se restauraron): "
                                                         + ", ".join(tampered))
    if restored:
        staged.flags.setdefault("reparada", []).append("celdas restauradas desde el lab: " + ", ".join(restored))
    if retyped:
        staged.flags.setdefault("reparada", []).append(
            "celdas de respuesta convertidas en texto (cuentan como no respondidas): " + ", ".join(retyped))
    _unique_ids(staged.cells)
    return staged


def _student_cells(data: bytes) -> tuple[list[dict], str | None]:
    """The notebook's cells, and what had to be repaired to read them (None: nothing).

    Bytes that are not UTF-8 (an editor that saved one cell in Latin-1) are replaced by U+FFFD and the notebook
    is graded: losing a whole submission to one accented letter in a text cell would be out of proportion. The
    repair is said (flag "reparada"); in a code cell it changes that code, which then runs as repaired.
    """
    import nbformat

    if not data.strip():
        raise ValueError("el fichero está vacío")
    repair = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", "replace")
        bad = text.count("\ufffd") - data.decode("utf-8", "ignore").count("\ufffd")
        repair = (f"el cuaderno tenía {bad} byte(s) que no son UTF-8 (el primero en la posición {exc.start}): se "
                  "sustituyeron por «\ufffd» y se corrigió así")
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # noqa: BLE001 - invalid JSON, wrong schema, binary garbage...
        raise ValueError(f"cuaderno ilegible: {type(exc).__name__}: {str(exc)[:160]}") from None
    cells = []
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(str(s) for s in source)
        meta = cell.get("metadata", {}) if isinstance(cell.get("metadata"), dict) else {}
        nbg = meta.get("nbgrader", {}) if isinstance(meta.get("nbgrader"), dict) else {}
        gid = nbg.get("grade_id") if isinstance(nbg.get("grade_id"), str) else None
        cells.append({"id": str(cell.get("id") or ""), "type": cell["cell_type"], "source": str(source),
                      "grade_id": gid, "nbgrader": nbg})
    return cells, repair


def _present(kc: dict, cells: list[dict]) -> bool:
    return any(c["id"] == kc["id"] for c in cells)


def _norm(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _cell(kc: dict, source: str, role: str, changed: bool = False) -> dict:
    return {"id": kc["id"], "type": kc["type"], "source": source, "role": role, "grade_id": kc["grade_id"],
            "nbgrader": dict(kc["nbgrader"]), "student_changed": changed}


def _student(cell: dict, kit: Kit) -> dict:
    """A cell the student owns; an unchanged instructor cell keeps its trusted role."""
    same = next((kc for kc in kit.cells if kc["grade_id"] is None and kc["type"] == cell["type"]
                 and kc["public"] == cell["source"]), None)
    role = ("instructor" if cell["type"] == "code" else "prose") if same else (
        "student" if cell["type"] == "code" else "prose")
    return {"id": cell["id"] or (same["id"] if same else ""), "type": cell["type"], "source": cell["source"],
            "role": role, "grade_id": None, "nbgrader": {}, "student_changed": same is None}


def _unique_ids(cells: list[dict]) -> None:
    """nbformat wants unique ids of 1-64 letters, digits, '-' or '_': keep good ones, number the rest."""
    seen = set()
    for index, cell in enumerate(cells):
        if not _ID.fullmatch(cell["id"] or "") or cell["id"] in seen:
            cell["id"] = f"alumno-{index:03d}"
        seen.add(cell["id"])


_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
