"""llmlab.lora against Hugging Face PEFT on tiny random models built from configs (no downloads).

1. The same A and B placed in PEFT's ``LoraConfig`` model give the same logits (LoRA, rsLoRA,
   dropout configured but off in eval mode, and dropout on with the same random masks).
2. An adapter folder written by ``save_adapter`` is a PEFT folder: ``PeftModel.from_pretrained``
   loads it on the HF model (the original, or the one ``to_hf`` exports) with the same logits; a
   folder written by PEFT's ``save_pretrained`` loads into llmlab with the same logits.
3. Same trainable-parameter counts, same merged weights, same initial distribution of A.

Tolerance: logits to 1e-5 (float32; logits are O(1) here and the adapters move them by O(1)).
"""

import copy
import json
import math

import pytest
import torch

transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

from llmlab import lora  # noqa: E402
from tiny_weights import spread_  # noqa: E402
from llmlab.convert_hf import hf_linear_name, to_hf  # noqa: E402
from llmlab.model import from_hf  # noqa: E402

VOCAB = 97
ATOL = 1e-5
HF_NAMES = {"q_proj": "q_proj", "k_proj": "k_proj", "v_proj": "v_proj", "o_proj": "o_proj",
            "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}


def hf_llama(**overrides):
    settings = dict(vocab_size=VOCAB, hidden_size=48, intermediate_size=80, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                    rope_theta=500.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
                    bos_token_id=None, eos_token_id=None, pad_token_id=None)
    settings.update(overrides)
    return spread_(transformers.LlamaForCausalLM(transformers.LlamaConfig(**settings)))


def hf_gpt2():
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=48, n_layer=2, n_head=4,
                                  bos_token_id=None, eos_token_id=None, pad_token_id=None)
    return spread_(transformers.GPT2LMHeadModel(cfg))


def ids(seed=0, batch=2, seq=11):
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


def random_lora_(model, seed=1):
    """Random A and B (B = 0 would make every comparison trivially pass)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in lora.lora_layers(model).values():
            layer.lora_A.weight.copy_(torch.randn(layer.lora_A.weight.shape, generator=g) / math.sqrt(layer.in_features))
            layer.lora_B.weight.copy_(torch.randn(layer.lora_B.weight.shape, generator=g) * 0.3)
    return model


def peft_with_same_weights(hf, ours, **config):
    """A PEFT model on a copy of ``hf`` with the A and B of llmlab's LoRA layers."""
    pm = peft.get_peft_model(copy.deepcopy(hf), peft.LoraConfig(**config))
    modules = dict(pm.named_modules())
    with torch.no_grad():
        for name, layer in lora.lora_layers(ours).items():
            target = modules["base_model.model." + hf_linear_name(ours.config, name)]
            target.lora_A["default"].weight.copy_(layer.lora_A.weight)
            target.lora_B["default"].weight.copy_(layer.lora_B.weight)
    return pm.eval()


@pytest.mark.parametrize(
    "targets, r, alpha, rslora",
    [(["q_proj", "v_proj"], 4, 8, False), ("all-linear", 8, 16, False), (["k_proj", "o_proj", "up"], 4, 12, True)],
)
def test_same_A_and_B_give_peft_logits(targets, r, alpha, rslora):
    hf = hf_llama()
    ours = random_lora_(lora.add_lora(from_hf(hf), targets, r=r, alpha=alpha, use_rslora=rslora, dropout=0.1)).eval()
    hf_targets = sorted({HF_NAMES[n.rsplit(".", 1)[1]] for n in lora.lora_layers(ours)})
    pm = peft_with_same_weights(hf, ours, r=r, lora_alpha=alpha, use_rslora=rslora, lora_dropout=0.1,
                                target_modules=hf_targets)
    x = ids()
    expected = pm(x).logits
    assert (expected - hf(x).logits).abs().max() > 0.1  # the adapter really changes the model
    torch.testing.assert_close(ours(x), expected, rtol=0, atol=ATOL)


def test_dropout_on_draws_the_same_masks_as_peft():
    hf = hf_llama(num_key_value_heads=4)
    ours = random_lora_(lora.add_lora(from_hf(hf), ["q_proj", "v_proj", "down"], r=4, alpha=8, dropout=0.3))
    pm = peft_with_same_weights(hf, ours, r=4, lora_alpha=8, lora_dropout=0.3,
                                target_modules=["q_proj", "v_proj", "down_proj"])
    ours.train()
    pm.train()
    x = ids()
    torch.manual_seed(7)
    a = ours(x)
    torch.manual_seed(7)
    b = pm(x).logits
    torch.manual_seed(8)
    c = ours(x)
    assert (a - c).abs().max() > 1e-3  # dropout is really on
    torch.testing.assert_close(a, b, rtol=0, atol=ATOL)


def test_trainable_counts_and_merged_weights_match_peft():
    hf = hf_llama()
    ours = random_lora_(lora.add_lora(from_hf(hf), "all-linear", r=8, alpha=16))
    pm = peft_with_same_weights(hf, ours, r=8, lora_alpha=16, target_modules="all-linear")
    trainable, total = pm.get_nb_trainable_parameters()
    summary = lora.trainable_summary(ours)
    assert summary["trainable"] == trainable and summary["total"] == total
    merged_hf = pm.merge_and_unload()
    merged_ours = lora.unload(ours)
    theirs = dict(merged_hf.named_parameters())
    for name in lora.lora_layers(random_lora_(lora.add_lora(from_hf(hf), "all-linear", r=8, alpha=16))):
        torch.testing.assert_close(merged_ours.get_submodule(name).weight,
                                   theirs[hf_linear_name(ours.config, name) + ".weight"], rtol=0, atol=1e-6)


def test_initialisation_matches_peft():
    hf = hf_llama()
    ours = lora.add_lora(from_hf(hf), ["q_proj"], r=8, alpha=16)
    pm = peft.get_peft_model(copy.deepcopy(hf), peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj"]))
    A_ours = torch.cat([m.lora_A.weight.flatten() for m in lora.lora_layers(ours).values()])
    A_peft = torch.cat([p.flatten() for n, p in pm.named_parameters() if "lora_A" in n])
    B_peft = torch.cat([p.flatten() for n, p in pm.named_parameters() if "lora_B" in n])
    bound = 1 / math.sqrt(48)
    assert torch.count_nonzero(B_peft) == 0 and all(
        torch.count_nonzero(m.lora_B.weight) == 0 for m in lora.lora_layers(ours).values())
    assert A_ours.abs().max() <= bound and A_peft.abs().max() <= bound
    # same distribution: U(-bound, bound) has std bound / sqrt(3)
    assert float(A_ours.detach().std()) == pytest.approx(float(A_peft.detach().std()), rel=0.15)
    x = ids()
    torch.testing.assert_close(ours(x), pm.eval()(x).logits, rtol=0, atol=ATOL)  # both exactly the base at step 0


@pytest.mark.parametrize("rslora", [False, True])
@pytest.mark.parametrize("export", ["original", "to_hf"])
def test_llmlab_adapter_loads_in_peft(tmp_path, rslora, export):
    hf = hf_llama()
    base = from_hf(hf)
    ours = random_lora_(lora.add_lora(copy.deepcopy(base), ["q_proj", "v_proj", "gate", "down"], r=4, alpha=8,
                                      use_rslora=rslora)).eval()
    folder = lora.save_adapter(ours, tmp_path / "ad", base_name="tiny-llama")
    target = hf if export == "original" else to_hf(base)
    pm = peft.PeftModel.from_pretrained(copy.deepcopy(target), str(folder)).eval()
    assert pm.peft_config["default"].use_rslora == rslora
    x = ids()
    torch.testing.assert_close(pm(x).logits, ours(x), rtol=0, atol=ATOL)


@pytest.mark.parametrize("rslora", [False, True])
def test_peft_adapter_loads_in_llmlab(tmp_path, rslora):
    hf = hf_llama()
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "up_proj"], use_rslora=rslora,
                             init_lora_weights=False)  # PEFT draws B at random too: a non-trivial adapter
    pm = peft.get_peft_model(copy.deepcopy(hf), config).eval()
    pm.save_pretrained(str(tmp_path / "peft"))
    ours = lora.load_adapter(from_hf(hf), tmp_path / "peft")
    assert len(lora.lora_layers(ours)) == 2 * 3
    x = ids()
    expected = pm(x).logits
    assert (expected - hf(x).logits).abs().max() > 0.1
    torch.testing.assert_close(ours(x), expected, rtol=0, atol=ATOL)
    # and back: llmlab writes it again, PEFT reads it, same model
    lora.save_adapter(ours, tmp_path / "again")
    again = peft.PeftModel.from_pretrained(copy.deepcopy(hf), str(tmp_path / "again")).eval()
    torch.testing.assert_close(again(x).logits, expected, rtol=0, atol=ATOL)


def test_rank_and_alpha_patterns_both_ways(tmp_path):
    hf = hf_llama()
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"], init_lora_weights=False,
                             rank_pattern={"v_proj": 2, "model.layers.1.mlp.down_proj": 6}, alpha_pattern={"down_proj": 3})
    pm = peft.get_peft_model(copy.deepcopy(hf), config).eval()
    pm.save_pretrained(str(tmp_path / "peft"))
    ours = lora.load_adapter(from_hf(hf), tmp_path / "peft")
    layers = lora.lora_layers(ours)
    assert layers["blocks.0.attn.v_proj"].r == 2 and layers["blocks.1.mlp.down"].r == 6 and layers["blocks.0.mlp.down"].r == 4
    assert layers["blocks.0.mlp.down"].alpha == 3 and layers["blocks.0.attn.q_proj"].alpha == 8
    x = ids()
    expected = pm(x).logits
    torch.testing.assert_close(ours(x), expected, rtol=0, atol=ATOL)
    lora.save_adapter(ours, tmp_path / "again")  # mixed ranks go back into rank_pattern / alpha_pattern
    again = peft.PeftModel.from_pretrained(copy.deepcopy(hf), str(tmp_path / "again")).eval()
    torch.testing.assert_close(again(x).logits, expected, rtol=0, atol=ATOL)


def test_peft_options_we_do_not_implement_are_refused(tmp_path):
    hf = hf_llama()
    pm = peft.get_peft_model(copy.deepcopy(hf), peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj"], use_dora=True))
    pm.save_pretrained(str(tmp_path / "dora"))
    with pytest.raises(ValueError, match="use_dora"):
        lora.load_adapter(from_hf(hf), tmp_path / "dora")


def test_gpt2_adapter_loads_in_peft_with_fan_in_fan_out(tmp_path):
    hf = hf_gpt2()
    ours = random_lora_(lora.add_lora(from_hf(hf), ["o_proj", "up", "down"], r=4, alpha=8)).eval()
    folder = lora.save_adapter(ours, tmp_path / "gpt2")
    config = json.loads((folder / "adapter_config.json").read_text())
    assert config["fan_in_fan_out"] and config["target_modules"] == ["attn.c_proj", "mlp.c_fc", "mlp.c_proj"]
    pm = peft.PeftModel.from_pretrained(copy.deepcopy(hf), str(folder)).eval()
    x = ids()
    torch.testing.assert_close(pm(x).logits, ours(x), rtol=0, atol=ATOL)
    back = lora.load_adapter(from_hf(hf), folder)
    torch.testing.assert_close(back(x), ours(x), rtol=0, atol=0)


@pytest.mark.parametrize("rslora", [False, True])
def test_gpt2_q_k_v_become_one_lora_on_c_attn(tmp_path, rslora):
    hf = hf_gpt2()
    ours = random_lora_(lora.add_lora(from_hf(hf), ["q_proj", "v_proj", "o_proj"], r=4, alpha=8, use_rslora=rslora)).eval()
    folder = lora.save_adapter(ours, tmp_path / "qv")
    config = json.loads((folder / "adapter_config.json").read_text())
    assert "attn.c_attn" in config["target_modules"] and set(config["rank_pattern"].values()) == {8}
    pm = peft.PeftModel.from_pretrained(copy.deepcopy(hf), str(folder)).eval()
    x = ids()
    torch.testing.assert_close(pm(x).logits, ours(x), rtol=0, atol=ATOL)
    back = lora.load_adapter(from_hf(hf), folder)  # split back into the original layers and ranks
    assert sorted(lora.lora_layers(back)) == sorted(lora.lora_layers(ours))
    assert all(layer.r == 4 for layer in lora.lora_layers(back).values())
    torch.testing.assert_close(back(x), ours(x), rtol=0, atol=ATOL)


def test_peft_c_attn_adapter_loads_in_llmlab(tmp_path):
    hf = hf_gpt2()
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn"], fan_in_fan_out=True, init_lora_weights=False)
    pm = peft.get_peft_model(copy.deepcopy(hf), config).eval()
    pm.save_pretrained(str(tmp_path / "peft"))
    ours = lora.load_adapter(from_hf(hf), tmp_path / "peft")
    assert len(lora.lora_layers(ours)) == 2 * 3  # q, k and v of both blocks, sharing the fused A
    x = ids()
    expected = pm(x).logits
    assert (expected - hf(x).logits).abs().max() > 0.1
    torch.testing.assert_close(ours(x), expected, rtol=0, atol=ATOL)
