"""The adapter and measurements shipped in llmlab/data/adapters/ belong to the shipped models.

If these fail after the tiny models were rebuilt, run ``python course/tools/makedata adapters`` again: the
adapter records the fingerprint of the base it was trained on.
"""

import math

import pytest

from llmlab import corpus, lora, pretrained
from llmlab.train import build_sft_examples, evaluate

REBUILD = "the shipped models changed since the adapters were built: run python course/tools/makedata adapters"


def test_results_are_verified_and_complete():
    results = pretrained.shipped_results()
    assert not results["smoke"], "llmlab/data/adapters holds a --smoke build"
    for key in ("runs", "references", "shipped", "distill", "qlora", "card"):
        assert key in results
    assert results["base_parameters"] == pretrained.info(results["base"])["parameters"], REBUILD
    assert {r["method"] for r in results["runs"].values()} == {"lora", "full"}


def test_shipped_adapter_loads_on_the_shipped_base_with_the_measured_loss():
    results = pretrained.shipped_results()
    base, tok = pretrained.load(results["base"])
    try:
        model = lora.load_adapter(base, pretrained.shipped_adapter())
    except ValueError as err:
        pytest.fail(f"{REBUILD} ({err})")
    rows, mask = build_sft_examples(corpus.load_chat("validation"), tok, seq_len=results["recipe"]["sft"]["seq_len"])
    # the build measured it on the same files: same number, up to summation order
    assert evaluate(model, rows, loss_mask=mask) == pytest.approx(results["shipped"]["answer_loss"], abs=1e-4)
    assert math.isfinite(results["shipped"]["answer_loss"])


def test_shipped_adapter_is_refused_by_another_base():
    with pytest.raises(ValueError, match="another base"):
        lora.load_adapter(pretrained.load("es-mini")[0], pretrained.shipped_adapter())
    with pytest.raises(ValueError, match="no shipped adapter"):
        pretrained.shipped_adapter("no-such-adapter")
