"""Valid answers to lab 05's exercises written differently from the solution: each must get full marks.

Loops instead of vectorised code, the standard library instead of NumPy, float32, another correct order of
operations, another (equivalent) formula.
"""

LAB = "lab05-arquitecturas-modernas"

_NIVEL_FAMILIA = '''
def nivel(nombre):
    grupos = {
        "arquitectura neuronal": {"transformer", "cnn", "rnn", "moe", "mamba", "difusión"},
        "modelo entrenado": {"bert", "gpt-2", "t5", "mixtral", "clip"},
        "arquitectura de sistema": {"rag", "agente con herramientas", "cadena multimodal", "modelo local cuantizado"},
    }
    clave = " ".join(nombre.split()).lower()
    for etiqueta, miembros in grupos.items():
        if clave in miembros:
            return etiqueta
    raise ValueError(nombre)


def familia(modelo):
    clave = modelo.lower().strip()
    if clave == "bert":
        return "solo codificador"
    if clave == "gpt-2":
        return "solo decodificador"
    if clave in ("t5", "bart"):
        return "codificador-decodificador"
    if clave == "vit":
        return "vision transformer"
    if clave in ("switch transformer", "mixtral"):
        return "moe"
    if clave == "mamba":
        return "contexto largo"
    raise ValueError(modelo)
'''

ALTERNATIVES = {
    "quiz": {
        "conjuntos y if/elif": '''
def palanca(tecnica):
    clave = tecnica.lower().strip()
    if clave in {"mezcla de expertos", "enrutador top-k", "parámetros activos"}:
        return "capacidad"
    if clave in {"parches de imagen", "alineación contrastiva", "conector visual", "audio como tokens"}:
        return "entrada"
    if clave in {"cadena de pensamiento", "autoconsistencia", "árbol de pensamientos",
                 "verificación con herramientas", "cómputo en inferencia"}:
        return "proceso"
    raise ValueError(tecnica)
''' + _NIVEL_FAMILIA,
        "una tabla de pares": '''
PARES = [("mezcla de expertos", "capacidad"), ("enrutador top-k", "capacidad"), ("parámetros activos", "capacidad"),
         ("cadena de pensamiento", "proceso"), ("autoconsistencia", "proceso"), ("árbol de pensamientos", "proceso"),
         ("verificación con herramientas", "proceso"), ("cómputo en inferencia", "proceso"),
         ("parches de imagen", "entrada"), ("alineación contrastiva", "entrada"), ("conector visual", "entrada"),
         ("audio como tokens", "entrada")]


def palanca(tecnica):
    for nombre, etiqueta in PARES:
        if nombre == tecnica.strip().lower():
            return etiqueta
    return None
''' + _NIVEL_FAMILIA,
    },
    "enrutar": {
        "softmax solo sobre los logits elegidos, con listas y bucles": '''
def enrutar(x, W_r, k=2):
    x = [float(v) for v in np.ravel(x)]
    filas = [[float(v) for v in fila] for fila in np.asarray(W_r, dtype=float)]
    if any(len(fila) != len(x) for fila in filas):
        raise ValueError("W_r no tiene d columnas")
    if not 1 <= k <= len(filas):
        raise ValueError("k fuera de rango")
    s = [sum(w * v for w, v in zip(fila, x)) for fila in filas]
    orden = sorted(range(len(s)), key=lambda i: (-s[i], i))[:k]
    mayor = s[orden[0]]
    e = [math.exp(s[i] - mayor) for i in orden]
    return np.array(orden), np.array([v / sum(e) for v in e])
''',
        "float32 con np.lexsort": '''
def enrutar(x, W_r, k=2):
    x = np.asarray(x, dtype=np.float32)
    W_r = np.asarray(W_r, dtype=np.float32)
    if W_r.shape[-1] != x.shape[0]:
        raise ValueError("formas")
    if k <= 0 or k > len(W_r):
        raise ValueError("k")
    s = (W_r.astype(np.float64) @ x.astype(np.float64))
    g = np.exp(s - np.max(s))
    g /= np.sum(g)
    indices = np.lexsort((np.arange(len(g)), -g))[:k]
    elegidos = g[indices]
    return indices, (elegidos / elegidos.sum()).astype(np.float32)
''',
    },
    "mezcla_moe": {
        "acumula con un bucle sobre k": '''
def mezcla_moe(x, W_r, expertos, k=2):
    indices, pesos = enrutar(x, W_r, k)
    x = np.asarray(x, dtype=float)
    total = None
    for j in range(k):
        y = pesos[j] * np.asarray(expertos[int(indices[j])](x), dtype=float)
        total = y if total is None else total + y
    return total
''',
        "recalcula la softmax sobre los elegidos": '''
def mezcla_moe(x, W_r, expertos, k=2):
    x = np.asarray(x, dtype=float)
    s = np.asarray(W_r, dtype=float) @ x
    elegidos = np.argsort(-s, kind="stable")[:k]
    e = np.exp(s[elegidos] - s[elegidos].max())
    pesos = e / e.sum()
    salidas = np.array([np.asarray(expertos[i](x), dtype=float) for i in elegidos])
    return pesos @ salidas
''',
    },
    "parametros_moe": {
        "el arreglo mínimo de la versión con el error": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    """Parámetros totales y activos de un MoE, y la fracción activa."""
    if k < 1 or k > n_expertos:
        raise ValueError("k debe estar entre 1 y n_expertos")
    total = float(compartidos + n_expertos * por_experto)
    activos = float(k * por_experto) + compartidos
    return {"total": total, "activos": activos, "fraccion_activa": activos / total}
''',
        "activos como total menos los expertos dormidos": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    if not 1 <= k <= n_expertos:
        raise ValueError("k")
    total = float(compartidos + n_expertos * por_experto)
    activos = total - (n_expertos - k) * por_experto
    return dict(total=total, activos=activos, fraccion_activa=activos / total)
''',
        "enteros hasta el final, float al guardar": '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    if k > n_expertos or k < 1:
        raise ValueError("k")
    resultado = {}
    resultado["total"] = float(compartidos + por_experto * n_expertos)
    resultado["activos"] = float(compartidos + por_experto * k)
    resultado["fraccion_activa"] = resultado["activos"] / resultado["total"]
    return resultado
''',
    },
    "reparto_moe": {
        "S desde el total": '''
def reparto_moe(total, activos, n_expertos, k):
    if k >= n_expertos:
        raise ValueError("k")
    if activos > total:
        raise ValueError("activos")
    E = (total - activos) / (n_expertos - k)
    S = total - n_expertos * E
    if S < -1e-6 * total:
        raise ValueError("S negativo")
    return (max(S, 0.0), E)
''',
        "sistema lineal con NumPy": '''
def reparto_moe(total, activos, n_expertos, k):
    if k >= n_expertos or activos > total:
        raise ValueError("datos imposibles")
    S, E = np.linalg.solve([[1.0, n_expertos], [1.0, k]], [total, activos])
    if S < -1e-6 * max(1.0, abs(total)):
        raise ValueError("S negativo")
    return float(S), float(E)
''',
    },
    "carga_expertos": {
        "bucle por token con sorted": '''
def carga_expertos(logits_router, k):
    filas = np.asarray(logits_router, dtype=float)
    n = filas.shape[1]
    cuenta = [0] * n
    for fila in filas:
        for i in sorted(range(n), key=lambda j: (-fila[j], j))[:k]:
            cuenta[i] += 1
    return np.array(cuenta, dtype=float) / (len(filas) * k)
''',
        "por probabilidades en float32": '''
def carga_expertos(logits_router, k):
    L = np.asarray(logits_router, dtype=np.float64)
    e = np.exp(L - L.max(axis=1, keepdims=True))
    g = (e / e.sum(axis=1, keepdims=True))
    elegidos = np.argsort(-L, axis=1, kind="mergesort")[:, :k]
    uno = np.zeros_like(g, dtype=np.float32)
    np.put_along_axis(uno, elegidos, 1.0, axis=1)
    return uno.sum(axis=0) / uno.sum()
''',
    },
    "perdida_balanceo": {
        "con one-hot y bucles": '''
def perdida_balanceo(logits_router, k):
    L = np.asarray(logits_router, dtype=float)
    T, n = L.shape
    f = np.zeros(n)
    P = np.zeros(n)
    for fila in L:
        e = np.exp(fila - fila.max())
        P += e / e.sum()
        for i in sorted(range(n), key=lambda j: (-fila[j], j))[:k]:
            f[i] += 1
    return float(n * np.dot(f / T, P / T))
''',
        "log-sum-exp": '''
def perdida_balanceo(logits_router, k):
    L = np.asarray(logits_router, dtype=float)
    T, n = L.shape
    m = L.max(axis=1, keepdims=True)
    log_probs = L - (m + np.log(np.exp(L - m).sum(axis=1, keepdims=True)))
    P = np.exp(log_probs).sum(axis=0) / T
    elegidos = np.argsort(-L, axis=1, kind="stable")[:, :k]
    f = np.array([(elegidos == i).sum() for i in range(n)]) / T
    return float((f * P).sum() * n)
''',
    },
    "autoconsistencia": {
        "el arreglo mínimo: max por número de votos": '''
def autoconsistencia(respuestas):
    """La respuesta más votada (empate: la primera que apareció)."""
    if len(respuestas) == 0:
        raise ValueError("no hay respuestas")
    limpias = [r.strip() for r in respuestas]
    return max(limpias, key=limpias.count)  # max se queda con la primera de las empatadas
''',
        "diccionario y recorrido en orden": '''
def autoconsistencia(respuestas):
    if not respuestas:
        raise ValueError("sin respuestas")
    votos = {}
    for r in respuestas:
        votos[r.strip()] = votos.get(r.strip(), 0) + 1
    mejor = None
    for r in votos:  # los diccionarios guardan el orden de inserción
        if mejor is None or votos[r] > votos[mejor]:
            mejor = r
    return mejor
''',
        "max sobre las limpias con su primera posición": '''
def autoconsistencia(respuestas):
    limpias = [r.strip() for r in respuestas]
    if len(limpias) == 0:
        raise ValueError("lista vacía")
    return max(limpias, key=lambda r: (limpias.count(r), -limpias.index(r)))
''',
    },
    "extraer_respuesta": {
        "carácter a carácter, sin re": '''
def extraer_respuesta(texto):
    if not isinstance(texto, str):
        raise TypeError("texto debe ser un str")
    cifras = "0123456789"
    ultimo, i, n = None, 0, len(texto)
    while i < n:
        if texto[i] in cifras:
            inicio = i
            while i < n and texto[i] in cifras:
                i += 1
            valor = texto[inicio:i]
            if i + 1 < n and texto[i] in ".," and texto[i + 1] in cifras:
                j = i + 1
                while j < n and texto[j] in cifras:
                    j += 1
                valor += "." + texto[i + 1:j]
                i = j
            if inicio > 0 and texto[inicio - 1] in "-−":
                valor = "-" + valor
            ultimo = float(valor)
        else:
            i += 1
    return ultimo
''',
        "re.finditer con grupos y el último match": '''
import re as _re

_PATRON = _re.compile(r"(?P<signo>[\\-\\u2212])?(?P<entero>[0-9]+)(?:[.,](?P<dec>[0-9]+))?")


def extraer_respuesta(texto):
    if type(texto) is not str:
        raise TypeError(f"se esperaba un str, no {type(texto).__name__}")
    ultimo = None
    for m in _PATRON.finditer(texto):
        ultimo = m
    if ultimo is None:
        return None
    valor = float(ultimo["entero"] + ("." + ultimo["dec"] if ultimo["dec"] else ""))
    return -valor if ultimo["signo"] else valor
''',
    },
    "voto_razonado": {
        "diccionario de votos y primera aparición": '''
def voto_razonado(cadenas):
    votos, primera = {}, {}
    for i, cadena in enumerate(cadenas):
        r = extraer_respuesta(cadena)
        if r is None:
            continue
        votos[r] = votos.get(r, 0) + 1
        primera.setdefault(r, i)
    if not votos:
        raise ValueError("ninguna cadena responde con un número")
    mejor = min(votos, key=lambda r: (-votos[r], primera[r]))
    return (float(mejor), votos[mejor])
''',
        "usa el voto del ejercicio 8 sobre los textos de los números": '''
def voto_razonado(cadenas):
    respuestas = [extraer_respuesta(c) for c in cadenas]
    respuestas = [r for r in respuestas if r is not None]
    if len(respuestas) == 0:
        raise ValueError("no hay respuestas")
    ganadora = float(autoconsistencia([repr(r + 0.0) for r in respuestas]))  # + 0.0: -0.0 y 0.0 votan juntos
    return ganadora, sum(1 for r in respuestas if r == ganadora)
''',
    },
    "prob_mayoria": {
        "en float32, sumando del término mayor al menor": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1:
        raise ValueError("p")
    if not isinstance(M, int) or M < 1 or M % 2 == 0:
        raise ValueError("M")
    p32 = np.float32(p)
    terminos = [np.float32(math.comb(M, j)) * p32**j * (np.float32(1) - p32) ** (M - j)
                for j in range(M // 2 + 1, M + 1)]
    total = np.float32(0)
    for t in sorted(terminos, reverse=True):
        total = total + t
    return float(total)
''',
        "en float32, como 1 menos la cola con np.sum": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1:
        raise ValueError("p")
    if not isinstance(M, int) or M < 1 or M % 2 == 0:
        raise ValueError("M")
    j = np.arange(0, M // 2 + 1)
    comb = np.array([math.comb(M, int(i)) for i in j], dtype=np.float32)
    p32 = np.float32(p)
    cola = np.sum(comb * p32 ** j.astype(np.float32) * (np.float32(1) - p32) ** (M - j).astype(np.float32))
    return float(np.float32(1) - cola)
''',
        "1 menos la cola de los fallos": '''
def prob_mayoria(p, M):
    if p < 0 or p > 1 or math.isnan(p):
        raise ValueError("p")
    if type(M) is not int or M <= 0 or M % 2 != 1:
        raise ValueError("M")
    fallos = sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(0, M // 2 + 1))
    return float(1 - fallos) if 0 < p < 1 else float(p)
''',
        "recurrencia de coeficientes sin math.comb": '''
def prob_mayoria(p, M):
    if not (0.0 <= p <= 1.0):
        raise ValueError("p")
    if not isinstance(M, int) or M < 1 or M % 2 == 0:
        raise ValueError("M")
    c, total = 1.0, 0.0
    for j in range(M + 1):
        if j > M / 2:
            total += c * p**j * (1 - p) ** (M - j)
        c = c * (M - j) / (j + 1)
    return total
''',
    },
    "hora_de_empezar": {
        "datetime": '''
import datetime as _dt


def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):
    if antes < 0 or trayecto < 0 or preparacion < 0:
        raise ValueError("minutos negativos")
    t = _dt.datetime.strptime(reunion, "%H:%M") - _dt.timedelta(minutes=antes + trayecto + preparacion)
    return t.strftime("%H:%M")
''',
        "divmod paso a paso": '''
def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):
    h, m = (int(v) for v in reunion.split(":"))
    minutos = h * 60 + m
    for paso in (antes, trayecto, preparacion):
        if paso < 0:
            raise ValueError("negativo")
        minutos -= paso
    while minutos < 0:
        minutos += 24 * 60
    h, m = divmod(minutos, 60)
    return "%02d:%02d" % (h % 24, m)
''',
    },
    "similitud_coseno": {
        "el arreglo mínimo con raíces de productos escalares": '''
def similitud_coseno(v, t):
    """Similitud coseno entre dos vectores."""
    v = np.asarray(v, dtype=float)
    t = np.asarray(t, dtype=float)
    if v.shape != t.shape:
        raise ValueError("los vectores deben tener la misma longitud")
    if not v.any() or not t.any():
        raise ValueError("el vector cero no tiene dirección")
    return float(v @ t) / math.sqrt(float(v @ v) * float(t @ t))
''',
        "math y bucles": '''
def similitud_coseno(v, t):
    v, t = [float(a) for a in v], [float(b) for b in t]
    if len(v) != len(t):
        raise ValueError("longitudes distintas")
    nv = math.sqrt(sum(a * a for a in v))
    nt = math.sqrt(sum(b * b for b in t))
    if nv == 0.0 or nt == 0.0:
        raise ValueError("vector cero")
    return sum(a * b for a, b in zip(v, t)) / (nv * nt)
''',
        "normaliza primero (copias)": '''
def similitud_coseno(v, t):
    v = np.array(v, dtype=float)
    t = np.array(t, dtype=float)
    if v.shape != t.shape:
        raise ValueError("longitudes distintas")
    if not np.any(v) or not np.any(t):
        raise ValueError("vector cero")
    return float(np.dot(v / np.linalg.norm(v), t / np.linalg.norm(t)))
''',
    },
    "parchear": {
        "bucle doble": '''
def parchear(imagen, p=16):
    imagen = np.asarray(imagen, dtype=float)
    H, W, C = imagen.shape
    if H % p != 0 or W % p != 0:
        raise ValueError("p no divide la imagen")
    filas = []
    for f in range(H // p):
        for c in range(W // p):
            filas.append(imagen[f * p:(f + 1) * p, c * p:(c + 1) * p, :].reshape(-1))
    return np.array(filas)
''',
        "float32 con swapaxes": '''
def parchear(imagen, p=16):
    img = np.asarray(imagen, dtype=np.float32)
    H, W, C = img.shape
    if H % p or W % p:
        raise ValueError("p")
    return np.swapaxes(img.reshape(H // p, p, W // p, p, C), 1, 2).reshape(H // p * (W // p), -1)
''',
    },
    "recurrencia_lineal": {
        "lista de estados y np.stack": '''
def recurrencia_lineal(x, a):
    x = np.array(x, dtype=float)
    a = np.asarray(a, dtype=float)
    estados = []
    h = 0.0
    for fila in x:
        h = a * h + fila
        estados.append(np.copy(h))
    return np.stack(estados)
''',
        "forma cerrada con potencias": '''
def recurrencia_lineal(x, a):
    x = np.asarray(x, dtype=float)
    a = np.broadcast_to(np.asarray(a, dtype=float), x.shape[1:])
    n = x.shape[0]
    salida = np.empty(x.shape)
    for t in range(n):
        potencias = np.stack([a ** (t - s) for s in range(t + 1)])
        salida[t] = (potencias * x[: t + 1]).sum(axis=0)
    return salida
''',
    },
}


# ---------------------------------------------------------------- audit 2026-12: valid answers written from the statements

_AUDIT = {
    "enrutar": {
        "float32 throughout, top-k by repeated max": '''
def enrutar(x, W_r, k=2):
    x = np.asarray(x, dtype=np.float32)
    W_r = np.asarray(W_r, dtype=np.float32)
    if W_r.ndim != 2 or W_r.shape[1] != len(x) or not 1 <= k <= W_r.shape[0]:
        raise ValueError("formas o k")
    s = W_r @ x
    g = np.exp(s - np.max(s))
    g = g / np.sum(g)
    libres = list(range(len(g)))
    elegidos = []
    for _ in range(k):
        mejor = libres[0]
        for i in libres:
            if g[i] > g[mejor]:
                mejor = i
        elegidos.append(mejor)
        libres.remove(mejor)
    pesos = g[elegidos] / np.sum(g[elegidos])
    return np.array(elegidos), pesos
''',
    },
    "reparto_moe": {
        "S from the total equation": '''
def reparto_moe(total, activos, n_expertos, k):
    if n_expertos - k <= 0:
        raise ValueError("k")
    if total < activos:
        raise ValueError("activos")
    E = (total - activos) / (n_expertos - k)
    S = total - n_expertos * E
    if S < 0 and not math.isclose(S, 0.0, abs_tol=1e-6 * total):
        raise ValueError("S negativo")
    return (float(max(S, 0.0)), float(E))
''',
    },
    "carga_expertos": {
        "pure Python over lists": '''
def carga_expertos(logits_router, k):
    filas = [[float(v) for v in fila] for fila in logits_router]
    n = len(filas[0])
    cuentas = [0] * n
    for fila in filas:
        orden = sorted(range(n), key=lambda i: (-fila[i], i))
        for i in orden[:k]:
            cuentas[i] += 1
    return np.array([c / (len(filas) * k) for c in cuentas])
''',
    },
    "perdida_balanceo": {
        "float32 with the sums written as loops": '''
def perdida_balanceo(logits_router, k):
    L = np.asarray(logits_router, dtype=np.float32)
    T, n = L.shape
    P = np.zeros(n, dtype=np.float32)
    f = np.zeros(n, dtype=np.float32)
    for fila in L:
        e = np.exp(fila - fila.max())
        P += e / e.sum()
        for i in sorted(range(n), key=lambda i: (-fila[i], i))[:k]:
            f[i] += 1
    total = np.float32(0)
    for i in range(n):
        total += (f[i] / T) * (P[i] / T)
    return float(n * total)
''',
    },
    "prob_mayoria": {
        "float32, ascending j, terms from logs": '''
def prob_mayoria(p, M):
    if not (p >= 0 and p <= 1):
        raise ValueError("p")
    if not isinstance(M, int) or M <= 0 or M % 2 != 1:
        raise ValueError("M")
    if p == 0 or p == 1:
        return float(p)
    lp, lq = np.float32(math.log(p)), np.float32(math.log1p(-p))
    total = np.float32(0)
    for j in range(M // 2 + 1, M + 1):
        lc = np.float32(math.lgamma(M + 1) - math.lgamma(j + 1) - math.lgamma(M - j + 1))
        total += np.exp(lc + np.float32(j) * lp + np.float32(M - j) * lq)
    return float(total)
''',
        "float32 products, np.sum of the array": '''
def prob_mayoria(p, M):
    if not 0 <= p <= 1:
        raise ValueError("p")
    if not isinstance(M, int) or M < 1 or M % 2 == 0:
        raise ValueError("M")
    j = np.arange(M // 2 + 1, M + 1)
    c = np.array([math.comb(M, int(i)) for i in j], dtype=np.float32)
    p32 = np.float32(p)
    return float(np.sum(c * np.power(p32, j) * np.power(np.float32(1) - p32, M - j), dtype=np.float32))
''',
    },
    "hora_de_empezar": {
        "modulo after every step": '''
def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):
    if any(m < 0 for m in (antes, trayecto, preparacion)):
        raise ValueError("minutos negativos")
    h, m = reunion.split(":")
    minutos = int(h) * 60 + int(m)
    for paso in (antes, trayecto, preparacion):
        minutos = (minutos - paso) % 1440
    return "{:02d}:{:02d}".format(*divmod(minutos, 60))
''',
    },
    "recurrencia_lineal": {
        "lists in, pure Python loops": '''
def recurrencia_lineal(x, a):
    filas = [[float(v) for v in fila] for fila in np.asarray(x).tolist()]
    d = len(filas[0])
    coef = [float(a)] * d if np.ndim(a) == 0 else [float(v) for v in a]
    h = [0.0] * d
    salida = []
    for fila in filas:
        h = [coef[c] * h[c] + fila[c] for c in range(d)]
        salida.append(h)
    return np.array(salida, dtype=float)
''',
    },
    "parchear": {
        "patches gathered with np.stack of slices": '''
def parchear(imagen, p=16):
    img = np.array(imagen, dtype=np.float64)
    H, W, C = img.shape
    if H % p != 0 or W % p != 0:
        raise ValueError("p")
    return np.stack([img[f:f + p, c:c + p].ravel() for f in range(0, H, p) for c in range(0, W, p)])
''',
    },
}
for _answer, _by_name in _AUDIT.items():
    ALTERNATIVES[_answer].update(_by_name)
