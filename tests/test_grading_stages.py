"""The grading stages one by one, without kernels: staging, the static scan, replay-based verification, plain
data, the journal, the jail's command line and output sanitising. (End to end: test_grading*.py, tests/hostile.)"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from labharness import REPO, labtools

import demo_class
from grading import feedback, guard, journal, kit, scan, stage, verify
from grading.records import Result
from grading.sandbox import Limits, Sandbox

LAB = labtools.lab_names()[0]


@pytest.fixture(scope="module")
def lab_kit():
    return kit.build(LAB, labtools.solution_path(LAB), labtools.LABS / LAB)


def _sub(nb: dict | str) -> stage.Submission:
    text = nb if isinstance(nb, str) else json.dumps(nb)
    return stage.Submission("alumna", LAB, text.encode(), present=True)


def _solved() -> dict:
    return json.loads(demo_class.build_submission(LAB, {"answers": "solution"}))


def _gid(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


# ---------------------------------------------------------------------------------------------- stage

def test_staging_restores_tests_and_keeps_the_lab_order(lab_kit):
    nb = _solved()
    tests = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")
             and not c["metadata"]["nbgrader"].get("solution")]
    nb["cells"].remove(tests[0])  # deleted
    tests[1]["source"] = "assert True"  # edited
    nb["cells"].insert(0, nb["cells"].pop(nb["cells"].index(tests[2])))  # moved to the top
    staged = stage.rebuild(lab_kit, _sub(nb))
    order = [c["grade_id"] for c in staged.cells if c["grade_id"]]
    assert order == [c["grade_id"] for c in lab_kit.cells if c["grade_id"]]
    by_id = {c["grade_id"]: c for c in staged.cells if c["grade_id"]}
    source = {c["grade_id"]: c["source"] for c in lab_kit.cells if c["grade_id"]}
    for test in tests[:3]:
        gid = _gid(test)
        assert by_id[gid]["source"] == source[gid]  # the instructor's, hidden tests included
    assert set(staged.flags) == {"reparada", "manipulada"}


def test_staging_puts_student_cells_above_the_setup_after_it(lab_kit):
    nb = _solved()
    nb["cells"].insert(0, {"cell_type": "code", "id": "primera", "metadata": {}, "outputs": [],
                           "execution_count": None, "source": "import sys"})
    staged = stage.rebuild(lab_kit, _sub(nb))
    roles = [c["role"] for c in staged.cells if c["type"] == "code"]
    assert roles.index("setup") < roles.index("student")


def test_staging_a_retyped_answer_counts_as_unanswered(lab_kit):
    nb = _solved()
    answer = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution")
                  and c["cell_type"] == "code")
    answer["cell_type"] = "markdown"
    staged = stage.rebuild(lab_kit, _sub(nb))
    mine = next(c for c in staged.cells if c["grade_id"] == _gid(answer))
    assert mine["type"] == "code" and "EjercicioSinHacer" in mine["source"] or "NotImplementedError" in mine["source"]
    assert "reparada" in staged.flags


@pytest.mark.parametrize("raw", [b"", b"{not json", b'{"cells": 3}', "\u0000binario".encode()])
def test_staging_unreadable_notebooks(lab_kit, raw):
    staged = stage.rebuild(lab_kit, stage.Submission("alumna", LAB, raw, present=True))
    assert staged.unreadable


def test_reading_a_folder_never_follows_links(tmp_path):
    folder = tmp_path / "alumna" / LAB
    folder.mkdir(parents=True)
    (folder / f"{LAB}.ipynb").symlink_to(labtools.solution_path(LAB))
    (folder / "datos.csv").symlink_to("/etc/passwd")
    (folder / "mio.txt").write_text("hola")
    sub = stage.read_folder(folder, "alumna", LAB)
    assert sub.notebook is None and sub.present
    assert sub.extra == {"mio.txt": b"hola"}
    assert any("enlace simbólico" in n for n in sub.notes)


# ---------------------------------------------------------------------------------------------- scan

@pytest.mark.parametrize("code,finding", [
    ("import numpy as np\nnp.allclose = lambda *a, **k: True", "reasigna"),
    ("check_close = lambda *a, **k: None", "redefine"),
    ("import sys\nsys.modules['llmlab.checks'] = None", "escribe en"),
    ("f = lambda: 0\nf.__code__ = (lambda: 1).__code__", ".__code__"),
    ("exec('print(1)')", "exec()"),
    ("getattr(__import__('llmlab.checks'), 'check_' + 'close')", "getattr"),
    ("import ctypes", "importa"),
    ("get_ipython().run_cell = print", "reasigna"),
    ("import numpy as np\nimport math as np", "redefine"),
    ("import os\nos._exit(1)", "._exit"),
])
def test_the_scan_finds_tampering(lab_kit, code, finding):
    cells = [{"type": "code", "role": "student", "source": code, "id": "c1", "grade_id": None}]
    report = scan.scan(lab_kit, cells)
    assert any(finding in r for r in report.reasons), report.reasons


def test_the_scan_leaves_ordinary_code_alone(lab_kit):
    code = ("import numpy as np\nimport math\n\nclass Cache:\n    def __init__(self):\n        self.k = []\n\n"
            "def softmax(logits, temperature=1.0):\n    z = np.asarray(logits, dtype=float) / temperature\n"
            "    z = z - z.max(axis=-1, keepdims=True)\n    e = np.exp(z)\n    return e / e.sum(axis=-1, keepdims=True)")
    cells = [{"type": "code", "role": "student", "source": code, "id": "c1", "grade_id": None}]
    assert scan.scan(lab_kit, cells).reasons == []


def test_hidden_names_are_known_and_zero_their_tests(lab_kit):
    hidden = scan.hidden_names(lab_kit)
    assert hidden, "the lab's hidden tests bind no names of their own?"
    name, tests = next(iter(hidden.items()))
    cells = [{"type": "code", "role": "answer", "student_changed": True, "grade_id": "x", "id": "x",
              "source": f"def f():\n    return {name}"}]
    assert set(scan.scan(lab_kit, cells).zero) == set(tests)


def test_a_comprehension_variable_named_like_a_hidden_one_is_the_students_own(lab_kit):
    name, tests = next(iter(scan.hidden_names(lab_kit).items()))
    own = [f"total = sum({name} for {name} in range(3))", f"pares = {{{name}: 2 * {name} for {name} in [1, 2]}}",
           f"filas = [[{name} for {name} in fila] for fila in [[1], [2]] if fila]"]
    for code in own:
        cells = [{"type": "code", "role": "student", "source": code, "id": "c1", "grade_id": None}]
        report = scan.scan(lab_kit, cells)
        assert report.zero == {} and report.reasons == [], (code, report.reasons)
    # The comprehension's first iterable is read outside its scope: that is still the hidden variable.
    cells = [{"type": "code", "role": "student", "source": f"copia = [x for x in {name}]", "id": "c1",
              "grade_id": None}]
    assert set(scan.scan(lab_kit, cells).zero) == set(tests)


# ---------------------------------------------------------------------------------------------- verify

def _plain(x):
    return guard.plain.Plain()(x)


def _check(kind, *args, outcome="ok", **kwargs):
    return {"kind": kind, "args": [_plain(a) for a in args], "kwargs": {k: _plain(v) for k, v in kwargs.items()},
            "outcome": outcome}


def _cell(checks, ok=True, status="ok", problems=(), events=()):
    return {"status": status, "records": [
        {"type": "enter", "nonce": "n", "problems": [], "events": []},
        {"type": "leave", "nonce": "n", "ok": ok, "problems": list(problems), "events": list(events),
         "checks": checks}]}


def test_a_check_that_passed_in_the_kernel_is_replayed_outside():
    reference = [_check("check_close", np.array([0.5, 0.5]), [0.5, 0.5], atol=1e-6)]
    good = _cell([_check("check_close", np.array([0.5, 0.5]), [0.5, 0.5], atol=1e-6)])
    forged = _cell([_check("check_close", np.array([0.9, 0.1]), [0.5, 0.5], atol=1e-6)])  # "passed" inside
    assert verify.verify_test("t", 2, "n", good, reference).points == 2
    verdict = verify.verify_test("t", 2, "n", forged, reference)
    assert verdict.points == 0 and verdict.suspicious


def test_missing_checks_or_records_score_zero_with_a_reason():
    reference = [_check("check_equal", 3, 3), _check("check_equal", 4, 4)]
    assert verify.verify_test("t", 1, "n", _cell([_check("check_equal", 3, 3)]), reference).points == 0
    no_records = {"status": "ok", "records": []}
    verdict = verify.verify_test("t", 1, "n", no_records, reference)
    assert verdict.points == 0 and "manipulada" in verdict.suspicious[0]


def test_tolerances_must_be_the_instructors():
    reference = [_check("check_close", 1.0, 1.0, atol=1e-9)]
    loose = _cell([_check("check_close", 1.1, 1.0, atol=1.0)])
    assert verify.verify_test("t", 1, "n", loose, reference).points == 0


def test_integrity_problems_and_window_events_score_zero():
    reference = [_check("check_equal", 3, 3)]
    good = [_check("check_equal", 3, 3)]
    assert verify.verify_test("t", 1, "n", _cell(good, problems=["numpy.exp reasignado"]), reference).points == 0
    peek = {"severity": "high", "what": "inspecciona marcos"}
    assert verify.verify_test("t", 1, "n", _cell(good, events=[peek]), reference).points == 0


def test_opaque_objects_do_not_replay():
    class Liar(float):
        def __eq__(self, other):
            return True

    assert _plain(Liar(0.0)) == {"opaque": f"{Liar.__module__}.{Liar.__qualname__}"}
    reference = [_check("check_equal", "gpt2", "gpt2")]
    assert verify.verify_test("t", 1, "n", _cell([_check("check_equal", Liar(0.0), "gpt2")]), reference).points == 0


@pytest.mark.parametrize("value", [
    3, 2.5, float("nan"), True, None, "texto", (1, 2.0), [1, [2, 3]], {"a": 1},
    np.float32(1.5), np.int64(7), np.arange(6, dtype=np.float32).reshape(2, 3), np.array([True, False]),
])
def test_plain_data_round_trips(value):
    back = verify._rebuild_one(_plain(value))
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value)
    elif isinstance(value, float) and value != value:
        assert back != back
    else:
        assert back == value and type(back) is type(value)


def test_plain_torch_tensors_keep_their_type():
    torch = pytest.importorskip("torch")
    t = torch.tensor([[1.0, 2.0]], requires_grad=True)
    back = verify._rebuild_one(_plain(t))
    assert isinstance(back, torch.Tensor) and torch.equal(back, t.detach())


# ---------------------------------------------------------------------------------------------- the rest

def test_journal_keys_change_with_every_input(lab_kit, tmp_path):
    base = journal.submission_key(lab_kit.digest, [b"nb"], "limits")
    assert base != journal.submission_key(lab_kit.digest, [b"nb2"], "limits")
    assert base != journal.submission_key(lab_kit.digest + "x", [b"nb"], "limits")
    assert base != journal.submission_key(lab_kit.digest, [b"nb"], "other limits")


def test_the_jail_command_line():
    cmd = Sandbox("bwrap").command(["python", "runner.py"], None, Limits(), {"HOME": "/home/alumno"})
    text = " ".join(cmd)
    for needed in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session", "--clearenv",
                   "--no-new-privs", "--bounding-set=-all", "--nproc=", "--as=", "--cpu=", "--fsize=", "--nofile="):
        assert needed in text, needed
    binds = [cmd[i + 1] for i, arg in enumerate(cmd) if arg in ("--ro-bind", "--bind")]
    assert "--bind" not in cmd  # nothing of the host is writable
    private = [REPO / "solutions", REPO / "course" / "submitted", REPO / "labs", REPO / "course" / "demo"]
    for src in binds:
        path = __import__("pathlib").Path(src)
        assert path.is_file() or not any(p.is_relative_to(path) for p in private), src


def test_an_environment_under_tmp_is_bound_after_the_private_tmp(monkeypatch):
    """A virtual environment in /tmp (seen in practice) must not vanish under the jail's private /tmp."""
    from grading import sandbox

    monkeypatch.setattr(sandbox, "_readonly_paths", lambda: [("/usr", "/usr"), ("/tmp/x/.venv", "/tmp/x/.venv")])
    cmd = Sandbox("bwrap").command(["python"], None, Limits(), {})
    tmpfs = next(i for i, arg in enumerate(cmd) if arg == "--tmpfs" and cmd[i + 1] == "/tmp")
    bind = next(i for i, arg in enumerate(cmd) if arg == "--ro-bind" and cmd[i + 1] == "/tmp/x/.venv")
    assert tmpfs < bind
    assert ["--dir", "/tmp"] not in [cmd[i:i + 2] for i in range(len(cmd))]  # the tmpfs keeps its 1777


def test_outputs_are_sanitised_and_capped():
    outputs = [
        {"output_type": "display_data", "data": {"text/html": "<script>x()</script>", "text/plain": "ok"}},
        {"output_type": "display_data", "data": {"application/javascript": "alert(1)"}},
        {"output_type": "display_data", "data": {"image/png": 'AAAA" onerror="alert(1)'}},
        {"output_type": "stream", "name": "stdout", "text": "x" * (feedback.TEXT_LIMIT + 10)},
    ]
    clean = feedback.sanitize_outputs(outputs)
    text = json.dumps(clean)
    assert "<script>" not in text and "alert(1)" not in text and "onerror" not in text
    assert "salida recortada" in clean[3]["text"]


def test_a_result_round_trips():
    r = Result("ana", LAB, 3.0, 20.0, True, None, ["manual", "tiempo"], {"t": 3.0}, ["nota"])
    assert Result.from_dict(json.loads(json.dumps(r.to_dict()))) == Result.from_dict(r.to_dict())
    assert r.to_dict()["flags"] == ["tiempo", "manual"]
