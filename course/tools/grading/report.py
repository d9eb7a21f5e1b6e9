"""What the instructor reads: the student × lab table, the flag legend, grading_report.json.

Messages are Spanish and say numbers properly ("1 entrega corregida", "3 entregas corregidas").
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .files import atomic_write_text
from .records import FLAG_ORDER, FLAGS, Result


def count(n: int, singular: str, plural: str | None = None) -> str:
    """'1 entrega corregida', '0 entregas corregidas', '3 celdas de prueba'.

    Without an explicit plural, the words before the first preposition take the plural ending.
    """
    if plural is None:
        words, out = singular.split(), []
        for i, word in enumerate(words):
            if word in _PREPOSITIONS:
                out.extend(words[i:])
                break
            out.append(_plural_word(word))
        plural = " ".join(out)
    return f"{n} {singular if n == 1 else plural}"


_PREPOSITIONS = {"a", "con", "de", "del", "en", "para", "por", "sin"}


def _plural_word(word: str) -> str:
    if word[-1] in "aeiouáéó":
        return word + "s"
    if word.endswith("z"):
        return word[:-1] + "ces"
    if word.endswith("ón"):
        return word[:-2] + "ones"
    return word + "es"


def printable(name: str) -> str:
    """A student's name as one line of the console: newlines and other control characters written as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(name))


def cell_text(result: Result, compact: bool = False) -> str:
    text = "—" if result.score is None else f"{result.total:g}/{result.max_score:g}"
    flags = [f for f in FLAG_ORDER if f in result.flags]
    if not flags:
        return text
    if compact:
        return text + " " + "".join(FLAGS[f][0] for f in flags)
    return text + " [" + ", ".join(flags) + "]"


def table(results: list[Result], labs: list[str], students: list[str], max_width: int = 120) -> str:
    """Student × lab table; flags in words, or as one-letter codes with a legend when it gets wide."""
    by_key = {(r.student, r.lab): r for r in results}
    short = [re.sub(r"^(lab\d+).*$", r"\1", lab) for lab in labs]

    def build(compact: bool) -> list[str]:
        rows = [["alumno", *short, "total"]]
        for s in students:
            row, total, maximum = [printable(s)], 0.0, 0.0
            for lab in labs:
                r = by_key.get((s, lab)) or Result(s, lab, flags=["sin entrega"])
                row.append(cell_text(r, compact))
                total += r.total
                maximum += r.max_score
            row.append(f"{total:g}/{maximum:g}")
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return lines

    lines = build(compact=False)
    if max(len(line) for line in lines) > max_width:
        lines = build(compact=True)
        used = {f for r in results for f in r.flags}
        lines.append("marcas: " + "  ".join(f"{FLAGS[f][0]}={f}" for f in FLAG_ORDER if f in used or f in (
            "sin entrega", "FALLO", "error del corrector", "tiempo", "manipulada", "reparada", "sospechosa",
            "manual")))
    return "\n".join(lines)


def explanations(results: list[Result]) -> list[str]:
    """One line per flagged submission, saying why."""
    lines = []
    for r in sorted(results, key=lambda r: (r.student, r.lab)):
        if set(r.flags) - {"manual"}:
            lines.append(f"- {printable(r.student)} / {r.lab}: " + printable("; ".join(r.notes or r.flags)))
    return lines


def write_report(root: Path, labs: list[str], students: list[str], results: list[Result], extra: dict) -> Path:
    report = {
        "root": str(root),
        "labs": labs,
        "students": students,
        **extra,
        "flags": {name: meaning for name, (_, meaning) in FLAGS.items()},
        "results": [r.to_dict() for r in sorted(results, key=lambda r: (r.student, r.lab))],
    }
    path = Path(root) / "grading_report.json"
    atomic_write_text(path, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return path


def read_report(root: Path) -> dict | None:
    path = Path(root) / "grading_report.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
