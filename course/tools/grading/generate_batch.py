"""nbgrader's generate_assignment for several labs in one process.

`nbgrader generate_assignment LAB` pays nbgrader's imports and the gradebook's alembic check (~3 s of CPU) for each
lab; nine labs in one process cost ~8 s of CPU instead of ~36 s, with the same release folders and gradebook rows.
Used by the grading pipeline's release stage (pipeline.py) and by `make release` (course/tools/release.py).

    command(options, labs)   the command line: run it with cwd = the course folder (nbgrader_config.py is read
                             there, as `python -m nbgrader` reads it), and the virtual environment's bin/ on PATH
    released(line)           the lab a line of its standard output says is done, else None

Each lab is released as `nbgrader generate_assignment LAB --force OPTIONS` would; nbgrader's log goes to standard
error. The first lab nbgrader cannot release ends the process with status 1 (its later labs are not released).
"""

from __future__ import annotations

import sys

MARK = "llmlab-released "

# Run with `python -c`: like `python -m nbgrader`, the course folder (cwd) is first on sys.path, and nothing of
# course/tools/grading (whose module names nbgrader_config.py's imports could pick up) is.
_BATCH = r"""
import sys
from nbgrader.apps.generateassignmentapp import GenerateAssignmentApp
sep = sys.argv.index("--")
options, labs = sys.argv[1:sep], sys.argv[sep + 1:]
for lab in labs:
    GenerateAssignmentApp.clear_instance()
    app = GenerateAssignmentApp.instance()
    app.initialize([lab, "--force", *options])
    app.start()  # sys.exit(1) when nbgrader cannot release the lab
    print(%r + lab, flush=True)
""" % MARK


def command(options: list[str], labs: list[str]) -> list[str]:
    return [sys.executable, "-c", _BATCH, *options, "--", *labs]


def released(line: str) -> str | None:
    line = line.rstrip("\n")
    return line[len(MARK):] if line.startswith(MARK) else None
