"""Something breaks, the hero hides it, feels worse and worse, tells the truth, and is forgiven."""

from __future__ import annotations

from .. import cast as cs
from ..draft import Draft
from ..lexicon import f, m
from ..template import Thing
from .common import opening, set_hero

BROKEN = (
    (Thing(m("jarrón"), adj="azul"), "jugando a la pelota en el salón", "se hizo mil pedazos"),
    (Thing(f("taza"), adj="blanco"), "corriendo por la cocina", "se rompió en tres trozos"),
    (Thing(f("lámpara")), "saltando sobre el sofá", "se le rompió la pantalla"),
    (Thing(m("reloj"), adj="viejo"), "jugando con él sin permiso", "se le soltó una aguja"),
    (Thing(m("plato"), adj="grande"), "ayudando a poner la mesa con prisas", "se partió por la mitad"),
)
HIDE = ("escondió los trozos debajo de la alfombra", "metió los pedazos en una bolsa y la escondió en el armario",
        "lo colocó todo de manera que no se notara")


def honesty(d: Draft, taken: set) -> None:
    h = set_hero(d, taken, kid_share=1.0)
    thing, doing, breaks = d.choice(BROKEN)
    owner, _ = cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre"))
    d.cast.update(O=thing, X=owner, doing=doing, breaks=breaks, hide=d.choice(HIDE), when=d.when())
    opening(d, h)
    d.par()
    d.say("En casa había {O.un} que {X.su} quería mucho.", "{X.su} tenía {O.un} que era muy especial para {X.él}.")
    d.say("{when}, {H} estaba {doing} cuando, [sin querer|de pronto], [golpeó|tiró] {O}, que cayó al suelo y {breaks}.")
    d.say("{H} se quedó [{quieto@H}|sin respirar]. [¿Qué iba a decir?|El corazón le latía muy deprisa.]")
    d.say("Tenía tanto miedo de que {H.lo} regañaran que {hide}.", "Sin pensarlo mucho, {hide}.")
    d.par()
    d.say("Aquella tarde, {H} no tenía ganas de jugar. [Tampoco tenía hambre en la cena.|Ni siquiera le apetecía ver la tele.]")
    d.say("Cuando {X} preguntó [por {O}|si alguien había visto {O}], {H} dijo que no sabía nada.",
          "{X} buscó {O} por todas partes, y {H} no dijo nada.")
    d.say("Por la noche, en la cama, no podía dormir. La mentira le pesaba como una piedra en la tripa.",
          "Esa noche dio vueltas y más vueltas en la cama. Se sentía cada vez peor.")
    d.par()
    d.say("Al día siguiente, {H} se armó de valor y fue a buscar a {X}.", "Por la mañana, {H} no aguantó más.")
    d.line("—Tengo que contarte una cosa —dijo en voz baja—. Rompí {O} sin querer, y {O.lo} escondí. Lo siento mucho.",
           "—{X.voc}, fui yo —dijo, mirando al suelo—. Rompí {O} y no te lo dije porque tenía miedo.")
    d.say("{X} se quedó un momento en silencio. Después se agachó para mirar{H.lo} a los ojos.")
    d.line("—Me da pena que se haya roto —dijo {X}—, pero me alegro mucho más de que me digas la verdad. Eso es lo importante.",
           "—Las cosas se rompen —dijo {X}—. Lo que no quiero es que haya mentiras entre nosotros. Gracias por contármelo.")
    d.say("Después intentaron arreglar{O.lo} con pegamento. No quedó perfecto, pero {H} se sentía mucho mejor.",
          "Juntos recogieron los trozos y los tiraron a la basura. A {H} se le quitó un peso de encima.")
    d.say("Aquel día {H} aprendió que decir la verdad cuesta, pero que callarla cuesta mucho más.",
          "Desde entonces, cuando algo sale mal, {H} lo cuenta enseguida.", "")
