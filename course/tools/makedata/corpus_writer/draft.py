"""A text being written: its cast, its random choices and its paragraphs.

The plots (:mod:`makedata.corpus_writer.stories`, :mod:`makedata.corpus_writer.dialogues`) only decide
*what happens*; a :class:`Draft` picks one of the ways to say each step, fills it with the cast
and keeps the paragraphs. ``Draft.text()`` joins them and applies :func:`grammar.tidy`.
"""

from __future__ import annotations

import random

from . import lexicon as lx
from .grammar import tidy
from .template import render

__all__ = ["Draft"]


class Draft:
    """Paragraphs rendered from templates with one ``random.Random``.

    ``say(*templates)`` renders one of the templates (chosen at random) at the end of the current
    paragraph; ``line(*templates)`` writes a paragraph of its own (a line of dialogue);
    ``par()`` starts a new paragraph.
    """

    def __init__(self, rng: random.Random, cast: dict | None = None):
        self.rng = rng
        self.cast: dict = dict(cast or {})
        self.paragraphs: list[list[str]] = [[]]

    # --- choosing ---------------------------------------------------------------------------
    def choice(self, options):
        return self.rng.choice(list(options))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def sample(self, options, k: int) -> list:
        return self.rng.sample(list(options), k)

    # --- writing ----------------------------------------------------------------------------
    def render(self, *templates: str) -> str:
        return render(self.choice(templates), self.cast, self.rng)

    def say(self, *templates: str) -> None:
        self.paragraphs[-1].append(self.render(*templates))

    def par(self) -> None:
        if self.paragraphs[-1]:
            self.paragraphs.append([])

    def line(self, *templates: str) -> None:
        self.par()
        self.say(*templates)
        self.par()

    def exchange(self, *options: tuple[str, ...]) -> None:
        """Write one of ``options``, each a tuple of lines that belong together (a question and its answer)."""
        for line in self.choice(options):
            self.line(line)

    def text(self) -> str:
        paragraphs = [" ".join(s.strip() for s in p if s.strip()) for p in self.paragraphs]
        return tidy("\n\n".join(p for p in paragraphs if p))

    # --- small shared pieces ----------------------------------------------------------------
    def when(self) -> str:
        """A time to start the action: ``Una mañana de primavera, cuando ...,``."""
        season = self.choice(sorted(lx.SEASONS))
        detail = self.choice(lx.SEASONS[season])
        day = self.choice(lx.DAYS)
        part = self.choice(lx.PARTS_OF_DAY)
        return self.choice([
            f"Una mañana de {season}",
            f"Un día de {season}, cuando {detail}",
            f"Una tarde de {season}",
            f"Un {day} {part}",
            f"El {day} {part}",
            f"Un día de {season} en que {detail}",
            "Un día",
            f"Aquel {day}",
        ])
