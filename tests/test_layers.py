"""llmlab.layers: chapter 04's worked numbers, properties that catch its common mistakes, and parity
with PyTorch (torch.nn.functional and llmlab.model's modules)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from llmlab import layers as L
from llmlab.model import MLP, Block, LayerNorm, ModelConfig, RMSNorm, SwiGLU

X_BOOK = [2.0, -1.0, 0.5]  # E4.2-E4.3


def rng(seed=0):
    return np.random.default_rng(seed)


# ---- chapter 04 worked numbers -----------------------------------------------------------------

def test_residual_e4_2():
    y = L.residual(np.array(X_BOOK), lambda x: np.array([0.1, 0.4, -0.2]))
    np.testing.assert_allclose(y, [2.1, -0.6, 0.3], atol=1e-12)
    # f = 0: the block passes x through untouched.
    np.testing.assert_array_equal(L.residual(np.array(X_BOOK), np.zeros_like), X_BOOK)


def test_layer_norm_e4_3():
    np.testing.assert_allclose(L.layer_norm(X_BOOK), [1.224741, -1.224741, 0.0], atol=1e-6)
    # LayerNorm of the residual output of E4.2 [derived]
    np.testing.assert_allclose(L.layer_norm([2.1, -0.6, 0.3]), [1.336301, -1.069041, -0.267260], atol=1e-6)


def test_layer_norm_uses_population_variance_and_eps_inside_the_sqrt():
    # ddof = 1 would give [1, -1, 0]; without eps the first value would be 1.224745.
    got = L.layer_norm(X_BOOK)
    assert abs(got[0] - 1.0) > 0.2
    np.testing.assert_allclose(got[0], 1.5 / math.sqrt(1.5 + 1e-5), rtol=1e-12)
    # A tiny spread: eps inside the sqrt dominates (eps outside would give ~±1.22).
    tiny = L.layer_norm([1e-3, -1e-3, 0.0])
    np.testing.assert_allclose(tiny, np.array([1e-3, -1e-3, 0]) / math.sqrt(2e-6 / 3 + 1e-5), rtol=1e-12)
    # A constant row has no spread: 0, never NaN.
    np.testing.assert_array_equal(L.layer_norm([3.0, 3.0, 3.0]), [0.0, 0.0, 0.0])


def test_rms_norm_e4_3_derived():
    np.testing.assert_allclose(L.rms_norm(X_BOOK), [1.511854, -0.755927, 0.377963], atol=1e-6)
    # RMSNorm does not subtract the mean: that would reproduce LayerNorm's [1.2247, -1.2247, 0].
    assert abs(L.rms_norm(X_BOOK)[2]) > 0.3


def test_gelu_e4_7_values():
    np.testing.assert_allclose(L.gelu([-1.0, 0.0, 1.0, 2.0]), [-0.158655, 0.0, 0.841345, 1.954500], atol=1e-6)
    np.testing.assert_allclose(L.gelu([-1.0, 0.0, 1.0, 2.0], approximate=True),
                               [-0.158808, 0.0, 0.841192, 1.954598], atol=1e-6)
    np.testing.assert_array_equal(L.relu([-1.0, 0.0, 2.5]), [0.0, 0.0, 2.5])


def test_mlp_param_count():
    assert L.mlp_param_count(4096) == 134_238_208 == 8 * 4096**2 + 5 * 4096
    assert L.mlp_param_count(4096, bias=False) == 8 * 4096**2
    assert L.mlp_param_count(768, expansion=2) == 2 * 2 * 768**2 + 3 * 768
    # Two thirds of 12 d^2 (attention 4 d^2 + MLP 8 d^2), ignoring biases.
    d = 4096
    assert L.mlp_param_count(d, bias=False) / (4 * d * d + L.mlp_param_count(d, bias=False)) == pytest.approx(2 / 3)
    assert isinstance(L.mlp_param_count(3), int)


# ---- properties (the chapter's mistakes) -------------------------------------------------------

def test_norms_work_on_each_row_on_its_own():
    X = rng(1).normal(2.0, 3.0, size=(5, 8))
    Y = L.layer_norm(X)
    np.testing.assert_allclose(Y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(Y.var(axis=-1), 1.0, atol=1e-5)
    X2 = X.copy()
    X2[3] *= 10.0  # changing one token...
    for fn in (L.layer_norm, L.rms_norm):
        A, B = fn(X), fn(X2)
        np.testing.assert_array_equal(np.delete(A, 3, axis=0), np.delete(B, 3, axis=0))  # ...leaves the others alone
    np.testing.assert_allclose(np.sqrt((L.rms_norm(X) ** 2).mean(axis=-1)), 1.0, atol=1e-5)


def test_norms_gamma_beta_and_batches():
    x = rng(2).normal(size=(2, 3, 6))
    gamma, beta = rng(3).normal(size=6), rng(4).normal(size=6)
    np.testing.assert_allclose(L.layer_norm(x, gamma, beta), L.layer_norm(x) * gamma + beta, atol=1e-12)
    np.testing.assert_allclose(L.rms_norm(x, gamma), L.rms_norm(x) * gamma, atol=1e-12)
    with pytest.raises(ValueError, match="gamma"):
        L.layer_norm(x, gamma=np.ones(5))
    with pytest.raises(ValueError, match="beta"):
        L.layer_norm(x, beta=np.ones((1, 6)))
    with pytest.raises(ValueError, match="eps"):
        L.rms_norm(x, eps=-1.0)


def test_mlp_is_position_wise_and_permutation_equivariant():
    r = rng(5)
    n, d = 6, 6  # n == d: the "MLP over the sequence axis" mistake would not even raise here
    X = r.normal(size=(n, d))
    W1, b1 = r.normal(size=(d, 4 * d)), r.normal(size=4 * d)
    W2, b2 = r.normal(size=(4 * d, d)), r.normal(size=d)
    Y = L.mlp(X, W1, b1, W2, b2)
    assert Y.shape == (n, d)
    for i in range(n):
        np.testing.assert_allclose(Y[i], L.mlp(X[i], W1, b1, W2, b2), atol=1e-10)
    perm = r.permutation(n)
    np.testing.assert_allclose(L.mlp(X[perm], W1, b1, W2, b2), Y[perm], atol=1e-10)
    wrong_axis = L.gelu((X.T @ W1) + b1) @ W2 + b2
    assert not np.allclose(wrong_axis, Y)
    # The activation sits between the projections, and "gelu" is the exact one.
    np.testing.assert_allclose(Y, L.gelu(X @ W1 + b1) @ W2 + b2, atol=1e-12)
    np.testing.assert_allclose(L.mlp(X, W1, None, W2, None, activation="relu"),
                               np.maximum(X @ W1, 0) @ W2, atol=1e-12)
    np.testing.assert_allclose(L.mlp(X, W1, b1, W2, b2, activation=np.tanh), np.tanh(X @ W1 + b1) @ W2 + b2,
                               atol=1e-12)


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="W1"):
        L.mlp(np.ones((2, 3)), np.ones((4, 8)), None, np.ones((8, 3)), None)
    with pytest.raises(ValueError, match="W2"):
        L.mlp(np.ones((2, 3)), np.ones((3, 8)), None, np.ones((7, 3)), None)
    with pytest.raises(ValueError, match="activation"):
        L.mlp(np.ones((2, 3)), np.ones((3, 8)), None, np.ones((8, 3)), None, activation="tanhh")
    with pytest.raises(ValueError, match="shape"):
        L.residual(np.ones(3), lambda x: np.ones(4))
    with pytest.raises(TypeError):
        L.residual(np.ones(3), "not a function")
    with pytest.raises(TypeError):
        L.layer_norm("hola")
    with pytest.raises(ValueError):
        L.mlp_param_count(0)
    with pytest.raises(ValueError, match="norm"):
        L.transformer_block(np.ones((2, 3)), {"attn_fn": np.zeros_like, "mlp_fn": np.zeros_like}, norm="middle")


def test_silu_and_swiglu():
    x = np.linspace(-50, 50, 101)
    np.testing.assert_allclose(L.silu(x), x / (1 + np.exp(-x)), rtol=1e-12, atol=1e-300)
    r = rng(6)
    X = r.normal(size=(4, 5))
    W, V, W2 = r.normal(size=(5, 12)), r.normal(size=(5, 12)), r.normal(size=(12, 5))
    out = L.swiglu(X, W, V, W2)
    assert out.shape == (4, 5)
    np.testing.assert_allclose(out, (L.silu(X @ W) * (X @ V)) @ W2, atol=1e-12)
    with pytest.raises(ValueError, match="same shape"):
        L.swiglu(X, W, V[:, :11], W2)


# ---- parity with torch -------------------------------------------------------------------------

def test_parity_with_torch_functional():
    r = rng(7)
    x = r.normal(0, 4, size=(3, 5, 16))
    gamma, beta = r.normal(size=16), r.normal(size=16)
    t = torch.from_numpy(x)
    for eps in (1e-5, 1e-6, 0.1):
        want = TF.layer_norm(t, (16,), torch.from_numpy(gamma), torch.from_numpy(beta), eps).numpy()
        np.testing.assert_allclose(L.layer_norm(x, gamma, beta, eps=eps), want, atol=1e-12)
        want = TF.rms_norm(t, (16,), torch.from_numpy(gamma), eps).numpy()
        np.testing.assert_allclose(L.rms_norm(x, gamma, eps=eps), want, atol=1e-12)
    np.testing.assert_allclose(L.gelu(x), TF.gelu(t).numpy(), atol=1e-12)
    np.testing.assert_allclose(L.gelu(x, approximate=True), TF.gelu(t, approximate="tanh").numpy(), atol=1e-12)
    np.testing.assert_allclose(L.silu(x), TF.silu(t).numpy(), atol=1e-12)
    np.testing.assert_allclose(L.relu(x), TF.relu(t).numpy(), atol=0)


def _np(p):
    return p.detach().double().numpy()


def test_parity_with_llmlab_model_norms_and_mlps():
    torch.manual_seed(0)
    d = 24
    x = torch.randn(2, 7, d, dtype=torch.float64) * 3
    ln = LayerNorm(d, eps=1e-5).double()
    rms = RMSNorm(d, eps=1e-6).double()
    with torch.no_grad():
        for p in (ln.weight, ln.bias, rms.weight):
            p.normal_()
    np.testing.assert_allclose(L.layer_norm(x, _np(ln.weight), _np(ln.bias)), _np(ln(x)), atol=1e-12)
    # llmlab.model's RMSNorm computes in float32 whatever the input dtype (as Llama does): float32 tolerance.
    np.testing.assert_allclose(L.rms_norm(x, _np(rms.weight), eps=1e-6), _np(rms(x)), atol=1e-6, rtol=1e-6)

    for kind, activation in (("gelu", "gelu_tanh"), ("gelu_exact", "gelu")):
        cfg = ModelConfig(d_model=d, n_heads=4, mlp=kind)
        m = MLP(cfg).double()
        with torch.no_grad():
            for p in m.parameters():
                p.normal_(0, 0.3)
        got = L.mlp(x, _np(m.up.weight).T, _np(m.up.bias), _np(m.down.weight).T, _np(m.down.bias), activation=activation)
        np.testing.assert_allclose(got, _np(m(x)), atol=1e-10)
        assert L.mlp_param_count(d) == sum(p.numel() for p in m.parameters())

    s = SwiGLU(ModelConfig.llama_style(d_model=d, n_heads=4)).double()
    with torch.no_grad():
        for p in s.parameters():
            p.normal_(0, 0.3)
    got = L.swiglu(x, _np(s.gate.weight).T, _np(s.up.weight).T, _np(s.down.weight).T)
    np.testing.assert_allclose(got, _np(s(x)), atol=1e-10)


def _block_params(block, norm_type):
    a, m = block.attn, block.mlp
    params = {
        "W_Q": _np(a.q_proj.weight).T, "W_K": _np(a.k_proj.weight).T, "W_V": _np(a.v_proj.weight).T,
        "W_O": _np(a.o_proj.weight).T, "n_heads": a.n_heads,
        "gamma1": _np(block.attn_norm.weight), "gamma2": _np(block.mlp_norm.weight),
        "eps": block.attn_norm.eps, "norm_type": norm_type,
    }
    if isinstance(m, SwiGLU):
        gate, up, down = _np(m.gate.weight).T, _np(m.up.weight).T, _np(m.down.weight).T
        params["mlp_fn"] = lambda h: L.swiglu(h, gate, up, down)
    else:
        params.update(W1=_np(m.up.weight).T, W2=_np(m.down.weight).T, activation="gelu")
    return params


@pytest.mark.parametrize("style", ["gpt2", "llama"])
def test_transformer_block_matches_llmlab_model_block(style):
    pytest.importorskip("llmlab.attention")
    torch.manual_seed(1)
    if style == "gpt2":  # llmlab.attention has no projection biases: compare a bias-free block
        cfg = ModelConfig(d_model=16, n_heads=2, norm="layernorm", mlp="gelu_exact", bias=False)
        norm_type = "layernorm"
    else:  # RoPE lives in the model, not in the block: the block itself is RMSNorm + attention + SwiGLU
        cfg = ModelConfig.llama_style(d_model=16, n_heads=4, n_kv_heads=4)
        norm_type = "rmsnorm"
    block = Block(cfg, 0).double().eval()
    with torch.no_grad():
        for p in block.parameters():
            p.normal_(0, 0.3)
    x = torch.randn(5, 16, dtype=torch.float64)
    with torch.no_grad():
        want, _ = block(x[None])
    got = L.transformer_block(x.numpy(), _block_params(block, norm_type), norm="pre")
    atol = 1e-10 if style == "gpt2" else 1e-5  # RMSNorm runs in float32 inside llmlab.model
    np.testing.assert_allclose(got, want[0].numpy(), atol=atol)


def test_transformer_block_wiring_pre_vs_post():
    x = rng(8).normal(size=(4, 6))
    ident = {"attn_fn": lambda h: h, "mlp_fn": np.zeros_like}
    # Pre-norm with f = identity: x + LN(x) (then + 0). Post-norm: LN(LN(x + x)).
    np.testing.assert_allclose(L.transformer_block(x, ident, norm="pre"), x + L.layer_norm(x), atol=1e-12)
    np.testing.assert_allclose(L.transformer_block(x, ident, norm="post"), L.layer_norm(L.layer_norm(2 * x)),
                               atol=1e-12)
    zero = {"attn_fn": np.zeros_like, "mlp_fn": np.zeros_like}
    np.testing.assert_array_equal(L.transformer_block(x, zero, norm="pre"), x)  # the residual path is clean


def test_transformer_block_is_causal():
    pytest.importorskip("llmlab.attention")
    r = rng(9)
    d, n = 8, 5
    params = {k: r.normal(0, 0.4, size=(d, d)) for k in ("W_Q", "W_K", "W_V", "W_O")}
    params.update(n_heads=2, W1=r.normal(0, 0.4, size=(d, 4 * d)), W2=r.normal(0, 0.4, size=(4 * d, d)))
    x = r.normal(size=(n, d))
    y = L.transformer_block(x, params)
    x2 = x.copy()
    x2[-1] += r.normal(0, 3.0, size=d)  # change the future (the last token)...
    y2 = L.transformer_block(x2, params)
    np.testing.assert_allclose(y2[:-1], y[:-1], atol=1e-12)  # ...the past does not move
    y3 = L.transformer_block(x2, params, causal=False)
    assert not np.allclose(y3[:-1], L.transformer_block(x, params, causal=False)[:-1])
