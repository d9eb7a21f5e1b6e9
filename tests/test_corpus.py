"""llmlab.corpus: documents, the fixed train/validation split, chat pairs; on the fixture and on the shipped data."""

import json
import pathlib
from importlib import resources

import pytest

from llmlab import corpus
from llmlab.corpus import (
    corpus_stats,
    load_chat,
    load_documents,
    load_records,
    load_text,
    parse_corpus_file,
    document_split,
)

DATA = pathlib.Path(__file__).parent / "fixtures" / "data"
PACKAGE_DATA = resources.files("llmlab") / "data"
RAW_FILES = corpus._txt_files(PACKAGE_DATA / "corpus" / "raw")
UNSEEN_FILES = corpus._txt_files(PACKAGE_DATA / "corpus" / "unseen")
HAS_CHAT = (PACKAGE_DATA / "chat" / "qa.jsonl").is_file()
MIN_RAW_BYTES = 4_000_000  # the design target: at least 4 MB (1 MB = 10**6 bytes) of training text
MIN_CHAT = 5_000  # and at least 5,000 question/answer exchanges (a conversation may hold several)


# ---------------------------------------------------------------------------------------------
# File format
# ---------------------------------------------------------------------------------------------
def test_parse_corpus_file():
    text = "# Un título\nprimer documento\n\n---\n\n---  \r\nsegundo\ncon dos líneas\n---\n"
    docs = parse_corpus_file(text, "corpus/raw/x.txt")
    assert [d.text for d in docs] == ["primer documento", "segundo\ncon dos líneas"]
    assert {d.title for d in docs} == {"Un título"} and [d.index for d in docs] == [0, 1]
    assert parse_corpus_file("sin título\n---\notro")[1] == corpus.Document("otro", "", "", 1)
    assert parse_corpus_file("# solo título\n") == []
    assert parse_corpus_file("texto con --- en medio")[0].text == "texto con --- en medio"


# ---------------------------------------------------------------------------------------------
# Invariants, on any data folder
# ---------------------------------------------------------------------------------------------
def check_split_invariants(data_dir):
    train = load_records("train", data_dir)
    validation = load_records("validation", data_dir)
    assert train and validation
    # disjoint, and together exactly the raw documents
    train_texts, val_texts = {d.text for d in train}, {d.text for d in validation}
    assert not train_texts & val_texts
    everything = corpus._read_folder(corpus.data_root(data_dir), "raw")
    assert sorted(d.text for d in train + validation) == sorted(d.text for d in everything)
    # deterministic
    assert load_records("train", data_dir) == train
    assert load_documents("validation", data_dir) == [d.text for d in validation]
    # about one in ten (loose bounds: small corpora are lumpy)
    assert 0 < len(validation) <= max(1, 0.25 * (len(train) + len(validation)))
    for d in train + validation:
        assert d.text == d.text.strip() and d.text
        assert "\n---\n" not in f"\n{d.text}\n"
        assert not d.text.startswith("# ")
    return train, validation


def test_fixture_split_invariants():
    train, validation = check_split_invariants(DATA)
    assert load_text("train", data_dir=DATA) == "\n\n".join(d.text for d in train)
    assert load_text("validation", separator="<|eos|>", data_dir=DATA).count("<|eos|>") == len(validation) - 1
    unseen = load_documents("unseen", DATA)
    assert unseen and not set(unseen) & {d.text for d in train + validation}


def test_split_rule_is_fixed():
    # Pinned values: changing the rule would silently move documents between train and validation.
    assert document_split("hola") == "train"
    n = sum(document_split(f"documento {i}") == "validation" for i in range(2000))
    assert 150 < n < 250  # about 10 %
    assert [document_split(f"documento {i}") for i in range(12)].count("validation") == [
        corpus._hash(f"documento {i}") % 10 == 0 for i in range(12)
    ].count(True)


def write_corpus(root: pathlib.Path, files: dict[str, list[str]]):
    raw = root / "corpus" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for name, docs in files.items():
        (raw / name).write_text(f"# {name}\n" + "\n---\n".join(docs) + "\n", encoding="utf-8")


def test_split_is_stable_when_documents_are_added(tmp_path):
    docs = [f"Documento número {i}: el río hacía tres curvas." for i in range(60)]
    write_corpus(tmp_path, {"a.txt": docs})
    before = {d: "validation" for d in load_documents("validation", tmp_path)}
    assert 2 <= len(before) <= 15
    write_corpus(tmp_path, {"b.txt": [f"Otro texto {i}." for i in range(40)], "0.txt": ["Primero en orden."]})
    after = set(load_documents("validation", tmp_path))
    assert set(before) <= after  # no validation document moved to train
    assert not set(load_documents("train", tmp_path)) & after


def test_duplicates_land_on_the_same_side(tmp_path):
    docs = [f"Texto {i} sobre bicicletas." for i in range(40)]
    write_corpus(tmp_path, {"a.txt": docs, "b.txt": docs[:20]})
    train, validation = load_documents("train", tmp_path), load_documents("validation", tmp_path)
    assert len(train) + len(validation) == 60
    assert not set(train) & set(validation)
    assert corpus_stats(tmp_path)["raw_files"]["duplicate_documents"] == 20


def test_tiny_corpus_still_gets_one_validation_document(tmp_path):
    write_corpus(tmp_path, {"a.txt": ["uno", "dos"]})
    assert len(load_documents("validation", tmp_path)) == 1 and len(load_documents("train", tmp_path)) == 1


def test_chat_split_and_validation():
    train, validation = load_chat("train", DATA), load_chat("validation", DATA)
    assert train and validation
    keys = lambda convs: {json.dumps(c, sort_keys=True) for c in convs}  # noqa: E731
    assert not keys(train) & keys(validation)
    assert load_chat("train", DATA) == train
    assert all(c[-1]["role"] == "assistant" for c in train + validation)


def test_bad_chat_lines_are_reported(tmp_path):
    (tmp_path / "chat").mkdir()
    good = json.dumps({"messages": [{"role": "user", "content": "hola"}, {"role": "assistant", "content": "hola"}]})
    for bad, match in [
        ("{not json", "line 2"),
        (json.dumps({"mensajes": []}), 'line 2: expected an object with a "messages" list'),
        (json.dumps({"messages": [{"role": "assistant", "content": "x"}]}), "line 2: .*alternate"),
    ]:
        (tmp_path / "chat" / "qa.jsonl").write_text(good + "\n" + bad + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=match):
            load_chat("train", tmp_path)


def test_bad_arguments_and_missing_data(tmp_path):
    with pytest.raises(ValueError, match="split must be one of"):
        load_documents("test", DATA)
    with pytest.raises(ValueError, match="split must be one of"):
        load_chat("unseen", DATA)
    with pytest.raises(TypeError, match="data_dir"):
        load_documents("train", data_dir=3)
    with pytest.raises(TypeError, match="separator"):
        load_text("train", separator=None, data_dir=DATA)
    with pytest.raises(TypeError, match="text must be a str"):
        document_split(b"hola")
    with pytest.raises(FileNotFoundError, match="no corpus files"):
        load_documents("train", tmp_path)
    with pytest.raises(FileNotFoundError, match="no chat data"):
        load_chat("train", tmp_path)
    stats = corpus_stats(tmp_path)  # an empty folder is reported, not an error
    assert stats["train"]["documents"] == 0 and stats["raw_files"]["files"] == 0


def test_corpus_stats_match_the_loaders():
    stats = corpus_stats(DATA)
    for split in corpus.SPLITS:
        docs = load_documents(split, DATA)
        assert stats[split]["documents"] == len(docs)
        assert stats[split]["bytes"] == sum(len(d.encode("utf-8")) for d in docs)
        assert stats[split]["words"] == sum(len(d.split()) for d in docs)
        assert stats[split]["bytes"] >= stats[split]["characters"] > 0
    raw_bytes = sum(p.stat().st_size for p in (DATA / "corpus" / "raw").glob("*.txt"))
    assert stats["raw_files"] == {"files": 2, "bytes": raw_bytes, "duplicate_documents": 0}
    assert stats["chat_train"]["conversations"] == len(load_chat("train", DATA))


def test_package_data_is_read_through_importlib_resources():
    assert corpus.data_root() == PACKAGE_DATA
    assert corpus.data_root(str(DATA)) == DATA
    if RAW_FILES:
        assert load_documents("train") == load_documents("train", data_dir=PACKAGE_DATA)


# ---------------------------------------------------------------------------------------------
# The shipped corpus (activates as the files land in llmlab/data/)
# ---------------------------------------------------------------------------------------------
@pytest.mark.skipif(not RAW_FILES, reason="llmlab/data/corpus/raw/ has no .txt files yet")
def test_shipped_corpus_split_invariants():
    train, validation = check_split_invariants(None)
    assert sum(len(d.text.encode("utf-8")) for d in validation) > 0


@pytest.mark.skipif(len(RAW_FILES) < 4, reason=f"only {len(RAW_FILES)} raw corpus files so far; the size check needs >= 4")
def test_shipped_corpus_is_big_enough():
    stats = corpus_stats()
    assert stats["raw_files"]["bytes"] >= MIN_RAW_BYTES, (
        f"raw corpus is {stats['raw_files']['bytes']:,} bytes; the course needs >= {MIN_RAW_BYTES:,}"
    )
    assert stats["validation"]["documents"] >= 5
    assert stats["raw_files"]["duplicate_documents"] == 0


@pytest.mark.skipif(not UNSEEN_FILES, reason="llmlab/data/corpus/unseen/ has no .txt files yet")
def test_shipped_unseen_text_is_held_out():
    unseen = load_documents("unseen")
    assert unseen
    raw = set(load_documents("train")) | set(load_documents("validation")) if RAW_FILES else set()
    assert not set(unseen) & raw


def test_chat_is_read_from_every_jsonl_file_in_name_order(tmp_path):
    (tmp_path / "chat").mkdir()
    conv = lambda q: {"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": "sí"}]}  # noqa: E731
    (tmp_path / "chat" / "b.jsonl").write_text("\n".join(json.dumps(conv(f"b{i}")) for i in range(30)) + "\n", encoding="utf-8")
    (tmp_path / "chat" / "a.jsonl").write_text(json.dumps(conv("a0")) + "\n", encoding="utf-8")
    (tmp_path / "chat" / "notes.txt").write_text("not chat", encoding="utf-8")
    everything = load_chat("train", tmp_path) + load_chat("validation", tmp_path)
    assert len(everything) == 31
    assert [c[0]["content"] for c in load_chat("train", tmp_path)][0] in {"a0", "b0", "b1"}
    (tmp_path / "chat" / "c.jsonl").write_text("{broken\n", encoding="utf-8")
    with pytest.raises(ValueError, match="c.jsonl, line 1"):
        load_chat("train", tmp_path)


@pytest.mark.skipif(not HAS_CHAT, reason="llmlab/data/chat/qa.jsonl does not exist yet")
def test_shipped_chat_loads_and_splits():
    train, validation = load_chat("train"), load_chat("validation")
    assert train and validation
    assert sum(m["role"] == "user" for c in train + validation for m in c) >= MIN_CHAT
    assert 0.05 < len(validation) / (len(train) + len(validation)) < 0.15  # about one in ten, by hash
    assert not {json.dumps(c, sort_keys=True) for c in train} & {json.dumps(c, sort_keys=True) for c in validation}
