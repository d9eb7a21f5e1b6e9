"""Paged KV memory and attention that reads it through block tables.

``PagedKVCache`` is the memory: per layer, keys and values shaped
``[n_kv_heads, num_blocks, block_size, head_dim]``. Slot ``s = block * block_size + offset`` holds one
token (of every K/V head); a sequence's tokens are scattered over whatever blocks its block table lists
(``llmlab.serve.blocks``). Nothing is reserved for tokens that do not exist yet. The K/V head comes
first so that gathering blocks through a table gives each head's keys in one contiguous run, the
layout attention reads (vLLM also keeps heads outside the block).

``PagedBatch`` is one engine step seen by the model: the new tokens of several sequences,
concatenated into a single row ``[1, N]`` (a prompt chunk of 100 tokens next to 31 single decode
tokens: *prefill and decode in the same step*). ``llmlab.model.Transformer`` runs every linear layer
on all N tokens at once, which is where batching pays; only attention needs to know which tokens
belong to which sequence. The model hands attention over to the batch (``PagedBatch.attend``), which

1. writes the new keys and values into their slots (``slot_mapping``), then
2. for each sequence, gathers its keys and values back through its block table and attends over
   them, with the causal mask shifted by the tokens it already had.

``paged_attention_reference`` does step 2 for one sequence, the way one would write it on paper.
``PagedBatch`` computes the same thing faster: every single-token (decode) sequence of the step in
one padded batch with a length mask, each multi-token sequence (a prefill chunk, a speculative
verification) in its own call. vLLM does this gather inside a CUDA kernel; here it is a torch index.

The decode batch uses one more trick, from grouped-query attention: the ``n_heads / n_kv_heads``
query heads that share a K/V head are, for that head, just several queries over the same keys. So
attention runs as ``[n_kv_heads, batch, n_rep, head_dim]`` queries against
``[n_kv_heads, batch, context, head_dim]`` keys: one kernel call over fewer, larger problems, with no
copy of the gathered keys (measured on one CPU thread, es-chat shapes: 1.5x faster at 64 sequences,
3x at 4).

And one more, because a torch index is a copy: gathering every decode sequence's whole context at
every step, in every layer, copied the KV cache once per step (at 64 sequences, as much time as all
the matrix products). A ``DecodeView`` keeps that gathered copy from one step to the next: a
contiguous ``[n_kv_heads, rows, width, head_dim]`` tensor per layer with one row per decoding
sequence (``Segment.seq_id`` names it across steps). A step then writes its one new token per row
into the view (besides the paged cache, which stays the truth) and gathers only the rows it cannot
trust: a sequence that just joined, was recomputed, or whose block table changed. A sequence that
leaves frees its row for the next one, so the others keep theirs.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from llmlab.model import Transformer, causal_mask, grouped_sdpa, repeat_kv

__all__ = ["DecodeView", "PagedBatch", "PagedKVCache", "Segment", "paged_attention_reference"]


class PagedKVCache:
    """The KV memory of an engine: ``num_blocks`` blocks of ``block_size`` slots, for every layer."""

    def __init__(self, n_layers: int, num_blocks: int, block_size: int, n_kv_heads: int, head_dim: int, *,
                 dtype: torch.dtype = torch.float32, device=None):
        shape = (n_kv_heads, num_blocks, block_size, head_dim)
        self.keys = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(n_layers)]
        self.values = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(n_layers)]
        self.num_blocks, self.block_size = num_blocks, block_size
        self.n_kv_heads, self.head_dim = n_kv_heads, head_dim
        self.decode_view = DecodeView(self)

    @classmethod
    def for_model(cls, model: Transformer, num_blocks: int, block_size: int) -> PagedKVCache:
        config, weight = model.config, model.tok_emb.weight
        return cls(config.n_layers, num_blocks, block_size, config.n_kv_heads, config.head_dim,
                   dtype=weight.dtype, device=weight.device)

    @staticmethod
    def block_bytes(model: Transformer, block_size: int) -> int:
        """Bytes of one block: ``2 (K and V) * n_layers * block_size * n_kv_heads * head_dim * bytes``
        (vLLM's ``get_cache_block_size``)."""
        config = model.config
        element = model.tok_emb.weight.element_size()
        return 2 * config.n_layers * block_size * config.n_kv_heads * config.head_dim * element

    @property
    def n_layers(self) -> int:
        return len(self.keys)

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.keys + self.values)

    def write(self, layer: int, slots: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """Store ``k``, ``v`` (``[n_kv_heads, n_tokens, head_dim]``) in the given slots."""
        flat = (self.n_kv_heads, -1, self.head_dim)
        self.keys[layer].view(flat).index_copy_(1, slots, k)
        self.values[layer].view(flat).index_copy_(1, slots, v)

    def gather(self, layer: int, block_table: torch.Tensor, n_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of one sequence's first ``n_tokens`` tokens, ``[n_kv_heads, n_tokens, head_dim]``."""
        flat = (self.n_kv_heads, -1, self.head_dim)
        k = self.keys[layer].index_select(1, block_table).view(flat)[:, :n_tokens]  # blocks in table order
        v = self.values[layer].index_select(1, block_table).view(flat)[:, :n_tokens]
        return k, v

    def copy_block(self, src: int, dst: int) -> None:
        """Copy-on-write: block ``dst`` becomes a copy of block ``src`` in every layer."""
        for layer in range(self.n_layers):
            self.keys[layer][:, dst] = self.keys[layer][:, src]
            self.values[layer][:, dst] = self.values[layer][:, src]


class DecodeView:
    """The decode sequences' keys and values gathered into contiguous rows, kept between steps.

    Per layer ``keys[layer]``, ``values[layer]``: ``[n_kv_heads, rows, width * block_size, head_dim]``,
    row ``r`` holding the first ``lengths[r]`` tokens of sequence ``row_ids[r]`` (read through
    ``tables[r]``); ``width`` blocks is the longest decode sequence of the step. The paged cache
    stays the truth: a row is trusted only if, since the step that last wrote it, its sequence did
    nothing but decode through this view with the same blocks. Everything else (a new sequence, a
    prefill chunk, a recompute after preemption, a copy-on-write, a batch without ``seq_id``s, a
    step that failed half way) makes the row, or the whole view, gathered again.
    """

    def __init__(self, cache: PagedKVCache):
        self.cache = cache
        self.reset()

    def reset(self) -> None:
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self.row_ids: list[Hashable | None] = []  # None: a free row
        self.lengths: list[int] = []
        self.tables: list[list[int]] = []
        self.where: dict[Hashable, int] = {}
        self.width = 0
        self.positions: torch.Tensor | None = None  # arange(width * block_size), kept for the masks
        self.pending = False  # a step prepared the view and has not written every layer yet

    @property
    def n_rows(self) -> int:
        return len(self.row_ids)

    def drop(self, seq_id: Hashable) -> None:
        row = self.where.pop(seq_id, None)
        if row is not None:
            self.row_ids[row] = None

    def prepare(self, singles: Sequence[Segment], others: Sequence[Segment]) -> tuple[list[int], list[int]]:
        """Place this step's decode segments (``singles``) in rows; return (row of each, rows to gather).

        ``others``: the step's multi-token segments, whose sequences lose their row (their keys were
        written outside the view). A sequence keeps its row while it decodes; one that leaves frees
        it for the next newcomer. When the shape must change anyway (more rows, another width, too
        many free rows), the view is laid out again in the step's order: one copy of what it holds.
        """
        bs = self.cache.block_size
        if self.pending:  # the previous step did not finish writing: trust nothing
            self.reset()
        for seg in others:
            self.drop(seg.seq_id)
        present = {seg.seq_id for seg in singles}
        if len(present) != len(singles):
            raise ValueError("two decode segments of one step have the same seq_id")
        for seq_id in [s for s in self.where if s not in present]:
            self.drop(seq_id)
        old_rows, old_width = self.n_rows, self.width
        free = [r for r in reversed(range(old_rows)) if self.row_ids[r] is None]
        rows, stale = [], set()
        for seg in singles:
            start, table = seg.start, seg.block_table
            row = self.where.get(seg.seq_id)
            if row is not None:
                kept = self.tables[row]
                if self.lengths[row] != start or list(table[:len(kept)]) != kept:
                    stale.add(row)
            else:
                if free:
                    row = free.pop()
                else:
                    row = self.n_rows
                    self.row_ids.append(None)
                    self.lengths.append(0)
                    self.tables.append([])
                self.row_ids[row] = seg.seq_id
                self.where[seg.seq_id] = row
                stale.add(row)
            self.lengths[row] = start + 1
            self.tables[row] = list(table[:-(-(start + 1) // bs)])
            rows.append(row)
        for row in free:  # still free: one key of padding keeps their (unused) softmax finite
            self.lengths[row], self.tables[row] = 1, []
        width = max(len(self.tables[r]) for r in rows)
        if old_rows != self.n_rows or width != old_width or self.n_rows > len(singles) + max(2, len(singles) // 4):
            rows, stale = self._relayout(rows, stale, old_rows, old_width, width)
        self.pending = True
        return rows, sorted(stale)

    def _relayout(self, rows: list[int], stale: set[int], old_rows: int, old_width: int, width: int
                  ) -> tuple[list[int], set[int]]:
        """New tensors, one row per decode segment in the step's order; the trusted rows are copied over."""
        cache, bs = self.cache, self.cache.block_size
        shape = (cache.n_kv_heads, len(rows), width * bs, cache.head_dim)
        device, dtype = cache.keys[0].device, cache.keys[0].dtype
        keep = [(i, r) for i, r in enumerate(rows) if r < old_rows and r not in stale]
        slots = min(old_width, width) * bs
        if keep and slots:
            dst = torch.tensor([i for i, _ in keep], dtype=torch.long, device=device)
            src = torch.tensor([r for _, r in keep], dtype=torch.long, device=device)
        for tensors in (self.keys, self.values):
            for layer in range(cache.n_layers):
                # zeros, not empty: masked keys still go through the product, and must not be NaN
                new = torch.zeros(shape, dtype=dtype, device=device)
                if keep and slots:
                    new[:, :, :slots].index_copy_(1, dst, tensors[layer][:, :, :slots].index_select(1, src))
                if len(tensors) == cache.n_layers:
                    tensors[layer] = new
                else:
                    tensors.append(new)
        self.row_ids = [self.row_ids[r] for r in rows]
        self.lengths = [self.lengths[r] for r in rows]
        self.tables = [self.tables[r] for r in rows]
        self.where = {seq_id: i for i, seq_id in enumerate(self.row_ids)}
        self.width = width
        return list(range(len(rows))), {i for i, r in enumerate(rows) if r >= old_rows or r in stale}

def paged_attention_reference(q: torch.Tensor, cache: PagedKVCache, layer: int, block_table: Sequence[int],
                              n_context: int) -> torch.Tensor:
    """Attention of one sequence, read through its block table: the readable version.

    ``q``: ``[n_heads, n_new, head_dim]``, the queries of the last ``n_new`` of the sequence's
    ``n_context`` tokens (whose keys and values are already in ``cache``). Returns
    ``[n_heads, n_new, head_dim]``.
    """
    n_heads, n_new, head_dim = q.shape
    table = torch.tensor(list(block_table), dtype=torch.long, device=q.device)
    k, v = cache.gather(layer, table, n_context)  # [n_kv_heads, n_context, head_dim]
    n_rep = n_heads // k.shape[0]
    k, v = repeat_kv(k[None], n_rep)[0], repeat_kv(v[None], n_rep)[0]  # each query head sees its K/V head
    scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)  # [n_heads, n_new, n_context]
    scores = scores.masked_fill(~causal_mask(n_new, n_context, device=q.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


@dataclass
class Segment:
    """The tokens of one sequence that go through the model in a step.

    ``token_ids`` are at positions ``start, start + 1, ...``; the ``start`` tokens before them are
    already in the cache, in the blocks of ``block_table`` (which also has room for the new ones).
    """

    token_ids: Sequence[int]
    start: int
    block_table: Sequence[int]
    seq_id: Hashable | None = None  # names the sequence across steps (lets ``DecodeView`` keep its K/V)

    @property
    def end(self) -> int:
        return self.start + len(self.token_ids)


class PagedBatch:
    """One step of several sequences, in the form ``Transformer.forward(input_ids, cache=...)`` accepts.

    ``input_ids`` is ``[1, N]`` (every segment's tokens, concatenated) and ``positions`` their
    positions in their own sequences. Built once per step; every layer calls ``attend``, so
    everything that does not depend on the layer (slots, padded block tables, masks) is made here,
    once.
    """

    def __init__(self, cache: PagedKVCache, segments: Sequence[Segment]):
        if not segments:
            raise ValueError("a step needs at least one segment")
        self.cache = cache
        self.segments = list(segments)
        bs = cache.block_size
        device = cache.keys[0].device
        ids, positions, slots, offsets = [], [], [], [0]
        single, multi = [], []  # decode segments (one token) and the others
        for i, seg in enumerate(self.segments):
            n, start, table = len(seg.token_ids), seg.start, seg.block_table
            if n == 0:
                raise ValueError("every segment needs at least one token")
            if len(table) * bs < start + n:
                raise ValueError(f"block table of {len(table)} blocks cannot hold {start + n} tokens")
            ids.extend(seg.token_ids)
            positions.extend(range(start, start + n))
            slots.extend(table[p // bs] * bs + p % bs for p in range(start, start + n))
            (single if n == 1 else multi).append(i)
            offsets.append(offsets[-1] + n)
        self.input_ids = torch.tensor([ids], dtype=torch.long, device=device)
        self.positions = torch.tensor(positions, dtype=torch.long, device=device)
        self.slot_mapping = torch.tensor(slots, dtype=torch.long, device=device)
        self.offsets = offsets  # segment i is row[offsets[i]:offsets[i + 1]]
        self._multi = [
            (offsets[i], len(seg.token_ids), torch.tensor(list(seg.block_table), dtype=torch.long, device=device),
             seg.end, causal_mask(len(seg.token_ids), seg.end, device=device))
            for i in multi for seg in (self.segments[i],)
        ]
        self._single_tables = None
        self._view = None
        self._all_single = not multi
        tracked = all(seg.seq_id is not None for seg in self.segments)
        if not tracked and cache.decode_view.n_rows:
            cache.decode_view.reset()  # keys written behind the view's back: it cannot be trusted
        if single and tracked:
            self._n_single = len(single)
            self._single_rows = torch.tensor([offsets[i] for i in single], dtype=torch.long, device=device)
            self._prepare_view([self.segments[i] for i in single], [self.segments[i] for i in multi])
        elif tracked:
            for i in multi:  # their keys are written outside the view
                cache.decode_view.drop(self.segments[i].seq_id)
        if single and not tracked:
            # Decode tokens: one padded batch. Each table is cut to the blocks that hold tokens (a
            # speculative lookahead may have reserved more) and padded with block 0 to the longest;
            # the padding is masked out by length. One flat list of blocks: one index_select per layer.
            lengths = [self.segments[i].end for i in single]
            width = -(-max(lengths) // bs)
            flat: list[int] = []
            for i in single:
                table = list(self.segments[i].block_table[:width])
                flat.extend(table + [0] * (width - len(table)))
            self._n_single = len(single)
            self._single_rows = torch.tensor([offsets[i] for i in single], dtype=torch.long, device=device)
            self._single_tables = torch.tensor(flat, dtype=torch.long, device=device)  # [B * width]
            keys = torch.arange(width * bs, device=device)
            length = torch.tensor(lengths, device=device)
            self._single_mask = (keys[None, :] < length[:, None])[None, :, None, :]  # [1, B, 1, width * bs]

    def _prepare_view(self, singles: list[Segment], others: list[Segment]) -> None:
        """Decode through the cache's ``DecodeView``: indices for this step's writes and gathers."""
        cache, bs = self.cache, self.cache.block_size
        device = cache.keys[0].device
        view = self._view = cache.decode_view
        rows, stale = view.prepare(singles, others)
        slots_per_row = view.width * bs
        self._view_identity = rows == list(range(view.n_rows))
        self._view_rows = None if self._view_identity else torch.tensor(rows, dtype=torch.long, device=device)
        self._view_slots = torch.tensor([r * slots_per_row + seg.start for r, seg in zip(rows, singles)],
                                        dtype=torch.long, device=device)
        self._stale = None
        if stale:
            dst = [r * view.width + j for r in stale for j in range(len(view.tables[r]))]
            src = [b for r in stale for b in view.tables[r]]
            self._stale = (torch.tensor(dst, dtype=torch.long, device=device),
                           torch.tensor(src, dtype=torch.long, device=device))
        if view.positions is None or view.positions.numel() != slots_per_row:
            view.positions = torch.arange(slots_per_row, device=device)
        length = torch.tensor(view.lengths, device=device)
        hidden = (view.positions[None, :] >= length[:, None])[None, :, None, :]  # [1, rows, 1, width * bs]
        # As an additive mask (0 or -inf): what SDPA turns a boolean one into, in every layer; here once.
        self._view_mask = torch.zeros(hidden.shape, dtype=cache.keys[0].dtype, device=device).masked_fill_(
            hidden, float("-inf"))

    def _attend_view(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Decode attention over the ``DecodeView``: ``[n_heads, B, d]`` for the step's decode tokens."""
        cache, view = self.cache, self._view
        n_heads, d = q.shape[1], q.shape[-1]
        n_kv, bs, n_rows = cache.n_kv_heads, cache.block_size, view.n_rows
        keys, values = view.keys[layer], view.values[layer]
        if self._stale is not None:  # rows that cannot be trusted: gathered from the paged cache (new token included)
            dst, src = self._stale
            blocks = (n_kv, -1, bs, d)
            keys.view(blocks).index_copy_(1, dst, cache.keys[layer].index_select(1, src))
            values.view(blocks).index_copy_(1, dst, cache.values[layer].index_select(1, src))
        new_k, new_v = (k[0], v[0]) if self._all_single else (k[0].index_select(1, self._single_rows),
                                                              v[0].index_select(1, self._single_rows))
        flat = (n_kv, -1, d)
        keys.view(flat).index_copy_(1, self._view_slots, new_k)
        values.view(flat).index_copy_(1, self._view_slots, new_v)
        qs = q[0] if self._all_single else q[0].index_select(1, self._single_rows)  # [n_heads, B, d]
        if not self._view_identity:  # the rows are in the view's order; free rows get a zero query
            qs = qs.new_zeros(n_heads, n_rows, d).index_copy_(1, self._view_rows, qs)
        qs = qs.view(n_kv, n_heads // n_kv, n_rows, d).transpose(1, 2)  # [n_kv, rows, n_rep, d]
        o = F.scaled_dot_product_attention(qs, keys, values, attn_mask=self._view_mask, scale=1.0 / math.sqrt(d))
        o = o.transpose(1, 2).reshape(n_heads, n_rows, d)
        if not self._view_identity:
            o = o.index_select(1, self._view_rows)
        if layer == cache.n_layers - 1:
            view.pending = False
        return o

    @property
    def n_layers(self) -> int:
        return self.cache.n_layers

    @property
    def n_tokens(self) -> int:
        return self.offsets[-1]

    def attend(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Store the new ``k``, ``v`` (``[1, n_kv_heads, N, d]``), then attend for ``q`` (``[1, n_heads, N, d]``)."""
        cache = self.cache
        cache.write(layer, self.slot_mapping, k[0], v[0])
        n_heads, d = q.shape[1], q.shape[-1]
        n_kv = cache.n_kv_heads
        scale = 1.0 / math.sqrt(d)
        if self._view is not None:
            o = self._attend_view(layer, q, k, v)
            if self._all_single:
                return o.unsqueeze(0)
            out = torch.empty_like(q)
            out[0].index_copy_(1, self._single_rows, o)
        elif self._single_tables is not None:
            batch = self._n_single
            qs = q[0] if self._all_single else q[0].index_select(1, self._single_rows)  # [n_heads, B, d]
            # Query head h reads K/V head h // n_rep: split the heads into [n_kv, n_rep] and let the
            # n_rep heads of a group be n_rep queries of one sequence over its K/V head.
            qs = qs.view(n_kv, n_heads // n_kv, batch, d).transpose(1, 2)  # [n_kv, B, n_rep, d]
            ks = cache.keys[layer].index_select(1, self._single_tables).view(n_kv, batch, -1, d)  # [n_kv, B, ctx, d]
            vs = cache.values[layer].index_select(1, self._single_tables).view(n_kv, batch, -1, d)
            o = F.scaled_dot_product_attention(qs, ks, vs, attn_mask=self._single_mask, scale=scale)
            o = o.transpose(1, 2).reshape(n_heads, batch, d)  # back to [n_heads, B, d]
            if self._all_single:
                return o.unsqueeze(0)
            out = torch.empty_like(q)
            out[0].index_copy_(1, self._single_rows, o)
        else:
            out = torch.empty_like(q)
        for row, n_new, table, n_context, mask in self._multi:
            kk, vv = cache.gather(layer, table, n_context)  # [n_kv, n_context, d]
            o = grouped_sdpa(q[:, :, row:row + n_new], kk[None], vv[None], attn_mask=mask, scale=scale)
            out[:, :, row:row + n_new] = o
        return out
