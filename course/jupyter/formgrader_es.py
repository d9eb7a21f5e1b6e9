"""Formgrader in Spanish, without the buttons that would go around the course's tools (a Jupyter server extension).

course/jupyter/config/ (on JUPYTER_CONFIG_PATH when `make lab` or `make formgrader` starts JupyterLab) enables it.
nbgrader renders its pages with a Jinja environment of its own templates; this extension puts the course's
templates of course/jupyter/formgrader/ first (each extends nbgrader's, reachable as "nbgrader/<name>"), and draws
the grading view with course/jupyter/nbconvert/templates/formgrade_es. Both end with formgrader/traduccion.html:
nbgrader's words in Spanish, and its release, collect, autograde and feedback buttons hidden.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "formgrader"


def _jupyter_server_extension_points():
    return [{"module": "formgrader_es"}]


def _load_jupyter_server_extension(serverapp) -> None:
    from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader
    from nbgrader.server_extensions.formgrader import base, handlers

    original = FileSystemLoader(handlers.template_path)
    env = Environment(loader=ChoiceLoader([FileSystemLoader(str(TEMPLATES)), PrefixLoader({"nbgrader": original}),
                                           original]))
    exporters = {}

    def render(self, name, **ns):
        return env.get_template(name).render(**ns)

    def exporter(self):
        nbgrader_exporter = self.settings["nbgrader_exporter"]
        if id(nbgrader_exporter) not in exporters:
            from nbconvert.exporters import HTMLExporter

            exporters[id(nbgrader_exporter)] = HTMLExporter(
                config=nbgrader_exporter.config, template_name="formgrade_es",
                extra_template_paths=[handlers.template_path, str(TEMPLATES)],
                extra_template_basedirs=[*nbgrader_exporter.extra_template_basedirs, handlers.template_path])
        return exporters[id(nbgrader_exporter)]

    base.BaseHandler.render = render
    base.BaseHandler.exporter = property(exporter)
    serverapp.log.info("formgrader_es: Formgrader en español (course/jupyter/formgrader/)")
