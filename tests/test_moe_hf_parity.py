"""Parity of llmlab's mixture of experts with HF transformers, on random tiny configs (no downloads).

- ``SparseMoE`` against ``MixtralSparseMoeBlock`` and ``Qwen3MoeSparseMoeBlock``: output and router
  logits to 1e-5 (float32).
- ``load_balancing_loss`` against transformers' ``load_balancing_loss_func`` on the same router
  logits (one layer, several layers, with a padding mask), and on the router logits HF's own model
  returns.
- Whole models converted with ``from_hf`` (``MixtralForCausalLM``, ``Qwen3MoeForCausalLM``, and
  ``Qwen3ForCausalLM`` for the q/k norms): logits to 1e-5 on the plain and KV-cache paths, and
  greedy generation token for token against ``hf_model.generate(do_sample=False)``.

Weights are re-drawn at O(1) scale so that routing is decisive and a wrong expert, a wrong
gate/up split or a missing renormalisation moves the outputs far beyond the tolerance.
"""

import math

import pytest
import torch

transformers = pytest.importorskip("transformers")

from transformers.models.mixtral import modeling_mixtral  # noqa: E402
from transformers.models.qwen3_moe import modeling_qwen3_moe  # noqa: E402

from llmlab.model import Transformer, from_hf  # noqa: E402
from llmlab.moe import SparseMoE, load_balancing_loss, router_logits  # noqa: E402
from test_model_hf_parity import VOCAB, prompt  # noqa: E402  (the same random prompts as the dense parity tests)
ATOL = 1e-5

COMMON = dict(vocab_size=VOCAB, hidden_size=48, intermediate_size=80, num_hidden_layers=3, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5, bos_token_id=None,
              eos_token_id=None, pad_token_id=None)


def spread_weights_(hf_model, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in hf_model.named_parameters():
            if p.dim() >= 2:
                fan_in = p.shape[-1]
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(fan_in))
            else:  # norm gains
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
    return hf_model.eval()


def mixtral(**overrides):
    cfg = transformers.MixtralConfig(**{**COMMON, "num_local_experts": 4, "num_experts_per_tok": 2,
                                        "rope_theta": 500.0, **overrides})
    return spread_weights_(transformers.MixtralForCausalLM(cfg))


def qwen3_moe(**overrides):
    cfg = transformers.Qwen3MoeConfig(**{**COMMON, "num_experts": 6, "num_experts_per_tok": 2,
                                         "moe_intermediate_size": 24, "head_dim": 16, "norm_topk_prob": True,
                                         **overrides})
    return spread_weights_(transformers.Qwen3MoeForCausalLM(cfg))


def qwen3(**overrides):
    cfg = transformers.Qwen3Config(**{**COMMON, "head_dim": 16, **overrides})
    return spread_weights_(transformers.Qwen3ForCausalLM(cfg))


HF_MODELS = {
    "mixtral_top2_of_4": lambda: mixtral(),
    "mixtral_top1_of_3_mqa_tied": lambda: mixtral(num_local_experts=3, num_experts_per_tok=1,
                                                  num_key_value_heads=1, tie_word_embeddings=True),
    "qwen3_moe_normalised": lambda: qwen3_moe(),
    "qwen3_moe_raw_probs_dense_layer_1": lambda: qwen3_moe(norm_topk_prob=False, mlp_only_layers=[1]),
    "qwen3_moe_sparse_step_2_top3": lambda: qwen3_moe(decoder_sparse_step=2, num_experts_per_tok=3),
    "qwen3_dense_qk_norm": lambda: qwen3(),
}


@pytest.fixture(params=list(HF_MODELS), scope="module")
def pair(request):
    hf = HF_MODELS[request.param]()
    return hf, from_hf(hf)


# ---------------------------------------------------------------- one sparse block


def _block_pair(kind: str, **overrides):
    if kind == "mixtral":
        cfg = transformers.MixtralConfig(**{**COMMON, "num_local_experts": 5, "num_experts_per_tok": 2, **overrides})
        hf = modeling_mixtral.MixtralSparseMoeBlock(cfg)
        d_ff, normalize = cfg.intermediate_size, True
    else:
        cfg = transformers.Qwen3MoeConfig(**{**COMMON, "num_experts": 6, "num_experts_per_tok": 3,
                                             "moe_intermediate_size": 24, **overrides})
        hf = modeling_qwen3_moe.Qwen3MoeSparseMoeBlock(cfg)
        d_ff, normalize = cfg.moe_intermediate_size, cfg.norm_topk_prob
    spread_weights_(hf)
    ours = SparseMoE(cfg.hidden_size, d_ff, cfg.num_local_experts, cfg.num_experts_per_tok, normalize=normalize)
    with torch.no_grad():
        ours.router.weight.copy_(hf.gate.weight)
        for e, expert in enumerate(ours.experts):
            expert.gate.weight.copy_(hf.experts.gate_up_proj[e, :d_ff])
            expert.up.weight.copy_(hf.experts.gate_up_proj[e, d_ff:])
            expert.down.weight.copy_(hf.experts.down_proj[e])
    return hf, ours


@pytest.mark.parametrize(
    "kind, overrides",
    [("mixtral", {}), ("mixtral", {"num_experts_per_tok": 1}), ("qwen3_moe", {"norm_topk_prob": True}),
     ("qwen3_moe", {"norm_topk_prob": False})],
)
def test_sparse_block_output_and_router_logits_match_hf(kind, overrides):
    hf, ours = _block_pair(kind, **overrides)
    x = torch.randn(3, 9, 48, generator=torch.Generator().manual_seed(5))
    captured = {}

    def keep_logits(module, inputs, output):  # returns None: the output is left alone
        captured["logits"] = output[0]

    hf.gate.register_forward_hook(keep_logits)
    with torch.no_grad():
        expected = hf(x)
        got = ours(x)
    assert expected.abs().amax() > 0.5  # routing and experts really contribute
    torch.testing.assert_close(got, expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(ours.last_router_logits, captured["logits"], atol=ATOL, rtol=0)
    assert ours.tokens_per_expert.sum() == 27 * hf.gate.top_k


def test_swapping_gate_and_up_breaks_parity():
    """The test can fail: HF's gate_up_proj puts the gate first; the other order is far off."""
    hf, ours = _block_pair("mixtral")
    with torch.no_grad():
        for expert in ours.experts:
            g = expert.gate.weight.clone()
            expert.gate.weight.copy_(expert.up.weight)
            expert.up.weight.copy_(g)
        x = torch.randn(2, 5, 48)
        assert (ours(x) - hf(x)).abs().amax() > 100 * ATOL


# ---------------------------------------------------------------- the auxiliary loss


@pytest.mark.parametrize("n_layers, k, masked", [(1, 1, False), (1, 2, False), (3, 2, False), (3, 3, True)])
def test_aux_loss_matches_hf_load_balancing_loss_func(n_layers, k, masked):
    g = torch.Generator().manual_seed(n_layers * 10 + k)
    batch, seq, n_experts = 3, 8, 6
    layers = tuple(2.0 * torch.randn(batch * seq, n_experts, generator=g) for _ in range(n_layers))
    mask = None
    if masked:
        mask = torch.ones(batch, seq, dtype=torch.long)
        mask[0, :3] = 0  # left padding
        mask[2, :5] = 0
    expected = modeling_mixtral.load_balancing_loss_func(layers, n_experts, k, mask)
    got = load_balancing_loss(layers if n_layers > 1 else layers[0], k, attention_mask=mask)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)


def test_aux_loss_of_a_converted_model_equals_hf_aux_loss():
    hf = mixtral()
    model = from_hf(hf)
    x = prompt()
    with torch.no_grad():
        out = hf(x, output_router_logits=True)
        model(x)
    ours = router_logits(model)
    assert len(ours) == len(out.router_logits) == 3
    for a, b in zip(ours, out.router_logits):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)
    torch.testing.assert_close(load_balancing_loss(ours, 2), out.aux_loss, atol=1e-6, rtol=0)


# ---------------------------------------------------------------- whole models


def test_config_is_translated(pair):
    hf, model = pair
    c, cfg = hf.config, model.config
    assert cfg.n_layers == c.num_hidden_layers and cfg.d_model == c.hidden_size
    assert cfg.n_kv_heads == c.num_key_value_heads and cfg.qk_norm == (c.model_type != "mixtral")
    n_sparse = sum(isinstance(b.mlp, SparseMoE) for b in model.blocks)
    hf_sparse = sum(type(layer.mlp).__name__.endswith("SparseMoeBlock") for layer in hf.model.layers)
    assert n_sparse == hf_sparse
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in hf.parameters())


# The whole-model checks of test_model_hf_parity (logits to 1e-5 on the fast and readable paths and
# through the KV cache, greedy generation token for token), run here on the MoE pairs of the
# ``pair`` fixture above: pytest resolves the fixture in the module that collects the test.
from test_model_hf_parity import (  # noqa: E402
    test_greedy_generation_matches_hf,  # noqa: F401
    test_logits_match,  # noqa: F401
    test_logits_match_through_the_kv_cache,  # noqa: F401
)


def test_round_trip_through_state_dict_and_config_dict():
    model = from_hf(qwen3_moe(mlp_only_layers=[0]))
    clone = Transformer(model.config.to_dict())
    clone.load_state_dict(model.state_dict())
    x = prompt()
    assert torch.equal(clone.eval()(x), model(x))


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: mixtral(sliding_window=8), "sliding"),
        (lambda: qwen3_moe(use_sliding_window=True, sliding_window=8), "sliding"),
        (lambda: qwen3_moe(attention_bias=True), "attention_bias"),
        (lambda: qwen3_moe(hidden_act="gelu"), "hidden_act"),
        (lambda: mixtral(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4}), "rope_type"),
    ],
)
def test_unsupported_moe_configs_raise(build, match):
    with pytest.raises(ValueError, match=match):
        from_hf(build())
