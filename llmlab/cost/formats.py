"""How many bits each kind of tensor costs in a given weight format.

A real checkpoint does not store every tensor the same way. Quantised formats keep a scale (and
sometimes a zero point) per small block of weights, and they usually leave some tensors at higher
precision. So a format here is a small table: bits per weight for the matrices inside the
transformer blocks, for the token-embedding table, for the output head, and for the vectors
(norm weights and biases).

The numbers reproduce the published file sizes (serving-facts §1b): Llama-3.1-8B F16 = 16.0005
bits/weight (14.96 GiB) and Q8_0 = 8.5008 (7.95 GiB); LLaMA-2-7B Q4_0 = 3.56 GiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arguments import lookup_name

__all__ = ["WeightFormat", "WEIGHT_FORMATS", "get_weight_format"]


@dataclass(frozen=True)
class WeightFormat:
    """Bits per weight for each kind of tensor, and where the numbers come from."""

    name: str
    matrix_bits: float  # 2-D weights inside the blocks (attention, MLP, experts, router)
    embedding_bits: float  # token (and learned position) embedding tables
    head_bits: float  # output projection; also used for a tied embedding, which doubles as the head
    vector_bits: float  # norm weights and biases
    kv_default_bytes: float  # what the runtime that uses this format stores per KV value by default
    description: str

    @property
    def bytes_per_weight(self) -> float:
        """Bytes per weight of the block matrices (the bulk of any large model)."""
        return self.matrix_bits / 8


_GGML = "ggml-org/llama.cpp ggml-common.h block layouts (serving-facts §5d)"

WEIGHT_FORMATS: dict[str, WeightFormat] = {
    f.name: f
    for f in [
        WeightFormat("fp32", 32, 32, 32, 32, 4, "IEEE float32 everywhere."),
        WeightFormat("fp16", 16, 16, 16, 16, 2, "IEEE float16 everywhere (a PyTorch/HF checkpoint)."),
        WeightFormat("bf16", 16, 16, 16, 16, 2, "bfloat16 everywhere (a PyTorch/HF checkpoint)."),
        WeightFormat(
            "f16", 16, 16, 16, 32, 2,
            "GGUF F16: matrices in float16, norm vectors kept in float32 (the 16.0005 bpw of "
            "Llama-3.1-8B in llama.cpp tools/quantize/README.md).",
        ),
        WeightFormat(
            "int8", 8, 8, 8, 8, 2,
            "Idealised 1 byte per parameter everywhere (chapter 01's table); real int8 schemes add "
            "a per-row scale, which is negligible.",
        ),
        WeightFormat(
            "int4", 4, 4, 4, 4, 2,
            "Idealised half a byte per parameter everywhere (chapter 01's table).",
        ),
        WeightFormat(
            "q8_0", 8.5, 8.5, 8.5, 32, 2,
            f"llama.cpp Q8_0: blocks of 32 int8 weights plus one fp16 scale = 34 bytes per 32 "
            f"weights = 8.5 bits; norms stay float32. Source: {_GGML}.",
        ),
        WeightFormat(
            "q4_0", 4.5, 4.5, 6.5625, 32, 2,
            f"llama.cpp Q4_0: blocks of 32 4-bit weights plus one fp16 scale = 18 bytes per 32 "
            f"weights = 4.5 bits. llama.cpp keeps the output head in Q6_K (6.5625 bits, PR #1684), "
            f"norms in float32. Source: {_GGML}.",
        ),
        WeightFormat(
            "q4_k_m", 4.8944, 4.8944, 4.8944, 4.8944, 2,
            "llama.cpp Q4_K_M: a mix of Q4_K and Q6_K tensors (and float32 norms); 4.8944 bits per "
            "weight is the file-wide average of Llama-3.1-8B (tools/quantize/README.md), charged "
            "here to every tensor.",
        ),
        WeightFormat(
            "gptq-4bit-g128", 4 + (16 + 4) / 128, 16, 16, 16, 2,
            "GPTQ/AWQ-style 4-bit with group size 128: per group of 128 input weights of each "
            "output column one fp16 scale (16 bits) and one packed 4-bit zero point, so "
            "4 + 20/128 = 4.15625 bits per weight inside the blocks (serving-facts §5e). The "
            "act-order index (g_idx, one int32 per input feature) is not counted. Embeddings, "
            "output head and norms stay fp16, as AutoGPTQ/AutoAWQ leave them.",
        ),
    ]
}

_ALIASES = {
    "float32": "fp32",
    "f32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "gptq": "gptq-4bit-g128",
    "awq": "gptq-4bit-g128",
    "gptq_4bit_g128": "gptq-4bit-g128",
    "4bit": "int4",
    "4-bit": "int4",
}


def get_weight_format(fmt: str | WeightFormat) -> WeightFormat:
    """Look up a format by name (case-insensitive; a few aliases such as ``"float16"`` work)."""
    if isinstance(fmt, WeightFormat):
        return fmt
    return lookup_name(WEIGHT_FORMATS, fmt, "weight format", _ALIASES, example="q4_0")
