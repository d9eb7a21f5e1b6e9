"""The real server (``python -m llmlab serve``) on a free loopback port, through the official ``openai``
client and raw HTTP: same tokens as offline ``generate``, streaming, disconnects, bad input, limits.

One server is started for the whole module (a few seconds), once with the engine in its thread and
once with the engine in its own process (``--engine-process``); every test leaves it serving.
"""

import asyncio
import json
import time

import pytest
import torch

httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from llmlab import pretrained  # noqa: E402
from llmlab.chat import STOP_TOKENS, encode_chat  # noqa: E402
from llmlab.model import generate  # noqa: E402
from llmlab.serve import SamplingParams, launch, run_load  # noqa: E402

MAX_NUM_SEQS, MAX_WAITING = 16, 64


# The engine in its own process is the same contract through a pipe; it starts a second Python (spawn), so it is
# end-to-end (make test and CI) and the fast layer keeps the threaded server.
@pytest.fixture(scope="module", params=["engine thread", pytest.param("engine process", marks=pytest.mark.e2e)])
def server(request):
    """Every test runs against both: the engine in the server's thread and in its own process."""
    with launch("es-chat", max_num_seqs=MAX_NUM_SEQS, max_waiting=MAX_WAITING,
                engine_process=request.param == "engine process") as handle:
        yield handle


@pytest.fixture(scope="module")
def chat_model():
    return pretrained.load("es-chat")


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="not-needed", max_retries=0, timeout=60)


def _offline_chat(chat_model, messages, max_tokens, temperature, seed):
    """What llmlab.model.generate produces for the same conversation and sampling settings."""
    model, tok = chat_model
    prompt = encode_chat(messages, tok, "chatml", add_generation_prompt=True)
    stops = [tok.special_tokens[t] for t in STOP_TOKENS["chatml"]]
    params = SamplingParams(max_tokens=max_tokens, temperature=temperature, seed=seed, stop_token_ids=stops)
    ids = generate(model, torch.tensor(prompt), max_tokens, sampler=params.make_sampler(), eos_token_id=stops)
    new = ids[len(prompt):].tolist()
    return tok.decode(new, skip_special=True), len(prompt), new


def _metrics(server) -> dict:
    text = httpx.get(server.url + "/metrics").text
    values = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = sample.name + (json.dumps(sample.labels, sort_keys=True) if sample.labels else "")
            values[key] = sample.value
    return values


def _assert_healthy(server):
    assert httpx.get(server.url + "/health").json() == {"status": "ok"}


MESSAGES = [{"role": "system", "content": "Responde en una frase."}, {"role": "user", "content": "¿Qué es un token?"}]


def test_models_and_health(server):
    _assert_healthy(server)
    models = httpx.get(server.url + "/v1/models").json()
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["es-chat"]


@pytest.mark.parametrize("temperature, seed", [(0.0, None), (0.8, 42)])
def test_chat_completion_through_the_openai_client_equals_offline_generate(server, client, chat_model, temperature,
                                                                          seed):
    answer = client.chat.completions.create(model="es-chat", messages=MESSAGES, max_tokens=40,
                                            temperature=temperature, seed=seed)
    text, n_prompt, new = _offline_chat(chat_model, MESSAGES, 40, temperature, seed)
    assert answer.choices[0].message.content == text
    assert answer.choices[0].message.role == "assistant"
    assert answer.choices[0].finish_reason == ("stop" if new[-1] in chat_model[1].special_ids else "length")
    assert answer.usage.prompt_tokens == n_prompt and answer.usage.completion_tokens == len(new)


def test_completion_through_raw_http_equals_offline_generate(server, chat_model):
    model, tok = chat_model
    body = {"model": "es-chat", "prompt": "Había una vez", "max_tokens": 25, "temperature": 0.9, "seed": 3}
    answer = httpx.post(server.url + "/v1/completions", json=body)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    prompt = [tok.bos_id] + tok.encode("Había una vez")
    params = SamplingParams(max_tokens=25, temperature=0.9, seed=3, stop_token_ids=[tok.eos_id])
    ids = generate(model, torch.tensor(prompt), 25, sampler=params.make_sampler(), eos_token_id=[tok.eos_id])
    assert data["object"] == "text_completion"
    assert data["choices"][0]["text"] == tok.decode(ids[len(prompt):].tolist(), skip_special=True)
    # token ids as the prompt: the same answer
    by_ids = httpx.post(server.url + "/v1/completions", json={**body, "prompt": prompt[1:]}).json()
    no_bos = generate(model, torch.tensor(prompt[1:]), 25, sampler=params.make_sampler(), eos_token_id=[tok.eos_id])
    assert by_ids["choices"][0]["text"] == tok.decode(no_bos[len(prompt) - 1:].tolist(), skip_special=True)


def test_streaming_yields_the_same_text(server, client, chat_model):
    text, _, new = _offline_chat(chat_model, MESSAGES, 40, 0.8, 42)
    stream = client.chat.completions.create(model="es-chat", messages=MESSAGES, max_tokens=40, temperature=0.8,
                                            seed=42, stream=True, stream_options={"include_usage": True})
    pieces, finish, usage = [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    assert "".join(pieces) == text
    if len(new) > 3:
        assert len([p for p in pieces if p]) > 1  # it really streamed, piece by piece
    assert finish in ("stop", "length") and usage.completion_tokens == len(new)
    # raw server-sent events: "data: {json}" lines, then "data: [DONE]"
    body = {"model": "es-chat", "messages": MESSAGES, "max_tokens": 40, "temperature": 0.8, "seed": 42, "stream": True}
    with httpx.stream("POST", server.url + "/v1/chat/completions", json=body) as answer:
        assert answer.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in answer.iter_lines() if line]
    assert lines[-1] == "data: [DONE]" and all(line.startswith("data: ") for line in lines)
    events = [json.loads(line[6:]) for line in lines[:-1]]
    assert {e["object"] for e in events} == {"chat.completion.chunk"}
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == text


def test_a_client_that_disconnects_mid_stream_frees_its_blocks(server):
    before = _metrics(server)
    body = {"model": "es-chat", "messages": [{"role": "user", "content": "Cuéntame una historia larga. " * 8}],
            "max_tokens": 150, "temperature": 0.9, "seed": 1, "stream": True, "ignore_eos": True}
    with httpx.stream("POST", server.url + "/v1/chat/completions", json=body, timeout=30) as answer:
        for i, _ in enumerate(answer.iter_lines()):
            if i == 6:
                during = _metrics(server)
                break
    assert during["llmlab_kv_blocks_used"] > 0 and during["llmlab_requests_running"] == 1
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        after = _metrics(server)
        if after["llmlab_kv_blocks_used"] == 0 and after["llmlab_requests_running"] == 0:
            break
        time.sleep(0.05)
    assert after["llmlab_kv_blocks_used"] == 0 and after["llmlab_requests_running"] == 0
    key = 'llmlab_requests_total{"finish_reason": "cancelled"}'
    assert after.get(key, 0) == before.get(key, 0) + 1
    _assert_healthy(server)


GOOD = {"model": "es-chat", "messages": [{"role": "user", "content": "Hola"}], "max_tokens": 5}
BAD_CHAT_BODIES = {
    "malformed JSON": b'{"model": "es-chat", "messages": [',
    "not an object": b'[1, 2, 3]',
    "unknown model": {**GOOD, "model": "gpt-4"},
    "missing messages": {"model": "es-chat", "max_tokens": 5},
    "empty messages": {**GOOD, "messages": []},
    "a message without role": {**GOOD, "messages": [{"content": "Hola"}]},
    "an unknown role": {**GOOD, "messages": [{"role": "robot", "content": "Hola"}]},
    "assistant first": {**GOOD, "messages": [{"role": "assistant", "content": "Hola"}]},
    "prompt longer than the context": {**GOOD, "messages": [{"role": "user", "content": "palabra " * 400}]},
    "max_tokens 0": {**GOOD, "max_tokens": 0},
    "max_tokens negative": {**GOOD, "max_tokens": -5},
    "max_tokens beyond the context": {**GOOD, "max_tokens": 5000},
    "max_tokens not a number": {**GOOD, "max_tokens": "ten"},
    "negative temperature": {**GOOD, "temperature": -0.5},
    "top_p 0": {**GOOD, "top_p": 0},
    "top_p above 1": {**GOOD, "top_p": 1.5},
    "n 0": {**GOOD, "n": 0},
    "n 129": {**GOOD, "n": 129},
    "presence penalty 3": {**GOOD, "presence_penalty": 3},
    "frequency penalty -2.5": {**GOOD, "frequency_penalty": -2.5},
    "temperature as a string": {**GOOD, "temperature": "0.5"},
    "stream as a string": {**GOOD, "stream": "yes"},
    "stream as 1": {**GOOD, "stream": 1},
    "stream_options without stream": {**GOOD, "stream_options": {"include_usage": True}},
    "top_logprobs without logprobs": {**GOOD, "top_logprobs": 2},
    "top_logprobs 21": {**GOOD, "logprobs": True, "top_logprobs": 21},
    "an unknown field": {**GOOD, "frobnicate": True},
    "tools": {**GOOD, "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]},
    "tool_choice required": {**GOOD, "tool_choice": "required"},
    "a tool message": {**GOOD, "messages": [{"role": "user", "content": "Hola"},
                                           {"role": "tool", "content": "42", "tool_call_id": "c1"}]},
    "a message name": {**GOOD, "messages": [{"role": "user", "content": "Hola", "name": "ana"}]},
    "reasoning_effort": {**GOOD, "reasoning_effort": "high"},
    "logit_bias above 100": {**GOOD, "logit_bias": {"65": 101}},
    "logit_bias with a word key": {**GOOD, "logit_bias": {"hola": 5}},
    "logit_bias beyond the vocabulary": {**GOOD, "logit_bias": {"999999": 5}},
    "stop_token_ids beyond the vocabulary": {**GOOD, "stop_token_ids": [999999]},
    "min_tokens above max_tokens": {**GOOD, "min_tokens": 6},
    "unsupported schema keyword": {**GOOD, "response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}}}},
    "a misspelt schema keyword": {**GOOD, "response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "string", "maxLenght": 3}}}},
    "an unknown string format": {**GOOD, "response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "string", "format": "hostname"}}}},
    "an unknown response_format type": {**GOOD, "response_format": {"type": "yaml"}},
    "a schema name with spaces": {**GOOD, "response_format": {"type": "json_schema", "json_schema": {
        "name": "a b", "schema": {"type": "object"}}}},
    "stop of the wrong type": {**GOOD, "stop": 7},
    "seed negative": {**GOOD, "seed": -1},
}
# What the error message must name (the field, or the schema keyword that would not be enforced).
NAMED = {"unsupported schema keyword": "uniqueItems", "a misspelt schema keyword": "maxLenght",
         "an unknown string format": "hostname", "an unknown field": "frobnicate", "tools": "tools",
         "tool_choice required": "tool_choice", "top_logprobs without logprobs": "top_logprobs",
         "stream as a string": "stream", "stream as 1": "stream", "a tool message": "tool",
         "logit_bias beyond the vocabulary": "logit_bias", "min_tokens above max_tokens": "min_tokens"}


@pytest.mark.parametrize("case", list(BAD_CHAT_BODIES))
def test_bad_input_gets_an_openai_style_error_and_the_server_keeps_serving(server, case):
    body = BAD_CHAT_BODIES[case]
    if isinstance(body, bytes):
        answer = httpx.post(server.url + "/v1/chat/completions", content=body,
                            headers={"content-type": "application/json"})
    else:
        answer = httpx.post(server.url + "/v1/chat/completions", json=body)
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text)
    error = answer.json()["error"]
    assert isinstance(error["message"], str) and error["message"] and isinstance(error["type"], str)
    assert set(error) == {"message", "type", "param", "code"}
    if case == "unknown model":
        assert answer.status_code == 404 and error["code"] == "model_not_found"
    if case in NAMED:
        assert NAMED[case] in error["message"], error
    _assert_healthy(server)


def test_the_openai_client_raises_its_own_exceptions_for_errors(client):
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-4", messages=MESSAGES, max_tokens=5)
    with pytest.raises(openai.BadRequestError, match="context"):
        client.chat.completions.create(model="es-chat", messages=MESSAGES, max_tokens=100_000)
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model="es-chat", prompt="Hola", max_tokens=5, temperature=-1)


def test_unknown_routes_and_methods_get_json_errors(server):
    missing = httpx.get(server.url + "/v1/nothing")
    assert missing.status_code == 404 and "error" in missing.json()
    wrong_method = httpx.get(server.url + "/v1/chat/completions")
    assert wrong_method.status_code == 405 and "error" in wrong_method.json()


def test_a_50_mb_body_is_refused_with_413(server):
    answer = httpx.post(server.url + "/v1/chat/completions", content=b" " * 50_000_000,
                        headers={"content-type": "application/json"}, timeout=60)
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "request_too_large"
    _assert_healthy(server)


@pytest.mark.slow
def test_1000_requests_at_once_get_429_not_a_crash(server):
    async def burst():
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=120) as http:
            body = {**GOOD, "max_tokens": 16}
            answers = await asyncio.gather(*(http.post("/v1/chat/completions", json=body) for _ in range(1000)),
                                           return_exceptions=True)
        return answers

    answers = asyncio.run(burst())
    errors = [a for a in answers if isinstance(a, Exception)]
    assert not errors, errors[:3]
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {200, 429}
    assert statuses.count(429) > 0 and statuses.count(200) >= MAX_NUM_SEQS
    limited = next(a for a in answers if a.status_code == 429).json()["error"]
    assert limited["type"] == "rate_limit_error"
    _assert_healthy(server)
    assert _metrics(server)['llmlab_requests_rejected_total{"status": "429"}'] >= statuses.count(429)
    assert httpx.post(server.url + "/v1/chat/completions", json=GOOD).status_code == 200


def test_json_schema_response_format_gives_an_object_of_that_schema(server, client):
    schema = {"type": "object", "properties": {"riesgo": {"enum": ["bajo", "medio", "alto"]},
                                               "dias": {"type": "integer", "minimum": 1, "maximum": 30}},
              "required": ["riesgo", "dias"], "additionalProperties": False}
    answer = client.chat.completions.create(
        model="es-chat", messages=[{"role": "user", "content": "¿Es urgente? Responde en JSON."}], max_tokens=30,
        temperature=0.7, seed=4,
        response_format={"type": "json_schema", "json_schema": {"name": "r", "schema": schema}})
    assert answer.choices[0].finish_reason == "stop"
    obj = json.loads(answer.choices[0].message.content)
    assert list(obj) == ["riesgo", "dias"] and obj["riesgo"] in ("bajo", "medio", "alto") and 1 <= obj["dias"] <= 30


def test_ignore_eos_generates_exactly_max_tokens(server):
    body = {"model": "es-chat", "prompt": "Había una vez", "max_tokens": 30, "temperature": 0, "ignore_eos": True}
    answer = httpx.post(server.url + "/v1/completions", json=body).json()
    assert answer["usage"]["completion_tokens"] == 30 and answer["choices"][0]["finish_reason"] == "length"


def test_stop_strings_cut_the_answer(server, client):
    settings = dict(model="es-chat", prompt="Había una vez", max_tokens=40, temperature=0)
    text = client.completions.create(**settings).choices[0].text
    assert len(text) >= 4, "the model's continuation is too short to cut"
    stop = text[len(text) // 2:len(text) // 2 + 2]
    cut = client.completions.create(**settings, stop=[stop]).choices[0]
    assert cut.text == text[:text.index(stop)] and cut.finish_reason == "stop"


def test_metrics_are_prometheus_text_with_latency_histograms(server, client):
    before = _metrics(server)
    client.chat.completions.create(model="es-chat", messages=MESSAGES, max_tokens=10, temperature=0)
    after = _metrics(server)
    for name in ("llmlab_time_to_first_token_seconds_count", "llmlab_inter_token_latency_seconds_count",
                 "llmlab_e2e_request_latency_seconds_count"):
        assert after[name] > before.get(name, 0)
    for name in ("llmlab_requests_running", "llmlab_requests_waiting", "llmlab_kv_blocks_used",
                 "llmlab_kv_blocks_free", "llmlab_generation_tokens_per_second", "llmlab_kv_cache_usage_ratio"):
        assert name in after
    assert after["llmlab_kv_blocks_used"] + after["llmlab_kv_blocks_free"] == after["llmlab_kv_blocks_total"]
    assert after["llmlab_generation_tokens_total"] >= before.get("llmlab_generation_tokens_total", 0) + 1


@pytest.mark.slow
def test_load_of_64_streaming_clients_has_no_failures(server):
    """The CI-sized load test (the 60-second one and the soak are in benchmarks/bench_serve.py)."""
    report = run_load(server.url, clients=64, max_requests=128, duration_s=None, max_tokens=8)
    assert report.requests == 128 and report.failures == 0, report.errors
    assert report.output_tokens > 0 and len(report.ttft_s) == 128
    summary = report.summary()
    assert summary["ttft_p50_ms"] <= summary["ttft_p95_ms"] <= summary["ttft_p99_ms"]
    _assert_healthy(server)


def _outputs(texts):
    from llmlab.serve.request import RequestOutput

    return [RequestOutput(request_id="r", new_token_ids=(i,), num_output_tokens=i + 1, text=text,
                          finished=i == len(texts) - 1, finish_reason="length" if i == len(texts) - 1 else None,
                          error=None, num_prompt_tokens=3) for i, text in enumerate(texts)]


class _LaggingStream:
    """A request stream whose consumer fell behind: everything after the first output has already arrived."""

    def __init__(self, outputs, lagging=True):
        self.outputs, self.lagging = list(outputs), lagging

    def __aiter__(self):
        return self

    async def __anext__(self):
        if not self.outputs:
            raise StopAsyncIteration
        return self.outputs.pop(0)

    def ready(self):
        if not self.lagging:
            return []
        ready, self.outputs = self.outputs, []
        return ready

    async def aclose(self):
        pass


def test_a_stream_that_fell_behind_sends_what_arrived_as_one_chunk_with_the_same_text():
    from llmlab.serve.responses import Answer

    texts = ["Ho", "Hola", "Hola, ", "Hola, mundo"]

    async def events(stream):
        answer = Answer(request_id="c", model_name="m", fingerprint="f", tokenizer=None, chat=True, logprobs=False,
                        streams=[stream])
        return [e async for e in answer.events(include_usage=False)]

    def deltas(lagging):
        sent = asyncio.run(events(_LaggingStream(_outputs(texts), lagging)))
        assert sent[-1] == "data: [DONE]\n\n"
        chunks = [json.loads(e[len("data: "):]) for e in sent[:-1]]
        assert chunks[-1]["choices"][0]["finish_reason"] == "length"
        return [c["choices"][0]["delta"].get("content") for c in chunks]

    assert deltas(lagging=False) == ["", "Ho", "la", ", ", "mundo", None]  # the role, one per output, the end
    assert deltas(lagging=True) == ["", "Hola, mundo", None]  # everything that had arrived, at once


def test_a_text_chunk_from_its_template_is_the_chunk_encoded_whole():
    from llmlab.serve.responses import Answer

    for chat in (True, False):
        answer = Answer(request_id="c", model_name="m", fingerprint="f", tokenizer=None, chat=chat, logprobs=False,
                        streams=[])
        for text in ("hola", 'ñ"\\\n', "", "\x00"):
            for usage in (True, False):
                assert answer._text_chunk(1, text, usage) == answer._chunk(1, text, include_usage=usage)
