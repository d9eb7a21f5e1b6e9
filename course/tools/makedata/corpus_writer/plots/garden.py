"""Planting a seed: waiting, caring, a setback, and the harvest shared with others."""

from __future__ import annotations

from .. import cast as cs
from ..draft import Draft
from .common import opening, set_hero

SEEDS = {
    "girasol": dict(seed="unas semillas de girasol", grows="un girasol enorme, más alto que {H}",
                    result="La flor amarilla giraba cada día siguiendo al sol", share="guardó las semillas de la flor para el año siguiente y regaló unas cuantas a sus vecinos"),
    "tomate": dict(seed="unas semillas de tomate", grows="una tomatera llena de tomates rojos y brillantes",
                   result="Los tomates olían a verano", share="preparó una ensalada para toda la familia con los tomates"),
    "calabaza": dict(seed="unas pepitas de calabaza", grows="una calabaza tan grande que hicieron falta dos personas para levantarla",
                     result="La calabaza era naranja y redonda como una luna", share="hicieron una crema de calabaza para todos los vecinos"),
    "fresa": dict(seed="unas semillas de fresa", grows="una mata llena de fresas rojas y dulces",
                  result="Las fresas eran pequeñas, pero muy dulces", share="las compartió con sus amigos a la hora de la merienda"),
    "judía": dict(seed="unas judías secas", grows="una planta de judías que trepaba por un palo más alto que la puerta",
                  result="Las vainas colgaban verdes y largas", share="llevó un cesto de judías verdes a casa de su abuela"),
}
PROBLEMS = (
    ("unos caracoles se comieron las primeras hojas", "{X} le enseñó a poner cáscaras de huevo alrededor de la planta, porque a los caracoles no les gusta pasar por encima",
     "Al día siguiente no había ni un caracol"),
    ("hizo tanto calor que la tierra se secó y la planta se puso mustia", "{H} la regó al atardecer, cuando el sol ya no quemaba, y la puso a la sombra durante las horas de más calor",
     "Al día siguiente la planta volvía a estar derecha"),
    ("unos pájaros escarbaban en la tierra buscando las semillas", "{H} y {X} hicieron un espantapájaros con ropa vieja y un sombrero de paja",
     "Los pájaros no volvieron a acercarse"),
    ("llegó una noche de frío y escarcha", "{H} tapó la planta con un cubo al anochecer y la destapó por la mañana",
     "La planta aguantó el frío sin problemas"),
)


def garden(d: Draft, taken: set) -> None:
    h = set_hero(d, taken, kid_share=0.85, species=("conejo", "ratón", "erizo", "cerdo", "oso", "hormiga", "ardilla"))
    seed = SEEDS[d.choice(sorted(SEEDS))]
    problem, fix, after = d.choice(PROBLEMS)
    if h.is_kid:
        helper = cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre", "vecina", "vecino"))[0]
    else:
        helper = cs.helper_for(d.rng, "wise", taken, h)[0]
    d.cast.update(X=helper, seed=seed["seed"], grows=seed["grows"], result=seed["result"], share=seed["share"],
                  problem=problem, fix=fix, after=after, when=d.when())
    opening(d, h)
    d.par()
    d.say("{when}, {X} le regaló {seed}.", "{when}, {H} encontró {seed} en un cajón y se las enseñó a {X}.")
    if not h.is_kid:
        d.say("{X} era {X.un} muy {sabio@X} que sabía mucho de plantas.")
    d.line("—Si lo cuidas bien, crecerá algo muy bonito —dijo {X}.", "—Busca un sitio con sol, y riega la tierra cada día —le aconsejó {X}.")
    d.say("{H} hizo un agujero en la tierra, lo plantó todo y lo tapó con cuidado. Después lo regó con una regadera pequeña.",
          "{H} buscó un rincón soleado, removió la tierra con una pala pequeña y plantó {seed}.")
    d.par()
    d.say("Al día siguiente, {H} fue corriendo a mirar. No había nada.", "Cada mañana {H} miraba la tierra, pero no pasaba nada.")
    d.line("—¿Por qué no crece? —preguntó {H}, [{impaciente@H}|{desanimado@H}].", "—¡Ya ha pasado un día y no hay nada! —protestó {H}.")
    d.line("—Las plantas necesitan tiempo —sonrió {X}—. Debajo de la tierra están trabajando, aunque no las veas.",
           "—Paciencia —dijo {X}—. Una semilla tarda varios días en despertar.")
    d.say("Una semana después, asomó un brote verde y pequeño. {H} [dio saltos de alegría|no se lo podía creer].",
          "Por fin, una mañana, {H} vio dos hojas diminutas saliendo de la tierra.")
    d.par()
    d.say("Pero un día, {problem}.", "Sin embargo, una semana más tarde, {problem}.")
    d.line("—¡Mi planta! —gritó {H}[, muy {preocupado@H}|].")
    d.say("{fix}. {after}.")
    d.par()
    d.say("Pasaron las semanas, y la planta creció y creció hasta convertirse en {grows}.",
          "Con el agua, el sol y los cuidados {H.de}, la planta se convirtió poco a poco en {grows}.")
    d.say("{result}.")
    d.say("Al final, {H} {share}.", "Cuando llegó el momento, {H} {share}.")
    d.say("[Y así|Aquel verano] {H} aprendió que las cosas buenas crecen despacio, con paciencia y cuidado.",
          "Desde entonces, {H} tiene su propio rincón en el huerto, y cada año planta algo nuevo.", "")
