"""The data an adaptation is trained on, treated as an engineered product (chapter 06).

Four tools, each answering one question a dataset must answer before it trains anything:

- **Mixture** (F6.3, ``D_train = lam_1 D_1 + ... + lam_n D_n``): ``sample_sources`` draws which
  family each training example comes from with probabilities ``lam_i``, and ``mix_datasets``
  builds the mixed set. Raising one ``lam`` changes what the model gets good at.
- **Splits that cannot leak**: ``hash_split`` sends each example to train / validation / test by
  a hash of its *normalised* text (``normalize_text``: Unicode NFKC, case folded, spaces
  collapsed). The same example always lands on the same side, on every machine and in every run,
  and two copies that differ only in case or spacing («¿Puedo cambiar los auriculares?» and
  «¿puedo cambiar  los auriculares? ») land together: a duplicate can never be in train *and*
  in test.
- **Contamination**: ``contamination_rate`` is the share of evaluation items whose normalised
  text also appears in the training set (a contaminated test measures memory, not skill).
- **Dataset card**: ``dataset_card`` refuses a card without the fields an engineer reads first
  (provenance, license, version, size, ...; ``CARD_FIELDS``).
"""

from __future__ import annotations

import hashlib
import math
import random
import unicodedata
from collections.abc import Callable, Mapping, Sequence

__all__ = [
    "CARD_FIELDS",
    "contamination_rate",
    "dataset_card",
    "hash_split",
    "missing_card_fields",
    "mix_datasets",
    "normalize_text",
    "sample_sources",
    "split_of",
]

DEFAULT_SPLITS = {"train": 0.8, "validation": 0.1, "test": 0.1}

# What a dataset card must say (the chapter's list, plus a name and a version to cite it by).
CARD_FIELDS = {
    "name": "what the set is called",
    "version": "which exact version (a hash or a number): results cite it",
    "provenance": "where the examples come from, and who wrote or collected them",
    "format": "what one example looks like (free text, question/answer, preference pair, ...)",
    "size": "how many examples, tokens or documents",
    "quality": "filters, deduplication, human review",
    "license": "what it may be used for: training, redistribution, commercial use, derivatives",
    "coverage": "languages, domains, styles and tasks it covers",
    "gaps": "what it does not cover",
    "risks": "personal data, duplicates, biases of the sources",
    "contamination": "whether evaluation or benchmark items were checked for and removed",
    "traceability": "how to rebuild it: the version, the filters and the mixture",
}


def normalize_text(text: str) -> str:
    """The key duplicates share: Unicode NFKC, case folded, runs of whitespace collapsed to one space, trimmed.

    Accents are kept («el» and «él» are different words); full-width and compatibility forms,
    upper case and spacing are not (they do not make a new example).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    if not isinstance(weights, Mapping) or not weights:
        raise ValueError(f"weights must be a non-empty dict name -> weight, got {weights!r}")
    clean = {}
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise ValueError(f"weights[{name!r}] must be a finite number >= 0, got {w!r}")
        clean[name] = float(w)
    total = sum(clean.values())
    if total <= 0:
        raise ValueError("the weights add up to 0: at least one source needs a positive weight")
    return {name: w / total for name, w in clean.items()}  # lam_i, summing to 1


def sample_sources(weights: Mapping[str, float], n: int, seed: int = 0) -> list[str]:
    """``n`` source names, each drawn independently with probability ``weights[name] / sum(weights)``.

    Deterministic for a given ``seed`` (its own random generator; the global one is untouched).
    """
    lam = _check_weights(weights)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    rng = random.Random(seed)
    names = list(lam)
    return rng.choices(names, weights=[lam[k] for k in names], k=n)


def mix_datasets(sources: Mapping[str, Sequence], weights: Mapping[str, float], n: int, seed: int = 0) -> list:
    """A training set of ``n`` examples mixed from ``sources`` with proportions ``weights`` (F6.3).

    Each example: first its source (``sample_sources``), then a uniform example of that source,
    with replacement (a small, valuable source can be seen several times: that is what a large
    ``lam`` on it means). Sources with weight 0 are never drawn.
    """
    if not isinstance(sources, Mapping):
        raise TypeError(f"sources must be a dict name -> list of examples, got {type(sources).__name__}")
    missing = sorted(set(weights) - set(sources))
    if missing:
        raise ValueError(f"weights name sources that do not exist: {missing}")
    picks = sample_sources(weights, n, seed)
    for name in set(picks):
        if not isinstance(sources[name], Sequence) or len(sources[name]) == 0:
            raise ValueError(f"source {name!r} has weight > 0 but no examples")
    rng = random.Random(f"{seed}:items")
    return [sources[name][rng.randrange(len(sources[name]))] for name in picks]


def _bucket(text: str, salt: str) -> float:
    """A number in [0, 1) fixed by the normalised text and the salt."""
    digest = hashlib.sha256(f"{salt}\x00{normalize_text(text)}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _check_ratios(ratios) -> dict[str, float]:
    if isinstance(ratios, Mapping):
        named = dict(ratios)
    elif isinstance(ratios, Sequence) and not isinstance(ratios, str) and len(ratios) in (2, 3):
        named = dict(zip(("train", "validation", "test"), ratios))
    else:
        raise ValueError(f"ratios must be a dict split -> share, or 2 or 3 shares (train, validation[, test]), got {ratios!r}")
    if not named or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v for v in named.values()):
        raise ValueError(f"every share must be a number >= 0, got {named}")
    if not math.isclose(sum(named.values()), 1.0, abs_tol=1e-9):
        raise ValueError(f"the shares must add up to 1, got {sum(named.values())!r} ({named})")
    return named


def split_of(text: str, ratios=None, salt: str = "v1") -> str:
    """The split one example belongs to under ``hash_split`` (same ``ratios`` and ``salt``)."""
    named = _check_ratios(DEFAULT_SPLITS if ratios is None else ratios)
    if not isinstance(salt, str):
        raise TypeError(f"salt must be a str, got {type(salt).__name__}")
    u, edge = _bucket(text, salt), 0.0
    names = list(named)
    for name in names:
        edge += named[name]
        if u < edge:
            return name
    return names[-1]  # u is within rounding of 1.0


def hash_split(items: Sequence, ratios=None, salt: str = "v1", key: Callable | None = None) -> dict[str, list]:
    """Deterministic train / validation / test split by a hash of each item's normalised text.

    ``items``: strings, or anything with ``key(item)`` giving its text (e.g. the question of a
    chat example). ``ratios``: ``{"train": 0.8, "validation": 0.1, "test": 0.1}`` (default) or
    a tuple of 2 or 3 shares. ``salt`` is part of the hash: change it only to draw a new split on
    purpose, and record it with the data version. Items keep their order within each split.
    """
    named = _check_ratios(DEFAULT_SPLITS if ratios is None else ratios)
    out: dict[str, list] = {name: [] for name in named}
    for i, item in enumerate(items):
        text = key(item) if key is not None else item
        if not isinstance(text, str):
            raise TypeError(f"item {i} has no text: pass key=... returning a str for each item (got {type(text).__name__})")
        out[split_of(text, named, salt)].append(item)
    return out


def contamination_rate(train: Sequence[str], test: Sequence[str], normalize: bool = True) -> float:
    """Share of ``test`` items whose (normalised) text also appears in ``train``, in [0, 1].

    Every test item counts, duplicates included: the rate is what fraction of the score could
    come from memory. ``normalize=False`` compares raw strings (and misses case or spacing copies).
    """
    if isinstance(train, str) or isinstance(test, str):
        raise TypeError("train and test must be lists of strings, not one string")
    if len(test) == 0:
        raise ValueError("test is empty: the contamination rate of nothing is undefined")
    norm = normalize_text if normalize else (lambda s: s)
    seen = {norm(t) for t in train}
    return sum(norm(t) in seen for t in test) / len(test)


def missing_card_fields(card: Mapping) -> list[str]:
    """Required fields (``CARD_FIELDS``) that ``card`` lacks or leaves empty, in ``CARD_FIELDS`` order."""
    if not isinstance(card, Mapping):
        raise TypeError(f"card must be a dict, got {type(card).__name__}")
    return [f for f in CARD_FIELDS if card.get(f) in (None, "", [], {})]


def dataset_card(**fields) -> dict:
    """A dataset card (a dict) with every field of ``CARD_FIELDS``; a missing or empty one raises ``ValueError``.

    Extra fields are kept (for example ``splits`` or ``mixture``).
    """
    missing = missing_card_fields(fields)
    if missing:
        raise ValueError(f"the dataset card lacks {missing}: " + "; ".join(f"{f}: {CARD_FIELDS[f]}" for f in missing))
    return {**{f: fields[f] for f in CARD_FIELDS}, **{k: v for k, v in fields.items() if k not in CARD_FIELDS}}
