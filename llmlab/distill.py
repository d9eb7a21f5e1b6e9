"""Distillation and preference losses (chapter 06): a small model learns from a big one's soft answers.

A teacher's logits ``z_t`` say more than its top answer: "París 0.82, Lyon 0.10, Madrid 0.05,
azul 0.03" tells the student which wrong answers are *almost* right. Dividing the logits by a
temperature ``T > 1`` before the softmax (F6.14) flattens the distribution so that those small
probabilities carry weight::

    p_t = softmax(z_t / T)        p_s = softmax(z_s / T)

and the student minimises (F6.15, Hinton et al. 2015)::

    L = (1 - lam) * CE(y, softmax(z_s)) + lam * T^2 * KL(p_t || p_s)

- the cross-entropy with the true label ``y`` is taken at ``T = 1``;
- ``KL(p || q) = sum_i p_i log(p_i / q_i)`` in nats; it is 0 only when the distributions agree,
  and it is not symmetric: the teacher's distribution comes first (the student is asked to put
  mass wherever the teacher does);
- the gradients of the soft term shrink like ``1 / T^2``; the ``T^2`` factor brings them back to
  the scale of the cross-entropy, so ``lam`` means the same at every temperature.

Preferences instead of a teacher: DPO (Rafailov et al. 2023) raises the log-probability of the
chosen answer ``y_w`` relative to the rejected one ``y_l``, both measured against a frozen
reference model, with a logistic loss::

    L = -log sigmoid(beta * [(log pi(y_w) - log pi_ref(y_w)) - (log pi(y_l) - log pi_ref(y_l))])

Two versions of everything: NumPy references on one example (what the lab checks, with the
chapter's numbers) and PyTorch losses on batches of ``[batch, seq, vocab]`` logits (what training
uses; ``kd_loss`` and ``dpo_loss`` accept tensors and keep the graph).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .functional import log_softmax, softmax
from .train import train

__all__ = [
    "softmax_xent",
    "distill_loss",
    "distill_train",
    "dpo_loss",
    "kd_loss",
    "kl_divergence",
    "sequence_logprob",
    "soften",
]


def _check_float(name: str, value, *, low: float | None = None, high: float | None = None, open_low: bool = False):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value):
        raise TypeError(f"{name} must be a finite number, got {value!r}")
    value = float(value)
    if low is not None and (value < low or (open_low and value == low)):
        raise ValueError(f"{name} must be {'>' if open_low else '>='} {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value!r}")
    return value


# ----------------------------------------------------------------------------------------------
# NumPy references (one example or a batch along the last axis)
# ----------------------------------------------------------------------------------------------


def softmax_xent(logits, target: int) -> tuple[float, np.ndarray]:
    """The hard-label loss and its gradient (F6.5-F6.7): ``(L, dL/dz)`` with ``L = -log p_target``, ``dL/dz = p - y``.

    ``y`` is the one-hot vector of ``target``. The gradient sums to 0 and only the target gets a
    negative component: a descent step raises the right token's logit and lowers the others in
    proportion to how much probability they took. For the chapter's logits ``[2, 1, 0]`` and
    target 1: ``L = 1.407606`` and ``p - y = [0.665241, -0.755272, 0.090031]``.
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 1 or z.shape[0] == 0:
        raise ValueError(f"logits must be a non-empty vector, got shape {z.shape}")
    if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or not 0 <= target < z.shape[0]:
        raise ValueError(f"target must be an index in [0, {z.shape[0]}), got {target!r}")
    p = softmax(z)
    grad = p.copy()
    grad[target] -= 1.0
    return float(-log_softmax(z)[target]), grad


def soften(logits, T: float = 1.0) -> np.ndarray:
    """The teacher's (or student's) distribution at temperature ``T``: ``softmax(logits / T)``.

    ``T = 1`` is the plain softmax; larger ``T`` flattens it towards uniform, smaller sharpens it
    towards one-hot. Same order of the probabilities at every ``T``.
    """
    return softmax(logits, temperature=_check_float("T", T, low=0.0, open_low=True))


def kl_divergence(p, q):
    """``KL(p || q) = sum_i p_i log(p_i / q_i)`` in nats, along the last axis (a float for one distribution).

    ``0 log 0 = 0``: tokens that ``p`` never picks do not count. Where ``p_i > 0`` and ``q_i = 0``
    the divergence is infinite (``q`` rules out something ``p`` does).
    """
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if p.shape != q.shape or p.ndim == 0:
        raise ValueError(f"p and q must be distributions of the same shape, got {p.shape} and {q.shape}")
    for name, d in (("p", p), ("q", q)):
        if np.any(d < 0) or not np.allclose(d.sum(axis=-1), 1.0, atol=1e-6):
            raise ValueError(f"{name} must be a probability distribution (non-negative, summing to 1 along the last axis)")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
    kl = terms.sum(axis=-1)
    return float(kl) if kl.ndim == 0 else kl


def distill_loss(student_logits, teacher_logits, y: int, T: float = 2.0, lam: float = 0.5) -> float:
    """The chapter's loss on one example: ``(1 - lam) CE(y, p_s) + lam T^2 KL(p_t^T || p_s^T)`` (nats).

    ``y`` is the index of the true token; the CE is taken at ``T = 1``. ``lam = 0`` is plain
    training on the label; ``lam = 1`` is pure imitation of the teacher.
    """
    s, t = np.asarray(student_logits, dtype=np.float64), np.asarray(teacher_logits, dtype=np.float64)
    if s.ndim != 1 or s.shape != t.shape:
        raise ValueError(f"student_logits and teacher_logits must be vectors of the same length, got {s.shape} and {t.shape}")
    if isinstance(y, bool) or not isinstance(y, (int, np.integer)) or not 0 <= y < s.shape[0]:
        raise ValueError(f"y must be a token index in [0, {s.shape[0]}), got {y!r}")
    T = _check_float("T", T, low=0.0, open_low=True)
    lam = _check_float("lam", lam, low=0.0, high=1.0)
    ce = -log_softmax(s)[y]
    kl = kl_divergence(soften(t, T), soften(s, T))
    return float((1.0 - lam) * ce + lam * T**2 * kl)


# ----------------------------------------------------------------------------------------------
# PyTorch losses for training (batches of sequences)
# ----------------------------------------------------------------------------------------------


def kd_loss(
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor,
    targets: torch.Tensor,
    *,
    T: float = 2.0,
    lam: float = 0.5,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """``distill_loss`` averaged over the positions of a batch: logits ``[..., vocab]``, ``targets`` ``[...]``.

    The KL term is ``sum_i p_t log(p_t / p_s)`` at temperature ``T``, computed from log-softmaxes
    (stable for any logits) and summed over the vocabulary; both terms are then averaged over
    the positions where ``mask`` is 1 (all of them without a mask). The teacher is not
    differentiated (its logits are detached).
    """
    if student_logits.shape != teacher_logits.shape or student_logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"shapes do not match: student {tuple(student_logits.shape)}, teacher {tuple(teacher_logits.shape)}, "
            f"targets {tuple(targets.shape)} (logits [..., vocab], targets [...])"
        )
    T = _check_float("T", T, low=0.0, open_low=True)
    lam = _check_float("lam", lam, low=0.0, high=1.0)
    vocab = student_logits.shape[-1]
    s, t = student_logits.reshape(-1, vocab), teacher_logits.detach().reshape(-1, vocab)
    ce = F.cross_entropy(s, targets.reshape(-1), reduction="none")  # at T = 1, with the true label
    log_ps, log_pt = F.log_softmax(s / T, dim=-1), F.log_softmax(t / T, dim=-1)
    kl = (log_pt.exp() * (log_pt - log_ps)).sum(dim=-1)  # KL(teacher || student), nats per position
    per_position = (1.0 - lam) * ce + lam * T**2 * kl
    if mask is None:
        return per_position.mean()
    m = mask.reshape(-1).to(per_position.dtype)
    if m.shape != per_position.shape:
        raise ValueError(f"mask must have the shape of targets {tuple(targets.shape)}, got {tuple(mask.shape)}")
    return (per_position * m).sum() / m.sum().clamp(min=1.0)


def dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta: float = 0.1):
    """DPO: ``-log sigmoid(beta * ((pi_w - ref_w) - (pi_l - ref_l)))``, the arguments being sequence log-probabilities.

    Accepts floats / NumPy arrays (returns a float, or an array for arrays) or torch tensors
    (returns the mean over the batch, differentiable). Computed as ``softplus(-z)``, which does
    not overflow for large margins. With policy = reference the loss is ``log 2``.
    """
    beta = _check_float("beta", beta, low=0.0, open_low=True)
    values = (policy_chosen, policy_rejected, ref_chosen, ref_rejected)
    if any(isinstance(v, torch.Tensor) for v in values):
        pw, pl, rw, rl = (torch.as_tensor(v, dtype=torch.float32) if not isinstance(v, torch.Tensor) else v for v in values)
        z = beta * ((pw - rw) - (pl - rl))
        return F.softplus(-z).mean()
    pw, pl, rw, rl = (np.asarray(v, dtype=np.float64) for v in values)
    z = beta * ((pw - rw) - (pl - rl))
    loss = np.logaddexp(0.0, -z)  # = -log sigmoid(z)
    return float(loss) if loss.ndim == 0 else loss


def sequence_logprob(model, input_ids: torch.Tensor, answer_mask: torch.Tensor) -> torch.Tensor:
    """``log pi(answer | prompt)`` per row: the sum of the log-probabilities of the tokens marked 1 in ``answer_mask``.

    ``input_ids`` and ``answer_mask`` are ``[batch, seq]``; position ``t`` of the mask says
    whether token ``t`` is part of the answer (it is predicted from the tokens before it), so
    ``answer_mask[:, 0]`` must be 0. What DPO compares between the chosen and the rejected answer.
    """
    if input_ids.shape != answer_mask.shape or input_ids.dim() != 2:
        raise ValueError(f"input_ids and answer_mask must both be [batch, seq], got {tuple(input_ids.shape)} and {tuple(answer_mask.shape)}")
    if bool(answer_mask[:, 0].any()):
        raise ValueError("answer_mask[:, 0] must be 0: the first token has no prefix to be predicted from")
    logits = model(input_ids[:, :-1])  # [batch, seq - 1, vocab]
    logp = F.log_softmax(logits.float(), dim=-1).gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    return (logp * answer_mask[:, 1:].to(logp.dtype)).sum(dim=-1)


# ----------------------------------------------------------------------------------------------
# Training a student
# ----------------------------------------------------------------------------------------------


# What distill_train changes in train's defaults: a small student, a short run, no progress bar.
DISTILL_DEFAULTS = {"batch_size": 8, "lr": 2e-3, "warmup": 20, "eval_every": 50, "progress": False}


def distill_train(student, teacher, train_ids, val_ids, *, steps: int, T: float = 2.0, lam: float = 0.5,
                  **options) -> dict:
    """Train ``student`` on a token stream with ``kd_loss`` against a frozen ``teacher`` (in place).

    ``llmlab.train.train`` (same batches for the same ``seed``, AdamW, warm-up and cosine decay,
    clipping) with its ``loss_fn`` set to ``(1 - lam) CE + lam T^2 KL(teacher || student)``;
    ``lam = 0`` is plain training on the hard labels, the fair baseline (same data, steps and
    seed). The validation loss is the plain cross-entropy (``llmlab.train.evaluate``), so runs
    with different ``lam`` are compared on the same scale. The weights of the best evaluation are
    kept. ``options`` go to ``train`` (``batch_size``, ``seq_len``, ``lr``, ``warmup``, ``weight_decay``,
    ``grad_clip``, ``eval_every``, ``eval_tokens``, ``seed``, ``progress``), with the defaults of a small student:
    ``DISTILL_DEFAULTS``. Returns ``train``'s history (``train_loss`` per step, ``eval_step``, ``val_loss``,
    ``best_step``, ``best_val_loss``, ``seconds``, ...).
    """
    teacher.eval()

    def loss_fn(model, inputs, targets, mask):
        with torch.no_grad():
            teacher_logits = teacher(inputs) if lam > 0 else None
        student_logits = model(inputs)
        if teacher_logits is None:  # lam = 0: the soft term is multiplied by 0, skip the teacher's cost
            teacher_logits = student_logits.detach()
        return kd_loss(student_logits, teacher_logits, targets, T=T, lam=lam)

    settings = {**DISTILL_DEFAULTS, "desc": f"student (lam={lam:g})", **options}
    return train(student, train_ids, val_ids, steps=steps, loss_fn=loss_fn, **settings)
