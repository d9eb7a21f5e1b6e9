"""The shipped catalogs: real model configs (``data/models.json``) and devices (``data/hardware.json``).

Every number in both files carries its source. Names are lower-case keys such as ``"llama-2-7b"``
or ``"h100-sxm"``; lookups are case-insensitive.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from importlib import resources

from .hardware import Hardware
from .spec import ModelSpec

__all__ = [
    "load_model_catalog",
    "load_hardware_catalog",
    "get_model",
    "get_hardware",
    "model_entry",
    "hardware_entry",
]


@lru_cache(maxsize=None)
def _read(filename: str) -> dict:
    text = resources.files("llmlab").joinpath("data", filename).read_text(encoding="utf-8")
    return json.loads(text)


def _lookup(table: dict, name: str, what: str) -> tuple[str, dict]:
    if not isinstance(name, str):
        raise TypeError(f"{what} name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in table:
        raise KeyError(f"unknown {what} {name!r}; known: {', '.join(sorted(table))}")
    return key, table[key]


def model_entry(name: str) -> dict:
    """The raw catalog entry of a model: its HF ``config`` dict, ``sources`` and published count."""
    _, entry = _lookup(_read("models.json")["models"], name, "model")
    return copy.deepcopy(entry)


def hardware_entry(name: str) -> dict:
    """The raw catalog entry of a device, with the ``sources`` of each number."""
    _, entry = _lookup(_read("hardware.json")["hardware"], name, "hardware")
    return copy.deepcopy(entry)


def get_model(name: str) -> ModelSpec:
    """``ModelSpec`` of a catalog model, e.g. ``get_model("llama-3-8b")``."""
    key, entry = _lookup(_read("models.json")["models"], name, "model")
    return ModelSpec.from_hf_config(entry["config"], name=key)


def get_hardware(name: str) -> Hardware:
    """``Hardware`` of a catalog device, e.g. ``get_hardware("rtx-4090")``."""
    key, entry = _lookup(_read("hardware.json")["hardware"], name, "hardware")
    fields = {k: v for k, v in entry.items() if k in (
        "memory_gb", "bandwidth_gb_s", "fp16_tflops", "int8_tops", "fp16_acc16_tflops", "clock_ghz", "sm_count",
        "kind", "usable_memory_fraction", "display_name", "sources", "notes")}
    return Hardware(name=key, **fields)


def load_model_catalog() -> dict[str, ModelSpec]:
    """Every catalog model as ``{name: ModelSpec}``."""
    return {name: get_model(name) for name in _read("models.json")["models"]}


def load_hardware_catalog() -> dict[str, Hardware]:
    """Every catalog device as ``{name: Hardware}``."""
    return {name: get_hardware(name) for name in _read("hardware.json")["hardware"]}
