"""Argument checks shared by the cost modules (clear English errors naming the argument)."""

from __future__ import annotations

from numbers import Integral


def int_at_least(value, name: str, minimum: int = 1) -> int:
    """``value`` as an int, if it is an integer (not a bool) >= ``minimum``; else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)
