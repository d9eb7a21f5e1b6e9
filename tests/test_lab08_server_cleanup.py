"""Lab 08 starts an HTTP server from the notebook: it must never be left running.

The notebook's own cells run in a real Jupyter kernel (the setup and parameter cells, then the cell that
starts the server with `launch(...)` as a context manager), with a failure injected after the server has
started: an exception inside the `with` block, a failing cell after it, and the kernel killed while the
server runs. Each time the server's process must be gone, and the launcher's temporary folder with it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
import pytest

from labharness import labtools

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.slow  # each case starts a kernel and a server (several seconds)

LAB = "lab08-servir-un-modelo"


def _gone(pid: int, timeout_s: float = 20.0) -> bool:
    """True once process ``pid`` no longer runs (a zombie waiting for its new parent counts as gone)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


def _server_notebook(inject_inside: str | None = None, inject_after: str | None = None):
    """The lab's setup, parameter and configuration cells plus its server cell, with code injected."""
    nb = labtools.load_json_notebook(labtools.solution_path(LAB))
    code = [c for c in nb.cells if c.cell_type == "code"]
    server = next(c for c in code if "with launch(" in c.source)
    first_cells = code[:3]  # preparación, parámetros, valores derivados de los parámetros
    assert "google.colab" in first_cells[0].source and "parameters" in first_cells[1].metadata.get("tags", [])
    source = server.source
    if inject_inside:
        lines = source.splitlines()
        at = next(i for i, line in enumerate(lines) if "with launch(" in line)
        lines.insert(at + 1, "    " + inject_inside)
        source = "\n".join(lines)
    cells = [nbformat.v4.new_code_cell(c.source) for c in first_cells]
    cells.append(nbformat.v4.new_code_cell(source))
    if inject_after:
        cells.append(nbformat.v4.new_code_cell(inject_after))
    out = nbformat.v4.new_notebook()
    out.cells = cells
    out.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return out


def _run(nb, tmp_path, expected_error):
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(expected_error):
        client.execute()


def _record(tmp_path) -> str:
    pid_file = tmp_path / "server.pid"
    return (f"open({str(pid_file)!r}, 'w').write(f'{{servidor.pid}} {{servidor._workdir}} {{int(servidor.alive)}}')")


def _recorded(tmp_path):
    pid, workdir, alive = (tmp_path / "server.pid").read_text().split()
    return int(pid), workdir, alive == "1"


def test_an_error_inside_the_with_block_stops_the_server(tmp_path):
    nb = _server_notebook(inject_inside=_record(tmp_path) + "; raise RuntimeError('fallo inyectado')")
    _run(nb, tmp_path, nbclient.exceptions.CellExecutionError)
    pid, workdir, alive = _recorded(tmp_path)
    assert alive, "the server was running when the failure was injected"
    assert _gone(pid), f"the server (pid {pid}) is still running after the failing cell"
    assert not os.path.exists(workdir)


def test_the_server_is_already_stopped_when_a_later_cell_fails(tmp_path):
    nb = _server_notebook(inject_after=_record(tmp_path) + "\nraise RuntimeError('fallo inyectado')")
    _run(nb, tmp_path, nbclient.exceptions.CellExecutionError)
    pid, workdir, alive = _recorded(tmp_path)
    assert not alive, "the server cell must stop the server before the next cell runs"
    assert _gone(pid) and not os.path.exists(workdir)


def test_a_dead_kernel_takes_the_server_with_it(tmp_path):
    kill = _record(tmp_path) + "; import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    nb = _server_notebook(inject_inside=kill)
    _run(nb, tmp_path, nbclient.exceptions.DeadKernelError)
    pid, workdir, alive = _recorded(tmp_path)
    assert alive
    assert _gone(pid), f"the server (pid {pid}) outlived its kernel"
