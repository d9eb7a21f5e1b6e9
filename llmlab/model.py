"""A decoder-only transformer (GPT-2 or Llama style) in PyTorch, written to be read top to bottom.

The pieces, in the order the data flows through them::

    token ids -> token embedding (+ learned or sinusoidal positions)
              -> n_layers x Block:   x = x + Attention(Norm(x))        (pre-norm)
                                     x = x + MLP(Norm(x))
              -> final Norm -> LM head -> logits [batch, seq, vocab]

One ``ModelConfig`` covers both families:

- GPT-2 style: learned positions, LayerNorm, GELU MLP, biases, tied embeddings.
- Llama style: RoPE applied to q and k, RMSNorm, SwiGLU MLP, no biases, grouped-query attention.
- Mixture of experts (Mixtral, Qwen3-MoE): ``n_experts > 0`` replaces the MLP of each layer by a
  ``llmlab.moe.SparseMoE`` (a router and SwiGLU experts, ``n_experts_per_token`` of them per token).

Attention has two paths that give the same numbers: a readable one that builds the attention
matrix explicitly (used when you ask for the weights) and a fast one through PyTorch's
``scaled_dot_product_attention``. ``KVCache`` keeps the keys and values of past tokens so that
``generate`` computes only the new token at each step.

To convert a Hugging Face GPT-2, Llama, Qwen3, Mixtral or Qwen3-MoE model into this one, see
``from_hf`` (``llmlab.convert_hf``).

The code is in one module per idea; this one gathers them, so ``from llmlab.model import ...`` keeps working:
``model_config`` (``ModelConfig``), ``transformer`` (norms, positions, attention, blocks, ``Transformer``),
``ffn`` (``MLP``, ``SwiGLU``), ``kv_cache`` (``KVCache``, ``StaticKVCache``), ``generation`` (``generate``,
``DecodeWeights``) and ``convert_hf`` (``from_hf``, ``to_hf``).
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
