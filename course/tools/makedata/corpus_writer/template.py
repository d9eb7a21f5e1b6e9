"""The little template language the stories and dialogues are written in, and what fills its slots.

A template is Spanish text with two kinds of marks::

    "{H} [buscó|volvió a buscar] {O.su} [debajo de la cama|detrás del sofá] y se quedó {triste@H}."

- ``[a|b|c]`` picks one alternative at random (alternatives may be empty or hold more marks);
- ``{...}`` is a slot, filled from the story's *cast* (a dict of letters to characters, things,
  places or plain strings):

  ================  =====================================================  ===========================
  slot              means                                                  e.g.
  ================  =====================================================  ===========================
  ``{H}``           how the story calls ``H``                              ``Lucía``, ``el conejo``
  ``{O.un}``        a form of ``O`` (see ``Character.form``, ...)          ``una pelota roja``
  ``{triste@H}``    an adjective agreeing with ``H`` in gender and number  ``triste``, ``contenta``
  ``{él|ella@H}``   one of two words by ``H``'s gender (four: ms|fs|mp|fp)  ``ella``
  ``{vio|vieron#H}``  one of two words by ``H``'s number                     ``vio``
  ================  =====================================================  ===========================

A cast value that is a plain string is itself a template, rendered with the same cast. The
renderer knows nothing about stories: :mod:`makedata.corpus_writer.stories` decides what to say,
this module only says it with correct agreement (:mod:`makedata.corpus_writer.grammar`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .grammar import FEM, MASC, PL, SG, Noun, adjective, article

__all__ = ["Character", "Place", "Thing", "render", "TemplateError"]


class TemplateError(ValueError):
    """A template that cannot be rendered: unbalanced marks, an unknown slot or form."""


# ---------------------------------------------------------------------------------------------
# What fills the slots
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Character:
    """A person or an animal of a story: ``Character("Lucía", Noun("niña", "f", animate=True))``.

    ``name`` may carry its own article (``"la señora Rosa"``) or be ``None`` (then the story says
    ``el conejo``, ``la abuela``); ``address`` is how others call it in a dialogue (``"abuela"``).

    Forms (``{H.form}``): ``""`` the name, or ``el conejo`` if it has none; ``el`` / ``un`` the noun
    with an article (``la niña``); ``su`` with a possessive (``su abuela``); ``n`` the bare noun;
    ``intro`` how it is first presented (``una niña llamada Lucía``); ``cd`` as a direct object,
    with the personal *a* (``a Lucía``, ``al conejo``); ``de`` (``de Lucía``, ``del conejo``);
    ``voc`` how it is addressed (``Lucía``, ``abuela``); ``amigo`` a friend's first mention
    (``su amiga Lucía``); ``él`` / ``lo`` the subject and object
    pronouns (``ella`` / ``la``).
    """

    name: str | None
    noun: Noun
    number: str = SG
    address: str | None = None

    @property
    def gender(self) -> str:
        return self.noun.gender

    def _with(self, kind: str) -> str:
        return f"{article(kind, self.gender, self.number)} {self.noun.form(self.number)}"

    def form(self, key: str) -> str:
        ref = self.name if self.name else self._with("el")
        if key == "intro":
            if not self.name:
                return self._with("un")
            called = adjective("llamado", self.gender, self.number)
            return f"{self._with('un')} {called} {self.name}"
        forms = {
            "": ref,
            "el": self._with("el"),
            "un": self._with("un"),
            "su": self._with("su"),
            "n": self.noun.form(self.number),
            "cd": "a " + ref,
            "de": "de " + ref,
            "voc": self.address or self.name or self.noun.form(self.number),
            "amigo": f"{article('su', self.gender, self.number)} {adjective('amigo', self.gender, self.number)} {ref}",
            "él": article("él", self.gender, self.number),
            "lo": article("lo", self.gender, self.number),
        }
        if key not in forms:
            raise TemplateError(f"unknown form {key!r} of a character; known: {sorted(forms) + ['intro']}")
        return forms[key]


@dataclass(frozen=True)
class Thing:
    """An object of a story: a noun, its number, an optional adjective, and tags the plots select by.

    The adjective is said where a thing is introduced: ``un`` (``una pelota roja``) and the
    possessives ``mi`` / ``tu`` / ``su`` / ``nuestro`` (``mi pelota roja``), and in ``full``
    (``la pelota roja``). Later mentions drop it, as a person would: ``""`` / ``el`` (``la
    pelota``), ``n`` (``pelota``), ``este`` / ``ese`` / ``aquel`` / ``otro``, ``lo`` (the object
    pronoun: ``la``), ``de`` (``de la pelota``, ``del balón``), ``a`` (``a la pelota``, ``al balón``).
    """

    noun: Noun
    number: str = SG
    adj: str | None = None
    tags: frozenset = field(default_factory=frozenset)

    @property
    def gender(self) -> str:
        return self.noun.gender

    def bare(self) -> str:
        words = self.noun.form(self.number)
        if self.adj:
            words += " " + adjective(self.adj, self.gender, self.number)
        return words

    def form(self, key: str) -> str:
        stressed = self.noun.stressed_a  # "el agua fría": the adjective follows, the article sees the noun
        plain = self.noun.form(self.number)
        if key in ("", "el"):
            return f"{article('el', self.gender, self.number, stressed_a=stressed)} {plain}"
        if key == "n":
            return plain
        if key == "full":
            return f"{article('el', self.gender, self.number, stressed_a=stressed)} {self.bare()}"
        if key == "lo":
            return article("lo", self.gender, self.number)
        if key in ("un", "mi", "tu", "su", "nuestro"):  # first mentions: with the adjective
            return f"{article(key, self.gender, self.number, stressed_a=stressed)} {self.bare()}"
        if key in ("este", "ese", "aquel", "otro"):
            return f"{article(key, self.gender, self.number, stressed_a=stressed)} {plain}"
        if key == "de":
            return "de " + self.form("el")
        if key == "a":
            return "a " + self.form("el")
        raise TemplateError(f"unknown form {key!r} of a thing")


@dataclass(frozen=True)
class Place:
    """A place: ``Place(Noun("parque", "m"), spots=("junto a la fuente", ...))``.

    Forms: ``""`` / ``el`` (``el parque``), ``un``, ``n``, ``en`` (``en el parque``), ``a``
    (``al parque``), ``de`` (``del parque``). ``spots`` are smaller places inside it (where a
    thing can be lost or found), ``sights`` what can be seen there, ``tags`` what kind of place it
    is (``"outdoors"``, ``"home"``, ``"water"``...).
    """

    noun: Noun
    spots: tuple = ()
    sights: tuple = ()
    tags: frozenset = field(default_factory=frozenset)
    number: str = SG

    @property
    def gender(self) -> str:
        return self.noun.gender

    def form(self, key: str) -> str:
        the = f"{article('el', self.gender, self.number, stressed_a=self.noun.stressed_a)} {self.noun.form(self.number)}"
        forms = {"": the, "el": the, "n": self.noun.form(self.number), "en": "en " + the, "a": "a " + the,
                 "de": "de " + the,
                 "un": f"{article('un', self.gender, self.number, stressed_a=self.noun.stressed_a)} {self.noun.form(self.number)}"}
        if key not in forms:
            raise TemplateError(f"unknown form {key!r} of a place; known: {sorted(forms)}")
        return forms[key]


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------
def _split_top(text: str, sep: str = "|") -> list[str]:
    """Split ``text`` on ``sep`` outside nested ``[...]`` and ``{...}``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _matching(text: str, start: int) -> int:
    """Index of the bracket that closes the one at ``start``."""
    opening = text[start]
    closing = "]" if opening == "[" else "}"
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "[{":
            depth += 1
        elif text[i] in "]}":
            depth -= 1
            if depth == 0:
                if text[i] != closing:
                    raise TemplateError(f"mismatched {opening!r} at {start} in {text!r}")
                return i
    raise TemplateError(f"unclosed {opening!r} at {start} in {text!r}")


def _agree_target(cast: dict, key: str):
    if key not in cast:
        raise TemplateError(f"slot refers to {key!r}, which is not in the cast {sorted(cast)}")
    target = cast[key]
    if not hasattr(target, "gender"):
        raise TemplateError(f"{key!r} has no gender to agree with")
    return target


def _slot(body: str, cast: dict, rng: random.Random, depth: int) -> str:
    if "@" in body:  # agreement in gender (and number)
        words, key = body.rsplit("@", 1)
        target = _agree_target(cast, key)
        options = words.split("|")
        if len(options) == 1:
            return adjective(words, target.gender, target.number)
        if len(options) == 2:
            return options[0] if target.gender == MASC else options[1]
        if len(options) == 4:
            index = (0 if target.gender == MASC else 1) + (0 if target.number == SG else 2)
            return options[index]
        raise TemplateError(f"{{{body}}}: give 1, 2 (m|f) or 4 (ms|fs|mp|fp) forms")
    if "#" in body:  # agreement in number only
        words, key = body.rsplit("#", 1)
        target = _agree_target(cast, key)
        options = words.split("|")
        if len(options) != 2:
            raise TemplateError(f"{{{body}}}: give 2 forms (singular|plural)")
        return options[0] if target.number == SG else options[1]
    key, _, form = body.partition(".")
    if key not in cast:
        raise TemplateError(f"unknown slot {{{body}}}; the cast has {sorted(cast)}")
    value = cast[key]
    if isinstance(value, str):
        if form:
            raise TemplateError(f"{{{body}}}: {key!r} is plain text and has no forms")
        return _render(value, cast, rng, depth + 1)
    return value.form(form)


def _render(template: str, cast: dict, rng: random.Random, depth: int = 0) -> str:
    if depth > 20:
        raise TemplateError("templates nest more than 20 levels deep (a cast entry refers to itself?)")
    out, i = [], 0
    while i < len(template):
        ch = template[i]
        if ch in "[{":
            end = _matching(template, i)
            body = template[i + 1:end]
            if ch == "[":
                out.append(_render(rng.choice(_split_top(body)), cast, rng, depth + 1))
            else:
                out.append(_slot(body, cast, rng, depth))
            i = end + 1
        elif ch in "]}":
            raise TemplateError(f"unbalanced {ch!r} at {i} in {template!r}")
        else:
            j = i
            while j < len(template) and template[j] not in "[]{}":
                j += 1
            out.append(template[i:j])
            i = j
    return "".join(out)


def render(template: str, cast: dict, rng: random.Random) -> str:
    """Fill ``template`` from ``cast``, choosing alternatives with ``rng`` (no clean-up: see ``grammar.tidy``)."""
    if not isinstance(template, str):
        raise TypeError(f"template must be a str, got {type(template).__name__}")
    return _render(template, cast, rng)


__all__ += ["FEM", "MASC", "PL", "SG"]
