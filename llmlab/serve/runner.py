"""The model runner: one forward pass of ``llmlab.model.Transformer`` over a step's segments.

It owns the paged KV memory of one model and knows nothing about requests: the engine (or the
speculative decoder, which runs a draft model too) passes ``Segment``s, each one a run of new
tokens of one sequence with its block table, and says which logits it wants back: the last
position's (to choose the next token), all of them (to verify draft tokens) or none (a prompt
chunk that does not reach the end of the prompt).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from llmlab.model import Transformer

from .paged_attention import PagedBatch, PagedKVCache, Segment

__all__ = ["ModelRunner"]

WANTS = ("last", "all", None)


class ModelRunner:
    """``model`` plus its ``PagedKVCache`` of ``num_blocks`` blocks of ``block_size`` tokens."""

    def __init__(self, model: Transformer, num_blocks: int, block_size: int):
        if not isinstance(model, Transformer):
            raise TypeError(f"model must be an llmlab Transformer, got {type(model).__name__}")
        self.model = model.eval()  # dropout off: serving is inference
        self.cache = PagedKVCache.for_model(model, num_blocks, block_size)

    @property
    def vocab_size(self) -> int:
        return self.model.config.vocab_size

    @torch.inference_mode()
    def run(self, segments: Sequence[Segment], wants: Sequence[str | None]) -> list[torch.Tensor | None]:
        """Forward pass over ``segments``; per segment, logits ``[1, vocab]`` ("last"),
        ``[n_tokens, vocab]`` ("all") or None."""
        if len(wants) != len(segments) or any(w not in WANTS for w in wants):
            raise ValueError(f"wants must give one of {WANTS} per segment")
        batch = PagedBatch(self.cache, segments)
        logits = self.model(batch.input_ids, cache=batch)[0]  # [N, vocab]
        out: list[torch.Tensor | None] = []
        for i, want in enumerate(wants):
            lo, hi = batch.offsets[i], batch.offsets[i + 1]
            out.append(logits[hi - 1:hi] if want == "last" else logits[lo:hi] if want == "all" else None)
        return out

    def copy_blocks(self, copies: Sequence[tuple[int, int]]) -> None:
        for src, dst in copies:
            self.cache.copy_block(src, dst)
