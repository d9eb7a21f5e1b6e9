"""llmlab.serve.paged_attention and the model-side pieces the engine relies on (StaticKVCache, grouped_sdpa)."""

import pytest
import torch

from llmlab.model import ModelConfig, StaticKVCache, Transformer, generate, grouped_sdpa, repeat_kv
from llmlab.serve.paged_attention import PagedBatch, PagedKVCache, Segment, paged_attention_reference


def _model(style="llama", **overrides):
    torch.manual_seed(0)
    maker = ModelConfig.llama_style if style == "llama" else ModelConfig.gpt2_style
    config = maker(vocab_size=97, n_layers=2, d_model=32, n_heads=4, max_seq_len=64, **overrides)
    return Transformer(config).eval()


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_grouped_sdpa_equals_attention_with_repeated_kv_heads(n_kv_heads):
    torch.manual_seed(1)
    q = torch.randn(2, 4, 5, 8)
    k, v = torch.randn(2, n_kv_heads, 7, 8), torch.randn(2, n_kv_heads, 7, 8)
    mask = torch.ones(5, 7, dtype=torch.bool).tril(diagonal=2)
    n_rep = 4 // n_kv_heads
    expected = torch.nn.functional.scaled_dot_product_attention(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep),
                                                                attn_mask=mask)
    torch.testing.assert_close(grouped_sdpa(q, k, v, attn_mask=mask), expected, atol=1e-6, rtol=1e-5)


def test_static_kv_cache_appends_in_place_and_crops():
    cache = StaticKVCache(n_layers=1, batch=1, n_kv_heads=2, head_dim=4, max_len=6)
    k1, v1 = torch.randn(1, 2, 4, 4), torch.randn(1, 2, 4, 4)
    keys, values = cache.update(0, k1, v1)
    assert keys.shape == (1, 2, 4, 4) and cache.seq_len == 4
    k2, v2 = torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)
    keys, values = cache.update(0, k2, v2)
    torch.testing.assert_close(keys, torch.cat((k1, k2), dim=2), atol=0, rtol=0)
    torch.testing.assert_close(values, torch.cat((v1, v2), dim=2), atol=0, rtol=0)
    assert cache.nbytes == 2 * 2 * 6 * 4 * 4 and cache.used_nbytes == 2 * 2 * 5 * 4 * 4
    cache.crop(2)
    assert cache.seq_len == 2
    with pytest.raises(ValueError, match="holds 6 tokens"):
        cache.update(0, torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4))


@pytest.mark.parametrize("style", ["llama", "gpt2"])
def test_generate_with_the_static_cache_equals_recomputing_everything(style):
    model = _model(style)
    prompt = torch.randint(0, 97, (2, 9), generator=torch.Generator().manual_seed(3))
    with_cache = generate(model, prompt, 20)
    without = generate(model, prompt, 20, use_cache=False)
    assert torch.equal(with_cache, without)


def _fill(cache, model, tokens, table):
    """Run ``tokens`` through the model as one prefill segment, storing K/V in ``table``'s blocks."""
    batch = PagedBatch(cache, [Segment(tokens, 0, table)])
    with torch.no_grad():
        return model(batch.input_ids, cache=batch)[0]


def test_paged_attention_reads_a_sequence_through_a_scattered_block_table():
    model = _model(n_kv_heads=2)
    cache = PagedKVCache.for_model(model, num_blocks=8, block_size=4)
    tokens = list(range(3, 13))  # 10 tokens in blocks 5, 1, 6 (not in order)
    table = [5, 1, 6]
    _fill(cache, model, tokens, table)
    # keys gathered through the table equal the keys of a plain forward pass
    keys, _ = cache.gather(0, torch.tensor(table), 10)
    plain = model.new_cache()
    with torch.no_grad():
        model(torch.tensor([tokens]), cache=plain)
    torch.testing.assert_close(keys, plain.keys[0][0], atol=1e-6, rtol=1e-5)
    # the readable reference and the batched path agree for the last 3 queries
    q = torch.randn(4, 3, model.config.head_dim)
    reference = paged_attention_reference(q, cache, 0, table, 10)
    scores = q @ repeat_kv(keys[None], 2)[0].transpose(-2, -1) / model.config.head_dim ** 0.5
    scores = scores.masked_fill(~torch.ones(3, 10, dtype=torch.bool).tril(diagonal=7), float("-inf"))
    torch.testing.assert_close(reference, torch.softmax(scores, -1) @ repeat_kv(plain.values[0], 2)[0],
                               atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("style", ["llama", "gpt2"])
def test_a_mixed_batch_of_prefill_chunks_and_decodes_gives_each_sequence_its_own_logits(style):
    """Three sequences in one step: a fresh prompt, a chunk after cached tokens, two single tokens."""
    model = _model(style, n_kv_heads=2 if style == "llama" else None)
    cache = PagedKVCache.for_model(model, num_blocks=16, block_size=4)
    g = torch.Generator().manual_seed(5)
    seqs = [torch.randint(0, 97, (n,), generator=g).tolist() for n in (11, 13, 6, 9)]
    tables = [[0, 1, 2], [3, 4, 5, 6], [7, 8], [9, 10, 11]]
    # sequences 1, 2 and 3 already have some tokens in the cache
    cached = {1: 7, 2: 5, 3: 8}
    for i, n in cached.items():
        _fill(cache, model, seqs[i][:n], tables[i])
    segments = [Segment(seqs[0], 0, tables[0])] + [Segment(seqs[i][n:], n, tables[i]) for i, n in cached.items()]
    batch = PagedBatch(cache, segments)
    with torch.no_grad():
        logits = model(batch.input_ids, cache=batch)[0]
        for i, seg in enumerate(segments):
            expected = model(torch.tensor([seqs[i]]))[0, seg.start:]
            got = logits[batch.offsets[i]:batch.offsets[i + 1]]
            torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


def test_paged_batch_checks_its_segments():
    model = _model()
    cache = PagedKVCache.for_model(model, num_blocks=4, block_size=4)
    with pytest.raises(ValueError, match="at least one segment"):
        PagedBatch(cache, [])
    with pytest.raises(ValueError, match="cannot hold"):
        PagedBatch(cache, [Segment([1, 2, 3, 4, 5], 0, [0])])
    with pytest.raises(ValueError, match="at least one token"):
        PagedBatch(cache, [Segment([], 0, [0])])


def test_block_bytes_is_the_vllm_formula():
    model = _model(n_kv_heads=2)
    c = model.config
    assert PagedKVCache.block_bytes(model, 16) == 2 * c.n_layers * 16 * c.n_kv_heads * c.head_dim * 4
    assert PagedKVCache.for_model(model, 3, 16).nbytes == 3 * PagedKVCache.block_bytes(model, 16)


def test_the_decode_view_gives_the_logits_of_the_gather_through_block_tables():
    """Sequences join, leave, grow past a block, get a new block table, are recomputed: at every step
    the batch that keeps its gathered keys (``seq_id``) gives the logits of the one that gathers them
    again, and a batch without ``seq_id`` empties the view."""
    model = _model(n_kv_heads=2)
    tracked = PagedKVCache.for_model(model, num_blocks=64, block_size=4)
    plain = PagedKVCache.for_model(model, num_blocks=64, block_size=4)
    g = torch.Generator().manual_seed(7)
    free = list(range(63, -1, -1))
    live = {}  # seq_id -> (tokens, block table, tokens in the cache)

    def new_sequence(seq_id, n):
        live[seq_id] = (torch.randint(0, 97, (n,), generator=g).tolist(), [], 0)

    def run(plan, use_ids=True):
        segments = []
        for seq_id, n_new in plan:
            tokens, table, done = live[seq_id]
            tokens = tokens + torch.randint(0, 97, (max(0, done + n_new - len(tokens)),), generator=g).tolist()
            while len(table) * 4 < done + n_new:
                table.append(free.pop())
            live[seq_id] = (tokens, table, done + n_new)
            segments.append((tokens[done:done + n_new], done, list(table), seq_id))
        outs = []
        for cache, ids in ((tracked, use_ids), (plain, False)):
            batch = PagedBatch(cache, [Segment(t, s, tb, seq_id=q if ids else None) for t, s, tb, q in segments])
            with torch.no_grad():
                outs.append(model(batch.input_ids, cache=batch)[0])
        torch.testing.assert_close(outs[0], outs[1], atol=1e-5, rtol=1e-4)
        return outs[0]

    for seq_id, n in (("a", 5), ("b", 3), ("c", 9)):
        new_sequence(seq_id, n)
    run([("a", 5), ("b", 3), ("c", 9)])
    for _ in range(6):  # plain decoding; "a" crosses into a new block
        run([("a", 1), ("b", 1), ("c", 1)])
    assert tracked.decode_view.n_rows == 3
    del live["b"]  # "b" leaves, "d" prefills and then takes its row
    new_sequence("d", 6)
    run([("a", 1), ("c", 1), ("d", 6)])
    run([("c", 1), ("a", 1), ("d", 1)])  # another order
    tokens, table, done = live["a"]  # the last block of "a" is replaced by another one, with other keys
    fresh = free.pop()
    for layer in range(model.config.n_layers):
        noise = torch.randn(tracked.keys[layer][:, fresh].shape, generator=g)
        for c in (tracked, plain):
            c.keys[layer][:, fresh] = c.keys[layer][:, table[-1]] + noise
            c.values[layer][:, fresh] = c.values[layer][:, table[-1]] - noise
    table[-1] = fresh
    run([("a", 1), ("c", 1), ("d", 1)])
    live["c"] = (live["c"][0], live["c"][1], 4)  # "c" recomputes its last tokens (a multi-token chunk)
    run([("a", 1), ("c", len(live["c"][0]) - 4), ("d", 1)])
    for _ in range(3):
        run([("a", 1), ("c", 1), ("d", 1)])
    run([("a", 1), ("c", 1)], use_ids=False)
    assert tracked.decode_view.n_rows == 0
    run([("a", 1), ("c", 1), ("d", 1)])
