"""The hostile-submission suite: every case of cases.py graded by `grade.py` in one batch, with real jails.

One batch per session holds the selected cases plus, for every lab they use, the two honest controls. Each
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
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .cases import CASES, REPO, Lab, labtools

BWRAP = shutil.which("bwrap")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed (make sysdeps installs it)")]
# This run's jails get user ids of their own (grading/sandbox.py: jail_uids), so that jails of other graders
# running on the same machine are not mistaken for ours.
JAIL_BASE = (10 + os.getpid() % 1000) * 1_000_000
JAIL_UIDS = range(JAIL_BASE, JAIL_BASE + 1_000_000)
LABS = labtools.lab_names()
BY_NAME = {c.name: c for c in CASES}
CONTROLS = ("control_full", "control_wrong")
JAIL_MEMORY_MIB = 2560  # the bound on a whole submission (fork_memory goes past it with children spawned from libc)


def _params():
    out = []
    for case in CASES:
        marks = [] if case.fast else [pytest.mark.hostile]
        out.append(pytest.param(case.name, marks=marks, id=case.name))
    return out


def _plan(names: list[str]) -> dict[str, list[str]]:
    """case name -> labs it runs on."""
    chosen = os.environ.get("LLMLAB_HOSTILE_LABS", "")
    every = chosen == "all"
    labs = [lab for lab in chosen.split(",") if lab in LABS] or LABS  # e.g. one light lab: one reference run
    plan, turn = {}, 0
    for name in names:
        if name in CONTROLS:
            continue
        if every:
            plan[name] = list(LABS)
        else:
            plan[name] = [labs[turn % len(labs)]]
            turn += 1
    used = sorted({lab for labs in plan.values() for lab in labs}) or LABS[:1]
    for name in CONTROLS:
        plan[name] = used
    return plan


def _digest(paths) -> dict[str, str]:
    out = {}
    for base in paths:
        for path in sorted(Path(base).rglob("*")):
            if path.is_symlink():
                out[str(path)] = "link:" + os.readlink(path)
            elif path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _jail_processes() -> list[str]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in JAIL_UIDS:
                    found.append(f"{entry.name}: {Path(entry.path, 'cmdline').read_bytes()[:120]!r}")
            except OSError:
                pass
    return found


@pytest.fixture(scope="module")
def batch(request, tmp_path_factory):
    # Notebook items (nbval) in the same session have no `module`: compare through getattr.
    selected = sorted({item.callspec.params["name"] for item in request.session.items
                       if getattr(getattr(item, "module", None), "__name__", None) == __name__
                       and hasattr(item, "callspec")} | set(CONTROLS))
    plan = _plan(selected)
    base = tmp_path_factory.mktemp("hostil")
    submitted, root, canary = base / "entregas", base / "curso", base / "canario"
    canary.mkdir()
    (canary / "gradebook.db").write_bytes(b"canary")
    (canary / "notas.csv").write_text("alumno,nota\nx,1\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    ctx = {"port": listener.getsockname()[1], "root": str(root), "submitted": str(submitted)}
    labs = {name: Lab(name) for name in sorted({lab for labs in plan.values() for lab in labs})}
    for name, case_labs in plan.items():
        for lab in case_labs:
            folder = submitted / BY_NAME[name].student / lab
            folder.mkdir(parents=True)
            for rel, data in BY_NAME[name].build(labs[lab], ctx).items():
                if isinstance(data, tuple) and data[0] == "symlink":
                    (folder / rel).symlink_to(data[1])
                elif isinstance(data, tuple) and data[0] == "dir":
                    (folder / rel).mkdir()
                else:
                    (folder / rel).write_bytes(data)
    watched = [REPO / "course" / "submitted", REPO / "course" / "demo", REPO / "solutions", REPO / "labs",
               REPO / "llmlab", submitted, canary]
    before = _digest(watched)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(REPO / "course" / "tools" / "grade.py"), "--submitted", str(submitted), "--root",
         str(root), "--labs", *labs, "--cell-timeout", "10", "--total-timeout", "300", "--memory", "2048",
         "--jail-memory", str(JAIL_MEMORY_MIB)],
        capture_output=True, text=True, timeout=3600, env=dict(os.environ, LLMLAB_JAIL_UID_BASE=str(JAIL_BASE)),
    )
    seconds = time.monotonic() - start
    listener.close()
    outputs_after_grading = {p: hashlib.sha256(p.read_bytes()).hexdigest()
                             for p in (root / "grades.csv", root / "gradebook.db", root / "grading_report.json")
                             if p.exists()}
    time.sleep(12)  # the background case's child would strike 8 s after it started
    # Read even after a failed run: what was graded is still checked case by case (test_the_batch_finishes fails).
    path = root / "grading_report.json"
    report = json.loads(path.read_text()) if path.exists() else {"results": []}
    results = {(r["student"], r["lab"]): r for r in report["results"]}
    info = {"proc": proc, "root": root, "submitted": submitted, "plan": plan, "results": results,
            "before": before, "after": _digest(watched), "seconds": seconds, "survivors": _jail_processes(),
            "outputs_after_grading": outputs_after_grading, "labs": labs}
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
        for needle in expect.notes:
            assert any(needle in note for note in r["notes"]), (lab, needle, r["notes"])


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
