"""Math in HTML pages without a script or a CDN: LaTeX becomes MathML when the page is written.

nbconvert's HTML pages (Formgrader's grading view, nbgrader's feedback) leave `$...$` in the text and
load MathJax from a CDN to typeset it in the browser: offline, students and instructors see raw LaTeX.
Here the same markdown parser that finds the math hands it to `latex2mathml` instead, and browsers
draw the MathML themselves (Chromium, Firefox and Safari all do). An expression the converter cannot
read is left as it was.

Used by course/nbgrader_config.py (`HTMLExporter.filters`) and by the course site (course/tools/website.py).
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import pass_context
from latex2mathml.converter import convert
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath


# A Jupyter data folder whose nbconvert templates replace the MathJax macro (a CDN script) with an empty
# one. course/nbgrader_config.py puts it first on JUPYTER_PATH, where nbconvert looks before its own
# templates; exporters built by hand take TEMPLATES as a template base folder.
JUPYTER_DATA = str(Path(__file__).resolve().parents[1] / "jupyter")
TEMPLATES = str(Path(JUPYTER_DATA) / "nbconvert" / "templates")


def to_mathml(latex: str, display: bool) -> str | None:
    """MathML for one expression, or None when the converter cannot read it."""
    try:
        return convert(latex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - unknown commands, unbalanced braces: keep the source instead
        return None


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, with math written as MathML."""

    def block_math(self, body: str) -> str:
        return to_mathml(body, display=True) or super().block_math(body)

    def inline_math(self, body: str) -> str:
        return to_mathml(body, display=False) or super().inline_math(body)

    def latex_environment(self, name: str, body: str) -> str:
        source = f"\\begin{{{name}}}{body}\\end{{{name}}}"
        return to_mathml(source, display=True) or super().latex_environment(name, body)


@pass_context
def markdown2html(context, source: str) -> str:
    """Drop-in for HTMLExporter's `markdown2html` filter (same arguments, same output but the math)."""
    cell = context.get("cell", {})
    path = context.get("resources", {}).get("metadata", {}).get("path", "")
    renderer = MathMLRenderer(escape=False, attachments=cell.get("attachments", {}), path=path,
                              anchor_link_text="¶")
    return MarkdownWithMath(renderer=renderer).render(source)


def exporter_options(nbgrader_templates: str) -> dict:
    """HTMLExporter options for pages with offline math: put these next to nbgrader's template folder."""
    return {"filters": {"markdown2html": markdown2html}, "extra_template_basedirs": [TEMPLATES, nbgrader_templates]}


# ------------------------------------------------------------------------------ Sphinx

def setup(app):
    """Sphinx extension: `html_math_renderer = "mathml"` writes math nodes as MathML (site/conf.py)."""
    from docutils import nodes

    def inline(self, node):
        latex = node.astext()
        self.body.append(to_mathml(latex, display=False) or self.encode(f"\\({latex}\\)"))
        raise nodes.SkipNode

    def block(self, node):
        latex = node.astext()
        mathml = to_mathml(latex, display=True)
        self.body.append(f'<div class="math">{mathml or self.encode(latex)}</div>')
        raise nodes.SkipNode

    app.add_html_math_renderer("mathml", (inline, None), (block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
