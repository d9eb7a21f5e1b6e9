"""Adapter folders in the layout of Hugging Face PEFT, and the adapters shipped with llmlab.

A folder is ``adapter_config.json`` (PEFT's ``LoraConfig`` fields) and ``adapter_model.safetensors``
(only ``A`` and ``B``, named the PEFT way: ``base_model.model.<HF module name>.lora_A.weight``).
``PeftModel.from_pretrained`` loads a folder written here onto the HF export of the base
(``llmlab.convert_hf.to_hf``), and ``load_adapter`` loads folders written by PEFT.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources
from pathlib import Path

import torch
from torch import nn

from .. import _safetensors
from .layer import LoRALinear, _set_module, lora_layers

__all__ = [
    "ADAPTER_CONFIG",
    "ADAPTER_WEIGHTS",
    "base_fingerprint",
    "load_adapter",
    "read_adapter_config",
    "save_adapter",
    "shipped_adapter",
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


def _layer_settings(layers: dict[str, LoRALinear]) -> tuple[int, float, bool, float]:
    """The (r, alpha, use_rslora, dropout) shared by every layer (PEFT folders here use one setting)."""
    settings = {(m.r, m.alpha, m.use_rslora, m.dropout_p) for m in layers.values()}
    if len(settings) != 1:
        raise ValueError(f"the LoRA layers use different settings {sorted(settings)}; an adapter folder needs one")
    return settings.pop()


def save_adapter(model: nn.Module, path: str | os.PathLike, *, base_name: str | None = None,
                 dtype: torch.dtype = torch.float32) -> Path:
    """Write the model's LoRA adapter as a PEFT folder: ``adapter_config.json`` + ``adapter_model.safetensors``.

    Tensor names are PEFT's (``base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight``
    for the Llama-style layer ``blocks.0.attn.q_proj``), so ``PeftModel.from_pretrained`` loads the
    folder onto the Hugging Face export of the base (``llmlab.convert_hf.to_hf``). The safetensors
    metadata add what PEFT does not keep: the base's fingerprint (``base_fingerprint``), its name
    and the llmlab layer names. Only ``A`` and ``B`` are written (a few hundred KB, not the model).
    An adapter must be unmerged to be saved (merged, the base weights are no longer the base).
    """
    from ..convert_hf import hf_linear_name  # the PEFT key names are the HF module names

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
    r, alpha, use_rslora, dropout = _layer_settings(layers)
    hf_names = {name: hf_linear_name(config, name) for name in layers}
    tensors = {}
    for name, layer in layers.items():
        prefix = "base_model.model." + hf_names[name]
        tensors[prefix + ".lora_A.weight"] = layer.lora_A.weight.detach().to(dtype)
        tensors[prefix + ".lora_B.weight"] = layer.lora_B.weight.detach().to(dtype)
    # PEFT matches a target by the end of the module name: "q_proj" (Llama) or "attn.c_proj" (GPT-2,
    # where the attention and the MLP both have a c_proj).
    keep = 2 if config.pos_encoding == "learned" else 1
    short_names = sorted({".".join(n.split(".")[-keep:]) for n in hf_names.values()})
    peft_config = {
        # The fields every PEFT version since 0.6 reads; nothing else, so older versions load it too.
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_name,
        "revision": None,
        "inference_mode": True,
        "r": r,
        "lora_alpha": int(alpha) if float(alpha).is_integer() else alpha,
        "lora_dropout": dropout,
        "target_modules": short_names,
        "bias": "none",
        "fan_in_fan_out": config.pos_encoding == "learned",  # GPT-2's Conv1D stores [in, out]
        "use_rslora": use_rslora,
        "use_dora": False,
        "init_lora_weights": True,
        "modules_to_save": None,
        "layers_to_transform": None,
        "layers_pattern": None,
        "rank_pattern": {},
        "alpha_pattern": {},
    }
    metadata = {
        "format": "pt",
        "llmlab.base_fingerprint": base_fingerprint(model),
        "llmlab.base_name": base_name or "",
        "llmlab.layers": json.dumps(sorted(layers)),
    }
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
        "rank_pattern": (config.get("rank_pattern") or {}, ({},)),
        "alpha_pattern": (config.get("alpha_pattern") or {}, ({},)),
        "modules_to_save": (config.get("modules_to_save"), (None, [])),
        "lora_bias": (config.get("lora_bias", False), (False,)),
    }
    for key, (value, allowed) in unsupported.items():
        if value not in allowed:
            raise ValueError(f"adapter option {key}={value!r} is not supported by llmlab.lora (supported: {allowed})")


@torch.no_grad()
def load_adapter(model: nn.Module, path: str | os.PathLike, *, check_base: bool = True,
                 trainable: bool = False) -> nn.Module:
    """Load an adapter folder (written here or by PEFT) onto ``model`` and return it (in place).

    The folder's layers get ``LoRALinear`` wrappers with its ``A``, ``B`` and scaling; a model
    that already has LoRA layers on the same layers has them replaced (adapter swapping, the base
    stays shared). Errors, each with a clear message: the base is not the one the adapter was
    trained on (its fingerprint differs; ``check_base=False`` skips this check, for PEFT folders
    there is no fingerprint to check), a layer the adapter targets does not exist or has another
    shape, the model already carries an adapter on other layers, or the folder uses PEFT options
    not implemented here. ``trainable=True`` leaves ``A`` and ``B`` trainable.
    """
    from ..convert_hf import linear_name_from_hf

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
    tensors = _safetensors.load_file(Path(path) / ADAPTER_WEIGHTS)
    pairs: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in tensors.items():
        for part in ("lora_A", "lora_B"):
            suffix = f".{part}.weight"
            if key.startswith("base_model.model.") and key.endswith(suffix):
                hf_name = key[len("base_model.model."):-len(suffix)]
                pairs.setdefault(linear_name_from_hf(config, hf_name), {})[part] = tensor
                break
        else:
            raise ValueError(f"unexpected tensor {key!r} in the adapter (only lora_A / lora_B weights are supported)")
    for name, pair in pairs.items():
        if set(pair) != {"lora_A", "lora_B"}:
            raise ValueError(f"layer {name}: the adapter has {sorted(pair)} but needs both lora_A and lora_B")

    existing = lora_layers(model)
    if existing and set(existing) != set(pairs):
        raise ValueError(
            f"the model carries an adapter on other layers ({sorted(existing)[:3]}...) than this one "
            f"({sorted(pairs)[:3]}...): target modules differ; unload(model, merge=False) first"
        )
    if any(m.merged for m in existing.values()):
        raise ValueError("the model's current adapter is merged: unmerge(model) before loading another one")
    r_default, alpha = int(info["r"]), float(info["lora_alpha"])
    use_rslora, dropout = bool(info.get("use_rslora", False)), float(info.get("lora_dropout", 0.0))
    modules = {}
    for name, pair in pairs.items():  # check everything before changing the model
        try:
            base = existing[name].base_layer if name in existing else model.get_submodule(name)
        except AttributeError:
            raise ValueError(f"the adapter targets layer {name!r}, which this model does not have") from None
        A, B = pair["lora_A"], pair["lora_B"]
        r = A.shape[0]
        if A.dim() != 2 or B.dim() != 2 or B.shape[1] != r or r != r_default:
            raise ValueError(f"layer {name}: lora_A {tuple(A.shape)} / lora_B {tuple(B.shape)} do not match r={r_default}")
        if (A.shape[1], B.shape[0]) != (getattr(base, "in_features", None), getattr(base, "out_features", None)):
            raise ValueError(
                f"layer {name}: the adapter is for a {B.shape[0]} x {A.shape[1]} matrix, the model's is "
                f"{getattr(base, 'out_features', '?')} x {getattr(base, 'in_features', '?')} (another base shape)"
            )
        modules[name] = base
    for p in model.parameters():
        p.requires_grad_(False)
    for name, base in modules.items():
        layer = LoRALinear(base, r_default, alpha, dropout=dropout, use_rslora=use_rslora)
        layer.lora_A.weight.copy_(pairs[name]["lora_A"])
        layer.lora_B.weight.copy_(pairs[name]["lora_B"])
        layer.lora_A.weight.requires_grad_(trainable)
        layer.lora_B.weight.requires_grad_(trainable)
        _set_module(model, name, layer)
    return model


def shipped_adapter(name: str = "es-base-chat-lora") -> Path:
    """The folder of an adapter shipped in ``llmlab/data/adapters/`` (``python -m llmlab.build_adapters``), checksums verified.

    Load it with ``load_adapter(base_model, shipped_adapter())``; the measurements of every
    adaptation the build ran are in ``results.json`` and ``REPORT.md`` next to it.
    """
    from .. import pretrained  # lazy: pretrained imports the model and the tokenizer

    folder = Path(str(resources.files("llmlab") / "data" / "adapters"))
    if not isinstance(name, str) or not (folder / name).is_dir():
        available = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
        raise ValueError(f"no shipped adapter {name!r}; available: {available} (python -m llmlab.build_adapters builds them)")
    pretrained.verify([f"{name}/{ADAPTER_CONFIG}", f"{name}/{ADAPTER_WEIGHTS}"], models_dir=folder)
    return folder / name
