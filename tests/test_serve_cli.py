"""``python -m llmlab serve``: Spanish help and clear errors before anything listens."""

import socket

import pytest

from llmlab.__main__ import main

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


def test_serve_help_is_in_spanish(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "API de OpenAI" in out and "--max-num-seqs" in out and "127.0.0.1" in out
    assert "--port-file" not in out  # internal options stay hidden


def test_an_unknown_model_is_refused_with_exit_code_2(capsys):
    assert main(["serve", "--model", "gpt-4"]) == 2
    assert "modelo desconocido 'gpt-4'" in capsys.readouterr().err


def test_a_port_in_use_is_refused_with_exit_code_2(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    assert f"no se pudo escuchar en 127.0.0.1:{port}" in capsys.readouterr().err


def test_a_kv_cache_too_small_for_one_sequence_is_refused(capsys):
    assert main(["serve", "--kv-blocks", "2"]) == 2
    assert "needs at least" in capsys.readouterr().err
