"""The records that travel between stages: what a submission earned and why.

A `Result` is what one graded submission (one student, one lab) comes to. It is plain data (JSON round trip
with `to_dict`/`from_dict`), so it can come back from a Dask worker, be journaled, and be merged later.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

# Flags, in the order the table shows them. Their meaning, for the instructor:
FLAGS = {
    "sin entrega": ("-", "no hay cuaderno de este lab"),
    "FALLO": ("F", "no se pudo corregir (del todo): cuaderno ilegible, kernel muerto, límite total superado"),
    "error del corrector": ("E", "falló el corrector, no la entrega (su entorno, su guardián, la solución de "
                                 "referencia): no se guarda como nota; se vuelve a corregir en la próxima ejecución"),
    "tiempo": ("T", "una celda superó el límite de tiempo y se interrumpió"),
    "manipulada": ("X", "editó una celda protegida: se restauró la original antes de corregir"),
    "reparada": ("R", "borró, duplicó, movió o cambió de tipo celdas: se reconstruyó desde el lab"),
    "sospechosa": ("S", "código que manipula las comprobaciones o el entorno: revísala a mano"),
    "manual": ("m", "respuestas razonadas pendientes de nota manual (formgrader)"),
    "sin aislar": ("!", "corregida SIN entorno aislado (bubblewrap no disponible): el código del alumno corrió "
                        "con acceso a esta máquina"),
}
FLAG_ORDER = list(FLAGS)


@dataclass
class Result:
    """The outcome of grading one submission."""

    student: str
    lab: str
    score: float | None = None  # autograded points (None: could not be graded)
    max_score: float = 0.0  # every graded cell, manual answers included
    manual_pending: bool = False
    manual_score: float | None = None  # points entered by hand in formgrader (from the gradebook)
    flags: list[str] = field(default_factory=list)
    tests: dict[str, float | None] = field(default_factory=dict)  # test cell id -> points earned
    notes: list[str] = field(default_factory=list)
    evidence: dict[str, list[str]] = field(default_factory=dict)  # flag -> what raised it (the report keeps it)

    def flag(self, name: str, note: str | None = None) -> None:
        if name not in FLAGS:
            raise ValueError(f"unknown flag {name!r}")
        if name not in self.flags:
            self.flags.append(name)
        if note and note not in self.notes:
            self.notes.append(note)
        if note:
            kept = self.evidence.setdefault(name, [])
            if note not in kept and len(kept) < 50:
                kept.append(note)

    @property
    def grader_error(self) -> bool:
        """The grader failed, not the submission: never journaled as final, graded again next run."""
        return "error del corrector" in self.flags

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    @property
    def total(self) -> float:
        """Autograded plus manual points: what the student has so far."""
        return (self.score or 0.0) + (self.manual_score or 0.0)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["flags"] = [f for f in FLAG_ORDER if f in self.flags]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Result":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
