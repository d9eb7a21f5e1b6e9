"""Learning to do something hard: first tries, falls, advice, practice day after day, success."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft
from .common import opening, set_hero

# Each skill: the goal (infinitive), what goes wrong, the advice, the practice, the proof.
SKILLS = {
    "bicicleta": dict(
        goal="montar en bicicleta sin ayuda",
        fail=("Se subió, pedaleó dos veces y se cayó de lado.", "La bicicleta se torcía hacia un lado y {H} acababa en el suelo.",
              "Miraba los pedales en vez del camino, y se chocó contra un seto."),
        advice=("—Mira hacia delante, no a los pies —le dijo {X}—. Y pedalea sin miedo: cuanto más despacio vas, más fácil es caerse.",
                "—Yo te sujeto del sillín —dijo {X}—. Tú solo preocúpate de pedalear y mirar al frente."),
        practice=("practicó mientras {X} le sujetaba el sillín y corría a su lado", "practicó en la cuesta suave del parque",
                  "recorrió el camino de ida y vuelta tres veces seguidas"),
        proof="Sin darse cuenta, {X} le soltó el sillín, y {H} siguió pedaleando {solo@H} hasta el final del camino.",
    ),
    "nadar": dict(
        goal="nadar sin manguitos",
        fail=("En cuanto se quitó los manguitos, se hundió un poco y tragó agua.", "Movía los brazos muy deprisa, pero no avanzaba nada.",
              "Se ponía tan {nervioso@H} que se olvidaba de respirar."),
        advice=("—Primero hay que aprender a flotar —le explicó {X}—. Estira el cuerpo, respira despacio y deja que el agua te sostenga.",
                "—Mueve las piernas como unas tijeras y los brazos como si apartaras cortinas —dijo {X}."),
        practice=("practicó cómo flotar boca arriba", "aprendió a soplar burbujas con la cara dentro del agua",
                  "nadó de un lado a otro de la piscina pequeña {agarrado@H} a una tabla"),
        proof="{H} se soltó de la tabla y nadó hasta el borde de la piscina sin ayuda de nadie.",
    ),
    "silbar": dict(
        goal="silbar",
        fail=("Soplaba y soplaba, pero solo salía aire.", "Ponía los labios como una trompeta, pero no sonaba nada.",
              "Se le llenaba la boca de aire y acababa riéndose."),
        advice=("—Pon los labios redondos, como si fueras a decir «u» —le dijo {X}—, y sopla muy suave.",
                "—El secreto está en la lengua —explicó {X}—: ponla detrás de los dientes de abajo y sopla despacio."),
        practice=("practicó delante del espejo", "lo intentó mientras se lavaba los dientes", "sopló muy suave durante todo el camino al colegio"),
        proof="De pronto, sonó un silbido pequeño y claro. ¡{H} había silbado!",
    ),
    "cordones": dict(
        goal="atarse los cordones",
        fail=("Hacía un nudo, pero se le deshacía enseguida.", "Se le enredaban los cordones entre los dedos.",
              "El lazo le quedaba tan flojo que se soltaba al dar dos pasos."),
        advice=("—Haz dos orejas de conejo con los cordones —le enseñó {X}—, las cruzas y metes una por debajo de la otra.",
                "—Primero un nudo, luego un lazo, y después tira de los dos lados a la vez —le explicó {X}."),
        practice=("practicó con las zapatillas de toda la familia", "se ató y desató los zapatos diez veces seguidas",
                  "practicó con una cuerda atada a la pata de una silla"),
        proof="Por la mañana se ató las zapatillas {solo@H}, y el lazo aguantó todo el día.",
    ),
    "leer": dict(
        goal="leer un cuento {solo@H}",
        fail=("Se confundía con las letras que se parecían, como la be y la de.", "Leía tan despacio que, al final de la frase, ya había olvidado el principio.",
              "Las palabras largas le parecían montañas imposibles."),
        advice=("—Ve sílaba a sílaba —le dijo {X}—: primero una, luego la siguiente, y al final juntas la palabra entera.",
                "—Señala cada palabra con el dedo —le aconsejó {X}—. Así no te pierdes."),
        practice=("leyó los carteles de las tiendas por la calle", "leyó en voz alta la lista de la compra",
                  "leyó cada noche una página de su cuento favorito"),
        proof="Una noche abrió un cuento nuevo y se lo leyó entero a {X}, sin ayuda.",
    ),
    "voltereta": dict(
        goal="dar una voltereta",
        fail=("Se ponía de cabeza, pero se caía de lado.", "Le daba miedo tocar el suelo con la cabeza y se paraba a medias.",
              "Rodaba {torcido@H} y acababa fuera de la colchoneta."),
        advice=("—Mete la barbilla en el pecho, como si quisieras mirarte la tripa —le dijo {X}—, y empuja con las piernas.",
                "—Hazte una bola —le explicó {X}—: cuanto más redond{o|a@H}, mejor rodarás."),
        practice=("practicó sobre la hierba del jardín", "rodó por una cuesta muy suave", "practicó sobre una colchoneta"),
        proof="Se hizo una bola, empujó con las piernas y dio una voltereta perfecta.",
    ),
    "flauta": dict(
        goal="tocar una canción con la flauta",
        fail=("Soplaba tan fuerte que la flauta pitaba.", "Tapaba mal los agujeros y las notas salían raras.",
              "Se equivocaba siempre en la misma nota."),
        advice=("—Sopla como si quisieras mover la llama de una vela sin que se apague —le dijo {X}.",
                "—Tapa bien los agujeros con la yema de los dedos —le explicó {X}—, y toca despacio: ya irás más rápido."),
        practice=("tocó las notas una a una, muy despacio", "practicó la canción en su habitación", "tocó la canción para su gato, que escuchaba muy serio"),
        proof="En la fiesta del colegio, {H} tocó la canción entera sin equivocarse, y todos aplaudieron.",
    ),
}


def learning(d: Draft, taken: set) -> None:
    h = set_hero(d, taken, kid_share=1.0)
    skill = SKILLS[d.choice(sorted(SKILLS))]
    d.cast.update(X=cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre", "tía", "tío"))[0],
                  goal=skill["goal"], F=cs.friend(d.rng, taken, h), when=d.when())
    opening(d, h)
    d.say("[Pero|Sin embargo,] había algo que todavía no sabía hacer: {goal}.",
          "{H} tenía un deseo: aprender a {goal}.", "Todos sus amigos sabían {goal}, pero {H} todavía no.")
    d.par()
    d.say("{when}, {H} decidió que [ya era hora de aprender|lo iba a intentar].",
          "{when}, {F.amigo} le preguntó: «¿Todavía no sabes {goal}?». Y {H} decidió aprender [de una vez|cuanto antes].")
    fails = d.sample(skill["fail"], 2)
    d.say("La primera vez no salió bien. " + fails[0], "Lo intentó, pero no era tan fácil como parecía. " + fails[0])
    d.say("Lo volvió a intentar. " + fails[1], "La segunda vez tampoco. " + fails[1])
    d.line("—¡No me sale! —dijo {H}[, muy {enfadado@H}|, con ganas de llorar|]—. ¡Nunca voy a aprender!",
           "—Es imposible —[suspiró|protestó] {H}—. Yo no sirvo para esto.")
    d.line("—Nadie aprende a la primera —dijo {X}[, sentándose a su lado|]—. Vamos a intentarlo juntos.",
           "—Claro que vas a aprender —dijo {X}—. Solo necesitas practicar un poco cada día.")
    d.line(*skill["advice"])
    d.par()
    days = d.sample(lx.DAYS[:5], 3)
    days.sort(key=lx.DAYS.index)
    practice = list(skill["practice"])
    d.rng.shuffle(practice)
    d.say(f"El {days[0]}, {{H}} {practice[0]}.")
    d.say(f"El {days[1]}, {practice[1]}.", f"El {days[1]} {practice[1]}, y ya le salía un poco mejor.")
    d.say(f"Y el {days[2]} {practice[2]}.", f"El {days[2]}, {practice[2]}.")
    d.say("[Algunas veces salía bien y otras no|Cada día le salía un poco mejor], pero {H} no se rindió.",
          "Hubo días buenos y días malos, pero {H} siguió practicando.")
    d.par()
    d.say("Por fin, el sábado, [llegó el momento|lo intentó otra vez].", "El fin de semana, {H} lo intentó de nuevo.")
    d.say(skill["proof"])
    d.line("—¡Lo he conseguido! ¡Lo he conseguido! —gritó {H}.", "—¡Mira, {X.voc}! ¡Ya sé {goal}! —gritó {H}[, muy {orgulloso@H}|].")
    d.line("—¡Muy bien! Sabía que podías —dijo {X}, y le dio un abrazo.", "—¿Ves? Practicar tiene premio —sonrió {X}.")
    d.say(
        "[Aquel día|Así] {H} aprendió que las cosas difíciles se vuelven fáciles [practicando un poco cada día|con paciencia].",
        "Desde entonces, cuando algo no le sale a la primera, {H} se acuerda de aquel día y vuelve a intentarlo.",
        "",
    )
