"""Read a real GGUF file of the Llama family into an llmlab ``Transformer``.

A GGUF file published for llama.cpp (SmolLM2, TinyLlama, Llama-3, ...) holds three things this
module turns into llmlab objects::

    from llmlab.gguf_model import read_gguf
    model, tokenizer, info = read_gguf("SmolLM2-135M-Instruct.Q4_1.gguf")

- the ``llama.*`` keys become a :class:`~llmlab.model.ModelConfig` (widths, heads, GQA,
  RMSNorm epsilon, RoPE base, context length);
- the tensors, each in its own type, are dequantised to float32: F32, F16 and BF16 as they are,
  Q8_0, Q4_0 and Q6_K with llmlab's own byte-exact code (``llmlab.quant``), Q4_1, Q4_K and Q5_K
  with the ``gguf`` package; q and k rows go back from llama.cpp's RoPE order (adjacent pairs
  ``2i, 2i + 1``) to llmlab's (``i, i + head_dim / 2``); a file with no ``output.weight`` ties
  the LM head to the token embedding, as llama.cpp does;
- the ``tokenizer.ggml.*`` tables become a :class:`~llmlab.gguf_tokenizer.GGUFTokenizer`.

``info`` says what the file was: its name, the type and size of every tensor, the bits per
weight, the chat template. Anything llmlab cannot represent faithfully (another architecture,
RoPE scaling, experts, biases, a tensor type with no decoder) is refused with a ``ValueError``
that names the GGUF key or tensor, never approximated.

The file is parsed here (header, keys, tensor table; the tensors are memory-mapped), so only the
Q4_K and Q5_K decoders need the ``gguf`` package (``pip install gguf``).
"""

from __future__ import annotations

import os
import pathlib
import struct
from dataclasses import dataclass, field

import numpy as np
import torch

from .model import ModelConfig, Transformer

__all__ = ["GGUFInfo", "TensorInfo", "SUPPORTED_TYPES", "read_gguf", "read_config", "read_info"]

# Tensor type name -> who decodes it. llmlab's own code where it exists (the tests check it
# against the gguf package), the gguf package otherwise.
SUPPORTED_TYPES = {
    "F32": "numpy", "F16": "numpy", "BF16": "numpy",
    "Q8_0": "llmlab", "Q4_0": "llmlab", "Q6_K": "llmlab", "Q4_1": "llmlab",
    "Q4_K": "gguf", "Q5_K": "gguf",
}  # fmt: skip

# ggml_type number -> (name, weights per block, bytes per block), from ggml.h.
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36), 10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    24: ("I8", 1, 1), 25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 30: ("BF16", 1, 2),
}  # fmt: skip

# GGUF tensor name (inside block N) -> llmlab state-dict name.
_BLOCK_TENSORS = {
    "attn_norm.weight": "attn_norm.weight",
    "attn_q.weight": "attn.q_proj.weight",
    "attn_k.weight": "attn.k_proj.weight",
    "attn_v.weight": "attn.v_proj.weight",
    "attn_output.weight": "attn.o_proj.weight",
    "ffn_norm.weight": "mlp_norm.weight",
    "ffn_gate.weight": "mlp.gate.weight",
    "ffn_up.weight": "mlp.up.weight",
    "ffn_down.weight": "mlp.down.weight",
}
_TOP_TENSORS = {"token_embd.weight": "tok_emb.weight", "output_norm.weight": "final_norm.weight", "output.weight": "lm_head.weight"}


def _gguf():
    try:
        import gguf
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("reading GGUF files needs the gguf package: pip install gguf") from err
    return gguf


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of the file, as stored: GGUF name, type, shape (rows, columns), bytes."""

    name: str
    type: str
    shape: tuple[int, ...]
    nbytes: int

    @property
    def n_weights(self) -> int:
        return int(np.prod(self.shape))

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.nbytes / self.n_weights


@dataclass
class GGUFInfo:
    """What a GGUF file says about itself (header keys and tensor table), without the weights."""

    path: pathlib.Path
    metadata: dict = field(repr=False)  # key -> value, the tokenizer tables included
    tensors: list[TensorInfo] = field(repr=False)

    @property
    def name(self) -> str | None:
        return self.metadata.get("general.name")

    @property
    def chat_template(self) -> str | None:
        return self.metadata.get("tokenizer.chat_template")

    @property
    def n_weights(self) -> int:
        return sum(t.n_weights for t in self.tensors)

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @property
    def bits_per_weight(self) -> float:
        """Bits per weight over every tensor (what llama.cpp reports as "BPW")."""
        return 8 * self.nbytes / self.n_weights

    def types(self) -> dict[str, int]:
        """Tensor type -> how many tensors of the file have it."""
        counts: dict[str, int] = {}
        for t in self.tensors:
            counts[t.type] = counts.get(t.type, 0) + 1
        return counts


# ----------------------------------------------------------------------------------------------
# The file format: a header, key/value metadata, a tensor table, then the aligned tensor data
# ----------------------------------------------------------------------------------------------

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_NUMPY = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?", 10: "<u8", 11: "<i8", 12: "<f8"}
_STRING, _ARRAY = 8, 9


class _Parser:
    """Reads GGUF version 2 and 3 headers from a bytes-like object, one value at a time."""

    def __init__(self, data, path):
        self.data, self.pos, self.path = data, 0, path

    def take(self, fmt: str):
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        n = self.take("<Q")
        raw = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def value(self, kind: int):
        if kind in _SCALARS:
            return self.take(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, n = self.take("<I"), self.take("<Q")
            if item in _NUMPY:
                arr = np.frombuffer(self.data, dtype=_NUMPY[item], count=n, offset=self.pos)
                self.pos += arr.nbytes
                return arr.tolist()
            return [self.value(item) for _ in range(n)]
        raise ValueError(f"{self.path}: unknown GGUF value type {kind} at byte {self.pos}")


def _open(path):
    """``(info, tensors)`` of a GGUF file: its header and, per tensor, (name, ggml type, shape, data)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no GGUF file at {path}")
    data = np.memmap(path, dtype=np.uint8, mode="r")
    p = _Parser(data, path)
    try:
        if bytes(data[:4]) != b"GGUF":
            raise ValueError("it does not start with the bytes 'GGUF'")
        p.pos = 4
        version = p.take("<I")
        if version not in (2, 3):
            raise ValueError(f"GGUF version {version} (llmlab reads versions 2 and 3)")
        n_tensors, n_keys = p.take("<Q"), p.take("<Q")
        metadata = {}
        for _ in range(n_keys):
            key = p.string()
            metadata[key] = p.value(p.take("<I"))
        table = []
        for _ in range(n_tensors):
            name = p.string()
            dims = [p.take("<Q") for _ in range(p.take("<I"))]
            table.append((name, dims, p.take("<I"), p.take("<Q")))
    except (struct.error, UnicodeDecodeError) as err:
        raise ValueError(f"{path} is not a readable GGUF file (truncated header?): {err}") from None
    except ValueError as err:
        raise ValueError(f"{path} is not a readable GGUF file: {err}") from None
    alignment = int(metadata.get("general.alignment", 32))
    start = (p.pos + alignment - 1) // alignment * alignment
    infos, arrays = [], []
    for name, dims, kind, offset in table:
        if kind not in GGML_TYPES:
            raise ValueError(f"{path}: tensor {name!r} has the unknown ggml type {kind}")
        type_name, block, type_size = GGML_TYPES[kind]
        shape = tuple(int(n) for n in reversed(dims))  # GGUF lists dimensions innermost first
        n_weights = int(np.prod(shape))
        if shape[-1] % block:
            raise ValueError(f"{path}: tensor {name!r} has rows of {shape[-1]} weights, not whole {type_name} blocks")
        nbytes = n_weights // block * type_size
        if start + offset + nbytes > data.size:
            raise ValueError(f"{path}: tensor {name!r} runs past the end of the file (truncated?)")
        infos.append(TensorInfo(name, type_name, shape, nbytes))
        arrays.append(data[start + offset : start + offset + nbytes])
    return GGUFInfo(path, metadata, infos), arrays


def read_info(path: str | os.PathLike) -> GGUFInfo:
    """The header of a GGUF file: metadata keys and the tensor table (no weights decoded)."""
    return _open(path)[0]


def _float32_value(value) -> float:
    """The shortest decimal that a float32 key stands for (GGUF stores 1e-5 as 9.99999975e-06)."""
    return float(str(np.float32(value)))


def _refuse(path, key: str, why: str):
    raise ValueError(f"{path}: {key} {why}; llmlab cannot represent this model faithfully")


def read_config(info: GGUFInfo, max_seq_len: int | None = None) -> ModelConfig:
    """The ``ModelConfig`` that the ``llama.*`` keys describe; refuses what llmlab cannot represent.

    ``max_seq_len`` uses only the first positions of the file's context (``llama.context_length``):
    the weights and the logits are the same, and a KV cache sized for the whole context is not
    allocated (8192 positions of SmolLM2 in a 32-sequence serving cache would be 12 GB).
    """
    md, path = info.metadata, info.path

    def need(key):
        if key not in md:
            raise ValueError(f"{path}: the GGUF file has no key {key!r}")
        return md[key]

    arch = need("general.architecture")
    if arch != "llama":
        _refuse(path, "general.architecture", f"is {arch!r}, and llmlab reads only 'llama'")
    scaling = md.get("llama.rope.scaling.type", "none")
    if scaling not in ("none", None):
        _refuse(path, "llama.rope.scaling.type", f"is {scaling!r} (RoPE scaling is not implemented in llmlab.model)")
    factor = md.get("llama.rope.scaling.factor")
    if factor not in (None, 0.0, 1.0):
        _refuse(path, "llama.rope.scaling.factor", f"is {factor} (RoPE scaling is not implemented in llmlab.model)")
    if int(md.get("llama.expert_count", 0) or 0) > 0:
        _refuse(path, "llama.expert_count", f"is {md['llama.expert_count']} (a Mixtral-style MoE; llmlab.moe has its own format)")
    for key in ("llama.attention.sliding_window", "llama.attention.logit_softcapping", "llama.final_logit_softcapping"):
        if key in md:
            _refuse(path, key, "is set (not implemented in llmlab.model)")

    n_heads = int(need("llama.attention.head_count"))
    d_model = int(need("llama.embedding_length"))
    n_kv = int(md.get("llama.attention.head_count_kv", n_heads))
    head_dim = int(md.get("llama.attention.key_length", d_model // n_heads))
    if int(md.get("llama.attention.value_length", head_dim)) != head_dim:
        _refuse(path, "llama.attention.value_length", f"differs from llama.attention.key_length ({head_dim})")
    rope_dim = int(md.get("llama.rope.dimension_count", head_dim))
    if rope_dim != head_dim:
        _refuse(path, "llama.rope.dimension_count", f"is {rope_dim}, not head_dim={head_dim} (partial RoPE)")
    names = {t.name for t in info.tensors}
    embd = next((t for t in info.tensors if t.name == "token_embd.weight"), None)
    if embd is None:
        raise ValueError(f"{path}: the GGUF file has no tensor 'token_embd.weight'")
    vocab = int(md.get("llama.vocab_size", embd.shape[0]))
    if embd.shape != (vocab, d_model):
        _refuse(path, "llama.vocab_size", f"and llama.embedding_length say ({vocab}, {d_model}) but token_embd.weight is {embd.shape}")
    context = int(need("llama.context_length"))
    if max_seq_len is not None:
        if isinstance(max_seq_len, bool) or not isinstance(max_seq_len, int) or not 1 <= max_seq_len <= context:
            raise ValueError(f"max_seq_len must be an int in [1, {context}] (llama.context_length of {path}), got {max_seq_len!r}")
        context = max_seq_len
    return ModelConfig.llama_style(
        vocab_size=vocab,
        n_layers=int(need("llama.block_count")),
        d_model=d_model,
        n_heads=n_heads,
        n_kv_heads=n_kv,
        d_ff=int(need("llama.feed_forward_length")),
        max_seq_len=context,
        head_dim=head_dim,
        norm_eps=_float32_value(md.get("llama.attention.layer_norm_rms_epsilon", 1e-5)),
        rope_theta=_float32_value(md.get("llama.rope.freq_base", 10000.0)),
        tie_embeddings="output.weight" not in names,
    )


def _state_names(n_layers: int) -> dict[str, str]:
    names = dict(_TOP_TENSORS)
    for i in range(n_layers):
        names.update({f"blk.{i}.{theirs}": f"blocks.{i}.{ours}" for theirs, ours in _BLOCK_TENSORS.items()})
    return names


def _rope_adjacent_to_pairs(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k row permutation: rows (2i, 2i + 1) of each head back to (i, i + half)."""
    rows, cols = w.shape
    head_dim = rows // n_heads
    return w.reshape(n_heads, head_dim // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def dequantize_q4_1(data) -> np.ndarray:
    """float32 weights ``[..., n]`` from Q4_1 bytes ``[..., n // 32 * 20]``.

    A Q4_1 block is 20 bytes for 32 weights (5 bits per weight): a float16 scale ``d``, a float16
    minimum ``m``, then 16 bytes of 4-bit codes, element ``j`` in the low nibble of byte ``j`` and
    element ``j + 16`` in its high nibble (as Q4_0). The weights are ``d * q + m``: unlike Q4_0's
    ``d * (q - 8)``, the grid need not be centred on zero.
    """
    arr = np.ascontiguousarray(data, dtype=np.uint8)
    blocks = arr.reshape(-1, 20)
    d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
    m = blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
    packed = blocks[:, 4:]
    q = np.concatenate([packed & np.uint8(0x0F), packed >> np.uint8(4)], axis=1).astype(np.float32)
    return (d * q + m).reshape(*arr.shape[:-1], arr.shape[-1] // 20 * 32)


def dequantize_tensor(info: TensorInfo, data: np.ndarray) -> np.ndarray:
    """float32 weights of one tensor from its bytes, shaped (rows, columns) as llmlab stores them."""
    who = SUPPORTED_TYPES.get(info.type)
    if who is None:
        raise ValueError(
            f"tensor {info.name!r} has type {info.type}, which llmlab does not decode (supported: {sorted(SUPPORTED_TYPES)})"
        )
    rows = np.asarray(data).reshape(-1, info.nbytes // max(1, info.n_weights // info.shape[-1]))
    if info.type == "F32":
        array = rows.view("<f4").astype(np.float32)
    elif info.type == "F16":
        array = rows.view("<f2").astype(np.float32)
    elif info.type == "BF16":
        array = (rows.view("<u2").astype(np.uint32) << 16).view(np.float32)
    elif info.type == "Q4_1":
        array = dequantize_q4_1(rows)
    elif who == "llmlab":
        from .quant import dequantize_blocks

        array = dequantize_blocks(rows, info.type.lower())
    else:
        gguf = _gguf()
        array = gguf.quants.dequantize(rows, gguf.GGMLQuantizationType[info.type]).astype(np.float32)
    return array.reshape(info.shape)


def read_gguf(path: str | os.PathLike, *, dtype: torch.dtype = torch.float32, max_seq_len: int | None = None):
    """``(model, tokenizer, info)`` from a GGUF file of the Llama family; the model is in eval mode.

    ``max_seq_len``: see :func:`read_config` (default: the file's whole context).
    """
    from .gguf_tokenizer import GGUFTokenizer

    info, arrays = _open(path)
    config = read_config(info, max_seq_len)
    tokenizer = GGUFTokenizer.from_metadata(info.metadata, where=str(info.path))
    if len(tokenizer) != config.vocab_size:
        _refuse(info.path, "tokenizer.ggml.tokens", f"has {len(tokenizer)} tokens but the model's vocabulary is {config.vocab_size}")
    state = read_state_dict(info, arrays, config)
    with torch.device("meta"):  # no random initialisation of 135 M weights that are replaced at once
        model = Transformer(config)
    model.load_state_dict(state, assign=True)
    if config.tie_embeddings:
        model.lm_head.weight = model.tok_emb.weight
    return model.to(dtype).eval(), tokenizer, info


def read_state_dict(info: GGUFInfo, arrays: list[np.ndarray], config: ModelConfig) -> dict[str, torch.Tensor]:
    """The llmlab state dict of an opened GGUF file: every tensor dequantised, q/k rows reordered."""
    ours = _state_names(config.n_layers)
    state = {}
    for tensor, data in zip(info.tensors, arrays):
        key = ours.get(tensor.name)
        if key is None:
            kind = "a bias" if tensor.name.endswith(".bias") else "a tensor llmlab's Llama blocks have no slot for"
            raise ValueError(f"{info.path}: tensor {tensor.name!r} is {kind}; llmlab cannot represent this model faithfully")
        array = dequantize_tensor(tensor, data)
        if key.endswith(("q_proj.weight", "k_proj.weight")):
            array = _rope_adjacent_to_pairs(array, config.n_heads if "q_proj" in key else config.n_kv_heads)
        state[key] = torch.from_numpy(np.ascontiguousarray(array))
    if config.tie_embeddings:
        state["lm_head.weight"] = state["tok_emb.weight"]
    missing = sorted(set(_state_names(config.n_layers).values()) - set(state))
    if missing:
        raise ValueError(f"{info.path}: the GGUF file lacks the tensors {missing[:5]}{' ...' if len(missing) > 5 else ''}")
    return state
