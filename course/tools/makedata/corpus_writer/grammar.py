"""Spanish agreement, small enough to check by hand: nouns, articles, adjectives, pronouns, clean-up.

The corpus writer never glues words blindly: every noun knows its gender and number, and every
article, adjective, possessive and pronoun that refers to it is inflected to agree. The rules
here are the regular ones of Spanish; the few nouns and adjectives that break them carry their
irregular form explicitly (``Noun("lápiz", "m")`` is regular: ``lápices``; ``Noun("examen", "m",
pl="exámenes")`` is not). ``tests/test_corpus_writer.py`` checks every rule against forms written
out by hand, and the spelling of the whole corpus against Debian's ``hunspell-es`` dictionary.

After a text is rendered, :func:`tidy` applies the spelling rules that depend on the next word:
``de el`` → ``del``, ``a el`` → ``al``, ``y`` → ``e`` before an /i/ sound (``Pablo e Inés``),
``o`` → ``u`` before an /o/ sound, and a capital letter at the start of every sentence.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "FEM",
    "MASC",
    "Noun",
    "adjective",
    "article",
    "capitalize",
    "join_words",
    "number_word",
    "plural",
    "strip_accents",
    "tidy",
]

MASC, FEM = "m", "f"
SG, PL = "sg", "pl"
_VOWELS = "aeiouáéíóú"
_ACCENT_OFF = str.maketrans("áéíóú", "aeiou")


def strip_accents(word: str) -> str:
    """``"canción"`` → ``"cancion"`` (ñ and ü are kept: they are other letters, not accents)."""
    return word.translate(_ACCENT_OFF)


def _check_gender(gender: str) -> str:
    if gender not in (MASC, FEM):
        raise ValueError(f"gender must be 'm' or 'f', got {gender!r}")
    return gender


def _check_number(number: str) -> str:
    if number not in (SG, PL):
        raise ValueError(f"number must be 'sg' or 'pl', got {number!r}")
    return number


# ---------------------------------------------------------------------------------------------
# Plurals
# ---------------------------------------------------------------------------------------------
def _syllables(word: str) -> int:
    """Vowel groups, a close enough count of syllables to tell "gris" (1) from "lunes" (2)."""
    return len(re.findall(r"[aeiouáéíóúü]+", word.lower()))


def plural(word: str) -> str:
    """The regular plural of a noun or adjective (one word).

    - vowel (stressed or not) → ``+s``: casa → casas, sofá → sofás, café → cafés;
    - ``-z`` → ``-ces``: lápiz → lápices, feliz → felices;
    - unstressed ``-s`` / ``-x`` stays: paraguas, lunes (stressed ones and one-syllable words take
      ``-es``: autobús → autobuses, gris → grises, mes → meses);
    - other consonants → ``+es``, and a written accent on the last syllable goes away because the
      word gains a syllable: balón → balones, jardín → jardines, autobús → autobuses.

    Words whose plural moves the accent the other way (examen → exámenes, joven → jóvenes) must
    give it explicitly.
    """
    if not word or not word.isalpha():
        raise ValueError(f"plural needs one word, got {word!r}")
    last = word[-1]
    if last in _VOWELS:
        return word + "s"
    if last == "z":
        return word[:-1] + "ces"
    if last in "sx" and not any(c in "áéíóú" for c in word[-3:]) and _syllables(word) > 1:
        return word  # el paraguas / los paraguas, el lunes / los lunes (but gris → grises)
    if word[-2] in "áéíóú":  # balón, jardín, autobús, francés: the accent falls off
        return word[:-2] + strip_accents(word[-2]) + word[-1] + "es"
    return word + "es"


# ---------------------------------------------------------------------------------------------
# Adjectives
# ---------------------------------------------------------------------------------------------
# Adjectives are given in the masculine singular. These end in -or but do not change for gender.
_INVARIANT_OR = {"mejor", "peor", "mayor", "menor", "interior", "exterior", "anterior", "posterior", "superior",
                 "inferior", "multicolor"}
# Colour words that do not change for gender even though they end like "dormilón".
_INVARIANT_GENDER = {"marrón"}
_IRREGULAR_ADJ = {
    # lemma: (feminine singular, masculine plural)
    "joven": ("joven", "jóvenes"),
    "cortés": ("cortés", "corteses"),
}


def adjective(lemma: str, gender: str = MASC, number: str = SG) -> str:
    """Inflect an adjective (or past participle) given in the masculine singular.

    contento → contenta, contentos, contentas; trabajador → trabajadora; dormilón → dormilona;
    verde, feliz, azul, grande, mejor do not change for gender (feliz → felices in the plural).
    Several words (``"muy contento"``, ``"lleno de barro"``) inflect only their first adjective:
    pass the adjective alone and write the rest in the template.
    """
    _check_gender(gender)
    _check_number(number)
    if lemma in _IRREGULAR_ADJ:
        fem, pl_m = _IRREGULAR_ADJ[lemma]
        if number == SG:
            return lemma if gender == MASC else fem
        return pl_m if gender == MASC else plural(fem) if fem != lemma else pl_m
    if gender == FEM and lemma not in _INVARIANT_GENDER:
        if lemma.endswith("o"):
            base = lemma[:-1] + "a"
        elif lemma.endswith("or") and lemma not in _INVARIANT_OR:
            base = lemma + "a"
        elif lemma[-2:] in ("ón", "án", "ín") or lemma.endswith("és"):
            base = lemma[:-2] + strip_accents(lemma[-2]) + lemma[-1] + "a"  # dormilón → dormilona
        else:
            base = lemma
    else:
        base = lemma
    return base if number == SG else plural(base)


# ---------------------------------------------------------------------------------------------
# Nouns and articles
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Noun:
    """A common noun: ``Noun("pelota", "f")``; ``pl`` only when the plural is irregular.

    ``stressed_a``: a feminine noun that starts with a stressed /a/ takes ``el`` / ``un`` in the
    singular (``el agua``, ``un hada``) and stays feminine for its adjectives (``el agua fría``).
    ``animate``: a person or an animal, which takes the preposition ``a`` as a direct object
    (``busca a su perro`` but ``busca su pelota``).
    """

    sg: str
    gender: str
    pl: str | None = None
    stressed_a: bool = False
    animate: bool = False

    def __post_init__(self):
        _check_gender(self.gender)
        if not self.sg or self.sg != self.sg.strip():
            raise ValueError(f"bad noun {self.sg!r}")

    def form(self, number: str = SG) -> str:
        _check_number(number)
        if number == SG:
            return self.sg
        if self.pl is not None:
            return self.pl
        # "bolsa de tela" → "bolsas de tela": only the head noun (the first word) takes the plural.
        head, _, rest = self.sg.partition(" ")
        return plural(head) + (" " + rest if rest else "")


# Definite, indefinite, demonstratives and possessives, by (gender, number).
_DETERMINERS = {
    "el": {(MASC, SG): "el", (FEM, SG): "la", (MASC, PL): "los", (FEM, PL): "las"},
    "un": {(MASC, SG): "un", (FEM, SG): "una", (MASC, PL): "unos", (FEM, PL): "unas"},
    "este": {(MASC, SG): "este", (FEM, SG): "esta", (MASC, PL): "estos", (FEM, PL): "estas"},
    "ese": {(MASC, SG): "ese", (FEM, SG): "esa", (MASC, PL): "esos", (FEM, PL): "esas"},
    "aquel": {(MASC, SG): "aquel", (FEM, SG): "aquella", (MASC, PL): "aquellos", (FEM, PL): "aquellas"},
    "mi": {(MASC, SG): "mi", (FEM, SG): "mi", (MASC, PL): "mis", (FEM, PL): "mis"},
    "tu": {(MASC, SG): "tu", (FEM, SG): "tu", (MASC, PL): "tus", (FEM, PL): "tus"},
    "su": {(MASC, SG): "su", (FEM, SG): "su", (MASC, PL): "sus", (FEM, PL): "sus"},
    "nuestro": {(MASC, SG): "nuestro", (FEM, SG): "nuestra", (MASC, PL): "nuestros", (FEM, PL): "nuestras"},
    "otro": {(MASC, SG): "otro", (FEM, SG): "otra", (MASC, PL): "otros", (FEM, PL): "otras"},
    "ningún": {(MASC, SG): "ningún", (FEM, SG): "ninguna", (MASC, PL): "ningunos", (FEM, PL): "ningunas"},
    # clitic pronouns for a direct object, and the subject pronoun
    "lo": {(MASC, SG): "lo", (FEM, SG): "la", (MASC, PL): "los", (FEM, PL): "las"},
    "él": {(MASC, SG): "él", (FEM, SG): "ella", (MASC, PL): "ellos", (FEM, PL): "ellas"},
    "todo": {(MASC, SG): "todo", (FEM, SG): "toda", (MASC, PL): "todos", (FEM, PL): "todas"},
    "mucho": {(MASC, SG): "mucho", (FEM, SG): "mucha", (MASC, PL): "muchos", (FEM, PL): "muchas"},
}
DETERMINERS = tuple(_DETERMINERS)


def article(kind: str, gender: str, number: str = SG, *, stressed_a: bool = False) -> str:
    """The determiner ``kind`` (``"el"``, ``"un"``, ``"este"``, ``"su"``, ``"lo"``, ...) agreeing in gender and number.

    ``stressed_a`` gives ``el`` / ``un`` / ``algún`` before a feminine singular noun that starts with a
    stressed /a/ (``el agua``, ``un hada``); demonstratives stay feminine (``esta agua``).
    """
    if kind not in _DETERMINERS:
        raise ValueError(f"unknown determiner {kind!r}; known: {DETERMINERS}")
    _check_gender(gender)
    _check_number(number)
    if stressed_a and gender == FEM and number == SG and kind in ("el", "un", "ningún"):
        return kind
    return _DETERMINERS[kind][(gender, number)]


# ---------------------------------------------------------------------------------------------
# Numbers and lists
# ---------------------------------------------------------------------------------------------
_NUMBERS = ["cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once",
            "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete", "dieciocho", "diecinueve", "veinte"]
_TENS = {20: "veinte", 30: "treinta", 40: "cuarenta", 50: "cincuenta", 60: "sesenta", 70: "setenta",
         80: "ochenta", 90: "noventa"}
_TWENTIES = {21: "veintiuno", 22: "veintidós", 23: "veintitrés", 24: "veinticuatro", 25: "veinticinco",
             26: "veintiséis", 27: "veintisiete", 28: "veintiocho", 29: "veintinueve"}


def number_word(n: int, gender: str | None = None) -> str:
    """0..100 in words. Before a noun (``gender`` given) ``uno`` becomes ``un`` / ``una``:
    ``un globo``, ``una manzana``, ``veintiún globos``, ``veintiuna manzanas``, ``treinta y un días``."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 100:
        raise ValueError(f"number_word covers the integers 0..100, got {n!r}")
    if n == 100:
        return "cien"
    if n <= 20:
        word = _NUMBERS[n]
    elif n < 30:
        word = _TWENTIES[n]
    else:
        tens, unit = divmod(n, 10)
        word = _TENS[tens * 10] + ("" if unit == 0 else " y " + _NUMBERS[unit])
    if gender is not None and word.endswith("uno"):
        _check_gender(gender)
        word = word[:-3] + ("un" if gender == MASC else "una")
        if word == "veintiun":
            word = "veintiún"
    return word


def join_words(items: list[str], conjunction: str = "y") -> str:
    """``["pan", "leche", "huevos"]`` → ``"pan, leche y huevos"`` (``tidy`` later fixes ``y`` → ``e``)."""
    items = [i for i in items if i]
    if not items:
        raise ValueError("join_words needs at least one item")
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


# ---------------------------------------------------------------------------------------------
# Clean-up of a rendered text
# ---------------------------------------------------------------------------------------------
_CONTRACTIONS = re.compile(r"\b([Dd]e|[Aa]) el\b")
# "y" before a word that starts with the sound /i/ (i-, hi- but not hie-/hia-: "agua y hielo").
_Y_TO_E = re.compile(r"(?<=\w) y (?=[iíIÍ]|[hH][iíIÍ](?![aeoAEO]))")
# "o" before the sound /o/: "siete u ocho", "uno u otro", "7 u 8", "10 u 11".
_O_TO_U = re.compile(r"(?<=\w) o (?=[oóOÓ]|[hH][oóOÓ]|8|11\b)")
_LINE_START = re.compile(r"^([—]?[¿¡«\"(]*)([a-záéíóúñü])", re.MULTILINE)
# After a full stop, "?" or "!" and a space, but not before a dialogue dash: "—¿Vienes? —preguntó".
_AFTER_STOP = re.compile(r"([.!?]\s+)([¿¡«\"(]*)([a-záéíóúñü])")
_SPACES = re.compile(r"[ \t]+")
_SPACE_BEFORE_PUNCT = re.compile(r" +([,.;:!?…»)])")


def capitalize(text: str) -> str:
    """Upper-case the first letter of ``text`` (after any opening ``¿¡«—``)."""
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1:]
    return text


def _contract(match: re.Match) -> str:
    prep = match.group(1)
    return {"de": "del", "De": "Del", "a": "al", "A": "Al"}[prep]


def tidy(text: str) -> str:
    """Apply the rules that depend on neighbouring words, and tidy spaces and capitals.

    ``de el`` → ``del`` and ``a el`` → ``al`` (not ``de él``: the pronoun has an accent);
    ``y`` → ``e`` and ``o`` → ``u`` before the same vowel sound; one space between words, none
    before closing punctuation; a capital letter at the start of each sentence and of each line
    (after an opening dash or question mark), never after a dialogue dash in the middle of a line
    (``—¿Vienes? —preguntó``).
    """
    text = unicodedata.normalize("NFC", text)
    text = _SPACES.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    text = _CONTRACTIONS.sub(_contract, text)
    text = _Y_TO_E.sub(" e ", text)
    text = _O_TO_U.sub(" u ", text)
    text = _LINE_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)
    return _AFTER_STOP.sub(lambda m: m.group(1) + m.group(2) + m.group(3).upper(), text)
