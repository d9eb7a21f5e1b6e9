"""The deterministic writer of the course's synthetic corpus: stories, dialogues, cards and chat pairs.

Map of the package (read in this order):

- ``grammar.py``: Spanish agreement (articles, adjectives, plurals, ``de el`` → ``del``...);
- ``template.py``: the template language (``[a|b]`` alternatives, ``{H}`` slots, ``{contento@H}`` agreement)
  and the characters, things and places that fill the slots;
- ``lexicon.py``: the hand-written word banks and facts; ``cast.py``: choosing who takes part;
- ``draft.py``: a text being written; ``plots/``: one module per story plot; ``stories.py``: ``write_story(seed)``;
- ``dialogues.py``: everyday scenes; ``facts.py`` and ``concepts.py``: informative texts and the course's subject;
- ``chat.py``: question/answer conversations for the chat model;
- ``diversity.py`` (distinct-n, MinHash near-duplicates, vocabulary) and ``spelling.py`` (hunspell): measuring it;
- ``build.py`` and ``report.py``: writing ``llmlab/data`` and ``llmlab/data/corpus/REPORT.md``.

Everything is a pure function of fixed seeds: ``python course/tools/makedata corpus --check`` proves the committed
files are exactly what this code writes. Nothing here is needed to *use* the corpus (``llmlab.corpus`` reads
the files); it is how the files were made, kept in the package so a reader can see it and change it.
"""

from .stories import write_story
from .dialogues import write_dialogue

__all__ = ["write_dialogue", "write_story"]
