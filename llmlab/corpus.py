"""The course's Spanish corpus: documents, a fixed train/validation split, and the chat Q&A pairs.

Everything is read from the package data (``importlib.resources``), so it works the same from a
git checkout, an installed wheel or Colab, and nothing is downloaded. Layout::

    llmlab/data/corpus/raw/*.txt      text the tiny models are trained on (train + validation)
    llmlab/data/corpus/unseen/*.txt   held-out text in other styles, never trained on
    llmlab/data/chat/*.jsonl          question/answer conversations for fine-tuning

A ``.txt`` file is UTF-8. Its first line may be ``# Title`` (metadata, not text) and documents
are separated by a line containing only ``---``.

**The split.** A document goes to validation when the SHA-256 of its text, read as a number, is
a multiple of 10 (about 10 % of documents); the rest go to train. The rule looks only at the
document itself, so it never depends on file order or on the machine, a document keeps its split
when others are added, and two copies of the same text always land on the same side (no
train/validation leak through duplicates). If a very small corpus gets no validation document,
the one with the smallest hash is moved there. Chat conversations are split the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
from importlib import resources
from typing import NamedTuple

from .chat import validate_messages

__all__ = [
    "Document",
    "SPLITS",
    "corpus_stats",
    "data_root",
    "load_chat",
    "load_documents",
    "load_records",
    "load_text",
    "parse_corpus_file",
    "document_split",
]

SPLITS = ("train", "validation", "unseen")
CHAT_SPLITS = ("train", "validation")
VALIDATION_ONE_IN = 10  # one document in ten goes to validation
SEPARATOR = "---"


class Document(NamedTuple):
    text: str
    source: str  # file it came from, relative to the data folder, e.g. "corpus/raw/narrativa_01.txt"
    title: str  # the file's "# Title" line, "" if it has none
    index: int  # position of the document in its file


def data_root(data_dir=None):
    """The data folder: ``llmlab/data`` inside the package, or ``data_dir`` (a path) if given."""
    if data_dir is None:
        return resources.files("llmlab") / "data"
    if isinstance(data_dir, (str, os.PathLike)):
        return pathlib.Path(data_dir)
    if hasattr(data_dir, "joinpath") and hasattr(data_dir, "iterdir"):
        return data_dir  # already a Traversable
    raise TypeError(f"data_dir must be None, a path or a Traversable, got {type(data_dir).__name__}")


# ---------------------------------------------------------------------------------------------
# Reading the files
# ---------------------------------------------------------------------------------------------
def parse_corpus_file(text: str, source: str = "") -> list[Document]:
    """Cut one corpus file into documents (title line removed, blank documents dropped)."""
    lines = text.splitlines()
    title = ""
    if lines and lines[0].startswith("# "):
        title, lines = lines[0][2:].strip(), lines[1:]
    docs, current = [], []
    for line in lines + [SEPARATOR]:
        if line.strip() == SEPARATOR:
            body = "\n".join(current).strip()
            if body:
                docs.append(Document(body, source, title, len(docs)))
            current = []
        else:
            current.append(line)
    return docs


def _txt_files(folder):
    if not folder.is_dir():
        return []
    return sorted((f for f in folder.iterdir() if f.is_file() and f.name.endswith(".txt")), key=lambda f: f.name)


def _read_folder(root, name: str) -> list[Document]:
    folder = root / "corpus" / name
    files = _txt_files(folder)
    if not files:
        raise FileNotFoundError(f"no corpus files (*.txt) in {folder}")
    docs = []
    for f in files:
        docs += parse_corpus_file(f.read_text(encoding="utf-8"), f"corpus/{name}/{f.name}")
    if not docs:
        raise ValueError(f"the corpus files in {folder} contain no documents")
    return docs


# ---------------------------------------------------------------------------------------------
# The split
# ---------------------------------------------------------------------------------------------
def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def document_split(text: str) -> str:
    """``"validation"`` or ``"train"`` for one document, by the hash rule (see the module doc)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return "validation" if _hash(text) % VALIDATION_ONE_IN == 0 else "train"


def _validation_mask(keys: list[str]) -> list[bool]:
    mask = [document_split(k) == "validation" for k in keys]
    if not any(mask) and len(keys) >= 2:
        mask[min(range(len(keys)), key=lambda i: (_hash(keys[i]), keys[i]))] = True
    return mask


def _check_split(split: str, allowed: tuple[str, ...]) -> None:
    if split not in allowed:
        raise ValueError(f"split must be one of {allowed}, got {split!r}")


# ---------------------------------------------------------------------------------------------
# Public loaders
# ---------------------------------------------------------------------------------------------
def load_records(split: str = "train", data_dir=None) -> list[Document]:
    """The documents of one split, with where they came from."""
    _check_split(split, SPLITS)
    root = data_root(data_dir)
    if split == "unseen":
        return _read_folder(root, "unseen")
    docs = _read_folder(root, "raw")
    in_validation = _validation_mask([d.text for d in docs])
    return [d for d, v in zip(docs, in_validation) if v == (split == "validation")]


def load_documents(split: str = "train", data_dir=None) -> list[str]:
    """The texts of one split: ``"train"``, ``"validation"`` (both from ``raw/``) or ``"unseen"``."""
    return [d.text for d in load_records(split, data_dir)]


def load_text(split: str = "train", separator: str = "\n\n", data_dir=None) -> str:
    """All documents of a split joined by ``separator``: one string to tokenize."""
    if not isinstance(separator, str):
        raise TypeError(f"separator must be a str, got {type(separator).__name__}")
    return separator.join(load_documents(split, data_dir))


def load_chat(split: str = "train", data_dir=None) -> list[list[dict[str, str]]]:
    """The Q&A conversations of one split, each a list of ``{"role", "content"}`` messages.

    Reads every ``chat/*.jsonl`` file in name order (``gen_qa.jsonl``, generated, then ``qa.jsonl``,
    hand-written). Every line is checked with :func:`llmlab.chat.validate_messages`; a bad line
    raises ``ValueError`` naming the file and the line.
    """
    _check_split(split, CHAT_SPLITS)
    folder = data_root(data_dir) / "chat"
    paths = sorted((f for f in folder.iterdir() if f.is_file() and f.name.endswith(".jsonl")), key=lambda f: f.name) \
        if folder.is_dir() else []
    if not paths:
        raise FileNotFoundError(f"no chat data (*.jsonl) in {folder}")
    conversations, keys = [], []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict) or "messages" not in record:
                    raise ValueError('expected an object with a "messages" list')
                messages = validate_messages(record["messages"])
            except (ValueError, TypeError) as err:  # json.JSONDecodeError is a ValueError
                raise ValueError(f"{path}, line {n}: {err}") from None
            conversations.append(messages)
            keys.append(json.dumps(messages, ensure_ascii=False, sort_keys=True))
    if not conversations:
        raise ValueError(f"{folder} contains no conversations")
    in_validation = _validation_mask(keys)
    return [c for c, v in zip(conversations, in_validation) if v == (split == "validation")]


def _text_stats(docs: list[str]) -> dict[str, int]:
    return {
        "documents": len(docs),
        "bytes": sum(len(d.encode("utf-8")) for d in docs),
        "characters": sum(len(d) for d in docs),
        "words": sum(len(d.split()) for d in docs),  # whitespace-separated, as `wc -w` counts
    }


def corpus_stats(data_dir=None) -> dict[str, dict[str, int]]:
    """Sizes of every split (documents, UTF-8 bytes, characters, words) and of the raw files.

    Missing folders and files count as empty here instead of raising, so this works while the
    corpus is being written; malformed data still raises. ``"raw_files"`` counts the files
    themselves (titles and separators included).
    """
    root = data_root(data_dir)
    stats: dict[str, dict[str, int]] = {}
    for split in SPLITS:
        try:
            stats[split] = _text_stats(load_documents(split, root))
        except FileNotFoundError:
            stats[split] = _text_stats([])
    raw = _txt_files(root / "corpus" / "raw")
    texts = [d.text for d in _read_folder(root, "raw")] if raw else []
    stats["raw_files"] = {
        "files": len(raw),
        "bytes": sum(len(f.read_bytes()) for f in raw),
        "duplicate_documents": len(texts) - len(set(texts)),
    }
    for split in CHAT_SPLITS:
        try:
            conversations = load_chat(split, root)
        except FileNotFoundError:
            conversations = []
        stats[f"chat_{split}"] = {
            "conversations": len(conversations),
            "exchanges": sum(m["role"] == "user" for c in conversations for m in c),  # question/answer pairs
            "messages": sum(len(c) for c in conversations),
            "bytes": sum(len(m["content"].encode("utf-8")) for c in conversations for m in c),
        }
    return stats
