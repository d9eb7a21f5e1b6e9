"""Demo class for lab 02: the same fictional students as lab 01, now inside the transformer.

Points per exercise: embed 2, sinusoidal_positions 2, build_input 2 (find the bug), attention_row 2, qkv_project 1,
scaled_dot_product_attention 3, most_attended 1 (find the bug), is_permutation_equivariant 2, toy_forward 3,
attention_cost 1 (19 autograded) + 3 for the written answer (graded by hand in formgrader). An untouched
find-the-bug cell keeps its bug: it scores 0, even with the checks switched
off (ines_parchea: only the exercises she solved count).
"""

# The typical mistakes of chapter 02, as a student would write them.
EMBED_TRANSPOSED = '''
def embed(ids, E):
    """Una fila de E por cada ID: forma (n, d_model) o (B, n, d_model)."""
    return np.asarray(E)[np.asarray(ids)].T
'''

SIN_COS_SWAPPED = '''
def sinusoidal_positions(n, d, base=10000.0):
    """Tabla senoidal de posiciones, forma (n, d)."""
    pe = np.zeros((n, d))
    for pos in range(n):
        for j in range(d):
            angulo = pos / base ** (2 * (j // 2) / d)
            pe[pos, j] = np.cos(angulo) if j % 2 == 0 else np.sin(angulo)
    return pe
'''

POSITIONS_BY_ID = '''
def build_input(ids, E, P):
    """X = E[ids] + P[:n]: significado del token más su posición."""
    ids = np.asarray(ids)
    return E[ids] + P[ids]
'''

UNNORMALISED_MIX = '''
def attention_row(scores, values):
    """Pesos de atención de un token y su salida: (softmax(scores), pesos @ values)."""
    e = np.exp(np.array(scores) - np.max(scores))
    pesos = e / e.sum()
    return pesos, np.exp(scores) @ np.array(values)
'''

NO_SQRT_DK = '''
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Atención completa: (O, A) con A = softmax(Q Kᵀ / √d_k) y O = A V."""
    S = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
'''

LOGITS_FROM_FIRST_ROW = '''
def toy_forward(ids, params):
    """Logits del siguiente token (forma (V,)) de una pasada pre-norm y causal de 1 bloque."""
    E, P = params["E"], params["P"]
    n = len(ids)
    X = E[ids] + P[:n]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    X = X + A @ V @ params["W_O"]
    return layer_norm(X[0]) @ E.T
'''

COST_LINEAR = '''
def attention_cost(n, d_k=1):
    """Trabajo de Q Kᵀ con n tokens: n² · d_k (con d_k = 1, el número de parejas)."""
    if n < 0 or d_k < 1:
        raise ValueError("n o d_k no válidos")
    return n * d_k
'''

# A student who only wraps the library's reference: visible checks pass, hidden ones do not.
CALLS_REFERENCE = {
    "embed": "def embed(ids, E):\n    return EMB.embed(ids, E)",
    "sinusoidal_positions": (
        "from llmlab.positional import sinusoidal_positions as tabla_ref\n\n"
        "def sinusoidal_positions(n, d, base=10000.0):\n    return tabla_ref(n, d, base)"
    ),
    "build_input": "def build_input(ids, E, P):\n    return EMB.build_input(ids, E, P)",
    "attention_row": "def attention_row(scores, values):\n    return ATT.attention_row(scores, values)",
    "qkv_project": "def qkv_project(X, W_Q, W_K, W_V):\n    return ATT.qkv_project(X, W_Q, W_K, W_V)",
    "scaled_dot_product_attention": (
        "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
        "    return ATT.scaled_dot_product_attention(Q, K, V, mask=mask)"
    ),
    "is_permutation_equivariant": (
        "def is_permutation_equivariant(fn, X, perm, atol=1e-8):\n"
        "    return POS.is_permutation_equivariant(fn, X, perm, atol=atol)"
    ),
    "toy_forward": (
        "def toy_forward(ids, params):\n"
        "    X = EMB.build_input(ids, params['E'], params['P'])\n"
        "    Q, K, V = ATT.qkv_project(layer_norm(X), params['W_Q'], params['W_K'], params['W_V'])\n"
        "    X = X + ATT.causal_attention(Q, K, V)[0] @ params['W_O']\n"
        "    return layer_norm(X[-1]) @ params['E'].T"
    ),
    "attention_cost": "def attention_cost(n, d_k=1):\n    return C.attention_cost(n, d_k)",
    "most_attended": "def most_attended(A, i):\n    return ATT.most_attended(A, i)",
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
    # Did the first four exercises, and deleted the last big test cell (the grader puts it back).
    "carla_parcial": {
        "answers": {gid: "solution" for gid in ["embed", "sinusoidal_positions", "build_input", "attention_row"]},
        "delete_cells": ["test_toy_forward"],
        "expected": {"score": 8, "flags": ["reparada"]},
    },
    # The chapter's typical mistakes; only the projections and the permutation check are right.
    "diego_errores": {
        "answers": {
            "embed": EMBED_TRANSPOSED,
            "sinusoidal_positions": SIN_COS_SWAPPED,
            "build_input": POSITIONS_BY_ID,
            "attention_row": UNNORMALISED_MIX,
            "qkv_project": "solution",
            "scaled_dot_product_attention": NO_SQRT_DK,
            "is_permutation_equivariant": "solution",
            "toy_forward": LOGITS_FROM_FIRST_ROW,
            "attention_cost": COST_LINEAR,
            "respuesta_posiciones": "La atención ya ve todas las palabras, así que el orden da igual.",
        },
        "expected": {"score": 3, "flags": ["manual"]},
    },
    # Forgot the 1/√d_k, and replaced that test cell by `assert True`: the test is restored, 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in [
            "embed", "sinusoidal_positions", "build_input", "attention_row", "qkv_project", "most_attended",
            "is_permutation_equivariant", "toy_forward", "attention_cost", "respuesta_posiciones"]},
            "scaled_dot_product_attention": NO_SQRT_DK},
        "edit_cells": {"test_scaled_dot_product_attention": "# Comprobación del ejercicio 6\nassert True"},
        "expected": {"score": 16, "flags": ["manipulada", "manual"],
                     "tests": {"test_scaled_dot_product_attention": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def embed(ids, E',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: passes the visible checks, earns nothing.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: what runs without crashing scores (her three answers and the
    # untouched most_attended, whose bug no disabled check sees), but the grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["embed", "sinusoidal_positions", "attention_row"]},
        "prepend_code": (
            "# las comprobaciones me daban la lata\n"
            "check_close = check_equal = check_raises = check_true = check_shape = check_type = lambda *a, **k: None\n"
            "check_array = check_number = lambda *a, **k: None"
        ),
        "expected": {"score": 6, "flags": ["sospechosa"]},
    },
}
