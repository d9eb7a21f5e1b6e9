"""The OpenAI-compatible request bodies, their checks, and OpenAI-style errors.

Each body is a pydantic model (what FastAPI validates and documents at ``/docs``). Fields the
OpenAI clients send and that make no difference here (``user``, ``logit_bias`` = none, ...) are
ignored; fields that would change the answer and are not supported (``n > 1``, ``logprobs``,
penalties other than 0) are refused with a 400 that says so, never silently dropped.
``to_sampling_params`` turns a body into ``llmlab.serve.SamplingParams``; every bad value becomes
an ``APIError`` (HTTP status plus the ``{"error": {...}}`` body the OpenAI clients parse).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .params import SamplingParams

__all__ = ["APIError", "ChatCompletionRequest", "CompletionRequest", "to_sampling_params"]


class APIError(Exception):
    """An error answered as ``{"error": {"message", "type", "param", "code"}}`` with ``status``."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type, param, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class StreamOptions(_Body):
    include_usage: bool = False


class _SamplingFields(_Body):
    model: str
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None  # an extension (vLLM, llama.cpp)
    min_p: float | None = None  # extension
    repetition_penalty: float | None = None  # extension
    ignore_eos: bool = False  # extension (vLLM): generate max_tokens tokens, whatever the model would stop on
    n: int | None = 1
    stream: bool = False
    stream_options: StreamOptions | None = None
    stop: str | list[str] | None = None
    seed: int | None = None
    presence_penalty: float | None = 0.0
    frequency_penalty: float | None = 0.0
    logprobs: Any = None
    logit_bias: dict[str, float] | None = None


class CompletionRequest(_SamplingFields):
    prompt: str | list[int] | list[str]
    max_tokens: int | None = 16  # the OpenAI default for completions
    echo: bool = False
    best_of: int | None = None
    suffix: str | None = None


class ChatMessage(_Body):
    role: str
    content: str | list[dict[str, Any]] | None = None

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


class ResponseFormat(_Body):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: dict[str, Any] | None = None


class ChatCompletionRequest(_SamplingFields):
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: int | None = None  # default: whatever room the context leaves
    max_completion_tokens: int | None = None
    response_format: ResponseFormat | None = None

    def json_schema(self) -> dict[str, Any] | None:
        fmt = self.response_format
        if fmt is None or fmt.type == "text":
            return None
        if fmt.type == "json_object":
            raise APIError(400, "response_format json_object is not supported: give the object's shape with "
                                "{\"type\": \"json_schema\", \"json_schema\": {\"name\": ..., \"schema\": {...}}}",
                           param="response_format")
        if fmt.json_schema is None or not isinstance(fmt.json_schema.get("schema"), dict):
            raise APIError(400, "response_format json_schema needs json_schema.schema (a JSON schema object)",
                           param="response_format")
        return fmt.json_schema["schema"]


def _unsupported(body: _SamplingFields) -> None:
    if body.n not in (None, 1):
        raise APIError(400, "only n=1 is supported", param="n")
    for name in ("presence_penalty", "frequency_penalty"):
        if getattr(body, name) not in (None, 0, 0.0):
            raise APIError(400, f"{name} is not supported (use repetition_penalty)", param=name)
    if body.logprobs not in (None, False):
        raise APIError(400, "logprobs are not supported", param="logprobs")
    if body.logit_bias:
        raise APIError(400, "logit_bias is not supported", param="logit_bias")
    if isinstance(body, CompletionRequest):
        if body.echo:
            raise APIError(400, "echo is not supported", param="echo")
        if body.best_of not in (None, 1):
            raise APIError(400, "best_of is not supported", param="best_of")
        if body.suffix:
            raise APIError(400, "suffix is not supported", param="suffix")


def to_sampling_params(body: _SamplingFields, *, max_tokens: int, stop_token_ids: list[int],
                       json_schema: dict[str, Any] | None = None) -> SamplingParams:
    """``SamplingParams`` for the body; an ``APIError`` (400) names the first bad field."""
    _unsupported(body)
    values = dict(
        max_tokens=max_tokens,
        temperature=1.0 if body.temperature is None else body.temperature,
        top_p=1.0 if body.top_p is None else body.top_p,
        top_k=None if body.top_k in (None, 0, -1) else body.top_k,
        min_p=None if body.min_p in (None, 0) else body.min_p,
        repetition_penalty=body.repetition_penalty,
        seed=body.seed,
        stop=[] if body.stop is None else body.stop,
        stop_token_ids=stop_token_ids,
        json_schema=json_schema,
    )
    try:
        return SamplingParams(**values)
    except ValueError as err:
        message = str(err)
        param = message.split(" ", 1)[0]
        raise APIError(400, message, param=param if param in values else None) from None
