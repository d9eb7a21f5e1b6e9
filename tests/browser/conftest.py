"""Fixtures of the browser suite: one Chromium and one JupyterLab server for the whole suite (this package).

Both are expensive to start and cheap to share; each test gets its own page behind a network guard,
and its kernels are shut down when it ends. Screenshots go to build/screenshots/ (a CI artefact).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest


from browser import chromium, jupyterlab
from labharness import labtools


@pytest.fixture(scope="package")
def browser_context():
    reason = chromium.unavailable()
    if reason:
        pytest.skip(reason)
    with chromium.browser() as context:
        yield context


def _solved_copy(lab: str, target: Path) -> None:
    """The instructor's notebook with its outputs cleared: what "solved top to bottom" runs."""
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)


@pytest.fixture(scope="package")
def lab_server(tmp_path_factory, browser_context):
    """JupyterLab on a scratch root: mis-labs/ holds a student's working copies (made as `make lab` makes
    them), resuelto/ the solved notebooks."""
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"
    import workcopy

    workcopy.copy_missing(labtools.LABS, root / "mis-labs")
    for lab in labtools.lab_names():
        _solved_copy(lab, root / "resuelto" / f"{lab}.ipynb")
    server = jupyterlab.start(root, base)
    yield server
    server.stop()
    assert server.process.poll() is not None  # no orphan server
    chromium.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy2(server.log, chromium.SCREENSHOTS / "jupyterlab.log")  # next to the screenshots, for CI


@pytest.fixture
def page(browser_context, lab_server):
    page = chromium.guarded_page(browser_context)
    yield page
    page.close()
    lab_server.shutdown_kernels()
