"""``llmlab.serve.prefix_cache_savings`` (lab 08's reference) counts what the engine's prefix cache reuses."""

from __future__ import annotations

import pytest
import torch

from llmlab import pretrained
from llmlab.serve import Engine, SamplingParams, prefix_cache_savings


def test_rules_by_hand():
    prompts = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [1, 2, 3, 4], [1, 2, 3, 4, 5], [9, 1, 2], [3, 4, 5]]
    # two full blocks shared; a prompt covered entirely recomputes its last token; nothing after a miss
    assert prefix_cache_savings(prompts, 2) == [0, 4, 3, 4, 0, 0]
    assert prefix_cache_savings([[7, 8], [7, 8, 1], [7, 9, 8]], 1) == [0, 2, 1]
    assert prefix_cache_savings([], 4) == []
    assert all(type(v) is int for v in prefix_cache_savings([(1, 2), (1, 2, 3)], 2))
    for bad in (0, -1, 2.5, 16.0, True):
        with pytest.raises(ValueError):
            prefix_cache_savings([[1, 2]], bad)
    with pytest.raises(ValueError):
        prefix_cache_savings([[1, 2], []], 2)


def test_matches_the_engine_request_by_request():
    model, tok = pretrained.load("es-base")
    g = torch.Generator().manual_seed(3)
    shared = torch.randint(5, 2000, (40,), generator=g).tolist()
    other = torch.randint(5, 2000, (16,), generator=g).tolist()
    prompts = [shared + torch.randint(5, 2000, (int(n),), generator=g).tolist() for n in (3, 0, 24, 9)]
    prompts += [shared[:32], other + shared, shared[:16] + other]
    engine = Engine(model, tok, max_num_seqs=2)
    params = SamplingParams(max_tokens=1, temperature=0)
    measured = [engine.generate([p], params)[0].metrics.prefix_cached_tokens for p in prompts]
    assert measured == prefix_cache_savings(prompts, 16)
    assert sum(measured) > 0
