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

import json
import math
import re
import unicodedata
from pathlib import Path

import torch

from llmlab.chat import STOP_TOKENS, encode_chat
from llmlab.model import generate
from llmlab.sampling import Sampler
from llmlab.train import build_sft_examples, evaluate

from .corpus_writer import spelling
from .corpus_writer.diversity import words

__all__ = ["HELDOUT", "PROMPTS", "answer_number", "chat_answer_perplexity", "heldout_chat", "heldout_text", "load_heldout",
           "keyword_on_topic", "loop_rate", "text_scores", "chat_answers", "content_stems", "continuations", "on_topic",
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


# ---------------------------------------------------------------------------------------------
# The held-out set of issue 24 (heldout/): written by hand, apart from the training templates
# ---------------------------------------------------------------------------------------------
# ``heldout/questions.json``: everyday questions in several phrasings, each with the words an on-topic answer
# would use, and one-digit sums with their results; ``heldout/text.txt``: natural Spanish text, never trained on.
# Nothing in corpus_writer reads these files (tests/test_makedata_quality.py checks that no question and no
# sentence of the text appears in the corpus or the chat data).
HELDOUT = Path(__file__).resolve().parent / "heldout"
NUMBER_WORDS = {"cero": 0, "uno": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7,
                "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15,
                "dieciséis": 16, "diecisiete": 17, "dieciocho": 18}


# Set B: a second set of questions and sums, written later by someone who never read the chat templates (nor set A),
# from the list of facts alone. Set A's authors knew the templates; B is the blind measure.
SECOND_SET = "questions_b.json"


def load_heldout(folder: str | Path | None = None, *, questions: str = "questions.json") -> dict:
    """``{"questions": [{"q", "keywords"}], "sums": [{"q", "answer"}], "text": str}`` from ``heldout/``
    (``questions``: which set, ``SECOND_SET`` for set B)."""
    folder = Path(folder) if folder is not None else HELDOUT
    data = json.loads((folder / questions).read_text(encoding="utf-8"))
    return {"questions": data["questions"], "sums": data["sums"], "text": (folder / "text.txt").read_text(encoding="utf-8")}


def _plain(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")


def keyword_on_topic(answer: str, keywords: list[str]) -> bool:
    """Does ``answer`` contain a word that begins with one of ``keywords`` (case and accents ignored)?

    «Viven en el agua del mar.» is on topic for ``["agua", "mar"]``; «El viernes es un modelo.» is not. A word
    beginning, so that «perro» also accepts «perros» (not «perrito»: list it); digits count as words («4» for ``["4"]``).
    """
    plain = [_plain(w) for w in re.findall(r"\w+", answer)]
    keys = [_plain(k) for k in keywords]
    return any(w.startswith(k) for w in plain for k in keys)


def answer_number(answer: str) -> int | None:
    """The result an answer gives: its last number, in digits («7») or in words («siete»); ``None`` if it has none.

    The last one, because answers state the result at the end («2 + 3 = 5.», «Dos más tres son cinco.», «Tienes 4,
    porque 2 + 2 = 4.»); an answer that only repeats the question («2 + 3») counts as giving 3, which is wrong.
    """
    found = None
    for token in re.findall(r"\d+|[^\W\d_]+", answer.lower()):
        if token.isdigit():
            found = int(token)
        elif token in NUMBER_WORDS:
            found = NUMBER_WORDS[token]
    return found


def loop_rate(texts: list[str], n: int = 4, threshold: float = 0.2) -> float:
    """Share of ``texts`` that loop: more than ``threshold`` of their ``n``-grams of words or numbers repeat an earlier
    one of the same text («2 2 2 2 2» loops as much as «el agua, el agua, el agua»)."""
    def looped(text: str) -> bool:
        w = re.findall(r"\w+", text.lower())
        grams = [tuple(w[i:i + n]) for i in range(len(w) - n + 1)]
        return bool(grams) and 1 - len(set(grams)) / len(grams) > threshold

    return sum(looped(t) for t in texts) / len(texts) if texts else 0.0


@torch.no_grad()
def _answer(model, tok, question: str, style: str, max_new_tokens: int) -> tuple[str, bool]:
    """Greedy answer to one question, and whether it ended with a stop token (a clean stop)."""
    stops = [tok.special_tokens[t] for t in STOP_TOKENS[style]]
    ids = encode_chat([{"role": "user", "content": question}], tok, style, add_generation_prompt=True)
    room = min(max_new_tokens, model.config.max_seq_len - len(ids))
    full = generate(model, torch.tensor(ids), room, eos_token_id=stops).tolist()[len(ids):]
    stopped = bool(full) and full[-1] in stops
    return tok.decode([t for t in full if t not in stops]), stopped


def heldout_chat(model, tok, *, style: str = "chatml", heldout: dict | None = None, max_new_tokens: int = 40) -> dict:
    """Greedy answers to the held-out questions and sums: on-topic rate, sum accuracy, clean stops, loops.

    Returns ``{"on_topic", "sums_right", "clean_stops", "loops", "answers": [{"q", "answer", "ok"}],
    "sum_answers": [...]}`` (rates in 0..1).
    """
    heldout = heldout or load_heldout()
    answers, sums, stops = [], [], 0
    for item in heldout["questions"]:
        text, stopped = _answer(model, tok, item["q"], style, max_new_tokens)
        answers.append({"q": item["q"], "answer": text, "ok": keyword_on_topic(text, item["keywords"])})
        stops += stopped
    for item in heldout["sums"]:
        text, stopped = _answer(model, tok, item["q"], style, max_new_tokens)
        sums.append({"q": item["q"], "answer": text, "ok": answer_number(text) == item["answer"]})
        stops += stopped
    every = answers + sums
    return {"on_topic": sum(a["ok"] for a in answers) / len(answers), "sums_right": sum(a["ok"] for a in sums) / len(sums),
            "clean_stops": stops / len(every), "loops": loop_rate([a["answer"] for a in every]),
            "answers": answers, "sum_answers": sums}


def text_scores(model, tok, text: str, train_ids: torch.Tensor, *, bigram_k: float = 0.01, unigram_k: float = 0.001) -> dict:
    """Perplexity of ``model`` on ``text`` next to three baselines on the same tokens (``makedata.models.ngram_nll``):

    - ``bigram`` and ``unigram``: add-k models counted on ``train_ids`` (the corpus train split);
    - ``unigram_on_text``: a unigram fitted on ``text`` itself (it knows the text's own word frequencies, a baseline
      that a model which generalises must still beat).
    """
    from llmlab.train import encode_documents, evaluate

    from .models import ngram_nll

    ids = encode_documents([text], tok)
    V = len(tok)
    return {"tokens": int(ids.numel()), "model": math.exp(evaluate(model, ids)),
            "bigram": math.exp(ngram_nll(train_ids, ids, V, 2, bigram_k)),
            "unigram": math.exp(ngram_nll(train_ids, ids, V, 1, unigram_k)),
            "unigram_on_text": math.exp(ngram_nll(ids, ids, V, 1, unigram_k))}


def heldout_text(model, tok, train_ids: torch.Tensor, *, heldout: dict | None = None, samples: int = 40,
                 new_tokens: int = 60) -> dict:
    """es-base on the held-out text (``text_scores``) plus its own sampled text: valid-word rate and loops."""
    heldout = heldout or load_heldout()
    scores = text_scores(model, tok, heldout["text"], train_ids)
    texts = [c["text"] for c in continuations(model, tok, n=samples, new_tokens=new_tokens)]
    valid = valid_word_rate(texts)
    return {**scores, "valid_words": None if valid is None else valid["rate"], "loops": loop_rate(texts),
            "repetition": sum(repetition_rate(t) for t in texts) / len(texts)}


def heldout_measure(models_dir=None, *, samples: int = 40, data_dir=None) -> dict:
    """Every held-out number for one models folder (the shipped one by default): the same call before and after."""
    from llmlab import corpus, pretrained
    from llmlab.train import encode_documents

    tok = pretrained.load_tokenizer(models_dir=models_dir)
    train_ids = encode_documents(corpus.load_documents("train", data_dir=data_dir), tok)
    base = pretrained.load("es-base", models_dir=models_dir)[0]
    chat = pretrained.load("es-chat", models_dir=models_dir)[0]
    style = pretrained.info("es-chat", models_dir=models_dir).get("chat_style") or "chatml"
    heldout = load_heldout()
    out = {"es-base": heldout_text(base, tok, train_ids, heldout=heldout, samples=samples),
           "es-chat": heldout_chat(chat, tok, style=style, heldout=heldout)}
    if (HELDOUT / SECOND_SET).exists():
        out["es-chat-b"] = heldout_chat(chat, tok, style=style, heldout=load_heldout(questions=SECOND_SET))
    return out


def heldout_table(r: dict, label: str = "") -> str:
    """The held-out results as Markdown: one table for the text, one for the chat (rates in %)."""
    b, c = r["es-base"], r["es-chat"]
    vw = "n/a (no hunspell)" if b["valid_words"] is None else f"{100 * b['valid_words']:.1f} %"
    lines = [
        f"| {label or 'models'} | value |", "|---|---:|",
        f"| es-base perplexity on the held-out text ({b['tokens']} tokens) | {b['model']:.1f} |",
        f"| bigram (corpus train split) on it | {b['bigram']:.1f} |",
        f"| unigram (corpus train split) on it | {b['unigram']:.1f} |",
        f"| unigram fitted on the held-out text itself | {b['unigram_on_text']:.1f} |",
        f"| es-base valid-word rate (hunspell es_ES, sampled text) | {vw} |",
        f"| es-base samples that loop | {100 * b['loops']:.0f} % |",
        f"| es-chat on topic ({len(c['answers'])} held-out questions) | {100 * c['on_topic']:.0f} % |",
        f"| es-chat one-digit sums right ({len(c['sum_answers'])}) | {100 * c['sums_right']:.0f} % |",
        f"| es-chat answers that end with a stop token | {100 * c['clean_stops']:.0f} % |",
        f"| es-chat answers that loop | {100 * c['loops']:.0f} % |",
    ]
    if "es-chat-b" in r:  # the blind set (absent from measures taken before it existed)
        cb = r["es-chat-b"]
        lines += [f"| es-chat on topic, set B ({len(cb['answers'])} questions written blind) | {100 * cb['on_topic']:.0f} % |",
                  f"| es-chat one-digit sums right, set B ({len(cb['sum_answers'])}) | {100 * cb['sums_right']:.0f} % |",
                  f"| es-chat answers that end with a stop token, set B | {100 * cb['clean_stops']:.0f} % |"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python course/tools/makedata quality [--models-dir DIR ...] [--json PATH]``: the held-out tables."""
    import argparse

    parser = argparse.ArgumentParser(prog="python course/tools/makedata quality", description=main.__doc__)
    parser.add_argument("--models-dir", action="append", help="a models folder (repeatable; default: the shipped one)")
    parser.add_argument("--samples", type=int, default=40, help="sampled continuations of es-base")
    parser.add_argument("--json", help="also write every number and answer here")
    parser.add_argument("--answers", type=int, default=20, help="print this many held-out chat answers")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    results = {}
    for folder in args.models_dir or [None]:
        label = folder or "shipped"
        r = results[label] = heldout_measure(folder, samples=args.samples)
        print(heldout_table(r, label))
        for key, title in (("es-chat", None), ("es-chat-b", f"set B ({SECOND_SET}):")):
            if key in r:
                if title:
                    print(title)
                for a in spread(r[key]["answers"], args.answers) + r[key]["sum_answers"]:
                    print(f"- {'✓' if a['ok'] else '✗'} {a['q']} → {one_line_answer(a['answer'])}")
        print()
    if args.json:
        Path(args.json).write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


def one_line_answer(text: str) -> str:
    return text.replace("\n", "⏎").strip() or "(nothing)"
