"""One supervised training step written by hand (chapter 06, F6.4-F6.9): the references for lab 06.

``linear_head_grad`` is the gradient of the mean cross-entropy of a linear head ``z = h W`` with respect to
``W`` (``hᵀ(p − y) / B``), ``sgd_step`` the plain update ``θ − η ∇L``, and ``answer_labels`` builds the
``(input_ids, labels)`` pair of supervised fine-tuning where every token outside the answer is labelled
``-100``, the value Hugging Face's cross-entropy ignores (the model shifts the labels itself).
"""

from __future__ import annotations

import numpy as np

from llmlab.functional import softmax

IGNORE_INDEX = -100  # torch.nn.CrossEntropyLoss's default ignore_index, used by Hugging Face for masked labels


def linear_head_grad(h, W, targets) -> np.ndarray:
    """``∂L/∂W`` for ``L = mean_b −log softmax(h_b W)[targets_b]``: ``hᵀ(p − Y) / B``, float64 of shape ``W.shape``.

    ``h`` is ``[B, d]``, ``W`` is ``[d, V]`` and ``targets`` holds ``B`` indices in ``[0, V)``.
    """
    h = np.asarray(h, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64)
    t = np.asarray(targets)
    if h.ndim != 2 or W.ndim != 2 or h.shape[1] != W.shape[0]:
        raise ValueError(f"h must be [B, d] and W [d, V], got {h.shape} and {W.shape}")
    if t.shape != (h.shape[0],) or t.dtype.kind not in "iu":
        raise ValueError(f"targets must be {h.shape[0]} integer indices, got {targets!r}")
    if np.any(t < 0) or np.any(t >= W.shape[1]):
        raise ValueError(f"targets must lie in [0, {W.shape[1]}), got {targets!r}")
    p = softmax(h @ W, axis=-1)
    p[np.arange(h.shape[0]), t] -= 1.0
    return h.T @ p / h.shape[0]


def sgd_step(theta, grad, lr: float = 2e-5) -> np.ndarray:
    """``θ − lr · grad`` as a new float64 array; ``theta`` is left untouched."""
    theta = np.asarray(theta, dtype=np.float64)
    grad = np.asarray(grad, dtype=np.float64)
    if theta.shape != grad.shape:
        raise ValueError(f"theta and grad must have the same shape, got {theta.shape} and {grad.shape}")
    if not lr >= 0:
        raise ValueError(f"lr must be >= 0, got {lr!r}")
    return theta - lr * grad


def answer_labels(prompt_ids, answer_ids, max_len: int | None = None, pad_id: int = 0) -> tuple[list[int], list[int]]:
    """``(input_ids, labels)`` for one SFT example: the prompt's positions (and any padding) are labelled -100.

    ``input_ids = prompt + answer`` (padded with ``pad_id`` up to ``max_len`` when given); ``labels`` copies the
    answer's ids at the answer's positions. An empty answer, or one that does not fit in ``max_len``, raises.
    """
    prompt, answer = [int(i) for i in prompt_ids], [int(i) for i in answer_ids]
    if not answer:
        raise ValueError("the answer is empty: nothing to learn from")
    ids = prompt + answer
    labels = [IGNORE_INDEX] * len(prompt) + answer
    if max_len is not None:
        if len(ids) > max_len:
            raise ValueError(f"prompt + answer take {len(ids)} tokens, more than max_len={max_len}")
        ids += [int(pad_id)] * (max_len - len(ids))
        labels += [IGNORE_INDEX] * (max_len - len(labels))
    return ids, labels
