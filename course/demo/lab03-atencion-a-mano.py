"""Demo class for lab 03: fictional students covering what a real class hands in.

Points per exercise: attention_scores 2, causal_mask 1 (find the bug), softmax_rows 2, causal_attention 3,
split_heads 1 (find the bug), multi_head_attention 3, grouped_query_attention 2, kv_cache 3, cross_attention 2,
causal_attention_torch 2 (21 autograded) + 3 for the written answer (graded by hand in formgrader). An untouched
find-the-bug cell keeps its bug and scores 0, even with the checks switched
off (ines_parchea: only the exercises she solved count).
"""

# The typical mistakes of chapter 03, as a student would write them.
SCORES_WITHOUT_SQRT = '''
def attention_scores(Q, K):
    """Puntuaciones Q Kᵀ / √d_k, con d_k = Q.shape[-1]."""
    return np.asarray(Q) @ np.swapaxes(np.asarray(K), -1, -2)
'''

MASK_HIDES_DIAGONAL = '''
def causal_mask(n, neg=-1e9):
    """Máscara aditiva: 0 donde j <= i, neg donde j > i."""
    mascara = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i <= j:
                mascara[i, j] = neg
    return mascara
'''

ZEROS_AFTER_SOFTMAX = '''
def causal_attention(Q, K, V):
    """Atención con máscara causal. Devuelve (O, A)."""
    S = Q @ K.T / np.sqrt(Q.shape[1])
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A = A / A.sum(axis=1, keepdims=True)
    A = np.tril(A)  # quito el futuro
    return A @ V, A
'''

HEADS_WITHOUT_TRANSPOSE = '''
def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=True):
    """Concat(head_1, ..., head_H) W_O, con las cabezas sacadas de columnas consecutivas."""
    n = X.shape[0]
    q = (X @ W_Q).reshape(n_heads, n, -1)
    k = (X @ W_K).reshape(n_heads, n, -1)
    v = (X @ W_V).reshape(n_heads, n, -1)
    S = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        S = S + np.triu(np.full((n, n), -1e9), k=1)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    return (A @ v).reshape(n, -1) @ W_O
'''

GQA_WITH_TILE = '''
def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=True):
    """Atención con n_heads consultas que comparten n_kv_heads cabezas de clave y valor."""
    if n_heads % n_kv_heads:
        raise ValueError("n_kv_heads no divide a n_heads")
    n, d_head = X.shape[-2], W_Q.shape[1] // n_heads
    q = np.swapaxes((X @ W_Q).reshape(*X.shape[:-1], n_heads, d_head), -3, -2)
    k = np.swapaxes((X @ W_K).reshape(*X.shape[:-1], n_kv_heads, d_head), -3, -2)
    v = np.swapaxes((X @ W_V).reshape(*X.shape[:-1], n_kv_heads, -1), -3, -2)
    reps = [1] * k.ndim
    reps[-3] = n_heads // n_kv_heads
    k, v = np.tile(k, reps), np.tile(v, reps)
    S = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if causal:
        S = S + np.triu(np.full((n, n), -1e9), k=1)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    O = np.swapaxes(A @ v, -3, -2)
    return O.reshape(*O.shape[:-2], -1) @ W_O
'''

CACHE_WITHOUT_VALUES = '''
class KVCache:
    """Claves y valores de los tokens ya procesados (una cabeza, una secuencia)."""

    def __init__(self):
        self.lista_k = []

    def append(self, k, v):
        """Guarda la clave k (d_k,) y el valor v (d_v,) de un token nuevo."""
        self.lista_k.append(k)  # los valores no hacen falta: ya tengo el v del token

    def __len__(self):
        return len(self.lista_k)

    @property
    def keys(self):
        """Matriz (t, d_k) con las claves guardadas."""
        return np.array(self.lista_k)

    @property
    def values(self):
        """Matriz (t, d_v) con los valores guardados."""
        return None


def decode_step(x_t, cache, W_Q, W_K, W_V):
    """Un paso de decodificación: añade k y v del token nuevo y devuelve su salida (d_v,)."""
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = cache.keys @ q / np.sqrt(len(q))
    w = np.exp(s - s.max())
    return (w / w.sum()).sum() * v
'''

TORCH_SOFTMAX_OVER_COLUMNS = '''
def causal_attention_torch(q, k, v):
    """Atención causal en PyTorch. Devuelve (salida, pesos)."""
    n = q.shape[-2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    s = s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    w = torch.softmax(s, dim=-2)
    return w @ v, w
'''

# A student who only wraps the library's reference: visible checks pass, hidden ones do not.
CALLS_REFERENCE = {
    "attention_scores": "def attention_scores(Q, K):\n    return AT.attention_scores(Q, K)",
    "causal_mask": "def causal_mask(n, neg=-1e9):\n    return AT.causal_mask(n, neg)",
    "softmax_rows": "def softmax_rows(S):\n    return lf.softmax(S, axis=-1)",
    "causal_attention": "def causal_attention(Q, K, V):\n    return AT.causal_attention(Q, K, V)",
    "multi_head_attention": (
        "def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=True):\n"
        "    return AT.multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=causal)"
    ),
    "grouped_query_attention": (
        "def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=True):\n"
        "    return AT.grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=causal)"
    ),
    "kv_cache": (
        "KVCache = AT.KVCache\n\n"
        "def decode_step(x_t, cache, W_Q, W_K, W_V):\n"
        "    return AT.decode_step(x_t, cache, W_Q, W_K, W_V)"
    ),
    "cross_attention": (
        "def cross_attention(X_q, Y_kv, W_Q, W_K, W_V):\n"
        "    return AT.cross_attention(X_q, Y_kv, W_Q, W_K, W_V)"
    ),
    "split_heads": "def split_heads(M, n_heads):\n    return AT.split_heads(M, n_heads)",
    "causal_attention_torch": (
        "def causal_attention_torch(q, k, v):\n"
        "    O, A = AT.causal_attention(q.double().numpy(), k.double().numpy(), v.double().numpy())\n"
        "    return torch.from_numpy(O).to(q.dtype), torch.from_numpy(A).to(q.dtype)"
    ),
}

STUDENTS = {
    # Everything right, written answer included.
    "ana_correcta": {
        "answers": "solution",
        "expected": {"score": 21, "flags": ["manual"]},
    },
    # Opened the release and handed it in untouched.
    "bruno_sin_tocar": {
        "answers": {},
        "expected": {"score": 0, "flags": []},
    },
    # Did the first four exercises, and deleted a test cell further down (the grader puts it back).
    "carla_parcial": {
        "answers": {gid: "solution" for gid in ["attention_scores", "causal_mask", "softmax_rows", "causal_attention"]},
        "delete_cells": ["test_cross_attention"],
        "expected": {"score": 8, "flags": ["reparada"]},
    },
    # The chapter's typical mistakes; only softmax_rows and cross_attention right.
    "diego_errores": {
        "answers": {
            "attention_scores": SCORES_WITHOUT_SQRT,
            "causal_mask": MASK_HIDES_DIAGONAL,
            "softmax_rows": "solution",
            "causal_attention": ZEROS_AFTER_SOFTMAX,
            "multi_head_attention": HEADS_WITHOUT_TRANSPOSE,
            "grouped_query_attention": GQA_WITH_TILE,
            "kv_cache": CACHE_WITHOUT_VALUES,
            "cross_attention": "solution",
            "causal_attention_torch": TORCH_SOFTMAX_OVER_COLUMNS,
            "respuesta_mascara": "Da igual poner la máscara antes o después: la matriz queda triangular igual.",
        },
        "expected": {"score": 4, "flags": ["manual"]},
    },
    # Forgot √d_k in causal_attention, and replaced its test cell by `assert True`: the test is
    # restored and she gets 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in [
            "attention_scores", "causal_mask", "softmax_rows", "split_heads", "multi_head_attention",
            "grouped_query_attention", "kv_cache", "cross_attention", "causal_attention_torch", "respuesta_mascara"]},
            "causal_attention": (
                "def causal_attention(Q, K, V):\n"
                "    n = Q.shape[-2]\n"
                "    S = Q @ np.swapaxes(K, -1, -2) + np.triu(np.full((n, n), -1e9), k=1)\n"
                "    A = np.exp(S - S.max(axis=-1, keepdims=True))\n"
                "    A = A / A.sum(axis=-1, keepdims=True)\n"
                "    return A @ V, A"
            )},
        "edit_cells": {"test_causal_attention": "# Comprobación del ejercicio 4\nassert True"},
        "expected": {"score": 18, "flags": ["manipulada", "manual"], "tests": {"test_causal_attention": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def attention_scores(Q, K',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: passes the visible checks, earns nothing.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: what runs scores (her three answers and the untouched split_heads,
    # whose bug her disabled checks no longer see), but the grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["attention_scores", "causal_mask", "softmax_rows"]},
        "prepend_code": (
            "# las comprobaciones me daban errores\n"
            "check_close = check_equal = check_raises = check_true = check_shape = check_type = lambda *a, **k: None"
        ),
        "expected": {"score": 5, "flags": ["sospechosa"]},
    },
}
