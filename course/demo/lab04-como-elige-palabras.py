"""Demo class for lab 04: the same fictional students as lab 01, now choosing words.

Points per exercise: layer_norm 2, rms_norm 1 (find the bug), mlp (+ mlp_param_count) 2, apply_temperature 1,
top_k_filter 2, top_p_filter 3 (find the bug), min_p_filter 1, sample_next_token (+ final_probs) 3, generate 2
(17 autograded) + 3 for the written answer (graded by hand in formgrader). An untouched find-the-bug cell keeps
its bug and scores 0.
"""

# The typical mistakes of chapter 04, as a student would write them.
LAYER_NORM_DDOF1 = '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm a lo largo del último eje: gamma * (x - media) / sqrt(varianza + eps) + beta."""
    x = np.asarray(x, dtype=float)
    media = x.mean(axis=-1, keepdims=True)
    salida = (x - media) / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma)
    if beta is not None:
        salida = salida + np.asarray(beta)
    return salida
'''

MLP_ACTIVATION_AFTER_W2 = '''
def mlp(X, W1, b1, W2, b2):
    """GELU(X @ W1 + b1) @ W2 + b2, fila a fila."""
    return L.gelu((np.asarray(X, dtype=float) @ W1 + b1) @ W2 + b2)


def mlp_param_count(d, expansion=4, bias=True):
    """Parámetros de un MLP d -> expansion·d -> d."""
    h = expansion * d
    return int(2 * d * h + ((h + d) if bias else 0))
'''

TEMPERATURE_MULTIPLIES = '''
def apply_temperature(logits, temperature):
    """logits / temperature, para un tensor de logits [..., V]."""
    if temperature <= 0:
        raise ValueError("temperatura no válida")
    return logits * temperature
'''

TOP_K_KEEPS_K_PLUS_1 = '''
def top_k_filter(logits, k, min_tokens_to_keep=1):
    """Deja los k logits más altos de cada fila (con empates) y pone -inf en el resto."""
    if k < 1:
        raise ValueError("k debe ser al menos 1")
    k = min(max(k, min_tokens_to_keep) + 1, logits.shape[-1])
    umbral = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < umbral, float("-inf"))
'''

TOP_P_DROPS_CROSSING_TOKEN = '''
def top_p_filter(logits, p, min_tokens_to_keep=1):
    """Nucleus: el conjunto mínimo de tokens más probables cuya masa alcanza p; -inf en el resto."""
    if not 0 <= p <= 1:
        raise ValueError("p debe estar en [0, 1]")
    ordenadas, indices = torch.sort(torch.softmax(logits, dim=-1), descending=True, dim=-1)
    quitar = torch.cumsum(ordenadas, dim=-1) >= p
    quitar[..., :min_tokens_to_keep] = False
    return logits.masked_fill(quitar.scatter(-1, indices, quitar), float("-inf"))
'''

MIN_P_ABSOLUTE = '''
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    """Quita los tokens con probabilidad < min_p · (probabilidad máxima de la fila)."""
    if not 0 <= min_p <= 1:
        raise ValueError("min_p debe estar en [0, 1]")
    probs = torch.softmax(logits, dim=-1)
    return logits.masked_fill(probs < min_p, float("-inf"))
'''

CUT_THEN_HEAT = '''
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    """Probabilidades finales: temperatura -> top-k -> top-p -> min-p -> softmax."""
    scores = logits
    if top_k is not None:
        scores = top_k_filter(scores, top_k)
    if top_p is not None:
        scores = top_p_filter(scores, top_p)
    if min_p is not None:
        scores = min_p_filter(scores, min_p)
    return torch.softmax(apply_temperature(scores, temperature), dim=-1)


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    """Elige el siguiente token de cada fila: argmax (greedy) o una tirada con los mandos."""
    if greedy:
        return torch.argmax(logits, dim=-1)
    probs = final_probs(logits, temperature, top_k, top_p, min_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
'''

# A student who only wraps the library's reference: visible checks pass, hidden ones do not.
CALLS_REFERENCE = {
    "layer_norm": "def layer_norm(x, gamma=None, beta=None, eps=1e-5):\n    return L.layer_norm(x, gamma, beta, eps=eps)",
    "rms_norm": (
        "from llmlab.layers import rms_norm as rms_ref\n\n"
        "def rms_norm(x, gamma=None, eps=1e-5):\n    return rms_ref(x, gamma, eps=eps)"
    ),
    "mlp": (
        "def mlp(X, W1, b1, W2, b2):\n    return L.mlp(X, W1, b1, W2, b2)\n\n"
        "def mlp_param_count(d, expansion=4, bias=True):\n    return L.mlp_param_count(d, expansion, bias)"
    ),
    "apply_temperature": "def apply_temperature(logits, temperature):\n    return S.apply_temperature(logits, temperature)",
    "top_k_filter": "def top_k_filter(logits, k, min_tokens_to_keep=1):\n    return S.top_k_filter(logits, k, min_tokens_to_keep)",
    "top_p_filter": (
        "def top_p_filter(logits, p, min_tokens_to_keep=1):\n"
        "    return S.Sampler(do_sample=True, top_p=p, min_tokens_to_keep=min_tokens_to_keep).process(logits)"
    ),
    "min_p_filter": "def min_p_filter(logits, min_p, min_tokens_to_keep=1):\n    return S.min_p_filter(logits, min_p, min_tokens_to_keep)",
    "sample_next_token": (
        "def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False):\n"
        "    return S.Sampler(do_sample=True, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p,\n"
        "                     temperature_last=temperature_last).probs(logits)\n\n"
        "def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):\n"
        "    if greedy:\n        return S.sample_next_token(logits)\n"
        "    return S.sample_next_token(logits, do_sample=True, temperature=temperature, top_k=top_k, top_p=top_p,\n"
        "                               min_p=min_p, generator=generator)"
    ),
    "generate": (
        "def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):\n"
        "    return LM.generate(logits_fn, torch.tensor(prompt_ids), max_new_tokens, eos_token_id=eos_id).tolist()"
    ),
}

STUDENTS = {
    # Everything right, written answer included.
    "ana_correcta": {
        "answers": "solution",
        "expected": {"score": 17, "flags": ["manual"]},
    },
    # Opened the release and handed it in untouched.
    "bruno_sin_tocar": {
        "answers": {},
        "expected": {"score": 0, "flags": []},
    },
    # Did the block half of the lab and top-k, and deleted a test cell she found annoying (the grader puts it back).
    "carla_parcial": {
        "answers": {gid: "solution" for gid in ["layer_norm", "rms_norm", "mlp", "apply_temperature", "top_k_filter"]},
        "delete_cells": ["test_generate"],
        "expected": {"score": 8, "flags": ["reparada"]},
    },
    # The chapter's typical mistakes; only RMSNorm and the generation loop right.
    "diego_errores": {
        "answers": {
            "layer_norm": LAYER_NORM_DDOF1,
            "rms_norm": "solution",
            "mlp": MLP_ACTIVATION_AFTER_W2,
            "apply_temperature": TEMPERATURE_MULTIPLIES,
            "top_k_filter": TOP_K_KEEPS_K_PLUS_1,
            "top_p_filter": TOP_P_DROPS_CROSSING_TOKEN,
            "min_p_filter": MIN_P_ABSOLUTE,
            "sample_next_token": CUT_THEN_HEAT,
            "generate": "solution",
            "respuesta_mandos": "Para el contrato temperatura 0, así el modelo no se equivoca. Para las ideas, temperatura 2.",
        },
        "expected": {"score": 3, "flags": ["manual"]},
    },
    # Wrong MLP (GELU after W2), and replaced its test cell by `assert True`: the test is restored, 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in [
            "layer_norm", "rms_norm", "apply_temperature", "top_k_filter", "top_p_filter", "min_p_filter",
            "sample_next_token", "generate", "respuesta_mandos"]},
            "mlp": MLP_ACTIVATION_AFTER_W2},
        "edit_cells": {"test_mlp": "# Comprobación del ejercicio 3\nassert True"},
        "expected": {"score": 15, "flags": ["manipulada", "manual"], "tests": {"test_mlp": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def layer_norm(',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: passes the visible checks, earns nothing.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: she scores, but the grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["layer_norm", "rms_norm", "top_p_filter"]},
        "prepend_code": (
            "# las comprobaciones me daban errores raros\n"
            "check_close = check_equal = check_raises = check_true = check_type = check_shape = lambda *args, **kwargs: None"
        ),
        "expected": {"score": 6, "flags": ["sospechosa"]},
    },
}
