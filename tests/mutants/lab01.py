"""Wrong implementations of lab 01's exercises, taken from chapter 01's common mistakes.

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the
llmlab function that does the same job; the harness adds a mutant that merely calls it.
"""

LAB = "lab01-que-es-un-llm"

REFERENCES = {
    "softmax": "F.softmax",
    "nll": "M.nll",
    "sequence_log_prob": "M.sequence_log_prob",
    "perplexity": "M.perplexity",
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
