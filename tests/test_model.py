"""Unit tests for llmlab.model: shapes, causality, the two attention paths, KV cache, GQA, positions,
config validation and round trips, generation."""

import json
import math
import sys
import types

import pytest
import torch

from llmlab.model import (
    KVCache,
    ModelConfig,
    Transformer,
    apply_rope,
    causal_mask,
    count_parameters,
    generate,
    sinusoidal_positions,
)

VOCAB = 61


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # Tiny tensors: extra threads only add synchronisation, and spin when the cores are shared.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def small(style: str, **overrides) -> ModelConfig:
    sizes = dict(vocab_size=VOCAB, n_layers=2, d_model=32, n_heads=4, max_seq_len=64)
    sizes.update(overrides)
    return ModelConfig.gpt2_style(**sizes) if style == "gpt2" else ModelConfig.llama_style(**sizes)


# One entry per family / option that changes the computation.
CONFIGS = {
    "gpt2": lambda: small("gpt2"),
    "llama_mha": lambda: small("llama"),
    "llama_gqa": lambda: small("llama", n_kv_heads=2),
    "llama_mqa": lambda: small("llama", n_kv_heads=1),
    "llama_head_dim_12": lambda: small("llama", n_kv_heads=2, head_dim=12, rope_theta=500.0),
    "sinusoidal": lambda: small("gpt2", pos_encoding="sinusoidal", norm="rmsnorm", mlp="gelu_exact", bias=False,
                                tie_embeddings=False),
}


def spread_weights_(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Re-draw every parameter at O(1) activation scale.

    The default N(0, 0.02) init gives almost uniform attention, where mask or position bugs
    barely move the logits; these weights make attention peaked so such bugs show.
    """
    g = torch.Generator().manual_seed(seed)
    d = model.config.d_model
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(d))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:  # norm gains
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
    return model


def make(name: str, seed: int = 0) -> Transformer:
    return spread_weights_(Transformer(CONFIGS[name]()), seed).eval()


def ids(batch: int, seq: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------- shapes and causality


@pytest.mark.parametrize("name", CONFIGS)
def test_logits_shape_and_dtype(name):
    model = make(name)
    logits = model(ids(3, 7))
    assert logits.shape == (3, 7, VOCAB)
    assert logits.dtype == torch.float32
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("return_attention", [False, True])
@pytest.mark.parametrize("name", CONFIGS)
def test_causality_future_token_does_not_change_the_past(name, return_attention):
    model = make(name)
    x = ids(2, 12)
    j = 7
    y = x.clone()
    y[:, j] = (y[:, j] + 1) % VOCAB
    out_x = model(x, return_attention=return_attention)
    out_y = model(y, return_attention=return_attention)
    if return_attention:
        out_x, out_y = out_x[0], out_y[0]
    torch.testing.assert_close(out_x[:, :j], out_y[:, :j], atol=1e-6, rtol=0)
    assert (out_x[:, j:] - out_y[:, j:]).abs().amax() > 1e-3  # and the token does matter from j on


def test_causal_mask_with_cached_prefix():
    # 2 new queries after 3 cached keys: query 0 sits at position 3 and sees keys 0..3.
    expected = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(2, 5), expected)
    assert torch.equal(causal_mask(3, 3), torch.ones(3, 3, dtype=torch.bool).tril())


# ---------------------------------------------------------------- readable vs fast attention

# Logits go up to about 4 with these weights; after two layers the two attention paths differ by
# float32 rounding (a few ulps at 4 = 2.4e-7 each), so model-level comparisons use 5e-6.
LOGITS_ATOL = 5e-6


def _attention_layer_and_rope(model, positions):
    rope = model.rope(positions) if model.rope is not None else None
    return model.blocks[0].attn, rope


@pytest.mark.parametrize("name", CONFIGS)
def test_attention_readable_equals_sdpa_1e6(name):
    model = make(name)
    h = torch.randn(2, 10, model.config.d_model)
    attn, rope = _attention_layer_and_rope(model, torch.arange(10))
    fast, none = attn(h, rope=rope)
    readable, weights = attn(h, rope=rope, need_weights=True)
    assert none is None
    torch.testing.assert_close(readable, fast, atol=1e-6, rtol=0)
    assert weights.shape == (2, model.config.n_heads, 10, 10)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, model.config.n_heads, 10), atol=1e-6, rtol=0)
    assert (weights.triu(diagonal=1) == 0).all()  # nothing from the future


@pytest.mark.parametrize("name", CONFIGS)
def test_attention_readable_equals_sdpa_1e6_with_cache(name):
    model = make(name)
    h = torch.randn(2, 10, model.config.d_model)
    attn, rope = _attention_layer_and_rope(model, torch.arange(10))
    reference, _ = attn(h, rope=rope)  # no cache, fast path
    fast_cache, readable_cache = KVCache(model.config.n_layers), KVCache(model.config.n_layers)
    # prefill 4, a chunk of 3 (explicit-mask path), then single tokens (no-mask path)
    for start, stop in [(0, 4), (4, 7), (7, 8), (8, 9), (9, 10)]:
        piece = h[:, start:stop]
        piece_rope = None if rope is None else (rope[0][start:stop], rope[1][start:stop])
        fast, _ = attn(piece, rope=piece_rope, cache=fast_cache)
        readable, weights = attn(piece, rope=piece_rope, cache=readable_cache, need_weights=True)
        torch.testing.assert_close(fast, reference[:, start:stop], atol=1e-6, rtol=0)
        torch.testing.assert_close(readable, reference[:, start:stop], atol=1e-6, rtol=0)
        assert weights.shape == (2, model.config.n_heads, stop - start, stop)


@pytest.mark.parametrize("name", CONFIGS)
def test_model_readable_path_equals_sdpa_path(name):
    model = make(name)
    x = ids(2, 10)
    readable, attentions = model(x, return_attention=True)
    torch.testing.assert_close(readable, model(x), atol=LOGITS_ATOL, rtol=0)
    assert len(attentions) == model.config.n_layers
    # and through the cache, token by token
    cache = model.new_cache()
    pieces = [model(x[:, :4], cache=cache, return_attention=True)[0]]
    pieces += [model(x[:, t : t + 1], cache=cache, return_attention=True)[0] for t in range(4, 10)]
    torch.testing.assert_close(torch.cat(pieces, dim=1), model(x), atol=LOGITS_ATOL, rtol=0)


# ---------------------------------------------------------------- KV cache


@pytest.mark.parametrize("name", CONFIGS)
def test_cache_logits_equal_full_forward(name):
    model = make(name)
    x = ids(2, 16)
    full = model(x)
    cache = model.new_cache()
    pieces = [model(x[:, :5], cache=cache), model(x[:, 5:8], cache=cache)]
    pieces += [model(x[:, t : t + 1], cache=cache) for t in range(8, 16)]
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=LOGITS_ATOL, rtol=0)
    assert cache.seq_len == 16


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", CONFIGS)
def test_generate_same_tokens_with_and_without_cache(name, seed):
    model = make(name, seed=seed)
    prompt = ids(2, 5, seed=seed + 10)
    with_cache = generate(model, prompt, 20, use_cache=True)
    without = generate(model, prompt, 20, use_cache=False)
    assert with_cache.shape == (2, 25)
    assert torch.equal(with_cache, without)
    assert torch.equal(with_cache[:, :5], prompt)


@pytest.mark.parametrize("n_kv_heads", [1, 2, 4])
def test_kv_cache_shapes_and_nbytes_match_the_formula(n_kv_heads):
    cfg = small("llama", n_kv_heads=n_kv_heads)
    model = Transformer(cfg).eval()
    cache = model.new_cache()
    batch, tokens = 3, 9
    model(ids(batch, tokens), cache=cache)
    for k, v in zip(cache.keys, cache.values):
        assert k.shape == v.shape == (batch, n_kv_heads, tokens, cfg.head_dim)
    bytes_per_value = 4  # float32
    expected = 2 * cfg.n_layers * n_kv_heads * cfg.head_dim * bytes_per_value * tokens * batch
    assert cache.nbytes == expected
    assert len(cache) == tokens
    cache.crop(4)
    assert cache.seq_len == 4 and cache.nbytes == expected * 4 // tokens
    cache.reset()
    assert cache.seq_len == 0 and cache.nbytes == 0


def test_cache_crop_then_continue_equals_full_forward():
    model = make("llama_gqa")
    x = ids(1, 12)
    cache = model.new_cache()
    model(x[:, :10], cache=cache)
    cache.crop(6)  # e.g. speculative decoding rejecting 4 draft tokens
    resumed = model(x[:, 6:12], cache=cache)
    torch.testing.assert_close(resumed, model(x)[:, 6:12], atol=LOGITS_ATOL, rtol=0)


def test_cache_with_wrong_number_of_layers_is_rejected():
    model = make("gpt2")
    with pytest.raises(ValueError, match="layers"):
        model(ids(1, 3), cache=KVCache(model.config.n_layers + 1))


# ---------------------------------------------------------------- GQA


@pytest.mark.parametrize("n_kv_heads", [1, 2, 4])
def test_gqa_equals_mha_with_repeated_kv_heads(n_kv_heads):
    """Query head h must use K/V head h // (n_heads // n_kv_heads) (Llama convention)."""
    gqa = spread_weights_(Transformer(small("llama", n_kv_heads=n_kv_heads))).eval()
    mha = Transformer(small("llama", n_kv_heads=4)).eval()
    group, hd = 4 // n_kv_heads, gqa.config.head_dim
    state = {}
    for key, value in gqa.state_dict().items():
        if key.endswith(("k_proj.weight", "v_proj.weight")):
            # rows of head j -> rows of heads j*group ... j*group + group - 1
            value = value.view(n_kv_heads, hd, -1).repeat_interleave(group, dim=0).reshape(4 * hd, -1)
        state[key] = value
    mha.load_state_dict(state)
    x = ids(2, 9)
    assert gqa.blocks[0].attn.k_proj.weight.shape == (n_kv_heads * hd, gqa.config.d_model)
    torch.testing.assert_close(gqa(x), mha(x), atol=LOGITS_ATOL, rtol=0)


def test_gqa_has_fewer_parameters_than_mha():
    mha, gqa, mqa = (Transformer(small("llama", n_kv_heads=k)) for k in (4, 2, 1))
    d, hd, layers = 32, 8, 2
    # each removed K/V head saves two [head_dim, d_model] matrices per layer
    assert count_parameters(mha) - count_parameters(gqa) == layers * 2 * 2 * hd * d
    assert count_parameters(mha) - count_parameters(mqa) == layers * 2 * 3 * hd * d


# ---------------------------------------------------------------- positions


@pytest.mark.parametrize("name", ["gpt2", "llama_mha", "sinusoidal"])
def test_positions_make_order_matter(name):
    # Without positions, the last token's logits would not change when earlier tokens are permuted.
    model = make(name)
    x = ids(1, 8)
    swapped = x.clone()
    swapped[:, [1, 4]] = x[:, [4, 1]]
    assert x[0, 1] != x[0, 4]
    assert (model(x)[:, -1] - model(swapped)[:, -1]).abs().amax() > 1e-3


def test_sinusoidal_table_values():
    table = sinusoidal_positions(50, 16)
    assert table.shape == (50, 16)
    torch.testing.assert_close(table[0], torch.tensor([0.0, 1.0] * 8), atol=0, rtol=0)
    pos, i = 3, 2  # dims 2i, 2i+1 turn at 3 / 10000^(4/16)
    angle = pos / 10000 ** (2 * i / 16)
    torch.testing.assert_close(table[pos, 2 * i], torch.tensor(math.sin(angle)), atol=1e-6, rtol=0)
    torch.testing.assert_close(table[pos, 2 * i + 1], torch.tensor(math.cos(angle)), atol=1e-6, rtol=0)
    assert table.abs().max() <= 1.0
    with pytest.raises(ValueError, match="even"):
        sinusoidal_positions(10, 7)


def test_sinusoidal_table_is_not_saved_but_learned_table_is():
    sin_model = Transformer(CONFIGS["sinusoidal"]())
    assert not any("pos_emb" in k for k in sin_model.state_dict())
    assert "pos_emb.table.weight" in Transformer(CONFIGS["gpt2"]()).state_dict()


def test_rope_scores_depend_only_on_relative_position():
    model = Transformer(small("llama", rope_theta=100.0))
    hd = model.config.head_dim
    q, k = torch.randn(1, 1, 1, hd), torch.randn(1, 1, 1, hd)

    def score(m, n):
        cos_m, sin_m = model.rope(torch.tensor([m]))
        cos_n, sin_n = model.rope(torch.tensor([n]))
        return (apply_rope(q, cos_m, sin_m) * apply_rope(k, cos_n, sin_n)).sum()

    torch.testing.assert_close(score(7, 3), score(17, 13), atol=1e-5, rtol=0)
    assert (score(7, 3) - score(7, 5)).abs() > 1e-3
    cos0, sin0 = model.rope(torch.tensor([0]))
    torch.testing.assert_close(apply_rope(q, cos0, sin0), q, atol=0, rtol=0)  # position 0: no rotation
    cos9, sin9 = model.rope(torch.tensor([9]))
    torch.testing.assert_close(apply_rope(q, cos9, sin9).norm(), q.norm(), atol=1e-5, rtol=0)  # a rotation


def test_rope_pairs_dimension_i_with_i_plus_half():
    # With only pair (0, hd/2) non-zero, the rotation must keep energy in that pair.
    cos, sin = Transformer(small("llama")).rope(torch.tensor([5]))
    x = torch.zeros(1, 1, 1, 8)
    x[..., 0] = 1.0
    y = apply_rope(x, cos, sin)
    angle = 5.0  # inv_freq[0] = 1
    expected = torch.zeros(8)
    expected[0], expected[4] = math.cos(angle), math.sin(angle)
    torch.testing.assert_close(y.flatten(), expected, atol=1e-6, rtol=0)


# ---------------------------------------------------------------- config


@pytest.mark.parametrize(
    "overrides, error, match",
    [
        (dict(n_heads=4, n_kv_heads=3), ValueError, "n_kv_heads must divide n_heads"),
        (dict(n_heads=4, n_kv_heads=8), ValueError, "n_kv_heads must divide n_heads"),
        (dict(n_kv_heads=0), ValueError, "n_kv_heads"),
        (dict(d_model=30, n_heads=4), ValueError, "d_model must be divisible by n_heads"),
        (dict(pos_encoding="alibi"), ValueError, "pos_encoding"),
        (dict(norm="batchnorm"), ValueError, "norm"),
        (dict(mlp="relu"), ValueError, "mlp"),
        (dict(n_layers=0), ValueError, "n_layers"),
        (dict(vocab_size="100"), TypeError, "vocab_size"),
        (dict(n_heads=4.0), TypeError, "n_heads"),
        (dict(bias="yes"), TypeError, "bias"),
        (dict(dropout=1.0), ValueError, "dropout"),
        (dict(norm_eps=0.0), ValueError, "norm_eps"),
        (dict(pos_encoding="rope", head_dim=7), ValueError, "head_dim must be even"),
        (dict(pos_encoding="sinusoidal", d_model=33, n_heads=3), ValueError, "even d_model"),
    ],
)
def test_config_validation(overrides, error, match):
    with pytest.raises(error, match=match):
        ModelConfig(**overrides)


def test_config_defaults_are_filled_in():
    gpt2 = ModelConfig.gpt2_style(d_model=64, n_heads=4)
    assert (gpt2.n_kv_heads, gpt2.head_dim, gpt2.d_ff) == (4, 16, 256)
    llama = ModelConfig.llama_style(d_model=64, n_heads=4, n_kv_heads=1)
    assert (llama.n_kv_heads, llama.head_dim, llama.d_ff) == (1, 16, 176)  # 8*64/3 = 170.7 -> 176
    assert (llama.pos_encoding, llama.norm, llama.mlp, llama.bias, llama.tie_embeddings) == (
        "rope", "rmsnorm", "swiglu", False, False)
    assert (gpt2.pos_encoding, gpt2.norm, gpt2.mlp, gpt2.bias, gpt2.tie_embeddings) == (
        "learned", "layernorm", "gelu", True, True)


@pytest.mark.parametrize("name", CONFIGS)
def test_config_json_round_trip(name):
    cfg = CONFIGS[name]()
    again = ModelConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg


def test_config_from_dict_rejects_unknown_keys():
    data = ModelConfig().to_dict()
    data["n_layer"] = 3  # GPT-2's spelling, not ours
    with pytest.raises(ValueError, match="n_layer"):
        ModelConfig.from_dict(data)
    with pytest.raises(TypeError):
        ModelConfig.from_dict([("n_layers", 2)])


@pytest.mark.parametrize("name", ["gpt2", "llama_gqa", "sinusoidal"])
def test_state_dict_and_config_round_trip(name):
    model = make(name)
    clone = Transformer.from_config(json.loads(json.dumps(model.config.to_dict()))).eval()
    clone.load_state_dict(model.state_dict())
    x = ids(2, 6)
    assert torch.equal(clone(x), model(x))
    assert clone.config.tie_embeddings == (clone.lm_head.weight is clone.tok_emb.weight)


def test_safetensors_round_trip_with_tied_weights(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    model = make("gpt2")
    path = tmp_path / "model.safetensors"
    safetensors_torch.save_model(model, str(path))  # handles the tied embedding / LM head
    clone = Transformer(model.config).eval()
    safetensors_torch.load_model(clone, str(path))
    x = ids(1, 5)
    assert torch.equal(clone(x), model(x))
    assert clone.lm_head.weight is clone.tok_emb.weight


# ---------------------------------------------------------------- parameter counts


def test_count_parameters_of_real_sizes():
    # Built on the meta device: shapes only, no memory. Published counts.
    with torch.device("meta"):
        gpt2 = Transformer(ModelConfig.gpt2_style(vocab_size=50257, n_layers=12, d_model=768, n_heads=12,
                                                  max_seq_len=1024))
        llama2 = Transformer(ModelConfig.llama_style(vocab_size=32000, n_layers=32, d_model=4096, n_heads=32,
                                                     d_ff=11008, max_seq_len=4096))
        llama3 = Transformer(ModelConfig.llama_style(vocab_size=128256, n_layers=32, d_model=4096, n_heads=32,
                                                     n_kv_heads=8, d_ff=14336, max_seq_len=8192,
                                                     rope_theta=500000.0))
    assert count_parameters(gpt2) == 124_439_808  # the tied LM head counts once
    assert count_parameters(llama2) == 6_738_415_616
    assert count_parameters(llama3) == 8_030_261_248


def test_count_parameters_trainable_only():
    model = Transformer(small("gpt2"))
    total = count_parameters(model)
    model.tok_emb.weight.requires_grad_(False)
    assert count_parameters(model, trainable_only=True) == total - VOCAB * 32
    with pytest.raises(TypeError):
        count_parameters("model")


def test_init_scales_down_the_residual_projections():
    # GPT-2 init: N(0, 0.02), and 0.02 / sqrt(2 * n_layers) for the layers that write into the residual stream.
    model = Transformer(ModelConfig.llama_style(n_layers=8, d_model=128, n_heads=4))
    block = model.blocks[3]
    for layer in (block.attn.q_proj, block.attn.k_proj, block.mlp.gate, block.mlp.up):
        assert abs(layer.weight.std().item() - 0.02) < 0.002
    for layer in (block.attn.o_proj, block.mlp.down):
        assert abs(layer.weight.std().item() - 0.02 / 4) < 0.0005
    assert abs(model.tok_emb.weight.std().item() - 0.02) < 0.002
    assert torch.equal(block.attn_norm.weight, torch.ones(128))


# ---------------------------------------------------------------- forward input checks


def test_forward_rejects_bad_input():
    model = make("gpt2")
    with pytest.raises(IndexError, match="token ids"):
        model(torch.tensor([[1, VOCAB]]))
    with pytest.raises(IndexError, match="token ids"):
        model(torch.tensor([[-1, 2]]))
    with pytest.raises(TypeError, match="integer"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match=r"\[batch, seq\]"):
        model(torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="max_seq_len"):
        model(ids(1, 65))
    cache = model.new_cache()
    model(ids(1, 60), cache=cache)
    with pytest.raises(ValueError, match="60 cached"):
        model(ids(1, 5), cache=cache)


def test_model_trains():
    # A model that can learn: 40 Adam steps memorise one short sequence.
    torch.manual_seed(0)
    model = Transformer(small("llama", dropout=0.1)).train()
    x = ids(4, 16)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(40):
        logits = model(x[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] > math.log(VOCAB) - 0.5
    assert losses[-1] < 0.5 * losses[0]


# ---------------------------------------------------------------- generate


class ScriptedSampler:
    """Returns the given tokens in order and records the input_ids it was shown."""

    def __init__(self, script):
        self.script = list(script)
        self.seen = []

    def __call__(self, logits, input_ids):
        self.seen.append((tuple(logits.shape), input_ids.clone()))
        step = len(self.seen) - 1
        return torch.tensor([self.script[step]] * input_ids.shape[0])


def test_greedy_is_argmax_and_method_matches_function():
    model = make("llama_gqa")
    prompt = ids(1, 4)
    out = generate(model, prompt, 1)
    assert out[0, -1] == model(prompt)[0, -1].argmax()
    assert torch.equal(model.generate(prompt, 6), generate(model, prompt, 6))


def test_sampler_sees_logits_and_the_whole_sequence():
    model = make("gpt2")
    prompt = ids(2, 3)
    sampler = ScriptedSampler([5, 6, 7])
    out = generate(model, prompt, 3, sampler=sampler)
    assert out[:, 3:].tolist() == [[5, 6, 7], [5, 6, 7]]
    assert [s[0] for s in sampler.seen] == [(2, VOCAB)] * 3
    assert [s[1].shape[1] for s in sampler.seen] == [3, 4, 5]
    assert torch.equal(sampler.seen[2][1], out[:, :5])


def test_eos_stops_and_is_kept():
    model = make("gpt2")
    out = generate(model, ids(1, 3), 10, sampler=ScriptedSampler([5, 9, 2, 8]), eos_token_id=2)
    assert out[0, 3:].tolist() == [5, 9, 2]
    out = generate(model, ids(1, 3), 10, sampler=ScriptedSampler([5, 9, 2, 8]), eos_token_id=[8, 9])
    assert out[0, 3:].tolist() == [5, 9]


def test_stop_sequences_match_the_generated_tail():
    model = make("gpt2")
    prompt = torch.tensor([[4, 4]])
    sampler = ScriptedSampler([4, 1, 2, 3, 1, 2, 9])
    # [4, 4] must not fire on the prompt, [2, 3] fires after 4 new tokens
    out = generate(model, prompt, 10, sampler=sampler, stop_sequences=[[4, 4, 4, 4], [2, 3]])
    assert out[0, 2:].tolist() == [4, 1, 2, 3]
    with pytest.raises(ValueError, match="empty"):
        generate(model, prompt, 3, stop_sequences=[[]])


def test_finished_rows_are_padded_while_others_continue():
    model = make("gpt2")

    def sampler(logits, input_ids):
        step = input_ids.shape[1] - 2
        return torch.tensor([[7, 3, 5][step], [1, 1, 3][step]])

    out = generate(model, ids(2, 2), 5, sampler=sampler, eos_token_id=3, pad_token_id=0)
    assert out[:, 2:].tolist() == [[7, 3, 0], [1, 1, 3]]
    out = generate(model, ids(2, 2), 5, sampler=sampler, eos_token_id=3)  # default pad: the EOS id
    assert out[:, 2:].tolist() == [[7, 3, 3], [1, 1, 3]]


def test_on_token_streams_each_step():
    model = make("llama_mha")
    received = []
    out = generate(model, ids(2, 4), 5, on_token=lambda t: received.append(t.clone()))
    assert len(received) == 5
    assert torch.equal(torch.stack(received, dim=1), out[:, 4:])


def test_one_dimensional_prompt_and_zero_new_tokens():
    model = make("gpt2")
    prompt = ids(1, 4)[0]
    out = generate(model, prompt, 3)
    assert out.shape == (7,) and torch.equal(out[:4], prompt)
    assert torch.equal(generate(model, prompt, 0), prompt)


def test_generate_argument_errors():
    model = make("gpt2")
    prompt = ids(1, 4)
    with pytest.raises(ValueError, match="not both"):
        generate(model, prompt, 3, sampler=ScriptedSampler([1, 1, 1]), temperature=0.5)
    with pytest.raises(ValueError, match="max_seq_len"):
        generate(model, prompt, 61)
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(model, prompt, -1)
    with pytest.raises(ValueError, match=r"shape \[batch\]"):
        generate(model, prompt, 2, sampler=lambda logits, input_ids: logits.argmax(-1, keepdim=True))
    with pytest.raises(TypeError, match="integer"):
        generate(model, prompt.float(), 2)
    with pytest.raises(ValueError, match="pad_token_id"):
        generate(model, prompt, 2, pad_token_id=VOCAB)
    with pytest.raises(TypeError, match="Transformer"):
        generate(torch.nn.Linear(2, 2), prompt, 2)


def test_sampling_options_build_llmlab_sampling_sampler(monkeypatch):
    built = {}

    class FakeSampler:
        def __init__(self, **kwargs):
            built.update(kwargs)

        def __call__(self, logits, input_ids):
            return torch.full((logits.shape[0],), 11)

    fake = types.ModuleType("llmlab.sampling")
    fake.Sampler = FakeSampler
    monkeypatch.setitem(sys.modules, "llmlab.sampling", fake)
    out = generate(make("gpt2"), ids(1, 2), 3, temperature=0.7, top_k=5)
    assert built == {"temperature": 0.7, "top_k": 5}
    assert out[0, 2:].tolist() == [11, 11, 11]
