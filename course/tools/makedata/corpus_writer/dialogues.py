"""Everyday dialogues: shopping with the sums done right, asking the way, the doctor, a phone call...

Each scene is a function that writes one dialogue into a :class:`Draft`: a sentence that sets the
scene, then lines that start with a dash, as in the hand-written ``dialogos_*`` files. What is
said follows the scene's facts: the shopkeeper adds up the prices that were asked for, the
directions repeated back are the directions given, the doctor's advice fits the complaint.
``write_dialogue(seed)`` is a pure function of the seed.
"""

from __future__ import annotations

import random

from . import cast as cs
from . import lexicon as lx
from .draft import Draft
from .grammar import FEM, MASC, PL, SG, capitalize, join_words, number_word, plural
from .template import Character, Thing

__all__ = ["SCENES", "write_dialogue"]


def _person(d: Draft, taken: set, *, kid: bool | None = None) -> Character:
    """A named child or grown-up for a dialogue."""
    gender = d.choice((FEM, MASC))
    if kid if kid is not None else d.chance(0.4):
        pool = [n for n in (lx.GIRLS if gender == FEM else lx.BOYS) if n not in taken]
        name = d.choice(pool)
        taken.add(name)
        return Character(name, lx.KID[gender])
    pool = [n for n in lx.ADULT_NAMES[gender] if n not in taken]
    name = d.choice(pool)
    taken.add(name)
    return Character(name, lx.f("mujer", animate=True) if gender == FEM else lx.m("hombre", animate=True))


# ---------------------------------------------------------------------------------------------
# At the greengrocer's: prices, quantities and the total, computed
# ---------------------------------------------------------------------------------------------
def _euros(n: int) -> str:
    return f"{number_word(n, MASC)} {'euro' if n == 1 else 'euros'}"


def _produce(food) -> str:
    """How a fruit or vegetable is bought by the kilo: ``manzanas``, but ``sandía`` (a mass noun)."""
    return food.noun.sg if food.noun.sg in ("sandía", "calabaza", "lechuga") else food.noun.form(PL)


def shopping(d: Draft, taken: set) -> None:
    buyer = _person(d, taken)
    seller_gender = d.choice((FEM, MASC))
    seller = Character(None, lx.f("frutera", animate=True) if seller_gender == FEM else lx.m("frutero", animate=True))
    produce = [x for x in lx.FOODS if x.kind in ("fruta", "hortaliza")]
    items = d.sample(produce, d.rng.randint(2, 3))
    kilos = [d.rng.randint(1, 3) for _ in items]
    total = sum(x.price * k for x, k in zip(items, kilos))
    paid = next(b for b in (5, 10, 20, 50) if b >= total)
    d.cast.update(B=buyer, S=seller, when=d.when())
    d.say("{when}, {B} fue al mercado a comprar fruta y verdura.",
          "Había mucha gente en el mercado. Cuando le tocó el turno, {B} se acercó al puesto de {S.el}.",
          "{B} entró en la frutería de su barrio[ con una lista en la mano| con una bolsa de tela].")
    d.line("—Buenos días. ¿Qué le pongo? —preguntó {S.el}.", "—Hola, buenos días. ¿Qué va a ser? —dijo {S.el}.")
    asked = [f"{number_word(k, MASC)} {'kilo' if k == 1 else 'kilos'} de {_produce(x)}" for x, k in zip(items, kilos)]
    d.line("—Quería " + join_words(asked) + ", por favor.", "—Me pone " + join_words(asked) + ", por favor.")
    first = items[0]
    d.cast["F"] = Thing(first.noun, PL)
    d.line("—Aquí tiene. Mire qué {F.n} tan {bueno@F}.", "—Aquí tiene. {Los|Las@F} de hoy son muy {bueno@F}.")
    d.line("—¿Cuánto es todo?", "—¿Qué le debo?", "—¿Cuánto le debo?")
    parts = [f"{_euros(x.price * k)} de {_produce(x)}" for x, k in zip(items, kilos)]
    d.line(f"—Son {_euros(total)}: " + join_words(parts) + ".", f"—Pues son {_euros(total)} en total.")
    if paid == total:
        d.line(f"—Tome, justo {_euros(total)}.")
    else:
        d.line(f"—Tome, {_euros(paid)}.", f"—Aquí tiene un billete de {number_word(paid, MASC)}.")
        d.line(f"—Y aquí tiene la vuelta: {_euros(paid - total)}. Muchas gracias.",
               f"—Le devuelvo {_euros(paid - total)}. ¡Que tenga un buen día!")
    d.line("—Gracias a usted. ¡Hasta mañana!", "—Muchas gracias. ¡Adiós!", "—Gracias. Hasta la próxima.")


# ---------------------------------------------------------------------------------------------
# Asking the way: the directions repeated back are the ones given
# ---------------------------------------------------------------------------------------------
LANDMARKS = ("la fuente", "la panadería", "la farmacia", "la iglesia", "el colegio", "el parque", "la plaza",
             "el mercado", "el quiosco", "la biblioteca", "el puente", "la estación")
DESTINATIONS = ("la oficina de correos", "el ayuntamiento", "la biblioteca", "el museo", "la estación de autobuses",
                "el centro de salud", "el polideportivo", "la calle del Olmo", "la plaza Mayor", "el mercado")
TURNS = ("gira a la izquierda", "gira a la derecha", "sigue todo recto", "cruza la calle", "sube la cuesta")
TURNS_USTED = {"gira a la izquierda": "gire a la izquierda", "gira a la derecha": "gire a la derecha",
               "sigue todo recto": "siga todo recto", "cruza la calle": "cruce la calle", "sube la cuesta": "suba la cuesta"}
SHORT = {"gira a la izquierda": "izquierda", "gira a la derecha": "derecha", "sigue todo recto": "recto",
         "cruza la calle": "cruzar", "sube la cuesta": "cuesta"}


def directions(d: Draft, taken: set) -> None:
    asker = _person(d, taken, kid=False)
    local = _person(d, taken, kid=False)
    goal = d.choice([x for x in DESTINATIONS])
    marks = d.sample([m for m in LANDMARKS if m != goal], 2)
    moves = d.sample(TURNS, 2)
    formal = d.chance(0.5)
    t = (lambda x: TURNS_USTED[x]) if formal else (lambda x: x)
    d.cast.update(A=asker, L=local, goal=goal)
    d.say("{A} llevaba un rato dando vueltas por el centro[ con el mapa en la mano|]. Al final se acercó a {L}, que [esperaba el autobús|paseaba con su perro|salía de una tienda].",
          "Era la primera vez que {A} visitaba aquel pueblo. En una esquina, paró a {L}[ y le preguntó con una sonrisa|].")
    d.line("—Perdone, ¿sabe cómo se llega a " + goal + "?" if formal else "—Perdona, ¿sabes cómo se llega a " + goal + "?")
    d.line("—Sí, claro. Está muy cerca." + (" ¿Ve" if formal else " ¿Ves") + f" {marks[0]}?",
           "—Claro que sí. Mire, es fácil." if formal else "—Claro. Mira, es fácil.")
    d.line(f"—Sí, allí al fondo.", f"—Sí, la veo." if marks[0].startswith("la") else "—Sí, lo veo.")
    steps = f"Vaya hasta {marks[0]} y allí {t(moves[0])}. Después, cuando llegue a {marks[1]}, {t(moves[1])}." if formal else \
        f"Ve hasta {marks[0]} y allí {t(moves[0])}. Después, cuando llegues a {marks[1]}, {t(moves[1])}."
    d.line("—Pues " + steps[0].lower() + steps[1:] + " " + ("Enseguida lo verá." if formal else "Enseguida lo verás."))
    recap = f"{marks[0]}, {SHORT[moves[0]]}; {marks[1]}, {SHORT[moves[1]]}"
    d.line(f"—A ver si lo he entendido: {recap}.", f"—Entonces: {recap}. ¿Es así?")
    d.line("—Eso es. " + ("¡Que le vaya bien!" if formal else "¡Que te vaya bien!"), "—Exacto. No tiene pérdida." if formal else "—Exacto. No tiene pérdida.")
    d.line("—Muchísimas gracias.", "—Muchas gracias, es usted muy amable." if formal else "—Muchas gracias, eres muy amable.")


# ---------------------------------------------------------------------------------------------
# At the doctor's: the advice fits the complaint
# ---------------------------------------------------------------------------------------------
AILMENTS = {
    "garganta": ("me duele mucho la garganta", "¿Le cuesta tragar?", "Sí, sobre todo por la mañana.",
                 "Tiene la garganta un poco inflamada. Beba líquidos templados, descanse la voz y tome miel con limón."),
    "fiebre": ("tengo fiebre desde ayer", "¿Cuánta fiebre ha tenido?", "Treinta y ocho grados y medio.",
               "Es un resfriado fuerte. Descanse, beba mucha agua y, si la fiebre no baja en tres días, vuelva a verme."),
    "tos": ("no paro de toser", "¿La tos es seca o con mocos?", "Es seca, y no me deja dormir.",
            "Le voy a recetar un jarabe para la tos. Tómelo por la noche y duerma con la cabeza un poco alta."),
    "tripa": ("me duele la tripa", "¿Qué comió ayer?", "Demasiados pasteles en una fiesta, creo.",
              "No es nada grave. Coma arroz blanco y beba agua a pequeños sorbos durante un par de días."),
    "tobillo": ("me torcí el tobillo jugando al fútbol", "¿Puede apoyar el pie?", "Un poco, pero me duele.",
                "Es un esguince leve. Ponga hielo veinte minutos varias veces al día y no haga deporte en una semana."),
    "oído": ("me duele mucho el oído derecho", "¿Se ha bañado en la piscina estos días?", "Sí, casi todas las tardes.",
             "Tiene una pequeña infección. Le pongo unas gotas, tres veces al día, y nada de piscina hasta que se cure."),
    "cabeza": ("llevo dos días con dolor de cabeza", "¿Duerme bien? ¿Pasa muchas horas delante de la pantalla?", "La verdad es que duermo poco y trabajo con el ordenador todo el día.",
               "Intente dormir ocho horas, descansar la vista cada hora y beber más agua. Si sigue igual, vuelva la semana que viene."),
    "picadura": ("me ha picado una abeja en el brazo", "¿Es alérgico a las picaduras?", "Que yo sepa, no.",
                 "Se ha hinchado un poco, pero es normal. Lave la zona con agua y jabón y ponga frío. En un par de días estará bien."),
    "sol": ("me quemé con el sol en la playa", "¿No se puso crema?", "Solo un poco, por la mañana.",
            "Póngase una crema hidratante, beba mucha agua y no tome el sol en unos días. Y la próxima vez, crema cada dos horas."),
    "alergia": ("no paro de estornudar y me lloran los ojos", "¿Le pasa sobre todo en primavera?", "Sí, cada año por estas fechas.",
                "Parece alergia al polen. Le voy a recetar unas pastillas y, los días de viento, mejor cierre las ventanas."),
}


def doctor(d: Draft, taken: set) -> None:
    patient = _person(d, taken, kid=False)
    doc_gender = d.choice((FEM, MASC))
    d.cast.update(P=patient, M=Character(None, lx.f("médica", animate=True) if doc_gender == FEM else lx.m("médico", animate=True)),
                  when=d.when())
    ailment = d.choice(sorted(AILMENTS))
    complaint, question, answer, advice = AILMENTS[ailment]
    d.say("{when}, {P} fue al centro de salud. Después de esperar un rato, oyó su nombre y entró en la consulta.",
          "La sala de espera estaba llena. Cuando llegó su turno, {P} entró en la consulta.")
    d.line("—Buenos días. Siéntese, por favor. ¿Qué le pasa?", "—Hola, buenos días. Cuénteme, ¿qué le ocurre?")
    d.line(f"—Verá, {complaint}.", f"—Pues {complaint}, y quería que me viera.")
    d.line(f"—Vamos a ver. {question}")
    d.line(f"—{answer}")
    if ailment == "tobillo":
        d.say("{M.el} le examinó el tobillo con cuidado, moviéndolo despacio.")
    else:
        d.say("{M.el} [le miró la garganta|le escuchó el pecho|le tomó la temperatura] con mucha atención.")
    d.line(f"—{advice}")
    d.line("—Muchas gracias. ¿Tengo que volver?", "—Gracias, así lo haré.")
    d.line("—Solo si no mejora. ¡Que se recupere pronto!", "—No hace falta, salvo que empeore. Cuídese.")


# ---------------------------------------------------------------------------------------------
# A phone call with the grandparents: news, the weather, a plan for a day
# ---------------------------------------------------------------------------------------------
NEWS = ("He sacado muy buena nota en el examen de matemáticas.", "Hoy hemos ido de excursión al museo.",
        "Ya sé montar en bicicleta sin ayuda.", "En el colegio estamos plantando un huerto.",
        "He leído un libro de piratas entero yo solo.", "Mi equipo ganó el partido del sábado.",
        "Estamos ensayando una obra de teatro.", "Se me ha caído un diente.", "He aprendido a nadar sin manguitos.",
        "La maestra ha leído mi cuento en voz alta.", "Hemos adoptado un gato que se llama Bigotes.",
        "Ya me sé las tablas de multiplicar.", "El sábado fuimos a ver las cigüeñas al campanario.",
        "He plantado unas semillas de girasol en una maceta.", "Mañana tengo excursión a la granja escuela.")
WEATHER = ("aquí está lloviendo sin parar", "aquí hace un sol precioso", "aquí hace muchísimo frío",
           "aquí hace un calor tremendo", "aquí hace mucho viento")


def phone_call(d: Draft, taken: set) -> None:
    kid = _person(d, taken, kid=True)
    grand, role = cs.adult(d.rng, roles=("abuela", "abuelo"))
    news = d.sample(NEWS, 2)
    w1, w2 = d.sample(WEATHER, 2)
    day = d.choice(lx.DAYS)
    d.cast.update(K=kid, G=grand)
    d.say("{K} llamó por teléfono a {G.su}[, que vivía en otra ciudad|, como todos los domingos].",
          "Sonó el teléfono. Era {G.su}, y {K} corrió a contestar.")
    d.exchange(("—¡Hola, {G.voc}! ¿Cómo estás?", "—Muy bien, cariño. ¿Y tú? ¿Qué me cuentas?"),
               ("—¿Diga? ¡{G.voc}! ¡Qué alegría!", "—¡Hola, mi vida! Aquí estamos, muy bien. ¿Qué tal la semana?"))
    d.line(f"—¡Tengo dos noticias! {news[0]} Y además, {news[1][0].lower() + news[1][1:]}",
           f"—Muy bien. {news[0]}")
    d.line("—¡Qué bien! Estoy muy {orgulloso@G} de ti.", "—¡Pero qué cosas me cuentas! Me alegro muchísimo.")
    d.line(f"—¿Y qué tiempo hace por ahí, {{G.voc}}? Es que {w1}.", f"—Oye, ¿allí qué tiempo hace? Porque {w1}.")
    d.line(f"—Pues {w2}. Ya ves, cada sitio es un mundo.", f"—Aquí no: {w2}.")
    d.line(f"—{{G.voc}}, ¿cuándo vienes a vernos?", "—¿Cuándo nos vemos?")
    d.line(f"—El {day} que viene, si todo va bien. Y te llevaré una sorpresa.",
           f"—Iré el próximo {day}. ¿Preparamos juntos un bizcocho?")
    d.line(f"—¡Sí! ¡Hasta el {day}, {{G.voc}}! Un beso muy grande.", "—¡Vale! Te quiero mucho. ¡Adiós!")


# ---------------------------------------------------------------------------------------------
# Planning the weekend: the plan suits the forecast
# ---------------------------------------------------------------------------------------------
PLANS = {
    "sol": ("ir a la playa", "montar en bicicleta por el río", "merendar en el parque", "subir al monte"),
    "lluvia": ("ir al cine", "visitar el museo", "jugar a juegos de mesa en casa", "ir a la biblioteca"),
}
FORECAST = {"sol": ("va a hacer sol todo el fin de semana", "dicen que hará buen tiempo"),
            "lluvia": ("va a llover el sábado y el domingo", "dicen que habrá tormentas")}


def weekend(d: Draft, taken: set) -> None:
    a = _person(d, taken)
    b = _person(d, taken)
    weather = d.choice(("sol", "lluvia"))
    other = "lluvia" if weather == "sol" else "sol"
    good = d.sample(PLANS[weather], 2)
    bad = d.choice(PLANS[other])
    d.cast.update(A=a, B=b)
    d.say("Era viernes por la tarde y {A} y {B} [estaban charlando en un banco de la plaza|volvían juntos a casa].",
          "{A} y {B} se encontraron en la puerta de la panadería el viernes por la tarde.")
    d.exchange(("—¿Qué hacemos este fin de semana?", f"—Podríamos {bad}."),
               ("—¿Tienes planes para el sábado?", f"—Yo había pensado en {bad}. ¿Te apetece?"))
    d.line(f"—Pero he mirado el pronóstico y {d.choice(FORECAST[weather])}.", f"—No sé. Según el pronóstico, {d.choice(FORECAST[weather])}.")
    d.line(f"—Entonces mejor {good[0]}, ¿no?", f"—Tienes razón. ¿Y si nos animamos a {good[0]}?")
    d.line(f"—¡Buena idea! Y el domingo podemos {good[1]}.", "—Me parece perfecto.")
    d.line("—Hecho. Quedamos el sábado a las diez.", "—Pues hecho. Te llamo mañana por la mañana.")


# ---------------------------------------------------------------------------------------------
# At the library: a book about an animal, and when to bring it back
# ---------------------------------------------------------------------------------------------
BOOK_TOPICS = {
    "los planetas": ("¿Y explica cuál es el más grande?", "Sí: el más grande es Júpiter. Viene en la página doce."),
    "los dinosaurios": ("¿Sale el más grande de todos?", "Sí, hay un capítulo entero sobre los dinosaurios gigantes."),
    "los volcanes": ("¿Cuenta por qué sale la lava?", "Sí, con dibujos que lo explican muy bien."),
    "piratas": ("¿Es muy largo?", "Tiene ochenta páginas, con letra grande y muchos dibujos."),
    "recetas para niños": ("¿Tiene recetas fáciles?", "Sí, como la macedonia o las galletas de mantequilla."),
    "el cuerpo humano": ("¿Explica cómo funciona el corazón?", "Sí, en el primer capítulo. El corazón bombea la sangre por todo el cuerpo."),
    "los ríos de España": ("¿Sale el río más largo?", "Sí, el Tajo, que es el más largo de la península."),
}


def library(d: Draft, taken: set) -> None:
    if d.chance(0.35):
        return _library_topic(d, taken)
    kid = _person(d, taken, kid=True)
    animal = d.choice(lx.ANIMALS)
    noun = (animal.male or animal.female)
    d.cast.update(K=kid, B=Character(None, lx.f("bibliotecaria", animate=True) if d.chance(0.5) else lx.m("bibliotecario", animate=True)))
    pl = noun.form(PL)
    d.say("{K} entró en la biblioteca del barrio y se acercó al mostrador.", "Después del colegio, {K} fue a la biblioteca[ con su carné nuevo|].")
    d.line(f"—Hola. Estoy buscando un libro sobre {pl}. Tengo que hacer un trabajo para clase.",
           f"—Buenas tardes. ¿Tienen algún libro de {pl}?")
    d.line(f"—Claro. Los libros de animales están en la estantería del fondo. Hay uno muy bueno sobre {pl}, con muchas fotos.",
           "—Sí, ven conmigo. Están en la sección de animales, junto a la ventana.")
    d.line("—¿Y explica qué comen? Es una de las preguntas del trabajo.")
    d.line(f"—Sí. Comen {animal.eats}. Lo pone en el segundo capítulo.",
           f"—Sí, y también dónde viven: {animal.lives}. Lo pone en el primer capítulo.")
    d.exchange(("—¡Genial! ¿Me lo puedo llevar a casa?", "—Sí, durante quince días. Cuídalo bien y devuélvelo a tiempo."),
               ("—¿Cuántos días me lo puedo quedar?", "—Quince días. Si necesitas más, puedes renovarlo."))
    d.line("—¡Gracias! Lo traeré antes de la fecha.", "—Muchas gracias. Hasta pronto.")


def _library_topic(d: Draft, taken: set) -> None:
    kid = _person(d, taken, kid=True)
    topic = d.choice(sorted(BOOK_TOPICS))
    question, answer = BOOK_TOPICS[topic]
    d.cast.update(K=kid, B=Character(None, lx.f("bibliotecaria", animate=True) if d.chance(0.5) else lx.m("bibliotecario", animate=True)))
    d.cast["topic"] = topic
    d.say("{K} llevaba toda la semana pensando en {topic}, así que el sábado fue a la biblioteca.",
          "A la salida del colegio, {K} pasó por la biblioteca.")
    d.line(f"—Hola. ¿Tienen algún libro sobre {topic}?", f"—Buenas tardes. Busco un libro de {topic}, por favor.")
    d.line("—Déjame mirar en el ordenador... Sí, tenemos dos. Uno está prestado, pero el otro está en la estantería azul.",
           "—Claro. Están en la sala infantil, en la segunda estantería. Te acompaño.")
    d.line(f"—{question}")
    d.line(f"—{answer}")
    d.exchange(("—¡Me lo llevo! ¿Hasta cuándo lo puedo tener?", "—Quince días. Si no lo has terminado, lo renuevas."),
               ("—¿Me lo puedo llevar a casa?", "—Sí, con tu carné. Tienes quince días para leerlo."))
    d.line("—¡Gracias! Lo cuidaré mucho.", "—Muchas gracias. ¡Hasta el sábado que viene!")


# ---------------------------------------------------------------------------------------------
# What to wear: the clothes suit the weather
# ---------------------------------------------------------------------------------------------
CLOTHES = {
    "frío": ("hace mucho frío", "el abrigo, la bufanda y el gorro", "Te vas a quedar {helado@K}"),
    "lluvia": ("está lloviendo", "el chubasquero y las botas de agua, y coge el paraguas", "Vas a llegar {empapado@K}"),
    "calor": ("hace mucho calor", "una camiseta, pantalón corto y la gorra", "Te vas a asar"),
    "viento": ("hace mucho viento", "la chaqueta, bien abrochada", "Se te va a volar todo"),
}


def clothes(d: Draft, taken: set) -> None:
    kid = _person(d, taken, kid=True)
    adult, _ = cs.adult(d.rng, roles=("madre", "padre", "abuela", "abuelo"))
    key = d.choice(sorted(CLOTHES))
    weather, wear, warning = CLOTHES[key]
    d.cast.update(K=kid, X=adult)
    d.say("Por la mañana, {K} estaba a punto de salir hacia el colegio[ con mucha prisa|].",
          "{K} ya tenía la mochila puesta y la mano en el pomo de la puerta.")
    d.line("—¡Me voy! ¡Hasta luego!")
    d.line("—¡Espera un momento! ¿Has mirado por la ventana? —dijo {X}.", "—¿Adónde vas así? —preguntó {X}.")
    d.exchange(("—No. ¿Por qué?", f"—Porque {weather}. Ponte {wear}."),
               ("—¿Qué pasa?", f"—Pues que {weather}. Ponte {wear}."))
    d.line(f"—Pero así voy bien...", "—¡Pero llego tarde!")
    d.line(f"—{warning}. Es un momento.",
           "—Solo es un minuto, y luego me lo agradecerás.")
    d.say("{K} suspiró, pero hizo caso.", "{K} se cambió [en un minuto|a toda prisa].")
    d.line("—¿Así mejor?", "—Ya está. ¿{contento@X}?")
    d.line("—Perfecto. Ahora sí. ¡Que tengas un buen día!", "—Mucho mejor. ¡Y no corras!")


# ---------------------------------------------------------------------------------------------
# At the farm or the zoo: questions about an animal, answered with its facts
# ---------------------------------------------------------------------------------------------
def animal_visit(d: Draft, taken: set) -> None:
    kid = _person(d, taken, kid=True)
    guide_female = d.chance(0.5)
    animal = d.choice(lx.ANIMALS)
    noun = animal.male or animal.female
    where = "la granja escuela" if animal.farm else "el zoológico" if animal.wild else "la clínica veterinaria"
    guide = Character(None, lx.f("cuidadora", animate=True) if guide_female else lx.m("cuidador", animate=True))
    d.cast.update(K=kid, C=guide, A=Thing(noun))
    d.say(f"La clase de {{K}} fue de excursión a {where}. Delante de {{A.el}}, {{K}} levantó la mano.",
          f"En {where}, {{K}} se quedó mucho rato mirando {{A.un}}. Al final se acercó a {{C.el}}.")
    qs = [("—¿Qué come {A.el}?", f"—Come {animal.eats}."),
          ("—¿Dónde vive cuando no está aquí?", f"—En libertad vive {animal.lives}."),
          ("—¿Y qué tiene de especial?", f"—Pues {animal.looks}."),
          ("—¿Qué hace durante el día?", f"—{animal.does[0].upper() + animal.does[1:]}.")]
    if animal.young:
        qs.append(("—¿Cómo se llaman sus crías?", f"—Se llaman {plural(animal.young)}."))
    chosen = d.sample(qs, 3)
    for q, a in chosen:
        d.line(q)
        d.line(a)
    d.line("—¡Cuántas cosas sabe usted!", "—¡Qué interesante! Se lo voy a contar a mi familia.")
    d.line("—Es mi trabajo. Y me encanta —sonrió {C.el}.", "—Y todavía hay muchas más. ¿Tienes más preguntas?")



# ---------------------------------------------------------------------------------------------
# At the bakery and at the café: counts, prices and the bill, computed
# ---------------------------------------------------------------------------------------------
BAKERY = ((lx.f("barra de pan"), 1), (lx.f("magdalena"), 1), (lx.m("cruasán"), 2), (lx.f("ensaimada"), 2),
          (lx.f("rosquilla"), 1), (lx.f("napolitana"), 2), (lx.f("empanada"), 5), (lx.f("tarta de manzana"), 9),
          (lx.m("bollo"), 1), (lx.f("hogaza"), 3))
CAFE = ((lx.m("café con leche"), 2), (lx.m("zumo de naranja"), 3), (lx.m("chocolate caliente"), 3), (lx.f("tostada con tomate"), 2),
        (lx.m("bocadillo de queso"), 4), (lx.f("infusión"), 2), (lx.m("vaso de leche"), 1), (lx.f("ración de churros"), 4))


def _order(d: Draft, menu, max_items: int) -> tuple[list[str], int]:
    chosen = d.sample(menu, d.rng.randint(2, max_items))
    said, total = [], 0
    for noun, price in chosen:
        k = d.rng.randint(1, 3) if " " not in noun.sg or noun.sg.startswith(("barra", "ración")) else 1
        total += k * price
        said.append(f"{number_word(k, noun.gender)} {noun.form(SG) if k == 1 else noun.form(PL)}")
    return said, total


def bakery(d: Draft, taken: set) -> None:
    buyer = _person(d, taken)
    d.cast.update(B=buyer, S=Character(None, lx.f("panadera", animate=True) if d.chance(0.5) else lx.m("panadero", animate=True)),
                  when=d.when())
    d.say("{when}, {B} entró en la panadería. Olía a pan recién hecho.", "La panadería de la esquina estaba llena, pero {B} no tenía prisa.",
          "{B} pasó por la panadería de camino a casa.")
    d.line("—¡Buenos días! ¿Qué te pongo?" if buyer.noun.sg.startswith("niñ") else "—¡Buenos días! ¿Qué le pongo?",
           "—Hola. Dime." if buyer.noun.sg.startswith("niñ") else "—Hola, buenas. Usted dirá.")
    said, total = _order(d, BAKERY, 3)
    d.line("—Quería " + join_words(said) + ".", "—Me da " + join_words(said) + ", por favor.")
    d.line("—¿Algo más?", "—Aquí tiene. ¿Alguna cosa más?")
    d.line("—No, nada más. ¿Cuánto es?", "—Nada más, gracias. ¿Qué le debo?")
    paid = next(b for b in (5, 10, 20, 50) if b >= total)
    d.line(f"—Son {_euros(total)}.", f"—Pues son {_euros(total)} en total.")
    if paid > total:
        d.line(f"—Tome, {_euros(paid)}.")
        d.line(f"—Y {_euros(paid - total)} de vuelta. ¡Que aproveche!", f"—Aquí tiene el cambio: {_euros(paid - total)}. ¡Hasta mañana!")
    else:
        d.line("—Tome, justo.", f"—Aquí tiene, {_euros(total)} justos.")
        d.line("—Gracias. ¡Que aproveche!", "—Perfecto. ¡Hasta mañana!")


def cafe(d: Draft, taken: set) -> None:
    a, b = _person(d, taken, kid=False), _person(d, taken, kid=False)
    d.cast.update(A=a, B=b, W=Character(None, lx.f("camarera", animate=True) if d.chance(0.5) else lx.m("camarero", animate=True)))
    d.say("{A} y {B} se sentaron en una mesa junto a la ventana de la cafetería.", "Después de pasear, {A} y {B} entraron en una cafetería a descansar.")
    d.line("—Buenas tardes. ¿Qué van a tomar?", "—Hola. ¿Qué les pongo?")
    said, total = _order(d, CAFE, 3)
    d.line("—Para nosotros, " + join_words(said) + ", por favor.", "—Queríamos " + join_words(said) + ".")
    d.line("—Ahora mismo.", "—Enseguida se lo traigo.")
    d.say("{W.el} volvió al poco rato con todo en una bandeja.", "Al cabo de unos minutos, {W.el} lo dejó todo sobre la mesa.")
    d.line("—¡Qué buena pinta! —dijo {A}.", "—Esto es justo lo que necesitaba —dijo {B}.")
    d.line("—¿Nos trae la cuenta, por favor?", "—Cuando pueda, la cuenta, por favor.")
    d.line(f"—Son {_euros(total)}.", f"—En total, {_euros(total)}.")
    d.line("—Hoy invito yo —dijo {A}.", "—Pago yo, que la última vez pagaste tú —dijo {B}.")


# ---------------------------------------------------------------------------------------------
# At the station: a ticket, the time, the platform; a return ticket costs twice
# ---------------------------------------------------------------------------------------------
CITIES = ("Madrid", "Sevilla", "Valencia", "Bilbao", "Zaragoza", "Granada", "Salamanca", "Burgos", "Toledo", "Córdoba",
          "Málaga", "Cádiz", "León", "Santander", "Oviedo", "Pamplona", "Segovia", "Cuenca")
HOURS = {8: "las ocho", 9: "las nueve", 10: "las diez", 11: "las once", 12: "las doce", 13: "la una", 16: "las cuatro",
         17: "las cinco", 18: "las seis", 19: "las siete"}


def station(d: Draft, taken: set) -> None:
    traveller = _person(d, taken, kid=False)
    city = d.choice(CITIES)
    hour = d.choice(sorted(HOURS))
    minutes = d.choice(("en punto", "y cuarto", "y media", "menos cuarto"))
    price = d.rng.randint(8, 40)
    platform = d.rng.randint(1, 9)
    back = d.chance(0.5)
    d.cast.update(T=traveller)
    d.say(f"{{T}} llegó a la estación con una maleta pequeña y se puso en la cola de las taquillas.",
          f"En la estación había mucho movimiento. {{T}} miró el panel de salidas y se acercó a la taquilla.")
    d.line(f"—Buenos días. Un billete para {city}, por favor." if not back else f"—Buenos días. Un billete de ida y vuelta a {city}, por favor.")
    d.line("—¿Para hoy?", "—¿Para qué día?")
    d.line("—Sí, para el próximo tren.", "—Para hoy, el primero que salga.")
    d.line(f"—El próximo sale a {HOURS[hour]} {minutes}, del andén {number_word(platform, MASC)}.")
    total = price * 2 if back else price
    if back:
        d.line(f"—Son {_euros(price)} la ida y otros {number_word(price, MASC)} la vuelta: {_euros(total)} en total.")
    else:
        d.line(f"—Son {_euros(total)}.")
    d.line("—Aquí tiene. ¿Cuánto dura el viaje?", "—Tome. ¿Tarda mucho en llegar?")
    hours = d.rng.randint(1, 4)
    d.line(f"—Unas {number_word(hours, FEM)} horas." if hours > 1 else "—Una hora, más o menos.")
    d.line(f"—Gracias. Entonces, andén {number_word(platform, MASC)}, a {HOURS[hour]} {minutes}.")
    d.line("—Eso es. ¡Buen viaje!", "—Exacto. Que tenga buen viaje.")


# ---------------------------------------------------------------------------------------------
# Lost keys at home: the rooms searched, and where they were
# ---------------------------------------------------------------------------------------------
KEY_SPOTS = (("en el bolsillo del abrigo", "colgué el abrigo en la percha"),
             ("en la cocina, junto a la cafetera", "me preparé un café"),
             ("debajo de un cojín del sofá", "me senté un rato en el sofá"),
             ("en el cuarto de baño, al lado del lavabo", "me lavé las manos"),
             ("dentro de la bolsa de la compra", "dejé la bolsa de la compra en el suelo"),
             ("en la mesilla de noche", "me fui a leer a la cama"),
             ("en la cerradura de la puerta, por fuera", "abrí la puerta con las bolsas en la mano"),
             ("en el bolsillo del pantalón, en el cesto de la ropa sucia", "me cambié de ropa"))


def lost_keys(d: Draft, taken: set) -> None:
    a = _person(d, taken, kid=False)
    kid = _person(d, taken, kid=True)
    spots = d.sample(KEY_SPOTS, 3)
    d.cast.update(A=a, K=kid)
    d.say("Eran casi las nueve y {A} ya iba tarde al trabajo.", "{A} tenía el abrigo puesto y el bolso en la mano, pero le faltaba algo.")
    d.line("—¿Alguien ha visto mis llaves? —preguntó desde el pasillo.", "—¡No encuentro las llaves! —dijo {A}, {nervioso@A}.")
    d.line(f"—¿Has mirado {spots[0][0]}? —preguntó {{K}}.")
    d.line("—Sí, y no están.", "—Es lo primero que he mirado.")
    d.line(f"—¿Y {spots[1][0]}?", f"—Pues entonces, {spots[1][0]}.")
    d.line("—Tampoco.", "—Ahí tampoco. ¡Qué desastre!")
    d.line("—A ver, ¿qué hiciste ayer al llegar a casa? —preguntó {K}, como un detective.")
    d.line(f"—Llegué a casa y {spots[2][1]}. ¡Ya sé dónde están!")
    d.say(f"Fueron corriendo a mirar. Allí estaban las llaves: {spots[2][0]}.")
    d.line("—¡Aquí están! ¿Qué haría yo sin ti?", "—¡Menos mal! Eres {un|una@K} detective {estupendo@K}.")
    d.line("—Deberías poner un gancho para las llaves en la entrada —dijo {K}.", "—De nada. Pero esta tarde compramos un llavero grande —rio {K}.")


# ---------------------------------------------------------------------------------------------
# Homework: a sum and a spelling question, answered right
# ---------------------------------------------------------------------------------------------
def homework(d: Draft, taken: set) -> None:
    kid = _person(d, taken, kid=True)
    adult, _ = cs.adult(d.rng, roles=("madre", "padre", "abuela", "abuelo", "tía", "tío"))
    a, b = d.rng.randint(12, 60), d.rng.randint(3, 30)
    word = d.choice([t.noun for t in lx.THINGS if " " not in t.noun.sg and t.number == SG])
    d.cast.update(K=kid, X=adult)
    d.say("Después de merendar, {K} sacó los deberes y se sentó en la mesa de la cocina.", "{K} llevaba un rato mirando el cuaderno sin escribir nada.")
    d.exchange(("—{X.voc}, ¿me ayudas con los deberes?", "—Claro. ¿Qué tienes que hacer?"),
               ("—{X.voc}, no me sale este ejercicio.", "—A ver, enséñamelo."))
    d.line(f"—Tengo que sumar {a} y {b}.", f"—Dice: «Suma {a} más {b}».")
    d.line(f"—Empieza por las unidades. ¿Cuánto es {a % 10} más {b % 10}?")
    u = a % 10 + b % 10
    if u >= 10:
        d.line(f"—{number_word(u).capitalize()}. Pongo el {u % 10} y me llevo una.")
    else:
        d.line(f"—{number_word(u).capitalize()}.")
    d.line(f"—Muy bien. Ahora las decenas{', con la que te llevas' if u >= 10 else ''}.")
    d.line(f"—¡Me sale {a + b}!", f"—Entonces... ¡{a + b}!")
    d.line("—¡Exacto! ¿Ves como sabías hacerlo?", "—Perfecto. ¿Qué más te queda?")
    d.line(f"—Otra pregunta: ¿cuál es el plural de «{word.sg}»?")
    d.line(f"—Piensa: {'un' if word.gender == MASC else 'una'} {word.sg}, dos...", "—¿Tú qué crees?")
    d.line(f"—¡{capitalize(word.form(PL))}!")
    d.line("—Muy bien. Ya has terminado. ¡A jugar!", "—Correcto. Guarda el cuaderno en la mochila para mañana.")


# ---------------------------------------------------------------------------------------------
# Cooking together: the recipe's steps in order, as a conversation
# ---------------------------------------------------------------------------------------------
def cooking_together(d: Draft, taken: set) -> None:
    kid = _person(d, taken, kid=True)
    adult, _ = cs.adult(d.rng, roles=("madre", "padre", "abuela", "abuelo", "tía", "tío"))
    name = d.choice(sorted(lx.RECIPES))
    noun, ingredients, steps = lx.RECIPES[name]
    number = PL if name == "galletas" else SG
    d.cast.update(K=kid, X=adult, D=Thing(noun, number))
    d.say("Era domingo y {K} y {X.su} decidieron cocinar juntos.", "{K} se puso el delantal: hoy le tocaba ayudar en la cocina.")
    d.line("—¿Qué vamos a hacer hoy?", "—¿Qué preparamos, {X.voc}?")
    d.line("—{D.un}. ¿Me ayudas?", "—Hoy toca {D.un}. Ya verás qué fácil.")
    d.line("—¿Qué necesitamos?")
    d.line("—Pues " + join_words(list(ingredients)) + ".")
    d.line("—¿Y qué hacemos primero?")
    d.line(f"—Primero hay que {steps[0]}.")
    asks = d.sample(("—¿Y luego?", "—¿Y ahora?", "—¿Qué más?", "—¿Y después?", "—¿Y qué viene ahora?"), len(steps) - 2)
    for ask, step in zip(asks, steps[1:-1]):
        d.line(ask)
        d.line(f"—Luego hay que {step}.", f"—Ahora toca {step}.", f"—Después hay que {step}.")
    d.line("—¿Ya está?")
    d.line(f"—Casi. Solo falta {steps[-1]}.")
    d.say("Al rato, la cocina olía de maravilla.", "Cuando terminaron, se sentaron a probar lo que habían hecho.")
    d.line("—¡Está buenísimo! —dijo {K}.", "—¡Qué rico! La próxima vez lo hago yo {solo@K} —dijo {K}.")


# ---------------------------------------------------------------------------------------------
# Meeting someone: names, ages, where they live, what they like
# ---------------------------------------------------------------------------------------------
STREETS = ("la calle del Sol", "la calle Mayor", "la plaza de la Fuente", "la calle de los Olivos", "el paseo del Río",
           "la calle de la Luna", "la avenida de los Pinos")
FAVOURITES = ("el fútbol", "los dinosaurios", "dibujar", "las canciones", "los cuentos de piratas", "nadar", "los trenes",
              "las adivinanzas", "montar en bicicleta", "los gatos")


def meeting(d: Draft, taken: set) -> None:
    a, b = _person(d, taken, kid=True), _person(d, taken, kid=True)
    age_a, age_b = d.rng.randint(5, 11), d.rng.randint(5, 11)
    fav_a, fav_b = d.sample(FAVOURITES, 2)
    d.cast.update(A=a, B=b)
    d.say("En el parque, {A} vio a {B.un} que jugaba [{solo@B}|sin nadie] junto al tobogán, y se acercó.",
          "El primer día del campamento de verano, {A} se sentó al lado de {B.un} que no conocía.")
    d.exchange(("—Hola. ¿Cómo te llamas?", "—Me llamo {B}. ¿Y tú?", "—{A}."),
               ("—¡Hola! Yo soy {A}. ¿Y tú?", "—Yo me llamo {B}."))
    d.line("—¿Cuántos años tienes?")
    d.line(f"—{capitalize(number_word(age_b))}. ¿Y tú?")
    same = "¡Como yo!" if age_a == age_b else ("Uno menos que tú." if age_a == age_b - 1 else "Uno más que tú." if age_a == age_b + 1 else "")
    d.line(f"—Yo tengo {number_word(age_a)}. {same}".strip())
    street = d.choice(STREETS)
    d.line(f"—¿Dónde vives?")
    d.line(f"—En {street}, al lado de la panadería.")
    d.line(f"—¿Qué es lo que más te gusta?", "—¿Y qué te gusta hacer?")
    d.line(f"—Me encanta{'n' if fav_b.startswith(('los ', 'las ')) else ''} {fav_b}.")
    if d.chance(0.4):
        d.line(f"—¡A mí también me encanta{'n' if fav_b.startswith(('los ', 'las ')) else ''} {fav_b}!")
    else:
        d.line(f"—A mí me gusta{'n' if fav_a.startswith(('los ', 'las ')) else ''} más {fav_a}, pero {fav_b} también está bien.")
    d.line("—¿Quieres jugar conmigo?", "—¿Jugamos juntos?")
    d.line("—¡Vale!", "—¡Sí! ¡Vamos!")


# ---------------------------------------------------------------------------------------------
# Packing for a trip: what goes in the suitcase fits where you go
# ---------------------------------------------------------------------------------------------
TRIPS = {
    "la playa": ("el bañador", "la toalla", "la crema para el sol", "las chanclas", "una gorra"),
    "la montaña": ("las botas", "un jersey gordo", "la cantimplora", "un chubasquero", "la linterna"),
    "la nieve": ("el abrigo", "los guantes", "el gorro de lana", "las botas de agua", "unas gafas de sol"),
    "la ciudad": ("unas zapatillas cómodas", "el plano de la ciudad", "una chaqueta ligera", "la cámara de fotos", "un paraguas pequeño"),
    "el campamento": ("el saco de dormir", "la linterna", "la cantimplora", "ropa para cinco días", "el repelente de mosquitos"),
}


def packing(d: Draft, taken: set) -> None:
    kid = _person(d, taken, kid=True)
    adult, _ = cs.adult(d.rng, roles=("madre", "padre", "abuela", "abuelo"))
    where = d.choice(sorted(TRIPS))
    items = d.sample(TRIPS[where], 4)
    d.cast.update(K=kid, X=adult)
    d.say(f"Al día siguiente se iban a {where}, y {{K}} estaba haciendo la maleta en su habitación.",
          f"La maleta estaba abierta encima de la cama. ¡Mañana, a {where}!")
    d.line("—{X.voc}, ¿qué tengo que llevar?", "—{X.voc}, ¿me ayudas con la maleta?")
    d.line(f"—Vamos a {where}, así que piensa qué vas a necesitar.", "—Hagamos una lista.")
    d.line(f"—¿{capitalize(items[0])}?")
    d.line("—Sí, eso seguro.", "—Muy bien. Apúntalo.")
    d.line(f"—¿Y {items[1]}?")
    d.line(f"—También. Y no te olvides de {items[2]}.")
    d.line(f"—¿Puedo llevar mi {d.choice(('oso de peluche', 'balón', 'libro de piratas', 'cuaderno de dibujo'))}?")
    d.line("—Claro, si cabe.", "—Si cabe, sí.")
    d.line(f"—¡Casi se me olvida {items[3]}!")
    d.say("Cerraron la maleta entre los dos, sentándose encima para que cerrara.", "Cuando terminaron, la maleta pesaba muchísimo.")
    d.line("—¡Lista! —dijo {K}—. Ahora solo falta que sea mañana.")


# ---------------------------------------------------------------------------------------------
# At the vet's: what is wrong with the pet, and the advice
# ---------------------------------------------------------------------------------------------
PET_TROUBLES = (
    ("no quiere comer desde ayer", "¿Ha cambiado algo en casa? ¿Comida nueva?", "Sí, le compramos un pienso distinto.",
     "Puede que no le guste. Mezcle el pienso nuevo con el de antes durante una semana, poco a poco."),
    ("se rasca todo el rato", "¿Sale mucho al campo?", "Todos los días, al pasear.",
     "Tiene pulgas. Le pondremos una pipeta y hay que lavar su cama con agua caliente."),
    ("cojea de una pata", "¿Se ha caído o ha saltado desde muy alto?", "Ayer saltó del sofá y se quejó un poco.",
     "No está rota. Tiene que descansar unos días, sin correr ni saltar."),
    ("está muy cansado y duerme todo el día", "¿Cuántos años tiene?", "Ya tiene doce años.",
     "Es mayor, y es normal que descanse más. Pero haremos un análisis de sangre para estar seguros."),
)


def vet(d: Draft, taken: set) -> None:
    owner = _person(d, taken)
    species = d.choice(("perro", "gato", "conejo"))
    pet_noun = lx.ANIMAL_BY_NAME[species].male
    trouble, question, answer, advice = d.choice(PET_TROUBLES)
    pet = Character(d.choice(lx.PET_NAMES_M), pet_noun)
    d.cast.update(O=owner, P=pet, V=Character(None, lx.f("veterinaria", animate=True) if d.chance(0.5) else lx.m("veterinario", animate=True)))
    d.say("{O} llevó a {P}, su {P.n}, a la clínica veterinaria.", "{O} entró en la clínica con {P} en brazos." if species != "perro" else "{O} entró en la clínica con {P}, que tiraba de la correa.")
    d.line("—Hola. ¿Qué le pasa a {P}?", "—Buenas tardes. Cuénteme, ¿qué le ocurre?")
    d.line(f"—Es que {trouble}.", f"—Estoy preocupad{{o|a@O}}: {trouble}.")
    d.line(f"—{question}")
    d.line(f"—{answer}")
    d.say("{V.el} examinó a {P} con cuidado, mientras {P} se dejaba hacer.", "{V.el} le miró las orejas, los dientes y la barriga.")
    d.line(f"—{advice}")
    d.line("—Muchas gracias. ¿Tengo que volver?", "—Gracias. Me quedo más tranquil{o|a@O}.")
    d.line("—Si en una semana no mejora, vuelva a traerlo.", "—Llámeme si ve algo raro. Y dele un premio: se ha portado muy bien.")


SCENES = {
    "compra": shopping,
    "direcciones": directions,
    "médico": doctor,
    "teléfono": phone_call,
    "planes": weekend,
    "biblioteca": library,
    "ropa": clothes,
    "animales": animal_visit,
    "panadería": bakery,
    "cafetería": cafe,
    "estación": station,
    "llaves": lost_keys,
    "deberes": homework,
    "cocina": cooking_together,
    "presentarse": meeting,
    "maleta": packing,
    "veterinario": vet,
}


def write_dialogue(seed: int, scene: str | None = None) -> tuple[str, str]:
    """``(scene name, text)`` of the dialogue written from ``seed``."""
    rng = random.Random(seed)
    name = scene or rng.choice(sorted(SCENES))
    if name not in SCENES:
        raise ValueError(f"unknown scene {name!r}; known: {sorted(SCENES)}")
    d = Draft(rng)
    SCENES[name](d, set())
    return name, d.text()
