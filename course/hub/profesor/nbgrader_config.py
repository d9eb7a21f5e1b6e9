# nbgrader configuration of the instructor's server on the course hub (course/hub/jupyterhub_config.py).
#
# It is course/nbgrader_config.py (sources in solutions/, the course's feedback options) with the hub's places:
#   releases          labs/                                what `nbgrader release_assignment` hands out (as
#                                                          `make release` wrote it; course/nbgrader_config.py
#                                                          itself releases into course/release/)
#   exchange          <hub dir>/exchange/                 release_assignment, collect, release_feedback
#   collected         <hub dir>/<class>/<student>/<lab>/   what `nbgrader collect` writes (nbgrader's layout)
#   course root       build/grading/<class>/              where `make grade SUBMITTED=<hub dir>/<class>` grades:
#                                                          gradebook.db (Formgrader), autograded/, feedback/
# so the collected folder is graded as it is, Formgrader opens the gradebook that `make grade` wrote, and
# `nbgrader release_feedback` finds the feedback pages it made (course/hub/devoluciones.py adds what
# nbgrader's feedback folders also hold: the submission's timestamp.txt and submission_secret.txt).
import os

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))
c = get_config()  # noqa: F821 - provided by traitlets when it loads this file
load_subconfig(os.path.join(repo, "course", "nbgrader_config.py"))  # noqa: F821

hub = os.environ.get("LLMLAB_HUB_DIR", os.path.join(repo, "build", "hub"))
klass = os.environ.get("LLMLAB_HUB_CLASS", "clase-hub")
root = os.path.join(repo, "build", "grading", klass)  # what grade.py picks for --submitted <hub>/<class>

c.Exchange.root = os.path.join(hub, "exchange")
c.CourseDirectory.root = root
c.CourseDirectory.release_directory = os.path.join(repo, "labs")
c.CourseDirectory.submitted_directory = os.path.join(hub, klass)  # absolute: outside the course root
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(root, "gradebook.db")
os.makedirs(root, exist_ok=True)
