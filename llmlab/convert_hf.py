"""Convert Hugging Face causal LMs into ``llmlab.model.Transformer``: GPT-2, Llama, Qwen3, and the
mixtures of experts Mixtral and Qwen3-MoE.

The converted model computes the same logits (to float32 rounding) and, greedy, the same tokens.
Nothing is downloaded here: you pass a model object you already have. This module does not
even import ``transformers``; it reads the model's config and weights.

Loading a real model (needs internet once, e.g. on Colab)::

    !pip install llmlab transformers
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from llmlab.model import from_hf, generate

    # GPT-2 small: 124,439,808 parameters, about 0.5 GB in float32.
    hf = AutoModelForCausalLM.from_pretrained("openai-community/gpt2")
    tok = AutoTokenizer.from_pretrained("openai-community/gpt2")
    model = from_hf(hf).eval()
    ids = tok("The bank approved the", return_tensors="pt").input_ids
    out = generate(model, ids, max_new_tokens=20, eos_token_id=tok.eos_token_id)
    print(tok.decode(out[0]))

    # A Llama with grouped-query attention (TinyLlama 1.1B: 32 query heads share 4 K/V heads).
    # bfloat16 halves the memory (the argument is called torch_dtype in transformers 4.x).
    hf = AutoModelForCausalLM.from_pretrained("TinyLlama/TinyLlama-1.1B-Chat-v1.0", dtype=torch.bfloat16)
    model = from_hf(hf).eval()     # keeps the dtype and device of hf

Mixtral and Qwen3-MoE (e.g. ``Qwen/Qwen3-30B-A3B``) become a ``Transformer`` whose MLPs are
``llmlab.moe.SparseMoE`` layers; HF stores each layer's experts as two 3-D tensors
(``gate_up_proj`` ``[experts, 2·d_ff, d]`` and ``down_proj`` ``[experts, d, d_ff]``), which are
split here into one SwiGLU per expert. Qwen3 and Qwen3-MoE normalise each head's q and k
(``qk_norm``). Sliding-window attention is not implemented: configs that use it are refused.

Llama 3.x checkpoints use ``rope_type="llama3"`` (frequency-dependent RoPE scaling), which this
module does not implement: ``from_hf`` refuses them with a clear error instead of returning a
model that is silently wrong on long contexts.
"""

from __future__ import annotations

import torch
from torch import nn

from llmlab.model_config import ModelConfig
from llmlab.transformer import Transformer

__all__ = [
    "config_from_hf",
    "from_hf",
    "fused_qkv_name",
    "hf_config",
    "hf_linear_name",
    "linear_name_from_hf",
    "qkv_names_from_hf",
    "to_hf",
]

SUPPORTED = ("GPT2LMHeadModel (model_type 'gpt2'), LlamaForCausalLM ('llama'), Qwen3ForCausalLM ('qwen3'), "
             "MixtralForCausalLM ('mixtral') and Qwen3MoeForCausalLM ('qwen3_moe')")
_MODEL_TYPES = ("gpt2", "llama", "qwen3", "mixtral", "qwen3_moe")

# The linear layers of one block: llmlab name -> HF name, inside ``blocks.N`` / ``model.layers.N``.
LLAMA_LINEARS = {
    "attn.q_proj": "self_attn.q_proj",
    "attn.k_proj": "self_attn.k_proj",
    "attn.v_proj": "self_attn.v_proj",
    "attn.o_proj": "self_attn.o_proj",
    "mlp.gate": "mlp.gate_proj",
    "mlp.up": "mlp.up_proj",
    "mlp.down": "mlp.down_proj",
}
# GPT-2 (inside ``transformer.h.N``) fuses q, k and v into one Conv1D, c_attn, whose output is the three
# projections side by side (in this order); the other linear layers map one to one.
GPT2_LINEARS = {"attn.o_proj": "attn.c_proj", "mlp.up": "mlp.c_fc", "mlp.down": "mlp.c_proj"}
GPT2_QKV = ("attn.q_proj", "attn.k_proj", "attn.v_proj")
GPT2_FUSED = "attn.c_attn"


def _unsupported(what: str) -> ValueError:
    return ValueError(f"from_hf does not support {what}; supported: {SUPPORTED}")


def _hf_config(hf_model):
    config = getattr(hf_model, "config", None)
    if config is None or not isinstance(hf_model, nn.Module):
        raise TypeError(f"hf_model must be a Hugging Face PreTrainedModel, got {type(hf_model).__name__}")
    model_type = getattr(config, "model_type", None)
    if model_type not in _MODEL_TYPES:
        raise _unsupported(f"model_type {model_type!r} ({type(hf_model).__name__})")
    if not hasattr(hf_model, "lm_head"):
        raise _unsupported(
            f"{type(hf_model).__name__}, which has no LM head; load it with AutoModelForCausalLM"
        )
    return config, model_type


def _is_tied(hf_model) -> bool:
    # Trust the tensors, not only the config flag: tied means one storage for both matrices.
    return hf_model.get_output_embeddings().weight is hf_model.get_input_embeddings().weight


def _gpt2_config(hf_model, c) -> ModelConfig:
    activations = {"gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "gelu": "gelu_exact"}
    if c.activation_function not in activations:
        raise _unsupported(f"GPT-2 activation_function {c.activation_function!r} (expected one of {sorted(activations)})")
    if not getattr(c, "scale_attn_weights", True):
        raise _unsupported("GPT-2 with scale_attn_weights=False (scores not divided by sqrt(head_dim))")
    if getattr(c, "scale_attn_by_inverse_layer_idx", False):
        raise _unsupported("GPT-2 with scale_attn_by_inverse_layer_idx=True")
    if getattr(c, "add_cross_attention", False):
        raise _unsupported("GPT-2 with cross-attention (add_cross_attention=True)")
    # reorder_and_upcast_attn only changes the rounding in mixed precision: same function, accepted.
    return ModelConfig(
        vocab_size=c.vocab_size,
        n_layers=c.n_layer,
        d_model=c.n_embd,
        n_heads=c.n_head,
        n_kv_heads=c.n_head,
        d_ff=c.n_inner if c.n_inner is not None else 4 * c.n_embd,
        max_seq_len=c.n_positions,
        pos_encoding="learned",
        norm="layernorm",
        mlp=activations[c.activation_function],
        bias=True,
        tie_embeddings=_is_tied(hf_model),
        norm_eps=float(c.layer_norm_epsilon),
        dropout=0.0,  # converted models are for inference
    )


def _llama_rope(c) -> float:
    """rope_theta, after checking that the RoPE variant is the plain one."""
    params = getattr(c, "rope_parameters", None)  # transformers >= 5
    if params:
        if any(isinstance(v, dict) for v in params.values()):
            raise _unsupported(f"per-layer-type RoPE parameters {params}")
        rope_type = params.get("rope_type", params.get("type", "default"))
        theta = params.get("rope_theta", getattr(c, "rope_theta", 10000.0))
        partial = params.get("partial_rotary_factor", 1.0)
    else:  # transformers 4.x
        scaling = getattr(c, "rope_scaling", None) or {}
        rope_type = scaling.get("rope_type", scaling.get("type", "default"))
        theta = getattr(c, "rope_theta", 10000.0)
        partial = getattr(c, "partial_rotary_factor", 1.0)
    if rope_type != "default":
        raise _unsupported(f"rope_type {rope_type!r} (only plain RoPE, rope_type 'default', is implemented)")
    if partial != 1.0:
        raise _unsupported(f"partial_rotary_factor={partial} (RoPE on part of each head)")
    return float(theta)


def _llama_config(hf_model, c, **extra) -> ModelConfig:
    """Llama's fields (also Qwen3's and the MoE models'); ``extra`` adds q/k norms or experts."""
    if c.hidden_act != "silu":
        raise _unsupported(f"Llama hidden_act {c.hidden_act!r} (SwiGLU needs 'silu')")
    attention_bias, mlp_bias = bool(getattr(c, "attention_bias", False)), bool(getattr(c, "mlp_bias", False))
    if attention_bias != mlp_bias:
        raise _unsupported(
            f"attention_bias={attention_bias} with mlp_bias={mlp_bias}: llmlab has one bias flag for every Linear"
        )
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    return ModelConfig(
        vocab_size=c.vocab_size,
        n_layers=c.num_hidden_layers,
        d_model=c.hidden_size,
        n_heads=c.num_attention_heads,
        n_kv_heads=c.num_key_value_heads or c.num_attention_heads,
        d_ff=c.intermediate_size,
        max_seq_len=c.max_position_embeddings,
        pos_encoding="rope",
        norm="rmsnorm",
        mlp="swiglu",
        bias=attention_bias,
        tie_embeddings=_is_tied(hf_model),
        norm_eps=float(c.rms_norm_eps),
        rope_theta=_llama_rope(c),
        head_dim=head_dim,
        dropout=0.0,
        **extra,
    )


def config_from_hf(hf_model) -> ModelConfig:
    """The ``ModelConfig`` equivalent to a supported HF causal LM (raises ``ValueError`` if unsupported)."""
    c, model_type = _hf_config(hf_model)
    if model_type == "gpt2":
        return _gpt2_config(hf_model, c)
    if model_type == "llama":
        return _llama_config(hf_model, c)
    return _qwen3_or_moe_config(hf_model, c, model_type)


def _gpt2_state_dict(hf_model, config: ModelConfig) -> dict[str, torch.Tensor]:
    # GPT-2 stores its Linear layers as "Conv1D": weight [in, out], y = x @ W + b.
    # nn.Linear stores [out, in], y = x @ W.T + b, hence the transposes.
    hf = hf_model.transformer
    d = config.d_model
    sd = {"tok_emb.weight": hf.wte.weight, "pos_emb.table.weight": hf.wpe.weight}
    for i, h in enumerate(hf.h):
        p = f"blocks.{i}."
        w, b = h.attn.c_attn.weight, h.attn.c_attn.bias  # q, k, v side by side: [d, 3d]
        for j, name in enumerate(("q_proj", "k_proj", "v_proj")):
            sd[p + f"attn.{name}.weight"] = w[:, j * d : (j + 1) * d].t()
            sd[p + f"attn.{name}.bias"] = b[j * d : (j + 1) * d]
        sd[p + "attn.o_proj.weight"] = h.attn.c_proj.weight.t()
        sd[p + "attn.o_proj.bias"] = h.attn.c_proj.bias
        sd[p + "attn_norm.weight"], sd[p + "attn_norm.bias"] = h.ln_1.weight, h.ln_1.bias
        sd[p + "mlp_norm.weight"], sd[p + "mlp_norm.bias"] = h.ln_2.weight, h.ln_2.bias
        sd[p + "mlp.up.weight"], sd[p + "mlp.up.bias"] = h.mlp.c_fc.weight.t(), h.mlp.c_fc.bias
        sd[p + "mlp.down.weight"], sd[p + "mlp.down.bias"] = h.mlp.c_proj.weight.t(), h.mlp.c_proj.bias
    sd["final_norm.weight"], sd["final_norm.bias"] = hf.ln_f.weight, hf.ln_f.bias
    sd["lm_head.weight"] = hf_model.lm_head.weight
    return sd


def _llama_state_dict(hf_model, config: ModelConfig, with_mlp: bool = True) -> dict[str, torch.Tensor]:
    # Same layout as ours (nn.Linear everywhere). HF's checkpoint already permuted q/k rows for
    # the "rotate half" RoPE pairing, which is the one llmlab uses, so no permutation is needed.
    hf = hf_model.model
    sd = {"tok_emb.weight": hf.embed_tokens.weight}
    for i, layer in enumerate(hf.layers):
        p = f"blocks.{i}."
        hf_params = dict(layer.named_parameters())
        for ours, theirs in LLAMA_LINEARS.items():
            if not with_mlp and ours.startswith("mlp."):
                continue
            sd[p + ours + ".weight"] = hf_params[theirs + ".weight"]
            if config.bias:
                sd[p + ours + ".bias"] = hf_params[theirs + ".bias"]
        sd[p + "attn_norm.weight"] = layer.input_layernorm.weight
        sd[p + "mlp_norm.weight"] = layer.post_attention_layernorm.weight
    sd["final_norm.weight"] = hf.norm.weight
    sd["lm_head.weight"] = hf_model.lm_head.weight
    return sd


# ---------------------------------------------------------------------------------------------
# Qwen3, Mixtral and Qwen3-MoE: Llama's layout plus q/k norms (Qwen3) and sparse MoE layers
# ---------------------------------------------------------------------------------------------


def _hf_dense_layers(c, model_type: str) -> list[int]:
    """Layers whose MLP stays dense. Mixtral: none. Qwen3-MoE: ``mlp_only_layers`` and, with
    ``decoder_sparse_step`` s, every layer i with ``(i + 1) % s != 0`` (HF's rule)."""
    if model_type == "mixtral":
        return []
    step, only = c.decoder_sparse_step, set(c.mlp_only_layers or [])
    return [i for i in range(c.num_hidden_layers) if i in only or (i + 1) % step != 0]


def _qwen3_or_moe_config(hf_model, c, model_type: str) -> ModelConfig:
    if getattr(c, "sliding_window", None) is not None:
        raise _unsupported(f"sliding-window attention (sliding_window={c.sliding_window}); llmlab attends to every position")
    if getattr(c, "attention_bias", False):
        raise _unsupported("attention_bias=True in a model whose MLPs have no biases")
    moe = {}
    if model_type != "qwen3":
        n_experts = c.num_local_experts  # Qwen3-MoE maps num_experts to this name
        dense = _hf_dense_layers(c, model_type)
        if n_experts < 1 or len(dense) == c.num_hidden_layers:
            raise _unsupported(f"a {model_type} config without sparse layers (num_experts={n_experts})")
        moe = dict(
            n_experts=n_experts,
            n_experts_per_token=c.num_experts_per_tok,
            moe_d_ff=c.intermediate_size if model_type == "mixtral" else c.moe_intermediate_size,
            moe_normalize=True if model_type == "mixtral" else bool(c.norm_topk_prob),
            dense_layers=dense,
        )
    return _llama_config(hf_model, c, qk_norm=model_type != "mixtral", **moe)


def _moe_state_dict(hf_model, config: ModelConfig) -> dict[str, torch.Tensor]:
    """Llama's names for attention, norms and dense MLPs; each sparse layer's router and experts
    split out of HF's stacked tensors."""
    sd = _llama_state_dict(hf_model, config, with_mlp=False)
    d_ff = config.moe_d_ff
    for i, layer in enumerate(hf_model.model.layers):
        p = f"blocks.{i}."
        if config.qk_norm:
            sd[p + "attn.q_norm.weight"] = layer.self_attn.q_norm.weight
            sd[p + "attn.k_norm.weight"] = layer.self_attn.k_norm.weight
        if not config.is_moe_layer(i):
            sd[p + "mlp.gate.weight"] = layer.mlp.gate_proj.weight
            sd[p + "mlp.up.weight"] = layer.mlp.up_proj.weight
            sd[p + "mlp.down.weight"] = layer.mlp.down_proj.weight
            continue
        sd[p + "mlp.router.weight"] = layer.mlp.gate.weight  # [n_experts, d]
        gate_up, down = layer.mlp.experts.gate_up_proj, layer.mlp.experts.down_proj
        if gate_up.shape != (config.n_experts, 2 * d_ff, config.d_model):
            raise _unsupported(f"experts.gate_up_proj of shape {tuple(gate_up.shape)} (expected [E, 2*d_ff, d])")
        for e in range(config.n_experts):
            # HF computes gate, up = chunk(x @ gate_up[e].T, 2): the first d_ff rows are the gate.
            sd[p + f"mlp.experts.{e}.gate.weight"] = gate_up[e, :d_ff]
            sd[p + f"mlp.experts.{e}.up.weight"] = gate_up[e, d_ff:]
            sd[p + f"mlp.experts.{e}.down.weight"] = down[e]
    return sd


def _empty_model(config: ModelConfig, dtype: torch.dtype, device: torch.device) -> Transformer:
    # Build on the "meta" device (shapes only), then allocate in the target dtype: no random
    # initialisation and no float32 copy of a large model. GPT-2 and Llama have no buffers
    # (RoPE is computed on the fly), so nothing is left uninitialised after to_empty.
    with torch.device("meta"):
        model = Transformer(config)
    model = model.to(dtype=dtype).to_empty(device=device)
    if config.tie_embeddings:
        model.lm_head.weight = model.tok_emb.weight  # to_empty gives each a separate tensor: tie again
    return model


@torch.no_grad()
def from_hf(hf_model) -> Transformer:
    """A ``Transformer`` with the weights of a HF ``GPT2LMHeadModel``, ``LlamaForCausalLM``,
    ``Qwen3ForCausalLM``, ``MixtralForCausalLM`` or ``Qwen3MoeForCausalLM``.

    The weights are copied (the two models do not share memory); dtype and device follow
    ``hf_model``. Unsupported models or options (other architectures, RoPE scaling, attention
    biases without MLP biases, ...) raise ``ValueError``. See the module docstring for loading
    real checkpoints with ``AutoModelForCausalLM.from_pretrained``.
    """
    config = config_from_hf(hf_model)
    if config.pos_encoding == "learned":
        state = _gpt2_state_dict(hf_model, config)
    elif config.n_experts or config.qk_norm:
        state = _moe_state_dict(hf_model, config)
    else:
        state = _llama_state_dict(hf_model, config)
    reference = hf_model.get_input_embeddings().weight
    model = _empty_model(config, reference.dtype, reference.device)
    model.load_state_dict(state, strict=True)  # strict: every weight must be accounted for
    return model.eval()


# ----------------------------------------------------------------------------------------------
# Layer names on both sides (used by llmlab.lora to write and read PEFT adapter folders)
# ----------------------------------------------------------------------------------------------


def _layer_table(config: ModelConfig) -> tuple[str, dict[str, str]]:
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
    if config.pos_encoding == "learned" and config.norm == "layernorm":
        return "transformer.h", GPT2_LINEARS
    if config.pos_encoding == "rope" and config.norm == "rmsnorm" and config.mlp == "swiglu":
        return "model.layers", LLAMA_LINEARS
    raise ValueError(f"only GPT-2-style and Llama-style configs have Hugging Face names, got {config}")


def _block_of(name: str, config: ModelConfig) -> tuple[str, str] | None:
    block, _, layer = name.partition(".")[2].partition(".")
    if name.startswith("blocks.") and block.isdigit() and int(block) < config.n_layers:
        return block, layer
    return None


def hf_linear_name(config: ModelConfig, name: str) -> str:
    """The HF module name of an llmlab linear layer: ``blocks.3.attn.q_proj`` -> ``model.layers.3.self_attn.q_proj``."""
    prefix, table = _layer_table(config)
    found = _block_of(name, config)
    if found is None:
        raise ValueError(f"{name!r} is not a layer of a block (expected blocks.N.attn.q_proj, ..., N < {config.n_layers})")
    block, layer = found
    if layer not in table:
        fused = " (GPT-2 fuses q, k and v into one c_attn layer)" if prefix == "transformer.h" else ""
        raise ValueError(f"layer {name!r} has no Hugging Face counterpart{fused}; known: {sorted(table)}")
    return f"{prefix}.{block}.{table[layer]}"


def fused_qkv_name(config: ModelConfig, name: str) -> str | None:
    """GPT-2's fused layer holding ``name`` (``blocks.3.attn.k_proj`` -> ``transformer.h.3.attn.c_attn``), else None."""
    prefix, _ = _layer_table(config)
    found = _block_of(name, config)
    if prefix != "transformer.h" or found is None or found[1] not in GPT2_QKV:
        return None
    return f"{prefix}.{found[0]}.{GPT2_FUSED}"


def qkv_names_from_hf(config: ModelConfig, hf_name: str) -> list[str] | None:
    """The llmlab q, k, v layers inside GPT-2's fused ``transformer.h.N.attn.c_attn``, else None."""
    prefix, _ = _layer_table(config)
    rest = hf_name[len(prefix) + 1:] if prefix == "transformer.h" and hf_name.startswith(prefix + ".") else ""
    block, _, layer = rest.partition(".")
    if not block.isdigit() or int(block) >= config.n_layers or layer != GPT2_FUSED:
        return None
    return [f"blocks.{block}.{name}" for name in GPT2_QKV]


def linear_name_from_hf(config: ModelConfig, hf_name: str) -> str:
    """Inverse of ``hf_linear_name``: ``model.layers.3.mlp.up_proj`` -> ``blocks.3.mlp.up``."""
    prefix, table = _layer_table(config)
    inverse = {theirs: ours for ours, theirs in table.items()}
    rest = hf_name[len(prefix) + 1:] if hf_name.startswith(prefix + ".") else ""
    block, _, layer = rest.partition(".")
    if not block.isdigit() or int(block) >= config.n_layers or layer not in inverse:
        raise ValueError(
            f"{hf_name!r} is not a linear layer of this model (expected {prefix}.N.<{'|'.join(sorted(inverse))}>, "
            f"N < {config.n_layers})"
        )
    return f"blocks.{block}.{inverse[layer]}"


# ----------------------------------------------------------------------------------------------
# Export: llmlab Transformer -> Hugging Face model (the inverse of from_hf)
# ----------------------------------------------------------------------------------------------


def _export_kind(config: ModelConfig) -> str:
    """"gpt2" or "llama" if the config has an exact HF counterpart, else ``ValueError`` saying what differs."""
    if config.qk_norm or config.n_experts:
        raise ValueError(
            "to_hf exports GPT-2- and Llama-style models only; this one has "
            + ("q/k norms (Qwen3)" if config.qk_norm else "")
            + (" and " if config.qk_norm and config.n_experts else "")
            + (f"mixture-of-experts layers (n_experts={config.n_experts})" if config.n_experts else "")
        )
    if config.pos_encoding == "learned" and config.norm == "layernorm" and config.mlp in ("gelu", "gelu_exact"):
        if not config.bias:
            raise ValueError("GPT2LMHeadModel always has biases: cannot export a GPT-2-style model with bias=False")
        if config.n_kv_heads != config.n_heads or config.head_dim * config.n_heads != config.d_model:
            raise ValueError("GPT2LMHeadModel has plain multi-head attention with head_dim = d_model / n_heads")
        return "gpt2"
    if config.pos_encoding == "rope" and config.norm == "rmsnorm" and config.mlp == "swiglu":
        return "llama"
    raise ValueError(
        "only GPT-2-style (learned positions, LayerNorm, GELU) and Llama-style (RoPE, RMSNorm, SwiGLU) models "
        f"have a Hugging Face counterpart; got pos_encoding={config.pos_encoding!r}, norm={config.norm!r}, mlp={config.mlp!r}"
    )


def hf_config(config: ModelConfig, *, tokenizer=None):
    """The ``GPT2Config`` / ``LlamaConfig`` of an llmlab ``ModelConfig`` (special-token ids from ``tokenizer``)."""
    import transformers  # lazy: only the export needs it

    kind = _export_kind(config)
    ids = {"bos_token_id": None, "eos_token_id": None, "pad_token_id": None}
    if tokenizer is not None:
        ids = {"bos_token_id": tokenizer.bos_id, "eos_token_id": tokenizer.eos_id, "pad_token_id": tokenizer.pad_id}
    if kind == "gpt2":
        return transformers.GPT2Config(
            vocab_size=config.vocab_size, n_positions=config.max_seq_len, n_embd=config.d_model,
            n_layer=config.n_layers, n_head=config.n_heads, n_inner=config.d_ff,
            activation_function="gelu_new" if config.mlp == "gelu" else "gelu",
            layer_norm_epsilon=config.norm_eps, tie_word_embeddings=config.tie_embeddings,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **ids,
        )
    return transformers.LlamaConfig(
        vocab_size=config.vocab_size, hidden_size=config.d_model, intermediate_size=config.d_ff,
        num_hidden_layers=config.n_layers, num_attention_heads=config.n_heads,
        num_key_value_heads=config.n_kv_heads, head_dim=config.head_dim,
        max_position_embeddings=config.max_seq_len, rms_norm_eps=config.norm_eps, rope_theta=config.rope_theta,
        hidden_act="silu", attention_bias=config.bias, mlp_bias=config.bias,
        tie_word_embeddings=config.tie_embeddings, attention_dropout=0.0, **ids,
    )


def _to_gpt2_state_dict(sd: dict[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    # The inverse of _gpt2_state_dict: nn.Linear [out, in] -> Conv1D [in, out], q/k/v fused into c_attn.
    out = {"transformer.wte.weight": sd["tok_emb.weight"], "transformer.wpe.weight": sd["pos_emb.table.weight"]}
    for i in range(config.n_layers):
        p, h = f"blocks.{i}.", f"transformer.h.{i}."
        qkv = [p + f"attn.{n}_proj" for n in "qkv"]
        out[h + "attn.c_attn.weight"] = torch.cat([sd[n + ".weight"].t() for n in qkv], dim=1)
        out[h + "attn.c_attn.bias"] = torch.cat([sd[n + ".bias"] for n in qkv])
        for ours, theirs in GPT2_LINEARS.items():
            out[h + theirs + ".weight"] = sd[p + ours + ".weight"].t()
            out[h + theirs + ".bias"] = sd[p + ours + ".bias"]
        for ours, theirs in (("attn_norm", "ln_1"), ("mlp_norm", "ln_2")):
            out[h + theirs + ".weight"], out[h + theirs + ".bias"] = sd[p + ours + ".weight"], sd[p + ours + ".bias"]
    out["transformer.ln_f.weight"], out["transformer.ln_f.bias"] = sd["final_norm.weight"], sd["final_norm.bias"]
    out["lm_head.weight"] = sd["lm_head.weight"]
    return out


def _to_llama_state_dict(sd: dict[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    out = {"model.embed_tokens.weight": sd["tok_emb.weight"]}
    for i in range(config.n_layers):
        p, h = f"blocks.{i}.", f"model.layers.{i}."
        for ours, theirs in LLAMA_LINEARS.items():
            out[h + theirs + ".weight"] = sd[p + ours + ".weight"]
            if config.bias:
                out[h + theirs + ".bias"] = sd[p + ours + ".bias"]
        out[h + "input_layernorm.weight"] = sd[p + "attn_norm.weight"]
        out[h + "post_attention_layernorm.weight"] = sd[p + "mlp_norm.weight"]
    out["model.norm.weight"] = sd["final_norm.weight"]
    out["lm_head.weight"] = sd["lm_head.weight"]
    return out


@torch.no_grad()
def to_hf(model: Transformer, *, tokenizer=None):
    """A HF ``GPT2LMHeadModel`` or ``LlamaForCausalLM`` with the weights of an llmlab ``Transformer``.

    The inverse of ``from_hf``: same logits (float32 rounding), weights copied, dtype and device
    kept, eval mode. ``tokenizer`` (an ``llmlab.tokenizer.BPETokenizer``) fills in the special-token
    ids of the config. Save it the HF way to get a folder that transformers and PEFT load offline::

        hf = to_hf(model, tokenizer=tok)
        hf.save_pretrained("es-base-hf")       # config.json + model.safetensors
        # elsewhere: AutoModelForCausalLM.from_pretrained("es-base-hf")

    A model with LoRA layers is refused: export the base (``llmlab.lora.unload(model, merge=False)``)
    and save the adapter with ``llmlab.lora.save_adapter`` (PEFT loads it on top), or merge it
    first (``llmlab.lora.unload(model)``) to export the adapted model as one.
    """
    import transformers  # lazy

    if not isinstance(model, Transformer):
        raise TypeError(f"model must be an llmlab Transformer, got {type(model).__name__}")
    if any(".lora_" in name for name, _ in model.named_parameters()):
        raise ValueError(
            "the model has LoRA layers: export the base (llmlab.lora.unload(model, merge=False)) and save the adapter "
            "with llmlab.lora.save_adapter, or merge it into the weights first (llmlab.lora.unload(model))"
        )
    config = model.config
    hf_cfg = hf_config(config, tokenizer=tokenizer)
    sd = model.state_dict()
    state = _to_gpt2_state_dict(sd, config) if _export_kind(config) == "gpt2" else _to_llama_state_dict(sd, config)
    reference = model.tok_emb.weight
    cls = transformers.GPT2LMHeadModel if _export_kind(config) == "gpt2" else transformers.LlamaForCausalLM
    hf_model = cls(hf_cfg).to(dtype=reference.dtype, device=reference.device)
    missing, unexpected = hf_model.load_state_dict({k: v.detach().clone() for k, v in state.items()}, strict=False)
    # GPT-2 keeps a causal-mask buffer in some versions (not a weight); everything else must be there.
    missing = [k for k in missing if not k.endswith(".attn.bias") and not k.endswith(".attn.masked_bias")]
    if missing or unexpected:
        raise RuntimeError(f"export mismatch: missing {missing}, unexpected {unexpected}")
    if config.tie_embeddings:
        hf_model.tie_weights()
    return hf_model.eval()
