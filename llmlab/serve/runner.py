"""The model runner: one forward pass of ``llmlab.model.Transformer`` over a step's segments.

It owns the paged KV memory of one model and knows nothing about requests: the engine (or the
speculative decoder, which runs a draft model too) passes ``Segment``s, each one a run of new
tokens of one sequence with its block table, and says which logits it wants back: the last
position's (to choose the next token), all of them (to verify draft tokens) or none (a prompt
chunk that does not reach the end of the prompt).

Like vLLM's model runner it does not call the model as a notebook would. For a model made of plain
layers (``nn.Linear`` projections, a dense MLP) it runs the same computation itself, layer by
layer (``_forward_plain``), because on a small model one step is mostly overhead, not arithmetic:

- W_Q, W_K, W_V stacked into one matrix, and W_gate, W_up into another (``DecodeWeights``, the
  layout ``llmlab.model.generate`` uses): two matrix products instead of five per layer;
- functions instead of module calls (no ``nn.Module.__call__`` per layer, no input checks that the
  engine already made when the request arrived);
- the LM head (the widest matrix of a small model) only on the rows whose logits are wanted: a
  prompt of 100 tokens needs the logits of its last position, not 100 rows of ``vocab_size``.

Any other model (LoRA, quantized layers, mixture of experts, ...) runs through its own
``forward``; both paths give the same tokens as ``generate`` (``tests/test_serve_engine.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from llmlab.ffn import MLP, SwiGLU
from llmlab.generation import DecodeWeights
from llmlab.model import Block, CausalSelfAttention, Transformer, apply_rope

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
        self._weights: DecodeWeights | None = None
        self._weights_key: tuple | None = None

    @property
    def vocab_size(self) -> int:
        return self.model.config.vocab_size

    @torch.inference_mode()
    def run(self, segments: Sequence[Segment], wants: Sequence[str | None]) -> list[torch.Tensor | None]:
        """Forward pass over ``segments``; per segment, logits ``[1, vocab]`` ("last"),
        ``[n_tokens, vocab]`` ("all") or None."""
        logits, spans = self.run_rows(segments, wants)
        return [None if span is None else logits[span[0]:span[1]] for span in spans]

    @torch.inference_mode()
    def run_rows(self, segments: Sequence[Segment], wants: Sequence[str | None]
                 ) -> tuple[torch.Tensor, list[tuple[int, int] | None]]:
        """Like ``run``, but the logits of every segment that wants some come in one tensor
        ``[rows, vocab]`` (in segment order), with each segment's ``(lo, hi)`` rows in it or None:
        the engine chooses all the greedy tokens of a step with one ``max`` over it."""
        if len(wants) != len(segments) or any(w not in WANTS for w in wants):
            raise ValueError(f"wants must give one of {WANTS} per segment")
        batch = PagedBatch(self.cache, segments)
        rows: list[int] = []
        spans: list[tuple[int, int] | None] = []
        for i, want in enumerate(wants):
            lo, hi = batch.offsets[i], batch.offsets[i + 1]
            if want is None:
                spans.append(None)
                continue
            first = len(rows)
            rows.extend([hi - 1] if want == "last" else range(lo, hi))
            spans.append((first, len(rows)))
        weights = self._plain_weights()
        if weights is None:
            logits = self.model(batch.input_ids, cache=batch)[0]  # [N, vocab]
            if len(rows) < batch.n_tokens:
                logits = logits[torch.tensor(rows, dtype=torch.long, device=logits.device)]
            return logits, spans
        return self._forward_plain(batch, rows, weights), spans

    def copy_blocks(self, copies: Sequence[tuple[int, int]]) -> None:
        for src, dst in copies:
            self.cache.copy_block(src, dst)

    # -- the plain-layer forward pass --------------------------------------------------------------

    def _plain_weights(self) -> DecodeWeights | None:
        """The stacked matrices, or None if the model is not made of plain layers.

        Rebuilt whenever a parameter changed in place (``_version`` counts in-place writes: an
        optimizer step, ``load_state_dict``) or a parameter or layer was replaced (LoRA, a quantized
        layer), so they are never stale. The check is a few dict lookups: walking the modules with
        ``model.parameters()`` at every step cost as much as a layer.
        """
        model = self.model
        if model.training:  # dropout on: only the model's own forward knows where
            return None
        if self._weights_key is not None:
            slots, params, versions = self._weights_key
            if all(d.get(name) is obj for d, name, obj in slots) and [p._version for p in params] == versions:
                return self._weights
        slots, params = [], []
        for module in model.modules():
            slots.extend((module._modules, name, child) for name, child in module._modules.items())
            slots.extend((module._parameters, name, p) for name, p in module._parameters.items())
            params.extend(p for p in module._parameters.values() if p is not None)
        self._weights = DecodeWeights.for_model(model) if _is_plain(model) else None
        self._weights_key = (slots, params, [p._version for p in params])
        return self._weights

    def _forward_plain(self, batch: PagedBatch, rows: list[int], weights: DecodeWeights) -> torch.Tensor:
        """``model(batch.input_ids, cache=batch)`` for ``rows`` of the step only, computed as in
        ``llmlab.transformer`` (same operations, in the same order) with ``weights``' matrices."""
        model, config = self.model, self.model.config
        n_heads, n_kv, d = config.n_heads, config.n_kv_heads, config.head_dim
        n = batch.n_tokens
        x = F.embedding(batch.input_ids, model.tok_emb.weight)  # [1, N, d_model]
        if model.pos_emb is not None:
            x = x + model.pos_emb(batch.positions)
        rope = model.rope(batch.positions) if model.rope is not None else None
        for layer, block in enumerate(model.blocks):
            attn = block.attn
            h = block.attn_norm.forward(x)
            qkv = F.linear(h, *weights.qkv[layer]).view(1, n, n_heads + 2 * n_kv, d).transpose(1, 2)
            qk, v = qkv.split([n_heads + n_kv, n_kv], dim=1)
            if attn.q_norm is not None:  # Qwen3: q and k have their own per-head norms before RoPE
                q, k = qk.split([n_heads, n_kv], dim=1)
                qk = torch.cat([attn.q_norm.forward(q), attn.k_norm.forward(k)], dim=1)
            if rope is not None:
                qk = apply_rope(qk, *rope)  # q and k rotated together: one call instead of two
            q, k = qk.split([n_heads, n_kv], dim=1)
            out = batch.attend(layer, q, k, v).transpose(1, 2).reshape(1, n, n_heads * d)
            x = x + F.linear(out, attn.o_proj.weight, attn.o_proj.bias)
            h = block.mlp_norm.forward(x)
            mlp = block.mlp
            if type(mlp) is SwiGLU:
                gate, up = F.linear(h, *weights.mlp_in[layer]).chunk(2, dim=-1)
                h = F.silu(gate) * up
            else:
                h = F.gelu(F.linear(h, *weights.mlp_in[layer]), approximate=mlp.approximate)
            x = x + F.linear(h, mlp.down.weight, mlp.down.bias)
        x = x[0]
        if len(rows) < n:  # only the wanted rows go through the final norm and the LM head
            x = x.index_select(0, torch.tensor(rows, dtype=torch.long, device=x.device))
        return F.linear(model.final_norm.forward(x), weights.lm_head)


def _is_plain(model: Transformer) -> bool:
    """The course's own classes with every projection a plain ``nn.Linear`` and every MLP dense:
    ``_forward_plain`` computes what ``model.forward`` would (anything else goes through it)."""
    if type(model).forward is not Transformer.forward or type(model.lm_head) is not nn.Linear:
        return False
    for block in model.blocks:
        attn, mlp = block.attn, block.mlp
        if type(block) is not Block or type(attn) is not CausalSelfAttention:
            return False
        if any(type(m) is not nn.Linear for m in (attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj)):
            return False
        if type(mlp) not in (SwiGLU, MLP) or any(type(m) is not nn.Linear for m in mlp.children()):
            return False
    return True
