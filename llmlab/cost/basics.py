"""Chapter 01-03 back-of-the-envelope formulas: parameters, weight memory, KV cache, "does it fit?".

These are the textbook formulas, kept deliberately simple so a student can check every number by
hand. They ignore embeddings, norms, biases and grouped KV heads unless told otherwise; the exact,
architecture-aware versions live in :mod:`llmlab.cost.spec` and :mod:`llmlab.cost.memory`.

Units: ``GB = 1e9`` bytes (decimal, what disk and GPU vendors print), ``GiB = 2**30`` bytes
(binary, what ``nvidia-smi`` and most operating systems print). Every function says which one it uses.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from .footprint import kv_cache_values, memory_needed, weight_bytes
from .formats import WEIGHT_FORMATS

__all__ = [
    "GB",
    "GiB",
    "MiB",
    "BYTES_PER_PARAM",
    "linear_param_count",
    "transformer_param_estimate",
    "param_breakdown",
    "mlp_param_count",
    "weight_memory",
    "kv_cache_bytes",
    "inference_memory_gb",
    "fits_on_gpu",
    "moe_active_fraction",
    "moe_weights_and_flops",
    "flops_per_token_ratio",
    "choose_model",
    "attention_cost",
    "attention_flops",
]

GB = 1e9
GiB = 2**30
MiB = 2**20

# Bytes per parameter, read from the one table of formats (``formats.WEIGHT_FORMATS``, which says where each
# number comes from). The first five are the chapter-01 table; the rest are real quantised formats whose
# per-block scales make them cost a little more than their nominal width (q8_0: 8.5 bits, q4_0: 4.5 bits,
# gptq-4bit-g128: 4 + (16 + 4) / 128 = 4.15625 bits). "4bit" is chapter 01's name for int4.
BYTES_PER_PARAM: dict[str, float] = {
    name: WEIGHT_FORMATS[fmt].bytes_per_weight
    for name, fmt in (("fp32", "fp32"), ("fp16", "fp16"), ("bf16", "bf16"), ("int8", "int8"), ("int4", "int4"),
                      ("4bit", "int4"), ("q8_0", "q8_0"), ("q4_0", "q4_0"), ("gptq-4bit-g128", "gptq-4bit-g128"))
}


def _check_positive_int(value, name: str, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    value = int(value)
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def _check_non_negative(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} ({value!r})")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def _check_positive(value, name: str) -> float:
    value = _check_non_negative(value, name)
    if value == 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def linear_param_count(d_in: int, d_out: int, bias: bool = True) -> int:
    """Parameters of ``y = x W + b`` with ``W`` of shape ``(d_in, d_out)``: ``d_in*d_out (+ d_out)``.

    >>> linear_param_count(4, 3)
    15
    """
    d_in = _check_positive_int(d_in, "d_in")
    d_out = _check_positive_int(d_out, "d_out")
    return d_in * d_out + (d_out if bias else 0)


def transformer_param_estimate(n_layers: int, d_model: int) -> int:
    """The ``N ≈ 12·L·d²`` estimate: per block 4d² for Q, K, V, O and 8d² for a d→4d→d MLP.

    Ignores embeddings, norms and biases (for a 7B-class model the missing part is mostly the
    vocabulary embedding, about 0.3 B per table).
    """
    n_layers = _check_positive_int(n_layers, "n_layers")
    d_model = _check_positive_int(d_model, "d_model")
    return 12 * n_layers * d_model**2


def param_breakdown(n_layers: int, d_model: int) -> dict[str, int]:
    """The 12·L·d² estimate split in its parts: ``attn`` (4d²), ``mlp`` (8d²), ``per_layer``, ``total``."""
    n_layers = _check_positive_int(n_layers, "n_layers")
    d_model = _check_positive_int(d_model, "d_model")
    attn = 4 * d_model**2
    mlp = 8 * d_model**2
    return {"attn": attn, "mlp": mlp, "per_layer": attn + mlp, "total": n_layers * (attn + mlp)}


def mlp_param_count(d_model: int, d_ff: int | None = None, gated: bool = False, bias: bool = False) -> int:
    """Parameters of one MLP block.

    Plain MLP (GPT-2): two matrices ``d→d_ff→d``. Gated MLP (SwiGLU/GeGLU, Llama): three matrices,
    gate and up ``d→d_ff`` and down ``d_ff→d``. ``d_ff`` defaults to ``4*d_model``.
    """
    d_model = _check_positive_int(d_model, "d_model")
    d_ff = 4 * d_model if d_ff is None else _check_positive_int(d_ff, "d_ff")
    if gated:
        return 3 * d_model * d_ff + ((2 * d_ff + d_model) if bias else 0)
    return 2 * d_model * d_ff + ((d_ff + d_model) if bias else 0)


_DTYPE_ALIASES = {
    "4-bit": "4bit",
    "float32": "fp32",
    "f32": "fp32",
    "float16": "fp16",
    "f16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "q8-0": "q8_0",
    "q4-0": "q4_0",
}


def _bytes_per_param(dtype: str) -> float:
    if not isinstance(dtype, str):
        raise TypeError(f"dtype must be a string such as 'fp16', got {type(dtype).__name__}")
    key = dtype.strip().lower()
    key = _DTYPE_ALIASES.get(key, key)
    if key not in BYTES_PER_PARAM:
        raise ValueError(f"unknown dtype {dtype!r}; valid names: {', '.join(BYTES_PER_PARAM)}")
    return BYTES_PER_PARAM[key]


def weight_memory(n_params: float, dtype: str = "fp16") -> tuple[float, float]:
    """Memory of the weights alone, ``N · bytes_per_param``, as ``(GB, GiB)``.

    ``GB`` is decimal (1e9 bytes), ``GiB`` binary (2**30 bytes): 7e9 parameters in fp16 are
    14.0 GB = 13.04 GiB. Activations, KV cache and runtime buffers are not included.
    """
    n_params = _check_non_negative(n_params, "n_params")
    total_bytes = weight_bytes(n_params, 8 * _bytes_per_param(dtype))
    return total_bytes / GB, total_bytes / GiB


def kv_cache_bytes(
    n_layers: int,
    n_ctx: int,
    d_model: int,
    bytes_per_value: float = 2,
    batch: int = 1,
    n_heads: int | None = None,
    n_kv_heads: int | None = None,
) -> int:
    """KV-cache size in bytes: ``2 · L · n · d · B · batch · (n_kv_heads / n_heads)``.

    The 2 is one key and one value vector per token and layer. With grouped-query attention the
    keys and values are shared by groups of query heads, which divides the cache by
    ``n_heads / n_kv_heads`` (pass both, or neither for plain multi-head attention).
    """
    n_layers = _check_positive_int(n_layers, "n_layers")
    n_ctx = _check_positive_int(n_ctx, "n_ctx", allow_zero=True)
    d_model = _check_positive_int(d_model, "d_model")
    bytes_per_value = _check_positive(bytes_per_value, "bytes_per_value")
    batch = _check_positive_int(batch, "batch")
    if (n_heads is None) != (n_kv_heads is None):
        raise ValueError("pass both n_heads and n_kv_heads (grouped-query attention) or neither (MHA)")
    n_kv, head_dim = 1, d_model  # MHA: one "head" as wide as the model holds every key
    if n_heads is not None:
        n_heads = _check_positive_int(n_heads, "n_heads")
        n_kv_heads = _check_positive_int(n_kv_heads, "n_kv_heads")
        if n_kv_heads > n_heads or n_heads % n_kv_heads:
            raise ValueError(
                f"n_kv_heads must divide n_heads (each KV head serves a whole group of query heads), "
                f"got n_heads={n_heads}, n_kv_heads={n_kv_heads}"
            )
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads})")
        n_kv, head_dim = n_kv_heads, d_model // n_heads
    total = kv_cache_values(n_layers, batch, n_ctx, n_kv, head_dim) * bytes_per_value
    if total != int(total):
        raise ValueError(f"bytes_per_value={bytes_per_value} gives a fractional byte count ({total})")
    return int(total)


def inference_memory_gb(weights_gb: float, kv_gb: float, overhead: float = 0.25) -> float:
    """``(weights + KV) · (1 + overhead)`` in GB: the chapter's rule of thumb (20–30 % extra).

    The overhead covers activations, runtime buffers and fragmentation, so it applies to the whole
    sum, not to the weights only: 7B fp16 with a 4k-token KV cache → (14 + 2.147)·1.25 = 20.18 GB.
    """
    weights_gb = _check_non_negative(weights_gb, "weights_gb")
    kv_gb = _check_non_negative(kv_gb, "kv_gb")
    overhead = _check_non_negative(overhead, "overhead")
    return memory_needed(weights_gb, kv_gb, overhead=overhead)


def fits_on_gpu(weights_gb: float, kv_gb: float, gpu_gb: float, overhead: float = 0.25) -> bool:
    """True when :func:`inference_memory_gb` is at most ``gpu_gb`` (all in decimal GB)."""
    gpu_gb = _check_positive(gpu_gb, "gpu_gb")
    return inference_memory_gb(weights_gb, kv_gb, overhead) <= gpu_gb


def moe_active_fraction(total_params: float, active_params: float) -> float:
    """Fraction of a mixture-of-experts model used per token: ``active / total`` (600B/30B → 0.05)."""
    total_params = _check_positive(total_params, "total_params")
    active_params = _check_positive(active_params, "active_params")
    if active_params > total_params:
        raise ValueError(
            f"active_params ({active_params:g}) cannot exceed total_params ({total_params:g})"
        )
    return active_params / total_params


def moe_weights_and_flops(total_params: float, active_params: float, dtype: str = "fp16") -> tuple[float, float]:
    """``(weights GB, FLOPs per token)`` of a mixture-of-experts model: memory follows the total, compute the active.

    Every expert must sit in memory, so the weights take ``total · bytes_per_param`` (decimal GB); each token
    only goes through the active parameters, about ``2 · active`` FLOPs (one multiply-add per parameter).
    600B total / 30B active in fp16: (1200.0, 6e10), against (140.0, 1.4e11) for a dense 70B.
    """
    moe_active_fraction(total_params, active_params)  # checks 0 < active <= total
    return weight_memory(total_params, dtype)[0], 2.0 * float(active_params)


def flops_per_token_ratio(dense_params: float, moe_active_params: float) -> float:
    """Compute per token of a dense model relative to an MoE one (both ≈ 2·params FLOPs per token)."""
    dense_params = _check_positive(dense_params, "dense_params")
    moe_active_params = _check_positive(moe_active_params, "moe_active_params")
    return dense_params / moe_active_params


_CANDIDATE_KEYS = ("name", "n_params", "dtype", "kv_gb", "quality")


def choose_model(candidates: list[dict], gpu_gb: float, overhead: float = 0.25) -> str:
    """Name of the highest-``quality`` candidate whose weights + KV (+ overhead) fit in ``gpu_gb``.

    Each candidate is a dict with ``name``, ``n_params``, ``dtype``, ``kv_gb`` (decimal GB) and
    ``quality`` (any number where larger is better). Bigger is not always feasible: on an 8 GB GPU
    a 7B model only fits quantised to 4 bits. Ties in quality go to the smaller memory footprint.
    Raises ``ValueError`` when nothing fits.
    """
    if not isinstance(candidates, (list, tuple)) or not candidates:
        raise ValueError("candidates must be a non-empty list of dicts")
    gpu_gb = _check_positive(gpu_gb, "gpu_gb")
    best = None
    for i, cand in enumerate(candidates):
        if not isinstance(cand, dict):
            raise TypeError(f"candidates[{i}] must be a dict, got {type(cand).__name__}")
        missing = [k for k in _CANDIDATE_KEYS if k not in cand]
        if missing:
            raise ValueError(f"candidates[{i}] is missing keys {missing}; expected {list(_CANDIDATE_KEYS)}")
        weights_gb, _ = weight_memory(cand["n_params"], cand["dtype"])
        need = inference_memory_gb(weights_gb, cand["kv_gb"], overhead)
        if need > gpu_gb:
            continue
        key = (float(cand["quality"]), -need)
        if best is None or key > best[0]:
            best = (key, cand["name"])
    if best is None:
        raise ValueError(f"no candidate fits in {gpu_gb} GB (with overhead {overhead})")
    return best[1]


def attention_cost(n: int, d_k: int = 1) -> int:
    """Pairwise work of self-attention over ``n`` tokens: ``n² · d_k`` multiply-adds for ``Q Kᵀ``.

    With ``d_k=1`` it is the number of token pairs, the n² that makes long contexts expensive:
    doubling ``n`` multiplies it by 4.
    """
    n = _check_positive_int(n, "n", allow_zero=True)
    d_k = _check_positive_int(d_k, "d_k")
    return n * n * d_k


def attention_flops(n: int, d_k: int, d_v: int) -> int:
    """FLOPs of one attention head over ``n`` tokens without a causal shortcut: ``2n²d_k + 2n²d_v``.

    Convention: one multiply-add counts as 2 FLOPs. ``Q Kᵀ`` is an (n×d_k)·(d_k×n) product,
    n²·d_k multiply-adds; ``A V`` is (n×n)·(n×d_v), n²·d_v multiply-adds. The softmax and the
    scaling (O(n²)) are not counted. A causal kernel that skips the masked half does about half.
    """
    n = _check_positive_int(n, "n", allow_zero=True)
    d_k = _check_positive_int(d_k, "d_k")
    d_v = _check_positive_int(d_v, "d_v")
    return 2 * n * n * d_k + 2 * n * n * d_v
