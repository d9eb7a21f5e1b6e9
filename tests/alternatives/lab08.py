"""Valid answers to lab 08's exercises, written differently from the solution: each must get full marks."""

LAB = "lab08-servir-un-modelo"

ALTERNATIVES = {
    "kv_cache_bytes": {
        "math.prod y errores uno a uno": """
def kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2):
    for valor in (n_layers, batch, n_kv_heads, head_dim):
        if valor < 1:
            raise ValueError("cada tamaño debe ser al menos 1")
    if seq_len < 0:
        raise ValueError("seq_len no puede ser negativo")
    if bytes_per_value <= 0:
        raise ValueError("bytes_per_value debe ser positivo")
    return int(math.prod([2, n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value]))
""",
        "bytes por token y luego por tokens, con NumPy": """
def kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2):
    if n_layers < 1 or batch < 1 or n_kv_heads < 1 or head_dim < 1 or seq_len < 0 or not bytes_per_value > 0:
        raise ValueError("argumentos no válidos")
    por_token = np.float64(2 * n_layers * n_kv_heads * head_dim) * bytes_per_value
    return int(round(por_token * batch * seq_len))
""",
        "en un bucle, capa a capa": """
def kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2):
    if min(n_layers, batch, n_kv_heads, head_dim) <= 0 or seq_len < 0 or bytes_per_value <= 0:
        raise ValueError("no")
    total = 0
    for _ in range(n_layers):
        total += 2 * batch * seq_len * n_kv_heads * head_dim * bytes_per_value  # K y V de esta capa
    return int(total)
""",
    },
    "serving_memory_gb": {
        "bytes primero, GB al final": """
def serving_memory_gb(n_params, bits, n_layers, batch, seq_len, n_kv_heads, head_dim, kv_bytes_per_value=2):
    if n_params < 0 or bits <= 0:
        raise ValueError("n_params debe ser >= 0 y bits > 0")
    bytes_pesos = n_params * (bits / 8)
    bytes_kv = 2 * n_layers * batch * seq_len * n_kv_heads * head_dim * kv_bytes_per_value
    GB = 10 ** 9
    return {"weights": bytes_pesos / GB, "kv": bytes_kv / GB, "total": (bytes_pesos + bytes_kv) / GB}
""",
        "float32 de NumPy": """
def serving_memory_gb(n_params, bits, n_layers, batch, seq_len, n_kv_heads, head_dim, kv_bytes_per_value=2):
    if n_params < 0 or bits <= 0:
        raise ValueError("mal")
    pesos = np.float32(n_params) * np.float32(bits) / np.float32(8e9)
    kv = np.float32(2.0 * n_layers * batch * seq_len * n_kv_heads * head_dim) * np.float32(kv_bytes_per_value) / np.float32(1e9)
    return {"weights": pesos, "kv": kv, "total": pesos + kv}
""",
    },
    "max_concurrent_sequences": {
        "división entera": """
def max_concurrent_sequences(device_gb, weights_gb, kv_per_seq_gb, reserve_frac=0.0):
    if kv_per_seq_gb <= 0 or reserve_frac < 0 or reserve_frac >= 1:
        raise ValueError("argumentos no válidos")
    util = device_gb - device_gb * reserve_frac
    if util <= weights_gb:
        return 0
    return int((util - weights_gb) // kv_per_seq_gb)
""",
        "contando de una en una": """
def max_concurrent_sequences(device_gb, weights_gb, kv_per_seq_gb, reserve_frac=0.0):
    if not kv_per_seq_gb > 0 or not 0 <= reserve_frac < 1:
        raise ValueError("no")
    libre = device_gb * (1 - reserve_frac) - weights_gb
    n = 0
    while (n + 1) * kv_per_seq_gb <= libre:
        n += 1
    return n
""",
    },
    "latencies": {
        "otro orden de operaciones": """
def total_latency_s(ttft_s, n_out, tokens_per_s):
    if not tokens_per_s > 0:
        raise ValueError("la velocidad debe ser positiva")
    segundos_por_token = 1.0 / tokens_per_s
    return ttft_s + n_out * segundos_por_token


def shared_latency_s(ttft_s, n_out, capacity_tok_s, users):
    if users < 1:
        raise ValueError("al menos un usuario")
    if capacity_tok_s <= 0:
        raise ValueError("la capacidad debe ser positiva")
    return ttft_s + n_out * users / capacity_tok_s
""",
        "NumPy y float32": """
def total_latency_s(ttft_s, n_out, tokens_per_s):
    if tokens_per_s <= 0:
        raise ValueError("no")
    return float(np.float32(ttft_s) + np.float32(n_out) / np.float32(tokens_per_s))


def shared_latency_s(ttft_s, n_out, capacity_tok_s, users):
    if users < 1 or capacity_tok_s <= 0:
        raise ValueError("no")
    por_usuario = capacity_tok_s / users
    return total_latency_s(ttft_s, n_out, por_usuario)
""",
    },
    "prefix_cache_savings": {
        "comparando con cada prompt anterior, con listas": """
def prefix_cache_savings(prompts, block_size):
    if type(block_size) is not int or block_size <= 0:
        raise ValueError("block_size tiene que ser un entero positivo")
    anteriores = []
    resultado = []
    for prompt in prompts:
        ids = list(prompt)
        if len(ids) == 0:
            raise ValueError("prompt vacío")
        mejor = 0
        for otro in anteriores:
            k = 0
            while (k + 1) * block_size <= min(len(ids), len(otro)) and \
                    ids[:(k + 1) * block_size] == otro[:(k + 1) * block_size]:
                k += 1
            mejor = max(mejor, k)
        resultado.append(int(min(mejor * block_size, len(ids) - 1)))
        anteriores.append(ids)
    return resultado
""",
        "un árbol de diccionarios, bloque a bloque": """
def prefix_cache_savings(prompts, block_size):
    if isinstance(block_size, bool) or not isinstance(block_size, int):
        raise ValueError("block_size no es un int")
    if block_size < 1:
        raise ValueError("block_size < 1")
    arbol = {}
    salida = []
    for prompt in prompts:
        if len(prompt) < 1:
            raise ValueError("un prompt vacío")
        bloques = [tuple(int(t) for t in prompt[i:i + block_size])
                   for i in range(0, len(prompt) - block_size + 1, block_size)]
        nodo, reutilizados, sigue = arbol, 0, True
        for b in bloques:
            if sigue and b in nodo:
                reutilizados += block_size
            else:
                sigue = False
            nodo = nodo.setdefault(b, {})
        salida.append(min(reutilizados, len(prompt) - 1))
    return salida
""",
        "con NumPy y un conjunto de bytes": """
def prefix_cache_savings(prompts, block_size):
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError("block_size debe ser un entero >= 1")
    guardados = set()
    ahorro = []
    for prompt in prompts:
        x = np.asarray(list(prompt), dtype=np.int64)
        if x.size == 0:
            raise ValueError("prompt sin tokens")
        n = x.size // block_size
        claves = [x[:(j + 1) * block_size].tobytes() for j in range(n)]
        k = next((j for j, c in enumerate(claves) if c not in guardados), n)
        ahorro.append(int(np.minimum(k * block_size, x.size - 1)))
        guardados.update(claves)
    return ahorro
""",
    },
    "simulate_batching": {
        "paso a paso, como un reloj": """
def simulate_batching(lengths, slots, mode="continuous"):
    if mode not in ("static", "continuous"):
        raise ValueError("modo desconocido")
    cola = [int(n) for n in lengths]
    if slots < 1 or len(cola) == 0:
        raise ValueError("no")
    util = sum(cola)
    huecos = [0] * slots  # pasos que le quedan a la petición de cada hueco
    pasos = 0
    while cola or any(huecos):
        if mode == "continuous" or not any(huecos):
            for k in range(slots):
                if huecos[k] == 0 and cola:
                    huecos[k] = cola.pop(0)
        huecos = [max(0, h - 1) for h in huecos]
        pasos += 1
    return {"steps": pasos, "utilisation": util / (pasos * slots)}
""",
        "con un montículo": """
import heapq


def simulate_batching(lengths, slots, mode="continuous"):
    if slots < 1:
        raise ValueError("slots debe ser >= 1")
    largos = list(map(int, lengths))
    if not largos:
        raise ValueError("sin peticiones")
    if mode == "static":
        pasos = 0
        for inicio in range(0, len(largos), slots):
            pasos += max(largos[inicio:inicio + slots])
    elif mode == "continuous":
        fin = [0] * slots
        heapq.heapify(fin)
        for n in largos:
            heapq.heappush(fin, heapq.heappop(fin) + n)
        pasos = max(fin)
    else:
        raise ValueError("mode")
    return {"steps": pasos, "utilisation": float(np.sum(largos)) / (pasos * slots)}
""",
    },
    "latency_percentiles": {
        "np.percentile": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("sin muestras")
    valores = np.percentile(x, list(qs))
    return {q: float(v) for q, v in zip(qs, valores)}
""",
        "Python puro, con sorted": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = sorted(float(s) for s in samples)
    if not x:
        raise ValueError("sin muestras")
    res = {}
    for q in qs:
        pos = (len(x) - 1) * q / 100
        i = int(pos)
        if i == len(x) - 1:
            res[q] = x[i]
        else:
            res[q] = x[i] * (1 - (pos - i)) + x[i + 1] * (pos - i)
    return res
""",
        "np.quantile con fracciones": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    if len(samples) == 0:
        raise ValueError("vacío")
    return {q: float(np.quantile(np.array(samples), q / 100)) for q in qs}
""",
    },
    "expected_tokens_per_pass": {
        "suma de la serie": """
def expected_tokens_per_pass(alpha, gamma):
    if alpha < 0 or alpha > 1 or gamma < 1:
        raise ValueError("fuera de rango")
    return float(sum(alpha ** k for k in range(gamma + 1)))
""",
        "NumPy": """
def expected_tokens_per_pass(alpha, gamma):
    if not (0.0 <= alpha <= 1.0) or gamma < 1:
        raise ValueError("no")
    return float(np.sum(np.power(float(alpha), np.arange(gamma + 1))))
""",
    },
    "choose_deployment": {
        "margen libre >= 0": """
def choose_deployment(weights_gb, kv_gb, device_gb, offline=False, private=False, reserve_frac=0.2):
    if min(weights_gb, kv_gb) < 0 or device_gb <= 0 or reserve_frac < 0 or reserve_frac >= 1:
        raise ValueError("memorias no válidas")
    necesita_local = bool(offline) or bool(private)
    if not necesita_local:
        return "nube"
    sobra = device_gb - device_gb * reserve_frac - (weights_gb + kv_gb)
    return "local" if sobra >= 0 else "ninguno"
""",
        "ifs anidados": """
def choose_deployment(weights_gb, kv_gb, device_gb, offline=False, private=False, reserve_frac=0.2):
    if weights_gb < 0 or kv_gb < 0:
        raise ValueError("negativo")
    if device_gb <= 0:
        raise ValueError("dispositivo")
    if not 0 <= reserve_frac < 1:
        raise ValueError("reserva")
    if offline:
        if weights_gb + kv_gb <= (1 - reserve_frac) * device_gb:
            return "local"
        return "ninguno"
    if private:
        if weights_gb + kv_gb <= (1 - reserve_frac) * device_gb:
            return "local"
        return "ninguno"
    return "nube"
""",
    },
}

# Audit by family (issue 26): written from the statements alone.
ALTERNATIVES["kv_cache_bytes"]["fracciones exactas"] = """
from fractions import Fraction as _F
def kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2):
    for v in (n_layers, batch, n_kv_heads, head_dim):
        if v < 1:
            raise ValueError("tamaño")
    if seq_len < 0 or bytes_per_value <= 0:
        raise ValueError("tamaño")
    return int(2 * n_layers * batch * seq_len * n_kv_heads * head_dim * _F(bytes_per_value))
"""
ALTERNATIVES["latency_percentiles"]["claves en orden, a·(1 − f) + b·f"] = """
def latency_percentiles(samples, qs=(50, 95, 99)):
    datos = sorted(float(v) for v in samples)
    if not datos:
        raise ValueError("vacía")
    n = len(datos)
    out = {}
    for q in sorted(qs):
        pos = (n - 1) * (q / 100)
        i = int(pos)
        f = pos - i
        out[q] = datos[i] * (1 - f) + datos[i + 1] * f if i + 1 < n else datos[i]
    return out
"""
ALTERNATIVES["expected_tokens_per_pass"]["Horner"] = """
def expected_tokens_per_pass(alpha, gamma):
    if alpha < 0 or alpha > 1 or gamma < 1:
        raise ValueError("fuera de rango")
    e = 1.0
    for _ in range(gamma):
        e = 1.0 + alpha * e
    return e
"""
ALTERNATIVES["simulate_batching"]["lotes con islice y huecos con min por clave"] = """
from itertools import islice as _islice
def simulate_batching(lengths, slots, mode="continuous"):
    if mode != "static" and mode != "continuous":
        raise ValueError("modo")
    if slots < 1 or len(lengths) == 0:
        raise ValueError("vacío")
    cola = [int(n) for n in lengths]
    if mode == "static":
        it, pasos = iter(cola), 0
        while True:
            lote = list(_islice(it, slots))
            if not lote:
                break
            pasos += max(lote)
    else:
        fin = [0] * slots
        for n in cola:
            k = min(range(slots), key=lambda j: fin[j])
            fin[k] += n
        pasos = max(fin)
    return {"steps": pasos, "utilisation": float(sum(cola)) / (pasos * slots)}
"""
