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
# **Capítulo 01** de *Facsímil 03 · Arquitecturas y modelos* · duración estimada: **2 horas**
#
# Un modelo de lenguaje grande no guarda frases ni consulta una base de datos: calcula, una y otra vez,
# una distribución de probabilidad sobre cuál será la siguiente pieza de texto. En este laboratorio vas a
# construir con tus propias manos las cuentas que hay detrás de esa frase y las que deciden si un modelo
# cabe o no en tu máquina.
#
# **Al terminar sabrás:**
#
# 1. convertir *logits* en probabilidades con una softmax estable y entender qué hace la temperatura;
# 2. medir lo bien que un modelo predice un texto con la pérdida (NLL) y la perplejidad;
# 3. contar los parámetros de una capa lineal y estimar los de un Transformer completo (12·L·d²);
# 4. calcular cuánta memoria ocupan los pesos en FP16, INT8 y 4 bits, en GB y en GiB;
# 5. calcular el tamaño de la caché KV y decidir si un modelo de 7B cabe en una GPU de 8 GB.
#
# **Cómo se trabaja.** Las celdas marcadas con `ESCRIBE TU CÓDIGO AQUÍ` son tuyas. Justo debajo de cada
# una hay una celda de comprobación: ejecútala y te dirá, en español, qué está bien y qué no. Al corregir
# se añaden pruebas ocultas con otros casos, así que no basta con acertar los ejemplos visibles: tu
# función tiene que hacer lo que pide el enunciado. No edites las celdas de comprobación (se restauran al
# corregir) y no llames a la versión de `llmlab` del mismo cálculo: el objetivo es que lo escribas tú.

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

from llmlab import cost as C
from llmlab import functional as F
from llmlab import metrics as M
from llmlab.checks import (
    check_close, check_equal, check_raises, check_true, check_type, hidden, ok, reference_blocked, show_caught,
)
from llmlab.checks import EjercicioSinHacer  # lo que lanza un ejercicio que aún no has hecho

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
# Dale a un modelo el texto `La capital de Francia es` y no te devolverá "la respuesta": te devolverá una
# puntuación para **cada** token de su vocabulario (decenas de miles). Esas puntuaciones se llaman
# **logits**. Después, una función las convierte en probabilidades y una regla de decodificación elige un
# token. El token elegido se pega al final del texto y se repite el proceso. Eso es todo lo que significa
# *autorregresivo*: cada paso usa lo que el propio modelo ha escrito antes.
#
# Vamos a verlo con un "modelo" de juguete que solo conoce tres continuaciones posibles. Sus logits son los
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
plt.bar(posiciones + 0.2, frecuencias, width=0.4, label=f"frecuencia en {N_MUESTRAS} muestras")
plt.xticks(posiciones, tokens)
plt.ylabel("proporción")
plt.title("«La capital de Francia es …»")
plt.legend()
plt.show()
print("frecuencias observadas:", dict(zip(tokens, np.round(frecuencias, 3))))

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
# entrada y los de salida.
#
# ## 2. De logits a probabilidades: la softmax
#
# La función que convierte logits `z` en probabilidades es la **softmax**:
#
# $$P(x_i \mid c) = \frac{e^{z_i / T}}{\sum_{j=1}^{V} e^{z_j / T}}$$
#
# donde `V` es el tamaño del vocabulario y `T` la **temperatura**. Con `T = 1` es la softmax de siempre. Con
# `T < 1` las diferencias entre logits se agrandan y la distribución se vuelve más puntiaguda; con `T > 1`
# se aplana y el modelo se vuelve más variado (y más arriesgado).
#
# Hay una trampa numérica: `e^1000` no cabe en un `float64` y da `inf`. Como la softmax no cambia si a todos
# los logits les restas la misma cantidad, se resta el máximo antes de exponenciar; así el mayor exponente
# es `e^0 = 1` y nada desborda.
#
# ### Ejercicio 1 · `softmax` (2 puntos)
#
# Escribe `softmax(logits, temperature=1.0)`:
#
# - acepta una lista o un array de NumPy de cualquier forma y normaliza **a lo largo del último eje**;
# - divide los logits por la temperatura **antes** de exponenciar;
# - es estable: `softmax([1000, 999, 998])` no puede dar `nan`;
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


# %% nbgrader={"grade_id": "test_softmax", "grade": true, "points": 2}
# Comprobación del ejercicio 1
p = softmax([5.0, 2.0, 0.0])
check_close(p, [0.946499, 0.047123, 0.006377], atol=1e-6, what="softmax([5, 2, 0])",
            hint="divide cada exponencial por la suma de todas")
check_close(float(np.sum(p)), 1.0, atol=1e-9, what="la suma de las probabilidades")
check_close(softmax([1000.0, 999.0, 998.0]), [0.665241, 0.244728, 0.090031], atol=1e-6,
            what="softmax([1000, 999, 998])", hint="resta el máximo antes de llamar a np.exp")
check_close(softmax([5.0, 2.0, 0.0], temperature=2.0), [0.766157, 0.170953, 0.062890], atol=1e-6,
            what="softmax([5, 2, 0], temperature=2)", hint="la temperatura divide los logits")
check_raises(lambda: softmax([1.0, 2.0], temperature=0), ValueError, what="softmax con temperature=0")
ok("softmax reproduce los números del capítulo")
### BEGIN HIDDEN TESTS
with hidden("softmax: casos aleatorios, temperaturas y forma"):
    rng_t = np.random.default_rng(101)
    for _ in range(25):
        z = rng_t.normal(0, 8, size=int(rng_t.integers(2, 40)))
        t = float(rng_t.uniform(0.05, 5.0))
        esperado = F.softmax(z, temperature=t)
        with reference_blocked(F.softmax):
            obtenido = softmax(z, temperature=t)
        check_close(obtenido, esperado, atol=1e-9)
    z = rng_t.normal(0, 3, size=(4, 7))
    esperado = F.softmax(z)
    with reference_blocked(F.softmax):
        obtenido = softmax(z)
    check_close(obtenido, esperado, atol=1e-9)  # cada fila suma 1: último eje
    with reference_blocked(F.softmax):
        check_close(softmax(np.array([[1e4, 0.0], [0.0, -1e4]])), [[1.0, 0.0], [1.0, 0.0]], atol=1e-12)
        check_close(softmax([3.0, 3.0, 3.0, 3.0]), [0.25] * 4, atol=1e-12)
        check_close(softmax([2.0, 1.0]) , softmax([102.0, 101.0]), atol=1e-12)  # invariante a desplazamientos
        check_raises(lambda: softmax([1.0, 2.0], temperature=-1.0), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### La temperatura, en una figura
#
# Con los mismos logits `[5, 2, 0]`, la temperatura lo cambia todo. A `T = 0.5` el modelo es casi
# determinista (99.7 % para `París`); a `T = 2` `Lyon` ya ronda el 17 %.

# %%
temperaturas = [0.5, 1.0, 2.0]
ancho = 0.27
for k, t in enumerate(temperaturas):
    p_t = F.softmax(logits, temperature=t)
    plt.bar(posiciones + (k - 1) * ancho, p_t, width=ancho, label=f"T = {t}")
    print(f"T = {t}:", np.round(p_t, 6))
plt.xticks(posiciones, tokens)
plt.ylabel("probabilidad")
plt.title("Mismos logits, distinta temperatura")
plt.legend()
plt.show()

# %% [markdown]
# ## 3. La pérdida: cuánto se sorprende el modelo
#
# Un modelo de lenguaje asigna probabilidad a una secuencia entera con la **regla de la cadena**:
#
# $$P(x_1, \dots, x_T) = \prod_{t=1}^{T} P(x_t \mid x_{<t}; \theta)$$
#
# Entrenar es ajustar los parámetros `θ` para que el texto real reciba probabilidad alta. En la práctica se
# minimiza la **log-verosimilitud negativa** (NLL), que convierte el producto en una suma:
#
# $$L(\theta) = -\sum_{t=1}^{T} \log P_\theta(x_t \mid x_{<t})$$
#
# Cada término `-log p` es la *sorpresa* del modelo ante el token correcto: 0 si lo daba por seguro
# (`p = 1`), enorme si le daba una probabilidad minúscula. Con logaritmo natural se mide en *nats*; con base
# 2, en *bits*.
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
# ### Ejercicio 2 · `nll` (2 puntos)
#
# Escribe `nll(probs, reduction="sum")`, que recibe las probabilidades que el modelo dio a cada token
# correcto y devuelve un `float`:
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


# %% nbgrader={"grade_id": "test_nll", "grade": true, "points": 2}
# Comprobación del ejercicio 2
check_close(nll([0.5, 0.25, 0.8]), 2.302585, atol=1e-6, what="nll de «la casa azul»",
            hint="suma -ln(p) con logaritmo natural (np.log)")
check_close(nll([0.5, 0.25, 0.8], reduction="mean"), 0.767528, atol=1e-6, what="nll media de «la casa azul»")
check_close(nll([1.0, 1.0]), 0.0, atol=1e-12, what="nll de tokens seguros (p = 1)")
check_type(nll([0.5]), float, what="nll([0.5])")
check_raises(lambda: nll([0.5, 0.0]), ValueError, what="nll con una probabilidad 0")
check_raises(lambda: nll([0.5, 1.2]), ValueError, what="nll con una probabilidad mayor que 1")
ok("nll reproduce la pérdida de «la casa azul»")
### BEGIN HIDDEN TESTS
with hidden("nll: casos aleatorios, reducción y validación"):
    rng_t = np.random.default_rng(202)
    for _ in range(20):
        q = rng_t.uniform(1e-6, 1.0, size=int(rng_t.integers(1, 60)))
        for red in ("sum", "mean"):
            esperado = M.nll(q, reduction=red)
            with reference_blocked(M.nll, M.perplexity, M.sequence_log_prob):
                obtenido = nll(q, reduction=red)
            check_close(obtenido, esperado, atol=1e-9, rtol=1e-12)
    with reference_blocked(M.nll):
        check_close(nll([0.8, 0.6, 0.95]), 0.785262, atol=1e-6)
        check_raises(lambda: nll([0.5], reduction="max"), ValueError)
        check_raises(lambda: nll([-0.1]), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Ejercicio 3 · `sequence_log_prob` (1 punto)
#
# La probabilidad conjunta de una secuencia larga es un número ridículamente pequeño. Mil tokens con
# `p = 0.01` cada uno dan `10^-2000`, que en `float64` es exactamente `0.0`. Su logaritmo, en cambio, es un
# número normal: `-4605.17`.
#
# Escribe `sequence_log_prob(cond_probs)`, que devuelve `ln P(x_1, …, x_T)` (un `float`, en nats) a partir
# de las probabilidades condicionadas de cada token, **sin** multiplicar las probabilidades entre sí.

# %% nbgrader={"grade_id": "sequence_log_prob", "solution": true}
def sequence_log_prob(cond_probs):
    """ln P(secuencia) = suma de ln P(x_t | x_<t), calculada en espacio logarítmico."""
    ### BEGIN SOLUTION
    p = np.asarray(cond_probs, dtype=float)
    return float(np.sum(np.log(p)))
    ### END SOLUTION


# %% nbgrader={"grade_id": "test_sequence_log_prob", "grade": true, "points": 1}
# Comprobación del ejercicio 3
check_close(sequence_log_prob([0.5, 0.25, 0.8]), math.log(0.1), atol=1e-9,
            what="ln P(«la casa azul»)", hint="la probabilidad conjunta es 0.1")
check_close(sequence_log_prob([0.01] * 1000), -4605.170186, atol=1e-4,
            what="1000 tokens con p = 0.01", hint="si multiplicas primero, el producto se queda en 0.0")
ok("la regla de la cadena en espacio logarítmico funciona")
### BEGIN HIDDEN TESTS
with hidden("sequence_log_prob: secuencias largas y aleatorias"):
    rng_t = np.random.default_rng(303)
    for n in (1, 5, 400, 5000):
        q = rng_t.uniform(1e-4, 1.0, size=n)
        esperado = M.sequence_log_prob(q)
        with reference_blocked(M.sequence_log_prob, M.nll):
            obtenido = sequence_log_prob(q)
        check_close(obtenido, esperado, atol=1e-6, rtol=1e-12)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. De la pérdida a la perplejidad
#
# La pérdida total crece con la longitud del texto, así que para comparar modelos se usa la pérdida **media**
# y, sobre todo, su exponencial, la **perplejidad**:
#
# $$\mathrm{PPL} = e^{L/T}$$
#
# Se lee como "entre cuántas opciones igual de probables duda el modelo en cada token". Para «la casa azul»,
# `PPL = e^{0.7675} ≈ 2.154`: como si en cada paso eligiera entre algo más de dos opciones. Una perplejidad
# de 1 significa certeza total; una de 50, tanta duda como ante 50 tokens equiprobables.
#
# ### Ejercicio 4 · `perplexity` (2 puntos)
#
# Escribe `perplexity(probs)`: la perplejidad (un `float`) a partir de las probabilidades de los tokens
# correctos. Cuidado con el error más común del capítulo: exponenciar la pérdida **total** en vez de la media.

# %% nbgrader={"grade_id": "perplexity", "solution": true}
def perplexity(probs):
    """exp(pérdida media por token)."""
    ### BEGIN SOLUTION
    p = np.asarray(probs, dtype=float).reshape(-1)
    return float(np.exp(-np.log(p).mean()))
    ### END SOLUTION


# %% nbgrader={"grade_id": "test_perplexity", "grade": true, "points": 2}
# Comprobación del ejercicio 4
check_close(perplexity([0.5, 0.25, 0.8]), 2.154435, atol=1e-6, what="perplejidad de «la casa azul»",
            hint="exp de la pérdida MEDIA, no de la total (que daría 10)")
check_close(perplexity([1.0, 1.0, 1.0]), 1.0, atol=1e-12, what="perplejidad con certeza total")
check_close(perplexity([1 / 50] * 50), 50.0, atol=1e-9, what="50 tokens equiprobables")
check_close(perplexity([0.8, 0.6, 0.95]), 1.299207, atol=1e-6, what="perplejidad tras entrenar")
ok("la perplejidad de «la casa azul» es 2.154")
### BEGIN HIDDEN TESTS
with hidden("perplexity: casos aleatorios"):
    rng_t = np.random.default_rng(404)
    for _ in range(20):
        q = rng_t.uniform(1e-3, 1.0, size=int(rng_t.integers(1, 80)))
        esperado = M.perplexity(q)
        with reference_blocked(M.perplexity, M.perplexity_from_loss, M.nll):
            obtenido = perplexity(q)
        check_close(obtenido, esperado, atol=1e-9, rtol=1e-9)
    with reference_blocked(M.perplexity):
        check_close(perplexity([0.25, 0.25]), 4.0, atol=1e-12)
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
print("sorpresas (nats):", np.round(sorpresas, 3), " en bits:", np.round(M.surprisal(probs_frase, base=2), 3))

# %% [markdown]
# ## 5. Parámetros: lo que el modelo aprende
#
# Un parámetro es un número de una transformación, no una frase guardada. La pieza básica es la capa
# lineal `y = xW + b`: con una entrada de dimensión `d_in` y una salida de dimensión `d_out`, la matriz `W`
# tiene `d_in · d_out` números y el sesgo `b` otros `d_out`.
#
# ### Ejercicio 5 · `linear_param_count` (1 punto)
#
# Escribe `linear_param_count(d_in, d_out, bias=True)`, que devuelve un `int` con el número de parámetros de
# la capa (sin sesgo si `bias=False`). El ejemplo del capítulo: de 4 a 3 dimensiones hay 15 parámetros.

# %% nbgrader={"grade_id": "linear_param_count", "solution": true}
def linear_param_count(d_in, d_out, bias=True):
    """Parámetros de una capa lineal d_in -> d_out."""
    ### BEGIN SOLUTION
    return int(d_in * d_out + (d_out if bias else 0))
    ### END SOLUTION


# %% nbgrader={"grade_id": "test_linear_param_count", "grade": true, "points": 1}
# Comprobación del ejercicio 5
check_equal(linear_param_count(4, 3), 15, what="parámetros de una capa 4 → 3",
            hint="12 pesos de W más 3 sesgos")
check_equal(linear_param_count(4, 3, bias=False), 12, what="la misma capa sin sesgo")
check_type(linear_param_count(4, 3), int, what="linear_param_count(4, 3)")
ok("una capa 4 → 3 tiene 15 parámetros")
### BEGIN HIDDEN TESTS
with hidden("linear_param_count: otras dimensiones"):
    for d_in, d_out in [(1, 1), (768, 3072), (4096, 4096), (7, 2)]:
        for b in (True, False):
            esperado = C.linear_param_count(d_in, d_out, bias=b)
            with reference_blocked(C.linear_param_count):
                check_equal(linear_param_count(d_in, d_out, bias=b), esperado)
### END HIDDEN TESTS

# %% [markdown]
# ### De una capa a un Transformer entero
#
# Cada bloque de un Transformer tiene cuatro proyecciones de atención (Q, K, V y la de salida), cada una de
# `d × d`: `4d²`. Y un MLP que ensancha de `d` a `4d` y vuelve: `d·4d + 4d·d = 8d²`. En total, unos `12d²`
# por bloque; con `L` bloques,
#
# $$N \approx 12 \cdot L \cdot d^2$$
#
# La cuenta ignora embeddings, normalizaciones y sesgos, pero acierta el orden de magnitud.
#
# ### Ejercicio 6 · `transformer_param_estimate` (1 punto)
#
# Escribe `transformer_param_estimate(n_layers, d_model)`, que devuelve (como `int`) la estimación `12·L·d²`.

# %% nbgrader={"grade_id": "transformer_param_estimate", "solution": true}
def transformer_param_estimate(n_layers, d_model):
    """Estimación 12·L·d² de los parámetros de los bloques de un Transformer."""
    ### BEGIN SOLUTION
    return int(12 * n_layers * d_model**2)
    ### END SOLUTION


# %% nbgrader={"grade_id": "test_transformer_param_estimate", "grade": true, "points": 1}
# Comprobación del ejercicio 6
check_equal(transformer_param_estimate(32, 4096), 6_442_450_944, what="12·L·d² con L = 32 y d = 4096",
            hint="¿elevaste d al cuadrado?")
check_type(transformer_param_estimate(32, 4096), int, what="el resultado")
print(f"Un modelo «tipo 7B» (32 capas, d = 4096): ~{transformer_param_estimate(32, 4096) / 1e9:.1f} mil millones")
ok("12·L·d² reproduce los ~6.4 B del capítulo")
### BEGIN HIDDEN TESTS
with hidden("transformer_param_estimate: otras formas"):
    for n_layers, d_model in [(1, 1), (12, 768), (80, 8192), (3, 5)]:
        esperado = C.transformer_param_estimate(n_layers, d_model)
        with reference_blocked(C.transformer_param_estimate):
            check_equal(transformer_param_estimate(n_layers, d_model), esperado)
### END HIDDEN TESTS

# %% [markdown]
# Los ~0.6 mil millones que faltan hasta 7B son, sobre todo, la tabla de embeddings del vocabulario. Y de los
# `12d²` de cada bloque, el MLP se lleva `8d²`: **dos tercios** de los parámetros viven en el MLP.

# %%
reparto = C.param_breakdown(32, 4096)
print({k: f"{v:,}" for k, v in reparto.items()})
print(f"fracción del MLP en cada bloque: {reparto['mlp'] / reparto['per_layer']:.4f}")

# %% [markdown]
# ## 6. Cuánto pesa un modelo
#
# La memoria de los pesos es el número de parámetros por los bytes de cada uno: `M ≈ N · B`. En FP16 cada
# parámetro ocupa 2 bytes; en INT8, 1; en 4 bits, medio byte.
#
# Ojo con las unidades: un **GB** son `10^9` bytes (lo que anuncian los fabricantes de discos) y un **GiB**
# son `2^30 = 1 073 741 824` bytes (lo que suelen mostrar los sistemas operativos y muchas herramientas de GPU).
# 14 GB son solo 13.04 GiB: confundirlos es un 7 % de error que aparece justo cuando vas al límite.
#
# ### Ejercicio 7 · `weight_memory` (2 puntos)
#
# Escribe `weight_memory(n_params, dtype="fp16")`, que devuelve la tupla `(GB, GiB)` de floats con la memoria
# de los pesos. Admite al menos estos formatos: `"fp32"` (4 bytes), `"fp16"` y `"bf16"` (2), `"int8"` (1) y
# `"4bit"` (0.5). Cualquier otro nombre lanza `ValueError`.

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


# %% nbgrader={"grade_id": "test_weight_memory", "grade": true, "points": 2}
# Comprobación del ejercicio 7
for formato, gb, gib in [("fp16", 14.0, 13.038516), ("int8", 7.0, 6.519258), ("4bit", 3.5, 3.259629)]:
    check_close(weight_memory(7e9, formato), (gb, gib), atol=1e-6, what=f"7B en {formato} (GB, GiB)",
                hint="GB = 1e9 bytes y GiB = 2**30 bytes")
    print(f"{formato.upper()}: {gb:.1f} GB decimales / {gib:.1f} GiB binarios")
check_raises(lambda: weight_memory(7e9, "fp12"), ValueError, what="un formato desconocido")
ok("la memoria de los pesos coincide con la tabla del capítulo")
### BEGIN HIDDEN TESTS
with hidden("weight_memory: otros tamaños y formatos"):
    for n in (1, 124_439_808, 70e9):
        for formato in ("fp32", "fp16", "bf16", "int8", "4bit"):
            esperado = C.weight_memory(n, formato)
            with reference_blocked(C.weight_memory):
                check_close(weight_memory(n, formato), esperado, atol=1e-9, rtol=1e-12)
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
# ## 7. El contexto también pesa: la caché KV
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
# ### Ejercicio 8 · `kv_cache_bytes` (2 puntos)
#
# Escribe `kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None)`,
# que devuelve un `int` con los bytes de la caché. Si se dan `n_heads` y `n_kv_heads`, la caché se multiplica
# por `n_kv_heads / n_heads`.

# %% nbgrader={"grade_id": "kv_cache_bytes", "solution": true}
def kv_cache_bytes(n_layers, n_ctx, d_model, bytes_per_value=2, batch=1, n_heads=None, n_kv_heads=None):
    """Bytes de la caché KV: 2 · L · n · d · B · lote, reducida por GQA/MQA."""
    ### BEGIN SOLUTION
    total = 2 * n_layers * n_ctx * d_model * bytes_per_value * batch
    if n_heads is not None and n_kv_heads is not None:
        total = total * n_kv_heads // n_heads
    return int(total)
    ### END SOLUTION


# %% nbgrader={"grade_id": "test_kv_cache_bytes", "grade": true, "points": 2}
# Comprobación del ejercicio 8
kv = kv_cache_bytes(32, 4096, 4096)
check_equal(kv, 2_147_483_648, what="caché KV de 32 capas, 4096 tokens, d = 4096, FP16",
            hint="no olvides el factor 2 (K y V) ni los bytes por valor")
print(f"{kv:,} bytes = {kv / 2**30:.0f} GiB = {kv / 1e9:.3f} GB")
check_equal(kv_cache_bytes(32, 8192, 4096), 2 * kv, what="el doble de contexto")
check_equal(kv_cache_bytes(32, 4096, 4096, batch=3), 3 * kv, what="un lote de 3")
check_equal(kv_cache_bytes(32, 4096, 4096, n_heads=32, n_kv_heads=8), 536_870_912, what="GQA con 8 cabezas KV")
ok("la caché KV del capítulo ocupa exactamente 2 GiB")
### BEGIN HIDDEN TESTS
with hidden("kv_cache_bytes: otras configuraciones"):
    casos = [(1, 1, 1, 2, 1, None, None), (80, 1000, 8192, 2, 4, 64, 8), (32, 128_000, 4096, 1, 1, 32, 1),
             (12, 1024, 768, 4, 2, 12, 12), (40, 333, 5120, 2, 1, 40, 8)]
    for caso in casos:
        esperado = C.kv_cache_bytes(*caso)
        with reference_blocked(C.kv_cache_bytes):
            check_equal(int(kv_cache_bytes(*caso)), esperado)
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
print("128k tokens con MHA:", C.kv_cache_bytes(32, 131_072, 4096) / 2**30, "GiB")

# %% [markdown]
# Con 128k tokens de contexto y atención multi-cabeza completa, la caché pesaría 64 GiB: más que los pesos.
# Por eso los modelos de contexto largo usan GQA.
#
# ## 8. Modo ingeniero: ¿cabe este modelo en mi GPU?
#
# La memoria total al servir un modelo es, aproximadamente, pesos + caché KV + activaciones + lo que reserva
# el propio motor de inferencia. Una regla práctica es sumar pesos y caché y añadir un 20-30 % de margen; el
# capítulo usa un 25 %:
#
# $$M_{total} \approx (M_{pesos} + M_{KV}) \cdot (1 + 0.25)$$
#
# ### Ejercicio 9 · `inference_memory_gb` y `fits_on_gpu` (2 puntos)
#
# Escribe `inference_memory_gb(weights_gb, kv_gb, overhead=0.25)`, que devuelve la memoria total en GB, y
# `fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25)`, que devuelve `True` si esa memoria total cabe en la
# GPU (menor o igual que `gpu_gb`). El margen se aplica a la suma, no solo a los pesos.

# %% nbgrader={"grade_id": "inference_memory", "solution": true}
def inference_memory_gb(weights_gb, kv_gb, overhead=0.25):
    """(pesos + caché KV) · (1 + margen), en GB."""
    ### BEGIN SOLUTION
    return (weights_gb + kv_gb) * (1 + overhead)
    ### END SOLUTION


def fits_on_gpu(weights_gb, kv_gb, gpu_gb, overhead=0.25):
    """¿Cabe el modelo, con su caché y el margen, en una GPU de gpu_gb GB?"""
    ### BEGIN SOLUTION
    return bool(inference_memory_gb(weights_gb, kv_gb, overhead) <= gpu_gb)
    ### END SOLUTION


# %% nbgrader={"grade_id": "test_inference_memory", "grade": true, "points": 2}
# Comprobación del ejercicio 9
pesos_fp16 = 7e9 * 2 / 1e9
pesos_4bit = 7e9 * 0.5 / 1e9
kv_4k = 2 * 32 * 4096 * 4096 * 2 / 1e9
total_fp16 = inference_memory_gb(pesos_fp16, kv_4k)
total_4bit = inference_memory_gb(pesos_4bit, kv_4k)
print(round(total_fp16, 1), round(total_4bit, 1))
check_close(total_fp16, 20.184355, atol=1e-5, what="7B en FP16 con 4k de contexto",
            hint="el 25 % se aplica a pesos + caché")
check_close(total_4bit, 7.059355, atol=1e-5, what="7B en 4 bits con 4k de contexto")
check_equal(fits_on_gpu(pesos_fp16, kv_4k, gpu_gb=8), False, what="¿cabe FP16 en 8 GB?")
check_equal(fits_on_gpu(pesos_4bit, kv_4k, gpu_gb=8), True, what="¿cabe 4 bits en 8 GB?")
ok("FP16 no cabe en 8 GB; en 4 bits, sí (por poco)")
### BEGIN HIDDEN TESTS
with hidden("inference_memory_gb y fits_on_gpu: otros casos"):
    rng_t = np.random.default_rng(909)
    for _ in range(15):
        w, k, o = float(rng_t.uniform(0.1, 150)), float(rng_t.uniform(0, 40)), float(rng_t.uniform(0, 0.5))
        esperado = C.inference_memory_gb(w, k, overhead=o)
        with reference_blocked(C.inference_memory_gb, C.fits_on_gpu):
            check_close(inference_memory_gb(w, k, overhead=o), esperado, atol=1e-9, rtol=1e-12)
            check_equal(bool(fits_on_gpu(w, k, gpu_gb=esperado + 0.01, overhead=o)), True)
            check_equal(bool(fits_on_gpu(w, k, gpu_gb=esperado - 0.01, overhead=o)), False)
    with reference_blocked(C.inference_memory_gb, C.fits_on_gpu):
        check_equal(bool(fits_on_gpu(4.0, 0.0, gpu_gb=5.0)), True)  # 4 · 1.25 = 5: justo cabe
        check_close(inference_memory_gb(10.0, 2.0, overhead=0.0), 12.0, atol=1e-12)
### END HIDDEN TESTS

# %%
casos = {"FP16": (pesos_fp16, kv_4k), "4 bits": (pesos_4bit, kv_4k)}
nombres = list(casos)
pesos_v = np.array([casos[n][0] for n in nombres])
kv_v = np.array([casos[n][1] for n in nombres])
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
# ### Ejercicio 10 · `choose_model` (2 puntos)
#
# "Más grande es mejor" es uno de los tropiezos del capítulo: el mejor modelo que **no cabe** no sirve de
# nada. Escribe `choose_model(candidates, gpu_gb, overhead=0.25)`. Cada candidato es un diccionario con
# `name`, `n_params`, `dtype` (uno de los formatos del ejercicio 7), `kv_gb` y `quality` (una puntuación de
# calidad: mayor es mejor). Devuelve el `name` del candidato de mayor `quality` cuya memoria total (en GB,
# como en el ejercicio 9) cabe en la GPU. Si ninguno cabe, lanza `ValueError`.

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


# %% nbgrader={"grade_id": "test_choose_model", "grade": true, "points": 2}
# Comprobación del ejercicio 10
candidatos = [
    {"name": "7B-fp16", "n_params": 7e9, "dtype": "fp16", "kv_gb": 2.147, "quality": 70},
    {"name": "7B-4bit", "n_params": 7e9, "dtype": "4bit", "kv_gb": 2.147, "quality": 67},
    {"name": "1B-fp16", "n_params": 1e9, "dtype": "fp16", "kv_gb": 0.5, "quality": 45},
]
check_equal(choose_model(candidatos, gpu_gb=8), "7B-4bit", what="el mejor modelo para 8 GB",
            hint="descarta primero los que no caben (7B en FP16 necesita ~20 GB)")
check_equal(choose_model(candidatos, gpu_gb=24), "7B-fp16", what="el mejor modelo para 24 GB")
check_raises(lambda: choose_model(candidatos, gpu_gb=1), ValueError, what="una GPU de 1 GB")
ok("más grande no siempre es mejor: primero, que quepa")
### BEGIN HIDDEN TESTS
with hidden("choose_model: catálogos aleatorios"):
    rng_t = np.random.default_rng(1010)
    for _ in range(15):
        cands = [
            {"name": f"m{i}", "n_params": float(rng_t.uniform(0.5e9, 80e9)),
             "dtype": str(rng_t.choice(["fp32", "fp16", "bf16", "int8", "4bit"])),
             "kv_gb": float(rng_t.uniform(0, 10)), "quality": float(rng_t.uniform(0, 100))}
            for i in range(8)
        ]
        gpu = float(rng_t.uniform(40, 200))
        esperado = C.choose_model(cands, gpu_gb=gpu)
        with reference_blocked(C.choose_model):
            check_equal(choose_model(cands, gpu_gb=gpu), esperado)
    # Un contexto largo: el candidato mejor solo cabe si se olvida la caché KV.
    largo = [
        {"name": "7B-fp16-32k", "n_params": 7e9, "dtype": "fp16", "kv_gb": 8.0, "quality": 80},
        {"name": "7B-4bit-4k", "n_params": 7e9, "dtype": "4bit", "kv_gb": 2.0, "quality": 60},
    ]
    for margen in (0.25, 0.0):
        esperado = C.choose_model(largo, gpu_gb=24, overhead=margen)
        with reference_blocked(C.choose_model):
            check_equal(choose_model(largo, gpu_gb=24, overhead=margen), esperado)
### END HIDDEN TESTS

# %% [markdown]
# ## 9. Errores frecuentes
#
# Estos son los tropiezos típicos del capítulo. Cada uno aparece aquí como una función equivocada, y la misma
# comprobación que corrige tus ejercicios lo detecta. Léelos antes de entregar: son exactamente los casos que
# buscan las pruebas ocultas.

# %%
detecta = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla


# 1. Perplejidad como exp de la pérdida TOTAL: sale 10 en lugar de 2.154.
detecta("perplejidad = exp(L)", lambda: check_close(
    math.exp(M.nll([0.5, 0.25, 0.8])), 2.154435, atol=1e-6, what="perplejidad"))

# 2. Logaritmo en base 2 para la pérdida pero exponencial natural para la perplejidad.
detecta("log2 en la pérdida y e^ en la perplejidad", lambda: check_close(
    math.exp(-np.log2([0.5, 0.25, 0.8]).mean()), 2.154435, atol=1e-6, what="perplejidad"))

# 3. Softmax sin normalizar: exp(z) no es una distribución.
detecta("softmax sin dividir por la suma", lambda: check_close(
    np.exp([5.0, 2.0, 0.0]), [0.946499, 0.047123, 0.006377], atol=1e-6, what="softmax"))

# 4. Temperatura que multiplica en vez de dividir: a T = 0.5 sale la distribución de T = 2.
detecta("temperatura multiplicando", lambda: check_close(
    F.softmax(np.array([5.0, 2.0, 0.0]) * 0.5), [0.997482, 0.002473, 0.000045], atol=1e-6, what="T = 0.5"))

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

# 10. El margen aplicado solo a los pesos: 19.65 GB en lugar de 20.18.
detecta("margen solo sobre los pesos", lambda: check_close(
    pesos_fp16 * 1.25 + kv_4k, 20.184355, atol=1e-5, what="memoria total FP16"))

# %% [markdown]
# Dos errores más son de concepto, no de fórmula, y también se pueden ver en código.
#
# **Confundir el modelo con el producto.** Un chat recuerda la conversación porque el *sistema* le vuelve a
# pasar el historial, no porque el modelo tenga memoria entre llamadas. Un modelo es una función pura: mismo
# contexto, mismos logits. Si una función de "modelo" guarda estado escondido, dos llamadas idénticas dan
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
# ## 10. Pregunta para razonar (corrección manual)
#
# Un compañero compara dos asistentes de chat con la misma pregunta sobre el horario de una biblioteca de su
# barrio. El asistente A contesta bien y el B se inventa un horario. Concluye: «el modelo de A sabe más que el
# de B y tiene más parámetros». Además, cuando le enseñas que el B daba un 92 % de probabilidad a su primera
# palabra, responde: «entonces B estaba seguro, así que el dato debía de ser cierto».
#
# En 6-10 líneas, explica qué dos errores del capítulo comete, qué **capas** (modelo base, modelo instruct,
# sistema completo) pueden explicar la diferencia entre A y B, y qué harías tú para comparar los dos
# **modelos** de forma justa.

# %% [markdown] nbgrader={"grade_id": "respuesta_capas", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# Comete dos errores. El primero es confundir el modelo con el producto: A puede acertar porque su *sistema*
# busca en la web o en una base de datos (recuperación, herramientas), no porque sus pesos "sepan" más; el
# número de parámetros no se puede deducir de una respuesta. El segundo es leer la probabilidad como verdad: un
# 92 % mide lo bien que una palabra encaja con los patrones aprendidos, no si el horario es real; un modelo
# base o instruct sin acceso a datos frescos rellena con algo plausible.
#
# La diferencia puede venir de cualquiera de las tres capas: del modelo base (datos y tamaño), del ajuste
# instruct (si aprendió a decir "no lo sé") o del sistema (búsqueda, herramientas, instrucciones de sistema,
# validadores). Para comparar los *modelos* de forma justa usaría las mismas preguntas, el mismo prompt y la
# misma configuración de decodificación, sin herramientas ni recuperación en ninguno, con un conjunto de
# evaluación propio cuyas respuestas conozca, y mediría aciertos, coste y latencia; y si el producto necesita
# datos frescos, se los daría por el sistema a ambos por igual.
# ### END SOLUTION

# %% [markdown]
# ## Resumen
#
# - Un LLM calcula, para cada posición, logits sobre todo su vocabulario; la softmax los convierte en
#   probabilidades y la temperatura las afila o las aplana.
# - Generar es repetir: cada token elegido vuelve a entrar como contexto, y cada token cuesta una pasada.
# - La pérdida es la sorpresa total ante el texto real (`-Σ ln p`); la perplejidad, `e` elevado a la pérdida
#   media, se lee como el número efectivo de opciones por token. «la casa azul»: 2.302585 nats y PPL 2.154.
# - Los parámetros son números de transformaciones: 15 en una capa 4 → 3, unos `12·L·d²` en un Transformer
#   (6.4 mil millones para 32 capas y d = 4096), dos tercios de ellos en los MLP.
# - La memoria es parámetros por bytes (14 GB = 13.04 GiB en FP16 para 7B) más una caché KV que crece con el
#   contexto y el lote (2 GiB para 4k tokens) y que GQA reduce.
# - Con un 25 % de margen, un 7B necesita ~20.2 GB en FP16 y ~7.1 GB en 4 bits: solo el segundo cabe en 8 GB.
#
# ## Para saber más
#
# - C. E. Shannon (1948), *A mathematical theory of communication*: la información como sorpresa.
# - Y. Bengio et al. (2003), *A neural probabilistic language model*: el primer modelo de lenguaje neuronal.
# - A. Vaswani et al. (2017), *Attention is all you need*: el Transformer (lab 02).
# - T. Brown et al. (2020), *Language models are few-shot learners*: GPT-3 y sus 175 mil millones de parámetros.
# - J. Kaplan et al. (2020), *Scaling laws for neural language models*, y J. Hoffmann et al. (2022),
#   *Training compute-optimal large language models* (Chinchilla): cómo escalan la pérdida, los datos y el cómputo.
# - E. M. Bender et al. (2021), *On the dangers of stochastic parrots*: lo que la escala no arregla.
# - En `llmlab`: `llmlab.metrics`, `llmlab.functional` y `llmlab.cost` contienen las versiones de referencia de
#   todo lo que has escrito hoy. El lab 08 amplía la calculadora de memoria a modelos reales y a la velocidad.
