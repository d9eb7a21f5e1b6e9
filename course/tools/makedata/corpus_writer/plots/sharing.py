"""Two friends want the same thing, quarrel, feel bad, and find a way to share it."""

from __future__ import annotations

from .. import cast as cs
from ..draft import Draft
from ..grammar import MASC
from ..lexicon import f, m
from ..template import Thing
from .common import opening, set_hero

# What they both want, and the fair way out that suits it.
DISPUTES = (
    dict(thing=Thing(m("columpio")), where="en el parque", kid=True,
         want="subir al columpio", fight="—¡Me toca a mí! —gritó {H}.|—¡No, yo he llegado primero! —contestó {F}.",
         fix="turns"),
    dict(thing=Thing(f("bicicleta")), where="en la calle", kid=True,
         want="montar en la bicicleta nueva", fight="—¡Es mi turno! —dijo {H}.|—¡Pero si acabas de montar! —protestó {F}.",
         fix="turns"),
    dict(thing=Thing(f("galleta")), where="en la cocina", kid=True, animal=True,
         want="comer la última galleta", fight="—¡Es mía! —dijo {H}.|—¡No, la he visto yo antes! —respondió {F}.",
         fix="halves"),
    dict(thing=Thing(f("manzana")), where="debajo del manzano", kid=True, animal=True,
         want="coger la manzana más roja del árbol", fight="—¡La he cogido yo! —dijo {H}.|—¡Pero yo la vi primero! —dijo {F}.",
         fix="halves"),
    dict(thing=Thing(m("lápiz")), where="en clase", kid=True,
         want="usar el lápiz rojo para pintar", fight="—¡Lo necesito para mi dibujo! —dijo {H}.|—¡Y yo para el mío! —dijo {F}.",
         fix="together"),
    dict(thing=Thing(f("pelota")), where="en el patio", kid=True, animal=True,
         want="jugar con la pelota", fight="—¡Dámela! —gritó {H}.|—¡No, que es mi turno! —gritó {F}, y la apretó fuerte.",
         fix="together"),
    dict(thing=Thing(m("cuento")), where="en la biblioteca", kid=True,
         want="leer el cuento nuevo", fight="—¡Lo quiero leer yo! —dijo {H}.|—¡Yo lo cogí primero! —dijo {F}.",
         fix="together"),
    dict(thing=Thing(f("piedra brillante")), where="junto al río", kid=False, animal=True,
         want="tener la piedra brillante que habían encontrado", fight="—¡La encontré yo! —dijo {H}.|—¡Pero yo la saqué del agua! —dijo {F}.",
         fix="together"),
)
FIX = {
    "turns": ("—¿Y si os turnáis? —propuso {X}—. Uno cuenta hasta cincuenta mientras el otro juega, y luego cambiáis.",
              "Y así lo hicieron: primero {H}, después {F}, después otra vez {H}. Contando en voz alta, el tiempo pasaba volando.",
              "Al final descubrieron que esperar el turno no era tan difícil, y que animar al otro también era divertido."),
    "halves": ("—¿Por qué no la partís por la mitad? —dijo {X}—. Así cada uno tiene su parte.",
               "{X} la partió en dos trozos iguales, y cada uno se comió su mitad muy despacio, para que durara más.",
               "Descubrieron que media {T.n} compartida sabe mejor que una entera comida a solas."),
    "together": ("—¿Y si lo hacéis juntos? —propuso {X}—. A veces las cosas son más divertidas entre dos.",
                 "Así que empezaron a usarl{o|a@T} juntos, y enseguida se les ocurrió un juego nuevo que nunca habían probado.",
                 "Al final de la tarde, ninguno se acordaba de por qué habían discutido."),
}


def sharing(d: Draft, taken: set) -> None:
    h = set_hero(d, taken)
    options = [x for x in DISPUTES if (x.get("kid") if h.is_kid else x.get("animal"))]
    dispute = d.choice(options)
    friend = cs.friend(d.rng, taken, h)
    if h.is_kid:
        helper = cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre", "maestra", "maestro", "vecina", "vecino"))[0]
    else:
        helper = cs.helper_for(d.rng, "wise", taken, h)[0]
    d.cast.update(F=friend, X=helper, T=dispute["thing"], where=dispute["where"], want=dispute["want"], when=d.when())
    first, second = dispute["fight"].split("|")
    opening(d, h)
    d.say("Su mejor {amigo@F} era {F.intro}.", "Tenía {un|una@F} {amigo@F} que se llamaba {F}[, y lo hacían todo juntos|].",
          "{H} y {F} eran inseparables y siempre jugaban juntos.")
    d.par()
    d.say("{when}, [estaban|se encontraban] {where} cuando los dos quisieron {want} a la vez.",
          "{when}, {H} y {F} estaban {where}. [De pronto|Entonces] los dos quisieron {want} al mismo tiempo.")
    d.line(first)
    d.line(second)
    d.say(
        "[Empezaron a tirar cada uno hacia un lado|Discutieron y discutieron] hasta que [{F} se fue enfadad{o|a@F}|los dos se dieron la espalda].",
        "Se enfadaron tanto que [dejaron de hablarse|cada uno se fue a un rincón con los brazos cruzados].",
    )
    d.say("{H} se quedó {solo@H} y {enfadado@H}, pero al rato ya no estaba enfadad{o|a@H}: estaba {triste@H}.",
          "[Al poco rato|Enseguida], {H} empezó a sentirse mal. Sin {F}, nada era divertido.")
    d.par()
    if h.is_kid:
        d.say("Entonces llegó {X}[ y vio las dos caras largas|, que lo había visto todo].",
              "{X} se acercó[ despacio| sin hacer ruido] y se sentó entre los dos.")
    else:
        d.say("Entonces llegó {X.intro}[, que lo había visto todo|, que era muy {sabio@X}].",
              "[Por allí pasaba|En ese momento pasó por allí] {X.intro}, que era muy {sabio@X}.")
    d.line("—¿Qué os pasa? —preguntó {X}.", "—¿Por qué estáis tan serios? —quiso saber {X}.")
    d.line("—Los dos queremos {want} —explicó {H}[, mirando al suelo|].",
           "—Los dos queremos {want} —dijo {F}, sin mirar a {H}.")
    fix = FIX[dispute["fix"]]
    d.line(fix[0])
    d.say(fix[1])
    d.say(fix[2])
    d.par()
    d.say(
        "[Desde aquel día|Desde entonces], {H} y {F} [lo comparten todo|siempre buscan una manera de compartir].",
        "Aquel día {H} aprendió que compartir no es perder algo, sino ganar a alguien con quien disfrutarlo.",
        "Y {H} y {F} [se abrazaron y|] volvieron a reír juntos, como siempre.",
    )
