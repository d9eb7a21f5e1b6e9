"""Speculative decoding: a small draft model proposes, the big target model verifies.

Decoding is memory-bound (chapter 07): one pass of the target over γ + 1 tokens costs about as
much as a pass over one, because the weights are read once either way. So a cheap draft model
proposes γ tokens, one at a time, and the target scores all of them in a single pass. Then, for
each draft token x_j, with q the draft's distribution and p the target's at that position:

- greedy: keep x_j while it is the target's own argmax; at the first mismatch take the target's
  argmax instead (``speculative_step``). The output is exactly the target's
  greedy output.
- sampling (Leviathan et al. 2023; Chen et al. 2023): accept x_j with probability
  ``min(1, p(x_j) / q(x_j))``; at the first rejection draw the replacement from the *residual*
  ``max(0, p - q) / sum(max(0, p - q))`` and stop. A token accepted this way, or drawn from the
  residual, is distributed exactly as p: the output follows the target's distribution, whatever
  the draft proposes (the draft only changes how many tokens each target pass yields).

If all γ tokens are accepted the target's pass also gives the next distribution, so one more
token comes for free (the *bonus* token): each target pass yields between 1 and γ + 1 tokens, on
average ``(1 - α^(γ+1)) / (1 - α)`` for a per-token acceptance rate α
(``llmlab.cost.simulate.expected_tokens_per_pass``). ``SpecStats`` measures both.

``SpeculativeDecoder`` does this for a whole batch inside the engine (the draft has its own paged
KV memory, indexed by the same block tables); ``speculative_generate`` does it for one sequence
with plain ``KVCache``s, the version to read first. Both use ``verify_sampled`` /
``speculative_step`` for the decision.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from llmlab.cost.simulate import expected_tokens_per_pass
from llmlab.model import Transformer

from .paged_attention import Segment
from .request import Request
from .runner import ModelRunner

__all__ = ["SpecStats", "SpeculativeDecoder", "speculative_generate", "speculative_step", "verify_sampled"]


def speculative_step(draft_tokens, target_tokens) -> list[int]:
    """Greedy verification of one speculative step.

    ``target_tokens[j]`` is the target's greedy choice after the prefix plus ``draft_tokens[:j]``
    (so it has one more entry than the draft). Keep the draft while it agrees with the target,
    then add the target's token at the first disagreement (or its bonus token if all agree).
    Draft [5, 7, 9, 2], target [5, 7, 1, 4, 8] → [5, 7, 1]. The output always equals what the
    target alone would have produced greedily.
    """
    draft = list(draft_tokens)
    target = list(target_tokens)
    if len(target) != len(draft) + 1:
        raise ValueError(f"target_tokens must have len(draft_tokens) + 1 = {len(draft) + 1} entries, got {len(target)}")
    out = []
    for d, t in zip(draft, target):
        if d != t:
            return out + [t]
        out.append(d)
    return out + [target[-1]]


def verify_sampled(draft_tokens: Sequence[int], draft_probs: torch.Tensor, target_probs: torch.Tensor,
                   generator: torch.Generator | None = None) -> tuple[list[int], int]:
    """The accept/reject rule for sampled drafts: returns ``(tokens, n_accepted)``.

    ``draft_probs`` ``[γ, vocab]``: the draft's distribution q_j each draft token was drawn from;
    ``target_probs`` ``[γ + 1, vocab]``: the target's p_j at the same positions plus one more.
    ``tokens`` are the accepted draft tokens followed by one token from the target (the residual
    draw after a rejection, or the bonus token after γ acceptances).
    """
    gamma = len(draft_tokens)
    if draft_probs.shape[0] != gamma or target_probs.shape[0] != gamma + 1:
        raise ValueError(f"need {gamma} draft and {gamma + 1} target distributions, got "
                         f"{draft_probs.shape[0]} and {target_probs.shape[0]}")
    out: list[int] = []
    for j, x in enumerate(draft_tokens):
        p, q = float(target_probs[j, x]), float(draft_probs[j, x])
        u = float(torch.rand((), generator=generator))
        if q > 0 and u < min(1.0, p / q):  # q(x) > 0 always holds for a token the draft drew
            out.append(int(x))
            continue
        residual = (target_probs[j] - draft_probs[j]).clamp(min=0)
        if float(residual.sum()) <= 0:  # p == q numerically: the residual is empty, p itself is exact
            residual = target_probs[j]
        out.append(int(torch.multinomial(residual / residual.sum(), 1, generator=generator)))
        return out, j
    out.append(int(torch.multinomial(target_probs[gamma], 1, generator=generator)))
    return out, gamma


@dataclass(frozen=True)
class SpecStats:
    """Counters of speculative decoding since the engine started.

    ``acceptance_rate`` estimates the per-token α of the formula: accepted / tested, where a pass
    tests its draft tokens up to and including the first rejected one (the ones after it are never
    looked at). ``tokens_per_pass`` counts the target's own token too.
    """

    gamma: int
    passes: int  # target verification passes (one per request per step)
    proposed: int  # draft tokens proposed
    tested: int  # draft tokens the target judged
    accepted: int
    emitted: int  # tokens the passes produced (accepted + one from the target)
    full_passes: int  # passes with all γ draft tokens (near max_tokens fewer are drafted)
    full_emitted: int
    draft_s: float  # wall time in the draft model and in the target's verification
    verify_s: float

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.tested if self.tested else 0.0

    @property
    def tokens_per_pass(self) -> float:
        """Measured over the passes that drafted all γ tokens (what the formula describes)."""
        return self.full_emitted / self.full_passes if self.full_passes else 0.0

    @property
    def predicted_tokens_per_pass(self) -> float:
        """``(1 - α^(γ+1)) / (1 - α)`` with the measured α."""
        return expected_tokens_per_pass(min(1.0, self.acceptance_rate), self.gamma)


class SpeculativeDecoder:
    """The draft side of an ``Engine`` with speculative decoding."""

    def __init__(self, draft_model: Transformer, num_blocks: int, block_size: int, gamma: int, *, target_config=None):
        if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
            raise ValueError(f"num_speculative_tokens must be an int >= 1, got {gamma!r}")
        if target_config is not None:
            if draft_model.config.vocab_size != target_config.vocab_size:
                raise ValueError(f"draft and target must share the vocabulary: {draft_model.config.vocab_size} "
                                 f"vs {target_config.vocab_size} tokens")
            if draft_model.config.max_seq_len < target_config.max_seq_len:
                raise ValueError("the draft model's max_seq_len must be at least the target's")
        self.runner = ModelRunner(draft_model, num_blocks, block_size)
        self.gamma = gamma
        self._counts = dict(passes=0, proposed=0, tested=0, accepted=0, emitted=0, full_passes=0, full_emitted=0)
        self._draft_s = self._verify_s = 0.0

    def stats(self) -> SpecStats:
        return SpecStats(gamma=self.gamma, draft_s=self._draft_s, verify_s=self._verify_s, **self._counts)

    def reset_stats(self) -> None:
        self._counts = dict.fromkeys(self._counts, 0)
        self._draft_s = self._verify_s = 0.0

    # -- one engine step ---------------------------------------------------------------------------

    def step(self, engine, segments) -> list[list[int]]:
        """Draft for the decoding requests, run the target once over everything, accept, append."""
        decoding = {i: engine.scheduler.lookahead_for(seg.request) for i, seg in enumerate(segments)
                    if seg.n_tokens == 1 and seg.samples}
        decoding = {i: g for i, g in decoding.items() if g > 0}
        t0 = time.perf_counter()
        drafts = dict(zip(decoding, self._propose([segments[i].request for i in decoding], list(decoding.values()))))
        t1 = time.perf_counter()
        target_segments, wants = [], []
        for i, seg in enumerate(segments):
            request = seg.request
            tokens = request.token_ids[seg.start:seg.end]
            if i in decoding:
                tokens = tokens + drafts[i][0]
            target_segments.append(Segment(tokens, seg.start, request.block_table))
            wants.append("all" if i in decoding else "last" if seg.samples else None)
        logits = engine.runner.run(target_segments, wants)
        now = time.perf_counter()
        self._draft_s += t1 - t0
        self._verify_s += now - t1
        results = []
        for i, (seg, rows) in enumerate(zip(segments, logits)):
            request = seg.request
            if i not in decoding:
                request.num_computed = seg.end
                results.append(engine.sample_into(request, rows, now) if rows is not None else [])
                continue
            results.append(self._accept(engine, request, seg.start, drafts[i], rows, now))
        return results

    def _propose(self, requests: list[Request], gammas: list[int]) -> list[tuple[list[int], torch.Tensor | None]]:
        """γ draft passes over the batch: each request's draft tokens and their distributions q."""
        drafts: list[list[int]] = [[] for _ in requests]
        probs: list[list[torch.Tensor]] = [[] for _ in requests]
        for j in range(max(gammas, default=0)):
            active = [k for k, g in enumerate(gammas) if g > j]
            segments = []
            for k in active:
                request = requests[k]
                if j == 0:  # catch up: every known token the draft has not seen yet
                    start = request.draft_computed
                    tokens = request.token_ids[start:]
                else:
                    start = request.num_tokens + j - 1
                    tokens = [drafts[k][-1]]
                segments.append(Segment(tokens, start, request.block_table))
            logits = self.runner.run(segments, ["last"] * len(segments))
            for k, row in zip(active, logits):
                request = requests[k]
                context = request.ids_with(drafts[k]) if _needs_context(request.sampler) else None
                if request.params.greedy:
                    token = int(request.sampler.process(row, context).argmax(dim=-1)[0])
                else:
                    q = request.sampler.probs(row, context)  # the draft's distribution, same settings
                    token = int(torch.multinomial(q, 1, generator=request.generator)[0, 0])
                    probs[k].append(q[0])
                drafts[k].append(token)
        return [(d, torch.stack(p) if p else None) for d, p in zip(drafts, probs)]

    def _accept(self, engine, request: Request, start: int, draft: tuple[list[int], torch.Tensor | None],
                rows: torch.Tensor, now: float) -> list[int]:
        draft_tokens, draft_probs = draft
        gamma = len(draft_tokens)
        try:
            scores = _target_scores(request, rows, draft_tokens)  # [γ + 1, vocab], the sampler's settings applied
            if request.params.greedy:
                tokens = speculative_step(draft_tokens, scores.argmax(dim=-1).tolist())
                n_accepted = len(tokens) - 1
            else:
                target_probs = torch.softmax(scores, dim=-1)
                tokens, n_accepted = verify_sampled(draft_tokens, draft_probs, target_probs, request.generator)
        except Exception as err:  # this request fails; the batch goes on
            return engine.fail_request(request, err, now)
        c = self._counts
        c["passes"] += 1
        c["proposed"] += gamma
        c["accepted"] += n_accepted
        c["tested"] += n_accepted + (1 if n_accepted < gamma else 0)
        c["emitted"] += len(tokens)
        if gamma == self.gamma:
            c["full_passes"] += 1
            c["full_emitted"] += len(tokens)
        length = request.num_tokens  # before appending: the last known token sits at length - 1 == start
        request.num_computed = start + 1 + n_accepted  # K/V valid: the last token and the accepted drafts
        request.draft_computed = min(length + gamma - 1, length + n_accepted)
        appended = []
        for token in tokens:
            appended.append(token)
            if request.append_token(token, now):
                break
        engine.scheduler.trim(request, request.num_tokens)
        return appended


def _needs_context(sampler) -> bool:
    """Does the sampler look at the tokens so far (repetition penalty, constraint), or only at the logits?"""
    return getattr(sampler, "constraint", None) is not None or getattr(sampler, "repetition_penalty", None) not in (
        None, 1.0)


def _target_scores(request: Request, rows: torch.Tensor, draft_tokens: list[int]) -> torch.Tensor:
    """The processed scores at each verified position; one call for all rows unless the context matters."""
    if not _needs_context(request.sampler):
        return request.sampler.process(rows)
    return torch.cat([request.sampler.process(rows[j:j + 1], request.ids_with(draft_tokens[:j]))
                      for j in range(len(draft_tokens) + 1)])


@torch.no_grad()
def speculative_generate(target: Transformer, draft: Transformer, input_ids: torch.Tensor, max_new_tokens: int, *,
                         gamma: int = 4, sampler: Callable | None = None, generator: torch.Generator | None = None,
                         eos_token_id: int | None = None) -> tuple[torch.Tensor, dict]:
    """Speculative decoding of one sequence, plainly: returns ``(ids [t + new], counts)``.

    ``sampler`` is an ``llmlab.sampling.Sampler`` (None: greedy); its settings shape both the
    draft's q and the target's p. ``generator`` drives the draws (default: the sampler's).
    """
    from llmlab.sampling import Sampler

    sampler = sampler if sampler is not None else Sampler(do_sample=False)
    greedy = not getattr(sampler, "do_sample", False)
    generator = generator if generator is not None else getattr(sampler, "generator", None)
    ids = input_ids.reshape(1, -1).long()
    t_cache, d_cache = target.new_cache(), draft.new_cache()
    counts = dict(passes=0, proposed=0, accepted=0)
    limit = ids.shape[1] + max_new_tokens
    while ids.shape[1] < limit:
        n = ids.shape[1]
        g = min(gamma, limit - n - 1)
        # 1. The draft proposes g tokens (its cache catches up on whatever it has not seen).
        draft_tokens, draft_probs, context = [], [], ids
        for _ in range(g):
            logits = draft(context[:, d_cache.seq_len:], cache=d_cache)[:, -1]
            if greedy:
                token = int(sampler.process(logits, context).argmax())
            else:
                q = sampler.probs(logits, context)
                token = int(torch.multinomial(q, 1, generator=generator))
                draft_probs.append(q[0])
            draft_tokens.append(token)
            context = torch.cat((context, torch.tensor([[token]])), dim=1)
        # 2. The target scores the last known token and the g drafts in one pass.
        logits = target(context[:, t_cache.seq_len:], cache=t_cache)[0, -(g + 1):]
        contexts = [context[:, :n + j] for j in range(g + 1)]
        if greedy:
            targets = [int(sampler.process(logits[j:j + 1], contexts[j]).argmax()) for j in range(g + 1)]
            tokens = speculative_step(draft_tokens, targets)
            accepted = len(tokens) - 1
        else:
            p = torch.cat([sampler.probs(logits[j:j + 1], contexts[j]) for j in range(g + 1)])
            q = torch.stack(draft_probs) if draft_probs else p[:0]
            tokens, accepted = verify_sampled(draft_tokens, q, p, generator)
        counts["passes"] += 1
        counts["proposed"] += g
        counts["accepted"] += accepted
        # 3. Keep what was accepted; forget the cached K/V of the rejected drafts.
        if eos_token_id is not None and eos_token_id in tokens:
            tokens = tokens[:tokens.index(eos_token_id) + 1]
        ids = torch.cat((ids, torch.tensor([tokens])), dim=1)
        t_cache.crop(n + accepted)
        d_cache.crop(min(d_cache.seq_len, n + accepted))
        if eos_token_id is not None and tokens[-1] == eos_token_id:
            break
    return ids[0], counts
