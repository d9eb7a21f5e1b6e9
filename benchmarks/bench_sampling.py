"""Cost of the decoding policy per generated token, compared with the model's forward pass.

    python benchmarks/bench_sampling.py [--quick] [--threads N]

One process, one model, one vocabulary. Each repeat generates with every policy in turn (interleaved),
timing the forward passes (with KV cache, batch 1) and the sampler calls separately; the table shows the
median over repeats of the milliseconds per token and the ratio sampler / forward.

- greedy: ``argmax`` only (what ``generate`` does without options).
- Sampler chain: repetition penalty, temperature, top-k, top-p, min-p, multinomial draw.
- JSON constraint, warm: the chain plus ``JsonObjectConstraint`` (chapter 08's schema) with its mask
  cache already filled by earlier generations (the steady state of a server).
- JSON constraint, cold: a new constraint object for every generation, so every state's mask is
  computed by walking the vocabulary trie (the first request).

The model is the course's tiny pretrained ``es-base`` (``llmlab.pretrained``, about 3 M parameters, its real
2048-token BPE vocabulary, a Spanish prompt); with ``--random`` (or if the shipped weights are missing) a
randomly initialised ``llmlab.model.Transformer`` (Llama style, d_model 256, 6 layers, about 7 M parameters)
over a synthetic byte-level vocabulary of 4096 tokens (the 256 bytes plus Spanish words, sub-words, some
ending inside an accented character, numbers and JSON punctuation). The tiny model's context is 256 tokens,
so its JSON schema has shorter free-text fields than chapter 08's.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from llmlab.constrained import JsonObjectConstraint
from llmlab.sampling import Sampler

VOCAB = 4096
SCHEMA = {
    "categoria": ["ampliación_plazo", "incidencia_técnica", "consulta_académica", "otra"],
    "riesgo": ["bajo", "medio", "alto"],
    "accion_recomendada": {"type": "string", "minLength": 1, "maxLength": 60},
    "fuente": {"type": "string", "minLength": 1, "maxLength": 30},
}
WORDS = (
    "acción recomendada riesgo bajo medio alto categoría fuente política incidencia técnica documentada plazo "
    "entrega ampliación estudiante según sección artículo normativa académica consulta revisión solicitud "
    "aprobar denegar información también está más así qué cuándo dónde año niño corazón canción razón días "
    "mañana después través el la los las de del que en un una por con para no sí se su al es lo como pero "
    "sus le ya o fue este ha muy sin sobre entre cuando todo esta ser son dos también fue había era muy años "
    "hasta desde está mi porque qué sólo han yo hay vez puede todos así nos ni parte tiene él uno donde bien "
    "tiempo mismo ese ahora cada e vida otro después te otros aunque esa eso hace otra gobierno tan durante "
    "siempre día tanto ella tres sí dijo sido gran país según menos mundo año antes estado modelo tokens"
).split()


def build_vocab(size: int = VOCAB) -> tuple[list[bytes], int]:
    pieces: list[bytes] = [bytes([i]) for i in range(256)]
    seen = set(pieces)

    def add(b: bytes) -> None:
        if b and b not in seen and len(pieces) < size - 1:
            seen.add(b)
            pieces.append(b)

    for p in ('{"', '": "', '", "', '"}', '": ', ', "', ' "', '",', "}", "\n", "  ", "\\n"):
        add(p.encode())
    for n in range(100):
        add(str(n).encode())
    for w in WORDS:
        raw = w.encode()
        for piece in (raw, b" " + raw, w.capitalize().encode(), b'"' + raw, raw + b'"'):
            add(piece)
        for cut in range(2, len(raw)):
            add(raw[:cut])
            add(raw[cut:])
    letters = "abcdefghijklmnopqrstuvwxyzáéíóúñ"
    for a in letters:  # fill the rest with letter pairs and space-prefixed pairs
        for b in letters:
            add((a + b).encode())
            add((" " + a + b).encode())
    while len(pieces) < size - 1:  # never reached with the lists above, kept for other sizes
        add(f"<{len(pieces)}>".encode())
    eos = len(pieces)
    pieces.append(b"<|endoftext|>")
    return pieces, eos


SMALL_SCHEMA = {**SCHEMA, "accion_recomendada": {"type": "string", "minLength": 1, "maxLength": 24},
                "fuente": {"type": "string", "minLength": 1, "maxLength": 12}}


def load_pretrained():
    """(model, token_bytes, eos, special ids, prompt ids, name) for es-base, or None if not installed."""
    try:
        from llmlab import pretrained

        model, tok = pretrained.load("es-base")
    except (ImportError, FileNotFoundError, OSError):
        return None
    prompt = torch.tensor([[tok.bos_id] + tok.encode("La incidencia del estudiante se clasifica así:")])
    return model.eval(), tok.vocab_bytes(), tok.eos_id, tuple(tok.special_ids), prompt, \
        f"es-base (llmlab.pretrained), its {len(tok)}-token BPE vocabulary"


def build_model(vocab: int):
    try:
        from llmlab.model import ModelConfig, Transformer
    except ImportError:
        return _StandIn(vocab), "MLP stand-in (llmlab.model not found)"
    config = ModelConfig.llama_style(vocab_size=vocab, d_model=256, n_layers=6, n_heads=8, n_kv_heads=4,
                                     max_seq_len=512)
    return Transformer(config).eval(), "llmlab.model.Transformer (Llama style, d_model 256, 6 layers, GQA 8/4)"


class _StandIn(torch.nn.Module):
    """Embedding -> 6 residual MLP blocks -> LM head, on the last token only (no attention)."""

    def __init__(self, vocab: int, d: int = 256, layers: int = 6):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                torch.nn.Linear(4 * d, d)) for _ in range(layers))
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def new_cache(self):
        return None

    def forward(self, ids, cache=None):
        x = self.emb(ids[:, -1:])
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)


@torch.no_grad()
def generate_timed(model, prompt, max_new_tokens, sampler, eos=None):
    """Returns (forward seconds, sampler seconds, tokens generated)."""
    cache = model.new_cache()
    ids, step_input = prompt, prompt
    t_forward = t_sampler = 0.0
    for _ in range(max_new_tokens):
        t0 = time.perf_counter()
        logits = model(step_input, cache=cache)[:, -1, :]
        t1 = time.perf_counter()
        nxt = sampler(logits, ids)
        t2 = time.perf_counter()
        t_forward += t1 - t0
        t_sampler += t2 - t1
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        step_input = nxt[:, None]
        if eos is not None and int(nxt[0]) == eos:
            break
    return t_forward, t_sampler, ids.shape[1] - prompt.shape[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and tokens (a smoke run)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--random", action="store_true", help="random model and synthetic vocabulary")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    repeats, n_tokens = (3, 24) if args.quick else (7, 96)

    torch.manual_seed(0)
    shipped = None if args.random else load_pretrained()
    if shipped is not None:
        model, token_bytes, eos, specials, prompt, model_name = shipped
        schema = SMALL_SCHEMA
    else:
        token_bytes, eos = build_vocab()
        specials = ()
        model, model_name = build_model(len(token_bytes))
        prompt = torch.randint(0, 256, (1, 16))
        schema = SCHEMA
    context = getattr(getattr(model, "config", None), "max_seq_len", 512)
    n_params = sum(p.numel() for p in model.parameters())
    chain = dict(do_sample=True, temperature=0.8, top_k=50, top_p=0.95, min_p=0.02, repetition_penalty=1.1)

    def constraint():
        return JsonObjectConstraint(schema, token_bytes, eos, special_token_ids=specials)

    warm_constraint = constraint()
    json_budget = min(warm_constraint.max_new_tokens, context - prompt.shape[1])
    n_tokens = min(n_tokens, context - prompt.shape[1])
    g = torch.Generator()
    # Fill the warm constraint's cache (and warm up torch) before measuring.
    for seed in range(3):
        generate_timed(model, prompt, json_budget, Sampler(**chain, generator=g.manual_seed(100 + seed),
                                                           constraint=warm_constraint), eos)

    policies = {
        "greedy (argmax)": lambda seed: (Sampler(), None, n_tokens),
        "Sampler chain (rep, T, top-k, top-p, min-p)": lambda seed: (
            Sampler(**chain, generator=g.manual_seed(seed)), None, n_tokens),
        "chain + JSON constraint, warm cache": lambda seed: (
            Sampler(**chain, generator=g.manual_seed(seed), constraint=warm_constraint), eos, json_budget),
        "chain + JSON constraint, cold cache": lambda seed: (
            Sampler(**chain, generator=g.manual_seed(seed), constraint=constraint()), eos, json_budget),
    }
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in policies}
    for r in range(repeats):
        for name, make in policies.items():  # interleaved: every policy once per repeat
            sampler, stop, budget = make(r)
            t_fwd, t_smp, n = generate_timed(model, prompt, budget, sampler, stop)
            results[name].append((t_fwd / n, t_smp / n, n))

    print(f"model: {model_name}, {n_params / 1e6:.2f} M parameters; vocab {len(token_bytes)} tokens; "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); batch 1, KV cache")
    print(f"median of {repeats} interleaved repeats; JSON runs stop at EOS (tokens per run shown)\n")
    header = f"{'policy':46} {'forward ms/tok':>15} {'sampler ms/tok':>15} {'sampler/forward':>16} {'tokens':>7}"
    print(header)
    print("-" * len(header))
    for name, rows in results.items():
        fwd = statistics.median(r[0] for r in rows) * 1e3
        smp = statistics.median(r[1] for r in rows) * 1e3
        ratio = statistics.median(r[1] / r[0] for r in rows)
        tokens = statistics.median(r[2] for r in rows)
        print(f"{name:46} {fwd:15.3f} {smp:15.3f} {ratio:16.3f} {tokens:7.0f}")

    # One-off costs of a constraint, medians of `repeats` fresh objects.
    build, walk = [], []
    inside_string = list('{"categoria": "otra", "riesgo": "bajo", "accion_recomendada": "'.encode())
    for _ in range(repeats):
        t0 = time.perf_counter()
        c = JsonObjectConstraint(schema, token_bytes, eos, special_token_ids=specials, prompt_length=0)
        t1 = time.perf_counter()
        c.allowed_mask(inside_string)  # free text: almost the whole trie is walked
        t2 = time.perf_counter()
        build.append(t1 - t0)
        walk.append(t2 - t1)
    print(f"\nJsonObjectConstraint construction (vocabulary trie): {statistics.median(build) * 1e3:.1f} ms; "
          f"first mask inside a free-text string (full trie walk): {statistics.median(walk) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
