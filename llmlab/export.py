"""Write an llmlab model (and its tokenizer) as a GGUF file that llama.cpp can load, and read it back.

GGUF is the single-file format of llama.cpp: a header of key/value metadata (architecture, sizes,
tokenizer tables) followed by the tensors, each in its own type (F32, F16, Q8_0, Q4_0, ...)::

    from llmlab.export import to_gguf, from_gguf
    to_gguf(model, tokenizer, "es-base-q4_0.gguf", weight_format="q4_0")
    model2, config = from_gguf("es-base-q4_0.gguf")    # the dequantised weights, as an llmlab model

``from_gguf`` also reads published files of the Llama family (:mod:`llmlab.gguf_model` does the
reading, tokenizer included).

What the file holds (llama.cpp's names for a Llama-style model):

- keys ``general.*`` and ``llama.*``: context length, widths, heads, KV heads, RMSNorm epsilon,
  RoPE base; ``tokenizer.ggml.*``: the byte-level BPE as GPT-2-style tokens, merges, token types
  and the special ids. ``llmlab.*`` keys keep what GGUF has no slot for (the pre-tokenisation regex).
- tensors ``token_embd``, ``blk.N.attn_{norm,q,k,v,output}``, ``blk.N.ffn_{norm,gate,up,down}``,
  ``output_norm``, ``output``. Matrices use ``weight_format``; norm vectors stay F32. A matrix whose
  rows are not whole blocks of 32 falls back to F16, as llama.cpp's converter does.
- q and k rows are permuted: llmlab (like Hugging Face) rotates dimension i with i + head_dim/2
  under RoPE, while llama.cpp's "llama" architecture rotates adjacent pairs (2i, 2i + 1).

Quantised tensors are written with ``llmlab.quant``'s byte-exact Q8_0/Q4_0 encoders, so they hold
the same bytes as ``quantize_model(model, fmt)`` keeps in memory. Needs the ``gguf`` package
(``pip install gguf``); the rest of llmlab does not.

Limits: Llama-style models only (RoPE, RMSNorm, SwiGLU, no biases); llama.cpp pre-tokenises text
with its own regex, not llmlab's, so feed it token ids (text may split differently).
"""

from __future__ import annotations

import os
import pathlib

import numpy as np
import torch

from .model import ModelConfig, Transformer
from .quant import ggml

from .tokenizer import gpt2_byte_alphabet  # re-exported: the alphabet GGUF files store tokens in

__all__ = ["GGUF_WEIGHT_TYPES", "to_gguf", "from_gguf", "gguf_tensor_names", "gpt2_byte_alphabet"]

GGUF_WEIGHT_TYPES = ("f32", "f16", "q8_0", "q4_0")


def _gguf():
    try:
        import gguf
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("writing GGUF files needs the gguf package: pip install gguf") from err
    return gguf


def gguf_tensor_names(n_layers: int) -> dict[str, str]:
    """llmlab state-dict name -> GGUF tensor name, for a Llama-style model with ``n_layers`` blocks."""
    names = {"tok_emb.weight": "token_embd.weight", "final_norm.weight": "output_norm.weight", "lm_head.weight": "output.weight"}
    per_block = {
        "attn_norm.weight": "attn_norm.weight",
        "attn.q_proj.weight": "attn_q.weight",
        "attn.k_proj.weight": "attn_k.weight",
        "attn.v_proj.weight": "attn_v.weight",
        "attn.o_proj.weight": "attn_output.weight",
        "mlp_norm.weight": "ffn_norm.weight",
        "mlp.gate.weight": "ffn_gate.weight",
        "mlp.up.weight": "ffn_up.weight",
        "mlp.down.weight": "ffn_down.weight",
    }
    for i in range(n_layers):
        names.update({f"blocks.{i}.{ours}": f"blk.{i}.{theirs}" for ours, theirs in per_block.items()})
    return names


def _rope_pairs_to_adjacent(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Reorder the rows of each head from (i, i + half) pairing to (2i, 2i + 1) pairing."""
    rows, cols = w.shape
    head_dim = rows // n_heads
    return w.reshape(n_heads, 2, head_dim // 2, cols).swapaxes(1, 2).reshape(rows, cols)


def _rope_adjacent_to_pairs(w: np.ndarray, n_heads: int) -> np.ndarray:
    rows, cols = w.shape
    head_dim = rows // n_heads
    return w.reshape(n_heads, head_dim // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def _check_exportable(model) -> ModelConfig:
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be an llmlab Transformer, got {type(model).__name__}")
    c = model.config
    problems = []
    if c.pos_encoding != "rope":
        problems.append(f"pos_encoding={c.pos_encoding!r} (needs 'rope')")
    if c.norm != "rmsnorm":
        problems.append(f"norm={c.norm!r} (needs 'rmsnorm')")
    if c.mlp != "swiglu":
        problems.append(f"mlp={c.mlp!r} (needs 'swiglu')")
    if c.bias:
        problems.append("bias=True (Llama has no biases)")
    if c.qk_norm:
        problems.append("qk_norm=True (Qwen3's RMSNorm on each head's q and k: a llama file has no tensors for it)")
    if c.n_experts:
        problems.append(f"n_experts={c.n_experts} (a mixture of experts: a llama file has one dense MLP per layer)")
    if any(".lora_" in name for name, _ in model.named_parameters()):
        problems.append("LoRA layers (merge them first with llmlab.lora.unload(model), or export the base "
                        "and save the adapter with llmlab.lora.save_adapter)")
    if problems:
        raise ValueError("to_gguf writes Llama-style models only; this one has " + ", ".join(problems))
    return c


def _float_state(model: Transformer) -> dict[str, np.ndarray]:
    """float32 NumPy copies of the weights, dequantised if the model was quantised with llmlab.quant."""
    from .quant import quantized_layers

    state = {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items() if k in gguf_tensor_names(model.config.n_layers)}
    for name, layer in quantized_layers(model).items():
        state[f"{name}.weight"] = layer.dequantize().detach().float().cpu().numpy()
    if model.config.tie_embeddings:
        state["lm_head.weight"] = state["tok_emb.weight"]
    missing = sorted(set(gguf_tensor_names(model.config.n_layers)) - set(state))
    if missing:  # never write a file without some of the model's tensors
        raise ValueError(f"to_gguf cannot represent this model: no llama tensor for {', '.join(missing[:4])}")
    return state


def to_gguf(model: Transformer, tokenizer, path: str | os.PathLike, weight_format: str = "f16", *, name: str | None = None) -> pathlib.Path:
    """Write ``model`` and ``tokenizer`` to the GGUF file ``path``; return the path.

    ``weight_format``: ``"f32"``, ``"f16"``, ``"q8_0"`` or ``"q4_0"`` for the matrices (norms stay
    F32; rows that are not whole blocks of 32 fall back to F16). A model already quantised by
    ``llmlab.quant.quantize_model`` is written from its dequantised weights.
    """
    gguf = _gguf()
    config = _check_exportable(model)
    if weight_format not in GGUF_WEIGHT_TYPES:
        raise ValueError(f"weight_format must be one of {GGUF_WEIGHT_TYPES}, got {weight_format!r}")
    if len(tokenizer) != config.vocab_size:
        raise ValueError(f"the tokenizer has {len(tokenizer)} ids but the model's vocab_size is {config.vocab_size}")
    path = pathlib.Path(path)
    T = gguf.GGMLQuantizationType
    file_type = {"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
                 "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0, "q4_0": gguf.LlamaFileType.MOSTLY_Q4_0}[weight_format]  # fmt: skip

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(name or "llmlab model")
    writer.add_context_length(config.max_seq_len)
    writer.add_embedding_length(config.d_model)
    writer.add_block_count(config.n_layers)
    writer.add_feed_forward_length(config.d_ff)
    writer.add_head_count(config.n_heads)
    writer.add_head_count_kv(config.n_kv_heads)
    writer.add_key_length(config.head_dim)
    writer.add_value_length(config.head_dim)
    writer.add_rope_dimension_count(config.head_dim)
    writer.add_rope_freq_base(config.rope_theta)
    writer.add_layer_norm_rms_eps(config.norm_eps)
    writer.add_vocab_size(config.vocab_size)
    writer.add_file_type(int(file_type))
    _add_tokenizer(writer, tokenizer, gguf)

    names = gguf_tensor_names(config.n_layers)
    for key, array in _float_state(model).items():
        if key.endswith(("q_proj.weight", "k_proj.weight")):
            heads = config.n_heads if "q_proj" in key else config.n_kv_heads
            array = _rope_pairs_to_adjacent(array, heads)
        if array.ndim == 1 or weight_format == "f32":
            writer.add_tensor(names[key], array.astype(np.float32))
        elif weight_format == "f16" or array.shape[1] % ggml.QK:
            writer.add_tensor(names[key], array.astype(np.float16))
        else:
            data = ggml.quantize_blocks(array, weight_format)
            writer.add_tensor(names[key], data, raw_dtype=T.Q8_0 if weight_format == "q8_0" else T.Q4_0)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _add_tokenizer(writer, tokenizer, gguf) -> None:
    alphabet = gpt2_byte_alphabet()

    def as_text(b: bytes) -> str:
        return "".join(alphabet[x] for x in b)

    tokens, types = [], []
    for i in range(len(tokenizer)):
        if tokenizer.is_special(i):
            tokens.append(tokenizer.id_to_token(i))
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(as_text(tokenizer.token_bytes(i)))
            types.append(gguf.TokenType.NORMAL)
    writer.add_tokenizer_model("gpt2")  # byte-level BPE
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([f"{as_text(tokenizer.token_bytes(a))} {as_text(tokenizer.token_bytes(b))}" for a, b in tokenizer.merges])
    for setter, token_id in ((writer.add_bos_token_id, tokenizer.bos_id), (writer.add_eos_token_id, tokenizer.eos_id),
                             (writer.add_pad_token_id, tokenizer.pad_id)):  # fmt: skip
        if token_id is not None:
            setter(token_id)
    writer.add_add_bos_token(False)  # llmlab adds <|bos|> itself where a document starts
    writer.add_string("llmlab.tokenizer.pattern", tokenizer.pattern)


# ----------------------------------------------------------------------------------------------
# Reading back
# ----------------------------------------------------------------------------------------------


def from_gguf(path: str | os.PathLike) -> tuple[Transformer, ModelConfig]:
    """``(model, config)`` from a GGUF file of the Llama family, weights dequantised to float32.

    Reads the files :func:`to_gguf` writes and published ones (SmolLM2, TinyLlama, ...): tensor
    types F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K, llama.cpp's ``llama`` keys, tied
    or separate LM head. What llmlab cannot represent is refused, naming the GGUF key. The model
    is in eval mode. :func:`llmlab.gguf_model.read_gguf` also returns the file's tokenizer.
    """
    from .gguf_model import read_gguf

    model, _, _ = read_gguf(path)
    return model, model.config
