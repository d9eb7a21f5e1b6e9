"""makedata.quality: the measurements of the models' own text (repetition, spelling, chat answers on topic)."""

import shutil

import pytest
import torch

from makedata import quality
from makedata.corpus_writer import spelling
from llmlab.model import ModelConfig, Transformer
from llmlab.tokenizer import BPETokenizer


def test_repetition_rate_counts_repeated_4grams_within_one_text():
    assert quality.repetition_rate("el perro come pan y el gato bebe leche") == 0.0
    loop = "el agua y el sol " * 4  # 20 words, 17 four-grams, 5 distinct
    assert quality.repetition_rate(loop) == pytest.approx(1 - 5 / 17)
    assert quality.repetition_rate("muy corto") == 0.0


def test_content_stems_drop_stop_words_accents_and_endings():
    assert quality.content_stems("¿Qué comen los conejos?") == {"comen", "conej"}
    assert quality.content_stems("El conejo come zanahorias.") == {"conej", "come", "zanah"}
    assert quality.content_stems("Camión, camion") == {"camio"}


@pytest.mark.parametrize("question, answer, reference, expected", [
    ("¿Qué come el conejo?", "El conejo come hierba.", "Come hierba y zanahorias.", True),
    ("¿Qué come el conejo?", "Hierba y zanahorias.", "Come hierba y zanahorias.", True),  # via the reference
    ("¿Qué come el conejo?", "Mañana es martes.", "Come hierba y zanahorias.", False),
    ("Lucía perdió su pelota en el parque.\n\n¿Dónde estaba la muñeca?", "Lucía perdió su pelota.", "Debajo del banco.", False),
    ("Lucía perdió su pelota en el parque.\n\n¿Qué perdió Lucía?", "Perdió su pelota.", "Su pelota.", True),
])
def test_on_topic_uses_the_question_and_the_reference_only(question, answer, reference, expected):
    assert quality.on_topic(question, answer, reference) is expected


def test_reference_overlap():
    assert quality.reference_overlap("Come hierba.", "Come hierba y zanahorias.") == pytest.approx(2 / 3)
    assert quality.reference_overlap("algo", "Sí.") == 1.0


@pytest.fixture(scope="module")
def tiny():
    tok = BPETokenizer.train(["había una vez un conejo que comía hierba en el prado"] * 3, 300)
    torch.manual_seed(0)
    model = Transformer(ModelConfig.llama_style(vocab_size=len(tok), d_model=16, n_layers=1, n_heads=2, n_kv_heads=1))
    return model.eval(), tok


def test_continuations_are_seeded_and_start_from_the_prompts(tiny):
    model, tok = tiny
    a = quality.continuations(model, tok, n=4, new_tokens=5, prompts=("Había", "Un"))
    b = quality.continuations(model, tok, n=4, new_tokens=5, prompts=("Había", "Un"))
    assert a == b and [x["prompt"] for x in a] == ["Había", "Un", "Había", "Un"]
    assert a[0]["text"] != a[2]["text"]  # another seed, another sample


def test_chat_answers_and_answer_perplexity(tiny):
    model, tok = tiny
    conv = [{"role": "user", "content": "¿Qué come el conejo?"}, {"role": "assistant", "content": "Come hierba."}]
    answers = quality.chat_answers(model, tok, [conv], max_new_tokens=5)
    assert answers[0]["question"] == "¿Qué come el conejo?" and answers[0]["reference"] == "Come hierba."
    ppl = quality.chat_answer_perplexity(model, tok, [conv])
    assert 1 < ppl < 10 * len(tok)
    with pytest.raises(ValueError, match="no assistant answer"):
        quality.question_of([{"role": "user", "content": "hola"}])


def test_valid_word_rate_needs_hunspell(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert quality.valid_word_rate(["la casa"]) is None


@pytest.mark.skipif(not spelling.available(), reason="hunspell with the es_ES dictionary is not installed (Debian hunspell-es)")
def test_valid_word_rate_with_hunspell():
    r = quality.valid_word_rate(["La casa azul potador", "cogados en el jardín"])
    assert r["words"] == 8 and r["unknown"] == 2 and r["rate"] == pytest.approx(6 / 8)
    assert dict(r["top_unknown"]) == {"potador": 1, "cogados": 1}


def test_spread_takes_even_steps():
    assert quality.spread(list(range(10)), 5) == [0, 2, 4, 6, 8]
    assert quality.spread([1, 2], 5) == [1, 2]
