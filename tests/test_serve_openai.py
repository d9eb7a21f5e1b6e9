"""The OpenAI contract, checked with the official ``openai`` client and raw sockets against the real server.

Structured output (``.parse()`` with pydantic models, the strict-mode subset, ``json_object``, safe
integers), logprobs against the model's own log-softmax, ``n`` choices, penalties, ``logit_bias``,
``stop_token_ids``, ``min_tokens``, the extra routes, the API key and CORS, request ids, the
cancellation of a non-streaming request whose client left, and the transport limits (413 for a
chunked body, 408 for a slow body, a header timeout for silent connections).
"""

import datetime
import json
import socket
import time
import uuid
from enum import Enum
from typing import Literal

import pytest
import torch

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
pydantic = pytest.importorskip("pydantic")
jsonschema = pytest.importorskip("jsonschema")
pytest.importorskip("fastapi")
pytest.importorskip("llguidance")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from llmlab import pretrained  # noqa: E402
from llmlab.chat import STOP_TOKENS, encode_chat  # noqa: E402
from llmlab.model import generate  # noqa: E402
from llmlab.serve import SamplingParams, launch  # noqa: E402
from llmlab.serve.grammar import SAFE_INTEGER  # noqa: E402

# The parity layer, like test_serve_server.py: the openai client against a real server process.
pytestmark = pytest.mark.parity

API_KEY = "clave-de-prueba"
ORIGIN = "http://aula.example"


@pytest.fixture(scope="module")
def server():
    with launch("es-chat", max_num_seqs=16, extra_args=["--header-timeout", "1", "--body-timeout", "2"]) as handle:
        yield handle


@pytest.fixture(scope="module")
def locked():
    """A second server with an API key and one CORS origin."""
    with launch("es-chat", max_num_seqs=4, extra_args=["--api-key", API_KEY, "--allowed-origins", ORIGIN]) as handle:
        yield handle


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="sin-clave", max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def chat_model():
    return pretrained.load("es-chat")


def _metrics(server) -> dict:
    values = {}
    for family in text_string_to_metric_families(httpx.get(server.url + "/metrics").text):
        for sample in family.samples:
            key = sample.name + (json.dumps(sample.labels, sort_keys=True) if sample.labels else "")
            values[key] = sample.value
    return values


def _wait_idle(server, timeout_s: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while True:
        after = _metrics(server)
        if (after["llmlab_kv_blocks_used"] == 0 and after["llmlab_requests_running"] == 0) or \
                time.monotonic() > deadline:
            return after
        time.sleep(0.05)


def _ask(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


# -- structured output ----------------------------------------------------------------------------


class Nivel(str, Enum):
    bajo = "bajo"
    alto = "alto"


class Tarea(BaseModel):
    titulo: str
    urgente: bool
    horas: float
    prioridad: int = Field(ge=1, le=5)
    nivel: Nivel
    fase: Literal["inicio", "fin"]


class Persona(BaseModel):
    nombre: str = Field(max_length=12)
    apodo: str | None
    etiquetas: list[str] = Field(max_length=2)


class Equipo(BaseModel):
    lider: Persona
    miembros: list[Persona] = Field(min_length=1, max_length=2)
    id: uuid.UUID
    inicio: datetime.date


@pytest.mark.parametrize("model_cls", [Tarea, Persona, Equipo])
def test_parse_with_a_pydantic_model_gives_an_instance(client, model_cls):
    """``client.chat.completions.parse(response_format=Model)``: the client's own strict schema, its own parsing."""
    # logit_bias towards '"' keeps the tiny model's free strings short enough for the context.
    quote = str(pretrained.load("es-chat")[1].encode('"')[0])
    completion = client.chat.completions.parse(
        model="es-chat", messages=_ask("Describe la tarea en JSON."), response_format=model_cls,
        temperature=0.8, seed=0, logit_bias={quote: 6})
    choice = completion.choices[0]
    assert choice.finish_reason == "stop", choice
    assert isinstance(choice.message.parsed, model_cls)
    model_cls.model_validate_json(choice.message.content)  # the text itself, parsed again


def _strict(props: dict, required=None) -> dict:
    return {"type": "object", "properties": props, "required": list(props) if required is None else required,
            "additionalProperties": False}


STRICT_SUBSET = {
    "string": _strict({"s": {"type": "string"}}),
    "string with bounds": _strict({"s": {"type": "string", "minLength": 2, "maxLength": 5}}),
    "number": _strict({"x": {"type": "number", "minimum": -2, "maximum": 3.5}}),
    "integer": _strict({"n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 5, "multipleOf": 2}}),
    "boolean and null": _strict({"b": {"type": "boolean"}, "z": {"type": "null"}}),
    "enum and const": _strict({"e": {"enum": ["a", 1, None]}, "c": {"const": "fijo"}}),
    "array with min/maxItems": _strict({"a": {"type": "array", "items": {"type": "integer"}, "minItems": 2,
                                              "maxItems": 3}}),
    "nested objects": _strict({"p": _strict({"q": _strict({"r": {"type": "boolean"}})})}),
    "anyOf": _strict({"v": {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}, {"type": "null"}]}}),
    "$defs and $ref": {**_strict({"p": {"$ref": "#/$defs/P"}}), "$defs": {"P": _strict({"k": {"enum": [1, 2]}})}},
    "optional properties": _strict({"a": {"type": "boolean"}, "b": {"type": "integer"}}, required=["a"]),
    "pattern": _strict({"s": {"type": "string", "pattern": "^[a-z]+$"}}),
    "format date": _strict({"s": {"type": "string", "format": "date"}}),
    "format time": _strict({"s": {"type": "string", "format": "time"}}),
    "format date-time": _strict({"s": {"type": "string", "format": "date-time"}}),
    "format email": _strict({"s": {"type": "string", "format": "email"}}),
    "format uuid": _strict({"s": {"type": "string", "format": "uuid"}}),
}


# A tiny model rarely closes a free string (or a number's digits) by itself within 120 tokens: a
# logit_bias on the characters that end one makes sure every schema gets finished answers to judge.
ENDING_BIAS = {"string": '"', "pattern": '"', "number": "}", "format email": '@."'}


def _validate(schema: dict, text: str) -> None:
    cls = jsonschema.validators.validator_for(schema)
    cls(schema, format_checker=cls.FORMAT_CHECKER).validate(json.loads(text))


@pytest.mark.parametrize("name", list(STRICT_SUBSET))
def test_every_strict_mode_schema_is_followed(client, chat_model, name):
    schema = STRICT_SUBSET[name]
    tok = chat_model[1]
    bias = {str(tok.encode(ch)[0]): 6 for ch in ENDING_BIAS.get(name, "")}
    finished = 0
    for seed in range(3):
        answer = client.chat.completions.create(
            model="es-chat", messages=_ask("Responde en JSON."), max_tokens=120, temperature=1.0, seed=seed,
            logit_bias=bias or None,
            response_format={"type": "json_schema", "json_schema": {"name": "r", "schema": schema, "strict": True}})
        choice = answer.choices[0]
        if choice.finish_reason == "stop":
            _validate(schema, choice.message.content)
            finished += 1
        else:  # out of tokens: the answer is cut, as the API does
            assert choice.finish_reason == "length"
    assert finished >= 1, "no answer was finished: the schema was not really checked"


def test_json_object_mode_gives_a_json_object(client):
    for seed in range(3):
        answer = client.chat.completions.create(
            model="es-chat", messages=_ask("Responde en JSON."), max_tokens=150, temperature=0.7, seed=seed,
            response_format={"type": "json_object"}, logit_bias={"125": 3})  # 125 = "}"
        if answer.choices[0].finish_reason == "stop":
            assert isinstance(json.loads(answer.choices[0].message.content), dict)


def test_unbounded_integers_stay_within_the_safe_range(client, chat_model):
    _, tok = chat_model
    digits = {str(tok.encode(d)[0]): 10 for d in "123456789"}  # push the model to write as many digits as it can
    schema = _strict({"n": {"type": "integer"}, "m": {"type": "array", "items": {"type": "integer"}, "maxItems": 2}})
    answer = client.chat.completions.create(
        model="es-chat", messages=_ask("Un número grande."), max_tokens=120, temperature=1.0, seed=0,
        logit_bias=digits, response_format={"type": "json_schema", "json_schema": {"name": "n", "schema": schema}})
    assert answer.choices[0].finish_reason == "stop"
    obj = json.loads(answer.choices[0].message.content)
    assert all(abs(v) <= SAFE_INTEGER for v in [obj["n"], *obj["m"]])
    assert len(str(abs(obj["n"]))) >= 15  # the bias did push: the bound is what stopped it


# -- logprobs, n, penalties, stops -----------------------------------------------------------------


def _chat_prompt(tok, messages):
    return encode_chat(messages, tok, "chatml", add_generation_prompt=True)


def _stops(tok):
    return [tok.special_tokens[t] for t in STOP_TOKENS["chatml"]]


def _own_logprobs(model, ids: list[int], start: int) -> torch.Tensor:
    """log_softmax of the model's logits at every position that predicted ids[start:]."""
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0].float()
    return torch.log_softmax(logits, dim=-1)[start - 1:len(ids) - 1]


def test_chat_logprobs_equal_the_models_own_log_softmax(client, chat_model):
    model, tok = chat_model
    messages = _ask("¿Qué es un token?")
    answer = client.chat.completions.create(model="es-chat", messages=messages, max_tokens=12, temperature=0,
                                            logprobs=True, top_logprobs=3)
    content = answer.choices[0].logprobs.content
    prompt = _chat_prompt(tok, messages)
    greedy = SamplingParams(temperature=0).make_sampler()
    expected = generate(model, torch.tensor(prompt), 12, sampler=greedy, eos_token_id=_stops(tok))[len(prompt):].tolist()
    assert len(content) == len(expected)
    own = _own_logprobs(model, prompt + expected, len(prompt))
    for k, (entry, token_id) in enumerate(zip(content, expected)):
        assert bytes(entry.bytes) == tok.token_bytes(token_id)
        assert entry.logprob == pytest.approx(float(own[k, token_id]), abs=1e-4)
        values, ids = torch.topk(own[k], 3)
        assert [bytes(t.bytes) for t in entry.top_logprobs] == [tok.token_bytes(i) for i in ids.tolist()]
        assert [t.logprob for t in entry.top_logprobs] == pytest.approx(values.tolist(), abs=1e-4)
    assert content  # the answer was not empty


def test_completion_logprobs_have_the_legacy_shape(server, chat_model):
    model, tok = chat_model
    body = {"model": "es-chat", "prompt": "Había una vez", "max_tokens": 6, "temperature": 0, "logprobs": 2}
    answer = httpx.post(server.url + "/v1/completions", json=body, timeout=60).json()
    lp = answer["choices"][0]["logprobs"]
    assert len(lp["tokens"]) == len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == len(lp["text_offset"]) == 6
    prompt = [tok.bos_id] + tok.encode("Había una vez")
    greedy = SamplingParams(temperature=0).make_sampler()
    expected = generate(model, torch.tensor(prompt), 6, sampler=greedy, eos_token_id=[tok.eos_id])[len(prompt):]
    own = _own_logprobs(model, prompt + expected.tolist(), len(prompt))
    assert lp["token_logprobs"] == pytest.approx([float(own[k, t]) for k, t in enumerate(expected.tolist())],
                                                 abs=1e-4)
    assert all(len(top) <= 2 for top in lp["top_logprobs"]) and lp["text_offset"][0] == 0


def test_n_choices_are_the_seeds_seed_plus_i(client, chat_model):
    model, tok = chat_model
    messages = _ask("Dime algo.")
    answer = client.chat.completions.create(model="es-chat", messages=messages, max_tokens=15, temperature=0.9,
                                            seed=7, n=3)
    assert [c.index for c in answer.choices] == [0, 1, 2]
    prompt = _chat_prompt(tok, messages)
    for i, choice in enumerate(answer.choices):
        params = SamplingParams(max_tokens=15, temperature=0.9, seed=7 + i, stop_token_ids=_stops(tok))
        ids = generate(model, torch.tensor(prompt), 15, sampler=params.make_sampler(), eos_token_id=_stops(tok))
        assert choice.message.content == tok.decode(ids[len(prompt):].tolist(), skip_special=True)
    assert answer.usage.completion_tokens >= 3
    # streamed: the same texts, chunk by chunk, each chunk naming its choice
    texts = ["", "", ""]
    for chunk in client.chat.completions.create(model="es-chat", messages=messages, max_tokens=15, temperature=0.9,
                                                seed=7, n=3, stream=True):
        for c in chunk.choices:
            texts[c.index] += c.delta.content or ""
    assert texts == [c.message.content for c in answer.choices]


def _reference_penalised(model, prompt, max_tokens, presence, frequency, stops):
    """Greedy decoding with the OpenAI penalties written out: logits[j] -= f * c[j] + p * (c[j] > 0)."""
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(max_tokens):
            logits = model(torch.tensor([ids]))[0, -1].float()
            for token in set(ids[len(prompt):]):
                count = ids[len(prompt):].count(token)
                logits[token] -= frequency * count + presence
            token = int(torch.argmax(logits))
            ids.append(token)
            if token in stops:
                break
    return ids[len(prompt):]


@pytest.mark.parametrize("presence, frequency", [(1.5, 0.0), (0.0, 1.2), (-0.5, 0.7)])
def test_presence_and_frequency_penalties_follow_the_openai_formula(server, chat_model, presence, frequency):
    model, tok = chat_model
    body = {"model": "es-chat", "prompt": "La la la la", "max_tokens": 25, "temperature": 0,
            "presence_penalty": presence, "frequency_penalty": frequency}
    answer = httpx.post(server.url + "/v1/completions", json=body, timeout=60).json()
    prompt = [tok.bos_id] + tok.encode("La la la la")
    expected = _reference_penalised(model, prompt, 25, presence, frequency, [tok.eos_id])
    assert answer["choices"][0]["text"] == tok.decode(expected, skip_special=True)
    plain = httpx.post(server.url + "/v1/completions", json={**body, "presence_penalty": 0, "frequency_penalty": 0},
                       timeout=60).json()
    assert plain["choices"][0]["text"] != answer["choices"][0]["text"]  # the penalty did something


def test_logit_bias_bans_and_forces_tokens(server, chat_model):
    _, tok = chat_model
    body = {"model": "es-chat", "prompt": "Había una vez", "max_tokens": 8, "temperature": 0}
    first = httpx.post(server.url + "/v1/completions", json={**body, "logprobs": 0}).json()
    first_token = first["choices"][0]["logprobs"]["tokens"][0]
    first_id = tok.encode(first_token)[0]
    banned = httpx.post(server.url + "/v1/completions", json={**body, "logit_bias": {str(first_id): -100},
                                                               "logprobs": 0}).json()
    assert banned["choices"][0]["logprobs"]["tokens"][0] != first_token
    forced_id = tok.encode(" dragón")[0]
    forced = httpx.post(server.url + "/v1/completions", json={**body, "logit_bias": {str(forced_id): 100},
                                                               "max_tokens": 3}).json()
    assert forced["choices"][0]["text"] == tok.decode([forced_id] * 3)


def test_stop_token_ids_and_min_tokens(server, chat_model):
    _, tok = chat_model
    body = {"model": "es-chat", "prompt": "Había una vez", "max_tokens": 20, "temperature": 0, "logprobs": 0}
    free = httpx.post(server.url + "/v1/completions", json=body).json()["choices"][0]
    third = tok.encode(free["logprobs"]["tokens"][2])[0]
    cut = httpx.post(server.url + "/v1/completions", json={**body, "stop_token_ids": [third]}).json()
    assert cut["choices"][0]["finish_reason"] == "stop" and cut["usage"]["completion_tokens"] <= 3
    # min_tokens bans the stop tokens (EOS and stop_token_ids) until the answer has that many
    longer = httpx.post(server.url + "/v1/completions", json={**body, "stop_token_ids": [third], "min_tokens": 6}).json()
    assert longer["usage"]["completion_tokens"] >= 6
    assert third not in [tok.encode(t)[0] for t in longer["choices"][0]["logprobs"]["tokens"][:6]]


# -- routes, ids, keys, CORS -----------------------------------------------------------------------


def test_model_route_tokenize_detokenize_fingerprint_and_request_id(server, client, chat_model):
    _, tok = chat_model
    assert client.models.retrieve("es-chat").id == "es-chat"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-4")
    ids = httpx.post(server.url + "/tokenize", json={"prompt": "Hola, ¿qué tal?"}).json()
    assert ids["tokens"] == [tok.bos_id] + tok.encode("Hola, ¿qué tal?") and ids["count"] == len(ids["tokens"])
    chat_ids = httpx.post(server.url + "/tokenize", json={"messages": _ask("Hola")}).json()["tokens"]
    assert chat_ids == _chat_prompt(tok, _ask("Hola"))
    back = httpx.post(server.url + "/detokenize", json={"tokens": tok.encode("Hola, ¿qué tal?")}).json()
    assert back == {"prompt": "Hola, ¿qué tal?"}
    one = client.chat.completions.create(model="es-chat", messages=_ask("Hola"), max_tokens=3)
    two = client.chat.completions.create(model="es-chat", messages=_ask("Adiós"), max_tokens=3)
    assert one.system_fingerprint and one.system_fingerprint == two.system_fingerprint
    answer = httpx.get(server.url + "/v1/models", headers={"x-request-id": "mi-id-1"})
    assert answer.headers["x-request-id"] == "mi-id-1"
    assert httpx.get(server.url + "/v1/models").headers["x-request-id"]  # one is made up when none is sent


def test_api_key_is_required_and_cors_lets_only_the_allowed_origin_in(locked):
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=locked.url + "/v1", api_key="otra", max_retries=0).models.list()
    assert httpx.post(locked.url + "/v1/chat/completions", json={}).status_code == 401
    good = openai.OpenAI(base_url=locked.url + "/v1", api_key=API_KEY, max_retries=0)
    assert good.chat.completions.create(model="es-chat", messages=_ask("Hola"), max_tokens=3).choices
    assert httpx.get(locked.url + "/health").status_code == 200  # a probe needs no key
    preflight = {"access-control-request-method": "POST", "access-control-request-headers": "authorization"}
    allowed = httpx.options(locked.url + "/v1/chat/completions", headers={"origin": ORIGIN, **preflight})
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == ORIGIN
    other = httpx.options(locked.url + "/v1/chat/completions", headers={"origin": "http://otro.example", **preflight})
    assert "access-control-allow-origin" not in other.headers


# -- cancellation and transport limits -------------------------------------------------------------


def _raw_request(port: int, body: dict) -> socket.socket:
    data = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
    return sock


def _port(server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def test_a_non_streaming_request_is_cancelled_when_its_client_leaves(server):
    before = _metrics(server)
    body = {"model": "es-chat", "messages": _ask("Cuéntame una historia larga. " * 6), "max_tokens": 150,
            "temperature": 0.9, "seed": 1, "ignore_eos": True}
    sockets = [_raw_request(_port(server), body) for _ in range(4)]
    deadline = time.monotonic() + 30
    while _metrics(server)["llmlab_requests_running"] < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    for sock in sockets:
        sock.close()
    after = _wait_idle(server)
    assert after["llmlab_kv_blocks_used"] == 0 and after["llmlab_requests_running"] == 0
    cancelled = 'llmlab_requests_total{"finish_reason": "cancelled"}'
    assert after.get(cancelled, 0) == before.get(cancelled, 0) + 4
    tokens = "llmlab_generation_tokens_total"
    assert after[tokens] - before[tokens] < 4 * 150  # they did not run to the end


def test_a_chunked_body_over_the_limit_gets_413(server):
    def chunks():
        for _ in range(40):
            yield b" " * 50_000

    answer = httpx.post(server.url + "/v1/chat/completions", content=chunks(),
                        headers={"content-type": "application/json"}, timeout=30)
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "request_too_large"
    assert httpx.get(server.url + "/health").status_code == 200


def _closed_by_server(sock: socket.socket, limit_s: float = 20.0) -> bytes:
    """Read until the server closes the connection (the socket's own timeout is the safety net)."""
    sock.settimeout(limit_s)
    data = b""
    while True:
        piece = sock.recv(65536)
        if not piece:
            return data
        data += piece


def test_silent_and_slow_connections_are_closed(server):
    port = _port(server)
    silent = socket.create_connection(("127.0.0.1", port))
    half_headers = socket.create_connection(("127.0.0.1", port))
    half_headers.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    half_body = socket.create_connection(("127.0.0.1", port))
    half_body.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 500\r\n\r\n{\"model\": ")
    assert _closed_by_server(silent) == b""
    assert _closed_by_server(half_headers) == b""
    answer = _closed_by_server(half_body)
    assert answer.startswith(b"HTTP/1.1 408") and b"request_timeout" in answer
    for sock in (silent, half_headers, half_body):
        sock.close()
    assert httpx.get(server.url + "/health").status_code == 200
