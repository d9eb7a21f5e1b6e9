"""The other half of a transformer block, in NumPy: residual, normalisation, activations, MLP (chapter 04).

Attention (``llmlab.attention``) mixes information *between* positions. Everything in this module
works on each position *by itself*:

- ``residual``: ``y = x + F(x)``, the open path that lets a sub-layer add a correction instead of
  rebuilding the whole vector.
- ``layer_norm`` and ``rms_norm``: put every position's vector on a comparable scale (over the last
  axis, the features; never across tokens).
- ``relu``, ``gelu``, ``silu`` and the gated ``swiglu``: the non-linearities.
- ``mlp``: widen to ``4 * d_model``, activate, project back. It holds two thirds of a dense
  transformer's parameters (``mlp_param_count``).
- ``transformer_block``: the pieces put together, pre-norm (modern) or post-norm (the 2017 paper).

Conventions, the same as ``llmlab.attention``: **row vectors**, ``X`` has one row per token, shape
``(n, d_model)`` (leading batch axes are allowed), and a linear layer is ``X @ W + b`` with ``W`` of
shape ``(d_in, d_out)``. The book writes the MLP with column vectors, ``W2 phi(W1 x + b1) + b2``; it is
the same computation transposed.

These are the NumPy references the lab notebooks compare against (float64). ``llmlab.model`` has the
PyTorch modules used for real models; ``tests/test_layers.py`` checks that both agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from llmlab._arrays import as_float_array

__all__ = [
    "residual",
    "layer_norm",
    "rms_norm",
    "relu",
    "gelu",
    "silu",
    "swiglu",
    "ACTIVATIONS",
    "mlp",
    "mlp_param_count",
    "transformer_block",
]


# ----------------------------------------------------------------------------------------------
# Input validation
# ----------------------------------------------------------------------------------------------


_array = as_float_array  # NumPy, lists, numbers or torch tensors -> float64, with clear errors


def _eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    return float(eps)


def _feature_vector(name: str, v, d: int) -> np.ndarray:
    """A learned per-feature vector (gamma, beta, a bias): shape ``(d,)``."""
    arr = _array(name, v, 1)
    if arr.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},) (one value per feature), got {arr.shape}")
    return arr


# ----------------------------------------------------------------------------------------------
# Residual and normalisation
# ----------------------------------------------------------------------------------------------


def residual(x, f: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``x + f(x)`` (formula F4.5). The ``+`` never replaces ``x``: the sub-layer only adds a correction.

    ``f`` must return an array of the same shape as ``x``. Book example: ``x = [2, -1, 0.5]`` and
    ``f(x) = [0.1, 0.4, -0.2]`` give ``[2.1, -0.6, 0.3]``.
    """
    if not callable(f):
        raise TypeError(f"f must be a callable sub-layer f(x) -> array, got {type(f).__name__}")
    x = _array("x", x)
    fx = _array("f(x)", f(x))
    if fx.shape != x.shape:
        raise ValueError(f"f(x) must have the shape of x {x.shape} for the residual sum, got {fx.shape}")
    return x + fx


def layer_norm(x, gamma=None, beta=None, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm over the last axis (formulas F4.6-F4.8).

    ``mu = mean(x)``, ``sigma = sqrt(mean((x - mu)^2) + eps)`` (population variance, ``eps`` *inside*
    the square root), ``gamma * (x - mu) / sigma + beta``. Each row (token) is normalised on its own.
    ``gamma`` defaults to ones and ``beta`` to zeros, both of shape ``(d,)``. This is exactly
    ``torch.nn.functional.layer_norm(x, (d,), gamma, beta, eps)``.
    Book example: ``[2, -1, 0.5] -> [1.224741, -1.224741, 0]``.
    """
    x = _array("x", x, 1)
    eps = _eps(eps)
    d = x.shape[-1]
    if d == 0:
        raise ValueError("x must have at least one feature along its last axis")
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)  # divides by d, not d - 1
    out = (x - mu) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * _feature_vector("gamma", gamma, d)
    if beta is not None:
        out = out + _feature_vector("beta", beta, d)
    return out


def rms_norm(x, gamma=None, eps: float = 1e-5) -> np.ndarray:
    """RMSNorm over the last axis (formula F4.9): ``gamma * x / sqrt(mean(x^2) + eps)``.

    No mean is subtracted and there is no ``beta``: cheaper than LayerNorm and, in practice, just as
    good (Llama, Mistral, Qwen use it). Book input ``[2, -1, 0.5]`` gives ``[1.511854, -0.755927, 0.377963]``
    (its RMS is ``sqrt(1.75) = 1.322876``).
    """
    x = _array("x", x, 1)
    eps = _eps(eps)
    d = x.shape[-1]
    if d == 0:
        raise ValueError("x must have at least one feature along its last axis")
    out = x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        out = out * _feature_vector("gamma", gamma, d)
    return out


# ----------------------------------------------------------------------------------------------
# Activations
# ----------------------------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def relu(x) -> np.ndarray:
    """``max(0, x)``: everything negative becomes exactly 0 (and its gradient too)."""
    return np.maximum(_array("x", x), 0.0)


def gelu(x, approximate: bool = False) -> np.ndarray:
    """GELU, ``x * Phi(x)`` with ``Phi`` the standard normal CDF: a smooth ReLU that lets a little negative through.

    ``approximate=False`` uses the exact ``erf`` form, ``0.5 x (1 + erf(x / sqrt 2))``;
    ``approximate=True`` uses GPT-2's tanh formula, ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``
    (``torch.nn.functional.gelu(x, approximate="tanh")``). gelu(1) = 0.841345 exact, 0.841192 tanh.
    """
    if not isinstance(approximate, bool):
        raise TypeError(f"approximate must be a bool, got {approximate!r}")
    x = _array("x", x)
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def silu(x) -> np.ndarray:
    """SiLU (also called Swish): ``x * sigmoid(x)``, written so that large ``|x|`` does not overflow."""
    x = _array("x", x)
    # sigmoid(x) = 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: exp never sees a large positive number.
    e = np.exp(-np.abs(x))
    sigmoid = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return x * sigmoid


ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "gelu": gelu,  # exact (erf)
    "gelu_tanh": lambda x: gelu(x, approximate=True),  # GPT-2
    "relu": relu,
    "silu": silu,
}
"""Activations ``mlp`` accepts by name."""


def swiglu(x, W, V, W2) -> np.ndarray:
    """Gated MLP of Llama-style models: ``(silu(x @ W) * (x @ V)) @ W2``.

    One projection (``x @ V``) carries the content and the other, through SiLU, acts as a gate that
    decides how much of each hidden unit passes. Shapes: ``x (..., d)``, ``W`` and ``V (d, h)``,
    ``W2 (h, d_out)``. No biases, as in Llama.
    """
    x = _array("x", x, 1)
    W, V, W2 = (_array(name, m, 2) for name, m in (("W", W), ("V", V), ("W2", W2)))
    for name, m in (("W", W), ("V", V), ("W2", W2)):
        if m.ndim != 2:
            raise ValueError(f"{name} must be a matrix, got shape {m.shape}")
    if W.shape[0] != x.shape[-1] or V.shape[0] != x.shape[-1]:
        raise ValueError(f"W and V must have {x.shape[-1]} rows (the features of x), got {W.shape} and {V.shape}")
    if W.shape != V.shape:
        raise ValueError(f"the gate W and the value projection V must have the same shape, got {W.shape} and {V.shape}")
    if W2.shape[0] != W.shape[1]:
        raise ValueError(f"W2 must have {W.shape[1]} rows (the hidden width), got {W2.shape}")
    return (silu(x @ W) * (x @ V)) @ W2


# ----------------------------------------------------------------------------------------------
# MLP
# ----------------------------------------------------------------------------------------------


def mlp(X, W1, b1, W2, b2, activation: str | Callable = "gelu") -> np.ndarray:
    """Position-wise feed-forward network (formula F4.10, row convention): ``phi(X @ W1 + b1) @ W2 + b2``.

    ``X (..., n, d)``, ``W1 (d, h)``, ``b1 (h,)``, ``W2 (h, d_out)``, ``b2 (d_out,)``; usually
    ``h = 4 d`` and ``d_out = d``. ``b1``/``b2`` may be ``None`` (no bias, as in Llama). ``activation``
    is a name from ``ACTIVATIONS`` (``"gelu"`` is the exact erf form) or a callable. Every row is
    transformed on its own: changing one token never changes another token's output.
    """
    X = _array("X", X, 1)
    W1, W2 = _array("W1", W1, 2), _array("W2", W2, 2)
    if W1.ndim != 2 or W2.ndim != 2:
        raise ValueError(f"W1 and W2 must be matrices, got shapes {W1.shape} and {W2.shape}")
    if W1.shape[0] != X.shape[-1]:
        raise ValueError(f"W1 must have {X.shape[-1]} rows (the features of X, row convention X @ W1), got {W1.shape}")
    if W2.shape[0] != W1.shape[1]:
        raise ValueError(f"W2 must have {W1.shape[1]} rows (the hidden width of W1), got {W2.shape}")
    if isinstance(activation, str):
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; use one of {sorted(ACTIVATIONS)} or a callable")
        phi = ACTIVATIONS[activation]
    elif callable(activation):
        phi = activation
    else:
        raise TypeError(f"activation must be a name or a callable, got {type(activation).__name__}")
    H = X @ W1
    if b1 is not None:
        H = H + _feature_vector("b1", b1, W1.shape[1])
    out = np.asarray(phi(H), dtype=np.float64) @ W2  # the non-linearity sits between the two projections
    if b2 is not None:
        out = out + _feature_vector("b2", b2, W2.shape[1])
    return out


def mlp_param_count(d: int, expansion: int = 4, bias: bool = True) -> int:
    """Parameters of a GELU MLP ``d -> expansion * d -> d``: ``2 * expansion * d^2`` weights (+ ``(expansion + 1) d`` biases).

    With the usual ``expansion = 4``: ``8 d^2 + 5 d``; for ``d = 4096`` that is 134,238,208, against
    ``4 d^2`` for attention's four projections: the MLP holds two thirds of a block.
    """
    for name, value in (("d", d), ("expansion", expansion)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if not isinstance(bias, bool):
        raise TypeError(f"bias must be a bool, got {bias!r}")
    hidden = expansion * d
    weights = d * hidden + hidden * d
    biases = hidden + d if bias else 0
    return weights + biases


# ----------------------------------------------------------------------------------------------
# A whole block
# ----------------------------------------------------------------------------------------------


def _norm(params: Mapping, which: str, x: np.ndarray) -> np.ndarray:
    eps = params.get("eps", 1e-5)
    if params.get("norm_type", "layernorm") == "rmsnorm":
        return rms_norm(x, params.get(f"gamma{which}"), eps=eps)
    return layer_norm(x, params.get(f"gamma{which}"), params.get(f"beta{which}"), eps=eps)


def transformer_block(x, params: Mapping, norm: str = "pre", causal: bool = True) -> np.ndarray:
    """One transformer block (formulas F4.2-F4.4) on ``x (..., n, d)``.

    ``norm="pre"`` (GPT-2, Llama and almost every modern model)::

        a = x + Attention(LN1(x));      out = a + MLP(LN2(a))

    ``norm="post"`` (the original 2017 transformer)::

        a = LN1(x + Attention(x));      out = LN2(a + MLP(a))

    ``params`` holds the weights:

    - attention: ``W_Q, W_K, W_V`` ``(d, n_heads * d_head)``, ``W_O`` ``(n_heads * d_head, d)``,
      ``n_heads`` (default 1), computed with ``llmlab.attention.multi_head_attention`` (causal mask
      unless ``causal=False``); or ``attn_fn``, any callable ``x -> array`` of the same shape;
    - MLP: ``W1, b1, W2, b2`` and ``activation`` (default ``"gelu"``), or ``mlp_fn``;
    - norms: ``gamma1, beta1, gamma2, beta2`` (default 1 and 0), ``eps`` (default 1e-5) and
      ``norm_type`` (``"layernorm"`` or ``"rmsnorm"``, which ignores the betas).

    The ``*_fn`` hooks make it easy to check the wiring with simple stand-ins: with ``attn_fn`` and
    ``mlp_fn`` both the zero function, a pre-norm block returns ``x`` unchanged.
    """
    if norm not in ("pre", "post"):
        raise ValueError(f"norm must be 'pre' or 'post', got {norm!r}")
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict of weights, got {type(params).__name__}")
    if params.get("norm_type", "layernorm") not in ("layernorm", "rmsnorm"):
        raise ValueError(f"params['norm_type'] must be 'layernorm' or 'rmsnorm', got {params['norm_type']!r}")
    x = _array("x", x, 2)

    if "attn_fn" in params:
        attention = params["attn_fn"]
    else:
        missing = [k for k in ("W_Q", "W_K", "W_V", "W_O") if k not in params]
        if missing:
            raise KeyError(f"params needs the attention weights {missing} (or an 'attn_fn')")
        from llmlab.attention import multi_head_attention  # the chapter 03 reference

        def attention(h):
            return multi_head_attention(h, params["W_Q"], params["W_K"], params["W_V"], params["W_O"],
                                        params.get("n_heads", 1), causal=causal)

    if "mlp_fn" in params:
        feed_forward = params["mlp_fn"]
    else:
        missing = [k for k in ("W1", "W2") if k not in params]
        if missing:
            raise KeyError(f"params needs the MLP weights {missing} (or an 'mlp_fn')")

        def feed_forward(h):
            return mlp(h, params["W1"], params.get("b1"), params["W2"], params.get("b2"),
                       activation=params.get("activation", "gelu"))

    if norm == "pre":
        a = residual(x, lambda h: attention(_norm(params, "1", h)))
        return residual(a, lambda h: feed_forward(_norm(params, "2", h)))
    a = _norm(params, "1", residual(x, attention))
    return _norm(params, "2", residual(a, feed_forward))
