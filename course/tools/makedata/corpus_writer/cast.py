"""Choosing who is in a story: a hero, the helpers that suit the problem, the things they use.

Every choice is made with the story's own ``random.Random``, so a story is a pure function of
its seed. The helpers are chosen by what the problem needs (an *ability*): a kite stuck up a
tree needs someone tall, someone who climbs or flies; a lost thing needs a good nose or good
eyes. That is what keeps a story coherent: the help fits the trouble.
"""

from __future__ import annotations

import random

from . import lexicon as lx
from .grammar import FEM, MASC, SG, Noun
from .template import Character, Thing

__all__ = ["ABILITIES", "Hero", "adult", "animal_character", "hero", "helper_for", "pick_thing"]

# What an animal helper can do for the hero, and which animals can do it.
ABILITIES = {
    "tall": ("jirafa", "elefante", "caballo"),
    "climb": ("mono", "ardilla", "gato"),
    "fly": ("búho", "loro", "paloma", "cigüeña"),
    "smell": ("perro", "cerdo", "erizo"),
    "see": ("búho", "gato"),
    "strong": ("oso", "elefante", "burro", "caballo"),
    "wise": ("búho", "tortuga", "elefante"),
    "swim": ("pato", "rana", "pez"),
}
# Where each story animal lives, said after "vivía".
ANIMAL_HOMES = {
    "perro": ("en una casa del pueblo, con una familia muy cariñosa", "en una granja, junto a un pajar"),
    "gato": ("en una casa con un tejado rojo", "en la librería de un pueblo pequeño"),
    "conejo": ("en una madriguera al borde del prado", "en una madriguera junto a un campo de zanahorias"),
    "ratón": ("en un agujero de la pared de una casa vieja", "debajo del suelo de una panadería"),
    "oso": ("en una cueva del bosque", "en una cueva junto a un río de aguas frías"),
    "zorro": ("en una madriguera del bosque", "al pie de una colina, entre unas rocas"),
    "burro": ("en una granja junto al río", "en un establo al lado de un molino"),
    "pato": ("en un estanque del parque", "en una charca rodeada de juncos"),
    "cerdo": ("en una granja, en una pocilga limpia y ordenada", "en una granja al pie de la montaña"),
    "oveja": ("en una granja con un prado muy verde", "en un redil en lo alto de una colina"),
    "vaca": ("en una granja con un prado muy verde", "en un establo junto a un campo de trigo"),
    "elefante": ("en la sabana, cerca de un gran río", "en la sabana, a la sombra de unos árboles enormes"),
    "mono": ("en lo alto de un árbol de la selva", "en la selva, entre lianas y hojas enormes"),
    "jirafa": ("en la sabana, entre acacias altas", "en la sabana, cerca de una charca"),
    "tortuga": ("en un jardín lleno de plantas", "en la orilla de un lago tranquilo"),
    "ardilla": ("en el hueco de un roble", "en lo alto de un pino del bosque"),
    "rana": ("en una charca del bosque", "en un estanque lleno de nenúfares"),
    "búho": ("en el hueco de un árbol muy viejo", "en lo alto de un campanario"),
    "erizo": ("debajo de un montón de hojas secas", "en un rincón tranquilo de un jardín"),
    "caracol": ("en un huerto húmedo, debajo de una lechuga", "en un jardín, entre las piedras de un muro"),
    "foca": ("en una costa helada del norte", "en una playa de hielo y rocas"),
    "loro": ("en la selva, en un árbol lleno de frutas", "en una jaula grande, en casa de una familia"),
    "gallo": ("en el gallinero de una granja", "en una granja junto a un campo de girasoles"),
    "hormiga": ("en un hormiguero debajo de un olivo", "en un hormiguero al borde del camino"),
    "abeja": ("en una colmena junto a un campo de flores", "en una colmena en el tronco de un árbol"),
    "león": ("en la sabana, junto a unas rocas grandes", "en la sabana, a la sombra de un árbol"),
    "paloma": ("en el tejado de una iglesia", "en un palomar junto a la plaza del pueblo"),
    "cigüeña": ("en un nido enorme en lo alto de un campanario", "en un nido sobre la chimenea de una casa vieja"),
    "lobo": ("en el bosque, con su manada", "en una cueva de la montaña"),
}
KID_HOMES = ("en un piso cerca del parque", "en una casa con un jardín pequeño", "en un pueblo junto al mar",
             "en un pueblo rodeado de montañas", "en una casa al final de la calle", "en un barrio lleno de árboles",
             "en una granja con muchos animales", "en un piso alto desde el que se veía el río")


class Hero:
    """The hero and the facts about them that a story keeps coming back to."""

    def __init__(self, character: Character, *, animal: str | None, home: str, trait: str):
        self.character, self.animal, self.home, self.trait = character, animal, home, trait

    @property
    def is_kid(self) -> bool:
        return self.animal is None


def _name(rng: random.Random, gender: str, taken: set[str], pool_f, pool_m) -> str:
    pool = [n for n in (pool_f if gender == FEM else pool_m) if n not in taken]
    name = rng.choice(pool)
    taken.add(name)
    return name


def animal_character(rng: random.Random, species: str, taken: set[str], *, named: bool = True) -> Character:
    """An animal of ``species``, of either sex where Spanish has both nouns, with a pet name of the right gender."""
    nouns = lx.ANIMAL_BY_NAME[species].nouns()
    noun = rng.choice(nouns)
    name = _name(rng, noun.gender, taken, lx.PET_NAMES_F, lx.PET_NAMES_M) if named else None
    return Character(name, noun)


def hero(rng: random.Random, taken: set[str], *, kid_share: float = 0.55, species: tuple | None = None) -> Hero:
    """A child (with a name) or a talking animal (with a pet name), a home and a trait."""
    trait = rng.choice(sorted(lx.TRAITS))
    if rng.random() < kid_share:
        gender = rng.choice((FEM, MASC))
        name = _name(rng, gender, taken, lx.GIRLS, lx.BOYS)
        return Hero(Character(name, lx.KID[gender]), animal=None, home=rng.choice(KID_HOMES), trait=trait)
    species = rng.choice(species or lx.STORY_ANIMALS)
    return Hero(animal_character(rng, species, taken), animal=species, home=rng.choice(ANIMAL_HOMES[species]),
                trait=trait)


def adult(rng: random.Random, role: str | None = None, *, roles: tuple = ()) -> tuple[Character, str]:
    """A grown-up helper for a child: ``(character, role)``, e.g. ``la abuela`` / ``"abuela"``.

    Family members go unnamed (``su abuela``); neighbours get a name with ``señora`` / ``señor``.
    """
    role = role or rng.choice(roles or ("abuela", "abuelo", "madre", "padre", "tía", "tío", "vecina", "vecino"))
    noun, address = lx.ADULTS[role]
    if role in ("vecina", "vecino"):
        name = rng.choice(lx.ADULT_NAMES[noun.gender])
        title = "señora" if noun.gender == FEM else "señor"
        return Character(f"la {title} {name}" if noun.gender == FEM else f"el {title} {name}", noun,
                         address=f"{title} {name}"), role
    if role in ("maestra", "maestro"):
        name = rng.choice(lx.ADULT_NAMES[noun.gender])
        return Character(None, noun, address=address if role == "maestro" else name), role
    return Character(None, noun, address=address), role


def friend(rng: random.Random, taken: set[str], hero_: Hero) -> Character:
    """A friend of the hero's kind: another child, or another animal."""
    if hero_.is_kid:
        gender = rng.choice((FEM, MASC))
        return Character(_name(rng, gender, taken, lx.GIRLS, lx.BOYS), lx.KID[gender])
    species = rng.choice([s for s in lx.STORY_ANIMALS if s != hero_.animal])
    return animal_character(rng, species, taken)


def helper_for(rng: random.Random, ability: str, taken: set[str], hero_: Hero) -> tuple[Character, str]:
    """An animal that has ``ability``: ``(character, species)``; never the hero's own species."""
    choices = [s for s in ABILITIES[ability] if s != hero_.animal]
    species = rng.choice(choices)
    return animal_character(rng, species, taken), species


def pick_thing(rng: random.Random, *tags: str, exclude: tuple = ()) -> Thing:
    """A thing carrying every tag in ``tags``, maybe with a colour or another adjective."""
    pool = [t for t in lx.THINGS if set(tags) <= t.tags and t.noun.sg not in exclude]
    if not pool:
        raise ValueError(f"no thing has the tags {tags}")
    base = rng.choice(pool)
    adj = None
    roll = rng.random() if " " not in base.noun.sg else 1.0  # "avión de papel nuevo" reads badly: no adjective
    if base.noun.sg in lx.COLORABLE and roll < 0.55:
        adj = rng.choice(lx.COLORS)
    elif roll < 0.8:
        adj = rng.choice(lx.THING_ADJECTIVES)
    return Thing(base.noun, base.number, adj, base.tags)


def kid_noun(gender: str) -> Noun:
    return lx.KID[gender]


__all__ += ["KID_HOMES", "ANIMAL_HOMES", "friend", "kid_noun", "SG"]
