"""A byte-level BPE tokenizer, small enough to read in one sitting.

The idea, in four steps:

1. **Bytes first.** Text is UTF-8 bytes, so the first 256 token ids *are* the 256 byte values
   (id 65 is ``b"A"``, id 195 is the first byte of ``"ñ"``). Any string can be encoded, with no
   "unknown token": at worst, a character costs one token per byte.
2. **Pre-tokenization.** A regular expression cuts the text into chunks (words with their leading
   space, numbers, punctuation, whitespace). Merges never cross a chunk boundary, so a token never
   glues the end of one word to the start of the next.
3. **Training** (byte-pair encoding): count every pair of adjacent tokens in the training chunks,
   merge the most frequent pair into a new token, repeat until the vocabulary has the requested
   size. The ordered list of merges *is* the tokenizer.
4. **Encoding** replays the merges on new text in the order they were learned.

Special tokens (``<|bos|>``, ``<|user|>``, ...) are control markers, not text. They get ids after
the merges, and :meth:`BPETokenizer.encode` produces them **only when the caller allows it**
(``allowed_special``). By default the string ``"<|eos|>"`` typed by a user is encoded as the plain
characters ``<``, ``|``, ``eos``, ``|``, ``>``: otherwise anybody who can put text in a prompt
could end a turn or impersonate the assistant (prompt injection through control tokens). Chat
templates insert the markers themselves (see :mod:`llmlab.chat`).

Id layout: ``0..255`` bytes, ``256..256+n_merges-1`` merges (merge ``i`` makes id ``256 + i``),
then the special tokens in the order given at training time.
"""

from __future__ import annotations

import heapq
import json
import math
import operator
import os
import re
import warnings
from collections import Counter, defaultdict
from typing import Iterable, Iterator

__all__ = [
    "BPETokenizer",
    "DEFAULT_PATTERN",
    "DEFAULT_SPECIAL_TOKENS",
    "StreamDecoder",
    "compression_stats",
    "pre_tokenize",
]

FORMAT_NAME = "llmlab-bpe"
FORMAT_VERSION = 1
N_BYTES = 256

# The markers the course's chat templates and models use (see llmlab.chat). [INST] and [/INST] are
# control tokens here, as in recent Mistral tokenizers; in Llama-2 they were plain text.
DEFAULT_SPECIAL_TOKENS = (
    "<|bos|>",  # beginning of sequence
    "<|eos|>",  # end of sequence: generation stops here
    "<|pad|>",  # padding for batches; never trained on
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|end|>",  # end of one chat message
    "[INST]",
    "[/INST]",
)

# ---------------------------------------------------------------------------------------------
# 1. Pre-tokenization
# ---------------------------------------------------------------------------------------------
# Python's `re` has no \p{L} ("any letter"), but \w is Unicode-aware: letters of every script,
# digits and "_". So [^\W\d_] (word characters that are not digits nor "_") means "a letter":
# á, é, ñ, ü, ç, but also ж or 字. Text typed with separate combining accents (NFD: "e" + U+0301)
# keeps the accent inside the word thanks to the explicit U+0300..U+036F range.
# The pattern is one plain string (no re.VERBOSE) so HF `tokenizers` can compile the same regex,
# which the parity tests rely on.
DEFAULT_PATTERN = "|".join(
    [
        r" ?(?:[^\W\d_]|[\u0300-\u036f])+",  # a word with its leading space: " canción"
        r" ?\d{1,3}",  # digits in groups of <= 3: " 2024" -> " 202", "4"
        r" ?(?:[^\s\w\u0300-\u036f]|_)+",  # punctuation, symbols, emoji: "¿", " ...", " 😀"
        r"\s*[\r\n]+",  # whitespace ending in line breaks: a paragraph break is one chunk
        r"\s+(?!\S)",  # whitespace, leaving the last space to the next word
        r"\s+",  # any other whitespace (at the end of the text)
    ]
)


def pre_tokenize(text: str, pattern: str | re.Pattern = DEFAULT_PATTERN) -> list[str]:
    """Split ``text`` into the chunks that BPE works inside; ``"".join(chunks) == text`` always.

    Characters that ``pattern`` does not match are kept as chunks of their own, so a custom
    pattern can never lose text.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return pretokenize(re.compile(pattern) if isinstance(pattern, str) else pattern, text)


def pretokenize(regex: re.Pattern, text: str) -> list[str]:
    chunks, pos = [], 0
    for match in regex.finditer(text):
        if match.start() == match.end():
            continue  # a pattern that can match the empty string must not produce empty chunks
        if match.start() > pos:
            chunks.append(text[pos : match.start()])
        chunks.append(match.group())
        pos = match.end()
    if pos < len(text):
        chunks.append(text[pos:])
    return chunks


def split_on_specials(text: str, specials: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """Yield ``(piece, is_special)``: the special tokens found in ``text`` and the text between them."""
    specials = sorted(set(specials), key=len, reverse=True)  # longest first: "[/INST]" before "[INST]"
    if not specials:
        if text:
            yield text, False
        return
    regex = re.compile("(" + "|".join(map(re.escape, specials)) + ")")
    for i, piece in enumerate(regex.split(text)):
        if piece:
            yield piece, i % 2 == 1  # re.split puts the captured separators at odd positions


def utf8_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        # Only lone surrogates ("\ud800") get here: they are valid in a Python str but not in UTF-8.
        raise ValueError(
            f"text contains {text[err.start:err.end]!r} at position {err.start}, "
            "which is not encodable as UTF-8 (a lone surrogate)"
        ) from None


# ---------------------------------------------------------------------------------------------
# 2. Training
# ---------------------------------------------------------------------------------------------
def merge_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace every occurrence of ``pair`` in ``ids`` by ``new_id``, scanning left to right."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _learn_merges(chunk_counts: dict[bytes, int], n_merges: int, min_frequency: int) -> list[tuple[int, int]]:
    """Byte-pair encoding on a table ``{chunk bytes: how many times it occurs}``.

    Recounting every pair after every merge would cost (number of merges) x (size of the corpus).
    Instead we keep, for each pair, its count and the set of chunks where it occurs. A merge only
    touches the chunks that contain the merged pair, and only their pair counts change. A heap
    gives the most frequent pair; entries whose count has changed since they were pushed are
    stale and skipped when popped ("lazy deletion").

    Ties are broken by the smallest ``(left id, right id)``, so training is deterministic.
    """
    words = [list(chunk) for chunk in chunk_counts]  # each chunk as a list of token ids
    freqs = list(chunk_counts.values())
    pair_counts: dict[tuple[int, int], int] = defaultdict(int)
    where: dict[tuple[int, int], set[int]] = defaultdict(set)  # pair -> indices of words containing it
    for w, (word, freq) in enumerate(zip(words, freqs)):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += freq
            where[pair].add(w)
    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)

    merges: list[tuple[int, int]] = []
    while len(merges) < n_merges and heap:
        neg_count, pair = heapq.heappop(heap)
        if pair_counts.get(pair, 0) != -neg_count:
            continue  # stale heap entry
        if -neg_count < min_frequency:
            break
        new_id = N_BYTES + len(merges)
        merges.append(pair)
        delta: Counter = Counter()  # net change of each pair's count in this step
        for w in where.pop(pair):
            word, freq = words[w], freqs[w]
            new_word = merge_pair(word, pair, new_id)
            if len(new_word) == len(word):
                continue  # this word lost the pair in an earlier merge (sets are cleaned lazily)
            for p in zip(word, word[1:]):
                delta[p] -= freq
            for p in zip(new_word, new_word[1:]):
                delta[p] += freq
                where[p].add(w)
            words[w] = new_word
        for p, change in delta.items():
            if change == 0:
                continue
            pair_counts[p] += change
            if pair_counts[p] > 0:
                heapq.heappush(heap, (-pair_counts[p], p))
            else:
                del pair_counts[p]
                where.pop(p, None)
    return merges


# ---------------------------------------------------------------------------------------------
# 3. The tokenizer
# ---------------------------------------------------------------------------------------------
class ByteLevelBPEEncoding:
    """Encoding and id checks shared by the byte-level BPE tokenizers (:class:`BPETokenizer`, and
    :class:`llmlab.gguf_tokenizer.GGUFTokenizer` for a real model's file): a class using it provides
    ``special_tokens``, ``_regex``, ``_cache`` (a dict), ``__len__`` and the three merge hooks: the ids a chunk
    starts as (``_chunk_ids``), a pair's rank (``_merge_rank``, ``math.inf`` when no merge makes it) and the id
    a merge makes (``_merged_id``)."""

    def encode(self, text: str, allowed_special: str | Iterable[str] | None = ()) -> list[int]:
        """Text -> token ids.

        ``allowed_special`` says which special-token strings become their control id:
        ``()``/``"none"`` (default: none, every special string is encoded as plain text),
        ``"all"``, or a set such as ``{"<|eos|>"}``.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        utf8_bytes(text)  # fail early, with the position in the whole text, on a lone surrogate
        ids: list[int] = []
        for piece, is_special in split_on_specials(text, self._allowed(allowed_special)):
            if is_special:
                ids.append(self.special_tokens[piece])
                continue
            for chunk in pretokenize(self._regex, piece):
                ids.extend(self._encode_chunk(chunk.encode("utf-8")))
        return ids

    def _allowed(self, allowed_special) -> frozenset[str]:
        if allowed_special is None or (isinstance(allowed_special, str) and allowed_special == "none"):
            return frozenset()
        if isinstance(allowed_special, str):
            if allowed_special == "all":
                return frozenset(self.special_tokens)
            raise TypeError(
                "allowed_special must be 'all', 'none' or a collection of special-token strings, "
                f"got the string {allowed_special!r} (wrap a single token in a set: {{{allowed_special!r}}})"
            )
        allowed = frozenset(allowed_special)
        unknown = sorted(t for t in allowed if t not in self.special_tokens)
        if unknown:
            known = list(self.special_tokens)
            raise ValueError(f"allowed_special has unknown special tokens {unknown}; known: {known}")
        return allowed

    def _encode_chunk(self, chunk: bytes) -> tuple[int, ...]:
        """Apply the merges to one chunk, lowest rank (earliest learned) first, as in training."""
        cached = self._cache.get(chunk)
        if cached is not None:
            return cached
        ids = self._chunk_ids(chunk)
        while len(ids) >= 2:
            pair = min(zip(ids, ids[1:]), key=self._merge_rank)
            if self._merge_rank(pair) == math.inf:
                break  # no mergeable pair left
            ids = merge_pair(ids, pair, self._merged_id(pair))
        if len(self._cache) > 100_000:
            self._cache.clear()  # keep memory bounded on huge inputs
        self._cache[chunk] = result = tuple(ids)
        return result

    def _check_id(self, token_id) -> int:
        if isinstance(token_id, bool):
            raise TypeError("token ids must be integers, got a bool")
        try:
            i = operator.index(token_id)
        except TypeError:
            raise TypeError(f"token ids must be integers, got {type(token_id).__name__}") from None
        if not 0 <= i < len(self):
            raise IndexError(f"token id {i} is out of range for a vocabulary of {len(self)} ids (0..{len(self) - 1})")
        return i


class BPETokenizer(ByteLevelBPEEncoding):
    """Byte-level BPE: ``merges`` (pairs of ids, in learning order) plus ``special_tokens``.

    Build one with :meth:`train` or :meth:`load`. ``BPETokenizer()`` with no merges is a plain
    byte tokenizer (one token per UTF-8 byte).
    """

    def __init__(
        self,
        merges: Iterable[tuple[int, int]] = (),
        special_tokens: Iterable[str] = (),
        pattern: str = DEFAULT_PATTERN,
    ):
        if not isinstance(pattern, str):
            raise TypeError(f"pattern must be a regex given as a str, got {type(pattern).__name__}")
        try:
            self._regex = re.compile(pattern)
        except re.error as err:
            raise ValueError(f"pattern is not a valid regular expression: {err}") from None
        self.pattern = pattern

        # Each merge builds a token from two existing ones, so its bytes are theirs, concatenated.
        self.merges: list[tuple[int, int]] = []
        self._bytes: list[bytes] = [bytes([b]) for b in range(N_BYTES)]
        for i, pair in enumerate(merges):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise ValueError(f"merge {i} must be a pair of token ids, got {pair!r}")
            left, right = (operator.index(x) for x in pair)
            if not (0 <= left < len(self._bytes) and 0 <= right < len(self._bytes)):
                raise ValueError(f"merge {i} = {pair!r} uses an id that does not exist yet (ids < {len(self._bytes)})")
            self.merges.append((left, right))
            self._bytes.append(self._bytes[left] + self._bytes[right])
        self._rank = {pair: i for i, pair in enumerate(self.merges)}

        if isinstance(special_tokens, str):
            raise TypeError(f"special_tokens must be a list of strings, got the string {special_tokens!r}")
        self.special_tokens: dict[str, int] = {}  # text -> id
        for token in special_tokens:
            if not isinstance(token, str) or not token:
                raise ValueError(f"special tokens must be non-empty strings, got {token!r}")
            if token in self.special_tokens:
                raise ValueError(f"special token {token!r} is listed twice")
            self.special_tokens[token] = len(self._bytes) + len(self.special_tokens)
        self._special_by_id = {i: t for t, i in self.special_tokens.items()}

        # Lookup tables for token_to_id; the first id wins if two merges ever produce the same bytes.
        self._id_by_bytes: dict[bytes, int] = {}
        self._id_by_text: dict[str, int] = {}
        for i, b in enumerate(self._bytes):
            self._id_by_bytes.setdefault(b, i)
            self._id_by_text.setdefault(b.decode("utf-8", errors="backslashreplace"), i)
        self._cache: dict[bytes, tuple[int, ...]] = {}

    # -- training ------------------------------------------------------------------------------
    @classmethod
    def train(
        cls,
        text_or_iterable: str | Iterable[str],
        vocab_size: int,
        special_tokens: Iterable[str] = DEFAULT_SPECIAL_TOKENS,
        pre_tokenize: str | None = None,
        min_frequency: int = 2,
    ) -> "BPETokenizer":
        """Learn merges from a text (or an iterable of documents) until ``vocab_size`` ids exist.

        ``vocab_size`` counts everything: 256 bytes + merges + special tokens. ``pre_tokenize``
        is the chunking regex (default :data:`DEFAULT_PATTERN`). Pairs seen fewer than
        ``min_frequency`` times are never merged; if the text runs out of such pairs, training
        stops early with a warning and ``len(tokenizer) < vocab_size``. Special-token strings in
        the training text are dropped: they are markers, not language.
        """
        if pre_tokenize is not None and not isinstance(pre_tokenize, str):
            raise TypeError(f"pre_tokenize must be a regex pattern (str) or None, got {type(pre_tokenize).__name__}")
        if isinstance(text_or_iterable, (bytes, bytearray)):
            raise TypeError("text_or_iterable must be a str or an iterable of str; decode bytes to str first")
        if isinstance(special_tokens, str):
            raise TypeError(f"special_tokens must be a list of strings, got the string {special_tokens!r}")
        special_tokens = list(special_tokens)
        pattern = DEFAULT_PATTERN if pre_tokenize is None else pre_tokenize
        tokenizer = cls((), special_tokens, pattern)  # validates specials and pattern early
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
            raise TypeError(f"vocab_size must be an int, got {type(vocab_size).__name__}")
        minimum = N_BYTES + len(special_tokens)
        if vocab_size < minimum:
            raise ValueError(
                f"vocab_size must be >= 256 bytes + {len(special_tokens)} special tokens = {minimum}, got {vocab_size}"
            )
        if not isinstance(min_frequency, int) or min_frequency < 1:
            raise ValueError(f"min_frequency must be an int >= 1, got {min_frequency!r}")

        documents = [text_or_iterable] if isinstance(text_or_iterable, str) else text_or_iterable
        chunk_counts: Counter = Counter()
        for i, doc in enumerate(documents):
            if not isinstance(doc, str):
                raise TypeError(f"training documents must be str, item {i} is {type(doc).__name__}")
            for piece, is_special in split_on_specials(doc, special_tokens):
                if not is_special:
                    chunk_counts.update(utf8_bytes(c) for c in pretokenize(tokenizer._regex, piece))

        n_merges = vocab_size - minimum
        merges = _learn_merges(chunk_counts, n_merges, min_frequency)
        if len(merges) < n_merges:
            warnings.warn(
                f"training text ran out of pairs seen >= {min_frequency} times after {len(merges)} of "
                f"{n_merges} merges: the vocabulary has {minimum + len(merges)} ids, not {vocab_size}",
                stacklevel=2,
            )
        return cls(merges, special_tokens, pattern)

    # -- sizes and special ids -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._bytes) + len(self.special_tokens)

    @property
    def vocab_size(self) -> int:
        """Number of ids: 256 bytes + merges + special tokens."""
        return len(self)

    @property
    def bos_id(self) -> int | None:
        """Id of ``<|bos|>``, or None if this tokenizer has no such token."""
        return self.special_tokens.get("<|bos|>")

    @property
    def eos_id(self) -> int | None:
        """Id of ``<|eos|>``, or None if this tokenizer has no such token."""
        return self.special_tokens.get("<|eos|>")

    @property
    def pad_id(self) -> int | None:
        """Id of ``<|pad|>``, or None if this tokenizer has no such token."""
        return self.special_tokens.get("<|pad|>")

    @property
    def special_ids(self) -> list[int]:
        """Ids of all special tokens (to ban them in constrained decoding, or skip them)."""
        return list(self.special_tokens.values())

    def is_special(self, token_id: int) -> bool:
        return self._check_id(token_id) in self._special_by_id

    # -- encoding ------------------------------------------------------------------------------
    def _chunk_ids(self, chunk: bytes) -> list[int]:
        return list(chunk)  # ids 0..255 are the bytes themselves

    def _merge_rank(self, pair: tuple[int, int]) -> float:
        return self._rank.get(pair, math.inf)

    def _merged_id(self, pair: tuple[int, int]) -> int:
        return N_BYTES + self._rank[pair]  # merge k made id 256 + k

    # -- decoding ------------------------------------------------------------------------------
    def token_bytes(self, token_id: int) -> bytes:
        """The raw bytes of one id; for a special token, its text in UTF-8."""
        i = self._check_id(token_id)
        if i in self._special_by_id:
            return self._special_by_id[i].encode("utf-8")
        return self._bytes[i]

    def vocab_bytes(self) -> list[bytes]:
        """``[token_bytes(i) for i in range(len(self))]``."""
        return self._bytes + [t.encode("utf-8") for t in self.special_tokens]

    def decode_bytes(self, ids: Iterable[int], skip_special: bool = False) -> bytes:
        out = []
        for token_id in ids:
            i = self._check_id(token_id)
            if skip_special and i in self._special_by_id:
                continue
            out.append(self.token_bytes(i))
        return b"".join(out)

    def decode(self, ids: Iterable[int], skip_special: bool = False, errors: str = "replace") -> str:
        """Token ids -> text. ``decode(encode(s)) == s`` for every str that is valid UTF-8.

        A sequence cut in the middle of a multi-byte character is not valid UTF-8 on its own;
        ``errors="replace"`` shows "�" there, ``errors="strict"`` raises.
        """
        return self.decode_bytes(ids, skip_special=skip_special).decode("utf-8", errors=errors)

    # -- looking at tokens ---------------------------------------------------------------------
    def id_to_token(self, token_id: int) -> str:
        """A readable string for one id. Bytes that are not valid UTF-8 on their own (half of
        an "ñ", say) are shown as ``\\xNN`` escapes."""
        i = self._check_id(token_id)
        if i in self._special_by_id:
            return self._special_by_id[i]
        return self._bytes[i].decode("utf-8", errors="backslashreplace")

    def token_to_id(self, token: str | bytes) -> int:
        """Inverse of :meth:`id_to_token` (a str) or of :meth:`token_bytes` (bytes)."""
        if isinstance(token, str):
            if token in self.special_tokens:
                return self.special_tokens[token]
            if token in self._id_by_text:
                return self._id_by_text[token]
        elif isinstance(token, bytes):
            if token in self._id_by_bytes:
                return self._id_by_bytes[token]
        else:
            raise TypeError(f"token must be a str or bytes, got {type(token).__name__}")
        raise ValueError(f"{token!r} is not a token of this vocabulary")

    def pieces(self, text: str, allowed_special: str | Iterable[str] | None = ()) -> list[str]:
        """The tokens of ``text`` as readable strings (see :meth:`id_to_token`)."""
        return [self.id_to_token(i) for i in self.encode(text, allowed_special)]

    def show(self, text: str, allowed_special: str | Iterable[str] | None = (), with_ids: bool = False) -> str:
        """One-line picture of how ``text`` is cut, e.g. ``[¿][Qué][ tal][?]``.

        Newlines and tabs are drawn as ``\\n`` and ``\\t`` so the picture stays on one line.
        """
        parts = []
        for i in self.encode(text, allowed_special):
            piece = self.id_to_token(i).replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
            parts.append(f"[{piece}:{i}]" if with_ids else f"[{piece}]")
        return "".join(parts)

    def __repr__(self) -> str:
        n_special = len(self.special_tokens)
        return f"BPETokenizer(vocab_size={len(self)}, merges={len(self.merges)}, special_tokens={n_special})"

    # -- saving and loading --------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "pattern": self.pattern,
            "special_tokens": list(self.special_tokens),
            "merges": [list(pair) for pair in self.merges],
            # For humans reading the file; checked on load, so an edited file is caught.
            "tokens": [self.id_to_token(i) for i in range(len(self))],
        }

    @classmethod
    def from_dict(cls, data: dict) -> "BPETokenizer":
        if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
            raise ValueError(f"not an {FORMAT_NAME} tokenizer (missing or wrong 'format' field)")
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"unsupported {FORMAT_NAME} version {data.get('version')!r}; this llmlab reads version {FORMAT_VERSION}"
            )
        for key in ("pattern", "special_tokens", "merges"):
            if key not in data:
                raise ValueError(f"tokenizer data has no {key!r} field")
        tokenizer = cls([tuple(p) for p in data["merges"]], data["special_tokens"], data["pattern"])
        if "tokens" in data and data["tokens"] != [tokenizer.id_to_token(i) for i in range(len(tokenizer))]:
            raise ValueError("the 'tokens' list does not match the merges: the file was edited or corrupted")
        return tokenizer

    def save(self, path: str | os.PathLike) -> None:
        """Write the tokenizer as UTF-8 JSON (one merge per line, readable in any editor)."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=1)
        # json puts each number of a pair on its own line; put each merge on one line instead.
        text = re.sub(r"\[\n\s*(\d+),\n\s*(\d+)\n\s*\]", r"[\1, \2]", text)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "BPETokenizer":
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as err:
                raise ValueError(f"{os.fspath(path)!r} is not valid JSON: {err}") from None
        return cls.from_dict(data)


# ---------------------------------------------------------------------------------------------
# 4. How much does a tokenizer compress?
# ---------------------------------------------------------------------------------------------
class StreamDecoder:
    """Token ids in, text out, one token at a time: a character is shown once all its bytes arrived.

    A token may end in the middle of a multi-byte character (``acci\\xc3`` + ``\\xb3n``), so decoding
    each token alone would print "�" twice. This keeps the unfinished bytes until the next token
    completes them (Python's incremental UTF-8 decoder). Special tokens are markers, not text: they
    give "". Works with any tokenizer that has ``token_bytes(id)`` and ``is_special(id)``; what
    ``llmlab chat`` prints and what the server streams both come from here.
    """

    def __init__(self, tokenizer):
        import codecs

        self.tokenizer = tokenizer
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def push(self, token_id: int) -> str:
        """The characters this token completes ("" while a character is still incomplete)."""
        if self.tokenizer.is_special(token_id):
            return ""
        return self._decoder.decode(self.tokenizer.token_bytes(token_id))

    def flush(self) -> str:
        """Whatever is left: an unfinished character at the end shows as "�"."""
        return self._decoder.decode(b"", final=True)


def compression_stats(tokenizer, text: str) -> dict[str, float]:
    """Counts for one text under one tokenizer, and the ratios that compare tokenizers.

    ``tokenizer`` is anything with ``encode(text)`` returning a list of ids (or an object with an
    ``ids`` attribute, as HF ``tokenizers`` returns). Words are whitespace-separated, as ``wc -w``
    counts them; bytes are UTF-8 bytes.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not hasattr(tokenizer, "encode"):
        raise TypeError(f"tokenizer must have an encode(text) method, got {type(tokenizer).__name__}")
    words = len(text.split())
    if words == 0:
        raise ValueError("text must contain at least one word")
    encoded = tokenizer.encode(text)
    n_tokens = len(getattr(encoded, "ids", encoded))
    n_chars, n_bytes = len(text), len(utf8_bytes(text))
    return {
        "characters": n_chars,
        "bytes": n_bytes,
        "words": words,
        "tokens": n_tokens,
        "tokens_per_word": n_tokens / words,
        "characters_per_token": n_chars / n_tokens,
        "bytes_per_token": n_bytes / n_tokens,
    }


def gpt2_byte_alphabet() -> dict[int, str]:
    """Byte -> printable character, the alphabet GGUF's "gpt2" tokenizers store tokens in.

    Printable Latin-1 bytes stand for themselves; the other 68 (controls, space, ...) get the code
    points 256, 257, ... in byte order, so a space is "Ġ" (U+0120).
    """
    keep = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    extra = [b for b in range(256) if b not in keep]
    table = {b: chr(b) for b in keep}
    table.update({b: chr(256 + i) for i, b in enumerate(extra)})
    return dict(sorted(table.items()))
