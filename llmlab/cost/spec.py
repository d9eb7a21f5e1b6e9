"""``ModelSpec``: the shape of a real decoder-only transformer, read from its ``config.json``.

Everything the cost model needs follows from a handful of numbers: vocabulary, width, depth,
query heads and key/value heads, head size, MLP width and kind, which tensors carry biases,
whether the output head shares the embedding table, which layers use a sliding window, and how
many experts a token visits. Public calculators get several of these wrong (serving-facts §4):
they assume ``head_dim = hidden/heads`` (false for Gemma-2), ignore grouped KV heads (4-7x too much
KV cache for Llama-3 or Qwen2.5), count the embedding once for untied models (131 M short for
Llama-2-7B) or model a gated MLP as a plain one.

``param_count()`` matches, exactly, the number of parameters of the Hugging Face model built from
the same config (the tests check this on ``torch.device("meta")`` for every supported type), and so
does ``active_param_count()`` for mixtures of experts: the HF parameters minus the routed experts a
token skips.

Today's mixtures of experts add a few shapes, each a field below: experts narrower than the dense
MLP (``moe_intermediate_size``), always-on shared experts (DeepSeek), dense layers before or between
the sparse ones (``mlp_types``), biases on the router and experts and per-head attention sinks
(gpt-oss), q/k norms (Qwen3), and DeepSeek's multi-head latent attention (``attention="mla"``), which
projects keys and values through a small latent and caches only that latent plus one shared
rotary key per position.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from numbers import Integral

from .footprint import kv_cache_values

__all__ = ["ModelSpec", "SUPPORTED_MODEL_TYPES", "SLIDING_CONVENTIONS"]

SUPPORTED_MODEL_TYPES = ("gpt2", "llama", "mistral", "mixtral", "qwen2", "gemma2", "phi3",
                         "qwen3", "qwen3_moe", "deepseek_v3", "gpt_oss")

# How many positions a sliding-window layer keeps in its cache after a forward pass:
#   "hf":     min(tokens, window - 1). Hugging Face transformers 5.24 (DynamicSlidingWindowLayer)
#             keeps the last window-1 keys/values; the next token brings the window back to full.
#   "window": min(tokens, window). A rolling buffer of exactly the window (Mistral paper, §2).
#   "full":   tokens. A runtime without sliding-window support caches everything.
SLIDING_CONVENTIONS = ("hf", "window", "full")

# Defaults of the Hugging Face config classes (transformers 5.24) for the fields read below; a
# config.json that omits a field gets the library's default, which is not always hidden/heads
# (Gemma-2's head_dim defaults to 256 whatever the width).
_HF_DEFAULTS: dict[str, dict] = {
    "gpt2": dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024, n_inner=None,
                 tie_word_embeddings=True),
    "llama": dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=None, head_dim=None,
                  max_position_embeddings=2048, tie_word_embeddings=False, attention_bias=False,
                  mlp_bias=False),
    "mistral": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, head_dim=None,
                    max_position_embeddings=131072, tie_word_embeddings=False, sliding_window=4096),
    "mixtral": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, head_dim=None,
                    max_position_embeddings=131072, tie_word_embeddings=False, sliding_window=None,
                    num_local_experts=8, num_experts_per_tok=2),
    "qwen2": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, head_dim=None,
                  max_position_embeddings=32768, tie_word_embeddings=False, use_sliding_window=False,
                  sliding_window=4096, max_window_layers=28, layer_types=None),
    "gemma2": dict(vocab_size=256000, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                   num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                   max_position_embeddings=8192, tie_word_embeddings=True, attention_bias=False,
                   sliding_window=4096, layer_types=None),
    "phi3": dict(vocab_size=32064, hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=None, head_dim=None,
                 max_position_embeddings=4096, tie_word_embeddings=False, sliding_window=None),
    "qwen3": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, head_dim=128,
                  max_position_embeddings=32768, tie_word_embeddings=False, attention_bias=False,
                  use_sliding_window=False, sliding_window=4096, max_window_layers=28, layer_types=None),
    # Qwen3MoeConfig has no head_dim field: the attention reads getattr(config, "head_dim", hidden/heads).
    "qwen3_moe": dict(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=24,
                      num_attention_heads=32, num_key_value_heads=4, head_dim=None,
                      max_position_embeddings=32768, tie_word_embeddings=False, attention_bias=False,
                      use_sliding_window=False, sliding_window=4096, decoder_sparse_step=1,
                      moe_intermediate_size=768, num_experts_per_tok=8, num_experts=128, mlp_only_layers=None),
    "deepseek_v3": dict(vocab_size=129280, hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048,
                        num_hidden_layers=61, num_attention_heads=128, num_key_value_heads=128, n_shared_experts=1,
                        n_routed_experts=256, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64,
                        v_head_dim=128, qk_nope_head_dim=128, num_experts_per_tok=8, first_k_dense_replace=3,
                        max_position_embeddings=4096, tie_word_embeddings=False, attention_bias=False),
    "gpt_oss": dict(vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=36,
                    num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=128,
                    num_experts_per_tok=4, max_position_embeddings=131072, tie_word_embeddings=False,
                    sliding_window=128, layer_types=None, attention_bias=True),
}


_GPT2_ALIASES = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer",
                 "num_attention_heads": "n_head", "max_position_embeddings": "n_positions"}


def _int_field(value, name: str, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return int(value)


def _hf_layer_types(layer_types, n_layers: int) -> tuple[str, ...] | None:
    """HF's ``layer_types`` ("full_attention"/"sliding_attention") as ("full"/"sliding"), or None."""
    if layer_types is None:
        return None
    names = {"full_attention": "full", "sliding_attention": "sliding"}
    if not isinstance(layer_types, (list, tuple)) or len(layer_types) != n_layers:
        raise ValueError(f"layer_types must be a list of {n_layers} entries, got {layer_types!r}")
    unknown = sorted({t for t in layer_types if t not in names})
    if unknown:
        raise ValueError(f"unsupported layer_types {unknown}; expected {sorted(names)}")
    return tuple(names[t] for t in layer_types)


@dataclass(frozen=True)
class ModelSpec:
    """Architecture of a decoder-only transformer, enough to count parameters, bytes and FLOPs.

    Build one with :meth:`from_hf_config` (or :func:`llmlab.cost.get_model`), or by hand.
    ``layer_types`` lists ``"full"`` or ``"sliding"`` per layer (empty means all full).
    """

    name: str
    model_type: str
    vocab_size: int
    hidden_size: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    intermediate_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    gated_mlp: bool = True  # SwiGLU/GeGLU: gate, up and down matrices; plain MLP: up and down
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    norm: str = "rmsnorm"  # "rmsnorm": one weight vector; "layernorm": weight and bias
    norms_per_layer: int = 2
    learned_positions: int = 0  # rows of a learned position table (GPT-2); 0 for RoPE models
    n_experts: int = 1  # 1 for a dense model
    experts_per_token: int = 1
    layer_types: tuple[str, ...] = field(default=())
    sliding_window: int | None = None
    # Mixtures of experts beyond Mixtral's shape
    moe_intermediate_size: int | None = None  # width of one routed expert (None: intermediate_size)
    n_shared_experts: int = 0  # always-on experts, each moe_intermediate_size wide (DeepSeek)
    mlp_types: tuple[str, ...] = field(default=())  # "dense"/"moe" per layer (empty: all "moe" if n_experts > 1)
    router_bias: bool = False  # gpt-oss
    attention_sinks: bool = False  # gpt-oss: one learned logit per head and layer
    qk_norm: bool = False  # Qwen3: an RMSNorm gain of head_dim for q and one for k, per layer
    # Multi-head latent attention (DeepSeek-V2/V3), attention="mla"
    attention: str = "mha"  # "mha" covers MHA, GQA and MQA
    q_lora_rank: int | None = None  # None: queries use a full projection
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0

    # -- construction ------------------------------------------------------------------------

    def __post_init__(self):
        for name in ("vocab_size", "hidden_size", "n_layers", "n_heads", "n_kv_heads", "head_dim",
                     "intermediate_size", "max_position_embeddings", "n_experts", "experts_per_token"):
            _int_field(getattr(self, name), name)
        _int_field(self.learned_positions, "learned_positions", allow_zero=True)
        _int_field(self.norms_per_layer, "norms_per_layer", allow_zero=True)
        if self.n_kv_heads > self.n_heads or self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"n_kv_heads must divide n_heads, got n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}"
            )
        if self.experts_per_token > self.n_experts:
            raise ValueError(
                f"experts_per_token ({self.experts_per_token}) cannot exceed n_experts ({self.n_experts})"
            )
        if self.norm not in ("rmsnorm", "layernorm"):
            raise ValueError(f"norm must be 'rmsnorm' or 'layernorm', got {self.norm!r}")
        types = tuple(self.layer_types) or ("full",) * self.n_layers
        if len(types) != self.n_layers:
            raise ValueError(f"layer_types has {len(types)} entries for n_layers={self.n_layers}")
        bad = sorted({t for t in types if t not in ("full", "sliding")})
        if bad:
            raise ValueError(f"layer_types entries must be 'full' or 'sliding', got {bad}")
        if "sliding" in types:
            if self.sliding_window is None:
                raise ValueError("layer_types has sliding layers but sliding_window is None")
            _int_field(self.sliding_window, "sliding_window")
        object.__setattr__(self, "layer_types", types)
        if self.moe_intermediate_size is not None:
            _int_field(self.moe_intermediate_size, "moe_intermediate_size")
        _int_field(self.n_shared_experts, "n_shared_experts", allow_zero=True)
        mlp = tuple(self.mlp_types) or ("moe" if self.is_moe else "dense",) * self.n_layers
        if len(mlp) != self.n_layers or not set(mlp) <= {"dense", "moe"}:
            raise ValueError(f"mlp_types must list 'dense' or 'moe' for each of the {self.n_layers} layers, got {mlp}")
        if "moe" in mlp and not self.is_moe:
            raise ValueError("mlp_types has 'moe' layers but n_experts is 1")
        object.__setattr__(self, "mlp_types", mlp)
        if self.attention not in ("mha", "mla"):
            raise ValueError(f"attention must be 'mha' or 'mla', got {self.attention!r}")
        if self.attention == "mla":
            for name in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
                _int_field(getattr(self, name), name)
            if self.q_lora_rank is not None:
                _int_field(self.q_lora_rank, "q_lora_rank")

    @classmethod
    def from_hf_config(cls, config: dict, name: str | None = None) -> "ModelSpec":
        """Read a Hugging Face ``config.json`` (as a dict) for the model types in
        ``SUPPORTED_MODEL_TYPES``. Missing fields take the transformers 5.24 defaults."""
        if not isinstance(config, dict):
            raise TypeError(f"config must be a dict (a parsed config.json), got {type(config).__name__}")
        model_type = config.get("model_type")
        if model_type not in SUPPORTED_MODEL_TYPES:
            raise ValueError(
                f"unsupported model_type {model_type!r}; supported: {', '.join(SUPPORTED_MODEL_TYPES)}"
            )
        if model_type == "gpt2":  # GPT2Config also accepts the generic names
            config = {_GPT2_ALIASES.get(k, k): v for k, v in config.items()}
        cfg = {**_HF_DEFAULTS[model_type], **config}
        name = name or config.get("_name_or_path") or model_type
        if model_type == "gpt2":
            return cls._from_gpt2(cfg, name)

        if model_type == "deepseek_v3":
            return cls._from_deepseek_v3(cfg, name)

        hidden, n_heads = cfg["hidden_size"], cfg["num_attention_heads"]
        n_kv = cfg.get("num_key_value_heads") or n_heads
        head_dim = cfg.get("head_dim") or hidden // n_heads
        n_layers = cfg["num_hidden_layers"]
        common = dict(
            name=name, model_type=model_type, vocab_size=cfg["vocab_size"], hidden_size=hidden,
            n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv, head_dim=head_dim,
            intermediate_size=cfg["intermediate_size"],
            max_position_embeddings=cfg["max_position_embeddings"],
            tie_word_embeddings=bool(cfg["tie_word_embeddings"]), gated_mlp=True, norm="rmsnorm",
        )
        window = cfg.get("sliding_window")
        if model_type == "llama":
            bias = bool(cfg["attention_bias"])
            return cls(**common, qkv_bias=bias, o_bias=bias, mlp_bias=bool(cfg["mlp_bias"]))
        if model_type in ("mistral", "phi3"):
            # Every layer slides when a window is set (Phi-3-mini-4k sets 2047).
            types = ("sliding",) * n_layers if window is not None else ()
            return cls(**common, layer_types=types, sliding_window=window)
        if model_type == "mixtral":
            types = ("sliding",) * n_layers if window is not None else ()
            return cls(**common, n_experts=cfg["num_local_experts"],
                       experts_per_token=cfg["num_experts_per_tok"], layer_types=types,
                       sliding_window=window)
        if model_type == "qwen2":
            # Qwen2 always has a bias on q, k and v (not on o); the window only applies with
            # use_sliding_window, to the layers from max_window_layers on.
            window = window if cfg["use_sliding_window"] else None
            types = _hf_layer_types(cfg.get("layer_types"), n_layers)
            if types is None:
                types = tuple("sliding" if window is not None and i >= cfg["max_window_layers"] else "full"
                              for i in range(n_layers))
            return cls(**common, qkv_bias=True, layer_types=types, sliding_window=window)
        if model_type == "gemma2":
            # Four norms per layer (before and after attention and MLP); sliding and global layers
            # alternate, starting with a sliding one.
            bias = bool(cfg["attention_bias"])
            types = _hf_layer_types(cfg.get("layer_types"), n_layers)
            if types is None:
                types = tuple("sliding" if (i + 1) % 2 else "full" for i in range(n_layers))
            return cls(**common, qkv_bias=bias, o_bias=bias, norms_per_layer=4, layer_types=types,
                       sliding_window=window)
        if model_type in ("qwen3", "qwen3_moe"):
            # Qwen2's layout with q/k norms and no q/k/v biases (unless attention_bias). Qwen3 slides
            # from max_window_layers on; Qwen3-MoE slides on every layer when use_sliding_window.
            bias = bool(cfg["attention_bias"])
            window = window if cfg["use_sliding_window"] else None
            if model_type == "qwen3":
                types = _hf_layer_types(cfg.get("layer_types"), n_layers)
                if types is None:
                    types = tuple("sliding" if window is not None and i >= cfg["max_window_layers"] else "full"
                                  for i in range(n_layers))
                return cls(**common, qkv_bias=bias, o_bias=bias, qk_norm=True, layer_types=types,
                           sliding_window=window)
            # A layer is sparse unless listed in mlp_only_layers or off the decoder_sparse_step grid.
            only, step = set(cfg["mlp_only_layers"] or []), cfg["decoder_sparse_step"]
            n_experts = cfg["num_experts"]
            mlp = tuple("moe" if n_experts > 0 and i not in only and (i + 1) % step == 0 else "dense"
                        for i in range(n_layers))
            return cls(**common, qkv_bias=bias, o_bias=bias, qk_norm=True,
                       layer_types=("sliding",) * n_layers if window is not None else (), sliding_window=window,
                       n_experts=max(n_experts, 1), experts_per_token=cfg["num_experts_per_tok"],
                       moe_intermediate_size=cfg["moe_intermediate_size"], mlp_types=mlp)
        if model_type == "gpt_oss":
            # Biases on q, k, v, o, the router and the experts; a learned "sink" logit per head;
            # layers alternate sliding / full, starting with a sliding one.
            types = _hf_layer_types(cfg.get("layer_types"), n_layers)
            if types is None:
                types = tuple("sliding" if (i + 1) % 2 else "full" for i in range(n_layers))
            bias = bool(cfg["attention_bias"])
            return cls(**common, qkv_bias=bias, o_bias=bias, mlp_bias=True, router_bias=True,
                       attention_sinks=True, n_experts=cfg["num_local_experts"],
                       experts_per_token=cfg["num_experts_per_tok"], layer_types=types, sliding_window=window)
        raise AssertionError(model_type)  # pragma: no cover

    @classmethod
    def _from_deepseek_v3(cls, cfg: dict, name: str) -> "ModelSpec":
        # Multi-head latent attention; the first ``first_k_dense_replace`` layers keep a dense MLP of
        # intermediate_size, the others route to n_routed_experts of moe_intermediate_size plus
        # n_shared_experts always-on experts. (transformers 5.24 ignores moe_layer_freq and builds
        # no multi-token-prediction layer: num_nextn_predict_layers does not change the count.)
        n_layers, n_heads = cfg["num_hidden_layers"], cfg["num_attention_heads"]
        bias = bool(cfg["attention_bias"])
        nope, rope = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"]
        first_dense = min(cfg["first_k_dense_replace"], n_layers)
        return cls(
            name=name, model_type="deepseek_v3", vocab_size=cfg["vocab_size"], hidden_size=cfg["hidden_size"],
            n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_heads, head_dim=nope + rope,
            intermediate_size=cfg["intermediate_size"], max_position_embeddings=cfg["max_position_embeddings"],
            tie_word_embeddings=bool(cfg["tie_word_embeddings"]), gated_mlp=True, norm="rmsnorm",
            qkv_bias=bias, o_bias=bias, n_experts=cfg["n_routed_experts"],
            experts_per_token=cfg["num_experts_per_tok"], moe_intermediate_size=cfg["moe_intermediate_size"],
            n_shared_experts=cfg["n_shared_experts"] or 0,
            mlp_types=("dense",) * first_dense + ("moe",) * (n_layers - first_dense),
            attention="mla", q_lora_rank=cfg["q_lora_rank"], kv_lora_rank=cfg["kv_lora_rank"],
            qk_nope_head_dim=nope, qk_rope_head_dim=rope, v_head_dim=cfg["v_head_dim"],
        )

    @classmethod
    def _from_gpt2(cls, cfg: dict, name: str) -> "ModelSpec":
        if cfg.get("add_cross_attention"):
            raise ValueError("GPT-2 configs with add_cross_attention are not decoder-only; not supported")
        hidden = cfg["n_embd"]
        n_heads = cfg["n_head"]
        if hidden % n_heads:
            raise ValueError(f"n_embd ({hidden}) must be a multiple of n_head ({n_heads})")
        return cls(
            name=name, model_type="gpt2", vocab_size=cfg["vocab_size"], hidden_size=hidden,
            n_layers=cfg["n_layer"], n_heads=n_heads, n_kv_heads=n_heads, head_dim=hidden // n_heads,
            intermediate_size=cfg.get("n_inner") or 4 * hidden, max_position_embeddings=cfg["n_positions"],
            tie_word_embeddings=bool(cfg["tie_word_embeddings"]), gated_mlp=False, qkv_bias=True,
            o_bias=True, mlp_bias=True, norm="layernorm", norms_per_layer=2,
            learned_positions=cfg["n_positions"],
        )

    def with_(self, **changes) -> "ModelSpec":
        """A copy with some fields changed (e.g. ``spec.with_(n_kv_heads=1)`` to try MQA)."""
        return replace(self, **changes)

    # -- parameters --------------------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 1

    @property
    def q_dim(self) -> int:
        """Width of all query heads together, ``n_heads · head_dim`` (≠ hidden_size for Gemma-2)."""
        return self.n_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of all key (or value) heads together, ``n_kv_heads · head_dim``."""
        return self.n_kv_heads * self.head_dim

    @property
    def expert_size(self) -> int:
        """Width of one routed expert: ``moe_intermediate_size``, or ``intermediate_size`` (Mixtral)."""
        return self.moe_intermediate_size or self.intermediate_size

    def _attention(self) -> tuple[int, int]:
        """``(matrices, vectors)`` of one layer's attention: weights; biases, internal norms, sinks."""
        h, H = self.hidden_size, self.n_heads
        sinks = H if self.attention_sinks else 0
        if self.attention == "mla":
            qk, v, r, c = self.qk_nope_head_dim + self.qk_rope_head_dim, self.v_head_dim, self.q_lora_rank, self.kv_lora_rank
            # queries: h -> q_lora -> heads (or h -> heads); keys/values: h -> latent c (+ one shared
            # rotary key), latent -> per-head no-rope keys and values; output: heads·v -> h.
            q = h * r + r * H * qk if r else h * H * qk
            mats = q + h * (c + self.qk_rope_head_dim) + c * H * (self.qk_nope_head_dim + v) + H * v * h
            biases = ((r or 0) + c + self.qk_rope_head_dim if self.qkv_bias else 0) + (h if self.o_bias else 0)
            norms = (r or 0) + c  # RMSNorm on the query latent and on the kv latent
            return mats, biases + norms + sinks
        mats = h * self.q_dim + 2 * h * self.kv_dim + self.q_dim * h
        biases = (self.q_dim + 2 * self.kv_dim if self.qkv_bias else 0) + (h if self.o_bias else 0)
        return mats, biases + (2 * self.head_dim if self.qk_norm else 0) + sinks

    def _mlp(self, width: int) -> tuple[int, int]:
        """``(matrices, vectors)`` of one MLP (or expert) of hidden width ``width``."""
        n_mats = 3 if self.gated_mlp else 2
        return n_mats * self.hidden_size * width, ((n_mats - 1) * width + self.hidden_size) if self.mlp_bias else 0

    def _layer(self, kind: str, experts: float) -> dict[str, float]:
        """Parameters of one layer of ``kind`` "dense" or "moe" with ``experts`` routed experts counted."""
        attn_m, attn_v = self._attention()
        norms = self.norms_per_layer * self.hidden_size * (2 if self.norm == "layernorm" else 1)
        if kind == "dense":
            mlp_m, mlp_v = self._mlp(self.intermediate_size)
            return {"attn_m": attn_m, "attn_v": attn_v, "mlp_m": mlp_m, "mlp_v": mlp_v, "norms": norms}
        exp_m, exp_v = self._mlp(self.expert_size)
        shared_m, shared_v = self._mlp(self.n_shared_experts * self.expert_size) if self.n_shared_experts else (0, 0)
        return {"attn_m": attn_m, "attn_v": attn_v, "mlp_m": experts * exp_m, "mlp_v": experts * exp_v,
                "shared_m": shared_m, "shared_v": shared_v, "router_m": self.hidden_size * self.n_experts,
                "router_v": self.n_experts if self.router_bias else 0, "norms": norms}

    def _layers(self, experts: float | None = None) -> list[dict[str, float]]:
        E = self.n_experts if experts is None else experts
        return [self._layer(kind, E) for kind in self.mlp_types]

    def breakdown(self) -> dict[str, int]:
        """Parameter count by part: ``embedding``, ``positions``, ``attention``, ``mlp`` (dense MLPs and
        every routed expert), ``shared_experts``, ``router``, ``norms`` (including the final one),
        ``head`` (0 when tied) and ``total``. :meth:`explain` prints the same with the formulas."""
        layers = self._layers()
        h, V = self.hidden_size, self.vocab_size
        parts = {
            "embedding": V * h,
            "positions": self.learned_positions * h,
            "attention": sum(p["attn_m"] + p["attn_v"] for p in layers),
            "mlp": sum(p["mlp_m"] + p["mlp_v"] for p in layers),
            "shared_experts": sum(p.get("shared_m", 0) + p.get("shared_v", 0) for p in layers),
            "router": sum(p.get("router_m", 0) + p.get("router_v", 0) for p in layers),
            "norms": sum(p["norms"] for p in layers) + h * (2 if self.norm == "layernorm" else 1),
            "head": 0 if self.tie_word_embeddings else V * h,
        }
        parts["total"] = sum(parts.values())
        return parts

    def param_count(self) -> int:
        """Total number of parameters (every expert counted), exactly as in the HF model."""
        return self.breakdown()["total"]

    def active_param_count(self, count_embedding: bool = True) -> int:
        """Parameters a single token uses: everything except the routed experts it is not sent to.

        Router, shared experts and head always count. Vendors disagree on the embedding table, of
        which a token reads one row: Mistral's "12.9 B active" for Mixtral and Qwen's "3.3 B" for
        Qwen3-30B-A3B count it (the default); OpenAI's 3.6 B for gpt-oss-20b and DeepSeek's 37 B
        for DeepSeek-V3 do not (``count_embedding=False``; a tied table stays, being the head).
        For a dense model with the default it equals :meth:`param_count`.
        """
        exp_m, exp_v = self._mlp(self.expert_size)
        n_moe = self.mlp_types.count("moe")
        active = self.param_count() - n_moe * (self.n_experts - self.experts_per_token) * (exp_m + exp_v)
        if not count_embedding and not self.tie_word_embeddings:
            active -= self.vocab_size * self.hidden_size
        return active

    def tensor_groups(self, experts: float | None = None) -> dict[str, float]:
        """Parameters grouped by how formats store them: ``embedding`` (token table when untied,
        plus learned positions), ``head`` (output projection, which is the embedding table when
        tied), ``matrices`` (2-D weights in the blocks) and ``vectors`` (norms and biases).

        ``experts`` counts how many routed experts per MoE layer to include (default: all of
        them); a non-integer is allowed for the expected number touched by a batch.
        """
        layers = self._layers(experts)
        h, V = self.hidden_size, self.vocab_size
        return {
            "embedding": (0 if self.tie_word_embeddings else V * h) + self.learned_positions * h,
            "head": V * h,
            "matrices": sum(p["attn_m"] + p["mlp_m"] + p.get("shared_m", 0) + p.get("router_m", 0) for p in layers),
            "vectors": sum(p["attn_v"] + p["mlp_v"] + p.get("shared_v", 0) + p.get("router_v", 0) + p["norms"]
                           for p in layers) + h * (2 if self.norm == "layernorm" else 1),
        }

    def explain(self) -> str:
        """A small table of where the parameters are, with the formula of each line."""
        h, V, L = self.hidden_size, self.vocab_size, self.n_layers
        b = self.breakdown()
        mats = "3" if self.gated_mlp else "2"
        n_moe = self.mlp_types.count("moe")
        n_dense = L - n_moe
        if self.attention == "mla":
            attention = (f"L·(q: h·{self.q_lora_rank}+{self.q_lora_rank}·H·{self.qk_nope_head_dim + self.qk_rope_head_dim}"
                         f" + kv: h·({self.kv_lora_rank}+{self.qk_rope_head_dim}) + {self.kv_lora_rank}·H·"
                         f"({self.qk_nope_head_dim}+{self.v_head_dim}) + o: H·{self.v_head_dim}·h + norms), "
                         f"H={self.n_heads}, latent attention")
        else:
            attention = (f"L·(h·H·hd + 2·h·KV·hd + H·hd·h) = {L}·({h}·{self.n_heads}·{self.head_dim} "
                         f"+ 2·{h}·{self.n_kv_heads}·{self.head_dim} + …)")
            attention += " + biases" if self.qkv_bias or self.o_bias else ""
            attention += " + q/k norms" if self.qk_norm else ""
            attention += " + sinks" if self.attention_sinks else ""
        mlp = []
        if n_dense:
            mlp.append(f"{n_dense}·{mats}·h·I = {n_dense}·{mats}·{h}·{self.intermediate_size}")
        if n_moe:
            mlp.append(f"{n_moe}·{self.n_experts}·{mats}·h·I_e = {n_moe}·{self.n_experts}·{mats}·{h}·{self.expert_size}")
        rows = [
            ("embedding", f"V·h = {V}·{h}", b["embedding"]),
            ("positions", f"P·h = {self.learned_positions}·{h}", b["positions"]),
            ("attention", attention, b["attention"]),
            ("mlp", " + ".join(mlp) + (" + biases" if self.mlp_bias else ""), b["mlp"]),
            ("shared_experts", f"{n_moe}·{mats}·h·({self.n_shared_experts}·I_e)", b["shared_experts"]),
            ("router", f"{n_moe}·h·E = {n_moe}·{h}·{self.n_experts}" + (" + biases" if self.router_bias else ""),
             b["router"]),
            ("norms", f"(L·{self.norms_per_layer} + 1)·h{'·2' if self.norm == 'layernorm' else ''}", b["norms"]),
            ("head", "tied: shares the embedding" if self.tie_word_embeddings else f"V·h = {V}·{h}", b["head"]),
        ]
        lines = [f"{self.name} ({self.model_type})"]
        lines += [f"  {k:<14} {v:>16,}  {f}" for k, f, v in rows if v or k in ("head",)]
        lines.append(f"  {'total':<14} {b['total']:>16,}")
        if self.is_moe:
            shared = f" + {self.n_shared_experts} shared" if self.n_shared_experts else ""
            lines.append(f"  {'active':<14} {self.active_param_count():>16,}  "
                         f"(top-{self.experts_per_token} of {self.n_experts} experts per token{shared})")
        return "\n".join(lines)

    # -- KV cache ----------------------------------------------------------------------------

    def kv_tokens_stored(self, tokens: int, sliding: str = "hf") -> list[int]:
        """Positions each layer keeps in its KV cache after ``tokens`` tokens (see SLIDING_CONVENTIONS)."""
        tokens = _int_field(tokens, "tokens", allow_zero=True)
        if sliding not in SLIDING_CONVENTIONS:
            raise ValueError(f"sliding must be one of {SLIDING_CONVENTIONS}, got {sliding!r}")
        if sliding == "full":
            return [tokens] * self.n_layers
        keep = self.sliding_window - 1 if sliding == "hf" and self.sliding_window else self.sliding_window
        return [min(tokens, keep) if t == "sliding" else tokens for t in self.layer_types]

    def kv_cache_bytes(self, tokens: int, batch: int = 1, bytes_per_value: float = 2, sliding: str = "hf") -> int:
        """Bytes of keys and values cached after ``tokens`` tokens for ``batch`` sequences.

        Per layer: ``batch · kv_values_per_position · stored_tokens · bytes_per_value``, that is
        ``2 · n_kv_heads · head_dim`` values per position, or ``kv_lora_rank + qk_rope_head_dim``
        for latent attention (transformers 5.24's DeepSeek-V3 caches the latent). With the
        default ``sliding="hf"`` this is exactly what transformers 5.24's ``DynamicCache`` holds:
        full-attention layers keep every position; sliding-window layers (Mistral-7B-v0.1,
        Phi-3-mini-4k, Gemma-2's even layers, Qwen2 with ``use_sliding_window``) keep
        ``min(tokens, window - 1)``, because ``DynamicSlidingWindowLayer`` trims to the last
        ``window - 1`` positions after each update (the next token completes the window).
        ``sliding="window"`` keeps a full window (a rolling buffer), ``"full"`` ignores windows.
        """
        batch = _int_field(batch, "batch")
        if not (isinstance(bytes_per_value, (int, float)) and bytes_per_value > 0):
            raise ValueError(f"bytes_per_value must be a number > 0, got {bytes_per_value!r}")
        stored = sum(self.kv_tokens_stored(tokens, sliding))  # positions, summed over the layers
        if self.attention == "mla":
            values = batch * self.kv_values_per_position * stored
        else:
            values = kv_cache_values(1, batch, stored, self.n_kv_heads, self.head_dim)
        total = values * bytes_per_value
        return int(round(total))

    @property
    def kv_values_per_position(self) -> int:
        """Numbers one layer caches per position: ``2 · n_kv_heads · head_dim`` (a key and a value per
        K/V head), or for latent attention the latent plus the shared rotary key,
        ``kv_lora_rank + qk_rope_head_dim`` (DeepSeek-V3: 512 + 64 = 576 instead of 2·128·192)."""
        if self.attention == "mla":
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.kv_dim

    def kv_bytes_per_token(self, bytes_per_value: float = 2) -> int:
        """KV bytes one more token adds while no window is full: ``2 · L · n_kv_heads · head_dim · B``.

        Llama-2-7B in fp16: 2·32·32·128·2 = 524,288 bytes = 0.5 MiB per token.
        """
        return self.kv_cache_bytes(1, bytes_per_value=bytes_per_value)

    # -- FLOPs -------------------------------------------------------------------------------

    def _matmul_params_per_token(self) -> int:
        """Weights one token multiplies by in the blocks (attention, dense MLPs, its k experts,
        shared experts, router)."""
        return sum(p["attn_m"] + p["mlp_m"] + p.get("shared_m", 0) + p.get("router_m", 0)
                   for p in self._layers(self.experts_per_token))

    @property
    def _attention_flops_per_key(self) -> int:
        """FLOPs per attended key and layer: scores ``2·H·d_qk`` plus mixing ``2·H·d_v``."""
        if self.attention == "mla":
            return 2 * self.n_heads * (self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim)
        return 4 * self.n_heads * self.head_dim

    def attended_keys(self, n_new: int, context: int) -> int:
        """Keys the ``n_new`` tokens after ``context`` cached ones attend to, summed over layers."""
        def causal_sum(n: int, w: int | None) -> int:  # Σ_{i=1..n} min(i, w)
            if w is None or n <= w:
                return n * (n + 1) // 2
            return w * (w + 1) // 2 + (n - w) * w

        n_sliding = self.layer_types.count("sliding")
        total = 0
        for count, w in ((self.n_layers - n_sliding, None), (n_sliding, self.sliding_window)):
            if count:
                total += count * (causal_sum(context + n_new, w) - causal_sum(context, w))
        return total

    def forward_flops(self, n_tokens: int, context: int = 0, logits: str = "last") -> int:
        """FLOPs (1 multiply-add = 2 FLOPs) to run ``n_tokens`` new tokens after ``context`` cached ones.

        Counted: every weight matrix a token passes through (2 FLOPs per weight; only the top-k
        experts), the causal attention scores and mixing (4·n_heads·head_dim per attended key and
        layer; 2·n_heads·(qk + v head dims) for latent attention, counted in its expanded form;
        sliding layers attend to at most ``sliding_window`` keys), and the output head for
        ``logits="last"`` (one token, what generation needs), ``"all"`` (every position, as a
        plain forward pass does) or ``"none"``. Norms, activations,
        softmax and biases are O(h) per token and left out.
        """
        n_tokens = _int_field(n_tokens, "n_tokens")
        context = _int_field(context, "context", allow_zero=True)
        if logits not in ("last", "all", "none"):
            raise ValueError(f"logits must be 'last', 'all' or 'none', got {logits!r}")
        matmul = 2 * n_tokens * self._matmul_params_per_token()
        head = 2 * self.vocab_size * self.hidden_size * {"all": n_tokens, "last": 1, "none": 0}[logits]
        attention = self._attention_flops_per_key * self.attended_keys(n_tokens, context)
        return matmul + head + attention

    def flops_per_token(self, context: int = 0) -> int:
        """FLOPs to decode one token with ``context`` tokens already cached (≈ 2 · active params)."""
        return self.forward_flops(1, context=context)
