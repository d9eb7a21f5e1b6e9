"""llmlab.distill: KL, the chapter's distillation loss (worked numbers 6-5, 6-5b, 6-5c), its batched
PyTorch version against ``torch.nn.functional.kl_div``, and the DPO loss on hand values."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from llmlab import distill
from llmlab.model import ModelConfig, Transformer

TEACHER, STUDENT = [4.0, 2.0, 0.0], [3.0, 2.5, 0.5]


def test_soften_reproduces_6_5():
    np.testing.assert_allclose(distill.soften(TEACHER, 2.0), [0.665241, 0.244728, 0.090031], atol=1e-6)
    np.testing.assert_allclose(distill.soften(STUDENT, 2.0), [0.484190, 0.377087, 0.138723], atol=1e-6)
    np.testing.assert_allclose(distill.soften(TEACHER, 1.0), [0.866813, 0.117310, 0.015876], atol=1e-6)


def test_soften_limits_and_entropy_grows_with_T():
    np.testing.assert_allclose(distill.soften(TEACHER, 1e4), np.full(3, 1 / 3), atol=1e-3)
    np.testing.assert_allclose(distill.soften(TEACHER, 1e-3), [1, 0, 0], atol=1e-12)
    entropies = [-(p * np.log(p)).sum() for p in (distill.soften(TEACHER, T) for T in (0.5, 1, 2, 4, 8))]
    assert all(a < b for a, b in zip(entropies, entropies[1:]))
    with pytest.raises(ValueError):
        distill.soften(TEACHER, 0)


def test_kl_reproduces_6_5_and_6_5b():
    t, s = distill.soften(TEACHER, 2.0), distill.soften(STUDENT, 2.0)
    assert distill.kl_divergence(t, s) == pytest.approx(0.066603, abs=1e-6)  # the chapter's code prints this
    assert 4 * distill.kl_divergence(t, s) == pytest.approx(0.266412, abs=1e-6)  # T^2 KL
    assert distill.kl_divergence(s, t) == pytest.approx(0.069185, abs=1e-6)  # reversed: not the same
    assert distill.kl_divergence(distill.soften(TEACHER, 1), distill.soften(STUDENT, 1)) == pytest.approx(0.181197, abs=1e-6)


def test_kl_properties():
    p = np.array([0.5, 0.5, 0.0])
    assert distill.kl_divergence(p, p) == 0.0
    assert distill.kl_divergence(p, [0.25, 0.25, 0.5]) == pytest.approx(math.log(2))  # 0 log 0 = 0
    assert distill.kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
    batch = distill.kl_divergence(np.stack([p, p]), np.stack([p, [0.25, 0.25, 0.5]]))
    np.testing.assert_allclose(batch, [0.0, math.log(2)])
    with pytest.raises(ValueError):
        distill.kl_divergence([0.5, 0.6], [0.5, 0.5])
    with pytest.raises(ValueError):
        distill.kl_divergence([1.0], [0.5, 0.5])


def test_distill_loss_reproduces_6_5c():
    assert distill.distill_loss(STUDENT, TEACHER, 0, T=2.0, lam=0.5) == pytest.approx(0.395160, abs=1e-6)
    assert distill.distill_loss(STUDENT, TEACHER, 0, T=2.0, lam=0.7) == pytest.approx(0.343661, abs=1e-6)
    ce = -math.log(distill.soften(STUDENT, 1.0)[0])
    assert distill.distill_loss(STUDENT, TEACHER, 0, lam=0.0) == pytest.approx(ce, abs=1e-12)  # = 0.523909
    assert ce == pytest.approx(0.523909, abs=1e-6)


def test_soft_targets_matter_not_only_the_argmax():
    # two teachers with the same top answer but different soft probabilities: different losses (mistake 6-M5)
    a = distill.distill_loss(STUDENT, [4.0, 2.0, 0.0], 0, T=2.0, lam=1.0)
    b = distill.distill_loss(STUDENT, [4.0, 0.0, 2.0], 0, T=2.0, lam=1.0)
    assert abs(a - b) > 0.05


def test_distill_loss_rejects_bad_input():
    with pytest.raises(ValueError):
        distill.distill_loss(STUDENT, TEACHER, 3)
    with pytest.raises(ValueError):
        distill.distill_loss(STUDENT, TEACHER, 0, lam=1.5)
    with pytest.raises(ValueError):
        distill.distill_loss(STUDENT, TEACHER[:2], 0)
    with pytest.raises(ValueError):
        distill.distill_loss(STUDENT, TEACHER, 0, T=-1)


@pytest.mark.parametrize("T, lam", [(1.0, 0.5), (2.0, 0.7), (4.0, 1.0), (0.5, 0.0)])
def test_kd_loss_matches_kl_div_and_cross_entropy(T, lam):
    g = torch.Generator().manual_seed(0)
    s, t = torch.randn(3, 5, 11, generator=g) * 3, torch.randn(3, 5, 11, generator=g) * 3
    y = torch.randint(0, 11, (3, 5), generator=g)
    kl = F.kl_div(F.log_softmax(s / T, -1).reshape(-1, 11), F.log_softmax(t / T, -1).reshape(-1, 11),
                  reduction="batchmean", log_target=True)
    expected = (1 - lam) * F.cross_entropy(s.reshape(-1, 11), y.reshape(-1)) + lam * T**2 * kl
    torch.testing.assert_close(distill.kd_loss(s, t, y, T=T, lam=lam), expected, rtol=1e-6, atol=1e-6)
    # one position = the NumPy reference
    one = distill.distill_loss(s[1, 2].numpy(), t[1, 2].numpy(), int(y[1, 2]), T=T, lam=lam)
    assert float(distill.kd_loss(s[1, 2], t[1, 2], y[1, 2], T=T, lam=lam)) == pytest.approx(one, rel=1e-5)


def test_kd_loss_mask_and_gradients():
    g = torch.Generator().manual_seed(1)
    s = (torch.randn(2, 4, 7, generator=g)).requires_grad_()
    t = torch.randn(2, 4, 7, generator=g).requires_grad_()
    y = torch.randint(0, 7, (2, 4), generator=g)
    mask = torch.tensor([[1, 1, 0, 0], [0, 1, 0, 0]])
    loss = distill.kd_loss(s, t, y, mask=mask)
    keep = mask.bool()
    expected = distill.kd_loss(s[keep], t[keep], y[keep])
    torch.testing.assert_close(loss, expected)
    loss.backward()
    assert t.grad is None  # the teacher is not trained
    assert s.grad[~keep].abs().max() == 0 and s.grad[keep].abs().max() > 0
    with pytest.raises(ValueError):
        distill.kd_loss(s, t[:, :3], y)


def test_dpo_loss_hand_values():
    # equal policy and reference: log 2
    assert distill.dpo_loss(-5.0, -7.0, -5.0, -7.0, beta=0.1) == pytest.approx(math.log(2), abs=1e-12)
    # chosen up by 2 nats, rejected down by 5, beta 0.5: z = 3.5, -log sigmoid(3.5) = log(1 + e^-3.5)
    assert distill.dpo_loss(-10.0, -20.0, -12.0, -15.0, beta=0.5) == pytest.approx(math.log1p(math.exp(-3.5)), abs=1e-12)
    assert distill.dpo_loss(-10.0, -20.0, -12.0, -15.0, beta=0.5) == pytest.approx(0.029750, abs=1e-6)
    # the wrong way round is penalised: z = -3.5
    assert distill.dpo_loss(-12.0, -15.0, -10.0, -20.0, beta=0.5) == pytest.approx(3.5 + math.log1p(math.exp(-3.5)), abs=1e-12)
    # huge margins do not overflow
    assert distill.dpo_loss(0.0, -1e6, 0.0, 0.0, beta=1.0) == 0.0
    assert distill.dpo_loss(-1e6, 0.0, 0.0, 0.0, beta=1.0) == pytest.approx(1e6)
    with pytest.raises(ValueError):
        distill.dpo_loss(0, 0, 0, 0, beta=0)


def test_dpo_loss_torch_batch_and_gradient():
    pw = torch.tensor([-10.0, -3.0], requires_grad=True)
    pl = torch.tensor([-20.0, -2.0], requires_grad=True)
    rw, rl = torch.tensor([-12.0, -3.0]), torch.tensor([-15.0, -2.5])
    loss = distill.dpo_loss(pw, pl, rw, rl, beta=0.5)
    expected = np.mean([distill.dpo_loss(-10, -20, -12, -15, 0.5), distill.dpo_loss(-3, -2, -3, -2.5, 0.5)])
    assert float(loss.detach()) == pytest.approx(expected, rel=1e-6)
    loss.backward()
    assert (pw.grad < 0).all() and (pl.grad > 0).all()  # raise the chosen, lower the rejected


def test_sequence_logprob_sums_the_answer_tokens():
    torch.manual_seed(0)
    model = Transformer(ModelConfig.llama_style(vocab_size=13, d_model=16, n_layers=1, n_heads=2, max_seq_len=16)).eval()
    ids = torch.tensor([[1, 5, 7, 2, 9], [1, 4, 4, 4, 3]])
    mask = torch.tensor([[0, 0, 1, 1, 0], [0, 1, 1, 1, 1]])
    logp = torch.log_softmax(model(ids), -1)
    expected = torch.stack([
        logp[0, 1, 7] + logp[0, 2, 2],
        logp[1, 0, 4] + logp[1, 1, 4] + logp[1, 2, 4] + logp[1, 3, 3],
    ])
    torch.testing.assert_close(distill.sequence_logprob(model, ids, mask), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        distill.sequence_logprob(model, ids, torch.ones_like(ids))


def test_softmax_xent_reproduces_6_1():
    loss, grad = distill.softmax_xent([2.0, 1.0, 0.0], 1)
    assert loss == pytest.approx(1.407606, abs=1e-6)
    np.testing.assert_allclose(grad, [0.665241, -0.755272, 0.090031], atol=1e-6)
    assert abs(grad.sum()) < 1e-12 and (grad < 0).sum() == 1
    # finite differences
    z = np.array([3.0, -1.0, 0.5, 2.0])
    eps = 1e-6
    numeric = [(distill.softmax_xent(z + eps * np.eye(4)[i], 2)[0] - distill.softmax_xent(z - eps * np.eye(4)[i], 2)[0])
               / (2 * eps) for i in range(4)]
    np.testing.assert_allclose(distill.softmax_xent(z, 2)[1], numeric, atol=1e-7)
    loss, _ = distill.softmax_xent([1000.0, 0.0], 1)  # no overflow
    assert loss == pytest.approx(1000.0)
    with pytest.raises(ValueError):
        distill.softmax_xent([1.0, 2.0], 2)
