"""llmlab.adaptation: the chapter's decision rules (mistakes 6-M3 and 6-M6)."""

import pytest

from llmlab import adaptation as ad


def test_choose_adaptation_follows_the_table():
    expected = {
        "changing knowledge": "RAG",
        "specific format": "instruction tuning",
        "few resources": "LoRA",
        "low latency": "distillation",
        "local control": "open weights",
        "max quality": "large API model",
    }
    for need, technique in expected.items():
        assert ad.choose_adaptation(need) == technique
    assert ad.choose_adaptation("changing knowledge") != "fine-tuning"  # 6-M3
    with pytest.raises(ValueError, match="unknown need"):
        ad.choose_adaptation("knowledge")
    with pytest.raises(TypeError):
        ad.choose_adaptation(None)


def test_openness_category():
    weights_only = {"weights": True, "code": False, "data": False, "recipe": False, "license": "custom"}
    assert ad.openness_category(weights_only) == "open weights"  # 6-M6: not "open source"
    everything = {"weights": True, "code": True, "data": True, "recipe": True, "license": "Apache-2.0"}
    assert ad.openness_category(everything) == "open source"
    assert ad.openness_category({**everything, "license": "llama3"}) == "open weights"
    assert ad.openness_category({**everything, "data": False}) == "open weights"
    assert ad.openness_category({**everything, "weights": False}) == "closed"
    with pytest.raises(ValueError, match="lacks"):
        ad.openness_category({"weights": True})
