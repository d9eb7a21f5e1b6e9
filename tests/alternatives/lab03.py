"""Valid answers to lab 03's exercises, written differently from the solution: each must get full marks."""

LAB = "lab03-atencion-a-mano"

_KV_LISTS = '''
class KVCache:
    def __init__(self):
        self.pares = []

    def append(self, k, v):
        self.pares.append((np.array(k, dtype=float), np.array(v, dtype=float)))

    def __len__(self):
        return len(self.pares)

    @property
    def keys(self):
        return np.array([k for k, _ in self.pares])

    @property
    def values(self):
        return np.array([v for _, v in self.pares])
'''

ALTERNATIVES = {
    "attention_scores": {
        "einsum": """
def attention_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return np.einsum("...id,...jd->...ij", Q, K) / math.sqrt(Q.shape[-1])
""",
        "float32 y matmul con la raíz antes": """
def attention_scores(Q, K):
    Q = np.asarray(Q, dtype=np.float32)
    K = np.asarray(K, dtype=np.float32)
    return np.matmul(Q / np.float32(np.sqrt(Q.shape[-1])), np.moveaxis(K, -1, -2))
""",
        "con torch": """
def attention_scores(Q, K):
    q, k = torch.as_tensor(np.asarray(Q, dtype=float)), torch.as_tensor(np.asarray(K, dtype=float))
    return (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).numpy()
""",
    },
    "causal_mask": {
        "bucles": """
def causal_mask(n, neg=-1e9):
    M = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            M[i, j] = neg
    return M
""",
        "np.where con índices": """
def causal_mask(n, neg=-1e9):
    filas, columnas = np.arange(n)[:, None], np.arange(n)[None, :]
    return np.where(columnas > filas, float(neg), 0.0)
""",
    },
    "softmax_rows": {
        "float32": """
def softmax_rows(S):
    S = np.asarray(S, dtype=np.float32)
    e = np.exp(S - np.max(S, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
""",
        "logsumexp": """
def softmax_rows(S):
    S = np.asarray(S, dtype=float)
    m = S.max(axis=-1, keepdims=True)
    return np.exp(S - m - np.log(np.exp(S - m).sum(axis=-1, keepdims=True)))
""",
        "torch.softmax": """
def softmax_rows(S):
    return torch.softmax(torch.as_tensor(np.asarray(S, dtype=float)), dim=-1).numpy()
""",
    },
    "causal_attention": {
        "con sus propias piezas": """
def causal_attention(Q, K, V):
    n = np.shape(Q)[-2]
    A = softmax_rows(attention_scores(Q, K) + causal_mask(n))
    return A @ np.asarray(V, dtype=float), A
""",
        "fila a fila, solo con el prefijo permitido (sin máscara)": """
def causal_attention(Q, K, V):
    Q, K, V = (np.asarray(M, dtype=float) for M in (Q, K, V))
    lote = Q.shape[:-2]
    n = Q.shape[-2]
    Qp, Kp, Vp = (M.reshape(-1, n, M.shape[-1]) for M in (Q, K, V))
    A = np.zeros((Qp.shape[0], n, n))
    for b in range(Qp.shape[0]):
        for i in range(n):
            s = Kp[b, : i + 1] @ Qp[b, i] / math.sqrt(Q.shape[-1])
            e = np.exp(s - s.max())
            A[b, i, : i + 1] = e / e.sum()
    O = A @ Vp
    return O.reshape(*lote, n, V.shape[-1]), A.reshape(*lote, n, n)
""",
        "float32 con -inf y np.where": """
def causal_attention(Q, K, V):
    Q, K, V = (np.asarray(M, dtype=np.float32) for M in (Q, K, V))
    n = Q.shape[-2]
    S = Q @ np.swapaxes(K, -1, -2) / np.float32(math.sqrt(Q.shape[-1]))
    S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, np.float32(-np.inf))
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
    },
    "split_heads": {
        "np.split y np.stack en el eje -3": """
def split_heads(M, n_heads):
    M = np.asarray(M, dtype=float)
    if M.shape[-1] % n_heads:
        raise ValueError("no divide")
    return np.stack(np.split(M, n_heads, axis=-1), axis=-3)
""",
        "moveaxis": """
def split_heads(M, n_heads):
    M = np.array(M, dtype=float)
    *lote, n, c = M.shape
    if c % n_heads != 0:
        raise ValueError("no divide")
    return np.moveaxis(M.reshape(*lote, n, n_heads, c // n_heads), -2, -3)
""",
    },
    "multi_head_attention": {
        "bucle por cabezas y concatenación": """
def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=True):
    X = np.asarray(X, dtype=float)
    n = X.shape[-2]
    dq, dv = W_Q.shape[1] // n_heads, W_V.shape[1] // n_heads
    salidas = []
    for h in range(n_heads):
        q = X @ W_Q[:, h * dq:(h + 1) * dq]
        k = X @ W_K[:, h * dq:(h + 1) * dq]
        v = X @ W_V[:, h * dv:(h + 1) * dv]
        S = q @ np.swapaxes(k, -1, -2) / math.sqrt(dq)
        if causal:
            S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        salidas.append((e / e.sum(axis=-1, keepdims=True)) @ v)
    return np.concatenate(salidas, axis=-1) @ W_O
""",
        "con su split_heads y su causal_attention, en float32": """
def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=True):
    X = np.asarray(X, dtype=np.float32)
    q, k, v = (split_heads(X @ np.asarray(W, dtype=np.float32), n_heads) for W in (W_Q, W_K, W_V))
    if causal:
        O = causal_attention(q, k, v)[0]
    else:
        A = softmax_rows(attention_scores(q, k))
        O = A @ v
    O = np.swapaxes(O, -3, -2)
    return O.reshape(*O.shape[:-2], -1) @ np.asarray(W_O, dtype=np.float32)
""",
    },
    "grouped_query_attention": {
        "bucle por cabezas de consulta con h // grupo": """
def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=True):
    if n_kv_heads < 1 or n_heads % n_kv_heads:
        raise ValueError("n_kv_heads debe dividir a n_heads")
    X = np.asarray(X, dtype=float)
    n = X.shape[-2]
    grupo = n_heads // n_kv_heads
    dq, dv = W_Q.shape[1] // n_heads, W_V.shape[1] // n_kv_heads
    salidas = []
    for h in range(n_heads):
        g = h // grupo
        q = X @ W_Q[:, h * dq:(h + 1) * dq]
        k = X @ W_K[:, g * dq:(g + 1) * dq]
        v = X @ W_V[:, g * dv:(g + 1) * dv]
        S = q @ np.swapaxes(k, -1, -2) / math.sqrt(dq)
        if causal:
            S = S + causal_mask(n)
        salidas.append(softmax_rows(S) @ v)
    return np.concatenate(salidas, axis=-1) @ W_O
""",
        "repitiendo columnas de W_K y W_V y llamando a su MHA": """
def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=True):
    if n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads debe dividir a n_heads")
    grupo = n_heads // n_kv_heads
    W_K, W_V = np.asarray(W_K, dtype=float), np.asarray(W_V, dtype=float)
    dk, dv = W_K.shape[1] // n_kv_heads, W_V.shape[1] // n_kv_heads
    K_rep = np.concatenate([W_K[:, (h // grupo) * dk:(h // grupo + 1) * dk] for h in range(n_heads)], axis=1)
    V_rep = np.concatenate([W_V[:, (h // grupo) * dv:(h // grupo + 1) * dv] for h in range(n_heads)], axis=1)
    return multi_head_attention(X, W_Q, K_rep, V_rep, W_O, n_heads, causal=causal)
""",
    },
    "kv_cache": {
        "lista de pares y su softmax_rows": _KV_LISTS + """
def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=float)
    q = x_t @ W_Q
    cache.append(x_t @ W_K, x_t @ W_V)
    return softmax_rows(cache.keys @ q / math.sqrt(q.shape[-1])) @ cache.values
""",
        "arrays que crecen con np.vstack, devolviendo copias, en float32": """
class KVCache:
    def __init__(self):
        self._k = None
        self._v = None

    def append(self, k, v):
        k = np.asarray(k, dtype=np.float32).reshape(1, -1)
        v = np.asarray(v, dtype=np.float32).reshape(1, -1)
        self._k = k if self._k is None else np.vstack([self._k, k])
        self._v = v if self._v is None else np.vstack([self._v, v])

    def __len__(self):
        return 0 if self._k is None else self._k.shape[0]

    @property
    def keys(self):
        return self._k.copy()

    @property
    def values(self):
        return self._v.copy()


def decode_step(x_t, cache, W_Q, W_K, W_V):
    x_t = np.asarray(x_t, dtype=np.float32)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = (cache.keys @ q) / np.sqrt(np.float32(q.shape[-1]))
    w = np.exp(s - s.max())
    return (w / w.sum()) @ cache.values
""",
    },
    "cross_attention": {
        "con su softmax_rows": """
def cross_attention(X_q, Y_kv, W_Q, W_K, W_V):
    Q = np.asarray(X_q, dtype=float) @ W_Q
    K = np.asarray(Y_kv, dtype=float) @ W_K
    A = softmax_rows(attention_scores(Q, K))
    return A @ (np.asarray(Y_kv, dtype=float) @ W_V), A
""",
        "einsum en float32": """
def cross_attention(X_q, Y_kv, W_Q, W_K, W_V):
    X = np.asarray(X_q, dtype=np.float32)
    Y = np.asarray(Y_kv, dtype=np.float32)
    Q, K, V = X @ W_Q.astype(np.float32), Y @ W_K.astype(np.float32), Y @ W_V.astype(np.float32)
    S = np.einsum("...id,...jd->...ij", Q, K) / np.float32(math.sqrt(Q.shape[-1]))
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return np.einsum("...ij,...jd->...id", A, V), A
""",
    },
    "causal_attention_torch": {
        "torch.where con una máscara tril": """
def causal_attention_torch(q, k, v):
    n = q.shape[-2]
    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    permitido = torch.tril(torch.ones(n, n, dtype=torch.bool))
    s = torch.where(permitido, s, torch.tensor(float("-inf"), dtype=s.dtype))
    w = torch.softmax(s, dim=-1)
    return torch.matmul(w, v), w
""",
        "máscara aditiva y softmax a mano": """
def causal_attention_torch(q, k, v):
    n = q.shape[-2]
    s = q @ k.transpose(-2, -1) * (q.shape[-1] ** -0.5)
    s = s + torch.full((n, n), -1e9, dtype=s.dtype).triu(1)
    e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    w = e / e.sum(dim=-1, keepdim=True)
    return w @ v, w
""",
    },
}
