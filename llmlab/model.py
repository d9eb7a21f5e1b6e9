"""The transformer of the course, in one import: ``from llmlab.model import Transformer, generate, ...``.

A decoder-only transformer (GPT-2 or Llama style, optionally with mixture-of-experts layers) in PyTorch. The
code is in one module per idea, each read top to bottom; this module gathers their names:

- ``model_config``: ``ModelConfig``, every size and design choice, checked when it is made;
- ``transformer``: norms, positions (learned, sinusoidal, RoPE), attention, ``Block`` and ``Transformer``
  (its docstring draws the data flow);
- ``ffn``: the feed-forward layers, GPT-2's GELU ``MLP`` and Llama's ``SwiGLU``;
- ``kv_cache``: ``KVCache`` and ``StaticKVCache``;
- ``generation``: ``generate``, the decoding loop, and ``DecodeWeights``;
- ``convert_hf``: ``from_hf`` / ``to_hf``, to and from Hugging Face models.
"""

from llmlab.convert_hf import from_hf, to_hf
from llmlab.ffn import MLP, SwiGLU
from llmlab.generation import DecodeWeights, gemv_layout, generate
from llmlab.kv_cache import KVCache, StaticKVCache
from llmlab.model_config import MLPS, NORMS, POS_ENCODINGS, ModelConfig
from llmlab.transformer import (
    Block,
    CausalSelfAttention,
    LayerNorm,
    LearnedPositions,
    RMSNorm,
    RotaryEmbedding,
    SinusoidalPositions,
    Transformer,
    apply_rope,
    causal_mask,
    count_parameters,
    grouped_sdpa,
    repeat_kv,
    rotate_half,
    sinusoidal_positions,
)

__all__ = [
    "ModelConfig",
    "LayerNorm",
    "RMSNorm",
    "LearnedPositions",
    "SinusoidalPositions",
    "sinusoidal_positions",
    "RotaryEmbedding",
    "rotate_half",
    "apply_rope",
    "causal_mask",
    "repeat_kv",
    "grouped_sdpa",
    "KVCache",
    "StaticKVCache",
    "CausalSelfAttention",
    "MLP",
    "SwiGLU",
    "Block",
    "Transformer",
    "generate",
    "DecodeWeights",
    "gemv_layout",
    "count_parameters",
    "from_hf",
    "to_hf",
]
