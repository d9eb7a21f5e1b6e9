"""Constrained decoding (llmlab.constrained): the output is always in the language, whatever the model says.

The "model" here is a random one over a realistic byte-level vocabulary: the 256 single bytes plus a few
hundred multi-byte merges (Spanish words with accents, sub-words, JSON punctuation, tokens that split a
UTF-8 character in two). Some runs also push hard towards the tokens that would break the format.
"""

import json

import pytest
import torch

from llmlab.constrained import (
    ChoiceConstraint,
    IntegerConstraint,
    JsonObjectConstraint,
    generate_json,
    validate_json_object,
)
from llmlab.sampling import Sampler

N_SEEDS = 200

WORDS = (
    "acción recomendada riesgo bajo medio alto categoría categoria fuente política incidencia técnica "
    "documentada plazo entrega ampliación ampliacion estudiante según sección artículo normativa académica "
    "consulta revisión solicitud aprobar denegar información también está más así qué cuándo dónde año "
    "niño pingüino corazón canción razón días mañana después través acción_recomendada el la los las de "
    "del que en un una por con para no sí se su al es lo como pero sus le ya o fue este ha muy"
).split()


def build_vocab():
    """256 single bytes + merges; returns (token_bytes, eos_id, special_id)."""
    merges = []
    for w in WORDS:
        for piece in (w, " " + w, w.capitalize(), " " + w.capitalize(), '"' + w, w + '"', ' "' + w):
            merges.append(piece.encode("utf-8"))
        raw = w.encode("utf-8")
        for cut in range(2, min(len(raw), 5)):
            merges.append(raw[:cut])  # sub-words; some end in the middle of a character
            merges.append(raw[cut:])
    merges += [p.encode() for p in ('{"', '": "', '", "', '"}', '": ', ', "', '"', "}", ": ", ", ",
                                    ' "', '",', '{"categoria": "', '"riesgo": "', '", "fuente": "',
                                    "  ", "\n", "\\n", '\\"', "{}", "12", "00", "007", "-1", "-0", "2024",
                                    "10", "99", "5,", "3}", "\u00e1", "\u00e9\u00e9", "ción", "ci\u00f3")]
    merges += ["acción".encode()[:5], "acción".encode()[5:], "técnica".encode()[:2], "técnica".encode()[2:]]
    merges += ["🙂".encode()[:2], "🙂".encode()[2:], "€".encode()[:1], "€".encode()[1:]]
    token_bytes = [bytes([i]) for i in range(256)]
    seen = set(token_bytes)
    for m in merges:
        if m not in seen:
            seen.add(m)
            token_bytes.append(m)
    eos = len(token_bytes)
    token_bytes.append(b"<|endoftext|>")
    special = len(token_bytes)
    token_bytes.append(b"<|user|>")
    return token_bytes, eos, special


TOKEN_BYTES, EOS, SPECIAL = build_vocab()
VOCAB = len(TOKEN_BYTES)


def _bad_token_ids():
    """Tokens a format-breaking model would love: quotes, backslashes, braces, control bytes, EOS, specials."""
    bad = [i for i, b in enumerate(TOKEN_BYTES) if any(c in b for c in b'"\\{}\n') or (len(b) == 1 and b[0] < 0x20)]
    return torch.tensor(bad + [EOS, SPECIAL])


BAD = _bad_token_ids()
SETTINGS = [
    dict(do_sample=True),
    dict(do_sample=True, temperature=1.5, top_p=0.95),
    dict(do_sample=True, temperature=0.7, top_k=20),
    dict(do_sample=True, min_p=0.05, repetition_penalty=1.3),
]


def run(constraint, seed, max_steps=None, prompt_len=3, adversarial=None):
    """Generate with a random model; returns the generated ids (EOS included)."""
    g = torch.Generator().manual_seed(seed)
    adversarial = seed % 2 == 1 if adversarial is None else adversarial
    sampler = Sampler(**SETTINGS[seed % len(SETTINGS)], generator=g, constraint=constraint)
    ids = torch.randint(0, 256, (1, prompt_len), generator=g)
    max_steps = constraint.max_new_tokens if max_steps is None else max_steps
    for _ in range(max_steps):
        logits = 3.0 * torch.randn(1, VOCAB, generator=g)
        if adversarial:
            logits[:, BAD] += 8.0
        nxt = sampler(logits, ids)
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        if int(nxt) == EOS:
            break
    return ids[0, prompt_len:].tolist()


def finish(generated):
    """Generation ended with EOS within the budget; returns the strict UTF-8 text before it."""
    assert generated[-1] == EOS, "generation did not end with EOS within max_new_tokens"
    assert EOS not in generated[:-1]
    return b"".join(TOKEN_BYTES[i] for i in generated[:-1]).decode("utf-8")  # strict: valid UTF-8


# ---- choices -------------------------------------------------------------------------------------

def test_choice_always_one_of_the_options():
    choices = ["sí", "no", "no lo sé", "acción inmediata", "técnica"]
    constraint = ChoiceConstraint(choices, TOKEN_BYTES, EOS, special_token_ids=[SPECIAL])
    seen = set()
    for seed in range(N_SEEDS):
        text = finish(run(constraint, seed))
        assert text in choices
        assert constraint.parse(text) == text
        seen.add(text)
    assert len(seen) >= 4  # the constraint restricts, it does not pick


def test_choice_that_prefixes_another_may_stop_or_continue():
    constraint = ChoiceConstraint(["sí", "sí, claro"], TOKEN_BYTES, EOS, prompt_length=0)
    after_si = constraint.allowed_mask(list("sí".encode()))
    assert after_si[EOS] and after_si[ord(",")]
    assert not after_si[ord("x")]
    full = constraint.allowed_mask(list("sí, claro".encode()))
    assert full.nonzero().flatten().tolist() == [EOS]  # complete and maximal: only EOS


# ---- integers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("bounds", [dict(), dict(minimum=-50, maximum=1234), dict(minimum=7, maximum=7),
                                    dict(minimum=0, max_digits=3), dict(maximum=-10, max_digits=2)])
def test_integer_always_parses_and_respects_bounds(bounds):
    constraint = IntegerConstraint(TOKEN_BYTES, EOS, **bounds)
    lo, hi = bounds.get("minimum"), bounds.get("maximum")
    for seed in range(N_SEEDS // 2):
        text = finish(run(constraint, seed))
        value = int(text)
        assert str(value) == text  # canonical: no "+", no leading zeros, no "-0"
        assert lo is None or value >= lo
        assert hi is None or value <= hi
        assert len(text.lstrip("-")) <= constraint.max_digits
        assert constraint.parse(text) == value


def test_integer_prefixes_by_hand():
    c = IntegerConstraint(TOKEN_BYTES, EOS, minimum=-50, maximum=1234)
    assert c.accepts("-50") and c.accepts("0") and c.accepts("1234")
    assert not c.accepts("-51") and not c.accepts("1235") and not c.accepts("007") and not c.accepts("-0")
    assert c.is_prefix("12") and c.is_prefix("-") and c.is_prefix("123")
    assert not c.is_prefix("13000") and not c.is_prefix("2000")
    assert c.is_prefix("-6") and not c.is_prefix("-60") and not c.is_prefix("+1") and not c.is_prefix("1 ")
    with pytest.raises(ValueError):
        c.parse("1235")


def test_integer_bad_arguments():
    with pytest.raises(ValueError, match="larger than"):
        IntegerConstraint(TOKEN_BYTES, EOS, minimum=5, maximum=1)
    with pytest.raises(ValueError, match="no integer"):
        IntegerConstraint(TOKEN_BYTES, EOS, minimum=100, max_digits=2)
    with pytest.raises(ValueError, match="max_digits"):
        IntegerConstraint(TOKEN_BYTES, EOS, max_digits=0)


# ---- JSON objects (chapter 08's output contract) ------------------------------------------------

CH08_SCHEMA = {
    "categoria": ["ampliación_plazo", "incidencia_técnica", "consulta_académica", "otra"],
    "riesgo": ["bajo", "medio", "alto"],
    "accion_recomendada": {"type": "string", "minLength": 1, "maxLength": 40},
    "fuente": {"type": "string", "minLength": 1, "maxLength": 24},
}


def check_ch08(obj):
    """Independent of the library: what the chapter 08 validator would check."""
    assert isinstance(obj, dict) and list(obj) == ["categoria", "riesgo", "accion_recomendada", "fuente"]
    assert obj["categoria"] in CH08_SCHEMA["categoria"]
    assert obj["riesgo"] in ("bajo", "medio", "alto")
    assert isinstance(obj["accion_recomendada"], str) and 1 <= len(obj["accion_recomendada"]) <= 40
    assert isinstance(obj["fuente"], str) and 1 <= len(obj["fuente"]) <= 24


def test_json_ch08_always_parses_and_respects_schema():
    constraint = JsonObjectConstraint(CH08_SCHEMA, TOKEN_BYTES, EOS, special_token_ids=[SPECIAL])
    non_ascii = 0
    for seed in range(N_SEEDS):
        generated = run(constraint, seed)
        assert len(generated) <= constraint.max_new_tokens
        text = finish(generated)
        obj = json.loads(text)
        check_ch08(obj)
        assert json.dumps(obj, ensure_ascii=False) == text  # canonical json.dumps form
        assert constraint.parse(text) == obj
        non_ascii += any(ord(ch) > 127 for ch in obj["accion_recomendada"] + obj["fuente"])
    assert non_ascii > N_SEEDS // 4  # multi-byte characters really were generated inside strings


def test_json_with_integers_and_full_json_schema_form():
    schema = {"type": "object", "required": ["riesgo", "plazo_dias", "saldo"],
              "properties": {"riesgo": {"enum": ["bajo", "medio", "alto"]},
                             "plazo_dias": {"type": "integer", "minimum": 0, "maximum": 30},
                             "saldo": {"type": "integer", "minimum": -999, "maximum": 999},
                             }}
    constraint = JsonObjectConstraint(schema, TOKEN_BYTES, EOS, special_token_ids=[SPECIAL])
    for seed in range(N_SEEDS // 2):
        obj = json.loads(finish(run(constraint, seed)))
        assert obj["riesgo"] in ("bajo", "medio", "alto")
        assert type(obj["plazo_dias"]) is int and 0 <= obj["plazo_dias"] <= 30
        assert type(obj["saldo"]) is int and -999 <= obj["saldo"] <= 999
        validate_json_object(obj, schema)


def test_json_greedy_with_random_logits_is_valid():
    constraint = JsonObjectConstraint(CH08_SCHEMA, TOKEN_BYTES, EOS)
    sampler = Sampler(constraint=constraint)
    g = torch.Generator().manual_seed(0)
    ids = torch.zeros(4, 2, dtype=torch.long)  # a batch: rows finish at different steps
    for _ in range(constraint.max_new_tokens):
        nxt = sampler(torch.randn(4, VOCAB, generator=g), ids)
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        if bool((ids[:, 2:] == EOS).any(dim=1).all()):
            break
    for row in ids[:, 2:].tolist():
        check_ch08(json.loads(finish(row[: row.index(EOS) + 1])))


def test_eos_only_when_complete_and_only_eos_at_the_end():
    c = JsonObjectConstraint({"riesgo": ["bajo", "alto"]}, TOKEN_BYTES, EOS, prompt_length=0)
    enc = lambda s: list(s.encode())  # noqa: E731  (one single-byte token per byte)
    allowed = [TOKEN_BYTES[i] for i in c.allowed_mask(enc('{"riesgo": "ba')).nonzero().flatten().tolist()]
    assert b"j" in allowed and all(b'jo"}'.startswith(b) for b in allowed)
    assert not c.allowed_mask(enc('{"riesgo": "bajo"'))[EOS]
    assert c.allowed_mask(enc('{"riesgo": "bajo"}')).nonzero().flatten().tolist() == [EOS]
    with pytest.raises(ValueError, match="EOS"):
        c.allowed_mask(enc('{"riesgo": "bajo"') + [EOS])
    with pytest.raises(ValueError, match="not a valid prefix"):
        c.allowed_mask(enc('{"riesgo": "medio'))


def test_multibyte_characters_split_across_tokens():
    c = JsonObjectConstraint({"a": {"type": "string", "maxLength": 10}}, TOKEN_BYTES, EOS, prompt_length=0)
    prefix = list('{"a": "'.encode()) + [TOKEN_BYTES.index("acción".encode()[:5])]  # ends inside "ó"
    allowed = c.allowed_mask(prefix)
    assert allowed[TOKEN_BYTES.index("acción".encode()[5:])]  # "\xb3n" completes the character
    assert allowed[0xB3] and not allowed[ord("n")] and not allowed[ord('"')] and not allowed[0xC3]
    assert not allowed[EOS]
    # Only continuation bytes 80..BF can follow; after E0 only A0..BF (no overlong forms).
    after_e0 = c.allowed_mask(list('{"a": "'.encode()) + [0xE0])
    assert after_e0[0xA0] and not after_e0[0x80] and not after_e0[0x9F]
    assert c.accepts('{"a": "acción €🙂"}') and not c.accepts('{"a": "abcdefghijk"}')  # 11 > maxLength
    assert c.accepts('{"a": "ñññññññññ🙂"}')  # 10 characters, 22 bytes: the limit counts characters


def test_strings_never_contain_quotes_backslashes_or_control_characters():
    c = JsonObjectConstraint({"a": {"type": "string", "maxLength": 10}}, TOKEN_BYTES, EOS, prompt_length=0)
    inside = c.allowed_mask(list('{"a": "x'.encode()))
    for forbidden in (b"\\", b"\n", b"\x00", b"\x1f", b'\\"', b"\\n"):
        assert not inside[TOKEN_BYTES.index(forbidden)]
    assert inside[TOKEN_BYTES.index(b'"}')]  # closing quote + closing brace in one token
    assert not c.accepts('{"a": "x\\"y"}') and not c.accepts('{"a": "x\ny"}')


def test_trie_masks_equal_brute_force():
    """The pruned trie walk and the per-state cache (with clipped string lengths) give exactly the
    tokens that a brute-force check of every token would allow."""
    c = JsonObjectConstraint(CH08_SCHEMA, TOKEN_BYTES, EOS, special_token_ids=[SPECIAL], prompt_length=0)

    def brute(prefix_bytes):
        out = torch.zeros(VOCAB, dtype=torch.bool)
        for i, b in enumerate(TOKEN_BYTES):
            if i in (EOS, SPECIAL):
                out[i] = i == EOS and c.accepts(prefix_bytes)
            else:
                out[i] = c.is_prefix(prefix_bytes + b)
        return out

    for seed in range(6):
        generated = run(c, seed, prompt_len=0)
        for k in range(0, len(generated), 3):
            prefix = generated[:k]
            if EOS in prefix:
                break
            prefix_bytes = b"".join(TOKEN_BYTES[i] for i in prefix)
            assert torch.equal(c.allowed_mask(prefix), brute(prefix_bytes)), prefix_bytes


def test_special_and_empty_tokens_never_allowed():
    token_bytes = list(TOKEN_BYTES) + [b"", None]
    c = ChoiceConstraint(["<|user|>"], token_bytes, EOS, special_token_ids=[SPECIAL], prompt_length=0)
    first = c.allowed_mask([])
    assert first[ord("<")] and not first[SPECIAL] and not first[-1] and not first[-2]


def test_prompt_length_auto_detection_across_generations():
    """One constraint object, two generations with prompts of different lengths."""
    c = ChoiceConstraint(["bajo", "alto"], TOKEN_BYTES, EOS)
    scores = torch.zeros(1, VOCAB)

    def allowed(out):
        return {TOKEN_BYTES[i] for i in torch.isfinite(out[0]).nonzero().flatten().tolist()}

    for prompt in ([[5, 6, 7]], [[9]], [[1, 2, 3, 4, 5, 6]]):
        ids = torch.tensor(prompt)
        first = allowed(c(ids, scores))
        assert {b"b", b"a", b"bajo", b"alto"} <= first
        assert all(b"bajo".startswith(t) or b"alto".startswith(t) for t in first)
        ids = torch.cat([ids, torch.tensor([[ord("b")]])], dim=1)
        second = allowed(c(ids, scores))
        assert b"a" in second and all(b"ajo".startswith(t) for t in second)


def test_padded_output_layer_and_call_shapes():
    c = ChoiceConstraint(["sí"], TOKEN_BYTES, EOS, prompt_length=1)
    scores = torch.randn(2, VOCAB + 5)
    out = c(torch.tensor([[1], [2]]), scores)
    assert out.shape == scores.shape and torch.isinf(out[:, VOCAB:]).all()
    assert torch.equal(torch.isfinite(out[0]), torch.isfinite(out[1]))
    one_d = c(torch.tensor([1]), torch.randn(VOCAB))  # 1-D scores: only prefixes of "sí"
    assert all("sí".encode().startswith(TOKEN_BYTES[i]) for i in torch.isfinite(one_d).nonzero().flatten())
    with pytest.raises(ValueError, match="columns"):
        c(torch.tensor([[1]]), torch.randn(1, VOCAB - 1))


def test_schema_errors_and_validator():
    with pytest.raises(ValueError, match="maxLength"):
        JsonObjectConstraint({"a": {"type": "string"}}, TOKEN_BYTES, EOS)
    with pytest.raises(ValueError, match="enum"):
        JsonObjectConstraint({"a": []}, TOKEN_BYTES, EOS)
    with pytest.raises(ValueError, match="required"):
        JsonObjectConstraint({"properties": {"a": ["x"], "b": ["y"]}, "required": ["a"]}, TOKEN_BYTES, EOS)
    with pytest.raises(ValueError, match="eos_token_id"):
        ChoiceConstraint(["x"], TOKEN_BYTES, VOCAB + 3)
    with pytest.raises(TypeError):
        ChoiceConstraint(["x"], b"abc", 0)
    validate_json_object({"riesgo": "bajo", "n": 3}, {"riesgo": ["bajo"], "n": {"type": "integer", "maximum": 3}})
    for bad in ({"riesgo": "bajísimo", "n": 3}, {"n": 3, "riesgo": "bajo"}, {"riesgo": "bajo", "n": 4},
                {"riesgo": "bajo", "n": True}, {"riesgo": "bajo"}):
        with pytest.raises(ValueError):
            validate_json_object(bad, {"riesgo": ["bajo"], "n": {"type": "integer", "maximum": 3}})


def test_with_llmlab_model_generate():
    model_mod = pytest.importorskip("llmlab.model")
    config = model_mod.ModelConfig.llama_style(vocab_size=VOCAB, d_model=32, n_layers=2, n_heads=4, max_seq_len=256)
    torch.manual_seed(0)
    model = model_mod.Transformer(config).eval()
    constraint = JsonObjectConstraint({"riesgo": ["bajo", "medio", "alto"],
                                       "fuente": {"type": "string", "minLength": 1, "maxLength": 12}},
                                      TOKEN_BYTES, EOS, special_token_ids=[SPECIAL])
    prompt = torch.tensor([list(b"Riesgo: ")])
    for seed in range(5):
        out = model_mod.generate(model, prompt, constraint.max_new_tokens, eos_token_id=EOS, do_sample=True,
                                 temperature=1.5, generator=torch.Generator().manual_seed(seed), constraint=constraint)
        obj = constraint.parse(constraint.decode(out[0, prompt.shape[1]:]))
        assert obj["riesgo"] in ("bajo", "medio", "alto") and 1 <= len(obj["fuente"]) <= 12


@pytest.mark.slow
def test_generate_json_convenience():
    model_mod = pytest.importorskip("llmlab.model")
    config = model_mod.ModelConfig.llama_style(vocab_size=VOCAB, d_model=32, n_layers=2, n_heads=4, max_seq_len=200)
    torch.manual_seed(1)
    model = model_mod.Transformer(config).eval()
    prompt = torch.tensor(list("Responde en JSON: ".encode()))
    obj = generate_json(model, prompt, CH08_SCHEMA, TOKEN_BYTES, EOS, special_token_ids=[SPECIAL])  # greedy
    check_ch08(obj)
    g = torch.Generator().manual_seed(0)
    check_ch08(generate_json(model, prompt, CH08_SCHEMA, TOKEN_BYTES, EOS, do_sample=True, temperature=1.5,
                             generator=g))
    with pytest.raises(ValueError, match="not finished"):
        generate_json(model, prompt, CH08_SCHEMA, TOKEN_BYTES, EOS, max_new_tokens=5)


@pytest.mark.parametrize("field", [
    {"type": "integer", "minimum": 0, "maximum": 9, "exclusiveMaximum": 5},
    {"type": "integer", "minimum": 0, "maximum": 99, "multipleOf": 7},
    {"type": "string", "maxLength": 9, "pattern": "^[a-z]+$"},
    {"type": "string", "maxLength": 30, "format": "email"},
    {"enum": ["a", "b"], "const": "a"},
])
def test_a_keyword_the_constraint_cannot_enforce_is_refused_by_name(field):
    """Enforced or refused: ignoring the keyword would let through values that break the schema."""
    keyword = next(k for k in field if k not in ("type", "minimum", "maximum", "maxLength", "enum"))
    with pytest.raises(ValueError, match=keyword):
        JsonObjectConstraint({"x": field}, TOKEN_BYTES, EOS)
    # annotations change nothing in the output, so they pass
    JsonObjectConstraint({"x": {"enum": ["a"], "description": "una"}}, TOKEN_BYTES, EOS)
