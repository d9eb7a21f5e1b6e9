"""How varied a corpus is, measured: distinct n-grams, near-duplicates (MinHash), vocabulary.

- **distinct-n**: unique word n-grams divided by all word n-grams. It falls as a corpus grows
  (common phrases repeat), so compare corpora on samples of the same number of words.
- **near-duplicates**: two documents are near-duplicates when the Jaccard similarity of their
  sets of word 5-grams ("shingles") is at least ``threshold``. All pairs of thousands of
  documents are too many to compare, so MinHash estimates the similarity with 126 hash minima
  per document, and locality-sensitive hashing (42 bands of 3 minima) proposes the candidate
  pairs; each candidate is then checked with the exact Jaccard similarity. With 42 bands of 3, a
  pair at Jaccard 0.5 becomes a candidate with probability 1 - (1 - 0.5³)⁴² ≈ 0.996.
- **vocabulary**: distinct lower-cased words.

Everything here uses fixed hash functions (CRC-32 and seeded integers), so the numbers are the
same on every machine and Python version.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections import Counter, defaultdict

import numpy as np

__all__ = ["MinHashIndex", "distinct_n", "jaccard", "near_duplicates", "shingles", "vocabulary", "words"]

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
N_PERM, BANDS, ROWS = 126, 42, 3
_PRIME = 4294967311  # the first prime above 2**32

# The hash functions h_i(x) = (a_i x + b_i) mod p; a_i and b_i come from SHA-256 of their index,
# not from a random generator whose stream might change between library versions.
def _coefficients(tag: str) -> np.ndarray:
    values = [int.from_bytes(hashlib.sha256(f"{tag}{i}".encode()).digest()[:4], "big") % (2**31 - 2) + 1 for i in range(N_PERM)]
    return np.array(values, dtype=np.uint64)


_A, _B = _coefficients("a"), _coefficients("b")


def words(text: str) -> list[str]:
    """Lower-cased words (letters only; digits and punctuation dropped)."""
    return _WORD.findall(text.lower())


def shingles(text: str, k: int = 5) -> set[str]:
    w = words(text)
    if len(w) < k:
        return {" ".join(w)} if w else set()
    return {" ".join(w[i:i + k]) for i in range(len(w) - k + 1)}


def jaccard(a: set, b: set) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def distinct_n(texts: list[str], n: int) -> float:
    """Unique n-grams / all n-grams over ``texts`` (n-grams do not cross document boundaries)."""
    total, unique = 0, set()
    for t in texts:
        w = words(t)
        grams = [tuple(w[i:i + n]) for i in range(len(w) - n + 1)]
        total += len(grams)
        unique.update(grams)
    return len(unique) / total if total else 0.0


def vocabulary(texts: list[str]) -> Counter:
    c: Counter = Counter()
    for t in texts:
        c.update(words(t))
    return c


def _signature(sh: set[str]) -> np.ndarray:
    if not sh:
        return np.full(N_PERM, _PRIME, dtype=np.uint64)
    x = np.fromiter((zlib.crc32(s.encode("utf-8")) for s in sh), dtype=np.uint64, count=len(sh))
    return ((np.outer(_A, x) + _B[:, None]) % _PRIME).min(axis=1)


class MinHashIndex:
    """Documents added one by one; ``query`` returns the ones that look like a new document."""

    def __init__(self, threshold: float = 0.5):
        self.threshold = threshold
        self.buckets: dict[tuple, list[int]] = defaultdict(list)
        self.shingle_sets: list[set] = []

    def candidates(self, sh: set[str]) -> set[int]:
        sig = _signature(sh)
        found = set()
        for b in range(BANDS):
            found.update(self.buckets.get((b, *sig[b * ROWS:(b + 1) * ROWS].tolist()), ()))
        return found

    def best_match(self, sh: set[str]) -> tuple[int | None, float]:
        """The indexed document most similar to ``sh`` among the candidates, and its exact Jaccard."""
        best, score = None, 0.0
        for i in self.candidates(sh):
            j = jaccard(sh, self.shingle_sets[i])
            if j > score:
                best, score = i, j
        return best, score

    def add(self, sh: set[str]) -> int:
        sig = _signature(sh)
        i = len(self.shingle_sets)
        self.shingle_sets.append(sh)
        for b in range(BANDS):
            self.buckets[(b, *sig[b * ROWS:(b + 1) * ROWS].tolist())].append(i)
        return i


def near_duplicates(texts: list[str], threshold: float = 0.5) -> dict:
    """Near-duplicate statistics of ``texts``: how many documents have an earlier near-twin.

    Returns ``{"documents", "near_duplicates", "rate", "threshold", "max_jaccard_quantiles"}`` where
    the quantiles (50 %, 90 %, 99 %, max) are of each document's highest Jaccard similarity with an
    earlier candidate (0 when it has no candidate).
    """
    index = MinHashIndex(threshold)
    best_scores, dups = [], 0
    for t in texts:
        sh = shingles(t)
        _, score = index.best_match(sh)
        best_scores.append(score)
        dups += score >= threshold
        index.add(sh)
    q = np.quantile(best_scores, [0.5, 0.9, 0.99, 1.0]).tolist() if best_scores else [0, 0, 0, 0]
    return {"documents": len(texts), "near_duplicates": int(dups), "rate": dups / len(texts) if texts else 0.0,
            "threshold": threshold, "max_jaccard_quantiles": [round(x, 3) for x in q]}
