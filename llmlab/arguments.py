"""Argument checks shared by the library: clear English errors that name the argument.

``check_int`` / ``check_float`` / ``check_choice`` raise ``TypeError`` for a value of the wrong type and
``ValueError`` for one out of range (the model, its caches, LoRA); ``int_at_least`` raises ``ValueError`` for
both and returns the value as an int (the cost formulas, which take numbers from tables and notebooks).
"""

from __future__ import annotations

import math
from numbers import Integral, Real


def check_int(name: str, value, minimum: int = 1) -> int:
    """``value`` if it is an int (not a bool) >= ``minimum``; else ``TypeError`` / ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_float(name: str, value, *, positive: bool = True) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} ({value!r})")
    if not math.isfinite(value) or (positive and value <= 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def check_choice(name: str, value, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def int_at_least(value, name: str, minimum: int = 1) -> int:
    """``value`` as an int, if it is an integer (not a bool) >= ``minimum``; else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def real_number(value, name: str, *, positive: bool = False) -> float:
    """``value`` as a float, if it is a finite number >= 0 (> 0 with ``positive``); else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)
