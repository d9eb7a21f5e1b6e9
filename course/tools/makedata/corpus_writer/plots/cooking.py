"""Cooking something for someone: the occasion, the ingredients, one missing, the steps in order, a mishap."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft
from ..grammar import PL, SG, join_words
from ..template import Thing
from .common import opening, set_hero

OCCASIONS = (
    ("el cumpleaños de {Z.su}", "para darle una sorpresa"),
    ("la visita de {Z.su}, que venía a comer el domingo", "para recibirl{o|a@Z} como se merecía"),
    ("la fiesta del barrio", "para compartirl{o|a|os|as@D} con los vecinos"),
    ("el día en que {Z.su} volvía de un largo viaje", "para darle la bienvenida"),
)
MISHAPS = (
    ("al abrir el paquete de harina, se le escapó de las manos y la cocina se llenó de una nube blanca",
     "Se rieron tanto que les dolía la tripa, y después lo limpiaron todo entre los dos."),
    ("un huevo se le cayó al suelo y se rompió",
     "—No pasa nada —dijo {X}—. Para eso tenemos más. Y lo recogieron con un trapo."),
    ("se le olvidó lavarse las manos antes de empezar",
     "{X} se lo recordó con una sonrisa, y {H} fue corriendo al grifo."),
    ("echó demasiada sal y tuvo que empezar esa parte otra vez",
     "—Así se aprende —dijo {X}—. La próxima vez, mejor probar antes de echar más."),
    ("se manchó la camiseta de arriba abajo",
     "{X} le puso un delantal y siguieron cocinando como si nada."),
)


def cooking(d: Draft, taken: set) -> None:
    h = set_hero(d, taken, kid_share=1.0)
    dish_name = d.choice(sorted(lx.RECIPES))
    noun, ingredients, steps = lx.RECIPES[dish_name]
    dish = Thing(noun, PL if dish_name == "galletas" else SG)
    helper, _ = cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre", "tía", "tío"))
    for_whom, _ = cs.adult(d.rng, roles=tuple(r for r in ("abuela", "abuelo", "tía", "tío", "madre", "padre")
                                              if lx.ADULTS[r][0] != helper.noun))
    occasion, purpose = d.choice(OCCASIONS)
    missing = d.choice([i for i in ingredients if i not in ("sal", "agua", "aceite")])
    missing = missing.split(" ", 1)[1] if missing.split(" ", 1)[0] in ("un", "una", "unos", "unas") else missing
    shop = "la frutería" if any(missing.endswith(x) for x in ("fresas", "plátano", "manzana", "naranja", "lechuga", "tomates", "pepino", "zanahorias", "patata", "patatas", "cebolla")) \
        else "la tienda de la esquina"
    d.cast.update(D=dish, X=helper, Z=for_whom, occasion=occasion, purpose=purpose, missing=missing, shop=shop,
                  ingredients=join_words(list(ingredients)), T=d.when())
    mishap, fix = d.choice(MISHAPS)
    opening(d, h)
    d.par()
    d.say(
        "Se acercaba {occasion}, y {H} quería preparar {D.un} {purpose}.",
        "{T}, {H} tuvo una idea: para {occasion} [prepararía|iba a preparar] {D.un}[ con sus propias manos|].",
    )
    d.say("Le pidió ayuda a {X.su}, que [sabía cocinar muy bien|tenía una receta apuntada en un cuaderno viejo].",
          "{X.su} le prometió que le ayudaría[, pero solo un poco: el trabajo lo haría {H}|].")
    d.line("—¿Qué necesitamos? —preguntó {H}.", "—¿Por dónde empezamos? —preguntó {H}, [{emocionado@H}|atándose un delantal].")
    d.line("—Para {D.un} hacen falta {ingredients} —[dijo|contestó] {X}.",
           "—Apunta: {ingredients} —dijo {X}[, mientras abría los armarios|].")
    d.par()
    d.say(
        "Buscaron todo en la cocina, pero faltaba [algo|una cosa]: ¡no había {missing}!",
        "Lo pusieron todo sobre la mesa. Entonces {H} se dio cuenta de que no tenían {missing}.",
    )
    d.say("{H} fue corriendo a {shop}[, que estaba muy cerca,|, con el dinero en el bolsillo,] y volvió [enseguida|en un momento] con {missing}.",
          "Así que {H} y {X} fueron juntos a {shop} a comprar {missing}.")
    d.par()
    d.say("[Después se lavaron las manos y empezaron.|Con todo listo, se pusieron manos a la obra.]")
    order = ("Primero", "Después", "Luego", "A continuación", "Más tarde", "Por último")
    n = len(steps)
    for i, step in enumerate(steps):
        lead = order[0] if i == 0 else order[-1] if i == n - 1 else order[1 + (i - 1) % 4]
        d.say(f"{lead}, {{H}} se puso a {step}.", f"{lead}, los dos se pusieron a {step}.",
              f"{lead} había que {step}.", f"{lead} tocaba {step}.")
        if i == 1:
            d.say("[Pero entonces|En ese momento|De repente], " + mishap + ".")
            if fix.startswith("—"):
                d.line(fix)
            else:
                d.say(fix)
    d.par()
    d.say(
        "Cuando terminaron, {D} {tenía|tenían#D} un aspecto [estupendo|buenísimo] y {olía|olían#D} [de maravilla|muy bien].",
        "Al final, {D} {quedó|quedaron#D} {precioso@D}, aunque un poco {torcido@D}.",
    )
    d.say("[Cuando llegó el momento|Aquel día], {Z.su} probó {D} y [sonrió|cerró los ojos de gusto].",
          "[Cuando {Z.su} {lo|la|los|las@D} probó, se puso tan {contento@Z} que casi lloró.|{Z.su} no se lo podía creer.]")
    d.line("—¡{Está|Están#D} {riquísimo@D}! ¿De verdad {lo|la|los|las@D} has hecho tú? —preguntó {Z}.",
           "—¡Qué rico! —dijo {Z}—. {Es|Son#D} {el|la|los|las@D} {mejor|mejores#D} {D.n} que he probado nunca.")
    d.line("—Sí, pero {X} me ha ayudado un poco —contestó {H}, muy {orgulloso@H}.",
           "—¡{Lo|La|Los|Las@D} he hecho yo {solo@H}! Bueno, casi —dijo {H}, y todos se rieron.")
    d.say("[Y así|Así fue como] {H} descubrió que [cocinar para los demás es una forma de decir «te quiero»|lo más rico de una receta es compartirla].", "")
