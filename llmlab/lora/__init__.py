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

The package, in the order of the chapter (one module per idea):

1. ``counts``: ``lora_param_count``, ``full_param_count``, ``lora_fraction``, ``adapter_param_count``;
   and the update on plain matrices (NumPy or torch): ``lora_scaling``, ``lora_delta``, ``merge_lora``,
   ``unmerge_lora``;
2. ``layer``: ``LoRALinear``, a frozen linear layer plus its trainable ``lora_A`` / ``lora_B``;
   and whole models: ``add_lora``, ``merge`` / ``unmerge``, ``unload``, ``trainable_summary``,
   ``training_memory`` (bytes of weights, gradients and optimizer state, read off the tensors);
3. ``folders``, adapter folders: ``save_adapter`` / ``load_adapter`` write and read the folder layout of
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

from .counts import (
    adapter_param_count,
    full_param_count,
    lora_delta,
    lora_fraction,
    lora_param_count,
    lora_scaling,
    merge_lora,
    unmerge_lora,
)
from .folders import (
    ADAPTER_CONFIG,
    ADAPTER_WEIGHTS,
    base_fingerprint,
    load_adapter,
    read_adapter_config,
    save_adapter,
)
from .layer import (
    PRESETS,
    LoRALinear,
    add_lora,
    lora_layers,
    merge,
    trainable_summary,
    training_memory,
    unload,
    unmerge,
)

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
