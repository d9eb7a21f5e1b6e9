"""Valid answers to lab 04's exercises, written differently from the solution: each must get full marks."""

LAB = "lab04-como-elige-palabras"

_SAMPLE_LOOP = '''
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        return logits.argmax(dim=-1)
    probs = final_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
    planas = probs.reshape(-1, probs.shape[-1])
    fichas = torch.multinomial(planas, 1, generator=generator)
    return fichas.reshape(probs.shape[:-1])
'''

ALTERNATIVES = {
    "layer_norm": {
        "np.var y np.mean en float32": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=np.float32)
    salida = (x - np.mean(x, axis=-1, keepdims=True)) / np.sqrt(np.var(x, axis=-1, keepdims=True) + np.float32(eps))
    if gamma is not None:
        salida = np.asarray(gamma, dtype=np.float32) * salida
    if beta is not None:
        salida = salida + np.asarray(beta, dtype=np.float32)
    return salida
""",
        "bucle por filas con math": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.array(x, dtype=float)
    d = x.shape[-1]
    filas = x.reshape(-1, d)
    salida = np.empty_like(filas)
    for i, fila in enumerate(filas):
        media = sum(fila) / d
        var = sum((v - media) ** 2 for v in fila) / d
        salida[i] = [(v - media) / math.sqrt(var + eps) for v in fila]
    salida = salida.reshape(x.shape)
    g = np.ones(d) if gamma is None else np.asarray(gamma, dtype=float)
    b = np.zeros(d) if beta is None else np.asarray(beta, dtype=float)
    return salida * g + b
""",
        "con torch.nn.functional.layer_norm": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    t = torch.as_tensor(np.asarray(x, dtype=float))
    g = None if gamma is None else torch.as_tensor(np.asarray(gamma, dtype=float))
    b = None if beta is None else torch.as_tensor(np.asarray(beta, dtype=float))
    return torch.nn.functional.layer_norm(t, t.shape[-1:], weight=g, bias=b, eps=eps).numpy()
""",
    },
    "rms_norm": {
        "raíz de la media de cuadrados con np.linalg.norm": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    rms = np.sqrt(np.linalg.norm(x, axis=-1, keepdims=True) ** 2 / x.shape[-1] + eps)
    salida = x / rms
    return salida if gamma is None else salida * np.asarray(gamma, dtype=float)
""",
        "float32 con multiplicación por la inversa": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=np.float32)
    inversa = 1.0 / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + np.float32(eps))
    salida = x * inversa
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=np.float32)
    return salida
""",
    },
    "mlp": {
        "bucle por tokens con su propia GELU (erf)": """
def mlp(X, W1, b1, W2, b2):
    X = np.asarray(X, dtype=float)
    gelu = np.vectorize(lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))))
    filas = X.reshape(-1, X.shape[-1])
    salida = np.array([gelu(f @ W1 + b1) @ W2 + b2 for f in filas])
    return salida.reshape(X.shape[:-1] + (np.shape(W2)[1],))


def mlp_param_count(d, expansion=4, bias=True):
    h = d * expansion
    total = d * h + h * d
    if bias:
        total += h + d
    return total
""",
        "torch en float32": """
def mlp(X, W1, b1, W2, b2):
    t = torch.as_tensor(np.asarray(X, dtype=np.float32))
    a = lambda M: torch.as_tensor(np.asarray(M, dtype=np.float32))
    oculta = torch.nn.functional.gelu(t @ a(W1) + a(b1))
    return (oculta @ a(W2) + a(b2)).numpy()


def mlp_param_count(d, expansion=4, bias=True):
    return 2 * expansion * d * d + (expansion * d + d) * int(bool(bias))
""",
    },
    "apply_temperature": {
        "torch.div": """
def apply_temperature(logits, temperature):
    if not temperature > 0:
        raise ValueError("la temperatura debe ser positiva")
    return torch.div(logits, temperature)
""",
        "multiplicar por la inversa (mismo resultado a 1e-6)": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError("la temperatura debe ser positiva")
    return logits * (1.0 / temperature)
""",
    },
    "top_k_filter": {
        "ordenar y tomar el k-ésimo": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError("k >= 1")
    k = max(k, min_tokens_to_keep)
    k = min(k, logits.shape[-1])
    kesimo = torch.sort(logits, dim=-1, descending=True).values[..., k - 1:k]
    return torch.where(logits >= kesimo, logits, torch.full_like(logits, float("-inf")))
""",
        "kthvalue sobre los logits negados": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError("k >= 1")
    V = logits.shape[-1]
    k = min(max(k, min_tokens_to_keep), V)
    umbral = -torch.kthvalue(-logits, k, dim=-1, keepdim=True).values
    salida = logits.clone()
    salida[logits < umbral] = float("-inf")
    return salida
""",
    },
    "top_p_filter": {
        "acumulada exclusiva con cumsum desplazado": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if p < 0 or p > 1:
        raise ValueError("p en [0, 1]")
    probs = torch.softmax(logits, dim=-1)
    ordenadas, indices = probs.sort(dim=-1, descending=True)
    antes = torch.cat([torch.zeros_like(ordenadas[..., :1]), ordenadas.cumsum(-1)[..., :-1]], dim=-1)
    quitar_ordenado = antes >= p
    quitar_ordenado[..., :min_tokens_to_keep] = False
    quitar = torch.zeros_like(quitar_ordenado).scatter(-1, indices, quitar_ordenado)
    return logits.masked_fill(quitar, float("-inf"))
""",
        "como Hugging Face: orden ascendente y cola de masa <= 1 - p": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError("p en [0, 1]")
    ordenados, indices = torch.sort(logits, descending=False, dim=-1)
    acumulada = ordenados.softmax(dim=-1).cumsum(dim=-1)
    quitar = acumulada <= (1 - p)
    quitar[..., -min_tokens_to_keep:] = False
    return logits.masked_fill(quitar.scatter(-1, indices, quitar), float("-inf"))
""",
    },
    "min_p_filter": {
        "en espacio logarítmico": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError("min_p en [0, 1]")
    logp = torch.log_softmax(logits, dim=-1)
    with torch.no_grad():
        umbral = logp.amax(dim=-1, keepdim=True) + (math.log(min_p) if min_p > 0 else float("-inf"))
    quitar = logp < umbral
    orden = torch.argsort(logp, dim=-1, descending=True)[..., :min_tokens_to_keep]
    quitar = quitar.scatter(-1, orden, False)
    return torch.where(quitar, torch.full_like(logits, float("-inf")), logits)
""",
        "probabilidades y clone": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if min_p < 0 or min_p > 1:
        raise ValueError("min_p en [0, 1]")
    probs = logits.softmax(dim=-1)
    maximo = probs.max(dim=-1, keepdim=True).values
    quitar = probs < maximo * min_p
    k = min(min_tokens_to_keep, probs.shape[-1])
    quitar.scatter_(-1, probs.topk(k, dim=-1).indices, False)
    salida = logits.clone()
    salida[quitar] = float("-inf")
    return salida
""",
    },
    "sample_next_token": {
        "con sus propios filtros y una lista de pasos": """
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False):
    pasos = []
    if not temperature_last:
        pasos.append(lambda z: apply_temperature(z, temperature))
    if top_k is not None:
        pasos.append(lambda z: top_k_filter(z, top_k))
    if top_p is not None:
        pasos.append(lambda z: top_p_filter(z, top_p))
    if min_p is not None:
        pasos.append(lambda z: min_p_filter(z, min_p))
    if temperature_last:
        pasos.append(lambda z: z / temperature)
    z = logits
    for paso in pasos:
        z = paso(z)
    return torch.softmax(z, dim=-1)
""" + _SAMPLE_LOOP,
        "con los filtros de llmlab (permitidos) y el orden explícito": """
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False):
    recortes = [(S.top_k_filter, top_k), (S.top_p_filter, top_p), (S.min_p_filter, min_p)]
    z = logits.clone()
    if not temperature_last:
        z = S.apply_temperature(z, temperature)
    for filtro, valor in recortes:
        if valor is not None:
            z = filtro(z, valor)
    if temperature_last:
        z = S.apply_temperature(z, temperature)
    return z.softmax(-1)


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        return torch.argmax(logits, dim=-1)
    probs = final_probs(logits, temperature, top_k, top_p, min_p)
    return torch.multinomial(probs, 1, generator=generator)[..., 0]
""",
    },
    "generate": {
        "bucle while": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = list(map(int, prompt_ids))
    nuevos = 0
    while nuevos < max_new_tokens:
        token = int(sample_next_token(logits_fn(list(ids)), **sampling))
        ids.append(token)
        nuevos += 1
        if token == eos_id:
            break
    return ids
""",
        "lista de generados aparte": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    prompt = [int(t) for t in prompt_ids]
    generados = []
    for _ in range(max_new_tokens):
        siguiente = sample_next_token(logits_fn(prompt + generados), **sampling).item()
        generados.append(int(siguiente))
        if eos_id is not None and generados[-1] == eos_id:
            break
    return prompt + generados
""",
    },
}

# ---------------------------------------------------------------- audit 2026-12: valid answers by family
_AUDIT = {
    "layer_norm": {
        "np.var with ones and zeros by default (integer input allowed)": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x)
    d = x.shape[-1]
    gamma = np.ones(d) if gamma is None else np.asarray(gamma)
    beta = np.zeros(d) if beta is None else np.asarray(beta)
    centrada = x - x.mean(axis=-1, keepdims=True)
    return gamma * centrada / np.sqrt(x.var(axis=-1, keepdims=True) + eps) + beta
""",
    },
    "apply_temperature": {
        "clone and div_ in place on the copy": """
def apply_temperature(logits, temperature):
    if not temperature > 0:
        raise ValueError("temperatura")
    salida = logits.clone()
    salida.div_(temperature)
    return salida
""",
    },
    "top_k_filter": {
        "torch.where with a full -inf tensor": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError("k")
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    kesimo = logits.sort(dim=-1, descending=True).values[..., k - 1:k]
    return torch.where(logits >= kesimo, logits, torch.full_like(logits, float("-inf")))
""",
    },
    "min_p_filter": {
        "sorted probabilities, keep the first min_tokens_to_keep by slicing": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not (0 <= min_p <= 1):
        raise ValueError("min_p")
    probs = torch.softmax(logits, dim=-1)
    ordenadas, indices = probs.sort(dim=-1, descending=True)
    quitar = ordenadas < min_p * ordenadas[..., :1]
    quitar[..., :min_tokens_to_keep] = False
    return logits.masked_fill(quitar.scatter(-1, indices, quitar), float("-inf"))
""",
    },
    "sample_next_token": {
        "greedy with max(dim=-1).indices": """
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False):
    z = logits if temperature_last else apply_temperature(logits, temperature)
    for filtro, valor in ((top_k_filter, top_k), (top_p_filter, top_p), (min_p_filter, min_p)):
        if valor is not None:
            z = filtro(z, valor)
    if temperature_last:
        z = apply_temperature(z, temperature)
    return torch.softmax(z, dim=-1)


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        return logits.max(dim=-1).indices
    probs = final_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
""",
    },
    "generate": {
        "copies with list() and compares the EOS as int": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    salida = [int(t) for t in list(prompt_ids)]
    for _ in range(int(max_new_tokens)):
        t = sample_next_token(logits_fn(salida), **sampling)
        salida = salida + [int(t)]
        if eos_id is not None and int(t) == int(eos_id):
            break
    return list(salida)
""",
    },
}
for _answer, _by_name in _AUDIT.items():
    ALTERNATIVES[_answer].update(_by_name)
