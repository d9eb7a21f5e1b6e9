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
``scaled_dot_product_attention``. ``KVCache`` (``llmlab.kv_cache``) keeps the keys and values of past
tokens so that ``generate`` (``llmlab.generation``) computes only the new token at each step.

To convert a Hugging Face GPT-2, Llama, Qwen3, Mixtral or Qwen3-MoE model into this one, see
``from_hf`` (``llmlab.convert_hf``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from llmlab.arguments import check_int
from llmlab.ffn import MLP, SwiGLU
from llmlab.generation import generate
from llmlab.kv_cache import KVCache
from llmlab.model_config import ModelConfig
from llmlab.moe import SparseMoE


# ----------------------------------------------------------------------------------------------
# Normalisation
# ----------------------------------------------------------------------------------------------


class LayerNorm(nn.Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last dimension (population variance)."""

    def __init__(self, dim: int, eps: float = 1e-5, bias: bool = True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


class RMSNorm(nn.Module):
    """``x / sqrt(mean(x^2) + eps) * weight``: LayerNorm without the mean and without a bias."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32 and hasattr(F, "rms_norm"):  # torch >= 2.4: the same formula, one call
            return F.rms_norm(x, self.weight.shape, self.weight, self.eps)
        # Squares overflow/underflow easily in half precision: compute in float32 (as Llama does).
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def _make_norm(config: ModelConfig) -> nn.Module:
    if config.norm == "rmsnorm":
        return RMSNorm(config.d_model, config.norm_eps)
    return LayerNorm(config.d_model, config.norm_eps, bias=config.bias)


# ----------------------------------------------------------------------------------------------
# Positions: learned table, fixed sinusoidal table, or rotary (RoPE) applied inside attention
# ----------------------------------------------------------------------------------------------


class LearnedPositions(nn.Module):
    """One trainable vector per position (GPT-2). The model cannot go past ``max_seq_len``."""

    def __init__(self, max_seq_len: int, d_model: int):
        super().__init__()
        self.table = nn.Embedding(max_seq_len, d_model)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return self.table(positions)


def sinusoidal_positions(n_positions: int, dim: int, base: float = 10000.0) -> torch.Tensor:
    """The fixed table of the original Transformer, shape ``[n_positions, dim]`` (float32).

    ``PE[pos, 2i] = sin(pos / base^(2i/dim))`` and ``PE[pos, 2i+1] = cos(pos / base^(2i/dim))``.
    """
    check_int("n_positions", n_positions)
    check_int("dim", dim)
    if dim % 2 != 0:
        raise ValueError(f"dim must be even (sin/cos pairs), got {dim}")
    pos = torch.arange(n_positions, dtype=torch.float32)[:, None]  # [n, 1]
    two_i = torch.arange(0, dim, 2, dtype=torch.float32)[None, :]  # [1, dim/2]
    angles = pos / (base ** (two_i / dim))  # low dims turn fast, high dims slowly
    table = torch.empty(n_positions, dim)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table


class SinusoidalPositions(nn.Module):
    """Adds the fixed sinusoidal table (nothing to learn, so it is not saved in the state_dict)."""

    def __init__(self, max_seq_len: int, d_model: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_positions(max_seq_len, d_model), persistent=False)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return self.table[positions]


class RotaryEmbedding(nn.Module):
    """RoPE: rotate each (q, k) pair of dimensions by an angle ``position * inv_freq[i]``.

    Because a rotation by angle a followed by the dot product with a vector rotated by b only
    depends on ``a - b``, attention scores depend on the *relative* distance between tokens.
    Returns ``cos`` and ``sin`` of shape ``[seq, head_dim]`` for the given positions.

    With ``max_positions`` the table of every position below it is computed once (on first use,
    per device) and then only looked up: generation calls this at every step.
    """

    def __init__(self, head_dim: int, theta: float = 10000.0, max_positions: int | None = None):
        super().__init__()
        self.head_dim = head_dim
        self.theta = float(theta)
        self.max_positions = max_positions
        self._table: tuple[torch.Tensor, torch.Tensor] | None = None  # not a buffer: stays float32

    def _angles(self, positions: torch.Tensor) -> torch.Tensor:
        # Computed in float32: cheap, and safe if the model is cast to half precision.
        inv_freq = 1.0 / (
            self.theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32, device=positions.device) / self.head_dim)
        )
        angles = positions.float()[:, None] * inv_freq[None, :]  # [seq, head_dim/2]
        # Dimension i is paired with i + head_dim/2 ("rotate half"), the layout used by HF Llama.
        return torch.cat((angles, angles), dim=-1)  # [seq, head_dim]

    def forward(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.max_positions is None:
            angles = self._angles(positions)
            return angles.cos(), angles.sin()
        if self._table is None or self._table[0].device != positions.device:
            angles = self._angles(torch.arange(self.max_positions, device=positions.device))
            self._table = (angles.cos(), angles.sin())
        cos, sin = self._table
        return cos[positions], sin[positions]


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x1, x2] -> [-x2, x1]`` on the two halves of the last dimension."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` (``[batch, heads, seq, head_dim]``): the 2-D rotation of each pair (x1_i, x2_i)."""
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return x * cos + rotate_half(x) * sin


# ----------------------------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------------------------


def causal_mask(q_len: int, k_len: int, device=None) -> torch.Tensor:
    """Boolean ``[q_len, k_len]``, True where query i may look at key j.

    The queries are the *last* ``q_len`` of the ``k_len`` positions (the earlier ones come from the
    KV cache), so query i sits at position ``k_len - q_len + i`` and may see keys ``j <= that``.
    """
    return torch.ones(q_len, k_len, dtype=torch.bool, device=device).tril(diagonal=k_len - q_len)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """``[batch, n_kv_heads, t, d] -> [batch, n_kv_heads * n_rep, t, d]`` for grouped-query attention.

    Each K/V head is repeated ``n_rep`` times in a row, so query head h uses K/V head
    ``h // n_rep`` (the Llama convention).
    """
    if n_rep == 1:
        return x
    return torch.repeat_interleave(x, n_rep, dim=1)


# torch >= 2.5 lets scaled_dot_product_attention share K/V heads between query heads (GQA) itself.
_SDPA_HAS_GQA = "enable_gqa" in (F.scaled_dot_product_attention.__doc__ or "")


def grouped_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, **options) -> torch.Tensor:
    """``F.scaled_dot_product_attention`` when ``k`` and ``v`` have fewer heads than ``q`` (GQA/MQA).

    ``q`` is ``[..., n_heads, q_len, d]``, ``k`` and ``v`` ``[..., n_kv_heads, k_len, d]``. The
    kernel shares each K/V head among its group of query heads (torch >= 2.5) instead of copying it
    ``n_heads / n_kv_heads`` times with ``repeat_kv``.
    """
    n_rep = q.shape[-3] // k.shape[-3]
    if n_rep > 1:
        if _SDPA_HAS_GQA:
            options["enable_gqa"] = True
        else:
            k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
    return F.scaled_dot_product_attention(q, k, v, **options)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with grouped K/V heads (MHA, GQA and MQA)."""

    def __init__(self, config: ModelConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx  # where this layer's K/V live in the cache
        self.n_heads = config.n_heads
        self.n_kv_heads = config.n_kv_heads
        self.head_dim = config.head_dim
        self.dropout = config.dropout
        self.q_proj = nn.Linear(config.d_model, config.n_heads * config.head_dim, bias=config.bias)
        self.k_proj = nn.Linear(config.d_model, config.n_kv_heads * config.head_dim, bias=config.bias)
        self.v_proj = nn.Linear(config.d_model, config.n_kv_heads * config.head_dim, bias=config.bias)
        self.o_proj = nn.Linear(config.n_heads * config.head_dim, config.d_model, bias=config.bias)
        # Qwen3: normalise each head's q and k (one gain vector of head_dim each) to tame the scores.
        self.q_norm = RMSNorm(config.head_dim, config.norm_eps) if config.qk_norm else None
        self.k_norm = RMSNorm(config.head_dim, config.norm_eps) if config.qk_norm else None

    def forward(
        self,
        x: torch.Tensor,
        rope: tuple[torch.Tensor, torch.Tensor] | None = None,
        cache: KVCache | None = None,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        batch, seq, _ = x.shape
        prepared = getattr(cache, "decode_weights", None)
        qkv = prepared.qkv[self.layer_idx] if prepared is not None else None
        if qkv is not None:  # generate() stacked W_Q, W_K and W_V: one matrix product for steps 1 and 2
            q, k, v = self._project_stacked(x, qkv, rope)
        else:
            # 1. Project, then split the last dimension into heads: [batch, heads, seq, head_dim].
            q = self.q_proj(x).view(batch, seq, self.n_heads, self.head_dim).transpose(1, 2)
            k = self.k_proj(x).view(batch, seq, self.n_kv_heads, self.head_dim).transpose(1, 2)
            v = self.v_proj(x).view(batch, seq, self.n_kv_heads, self.head_dim).transpose(1, 2)
            if self.q_norm is not None:  # Qwen3: RMSNorm of each head's q and k before RoPE
                q, k = self.q_norm(q), self.k_norm(k)
            # 2. RoPE rotates q and k (never v): positions enter only through the q.k scores.
            if rope is not None:
                cos, sin = rope
                q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        # 3. The cache stores k and v per K/V head (before repeating them): that is what GQA saves.
        #    A cache of many sequences (llmlab.serve) stores them and attends over each sequence's own keys.
        if cache is not None and hasattr(cache, "attend"):
            out, weights = cache.attend(self.layer_idx, q, k, v), None
        else:
            if cache is not None:
                k, v = cache.update(self.layer_idx, k, v)
            if need_weights:
                n_rep = self.n_heads // self.n_kv_heads
                out, weights = self._attend_readable(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep))
            else:
                out, weights = self._attend_fast(q, k, v), None
        # 4. Merge heads back to [batch, seq, n_heads * head_dim] and mix them with W_O.
        out = out.transpose(1, 2).reshape(batch, seq, self.n_heads * self.head_dim)
        return self.o_proj(out), weights

    def _project_stacked(self, x, weight_bias, rope) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Steps 1 and 2 with W_Q, W_K and W_V stacked into one matrix (``DecodeWeights``): one matrix
        product instead of three, and one RoPE rotation for q and k together (equal up to float rounding)."""
        batch, seq, _ = x.shape
        heads = self.n_heads + 2 * self.n_kv_heads
        qkv = F.linear(x, *weight_bias).view(batch, seq, heads, self.head_dim).transpose(1, 2)
        qk, v = qkv.split([self.n_heads + self.n_kv_heads, self.n_kv_heads], dim=1)
        if self.q_norm is not None:  # Qwen3: q and k have their own per-head norms before RoPE
            q, k = qk.split([self.n_heads, self.n_kv_heads], dim=1)
            qk = torch.cat([self.q_norm(q), self.k_norm(k)], dim=1)
        if rope is not None:
            qk = apply_rope(qk, *rope)
        q, k = qk.split([self.n_heads, self.n_kv_heads], dim=1)
        return q, k, v

    def _attend_readable(self, q, k, v) -> tuple[torch.Tensor, torch.Tensor]:
        """softmax(q k^T / sqrt(head_dim) + causal mask) @ v, keeping the weights to look at."""
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # [batch, heads, q, k]
        mask = causal_mask(q.shape[2], k.shape[2], device=q.device)
        scores = scores.masked_fill(~mask, float("-inf"))  # exp(-inf) = 0: no looking at the future
        weights = torch.softmax(scores, dim=-1)  # each row sums to 1
        weights = F.dropout(weights, p=self.dropout, training=self.training)
        return weights @ v, weights

    def _attend_fast(self, q, k, v) -> torch.Tensor:
        """The same computation in one fused PyTorch kernel (no attention matrix is kept)."""
        q_len, k_len = q.shape[2], k.shape[2]
        options = dict(dropout_p=self.dropout if self.training else 0.0, scale=1.0 / math.sqrt(self.head_dim))
        if q_len == 1:
            # One new token sees every cached key: nothing to mask.
            return grouped_sdpa(q, k, v, **options)
        if q_len == k_len:
            return grouped_sdpa(q, k, v, is_causal=True, **options)
        # Several new tokens after a cache: is_causal would align the mask top-left, which is wrong here.
        mask = causal_mask(q_len, k_len, device=q.device)
        return grouped_sdpa(q, k, v, attn_mask=mask, **options)


# ----------------------------------------------------------------------------------------------
# Block and model
# ----------------------------------------------------------------------------------------------


class Block(nn.Module):
    """Pre-norm block: normalise, transform, add back to the residual stream (twice)."""

    def __init__(self, config: ModelConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.attn_norm = _make_norm(config)
        self.attn = CausalSelfAttention(config, layer_idx)
        self.mlp_norm = _make_norm(config)
        if config.is_moe_layer(layer_idx):
            self.mlp = SparseMoE.from_config(config)  # router + experts, k of them per token
        else:
            self.mlp = SwiGLU(config) if config.mlp == "swiglu" else MLP(config)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x, rope=None, cache=None, need_weights=False):
        attn_out, weights = self.attn(self.attn_norm(x), rope=rope, cache=cache, need_weights=need_weights)
        x = x + self.resid_dropout(attn_out)  # attention mixes information across positions
        prepared = getattr(cache, "decode_weights", None)  # generate()'s rearranged W_up (and W_gate)
        mlp_in = prepared.mlp_in[self.layer_idx] if prepared is not None else None
        h = self.mlp_norm(x)
        x = x + self.resid_dropout(self.mlp(h) if mlp_in is None else self.mlp(h, mlp_in))  # each position alone
        return x, weights


class Transformer(nn.Module):
    """Decoder-only language model: ``model(input_ids)`` returns logits ``[batch, seq, vocab]``."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        if isinstance(config, dict):
            config = ModelConfig.from_dict(config)
        if not isinstance(config, ModelConfig):
            raise TypeError(f"config must be a ModelConfig (or its dict), got {type(config).__name__}")
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.d_model)
        # Absolute positions are added to the embeddings; RoPE acts inside attention instead.
        self.pos_emb: nn.Module | None = None
        self.rope: RotaryEmbedding | None = None
        if config.pos_encoding == "learned":
            self.pos_emb = LearnedPositions(config.max_seq_len, config.d_model)
        elif config.pos_encoding == "sinusoidal":
            self.pos_emb = SinusoidalPositions(config.max_seq_len, config.d_model)
        else:
            self.rope = RotaryEmbedding(config.head_dim, config.rope_theta, max_positions=config.max_seq_len)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config, i) for i in range(config.n_layers))
        self.final_norm = _make_norm(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.tie_embeddings:
            # Same matrix to read tokens in and to score them out: saves vocab_size * d_model parameters.
            self.lm_head.weight = self.tok_emb.weight
        self._init_weights()

    @classmethod
    def from_config(cls, config: ModelConfig | dict) -> Transformer:
        return cls(config)

    def _init_weights(self) -> None:
        # GPT-2 initialisation: N(0, 0.02), zero biases; the projections that write into the
        # residual stream get std / sqrt(2 * n_layers) so the stream does not grow with depth.
        std = 0.02
        for name, module in self.named_modules():
            if isinstance(module, nn.Linear):
                scale = 1.0 / math.sqrt(2 * self.config.n_layers) if name.endswith(("o_proj", "down")) else 1.0
                nn.init.normal_(module.weight, mean=0.0, std=std * scale)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=std)

    def forward(
        self,
        input_ids: torch.Tensor,
        *,
        cache: KVCache | None = None,
        return_attention: bool = False,
        last_only: bool = False,
    ):
        """Logits ``[batch, seq, vocab]`` for ``input_ids`` ``[batch, seq]``.

        With ``cache``, ``input_ids`` are the tokens that come *after* the cached ones; their keys
        and values are appended to the cache. With ``return_attention=True`` returns
        ``(logits, attentions)``, one ``[batch, heads, seq, cached + seq]`` tensor per layer.
        ``last_only=True`` returns the logits of the last position only (``[batch, 1, vocab]``): all
        that generation needs, and the LM head is the widest matrix of a small model.
        """
        if not isinstance(input_ids, torch.Tensor):
            raise TypeError(f"input_ids must be a torch.Tensor, got {type(input_ids).__name__}")
        if input_ids.dim() != 2 or input_ids.shape[1] == 0:
            raise ValueError(
                f"input_ids must have shape [batch, seq] with seq >= 1, got {tuple(input_ids.shape)} "
                "(use input_ids.unsqueeze(0) for a single sequence)"
            )
        if input_ids.dtype.is_floating_point or input_ids.dtype == torch.bool:
            raise TypeError(f"input_ids must hold integer token ids, got dtype {input_ids.dtype}")
        lo, hi = int(input_ids.min()), int(input_ids.max())
        if lo < 0 or hi >= self.config.vocab_size:
            raise IndexError(f"token ids must be in [0, {self.config.vocab_size}), got values in [{lo}, {hi}]")
        if cache is not None and cache.n_layers != self.config.n_layers:
            raise ValueError(f"cache has {cache.n_layers} layers, the model has {self.config.n_layers}")

        batch, seq = input_ids.shape
        positions = getattr(cache, "positions", None)  # a batch of sequences (llmlab.serve) brings its own
        if positions is None:
            start = cache.seq_len if cache is not None else 0  # position of the first new token
            if start + seq > self.config.max_seq_len:
                raise ValueError(
                    f"sequence of {start + seq} tokens ({start} cached + {seq} new) exceeds max_seq_len={self.config.max_seq_len}"
                )
            positions = torch.arange(start, start + seq, device=input_ids.device)

        x = self.tok_emb(input_ids)  # [batch, seq, d_model]
        if self.pos_emb is not None:
            x = x + self.pos_emb(positions)  # broadcast over the batch
        rope = self.rope(positions) if self.rope is not None else None
        x = self.drop(x)

        attentions = []
        for block in self.blocks:
            x, weights = block(x, rope=rope, cache=cache, need_weights=return_attention)
            attentions.append(weights)
        if last_only:
            x = x[:, -1:]  # [batch, 1, d_model]
        x = self.final_norm(x)
        prepared = getattr(cache, "decode_weights", None)
        if prepared is not None and prepared.lm_head is not None:
            logits = F.linear(x, prepared.lm_head)  # the same matrix, laid out by generate()
        else:
            logits = self.lm_head(x)
        return (logits, attentions) if return_attention else logits

    def new_cache(self) -> KVCache:
        """An empty ``KVCache`` with one slot per layer of this model."""
        return KVCache(self.config.n_layers)

    def generate(self, input_ids: torch.Tensor, max_new_tokens: int, **kwargs) -> torch.Tensor:
        """Same as ``llmlab.model.generate(self, input_ids, max_new_tokens, **kwargs)``."""
        return generate(self, input_ids, max_new_tokens, **kwargs)


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of parameters; a tied matrix (embedding = LM head) counts once."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
