# nbgrader configuration of the llmlab course.
#
# The course root is this folder: the demo class's submissions live in submitted/, and grading
# writes gradebook.db, autograded/, feedback/ and grades.csv here (none of them is committed).
# Sources are the instructor notebooks in ../solutions. nbgrader's own releases (Formgrader's «Generar»
# button) go to release/ here, never to ../labs: only `make release` (course/tools/release.py) writes labs/, with
# the find-the-bug code in place and a copy of whatever someone changed there.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)
sys.path.insert(0, os.path.join(here, "tools"))  # for feedback.CleanTestTracebacks

c = get_config()  # noqa: F821 - provided by traitlets when it loads this file

c.CourseDirectory.course_id = "llmlab"
c.CourseDirectory.root = here
c.CourseDirectory.source_directory = os.path.join(repo, "solutions")
c.CourseDirectory.release_directory = os.path.join(here, "release")
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")
# The percent scripts next to each solution notebook are authoring sources: never release them.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "*.py"]

# What students see where a solution was removed.
# `EjercicioSinHacer` (llmlab.checks, imported by every setup cell) shows a Spanish message, no traceback.
c.ClearSolutions.code_stub = {"python": "# ESCRIBE TU CÓDIGO AQUÍ\nraise EjercicioSinHacer()"}
c.ClearSolutions.text_stub = "ESCRIBE AQUÍ TU RESPUESTA"

# Every cell of a submission gets at most this long; a stuck cell is interrupted, the rest still run.
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True
c.Execute.startup_timeout = 120

# Feedback never reveals hidden tests: their source is removed (ClearHiddenTests) and error
# tracebacks of test cells, which can quote hidden lines, are reduced to their message.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "feedback.CleanTestTracebacks",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# Math in Formgrader and in the feedback pages, offline: LaTeX is written as MathML when the page is
# built (tools/mathml.py, with the latex2mathml package), and nbconvert's MathJax macro, which would load
# a CDN script, is replaced by an empty one: course/jupyter/ goes first on JUPYTER_PATH, where nbconvert
# looks for templates before its own (nbgrader fixes the template folders of its exporters, not this).
# course/tools/grading/feedback.py builds the feedback pages with the same options (mathml.exporter_options).
c.HTMLExporter.filters = {"markdown2html": "mathml.markdown2html"}
_jupyter_path = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
os.environ["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys([os.path.join(here, "jupyter"), *_jupyter_path]))
