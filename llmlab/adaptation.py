"""Deciding how to adapt a model, and what "open" means: the chapter's decision rules as code (chapter 06).

Two questions come before any training:

1. **Which technique?** The smallest one that solves the measured problem. Knowledge that changes
   (prices, stock, policies, private documents) belongs in retrieval (RAG), not in the weights:
   retraining every week to keep facts fresh is slow, costly and forgets. Weights are for
   behaviour: a format, a tone, a task. ``choose_adaptation`` encodes the chapter's table.
2. **How open is the model?** Downloadable weights alone make a model *open weights*, not *open
   source*: the Open Source AI Definition 1.0 (OSI, 2024) also asks for the code, the data (or
   enough information about it) and the training recipe, under terms that let anyone use, study,
   modify and share them. ``openness_category`` applies that rule to a model card.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ADAPTATION_TABLE", "OSI_LICENSES", "choose_adaptation", "openness_category"]

# need -> first reasonable option (the chapter's "what to choose" table)
ADAPTATION_TABLE = {
    "changing knowledge": "RAG",  # updated or private data: retrieve it, do not train it in
    "specific format": "instruction tuning",  # teach the output pattern with examples
    "few resources": "LoRA",  # few trainable parameters (QLoRA with a quantized base)
    "low latency": "distillation",  # a smaller model (or quantization) that answers faster
    "local control": "open weights",  # run and adapt it on your own machines, licence permitting
    "max quality": "large API model",  # sometimes the cost pays off
}

# Licences approved by the Open Source Initiative, as SPDX ids (lower case); a short list of the usual ones.
OSI_LICENSES = frozenset({"apache-2.0", "mit", "bsd-2-clause", "bsd-3-clause", "gpl-3.0", "lgpl-3.0", "mpl-2.0"})
CARD_KEYS = ("weights", "code", "data", "recipe", "license")


def choose_adaptation(need: str) -> str:
    """The first technique to try for ``need``, one of the keys of ``ADAPTATION_TABLE``."""
    if not isinstance(need, str):
        raise TypeError(f"need must be a str, got {type(need).__name__}")
    if need not in ADAPTATION_TABLE:
        raise ValueError(f"unknown need {need!r}; one of {sorted(ADAPTATION_TABLE)}")
    return ADAPTATION_TABLE[need]


def openness_category(card: Mapping) -> str:
    """``"closed"``, ``"open weights"`` or ``"open source"`` for a card with ``weights``, ``code``, ``data``, ``recipe`` and ``license``.

    - no downloadable weights: ``"closed"``;
    - weights, code, data and recipe all published under an OSI-approved licence: ``"open source"``;
    - anything in between (the usual case: weights under the maker's own licence): ``"open weights"``.
    """
    if not isinstance(card, Mapping):
        raise TypeError(f"card must be a dict, got {type(card).__name__}")
    missing = [k for k in CARD_KEYS if k not in card]
    if missing:
        raise ValueError(f"the card lacks {missing}; it needs {list(CARD_KEYS)}")
    if not card["weights"]:
        return "closed"
    license_id = str(card["license"]).strip().lower()
    if card["code"] and card["data"] and card["recipe"] and license_id in OSI_LICENSES:
        return "open source"
    return "open weights"
