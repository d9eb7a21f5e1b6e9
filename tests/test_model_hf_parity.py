"""Parity of llmlab.model with HF transformers on randomly initialised GPT-2 and Llama models (no downloads).

Each HF model is built from a tiny config, its weights are re-drawn at O(1) scale (so attention
is peaked and a mask, position or head-mapping bug moves the logits), converted with ``from_hf``
and compared: logits to 1e-5 in float32 on every path (fast, readable, KV cache), and greedy
generation token for token against ``hf_model.generate(do_sample=False)``.
"""

import math

import pytest
import torch

transformers = pytest.importorskip("transformers")

from llmlab.model import Transformer, from_hf, generate  # noqa: E402

VOCAB = 97
ATOL = 1e-5


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # Tiny tensors: extra threads only add synchronisation, and spin when the cores are shared.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def spread_weights_(hf_model, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    d = hf_model.config.hidden_size
    with torch.no_grad():
        for name, p in hf_model.named_parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(d))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:  # norm gains
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
    return hf_model.eval()


def gpt2(**overrides):
    settings = dict(vocab_size=VOCAB, n_positions=64, n_embd=48, n_layer=2, n_head=4,
                    bos_token_id=None, eos_token_id=None, pad_token_id=None)
    settings.update(overrides)
    return spread_weights_(transformers.GPT2LMHeadModel(transformers.GPT2Config(**settings)))


def llama(**overrides):
    settings = dict(vocab_size=VOCAB, hidden_size=48, intermediate_size=80, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64,
                    rope_theta=500.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
                    bos_token_id=None, eos_token_id=None, pad_token_id=None)
    settings.update(overrides)
    return spread_weights_(transformers.LlamaForCausalLM(transformers.LlamaConfig(**settings)))


HF_MODELS = {
    "gpt2_tied": lambda: gpt2(),
    "gpt2_untied_exact_gelu_n_inner": lambda: gpt2(tie_word_embeddings=False, activation_function="gelu", n_inner=72),
    "llama_mha_untied": lambda: llama(),
    "llama_gqa_untied": lambda: llama(num_key_value_heads=2),
    "llama_mqa_tied": lambda: llama(num_key_value_heads=1, tie_word_embeddings=True),
    "llama_gqa_head_dim_16_theta_1e4": lambda: llama(num_key_value_heads=2, head_dim=16, rope_theta=10000.0),
    "llama_with_biases": lambda: llama(num_key_value_heads=2, attention_bias=True, mlp_bias=True),
}


def prompt(batch=2, seq=11, seed=3):
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


@pytest.fixture(params=list(HF_MODELS), scope="module")
def pair(request):
    hf = HF_MODELS[request.param]()
    return hf, from_hf(hf)


def test_config_is_translated(pair):
    hf, model = pair
    c, cfg = hf.config, model.config
    assert cfg.vocab_size == c.vocab_size and cfg.n_layers == c.num_hidden_layers
    assert cfg.d_model == c.hidden_size and cfg.n_heads == c.num_attention_heads
    assert cfg.n_kv_heads == getattr(c, "num_key_value_heads", c.num_attention_heads)
    assert cfg.tie_embeddings == c.tie_word_embeddings
    assert (model.lm_head.weight is model.tok_emb.weight) == c.tie_word_embeddings
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in hf.parameters())


def test_logits_match(pair):
    hf, model = pair
    x = prompt()
    with torch.no_grad():
        expected = hf(x).logits
        assert expected.abs().amax() > 1.0  # the weights were spread: logits are not all ~0
        torch.testing.assert_close(model(x), expected, atol=ATOL, rtol=0)
        readable, _ = model(x, return_attention=True)
        torch.testing.assert_close(readable, expected, atol=ATOL, rtol=0)


def test_logits_match_through_the_kv_cache(pair):
    hf, model = pair
    x = prompt(seq=14)
    with torch.no_grad():
        expected = hf(x).logits
        cache = model.new_cache()
        pieces = [model(x[:, :6], cache=cache), model(x[:, 6:9], cache=cache)]
        pieces += [model(x[:, t : t + 1], cache=cache) for t in range(9, 14)]
    torch.testing.assert_close(torch.cat(pieces, dim=1), expected, atol=ATOL, rtol=0)


def test_greedy_generation_matches_hf(pair):
    hf, model = pair
    x = prompt(seq=6)
    expected = hf.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=20, do_sample=False,
                           pad_token_id=0)
    assert expected.shape == (2, 26)
    assert torch.equal(generate(model, x, 20), expected)
    assert torch.equal(generate(model, x, 20, use_cache=False), expected)


def test_eos_stops_at_the_same_step_as_hf(pair):
    hf, model = pair
    x = prompt(batch=1, seq=5, seed=8)
    free = hf.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=20, do_sample=False, pad_token_id=0)
    eos = int(free[0, 5 + 3])  # the 4th generated token (or an earlier occurrence of it) becomes EOS
    expected = hf.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=20, do_sample=False,
                           eos_token_id=eos, pad_token_id=0)
    assert expected.shape[1] <= 5 + 4
    assert torch.equal(generate(model, x, 20, eos_token_id=eos), expected)


def test_converted_weights_are_a_copy():
    hf = gpt2()
    model = from_hf(hf)
    x = prompt()
    before = model(x)
    with torch.no_grad():
        hf.transformer.h[0].attn.c_attn.weight.add_(1.0)
    assert torch.equal(model(x), before)


def test_dtype_follows_the_hf_model():
    hf = llama(num_key_value_heads=2).to(torch.bfloat16)
    model = from_hf(hf)
    assert all(p.dtype == torch.bfloat16 for p in model.parameters())
    x = prompt()
    with torch.no_grad():
        # bfloat16 keeps 8 significant bits: at |logit| ~ 3 one step is 0.016 and the two
        # implementations round differently (about 0.05 seen), so allow about 6 steps.
        torch.testing.assert_close(model(x).float(), hf(x).logits.float(), atol=0.1, rtol=0)


def test_hf_model_built_from_our_conversion_round_trips_through_state_dict():
    model = from_hf(llama(num_key_value_heads=2))
    clone = Transformer(model.config.to_dict())
    clone.load_state_dict(model.state_dict())
    x = prompt()
    assert torch.equal(clone.eval()(x), model(x))


# ---------------------------------------------------------------- unsupported models and options


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: llama(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}), "rope_type"),
        (lambda: llama(attention_bias=True, mlp_bias=False), "attention_bias"),
        (lambda: llama(hidden_act="gelu"), "hidden_act"),
        (lambda: gpt2(scale_attn_by_inverse_layer_idx=True), "scale_attn_by_inverse_layer_idx"),
        (lambda: gpt2(activation_function="relu"), "activation_function"),
        (lambda: transformers.GPT2Model(transformers.GPT2Config(vocab_size=VOCAB, n_embd=48, n_layer=1, n_head=4,
                                                                bos_token_id=None, eos_token_id=None)),
         "no LM head"),
    ],
)
def test_unsupported_configs_raise(build, match):
    with pytest.raises(ValueError, match=match):
        from_hf(build())


def test_not_a_hf_model_raises():
    with pytest.raises(TypeError, match="PreTrainedModel"):
        from_hf(torch.nn.Linear(2, 2))


def test_other_architectures_raise():
    cfg = transformers.MistralConfig(vocab_size=VOCAB, hidden_size=48, intermediate_size=80, num_hidden_layers=1,
                                     num_attention_heads=4, num_key_value_heads=2, bos_token_id=None,
                                     eos_token_id=None)
    with pytest.raises(ValueError, match="model_type 'mistral'"):
        from_hf(transformers.MistralForCausalLM(cfg))


def test_sampled_generation_matches_hf_with_the_same_seed(pair):
    """model + llmlab.sampling together: HF draws one torch.multinomial per step from the global RNG."""
    pytest.importorskip("llmlab.sampling")
    hf, model = pair
    x = prompt(seq=6)
    options = dict(do_sample=True, temperature=0.8, top_k=20, top_p=0.9)
    torch.manual_seed(1234)
    expected = hf.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=20, pad_token_id=0, **options)
    torch.manual_seed(1234)
    assert torch.equal(generate(model, x, 20, **options), expected)
    assert not torch.equal(expected, generate(model, x, 20))  # it really sampled (not the greedy path)
