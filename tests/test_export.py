"""llmlab.export: GGUF files written with the gguf package's writer, read back with gguf.GGUFReader.

Random Llama-style models with the shipped tokenizer (its vocabulary size, not its training, matters),
so nothing depends on the tiny models' current weights. The llama.cpp comparison runs only where
llama-cpp-python is installed (it compiles llama.cpp; not a test dependency).
"""

import numpy as np
import pytest
import torch

gguf = pytest.importorskip("gguf", reason="the gguf package (test extra) is needed to write GGUF files")

from llmlab import pretrained  # noqa: E402
from llmlab.export import _rope_adjacent_to_pairs, _rope_pairs_to_adjacent, from_gguf, gguf_tensor_names, gpt2_byte_alphabet, to_gguf  # noqa: E402
from llmlab.model import ModelConfig, Transformer, apply_rope  # noqa: E402
from llmlab.quant import quantize_blocks, quantize_model  # noqa: E402

T = gguf.GGMLQuantizationType


@pytest.fixture(scope="module")
def tokenizer():
    return pretrained.load_tokenizer()


def random_llama(vocab_size, d_ff=192, **overrides):
    torch.manual_seed(0)
    config = ModelConfig.llama_style(vocab_size=vocab_size, n_layers=2, d_model=64, n_heads=4, n_kv_heads=2, d_ff=d_ff, max_seq_len=64, **overrides)
    model = Transformer(config).eval()
    with torch.no_grad():  # norms away from 1, so a swapped norm tensor would show
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    return model


def read_fields(path):
    reader = gguf.GGUFReader(str(path))
    return reader, {key: field.contents() for key, field in reader.fields.items()}


@pytest.mark.parametrize("fmt", ["f32", "f16", "q8_0", "q4_0"])
def test_every_key_and_tensor_reads_back(tmp_path, tokenizer, fmt):
    model = random_llama(len(tokenizer))
    c = model.config
    path = to_gguf(model, tokenizer, tmp_path / f"m-{fmt}.gguf", fmt, name="prueba")
    reader, fields = read_fields(path)
    expected = {
        "general.architecture": "llama",
        "general.name": "prueba",
        "llama.context_length": c.max_seq_len,
        "llama.embedding_length": c.d_model,
        "llama.block_count": c.n_layers,
        "llama.feed_forward_length": c.d_ff,
        "llama.attention.head_count": c.n_heads,
        "llama.attention.head_count_kv": c.n_kv_heads,
        "llama.attention.key_length": c.head_dim,
        "llama.attention.value_length": c.head_dim,
        "llama.rope.dimension_count": c.head_dim,
        "llama.vocab_size": c.vocab_size,
        "general.file_type": {"f32": 0, "f16": 1, "q8_0": 7, "q4_0": 2}[fmt],
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "default",
        "tokenizer.ggml.bos_token_id": tokenizer.bos_id,
        "tokenizer.ggml.eos_token_id": tokenizer.eos_id,
        "tokenizer.ggml.padding_token_id": tokenizer.pad_id,
        "tokenizer.ggml.add_bos_token": False,
        "llmlab.tokenizer.pattern": tokenizer.pattern,
    }
    for key, value in expected.items():
        assert fields[key] == value, key
    assert fields["llama.rope.freq_base"] == pytest.approx(c.rope_theta)
    assert fields["llama.attention.layer_norm_rms_epsilon"] == pytest.approx(c.norm_eps, rel=1e-6)

    # Tokenizer tables: every id, in the GPT-2 byte alphabet; specials are control tokens.
    alphabet = gpt2_byte_alphabet()
    tokens, types = fields["tokenizer.ggml.tokens"], fields["tokenizer.ggml.token_type"]
    assert len(tokens) == len(tokenizer) == len(types)
    for i in (0, 32, 65, 195, 300, len(tokenizer) - 1):
        want = tokenizer.id_to_token(i) if tokenizer.is_special(i) else "".join(alphabet[b] for b in tokenizer.token_bytes(i))
        assert tokens[i] == want
        assert types[i] == (3 if tokenizer.is_special(i) else 1)
    assert tokens[32] == "Ġ"  # the space byte
    merges = fields["tokenizer.ggml.merges"]
    assert len(merges) == len(tokenizer.merges)
    left, right = tokenizer.merges[0]
    assert merges[0] == f"{tokens[left]} {tokens[right]}"

    # Tensors: every name, type, shape and byte.
    names = gguf_tensor_names(c.n_layers)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    by_name = {t.name: t for t in reader.tensors}
    assert set(by_name) == set(names.values())
    for key, gguf_name in names.items():
        tensor, w = by_name[gguf_name], state[key]
        if key.endswith(("q_proj.weight", "k_proj.weight")):
            w = _rope_pairs_to_adjacent(w, c.n_heads if "q_proj" in key else c.n_kv_heads)
        assert tuple(int(n) for n in reversed(tensor.shape)) == w.shape, gguf_name
        if w.ndim == 1 or fmt == "f32":
            assert tensor.tensor_type == T.F32
            np.testing.assert_array_equal(tensor.data.reshape(w.shape), w)
        elif fmt == "f16":
            assert tensor.tensor_type == T.F16
            np.testing.assert_array_equal(tensor.data.reshape(w.shape), w.astype(np.float16))
        else:
            assert tensor.tensor_type == (T.Q8_0 if fmt == "q8_0" else T.Q4_0)
            np.testing.assert_array_equal(np.asarray(tensor.data).reshape(w.shape[0], -1), quantize_blocks(w, fmt))


def test_round_trip_f32_is_exact_and_quantized_matches_quantize_model(tmp_path, tokenizer):
    model = random_llama(len(tokenizer))
    ids = torch.randint(0, len(tokenizer), (1, 24))
    with torch.no_grad():
        ref = model(ids)
        back, config = from_gguf(to_gguf(model, tokenizer, tmp_path / "f32.gguf", "f32"))
        assert config == model.config.__class__.from_dict({**model.config.to_dict(), "dropout": 0.0})
        torch.testing.assert_close(back(ids), ref, rtol=0, atol=0)
        for fmt in ("q8_0", "q4_0"):
            back, _ = from_gguf(to_gguf(model, tokenizer, tmp_path / f"{fmt}.gguf", fmt))
            # The file's bytes are the ones quantize_model keeps in memory: same logits.
            torch.testing.assert_close(back(ids), quantize_model(model, fmt)(ids), rtol=1e-5, atol=1e-5)


def test_rows_that_are_not_whole_blocks_fall_back_to_f16(tmp_path, tokenizer):
    model = random_llama(len(tokenizer), d_ff=176)  # ffn_down rows have 176 weights, not a multiple of 32
    reader, _ = read_fields(to_gguf(model, tokenizer, tmp_path / "m.gguf", "q4_0"))
    types = {t.name: t.tensor_type for t in reader.tensors}
    assert types["blk.0.ffn_down.weight"] == T.F16
    assert types["blk.0.ffn_up.weight"] == T.Q4_0


def test_quantized_model_exports_its_dequantized_weights(tmp_path, tokenizer):
    model = random_llama(len(tokenizer))
    qmodel = quantize_model(model, "q8_0")
    reader, _ = read_fields(to_gguf(qmodel, tokenizer, tmp_path / "q.gguf", "f32"))
    emb = {t.name: t for t in reader.tensors}["token_embd.weight"]
    np.testing.assert_array_equal(emb.data.reshape(len(tokenizer), -1), qmodel.tok_emb.dequantize().numpy())


def test_rope_permutation_turns_half_pairs_into_adjacent_pairs():
    """llmlab rotates (i, i + d/2); llama.cpp rotates (2i, 2i + 1): the permuted weights give the same scores."""
    torch.manual_seed(0)
    n_heads, head_dim, d = 2, 8, 16
    wq, wk, x = torch.randn(n_heads * head_dim, d), torch.randn(n_heads * head_dim, d), torch.randn(5, d)
    pos = torch.arange(5).float()
    inv = 1.0 / 10000 ** (torch.arange(0, head_dim, 2).float() / head_dim)
    ang = pos[:, None] * inv[None, :]  # [5, head_dim/2]
    cos, sin = torch.cat((ang, ang), -1).cos(), torch.cat((ang, ang), -1).sin()

    def ours(w):
        return apply_rope((x @ w.T).view(5, n_heads, head_dim).transpose(0, 1), cos, sin)

    def llama_cpp(w):
        h = (x @ w.T).view(5, n_heads, head_dim // 2, 2).transpose(0, 1)
        a, b = h[..., 0], h[..., 1]
        c, s = ang.cos(), ang.sin()
        return torch.stack((a * c - b * s, a * s + b * c), dim=-1).reshape(n_heads, 5, head_dim)

    wq2 = torch.from_numpy(_rope_pairs_to_adjacent(wq.numpy(), n_heads))
    wk2 = torch.from_numpy(_rope_pairs_to_adjacent(wk.numpy(), n_heads))
    torch.testing.assert_close(ours(wq) @ ours(wk).transpose(-1, -2), llama_cpp(wq2) @ llama_cpp(wk2).transpose(-1, -2), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(_rope_adjacent_to_pairs(wq2.numpy(), n_heads), wq.numpy())


def test_bad_arguments(tmp_path, tokenizer):
    model = random_llama(len(tokenizer))
    with pytest.raises(ValueError, match="weight_format"):
        to_gguf(model, tokenizer, tmp_path / "x.gguf", "q5_0")
    gpt2 = Transformer(ModelConfig.gpt2_style(vocab_size=len(tokenizer), n_layers=1, d_model=32, n_heads=2))
    with pytest.raises(ValueError, match="Llama-style"):
        to_gguf(gpt2, tokenizer, tmp_path / "x.gguf")
    small = random_llama(100)
    with pytest.raises(ValueError, match="vocab_size"):
        to_gguf(small, tokenizer, tmp_path / "x.gguf")
    with pytest.raises(TypeError):
        to_gguf(torch.nn.Linear(2, 2), tokenizer, tmp_path / "x.gguf")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["f32", "q8_0"])
def test_llama_cpp_runs_the_exported_file_with_our_logits(tmp_path, tokenizer, fmt):
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is optional (it compiles llama.cpp)")
    model = random_llama(len(tokenizer), d_ff=192)
    path = to_gguf(model, tokenizer, tmp_path / f"m-{fmt}.gguf", fmt)
    expected_model = model if fmt == "f32" else quantize_model(model, fmt)
    ids = tokenizer.encode("Había una vez un perro que vivía en la ciudad.")
    with torch.no_grad():
        ref = expected_model(torch.tensor([ids]))[0].numpy()
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=64, logits_all=True, verbose=False, n_threads=1)
    llm.eval(ids)
    theirs = np.asarray(llm.scores[: len(ids)])
    # llama.cpp quantises activations to Q8 inside its Q8_0 dot products: looser tolerance there.
    tol = 1e-3 if fmt == "f32" else 0.05
    np.testing.assert_allclose(theirs, ref, rtol=0, atol=tol * np.abs(ref).max())
    assert (theirs.argmax(-1) == ref.argmax(-1)).mean() > 0.9
