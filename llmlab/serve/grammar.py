"""Structured output for the server: a JSON schema, enforced token by token, or refused with the keyword named.

The course's own decoder (``llmlab.constrained``, lab 09) is written to be read: a byte machine per
kind of value, walked together with a vocabulary trie. The server needs the whole of OpenAI's
structured outputs (strings of any length, ``pattern``, ``format``, numbers, arrays, nested objects,
``anyOf``, ``$ref``), so it uses a kept library instead: ``llguidance`` (chosen by measurement against
``xgrammar`` and ``outlines-core``, ``benchmarks/bench_grammar.py``; the numbers are in the issue-30 note).
The idea is the same as lab 09's: at every step, the logits of the tokens that would make the text
impossible to complete are set to ``-inf``.

The contract is "enforced or refused, never ignored": ``check_schema`` walks the schema and refuses,
naming it, every keyword the grammar engine would not enforce (``uniqueItems``, ``not``, an unknown
``format``, a typo). Annotations (``title``, ``description``, ...) change no output and pass.
``tighten`` rewrites what the library would let through too loosely: an integer without bounds
gets JSON's safe range (``|n| <= 2**53 - 1``; a client in JavaScript reads larger ones wrongly),
and the formats ``date``, ``time`` and ``date-time`` become patterns of real dates (no 30 February,
no 29 February outside leap years, no leap second: the library's own formats allow those).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

import torch

__all__ = ["ANNOTATIONS", "ENFORCED", "FORMATS", "GrammarConstraint", "GrammarEngine", "SAFE_INTEGER",
           "check_schema", "tighten"]

SAFE_INTEGER = 2**53 - 1  # Number.MAX_SAFE_INTEGER: the largest integer every JSON reader keeps exactly

# Keywords that change nothing in the output.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "$schema", "$id", "deprecated",
                         "readOnly", "writeOnly", "name", "strict"})
# Keywords the grammar enforces (each one checked by the JSON-Schema test set of bench_grammar.py).
ENFORCED = frozenset({
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions",
    "properties", "required", "additionalProperties",
    "items", "prefixItems", "minItems", "maxItems",
    "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
})
FORMATS = frozenset({"date", "time", "date-time", "email", "uuid"})
_DAY = ("(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
        "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
        "|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)")
_CLOCK = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:[.][0-9]{1,9})?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_FORMAT_PATTERNS = {"date": f"^{_DAY}$", "time": f"^{_CLOCK}$", "date-time": f"^{_DAY}[Tt]{_CLOCK}$"}
_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_SCHEMA_MAPS = ("properties", "$defs", "definitions")  # name -> subschema
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONE = ("items", "additionalProperties")  # a subschema or a boolean


def check_schema(schema: Any, path: str = "schema") -> None:
    """Raise ``ValueError`` naming the first keyword (and where it is) that would not be enforced."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, Mapping):
        raise ValueError(f"{path} must be a JSON schema object, got {type(schema).__name__}")
    for key, value in schema.items():
        where = f"{path}.{key}"
        if key in ANNOTATIONS:
            continue
        if key not in ENFORCED:
            raise ValueError(f"the JSON-Schema keyword {key!r} (at {path}) is not supported: it would not be "
                             "enforced during decoding")
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            bad = [k for k in kinds if k not in _TYPES]
            if bad or not kinds:
                raise ValueError(f"{where}: unknown type {bad[0] if bad else value!r}")
        elif key == "format" and value not in FORMATS:
            raise ValueError(f"{where}: the string format {value!r} is not supported (supported: "
                             f"{', '.join(sorted(FORMATS))})")
        elif key == "format" and "pattern" in schema:
            raise ValueError(f"{where}: 'format' together with 'pattern' in one schema is not supported")
        elif key in _SCHEMA_MAPS:
            if not isinstance(value, Mapping):
                raise ValueError(f"{where} must be an object of schemas")
            for name, sub in value.items():
                check_schema(sub, f"{where}.{name}")
        elif key in _SCHEMA_LISTS:
            if not isinstance(value, list) or not value:
                raise ValueError(f"{where} must be a non-empty list of schemas")
            for i, sub in enumerate(value):
                check_schema(sub, f"{where}[{i}]")
        elif key in _SCHEMA_ONE:
            check_schema(value, where)
        elif key == "required" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ValueError(f"{where} must be a list of property names")


def tighten(schema: Any) -> Any:
    """A copy of ``schema``: integers without a lower (upper) bound get ``-(2**53-1)`` (``2**53-1``);
    ``format`` date, time and date-time become the equivalent ``pattern``."""
    schema = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
            return
        if not isinstance(node, dict):
            return
        kinds = node.get("type")
        if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
            if "minimum" not in node and "exclusiveMinimum" not in node:
                node["minimum"] = -SAFE_INTEGER
            if "maximum" not in node and "exclusiveMaximum" not in node:
                node["maximum"] = SAFE_INTEGER
        if node.get("format") in _FORMAT_PATTERNS:
            node["pattern"] = _FORMAT_PATTERNS[node.pop("format")]
        for key, value in list(node.items()):
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                for sub in value.values():
                    visit(sub)
            elif key in _SCHEMA_LISTS or key in _SCHEMA_ONE:
                visit(value)

    visit(schema)
    return schema


def _require_llguidance():
    try:
        import llguidance
    except ImportError:  # pragma: no cover - the serve extra installs it
        raise ImportError("structured output (json_schema) needs llguidance: pip install -e '.[serve]'") from None
    return llguidance


class _Wrapper:
    """The interface ``llguidance.TokenizerWrapper`` reads: the tokens' bytes, EOS, specials, ``encode``."""

    def __init__(self, tokenizer: Any):
        self._tok = tokenizer
        self.eos_token_id = tokenizer.eos_id
        self.bos_token_id = tokenizer.bos_id
        # A special token's bytes start with 0xFF (never in UTF-8 text): the grammar can never write one.
        self.tokens = [b"\xff" + tokenizer.id_to_token(i).encode() if tokenizer.is_special(i)
                       else tokenizer.token_bytes(i) for i in range(len(tokenizer))]
        self.special_token_ids = list(tokenizer.special_ids)

    def __call__(self, text: bytes | str) -> list[int]:
        return self._tok.encode(text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text)


def llg_tokenizer(tokenizer: Any, stop_ids: Sequence[int]):
    """``llguidance.LLTokenizer`` of an llmlab tokenizer; ``stop_ids`` end the text once it is complete."""
    llg = _require_llguidance()
    return llg.LLTokenizer(llg.TokenizerWrapper(_Wrapper(tokenizer)), n_vocab=len(tokenizer),
                           eos_token=list(stop_ids))


class GrammarEngine:
    """Compiles schemas for one tokenizer (the vocabulary is prepared once per set of stop tokens)."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        self._llg_tokenizers: dict[tuple[int, ...], Any] = {}
        self._grammars: dict[str, str] = {}

    def grammar(self, schema: Mapping[str, Any]) -> str:
        """The llguidance grammar of ``schema`` (checked, integers bounded); ``ValueError`` if refused."""
        check_schema(schema)
        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            llg = _require_llguidance()
            # Compact JSON, no free whitespace: a model cannot burn its tokens on spaces.
            grammar = llg.LLMatcher.grammar_from_json_schema(
                tighten(dict(schema)), defaults={"whitespace_flexible": False})
            is_error, messages = llg.LLMatcher.validate_grammar_with_warnings(grammar)
            if is_error:
                raise ValueError(f"invalid JSON schema: {messages[0] if messages else 'rejected'}")
            if len(self._grammars) > 256:
                self._grammars.clear()
            self._grammars[key] = grammar
        return grammar

    def constraint(self, schema: Mapping[str, Any], stop_ids: Sequence[int], prompt_length: int) -> GrammarConstraint:
        stops = tuple(int(s) for s in stop_ids)
        llt = self._llg_tokenizers.get(stops)
        if llt is None:
            llt = self._llg_tokenizers[stops] = llg_tokenizer(self.tokenizer, stops)
        llg = _require_llguidance()
        matcher = llg.LLMatcher(llt, self.grammar(schema), log_level=0)
        if matcher.is_error():
            raise ValueError(f"invalid JSON schema: {matcher.get_error()}")
        return GrammarConstraint(matcher, prompt_length, len(self.tokenizer))


class GrammarConstraint:
    """An HF-style logits processor over one ``llguidance.LLMatcher`` (one request, batch of one).

    ``input_ids`` is the prompt and the tokens generated so far; the matcher follows them (and rolls
    back when they shrink: draft tokens of speculative decoding that were not accepted).
    """

    def __init__(self, matcher: Any, prompt_length: int, vocab_size: int):
        self.matcher, self.prompt_length, self.vocab_size = matcher, prompt_length, vocab_size
        self._consumed: list[int] = []
        self._shifts = torch.arange(32, dtype=torch.int32)

    def _follow(self, generated: list[int]) -> None:
        common = 0
        for a, b in zip(self._consumed, generated):
            if a != b:
                break
            common += 1
        if common < len(self._consumed):
            self.matcher.rollback(len(self._consumed) - common)
            del self._consumed[common:]
        for token in generated[common:]:
            if not self.matcher.consume_token(token):
                raise ValueError(f"token {token} breaks the JSON schema: {self.matcher.get_error()}")
            self._consumed.append(token)

    def allowed_mask(self) -> torch.Tensor:
        bits = torch.frombuffer(bytearray(self.matcher.compute_bitmask()), dtype=torch.int32)
        return ((bits.reshape(-1, 1) >> self._shifts) & 1).reshape(-1)[: self.vocab_size].bool()

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        ids = input_ids.reshape(-1).tolist()
        self._follow(ids[self.prompt_length:])
        if self.matcher.is_error():
            raise ValueError(f"the JSON schema cannot be continued: {self.matcher.get_error()}")
        blocked = ~self.allowed_mask()
        if scores.shape[-1] > self.vocab_size:  # padded output layer: the extra ids are never allowed
            blocked = torch.nn.functional.pad(blocked, (0, scores.shape[-1] - self.vocab_size), value=True)
        return scores.masked_fill(blocked.to(scores.device), float("-inf"))
