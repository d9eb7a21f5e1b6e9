"""`make execute` (course/tools/execute_labs.py): one row per lab with its time, a total and the budget."""

from __future__ import annotations

import sys
import types

from labharness import labtools  # noqa: F401 - puts course/tools on sys.path

import execute_labs


def _fake_papermill(monkeypatch, fail=()):
    calls = []

    def execute_notebook(source, out, parameters, **kwargs):
        calls.append((source, parameters))
        if any(name in source for name in fail):
            raise RuntimeError("boom")

    monkeypatch.setitem(sys.modules, "papermill", types.SimpleNamespace(execute_notebook=execute_notebook))
    return calls


def test_prints_each_lab_a_total_and_the_budget(monkeypatch, tmp_path, capsys):
    calls = _fake_papermill(monkeypatch)
    labs = labtools.lab_names()
    assert execute_labs.main(["--out", str(tmp_path), "-p", "EJECUCION_COMPLETA", "True", "-p", "NO_EXISTE", "1"]) == 0
    out = capsys.readouterr().out
    assert [c[0] for c in calls] == [str(labtools.solution_path(lab)) for lab in labs]
    for lab in labs:
        assert any(line.startswith(lab) and " ok" in line for line in out.splitlines()), lab
    assert "total" in out and "del presupuesto de 600 s" in out and "dentro" in out
    # a parameter goes only to the notebooks that declare it (lab 08 has EJECUCION_COMPLETA)
    by_lab = {src: params for src, params in calls}
    assert by_lab[str(labtools.solution_path("lab08-servir-un-modelo"))] == {"EJECUCION_COMPLETA": True}
    assert all("NO_EXISTE" not in p for p in by_lab.values())


def test_a_failing_notebook_is_reported_and_the_rest_still_run(monkeypatch, tmp_path, capsys):
    calls = _fake_papermill(monkeypatch, fail=("lab08",))
    assert execute_labs.main(["--out", str(tmp_path), "--budget", "0"]) == 1
    out = capsys.readouterr().out
    assert "ERROR: RuntimeError" in out and "FUERA del presupuesto de 0 s" in out
    assert len(calls) == len(labtools.lab_names())
