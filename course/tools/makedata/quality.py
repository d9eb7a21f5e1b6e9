"""How good is the text a model writes? The measurements of the shipped models' build report.

Perplexity says how well a model predicts text; these say what its own text looks like:

- ``continuations``: 100 sampled continuations of 60 tokens (temperature 0.8, top-p 0.95, one
  seed per sample) of everyday prompts;
- ``valid_word_rate``: the share of their words that Debian's Spanish dictionary accepts
  (``hunspell -d es_ES``; ``None`` where hunspell is not installed);
- ``repetition_rate``: within one sample, the share of word 4-grams that repeat an earlier
  4-gram of the same sample (0 = no loop; a model stuck in "el agua, el agua, el agua" scores
  high), averaged over the samples;
- ``chat_answer_perplexity``: perplexity of a chat model on the reference answers of held-out questions;
- ``on_topic``: whether an answer stays on the question's topic, by a deliberately simple rule (see
  its docstring), and ``reference_overlap`` for how much of the reference answer it says.

``benchmarks/model_quality.py`` runs them on any models folder, so the same commands measure the
models before and after a rebuild.
"""

from __future__ import annotations

import math
import unicodedata

import torch

from llmlab.chat import STOP_TOKENS, encode_chat
from llmlab.model import generate
from llmlab.sampling import Sampler
from llmlab.train import build_sft_examples, evaluate

from .corpus_writer import spelling
from .corpus_writer.diversity import words

__all__ = ["PROMPTS", "chat_answer_perplexity", "chat_answers", "content_stems", "continuations", "on_topic",
           "reference_overlap", "repetition_rate", "spread", "valid_word_rate"]

# Beginnings of texts in the registers of the corpus (and of the labs' examples).
PROMPTS = (
    "Había una vez", "Un día, en el parque,", "La niña abrió la puerta y", "El perro de Lucía", "Aquella mañana de invierno",
    "—¿Qué te pasa? —preguntó", "Querida abuela:", "Para preparar una tortilla", "El conejo vive", "En el mercado,",
    "Cuando llegó a casa,", "La fotosíntesis es", "Mi animal favorito es", "—Buenos días. ¿Qué le pongo?", "El tren salió",
    "Esa noche, en la cama,", "El maestro dijo que", "Un modelo de lenguaje", "Pablo tenía un balón rojo", "En verano, la playa",
)
STOPWORDS = frozenset("""
    a al algo alguien algún alguna algunas alguno algunos ante antes aquel aquella aquello así aunque cada como con cual cuando
    de del desde donde dos el ella ellas ellos en entre era eran es esa ese eso esta estaba estas este esto estos está están
    fue fueron ha había han hasta hay la las le les lo los luego mas me mi mis muy más nada ni no nos nosotros o otra otro
    para pero poco por porque pues que quien qué se sea ser si sin sobre son su sus también tan te tenía tiene tienen todo
    todos tu tus tú un una unas uno unos ya yo él cómo cuál cuánto cuántos cuántas dónde quién hace hacer puede puedo
""".split())


# ---------------------------------------------------------------------------------------------
# Plain text
# ---------------------------------------------------------------------------------------------
@torch.no_grad()
def continuations(model, tok, *, n: int = 100, new_tokens: int = 60, temperature: float = 0.8, top_p: float = 0.95,
                  prompts=PROMPTS) -> list[dict]:
    """``n`` sampled continuations: sample ``i`` continues ``prompts[i % len(prompts)]`` with seed ``i``.

    Each is ``{"prompt", "text"}`` (``text`` without the prompt; it ends early at ``<|eos|>``).
    """
    out = []
    for i in range(n):
        prompt = prompts[i % len(prompts)]
        ids = [tok.bos_id] + tok.encode(prompt)
        sampler = Sampler(generator=torch.Generator().manual_seed(i), do_sample=True, temperature=temperature, top_p=top_p)
        full = generate(model, torch.tensor(ids), new_tokens, sampler=sampler, eos_token_id=tok.eos_id)
        new = [t for t in full[len(ids):].tolist() if t != tok.eos_id]
        out.append({"prompt": prompt, "text": tok.decode(new)})
    return out


def valid_word_rate(texts: list[str]) -> dict | None:
    """``{"words", "unknown", "rate", "top_unknown"}`` with hunspell es_ES, or ``None`` without hunspell."""
    return spelling.valid_word_rate(texts)


def repetition_rate(text: str, n: int = 4) -> float:
    """Share of the word ``n``-grams of ``text`` that already appeared earlier in ``text`` (0 for a short text)."""
    w = words(text)
    grams = [tuple(w[i:i + n]) for i in range(len(w) - n + 1)]
    if not grams:
        return 0.0
    return 1 - len(set(grams)) / len(grams)


# ---------------------------------------------------------------------------------------------
# Chat
# ---------------------------------------------------------------------------------------------
def chat_answer_perplexity(model, tok, conversations: list, *, style: str = "chatml", seq_len: int | None = None) -> float:
    """Perplexity on the assistant's answers of ``conversations`` (the prompts are given, not scored)."""
    seq_len = seq_len or model.config.max_seq_len - 1
    rows, mask = build_sft_examples(conversations, tok, seq_len=seq_len, style=style)
    return math.exp(evaluate(model, rows, loss_mask=mask))


def spread(items: list, n: int) -> list:
    """``n`` items taken at even steps through ``items`` (all of them if there are fewer), so that a held-out
    sample covers every kind of question, not only the first kind in the file."""
    if n >= len(items):
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def question_of(conversation: list[dict]) -> list[dict]:
    """The conversation up to (not including) its first assistant answer."""
    for i, m in enumerate(conversation):
        if m["role"] == "assistant":
            return conversation[:i]
    raise ValueError("the conversation has no assistant answer")


@torch.no_grad()
def chat_answers(model, tok, conversations: list, *, style: str = "chatml", max_new_tokens: int = 60) -> list[dict]:
    """Greedy answers to the first question of each conversation: ``{"question", "reference", "answer"}``."""
    stops = [tok.special_tokens[t] for t in STOP_TOKENS[style]]
    out = []
    for conv in conversations:
        question = question_of(conv)
        ids = encode_chat(question, tok, style, add_generation_prompt=True)
        room = min(max_new_tokens, model.config.max_seq_len - len(ids))
        full = generate(model, torch.tensor(ids), room, eos_token_id=stops)
        new = [t for t in full[len(ids):].tolist() if t not in stops]
        out.append({"question": question[-1]["content"], "reference": conv[len(question)]["content"], "answer": tok.decode(new)})
    return out


def content_stems(text: str) -> set[str]:
    """Content words of ``text`` as crude stems: lower case, accents removed, stop words and words under 4 letters
    dropped, the first 5 letters kept (so «perro» and «perros», «zanahoria» and «zanahorias» meet)."""
    stems = set()
    for w in words(text):
        if len(w) < 4 or w in STOPWORDS:
            continue
        plain = "".join(c for c in unicodedata.normalize("NFD", w) if unicodedata.category(c) != "Mn")
        stems.add(plain[:5])
    return stems


def _last_paragraph(text: str) -> str:
    return [p for p in text.split("\n\n") if p.strip()][-1] if text.strip() else ""


def on_topic(question: str, answer: str, reference: str) -> bool:
    """Does ``answer`` stay on topic? Yes if it shares at least one content stem (``content_stems``) with the question
    or with the reference answer.

    Only the question's last paragraph counts, so in a reading-comprehension question the text to read does not make
    any answer that copies a word of it "on topic". Simple on purpose: it catches answers about something else
    entirely (the usual failure of a tiny model), not wrong answers about the right thing.
    """
    asked = content_stems(_last_paragraph(question)) | content_stems(reference)
    return bool(asked & content_stems(answer))


def reference_overlap(answer: str, reference: str) -> float:
    """Share of the reference answer's content stems that the answer also contains (1.0 if the reference has none)."""
    ref = content_stems(reference)
    return len(ref & content_stems(answer)) / len(ref) if ref else 1.0
