"""What a request does to its logits before the sampler's warpers: bias, penalties, min_tokens, grammar.

The OpenAI API has three knobs that ``llmlab.sampling.Sampler`` does not (HF ``generate`` has none of
them either), and the JSON schema of structured output. All four look at the request's own tokens,
so they live in one logits processor per request, ``RequestProcessor``, which the sampler calls in
its ``constraint`` slot: after the repetition penalty, before temperature / top-k / top-p.

- ``logit_bias``: ``{token_id: bias}`` added to the logits (``-100`` bans a token, ``+100`` all but forces it).
- ``presence_penalty`` and ``frequency_penalty`` (OpenAI's definition, as in vLLM): with ``c[j]`` the
  number of times token ``j`` appears in the *output* so far,
  ``logits[j] -= frequency_penalty * c[j] + presence_penalty * (c[j] > 0)``.
- ``min_tokens``: the stop tokens are banned until the output has that many tokens.
- the grammar (``llmlab.serve.grammar``): what cannot be completed into the schema is banned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

__all__ = ["RequestProcessor", "apply_penalties"]


def apply_penalties(scores: torch.Tensor, output_ids: torch.Tensor, presence: float, frequency: float) -> torch.Tensor:
    """``scores [1, V]`` minus the OpenAI presence/frequency penalties of ``output_ids [n]`` (a new tensor)."""
    counts = torch.bincount(output_ids, minlength=scores.shape[-1])[: scores.shape[-1]].to(scores.dtype)
    return scores - (frequency * counts + presence * (counts > 0).to(scores.dtype))


class RequestProcessor:
    """One request's logits processor, HF-style: ``processor(input_ids [1, t], scores [1, V]) -> scores``.

    ``input_ids`` is the prompt (``prompt_length`` tokens) followed by the output so far.
    """

    def __init__(self, prompt_length: int, *, logit_bias: Mapping[int, float] | None = None,
                 presence_penalty: float = 0.0, frequency_penalty: float = 0.0, min_tokens: int = 0,
                 stop_token_ids: Sequence[int] = (), grammar: Any = None):
        self.prompt_length = prompt_length
        self.presence, self.frequency = float(presence_penalty), float(frequency_penalty)
        self.min_tokens = min_tokens
        self.stop_token_ids = torch.tensor(sorted(set(stop_token_ids)), dtype=torch.long)
        self.grammar = grammar
        self._bias_ids = self._bias = None
        if logit_bias:
            self._bias_ids = torch.tensor([int(k) for k in logit_bias], dtype=torch.long)
            self._bias = torch.tensor([float(v) for v in logit_bias.values()], dtype=torch.float32)

    @property
    def is_noop(self) -> bool:
        return (self._bias is None and self.presence == 0 and self.frequency == 0 and self.min_tokens == 0
                and self.grammar is None)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        output = input_ids.reshape(-1)[self.prompt_length:]
        if self._bias is not None:
            scores = scores.clone()
            scores[..., self._bias_ids] += self._bias.to(scores.dtype)
        if self.presence or self.frequency:
            scores = apply_penalties(scores, output, self.presence, self.frequency)
        if len(output) < self.min_tokens and len(self.stop_token_ids):
            scores = scores.index_fill(-1, self.stop_token_ids, float("-inf"))
        if self.grammar is not None:
            scores = self.grammar(input_ids, scores)
        return scores
