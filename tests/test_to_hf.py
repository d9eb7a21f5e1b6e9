"""llmlab.model.to_hf: export llmlab models to HF GPT2LMHeadModel / LlamaForCausalLM with the same logits.

Random llmlab models at O(1) weight scale (every matrix matters), several configurations of each
family; logits compared to 1e-5 in float32; the saved folder reloads offline with
``AutoModelForCausalLM.from_pretrained``; ``from_hf(to_hf(m))`` gives back the same weights; the shipped
es-base exports too, and its HF version generates the same greedy tokens.
"""


import pytest
import torch

transformers = pytest.importorskip("transformers")

from llmlab import lora, pretrained  # noqa: E402
from tiny_weights import spread_  # noqa: E402
from llmlab.model import ModelConfig, Transformer, from_hf, generate, to_hf  # noqa: E402

VOCAB = 83
ATOL = 1e-5


CONFIGS = {
    "llama-gqa": ModelConfig.llama_style(vocab_size=VOCAB, d_model=48, n_layers=2, n_heads=4, n_kv_heads=2, max_seq_len=64),
    "llama-mqa-headdim-bias-tied": ModelConfig.llama_style(
        vocab_size=VOCAB, d_model=48, n_layers=2, n_heads=4, n_kv_heads=1, head_dim=16, max_seq_len=64, bias=True,
        tie_embeddings=True, rope_theta=500.0, norm_eps=1e-5),
    "gpt2": ModelConfig.gpt2_style(vocab_size=VOCAB, d_model=48, n_layers=2, n_heads=4, max_seq_len=64),
    "gpt2-exact-gelu-untied": ModelConfig.gpt2_style(vocab_size=VOCAB, d_model=48, n_layers=3, n_heads=6, d_ff=100,
                                                     max_seq_len=64, mlp="gelu_exact", tie_embeddings=False),
}


def ids(seed=0, batch=2, seq=13):
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_same_logits_and_round_trip(name, tmp_path):
    model = spread_(Transformer(CONFIGS[name]))
    hf = to_hf(model)
    assert type(hf).__name__ == ("GPT2LMHeadModel" if name.startswith("gpt2") else "LlamaForCausalLM")
    x = ids()
    expected = model(x)
    torch.testing.assert_close(hf(x).logits, expected, rtol=0, atol=ATOL)
    # the weights were copied, not shared
    with torch.no_grad():
        next(hf.parameters()).add_(1.0)
    assert torch.equal(model(x), expected)
    # save_pretrained folder, reloaded offline
    hf = to_hf(model)
    hf.save_pretrained(tmp_path / "hf")
    reloaded = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "hf").eval()
    torch.testing.assert_close(reloaded(x).logits, expected, rtol=0, atol=ATOL)
    # and back to llmlab: the same weights, the same config
    back = from_hf(reloaded)
    assert back.config == model.config.__class__(**{**model.config.to_dict(), "dropout": 0.0})
    for k, v in model.state_dict().items():
        assert torch.equal(back.state_dict()[k], v), k


def test_shipped_base_model_exports_and_generates_the_same(tmp_path):
    model, tok = pretrained.load("es-base")
    hf = to_hf(model, tokenizer=tok)
    assert hf.config.bos_token_id == tok.bos_id and hf.config.eos_token_id == tok.eos_id
    prompt = torch.tensor([[tok.bos_id] + tok.encode("Había una vez")])
    torch.testing.assert_close(hf(prompt).logits, model(prompt), rtol=0, atol=ATOL)
    ours = generate(model, prompt, 12)
    theirs = hf.generate(prompt, max_new_tokens=12, do_sample=False, eos_token_id=None, pad_token_id=tok.pad_id)
    assert theirs.tolist() == ours.tolist()


def test_dtype_is_kept():
    model = spread_(Transformer(CONFIGS["llama-gqa"])).to(torch.bfloat16)
    hf = to_hf(model)
    assert next(hf.parameters()).dtype == torch.bfloat16
    torch.testing.assert_close(hf(ids()).logits.float(), model(ids()).float(), rtol=0, atol=0.1)


def test_unsupported_models_are_refused():
    with pytest.raises(ValueError, match="counterpart"):
        to_hf(Transformer(ModelConfig.gpt2_style(vocab_size=VOCAB, d_model=16, n_layers=1, n_heads=2,
                                                 pos_encoding="sinusoidal")))
    with pytest.raises(ValueError, match="plain multi-head"):
        to_hf(Transformer(ModelConfig.gpt2_style(vocab_size=VOCAB, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1)))
    with pytest.raises(ValueError, match="biases"):
        to_hf(Transformer(ModelConfig.gpt2_style(vocab_size=VOCAB, d_model=16, n_layers=1, n_heads=2, bias=False)))
    with pytest.raises(ValueError, match="LoRA"):
        to_hf(lora.add_lora(Transformer(CONFIGS["llama-gqa"]), ["q_proj"], r=2, alpha=4))
    small = dict(vocab_size=VOCAB, d_model=16, n_layers=1, n_heads=2)
    with pytest.raises(ValueError, match="q/k norms"):
        to_hf(Transformer(ModelConfig.llama_style(**small, qk_norm=True)))
    with pytest.raises(ValueError, match="mixture-of-experts"):
        to_hf(Transformer(ModelConfig.llama_style(**small, n_experts=4, n_experts_per_token=2)))
    with pytest.raises(TypeError):
        to_hf(torch.nn.Linear(2, 2))
