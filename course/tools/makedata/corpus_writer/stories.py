"""Short stories with a plot: setup → problem → attempts → help → resolution → ending.

Each plot (a module of :mod:`makedata.corpus_writer.plots`) takes a
:class:`~makedata.corpus_writer.draft.Draft` and writes one story, choosing its cast to fit the
problem (:mod:`makedata.corpus_writer.cast`) and one of several ways of saying each step. The steps
follow the story's own facts: the thing that was lost is the thing that is found, the helper
who can fly is the one who flies up to the kite, the recipe's steps come in their order.
``write_story(seed)`` is a pure function of the seed.
"""

from __future__ import annotations

import random

from .draft import Draft
from .plots import PLOTS

__all__ = ["PLOTS", "write_story"]


def write_story(seed: int, plot: str | None = None) -> tuple[str, str]:
    """``(plot name, text)`` of the story written from ``seed`` (a pure function of its arguments)."""
    rng = random.Random(seed)
    name = plot or rng.choice(sorted(PLOTS))
    if name not in PLOTS:
        raise ValueError(f"unknown plot {name!r}; known: {sorted(PLOTS)}")
    d = Draft(rng)
    PLOTS[name](d, set())
    return name, d.text()
