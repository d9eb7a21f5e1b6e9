"""The byte-level BPE tokenizer a GGUF file carries in its ``tokenizer.ggml.*`` tables.

llmlab's own :class:`~llmlab.tokenizer.BPETokenizer` numbers its tokens bytes first, then merges.
A published model's vocabulary has its own order (SmolLM2's id 0 is ``<|endoftext|>``, the byte
``"a"`` is id 65 only by chance), so this class reads the tables as they are:

- ``tokenizer.ggml.tokens``: every token spelled in GPT-2's byte alphabet (a space is ``"Ġ"``,
  a newline ``"Ċ"``; see :func:`llmlab.tokenizer.gpt2_byte_alphabet`);
- ``tokenizer.ggml.merges``: ``"left right"`` pairs, best first; merging the two spellings gives
  another token of the list;
- ``tokenizer.ggml.token_type``: 1 normal, 3 control (``<|im_start|>``: a marker, never text);
- ``tokenizer.ggml.{bos,eos,padding,unknown}_token_id`` and ``add_bos_token``;
- ``tokenizer.ggml.pre``: which regex cuts the text into chunks before BPE;
- ``tokenizer.chat_template``: the Jinja chat template (see :mod:`llmlab.chat_template`).

Encoding is the same algorithm as ``BPETokenizer`` (chunks, then merges lowest rank first), so
the ids equal Hugging Face's tokenizer for the same file; control tokens in the text stay plain
text unless ``allowed_special`` lets them through (the safe default of llmlab).

Pre-tokenizers: ``"gpt2"``, ``"smollm"`` and ``"starcoder"`` use GPT-2's regex (SmolLM's
vocabulary has no merge with a digit, so llama.cpp's extra "one digit per chunk" rule cuts the
same tokens); ``"default"`` is a file written by :func:`llmlab.export.to_gguf`, whose regex is
in ``llmlab.tokenizer.pattern``. Others are refused, naming the key.
"""

from __future__ import annotations

import functools
import math
import re
import sys
import unicodedata
from typing import Iterable

from .tokenizer import ByteLevelBPEEncoding, gpt2_byte_alphabet

__all__ = ["GGUFTokenizer", "gpt2_pattern"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_GPT2_STYLE = ("gpt2", "smollm", "starcoder")

# Unicode's White_Space property (what the regex engines of llama.cpp and HF call \s); Python's
# \s also matches U+001C..U+001F, which they do not.
_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def _ranges(code_points) -> str:
    """A regex character class body for a sorted list of code points, as ranges."""
    out, start, prev = [], None, None
    for cp in code_points:
        if start is None:
            start = prev = cp
        elif cp == prev + 1:
            prev = cp
        else:
            out.append((start, prev))
            start = prev = cp
    if start is not None:
        out.append((start, prev))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in out)


@functools.lru_cache(maxsize=None)
def _letters_and_numbers() -> tuple[str, str]:
    """Class bodies for ``\\p{L}`` and ``\\p{N}``: str.isalpha() is exactly the categories L*;
    numbers are the characters of categories N* (str.isnumeric() also accepts CJK numerals, Lo)."""
    chars = [chr(cp) for cp in range(sys.maxunicode + 1)]
    letters = [cp for cp, ch in enumerate(chars) if ch.isalpha()]
    numbers = [cp for cp, ch in enumerate(chars) if ch.isnumeric() and unicodedata.category(ch)[0] == "N"]
    return _ranges(letters), _ranges(numbers)


@functools.lru_cache(maxsize=None)
def gpt2_pattern() -> str:
    r"""GPT-2's pre-tokenizer for Python's ``re``: ``'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+``.

    ``re`` has no ``\p{L}`` (letters) nor ``\p{N}`` (numbers), so both are spelled out from
    ``unicodedata``.
    """
    (letter, number), space = _letters_and_numbers(), _SPACE
    return (
        rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{letter}]+| ?[{number}]+| ?[^{space}{letter}{number}]+"
        rf"|[{space}]+(?![^{space}])|[{space}]+"
    )


def _byte_alphabet() -> dict[int, str]:
    return gpt2_byte_alphabet()


class GGUFTokenizer(ByteLevelBPEEncoding):
    """Byte-level BPE from a GGUF file's tables; the interface of :class:`llmlab.tokenizer.BPETokenizer`.

    ``special_tokens`` maps each control token's text to its id. ``bos_id`` is the id llmlab puts
    in front of a text prompt: the file's BOS when ``tokenizer.ggml.add_bos_token`` is true, else
    ``None`` (SmolLM2 starts a prompt with nothing). ``file_ids`` keeps the ids the file names.
    """

    def __init__(self, tokens: list[str], merges: list[str], token_types: list[int] | None = None, *,
                 pattern: str | None = None, bos_token_id: int | None = None, eos_token_id: int | None = None,
                 pad_token_id: int | None = None, unk_token_id: int | None = None, add_bos_token: bool = False,
                 chat_template: str | None = None, where: str = "the GGUF file"):  # fmt: skip
        n = len(tokens)
        types = list(token_types) if token_types is not None else [NORMAL] * n
        if len(types) != n:
            raise ValueError(f"{where}: tokenizer.ggml.token_type has {len(types)} entries, tokenizer.ggml.tokens {n}")
        bad = sorted({t for t in types if t not in (NORMAL, CONTROL)})
        if bad:
            raise ValueError(
                f"{where}: tokenizer.ggml.token_type has types {bad} (only 1 normal and 3 control are read; "
                "user-defined, byte or unused tokens are not supported)"
            )
        alphabet = _byte_alphabet()
        back = {ch: b for b, ch in alphabet.items()}
        self._tokens = list(tokens)
        self._types = types
        self._id = {}
        self._bytes: list[bytes] = []
        for i, (text, kind) in enumerate(zip(tokens, types)):
            self._id.setdefault(text, i)
            if kind == CONTROL:
                self._bytes.append(text.encode("utf-8"))
            else:
                try:
                    self._bytes.append(bytes(back[ch] for ch in text))
                except KeyError as err:
                    raise ValueError(
                        f"{where}: tokenizer.ggml.tokens[{i}] = {text!r} has {err.args[0]!r}, which is not in "
                        "GPT-2's byte alphabet (not a byte-level vocabulary)"
                    ) from None
        self.special_tokens: dict[str, int] = {t: i for i, (t, k) in enumerate(zip(tokens, types)) if k == CONTROL}
        self._special_by_id = {i: t for t, i in self.special_tokens.items()}
        # A byte with no token of its own (SmolLM2 has none for 21 bytes: some control characters and
        # the bytes UTF-8 never uses) is dropped, as Hugging Face's BPE does when there is no unknown token.
        self._byte_ids = [self._id.get(alphabet[b]) for b in range(256)]
        self.missing_bytes = [b for b, i in enumerate(self._byte_ids) if i is None]

        self.merges: list[tuple[int, int]] = []
        self._rank: dict[tuple[int, int], tuple[int, int]] = {}  # pair -> (rank, merged id)
        for rank, merge in enumerate(merges):
            left, sep, right = merge.partition(" ")
            if not sep or left not in self._id or right not in self._id or left + right not in self._id:
                raise ValueError(f"{where}: tokenizer.ggml.merges[{rank}] = {merge!r} does not join two tokens into a third")
            pair = (self._id[left], self._id[right])
            self.merges.append(pair)
            self._rank.setdefault(pair, (rank, self._id[left + right]))

        self.pattern = gpt2_pattern() if pattern is None else pattern
        self._regex = re.compile(self.pattern)
        self.file_ids = {"bos": bos_token_id, "eos": eos_token_id, "pad": pad_token_id, "unk": unk_token_id}
        for name, value in self.file_ids.items():
            if value is not None and not 0 <= value < n:
                raise ValueError(f"{where}: the {name} token id {value} is not in the vocabulary of {n} tokens")
        self.add_bos_token = bool(add_bos_token)
        self.chat_template_source = chat_template
        self._cache: dict[bytes, tuple[int, ...]] = {}

    @classmethod
    def from_metadata(cls, metadata: dict, *, where: str = "the GGUF file") -> "GGUFTokenizer":
        """Build it from a GGUF file's metadata (``llmlab.gguf_model.read_info(path).metadata``)."""
        model = metadata.get("tokenizer.ggml.model")
        if model != "gpt2":
            raise ValueError(
                f"{where}: tokenizer.ggml.model is {model!r}; llmlab reads byte-level BPE vocabularies ('gpt2') only"
            )
        pre = metadata.get("tokenizer.ggml.pre", "default")
        if pre in _GPT2_STYLE:
            pattern = None
        elif pre == "default" and "llmlab.tokenizer.pattern" in metadata:
            pattern = metadata["llmlab.tokenizer.pattern"]
        else:
            raise ValueError(
                f"{where}: tokenizer.ggml.pre is {pre!r}; llmlab knows the pre-tokenizers {list(_GPT2_STYLE)} "
                "(and 'default' with llmlab.tokenizer.pattern)"
            )
        for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges"):
            if key not in metadata:
                raise ValueError(f"{where}: the GGUF file has no key {key!r}")
        if metadata.get("tokenizer.ggml.add_eos_token"):
            raise ValueError(f"{where}: tokenizer.ggml.add_eos_token is true, which llmlab's tokenizers do not do")

        def ident(key):
            value = metadata.get(f"tokenizer.ggml.{key}")
            return None if value is None else int(value)

        return cls(
            list(metadata["tokenizer.ggml.tokens"]), list(metadata["tokenizer.ggml.merges"]),
            metadata.get("tokenizer.ggml.token_type"), pattern=pattern,
            bos_token_id=ident("bos_token_id"), eos_token_id=ident("eos_token_id"),
            pad_token_id=ident("padding_token_id"), unk_token_id=ident("unknown_token_id"),
            add_bos_token=bool(metadata.get("tokenizer.ggml.add_bos_token", False)),
            chat_template=metadata.get("tokenizer.chat_template"), where=where,
        )  # fmt: skip

    # -- sizes and special ids -------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def vocab_size(self) -> int:
        return len(self)

    @property
    def bos_id(self) -> int | None:
        """The id put before a text prompt (None when the file says not to add one)."""
        return self.file_ids["bos"] if self.add_bos_token else None

    @property
    def eos_id(self) -> int | None:
        """The file's end-of-sequence id: generation stops there."""
        return self.file_ids["eos"]

    @property
    def pad_id(self) -> int | None:
        return self.file_ids["pad"]

    @property
    def special_ids(self) -> list[int]:
        return list(self.special_tokens.values())

    def is_special(self, token_id: int) -> bool:
        return self._check_id(token_id) in self._special_by_id

    @functools.cached_property
    def chat_template(self):
        """The file's chat template as an :class:`llmlab.chat_template.ChatTemplate` (None if it has none)."""
        if self.chat_template_source is None:
            return None
        from .chat_template import ChatTemplate

        return ChatTemplate(self.chat_template_source, self)

    # -- encoding --------------------------------------------------------------------------------
    def _chunk_ids(self, chunk: bytes) -> list[int]:
        return [self._byte_ids[b] for b in chunk if self._byte_ids[b] is not None]

    def _merge_rank(self, pair: tuple[int, int]) -> float:
        return self._rank.get(pair, (math.inf,))[0]

    def _merged_id(self, pair: tuple[int, int]) -> int:
        return self._rank[pair][1]  # the file lists the merged token itself

    # -- decoding --------------------------------------------------------------------------------
    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one id; for a control token, its text in UTF-8."""
        return self._bytes[self._check_id(token_id)]

    def vocab_bytes(self) -> list[bytes]:
        return list(self._bytes)

    def decode_bytes(self, ids: Iterable[int], skip_special: bool = False) -> bytes:
        return b"".join(self._bytes[i] for i in map(self._check_id, ids) if not (skip_special and i in self._special_by_id))

    def decode(self, ids: Iterable[int], skip_special: bool = False, errors: str = "replace") -> str:
        return self.decode_bytes(ids, skip_special=skip_special).decode("utf-8", errors=errors)

    # -- looking at tokens -----------------------------------------------------------------------
    def id_to_token(self, token_id: int) -> str:
        """A readable string for one id (bytes that are not whole UTF-8 characters as ``\\xNN``)."""
        i = self._check_id(token_id)
        if i in self._special_by_id:
            return self._special_by_id[i]
        return self._bytes[i].decode("utf-8", errors="backslashreplace")

    def token_string(self, token_id: int) -> str:
        """The token as the file spells it, in GPT-2's byte alphabet (``"Ġworld"``)."""
        return self._tokens[self._check_id(token_id)]

    def token_to_id(self, token: str | bytes) -> int:
        """Inverse of :meth:`token_string` (a str as the file spells it) or of :meth:`token_bytes`."""
        if isinstance(token, str):
            if token in self._id:
                return self._id[token]
        elif isinstance(token, bytes):
            for i, b in enumerate(self._bytes):
                if b == token and i not in self._special_by_id:
                    return i
        else:
            raise TypeError(f"token must be a str or bytes, got {type(token).__name__}")
        raise ValueError(f"{token!r} is not a token of this vocabulary")

    def pieces(self, text: str, allowed_special=()) -> list[str]:
        return [self.id_to_token(i) for i in self.encode(text, allowed_special)]

    def show(self, text: str, allowed_special=(), with_ids: bool = False) -> str:
        """One-line picture of how ``text`` is cut, e.g. ``[Hello][ world]``."""
        parts = []
        for i in self.encode(text, allowed_special):
            piece = self.id_to_token(i).replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
            parts.append(f"[{piece}:{i}]" if with_ids else f"[{piece}]")
        return "".join(parts)

    def __repr__(self) -> str:
        return f"GGUFTokenizer(vocab_size={len(self)}, merges={len(self.merges)}, special_tokens={len(self.special_tokens)})"
