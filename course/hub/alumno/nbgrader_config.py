# nbgrader configuration of a student's server on the course hub (course/hub/jupyterhub_config.py).
#
# Only the exchange: the Assignments tab fetches the released labs, submits and fetches feedback.
# nbgrader 0.9 names a submission after the OS user (all of them share one on this hub), so the student's
# name is given explicitly: the hub's user name, as on Zero to JupyterHub.
import os

c = get_config()  # noqa: F821 - provided by traitlets when it loads this file

c.CourseDirectory.course_id = "llmlab"
c.Exchange.root = os.path.join(os.environ["LLMLAB_HUB_DIR"], "exchange")
if os.environ.get("JUPYTERHUB_USER"):
    c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
