"""``ModelConfig``: every size and design choice of an ``llmlab.model.Transformer``, checked when it is made."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from llmlab.arguments import check_choice, check_float, check_int

POS_ENCODINGS = ("learned", "sinusoidal", "rope")
_MOE_FIELDS = ("n_experts", "n_experts_per_token", "n_shared_experts", "moe_d_ff", "moe_normalize", "dense_layers")
NORMS = ("layernorm", "rmsnorm")
# "gelu" is GPT-2's tanh approximation (HF calls it "gelu_new"); "gelu_exact" uses erf.
MLPS = ("gelu", "gelu_exact", "swiglu")


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
            check_int(name, getattr(self, name))
        check_choice("pos_encoding", self.pos_encoding, POS_ENCODINGS)
        check_choice("norm", self.norm, NORMS)
        check_choice("mlp", self.mlp, MLPS)
        for name in ("bias", "tie_embeddings", "qk_norm", "moe_normalize"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        check_float("norm_eps", self.norm_eps)
        check_float("rope_theta", self.rope_theta)
        check_float("dropout", self.dropout, positive=False)
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")

        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        check_int("n_kv_heads", self.n_kv_heads)
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
        check_int("head_dim", self.head_dim)
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
        check_int("d_ff", self.d_ff)
        self._check_moe()

    def _check_moe(self) -> None:
        check_int("n_experts", self.n_experts, minimum=0)
        check_int("n_shared_experts", self.n_shared_experts, minimum=0)
        check_int("n_experts_per_token", self.n_experts_per_token)
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
        check_int("moe_d_ff", self.moe_d_ff)
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
