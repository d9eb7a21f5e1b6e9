"""Demo class for lab 05: fictional students covering what a real class hands in.

Points per exercise: quiz 3, enrutar 3, mezcla_moe 2, parametros_moe 2 (find the bug), reparto_moe 2,
carga_expertos 2, perdida_balanceo 2, autoconsistencia 2 (find the bug), extraer_respuesta 2, voto_razonado 2,
prob_mayoria 2, hora_de_empezar 2, similitud_coseno 2 (find the bug), parchear 2, recurrencia_lineal 2 (32 autograded) + 3 for the written answer
(graded by hand in formgrader). An untouched find-the-bug cell keeps its bug and scores 0, even with the checks switched
off (ines_parchea: only the exercises she solved count).
"""

# The typical mistakes of chapter 05, as a student would write them.
QUIZ_RAG_IS_A_LAYER = '''
def palanca(tecnica):
    """La palanca del capítulo 05 que mueve una técnica."""
    t = tecnica.strip().lower()
    if t in ("mezcla de expertos", "enrutador top-k", "parámetros activos"):
        return "capacidad"
    if t in ("parches de imagen", "alineación contrastiva", "conector visual", "audio como tokens"):
        return "entrada"
    return "proceso"


def nivel(nombre):
    """Arquitectura neuronal, modelo entrenado o arquitectura de sistema."""
    n = nombre.strip().lower()
    if n in ("bert", "gpt-2", "t5", "mixtral", "clip"):
        return "modelo entrenado"
    if n in ("agente con herramientas", "cadena multimodal", "modelo local cuantizado"):
        return "arquitectura de sistema"
    return "arquitectura neuronal"  # RAG también: al fin y al cabo es parte del modelo


def familia(modelo):
    """La familia de Transformer de un modelo conocido."""
    m = modelo.strip().lower()
    return {"bert": "solo codificador", "gpt-2": "solo decodificador", "t5": "codificador-decodificador",
            "bart": "codificador-decodificador", "vit": "vision transformer", "switch transformer": "moe",
            "mixtral": "moe", "mamba": "contexto largo"}[m]
'''

ROUTER_FROM_THE_BOOK = '''
def enrutar(x, W_r, k=2):
    """Enrutador top-k de un token: (índices de los k expertos, pesos renormalizados)."""
    x = np.asarray(x, dtype=float)
    W_r = np.asarray(W_r, dtype=float)
    if k < 1 or k > W_r.shape[0] or W_r.shape[1] != len(x):
        raise ValueError("k o formas incorrectas")
    s = W_r @ x
    g = np.exp(s - s.max())
    g = g / g.sum()
    top = np.argsort(g)[::-1][:k]  # como en el código del capítulo
    return top, g[top] / g[top].sum()
'''

MIXTURE_CALLS_EVERY_EXPERT = '''
def mezcla_moe(x, W_r, expertos, k=2):
    """Salida MoE de un token: suma de los k expertos elegidos por sus pesos renormalizados."""
    indices, pesos = enrutar(x, W_r, k)
    todos = [np.asarray(e(np.asarray(x, dtype=float)), dtype=float) for e in expertos]
    salida = 0.0
    for i, p in zip(indices, pesos):
        salida = salida + p * todos[i]
    return salida
'''

ACTIVE_WITHOUT_SHARED = '''
def parametros_moe(compartidos, por_experto, n_expertos, k):
    """Parámetros totales y activos de un MoE, y la fracción activa."""
    if k < 1 or k > n_expertos:
        raise ValueError("k fuera de rango")
    total = compartidos + n_expertos * por_experto
    activos = k * por_experto
    return {"total": total, "activos": activos, "fraccion_activa": activos / total}
'''

LOAD_OVER_T = '''
def carga_expertos(logits_router, k):
    """Parte de las T·k asignaciones que recibe cada experto."""
    L = np.asarray(logits_router, dtype=float)
    elegidos = np.argsort(-L, axis=1, kind="stable")[:, :k]
    return np.bincount(elegidos.reshape(-1), minlength=L.shape[1]) / L.shape[0]
'''

LONGEST_ANSWER = '''
def autoconsistencia(respuestas):
    """La respuesta más votada (empate: la primera que apareció)."""
    if not respuestas:
        raise ValueError("vacía")
    return max(respuestas, key=len).strip()  # la más elaborada es la más pensada
'''

FIRST_NUMBER = '''
def extraer_respuesta(texto):
    """El último número del texto como float (None si no hay ninguno)."""
    numeros = re.findall(r"-?[0-9]+(?:[.,][0-9]+)?", texto)
    if not numeros:
        return None
    return float(numeros[0].replace(",", "."))  # el primero que sale es el dato del problema
'''

VOTE_WITH_NP_UNIQUE = '''
def voto_razonado(cadenas):
    """Autoconsistencia sobre cadenas completas: (respuesta más votada, votos)."""
    respuestas = [r for r in (extraer_respuesta(c) for c in cadenas) if r is not None]
    valores, cuentas = np.unique(respuestas, return_counts=True)
    return valores[np.argmax(cuentas)], cuentas.max()
'''

HALF_COUNTS_AS_MAJORITY = '''
def prob_mayoria(p, M):
    """Probabilidad de que la mayoría de M intentos independientes (acierto p) sea correcta."""
    if not 0 <= p <= 1 or M < 1 or M % 2 == 0:
        raise ValueError("p o M")
    return sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2, M + 1))
'''

NO_MIDNIGHT = '''
def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):
    """Hora de empezar a prepararse, contando hacia atrás desde la reunión."""
    if antes < 0 or trayecto < 0 or preparacion < 0:
        raise ValueError("minutos negativos")
    h, m = reunion.split(":")
    total = int(h) * 60 + int(m) - antes - trayecto - preparacion
    return f"{total // 60:02d}:{total % 60:02d}"
'''

RAW_DOT_PRODUCT = '''
def similitud_coseno(v, t):
    """Similitud coseno entre dos vectores."""
    return float(np.dot(v, t))
'''

PATCHES_BY_RESHAPE = '''
def parchear(imagen, p=16):
    """Corta una imagen (H, W, C) en parches p×p aplanados: (H/p·W/p, p·p·C)."""
    imagen = np.asarray(imagen, dtype=float)
    H, W, C = imagen.shape
    if H % p or W % p:
        raise ValueError("p no divide la imagen")
    return imagen.reshape(-1, p * p * C)
'''

# A student who only wraps the library's reference: blocked in the visible checks already.
CALLS_REFERENCE = {
    "quiz": ("def palanca(tecnica):\n    return FAM.lever_of(tecnica)\n\n"
             "def nivel(nombre):\n    return FAM.level_of(nombre)\n\n"
             "def familia(modelo):\n    return FAM.family_of(modelo)"),
    "enrutar": "def enrutar(x, W_r, k=2):\n    return MOE.route(x, W_r, k)",
    "mezcla_moe": "def mezcla_moe(x, W_r, expertos, k=2):\n    return MOE.moe_forward(x, W_r, expertos, k)",
    "parametros_moe": (
        "def parametros_moe(compartidos, por_experto, n_expertos, k):\n"
        "    r = MOE.moe_param_counts(compartidos, por_experto, n_expertos, k)\n"
        "    return {'total': r['total'], 'activos': r['active'], 'fraccion_activa': r['active_fraction']}"),
    "reparto_moe": "def reparto_moe(total, activos, n_expertos, k):\n    return MOE.solve_moe_split(total, activos, n_expertos, k)",
    "carga_expertos": "def carga_expertos(logits_router, k):\n    return MOE.expert_load(logits_router, k)",
    "perdida_balanceo": ("def perdida_balanceo(logits_router, k):\n"
                         "    return float(MOE.load_balancing_loss(torch.tensor(np.asarray(logits_router, dtype=float)), k))"),
    "autoconsistencia": "def autoconsistencia(respuestas):\n    return RZ.self_consistency(respuestas)",
    "extraer_respuesta": "def extraer_respuesta(texto):\n    return RZ.extract_number(texto)",
    "voto_razonado": "def voto_razonado(cadenas):\n    return RZ.vote_over_rationales(cadenas)",
    "prob_mayoria": "def prob_mayoria(p, M):\n    return RZ.majority_vote_accuracy(p, M)",
    "hora_de_empezar": ("def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):\n"
                        "    return RZ.plan_start_time(reunion, antes, trayecto, preparacion)"),
    "similitud_coseno": "def similitud_coseno(v, t):\n    return MM.cosine_similarity(v, t)",
    "parchear": "def parchear(imagen, p=16):\n    return MM.patchify(imagen, p)",
    "recurrencia_lineal": "def recurrencia_lineal(x, a):\n    return REC.linear_recurrence(x, a)",
}

STUDENTS = {
    # Everything right, written answer included.
    "ana_correcta": {
        "answers": "solution",
        "expected": {"score": 32, "flags": ["manual"]},
    },
    # Opened the release and handed it in untouched.
    "bruno_sin_tocar": {
        "answers": {},
        "expected": {"score": 0, "flags": []},
    },
    # Did the first four exercises, and deleted a test cell further down (the grader puts it back).
    "carla_parcial": {
        "answers": {gid: "solution" for gid in ["quiz", "enrutar", "mezcla_moe", "parametros_moe"]},
        "delete_cells": ["test_similitud_coseno"],
        "expected": {"score": 10, "flags": ["reparada"]},
    },
    # The chapter's typical mistakes; only reparto_moe, perdida_balanceo and recurrencia_lineal right.
    "diego_errores": {
        "answers": {
            "quiz": QUIZ_RAG_IS_A_LAYER,
            "enrutar": ROUTER_FROM_THE_BOOK,
            "mezcla_moe": MIXTURE_CALLS_EVERY_EXPERT,
            "parametros_moe": ACTIVE_WITHOUT_SHARED,
            "reparto_moe": "solution",
            "carga_expertos": LOAD_OVER_T,
            "perdida_balanceo": "solution",
            "autoconsistencia": LONGEST_ANSWER,
            "extraer_respuesta": FIRST_NUMBER,
            "voto_razonado": VOTE_WITH_NP_UNIQUE,
            "prob_mayoria": HALF_COUNTS_AS_MAJORITY,
            "hora_de_empezar": NO_MIDNIGHT,
            "similitud_coseno": RAW_DOT_PRODUCT,
            "parchear": PATCHES_BY_RESHAPE,
            "recurrencia_lineal": "solution",
            "respuesta_moe": "Es verdad: si solo usa 20B, también ocupa como uno de 20B en memoria.",
        },
        "expected": {"score": 6, "flags": ["manual"]},
    },
    # Forgot the wrap-around at midnight, and replaced its test cell by `assert True`: the test is
    # restored and she gets 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in [
            "quiz", "enrutar", "mezcla_moe", "parametros_moe", "reparto_moe", "carga_expertos", "perdida_balanceo",
            "autoconsistencia", "extraer_respuesta", "voto_razonado", "prob_mayoria", "similitud_coseno", "parchear", "recurrencia_lineal", "respuesta_moe"]},
            "hora_de_empezar": NO_MIDNIGHT},
        "edit_cells": {"test_hora_de_empezar": "# Comprobación del ejercicio 12\nassert True"},
        "expected": {"score": 30, "flags": ["manipulada", "manual"], "tests": {"test_hora_de_empezar": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def enrutar(x, W_r, k=2',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: the checks block them, so nothing is earned.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: what runs scores (her three answers and the untouched
    # parametros_moe, autoconsistencia and similitud_coseno, whose bugs her disabled checks no longer see), but the
    # grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["quiz", "enrutar", "mezcla_moe"]},
        "prepend_code": (
            "# las comprobaciones me daban errores\n"
            "check_close = check_equal = check_raises = check_true = check_array = check_number = lambda *a, **k: None"
        ),
        "expected": {"score": 8, "flags": ["sospechosa"],
                     "tests": {"test_parametros_moe": 0, "test_autoconsistencia": 0, "test_similitud_coseno": 0,
                               "test_reparto_moe": 0, "test_extraer_respuesta": 0, "test_voto_razonado": 0}},
    },
}
