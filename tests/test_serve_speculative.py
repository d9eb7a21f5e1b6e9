"""Speculative decoding: greedy output equals the target's, sampled output follows the target's distribution.

The statistical tests are chi-square goodness-of-fit tests at significance level ALPHA = 0.001 with
fixed seeds, so they are deterministic: the same draws every run. Each one also shows that it has
the power to fail: the same test rejects a plausible mistake (sampling from the draft, a wrong
residual) at that level.
"""

import itertools

import pytest
import torch

from llmlab import pretrained
from llmlab.model import from_hf, generate
from llmlab.serve import Engine, SamplingParams, speculative_generate, verify_sampled
from llmlab.serve.speculative import speculative_step
from llmlab.cost.simulate import expected_tokens_per_pass

ALPHA = 0.001


def chi_square_p_value(counts: torch.Tensor, probs: torch.Tensor) -> float:
    """p-value of Pearson's chi-square test of ``counts`` against ``probs`` (cells with expected < 5 pooled)."""
    n = counts.sum()
    expected = probs * n
    small = expected < 5
    if small.any():
        counts = torch.cat([counts[~small], counts[small].sum(0, keepdim=True)])
        expected = torch.cat([expected[~small], expected[small].sum(0, keepdim=True)])
    stat = ((counts - expected) ** 2 / expected).sum()
    df = torch.tensor(float(len(counts) - 1), dtype=torch.float64)
    return float(torch.special.gammaincc(df / 2, stat.double() / 2))  # chi-square survival function


# ---------------------------------------------------------------------------------------------------
# The accept/reject rule on toy models whose exact joint distribution can be enumerated
# ---------------------------------------------------------------------------------------------------

VOCAB, N_TOKENS, GAMMA = 4, 3, 2


def _markov_chains(seed=0):
    """Target P and draft Q: next-token tables indexed by the previous token (quite different on purpose)."""
    g = torch.Generator().manual_seed(seed)
    p = torch.rand(VOCAB, VOCAB, generator=g) ** 2 + 0.05
    q = torch.rand(VOCAB, VOCAB, generator=g) ** 2 + 0.05
    return p / p.sum(1, keepdim=True), q / q.sum(1, keepdim=True)


def _speculative_draw(P, Q, generator, verify=verify_sampled):
    """N_TOKENS tokens after token 0, drafting GAMMA at a time from Q and verifying against P."""
    out = [0]
    while len(out) - 1 < N_TOKENS:
        gamma = min(GAMMA, N_TOKENS - (len(out) - 1) - 1)
        drafts, q_rows, context = [], [], out[-1]
        for _ in range(gamma):
            q = Q[context]
            x = int(torch.multinomial(q, 1, generator=generator))
            drafts.append(x)
            q_rows.append(q)
            context = x
        contexts = [out[-1]] + drafts
        p_rows = torch.stack([P[c] for c in contexts])
        q_rows = torch.stack(q_rows) if q_rows else torch.empty(0, VOCAB)
        tokens, _ = verify(drafts, q_rows, p_rows, generator)
        out.extend(tokens)
    return tuple(out[1:N_TOKENS + 1])


def _joint(P):
    cells = list(itertools.product(range(VOCAB), repeat=N_TOKENS))
    probs = []
    for cell in cells:
        prob, prev = 1.0, 0
        for x in cell:
            prob *= float(P[prev, x])
            prev = x
        probs.append(prob)
    return cells, torch.tensor(probs, dtype=torch.float64)


def _counts(cells, draws):
    index = {c: i for i, c in enumerate(cells)}
    counts = torch.zeros(len(cells), dtype=torch.float64)
    for d in draws:
        counts[index[d]] += 1
    return counts


def _wrong_residual(drafts, q_rows, p_rows, generator):
    """A classic mistake: after a rejection, draw from p itself instead of the residual max(0, p - q)."""
    out = []
    for j, x in enumerate(drafts):
        if float(torch.rand((), generator=generator)) < min(1.0, float(p_rows[j, x] / q_rows[j, x])):
            out.append(x)
            continue
        return out + [int(torch.multinomial(p_rows[j], 1, generator=generator))], j
    return out + [int(torch.multinomial(p_rows[len(drafts)], 1, generator=generator))], len(drafts)


@pytest.mark.slow
def test_speculative_sampling_follows_the_target_distribution_exactly():
    P, Q = _markov_chains()
    cells, exact = _joint(P)
    n = 4000
    g = torch.Generator().manual_seed(1234)
    draws = [_speculative_draw(P, Q, g) for _ in range(n)]
    assert chi_square_p_value(_counts(cells, draws), exact) > ALPHA
    # The same test has the power to catch mistakes, with as many draws:
    g = torch.Generator().manual_seed(1234)
    wrong = [_speculative_draw(P, Q, g, verify=_wrong_residual) for _ in range(n)]
    assert chi_square_p_value(_counts(cells, wrong), exact) < ALPHA
    _, from_draft = _joint(Q)
    g = torch.Generator().manual_seed(99)
    draft_only = [tuple(int(x) for x in _markov_draw(Q, g)) for _ in range(n)]
    assert chi_square_p_value(_counts(cells, draft_only), exact) < ALPHA


def _markov_draw(T, generator):
    out, prev = [], 0
    for _ in range(N_TOKENS):
        prev = int(torch.multinomial(T[prev], 1, generator=generator))
        out.append(prev)
    return out


def test_verify_sampled_keeps_the_draft_when_the_target_agrees_and_checks_shapes():
    p = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    tokens, accepted = verify_sampled([1, 2], p[:2], p, torch.Generator().manual_seed(0))
    assert (tokens, accepted) == ([1, 2, 0], 2)  # q == p: always accepted, then the bonus token
    q = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    tokens, accepted = verify_sampled([2, 2], q, p, torch.Generator().manual_seed(0))
    assert (tokens, accepted) == ([1], 0)  # p(2) = 0 at the first position: rejected, residual gives 1
    with pytest.raises(ValueError, match="distributions"):
        verify_sampled([1, 2], p[:1], p)


# ---------------------------------------------------------------------------------------------------
# The shipped pair: es-mini drafts for es-base
# ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pair():
    target, tok = pretrained.load("es-base")
    draft, _ = pretrained.load("es-mini")
    return target, draft, tok


def _prompts(tok, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    texts = ["Había una vez", "La luna", "El mar es", "Mi abuela", "En la escuela", "El tren"]
    out = []
    for i in range(n):
        extra = torch.randint(5, 2000, (int(torch.randint(0, 25, (1,), generator=g)),), generator=g).tolist()
        out.append([tok.bos_id] + tok.encode(texts[i % len(texts)]) + extra)
    return out


def test_speculative_generate_greedy_equals_the_target_alone(pair):
    target, draft, tok = pair
    for prompt in _prompts(tok, 3):
        ids, counts = speculative_generate(target, draft, torch.tensor(prompt), 40, gamma=4)
        assert ids.tolist() == generate(target, torch.tensor(prompt), 40).tolist()
        assert counts["passes"] < 40  # several tokens per target pass


@pytest.mark.slow
def test_engine_speculative_greedy_equals_the_target_alone_among_concurrent_requests(pair):
    target, draft, tok = pair
    prompts = _prompts(tok, 16, seed=1)
    g = torch.Generator().manual_seed(2)
    params = [SamplingParams(max_tokens=int(torch.randint(1, 60, (1,), generator=g)), temperature=0,
                             stop_token_ids=[tok.eos_id], repetition_penalty=1.2 if i % 4 == 0 else None)
              for i in range(16)]
    engine = Engine(target, tok, max_num_seqs=8, draft_model=draft, num_speculative_tokens=4)
    outs = engine.generate(prompts, params)
    for prompt, sp, out in zip(prompts, params, outs):
        ref = generate(target, torch.tensor(prompt), sp.max_tokens, sampler=sp.make_sampler(),
                       eos_token_id=[tok.eos_id])[len(prompt):].tolist()
        assert out.token_ids == ref
    assert engine.allocator.num_used == 0
    stats = engine.spec_stats()
    assert 0 < stats.acceptance_rate < 1 and stats.passes > 0
    assert stats.tested <= stats.proposed and stats.accepted <= stats.tested
    assert stats.emitted == stats.accepted + stats.passes  # every pass adds the target's own token
    # measured tokens per pass against (1 - a^(g+1)) / (1 - a) with the measured a (loose: a is not i.i.d.)
    assert stats.tokens_per_pass == pytest.approx(expected_tokens_per_pass(stats.acceptance_rate, 4), rel=0.2)


@pytest.mark.slow
def test_engine_speculative_sampling_follows_the_target_distribution(pair):
    """Joint distribution of the first two tokens: the second comes from a speculative pass (γ = 2)."""
    target, draft, tok = pair
    prompt = [tok.bos_id] + tok.encode("Había una vez")
    n = 800
    params = [SamplingParams(max_tokens=4, temperature=1.0, seed=s) for s in range(n)]
    engine = Engine(target, tok, max_num_seqs=64, draft_model=draft, num_speculative_tokens=2)
    outs = engine.generate([prompt] * n, params)
    assert engine.spec_stats().passes >= n  # every request went through at least one speculative pass
    pairs = [tuple(o.token_ids[:2]) for o in outs]
    # exact joint p(x1) p(x2 | x1) over the likely pairs, the rest pooled
    with torch.no_grad():
        p1 = torch.softmax(target(torch.tensor([prompt]))[0, -1].double(), -1)
        firsts = torch.topk(p1, 40).indices
        batch = torch.cat([torch.tensor([prompt]).repeat(len(firsts), 1), firsts[:, None]], dim=1)
        p2 = torch.softmax(target(batch)[:, -1].double(), -1)
    joint = p1[firsts, None] * p2  # [40, vocab]
    cells = [(int(firsts[i]), int(x)) for i, x in zip(*torch.nonzero(joint * n >= 5, as_tuple=True))]
    probs = torch.tensor([float(joint[(firsts == a).nonzero()[0, 0], b]) for a, b in cells], dtype=torch.float64)
    counts = torch.tensor([sum(1 for pr in pairs if pr == c) for c in cells], dtype=torch.float64)
    assert len(cells) >= 5
    counts = torch.cat([counts, torch.tensor([n - counts.sum()])])
    probs = torch.cat([probs, 1 - probs.sum(0, keepdim=True)])
    assert chi_square_p_value(counts, probs) > ALPHA
    # power: the draft's own joint distribution is rejected by the same test
    with torch.no_grad():
        q1 = torch.softmax(draft(torch.tensor([prompt]))[0, -1].double(), -1)
        q2 = torch.softmax(draft(batch)[:, -1].double(), -1)
    g = torch.Generator().manual_seed(5)
    draft_pairs = []
    for _ in range(n):
        a = int(torch.multinomial(q1.float(), 1, generator=g))
        row = (firsts == a).nonzero()
        b = int(torch.multinomial(q2[row[0, 0]].float(), 1, generator=g)) if len(row) else -1
        draft_pairs.append((a, b))
    draft_counts = torch.tensor([sum(1 for pr in draft_pairs if pr == c) for c in cells], dtype=torch.float64)
    draft_counts = torch.cat([draft_counts, torch.tensor([n - draft_counts.sum()])])
    assert chi_square_p_value(draft_counts, probs) < ALPHA


# ---------------------------------------------------------------------------------------------------
# Parity with Hugging Face assisted generation
# ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_speculative_greedy_equals_hf_assisted_generation():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    common = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                  max_position_embeddings=128, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    hf_target = transformers.LlamaForCausalLM(transformers.LlamaConfig(num_hidden_layers=4, **common)).eval()
    # the draft: the target's first layer with its embeddings and head (a "layer-skip" draft that often agrees)
    hf_draft = transformers.LlamaForCausalLM(transformers.LlamaConfig(num_hidden_layers=1, **common)).eval()
    hf_draft.load_state_dict({k: v for k, v in hf_target.state_dict().items() if k in hf_draft.state_dict()})
    prompt = torch.randint(0, 128, (1, 12), generator=torch.Generator().manual_seed(1))
    hf_tokens = hf_target.generate(prompt, attention_mask=torch.ones_like(prompt), assistant_model=hf_draft,
                                   do_sample=False, max_new_tokens=40, min_new_tokens=40, pad_token_id=0)[0]
    plain_hf = hf_target.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                  max_new_tokens=40, min_new_tokens=40, pad_token_id=0)[0]
    assert torch.equal(hf_tokens, plain_hf)
    target, draft = from_hf(hf_target), from_hf(hf_draft)
    ours, counts = speculative_generate(target, draft, prompt[0], 40, gamma=4)
    assert ours.tolist() == hf_tokens.tolist()
    engine = Engine(target, draft_model=draft, num_speculative_tokens=4)
    (out,) = engine.generate([prompt[0].tolist()], SamplingParams(max_tokens=40, temperature=0))
    assert out.token_ids == hf_tokens[12:].tolist()
    assert engine.spec_stats().accepted > 0


def test_speculative_step_greedy_verification():
    assert speculative_step([5, 7, 9, 2], [5, 7, 1, 4, 8]) == [5, 7, 1]
    assert speculative_step([5, 7, 9, 2], [5, 7, 9, 2, 8]) == [5, 7, 9, 2, 8]  # all accepted + bonus
    assert speculative_step([3], [4, 6]) == [4]
    with pytest.raises(ValueError):
        speculative_step([1, 2], [1, 2])
