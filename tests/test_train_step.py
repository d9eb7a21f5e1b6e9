"""llmlab.train_step against PyTorch: the linear head's gradient by autograd, the SGD update, and labels that
torch's cross-entropy (ignore_index=-100, as Hugging Face uses it) turns into the mean over the answer alone."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from llmlab import train_step as TS


@pytest.mark.parametrize("B, d, V, scale", [(1, 3, 4, 1.0), (8, 6, 10, 1.0), (5, 4, 3, 40.0)])
def test_linear_head_grad_matches_autograd(B, d, V, scale):
    rng = np.random.default_rng(B * 100 + V)
    h, W = rng.normal(0, scale, (B, d)), rng.normal(size=(d, V))
    t = rng.integers(0, V, size=B)
    W_t = torch.tensor(W, requires_grad=True)
    F.cross_entropy(torch.tensor(h) @ W_t, torch.tensor(t)).backward()
    np.testing.assert_allclose(TS.linear_head_grad(h, W, t), W_t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_linear_head_grad_chapter_example_and_errors():
    g = TS.linear_head_grad([[1.0, 1.0]], [[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [1])
    np.testing.assert_allclose(g, [[0.665241, -0.755272, 0.090031]] * 2, atol=1e-6)
    for bad in ([3], [-1], [0, 0]):
        with pytest.raises(ValueError):
            TS.linear_head_grad([[1.0, 1.0]], np.zeros((2, 3)), bad)
    with pytest.raises(ValueError):
        TS.linear_head_grad(np.zeros((2, 3)), np.zeros((2, 3)), [0, 0])


def test_sgd_step_matches_torch_sgd_and_leaves_theta_alone():
    rng = np.random.default_rng(0)
    theta, grad = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    before = theta.copy()
    p = torch.nn.Parameter(torch.tensor(theta))
    p.grad = torch.tensor(grad)
    torch.optim.SGD([p], lr=0.3).step()
    np.testing.assert_allclose(TS.sgd_step(theta, grad, lr=0.3), p.detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(theta, before)
    assert TS.sgd_step([1, 2], [1, 1], lr=1).dtype == np.float64
    for args in ((np.zeros(3), np.zeros((1, 3))), (np.zeros(3), np.zeros(3), -0.1)):
        with pytest.raises(ValueError):
            TS.sgd_step(*args)


def test_answer_labels_give_the_answer_only_mean():
    ids, labels = TS.answer_labels(np.array([5, 17, 9]), [0, 7, 2], max_len=8, pad_id=0)
    assert ids == [5, 17, 9, 0, 7, 2, 0, 0]
    assert labels == [-100, -100, -100, 0, 7, 2, -100, -100]
    assert all(type(i) is int for i in ids + labels)
    logits = torch.randn(8, 20, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    target = torch.tensor(labels)
    keep = target != -100
    assert torch.allclose(F.cross_entropy(logits, target), F.cross_entropy(logits[keep], target[keep]))
    with pytest.raises(ValueError):
        TS.answer_labels([1, 2, 3], [4, 5], max_len=4)
    with pytest.raises(ValueError):
        TS.answer_labels([1], [])
