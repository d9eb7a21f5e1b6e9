"""Adapter folders in the layout of Hugging Face PEFT, and the adapters shipped with llmlab.

A folder is ``adapter_config.json`` (PEFT's ``LoraConfig`` fields) and ``adapter_model.safetensors``
(only ``A`` and ``B``, named the PEFT way: ``base_model.model.<HF module name>.lora_A.weight``).
``PeftModel.from_pretrained`` loads a folder written here onto the HF export of the base
(``llmlab.convert_hf.to_hf``), and ``load_adapter`` loads folders written by PEFT.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from pathlib import Path

import torch
from torch import nn

from .. import _safetensors
from .layer import LoRALinear, set_module, lora_layers

__all__ = [
    "ADAPTER_CONFIG",
    "ADAPTER_WEIGHTS",
    "base_fingerprint",
    "load_adapter",
    "read_adapter_config",
    "save_adapter",
]

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"


# ----------------------------------------------------------------------------------------------
# Writing and reading adapter folders
# ----------------------------------------------------------------------------------------------
# An adapter is useless without its base (mistake 6-M4): the folder records which base it was
# trained on, by name and by a fingerprint of the base weights, and loading refuses another base.


def _base_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The base model's tensors under their plain names (``.base_layer`` removed, LoRA weights left out)."""
    state = {}
    for key, tensor in model.state_dict().items():
        if ".lora_A." in key or ".lora_B." in key:
            continue
        state[key.replace(".base_layer.", ".")] = tensor
    return state


def base_fingerprint(model: nn.Module) -> str:
    """SHA-256 of the base weights (names, shapes and float32 values), with any LoRA layers left out.

    The same for a model before and after ``add_lora``; different once an adapter is merged
    into it, or for a model loaded in another precision.
    """
    digest = hashlib.sha256()
    for key, tensor in sorted(_base_state(model).items()):
        t = tensor.detach().to("cpu")
        t = t.float() if t.dtype.is_floating_point else t
        digest.update(f"{key}:{tuple(t.shape)}:{t.dtype}\n".encode())
        digest.update(t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _model_config(model: nn.Module):
    from ..model import ModelConfig  # lazy: keeps lora usable on any nn.Module for the math

    config = getattr(model, "config", None)
    if not isinstance(config, ModelConfig):
        raise TypeError("adapter folders need an llmlab Transformer (its config names the layers the PEFT way)")
    return config


# ----------------------------------------------------------------------------------------------
# The PEFT view of an adapter: one entry per Hugging Face module
# ----------------------------------------------------------------------------------------------
# Each entry is (A, B, r, alpha). Llama-style layers map one to one. GPT-2 fuses q, k and v into one
# Conv1D, c_attn, whose output is the three projections side by side: LoRA on q and v becomes one LoRA
# on c_attn whose A stacks A_q and A_v and whose B puts B_q and B_v in their blocks of rows (zeros
# elsewhere), with the ranks added up. Same function, exactly.


def _pattern(patterns: dict, name: str, default):
    """PEFT's ``rank_pattern`` / ``alpha_pattern`` rule: the first key that matches the end of ``name``."""
    for key, value in (patterns or {}).items():
        if re.match(rf"(.*\.)?({key})$", name):
            return value
    return default


def _peft_entries(config, layers: dict[str, LoRALinear]) -> tuple[dict, dict]:
    """``{hf module: (A, B, r, alpha)}`` for the model's LoRA layers, and how fused GPT-2 entries split back."""
    from ..convert_hf import GPT2_QKV, fused_qkv_name, hf_linear_name

    entries, fused = {}, {}
    for name, layer in layers.items():
        A, B = layer.lora_A.weight.detach(), layer.lora_B.weight.detach()
        fused_name = fused_qkv_name(config, name)
        if fused_name is None:
            entries[hf_linear_name(config, name)] = (A, B, layer.r, layer.alpha)
        else:
            fused.setdefault(fused_name, []).append((name, layer))
    for hf_name, parts in fused.items():
        R = sum(layer.r for _, layer in parts)
        first = parts[0][1]
        # Choose the fused alpha so that its scaling equals the parts' (they share theirs: checked by the caller).
        alpha = first.scaling * (math.sqrt(R) if first.use_rslora else R)
        d = parts[0][1].out_features
        A = torch.cat([layer.lora_A.weight.detach() for _, layer in parts])
        B = torch.zeros(3 * d, R, dtype=A.dtype)
        col = 0
        for name, layer in parts:
            row = GPT2_QKV.index(name.split(".", 2)[2]) * d
            B[row:row + d, col:col + layer.r] = layer.lora_B.weight.detach()
            col += layer.r
        entries[hf_name] = (A, B, R, alpha)
    layout = {hf: [[n, layer.r, layer.alpha] for n, layer in parts] for hf, parts in fused.items()}
    return entries, layout


def _llmlab_entries(config, entries: dict, layout: dict) -> dict:
    """Inverse of ``_peft_entries``: ``{llmlab layer: (A, B, r, alpha)}``.

    A fused GPT-2 entry written here is split back into the layers it came from (``layout``); one
    written by PEFT gives q, k and v each the whole A and their block of B rows (the same function).
    """
    from ..convert_hf import GPT2_QKV, linear_name_from_hf, qkv_names_from_hf

    out = {}
    for hf_name, (A, B, r, alpha) in entries.items():
        parts = qkv_names_from_hf(config, hf_name)
        if parts is None:
            out[linear_name_from_hf(config, hf_name)] = (A, B, r, alpha)
            continue
        d = B.shape[0] // 3
        if hf_name in layout:
            col = 0
            for name, r_part, alpha_part in layout[hf_name]:
                row = GPT2_QKV.index(name.split(".", 2)[2]) * d
                out[name] = (A[col:col + r_part], B[row:row + d, col:col + r_part], r_part, alpha_part)
                col += r_part
        else:
            for i, name in enumerate(parts):
                out[name] = (A, B[i * d:(i + 1) * d], r, alpha)
    return out


def _number(x: float):
    return int(x) if float(x).is_integer() else float(x)


def save_adapter(model: nn.Module, path: str | os.PathLike, *, base_name: str | None = None,
                 dtype: torch.dtype = torch.float32) -> Path:
    """Write the model's LoRA adapter as a PEFT folder: ``adapter_config.json`` + ``adapter_model.safetensors``.

    Tensor names are PEFT's (``base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight``
    for the Llama-style layer ``blocks.0.attn.q_proj``), so ``PeftModel.from_pretrained`` loads the
    folder onto the Hugging Face export of the base (``llmlab.convert_hf.to_hf``). Layers with
    another rank or alpha than the most common one go to PEFT's ``rank_pattern`` / ``alpha_pattern``;
    GPT-2's q, k and v become one LoRA on its fused ``c_attn``. The safetensors metadata add what
    PEFT does not keep: the base's fingerprint (``base_fingerprint``), its name and the llmlab layer
    names. Only ``A`` and ``B`` are written (a few hundred KB, not the model). An adapter must be
    unmerged to be saved (merged, the base weights are no longer the base).
    """
    config = _model_config(model)
    layers = lora_layers(model)
    if not layers:
        raise ValueError("the model has no LoRA layers to save (add_lora or load_adapter first)")
    if any(m.merged for m in layers.values()):
        raise ValueError("the adapter is merged into the base weights: unmerge(model) before saving it")
    if base_name is not None and not isinstance(base_name, str):
        raise TypeError(f"base_name must be a str or None, got {type(base_name).__name__}")
    if dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise ValueError(f"dtype must be float32, float16 or bfloat16, got {dtype}")
    shared = {(m.use_rslora, m.dropout_p) for m in layers.values()}
    if len(shared) != 1:
        raise ValueError(f"the LoRA layers mix (use_rslora, dropout) settings {sorted(shared)}; a PEFT folder has one")
    use_rslora, dropout = shared.pop()
    if config.pos_encoding == "learned" and len({m.scaling for n, m in layers.items() if ".attn." in n
                                                  and n.rsplit(".", 1)[1] in ("q_proj", "k_proj", "v_proj")}) > 1:
        raise ValueError("GPT-2 fuses q, k and v into one layer: their LoRA layers must share one scaling alpha/r")
    entries, layout = _peft_entries(config, layers)
    ranks, alphas = Counter(e[2] for e in entries.values()), Counter(e[3] for e in entries.values())
    r, alpha = ranks.most_common(1)[0][0], alphas.most_common(1)[0][0]
    tensors = {}
    for hf_name, (A, B, _, _) in entries.items():
        tensors[f"base_model.model.{hf_name}.lora_A.weight"] = A.to(dtype).contiguous()
        tensors[f"base_model.model.{hf_name}.lora_B.weight"] = B.to(dtype).contiguous()
    # PEFT matches a target by the end of the module name: "q_proj" (Llama) or "attn.c_proj" (GPT-2,
    # where the attention and the MLP both have a c_proj).
    keep = 2 if config.pos_encoding == "learned" else 1
    peft_config = {
        # The fields every PEFT version since 0.7 reads; nothing else, so older versions load it too.
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_name,
        "revision": None,
        "inference_mode": True,
        "r": r,
        "lora_alpha": _number(alpha),
        "lora_dropout": dropout,
        "target_modules": sorted({".".join(n.split(".")[-keep:]) for n in entries}),
        "bias": "none",
        "fan_in_fan_out": config.pos_encoding == "learned",  # GPT-2's Conv1D stores [in, out]
        "use_rslora": use_rslora,
        "use_dora": False,
        "init_lora_weights": True,
        "modules_to_save": None,
        "layers_to_transform": None,
        "layers_pattern": None,
        "rank_pattern": {re.escape(n): e[2] for n, e in sorted(entries.items()) if e[2] != r},
        "alpha_pattern": {re.escape(n): _number(e[3]) for n, e in sorted(entries.items()) if e[3] != alpha},
    }
    metadata = {
        "format": "pt",
        "llmlab.base_fingerprint": base_fingerprint(model),
        "llmlab.base_name": base_name or "",
        "llmlab.layers": json.dumps(sorted(layers)),
    }
    if layout:
        metadata["llmlab.fused"] = json.dumps(layout, sort_keys=True)
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    _safetensors.save_file(tensors, folder / ADAPTER_WEIGHTS, metadata=metadata)
    (folder / ADAPTER_CONFIG).write_text(json.dumps(peft_config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder


def read_adapter_config(path: str | os.PathLike) -> dict:
    """``adapter_config.json`` of an adapter folder, plus the llmlab metadata of its weights file under ``"llmlab"``."""
    folder = Path(path)
    config_file, weights_file = folder / ADAPTER_CONFIG, folder / ADAPTER_WEIGHTS
    for f in (config_file, weights_file):
        if not f.is_file():
            raise FileNotFoundError(f"{f} is missing: an adapter folder has {ADAPTER_CONFIG} and {ADAPTER_WEIGHTS}")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{config_file} is not valid JSON: {err}") from None
    meta = _safetensors.read_metadata(weights_file)
    config["llmlab"] = {k.split(".", 1)[1]: v for k, v in meta.items() if k.startswith("llmlab.")}
    return config


def _check_peft_config(config: dict) -> None:
    """Refuse PEFT options this module does not implement, instead of loading them wrongly."""
    if config.get("peft_type") != "LORA":
        raise ValueError(f"not a LoRA adapter: peft_type is {config.get('peft_type')!r}")
    unsupported = {
        "use_dora": (config.get("use_dora"), (False, None)),
        "bias": (config.get("bias", "none"), ("none",)),
        "modules_to_save": (config.get("modules_to_save"), (None, [])),
        "lora_bias": (config.get("lora_bias", False), (False,)),
    }
    for key, (value, allowed) in unsupported.items():
        if value not in allowed:
            raise ValueError(f"adapter option {key}={value!r} is not supported by llmlab.lora (supported: {allowed})")


def _read_entries(path: Path, info: dict) -> dict:
    """``{hf module: (A, B, r, alpha)}`` from the weights file, ranks checked against the config."""
    tensors = _safetensors.load_file(path / ADAPTER_WEIGHTS)
    pairs: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in tensors.items():
        for part in ("lora_A", "lora_B"):
            suffix = f".{part}.weight"
            if key.startswith("base_model.model.") and key.endswith(suffix):
                pairs.setdefault(key[len("base_model.model."):-len(suffix)], {})[part] = tensor
                break
        else:
            raise ValueError(f"unexpected tensor {key!r} in the adapter (only lora_A / lora_B weights are supported)")
    entries = {}
    for hf_name, pair in pairs.items():
        if set(pair) != {"lora_A", "lora_B"}:
            raise ValueError(f"layer {hf_name}: the adapter has {sorted(pair)} but needs both lora_A and lora_B")
        A, B = pair["lora_A"], pair["lora_B"]
        r = int(_pattern(info.get("rank_pattern"), hf_name, info["r"]))
        if A.dim() != 2 or B.dim() != 2 or A.shape[0] != r or B.shape[1] != r:
            raise ValueError(f"layer {hf_name}: lora_A {tuple(A.shape)} / lora_B {tuple(B.shape)} do not match r={r}")
        entries[hf_name] = (A, B, r, float(_pattern(info.get("alpha_pattern"), hf_name, info["lora_alpha"])))
    return entries


@torch.no_grad()
def load_adapter(model: nn.Module, path: str | os.PathLike, *, check_base: bool = True,
                 trainable: bool = False) -> nn.Module:
    """Load an adapter folder (written here or by PEFT) onto ``model`` and return it (in place).

    The folder's layers get ``LoRALinear`` wrappers with its ``A``, ``B`` and scaling (per layer,
    following PEFT's ``rank_pattern`` / ``alpha_pattern``); a model that already has LoRA layers on
    the same layers has them replaced (adapter swapping, the base stays shared). Errors, each with a
    clear message: the base is not the one the adapter was trained on (its fingerprint differs;
    ``check_base=False`` skips this check, for PEFT folders there is no fingerprint to check), a
    layer the adapter targets does not exist or has another shape, the model already carries an
    adapter on other layers, or the folder uses PEFT options not implemented here (DoRA, biases,
    ``modules_to_save``). ``trainable=True`` leaves ``A`` and ``B`` trainable.
    """
    config = _model_config(model)
    info = read_adapter_config(path)
    _check_peft_config(info)
    saved = info["llmlab"].get("base_fingerprint")
    if check_base and saved:
        actual = base_fingerprint(model)
        if actual != saved:
            raise ValueError(
                f"this adapter was trained on another base model (base {info['llmlab'].get('base_name') or '?'}, "
                f"fingerprint {saved[:12]}...; this model's is {actual[:12]}...). An adapter only works on its "
                "own base: load the right base, or pass check_base=False if you know what you are doing"
            )
    layout = json.loads(info["llmlab"].get("fused", "{}"))
    adapter = _llmlab_entries(config, _read_entries(Path(path), info), layout)

    existing = lora_layers(model)
    if existing and set(existing) != set(adapter):
        raise ValueError(
            f"the model carries an adapter on other layers ({sorted(existing)[:3]}...) than this one "
            f"({sorted(adapter)[:3]}...): target modules differ; unload(model, merge=False) first"
        )
    if any(m.merged for m in existing.values()):
        raise ValueError("the model's current adapter is merged: unmerge(model) before loading another one")
    use_rslora, dropout = bool(info.get("use_rslora", False)), float(info.get("lora_dropout", 0.0))
    modules = {}
    for name, (A, B, r, alpha) in adapter.items():  # check everything before changing the model
        try:
            base = existing[name].base_layer if name in existing else model.get_submodule(name)
        except AttributeError:
            raise ValueError(f"the adapter targets layer {name!r}, which this model does not have") from None
        if (A.shape[1], B.shape[0]) != (getattr(base, "in_features", None), getattr(base, "out_features", None)):
            raise ValueError(
                f"layer {name}: the adapter is for a {B.shape[0]} x {A.shape[1]} matrix, the model's is "
                f"{getattr(base, 'out_features', '?')} x {getattr(base, 'in_features', '?')} (another base shape)"
            )
        modules[name] = base
    for p in model.parameters():
        p.requires_grad_(False)
    for name, base in modules.items():
        A, B, r, alpha = adapter[name]
        layer = LoRALinear(base, r, alpha, dropout=dropout, use_rslora=use_rslora)
        layer.lora_A.weight.copy_(A)
        layer.lora_B.weight.copy_(B)
        layer.lora_A.weight.requires_grad_(trainable)
        layer.lora_B.weight.requires_grad_(trainable)
        set_module(model, name, layer)
    return model
