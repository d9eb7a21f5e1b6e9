"""What a request asks for: ``SamplingParams``, checked once, turned into the sampler ``generate`` uses.

The names follow the OpenAI API (and vLLM's ``SamplingParams``): ``max_tokens``, ``temperature``
(0 means greedy), ``top_p``, ``seed``, ``stop``. Every request gets its own
``llmlab.sampling.Sampler`` and its own ``torch.Generator`` seeded with ``seed``: that is what
makes a request served in a batch of 32 produce exactly the tokens of
``llmlab.model.generate(model, prompt, max_tokens, sampler=params.make_sampler())`` run alone.

Three kinds of stop, checked after every token: ``stop_token_ids`` (EOS, ``<|end|>``),
``stop_sequences`` (lists of token ids that the output may end with, like ``generate``'s
``stop_sequences``; the stop tokens stay in the output) and ``stop`` (strings, matched on the text,
as the OpenAI API does; the text is cut before the string).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from llmlab.sampling import Sampler

__all__ = ["SamplingParams"]


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


@dataclass
class SamplingParams:
    """How to generate one completion. Invalid values raise ``ValueError`` naming the field.

    - ``max_tokens``: at most this many new tokens (stop tokens included).
    - ``temperature``: 0 for greedy decoding (argmax), else sample from ``softmax(logits / T)``.
    - ``top_p`` in (0, 1], ``top_k`` (None = all), ``min_p`` in [0, 1], ``repetition_penalty`` > 0.
    - ``seed``: the request's own random generator; None draws a fresh seed.
    - ``stop``: strings that end the text; ``stop_token_ids``, ``stop_sequences``: ids (see module).
    - ``json_schema``: the output is JSON of this schema (``llmlab.serve.grammar``).
    - ``logit_bias`` ``{token_id: bias in [-100, 100]}``, ``presence_penalty`` and ``frequency_penalty``
      in [-2, 2], ``min_tokens`` (stop tokens banned before): see ``llmlab.serve.processors``.
    - ``logprobs``: None, or how many alternatives (0..20) to report with each token's log-probability
      (the model's own ``log_softmax``, before any sampling setting).
    """

    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    seed: int | None = None
    stop: Sequence[str] = ()
    stop_token_ids: Sequence[int] = ()
    stop_sequences: Sequence[Sequence[int]] = ()
    json_schema: Mapping[str, Any] | None = None
    logit_bias: Mapping[int, float] | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    min_tokens: int = 0
    logprobs: int | None = None

    def __post_init__(self) -> None:
        if not _is_int(self.max_tokens) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be an integer >= 1, got {self.max_tokens!r}")
        if not _is_number(self.temperature) or self.temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy), got {self.temperature!r}")
        if not _is_number(self.top_p) or not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be a number in (0, 1], got {self.top_p!r}")
        if self.top_k is not None and (not _is_int(self.top_k) or self.top_k < 1):
            raise ValueError(f"top_k must be None or an integer >= 1, got {self.top_k!r}")
        if self.min_p is not None and (not _is_number(self.min_p) or not 0 <= self.min_p <= 1):
            raise ValueError(f"min_p must be None or a number in [0, 1], got {self.min_p!r}")
        if self.repetition_penalty is not None and (
                not _is_number(self.repetition_penalty) or self.repetition_penalty <= 0):
            raise ValueError(f"repetition_penalty must be None or a number > 0, got {self.repetition_penalty!r}")
        if self.seed is not None and (not _is_int(self.seed) or not 0 <= self.seed < 2**63):
            raise ValueError(f"seed must be None or an integer in [0, 2**63), got {self.seed!r}")
        if isinstance(self.stop, str):
            self.stop = [self.stop]
        self.stop = list(self.stop)
        if not all(isinstance(s, str) and s for s in self.stop):
            raise ValueError(f"stop must be a string or a list of non-empty strings, got {self.stop!r}")
        self.stop_token_ids = [int(t) for t in self._id_list("stop_token_ids", self.stop_token_ids)]
        self.stop_sequences = [list(self._id_list("stop_sequences item", s)) for s in self.stop_sequences]
        if any(not s for s in self.stop_sequences):
            raise ValueError("stop_sequences must not contain an empty sequence")
        if self.json_schema is not None and not isinstance(self.json_schema, Mapping):
            raise ValueError(f"json_schema must be a mapping (a JSON schema object), "
                             f"got {type(self.json_schema).__name__}")
        if self.logit_bias is not None:
            if not isinstance(self.logit_bias, Mapping) or not all(
                    _is_int(k) and k >= 0 and _is_number(v) and -100 <= v <= 100 for k, v in self.logit_bias.items()):
                raise ValueError(f"logit_bias must map token ids (ints >= 0) to numbers in [-100, 100], "
                                 f"got {self.logit_bias!r}")
            self.logit_bias = {int(k): float(v) for k, v in self.logit_bias.items()}
        for name in ("presence_penalty", "frequency_penalty"):
            value = getattr(self, name)
            if not _is_number(value) or not -2 <= value <= 2:
                raise ValueError(f"{name} must be a number in [-2, 2], got {value!r}")
        if not _is_int(self.min_tokens) or not 0 <= self.min_tokens <= self.max_tokens:
            raise ValueError(f"min_tokens must be an integer in [0, max_tokens={self.max_tokens}], "
                             f"got {self.min_tokens!r}")
        if self.logprobs is not None and (not _is_int(self.logprobs) or not 0 <= self.logprobs <= 20):
            raise ValueError(f"logprobs must be None or an integer in [0, 20], got {self.logprobs!r}")

    @staticmethod
    def _id_list(name: str, values: Any) -> list[int]:
        if isinstance(values, torch.Tensor):
            values = values.tolist()
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not all(
                _is_int(v) and v >= 0 for v in values):
            raise ValueError(f"{name} must be a list of token ids (ints >= 0), got {values!r}")
        return list(values)

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def make_generator(self) -> torch.Generator:
        """The request's random generator: seeded with ``seed``, or with a fresh random seed."""
        generator = torch.Generator()
        if self.seed is None:
            generator.seed()
        else:
            generator.manual_seed(self.seed)
        return generator

    def make_sampler(self, constraint: Any = None, generator: torch.Generator | None = None) -> Sampler:
        """The ``llmlab.sampling.Sampler`` of these parameters (what the engine uses for the request).

        Pass it to ``llmlab.model.generate(..., sampler=...)`` to get the same tokens offline.
        """
        if self.greedy:
            return Sampler(do_sample=False, repetition_penalty=self.repetition_penalty, constraint=constraint)
        return Sampler(
            do_sample=True,
            temperature=self.temperature,
            top_k=self.top_k,
            top_p=self.top_p if self.top_p < 1 else None,
            min_p=self.min_p,
            repetition_penalty=self.repetition_penalty,
            generator=generator if generator is not None else self.make_generator(),
            constraint=constraint,
        )
