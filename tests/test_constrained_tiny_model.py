"""Even the course's tiny model always writes parseable, schema-valid JSON when ``llmlab.constrained`` guides it.

The model (``llmlab.pretrained``'s ``es-base``) is a few million parameters trained on a small Spanish
corpus: left alone it almost never writes JSON. With ``JsonObjectConstraint`` the output must parse and
follow the schema for every seed and every sampling setting, hot temperatures included. Skipped when the
shipped weights are not installed (``make model`` builds them).
"""

import json

import pytest
import torch

from llmlab.constrained import ChoiceConstraint, IntegerConstraint, JsonObjectConstraint, generate_json
from llmlab.model import generate

pytestmark = pytest.mark.slow

# A chapter 08-style output contract (two enums, a bounded integer, a bounded string), small enough that the
# constraint's worst-case token budget plus the prompt fits in the tiny model's context (max_seq_len 256).
SCHEMA = {
    "categoria": ["ampliación_plazo", "incidencia_técnica", "consulta_académica", "otra"],
    "riesgo": ["bajo", "medio", "alto"],
    "plazo_dias": {"type": "integer", "minimum": 0, "maximum": 365},
    "accion": {"type": "string", "minLength": 1, "maxLength": 20},
}
PROMPT = "Incidencia: no puedo entregar la práctica a tiempo. JSON: "
SETTINGS = [  # (sampling options, number of seeds)
    ({"do_sample": True, "temperature": 0.7, "top_p": 0.9}, 12),
    ({"do_sample": True, "temperature": 1.0}, 12),
    ({"do_sample": True, "temperature": 2.0, "top_k": 50}, 12),
]


@pytest.fixture(scope="module")
def base():
    try:
        from llmlab import pretrained
    except ImportError as exc:  # pragma: no cover - the module ships with llmlab
        pytest.skip(f"llmlab.pretrained is not available ({exc})")
    try:
        model, tok = pretrained.load("es-base")
    except FileNotFoundError as exc:
        pytest.skip(f"the tiny pretrained model is not installed ({exc})")
    torch.set_num_threads(1)  # deterministic and fast for a model this small
    return model, tok


def _vocab(tok):
    """token bytes, the EOS id and the ids that must never appear inside the JSON text."""
    eos = tok.eos_id
    assert eos is not None, "the tokenizer needs an <|eos|> token to end a constrained answer"
    return tok.vocab_bytes(), eos, [i for i in tok.special_ids if i != eos]


def _check(obj):
    """What a consumer of the contract would check, independently of the library."""
    assert isinstance(obj, dict) and list(obj) == list(SCHEMA)
    assert obj["categoria"] in SCHEMA["categoria"] and obj["riesgo"] in SCHEMA["riesgo"]
    assert isinstance(obj["plazo_dias"], int) and 0 <= obj["plazo_dias"] <= 365
    assert isinstance(obj["accion"], str) and 1 <= len(obj["accion"]) <= 20


def test_json_always_parses_for_every_seed_and_setting(base):
    model, tok = base
    token_bytes, eos, banned = _vocab(tok)
    prompt = torch.tensor(tok.encode(PROMPT))
    constraint = JsonObjectConstraint(SCHEMA, token_bytes, eos, special_token_ids=banned, prompt_length=len(prompt))
    outputs = []
    for options, n_seeds in SETTINGS:
        for seed in range(n_seeds):
            g = torch.Generator().manual_seed(seed)
            out = generate(model, prompt, constraint.max_new_tokens, eos_token_id=eos, constraint=constraint,
                           generator=g, **options)
            generated = out[len(prompt):].tolist()
            assert generated[-1] == eos and eos not in generated[:-1]  # it ended, and only once
            assert not set(generated) & set(banned)
            text = tok.decode_bytes(generated[:-1]).decode("utf-8")  # valid UTF-8, even split across tokens
            obj = json.loads(text)
            _check(obj)
            assert json.dumps(obj, ensure_ascii=False) == text
            outputs.append(text)
    assert len(set(outputs)) > len(outputs) // 2  # sampling really varied the answers


def test_generate_json_greedy_and_sampled(base):
    model, tok = base
    token_bytes, eos, banned = _vocab(tok)
    prompt = torch.tensor(tok.encode(PROMPT))
    _check(generate_json(model, prompt, SCHEMA, token_bytes, eos, special_token_ids=banned))  # greedy
    for seed in range(4):
        _check(generate_json(model, prompt, SCHEMA, token_bytes, eos, special_token_ids=banned, do_sample=True,
                             temperature=1.5, top_p=0.95, generator=torch.Generator().manual_seed(seed)))


def test_without_the_constraint_the_tiny_model_rarely_writes_json(base):
    # The reason the constraint exists: the same model and settings, unconstrained, do not keep the contract.
    model, tok = base
    token_bytes, eos, banned = _vocab(tok)
    prompt = torch.tensor(tok.encode(PROMPT))
    n_tokens = JsonObjectConstraint(SCHEMA, token_bytes, eos, special_token_ids=banned).max_new_tokens
    valid = 0
    for seed in range(6):
        out = generate(model, prompt, n_tokens, eos_token_id=eos, do_sample=True, temperature=1.0,
                       generator=torch.Generator().manual_seed(seed))
        text = tok.decode(out[len(prompt):].tolist(), skip_special=True)
        try:
            _check(json.loads(text))
            valid += 1
        except (ValueError, AssertionError):
            pass
    assert valid < 6


def test_choices_and_integers(base):
    model, tok = base
    token_bytes, eos, banned = _vocab(tok)
    prompt = torch.tensor(tok.encode("¿Está abierta la biblioteca el domingo? Responde sí o no: "))
    choice = ChoiceConstraint(["sí", "no"], token_bytes, eos, special_token_ids=banned, prompt_length=len(prompt))
    number = IntegerConstraint(token_bytes, eos, minimum=1, maximum=5, special_token_ids=banned,
                               prompt_length=len(prompt))
    for seed in range(10):
        for constraint, allowed in ((choice, {"sí", "no"}), (number, {"1", "2", "3", "4", "5"})):
            out = generate(model, prompt, constraint.max_new_tokens, eos_token_id=eos, constraint=constraint,
                           do_sample=True, temperature=1.5, generator=torch.Generator().manual_seed(seed))
            generated = out[len(prompt):].tolist()
            assert generated[-1] == eos
            assert tok.decode_bytes(generated[:-1]).decode("utf-8") in allowed
