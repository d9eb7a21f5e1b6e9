"""The plots, one module each. ``PLOTS`` maps a plot's name to the function that writes it."""

from .contest import contest
from .cooking import cooking
from .fear import fear
from .friends import new_friend
from .garden import garden
from .honesty import honesty
from .learning import learning
from .lost import lost_thing
from .outing import outing
from .rescue import rescue
from .sharing import sharing
from .stuck import stuck_high
from .surprise import surprise

PLOTS = {
    "perdido": lost_thing,
    "atascado": stuck_high,
    "miedo": fear,
    "receta": cooking,
    "compartir": sharing,
    "rescate": rescue,
    "excursión": outing,
    "aprender": learning,
    "sorpresa": surprise,
    "huerto": garden,
    "amistad": new_friend,
    "concurso": contest,
    "verdad": honesty,
}
