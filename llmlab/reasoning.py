"""Reasoning as process (chapter 05): vote over several answers, and check a plan with arithmetic.

- ``self_consistency``: the most repeated answer among several sampled solutions (ties: the one
  seen first), after trimming spaces, so ``"14:30 "`` and ``"14:30"`` count as the same answer.
- ``extract_answer``: the last ``HH:MM`` time written in a rationale ("… así que salgo a las 14:30.").
- ``extract_number``: the last number written in a rationale, as a float: an optional minus sign (``-`` or
  ``−``) right before the digits, and a decimal part after a point or a comma ("… quedan −2,5 grados." → -2.5).
- ``vote_over_rationales``: self-consistency over whole rationales: extract each number, skip the
  rationales without one, and return ``(answer, votes)`` of the most repeated (ties: the one seen first).
- ``majority_vote_accuracy``: the chance that a majority of ``M`` independent samples is right when
  each is right with probability ``p`` and the wrong ones agree with each other (the binomial tail;
  the worst case for voting, since scattered wrong answers split their votes).
- ``plan_start_time``: backward time arithmetic, the "verifier tool" of the chapter's example
  (meeting at 16:00, 10 min early, 25 min taxi, 15 min to get ready: start at 15:10).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["self_consistency", "extract_answer", "extract_number", "vote_over_rationales", "majority_vote_accuracy", "plan_start_time", "parse_time"]

_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
# ASCII digits only ("\d" would also take other scripts' digits); the decimal separator needs a digit after it,
# so "son 3, 4 y 5" is three numbers and the full stop of "… 42." is not a decimal point.
_NUMBER = re.compile(r"[-\u2212]?[0-9]+(?:[.,][0-9]+)?")


def self_consistency(answers: Sequence[str]) -> str:
    """The mode of ``answers`` (strings, compared after ``strip()``); ties go to the first seen.

    ``["14:30", "14:30", "14:00", "14:30", "14:45"]`` gives ``"14:30"`` (3 votes of 5).
    """
    if isinstance(answers, str) or not isinstance(answers, Sequence):
        raise TypeError(f"answers must be a list of strings, got {type(answers).__name__}")
    if not answers:
        raise ValueError("answers is empty: there is nothing to vote on")
    if not all(isinstance(a, str) for a in answers):
        raise TypeError("every answer must be a string")
    counts = Counter(a.strip() for a in answers)  # insertion order: the first seen wins a tie
    return counts.most_common(1)[0][0]


def extract_answer(rationale: str) -> str | None:
    """The last ``HH:MM`` time in ``rationale`` (hours 0-23, written with 1 or 2 digits), as ``"HH:MM"``."""
    if not isinstance(rationale, str):
        raise TypeError(f"rationale must be a string, got {type(rationale).__name__}")
    found = _TIME.findall(rationale)
    if not found:
        return None
    hours, minutes = found[-1]
    return f"{int(hours):02d}:{minutes}"


def extract_number(rationale: str) -> float | None:
    """The last number in ``rationale`` as a float (``None`` if there is none); see the module docstring."""
    if not isinstance(rationale, str):
        raise TypeError(f"rationale must be a string, got {type(rationale).__name__}")
    found = _NUMBER.findall(rationale)
    if not found:
        return None
    return float(found[-1].replace("\u2212", "-").replace(",", "."))


def vote_over_rationales(rationales: Sequence[str]) -> tuple[float, int]:
    """``(answer, votes)``: the most repeated ``extract_number`` among ``rationales`` (ties: the first seen).

    Rationales without a number do not vote; ``ValueError`` if none of them has one.
    """
    if isinstance(rationales, str) or not isinstance(rationales, Sequence):
        raise TypeError(f"rationales must be a list of strings, got {type(rationales).__name__}")
    answers = [a for a in (extract_number(r) for r in rationales) if a is not None]
    if not answers:
        raise ValueError("no rationale has a number: there is nothing to vote on")
    answer, votes = Counter(answers).most_common(1)[0]  # insertion order: the first seen wins a tie
    return answer, int(votes)


def majority_vote_accuracy(p: float, M: int) -> float:
    """``P(more than M/2 of M samples are right) = sum_{j > M/2} C(M, j) p^j (1-p)^(M-j)``, ``M`` odd.

    ``p = 0.6, M = 5`` gives 0.68256: five votes at 60 % beat one sample.
    """
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    if isinstance(M, bool) or not isinstance(M, int) or M < 1 or M % 2 == 0:
        raise ValueError(f"M must be an odd int >= 1 (no ties between right and wrong), got {M!r}")
    return sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2 + 1, M + 1))


def parse_time(text: str) -> int:
    """Minutes after midnight of ``"HH:MM"`` (24-hour clock)."""
    if not isinstance(text, str) or not re.fullmatch(r"([01]?\d|2[0-3]):[0-5]\d", text.strip()):
        raise ValueError(f"time must be 'HH:MM' on a 24-hour clock, got {text!r}")
    hours, minutes = text.strip().split(":")
    return int(hours) * 60 + int(minutes)


def plan_start_time(meeting: str, early_min: int = 10, travel_min: int = 25, prep_min: int = 15) -> str:
    """When to start getting ready: ``meeting - early - travel - prep``, as ``"HH:MM"`` (wraps at midnight).

    ``plan_start_time("16:00")`` is ``"15:10"``; ``plan_start_time("00:20", 0, 45, 0)`` is ``"23:35"``.
    """
    start = parse_time(meeting)
    for name, value in (("early_min", early_min), ("travel_min", travel_min), ("prep_min", prep_min)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0 (minutes), got {value!r}")
        start -= value
    start %= 24 * 60
    return f"{start // 60:02d}:{start % 60:02d}"
