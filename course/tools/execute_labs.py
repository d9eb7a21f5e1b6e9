"""Run every solution notebook with papermill into build/execute/ and print how long each took.

    python course/tools/execute_labs.py [LAB ...] [-p NAME VALUE ...] [--out DIR] [--budget SECONDS]

The table ends with the total and the course's time budget (10 minutes for the whole course on two
cores, `--budget`); a total over budget is reported, not an error (timings depend on the machine's load).

Parameters go to the cell tagged `parameters` of each notebook (papermill injects them right after
it); a lab without that parameter simply ignores it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import labtools


def parameters_of(nb) -> set[str]:
    import ast

    names: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.Assign):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def main(argv: list[str] | None = None) -> int:
    import papermill

    parser = argparse.ArgumentParser(description="Execute every lab with papermill.")
    parser.add_argument("labs", nargs="*")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("--out", type=Path, default=labtools.REPO / "build" / "execute")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds the whole course should take")
    args = parser.parse_args(argv)
    labs = args.labs or labtools.lab_names()
    rows, failed = [], []
    for lab in labs:
        source = labtools.solution_path(lab)
        known = parameters_of(labtools.load_json_notebook(source))
        params = {}
        for name, value in args.parameter:
            if name in known:
                try:
                    params[name] = __import__("ast").literal_eval(value)
                except (ValueError, SyntaxError):
                    params[name] = value
        out = args.out / f"{lab}.ipynb"
        out.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        status = "ok"
        try:
            papermill.execute_notebook(
                str(source), str(out), parameters=params, kernel_name="python3",
                cwd=str(source.parent), execution_timeout=args.timeout, progress_bar=False,
            )
        except Exception as exc:  # keep going: report every notebook
            status = f"ERROR: {type(exc).__name__}"
            failed.append(lab)
        rows.append((lab, time.perf_counter() - start, status, params))
    width = max(len(r[0]) for r in rows)
    print(f"\n{'notebook'.ljust(width)}  segundos  estado  parámetros")
    for lab, seconds, status, params in rows:
        print(f"{lab.ljust(width)}  {seconds:8.1f}  {status}  {params or ''}")
    total = sum(r[1] for r in rows)
    print(f"{'total'.ljust(width)}  {total:8.1f}  {'dentro' if total <= args.budget else 'FUERA'} del presupuesto "
          f"de {args.budget:.0f} s")
    if hasattr(os, "getloadavg"):
        print(f"carga media de la máquina al terminar: {os.getloadavg()[0]:.1f} (los tiempos crecen con ella)")
    print(f"\nCuadernos ejecutados en {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
