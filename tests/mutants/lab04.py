"""Wrong implementations of lab 04's exercises: chapter 04's common mistakes (M4.1-M4.5 and the extras of the
syllabus) plus the families every lab covers (in-place changes, boundaries, return types, dtypes, ignored optional
arguments, missing errors).

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the
llmlab function that does the same job (an expression in the notebook's namespace: the setup cell
imports llmlab.layers as L, llmlab.sampling as S and llmlab.model as LM); the harness adds a mutant
that merely calls it.
"""

LAB = "lab04-como-elige-palabras"

REFERENCES = {
    "layer_norm": "L.layer_norm",
    "rms_norm": "L.rms_norm",
    "mlp": "L.mlp",
    "mlp_param_count": "L.mlp_param_count",
    "apply_temperature": "S.apply_temperature",
    "top_k_filter": "S.top_k_filter",
    "top_p_filter": "S.top_p_filter",
    "min_p_filter": "S.min_p_filter",
    "final_probs": "(lambda logits, **knobs: S.Sampler(do_sample=True, **knobs).probs(logits))",
    "sample_next_token": "(lambda logits, greedy=False, **knobs: S.sample_next_token(logits, do_sample=not greedy, **knobs))",
    "generate": "LM.generate",
}

# The correct helpers a mutant of one function of a two-function cell keeps unchanged.
_MLP_COUNT_OK = '''
def mlp_param_count(d, expansion=4, bias=True):
    h = expansion * d
    return int(2 * d * h + ((h + d) if bias else 0))
'''
_MLP_OK = '''
def mlp(X, W1, b1, W2, b2):
    return L.gelu(np.asarray(X, dtype=float) @ W1 + b1) @ W2 + b2
'''
_SAMPLE_OK = '''
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        return torch.argmax(logits, dim=-1)
    probs = final_probs(logits, temperature, top_k, top_p, min_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
'''
_FINAL_OK = '''
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False):
    scores = logits if temperature_last else S.apply_temperature(logits, temperature)
    if top_k is not None:
        scores = S.top_k_filter(scores, top_k)
    if top_p is not None:
        scores = S.top_p_filter(scores, top_p)
    if min_p is not None:
        scores = S.min_p_filter(scores, min_p)
    if temperature_last:
        scores = S.apply_temperature(scores, temperature)
    return torch.softmax(scores, dim=-1)
'''

MUTANTS = {
    "layer_norm": {
        "sin epsilon (un vector constante da NaN)": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)
    out = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True))
    if gamma is not None:
        out = out * np.asarray(gamma)
    if beta is not None:
        out = out + np.asarray(beta)
    return out
""",
        "epsilon fuera de la raíz": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)
    out = (x - mu) / (x.std(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        out = out * np.asarray(gamma)
    if beta is not None:
        out = out + np.asarray(beta)
    return out
""",
        "varianza muestral (ddof=1)": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)
    out = (x - mu) / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)
    if gamma is not None:
        out = out * np.asarray(gamma)
    if beta is not None:
        out = out + np.asarray(beta)
    return out
""",
        "normaliza entre tokens (axis=0)": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=0, keepdims=True)
    out = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=0, keepdims=True) + eps)
    if gamma is not None:
        out = out * np.asarray(gamma)
    if beta is not None:
        out = out + np.asarray(beta)
    return out
""",
        "media de todo el array (el código del libro, solo vale en 1D)": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    mu = x.mean()
    out = (x - mu) / np.sqrt(((x - mu) ** 2).mean() + eps)
    if gamma is not None:
        out = out * np.asarray(gamma)
    if beta is not None:
        out = out + np.asarray(beta)
    return out
""",
        "gamma y beta antes de normalizar": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    if gamma is not None:
        x = x * np.asarray(gamma)
    if beta is not None:
        x = x + np.asarray(beta)
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
""",
        "resta la media pero no divide": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    out = x - x.mean(axis=-1, keepdims=True)
    if gamma is not None:
        out = out * np.asarray(gamma)
    if beta is not None:
        out = out + np.asarray(beta)
    return out
""",
    },
    "rms_norm": {
        "resta la media (eso es LayerNorm)": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    x = x - x.mean(axis=-1, keepdims=True)
    out = x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)
    return out if gamma is None else out * np.asarray(gamma)
""",
        "sin raíz cuadrada": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    out = x / ((x ** 2).mean(axis=-1, keepdims=True) + eps)
    return out if gamma is None else out * np.asarray(gamma)
""",
        "suma en vez de media": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    out = x / np.sqrt((x ** 2).sum(axis=-1, keepdims=True) + eps)
    return out if gamma is None else out * np.asarray(gamma)
""",
        "sin epsilon (una fila de ceros da NaN)": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    out = x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True))
    return out if gamma is None else out * np.asarray(gamma)
""",
        "media de todo el array": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    out = x / np.sqrt((x ** 2).mean() + eps)
    return out if gamma is None else out * np.asarray(gamma)
""",
        "ignora gamma": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    return x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)
""",
    },
    "mlp": {
        "mezcla posiciones: X.T @ W1 (solo «funciona» si n == d)": """
def mlp(X, W1, b1, W2, b2):
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        return L.gelu(X @ W1 + b1) @ W2 + b2
    return L.gelu(X.T @ W1 + b1) @ W2 + b2
""" + _MLP_COUNT_OK,
        "activación después de W2": """
def mlp(X, W1, b1, W2, b2):
    return L.gelu((np.asarray(X, dtype=float) @ W1 + b1) @ W2 + b2)
""" + _MLP_COUNT_OK,
        "sin activación (dos capas lineales = una)": """
def mlp(X, W1, b1, W2, b2):
    return (np.asarray(X, dtype=float) @ W1 + b1) @ W2 + b2
""" + _MLP_COUNT_OK,
        "ReLU en vez de GELU": """
def mlp(X, W1, b1, W2, b2):
    return np.maximum(np.asarray(X, dtype=float) @ W1 + b1, 0) @ W2 + b2
""" + _MLP_COUNT_OK,
        "GELU aproximada con tanh": """
def mlp(X, W1, b1, W2, b2):
    return L.gelu(np.asarray(X, dtype=float) @ W1 + b1, approximate=True) @ W2 + b2
""" + _MLP_COUNT_OK,
        "olvida b1": """
def mlp(X, W1, b1, W2, b2):
    return L.gelu(np.asarray(X, dtype=float) @ W1) @ W2 + b2
""" + _MLP_COUNT_OK,
        "cuenta sin los sesgos": _MLP_OK + """
def mlp_param_count(d, expansion=4, bias=True):
    return int(2 * expansion * d * d)
""",
        "cuenta 4d² (solo una matriz)": _MLP_OK + """
def mlp_param_count(d, expansion=4, bias=True):
    return int(expansion * d * d + ((expansion * d + d) if bias else 0))
""",
        "sesgos mal contados (2d)": _MLP_OK + """
def mlp_param_count(d, expansion=4, bias=True):
    return int(2 * expansion * d * d + (2 * d if bias else 0))
""",
        "ignora expansion": _MLP_OK + """
def mlp_param_count(d, expansion=4, bias=True):
    return int(8 * d * d + (5 * d if bias else 0))
""",
    },
    "apply_temperature": {
        "la temperatura multiplica": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError
    return logits * temperature
""",
        "softmax antes de la temperatura": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError
    return torch.softmax(logits, dim=-1) / temperature
""",
        "temperatura como p ** T": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError
    return torch.log(torch.softmax(logits, dim=-1) ** temperature)
""",
        "devuelve probabilidades en vez de logits": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError
    return torch.softmax(logits / temperature, dim=-1)
""",
        "temperatura 0 no se rechaza": """
def apply_temperature(logits, temperature):
    return logits / max(temperature, 1e-6)
""",
    },
    "top_k_filter": {
        "se queda con k + 1": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(max(k, min_tokens_to_keep) + 1, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
""",
        "rompe los empates (exactamente k índices)": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    keep = torch.topk(logits, k, dim=-1).indices
    mask = torch.ones_like(logits, dtype=torch.bool).scatter(-1, keep, False)
    return logits.masked_fill(mask, float("-inf"))
""",
        "pone 0 en vez de -inf": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, 0.0)
""",
        "<= en vez de < (quita el k-ésimo)": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits <= kth, float("-inf"))
""",
        "no recorta k al vocabulario": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    kth = torch.topk(logits, max(k, min_tokens_to_keep), dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
""",
        "un umbral para todo el lote": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    kth = torch.topk(logits.flatten(), k).values[-1]
    return logits.masked_fill(logits < kth, float("-inf"))
""",
        "modifica la entrada (masked_fill_)": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill_(logits < kth, float("-inf"))
""",
        "ignora min_tokens_to_keep": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
""",
    },
    "top_p_filter": {
        "deja fuera el token que cruza el umbral (acumulada < p)": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError
    probs, idx = torch.sort(torch.softmax(logits, dim=-1), descending=True, dim=-1)
    remove = torch.cumsum(probs, dim=-1) >= p
    remove[..., :min_tokens_to_keep] = False
    return logits.masked_fill(remove.scatter(-1, idx, remove), float("-inf"))
""",
        "sin ordenar": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    remove = torch.cumsum(probs, dim=-1) - probs >= p
    remove[..., :min_tokens_to_keep] = False
    return logits.masked_fill(remove, float("-inf"))
""",
        "top-k con k = int(p·V)": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError
    k = max(int(p * logits.shape[-1]), min_tokens_to_keep, 1)
    kth = torch.topk(logits, min(k, logits.shape[-1]), dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
""",
        "acumula logits en vez de probabilidades": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError
    z, idx = torch.sort(logits, descending=True, dim=-1)
    share = z / z.sum(dim=-1, keepdim=True)
    remove = torch.cumsum(share, dim=-1) - share >= p
    remove[..., :min_tokens_to_keep] = False
    return logits.masked_fill(remove.scatter(-1, idx, remove), float("-inf"))
""",
        "devuelve el recorte en el orden ordenado": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError
    z, idx = torch.sort(logits, descending=True, dim=-1)
    probs = torch.softmax(z, dim=-1)
    remove = torch.cumsum(probs, dim=-1) - probs >= p
    remove[..., :min_tokens_to_keep] = False
    return z.masked_fill(remove, float("-inf"))
""",
        "devuelve probabilidades recortadas (ceros, no -inf)": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    sp, idx = torch.sort(probs, descending=True, dim=-1)
    remove = torch.cumsum(sp, dim=-1) - sp >= p
    remove[..., :min_tokens_to_keep] = False
    kept = probs.masked_fill(remove.scatter(-1, idx, remove), 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)
""",
        "ignora min_tokens_to_keep": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError
    probs, idx = torch.sort(torch.softmax(logits, dim=-1), descending=True, dim=-1)
    remove = torch.cumsum(probs, dim=-1) - probs >= p
    remove[..., :1] = False
    return logits.masked_fill(remove.scatter(-1, idx, remove), float("-inf"))
""",
        "solo la primera fila del lote": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0 <= p <= 1:
        raise ValueError
    flat = logits.reshape(-1, logits.shape[-1])
    probs, idx = torch.sort(torch.softmax(flat[0], dim=-1), descending=True)
    remove = torch.cumsum(probs, dim=-1) - probs >= p
    remove[:min_tokens_to_keep] = False
    remove = remove.scatter(-1, idx, remove)
    return logits.masked_fill(remove.expand_as(logits), float("-inf"))
""",
    },
    "min_p_filter": {
        "umbral sobre los logits": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0 <= min_p <= 1:
        raise ValueError
    remove = logits < min_p * logits.amax(dim=-1, keepdim=True)
    keep = torch.topk(logits, min(min_tokens_to_keep, logits.shape[-1]), dim=-1).indices
    return logits.masked_fill(remove.scatter(-1, keep, False), float("-inf"))
""",
        "umbral absoluto (sin multiplicar por el máximo)": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0 <= min_p <= 1:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    remove = probs < min_p
    keep = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    return logits.masked_fill(remove.scatter(-1, keep, False), float("-inf"))
""",
        "<= en vez de <": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0 <= min_p <= 1:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    remove = probs <= min_p * probs.amax(dim=-1, keepdim=True)
    keep = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    return logits.masked_fill(remove.scatter(-1, keep, False), float("-inf"))
""",
        "ignora min_tokens_to_keep": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0 <= min_p <= 1:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    return logits.masked_fill(probs < min_p * probs.amax(dim=-1, keepdim=True), float("-inf"))
""",
        "máximo de todo el lote": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0 <= min_p <= 1:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    remove = probs < min_p * probs.max()
    keep = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    return logits.masked_fill(remove.scatter(-1, keep, False), float("-inf"))
""",
    },
    "sample_next_token": {
        "recorta antes de calentar": """
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    scores = logits
    if top_k is not None:
        scores = S.top_k_filter(scores, top_k)
    if top_p is not None:
        scores = S.top_p_filter(scores, top_p)
    if min_p is not None:
        scores = S.min_p_filter(scores, min_p)
    return torch.softmax(S.apply_temperature(scores, temperature), dim=-1)
""" + _SAMPLE_OK,
        "top-p antes que top-k": """
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    scores = S.apply_temperature(logits, temperature)
    if top_p is not None:
        scores = S.top_p_filter(scores, top_p)
    if top_k is not None:
        scores = S.top_k_filter(scores, top_k)
    if min_p is not None:
        scores = S.min_p_filter(scores, min_p)
    return torch.softmax(scores, dim=-1)
""" + _SAMPLE_OK,
        "recorta sin renormalizar": """
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    probs = torch.softmax(S.apply_temperature(logits, temperature), dim=-1)
    scores = logits / temperature
    if top_k is not None:
        scores = S.top_k_filter(scores, top_k)
    if top_p is not None:
        scores = S.top_p_filter(scores, top_p)
    if min_p is not None:
        scores = S.min_p_filter(scores, min_p)
    return torch.where(torch.isfinite(scores), probs, torch.zeros_like(probs))
""" + _SAMPLE_OK,
        "temperatura como p ** (1/T) tras la softmax, sin renormalizar": """
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    scores = logits
    if top_k is not None:
        scores = S.top_k_filter(scores, top_k)
    if top_p is not None:
        scores = S.top_p_filter(scores, top_p)
    if min_p is not None:
        scores = S.min_p_filter(scores, min_p)
    return torch.softmax(scores, dim=-1) ** (1.0 / temperature)
""" + _SAMPLE_OK,
        "muestrea con logits / suma": _FINAL_OK + """
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        return torch.argmax(logits, dim=-1)
    z = logits.clamp(min=0)
    return torch.multinomial(z / z.sum(dim=-1, keepdim=True), 1, generator=generator).squeeze(-1)
""",
        "no usa el generador (no reproducible)": _FINAL_OK + """
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        return torch.argmax(logits, dim=-1)
    return torch.multinomial(final_probs(logits, temperature, top_k, top_p, min_p), 1).squeeze(-1)
""",
        "greedy se ignora": _FINAL_OK + """
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    probs = final_probs(logits, temperature, top_k, top_p, min_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
""",
        "una sola tirada para todo el lote": _FINAL_OK + """
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        return torch.argmax(logits, dim=-1)
    probs = final_probs(logits, temperature, top_k, top_p, min_p).reshape(-1, logits.shape[-1])
    token = torch.multinomial(probs[0], 1, generator=generator)
    return token.expand(probs.shape[0]).reshape(logits.shape[:-1])
""",
    },
    "generate": {
        "solo pasa el último token al modelo": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens):
        ids.append(int(sample_next_token(logits_fn(ids[-1:]), **sampling)))
        if eos_id is not None and ids[-1] == eos_id:
            break
    return ids
""",
        "no para en el EOS": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens):
        ids.append(int(sample_next_token(logits_fn(ids), **sampling)))
    return ids
""",
        "quita el EOS de la salida": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens):
        nuevo = int(sample_next_token(logits_fn(ids), **sampling))
        if eos_id is not None and nuevo == eos_id:
            break
        ids.append(nuevo)
    return ids
""",
        "un token de más": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens + 1):
        ids.append(int(sample_next_token(logits_fn(ids), **sampling)))
        if eos_id is not None and ids[-1] == eos_id:
            break
    return ids
""",
        "modifica el prompt": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = prompt_ids
    for _ in range(max_new_tokens):
        ids.append(int(sample_next_token(logits_fn(ids), **sampling)))
        if eos_id is not None and ids[-1] == eos_id:
            break
    return ids
""",
        "devuelve solo los tokens nuevos": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens):
        ids.append(int(sample_next_token(logits_fn(ids), **sampling)))
        if eos_id is not None and ids[-1] == eos_id:
            break
    return ids[len(prompt_ids):]
""",
        "ignora los mandos (siempre greedy)": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens):
        ids.append(int(torch.argmax(logits_fn(ids))))
        if eos_id is not None and ids[-1] == eos_id:
            break
    return ids
""",
    },
}

_MORE = {
    "layer_norm": {
        "resta la media en su sitio (x -= media)": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x)
    x -= x.mean(axis=-1, keepdims=True)
    salida = x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    if beta is not None:
        salida = salida + np.asarray(beta, dtype=float)
    return salida
""",
        "ignora eps (siempre 1e-5)": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    c = x - x.mean(axis=-1, keepdims=True)
    salida = c / np.sqrt((c**2).mean(axis=-1, keepdims=True) + 1e-5)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    if beta is not None:
        salida = salida + np.asarray(beta, dtype=float)
    return salida
""",
        "beta solo si también hay gamma": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    c = x - x.mean(axis=-1, keepdims=True)
    salida = c / np.sqrt((c**2).mean(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
        if beta is not None:
            salida = salida + np.asarray(beta, dtype=float)
    return salida
""",
        "devuelve una lista": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    c = x - x.mean(axis=-1, keepdims=True)
    salida = c / np.sqrt((c**2).mean(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    if beta is not None:
        salida = salida + np.asarray(beta, dtype=float)
    return salida.tolist()
""",
    },
    "rms_norm": {
        "el código de la celda: resta la media": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    centrada = x - x.mean(axis=-1, keepdims=True)
    salida = centrada / np.sqrt((centrada**2).mean(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    return salida
""",
        "eps fuera de la raíz": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    salida = x / (np.sqrt((x**2).mean(axis=-1, keepdims=True)) + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    return salida
""",
        "divide x en su sitio": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x)
    x /= np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        return x * np.asarray(gamma, dtype=float)
    return x.astype(float)
""",
        "ignora eps": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    salida = x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + 1e-5)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    return salida
""",
    },
    "mlp": {
        "devuelve float en la cuenta": """
def mlp(X, W1, b1, W2, b2):
    return L.gelu(np.asarray(X, dtype=float) @ W1 + b1) @ W2 + b2

def mlp_param_count(d, expansion=4, bias=True):
    h = expansion * d
    return float(2 * d * h + ((h + d) if bias else 0))
""",
        "vacía X al terminar (modifica la entrada)": """
def mlp(X, W1, b1, W2, b2):
    X = np.asarray(X)
    salida = L.gelu(X @ W1 + b1) @ W2 + b2
    X *= 0.0
    return salida
""" + _MLP_COUNT_OK,
        "ignora expansion distinta de 4": """
def mlp(X, W1, b1, W2, b2):
    return L.gelu(np.asarray(X, dtype=float) @ W1 + b1) @ W2 + b2

def mlp_param_count(d, expansion=4, bias=True):
    h = expansion * d
    return int(2 * d * h + ((h + d) if bias else 0)) if expansion == 4 else int(2 * d * 4 * d + 5 * d)
""",
    },
    "apply_temperature": {
        "divide en su sitio (logits /= T)": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError
    logits /= temperature
    return logits
""",
        "solo rechaza T = 0": """
def apply_temperature(logits, temperature):
    if temperature == 0:
        raise ValueError
    return logits / temperature
""",
        "devuelve un array de NumPy": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError
    return (logits / temperature).numpy()
""",
        "pasa a float32 (pierde float64)": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError
    return logits.float() / temperature
""",
    },
    "top_k_filter": {
        "devuelve un array de NumPy": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    umbral = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < umbral, float("-inf")).numpy()
""",
        "acepta k negativo": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k == 0:
        raise ValueError
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    umbral = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < umbral, float("-inf"))
""",
        "pasa a float32": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    logits = logits.float()
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    umbral = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < umbral, float("-inf"))
""",
        "min_tokens_to_keep recorta k en vez de subirlo": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError
    k = min(k, min_tokens_to_keep, logits.shape[-1]) if min_tokens_to_keep > 1 else min(k, logits.shape[-1])
    umbral = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < umbral, float("-inf"))
""",
    },
    "top_p_filter": {
        "el código de la celda: quita el token que cruza (acumulada >= p)": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    ordenadas, indices = torch.sort(probs, descending=True, dim=-1)
    acumulada = torch.cumsum(ordenadas, dim=-1)
    quitar = acumulada >= p
    quitar[..., :min_tokens_to_keep] = False
    quitar = quitar.scatter(-1, indices, quitar)
    return logits.masked_fill(quitar, float("-inf"))
""",
        "> en vez de >= (se queda un token de más cuando la masa es justa)": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    ordenadas, indices = torch.sort(probs, descending=True, dim=-1)
    quitar = torch.cumsum(ordenadas, dim=-1) - ordenadas > p
    quitar[..., :min_tokens_to_keep] = False
    quitar = quitar.scatter(-1, indices, quitar)
    return logits.masked_fill(quitar, float("-inf"))
""",
        "modifica la entrada (masked_fill_)": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    ordenadas, indices = torch.sort(probs, descending=True, dim=-1)
    quitar = torch.cumsum(ordenadas, dim=-1) - ordenadas >= p
    quitar[..., :min_tokens_to_keep] = False
    quitar = quitar.scatter(-1, indices, quitar)
    return logits.masked_fill_(quitar, float("-inf"))
""",
        "no valida p negativo": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if p > 1.0:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    ordenadas, indices = torch.sort(probs, descending=True, dim=-1)
    quitar = torch.cumsum(ordenadas, dim=-1) - ordenadas >= p
    quitar[..., :min_tokens_to_keep] = False
    quitar = quitar.scatter(-1, indices, quitar)
    return logits.masked_fill(quitar, float("-inf"))
""",
    },
    "min_p_filter": {
        "modifica la entrada (masked_fill_)": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    quitar = probs < min_p * probs.amax(dim=-1, keepdim=True)
    mejores = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    quitar = quitar.scatter(-1, mejores, False)
    return logits.masked_fill_(quitar, float("-inf"))
""",
        "no valida min_p negativo": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if min_p > 1.0:
        raise ValueError
    probs = torch.softmax(logits, dim=-1)
    quitar = probs < min_p * probs.amax(dim=-1, keepdim=True)
    mejores = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    quitar = quitar.scatter(-1, mejores, False)
    return logits.masked_fill(quitar, float("-inf"))
""",
        "pasa a float32": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError
    logits = logits.float()
    probs = torch.softmax(logits, dim=-1)
    quitar = probs < min_p * probs.amax(dim=-1, keepdim=True)
    mejores = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    quitar = quitar.scatter(-1, mejores, False)
    return logits.masked_fill(quitar, float("-inf"))
""",
    },
    "sample_next_token": {
        "ignora temperature_last (siempre el orden de transformers)": _FINAL_OK.replace(
            "scores = logits if temperature_last else S.apply_temperature(logits, temperature)",
            "scores = S.apply_temperature(logits, temperature)").replace(
            "    if temperature_last:\n        scores = S.apply_temperature(scores, temperature)\n", "") + _SAMPLE_OK,
        "temperature_last al revés": _FINAL_OK.replace("if temperature_last else", "if not temperature_last else").replace(
            "    if temperature_last:\n        scores", "    if not temperature_last:\n        scores") + _SAMPLE_OK,
        "con temperature_last calienta dos veces": _FINAL_OK.replace(
            "scores = logits if temperature_last else S.apply_temperature(logits, temperature)",
            "scores = S.apply_temperature(logits, temperature)") + _SAMPLE_OK,
        "voraz devuelve un int de Python": _FINAL_OK + '''
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        return int(torch.argmax(logits))
    probs = final_probs(logits, temperature, top_k, top_p, min_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
''',
        "modifica los logits en su sitio (div_)": '''
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False):
    scores = logits
    if not temperature_last:
        scores = logits.div_(temperature)
    if top_k is not None:
        scores = S.top_k_filter(scores, top_k)
    if top_p is not None:
        scores = S.top_p_filter(scores, top_p)
    if min_p is not None:
        scores = S.min_p_filter(scores, min_p)
    if temperature_last:
        scores = scores / temperature
    return torch.softmax(scores, dim=-1)
''' + _SAMPLE_OK,
        "devuelve probabilidades en NumPy": '''
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False):
    scores = logits if temperature_last else S.apply_temperature(logits, temperature)
    if top_k is not None:
        scores = S.top_k_filter(scores, top_k)
    if top_p is not None:
        scores = S.top_p_filter(scores, top_p)
    if min_p is not None:
        scores = S.min_p_filter(scores, min_p)
    if temperature_last:
        scores = S.apply_temperature(scores, temperature)
    return torch.softmax(scores, dim=-1).numpy()
''' + _SAMPLE_OK.replace("probs = final_probs(logits, temperature, top_k, top_p, min_p)",
                         "probs = torch.as_tensor(final_probs(logits, temperature, top_k, top_p, min_p))"),
    },
    "generate": {
        "devuelve un tensor": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens):
        siguiente = int(sample_next_token(logits_fn(ids), **sampling))
        ids.append(siguiente)
        if eos_id is not None and siguiente == eos_id:
            break
    return torch.tensor(ids)
""",
        "no convierte el prompt (tensores de 0 dimensiones en la lista)": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = list(prompt_ids)
    for _ in range(max_new_tokens):
        siguiente = int(sample_next_token(logits_fn(ids), **sampling))
        ids.append(siguiente)
        if eos_id is not None and siguiente == eos_id:
            break
    return ids
""",
        "no pasa los mandos a sample_next_token": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    gen = sampling.get("generator")
    voraz = sampling.get("greedy", False)
    for _ in range(max_new_tokens):
        siguiente = int(sample_next_token(logits_fn(ids), greedy=voraz, generator=gen))
        ids.append(siguiente)
        if eos_id is not None and siguiente == eos_id:
            break
    return ids
""",
        "llama al modelo aunque max_new_tokens sea 0": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    logits = logits_fn(ids)
    for paso in range(max_new_tokens):
        if paso:
            logits = logits_fn(ids)
        siguiente = int(sample_next_token(logits, **sampling))
        ids.append(siguiente)
        if eos_id is not None and siguiente == eos_id:
            break
    return ids
""",
        "el EOS se compara con is (no para con enteros grandes)": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens):
        siguiente = sample_next_token(logits_fn(ids), **sampling)
        ids.append(int(siguiente))
        if siguiente is eos_id:
            break
    return ids
""",
    },
}
for _answer, _extra in _MORE.items():
    MUTANTS.setdefault(_answer, {}).update(_extra)

# ---------------------------------------------------------------- audit 2026-12: wrong answers by family
# Written from the statements alone (issue 26, «Graders by family»): integer inputs where floats are promised,
# «a new tensor» promised and the input returned when nothing is filtered, a minimum to keep larger than the
# vocabulary, ties in the greedy argmax, the prompt list returned itself.

_AUDIT = {
    "layer_norm": {
        "zeros_like keeps an integer dtype": """
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x)
    salida = np.zeros_like(x)
    media = x.mean(axis=-1, keepdims=True)
    varianza = ((x - media) ** 2).mean(axis=-1, keepdims=True)
    salida[...] = (x - media) / np.sqrt(varianza + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    if beta is not None:
        salida = salida + np.asarray(beta, dtype=float)
    return salida
""",
    },
    "rms_norm": {
        "empty_like keeps an integer dtype": """
def rms_norm(x, gamma=None, eps=1e-5):
    x = np.asarray(x)
    salida = np.empty_like(x)
    salida[...] = x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    return salida
""",
    },
    "apply_temperature": {
        "returns the input itself when T == 1": """
def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError("temperatura")
    if temperature == 1:
        return logits
    return logits / temperature
""",
    },
    "top_k_filter": {
        "returns the input itself when k covers the vocabulary": """
def top_k_filter(logits, k, min_tokens_to_keep=1):
    if k < 1:
        raise ValueError("k")
    k = max(k, min_tokens_to_keep)
    if k >= logits.shape[-1]:
        return logits
    umbral = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < umbral, float("-inf"))
""",
    },
    "top_p_filter": {
        "returns the input itself when p == 1": """
def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError("p")
    if p == 1.0:
        return logits
    probs = torch.softmax(logits, dim=-1)
    ordenadas, indices = torch.sort(probs, descending=True, dim=-1)
    acumulada = torch.cumsum(ordenadas, dim=-1)
    quitar = acumulada - ordenadas >= p
    quitar[..., :min_tokens_to_keep] = False
    quitar = quitar.scatter(-1, indices, quitar)
    return logits.masked_fill(quitar, float("-inf"))
""",
    },
    "min_p_filter": {
        "returns the input itself when min_p == 0": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError("min_p")
    if min_p == 0:
        return logits
    probs = torch.softmax(logits, dim=-1)
    quitar = probs < min_p * probs.amax(dim=-1, keepdim=True)
    mejores = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    return logits.masked_fill(quitar.scatter(-1, mejores, False), float("-inf"))
""",
        "min_tokens_to_keep above the vocabulary crashes": """
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError("min_p")
    probs = torch.softmax(logits, dim=-1)
    quitar = probs < min_p * probs.amax(dim=-1, keepdim=True)
    mejores = torch.topk(probs, min_tokens_to_keep, dim=-1).indices
    return logits.masked_fill(quitar.scatter(-1, mejores, False), float("-inf"))
""",
    },
    "sample_next_token": {
        "greedy ties go to the last index": _FINAL_OK + """
def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    if greedy:
        V = logits.shape[-1]
        return V - 1 - torch.argmax(logits.flip(-1), dim=-1)
    probs = final_probs(logits, temperature, top_k, top_p, min_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
""",
    },
    "generate": {
        "returns the prompt list itself when max_new_tokens = 0": """
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    ids = prompt_ids
    for _ in range(max_new_tokens):
        siguiente = int(sample_next_token(logits_fn(ids), **sampling))
        ids = [int(t) for t in ids] + [siguiente]
        if eos_id is not None and siguiente == eos_id:
            break
    return ids if isinstance(ids, list) else [int(t) for t in ids]
""",
    },
}
for _answer, _by_name in _AUDIT.items():
    MUTANTS[_answer].update(_by_name)
