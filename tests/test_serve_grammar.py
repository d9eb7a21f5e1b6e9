"""``llmlab.serve.grammar`` and ``llmlab.serve.processors`` without a server: refusals, tightening, masks, penalties."""

import json

import pytest
import torch

pytest.importorskip("llguidance")

from llmlab import pretrained  # noqa: E402
from llmlab.serve.grammar import SAFE_INTEGER, GrammarEngine, check_schema, tighten  # noqa: E402
from llmlab.serve.processors import RequestProcessor, apply_penalties  # noqa: E402


@pytest.fixture(scope="module")
def tok():
    return pretrained.load("es-chat")[1]


@pytest.mark.parametrize("schema, named", [
    ({"type": "array", "uniqueItems": True}, "uniqueItems"),
    ({"not": {"type": "string"}}, "not"),
    ({"type": "object", "properties": {"a": {"type": "string", "maxLenght": 3}}}, "maxLenght"),
    ({"type": "string", "format": "hostname"}, "hostname"),
    ({"type": "string", "format": "date", "pattern": "^2"}, "pattern"),
    ({"anyOf": [{"type": "integer"}, {"contains": {}}]}, "contains"),
    ({"type": "strin"}, "strin"),
])
def test_a_keyword_that_would_not_be_enforced_is_refused_by_name(schema, named):
    with pytest.raises(ValueError, match=named):
        check_schema(schema)


def test_annotations_pass_and_tighten_bounds_integers_and_rewrites_dates():
    schema = {"type": "object", "title": "t", "description": "d",
              "properties": {"n": {"type": "integer"}, "m": {"type": "integer", "minimum": 3},
                             "d": {"type": "string", "format": "date"}}}
    check_schema(schema)
    tight = tighten(schema)
    assert tight["properties"]["n"] == {"type": "integer", "minimum": -SAFE_INTEGER, "maximum": SAFE_INTEGER}
    assert tight["properties"]["m"] == {"type": "integer", "minimum": 3, "maximum": SAFE_INTEGER}
    assert "format" not in tight["properties"]["d"] and tight["properties"]["d"]["pattern"].startswith("^")
    assert schema["properties"]["n"] == {"type": "integer"}  # the caller's schema is not touched


@pytest.mark.parametrize("value, ok", [
    ('"2024-02-29"', True), ('"2023-02-29"', False), ('"2023-04-31"', False), ('"2000-02-29"', True),
    ('"1900-02-29"', False), ('"2023-12-31"', True),
])
def test_dates_are_real_dates(tok, value, ok):
    constraint = GrammarEngine(tok).constraint({"type": "string", "format": "date"}, [tok.eos_id], prompt_length=0)
    ids = tok.encode(value)
    accepted = constraint.matcher.consume_tokens(ids) and constraint.matcher.is_accepting()
    assert accepted == ok


def test_the_mask_allows_exactly_the_continuations_and_follows_rollbacks(tok):
    schema = {"type": "object", "properties": {"r": {"enum": ["bajo", "alto"]}}, "required": ["r"],
              "additionalProperties": False}
    constraint = GrammarEngine(tok).constraint(schema, [tok.eos_id], prompt_length=2)
    prompt = [tok.bos_id, 5]
    scores = torch.zeros(1, len(tok))
    out = constraint(torch.tensor([prompt]), scores)
    allowed = [i for i in range(len(tok)) if out[0, i] > float("-inf")]
    assert allowed and all(b'{"r":"bajo"}'.startswith(tok.token_bytes(i)) or
                           b'{"r":"alto"}'.startswith(tok.token_bytes(i)) for i in allowed)
    text = tok.encode('{"r":"ba')
    constraint(torch.tensor([prompt + text]), scores)
    rolled = constraint(torch.tensor([prompt + tok.encode('{"r":"al')]), scores)  # shorter history: rolled back
    after_al = [i for i in range(len(tok)) if rolled[0, i] > float("-inf")]
    assert after_al and all(b'to"}'.startswith(tok.token_bytes(i)) for i in after_al)
    whole = tok.encode('{"r":"alto"}')
    final = constraint(torch.tensor([prompt + whole]), scores)
    assert [i for i in range(len(tok)) if final[0, i] > float("-inf")] == [tok.eos_id]
    assert json.loads(tok.decode(whole)) == {"r": "alto"}


def test_penalties_follow_the_openai_formula_over_the_output_only():
    scores = torch.randn(1, 10)
    prompt, output = [1, 1, 1], [2, 2, 3]
    got = RequestProcessor(len(prompt), presence_penalty=0.5, frequency_penalty=0.25)(
        torch.tensor([prompt + output]), scores)
    expected = scores.clone()
    for token in set(output):
        expected[0, token] -= 0.25 * output.count(token) + 0.5
    assert torch.allclose(got, expected)  # token 1 appears only in the prompt: not penalised
    assert torch.allclose(apply_penalties(scores, torch.tensor(output), 0.0, 0.0), scores)


def test_logit_bias_and_min_tokens():
    scores = torch.zeros(1, 8)
    proc = RequestProcessor(2, logit_bias={3: -100.0, 4: 5.0}, min_tokens=2, stop_token_ids=[7])
    early = proc(torch.tensor([[0, 1, 5]]), scores)
    assert early[0, 3] == -100 and early[0, 4] == 5 and early[0, 7] == float("-inf")
    late = proc(torch.tensor([[0, 1, 5, 6]]), scores)
    assert late[0, 7] == 0  # two output tokens: the stop token is allowed again
    assert RequestProcessor(2).is_noop
