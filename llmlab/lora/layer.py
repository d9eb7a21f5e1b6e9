"""The LoRA linear layer, and LoRA on whole models: add, merge, unmerge, unload, count, measure."""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import nn

from ..arguments import check_float, check_int  # the same errors as the model's
from .counts import lora_scaling

__all__ = [
    "INITS",
    "PRESETS",
    "LoRALinear",
    "add_lora",
    "lora_layers",
    "merge",
    "trainable_summary",
    "training_memory",
    "unload",
    "unmerge",
]

INITS = ("kaiming", "gaussian")


# ----------------------------------------------------------------------------------------------
# The LoRA linear layer
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
        check_int("r", r)
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be a number in [0, 1), got {dropout!r}")
        self.base_layer = base_layer
        self.in_features, self.out_features = d_in, d_out
        check_float("alpha", alpha)
        self.r, self.alpha, self.use_rslora = r, float(alpha), bool(use_rslora)
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
        # Only a stored floating-point parameter can take the update. A quantized layer's ``weight`` is
        # a fresh dequantized copy: adding to it would change nothing and look like success.
        weight = getattr(self.base_layer, "weight", None)
        if not isinstance(weight, nn.Parameter) or not weight.dtype.is_floating_point:
            raise TypeError(
                f"cannot merge into a {type(self.base_layer).__name__}, which stores no floating-point weight "
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
# Whole models
# ----------------------------------------------------------------------------------------------

# Short names that stand for several layers. "gate"/"up"/"down" are llmlab's names for the MLP;
# the Hugging Face names ("gate_proj", ...) are accepted too.
PRESETS = {
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "mlp": ("gate", "up", "down"),
    "all-linear": ("q_proj", "k_proj", "v_proj", "o_proj", "gate", "up", "down"),
}
_HF_ALIASES = {"gate_proj": "gate", "up_proj": "up", "down_proj": "down"}


def _is_linear_like(module: nn.Module) -> bool:
    """A layer that maps ``in_features -> out_features`` (e.g. ``llmlab.quant.QuantizedLinear``)."""
    return isinstance(getattr(module, "in_features", None), int) and isinstance(getattr(module, "out_features", None), int)


def _linear_names(model: nn.Module) -> list[str]:
    """Names of the linear layers LoRA may wrap: every one inside the blocks (not the LM head)."""
    names = []
    for name, module in model.named_modules():
        if ".base_layer" in name or ".lora_" in name:
            continue
        if isinstance(module, (LoRALinear, nn.Linear)) or _is_linear_like(module):
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


def set_module(model: nn.Module, name: str, module: nn.Module) -> None:
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
    check_int("r", r)
    check_float("alpha", alpha)
    check_int("seed", seed, minimum=0)
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
        set_module(model, name, layer)
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
        set_module(model, name, layer.base_layer)
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
