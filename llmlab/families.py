"""The map of chapter 05 as data: three levers, three levels, and the transformer families.

The labels are Spanish because students read them in lab 05. Lookups ignore case and
surrounding spaces; an unknown name raises ``KeyError`` listing the known ones.

- ``LEVERS``: what each technique buys a model — more *capacity* without paying for all of it per
  token, more *process* (compute spent thinking), or a wider *input*.
- ``LEVELS``: a *neural architecture* (a network shape), a *trained model* (a shape with learned
  weights) or a *system architecture* (models, data and tools wired together). RAG is a system,
  not a layer; Mixtral is a trained model whose architecture is a sparse MoE Transformer.
- ``FAMILIES``: which transformer family a well-known model belongs to.
"""

from __future__ import annotations

__all__ = ["LEVERS", "LEVELS", "FAMILIES", "lever_of", "level_of", "family_of"]

CAPACITY, PROCESS, INPUT = "capacidad", "proceso", "entrada"
LEVERS: dict[str, str] = {
    "mezcla de expertos": CAPACITY,
    "enrutador top-k": CAPACITY,
    "parámetros activos": CAPACITY,
    "cadena de pensamiento": PROCESS,
    "autoconsistencia": PROCESS,
    "árbol de pensamientos": PROCESS,
    "verificación con herramientas": PROCESS,
    "cómputo en inferencia": PROCESS,
    "parches de imagen": INPUT,
    "alineación contrastiva": INPUT,
    "conector visual": INPUT,
    "audio como tokens": INPUT,
}

ARCHITECTURE, MODEL, SYSTEM = "arquitectura neuronal", "modelo entrenado", "arquitectura de sistema"
LEVELS: dict[str, str] = {
    "transformer": ARCHITECTURE,
    "cnn": ARCHITECTURE,
    "rnn": ARCHITECTURE,
    "moe": ARCHITECTURE,
    "mamba": ARCHITECTURE,
    "difusión": ARCHITECTURE,
    "bert": MODEL,
    "gpt-2": MODEL,
    "t5": MODEL,
    "mixtral": MODEL,
    "clip": MODEL,
    "rag": SYSTEM,
    "agente con herramientas": SYSTEM,
    "cadena multimodal": SYSTEM,
    "modelo local cuantizado": SYSTEM,
}

FAMILIES: dict[str, str] = {
    "bert": "solo codificador",
    "gpt-2": "solo decodificador",
    "t5": "codificador-decodificador",
    "bart": "codificador-decodificador",
    "vit": "vision transformer",
    "switch transformer": "moe",
    "mixtral": "moe",
    "mamba": "contexto largo",
}


def _lookup(table: dict[str, str], name, what: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in table:
        raise KeyError(f"unknown {what} {name!r}; known: {', '.join(table)}")
    return table[key]


def lever_of(technique: str) -> str:
    """``"capacidad"``, ``"proceso"`` or ``"entrada"`` for a technique of ``LEVERS``."""
    return _lookup(LEVERS, technique, "technique")


def level_of(name: str) -> str:
    """``"arquitectura neuronal"``, ``"modelo entrenado"`` or ``"arquitectura de sistema"``."""
    return _lookup(LEVELS, name, "name")


def family_of(model: str) -> str:
    """The transformer family of a model of ``FAMILIES`` (``"solo decodificador"`` for GPT-2, ...)."""
    return _lookup(FAMILIES, model, "model")
