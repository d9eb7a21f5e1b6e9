"""Steps every plot shares: the hero's introduction, a time, thanks, and a few endings."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft

__all__ = ["ANIMAL_LIKES", "ORDINALS", "opening", "set_hero", "thanks", "in_order"]

ANIMAL_LIKES = ("jugar al escondite", "mirar las nubes", "cantar", "bailar", "coleccionar piedras",
                "mirar las estrellas", "hacer preguntas", "contar historias", "dormir la siesta al sol",
                "correr por el prado", "escuchar el viento")
# How consecutive attempts are introduced, so that "first" always comes first.
ORDINALS = (("Primero", "Al principio", "Para empezar"), ("Luego", "Después", "A continuación"),
            ("Después", "Más tarde", "Entonces"), ("Por último", "Al final", "Finalmente"))


def set_hero(d: Draft, taken: set, **kw) -> cs.Hero:
    """Choose the hero and put ``H`` (and what the opening says about them) in the cast."""
    h = cs.hero(d.rng, taken, **kw)
    d.cast.update(H=h.character, home=h.home, trait_text=lx.TRAITS[h.trait], trait=h.trait,
                  like=d.choice(lx.LIKES if h.is_kid else ANIMAL_LIKES))
    return h


def opening(d: Draft, h: cs.Hero) -> None:
    """Who the hero is, where they live and what they are like: two sentences."""
    trait = "{" + h.trait + "@H}"
    d.say(
        "Había una vez {H.intro} que vivía {home}.",
        "Vivía {home} {H.intro}.",
        "Hace [mucho|algún] tiempo, {home}, vivía {H.intro}.",
        "{H} era {H.un} que vivía {home}.",
        "En otro tiempo vivía {home} {H.intro}.",
        "Esta es la historia de {H.intro}, que vivía {home}.",
    )
    d.say(
        "Era {H.un} muy " + trait + " y [le encantaba|le gustaba mucho] {like}.",
        "{H} era muy " + trait + "[; le encantaba {like}|, y lo que más le gustaba era {like}].",
        "Todo el mundo sabía que {H} era muy " + trait + ". [Además, le encantaba {like}.|Su pasatiempo favorito era {like}.]",
        "[Le encantaba|Le gustaba mucho] {like}, y era [muy|bastante] " + trait + ".",
        "Era [muy|bastante] " + trait + " y le gustaba {trait_text}.",
    )


def in_order(d: Draft, clauses: list[str]) -> None:
    """Say ``clauses`` (each starts with a verb in the past) as consecutive attempts: Primero..., Luego..."""
    for i, clause in enumerate(clauses):
        lead = d.choice(ORDINALS[min(i, 2) if i < len(clauses) - 1 or len(clauses) < 3 else 3])
        d.say(f"{lead}, {clause}.")


def thanks(d: Draft, helper: str = "X") -> None:
    """The hero thanks the helper ``helper`` and the helper answers: two lines of dialogue."""
    x = helper
    d.line(
        "—Muchas gracias, {" + x + ".voc} —dijo {H}—. [Sin ti no lo habría conseguido.|Eres {un|una@" + x + "} {amigo@" + x
        + "} de verdad.|No sé qué habría hecho sin ti.]",
        "—¡Gracias, {" + x + ".voc}! —[exclamó|gritó] {H}[ con una gran sonrisa|, muy {contento@H}|].",
        "—¡Qué bien! ¡Muchas gracias! —dijo {H}, y le dio un abrazo [enorme|muy fuerte] {" + x + ".cd}.",
    )
    d.line(
        "—De nada —[contestó|respondió|dijo] {" + x + "}—. [Para eso están los amigos.|Me alegro de haberte ayudado.|Cuando quieras.|Hoy por ti, mañana por mí.]",
        "—No hay de qué —[contestó|sonrió] {" + x + "}.",
        "—[Ha sido un placer|Me ha gustado mucho ayudarte] —dijo {" + x + "}[ con una sonrisa|].",
    )
