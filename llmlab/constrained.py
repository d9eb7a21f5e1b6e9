"""Constrained decoding: the generated text always belongs to a small language.

"Answer only with valid JSON" in a prompt is a wish; a constraint makes it a guarantee. At every step
it looks at the text generated so far and sets to ``-inf`` the logit of every token whose bytes would
make the text impossible to complete (chapter 08, "contrato de salida"; guide TG.7, "constrained
decoding for JSON"). Three languages are provided:

- ``ChoiceConstraint(["sí", "no"], ...)``: exactly one of the given strings.
- ``IntegerConstraint(..., minimum=1, maximum=5)``: a decimal integer, optionally bounded.
- ``JsonObjectConstraint(schema, ...)``: a JSON object with the given keys, in order, whose values are
  an enum, a bounded integer or a bounded string. The text is exactly what
  ``json.dumps(obj, ensure_ascii=False)`` would print, e.g. ``{"riesgo": "bajo", "plazo_dias": 7}``.

How it works. Tokens of a byte-level BPE are byte strings, and a token may hold half of a character
("acción" can be split as ``acci\\xc3`` + ``\\xb3n``), so everything happens on bytes:

1. A *machine* reads bytes one at a time: ``step(state, byte)`` returns the next state, or ``None`` when
   no completion of the text exists any more. Every state it returns can still be completed, so
   generation can never get stuck.
2. The vocabulary is stored as a prefix trie of the tokens' bytes. To find the allowed tokens in a
   state we walk the trie and the machine together and prune a whole subtree as soon as a byte is
   rejected (all tokens starting with ``x`` are rejected in one step).
3. The allowed set depends only on the state, so it is cached per state.

End of sequence (EOS) is allowed only when the text is complete; when nothing can follow, EOS is the
only allowed token. All strings have a maximum length, so generation always ends: ``max_new_tokens``
is an upper bound on the number of tokens, EOS included.

A constraint is an HF-style logits processor, ``constraint(input_ids, scores) -> scores``: pass it to
``llmlab.sampling.Sampler(constraint=...)`` or, inside a ``LogitsProcessorList``, to HF ``generate``.
``input_ids`` holds the prompt followed by the generated tokens; the constraint needs to know where the
prompt ends (``prompt_length``, see ``Constraint``).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

__all__ = [
    "Constraint",
    "ChoiceConstraint",
    "IntegerConstraint",
    "JsonObjectConstraint",
    "validate_json_object",
    "generate_json",
]


# --------------------------------------------------------------------------------------------------
# Byte machines. A state is any hashable value; `step` returns None for a dead end.
# --------------------------------------------------------------------------------------------------

class _Choices:
    """Exactly one of a list of byte strings (also used for literals such as ``{"riesgo": ``)."""

    def __init__(self, words: Sequence[bytes]):
        self.children: list[dict[int, int]] = [{}]
        self.terminal: list[bool] = [False]
        for word in words:
            node = 0
            for b in word:
                nxt = self.children[node].get(b)
                if nxt is None:
                    nxt = len(self.children)
                    self.children.append({})
                    self.terminal.append(False)
                    self.children[node][b] = nxt
                node = nxt
            self.terminal[node] = True
        self.start = 0
        self.max_bytes = max(len(w) for w in words)

    def step(self, state: int, byte: int) -> int | None:
        return self.children[state].get(byte)

    def is_complete(self, state: int) -> bool:
        return self.terminal[state]

    def cache_key(self, state: int, horizon: int) -> Any:
        return state


class _Integer:
    """A canonical decimal integer (no ``+``, no leading zeros, no ``-0``) in ``[minimum, maximum]``.

    The state is the text so far. A prefix is alive if some integer of at most ``max_digits`` digits
    that starts with it lies in the range: for each possible length the completions form one interval.
    """

    def __init__(self, minimum: int | None, maximum: int | None, max_digits: int):
        self.minimum, self.maximum, self.max_digits = minimum, maximum, max_digits
        self.start = b""
        self.max_bytes = max_digits + 1
        self._alive: dict[bytes, bool] = {}

    def _in_range(self, lo: int, hi: int) -> bool:
        if self.minimum is not None:
            lo = max(lo, self.minimum)
        if self.maximum is not None:
            hi = min(hi, self.maximum)
        return lo <= hi

    def _is_alive(self, text: bytes) -> bool:
        negative = text.startswith(b"-")
        digits = text[1:] if negative else text
        if not digits.isdigit() and digits != b"":
            return False
        if digits.startswith(b"0") and (len(digits) > 1 or negative):
            return False
        if len(digits) > self.max_digits:
            return False
        for length in range(max(len(digits), 1), self.max_digits + 1):
            if digits == b"":  # just "-": any negative number of this length
                lo, hi = (1 if length == 1 else 10 ** (length - 1)), 10 ** length - 1
            elif digits == b"0":
                if length > 1:
                    break
                lo = hi = 0
            else:
                scale = 10 ** (length - len(digits))
                lo = int(digits) * scale
                hi = lo + scale - 1
            if negative:
                lo, hi = -hi, -lo
            if self._in_range(lo, hi):
                return True
        return False

    def step(self, state: bytes, byte: int) -> bytes | None:
        if byte != 0x2D and not 0x30 <= byte <= 0x39:  # only "-" and digits
            return None
        text = state + bytes((byte,))
        alive = self._alive.get(text)
        if alive is None:
            alive = self._alive[text] = self._is_alive(text)
        return text if alive else None

    def is_complete(self, state: bytes) -> bool:
        if state in (b"", b"-"):
            return False
        value = int(state)
        return self._in_range(value, value)

    def cache_key(self, state: bytes, horizon: int) -> Any:
        return state


# UTF-8 lead byte -> (continuation bytes still needed, allowed range of the next byte). The narrow
# ranges after E0, ED, F0 and F4 exclude overlong forms, surrogates and code points above U+10FFFF,
# so whatever passes decodes with errors="strict".
_UTF8_LEADS: dict[int, tuple[int, int, int]] = {}
for _b in range(0xC2, 0xE0):
    _UTF8_LEADS[_b] = (1, 0x80, 0xBF)
for _b in range(0xE0, 0xF0):
    _UTF8_LEADS[_b] = (2, 0xA0 if _b == 0xE0 else 0x80, 0x9F if _b == 0xED else 0xBF)
for _b in range(0xF0, 0xF5):
    _UTF8_LEADS[_b] = (3, 0x90 if _b == 0xF0 else 0x80, 0x8F if _b == 0xF4 else 0xBF)

_QUOTE, _BACKSLASH = 0x22, 0x5C
_OPEN, _CLOSED = "open", "closed"


class _String:
    """A JSON string literal of ``min_length``..``max_length`` characters, written without escapes.

    Inside the quotes any character is allowed except ``"``, ``\\`` and control characters (which JSON
    would need to escape), so the text is always what ``json.dumps(value, ensure_ascii=False)`` prints.
    Lengths count characters (code points), like Python's ``len``. The state inside the quotes is
    ``(n_chars, pending, lo, hi)``: ``pending`` continuation bytes of a multi-byte character are still
    expected, the next one in ``[lo, hi]``.
    """

    def __init__(self, min_length: int, max_length: int):
        self.min_length, self.max_length = min_length, max_length
        self.start = _OPEN
        self.max_bytes = 2 + 4 * max_length

    def step(self, state: Any, byte: int) -> Any:
        if state == _OPEN:
            return (0, 0, 0, 0) if byte == _QUOTE else None
        if state == _CLOSED:
            return None
        n, pending, lo, hi = state
        if pending:
            return (n, pending - 1, 0x80, 0xBF) if lo <= byte <= hi else None
        if byte == _QUOTE:
            return _CLOSED if n >= self.min_length else None
        if n >= self.max_length or byte < 0x20 or byte == _BACKSLASH:
            return None
        if byte < 0x80:
            return (n + 1, 0, 0, 0)
        lead = _UTF8_LEADS.get(byte)
        return None if lead is None else (n + 1, *lead)

    def is_complete(self, state: Any) -> bool:
        return state == _CLOSED

    def cache_key(self, state: Any, horizon: int) -> Any:
        # A token adds at most `horizon` characters, so far from both length limits the allowed set does
        # not depend on the exact count: clipping the distances makes those states share one cache entry.
        if state in (_OPEN, _CLOSED):
            return state
        n, pending, lo, hi = state
        room = min(self.max_length - n, horizon)
        missing = min(max(self.min_length - n, 0), horizon)
        return (room, missing, pending, lo, hi)


class _Sequence:
    """Parts one after the other (literal, value, literal, ...). The state is ``(part index, part state)``.

    When a byte could both continue the current part and start the next one, the current part wins.
    The JSON pieces never meet that case (a value ends with ``"``, ``}`` or a digit, and what follows
    starts with ``,`` or ``}``); in any case every state reached stays completable.
    """

    def __init__(self, parts: Sequence[Any]):
        self.parts = list(parts)
        self.start = (0, self.parts[0].start)
        self.max_bytes = sum(p.max_bytes for p in self.parts)

    def step(self, state: tuple[int, Any], byte: int) -> tuple[int, Any] | None:
        i, sub = state
        part = self.parts[i]
        nxt = part.step(sub, byte)
        if nxt is not None:
            return (i, nxt)
        if i + 1 < len(self.parts) and part.is_complete(sub):
            following = self.parts[i + 1]
            nxt = following.step(following.start, byte)
            if nxt is not None:
                return (i + 1, nxt)
        return None

    def is_complete(self, state: tuple[int, Any]) -> bool:
        i, sub = state
        return i == len(self.parts) - 1 and self.parts[i].is_complete(sub)

    def cache_key(self, state: tuple[int, Any], horizon: int) -> Any:
        i, sub = state
        return (i, self.parts[i].cache_key(sub, horizon))


# --------------------------------------------------------------------------------------------------
# Constraint: machine + vocabulary -> masks
# --------------------------------------------------------------------------------------------------

_FINISHED = "finished"  # state after EOS; only EOS (the padding of finished rows) is allowed


class _TrieNode:
    __slots__ = ("children", "token_ids")

    def __init__(self) -> None:
        self.children: dict[int, _TrieNode] = {}
        self.token_ids: list[int] = []


class Constraint:
    """Base class: a byte machine plus a vocabulary; masks logits so the text stays completable.

    - ``token_bytes[i]`` is the byte string token ``i`` decodes to (for a byte-level BPE,
      ``tokenizer.vocab_bytes()``); ``None`` or ``b""`` marks a token that is never allowed.
    - ``eos_token_id``: one id or several; allowed only when the text is complete.
    - ``special_token_ids``: ids never allowed inside the text (BOS, PAD, chat markers), because their
      bytes such as ``b"<|user|>"`` would otherwise count as ordinary text.
    - ``prompt_length``: number of leading ``input_ids`` that are the prompt. With ``None`` it is found
      automatically: the first call's length, and again whenever a call does not extend the previous
      sequence by exactly one token or its prompt changes (a new generation). Passing it is explicit.

    ``max_new_tokens`` is an upper bound on the generated tokens, EOS included.
    """

    def __init__(self, machine: Any, token_bytes: Sequence[bytes | None], eos_token_id: int | Iterable[int],
                 *, special_token_ids: Iterable[int] = (), prompt_length: int | None = None):
        if isinstance(token_bytes, (bytes, str)) or not isinstance(token_bytes, Sequence) or not token_bytes:
            raise TypeError("`token_bytes` must be a non-empty sequence with one bytes object (or None) per token id")
        for i, b in enumerate(token_bytes):
            if b is not None and not isinstance(b, (bytes, bytearray)):
                raise TypeError(f"`token_bytes[{i}]` must be bytes or None, got {type(b).__name__}")
        self.vocab_size = len(token_bytes)
        eos_ids = [eos_token_id] if isinstance(eos_token_id, numbers.Integral) else list(eos_token_id)
        if not eos_ids or not all(isinstance(e, numbers.Integral) and 0 <= e < self.vocab_size for e in eos_ids):
            raise ValueError(f"`eos_token_id` must be one id or a list of ids in [0, {self.vocab_size}), "
                             f"got {eos_token_id!r}")
        self.eos_token_ids = [int(e) for e in eos_ids]
        banned = set(self.eos_token_ids) | {int(i) for i in special_token_ids}
        if prompt_length is not None and (not isinstance(prompt_length, numbers.Integral) or prompt_length < 0):
            raise ValueError(f"`prompt_length` must be an int >= 0 or None, got {prompt_length!r}")
        self.prompt_length = prompt_length
        self.machine = machine
        self.max_new_tokens = machine.max_bytes + 1  # every token holds >= 1 byte, plus EOS

        self._token_bytes = [None if (i in banned or not b) else bytes(b) for i, b in enumerate(token_bytes)]
        self._root = _TrieNode()
        for token_id, b in enumerate(self._token_bytes):
            if b is None:
                continue
            node = self._root
            for byte in b:
                node = node.children.setdefault(byte, _TrieNode())
            node.token_ids.append(token_id)
        longest = max((len(b) for b in self._token_bytes if b is not None), default=0)
        self._horizon = longest + 1
        self._blocked_cache: dict[Any, torch.Tensor] = {}
        self._state_cache: dict[tuple[int, ...], Any] = {}
        self._auto_prompt: torch.Tensor | None = None
        self._last_length = -1

    # -- text-level helpers -------------------------------------------------------------------------

    def _walk_bytes(self, state: Any, data: bytes) -> Any:
        step = self.machine.step
        for byte in data:
            state = step(state, byte)
            if state is None:
                return None
        return state

    def is_prefix(self, text: str | bytes) -> bool:
        """Can ``text`` still be completed into a member of the language?"""
        return self._walk_bytes(self.machine.start, _to_bytes(text)) is not None

    def accepts(self, text: str | bytes) -> bool:
        """Is ``text`` a complete member of the language?"""
        state = self._walk_bytes(self.machine.start, _to_bytes(text))
        return state is not None and self.machine.is_complete(state)

    def parse(self, text: str | bytes) -> Any:
        """The value ``text`` stands for; ``ValueError`` if it is not in the language."""
        if not self.accepts(text):
            raise ValueError(f"{_to_bytes(text).decode('utf-8', errors='replace')!r} is not accepted by {self!r}")
        return _to_bytes(text).decode("utf-8")

    def decode(self, generated_ids: Iterable[int]) -> str:
        """Text of the generated ids, stopping at the first EOS (invalid UTF-8 shows as U+FFFD)."""
        out = []
        for token_id in _as_int_list(generated_ids):
            if token_id in self.eos_token_ids:
                break
            out.append(self._token_bytes[token_id] or b"")
        return b"".join(out).decode("utf-8", errors="replace")

    # -- token-level: states and masks ----------------------------------------------------------------

    def _advance(self, state: Any, token_id: int, ids: tuple[int, ...]) -> Any:
        if state is _FINISHED:
            return _FINISHED  # padding after EOS
        if token_id in self.eos_token_ids:
            if not self.machine.is_complete(state):
                raise ValueError(f"EOS generated before the text was complete (generated ids {list(ids)})")
            return _FINISHED
        data = self._token_bytes[token_id] if 0 <= token_id < self.vocab_size else None
        nxt = None if data is None else self._walk_bytes(state, data)
        if nxt is None:
            raise ValueError(f"generated ids {list(ids)} are not a valid prefix for {self!r}: token {token_id} "
                             "is not allowed there (were they generated with this constraint?)")
        return nxt

    def state_after(self, generated_ids: Iterable[int]) -> Any:
        """Machine state after the generated ids (incremental: the previous prefix is usually cached)."""
        ids = tuple(_as_int_list(generated_ids))
        state = self._state_cache.get(ids)
        if state is not None:
            return state
        if not ids:
            return self.machine.start
        previous = self._state_cache.get(ids[:-1])
        if previous is not None:
            state = self._advance(previous, ids[-1], ids)
        else:
            state = self.machine.start
            for k, token_id in enumerate(ids):
                state = self._advance(state, token_id, ids[: k + 1])
        if len(self._state_cache) > 200_000:
            self._state_cache.clear()
        self._state_cache[ids] = state
        return state

    def _allowed_ids(self, state: Any) -> list[int]:
        """Walk the vocabulary trie together with the machine, pruning dead subtrees."""
        if state is _FINISHED:
            return list(self.eos_token_ids)
        step = self.machine.step
        allowed: list[int] = []
        stack = [(self._root, state)]
        while stack:
            node, st = stack.pop()
            for byte, child in node.children.items():
                nxt = step(st, byte)
                if nxt is None:
                    continue
                allowed.extend(child.token_ids)
                if child.children:
                    stack.append((child, nxt))
        if self.machine.is_complete(state):
            allowed.extend(self.eos_token_ids)
        if not allowed:
            raise RuntimeError(f"no token of the vocabulary can continue the text in state {state!r}; "
                               "a byte-level vocabulary (all 256 single bytes) never gets here")
        return allowed

    def _blocked(self, state: Any) -> torch.Tensor:
        key = _FINISHED if state is _FINISHED else self.machine.cache_key(state, self._horizon)
        blocked = self._blocked_cache.get(key)
        if blocked is None:
            blocked = torch.ones(self.vocab_size, dtype=torch.bool)
            blocked[self._allowed_ids(state)] = False
            self._blocked_cache[key] = blocked
        return blocked

    def allowed_mask(self, generated_ids: Iterable[int]) -> torch.Tensor:
        """``BoolTensor[vocab]``: which tokens may come next after ``generated_ids``."""
        return ~self._blocked(self.state_after(generated_ids))

    def _prompt_length_for(self, input_ids: torch.Tensor) -> int:
        t = input_ids.shape[-1]
        if self.prompt_length is not None:
            if t < self.prompt_length:
                raise ValueError(f"input_ids has {t} tokens, fewer than prompt_length={self.prompt_length}")
            return self.prompt_length
        prompt = self._auto_prompt
        new_generation = (prompt is None or t != self._last_length + 1 or prompt.shape[0] != input_ids.shape[0]
                          or not torch.equal(input_ids[:, : prompt.shape[1]], prompt))
        if new_generation:
            self._auto_prompt = prompt = input_ids.detach().clone()
        self._last_length = t
        return prompt.shape[1]

    def reset(self) -> None:
        """Forget the automatically detected prompt (the mask cache is kept: it depends only on the vocab)."""
        self._auto_prompt, self._last_length = None, -1
        self._state_cache.clear()

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """HF logits-processor protocol: ``scores [batch, vocab]`` with forbidden tokens at ``-inf``."""
        if not isinstance(input_ids, torch.Tensor) or not isinstance(scores, torch.Tensor):
            raise TypeError("`input_ids` and `scores` must be torch tensors")
        single = scores.dim() == 1
        if single:
            input_ids, scores = input_ids.reshape(1, -1), scores.unsqueeze(0)
        if scores.dim() != 2 or input_ids.dim() != 2 or input_ids.shape[0] != scores.shape[0]:
            raise ValueError(f"expected input_ids [batch, t] and scores [batch, vocab], got "
                             f"{tuple(input_ids.shape)} and {tuple(scores.shape)}")
        vocab = scores.shape[-1]
        if vocab < self.vocab_size:
            raise ValueError(f"scores have {vocab} columns but token_bytes describes {self.vocab_size} tokens")
        start = self._prompt_length_for(input_ids)
        blocked = torch.stack([self._blocked(self.state_after(row)) for row in input_ids[:, start:].tolist()])
        if vocab > self.vocab_size:  # extra ids of a padded output layer: never allowed
            blocked = torch.nn.functional.pad(blocked, (0, vocab - self.vocab_size), value=True)
        out = scores.masked_fill(blocked.to(scores.device), float("-inf"))
        return out[0] if single else out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"


def _to_bytes(text: str | bytes) -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray)):
        return bytes(text)
    raise TypeError(f"expected str or bytes, got {type(text).__name__}")


def _as_int_list(ids: Iterable[int]) -> list[int]:
    if isinstance(ids, torch.Tensor):
        return ids.reshape(-1).tolist()
    return [int(i) for i in ids]


# --------------------------------------------------------------------------------------------------
# The three languages
# --------------------------------------------------------------------------------------------------

class ChoiceConstraint(Constraint):
    """The output is exactly one of ``choices`` (non-empty strings), e.g. ``["sí", "no", "no lo sé"]``.

    A choice that is a prefix of another (``"sí"`` and ``"sí, claro"``) may end at EOS or continue.
    ``parse(text)`` returns the choice.
    """

    def __init__(self, choices: Sequence[str], token_bytes: Sequence[bytes | None], eos_token_id: int | Iterable[int],
                 **kwargs: Any):
        if isinstance(choices, str) or not isinstance(choices, Sequence) or not choices:
            raise ValueError("`choices` must be a non-empty list of strings")
        if not all(isinstance(c, str) and c for c in choices):
            raise ValueError(f"every choice must be a non-empty str, got {list(choices)!r}")
        self.choices = list(dict.fromkeys(choices))
        super().__init__(_Choices([c.encode("utf-8") for c in self.choices]), token_bytes, eos_token_id, **kwargs)

    def __repr__(self) -> str:
        return f"ChoiceConstraint({self.choices!r})"


class IntegerConstraint(Constraint):
    """The output is a decimal integer ``minimum <= n <= maximum`` with at most ``max_digits`` digits.

    Canonical form only (``"-12"``, ``"0"``; never ``"+3"``, ``"007"`` or ``"-0"``), so ``str(int(text))
    == text``. ``max_digits`` defaults to the digits of the widest bound when both bounds are given,
    else 18 (every such number fits in an int64). ``parse(text)`` returns the ``int``.
    """

    def __init__(self, token_bytes: Sequence[bytes | None], eos_token_id: int | Iterable[int], *,
                 minimum: int | None = None, maximum: int | None = None, max_digits: int | None = None,
                 **kwargs: Any):
        self.minimum, self.maximum, self.max_digits = _integer_bounds(minimum, maximum, max_digits, "IntegerConstraint")
        super().__init__(_Integer(self.minimum, self.maximum, self.max_digits), token_bytes, eos_token_id, **kwargs)

    def parse(self, text: str | bytes) -> int:
        return int(super().parse(text))

    def __repr__(self) -> str:
        return f"IntegerConstraint(minimum={self.minimum}, maximum={self.maximum}, max_digits={self.max_digits})"


def _integer_bounds(minimum: Any, maximum: Any, max_digits: Any, where: str) -> tuple[int | None, int | None, int]:
    for name, value in (("minimum", minimum), ("maximum", maximum)):
        if value is not None and (not isinstance(value, numbers.Integral) or isinstance(value, bool)):
            raise ValueError(f"{where}: `{name}` must be an int or None, got {value!r}")
    if minimum is not None and maximum is not None and minimum > maximum:
        raise ValueError(f"{where}: `minimum` ({minimum}) is larger than `maximum` ({maximum})")
    if max_digits is None:
        if minimum is not None and maximum is not None:
            max_digits = max(len(str(abs(int(minimum)))), len(str(abs(int(maximum)))))
        else:
            max_digits = 18
    if not isinstance(max_digits, numbers.Integral) or isinstance(max_digits, bool) or max_digits < 1:
        raise ValueError(f"{where}: `max_digits` must be an int >= 1, got {max_digits!r}")
    machine = _Integer(minimum, maximum, int(max_digits))
    if not any(machine.step(b"", b) is not None for b in b"-0123456789"):
        raise ValueError(f"{where}: no integer with at most {max_digits} digits lies in [{minimum}, {maximum}]")
    return (None if minimum is None else int(minimum), None if maximum is None else int(maximum), int(max_digits))


# -- JSON objects ------------------------------------------------------------------------------------

# Keywords that change nothing in the output, and the ones each kind of field enforces. Any other
# keyword is refused: a constraint that ignored it would let through values that break the schema.
_ANNOTATIONS = {"title", "description", "default", "examples", "$comment"}
_FIELD_KEYWORDS = {"enum": {"enum", "type"}, "string": {"type", "minLength", "maxLength"},
                   "integer": {"type", "minimum", "maximum", "maxDigits"}}
_OBJECT_KEYWORDS = {"type", "properties", "required", "additionalProperties", "$schema"}


def _refuse_unknown(where: str, spec: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = [k for k in spec if k not in allowed and k not in _ANNOTATIONS]
    if unknown:
        raise ValueError(f"{where}: the keyword {unknown[0]!r} is not supported by this constraint "
                         f"(supported here: {sorted(allowed)})")

def _normalise_schema(schema: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Schema -> ``{key: field}`` where field is ``{"enum": [...]}``, ``{"type": "string", ...}`` or
    ``{"type": "integer", ...}``. Accepts a JSON-Schema-like object (``{"type": "object",
    "properties": {...}, "required": [...]}``) or the properties mapping itself; a list is an enum."""
    if not isinstance(schema, Mapping):
        raise TypeError(f"`schema` must be a mapping, got {type(schema).__name__}")
    if "properties" in schema:
        if schema.get("type", "object") != "object":
            raise ValueError("`schema` with 'properties' must have type 'object'")
        _refuse_unknown("`schema`", schema, _OBJECT_KEYWORDS)
        properties = schema["properties"]
        required = schema.get("required", list(properties))
        missing = [k for k in properties if k not in required]
        if missing:
            raise ValueError(f"every property must be required (the constraint always writes every key); "
                             f"not required: {missing}")
    else:
        properties = schema
    if not isinstance(properties, Mapping) or not properties:
        raise ValueError("`schema` must describe at least one key")
    fields: dict[str, dict[str, Any]] = {}
    for key, spec in properties.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"keys must be non-empty strings, got {key!r}")
        if isinstance(spec, (list, tuple)):
            spec = {"enum": list(spec)}
        if not isinstance(spec, Mapping):
            raise ValueError(f"field {key!r}: expected a list of values or a dict, got {spec!r}")
        kind = "enum" if "enum" in spec else spec.get("type")
        if kind in _FIELD_KEYWORDS:
            _refuse_unknown(f"field {key!r}", spec, _FIELD_KEYWORDS[kind])
        if "enum" in spec:
            values = list(spec["enum"])
            if not values or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
                raise ValueError(f"field {key!r}: 'enum' must be a non-empty list of str or int, got {values!r}")
            fields[key] = {"enum": values}
        elif spec.get("type") == "string":
            lo, hi = spec.get("minLength", 0), spec.get("maxLength")
            if hi is None:
                raise ValueError(f"field {key!r}: a string needs 'maxLength' so that generation always ends")
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)) or not 0 <= lo <= hi:
                raise ValueError(f"field {key!r}: need integers 0 <= minLength <= maxLength, got {lo!r}, {hi!r}")
            fields[key] = {"type": "string", "minLength": lo, "maxLength": hi}
        elif spec.get("type") == "integer":
            lo, hi, digits = _integer_bounds(spec.get("minimum"), spec.get("maximum"), spec.get("maxDigits"),
                                             f"field {key!r}")
            fields[key] = {"type": "integer", "minimum": lo, "maximum": hi, "maxDigits": digits}
        else:
            raise ValueError(f"field {key!r}: expected 'enum', type 'string' or type 'integer', got {dict(spec)!r}")
    return fields


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def validate_json_object(obj: Any, schema: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the first way ``obj`` breaks ``schema`` (keys, order, types, bounds)."""
    fields = _normalise_schema(schema)
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    if list(obj) != list(fields):
        raise ValueError(f"expected the keys {list(fields)} in that order, got {list(obj)}")
    for key, field in fields.items():
        value = obj[key]
        if "enum" in field:
            if not any(type(value) is type(v) and value == v for v in field["enum"]):
                raise ValueError(f"{key!r}: {value!r} is not one of {field['enum']!r}")
        elif field["type"] == "string":
            if not isinstance(value, str) or not field["minLength"] <= len(value) <= field["maxLength"]:
                raise ValueError(f"{key!r}: expected a string of {field['minLength']}..{field['maxLength']} "
                                 f"characters, got {value!r}")
        else:
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{key!r}: expected an integer, got {value!r}")
            if (field["minimum"] is not None and value < field["minimum"]) or (
                    field["maximum"] is not None and value > field["maximum"]):
                raise ValueError(f"{key!r}: {value} is outside [{field['minimum']}, {field['maximum']}]")


class JsonObjectConstraint(Constraint):
    """The output is one JSON object with the schema's keys, in order, as ``json.dumps`` prints it.

    Example (the output contract of chapter 08)::

        schema = {
            "categoria": ["ampliacion_plazo", "incidencia_tecnica", "consulta_academica"],
            "riesgo": ["bajo", "medio", "alto"],
            "accion_recomendada": {"type": "string", "minLength": 1, "maxLength": 120},
            "fuente": {"type": "string", "minLength": 1, "maxLength": 60},
        }

    Each value is an enum (a list, or ``{"enum": [...]}``; strings or ints), ``{"type": "integer",
    "minimum", "maximum", "maxDigits"}`` or ``{"type": "string", "minLength", "maxLength"}``
    (``maxLength`` is required: it is what guarantees the end). A full JSON-Schema object with
    ``"properties"`` is accepted too; every key is required. Strings never contain ``"``, ``\\`` or
    control characters (no escapes are generated). The separators are json.dumps' defaults (``": "`` and
    ``", "``), so ``json.dumps(json.loads(text), ensure_ascii=False) == text``. ``parse(text)`` returns the
    dict after checking it with ``validate_json_object``.
    """

    def __init__(self, schema: Mapping[str, Any], token_bytes: Sequence[bytes | None],
                 eos_token_id: int | Iterable[int], **kwargs: Any):
        self.schema = schema
        self.fields = _normalise_schema(schema)
        parts: list[Any] = []
        for k, (key, field) in enumerate(self.fields.items()):
            opening = ("{" if k == 0 else ", ") + _dumps(key) + ": "
            parts.append(_Choices([opening.encode("utf-8")]))
            if "enum" in field:
                parts.append(_Choices([_dumps(v).encode("utf-8") for v in field["enum"]]))
            elif field["type"] == "string":
                parts.append(_String(field["minLength"], field["maxLength"]))
            else:
                parts.append(_Integer(field["minimum"], field["maximum"], field["maxDigits"]))
        parts.append(_Choices([b"}"]))
        super().__init__(_Sequence(parts), token_bytes, eos_token_id, **kwargs)

    def parse(self, text: str | bytes) -> dict[str, Any]:
        obj = json.loads(super().parse(text))
        validate_json_object(obj, self.schema)
        return obj

    def __repr__(self) -> str:
        return f"JsonObjectConstraint(keys={list(self.fields)})"


def generate_json(model: Any, prompt_ids: torch.Tensor, schema: Mapping[str, Any],
                  token_bytes: Sequence[bytes | None], eos_token_id: int | Iterable[int], *,
                  special_token_ids: Iterable[int] = (), max_new_tokens: int | None = None,
                  **sampling_kwargs: Any) -> dict[str, Any]:
    """Generate one JSON object that follows ``schema`` with ``llmlab.model.generate`` and return it parsed.

    ``prompt_ids`` is one prompt, ``[t]`` or ``[1, t]``. ``sampling_kwargs`` go to
    ``llmlab.sampling.Sampler`` (greedy by default; e.g. ``do_sample=True, temperature=0.2,
    generator=g``). ``max_new_tokens`` defaults to the constraint's bound, capped by the model's
    ``max_seq_len``; if the budget runs out before the object is complete, ``ValueError`` is raised.
    """
    from llmlab.model import generate  # lazy: the constraint itself does not need a model

    ids = prompt_ids.reshape(1, -1) if isinstance(prompt_ids, torch.Tensor) and prompt_ids.dim() == 1 else prompt_ids
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.shape[0] != 1:
        raise ValueError("`prompt_ids` must be one prompt of shape [t] or [1, t]")
    constraint = JsonObjectConstraint(schema, token_bytes, eos_token_id, special_token_ids=special_token_ids,
                                      prompt_length=ids.shape[1])
    if max_new_tokens is None:
        room = getattr(getattr(model, "config", None), "max_seq_len", None)
        max_new_tokens = constraint.max_new_tokens if room is None else min(constraint.max_new_tokens,
                                                                           room - ids.shape[1])
    out = generate(model, ids, max_new_tokens, eos_token_id=constraint.eos_token_ids, constraint=constraint,
                   **sampling_kwargs)
    generated = out[0, ids.shape[1]:].tolist()
    if not any(t in constraint.eos_token_ids for t in generated):
        raise ValueError(f"the object was not finished within max_new_tokens={max_new_tokens} tokens; "
                         f"allow up to {constraint.max_new_tokens}")
    return constraint.parse(constraint.decode(generated))
