"""``generate``: the decoding loop (prefill the prompt, then one token per step through the KV cache).

The sampler chooses each token (greedy by default; ``llmlab.sampling.Sampler`` for the rest); stop tokens and
stop sequences end a row; ``DecodeWeights`` lays the input-side matrices out for one token at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn

from llmlab.arguments import check_int
from llmlab.ffn import MLP, SwiGLU
from llmlab.kv_cache import KVCache, StaticKVCache

if TYPE_CHECKING:
    from llmlab.transformer import Transformer


# ----------------------------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------------------------

SamplerFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (logits, input_ids) -> next ids


def _greedy(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    return logits.argmax(dim=-1)  # ties go to the lowest token id


def _make_sampler(sampling_kwargs: dict) -> SamplerFn:
    try:
        from llmlab.sampling import Sampler as SamplingPolicy  # lazy: sampling.py builds on this module
    except ImportError as exc:
        raise ImportError(
            f"sampling options {sorted(sampling_kwargs)} need llmlab.sampling.Sampler, which could not be imported; "
            "pass sampler=... yourself or drop the options for greedy decoding"
        ) from exc
    return SamplingPolicy(**sampling_kwargs)


def _as_id_list(name: str, value) -> list[int]:
    values = [value] if isinstance(value, int) else value
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if not isinstance(values, Sequence) or not all(isinstance(t, int) and not isinstance(t, bool) for t in values):
        raise TypeError(f"{name} must be an int or a list of ints, got {value!r}")
    return list(values)


def gemv_layout(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` with the same shape and values, stored with its longer side contiguous in memory.

    For one new token ``F.linear`` is a matrix-vector product that reads every weight once, so its
    speed is how fast the weights stream from memory. MKL streams a wide ``[out, in]`` matrix
    (out > in) 2-3x faster when its columns are contiguous (``w.t().contiguous().t()``), and a tall
    one (W_O, W_down) faster as it is. Measured on the course machine (one thread, weights not in
    cache): stacked gate/up 1376x256 in about 35 us instead of 60-150 us; 256x688 in 21 us instead of 35.
    """
    if weight.shape[0] > weight.shape[1]:
        return weight.t().contiguous().t()
    return weight


def _stacked(linears: Sequence[nn.Module]) -> tuple[torch.Tensor, torch.Tensor | None] | None:
    """One ``(weight, bias)`` for several ``nn.Linear`` fed the same input (outputs side by side);
    None if one of them is not a plain ``nn.Linear`` (an adapter such as LoRA must run as it is)."""
    if not all(type(m) is nn.Linear for m in linears):
        return None
    weight = gemv_layout(torch.cat([m.weight for m in linears]))
    bias = torch.cat([m.bias for m in linears]) if linears[0].bias is not None else None
    return weight, bias


@dataclass
class DecodeWeights:
    """The model's input-side matrices rearranged for generation (same values), built by ``generate``.

    - ``qkv[layer]``: W_Q, W_K and W_V stacked into one matrix: one product instead of three.
    - ``mlp_in[layer]``: W_gate and W_up stacked (SwiGLU), or W_up alone (GELU MLP).
    - ``lm_head``: the LM head's matrix.

    Each in ``gemv_layout``. An entry is None where a layer is not a plain ``nn.Linear`` (LoRA, a
    quantized layer) or has no such matrix (a mixture of experts): that layer runs as it is.
    ``generate`` builds this at the start of each call, so it can never be stale, and passes it to
    the model through its ``StaticKVCache``.
    """

    qkv: list[tuple[torch.Tensor, torch.Tensor | None] | None]
    mlp_in: list[tuple[torch.Tensor, torch.Tensor | None] | None]
    lm_head: torch.Tensor | None

    @classmethod
    def for_model(cls, model: Transformer) -> DecodeWeights:
        qkv, mlp_in = [], []
        for block in model.blocks:
            attn, mlp = block.attn, block.mlp
            qkv.append(_stacked([attn.q_proj, attn.k_proj, attn.v_proj]))
            if type(mlp) is SwiGLU:
                mlp_in.append(_stacked([mlp.gate, mlp.up]))
            elif type(mlp) is MLP:
                mlp_in.append(_stacked([mlp.up]))
            else:  # e.g. llmlab.moe.SparseMoE: each token picks its own experts
                mlp_in.append(None)
        plain_head = type(model.lm_head) is nn.Linear
        return cls(qkv, mlp_in, gemv_layout(model.lm_head.weight) if plain_head else None)


def _generation_cache(model: Transformer, batch: int, max_len: int):
    """A ``StaticKVCache`` carrying ``DecodeWeights``, unless the model brings its own kind of cache
    through ``new_cache`` (``llmlab.quant.use_quantized_kv_cache``): that one is used as it is."""
    own = model.new_cache()
    if type(own) is not KVCache:  # the Transformer's own new_cache() gives a plain, empty KVCache
        return own
    cache = StaticKVCache.for_model(model, batch, max_len=max_len)
    cache.decode_weights = DecodeWeights.for_model(model)
    return cache


def generate(
    model: Transformer,
    input_ids: torch.Tensor,
    max_new_tokens: int,
    *,
    use_cache: bool = True,
    sampler: SamplerFn | None = None,
    eos_token_id: int | Sequence[int] | None = None,
    stop_sequences: Sequence[Sequence[int]] | None = None,
    on_token: Callable[[torch.Tensor], None] | None = None,
    pad_token_id: int | None = None,
    **sampling_kwargs,
) -> torch.Tensor:
    """Append up to ``max_new_tokens`` tokens to ``input_ids`` (``[batch, t]`` or ``[t]``) and return the whole sequence.

    - ``sampler(logits [batch, vocab], input_ids [batch, t]) -> next ids [batch]`` chooses each token;
      ``input_ids`` is everything so far (prompt + generated). Without a sampler and without options
      the choice is greedy (argmax). Options such as ``temperature=0.8, top_k=50, top_p=0.9,
      do_sample=True, generator=g`` build ``llmlab.sampling.Sampler(**options)``.
    - ``eos_token_id`` (one id or several) and ``stop_sequences`` (lists of ids that the generated
      tail may end with) stop a row; the stop tokens are kept in the output. Rows that stopped
      while others continue are filled with ``pad_token_id`` (default: the first ``eos_token_id``, else 0).
    - ``on_token(next_ids)`` is called after each step with the ``[batch]`` tensor of new ids (streaming).
    - ``use_cache=False`` recomputes the whole sequence at every step: same tokens, more work.

    Call ``model.eval()`` first if the model has dropout.
    """
    # Inference mode: no autograd bookkeeping at all (faster than no_grad); the result is cloned
    # outside it, so it is an ordinary tensor that training code can use.
    with torch.inference_mode():
        out = _generate(model, input_ids, max_new_tokens, use_cache=use_cache, sampler=sampler,
                        eos_token_id=eos_token_id, stop_sequences=stop_sequences, on_token=on_token,
                        pad_token_id=pad_token_id, **sampling_kwargs)
    return out.clone()


def _generate(model, input_ids, max_new_tokens, *, use_cache, sampler, eos_token_id, stop_sequences, on_token,
              pad_token_id, **sampling_kwargs) -> torch.Tensor:
    if not (isinstance(model, nn.Module) and hasattr(model, "blocks") and hasattr(model, "new_cache")):
        raise TypeError(f"model must be an llmlab Transformer (convert HF models with from_hf), got {type(model).__name__}")
    if not isinstance(input_ids, torch.Tensor):
        raise TypeError(f"input_ids must be a torch.Tensor, got {type(input_ids).__name__}")
    single = input_ids.dim() == 1
    ids = input_ids.unsqueeze(0) if single else input_ids
    if ids.dim() != 2 or ids.shape[1] == 0:
        raise ValueError(f"input_ids must have shape [batch, t] or [t] with t >= 1, got {tuple(input_ids.shape)}")
    if ids.dtype.is_floating_point or ids.dtype == torch.bool:
        raise TypeError(f"input_ids must hold integer token ids, got dtype {ids.dtype}")
    ids = ids.long()
    check_int("max_new_tokens", max_new_tokens, minimum=0)
    max_len = model.config.max_seq_len
    if ids.shape[1] + max_new_tokens > max_len:
        raise ValueError(
            f"prompt ({ids.shape[1]} tokens) + max_new_tokens ({max_new_tokens}) exceeds max_seq_len={max_len}"
        )
    if sampler is not None and sampling_kwargs:
        raise ValueError(f"pass either sampler or sampling options, not both (got options {sorted(sampling_kwargs)})")
    if sampler is None:
        sampler = _make_sampler(sampling_kwargs) if sampling_kwargs else _greedy
    if not callable(sampler):
        raise TypeError(f"sampler must be callable(logits, input_ids) -> next ids, got {type(sampler).__name__}")
    eos_ids = _as_id_list("eos_token_id", eos_token_id) if eos_token_id is not None else []
    stops = [_as_id_list("stop_sequences item", s) for s in (stop_sequences or [])]
    if any(len(s) == 0 for s in stops):
        raise ValueError("stop_sequences must not contain an empty sequence")
    if pad_token_id is None:
        pad_token_id = eos_ids[0] if eos_ids else 0
    check_int("pad_token_id", pad_token_id, minimum=0)
    if pad_token_id >= model.config.vocab_size:
        raise ValueError(f"pad_token_id must be < vocab_size={model.config.vocab_size}, got {pad_token_id}")

    batch, prompt_len = ids.shape
    # Everything lives in buffers allocated once: the tokens (the sampler sees a view of those so far)
    # and, with use_cache, the keys and values (StaticKVCache: no torch.cat per step).
    tokens = torch.empty((batch, prompt_len + max_new_tokens), dtype=torch.long, device=ids.device)
    tokens[:, :prompt_len] = ids
    length = prompt_len
    cache = _generation_cache(model, batch, prompt_len + max_new_tokens) if use_cache else None
    watch_stops = bool(eos_ids or stops)
    finished = torch.zeros(batch, dtype=torch.bool, device=ids.device)
    model_input = ids  # with a cache: first the whole prompt (prefill), then one token at a time
    for _ in range(max_new_tokens):
        # Only the last position predicts the next token: no logits for the rest of the prompt.
        logits = model(model_input, cache=cache, last_only=True)[:, -1, :]  # [batch, vocab]
        next_ids = sampler(logits, tokens[:, :length])
        if not isinstance(next_ids, torch.Tensor) or next_ids.shape != (batch,):
            got = tuple(next_ids.shape) if isinstance(next_ids, torch.Tensor) else type(next_ids).__name__
            raise ValueError(f"sampler must return a tensor of shape [batch] = ({batch},), got {got}")
        if watch_stops:
            next_ids = torch.where(finished, torch.full_like(next_ids, pad_token_id), next_ids.long())
        tokens[:, length] = next_ids
        length += 1
        if on_token is not None:
            on_token(next_ids)

        if watch_stops:
            stopped = torch.zeros_like(finished)
            for eos in eos_ids:
                stopped |= next_ids == eos
            n_generated = length - prompt_len
            for stop in stops:
                if len(stop) <= n_generated:
                    tail = tokens[:, length - len(stop) : length]
                    stopped |= (tail == torch.tensor(stop, device=ids.device)).all(dim=1)
            finished |= stopped
            if bool(finished.all()):
                break
        model_input = tokens[:, length - 1 : length] if use_cache else tokens[:, :length]
    out = tokens[:, :length]
    return out[0] if single else out
