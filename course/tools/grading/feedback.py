"""Feedback for students, and the outputs the grader keeps.

- `sanitize_outputs`: the outputs of a graded notebook, reduced to what cannot hurt whoever opens it later
  (plain text, PNG/JPEG images with valid base64, error messages), each capped in size with a note. Student
  code chooses its outputs: no HTML, JavaScript or SVG from it reaches formgrader or a feedback page.
- `render`: the feedback page of one submission (nbgrader's feedback template, scores per cell), without the
  hidden tests and with test-cell tracebacks reduced to their message.
- `CleanTestTracebacks`: that last step as an nbgrader preprocessor, for `nbgrader generate_feedback`
  (configured in course/nbgrader_config.py).

A failed test cell's traceback quotes source lines around the failing statement, and for a hidden test those
lines are the hidden test itself. We keep only "ErrorName: message"; the messages of hidden tests are generic
by construction (see `llmlab.checks.hidden`).
"""

from __future__ import annotations

import copy
import os
import re

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

TEXT_LIMIT = 100_000  # characters kept per text output
IMAGE_LIMIT = 2_000_000  # base64 characters kept per image
SAFE_MIME = ("image/png", "image/jpeg", "text/plain")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
SPANISH_ERRORS = ("FalloComprobacion", "EjercicioSinHacer")  # llmlab.checks: their message is for students


class CleanTestTracebacks(Preprocessor):
    # nbconvert registers preprocessors disabled unless they say otherwise.
    enabled = Bool(True).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[salida recortada: se muestran {limit} de {len(text)} caracteres]\n"


def sanitize_outputs(outputs: list) -> list[dict]:
    """Outputs safe to store and to show: plain text and raster images only, each capped."""
    clean = []
    for out in outputs[:200]:
        if not isinstance(out, dict):
            continue
        kind = out.get("output_type")
        if kind == "stream":
            name = out.get("name") if out.get("name") in ("stdout", "stderr") else "stdout"
            clean.append({"output_type": "stream", "name": name, "text": _cut(_text(out.get("text")))})
        elif kind == "error":
            clean.append({"output_type": "error", "ename": _cut(_text(out.get("ename")), 200),
                          "evalue": _cut(_text(out.get("evalue")), 5000),
                          "traceback": [_cut(_text(line), 5000) for line in (out.get("traceback") or [])[:100]
                                        if isinstance(line, str)]})
        elif kind in ("display_data", "execute_result"):
            data = out.get("data") if isinstance(out.get("data"), dict) else {}
            kept = {}
            for mime in SAFE_MIME:
                value = _text(data.get(mime)) if mime in data else None
                if value is None:
                    continue
                if mime.startswith("image/"):
                    if len(value) <= IMAGE_LIMIT and _BASE64.fullmatch(value):
                        kept[mime] = value
                else:
                    kept[mime] = _cut(value)
            if not kept:
                dropped = ", ".join(sorted(str(k) for k in data)[:5]) or "vacía"
                kept = {"text/plain": f"[salida omitida al corregir: {dropped}]"}
            new = {"output_type": kind, "data": kept, "metadata": {}}
            if kind == "execute_result":
                new["execution_count"] = None
            clean.append(new)
    if len(outputs) > 200:
        clean.append({"output_type": "stream", "name": "stderr",
                      "text": f"[se omiten {len(outputs) - 200} salidas más]\n"})
    return clean


def _text(value) -> str:
    if isinstance(value, list):
        value = "".join(str(v) for v in value)
    return value if isinstance(value, str) else ("" if value is None else str(value))


def render(nb: dict, lab: str, scores: dict, points: dict, score: float, max_score: float,
           comments: dict | None = None, hand_graded: bool = False) -> str:
    """The feedback page: the course's Spanish template (course/jupyter/nbconvert/templates/feedback_es), hidden
    tests removed, test tracebacks reduced to their message, each graded cell named by its exercise.

    `scores` and `points` map grade ids to points (a written answer not graded yet: absent from `scores`);
    `comments` maps grade ids to the instructor's comment (Formgrader), shown under the answer; `hand_graded`
    marks the page as carrying hand scores (gradebook.rewrite_feedback finds it again when they change).
    """
    import nbformat
    from nbconvert.exporters import HTMLExporter
    from nbgrader.preprocessors import ClearHiddenTests

    comments = comments or {}
    nb = nbformat.from_dict(copy.deepcopy(nb))
    labels = exercise_labels(nb)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if not meta:
            continue
        gid = meta.get("grade_id")
        if meta.get("grade") or meta.get("task"):
            meta["score"] = scores.get(gid) if gid in scores else None
            meta["points"] = points.get(gid, meta.get("points", 0))
        meta["comment"] = comments.get(gid) or None
        meta["label"] = labels.get(gid, gid)
    resources = {"nbgrader": {"notebook": lab, "score": score, "max_score": max_score, "late_penalty": 0,
                              "hand_graded": hand_graded}}
    nb, resources = ClearHiddenTests().preprocess(nb, resources)
    nb, resources = CleanTestTracebacks().preprocess(nb, resources)
    for cell in nb.cells:  # the course's own errors read as in Jupyter: the Spanish message, no traceback
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error" and output.get("ename") in SPANISH_ERRORS:
                output["traceback"] = [f"{output['ename']}: {output.get('evalue', '')}"]
    global _EXPORTER
    if _EXPORTER is None:  # building the exporter (templates, filters) costs more than using it: once per process
        import mathml  # offline math: LaTeX written as MathML, no MathJax from a CDN (course/tools/mathml.py)

        _EXPORTER = HTMLExporter(template_name="feedback_es", extra_template_paths=[_NBGRADER_CSS, _NBGRADER_TEMPLATES],
                                 **mathml.exporter_options(_NBGRADER_TEMPLATES))
    html, _ = _EXPORTER.from_notebook_node(nb, resources=resources)
    return html


_EXERCISE = re.compile(r"ejercicio\s+(\d+)", re.IGNORECASE)


def exercise_labels(nb) -> dict[str, str]:
    """A name for every graded cell, as the student knows it: «Ejercicio 2 · nll», «Respuesta razonada 1».

    A test cell says which exercise it checks in its first line («# Comprobación del ejercicio 2 · ...») and
    checks the answer cell before it (named by that cell's grade id, the function the student writes).
    """
    labels, answer, written = {}, None, 0
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader") or {}
        gid = meta.get("grade_id")
        if not gid:
            continue
        source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if cell.cell_type == "markdown" and (meta.get("solution") or meta.get("task")):
            written += 1
            labels[gid] = f"Respuesta razonada {written}"
        elif meta.get("solution"):
            answer = gid
            labels[gid] = f"Tu código: {gid}"
        elif meta.get("grade"):
            first = source.strip().splitlines()[0] if source.strip() else ""
            found = _EXERCISE.search(first)
            name = f"Ejercicio {found.group(1)}" if found else "Comprobación"
            labels[gid] = f"{name} · {answer}" if answer else name
    return labels


_EXPORTER = None


def _nbgrader_dir(*parts: str) -> str:
    import nbgrader

    return os.path.join(os.path.dirname(nbgrader.__file__), *parts)


_NBGRADER_TEMPLATES = _nbgrader_dir("server_extensions", "formgrader", "templates")
_NBGRADER_CSS = _nbgrader_dir("server_extensions", "formgrader", "static", "node_modules", "bootstrap", "dist", "css")
