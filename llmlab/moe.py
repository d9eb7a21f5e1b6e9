"""Mixture of experts (chapter 05): a router picks k of n experts per token, only those run.

The idea in four lines, for one token vector ``x``::

    s = W_r @ x                    # router logits, one score per expert
    g = softmax(s)                 # probability of each expert
    C = top-k of g                 # the k chosen experts
    MoE(x) = sum_{i in C} g_i / (sum_{j in C} g_j) * E_i(x)

so the layer holds ``n_experts`` MLPs but each token pays for ``k`` of them. Renormalising the
chosen probabilities is the same as a softmax over the chosen logits only.

This module, in the order the chapter uses it:

- ``route`` (NumPy): the router of the chapter's code box; ``top_k_renormalized`` is its second half.
- ``moe_forward`` (NumPy): the mixture for expert *callables*, calling only the chosen ones.
- ``moe_param_counts`` / ``solve_moe_split``: total vs active parameters (Mixtral's ≈47B/≈13B).
- ``expert_load`` / ``load_stats``: how evenly the tokens spread over the experts.
- ``load_balancing_loss`` (torch): the auxiliary loss that pushes the router towards balance,
  with exactly the semantics of Hugging Face's ``load_balancing_loss_func``.
- ``SparseMoE`` (torch): the block that replaces the dense MLP in ``llmlab.model`` when
  ``ModelConfig.n_experts > 0`` (Mixtral and Qwen3-MoE style; optional always-on shared experts,
  DeepSeek style). ``router_logits`` collects what the last forward pass of a model routed.

Ties between experts with the same probability go to the lowest index, in NumPy and in torch
(a stable sort), so results never depend on the sorting algorithm.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from llmlab._arrays import as_float_array
from llmlab.ffn import SwiGLU

__all__ = [
    "router_probs",
    "top_k_renormalized",
    "route",
    "moe_forward",
    "moe_param_counts",
    "solve_moe_split",
    "expert_load",
    "load_stats",
    "load_balancing_loss",
    "SparseMoE",
    "router_logits",
]


# ----------------------------------------------------------------------------------------------
# Input checks
# ----------------------------------------------------------------------------------------------


def _check_k(k, n_experts: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, got {type(k).__name__} ({k!r})")
    if k < 1:
        raise ValueError(f"k must be >= 1 (experts per token), got {k}")
    if k > n_experts:
        raise ValueError(f"k={k} cannot exceed n_experts={n_experts}")
    return int(k)


def _check_finite(name: str, values: np.ndarray) -> None:
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite (no NaN or inf); got {values[~np.isfinite(values)][:3]} ...")


def _count(name: str, value, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} ({value!r})")
    if not math.isfinite(value) or value < minimum:
        raise ValueError(f"{name} must be a finite number >= {minimum}, got {value!r}")
    return value


def _n_experts(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


# ----------------------------------------------------------------------------------------------
# The router, in NumPy
# ----------------------------------------------------------------------------------------------


def router_probs(logits) -> np.ndarray:
    """Softmax over the last axis (one probability per expert), stable for huge logits."""
    s = as_float_array("logits", logits, min_ndim=1)
    if s.shape[-1] == 0:
        raise ValueError("logits must have at least one expert (last axis is empty)")
    _check_finite("logits", s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))  # the largest becomes exp(0) = 1: no overflow
    return e / e.sum(axis=-1, keepdims=True)


def top_k_renormalized(probs, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` most probable experts (descending) and their probabilities divided by their sum.

    ``probs`` is ``(n_experts,)`` or ``(tokens, n_experts)``. Returns ``(indices, weights)`` with
    shape ``(k,)`` or ``(tokens, k)``; ties go to the lowest index. With ``g = [0.62, 0.24, 0.09,
    0.05]`` and ``k = 2``: experts ``[0, 1]`` with weights ``[0.7209, 0.2791]``.
    """
    g = as_float_array("probs", probs, min_ndim=1, max_ndim=2)
    _check_finite("probs", g)
    if np.any(g < 0):
        raise ValueError("probs must be >= 0 (probabilities)")
    k = _check_k(k, g.shape[-1])
    order = _top_k_indices(g, k)
    chosen = np.take_along_axis(g, order, axis=-1)
    total = chosen.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("the chosen probabilities sum to 0: cannot renormalise")
    return order, chosen / total


def route(x, W_r, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The router: logits ``W_r @ x`` → softmax → top-k → renormalise.

    ``x`` is one token ``(d,)`` or several ``(tokens, d)``; ``W_r`` is ``(n_experts, d)``.
    Returns ``(indices, weights)``: the chosen experts in descending order of weight (ties: lowest
    index first) and their renormalised weights, which sum to 1 for each token.
    """
    x = as_float_array("x", x, min_ndim=1, max_ndim=2)
    W = as_float_array("W_r", W_r, min_ndim=2, max_ndim=2)
    if W.shape[1] != x.shape[-1]:
        raise ValueError(f"W_r must be (n_experts, d) with d = x.shape[-1] = {x.shape[-1]}, got shape {W.shape}")
    _check_finite("x", x)
    _check_finite("W_r", W)
    k = _check_k(k, W.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):  # reported below as a clear error
        logits = x @ W.T  # (n_experts,) or (tokens, n_experts)
    if not np.all(np.isfinite(logits)):
        raise ValueError("router logits W_r @ x overflowed (not finite); scale x or W_r down")
    # Choose on the logits (softmax keeps their order, and they never underflow into false ties),
    # then renormalise the chosen probabilities.
    order = _top_k_indices(logits, k)
    chosen = np.take_along_axis(router_probs(logits), order, axis=-1)
    return order, chosen / chosen.sum(axis=-1, keepdims=True)


def _top_k_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores along the last axis, descending; ties: lowest index first."""
    return np.argsort(-scores, axis=-1, kind="stable")[..., :k]


def moe_forward(x, W_r, experts: Sequence[Callable], k: int = 2) -> np.ndarray:
    """``sum_{i in top-k} ĝ_i · experts[i](x)`` for one token ``(d,)`` or a batch ``(tokens, d)``.

    Each expert is a callable taking one token vector and returning a vector; only the ``k``
    chosen experts are called for each token (``k`` calls per token, never ``n_experts``).
    """
    x_arr = as_float_array("x", x, min_ndim=1, max_ndim=2)
    if not isinstance(experts, Sequence) or not all(callable(e) for e in experts):
        raise TypeError("experts must be a list of callables (one per expert)")
    W = as_float_array("W_r", W_r, min_ndim=2, max_ndim=2)
    if len(experts) != W.shape[0]:
        raise ValueError(f"experts has {len(experts)} entries but W_r has {W.shape[0]} rows (one per expert)")
    idx, weights = route(x_arr, W, k)
    tokens = x_arr[None] if x_arr.ndim == 1 else x_arr
    idx, weights = np.atleast_2d(idx), np.atleast_2d(weights)
    rows = []
    for token, chosen, w in zip(tokens, idx, weights):
        rows.append(sum(wi * np.asarray(experts[i](token), dtype=np.float64) for i, wi in zip(chosen, w)))
    out = np.stack(rows)
    return out[0] if x_arr.ndim == 1 else out


# ----------------------------------------------------------------------------------------------
# Total vs active parameters
# ----------------------------------------------------------------------------------------------


def moe_param_counts(shared: float, per_expert: float, n_experts: int, k: int) -> dict[str, float]:
    """``total = S + n·E``, ``active = S + k·E`` and ``active_fraction = active / total``.

    ``shared`` (S) is everything every token uses (attention, embeddings, norms, router) and
    ``per_expert`` (E) one expert summed over all layers. Mixtral-like: S = 1.667e9,
    E = 5.667e9, n = 8, k = 2 gives ≈47e9 total and ≈13e9 active.
    """
    S = _count("shared", shared)
    E = _count("per_expert", per_expert)
    n = _n_experts("n_experts", n_experts)
    k = _check_k(k, n)
    total, active = S + n * E, S + k * E
    if total <= 0:
        raise ValueError("shared + n_experts * per_expert must be > 0")
    return {"total": total, "active": active, "active_fraction": active / total}


def solve_moe_split(total: float, active: float, n_experts: int, k: int) -> tuple[float, float]:
    """Invert ``moe_param_counts``: ``(shared, per_expert)`` from published total and active counts.

    From ``S + n·E = total`` and ``S + k·E = active``: ``E = (total - active) / (n - k)`` and
    ``S = active - k·E``. Mixtral (47e9, 13e9, 8, 2): E ≈ 5.667e9, S ≈ 1.667e9.
    """
    total = _count("total", total)
    active = _count("active", active)
    n = _n_experts("n_experts", n_experts)
    k = _check_k(k, n)
    if k == n:
        raise ValueError("with k == n_experts every expert is active: total and active cannot be split")
    if active > total:
        raise ValueError(f"active ({active}) cannot exceed total ({total})")
    per_expert = (total - active) / (n - k)
    shared = active - k * per_expert
    if shared < 0:
        raise ValueError(f"inconsistent counts: they imply a negative shared part ({shared:.4g})")
    return shared, per_expert


# ----------------------------------------------------------------------------------------------
# Load: how evenly tokens spread over the experts
# ----------------------------------------------------------------------------------------------


def expert_load(router_logits, k: int) -> np.ndarray:
    """Share of the ``tokens · k`` assignments each expert receives (sums to 1), shape ``(n_experts,)``.

    ``router_logits`` is ``(tokens, n_experts)`` (NumPy, lists or a torch tensor).
    """
    s = as_float_array("router_logits", router_logits, min_ndim=2, max_ndim=2)
    if s.shape[0] == 0:
        raise ValueError("router_logits has no tokens")
    _check_finite("router_logits", s)
    idx = _top_k_indices(s, _check_k(k, s.shape[1]))  # the same experts as top-k of the softmax
    counts = np.bincount(idx.reshape(-1), minlength=s.shape[1])
    return counts / counts.sum()


def load_stats(share) -> dict[str, float]:
    """Summary of a load vector (shares or counts per expert).

    - ``max_share``: the busiest expert's share (1/n when balanced, 1 when collapsed onto one).
    - ``max_over_mean``: ``max_share · n`` (1 when balanced).
    - ``entropy``: ``-sum s log s`` in nats, and ``normalized_entropy`` = entropy / log n (1 when balanced).
    - ``cv``: coefficient of variation std/mean with the population std (0 balanced, √(n-1) collapsed).
    """
    s = as_float_array("share", share, min_ndim=1, max_ndim=1)
    _check_finite("share", s)
    if s.size == 0 or np.any(s < 0) or s.sum() <= 0:
        raise ValueError("share must be a non-empty vector of non-negative numbers with a positive sum")
    s = s / s.sum()
    n = s.size
    nonzero = s[s > 0]
    ent = float(-(nonzero * np.log(nonzero)).sum())
    return {
        "max_share": float(s.max()),
        "max_over_mean": float(s.max() * n),
        "entropy": ent,
        "normalized_entropy": ent / math.log(n) if n > 1 else 1.0,
        "cv": float(s.std() / s.mean()),
    }


def load_balancing_loss(router_logits, k: int, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Auxiliary load-balancing loss (Switch Transformer), as Hugging Face computes it.

    ``router_logits`` is a ``[tokens, n_experts]`` tensor or a sequence of them (one per MoE layer).
    With ``f_i`` = top-k assignments to expert ``i`` per token and ``P_i`` = mean router probability
    of expert ``i``, both pooled over the layers::

        loss = n_experts · sum_i f_i · P_i

    Balanced routing gives ``k`` (``f_i = k/n``, ``P_i = 1/n``); everything on the same experts with
    probability near 1 gives up to ``n_experts``. ``f`` is a count (no gradient); the gradient flows
    through ``P``, pushing probability away from busy experts. Equal to transformers'
    ``load_balancing_loss_func(logits, n_experts, k, attention_mask)``; ``attention_mask``
    (``[batch, seq]``, 1 = real token) leaves padding out. Multiply by a small coefficient
    (``router_aux_loss_coef``: 0.02 for Mixtral, 0.01 in Switch) before adding it to the LM loss.
    """
    layers = [router_logits] if isinstance(router_logits, torch.Tensor) else list(router_logits)
    if not layers or not all(isinstance(t, torch.Tensor) and t.dim() == 2 for t in layers):
        raise ValueError("router_logits must be a [tokens, n_experts] tensor or a non-empty sequence of them")
    n_experts = layers[0].shape[1]
    if any(t.shape != layers[0].shape for t in layers):
        raise ValueError(f"every layer's router_logits must have the same shape, got {[tuple(t.shape) for t in layers]}")
    k = _check_k(k, n_experts)
    if any(not torch.isfinite(t).all() for t in layers):
        raise ValueError("router_logits must be finite (no NaN or inf)")
    tokens = layers[0].shape[0]
    # float32 at least (HF's precision); float64 logits stay float64 (NumPy references, tests).
    dtype = torch.float64 if layers[0].dtype == torch.float64 else torch.float32
    if attention_mask is None:
        mask = torch.ones(tokens, device=layers[0].device, dtype=dtype)
    else:
        mask = attention_mask.reshape(-1).to(device=layers[0].device, dtype=dtype)
        if mask.numel() != tokens:
            raise ValueError(f"attention_mask has {mask.numel()} entries for {tokens} router rows")

    assigned = torch.zeros(n_experts, device=layers[0].device, dtype=dtype)
    prob_sum = torch.zeros(n_experts, device=layers[0].device, dtype=dtype)
    for logits in layers:
        probs = torch.softmax(logits.to(dtype), dim=-1)  # [tokens, n_experts]
        chosen = torch.sort(probs, dim=-1, descending=True, stable=True).indices[:, :k]
        one_hot = F.one_hot(chosen, n_experts).sum(dim=1).to(dtype)  # [tokens, n_experts], k ones per row
        assigned = assigned + (one_hot * mask[:, None]).sum(dim=0)
        prob_sum = prob_sum + (probs * mask[:, None]).sum(dim=0)
    rows = mask.sum() * len(layers)
    return n_experts * torch.sum((assigned / rows) * (prob_sum / rows))


# ----------------------------------------------------------------------------------------------
# The torch block
# ----------------------------------------------------------------------------------------------


def _swiglu(d_model: int, d_ff: int, bias: bool) -> nn.Module:
    return SwiGLU(d_model, d_ff, bias=bias)


class SparseMoE(nn.Module):
    """Router + ``n_experts`` SwiGLU experts; each token runs through exactly ``k`` of them.

    - ``router``: ``Linear(d_model, n_experts)`` without bias gives the logits.
    - The softmax is taken in float32; the top-k probabilities are renormalised to sum to 1
      (``normalize=True``: Mixtral, Qwen3-MoE with ``norm_topk_prob``) or used as they are.
    - ``n_shared_experts`` > 0 adds one always-on SwiGLU of width ``n_shared_experts · d_ff``
      (DeepSeek's shared experts), summed with the routed mixture.

    After each forward pass ``last_router_logits`` holds the ``[tokens, n_experts]`` logits (with
    their graph, for the auxiliary loss). With ``track_stats`` (default) the block also
    accumulates ``tokens_per_expert`` and ``expert_flops`` (2 FLOPs per multiply-add in the three
    expert matrices of every token-expert pair, plus the shared experts); ``reset_stats()`` clears them.
    """

    def __init__(self, d_model: int, d_ff: int, n_experts: int, k: int = 2, *, n_shared_experts: int = 0,
                 normalize: bool = True, bias: bool = False, track_stats: bool = True):
        super().__init__()
        for name, value in (("d_model", d_model), ("d_ff", d_ff), ("n_experts", n_experts)):
            _n_experts(name, value)
        self.k = _check_k(k, n_experts)
        if isinstance(n_shared_experts, bool) or not isinstance(n_shared_experts, int) or n_shared_experts < 0:
            raise ValueError(f"n_shared_experts must be an int >= 0, got {n_shared_experts!r}")
        self.d_model, self.d_ff, self.n_experts = d_model, d_ff, n_experts
        self.normalize = bool(normalize)
        self.track_stats = bool(track_stats)
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(_swiglu(d_model, d_ff, bias) for _ in range(n_experts))
        self.shared = _swiglu(d_model, n_shared_experts * d_ff, bias) if n_shared_experts else None
        self.last_router_logits: torch.Tensor | None = None
        self.reset_stats()

    @classmethod
    def from_config(cls, config) -> SparseMoE:
        """The MoE layer an ``llmlab.model.ModelConfig`` with ``n_experts > 0`` asks for."""
        return cls(config.d_model, config.moe_d_ff, config.n_experts, config.n_experts_per_token,
                   n_shared_experts=config.n_shared_experts, normalize=config.moe_normalize, bias=config.bias)

    def reset_stats(self) -> None:
        self.tokens_per_expert = torch.zeros(self.n_experts, dtype=torch.long, device="cpu")  # not on "meta"
        self.expert_flops = 0

    def route(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(logits [T, n], indices [T, k], weights [T, k])`` for tokens ``x`` ``[T, d_model]``."""
        logits = self.router(x)  # [T, n_experts]
        probs = torch.softmax(logits, dim=-1, dtype=torch.float32)
        # A stable sort, not topk: equal probabilities go to the lowest index, as in ``route``.
        order = torch.sort(probs, dim=-1, descending=True, stable=True).indices[:, : self.k]
        weights = probs.gather(-1, order)  # [T, k]
        if self.normalize:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return logits, order, weights.to(x.dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        if shape[-1] != self.d_model:
            raise ValueError(f"x must end in d_model={self.d_model}, got shape {tuple(shape)}")
        tokens = x.reshape(-1, self.d_model)  # [T, d]
        logits, idx, weights = self.route(tokens)
        self.last_router_logits = logits
        out = torch.zeros_like(tokens)
        # Dispatch: each expert sees only the tokens routed to it (exactly k experts per token).
        for e, expert in enumerate(self.experts):
            token_ids, slot = torch.where(idx == e)
            if token_ids.numel() == 0:
                continue  # nobody chose this expert: it costs nothing
            y = expert(tokens[token_ids]) * weights[token_ids, slot, None]
            out.index_add_(0, token_ids, y.to(out.dtype))
        if self.shared is not None:
            out = out + self.shared(tokens)
        if self.track_stats:
            with torch.no_grad():
                self.tokens_per_expert += torch.bincount(idx.reshape(-1).cpu(), minlength=self.n_experts)
            per_pair = 2 * 3 * self.d_model * self.d_ff  # gate, up and down: one multiply-add per weight
            shared_width = self.shared.down.in_features if self.shared is not None else 0
            self.expert_flops += idx.numel() * per_pair + tokens.shape[0] * 2 * 3 * self.d_model * shared_width
        return out.reshape(shape)

    def extra_repr(self) -> str:
        shared = f", shared d_ff={self.shared.down.in_features}" if self.shared is not None else ""
        return f"n_experts={self.n_experts}, k={self.k}, normalize={self.normalize}{shared}"


def router_logits(model: nn.Module) -> list[torch.Tensor]:
    """The router logits of every ``SparseMoE`` layer of ``model`` from its last forward pass, in order.

    Feed them to ``load_balancing_loss(router_logits(model), k)`` after ``logits = model(ids)``.
    """
    found = [m.last_router_logits for m in model.modules() if isinstance(m, SparseMoE)]
    if not found:
        raise ValueError("model has no SparseMoE layers")
    if any(t is None for t in found):
        raise ValueError("run a forward pass first: some SparseMoE layers have no router logits yet")
    return found
