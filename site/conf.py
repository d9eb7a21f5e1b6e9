"""Sphinx configuration of the course site (`make site`; the pages come from course/tools/website.py)."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "course" / "tools"))  # mathml: LaTeX -> MathML when pages are written

import tomllib  # noqa: E402

_project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

project = "llmlab"
html_title = "llmlab · Cómo funcionan los LLM por dentro"
author = "llmlab"
copyright = "llmlab (código MIT; corpus CC BY 4.0)"
release = version = _project["version"]
language = "es"
# The theme's words in Spanish (locale/es/LC_MESSAGES/sphinx.po: «En esta página», «Volver arriba»...).
locale_dirs = [str(Path(__file__).resolve().parent / "locale")]

extensions = ["myst_nb", "sphinx.ext.autodoc", "mathml"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # the outputs are those of the executed solution notebooks
nb_merge_streams = True
exclude_patterns = ["_cuadernos", "_code", "_imagenes"]
suppress_warnings = ["myst.header", "misc.highlighting_failure"]

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_preserve_defaults = True  # defaults as written in the code (a regex default would break the signature)

html_theme = "furo"
html_math_renderer = "mathml"  # no MathJax, no CDN: the browser draws MathML itself
html_static_path = ["static"]
html_css_files = ["llmlab.css"]
html_show_sourcelink = False
html_copy_source = False
