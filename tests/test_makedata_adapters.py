"""python course/tools/makedata adapters --smoke: the whole pipeline on a few steps, and what it writes.

The real results are not checked here (they depend on the shipped models, which get rebuilt); the
smoke build proves that every stage runs on whatever models ``llmlab.pretrained`` ships and that
its files are consistent: results, report, checksums, and an adapter that loads back on its base.
"""

import json
import math

import pytest
from llmlab import lora, pretrained
from makedata import adapters as build_adapters


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("adapters")
    results = build_adapters.build(out, smoke=True, progress=False, quiet=True)
    return out, results


@pytest.mark.slow
def test_smoke_build_writes_consistent_files(smoke):
    out, results = smoke
    assert sorted(p.name for p in out.iterdir()) == ["REPORT.md", "checksums.sha256", "es-base-chat-lora", "results.json"]
    assert json.loads((out / "results.json").read_text()) == json.loads(json.dumps(results))
    pretrained.verify(models_dir=out)  # every file listed in checksums.sha256 is intact
    base_params = pretrained.info("es-base")["parameters"]
    assert results["base_parameters"] == base_params
    runs = results["runs"]
    assert {r["method"] for r in runs.values()} == {"lora", "full"}
    for name, row in runs.items():
        m = row["memory"]
        assert m["total"] == m["weights"] + m["gradients"] + m["optimizer"]
        if row["method"] == "full":
            assert row["trainable"] == base_params and m["gradients"] == 4 * base_params and m["optimizer"] == 8 * base_params
        else:
            assert 0 < row["trainable"] < base_params and m["gradients"] == 4 * row["trainable"]
        assert math.isfinite(row["answer_loss"]) and math.isfinite(row["plain_loss"])
    # the shipped adapter is the LoRA run with the best answer loss, and loads back on its base
    best = min((k for k, v in runs.items() if v["method"] == "lora"), key=lambda k: runs[k]["answer_loss"])
    assert results["shipped"]["run"] == best
    model = lora.load_adapter(pretrained.load("es-base")[0], out / "es-base-chat-lora")
    assert len(lora.lora_layers(model)) == runs[best]["layers"]
    # distillation: same student both times, hard labels are lam = 0
    d = results["distill"]
    assert d["runs"]["hard"]["lam"] == 0.0 and d["runs"]["soft"]["lam"] == d["lam"]
    assert d["student_parameters"] == pretrained.info("es-mini")["parameters"]
    # QLoRA (llmlab.quant is part of the package): the frozen base takes fewer bytes than the float one
    assert results["qlora"]
    for row in results["qlora"].values():
        assert row["memory"]["weights"] < runs[row["like"]]["memory"]["weights"]
        assert row["trainable"] == runs[row["like"]]["trainable"]
    report = (out / "REPORT.md").read_text()
    for heading in ("## Chat fine-tuning", "**Training memory**", "## QLoRA", "## Distillation"):
        assert heading in report


@pytest.mark.slow
def test_smoke_build_is_repeatable(smoke, tmp_path):
    out, first = smoke
    again = build_adapters.build(tmp_path, smoke=True, progress=False, quiet=True)
    for name, row in first["runs"].items():
        assert again["runs"][name]["history"]["train_loss"] == pytest.approx(row["history"]["train_loss"], abs=1e-6)
    weights = f"es-base-chat-lora/{lora.ADAPTER_WEIGHTS}"
    assert (tmp_path / weights).read_bytes() == (out / weights).read_bytes()  # same seed, same threads: same file


def test_command_line_rejects_bad_threads(capsys):
    with pytest.raises(SystemExit):
        build_adapters.main(["--threads", "0"])
    assert "--threads" in capsys.readouterr().err
