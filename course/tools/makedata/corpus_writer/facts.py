"""Short informative texts built from the word banks' facts: animal and food cards, school reports,
riddles, jobs, and lessons about the course's own subject.

The same facts answer the chat questions (:mod:`makedata.corpus_writer.chat`), so what es-chat is
asked has been written somewhere in the corpus. Each writer takes a ``random.Random`` and picks
one of several ways to say things; the informative texts are fewer than the stories (they are
about a fixed list of things), so each exists in a few distinct versions, not thousands.
"""

from __future__ import annotations

import random

from . import lexicon as lx
from .concepts import CONCEPTS
from .draft import Draft
from .grammar import MASC, PL, SG, article, capitalize, number_word, plural
from .template import Character, Thing

__all__ = ["FACT_WRITERS", "fact_documents"]

KINDS = {"mamífero": "un mamífero", "ave": "un ave", "reptil": "un reptil", "anfibio": "un anfibio",
         "insecto": "un insecto", "pez": "un pez", "molusco": "un molusco"}


def _animal_cast(d: Draft, animal) -> None:
    noun = animal.male or animal.female
    d.cast.update(A=Thing(noun), As=Thing(noun, PL), kind=KINDS[animal.kind], eats=animal.eats, lives=animal.lives,
                  looks=animal.looks, does=animal.does)


def animal_card(d: Draft, animal) -> None:
    """An encyclopedia-style card."""
    _animal_cast(d, animal)
    d.say("{A.el} es {kind}.", "{A.el} es {kind} [que vive {lives}|muy conocido]." if animal.kind != "ave" else "{A.el} es un ave.")
    d.say("Vive {lives}.", "Su casa está {lives}.", "Se {lo|la@A} puede encontrar {lives}.")
    d.say("[Físicamente,|Por fuera,|Es fácil de reconocer:] {looks}.")
    d.say("Se alimenta de {eats}.", "Come {eats}.", "Su comida favorita: {eats}.")
    d.say("{does}.", "Una curiosidad: {does}.")
    if animal.legs:
        d.say(f"Tiene {number_word(animal.legs, 'f')} patas.", "")
    if animal.young:
        d.say(f"Sus crías se llaman {plural(animal.young)}.", f"A la cría {{A.de}} se le llama {animal.young}.")
    if animal.sound:
        d.say(f"Cuando hace ruido, se dice que {animal.sound}.", f"Se dice que {{A.el}} {animal.sound}.")


def animal_report(d: Draft, animal, taken: set) -> None:
    """A child's school report about an animal."""
    _animal_cast(d, animal)
    gender = d.choice(("f", "m"))
    name = d.choice([n for n in (lx.GIRLS if gender == "f" else lx.BOYS) if n not in taken])
    d.cast["K"] = Character(name, lx.KID[gender])
    d.say("Me llamo {K} y mi trabajo es sobre {As.el}.", "Mi animal favorito es {A.el}, y por eso he hecho mi trabajo sobre {As.el}.",
          "Este es mi trabajo de ciencias. Lo he hecho sobre {As.el}.")
    d.say("{As.el} viven {lives}.")
    d.say("He aprendido que comen {eats}.", "Comen {eats}.")
    d.say("Lo que más me gusta de {As.el} es que {does}.", "Me parece muy interesante que {does}.")
    d.say("Si un día ves {A.un}, fíjate bien: {looks}.", "Para reconocer{A.lo}, hay que saber que {looks}.")
    d.say("[De mayor quiero trabajar cuidando animales.|Me gustaría ver {A.un} de cerca algún día.|Fin.]")


def animal_riddle(d: Draft, animal) -> None:
    """A riddle in the first person, with its answer."""
    _animal_cast(d, animal)
    d.say("Adivina, adivinanza.", "¿A que no sabes quién soy?", "Te voy a poner una adivinanza.")
    d.say("Vivo {lives}.")
    d.say("Como {eats}.")
    d.say("Una pista: {looks}.", "Otra pista: {does}.")
    d.say("¿Quién soy?")
    d.par()
    d.say("¡Soy {A.el}!", "Respuesta: {A.el}.")


def food_card(d: Draft, food) -> None:
    kind = {"fruta": "una fruta", "hortaliza": "una hortaliza", "alimento": "un alimento", "bebida": "una bebida",
            "cereal": "un cereal"}[food.kind]
    d.cast.update(F=Thing(food.noun), kind=kind, grows=food.grows, taste=food.taste, col="{" + food.color + "@F}")
    d.say("{F.el} es {kind}.", "{F.el} es {kind} muy [{conocido@F}|{sano@F}|popular].")
    if food.grows.startswith(("se hace", "lo ponen", "la dan", "la hacen")):
        d.say(capitalize(food.grows) + ".")
    else:
        d.say("Crece {grows}.", "Se cultiva {grows}.")
    if food.kind in ("fruta", "hortaliza"):
        d.say("Suele ser de color {col}.", f"Su color es el {food.color}.")
    d.say("Tiene un sabor {taste}.", "Su sabor es {taste}.")
    d.say("[Se puede comer de muchas maneras.|Es bueno comer un poco cada semana.|En el mercado se vende por kilos.]")


def job_card(d: Draft, masc: str, info) -> None:
    fem, where, does, tool = info
    gender = d.choice(("m", "f"))
    word = masc if gender == "m" else fem
    art = "El" if gender == "m" else "La"
    d.say(f"{art} {word} trabaja {where}.", f"¿Dónde trabaja {art.lower()} {word}? {capitalize(where)}.")
    d.say(f"Su trabajo es importante: {does}.", f"{capitalize(art.lower() + ' ' + word)} {does}.")
    d.say(f"Para trabajar usa {tool}.", f"Una de sus herramientas es {tool}.")
    d.say("[Es un trabajo que ayuda a mucha gente.|Muchos niños quieren hacer ese trabajo de mayores.|]")


def things_text(d: Draft, things) -> None:
    d.say("[Cada cosa sirve para algo.|En casa y en el colegio usamos muchas cosas.|Vamos a ver para qué sirven algunas cosas.]")
    for t in things:
        use = lx.THING_USE[t.noun.sg]
        art = article("el", t.gender, t.number)
        noun = t.noun.form(t.number)
        verb = "sirven" if t.number == PL else "sirve"
        d.say(f"{art} {noun} {verb} para {use}.", f"Para {use} se usa{'n' if t.number == PL else ''} {art} {noun}.")


def lesson(d: Draft, concepts, taken: set) -> None:
    """A teacher explains two or three ideas of the course to the class, with a question."""
    gender = d.choice(("f", "m"))
    name = d.choice([n for n in (lx.GIRLS if gender == "f" else lx.BOYS) if n not in taken])
    d.cast["K"] = Character(name, lx.KID[gender])
    teacher = "la profesora" if d.chance(0.5) else "el profesor"
    d.say(f"Hoy, en la clase de informática, {teacher} habló de cómo funcionan los modelos de lenguaje.",
          f"{capitalize(teacher)} empezó la clase con una pregunta: ¿cómo escribe un ordenador un texto que parece humano?")
    for c in concepts:
        d.par()
        d.say(c.long)
        d.say("Por ejemplo: " + c.example[0].lower() + c.example[1:], c.example)
    q = d.choice(concepts)
    d.line(f"—{q.questions[0]} —preguntó {{K}}.")
    d.line(f"—{q.short.rstrip('.')} —respondió {teacher}.")


def concept_text(d: Draft, concept) -> None:
    d.say(f"{capitalize(concept.name)}.", "")
    d.say(concept.long)
    d.say(concept.example)


FACT_WRITERS = ("animal_card", "animal_report", "animal_riddle", "food_card", "job_card", "things_text", "lesson", "concept_text")


def fact_documents(seed: int) -> list[str]:
    """Every informative document, a few versions of each, written from ``seed``."""
    rng = random.Random(seed)
    docs = []

    def write(fn, *args):
        d = Draft(rng)
        fn(d, *args)
        docs.append(d.text())

    for animal in lx.ANIMALS:
        write(animal_card, animal)
        write(animal_report, animal, set())
        write(animal_report, animal, set())
        write(animal_riddle, animal)
    for food in lx.FOODS:
        write(food_card, food)
        write(food_card, food)
    for masc, info in lx.JOBS.items():
        write(job_card, masc, info)
        write(job_card, masc, info)
    for _ in range(40):
        write(things_text, rng.sample(lx.THINGS, 4))
    for concept in CONCEPTS:
        write(concept_text, concept)
    for _ in range(120):
        write(lesson, rng.sample(CONCEPTS, 3), set())
    return docs
