"""llmlab.sampling against HF transformers: same processed logits bit for bit, same sampled tokens.

1. Each function against its HF logits processor on random and adversarial logits (ties, -inf, +-1e4,
   p = 0 and 1, min_tokens_to_keep, extra batch dimensions).
2. ``Sampler.process`` against the ``LogitsProcessorList`` that HF ``generate`` builds for the equivalent
   ``GenerationConfig`` (``_get_logits_processor``, a private method: if a future transformers renames
   it, this test needs updating, not the library).
3. Sampling end to end: HF ``generate(do_sample=True)`` and a loop with ``Sampler`` draw the same tokens
   from the same seed (both call ``torch.multinomial(softmax(scores), 1)`` on the global RNG), with the
   HF model itself and with ``llmlab.model`` converted from it, with and without a constraint.

Comparisons are exact (``atol=0, rtol=0``): the library performs the same float operations as HF.
"""

import itertools

import pytest
import torch

transformers = pytest.importorskip("transformers")
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM  # noqa: E402
from transformers.generation.logits_process import (  # noqa: E402
    LogitsProcessorList,
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from llmlab.sampling import (  # noqa: E402
    Sampler,
    apply_repetition_penalty,
    apply_temperature,
    min_p_filter,
    top_k_filter,
    top_p_filter,
)

NEG_INF = float("-inf")


def exact(a, b):
    torch.testing.assert_close(a, b, atol=0, rtol=0, equal_nan=True)


def logit_cases():
    """Random and adversarial [batch, vocab] logits."""
    g = torch.Generator().manual_seed(0)
    cases = [torch.randn(4, 50, generator=g) * s for s in (0.1, 1.0, 5.0)]
    cases.append(torch.randn(3, 1000, generator=g) * 3)
    cases.append(torch.randint(-2, 3, (6, 12), generator=g).float())  # many ties
    cases.append(torch.zeros(2, 9))  # everything tied
    huge = torch.randn(4, 20, generator=g)
    huge[:, :3] = torch.tensor([1e4, -1e4, 1e4 - 3])
    cases.append(huge)
    with_inf = torch.randn(5, 30, generator=g) * 2
    with_inf[with_inf < -0.5] = NEG_INF  # about a third removed already
    with_inf[0, 1:] = NEG_INF  # a row with a single finite logit
    cases.append(with_inf)
    cases.append(torch.tensor([[4.0, 3.0, 1.0, 0.0]]))  # chapter 04
    cases.append(torch.randn(3, 1, generator=g))  # vocabulary of one
    return cases


CASES = logit_cases()
NO_IDS = torch.zeros(1, 0, dtype=torch.long)


@pytest.mark.parametrize("temperature", [0.05, 0.5, 1.0, 1.7, 10.0])
def test_temperature_parity(temperature):
    for logits in CASES:
        exact(apply_temperature(logits, temperature), TemperatureLogitsWarper(temperature)(NO_IDS, logits))


@pytest.mark.parametrize("k, keep", list(itertools.product([1, 2, 3, 7, 50, 2000], [1, 2, 5])))
def test_top_k_parity(k, keep):
    for logits in CASES:
        exact(top_k_filter(logits, k, keep), TopKLogitsWarper(k, min_tokens_to_keep=keep)(NO_IDS, logits))


@pytest.mark.parametrize("p, keep", list(itertools.product([0.0, 1e-6, 0.3, 0.5, 0.9, 0.95, 0.999, 1.0], [1, 2, 5])))
def test_top_p_parity(p, keep):
    for logits in CASES:
        exact(top_p_filter(logits, p, keep), TopPLogitsWarper(p, min_tokens_to_keep=keep)(NO_IDS, logits))


@pytest.mark.parametrize("min_p, keep", list(itertools.product([0.0, 0.01, 0.05, 0.1, 0.5, 1.0], [1, 2, 5])))
def test_min_p_parity(min_p, keep):
    for logits in CASES:
        exact(min_p_filter(logits, min_p, keep), MinPLogitsWarper(min_p, min_tokens_to_keep=keep)(NO_IDS, logits))


@pytest.mark.parametrize("penalty", [0.5, 1.0, 1.2, 3.0])
def test_repetition_penalty_parity(penalty):
    g = torch.Generator().manual_seed(1)
    for logits in CASES:
        batch, vocab = logits.shape
        ids = torch.randint(0, vocab + 3, (batch, 13), generator=g)  # repeats, and ids beyond the vocab
        exact(apply_repetition_penalty(logits, ids, penalty),
              RepetitionPenaltyLogitsProcessor(penalty)(ids, logits))


def test_batch_dimensions_parity():
    """[..., vocab] inputs equal HF applied to the flattened [rows, vocab]."""
    g = torch.Generator().manual_seed(2)
    logits = torch.randn(2, 3, 40, generator=g) * 3
    flat = logits.reshape(6, 40)
    exact(top_p_filter(logits, 0.8, 2), TopPLogitsWarper(0.8, min_tokens_to_keep=2)(NO_IDS, flat).reshape(2, 3, 40))
    exact(top_k_filter(logits, 5), TopKLogitsWarper(5)(NO_IDS, flat).reshape(2, 3, 40))
    exact(min_p_filter(logits, 0.1), MinPLogitsWarper(0.1)(NO_IDS, flat).reshape(2, 3, 40))
    ids = torch.randint(0, 40, (2, 3, 9), generator=g)
    exact(apply_repetition_penalty(logits, ids, 1.4),
          RepetitionPenaltyLogitsProcessor(1.4)(ids.reshape(6, 9), flat).reshape(2, 3, 40))


# ---- the whole chain, as HF generate builds it ---------------------------------------------------

def tiny_hf_model(vocab_size=97, seed=0):
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         bos_token_id=None, eos_token_id=None, pad_token_id=None)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(40.0)  # spread the logits so that the filters have work to do
    return model


@pytest.fixture(scope="module")
def hf_model():
    return tiny_hf_model()


def generation_config(kwargs):
    """Sampler kwargs -> the GenerationConfig that means the same. HF's unset top_k defaults to 50, so
    "no top-k" must be spelled top_k=0 there."""
    return GenerationConfig(
        do_sample=kwargs.get("do_sample", False),
        temperature=kwargs.get("temperature", 1.0),
        top_k=kwargs.get("top_k") or 0,
        top_p=kwargs.get("top_p", 1.0) if kwargs.get("top_p") is not None else 1.0,
        min_p=kwargs.get("min_p"),
        repetition_penalty=kwargs.get("repetition_penalty") or 1.0,
    )


CHAINS = [
    dict(do_sample=True),
    dict(do_sample=True, temperature=0.7),
    dict(do_sample=True, temperature=2.0, top_p=0.9),
    dict(do_sample=True, top_k=5, top_p=0.8),
    dict(do_sample=True, temperature=0.5, top_k=10, top_p=0.95, min_p=0.05, repetition_penalty=1.3),
    dict(do_sample=True, temperature=1.3, min_p=0.1, repetition_penalty=0.8),
    dict(do_sample=True, top_p=0.0),
    dict(do_sample=True, top_p=1.0, top_k=1),
    dict(do_sample=False, repetition_penalty=1.5),
]


@pytest.mark.parametrize("kwargs", CHAINS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_sampler_chain_equals_hf_logits_processor_list(hf_model, kwargs):
    g = torch.Generator().manual_seed(3)
    sampler = Sampler(**kwargs)
    for logits in CASES:
        batch, vocab = logits.shape
        ids = torch.randint(0, vocab, (batch, 6), generator=g)
        processors = hf_model._get_logits_processor(generation_config(kwargs), input_ids_seq_length=6,
                                                    encoder_input_ids=ids, logits_processor=LogitsProcessorList(),
                                                    device="cpu", model_kwargs={})
        exact(sampler.process(logits, ids), processors(ids, logits.clone()))


def test_hf_chain_order_is_what_sampler_documents(hf_model):
    kwargs = dict(do_sample=True, temperature=0.5, top_k=10, top_p=0.95, min_p=0.05, repetition_penalty=1.3)
    processors = hf_model._get_logits_processor(generation_config(kwargs), input_ids_seq_length=3,
                                                encoder_input_ids=None, logits_processor=LogitsProcessorList(),
                                                device="cpu", model_kwargs={})
    assert [type(p).__name__ for p in processors] == [
        "RepetitionPenaltyLogitsProcessor", "TemperatureLogitsWarper", "TopKLogitsWarper", "TopPLogitsWarper",
        "MinPLogitsWarper"]


# ---- sampling end to end: same seed, same tokens --------------------------------------------------

GENERATE_KWARGS = [
    dict(do_sample=True, temperature=0.8, top_k=20, top_p=0.9, repetition_penalty=1.3),
    dict(do_sample=True, temperature=1.5, min_p=0.05),
    dict(do_sample=True),
]


def hf_kwargs(kwargs):
    out = dict(kwargs)
    out.setdefault("top_k", 0)  # HF would otherwise add top_k=50
    return out


def loop_with_sampler(model_fn, ids, n, sampler):
    with torch.no_grad():
        for _ in range(n):
            ids = torch.cat([ids, sampler(model_fn(ids), ids)[:, None]], dim=1)
    return ids


@pytest.mark.parametrize("kwargs", GENERATE_KWARGS)
def test_seeded_sampling_equals_hf_generate(hf_model, kwargs):
    prompt = torch.randint(0, 97, (3, 5), generator=torch.Generator().manual_seed(4))
    for seed in range(3):
        torch.manual_seed(seed)
        expected = hf_model.generate(prompt, max_new_tokens=15, pad_token_id=0, **hf_kwargs(kwargs))
        torch.manual_seed(seed)
        got = loop_with_sampler(lambda x: hf_model(x).logits[:, -1], prompt, 15, Sampler(**kwargs))
        assert torch.equal(got, expected)


def test_hf_default_top_k_50_differs_from_sampler_default(hf_model):
    """Documented difference: HF generate without top_k filters to 50 tokens; Sampler(top_k=None) does not."""
    assert GenerationConfig._get_default_generation_params()["top_k"] == 50
    ids = torch.zeros(1, 3, dtype=torch.long)
    flat = torch.arange(97.0).unsqueeze(0)
    processors = hf_model._get_logits_processor(GenerationConfig(do_sample=True, top_k=50), 3, None, None,
                                                LogitsProcessorList(), device="cpu", model_kwargs={})
    assert torch.isfinite(processors(ids, flat)).sum() == 50
    assert torch.isfinite(Sampler(do_sample=True).process(flat, ids)).sum() == 97


@pytest.mark.slow
def test_llmlab_model_generate_equals_hf_generate(hf_model):
    model_mod = pytest.importorskip("llmlab.model")
    model = model_mod.from_hf(hf_model).eval()
    prompt = torch.randint(0, 97, (2, 4), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():  # the converted model computes the same logits, to float32 rounding
        torch.testing.assert_close(model(prompt), hf_model(prompt).logits, atol=1e-4, rtol=1e-4)
    for kwargs in GENERATE_KWARGS:
        for seed in range(2):
            torch.manual_seed(seed)
            expected = hf_model.generate(prompt, max_new_tokens=12, pad_token_id=0, **hf_kwargs(kwargs))
            torch.manual_seed(seed)
            got = model_mod.generate(model, prompt, 12, **kwargs)
            assert torch.equal(got, expected), kwargs


@pytest.mark.slow
def test_constraint_as_hf_logits_processor_gives_the_same_tokens(hf_model):
    """The same constraint object plugs into HF generate and into Sampler; same seed, same JSON."""
    from llmlab.constrained import JsonObjectConstraint

    # 95 printable ASCII characters, one accented letter, EOS.
    token_bytes = [bytes([c]) for c in range(0x20, 0x7F)] + ["á".encode()] + [b"<eos>"]
    eos = len(token_bytes) - 1
    assert len(token_bytes) == 97
    schema = {"riesgo": ["bajo", "medio", "alto"], "nota": {"type": "string", "minLength": 1, "maxLength": 8},
              "dias": {"type": "integer", "minimum": 0, "maximum": 30}}
    prompt = torch.randint(0, 95, (2, 4), generator=torch.Generator().manual_seed(6))
    kwargs = dict(do_sample=True, temperature=1.2, top_p=0.95, top_k=0)
    for seed in range(2):
        constraint = JsonObjectConstraint(schema, token_bytes, eos, prompt_length=4)
        torch.manual_seed(seed)
        expected = hf_model.generate(prompt, max_new_tokens=constraint.max_new_tokens, eos_token_id=eos,
                                     pad_token_id=eos, logits_processor=LogitsProcessorList([constraint]), **kwargs)
        torch.manual_seed(seed)
        sampler = Sampler(do_sample=True, temperature=1.2, top_p=0.95, constraint=constraint)
        got = prompt
        with torch.no_grad():
            while got.shape[1] < 4 + constraint.max_new_tokens and not (got[:, 4:] == eos).any(dim=1).all():
                got = torch.cat([got, sampler(hf_model(got).logits[:, -1], got)[:, None]], dim=1)
        finished = (got[:, 4:] == eos).any(dim=1)
        got = torch.where(torch.cumsum(got == eos, dim=1) > (got == eos).int(), eos, got)  # pad after EOS
        assert finished.all() and torch.equal(got, expected)
        for row in expected[:, 4:].tolist():
            obj = constraint.parse(constraint.decode(row))
            assert obj["riesgo"] in ("bajo", "medio", "alto") and 0 <= obj["dias"] <= 30
