"""makedata.corpus_writer: Spanish agreement, the template language, coherent plots, and the committed generated data."""

import json
import random
import re
from importlib import resources

import pytest

from llmlab import corpus
from makedata.corpus_writer import chat, dialogues, diversity, grammar, lexicon, spelling, stories
from makedata.corpus_writer.build import check
from makedata.corpus_writer.draft import Draft
from makedata.corpus_writer.plots.lost import lost_thing
from makedata.corpus_writer.grammar import FEM, MASC, PL, SG, Noun, adjective, article, number_word, plural, tidy
from makedata.corpus_writer.template import Character, Place, TemplateError, Thing, render

DATA = resources.files("llmlab") / "data"
GENERATED = sorted(p for p in (DATA / "corpus" / "raw").iterdir() if p.name.startswith("gen_"))
# The course's own terms, which the Spanish dictionary does not list (only in the informative texts and chat).
TECHNICAL = {"token", "tokens", "tokenizador", "tokenizadores", "prompt", "embedding", "embeddings", "softmax", "BPE",
             "LoRA", "KV", "kv", "nats", "transformer", "transformers", "gigabytes", "sobreajuste", "muestrear", "p", "k",
             "GPT", "llmlab", "greedy", "decoding", "tuning", "fine"}
# Animal sounds the world texts quote («la oveja bala: "bee"») and one real word that hunspell's es_ES lacks
# (pescadería is in the RAE's dictionary).
TECHNICAL |= {"bee", "quiquiriquí", "pescadería"}


# ---------------------------------------------------------------------------------------------
# Grammar, checked against forms written out by hand
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("word, expected", [
    ("casa", "casas"), ("sofá", "sofás"), ("café", "cafés"), ("lápiz", "lápices"), ("pez", "peces"), ("paraguas", "paraguas"),
    ("lunes", "lunes"), ("gris", "grises"), ("mes", "meses"), ("balón", "balones"), ("jardín", "jardines"),
    ("autobús", "autobuses"), ("francés", "franceses"), ("reloj", "relojes"), ("árbol", "árboles"), ("flor", "flores"),
    ("tren", "trenes"), ("león", "leones"), ("ratón", "ratones"),
])
def test_regular_plurals(word, expected):
    assert plural(word) == expected


def test_irregular_plurals_are_given_and_compounds_inflect_their_head():
    assert Noun("examen", MASC, pl="exámenes").form(PL) == "exámenes"
    assert Noun("avión de papel", MASC).form(PL) == "aviones de papel"
    with pytest.raises(ValueError):
        plural("dos palabras")


@pytest.mark.parametrize("lemma, forms", [
    ("contento", ("contento", "contenta", "contentos", "contentas")),
    ("feliz", ("feliz", "feliz", "felices", "felices")),
    ("verde", ("verde", "verde", "verdes", "verdes")),
    ("trabajador", ("trabajador", "trabajadora", "trabajadores", "trabajadoras")),
    ("dormilón", ("dormilón", "dormilona", "dormilones", "dormilonas")),
    ("charlatán", ("charlatán", "charlatana", "charlatanes", "charlatanas")),
    ("marrón", ("marrón", "marrón", "marrones", "marrones")),
    ("mejor", ("mejor", "mejor", "mejores", "mejores")),
    ("joven", ("joven", "joven", "jóvenes", "jóvenes")),
    ("gris", ("gris", "gris", "grises", "grises")),
])
def test_adjective_agreement(lemma, forms):
    got = tuple(adjective(lemma, g, n) for n in (SG, PL) for g in (MASC, FEM))
    assert got == (forms[0], forms[1], forms[2], forms[3])


def test_articles_and_the_stressed_a():
    assert [article("el", g, n) for n in (SG, PL) for g in (MASC, FEM)] == ["el", "la", "los", "las"]
    assert article("el", FEM, SG, stressed_a=True) == "el"  # el agua
    assert article("un", FEM, SG, stressed_a=True) == "un"  # un hada
    assert article("este", FEM, SG, stressed_a=True) == "esta"  # esta agua
    assert article("el", FEM, PL, stressed_a=True) == "las"  # las aguas
    water = Thing(Noun("agua", FEM, stressed_a=True), adj="frío")
    assert water.form("un") == "un agua fría" and water.form("el") == "el agua"
    with pytest.raises(ValueError, match="unknown determiner"):
        article("aquello", MASC)


def test_numbers_in_words():
    assert [number_word(n) for n in (0, 1, 16, 21, 22, 30, 31, 45, 100)] == [
        "cero", "uno", "dieciséis", "veintiuno", "veintidós", "treinta", "treinta y uno", "cuarenta y cinco", "cien"]
    assert number_word(1, FEM) == "una" and number_word(21, MASC) == "veintiún" and number_word(31, FEM) == "treinta y una"
    with pytest.raises(ValueError):
        number_word(101)


@pytest.mark.parametrize("raw, clean", [
    ("vino de el parque a el río", "Vino del parque al río"),
    ("habló de él", "Habló de él"),  # the pronoun does not contract
    ("Pablo y Inés, padre y hijo, agua y hielo", "Pablo e Inés, padre e hijo, agua y hielo"),
    ("siete o ocho, uno o otro, 7 o 8", "Siete u ocho, uno u otro, 7 u 8"),
    ("—¿dónde está? —preguntó Lucía. no lo sé.", "—¿Dónde está? —preguntó Lucía. No lo sé."),
    ("hola  ,  qué tal .", "Hola, qué tal."),
])
def test_tidy(raw, clean):
    assert tidy(raw) == clean


# ---------------------------------------------------------------------------------------------
# The template language
# ---------------------------------------------------------------------------------------------
def test_render_slots_forms_and_agreement():
    lucia = Character("Lucía", lexicon.KID[FEM])
    rabbit = Character(None, Noun("conejo", MASC, animate=True))
    gloves = Thing(Noun("guante", MASC), PL, "rojo")
    park = Place(Noun("parque", MASC))
    cast = {"H": lucia, "X": rabbit, "O": gloves, "P": park, "where": "{P.en}"}
    rng = random.Random(0)
    text = render("{H} buscó {O.su} {where} y se quedó {triste@H}; {X} {lo|la@H} vio {contento@X}. {O} {estaba|estaban#O} allí.",
                  cast, rng)
    assert text == "Lucía buscó sus guantes rojos en el parque y se quedó triste; el conejo la vio contento. los guantes estaban allí."
    assert render("{H.intro}", cast, rng) == "una niña llamada Lucía"
    assert render("{X.cd} y {X.de}", cast, rng) == "a el conejo y de el conejo"  # tidy() contracts them
    assert tidy(render("{X.cd} y {X.de}", cast, rng)) == "Al conejo y del conejo"
    assert render("{él|ella|ellos|ellas@O}", cast, rng) == "ellos"
    picks = {render("[uno|dos|tres]", cast, random.Random(s)) for s in range(40)}
    assert picks == {"uno", "dos", "tres"}
    assert render("[a|[b|c]]", cast, random.Random(1)) in {"a", "b", "c"}


@pytest.mark.parametrize("template, match", [
    ("{Z}", "unknown slot"), ("{H.nada}", "unknown form"), ("[a|b", "unclosed"), ("a]", "unbalanced"),
    ("{a|b|c@H}", "give 1, 2"), ("{a#H}", "give 2 forms"),
])
def test_render_errors_are_clear(template, match):
    with pytest.raises(TemplateError, match=match):
        render(template, {"H": Character("Lucía", lexicon.KID[FEM])}, random.Random(0))


# ---------------------------------------------------------------------------------------------
# Stories and dialogues
# ---------------------------------------------------------------------------------------------
def test_every_plot_and_scene_writes_clean_text():
    for plot in stories.PLOTS:
        for seed in range(25):
            name, text = stories.write_story(seed, plot)
            assert name == plot
            assert not re.search(r"[\[\]{}|@#]", text), (plot, seed, text)
            assert "  " not in text and text == text.strip()
            for para in text.split("\n\n"):
                first = next(c for c in para if c.isalpha())
                assert first.isupper(), (plot, seed, para)
    for scene in dialogues.SCENES:
        for seed in range(25):
            _, text = dialogues.write_dialogue(seed, scene)
            assert not re.search(r"[\[\]{}|@#]", text), (scene, seed, text)


def test_writing_is_a_pure_function_of_the_seed():
    assert stories.write_story(123) == stories.write_story(123)
    assert stories.write_story(123) != stories.write_story(124)
    assert dialogues.write_dialogue(7) == dialogues.write_dialogue(7)


def test_a_lost_thing_is_the_thing_found():
    # The plot's facts hold from start to end: what is lost is what is found, by the story's helper.
    for seed in range(40):
        d = Draft(random.Random(seed))
        lost_thing(d, set())
        text = d.text()
        noun = d.cast["O"].noun.form(d.cast["O"].number)
        helper = d.cast["X"].form("").split()[-1]
        assert noun in text.split("\n\n")[0], (seed, noun)  # introduced at the start
        after_help = text[text.index(helper):]
        assert re.search(rf"(Allí|allí).{{0,80}}{noun}", after_help), (seed, noun)  # and found after the helper comes


def test_shop_totals_and_change_are_right():
    words_to_int = {**{number_word(n): n for n in range(101)}, **{number_word(n, MASC): n for n in range(101)}}
    for seed in range(60):
        _, text = dialogues.write_dialogue(seed, "compra")
        m = re.search(r"son (.+?) euros?(?: en total)?[:.]", text, re.IGNORECASE)
        total = words_to_int[m.group(1)]
        tens = "treinta|cuarenta|cincuenta|sesenta|setenta|ochenta|noventa"
        parts = [words_to_int[x] for x in re.findall(rf"(?:: |, | y )((?:{tens}) y \w+|\w+) euros? de ", text)]
        if parts:
            assert sum(parts) == total, text
        change = re.search(r"(?:vuelta|devuelvo): ?(.+?) euros?", text)
        paid = re.search(r"Tome, (.+?) euros?\.|billete de (\w+(?: y \w+)?)\.", text)
        if change and paid:
            assert words_to_int[paid.group(1) or paid.group(2)] - total == words_to_int[change.group(1).strip()], text


def test_chat_sums_and_word_problems_are_right():
    convs = chat.arithmetic(random.Random(0), 300)
    for conv in convs:
        answer = conv[-1]["content"]
        m = re.search(r"(\d+) ([-+×]) (\d+) = (\d+)", answer)
        a, op, b, c = int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
        assert {"+": a + b, "-": a - b, "×": a * b}[op] == c, conv


def test_reading_comprehension_answers_are_in_the_text():
    for conv in chat.comprehension(random.Random(1), 200):
        question, answer = conv[0]["content"], conv[1]["content"]
        text = question.rsplit("\n\n", 1)[0]
        small = {"con", "los", "las", "del", "una", "uno", "por", "que", "muy", "fue", "sus", "porque"}
        key = [w for w in re.findall(r"\w+", answer) if len(w) >= 3 and not w.isdigit() and w.lower() not in small]
        if "frutas" in answer or "veces" in answer:
            continue  # a count or a computed total
        assert any(w.lower() in text.lower() for w in key), conv


# ---------------------------------------------------------------------------------------------
# Agreement across the whole generated corpus: article + known noun, known noun + adjective
# ---------------------------------------------------------------------------------------------
def _noun_table():
    table = {}
    nouns = [t.noun for t in lexicon.THINGS] + [n for a in lexicon.ANIMALS for n in a.nouns()] + [x.noun for x in lexicon.FOODS]
    nouns += [p.noun for p in lexicon.PLACES.values()]
    for n in nouns:
        if " " in n.sg or n.sg in ("naranja", "rosa", "pata", "cometa", "gafa", "bota", "llave", "guante"):
            continue  # colours that are also nouns, and words with another meaning
        table.setdefault(n.sg, set()).add((n.gender, SG, n.stressed_a))
        table.setdefault(n.form(PL), set()).add((n.gender, PL, False))
    return table


ARTICLES = {"el": (MASC, SG), "la": (FEM, SG), "los": (MASC, PL), "las": (FEM, PL), "un": (MASC, SG), "una": (FEM, SG),
            "unos": (MASC, PL), "unas": (FEM, PL), "este": (MASC, SG), "esta": (FEM, SG), "del": (MASC, SG), "al": (MASC, SG)}


@pytest.mark.skipif(not GENERATED, reason="no generated corpus files")
def test_articles_agree_with_nouns_in_the_generated_corpus():
    table = _noun_table()
    bad = []
    for path in GENERATED:
        words = re.findall(r"\w+", path.read_text(encoding="utf-8").lower())
        for art, noun in zip(words, words[1:]):
            if art in ARTICLES and noun in table:
                g, n = ARTICLES[art]
                ok = any((g2 == g and n2 == n) or (stressed and g == MASC and n == SG and art in ("el", "un", "del", "al"))
                         for g2, n2, stressed in table[noun])
                if not ok:
                    bad.append(f"{art} {noun}")
    assert not bad, sorted(set(bad))[:20]


@pytest.mark.skipif(not GENERATED, reason="no generated corpus files")
def test_colour_adjectives_agree_with_nouns_in_the_generated_corpus():
    table = _noun_table()
    colours = {adjective(c, g, n): (g, n) for c in lexicon.COLORS if c not in ("naranja", "rosa", "marrón", "verde", "azul", "gris")
               for g in (MASC, FEM) for n in (SG, PL)}
    bad = []
    for path in GENERATED:
        words = re.findall(r"\w+", path.read_text(encoding="utf-8"))  # case kept: «Blanca» is a name, not a colour
        for noun, adj in zip(words, words[1:]):
            noun = noun.lower()
            if noun in table and adj in colours:
                if all((g, n) != colours[adj] for g, n, _ in table[noun]):
                    bad.append(f"{noun} {adj}")
    assert not bad, sorted(set(bad))[:20]


# ---------------------------------------------------------------------------------------------
# The committed data
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_committed_generated_files_are_what_the_writer_writes():
    assert check(__import__("pathlib").Path(str(DATA))) == []


@pytest.mark.skipif(not spelling.available(), reason="hunspell with the es_ES dictionary is not installed (Debian hunspell-es)")
def test_generated_text_is_spelled_right():
    texts = [p.read_text(encoding="utf-8").split("\n", 1)[1] for p in GENERATED]
    words = [w for t in texts for w in spelling.words_of(t)]
    unknown = spelling.unknown_words(words) - TECHNICAL
    assert not unknown, sorted(unknown)[:30]
    conversations = [json.loads(line) for line in (DATA / "chat" / "gen_qa.jsonl").read_text(encoding="utf-8").splitlines()]
    chat_words = [w for c in conversations for m in c["messages"] for w in spelling.words_of(m["content"])]
    assert not spelling.unknown_words(chat_words) - TECHNICAL


def test_corpus_is_big_varied_and_has_no_near_twins():
    stats = corpus.corpus_stats()
    assert stats["raw_files"]["bytes"] >= 4_000_000
    # At least 5,000 question/answer exchanges (a conversation may hold several turns).
    assert stats["chat_train"]["exchanges"] + stats["chat_validation"]["exchanges"] >= 5000
    stories_text = [d.text for d in corpus._read_folder(DATA, "raw") if "gen_cuentos" in d.source]
    sample = stories_text[:600]
    dup = diversity.near_duplicates(sample, 0.5)
    assert dup["rate"] <= 0.01, dup
    assert diversity.distinct_n(sample, 4) > 0.3


def test_minhash_finds_twins_and_only_twins():
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = [a + b + c for a in letters for b in letters for c in "xyz"]  # words of letters only (digits are not words)
    base = " ".join(vocab[:200])
    twin = base.replace(f" {vocab[7]} ", " otra ")
    other = " ".join(vocab[300:500])
    r = diversity.near_duplicates([base, other, twin], 0.5)
    assert r["near_duplicates"] == 1 and r["max_jaccard_quantiles"][-1] > 0.9
    assert diversity.jaccard(diversity.shingles(base), diversity.shingles(other)) == 0.0
    assert diversity.distinct_n(["a b a b"], 2) == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------------------------
# The next corpus recipe (issue 24): world knowledge, sums, hand-written texts
# ---------------------------------------------------------------------------------------------
def test_every_world_fact_is_asked_in_many_phrasings_and_stated_in_the_corpus_text():
    from makedata.corpus_writer import world

    convs = world.world_chat(17)
    by_answer = {}
    for c in convs:
        assert [m["role"] for m in c] == ["user", "assistant"]
        by_answer.setdefault(c[1]["content"], set()).add(c[0]["content"])
    for fact in world.FACTS:
        assert fact.says, fact.answer  # the corpus states it, not only the chat
        assert len(by_answer[fact.answer]) >= 2, fact.answer
    assert sum(len(v) >= 6 for v in by_answer.values()) >= 0.8 * len(by_answer)
    docs = world.world_documents(17, n=len(world.FRAMES) * 40)
    text = "\n".join(docs)
    stated = sum(any(s in text for s in f.says) for f in world.FACTS)
    assert stated == len(world.FACTS)
    assert world.world_chat(17) == convs and world.world_documents(17, n=5) == docs[:5]  # a pure function of the seed


def test_world_questions_agree_with_their_answers():
    from makedata.corpus_writer import world

    for c in world.world_chat(17):
        q, a = c[0]["content"], c[1]["content"]
        if a.startswith(("Sirve ", "Vive ", "Come ", "Cura ", "Hace ", "Apaga ", "Enseña ", "Reparte ", "Prepara ", "Cuida ")):
            # a singular answer is never given to a question about a plural topic
            assert not re.search(r"\b(los|las) \w+(s|es)\b", q.split("?")[0].split("¿")[-1]) or "en" in q.split(), (q, a)
        assert q[0] in "¿ABCDEFGHIJKLMNÑOPQRSTUVWXYZÁÉÍÓÚ0123456789" and q.rstrip()[-1] in "?.", q


def test_sum_conversations_cover_every_one_digit_pair_with_the_result_last():
    from makedata import quality
    from makedata.corpus_writer import world

    convs = world.sum_conversations(17)
    pairs = set()
    for c in convs:
        q, a = c[0]["content"], c[1]["content"]
        nums = [int(x) for x in re.findall(r"\d+", q)]
        if len(nums) == 2:
            pairs.add(tuple(nums))
            assert quality.answer_number(a) == sum(nums), (q, a)
    assert len(pairs) >= 95  # a few phrasings spell the numbers out
    assert len(convs) == 400


def test_next_recipe_adds_world_texts_and_handwritten_files_without_touching_the_shipped_one(monkeypatch):
    from makedata.corpus_writer import build

    assert build.DEFAULT_RECIPE == "next"  # the committed corpus (--check) is the one the shipped models saw
    handwritten = sorted(build.HANDWRITTEN.glob("*.txt"))
    assert len(handwritten) >= 3
    for path in handwritten:
        docs = corpus.parse_corpus_file(path.read_text(encoding="utf-8"), path.name)
        assert len(docs) >= 8 and all(len(d.text.split()) >= 30 for d in docs)
    # _files of a small "next"-like generation: the new styles get their own files, hand-written ones keep their names.
    fake = {"cuentos": ["Un cuento."], "dialogos": ["—Hola."], "fichas": ["Una ficha."], "mundo": ["El reloj."] * 3,
            "chat": [], "escritos": {"01_dias.txt": "# T\nTexto."}}
    files = build._files(fake)
    assert "corpus/raw/gen_mundo_01.txt" in files and files["corpus/raw/escritos_01_dias.txt"] == "# T\nTexto."
    assert not any("mundo" in f or "escritos" in f for f in build._files({k: v for k, v in fake.items()
                                                                              if k not in ("mundo", "escritos")}))
