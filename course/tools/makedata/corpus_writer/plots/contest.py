"""A contest: practice, a setback on the day, a kind choice, and a prize that was not the one expected."""

from __future__ import annotations

from .. import cast as cs
from ..draft import Draft
from ..grammar import Noun
from ..template import Thing
from .common import opening, set_hero

CONTESTS = {
    "carrera de sacos": dict(where="en la fiesta del pueblo", practice="saltaba dentro de un saco viejo por el pasillo de casa",
                             race="Dieron la salida y todos empezaron a saltar", setback="{F} tropezó y cayó al suelo justo a su lado"),
    "concurso de dibujo": dict(where="en la biblioteca", practice="dibujaba cada tarde un paisaje distinto",
                               race="Cada participante tenía una hora para pintar un dibujo sobre el mar", setback="a {F} se le volcó el vaso de agua encima del dibujo"),
    "concurso de castillos de arena": dict(where="en la playa", practice="practicó haciendo torres con el cubo y la pala",
                                           race="Cada uno tenía una hora para construir el castillo más bonito", setback="una ola grande llegó hasta el castillo de {F} y lo deshizo"),
    "carrera del colegio": dict(where="en el patio del colegio", practice="corría cada mañana alrededor del parque",
                                race="Sonó el silbato y todos salieron corriendo", setback="a {F} se le desató una zapatilla y se cayó"),
    "concurso de cometas": dict(where="en lo alto de la colina", practice="construyó una cometa con cañas y papel de colores",
                                race="A la señal, todas las cometas subieron al cielo", setback="la cuerda de la cometa de {F} se enredó en un arbusto"),
}


def contest(d: Draft, taken: set) -> None:
    h = set_hero(d, taken)
    name = d.choice(sorted(CONTESTS))
    c = CONTESTS[name]
    gender = "f" if name.startswith("carrera") else "m"
    d.cast.update(C=Thing(Noun(name, gender)), where=c["where"], practice=c["practice"], race=c["race"], setback=c["setback"],
                  F=cs.friend(d.rng, taken, h), when=d.when())
    if h.is_kid:
        d.cast["X"] = cs.adult(d.rng, roles=("maestra", "maestro", "vecina", "vecino"))[0]
    else:
        d.cast["X"] = cs.helper_for(d.rng, "wise", taken, h)[0]
    opening(d, h)
    d.par()
    d.say("Un día se enteró de que iba a haber {C.un} {where}.",
          "{when}, {F.amigo} le contó que pronto habría {C.un} {where}, y {H} decidió participar.")
    d.say("Durante dos semanas, {H} {practice}.", "Para prepararse, {H} {practice}.")
    d.line("—Esta vez voy a ganar —le dijo {H} a {F}[, muy {convencido@H}|].", "—Quiero ganar ese premio —pensó {H} cada noche antes de dormir.")
    d.par()
    d.say("Por fin llegó el gran día. Había muchos participantes, y {H} estaba muy {nervioso@H}.",
          "El día del concurso, {H} se levantó muy temprano, con un nudo en el estómago.")
    d.say("{race}. {H} iba muy bien, [casi en cabeza|mejor que nunca].")
    d.say("Pero entonces {setback}.")
    d.say("{H} dudó un momento. Si se paraba, ya no podría ganar.", "{H} miró hacia la meta, y luego miró a {F}.")
    d.say("Pero no lo pensó más: se detuvo y ayudó a {F}.", "Entonces se paró para ayudar a {F}, aunque eso significaba perder.")
    d.line("—¿Estás bien? Vamos, yo te ayudo —le dijo.", "—Tranquil{o|a@F}. Lo terminamos juntos —dijo {H}.")
    d.say("Llegaron los últimos, [juntos y riendo|de la mano], mientras todos aplaudían.",
          "Cuando por fin terminaron, otros ya habían acabado hacía rato.")
    d.par()
    d.cast["Xi"] = d.cast["X"].form("intro") if d.cast["X"].name else d.cast["X"].form("")
    d.say("Al repartir los premios, {Xi}, que organizaba el concurso, subió a la tarima.",
          "Al final, {Xi}, que era quien organizaba el concurso, pidió silencio.")
    d.line("—Este año hay un premio especial —anunció {X}—: el premio al compañerismo. Y es para {H}.",
           "—Hoy hemos visto algo más importante que ganar —dijo {X}—. Por eso damos un premio especial a {H}.")
    d.say("Todos aplaudieron, y {F} aplaudió más fuerte que nadie.")
    d.say("{H} no ganó {C}, pero volvió a casa con una medalla y con {un|una@F} {amigo@F} para siempre.",
          "Aquel día {H} descubrió que hay cosas más importantes que ganar.", "")
