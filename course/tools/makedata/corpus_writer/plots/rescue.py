"""An animal in trouble is found, cared for, and brought back where it belongs."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft
from ..template import Character
from .common import opening, set_hero

# Each case: how the animal is found, what is done, how it ends. {A} is the animal in trouble.
CASES = {
    "pájaro": dict(
        animal=lx.m("pájaro", animate=True),
        find=("{when}, {H} encontró {A.un} en el suelo{where}. Tenía un ala [herida|doblada] y no podía volar.",
              "{when}, mientras paseaba{where}, {H} oyó un piar muy débil. Debajo de un arbusto había {A.un} con un ala herida."),
        care=("{H} lo cogió con mucho cuidado, lo metió en una caja de zapatos con un trapo suave y se lo llevó a casa.",
              "Con ayuda {X.de}, lo llevaron a la veterinaria, que le vendó el ala y les explicó cómo cuidarlo.",
              "Cada mañana {H} le daba agua con una cuchara pequeña y unas semillas. El pájaro comía un poco más cada día.",
              "Le pusieron de nombre {N}, y {H} le contaba cuentos para que no se aburriera."),
        end=("Al cabo de dos semanas, {N} movía el ala sin problemas. Un día de sol abrieron la caja en el jardín y {N} echó a volar.",
             "Cuando se curó, lo soltaron en el parque. {N} dio dos vueltas sobre la cabeza {H.de}, como si le diera las gracias, y se fue volando."),
        name="m",
    ),
    "perro": dict(
        animal=lx.m("perro", animate=True),
        find=("{when}, {H} vio {A.un}{where}. Estaba [mojado y temblando|muy sucio y tenía hambre] y miraba a todas partes.",
              "{when}, un perro se acercó a {H}{where}, moviendo la cola. Llevaba un collar, pero nadie lo acompañaba."),
        care=("{H} le dio un poco de agua y la mitad de su bocadillo, y el perro se lo comió en un segundo.",
              "En el collar había una chapa con un nombre: {N}. Pero no había ningún número de teléfono.",
              "Con {X.su}, {H} hizo unos carteles con un dibujo del perro y las palabras «¿Es tuyo este perro?».",
              "Pegaron los carteles en las farolas, en la panadería y en la puerta del colegio."),
        end=("Al día siguiente sonó el timbre. Era {O.un}, que lloraba de alegría: llevaba dos días buscando a {N}.",
             "Esa misma tarde llamó {O.un}. Cuando vio a su perro, {N} saltó a sus brazos y le lamió toda la cara."),
        name="m",
    ),
    "tortuga": dict(
        animal=lx.f("tortuga", animate=True),
        find=("{when}, {H} encontró {A.un} boca arriba junto al camino. Movía las patas en el aire, pero no podía darse la vuelta.",
              "{when}, {H} vio algo que se movía en el camino: era {A.un} que se había caído boca arriba y no podía levantarse."),
        care=("{H} la giró con mucho cuidado y la dejó sobre la hierba, a la sombra.",
              "La tortuga sacó la cabeza despacio y miró a {H} con sus ojos pequeños y negros.",
              "{H} le dio una hoja de lechuga, y la tortuga se la comió muy despacio, mordisco a mordisco."),
        end=("Después se fue caminando hacia el estanque, sin ninguna prisa.",
             "Desde entonces, {H} la saluda cada vez que pasa por allí, y la tortuga, muy despacio, parece que le devuelve el saludo."),
        name="f",
    ),
    "erizo": dict(
        animal=lx.m("erizo", animate=True),
        find=("{when}, {H} oyó un ruido entre las hojas{where}. Era {A.un} que se había quedado atrapado en una red de plástico.",
              "{when}, {H} encontró {A.un}{where} con las púas enredadas en un trozo de cuerda."),
        care=("{H} fue a buscar a {X.su}, que se puso unos guantes gruesos para no pincharse.",
              "Entre los dos cortaron la red con unas tijeras, poco a poco, sin hacerle daño.",
              "El erizo se hizo una bola, asustado, pero después asomó el hocico."),
        end=("Al final, el erizo se alejó despacio entre las hojas. {H} recogió la red para que no atrapara a ningún otro animal.",
             "Aquella noche, {H} dejó un plato con agua en el jardín. Por la mañana estaba vacío."),
        name="m",
    ),
}
OWNERS = (lx.f("señora", animate=True), lx.m("señor", animate=True), lx.f("niña", animate=True), lx.m("niño", animate=True))


def rescue(d: Draft, taken: set) -> None:
    h = set_hero(d, taken, kid_share=1.0)
    case_name = d.choice(sorted(CASES))
    case = CASES[case_name]
    d.cast["A"] = Character(None, case["animal"])
    place = d.choice(("parque", "jardín", "bosque", "plaza", "río"))
    d.cast.update(where=" " + lx.PLACES[place].form("en"), where_plain=lx.PLACES[place].form("en"), when=d.when(),
                  X=cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre", "tía", "tío"))[0],
                  N=d.choice(lx.PET_NAMES_M if case["name"] == "m" else lx.PET_NAMES_F))
    d.cast["O"] = Character(None, d.choice(OWNERS))
    opening(d, h)
    d.par()
    d.say(*case["find"])
    if case_name == "pájaro":
        d.line("—¡Pobre pájaro! —dijo {H}—. No te preocupes, yo te cuidaré.", "—Tranquilo, pequeño —susurró {H}—. Vamos a ayudarte.")
    elif case_name == "perro":
        d.line("—¿Te has perdido? —le preguntó {H}, y el perro ladró bajito, como si dijera que sí.")
    else:
        d.line("—¡Espera, que te ayudo! —dijo {H}.")
    d.par()
    steps = case["care"]
    for step in steps[: d.rng.randint(2, len(steps))]:
        d.say(step)
    d.par()
    d.say(*case["end"])
    d.say(
        "{H} se sintió [muy {feliz@H}|muy {orgulloso@H}]: había ayudado a alguien que lo necesitaba.",
        "[Aquel día|Así] {H} aprendió que [cuidar de los animales|ayudar a los que no pueden pedir ayuda] es una de las cosas más bonitas que se pueden hacer.",
        "",
    )
