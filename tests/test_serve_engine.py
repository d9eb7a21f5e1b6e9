"""llmlab.serve.Engine: the correctness contract (same tokens as generate, no block leaks) and the scheduler.

The reference is always ``llmlab.model.generate`` run alone with the sampler of the same
``SamplingParams``: nothing here depends on what the shipped models happen to write today.
"""

import json

import pytest
import torch

from llmlab import pretrained
from llmlab.model import generate
from llmlab.serve import Engine, RequestState, SamplingParams
from llmlab.serve.scheduler import Scheduler
from llmlab.serve.blocks import BlockAllocator


@pytest.fixture(scope="module")
def base():
    return pretrained.load("es-base")


def _workload(tok, n=32, seed=0):
    """``n`` prompts of mixed lengths (some sharing a long prefix) with mixed sampling settings."""
    g = torch.Generator().manual_seed(seed)
    shared = torch.randint(5, 2000, (37,), generator=g).tolist()
    kinds = [
        dict(temperature=0.0),
        dict(temperature=0.9),
        dict(temperature=1.1, top_p=0.9),
        dict(temperature=0.7, top_k=20),
        dict(temperature=0.0, repetition_penalty=1.3),
        dict(temperature=1.0, min_p=0.05),
    ]
    prompts, params = [], []
    for i in range(n):
        length = int(torch.randint(1, 110, (1,), generator=g))
        own = torch.randint(5, 2000, (length,), generator=g).tolist()
        prompts.append(shared + own[:20] if i % 5 == 0 else own)
        settings = dict(kinds[i % len(kinds)])
        stops = dict(stop_token_ids=[tok.eos_id]) if i % 3 else dict(stop_sequences=[[46]])  # 46 = "."
        params.append(SamplingParams(max_tokens=int(torch.randint(1, 48, (1,), generator=g)), seed=1000 + i,
                                     **settings, **stops))
    return prompts, params


def _reference(model, prompt, params):
    out = generate(model, torch.tensor(prompt), params.max_tokens, sampler=params.make_sampler(),
                   eos_token_id=params.stop_token_ids or None, stop_sequences=params.stop_sequences or None)
    return out[len(prompt):].tolist()


@pytest.fixture(scope="module")
def workload(base):
    model, tok = base
    prompts, params = _workload(tok)
    return prompts, params, [_reference(model, p, sp) for p, sp in zip(prompts, params)]


def _assert_no_blocks_held(engine):
    alloc = engine.allocator
    assert alloc.num_used == 0, f"{alloc.num_used} KV blocks still held"
    assert all(alloc.refcount(b) == 0 for b in range(alloc.num_blocks))
    assert not engine.scheduler.running and not engine.scheduler.waiting


def test_engine_output_equals_single_request_generate_alone(base):
    model, tok = base
    engine = Engine(model, tok)
    prompt = [tok.bos_id] + tok.encode("Había una vez")
    for params in (SamplingParams(max_tokens=30, temperature=0), SamplingParams(max_tokens=30, seed=7)):
        (out,) = engine.generate([prompt], params)
        assert out.token_ids == _reference(model, prompt, params)
        assert out.text == tok.decode(out.token_ids, skip_special=True)
    _assert_no_blocks_held(engine)


ENGINE_SETUPS = {
    "continuous, 32 at once": dict(max_num_seqs=32),
    "blocks run out: preemption by recompute": dict(max_num_seqs=32, num_blocks=24),
    "small token budget: chunked prefill": dict(max_num_seqs=8, max_num_batched_tokens=24),
    "static batching": dict(max_num_seqs=8, policy="static"),
    "no prefix caching": dict(max_num_seqs=16, prefix_caching=False),
}


@pytest.mark.slow
@pytest.mark.parametrize("setup", list(ENGINE_SETUPS))
def test_engine_output_equals_single_request_generate_among_32_concurrent_requests(base, workload, setup):
    model, tok = base
    prompts, params, expected = workload
    engine = Engine(model, tok, **ENGINE_SETUPS[setup])
    outs = engine.generate(prompts, params)
    for i, (out, ref) in enumerate(zip(outs, expected)):
        assert out.token_ids == ref, f"request {i} ({params[i]}) differs from generate"
        assert out.finish_reason in ("stop", "length")
    _assert_no_blocks_held(engine)
    stats = engine.kv_stats()
    if "preemption" in setup:
        assert stats.preemptions > 0
    if setup == "continuous, 32 at once":
        assert stats.prefix_hit_tokens > 0 and stats.copies_on_write >= 0


def test_prefix_sharing_reuses_blocks_and_copies_on_write(base):
    model, tok = base
    engine = Engine(model, tok, max_num_seqs=8)
    prompt = torch.randint(5, 2000, (32,), generator=torch.Generator().manual_seed(1)).tolist()  # 2 full blocks
    params = SamplingParams(max_tokens=12, temperature=0)
    first = engine.generate([prompt], params)[0]
    # the same prompt again: both blocks come from the cache, the last token is recomputed into a copy
    again = engine.generate([prompt, prompt + [7, 8, 9]], params)
    stats = engine.kv_stats()
    assert stats.prefix_hit_tokens >= 31 + 32 and stats.copies_on_write >= 1
    assert again[0].token_ids == first.token_ids == _reference(model, prompt, params)
    assert again[1].token_ids == _reference(model, prompt + [7, 8, 9], params)
    assert again[0].metrics.prefix_cached_tokens == 31
    _assert_no_blocks_held(engine)


def test_cancelled_requests_free_their_blocks_and_the_others_are_unaffected(base):
    model, tok = base
    engine = Engine(model, tok, max_num_seqs=4, max_num_batched_tokens=16)
    g = torch.Generator().manual_seed(2)
    prompts = [torch.randint(5, 2000, (n,), generator=g).tolist() for n in (9, 40, 12, 30, 8, 25)]
    params = SamplingParams(max_tokens=20, temperature=0.8, seed=3)
    requests = [engine.add_request(p, params) for p in prompts]
    engine.step()  # request 0's prompt (9 tokens) and the first 7 of request 1's
    engine.step()  # request 0 decodes, request 1 reads 15 more; no budget left for the others
    assert requests[0].state is RequestState.RUNNING and len(requests[0].output_ids) == 2
    assert requests[1].state is RequestState.RUNNING and requests[1].num_computed == 22
    assert requests[5].state is RequestState.WAITING
    doomed = [requests[0], requests[1], requests[5]]  # mid-decode, mid-prompt, still waiting
    for r in doomed:
        engine.abort(r.request_id)
    while engine.has_unfinished():
        engine.step()
    for r, p in zip(requests, prompts):
        if r in doomed:
            assert r.state is RequestState.CANCELLED and r.finish_reason == "cancelled"
        else:
            assert r.state is RequestState.FINISHED and r.output_ids == _reference(model, p, params)
    _assert_no_blocks_held(engine)


def test_a_failing_request_frees_its_blocks_and_the_batch_goes_on(base):
    model, tok = base
    engine = Engine(model, tok)
    params = SamplingParams(max_tokens=15, temperature=0)
    prompts = [[tok.bos_id] + tok.encode(t) for t in ("La luna", "El mar", "Un gato")]
    requests = [engine.add_request(p, params) for p in prompts]
    engine.step()
    calls = {"n": 0}
    real = requests[1].sampler

    def broken(logits, ids):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("sampler exploded")
        return real(logits, ids)

    requests[1].sampler = broken
    while engine.has_unfinished():
        engine.step()
    assert requests[1].state is RequestState.FAILED and "sampler exploded" in requests[1].error
    for i in (0, 2):
        assert requests[i].output_ids == _reference(model, prompts[i], params)
    _assert_no_blocks_held(engine)


def test_a_failing_step_fails_its_requests_frees_everything_and_the_engine_recovers(base, monkeypatch):
    model, tok = base
    engine = Engine(model, tok)
    params = SamplingParams(max_tokens=10, temperature=0)
    prompt = [tok.bos_id] + tok.encode("Había una vez")
    first = engine.add_request(prompt, params)
    engine.step()

    def boom(*args, **kwargs):
        raise RuntimeError("the model fell over")

    monkeypatch.setattr(engine.runner, "run_rows", boom)
    engine.step()
    assert first.state is RequestState.FAILED and "fell over" in first.error
    _assert_no_blocks_held(engine)
    monkeypatch.undo()
    (again,) = engine.generate([prompt], params)
    assert again.token_ids == _reference(model, prompt, params)


def test_json_schema_requests_follow_the_schema_and_equal_constrained_generate(base):
    from llmlab.serve.grammar import GrammarEngine

    model, tok = base
    schema = {"type": "object", "additionalProperties": False, "required": ["riesgo", "plazo_dias"],
              "properties": {"riesgo": {"enum": ["bajo", "medio", "alto"]},
                             "plazo_dias": {"type": "integer", "minimum": 1, "maximum": 30}}}
    engine = Engine(model, tok)
    prompt = [tok.bos_id] + tok.encode("Respuesta en JSON:")
    params = SamplingParams(max_tokens=40, temperature=0.9, seed=11, json_schema=schema, stop_token_ids=[tok.eos_id])
    (out,) = engine.generate([prompt], params)
    obj = json.loads(out.text)
    assert list(obj) == ["riesgo", "plazo_dias"] and obj["riesgo"] in ["bajo", "medio", "alto"]
    assert 1 <= obj["plazo_dias"] <= 30
    constraint = GrammarEngine(tok).constraint(schema, [tok.eos_id], prompt_length=len(prompt))
    ref = generate(model, torch.tensor(prompt), 40, sampler=params.make_sampler(constraint=constraint),
                   eos_token_id=[tok.eos_id])[len(prompt):].tolist()
    assert out.token_ids == ref


def test_stop_strings_cut_the_text_before_them(base):
    model, tok = base
    engine = Engine(model, tok)
    prompt = [tok.bos_id] + tok.encode("Había una vez")
    free = engine.generate([prompt], SamplingParams(max_tokens=40, temperature=0))[0]
    assert len(free.text) >= 4, "the model's continuation is too short to cut"
    middle = len(free.text) // 2
    stop = free.text[middle:middle + 2]  # two characters the unconstrained text contains
    cut = engine.generate([prompt], SamplingParams(max_tokens=40, temperature=0, stop=[stop]))[0]
    assert cut.finish_reason == "stop" and stop not in cut.text
    assert free.text.startswith(cut.text) and cut.text == free.text[:free.text.index(stop)]
    assert free.token_ids[:len(cut.token_ids)] == cut.token_ids


def test_timings_give_ttft_and_one_inter_token_latency_per_later_token(base):
    model, tok = base
    engine = Engine(model, tok)
    outs = engine.generate([[tok.bos_id] + tok.encode("El sol")] * 3, SamplingParams(max_tokens=12, temperature=0))
    for out in outs:
        m = out.metrics
        assert 0 <= m.queue_s <= m.ttft_s <= m.e2e_s
        assert len(out.itl_s) == len(out.token_ids) - 1 and all(gap >= 0 for gap in out.itl_s)
        assert m.decode_tokens_per_s is None or m.decode_tokens_per_s > 0


def test_continuous_batching_needs_fewer_steps_than_static_batching(base):
    """Counted in engine steps, not seconds: finished requests leave at once and others take their place."""
    model, tok = base
    g = torch.Generator().manual_seed(4)
    prompts = [torch.randint(5, 2000, (8,), generator=g).tolist() for _ in range(12)]
    params = [SamplingParams(max_tokens=m, temperature=0) for m in [40, 2, 2, 2] * 3]
    steps = {}
    for policy in ("continuous", "static"):
        engine = Engine(model, tok, max_num_seqs=4, policy=policy)
        engine.generate(prompts, params)
        steps[policy] = engine.num_steps
    # static: 3 batches of 4, each as long as its longest member (40 steps); continuous overlaps them
    assert steps["static"] >= 3 * 40
    assert steps["continuous"] < 0.6 * steps["static"]


def test_kv_stats_waste_less_than_a_block_per_sequence(base):
    model, tok = base
    engine = Engine(model, tok, max_num_seqs=8, prefix_caching=False)
    g = torch.Generator().manual_seed(6)
    for n in (5, 17, 33, 40, 64, 3):
        engine.add_request(torch.randint(5, 2000, (n,), generator=g).tolist(), SamplingParams(max_tokens=30, seed=n))
    for _ in range(5):
        engine.step()
    s = engine.kv_stats()
    assert s.running_requests == 6
    assert 0 <= s.wasted_slots < s.block_size * s.running_requests  # paged: at most one partial block each
    assert s.contiguous_wasted_slots > 10 * s.wasted_slots  # contiguous: max_seq_len reserved per sequence
    assert s.used_blocks + s.free_blocks == s.num_blocks


@pytest.mark.parametrize("bad", [
    dict(max_tokens=0), dict(max_tokens=1.5), dict(temperature=-0.1), dict(temperature=float("nan")),
    dict(top_p=0), dict(top_p=1.2), dict(top_k=0), dict(min_p=2), dict(repetition_penalty=0),
    dict(seed=-1), dict(stop=[""]), dict(stop_token_ids=[-3]), dict(stop_sequences=[[]]), dict(json_schema=[1]),
])
def test_bad_sampling_params_are_refused(bad):
    with pytest.raises(ValueError):
        SamplingParams(**bad)


def test_bad_prompts_are_refused_before_anything_runs(base):
    model, tok = base
    engine = Engine(model, tok)
    with pytest.raises(ValueError, match="exceeds the model's context"):
        engine.make_request([1] * 250, SamplingParams(max_tokens=10))
    with pytest.raises(ValueError, match="at least one token"):
        engine.make_request([], SamplingParams())
    with pytest.raises(ValueError, match="vocab_size"):
        engine.make_request([5, 99999], SamplingParams())
    with pytest.raises(TypeError):
        engine.make_request([1.5, 2], SamplingParams())
    with pytest.raises(ValueError, match="tokenizer"):
        Engine(model).make_request("hola", SamplingParams())
    with pytest.raises(ValueError, match="at least"):
        Engine(model, num_blocks=3)
    assert not engine.has_unfinished()


def test_a_request_that_cannot_fit_in_the_whole_cache_fails_instead_of_waiting_forever(base):
    model, tok = base
    engine = Engine(model, tok, num_blocks=16, block_size=16)  # exactly one full-length sequence
    big = engine.add_request(list(range(5, 205)), SamplingParams(max_tokens=50, temperature=0))
    small = engine.add_request([5, 6, 7], SamplingParams(max_tokens=5, temperature=0))
    while engine.has_unfinished():
        engine.step()
    assert big.state is RequestState.FINISHED and small.state is RequestState.FINISHED
    # a cache smaller than one sequence is refused up front
    with pytest.raises(ValueError, match="needs at least 16 blocks"):
        Engine(model, tok, num_blocks=15, block_size=16)


def test_scheduler_serves_decodes_before_prompt_chunks_within_the_token_budget(base):
    model, tok = base
    engine = Engine(model, tok, max_num_seqs=4, max_num_batched_tokens=16)
    first = engine.add_request(list(range(5, 15)), SamplingParams(max_tokens=20, temperature=0))
    engine.step()  # prefill of the 10-token prompt
    second = engine.add_request(list(range(20, 60)), SamplingParams(max_tokens=5, temperature=0))
    engine._take_inbox([])
    plan = engine.scheduler.schedule()
    assert [s.request for s in plan.segments] == [first, second]
    assert plan.segments[0].n_tokens == 1 and plan.segments[1].n_tokens == 15  # the rest of the budget


def test_scheduler_rejects_inconsistent_limits():
    alloc = BlockAllocator(8, 4)
    with pytest.raises(ValueError, match="policy"):
        Scheduler(alloc, policy="fifo")
    with pytest.raises(ValueError, match="max_num_batched_tokens"):
        Scheduler(alloc, max_num_seqs=8, max_num_batched_tokens=4)


def test_llm_loads_a_shipped_model_and_answers_chats_like_generate():
    from llmlab.chat import STOP_TOKENS, encode_chat
    from llmlab.serve import LLM

    llm = LLM("es-chat", max_num_seqs=4)
    conversation = [{"role": "user", "content": "¿Qué es un token?"}]
    (out,) = llm.chat([conversation], SamplingParams(max_tokens=30, temperature=0))
    prompt = encode_chat(conversation, llm.tokenizer, "chatml", add_generation_prompt=True)
    stops = [llm.tokenizer.special_tokens[t] for t in STOP_TOKENS["chatml"]]
    ref = generate(llm.model, torch.tensor(prompt), 30, eos_token_id=stops)[len(prompt):].tolist()
    assert out.token_ids == ref and out.text == llm.tokenizer.decode(ref, skip_special=True)
    with pytest.raises(ValueError, match="not a chat model"):
        LLM("es-base").chat_prompt(conversation)


def _batch_workload(tok, n, seed):
    """``n`` prompts of 1-60 tokens; most greedy (the engine's one-max path), some seeded samples."""
    g = torch.Generator().manual_seed(seed)
    prompts = [torch.randint(5, 2000, (int(torch.randint(1, 61, (1,), generator=g)),), generator=g).tolist()
               for _ in range(n)]
    params = [SamplingParams(max_tokens=int(torch.randint(1, 24, (1,), generator=g)), seed=i,
                             **(dict(temperature=0.0) if i % 4 else dict(temperature=0.9, top_k=40)))
              for i in range(n)]
    return prompts, params


@pytest.mark.slow
def test_the_optimised_step_at_64_sequences_gives_generates_tokens_and_uses_the_plain_layer_forward(base):
    """64 requests at once (prefill chunks next to decodes, greedy next to sampled): each one's tokens
    equal ``generate`` run alone; the shipped model runs through the runner's own layer loop."""
    model, tok = base
    prompts, params = _batch_workload(tok, 64, seed=3)
    engine = Engine(model, tok, max_num_seqs=64, max_num_batched_tokens=256)
    assert engine.runner._plain_weights() is not None, "the shipped model should take the plain-layer path"
    outs = engine.generate(prompts, params)
    for i, out in enumerate(outs):
        assert out.token_ids == _reference(model, prompts[i], params[i]), f"request {i} ({params[i]})"
    _assert_no_blocks_held(engine)


def test_the_plain_layer_forward_gives_the_logits_of_the_models_own_forward(base, monkeypatch):
    """The runner's layer loop and ``model.forward`` through the same paged batch: same logits
    (up to float rounding: the stacked matrices sum in another order), same greedy tokens."""
    import llmlab.serve.runner as runner_module

    model, tok = base
    prompts, params = _batch_workload(tok, 12, seed=4)
    plain = Engine(model, tok, max_num_seqs=12).generate(prompts, params)
    monkeypatch.setattr(runner_module, "_is_plain", lambda model: False)
    engine = Engine(model, tok, max_num_seqs=12)
    assert engine.runner._plain_weights() is None
    own = engine.generate(prompts, params)
    assert [o.token_ids for o in own] == [o.token_ids for o in plain]
    monkeypatch.undo()
    segments = [runner_module.Segment(p, 0, [b]) for b, p in enumerate(prompts[:4]) if len(p) <= 16]
    fast = Engine(model, tok).runner
    fallback = Engine(model, tok).runner
    fallback._plain_weights = lambda: None
    wants = ["all"] * len(segments)
    for a, b in zip(fast.run(segments, wants), fallback.run(segments, wants)):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_the_engine_sees_weights_changed_after_it_was_built(base):
    """The stacked matrices are rebuilt when a weight changes in place or a layer is replaced."""
    model, tok = base
    model = type(model)(model.config).eval()
    model.load_state_dict(base[0].state_dict())
    engine = Engine(model, tok)
    prompt = [tok.bos_id] + tok.encode("Había una vez")
    params = SamplingParams(max_tokens=12, temperature=0)
    before = engine.generate([prompt], params)[0].token_ids
    with torch.no_grad():
        model.blocks[0].mlp.up.weight.mul_(3.0)
    changed = engine.generate([prompt], params)[0].token_ids
    assert changed != before and changed == _reference(model, prompt, params)
    model.blocks[1].attn.q_proj = torch.nn.Linear(model.config.d_model, model.config.d_model, bias=False)
    replaced = engine.generate([prompt], params)[0].token_ids
    assert replaced != changed and replaced == _reference(model, prompt, params)
