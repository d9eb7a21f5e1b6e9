"""Grading throughput: the hardened `make grade` against plain serial nbgrader, on the same class, side by side.

    python benchmarks/bench_grading.py            # the demo class (course/submitted), every lab
    python benchmarks/bench_grading.py --quick    # the demo class, first lab only

It measures, in one run and on the same machine:

1. plain nbgrader, serially, lab after lab: generate_assignment + autograde (+ generate_feedback, reported
   apart), in a scratch course; no isolation, no verification;
2. `grade.py --fresh` (release, the kits' reference runs, every submission in its own jail, verification,
   merge, feedback), with --jobs = every core; the ratio 1 / 2 is the throughput gain;
3. the jail's cost per submission: the same submissions run by the runner and the guard without a jail and
   inside one, interleaved, median of the differences;
4. a projection for 500 students x 9 labs on N workers, from the per-submission costs measured in 2.

Timings on a shared machine are noisy: compare the ratios, which are measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "course" / "tools"))

import labtools  # noqa: E402
from grading import execute, stage, task  # noqa: E402
from grading.kit import Kit  # noqa: E402
from grading.sandbox import Limits, Sandbox  # noqa: E402


def nbgrader_serial(submitted: Path, labs: list[str], scratch: Path) -> dict:
    """Plain nbgrader, one lab after another, as a course without this project's grader would run it."""
    root = scratch / "nbgrader"
    shutil.copytree(submitted, root / "submitted")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    common = [f"--CourseDirectory.root={root}", f"--CourseDirectory.db_url=sqlite:///{root}/gradebook.db",
              f"--CourseDirectory.release_directory={root / 'release'}"]
    times = {"generate_assignment": 0.0, "autograde": 0.0, "generate_feedback": 0.0}
    for lab in labs:
        for step in times:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "nbgrader", step, lab, "--force", *common], cwd=REPO / "course",
                           env=env, capture_output=True, check=False)
            times[step] += time.perf_counter() - start
    return times


def hardened(submitted: Path, labs: list[str], scratch: Path, jobs: int) -> tuple[float, dict]:
    root = scratch / "hardened"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(REPO / "course" / "tools" / "grade.py"), "--submitted",
                           str(submitted), "--root", str(root), "--labs", *labs, "--fresh", "--jobs", str(jobs),
                           "--quiet"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
    report = json.loads((root / "grading_report.json").read_text())
    return wall, report


def jail_overhead(root: Path, lab: str, students: list[str], repeats: int) -> dict:
    """Seconds per submission: runner + guard without a jail, and inside bubblewrap (interleaved)."""
    kit = Kit.from_dict(json.loads((root / "journal" / "kits" / f"{lab}.json").read_text())["kit"])
    jailed, bare = Sandbox.detect(), Sandbox("none", "benchmark")
    limits = Limits()
    runs = {"jail": [], "none": []}
    for _ in range(repeats):
        for student in students:
            sub = stage.read_folder(REPO / "course" / "submitted" / student / lab, student, lab)
            prepared = task.instrument(kit, stage.rebuild(kit, sub))
            for name, sandbox in (("jail", jailed), ("none", bare)):
                run = execute.run_job(prepared.job, prepared.guard, dict(kit.support), limits, sandbox)
                runs[name].append(run.wall)
    diffs = [a - b for a, b in zip(runs["jail"], runs["none"])]
    return {"jail_median_s": statistics.median(runs["jail"]), "no_jail_median_s": statistics.median(runs["none"]),
            "overhead_median_s": statistics.median(diffs), "mode": jailed.mode, "n": len(diffs)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first lab only, fewer repeats")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=1,
                        help="alternate the two pipelines this many times (median of the ratios)")
    args = parser.parse_args(argv)
    labs = labtools.lab_names()[:1] if args.quick else labtools.lab_names()
    submitted = REPO / "course" / "submitted"
    students = sorted(p.name for p in submitted.iterdir() if p.is_dir())
    n = len(students) * len(labs)
    ratios, ratios_feedback, walls, plains = [], [], [], []
    for repeat in range(args.repeats):  # interleaved: the machine's load changes under both alike
        with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
            scratch = Path(tmp)
            copy = scratch / "entregas"
            shutil.copytree(submitted, copy)
            plain = nbgrader_serial(copy, labs, scratch)
            wall, report = hardened(copy, labs, scratch, args.jobs)
            if repeat == args.repeats - 1:
                overhead = jail_overhead(scratch / "hardened", labs[0], students[:2], 1 if args.quick else 2)
        autograde = plain["generate_assignment"] + plain["autograde"]
        ratios.append(autograde / wall)
        ratios_feedback.append((autograde + plain["generate_feedback"]) / wall)
        walls.append(wall)
        plains.append(plain)
    wall = statistics.median(walls)
    autograde = statistics.median(p["generate_assignment"] + p["autograde"] for p in plains)
    with_feedback = statistics.median(sum(p.values()) for p in plains)
    facts = {k: report.get(k) for k in ("workers", "task_seconds_mean", "sandbox_seconds_mean",
                                          "merge_seconds_mean", "release_seconds", "sandbox")}
    print(f"class: {len(students)} students x {len(labs)} labs = {n} submissions, {os.cpu_count()} cores")
    print(f"{'pipeline':58s} {'wall s':>8s} {'per sub s':>10s}")
    print(f"{'plain nbgrader, serial: generate_assignment + autograde':58s} {autograde:8.1f} {autograde / n:10.2f}")
    print(f"{'  ... + generate_feedback':58s} {with_feedback:8.1f} {with_feedback / n:10.2f}")
    print(f"{f'hardened grade.py --fresh, {args.jobs} jobs (all of the above)':58s} {wall:8.1f} {wall / n:10.2f}")
    print(f"ratio (throughput gain): {statistics.median(ratios):.2f}x vs autograde, "
          f"{statistics.median(ratios_feedback):.2f}x vs autograde + feedback "
          f"(median of {len(ratios)}: {', '.join(f'{r:.2f}' for r in ratios)})")
    print(f"jail ({overhead['mode']}) per submission: {overhead['jail_median_s']:.2f} s jailed vs "
          f"{overhead['no_jail_median_s']:.2f} s without a jail -> overhead {overhead['overhead_median_s']:+.2f} s "
          f"(median of {overhead['n']}, same runner and guard)")
    print("hardened run:", json.dumps(facts))
    task_s = facts["task_seconds_mean"] or 0.0
    merge_s = facts["merge_seconds_mean"] or 0.0
    total = 500 * 9
    print(f"projection, 500 students x 9 labs = {total} submissions (task {task_s:.1f} s on one core, merge "
          f"{merge_s:.2f} s serial on the instructor's machine; 9 kit runs ahead):")
    for workers in (2, 8, 32, 128, 512):
        tasks = (total + 9) * task_s / workers
        hours = max(tasks, total * merge_s) / 3600
        print(f"  {workers:4d} workers: {hours:6.2f} h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
