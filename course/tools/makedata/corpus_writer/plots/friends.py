"""Someone new arrives and is left alone; the hero says hello, and they find what they share."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft
from .common import opening, set_hero

ARRIVALS_KID = (
    "Un lunes llegó a la clase {N.intro}, que venía de una ciudad muy lejana.",
    "{when}, una familia nueva se mudó al piso de al lado. Tenían {N.un} que se llamaba {N}.",
    "Aquel curso llegó al colegio {N.intro}. Era nuev{o|a@N} y no conocía a nadie.",
)
ARRIVALS_ANIMAL = (
    "{when}, llegó al {home_word} {N.intro}, que venía de muy lejos.",
    "Un día apareció por allí {N.intro}, que se había perdido durante una tormenta y no conocía a nadie.",
)
ALONE = (
    "En el recreo, {N} se sentaba {solo@N} en un banco y miraba cómo jugaban los demás.",
    "Los primeros días, {N} no hablaba con nadie. Siempre estaba {solo@N}, mirando al suelo.",
    "Los demás {N.lo} miraban con curiosidad, pero nadie se acercaba a decirle nada.",
)
APPROACH = (
    "—Hola. Me llamo {H}. ¿Quieres jugar con nosotros? —le preguntó.",
    "—Hola, soy {H} —dijo, sentándose a su lado—. ¿Cómo te llamas?",
    "—¿Quieres un poco de mi merienda? —le ofreció {H}, y le dio la mitad.",
)
SHARED = ("dibujar", "las canciones", "las estrellas", "los dinosaurios", "las adivinanzas", "los cuentos de piratas",
          "el fútbol", "las plantas", "los trenes", "los barcos")


def new_friend(d: Draft, taken: set) -> None:
    h = set_hero(d, taken)
    newcomer = cs.friend(d.rng, taken, h)
    shared = d.choice(SHARED)
    d.cast.update(N=newcomer, when=d.when(), shared=shared, home_word=d.choice(("bosque", "prado", "valle")))
    opening(d, h)
    d.par()
    d.say(*(ARRIVALS_KID if h.is_kid else ARRIVALS_ANIMAL))
    d.say(*ALONE)
    d.say("{H} pensó que debía de sentirse muy {solo@N}.", "{H} se acordó de lo difícil que es llegar a un sitio nuevo.")
    d.par()
    d.say("Así que un día, [armándose de valor|sin pensarlo dos veces], {H} se acercó.",
          "Al día siguiente, {H} decidió acercarse.")
    d.line(*APPROACH)
    d.line("—Me llamo {N} —contestó en voz baja[, con una sonrisa tímida|].", "—Soy {N} —dijo, un poco {sorprendido@N}—. Gracias.")
    d.say("Al principio hablaban poco, pero enseguida descubrieron que a los dos les encantaban {shared}.",
          "Empezaron a charlar y resultó que a {N} también le encantaban {shared}.")
    d.line("—¡A mí también me encantan {shared}! —dijo {H}, [muy {sorprendido@H}|con los ojos muy abiertos].")
    d.par()
    d.say("Desde ese día, {H} y {N} [se sentaban juntos|jugaban juntos] todos los días.",
          "Aquella tarde jugaron hasta que se hizo de noche, y al despedirse prometieron verse al día siguiente.")
    d.say("Poco a poco, {N} conoció a los demás, y pronto todos querían jugar con {N.él}.",
          "Con el tiempo, {N} dejó de estar {solo@N}: tenía un montón de amigos.")
    d.say("{H} aprendió que una palabra amable puede cambiarle el día a alguien.",
          "Y todo empezó con un simple «hola».", "")
