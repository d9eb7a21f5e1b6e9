"""One grading batch per test session for the demo class (tests/test_grading.py) and the hostile suite (tests/hostile).

Both used to run `grade.py` on their own over all nine labs, each paying for the nine releases (nbgrader
generate_assignment) and the nine reference runs of the instructor's notebooks, and the hostile suite graded
`control_full`, which is ana_correcta's notebook cell for cell (both are the release with every answer
solved: demo_class.build_submission(lab, {"answers": "solution"})). Here one `grade.py` run holds what the
session's selected tests of both files need:

- the demo class (course/submitted) and `zz_solucion` (the instructor's notebook handed in as a student), for
  the labs the selected tests of test_grading.py name (all nine when a selected test is about the whole class);
- the selected hostile cases and their two honest controls, on the labs hostile/test_hostile.py plans for them;
  where the demo class is in the batch, `control_full`'s result is ana_correcta's (asserted to be the same
  notebook; otherwise it is graded under its own name).

Every submission is graded on its own, in its own jail, whatever else is in the batch: a result depends only on
the lab's kit, the submission and the limits. The limits are the hostile suite's (short timeouts, a tight memory
bound), under which every lab's honest solution keeps full marks (the controls assert it); `make grade`'s default
limits are graded by tests/test_numerics.py (every lab), test_dist.py, test_grading_resume.py and
test_grading.py's single-lab runs.

The batch runs once per session on one worker: conftest.py puts both files in one xdist group
(``--dist loadgroup``) and schedules it first.
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

from labharness import REPO, labtools

LABS = labtools.lab_names()
SOLUTION_STUDENT = "zz_solucion"
CONTROLS = ("control_full", "control_wrong")
ALIASES = {"control_full": "ana_correcta"}  # hostile control -> demo student with the same notebook
# This run's jails get user ids of their own (grading/sandbox.py: jail_uids), so that jails of other graders
# running on the same machine are not mistaken for ours.
JAIL_BASE = (10 + os.getpid() % 1000) * 1_000_000
JAIL_UIDS = range(JAIL_BASE, JAIL_BASE + 1_000_000)
JAIL_MEMORY_MIB = 2560  # the bound on a whole submission (fork_memory goes past it with libc-forked children)
LIMITS = ["--cell-timeout", "10", "--total-timeout", "300", "--memory", "2048", "--jail-memory", str(JAIL_MEMORY_MIB)]


def _consumers(session) -> tuple[set[str] | None, set[str] | None]:
    """(labs the selected demo-class tests need or None, hostile cases selected or None)."""
    demo_labs, hostile = None, None
    for item in session.items:
        if "class_batch" not in getattr(item, "fixturenames", ()):
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.path.name == "test_grading.py":
            demo_labs = demo_labs or set()
            demo_labs |= {params["lab"]} if "lab" in params else set(LABS)
        elif item.path.parent.name == "hostile" and shutil.which("bwrap"):  # never without the jail
            hostile = hostile or set()
            if "name" in params:
                hostile.add(params["name"])
    return demo_labs, hostile


def hostile_plan(names: set[str]) -> dict[str, list[str]]:
    """case name -> labs it runs on (LLMLAB_HOSTILE_LABS: see hostile/test_hostile.py)."""
    chosen = os.environ.get("LLMLAB_HOSTILE_LABS", "")
    every = chosen == "all"
    labs = [lab for lab in chosen.split(",") if lab in LABS] or LABS  # e.g. one light lab: one reference run
    plan, turn = {}, 0
    for name in sorted(names | set(CONTROLS)):
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


def digest(paths) -> dict[str, str]:
    out = {}
    for base in paths:
        for path in sorted(Path(base).rglob("*")):
            if path.is_symlink():
                out[str(path)] = "link:" + os.readlink(path)
            elif path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def jail_processes() -> list[str]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in JAIL_UIDS:
                    found.append(f"{entry.name}: {Path(entry.path, 'cmdline').read_bytes()[:120]!r}")
            except OSError:
                pass
    return found


def _cells(nb: dict) -> list:
    return [(c["cell_type"], c.get("id"), "".join(c["source"]) if isinstance(c["source"], list) else c["source"],
             c.get("metadata")) for c in nb["cells"]]


def _write(folder: Path, files: dict) -> None:
    folder.mkdir(parents=True)
    for rel, data in files.items():
        if isinstance(data, tuple) and data[0] == "symlink":
            (folder / rel).symlink_to(data[1])
        elif isinstance(data, tuple) and data[0] == "dir":
            (folder / rel).mkdir()
        else:
            (folder / rel).write_bytes(data)


def run(session, tmp_path_factory) -> dict:
    demo_labs, hostile = _consumers(session)
    base = tmp_path_factory.mktemp("clase")
    submitted, root, canary = base / "entregas", base / "curso", base / "canario"
    submitted.mkdir()
    canary.mkdir()
    (canary / "gradebook.db").write_bytes(b"canary")
    (canary / "notas.csv").write_text("alumno,nota\nx,1\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    ctx = {"port": listener.getsockname()[1], "root": str(root), "submitted": str(submitted)}

    demo_labs = sorted(demo_labs or ())
    for student in sorted(p.name for p in (REPO / "course" / "submitted").iterdir() if p.is_dir()):
        for lab in demo_labs:
            shutil.copytree(REPO / "course" / "submitted" / student / lab, submitted / student / lab, symlinks=True)
    for lab in demo_labs:
        dest = submitted / SOLUTION_STUDENT / lab / f"{lab}.ipynb"
        dest.parent.mkdir(parents=True)
        shutil.copy2(labtools.solution_path(lab), dest)

    plan, aliased, cases = {}, {}, {}
    if hostile is not None:
        from hostile.cases import CASES, Lab

        cases = {c.name: c for c in CASES}
        plan = hostile_plan(hostile)
        labs = {name: Lab(name) for name in sorted({lab for labs in plan.values() for lab in labs})}
        for name, case_labs in plan.items():
            for lab in case_labs:
                files = cases[name].build(labs[lab], ctx)
                alias = ALIASES.get(name)
                if alias and lab in demo_labs and list(files) == [f"{lab}.ipynb"]:
                    demo = submitted / alias / lab / f"{lab}.ipynb"
                    if _cells(json.loads(files[f"{lab}.ipynb"])) == _cells(json.loads(demo.read_text("utf-8"))):
                        aliased[(cases[name].student, lab)] = (alias, lab)  # the same notebook: graded once
                        continue
                _write(submitted / cases[name].student / lab, files)

    labs = sorted(set(demo_labs) | {lab for labs in plan.values() for lab in labs})
    watched = [REPO / "course" / "submitted", REPO / "course" / "demo", REPO / "solutions", REPO / "labs",
               REPO / "llmlab", submitted, canary]
    before = digest(watched)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(REPO / "course" / "tools" / "grade.py"), "--submitted", str(submitted), "--root",
         str(root), "--labs", *labs, *LIMITS],
        capture_output=True, text=True, timeout=3600, env=dict(os.environ, LLMLAB_JAIL_UID_BASE=str(JAIL_BASE)),
    )
    seconds = time.monotonic() - start
    listener.close()
    outputs_after_grading = {p: hashlib.sha256(p.read_bytes()).hexdigest()
                             for p in (root / "grades.csv", root / "gradebook.db", root / "grading_report.json")
                             if p.exists()}
    if hostile is not None:
        time.sleep(12)  # the background case's child would strike 8 s after it started
    # Read even after a failed run: what was graded is still checked case by case (the batch tests fail).
    path = root / "grading_report.json"
    report = json.loads(path.read_text()) if path.exists() else {"results": []}
    results = {(r["student"], r["lab"]): r for r in report["results"]}
    for key, same in aliased.items():
        if same in results:
            results[key] = {**results[same], "student": key[0]}
    return {"proc": proc, "root": root, "submitted": submitted, "labs": labs, "demo_labs": demo_labs,
            "plan": plan, "aliased": aliased, "results": results, "before": before, "after": digest(watched),
            "seconds": seconds, "survivors": jail_processes(), "outputs_after_grading": outputs_after_grading}
