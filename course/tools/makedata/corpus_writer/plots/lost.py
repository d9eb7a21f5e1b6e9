"""Something precious is lost, searched for in vain, and found with help."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft
from ..template import Character
from .common import in_order, opening, set_hero, thanks

PLACES_KID = ("parque", "playa", "bosque", "jardín", "colegio", "casa", "plaza", "biblioteca", "patio", "río", "granja")
PLACES_ANIMAL = ("bosque", "jardín", "huerto", "río", "estanque", "montaña", "granja", "parque")
FOUND_INDOORS = ("cubierto de polvo", "escondido debajo de un cojín", "metido dentro de una zapatilla",
                 "tapado con un jersey", "olvidado en un rincón")
FOUND_OUTDOORS = ("medio enterrado en la tierra", "escondido entre unas hojas", "un poco mojado", "manchado de barro",
                  "escondido detrás de una piedra", "medio tapado por la hierba")
SEARCH_FAIL = ("pero allí solo había hojas secas", "pero no vio nada", "pero allí no había nada",
               "pero solo encontró una piña y dos piedras", "pero no tuvo suerte", "pero solo había polvo",
               "pero lo único que encontró fue un calcetín viejo", "pero no encontró más que una pluma")
SEARCH_FAIL_INDOORS = ("pero allí solo había polvo", "pero no vio nada", "pero solo encontró un calcetín viejo",
                       "pero solo encontró unas monedas y un botón", "pero no tuvo suerte", "pero allí no había nada")
FOUND_HOW = {
    "smell": ("{X} [olfateó|olió] el suelo [un buen rato|aquí y allá|con mucha atención], [dio unas vueltas|movió el hocico] "
              "y de pronto echó a correr y se paró {spot}.",
              "{X} acercó el hocico al suelo y siguió un rastro [que nadie más podía oler|invisible] hasta llegar {spot}."),
    "see": ("{X} [miró|observó] todo con sus ojos [grandes|atentos] y [enseguida|al cabo de un momento] vio algo que "
            "[brillaba|asomaba] {spot}.",
            "{X} [se subió a una rama|se puso en un sitio alto] para ver mejor, y desde allí vio algo {spot}."),
}


def _state(d: Draft, indoors: bool) -> str:
    lemma, _, rest = d.choice(FOUND_INDOORS if indoors else FOUND_OUTDOORS).partition(" ")
    return "{" + lemma + "@O} " + rest


def lost_thing(d: Draft, taken: set) -> None:
    h = set_hero(d, taken)
    place_name = d.choice(PLACES_KID if h.is_kid else PLACES_ANIMAL)
    place = lx.PLACES[place_name]
    at_home = place_name == "casa"
    o = cs.pick_thing(d.rng, "small")
    spots = d.sample(place.spots, 4)
    if h.is_kid:
        giver, _ = cs.adult(d.rng, roles=("abuela", "abuelo", "tía", "tío", "madre", "padre"))
        giver_text = giver.form("su")
    else:
        giver_text = "{F}"
    d.cast.update(O=o, P=place, T=d.when(), spot1=spots[0], spot2=spots[1], spot=spots[2], lo=o.form("lo"),
                  sight=d.choice(place.sights), giver=giver_text, F=cs.friend(d.rng, taken, h),
                  fail=d.choice(SEARCH_FAIL_INDOORS if at_home else SEARCH_FAIL),
                  ella="{él|ella|ellos|ellas@O}")
    opening(d, h)
    d.say(
        "{H} tenía {O.un} que le había regalado {giver}[ por su cumpleaños| hacía mucho tiempo|]. "
        "[{O.lo} llevaba a todas partes.|Nunca se separaba de {ella}.|Para {H.él} era un tesoro.]",
        "Su tesoro más querido era {O.un}[ que le había regalado {giver}|]. [{O.lo} cuidaba mucho.|Nunca se separaba de {ella}.]",
        "De todas sus cosas, la que más quería era {O.un}[ que le había regalado {giver}|].",
    )
    d.par()
    if at_home:
        d.say(
            "{T}, {F.amigo} fue a casa {H.de} a jugar. [Jugaron en el salón, en la cocina y hasta en el pasillo.|Jugaron al escondite por toda la casa.]",
            "{T}, [llovía tanto que|hacía tan mal tiempo que] {H} se quedó en casa jugando con {F.amigo}. [Recorrieron todas las habitaciones.|Construyeron una cabaña con las mantas del sofá.]",
        )
    else:
        d.say(
            "{T}, {H} fue {P.a}[ a jugar| a pasar la tarde] con {F.amigo}. [Llevaba {O.su} consigo, como siempre.|Como siempre, llevaba {O.su}.]",
            "{T}, {H} salió de casa y se fue {P.a} a jugar con {F.amigo}. [Por supuesto, llevaba {O.su}.|No olvidó llevar {O.su}.]",
        )
        d.say(
            "[Jugaron|Estuvieron jugando] mucho rato {P.en}, cerca de {sight}.",
            "Allí [lo pasaron muy bien|se divirtieron mucho] mirando {sight}[ y corriendo de un lado a otro|].",
            "{P.en} había {sight}, y {H} [jugó|estuvo jugando] [toda la tarde|un buen rato] [sin parar|sin darse cuenta del tiempo].",
        )
    d.par()
    d.say(
        "Cuando [llegó la hora de [volver a casa|cenar]|empezó a oscurecer|{F} se fue], {H} [se dio cuenta de que|notó que] ya no tenía {O.su}.",
        "[Al cabo de un rato|De repente|Más tarde], {H} [buscó|quiso coger] {O.su}, pero ya no {estaba|estaban#O} [allí|en su sitio].",
        "[Al terminar|Más tarde], {H} [metió la mano|miró] en su [bolsillo|mochila] y se quedó [{helado@H}|{quieto@H}]: ¡{O.su} no {estaba|estaban#O}!",
    )
    d.line(
        "—¡{O.mi}! [¿Dónde {está|están#O}?|¡No {está|están#O}!|¡{O.lo} he perdido!] —[gritó|exclamó|dijo] {H}.",
        "—¡Oh, no! ¡He perdido {O.mi}! —[gritó|exclamó|se lamentó] {H}.",
    )
    d.say(
        "{H} se puso muy {triste@H}[ y se le llenaron los ojos de lágrimas|. Tenía ganas de llorar|].",
        "[Estaba tan {triste@H} que no sabía qué hacer.|Se sentó en el suelo, {triste@H} y sin saber qué hacer.]",
    )
    d.par()
    in_order(d, [
        d.render("[buscó|miró] {spot1}, {fail}", "[se fue a buscar|buscó] {spot1}, {fail}"),
        d.render("[fue a mirar|buscó] {spot2}, pero [tampoco {estaba|estaban#O} allí|no {O.lo} encontró]",
                 "miró {spot2}[ con mucha atención|], pero nada"),
    ])
    d.say("[Buscó y buscó|Miró por todas partes|Dio vueltas y más vueltas] hasta que [se cansó|le dolieron los pies].", "")

    # Help: someone who makes the hero remember, a good nose, or good eyes. At home it is family.
    if at_home:
        how = d.choice(["think", "smell"])
        if how == "think":
            helper, _ = cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre"))
        else:
            helper = Character(d.choice(lx.PET_NAMES_M), lx.ANIMAL_BY_NAME["perro"].male)
    else:
        how = d.choice(["think", "smell", "see"])
        if how == "think":
            helper = cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre", "tía", "tío"))[0] if h.is_kid \
                else cs.helper_for(d.rng, "wise", taken, h)[0]
        else:
            helper = cs.helper_for(d.rng, how, taken, h)[0]
    d.cast["X"] = helper
    d.par()
    if helper.name is None:  # a member of the family
        d.say(
            "[Entonces|En ese momento] llegó {X.su}[, que venía a buscarl{o|a@H}|].",
            "Al poco rato apareció {X.su}[, que había oído los gritos|].",
        )
    elif at_home:
        d.say("Entonces {X}, el perro de la familia, [se acercó moviendo la cola|llegó corriendo].")
    else:
        d.say(
            "[Entonces|En ese momento] [apareció|pasó por allí|llegó] {X.intro}.",
            "[Entonces|Por suerte,] [apareció|llegó] {X.intro}[, que pasaba por allí|].",
        )
    if at_home and how == "smell":
        d.say("Parecía que quería ayudar.")
    else:
        d.line(
            "—¿Qué te pasa, {H.voc}? —preguntó {X}[ con voz suave|].",
            "—¿Por qué estás tan {triste@H}, {H.voc}? —[preguntó|quiso saber] {X}.",
        )
    d.line(
        "—He perdido {O.mi} —[contestó|respondió|dijo] {H}—. [{O.lo} he buscado por todas partes.|No {O.lo} encuentro por ningún lado.]",
        "—No encuentro {O.mi} —dijo {H}[, muy {triste@H}| entre sollozos]—. [Y {O.lo} he buscado por todas partes.|¡Es mi tesoro!]",
    )
    if how == "think":
        d.line(
            "—[Piensa un poco|Vamos a pensar con calma]. ¿Qué hiciste justo antes de perder{O.lo}? —preguntó {X}.",
            "—Cuando algo se pierde, hay que recordar el último sitio donde se tenía —dijo {X}—. ¿Dónde estuviste [jugando|{sentado@H}]?",
        )
        d.say(
            "{H} cerró los ojos y [recordó|pensó]. [Había estado jugando|Se había sentado un momento] {spot}.",
            "{H} [se quedó pensando|pensó un rato] y de pronto se acordó: ¡había estado {spot}!",
        )
        d.say("[Fueron juntos hasta allí|Volvieron juntos allí].", "{H} corrió hasta allí.")
    else:
        if not at_home:
            d.line("—[No te preocupes|{Tranquilo@H}]. Yo te ayudo —dijo {X}.", "—Yo te ayudo a buscar{O.lo} —dijo {X}.")
        else:
            d.say("{X} levantó el hocico, [olfateó|olió] el aire y se fue por el pasillo moviendo la cola.")
        d.say(*FOUND_HOW[how])
    d.cast["state"] = _state(d, at_home)
    d.say(
        "¡Allí {estaba|estaban#O} {O.su}, {state}!",
        "Y allí, {state}, {estaba|estaban#O} {O.su}.",
    )
    d.line(
        "—¡{O.mi}! —gritó {H}[, saltando de alegría| con una sonrisa enorme].",
        "—¡{está|están#O} aquí! —exclamó {H}[, muy {contento@H}|].",
    )
    if at_home and how == "smell":
        d.say("{H} le dio a {X} [una galleta|un abrazo enorme] y {X} movió la cola, muy {contento@X}.")
    else:
        thanks(d)
    d.par()
    d.say(
        "Desde aquel día, {H} [guardó siempre|cuidó mucho] {O.su}[ en un lugar seguro| y nunca más {O.lo} volvió a perder].",
        "Esa noche, {H} se durmió con {O.su} [al lado de la almohada|muy cerca]. [Estaba muy {feliz@H}.|Había sido un día largo, pero terminaba bien.]",
        "[Y|Así] {H} aprendió que, cuando algo se pierde, [lo mejor es buscar con calma|hay que buscar con calma y pedir ayuda].",
        "Aquel día {H} aprendió [dos cosas|algo importante]: que hay que cuidar las cosas que uno quiere, y que [los amigos|las personas que nos quieren] siempre ayudan.",
    )
