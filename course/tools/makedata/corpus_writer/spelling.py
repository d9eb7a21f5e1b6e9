"""Spelling checks with Debian's Spanish dictionary (``hunspell -d es_ES``), when it is installed.

``hunspell`` and ``hunspell-es`` are Debian packages (listed in ``.ci/debian-packages``); nothing
here is needed to load or train on the corpus, only to measure it. ``unknown_words`` returns
``None`` when the checker is missing, so callers can say so instead of failing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter

__all__ = ["DICTIONARY", "available", "unknown_words", "valid_word_rate"]

DICTIONARY = "es_ES"
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*", re.UNICODE)


def available() -> bool:
    """Is ``hunspell`` installed with the ``es_ES`` dictionary?"""
    if shutil.which("hunspell") is None:
        return False
    try:
        done = subprocess.run(["hunspell", "-d", DICTIONARY, "-l"], input="casa\n", capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and "Can't open" not in done.stderr


def unknown_words(words: list[str]) -> set[str] | None:
    """The words of ``words`` that the dictionary does not accept (``None`` if hunspell is missing).

    Each distinct word is checked once, on its own line (``hunspell -l`` prints the rejected ones).
    """
    if not available():
        return None
    distinct = sorted(set(words))
    if not distinct:
        return set()
    done = subprocess.run(["hunspell", "-d", DICTIONARY, "-l"], input="\n".join(distinct) + "\n",
                          capture_output=True, text=True, encoding="utf-8", timeout=600, check=True)
    return set(done.stdout.split())


def words_of(text: str) -> list[str]:
    """The words of ``text`` as a spell checker sees them (letters, with inner hyphens)."""
    return _WORD.findall(text)


def valid_word_rate(texts: list[str]) -> dict | None:
    """Share of word tokens in ``texts`` that the dictionary accepts, and the most common rejected words."""
    tokens = [w for t in texts for w in words_of(t)]
    bad = unknown_words(tokens)
    if bad is None:
        return None
    rejected = Counter(w for w in tokens if w in bad)
    n_bad = sum(rejected.values())
    return {"words": len(tokens), "unknown": n_bad, "rate": 1 - n_bad / len(tokens) if tokens else 1.0,
            "top_unknown": rejected.most_common(15)}
