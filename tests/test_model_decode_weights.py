"""What ``generate`` does for speed must not change what it computes: ``DecodeWeights`` (stacked
q/k/v and gate/up matrices in ``gemv_layout``), last-position logits, and the cache it picks."""

import pytest
import torch
from test_model import VOCAB, small, spread_weights_  # the same tiny configs and O(1) weights

from llmlab.model import DecodeWeights, KVCache, StaticKVCache, SwiGLU, Transformer, gemv_layout, generate


def tiny(style: str, **overrides) -> Transformer:
    return spread_weights_(Transformer(small(style, **overrides))).eval()


STYLES = {
    "gpt2": lambda: tiny("gpt2"),
    "llama_gqa": lambda: tiny("llama", n_kv_heads=2),
    "qwen3_qk_norm": lambda: tiny("llama", n_kv_heads=2, qk_norm=True),
}


def test_gemv_layout_keeps_shape_and_values_and_makes_the_longer_side_contiguous():
    wide, tall = torch.randn(48, 16), torch.randn(16, 48)
    w = gemv_layout(wide)
    assert w.shape == wide.shape and torch.equal(w, wide)
    assert w.stride() == (1, 48)  # columns contiguous: the 48 outputs of one input side by side
    assert gemv_layout(tall) is tall  # rows already are the longer side


@pytest.mark.parametrize("bias", [False, True])
def test_stacked_gate_up_gives_the_outputs_of_separate_gate_and_up(bias):
    model = tiny("llama", bias=bias)
    mlp = model.blocks[0].mlp
    assert isinstance(mlp, SwiGLU)
    gate_up = DecodeWeights.for_model(model).mlp_in[0]
    x = torch.randn(3, 5, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        # The same products, summed in another order inside the kernel: equal up to float32 rounding.
        torch.testing.assert_close(mlp(x, gate_up), mlp(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_cached_steps_with_decode_weights_give_the_logits_of_a_full_forward(style):
    model = STYLES[style]()
    ids = torch.randint(0, VOCAB, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model(ids)
        cache = StaticKVCache.for_model(model, batch=2, max_len=12)
        cache.decode_weights = DecodeWeights.for_model(model)
        steps = [model(ids[:, :7], cache=cache)] + [model(ids[:, t : t + 1], cache=cache) for t in range(7, 12)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_generate_gives_the_tokens_of_recomputing_everything(style):
    model = STYLES[style]()
    ids = torch.randint(0, VOCAB, (2, 5), generator=torch.Generator().manual_seed(2))
    assert torch.equal(generate(model, ids, 20), generate(model, ids, 20, use_cache=False))


def test_last_only_returns_the_last_row_of_the_logits():
    model = tiny("llama", n_kv_heads=2)
    ids = torch.randint(0, VOCAB, (2, 9), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        last = model(ids, last_only=True)
        assert last.shape == (2, 1, VOCAB)
        torch.testing.assert_close(last, model(ids)[:, -1:], rtol=1e-5, atol=1e-5)


def test_decode_weights_leave_lora_quantized_and_moe_layers_as_they_are():
    from llmlab.lora import add_lora
    from llmlab.quant import quantize_model

    model = add_lora(tiny("llama", n_kv_heads=2), ("q_proj", "v_proj"), r=2)
    weights = DecodeWeights.for_model(model)
    assert weights.qkv == [None, None]  # q and v are LoRALinear: their adapters must run
    assert all(entry is not None for entry in weights.mlp_in) and weights.lm_head is not None

    quantized = quantize_model(tiny("llama", n_kv_heads=2), "q8_0")
    weights = DecodeWeights.for_model(quantized)
    assert weights.qkv == [None, None] and weights.mlp_in == [None, None] and weights.lm_head is None

    moe = tiny("llama", n_experts=4, n_experts_per_token=2, dense_layers=[0])
    weights = DecodeWeights.for_model(moe)
    assert weights.mlp_in[0] is not None and weights.mlp_in[1] is None  # layer 1 routes each token


def test_generate_uses_the_cache_a_model_brings():
    from llmlab.quant import QuantizedKVCache, use_quantized_kv_cache

    twin = use_quantized_kv_cache(tiny("llama", n_kv_heads=2))
    made = []
    make = twin.new_cache
    twin.new_cache = lambda: made.append(make()) or made[-1]
    out = generate(twin, torch.randint(0, VOCAB, (1, 6), generator=torch.Generator().manual_seed(4)), 10)
    assert out.shape == (1, 16)
    assert len(made) == 1 and isinstance(made[0], QuantizedKVCache) and made[0].seq_len == 15
    assert isinstance(tiny("gpt2").new_cache(), KVCache)  # a plain model still hands out the simple cache
