"""llmlab.sampling: chapter 04's worked numbers, edge cases, argument checks, seeded sampling, presets.

Parity with HF transformers is in tests/test_sampling_hf_parity.py.
"""

import math

import pytest
import torch

from llmlab.sampling import (
    PRESETS,
    Sampler,
    apply_repetition_penalty,
    apply_temperature,
    min_p_filter,
    sample_next_token,
    top_k_filter,
    top_p_filter,
)

# Chapter 04, E4.4: París 4.0, Madrid 3.0, Lyon 1.0, azul 0.0
LOGITS = torch.tensor([4.0, 3.0, 1.0, 0.0])


def probs(logits):
    return torch.softmax(logits, dim=-1)


def kept(logits):
    return torch.isfinite(logits).nonzero().flatten().tolist()


# ---- chapter 04 worked numbers -----------------------------------------------------------------

@pytest.mark.parametrize("temperature, expected", [
    (1.0, [0.696387, 0.256187, 0.034671, 0.012755]),
    (0.5, [0.878619, 0.118908, 0.002178, 0.000295]),
    (2.0, [0.508907, 0.308668, 0.113552, 0.068873]),
])
def test_temperature_table_e4_4(temperature, expected):
    # The "multiply by T" mutant turns the T = 0.5 column into the T = 2 one.
    got = probs(apply_temperature(LOGITS, temperature))
    torch.testing.assert_close(got, torch.tensor(expected), atol=1e-6, rtol=0)


def test_top_k_e4_5():
    torch.testing.assert_close(probs(top_k_filter(LOGITS, 2)), torch.tensor([0.731059, 0.268941, 0, 0]),
                               atol=1e-6, rtol=0)
    torch.testing.assert_close(probs(top_k_filter(LOGITS, 3)), torch.tensor([0.705385, 0.259496, 0.035119, 0]),
                               atol=1e-6, rtol=0)


def test_top_p_e4_6_keeps_the_crossing_token():
    # Cumulative 0.696, 0.952: p = 0.9 keeps París and Madrid. The exclusive-cumsum mutant keeps only París.
    torch.testing.assert_close(probs(top_p_filter(LOGITS, 0.9)), torch.tensor([0.731059, 0.268941, 0, 0]),
                               atol=1e-6, rtol=0)


@pytest.mark.parametrize("p, n_kept", [(0.5, 1), (0.69, 1), (0.7, 2), (0.9, 2), (0.95, 2), (0.96, 3),
                                       (0.99, 4), (1.0, 4)])
def test_top_p_keep_counts_e4_6(p, n_kept):
    assert len(kept(top_p_filter(LOGITS, p))) == n_kept


def test_top_p_sorts_before_accumulating():
    # M4.5: a permuted input [0.035, 0.696, 0.013, 0.256] must keep indices {1, 3}.
    logits = torch.log(torch.tensor([0.035, 0.696, 0.013, 0.256]))
    assert kept(top_p_filter(logits, 0.9)) == [1, 3]
    # Chapter 08 boundary test: [0.5, 0.3, 0.2], p = 0.6 -> {0, 1}.
    assert kept(top_p_filter(torch.log(torch.tensor([0.5, 0.3, 0.2])), 0.6)) == [0, 1]


def test_min_p_e4_6():
    torch.testing.assert_close(probs(min_p_filter(LOGITS, 0.1)), torch.tensor([0.7311, 0.2689, 0, 0]),
                               atol=1e-4, rtol=0)
    torch.testing.assert_close(probs(min_p_filter(LOGITS, 0.04)), torch.tensor([0.7054, 0.2595, 0.0351, 0]),
                               atol=1e-4, rtol=0)
    # Chapter 08: min_p = 0.5 on [0.5, 0.3, 0.2] keeps {0, 1} (threshold 0.25).
    assert kept(min_p_filter(torch.log(torch.tensor([0.5, 0.3, 0.2])), 0.5)) == [0, 1]


def test_order_of_the_knobs_e4_6():
    heat_then_cut = Sampler(do_sample=True, temperature=2.0, top_p=0.9).probs(LOGITS.unsqueeze(0))[0]
    torch.testing.assert_close(heat_then_cut, torch.tensor([0.5465, 0.3315, 0.1220, 0]), atol=1e-4, rtol=0)
    cut_then_heat = probs(apply_temperature(top_p_filter(LOGITS, 0.9), 2.0))
    torch.testing.assert_close(cut_then_heat, torch.tensor([0.6225, 0.3775, 0, 0]), atol=1e-4, rtol=0)
    cold = Sampler(do_sample=True, temperature=0.5, top_p=0.9).probs(LOGITS.unsqueeze(0))[0]
    torch.testing.assert_close(cold, torch.tensor([0.8808, 0.1192, 0, 0]), atol=1e-4, rtol=0)


# ---- edge cases (HF semantics) --------------------------------------------------------------------

def test_top_k_keeps_ties_at_the_kth_value():
    assert kept(top_k_filter(torch.tensor([1.0, 2.0, 2.0, 2.0, 0.0]), 2)) == [1, 2, 3]


def test_top_k_min_tokens_and_clipping():
    assert len(kept(top_k_filter(LOGITS, 1, min_tokens_to_keep=3))) == 3
    assert len(kept(top_k_filter(LOGITS, 100))) == 4


def test_top_p_edges():
    assert kept(top_p_filter(LOGITS, 0.0)) == [0]  # p = 0: only the most likely token
    assert kept(top_p_filter(LOGITS, 0.0, min_tokens_to_keep=2)) == [0, 1]
    assert kept(top_p_filter(LOGITS, 0.5, min_tokens_to_keep=3)) == [0, 1, 2]
    # p = 1 keeps every token with non-zero probability; exp(-1e4) underflows to 0 and is removed.
    assert kept(top_p_filter(torch.tensor([1e4, -1e4, 0.0, 1e4 - 5]), 1.0)) == [0, 3]


def test_min_p_edges():
    assert kept(min_p_filter(LOGITS, 0.0)) == [0, 1, 2, 3]
    assert kept(min_p_filter(torch.tensor([2.0, 2.0, 1.0]), 1.0)) == [0, 1]  # ties with the max survive
    assert kept(min_p_filter(LOGITS, 1.0, min_tokens_to_keep=10)) == [0, 1, 2, 3]


def test_minus_inf_and_huge_values():
    logits = torch.tensor([[float("-inf"), 1e4, -1e4, 3.0], [0.0, float("-inf"), float("-inf"), 1.0]])
    for out in (top_k_filter(logits, 3), top_p_filter(logits, 0.9), min_p_filter(logits, 0.1),
                apply_temperature(logits, 0.3)):
        assert not torch.isnan(out).any()
        assert torch.isinf(out[:, 0:1].flatten()[0])  # -inf stays -inf
        assert torch.isfinite(out).any(dim=-1).all()  # at least one token survives per row
    assert kept(top_k_filter(logits[1], 3)) == [0, 3]  # k-th value is -inf: nothing more removed


def test_functions_return_new_tensors_and_keep_dtype_and_shape():
    logits = torch.randn(2, 3, 50, dtype=torch.float64)
    before = logits.clone()
    outs = [apply_temperature(logits, 0.7), top_k_filter(logits, 5), top_p_filter(logits, 0.8),
            min_p_filter(logits, 0.1), apply_repetition_penalty(logits, torch.randint(0, 50, (2, 3, 7)), 1.3)]
    for out in outs:
        assert out.shape == logits.shape and out.dtype == torch.float64
        assert out.data_ptr() != logits.data_ptr()
    assert torch.equal(logits, before)
    # leading batch dimensions are independent rows
    torch.testing.assert_close(top_p_filter(logits, 0.8)[1, 2], top_p_filter(logits[1, 2], 0.8), atol=0, rtol=0)


def test_repetition_penalty():
    logits = torch.tensor([[2.0, -2.0, 0.0, float("-inf"), 1.0]])
    out = apply_repetition_penalty(logits, torch.tensor([[0, 0, 1, 2, 3, 7]]), 2.0)
    # positive divided, negative multiplied (both less likely), once per token however often it appears;
    # id 7 >= vocab is ignored, token 4 is not in the context.
    assert out.tolist() == [[1.0, -4.0, 0.0, float("-inf"), 1.0]]
    rewarded = apply_repetition_penalty(logits, torch.tensor([[0, 1]]), 0.5)
    assert rewarded[0, :2].tolist() == [4.0, -1.0]
    with pytest.raises(IndexError):
        apply_repetition_penalty(logits, torch.tensor([[-1]]), 1.2)
    with pytest.raises(ValueError, match="leading dimensions"):
        apply_repetition_penalty(logits, torch.tensor([[0], [1]]), 1.2)
    with pytest.raises(TypeError):
        apply_repetition_penalty(logits, torch.tensor([[0.0]]), 1.2)


def test_repetition_penalty_includes_the_prompt_in_sampler():
    sampler = Sampler(repetition_penalty=10.0)  # greedy
    logits = torch.tensor([[5.0, 4.0, 0.0]])
    assert sampler(logits, torch.tensor([[2, 2]])).item() == 0
    assert sampler(logits, torch.tensor([[0, 2]])).item() == 1  # token 0 is in the prompt


# ---- argument checks ------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: apply_temperature(LOGITS, 0.0),
    lambda: apply_temperature(LOGITS, -1.0),
    lambda: apply_temperature(LOGITS, float("nan")),
    lambda: apply_temperature(LOGITS, float("inf")),
    lambda: apply_temperature(LOGITS, "1"),
    lambda: apply_temperature(LOGITS, True),
    lambda: top_k_filter(LOGITS, 0),
    lambda: top_k_filter(LOGITS, -3),
    lambda: top_k_filter(LOGITS, 2.5),
    lambda: top_k_filter(LOGITS, 2, min_tokens_to_keep=0),
    lambda: top_p_filter(LOGITS, -0.1),
    lambda: top_p_filter(LOGITS, 1.1),
    lambda: top_p_filter(LOGITS, float("nan")),
    lambda: min_p_filter(LOGITS, -0.01),
    lambda: min_p_filter(LOGITS, 1.5),
    lambda: apply_repetition_penalty(LOGITS, torch.tensor([0]), 0.0),
    lambda: apply_repetition_penalty(LOGITS, torch.tensor([0]), -1.2),
    lambda: Sampler(do_sample=True, temperature=0.0),
    lambda: Sampler(top_k=0),
    lambda: Sampler(top_p=2.0),
    lambda: Sampler(min_p=-1.0),
    lambda: Sampler(repetition_penalty=0.0),
    lambda: Sampler(min_tokens_to_keep=0),
    lambda: Sampler.from_preset("no-existe"),
])
def test_invalid_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_temperature_zero_message_points_to_greedy():
    with pytest.raises(ValueError, match="do_sample=False"):
        apply_temperature(LOGITS, 0)


def test_bad_logits_raise_type_error():
    for bad in ([4.0, 3.0], torch.tensor([4, 3])):
        with pytest.raises(TypeError):
            top_k_filter(bad, 1)
    with pytest.raises(TypeError):
        Sampler(generator=123)
    with pytest.raises(TypeError):
        Sampler(constraint="json")


def test_integer_temperature_is_accepted():
    torch.testing.assert_close(apply_temperature(LOGITS, 2), LOGITS / 2.0, atol=0, rtol=0)


# ---- sampling ------------------------------------------------------------------------------------

def test_greedy_is_argmax_and_warns_about_ignored_knobs():
    logits = torch.randn(5, 30)
    assert torch.equal(Sampler()(logits, torch.zeros(5, 1, dtype=torch.long)), logits.argmax(-1))
    with pytest.warns(UserWarning, match="ignores temperature"):
        Sampler(temperature=0.7)


def test_empirical_frequencies_match_the_distribution():
    # M4.2: 20 000 seeded draws from [4, 3, 1, 0] -> about [0.696, 0.256, 0.035, 0.013].
    g = torch.Generator().manual_seed(0)
    draws = Sampler(do_sample=True, generator=g)(LOGITS.expand(20_000, 4), None)
    freq = torch.bincount(draws, minlength=4).double() / 20_000
    torch.testing.assert_close(freq, torch.tensor([0.696387, 0.256187, 0.034671, 0.012755], dtype=torch.float64),
                               atol=0.01, rtol=0)


def test_filtered_tokens_are_never_sampled():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(2000, 40, generator=g)
    draws = Sampler(do_sample=True, top_k=3, generator=g)(logits, None)
    top3 = logits.topk(3, dim=-1).indices
    assert (top3 == draws[:, None]).any(dim=-1).all()


def test_seeded_reproducibility():
    logits = torch.randn(8, 100)
    ids = torch.zeros(8, 3, dtype=torch.long)

    def draw(seed):
        s = Sampler(do_sample=True, temperature=1.3, top_p=0.95, generator=torch.Generator().manual_seed(seed))
        return torch.stack([s(logits, ids) for _ in range(5)])

    assert torch.equal(draw(7), draw(7))
    assert not torch.equal(draw(7), draw(8))
    torch.manual_seed(3)  # generator=None uses the global RNG, like HF
    a = Sampler(do_sample=True)(logits, ids)
    torch.manual_seed(3)
    assert torch.equal(a, Sampler(do_sample=True)(logits, ids))


def test_process_casts_to_float32_without_touching_the_input():
    logits = torch.randn(2, 20, dtype=torch.bfloat16)
    before = logits.clone()
    out = Sampler(do_sample=True, temperature=0.5, top_k=4).process(logits, None)
    assert out.dtype == torch.float32 and torch.equal(logits, before)
    assert (torch.isfinite(out).sum(-1) >= 4).all()


def test_call_protocol_shapes_and_errors():
    s = Sampler(do_sample=True, generator=torch.Generator().manual_seed(0))
    assert s(torch.randn(3, 11), torch.zeros(3, 2, dtype=torch.long)).shape == (3,)
    assert s(torch.randn(3, 11), torch.zeros(3, 2, dtype=torch.long)).dtype == torch.long
    assert sample_next_token(torch.randn(11)).shape == ()
    assert sample_next_token(torch.randn(4, 11), do_sample=True, top_k=2).shape == (4,)
    with pytest.raises(RuntimeError, match="all logits are -inf"):
        s(torch.full((1, 5), float("-inf")), None)
    with pytest.raises(ValueError, match="input_ids"):
        Sampler(repetition_penalty=1.2)(torch.randn(1, 5), None)


def test_constraint_is_applied_before_the_warpers():
    calls = []

    def constraint(input_ids, scores):
        calls.append(scores.clone())
        return scores.masked_fill(torch.arange(scores.shape[-1]) != 2, float("-inf"))

    s = Sampler(do_sample=True, temperature=0.5, top_k=1, constraint=constraint)
    # top-k alone would keep token 0; after masking only token 2 is left.
    assert s(torch.tensor([[9.0, 8.0, 1.0, 0.0]]), torch.zeros(1, 1, dtype=torch.long)).item() == 2
    assert calls[0].tolist() == [[9.0, 8.0, 1.0, 0.0]]  # it saw the logits before the temperature


# ---- presets -------------------------------------------------------------------------------------

def test_presets_follow_the_guide_bands():
    # Guide TG.7 and G-M5: precise 0.1-0.3 with top-k, creative 0.7-1.2 with top-p, code 0.1-0.5.
    bands = {"precise": (0.1, 0.3), "creative": (0.7, 1.2), "code": (0.1, 0.5)}
    for name, (lo, hi) in bands.items():
        sampler = Sampler.from_preset(name)
        assert sampler.do_sample and lo <= sampler.temperature <= hi
    assert Sampler.from_preset("precise").top_k is not None
    assert Sampler.from_preset("creative").top_p is not None and Sampler.from_preset("creative").top_p >= 0.9
    assert not Sampler.from_preset("deterministic").do_sample
    for name, preset in PRESETS.items():
        assert isinstance(preset["description"], str) and len(preset["description"]) > 20
        assert not math.isnan(Sampler.from_preset(name).temperature)


def test_from_preset_overrides():
    g = torch.Generator()
    s = Sampler.from_preset("creative", temperature=1.1, generator=g)
    assert s.temperature == 1.1 and s.top_p == PRESETS["creative"]["top_p"] and s.generator is g


def test_temperature_last_is_llama_cpp_order():
    """HF heats then cuts; llama.cpp cuts then heats (chapter 04 example: T = 2, top-p = 0.9)."""
    z = torch.tensor([4.0, 3.0, 1.0, 0.0])
    heat_then_cut = Sampler(do_sample=True, temperature=2.0, top_p=0.9).probs(z)
    cut_then_heat = Sampler(do_sample=True, temperature=2.0, top_p=0.9, temperature_last=True).probs(z)
    assert torch.allclose(heat_then_cut, torch.tensor([0.5465, 0.3315, 0.1220, 0.0]), atol=1e-4)
    assert torch.allclose(cut_then_heat, torch.tensor([0.6225, 0.3775, 0.0, 0.0]), atol=1e-4)
    manual = torch.softmax(apply_temperature(top_p_filter(z, 0.9), 2.0), dim=-1)
    assert torch.equal(cut_then_heat, manual)
    # Without a temperature the two orders are the same policy.
    assert torch.equal(Sampler(do_sample=True, top_k=3, min_p=0.05).probs(z),
                       Sampler(do_sample=True, top_k=3, min_p=0.05, temperature_last=True).probs(z))
    with pytest.raises(TypeError):
        Sampler(temperature_last="yes")
