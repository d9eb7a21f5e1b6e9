"""makedata.models: the n-gram baselines, the shipped base model against them, and the smoke build."""

import json
import math

import pytest
import torch

from llmlab import corpus, pretrained
from llmlab.train import encode_documents, evaluate
from makedata.models import build, ngram_nll

NAMES = ["es-base", "es-mini", "es-chat"]


@pytest.fixture(scope="module")
def loaded():
    return {name: pretrained.load(name) for name in NAMES}


@pytest.mark.slow
def test_base_model_beats_the_bigram_on_validation_and_unseen_text(loaded):
    model, tok = loaded["es-base"]
    streams = {s: encode_documents(corpus.load_documents(s), tok) for s in ("train", "validation", "unseen")}
    for split in ("validation", "unseen"):
        bigram = min(ngram_nll(streams["train"], streams[split], len(tok), 2, k) for k in (0.01, 0.03, 0.1))
        ours = evaluate(model, streams[split])
        assert math.exp(ours) * 1.3 < math.exp(bigram), (split, math.exp(ours), math.exp(bigram))


# ----------------------------------------------------------------------------------------------
# Baselines and the smoke build
# ----------------------------------------------------------------------------------------------


def test_ngram_baselines_by_hand():
    train_ids, eval_ids, V, k = torch.tensor([0, 1, 0, 1, 2]), torch.tensor([0, 1, 2]), 3, 0.5
    # unigram: counts 2, 2, 1 of 5 tokens -> p(w) = (c + k) / (5 + 3k)
    p1, p2 = (2 + k) / (5 + 3 * k), (1 + k) / (5 + 3 * k)
    assert ngram_nll(train_ids, eval_ids, V, 1, k) == pytest.approx(-(math.log(p1) + math.log(p2)) / 2, abs=1e-12)
    # bigram: c(0,1) = 2, c(0) = 2; c(1,2) = 1, c(1) = 2 -> p(w|u) = (c(u,w) + k) / (c(u) + 3k)
    q1, q2 = (2 + k) / (2 + 3 * k), (1 + k) / (2 + 3 * k)
    assert ngram_nll(train_ids, eval_ids, V, 2, k) == pytest.approx(-(math.log(q1) + math.log(q2)) / 2, abs=1e-12)
    with pytest.raises(ValueError, match="order"):
        ngram_nll(train_ids, eval_ids, V, 3, k)


@pytest.mark.slow
def test_smoke_build_writes_loadable_models(tmp_path):
    results = build(tmp_path, smoke=True, progress=False, quiet=True)
    assert set(results["models"]) == set(NAMES)
    assert (tmp_path / "REPORT.md").read_text(encoding="utf-8").startswith("# The shipped models")
    assert pretrained.available(models_dir=tmp_path).keys() == pretrained.available().keys()
    pretrained.verify(models_dir=tmp_path)
    for name in NAMES:
        model, tok = pretrained.load(name, models_dir=tmp_path)
        assert model.config.vocab_size == len(tok)
    log = json.loads((tmp_path / "training_log.json").read_text(encoding="utf-8"))
    assert log["smoke"] is True and set(log["histories"]) == set(NAMES)
    # Same seeds, same machine: the same tokenizer, configs and weights, byte for byte.
    again = tmp_path / "again"
    build(again, smoke=True, progress=False, quiet=True)
    sums = (tmp_path / pretrained.CHECKSUMS).read_text(encoding="utf-8")
    assert (again / pretrained.CHECKSUMS).read_text(encoding="utf-8") == sums
