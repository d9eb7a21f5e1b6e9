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
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

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

POS_ENCODINGS = ("learned", "sinusoidal", "rope")
_MOE_FIELDS = ("n_experts", "n_experts_per_token", "n_shared_experts", "moe_d_ff", "moe_normalize", "dense_layers")
NORMS = ("layernorm", "rmsnorm")
# "gelu" is GPT-2's tanh approximation (HF calls it "gelu_new"); "gelu_exact" uses erf.
MLPS = ("gelu", "gelu_exact", "swiglu")


# ----------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------


def _check_int(name: str, value, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _check_float(name: str, value, *, positive: bool = True) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} ({value!r})")
    if not math.isfinite(value) or (positive and value <= 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def _check_choice(name: str, value, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


@dataclass
class ModelConfig:
    """Every size and design choice of a ``Transformer``.

    ``n_kv_heads``, ``d_ff`` and ``head_dim`` may be left as ``None``; they are then filled in
    when the config is created (``n_heads``; ``4 * d_model`` for GELU or about ``8/3 * d_model``
    for SwiGLU, which keeps the same parameter count; ``d_model // n_heads``). After that they are
    plain ints, so ``to_dict`` is explicit. Prefer the presets with overrides
    (``ModelConfig.llama_style(d_model=256)``) to ``dataclasses.replace``, which keeps the
    already filled-in values.
    """

    vocab_size: int = 256
    n_layers: int = 4
    d_model: int = 128
    n_heads: int = 4
    n_kv_heads: int | None = None  # 1 = MQA, n_heads = MHA, in between = GQA
    d_ff: int | None = None  # hidden width of the MLP
    max_seq_len: int = 256
    pos_encoding: str = "learned"  # "learned" | "sinusoidal" | "rope"
    norm: str = "layernorm"  # "layernorm" | "rmsnorm"
    mlp: str = "gelu"  # "gelu" (tanh approximation) | "gelu_exact" | "swiglu"
    bias: bool = True  # biases in every Linear and in LayerNorm
    tie_embeddings: bool = True  # LM head shares the token embedding matrix
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    head_dim: int | None = None
    dropout: float = 0.0
    qk_norm: bool = False  # RMSNorm on each head's q and k before RoPE (Qwen3)
    # Mixture of experts (llmlab.moe): n_experts = 0 is the dense MLP of every layer.
    n_experts: int = 0
    n_experts_per_token: int = 2  # k: experts each token runs through
    n_shared_experts: int = 0  # always-on experts (DeepSeek), width n_shared_experts * moe_d_ff
    moe_d_ff: int | None = None  # width of each expert (default: d_ff)
    moe_normalize: bool = True  # renormalise the top-k router probabilities to sum to 1
    dense_layers: list[int] | None = None  # layers that keep the dense MLP (e.g. [0, 1, 2])

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_layers", "d_model", "n_heads", "max_seq_len"):
            _check_int(name, getattr(self, name))
        _check_choice("pos_encoding", self.pos_encoding, POS_ENCODINGS)
        _check_choice("norm", self.norm, NORMS)
        _check_choice("mlp", self.mlp, MLPS)
        for name in ("bias", "tie_embeddings", "qk_norm", "moe_normalize"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        _check_float("norm_eps", self.norm_eps)
        _check_float("rope_theta", self.rope_theta)
        _check_float("dropout", self.dropout, positive=False)
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")

        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        _check_int("n_kv_heads", self.n_kv_heads)
        if self.n_kv_heads > self.n_heads or self.n_heads % self.n_kv_heads != 0:
            raise ValueError(
                f"n_kv_heads must divide n_heads (1 = MQA, n_heads = MHA), "
                f"got n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}"
            )

        if self.head_dim is None:
            if self.d_model % self.n_heads != 0:
                raise ValueError(
                    f"d_model must be divisible by n_heads when head_dim is not given, "
                    f"got d_model={self.d_model}, n_heads={self.n_heads}"
                )
            self.head_dim = self.d_model // self.n_heads
        _check_int("head_dim", self.head_dim)
        if self.pos_encoding == "rope" and self.head_dim % 2 != 0:
            raise ValueError(f"RoPE rotates pairs of dimensions: head_dim must be even, got {self.head_dim}")
        if self.pos_encoding == "sinusoidal" and self.d_model % 2 != 0:
            raise ValueError(f"sinusoidal positions need an even d_model (sin/cos pairs), got {self.d_model}")

        if self.d_ff is None:
            if self.mlp == "swiglu":
                # Three matrices instead of two: 2/3 of 4*d_model keeps the parameter count of a
                # GELU MLP (the Llama recipe), rounded up to a multiple of 8.
                self.d_ff = -(-(8 * self.d_model // 3) // 8) * 8
            else:
                self.d_ff = 4 * self.d_model
        _check_int("d_ff", self.d_ff)
        self._check_moe()

    def _check_moe(self) -> None:
        _check_int("n_experts", self.n_experts, minimum=0)
        _check_int("n_shared_experts", self.n_shared_experts, minimum=0)
        _check_int("n_experts_per_token", self.n_experts_per_token)
        self.dense_layers = sorted(set(self.dense_layers or []))
        if not self.n_experts:
            if self.n_shared_experts or self.dense_layers or self.moe_d_ff is not None:
                raise ValueError("n_shared_experts, dense_layers and moe_d_ff need n_experts > 0")
            return
        if self.mlp != "swiglu":
            raise ValueError(f"MoE experts are SwiGLU MLPs: n_experts > 0 needs mlp='swiglu', got {self.mlp!r}")
        if self.n_experts_per_token > self.n_experts:
            raise ValueError(
                f"n_experts_per_token ({self.n_experts_per_token}) cannot exceed n_experts ({self.n_experts})"
            )
        if self.moe_d_ff is None:
            self.moe_d_ff = self.d_ff
        _check_int("moe_d_ff", self.moe_d_ff)
        bad = [i for i in self.dense_layers if not isinstance(i, int) or not 0 <= i < self.n_layers]
        if bad:
            raise ValueError(f"dense_layers must be layer indices in [0, {self.n_layers}), got {bad}")

    def is_moe_layer(self, layer_idx: int) -> bool:
        """Whether layer ``layer_idx`` has a ``SparseMoE`` instead of the dense MLP."""
        return self.n_experts > 0 and layer_idx not in self.dense_layers

    @classmethod
    def gpt2_style(cls, **overrides) -> ModelConfig:
        """GPT-2 recipe: learned positions, LayerNorm, tanh-GELU MLP, biases, tied embeddings."""
        settings = dict(
            pos_encoding="learned", norm="layernorm", mlp="gelu", bias=True, tie_embeddings=True, norm_eps=1e-5
        )
        settings.update(overrides)
        return cls(**settings)

    @classmethod
    def llama_style(cls, **overrides) -> ModelConfig:
        """Llama recipe: RoPE, RMSNorm, SwiGLU MLP, no biases, separate LM head.

        Pass ``n_kv_heads`` smaller than ``n_heads`` for grouped-query attention (Llama 2 70B, Llama 3),
        ``n_experts=8, n_experts_per_token=2`` for a Mixtral-style mixture of experts, and add
        ``qk_norm=True, moe_d_ff=...`` for Qwen3-MoE.
        """
        settings = dict(
            pos_encoding="rope",
            norm="rmsnorm",
            mlp="swiglu",
            bias=False,
            tie_embeddings=False,
            norm_eps=1e-6,
            rope_theta=10000.0,
        )
        settings.update(overrides)
        return cls(**settings)

    def to_dict(self) -> dict:
        """Plain dict of JSON-safe values (ints, floats, strings, bools, lists).

        The q/k-norm and MoE fields are left out while they keep their defaults, so a dense model's
        dict (and the shipped model cards) look the same as before those options existed.
        """
        data = dataclasses.asdict(self)
        if not self.qk_norm:
            del data["qk_norm"]
        if not self.n_experts:
            for key in _MOE_FIELDS:
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> ModelConfig:
        """Inverse of ``to_dict``. Unknown keys raise ``ValueError`` (a typo must not pass silently)."""
        if not isinstance(data, dict):
            raise TypeError(f"data must be a dict, got {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown ModelConfig keys: {unknown}; expected a subset of {sorted(known)}")
        return cls(**data)


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
    _check_int("n_positions", n_positions)
    _check_int("dim", dim)
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


class KVCache:
    """Keys and values of the tokens seen so far, one ``[batch, n_kv_heads, t, head_dim]`` pair per layer.

    With a causal mask, the K and V of a past token never change when new tokens arrive, so they
    are computed once and appended here; each decoding step then only computes the new token.
    This one grows with ``torch.cat`` (simple; every step copies the whole cache): ``StaticKVCache``
    allocates its buffers once, and ``llmlab.serve`` keeps the K/V of many sequences in blocks.

    What the model needs from a cache: ``n_layers``, ``seq_len`` (the position of the next token)
    and ``update(layer, k, v) -> (all keys, all values)``. A cache that serves a batch of
    independent sequences (``llmlab.serve.paged_attention.PagedBatch``) instead provides
    ``positions`` (one position per new token) and ``attend(layer, q, k, v)``, which stores k, v and
    computes the attention itself.
    """

    def __init__(self, n_layers: int):
        _check_int("n_layers", n_layers)
        self.keys: list[torch.Tensor | None] = [None] * n_layers
        self.values: list[torch.Tensor | None] = [None] * n_layers

    @property
    def n_layers(self) -> int:
        return len(self.keys)

    @property
    def seq_len(self) -> int:
        """Number of tokens cached (the position of the next token)."""
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def __len__(self) -> int:
        return self.seq_len

    @property
    def nbytes(self) -> int:
        """Memory held, in bytes: ``2 * n_layers * batch * n_kv_heads * head_dim * bytes_per_value * tokens``."""
        return sum(t.numel() * t.element_size() for t in self.keys + self.values if t is not None)

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new ``k``, ``v`` of ``layer`` and return all keys and values of that layer."""
        if self.keys[layer] is not None:
            k = torch.cat((self.keys[layer], k), dim=2)
            v = torch.cat((self.values[layer], v), dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v

    def crop(self, seq_len: int) -> None:
        """Forget every token after the first ``seq_len`` (e.g. rejected draft tokens)."""
        _check_int("seq_len", seq_len, minimum=0)
        for i in range(self.n_layers):
            if self.keys[i] is not None:
                self.keys[i] = self.keys[i][:, :, :seq_len]
                self.values[i] = self.values[i][:, :, :seq_len]

    def reset(self) -> None:
        self.keys = [None] * self.n_layers
        self.values = [None] * self.n_layers

    def __repr__(self) -> str:
        return f"KVCache(n_layers={self.n_layers}, seq_len={self.seq_len}, nbytes={self.nbytes})"


class StaticKVCache:
    """A ``KVCache`` whose buffers are allocated once, for ``max_len`` tokens (what ``generate`` uses).

    Appending writes the new keys and values into the next free positions, where ``KVCache``
    concatenates (a new tensor, and a copy of everything cached, at every step). Attention then reads
    ``keys[layer][:, :, :seq_len]``, a view. The price: ``max_len`` positions are reserved from the start,
    used or not (``nbytes`` counts them; ``used_nbytes`` counts the filled ones). ``llmlab.serve``
    avoids that waste with blocks allocated on demand.
    """

    def __init__(self, n_layers: int, batch: int, n_kv_heads: int, head_dim: int, max_len: int, *,
                 dtype: torch.dtype = torch.float32, device=None):
        for name, value in (("n_layers", n_layers), ("batch", batch), ("n_kv_heads", n_kv_heads),
                            ("head_dim", head_dim), ("max_len", max_len)):
            _check_int(name, value)
        shape = (batch, n_kv_heads, max_len, head_dim)
        self.keys = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(n_layers)]
        self.values = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(n_layers)]
        self.lengths = [0] * n_layers  # tokens filled per layer (layer 0 is written first)
        self.max_len = max_len
        self.decode_weights: DecodeWeights | None = None  # generate() puts the model's, rearranged, here

    @classmethod
    def for_model(cls, model: "Transformer", batch: int = 1, max_len: int | None = None) -> "StaticKVCache":
        """Buffers shaped for ``model`` (its dtype and device), ``max_len`` defaulting to its context."""
        config = model.config
        weight = model.tok_emb.weight
        return cls(config.n_layers, batch, config.n_kv_heads, config.head_dim, max_len or config.max_seq_len,
                   dtype=weight.dtype, device=weight.device)

    @property
    def n_layers(self) -> int:
        return len(self.keys)

    @property
    def seq_len(self) -> int:
        """Number of tokens cached (the position of the next token)."""
        return self.lengths[0]

    def __len__(self) -> int:
        return self.seq_len

    @property
    def nbytes(self) -> int:
        """Memory reserved, in bytes (all ``max_len`` positions)."""
        return sum(t.numel() * t.element_size() for t in self.keys + self.values)

    @property
    def used_nbytes(self) -> int:
        """Memory holding cached tokens, in bytes (what ``KVCache.nbytes`` would be)."""
        return self.nbytes * self.seq_len // self.max_len

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the new ``k``, ``v`` of ``layer`` after the cached ones; return views of all of them."""
        start = self.lengths[layer]
        end = start + k.shape[2]
        if end > self.max_len:
            raise ValueError(f"StaticKVCache holds {self.max_len} tokens; {start} cached + {k.shape[2]} new do not fit")
        self.keys[layer][:, :, start:end] = k
        self.values[layer][:, :, start:end] = v
        self.lengths[layer] = end
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]

    def crop(self, seq_len: int) -> None:
        """Forget every token after the first ``seq_len`` (the buffers stay allocated)."""
        _check_int("seq_len", seq_len, minimum=0)
        self.lengths = [min(n, seq_len) for n in self.lengths]

    def reset(self) -> None:
        self.lengths = [0] * self.n_layers

    def __repr__(self) -> str:
        return f"StaticKVCache(n_layers={self.n_layers}, seq_len={self.seq_len}, max_len={self.max_len}, nbytes={self.nbytes})"


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
# MLP
# ----------------------------------------------------------------------------------------------


class MLP(nn.Module):
    """GPT-2 MLP: widen to d_ff, GELU, project back. Works on each position independently."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.up = nn.Linear(config.d_model, config.d_ff, bias=config.bias)
        self.down = nn.Linear(config.d_ff, config.d_model, bias=config.bias)
        # "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2's approximation of x * Phi(x).
        self.approximate = "none" if config.mlp == "gelu_exact" else "tanh"

    def forward(self, x: torch.Tensor, up: tuple | None = None) -> torch.Tensor:
        """``up``: W_up and its bias as ``DecodeWeights`` lays them out (same values, faster for one token)."""
        h = self.up(x) if up is None else F.linear(x, *up)
        return self.down(F.gelu(h, approximate=self.approximate))


class SwiGLU(nn.Module):
    """Llama MLP: ``down(silu(gate(x)) * up(x))``; the gate decides how much of ``up(x)`` passes.

    ``SwiGLU(config)`` takes the sizes from a ``ModelConfig``; ``SwiGLU(d_model, d_ff, bias=...)``
    builds one of any size (the experts of ``llmlab.moe.SparseMoE``).
    """

    def __init__(self, config: ModelConfig | int, d_ff: int | None = None, bias: bool = False):
        super().__init__()
        if isinstance(config, ModelConfig):
            d_model, d_ff, bias = config.d_model, config.d_ff, config.bias
        else:
            d_model = config
        self.gate = nn.Linear(d_model, d_ff, bias=bias)
        self.up = nn.Linear(d_model, d_ff, bias=bias)
        self.down = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: torch.Tensor, gate_up: tuple | None = None) -> torch.Tensor:
        """``gate_up``: W_gate and W_up stacked into one matrix (``DecodeWeights``): one product for both."""
        if gate_up is None:
            gate, up = self.gate(x), self.up(x)
        else:
            gate, up = F.linear(x, *gate_up).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


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
            from llmlab.moe import SparseMoE  # lazy: llmlab.moe builds its experts from SwiGLU

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


# ----------------------------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------------------------

SamplerFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (logits, input_ids) -> next ids


def _greedy(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    return logits.argmax(dim=-1)  # ties go to the lowest token id


def _make_sampler(sampling_kwargs: dict) -> SamplerFn:
    try:
        from llmlab.sampling import Sampler as SamplingPolicy  # lazy: sampling.py builds on this module
    except ImportError as exc:
        raise ImportError(
            f"sampling options {sorted(sampling_kwargs)} need llmlab.sampling.Sampler, which could not be imported; "
            "pass sampler=... yourself or drop the options for greedy decoding"
        ) from exc
    return SamplingPolicy(**sampling_kwargs)


def _as_id_list(name: str, value) -> list[int]:
    values = [value] if isinstance(value, int) else value
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if not isinstance(values, Sequence) or not all(isinstance(t, int) and not isinstance(t, bool) for t in values):
        raise TypeError(f"{name} must be an int or a list of ints, got {value!r}")
    return list(values)


def gemv_layout(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` with the same shape and values, stored with its longer side contiguous in memory.

    For one new token ``F.linear`` is a matrix-vector product that reads every weight once, so its
    speed is how fast the weights stream from memory. MKL streams a wide ``[out, in]`` matrix
    (out > in) 2-3x faster when its columns are contiguous (``w.t().contiguous().t()``), and a tall
    one (W_O, W_down) faster as it is. Measured on the course machine (one thread, weights not in
    cache): stacked gate/up 1376x256 in about 35 us instead of 60-150 us; 256x688 in 21 us instead of 35.
    """
    if weight.shape[0] > weight.shape[1]:
        return weight.t().contiguous().t()
    return weight


def _stacked(linears: Sequence[nn.Module]) -> tuple[torch.Tensor, torch.Tensor | None] | None:
    """One ``(weight, bias)`` for several ``nn.Linear`` fed the same input (outputs side by side);
    None if one of them is not a plain ``nn.Linear`` (an adapter such as LoRA must run as it is)."""
    if not all(type(m) is nn.Linear for m in linears):
        return None
    weight = gemv_layout(torch.cat([m.weight for m in linears]))
    bias = torch.cat([m.bias for m in linears]) if linears[0].bias is not None else None
    return weight, bias


@dataclass
class DecodeWeights:
    """The model's input-side matrices rearranged for generation (same values), built by ``generate``.

    - ``qkv[layer]``: W_Q, W_K and W_V stacked into one matrix: one product instead of three.
    - ``mlp_in[layer]``: W_gate and W_up stacked (SwiGLU), or W_up alone (GELU MLP).
    - ``lm_head``: the LM head's matrix.

    Each in ``gemv_layout``. An entry is None where a layer is not a plain ``nn.Linear`` (LoRA, a
    quantized layer) or has no such matrix (a mixture of experts): that layer runs as it is.
    ``generate`` builds this at the start of each call, so it can never be stale, and passes it to
    the model through its ``StaticKVCache``.
    """

    qkv: list[tuple[torch.Tensor, torch.Tensor | None] | None]
    mlp_in: list[tuple[torch.Tensor, torch.Tensor | None] | None]
    lm_head: torch.Tensor | None

    @classmethod
    def for_model(cls, model: Transformer) -> DecodeWeights:
        qkv, mlp_in = [], []
        for block in model.blocks:
            attn, mlp = block.attn, block.mlp
            qkv.append(_stacked([attn.q_proj, attn.k_proj, attn.v_proj]))
            if type(mlp) is SwiGLU:
                mlp_in.append(_stacked([mlp.gate, mlp.up]))
            elif type(mlp) is MLP:
                mlp_in.append(_stacked([mlp.up]))
            else:  # e.g. llmlab.moe.SparseMoE: each token picks its own experts
                mlp_in.append(None)
        plain_head = type(model.lm_head) is nn.Linear
        return cls(qkv, mlp_in, gemv_layout(model.lm_head.weight) if plain_head else None)


def _generation_cache(model: Transformer, batch: int, max_len: int):
    """A ``StaticKVCache`` carrying ``DecodeWeights``, unless the model brings its own kind of cache
    by overriding ``new_cache`` (``llmlab.quant.use_quantized_kv_cache``): that one is used as it is."""
    if getattr(model.new_cache, "__func__", None) is not Transformer.new_cache:
        return model.new_cache()
    cache = StaticKVCache.for_model(model, batch, max_len=max_len)
    cache.decode_weights = DecodeWeights.for_model(model)
    return cache


def generate(
    model: Transformer,
    input_ids: torch.Tensor,
    max_new_tokens: int,
    *,
    use_cache: bool = True,
    sampler: SamplerFn | None = None,
    eos_token_id: int | Sequence[int] | None = None,
    stop_sequences: Sequence[Sequence[int]] | None = None,
    on_token: Callable[[torch.Tensor], None] | None = None,
    pad_token_id: int | None = None,
    **sampling_kwargs,
) -> torch.Tensor:
    """Append up to ``max_new_tokens`` tokens to ``input_ids`` (``[batch, t]`` or ``[t]``) and return the whole sequence.

    - ``sampler(logits [batch, vocab], input_ids [batch, t]) -> next ids [batch]`` chooses each token;
      ``input_ids`` is everything so far (prompt + generated). Without a sampler and without options
      the choice is greedy (argmax). Options such as ``temperature=0.8, top_k=50, top_p=0.9,
      do_sample=True, generator=g`` build ``llmlab.sampling.Sampler(**options)``.
    - ``eos_token_id`` (one id or several) and ``stop_sequences`` (lists of ids that the generated
      tail may end with) stop a row; the stop tokens are kept in the output. Rows that stopped
      while others continue are filled with ``pad_token_id`` (default: the first ``eos_token_id``, else 0).
    - ``on_token(next_ids)`` is called after each step with the ``[batch]`` tensor of new ids (streaming).
    - ``use_cache=False`` recomputes the whole sequence at every step: same tokens, more work.

    Call ``model.eval()`` first if the model has dropout.
    """
    # Inference mode: no autograd bookkeeping at all (faster than no_grad); the result is cloned
    # outside it, so it is an ordinary tensor that training code can use.
    with torch.inference_mode():
        out = _generate(model, input_ids, max_new_tokens, use_cache=use_cache, sampler=sampler,
                        eos_token_id=eos_token_id, stop_sequences=stop_sequences, on_token=on_token,
                        pad_token_id=pad_token_id, **sampling_kwargs)
    return out.clone()


def _generate(model, input_ids, max_new_tokens, *, use_cache, sampler, eos_token_id, stop_sequences, on_token,
              pad_token_id, **sampling_kwargs) -> torch.Tensor:
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be an llmlab Transformer (convert HF models with from_hf), got {type(model).__name__}")
    if not isinstance(input_ids, torch.Tensor):
        raise TypeError(f"input_ids must be a torch.Tensor, got {type(input_ids).__name__}")
    single = input_ids.dim() == 1
    ids = input_ids.unsqueeze(0) if single else input_ids
    if ids.dim() != 2 or ids.shape[1] == 0:
        raise ValueError(f"input_ids must have shape [batch, t] or [t] with t >= 1, got {tuple(input_ids.shape)}")
    if ids.dtype.is_floating_point or ids.dtype == torch.bool:
        raise TypeError(f"input_ids must hold integer token ids, got dtype {ids.dtype}")
    ids = ids.long()
    _check_int("max_new_tokens", max_new_tokens, minimum=0)
    max_len = model.config.max_seq_len
    if ids.shape[1] + max_new_tokens > max_len:
        raise ValueError(
            f"prompt ({ids.shape[1]} tokens) + max_new_tokens ({max_new_tokens}) exceeds max_seq_len={max_len}"
        )
    if sampler is not None and sampling_kwargs:
        raise ValueError(f"pass either sampler or sampling options, not both (got options {sorted(sampling_kwargs)})")
    if sampler is None:
        sampler = _make_sampler(sampling_kwargs) if sampling_kwargs else _greedy
    if not callable(sampler):
        raise TypeError(f"sampler must be callable(logits, input_ids) -> next ids, got {type(sampler).__name__}")
    eos_ids = _as_id_list("eos_token_id", eos_token_id) if eos_token_id is not None else []
    stops = [_as_id_list("stop_sequences item", s) for s in (stop_sequences or [])]
    if any(len(s) == 0 for s in stops):
        raise ValueError("stop_sequences must not contain an empty sequence")
    if pad_token_id is None:
        pad_token_id = eos_ids[0] if eos_ids else 0
    _check_int("pad_token_id", pad_token_id, minimum=0)
    if pad_token_id >= model.config.vocab_size:
        raise ValueError(f"pad_token_id must be < vocab_size={model.config.vocab_size}, got {pad_token_id}")

    batch, prompt_len = ids.shape
    # Everything lives in buffers allocated once: the tokens (the sampler sees a view of those so far)
    # and, with use_cache, the keys and values (StaticKVCache: no torch.cat per step).
    tokens = torch.empty((batch, prompt_len + max_new_tokens), dtype=torch.long, device=ids.device)
    tokens[:, :prompt_len] = ids
    length = prompt_len
    cache = _generation_cache(model, batch, prompt_len + max_new_tokens) if use_cache else None
    watch_stops = bool(eos_ids or stops)
    finished = torch.zeros(batch, dtype=torch.bool, device=ids.device)
    model_input = ids  # with a cache: first the whole prompt (prefill), then one token at a time
    for _ in range(max_new_tokens):
        # Only the last position predicts the next token: no logits for the rest of the prompt.
        logits = model(model_input, cache=cache, last_only=True)[:, -1, :]  # [batch, vocab]
        next_ids = sampler(logits, tokens[:, :length])
        if not isinstance(next_ids, torch.Tensor) or next_ids.shape != (batch,):
            got = tuple(next_ids.shape) if isinstance(next_ids, torch.Tensor) else type(next_ids).__name__
            raise ValueError(f"sampler must return a tensor of shape [batch] = ({batch},), got {got}")
        if watch_stops:
            next_ids = torch.where(finished, torch.full_like(next_ids, pad_token_id), next_ids.long())
        tokens[:, length] = next_ids
        length += 1
        if on_token is not None:
            on_token(next_ids)

        if watch_stops:
            stopped = torch.zeros_like(finished)
            for eos in eos_ids:
                stopped |= next_ids == eos
            n_generated = length - prompt_len
            for stop in stops:
                if len(stop) <= n_generated:
                    tail = tokens[:, length - len(stop) : length]
                    stopped |= (tail == torch.tensor(stop, device=ids.device)).all(dim=1)
            finished |= stopped
            if bool(finished.all()):
                break
        model_input = tokens[:, length - 1 : length] if use_cache else tokens[:, :length]
    out = tokens[:, :length]
    return out[0] if single else out


def from_hf(hf_model) -> Transformer:
    """Convert a Hugging Face ``GPT2LMHeadModel``, ``LlamaForCausalLM``, ``Qwen3ForCausalLM``,
    ``MixtralForCausalLM`` or ``Qwen3MoeForCausalLM`` (weights copied, nothing downloaded).

    With internet (e.g. on Colab)::

        from transformers import AutoModelForCausalLM
        model = from_hf(AutoModelForCausalLM.from_pretrained("openai-community/gpt2"))

    Details, a Llama example and the unsupported options: ``llmlab.convert_hf``.
    """
    from llmlab.convert_hf import from_hf as _from_hf  # lazy: transformers is optional

    return _from_hf(hf_model)


def to_hf(model: Transformer, *, tokenizer=None):
    """Export to a HF ``GPT2LMHeadModel`` / ``LlamaForCausalLM`` with the same logits (``llmlab.convert_hf.to_hf``)."""
    from llmlab.convert_hf import to_hf as _to_hf  # lazy: transformers is optional

    return _to_hf(model, tokenizer=tokenizer)
