"""Random weights at O(1) scale for parity tests (imported by test_lora_peft.py and test_to_hf.py).

With the default initialisation (std 0.02) every logit is close to the others and a wrong attention
mask, head mapping or scaling barely moves them; at O(1) scale attention is peaked and every matrix
matters, so a comparison to 1e-5 really tests something.
"""

import math

import torch


def spread_(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Redraw every parameter in place (matrices ~ N(0, 1/fan_in), biases ~ 0.1 N, norm gains ~ 1 + 0.1 N); eval mode."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[-1]))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
    return model.eval()
