"""Verify a run on the trusted side: which test cells really passed.

A test cell earns its points only if all of this holds:

1. it ran and ended without an error (the kernel's word: necessary, never sufficient);
2. the guard reported entering and leaving it with the cell's nonce, and found the check machinery intact
   (integrity diff, execution path) at both ends, with no tampering seen by the audit hook meanwhile;
3. its check records line up with the instructor's run (same checks, same kinds, same tolerances);
4. every check, replayed here (outside the jail, with the genuine `llmlab.checks` of this process) on the
   values recorded in the kernel, passes. Values are plain data read without running student code; a check
   whose arguments cannot be replayed (a callable, an opaque object) counts only if the instructor's run had
   the same kind of argument there and the kernel says it passed.

So a failing check that the kernel was made to report as passing (no-op checks, rebound numpy or builtins,
IPython's error display switched off, exceptions swallowed, lines skipped by a tracer) scores 0 here.
"""

from __future__ import annotations

import base64
import dataclasses
import math

OPAQUE = object()


@dataclasses.dataclass
class TestVerdict:
    points: float
    passed: bool
    why: str = ""  # for the instructor, when it did not pass
    suspicious: list[str] = dataclasses.field(default_factory=list)  # reasons to flag "sospechosa"


def verify_test(test_id: str, points: float, nonce: str, cell: dict | None,
                transcript: list[dict] | None) -> TestVerdict:
    """The verdict on one test cell. `transcript` is the instructor's records (None when building the kit)."""
    if cell is None:
        return TestVerdict(0.0, False, "no se llegó a ejecutar")
    status = cell.get("status")
    records = [r for r in cell.get("records") or [] if isinstance(r, dict) and r.get("nonce") == nonce]
    enter = next((r for r in records if r.get("type") == "enter"), None)
    leave = next((r for r in records if r.get("type") == "leave"), None)
    checks = [c for c in (leave or {}).get("checks") or [] if isinstance(c, dict)]
    suspicious = []
    for record in (enter, leave):
        for problem in (record or {}).get("problems") or []:
            suspicious.append(f"{test_id}: {problem}")
    window_events = [e for e in (leave or {}).get("events") or [] if isinstance(e, dict)]
    high = [e for e in window_events if e.get("severity") == "high"]
    suspicious += [f"{test_id}: {e.get('what')}" for e in window_events]
    if status != "ok":
        why = "superó el tiempo" if status == "timeout" else "la prueba falla"
        return TestVerdict(0.0, False, why, suspicious)
    if enter is None or leave is None or not leave.get("ok"):
        suspicious.append(f"{test_id}: la celda dice que pasó, pero sus comprobaciones no informaron de su "
                          "ejecución (¿ejecución de las pruebas manipulada?)")
        return TestVerdict(0.0, False, "sin constancia de que la prueba se ejecutara", suspicious)
    if suspicious and (high or enter.get("problems") or leave.get("problems")):
        return TestVerdict(0.0, False, "entorno de la prueba manipulado", suspicious)
    if transcript is None:  # the instructor's own run: what it recorded becomes the reference
        return TestVerdict(points, True, "", suspicious)
    why = _compare(checks, transcript)
    if why:
        suspicious.append(f"{test_id}: el kernel dio la prueba por buena, pero {why}")
        return TestVerdict(0.0, False, why, suspicious)
    return TestVerdict(points, True, "", suspicious)


def _compare(checks: list[dict], reference: list[dict]) -> str:
    """'' if every recorded check lines up with the instructor's and passes when replayed here."""
    if len(checks) != len(reference):
        return (f"se registraron {len(checks)} comprobaciones y la solución hace {len(reference)}")
    for n, (mine, ref) in enumerate(zip(checks, reference), start=1):
        if mine.get("kind") != ref.get("kind"):
            return f"la comprobación {n} es {mine.get('kind')} y debía ser {ref.get('kind')}"
        if _params(mine) != _params(ref):
            return f"la comprobación {n} ({ref.get('kind')}) usa otras tolerancias u opciones"
        if mine.get("outcome") != "ok":
            return f"la comprobación {n} ({ref.get('kind')}) falló en el kernel"
        args, kwargs = _rebuild(mine.get("args") or []), {k: _rebuild_one(v) for k, v in
                                                            (mine.get("kwargs") or {}).items()}
        if any(a is OPAQUE for a in [*args, *kwargs.values()]):
            ref_args = _rebuild(ref.get("args") or [])
            ref_kwargs = [_rebuild_one(v) for v in (ref.get("kwargs") or {}).values()]
            mine_opaque = [a is OPAQUE for a in args]
            ref_opaque = [a is OPAQUE for a in ref_args]
            if mine_opaque != ref_opaque or any(v is OPAQUE for v in kwargs.values()) != any(
                    v is OPAQUE for v in ref_kwargs):
                return f"la comprobación {n} recibió un objeto que no es un número, array o tensor corriente"
            continue  # a callable (check_raises) or the like: the kernel's word, with the integrity checks
        why = _replay(mine.get("kind"), args, kwargs)
        if why:
            return f"la comprobación {n} ({mine.get('kind')}) no se cumple al repetirla fuera: {why}"
    return ""


def _params(record: dict) -> dict:
    """Options that must match the instructor's run exactly (tolerances, kinds of exception)."""
    kwargs = record.get("kwargs") or {}
    return {k: v for k, v in kwargs.items() if k in ("atol", "rtol")}


def _replay(kind: str, args: list, kwargs: dict) -> str:
    import llmlab.checks as checks

    fn = getattr(checks, kind, None)
    if fn is None or not kind.startswith("check"):
        return f"comprobación desconocida {kind!r}"
    try:
        fn(*args, **kwargs)
    except AssertionError as exc:
        return str(exc).splitlines()[0][:200]
    except Exception as exc:  # noqa: BLE001 - a replay that crashes does not pass
        return f"{type(exc).__name__}: {str(exc)[:160]}"
    return ""


def _rebuild(values: list) -> list:
    return [_rebuild_one(v) for v in values]


def _rebuild_one(value):
    """Plain data (guard/plain.py) back into Python, NumPy and torch values. Unknown shapes are OPAQUE."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if not isinstance(value, dict) or len(value) == 0:
        return OPAQUE
    if "float" in value:
        return float(value["float"])
    if "bigint" in value:
        return int(value["bigint"])
    if "complex" in value:
        return complex(*value["complex"])
    if "list" in value or "tuple" in value:
        items = [_rebuild_one(v) for v in value.get("list", value.get("tuple")) or []]
        if value.get("len", len(items)) != len(items) or any(i is OPAQUE for i in items):
            return OPAQUE
        return items if "list" in value else tuple(items)
    if "dict" in value:
        pairs = [(_rebuild_one(k), _rebuild_one(v)) for k, v in value["dict"]]
        if any(k is OPAQUE or v is OPAQUE for k, v in pairs):
            return OPAQUE
        try:
            return dict(pairs)
        except TypeError:
            return OPAQUE
    if "type" in value:
        return _trusted_type(value["type"])
    if "nd" in value:
        array = _array(value["nd"])
        if array is OPAQUE:
            return OPAQUE
        if "npscalar" in value:
            return array.reshape(()).dtype.type(array.reshape(())[()])
        if "torch" in value:
            import torch

            tensor = torch.from_numpy(array.copy())
            return tensor.to(getattr(torch, value["torch"])) if hasattr(torch, value["torch"]) else tensor
        return array
    return OPAQUE


def _array(spec: dict):
    import numpy as np

    try:
        dtype = np.dtype(spec["dtype"])
        if dtype.kind not in "biufc":
            return OPAQUE
        data = base64.b64decode(spec["b64"], validate=True)
        shape = tuple(int(s) for s in spec["shape"])
        if math.prod(shape) * dtype.itemsize != len(data):
            return OPAQUE
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    except (KeyError, TypeError, ValueError):
        return OPAQUE


def _trusted_type(name: str):
    """A type named in a record, only from modules the checks may legitimately mention."""
    import builtins

    import numpy as np

    module, _, qual = str(name).rpartition(".")
    roots = {"builtins": builtins, "numpy": np}
    if module.split(".")[0] == "torch":
        import torch

        roots["torch"] = torch
    obj = roots.get(module.split(".")[0])
    if obj is None:
        return OPAQUE
    for part in module.split(".")[1:] + qual.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return OPAQUE
    return obj if isinstance(obj, type) else OPAQUE
