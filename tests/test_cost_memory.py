"""Weight memory per format against published file sizes, and the fits-check breakdown."""

import pytest

from llmlab.cost import (
    WEIGHT_FORMATS,
    FitReport,
    Hardware,
    fit_check,
    get_hardware,
    get_model,
    get_weight_format,
    max_batch,
    weight_bytes,
    weight_memory_table,
)

GiB = 2**30


@pytest.mark.parametrize(
    "model, fmt, gib, bpw",
    [
        # llama.cpp tools/quantize/README.md, Llama-3.1-8B (serving-facts §1b)
        ("llama-3.1-8b", "f16", 14.96, 16.0005),
        ("llama-3.1-8b", "q8_0", 7.95, 8.5008),
        ("llama-3.1-8b", "q4_k_m", 4.58, 4.8944),
        # llama-bench output, LLaMA-2-7B (discussion #4167)
        ("llama-2-7b", "f16", 12.55, None),
        ("llama-2-7b", "q8_0", 6.67, None),
        ("llama-2-7b", "q4_0", 3.56, None),
    ],
)
def test_weight_bytes_match_llama_cpp_file_sizes(model, fmt, gib, bpw):
    spec = get_model(model)
    b = weight_bytes(spec, fmt)
    assert b / GiB == pytest.approx(gib, abs=0.005)  # the published sizes have 2 decimals
    if bpw is not None:
        assert 8 * b / spec.param_count() == pytest.approx(bpw, abs=0.0006)


def test_q4_0_keeps_the_head_at_q6_k():
    spec = get_model("llama-2-7b")
    plain = (spec.param_count() - spec.breakdown()["norms"]) * 4.5 / 8
    head_extra = 32000 * 4096 * (6.5625 - 4.5) / 8
    norms = spec.breakdown()["norms"] * 4
    assert weight_bytes(spec, "q4_0") == pytest.approx(plain + head_extra + norms, rel=1e-12)


def test_gptq_overhead_per_group_is_explicit():
    fmt = get_weight_format("gptq-4bit-g128")
    assert fmt.matrix_bits == 4 + (16 + 4) / 128 == 4.15625  # fp16 scale + 4-bit zero per 128 weights
    assert fmt.embedding_bits == fmt.head_bits == 16
    spec = get_model("llama-2-7b")
    blocks = spec.tensor_groups()["matrices"]
    expected = blocks * 4.15625 / 8 + 2 * 32000 * 4096 * 2 + spec.tensor_groups()["vectors"] * 2
    assert weight_bytes(spec, "gptq") == pytest.approx(expected, rel=1e-12)


def test_idealised_formats_match_chapter_01():
    spec = get_model("llama-2-7b")
    n = spec.param_count()
    assert weight_bytes(spec, "fp16") == 2 * n
    assert weight_bytes(spec, "int8") == n
    assert weight_bytes(spec, "int4") == n / 2
    assert weight_bytes(spec, "fp32") == 4 * n
    table = weight_memory_table(spec)
    assert table["fp16"]["GB"] == pytest.approx(2 * n / 1e9, rel=1e-12)
    assert table["q4_0"]["bits_per_weight"] == pytest.approx(4.54, abs=0.01)


def test_weight_format_lookup():
    assert get_weight_format("Float16").name == "fp16"
    assert set(WEIGHT_FORMATS) >= {"fp32", "fp16", "bf16", "int8", "q8_0", "q4_0", "gptq-4bit-g128"}
    with pytest.raises(ValueError, match="q4_0"):
        get_weight_format("q3_z")
    with pytest.raises(TypeError):
        weight_bytes("llama-2-7b", "fp16")


def test_fit_check_breakdown():
    spec = get_model("llama-2-7b")
    report = fit_check(spec, get_hardware("rtx-4090"), "fp16", context=4096)
    assert isinstance(report, FitReport)
    assert report.weights_gb == pytest.approx(2 * spec.param_count() / 1e9, rel=1e-12)
    assert report.kv_gb == pytest.approx(2.147483648, rel=1e-12)  # 0.5 MiB x 4096 tokens
    assert report.overhead_gb == pytest.approx(0.1 * (report.weights_gb + report.kv_gb), rel=1e-12)
    assert report.usable_gb == pytest.approx(21.6, rel=1e-12)
    assert report.fits and bool(report)  # 17.2 GB in 21.6
    assert not fit_check(spec, get_hardware("rtx-4090"), "fp16", context=4096, batch=4)
    text = str(report)
    assert "weights" in text and "KV cache" in text and "usable" in text


def test_fit_check_book_rule_on_an_8gb_card():
    card = Hardware("8gb", memory_gb=8, bandwidth_gb_s=300, fp16_tflops=20)
    spec = get_model("llama-2-7b")
    book = dict(overhead=0.25, usable_fraction=1.0)
    assert not fit_check(spec, card, "fp16", 4096, **book)
    assert fit_check(spec, card, "int4", 4096, **book).fits
    # quantising the weights does not shrink an fp16 KV cache, 8-bit KV halves it
    kv16 = fit_check(spec, card, "int4", 4096).kv_gb
    assert fit_check(spec, card, "int4", 4096, kv_bytes_per_value=1).kv_gb == kv16 / 2


def test_gqa_decides_how_many_conversations_fit():
    a100 = get_hardware("a100-80gb-sxm")
    mha = max_batch(get_model("llama-2-7b"), a100, context=4096)
    gqa = max_batch(get_model("mistral-7b-v0.1"), a100, context=4096, sliding="full")
    assert gqa > 3.5 * mha  # 8 KV heads instead of 32
    assert max_batch(get_model("llama-2-70b"), get_hardware("rtx-4090"), context=4096) == 0  # weights alone too big
    r = fit_check(get_model("llama-2-7b"), a100, "fp16", 4096, batch=mha)
    r_next = fit_check(get_model("llama-2-7b"), a100, "fp16", 4096, batch=mha + 1)
    assert r.fits and not r_next.fits


def test_fit_check_validation():
    spec, hw = get_model("gpt2"), get_hardware("t4")
    with pytest.raises(TypeError):
        fit_check(spec, "t4")
    with pytest.raises(ValueError):
        fit_check(spec, hw, overhead=-0.1)
    with pytest.raises(ValueError):
        fit_check(spec, hw, usable_fraction=0)
    with pytest.raises(ValueError):
        fit_check(spec, hw, kv_bytes_per_value=0)
