"""makedata.quality: the measurements of the models' own text (repetition, spelling, chat answers on topic)."""

import re
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


# ---------------------------------------------------------------------------------------------
# The held-out set of issue 24
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer, keywords, expected", [
    ("Vive en el agua del mar.", ["agua", "mar"], True),
    ("Los peces viven en los RÍOS.", ["rio"], True),  # case and accents ignored
    ("Ladran los perros.", ["perro"], True),  # a word beginning
    ("El viernes es un modelo de lenguaje.", ["agua", "mar", "rio"], False),
    ("Tiene 4 patas.", ["cuatro", "4"], True),
    ("Tiene 14 patas.", ["4"], False),  # a whole-word start, not a digit inside a number
    ("", ["agua"], False),
])
def test_keyword_on_topic(answer, keywords, expected):
    assert quality.keyword_on_topic(answer, keywords) is expected


@pytest.mark.parametrize("answer, expected", [
    ("5", 5), ("Son 8.", 8), ("2 + 3 = 5.", 5), ("Dos más tres son cinco.", 5), ("Tienes 4, porque 2 + 2 = 4.", 4),
    ("El resultado es siete.", 7), ("No lo sé.", None), ("4 = 6.", 6), ("", None),
])
def test_answer_number_takes_the_result(answer, expected):
    assert quality.answer_number(answer) == expected


def test_loop_rate_counts_digit_loops_too():
    assert quality.loop_rate(["Es 2 2 2 2 2 2 2 2 2 2 2 2", "El gato duerme en la cama."]) == 0.5
    assert quality.loop_rate([]) == 0.0


@pytest.mark.parametrize("questions", ["questions.json", quality.SECOND_SET])
def test_heldout_files_are_complete_and_apart_from_the_training_data(questions):
    h = quality.load_heldout(questions=questions)
    assert len(h["questions"]) >= 30 and len(h["sums"]) >= 10 and len(h["text"].split()) >= 300
    assert all(q["keywords"] and q["q"].strip() for q in h["questions"])
    assert all(0 <= s["answer"] <= 18 for s in h["sums"])
    # Written apart: no held-out question is asked word for word by the chat data (committed, or the next recipe's
    # world chat), and no sentence of the held-out text stands in the corpus.
    from llmlab import corpus
    from makedata.corpus_writer import world

    asked = {m["content"].strip().lower() for split in ("train", "validation") for c in corpus.load_chat(split) for m in c}
    asked |= {c[0]["content"].strip().lower() for c in world.world_chat(17) + world.sum_conversations(17)}
    from makedata.corpus_writer.build import RECIPES  # and the larger chat set of the next-chat recipe

    wider = RECIPES["next-chat"]
    asked |= {c[0]["content"].strip().lower()
              for c in world.world_chat(17, **wider["world_chat"]) + world.sum_conversations(17, **wider["sums"])}
    for q in h["questions"] + h["sums"]:
        assert q["q"].strip().lower() not in asked, q["q"]
    text = " ".join(corpus.load_documents("train") + corpus.load_documents("validation"))
    text += " ".join(p.read_text(encoding="utf-8") for p in world_handwritten())
    text += " ".join(s for f in world.FACTS for s in f.says) + " ".join(world.world_documents(17, n=50))
    for sentence in re.split(r"(?<=[.!?])\s+", h["text"]):
        if len(sentence.split()) >= 8:
            assert sentence not in text, sentence


def world_handwritten():
    from makedata.corpus_writer.build import HANDWRITTEN

    return sorted(HANDWRITTEN.glob("*.txt"))


def test_text_scores_and_heldout_chat_on_a_tiny_model(tiny):
    model, tok = tiny
    train_ids = torch.tensor([tok.bos_id] + tok.encode("había una vez un conejo que comía hierba en el prado"))
    s = quality.text_scores(model, tok, "un conejo comía hierba", train_ids)
    assert s["tokens"] > 2 and all(v > 1 for k, v in s.items() if k != "tokens")
    # A unigram fitted on the text itself predicts it better than one fitted on other text.
    assert s["unigram_on_text"] < s["unigram"]
    h = {"questions": [{"q": "¿Qué come el conejo?", "keywords": ["hierba"]}], "sums": [{"q": "¿Cuánto es 1 + 1?", "answer": 2}],
         "text": "x"}
    r = quality.heldout_chat(model, tok, heldout=h, max_new_tokens=4)
    assert set(r) >= {"on_topic", "sums_right", "clean_stops", "loops", "answers", "sum_answers"}
    assert 0 <= r["on_topic"] <= 1 and len(r["answers"]) == 1 and len(r["sum_answers"]) == 1
    table = quality.heldout_table({"es-base": {**s, "valid_words": None, "loops": 0.0}, "es-chat": r}, "tiny")
    assert "| tiny | value |" in table and "n/a (no hunspell)" in table and "set B" not in table
    with_b = quality.heldout_table({"es-base": {**s, "valid_words": None, "loops": 0.0}, "es-chat": r, "es-chat-b": r}, "tiny")
    assert with_b.count("set B") == 3 and with_b.startswith(table.rstrip("\n"))
