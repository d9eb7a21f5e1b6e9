"""The OpenAI-compatible request bodies, their checks, and OpenAI-style errors.

Each body is a pydantic model (what FastAPI validates and documents at ``/docs``), validated the
way the OpenAI API does it: types are strict (``"stream": "yes"`` is a 400, not ``true``), an
unknown field is refused ("unrecognized request argument"), and a field is either served or refused
with a 400 that names it. The audit of every field the OpenAI clients send:

- served: ``model``, ``messages`` / ``prompt``, ``max_tokens``, ``max_completion_tokens``,
  ``temperature``, ``top_p``, ``n``, ``stop``, ``seed``, ``stream``, ``stream_options``,
  ``presence_penalty``, ``frequency_penalty``, ``logit_bias``, ``logprobs``, ``top_logprobs``,
  ``response_format`` (text, json_object, json_schema);
- extensions (vLLM, llama.cpp): ``top_k``, ``min_p``, ``repetition_penalty``, ``ignore_eos``,
  ``stop_token_ids``, ``min_tokens``;
- accepted because they change nothing in the answer: ``user``, ``metadata``, ``store``,
  ``service_tier``, ``prompt_cache_key``, ``safety_identifier``, ``prediction`` (a latency hint),
  ``modalities: ["text"]``;
- refused (400 naming the field): ``tools``, ``tool_choice``, ``functions``, ``function_call``,
  ``parallel_tool_calls``, the ``tool`` role, a message's ``name`` or ``tool_calls``, ``audio``,
  ``reasoning_effort``, ``verbosity``, ``web_search_options``, and for completions ``echo``,
  ``best_of > 1``, ``suffix``.

``to_sampling_params`` turns a body into ``llmlab.serve.SamplingParams``; every bad value becomes an
``APIError`` (HTTP status plus the ``{"error": {...}}`` body the OpenAI clients parse).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .params import SamplingParams

__all__ = ["APIError", "ChatCompletionRequest", "CompletionRequest", "DetokenizeRequest", "TokenizeRequest",
           "to_sampling_params"]

MAX_N = 128  # choices per request (OpenAI's limit)


class APIError(Exception):
    """An error answered as ``{"error": {"message", "type", "param", "code"}}`` with ``status``."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type, param, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class StreamOptions(_Body):
    include_usage: bool = False
    include_obfuscation: bool | None = None  # a transport detail of OpenAI's; no effect here


class _SamplingFields(_Body):
    model: str
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = None
    top_k: int | None = None  # an extension (vLLM, llama.cpp)
    min_p: float | None = None  # extension
    repetition_penalty: float | None = None  # extension
    ignore_eos: bool = False  # extension (vLLM): generate max_tokens tokens, whatever the model would stop on
    stop_token_ids: list[int] | None = None  # extension (vLLM): more token ids that end the answer
    min_tokens: int = Field(default=0, ge=0)  # extension (vLLM): the stop tokens are banned before this many
    n: int | None = Field(default=1, ge=1, le=MAX_N)
    stream: bool = False
    stream_options: StreamOptions | None = None
    stop: str | list[str] | None = None
    seed: int | None = None
    presence_penalty: float | None = Field(default=0.0, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=0.0, ge=-2, le=2)
    logit_bias: dict[str, float] | None = None
    # Accepted, no effect on the answer:
    user: str | None = None
    metadata: dict[str, str] | None = None
    store: bool | None = None
    service_tier: str | None = None
    prompt_cache_key: str | None = None
    safety_identifier: str | None = None


class CompletionRequest(_SamplingFields):
    prompt: str | list[int] | list[str]
    max_tokens: int | None = 16  # the OpenAI default for completions
    logprobs: int | None = Field(default=None, ge=0, le=5)  # completions: the number of alternatives (OpenAI: <= 5)
    echo: bool = False
    best_of: int | None = None
    suffix: str | None = None


class ChatMessage(_Body):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    function_call: dict[str, Any] | None = None
    refusal: str | None = None
    audio: dict[str, Any] | None = None

    def text(self) -> str:
        """The content as one string (OpenAI also accepts a list of ``{"type": "text", "text": ...}`` parts)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        parts = []
        for part in self.content:
            if part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise APIError(400, "only text content parts are supported", param="messages")
            parts.append(part["text"])
        return "".join(parts)


class JsonSchemaFormat(_Body):
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class ResponseFormat(_Body):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = None


class ChatCompletionRequest(_SamplingFields):
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: int | None = None  # default: whatever room the context leaves
    max_completion_tokens: int | None = None
    response_format: ResponseFormat | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    # Refused when set (checked in ``_refused``):
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    functions: list[dict[str, Any]] | None = None
    function_call: str | dict[str, Any] | None = None
    audio: dict[str, Any] | None = None
    modalities: list[str] | None = None
    prediction: dict[str, Any] | None = None
    reasoning_effort: str | None = None
    verbosity: str | None = None
    web_search_options: dict[str, Any] | None = None

    def json_schema(self) -> dict[str, Any] | None:
        """The schema the answer must follow: ``json_object`` is any JSON object."""
        fmt = self.response_format
        if fmt is None or fmt.type == "text":
            if fmt is not None and fmt.json_schema is not None:
                raise APIError(400, "response_format.json_schema is only allowed with type json_schema",
                               param="response_format")
            return None
        if fmt.type == "json_object":
            return {"type": "object"}
        if fmt.json_schema is None:
            raise APIError(400, "response_format json_schema needs json_schema: {\"name\": ..., \"schema\": {...}}",
                           param="response_format")
        return {"type": "object"} if fmt.json_schema.schema_ is None else fmt.json_schema.schema_

    def choice_logprobs(self) -> int | None:
        """How many alternatives per token to report (None: no logprobs)."""
        if self.top_logprobs is not None and not self.logprobs:
            raise APIError(400, "top_logprobs needs logprobs: true", param="top_logprobs")
        return (self.top_logprobs or 0) if self.logprobs else None


def _refused(body: _SamplingFields) -> None:
    if body.stream_options is not None and not body.stream:
        raise APIError(400, "stream_options is only allowed when stream is true", param="stream_options")
    if isinstance(body, CompletionRequest):
        if body.echo:
            raise APIError(400, "echo is not supported", param="echo")
        if body.best_of not in (None, 1):
            raise APIError(400, "best_of is not supported (use n)", param="best_of")
        if body.suffix:
            raise APIError(400, "suffix is not supported", param="suffix")
        return
    if body.tools or body.functions:
        name = "tools" if body.tools else "functions"
        raise APIError(400, f"{name} (tool calling) is not supported by this server", param=name)
    for name in ("tool_choice", "parallel_tool_calls", "function_call"):
        if getattr(body, name) is not None:
            raise APIError(400, f"{name} is only allowed with tools, and tools are not supported", param=name)
    for name in ("audio", "reasoning_effort", "verbosity", "web_search_options"):
        if getattr(body, name) is not None:
            raise APIError(400, f"{name} is not supported", param=name)
    if body.modalities is not None and body.modalities != ["text"]:
        raise APIError(400, "only the text modality is supported", param="modalities")
    for i, m in enumerate(body.messages):
        if m.role in ("tool", "function"):
            raise APIError(400, f"messages[{i}]: the {m.role!r} role needs tools, which are not supported",
                           param="messages")
        for name in ("name", "tool_calls", "tool_call_id", "function_call", "audio"):
            if getattr(m, name) is not None:
                raise APIError(400, f"messages[{i}].{name} is not supported", param="messages")


def _logit_bias(raw: dict[str, float] | None) -> dict[int, float] | None:
    if not raw:
        return None
    bias = {}
    for key, value in raw.items():
        if not key.isdigit():
            raise APIError(400, f"logit_bias keys must be token ids, got {key!r}", param="logit_bias")
        bias[int(key)] = value
    return bias


def to_sampling_params(body: _SamplingFields, *, max_tokens: int, stop_token_ids: list[int],
                       json_schema: dict[str, Any] | None = None, logprobs: int | None = None,
                       seed: int | None = None) -> SamplingParams:
    """``SamplingParams`` for the body; an ``APIError`` (400) names the first bad field."""
    _refused(body)
    if body.min_tokens > max_tokens:
        raise APIError(400, f"min_tokens ({body.min_tokens}) is larger than max_tokens ({max_tokens})",
                       param="min_tokens")
    values = dict(
        max_tokens=max_tokens,
        temperature=1.0 if body.temperature is None else body.temperature,
        top_p=1.0 if body.top_p is None else body.top_p,
        top_k=None if body.top_k in (None, 0, -1) else body.top_k,
        min_p=None if body.min_p in (None, 0) else body.min_p,
        repetition_penalty=body.repetition_penalty,
        seed=body.seed if seed is None else seed,
        stop=[] if body.stop is None else body.stop,
        stop_token_ids=list(dict.fromkeys([*stop_token_ids, *(body.stop_token_ids or [])])),
        json_schema=json_schema,
        logit_bias=_logit_bias(body.logit_bias),
        presence_penalty=body.presence_penalty or 0.0,
        frequency_penalty=body.frequency_penalty or 0.0,
        min_tokens=body.min_tokens,
        logprobs=logprobs,
    )
    try:
        return SamplingParams(**values)
    except ValueError as err:
        message = str(err)
        param = message.split(" ", 1)[0]
        raise APIError(400, message, param=param if param in values else None) from None


class TokenizeRequest(_Body):
    """``POST /tokenize`` (vLLM's shape): a prompt, or messages rendered with the chat template."""

    model: str | None = None
    prompt: str | None = None
    messages: list[ChatMessage] | None = None
    add_special_tokens: bool = True
    add_generation_prompt: bool = True


class DetokenizeRequest(_Body):
    model: str | None = None
    tokens: list[int]
