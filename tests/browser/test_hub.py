"""A whole class on the course's JupyterHub, through nbgrader's exchange, for real on loopback.

The hub is started as `make hub` starts it (course/hub/hub.py: same configuration, same environment) with
SimpleLocalProcessSpawner (no Unix accounts: the students' nbgrader config names them after their hub user),
the npm proxy and a shared password, on free 127.0.0.1 ports. Three students are on the class list:
ana works in a real browser (log in, Spanish JupyterLab, Assignments tab: fetch, edit a cell, submit; later
fetch feedback and open it), then resubmits; diego works through the REST API and submits after the due date;
lucia never submits. The instructor's commands run with the instructor's server environment, as in the
terminal of their server: `nbgrader release_assignment` of the lab `make release` generated, collect through
Formgrader's API, `make grade SUBMITTED=<collected folder>` (course/tools/grade.py, as the Makefile calls it),
a written answer scored through Formgrader's API, `make grades`, course/hub/devoluciones.py (release_feedback).
When the hub stops, no process it started is left. Each step's time goes to build/hub-test-timings.json.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from browser import chromium, jupyterlab as jl
from labharness import REPO, labtools

sys.path.insert(0, str(REPO / "course" / "hub"))
import hub as hub_tool  # noqa: E402  (course/hub/hub.py, what `make hub` runs)

pytestmark = [pytest.mark.hub, pytest.mark.slow]
LAB = labtools.lab_names()[0]
STUDENTS = ["ana", "diego", "lucia"]  # lucia is on the class list and never submits
INSTRUCTOR = "profesor"
GRADE = REPO / "course" / "tools" / "grade.py"
NBGRADER = Path(sys.executable).parent / "nbgrader"
TIMINGS = REPO / "build" / "hub-test-timings.json"


@dataclass
class Hub:
    url: str
    token: str
    password: str
    data: Path
    klass: str
    process: subprocess.Popen
    log: Path
    timings: dict = field(default_factory=dict)

    @property
    def collected(self) -> Path:
        return self.data / self.klass

    @property
    def course_root(self) -> Path:  # where `make grade SUBMITTED=<collected>` grades
        return REPO / "build" / "grading" / self.klass

    def request(self, path: str, method: str = "GET", body=None, form: dict | None = None):
        data, headers = None, {"Authorization": f"token {self.token}"}
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=300) as response:
            raw = response.read()
            return json.loads(raw) if raw else None

    def start_server(self, user: str, timeout: float = 180) -> None:
        with contextlib.suppress(urllib.error.HTTPError):  # 400: already running (the browser spawned it)
            self.request(f"/hub/api/users/{user}/server", method="POST")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            server = self.request(f"/hub/api/users/{user}")["servers"].get("")
            if server and server["ready"]:
                return
            time.sleep(0.5)
        raise RuntimeError(f"{user}'s server did not start:\n{self.log.read_text()[-3000:]}")

    def instructor(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        """A command in the instructor's terminal: their server's environment, in the repository."""
        home = self.data / "homes" / INSTRUCTOR
        env = dict(os.environ, JUPYTERHUB_USER=INSTRUCTOR,
                   **hub_tool.role_environment("profesor", self.data, self.klass, home))
        env.pop("PYTHONPATH", None)  # the test runner's, not the instructor's: llmlab as installed in the venv
        proc = subprocess.run(list(argv), cwd=REPO, env=env, capture_output=True, text=True)
        if check:
            assert proc.returncode == 0, f"{argv}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc

    @contextlib.contextmanager
    def step(self, name: str):
        start = time.perf_counter()
        yield
        self.timings[name] = round(time.perf_counter() - start, 1)


def _processes_of(data: Path) -> list[int]:
    """Every live process whose environment names this hub's data folder (hub, proxy, servers, kernels)."""
    mark = f"LLMLAB_HUB_DIR={data}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            with contextlib.suppress(OSError):
                if mark in (proc / "environ").read_bytes().split(b"\0"):
                    found.append(int(proc.name))
    return found


@pytest.fixture(scope="module")
def hub(tmp_path_factory, browser_context):
    reason = hub_tool.missing_proxy()
    if reason:
        pytest.skip(reason)
    data = tmp_path_factory.mktemp("hub")
    klass = f"prueba-hub-{secrets.token_hex(4)}"
    port, hub_port, api_port = jl.free_port(), jl.free_port(), jl.free_port()
    token, password = secrets.token_hex(24), secrets.token_urlsafe(12)
    # ana's JupyterLab keeps every cell in the DOM (the browser helpers count on it) and shows no news
    settings = data / "homes" / "ana" / ".jupyter" / "lab" / "user-settings"
    for name, value in jl.SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    env = hub_tool.environment(data, port, STUDENTS, INSTRUCTOR, password, klass, hub_port=hub_port,
                               api_port=api_port, api_token=token)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    log = data / "hub.log"
    with open(log, "w") as fh:
        process = subprocess.Popen(hub_tool.command(data), env=env, cwd=data, stdout=fh, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = Hub(f"http://127.0.0.1:{port}", token, password, data, klass, process, log)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                server.request("/hub/api/")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the hub did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield server
    finally:
        process.send_signal(signal.SIGTERM)  # JupyterHub stops every server and the proxy it started
        try:
            process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        deadline = time.monotonic() + 30
        while _processes_of(data) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = _processes_of(data)
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        chromium.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy2(log, chromium.SCREENSHOTS / "jupyterhub.log")
        shutil.rmtree(server.course_root, ignore_errors=True)
        TIMINGS.parent.mkdir(parents=True, exist_ok=True)
        TIMINGS.write_text(json.dumps(server.timings, indent=1, ensure_ascii=False) + "\n")
        assert not left, f"processes left running after the hub stopped: {left}"


# ------------------------------------------------------------------------------------------ helpers

def _solution_sources(lab: str) -> dict[str, str]:
    """grade_id -> the instructor's source of every solution code cell."""
    nb = labtools.load_json_notebook(labtools.solution_path(lab))
    return {c.metadata.nbgrader["grade_id"]: c.source for c in nb.cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")}


def _solution_index(nb, grade_id: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _edit_through_api(hub: Hub, user: str, change) -> None:
    """Open the fetched notebook through the contents API, change it, save it (what JupyterLab does)."""
    path = f"/user/{user}/api/contents/{LAB}/{LAB}.ipynb"
    nb = nbformat.from_dict(hub.request(path)["content"])
    change(nb)
    hub.request(path, method="PUT", body={"type": "notebook", "format": "json", "content": nb})


def _assignments(hub: Hub, user: str, action: str | None = None) -> list[dict]:
    if action is None:
        return hub.request(f"/user/{user}/assignments?course_id=llmlab")["value"]
    out = hub.request(f"/user/{user}/assignments/{action}", method="POST",
                      form={"course_id": "llmlab", "assignment_id": LAB})
    assert out.get("success", True), out
    return out["value"]


def _login(page, hub: Hub, user: str) -> None:
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user}/lab**", timeout=180_000)
    page.wait_for_selector("#jp-MainMenu", timeout=120_000)


def _assignment_panel(page) -> None:
    jl.menu(page, "Nbgrader", "Assignment List")
    page.wait_for_selector("#released_assignments_list", timeout=60_000)


def _row(page, listing: str, text: str):
    return page.locator(f"#{listing} .list_item").filter(has_text=text).first


# ------------------------------------------------------------------------------------------ the class

def test_a_class_through_the_exchange(hub, browser_context):
    solutions = _solution_sources(LAB)
    first = next(iter(solutions))
    released = labtools.load_json_notebook(labtools.release_path(LAB))
    manual = next(c.metadata.nbgrader for c in released.cells
                  if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade"))

    with hub.step("release: nbgrader release_assignment (+ class list)"):
        roster = hub.data / "clase.csv"  # the class list, as an instructor imports it
        roster.write_text("id,first_name\n" + "".join(f"{s},{s.title()}\n" for s in STUDENTS))
        hub.instructor(str(NBGRADER), "db", "student", "import", str(roster))
        hub.instructor(str(NBGRADER), "release_assignment", LAB)
    course = hub.data / "exchange" / "llmlab"
    assert (course / "outbound" / LAB / f"{LAB}.ipynb").read_bytes() == labtools.release_path(LAB).read_bytes()
    inbound = (course / "inbound").stat().st_mode
    assert inbound & 0o003 == 0o003 and inbound & 0o004 == 0  # anyone may hand in; nobody may list

    # ana, in the browser: log in, fetch in the Assignments tab, solve one exercise, save, submit
    page = chromium.guarded_page(browser_context)
    try:
        with hub.step("ana: log in and spawn her server (browser)"):
            _login(page, hub, "ana")
        menu_bar = page.locator("#jp-MainMenu").inner_text()
        assert "Archivo" in menu_bar and "Editar" in menu_bar, menu_bar  # JupyterLab speaks Spanish
        with hub.step("ana: fetch (Assignments tab)"):
            _assignment_panel(page)
            _row(page, "released_assignments_list", LAB).get_by_role("button", name="Fetch").click()
            _row(page, "fetched_assignments_list", LAB).wait_for(timeout=60_000)
        assert (hub.data / "homes" / "ana" / LAB / f"{LAB}.ipynb").exists()
        chromium.screenshot(page, "hub-ana-tareas")
        with hub.step("ana: edit a cell and save (browser)"):
            page.goto(f"{hub.url}/user/ana/lab/tree/{LAB}/{LAB}.ipynb?reset")
            page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
            cell = jl.cells(page).nth(_solution_index(released, first))
            jl.type_code(page, cell, solutions[first])
            jl.save(page)
        saved = nbformat.read(hub.data / "homes" / "ana" / LAB / f"{LAB}.ipynb", as_version=4)
        assert saved.cells[_solution_index(released, first)].source == solutions[first]
        with hub.step("ana: submit (Assignments tab)"):
            _assignment_panel(page)
            row = _row(page, "fetched_assignments_list", LAB)
            row.get_by_role("button", name="Submit").click()
            _row(page, "submitted_assignments_list", LAB).wait_for(timeout=60_000)
        chromium.screenshot(page, "hub-ana-entregado")
        assert page.guard.external(ignore=("colab-badge.svg",)) == []
    finally:
        page.close()

    # ana resubmits through the API with every exercise solved: collect must take this one
    with hub.step("ana: resubmit (REST)"):
        def solve_all(nb):
            for grade_id, source in solutions.items():
                nb.cells[_solution_index(nb, grade_id)].source = source
        _edit_through_api(hub, "ana", solve_all)
        _assignments(hub, "ana", "submit")
    assert len(list((course / "inbound").glob(f"ana+{LAB}+*"))) == 2

    # The due date passes; diego fetches, gets the first exercise wrong and hands in late
    due = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    hub.instructor(str(NBGRADER), "db", "assignment", "add", LAB, f"--duedate={due}")
    time.sleep(1)
    with hub.step("diego: spawn, fetch, edit, submit (REST)"):
        hub.start_server("diego")
        _assignments(hub, "diego", "fetch")
        _edit_through_api(hub, "diego", lambda nb: setattr(
            nb.cells[_solution_index(nb, first)], "source", solutions[first].replace("return", "return 0 *", 1)))
        listing = _assignments(hub, "diego", "submit")
    assert "submitted" in [a["status"] for a in listing if a["assignment_id"] == LAB]
    assert not (hub.data / "homes" / "lucia").exists()  # lucia never logged in

    with hub.step("instructor: collect (Formgrader API)"):
        hub.start_server(INSTRUCTOR)
        out = hub.request(f"/user/{INSTRUCTOR}/formgrader/api/assignment/{LAB}/collect", method="POST")
    assert out["success"], out
    assert sorted(p.name for p in hub.collected.iterdir()) == ["ana", "diego"]
    for student in ("ana", "diego"):
        assert sorted(p.name for p in (hub.collected / student / LAB).iterdir()) == [
            f"{LAB}.ipynb", "submission_secret.txt", "timestamp.txt"]
    collected = nbformat.read(hub.collected / "ana" / LAB / f"{LAB}.ipynb", as_version=4)
    assert all(collected.cells[_solution_index(collected, g)].source == s for g, s in solutions.items())

    with hub.step("instructor: make grade SUBMITTED=<collected> (2 students, 1 lab)"):
        proc = hub.instructor(sys.executable, str(GRADE), "--submitted", str(hub.collected), "--labs", LAB)
    root = hub.course_root
    for student in ("ana", "diego"):
        assert (root / "feedback" / student / LAB / f"{LAB}.html").is_file(), proc.stdout[-2000:]
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(root / "gradebook.db")) as gb:
        ana, diego = gb.find_submission(LAB, "ana"), gb.find_submission(LAB, "diego")
        assert ana.score > diego.score, (ana.score, diego.score)
        assert ana.total_seconds_late == 0 and diego.total_seconds_late > 0  # diego is late, as nbgrader counts
        submission_id = gb.find_submission_notebook(LAB, LAB, "ana").id

    with hub.step("instructor: score a written answer (Formgrader API) and make grades"):
        grades = hub.request(f"/user/{INSTRUCTOR}/formgrader/api/grades?submission_id={submission_id}")
        grade = next(g for g in grades if g["name"] == manual["grade_id"])
        hub.request(f"/user/{INSTRUCTOR}/formgrader/api/grade/{grade['id']}", method="PUT",
                    body={"manual_score": manual["points"] - 1})
        hub.instructor(sys.executable, str(GRADE), "--export-only", "--submitted", str(hub.collected))
    with open(root / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh) if r["assignment"] == LAB}
    assert sorted(rows) == STUDENTS
    assert float(rows["ana"]["manual_score"]) == manual["points"] - 1
    assert float(rows["lucia"]["score"]) == 0.0 and rows["lucia"]["timestamp"] == ""  # never submitted: 0

    with hub.step("instructor: release feedback (devoluciones.py → nbgrader release_feedback)"):
        proc = hub.instructor(sys.executable, str(REPO / "course" / "hub" / "devoluciones.py"), LAB)
    assert len(list((course / "feedback").glob("*.html"))) == 2, proc.stdout + proc.stderr

    with hub.step("diego: fetch feedback (REST)"):
        _assignments(hub, "diego", "fetch_feedback")
    pages = list((hub.data / "homes" / "diego" / LAB / "feedback").glob(f"*/{LAB}.html"))
    assert len(pages) == 1
    assert pages[0].read_bytes() == (root / "feedback" / "diego" / LAB / f"{LAB}.html").read_bytes()

    # ana sees her feedback page from the Assignments tab
    page = chromium.guarded_page(browser_context)
    try:
        with hub.step("ana: fetch feedback and open it (browser)"):
            page.goto(f"{hub.url}/user/ana/lab?reset")
            page.wait_for_selector("#jp-MainMenu", timeout=120_000)
            _assignment_panel(page)
            row = _row(page, "submitted_assignments_list", LAB)
            row.get_by_role("button", name="Fetch Feedback").click()
            # «view feedback» opens the feedback folder in the file browser; the page opens from there
            _row(page, "submitted_assignments_list", LAB).get_by_text("view feedback").first.click()
            page.locator(".jp-DirListing-item").filter(has_text=f"{LAB}.html").first.wait_for(timeout=60_000)
            fetched = next((hub.data / "homes" / "ana" / LAB / "feedback").glob(f"*/{LAB}.html"))
            relative = fetched.relative_to(hub.data / "homes" / "ana").as_posix()
            page.goto(f"{hub.url}/user/ana/files/{urllib.parse.quote(relative)}")
            page.wait_for_load_state("load")
        body = page.inner_text("body")
        assert LAB in body and "Nota" in body, body[:500]
        # the written answer scored by hand in Formgrader after `make grade` is on the page she gets
        assert f"Respuesta razonada 1 (Nota: {float(manual['points'] - 1)} / {float(manual['points'])})" in body
        chromium.screenshot(page, "hub-ana-devolucion")
        assert page.guard.external(ignore=("colab-badge.svg",)) == []
    finally:
        page.close()
    pages = list((hub.data / "homes" / "ana" / LAB / "feedback").glob(f"*/{LAB}.html"))
    assert len(pages) == 1  # her graded (second) submission has a page; the first one has none
    assert pages[0].read_bytes() == (root / "feedback" / "ana" / LAB / f"{LAB}.html").read_bytes()


def test_students_have_no_formgrader(hub):
    hub.start_server("diego")
    with pytest.raises(urllib.error.HTTPError) as err:
        hub.request("/user/diego/formgrader/api/assignments")
    assert err.value.code == 404
