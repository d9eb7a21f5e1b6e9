"""Chapter 07's serving budget: KV memory per request, latency alone and shared, batching, price.

Two models of "many users", on purpose:

* The chapter's **fixed capacity**: the server makes ``capacity`` tokens/s in total and ``users``
  share it, so each sees ``capacity / users``: 0.85 s TTFT + 300 tokens at 45 tok/s = 7.52 s
  alone, but 0.85 + 300 / (180/12) = 20.85 s when 12 users share 180 tok/s.
* The **memory-bound refinement** (:func:`batched_decode`): one decode step reads the weights
  once for the whole batch, so total throughput *grows* with the batch until the KV reads or the
  arithmetic take over; each user slows down much less than 1/users.

Units: bytes, GB = 1e9, GiB = 2**30, MiB = 2**20, seconds, tokens/s, currency per hour.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from llmlab.arguments import int_at_least
from .basics import GB, GiB, MiB
from .footprint import kv_cache_values, weight_bytes
from .hardware import Hardware
from .spec import ModelSpec
from .speed import DEFAULT_EFFICIENCY, Efficiency, decode_step, ttft_s

__all__ = [
    "kv_bytes",
    "kv_bytes_per_token",
    "kv_mib_per_token",
    "kv_gib_for_context",
    "weight_memory_gb",
    "serving_memory_gb",
    "max_concurrent_sequences",
    "total_latency_s",
    "shared_latency_s",
    "latency_percentiles",
    "batched_decode",
    "batching_curve",
    "latency_with_users",
    "cost_per_million_tokens",
    "api_cost",
    "energy_per_token_j",
    "choose_deployment",
]


_int = int_at_least


def _num(value, name, positive=True):
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def kv_bytes(n_layers: int, batch: int, seq_len: int, n_kv_heads: int, head_dim: int,
             bytes_per_value: float = 2) -> int:
    """KV cache in bytes, ``2 · L · B · S · H_kv · d_h · bytes`` (chapter 07, F7.3).

    L=32, B=8, S=4096, d_h=128, fp16: MHA (32 KV heads) 17.18 GB, GQA-8 4.29 GB, MQA 0.54 GB.
    """
    n_layers, batch = _int(n_layers, "n_layers"), _int(batch, "batch")
    seq_len = _int(seq_len, "seq_len", minimum=0)
    n_kv_heads, head_dim = _int(n_kv_heads, "n_kv_heads"), _int(head_dim, "head_dim")
    total = kv_cache_values(n_layers, batch, seq_len, n_kv_heads, head_dim) * _num(bytes_per_value, "bytes_per_value")
    return int(round(total))


def kv_bytes_per_token(n_layers: int, n_kv_heads: int, head_dim: int, bytes_per_value: float = 2) -> int:
    """KV bytes per token of context: Llama-2-7B-like (32, 32, 128, fp16) → 524,288 B = 0.5 MiB."""
    return kv_bytes(n_layers, 1, 1, n_kv_heads, head_dim, bytes_per_value)


def kv_mib_per_token(n_layers: int, n_kv_heads: int, head_dim: int, bytes_per_value: float = 2) -> float:
    """The guide's rule of thumb in MiB (2**20 bytes): 0.5 MiB per token for a 7B MHA model."""
    return kv_bytes_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value) / MiB


def kv_gib_for_context(tokens: int, n_layers: int, n_kv_heads: int, head_dim: int,
                       bytes_per_value: float = 2, batch: int = 1) -> float:
    """KV cache in GiB for ``tokens`` of context: 7B MHA → 2 / 16 / 64 GiB at 4K / 32K / 128K."""
    return kv_bytes(n_layers, batch, tokens, n_kv_heads, head_dim, bytes_per_value) / GiB


def weight_memory_gb(n_params: float, bits: float) -> float:
    """``N · bits / 8`` in decimal GB (chapter 07, F7.5): 7e9 at 16 / 8 / 4 bits → 14 / 7 / 3.5."""
    return weight_bytes(_num(n_params, "n_params", positive=False), _num(bits, "bits")) / GB


def serving_memory_gb(n_params: float, bits: float, n_layers: int, batch: int, seq_len: int,
                      n_kv_heads: int, head_dim: int, kv_bytes_per_value: float = 2) -> dict:
    """Weights plus KV cache in GB (before activations and overhead), as ``{weights, kv, total}``.

    7B fp16 MHA, B=8, S=4096 → 14 + 17.18 = 31.18 GB: the KV cache outweighs the weights.
    The weight bits and the KV bytes are separate knobs (4-bit weights do not shrink the cache).
    """
    weights = weight_memory_gb(n_params, bits)
    kv = kv_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, kv_bytes_per_value) / GB
    return {"weights": weights, "kv": kv, "total": weights + kv}


def max_concurrent_sequences(device_gb: float, weights_gb: float, kv_per_seq_gb: float,
                             reserve_frac: float = 0.0) -> int:
    """How many sequences' KV caches fit next to the weights: ``floor((device·(1-reserve) - weights) / kv)``.

    80 GB, 14 GB of weights, 4096-token sequences: MHA 2.147 GB each → 30, GQA-8 → 122, MQA → 983.
    Returns 0 when the weights alone do not fit.
    """
    device_gb = _num(device_gb, "device_gb")
    weights_gb = _num(weights_gb, "weights_gb", positive=False)
    kv_per_seq_gb = _num(kv_per_seq_gb, "kv_per_seq_gb")
    reserve_frac = _num(reserve_frac, "reserve_frac", positive=False)
    if reserve_frac >= 1:
        raise ValueError(f"reserve_frac must be < 1, got {reserve_frac}")
    free = device_gb * (1 - reserve_frac) - weights_gb
    return max(0, int(math.floor(free / kv_per_seq_gb + 1e-9)))


def total_latency_s(ttft_s: float, n_out: int, tokens_per_s: float) -> float:
    """``TTFT + n_out / tokens_per_s`` (chapter 07, F7.2): 0.85 s + 300 / 45 = 7.5167 s."""
    return _num(ttft_s, "ttft_s", positive=False) + _int(n_out, "n_out", 0) / _num(tokens_per_s, "tokens_per_s")


def shared_latency_s(ttft_s: float, n_out: int, capacity_tok_s: float, users: int) -> float:
    """Latency when ``users`` share a fixed ``capacity_tok_s`` (chapter 07, F7.4):
    ``TTFT + n_out / (capacity / users)``; 0.85 + 300 / (180 / 12) = 20.85 s."""
    users = _int(users, "users")
    return total_latency_s(ttft_s, n_out, _num(capacity_tok_s, "capacity_tok_s") / users)


def latency_percentiles(samples, qs=(50, 95, 99)) -> dict:
    """Percentiles (linear interpolation, NumPy's default) of latency samples: ``{50: p50, ...}``.

    Users feel the tail: report p95/p99, never the mean as if it were a percentile.
    """
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("samples must be a non-empty 1-D sequence of finite numbers")
    return {q: float(np.percentile(x, q)) for q in qs}


def batched_decode(spec: ModelSpec, hardware: Hardware, batch: int, context: int = 1024,
                   weight_format: str = "fp16", kv_bytes_per_value: float | None = None,
                   efficiency: Efficiency = DEFAULT_EFFICIENCY) -> dict:
    """One decode step for ``batch`` concurrent sequences of ``context`` tokens each.

    Returns ``step_s``, ``per_user_tokens_per_s`` (what each user sees), ``aggregate_tokens_per_s``
    (what the server produces), ``bound`` and the arithmetic intensity (≈ batch at fp16).
    """
    batch = _int(batch, "batch")
    step = decode_step(spec, hardware, weight_format, context, batch, kv_bytes_per_value, efficiency)
    return {
        "batch": batch,
        "step_s": step.total_s,
        "per_user_tokens_per_s": 1.0 / step.total_s,
        "aggregate_tokens_per_s": batch / step.total_s,
        "bound": step.bound,
        "arithmetic_intensity": step.arithmetic_intensity,
        "weights_and_kv_gb_read": step.bytes / GB,
    }


def batching_curve(spec: ModelSpec, hardware: Hardware, batches=(1, 2, 4, 8, 16, 32, 64, 128, 256),
                   context: int = 1024, weight_format: str = "fp16", kv_bytes_per_value: float | None = None,
                   efficiency: Efficiency = DEFAULT_EFFICIENCY) -> list[dict]:
    """:func:`batched_decode` for several batch sizes, ready to plot (throughput vs per-user speed)."""
    return [batched_decode(spec, hardware, b, context, weight_format, kv_bytes_per_value, efficiency)
            for b in batches]


def latency_with_users(spec: ModelSpec, hardware: Hardware, users: int, prompt_tokens: int, new_tokens: int,
                       weight_format: str = "fp16", kv_bytes_per_value: float | None = None,
                       efficiency: Efficiency = DEFAULT_EFFICIENCY) -> dict:
    """Latency of one request when ``users`` requests run together (continuous batching, all
    decoding at once), from the roofline instead of a fixed capacity.

    TTFT is the batched prefill of all prompts (the worst case: they arrive together); the decode
    rate per user is evaluated at the mean context of the answer.
    """
    users = _int(users, "users")
    _int(new_tokens, "new_tokens")
    first = ttft_s(spec, hardware, prompt_tokens, weight_format, users, efficiency)
    mid_context = prompt_tokens + new_tokens // 2
    rate = batched_decode(spec, hardware, users, mid_context, weight_format, kv_bytes_per_value, efficiency)
    per_user = rate["per_user_tokens_per_s"]
    return {
        "users": users,
        "ttft_s": first,
        "per_user_tokens_per_s": per_user,
        "aggregate_tokens_per_s": rate["aggregate_tokens_per_s"],
        "total_s": total_latency_s(first, new_tokens, per_user),
    }


def cost_per_million_tokens(price_per_hour: float, tokens_per_s: float, n_devices: int = 1) -> float:
    """Price of a million generated tokens on rented hardware:
    ``price_per_hour · n_devices / (3600 · tokens_per_s) · 1e6``. $2.50/h at 1000 tok/s → $0.694.

    ``tokens_per_s`` is the aggregate throughput of the whole deployment (all users together).
    """
    price = _num(price_per_hour, "price_per_hour", positive=False)
    return price * _int(n_devices, "n_devices") / (3600.0 * _num(tokens_per_s, "tokens_per_s")) * 1e6


def api_cost(n_in: int, n_out: int, price_in_per_million: float, price_out_per_million: float) -> float:
    """Cost of one API call priced per million input and output tokens."""
    return (_int(n_in, "n_in", 0) * _num(price_in_per_million, "price_in_per_million", positive=False)
            + _int(n_out, "n_out", 0) * _num(price_out_per_million, "price_out_per_million", positive=False)) / 1e6


def energy_per_token_j(watts: float, tokens_per_s: float) -> float:
    """Joules per token, ``watts / tokens_per_s``."""
    return _num(watts, "watts") / _num(tokens_per_s, "tokens_per_s")


DEPLOYMENTS = ("local", "nube", "ninguno")


def choose_deployment(weights_gb: float, kv_gb: float, device_gb: float, offline: bool = False,
                      private: bool = False, reserve_frac: float = 0.2) -> str:
    """Chapter 07's edge-vs-cloud rule, as lab 08 states it; returns ``"local"``, ``"nube"`` or ``"ninguno"``.

    The model fits on the device when ``weights_gb + kv_gb <= device_gb · (1 - reserve_frac)`` (the
    reserve is for the OS and the app). Working offline or keeping the data on the device needs a
    local model: ``"local"`` if it fits, else ``"ninguno"`` (quantise or pick a smaller model; privacy
    does not make a model fit). Without either need, ``"nube"``. Labels are Spanish: they are what the
    lab's students return.
    """
    weights_gb = _num(weights_gb, "weights_gb", positive=False)
    kv_gb = _num(kv_gb, "kv_gb", positive=False)
    device_gb = _num(device_gb, "device_gb")
    reserve_frac = _num(reserve_frac, "reserve_frac", positive=False)
    if reserve_frac >= 1:
        raise ValueError(f"reserve_frac must be < 1, got {reserve_frac}")
    fits = weights_gb + kv_gb <= device_gb * (1 - reserve_frac)
    if offline or private:
        return "local" if fits else "ninguno"
    return "nube"
