"""The grading journal: one file per finished submission, written atomically as soon as it is known.

    <root>/journal/<lab>/<student>.json   {"key": ..., "output": task.Output.to_dict()}
    <root>/journal/kits/<lab>.json         {"key": ..., "kit": Kit.to_dict()}  (with the reference transcript)

A record counts only if its key matches: the key hashes everything that decides a grade (the lab's kit, the
submitted files, the limits, the grader's version). A run that was killed resumes by skipping every submission
whose record is there and current; changing a test or a submission re-grades exactly what it affects.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .files import atomic_write_text, sha256
from .kit import GRADER_VERSION
from .records import Result
from .task import Output

_SAFE = re.compile(r"[A-Za-z0-9._-]{1,100}")


def submission_key(kit_digest: str, parts: list[bytes], settings: str) -> str:
    h = sha256(GRADER_VERSION + kit_digest + settings)
    for part in parts:
        h = sha256(h.encode() + sha256(part).encode())
    return h


class Journal:
    def __init__(self, root: Path):
        self.dir = Path(root) / "journal"

    def _path(self, lab: str, student: str) -> Path:
        name = student if _SAFE.fullmatch(student) and not student.startswith(".") else "_" + sha256(student)[:32]
        return self.dir / lab / f"{name}.json"

    def get(self, lab: str, student: str, key: str) -> Output | None:
        data = _read(self._path(lab, student))
        if not data or data.get("key") != key or data.get("student") != student:
            return None
        try:
            return Output.from_dict(data["output"])
        except (KeyError, TypeError):
            return None

    def put(self, lab: str, student: str, key: str, output: Output) -> None:
        record = {"key": key, "student": student, "lab": lab, "output": output.to_dict()}
        atomic_write_text(self._path(lab, student), json.dumps(record, ensure_ascii=False))

    def results(self, labs: list[str] | None = None) -> list[Result]:
        """Every journaled result (the latest grading of each submission), for rebuilding what derives from them."""
        out = []
        for path in sorted(self.dir.glob("*/*.json")) if self.dir.is_dir() else []:
            if path.parent.name == "kits" or (labs and path.parent.name not in labs):
                continue
            data = _read(path)
            try:
                result = Output.from_dict(data["output"]).result
            except (KeyError, TypeError, ValueError):
                continue
            if result.lab == path.parent.name and result.student == data.get("student"):
                out.append(result)
        return out

    def get_kit(self, lab: str, key: str) -> dict | None:
        data = _read(self.dir / "kits" / f"{lab}.json")
        return data["kit"] if data and data.get("key") == key else None

    def put_kit(self, lab: str, key: str, kit: dict) -> None:
        atomic_write_text(self.dir / "kits" / f"{lab}.json", json.dumps({"key": key, "kit": kit}))


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
