"""Name the common mistake a wrong answer behaves like (a Spanish hint for the labs' checks).

The course keeps, for every graded exercise, a catalogue of common mistakes (the mutants of ``tests/mutants``).
``course/tools/mistake_catalog.py`` runs each of them, and the correct answer, on a few *probe* calls (the
inputs of the exercise's visible checks: the hidden tests' inputs never leave the grader) and ships the
recorded behaviour here, as ``llmlab/data/mistakes/labNN.json.gz`` (gzip: the probes carry whole input arrays).

When a visible check fails, :func:`note` runs the student's functions on the same probes and compares what
they return with the recorded outputs. It names a mistake only when

- the student's outputs equal that mistake's outputs on *every* probe (with tolerances fit for float32),
- they differ from the correct answer's outputs on some probe, and
- exactly one mistake of the catalogue (counting mistakes with the same hint once) matches.

Anything else (no catalogue, an unknown function, a probe that cannot be decoded, two candidates) gives no
hint at all: a false claim would mislead more than silence. The matching is by behaviour, never by source text.

``remember(fn)`` is called by ``llmlab.checks.checked_call``; ``note()`` by the checks when they fail.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import math
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["remember", "forget", "note", "diagnose", "candidates", "encode", "decode", "same", "load_catalogue", "CATALOGUE_DIR"]

CATALOGUE_DIR = Path(__file__).resolve().parent / "data" / "mistakes"
FORMAT = 1
# float32 carries ~7 significant digits and a sum of a few thousand terms loses ~3 of them: values closer than
# this are "the same" (a mistake that only changes the last digits cannot be told from the right answer).
RTOL, ATOL = 2e-4, 1e-6

_state: dict[str, Any] = {"last": None, "noted": None, "busy": False, "hooked": False}


# --- What is being checked ------------------------------------------------------------------------------------

def _hook_cells() -> None:
    """Forget the remembered function at the start of every notebook cell (so a stale one is never blamed)."""
    _state["hooked"] = True
    try:
        from IPython import get_ipython  # noqa: PLC0415 - only inside a kernel

        shell = get_ipython()
    except Exception:  # noqa: BLE001 - no IPython: nothing to hook
        return
    if shell is not None:
        shell.events.register("pre_run_cell", lambda *a, **k: forget())


def remember(fn: Callable[..., Any]) -> None:
    """Record the function a check is calling (``checked_call`` does it for every call)."""
    if not _state["hooked"]:
        _hook_cells()
    if not _state["busy"]:
        _state["last"] = fn


def forget() -> None:
    _state["last"] = _state["noted"] = None


def note() -> str:
    """The hint for the remembered function, as a line to append to a failure message ("" when none)."""
    fn = _state["last"]
    if fn is None or _state["busy"]:
        return ""
    noted = _state.get("noted")
    if noted is not None and noted[0] is fn:  # hidden() repeats the note of the check that failed inside it
        return noted[1]
    try:
        found = diagnose(fn)
    except Exception:  # noqa: BLE001 - a hint must never break a check
        found = None
    text = f"\n{found}" if found else ""
    _state["noted"] = (fn, text)
    return text


# --- Encoding values as JSON ------------------------------------------------------------------------------------

class Unencodable(TypeError):
    """A value the catalogue cannot hold (a model, a file, a function...)."""


def _float(v: float) -> Any:
    return v if math.isfinite(v) else repr(v)  # "nan", "inf", "-inf"


def _unfloat(v: Any) -> float:
    return float(v)


def encode(x: Any) -> dict:
    """A JSON-able description of ``x`` that keeps its type (dtype kind for arrays)."""
    if x is None:
        return {"t": "none"}
    if isinstance(x, (bool, np.bool_)):
        return {"t": "bool", "v": bool(x)}
    if isinstance(x, (int, np.integer)):
        return {"t": "int", "v": int(x)}
    if isinstance(x, (float, np.floating)):
        return {"t": "float", "v": _float(float(x))}
    if isinstance(x, str):
        return {"t": "str", "v": x}
    if isinstance(x, (list, tuple)):
        return {"t": type(x).__name__ if type(x) in (list, tuple) else "tuple", "v": [encode(e) for e in x]}
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            return {"t": "dict", "v": {k: encode(v) for k, v in x.items()}}
        if all(isinstance(k, (int, float, np.integer, np.floating)) and not isinstance(k, (bool, np.bool_)) for k in x):
            # {50: p50, 95: p95}: number keys, kept as [key, value] pairs (JSON keys are strings)
            return {"t": "numdict", "v": [[encode(k), encode(v)] for k, v in x.items()]}
        raise Unencodable("dict keys must be strings or numbers")
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise Unencodable(f"array of dtype {x.dtype}")
        values = [_float(v) if isinstance(v, float) else v for v in x.reshape(-1).tolist()]
        return {"t": "ndarray", "dtype": str(x.dtype), "shape": list(x.shape), "v": values}
    if isinstance(x, np.random.Generator):
        return {"t": "np_rng", "v": x.bit_generator.state}
    module = type(x).__module__
    if module.startswith("torch"):
        import torch  # noqa: PLC0415 - only when the value is a tensor

        if isinstance(x, torch.Tensor):
            t = x.detach().cpu()
            if t.dtype.is_complex or t.dtype == torch.bfloat16:
                t_values = t.float()
            else:
                t_values = t
            values = [_float(v) if isinstance(v, float) else v for v in t_values.reshape(-1).tolist()]
            return {"t": "tensor", "dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "v": values}
        if isinstance(x, torch.Generator):
            return {"t": "torch_rng", "v": x.get_state().tolist()}
    raise Unencodable(type(x).__name__)


def decode(d: dict, blobs: dict | None = None) -> Any:
    """The value ``encode`` described (a fresh object every time). ``{"t": "blob", "v": key}`` stands for
    ``blobs[key]``: a large array the probes of an exercise share is stored once."""
    t, v = d["t"], d.get("v")
    if t == "blob":
        return decode(blobs[v])
    if t == "none":
        return None
    if t in ("bool", "int", "str"):
        return v
    if t == "float":
        return _unfloat(v)
    if t in ("list", "tuple"):
        items = [decode(e, blobs) for e in v]
        return items if t == "list" else tuple(items)
    if t == "dict":
        return {k: decode(e, blobs) for k, e in v.items()}
    if t == "numdict":
        return {decode(k, blobs): decode(e, blobs) for k, e in v}
    if t == "ndarray":
        return np.array([_unfloat(e) if isinstance(e, str) else e for e in v], dtype=d["dtype"]).reshape(d["shape"])
    if t == "np_rng":
        g = np.random.default_rng()
        g.bit_generator.state = v
        return g
    import torch  # noqa: PLC0415

    if t == "tensor":
        values = [_unfloat(e) if isinstance(e, str) else e for e in v]
        return torch.tensor(values, dtype=getattr(torch, d["dtype"])).reshape(d["shape"])
    if t == "torch_rng":
        g = torch.Generator()
        g.set_state(torch.tensor(v, dtype=torch.uint8))
        return g
    raise ValueError(f"unknown encoded type {t!r}")


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):  # nan / inf
        a, b = float(a), float(b)
    if a == b:
        return True
    if a != a or b != b:
        return a != a and b != b
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= ATOL + RTOL * max(abs(a), abs(b))


def _sums_close(a: dict, b: dict) -> bool:
    """Sums of two summarised arrays, within float32 tolerance of the size of their terms (a sum may cancel)."""
    if not _close(a["abs"], b["abs"]):
        return False
    sa, sb, scale = (float(a["sum"]), float(b["sum"]), float(a["abs"]))
    if not (math.isfinite(sa) and math.isfinite(sb) and math.isfinite(scale)):
        return _close(a["sum"], b["sum"])
    return abs(sa - sb) <= ATOL + RTOL * scale


def same(a: dict, b: dict) -> bool:
    """Whether two encoded values are the same behaviour: same kind of value, numbers within float32 tolerance.

    Arrays and tensors compare by dtype *kind* (float32 and float64 are alike; ints are not floats).
    """
    ta, tb = a["t"], b["t"]
    if ta != tb:
        return False
    if ta in ("none",):
        return True
    if ta in ("bool", "str", "raise", "int"):
        return a["v"] == b["v"]
    if ta == "float":
        return _close(a["v"], b["v"])
    if ("sample" in a) != ("sample" in b):
        return False
    if "sample" in a:
        return a["kinds"] == b["kinds"] and a["n"] == b["n"] and same(a["sample"], b["sample"])
    if ta in ("list", "tuple"):
        return len(a["v"]) == len(b["v"]) and all(same(x, y) for x, y in zip(a["v"], b["v"]))
    if ta == "dict":
        return a["v"].keys() == b["v"].keys() and all(same(a["v"][k], b["v"][k]) for k in a["v"])
    if ta == "numdict":  # keys compared exactly, in any order (a dict's order is not part of its value)
        def by_key(pairs):
            return sorted(pairs, key=lambda kv: float(kv[0]["v"]))
        pa, pb = by_key(a["v"]), by_key(b["v"])
        return len(pa) == len(pb) and all(ka["v"] == kb["v"] and same(va, vb) for (ka, va), (kb, vb) in zip(pa, pb))
    if ta in ("ndarray", "tensor"):
        kind = {"ndarray": lambda s: np.dtype(s).kind, "tensor": lambda s: "f" if "float" in s else s[:3]}[ta]
        if kind(a["dtype"]) != kind(b["dtype"]) or a["shape"] != b["shape"] or len(a["v"]) != len(b["v"]):
            return False
        if ("sum" in a) != ("sum" in b) or ("sum" in a and not _sums_close(a, b)):
            return False
        return all(_close(x, y) for x, y in zip(a["v"], b["v"]))
    if ta == "error":
        return a["v"] == b["v"]
    return a == b


# --- Running a function on the probes ---------------------------------------------------------------------------

SAMPLE = 128


def summarised(d: dict) -> dict:
    """An encoded output with every large array cut down to 128 evenly spaced values plus its sum and the sum of
    its absolute values (enough to tell behaviours apart, and the catalogue stays small)."""
    if d["t"] in ("ndarray", "tensor") and len(d["v"]) > SAMPLE:
        values = np.array([float(e) for e in d["v"]], dtype=float)
        picked = np.linspace(0, len(values) - 1, SAMPLE).round().astype(int)
        with np.errstate(all="ignore"):
            total, size = float(values.sum()), float(np.abs(values).sum())
        return {**d, "v": [d["v"][i] for i in picked], "sum": _float(total), "abs": _float(size)}
    if d["t"] == "list" and len(d["v"]) > SAMPLE and all(e["t"] in ("int", "float") for e in d["v"]):
        kinds = sorted({e["t"] for e in d["v"]})  # a long list of numbers: summarised like an array, kept a list
        as_array = summarised({"t": "ndarray", "dtype": "float64", "shape": [len(d["v"])],
                               "v": [e["v"] for e in d["v"]]})
        return {"t": "list", "kinds": kinds, "n": len(d["v"]), "sample": as_array}
    if d["t"] in ("list", "tuple"):
        return {**d, "v": [summarised(e) for e in d["v"]]}
    if d["t"] == "dict":
        return {**d, "v": {k: summarised(e) for k, e in d["v"].items()}}
    if d["t"] == "numdict":
        return {**d, "v": [[k, summarised(e)] for k, e in d["v"]]}
    return d


def _modified(before: Any, after: Any) -> bool:
    try:
        return not same(encode(before), encode(after))
    except Unencodable:
        return False


def run_probe(functions: dict[str, Callable[..., Any]], probe: dict, blobs: dict | None = None) -> dict:
    """What ``functions[probe["call"]]`` does on the probe: its (encoded) result or exception, and whether it
    modified its inputs. Never raises."""
    fn = functions.get(probe["call"])
    if fn is None:
        return {"t": "error", "v": "missing"}
    args = [decode(a, blobs) for a in probe["args"]]
    kwargs = {k: decode(v, blobs) for k, v in probe["kwargs"].items()}
    snapshot = (copy.deepcopy(args), copy.deepcopy(kwargs))
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = fn(*args, **kwargs)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - raising is behaviour too
        name = "ValueError" if isinstance(exc, ValueError) else type(exc).__name__
        return {"t": "raise", "v": name}
    try:
        out = summarised(encode(result))
    except Unencodable as exc:
        return {"t": "error", "v": f"unencodable {exc}"}
    if _modified(snapshot, (args, kwargs)):
        return {"t": "list", "v": [out, {"t": "str", "v": "modified its input"}]}
    return out


def behaviour(functions: dict[str, Callable[..., Any]], probes: list[dict], blobs: dict | None = None) -> list[dict]:
    """The outputs of ``functions`` on every probe."""
    return [run_probe(functions, p, blobs) for p in probes]


def match(outputs: list[dict], entry: dict) -> list[dict]:
    """The mistakes of a catalogue entry whose recorded outputs equal ``outputs`` (none if they equal the
    correct answer's)."""
    correct = entry["correct"]
    if len(outputs) != len(correct):
        return []

    def rejected_alike(values):
        # Where the right answer raises, any exception is a rejection: the probes go past the visible checks (a
        # zero, a negative size), and a valid answer may reject those with another exception than the solution.
        return [c if c["t"] == "raise" and o["t"] == "raise" else o for o, c in zip(values, correct)]

    outputs = rejected_alike(outputs)
    if all(same(o, c) for o, c in zip(outputs, correct)):
        return []
    return [m for m in entry["mistakes"]
            if all(same(o, r) for o, r in zip(outputs, rejected_alike(m["outputs"])))]


def verdict(matches: list[dict]) -> str | None:
    """The hint to show for a list of matching mistakes: only when they all say the same thing."""
    hints = {m["hint"] for m in matches}
    return hints.pop() if len(hints) == 1 else None


# --- The catalogue ------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def load_catalogue(lab: str) -> dict:
    """The shipped catalogue of one lab (``labNN``), or an empty one."""
    path = CATALOGUE_DIR / f"{lab}.json.gz"
    if not path.is_file():
        return {"format": FORMAT, "exercises": {}}
    return json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))


@lru_cache(maxsize=None)
def _index() -> dict[str, list[tuple[str, str]]]:
    """function name -> [(lab, answer_id)] over every shipped catalogue."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(CATALOGUE_DIR.glob("lab*.json.gz")):
        lab = path.name.split(".")[0]
        for answer_id, entry in load_catalogue(lab)["exercises"].items():
            for name in entry["functions"]:
                found.setdefault(name, []).append((lab, answer_id))
    return found


def _parameters(fn: Any) -> list[str] | None:
    import inspect  # noqa: PLC0415

    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None


def entry_functions(entry: dict, namespace: dict) -> dict[str, Callable[..., Any]] | None:
    """The student's functions for an entry, taken by name from their namespace; None when one is missing or has
    other parameters than the exercise's (then it is not this exercise)."""
    functions = {}
    for name, params in entry["functions"].items():
        fn = namespace.get(name)
        if not callable(fn) or _parameters(fn) != params:
            return None
        functions[name] = fn
    return functions


def candidates(fn: Callable[..., Any], namespace: dict | None = None) -> list[dict]:
    """Every catalogued mistake whose outputs ``fn`` (with the other functions of its exercise, looked up by name
    in ``namespace``, by default ``fn``'s globals) reproduces on all the probes, while differing from the correct
    answer."""
    name = getattr(fn, "__name__", None)
    if namespace is None:
        namespace = getattr(fn, "__globals__", None) or {}
    namespace = {**namespace, name: fn}
    found: list[dict] = []
    _state["busy"] = True
    try:
        for lab, answer_id in _index().get(name, []):
            entry = load_catalogue(lab)["exercises"][answer_id]
            functions = entry_functions(entry, namespace)
            if functions is None:
                continue
            blobs = load_catalogue(lab).get("blobs", {})
            found += match(behaviour(functions, entry["probes"], blobs), entry)
    finally:
        _state["busy"] = False
    return found


def diagnose(fn: Callable[..., Any], namespace: dict | None = None) -> str | None:
    """The Spanish hint naming the one mistake ``fn`` behaves like (see ``candidates``); None when no mistake or
    more than one (with different hints) matches."""
    return verdict(candidates(fn, namespace))
