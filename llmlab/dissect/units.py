"""Tokens are the unit of work, words the unit of text: tok/s compares across tokenizers only in words."""

from __future__ import annotations

from llmlab.arguments import real_number


def tokens_per_word(n_words: float, n_tokens: float) -> float:
    """Tokens per word of a text: 4,000 words in 5,000 tokens -> 1.25; in 7,500 -> 1.875 (guide G-3)."""
    return real_number(n_tokens, "n_tokens") / real_number(n_words, "n_words", positive=True)


def words_per_second(tokens_per_s: float, tokens_per_word: float) -> float:
    """Words per second from tok/s: 50 tok/s at 1.25 tokens/word -> 40 words/s (guide G-M6)."""
    return real_number(tokens_per_s, "tokens_per_s") / real_number(tokens_per_word, "tokens_per_word", positive=True)
