"""Wrong implementations of lab 03's exercises: chapter 03's common mistakes and the families every lab covers
(in-place changes, boundaries, return types, numerical stability, ignored optional arguments, missing errors).

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the
llmlab function that does the same job (with the aliases the lab's setup cell imports); the
harness adds a mutant that merely calls it.
"""

LAB = "lab03-atencion-a-mano"

REFERENCES = {
    "attention_scores": "AT.attention_scores",
    "causal_mask": "AT.causal_mask",
    "softmax_rows": "AT.softmax_rows",
    "causal_attention": "AT.causal_attention",
    "multi_head_attention": "AT.multi_head_attention",
    "grouped_query_attention": "AT.grouped_query_attention",
    "KVCache": "AT.KVCache",
    "decode_step": "AT.decode_step",
    "cross_attention": "AT.cross_attention",
    "causal_attention_torch": "AT.causal_attention",
    "split_heads": "AT.split_heads",
}

# A correct KVCache, shared by the decode_step mutants (only decode_step is wrong there).
_KV_CACHE = """
class KVCache:
    def __init__(self):
        self._k, self._v = [], []

    def append(self, k, v):
        self._k.append(np.asarray(k, dtype=float))
        self._v.append(np.asarray(v, dtype=float))

    def __len__(self):
        return len(self._k)

    @property
    def keys(self):
        return np.array(self._k)

    @property
    def values(self):
        return np.array(self._v)
"""

# Multi-head attention with every step correct except the one a mutant changes (marked by {...}).
_MHA = """
def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=True):
    X = np.asarray(X, dtype=float)
    n = X.shape[-2]

    def separa(M):
        *lote, filas, columnas = M.shape
        {split}

    q, k, v = {qkv}
    S = q @ np.swapaxes(k, -1, -2) / {scale}
    if {use_mask}:
        S = S + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    cabezas = (e / e.sum(axis=-1, keepdims=True)) @ v
    juntas = np.swapaxes(cabezas, -3, -2)
    {out}
"""
_MHA_OK = dict(
    split="return np.swapaxes(M.reshape(*lote, filas, n_heads, columnas // n_heads), -3, -2)",
    qkv="separa(X @ W_Q), separa(X @ W_K), separa(X @ W_V)",
    scale="np.sqrt(q.shape[-1])",
    use_mask="causal",
    out="return juntas.reshape(*juntas.shape[:-2], -1) @ W_O",
)


def _mha(**change):
    return _MHA.format(**{**_MHA_OK, **change})


_GQA = """
def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=True):
    {check}
    X = np.asarray(X, dtype=float)
    n = X.shape[-2]

    def separa(M, cabezas):
        *lote, filas, columnas = M.shape
        return np.swapaxes(M.reshape(*lote, filas, cabezas, columnas // cabezas), -3, -2)

    grupo = max(n_heads // n_kv_heads, 1)
    q = separa(X @ W_Q, n_heads)
    k = {expand_k}
    v = {expand_v}
    S = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        S = S + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    juntas = np.swapaxes((e / e.sum(axis=-1, keepdims=True)) @ v, -3, -2)
    return juntas.reshape(*juntas.shape[:-2], -1) @ W_O
"""
_GQA_OK = dict(
    check='if n_heads % n_kv_heads != 0:\n        raise ValueError("n_kv_heads")',
    expand_k="np.repeat(separa(X @ W_K, n_kv_heads), grupo, axis=-3)",
    expand_v="np.repeat(separa(X @ W_V, n_kv_heads), grupo, axis=-3)",
)


def _gqa(**change):
    return _GQA.format(**{**_GQA_OK, **change})


_CAUSAL = """
def causal_attention(Q, K, V):
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    V = np.asarray(V, dtype=float)
    n, d_k = Q.shape[-2], Q.shape[-1]
    {body}
"""

_CROSS = """
def cross_attention(X_q, Y_kv, W_Q, W_K, W_V):
    X_q = np.asarray(X_q, dtype=float)
    Y_kv = np.asarray(Y_kv, dtype=float)
    {body}
"""

_TORCH = """
def causal_attention_torch(q, k, v):
    n, d_k = q.shape[-2], q.shape[-1]
    {body}
"""

MUTANTS = {
    "attention_scores": {
        "sin dividir por √d_k": """
def attention_scores(Q, K):
    return np.asarray(Q, dtype=float) @ np.swapaxes(np.asarray(K, dtype=float), -1, -2)
""",
        "divide por d_k": """
def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=float)
    return Q @ np.swapaxes(np.asarray(K, dtype=float), -1, -2) / Q.shape[-1]
""",
        "d_k = Q.shape[0] (número de tokens)": """
def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=float)
    return Q @ np.swapaxes(np.asarray(K, dtype=float), -1, -2) / np.sqrt(Q.shape[0])
""",
        "K.T (rompe los lotes)": """
def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=float)
    return Q @ np.asarray(K, dtype=float).T / np.sqrt(Q.shape[-1])
""",
        "K Qᵀ (matriz traspuesta)": """
def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=float)
    return np.asarray(K, dtype=float) @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1])
""",
        "Q Qᵀ (misma proyección para buscar y ofrecer)": """
def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=float)
    return Q @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1])
""",
    },
    "causal_mask": {
        "tapa también la diagonal (k=0, `<=`)": """
def causal_mask(n, neg=-1e9):
    return np.triu(np.full((n, n), neg), k=0)
""",
        "tril en vez de triu": """
def causal_mask(n, neg=-1e9):
    return np.tril(np.full((n, n), neg), k=-1)
""",
        "máscara booleana": """
def causal_mask(n, neg=-1e9):
    return np.triu(np.ones((n, n), dtype=bool), k=1)
""",
        "ignora neg (siempre -1e9)": """
def causal_mask(n, neg=-1e9):
    return np.triu(np.full((n, n), -1e9), k=1)
""",
        "máscara multiplicativa (1 permitido, 0 futuro)": """
def causal_mask(n, neg=-1e9):
    return np.tril(np.ones((n, n)))
""",
    },
    "softmax_rows": {
        "no resta el máximo (nan con valores grandes)": """
def softmax_rows(S):
    e = np.exp(np.asarray(S, dtype=float))
    return e / e.sum(axis=-1, keepdims=True)
""",
        "por columnas (axis=0)": """
def softmax_rows(S):
    S = np.asarray(S, dtype=float)
    e = np.exp(S - S.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
""",
        "axis=1 fijo (falla con lotes)": """
def softmax_rows(S):
    S = np.asarray(S, dtype=float)
    if S.ndim == 1:
        S = S[None]
        e = np.exp(S - S.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True))[0]
    e = np.exp(S - S.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
""",
        "normaliza la matriz entera": """
def softmax_rows(S):
    S = np.asarray(S, dtype=float)
    e = np.exp(S - S.max())
    return e / e.sum()
""",
        "no normaliza": """
def softmax_rows(S):
    S = np.asarray(S, dtype=float)
    return np.exp(S - S.max(axis=-1, keepdims=True))
""",
    },
    "causal_attention": {
        "sin √d_k": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "divide por d_k": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / d_k + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "d_k = Q.shape[0]": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[0]) + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "máscara con k=0 (tapa la diagonal)": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.triu(np.full((n, n), -1e9), k=0)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "tril en vez de triu": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.tril(np.full((n, n), -1e9), k=-1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "sin máscara": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "ceros después de la softmax, sin renormalizar": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = np.tril(e / e.sum(axis=-1, keepdims=True))
    return A @ V, A"""),
        "softmax por columnas": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-2, keepdims=True))
    A = e / e.sum(axis=-2, keepdims=True)
    return A @ V, A"""),
        "mezcla K en vez de V (A @ K)": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ K, A"""),
        "atención dura (argmax)": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    duro = (A == A.max(axis=-1, keepdims=True)).astype(float)
    return duro @ V, A"""),
        "K.T (rompe los lotes)": _CAUSAL.format(body="""S = Q @ K.T / np.sqrt(d_k) + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "devuelve (A, O)": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A, A @ V"""),
    },
    "multi_head_attention": {
        "reshape sin transpose": _mha(split="return M.reshape(*lote, n_heads, filas, columnas // n_heads)"),
        "olvida W_O": _mha(out="return juntas.reshape(*juntas.shape[:-2], -1)"),
        "escala por √d_model en vez de √d_head": _mha(scale="np.sqrt(X.shape[-1])"),
        "Q = K = X (sin proyecciones de Q y K)": _mha(qkv="separa(X), separa(X), separa(X @ W_V)"),
        "ignora causal (siempre enmascara)": _mha(use_mask="True"),
        "sin máscara": _mha(use_mask="False"),
        "junta las cabezas con un reshape sin transpose": _mha(
            out="return cabezas.reshape(*cabezas.shape[:-3], n, -1) @ W_O"
        ),
    },
    "grouped_query_attention": {
        "np.tile en vez de repeat (cabeza h usa h % n_kv)": _gqa(
            expand_k="np.tile(separa(X @ W_K, n_kv_heads), (grupo, 1, 1))",
            expand_v="np.tile(separa(X @ W_V, n_kv_heads), (grupo, 1, 1))",
        ),
        "acepta grupos que no dividen (no lanza ValueError)": _gqa(
            check="grupo_techo = -(-n_heads // n_kv_heads)",
            expand_k="np.repeat(separa(X @ W_K, n_kv_heads), grupo_techo, axis=-3)[..., :n_heads, :, :]",
            expand_v="np.repeat(separa(X @ W_V, n_kv_heads), grupo_techo, axis=-3)[..., :n_heads, :, :]",
        ),
        "todas las consultas usan la primera cabeza KV": _gqa(
            expand_k="np.repeat(separa(X @ W_K, n_kv_heads)[..., :1, :, :], n_heads, axis=-3)",
            expand_v="np.repeat(separa(X @ W_V, n_kv_heads)[..., :1, :, :], n_heads, axis=-3)",
        ),
        "V repartida con tile (solo K bien)": _gqa(
            expand_v="np.tile(separa(X @ W_V, n_kv_heads), (grupo, 1, 1))",
        ),
    },
    "kv_cache": {
        "guarda K pero no V (usa solo el v nuevo)": _KV_CACHE + """
def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache._k.append(k)
    s = np.array(cache._k) @ q / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max())
    return (w / w.sum()).sum() * v
""",
        "atiende antes de añadir el token nuevo (uno de menos)": _KV_CACHE + """
def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    if len(cache) == 0:
        cache.append(k, v)
        return v
    s = cache.keys @ q / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max())
    salida = (w / w.sum()) @ cache.values
    cache.append(k, v)
    return salida
""",
        "sin √d_k": _KV_CACHE + """
def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = cache.keys @ q
    w = np.exp(s - s.max())
    return (w / w.sum()) @ cache.values
""",
        "la caché solo guarda el último token": """
class KVCache:
    def __init__(self):
        self._k, self._v, self._n = None, None, 0

    def append(self, k, v):
        self._k, self._v = np.asarray(k, dtype=float)[None], np.asarray(v, dtype=float)[None]
        self._n += 1

    def __len__(self):
        return self._n

    @property
    def keys(self):
        return self._k

    @property
    def values(self):
        return self._v


def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = cache.keys @ q / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ cache.values
""",
        "mezcla las claves en vez de los valores": _KV_CACHE + """
def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = cache.keys @ q / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ cache.keys
""",
    },
    "cross_attention": {
        "aplica la máscara causal": _CROSS.format(body="""Q, K, V = X_q @ W_Q, Y_kv @ W_K, Y_kv @ W_V
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    S = S + np.triu(np.full(S.shape[-2:], -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "K y V salen de X_q (autoatención)": _CROSS.format(body="""Q, K, V = X_q @ W_Q, X_q @ W_K, X_q @ W_V
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "sin √d_k": _CROSS.format(body="""Q, K, V = X_q @ W_Q, Y_kv @ W_K, Y_kv @ W_V
    S = Q @ np.swapaxes(K, -1, -2)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "softmax por columnas": _CROSS.format(body="""Q, K, V = X_q @ W_Q, Y_kv @ W_K, Y_kv @ W_V
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(S - S.max(axis=-2, keepdims=True))
    A = e / e.sum(axis=-2, keepdims=True)
    return A @ V, A"""),
    },
    "causal_attention_torch": {
        "masked_fill con la diagonal tapada": _TORCH.format(body="""s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    futuro = torch.ones(n, n, dtype=torch.bool).triu(diagonal=0)
    w = torch.softmax(s.masked_fill(futuro, -1e9), dim=-1)
    return w @ v, w"""),
        "sin √d_k": _TORCH.format(body="""s = q @ k.transpose(-2, -1)
    futuro = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    w = torch.softmax(s.masked_fill(futuro, float("-inf")), dim=-1)
    return w @ v, w"""),
        "softmax con dim=-2": _TORCH.format(body="""s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    futuro = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    w = torch.softmax(s.masked_fill(futuro, float("-inf")), dim=-2)
    return w @ v, w"""),
        "k.T (rompe los lotes)": _TORCH.format(body="""s = q @ k.T / math.sqrt(d_k)
    futuro = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    w = torch.softmax(s.masked_fill(futuro, float("-inf")), dim=-1)
    return w @ v, w"""),
        "devuelve arrays de NumPy": _TORCH.format(body="""s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    futuro = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    w = torch.softmax(s.masked_fill(futuro, float("-inf")), dim=-1)
    return (w @ v).numpy(), w.numpy()"""),
    },
}

_MORE = {
    "attention_scores": {
        "escala Q en su sitio (Q /= √d_k)": """
def attention_scores(Q, K):
    Q = np.asarray(Q)
    Q /= np.sqrt(Q.shape[-1])
    return Q @ np.swapaxes(np.asarray(K, dtype=float), -1, -2)
""",
        "devuelve una lista": """
def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=float)
    return (Q @ np.swapaxes(np.asarray(K, dtype=float), -1, -2) / np.sqrt(Q.shape[-1])).tolist()
""",
        "calcula en float16": """
def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=np.float16)
    return Q @ np.swapaxes(np.asarray(K, dtype=np.float16), -1, -2) / np.float16(np.sqrt(Q.shape[-1]))
""",
        "no acepta listas (Q.shape de una lista)": """
def attention_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
""",
    },
    "causal_mask": {
        "devuelve una lista": """
def causal_mask(n, neg=-1e9):
    return np.triu(np.full((n, n), float(neg)), k=1).tolist()
""",
        "enteros (dtype int)": """
def causal_mask(n, neg=-1e9):
    return np.triu(np.full((n, n), int(max(neg, -1e9)), dtype=np.int64), k=1)
""",
        "la diagonal de abajo tapada (k=-1)": """
def causal_mask(n, neg=-1e9):
    return np.triu(np.full((n, n), float(neg)), k=-1)
""",
    },
    "softmax_rows": {
        "resta el máximo en su sitio": """
def softmax_rows(S):
    S = np.asarray(S)
    S -= S.max(axis=-1, keepdims=True)
    e = np.exp(S)
    return e / e.sum(axis=-1, keepdims=True)
""",
        "máximo global (de toda la matriz)": """
def softmax_rows(S):
    S = np.asarray(S, dtype=float)
    e = np.exp(S - S.max())
    return e / e.sum(axis=-1, keepdims=True)
""",
        "devuelve una lista": """
def softmax_rows(S):
    S = np.asarray(S, dtype=float)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).tolist()
""",
        "calcula en float16": """
def softmax_rows(S):
    S = np.asarray(S, dtype=np.float16)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
    },
    "causal_attention": {
        "escala Q en su sitio": _CAUSAL.replace("Q = np.asarray(Q, dtype=float)", "Q = np.asarray(Q)").format(body="""Q /= np.sqrt(d_k)
    S = Q @ np.swapaxes(K, -1, -2) + np.triu(np.full((n, n), -1e9), k=1)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "máximo global (de todo el lote)": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.triu(np.full((n, n), -1e9), k=1)
    A = np.exp(S - S.max())
    A = A / A.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "máscara de -100 (insuficiente con puntuaciones grandes)": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.triu(np.full((n, n), -100.0), k=1)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "devuelve listas": _CAUSAL.format(body="""S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + np.triu(np.full((n, n), -1e9), k=1)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    return (A @ V).tolist(), A.tolist()"""),
    },
    "split_heads": {
        "el código de la celda: reshape sin transpose": """
def split_heads(M, n_heads):
    M = np.asarray(M, dtype=float)
    *lote, n, columnas = M.shape
    if columnas % n_heads != 0:
        raise ValueError
    return M.reshape(*lote, n_heads, n, columnas // n_heads)
""",
        "transpose fijo (1, 0, 2): solo sin lote": """
def split_heads(M, n_heads):
    M = np.asarray(M, dtype=float)
    *lote, n, columnas = M.shape
    if columnas % n_heads != 0:
        raise ValueError
    return M.reshape(*lote, n, n_heads, columnas // n_heads).transpose(1, 0, 2)
""",
        "np.split y np.stack en el eje 0": """
def split_heads(M, n_heads):
    M = np.asarray(M, dtype=float)
    if M.shape[-1] % n_heads != 0:
        raise ValueError
    return np.stack(np.split(M, n_heads, axis=-1))
""",
        "cambia la forma de M en su sitio": """
def split_heads(M, n_heads):
    M = np.asarray(M)
    *lote, n, columnas = M.shape
    if columnas % n_heads != 0:
        raise ValueError
    M.shape = (*lote, n, n_heads, columnas // n_heads)
    return np.swapaxes(M, -3, -2).astype(float)
""",
        "cabezas entrelazadas (columnas h, h+H, ...)": """
def split_heads(M, n_heads):
    M = np.asarray(M, dtype=float)
    *lote, n, columnas = M.shape
    if columnas % n_heads != 0:
        raise ValueError
    return np.swapaxes(M.reshape(*lote, n, columnas // n_heads, n_heads), -1, -2).swapaxes(-3, -2)
""",
        "devuelve una lista de cabezas": """
def split_heads(M, n_heads):
    M = np.asarray(M, dtype=float)
    if M.shape[-1] % n_heads != 0:
        raise ValueError
    return [c for c in np.swapaxes(M.reshape(*M.shape[:-1], n_heads, -1), -3, -2)]
""",
    },
    "multi_head_attention": {
        "máximo global": _mha().replace("e = np.exp(S - S.max(axis=-1, keepdims=True))", "e = np.exp(S - S.max())"),
        "vacía X al terminar (modifica la entrada)": _mha(out="salida = juntas.reshape(*juntas.shape[:-2], -1) @ W_O\n"
                                                            "    X[...] = 0.0\n    return salida").replace(
            "X = np.asarray(X, dtype=float)", "X = np.asarray(X)"),
        "devuelve también los pesos": _mha(out="return juntas.reshape(*juntas.shape[:-2], -1) @ W_O, e / e.sum(axis=-1, keepdims=True)"),
        "calcula en float16": _mha().replace("X = np.asarray(X, dtype=float)", "X = np.asarray(X, dtype=np.float16)"),
    },
    "grouped_query_attention": {
        "ignora causal (siempre enmascara)": _gqa().replace("if causal:", "if True:"),
        "máximo global": _gqa().replace("e = np.exp(S - S.max(axis=-1, keepdims=True))", "e = np.exp(S - S.max())"),
        "grupo = n_kv_heads // n_heads (repite 0 veces)": _gqa(check='if n_heads % n_kv_heads != 0:\n        raise ValueError("n_kv_heads")',
                                                               expand_k="np.repeat(separa(X @ W_K, n_kv_heads), max(n_kv_heads // n_heads, 1), axis=-3)",
                                                               expand_v="np.repeat(separa(X @ W_V, n_kv_heads), max(n_kv_heads // n_heads, 1), axis=-3)"),
    },
    "kv_cache": {
        "keys y values devuelven el almacén interno (no copias)": """
class KVCache:
    def __init__(self):
        self._k = None
        self._v = None

    def append(self, k, v):
        k, v = np.asarray(k, dtype=float)[None], np.asarray(v, dtype=float)[None]
        self._k = k if self._k is None else np.concatenate([self._k, k])
        self._v = v if self._v is None else np.concatenate([self._v, v])

    def __len__(self):
        return 0 if self._k is None else len(self._k)

    @property
    def keys(self):
        return self._k

    @property
    def values(self):
        return self._v


def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = cache.keys @ q / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ cache.values
""",
        "softmax sin restar el máximo": _KV_CACHE + """
def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = cache.keys @ q / np.sqrt(q.shape[-1])
    w = np.exp(s)
    return (w / w.sum()) @ cache.values
""",
        "devuelve una lista": _KV_CACHE + """
def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = cache.keys @ q / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max())
    return ((w / w.sum()) @ cache.values).tolist()
""",
    },
    "cross_attention": {
        "máximo global": _CROSS.format(body="""Q, K, V = X_q @ W_Q, Y_kv @ W_K, Y_kv @ W_V
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(S - S.max())
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
        "devuelve (A, O)": _CROSS.format(body="""Q, K, V = X_q @ W_Q, Y_kv @ W_K, Y_kv @ W_V
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A, A @ V"""),
        "escala X_q en su sitio": _CROSS.replace("X_q = np.asarray(X_q, dtype=float)", "X_q = np.asarray(X_q)").format(body="""X_q /= 1.0
    X_q *= np.sqrt(1.0 / np.sqrt(W_Q.shape[-1])) ** 2
    Q, K, V = X_q @ W_Q, Y_kv @ W_K, Y_kv @ W_V
    S = Q @ np.swapaxes(K, -1, -2)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A"""),
    },
    "causal_attention_torch": {
        "pasa a float32 (pierde el dtype de la entrada)": _TORCH.format(body="""q, k, v = q.float(), k.float(), v.float()
    s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v, w"""),
        "escala q en su sitio (q.div_)": _TORCH.format(body="""q.div_(math.sqrt(d_k))
    s = q @ k.transpose(-2, -1)
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v, w"""),
        "máscara con tril (tapa el pasado)": _TORCH.format(body="""s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).tril(-1), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v, w"""),
        "devuelve una lista [salida, pesos]": _TORCH.format(body="""s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return [w @ v, w]"""),
    },
}
for _answer, _extra in _MORE.items():
    MUTANTS.setdefault(_answer, {}).update(_extra)

# ---------------------------------------------------------------- audit 2026-12: wrong answers by family
# Written from the statements alone (issue 26, «Graders by family»); both are already caught by the hidden tests
# and stay here as guards: an integer neg promised to give a float mask, a float64 input computed in float32.

_AUDIT = {
    "causal_mask": {
        "an integer neg gives an integer mask": """
def causal_mask(n, neg=-1e9):
    return np.triu(np.full((n, n), neg), k=1)
""",
    },
    "causal_attention_torch": {
        "computes in float32 whatever the input dtype": """
def causal_attention_torch(q, k, v):
    q, k, v = q.float(), k.float(), v.float()
    n, d_k = q.shape[-2], q.shape[-1]
    s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    futuro = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    pesos = torch.softmax(s.masked_fill(futuro, float("-inf")), dim=-1)
    return pesos @ v, pesos
""",
    },
}
for _answer, _by_name in _AUDIT.items():
    MUTANTS[_answer].update(_by_name)
