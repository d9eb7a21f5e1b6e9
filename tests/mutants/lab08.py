"""Wrong implementations of lab 08's exercises: chapter 07's common mistakes (7-M1…7-M5 and the extra
mutants of the syllabus) and the families every lab covers (in-place changes, boundaries, return types,
ignored optional arguments, missing errors).

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the llmlab
function that does the same job (with the alias the lab's setup cell imports); the harness adds a mutant
that merely calls it.
"""

LAB = "lab08-servir-un-modelo"

REFERENCES = {
    "kv_cache_bytes": "C.kv_bytes",
    "serving_memory_gb": "C.serving_memory_gb",
    "max_concurrent_sequences": "C.max_concurrent_sequences",
    "prefix_cache_savings": "serve_blocks.prefix_cache_savings",
    "total_latency_s": "C.total_latency_s",
    "shared_latency_s": "C.shared_latency_s",
    "simulate_batching": "C.simulate_batching",
    "latency_percentiles": "C.latency_percentiles",
    "expected_tokens_per_pass": "C.expected_tokens_per_pass",
    "choose_deployment": "C.choose_deployment",
}

_KV = """
def kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2):
    if {check}:
        raise ValueError("mal")
    return {result}
"""
_KV_CHECK = "min(n_layers, batch, n_kv_heads, head_dim) < 1 or seq_len < 0 or bytes_per_value <= 0"


def _kv(result, check=_KV_CHECK):
    return _KV.format(check=check, result=result)


_MEM = """
def serving_memory_gb(n_params, bits, n_layers, batch, seq_len, n_kv_heads, head_dim, kv_bytes_per_value=2):
    if {check}:
        raise ValueError("mal")
    pesos = {weights}
    kv = {kv}
    return {{"weights": pesos, "kv": kv, "total": {total}}}
"""


def _mem(weights="n_params * bits / 8 / 1e9",
         kv="2 * n_layers * batch * seq_len * n_kv_heads * head_dim * kv_bytes_per_value / 1e9",
         total="pesos + kv", check="n_params < 0 or bits <= 0"):
    return _MEM.format(weights=weights, kv=kv, total=total, check=check)


_MAXSEQ = """
def max_concurrent_sequences(device_gb, weights_gb, kv_per_seq_gb, reserve_frac=0.0):
    if {check}:
        raise ValueError("mal")
    libre = {free}
    return {result}
"""


def _maxseq(free="device_gb * (1 - reserve_frac) - weights_gb", result="max(0, math.floor(libre / kv_per_seq_gb))",
            check="kv_per_seq_gb <= 0 or not 0 <= reserve_frac < 1"):
    return _MAXSEQ.format(free=free, result=result, check=check)


_LAT = """
def total_latency_s(ttft_s, n_out, tokens_per_s):
    if tokens_per_s <= 0:
        raise ValueError("mal")
    return {total}


def shared_latency_s(ttft_s, n_out, capacity_tok_s, users):
    if {check}:
        raise ValueError("mal")
    return {shared}
"""


def _lat(total="float(ttft_s + n_out / tokens_per_s)", shared="total_latency_s(ttft_s, n_out, capacity_tok_s / users)",
         check="users < 1 or capacity_tok_s <= 0"):
    return _LAT.format(total=total, shared=shared, check=check)


_BATCH = """
def simulate_batching(lengths, slots, mode="continuous"):
    if mode not in ("static", "continuous"):
        raise ValueError("mal")
    largos = [int(x) for x in lengths]
    if slots < 1 or not largos:
        raise ValueError("mal")
    if {static_cond}:
        pasos = sum(max(largos[i:i + slots]) for i in range(0, len(largos), slots))
    else:
        libres = [0] * slots
        for n in largos:
            k = libres.index(min(libres))
            libres[k] += n
        pasos = max(libres)
    return {{"steps": int(pasos), "utilisation": {util}}}
"""


def _batch(static_cond='mode == "static"', util="sum(largos) / (pasos * slots)"):
    return _BATCH.format(static_cond=static_cond, util=util)


_PCT = """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = np.sort(np.asarray(samples, dtype=float))
    if x.size == 0:
        raise ValueError("mal")
    return {{q: float({value}) for q in qs}}
"""

_SPEC = """
def expected_tokens_per_pass(alpha, gamma):
    if not 0 <= alpha <= 1 or gamma < 1:
        raise ValueError("mal")
    if alpha == 1:
        return {at_one}
    return {result}
"""


def _spec(result="float((1 - alpha ** (gamma + 1)) / (1 - alpha))", at_one="float(gamma + 1)"):
    return _SPEC.format(result=result, at_one=at_one)


_DEPLOY = """
def choose_deployment(weights_gb, kv_gb, device_gb, offline=False, private=False, reserve_frac=0.2):
    if {check}:
        raise ValueError("mal")
    cabe = {fits}
    {body}
"""
_DEPLOY_CHECK = "weights_gb < 0 or kv_gb < 0 or device_gb <= 0 or not 0 <= reserve_frac < 1"
_DEPLOY_BODY = """if {needs}:
        return {yes} if cabe else {no}
    return "nube\""""


def _deploy(fits="weights_gb + kv_gb <= device_gb * (1 - reserve_frac)", needs="offline or private", yes='"local"',
            no='"ninguno"', check=_DEPLOY_CHECK, body=None):
    body = body or _DEPLOY_BODY.format(needs=needs, yes=yes, no=no)
    return _DEPLOY.format(check=check, fits=fits, body=body)


# --- Exercise 5: the prefix cache's savings ---------------------------------------------------------------------
_PREFIX = """
def prefix_cache_savings(prompts, block_size):
    if {check}:
        raise ValueError("mal")
    vistos = set()
    ahorros = []
    for prompt in prompts:
        ids = tuple(int(t) for t in prompt)
        if not ids:
            {empty}
        llenos = {full}
        k = 0
        while k < llenos and {hit}:
            k += 1
        ahorros.append({saved})
        {store}
    return {ret}
"""
_PREFIX_OK = dict(
    check="isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1",
    empty='raise ValueError("vacío")',
    full="len(ids) // block_size",
    hit="ids[:(k + 1) * block_size] in vistos",
    saved="min(k * block_size, len(ids) - 1)",
    store="vistos.update(ids[:(j + 1) * block_size] for j in range(llenos))",
    ret="ahorros",
)


def _prefix(**change):
    return _PREFIX.format(**{**_PREFIX_OK, **change})



MUTANTS = {
    "kv_cache_bytes": {
        "sin el factor 2 (solo K o solo V)": _kv("int(n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value)"),
        "devuelve GB en vez de bytes": _kv("2 * n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value / 1e9"),
        "devuelve GiB en vez de bytes": _kv("2 * n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value / 2**30"),
        "olvida el lote": _kv("int(2 * n_layers * seq_len * n_kv_heads * head_dim * bytes_per_value)"),
        "ignora bytes_per_value (siempre FP16)": _kv("2 * n_layers * batch * seq_len * n_kv_heads * head_dim * 2"),
        "float en vez de int": _kv("2 * n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value * 1.0"),
        "no lanza ValueError": _kv("int(2 * n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value)",
                                   check="False"),
        "rechaza una caché vacía (seq_len = 0)": _kv(
            "int(2 * n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value)",
            check="min(n_layers, batch, seq_len, n_kv_heads, head_dim) < 1 or bytes_per_value <= 0"),
    },
    "serving_memory_gb": {
        "el código con errores del enunciado": _mem(
            kv="2 * n_layers * batch * seq_len * n_kv_heads * head_dim * (bits / 8) / 2**30"),
        "caché en GiB": _mem(kv="2 * n_layers * batch * seq_len * n_kv_heads * head_dim * kv_bytes_per_value / 2**30"),
        "bits de los pesos en la caché": _mem(kv="2 * n_layers * batch * seq_len * n_kv_heads * head_dim * bits / 8 / 1e9"),
        "total = solo los pesos (7-M1)": _mem(total="pesos"),
        "pesos en GiB": _mem(weights="n_params * bits / 8 / 2**30"),
        "pesos a bytes por parámetro (bits en vez de bits/8)": _mem(weights="n_params * bits / 1e9"),
        "no lanza ValueError": _mem(check="False"),
    },
    "max_concurrent_sequences": {
        "el código con errores del enunciado": _maxseq(free="device_gb * (1 - reserve_frac)",
                                                       result="round(libre / kv_per_seq_gb)"),
        "no resta los pesos": _maxseq(free="device_gb * (1 - reserve_frac)"),
        "redondea al más cercano": _maxseq(result="max(0, round(libre / kv_per_seq_gb))"),
        "negativo si los pesos no caben": _maxseq(result="math.floor(libre / kv_per_seq_gb)"),
        "ignora la reserva": _maxseq(free="device_gb - weights_gb"),
        "reserva sobre lo libre": _maxseq(free="(device_gb - weights_gb) * (1 - reserve_frac)"),
        "devuelve float": _maxseq(result="max(0.0, float(np.floor(libre / kv_per_seq_gb)))"),
        "cuenta una de más (ceil)": _maxseq(result="max(0, math.ceil(libre / kv_per_seq_gb))"),
        "no lanza ValueError": _maxseq(check="False"),
    },
    "latencies": {
        "multiplica tokens por velocidad": _lat(total="float(ttft_s + n_out * tokens_per_s)"),
        "olvida el TTFT": _lat(total="float(n_out / tokens_per_s)"),
        "trata el TTFT como milisegundos": _lat(total="float(ttft_s / 1000 + n_out / tokens_per_s)"),
        "divide la capacidad por los usuarios dos veces": _lat(
            shared="total_latency_s(ttft_s, n_out, capacity_tok_s / users / users)"),
        "multiplica la capacidad por los usuarios": _lat(
            shared="total_latency_s(ttft_s, n_out, capacity_tok_s * users)"),
        "el TTFT también se reparte": _lat(shared="total_latency_s(ttft_s * users, n_out, capacity_tok_s / users)"),
        "redondea a dos decimales": _lat(total="round(ttft_s + n_out / tokens_per_s, 2)"),
        "no lanza ValueError con users < 1": _lat(check="capacity_tok_s <= 0"),
    },
    "prefix_cache_savings": {
        "cuenta también el último token (un prompt cubierto entero ahorra len)": _prefix(saved="k * block_size"),
        "cuenta también el trozo final a medio llenar": _prefix(full="-(-len(ids) // block_size)"),
        "bloques sueltos, sin la cadena del prefijo": _prefix(
            hit="(k, ids[k * block_size:(k + 1) * block_size]) in vistos",
            store="vistos.update((j, ids[j * block_size:(j + 1) * block_size]) for j in range(llenos))"),
        "se reutiliza a sí mismo (guarda antes de mirar)": """
def prefix_cache_savings(prompts, block_size):
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError("mal")
    vistos = set()
    ahorros = []
    for prompt in prompts:
        ids = tuple(int(t) for t in prompt)
        if not ids:
            raise ValueError("vacío")
        llenos = len(ids) // block_size
        vistos.update(ids[:(j + 1) * block_size] for j in range(llenos))
        k = 0
        while k < llenos and ids[:(k + 1) * block_size] in vistos:
            k += 1
        ahorros.append(min(k * block_size, len(ids) - 1))
    return ahorros
""",
        "prefijo común token a token, no por bloques": """
def prefix_cache_savings(prompts, block_size):
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError("mal")
    vistos = []
    ahorros = []
    for prompt in prompts:
        ids = [int(t) for t in prompt]
        if not ids:
            raise ValueError("vacío")
        mejor = 0
        for otro in vistos:
            n = 0
            while n < min(len(otro), len(ids)) and otro[n] == ids[n]:
                n += 1
            mejor = max(mejor, n)
        ahorros.append(min(mejor, len(ids) - 1))
        vistos.append(ids)
    return ahorros
""",
        "devuelve el total en vez de la lista": _prefix(ret="sum(ahorros)"),
        "devuelve una tupla": _prefix(ret="tuple(ahorros)"),
        "devuelve enteros de NumPy": _prefix(ret="[np.int64(v) for v in ahorros]"),
        "acepta un block_size no entero (16.0)": _prefix(check="block_size < 1"),
        "no lanza ValueError con un prompt vacío": _prefix(empty="ahorros.append(0)\n            continue"),
        "solo compara con el prompt anterior": """
def prefix_cache_savings(prompts, block_size):
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError("mal")
    anterior = ()
    ahorros = []
    for prompt in prompts:
        ids = tuple(int(t) for t in prompt)
        if not ids:
            raise ValueError("vacío")
        llenos = min(len(ids), len(anterior)) // block_size
        k = 0
        while k < llenos and ids[:(k + 1) * block_size] == anterior[:(k + 1) * block_size]:
            k += 1
        ahorros.append(min(k * block_size, len(ids) - 1))
        anterior = ids
    return ahorros
""",
    },
    "simulate_batching": {
        "continuo que espera al más largo (estático)": _batch(static_cond="True"),
        "estático que rellena huecos (continuo)": _batch(static_cond="False"),
        "aprovechamiento por peticiones": _batch(util="sum(largos) / (pasos * len(largos))"),
        "aprovechamiento sin los huecos": _batch(util="sum(largos) / pasos"),
        "modo por defecto estático": _batch().replace('mode="continuous"', 'mode="static"', 1),
        "modifica la lista de entrada": """
def simulate_batching(lengths, slots, mode="continuous"):
    if mode not in ("static", "continuous") or slots < 1 or len(lengths) == 0:
        raise ValueError("mal")
    total = int(sum(lengths))
    if mode == "static":
        pasos = 0
        while len(lengths):
            lote = [int(lengths.pop(0)) for _ in range(min(slots, len(lengths)))]
            pasos += max(lote)
    else:
        libres = [0] * slots
        for n in lengths:
            k = libres.index(min(libres))
            libres[k] += int(n)
        pasos = max(libres)
    return {"steps": pasos, "utilisation": total / (pasos * slots)}
""",
        "más larga primero en vez de por orden de llegada": """
def simulate_batching(lengths, slots, mode="continuous"):
    if mode not in ("static", "continuous"):
        raise ValueError("mal")
    largos = sorted((int(x) for x in lengths), reverse=True)
    if slots < 1 or not largos:
        raise ValueError("mal")
    if mode == "static":
        pasos = sum(max(largos[i:i + slots]) for i in range(0, len(largos), slots))
    else:
        libres = [0] * slots
        for n in largos:
            k = libres.index(min(libres))
            libres[k] += n
        pasos = max(libres)
    return {"steps": int(pasos), "utilisation": sum(largos) / (pasos * slots)}
""",
        "no lanza ValueError con un modo desconocido": _batch().replace(
            '    if mode not in ("static", "continuous"):\n        raise ValueError("mal")\n', ""),
    },
    "latency_percentiles": {
        "la media como p95 (7-M2)": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("mal")
    return {q: float(np.median(x) if q == 50 else x.mean() if q == 95 else x.max()) for q in qs}
""",
        "rango más cercano en vez de interpolar": _PCT.format(value="x[int(round((x.size - 1) * q / 100))]"),
        "fracción en vez de porcentaje": _PCT.format(value="np.percentile(x, q / 100)"),
        "sin ordenar": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("mal")
    res = {}
    for q in qs:
        pos = (x.size - 1) * q / 100
        i = int(pos)
        j = min(i + 1, x.size - 1)
        res[q] = float(x[i] + (pos - i) * (x[j] - x[i]))
    return res
""",
        "ordena la lista de entrada en su sitio": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    if len(samples) == 0:
        raise ValueError("mal")
    samples.sort()
    return {q: float(np.percentile(samples, q)) for q in qs}
""",
        "ignora qs": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("mal")
    return {q: float(np.percentile(x, q)) for q in (50, 95, 99)}
""",
        "devuelve un array en vez de un diccionario": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("mal")
    return np.percentile(x, list(qs))
""",
        "posición n · q en vez de (n − 1) · q": _PCT.format(
            value="np.interp(x.size * q / 100 - 0.5, np.arange(x.size), x)"),
        "no lanza ValueError con una muestra vacía": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        return {}
    return {q: float(np.percentile(x, q)) for q in qs}
""",
    },
    "expected_tokens_per_pass": {
        "sin el token que añade el objetivo": _spec(result="float(alpha * (1 - alpha ** gamma) / (1 - alpha))",
                                                    at_one="float(gamma)"),
        "la heurística del capítulo (γ · α)": _spec(result="float(gamma * alpha)", at_one="float(gamma)"),
        "divide por cero con α = 1": """
def expected_tokens_per_pass(alpha, gamma):
    if not 0 <= alpha <= 1 or gamma < 1:
        raise ValueError("mal")
    return float((1 - alpha ** (gamma + 1)) / (1 - alpha))
""",
        "exponente γ en vez de γ + 1": _spec(result="float((1 - alpha ** gamma) / (1 - alpha))", at_one="float(gamma)"),
        "trunca a entero": _spec(result="float(int((1 - alpha ** (gamma + 1)) / (1 - alpha)))"),
        "no lanza ValueError": """
def expected_tokens_per_pass(alpha, gamma):
    if alpha == 1:
        return float(gamma + 1)
    return float((1 - alpha ** (gamma + 1)) / (1 - alpha))
""",
    },
    "choose_deployment": {
        "local siempre que los datos son privados (7-M5)": _deploy(body="""if private:
        return "local"
    if offline:
        return "local" if cabe else "ninguno"
    return "nube\""""),
        "olvida la caché KV": _deploy(fits="weights_gb <= device_gb * (1 - reserve_frac)"),
        "ignora la reserva": _deploy(fits="weights_gb + kv_gb <= device_gb"),
        "menor estricto (el ajuste exacto no cabe)": _deploy(fits="weights_gb + kv_gb < device_gb * (1 - reserve_frac)"),
        "ignora offline": _deploy(needs="private"),
        "devuelve «edge» en vez de «local»": _deploy(yes='"edge"'),
        "a la nube si no cabe": _deploy(no='"nube"'),
        "no lanza ValueError": _deploy(check="False"),
    },
}

# --- Audit by family (issue 26): written from the statements alone. Promised types (a Python int, a float, a
# tuple), integer inputs, boundaries, validation with non-integer or normalised values. ----------------------------
MUTANTS["kv_cache_bytes"].update({
    "devuelve un entero de NumPy": _kv("np.int64(2 * n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value)"),
})
MUTANTS["latencies"].update({
    "acepta users = 0.5 (solo rechaza 0)": _lat(check="users == 0 or capacity_tok_s <= 0"),
})
MUTANTS["prefix_cache_savings"].update({
    "acepta block_size = True": _prefix(check="not isinstance(block_size, int) or block_size < 1"),
})
MUTANTS["simulate_batching"].update({
    "acepta el modo con mayúsculas («Static»)": _batch().replace(
        '    if mode not in ("static", "continuous"):', '    mode = str(mode).lower()\n    if mode not in ("static", "continuous"):'),
    "steps como float": _batch().replace('"steps": int(pasos)', '"steps": float(pasos)'),
})
MUTANTS["latency_percentiles"].update({
    "enteros de NumPy con muestras enteras en posiciones exactas": """
def latency_percentiles(samples, qs=(50, 95, 99)):
    x = np.sort(np.asarray(samples))
    if x.size == 0:
        raise ValueError("mal")
    res = {}
    for q in qs:
        pos = (x.size - 1) * q / 100
        i = int(pos)
        if pos == i:
            res[q] = x[i]
        else:
            j = min(i + 1, x.size - 1)
            res[q] = float(x[i] + (pos - i) * (x[j] - x[i]))
    return res
""",
})
MUTANTS["expected_tokens_per_pass"].update({
    "γ + 1 como int con α = 1": _spec(at_one="gamma + 1"),
})
MUTANTS["choose_deployment"].update({
    "acepta reserve_frac = 1": _deploy(check="weights_gb < 0 or kv_gb < 0 or device_gb <= 0 or not 0 <= reserve_frac <= 1"),
})

# Written hints where two mistakes behave alike on every input the checks can show (the others take the default
# hint built from their Spanish name).
_USERS = "Parece que un users menor que 1 (por ejemplo 0.5) no lanza ValueError: revisa la validación (users < 1)."
_BLOCK = ("Parece que aceptas un block_size que no es un int (True o 16.0): valida con isinstance y excluye los "
          "bool.")
HINTS = {
    "latencies": {"no lanza ValueError con users < 1": _USERS, "acepta users = 0.5 (solo rechaza 0)": _USERS},
    "prefix_cache_savings": {"acepta un block_size no entero (16.0)": _BLOCK, "acepta block_size = True": _BLOCK},
}
