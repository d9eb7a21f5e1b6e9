"""Mutation tests: wrong implementations from each chapter's common mistakes must lose points.

The solution notebook runs once in-process (labharness.lab_run, shared with the alternatives and the mistake
rates); then, for each exercise, every mutant replaces the answer and the exercise's test cells (hidden tests
included) are replayed. A mutant "loses points" when at least one of those cells fails. The exact solution must pass them all, and a
solution that only calls llmlab's own reference must fail.
"""

from __future__ import annotations

import pytest

from labharness import lab_run, labtools, load_mutants, reference_mutant

CASES = []
for _lab in labtools.lab_names():
    _mutants = load_mutants(_lab)
    if _mutants is None:
        continue
    for _answer, _by_name in _mutants.MUTANTS.items():
        for _name in _by_name:
            CASES.append((_lab, _answer, _name))

@pytest.mark.parametrize("lab", sorted({c[0] for c in CASES}))
def test_solutions_pass_every_test_cell(lab):
    run = lab_run(lab)
    for answer_id, exercise in run.exercises.items():
        assert run.failing_tests(answer_id, exercise.answer_source) == [], answer_id


@pytest.mark.parametrize("lab", sorted({c[0] for c in CASES}))
def test_calling_the_reference_earns_nothing(lab):
    run = lab_run(lab)
    references = load_mutants(lab).REFERENCES
    for answer_id, exercise in run.exercises.items():
        failed = run.failing_tests(answer_id, reference_mutant(exercise, references))
        assert failed, f"{answer_id}: forwarding to llmlab's reference still passes"


@pytest.mark.parametrize("lab,answer_id,mutant", CASES)
def test_mutant_loses_points(lab, answer_id, mutant):
    run = lab_run(lab)
    source = load_mutants(lab).MUTANTS[answer_id][mutant]
    assert run.failing_tests(answer_id, source), f"mutant «{mutant}» of {answer_id} passes every test"
