"""llmlab.train: batches, the loss mask, evaluation, the schedule and a deterministic training loop."""

import math
import sys

import pytest
import torch
from torch import nn

from llmlab.model import ModelConfig, Transformer
from llmlab.tokenizer import BPETokenizer
from llmlab.train import build_sft_examples, encode_documents, evaluate, get_batch, lr_at, stream_rows, train

V = 40


def tiny_model(seed=0, dropout=0.0, vocab=V):
    torch.manual_seed(seed)
    config = ModelConfig.llama_style(vocab_size=vocab, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1,
                                     max_seq_len=32, dropout=dropout)
    return Transformer(config)


def stream(n=400, seed=1):
    # A repetitive stream with some noise: learnable in a few steps, not trivially.
    g = torch.Generator().manual_seed(seed)
    base = torch.arange(n) % 7
    noise = torch.randint(0, V, (n,), generator=g)
    return torch.where(torch.rand(n, generator=g) < 0.2, noise, base)


class BigramTable(nn.Module):
    """A stand-in model whose prediction depends only on the current token: evaluate must not depend on windows."""

    def __init__(self, vocab=V, seed=0):
        super().__init__()
        self.table = nn.Parameter(torch.randn(vocab, vocab, generator=torch.Generator().manual_seed(seed)))

    def forward(self, ids):
        return self.table[ids]


# ----------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------


def test_get_batch_stream_targets_are_inputs_shifted_by_one():
    data = torch.arange(100)
    x, y, m = get_batch(data, 5, 8, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (5, 8) and m is None
    assert torch.equal(y[:, :-1], x[:, 1:])
    assert torch.equal(y, x + 1)  # windows of a contiguous stream
    assert int(y.max()) <= 99


def test_get_batch_mask_is_aligned_with_targets():
    data = torch.arange(50)
    mask = (data % 3 == 0).long()
    _, y, m = get_batch(data, 4, 6, torch.Generator().manual_seed(1), loss_mask=mask)
    assert torch.equal(m.bool(), y % 3 == 0)  # the mask of a target is the mask of *that* token


def test_get_batch_rows_and_bad_arguments():
    rows = torch.arange(30).view(3, 10)
    x, y, _ = get_batch(rows, 4, 9, torch.Generator().manual_seed(0))
    assert x.shape == (4, 9) and torch.equal(y, x + 1)
    with pytest.raises(ValueError, match="seq_len"):
        get_batch(rows, 4, 8)
    with pytest.raises(ValueError, match="fewer than seq_len"):
        get_batch(torch.arange(5), 2, 8)
    with pytest.raises(ValueError, match="loss_mask"):
        get_batch(torch.arange(50), 2, 8, loss_mask=torch.ones(49))
    with pytest.raises(TypeError, match="integer token ids"):
        get_batch(torch.rand(50), 2, 8)


def test_stream_rows_are_windows_of_the_stream():
    rows = stream_rows(torch.arange(100), 6, 9, seed=2)
    assert rows.shape == (6, 10)
    assert torch.equal(rows[:, 1:], rows[:, :-1] + 1) and int(rows.max()) <= 99
    assert torch.equal(rows, stream_rows(torch.arange(100), 6, 9, seed=2))
    with pytest.raises(ValueError, match="fewer than"):
        stream_rows(torch.arange(5), 1, 9)


@pytest.fixture(scope="module")
def tok():
    text = "Hola, ¿qué tal? Muy bien, gracias. La fotosíntesis convierte luz en azúcar. " * 5
    return BPETokenizer.train(text, 300)


def test_encode_documents_wraps_each_document(tok):
    ids = encode_documents(["Hola.", "Adiós."], tok).tolist()
    assert ids[0] == tok.bos_id and ids[-1] == tok.eos_id
    assert ids.count(tok.bos_id) == 2 and ids.count(tok.eos_id) == 2
    assert tok.decode(ids, skip_special=True) == "Hola.Adiós."
    with pytest.raises(TypeError, match="one string"):
        encode_documents("Hola.", tok)


def test_sft_examples_mask_only_answers(tok):
    conversations = [
        [{"role": "user", "content": "¿Qué tal?"}, {"role": "assistant", "content": "Muy bien."}],
        [{"role": "system", "content": "Sé breve."}, {"role": "user", "content": "Hola"},
         {"role": "assistant", "content": "Hola, gracias."}],
    ]
    rows, mask = build_sft_examples(conversations, tok, seq_len=63, style="chatml")
    assert rows.shape == mask.shape and rows.shape[1] == 64
    assert rows.shape[0] == 1  # both conversations packed whole in one row
    ids, m = rows[0].tolist(), mask[0].tolist()
    answer = [i for i, keep in zip(ids, m) if keep]
    end = tok.special_tokens["<|end|>"]
    assert tok.decode([i for i in answer if i != end]) == "Muy bien.Hola, gracias."
    assert answer.count(end) == 2  # the model must learn to close its turn
    prompt_text = tok.decode([i for i, keep in zip(ids, m) if not keep], skip_special=True)
    assert "¿Qué tal?" in prompt_text and "Sé breve." in prompt_text and "Muy bien" not in prompt_text
    assert ids[-1] == tok.pad_id and m[-1] == 0
    assert ids.count(tok.bos_id) == 2

    rows, _ = build_sft_examples(conversations, tok, seq_len=31, style="chatml")
    assert rows.shape[0] == 2  # they no longer fit together
    with pytest.warns(UserWarning, match="cut"):
        build_sft_examples(conversations, tok, seq_len=8, style="chatml")


# ----------------------------------------------------------------------------------------------
# Evaluation and schedule
# ----------------------------------------------------------------------------------------------


def nll(logits, targets):
    # Per-token losses in float32 (as the model computes them), averaged in float64 (as evaluate does).
    with torch.no_grad():
        return float(nn.functional.cross_entropy(logits, targets, reduction="none").double().mean())


@torch.no_grad()
def test_evaluate_scores_every_token_after_the_first_once():
    ids = stream(203)
    model = BigramTable()
    expected = nll(model.table[ids[:-1]], ids[1:])
    for seq_len in (7, 50, 202, 500):
        assert evaluate(model, ids, seq_len=seq_len, batch_size=3) == pytest.approx(expected, rel=1e-9, abs=1e-9)
    mask = (torch.arange(203) % 2).float()
    keep = mask[1:].bool()
    masked = nll(model.table[ids[:-1]][keep], ids[1:][keep])
    assert evaluate(model, ids, seq_len=10, loss_mask=mask) == pytest.approx(masked, rel=1e-9, abs=1e-9)
    assert evaluate(model, ids, seq_len=10, max_tokens=50) == pytest.approx(
        nll(model.table[ids[:49]], ids[1:50]), rel=1e-9, abs=1e-9)


def test_evaluate_uniform_model_gives_log_vocab_and_restores_mode():
    model = tiny_model(dropout=0.5)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    model.train()
    assert evaluate(model, stream(100)) == pytest.approx(math.log(V), abs=1e-6)
    assert model.training  # put back in the mode it was in


def test_lr_schedule():
    kw = dict(lr=1.0, warmup=10, steps=110, min_lr_ratio=0.1)
    assert lr_at(0, **kw) == pytest.approx(0.1, abs=1e-12)
    assert lr_at(9, **kw) == pytest.approx(1.0, abs=1e-12)
    assert lr_at(60, **kw) == pytest.approx(0.55, abs=1e-12)  # halfway through the cosine
    assert lr_at(110, **kw) == pytest.approx(0.1, abs=1e-12)
    after = [lr_at(s, **kw) for s in range(10, 111)]
    assert all(a >= b for a, b in zip(after, after[1:]))


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------

FAST = dict(batch_size=4, seq_len=16, lr=1e-2, warmup=2, eval_every=10, progress=False)


def test_a_few_steps_lower_the_loss():
    ids = stream()
    model = tiny_model()
    before = evaluate(model, ids)
    history = train(model, ids, ids[:100], steps=30, **FAST)
    after = evaluate(model, ids)
    assert after < before - 0.5, (before, after)
    assert history["steps_run"] == 30 and len(history["train_loss"]) == 30
    assert history["eval_step"] == [10, 20, 30]
    assert history["tokens_seen"] == 30 * 4 * 16
    assert history["best_val_loss"] == min(history["val_loss"])
    assert not model.training


def test_training_is_deterministic_given_the_seed():
    ids = stream()

    def run(seed):
        model = tiny_model(dropout=0.1)
        history = train(model, ids, ids[:100], steps=12, seed=seed, **FAST)
        return history["train_loss"], model.state_dict()

    losses_a, state_a = run(3)
    losses_b, state_b = run(3)
    losses_c, _ = run(4)
    assert losses_a == losses_b
    assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)
    assert losses_a != losses_c  # the seed drives the batches and dropout


def test_full_mask_equals_no_mask():
    ids = stream()

    def run(mask):
        model = tiny_model()
        return train(model, ids, ids[:100], steps=5, loss_mask=mask, **FAST)["train_loss"]

    assert run(None) == run(torch.ones_like(ids))
    assert run(None) != run((torch.arange(ids.numel()) % 2).long())


def test_loss_mask_is_respected():
    # In SFT rows the masked positions are prompt tokens; changing only the *last* token of each
    # row (a target that is never an input) where it is masked must not change training at all.
    g = torch.Generator().manual_seed(0)
    rows = torch.randint(0, V, (6, 17), generator=g)
    mask = torch.ones_like(rows)
    mask[:, -1] = 0
    changed = rows.clone()
    changed[:, -1] = (changed[:, -1] + 1) % V

    def run(data, loss_mask):
        model = tiny_model()
        history = train(model, data, data, steps=6, loss_mask=loss_mask, val_loss_mask=loss_mask, **FAST)
        return history["train_loss"], model.state_dict()

    la, sa = run(rows, mask)
    lb, sb = run(changed, mask)
    assert la == lb and all(torch.equal(sa[k], sb[k]) for k in sa)
    lc, _ = run(changed, None)  # without the mask the change matters: the test can fail
    assert lc != la


def test_early_stopping_restores_the_best_weights():
    ids = stream()
    val = torch.randint(0, V, (200,), generator=torch.Generator().manual_seed(9))  # unlearnable: val gets worse
    model = tiny_model()
    history = train(model, ids, val, steps=60, patience=2, **{**FAST, "eval_every": 5})
    assert history["stopped_early"] and history["steps_run"] < 60
    assert evaluate(model, val, seq_len=16) == pytest.approx(history["best_val_loss"], abs=1e-6)


def test_progress_falls_back_to_printed_lines_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    ids = stream()
    train(tiny_model(), ids, ids[:100], steps=4, **{**FAST, "eval_every": 2, "progress": True})
    err = capsys.readouterr().err
    assert "step 2/4" in err and "step 4/4" in err and "val" in err


def test_train_rejects_bad_arguments():
    ids = stream()
    model = tiny_model()
    with pytest.raises(ValueError, match="steps"):
        train(model, ids, ids, steps=0, **FAST)
    with pytest.raises(ValueError, match="max_seq_len"):
        train(model, ids, ids, steps=1, **{**FAST, "seq_len": 64})
    with pytest.raises(ValueError, match="loss_mask"):
        train(model, ids, ids, steps=1, loss_mask=torch.ones(3), **FAST)
    with pytest.raises(TypeError, match="lr"):
        train(model, ids, ids, steps=1, **{**FAST, "lr": float("nan")})
