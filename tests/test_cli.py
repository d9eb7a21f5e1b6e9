"""The command line: python -m llmlab models | generate (streaming, --show-top, --chat, bad arguments)."""

import io
import os
import re
import subprocess
import sys

import pytest
import torch

from llmlab import pretrained
from llmlab.__main__ import TokenPrinter, main
from llmlab.model import generate


class Recorder(io.StringIO):
    """A stdout that remembers each write, to check that tokens arrive one by one."""

    def __init__(self):
        super().__init__()
        self.writes = []

    def write(self, text):
        self.writes.append(text)
        return super().write(text)


def run(argv, monkeypatch):
    out = Recorder()
    monkeypatch.setattr(sys, "stdout", out)
    code = main(argv)
    return code, out


def test_models_lists_the_shipped_models(monkeypatch):
    code, out = run(["models"], monkeypatch)
    assert code == 0
    text = out.getvalue()
    for name, description in pretrained.available().items():
        assert name in text and description in text
    assert "parámetros" in text


def test_generate_streams_tokens_as_they_are_produced(monkeypatch):
    code, out = run(["generate", "Había una vez", "--seed", "3", "--max-new-tokens", "12"], monkeypatch)
    assert code == 0
    text = out.getvalue()
    assert text.startswith("Había una vez") and text.endswith("\n")
    assert out.writes[0] == "Había una vez"
    pieces = [w for w in out.writes[1:] if w != "\n"]
    assert len(pieces) >= 6, out.writes  # one write per token (or per finished character), not one at the end
    # The same seed gives the same text; another seed (almost surely) another one.
    assert run(["generate", "Había una vez", "--seed", "3", "--max-new-tokens", "12"], monkeypatch)[1].getvalue() == text
    assert run(["generate", "Había una vez", "--seed", "4", "--max-new-tokens", "12"], monkeypatch)[1].getvalue() != text


def test_temperature_zero_is_the_library_greedy_output(monkeypatch):
    code, out = run(["generate", "La fotosíntesis", "--temperature", "0", "--max-new-tokens", "15"], monkeypatch)
    assert code == 0
    model, tok = pretrained.load("es-base")
    prompt = [tok.bos_id] + tok.encode("La fotosíntesis")
    ids = generate(model, torch.tensor(prompt), 15, eos_token_id=tok.eos_id)[len(prompt):].tolist()
    expected = tok.decode([i for i in ids if i != tok.eos_id])
    assert out.getvalue() == "La fotosíntesis" + expected + "\n"


def test_token_printer_waits_for_whole_utf8_characters():
    from llmlab.tokenizer import BPETokenizer

    tok = BPETokenizer(special_tokens=["<|end|>"])  # bytes only: "ñ" is two tokens
    out = Recorder()
    printer = TokenPrinter(tok, out)
    for token_id in "año".encode("utf-8"):
        printer.write(token_id)
    printer.write(tok.special_tokens["<|end|>"])  # markers are not printed
    printer.close()
    assert out.getvalue() == "año"
    assert out.writes == ["a", "ñ", "o"]  # nothing printed after the first half of "ñ"

    out = Recorder()
    printer = TokenPrinter(tok, out)
    printer.write("ñ".encode("utf-8")[0])
    printer.close()  # an unfinished character is shown as the replacement character
    assert out.getvalue() == "\ufffd"


def test_show_top_prints_the_candidates_of_each_step(monkeypatch):
    code, out = run(["generate", "Había una vez", "--temperature", "0", "--max-new-tokens", "4", "--show-top", "5"], monkeypatch)
    assert code == 0
    steps = [line for line in out.getvalue().splitlines() if line.startswith("paso")]
    assert len(steps) == 4
    for line in steps:
        chosen, p, candidates = re.fullmatch(r"paso +\d+: elegido (.+) \(p=(\d\.\d{3})\) \| (.*)", line).groups()
        probs = [float(x) for x in re.findall(r" (\d\.\d{3})(?:  |$)", candidates)]
        assert len(probs) == 5 and probs == sorted(probs, reverse=True) and sum(probs) <= 1.0 + 1e-3
        assert candidates.startswith(f"{chosen} {p}")  # greedy: the chosen token is the most likely one
    assert "Texto: Había una vez" in out.getvalue()


def test_chat_answers_with_the_chat_model(monkeypatch):
    code, out = run(["generate", "¿Qué es un volcán?", "--chat", "--temperature", "0", "--max-new-tokens", "60"], monkeypatch)
    assert code == 0
    answer = out.getvalue()
    assert "¿Qué es un volcán?" not in answer and "<|" not in answer
    assert len(answer.split()) >= 3


@pytest.mark.parametrize(
    "argv, message",
    [
        (["generate", "x", "--temperature", "caliente"], "--temperature: debe ser un número"),
        (["generate", "x", "--temperature", "-1"], "--temperature: debe ser un número >= 0"),
        (["generate", "x", "--top-p", "1.5"], "--top-p: debe ser un número en (0, 1]"),
        (["generate", "x", "--top-k", "0"], "--top-k: debe ser un entero >= 1"),
        (["generate", "x", "--max-new-tokens", "dos"], "--max-new-tokens: debe ser un número entero"),
        (["generate"], "faltan argumentos obligatorios: PROMPT"),
        (["traducir", "x"], "opción no válida"),
        (["generate", "x", "--temprature", "1"], "argumentos no reconocidos"),
    ],
)
def test_bad_arguments_exit_with_a_spanish_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["generate", "x", "--model", "gpt-5"], "modelo desconocido 'gpt-5'"),
        (["generate", "x", "--chat", "--model", "es-base"], "no está ajustado para chat"),
        (["generate", "x", "--max-new-tokens", "5000"], "no cabe"),
        (["generate", "x", "--preset", "loco"], "preajuste desconocido"),
        (["generate", "x", "--temperature", "0", "--top-k", "5"], "greedy"),
    ],
)
def test_bad_values_exit_with_a_spanish_message(argv, message, capsys, monkeypatch):
    code, _ = run(argv, monkeypatch)
    assert code == 2
    assert message in capsys.readouterr().err


def test_corrupted_models_give_a_clear_error(tmp_path, capsys, monkeypatch):
    import shutil

    shutil.copytree(pretrained.models_dir(), tmp_path / "m")
    (tmp_path / "m" / "es-base.safetensors").write_bytes(b"not weights")
    code, _ = run(["generate", "x", "--models-dir", str(tmp_path / "m")], monkeypatch)
    assert code == 1
    err = capsys.readouterr().err
    assert "no se pudieron leer los archivos del modelo" in err and "es-base.safetensors" in err


def test_preset_and_overrides(monkeypatch):
    code, out = run(["generate", "Querida abuela:", "--preset", "precise", "--seed", "1", "--max-new-tokens", "8"], monkeypatch)
    assert code == 0 and out.getvalue().startswith("Querida abuela:")
    greedy = run(["generate", "Querida abuela:", "--preset", "deterministic", "--max-new-tokens", "8"], monkeypatch)[1]
    assert greedy.getvalue() == run(["generate", "Querida abuela:", "--temperature", "0", "--max-new-tokens", "8"],
                                    monkeypatch)[1].getvalue()


@pytest.mark.slow
@pytest.mark.e2e  # a real process: the end-to-end layer, not the unit tests of __main__
def test_python_dash_m_llmlab_in_a_subprocess():
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-m", "llmlab", "generate", "Había una vez", "--seed", "0", "--max-new-tokens", "10"],
        capture_output=True, text=True, encoding="utf-8", env=env, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Había una vez") and len(done.stdout) > len("Había una vez\n")
    bad = subprocess.run([sys.executable, "-m", "llmlab", "generate", "x", "--top-k", "cero"],
                         capture_output=True, text=True, encoding="utf-8", env=env, timeout=120)
    assert bad.returncode == 2 and "debe ser un número entero" in bad.stderr
