"""llmlab.datasets: mixture sampling, leak-proof hash splits, contamination rate and dataset cards (mistakes 6-M1, 6-M2)."""

import math
import random

import pytest

from llmlab import datasets as ds


def test_normalize_text():
    assert ds.normalize_text("¿Puedo cambiar los auriculares?") == ds.normalize_text("¿puedo cambiar  los auriculares? ")
    assert ds.normalize_text("Ｃａｆｅ") == "cafe"  # full-width letters (NFKC)
    assert ds.normalize_text("cafe\u0301") == ds.normalize_text("café")  # e + combining accent = é
    assert ds.normalize_text("el") != ds.normalize_text("él")  # accents are kept
    with pytest.raises(TypeError):
        ds.normalize_text(3)


def test_mixture_follows_the_weights():
    n = 10_000
    picks = ds.sample_sources({"web": 0.7, "code": 0.2, "math": 0.1}, n, seed=0)
    counts = {k: picks.count(k) for k in ("web", "code", "math")}
    chi2 = 0.0
    for name, lam in (("web", 0.7), ("code", 0.2), ("math", 0.1)):
        sigma = math.sqrt(n * lam * (1 - lam))
        assert abs(counts[name] - n * lam) < 3 * sigma, counts
        chi2 += (counts[name] - n * lam) ** 2 / (n * lam)
    assert chi2 < 13.8  # chi-square with 2 degrees of freedom: p > 0.001
    # unnormalised weights mean the same; the same seed gives the same draw
    assert ds.sample_sources({"web": 7, "code": 2, "math": 1}, 50, seed=3) == ds.sample_sources(
        {"web": 0.7, "code": 0.2, "math": 0.1}, 50, seed=3)
    assert ds.sample_sources({"a": 1, "b": 0}, 100, seed=1) == ["a"] * 100


def test_mix_datasets_draws_items_of_each_source():
    sources = {"web": [f"w{i}" for i in range(5)], "chat": ["c0", "c1"], "unused": []}
    mixed = ds.mix_datasets(sources, {"web": 0.25, "chat": 0.75, "unused": 0}, 4000, seed=2)
    assert len(mixed) == 4000 and set(mixed) <= set(sources["web"] + sources["chat"])
    assert abs(sum(x.startswith("c") for x in mixed) / 4000 - 0.75) < 0.03
    assert mixed == ds.mix_datasets(sources, {"web": 0.25, "chat": 0.75, "unused": 0}, 4000, seed=2)
    random.seed(0)
    before = random.random()
    random.seed(0)
    ds.mix_datasets(sources, {"web": 1}, 10)
    assert random.random() == before  # the global generator is untouched
    with pytest.raises(ValueError, match="do not exist"):
        ds.mix_datasets(sources, {"books": 1}, 3)
    with pytest.raises(ValueError, match="no examples"):
        ds.mix_datasets(sources, {"unused": 1}, 3)
    with pytest.raises(ValueError):
        ds.sample_sources({"a": -1, "b": 2}, 3)
    with pytest.raises(ValueError):
        ds.sample_sources({"a": 0}, 3)


def test_hash_split_is_deterministic_and_keeps_duplicates_together():
    items = [f"pregunta número {i}" for i in range(2000)]
    split = ds.hash_split(items)
    assert ds.hash_split(list(items)) == split  # two runs, same split
    assert sum(len(v) for v in split.values()) == 2000
    assert abs(len(split["train"]) / 2000 - 0.8) < 0.04 and abs(len(split["test"]) / 2000 - 0.1) < 0.03
    variants = ["¿Puedo cambiar los auriculares?", "¿puedo cambiar  los auriculares? ", "¿PUEDO cambiar los auriculares?"]
    sides = {ds.split_of(v) for v in variants}
    assert len(sides) == 1
    with_dupes = ds.hash_split(items[:300] + variants * 5 + items[:300])
    for name, part in with_dupes.items():
        others = {ds.normalize_text(x) for k, p in with_dupes.items() if k != name for x in p}
        assert not others & {ds.normalize_text(x) for x in part}
    # another salt draws another split; shares as a tuple; a key for structured items
    assert ds.hash_split(items, salt="v2") != split
    two = ds.hash_split(items, ratios=(0.5, 0.5))
    assert set(two) == {"train", "validation"}
    chats = [{"q": q, "a": "x"} for q in items[:50]]
    keyed = ds.hash_split(chats, key=lambda c: c["q"])
    assert [c["q"] for c in keyed["train"]] == [q for q in items[:50] if ds.split_of(q) == "train"]
    with pytest.raises(ValueError, match="add up to 1"):
        ds.hash_split(items, ratios=(0.8, 0.1))
    with pytest.raises(TypeError, match="key"):
        ds.hash_split(chats)


def test_contamination_rate_counts_normalised_copies():
    train = ["¿Puedo cambiar los auriculares?", "Hola", "Adiós"]
    test = ["¿puedo cambiar  los auriculares? ", "hola", "¿Dónde está mi pedido?", "Otra cosa"]
    assert ds.contamination_rate(train, test) == 0.5
    assert ds.contamination_rate(train, test, normalize=False) == 0.0
    assert ds.contamination_rate(train, ["hola", "hola"]) == 1.0
    with pytest.raises(ValueError):
        ds.contamination_rate(train, [])
    with pytest.raises(TypeError):
        ds.contamination_rate("abc", ["a"])


def test_dataset_card_requires_its_fields():
    fields = {f: f"valor de {f}" for f in ds.CARD_FIELDS}
    card = ds.dataset_card(**fields, splits={"train": 10})
    assert list(card)[: len(ds.CARD_FIELDS)] == list(ds.CARD_FIELDS) and card["splits"] == {"train": 10}
    for key in ("license", "version", "provenance"):
        partial = {k: v for k, v in fields.items() if k != key}
        assert ds.missing_card_fields(partial) == [key]
        with pytest.raises(ValueError, match=key):
            ds.dataset_card(**partial)
    assert ds.missing_card_fields({**fields, "gaps": ""}) == ["gaps"]
