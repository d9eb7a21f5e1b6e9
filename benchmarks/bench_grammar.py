"""Which grammar engine should the server use? Three kept libraries and the course's own decoder, side by side.

For every schema of a small JSON-Schema test set (one keyword at a time, plus the OpenAI strict-mode
subset) each engine compiles the schema (or refuses it), then generates ``--samples`` outputs with
random logits tilted towards short, structural tokens (so that unbounded strings end). Every finished
output is checked with ``jsonschema``: an engine that accepts a schema and lets an invalid output
through has broken its contract. The mask time per token is the engine's overhead.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_grammar.py --samples 10

Engines: the server's (llguidance behind ``llmlab.serve.grammar``), ``llguidance``, ``xgrammar``, ``outlines-core`` (each skipped if not installed) and
``llmlab.constrained`` (the readable decoder of lab 09; it knows only enums, bounded integers and
strings of bounded length, in objects whose keys are all required).
"""

from __future__ import annotations

import argparse
import json
import time

import torch

SAFE = 2**53 - 1
OBJ = {"type": "object", "additionalProperties": False}


def _o(props: dict, required=None) -> dict:
    return {**OBJ, "properties": props, "required": list(props) if required is None else required}


# name -> schema. Each checks one thing; jsonschema (with format checking) is the judge.
SCHEMAS: dict[str, dict] = {
    "enum": _o({"r": {"enum": ["bajo", "medio", "alto"]}}),
    "const": _o({"v": {"const": "fijo"}}),
    "integer bounded": _o({"n": {"type": "integer", "minimum": 1, "maximum": 5}}),
    "integer unbounded": _o({"n": {"type": "integer"}}),
    "exclusiveMaximum": _o({"n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 5}}),
    "multipleOf": _o({"n": {"type": "integer", "minimum": 0, "maximum": 100, "multipleOf": 7}}),
    "number": _o({"x": {"type": "number", "minimum": -1.5, "maximum": 2.5}}),
    "boolean/null": _o({"b": {"type": "boolean"}, "z": {"type": "null"}}),
    "string bounded": _o({"s": {"type": "string", "minLength": 2, "maxLength": 8}}),
    "string unbounded": _o({"s": {"type": "string"}}),
    "pattern": _o({"s": {"type": "string", "pattern": "^[a-z]+$"}}),
    "format date": _o({"s": {"type": "string", "format": "date"}}),
    "format time": _o({"s": {"type": "string", "format": "time"}}),
    "format date-time": _o({"s": {"type": "string", "format": "date-time"}}),
    "format email": _o({"s": {"type": "string", "format": "email"}}),
    "format uuid": _o({"s": {"type": "string", "format": "uuid"}}),
    "array min/maxItems": _o({"a": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9},
                                    "minItems": 1, "maxItems": 3}}),
    "nested object": _o({"p": _o({"q": {"type": "boolean"}})}),
    "anyOf": _o({"v": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9}, {"type": "null"}]}}),
    "$defs/$ref": {**_o({"p": {"$ref": "#/$defs/P"}}), "$defs": {"P": _o({"k": {"enum": [1, 2]}})}},
    "optional property": _o({"a": {"type": "boolean"}, "b": {"type": "boolean"}}, required=["a"]),
    "json_object": {"type": "object"},
    "uniqueItems": _o({"a": {"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": True, "maxItems": 2}}),
    "not": _o({"v": {"not": {"type": "string"}}}),
}


def _validator(schema):
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


class _Vocab:
    def __init__(self, tokenizer, stop_ids):
        self.tok, self.stop_ids = tokenizer, list(stop_ids)
        self.size = len(tokenizer)
        self.bytes = [b"" if tokenizer.is_special(i) else tokenizer.token_bytes(i) for i in range(self.size)]


def _unpack(bits: torch.Tensor, size: int) -> torch.Tensor:
    """int32 bitmask [ceil(V/32)] -> bool [V]."""
    shifts = torch.arange(32, dtype=torch.int32)
    return ((bits.reshape(-1, 1) >> shifts) & 1).reshape(-1)[:size].bool()


class Llguidance:
    name = "llguidance"

    def __init__(self, vocab: _Vocab):
        import llguidance
        from llmlab.serve.grammar import llg_tokenizer

        self.llg, self.vocab = llguidance, vocab
        self.tokenizer = llg_tokenizer(vocab.tok, vocab.stop_ids)

    def compile(self, schema):
        g = self.llg.LLMatcher.grammar_from_json_schema(schema, defaults={"whitespace_flexible": False})
        err, msgs = self.llg.LLMatcher.validate_grammar_with_warnings(g, self.tokenizer)
        if err:
            raise ValueError(msgs[0])
        return lambda: _LlgRun(self.llg.LLMatcher(self.tokenizer, g), self.vocab.size)


class _LlgRun:
    def __init__(self, matcher, size):
        self.m, self.size = matcher, size

    def mask(self):
        return _unpack(torch.frombuffer(bytearray(self.m.compute_bitmask()), dtype=torch.int32), self.size)

    def consume(self, token):
        self.m.consume_token(token)


class Server:
    """What the server runs: llguidance behind ``llmlab.serve.grammar`` (keywords checked, formats tightened)."""

    name = "server (llguidance + checks)"

    def __init__(self, vocab: _Vocab):
        from llmlab.serve.grammar import GrammarEngine

        self.engine, self.vocab = GrammarEngine(vocab.tok), vocab

    def compile(self, schema):
        self.engine.grammar(schema)  # raises for a refused keyword
        return lambda: _ServerRun(self.engine.constraint(schema, self.vocab.stop_ids, 0))


class _ServerRun:
    def __init__(self, constraint):
        self.c, self.ids = constraint, []

    def mask(self):
        self.c._follow(self.ids)
        return self.c.allowed_mask()

    def consume(self, token):
        self.ids.append(token)


class Xgrammar:
    name = "xgrammar"

    def __init__(self, vocab: _Vocab):
        import xgrammar

        self.xg, self.vocab = xgrammar, vocab
        info = xgrammar.TokenizerInfo(vocab.bytes, xgrammar.VocabType.RAW, vocab_size=vocab.size,
                                      stop_token_ids=vocab.stop_ids)
        self.compiler = xgrammar.GrammarCompiler(info)

    def compile(self, schema):
        compiled = self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=False, strict_mode=True)
        return lambda: _XgRun(self.xg, compiled, self.vocab.size)


class _XgRun:
    def __init__(self, xg, compiled, size):
        self.m, self.size = xg.GrammarMatcher(compiled), size
        self.bits = xg.allocate_token_bitmask(1, size)

    def mask(self):
        self.m.fill_next_token_bitmask(self.bits)
        return _unpack(self.bits[0], self.size)

    def consume(self, token):
        self.m.accept_token(token)


class OutlinesCore:
    name = "outlines-core"

    def __init__(self, vocab: _Vocab):
        import outlines_core

        self.oc, self.vocab = outlines_core, vocab
        mapping: dict[bytes, list[int]] = {}
        for i, b in enumerate(vocab.bytes):
            if b and i not in vocab.stop_ids:
                mapping.setdefault(b, []).append(i)
        self.vocabulary = outlines_core.Vocabulary(vocab.stop_ids[0], mapping)

    def compile(self, schema):
        regex = self.oc.json_schema.build_regex_from_schema(json.dumps(schema))
        index = self.oc.Index(regex, self.vocabulary)
        return lambda: _OcRun(self.oc.Guide(index), self.vocab.size)


class _OcRun:
    def __init__(self, guide, size):
        self.g, self.size = guide, size

    def mask(self):
        mask = torch.zeros(self.size, dtype=torch.bool)
        mask[self.g.get_tokens()] = True
        return mask

    def consume(self, token):
        self.g.advance(token)


class Course:
    name = "llmlab.constrained"

    def __init__(self, vocab: _Vocab):
        self.vocab = vocab

    def compile(self, schema):
        from llmlab.constrained import JsonObjectConstraint

        c = JsonObjectConstraint(schema, self.vocab.bytes, self.vocab.stop_ids,
                                 special_token_ids=self.vocab.tok.special_ids)
        return lambda: _CourseRun(c)


class _CourseRun:
    def __init__(self, c):
        self.c, self.ids = c, []

    def mask(self):
        return self.c.allowed_mask(self.ids)

    def consume(self, token):
        self.ids.append(token)


ENGINES = [Server, Llguidance, Xgrammar, OutlinesCore, Course]


def run(samples: int, max_tokens: int, seed: int = 0):
    from llmlab import pretrained
    from llmlab.chat import STOP_TOKENS

    _, tok = pretrained.load("es-chat")
    stops = [tok.special_tokens[t] for t in STOP_TOKENS["chatml"]]
    vocab = _Vocab(tok, stops)
    tilt = torch.zeros(vocab.size)
    for i, b in enumerate(vocab.bytes):
        if len(b) == 1 and b in b'"}],:0123456789.-':
            tilt[i] = 7.0
    tilt[stops] = 7.0
    results = {}
    for engine_cls in ENGINES:
        try:
            engine = engine_cls(vocab)
        except ImportError as err:
            print(f"{engine_cls.name}: not installed ({err})")
            continue
        for name, schema in SCHEMAS.items():
            row = {"refused": None, "valid": 0, "invalid": 0, "unfinished": 0, "mask_s": 0.0, "tokens": 0, "bad": None}
            try:
                t0 = time.perf_counter()
                make = engine.compile(schema)
                row["compile_s"] = time.perf_counter() - t0
            except Exception as err:  # noqa: BLE001 - a refusal, whatever its type
                row["refused"] = f"{type(err).__name__}: {str(err)[:80]}"
                results[(engine.name, name)] = row
                continue
            check = _validator(schema)
            g = torch.Generator().manual_seed(seed)
            for _ in range(samples):
                m, out, done = make(), [], False
                for _ in range(max_tokens):
                    t0 = time.perf_counter()
                    mask = m.mask()
                    row["mask_s"] += time.perf_counter() - t0
                    row["tokens"] += 1
                    logits = torch.randn(vocab.size, generator=g) * 2 + tilt
                    logits[~mask] = float("-inf")
                    token = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=g))
                    if token in stops:
                        done = True
                        break
                    m.consume(token)
                    out.append(token)
                if not done:
                    row["unfinished"] += 1
                    continue
                text = b"".join(vocab.bytes[t] for t in out).decode("utf-8", errors="replace")
                try:
                    check.validate(json.loads(text))
                    row["valid"] += 1
                except Exception as err:  # noqa: BLE001 - json or schema error: both break the contract
                    row["invalid"] += 1
                    row["bad"] = row["bad"] or f"{text[:60]!r} ({type(err).__name__})"
            results[(engine.name, name)] = row
    return results


def table(results) -> str:
    engines = list(dict.fromkeys(e for e, _ in results))
    lines = ["| schema | " + " | ".join(engines) + " |", "|---|" + "---|" * len(engines)]
    for name in SCHEMAS:
        cells = []
        for e in engines:
            r = results.get((e, name))
            if r is None:
                cells.append("–")
            elif r["refused"]:
                cells.append("refused")
            else:
                cell = f"{r['valid']} ok"
                if r["invalid"]:
                    cell += f", **{r['invalid']} INVALID**"
                if r["unfinished"]:
                    cell += f", {r['unfinished']} unfinished"
                cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    cells = []
    for e in engines:
        rows = [r for (en, _), r in results.items() if en == e and not r["refused"]]
        tokens = sum(r["tokens"] for r in rows)
        cells.append(f"{1e3 * sum(r['mask_s'] for r in rows) / max(tokens, 1):.2f} ms")
    lines.append("| mask time per token | " + " | ".join(cells) + " |")
    cells = []
    for e in engines:
        rows = [r for (en, _), r in results.items() if en == e]
        ok = sum(1 for r in rows if not r["refused"] and not r["invalid"])
        bad = sum(1 for r in rows if not r["refused"] and r["invalid"])
        cells.append(f"{ok} kept, {sum(1 for r in rows if r['refused'])} refused, {bad} broken")
    lines.append("| schemas | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def overhead(rounds: int = 3, batch: int = 8, max_tokens: int = 60) -> None:
    """Engine tokens/s with and without a grammar (a free string), same prompts, interleaved rounds."""
    from llmlab import pretrained
    from llmlab.serve import Engine, SamplingParams

    model, tok = pretrained.load("es-chat")
    engine = Engine(model, tok, max_num_seqs=batch)
    prompts = [[tok.bos_id] + tok.encode(f"Había una vez {i}") for i in range(batch)]
    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"],
              "additionalProperties": False}
    free = SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=1)
    constrained = SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=1, json_schema=schema,
                                 stop_token_ids=[tok.eos_id])
    engine.generate(prompts[:2], constrained)
    print(f"\nengine, batch {batch}, {max_tokens} tokens each: tokens/s free text vs JSON (interleaved rounds)")
    for _ in range(rounds):
        cells = []
        for params in (free, constrained):
            t0 = time.perf_counter()
            outs = engine.generate(prompts, params)
            cells.append(sum(len(o.token_ids) for o in outs) / (time.perf_counter() - t0))
        print(f"free {cells[0]:.0f}  json {cells[1]:.0f}  json/free {cells[1] / cells[0]:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=120)
    parser.add_argument("--details", action="store_true", help="print why each refusal / invalid output happened")
    parser.add_argument("--overhead", action="store_true", help="also: engine tokens/s with and without a grammar")
    args = parser.parse_args()
    if args.overhead:
        overhead()
    results = run(args.samples, args.max_tokens)
    print(table(results))
    if args.details:
        for (e, name), r in results.items():
            if r["refused"] or r["bad"]:
                print(f"{e:20s} {name:20s} {r['refused'] or r['bad']}")


if __name__ == "__main__":
    main()
