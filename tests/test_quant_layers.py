"""llmlab.quant.layers / storage / kv: packed weights in memory, quantize_model, the int8 KV cache.

Random tiny Llama- and GPT-2-style configs (no shipped weights), so nothing here depends on the
tiny models' current training.
"""

import numpy as np
import pytest
import torch
from torch import nn

from llmlab.model import KVCache, ModelConfig, Transformer, generate
from llmlab.quant import (
    QuantizedEmbedding,
    QuantizedKVCache,
    QuantizedLinear,
    dequantize_q4_0,
    dequantize_q8_0,
    kv_quantization_error,
    module_nbytes,
    parse_format,
    quantize_model,
    quantize_q4_0,
    quantized_layers,
    use_quantized_kv_cache,
)
from llmlab.quant.storage import pack_rows, unpack_rows

FORMATS = ["f16", "bf16", "int8", "int8_channel", "q8_0", "q4_0", "int4_g32", "int4_g128", "int3_g32", "int2_g32"]


def tiny_llama(**overrides):
    torch.manual_seed(0)
    config = ModelConfig.llama_style(vocab_size=96, n_layers=2, d_model=64, n_heads=4, n_kv_heads=2, d_ff=176, max_seq_len=80, **overrides)
    return Transformer(config).eval()


@pytest.mark.parametrize("fmt", FORMATS)
def test_packed_bytes_match_the_format(fmt):
    w = torch.randn(48, 256)
    layer = QuantizedLinear(w, None, fmt)
    expected_bits = parse_format(fmt).nominal_bits(256)
    per_tensor_scale = 32 if fmt == "int8" else 0
    assert layer.weight_bytes * 8 == pytest.approx(48 * 256 * expected_bits + per_tensor_scale)
    assert layer.weight.shape == (48, 256) and layer.dequantize().dtype == torch.float32
    # Every stored tensor is a buffer: nothing for an optimiser to update.
    assert list(layer.parameters()) == []


def test_q8_0_and_q4_0_in_memory_are_the_gguf_bytes():
    w = torch.randn(16, 64)
    for fmt, dequant in (("q8_0", dequantize_q8_0), ("q4_0", dequantize_q4_0)):
        layer = QuantizedLinear(w, None, fmt)
        codes = layer.packed.codes.numpy()
        np.testing.assert_array_equal(layer.dequantize().numpy(), dequant(codes))  # torch and NumPy decoders agree
    np.testing.assert_array_equal(QuantizedLinear(w, None, "q4_0").packed.codes.numpy(), quantize_q4_0(w.numpy()))


@pytest.mark.parametrize("fmt", ["int8_channel", "int4_g32", "int3_g32", "int2_g32", "int5"])
def test_int_formats_round_to_the_nearest_step(fmt):
    w = torch.randn(8, 64)
    spec = parse_format(fmt)
    packed = pack_rows(w, spec)
    w_hat = unpack_rows(packed, spec)
    qmax = 2 ** (spec.bits - 1) - 1
    scales = packed["scales"].float()
    if spec.granularity == "group":
        scales = scales.repeat_interleave(spec.group_size, dim=1)
    assert (torch.abs(w - w_hat) <= scales / 2 * (1 + 1e-6) + 1e-7).all()
    codes = torch.round(w_hat / torch.where(scales == 0, torch.ones_like(scales), scales))
    assert codes.abs().max() == qmax  # the grid is used to its ends


def test_padding_of_rows_that_do_not_fill_a_block():
    w = torch.randn(5, 40)  # 40 is not a multiple of 32
    layer = QuantizedLinear(w, torch.randn(5), "q4_0")
    assert layer.dequantize().shape == (5, 40)
    assert layer.weight_bytes == 5 * 2 * 18  # two blocks per row, the second half zeros
    x = torch.randn(3, 40)
    ref = x @ layer.dequantize().T + layer.bias
    torch.testing.assert_close(layer(x), ref, rtol=1e-5, atol=1e-6)


def test_forward_is_linear_with_the_dequantized_weight_and_gradients_reach_x():
    linear = nn.Linear(64, 32)
    layer = QuantizedLinear.from_linear(linear, "int4_g32")
    x = torch.randn(4, 64, requires_grad=True)
    y = layer(x)
    torch.testing.assert_close(y, x @ layer.dequantize().T + linear.bias, rtol=1e-5, atol=1e-6)
    y.sum().backward()
    torch.testing.assert_close(x.grad, layer.dequantize().sum(0).expand(4, 64), rtol=1e-5, atol=1e-5)


def test_bad_weights_raise():
    with pytest.raises(ValueError, match="NaN or Inf"):
        QuantizedLinear(torch.tensor([[float("nan")] * 32]), None, "int8")
    with pytest.raises(ValueError, match="NaN or Inf"):
        QuantizedLinear(torch.tensor([[float("inf")] * 32]), None, "q8_0")
    with pytest.raises(ValueError, match="unknown quantisation format"):
        parse_format("int9")
    with pytest.raises(TypeError):
        QuantizedLinear.from_linear(nn.Conv1d(2, 2, 1), "int8")


@pytest.mark.parametrize("fmt", FORMATS)
def test_quantize_model_replaces_layers_and_leaves_the_original_alone(fmt):
    model = tiny_llama()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ids = torch.randint(0, 96, (2, 20))
    ref = model(ids)
    qmodel = quantize_model(model, fmt)
    # The original model is untouched (the chapter's "quantise in place" mistake).
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert isinstance(model.blocks[0].attn.q_proj, nn.Linear)
    layers = quantized_layers(qmodel)
    assert isinstance(qmodel.blocks[0].mlp.down, QuantizedLinear) and isinstance(qmodel.tok_emb, QuantizedEmbedding)
    assert len(layers) == 2 * 7 + 2  # 7 linears per block, the LM head, the embedding
    out = qmodel(ids)
    assert out.shape == ref.shape and torch.isfinite(out).all()
    # The quantised model computes exactly with its dequantised weights.
    manual = quantize_model(model, fmt)
    for name, layer in quantized_layers(manual).items():
        if isinstance(layer, QuantizedLinear):
            plain = nn.Linear(layer.in_features, layer.out_features, bias=False)
            plain.weight.data = layer.dequantize()
            manual.set_submodule(name, plain)
    emb = nn.Embedding.from_pretrained(manual.tok_emb.dequantize())
    manual.tok_emb = emb
    torch.testing.assert_close(out, manual(ids), rtol=1e-5, atol=1e-5)


def test_memory_shrinks_by_the_format_ratio():
    model = tiny_llama()
    f32 = module_nbytes(model)
    sizes = {fmt: module_nbytes(quantize_model(model, fmt)) for fmt in ("f16", "q8_0", "q4_0", "int2_g32")}
    n_norm = sum(p.numel() for n, p in model.named_parameters() if "norm" in n)
    n_matrix = sum(p.numel() for n, p in model.named_parameters() if "norm" not in n)
    assert f32 == 4 * (n_norm + n_matrix)
    assert sizes["f16"] == 2 * n_matrix + 4 * n_norm
    # GGUF-style blocks: 8.5 and 4.5 bits per weight, within the padding of d_ff = 176 (not a multiple of 32).
    pad = 2 * 64 * (192 - 176)  # two down projections [64, 176] padded to 192 columns
    assert sizes["q8_0"] == pytest.approx((n_matrix + pad) * 8.5 / 8 + 4 * n_norm)
    assert sizes["q4_0"] == pytest.approx((n_matrix + pad) * 4.5 / 8 + 4 * n_norm)
    assert sizes["int2_g32"] < sizes["q4_0"] < sizes["q8_0"] < sizes["f16"] < f32


def test_fewer_bits_move_the_logits_more():
    model = tiny_llama()
    ids = torch.randint(0, 96, (1, 30))
    with torch.no_grad():
        ref = model(ids)
        err = {f: float((quantize_model(model, f)(ids) - ref).norm() / ref.norm()) for f in ("f16", "q8_0", "q4_0", "int2_g32")}
    assert err["f16"] < err["q8_0"] < err["q4_0"] < err["int2_g32"]
    assert err["q8_0"] < 0.02


def test_tied_embeddings_share_one_packed_table():
    torch.manual_seed(0)
    model = Transformer(ModelConfig.gpt2_style(vocab_size=64, n_layers=1, d_model=32, n_heads=2, max_seq_len=16)).eval()
    qmodel = quantize_model(model, "int8_channel")
    assert qmodel.lm_head.packed is qmodel.tok_emb.packed
    counted = module_nbytes(qmodel)
    assert counted < module_nbytes(model) / 2
    ids = torch.randint(0, 64, (1, 10))
    torch.testing.assert_close(qmodel(ids), model(ids), rtol=0.05, atol=0.05)


def test_skip_keeps_a_layer_in_float():
    qmodel = quantize_model(tiny_llama(), "q4_0", skip=("lm_head",), embeddings=False)
    assert isinstance(qmodel.lm_head, nn.Linear) and isinstance(qmodel.tok_emb, nn.Embedding)


def test_quantized_model_generates_like_generate_expects():
    model = tiny_llama()
    qmodel = quantize_model(model, "q8_0")
    ids = torch.randint(0, 96, (1, 5))
    out_cache = generate(qmodel, ids, 8)
    out_full = generate(qmodel, ids, 8, use_cache=False)
    torch.testing.assert_close(out_cache, out_full)


# ----------------------------------------------------------------------------------------------
# KV cache
# ----------------------------------------------------------------------------------------------


@torch.no_grad()
def test_quantized_cache_follows_the_kvcache_protocol_and_stays_close():
    model = tiny_llama()
    ids = torch.randint(0, 96, (2, 50))
    ref = model(ids)
    cache = QuantizedKVCache(model.config.n_layers, group_size=16)
    logits = [model(ids[:, :20], cache=cache)]
    for t in range(20, 50):
        logits.append(model(ids[:, t : t + 1], cache=cache))
    out = torch.cat(logits, dim=1)
    assert cache.seq_len == 50 and len(cache) == 50
    rel = float((out - ref).norm() / ref.norm())
    assert 0 < rel < 0.01
    # int8 codes + fp16 scales + a float tail of < group_size keys: about a third of the float32 cache.
    fcache = KVCache(model.config.n_layers)
    model(ids, cache=fcache)
    assert cache.nbytes < 0.4 * fcache.nbytes


@torch.no_grad()
def test_crop_and_reset():
    model = tiny_llama()
    ids = torch.randint(0, 96, (1, 40))
    cache = QuantizedKVCache(model.config.n_layers, group_size=16)
    model(ids, cache=cache)
    cache.crop(21)
    assert cache.seq_len == 21
    out = model(ids[:, 21:22], cache=cache)
    ref = model(ids[:, :22])[:, -1:]
    torch.testing.assert_close(out, ref, rtol=0.05, atol=0.05)
    cache.reset()
    assert cache.seq_len == 0
    with pytest.raises(ValueError):
        QuantizedKVCache(0)


def test_generate_with_an_int8_cache():
    model = tiny_llama()
    ids = torch.randint(0, 96, (1, 6))
    twin = use_quantized_kv_cache(model)
    assert isinstance(twin.new_cache(), QuantizedKVCache) and isinstance(model.new_cache(), KVCache)
    out = generate(twin, ids, 10)
    assert out.shape == (1, 16)


def test_keys_with_outlier_channels_want_per_channel_scales():
    torch.manual_seed(0)
    k = torch.randn(1, 2, 64, 32)
    k[..., 5] *= 40.0  # one channel much larger, for every token (what real keys look like)
    v = torch.randn(1, 2, 64, 32)
    err = kv_quantization_error(k, v, group_size=32)
    assert err["keys_per_channel"] < err["keys_per_token"] / 2
    assert err["values_per_token"] < 0.01
