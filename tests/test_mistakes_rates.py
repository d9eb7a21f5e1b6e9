"""How well the checks name mistakes: on every lab's mutants (each a named common error) and valid alternatives.

For each lab, every mutant of tests/mutants/labNN.py and every alternative of tests/alternatives/labNN.py replaces
its answer in the executed solution, and llmlab.mistakes looks at it through the shipped catalogue, as a failing
check would. Asserted: no valid alternative told it made a mistake, no mutant named as another mistake, and at
least ``FLOOR`` of all the mutants named with their own name. The issue's goal is 80 % (``GOAL``); the mutants
left silent are mostly those only the hidden tests catch (the probes are the visible checks' inputs, so those
mutants behave like the solution on them) and exercises whose inputs are functions or models (no probe). Raise
FLOOR and NAMED_FLOOR as the catalogue improves. The table is printed (``pytest -s`` or ``-rP`` shows it).
"""

from __future__ import annotations

import pytest

import mistake_catalog
from labharness import lab_run, labtools, load_mutants

LABS = [lab for lab in labtools.lab_names() if load_mutants(lab) is not None]
GOAL = 0.80  # the goal, printed beside the rate
# Regression guards, not the goal. The rate falls when mutants that only the hidden tests can catch are added
# (the audit of labs 01-04 and the new exercises of labs 07-09 did), so the count of named mutants is guarded too:
# 67.6 % (610 of 902 mutants) measured on 2026-12-02 after those additions; 74.2 % (692 of 933) the same day after
# the audit by family of labs 07-09 (visible probes that tell their mutants apart, number-keyed dicts encoded):
#     pytest tests/test_mistakes_rates.py -s
FLOOR = 0.73
NAMED_FLOOR = 690

_results: dict[str, dict] = {}


def result_of(lab: str) -> dict:
    if lab not in _results:
        _results[lab] = mistake_catalog.measure(lab, lab_run(lab))
    return _results[lab]


@pytest.mark.parametrize("lab", LABS)
def test_no_valid_alternative_is_told_it_made_a_mistake(lab):
    r = result_of(lab)
    assert r["alternatives"] > 0
    assert r["false_claims"] == [], r["false_claims"]


@pytest.mark.parametrize("lab", LABS)
def test_no_mutant_is_named_as_another_mistake(lab):
    r = result_of(lab)
    assert r["wrong"] == [], r["wrong"]


def table(results: list[dict]) -> str:
    lines = [f"{'lab':<32} {'named':>7} {'mutants':>8} {'rate':>6} {'wrong':>6} {'false claims':>13}"]
    for r in results:
        lines.append(f"{r['lab']:<32} {r['named']:>7} {r['mutants']:>8} {r['named'] / r['mutants']:>6.1%} "
                     f"{len(r['wrong']):>6} {len(r['false_claims']):>6} / {r['alternatives']:<5}")
    named, total = sum(r["named"] for r in results), sum(r["mutants"] for r in results)
    claims, alternatives = sum(len(r["false_claims"]) for r in results), sum(r["alternatives"] for r in results)
    lines.append(f"{'all':<32} {named:>7} {total:>8} {named / total:>6.1%} "
                 f"{sum(len(r['wrong']) for r in results):>6} {claims:>6} / {alternatives:<5}"
                 f"  (goal {GOAL:.0%}, asserted {FLOOR:.0%} and {NAMED_FLOOR} named)")
    return "\n".join(lines)


def test_most_mutants_are_named_and_the_table():
    results = [result_of(lab) for lab in LABS]
    print("\n" + table(results))
    named, total = sum(r["named"] for r in results), sum(r["mutants"] for r in results)
    assert total > 0 and named / total >= FLOOR and named >= NAMED_FLOOR, table(results)
