"""nbgrader preprocessor for feedback (course/nbgrader_config.py names `feedback.CleanTestTracebacks`).

The implementation lives in the grading package (grading/feedback.py), so that Dask workers get it with it.
"""

from grading.feedback import CleanTestTracebacks  # noqa: F401
