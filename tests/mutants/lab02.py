"""Wrong implementations of lab 02's exercises: chapter 02's common mistakes and the families every lab covers
(in-place changes, boundaries, return types, numerical stability, ignored optional arguments, missing errors).

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the
llmlab function that does the same job; the harness adds a mutant that merely calls it. `toy_forward`
has no single reference: its entry is a forward pass assembled from llmlab's own pieces.
"""

LAB = "lab02-transformer-por-dentro"

REFERENCES = {
    "embed": "EMB.embed",
    "sinusoidal_positions": "POS.sinusoidal_positions",
    "build_input": "EMB.build_input",
    "attention_row": "ATT.attention_row",
    "qkv_project": "ATT.qkv_project",
    "scaled_dot_product_attention": "ATT.scaled_dot_product_attention",
    "is_permutation_equivariant": "POS.is_permutation_equivariant",
    "toy_forward": (
        "(lambda ids, params: (lambda X: layer_norm((X + ATT.causal_attention(*ATT.qkv_project("
        "layer_norm(X), params['W_Q'], params['W_K'], params['W_V']))[0] @ params['W_O'])[-1]) @ params['E'].T)"
        "(EMB.build_input(ids, params['E'], params['P'])))"
    ),
    "attention_cost": "C.attention_cost",
    "most_attended": "ATT.most_attended",
}

MUTANTS = {
    "embed": {
        "devuelve (d_model, n): traspuesto": """
def embed(ids, E):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= len(E)):
        raise IndexError
    return np.swapaxes(np.asarray(E, dtype=float)[ids], -1, -2)
""",
        "IDs negativos dan la vuelta (E[-1])": """
def embed(ids, E):
    ids = np.asarray(ids)
    if ids.size and ids.max() >= len(E):
        raise IndexError
    return np.asarray(E, dtype=float)[ids]
""",
        "recorta los IDs fuera de rango en vez de fallar": """
def embed(ids, E):
    return np.take(np.asarray(E, dtype=float), np.asarray(ids), axis=0, mode="clip")
""",
        "pierde la dimensión de lote": """
def embed(ids, E):
    ids = np.asarray(ids).reshape(-1)
    if ids.size and (ids.min() < 0 or ids.max() >= len(E)):
        raise IndexError
    return np.asarray(E, dtype=float)[ids]
""",
    },
    "sinusoidal_positions": {
        "seno y coseno intercambiados": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = np.arange(n)[:, None] / base ** (2 * (j // 2) / d)
    return np.where(j % 2 == 0, np.cos(ang), np.sin(ang))
""",
        "exponente i/d en lugar de 2i/d": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = np.arange(n)[:, None] / base ** ((j // 2) / d)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang))
""",
        "exponente j/d con el índice de columna": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = np.arange(n)[:, None] / base ** (j / d)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang))
""",
        "ignora el parámetro base (siempre 10000)": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = np.arange(n)[:, None] / 10000.0 ** (2 * (j // 2) / d)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang))
""",
        "posiciones desde 1": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = np.arange(1, n + 1)[:, None] / base ** (2 * (j // 2) / d)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang))
""",
        "rellena por mitades: no funciona con d impar": """
def sinusoidal_positions(n, d, base=10000.0):
    pe = np.zeros((n, d))
    ang = np.arange(n)[:, None] / base ** (np.arange(0, d, 2) / d)
    pe[:, 0::2] = np.sin(ang)
    pe[:, 1::2] = np.cos(ang)
    return pe
""",
    },
    "build_input": {
        "olvida las posiciones": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    if ids.shape[-1] > len(P):
        raise ValueError
    return np.asarray(E, dtype=float)[ids]
""",
        "P indexada por ID (P[ids])": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    if ids.shape[-1] > len(P):
        raise ValueError
    return np.asarray(E, dtype=float)[ids] + np.asarray(P, dtype=float)[ids]
""",
        "P entera sin recortar a n": """
def build_input(ids, E, P):
    return np.asarray(E, dtype=float)[np.asarray(ids)] + np.asarray(P, dtype=float)
""",
        "n leído del primer eje (falla con lotes)": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    n = ids.shape[0]
    if n > len(P):
        raise ValueError
    return np.asarray(E, dtype=float)[ids] + np.asarray(P, dtype=float)[:n]
""",
        "no comprueba n > max_len": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    n = min(ids.shape[-1], len(P))
    x = np.asarray(E, dtype=float)[ids]
    x[..., :n, :] += np.asarray(P, dtype=float)[:n]
    return x
""",
    },
    "attention_row": {
        "softmax sin restar el máximo": """
def attention_row(scores, values):
    e = np.exp(np.asarray(scores, dtype=float))
    w = e / e.sum()
    return w, w @ np.asarray(values, dtype=float)
""",
        "exp(s) @ V sin normalizar": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - s.max())
    return e / e.sum(), np.exp(s) @ np.asarray(values, dtype=float)
""",
        "normaliza dividiendo por la suma de las puntuaciones": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=float)
    w = s / s.sum()
    return w, w @ np.asarray(values, dtype=float)
""",
        "suma los valores sin ponderar": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - s.max())
    return e / e.sum(), np.asarray(values, dtype=float).sum(axis=0)
""",
    },
    "qkv_project": {
        "la misma matriz para Q, K y V": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=float)
    return X @ W_Q, X @ W_Q, X @ W_Q
""",
        "vectores columna (X @ Wᵀ)": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=float)
    return X @ np.asarray(W_Q).T, X @ np.asarray(W_K).T, X @ np.asarray(W_V).T
""",
        "K y V intercambiadas": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=float)
    return X @ W_Q, X @ W_V, X @ W_K
""",
    },
    "scaled_dot_product_attention": {
        "sin dividir por √d_k": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    S = np.asarray(Q, float) @ np.swapaxes(np.asarray(K, float), -1, -2)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "divide por d_k en vez de por √d_k": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, float)
    S = Q @ np.swapaxes(np.asarray(K, float), -1, -2) / Q.shape[-1]
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "softmax sin restar el máximo": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, float)
    S = Q @ np.swapaxes(np.asarray(K, float), -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S)
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "softmax sobre toda la matriz": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, float)
    S = Q @ np.swapaxes(np.asarray(K, float), -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max())
    A = e / e.sum()
    return A @ V, A
""",
        "softmax por columnas (axis=0)": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, float)
    S = Q @ np.swapaxes(np.asarray(K, float), -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-2, keepdims=True))
    A = e / e.sum(axis=-2, keepdims=True)
    return A @ V, A
""",
        "K.T en lugar de trasponer los dos últimos ejes": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "ignora la máscara": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, float)
    S = Q @ np.swapaxes(np.asarray(K, float), -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "exp(S) @ V sin normalizar la salida": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q, float)
    S = Q @ np.swapaxes(np.asarray(K, float), -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return e @ V, A
""",
    },
    "is_permutation_equivariant": {
        "no reordena la salida: compara fn(X[perm]) con fn(X)": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X, dtype=float)
    return bool(np.allclose(fn(X[..., perm, :]), fn(X), atol=atol))
""",
        "reordena la salida con la permutación inversa": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X, dtype=float)
    return bool(np.allclose(fn(X[..., perm, :]), fn(X)[..., np.argsort(perm), :], atol=atol))
""",
        "permuta el primer eje (el lote, si lo hay)": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X, dtype=float)
    return bool(np.allclose(fn(X[perm]), fn(X)[perm], atol=atol))
""",
        "siempre True": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    return True
""",
    },
    "toy_forward": {
        "logits de X[0] en lugar de X[-1]": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    X = params["E"][ids] + params["P"][:len(ids)]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    X = X + A @ V @ params["W_O"]
    return layer_norm(X[0]) @ params["E"].T
""",
        "olvida las posiciones": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    X = params["E"][ids]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    X = X + A @ V @ params["W_O"]
    return layer_norm(X[-1]) @ params["E"].T
""",
        "post-norm: normaliza después del residuo (pseudocódigo del capítulo)": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    X = params["E"][ids] + params["P"][:len(ids)]
    Q, K, V = X @ params["W_Q"], X @ params["W_K"], X @ params["W_V"]
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    X = layer_norm(X + A @ V @ params["W_O"])
    return X[-1] @ params["E"].T
""",
        "sin la normalización final": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    X = params["E"][ids] + params["P"][:len(ids)]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    X = X + A @ V @ params["W_O"]
    return X[-1] @ params["E"].T
""",
        "sin residuo": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    X = params["E"][ids] + params["P"][:len(ids)]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    X = A @ V @ params["W_O"]
    return layer_norm(X[-1]) @ params["E"].T
""",
        "sin W_O": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    X = params["E"][ids] + params["P"][:len(ids)]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    X = X + A @ V
    return layer_norm(X[-1]) @ params["E"].T
""",
        "devuelve los logits de todas las posiciones": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    X = params["E"][ids] + params["P"][:len(ids)]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / np.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(-1, keepdims=True))
    A = A / A.sum(-1, keepdims=True)
    X = X + A @ V @ params["W_O"]
    return layer_norm(X) @ params["E"].T
""",
    },
    "attention_cost": {
        "lineal en n (n · d_k)": """
def attention_cost(n, d_k=1):
    if n < 0 or d_k < 1:
        raise ValueError
    return int(n * d_k)
""",
        "parejas sin repetir, n(n−1)/2": """
def attention_cost(n, d_k=1):
    if n < 0 or d_k < 1:
        raise ValueError
    return int(n * (n - 1) // 2 * d_k)
""",
        "olvida d_k": """
def attention_cost(n, d_k=1):
    if n < 0 or d_k < 1:
        raise ValueError
    return int(n * n)
""",
        "devuelve float": """
def attention_cost(n, d_k=1):
    if n < 0 or d_k < 1:
        raise ValueError
    return float(n) ** 2 * d_k
""",
        "no valida n negativo": """
def attention_cost(n, d_k=1):
    return int(n * n * d_k)
""",
    },
}

_MORE = {
    "embed": {
        "devuelve una lista": """
def embed(ids, E):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= len(E)):
        raise IndexError
    return np.asarray(E, dtype=float)[ids].tolist()
""",
        "solo comprueba el primer ID de cada frase": """
def embed(ids, E):
    ids = np.asarray(ids)
    primeros = ids.reshape(-1, ids.shape[-1])[:, 0]
    if primeros.min() < 0 or primeros.max() >= len(E):
        raise IndexError
    return np.asarray(E, dtype=float)[ids]
""",
        "<= V en vez de < V": """
def embed(ids, E):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() > len(E)):
        raise IndexError
    return np.asarray(E, dtype=float)[np.minimum(ids, len(E) - 1)]
""",
        "ordena los IDs en su sitio": """
def embed(ids, E):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= len(E)):
        raise IndexError
    salida = np.asarray(E, dtype=float)[ids]
    ids.sort(axis=-1)
    return salida
""",
        "devuelve enteros si E es entera (sin convertir a float)": """
def embed(ids, E):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= len(E)):
        raise IndexError
    return np.round(np.asarray(E)[ids], 2)
""",
    },
    "sinusoidal_positions": {
        "devuelve una lista de listas": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = np.arange(n)[:, None] / base ** (2 * (j // 2) / d)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang)).tolist()
""",
        "forma traspuesta (d, n)": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = np.arange(n)[:, None] / base ** (2 * (j // 2) / d)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang)).T
""",
        "calcula en float16": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = (np.arange(n)[:, None] / base ** (2 * (j // 2) / d)).astype(np.float16)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang))
""",
        "base elevada a 2i/d con el índice de pareja sin multiplicar por 2": """
def sinusoidal_positions(n, d, base=10000.0):
    j = np.arange(d)
    ang = np.arange(n)[:, None] / base ** ((j // 2) / d)
    return np.where(j % 2 == 0, np.sin(ang), np.cos(ang))
""",
    },
    "build_input": {
        "suma la posición dentro de P (modifica P)": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    E = np.asarray(E, dtype=float)
    P = np.asarray(P)
    if ids.size and (ids.min() < 0 or ids.max() >= E.shape[0]):
        raise IndexError
    n = ids.shape[-1]
    if n > P.shape[0]:
        raise ValueError
    if ids.ndim == 1 and P.dtype.kind == "f":
        P[:n] += E[ids]
        return P[:n].copy()
    return E[ids] + P[:n]
""",
        "no valida los IDs": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    E, P = np.asarray(E, dtype=float), np.asarray(P, dtype=float)
    n = ids.shape[-1]
    if n > P.shape[0]:
        raise ValueError
    return E[ids % len(E)] + P[:n]
""",
        "n > max_len con >= (rechaza el caso justo)": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    E, P = np.asarray(E, dtype=float), np.asarray(P, dtype=float)
    if ids.size and (ids.min() < 0 or ids.max() >= E.shape[0]):
        raise IndexError
    n = ids.shape[-1]
    if n >= P.shape[0]:
        raise ValueError
    return E[ids] + P[:n]
""",
        "devuelve una lista": """
def build_input(ids, E, P):
    ids = np.asarray(ids)
    E, P = np.asarray(E, dtype=float), np.asarray(P, dtype=float)
    if ids.size and (ids.min() < 0 or ids.max() >= E.shape[0]):
        raise IndexError
    n = ids.shape[-1]
    if n > P.shape[0]:
        raise ValueError
    return (E[ids] + P[:n]).tolist()
""",
    },
    "attention_row": {
        "resta el máximo en su sitio (modifica scores)": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=float)
    s -= s.max()
    e = np.exp(s)
    w = e / e.sum()
    return w, w @ np.asarray(values, dtype=float)
""",
        "devuelve listas": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - s.max())
    w = e / e.sum()
    return w.tolist(), (w @ np.asarray(values, dtype=float)).tolist()
""",
        "devuelve (output, weights)": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - s.max())
    w = e / e.sum()
    return w @ np.asarray(values, dtype=float), w
""",
        "resta el mínimo (overflow con puntuaciones enormes)": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - s.min())
    w = e / e.sum()
    return w, w @ np.asarray(values, dtype=float)
""",
        "calcula en float16": """
def attention_row(scores, values):
    s = np.asarray(scores, dtype=np.float16)
    e = np.exp(s - s.max())
    w = e / e.sum()
    return w, w @ np.asarray(values, dtype=np.float16)
""",
    },
    "qkv_project": {
        "devuelve una lista [Q, K, V]": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=float)
    return [X @ W_Q, X @ W_K, X @ W_V]
""",
        "no acepta listas (X.shape falla)": """
def qkv_project(X, W_Q, W_K, W_V):
    if X.shape[-1] != np.shape(W_Q)[0]:
        raise ValueError
    return X @ W_Q, X @ W_K, X @ W_V
""",
        "solo la primera frase del lote": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=float)
    X = X.reshape(-1, X.shape[-2], X.shape[-1])[0]
    return X @ W_Q, X @ W_K, X @ W_V
""",
    },
    "scaled_dot_product_attention": {
        "máximo global (de todo el lote) en vez de por fila": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(M, dtype=float) for M in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max())
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "máscara con la convención contraria (True = prohibido)": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(M, dtype=float) for M in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, -np.inf, S)
    with np.errstate(invalid="ignore"):
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "máscara aplicada con ceros después de la softmax": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(M, dtype=float) for M in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:
        A = A * mask
    return A @ V, A
""",
        "escala en su sitio (Q /= √d_k modifica Q)": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q = np.asarray(Q)
    K, V = np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    Q /= math.sqrt(Q.shape[-1])
    S = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
        "devuelve (A, O)": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(M, dtype=float) for M in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A, A @ V
""",
        "d_k = número de tokens (Q.shape[-2])": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(M, dtype=float) for M in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-2])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
""",
    },
    "is_permutation_equivariant": {
        "ignora atol (tolerancia fija 1e-8)": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X, dtype=float)
    a, b = np.asarray(fn(X[..., perm, :])), np.asarray(fn(X))[..., perm, :]
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=0, atol=1e-8))
""",
        "compara con == exacto": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X, dtype=float)
    return bool(np.array_equal(fn(X[..., perm, :]), np.asarray(fn(X))[..., perm, :]))
""",
        "permuta X en su sitio": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X)
    original = np.asarray(fn(X.copy()))
    X[...] = X[..., perm, :]
    return bool(np.allclose(fn(X), original[..., perm, :], rtol=0, atol=atol))
""",
        "devuelve un array de booleanos": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X, dtype=float)
    return np.isclose(fn(X[..., perm, :]), np.asarray(fn(X))[..., perm, :], rtol=0, atol=atol)
""",
        "no acepta listas (X[..., perm, :] sobre una lista)": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    if not hasattr(X, "shape"):
        raise TypeError("X debe ser un array")
    return bool(np.allclose(fn(X[..., perm, :]), np.asarray(fn(X))[..., perm, :], rtol=0, atol=atol))
""",
    },
    "toy_forward": {
        "vacía la tabla P de params al terminar (la modifica)": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    E, P = params["E"], params["P"]
    n = len(ids)
    X = E[ids] + P[:n]
    P[:n] = 0.0
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / math.sqrt(Q.shape[-1]) + np.triu(np.full((n, n), -1e9), k=1)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    X = X + (A @ V) @ params["W_O"]
    return layer_norm(X[-1]) @ E.T
""",
        "logits con una matriz de salida aparte (Eᵀ sin normalizar X)": """
def toy_forward(ids, params):
    ids = np.asarray(ids)
    E, P = params["E"], params["P"]
    n = len(ids)
    X = E[ids] + P[:n]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / math.sqrt(Q.shape[-1]) + np.triu(np.full((n, n), -1e9), k=1)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    X = X + (A @ V) @ params["W_O"]
    return X[-1] @ E.T
""",
    },
    "attention_cost": {
        "acepta d_k = 0": """
def attention_cost(n, d_k=1):
    if n < 0 or d_k < 0:
        raise ValueError
    return int(n) * int(n) * int(d_k)
""",
        "rechaza n = 0": """
def attention_cost(n, d_k=1):
    if n <= 0 or d_k < 1:
        raise ValueError
    return int(n) * int(n) * int(d_k)
""",
        "ignora d_k": """
def attention_cost(n, d_k=1):
    if n < 0 or d_k < 1:
        raise ValueError
    return int(n) * int(n)
""",
        "n² · d_k² ": """
def attention_cost(n, d_k=1):
    if n < 0 or d_k < 1:
        raise ValueError
    return int(n) * int(n) * int(d_k) ** 2
""",
    },
    "most_attended": {
        "el código de la celda: lee la columna": """
def most_attended(A, i):
    A = np.asarray(A, dtype=float)
    if not 0 <= i < A.shape[0]:
        raise IndexError
    return int(np.argmax(A[:, i]))
""",
        "el que menos mira (argmin)": """
def most_attended(A, i):
    A = np.asarray(A, dtype=float)
    if not 0 <= i < A.shape[0]:
        raise IndexError
    return int(np.argmin(A[i]))
""",
        "índices negativos se cuelan (A[-1])": """
def most_attended(A, i):
    A = np.asarray(A, dtype=float)
    if i >= A.shape[0]:
        raise IndexError
    return int(np.argmax(A[i]))
""",
        "empates al último índice": """
def most_attended(A, i):
    A = np.asarray(A, dtype=float)
    if not 0 <= i < A.shape[0]:
        raise IndexError
    fila = A[i]
    return int(len(fila) - 1 - np.argmax(fila[::-1]))
""",
        "devuelve el peso, no el índice": """
def most_attended(A, i):
    A = np.asarray(A, dtype=float)
    if not 0 <= i < A.shape[0]:
        raise IndexError
    return float(np.max(A[i]))
""",
        "devuelve un entero de NumPy de 0 dimensiones como array": """
def most_attended(A, i):
    A = np.asarray(A, dtype=float)
    if not 0 <= i < A.shape[0]:
        raise IndexError
    return np.argmax(A[i], keepdims=True)
""",
    },
}
for _answer, _extra in _MORE.items():
    MUTANTS.setdefault(_answer, {}).update(_extra)

# ---------------------------------------------------------------- audit 2026-12: wrong answers by family
# Written from the statements alone (issue 26, «Graders by family»): integer inputs where float arrays are
# promised, a Python int promised and a NumPy integer returned, a relative tolerance where only atol is asked.

_AUDIT = {
    "embed": {
        "an integer E gives integer rows": """
def embed(ids, E):
    ids = np.asarray(ids)
    E = np.asarray(E)
    if ids.size and (ids.min() < 0 or ids.max() >= E.shape[0]):
        raise IndexError("fuera del vocabulario")
    return E[ids]
""",
    },
    "qkv_project": {
        "integer matrices give integer Q, K, V": """
def qkv_project(X, W_Q, W_K, W_V):
    X = np.asarray(X)
    return X @ np.asarray(W_Q), X @ np.asarray(W_K), X @ np.asarray(W_V)
""",
    },
    "most_attended": {
        "returns np.int64": """
def most_attended(A, i):
    A = np.asarray(A, dtype=float)
    if not 0 <= i < A.shape[0]:
        raise IndexError("fila")
    return np.argmax(A[i])
""",
    },
    "is_permutation_equivariant": {
        "np.allclose keeps its default relative tolerance": """
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    X = np.asarray(X, dtype=float)
    perm = np.asarray(perm)
    a = np.asarray(fn(X[..., perm, :]), dtype=float)
    b = np.asarray(fn(X), dtype=float)[..., perm, :]
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol))
""",
    },
    "attention_cost": {
        "np.square returns np.int64": """
def attention_cost(n, d_k=1):
    if n < 0 or d_k < 1:
        raise ValueError("n, d_k")
    return np.square(n) * d_k
""",
    },
}
for _answer, _by_name in _AUDIT.items():
    MUTANTS[_answer].update(_by_name)
