# The Littlest JupyterHub: /opt/tljh/config/jupyterhub_config.d/llmlab.py (course/hub/tljh/instalar.sh copies it).
# TLJH gives every user a Unix account (jupyter-<name>) and one shared environment in /opt/tljh/user.
# The students' nbgrader config names submissions after the hub user (ana, not jupyter-ana).
INSTRUCTORS = {"profesor"}
COURSE = "/srv/llmlab/repo"


def llmlab_roles(spawner):
    role = "profesor" if spawner.user.name in INSTRUCTORS else "alumno"
    spawner.environment.update({
        "JUPYTER_CONFIG_PATH": f"{COURSE}/course/hub/{role}",
        "JUPYTER_PATH": f"{COURSE}/course/jupyter",
        "LLMLAB_HUB_DIR": "/srv/llmlab",
        "LLMLAB_HUB_CLASS": "clase",
    })
    if role == "profesor":  # Formgrader needs the course root (build/grading/clase/) under the server's root
        spawner.notebook_dir = COURSE


c.Spawner.pre_spawn_hook = llmlab_roles  # noqa: F821 - `c` is JupyterHub's config
c.Spawner.default_url = "/lab"
