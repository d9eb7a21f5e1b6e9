"""`make hub`: the course's JupyterHub on 127.0.0.1, for a local trial of the whole class through nbgrader's exchange.

    python course/hub/hub.py [--port 8000] [--students ana,diego,lucia] [--instructor profesor] [--dir build/hub]

It prints how to log in (one shared password, made up at each start unless LLMLAB_HUB_PASSWORD is set) and
runs until Ctrl-C; JupyterHub then stops every single-user server and the proxy it started, so nothing is
left running. The configuration is course/hub/jupyterhub_config.py; tests/test_hub.py starts the hub with
`environment` and `command`, as this script does.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PROXY = HERE / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy"


def environment(data: Path, port: int, students: list[str], instructor: str, password: str, klass: str,
                hub_port: int = 8081, api_port: int = 8001, api_token: str | None = None,
                base: dict | None = None) -> dict:
    """The environment jupyterhub_config.py reads."""
    env = dict(os.environ if base is None else base)
    env.update({
        "LLMLAB_HUB_DIR": str(data), "LLMLAB_HUB_PORT": str(port), "LLMLAB_HUB_HUB_PORT": str(hub_port),
        "LLMLAB_HUB_API_PORT": str(api_port), "LLMLAB_HUB_STUDENTS": ",".join(students),
        "LLMLAB_HUB_INSTRUCTOR": instructor, "LLMLAB_HUB_PASSWORD": password, "LLMLAB_HUB_CLASS": klass,
        # the hub runs alembic and the single-user servers from this interpreter's environment
        "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
    })
    if api_token:
        env["LLMLAB_HUB_API_TOKEN"] = api_token
    return env


def role_environment(role: str, data: Path, klass: str, home: Path) -> dict:
    """What a single-user server of `role` ("profesor" or "alumno") adds to its environment.

    The instructor's terminal has the same, so `nbgrader ...`, `make grade` and devoluciones.py read the
    instructor's nbgrader config there; the tests run the instructor's commands with it.
    """
    return {
        "JUPYTER_CONFIG_PATH": str(HERE / role),
        "JUPYTER_PATH": str(REPO / "course" / "jupyter"),  # the course's offline nbconvert templates
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
        "LLMLAB_HUB_DIR": str(data), "LLMLAB_HUB_CLASS": klass, "LLMLAB_HUB_ROLE": role,
        "JUPYTERLAB_SETTINGS_DIR": str(home / ".jupyter" / "lab" / "user-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / ".jupyter" / "lab" / "workspaces"),
    }


def command(data: Path) -> list[str]:
    return [sys.executable, "-m", "jupyterhub", "-f", str(HERE / "jupyterhub_config.py")]


def missing_proxy() -> str | None:
    """Why the hub cannot start here, or None (the proxy is an npm package: `make hub` installs it)."""
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "JupyterHub is not installed (pip install -e '.[hub]'; make creates .venv with it)"
    if PROXY.exists():
        return None
    if shutil.which("npm") is None:
        return "npm is missing: install Debian's nodejs and npm (.ci/debian-packages; `make sysdeps` as root)"
    return f"configurable-http-proxy is not installed: npm ci --prefix {PROXY.parents[2].relative_to(REPO)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The course's JupyterHub on 127.0.0.1 (a local trial).")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--students", default="ana,diego,lucia")
    parser.add_argument("--instructor", default="profesor")
    parser.add_argument("--dir", type=Path, default=REPO / "build" / "hub", help="the hub's data folder")
    parser.add_argument("--class-name", default="clase-hub", help="name of the collected folder")
    args = parser.parse_args(argv)
    reason = missing_proxy()
    if reason:
        raise SystemExit(reason)
    data = args.dir.resolve()
    data.mkdir(parents=True, exist_ok=True)
    password = os.environ.get("LLMLAB_HUB_PASSWORD") or secrets.token_urlsafe(9)
    students = [s.strip() for s in args.students.split(",") if s.strip()]
    env = environment(data, args.port, students, args.instructor, password, args.class_name)
    collected = data / args.class_name
    print(f"""
JupyterHub del curso en http://127.0.0.1:{args.port}/  (solo en esta máquina; Ctrl-C lo para todo)

  Usuarios:   {", ".join(students)} (alumnos) y {args.instructor} (profesor)
  Contraseña: {password}   (la misma para todos; es una prueba local)

  Alumnos: pestaña Assignments (Nbgrader → Assignment List): Fetch, trabajar, Submit; luego Fetch Feedback.
  Profesor (terminal de su servidor, en el repositorio):
    nbgrader release_assignment <lab>       publicar un lab de labs/ (make release lo regenera)
    nbgrader collect <lab>                  recoger las entregas en {collected.relative_to(REPO) if collected.is_relative_to(REPO) else collected}/
    make grade SUBMITTED={collected} LABS=<lab>
    Formgrader (Nbgrader → Formgrader) para las respuestas razonadas, y make grades SUBMITTED=... después
    python course/hub/devoluciones.py <lab>  devolver las correcciones (nbgrader release_feedback)
  Datos del hub (intercambio, carpetas personales): {data}
""", flush=True)
    proc = subprocess.Popen(command(data), env=env, cwd=data)
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reached the hub too (same process group): let it clean up
        try:
            return proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
