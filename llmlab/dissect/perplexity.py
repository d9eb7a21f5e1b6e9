"""How surprised a model is by a given answer after a given prompt (the measure a wrong chat template moves)."""

from __future__ import annotations

import torch


def _ids(ids, name: str) -> list[int]:
    values = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    if not values:
        raise ValueError(f"{name} must hold at least one token id")
    return [int(t) for t in values]


def answer_perplexity(model, prompt_ids, answer_ids) -> float:
    """Perplexity of ``answer_ids`` after ``prompt_ids``: ``exp(mean NLL)`` over the answer tokens only.

    ``model(ids [1, t])`` returns logits ``[1, t, vocab]``; the logits at position ``i`` predict token
    ``i + 1``, so the answer's first token is scored by the prompt's last position. The prompt tokens
    are context, never scored.
    """
    prompt, answer = _ids(prompt_ids, "prompt_ids"), _ids(answer_ids, "answer_ids")
    ids = torch.tensor([prompt + answer])
    with torch.no_grad():
        logits = model(ids)[0].double()
    log_probs = torch.log_softmax(logits[len(prompt) - 1:-1], dim=-1)
    nll = -log_probs[torch.arange(len(answer)), torch.tensor(answer)]
    return float(torch.exp(nll.mean()))
