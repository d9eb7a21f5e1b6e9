"""llmlab.mistakes: a failing check names the common mistake the answer behaves like, and only then.

The shipped catalogues (llmlab/data/mistakes/labNN.json) must be current: rebuild them with
``python course/tools/mistake_catalog.py`` (``make -o .venv/.installed mistakes``) after changing a lab's exercises
or its mutants. The rates on every mutant and alternative are measured in test_mistakes_rates.py (labs layer).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import mistake_catalog
from labharness import labtools
from llmlab import checks, mistakes


@pytest.fixture(autouse=True)
def _forget():
    mistakes.forget()
    yield
    mistakes.forget()


def _softmax_without_max(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    e = np.exp(np.asarray(logits, dtype=float) / temperature)
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_ok(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError("la temperatura debe ser mayor que 0")
    z = np.asarray(logits, dtype=np.float32) / np.float32(temperature)  # float32 is a valid answer
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _named(fn, name="softmax"):
    fn.__name__ = name
    return fn


# --- values and their comparison ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [
    None, True, 3, 2.5, float("nan"), float("-inf"), "fp16", [1.0, [2, 3]], (1, 2.0), {"a": 1.5}, {50: 1.25, 95.0: 6.5},
    np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2], dtype=np.int64), np.array([True, False]),
])
def test_encode_decode_round_trip(value):
    encoded = json.loads(json.dumps(mistakes.encode(value)))
    assert mistakes.same(mistakes.encode(mistakes.decode(encoded)), mistakes.encode(value))
    assert type(mistakes.decode(encoded)) is type(value)


def test_tensors_and_generators_round_trip():
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float32).reshape(2, 2)
    assert torch.equal(mistakes.decode(mistakes.encode(t)), t)
    g = torch.Generator().manual_seed(3)
    assert torch.equal(torch.rand(3, generator=mistakes.decode(mistakes.encode(g))), torch.rand(3, generator=g))
    r = np.random.default_rng(5)
    assert mistakes.decode(mistakes.encode(r)).random() == r.random()


def test_same_has_float32_tolerance_but_keeps_types_apart():
    x = np.array([0.1, 1000.0, 1e-9])
    assert mistakes.same(mistakes.encode(x), mistakes.encode(x.astype(np.float32)))
    assert not mistakes.same(mistakes.encode(x), mistakes.encode(x * 1.01))
    assert not mistakes.same(mistakes.encode(3), mistakes.encode(3.0))  # "returns float" is a mistake of its own
    assert not mistakes.same(mistakes.encode([1.0]), mistakes.encode(np.array([1.0])))
    assert not mistakes.same(mistakes.encode(np.array([1.0])), mistakes.encode(np.array([1.0, 1.0])))
    assert mistakes.same(mistakes.encode(float("nan")), mistakes.encode(float("nan")))
    assert not mistakes.same(mistakes.encode(float("nan")), mistakes.encode(1.0))


def test_large_outputs_are_summarised_and_still_told_apart():
    big = np.random.default_rng(0).normal(size=(40, 50))
    d = mistakes.summarised(mistakes.encode(big))
    assert len(d["v"]) == mistakes.SAMPLE and "sum" in d and "abs" in d
    assert mistakes.same(d, mistakes.summarised(mistakes.encode(big.astype(np.float32))))
    changed = big.copy()
    changed[7, 3] += 1.0  # not among the sampled values: the sums still see it
    assert not mistakes.same(d, mistakes.summarised(mistakes.encode(changed)))
    assert not mistakes.same(d, mistakes.summarised(mistakes.encode(-big)))


def test_run_probe_records_raises_and_in_place_changes():
    def shout(x):
        raise ValueError("no")

    def halve(x):
        x /= 2
        return x

    probe = {"call": "f", "args": [mistakes.encode(np.array([2.0]))], "kwargs": {}}
    assert mistakes.run_probe({"f": shout}, probe) == {"t": "raise", "v": "ValueError"}
    out = mistakes.run_probe({"f": halve}, probe)
    assert out["t"] == "list" and out["v"][1]["v"] == "modified its input"
    assert mistakes.run_probe({"f": lambda x: x / 2}, probe)["t"] == "ndarray"


# --- when a mistake is named ---------------------------------------------------------------------------------

ENTRY = {
    "functions": {"f": ["x"]},
    "probes": [{"call": "f", "args": [mistakes.encode(1.0)], "kwargs": {}},
               {"call": "f", "args": [mistakes.encode(2.0)], "kwargs": {}}],
    "correct": [mistakes.encode(2.0), mistakes.encode(4.0)],
    "mistakes": [{"name": "suma", "hint": "Parece que sumas 1", "outputs": [mistakes.encode(2.0), mistakes.encode(3.0)]},
                 {"name": "cuadrado", "hint": "Parece que elevas al cuadrado",
                  "outputs": [mistakes.encode(1.0), mistakes.encode(4.0)]},
                 {"name": "otro cuadrado", "hint": "Parece que elevas al cuadrado (bis)",
                  "outputs": [mistakes.encode(1.0), mistakes.encode(4.0)]}],
}


def test_a_mistake_is_named_only_when_every_probe_matches_and_alone():
    def outputs(f):
        return mistakes.behaviour({"f": f}, ENTRY["probes"])

    assert mistakes.verdict(mistakes.match(outputs(lambda x: x + 1), ENTRY)) == "Parece que sumas 1"
    assert mistakes.match(outputs(lambda x: 2 * x), ENTRY) == []  # the right answer
    assert mistakes.match(outputs(lambda x: 2 * x + (x > 1.5)), ENTRY) == []  # matches one probe only
    # two mistakes with the same outputs and different hints: neither is named
    assert len(mistakes.match(outputs(lambda x: x * x), ENTRY)) == 2
    assert mistakes.verdict(mistakes.match(outputs(lambda x: x * x), ENTRY)) is None


def test_the_shipped_catalogue_names_a_softmax_without_the_max():
    hint = mistakes.diagnose(_named(_softmax_without_max), {"np": np})
    assert hint is not None and "no resta el máximo" in hint
    assert mistakes.diagnose(_named(_softmax_ok), {"np": np}) is None
    assert mistakes.diagnose(_named(lambda logits: logits), {}) is None  # other parameters: another exercise


def test_a_failing_check_shows_the_hint_and_a_passing_one_nothing():
    wrong = _named(_softmax_without_max)
    with pytest.raises(checks.FalloComprobacion) as caught:
        checks.check_close(checks.checked_call(wrong, [1000.0, 999.0, 998.0]), [0.665241, 0.244728, 0.090031])
    message = str(caught.value)
    assert message.splitlines()[0].startswith("el resultado: hay un NaN")  # the check's own message comes first
    assert "Parece un error frecuente de este ejercicio: «no resta el máximo" in message
    with pytest.raises(checks.FalloComprobacion) as caught:  # hidden tests keep their generic text, plus the hint
        with checks.hidden("casos aleatorios"):
            checks.check_close(checks.checked_call(wrong, [1000.0, 0.0]), [1.0, 0.0])
    assert "prueba oculta" in str(caught.value) and "no resta el máximo" in str(caught.value)
    mistakes.forget()
    with pytest.raises(checks.FalloComprobacion) as caught:
        checks.check_close(1.0, 2.0)
    assert "Parece" not in str(caught.value)


def test_a_hint_never_breaks_a_check():
    def softmax(logits, temperature=1.0):  # crashes on every probe
        raise RuntimeError("boom")

    mistakes.remember(softmax)
    with pytest.raises(checks.FalloComprobacion, match="se esperaba"):
        checks.check_close(1.0, 2.0)


# --- the shipped catalogues ---------------------------------------------------------------------------------

LABS = [lab for lab in labtools.lab_names() if mistake_catalog.catalogue_path(lab).exists()]


def test_every_lab_with_mutants_has_a_catalogue():
    from labharness import load_mutants

    assert [lab for lab in labtools.lab_names() if load_mutants(lab) is not None] == LABS


@pytest.mark.parametrize("lab", LABS)
def test_shipped_catalogue_is_current(lab):
    catalogue = mistakes.load_catalogue(lab[:5])
    assert catalogue["format"] == mistakes.FORMAT and catalogue["lab"] == lab
    assert catalogue["sources"] == mistake_catalog.fingerprint(lab), (
        f"llmlab/data/mistakes/{lab[:5]}.json is stale: run python course/tools/mistake_catalog.py {lab[:5]}")


@pytest.mark.parametrize("lab", LABS)
def test_catalogue_hints_are_spanish_hints_and_probes_visible_inputs(lab):
    catalogue = mistakes.load_catalogue(lab[:5])
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    for answer_id, entry in catalogue["exercises"].items():
        assert entry["probes"] and len(entry["probes"]) == len(entry["correct"])
        for mistake in entry["mistakes"]:
            assert mistake["hint"].startswith("Parece"), mistake
            assert len(mistake["outputs"]) == len(entry["probes"])
        assert set(entry["functions"]) <= set(labtools.exercises(nb)[answer_id].function_names)
