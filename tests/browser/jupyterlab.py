"""A JupyterLab server for the tests, and how a person drives it: open, click, type, run, save.

The server is started as `make lab` starts it (course/tools/lab.py: same command line, same
environment), on a free loopback port with a random token, in a scratch folder, and it is always
stopped by the test session that started it (no orphan server, no orphan kernel).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
import socket
import re
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
import lab as lab_tool  # noqa: E402  (course/tools/lab.py, what `make lab` runs)

# User settings of the test server: every cell in the DOM (no virtual scrolling), no news pop-ups.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    root: Path
    port: int
    token: str
    process: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
            return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """End every session and kernel the browser started (memory stays flat across labs)."""
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")
        for kernel in self.api("/api/kernels"):
            self.api(f"/api/kernels/{kernel['id']}", method="DELETE")

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.shutdown_kernels()
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(root: Path, scratch: Path, config_dir: Path | None = None, timeout: float = 120) -> Server:
    """Start JupyterLab on `root`; `config_dir` replaces course/ as the folder nbgrader reads its config from."""
    settings = scratch / "settings"
    for name, value in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    env = lab_tool.jupyter_env(config_dir=config_dir or lab_tool.labtools.COURSE)
    env.update(JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(scratch / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(scratch / "runtime"), BROWSER="true")
    port, token = free_port(), secrets.token_hex(16)
    log = scratch / "jupyterlab.log"
    argv = lab_tool.command(root, "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
                            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}")
    process = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env, cwd=scratch)
    server = Server(root, port, token, process, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited:\n{log.read_text()[-3000:]}")
        try:
            server.api("/api/status")
            return server
        except OSError:
            time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"JupyterLab did not answer in {timeout} s:\n{log.read_text()[-3000:]}")


# ------------------------------------------------------------------------------------------ UI

PROMPT_DONE = r"/^\[\d+\]:$/"


def open_notebook(page, server: Server, path: str) -> None:
    """Open a notebook in JupyterLab and wait until its kernel is idle."""
    page.goto(f"{server.url}/lab/tree/{path}?reset&token={server.token}")  # reset: only this notebook open
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
    wait_kernel_idle(page)


def wait_kernel_idle(page, timeout_s: float = 120) -> None:
    """Wait for the status bar to say "<kernel> | Idle" (before a kernel connects it says "No Kernel")."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                 .some(e => /^(?!No Kernel).+ \\| Idle$/.test(e.textContent.trim()))""",
        timeout=timeout_s * 1000, polling=250,
    )


def cells(page):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")


def menu(page, top, item: str) -> None:
    """Click a menu item, as a person would, by its label in the interface. `make lab` shows JupyterLab in
    Spanish, but the 4.5 language pack leaves some titles of JupyterLab 4.6 in English (the «Run» menu, whose
    items are Spanish): ``top`` may list both spellings, ("Ejecutar", "Run")."""
    titles = (top,) if isinstance(top, str) else tuple(top)
    exact = re.compile("^(" + "|".join(re.escape(t) for t in titles) + ")$")
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel").filter(has_text=exact).first.click()
    page.locator(".lm-Menu-itemLabel").filter(has_text=item).first.click()


def prompt(cell) -> str:
    return cell.locator(".jp-InputPrompt").first.inner_text().strip()


def wait_all_run(page, timeout_s: float) -> None:
    """Wait until every code cell shows an execution count and the kernel is idle."""
    page.wait_for_function(
        f"""() => {{
            const ps = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')];
            const idle = [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                .some(e => /^(?!No Kernel).+ \\| Idle$/.test(e.textContent.trim()));
            return idle && ps.length && ps.every(p => {PROMPT_DONE}.test(p.textContent.trim()));
        }}""",
        timeout=timeout_s * 1000, polling=500,
    )


def select(cell) -> None:
    """Select a cell in command mode by clicking its prompt (works for read-only cells too)."""
    cell.locator(".jp-InputPrompt").first.click()


def run(page, cell, timeout_s: float = 120) -> None:
    """Run one cell with Shift+Enter and wait for its new execution count."""
    before = prompt(cell)
    select(cell)
    page.keyboard.press("Shift+Enter")
    cell_handle = cell.element_handle()
    page.wait_for_function(
        f"""([cell, before]) => {{
            const p = cell.querySelector('.jp-InputPrompt').textContent.trim();
            return {PROMPT_DONE}.test(p) && p !== before;
        }}""",
        arg=[cell_handle, before], timeout=timeout_s * 1000, polling=200,
    )


def type_code(page, cell, code: str) -> None:
    """Replace a code cell's text, typing into its editor (select all, then the new text)."""
    cell.locator(".jp-InputArea-editor .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)  # one input event: no auto-indent or auto-closed brackets on top


def output_text(cell) -> str:
    return "\n".join(cell.locator(".jp-OutputArea-output").all_inner_texts())


def save(page) -> None:
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => !document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')", timeout=30_000)


def rendered_images(page) -> list[dict]:
    """Every image in an output area: its size once loaded (0 means broken)."""
    return page.evaluate("""() => [...document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output img')]
        .map(i => ({w: i.naturalWidth, h: i.naturalHeight, complete: i.complete}))""")


def widget_labels(page) -> list[dict]:
    """Every widget's description label: its text and whether it is cut off (text wider than its box)."""
    return page.evaluate("""() => [...document.querySelectorAll('.jp-NotebookPanel .jupyter-widgets .widget-label')]
        .filter(l => l.textContent.trim() && l.offsetParent !== null)
        .map(l => ({text: l.textContent.trim(), cut: l.scrollWidth > l.clientWidth + 1}))""")


def wait_formgrader_ready(page, timeout_s: float = 60) -> None:
    """Wait until a Formgrader submission page has bound its score and comment fields to the gradebook.

    The fields are in the HTML before formgrader's script has fetched the grades and comments: a value typed
    earlier is wiped by the first render and its change event reaches no one, so nothing is saved (seen in CI).
    """
    page.wait_for_function(
        "() => window.formgrader && formgrader.grades && formgrader.grades.loaded && formgrader.grade_uis.length > 0"
        " && formgrader.comments && formgrader.comments.loaded", timeout=timeout_s * 1000)
