"""LoRA: adapt a frozen model by training two thin matrices per layer (chapter 06).

A frozen weight ``W`` (``d_out x d_in``) gets a low-rank update that is trained instead of ``W``::

    y = W x + s * B (A x)        A: [r, d_in]  (projects down to rank r)
                                 B: [d_out, r] (projects back up)
                                 s = alpha / r            (the scaling; rsLoRA: alpha / sqrt(r))

so a layer trains ``r * (d_in + d_out)`` numbers instead of ``d_in * d_out`` (a 4096 x 4096
matrix at r = 16: 131,072 instead of 16,777,216, 0.78 %). ``A`` starts random and ``B`` starts at
zero, so ``B A = 0`` and the adapted model is *exactly* the base model at step 0; training moves
``B`` away from zero. After training the update can be merged, ``W' = W + s * B A``: same shape as
``W``, no extra cost at inference; or it can stay apart, a small file that turns one shared base
into many specialised models.

The module, in the order of the chapter:

1. counts: ``lora_param_count``, ``full_param_count``, ``lora_fraction``, ``adapter_param_count``;
2. the update on plain matrices (NumPy or torch): ``lora_scaling``, ``lora_delta``, ``merge_lora``,
   ``unmerge_lora``;
3. ``LoRALinear``: a frozen linear layer plus its trainable ``lora_A`` / ``lora_B``;
4. whole models: ``add_lora``, ``merge`` / ``unmerge``, ``unload``, ``trainable_summary``,
   ``training_memory`` (bytes of weights, gradients and optimizer state, read off the tensors);
5. adapter folders: ``save_adapter`` / ``load_adapter`` write and read the folder layout of
   Hugging Face PEFT (``adapter_config.json`` + ``adapter_model.safetensors`` with PEFT's key
   names), so an adapter trained here loads with ``PeftModel.from_pretrained`` on the model that
   ``llmlab.convert_hf.to_hf`` exports, and a PEFT adapter loads here.

Same semantics as PEFT's ``LoraConfig`` (checked in ``tests/test_lora_peft.py``): ``A`` is drawn
like ``nn.Linear``'s default (``kaiming_uniform_(a=sqrt(5))``, i.e. uniform in
``±1/sqrt(d_in)``) or, with ``init="gaussian"``, from N(0, 1/r); ``B = 0``; ``s = alpha / r`` or
``alpha / sqrt(r)`` (``use_rslora``); dropout acts on the input of the LoRA path only.

Quick use::

    from llmlab import pretrained, lora
    model, tok = pretrained.load("es-base")
    lora.add_lora(model, ["q_proj", "v_proj"], r=8, alpha=16)   # freezes everything else
    lora.trainable_summary(model)        # {'trainable': ..., 'total': ..., 'fraction': ...}
    ... train as usual (llmlab.train.train only updates parameters with requires_grad) ...
    lora.save_adapter(model, "mi-adaptador", base_name="es-base")
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path

import torch
from torch import nn

from . import _safetensors

__all__ = [
    "ADAPTER_CONFIG",
    "ADAPTER_WEIGHTS",
    "LoRALinear",
    "PRESETS",
    "adapter_param_count",
    "add_lora",
    "base_fingerprint",
    "full_param_count",
    "load_adapter",
    "lora_delta",
    "lora_fraction",
    "lora_layers",
    "lora_param_count",
    "lora_scaling",
    "merge",
    "merge_lora",
    "read_adapter_config",
    "save_adapter",
    "trainable_summary",
    "training_memory",
    "unload",
    "unmerge",
    "unmerge_lora",
]

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
INITS = ("kaiming", "gaussian")


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


# ----------------------------------------------------------------------------------------------
# 1. Counting trainable parameters (F6.11, F6.16)
# ----------------------------------------------------------------------------------------------


def full_param_count(d_out: int, d_in: int) -> int:
    """Weights of a ``d_out x d_in`` matrix, all trained by full fine-tuning: ``d_out * d_in``."""
    return _check_int("d_out", d_out) * _check_int("d_in", d_in)


def lora_param_count(d_out: int, d_in: int, r: int) -> int:
    """Trainable numbers of a rank-``r`` LoRA on a ``d_out x d_in`` matrix: ``r * (d_in + d_out)``.

    ``A`` has ``r * d_in`` and ``B`` has ``d_out * r``. ``r = 0`` means no adapter (0). A rank
    above ``min(d_out, d_in)`` is refused: ``B A`` cannot have a rank larger than that, so the
    extra columns would only cost memory.
    """
    _check_int("d_out", d_out)
    _check_int("d_in", d_in)
    _check_int("r", r, minimum=0)
    if r > min(d_out, d_in):
        raise ValueError(f"r={r} exceeds min(d_out, d_in)={min(d_out, d_in)}: B A cannot have a higher rank")
    return r * (d_in + d_out)


def lora_fraction(d_out: int, d_in: int, r: int) -> float:
    """LoRA's trainable parameters as a fraction of the matrix: ``r (d_in + d_out) / (d_in d_out)``."""
    return lora_param_count(d_out, d_in, r) / full_param_count(d_out, d_in)


def adapter_param_count(d: int, bottleneck: int, bias: bool = False) -> int:
    """Weights of a bottleneck adapter (Houlsby): down ``d -> m`` and up ``m -> d``: ``2 d m`` (+ ``m + d`` biases)."""
    _check_int("d", d)
    _check_int("bottleneck", bottleneck)
    if not isinstance(bias, bool):
        raise TypeError(f"bias must be a bool, got {bias!r}")
    return 2 * d * bottleneck + (bottleneck + d if bias else 0)


# ----------------------------------------------------------------------------------------------
# 2. The update on plain matrices (F6.10, F6.12)
# ----------------------------------------------------------------------------------------------


def lora_scaling(alpha: float, r: int, use_rslora: bool = False) -> float:
    """``s = alpha / r`` (LoRA) or ``alpha / sqrt(r)`` (rsLoRA, which keeps large ranks from learning too slowly)."""
    _check_positive("alpha", alpha)
    _check_int("r", r)
    return float(alpha) / (math.sqrt(r) if use_rslora else r)


def _check_factors(W, A, B) -> None:
    if A.ndim != 2 or B.ndim != 2 or W.ndim != 2:
        raise ValueError(f"W, A and B must be matrices, got shapes W {tuple(W.shape)}, A {tuple(A.shape)}, B {tuple(B.shape)}")
    if B.shape[1] != A.shape[0] or W.shape != (B.shape[0], A.shape[1]):
        raise ValueError(
            f"shapes do not fit y = W x + s B A x: W {tuple(W.shape)} must be (d_out, d_in), "
            f"A {tuple(A.shape)} (r, d_in) and B {tuple(B.shape)} (d_out, r)"
        )


def lora_delta(A, B, alpha: float, r: int, use_rslora: bool = False):
    """The update ``s * B @ A`` (``[d_out, d_in]``) for NumPy arrays or torch tensors."""
    if B.shape[1] != A.shape[0]:
        raise ValueError(f"B {tuple(B.shape)} and A {tuple(A.shape)} do not multiply: B must be (d_out, r), A (r, d_in)")
    return lora_scaling(alpha, r, use_rslora) * (B @ A)


def merge_lora(W, A, B, alpha: float, r: int, use_rslora: bool = False):
    """``W' = W + s * B @ A``: one matrix of the shape of ``W`` that computes base + adapter. ``W`` is not modified."""
    _check_factors(W, A, B)
    return W + lora_delta(A, B, alpha, r, use_rslora)


def unmerge_lora(W_merged, A, B, alpha: float, r: int, use_rslora: bool = False):
    """``W = W' - s * B @ A``: the base weights back (up to floating-point rounding)."""
    _check_factors(W_merged, A, B)
    return W_merged - lora_delta(A, B, alpha, r, use_rslora)


# ----------------------------------------------------------------------------------------------
# 3. The LoRA linear layer
# ----------------------------------------------------------------------------------------------


class LoRALinear(nn.Module):
    """``base_layer(x) + s * lora_B(lora_A(dropout(x)))`` with ``base_layer`` frozen.

    ``base_layer`` is an ``nn.Linear`` or any module with ``in_features`` and ``out_features``
    that maps ``[..., in_features] -> [..., out_features]`` (for example a quantized linear
    layer: LoRA on a frozen quantized base is QLoRA). ``lora_A`` and ``lora_B`` are bias-free
    ``nn.Linear`` layers, as in PEFT, so their weights are ``A`` (``[r, in]``) and ``B``
    (``[out, r]``).

    ``merge()`` adds ``s B A`` into the base weight (then ``forward`` is just the base layer) and
    ``unmerge()`` subtracts it again; both need a floating-point ``base_layer.weight``.
    """

    def __init__(
        self,
        base_layer: nn.Module,
        r: int,
        alpha: float,
        *,
        dropout: float = 0.0,
        use_rslora: bool = False,
        init: str = "kaiming",
        generator: torch.Generator | None = None,
        dtype: torch.dtype | None = None,
    ):
        super().__init__()
        if isinstance(base_layer, LoRALinear):
            raise ValueError("base_layer already has a LoRA adapter (one adapter per layer)")
        d_in, d_out = getattr(base_layer, "in_features", None), getattr(base_layer, "out_features", None)
        if not isinstance(base_layer, nn.Module) or not isinstance(d_in, int) or not isinstance(d_out, int):
            raise TypeError(
                f"base_layer must be an nn.Linear (or a module with int in_features/out_features), got {type(base_layer).__name__}"
            )
        _check_int("r", r)
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be a number in [0, 1), got {dropout!r}")
        self.base_layer = base_layer
        self.in_features, self.out_features = d_in, d_out
        self.r, self.alpha, self.use_rslora = r, float(_check_positive("alpha", alpha)), bool(use_rslora)
        self.scaling = lora_scaling(alpha, r, use_rslora)
        self.dropout_p = float(dropout)
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        if dtype is None:  # the base's dtype, unless it is stored as integers (a quantized base)
            weight = getattr(base_layer, "weight", None)
            floating = isinstance(weight, torch.Tensor) and weight.dtype.is_floating_point
            dtype = weight.dtype if floating else torch.float32
        tensors = list(base_layer.parameters()) + list(base_layer.buffers())
        device = tensors[0].device if tensors else torch.device("cpu")
        self.lora_A = nn.Linear(d_in, r, bias=False, dtype=dtype, device=device)
        self.lora_B = nn.Linear(r, d_out, bias=False, dtype=dtype, device=device)
        self.merged = False
        self.reset_lora_parameters(init, generator)
        for p in self.base_layer.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def reset_lora_parameters(self, init: str = "kaiming", generator: torch.Generator | None = None) -> None:
        """Draw ``A`` (PEFT's rule) and set ``B = 0``, so that ``B A = 0``: at step 0 the layer is the base layer."""
        if self.merged:
            raise RuntimeError("unmerge the adapter before resetting it (the base weight holds the old update)")
        A = self.lora_A.weight
        if init == "kaiming":  # = nn.init.kaiming_uniform_(A, a=sqrt(5)): U(-1/sqrt(d_in), 1/sqrt(d_in))
            bound = 1.0 / math.sqrt(self.in_features)
            A.copy_(torch.empty(A.shape, dtype=torch.float32).uniform_(-bound, bound, generator=generator))
        elif init == "gaussian":
            A.copy_(torch.empty(A.shape, dtype=torch.float32).normal_(0.0, 1.0 / self.r, generator=generator))
        else:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        self.lora_B.weight.zero_()

    def delta_weight(self) -> torch.Tensor:
        """``s * B @ A``, shape ``[out_features, in_features]``."""
        return self.scaling * (self.lora_B.weight @ self.lora_A.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        if self.merged:
            return result  # the update already lives in the base weight
        # The LoRA path: down to rank r, back up, scaled. Computed as two thin products, never as B @ A.
        lora = self.lora_B(self.lora_A(self.lora_dropout(x.to(self.lora_A.weight.dtype))))  # [..., out]
        return result + (self.scaling * lora).to(result.dtype)

    def _base_weight(self) -> torch.Tensor:
        weight = getattr(self.base_layer, "weight", None)
        if not isinstance(weight, torch.Tensor) or not weight.dtype.is_floating_point:
            raise TypeError(
                f"cannot merge into a {type(self.base_layer).__name__} without a floating-point weight "
                "(a quantized base): keep the adapter separate, or dequantize the base first"
            )
        return weight

    @torch.no_grad()
    def merge(self) -> None:
        """``W <- W + s B A``. Merging twice is refused (the update would be added twice)."""
        if self.merged:
            raise RuntimeError("this LoRA layer is already merged")
        weight = self._base_weight()
        weight += self.delta_weight().to(weight.dtype)
        self.merged = True

    @torch.no_grad()
    def unmerge(self) -> None:
        """``W <- W - s B A``: the base weight back, up to floating-point rounding."""
        if not self.merged:
            raise RuntimeError("this LoRA layer is not merged")
        weight = self._base_weight()
        weight -= self.delta_weight().to(weight.dtype)
        self.merged = False

    def extra_repr(self) -> str:
        return (f"r={self.r}, alpha={self.alpha:g}, scaling={self.scaling:g}, rslora={self.use_rslora}, "
                f"dropout={self.dropout_p:g}, merged={self.merged}")


# ----------------------------------------------------------------------------------------------
# 4. Whole models
# ----------------------------------------------------------------------------------------------

# Short names that stand for several layers. "gate"/"up"/"down" are llmlab's names for the MLP;
# the Hugging Face names ("gate_proj", ...) are accepted too.
PRESETS = {
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "mlp": ("gate", "up", "down"),
    "all-linear": ("q_proj", "k_proj", "v_proj", "o_proj", "gate", "up", "down"),
}
_HF_ALIASES = {"gate_proj": "gate", "up_proj": "up", "down_proj": "down"}


def _linear_names(model: nn.Module) -> list[str]:
    """Names of the linear layers LoRA may wrap: every one inside the blocks (not the LM head)."""
    names = []
    for name, module in model.named_modules():
        if isinstance(module, LoRALinear):
            names.append(name)
        elif isinstance(module, nn.Linear) and ".base_layer" not in name and ".lora_" not in name:
            names.append(name)
    return [n for n in names if n != "lm_head"]


def _resolve_targets(model: nn.Module, target_modules) -> list[str]:
    """Full names of the layers matched by ``target_modules`` (names, suffixes or presets), in model order."""
    if isinstance(target_modules, str):
        target_modules = [target_modules]
    if not isinstance(target_modules, Iterable) or not target_modules:
        raise ValueError(f"target_modules must be a non-empty list of layer names, got {target_modules!r}")
    candidates = _linear_names(model)
    chosen: set[str] = set()
    for target in target_modules:
        if not isinstance(target, str) or not target:
            raise TypeError(f"target_modules must hold non-empty strings, got {target!r}")
        if target == "lm_head":
            raise ValueError("LoRA on the LM head is not supported (it may be tied to the embeddings); target the blocks")
        preset = target in PRESETS
        for suffix in PRESETS.get(target, (target,)):
            suffix = _HF_ALIASES.get(suffix, suffix)
            hits = [n for n in candidates if n == suffix or n.endswith("." + suffix)]
            if not hits and not preset:
                raise ValueError(
                    f"target {target!r} matches no linear layer of the model; layer names end with "
                    f"{sorted({n.rsplit('.', 1)[-1] for n in candidates})} (presets: {sorted(PRESETS)})"
                )
            chosen.update(hits)
    if not chosen:
        raise ValueError(f"target_modules {list(target_modules)} match no linear layer of the model")
    return [n for n in candidates if n in chosen]


def _set_module(model: nn.Module, name: str, module: nn.Module) -> None:
    parent_name, _, child = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    setattr(parent, child, module)


def lora_layers(model: nn.Module) -> dict[str, LoRALinear]:
    """The ``LoRALinear`` layers of ``model``, by full name, in model order."""
    return {name: m for name, m in model.named_modules() if isinstance(m, LoRALinear)}


def add_lora(
    model: nn.Module,
    target_modules=("q_proj", "v_proj"),
    r: int = 8,
    alpha: float = 16,
    *,
    dropout: float = 0.0,
    use_rslora: bool = False,
    init: str = "kaiming",
    seed: int = 0,
) -> nn.Module:
    """Wrap the chosen linear layers of ``model`` in ``LoRALinear`` and freeze everything else (in place).

    ``target_modules``: layer names or name endings (``"q_proj"`` matches every
    ``blocks.N.attn.q_proj``), Hugging Face names (``"gate_proj"``) or presets
    (``"attention"``, ``"mlp"``, ``"all-linear"``). Afterwards only the ``lora_A`` / ``lora_B``
    weights have ``requires_grad``. ``seed`` fixes the random ``A`` matrices. Returns ``model``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if lora_layers(model):
        raise ValueError("the model already has LoRA layers: unload() or merge them first (one adapter at a time)")
    _check_int("r", r)
    _check_positive("alpha", alpha)
    _check_int("seed", seed, minimum=0)
    targets = _resolve_targets(model, target_modules)
    for name in targets:  # check every rank first, so that a bad one leaves the model untouched
        layer = model.get_submodule(name)
        if r > min(layer.in_features, layer.out_features):
            raise ValueError(f"r={r} exceeds min(in, out) = {min(layer.in_features, layer.out_features)} of {name}")
    generator = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        p.requires_grad_(False)
    for name in targets:
        layer = LoRALinear(model.get_submodule(name), r, alpha, dropout=dropout, use_rslora=use_rslora, init=init,
                           generator=generator)
        _set_module(model, name, layer)
    return model


def merge(model: nn.Module) -> nn.Module:
    """Merge every LoRA layer: ``W <- W + s B A``. The model computes the same, with no extra matmuls."""
    layers = lora_layers(model)
    if not layers:
        raise ValueError("the model has no LoRA layers to merge")
    for layer in layers.values():
        layer.merge()
    return model


def unmerge(model: nn.Module) -> nn.Module:
    """Undo ``merge``: ``W <- W - s B A`` in every LoRA layer, which keeps its ``A`` and ``B``."""
    layers = lora_layers(model)
    if not layers:
        raise ValueError("the model has no LoRA layers to unmerge")
    for layer in layers.values():
        layer.unmerge()
    return model


def unload(model: nn.Module, *, merge: bool = True) -> nn.Module:
    """Put the plain base layers back (in place) and return ``model``.

    ``merge=True`` keeps the adaptation (``W + s B A``: the result is a normal model with the
    fine-tuned behaviour, e.g. to save with ``llmlab.pretrained.save_model``); ``merge=False``
    throws the adapter away and gives back the untouched base. Parameters become trainable again.
    """
    layers = lora_layers(model)
    if not layers:
        raise ValueError("the model has no LoRA layers to unload")
    for name, layer in layers.items():
        if merge and not layer.merged:
            layer.merge()
        elif not merge and layer.merged:
            layer.unmerge()
        _set_module(model, name, layer.base_layer)
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def _unique_tensors(tensors: Iterable[torch.Tensor]) -> list[torch.Tensor]:
    seen, unique = set(), []
    for t in tensors:
        key = (t.data_ptr(), t.numel(), t.dtype)  # a tied matrix (embedding = LM head) counts once
        if key not in seen:
            seen.add(key)
            unique.append(t)
    return unique


def trainable_summary(model: nn.Module) -> dict:
    """``{"trainable", "total", "fraction"}``: parameters that get gradients vs all of them (tied counted once)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    params = _unique_tensors(model.parameters())
    total = sum(p.numel() for p in params)
    trainable = sum(p.numel() for p in params if p.requires_grad)
    return {"trainable": trainable, "total": total, "fraction": trainable / total if total else 0.0}


def _nbytes(tensors: Iterable[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in _unique_tensors(tensors))


def training_memory(model: nn.Module, optimizer: torch.optim.Optimizer | None = None) -> dict:
    """Bytes held by training, read off the tensors: ``{"weights", "gradients", "optimizer", "total"}``.

    - ``weights``: every parameter and buffer of the model (a quantized base counts its int8 or
      packed 4-bit buffers and scales at their real size);
    - ``gradients``: the ``.grad`` tensors that exist (after a ``backward``), or, before any
      backward, what they will take (one per trainable parameter, same dtype);
    - ``optimizer``: every tensor in ``optimizer.state`` (AdamW keeps two moments per trained
      number; they exist after the first ``step``).

    Activations are not counted: they depend on batch and sequence length, not on the method.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    weights = _nbytes(list(model.parameters()) + list(model.buffers()))
    params = _unique_tensors(model.parameters())
    grads = [p.grad for p in params if p.grad is not None]
    gradients = _nbytes(grads) if grads else _nbytes(p for p in params if p.requires_grad)
    state = 0
    if optimizer is not None:
        state = _nbytes(t for s in optimizer.state.values() for t in s.values()
                        if isinstance(t, torch.Tensor) and t.dim() > 0)
    return {"weights": weights, "gradients": gradients, "optimizer": state, "total": weights + gradients + state}


# ----------------------------------------------------------------------------------------------
# 5. Adapter folders (the PEFT layout)
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
    from .model import ModelConfig  # lazy: keeps lora usable on any nn.Module for the math

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
    from .convert_hf import hf_linear_name  # the PEFT key names are the HF module names

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
    from .convert_hf import linear_name_from_hf

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
