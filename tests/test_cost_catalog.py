"""The shipped catalogs: enough real models and devices, every number with a source, sane specs."""

import pytest

from llmlab.cost import (
    SUPPORTED_MODEL_TYPES,
    Hardware,
    ModelSpec,
    get_hardware,
    get_model,
    hardware_entry,
    load_hardware_catalog,
    load_model_catalog,
    model_entry,
)

HW_NUMBERS = ("memory_gb", "bandwidth_gb_s", "fp16_tflops", "fp16_acc16_tflops", "int8_tops", "clock_ghz",
              "usable_memory_fraction")


def test_model_catalog_size_and_types():
    models = load_model_catalog()
    assert len(models) >= 12
    assert all(isinstance(m, ModelSpec) for m in models.values())
    assert {m.model_type for m in models.values()} == set(SUPPORTED_MODEL_TYPES)


def test_every_model_number_has_a_source():
    for name in load_model_catalog():
        entry = model_entry(name)
        assert entry["sources"]["config"].strip(), name
        assert entry["published_param_count_source"].strip(), name
        assert isinstance(entry["published_param_count"], int)
        assert isinstance(entry.get("published_param_count_precision", 1), int)
        if "published_active_param_count" in entry:
            assert entry["published_active_source"].strip(), name
            assert isinstance(entry["published_active_counts_embedding"], bool), name


def test_todays_moe_models_are_in_the_catalog():
    for name in ("deepseek-v3", "qwen3-30b-a3b", "gpt-oss-20b", "mixtral-8x7b-v0.1"):
        assert get_model(name).is_moe, name
    assert get_model("deepseek-v3").attention == "mla"


def test_hardware_catalog_size_and_kinds():
    hw = load_hardware_catalog()
    assert len(hw) >= 12
    assert all(isinstance(h, Hardware) for h in hw.values())
    assert {h.kind for h in hw.values()} == {"gpu", "apple", "cpu"}


def test_every_hardware_number_has_a_source():
    for name in load_hardware_catalog():
        entry = hardware_entry(name)
        for key in HW_NUMBERS:
            if entry.get(key) is not None:
                assert entry["sources"].get(key, "").strip(), f"{name}.{key} has no source"


def test_hardware_specs_use_dense_values():
    h100 = get_hardware("h100-sxm")
    assert (h100.memory_gb, h100.bandwidth_gb_s, h100.fp16_tflops) == (80, 3350, 989)  # not 1979 (sparse)
    assert get_hardware("h200-sxm").fp16_tflops == h100.fp16_tflops  # same die
    g4090 = get_hardware("rtx-4090")
    assert g4090.fp16_acc16_tflops == pytest.approx(2 * g4090.fp16_tflops, rel=1e-3)  # GeForce half rate
    assert g4090.peak_flops("fp16") == pytest.approx(330.3e12, rel=1e-12)
    assert g4090.peak_flops() == pytest.approx(165.2e12, rel=1e-12)
    a100 = get_hardware("a100-80gb-sxm")
    assert a100.peak_flops("fp16") == a100.peak_flops("fp32") == 312e12
    assert a100.ridge_point() == pytest.approx(312e12 / 2039e9, rel=1e-12)
    for name, h in load_hardware_catalog().items():
        if h.kind == "gpu" and h.int8_tops:
            assert h.int8_tops == pytest.approx(2 * (h.fp16_acc16_tflops or h.fp16_tflops), rel=0.02), name


def test_usable_memory_fraction():
    assert get_hardware("a100-80gb-sxm").usable_memory_gb == pytest.approx(72.0, abs=1e-9)  # vLLM's 0.9
    assert 0.7 <= get_hardware("apple-m2-ultra").usable_memory_fraction <= 0.78  # Metal working set


def test_lookups_are_case_insensitive_and_errors_list_names():
    assert get_model("Llama-2-7B").name == "llama-2-7b"
    assert get_hardware("  H100-SXM ").name == "h100-sxm"
    with pytest.raises(KeyError, match="llama-2-7b"):
        get_model("llama-9")
    with pytest.raises(KeyError, match="h100-sxm"):
        get_hardware("tpu")
    with pytest.raises(TypeError):
        get_model(7)


def test_entries_are_copies():
    entry = model_entry("llama-2-7b")
    entry["config"]["hidden_size"] = 1
    assert get_model("llama-2-7b").hidden_size == 4096


def test_hardware_validation():
    with pytest.raises(ValueError):
        Hardware("x", memory_gb=0, bandwidth_gb_s=100, fp16_tflops=10)
    with pytest.raises(ValueError):
        Hardware("x", 8, 100, 10, kind="tpu")
    with pytest.raises(ValueError):
        Hardware("x", 8, 100, 10, usable_memory_fraction=1.5)
    no_compute = Hardware("x", 8, 100, None)
    with pytest.raises(ValueError, match="fp16"):
        no_compute.peak_flops()
    assert "100 GB/s" in str(no_compute)
