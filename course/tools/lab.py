"""`make lab`: JupyterLab for students and instructors, from any start directory.

    python course/tools/lab.py [--no-copies] [jupyter lab options ...]

1. Students work on copies: every lab in labs/ is copied to mis-labs/<lab>/ unless the copy already
   exists (course/tools/workcopy.py: a copy is never overwritten, so nobody loses work; `make release`
   rewrites labs/, never mis-labs/). JupyterLab opens in mis-labs/.
2. nbgrader finds the course wherever Jupyter starts: course/ goes on JUPYTER_CONFIG_PATH, so
   Formgrader (Nbgrader → Formgrader) and the nbgrader commands read course/nbgrader_config.py.

The tests start their JupyterLab servers with `jupyter_env` and `command`, as this script does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import labtools
import workcopy

WORK = workcopy.WORK


def jupyter_env(base: dict | None = None, config_dir: Path = labtools.COURSE) -> dict:
    """The environment JupyterLab runs in: the course's nbgrader config and this interpreter's tools."""
    env = dict(os.environ if base is None else base)
    paths = [str(config_dir)] + [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(dict.fromkeys(paths))
    # nbconvert templates of the course (no MathJax from a CDN; see course/nbgrader_config.py).
    data = [str(labtools.COURSE / "jupyter")] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    env["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys(data))
    # nbgrader runs alembic (a script next to this interpreter) when it creates a gradebook.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def command(root: Path, *options: str) -> list[str]:
    """The JupyterLab command line for a server whose file browser starts at `root`."""
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # Jupyter refuses to run as root without it (containers, CI)
    return argv + list(options)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    options = []
    if "--no-copies" in args:
        args.remove("--no-copies")
    else:
        for lab in workcopy.copy_missing(labtools.LABS, WORK):
            print(f"Copia de trabajo nueva: {(WORK / lab).relative_to(labtools.REPO)}/")
        print(f"Tus cuadernos están en {WORK.relative_to(labtools.REPO)}/ (las copias que ya existían no se tocan).")
        options.append("--LabApp.default_url=/lab/tree/" + WORK.name)
    print("Profesores: Formgrader está en el menú Nbgrader → Formgrader (configuración: course/nbgrader_config.py).")
    sys.stdout.flush()
    argv = command(labtools.REPO, *options, *args)
    os.execve(sys.executable, argv, jupyter_env())
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
