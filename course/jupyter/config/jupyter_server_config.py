# Jupyter server settings of the course (course/tools/lab.py puts this folder on JUPYTER_CONFIG_PATH).
# jupyter_server_config.d/llmlab.json enables course/jupyter/formgrader_es.py: Formgrader in Spanish, without the
# buttons that would go around the course's own tools.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
