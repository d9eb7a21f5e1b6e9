"""The library refuses what it cannot represent, by name, instead of building something else.

- `to_gguf`: Qwen3's q/k norms, mixtures of experts and LoRA layers have no place in a llama GGUF file.
- `lora.load_adapter`: real PEFT folders written with options llmlab does not compute (aLoRA, PiSSA, OLoRA,
  BD-LoRA, target_parameters, trainable tokens) are refused with the option named; PiSSA/OLoRA point to PEFT's
  conversion to a plain LoRA, which loads.
- `lora.add_lora`: `use_dora=True` and the experts of a mixture of experts are refused before the model changes.
"""

from __future__ import annotations

import copy
import json

import pytest
import torch

from llmlab import lora
from llmlab.model import ModelConfig, Transformer

transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
pytest.importorskip("gguf")

from llmlab.export import to_gguf  # noqa: E402
from llmlab.model import from_hf  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer():
    from llmlab import pretrained

    return pretrained.load_tokenizer()


def _llama(**overrides) -> Transformer:
    settings = dict(vocab_size=64, n_layers=2, d_model=32, n_heads=4, n_kv_heads=2, d_ff=48, max_seq_len=32)
    settings.update(overrides)
    return Transformer(ModelConfig.llama_style(**settings))


@pytest.mark.parametrize("overrides, named", [
    (dict(qk_norm=True), "qk_norm=True"),
    (dict(n_experts=4, n_experts_per_token=2), "n_experts=4"),
])
def test_to_gguf_refuses_what_a_llama_file_cannot_hold(tmp_path, tokenizer, overrides, named):
    model = _llama(vocab_size=len(tokenizer), **overrides)
    with pytest.raises(ValueError, match=named):
        to_gguf(model, tokenizer, tmp_path / "m.gguf")
    assert not (tmp_path / "m.gguf").exists()


def test_to_gguf_refuses_lora_layers_and_still_exports_the_plain_model(tmp_path, tokenizer):
    model = _llama(vocab_size=len(tokenizer))
    to_gguf(model, tokenizer, tmp_path / "plain.gguf", "f32")  # the refusal is not a blanket one
    lora.add_lora(model, "attention", r=2, alpha=4)
    with pytest.raises(ValueError, match="LoRA layers"):
        to_gguf(model, tokenizer, tmp_path / "lora.gguf")


# ---------------------------------------------------------------------------------------------- PEFT folders

def _hf():
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
                                      tie_word_embeddings=False, bos_token_id=None, eos_token_id=None,
                                      pad_token_id=None)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).eval()


def _peft_folder(tmp_path, name, **options):
    hf = _hf()
    pm = peft.get_peft_model(copy.deepcopy(hf), peft.LoraConfig(r=2, lora_alpha=4, **options))
    folder = tmp_path / name
    pm.save_pretrained(str(folder))
    return hf, pm, folder


@pytest.mark.parametrize("name, options, named", [
    ("alora", dict(target_modules=["q_proj", "v_proj"], alora_invocation_tokens=[5, 6]), "alora_invocation_tokens"),
    ("pissa", dict(target_modules=["q_proj", "v_proj"], init_lora_weights="pissa"), "init_lora_weights='pissa'"),
    ("olora", dict(target_modules=["q_proj", "v_proj"], init_lora_weights="olora"), "init_lora_weights='olora'"),
    ("params", dict(target_modules=[], target_parameters=["mlp.up_proj.weight"]), "target_parameters"),
    ("bdlora", dict(target_modules=["q_proj", "o_proj"], use_bdlora={"target_modules_bd_a": ["o_proj"],
                                                                        "target_modules_bd_b": ["q_proj"],
                                                                        "nblocks": 2}), "use_bdlora"),
    ("tokens", dict(target_modules=["q_proj"], trainable_token_indices=[1, 2]), "trainable_token_indices"),
])
def test_load_adapter_refuses_peft_folders_it_does_not_compute(tmp_path, name, options, named):
    try:
        hf, _, folder = _peft_folder(tmp_path, name, **options)
    except (ValueError, TypeError, NotImplementedError) as exc:  # this PEFT cannot build it: write the config
        hf = _hf()
        _, _, folder = _peft_folder(tmp_path, name, target_modules=["q_proj"])
        config = json.loads((folder / "adapter_config.json").read_text())
        config.update({k: v for k, v in options.items() if k != "target_modules"})
        (folder / "adapter_config.json").write_text(json.dumps(config))
        print(f"PEFT could not build {name} here ({exc}); config written by hand")
    model = from_hf(hf)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(ValueError, match=named) as err:
        lora.load_adapter(model, folder)
    if name in ("pissa", "olora"):
        assert "path_initial_model_for_weight_conversion" in str(err.value)
    assert lora.lora_layers(model) == {}
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())


def test_pissa_converted_by_peft_to_plain_lora_loads_exactly(tmp_path):
    hf = _hf()
    config = peft.LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"], init_lora_weights="pissa")
    pm = peft.get_peft_model(copy.deepcopy(hf), config)
    pm.save_pretrained(str(tmp_path / "init"))  # the adapter as initialised, which the conversion needs
    with torch.no_grad():  # "training": move B and A
        for n, p in pm.named_parameters():
            if "lora_" in n:
                p.add_(0.05 * torch.randn_like(p))
    pm.save_pretrained(str(tmp_path / "plain"), path_initial_model_for_weight_conversion=str(tmp_path / "init"))
    ids = torch.randint(0, 64, (1, 12), generator=torch.Generator().manual_seed(1))
    expected = pm(ids).logits
    ours = lora.load_adapter(from_hf(hf), tmp_path / "plain")  # on the original base, as PEFT's conversion says
    torch.testing.assert_close(ours(ids), expected, rtol=0, atol=1e-5)


# ---------------------------------------------------------------------------------------------- add_lora

def test_add_lora_refuses_dora_by_name():
    model = _llama()
    with pytest.raises(ValueError, match="use_dora"):
        lora.add_lora(model, "attention", use_dora=True)
    assert lora.lora_layers(model) == {} and all(p.requires_grad for p in model.parameters())


@pytest.mark.parametrize("targets", ["mlp", "all-linear", ["gate"], ["router"]])
def test_add_lora_refuses_moe_experts_before_training(targets):
    model = _llama(n_experts=4, n_experts_per_token=2)
    with pytest.raises(ValueError, match="mixture of experts"):
        lora.add_lora(model, targets)
    assert lora.lora_layers(model) == {} and all(p.requires_grad for p in model.parameters())
    lora.add_lora(model, "attention")  # what it can do on a MoE model still works
    assert lora.lora_layers(model)
