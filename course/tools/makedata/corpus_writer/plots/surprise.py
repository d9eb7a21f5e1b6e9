"""A secret surprise for someone's birthday: the plan, the present, nearly found out, the party."""

from __future__ import annotations

from .. import cast as cs
from .. import lexicon as lx
from ..draft import Draft
from ..grammar import number_word
from .common import opening, set_hero

PRESENTS = (
    ("un dibujo enorme de toda la familia", "Dibujó a todos, hasta al gato, y lo coloreó con sus mejores lápices"),
    ("un collar de macarrones pintados", "Pintó los macarrones de colores, los dejó secar y los ensartó uno a uno en un cordón"),
    ("una tarjeta con una poesía", "Escribió una poesía corta, la copió con su mejor letra y decoró la tarjeta con flores de papel"),
    ("una caja llena de conchas", "Pegó conchas de la playa por toda la tapa de una caja de madera y la pintó de azul"),
    ("una maceta con una flor", "Pintó una maceta de barro con puntos de colores y plantó dentro una margarita"),
    ("un punto de libro", "Recortó una tira de cartulina, dibujó un pájaro en ella y le puso una cinta roja"),
)
HIDE = ("debajo de su cama", "en el fondo del armario", "dentro de una caja de zapatos", "detrás de los libros")
EXCUSES = ("—Nada, nada. Estoy haciendo los deberes —dijo {H}, muy {nervioso@H}.",
           "—¡No mires! Estoy ordenando mi cuarto —dijo {H}, [muy {nervioso@H}|sin levantar la vista].",
           "—Es un secreto del colegio —dijo {H}, y escondió las manos detrás de la espalda.")


def surprise(d: Draft, taken: set) -> None:
    h = set_hero(d, taken, kid_share=1.0)
    z, role = cs.adult(d.rng, roles=("abuela", "abuelo", "madre", "padre", "tía", "tío"))
    helper, _ = cs.adult(d.rng, roles=tuple(r for r in ("abuela", "abuelo", "madre", "padre", "tía", "tío") if r != role))
    present, how = d.choice(PRESENTS)
    age = d.choice((60, 65, 70, 75, 80)) if role in ("abuela", "abuelo") else d.choice((35, 40, 42, 45))
    d.cast.update(Z=z, X=helper, present=present, how=how, hide=d.choice(HIDE), age=number_word(age),
                  month=d.choice(lx.MONTHS), F=cs.friend(d.rng, taken, h))
    opening(d, h)
    d.par()
    d.say("[Faltaba una semana|Faltaban pocos días] para el cumpleaños de {Z.su}, que iba a cumplir {age} años.",
          "En {month} era el cumpleaños de {Z.su}: ¡{age} años! Y {H} tuvo una idea.")
    d.say("{H} quería darle una sorpresa[ que nunca olvidara|]. Se lo contó a {X.su}[ en voz baja|, en secreto].",
          "Decidió prepararle una fiesta sorpresa, y le pidió ayuda a {X.su}.")
    d.line("—Haremos una fiesta, pero {Z.voc} no puede enterarse de nada —dijo {H}.", "—Será nuestro secreto —susurró {X}, guiñándole un ojo.")
    d.par()
    d.say("Como regalo, {H} decidió hacer {present}. {how}.",
          "{H} pensó mucho qué regalarle, y al final decidió hacerle {present}. {how}.")
    d.say("Cuando terminó, escondió el regalo {hide}.")
    d.par()
    d.say("Pero un día, {Z} entró en su habitación sin llamar.", "Una tarde, cuando {H} estaba trabajando en el regalo, {Z} abrió la puerta.")
    d.line("—¿Qué estás haciendo? —preguntó {Z}, con curiosidad.", "—¿Qué escondes ahí? —preguntó {Z}.")
    d.line(*EXCUSES)
    d.say("{Z} se encogió de hombros y se fue. ¡Por poco!", "Por suerte, {Z} no sospechó nada y se fue a la cocina.")
    d.par()
    d.say("El día del cumpleaños, {X} se llevó a {Z} a dar un paseo. Mientras tanto, {H} y {F.amigo} colgaron globos y guirnaldas por todo el salón.",
          "El día del cumpleaños, mientras {Z} estaba fuera, {H} y {X} prepararon la mesa con un bizcocho, zumo y velas.")
    d.say("Cuando oyeron la llave en la puerta, apagaron las luces y se escondieron detrás del sofá.",
          "Al oír pasos, todos se escondieron y guardaron silencio.")
    d.line("—¡Sorpresa! —gritaron todos a la vez cuando {Z} encendió la luz.")
    d.say("{Z} se llevó las manos a la cara. [No se lo podía creer.|Se le escaparon unas lágrimas de alegría.]")
    d.say("Entonces {H} le dio {present}.")
    d.line("—¡Es el mejor regalo que me han hecho nunca! —dijo {Z}, y le dio a {H} un abrazo enorme.",
           "—¿Lo has hecho tú? ¡Me encanta! —dijo {Z}, muy {emocionado@Z}.")
    d.say("Aquel fue un cumpleaños que nadie olvidó.",
          "{H} descubrió que preparar una sorpresa es casi tan divertido como recibirla.",
          "Esa noche, {H} se durmió muy {contento@H}: guardar un secreto había valido la pena.")
