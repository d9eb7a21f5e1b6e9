"""Wrong implementations of lab 01's exercises: chapter 01's common mistakes and the families every lab covers.

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the
llmlab function that does the same job; the harness adds a mutant that merely calls it.

Families (LAB-CONVENTIONS): modifies its input in place, boundary (<= vs <, GB vs GiB, off-by-one), wrong
return type, numerically unstable, ignores a non-default optional argument, does not raise the documented
ValueError, plus the chapter's mistakes.
"""

LAB = "lab01-que-es-un-llm"

REFERENCES = {
    "softmax": "lf.softmax",
    "nll": "M.nll",
    "sequence_log_prob": "M.sequence_log_prob",
    "perplexity": "M.perplexity",
    "perplexity_from_loss": "M.perplexity_from_loss",
    "moe_weights_and_flops": "C.moe_weights_and_flops",
    "linear_param_count": "C.linear_param_count",
    "transformer_param_estimate": "C.transformer_param_estimate",
    "weight_memory": "C.weight_memory",
    "kv_cache_bytes": "C.kv_cache_bytes",
    "inference_memory_gb": "C.inference_memory_gb",
    "fits_on_gpu": "C.fits_on_gpu",
    "choose_model": "C.choose_model",
}

MUTANTS = {
    "softmax": {
        "no resta el máximo (nan con logits grandes)": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    e = np.exp(np.asarray(logits, dtype=float) / temperature)
    return e / e.sum(axis=-1, keepdims=True)
""",
        "no normaliza (devuelve exp(z))": """
def softmax(logits, temperature=1.0):
    z = np.asarray(logits, dtype=float) / temperature
    return np.exp(z - z.max(axis=-1, keepdims=True))
""",
        "la temperatura multiplica": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float) * temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        "normaliza toda la matriz, no cada fila": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()
""",
        "temperatura 0 no se rechaza": """
def softmax(logits, temperature=1.0):
    z = np.asarray(logits, dtype=float) / max(temperature, 1e-9)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
    },
    "nll": {
        "logaritmo en base 10": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    s = -np.log10(p)
    return float(s.sum() if reduction == "sum" else s.mean())
""",
        "media y suma intercambiadas": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    s = -np.log(p)
    return float(s.mean() if reduction == "sum" else s.sum())
""",
        "sin signo menos": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    s = np.log(p)
    return float(s.sum() if reduction == "sum" else s.mean())
""",
        "no valida probabilidades fuera de (0, 1]": """
def nll(probs, reduction="sum"):
    p = np.clip(np.asarray(probs, dtype=float), 1e-12, 1.0)
    s = -np.log(p)
    return float(s.sum() if reduction == "sum" else s.mean())
""",
    },
    "sequence_log_prob": {
        "multiplica las probabilidades (underflow)": """
def sequence_log_prob(cond_probs):
    return float(np.log(np.prod(cond_probs)))
""",
        "logaritmo en base 2": """
def sequence_log_prob(cond_probs):
    return float(np.sum(np.log2(cond_probs)))
""",
        "media en vez de suma": """
def sequence_log_prob(cond_probs):
    return float(np.mean(np.log(cond_probs)))
""",
    },
    "perplexity": {
        "exp de la pérdida total": """
def perplexity(probs):
    return float(np.exp(-np.sum(np.log(probs))))
""",
        "log2 en la pérdida y exp natural": """
def perplexity(probs):
    return float(np.exp(-np.mean(np.log2(probs))))
""",
        "devuelve la pérdida media, no su exponencial": """
def perplexity(probs):
    return float(-np.mean(np.log(probs)))
""",
    },
    "linear_param_count": {
        "olvida el sesgo": """
def linear_param_count(d_in, d_out, bias=True):
    return int(d_in * d_out)
""",
        "cuenta arrays en vez de elementos": """
def linear_param_count(d_in, d_out, bias=True):
    return 2 if bias else 1
""",
        "sesgo de tamaño d_in": """
def linear_param_count(d_in, d_out, bias=True):
    return int(d_in * d_out + (d_in if bias else 0))
""",
    },
    "transformer_param_estimate": {
        "12·L·d sin cuadrado": """
def transformer_param_estimate(n_layers, d_model):
    return int(12 * n_layers * d_model)
""",
        "12·L²·d": """
def transformer_param_estimate(n_layers, d_model):
    return int(12 * n_layers**2 * d_model)
""",
        "solo la atención (4·L·d²)": """
def transformer_param_estimate(n_layers, d_model):
    return int(4 * n_layers * d_model**2)
""",
        "devuelve float": """
def transformer_param_estimate(n_layers, d_model):
    return 12.0 * n_layers * d_model**2
""",
    },
    "weight_memory": {
        "GB y GiB iguales (1e9)": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}[dtype]
    return n_params * b / 1e9, n_params * b / 1e9
""",
        "4 bits contados como 4 bytes": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 4}[dtype]
    return n_params * b / 1e9, n_params * b / 2**30
""",
        "GiB como 1024**2": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}[dtype]
    return n_params * b / 1e9, n_params * b / 1024**2
""",
        "formato desconocido vale 2 bytes": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "int8": 1, "4bit": 0.5}.get(dtype, 2)
    return n_params * b / 1e9, n_params * b / 2**30
""",
    },
    "kv_cache_bytes": {
        "sin el factor 2 (K y V)": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads // n_heads
    return int(total)
""",
        "sin los bytes por valor (cuenta elementos)": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = 2 * n_layers * n_ctx * d_model * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads // n_heads
    return int(total)
""",
        "ignora las cabezas KV (GQA)": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    return int(2 * n_layers * n_ctx * d_model * bytes_per_value * batch)
""",
        "ignora el lote": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = 2 * n_layers * n_ctx * d_model * bytes_per_value
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads // n_heads
    return int(total)
""",
        "n_heads en lugar de n_kv_heads": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = 2 * n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_heads // n_kv_heads
    return int(total)
""",
    },
    "inference_memory": {
        "margen solo sobre los pesos": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return weights_gb * (1 + overhead) + kv_gb

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return inference_memory_gb(weights_gb, kv_gb, overhead) <= gpu_gb
""",
        "sin margen": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return weights_gb + kv_gb

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return inference_memory_gb(weights_gb, kv_gb, overhead) <= gpu_gb
""",
        "cabe solo si sobra (< en vez de <=)": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return (weights_gb + kv_gb) * (1 + overhead)

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return inference_memory_gb(weights_gb, kv_gb, overhead) < gpu_gb
""",
        "fits_on_gpu olvida la caché": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return (weights_gb + kv_gb) * (1 + overhead)

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return weights_gb * (1 + overhead) <= gpu_gb
""",
    },
    "choose_model": {
        "más grande es mejor (ignora la memoria)": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    return max(candidates, key=lambda c: c["quality"])["name"]
""",
        "el que más parámetros tiene de los que caben": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    ok = [c for c in candidates if (c["n_params"] * b[c["dtype"]] / 1e9 + c["kv_gb"]) * (1 + overhead) <= gpu_gb]
    if not ok:
        raise ValueError
    return max(ok, key=lambda c: c["n_params"])["name"]
""",
        "olvida la caché KV al comprobar": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    ok = [c for c in candidates if c["n_params"] * b[c["dtype"]] / 1e9 * (1 + overhead) <= gpu_gb]
    if not ok:
        raise ValueError
    return max(ok, key=lambda c: c["quality"])["name"]
""",
    },
}

# --- the families every lab covers -----------------------------------------------------------------------
_MORE = {
    "softmax": {
        "resta el máximo en su sitio (z -= max modifica la entrada)": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits)
    z -= z.max(axis=-1, keepdims=True)
    e = np.exp(z / temperature)
    return e / e.sum(axis=-1, keepdims=True)
""",
        "divide por la temperatura en su sitio": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float)
    z /= temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        "devuelve una lista": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).tolist()
""",
        "resta el máximo de toda la matriz (no el de cada fila)": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z - z.max())
    return e / e.sum(axis=-1, keepdims=True)
""",
        "ignora la temperatura": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        "solo rechaza temperatura 0 (acepta negativas)": """
def softmax(logits, temperature=1.0):
    if temperature == 0:
        raise ValueError
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        "calcula en float16 (precisión insuficiente)": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=np.float16) / np.float16(temperature)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
        "normaliza por columnas (axis=0)": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
""",
        "aplana la entrada (solo vectores)": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float).reshape(-1) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()
""",
        "resta el mínimo en vez del máximo": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError
    z = np.asarray(logits, dtype=float) / temperature
    e = np.exp(z - z.min(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
    },
    "nll": {
        "rechaza p = 1 (intervalo abierto)": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=float).reshape(-1)
    if np.any(p <= 0) or np.any(p >= 1):
        raise ValueError
    s = -np.log(p)
    return float(s.sum() if reduction == "sum" else s.mean())
""",
        "una reduction desconocida se trata como la media": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=float).reshape(-1)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    s = -np.log(p)
    return float(s.sum()) if reduction == "sum" else float(s.mean())
""",
        "devuelve un array de NumPy": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=float).reshape(-1)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    if reduction not in ("sum", "mean"):
        raise ValueError
    s = -np.log(p)
    return np.array([s.sum() if reduction == "sum" else s.mean()])
""",
        "logaritmo en su sitio (np.log(p, out=p))": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1) or reduction not in ("sum", "mean"):
        raise ValueError
    np.log(p, out=p)
    s = -p.reshape(-1)
    return float(s.sum() if reduction == "sum" else s.mean())
""",
        "solo acepta vectores (no aplana)": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    if reduction not in ("sum", "mean"):
        raise ValueError
    s = -np.log(p)
    return float(s.sum() if reduction == "sum" else s.mean(axis=-1)[0])
""",
    },
    "sequence_log_prob": {
        "no valida las probabilidades": """
def sequence_log_prob(cond_probs):
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(np.log(np.asarray(cond_probs, dtype=float))))
""",
        "devuelve un array": """
def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs, dtype=float).reshape(-1)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    return np.cumsum(np.log(p))[-1:]
""",
        "devuelve la probabilidad, no su logaritmo": """
def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs, dtype=float).reshape(-1)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    return float(np.exp(np.sum(np.log(p))))
""",
        "suma en float16": """
def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs, dtype=float).reshape(-1)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    return float(np.sum(np.log(p).astype(np.float16)))
""",
    },
    "perplexity": {
        "no valida las probabilidades": """
def perplexity(probs):
    p = np.clip(np.asarray(probs, dtype=float), 1e-12, 1.0)
    return float(np.exp(-np.mean(np.log(p))))
""",
        "inversa de la media aritmética de p": """
def perplexity(probs):
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    return float(1 / np.mean(p))
""",
        "media geométrica de p sin invertir": """
def perplexity(probs):
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    return float(np.exp(np.mean(np.log(p))))
""",
        "producto de probabilidades (underflow en textos largos)": """
def perplexity(probs):
    p = np.asarray(probs, dtype=float)
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError
    return float(np.prod(p) ** (-1 / p.size))
""",
    },
    "perplexity_from_loss": {
        "el código del compañero: exp de la pérdida total": """
def perplexity_from_loss(total_loss, n_tokens):
    if n_tokens <= 0:
        raise ValueError
    return math.exp(total_loss)
""",
        "divide entre n - 1": """
def perplexity_from_loss(total_loss, n_tokens):
    if n_tokens <= 0:
        raise ValueError
    return math.exp(total_loss / max(n_tokens - 1, 1))
""",
        "no valida n_tokens": """
def perplexity_from_loss(total_loss, n_tokens):
    return math.exp(total_loss / n_tokens) if n_tokens else math.inf
""",
        "devuelve la pérdida media": """
def perplexity_from_loss(total_loss, n_tokens):
    if n_tokens <= 0:
        raise ValueError
    return total_loss / n_tokens
""",
        "exponencial en base 2": """
def perplexity_from_loss(total_loss, n_tokens):
    if n_tokens <= 0:
        raise ValueError
    return 2 ** (total_loss / n_tokens)
""",
    },
    "linear_param_count": {
        "devuelve float": """
def linear_param_count(d_in, d_out, bias=True):
    return float(d_in * d_out + (d_out if bias else 0))
""",
        "ignora bias=False": """
def linear_param_count(d_in, d_out, bias=True):
    return int(d_in * d_out + d_out)
""",
        "un sesgo de más (d_out + 1)": """
def linear_param_count(d_in, d_out, bias=True):
    return int(d_in * d_out + (d_out + 1 if bias else 0))
""",
    },
    "transformer_param_estimate": {
        "8·L·d² (solo el MLP)": """
def transformer_param_estimate(n_layers, d_model):
    return int(8 * n_layers * d_model**2)
""",
        "en miles de millones y redondeado": """
def transformer_param_estimate(n_layers, d_model):
    return int(round(12 * n_layers * d_model**2 / 1e9))
""",
        "d^2 con el operador ^ (xor)": """
def transformer_param_estimate(n_layers, d_model):
    return int(12 * n_layers * d_model ^ 2)
""",
    },
    "weight_memory": {
        "devuelve una lista": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    if dtype not in b:
        raise ValueError
    return [n_params * b[dtype] / 1e9, n_params * b[dtype] / 2**30]
""",
        "(GiB, GB) en orden inverso": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    if dtype not in b:
        raise ValueError
    return n_params * b[dtype] / 2**30, n_params * b[dtype] / 1e9
""",
        "bf16 contado como 4 bytes": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 4, "int8": 1, "4bit": 0.5}
    if dtype not in b:
        raise ValueError
    return n_params * b[dtype] / 1e9, n_params * b[dtype] / 2**30
""",
        "división entera (pierde los decimales)": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    if dtype not in b:
        raise ValueError
    return n_params * b[dtype] // 1e9, n_params * b[dtype] // 2**30
""",
        "mayúsculas y minúsculas mezcladas aceptan cualquier cosa": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5, "int4": 0.5, "fp64": 8}
    d = dtype.lower()
    if d not in b:
        raise ValueError
    return n_params * b[d] / 1e9, n_params * b[d] / 2**30
""",
    },
    "kv_cache_bytes": {
        "GQA con división entera antes (8 // 32 = 0)": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = 2 * n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * (n_kv_heads // n_heads)
    return int(total)
""",
        "devuelve float": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = 2 * n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads / n_heads
    return total
""",
        "ignora bytes_per_value (siempre FP16)": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = 2 * n_layers * n_ctx * d_model * 2 * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads // n_heads
    return int(total)
""",
        "en GiB en vez de bytes": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = 2 * n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads // n_heads
    return int(total // 2**30)
""",
    },
    "moe_weights_and_flops": {
        "memoria con los parámetros activos": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params <= 0 or active_params > total_params:
        raise ValueError
    return weight_memory(active_params, dtype)[0], 2.0 * active_params
""",
        "cómputo con los parámetros totales": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params <= 0 or active_params > total_params:
        raise ValueError
    return weight_memory(total_params, dtype)[0], 2.0 * total_params
""",
        "sin el factor 2 de las operaciones": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params <= 0 or active_params > total_params:
        raise ValueError
    return weight_memory(total_params, dtype)[0], float(active_params)
""",
        "memoria en GiB": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params <= 0 or active_params > total_params:
        raise ValueError
    return weight_memory(total_params, dtype)[1], 2.0 * active_params
""",
        "ignora el dtype (siempre FP16)": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params <= 0 or active_params > total_params:
        raise ValueError
    return total_params * 2 / 1e9, 2.0 * active_params
""",
        "no comprueba activos <= totales": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params <= 0:
        raise ValueError
    return weight_memory(total_params, dtype)[0], 2.0 * active_params
""",
        "acepta activos = 0": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params < 0 or active_params > total_params:
        raise ValueError
    return weight_memory(total_params, dtype)[0], 2.0 * active_params
""",
        "devuelve una lista": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params <= 0 or active_params > total_params:
        raise ValueError
    return [weight_memory(total_params, dtype)[0], 2.0 * active_params]
""",
    },
    "inference_memory": {
        "el código del compañero (los dos errores)": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return weights_gb * (1 + overhead) + kv_gb

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return inference_memory_gb(weights_gb, kv_gb, overhead) < gpu_gb
""",
        "ignora el margen que le pasan (siempre 25 %)": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return (weights_gb + kv_gb) * 1.25

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return inference_memory_gb(weights_gb, kv_gb, overhead) <= gpu_gb
""",
        "fits_on_gpu no pasa el margen": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return (weights_gb + kv_gb) * (1 + overhead)

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return inference_memory_gb(weights_gb, kv_gb) <= gpu_gb
""",
        "margen multiplicado, no sumado (· overhead)": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return (weights_gb + kv_gb) * overhead

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return inference_memory_gb(weights_gb, kv_gb, overhead) <= gpu_gb
""",
        "fits_on_gpu devuelve la memoria que sobra": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return (weights_gb + kv_gb) * (1 + overhead)

def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return gpu_gb - inference_memory_gb(weights_gb, kv_gb, overhead)
""",
    },
    "choose_model": {
        "cabe solo si sobra (< en vez de <=)": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    ok = [c for c in candidates if (c["n_params"] * b[c["dtype"]] / 1e9 + c["kv_gb"]) * (1 + overhead) < gpu_gb]
    if not ok:
        raise ValueError
    return max(ok, key=lambda c: c["quality"])["name"]
""",
        "pesos en GiB": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    ok = [c for c in candidates if (c["n_params"] * b[c["dtype"]] / 2**30 + c["kv_gb"]) * (1 + overhead) <= gpu_gb]
    if not ok:
        raise ValueError
    return max(ok, key=lambda c: c["quality"])["name"]
""",
        "ignora el overhead que le pasan": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    ok = [c for c in candidates if (c["n_params"] * b[c["dtype"]] / 1e9 + c["kv_gb"]) * 1.25 <= gpu_gb]
    if not ok:
        raise ValueError
    return max(ok, key=lambda c: c["quality"])["name"]
""",
        "devuelve el diccionario, no el nombre": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    ok = [c for c in candidates if (c["n_params"] * b[c["dtype"]] / 1e9 + c["kv_gb"]) * (1 + overhead) <= gpu_gb]
    if not ok:
        raise ValueError
    return max(ok, key=lambda c: c["quality"])
""",
        "devuelve None si no cabe ninguno": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    ok = [c for c in candidates if (c["n_params"] * b[c["dtype"]] / 1e9 + c["kv_gb"]) * (1 + overhead) <= gpu_gb]
    return max(ok, key=lambda c: c["quality"])["name"] if ok else None
""",
        "ordena la lista de candidatos en su sitio": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    candidates.sort(key=lambda c: -c["quality"])
    for c in candidates:
        if (c["n_params"] * b[c["dtype"]] / 1e9 + c["kv_gb"]) * (1 + overhead) <= gpu_gb:
            return c["name"]
    raise ValueError
""",
        "apunta la memoria en cada diccionario": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    for c in candidates:
        c["total_gb"] = (c["n_params"] * b[c["dtype"]] / 1e9 + c["kv_gb"]) * (1 + overhead)
    ok = [c for c in candidates if c["total_gb"] <= gpu_gb]
    if not ok:
        raise ValueError
    return max(ok, key=lambda c: c["quality"])["name"]
""",
    },
}
for _answer, _extra in _MORE.items():
    MUTANTS.setdefault(_answer, {}).update(_extra)

# ---------------------------------------------------------------- audit 2026-12: wrong answers by family
# Written from the statements alone (issue 26, «Graders by family»): a Python float or int promised and a
# NumPy scalar returned, integer inputs where a float is promised, a format list wider than the statement's,
# ties broken towards the last candidate.

_AUDIT = {
    "nll": {
        "returns the NumPy scalar (np.float32 with float32 input)": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs).reshape(-1)
    if p.size == 0 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError("fuera de (0, 1]")
    s = -np.log(p)
    if reduction == "sum":
        return s.sum()
    if reduction == "mean":
        return s.mean()
    raise ValueError("reduction")
""",
    },
    "sequence_log_prob": {
        "returns the NumPy scalar (np.float32 with float32 input)": """
def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs).reshape(-1)
    if p.size == 0 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError("fuera de (0, 1]")
    return np.log(p).sum()
""",
    },
    "perplexity": {
        "returns the NumPy scalar (np.float32 with float32 input)": """
def perplexity(probs):
    p = np.asarray(probs).reshape(-1)
    if p.size == 0 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError("fuera de (0, 1]")
    return np.exp(-np.log(p).mean())
""",
    },
    "linear_param_count": {
        "np.prod returns np.int64": """
def linear_param_count(d_in, d_out, bias=True):
    return np.prod([d_in, d_out]) + (d_out if bias else 0)
""",
    },
    "transformer_param_estimate": {
        "np.prod returns np.int64": """
def transformer_param_estimate(n_layers, d_model):
    return np.prod([12, n_layers, d_model, d_model])
""",
    },
    "kv_cache_bytes": {
        "returns np.int64": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    total = 2 * n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads // n_heads
    return np.int64(total)
""",
    },
    "weight_memory": {
        "accepts upper-case names (FP16)": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    clave = dtype.lower()
    if clave not in b:
        raise ValueError("formato")
    total = n_params * b[clave]
    return total / 1e9, total / 2**30
""",
        "accepts more formats than the five (fp64, int4)": """
def weight_memory(n_params, dtype="fp16"):
    b = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "int4": 0.5, "4bit": 0.5}
    if dtype not in b:
        raise ValueError("formato")
    total = n_params * b[dtype]
    return total / 1e9, total / 2**30
""",
    },
    "moe_weights_and_flops": {
        "operations stay an int with integer inputs": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if active_params <= 0 or active_params > total_params:
        raise ValueError("activos")
    return weight_memory(total_params, dtype)[0], 2 * active_params
""",
    },
    "choose_model": {
        "ties go to the last candidate": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    ok = [c for c in candidates if (c["n_params"] * b[c["dtype"]] / 1e9 + c["kv_gb"]) * (1 + overhead) <= gpu_gb]
    if not ok:
        raise ValueError("ninguno cabe")
    return sorted(ok, key=lambda c: c["quality"])[-1]["name"]
""",
    },
}
for _answer, _by_name in _AUDIT.items():
    MUTANTS[_answer].update(_by_name)
