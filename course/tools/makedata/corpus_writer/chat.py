"""Question/answer conversations for es-chat, built from the same facts as the corpus.

Kinds of conversation (``KINDS``): questions about animals, food, jobs and things whose answers
are in the corpus's cards and stories; short texts to read followed by a question whose answer
is in the text (reading comprehension); sums and small word problems computed exactly; days,
months, plurals, feminines and opposites; the course's own subject (:mod:`.concepts`); greetings
and simple advice. ``conversations(seed)`` returns them all, in a fixed order.
"""

from __future__ import annotations

import random

from . import lexicon as lx
from .concepts import CONCEPTS
from .dialogues import AILMENTS
from .draft import Draft
from .grammar import FEM, MASC, PL, SG, adjective, article, capitalize, join_words, number_word, plural, tidy
from .template import Character, Thing

__all__ = ["KINDS", "conversations"]

SYSTEM = "Responde en español, en una o dos frases como máximo."


def _qa(question: str, answer: str, *more: str) -> list[dict]:
    turns = [question, answer, *more]
    roles = ["user", "assistant"] * len(turns)
    return [{"role": r, "content": tidy(t)} for r, t in zip(roles, turns)]


def _the(noun, number=SG) -> str:
    return f"{article('el', noun.gender, number, stressed_a=noun.stressed_a)} {noun.form(number)}"


def _a(noun) -> str:
    return f"{article('un', noun.gender, SG, stressed_a=noun.stressed_a)} {noun.sg}"


# ---------------------------------------------------------------------------------------------
# Facts from the banks
# ---------------------------------------------------------------------------------------------
KIND_WORD = {"mamífero": "un mamífero", "ave": "un ave", "reptil": "un reptil", "anfibio": "un anfibio",
             "insecto": "un insecto", "pez": "un pez", "molusco": "un molusco"}


def animal_questions(rng: random.Random) -> list[list[dict]]:
    out = []
    for a in lx.ANIMALS:
        n = a.male or a.female
        the, the_pl, one = _the(n), _the(n, PL), _a(n)
        qa = [
            (rng.choice([f"¿Qué come {the}?", f"¿De qué se alimenta {the}?", f"¿Qué comen {the_pl}?"]),
             rng.choice([f"{capitalize(the)} come {a.eats}.", f"Se alimenta de {a.eats}."])),
            (rng.choice([f"¿Dónde vive {the}?", f"¿Dónde viven {the_pl}?"]),
             rng.choice([f"Vive {a.lives}.", f"{capitalize(the)} vive {a.lives}."])),
            (rng.choice([f"¿Cómo es {one}?", f"Descríbeme {one}.", f"¿Cómo se reconoce {one}?"]),
             capitalize(a.looks) + "."),
            (rng.choice([f"¿Qué hace {the}?", f"Dime algo curioso de {the}.", f"Cuéntame algo sobre {the_pl}."]),
             capitalize(a.does) + "."),
            (f"¿Qué tipo de animal es {the}?", f"{capitalize(the)} es {KIND_WORD[a.kind]}."),
        ]
        wrong = rng.choice([k for k in KIND_WORD if k != a.kind])
        qa.append((f"¿{capitalize(the)} es {KIND_WORD[wrong]}?", f"No. {capitalize(the)} es {KIND_WORD[a.kind]}."))
        qa.append((f"¿Cuántas patas tiene {one}?",
                   "No tiene patas." if a.legs == 0 else f"Tiene {number_word(a.legs, FEM)} patas."))
        if a.young:
            qa.append(rng.choice([(f"¿Cómo se llama la cría de {the}?", f"La cría se llama {a.young}."),
                                  (f"¿Cómo se llaman las crías de {the_pl}?", f"Se llaman {plural(a.young)}.")]))
        if a.sound:
            qa.append((rng.choice([f"¿Qué sonido hace {the}?", f"¿Cómo hace {the}?"]), f"{capitalize(the)} {a.sound}."))
        out += [_qa(q, r) for q, r in qa]
        # a follow-up in a second turn
        out.append(_qa(f"¿Dónde vive {the}?", f"Vive {a.lives}.", "¿Y qué come?", f"Come {a.eats}."))
    return out


FOOD_KIND = {"fruta": "una fruta", "hortaliza": "una hortaliza", "alimento": "un alimento", "bebida": "una bebida",
             "cereal": "un cereal"}


def food_questions(rng: random.Random) -> list[list[dict]]:
    out = []
    for x in lx.FOODS:
        the = _the(x.noun)
        qa = [(rng.choice([f"¿{capitalize(the)} es una fruta o una hortaliza?", f"¿Qué es {the}?"]),
               f"{capitalize(the)} es {FOOD_KIND[x.kind]}."),
              (rng.choice([f"¿A qué sabe {the}?", f"¿Qué sabor tiene {the}?"]), f"Tiene un sabor {x.taste}.")]
        if x.grows.startswith(("se hace", "lo ponen", "la dan", "la hacen")):
            qa.append((rng.choice([f"¿De dónde sale {the}?", f"¿Cómo se hace {the}?"]), capitalize(x.grows) + "."))
        else:
            qa.append((rng.choice([f"¿Dónde crece {the}?", f"¿De dónde sale {the}?"]), f"Crece {x.grows}."))
        if x.kind in ("fruta", "hortaliza"):
            color = adjective(x.color, x.noun.gender) if x.color not in ("naranja", "rosa", "marrón") else x.color
            qa.append((f"¿De qué color es {the}?", f"Suele ser {color}."))
            qa.append((rng.choice([f"¿Dónde puedo comprar {x.noun.form(PL) if x.noun.sg not in ('leche', 'miel', 'arroz', 'pan', 'queso') else x.noun.sg}?",
                                   f"¿Dónde se compra {the}?"]),
                       rng.choice(["En la frutería o en el mercado.", "En el mercado, en el puesto de fruta y verdura."])))
        out += [_qa(q, r) for q, r in qa]
    return out


def job_questions(rng: random.Random) -> list[list[dict]]:
    out = []
    for masc, (fem, where, does, tool) in lx.JOBS.items():
        g = rng.choice(("m", "f"))
        word = masc if g == "m" else fem
        the = ("el " if g == "m" else "la ") + word
        qa = [(rng.choice([f"¿Dónde trabaja {the}?", f"¿Dónde trabaja un {masc}?" if g == "m" else f"¿Dónde trabaja una {fem}?"]),
               f"Trabaja {where}."),
              (rng.choice([f"¿Qué hace {the}?", f"¿En qué consiste el trabajo de {the}?"]), capitalize(does) + "."),
              (f"¿Qué herramienta usa {the}?", f"Usa {tool}, entre otras cosas."),
              (f"¿Quién {does.split(' y ')[0]}?",
               f"{capitalize('el ' + masc)} o {('la ' + fem) if fem != masc else 'la ' + fem}.")]
        out += [_qa(q, r) for q, r in qa]
    return out


def thing_questions(rng: random.Random) -> list[list[dict]]:
    out = []
    for t in lx.THINGS:
        use = lx.THING_USE[t.noun.sg]
        the = _the(t.noun, t.number)
        verb = "sirven" if t.number == PL else "sirve"
        q = rng.choice([f"¿Para qué {verb} {the}?", f"¿Para qué se usa{'n' if t.number == PL else ''} {the}?"])
        out.append(_qa(q, f"{capitalize(the)} {verb} para {use}."))
        out.append(_qa(rng.choice([f"¿Qué uso para {use}?", f"¿Qué necesito para {use}?"]), f"{capitalize(the)}."))
    return out


def recipe_questions(rng: random.Random) -> list[list[dict]]:
    out = []
    for name, (noun, ingredients, steps) in lx.RECIPES.items():
        number = PL if name == "galletas" else SG
        the = _the(noun, number)
        out.append(_qa(rng.choice([f"¿Qué ingredientes lleva{'n' if number == PL else ''} {the}?", f"¿Qué necesito para hacer {the}?"]),
                       f"Para {the} hacen falta {join_words(list(ingredients))}."))
        out.append(_qa(f"¿Cómo se hace{'n' if number == PL else ''} {the}?",
                       "Hay que " + join_words(list(steps)) + "."))
        out.append(_qa(f"¿Qué es lo primero para hacer {the}?", capitalize(steps[0]) + "."))
    return out


# ---------------------------------------------------------------------------------------------
# Words: opposites, plurals, feminines
# ---------------------------------------------------------------------------------------------
def word_questions(rng: random.Random) -> list[list[dict]]:
    out = []
    for a, b in lx.ANTONYMS:
        for x, y in ((a, b), (b, a)):
            q = rng.choice([f"¿Cuál es el contrario de «{x}»?", f"Dime lo contrario de «{x}».", f"¿Cuál es el antónimo de «{x}»?"])
            out.append(_qa(q, rng.choice([f"«{capitalize(y)}».", f"Lo contrario de «{x}» es «{y}»."])))
    nouns = {}
    for t in lx.THINGS:
        nouns[t.noun.sg] = t.noun
    for a in lx.ANIMALS:
        for n in a.nouns():
            nouns[n.sg] = n
    for x in lx.FOODS:
        nouns[x.noun.sg] = x.noun
    for p in lx.PLACES.values():
        nouns[p.noun.sg] = p.noun
    for word in sorted(nouns):
        n = nouns[word]
        if " " in word or word in ("gafa", "bota", "guante", "llave") or n.form(PL) == word:
            continue
        out.append(_qa(rng.choice([f"¿Cuál es el plural de «{word}»?", f"¿Cómo se dice «{word}» en plural?"]),
                       f"El plural de «{word}» es «{n.form(PL)}»."))
    for a in lx.ANIMALS:
        if a.male and a.female:
            out.append(_qa(f"¿Cuál es el femenino de «{a.male.sg}»?", f"El femenino de «{a.male.sg}» es «{a.female.sg}»."))
    for masc, (fem, *_rest) in lx.JOBS.items():
        if fem != masc and " " not in masc:
            out.append(_qa(f"¿Cómo se dice «{masc}» en femenino?", f"Se dice «{fem}»."))
    for adj in ("contento", "cansado", "alto", "pequeño", "dormilón", "trabajador", "feliz", "valiente", "rojo", "verde"):
        fem = adjective(adj, FEM)
        out.append(_qa(f"¿Cuál es el femenino de «{adj}»?",
                       f"Es «{fem}»." if fem != adj else f"«{capitalize(adj)}» no cambia: se dice igual en masculino y en femenino."))
    return out


# ---------------------------------------------------------------------------------------------
# Numbers and the calendar
# ---------------------------------------------------------------------------------------------
COUNTABLE = ("manzana", "pera", "globo", "lápiz", "caramelo", "cromo", "libro", "galleta", "canica", "huevo", "flor", "piedra")
COUNT_NOUNS = {w: lx.f(w) if w in ("manzana", "pera", "galleta", "canica", "flor", "piedra") else lx.m(w) for w in COUNTABLE}


def _count(n: int, noun) -> str:
    return f"{n} {noun.sg if n == 1 else noun.form(PL)}"


def arithmetic(rng: random.Random, n_items: int) -> list[list[dict]]:
    out = []
    for i in range(n_items):
        kind = rng.choice(["sum", "diff", "story_sum", "story_diff", "times"])
        a, b = rng.randint(1, 12), rng.randint(1, 9)
        if kind == "sum":
            q = rng.choice([f"¿Cuánto son {a} más {b}?", f"¿Cuánto es {a} + {b}?", f"Suma {a} y {b}."])
            out.append(_qa(q, f"{a} + {b} = {a + b}. En letras: {number_word(a + b)}."))
        elif kind == "diff":
            a, b = max(a, b) + rng.randint(0, 8), min(a, b)
            q = rng.choice([f"¿Cuánto son {a} menos {b}?", f"¿Cuánto es {a} - {b}?", f"Resta {b} a {a}."])
            out.append(_qa(q, f"{a} - {b} = {a - b}. En letras: {number_word(a - b)}."))
        elif kind == "times":
            a, b = rng.randint(2, 6), rng.randint(2, 6)
            word = rng.choice(COUNTABLE)
            noun = COUNT_NOUNS[word]
            box = rng.choice(["cajas", "bolsas", "platos"])
            each = "cada una" if box != "platos" else "cada uno"
            how_many = "Cuántas" if noun.gender == FEM else "Cuántos"
            q = f"Hay {a} {box} con {_count(b, noun)} {each}. ¿{how_many} {noun.form(PL)} hay en total?"
            out.append(_qa(q, f"Hay {_count(a * b, noun)}, porque {a} × {b} = {a * b}."))
        else:
            gender = rng.choice((FEM, MASC))
            name = rng.choice(lx.GIRLS if gender == FEM else lx.BOYS)
            word = rng.choice(COUNTABLE)
            noun = COUNT_NOUNS[word]
            how_many = "Cuántas" if noun.gender == FEM else "Cuántos"
            if kind == "story_sum":
                giver = rng.choice(["su abuela", "su abuelo", "su amiga", "su amigo", "su tía", "su vecino"])
                q = f"{name} tiene {_count(a, noun)} y {giver} le da {b} más. ¿{how_many} {noun.form(PL)} tiene ahora?"
                out.append(_qa(q, f"Ahora tiene {_count(a + b, noun)}, porque {a} + {b} = {a + b}."))
            else:
                a = a + b
                how = rng.choice(["regala", "pierde", "se come"] if word in ("manzana", "pera", "galleta", "caramelo", "huevo")
                                 else ["regala", "pierde", "presta"])
                q = f"{name} tenía {_count(a, noun)} y {how} {b}. ¿{how_many} le quedan?"
                out.append(_qa(q, f"Le quedan {_count(a - b, noun)}, porque {a} - {b} = {a - b}."))
    return out


def calendar(rng: random.Random) -> list[list[dict]]:
    out = []
    days, months = lx.DAYS, lx.MONTHS
    for i, d in enumerate(days):
        out.append(_qa(rng.choice([f"¿Qué día va después del {d}?", f"Si hoy es {d}, ¿qué día es mañana?"]),
                       f"Después del {d} viene el {days[(i + 1) % 7]}." if rng.random() < 0.5 else f"Mañana es {days[(i + 1) % 7]}."))
        out.append(_qa(f"Si hoy es {d}, ¿qué día fue ayer?", f"Ayer fue {days[i - 1]}."))
    for i, m in enumerate(months):
        out.append(_qa(rng.choice([f"¿Qué mes va después de {m}?", f"¿Qué mes viene detrás de {m}?"]),
                       f"Después de {m} viene {months[(i + 1) % 12]}."))
        out.append(_qa(f"¿Qué mes va antes de {m}?", f"Antes de {m} va {months[i - 1]}."))
    seasons = {"primavera": ("marzo", "abril", "mayo"), "verano": ("junio", "julio", "agosto"),
               "otoño": ("septiembre", "octubre", "noviembre"), "invierno": ("diciembre", "enero", "febrero")}
    for s, ms in seasons.items():
        out.append(_qa(f"¿Qué tiempo hace en {s}?", capitalize(join_words(list(lx.SEASONS[s][:2]))) + ", sobre todo en España."))
        out.append(_qa(f"¿Qué meses son de {s} en España?", f"Sobre todo {join_words(list(ms))}."))
    out += [_qa("¿Cuántos días tiene una semana?", "Una semana tiene siete días."),
            _qa("¿Cuántos meses tiene un año?", "Un año tiene doce meses."),
            _qa("¿Cuáles son los días del fin de semana?", "El sábado y el domingo."),
            _qa("¿Cuántas estaciones tiene el año?", "Cuatro: primavera, verano, otoño e invierno.")]
    return out


# ---------------------------------------------------------------------------------------------
# Reading comprehension: the answer is in the text
# ---------------------------------------------------------------------------------------------
def _alone(n: int, gender: str) -> str:
    """A number said on its own, agreeing with the noun left out: «uno», «una», «tres»."""
    return "una" if n == 1 and gender == FEM else number_word(n)


def comprehension(rng: random.Random, n_items: int) -> list[list[dict]]:
    out = []
    places = ["parque", "playa", "bosque", "jardín", "colegio", "plaza", "biblioteca", "patio", "río"]
    for i in range(n_items):
        gender = rng.choice((FEM, MASC))
        name = rng.choice(lx.GIRLS if gender == FEM else lx.BOYS)
        hero = Character(name, lx.KID[gender])
        kind = rng.choice(["lost", "visit", "shopping"])
        if kind == "lost":
            thing = rng.choice([t for t in lx.THINGS if "small" in t.tags and t.number == SG])
            color = rng.choice(lx.COLORS) if thing.noun.sg in lx.COLORABLE else None
            o = Thing(thing.noun, SG, color)
            place = lx.PLACES[rng.choice(places)]
            spot1, spot2 = rng.sample(place.spots, 2)
            friend = rng.choice([n for n in (lx.GIRLS + lx.BOYS) if n != name])
            friend_word = "amiga" if friend in lx.GIRLS else "amigo"
            finder = rng.choice(["su abuela", "su abuelo", "su hermana", "su hermano", f"su {friend_word} {friend}", "su perro"])
            feeling = "muy " + adjective(rng.choice(["contento", "feliz", "alegre"]), gender)
            story = (f"{name} perdió {o.form('su')} {place.form('en')}. Primero {o.form('lo')} buscó {spot1}, pero no estaba allí. "
                     f"Al final, {finder} {o.form('lo')} encontró {spot2}. {name} se puso {feeling}.")
            qa = [(f"¿Qué perdió {name}?", f"{name} perdió {o.form('su')}."),
                  (f"¿Dónde perdió {name} {o.form('su')}?", f"{capitalize(place.form('en'))}."),
                  (f"¿Quién encontró {o.form('el')}?", f"{capitalize(finder)}."),
                  (f"¿Dónde estaba {o.form('el')} al final?", f"Estaba {spot2}."),
                  (f"¿Dónde buscó {name} primero?", f"Primero buscó {spot1}."),
                  (f"¿Cómo se sintió {name} al final?", f"Se puso {feeling}.")]
        elif kind == "visit":
            role = rng.choice(["abuela", "abuelo", "tía", "tío"])
            day = rng.choice(lx.DAYS)
            food = rng.choice(["un bizcocho", "unas galletas", "una tarta de manzana", "unas fresas", "pan recién hecho"])
            game = rng.choice(["a las cartas", "al parchís", "al escondite", "a la pelota", "al dominó"])
            how = rng.choice(["en autobús", "en bicicleta", "andando", "en tren"])
            story = (f"El {day}, {name} fue {how} a visitar a su {role}. Le llevó {food}. "
                     f"Por la tarde jugaron {game}, y {name} ganó dos veces.")
            qa = [(f"¿A quién visitó {name}?", f"A su {role}."),
                  (f"¿Qué día fue la visita?", f"El {day}."),
                  (f"¿Qué le llevó {name} a su {role}?", f"Le llevó {food}."),
                  (f"¿A qué jugaron?", f"Jugaron {game}."),
                  (f"¿Cómo fue {name} a casa de su {role}?", f"Fue {how}."),
                  (f"¿Cuántas veces ganó {name}?", "Ganó dos veces.")]
        else:
            fruits = rng.sample([x for x in lx.FOODS if x.kind == "fruta" and x.noun.sg not in ("sandía",)], 2)
            k1, k2 = rng.randint(1, 6), rng.randint(1, 6)
            total = k1 + k2
            story = (f"{name} fue al mercado con su madre. Compró {number_word(k1, fruits[0].noun.gender)} "
                     f"{fruits[0].noun.sg if k1 == 1 else fruits[0].noun.form(PL)} y {number_word(k2, fruits[1].noun.gender)} "
                     f"{fruits[1].noun.sg if k2 == 1 else fruits[1].noun.form(PL)}. Al volver a casa, lo guardó todo en el frutero.")
            qa = [(f"¿Cuántas frutas compró {name} en total?", f"Compró {number_word(total, FEM)} frutas, porque {k1} + {k2} = {total}."),
                  (f"¿Con quién fue {name} al mercado?", "Con su madre."),
                  (f"¿Cuántas {fruits[0].noun.form(PL)} compró {name}?" if fruits[0].noun.gender == FEM else f"¿Cuántos {fruits[0].noun.form(PL)} compró {name}?",
                   f"Compró {_alone(k1, fruits[0].noun.gender)}."),
                  (f"¿Dónde guardó la fruta?", "En el frutero.")]
        q, a = rng.choice(qa)
        lead = rng.choice(["Lee el texto y responde.\n\n", "", "Texto: ", "Responde a la pregunta sobre este texto.\n\n"])
        out.append(_qa(f"{lead}{tidy(story)}\n\n{q}", a))
    return out


# ---------------------------------------------------------------------------------------------
# The course's subject, small talk and advice
# ---------------------------------------------------------------------------------------------
def concept_questions(rng: random.Random) -> list[list[dict]]:
    out = []
    for c in CONCEPTS:
        for q in c.questions:
            out.append(_qa(q, c.short))
        out.append(_qa(c.questions[0], c.short, "¿Me pones un ejemplo?", c.example))
        out.append(_qa(rng.choice(["Explícamelo con más detalle: " + c.questions[0][1:].lower(),
                                   "Explica con calma " + c.questions[0][1:-1].lower() + "."]),
                       c.long))
    return out


SMALL_TALK = [
    ("Hola", "¡Hola! ¿En qué te puedo ayudar?"),
    ("Buenos días", "¡Buenos días! ¿Qué necesitas?"),
    ("Buenas tardes", "¡Buenas tardes! Dime, ¿en qué te ayudo?"),
    ("Gracias", "¡De nada! Si tienes otra pregunta, aquí estoy."),
    ("Muchas gracias por tu ayuda", "Me alegro de haberte ayudado."),
    ("Adiós", "¡Adiós! Que tengas un buen día."),
    ("Hasta luego", "¡Hasta luego!"),
    ("¿Quién eres?", "Soy es-chat, un modelo de lenguaje muy pequeño entrenado para el curso llmlab. Sé poco, pero intento ayudar."),
    ("¿Cómo te llamas?", "Me llamo es-chat. Soy el modelo de chat del curso llmlab."),
    ("¿Eres una persona?", "No. Soy un programa: un modelo de lenguaje que escribe el siguiente token según lo que ha aprendido."),
    ("¿Qué sabes hacer?", "Puedo responder preguntas sencillas sobre animales, comida, el calendario, las palabras y cómo funcionan los modelos de lenguaje."),
    ("¿Siempre tienes razón?", "No. Soy un modelo pequeño y me equivoco a menudo; comprueba lo que te diga si es importante."),
    ("Cuéntame un chiste", "¿Qué le dice un semáforo a otro? No me mires, que me estoy cambiando."),
    ("¿Cómo estás?", "Bien, gracias. ¿Y tú? ¿En qué te puedo ayudar?"),
    ("Estoy aburrido", "Puedes leer un cuento, salir a dar un paseo o aprender algo nuevo. ¿Quieres que te explique qué es un token?"),
    ("Estoy triste", "Siento que estés triste. Hablar con alguien de confianza suele ayudar. ¿Quieres contarme qué pasa?"),
]
WEATHER_ADVICE = [
    ("Hace mucho frío. ¿Qué me pongo?", "Ponte el abrigo, la bufanda, el gorro y los guantes."),
    ("Está lloviendo y tengo que salir. ¿Qué hago?", "Coge el paraguas y ponte unas botas de agua o un chubasquero."),
    ("Hace mucho calor. ¿Qué me recomiendas?", "Bebe mucha agua, ponte una gorra y busca la sombra en las horas de más sol."),
    ("Hace mucho viento. ¿Qué me pongo?", "Una chaqueta bien abrochada, y mejor deja el sombrero en casa."),
    ("Hay tormenta. ¿Es buena idea ir al parque?", "No. Con tormenta es mejor quedarse en casa o en un sitio cerrado hasta que pase."),
]


def advice_questions(rng: random.Random) -> list[list[dict]]:
    out = [_qa(q, a) for q, a in SMALL_TALK + WEATHER_ADVICE]
    for complaint, _question, _answer, advice in AILMENTS.values():
        out.append(_qa(f"Oye, {complaint}. ¿Qué hago?",
                       f"Yo no soy médico. Si no se te pasa, ve al centro de salud. Un médico suele decir algo así: «{advice}»"))
    return out


KINDS = ("animal", "food", "job", "thing", "recipe", "word", "arithmetic", "calendar", "comprehension", "concept", "advice")


def conversations(seed: int, *, n_arithmetic: int = 900, n_comprehension: int = 3000, with_kinds: bool = False):
    """All generated conversations (lists of messages), some with a short system message first.

    With ``with_kinds`` returns ``(conversations, kinds)``, the kind (one of ``KINDS``) of each.
    """
    rng = random.Random(seed)
    groups = [
        animal_questions(rng), food_questions(rng), job_questions(rng), thing_questions(rng), recipe_questions(rng),
        word_questions(rng), arithmetic(rng, n_arithmetic), calendar(rng), comprehension(rng, n_comprehension),
        concept_questions(rng), advice_questions(rng),
    ]
    out, kinds, seen = [], [], set()
    for kind, group in zip(KINDS, groups):
        for conv in group:
            key = tuple(m["content"] for m in conv)
            if key in seen:
                continue
            seen.add(key)
            if rng.random() < 0.15:
                conv = [{"role": "system", "content": SYSTEM}] + conv
            out.append(conv)
            kinds.append(kind)
    return (out, kinds) if with_kinds else out
