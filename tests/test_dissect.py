"""llmlab.dissect: the reference pieces of lab 09, on the worked numbers of chapter 08 and the inference guide."""

from __future__ import annotations

import math

import pytest
import torch

from llmlab import cost as C
from llmlab import dissect as D
from llmlab.model import ModelConfig, Transformer


def test_tokens_per_word_and_words_per_second_guide_numbers():
    assert D.tokens_per_word(4000, 5000) == 1.25
    assert D.tokens_per_word(4000, 7500) == 1.875
    # G-M6: 60 tok/s at 1.875 tokens/word is slower for a reader than 50 tok/s at 1.25.
    assert D.words_per_second(50, 1.25) == 40.0
    assert D.words_per_second(60, 1.875) == 32.0
    for bad in [(0, 5), (-1, 5), (5, -1), (True, 3)]:
        with pytest.raises(ValueError):
            D.tokens_per_word(*bad)
    with pytest.raises(ValueError):
        D.words_per_second(10, 0)


def test_answer_perplexity_matches_cross_entropy_and_uniform_model():
    uniform = lambda ids: torch.zeros(1, ids.shape[1], 12)  # noqa: E731
    assert D.answer_perplexity(uniform, [1, 2], [3, 4, 5]) == pytest.approx(12.0)
    torch.manual_seed(0)
    model = Transformer(ModelConfig(vocab_size=30, n_layers=2, d_model=16, n_heads=2, n_kv_heads=1, d_ff=32,
                                    max_seq_len=32)).eval()
    prompt, answer = [1, 2, 3, 4], [5, 6, 7]
    with torch.no_grad():
        logits = model(torch.tensor([prompt + answer]))[0]
    expected = math.exp(torch.nn.functional.cross_entropy(logits[3:6].double(), torch.tensor(answer)).item())
    assert D.answer_perplexity(model, prompt, answer) == pytest.approx(expected, rel=1e-9)
    assert D.answer_perplexity(model, torch.tensor(prompt), torch.tensor(answer)) == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError):
        D.answer_perplexity(model, [], [1])
    with pytest.raises(ValueError):
        D.answer_perplexity(model, [1], [])


def test_generate_with_stops_reasons_and_limits():
    countdown = lambda ids: max(0, 10 - len(ids))  # noqa: E731 - after [1]: 9, 8, 7, ...
    assert D.generate_with_stops(countdown, [1], 3) == {"ids": [9, 8, 7], "stop_reason": "max_tokens"}
    assert D.generate_with_stops(countdown, [1], 20, eos_id=5) == {"ids": [9, 8, 7, 6], "stop_reason": "eos"}
    assert D.generate_with_stops(countdown, [1], 20, stop_sequences=[[6, 5]]) == {
        "ids": [9, 8, 7], "stop_reason": "stop_sequence"}
    # A stop sequence is looked for in the generated tokens only, never across the prompt.
    assert D.generate_with_stops(lambda ids: 1, [5, 6], 3, stop_sequences=[[6, 1]])["stop_reason"] == "max_tokens"
    calls = []
    assert D.generate_with_stops(lambda ids: calls.append(1) or 3, [9], 0) == {"ids": [], "stop_reason": "max_tokens"}
    assert calls == []
    assert set(D.STOP_REASONS) == {"eos", "stop_sequence", "max_tokens"}
    with pytest.raises(ValueError):
        D.generate_with_stops(countdown, [1], -1)
    with pytest.raises(ValueError):
        D.generate_with_stops(countdown, [1], 3, stop_sequences=[[]])


def test_fits_on_device_guide_24_gb_case():
    assert not D.fits_on_device(7e9, 16, 131_072, 32, 32, 128, 24)  # MHA: 68.7 GB of KV
    assert not D.fits_on_device(7e9, 16, 131_072, 32, 8, 128, 24)  # GQA-8, fp16 weights: 31.18 GB
    assert D.fits_on_device(7e9, 4, 131_072, 32, 8, 128, 24)  # 4-bit weights: 20.68 GB
    assert D.fits_on_device(7e9, 4, 131_072, 32, 8, 128, 24, kv_bytes=1)  # + FP8 KV: 12.09 GB
    assert not D.fits_on_device(7e9, 4, 131_072, 32, 8, 128, 20)  # decimal GB: 20.68 > 20 (19.5 in GiB)
    assert D.fits_on_device(2e9, 16, 0, 32, 32, 128, 4.0)  # exactly full still fits
    # Same total as llmlab.cost.serving_memory_gb.
    total = C.serving_memory_gb(7e9, 4, 32, 1, 131_072, 8, 128)["total"]
    assert D.fits_on_device(7e9, 4, 131_072, 32, 8, 128, total) and not D.fits_on_device(
        7e9, 4, 131_072, 32, 8, 128, total - 1e-6)
    with pytest.raises(ValueError):
        D.fits_on_device(7e9, 0, 1024, 32, 8, 128, 24)
    with pytest.raises(ValueError):
        D.fits_on_device(7e9, 4, 1024, 32, 8, 128, 24, batch=0)


def test_diagnose_table_and_errors():
    assert len(D.DIAGNOSIS) == 10
    assert D.diagnose("tarda en empezar") == "prefill"
    assert D.diagnose("  Empieza rápido   y acaba LENTO ") == "decode"
    assert D.diagnose("JSON inválido") == "decodificación"
    assert D.diagnose("se queda sin memoria") == "entorno de ejecución"  # Spanish, as lab 09's prose
    with pytest.raises(ValueError):
        D.diagnose("va lento")
    with pytest.raises(ValueError):
        D.diagnose(None)


KIT_WEIGHTS = {"calidad": 0.25, "latencia": 0.10, "coste": 0.15, "privacidad": 0.15, "mantenimiento": 0.10,
               "adaptacion": 0.10, "contexto_externo": 0.15}
KIT_OPTIONS = {
    "api_con_rag": dict(calidad=4, latencia=4, coste=3, privacidad=3, mantenimiento=4, adaptacion=3, contexto_externo=5),
    "modelo_abierto_gpu": dict(calidad=4, latencia=3, coste=3, privacidad=5, mantenimiento=2, adaptacion=5,
                               contexto_externo=3),
    "api_potente": dict(calidad=5, latencia=2, coste=2, privacidad=3, mantenimiento=5, adaptacion=3, contexto_externo=4),
    "modelo_local_cuantizado": dict(calidad=3, latencia=4, coste=5, privacidad=5, mantenimiento=3, adaptacion=4,
                                    contexto_externo=1),
}


def test_score_options_reproduces_the_chapter_kit():
    ranking = D.score_options(KIT_OPTIONS, KIT_WEIGHTS)
    assert [n for n, _ in ranking] == ["api_con_rag", "modelo_abierto_gpu", "api_potente", "modelo_local_cuantizado"]
    assert [s for _, s in ranking] == pytest.approx([3.75, 3.65, 3.6, 3.5], abs=1e-12)
    doubled = D.score_options(KIT_OPTIONS, {c: 2 * w for c, w in KIT_WEIGHTS.items()})
    assert [s for _, s in doubled] == pytest.approx([3.75, 3.65, 3.6, 3.5], abs=1e-12)
    strict = D.score_options(KIT_OPTIONS, KIT_WEIGHTS, minimums={"privacidad": 4})
    assert [n for n, _ in strict] == ["modelo_abierto_gpu", "modelo_local_cuantizado"]
    ties = D.score_options({"b": {"x": 1}, "a": {"x": 1}}, {"x": 1})
    assert [n for n, _ in ties] == ["a", "b"]
    for bad in ({"x": -1}, {"x": 0}, {}):
        with pytest.raises(ValueError):
            D.score_options({"a": {"x": 1}}, bad)
    with pytest.raises(ValueError):
        D.score_options({"a": {"x": 1}}, {"x": 1, "y": 1})


def test_kv_growth_over_turns_follows_the_history():
    growth = D.kv_growth_over_turns([2048] * 8, 32, 32, 128)
    assert growth[-1] == pytest.approx(8.0, abs=1e-12)  # 16K tokens at 0.5 MiB per token (guide G-8)
    assert growth == sorted(growth) and len(growth) == 8
    assert D.kv_growth_over_turns([100, 0], 1, 1, 1, bytes_per_value=1, system_tokens=28) == pytest.approx(
        [256 / 2**30, 256 / 2**30], abs=1e-18)
    assert D.kv_growth_over_turns([], 32, 8, 128) == []
    for bad in ([2.5], [-1], [True]):
        with pytest.raises(ValueError):
            D.kv_growth_over_turns(bad, 32, 8, 128)
    with pytest.raises(ValueError):
        D.kv_growth_over_turns([10], 32, 0, 128)


def test_recommend_model_type_checks_in_the_stated_order():
    assert D.recommend_model_type(1) == "instruido"
    assert D.recommend_model_type(2) == "chat"
    assert D.recommend_model_type(5, reasoning=True) == "razonamiento"
    assert D.recommend_model_type(5, reasoning=True, tools=True) == "herramientas"
    assert D.recommend_model_type(1, tools=True, fine_tune=True) == "base"
    assert set(D.MODEL_TYPES) == {"base", "instruido", "chat", "razonamiento", "herramientas"}
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError):
            D.recommend_model_type(bad)
