"""llmlab.lora on its own: the chapter's counts, the update on matrices, LoRALinear, whole models, adapter folders.

Parity with Hugging Face PEFT is in ``tests/test_lora_peft.py``.
"""

import copy
import json

import numpy as np
import pytest
import torch

from llmlab import lora
from llmlab.model import ModelConfig, Transformer
from llmlab.train import train

VOCAB = 61


def tiny(seed: int = 0, **overrides) -> Transformer:
    settings = dict(vocab_size=VOCAB, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, max_seq_len=32)
    settings.update(overrides)
    torch.manual_seed(seed)
    model = Transformer(ModelConfig.llama_style(**settings)).eval()
    with torch.no_grad():  # O(1) weights, so that a wrong update moves the logits visibly
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 1.0 / settings["d_model"] ** 0.5)
    return model


def randomise_B_(model, seed: int = 1, std: float = 0.05):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in lora.lora_layers(model).values():
            layer.lora_B.weight.copy_(torch.randn(layer.lora_B.weight.shape, generator=g) * std)
    return model


def ids(batch=2, seq=9, seed=0):
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


# ----------------------------------------------------------------------------------------------
# 1. Counts: worked numbers 6-2, 6-2b, 6-3 and the non-square case
# ----------------------------------------------------------------------------------------------


def test_counts_match_the_chapter():
    assert lora.full_param_count(4096, 4096) == 16_777_216
    assert lora.lora_param_count(4096, 4096, 16) == 131_072
    assert lora.lora_fraction(4096, 4096, 16) == pytest.approx(0.0078125, abs=1e-12)  # 0.781 %
    assert lora.lora_param_count(4096, 4096, 8) == 65_536
    assert lora.lora_param_count(4096, 4096, 64) == 524_288
    assert lora.adapter_param_count(4096, 64) == 524_288  # = 3.125 % of the matrix, like LoRA r=64
    assert lora.adapter_param_count(4096, 64, bias=True) == 528_448
    # non-square (a Llama MLP matrix): r (d_in + d_out), not r d_in d_out nor 2 r d
    assert lora.lora_param_count(11008, 4096, 8) == 120_832
    assert lora.lora_param_count(4096, 4096, 0) == 0


def test_counts_reject_bad_input():
    with pytest.raises(ValueError, match="exceeds min"):
        lora.lora_param_count(16, 8, 9)
    with pytest.raises(ValueError):
        lora.lora_param_count(16, 8, -1)
    with pytest.raises(TypeError):
        lora.lora_param_count(16.0, 8, 2)
    with pytest.raises(ValueError):
        lora.full_param_count(0, 8)
    with pytest.raises(TypeError):
        lora.adapter_param_count(16, 4, bias="no")


def test_scaling_lora_and_rslora():
    assert lora.lora_scaling(32, 16) == 2.0
    assert lora.lora_scaling(32, 16, use_rslora=True) == 8.0  # alpha / sqrt(r)
    with pytest.raises(ValueError):
        lora.lora_scaling(0, 4)


# ----------------------------------------------------------------------------------------------
# 2. The update on plain matrices (NumPy and torch)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_merge_equals_unmerged_forward_and_round_trips(backend):
    rng = np.random.default_rng(0)
    W, A, B = rng.normal(size=(12, 20)), rng.normal(size=(4, 20)), rng.normal(size=(12, 4))
    x = rng.normal(size=(20,))
    if backend == "torch":
        W, A, B, x = (torch.tensor(t) for t in (W, A, B, x))
    merged = lora.merge_lora(W, A, B, alpha=32, r=16)
    unmerged = W @ x + (32 / 16) * (B @ (A @ x))
    np.testing.assert_allclose(np.asarray(merged @ x), np.asarray(unmerged), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(lora.unmerge_lora(merged, A, B, 32, 16)), np.asarray(W), rtol=0, atol=1e-12)
    assert np.linalg.matrix_rank(np.asarray(lora.lora_delta(A, B, 32, 16))) <= 4
    # W itself is untouched
    assert np.asarray(W).shape == (12, 20) and not np.allclose(np.asarray(merged), np.asarray(W))


def test_merge_lora_rejects_shapes_that_do_not_fit():
    W, A, B = np.zeros((5, 6)), np.zeros((2, 6)), np.zeros((5, 3))
    with pytest.raises(ValueError, match="shapes do not fit|do not multiply"):
        lora.merge_lora(W, A, B, 4, 2)
    with pytest.raises(ValueError):
        lora.merge_lora(np.zeros((6, 5)), np.zeros((2, 6)), np.zeros((5, 2)), 4, 2)


# ----------------------------------------------------------------------------------------------
# 3. LoRALinear
# ----------------------------------------------------------------------------------------------


def test_step_zero_is_exactly_the_base_layer():
    base = torch.nn.Linear(20, 12)
    layer = lora.LoRALinear(copy.deepcopy(base), r=4, alpha=8, dropout=0.5)
    x = torch.randn(3, 5, 20)
    layer.train()  # even with dropout active, B = 0 adds exactly nothing
    assert torch.equal(layer(x), base(x))
    assert torch.count_nonzero(layer.lora_B.weight) == 0
    assert layer.lora_A.weight.shape == (4, 20) and layer.lora_B.weight.shape == (12, 4)
    assert layer.lora_A.weight.abs().max() <= 1 / np.sqrt(20)  # PEFT's kaiming_uniform(a=sqrt(5))
    assert layer.lora_A.weight.std() > 0.5 / np.sqrt(20) / np.sqrt(3)


def test_gaussian_init_and_seeded_init():
    layer = lora.LoRALinear(torch.nn.Linear(400, 300), r=50, alpha=8, init="gaussian")
    assert float(layer.lora_A.weight.detach().std()) == pytest.approx(1 / 50, rel=0.05)
    a = lora.LoRALinear(torch.nn.Linear(20, 12), 4, 8, generator=torch.Generator().manual_seed(3))
    b = lora.LoRALinear(torch.nn.Linear(20, 12), 4, 8, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a.lora_A.weight, b.lora_A.weight)
    with pytest.raises(ValueError):
        lora.LoRALinear(torch.nn.Linear(20, 12), 4, 8, init="zeros")


def test_forward_is_base_plus_scaled_BA_and_dropout_only_on_the_lora_path():
    base = torch.nn.Linear(20, 12)
    layer = lora.LoRALinear(copy.deepcopy(base), r=4, alpha=12, use_rslora=True, dropout=0.3)
    torch.nn.init.normal_(layer.lora_B.weight)
    x = torch.randn(7, 20)
    layer.eval()
    expected = base(x) + (12 / 2.0) * (x @ layer.lora_A.weight.T @ layer.lora_B.weight.T)
    torch.testing.assert_close(layer(x), expected, rtol=0, atol=1e-5)
    layer.train()
    torch.manual_seed(5)
    out = layer(x)
    torch.manual_seed(5)
    dropped = torch.nn.functional.dropout(x, 0.3, training=True)
    torch.testing.assert_close(out, base(x) + 6.0 * (dropped @ layer.lora_A.weight.T @ layer.lora_B.weight.T),
                               rtol=0, atol=1e-5)


def test_only_A_and_B_learn():
    base = torch.nn.Linear(20, 12)
    layer = lora.LoRALinear(base, r=4, alpha=8)
    W0 = base.weight.detach().clone()
    opt = torch.optim.SGD([p for p in layer.parameters() if p.requires_grad], lr=0.1)
    for _ in range(3):
        loss = layer(torch.randn(8, 20)).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert base.weight.grad is None and torch.equal(base.weight, W0)
    assert torch.count_nonzero(layer.lora_B.weight) > 0


def test_layer_merge_unmerge():
    layer = lora.LoRALinear(torch.nn.Linear(20, 12), r=4, alpha=32)
    torch.nn.init.normal_(layer.lora_B.weight)
    W0 = layer.base_layer.weight.detach().clone()
    x = torch.randn(5, 20)
    before = layer(x)
    layer.merge()
    torch.testing.assert_close(layer(x), before, rtol=0, atol=1e-5)
    torch.testing.assert_close(layer.base_layer.weight, W0 + 8.0 * layer.lora_B.weight @ layer.lora_A.weight)
    with pytest.raises(RuntimeError, match="already merged"):
        layer.merge()
    layer.unmerge()
    torch.testing.assert_close(layer.base_layer.weight, W0, rtol=0, atol=1e-6)
    with pytest.raises(RuntimeError):
        layer.unmerge()


def test_quantized_base_cannot_be_merged():
    class IntLinear(torch.nn.Module):  # stands for a quantized layer: int8 weights in a buffer
        in_features, out_features = 20, 12

        def __init__(self):
            super().__init__()
            self.register_buffer("weight", torch.randint(-127, 128, (12, 20), dtype=torch.int8))

        def forward(self, x):
            return x @ self.weight.float().T * 0.01

    layer = lora.LoRALinear(IntLinear(), r=2, alpha=4)
    assert layer.lora_A.weight.dtype == torch.float32
    assert layer(torch.randn(3, 20)).shape == (3, 12)
    with pytest.raises(TypeError, match="quantized"):
        layer.merge()


def test_lora_linear_rejects_bad_arguments():
    with pytest.raises(TypeError):
        lora.LoRALinear(torch.nn.ReLU(), r=2, alpha=4)
    with pytest.raises(ValueError):
        lora.LoRALinear(torch.nn.Linear(4, 4), r=0, alpha=4)
    with pytest.raises(ValueError):
        lora.LoRALinear(torch.nn.Linear(4, 4), r=2, alpha=4, dropout=1.0)
    layer = lora.LoRALinear(torch.nn.Linear(4, 4), r=2, alpha=4)
    with pytest.raises(ValueError, match="already has"):
        lora.LoRALinear(layer, r=2, alpha=4)


# ----------------------------------------------------------------------------------------------
# 4. Whole models
# ----------------------------------------------------------------------------------------------


def test_add_lora_targets_freezes_and_counts():
    model = tiny()
    x = ids()
    before = model(x)
    lora.add_lora(model, "attention", r=4, alpha=8)
    names = list(lora.lora_layers(model))
    assert names == [f"blocks.{i}.attn.{p}_proj" for i in range(2) for p in "qkvo"]
    assert torch.equal(model(x), before)  # B = 0
    c = model.config
    expected = 2 * 4 * ((c.d_model + c.n_heads * c.head_dim) * 2 + (c.d_model + c.n_kv_heads * c.head_dim) * 2)
    summary = lora.trainable_summary(model)
    assert summary["trainable"] == expected
    assert summary["total"] == sum(p.numel() for p in tiny().parameters()) + expected
    assert all(p.requires_grad == (".lora_" in n) for n, p in model.named_parameters())


def test_targets_accept_hf_names_presets_and_reject_unknown():
    model = lora.add_lora(tiny(), ["gate_proj", "down"], r=2, alpha=4)
    assert sorted(lora.lora_layers(model)) == sorted(f"blocks.{i}.mlp.{n}" for i in range(2) for n in ("gate", "down"))
    assert len(lora.lora_layers(lora.add_lora(tiny(), "all-linear", r=2, alpha=4))) == 14
    assert list(lora.lora_layers(lora.add_lora(tiny(), "blocks.1.attn.q_proj", r=2, alpha=4))) == ["blocks.1.attn.q_proj"]
    with pytest.raises(ValueError, match="matches no linear layer"):
        lora.add_lora(tiny(), ["q_proj", "qproj"], r=2, alpha=4)
    with pytest.raises(ValueError, match="LM head"):
        lora.add_lora(tiny(), ["lm_head"], r=2, alpha=4)
    with pytest.raises(ValueError, match="exceeds"):
        lora.add_lora(tiny(), ["q_proj"], r=33, alpha=4)
    model = lora.add_lora(tiny(), ["q_proj"], r=2, alpha=4)
    with pytest.raises(ValueError, match="already has LoRA"):
        lora.add_lora(model, ["v_proj"], r=2, alpha=4)
    # GPT-2 style has no gate: the "mlp" preset takes what exists
    gpt = Transformer(ModelConfig.gpt2_style(vocab_size=VOCAB, d_model=32, n_layers=1, n_heads=4, max_seq_len=16))
    assert sorted(lora.lora_layers(lora.add_lora(gpt, "mlp", r=2, alpha=4))) == ["blocks.0.mlp.down", "blocks.0.mlp.up"]


def test_merged_model_equals_unmerged_and_unmerge_restores():
    model = randomise_B_(lora.add_lora(tiny(), "all-linear", r=4, alpha=32))
    base_weights = {k: v.clone() for k, v in model.state_dict().items() if "base_layer" in k}
    x = ids()
    unmerged = model(x)
    lora.merge(model)
    torch.testing.assert_close(model(x), unmerged, rtol=0, atol=1e-5)
    lora.unmerge(model)
    for k, v in model.state_dict().items():
        if k in base_weights:
            torch.testing.assert_close(v, base_weights[k], rtol=0, atol=1e-6)
    torch.testing.assert_close(model(x), unmerged, rtol=0, atol=1e-5)


def test_unload_with_and_without_merge():
    plain = tiny()
    x = ids()
    adapted = randomise_B_(lora.add_lora(copy.deepcopy(plain), "attention", r=4, alpha=8))
    expected = adapted(x)
    merged = lora.unload(copy.deepcopy(adapted))
    assert not lora.lora_layers(merged) and set(merged.state_dict()) == set(plain.state_dict())
    torch.testing.assert_close(merged(x), expected, rtol=0, atol=1e-5)
    dropped = lora.unload(adapted, merge=False)
    assert torch.equal(dropped(x), plain(x))
    assert all(p.requires_grad for p in dropped.parameters())
    with pytest.raises(ValueError, match="no LoRA"):
        lora.merge(dropped)


def test_training_moves_only_the_adapter_and_lowers_the_loss():
    model = lora.add_lora(tiny(dropout=0.0), ["q_proj", "v_proj", "up"], r=4, alpha=8)
    frozen = {k: v.clone() for k, v in model.state_dict().items() if ".lora_" not in k}
    data = torch.arange(400) % 7 + 3  # a repeating pattern, easy to learn
    history = train(model, data, data, steps=30, batch_size=4, seq_len=16, lr=1e-2, warmup=2, eval_every=30,
                    weight_decay=0.0, progress=False)
    assert history["train_loss"][-1] < history["train_loss"][0] - 0.5
    for k, v in model.state_dict().items():
        if k in frozen:
            assert torch.equal(v, frozen[k]), k


def test_training_memory_full_vs_lora():
    full = tiny()
    n = sum(p.numel() for p in full.parameters())
    opt = torch.optim.AdamW(full.parameters())
    full(ids()).sum().backward()
    opt.step()
    mem = lora.training_memory(full, opt)
    assert mem == {"weights": 4 * n, "gradients": 4 * n, "optimizer": 8 * n, "total": 16 * n}

    model = lora.add_lora(tiny(), "attention", r=4, alpha=8)
    t = lora.trainable_summary(model)["trainable"]
    before = lora.training_memory(model)  # gradients not yet allocated: what they will take
    assert before["gradients"] == 4 * t and before["optimizer"] == 0
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad])
    model(ids()).sum().backward()
    opt.step()
    mem = lora.training_memory(model, opt)
    assert mem["weights"] == 4 * (n + t) and mem["gradients"] == 4 * t and mem["optimizer"] == 8 * t


# ----------------------------------------------------------------------------------------------
# 5. Adapter folders
# ----------------------------------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path):
    model = randomise_B_(lora.add_lora(tiny(), ["q_proj", "v_proj", "down"], r=4, alpha=12, use_rslora=True))
    x = ids()
    expected = model(x)
    folder = lora.save_adapter(model, tmp_path / "ad", base_name="tiny")
    assert sorted(p.name for p in folder.iterdir()) == ["adapter_config.json", "adapter_model.safetensors"]
    config = json.loads((folder / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and config["r"] == 4 and config["lora_alpha"] == 12 and config["use_rslora"]
    assert config["target_modules"] == ["down_proj", "q_proj", "v_proj"]
    info = lora.read_adapter_config(folder)
    assert info["llmlab"]["base_fingerprint"] == lora.base_fingerprint(tiny()) and info["llmlab"]["base_name"] == "tiny"
    # only A and B: a few KB, not the model
    assert (folder / "adapter_model.safetensors").stat().st_size < 4 * lora.trainable_summary(model)["trainable"] + 4096

    loaded = lora.load_adapter(tiny(), folder)
    torch.testing.assert_close(loaded(x), expected, rtol=0, atol=0)
    assert lora.trainable_summary(loaded)["trainable"] == 0  # loaded for inference
    assert lora.trainable_summary(lora.load_adapter(tiny(), folder, trainable=True))["trainable"] > 0


def test_fingerprint_follows_the_base_weights():
    a = tiny()
    fp = lora.base_fingerprint(a)
    lora.add_lora(a, "attention", r=2, alpha=4)
    assert lora.base_fingerprint(a) == fp
    randomise_B_(a)
    lora.merge(a)
    assert lora.base_fingerprint(a) != fp
    assert lora.base_fingerprint(tiny(seed=1)) != fp


def test_load_refuses_another_base(tmp_path):
    folder = lora.save_adapter(randomise_B_(lora.add_lora(tiny(), ["q_proj"], r=2, alpha=4)), tmp_path / "ad")
    with pytest.raises(ValueError, match="another base model"):
        lora.load_adapter(tiny(seed=1), folder)
    lora.load_adapter(tiny(seed=1), folder, check_base=False)  # the user's explicit choice
    with pytest.raises(ValueError, match="another base shape"):
        lora.load_adapter(tiny(d_model=48), folder, check_base=False)
    with pytest.raises(ValueError, match="does not have|not a linear layer"):
        lora.load_adapter(tiny(n_layers=1), folder, check_base=False)


def test_load_refuses_other_targets_and_swaps_same_targets(tmp_path):
    a = randomise_B_(lora.add_lora(tiny(), ["q_proj"], r=2, alpha=4), seed=1)
    b = randomise_B_(lora.add_lora(tiny(), ["q_proj"], r=4, alpha=4), seed=2)
    other = randomise_B_(lora.add_lora(tiny(), ["v_proj"], r=2, alpha=4))
    fa, fb, fo = (lora.save_adapter(m, tmp_path / n) for m, n in ((a, "a"), (b, "b"), (other, "o")))
    x = ids()
    model = lora.load_adapter(tiny(), fa)
    torch.testing.assert_close(model(x), a(x), rtol=0, atol=0)
    lora.load_adapter(model, fb)  # same layers, another adapter (and rank): swapped
    torch.testing.assert_close(model(x), b(x), rtol=0, atol=0)
    with pytest.raises(ValueError, match="target modules differ"):
        lora.load_adapter(model, fo)
    lora.merge(model)
    with pytest.raises(ValueError, match="merged"):
        lora.save_adapter(model, tmp_path / "m")


def test_adapter_folder_errors(tmp_path):
    with pytest.raises(ValueError, match="no LoRA"):
        lora.save_adapter(tiny(), tmp_path / "none")
    with pytest.raises(FileNotFoundError, match="adapter_config.json"):
        lora.load_adapter(tiny(), tmp_path)
    folder = lora.save_adapter(lora.add_lora(tiny(), ["q_proj"], r=2, alpha=4), tmp_path / "ad")
    config = json.loads((folder / "adapter_config.json").read_text())
    config["use_dora"] = True
    (folder / "adapter_config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="use_dora"):
        lora.load_adapter(tiny(), folder)
    with pytest.raises(TypeError, match="llmlab Transformer"):
        lora.save_adapter(lora.add_lora(torch.nn.Sequential(torch.nn.Linear(4, 4)), ["0"], r=2, alpha=4), tmp_path / "x")


# ----------------------------------------------------------------------------------------------
# QLoRA: LoRA on a frozen quantized base (llmlab.quant)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["q8_0", "q4_0"])
def test_qlora_on_a_quantized_base(fmt, tmp_path):
    quant = pytest.importorskip("llmlab.quant")
    float_model = tiny(d_model=64, n_heads=4, n_kv_heads=2)
    qmodel = quant.quantize_model(float_model, fmt)
    x = ids()
    before = qmodel(x)
    lora.add_lora(qmodel, "attention", r=4, alpha=8)
    assert len(lora.lora_layers(qmodel)) == 8
    assert torch.equal(qmodel(x), before)  # B = 0: exactly the quantized model
    assert all(layer.lora_A.weight.dtype == torch.float32 for layer in lora.lora_layers(qmodel).values())
    packed = {k: v.clone() for k, v in qmodel.state_dict().items() if ".lora_" not in k}
    data = torch.arange(400) % 7 + 3
    history = train(qmodel, data, data, steps=20, batch_size=4, seq_len=16, lr=1e-2, warmup=2, eval_every=20,
                    weight_decay=0.0, progress=False)
    assert history["train_loss"][-1] < history["train_loss"][0]
    for k, v in qmodel.state_dict().items():
        if k in packed:
            assert torch.equal(v, packed[k]), k  # the packed codes never move
    with pytest.raises(TypeError, match="quantized"):
        lora.merge(qmodel)
    # memory: the frozen base costs its packed bytes, well under float32 LoRA's
    float_lora = lora.add_lora(tiny(d_model=64, n_heads=4, n_kv_heads=2), "attention", r=4, alpha=8)
    assert lora.training_memory(qmodel)["weights"] < 0.75 * lora.training_memory(float_lora)["weights"]
    assert lora.trainable_summary(qmodel)["trainable"] == lora.trainable_summary(float_lora)["trainable"]
    # the adapter is an ordinary PEFT folder; its base is the quantized model
    folder = lora.save_adapter(qmodel, tmp_path / "qlora")
    again = lora.load_adapter(quant.quantize_model(float_model, fmt), folder)
    torch.testing.assert_close(again(x), qmodel.eval()(x), rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="another base"):
        lora.load_adapter(copy.deepcopy(float_model), folder)
