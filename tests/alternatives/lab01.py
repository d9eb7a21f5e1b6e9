"""Valid answers to lab 01's exercises, written differently from the solution: each must get full marks.

Loops and `math` instead of NumPy, float32, lists, another order of operations, torch where the statement
allows any computation. `tests/test_lab_alternatives.py` runs every test cell (hidden tests included).
"""

LAB = "lab01-que-es-un-llm"

ALTERNATIVES = {
    "softmax": {
        "bucle con math.exp fila a fila": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError("temperatura")
    z = np.array(logits, dtype=float)

    def fila(valores):
        m = max(valores)
        e = [math.exp((v - m) / temperature) for v in valores]
        s = sum(e)
        return [x / s for x in e]

    planas = z.reshape(-1, z.shape[-1]) if z.ndim else z.reshape(1, 1)
    return np.array([fila(list(f)) for f in planas]).reshape(z.shape)
""",
        "float32 de principio a fin": """
def softmax(logits, temperature=1.0):
    if not temperature > 0:
        raise ValueError("temperatura")
    z = np.asarray(logits, dtype=np.float32) / np.float32(temperature)
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
""",
        "logsumexp (exp(z - lse))": """
def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError("temperatura")
    z = np.asarray(logits, dtype=float) / temperature
    m = z.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True))
    return np.exp(z - lse)
""",
        "con torch.softmax": """
import torch


def softmax(logits, temperature=1.0):
    if temperature <= 0:
        raise ValueError("temperatura")
    t = torch.as_tensor(np.asarray(logits, dtype=float))
    return torch.softmax(t / temperature, dim=-1).numpy()
""",
    },
    "nll": {
        "bucle con math.log": """
def nll(probs, reduction="sum"):
    valores = [float(x) for x in np.ravel(probs)]
    if not valores or any(not (0 < x <= 1) for x in valores):
        raise ValueError("probabilidad fuera de (0, 1]")
    total = -sum(math.log(x) for x in valores)
    if reduction == "sum":
        return total
    if reduction == "mean":
        return total / len(valores)
    raise ValueError("reduction")
""",
        "float32 con validación primero de reduction": """
def nll(probs, reduction="sum"):
    if reduction not in {"sum", "mean"}:
        raise ValueError("reduction")
    p = np.asarray(probs, dtype=np.float32).ravel()
    if (p <= 0).any() or (np.asarray(probs, dtype=float) > 1).any():
        raise ValueError("probabilidad fuera de (0, 1]")
    s = -np.log(p)
    return float(np.sum(s) if reduction == "sum" else np.mean(s))
""",
        "math.fsum y un diccionario de reducciones": """
def nll(probs, reduction="sum"):
    p = np.array(probs, dtype=float).flatten()
    if not np.all((p > 0) & (p <= 1)):
        raise ValueError("probabilidad fuera de (0, 1]")
    sorpresas = -np.log(p)
    reducciones = {"sum": math.fsum, "mean": lambda v: math.fsum(v) / len(v)}
    if reduction not in reducciones:
        raise ValueError("reduction")
    return reducciones[reduction](sorpresas.tolist())
""",
    },
    "sequence_log_prob": {
        "math.fsum de logaritmos": """
def sequence_log_prob(cond_probs):
    valores = [float(x) for x in np.ravel(cond_probs)]
    if any(not (0 < x <= 1) for x in valores):
        raise ValueError("probabilidad fuera de (0, 1]")
    return math.fsum(math.log(x) for x in valores)
""",
        "float32": """
def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs, dtype=np.float64).ravel()
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError("probabilidad fuera de (0, 1]")
    return float(np.log(p.astype(np.float32)).sum(dtype=np.float64))
""",
        "reutiliza su nll": """
def sequence_log_prob(cond_probs):
    return -nll(cond_probs, reduction="sum")
""",
    },
    "perplexity": {
        "a partir de su nll": """
def perplexity(probs):
    return math.exp(nll(probs, reduction="mean"))
""",
        "inversa de la media geométrica, con bucle": """
def perplexity(probs):
    valores = [float(x) for x in np.ravel(probs)]
    if not valores or any(not (0 < x <= 1) for x in valores):
        raise ValueError("probabilidad fuera de (0, 1]")
    media_log = sum(math.log(x) for x in valores) / len(valores)
    return 1.0 / math.exp(media_log)
""",
        "float32": """
def perplexity(probs):
    p = np.asarray(probs, dtype=float).ravel()
    if p.size == 0 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError("probabilidad fuera de (0, 1]")
    return float(np.exp(-np.mean(np.log(p.astype(np.float32)))))
""",
    },
    "perplexity_from_loss": {
        "numpy en vez de math": """
def perplexity_from_loss(total_loss, n_tokens):
    if n_tokens <= 0:
        raise ValueError("n_tokens debe ser positivo")
    return float(np.exp(np.float64(total_loss) / n_tokens))
""",
        "potencia de e con **": """
def perplexity_from_loss(total_loss, n_tokens):
    if not n_tokens > 0:
        raise ValueError("n_tokens debe ser positivo")
    return math.e ** (total_loss / n_tokens)
""",
    },
    "linear_param_count": {
        "factorizado": """
def linear_param_count(d_in, d_out, bias=True):
    return d_out * (d_in + (1 if bias else 0))
""",
        "contando las formas de W y b": """
def linear_param_count(d_in, d_out, bias=True):
    formas = [(d_in, d_out)] + ([(d_out,)] if bias else [])
    return int(sum(np.prod(f) for f in formas))
""",
    },
    "transformer_param_estimate": {
        "capa a capa": """
def transformer_param_estimate(n_layers, d_model):
    total = 0
    for _ in range(n_layers):
        total += 4 * d_model * d_model + 2 * d_model * 4 * d_model
    return total
""",
        "con math.prod": """
def transformer_param_estimate(n_layers, d_model):
    return math.prod([12, n_layers, d_model, d_model])
""",
    },
    "weight_memory": {
        "bits por parámetro y cadena de if": """
def weight_memory(n_params, dtype="fp16"):
    if dtype == "fp32":
        bits = 32
    elif dtype in ("fp16", "bf16"):
        bits = 16
    elif dtype == "int8":
        bits = 8
    elif dtype == "4bit":
        bits = 4
    else:
        raise ValueError(dtype)
    total = n_params * bits / 8
    return total / 10**9, total / 1024**3
""",
        "multiplicando por 1e-9": """
def weight_memory(n_params, dtype="fp16"):
    tabla = dict(fp32=4.0, fp16=2.0, bf16=2.0, int8=1.0)
    tabla["4bit"] = 0.5
    try:
        b = tabla[dtype]
    except KeyError:
        raise ValueError(dtype) from None
    return n_params * b * 1e-9, n_params * b / 2**30
""",
    },
    "kv_cache_bytes": {
        "por cabezas y dimensión de cabeza": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    if n_heads is None or n_kv_heads is None:
        n_heads = n_kv_heads = 1
    head_dim = d_model // n_heads
    return int(2 * n_layers * n_ctx * n_kv_heads * head_dim * bytes_per_value * batch)
""",
        "proporción con round": """
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    factor = 1.0 if n_heads is None or n_kv_heads is None else n_kv_heads / n_heads
    return int(round(2 * n_layers * n_ctx * d_model * bytes_per_value * batch * factor))
""",
    },
    "moe_weights_and_flops": {
        "con su weight_memory y la fracción activa": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if not 0 < active_params <= total_params:
        raise ValueError("activos fuera de rango")
    fraccion = active_params / total_params
    return weight_memory(total_params, dtype)[0], 2.0 * fraccion * total_params
""",
        "tabla propia de bytes": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    if dtype not in b:
        raise ValueError(dtype)
    if active_params <= 0 or active_params > total_params:
        raise ValueError("activos fuera de rango")
    return (total_params * b[dtype] / 1e9, float(2 * active_params))
""",
    },
    "inference_memory": {
        "margen repartido y comparación negada": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    return weights_gb * (1 + overhead) + kv_gb * (1 + overhead)


def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    return not (inference_memory_gb(weights_gb, kv_gb, overhead) > gpu_gb)
""",
        "con la memoria que sobra": """
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    base = weights_gb + kv_gb
    return base + base * overhead


def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    sobra = gpu_gb - inference_memory_gb(weights_gb, kv_gb, overhead)
    return bool(sobra >= 0)
""",
    },
    "choose_model": {
        "ordena una copia por calidad y devuelve el primero que cabe": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    for c in sorted(candidates, key=lambda c: c["quality"], reverse=True):
        pesos = weight_memory(c["n_params"], c["dtype"])[0]
        if fits_on_gpu(pesos, c["kv_gb"], gpu_gb, overhead):
            return c["name"]
    raise ValueError("ningún candidato cabe")
""",
        "bucle guardando el mejor": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    bytes_por = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    mejor = None
    for c in candidates:
        total = (c["n_params"] * bytes_por[c["dtype"]] * 1e-9 + c["kv_gb"]) * (1 + overhead)
        if total <= gpu_gb and (mejor is None or c["quality"] > mejor["quality"]):
            mejor = c
    if mejor is None:
        raise ValueError("ningún candidato cabe")
    return mejor["name"]
""",
    },
}

# ---------------------------------------------------------------- audit 2026-12: valid answers by family
# np.float64 is a Python float (a subclass): returning it is valid; ties resolved by position in other ways.
_AUDIT = {
    "nll": {
        "returns np.float64 from a float64 array": """
def nll(probs, reduction="sum"):
    p = np.asarray(probs, dtype=np.float64).ravel()
    if p.size == 0 or (p <= 0).any() or (p > 1).any():
        raise ValueError("probabilidad fuera de (0, 1]")
    s = -np.log(p)
    if reduction == "mean":
        return np.mean(s)
    if reduction == "sum":
        return np.sum(s)
    raise ValueError("reduction")
""",
    },
    "perplexity_from_loss": {
        "exp of the mean with float() on both": """
def perplexity_from_loss(total_loss, n_tokens):
    if not n_tokens > 0:
        raise ValueError("n_tokens")
    media = float(total_loss) / float(n_tokens)
    return math.e ** media
""",
    },
    "linear_param_count": {
        "bool times d_out": """
def linear_param_count(d_in, d_out, bias=True):
    return d_out * (d_in + int(bool(bias)))
""",
    },
    "kv_cache_bytes": {
        "int(np.prod(...)) and the ratio as a fraction": """
from fractions import Fraction

def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    factor = Fraction(1)
    if n_heads is not None and n_kv_heads is not None:
        factor = Fraction(n_kv_heads, n_heads)
    total = Fraction(int(np.prod([2, n_layers, n_ctx, d_model, batch], dtype=np.int64))) * Fraction(bytes_per_value)
    return int(total * factor)
""",
    },
    "moe_weights_and_flops": {
        "float() of integer products": """
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    if not 0 < active_params <= total_params:
        raise ValueError("activos")
    gb, _ = weight_memory(total_params, dtype)
    return (float(gb), float(2 * active_params))
""",
    },
    "choose_model": {
        "min over (-quality, position)": """
def choose_model(candidates, gpu_gb, overhead=0.25):
    bytes_por = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    caben = [(-c["quality"], i, c["name"]) for i, c in enumerate(candidates)
             if (c["n_params"] * bytes_por[c["dtype"]] / 1e9 + c["kv_gb"]) * (1 + overhead) <= gpu_gb]
    if not caben:
        raise ValueError("ningún candidato cabe")
    return min(caben)[2]
""",
    },
}
for _answer, _by_name in _AUDIT.items():
    ALTERNATIVES[_answer].update(_by_name)
