"""The word banks: who the stories are about, where they happen, what they lose, find, cook and feel.

Everything here was written for llmlab. The vocabulary is deliberately small and common (the
TinyStories recipe: a model of a few million parameters learns to write fluently when the words
are few and the sentences simple), and every word is in Debian's Spanish spelling dictionary
(checked by the tests with ``hunspell -d es_ES``).

Nouns carry their gender (``Noun("pelota", "f")``); tags say what a plot may do with a thing
(only a thing tagged ``"high"`` can get stuck in a tree; only a ``"small"`` one gets lost in the
sand). Facts about animals, foods, objects and jobs feed both the stories and the short
encyclopedia entries and chat answers (:mod:`makedata.corpus_writer.facts`), so what the chat model
is asked is written somewhere in the corpus.
"""

from __future__ import annotations

from .grammar import FEM, MASC, PL, SG, Noun
from .template import Character, Place, Thing


def m(word: str, **kw) -> Noun:
    return Noun(word, MASC, **kw)


def f(word: str, **kw) -> Noun:
    return Noun(word, FEM, **kw)


# ---------------------------------------------------------------------------------------------
# People
# ---------------------------------------------------------------------------------------------
GIRLS = ("Lucía", "Marta", "Inés", "Sara", "Elena", "Carmen", "Alba", "Irene", "Nuria", "Julia", "Clara", "Paula",
         "Sofía", "Vega", "Ana", "Laura", "Celia", "Marina", "Rocío", "Olga", "Eva", "Valeria", "Aurora", "Carlota",
         "Candela", "Blanca", "Alicia", "Lidia", "Natalia", "Abril", "Olivia", "Lara", "Vera", "Iris", "Rita",
         "Teresa", "Raquel", "Pilar", "Gloria", "Matilde", "Beatriz", "Cristina", "Silvia", "Ángela", "Mía")
BOYS = ("Pablo", "Tomás", "Hugo", "Mateo", "Daniel", "Javier", "Bruno", "Diego", "Martín", "Leo", "Álvaro",
        "Manuel", "Luis", "Pedro", "Mario", "Jorge", "Sergio", "Andrés", "Gonzalo", "Adrián", "Iván", "Óscar",
        "Lorenzo", "Ramón", "Gabriel", "Samuel", "Rafael", "Miguel", "Alberto", "Felipe", "Fernando", "Víctor",
        "Rubén", "Héctor", "Joaquín", "Marcos", "Lucas", "Simón", "Germán", "Emilio", "Ramiro", "Ignacio",
        "Eduardo", "Fermín", "Benito")
# Names for animals, by grammatical gender of the animal's noun.
PET_NAMES_M = ("Tambor", "Bigotes", "Copo", "Lucero", "Rayo", "Pipo", "Trueno", "Canelo", "Botón", "Garbanzo",
               "Pimiento", "Chocolate", "Rulo", "Saltamontes", "Tornillo", "Barquillo", "Lunar")
PET_NAMES_F = ("Canela", "Pelusa", "Trufa", "Nube", "Chispa", "Luna", "Manchas", "Pimienta", "Galleta", "Perla",
               "Bellota", "Almendra", "Estrella", "Ramita", "Margarita", "Pulga", "Violeta", "Campanilla")

KID = {MASC: m("niño", animate=True), FEM: f("niña", animate=True)}
# Grown-ups who help, with the way a child addresses them.
ADULTS = {
    "abuela": (f("abuela", animate=True), "abuela"),
    "abuelo": (m("abuelo", animate=True), "abuelo"),
    "madre": (f("madre", animate=True), "mamá"),
    "padre": (m("padre", animate=True), "papá"),
    "tía": (f("tía", animate=True), "tía"),
    "tío": (m("tío", animate=True), "tío"),
    "maestra": (f("maestra", animate=True), "señorita"),
    "maestro": (m("maestro", animate=True), "maestro"),
    "vecina": (f("vecina", animate=True), "señora"),
    "vecino": (m("vecino", animate=True), "señor"),
}
# Adults' own names (used when a story calls a grown-up by name).
ADULT_NAMES = {FEM: ("Rosa", "Dolores", "Amparo", "Consuelo", "Remedios", "Pilar", "Carmen", "Teresa", "Luisa",
                     "Isabel", "Mercedes", "Josefa", "Adela", "Esperanza", "Concepción"),
               MASC: ("Antonio", "José", "Francisco", "Ernesto", "Ramón", "Enrique", "Julián", "Agustín", "Jacinto",
                      "Vicente", "Sebastián", "Nicolás", "Arturo", "Teodoro", "Aurelio")}


# ---------------------------------------------------------------------------------------------
# Animals: the noun for each sex (or one noun for both), and plain facts about them
# ---------------------------------------------------------------------------------------------
class Animal:
    """An animal kind: its nouns, the sound it makes, what it eats, where it lives, what it looks like."""

    def __init__(self, male, female, *, kind, eats, lives, looks, does, sound=None, young=None, size="pequeño",
                 legs=4, pet=False, farm=False, wild=False):
        self.male = m(male, animate=True) if male else None
        self.female = f(female, animate=True) if female else None
        self.kind, self.eats, self.lives, self.looks, self.does = kind, eats, lives, looks, does
        self.sound, self.young, self.size, self.legs = sound, young, size, legs
        self.pet, self.farm, self.wild = pet, farm, wild

    @property
    def name(self) -> str:
        return (self.male or self.female).sg

    def nouns(self) -> list[Noun]:
        return [n for n in (self.male, self.female) if n]


ANIMALS = [
    Animal("perro", "perra", kind="mamífero", eats="pienso, carne y huesos", lives="en las casas, con las personas",
           looks="tiene cuatro patas, una cola que mueve cuando está contento y un olfato muy fino",
           does="ladra, juega a buscar la pelota y cuida de la casa", sound="ladra", young="cachorro", size="mediano",
           pet=True),
    Animal("gato", "gata", kind="mamífero", eats="pienso, pescado y carne", lives="en las casas y en los tejados",
           looks="tiene bigotes largos, uñas afiladas y un pelo suave", does="maúlla, ronronea y duerme muchas horas al día",
           sound="maúlla", pet=True),
    Animal("conejo", "coneja", kind="mamífero", eats="hierba, hojas y zanahorias", lives="en el campo, en madrigueras bajo tierra",
           looks="tiene las orejas largas, la cola corta y redonda y las patas de atrás muy fuertes",
           does="salta muy rápido y cava agujeros en la tierra", young="gazapo", pet=True, wild=True),
    Animal("ratón", "ratona", kind="mamífero", eats="semillas, queso y migas de pan", lives="en agujeros pequeños, en el campo y en las casas viejas",
           looks="es muy pequeño, tiene la cola larga y los dientes afilados", does="corre deprisa y roe todo lo que encuentra"),
    Animal("oso", "osa", kind="mamífero", eats="frutas, miel, raíces y peces", lives="en los bosques y en las montañas",
           looks="es grande y fuerte y tiene el pelo espeso", does="duerme durante el invierno en una cueva",
           young="osezno", size="grande", wild=True),
    Animal("lobo", "loba", kind="mamífero", eats="carne", lives="en los bosques, en grupos que se llaman manadas",
           looks="se parece a un perro grande, con el pelo gris y las orejas de punta", does="aúlla por la noche y caza en grupo",
           sound="aúlla", young="lobezno", size="mediano", wild=True),
    Animal("zorro", None, kind="mamífero", eats="ratones, conejos, frutas y huevos", lives="en el bosque, en madrigueras",
           looks="tiene el pelo rojizo y una cola larga y peluda", does="es muy listo y sale a buscar comida al atardecer",
           size="mediano", wild=True),
    Animal("caballo", "yegua", kind="mamífero", eats="hierba, heno y avena", lives="en el campo y en las cuadras",
           looks="es alto, tiene crines largas y cascos duros en las patas", does="galopa muy rápido y puede llevar a una persona encima",
           sound="relincha", young="potro", size="grande", farm=True),
    Animal("burro", "burra", kind="mamífero", eats="hierba, paja y zanahorias", lives="en las granjas y en el campo",
           looks="tiene las orejas muy largas y el pelo gris", does="carga peso y rebuzna muy fuerte", sound="rebuzna",
           size="mediano", farm=True),
    Animal("gallo", "gallina", kind="ave", eats="granos de maíz, semillas y gusanos", lives="en el gallinero de las granjas",
           looks="tiene plumas, un pico corto y una cresta roja", does="pone huevos y canta al amanecer", sound="canta",
           young="pollito", legs=2, farm=True),
    Animal("pato", "pata", kind="ave", eats="plantas de agua, semillas y pequeños insectos", lives="en los estanques, los lagos y los ríos",
           looks="tiene el pico ancho y plano y las patas con membranas para nadar", does="nada, vuela y grazna",
           legs=2, farm=True),
    Animal("cerdo", "cerda", kind="mamífero", eats="casi de todo: frutas, verduras, granos y restos de comida",
           lives="en las granjas, en la pocilga", looks="es rosado y tiene el hocico chato y la cola enroscada",
           does="se revuelca en el barro para refrescarse", sound="gruñe", young="lechón", size="mediano", farm=True),
    Animal(None, "oveja", kind="mamífero", eats="hierba", lives="en las granjas y en el campo, en rebaños",
           looks="tiene el cuerpo cubierto de lana blanca y rizada", does="bala y camina junto a las demás ovejas",
           sound="bala", young="cordero", farm=True),
    Animal(None, "vaca", kind="mamífero", eats="hierba y heno", lives="en las granjas y en los prados",
           looks="es grande, tiene manchas y dos cuernos", does="da leche y muge", sound="muge", young="ternero",
           size="grande", farm=True),
    Animal("león", "leona", kind="mamífero", eats="carne", lives="en la sabana de África",
           looks="es un felino grande; el macho tiene una melena alrededor de la cabeza", does="ruge muy fuerte y duerme mucho durante el día",
           sound="ruge", young="cachorro", size="grande", wild=True),
    Animal("elefante", "elefanta", kind="mamífero", eats="hierba, hojas, frutas y cortezas", lives="en la sabana y en las selvas de África y de Asia",
           looks="es el animal más grande de la tierra y tiene una trompa larga y dos colmillos", does="usa la trompa para beber agua y coger comida",
           size="muy grande", wild=True),
    Animal("mono", "mona", kind="mamífero", eats="frutas, hojas e insectos", lives="en las selvas, en lo alto de los árboles",
           looks="tiene manos con dedos largos y una cola que le ayuda a trepar", does="trepa y salta de rama en rama",
           size="mediano", wild=True),
    Animal(None, "jirafa", kind="mamífero", eats="hojas de los árboles altos", lives="en la sabana de África",
           looks="tiene el cuello larguísimo y la piel con manchas marrones", does="alcanza las ramas más altas sin esfuerzo",
           size="muy grande", wild=True),
    Animal(None, "tortuga", kind="reptil", eats="hojas, frutas y verduras", lives="en la tierra o en el agua, según la especie",
           looks="tiene un caparazón duro donde esconde la cabeza y las patas", does="camina muy despacio y vive muchos años",
           pet=True),
    Animal(None, "ardilla", kind="mamífero", eats="nueces, bellotas y piñones", lives="en los árboles del bosque y de los parques",
           looks="es pequeña, tiene una cola grande y peluda", does="trepa muy rápido y guarda comida para el invierno", wild=True),
    Animal(None, "rana", kind="anfibio", eats="moscas y otros insectos", lives="en las charcas y cerca de los ríos",
           looks="es verde, tiene la piel húmeda y las patas de atrás muy largas", does="salta y croa por la noche",
           sound="croa", young="renacuajo", wild=True),
    Animal("búho", None, kind="ave", eats="ratones e insectos", lives="en los bosques, en los huecos de los árboles",
           looks="tiene los ojos muy grandes y puede girar mucho la cabeza", does="caza de noche y duerme de día",
           legs=2, wild=True),
    Animal(None, "abeja", kind="insecto", eats="el néctar y el polen de las flores", lives="en colmenas, con miles de compañeras",
           looks="es pequeña, con rayas amarillas y negras y cuatro alas", does="hace miel y ayuda a las plantas a dar fruto",
           legs=6, wild=True),
    Animal(None, "hormiga", kind="insecto", eats="semillas, hojas y restos de comida", lives="en hormigueros bajo tierra",
           looks="es diminuta y tiene seis patas", does="trabaja en equipo y carga cosas más pesadas que ella", legs=6, wild=True),
    Animal(None, "mariposa", kind="insecto", eats="el néctar de las flores", lives="en los prados y los jardines",
           looks="tiene cuatro alas de colores", does="vuela de flor en flor; antes de ser mariposa es una oruga", legs=6,
           wild=True),
    Animal("caracol", None, kind="molusco", eats="hojas y plantas", lives="en los jardines y los huertos húmedos",
           looks="lleva una concha en espiral sobre la espalda", does="avanza muy despacio y deja un rastro brillante",
           legs=0, wild=True),
    Animal("pez", None, kind="pez", eats="algas, insectos y otros peces pequeños", lives="en el agua de los ríos, los lagos y el mar",
           looks="tiene escamas, aletas y una cola para nadar", does="respira bajo el agua con las branquias", legs=0,
           pet=True),
    Animal(None, "ballena", kind="mamífero", eats="pequeños animales del mar", lives="en el mar",
           looks="es enorme, más grande que un autobús", does="sube a respirar y echa un chorro de agua por la cabeza",
           size="enorme", legs=0, wild=True),
    Animal(None, "foca", kind="mamífero", eats="peces", lives="en las costas frías, entre el mar y el hielo",
           looks="tiene el cuerpo redondo, bigotes y aletas en lugar de patas", does="nada muy bien y descansa tumbada sobre las rocas",
           legs=0, wild=True),
    Animal("loro", None, kind="ave", eats="frutas y semillas", lives="en las selvas y también en las casas",
           looks="tiene plumas de colores muy vivos y un pico curvo", does="puede repetir palabras que oye", legs=2, pet=True),
    Animal("erizo", None, kind="mamífero", eats="insectos, caracoles y gusanos", lives="en los bosques y los jardines",
           looks="tiene la espalda cubierta de púas", does="se hace una bola cuando tiene miedo", wild=True),
    Animal(None, "cigüeña", kind="ave", eats="ranas, peces e insectos", lives="en nidos muy grandes en los campanarios y los tejados",
           looks="es blanca, con las patas largas y el pico rojo", does="vuela muy lejos en invierno y vuelve en primavera",
           legs=2, wild=True),
    Animal(None, "paloma", kind="ave", eats="semillas y migas", lives="en las plazas y los tejados de las ciudades",
           looks="tiene plumas grises", does="vuela en grupo y zurea", legs=2, wild=True),
    Animal("grillo", None, kind="insecto", eats="hojas y semillas", lives="en la hierba del campo",
           looks="es pequeño y oscuro y tiene las patas de atrás largas", does="canta frotando las alas en las noches de verano",
           legs=6, wild=True),
]
ANIMAL_BY_NAME = {a.name: a for a in ANIMALS}
# Animals that can be the heroes of a fable-like story (they talk, have friends and problems).
STORY_ANIMALS = ("perro", "gato", "conejo", "ratón", "oso", "zorro", "burro", "pato", "cerdo", "oveja", "vaca",
                 "elefante", "mono", "jirafa", "tortuga", "ardilla", "rana", "búho", "erizo", "caracol", "foca",
                 "loro", "gallo", "hormiga", "abeja", "león", "lobo")


# ---------------------------------------------------------------------------------------------
# Things
# ---------------------------------------------------------------------------------------------
# Tags: toy, small (can be lost anywhere), high (can get stuck up a tree or a roof), rolls, flies,
# wear (clothing), school, music, home, fragile, nature, read.
def thing(noun: Noun, *tags, number=SG, use=None, adj=None):
    return (Thing(noun, number, adj, frozenset(tags)), use)


THINGS = [
    thing(f("pelota"), "toy", "high", "rolls", use="jugar y lanzarla a los amigos"),
    thing(m("balón"), "toy", "high", "rolls", use="jugar al fútbol o al baloncesto"),
    thing(f("cometa"), "toy", "high", "flies", use="hacerla volar cuando hace viento"),
    thing(m("globo"), "toy", "high", "flies", use="adornar las fiestas"),
    thing(m("avión de papel"), "toy", "high", "flies", use="lanzarlo y verlo planear"),
    thing(f("muñeca"), "toy", "small", use="jugar e inventar historias"),
    thing(m("oso de peluche"), "toy", "small", use="abrazarlo y dormir acompañado"),
    thing(f("peonza"), "toy", "small", use="hacerla girar en el suelo"),
    thing(m("tren de madera"), "toy", use="jugar a los viajes"),
    thing(m("coche de juguete"), "toy", "small", "rolls", use="jugar a las carreras"),
    thing(f("canica"), "toy", "small", "rolls", use="jugar a las canicas"),
    thing(m("barco de papel"), "toy", "small", use="ponerlo a navegar en un charco"),
    thing(f("gorra"), "wear", "high", "small", use="protegerse la cabeza del sol"),
    thing(m("sombrero"), "wear", "high", use="protegerse del sol"),
    thing(f("bufanda"), "wear", "small", use="abrigarse el cuello"),
    thing(m("gorro"), "wear", "small", use="abrigarse la cabeza"),
    thing(m("guante"), "wear", "small", number=PL, use="abrigarse las manos"),
    thing(f("bota"), "wear", number=PL, use="caminar por el barro sin mojarse los pies"),
    thing(f("chaqueta"), "wear", use="abrigarse"),
    thing(m("paraguas"), "home", use="no mojarse cuando llueve"),
    thing(f("llave"), "home", "small", number=PL, use="abrir y cerrar las puertas"),
    thing(f("gafa"), "home", "small", number=PL, use="ver mejor"),
    thing(m("reloj"), "home", "small", use="saber la hora"),
    thing(f("linterna"), "home", "small", use="ver en la oscuridad"),
    thing(f("manta"), "home", use="taparse cuando hace frío"),
    thing(f("taza"), "home", "fragile", use="beber leche o chocolate caliente"),
    thing(m("jarrón"), "home", "fragile", use="poner flores"),
    thing(f("mochila"), "school", use="llevar los libros y el almuerzo"),
    thing(m("cuaderno"), "school", "small", use="escribir y dibujar"),
    thing(m("lápiz"), "school", "small", use="escribir y dibujar"),
    thing(m("estuche"), "school", "small", use="guardar los lápices y la goma"),
    thing(m("libro"), "school", "read", use="leer historias y aprender cosas"),
    thing(m("cuento"), "school", "read", use="leer y soñar con aventuras"),
    thing(m("mapa"), "school", use="saber por dónde ir"),
    thing(f("flauta"), "music", "small", use="tocar música"),
    thing(m("tambor"), "music", use="tocar música y marcar el ritmo"),
    thing(f("guitarra"), "music", use="tocar canciones"),
    thing(f("armónica"), "music", "small", use="tocar música soplando"),
    thing(f("concha"), "nature", "small", use="adornar y coleccionar"),
    thing(f("piedra brillante"), "nature", "small", use="coleccionarla"),
    thing(f("pluma"), "nature", "small", "flies", use="coleccionarla o escribir con tinta"),
    thing(f("bicicleta"), "ride", use="pasear y moverse sin gastar gasolina"),
    thing(m("patinete"), "ride", use="pasear deprisa"),
    thing(f("cuerda de saltar"), "toy", use="saltar y hacer ejercicio"),
    thing(m("cubo"), "toy", "beach", use="llevar agua o arena"),
    thing(f("pala"), "toy", "beach", use="cavar en la arena o en la tierra"),
    thing(f("caja de pinturas"), "school", use="pintar dibujos de colores"),
    thing(f("foto"), "home", "small", use="recordar a las personas y los lugares"),
    thing(f("carta"), "home", "small", "read", use="enviar noticias a alguien que está lejos"),
]
THING_USE = {t.noun.sg: use for t, use in THINGS}
THINGS = [t for t, _ in THINGS]
COLORS = ("rojo", "azul", "verde", "amarillo", "blanco", "negro", "naranja", "rosa", "morado", "gris", "marrón")
# Colours that suit a thing (a yellow pencil yes; the adjective "naranja" and "rosa" do not change).
COLORABLE = ("pelota", "balón", "cometa", "globo", "gorra", "bufanda", "gorro", "paraguas", "mochila", "cuaderno",
             "lápiz", "estuche", "bicicleta", "patinete", "cubo", "pala", "chaqueta", "coche de juguete", "peonza",
             "guante", "bota", "taza", "linterna", "manta", "canica", "sombrero")
THING_ADJECTIVES = ("nuevo", "viejo", "favorito", "pequeño", "precioso", "brillante")


# ---------------------------------------------------------------------------------------------
# Places
# ---------------------------------------------------------------------------------------------
PLACES = {
    "parque": Place(m("parque"), spots=("debajo de un banco", "junto a la fuente", "detrás de los columpios",
                                        "entre los arbustos", "al lado del tobogán", "en el arenero"),
                    sights=("los columpios", "una fuente de piedra", "unos árboles muy altos", "un estanque con patos",
                            "un tobogán rojo", "unos bancos de madera"),
                    tags=frozenset({"outdoors", "trees", "play"})),
    "playa": Place(f("playa"), spots=("junto a las rocas", "cerca de la orilla", "debajo de la sombrilla",
                                      "entre las toallas", "al lado de un castillo de arena", "junto a la caseta del socorrista"),
                   sights=("las olas", "unas gaviotas", "la arena caliente", "unas barcas de colores",
                           "un faro a lo lejos", "unas conchas en la orilla"),
                   tags=frozenset({"outdoors", "water", "summer", "sand"})),
    "bosque": Place(m("bosque"), spots=("junto a un tronco caído", "entre las hojas secas", "al lado de un arroyo",
                                        "debajo de un pino", "cerca de una roca con musgo", "detrás de unos helechos"),
                    sights=("los pinos", "unas setas", "un arroyo", "unas ardillas", "un claro lleno de flores",
                            "un sendero estrecho"),
                    tags=frozenset({"outdoors", "trees", "nature"})),
    "jardín": Place(m("jardín"), spots=("entre las flores", "junto al rosal", "debajo del limonero",
                                        "detrás de las macetas", "al lado de la manguera", "junto a la valla"),
                    sights=("unas flores de colores", "un limonero", "un columpio", "unas macetas", "un banco de piedra"),
                    tags=frozenset({"outdoors", "trees", "home", "play"})),
    "huerto": Place(m("huerto"), spots=("entre las lechugas", "junto a los tomates", "al lado del pozo",
                                        "debajo de una regadera", "junto a la caseta de las herramientas"),
                    sights=("las lechugas", "unas tomateras", "un espantapájaros", "unas filas de zanahorias"),
                    tags=frozenset({"outdoors", "nature", "garden"})),
    "granja": Place(f("granja"), spots=("junto al gallinero", "en el pajar", "al lado del abrevadero",
                                        "detrás del granero", "junto a la valla de las ovejas"),
                    sights=("las gallinas", "un tractor", "unas vacas", "un granero rojo", "unos sacos de trigo"),
                    tags=frozenset({"outdoors", "animals"})),
    "río": Place(m("río"), spots=("entre las piedras de la orilla", "junto a un puente de madera", "debajo de un sauce",
                                  "en un remanso", "al lado de unos juncos"),
                 sights=("el agua clara", "unos peces", "unas libélulas", "unas ranas", "los sauces"),
                 tags=frozenset({"outdoors", "water", "nature", "trees"})),
    "colegio": Place(m("colegio"), spots=("debajo de su pupitre", "en el patio", "junto a la pizarra",
                                          "en la biblioteca", "al lado de las perchas", "en el gimnasio"),
                     sights=("la pizarra", "los pupitres", "el patio", "unos murales de colores", "la biblioteca"),
                     tags=frozenset({"school", "indoors"})),
    "casa": Place(f("casa"), spots=("debajo de la cama", "detrás del sofá", "dentro del armario", "en la cocina",
                                    "en el cajón de los calcetines", "junto a la puerta", "en el cuarto de baño"),
                  sights=("el salón", "la cocina", "su habitación", "la ventana", "el pasillo"),
                  tags=frozenset({"home", "indoors"})),
    "plaza": Place(f("plaza"), spots=("junto a la fuente", "debajo de un banco", "al lado del quiosco",
                                      "cerca de la farola", "detrás de un árbol"),
                   sights=("la fuente", "las palomas", "un quiosco de periódicos", "unos bancos", "la torre del reloj"),
                   tags=frozenset({"outdoors", "town"})),
    "mercado": Place(m("mercado"), spots=("junto al puesto de fruta", "debajo de una caja", "al lado de la pescadería",
                                          "cerca de la entrada"),
                     sights=("los puestos de fruta", "la pescadería", "unas cajas de tomates", "mucha gente con bolsas"),
                     tags=frozenset({"town", "indoors", "shop"})),
    "biblioteca": Place(f("biblioteca"), spots=("entre dos libros", "debajo de una mesa", "junto a las estanterías",
                                                "al lado de la ventana", "en el rincón de los cuentos"),
                        sights=("las estanterías", "unas mesas largas", "los libros de cuentos", "unos sillones cómodos"),
                        tags=frozenset({"town", "indoors", "read"})),
    "montaña": Place(f("montaña"), spots=("junto a una roca grande", "cerca del refugio", "al lado del camino",
                                          "entre la hierba alta", "junto a un pino"),
                     sights=("la nieve de las cumbres", "un valle verde", "unas vacas pastando", "un refugio de piedra"),
                     tags=frozenset({"outdoors", "nature", "trees"})),
    "estanque": Place(m("estanque"), spots=("entre los juncos", "junto a una piedra plana", "al lado del banco",
                                            "cerca de los nenúfares"),
                      sights=("los patos", "unos nenúfares", "unas ranas", "el agua tranquila"),
                      tags=frozenset({"outdoors", "water", "nature"})),
    "patio": Place(m("patio"), spots=("junto a la portería", "debajo de un banco", "al lado de la fuente",
                                      "cerca de las canastas"),
                   sights=("la portería", "las canastas", "unos niños jugando", "una fuente"),
                   tags=frozenset({"outdoors", "school", "play", "trees"})),
}
# Where a small lost thing may turn up in each place: the spots above.
HOME_ROOMS = ("la cocina", "el salón", "su habitación", "el cuarto de baño", "el pasillo", "el desván")


# ---------------------------------------------------------------------------------------------
# Feelings, traits, time and weather
# ---------------------------------------------------------------------------------------------
SAD = ("triste", "preocupado", "disgustado", "desanimado")
HAPPY = ("contento", "feliz", "alegre", "orgulloso", "tranquilo")
SCARED = ("asustado", "nervioso", "inquieto")
TRAITS = {
    # trait adjective (agrees with the hero), what they like doing (infinitive), a plot it suits
    "curioso": "descubrir cosas nuevas",
    "alegre": "cantar y reír",
    "tímido": "leer en un rincón tranquilo",
    "despistado": "pensar en sus cosas",
    "valiente": "explorar lugares nuevos",
    "charlatán": "contar historias",
    "ordenado": "tener cada cosa en su sitio",
    "juguetón": "correr y jugar",
    "trabajador": "ayudar en casa",
    "dormilón": "quedarse en la cama",
    "generoso": "compartir sus cosas",
    "impaciente": "hacer las cosas deprisa",
}
LIKES = ("dibujar", "jugar al fútbol", "leer cuentos", "cantar", "bailar", "montar en bicicleta", "hacer preguntas",
         "jugar al escondite", "mirar las nubes", "ayudar en la cocina", "coleccionar piedras", "nadar",
         "construir torres con bloques", "inventar canciones", "cuidar de las plantas", "mirar las estrellas")
SEASONS = {
    "primavera": ("las flores empezaban a abrirse", "hacía sol y soplaba una brisa suave", "los pájaros cantaban en los árboles"),
    "verano": ("hacía mucho calor", "el sol brillaba con fuerza", "los días eran largos"),
    "otoño": ("las hojas de los árboles se volvían amarillas", "soplaba un viento fresco", "caían las primeras lluvias"),
    "invierno": ("hacía mucho frío", "el cielo estaba gris", "había escarcha en las ventanas"),
}
DAYS = ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo")
MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
          "noviembre", "diciembre")
PARTS_OF_DAY = ("por la mañana", "por la tarde", "al mediodía", "al atardecer")


# ---------------------------------------------------------------------------------------------
# Food and cooking
# ---------------------------------------------------------------------------------------------
class Food:
    def __init__(self, noun: Noun, *, kind: str, color: str, taste: str, grows: str, number=SG, price=1):
        self.noun, self.kind, self.color, self.taste, self.grows = noun, kind, color, taste, grows
        self.number, self.price = number, price


FOODS = [
    Food(f("manzana"), kind="fruta", color="rojo", taste="dulce", grows="en los manzanos", price=2),
    Food(f("pera"), kind="fruta", color="verde", taste="dulce", grows="en los perales", price=2),
    Food(m("plátano"), kind="fruta", color="amarillo", taste="dulce", grows="en las plataneras", price=2),
    Food(f("naranja"), kind="fruta", color="naranja", taste="dulce y un poco ácido", grows="en los naranjos", price=2),
    Food(m("limón"), kind="fruta", color="amarillo", taste="ácido", grows="en los limoneros", price=1),
    Food(f("fresa"), kind="fruta", color="rojo", taste="dulce", grows="en unas plantas pequeñas, cerca del suelo", price=3),
    Food(f("uva"), kind="fruta", color="verde", taste="dulce", grows="en las vides, en racimos", price=3),
    Food(f("sandía"), kind="fruta", color="verde", taste="dulce y muy jugoso", grows="en plantas que se arrastran por el suelo", price=4),
    Food(m("melocotón"), kind="fruta", color="naranja", taste="dulce", grows="en los melocotoneros", price=3),
    Food(f("cereza"), kind="fruta", color="rojo", taste="dulce", grows="en los cerezos", price=4),
    Food(m("tomate"), kind="hortaliza", color="rojo", taste="suave", grows="en las tomateras del huerto", price=2),
    Food(f("zanahoria"), kind="hortaliza", color="naranja", taste="dulce", grows="bajo la tierra", price=1),
    Food(f("lechuga"), kind="hortaliza", color="verde", taste="fresco", grows="en el huerto", price=1),
    Food(f("patata"), kind="hortaliza", color="marrón", taste="suave", grows="bajo la tierra", price=1),
    Food(f("cebolla"), kind="hortaliza", color="blanco", taste="fuerte", grows="bajo la tierra", price=1),
    Food(m("pimiento"), kind="hortaliza", color="verde", taste="suave", grows="en el huerto", price=2),
    Food(m("pepino"), kind="hortaliza", color="verde", taste="fresco", grows="en el huerto", price=1),
    Food(f("calabaza"), kind="hortaliza", color="naranja", taste="dulce", grows="en plantas grandes que se arrastran por el suelo", price=3),
    Food(m("pan"), kind="alimento", color="marrón", taste="salado", grows="se hace con harina, agua, sal y levadura", price=1),
    Food(m("queso"), kind="alimento", color="amarillo", taste="salado", grows="se hace con leche", price=4),
    Food(m("huevo"), kind="alimento", color="blanco", taste="suave", grows="lo ponen las gallinas", price=2),
    Food(f("leche"), kind="bebida", color="blanco", taste="suave", grows="la dan las vacas, las cabras y las ovejas", price=1),
    Food(m("arroz"), kind="cereal", color="blanco", taste="suave", grows="en campos inundados de agua", price=2),
    Food(f("miel"), kind="alimento", color="amarillo", taste="muy dulce", grows="la hacen las abejas", price=5),
]
FOOD_BY_NAME = {x.noun.sg: x for x in FOODS}

RECIPES = {
    # dish: (noun, ingredients (nouns in the plural or mass nouns, with article), steps)
    "tortilla de patatas": (f("tortilla de patatas"), ("unas patatas", "unos huevos", "una cebolla", "aceite", "sal"),
                            ("pelar y cortar las patatas", "freírlas despacio con la cebolla", "batir los huevos",
                             "mezclar todo", "cuajar la tortilla por los dos lados")),
    "bizcocho": (m("bizcocho"), ("harina", "azúcar", "unos huevos", "un yogur", "aceite", "levadura"),
                 ("batir los huevos con el azúcar", "añadir el yogur y el aceite", "echar la harina con la levadura",
                  "verter la masa en un molde", "hornearlo durante media hora")),
    "ensalada": (f("ensalada"), ("una lechuga", "unos tomates", "un pepino", "aceite", "sal"),
                 ("lavar bien la lechuga", "cortar los tomates y el pepino", "ponerlo todo en un cuenco",
                  "aliñarla con aceite y sal")),
    "macedonia": (f("macedonia"), ("unas fresas", "un plátano", "una manzana", "una naranja"),
                  ("lavar la fruta", "pelar el plátano y la naranja", "cortarlo todo en trozos pequeños",
                   "mezclar la fruta con el zumo de la naranja")),
    "sopa": (f("sopa de verduras"), ("unas zanahorias", "una patata", "una cebolla", "agua", "sal"),
             ("lavar y pelar las verduras", "cortarlas en trozos", "ponerlas a hervir en una olla con agua",
              "dejarla al fuego media hora")),
    "galletas": (f("galleta", pl="galletas"), ("harina", "mantequilla", "azúcar", "un huevo"),
                 ("mezclar la mantequilla con el azúcar", "añadir el huevo y la harina", "amasar hasta tener una bola",
                  "cortar las galletas con formas", "hornearlas un rato")),
    "pizza": (f("pizza"), ("harina", "agua", "tomate", "queso", "orégano"),
              ("preparar la masa con harina y agua", "estirarla con un rodillo", "cubrirla con tomate y queso",
               "hornearla hasta que el queso se derrita")),
}

# ---------------------------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------------------------
JOBS = {
    # masculine, feminine, where, what they do, a tool
    "panadero": ("panadera", "en la panadería", "hace el pan cada mañana, muy temprano", "el horno"),
    "médico": ("médica", "en el hospital o en el centro de salud", "cuida de la salud de las personas y las cura cuando están enfermas", "el fonendoscopio"),
    "bombero": ("bombera", "en el parque de bomberos", "apaga los incendios y rescata a las personas en peligro", "la manguera"),
    "maestro": ("maestra", "en el colegio", "enseña a los niños a leer, a escribir y a contar", "la pizarra"),
    "cartero": ("cartera", "en la oficina de correos y por las calles", "reparte las cartas y los paquetes", "la cartera de cuero"),
    "granjero": ("granjera", "en la granja", "cuida de los animales y trabaja la tierra", "el tractor"),
    "cocinero": ("cocinera", "en la cocina de un restaurante", "prepara la comida", "la sartén"),
    "veterinario": ("veterinaria", "en una clínica para animales", "cura a los animales enfermos", "el termómetro"),
    "pescador": ("pescadora", "en el mar o en el río", "pesca peces para venderlos", "la caña o la red"),
    "carpintero": ("carpintera", "en el taller", "hace muebles de madera", "el martillo y la sierra"),
    "jardinero": ("jardinera", "en los parques y jardines", "cuida de las plantas y las flores", "las tijeras de podar"),
    "bibliotecario": ("bibliotecaria", "en la biblioteca", "ordena los libros y ayuda a encontrarlos", "el fichero"),
    "policía": ("policía", "en la comisaría y por las calles", "ayuda a las personas y cuida de que se cumplan las normas", "el silbato"),
    "conductor de autobús": ("conductora de autobús", "en el autobús", "lleva a los viajeros de una parada a otra", "el volante"),
    "pintor": ("pintora", "en su estudio", "pinta cuadros o las paredes de las casas", "el pincel"),
    "dentista": ("dentista", "en la consulta", "cuida de los dientes", "el espejo pequeño"),
    "frutero": ("frutera", "en la frutería", "vende frutas y verduras", "la balanza"),
}

ANTONYMS = (
    ("grande", "pequeño"), ("alto", "bajo"), ("rápido", "lento"), ("caliente", "frío"), ("día", "noche"),
    ("abrir", "cerrar"), ("subir", "bajar"), ("entrar", "salir"), ("dentro", "fuera"), ("arriba", "abajo"),
    ("lleno", "vacío"), ("limpio", "sucio"), ("nuevo", "viejo"), ("mojado", "seco"), ("fuerte", "débil"),
    ("alegre", "triste"), ("fácil", "difícil"), ("cerca", "lejos"), ("mucho", "poco"), ("encender", "apagar"),
    ("ganar", "perder"), ("dormir", "despertar"), ("empezar", "terminar"), ("llegar", "irse"), ("comprar", "vender"),
    ("claro", "oscuro"), ("ancho", "estrecho"), ("duro", "blando"), ("pesado", "ligero"), ("primero", "último"),
    ("antes", "después"), ("siempre", "nunca"), ("todo", "nada"), ("verdad", "mentira"), ("reír", "llorar"),
    ("dar", "recibir"), ("meter", "sacar"), ("ruidoso", "silencioso"), ("dulce", "salado"), ("amigo", "enemigo"),
    ("joven", "anciano"), ("rico", "pobre"), ("largo", "corto"), ("gordo", "delgado"), ("tranquilo", "nervioso"),
    ("valiente", "cobarde"), ("preguntar", "responder"), ("recordar", "olvidar"), ("sumar", "restar"), ("norte", "sur"),
)
