"""The hostile-submission suite: every case of cases.py graded by `grade.py` in one batch, with real jails.

One batch per session (tests/classbatch.py, shared with the demo class of tests/test_grading.py) holds the selected
cases plus, for every lab they use, the two honest controls (`control_full` is ana_correcta's notebook: where the
demo class is in the batch, its result is hers, graded once). Each
case's outcome is checked against its `Expect`; around the batch the suite checks what must hold for all:

- the batch finishes and the control student keeps full marks;
- nothing outside the jails changes: the repository's course material, the submissions folder (byte for
  byte), a canary folder next to them; and nothing rewrites the results after grading ends;
- no process outlives grading (no process of a jail user id is left, checked after the slowest background
  trick would have fired).

`make test` runs the cases marked fast; `.ci/run` runs them all in one batch (`-m "hostile or not hostile"`).
Cases are spread over the labs in turn; LLMLAB_HOSTILE_LABS=all runs every case on every lab, and
LLMLAB_HOSTILE_LABS=lab01-que-es-un-llm (or a comma-separated list) spreads them over those labs only.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import classbatch

from .cases import CASES, REPO, Lab, labtools

BWRAP = shutil.which("bwrap")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed (make sysdeps installs it)")]
LABS = labtools.lab_names()
BY_NAME = {c.name: c for c in CASES}
CONTROLS = classbatch.CONTROLS
JAIL_MEMORY_MIB = classbatch.JAIL_MEMORY_MIB


def _params():
    out = []
    for case in CASES:
        marks = [] if case.fast else [pytest.mark.hostile]
        out.append(pytest.param(case.name, marks=marks, id=case.name))
    return out


@pytest.fixture(scope="module")
def batch(class_batch):
    """The session's grading batch (tests/classbatch.py): the selected cases and the controls, graded in the same
    `grade.py` run as the demo class when tests/test_grading.py is selected too."""
    info = {**class_batch, "labs": {name: Lab(name) for name in sorted({lab for labs in class_batch["plan"].values()
                                                                         for lab in labs})}}
    _write_table(info)
    return info


def _write_table(info) -> None:
    """The suite's table (case -> outcome), for people: build/hostile/<labs>.md."""
    lines = ["| caso | lab | resultado | marcas | qué hace |", "|---|---|---|---|---|"]
    for name, labs in sorted(info["plan"].items()):
        for lab in labs:
            r = info["results"].get((BY_NAME[name].student, lab), {})
            score = "—" if r.get("score") is None else f"{r['score']:g}/{r.get('max_score', 0):g}"
            lines.append(f"| {name} | {lab[:5]} | {score} | {', '.join(r.get('flags', []))} | {BY_NAME[name].what} |")
    lines.append(f"\n{len(info['results'])} entregas en {info['seconds']:.0f} s; memoria por entrega (procesos + "
                 f"ficheros temporales): {JAIL_MEMORY_MIB} MiB")
    out = REPO / "build" / "hostile"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{'-'.join(sorted(info['labs']))[:80]}.md").write_text("\n".join(lines) + "\n")


def test_the_batch_finishes(batch):
    proc = batch["proc"]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for name, labs in batch["plan"].items():
        for lab in labs:
            assert (BY_NAME[name].student, lab) in batch["results"], f"no result for {name} / {lab}"


def test_the_control_keeps_full_marks(batch):
    for lab in batch["labs"]:
        r = batch["results"][("control_full", lab)]
        points = sum(r["tests"].values())
        assert r["score"] == points == sum(c.points for c in labtools.exercises(Lab(lab).solution).values()), r


@pytest.mark.parametrize("name", _params())
def test_case(batch, name):
    case = BY_NAME[name]
    expect = case.expect
    for lab in batch["plan"][name]:
        r = batch["results"][(case.student, lab)]
        flags = set(r["flags"])
        assert expect.flags <= flags, (lab, r)
        assert not (expect.no_flags & flags), (lab, r)
        if expect.one_of:
            assert expect.one_of & flags, (lab, r)
        if expect.like is None:
            assert r["score"] is None, (lab, r)
        else:
            reference = batch["results"][(f"control_{expect.like}", lab)]["tests"]
            assert set(r["tests"]) == set(reference), (lab, r)
            for test_id, points in reference.items():
                if expect.relation == "equal":
                    assert r["tests"][test_id] == points, (lab, test_id, r)
                else:
                    assert r["tests"][test_id] <= points, (lab, test_id, r)
        if expect.outputs or expect.no_outputs:
            text = _outputs(batch["root"] / "autograded" / case.student / lab / f"{lab}.ipynb")
            for needle in expect.outputs:
                assert needle in text, (lab, needle)
            for needle in expect.no_outputs:
                assert needle not in text, (lab, needle)


def _outputs(notebook: Path) -> str:
    """The text of every output of a graded notebook (not its sources)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return "\n".join(json.dumps(o, ensure_ascii=False) for c in nb["cells"] for o in c.get("outputs", []))


def test_nothing_outside_the_jails_changed(batch):
    before, after = batch["before"], batch["after"]
    assert sorted(after) == sorted(before), "files appeared or disappeared outside the jails"
    changed = [p for p in before if before[p] != after[p]]
    assert changed == [], changed


def test_no_process_outlives_grading(batch):
    assert batch["survivors"] == []


def test_results_are_not_rewritten_after_grading(batch):
    for path, digest in batch["outputs_after_grading"].items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{path.name} changed after grading ended"


def test_huge_outputs_are_cut_in_feedback(batch):
    if "print_50mb" not in batch["plan"]:
        pytest.skip("print_50mb not in this run")
    lab = batch["plan"]["print_50mb"][0]
    page = batch["root"] / "feedback" / "print_50mb" / lab / f"{lab}.html"
    assert page.stat().st_size < 2_000_000
    assert "salida recortada" in page.read_text(encoding="utf-8")
