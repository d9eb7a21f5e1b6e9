"""Demo class for lab 09: fictional students covering what a real class hands in.

Points per exercise: tokens_per_word + words_per_second 2, answer_perplexity 3, generate_with_stops 2 (find the bug),
kv_mib_per_token + kv_gib_for_context 2, fits_on_device 3, kv_growth_over_turns 2, diagnose 1 (find the bug),
score_options 3, recommend_model_type 1 (19 autograded)
+ 4 for the written decision (graded by hand in formgrader). An untouched find-the-bug cell keeps its bug and scores
0, even with the checks switched
off (ines_parchea: only the exercises she solved count).
"""

# The typical mistakes of chapter 08 and the inference guide, as a student would write them.
WORDS_PER_TOKEN = '''
def tokens_per_word(n_words, n_tokens):
    """Tokens por palabra de un texto."""
    return n_words / n_tokens


def words_per_second(tokens_per_s, tokens_per_word):
    """Palabras por segundo a partir de tokens por segundo."""
    return tokens_per_s * tokens_per_word
'''

PERPLEXITY_WITHOUT_SHIFT = '''
def answer_perplexity(model, prompt_ids, answer_ids):
    """exp(NLL media) de los tokens de la respuesta, condicionados al prompt."""
    ids = list(prompt_ids) + list(answer_ids)
    logp = torch.log_softmax(model(torch.tensor([ids]))[0], dim=-1)
    nll = 0.0
    for j, t in enumerate(answer_ids):
        nll -= float(logp[len(prompt_ids) + j, t])  # la posición del propio token
    return math.exp(nll / len(ids))
'''

LOOP_KEEPS_EOS = '''
def generate_with_stops(next_token, prompt_ids, max_tokens, eos_id=None, stop_sequences=()):
    """Bucle de decodificación con sus tres condiciones de parada."""
    generados = []
    while len(generados) <= max_tokens:
        token = next_token(list(prompt_ids) + generados)
        generados.append(token)
        if token == eos_id:
            return {"ids": generados, "stop_reason": "eos"}
        for s in stop_sequences:
            if generados[-len(s):] == list(s):
                return {"ids": generados, "stop_reason": "stop_sequence"}
    return {"ids": generados, "stop_reason": "max_tokens"}
'''

KV_IN_MB = '''
def kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    """MiB de caché KV por token: 2 · L · H_kv · d_h · bytes / 2**20."""
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 1e6


def kv_gib_for_context(tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    """GiB de caché KV para `tokens` tokens de contexto."""
    return tokens * kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value) / 1000
'''

WEIGHT_BITS_FOR_KV = '''
def fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,
                   kv_bytes=2, batch=1, reserve_gb=0.0):
    """¿Caben los pesos y la caché KV de `batch` secuencias de `context` tokens en `device_gb` GB?"""
    bytes_por_valor = weight_bits / 8  # todo a la misma precisión
    pesos = n_params * bytes_por_valor
    kv = 2 * n_layers * batch * context * n_kv_heads * head_dim * bytes_por_valor
    return (pesos + kv) / 1e9 + reserve_gb <= device_gb
'''

FITS_IGNORING_KV = '''
def fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,
                   kv_bytes=2, batch=1, reserve_gb=0.0):
    """¿Caben los pesos y la caché KV de `batch` secuencias de `context` tokens en `device_gb` GB?"""
    if n_params < 0 or weight_bits <= 0 or context < 0 or batch < 1 or kv_bytes <= 0 or device_gb <= 0 or reserve_gb < 0:
        raise ValueError("argumentos fuera de rango")
    return n_params * weight_bits / 8 / 1e9 + reserve_gb <= device_gb  # el contexto lo admite el modelo
'''

ONLY_THE_TURN = '''
def kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2, system_tokens=0):
    """GiB de caché KV de una conversación al terminar cada turno."""
    por_token = 2 * n_layers * n_kv_heads * head_dim * bytes_per_value
    return [n * por_token / 2**30 for n in turn_tokens]  # cada turno con su caché
'''

TYPES_IN_ENGLISH = '''
def recommend_model_type(turns, fine_tune=False, tools=False, reasoning=False):
    """Tipo de modelo del que partir según las necesidades de la tarea."""
    if tools:
        return "tool-tuned"
    if reasoning:
        return "reasoning"
    if fine_tune:
        return "base"
    return "chat" if turns > 1 else "instruct"
'''

UNWEIGHTED_MEAN = '''
def score_options(options, weights, minimums=None):
    """Opciones ordenadas por su puntuación ponderada, con mínimos que excluyen."""
    puntos = []
    for nombre, notas in options.items():
        media = sum(notas[c] for c in weights) / len(weights)
        puntos.append((nombre, media))
    return sorted(puntos, key=lambda p: -p[1])
'''

# A student who only wraps the library's reference: visible checks pass, hidden ones do not.
CALLS_REFERENCE = {
    "tokens_por_palabra": (
        "def tokens_per_word(n_words, n_tokens):\n    return D.tokens_per_word(n_words, n_tokens)\n\n\n"
        "def words_per_second(tokens_per_s, tokens_per_word):\n    return D.words_per_second(tokens_per_s, tokens_per_word)"
    ),
    "perplejidad_respuesta": (
        "def answer_perplexity(model, prompt_ids, answer_ids):\n"
        "    return D.answer_perplexity(model, prompt_ids, answer_ids)"
    ),
    "bucle_con_paradas": (
        "def generate_with_stops(next_token, prompt_ids, max_tokens, eos_id=None, stop_sequences=()):\n"
        "    return D.generate_with_stops(next_token, prompt_ids, max_tokens, eos_id, stop_sequences)"
    ),
    "regla_kv": (
        "def kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value=2):\n"
        "    return C.kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value)\n\n\n"
        "def kv_gib_for_context(tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2):\n"
        "    return C.kv_gib_for_context(tokens, n_layers, n_kv_heads, head_dim, bytes_per_value)"
    ),
    "cabe_en_gpu": (
        "def fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,\n"
        "                   kv_bytes=2, batch=1, reserve_gb=0.0):\n"
        "    return D.fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,\n"
        "                            kv_bytes, batch, reserve_gb)"
    ),
    "diagnostico": "def diagnose(symptom):\n    return D.diagnose(symptom)",
    "matriz_decision": (
        "def score_options(options, weights, minimums=None):\n    return D.score_options(options, weights, minimums)"
    ),
    "kv_por_turnos": (
        "def kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2, system_tokens=0):\n"
        "    return D.kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value, system_tokens)"
    ),
    "tipo_de_modelo": (
        "def recommend_model_type(turns, fine_tune=False, tools=False, reasoning=False):\n"
        "    return D.recommend_model_type(turns, fine_tune=fine_tune, tools=tools, reasoning=reasoning)"
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
        "answers": {gid: "solution" for gid in [
            "tokens_por_palabra", "perplejidad_respuesta", "bucle_con_paradas", "regla_kv"]},
        "delete_cells": ["test_matriz_decision"],
        "expected": {"score": 9, "flags": ["reparada"]},
    },
    # The typical mistakes of chapter 08 and the guide; only diagnose right.
    "diego_errores": {
        "answers": {
            "tokens_por_palabra": WORDS_PER_TOKEN,
            "perplejidad_respuesta": PERPLEXITY_WITHOUT_SHIFT,
            "bucle_con_paradas": LOOP_KEEPS_EOS,
            "regla_kv": KV_IN_MB,
            "cabe_en_gpu": WEIGHT_BITS_FOR_KV,
            "diagnostico": "solution",
            "matriz_decision": UNWEIGHTED_MEAN,
            "kv_por_turnos": ONLY_THE_TURN,
            "tipo_de_modelo": TYPES_IN_ENGLISH,
            "respuesta_decision": "Elegiría siempre el modelo más grande que quepa en la GPU: es el que más sabe.",
        },
        "expected": {"score": 1, "flags": ["manual"]},
    },
    # Forgot the KV cache in fits_on_device, and replaced its test cell by `assert True`: the test is restored
    # and she gets 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in [
            "tokens_por_palabra", "perplejidad_respuesta", "bucle_con_paradas", "regla_kv", "diagnostico",
            "matriz_decision", "kv_por_turnos", "tipo_de_modelo", "respuesta_decision"]},
            "cabe_en_gpu": FITS_IGNORING_KV},
        "edit_cells": {"test_cabe_en_gpu": "# Comprobación del ejercicio 5\nassert True"},
        "expected": {"score": 16, "flags": ["manipulada", "manual"], "tests": {"test_cabe_en_gpu": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def tokens_per_word(n_words',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: passes nothing, earns nothing.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: what runs scores (her three answers and the untouched diagnose,
    # whose bug her disabled checks no longer see), but the grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["tokens_por_palabra", "perplejidad_respuesta", "bucle_con_paradas"]},
        "prepend_code": (
            "# las comprobaciones me daban errores\n"
            "check_close = check_equal = check_raises = check_true = check_type = lambda *a, **k: None"
        ),
        "expected": {"score": 7, "flags": ["sospechosa"]},
    },
}
