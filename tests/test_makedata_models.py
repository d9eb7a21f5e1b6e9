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


# ---------------------------------------------------------------------------------------------
# Resumable training (the next recipe's 2-hour build)
# ---------------------------------------------------------------------------------------------
def _tiny_run(tmp_path, **kw):
    from llmlab.model import ModelConfig, Transformer
    from makedata.models import resumable_train

    torch.manual_seed(0)
    model = Transformer(ModelConfig.llama_style(vocab_size=50, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, max_seq_len=16))
    ids = torch.randint(0, 50, (400,), generator=torch.Generator().manual_seed(1))
    args = dict(steps=8, batch_size=2, seq_len=8, lr=1e-2, warmup=1, eval_every=2, seed=3, checkpoint_every=2)
    return model, resumable_train(model, ids, ids[:100], **{**args, **kw})


def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path):
    plain_model, plain = _tiny_run(tmp_path, checkpoint=tmp_path / "a.ckpt")
    _, first = _tiny_run(tmp_path, checkpoint=tmp_path / "b.ckpt", stop_after_steps=3)
    assert first["interrupted"] and first["steps_run"] == 3 and (tmp_path / "b.ckpt").exists()
    resumed_model, resumed = _tiny_run(tmp_path, checkpoint=tmp_path / "b.ckpt")
    assert resumed["resumed_at"] == [3] and resumed["steps_run"] == 8 and resumed["tokens_seen"] == plain["tokens_seen"]
    assert resumed["train_loss"] == plain["train_loss"] and resumed["val_loss"] == plain["val_loss"]
    for a, b in zip(plain_model.state_dict().values(), resumed_model.state_dict().values()):
        assert torch.equal(a, b)


def test_resumable_train_matches_llmlab_train(tmp_path):
    from llmlab.model import ModelConfig, Transformer
    from llmlab.train import train

    torch.manual_seed(0)
    model = Transformer(ModelConfig.llama_style(vocab_size=50, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, max_seq_len=16))
    ids = torch.randint(0, 50, (400,), generator=torch.Generator().manual_seed(1))
    h = train(model, ids, ids[:100], steps=8, batch_size=2, seq_len=8, lr=1e-2, warmup=1, eval_every=2, seed=3, progress=False)
    _, mine = _tiny_run(tmp_path, checkpoint=None)
    assert mine["train_loss"] == pytest.approx(h["train_loss"], abs=1e-6) and mine["best_step"] == h["best_step"]


def test_a_checkpoint_of_another_run_is_refused(tmp_path):
    _tiny_run(tmp_path, checkpoint=tmp_path / "c.ckpt", stop_after_steps=2)
    with pytest.raises(ValueError, match="another run"):
        _tiny_run(tmp_path, checkpoint=tmp_path / "c.ckpt", lr=5e-3)


def test_next_recipe_budget():
    from makedata.models import FULL, NEXT, RECIPES

    assert RECIPES["next"] is NEXT and NEXT["checkpoint_every"] and not FULL["checkpoint_every"]
    tokens = {name: m["train"]["steps"] * m["train"]["batch_size"] * m["train"]["seq_len"] for name, m in NEXT["models"].items()}
    assert tokens["es-base"] >= 15_000_000 and tokens["es-mini"] >= 15_000_000  # tens of millions, not 1.3 M
    small = RECIPES["next-small"]["models"]
    assert small["es-base"]["config"]["d_model"] > small["es-mini"]["config"]["d_model"]  # the draft stays the smaller one
    assert small["es-base"]["train"]["steps"] * 16 * 256 >= 20_000_000
    # The shipped recipe is unchanged (the shipped files are its output).
    assert FULL["models"]["es-base"]["train"]["steps"] == 320


@pytest.mark.slow
def test_smoke_build_with_the_heldout_report_before_and_after(tmp_path):
    from makedata.common import overridden
    from makedata.models import SMOKE

    build(tmp_path, smoke=True, progress=False, quiet=True)
    recipe = overridden(SMOKE, {"heldout": True, "quality": {"samples": 3}})
    results = build(tmp_path, recipe=recipe, progress=False, quiet=True, checkpoints=tmp_path / "ckpt")
    assert set(results["heldout"]) == {"before", "after"} and results["heldout"]["before"] is not None
    text = (tmp_path / "HELDOUT.md").read_text(encoding="utf-8")
    assert "## Before this build" in text and "## After this build" in text
    assert text.count("\n- on topic: ") + text.count("\n- off topic / wrong: ") == 20 + 12
    assert (tmp_path / "ckpt" / "es-base.ckpt").exists() and (tmp_path / "ckpt" / "heldout_before.json").exists()


@pytest.mark.slow
def test_a_chat_only_build_keeps_the_pretrained_files_and_retrains_the_adapter(tmp_path):
    from makedata.common import overridden
    from makedata.models import SMOKE

    build(tmp_path, smoke=True, progress=False, quiet=True)
    kept = {n: (tmp_path / n).read_bytes() for n in ("tokenizer.json", "es-base.safetensors", "es-mini.safetensors")}
    adapter = tmp_path / "es-chat-lora" / "adapter_model.safetensors"
    first = adapter.read_bytes()
    recipe = overridden(SMOKE, {"chat": {"train": {"steps": 5}}})  # another chat run: a different adapter
    results = build(tmp_path, recipe=recipe, progress=False, quiet=True, checkpoints=tmp_path / "ckpt", chat_only=True)
    assert {n: (tmp_path / n).read_bytes() for n in kept} == kept  # byte for byte: lab 06's adapters stay valid
    assert adapter.read_bytes() != first and results["histories"]["es-chat"]["steps_run"] == 5
    assert json.loads((tmp_path / "training_log.json").read_text())["recipe"]["chat_only"] is True
    from llmlab import pretrained

    pretrained.verify(models_dir=tmp_path)  # the checksums cover the new adapter
    with pytest.raises(FileNotFoundError, match="chat-only"):
        build(tmp_path / "empty", smoke=True, progress=False, quiet=True, chat_only=True)


def test_the_chat_step_trains_the_marker_rows_of_both_tables_and_nothing_else():
    """es-chat never ended its answers while only the embedding rows of the chat markers trained: the LM head
    is a separate table in these models, and its ``<|end|>`` row stayed where pretraining pushed it."""
    from llmlab import lora
    from llmlab.model import ModelConfig, Transformer
    from makedata.models import _train_marker_rows

    torch.manual_seed(0)
    model = Transformer(ModelConfig.llama_style(vocab_size=32, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1))
    assert model.lm_head.weight is not model.tok_emb.weight
    lora.add_lora(model, r=2, alpha=4, target_modules="all-linear")
    before = {t: getattr(model, t).weight.detach().clone() for t in ("tok_emb", "lm_head")}
    release = _train_marker_rows(model, [30, 31], start_from={31: 5})
    for t in ("tok_emb", "lm_head"):
        assert torch.equal(getattr(model, t).weight[31], before[t][5])  # <|end|> starts as <|eos|>
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=0.1, weight_decay=0.0)
    for _ in range(3):
        ids = torch.randint(0, 32, (2, 8))
        loss = torch.nn.functional.cross_entropy(model(ids).reshape(-1, 32), torch.full((16,), 31))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    release()
    for t in ("tok_emb", "lm_head"):
        weight = getattr(model, t).weight
        assert not weight.requires_grad
        assert not torch.equal(weight[31], before[t][5]), f"{t}: the <|end|> row did not train"
        assert torch.equal(weight[:30], before[t][:30]), f"{t}: a row outside the markers moved"
