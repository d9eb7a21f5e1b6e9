"""Everyday world knowledge, taught twice: as corpus text in several frames and registers, and as chat
questions in many phrasings per intent (issue 24: es-chat answered no everyday question it had not seen).

The bank (``FACTS``) is hand-written: each fact is one intent about one topic («what is a clock for»), with
an answer sentence and the corpus sentences that state it in other words. ``world_documents(seed)`` writes
informative texts from it in several frames (a school card, a lesson, a riddle, a parent answering a child's
questions, a diary page, a letter), each mixing several facts, so that the corpus states every fact several
times in different words; ``world_chat(seed)`` asks every fact in many phrasings (``PHRASINGS``: ten or more
per intent) with a short answer, plus every one-digit sum in many phrasings with its result. The held-out
questions of ``makedata/heldout/`` are written apart from these phrasings, and the tests check that no
held-out question is asked here word for word.

Used by the next corpus recipe only (``build.generate(recipe="next")``): the committed corpus is unchanged.
"""

from __future__ import annotations

import random
from typing import NamedTuple

from .grammar import number_word, tidy

__all__ = ["CARRIERS", "FACTS", "PHRASINGS", "Fact", "sum_conversations", "world_chat", "world_documents"]


class Fact(NamedTuple):
    intent: str  # a key of PHRASINGS
    topic: dict  # the slots of the phrasings: {"el": "el reloj", "un": "un reloj", "los": "los relojes", ...}
    answer: str  # the chat answer (one short sentence)
    says: tuple  # corpus sentences that state the same fact in other words


def _n(el: str, un: str, los: str, name: str | None = None) -> dict:
    """The slots of a noun: with the definite article, the indefinite one, the plural, and the bare word."""
    return {"el": el, "un": un, "los": los, "name": name or el.split(" ", 1)[1]}


# ---------------------------------------------------------------------------------------------
# Phrasings per intent. {el}, {un}, {los}, {name} are the topic's slots; {El} etc. capitalised.
# ---------------------------------------------------------------------------------------------
PHRASINGS = {
    "use": ["¿Para qué sirve {el}?", "¿Para qué se usa {el}?", "¿Para qué sirven {los}?", "¿Qué se hace con {un}?",
            "¿Para qué utilizamos {el}?", "¿Qué utilidad tiene {el}?", "¿Y {el}? ¿Para qué vale?", "¿Para qué necesitamos {los}?",
            "Dime para qué sirve {el}.", "¿Sabes para qué sirve {un}?", "¿Qué hago con {un}?", "Oye, ¿para qué es {el}?",
            "Cuéntame para qué se usan {los}.", "¿Para qué tenemos {los} en casa?"],
    "lives": ["¿Dónde vive {el}?", "¿Dónde viven {los}?", "¿En qué lugar vive {el}?", "¿Dónde podemos ver {los}?",
              "¿Dónde habita {el}?", "¿Dónde tiene su casa {el}?", "Dime dónde viven {los}.", "¿Sabes dónde vive {el}?",
              "¿Cuál es el hogar de {los}?", "¿Por dónde viven {los}?", "¿Dónde se encuentra {un} en la naturaleza?",
              "Oye, ¿y {los}, dónde viven?"],
    "eats": ["¿Qué come {el}?", "¿Qué comen {los}?", "¿De qué se alimenta {el}?", "¿De qué se alimentan {los}?",
             "¿Cuál es la comida de {el}?", "¿Qué le damos de comer a {un}?", "Dime qué come {el}.", "¿Qué les gusta comer a {los}?",
             "¿Sabes qué come {el}?", "¿Con qué se alimenta {el}?", "¿Qué comida prefieren {los}?", "¿Y {los}, qué comen?"],
    "job": ["¿Qué hace {el}?", "¿En qué trabaja {el}?", "¿Cuál es el trabajo de {un}?", "¿A qué se dedica {el}?",
            "Dime qué hace {un}.", "¿Qué hacen {los}?", "¿Cuál es el oficio de {los}?", "¿En qué consiste el trabajo de {un}?",
            "¿Sabes qué hace {un}?", "Explícame el trabajo de {los}.", "¿Qué trabajo hace {el}?", "¿Quién es {un}?"],
    "color": ["¿De qué color es {el}?", "¿Qué color tiene {el}?", "¿De qué color son {los}?", "Dime el color de {el}.",
              "¿Cómo es el color de {el}?", "¿Sabes de qué color es {el}?", "¿Qué color tienen {los}?", "¿Y {el}, de qué color es?",
              "¿Cuál es el color de {el}?", "¿De qué color vemos {el}?"],
    "weather": ["¿Qué tiempo hace en {name}?", "¿Cómo es {el}?", "¿Hace frío o calor en {name}?", "Dime cómo es {el}.",
                "¿Qué pasa en {name}?", "¿Cómo son los días en {name}?", "¿Qué tiempo suele hacer en {name}?",
                "Háblame de {el}.", "¿Qué ropa llevamos en {name}?", "¿Cómo se nota que llega {el}?"],
    "body": ["¿Para qué sirven {los}?", "¿Qué hacemos con {los}?", "¿Para qué tenemos {los}?", "¿Qué hacen {los}?",
             "Dime para qué sirven {los}.", "¿Con qué parte del cuerpo {verb}?", "¿Qué usamos para {verb_inf}?",
             "¿Para qué nos sirven {los}?", "¿Sabes para qué sirven {los}?", "¿Qué parte del cuerpo usamos para {verb_inf}?"],
    "place": ["¿Qué se hace en {un}?", "¿Para qué vamos a {el_a}?", "¿Qué hacemos en {el}?", "¿Para qué sirve {un}?",
              "Dime qué se hace en {el}.", "¿Qué hay en {un}?", "¿A qué vamos a {el_a}?", "¿Qué hace la gente en {el}?",
              "¿Sabes qué se hace en {un}?", "¿Para qué existe {el}?"],
    "buy": ["¿Dónde se compra {name}?", "¿Dónde compramos {name}?", "¿Dónde puedo comprar {name}?", "¿Dónde venden {name}?",
            "¿A qué tienda vamos a por {name}?", "Dime dónde se compra {name}.", "¿Dónde se vende {name}?",
            "¿Sabes dónde comprar {name}?", "Necesito {name}. ¿Adónde voy?", "¿En qué tienda hay {name}?"],
    "gives": ["¿Qué nos da {el}?", "¿Qué da {el}?", "¿Qué obtenemos de {los}?", "¿Qué producen {los}?",
              "¿Para qué criamos {los}?", "Dime qué nos dan {los}.", "¿Qué sacamos de {el}?", "¿Sabes qué nos da {el}?",
              "¿Qué nos regalan {los}?", "¿Qué se consigue de {los}?"],
    "sound": ["¿Qué animal {sound}?", "¿Cuál es el animal que {sound}?", "¿Quién {sound}?", "¿Qué animal es el que {sound}?",
              "Dime un animal que {sound}.", "¿Sabes qué animal {sound}?", "¿Qué animal hace «{noise}»?",
              "¿De quién es el sonido «{noise}»?", "¿Qué animal dice «{noise}»?", "¿Cómo hace {el}?"],
    "needs": ["¿Qué necesita {un} para {goal}?", "¿Qué necesitan {los} para {goal}?", "¿Qué le hace falta a {un} para {goal}?",
              "Dime qué necesita {un} para {goal}.", "¿Cómo consigue {un} {goal}?", "¿Qué hay que darle a {un} para {goal}?",
              "¿Sabes qué necesitan {los} para {goal}?", "¿Qué les hace falta a {los} para {goal}?"],
    "count": ["¿Cuántos {unit} tiene {un}?", "¿Cuántas {unit} tiene {un}?", "Dime cuántos {unit} tiene {un}.",
              "¿Sabes cuántos {unit} tiene {un}?", "¿Cuántos {unit} hay en {un}?", "¿Cuántas {unit} hay en {un}?"],
}


def _use(el, un, los, answer, *says):
    return Fact("use", _n(el, un, los), answer, says)


FACTS = [
    # What things are for.
    _use("el reloj", "un reloj", "los relojes", "Sirve para saber la hora.",
         "Un reloj marca la hora con sus agujas o con números.", "Miramos el reloj para saber qué hora es y no llegar tarde.",
         "El reloj cuenta las horas, los minutos y los segundos."),
    _use("el paraguas", "un paraguas", "los paraguas", "Sirve para no mojarse cuando llueve.",
         "Cuando llueve, abrimos el paraguas para no mojarnos.", "El paraguas nos tapa de la lluvia.",
         "Si el cielo está gris y amenaza tormenta, conviene salir con paraguas."),
    _use("la nevera", "una nevera", "las neveras", "Sirve para guardar la comida en frío y que no se estropee.",
         "En la nevera guardamos la leche, la fruta y la carne para que se conserven frescas.",
         "La nevera mantiene los alimentos fríos, y así duran más.", "Dentro de la nevera hace frío, como en invierno."),
    _use("las tijeras", "unas tijeras", "las tijeras", "Sirven para cortar papel, tela o cuerda.",
         "Con las tijeras cortamos papel y tela.", "Las tijeras tienen dos hojas que cortan al cerrarse.",
         "Hay que usar las tijeras con cuidado, porque cortan."),
    _use("el cepillo de dientes", "un cepillo de dientes", "los cepillos de dientes",
         "Sirve para lavarse los dientes con pasta y agua.",
         "Después de comer nos lavamos los dientes con el cepillo, la pasta y un poco de agua.",
         "El cepillo de dientes limpia los dientes y las muelas.", "Cada persona tiene su propio cepillo de dientes."),
    _use("la llave", "una llave", "las llaves", "Sirve para abrir y cerrar puertas y cerraduras.",
         "Con la llave abrimos la puerta de casa.", "La llave entra en la cerradura y la hace girar.",
         "Si pierdes la llave, no puedes abrir la puerta."),
    _use("la escoba", "una escoba", "las escobas", "Sirve para barrer el suelo.",
         "Con la escoba barremos el polvo y las migas del suelo.", "La escoba deja el suelo limpio."),
    _use("el lápiz", "un lápiz", "los lápices", "Sirve para escribir y dibujar.",
         "Con el lápiz escribimos y dibujamos en el papel.", "Lo que se escribe con lápiz se puede borrar con una goma."),
    _use("la goma", "una goma", "las gomas", "Sirve para borrar lo que se ha escrito con lápiz.",
         "La goma borra los errores escritos a lápiz."),
    _use("las gafas", "unas gafas", "las gafas", "Sirven para ver mejor.",
         "Las personas que no ven bien llevan gafas.", "Con las gafas de sol protegemos los ojos de la luz fuerte."),
    _use("la cama", "una cama", "las camas", "Sirve para dormir y descansar.",
         "Por la noche dormimos en la cama.", "La cama tiene un colchón, una almohada y unas sábanas."),
    _use("la silla", "una silla", "las sillas", "Sirve para sentarse.",
         "Nos sentamos en una silla para comer o para estudiar.", "Una silla tiene cuatro patas y un respaldo."),
    _use("el horno", "un horno", "los hornos", "Sirve para asar y cocinar con calor, por ejemplo pan o bizcochos.",
         "En el horno se hacen el pan, los bizcochos y las pizzas.", "El horno se calienta mucho por dentro."),
    _use("la cuchara", "una cuchara", "las cucharas", "Sirve para comer la sopa, el yogur y otras cosas blandas.",
         "La sopa se come con cuchara.", "Con la cuchara removemos el café y comemos el yogur."),
    _use("el cuchillo", "un cuchillo", "los cuchillos", "Sirve para cortar la comida.",
         "Con el cuchillo cortamos el pan, la carne y la fruta.", "El cuchillo corta; hay que usarlo con cuidado."),
    _use("el teléfono", "un teléfono", "los teléfonos", "Sirve para llamar y hablar con personas que están lejos.",
         "Con el teléfono llamamos a la familia y a los amigos.", "El teléfono nos deja hablar con alguien que está lejos."),
    _use("la lavadora", "una lavadora", "las lavadoras", "Sirve para lavar la ropa.",
         "La ropa sucia se mete en la lavadora con agua y jabón."),
    _use("el jabón", "un jabón", "los jabones", "Sirve para lavarse y quitar la suciedad.",
         "Antes de comer nos lavamos las manos con agua y jabón.", "El jabón hace espuma y quita la suciedad."),
    _use("la mochila", "una mochila", "las mochilas", "Sirve para llevar cosas a la espalda, como los libros del colegio.",
         "En la mochila llevamos los libros, los cuadernos y el almuerzo."),
    _use("la bicicleta", "una bicicleta", "las bicicletas", "Sirve para ir de un sitio a otro pedaleando.",
         "Para andar en bicicleta hay que pedalear y mantener el equilibrio."),
    _use("la linterna", "una linterna", "las linternas", "Sirve para dar luz cuando está oscuro.",
         "Con una linterna vemos por la noche o en una cueva oscura."),
    _use("el termómetro", "un termómetro", "los termómetros", "Sirve para medir la temperatura, por ejemplo si tienes fiebre.",
         "El termómetro mide la temperatura del cuerpo o del aire."),
    _use("la toalla", "una toalla", "las toallas", "Sirve para secarse después de lavarse.",
         "Al salir de la ducha nos secamos con una toalla."),
    _use("el abrigo", "un abrigo", "los abrigos", "Sirve para no pasar frío en invierno.",
         "En invierno nos ponemos el abrigo para no pasar frío.", "El abrigo nos abriga y nos da calor."),
    _use("la bufanda", "una bufanda", "las bufandas", "Sirve para abrigar el cuello cuando hace frío.",
         "Cuando hace frío nos ponemos bufanda, gorro y guantes."),
    _use("el calendario", "un calendario", "los calendarios", "Sirve para saber qué día es y contar los días y los meses.",
         "En el calendario vemos los días de la semana y los meses del año."),
    _use("el mapa", "un mapa", "los mapas", "Sirve para saber dónde están los lugares y encontrar el camino.",
         "Con un mapa encontramos el camino a otro pueblo."),
    _use("el libro", "un libro", "los libros", "Sirve para leer historias y aprender cosas.",
         "En los libros leemos cuentos y aprendemos cosas nuevas."),
    # Where animals live and what they eat.
    Fact("lives", _n("el pez", "un pez", "los peces"), "Vive en el agua: en el mar, en los ríos o en una pecera.",
         ("Los peces viven en el agua y respiran por las branquias.", "Hay peces en el mar, en los ríos, en los lagos y en las peceras.",
          "Un pez fuera del agua no puede vivir.")),
    Fact("lives", _n("el pájaro", "un pájaro", "los pájaros"), "Vive en los árboles, donde hace su nido.",
         ("Los pájaros hacen sus nidos en los árboles.", "Muchos pájaros viven en los árboles y vuelan de rama en rama.")),
    Fact("lives", _n("el oso", "un oso", "los osos"), "Vive en el bosque y en las montañas.",
         ("El oso vive en el bosque y duerme en una cueva durante el invierno.",)),
    Fact("lives", _n("la abeja", "una abeja", "las abejas"), "Vive en la colmena, con muchas otras abejas.",
         ("Las abejas viven juntas en una colmena.",)),
    Fact("lives", _n("la vaca", "una vaca", "las vacas"), "Vive en la granja y en los prados.",
         ("Las vacas viven en la granja y pastan en el prado.",)),
    Fact("lives", _n("el camello", "un camello", "los camellos"), "Vive en el desierto.",
         ("El camello vive en el desierto y aguanta muchos días sin beber agua.",)),
    Fact("lives", _n("la rana", "una rana", "las ranas"), "Vive cerca del agua, en charcas y estanques.",
         ("Las ranas viven en las charcas y en los estanques, cerca del agua.",)),
    Fact("eats", _n("la vaca", "una vaca", "las vacas"), "Come hierba y heno.",
         ("La vaca come hierba en el prado y heno en el establo.", "Las vacas pasan el día comiendo hierba.")),
    Fact("eats", _n("el conejo", "un conejo", "los conejos"), "Come hierba, hojas y zanahorias.",
         ("A los conejos les gustan las zanahorias, la lechuga y la hierba.",)),
    Fact("eats", _n("el pez", "un pez", "los peces"), "Come plantas del agua, bichos pequeños u otros peces.",
         ("Los peces de la pecera comen unas escamas de comida que les echamos en el agua.",)),
    Fact("eats", _n("el caballo", "un caballo", "los caballos"), "Come hierba, heno, paja y algo de avena.",
         ("El caballo come hierba, heno y avena.",)),
    Fact("eats", _n("el gato", "un gato", "los gatos"), "Come pienso, pescado y carne.",
         ("Al gato le gusta el pescado y también come pienso.",)),
    Fact("eats", _n("el pájaro", "un pájaro", "los pájaros"), "Come semillas, frutas y gusanos.",
         ("Los pájaros comen semillas, frutas e insectos pequeños.",)),
    Fact("eats", _n("la oveja", "una oveja", "las ovejas"), "Come hierba en el campo.",
         ("Las ovejas comen hierba en el campo, vigiladas por el pastor.",)),
    # Jobs.
    Fact("job", _n("el médico", "un médico", "los médicos"), "Cura a las personas enfermas y cuida de su salud.",
         ("El médico atiende a los enfermos en el hospital o en la consulta.", "Cuando estamos enfermos, vamos al médico.",
          "La médica nos escucha, nos mira y nos receta una medicina si hace falta.")),
    Fact("job", _n("el panadero", "un panadero", "los panaderos"), "Hace el pan con harina, agua y levadura, y lo cuece en el horno.",
         ("El panadero se levanta muy temprano para hacer el pan.", "La panadera amasa la harina y mete el pan en el horno.")),
    Fact("job", _n("el bombero", "un bombero", "los bomberos"), "Apaga los incendios y ayuda a las personas en peligro.",
         ("Los bomberos apagan el fuego con agua.",)),
    Fact("job", _n("la maestra", "una maestra", "las maestras"), "Enseña a los niños en la escuela.",
         ("La maestra enseña a leer, a escribir y a contar.", "En la escuela, el maestro explica la lección.")),
    Fact("job", _n("el cartero", "un cartero", "los carteros"), "Reparte las cartas y los paquetes.",
         ("El cartero trae las cartas a casa.",)),
    Fact("job", _n("el cocinero", "un cocinero", "los cocineros"), "Prepara la comida en una cocina.",
         ("El cocinero prepara la comida en el restaurante.",)),
    Fact("job", _n("el granjero", "un granjero", "los granjeros"), "Cuida de los animales de la granja y trabaja el campo.",
         ("La granjera da de comer a las gallinas y ordeña las vacas.",)),
    # Colours.
    Fact("color", {**_n("el cielo", "un cielo", "los cielos"), "one": True}, "Cuando hace buen tiempo, el cielo es azul.",
         ("En un día despejado el cielo está azul.", "Cuando va a llover, el cielo se pone gris.")),
    Fact("color", {**_n("la hierba", "una hierba", "las hierbas"), "one": True}, "La hierba es verde.", ("La hierba del prado es verde.",)),
    Fact("color", {**_n("la nieve", "una nieve", "las nieves"), "one": True}, "La nieve es blanca.", ("La nieve es blanca y fría.",)),
    Fact("color", {**_n("el sol", "un sol", "los soles"), "one": True}, "El sol se ve amarillo.", ("El sol brilla, amarillo, en el cielo.",)),
    Fact("color", _n("el tomate", "un tomate", "los tomates"), "El tomate maduro es rojo.", ("Los tomates maduros son rojos.",)),
    Fact("color", {**_n("el carbón", "un carbón", "los carbones"), "one": True}, "El carbón es negro.", ("El carbón es negro y mancha las manos.",)),
    Fact("color", _n("el plátano", "un plátano", "los plátanos"), "El plátano maduro es amarillo.", ("Los plátanos maduros son amarillos.",)),
    # Seasons.
    Fact("weather", _n("el invierno", "un invierno", "los inviernos"), "En invierno hace frío y los días son cortos.",
         ("En invierno hace frío; a veces nieva y nos ponemos el abrigo.", "Los días de invierno son cortos y las noches largas.")),
    Fact("weather", _n("el verano", "un verano", "los veranos"), "En verano hace calor, hace sol y los días son largos.",
         ("En verano hace calor y mucha gente va a la playa.", "Los días de verano son largos y soleados.")),
    Fact("weather", _n("el otoño", "un otoño", "los otoños"), "En otoño refresca, llueve a menudo y caen las hojas de los árboles.",
         ("En otoño se caen las hojas de los árboles.",)),
    Fact("weather", _n("la primavera", "una primavera", "las primaveras"), "En primavera salen las flores y hace una temperatura suave.",
         ("En primavera florecen los árboles y los campos se llenan de flores.",)),
    # Body.
    Fact("body", {**_n("los ojos", "un ojo", "los ojos"), "verb": "vemos", "verb_inf": "ver"}, "Sirven para ver.",
         ("Vemos con los ojos.", "Los ojos nos dejan ver los colores y las formas.")),
    Fact("body", {**_n("las orejas", "una oreja", "las orejas"), "verb": "oímos", "verb_inf": "oír"}, "Sirven para oír los sonidos.",
         ("Oímos con los oídos; las orejas recogen los sonidos.",)),
    Fact("body", {**_n("la nariz", "una nariz", "las narices"), "verb": "olemos", "verb_inf": "oler"}, "Sirve para oler y para respirar.",
         ("Con la nariz olemos las flores y respiramos el aire.",)),
    Fact("body", {**_n("los dientes", "un diente", "los dientes"), "verb": "masticamos", "verb_inf": "masticar"},
         "Sirven para morder y masticar la comida.", ("Con los dientes mordemos y masticamos la comida.",)),
    Fact("body", {**_n("las piernas", "una pierna", "las piernas"), "verb": "andamos", "verb_inf": "andar"},
         "Sirven para andar, correr y saltar.", ("Con las piernas andamos, corremos y saltamos.",)),
    Fact("body", {**_n("las manos", "una mano", "las manos"), "verb": "cogemos las cosas", "verb_inf": "coger las cosas"},
         "Sirven para coger las cosas, escribir y tocar.", ("Con las manos cogemos las cosas, escribimos y saludamos.",)),
    # Places.
    Fact("place", {**_n("la biblioteca", "una biblioteca", "las bibliotecas"), "el_a": "la biblioteca"},
         "En la biblioteca se leen libros y se pueden llevar prestados a casa.",
         ("En la biblioteca hay muchos libros; allí se lee en silencio.", "De la biblioteca podemos llevarnos libros prestados.")),
    Fact("place", {**_n("la escuela", "una escuela", "las escuelas"), "el_a": "la escuela"},
         "En la escuela los niños aprenden a leer, a escribir y a contar.",
         ("En la escuela aprendemos con la maestra y jugamos con los amigos en el recreo.",)),
    Fact("place", {**_n("el hospital", "un hospital", "los hospitales"), "el_a": "el hospital"},
         "En el hospital los médicos curan a los enfermos.", ("En el hospital trabajan médicos y enfermeras.",)),
    Fact("place", {**_n("el parque", "un parque", "los parques"), "el_a": "el parque"},
         "En el parque se juega, se pasea y se descansa entre árboles.", ("En el parque hay columpios, árboles y bancos.",)),
    Fact("place", {**_n("la playa", "una playa", "las playas"), "el_a": "la playa"},
         "En la playa nos bañamos en el mar y jugamos con la arena.", ("En la playa hay arena y olas.",)),
    Fact("place", {**_n("la cocina", "una cocina", "las cocinas"), "el_a": "la cocina"},
         "En la cocina se prepara la comida.", ("En la cocina están la nevera, el horno y los platos.",)),
    # Where to buy.
    Fact("buy", {**_n("el pan", "un pan", "los panes"), "name": "pan"}, "El pan se compra en la panadería.",
         ("El pan fresco se compra en la panadería.",)),
    Fact("buy", {**_n("la fruta", "una fruta", "las frutas"), "name": "fruta"}, "La fruta se compra en la frutería o en el mercado.",
         ("En la frutería venden manzanas, naranjas y plátanos.",)),
    Fact("buy", {**_n("la medicina", "una medicina", "las medicinas"), "name": "medicinas"}, "Las medicinas se compran en la farmacia.",
         ("En la farmacia venden medicinas.",)),
    Fact("buy", {**_n("el pescado", "un pescado", "los pescados"), "name": "pescado"}, "El pescado se compra en la pescadería o en el mercado.",
         ("En la pescadería venden pescado fresco.",)),
    Fact("buy", {**_n("el libro", "un libro", "los libros"), "name": "libros"}, "Los libros se compran en la librería.",
         ("En la librería venden libros y cuadernos.",)),
    # What animals give us.
    Fact("gives", _n("la gallina", "una gallina", "las gallinas"), "La gallina pone huevos.",
         ("Las gallinas ponen huevos en el gallinero.",)),
    Fact("gives", _n("la vaca", "una vaca", "las vacas"), "La vaca nos da leche.",
         ("La leche que bebemos suele ser de vaca.", "De la leche de vaca se hacen el queso y el yogur.")),
    Fact("gives", _n("la abeja", "una abeja", "las abejas"), "La abeja hace miel.", ("Las abejas hacen la miel con el néctar de las flores.",)),
    Fact("gives", _n("la oveja", "una oveja", "las ovejas"), "La oveja nos da lana y leche.", ("Con la lana de las ovejas se hacen jerséis.",)),
    # Sounds.
    Fact("sound", {**_n("el gato", "un gato", "los gatos"), "sound": "maúlla", "noise": "miau"}, "El gato maúlla: «miau».",
         ("El gato maúlla y ronronea.",)),
    Fact("sound", {**_n("el perro", "un perro", "los perros"), "sound": "ladra", "noise": "guau"}, "El perro ladra: «guau».",
         ("El perro ladra cuando llega alguien a casa.",)),
    Fact("sound", {**_n("la vaca", "una vaca", "las vacas"), "sound": "muge", "noise": "mu"}, "La vaca muge: «mu».",
         ("La vaca muge en el prado.",)),
    Fact("sound", {**_n("el gallo", "un gallo", "los gallos"), "sound": "canta al amanecer", "noise": "quiquiriquí"},
         "El gallo canta: «quiquiriquí».", ("El gallo canta por la mañana, muy temprano.",)),
    Fact("sound", {**_n("la oveja", "una oveja", "las ovejas"), "sound": "bala", "noise": "bee"}, "La oveja bala: «bee».",
         ("Las ovejas balan cuando las lleva el pastor.",)),
    # Needs.
    Fact("needs", {**_n("la planta", "una planta", "las plantas"), "goal": "crecer"}, "Necesita agua, luz del sol y tierra.",
         ("Para crecer, las plantas necesitan agua, luz y tierra.", "Si no regamos una planta, se seca.")),
    Fact("needs", {**_n("el niño", "un niño", "los niños"), "goal": "crecer sano"}, "Necesita comer bien, dormir, jugar y beber agua.",
         ("Para crecer sanos, los niños necesitan comer bien y dormir muchas horas.",)),
    # Counts.
    Fact("count", {**_n("la semana", "una semana", "las semanas"), "unit": "días"}, "Una semana tiene siete días.",
         ("La semana tiene siete días, de lunes a domingo.",)),
    Fact("count", {**_n("el año", "un año", "los años"), "unit": "meses"}, "Un año tiene doce meses.",
         ("El año tiene doce meses, de enero a diciembre.",)),
    Fact("count", {**_n("el día", "un día", "los días"), "unit": "horas"}, "Un día tiene veinticuatro horas.",
         ("Un día entero tiene veinticuatro horas.",)),
    Fact("count", {**_n("la mano", "una mano", "las manos"), "unit": "dedos"}, "Una mano tiene cinco dedos.",
         ("Cada mano tiene cinco dedos.",)),
]


def _fill(template: str, topic: dict) -> str:
    slots = {**topic, **{k[0].upper() + k[1:]: v[0].upper() + v[1:] for k, v in topic.items() if isinstance(v, str) and v}}
    return template.format(**slots)


def _agrees(template: str, topic: dict, intent: str) -> bool:
    """Keep a phrasing only where it agrees with the topic and its answer: a plural topic is not asked with
    «¿Para qué sirve {el}?», and where the answer starts with a singular verb («Sirve para...», «Come...»), the
    question is not asked about {los}."""
    plural = topic["el"].split(" ", 1)[0] in ("los", "las")
    if plural and "{el}" in template and any(w in template for w in ("sirve ", "sirve?", "vive", "es {el}", "tiene {el}", "come {el}")):
        return False
    if not plural and "{los}" in template and (intent in ("use", "lives", "eats", "job", "body", "needs") or topic.get("one")):
        return False
    if "{unit}" in template:
        feminine_unit = topic.get("unit") in ("horas",)
        return ("Cuántas" in template) == feminine_unit
    return True


def _phrasings(fact: Fact) -> list[str]:
    return [p for p in PHRASINGS[fact.intent] if _agrees(p, fact.topic, fact.intent)]


# Ways people wrap a question (issue 24's second round): the same question after a greeting, a context clause or an
# aside, so that the chat step learns to answer the topic whatever surrounds it. {q} is the question as asked.
CARRIERS = ["Oye, una pregunta: {q}", "Hola. {q}", "Tengo una duda. {q}", "Mi hijo me lo ha preguntado y no sé qué decirle: {q}",
            "Perdona que te moleste. {q}", "Por curiosidad: {q}", "Estamos en clase y no nos ponemos de acuerdo. {q}",
            "Buenas tardes. {q}", "A ver si me ayudas: {q}", "Una cosa que siempre he querido saber: {q}", "{q} Gracias.",
            "Te hago una pregunta fácil. {q}", "Mi abuela dice que lo sabe, pero yo no: {q}", "Para un trabajo de clase: {q}"]

# The intents whose answer starts with a verb that agrees with the topic («Sirve para saber la hora.»): with
# ``echo_subject`` the answer names its topic first («El reloj sirve para saber la hora.»), so that the words of the
# answer follow the topic's own tokens instead of a question that may be phrased in a way never seen.
VERB_FIRST = ("use", "lives", "eats", "job", "body", "needs")


def _answer(fact: Fact, echo_subject: bool) -> str:
    if not echo_subject or fact.intent not in VERB_FIRST:
        return fact.answer
    subject = fact.topic["el"]
    return subject[0].upper() + subject[1:] + " " + fact.answer[0].lower() + fact.answer[1:]


def world_chat(seed: int, *, phrasings_per_fact: int = 8, carried_per_fact: int = 0,
               echo_subject: bool = False) -> list[list[dict]]:
    """Every fact asked in ``phrasings_per_fact`` of its intent's phrasings (chosen with ``seed``), answered in one
    sentence; plus ``carried_per_fact`` more questions, each a phrasing wrapped in one of ``CARRIERS``.

    ``echo_subject`` starts the answers of ``VERB_FIRST`` intents with their topic. The defaults write the committed
    chat data (recipe "next"); recipe "next-chat" asks more and wraps.
    """
    rng = random.Random(seed)
    out, seen = [], set()

    def ask(question: str, fact: Fact) -> None:
        question = tidy(question)
        if question not in seen:
            seen.add(question)
            out.append([{"role": "user", "content": question}, {"role": "assistant", "content": _answer(fact, echo_subject)}])

    for fact in FACTS:
        options = _phrasings(fact)
        for template in rng.sample(options, min(phrasings_per_fact, len(options))):
            ask(_fill(template, fact.topic), fact)
        for _ in range(carried_per_fact):
            carrier, question = rng.choice(CARRIERS), _fill(rng.choice(options), fact.topic)
            if carrier.endswith(": {q}"):  # after a colon the question goes on in lower case («…: ¿para qué…?»)
                question = question[:1] + question[1].lower() + question[2:] if question.startswith("¿") else question
            ask(carrier.format(q=question), fact)
    return out


SUM_PHRASINGS = ["¿Cuánto es {a} + {b}?", "¿Cuánto son {a} más {b}?", "{a} + {b}", "¿{a} más {b}?", "Suma {a} más {b}.",
                 "¿Cuánto da {a} + {b}?", "Haz la suma: {a} + {b}.", "¿Me dices cuánto es {a} más {b}?", "¿Qué da {a} más {b}?",
                 "Si sumo {a} y {b}, ¿qué sale?", "¿Cuál es el resultado de {a} + {b}?", "Tengo {a} caramelos y me dan {b}. ¿Cuántos tengo?",
                 "¿Cuánto suman {a} y {b}?", "Calcula {a} más {b}.", "{wa} más {wb}, ¿cuánto es?"]
SUM_ANSWERS = ["{a} + {b} = {c}.", "{a} más {b} son {c}.", "Son {c}.", "El resultado es {c}."]


def sum_conversations(seed: int, *, per_pair: int = 4, answers: list[str] | None = None) -> list[list[dict]]:
    """Every sum of two one-digit numbers (0 to 9), asked in ``per_pair`` phrasings; every answer ends with the result.

    ``answers``: the answer forms to draw from (default ``SUM_ANSWERS``); one form alone (``["{a} + {b} = {c}."]``)
    drills a single pattern, which is what the next-chat recipe tries.
    """
    rng = random.Random(seed)
    forms = answers or SUM_ANSWERS
    out = []
    for a in range(10):
        for b in range(10):
            # More than one per phrasing (a drill): each phrasing comes back, in another order.
            pool = SUM_PHRASINGS * -(-per_pair // len(SUM_PHRASINGS))
            for template in rng.sample(pool, per_pair):
                q = template.format(a=a, b=b, wa=number_word(a).capitalize(), wb=number_word(b))
                r = rng.choice(forms).format(a=a, b=b, c=a + b)
                if "caramelos" in template:
                    r = f"Tienes {a + b}, porque {a} + {b} = {a + b}."
                out.append([{"role": "user", "content": q}, {"role": "assistant", "content": r}])
    return out


# ---------------------------------------------------------------------------------------------
# Corpus text: the same facts in several frames
# ---------------------------------------------------------------------------------------------
CHILD_NAMES = ("Lucía", "Pablo", "Inés", "Hugo", "Sara", "Mateo", "Alba", "Daniel", "Nuria", "Bruno", "Clara", "Leo")
ASKERS = ("su madre", "su padre", "su abuela", "su abuelo", "su tía", "la maestra")


def _card(rng, facts) -> str:
    title = rng.choice(["Cosas que sabemos", "Ficha de conocimiento del medio", "Lo que aprendimos hoy", "Preguntas y respuestas",
                        "Apuntes de clase", "Para saber más"])
    lines = [title + "."]
    for f in facts:
        lines.append(" ".join(rng.sample(list(f.says), len(f.says))))
    return "\n\n".join(lines)


def _lesson(rng, facts) -> str:
    opening = rng.choice(["Hoy vamos a repasar algunas cosas que vemos todos los días.",
                          "Muchas preguntas sencillas tienen respuestas sencillas.",
                          "Mirad a vuestro alrededor: cada cosa tiene su uso y cada animal su casa.",
                          "Esta lección trata de cosas de cada día."])
    body = []
    for f in facts:
        q = tidy(_fill(rng.choice(_phrasings(f)), f.topic))
        body.append(f"{q} {f.answer} {rng.choice(f.says)}")
    return tidy(opening + "\n\n" + "\n\n".join(body))


def _questions_at_home(rng, facts) -> str:
    child, adult = rng.choice(CHILD_NAMES), rng.choice(ASKERS)
    start = rng.choice([f"{child} no paraba de hacer preguntas aquella tarde.", f"Mientras merendaban, {child} preguntó muchas cosas.",
                        f"De camino a casa, {child} iba preguntando todo lo que veía."])
    lines = [start]
    for f in facts:
        q = tidy(_fill(rng.choice(_phrasings(f)), f.topic))
        lines.append(f"—{q} —preguntó {child}.")
        lines.append(f"—{f.answer.rstrip('.')} —contestó {adult}—. {rng.choice(f.says)}")
    lines.append(rng.choice([f"{child} se quedó pensando y dijo que ya lo sabía.", "Y así aprendió algo nuevo.",
                             f"—Gracias —dijo {child}, y siguió jugando."]))
    return tidy("\n".join(lines))


def _diary(rng, facts) -> str:
    child = rng.choice(CHILD_NAMES)
    lines = [rng.choice(["Querido diario:", "Diario de hoy:", f"Diario de {child}."])]
    lines.append(rng.choice(["Hoy he aprendido varias cosas.", "En clase nos han explicado cosas muy curiosas.",
                             "Mi abuela me ha contado cosas que no sabía."]))
    for f in facts:
        lines.append(rng.choice(["He aprendido que", "Ahora sé que", "Me han explicado que", "Resulta que"]) + " "
                     + f.answer[0].lower() + f.answer[1:] if f.intent not in ("use", "body", "job", "lives", "eats", "needs", "count")
                     else rng.choice(f.says))
    lines.append(rng.choice(["Mañana más.", "Qué día tan interesante.", "Me voy a dormir."]))
    return tidy("\n".join(lines))


def _riddle(rng, facts) -> str:
    parts = ["Adivina, adivinanza."]
    for f in facts:
        parts.append(f"{rng.choice(f.says)} ¿De qué hablamos? De {f.topic['el']}.")
    return tidy("\n\n".join(parts))


FRAMES = (_card, _lesson, _questions_at_home, _diary, _riddle)


def world_documents(seed: int, *, n: int = 600, facts_per_document: int = 4) -> list[str]:
    """``n`` short texts, each stating ``facts_per_document`` facts of the bank in one of ``FRAMES``."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        frame = FRAMES[i % len(FRAMES)]
        out.append(frame(rng, rng.sample(FACTS, facts_per_document)))
    return out
