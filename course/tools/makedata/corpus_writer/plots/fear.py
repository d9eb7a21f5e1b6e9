"""A fear (the dark, storms, water, the first day of school...), faced little by little with help."""

from __future__ import annotations

from .. import cast as cs
from ..draft import Draft
from ..lexicon import f
from ..template import Character
from .common import opening, set_hero

# Each fear: who can have it, the scene that brings it, what the helper explains, the small steps
# taken, and how it ends. Templates use H (hero) and X (helper).
FEARS = {
    "oscuridad": dict(
        kid=True, animal=True,
        intro=("Pero {H} tenía un problema: le daba mucho miedo la oscuridad.",
               "Sin embargo, había algo que {H} no soportaba: la oscuridad.",
               "Solo había una cosa que le asustaba de verdad: la noche, cuando todo se quedaba a oscuras."),
        scene=("Una noche, [cuando ya estaba en la cama|después de cenar], se apagó la luz y {H} empezó a oír ruidos extraños: [un crujido|un golpe suave|un silbido] [en la ventana|en el pasillo|en el tejado].",
               "Aquella noche hacía viento y, en cuanto se quedó a oscuras, {H} vio sombras que se movían en la pared."),
        cry=("—¡{X.voc}! ¡Tengo miedo! —llamó {H}[ en voz baja|, tapándose con la manta hasta la nariz].",
             "—¡{X.voc}, ven, por favor! ¡Hay algo en la oscuridad! —gritó {H}."),
        explain=("—Vamos a mirar juntos —dijo {X}[, y encendió una linterna|]—. Mira: ese ruido es el viento, que mueve las ramas del árbol contra la ventana.",
                 "—La oscuridad no cambia nada —explicó {X}—. Todo lo que hay en la habitación de día sigue ahí de noche: la silla, el armario, tus juguetes. Solo que no los ves.",
                 "—Las sombras son solo formas —dijo {X}—. Esa que parece un monstruo es tu abrigo colgado de la percha."),
        steps=("{X} le dio una linterna pequeña para que la tuviera junto a la almohada.",
               "Jugaron a adivinar qué era cada sombra: el abrigo, la lámpara, la silla.",
               "{H} apagó la linterna y contó hasta diez. No pasó nada. Luego contó hasta veinte.",
               "Dejaron la puerta un poco abierta, para que entrara un hilo de luz del pasillo."),
        end=("Poco a poco, {H} cerró los ojos y se durmió tranquilamente.",
             "Aquella noche {H} durmió de un tirón, con la linterna en la mano, aunque ya no la necesitaba.",
             "Desde entonces, cuando se apaga la luz, {H} se acuerda de las sombras y sonríe."),
    ),
    "tormenta": dict(
        kid=True, animal=True,
        intro=("Pero había algo que le asustaba muchísimo: las tormentas.",
               "Lo único que no le gustaba nada eran los truenos.",
               "Cuando había tormenta, {H} se escondía [debajo de la cama|en el rincón más oscuro] y no quería salir."),
        scene=("Una tarde de verano el cielo se puso negro, empezó a llover con fuerza y, de pronto, un trueno enorme hizo temblar los cristales.",
               "Aquella noche estalló una tormenta: caían rayos, sonaban truenos y la lluvia golpeaba las ventanas."),
        cry=("—¡{X.voc}! ¡No me gustan los truenos! —gritó {H}, [{asustado@H}|temblando].",
             "{H} corrió a buscar a {Xr} y se abrazó a {X.él} [sin decir nada|con los ojos cerrados]."),
        explain=("—El trueno es solo el ruido que hace el rayo —explicó {X}—. Primero se ve la luz y después llega el sonido, porque la luz es mucho más rápida.",
                 "—¿Sabes un truco? —dijo {X}—. Cuando veas un rayo, cuenta despacio hasta que suene el trueno. Cuanto más cuentes, más lejos está la tormenta.",
                 "—Aquí dentro estamos [a salvo|seguros] —dijo {X}—. La tormenta está fuera, y las nubes se irán [pronto|dentro de un rato]."),
        steps=("Vieron un rayo y contaron juntos: uno, dos, tres, cuatro. Entonces sonó el trueno.",
               "Con el siguiente rayo contaron hasta siete. ¡La tormenta se estaba alejando!",
               "{X} preparó un chocolate caliente y se sentaron junto a la ventana a ver la lluvia.",
               "Con cada trueno, {H} contaba un poco más tranquil{o|a@H}."),
        end=("Al final, la tormenta se fue y en el cielo apareció un arcoíris.",
             "Cuando por fin dejó de llover, {H} salió a saltar en los charcos, {feliz@H}.",
             "Desde aquel día, cuando hay tormenta, {H} cuenta los segundos y ya no tiene miedo."),
    ),
    "agua": dict(
        kid=True, animal=False,
        intro=("Pero a {H} le daba miedo meterse en el agua.",
               "Había algo que {H} no se atrevía a hacer: bañarse en el mar.",
               "Le encantaba la playa, pero solo para jugar en la arena: el agua le daba mucho miedo."),
        scene=("Aquel verano la familia fue a la playa. Todos se bañaban y reían, pero {H} se quedaba en la orilla, sin atreverse a entrar.",
               "Un día de verano, fueron a la piscina del pueblo. Los demás saltaban al agua, pero {H} se quedó sentad{o|a@H} en el borde."),
        cry=("—No quiero meterme —dijo {H} en voz baja—. ¿Y si me hundo?",
             "—A mí el agua no me gusta —dijo {H}, aunque en el fondo tenía muchas ganas de bañarse."),
        explain=("—No hace falta entrar de golpe —dijo {X}—. Vamos a ir poco a poco, y yo te daré la mano todo el rato.",
                 "—Tener miedo es normal —dijo {X}—. Lo importante es ir despacio. Primero los pies, luego las rodillas, y ya veremos.",
                 "—El agua ayuda a flotar —explicó {X}—. Si te quedas quiet{o|a@H} y respiras tranquil{o|a@H}, el agua te sostiene."),
        steps=("Primero se mojó los pies. El agua estaba fresca y le hacía cosquillas.",
               "Luego entró hasta las rodillas, sin soltar la mano {X.de}.",
               "{X} le enseñó a flotar boca arriba, mirando al cielo, mientras le sujetaba la espalda.",
               "Después aprendió a mover los pies como una rana, y avanzó un poquito."),
        end=("Al final de la tarde, {H} no quería salir del agua.",
             "Cuando volvieron a casa, {H} solo hablaba de una cosa: de lo bien que se flotaba en el agua.",
             "Aquel verano {H} aprendió a nadar, y ahora es quien más se baña de toda la familia."),
    ),
    "colegio": dict(
        kid=True, animal=False,
        intro=("Aquel año {H} iba a empezar en un colegio nuevo, y estaba muy {nervioso@H}.",
               "Al día siguiente empezaban las clases en un colegio nuevo, y {H} no había podido dormir de los nervios."),
        scene=("Por la mañana, delante de la puerta del colegio, {H} se agarró fuerte a la mano {X.de}. Había muchos niños y no conocía a ninguno.",
               "El primer día de clase, {H} llegó al patio y se quedó junto a la valla, {callado@H}, mirando cómo los demás jugaban."),
        cry=("—No quiero entrar —dijo {H}—. No conozco a nadie. ¿Y si nadie quiere jugar conmigo?",
             "—¿Y si me pierdo? ¿Y si la maestra es muy seria? —preguntó {H}, {preocupado@H}."),
        explain=("—El primer día todos están un poco nerviosos —dijo {X}—. Seguro que hay alguien que también busca un amigo.",
                 "—Haz una cosa —dijo {X}—: busca a alguien que esté solo y pregúntale cómo se llama. Así empiezan casi todas las amistades."),
        steps=("En clase, la maestra les pidió que dibujaran su animal favorito.",
               "{H} se sentó al lado de {F}, que también parecía {nervioso@F}, y le prestó sus lápices de colores.",
               "En el recreo, {F} invitó a {H} a jugar al escondite con otros niños.",
               "A la hora de comer ya sabía el nombre de cinco compañeros."),
        end=("Cuando {X} fue a buscarl{o|a@H} por la tarde, {H} salió corriendo y le contó todo lo que había hecho.",
             "Aquella noche {H} preparó la mochila sin que nadie se lo dijera. ¡Quería volver al colegio cuanto antes!",
             "Desde entonces, {H} y {F} son inseparables."),
    ),
    "volar": dict(
        kid=False, animal=True, species=("búho", "pato", "loro", "paloma", "cigüeña"),
        intro=("{H} ya era mayor para volar, pero le daba miedo soltarse de la rama.",
               "Todos los de su edad ya volaban, pero {H} prefería quedarse en el nido."),
        scene=("Una mañana, sus hermanos saltaron del nido uno tras otro y se fueron volando. {H} se quedó {solo@H}, mirando el suelo, que parecía muy lejos.",
               "Un día, el viento sopló tan fuerte que el árbol se movió, y {H} se agarró a la rama con todas sus fuerzas."),
        cry=("—¡Está muy alto! —dijo {H}—. ¿Y si me caigo?",
             "—Yo no sé volar —dijo {H}, con la voz temblorosa—. Seguro que me caigo."),
        explain=("—Todos tuvimos miedo la primera vez —dijo {X}—. Pero tus alas son fuertes. Empieza por volar hasta la rama de al lado.",
                 "—Mira cómo lo hago yo —dijo {X}—: abre bien las alas, mueve las plumas despacio y deja que el viento te ayude."),
        steps=("Primero, {H} saltó a la rama de al lado, moviendo las alas con fuerza. ¡Lo consiguió!",
               "Luego voló hasta otro árbol, un poco más lejos.",
               "Después bajó planeando hasta el prado y volvió a subir."),
        end=("Al atardecer, {H} daba vueltas por el cielo y no quería bajar.",
             "Desde aquel día, {H} es quien más alto vuela de todo el bosque."),
    ),
}


def fear(d: Draft, taken: set) -> None:
    name = d.choice(sorted(FEARS))
    spec = FEARS[name]
    if spec["kid"] and spec["animal"]:
        share = 0.6
    else:
        share = 1.0 if spec["kid"] else 0.0
    h = set_hero(d, taken, kid_share=share, species=spec.get("species"))
    if h.is_kid:
        d.cast["X"] = cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre", "tía", "tío"))[0]
    elif name == "volar":
        d.cast["X"] = Character(None, f("madre", animate=True), address="mamá")
    else:
        d.cast["X"] = cs.helper_for(d.rng, "wise", taken, h)[0]
    d.cast["F"] = cs.friend(d.rng, taken, h)
    d.cast["Xr"] = d.cast["X"].form("su") if d.cast["X"].name is None else d.cast["X"].form("")
    opening(d, h)
    d.say(*spec["intro"])
    if not h.is_kid and name != "volar":
        d.say("Por suerte, su [mejor {amigo@X}|{vecino@X}] era {X.intro}, que era muy {sabio@X}.",
              "Por suerte, cerca de allí vivía {X.intro}, que era muy {sabio@X} y siempre tenía un buen consejo.")
    d.par()
    d.say(*spec["scene"])
    d.line(*spec["cry"])
    d.line(*spec["explain"])
    d.par()
    steps = list(spec["steps"])
    keep = d.rng.randint(2, len(steps))
    for step in steps[:keep]:
        d.say(step)
    d.par()
    d.say(*spec["end"])
    d.say(
        "[Y|Así] {H} aprendió que el miedo se hace más pequeño cuando uno lo mira de frente[, poco a poco| y con alguien al lado].",
        "{H} se sintió muy {orgulloso@H} de sí mism{o|a@H}.",
        "",
    )
