"""Valid answers to lab 09's exercises, written differently from the solution: each must get full marks."""

LAB = "lab09-disecciona-una-llamada"

_ROWS = """
        "respuesta cortada": "contrato de salida",
        "json inválido": "decodificación",
        "tarda en empezar": "prefill",
        "empieza rápido y acaba lento": "decode",
        "se queda sin memoria": "entorno de ejecución",
        "repite frases": "muestreo",
        "responde sin citar": "contexto",
        "seguro pero equivocado": "evaluación",
        "cambia entre ejecuciones": "reproducibilidad",
        "usa mal una herramienta": "herramientas",
"""

ALTERNATIVES = {
    "tokens_por_palabra": {
        "con numpy y mensajes propios": """
def tokens_per_word(n_words, n_tokens):
    if not n_words > 0:
        raise ValueError(f"n_words = {n_words}: hace falta al menos una palabra")
    if n_tokens < 0:
        raise ValueError("n_tokens negativo")
    return float(np.float64(n_tokens) / np.float64(n_words))


def words_per_second(tokens_per_s, tokens_per_word):
    if tokens_per_s < 0:
        raise ValueError("tok/s negativo")
    if tokens_per_word <= 0:
        raise ValueError("tokens por palabra no positivo")
    return float(np.divide(tokens_per_s, tokens_per_word))
""",
        "multiplicando por el inverso": """
def tokens_per_word(n_words, n_tokens):
    if n_words <= 0 or n_tokens < 0:
        raise ValueError("entrada inválida")
    return n_tokens * (1.0 / n_words) if n_tokens else 0.0


def words_per_second(tokens_per_s, tokens_per_word):
    if tokens_per_word <= 0 or tokens_per_s < 0:
        raise ValueError("entrada inválida")
    palabras_por_token = 1 / tokens_per_word
    return float(tokens_per_s * palabras_por_token)
""",
    },
    "perplejidad_respuesta": {
        "vectorizado con gather y cross_entropy": """
def answer_perplexity(model, prompt_ids, answer_ids):
    prompt = torch.as_tensor(prompt_ids, dtype=torch.long).reshape(-1)
    answer = torch.as_tensor(answer_ids, dtype=torch.long).reshape(-1)
    if prompt.numel() == 0 or answer.numel() == 0:
        raise ValueError("hacen falta tokens en el prompt y en la respuesta")
    ids = torch.cat([prompt, answer]).unsqueeze(0)
    with torch.no_grad():
        logits = model(ids)[0]
    predicen = logits[prompt.numel() - 1:-1].double()
    nll = torch.nn.functional.cross_entropy(predicen, answer)
    return float(torch.exp(nll))
""",
        "float32 y producto de probabilidades en logaritmos": """
def answer_perplexity(model, prompt_ids, answer_ids):
    prompt, answer = list(map(int, prompt_ids)), list(map(int, answer_ids))
    if len(prompt) == 0:
        raise ValueError("prompt vacío")
    if len(answer) == 0:
        raise ValueError("respuesta vacía")
    with torch.no_grad():
        z = model(torch.tensor([prompt + answer]))[0].float().numpy()
    log_total = 0.0
    for j, token in enumerate(answer):
        fila = z[len(prompt) - 1 + j]
        m = fila.max()
        log_total += float(fila[token] - m - np.log(np.exp(fila - m).sum()))
    return float(np.exp(-log_total / len(answer)))
""",
        "token a token, con el modelo sobre prefijos": """
def answer_perplexity(model, prompt_ids, answer_ids):
    prompt, answer = [int(t) for t in prompt_ids], [int(t) for t in answer_ids]
    if not prompt or not answer:
        raise ValueError("vacío")
    suma = 0.0
    with torch.no_grad():
        for j, token in enumerate(answer):
            contexto = torch.tensor([prompt + answer[:j]])
            logp = torch.log_softmax(model(contexto)[0, -1].double(), dim=-1)
            suma -= logp[token].item()
    return math.exp(suma / len(answer))
""",
    },
    "bucle_con_paradas": {
        "for con break y comprobación con endswith de tuplas": """
def generate_with_stops(next_token, prompt_ids, max_tokens, eos_id=None, stop_sequences=()):
    if max_tokens < 0:
        raise ValueError("max_tokens negativo")
    paradas = [tuple(s) for s in stop_sequences]
    if any(not s for s in paradas):
        raise ValueError("parada vacía")
    salida = []
    motivo = "max_tokens"
    for _ in range(max_tokens):
        t = int(next_token(list(prompt_ids) + list(salida)))
        if eos_id is not None and t == eos_id:
            motivo = "eos"
            break
        salida.append(t)
        encontrada = next((s for s in paradas if len(salida) >= len(s) and tuple(salida[-len(s):]) == s), None)
        if encontrada is not None:
            del salida[len(salida) - len(encontrada):]
            motivo = "stop_sequence"
            break
    return {"ids": salida, "stop_reason": motivo}
""",
        "recursivo": """
def generate_with_stops(next_token, prompt_ids, max_tokens, eos_id=None, stop_sequences=()):
    if max_tokens < 0:
        raise ValueError("max_tokens negativo")
    paradas = [list(s) for s in stop_sequences]
    if [] in paradas:
        raise ValueError("parada vacía")

    def paso(generados):
        if len(generados) == max_tokens:
            return {"ids": generados, "stop_reason": "max_tokens"}
        t = int(next_token([*prompt_ids, *generados]))
        if t == eos_id:
            return {"ids": generados, "stop_reason": "eos"}
        nuevos = generados + [t]
        for s in paradas:
            if len(nuevos) >= len(s) and nuevos[len(nuevos) - len(s):] == s:
                return {"ids": nuevos[:len(nuevos) - len(s)], "stop_reason": "stop_sequence"}
        return paso(nuevos)

    return paso([])
""",
    },
    "regla_kv": {
        "math y constantes con nombre": """
MIB = 1024 * 1024
GIB = 1024 * MIB


def kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    for valor in (n_layers, n_kv_heads, head_dim, bytes_per_value):
        if valor <= 0:
            raise ValueError("todo tiene que ser positivo")
    bytes_por_token = math.prod([2, n_layers, n_kv_heads, head_dim]) * bytes_per_value
    return bytes_por_token / MIB


def kv_gib_for_context(tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    if tokens < 0:
        raise ValueError("tokens negativos")
    kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value)  # valida el resto de argumentos
    return float(tokens * 2 * n_layers * n_kv_heads * head_dim * bytes_per_value / GIB)
""",
        "numpy float32 y desplazamientos de bits": """
def kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    if n_layers <= 0 or n_kv_heads <= 0 or head_dim <= 0 or bytes_per_value <= 0:
        raise ValueError("argumentos no positivos")
    claves = n_layers * n_kv_heads * head_dim * bytes_per_value
    return float(np.float32(2 * claves) / np.float32(1 << 20))


def kv_gib_for_context(tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    mib = kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value)
    if tokens < 0:
        raise ValueError("tokens negativos")
    return mib * tokens / 2**10
""",
    },
    "cabe_en_gpu": {
        "desglose en un dict y comparación al final": """
def fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,
                   kv_bytes=2, batch=1, reserve_gb=0.0):
    reglas = {"n_params": n_params >= 0, "weight_bits": weight_bits > 0, "context": context >= 0,
              "batch": batch >= 1, "kv_bytes": kv_bytes > 0, "device_gb": device_gb > 0, "reserve_gb": reserve_gb >= 0}
    malos = [k for k, bien in reglas.items() if not bien]
    if malos:
        raise ValueError(f"fuera de rango: {malos}")
    GB = 10**9
    memoria = {
        "pesos": n_params * (weight_bits / 8),
        "kv": 2 * n_layers * n_kv_heads * head_dim * kv_bytes * context * batch,
        "reserva": reserve_gb * GB,
    }
    return sum(memoria.values()) <= device_gb * GB
""",
        "margen restante con numpy": """
def fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,
                   kv_bytes=2, batch=1, reserve_gb=0.0):
    if min(weight_bits, kv_bytes, device_gb) <= 0 or min(n_params, context, reserve_gb) < 0 or batch < 1:
        raise ValueError("argumentos fuera de rango")
    kv_por_token = np.float64(2 * n_layers * n_kv_heads * head_dim * kv_bytes)
    margen = device_gb - reserve_gb - n_params * weight_bits / 8e9 - kv_por_token * context * batch / 1e9
    return bool(margen >= 0)
""",
    },
    "diagnostico": {
        "lista de pares y normalización con split": f"""
FILAS = [tuple(linea.strip().rstrip(",").replace('"', "").split(": ")) for linea in '''{_ROWS}'''.strip().splitlines()]


def diagnose(symptom):
    buscado = " ".join(symptom.split()).lower()
    for sintoma, etapa in FILAS:
        if sintoma == buscado:
            return etapa
    raise ValueError(f"no conozco el síntoma {{symptom!r}}")
""",
        "diccionario con casefold y get": f"""
def diagnose(symptom):
    tabla = {{{_ROWS}    }}
    etapa = tabla.get(" ".join(symptom.casefold().split()))
    if etapa is None:
        raise ValueError("síntoma desconocido")
    return etapa
""",
    },
    "matriz_decision": {
        "pesos normalizados antes y sort en dos pasadas": """
def score_options(options, weights, minimums=None):
    if any(w < 0 for w in weights.values()) or not any(w > 0 for w in weights.values()):
        raise ValueError("pesos inválidos")
    suma = sum(weights.values())
    normalizados = {c: w / suma for c, w in weights.items()}
    filas = []
    for nombre in options:
        notas = options[nombre]
        for c in normalizados:
            if c not in notas:
                raise ValueError(f"{nombre} no tiene nota de {c}")
        if minimums and any(notas.get(c, float("-inf")) < m for c, m in minimums.items()):
            continue
        filas.append((nombre, float(sum(normalizados[c] * notas[c] for c in normalizados))))
    filas.sort(key=lambda f: f[0])
    filas.sort(key=lambda f: f[1], reverse=True)
    return filas
""",
        "numpy con matriz de notas": """
def score_options(options, weights, minimums=None):
    criterios = list(weights)
    w = np.array([weights[c] for c in criterios], dtype=float)
    if (w < 0).any() or w.sum() == 0:
        raise ValueError("pesos inválidos")
    nombres = sorted(options)
    try:
        notas = np.array([[options[n][c] for c in criterios] for n in nombres], dtype=float)
    except KeyError as falta:
        raise ValueError(f"falta la nota {falta}") from None
    puntuaciones = notas @ (w / w.sum())
    minimos = minimums or {}
    validas = [i for i, n in enumerate(nombres) if all(options[n].get(c, -np.inf) >= m for c, m in minimos.items())]
    orden = sorted(validas, key=lambda i: (-round(puntuaciones[i], 12), nombres[i]))
    return [(nombres[i], float(puntuaciones[i])) for i in orden]
""",
    },
    "kv_por_turnos": {
        "numpy con suma acumulada": """
def kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2, system_tokens=0):
    if n_layers <= 0 or n_kv_heads <= 0 or head_dim <= 0 or bytes_per_value <= 0:
        raise ValueError("configuración inválida")
    cuentas = np.array([system_tokens, *turn_tokens], dtype=np.float64)
    if (cuentas < 0).any() or (cuentas != np.floor(cuentas)).any():
        raise ValueError("tokens inválidos")
    bytes_token = 2.0 * n_layers * n_kv_heads * head_dim * bytes_per_value
    acumulado = np.cumsum(cuentas)[1:]
    return [float(v) for v in acumulado * bytes_token / 2**30]
""",
        "reutiliza la regla en MiB, con un bucle": """
def _mib_por_token(n_layers, n_kv_heads, head_dim, bytes_per_value):
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 1024 / 1024


def kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2, system_tokens=0):
    for x in (n_layers, n_kv_heads, head_dim, bytes_per_value):
        if not x > 0:
            raise ValueError("no positivo")
    if system_tokens < 0 or int(system_tokens) != system_tokens:
        raise ValueError("sistema inválido")
    resultado = []
    total = int(system_tokens)
    for t in list(turn_tokens):
        if t < 0 or math.floor(t) != t:
            raise ValueError(f"turno inválido: {t}")
        total = total + int(t)
        resultado.append(total * _mib_por_token(n_layers, n_kv_heads, head_dim, bytes_per_value) / 1024)
    return resultado
""",
    },
    "tipo_de_modelo": {
        "tabla de prioridades": """
def recommend_model_type(turns, fine_tune=False, tools=False, reasoning=False):
    if type(turns) is not int or turns < 1:
        raise ValueError(f"turns = {turns!r} no vale")
    for activa, tipo in ((fine_tune, "base"), (tools, "herramientas"), (reasoning, "razonamiento"),
                         (turns > 1, "chat")):
        if activa:
            return tipo
    return "instruido"
""",
        "condiciones anidadas": """
def recommend_model_type(turns, fine_tune=False, tools=False, reasoning=False):
    import numbers
    if isinstance(turns, bool) or not isinstance(turns, numbers.Integral) or turns <= 0:
        raise ValueError("turns debe ser un entero positivo")
    if not fine_tune:
        if not tools:
            if not reasoning:
                if turns == 1:
                    return "instruido"
                return "chat"
            return "razonamiento"
        return "herramientas"
    return "base"
""",
    },
}

# Audit by family (issue 26): written from the statements alone.
ALTERNATIVES["matriz_decision"]["namedtuple, fsum y orden estable"] = """
import math as _math
from collections import namedtuple as _nt
_Fila = _nt("Fila", "nombre puntuacion")
def score_options(options, weights, minimums=None):
    for w in weights.values():
        if w < 0:
            raise ValueError("peso negativo")
    suma = _math.fsum(weights.values())
    if suma == 0:
        raise ValueError("pesos a cero")
    filas = []
    for nombre in sorted(options):
        notas = options[nombre]
        if any(c not in notas for c in weights):
            raise ValueError("falta una nota")
        if minimums and any(notas.get(c, -_math.inf) < m for c, m in minimums.items()):
            continue
        filas.append(_Fila(nombre, _math.fsum(weights[c] * notas[c] for c in weights) / suma))
    filas.sort(key=lambda f: f.puntuacion, reverse=True)  # estable: los empates siguen en orden alfabético
    return filas
"""
ALTERNATIVES["kv_por_turnos"]["itertools.accumulate, GiB por token primero"] = """
from itertools import accumulate as _acc
def kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2, system_tokens=0):
    if n_layers <= 0 or n_kv_heads <= 0 or head_dim <= 0 or bytes_per_value <= 0:
        raise ValueError("configuración")
    for n in (system_tokens, *turn_tokens):
        if n < 0 or int(n) != n:
            raise ValueError("tokens")
    gib_por_token = 2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 1024**3
    return [float(t * gib_por_token) for t in _acc(turn_tokens, initial=system_tokens)][1:]
"""
ALTERNATIVES["tipo_de_modelo"]["numbers.Integral sin bool"] = """
import numbers as _numbers
def recommend_model_type(turns, fine_tune=False, tools=False, reasoning=False):
    if isinstance(turns, bool) or not isinstance(turns, _numbers.Integral) or turns < 1:
        raise ValueError("turns")
    for necesidad, tipo in ((fine_tune, "base"), (tools, "herramientas"), (reasoning, "razonamiento")):
        if necesidad:
            return tipo
    return "instruido" if turns == 1 else "chat"
"""
ALTERNATIVES["cabe_en_gpu"]["en bytes, sin pasar a GB"] = """
def fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,
                   kv_bytes=2, batch=1, reserve_gb=0.0):
    if (n_params < 0 or weight_bits <= 0 or context < 0 or batch < 1 or kv_bytes <= 0 or device_gb <= 0
            or reserve_gb < 0 or min(n_layers, n_kv_heads, head_dim) < 1):
        raise ValueError("argumentos")
    necesarios = n_params * weight_bits / 8 + 2 * n_layers * batch * context * n_kv_heads * head_dim * kv_bytes
    return necesarios + reserve_gb * 1e9 <= device_gb * 1e9
"""
