"""Numbers written the Spanish way, for what the notebooks print.

The course keeps Python's decimal point (``0.5``, as students type it) and groups thousands with a narrow
no-break space, as the RAE and the SI recommend: ``6 442 450 944``. Four-digit numbers are not grouped
(``2048``), and a percentage is separated from its number (``12.5 %``).

>>> fmt_int(6442450944)
'6\\u202f442\\u202f450\\u202f944'
>>> fmt_num(1234567.891, 2)
'1\\u202f234\\u202f567.89'
>>> fmt_bytes(14e9, "GB")
'14.00 GB'
"""

from __future__ import annotations

import math
import numbers

__all__ = ["THIN", "fmt_int", "fmt_num", "fmt_pct", "fmt_bytes"]

THIN = "\u202f"  # narrow no-break space: groups thousands and never breaks a number across lines

_UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def _group(digits: str) -> str:
    if len(digits) <= 4:  # 2048, not 2 048
        return digits
    head = len(digits) % 3 or 3
    return THIN.join([digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)])


def _real(x, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        if hasattr(x, "item") and getattr(x, "size", 1) == 1:  # NumPy / torch scalars
            return _real(x.item(), name)
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    return x


def fmt_int(n) -> str:
    """An integer with thousands grouped by a narrow no-break space (``1234567`` → ``1 234 567``)."""
    value = _real(n, "n")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"n must be an integer value, got {value!r}")
        value = int(value)
    sign = "-" if value < 0 else ""
    return sign + _group(str(abs(int(value))))


def fmt_num(x, decimals: int = 2) -> str:
    """A number with a fixed count of decimals, decimal point, and grouped thousands."""
    value = float(_real(x, "x"))
    if decimals < 0:
        raise ValueError(f"decimals must be >= 0, got {decimals}")
    if not math.isfinite(value):
        return {math.inf: "∞", -math.inf: "-∞"}.get(value, "NaN")
    text = f"{abs(value):.{decimals}f}"
    whole, _, frac = text.partition(".")
    sign = "-" if value < 0 and float(text) != 0 else ""
    return sign + _group(whole) + (f".{frac}" if frac else "")


def fmt_pct(fraction, decimals: int = 1) -> str:
    """A fraction as a percentage with a space before the sign (``0.125`` → ``12.5 %``)."""
    return f"{fmt_num(float(_real(fraction, 'fraction')) * 100, decimals)}{THIN}%"


def fmt_bytes(n_bytes, unit: str = "GB", decimals: int = 2) -> str:
    """A byte count in one unit: decimal (KB, MB, GB, TB: powers of 1000) or binary (KiB … TiB: powers of 1024)."""
    if unit not in _UNITS:
        raise ValueError(f"unit must be one of {', '.join(_UNITS)}, got {unit!r}")
    return f"{fmt_num(float(_real(n_bytes, 'n_bytes')) / _UNITS[unit], decimals)} {unit}"
