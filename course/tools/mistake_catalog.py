"""Build the catalogue of common mistakes that the labs' checks name: ``llmlab/data/mistakes/labNN.json.gz``.

For every graded exercise of a lab:

1. the probes are the calls its *visible* checks make to the student's functions (recorded while the checks run
   on the solution; the hidden tests are never looked at, so nothing of them ships);
2. the correct answer and every mutant of ``tests/mutants/labNN.py`` (each a named common mistake) run on those
   probes, twice: a probe on which the solution is not deterministic is dropped, and so is a mutant that is not;
3. the outputs are stored, with the Spanish hint of each mutant: ``HINTS[answer_id][name]`` in the mutants file
   when it has one, otherwise a sentence built from the mutant's (Spanish) name.

Mutants that behave like the solution on every probe are left out (they cannot be told apart). The file records
a fingerprint of what it was built from (``sources``); ``tests/test_mistakes.py`` checks it is current.

    python course/tools/mistake_catalog.py [lab01 ...]      # or: make -o .venv/.installed mistakes
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import inspect
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "course" / "tools")]

import labtools  # noqa: E402
from llmlab import mistakes  # noqa: E402

# Bump when a change here changes what a catalogue holds (the probes chosen, what is kept): the shipped
# catalogues then read as stale until rebuilt.
VERSION = 2
MAX_PROBES = 40
MAX_PROBE_CHARS = 450_000  # a 256 × 256 matrix of random floats (lab 07) is 1.3 MB of catalogue: left out


def default_hint(name: str) -> str:
    """The Spanish hint for a mutant without a written one: its name is already a short Spanish description."""
    return (f"Parece un error frecuente de este ejercicio: «{name}». Revisa esa parte de tu código "
            "(es lo que sugieren sus resultados en unas entradas de prueba, no un veredicto).")


def written_hint(hint: str) -> str:
    """A hint written beside the mutant (``HINTS`` in tests/mutants/labNN.py): a whole Spanish sentence."""
    return hint


def fingerprint(lab: str) -> str:
    """What a lab's catalogue depends on: its exercises (answer and test cells), its mutants, and the versions of
    this tool's way of choosing probes (``VERSION``) and of the encoding (``llmlab.mistakes.FORMAT``)."""
    digest = hashlib.sha256()
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    for answer_id, exercise in sorted(labtools.exercises(nb).items()):
        digest.update(answer_id.encode())
        digest.update(exercise.answer_source.encode())
        for test_id, source, _points in exercise.tests:
            digest.update(test_id.encode())
            digest.update(source.encode())
    path = REPO / "tests" / "mutants" / f"{lab[:5]}.py"
    digest.update(path.read_bytes() if path.exists() else b"")
    digest.update(f"{VERSION}/{mistakes.FORMAT}".encode())
    return digest.hexdigest()


def is_current(lab: str) -> bool:
    """Whether the shipped catalogue of ``lab`` was built from its present exercises, mutants and tools."""
    path = catalogue_path(lab)
    return path.is_file() and json.loads(gzip.decompress(path.read_bytes())).get("sources") == fingerprint(lab)


def _recorder(name, fn, calls):  # noqa: C901
    def recording(*args, **kwargs):
        try:
            probe = {"call": name, "args": [mistakes.encode(a) for a in args],
                     "kwargs": {k: mistakes.encode(v) for k, v in kwargs.items()}}
            calls.append(probe)
        except mistakes.Unencodable:
            pass
        return fn(*args, **kwargs)

    recording.__name__ = name
    recording.__signature__ = inspect.signature(fn)
    recording.__wrapped__ = fn
    return recording


def record_probes(run, exercise) -> list[dict]:
    """The calls the exercise's visible checks make to its functions, on the solution."""
    import contextlib
    import io
    import warnings

    module = run._new_module(run.module.__dict__)
    calls: list[dict] = []
    for name in exercise.function_names:
        fn = module.__dict__.get(name)
        if callable(fn) and not isinstance(fn, type):
            module.__dict__[name] = _recorder(name, fn, calls)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for test_id, source, _points in exercise.tests:
            visible = labtools.strip_between(source, labtools.HIDDEN_BEGIN, labtools.HIDDEN_END)
            try:
                run._exec(visible, module, test_id)
            except Exception:  # noqa: BLE001 - the solution passes; a failure here only ends the recording
                pass
    signatures = {n: inspect.signature(module.__dict__[n].__wrapped__) for n in exercise.function_names
                  if hasattr(module.__dict__.get(n), "__wrapped__")}
    base = calls[:MAX_PROBES]
    calls = base + [v for probe in base for v in variants(probe, signatures.get(probe["call"]))]
    probes, seen = [], set()
    for probe in calls:
        key = json.dumps(probe, sort_keys=True)
        if key in seen or len(key) > MAX_PROBE_CHARS:
            continue
        seen.add(key)
        probes.append(probe)
    return probes[: 2 * MAX_PROBES]


def _as_array(d: dict) -> dict | None:
    """A list of numbers (or of lists of them) as the NumPy array it describes, or None."""
    if d["t"] != "list":
        return None
    try:
        arr = np.asarray(mistakes.decode(d))  # ints stay ints (IDs), floats float64
    except (TypeError, ValueError):
        return None
    if arr.dtype.kind not in "if" or arr.size == 0:
        return None
    return mistakes.encode(arr)


def _changed_default(value):
    """Another value of an optional parameter's type (the checks must see a mutant that ignores it)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value * 2 if value else 1
    if isinstance(value, float):
        return value * 0.5 if value else 0.5
    return None


JITTER = False  # measured on labs 02, 04, 06: one more mutant named in all; not worth the probes


def _jitter(probe: dict) -> dict | None:
    """The probe with every float array (or list of floats) moved by up to ±25 % element by element, seeded by the
    probe itself: other values than the visible ones, of the same shape and kind (None when there is none)."""
    seed = int(hashlib.sha256(json.dumps(probe, sort_keys=True).encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng(seed)
    moved = [False]

    def walk(d):
        if d["t"] in ("ndarray", "tensor") and d["dtype"].startswith(("float", "torch.float")) and len(d["v"]) >= 2:
            moved[0] = True
            values = [float(e) for e in d["v"]]
            return {**d, "v": [mistakes._float(v * (1 + 0.25 * rng.uniform(-1, 1))) for v in values]}
        if d["t"] == "list" and len(d["v"]) >= 2 and all(e["t"] == "float" for e in d["v"]):
            moved[0] = True
            return {**d, "v": [{"t": "float", "v": mistakes._float(float(e["v"]) * (1 + 0.25 * rng.uniform(-1, 1)))}
                               for e in d["v"]]}
        if d["t"] in ("list", "tuple"):
            return {**d, "v": [walk(e) for e in d["v"]]}
        if d["t"] == "dict":
            return {**d, "v": {k: walk(e) for k, e in d["v"].items()}}
        return d

    out = {**probe, "args": [walk(a) for a in probe["args"]], "kwargs": {k: walk(v) for k, v in probe["kwargs"].items()}}
    return out if moved[0] else None


def variants(probe: dict, signature) -> list[dict]:
    """More probes made from a visible one: lists given as arrays (a function that changes its input in place
    is only caught on arrays), each unused optional parameter changed, each number argument at 0 and negated.

    The last are ``edge`` probes: ``build_lab`` keeps one only where the solution rejects it with the documented
    ValueError (elsewhere a zero or a negative size is outside what the statement specifies, and a valid answer
    may do anything there). A ``jittered`` copy (float inputs moved by up to ±25 %) is kept only where the solution
    does not raise: it stays inside the domain the statement describes."""
    out = []

    def with_arg(i, value):
        args = list(probe["args"])
        args[i] = value
        return {**probe, "args": args}

    for i, arg in enumerate(probe["args"]):
        as_array = _as_array(arg)
        if as_array is not None:
            out.append(with_arg(i, as_array))
        if arg["t"] in ("int", "float") and arg["v"] not in (0, 0.0) and not isinstance(arg["v"], str):
            out.append({**with_arg(i, {**arg, "v": 0 if arg["t"] == "int" else 0.0}), "edge": True})
            out.append({**with_arg(i, {**arg, "v": -arg["v"]}), "edge": True})
    for k, arg in probe["kwargs"].items():
        if arg["t"] in ("int", "float") and arg["v"] not in (0, 0.0) and not isinstance(arg["v"], str):
            out.append({**probe, "kwargs": {**probe["kwargs"], k: {**arg, "v": -arg["v"]}}, "edge": True})
    if JITTER:
        jittered = _jitter(probe)
        if jittered is not None:
            out.append({**jittered, "inside": True})
    if signature is not None:
        params = list(signature.parameters.values())
        for j, param in enumerate(params):
            if param.default is param.empty or j < len(probe["args"]) or param.name in probe["kwargs"]:
                continue
            value = _changed_default(param.default)
            if value is not None:
                out.append({**probe, "kwargs": {**probe["kwargs"], param.name: mistakes.encode(value)}})
    return out


def _functions(module, names):
    return {n: module.__dict__[n] for n in names if callable(module.__dict__.get(n))}


def _stable(first, second) -> bool:
    return len(first) == len(second) and all(mistakes.same(a, b) for a, b in zip(first, second))


def build_lab(lab: str) -> dict:
    from labharness import LabRun, load_mutants, quiet_matplotlib

    mutants = load_mutants(lab)
    hints = getattr(mutants, "HINTS", {}) if mutants else {}
    run = LabRun(lab)
    catalogue = {"format": mistakes.FORMAT, "lab": lab, "sources": fingerprint(lab), "exercises": {}}
    for answer_id, exercise in run.exercises.items():
        names = [n for n in exercise.function_names
                 if callable(run.module.__dict__.get(n)) and not isinstance(run.module.__dict__[n], type)]
        if not names or mutants is None or answer_id not in mutants.MUTANTS:
            continue
        probes = record_probes(run, exercise)
        with quiet_matplotlib():
            correct = _functions(run._new_module(run.module.__dict__), names)
            first, second = mistakes.behaviour(correct, probes), mistakes.behaviour(correct, probes)
            keep = [i for i, (a, b) in enumerate(zip(first, second)) if mistakes.same(a, b) and a["t"] != "error"
                    and (not probes[i].get("edge") or a == {"t": "raise", "v": "ValueError"})
                    and (not probes[i].get("inside") or a["t"] != "raise")]
            probes = [{k: v for k, v in probes[i].items() if k not in ("edge", "inside")} for i in keep]
            correct_out = [first[i] for i in keep]
            entry = {
                "functions": {n: list(inspect.signature(run.module.__dict__[n]).parameters)
                              for n in names},
                "probes": probes, "correct": correct_out, "mistakes": [],
            }
            for name, source in mutants.MUTANTS[answer_id].items():
                outputs = []
                for _ in range(2):
                    module = run._new_module(run.module.__dict__)
                    try:
                        run._exec(source, module, f"{answer_id}-mutant")
                    except Exception:  # noqa: BLE001 - a mutant that does not even define itself
                        outputs = None
                        break
                    outputs.append(mistakes.behaviour(_functions(module, names), probes))
                if not outputs or not _stable(*outputs):
                    continue
                if _stable(outputs[0], correct_out) or any(o["t"] == "error" for o in outputs[0]):
                    continue
                hint = hints.get(answer_id, {}).get(name)
                entry["mistakes"].append({"name": name, "hint": written_hint(hint) if hint else default_hint(name),
                                          "outputs": outputs[0]})
        if probes:
            entry["probes"], blobs = shared_blobs(probes)
            catalogue.setdefault("blobs", {}).update(blobs)  # one table per lab: exercises share their data
            catalogue["exercises"][answer_id] = entry
    return catalogue


def measure(lab: str, run=None) -> dict:
    """How the shipped catalogue does on the lab's own mutants and valid alternatives.

    Returns counts and the cases: ``named`` (a mutant recognised with its own name), ``wrong`` (named as another
    mistake), ``silent`` (no hint), ``false_claims`` (a valid alternative told it made a mistake).
    """
    from labharness import LabRun, load_alternatives, load_mutants, quiet_matplotlib

    run = run or LabRun(lab)
    mutants, alternatives = load_mutants(lab), load_alternatives(lab)
    entries = mistakes.load_catalogue(lab[:5])["exercises"]
    result = {"lab": lab, "mutants": 0, "named": 0, "wrong": [], "silent": [], "alternatives": 0,
              "false_claims": []}

    def claim(answer_id, source):
        exercise = run.exercises[answer_id]
        names = [n for n in exercise.function_names if n in entries.get(answer_id, {}).get("functions", {})]
        module = run._new_module(run.module.__dict__)
        try:
            run._exec(source, module, f"{answer_id}-measured")
        except Exception:  # noqa: BLE001
            return None, []
        if not names:
            return None, []
        fn = module.__dict__[names[0]]
        with quiet_matplotlib():
            found = mistakes.candidates(fn, module.__dict__)
        return mistakes.verdict(found), found

    for answer_id, by_name in (mutants.MUTANTS if mutants else {}).items():
        for name, source in by_name.items():
            result["mutants"] += 1
            hint, found = claim(answer_id, source)
            if hint is None:
                result["silent"].append((answer_id, name))
            elif name in {m["name"] for m in found}:
                result["named"] += 1
            else:
                result["wrong"].append((answer_id, name, sorted({m["name"] for m in found})))
    for answer_id, by_name in (alternatives.ALTERNATIVES if alternatives else {}).items():
        for name, source in by_name.items():
            result["alternatives"] += 1
            hint, found = claim(answer_id, source)
            if hint is not None:
                result["false_claims"].append((answer_id, name, sorted({m["name"] for m in found})))
    return result


BLOB_VALUES = 256


def shared_blobs(probes: list[dict]) -> tuple[list[dict], dict]:
    """The probes with every large array replaced by a reference into a table where each is stored once (the
    checks of an exercise pass the same embedding table or model weights to every call)."""
    blobs: dict[str, dict] = {}

    def walk(d):
        if d["t"] in ("ndarray", "tensor") and len(d["v"]) > BLOB_VALUES:
            key = hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]
            blobs[key] = d
            return {"t": "blob", "v": key}
        if d["t"] in ("list", "tuple"):
            return {**d, "v": [walk(e) for e in d["v"]]}
        if d["t"] == "dict":
            return {**d, "v": {k: walk(e) for k, e in d["v"].items()}}
        return d

    out = [{**p, "args": [walk(a) for a in p["args"]], "kwargs": {k: walk(v) for k, v in p["kwargs"].items()}}
           for p in probes]
    return out, blobs


def catalogue_path(lab: str) -> Path:
    return mistakes.CATALOGUE_DIR / f"{lab[:5]}.json.gz"


def dumps(catalogue: dict) -> bytes:
    """The catalogue as gzip'd JSON, byte for byte the same for the same content (no timestamp in the header)."""
    text = json.dumps(catalogue, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="lab prefixes (lab01 ...); default: every lab")
    parser.add_argument("--stale", action="store_true", help="only the labs whose catalogue is out of date")
    parser.add_argument("--measure", action="store_true", help="measure the shipped catalogues instead")
    args = parser.parse_args(argv)
    labs = [lab for lab in labtools.lab_names() if not args.labs or lab[:5] in args.labs or lab in args.labs]
    if args.measure:
        for lab in labs:
            r = measure(lab)
            print(f"{lab}: {r['named']}/{r['mutants']} mutants named, {len(r['wrong'])} named wrongly, "
                  f"{len(r['false_claims'])}/{r['alternatives']} alternatives told of a mistake")
            for case in r["wrong"] + r["false_claims"]:
                print("   ", case)
        return 0
    mistakes.CATALOGUE_DIR.mkdir(parents=True, exist_ok=True)
    if args.stale:
        labs = [lab for lab in labs if not is_current(lab)]
    for lab in labs:
        catalogue = build_lab(lab)
        catalogue_path(lab).write_bytes(dumps(catalogue))
        n = sum(len(e["mistakes"]) for e in catalogue["exercises"].values())
        print(f"{lab}: {len(catalogue['exercises'])} exercises, {n} mistakes -> {catalogue_path(lab).name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
