"""A toy gets stuck up high; every attempt to reach it fails until someone tall, agile or winged helps."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft
from .common import in_order, opening, set_hero, thanks

WHERE = ("en la rama más alta de un árbol", "en lo alto de un pino", "en el tejado de una caseta",
         "en la copa de un árbol muy alto", "entre las ramas de un castaño", "en lo alto de una farola")
ATTEMPTS = (
    "saltó [con todas sus fuerzas|muy alto], pero no llegaba",
    "se subió a [un banco|una piedra|una caja de madera] y estiró los brazos, pero [le faltaba mucho|tampoco llegaba]",
    "[lanzó|tiró] una piña hacia arriba para hacer{O.lo} caer, pero la piña [rebotó en una rama|no llegó tan alto]",
    "[intentó|probó a] sacudir el tronco, pero era demasiado [grueso|fuerte] y no se movió ni una hoja",
    "buscó un palo largo, pero [era demasiado corto|se rompió al primer intento]",
    "[pidió|pidió a gritos] al viento que {O.lo} soltara, pero el viento [no le hizo caso|siguió soplando igual]",
)
HELP = {
    "jirafa": "{X} estiró [su largo cuello|el cuello todo lo que pudo] y, con mucho cuidado, cogió {O} con la boca y se {O.lo} dio {H.cd}.",
    "elefante": "{X} levantó la trompa, [la estiró|la alargó] hasta arriba y bajó {O} [sin ningún esfuerzo|en un momento].",
    "caballo": "{X} se acercó al árbol, se puso de pie sobre las patas de atrás y alcanzó {O} [con el hocico|sin esfuerzo].",
    "climb": ("{X} trepó por el tronco [en un momento|muy deprisa], [saltó de rama en rama|llegó hasta arriba] y soltó {O} con cuidado.",
              "[En un abrir y cerrar de ojos|Muy deprisa], {X} subió hasta arriba, soltó {O} y {O.lo} dejó caer [suavemente|despacio] sobre la hierba."),
    "fly": ("{X} abrió las alas, voló hasta arriba y empujó {O} con el pico hasta que {cayó|cayeron#O} [sobre la hierba|al suelo].",
            "{X} [subió volando|voló] hasta arriba y, con mucha paciencia, soltó {O}, que {cayó|cayeron#O} despacio hasta el suelo."),
    "adult": ("{X} trajo una escalera [de la caseta|del garaje|de casa], se subió con cuidado y bajó {O}.",
              "{X} cogió [una escoba|un rastrillo largo] y, estirando los brazos, [empujó|movió] {O} hasta que {cayó|cayeron#O} al suelo.",
              "{X} [sacó|trajo] una escalera, la apoyó en el tronco y, [peldaño a peldaño|con paciencia], subió hasta {O}."),
}


def stuck_high(d: Draft, taken: set) -> None:
    h = set_hero(d, taken)
    o = cs.pick_thing(d.rng, "high")
    places = ("parque", "jardín", "bosque", "patio", "plaza") if h.is_kid else ("bosque", "jardín", "parque", "montaña", "río")
    d.cast.update(O=o, P=lx.PLACES[d.choice(places)], T=d.when(), where=d.choice(WHERE), F=cs.friend(d.rng, taken, h))
    if "flies" in o.tags:
        cause = d.render("[sopló|se levantó] una ráfaga de viento tan fuerte que se llevó {O} por los aires",
                         "el viento empezó a soplar con fuerza y arrastró {O} muy lejos")
    else:
        cause = d.render("{H} [lanzó|tiró] {O} tan fuerte que {voló|volaron#O} por encima de su cabeza",
                         "{F} dio una patada tan fuerte que {O} salió volando",
                         "{H} [lanzó|tiró] {O} hacia arriba con todas sus fuerzas")
    opening(d, h)
    d.par()
    d.say(
        "{T}, {H} y {F.amigo} fueron {P.a} a jugar con {O.un}[ que {H} acababa de estrenar| que {H} había recibido de regalo|].",
        "{T}, {H} salió a jugar {P.en} con {O.su}. {F.amigo} fue con {H.él}.",
    )
    d.say(
        "[Hacía un día precioso|El cielo estaba azul|Hacía un poco de viento] y [se lo estaban pasando muy bien|jugaron un buen rato].",
        "[Al principio todo iba muy bien.|Durante un rato se divirtieron mucho.]",
    )
    d.say("[De pronto|De repente|Pero entonces], " + cause + ".")
    d.say("{O} {se quedó|se quedaron#O} [{enganchado@O}|{atrapado@O}] {where}.")
    d.line(
        "—¡Oh, no! ¡{O.mi}! —gritó {H}.",
        "—¡{O.mi} se ha quedado ahí arriba! —[exclamó|dijo] {H}[, {preocupado@H}|].",
        "—¿Y ahora cómo {O.lo} bajamos? —[preguntó|dijo] {F}.",
    )
    d.par()
    in_order(d, [d.render(a) for a in d.sample(ATTEMPTS, 3)])
    d.say(
        "{H} se sentó [al pie del árbol|en el suelo], [muy {triste@H}|sin saber qué más hacer].",
        "[Estaba {cansado@H} y {triste@H}.|Ya no sabía qué más probar.]",
    )
    d.par()
    if h.is_kid and d.chance(0.5):
        d.cast["X"] = cs.adult(d.rng)[0]
        help_line = d.choice(HELP["adult"])
        d.say("[Entonces|En ese momento] [pasó por allí|apareció|llegó] {X}.")
    else:
        ability = d.choice(["tall", "climb", "fly"])
        helper, species = cs.helper_for(d.rng, ability, taken, h)
        d.cast["X"] = helper
        help_line = HELP[species] if ability == "tall" else d.choice(HELP[ability])
        d.say("[Entonces|En ese momento|Por suerte,] [pasó por allí|apareció|llegó] {X.intro}.",
              "[Entonces|Por suerte,] {X.intro} [se acercó|pasaba por allí].")
    d.line("—¿Qué os pasa? —preguntó {X}.", "—¿Por qué estáis tan tristes? —quiso saber {X}.")
    d.line(
        "—{O.mi} se ha quedado {where} y no llegamos —explicó {H}.",
        "—Mira allí arriba —dijo {H}[, señalando el árbol|]—. ¡{O.mi} no {baja|bajan#O}!",
    )
    d.line("—Eso tiene arreglo —dijo {X}[ con una sonrisa|].", "—[Esperad|Esperad un momento]. Yo os ayudo —dijo {X}.")
    d.say(help_line)
    thanks(d)
    d.par()
    d.say(
        "Desde entonces, {H} y {F} juegan con {O.su} [lejos de los árboles|en el prado, donde no hay ramas|con más cuidado].",
        "[Aquella tarde|Ese día] {H} aprendió que [no pasa nada por pedir ayuda|cada uno sabe hacer cosas distintas, y que juntos se llega más alto].",
        "Después, {X} se quedó a jugar con {H} y {F} [hasta que se hizo de noche|toda la tarde]. [Fue un día estupendo.|Y desde entonces son muy buenos amigos.]",
    )
