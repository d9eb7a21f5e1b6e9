# JupyterHub configuration of the llmlab course, for one machine (`make hub`, tests/test_hub.py).
#
# Everything is read from the environment that course/hub/hub.py sets, so one file serves the local trial and
# the test (README.md in this folder: the variables, TLJH and Zero to JupyterHub):
#
#   LLMLAB_HUB_DIR        the hub's data: exchange/, homes/<user>/, <class>/ (collected submissions), state
#   LLMLAB_HUB_CLASS      name of the collected folder; `make grade SUBMITTED=<dir>/<class>` grades it in
#                         build/grading/<class>/, the instructor's course root (course/hub/profesor/)
#   LLMLAB_HUB_PORT       public port, on 127.0.0.1 only (the hub's and the proxy's own ports: _HUB_PORT, _API_PORT)
#   LLMLAB_HUB_STUDENTS   comma-separated student names; LLMLAB_HUB_INSTRUCTOR the instructor's name
#   LLMLAB_HUB_PASSWORD   the shared password of the trial (SharedPasswordAuthenticator)
#   LLMLAB_HUB_API_TOKEN  optional: token of an admin service, for scripts and tests that drive the REST API
#
# Spawner: SimpleLocalProcessSpawner. Every single-user server runs as the OS user that started the hub, with
# its own home. nbgrader 0.9 takes the student's name from the OS user (except for `jovyan`, the containers'
# user), so the students' nbgrader config sets CourseDirectory.student_id from JUPYTERHUB_USER: the exchange
# records the hub's name, as it does on Zero to JupyterHub. Users cannot be kept apart by file permissions
# here, which is fine for a trial on loopback; a real class uses TLJH (one Unix user each) or Kubernetes
# (one container each), see README.md.
import os
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
repo = here.parents[1]
sys.path.insert(0, str(here))
import hub  # noqa: E402  (course/hub/hub.py: the servers' environment, shared with the tests)

c = get_config()  # noqa: F821 - provided by traitlets when it loads this file

data = Path(os.environ.get("LLMLAB_HUB_DIR", repo / "build" / "hub")).resolve()
students = [s.strip() for s in os.environ.get("LLMLAB_HUB_STUDENTS", "ana,diego,lucia").split(",") if s.strip()]
instructor = os.environ.get("LLMLAB_HUB_INSTRUCTOR", "profesor")
password = os.environ.get("LLMLAB_HUB_PASSWORD")
if not password:
    raise SystemExit("LLMLAB_HUB_PASSWORD is not set: start the hub with `make hub` (course/hub/hub.py)")

# --- network: loopback only
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(os.environ.get("LLMLAB_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("LLMLAB_HUB_HUB_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('LLMLAB_HUB_API_PORT', '8001')}"
# configurable-http-proxy comes from npm, installed by `make hub` into course/hub/proxy/ (package-lock.json)
c.ConfigurableHTTPProxy.command = [str(here / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(data / "proxy.pid")

# --- state: all under the data folder; stopping the hub stops the proxy and every server it started
c.JupyterHub.db_url = "sqlite:///" + str(data / "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = str(data / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(data / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# --- who logs in: one shared password for the trial (a real class: LTI or native, README.md)
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = password
c.Authenticator.allowed_users = set(students) | {instructor}

token = os.environ.get("LLMLAB_HUB_API_TOKEN")
if token:
    c.JupyterHub.services = [{"name": "llmlab-admin", "api_token": token}]
    c.JupyterHub.load_roles = [{"name": "llmlab-admin", "scopes": ["admin:users", "admin:servers", "access:servers",
                                                                   "read:users"], "services": ["llmlab-admin"]}]

# --- the single-user servers: JupyterLab of the course environment (this interpreter's venv)
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(data / "homes" / "{username}")
c.Spawner.cmd = [str(Path(sys.executable).parent / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
if os.geteuid() == 0:
    c.Spawner.args = ["--allow-root"]  # containers and CI run as root; Jupyter refuses without it


def prepare_server(spawner):
    """Instructor or student: which nbgrader/JupyterLab config their server reads, and where it starts."""
    name = spawner.user.name
    role = "profesor" if name == instructor else "alumno"
    home = Path(spawner.home_dir)
    home.mkdir(parents=True, exist_ok=True)
    klass = os.environ.get("LLMLAB_HUB_CLASS", "clase-hub")
    spawner.environment.update(hub.role_environment(role, data, klass, home))
    # The instructor works in the repository (solutions/, make grade, Formgrader); a student in their home.
    spawner.notebook_dir = str(repo if role == "profesor" else home)


c.Spawner.pre_spawn_hook = prepare_server

# The exchange: one shared folder, mode 0777 as nbgrader documents; nbgrader sets the modes of what it makes
# inside (outbound readable, inbound writable but not listable, feedback not listable).
exchange = data / "exchange"
exchange.mkdir(parents=True, exist_ok=True)
os.chmod(exchange, 0o777)
