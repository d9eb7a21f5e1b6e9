"""What the builds share: progress lines, perplexity from a loss, one-line samples, and recipes as overrides."""

from __future__ import annotations

import copy
import math
import sys


def log(message: str, quiet: bool) -> None:
    """A progress line on stderr (the build's stdout is the folder it wrote)."""
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def ppl(nll: float) -> float:
    """Perplexity of a mean negative log-likelihood in nats."""
    return math.exp(nll)


def one_line(text: str) -> str:
    # Line breaks drawn as ⏎ so that each sample stays on one Markdown line. No strip(): the
    # continuation of a prompt usually starts with a space, and that space is part of the token.
    return text.replace("\n", "⏎") if text.strip() else "(nothing)"


def overridden(recipe: dict, changes: dict) -> dict:
    """A deep copy of ``recipe`` with ``changes`` written over it, dict by dict (the smoke recipe is the real
    one with smaller numbers: whatever it does not change stays as in the real build)."""
    out = copy.deepcopy(recipe)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = overridden(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out
