"""Build the nbgrader source notebooks: solutions/<lab>/<lab>.py -> solutions/<lab>/<lab>.ipynb.

The notebook is executed so that it carries the outputs nbval compares against. Usage:

    python course/tools/build_solutions.py [LAB ...] [--no-execute] [--stamp] [--check]

`--check` builds nothing; it fails if a notebook's cells differ from its script (someone edited one
without the other). `--stamp` writes the repository address configured in pyproject.toml into the
built notebooks (Colab badge and setup cell, see `hosting`) without executing them; `make release`
runs it first, so changing the address is one line plus `make release`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import hosting
import labtools


def execute(nb, lab: str, timeout: int = 600):
    from nbclient import NotebookClient

    env_backup = dict(os.environ)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # stored outputs keep their plots
    os.environ["OMP_NUM_THREADS"] = "1"  # results independent of the machine's core count
    try:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(labtools.SOLUTIONS / lab)}},
            record_timing=False,
            store_widget_state=False,  # widget ids are random: storing them makes every rebuild differ
        )
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(env_backup)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    return nb


def coalesce_streams(outputs: list) -> list:
    """Merge consecutive stdout (or stderr) outputs: how a cell's prints are split depends on when the kernel
    flushed them (a busy machine splits more), and the stored notebook should not."""
    merged: list = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def build(lab: str, run: bool = True) -> float:
    start = time.perf_counter()
    nb = labtools.read_source(lab)
    if run:
        execute(nb, lab)
    labtools.write_notebook(nb, labtools.solution_path(lab))
    return time.perf_counter() - start


def stamp(lab: str) -> bool:
    """Rewrite the hosting cells of the built notebook from the settings; True if it changed."""
    path = labtools.solution_path(lab)
    nb = labtools.load_json_notebook(path)
    if not hosting.stamp(nb, lab):
        return False
    labtools.write_notebook(nb, path)
    return True


def out_of_sync(lab: str) -> list[str]:
    """Describe every difference between the script and the built notebook (empty when in sync)."""
    path = labtools.solution_path(lab)
    if not path.exists():
        return [f"{path} does not exist: run `make solutions`"]
    want = labtools.cell_sources(labtools.read_source(lab))
    have = labtools.cell_sources(labtools.load_json_notebook(path))
    problems = []
    if len(want) != len(have):
        problems.append(f"{lab}: script has {len(want)} cells, notebook has {len(have)}")
    for i, (w, h) in enumerate(zip(want, have)):
        if w != h:
            problems.append(f"{lab}: cell {i} differs ({w[1][:60]!r} vs {h[1][:60]!r})")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="labs to build (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="write the notebook without running it")
    parser.add_argument("--check", action="store_true", help="only check that notebooks match their scripts")
    parser.add_argument("--stamp", action="store_true",
                        help="write the configured repository address into the built notebooks (no execution)")
    args = parser.parse_args(argv)
    labs = args.labs or labtools.lab_names()
    if args.stamp:
        for lab in labs:
            if labtools.solution_path(lab).exists() and stamp(lab):
                print(f"{lab}: repository address updated ({hosting.settings().repository})")
        if not args.check:
            return 0
    if args.check:
        problems = [p for lab in labs for p in out_of_sync(lab)]
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    for lab in labs:
        seconds = build(lab, run=not args.no_execute)
        print(f"{lab}: {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
