"""Lessons are claims, and claims are tested.

Every effect a lab's prose states ("la perplejidad baja", "el voraz se repite", "la capacidad crece con los clientes")
is a row of ``CLAIMS``: the lab, the cell it belongs to (``anchor``: a line of that cell's code, which survives new
cells and renumbering), what the sentence claims in a few words, how the number is read from the cell's stored
output (``measure``) and the robust check (``holds``: several seeds, prompts or questions with their spread, ratios,
CPU time or engine steps, never one sample or a wall-clock figure). ``test_stored_output_supports_its_claim`` asserts
every row on the executed solution notebook (``solutions/*/*.ipynb``); the ``test_library_*`` tests assert the main
ones again on the library calls that produce them, so a change in ``llmlab`` that breaks a lesson fails here even
before the notebooks are rebuilt.

``python tests/test_claims.py`` prints the claims table (claim → measured value → holds) from the stored notebooks.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------------------------------
# Reading a stored notebook
# ---------------------------------------------------------------------------------------------------------------------
def notebook_path(lab: str) -> Path:
    """``solutions/labNN-*/labNN-*.ipynb`` for ``lab = "labNN"``."""
    found = sorted(REPO.glob(f"solutions/{lab}-*/{lab}-*.ipynb"))
    if len(found) != 1:
        raise FileNotFoundError(f"expected one solution notebook for {lab}, found {found}")
    return found[0]


_NOTEBOOKS: dict[str, list[dict]] = {}


def cell_output(lab: str, anchor: str) -> str:
    """The stored text output (streams and plain results) of the one code cell of ``lab`` whose code has ``anchor``."""
    if lab not in _NOTEBOOKS:
        _NOTEBOOKS[lab] = json.loads(notebook_path(lab).read_text(encoding="utf-8"))["cells"]
    cells = [c for c in _NOTEBOOKS[lab] if c["cell_type"] == "code" and anchor in "".join(c["source"])]
    if len(cells) != 1:
        raise LookupError(f"{lab}: {len(cells)} code cells contain the anchor {anchor!r} (expected one)")
    parts = []
    for out in cells[0].get("outputs", []):
        if "text" in out:
            parts.append("".join(out["text"]))
        elif "text/plain" in out.get("data", {}):
            parts.append("".join(out["data"]["text/plain"]))
    return "".join(parts)


def _num(text: str) -> float:
    """A number as the labs print it: ``1 234.5`` (thin or plain spaces), ``0,5`` or ``+1.33``."""
    return float(text.replace("\u2009", "").replace("\u202f", "").replace(" ", "").replace(",", "."))


def _find(pattern: str, text: str) -> list[tuple]:
    found = re.findall(pattern, text)
    if not found:
        raise AssertionError(f"pattern {pattern!r} not found in the stored output:\n{text[:600]}")
    return found


# ---------------------------------------------------------------------------------------------------------------------
# Measures: stored output -> numbers
# ---------------------------------------------------------------------------------------------------------------------
def m_lab01_sampling(out):
    ((paris, lyon, azul),) = _find(r"París ([\d.]+), Lyon ([\d.]+), azul ([\d.]+)", out)
    return {"París": _num(paris), "Lyon": _num(lyon), "azul": _num(azul)}


def m_lab05_seeds(out):
    """The spread table of lab05's load-balancing experiment: {run: (loss mean, min, max, share mean, min, max)}."""
    rows = _find(r"\n(MoE sin aux\.|MoE aux\. 0\.01|MoE aux\. 0\.1|denso)\s+([\d.]+) \(([\d.]+)–([\d.]+)\)"
                 r"\s+(?:([\d.]+) \(([\d.]+)–([\d.]+)\)|—)", out)
    return {row[0]: tuple(_num(v) if v else None for v in row[1:]) for row in rows}


def m_lab04_repetition(out):
    return {name: _num(v) / 100 for name, v in _find(r"(\w+)\s+grupos de 4 tokens repetidos:\s+([\d.]+) %", out)}


def m_lab05_scaling(out):
    ((att, rec),) = _find(r"la atención tarda ×([\d.]+), la recurrencia ×([\d.]+)", out)
    return {"attention ×": _num(att), "recurrence ×": _num(rec)}


def m_lab06_table(out):
    rows = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 3 and all(re.fullmatch(r"\d+\.\d", w) for w in words[-2:]) and "perplejidad" not in line:
            rows[line[:28].strip()] = (_num(words[-2]), _num(words[-1]))
    base = next(v for k, v in rows.items() if k.endswith("sin adaptar"))
    runs = {k: v for k, v in rows.items() if not k.endswith("sin adaptar")}
    (hand,) = _find(r"escrita a mano de la validación .*perplejidad ([\d.]+)", out)
    return {"base answer ppl": base[0], "best run answer ppl": min(v[0] for v in runs.values()),
            "worst run answer ppl": max(v[0] for v in runs.values()),
            "base plain ppl (whole validation)": base[1], "min run plain ppl": min(v[1] for v in runs.values()),
            "base hand-written ppl": _num(hand), "runs": len(runs)}


def m_lab06_format(out):
    found = {m.group(1).strip(): (int(m.group(2)), int(m.group(4)), int(m.group(3))) for m in
             re.finditer(r"^(.*?)coincidencia exacta: (\d+) de (\d+)\s+una frase corta: (\d+) de \d+", out, re.M)}
    if not found:
        raise AssertionError(f"no exact-match lines in the stored output:\n{out[:600]}")
    base = next(v for k, v in found.items() if "sin adaptar" in k)
    adapter = found["con el adaptador"]
    return {"questions": adapter[2], "adapter short sentence": adapter[1], "base short sentence": base[1],
            "adapter exact": adapter[0], "verdict says format only": "aprendió sobre todo el formato" in out}


def m_lab06_distill(out):
    (diff,) = _find(r"diferencia \(suave − dura\): ([+-][\d.]+) nats", out)
    return {"soft − hard (nats/token)": _num(diff)}


def m_lab07_quant(out):
    table = re.compile(r"^\s*(\w+)\s+[\d.]+ MB\s+[\d.]+×\s+([\d.]+)\s+([+-][\d.]+) %", re.M)
    rows = {m.group(1): _num(m.group(3)) / 100 for m in table.finditer(out)}
    ppl = {m.group(1): _num(m.group(2)) for m in table.finditer(out)}
    (tokens,) = _find(r"perplejidad sobre ([\d\u2009 ]+) tokens de la validación escrita a mano", out)
    return {**rows, "tokens": _num(tokens), "f32 ppl": ppl["f32"]}


def m_lab08_capacity(out):
    rows = {int(c): (_num(step), _num(cpu)) for c, step, cpu in
            _find(r"(\d+) clientes:\s+([\d.]+) tokens por paso del motor · ([\d.]+) veces", out)}
    return {"tokens/step": {c: v[0] for c, v in rows.items()}, "CPU throughput × (vs 1 client)":
            {c: v[1] for c, v in rows.items()}}


def m_lab08_batching(out):
    steps = {p: int(n) for p, n, _ in _find(r"(static|continuous)\s*:\s+(\d+) pasos, .*?\(simulador: (\d+)", out)}
    sims = {p: int(s) for p, _, s in _find(r"(static|continuous)\s*:\s+(\d+) pasos, .*?\(simulador: (\d+)", out)}
    return {"engine steps": steps, "simulator steps": sims}


def m_lab08_speculative(out):
    ((alpha, per_pass, formula),) = _find(r"α = ([\d.]+) · tokens por pasada ([\d.]+) \(fórmula con esa α: ([\d.]+)\)", out)
    return {"α": _num(alpha), "tokens/pass": _num(per_pass), "formula": _num(formula),
            "same text": "mismo texto que el objetivo solo: True" in out}


def m_lab09_speculative(out):
    ((alpha, per_pass, formula),) = _find(r"α = ([\d.]+) · tokens por pasada ([\d.]+) \(fórmula con esa α: ([\d.]+)\)", out)
    ((c, speedup, breakeven, verdict),) = _find(r"c = ([\d.]+) .*?aceleración prevista ([\d.]+)× · hace falta α ≥ "
                                                r"([\d.]+) para no perder · (compensa|no compensa)", out)
    return {"α": _num(alpha), "tokens/pass": _num(per_pass), "formula": _num(formula), "c": _num(c),
            "speed-up": _num(speedup), "break-even α": _num(breakeven), "verdict": verdict,
            "same text": "mismo texto que es-chat solo: True" in out}


def m_lab09_templates(out):
    return {name: {"ratio": _num(r), "q1": _num(q1), "q3": _num(q3), "worse": int(w), "of": int(n)} for
            name, r, q1, q3, w, n in
            _find(r"(\w+)\s+perplejidad × ([\d.]+) .*?\(cuartiles ([\d.]+)–([\d.]+)\); empeora en (\d+) de (\d+)", out)}


def m_lab09_presets(out):
    rows = {}
    for name, starts, agree in _find(r"(\w+)\s+\{[^}]*\}\s+comienzos distintos ([\d.]+) de \d+.*?tokens iguales a la "
                                     r"voraz ([\d.]+)\s*%", out.replace("\n    ", " ")):
        rows[name] = {"distinct starts": _num(starts), "agreement with greedy": _num(agree) / 100}
    return rows


def m_lab09_json(out):
    (obj,) = _find(r"con restricción: (\{.*\})", out)
    return {"object": json.loads(obj)}


def m_lab03_gqa(out):
    rows = {m.group(1): _num(m.group(2)) for m in re.finditer(r"^(\w+ \(\d+ KV\))\s+([\d.]+) GiB", out, re.M)}
    if not rows:
        raise AssertionError(f"no KV-cache rows in the stored output:\n{out[:600]}")
    return rows


def m_lab02_slope(out):
    (slope,) = _find(r"pendiente ajustada \(exponente de n\): ([\d.]+)", out)
    return {"fitted exponent of n": _num(slope)}


def m_lab07_speed(out):
    return {f: _num(x) for f, x in _find(r"(\w+):\s+[\d.]+ tokens por segundo de CPU\s+\(([\d.]+)× la velocidad", out)}


def m_lab07_nf4(out):
    rows = {int(b): {"q4_0": _num(q), "symmetric": _num(u), "nf4": _num(n)} for b, q, u, n in
            _find(r"(?m)^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+NF4 / Q4_0", out)}
    return {"rows": rows, "levels": len(_find(r"niveles de NF4: \[([^\]]*)\]", out)[0].split())}


def m_lab08_prefix(out):
    ((same, saved, total),) = _find(r"coinciden: (True|False) · prefill ahorrado: ([\d\u2009 ]+) de ([\d\u2009 ]+) tokens",
                                    out)
    return {"engine = function": same == "True", "saved": _num(saved), "prompt tokens": _num(total)}


def m_lab09_prefill(out):
    rows = [(int(n), _num(per), _num(dec)) for n, per, dec in
            _find(r"prompt de\s+(\d+) tokens: prefill\s+[\d.]+ ms \(\s*([\d.]+) µs por token\)\s+un paso de decode\s+([\d.]+) ms",
                  out)]
    return {"µs/token shortest": rows[0][1], "µs/token longest": rows[-1][1],
            "max prefill µs/token / decode step µs": max(per / (dec * 1e3) for _, per, dec in rows)}


# ---------------------------------------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Claim:
    key: str
    lab: str
    anchor: str  # a line of the cell's code
    says: str  # the prose's claim, in a few words
    measure: Callable[[str], dict]
    holds: Callable[[dict], bool]
    check: str  # the robust check, in words (for the table)


LAB09_JSON_SCHEMA_VALUES = {
    "categoria": {"ampliacion_plazo", "incidencia_tecnica", "consulta_academica"},
    "riesgo": {"bajo", "medio", "alto"},
    "accion_recomendada": {"pedir_ampliacion_con_justificante", "rechazar_la_peticion", "derivar_a_secretaria"},
    "fuente": {"normativa_de_plazos", "normativa_de_incidencias"},
}

CLAIMS = [
    Claim("lab01-sampling", "lab01", "frecuencias = np.bincount(",
          "sampled frequencies approach the softmax (94.7 / 4.7 / 0.6 %); «azul» is rare, never impossible",
          m_lab01_sampling,
          lambda m: abs(m["París"] - 0.947) < 0.015 and abs(m["Lyon"] - 0.047) < 0.012 and 0 < m["azul"] < 0.015,
          "each frequency within 3 σ of its probability (N_MUESTRAS draws); azul > 0"),
    Claim("lab02-attention-n2", "lab02", "A_n = torch.softmax(Q_n @ K_n.T / 8.0, dim=-1)",
          "the attention matrix's cost grows like n² (×4 when n doubles)",
          m_lab02_slope,
          lambda m: 1.6 <= m["fitted exponent of n"] <= 2.6,
          "log-log slope of CPU time (best of REPETICIONES), n = 256…2048, in [1.6, 2.6]"),
    Claim("lab03-gqa-cache", "lab03", 'print(f"{nombre:12s} {tam:7.2f} GiB")',
          "with 8 KV heads (Llama 3 8B) the KV cache is 4 times smaller than with MHA",
          m_lab03_gqa,
          lambda m: abs(m["MHA (32 KV)"] / m["GQA (8 KV)"] - 4) < 1e-6,
          "exact: MHA GiB / GQA-8 GiB = 4"),
    Claim("lab04-greedy-loops", "lab04", "repetido[nombre] = float(np.mean(partes))",
          "greedy decoding repeats itself more than any sampling preset; the more randomness, the fewer loops",
          m_lab04_repetition,
          lambda m: (m["deterministic"] > max(v for k, v in m.items() if k != "deterministic")
                     and 3 * m["creative"] < m["deterministic"] and m["creative"] < min(m["precise"], m["code"])),
          "repeated 4-grams, mean of 6 prompts × 3 seeds × 160 tokens: greedy > every sampled preset, "
          "creative < greedy / 3 and below both low-temperature presets"),
    Claim("lab05-attention-n2", "lab05", "tiempos_atencion.append(mide(",
          "attention time grows like n², a linear recurrence like n",
          m_lab05_scaling,
          lambda m: m["attention ×"] > 3 * m["recurrence ×"] and m["attention ×"] > 16,
          "CPU-time ratios 128 → 2048 tokens (best of 3): attention > 16× and > 3 × the recurrence's"),
    Claim("lab05-moe-seeds", "lab05", "dispersion = seed_spread(resultados)",
          "over three seeds the aux loss at 0.01 never lowers the busiest expert's share; at 0.1 it lowers it on "
          "average but not on every seed; the seed moves the validation loss more than the choice of run",
          m_lab05_seeds,
          lambda m: (len(m) == 4 and m["MoE aux. 0.01"][3] >= m["MoE sin aux."][3] - 0.005
                     and m["MoE aux. 0.1"][3] < m["MoE sin aux."][3] - 0.02 and m["MoE aux. 0.1"][5] >= m["MoE sin aux."][4]
                     and min(r[2] - r[1] for r in m.values())
                     > max(r[0] for r in m.values()) - min(r[0] for r in m.values())),
          "3 seeds: mean max share aux 0.01 >= no-aux mean - 0.005; aux 0.1 mean < no-aux - 0.02 and its worst seed "
          ">= no-aux's best; every run's loss range (max - min) > the spread of the four means"),
    Claim("lab06-lora-ppl", "lab06", "resultados = pretrained.shipped_results()",
          "every adapter lowers the answer perplexity; the full fine-tune the most",
          m_lab06_table,
          lambda m: m["worst run answer ppl"] < m["base answer ppl"] / 3,
          "all 4 runs' validation answer perplexity < base / 3"),
    Claim("lab06-forgetting", "lab06", "resultados = pretrained.shipped_results()",
          "fine-tuning on chats forgets plain text (catastrophic forgetting)",
          m_lab06_table,
          lambda m: m["min run plain ppl"] > m["base plain ppl (whole validation)"],
          "every run's whole-validation perplexity > the base's"),
    Claim("lab06-two-parts", "lab06", "resultados = pretrained.shipped_results()",
          "the hand-written part of the validation text is far harder than the whole (mostly generated)",
          m_lab06_table,
          lambda m: m["base hand-written ppl"] > 10 * m["base plain ppl (whole validation)"],
          "es-base: hand-written perplexity > 10 × whole-validation perplexity, one function"),
    Claim("lab06-adapter-form", "lab06", "def frase_corta(texto):",
          "the adapter learns the form of the answers (one short sentence) far more than their content",
          m_lab06_format,
          lambda m: (m["adapter short sentence"] >= 0.75 * m["questions"]
                     and m["adapter short sentence"] > m["base short sentence"]
                     and m["adapter exact"] <= m["questions"] // 4 and m["verdict says format only"]),
          "24 unseen questions: adapter ≥ 75 % short sentences and more than the base; exact match ≤ 25 %"),
    Claim("lab06-distill", "lab06", 'diferencia = dest["runs"]["soft"]["val_loss"]',
          "with these models and 200 steps the teacher does NOT help (the text says so)",
          m_lab06_distill,
          lambda m: m["soft − hard (nats/token)"] > 0,
          "soft − hard validation loss > 0, as the prose states (flip the prose if it flips)"),
    Claim("lab07-8bit", "lab07", 'medida = metrics.model_perplexity(mq, tok, "hand-written"',
          "8 bits change almost nothing; 4 bits with groups cost little; 2 bits fall off the cliff",
          m_lab07_quant,
          lambda m: (max(abs(m[f]) for f in ("f16", "int8_channel", "q8_0")) < 0.01
                     and max(m["q4_0"], m["int4_g32"]) < 0.10 and m["int2_g32"] > 0.5),
          "hand-written validation: |Δppl| < 1 % at 8 bits, < 10 % at 4 bits, > 50 % at 2 bits"),
    Claim("lab07-speed", "lab07", "def tokens_por_segundo(",
          "our didactic quantised layers are not faster here (they dequantise every matrix each step)",
          m_lab07_speed,
          lambda m: all(v < 1.0 for f, v in m.items() if f != "f32"),
          "CPU-time decode speed of q8_0 and q4_0 below f32's"),
    Claim("lab07-nf4", "lab07", "errores_nf4 = {}",
          "NF4's normal-quantile levels leave less error than Q4_0's uniform grid at QLoRA's blocks of 64, the gap "
          "grows with the block, they nearly tie at 32, and NF4 always beats a symmetric uniform grid",
          m_lab07_nf4,
          lambda m: (m["levels"] == 16 and m["rows"][64]["nf4"] < m["rows"][64]["q4_0"]
                     and abs(m["rows"][32]["nf4"] / m["rows"][32]["q4_0"] - 1) < 0.05
                     and m["rows"][256]["nf4"] / m["rows"][256]["q4_0"] < m["rows"][64]["nf4"] / m["rows"][64]["q4_0"]
                     and all(r["nf4"] < r["symmetric"] for r in m["rows"].values())),
          "3 normal 512×512 matrices (mean): NF4 < Q4_0 at block 64; |NF4/Q4_0 − 1| < 5 % at 32; ratio at 256 < at 64"),
    Claim("lab08-capacity", "lab08", "capacidad[clientes] = {",
          "with continuous batching capacity grows with the clients",
          m_lab08_capacity,
          lambda m: (all(abs(v - c) < 1e-9 for c, v in m["tokens/step"].items())
                     and m["CPU throughput × (vs 1 client)"][max(m["tokens/step"])] > 3),
          "tokens per engine step = clients (exact); CPU-time throughput at 16 clients > 3 × at 1"),
    Claim("lab08-prefix-savings", "lab08", "medidos = [motor_uno_a_uno.generate(",
          "the exercise's count of prefix-cache hits is what the engine reuses, request by request",
          m_lab08_prefix,
          lambda m: m["engine = function"] and 0 < m["saved"] < m["prompt tokens"],
          "8 prompts behind one system prompt, served one by one: per-request equality; something saved"),
    Claim("lab08-continuous", "lab08", 'for politica in ("static", "continuous"):\n    motor = Engine(modelo, tokenizador, '
          "max_num_seqs=4",
          "continuous batching needs fewer engine steps than static, as the simulator says",
          m_lab08_batching,
          lambda m: (m["engine steps"] == m["simulator steps"]
                     and m["engine steps"]["continuous"] < m["engine steps"]["static"]),
          "engine steps = simulator steps; continuous < static (12 requests of mixed lengths)"),
    Claim("lab08-speculative", "lab08", "stats = especulativo.spec_stats()",
          "tokens per target pass match the formula; the text is exactly the target's",
          m_lab08_speculative,
          lambda m: abs(m["tokens/pass"] - m["formula"]) < 0.25 and m["same text"] and m["tokens/pass"] > 1,
          "|measured − formula| < 0.25 tokens/pass; identical token ids"),
    Claim("lab09-prefill", "lab09", "def cronometra(",
          "prefill is much cheaper per token than a decode step, and cheaper with long prompts than short ones",
          m_lab09_prefill,
          lambda m: m["µs/token longest"] < m["µs/token shortest"] / 2 and m["max prefill µs/token / decode step µs"] < 1,
          "CPU time: µs/token at the longest prompt < ½ the shortest's; every prompt's µs/token < one decode step"),
    Claim("lab09-speculative", "lab09", "estadisticas = con_borrador.spec_stats()",
          "tokens per target pass match the formula with the measured α; the text is the target's; below the "
          "break-even α the draft does not pay (S = E / (γc + 1))",
          m_lab09_speculative,
          lambda m: (abs(m["tokens/pass"] - m["formula"]) < 0.25 and m["same text"] and m["tokens/pass"] >= 1
                     and (m["verdict"] == "compensa") == (m["α"] >= m["break-even α"])
                     and (m["verdict"] == "compensa") == (m["speed-up"] >= 1) and 0 < m["c"] < 1),
          "6 questions × 32 greedy tokens, γ = 4: |measured − formula| < 0.25 tokens/pass; identical ids; verdict "
          "consistent with the break-even α"),
    Claim("lab09-templates", "lab09", "razones = {n:",
          "a wrong template raises the answer's perplexity; a duplicated BOS is invisible to it",
          m_lab09_templates,
          lambda m: (all(v["ratio"] >= 1.2 and v["worse"] == v["of"] for k, v in m.items() if k != "double_bos")
                     and 0.9 <= m["double_bos"]["ratio"] <= 1.1),
          "8 unseen pairs, pair by pair: 3 wrong templates ≥ 1.2× in every pair; double BOS median in [0.9, 1.1]"),
    Claim("lab09-presets", "lab09", "variedad = {}",
          "«preciso» stays close to the greedy answer; «creativo» wanders",
          m_lab09_presets,
          lambda m: (m["precise"]["agreement with greedy"] > m["creative"]["agreement with greedy"] + 0.15
                     and 1.5 * m["precise"]["distinct starts"] < m["creative"]["distinct starts"]),
          "6 questions × 6 samples: agreement with greedy precise > creative + 15 points; distinct starts "
          "precise < creative / 1.5"),
    Claim("lab09-json", "lab09", "objeto = constrained.generate_json(",
          "constrained JSON is valid by construction (not necessarily right)",
          m_lab09_json,
          lambda m: list(m["object"]) == list(LAB09_JSON_SCHEMA_VALUES)
          and all(v in LAB09_JSON_SCHEMA_VALUES[k] for k, v in m["object"].items()),
          "the object has the schema's keys in order and only allowed values"),
]


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.key for c in CLAIMS])
def test_stored_output_supports_its_claim(claim):
    measured = claim.measure(cell_output(claim.lab, claim.anchor))
    assert claim.holds(measured), f"{claim.lab}: «{claim.says}» does not hold in the stored output: {measured}"


def test_registry_keys_are_unique_and_labs_exist():
    assert len({c.key for c in CLAIMS}) == len(CLAIMS)
    for lab in {c.lab for c in CLAIMS}:
        assert notebook_path(lab).exists()


def test_a_claim_can_fail():
    """The checks are not vacuous: the lab09 template claim rejects a duplicated BOS that lowers the perplexity."""
    claim = next(c for c in CLAIMS if c.key == "lab09-templates")
    fake = ("right            perplejidad × 1.00 la de la plantilla correcta (cuartiles 1.00–1.00); empeora en 0 de 8\n"
            "no_template      perplejidad × 2.10 la de la plantilla correcta (cuartiles 1.99–2.21); empeora en 8 de 8\n"
            "double_bos       perplejidad × 0.70 la de la plantilla correcta (cuartiles 0.60–0.80); empeora en 0 de 8\n")
    assert not claim.holds(claim.measure(fake))
    capacity = next(c for c in CLAIMS if c.key == "lab08-capacity")
    flat = (" 1 clientes:  1.0 tokens por paso del motor · 1.0 veces los tokens\n"
            "16 clientes: 16.0 tokens por paso del motor · 0.4 veces los tokens\n")
    assert not capacity.holds(capacity.measure(flat))


# ---------------------------------------------------------------------------------------------------------------------
# The same claims on the library calls that produce them (fewer prompts, same checks)
# ---------------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def es_chat():
    from llmlab import pretrained

    return pretrained.load("es-chat")


@pytest.fixture(scope="module")
def es_base():
    from llmlab import pretrained

    return pretrained.load("es-base")


def test_library_one_validation_text_in_two_parts():
    from llmlab import corpus, metrics

    hand, gen, whole = (metrics.validation_documents(p) for p in ("hand-written", "generated", "all"))
    assert hand and gen
    assert sorted(hand + gen) == sorted(whole) == sorted(corpus.load_documents("validation"))
    assert not set(hand) & set(gen)
    with pytest.raises(ValueError):
        metrics.validation_documents("unseen")


def test_library_perplexity_agrees_with_the_labs(es_base):
    """lab07's f32 row and lab06's hand-written line are ``metrics.model_perplexity`` on the parts they name."""
    from llmlab import metrics

    model, tok = es_base
    head = metrics.model_perplexity(model, tok, "hand-written", max_tokens=1024)
    lab07 = m_lab07_quant(cell_output("lab07", 'medida = metrics.model_perplexity(mq, tok, "hand-written"'))
    assert head["tokens"] == lab07["tokens"] == 1024
    assert abs(head["perplexity"] - lab07["f32 ppl"]) < 0.01
    hand = metrics.model_perplexity(model, tok, "hand-written")
    lab06 = m_lab06_table(cell_output("lab06", "resultados = pretrained.shipped_results()"))
    assert abs(hand["perplexity"] - lab06["base hand-written ppl"]) < 0.05
    generated = metrics.model_perplexity(model, tok, "generated", max_tokens=2048)
    assert hand["perplexity"] > 10 * generated["perplexity"]
    custom = metrics.model_perplexity(model, tok, metrics.validation_documents("hand-written"), max_tokens=1024)
    assert custom["part"] == "custom" and abs(custom["perplexity"] - head["perplexity"]) < 1e-9


def test_library_templates(es_chat):
    import numpy as np

    from llmlab import chat, corpus, pretrained
    from llmlab import dissect as D

    model, tok = es_chat
    style = pretrained.info("es-chat")["chat_style"]
    end = [tok.special_tokens[t] for t in chat.STOP_TOKENS[style]]
    ppl: dict[str, list[float]] = {}
    for conv in corpus.load_chat("validation")[:8]:
        answer = tok.encode(conv[-1]["content"]) + end[:1]
        for v in chat.wrong_template_variants(conv[:-1], tok, style):
            ppl.setdefault(v["name"], []).append(D.answer_perplexity(model, v["ids"], answer))
    ratios = {k: np.array(v) / np.array(ppl["right"]) for k, v in ppl.items() if k != "right"}
    for name in ("no_template", "other_template", "markers_as_text"):
        assert (ratios[name] > 1).all() and np.median(ratios[name]) >= 1.2, (name, ratios[name])
    assert 0.9 <= np.median(ratios["double_bos"]) <= 1.1


def test_library_precise_stays_near_greedy(es_chat):
    import numpy as np
    import torch

    from llmlab import chat, corpus, pretrained
    from llmlab import model as LM
    from llmlab.sampling import Sampler

    model, tok = es_chat
    style = pretrained.info("es-chat")["chat_style"]
    end = [tok.special_tokens[t] for t in chat.STOP_TOKENS[style]] + [tok.eos_id]
    agreement = {}
    for preset in ("precise", "creative"):
        shares = []
        for seed in (0, 1):
            sampler = Sampler.from_preset(preset, generator=torch.Generator().manual_seed(seed))
            for conv in corpus.load_chat("validation")[:3]:
                ids = torch.tensor(chat.encode_chat(conv[:-1], tok, style, add_generation_prompt=True))
                greedy = LM.generate(model, ids, 24, eos_token_id=end)[len(ids):].tolist()
                for _ in range(3):
                    out = LM.generate(model, ids, 24, sampler=sampler, eos_token_id=end)[len(ids):].tolist()
                    shares.append(sum(a == b for a, b in zip(out, greedy)) / len(greedy))
        agreement[preset] = float(np.mean(shares))
    assert agreement["precise"] > agreement["creative"] + 0.15, agreement


def test_library_capacity_in_engine_steps(es_chat):
    from llmlab.serve import Engine, SamplingParams

    model, tok = es_chat
    for clients in (1, 4, 16):
        engine = Engine(model, tok, max_num_seqs=16)
        outs = engine.generate(["Había una vez"] * clients,
                               [SamplingParams(max_tokens=12, temperature=0, stop_token_ids=[tok.vocab_size])] * clients)
        assert sum(len(o.token_ids) for o in outs) / engine.num_steps == clients


def test_library_greedy_repeats_most(es_base):
    import torch

    from llmlab import model as LM
    from llmlab import sampling as S

    model, tok = es_base

    def repeated(ids, n=4):
        grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
        return 1 - len(set(grams)) / len(grams)

    share = {}
    for preset in ("deterministic", "creative"):
        parts = []
        for prompt in ("Nos vemos mañana a las", "Había una vez", "La profesora explicó"):
            ids = torch.tensor(tok.encode(prompt))
            sampler = S.Sampler.from_preset(preset, generator=torch.Generator().manual_seed(0))
            parts.append(repeated(LM.generate(model, ids, 80, sampler=sampler)[len(ids):].tolist()))
        share[preset] = sum(parts) / len(parts)
    assert share["deterministic"] > 2 * share["creative"], share


def test_library_8bit_changes_almost_nothing(es_base):
    from llmlab import metrics
    from llmlab import quant as Q

    model, tok = es_base
    f32 = metrics.model_perplexity(model, tok, "hand-written", max_tokens=1024)["perplexity"]
    q8 = metrics.model_perplexity(Q.quantize_model(model, "q8_0"), tok, "hand-written", max_tokens=1024)["perplexity"]
    i2 = metrics.model_perplexity(Q.quantize_model(model, "int2_g32"), tok, "hand-written", max_tokens=1024)["perplexity"]
    assert abs(q8 / f32 - 1) < 0.01 and i2 / f32 > 1.5


# ---------------------------------------------------------------------------------------------------------------------
def claims_table() -> str:
    """The claims as a Markdown table, measured on the stored notebooks."""
    lines = ["| lab | claim | check | measured | holds |", "|---|---|---|---|---|"]
    for c in CLAIMS:
        try:
            measured = c.measure(cell_output(c.lab, c.anchor))
            holds = "yes" if c.holds(measured) else "**no**"
        except (AssertionError, LookupError) as err:
            measured, holds = f"unreadable: {err}"[:80], "**no**"
        text = json.dumps(measured, ensure_ascii=False, default=str)
        lines.append(f"| {c.lab} | {c.says} | {c.check} | `{text}` | {holds} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(claims_table() + "\n")
