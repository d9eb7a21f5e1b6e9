"""Valid answers to lab 02's exercises, written differently from the solution: each must get full marks."""

LAB = "lab02-transformer-por-dentro"

ALTERNATIVES = {
    "embed": {
        "np.take con validación previa": """
def embed(ids, E):
    ids = np.array(ids, dtype=np.int64)
    E = np.asarray(E, dtype=float)
    if np.any(ids < 0) or np.any(ids >= len(E)):
        raise IndexError("ID fuera del vocabulario")
    return np.take(E, ids, axis=0)
""",
        "producto por vectores one-hot": """
def embed(ids, E):
    ids = np.asarray(ids)
    E = np.asarray(E, dtype=float)
    V = E.shape[0]
    if ids.size and not ((0 <= ids) & (ids < V)).all():
        raise IndexError("ID fuera del vocabulario")
    return np.eye(V)[ids] @ E
""",
        "bucle fila a fila": """
def embed(ids, E):
    E = np.asarray(E, dtype=float)
    frases = np.asarray(ids)
    planas = frases.reshape(-1)
    filas = []
    for i in planas.tolist():
        if i < 0 or i >= E.shape[0]:
            raise IndexError(f"ID {i} fuera del vocabulario")
        filas.append(E[i])
    return np.array(filas, dtype=float).reshape(frases.shape + (E.shape[1],))
""",
    },
    "sinusoidal_positions": {
        "bucle con math.sin y math.cos": """
def sinusoidal_positions(n, d, base=10000.0):
    PE = np.zeros((n, d))
    for pos in range(n):
        for j in range(d):
            angulo = pos / base ** (2 * (j // 2) / d)
            PE[pos, j] = math.sin(angulo) if j % 2 == 0 else math.cos(angulo)
    return PE
""",
        "float32 rellenando pares e impares por separado": """
def sinusoidal_positions(n, d, base=10000.0):
    pos = np.arange(n, dtype=np.float32)[:, None]
    frecuencias = np.float32(base) ** (-np.arange(0, d, 2, dtype=np.float32) / np.float32(d))
    PE = np.zeros((n, d), dtype=np.float32)
    PE[:, 0::2] = np.sin(pos * frecuencias)
    PE[:, 1::2] = np.cos(pos * frecuencias[: d // 2])
    return PE
""",
        "con exp y log (como muchas bibliotecas)": """
def sinusoidal_positions(n, d, base=10000.0):
    pares = np.arange(d) // 2 * 2
    angulos = np.arange(n)[:, None] * np.exp(-math.log(base) * pares / d)
    PE = np.sin(angulos)
    PE[:, 1::2] = np.cos(angulos[:, 1::2])
    return PE
""",
    },
    "build_input": {
        "reutiliza su embed y difunde P": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    P = np.asarray(P, dtype=float)
    n = ids.shape[-1]
    if n > len(P):
        raise ValueError("demasiados tokens para P")
    return embed(ids, E) + P[:n]
""",
        "bucle por posiciones, en float32": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    E = np.asarray(E, dtype=np.float32)
    P = np.asarray(P, dtype=np.float32)
    if ids.size and (ids.min() < 0 or ids.max() >= E.shape[0]):
        raise IndexError("ID fuera del vocabulario")
    n = ids.shape[-1]
    if n > P.shape[0]:
        raise ValueError("demasiados tokens para P")
    X = E[ids].copy()
    for t in range(n):
        X[..., t, :] = X[..., t, :] + P[t]
    return X
""",
    },
    "attention_row": {
        "bucles con math.exp": """
def attention_row(scores, values):
    s = [float(x) for x in scores]
    m = max(s)
    e = [math.exp(x - m) for x in s]
    total = sum(e)
    pesos = np.array([x / total for x in e])
    V = np.asarray(values, dtype=float)
    salida = np.zeros(V.shape[1])
    for w, v in zip(pesos, V):
        salida = salida + w * v
    return pesos, salida
""",
        "float32 con einsum": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=np.float32)
    e = np.exp(s - np.max(s))
    pesos = e / np.sum(e)
    return pesos, np.einsum("i,id->d", pesos, np.asarray(values, dtype=np.float32))
""",
        "softmax de llmlab-libre con logsumexp": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=float)
    m = s.max()
    pesos = np.exp(s - (m + np.log(np.exp(s - m).sum())))
    return pesos, np.asarray(values, dtype=float).T @ pesos
""",
    },
    "qkv_project": {
        "np.matmul y listas": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.array(X, dtype=float)
    return tuple(np.matmul(X, np.asarray(W, dtype=float)) for W in (W_Q, W_K, W_V))
""",
        "einsum en float32": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=np.float32)
    proyecta = lambda W: np.einsum("...nd,de->...ne", X, np.asarray(W, dtype=np.float32))
    return proyecta(W_Q), proyecta(W_K), proyecta(W_V)
""",
    },
    "scaled_dot_product_attention": {
        "einsum y máscara aditiva -1e9 (equivalente con filas no vacías)": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(M, dtype=float) for M in (Q, K, V))
    S = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = S + np.where(np.asarray(mask, dtype=bool), 0.0, -1e9)
    S = S - np.max(S, axis=-1, keepdims=True)
    A = np.exp(S)
    A = A / A.sum(axis=-1, keepdims=True)
    A = A if mask is None else np.where(mask, A, 0.0)
    return np.einsum("...qk,...kd->...qd", A, V), A
""",
        "float32 y K.transpose": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, dtype=np.float32)
    K = np.asarray(K, dtype=np.float32)
    V = np.asarray(V, dtype=np.float32)
    ejes = list(range(K.ndim))
    ejes[-1], ejes[-2] = ejes[-2], ejes[-1]
    S = (Q / np.float32(math.sqrt(Q.shape[-1]))) @ K.transpose(ejes)
    if mask is not None:
        S = np.where(mask, S, np.float32(-np.inf))
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "con torch": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    q, k, v = (torch.as_tensor(np.asarray(M, dtype=float)) for M in (Q, K, V))
    S = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        S = S.masked_fill(~torch.as_tensor(np.asarray(mask, dtype=bool)), float("-inf"))
    A = torch.softmax(S, dim=-1)
    return (A @ v).numpy(), A.numpy()
""",
    },
    "is_permutation_equivariant": {
        "bucle fila a fila con math.isclose": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X, dtype=float)
    orden = list(perm)
    a = np.asarray(fn(X[..., orden, :]), dtype=float)
    b = np.asarray(fn(X), dtype=float)[..., orden, :]
    if a.shape != b.shape:
        return False
    return all(math.isclose(x, y, rel_tol=0.0, abs_tol=atol) for x, y in zip(a.ravel(), b.ravel()))
""",
        "diferencia máxima": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.array(X, dtype=float)
    idx = np.asarray(perm)
    salida_perm = np.asarray(fn(np.take(X, idx, axis=-2)))
    perm_salida = np.take(np.asarray(fn(X)), idx, axis=-2)
    return salida_perm.shape == perm_salida.shape and float(np.max(np.abs(salida_perm - perm_salida))) <= atol
""",
    },
    "toy_forward": {
        "reutiliza sus funciones (build_input y scaled_dot_product_attention)": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    n = ids.shape[0]
    X = build_input(ids, params["E"], params["P"])
    h = layer_norm(X)
    Q, K, V = qkv_project(h, params["W_Q"], params["W_K"], params["W_V"])
    O, _ = scaled_dot_product_attention(Q, K, V, mask=np.tril(np.ones((n, n), dtype=bool)))
    X = X + O @ params["W_O"]
    return layer_norm(X[-1]) @ params["E"].T
""",
        "float32 y la atención solo de la última fila": """
def toy_forward(ids, params):
    p = {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}
    ids = np.asarray(ids)
    n = len(ids)
    X = p["E"][ids] + p["P"][:n]
    h = layer_norm(X)
    q = h[-1] @ p["W_Q"]
    K, V = h @ p["W_K"], h @ p["W_V"]
    s = K @ q / np.sqrt(np.float32(q.shape[-1]))
    w = np.exp(s - s.max())
    w = w / w.sum()
    ultima = X[-1] + (w @ V) @ p["W_O"]
    return layer_norm(ultima) @ p["E"].T
""",
    },
    "attention_cost": {
        "potencia": """
def attention_cost(n, d_k=1):
    if not (n >= 0 and d_k >= 1):
        raise ValueError("n >= 0 y d_k >= 1")
    return n ** 2 * d_k
""",
        "suma de filas": """
def attention_cost(n, d_k=1):
    if n < 0:
        raise ValueError("n negativo")
    if d_k < 1:
        raise ValueError("d_k < 1")
    return sum([int(n) * int(d_k)] * int(n))
""",
    },
    "most_attended": {
        "bucle con el primer máximo": """
def most_attended(A, i):
    filas = [list(map(float, fila)) for fila in A]
    if i < 0 or i >= len(filas):
        raise IndexError("no existe esa fila")
    fila = filas[i]
    return fila.index(max(fila))
""",
        "torch.argmax sobre la fila": """
def most_attended(A, i):
    A = torch.as_tensor(np.asarray(A, dtype=float))
    if not 0 <= i < A.shape[0]:
        raise IndexError("no existe esa fila")
    return int(np.argmax(A[i].numpy()))
""",
    },
}

# ---------------------------------------------------------------- audit 2026-12: valid answers by family
_AUDIT = {
    "embed": {
        "integer E converted with astype, rows taken with a comprehension": """
def embed(ids, E):
    E = np.asarray(E).astype(np.float64)
    ids = np.asarray(ids)
    if (ids < 0).any() or (ids >= len(E)).any():
        raise IndexError("ID fuera del vocabulario")
    planos = [E[int(t)] for t in ids.reshape(-1)]
    return np.array(planos, dtype=float).reshape(ids.shape + (E.shape[1],))
""",
    },
    "qkv_project": {
        "np.dot over a list of the three W, float32": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=np.float32)
    return tuple(np.matmul(X, np.asarray(W, dtype=np.float32)) for W in (W_Q, W_K, W_V))
""",
    },
    "most_attended": {
        "loop keeping the first maximum, with .item()": """
def most_attended(A, i):
    A = np.asarray(A, dtype=float)
    if i < 0 or i >= A.shape[0]:
        raise IndexError("fila")
    return np.argmax(A[i]).item()
""",
    },
    "is_permutation_equivariant": {
        "np.isclose with rtol=0, returning np.bool_": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.array(X, dtype=float)
    idx = list(perm)
    a = np.asarray(fn(X[..., idx, :]))
    b = np.asarray(fn(X))[..., idx, :]
    if a.shape != b.shape:
        return False
    return np.isclose(a, b, rtol=0, atol=atol).all()
""",
    },
    "attention_cost": {
        "math.prod": """
def attention_cost(n, d_k=1):
    if n < 0:
        raise ValueError("n")
    if d_k < 1:
        raise ValueError("d_k")
    return math.prod((n, n, d_k))
""",
    },
}
for _answer, _by_name in _AUDIT.items():
    ALTERNATIVES[_answer].update(_by_name)
