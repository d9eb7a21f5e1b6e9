"""ModelSpec against Hugging Face transformers: exact parameter counts and exact KV-cache bytes.

Every supported model_type is checked on tiny random models (params, and the bytes of the tensors
the returned cache holds after a prompt longer than the sliding window and one more decode step),
and every catalog model on the meta device (no memory, no download).
"""

import pytest
import torch

from llmlab.cost import SUPPORTED_MODEL_TYPES, ModelSpec, get_model, load_model_catalog, model_entry

transformers = pytest.importorskip("transformers")
from transformers import AutoConfig, AutoModelForCausalLM  # noqa: E402

_COMMON = dict(vocab_size=101, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
               num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0)

# One or more tiny configs per model_type, each exercising a feature the count must honour.
TINY = {
    "gpt2": dict(model_type="gpt2", vocab_size=101, n_embd=32, n_layer=3, n_head=4, n_positions=64),
    "gpt2-untied-ninner": dict(model_type="gpt2", vocab_size=101, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                               n_inner=40, tie_word_embeddings=False),
    "llama-gqa": dict(model_type="llama", **_COMMON),
    "llama-bias-tied-headdim": dict(model_type="llama", **_COMMON, attention_bias=True, mlp_bias=True, head_dim=16,
                                    tie_word_embeddings=True),
    "mistral-sliding": dict(model_type="mistral", sliding_window=4, **_COMMON),
    "mistral-no-window": dict(model_type="mistral", sliding_window=None, **_COMMON),
    "mixtral-moe": dict(model_type="mixtral", num_local_experts=4, num_experts_per_tok=2, **_COMMON),
    "mixtral-moe-sliding": dict(model_type="mixtral", num_local_experts=3, num_experts_per_tok=1, sliding_window=5,
                                **_COMMON),
    "qwen2-qkv-bias-sliding": dict(model_type="qwen2", use_sliding_window=True, sliding_window=4, max_window_layers=2,
                                   **_COMMON),
    "qwen2-tied": dict(model_type="qwen2", tie_word_embeddings=True, **_COMMON),
    "gemma2-default-headdim": dict(model_type="gemma2", sliding_window=4, **_COMMON),  # head_dim defaults to 256
    "gemma2-headdim": dict(model_type="gemma2", sliding_window=3, head_dim=12, **_COMMON),
    "phi3-sliding": dict(model_type="phi3", sliding_window=5, **_COMMON),
    "phi3-mqa": dict(model_type="phi3", **{**_COMMON, "num_key_value_heads": 1}),
    "qwen3-qknorm-headdim": dict(model_type="qwen3", head_dim=12, **_COMMON),
    "qwen3-sliding-tied": dict(model_type="qwen3", use_sliding_window=True, sliding_window=4, max_window_layers=1,
                               tie_word_embeddings=True, **_COMMON),
    "qwen3moe-dense-layers": dict(model_type="qwen3_moe", num_experts=6, num_experts_per_tok=2,
                                  moe_intermediate_size=20, mlp_only_layers=[0], head_dim=12, **_COMMON),
    "qwen3moe-sparse-step": dict(model_type="qwen3_moe", num_experts=5, num_experts_per_tok=3, moe_intermediate_size=16,
                                 decoder_sparse_step=2, **_COMMON),
    "qwen3moe-sliding": dict(model_type="qwen3_moe", num_experts=4, num_experts_per_tok=1, moe_intermediate_size=16,
                             use_sliding_window=True, sliding_window=5, **_COMMON),
    "deepseekv3-mla-shared": dict(model_type="deepseek_v3", n_routed_experts=8, num_experts_per_tok=2,
                                  moe_intermediate_size=16, n_shared_experts=2, first_k_dense_replace=1, n_group=2,
                                  topk_group=1, q_lora_rank=24, kv_lora_rank=20, qk_nope_head_dim=8,
                                  qk_rope_head_dim=4, v_head_dim=6,
                                  **{**_COMMON, "num_key_value_heads": 4}),
    "deepseekv3-no-qlora-bias": dict(model_type="deepseek_v3", n_routed_experts=4, num_experts_per_tok=3,
                                     moe_intermediate_size=12, n_shared_experts=1, first_k_dense_replace=2, n_group=1,
                                     topk_group=1, q_lora_rank=None, kv_lora_rank=16, qk_nope_head_dim=6,
                                     qk_rope_head_dim=2, v_head_dim=10, attention_bias=True,
                                     **{**_COMMON, "num_key_value_heads": 4}),
    "gptoss-sinks-biases": dict(model_type="gpt_oss", num_local_experts=4, num_experts_per_tok=2, sliding_window=4,
                                head_dim=12, **_COMMON),
}


def _hf_model(config: dict, device=None):
    cfg = dict(config)
    model_type = cfg.pop("model_type")
    hf_config = AutoConfig.for_model(model_type, **cfg)
    if device is None:
        return AutoModelForCausalLM.from_config(hf_config)
    with torch.device(device):
        return AutoModelForCausalLM.from_config(hf_config)


def _n_params(model) -> int:
    return sum(p.numel() for p in model.parameters())  # shared (tied) tensors are yielded once


def _cache_bytes(output) -> int:
    cache = getattr(output, "cache", None) or getattr(output, "past_key_values", None)
    total = 0
    for layer in cache.layers:
        total += layer.keys.numel() * layer.keys.element_size() + layer.values.numel() * layer.values.element_size()
    return total


def test_tiny_configs_cover_every_supported_type():
    assert {c["model_type"] for c in TINY.values()} == set(SUPPORTED_MODEL_TYPES)


@pytest.mark.parametrize("name", sorted(TINY))
def test_param_count_matches_hf_exactly(name):
    spec = ModelSpec.from_hf_config(TINY[name])
    model = _hf_model(TINY[name])
    assert spec.param_count() == _n_params(model)
    b = spec.breakdown()
    assert b["total"] == spec.param_count() == sum(v for k, v in b.items() if k != "total")


@pytest.mark.parametrize("name", sorted(TINY))
def test_kv_cache_bytes_match_hf_cache(name):
    """Sum the bytes of the key/value tensors HF's cache holds after a 9-token prompt (longer than
    every tiny window) and after one more decode step: must equal spec.kv_cache_bytes (sliding="hf")."""
    spec = ModelSpec.from_hf_config(TINY[name])
    model = _hf_model(TINY[name]).eval()
    ids = torch.randint(0, 100, (2, 9))
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
        assert _cache_bytes(out) == spec.kv_cache_bytes(9, batch=2, bytes_per_value=4)
        cache = getattr(out, "cache", None) or out.past_key_values
        out2 = model(input_ids=torch.randint(0, 100, (2, 1)), cache=cache, use_cache=True)
        assert _cache_bytes(out2) == spec.kv_cache_bytes(10, batch=2, bytes_per_value=4)


def _hf_active_params(model, config: dict) -> int:
    """HF's parameters minus, in every experts container (3-D tensors, one slice per expert), the
    share of the experts a token is not routed to: (E - k) / E of each tensor."""
    k = config.get("num_experts_per_tok", 1)
    skipped = 0
    for module in model.modules():
        if type(module).__name__.endswith("Experts"):
            E = module.num_experts
            for p in module.parameters(recurse=False):
                assert p.shape[0] == E and p.numel() % E == 0
                skipped += (E - k) * (p.numel() // E)
    return _n_params(model) - skipped


@pytest.mark.parametrize("name", sorted(TINY))
def test_active_param_count_matches_hf_exactly(name):
    spec = ModelSpec.from_hf_config(TINY[name])
    model = _hf_model(TINY[name], device="meta")
    assert spec.active_param_count() == _hf_active_params(model, TINY[name])
    if spec.is_moe:
        assert spec.active_param_count() < spec.param_count()


def test_moe_layout_fields_follow_hf():
    qwen = ModelSpec.from_hf_config(TINY["qwen3moe-sparse-step"])
    assert qwen.mlp_types == ("dense", "moe", "dense", "moe")  # (i + 1) % decoder_sparse_step == 0
    assert ModelSpec.from_hf_config(TINY["qwen3moe-dense-layers"]).mlp_types == ("dense", "moe", "moe", "moe")
    ds = ModelSpec.from_hf_config(TINY["deepseekv3-mla-shared"])
    assert ds.mlp_types == ("dense", "moe", "moe", "moe") and ds.attention == "mla"
    assert ds.kv_values_per_position == 20 + 4  # the latent and the shared rotary key
    assert ds.breakdown()["shared_experts"] == 3 * 3 * 32 * (2 * 16)
    oss = ModelSpec.from_hf_config(TINY["gptoss-sinks-biases"])
    assert oss.layer_types == ("sliding", "full", "sliding", "full")
    assert oss.breakdown()["router"] == 4 * (32 * 4 + 4)  # router weights and biases


def test_sliding_window_conventions():
    spec = ModelSpec.from_hf_config(TINY["mistral-sliding"])  # window 4 on every layer
    assert spec.kv_tokens_stored(9) == [3] * 4  # HF keeps window - 1 between passes
    assert spec.kv_tokens_stored(9, sliding="window") == [4] * 4
    assert spec.kv_tokens_stored(9, sliding="full") == [9] * 4
    assert spec.kv_tokens_stored(2) == [2] * 4  # below the window nothing is dropped
    gemma = ModelSpec.from_hf_config(TINY["gemma2-headdim"])
    assert gemma.layer_types == ("sliding", "full", "sliding", "full")  # alternating, sliding first
    assert gemma.kv_tokens_stored(9) == [2, 9, 2, 9]
    qwen = ModelSpec.from_hf_config(TINY["qwen2-qkv-bias-sliding"])
    assert qwen.layer_types == ("full", "full", "sliding", "sliding")  # from max_window_layers on
    with pytest.raises(ValueError):
        spec.kv_tokens_stored(9, sliding="rolling")


def test_qwen2_window_needs_use_sliding_window():
    cfg = {**TINY["qwen2-qkv-bias-sliding"], "use_sliding_window": False}
    spec = ModelSpec.from_hf_config(cfg)
    assert set(spec.layer_types) == {"full"} and spec.sliding_window is None


def test_mistral_7b_rolling_buffer_saves_8x_at_32k():
    spec = get_model("mistral-7b-v0.1")
    full = spec.kv_cache_bytes(32768, sliding="full")
    assert full / spec.kv_cache_bytes(32768, sliding="window") == 8.0  # Mistral paper's "8x"
    assert spec.kv_cache_bytes(32768) == 4095 * 131072  # what HF 5.24 actually keeps


CATALOG = sorted(load_model_catalog())


@pytest.mark.parametrize("name", CATALOG)
def test_catalog_param_counts_exact_on_meta_device(name):
    """Exact against HF on the meta device; against the published figure within one unit of its
    last digit (``published_param_count_precision``; vendors round or truncate: Qwen's "3.3B" is
    3.353e9), exact where the source gives an exact count (precision 1)."""
    entry = model_entry(name)
    spec = get_model(name)
    model = _hf_model(entry["config"], device="meta")
    assert spec.param_count() == _n_params(model)
    assert abs(spec.param_count() - entry["published_param_count"]) < entry.get("published_param_count_precision", 1)
    assert spec.active_param_count() == _hf_active_params(model, entry["config"])
    if "published_active_param_count" in entry:
        active = spec.active_param_count(count_embedding=entry["published_active_counts_embedding"])
        assert abs(active - entry["published_active_param_count"]) < entry["published_active_precision"]


def test_todays_moe_models_exact_counts():
    """The exact figures (each equal to the HF meta-device model, see the test above)."""
    expected = {  # total, active (embedding counted), active without the embedding table
        "qwen3-30b-a3b": (30_532_122_624, 3_353_032_704, 3_041_867_776),
        "deepseek-v3": (671_026_404_352, 37_552_282_624, 36_625_603_584),
        "gpt-oss-20b": (20_914_757_184, 4_187_440_704, 3_608_307_264),
        "mixtral-8x7b-v0.1": (46_702_792_704, 12_879_925_248, 12_748_853_248),
    }
    for name, (total, active, active_no_emb) in expected.items():
        spec = get_model(name)
        assert (spec.param_count(), spec.active_param_count(), spec.active_param_count(count_embedding=False)) == (
            total, active, active_no_emb), name
    assert get_model("qwen3-8b").param_count() == 8_190_735_360
    # the chapter's "≈5.5 %" for DeepSeek-V3 holds with DeepSeek's own convention (no embedding table)
    ds = get_model("deepseek-v3")
    assert round(100 * ds.active_param_count(count_embedding=False) / ds.param_count(), 1) == 5.5


def test_latent_attention_caches_the_latent():
    ds = get_model("deepseek-v3")
    assert ds.kv_values_per_position == 512 + 64
    assert ds.kv_bytes_per_token() == 61 * 576 * 2  # 70,272 bytes per token in bf16
    expanded = 61 * 128 * (192 + 128) * 2  # what caching per-head keys and values would take
    assert expanded / ds.kv_bytes_per_token() == pytest.approx(71.1, abs=0.05)
    assert get_model("gpt-oss-20b").kv_bytes_per_token() == 24 * 2 * 8 * 64 * 2
    assert get_model("qwen3-30b-a3b").kv_bytes_per_token() == 48 * 2 * 4 * 128 * 2


def test_published_counts_and_kv_per_token():
    # serving-facts §1b: totals and fp16 KV bytes per token
    expected_kv = {"gpt2": 36_864, "gpt2-medium": 98_304, "gpt2-large": 184_320, "gpt2-xl": 307_200,
                   "llama-2-7b": 524_288, "llama-2-13b": 819_200, "llama-2-70b": 327_680, "llama-3-8b": 131_072,
                   "llama-3-70b": 327_680, "mistral-7b-v0.1": 131_072, "mixtral-8x7b-v0.1": 131_072,
                   "qwen2.5-7b": 57_344}
    for name, kv in expected_kv.items():
        assert get_model(name).kv_bytes_per_token() == kv, name
    # chapter 07 / guide: 0.5 MiB per token for a 7B MHA model in fp16
    assert get_model("llama-2-7b").kv_bytes_per_token() == 0.5 * 2**20


def test_moe_active_params_mixtral():
    spec = get_model("mixtral-8x7b-v0.1")
    assert spec.param_count() == 46_702_792_704
    assert spec.active_param_count() == 12_879_925_248  # "12.9B active", router and embeddings included
    dense = get_model("llama-2-7b")
    assert dense.active_param_count() == dense.param_count()
    b = spec.breakdown()
    assert b["router"] == 32 * 4096 * 8
    assert b["mlp"] == 32 * 8 * 3 * 4096 * 14336


def test_breakdown_honours_each_architectural_feature():
    llama2 = get_model("llama-2-7b")
    b = llama2.breakdown()
    assert b["head"] == b["embedding"] == 32000 * 4096  # untied: the table is counted twice
    assert b["attention"] == 32 * 4 * 4096 * 4096 and b["mlp"] == 32 * 3 * 4096 * 11008
    assert b["norms"] == (32 * 2 + 1) * 4096
    gemma = get_model("gemma-2-9b")
    gb = gemma.breakdown()
    assert gb["head"] == 0  # tied
    assert gemma.q_dim == 16 * 256 != gemma.hidden_size  # explicit head_dim differs from hidden/heads
    assert gb["norms"] == (42 * 4 + 1) * 3584  # four norms per layer
    qwen = get_model("qwen2.5-7b").breakdown()
    assert qwen["attention"] == 28 * (2 * 3584 * 3584 + 2 * 3584 * 512 + 3584 + 2 * 512)  # q/k/v biases
    gpt2 = get_model("gpt2")
    assert gpt2.breakdown()["positions"] == 1024 * 768
    assert gpt2.param_count() == 50257 * 768 + 1024 * 768 + 12 * (12 * 768**2 + 13 * 768) + 2 * 768


def test_explain_shows_the_working():
    text = get_model("mixtral-8x7b-v0.1").explain()
    assert "46,702,792,704" in text and "12,879,925,248" in text and "router" in text
    assert "tied" in get_model("gemma-2-2b").explain()


def test_flops_per_token_is_about_twice_active_params():
    spec = get_model("llama-2-7b")
    matmul = spec.param_count() - spec.breakdown()["embedding"] - spec.breakdown()["norms"]
    assert spec.flops_per_token(0) == 2 * matmul + 4 * 32 * 128 * 32  # one key (itself) per layer
    assert spec.flops_per_token(1000) - spec.flops_per_token(0) == 4 * 32 * 128 * 32 * 1000
    moe = get_model("mixtral-8x7b-v0.1")
    assert moe.flops_per_token(0) < 0.3 * 2 * moe.param_count()
    # sliding layers stop growing once the window is full
    mistral = get_model("mistral-7b-v0.1")
    assert mistral.flops_per_token(10_000) == mistral.flops_per_token(20_000)
    assert spec.forward_flops(8, logits="all") - spec.forward_flops(8, logits="last") == 2 * 7 * 32000 * 4096


def test_from_hf_config_rejects_bad_input():
    with pytest.raises(ValueError, match="unsupported model_type"):
        ModelSpec.from_hf_config({"model_type": "bert"})
    with pytest.raises(TypeError):
        ModelSpec.from_hf_config("llama")
    with pytest.raises(ValueError, match="divide"):
        ModelSpec.from_hf_config({**TINY["llama-gqa"], "num_key_value_heads": 3})
    with pytest.raises(ValueError, match="layer_types"):
        ModelSpec.from_hf_config({**TINY["gemma2-headdim"], "layer_types": ["full_attention"]})
    with pytest.raises(ValueError, match="experts_per_token"):
        ModelSpec.from_hf_config({**TINY["mixtral-moe"], "num_experts_per_tok": 5})


def test_with_changes_one_field():
    spec = get_model("llama-2-7b")
    mqa = spec.with_(n_kv_heads=1)
    assert mqa.kv_bytes_per_token() * 32 == spec.kv_bytes_per_token()
    assert mqa.param_count() < spec.param_count()
