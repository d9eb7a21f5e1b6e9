"""The feed-forward layers of a block: GPT-2's GELU ``MLP`` and Llama's ``SwiGLU`` (also the experts of ``llmlab.moe``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from llmlab.model_config import ModelConfig


class MLP(nn.Module):
    """GPT-2 MLP: widen to d_ff, GELU, project back. Works on each position independently."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.up = nn.Linear(config.d_model, config.d_ff, bias=config.bias)
        self.down = nn.Linear(config.d_ff, config.d_model, bias=config.bias)
        # "tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2's approximation of x * Phi(x).
        self.approximate = "none" if config.mlp == "gelu_exact" else "tanh"

    def forward(self, x: torch.Tensor, up: tuple | None = None) -> torch.Tensor:
        """``up``: W_up and its bias as ``DecodeWeights`` lays them out (same values, faster for one token)."""
        h = self.up(x) if up is None else F.linear(x, *up)
        return self.down(F.gelu(h, approximate=self.approximate))


class SwiGLU(nn.Module):
    """Llama MLP: ``down(silu(gate(x)) * up(x))``; the gate decides how much of ``up(x)`` passes.

    ``SwiGLU(config)`` takes the sizes from a ``ModelConfig``; ``SwiGLU(d_model, d_ff, bias=...)``
    builds one of any size (the experts of ``llmlab.moe.SparseMoE``).
    """

    def __init__(self, config: ModelConfig | int, d_ff: int | None = None, bias: bool = False):
        super().__init__()
        if isinstance(config, ModelConfig):
            d_model, d_ff, bias = config.d_model, config.d_ff, config.bias
        else:
            d_model = config
        self.gate = nn.Linear(d_model, d_ff, bias=bias)
        self.up = nn.Linear(d_model, d_ff, bias=bias)
        self.down = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: torch.Tensor, gate_up: tuple | None = None) -> torch.Tensor:
        """``gate_up``: W_gate and W_up stacked into one matrix (``DecodeWeights``): one product for both."""
        if gate_up is None:
            gate, up = self.gate(x), self.up(x)
        else:
            gate, up = F.linear(x, *gate_up).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)
