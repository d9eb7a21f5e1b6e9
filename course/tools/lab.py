"""`make lab`: JupyterLab for students and instructors, from any start directory; `make formgrader`: Formgrader on
a class graded with `make grade SUBMITTED=DIR`.

    python course/tools/lab.py [--no-copies] [jupyter lab options ...]
    python course/tools/lab.py --no-copies --class DIR [jupyter lab options ...]   # make formgrader SUBMITTED=DIR

1. Students work on copies: every lab in labs/ is copied to mis-labs/<lab>/ unless the copy already
   exists (course/tools/workcopy.py: a copy is never overwritten, so nobody loses work; `make release`
   rewrites labs/, never mis-labs/). JupyterLab opens in mis-labs/.
2. nbgrader finds the course wherever Jupyter starts: course/ goes on JUPYTER_CONFIG_PATH, so
   Formgrader (Nbgrader → Formgrader) and the nbgrader commands read course/nbgrader_config.py.

3. With --class DIR (the folder of submissions given to `make grade SUBMITTED=DIR`, or its grading root
   build/grading/<name>/), Formgrader reads that class's gradebook: `class_config` writes
   <root>/formgrader/nbgrader_config.py (the course's config with the class's root, gradebook and release
   folder) and JupyterLab reads it instead of course/nbgrader_config.py.
4. JupyterLab speaks Spanish (the language pack jupyterlab-language-pack-es-ES, locale es_ES in
   course/jupyter/lab/settings/overrides.json) and shows no news pop-up; Formgrader's pages are in Spanish and
   without the buttons that would go around the course's tools (course/jupyter/formgrader_es.py).

The tests start their JupyterLab servers with `jupyter_env` and `command`, as this script does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import labtools
import workcopy

WORK = workcopy.WORK
JUPYTER = labtools.COURSE / "jupyter"
GRADING = labtools.REPO / "build" / "grading"


def jupyter_env(base: dict | None = None, config_dir: Path = labtools.COURSE) -> dict:
    """The environment JupyterLab runs in: the course's nbgrader config and this interpreter's tools."""
    env = dict(os.environ if base is None else base)
    # course/jupyter/config: the server extension that puts Formgrader in Spanish (course/jupyter/formgrader_es.py).
    paths = [str(config_dir), str(JUPYTER / "config")]
    paths += [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(dict.fromkeys(paths))
    # nbconvert templates of the course (no MathJax from a CDN; see course/nbgrader_config.py).
    data = [str(labtools.COURSE / "jupyter")] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    env["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys(data))
    # nbgrader runs alembic (a script next to this interpreter) when it creates a gradebook.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def command(root: Path, *options: str) -> list[str]:
    """The JupyterLab command line for a server whose file browser starts at `root`."""
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}",
            # Spanish interface, no news pop-up (course/jupyter/lab/settings/overrides.json)
            f"--LabApp.app_settings_dir={JUPYTER / 'lab' / 'settings'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # Jupyter refuses to run as root without it (containers, CI)
    return argv + list(options)


def class_root(folder: Path) -> Path:
    """The grading root of a class: the folder itself if it is one, else where `make grade SUBMITTED=folder`
    graded it (build/grading/<name>/, course/tools/grade.py)."""
    folder = Path(folder).resolve()
    if (folder / "gradebook.db").exists():
        return folder
    return GRADING / folder.name


def class_config(root: Path) -> Path:
    """A config folder whose nbgrader_config.py is the course's, with the class at `root` (written there)."""
    root = Path(root).resolve()
    config = root / "formgrader"
    config.mkdir(parents=True, exist_ok=True)
    text = (
        "# Written by course/tools/lab.py (make formgrader): the course's configuration, on this class.\n"
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(labtools.COURSE / 'nbgrader_config.py')!r})\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.CourseDirectory.db_url = {'sqlite:///' + str(root / 'gradebook.db')!r}\n"
        "# Formgrader's «Generar» writes here, the class's own release (never labs/ or solutions/).\n"
        f"c.CourseDirectory.release_directory = {str(root / 'release')!r}\n"
        "# The course does not use nbgrader's exchange (its buttons are hidden); a folder of the class's own keeps\n"
        "# nbgrader from complaining about /usr/local/share/nbgrader/exchange.\n"
        f"c.Exchange.root = {str(root / 'exchange')!r}\n"
    )
    path = config / "nbgrader_config.py"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return config


def server_root(course_root: Path) -> Path:
    """Formgrader needs the course root inside the server's root folder: the repository, or the class's parent."""
    course_root = Path(course_root).resolve()
    return labtools.REPO if course_root.is_relative_to(labtools.REPO) else course_root.parent


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    options = []
    config_dir, root = labtools.COURSE, labtools.REPO
    if "--class" in args:
        i = args.index("--class")
        if i + 1 >= len(args) or not args[i + 1].strip():
            print("!! Falta la carpeta de la clase: make formgrader SUBMITTED=carpeta (la misma que diste a "
                  "make grade).", file=sys.stderr)
            return 2
        folder = Path(args[i + 1])
        del args[i:i + 2]
        course_root = class_root(folder)
        if not (course_root / "gradebook.db").exists():
            print(f"!! La clase {folder} no está corregida todavía (no hay {course_root / 'gradebook.db'}). "
                  f"Corrígela primero: make grade SUBMITTED={folder} (con LABS=<lab> si es una carpeta plana de "
                  "cuadernos) y vuelve a ejecutar make formgrader.", file=sys.stderr)
            return 2
        config_dir, root = class_config(course_root), server_root(course_root)
        print(f"Formgrader sobre la clase de {course_root} (gradebook {course_root / 'gradebook.db'}).")
        print(f"Tras corregir a mano: make grades SUBMITTED={folder}, que rehace grades.csv, el informe y las "
              "páginas de devolución con tus notas y comentarios.")
    if "--no-copies" in args:
        args.remove("--no-copies")
    else:
        for lab in workcopy.copy_missing(labtools.LABS, WORK):
            print(f"Copia de trabajo nueva: {(WORK / lab).relative_to(labtools.REPO)}/")
        print(f"Tus cuadernos están en {WORK.relative_to(labtools.REPO)}/ (las copias que ya existían no se tocan).")
        options.append("--LabApp.default_url=/lab/tree/" + WORK.name)
    where = "course/nbgrader_config.py" if config_dir == labtools.COURSE else str(config_dir / "nbgrader_config.py")
    print(f"Profesores: Formgrader está en el menú Nbgrader → Formgrader (configuración: {where}).")
    sys.stdout.flush()
    argv = command(root, *options, *args)
    os.execve(sys.executable, argv, jupyter_env(config_dir=config_dir))
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
