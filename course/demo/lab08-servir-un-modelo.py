"""Demo class for lab 08: fictional students covering what a real class hands in.

Points per exercise: kv_cache_bytes 2, serving_memory_gb 2 (find the bugs), max_concurrent_sequences 2 (find the
bugs), latencies 2, prefix_cache_savings 2, simulate_batching 3, latency_percentiles 2, expected_tokens_per_pass 2,
choose_deployment 2 (19 autograded) + 3 for the written answer (graded by hand in formgrader). An untouched find-the-bug cell keeps its
bugs and scores 0, even with the checks switched
off (ines_parchea: only the exercises she solved count). Grading runs the whole notebook,
measurements and the server on loopback included.
"""

# The typical mistakes of chapter 07, as a student would write them.
KV_WITHOUT_FACTOR_2 = '''
def kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2):
    """Bytes de la caché KV."""
    if min(n_layers, batch, n_kv_heads, head_dim) < 1 or seq_len < 0 or bytes_per_value <= 0:
        raise ValueError("tamaños fuera de rango")
    return int(n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value)
'''

MEMORY_ONLY_WEIGHTS = '''
def serving_memory_gb(n_params, bits, n_layers, batch, seq_len, n_kv_heads, head_dim, kv_bytes_per_value=2):
    """Memoria de servir, en GB."""
    if n_params < 0 or bits <= 0:
        raise ValueError("n_params debe ser >= 0 y bits > 0")
    pesos = n_params * bits / 8 / 1e9
    kv = 2 * n_layers * batch * seq_len * n_kv_heads * head_dim * kv_bytes_per_value / 1e9
    return {"weights": pesos, "kv": kv, "total": pesos}  # lo que ocupa el modelo son sus parámetros
'''

MEAN_AS_P95 = '''
def latency_percentiles(samples, qs=(50, 95, 99)):
    """Percentiles de unas latencias."""
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("hacen falta muestras")
    return {50: float(np.median(x)), 95: float(x.mean()), 99: float(x.max())}
'''

CONTINUOUS_WAITS_FOR_LONGEST = '''
def simulate_batching(lengths, slots, mode="continuous"):
    """Pasos y aprovechamiento."""
    if mode not in ("static", "continuous"):
        raise ValueError("modo")
    largos = list(lengths)
    if slots < 1 or not largos:
        raise ValueError("vacío")
    pasos = 0
    for i in range(0, len(largos), slots):  # los dos modos van por lotes
        pasos += max(largos[i:i + slots])
    return {"steps": int(pasos), "utilisation": sum(largos) / (pasos * slots)}
'''

WITHOUT_BONUS_TOKEN = '''
def expected_tokens_per_pass(alpha, gamma):
    """Tokens por pasada: se aceptan alpha · gamma de los propuestos."""
    if not 0 <= alpha <= 1 or gamma < 1:
        raise ValueError("fuera de rango")
    return float(alpha * gamma)
'''

EDGE_WHENEVER_PRIVATE = '''
def choose_deployment(weights_gb, kv_gb, device_gb, offline=False, private=False, reserve_frac=0.2):
    """Dónde desplegar."""
    if weights_gb < 0 or kv_gb < 0 or device_gb <= 0 or not 0 <= reserve_frac < 1:
        raise ValueError("memorias fuera de rango")
    if private:
        return "local"  # los datos no salen: siempre en el dispositivo
    if offline:
        return "local" if weights_gb + kv_gb <= device_gb * (1 - reserve_frac) else "ninguno"
    return "nube"
'''

# A student who only wraps the library's reference: the checks (visible and hidden) see it and give nothing.
CALLS_REFERENCE = {
    "kv_cache_bytes": (
        "def kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2):\n"
        "    return C.kv_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value)"
    ),
    "serving_memory_gb": (
        "def serving_memory_gb(n_params, bits, n_layers, batch, seq_len, n_kv_heads, head_dim, kv_bytes_per_value=2):\n"
        "    return C.serving_memory_gb(n_params, bits, n_layers, batch, seq_len, n_kv_heads, head_dim,\n"
        "                               kv_bytes_per_value)"
    ),
    "max_concurrent_sequences": (
        "def max_concurrent_sequences(device_gb, weights_gb, kv_per_seq_gb, reserve_frac=0.0):\n"
        "    return C.max_concurrent_sequences(device_gb, weights_gb, kv_per_seq_gb, reserve_frac)"
    ),
    "latencies": (
        "def total_latency_s(ttft_s, n_out, tokens_per_s):\n"
        "    return C.total_latency_s(ttft_s, n_out, tokens_per_s)\n\n\n"
        "def shared_latency_s(ttft_s, n_out, capacity_tok_s, users):\n"
        "    return C.shared_latency_s(ttft_s, n_out, capacity_tok_s, users)"
    ),
    "simulate_batching": (
        "def simulate_batching(lengths, slots, mode='continuous'):\n"
        "    r = C.simulate_batching(list(lengths), slots, mode)\n"
        "    return {'steps': r.steps, 'utilisation': r.utilisation}"
    ),
    "latency_percentiles": (
        "def latency_percentiles(samples, qs=(50, 95, 99)):\n"
        "    return C.latency_percentiles(samples, qs)"
    ),
    "expected_tokens_per_pass": (
        "def expected_tokens_per_pass(alpha, gamma):\n"
        "    return C.expected_tokens_per_pass(alpha, gamma)"
    ),
    "choose_deployment": (
        "def choose_deployment(weights_gb, kv_gb, device_gb, offline=False, private=False, reserve_frac=0.2):\n"
        "    return C.choose_deployment(weights_gb, kv_gb, device_gb, offline, private, reserve_frac)"
    ),
}

STUDENTS = {
    # Everything right, written answer included.
    "ana_correcta": {
        "answers": "solution",
        "expected": {"score": 19, "flags": ["manual"]},
    },
    # Opened the release and handed it in untouched.
    "bruno_sin_tocar": {
        "answers": {},
        "expected": {"score": 0, "flags": []},
    },
    # Did the first four exercises, and deleted a test cell further down (the grader puts it back).
    "carla_parcial": {
        "answers": {gid: "solution" for gid in ["kv_cache_bytes", "serving_memory_gb", "max_concurrent_sequences",
                                                 "latencies"]},
        "delete_cells": ["test_choose_deployment"],
        "expected": {"score": 8, "flags": ["reparada"]},
    },
    # The chapter's typical mistakes; only max_concurrent_sequences and the latencies right.
    "diego_errores": {
        "answers": {
            "kv_cache_bytes": KV_WITHOUT_FACTOR_2,
            "serving_memory_gb": MEMORY_ONLY_WEIGHTS,
            "max_concurrent_sequences": "solution",
            "latencies": "solution",
            "simulate_batching": CONTINUOUS_WAITS_FOR_LONGEST,
            "latency_percentiles": MEAN_AS_P95,
            "expected_tokens_per_pass": WITHOUT_BONUS_TOKEN,
            "choose_deployment": EDGE_WHENEVER_PRIVATE,
            "respuesta_almacen": "Pondría el modelo en cada terminal porque así es privado y va más rápido.",
        },
        "expected": {"score": 4, "flags": ["manual"]},
    },
    # Right everywhere except simulate_batching (continuous batches wait for the longest), whose test cell she
    # replaced by `assert True`: the test is restored and she gets 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in [
            "kv_cache_bytes", "serving_memory_gb", "max_concurrent_sequences", "latencies", "latency_percentiles",
            "expected_tokens_per_pass", "choose_deployment", "respuesta_almacen"]},
            "simulate_batching": CONTINUOUS_WAITS_FOR_LONGEST},
        "edit_cells": {"test_simulate_batching": "# Comprobación del ejercicio 5\nassert True"},
        "expected": {"score": 14, "flags": ["manipulada", "manual"], "tests": {"test_simulate_batching": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def kv_cache_bytes(n_layers',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: the checks block the reference, so she earns nothing.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: what runs scores (her three answers and the two untouched
    # find-the-bug cells, whose bugs her disabled checks no longer see), but the grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["kv_cache_bytes", "latencies", "latency_percentiles"]},
        "prepend_code": (
            "# las comprobaciones me daban errores\n"
            "check_close = check_equal = check_raises = check_true = check_type = check_number = lambda *a, **k: None"
        ),
        "expected": {"score": 6, "flags": ["sospechosa"]},
    },
}
