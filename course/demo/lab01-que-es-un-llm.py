"""Demo class for lab 01: fictional students covering what a real class hands in.

Points per exercise: softmax 2, nll 2, sequence_log_prob 1, perplexity 2, perplexity_from_loss 1 (find the
bug), linear_param_count 1, transformer_param_estimate 1, weight_memory 2, moe_weights_and_flops 2,
kv_cache_bytes 2, inference_memory 2 (find the bugs), choose_model 2 (20 autograded) + 3 for the written answer
(graded by hand in formgrader). An untouched find-the-bug cell keeps its bug, so it scores 0 like a stub.
"""

# The typical mistakes of chapter 01, as a student would write them.
SOFTMAX_WITHOUT_MAX = '''
def softmax(logits, temperature=1.0):
    """Probabilidades a partir de logits, a lo largo del último eje."""
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
'''

NLL_LOG10 = '''
def nll(probs, reduction="sum"):
    """Log-verosimilitud negativa (en nats) de las probabilidades de los tokens correctos."""
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError("probabilidad fuera de rango")
    s = -np.log10(p)
    return float(s.sum() if reduction == "sum" else s.mean())
'''

PERPLEXITY_OF_TOTAL = '''
def perplexity(probs):
    """exp(pérdida media por token)."""
    return float(np.exp(-np.sum(np.log(probs))))
'''

LINEAR_WITHOUT_BIAS = '''
def linear_param_count(d_in, d_out, bias=True):
    """Parámetros de una capa lineal d_in -> d_out."""
    return d_in * d_out
'''

WEIGHT_MEMORY_GB_AS_GIB = '''
def weight_memory(n_params, dtype="fp16"):
    """Memoria de los pesos como (GB decimales, GiB binarios)."""
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}[dtype]
    return n_params * b / 1e9, n_params * b / 1e9
'''

KV_WITHOUT_FACTOR_2 = '''
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    """Bytes de la caché KV: 2 · L · n · d · B · lote, reducida por GQA/MQA."""
    total = n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads and n_kv_heads:
        total = total * n_kv_heads // n_heads
    return total
'''

OVERHEAD_ON_WEIGHTS_ONLY = '''
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    """(pesos + caché KV) · (1 + margen), en GB."""
    return weights_gb * (1 + overhead) + kv_gb


def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    """¿Cabe el modelo, con su caché y el margen, en una GPU de gpu_gb GB?"""
    return inference_memory_gb(weights_gb, kv_gb, overhead) <= gpu_gb
'''

WRONG_FIX_PERPLEXITY = '''
def perplexity_from_loss(total_loss, n_tokens):
    """Perplejidad a partir de la pérdida TOTAL (en nats) de n_tokens tokens."""
    if n_tokens <= 0:
        raise ValueError("n_tokens debe ser positivo")
    return math.exp(total_loss) / n_tokens
'''

MOE_MEMORY_WITH_ACTIVE = '''
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    """(GB de los pesos de todos los expertos, operaciones por token con los parámetros activos)."""
    return weight_memory(active_params, dtype)[0], 2.0 * active_params
'''

BIGGEST_IS_BEST = '''
def choose_model(candidates, gpu_gb, overhead=0.25):
    """Nombre del candidato de mayor calidad que cabe en la GPU."""
    return max(candidates, key=lambda c: c["quality"])["name"]
'''

# A student who only wraps the library's reference: visible checks pass, hidden ones do not.
CALLS_REFERENCE = {
    "softmax": "def softmax(logits, temperature=1.0):\n    return lf.softmax(logits, temperature=temperature)",
    "nll": "def nll(probs, reduction='sum'):\n    return M.nll(probs, reduction=reduction)",
    "sequence_log_prob": "def sequence_log_prob(cond_probs):\n    return M.sequence_log_prob(cond_probs)",
    "perplexity": "from llmlab.metrics import perplexity as ppl_ref\n\ndef perplexity(probs):\n    return ppl_ref(probs)",
    "perplexity_from_loss": (
        "def perplexity_from_loss(total_loss, n_tokens):\n    return M.perplexity_from_loss(total_loss, n_tokens)"
    ),
    "moe_weights_and_flops": (
        "def moe_weights_and_flops(total_params, active_params, dtype='fp16'):\n"
        "    return C.moe_weights_and_flops(total_params, active_params, dtype)"
    ),
    "linear_param_count": "def linear_param_count(d_in, d_out, bias=True):\n    return C.linear_param_count(d_in, d_out, bias)",
    "transformer_param_estimate": "def transformer_param_estimate(n_layers, d_model):\n    return C.transformer_param_estimate(n_layers, d_model)",
    "weight_memory": "def weight_memory(n_params, dtype='fp16'):\n    return C.weight_memory(n_params, dtype)",
    "kv_cache_bytes": "def kv_cache_bytes(*args, **kwargs):\n    return C.kv_cache_bytes(*args, **kwargs)",
    "inference_memory": (
        "def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):\n"
        "    return C.inference_memory_gb(weights_gb, kv_gb, overhead)\n\n"
        "def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):\n"
        "    return C.fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead)"
    ),
    "choose_model": "def choose_model(candidates, gpu_gb, overhead=0.25):\n    return C.choose_model(candidates, gpu_gb, overhead)",
}

STUDENTS = {
    # Everything right, written answer included.
    "ana_correcta": {
        "answers": "solution",
        "expected": {"score": 20, "flags": ["manual"]},
    },
    # Opened the release and handed it in untouched.
    "bruno_sin_tocar": {
        "answers": {},
        "expected": {"score": 0, "flags": []},
    },
    # Did the first half, and deleted a test cell she found annoying (the grader puts it back).
    "carla_parcial": {
        "answers": {
            "softmax": "solution",
            "nll": "solution",
            "sequence_log_prob": "solution",
            "linear_param_count": "solution",
            "transformer_param_estimate": "solution",
        },
        "delete_cells": ["test_choose_model"],
        "expected": {"score": 7, "flags": ["reparada"]},
    },
    # The chapter's typical mistakes; only two exercises right.
    "diego_errores": {
        "answers": {
            "softmax": SOFTMAX_WITHOUT_MAX,
            "nll": NLL_LOG10,
            "sequence_log_prob": "solution",
            "perplexity": PERPLEXITY_OF_TOTAL,
            "perplexity_from_loss": WRONG_FIX_PERPLEXITY,
            "linear_param_count": LINEAR_WITHOUT_BIAS,
            "transformer_param_estimate": "solution",
            "weight_memory": WEIGHT_MEMORY_GB_AS_GIB,
            "moe_weights_and_flops": MOE_MEMORY_WITH_ACTIVE,
            "kv_cache_bytes": KV_WITHOUT_FACTOR_2,
            "inference_memory": OVERHEAD_ON_WEIGHTS_ONLY,
            "choose_model": BIGGEST_IS_BEST,
            "respuesta_capas": "El modelo A es mejor porque acierta.",
        },
        "expected": {"score": 2, "flags": ["manual"]},
    },
    # Wrong perplexity, and replaced its test cell by `assert True`: the test is restored, 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in [
            "softmax", "nll", "sequence_log_prob", "perplexity_from_loss", "linear_param_count",
            "transformer_param_estimate", "weight_memory", "moe_weights_and_flops", "kv_cache_bytes",
            "inference_memory", "choose_model", "respuesta_capas"]},
            "perplexity": PERPLEXITY_OF_TOTAL},
        "edit_cells": {"test_perplexity": "# Comprobación del ejercicio 4\nassert True"},
        "expected": {"score": 18, "flags": ["manipulada", "manual"], "tests": {"test_perplexity": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def softmax(',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: passes the visible checks, earns nothing.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: she scores, but the grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["softmax", "nll", "perplexity"]},
        "prepend_code": (
            "# no me funcionaban las comprobaciones\n"
            "check_close = check_equal = check_raises = check_type = check_number = lambda *args, **kwargs: None"
        ),
        "expected": {"score": 6, "flags": ["sospechosa"]},
    },
}
