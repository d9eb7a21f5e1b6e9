"""Wrong implementations of lab 05's exercises, from chapter 05's common mistakes (5-M1 … 5-M5, the extra
list of the syllabus) and the course's families (input modified in place, boundaries, wrong return type,
numerically unstable, ignored optional argument, missing ValueError).

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the llmlab
function that does the same job (an expression in the notebook's namespace; the setup cell imports
llmlab.families as FAM, llmlab.moe as MOE, llmlab.reasoning as RZ, llmlab.multimodal as MM and
llmlab.recurrence as REC); the harness adds a mutant that merely calls it.
"""

LAB = "lab05-arquitecturas-modernas"

REFERENCES = {
    "palanca": "FAM.lever_of",
    "nivel": "FAM.level_of",
    "familia": "FAM.family_of",
    "enrutar": "MOE.route",
    "mezcla_moe": "MOE.moe_forward",
    "parametros_moe": "(lambda S, E, n, k: {'total': MOE.moe_param_counts(S, E, n, k)['total'], "
                      "'activos': MOE.moe_param_counts(S, E, n, k)['active'], "
                      "'fraccion_activa': MOE.moe_param_counts(S, E, n, k)['active_fraction']})",
    "reparto_moe": "MOE.solve_moe_split",
    "carga_expertos": "MOE.expert_load",
    "perdida_balanceo": "(lambda L, k: float(MOE.load_balancing_loss(torch.as_tensor(np.asarray(L, dtype=float)), k)))",
    "autoconsistencia": "RZ.self_consistency",
    "extraer_respuesta": "RZ.extract_number",
    "voto_razonado": "RZ.vote_over_rationales",
    "prob_mayoria": "RZ.majority_vote_accuracy",
    "hora_de_empezar": "RZ.plan_start_time",
    "similitud_coseno": "MM.cosine_similarity",
    "parchear": "MM.patchify",
    "recurrencia_lineal": "REC.linear_recurrence",
}

# ---------------------------------------------------------------- exercise 1: three functions in one cell

_PALANCA_OK = '''
def palanca(tecnica):
    capacidad = ["mezcla de expertos", "enrutador top-k", "parámetros activos"]
    entrada = ["parches de imagen", "alineación contrastiva", "conector visual", "audio como tokens"]
    clave = tecnica.strip().lower()
    if clave in capacidad:
        return "capacidad"
    if clave in entrada:
        return "entrada"
    return "proceso"
'''
_NIVEL = '''
def nivel(nombre):
    tabla = {{"transformer": "{a}", "cnn": "{a}", "rnn": "{a}", "moe": "{a}", "mamba": "{a}", "difusión": "{a}",
             "bert": "{m}", "gpt-2": "{m}", "t5": "{m}", "mixtral": "{mixtral}", "clip": "{clip}",
             "rag": "{rag}", "agente con herramientas": "{s}", "cadena multimodal": "{s}",
             "modelo local cuantizado": "{s}"}}
    return tabla[{key}]
'''
_NIVEL_OK = dict(a="arquitectura neuronal", m="modelo entrenado", s="arquitectura de sistema",
                 mixtral="modelo entrenado", clip="modelo entrenado", rag="arquitectura de sistema",
                 key="nombre.strip().lower()")
_FAMILIA = '''
def familia(modelo):
    tabla = {{"bert": "solo codificador", "gpt-2": "{gpt2}", "t5": "{t5}", "bart": "codificador-decodificador",
             "vit": "vision transformer", "switch transformer": "moe", "mixtral": "{mixtral}",
             "mamba": "{mamba}"}}
    return tabla[modelo.strip().lower()]
'''
_FAMILIA_OK = dict(gpt2="solo decodificador", t5="codificador-decodificador", mixtral="moe", mamba="contexto largo")


def _quiz(palanca=_PALANCA_OK, nivel=None, familia=None):
    return (palanca + _NIVEL.format(**{**_NIVEL_OK, **(nivel or {})})
            + _FAMILIA.format(**{**_FAMILIA_OK, **(familia or {})}))


# ---------------------------------------------------------------- exercise 2: the router

_ENRUTAR = '''
def enrutar(x, W_r, k=2):
    x = np.asarray(x, dtype=float)
    W_r = np.asarray(W_r, dtype=float)
    {checks}
    s = W_r @ x
    {probs}
    indices = {choose}
    pesos = {weights}
    return {ret}
'''
_ENRUTAR_OK = dict(
    checks='if W_r.shape[1] != x.shape[0] or k < 1 or k > W_r.shape[0]:\n        raise ValueError("k o formas")',
    probs="g = np.exp(s - s.max())\n    g = g / g.sum()",
    choose='np.argsort(-g, kind="stable")[:k]',
    weights="g[indices] / g[indices].sum()",
    ret="indices, pesos",
)


def _enrutar(**change):
    return _ENRUTAR.format(**{**_ENRUTAR_OK, **change})


# ---------------------------------------------------------------- exercise 3: the mixture

_MEZCLA = '''
def mezcla_moe(x, W_r, expertos, k=2):
    x = np.asarray(x, dtype=float)
    {body}
'''

# ---------------------------------------------------------------- exercises 6 and 7: load and aux loss

_CARGA = '''
def carga_expertos(logits_router, k):
    L = np.asarray(logits_router, dtype=float)
    T, n = L.shape
    {body}
'''

_PERDIDA = '''
def perdida_balanceo(logits_router, k):
    L = np.asarray(logits_router, dtype=float)
    T, n = L.shape
    {probs}
    elegidos = {choose}
    f = np.bincount(elegidos.reshape(-1), minlength=n) / {f_den}
    P = {P}
    return {ret}
'''
_PERDIDA_OK = dict(
    probs="e = np.exp(L - L.max(axis=1, keepdims=True))\n    probs = e / e.sum(axis=1, keepdims=True)",
    choose='np.argsort(-L, axis=1, kind="stable")[:, :k]',
    f_den="T",
    P="probs.mean(axis=0)",
    ret="float(n * np.sum(f * P))",
)


def _perdida(**change):
    return _PERDIDA.format(**{**_PERDIDA_OK, **change})


# ---------------------------------------------------------------- exercise 10: the departure time

_HORA = '''
def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):
    {check}
    h, m = reunion.split(":")
    total = int(h) * 60 + int(m) {op} (antes + trayecto + preparacion)
    {wrap}
    return {fmt}
'''
_HORA_OK = dict(
    check='if min(antes, trayecto, preparacion) < 0:\n        raise ValueError("negativo")',
    op="-",
    wrap="total %= 1440",
    fmt='f"{total // 60:02d}:{total % 60:02d}"',
)


def _hora(**change):
    return _HORA.format(**{**_HORA_OK, **change})


MUTANTS = {
    "quiz": {
        "RAG como capa de la red (arquitectura neuronal)": _quiz(nivel={"rag": "arquitectura neuronal"}),
        "Mixtral como arquitectura (confunde el modelo con su forma)": _quiz(nivel={"mixtral": "arquitectura neuronal"}),
        "CLIP como sistema": _quiz(nivel={"clip": "arquitectura de sistema"}),
        "no ignora mayúsculas ni espacios": _quiz(nivel={"key": "nombre"}),
        "T5 solo decodificador": _quiz(familia={"t5": "solo decodificador"}),
        "Mamba como Transformer solo decodificador": _quiz(familia={"mamba": "solo decodificador"}),
        "todo lo que no es entrada es capacidad": '''
def palanca(tecnica):
    entrada = ["parches de imagen", "alineación contrastiva", "conector visual", "audio como tokens"]
    return "entrada" if tecnica.strip().lower() in entrada else "capacidad"
''' + _NIVEL.format(**_NIVEL_OK) + _FAMILIA.format(**_FAMILIA_OK),
    },
    "enrutar": {
        "argsort ascendente (elige los menos probables)": _enrutar(choose="np.argsort(g)[:k]"),
        "argsort(g)[::-1] del libro (empates: índice mayor primero)": _enrutar(choose="np.argsort(g)[::-1][:k]"),
        "sin renormalizar (0.62, 0.24)": _enrutar(weights="g[indices]"),
        "pesos con los logits en vez de las probabilidades": _enrutar(weights="s[indices] / s[indices].sum()"),
        "softmax sin restar el máximo (nan con logits grandes)": _enrutar(probs="g = np.exp(s)\n    g = g / g.sum()"),
        "un experto de más ([:k+1])": _enrutar(choose='np.argsort(-g, kind="stable")[:k + 1]'),
        "reglas fijas en vez de puntuaciones (5-M1)": _enrutar(choose="np.arange(k)"),
        "ignora k (siempre top-2)": _enrutar(choose='np.argsort(-g, kind="stable")[:2]'),
        "devuelve listas, no arrays": _enrutar(ret="indices.tolist(), pesos.tolist()"),
        "no lanza ValueError con k fuera de rango": _enrutar(checks="pass"),
        "modifica W_r en su sitio": _enrutar(probs="W_r -= 0.0 * W_r\n    W_r *= 2.0\n    s = s\n"
                                                   "    g = np.exp(s - s.max())\n    g = g / g.sum()"),
    },
    "mezcla_moe": {
        "llama a todos los expertos (pesa los sobrantes por 0)": _MEZCLA.format(body='''indices, pesos = enrutar(x, W_r, k)
    completo = np.zeros(len(expertos))
    completo[indices] = pesos
    return sum(w * np.asarray(e(x), dtype=float) for w, e in zip(completo, expertos))'''),
        "probabilidades sin renormalizar": _MEZCLA.format(body='''s = np.asarray(W_r, dtype=float) @ x
    g = np.exp(s - s.max())
    g = g / g.sum()
    indices = np.argsort(-g, kind="stable")[:k]
    return sum(g[i] * np.asarray(expertos[i](x), dtype=float) for i in indices)'''),
        "suma sin pesos": _MEZCLA.format(body='''indices, pesos = enrutar(x, W_r, k)
    return sum(np.asarray(expertos[i](x), dtype=float) for i in indices)'''),
        "media de los elegidos (pesos iguales)": _MEZCLA.format(body='''indices, pesos = enrutar(x, W_r, k)
    return sum(np.asarray(expertos[i](x), dtype=float) for i in indices) / k'''),
        "solo el mejor experto": _MEZCLA.format(body='''indices, pesos = enrutar(x, W_r, k)
    return np.asarray(expertos[indices[0]](x), dtype=float)'''),
    },
    "parametros_moe": {
        "la versión con el error, sin tocar: activos = k·E (olvida lo compartido, 5-M2)": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    """Parámetros totales y activos de un MoE, y la fracción activa."""
    if k < 1 or k > n_expertos:
        raise ValueError("k debe estar entre 1 y n_expertos")
    total = float(compartidos + n_expertos * por_experto)
    activos = float(k * por_experto)
    return {"total": total, "activos": activos, "fraccion_activa": activos / total}
''',
        "activos = total": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    if k < 1 or k > n_expertos:
        raise ValueError("k")
    total = compartidos + n_expertos * por_experto
    return {"total": total, "activos": total, "fraccion_activa": 1.0}
''',
        "n en lugar de k en los activos": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    if k < 1 or k > n_expertos:
        raise ValueError("k")
    total = compartidos + n_expertos * por_experto
    activos = compartidos + n_expertos * por_experto
    return {"total": total, "activos": activos, "fraccion_activa": activos / total}
''',
        "total = n·E (8 × 7B)": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    if k < 1 or k > n_expertos:
        raise ValueError("k")
    total = n_expertos * por_experto
    activos = compartidos + k * por_experto
    return {"total": total, "activos": activos, "fraccion_activa": activos / total}
''',
        "fracción invertida": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    if k < 1 or k > n_expertos:
        raise ValueError("k")
    total = compartidos + n_expertos * por_experto
    activos = compartidos + k * por_experto
    return {"total": total, "activos": activos, "fraccion_activa": total / activos}
''',
        "no lanza ValueError con k > n": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    total = compartidos + n_expertos * por_experto
    activos = compartidos + k * por_experto
    return {"total": total, "activos": activos, "fraccion_activa": activos / total}
''',
    },
    "reparto_moe": {
        "divide por n en vez de n − k": '''
def reparto_moe(total, activos, n_expertos, k):
    if k >= n_expertos or activos > total:
        raise ValueError("datos")
    E = (total - activos) / n_expertos
    return activos - k * E, E
''',
        "E = total / n": '''
def reparto_moe(total, activos, n_expertos, k):
    if k >= n_expertos or activos > total:
        raise ValueError("datos")
    E = total / n_expertos
    return activos - k * E, E
''',
        "devuelve (E, S)": '''
def reparto_moe(total, activos, n_expertos, k):
    if k >= n_expertos or activos > total:
        raise ValueError("datos")
    E = (total - activos) / (n_expertos - k)
    return E, activos - k * E
''',
        "ZeroDivisionError en vez de ValueError con k == n": '''
def reparto_moe(total, activos, n_expertos, k):
    if activos > total:
        raise ValueError("datos")
    E = (total - activos) / (n_expertos - k)
    S = activos - k * E
    if S < 0:
        raise ValueError("S negativo")
    return S, E
''',
        "acepta una parte compartida negativa": '''
def reparto_moe(total, activos, n_expertos, k):
    if k >= n_expertos or activos > total:
        raise ValueError("datos")
    E = (total - activos) / (n_expertos - k)
    return activos - k * E, E
''',
    },
    "carga_expertos": {
        "divide por T (las cargas suman k)": _CARGA.format(body='''elegidos = np.argsort(-L, axis=1, kind="stable")[:, :k]
    return np.bincount(elegidos.reshape(-1), minlength=n) / T'''),
        "cuentas sin dividir": _CARGA.format(body='''elegidos = np.argsort(-L, axis=1, kind="stable")[:, :k]
    return np.bincount(elegidos.reshape(-1), minlength=n).astype(float)'''),
        "ignora k (solo el mejor)": _CARGA.format(body='''return np.bincount(L.argmax(axis=1), minlength=n) / T'''),
        "carga blanda (media de las probabilidades)": _CARGA.format(body='''e = np.exp(L - L.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).mean(axis=0)'''),
        "elige los menos probables": _CARGA.format(body='''elegidos = np.argsort(L, axis=1, kind="stable")[:, :k]
    return np.bincount(elegidos.reshape(-1), minlength=n) / (T * k)'''),
        "empates al índice mayor": _CARGA.format(body='''elegidos = np.argsort(L, axis=1)[:, ::-1][:, :k]
    return np.bincount(elegidos.reshape(-1), minlength=n) / (T * k)'''),
        "olvida minlength (array corto)": _CARGA.format(body='''elegidos = np.argsort(-L, axis=1, kind="stable")[:, :k]
    return np.bincount(elegidos.reshape(-1)) / (T * k)'''),
    },
    "perdida_balanceo": {
        "f dividida por T·k (sale k veces menor)": _perdida(f_den="(T * k)"),
        "sin el factor n": _perdida(ret="float(np.sum(f * P))"),
        "P con los logits en vez de las probabilidades": _perdida(P="L.mean(axis=0)"),
        "softmax sin restar el máximo": _perdida(probs="e = np.exp(L)\n    probs = e / e.sum(axis=1, keepdims=True)"),
        "solo el mejor experto (ignora k)": _perdida(choose="L.argmax(axis=1)[:, None]"),
        "f·f en vez de f·P": _perdida(ret="float(n * np.sum(f * f))"),
        "devuelve un array, no un número": _perdida(ret="np.array([n * np.sum(f * P)])"),
    },
    "autoconsistencia": {
        "la versión con el error, sin tocar: la respuesta más larga (5-M3)": '''
def autoconsistencia(respuestas):
    """La respuesta más votada (empate: la primera que apareció)."""
    if len(respuestas) == 0:
        raise ValueError("no hay respuestas")
    limpias = [r.strip() for r in respuestas]
    return max(limpias, key=len)  # la respuesta más elaborada
''',
        "la primera respuesta": '''
def autoconsistencia(respuestas):
    if not respuestas:
        raise ValueError("vacía")
    return respuestas[0].strip()
''',
        "sin quitar espacios": '''
def autoconsistencia(respuestas):
    if not respuestas:
        raise ValueError("vacía")
    return Counter(respuestas).most_common(1)[0][0]
''',
        "empate: la última vista": '''
def autoconsistencia(respuestas):
    if not respuestas:
        raise ValueError("vacía")
    votos = Counter(r.strip() for r in reversed(respuestas))
    return votos.most_common(1)[0][0]
''',
        "empate: orden alfabético": '''
def autoconsistencia(respuestas):
    if not respuestas:
        raise ValueError("vacía")
    votos = Counter(r.strip() for r in respuestas)
    return max(sorted(votos), key=lambda r: votos[r])
''',
        "no lanza ValueError con la lista vacía": '''
def autoconsistencia(respuestas):
    votos = Counter(r.strip() for r in respuestas)
    return votos.most_common(1)[0][0]
''',
    },
    "extraer_respuesta": {
        "el primer número, no el último": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"[-−]?[0-9]+(?:[.,][0-9]+)?", texto)
    return float(numeros[0].replace("−", "-").replace(",", ".")) if numeros else None
''',
        "ignora el signo menos": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"[0-9]+(?:[.,][0-9]+)?", texto)
    return float(numeros[-1].replace(",", ".")) if numeros else None
''',
        "solo el guion como signo (no el − tipográfico)": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"-?[0-9]+(?:[.,][0-9]+)?", texto)
    return float(numeros[-1].replace(",", ".")) if numeros else None
''',
        "solo el punto decimal (la coma parte el número)": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"[-−]?[0-9]+(?:\\.[0-9]+)?", texto)
    return float(numeros[-1].replace("−", "-")) if numeros else None
''',
        "solo enteros": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"[-−]?[0-9]+", texto)
    return float(numeros[-1].replace("−", "-")) if numeros else None
''',
        "cifras de otras escrituras (\\d en vez de [0-9])": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"[-−]?\\d+(?:[.,]\\d+)?", texto)
    return float(numeros[-1].replace("−", "-").replace(",", ".")) if numeros else None
''',
        "convierte con int (pierde los decimales)": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"[-−]?[0-9]+(?:[.,][0-9]+)?", texto)
    return float(int(float(numeros[-1].replace("−", "-").replace(",", ".")))) if numeros else None
''',
        "devuelve el texto, no un float": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"[-−]?[0-9]+(?:[.,][0-9]+)?", texto)
    return numeros[-1].replace("−", "-").replace(",", ".") if numeros else None
''',
        "sin números devuelve 0.0 en vez de None": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    numeros = re.findall(r"[-−]?[0-9]+(?:[.,][0-9]+)?", texto)
    return float(numeros[-1].replace("−", "-").replace(",", ".")) if numeros else 0.0
''',
        "no lanza TypeError con un número": '''
def extraer_respuesta(texto):
    numeros = re.findall(r"[-−]?[0-9]+(?:[.,][0-9]+)?", str(texto))
    return float(numeros[-1].replace("−", "-").replace(",", ".")) if numeros else None
''',
        "separa por espacios y descarta lo que no es un número": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto")
    ultimo = None
    for palabra in texto.split():
        try:
            ultimo = float(palabra.strip(".,:;()").replace("−", "-").replace(",", "."))
        except ValueError:
            pass
    return ultimo
''',
    },
    "voto_razonado": {
        "la cadena más larga (5-M3)": '''
def voto_razonado(cadenas):
    con_respuesta = [c for c in cadenas if extraer_respuesta(c) is not None]
    if not con_respuesta:
        raise ValueError("nada")
    return extraer_respuesta(max(con_respuesta, key=len)), 1
''',
        "empate: el valor menor (np.unique)": '''
def voto_razonado(cadenas):
    respuestas = [r for r in (extraer_respuesta(c) for c in cadenas) if r is not None]
    if not respuestas:
        raise ValueError("nada")
    valores, cuentas = np.unique(respuestas, return_counts=True)
    i = int(np.argmax(cuentas))
    return float(valores[i]), int(cuentas[i])
''',
        "votos como np.int64": '''
def voto_razonado(cadenas):
    respuestas = [r for r in (extraer_respuesta(c) for c in cadenas) if r is not None]
    if not respuestas:
        raise ValueError("nada")
    respuesta, votos = Counter(respuestas).most_common(1)[0]
    return respuesta, np.int64(votos)
''',
        "devuelve una lista, no una tupla": '''
def voto_razonado(cadenas):
    respuestas = [r for r in (extraer_respuesta(c) for c in cadenas) if r is not None]
    if not respuestas:
        raise ValueError("nada")
    respuesta, votos = Counter(respuestas).most_common(1)[0]
    return [respuesta, votos]
''',
        "las cadenas sin número votan None": '''
def voto_razonado(cadenas):
    respuestas = [extraer_respuesta(c) for c in cadenas]
    if all(r is None for r in respuestas):
        raise ValueError("nada")
    respuesta, votos = Counter(respuestas).most_common(1)[0]
    return respuesta, votos
''',
        "empate: la última vista": '''
def voto_razonado(cadenas):
    respuestas = [r for r in (extraer_respuesta(c) for c in reversed(list(cadenas))) if r is not None]
    if not respuestas:
        raise ValueError("nada")
    respuesta, votos = Counter(respuestas).most_common(1)[0]
    return respuesta, votos
''',
        "cuenta textos, no números («69» y «69.0» separados)": '''
def voto_razonado(cadenas):
    textos = [m[-1] for m in (re.findall(r"[-−]?[0-9]+(?:[.,][0-9]+)?", c) for c in cadenas) if m]
    if not textos:
        raise ValueError("nada")
    texto, votos = Counter(textos).most_common(1)[0]
    return extraer_respuesta(texto), votos
''',
        "no lanza ValueError si nadie responde": '''
def voto_razonado(cadenas):
    respuestas = [r for r in (extraer_respuesta(c) for c in cadenas) if r is not None]
    if not respuestas:
        return None, 0
    respuesta, votos = Counter(respuestas).most_common(1)[0]
    return respuesta, votos
''',
    },
    "prob_mayoria": {
        "con p entero devuelve un int": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1 or not isinstance(M, int) or M < 1 or M % 2 == 0:
        raise ValueError("p o M")
    return sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2 + 1, M + 1))
''',
        "acepta un M float (3.0)": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1 or M < 1 or M % 2 == 0:
        raise ValueError("p o M")
    M = int(M)
    return float(sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2 + 1, M + 1)))
''',
        "cuenta también la mitad (j ≥ M/2)": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1 or M < 1 or M % 2 == 0:
        raise ValueError("p o M")
    return float(sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2, M + 1)))
''',
        "solo la mayoría justa (j = M//2 + 1)": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1 or M < 1 or M % 2 == 0:
        raise ValueError("p o M")
    j = M // 2 + 1
    return float(math.comb(M, j) * p**j * (1 - p) ** (M - j))
''',
        "todos aciertan (p^M)": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1 or M < 1 or M % 2 == 0:
        raise ValueError("p o M")
    return float(p**M)
''',
        "sin combinatorio": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1 or M < 1 or M % 2 == 0:
        raise ValueError("p o M")
    return float(sum(p**j * (1 - p) ** (M - j) for j in range(M // 2 + 1, M + 1)))
''',
        "no rechaza M par": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1 or M < 1:
        raise ValueError("p o M")
    return float(sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2 + 1, M + 1)))
''',
        "no rechaza p fuera de [0, 1]": '''
def prob_mayoria(p, M):
    if M < 1 or M % 2 == 0:
        raise ValueError("M")
    return float(sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2 + 1, M + 1)))
''',
    },
    "hora_de_empezar": {
        "suma en vez de restar": _hora(op="+"),
        "sin dar la vuelta a medianoche": _hora(wrap="pass"),
        "sin ceros a la izquierda": _hora(fmt='f"{total // 60}:{total % 60}"'),
        "reloj de 12 horas": _hora(wrap="total %= 720"),
        "olvida la preparación": '''
def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):
    if min(antes, trayecto, preparacion) < 0:
        raise ValueError("negativo")
    h, m = reunion.split(":")
    total = (int(h) * 60 + int(m) - antes - trayecto) % 1440
    return f"{total // 60:02d}:{total % 60:02d}"
''',
        "ignora los argumentos (siempre 50 minutos)": '''
def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):
    if min(antes, trayecto, preparacion) < 0:
        raise ValueError("negativo")
    h, m = reunion.split(":")
    total = (int(h) * 60 + int(m) - 50) % 1440
    return f"{total // 60:02d}:{total % 60:02d}"
''',
        "no lanza ValueError con minutos negativos": _hora(check="pass"),
    },
    "similitud_coseno": {
        "la versión con el error, sin tocar: producto escalar sin normalizar (5-M4)": '''
def similitud_coseno(v, t):
    """Similitud coseno entre dos vectores."""
    v = np.asarray(v, dtype=float)
    t = np.asarray(t, dtype=float)
    if v.shape != t.shape:
        raise ValueError("los vectores deben tener la misma longitud")
    if not v.any() or not t.any():
        raise ValueError("el vector cero no tiene dirección")
    return float(v @ t)
''',
        "producto escalar a secas, sin comprobar nada": '''
def similitud_coseno(v, t):
    return float(np.dot(v, t))
''',
        "divide solo por la longitud del texto": '''
def similitud_coseno(v, t):
    v, t = np.asarray(v, dtype=float), np.asarray(t, dtype=float)
    if np.linalg.norm(v) == 0 or np.linalg.norm(t) == 0 or v.shape != t.shape:
        raise ValueError("vector cero o longitudes distintas")
    return float(v @ t / np.linalg.norm(t))
''',
        "divide por las normas al cuadrado": '''
def similitud_coseno(v, t):
    v, t = np.asarray(v, dtype=float), np.asarray(t, dtype=float)
    if np.linalg.norm(v) == 0 or np.linalg.norm(t) == 0 or v.shape != t.shape:
        raise ValueError("vector cero o longitudes distintas")
    return float(v @ t / (v @ v * (t @ t)))
''',
        "distancia euclídea en vez de coseno": '''
def similitud_coseno(v, t):
    v, t = np.asarray(v, dtype=float), np.asarray(t, dtype=float)
    if np.linalg.norm(v) == 0 or np.linalg.norm(t) == 0 or v.shape != t.shape:
        raise ValueError("vector cero o longitudes distintas")
    return float(1 - np.linalg.norm(v / np.linalg.norm(v) - t / np.linalg.norm(t)))
''',
        "no lanza ValueError con el vector cero (nan)": '''
def similitud_coseno(v, t):
    v, t = np.asarray(v, dtype=float), np.asarray(t, dtype=float)
    if v.shape != t.shape:
        raise ValueError("longitudes distintas")
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(v @ t / (np.linalg.norm(v) * np.linalg.norm(t)))
''',
        "devuelve un array, no un número": '''
def similitud_coseno(v, t):
    v, t = np.asarray(v, dtype=float), np.asarray(t, dtype=float)
    if np.linalg.norm(v) == 0 or np.linalg.norm(t) == 0 or v.shape != t.shape:
        raise ValueError("vector cero o longitudes distintas")
    return np.array([v @ t / (np.linalg.norm(v) * np.linalg.norm(t))])
''',
        "normaliza los vectores en su sitio": '''
def similitud_coseno(v, t):
    if np.linalg.norm(v) == 0 or np.linalg.norm(t) == 0 or len(v) != len(t):
        raise ValueError("vector cero o longitudes distintas")
    v /= np.linalg.norm(v)
    t /= np.linalg.norm(t)
    return float(v @ t)
''',
    },
    "parchear": {
        "reshape directo (mezcla filas de parches distintos)": '''
def parchear(imagen, p=16):
    imagen = np.asarray(imagen, dtype=float)
    H, W, C = imagen.shape
    if H % p or W % p:
        raise ValueError("p")
    return imagen.reshape(-1, p * p * C)
''',
        "rejilla recorrida por columnas": '''
def parchear(imagen, p=16):
    imagen = np.asarray(imagen, dtype=float)
    H, W, C = imagen.shape
    if H % p or W % p:
        raise ValueError("p")
    return imagen.reshape(H // p, p, W // p, p, C).transpose(2, 0, 1, 3, 4).reshape(-1, p * p * C)
''',
        "canales primero dentro del parche": '''
def parchear(imagen, p=16):
    imagen = np.asarray(imagen, dtype=float)
    H, W, C = imagen.shape
    if H % p or W % p:
        raise ValueError("p")
    return imagen.reshape(H // p, p, W // p, p, C).transpose(0, 2, 4, 1, 3).reshape(-1, p * p * C)
''',
        "recorta en silencio si p no divide": '''
def parchear(imagen, p=16):
    imagen = np.asarray(imagen, dtype=float)
    H, W, C = imagen.shape
    imagen = imagen[: H - H % p, : W - W % p]
    H, W = imagen.shape[:2]
    return imagen.reshape(H // p, p, W // p, p, C).transpose(0, 2, 1, 3, 4).reshape(-1, p * p * C)
''',
        "ignora p (siempre 16)": '''
def parchear(imagen, p=16):
    imagen = np.asarray(imagen, dtype=float)
    H, W, C = imagen.shape
    if H % 16 or W % 16:
        raise ValueError("p")
    return imagen.reshape(H // 16, 16, W // 16, 16, C).transpose(0, 2, 1, 3, 4).reshape(-1, 16 * 16 * C)
''',
    },
    "recurrencia_lineal": {
        "modifica x en su sitio": '''
def recurrencia_lineal(x, a):
    for t in range(1, len(x)):
        x[t] += a * x[t - 1]
    return np.asarray(x, dtype=float)
''',
        "desfase: usa x_{t-1}": '''
def recurrencia_lineal(x, a):
    x = np.asarray(x, dtype=float)
    estados = np.zeros_like(x)
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        estados[t] = h
        h = a * h + x[t]
    return estados
''',
        "sin memoria: a^t · x_t": '''
def recurrencia_lineal(x, a):
    x = np.asarray(x, dtype=float)
    return np.array([np.asarray(a, dtype=float) ** t * x[t] for t in range(x.shape[0])])
''',
        "solo el último estado": '''
def recurrencia_lineal(x, a):
    x = np.asarray(x, dtype=float)
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = a * h + x[t]
    return h
''',
        "multiplica también la entrada: h = a·(h + x)": '''
def recurrencia_lineal(x, a):
    x = np.asarray(x, dtype=float)
    estados = np.zeros_like(x)
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = a * (h + x[t])
        estados[t] = h
    return estados
''',
        "un solo a para todos los canales": '''
def recurrencia_lineal(x, a):
    x = np.asarray(x, dtype=float)
    a = float(np.ravel(a)[0])
    estados = np.zeros_like(x)
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = a * h + x[t]
        estados[t] = h
    return estados
''',
    },
}

# ---------------------------------------------------------------- audit 2026-12: wrong answers by family
# Written from the statements (issue 26, «Graders by family»): promised types, integer inputs, boundaries,
# validation and in-place changes.

_AUDIT = {
    "enrutar": {
        "returns a list, not a tuple": _enrutar(ret="[indices, pesos]"),
    },
    "parametros_moe": {
        "ints with integer inputs": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    if k < 1 or k > n_expertos:
        raise ValueError("k")
    total = compartidos + n_expertos * por_experto
    activos = compartidos + k * por_experto
    return {"total": total, "activos": activos, "fraccion_activa": activos / total}
''',
    },
    "reparto_moe": {
        "rejects a shared part of exactly zero": '''
def reparto_moe(total, activos, n_expertos, k):
    if k >= n_expertos or activos > total:
        raise ValueError("datos")
    E = (total - activos) / (n_expertos - k)
    S = activos - k * E
    if S <= 0:
        raise ValueError("S")
    return float(S), float(E)
''',
        "ints with integer inputs": '''
def reparto_moe(total, activos, n_expertos, k):
    if k >= n_expertos or activos > total:
        raise ValueError("datos")
    if (total - activos) % (n_expertos - k) == 0:
        E = (total - activos) // (n_expertos - k)
    else:
        E = (total - activos) / (n_expertos - k)
    S = activos - k * E
    if S < 0:
        raise ValueError("S")
    return S, E
''',
    },
    "perdida_balanceo": {
        "ties to the higher index": _perdida(choose="np.argsort(L, axis=1)[:, ::-1][:, :k]"),
    },
    "prob_mayoria": {
        "accepts p = nan": '''
def prob_mayoria(p, M):
    if p < 0 or p > 1:
        raise ValueError("p")
    if not isinstance(M, int) or M < 1 or M % 2 == 0:
        raise ValueError("M")
    return float(sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2 + 1, M + 1)))
''',
    },
    "hora_de_empezar": {
        "wraps midnight only once": _hora(wrap="total = total + 1440 if total < 0 else total"),
    },
    "similitud_coseno": {
        "returns np.float32": '''
def similitud_coseno(v, t):
    v = np.asarray(v, dtype=float)
    t = np.asarray(t, dtype=float)
    if v.shape != t.shape:
        raise ValueError("los vectores deben tener la misma longitud")
    if not v.any() or not t.any():
        raise ValueError("el vector cero no tiene dirección")
    return np.float32(v @ t / (np.linalg.norm(v) * np.linalg.norm(t)))
''',
    },
    "parchear": {
        "integer image stays integer": '''
def parchear(imagen, p=16):
    imagen = np.asarray(imagen)
    H, W, C = imagen.shape
    if H % p or W % p:
        raise ValueError("p")
    return imagen.reshape(H // p, p, W // p, p, C).transpose(0, 2, 1, 3, 4).reshape(-1, p * p * C)
''',
    },
    "recurrencia_lineal": {
        "integer x keeps an integer dtype": '''
def recurrencia_lineal(x, a):
    x = np.asarray(x)
    estados = np.zeros_like(x)
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = a * h + x[t]
        estados[t] = h
    return estados
''',
    },
    "carga_expertos": {
        "ties by probability rounding (softmax in float32)": _CARGA.format(body='''e = np.exp((L - L.max(axis=1, keepdims=True)).astype(np.float32))
    g = e / e.sum(axis=1, keepdims=True)
    elegidos = np.argsort(g, axis=1)[:, ::-1][:, :k]
    return np.bincount(elegidos.reshape(-1), minlength=n) / (T * k)'''),
    },
    "quiz": {
        "strips only spaces, not tabs or newlines": _quiz(nivel={"key": "nombre.strip(' ').lower()"}),
    },
}
for _answer, _by_name in _AUDIT.items():
    MUTANTS[_answer].update(_by_name)
