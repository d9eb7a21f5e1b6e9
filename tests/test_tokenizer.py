"""llmlab.tokenizer: byte-level BPE (round trip, special tokens, training, saving, parity with HF tokenizers)."""

import importlib.util
import json
import pathlib
import random
import string
import warnings
from collections import Counter

import pytest

from llmlab import tokenizer as tk
from llmlab.corpus import load_documents
from llmlab.tokenizer import DEFAULT_SPECIAL_TOKENS, BPETokenizer, compression_stats, pre_tokenize

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
DATA = FIXTURES / "data"


def load_hf_helper():
    spec = importlib.util.spec_from_file_location("llmlab_tests_hf_bpe", FIXTURES / "hf_bpe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def docs():
    return load_documents("train", data_dir=DATA)


@pytest.fixture(scope="module")
def tok(docs):
    return BPETokenizer.train(docs, vocab_size=450)  # the fixture text has pairs for ~490 ids


# ---------------------------------------------------------------------------------------------
# Random text: every kind of character a student (or an attacker) can paste
# ---------------------------------------------------------------------------------------------
POOLS = [
    string.ascii_letters + string.digits + string.punctuation + "   ",
    "áéíóúÁÉÍÓÚñÑüÜçÇ¿¡«»—–…ºª€·",
    ["😀", "👍🏽", "👨\u200d👩\u200d👧", "🇪🇸", "❤️", "✨", "🦙"],  # skin tone, ZWJ family, flag, VS16
    "中文日本語한국어Ωжشहिन्दी",
    "".join(map(chr, range(32))) + "\x7f\x85\xa0\u2028\u2029\u3000\ufeff\u200b",
    ["e\u0301", "n\u0303", "u\u0308"],  # Spanish letters typed as letter + combining accent (NFD)
    ["<|eos|>", "<|bos|>", "[INST]", "[/INST]", "<|user|>", "<|", "|>", "<|end"],
    "0123456789٣",
]


def random_text(rng: random.Random, max_len: int = 60) -> str:
    out = []
    for _ in range(rng.randrange(max_len)):
        kind = rng.random()
        if kind < 0.8:
            pool = rng.choice(POOLS)
            out.append(rng.choice(pool))
        elif kind < 0.9:  # any code point that UTF-8 can encode (no surrogates)
            cp = rng.randrange(0x110000 - 0x800)
            out.append(chr(cp if cp < 0xD800 else cp + 0x800))
        else:  # random bytes, made valid UTF-8 with replacement characters
            out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))).decode("utf-8", errors="replace"))
    return "".join(out)


RANDOM_TEXTS = [random_text(random.Random(seed)) for seed in range(400)]
SPANISH = "¿Qué tal, señora Muñoz? El pingüino comió 2024 cerezas en Logroño… ¡Olé!"


# ---------------------------------------------------------------------------------------------
# Pre-tokenization
# ---------------------------------------------------------------------------------------------
def test_pre_tokenize_keeps_spanish_words_whole():
    assert pre_tokenize(SPANISH) == [
        "¿", "Qué", " tal", ",", " señora", " Muñoz", "?", " El", " pingüino", " comió",
        " 202", "4", " cerezas", " en", " Logroño", "…", " ¡", "Olé", "!",
    ]  # fmt: skip
    # an accent typed as a separate combining character stays inside its word
    assert pre_tokenize("cafe\u0301 con n\u0303u") == ["cafe\u0301", " con", " n\u0303u"]
    # runs of spaces: the last space goes with the next word
    assert pre_tokenize("a   b\n\nc ") == ["a", "  ", " b", "\n\n", "c", " "]


@pytest.mark.parametrize("pattern", [tk.DEFAULT_PATTERN, r"\w+", r"x*", r"(?!)", r"\s+|\S+"])
def test_pre_tokenize_never_loses_text(pattern):
    for text in RANDOM_TEXTS[:100] + [""]:
        chunks = pre_tokenize(text, pattern)
        assert "".join(chunks) == text
        assert all(chunks)


# ---------------------------------------------------------------------------------------------
# Round trip
# ---------------------------------------------------------------------------------------------
def test_round_trip_random_text(tok):
    for text in RANDOM_TEXTS:
        ids = tok.encode(text)
        assert tok.decode(ids) == text
        assert tok.decode_bytes(ids) == text.encode("utf-8")
        assert not any(tok.is_special(i) for i in ids)  # nothing allowed, nothing special


def test_round_trip_edge_cases(tok):
    for text in ["", " ", "\x00", "\n" * 5, "ñ", "😀" * 20, "a" * 3000, " " * 1000, SPANISH * 30, "\ufeffhola"]:
        assert tok.decode(tok.encode(text)) == text
    assert tok.encode("") == []
    assert tok.decode([]) == ""


def test_round_trip_with_special_tokens_allowed(tok):
    for text in RANDOM_TEXTS[:200]:
        assert tok.decode(tok.encode(text, allowed_special="all")) == text


def test_byte_tokenizer_is_one_token_per_byte():
    plain = BPETokenizer()
    assert len(plain) == 256
    assert plain.encode("ñ😀") == list("ñ😀".encode("utf-8"))


def test_merge_scans_left_to_right():
    assert tk.merge_pair([1, 1, 1], (1, 1), 9) == [9, 1]
    assert tk.merge_pair([1, 2, 1, 2, 3], (1, 2), 9) == [9, 9, 3]


# ---------------------------------------------------------------------------------------------
# Special tokens
# ---------------------------------------------------------------------------------------------
def test_special_tokens_only_when_allowed(tok):
    text = "hola<|eos|>adiós<|bos|>"
    plain = tok.encode(text)
    assert tok.eos_id not in plain and tok.bos_id not in plain  # pasted markers stay text
    assert tok.decode(plain) == text
    assert tok.encode(text, allowed_special="all") == tok.encode("hola") + [tok.eos_id] + tok.encode("adiós") + [tok.bos_id]
    only_eos = tok.encode(text, allowed_special={"<|eos|>"})
    assert only_eos.count(tok.eos_id) == 1 and tok.bos_id not in only_eos
    assert tok.encode(text, allowed_special="none") == plain == tok.encode(text, allowed_special=None)
    # "[/INST]" is matched whole, not as "[" + "/INST]" or as a prefix of something else
    assert tok.encode("[/INST][INST]", allowed_special="all") == [tok.token_to_id("[/INST]"), tok.token_to_id("[INST]")]


def test_special_ids_layout(tok):
    assert list(tok.special_tokens) == list(DEFAULT_SPECIAL_TOKENS)
    n_regular = 256 + len(tok.merges)
    assert tok.special_ids == list(range(n_regular, len(tok)))
    assert (tok.bos_id, tok.eos_id, tok.pad_id) == tuple(tok.special_tokens[t] for t in ("<|bos|>", "<|eos|>", "<|pad|>"))
    assert all(tok.is_special(i) for i in tok.special_ids) and not tok.is_special(n_regular - 1)
    assert tok.decode([tok.bos_id, 104, tok.eos_id]) == "<|bos|>h<|eos|>"
    assert tok.decode([tok.bos_id, 104, tok.eos_id], skip_special=True) == "h"
    assert BPETokenizer().bos_id is None


def test_special_tokens_in_training_text_are_not_learned(docs):
    marked = [d + "<|eos|>" for d in docs] * 3
    tok = BPETokenizer.train(marked, 400)
    assert not any(b"<|" in b or b"|>" in b for b in tok.vocab_bytes()[: len(tok) - len(tok.special_tokens)])


# ---------------------------------------------------------------------------------------------
# Looking at tokens
# ---------------------------------------------------------------------------------------------
def test_token_bytes_and_vocab_bytes(tok):
    vocab = tok.vocab_bytes()
    assert len(vocab) == len(tok) == tok.vocab_size
    assert vocab[:256] == [bytes([b]) for b in range(256)]
    for i, (a, b) in enumerate(tok.merges):
        assert vocab[256 + i] == vocab[a] + vocab[b]
    assert all(vocab[i] == tok.token_bytes(i) for i in range(len(tok)))
    assert tok.token_bytes(tok.eos_id) == b"<|eos|>"
    for text in RANDOM_TEXTS[:50]:
        assert b"".join(vocab[i] for i in tok.encode(text)) == text.encode("utf-8")


def test_id_to_token_and_back(tok):
    for i in range(len(tok)):
        j = tok.token_to_id(tok.id_to_token(i))
        assert tok.token_bytes(j) == tok.token_bytes(i)
        if not tok.is_special(i):  # bytes look up regular tokens; specials go by name
            assert tok.token_to_id(tok.token_bytes(i)) in (i, j)
    assert tok.id_to_token(ord("a")) == "a"
    assert tok.id_to_token(0xC3) == "\\xc3"  # half of "ñ" on its own is not text
    assert tok.token_to_id("<|user|>") == tok.special_tokens["<|user|>"]


def test_pieces_and_show(tok):
    assert "".join(tok.pieces("hola, que tal")) == "hola, que tal"
    assert tok.pieces("¿ñ?") == ["\\xc2", "\\xbf", "ñ", "?"]  # "¿" is rare in the fixture: still two bytes
    shown = tok.show("a\nb")
    assert shown == "[a][\\n][b]"
    assert tok.show("<|eos|>", allowed_special="all", with_ids=True) == f"[<|eos|>:{tok.eos_id}]"
    assert "\\xc3" in BPETokenizer().show("ñ")


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------
def naive_merges(docs, n_merges, min_frequency=2):
    """Reference BPE: recount every pair after every merge (slow, obviously right)."""
    chunks = Counter(c.encode("utf-8") for d in docs for c in pre_tokenize(d))
    words = [(list(c), f) for c, f in chunks.items()]
    merges = []
    for _ in range(n_merges):
        counts = Counter()
        for w, f in words:
            for p in zip(w, w[1:]):
                counts[p] += f
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        if counts[best] < min_frequency:
            break
        merges.append(best)
        words = [(tk.merge_pair(w, best, 255 + len(merges)), f) for w, f in words]
    return merges


def test_incremental_training_matches_full_recount(docs):
    tok = BPETokenizer.train(docs, 256 + 200, special_tokens=())
    assert tok.merges == naive_merges(docs, 200)


def test_training_is_deterministic_and_order_free(docs):
    a = BPETokenizer.train(docs, 450)
    b = BPETokenizer.train(list(reversed(docs)), 450)
    c = BPETokenizer.train("".join(docs), 450)  # one string: chunks and counts are the same
    assert a.merges == b.merges == c.merges
    assert len(a) == 450


def test_merges_reduce_token_count_on_spanish(docs):
    held_out = load_documents("validation", data_dir=DATA) + load_documents("unseen", data_dir=DATA)
    counts = []
    for vocab_size in (256 + len(DEFAULT_SPECIAL_TOKENS), 350, 450):
        tok = BPETokenizer.train(docs, vocab_size)
        counts.append([len(tok.encode(t)) for t in ("".join(docs), "".join(held_out))])
    n_bytes = len("".join(docs).encode("utf-8"))
    assert counts[0][0] == n_bytes
    assert counts[0][0] > counts[1][0] > counts[2][0]
    assert counts[0][1] > counts[1][1] > counts[2][1]
    assert counts[2][0] < 0.6 * n_bytes  # 450 ids already cut the training text by 40 %


def test_training_stops_early_with_a_warning():
    with pytest.warns(UserWarning, match="ran out of pairs"):
        tok = BPETokenizer.train("abcabc", 1000)
    assert 256 + len(DEFAULT_SPECIAL_TOKENS) < len(tok) < 1000
    # "abcabc": "ab" (2, ties with "bc" and wins by smaller ids), then "abc" (2); "abcabc" is seen once
    assert [tok.token_bytes(256 + i) for i in range(len(tok.merges))] == [b"ab", b"abc"]
    with pytest.warns(UserWarning, match="after 3 of 44 merges"):
        once = BPETokenizer.train("abcabc", 300, special_tokens=(), min_frequency=1)
    assert once.token_bytes(258) == b"abcabc"


def test_custom_pre_tokenizer_pattern(docs):
    tok = BPETokenizer.train(docs, 420, pre_tokenize=r"\S+|\s+")
    assert tok.pattern == r"\S+|\s+"
    assert any(b"," in b and len(b) > 1 for b in tok.vocab_bytes()[256:])  # "word," can now be one token
    assert tok.decode(tok.encode(SPANISH)) == SPANISH


# ---------------------------------------------------------------------------------------------
# Saving and loading
# ---------------------------------------------------------------------------------------------
def test_save_load_identity(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "llmlab-bpe" and data["version"] == 1
    a, b = tok.merges[0]
    assert f"[{a}, {b}]" in path.read_text(encoding="utf-8")  # one merge per line, readable
    again = BPETokenizer.load(path)
    assert again.merges == tok.merges
    assert again.special_tokens == tok.special_tokens
    assert again.pattern == tok.pattern
    assert again.vocab_bytes() == tok.vocab_bytes()
    for text in RANDOM_TEXTS[:100]:
        assert again.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert len(path.read_text(encoding="utf-8").splitlines()) < 3 * len(tok) + 20


def test_load_rejects_bad_files(tok, tmp_path):
    data = tok.to_dict()
    for broken, match in [
        ({**data, "version": 99}, "version"),
        ({**data, "format": "other"}, "format"),
        ({**data, "tokens": data["tokens"][:-1] + ["x"]}, "corrupted"),
        ({**data, "merges": [[5, 9999]]}, "does not exist"),
        ({k: v for k, v in data.items() if k != "merges"}, "merges"),
    ]:
        with pytest.raises(ValueError, match=match):
            BPETokenizer.from_dict(broken)
    path = tmp_path / "bad.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        BPETokenizer.load(path)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------
def test_bad_input_raises_clear_errors(tok, docs):
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(b"hola")
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(None)
    with pytest.raises(ValueError, match="not encodable as UTF-8"):
        tok.encode("a\ud800b")
    with pytest.raises(ValueError, match="unknown special tokens"):
        tok.encode("x", allowed_special={"<|nope|>"})
    with pytest.raises(TypeError, match="allowed_special"):
        tok.encode("x", allowed_special="<|eos|>")
    with pytest.raises(IndexError, match="out of range"):
        tok.decode([len(tok)])
    with pytest.raises(IndexError, match="out of range"):
        tok.decode([-1])
    with pytest.raises(TypeError, match="integers"):
        tok.decode(["a"])
    with pytest.raises(TypeError, match="integers"):
        tok.token_bytes(1.0)
    with pytest.raises(ValueError, match="not a token"):
        tok.token_to_id("palabra-que-no-existe")
    with pytest.raises(TypeError):
        tok.token_to_id(5)
    with pytest.raises(ValueError, match="vocab_size must be >="):
        BPETokenizer.train(docs, 100)
    with pytest.raises(TypeError, match="vocab_size"):
        BPETokenizer.train(docs, 500.0)
    with pytest.raises(TypeError, match="item 1"):
        BPETokenizer.train(["hola", 3], 300)
    with pytest.raises(ValueError, match="twice"):
        BPETokenizer(special_tokens=["<|a|>", "<|a|>"])
    with pytest.raises(ValueError, match="non-empty"):
        BPETokenizer(special_tokens=[""])
    with pytest.raises(ValueError, match="regular expression"):
        BPETokenizer(pattern="(")
    with pytest.raises(TypeError, match="list of strings"):
        BPETokenizer.train(docs, 300, special_tokens="<|bos|>")
    with pytest.raises(TypeError, match="decode bytes"):
        BPETokenizer.train(b"hola", 300)
    with pytest.raises(TypeError, match="pre_tokenize"):
        BPETokenizer.train(docs, 300, pre_tokenize=3)


def test_decode_accepts_numpy_and_torch_ids(tok):
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    ids = tok.encode(SPANISH)
    assert tok.decode(np.array(ids)) == SPANISH
    assert tok.decode(torch.tensor(ids)) == SPANISH


def test_decode_of_a_cut_character(tok):
    cut = list("ñ".encode("utf-8"))[:1]
    assert tok.decode(cut) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode(cut, errors="strict")


# ---------------------------------------------------------------------------------------------
# Compression
# ---------------------------------------------------------------------------------------------
def test_compression_stats(tok):
    text = "El caché KV guarda claves y valores. ¿Cuánto ocupa?"
    stats = compression_stats(BPETokenizer(), text)  # bytes: one token per byte
    assert stats["tokens"] == stats["bytes"] == len(text.encode("utf-8"))
    assert stats["characters"] == len(text) and stats["words"] == 9
    assert stats["bytes_per_token"] == pytest.approx(1.0, abs=0)
    bpe = compression_stats(tok, text)
    assert bpe["tokens"] == len(tok.encode(text))
    assert bpe["tokens_per_word"] == pytest.approx(bpe["tokens"] / 9, rel=1e-12)
    assert bpe["characters_per_token"] == pytest.approx(len(text) / bpe["tokens"], rel=1e-12)
    assert bpe["tokens"] < stats["tokens"]
    with pytest.raises(ValueError, match="at least one word"):
        compression_stats(tok, "   ")
    with pytest.raises(TypeError, match="encode"):
        compression_stats(object(), text)


# ---------------------------------------------------------------------------------------------
# Parity with HF tokenizers: the same merges give the same ids
# ---------------------------------------------------------------------------------------------
def test_same_ids_as_hf_tokenizers_with_the_same_merges(tok, docs):
    pytest.importorskip("tokenizers")
    hf = load_hf_helper().to_hf_tokenizer(tok)
    texts = docs + load_documents("unseen", data_dir=DATA) + [SPANISH, "e\u0301l 😀👍🏽 中文 x_y 12345 ¡¿"]
    for text in texts:
        assert hf.encode(text).ids == tok.encode(text, allowed_special="all")
    # random text (controls, emoji, any code point, pasted markers): same ids, same decoding
    for text in RANDOM_TEXTS:
        ids = tok.encode(text, allowed_special="all")
        assert hf.encode(text).ids == ids, repr(text)
        assert hf.decode(ids, skip_special_tokens=False) == text


def test_hf_trainer_learns_the_same_vocabulary(tok, docs):
    pytest.importorskip("tokenizers")
    helper = load_hf_helper()
    hf = helper.train_hf_bpe(docs, len(tok), tok.pattern, tok.special_tokens)
    assert hf.get_vocab_size() == len(tok)
    ours = set(tok.vocab_bytes()[: len(tok) - len(tok.special_tokens)])
    theirs = helper.hf_vocab_bytes(hf, tok.special_tokens)
    # Same algorithm, same counts; only ties are broken differently (HF numbers the 256 bytes in
    # another order), which can swap the last few merges.
    assert len(ours & theirs) >= 0.97 * len(ours)


def test_hf_pre_tokenizer_splits_spanish_like_ours():
    tokenizers = pytest.importorskip("tokenizers")
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(tk.DEFAULT_PATTERN), behavior="isolated")
    for text in [SPANISH, "Año 1999: «¡Qué frío!», dijo Begoña.\n\n  —Sí.", "e\u0301 \t x_y"]:
        assert [p for p, _ in split.pre_tokenize_str(text)] == pre_tokenize(text)
