"""A day out with the family, a picnic, a storm that comes from nowhere, a shelter, and the way home."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft
from ..grammar import join_words
from .common import opening, set_hero

TRIPS = {
    "bosque": dict(go="fueron de excursión al bosque", walk="Caminaron por un sendero estrecho entre pinos muy altos",
                   shelter="una cueva pequeña al pie de una roca", shelter_how="se metieron en una cueva pequeña que había al pie de una roca"),
    "montaña": dict(go="subieron a la montaña", walk="Subieron despacio por un camino lleno de piedras, parando de vez en cuando para mirar el valle",
                    shelter="un refugio de piedra", shelter_how="corrieron hasta un refugio de piedra que habían visto al subir"),
    "playa": dict(go="pasaron el día en la playa", walk="Pasearon por la orilla buscando conchas y se bañaron entre las olas",
                  shelter="el chiringuito", shelter_how="recogieron las toallas a toda prisa y se refugiaron bajo el toldo de un chiringuito"),
    "río": dict(go="fueron de excursión al río", walk="Caminaron junto al agua y cruzaron un puente de madera que crujía a cada paso",
                shelter="un puente de piedra", shelter_how="se escondieron debajo de un puente de piedra, donde no llegaba la lluvia"),
    "granja": dict(go="visitaron la granja de unos amigos", walk="Dieron de comer a las gallinas, acariciaron a un burro y vieron cómo ordeñaban a una vaca",
                   shelter="el granero", shelter_how="corrieron al granero y se sentaron sobre la paja, entre las vacas"),
}
PICNIC = ("unos bocadillos de queso", "una tortilla de patatas", "unas manzanas", "unos plátanos", "una botella de agua",
          "unas galletas", "unos tomates", "un termo de chocolate", "unas fresas", "un poco de pan")


def outing(d: Draft, taken: set) -> None:
    h = set_hero(d, taken, kid_share=1.0)
    trip_name = d.choice(sorted(TRIPS))
    trip = TRIPS[trip_name]
    place = lx.PLACES[trip_name]
    family = d.sample(("abuela", "abuelo", "madre", "padre", "tía", "tío"), 2)
    a, _ = cs.adult(d.rng, family[0])
    b, _ = cs.adult(d.rng, family[1])
    food = d.sample(PICNIC, 3)
    sights = d.sample(place.sights, 2)
    d.cast.update(A=a, B=b, go=trip["go"], walk=trip["walk"], shelter_how=trip["shelter_how"], shelter=trip["shelter"],
                  food=join_words(food), s1=sights[0], s2=sights[1], when=d.when(), P=place,
                  season=d.choice(("verano", "primavera", "otoño")))
    opening(d, h)
    d.par()
    d.say("{when}, {H}, {A.su} y {B.su} {go}.", "{when}, toda la familia {go}: {H}, {A.su} y {B.su}.")
    d.say("En la mochila llevaban {food}[ para comer allí|, y {H} no dejaba de pensar en la comida].",
          "{A.su} había preparado {food}[, y lo habían guardado todo en una cesta|].")
    d.say("{walk}.")
    d.say("[Por el camino vieron {s1} y {s2}.|{H} se quedó {maravillado@H} mirando {s1}.|Lo que más le gustó a {H} fue ver {s1}.]")
    d.par()
    d.say("A mediodía se sentaron [a la sombra de un árbol|sobre una manta|en una piedra plana] y comieron [con mucho apetito|hasta no poder más].",
          "Cuando llegó la hora de comer, extendieron una manta y lo sacaron todo. ¡Qué hambre tenían!")
    d.par()
    d.say("Pero, [de pronto|de repente|al poco rato], el cielo se puso [gris|oscuro|negro] y empezó a soplar un viento frío.",
          "Sin embargo, [al poco rato|después de comer], unas nubes negras taparon el sol.")
    d.line("—Se acerca una tormenta —dijo {B}, mirando al cielo—. Hay que buscar un sitio donde refugiarse.",
           "—Eso son nubes de tormenta —dijo {A}—. ¡Rápido, recoged las cosas!")
    d.say("[Justo a tiempo|Enseguida], {shelter_how}. [Un segundo después|Al momento] empezó a llover con fuerza.",
          "Empezaron a caer gotas enormes. {shelter_how}, y desde allí vieron cómo la lluvia lo empapaba todo.")
    d.say("[Sonó un trueno y {H} se tapó los oídos.|Se oían los truenos a lo lejos.|El agua caía como si alguien la echara con un cubo.]")
    d.line("—¿Y ahora qué hacemos? —preguntó {H}.", "—¿Cuánto va a durar? —preguntó {H}, un poco {preocupado@H}.")
    d.line("—Esperar —contestó {A}—. Las tormentas de {season} son fuertes, pero pasan pronto. Mientras tanto, ¿os cuento un cuento?",
           "—Lo mejor es quedarse aquí, [a salvo|al seco] —dijo {B}—. ¿Jugamos a las adivinanzas mientras tanto?")
    d.say("[Y así pasaron el rato|Se turnaron para contar historias y adivinanzas], [riendo|muy juntos] mientras fuera llovía.",
          "{H} propuso jugar a veo veo, y estuvieron jugando hasta que se cansaron.")
    d.par()
    d.say("Al cabo de [media hora|un rato], la lluvia paró y salió el sol. En el cielo apareció un arcoíris enorme.",
          "Poco a poco, la tormenta se alejó. Las nubes se abrieron y el sol lo hizo brillar todo.")
    d.line("—¡Mirad! ¡Un arcoíris! —gritó {H}[, señalando el cielo|].", "—¡Qué bonito huele el campo después de llover! —dijo {H}.")
    d.say("Volvieron a casa [cansados y mojados|con los zapatos llenos de barro], pero [muy contentos|felices].",
          "[De vuelta a casa|Por el camino de vuelta], {H} saltó en todos los charcos que encontró.")
    d.say("Aquella noche, {H} [le contó a todo el mundo|escribió en su diario] la aventura de la tormenta[ en {shelter}|].",
          "Fue la mejor excursión de su vida, y todo gracias a la tormenta.", "")
