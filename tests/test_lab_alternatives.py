"""Valid answers written differently from the solution must get full marks.

`tests/alternatives/labNN.py` holds `ALTERNATIVES = {answer_id: {name: source}}`: loops instead of
vectorised code, `math` instead of NumPy, float32, lists as input, another correct order of operations.
Each one replaces the answer and every test cell of its exercise (hidden tests included) must pass,
in-process, exactly as in `test_lab_mutants.py`.
"""

from __future__ import annotations

import pytest

from labharness import lab_run, labtools, load_alternatives

CASES = []
for _lab in labtools.lab_names():
    _alternatives = load_alternatives(_lab)
    if _alternatives is None:
        continue
    for _answer, _by_name in _alternatives.ALTERNATIVES.items():
        for _name in _by_name:
            CASES.append((_lab, _answer, _name))

@pytest.mark.parametrize("lab,answer_id,alternative", CASES)
def test_valid_alternative_gets_full_marks(lab, answer_id, alternative):
    run = lab_run(lab)
    assert answer_id in run.exercises, f"{answer_id} is not an exercise of {lab}"
    source = load_alternatives(lab).ALTERNATIVES[answer_id][alternative]
    failed = run.failing_tests(answer_id, source)
    assert failed == [], f"valid alternative «{alternative}» of {answer_id} fails {failed}"
