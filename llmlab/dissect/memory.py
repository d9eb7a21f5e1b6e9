"""Does it fit? Weights plus the KV cache against the device's memory, in decimal GB."""

from __future__ import annotations

import numbers

from llmlab.arguments import real_number
from llmlab.cost.footprint import kv_cache_values, memory_needed, weight_bytes


def fits_on_device(n_params: float, weight_bits: float, context: int, n_layers: int, n_kv_heads: int,
                   head_dim: int, device_gb: float, kv_bytes: float = 2, batch: int = 1,
                   reserve_gb: float = 0.0) -> bool:
    """Do the weights and the KV cache of ``batch`` sequences of ``context`` tokens fit in ``device_gb``?

    ``weights = N · bits / 8`` and ``KV = 2 · L · B · S · H_kv · d_h · kv_bytes``, both in decimal GB,
    plus ``reserve_gb``; fits when the total is ``<= device_gb``. The weight bits and the KV bytes
    are separate knobs: 4-bit weights leave an fp16 KV cache as big as before (guide G-M2).
    7B, GQA-8, 128K tokens on 24 GB: fp16 weights 14 + 17.18 = 31.18 GB (no); 4-bit weights
    3.5 + 17.18 = 20.68 GB (yes).
    """
    weights = weight_bytes(real_number(n_params, "n_params"), real_number(weight_bits, "weight_bits", positive=True))
    for value, name in ((n_layers, "n_layers"), (n_kv_heads, "n_kv_heads"), (head_dim, "head_dim"), (batch, "batch")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if isinstance(context, bool) or not isinstance(context, int) or context < 0:
        raise ValueError(f"context must be an int >= 0, got {context!r}")
    kv = kv_cache_values(n_layers, batch, context, n_kv_heads, head_dim) * real_number(kv_bytes, "kv_bytes", positive=True)
    device_gb = real_number(device_gb, "device_gb", positive=True)
    return memory_needed(weights, kv) / 1e9 + real_number(reserve_gb, "reserve_gb") <= device_gb


def kv_growth_over_turns(turn_tokens, n_layers: int, n_kv_heads: int, head_dim: int,
                         bytes_per_value: float = 2, system_tokens: int = 0) -> list[float]:
    """KV cache of one chat, in GiB (2**30 bytes), after each of its turns (guide G-8, TG.11).

    A chat resends its whole history, so after turn ``i`` the cache holds ``system_tokens`` plus the
    tokens of turns ``0..i``; each token costs ``2 · L · H_kv · d_h · bytes_per_value`` bytes. Returns one
    float per turn (an empty list for no turns). Token counts must be integers >= 0 (``2.5`` is refused).
    A 7B MHA model in FP16 (0.5 MiB per token) after eight turns of 2 048 tokens: 16 384 tokens, 8 GiB.
    """
    for value, name in ((n_layers, "n_layers"), (n_kv_heads, "n_kv_heads"), (head_dim, "head_dim")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    per_token = kv_cache_values(n_layers, 1, 1, n_kv_heads, head_dim) * real_number(
        bytes_per_value, "bytes_per_value", positive=True)
    counts = [system_tokens, *turn_tokens]
    for i, n in enumerate(counts):
        name = "system_tokens" if i == 0 else f"turn_tokens[{i - 1}]"
        if isinstance(n, bool) or not isinstance(n, numbers.Real) or n < 0 or n != int(n):
            raise ValueError(f"{name} must be an integer >= 0, got {n!r}")
    history, growth = int(system_tokens), []
    for n in turn_tokens:
        history += int(n)
        growth.append(history * per_token / 2**30)
    return growth
