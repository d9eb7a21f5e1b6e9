# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 04 · Cómo elige palabras un LLM: normalización, MLP y los mandos del muestreo
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab04-como-elige-palabras/lab04-como-elige-palabras.ipynb)
#
# **Capítulo 04** de *Facsímil 03 · Arquitecturas y modelos* · duración estimada: **3 horas y media** (65 min
# de lectura y figuras y 2 h 25 min de ejercicios y de la pregunta razonada; cada ejercicio indica su tiempo y su
# dificultad; las secciones «(opcional)» quedan fuera de la cuenta)
#
# La atención decide qué tokens se miran entre sí, pero un bloque Transformer hace más cosas: suma lo que
# calcula a una vía que nunca se corta (el residual), reescala cada vector (LayerNorm o RMSNorm) y lo
# transforma por dentro con una red pequeña (el MLP). Al final de todos los bloques, el último vector se
# convierte en una puntuación por cada token del vocabulario, y ahí empieza la parte que el usuario sí
# nota: cómo se elige la palabra siguiente.
#
# **Al terminar sabrás:**
#
# 1. escribir LayerNorm y RMSNorm, y explicar por qué normalizan cada token por separado;
# 2. escribir el MLP de un bloque y contar por qué guarda dos tercios de los parámetros (y por qué en un modelo
#    moderno son más);
# 3. pasar de logits a probabilidades y mover la temperatura sabiendo qué cambia;
# 4. escribir top-k, top-p y min-p con la misma semántica que Hugging Face `transformers`;
# 5. montar el muestreo completo sabiendo que el orden de los mandos depende de la biblioteca (`transformers`
#    calienta antes de recortar; llama.cpp, después), y el bucle de generación, y ver a un modelo diminuto escribir
#    con cada preajuste.
#
# **Cómo se trabaja.** Escribe tu código en las celdas marcadas con `ESCRIBE TU CÓDIGO AQUÍ`; en los dos
# ejercicios «encuentra el error» la celda ya trae una función con un fallo típico que tienes que arreglar. Debajo
# de cada ejercicio hay pistas plegadas y una celda de comprobación que te dice, en español, qué falla. Al corregir se ejecutan además pruebas ocultas
# con casos que no ves (aleatorios, empates, `-inf`, logits enormes), así que tu función tiene que cumplir el
# enunciado, no solo los ejemplos. No edites las celdas de comprobación y no llames a la versión de `llmlab`
# del mismo cálculo (salvo donde el enunciado lo permita): la comprobación te avisará, porque el objetivo es que lo
# escribas tú.
#
# **Predecir y medir.** Antes de las mil tiradas por estrategia (sección 10) hay una celda «Tu predicción» de una línea: escribe tu apuesta antes de
# ejecutar la medida, que la imprime delante del resultado. No puntúa; sirve para que veas qué intuición tenías.
#
# **Números.** Los decimales llevan punto, como en Python (`0.696`), y los miles un espacio fino (`134 238 208`).

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
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

from llmlab import functional as lf
from llmlab import layers as L
from llmlab import model as LM
from llmlab import sampling as S
from llmlab.checks import (
    EjercicioSinHacer, check_array, check_close, check_equal, check_list, check_raises, check_shape, check_tensor,
    check_true, check_type, checked_call, hidden, ok, reference_blocked, show_caught,
)
from llmlab.spanish import fmt_int, fmt_pct
from llmlab.checks import EjercicioSinHacer  # lo que lanza un ejercicio que aún no has hecho

# Tensores diminutos: con un solo hilo todo va más rápido y los números no dependen de cuántos núcleos tengas.
torch.set_num_threads(1)
# ¿Cuaderno abierto en vivo? Colab, JupyterLab/Notebook (marcan sus kernels con JPY_SESSION_NAME) o VS Code.
# Al corregir o al ejecutar en lote, no: entonces no se crean deslizadores.
EN_VIVO = "google.colab" in sys.modules or "JPY_SESSION_NAME" in os.environ or "VSCODE_PID" in os.environ
plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar: el mismo cuaderno da siempre los mismos números
N_MUESTRAS = 1000  # tiradas por estrategia en los histogramas de la sección 10
N_TOKENS_DEMO = 24  # tokens que escribe el modelo diminuto con cada preajuste (sección 11)
INTERACTIVO = None  # deslizadores de ipywidgets: None = solo en vivo (JupyterLab, Colab, VS Code); o True/False

# %% [markdown]
# ## 1. Qué hay en un bloque, además de la atención
#
# Piensa en el autocompletado del correo. Escribes `Nos vemos mañana a las` y el programa propone `10`. Para
# llegar ahí, cada bloque del modelo repite la misma receta sobre la lista de vectores (uno por token). En
# los modelos actuales la normalización va **antes** de cada subcapa (*pre-norm*):
#
# $$a_\ell = x_\ell + \mathrm{Atención}(\mathrm{LN}(x_\ell))$$
#
# $$x_{\ell+1} = a_\ell + \mathrm{MLP}(\mathrm{LN}(a_\ell))$$
#
# Se lee de dentro hacia fuera: normaliza, calcula algo (atención o MLP) y **suma** el resultado a lo que
# ya había. El Transformer original de 2017 normalizaba después de sumar (*post-norm*,
# $x_{\ell+1} = \mathrm{LN}(x_\ell + \mathrm{Atención}(x_\ell))$); funciona, pero con muchas capas se vuelve
# inestable y necesita calentar la tasa de aprendizaje con cuidado. Con *pre-norm* la vía de la suma queda
# limpia de principio a fin y los gradientes la recorren sin estorbos.
#
# Cada pieza tiene un papel distinto en el ejemplo del correo:
#
# | pieza | qué aporta a «Nos vemos mañana a las …» |
# |---|---|
# | atención | mira `vemos`, `mañana` y `a las`: lo siguiente debería ser una hora |
# | residual | conserva la frase entera mientras cada capa añade su corrección |
# | LayerNorm | deja los números en una escala comparable: ninguna dimensión se dispara |
# | MLP | refuerza, dentro de cada posición, la asociación «a las» → número |
# | logits | puntúa cada candidato: `10` 4.2, `9` 3.9, `reunión` 1.1, `azul` −0.7 |
# | muestreo | decide: quedarse con `10` o arriesgar con otra opción |
#
# Tres cosas que esta parte del modelo **no** es: el MLP no es una memoria externa en la que se consultan
# datos; LayerNorm no «limpia» el significado, solo reescala números; y el muestreo no vota qué es verdad.
#
# ## 2. El residual: sumar, nunca sustituir
#
# Una conexión residual es la operación más sencilla del bloque, $y = x + F(x)$, donde $F$ es la atención o
# el MLP. La subcapa no tiene que reconstruir el vector entero: solo propone una corrección que se suma. Si
# no tiene nada útil que decir, le basta con devolver casi cero y la información pasa intacta. Sin esta vía,
# cada capa tendría que rehacerlo todo y entrenar redes profundas sería muy frágil.
#
# El ejemplo del capítulo: $x = [2, -1, 0.5]$ y una subcapa que propone $F(x) = [0.1, 0.4, -0.2]$.

# %%
x_libro = np.array([2.0, -1.0, 0.5])
correccion = np.array([0.1, 0.4, -0.2])
y_residual = L.residual(x_libro, lambda x: correccion)
print("x       :", x_libro)
print("F(x)    :", correccion)
print("x + F(x):", y_residual)

# Con subcapas que no aportan nada (devuelven ceros), un bloque pre-norm entero deja pasar x tal cual.
X_frase = np.random.default_rng(SEMILLA).normal(size=(5, 3))
bloque_mudo = {"attn_fn": np.zeros_like, "mlp_fn": np.zeros_like}
print("bloque con subcapas a cero == identidad:",
      bool(np.array_equal(L.transformer_block(X_frase, bloque_mudo), X_frase)))

# %% [markdown]
# ## 3. LayerNorm: centrar y reescalar cada token
#
# A lo largo de muchas capas, unos vectores pueden crecer y otros encogerse. LayerNorm toma **el vector de un
# token** y lo recentra y reescala usando solo sus propias componentes ($d$ = dimensión del modelo):
#
# $$\mu = \frac{1}{d}\sum_{i=1}^{d} x_i \qquad \sigma = \sqrt{\frac{1}{d}\sum_{i=1}^{d}(x_i - \mu)^2 + \varepsilon}
# \qquad \mathrm{LN}(x)_i = \gamma_i\,\frac{x_i - \mu}{\sigma} + \beta_i$$
#
# Tres detalles que luego comprueban las pruebas: la varianza es la **poblacional** (se divide entre $d$, no
# entre $d-1$); $\varepsilon = 10^{-5}$ va **dentro** de la raíz, para que un vector constante no provoque una
# división entre cero; y $\gamma$ (escala) y $\beta$ (desplazamiento) son parámetros aprendidos que se aplican
# **después** de normalizar. Con matrices (una fila por token), todo se calcula a lo largo del último eje.
#
# Paso a paso con $x = [2, -1, 0.5]$, $\gamma = 1$ y $\beta = 0$:

# %%
mu = x_libro.mean()
desviaciones = x_libro - mu
sigma = math.sqrt((desviaciones**2).mean() + 1e-5)
print("media μ        :", mu)
print("desviaciones   :", desviaciones)
print(f"σ (con ε)      : {sigma:.6f}   (sin ε: {math.sqrt(1.5):.6f})")
print("LN(x)          :", np.round(desviaciones / sigma, 6))
print("con ddof=1 (MAL):", np.round(desviaciones / x_libro.std(ddof=1), 6))

# %% [markdown]
# El resultado, $[1.225, -1.225, 0]$, tiene media 0 y varianza 1. La última línea muestra un tropiezo típico:
# con la desviación típica *muestral* (`ddof=1`, la que usan por defecto pandas y muchas calculadoras) sale
# $[1, -1, 0]$, que ya no es LayerNorm.
#
# ### Ejercicio 1 · `layer_norm` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `layer_norm(x, gamma=None, beta=None, eps=1e-5)` en NumPy:
#
# - acepta una lista o un array de cualquier forma y normaliza **a lo largo del último eje** (cada fila, cada
#   token, por separado: `axis=-1, keepdims=True`);
# - usa la varianza poblacional y pon `eps` dentro de la raíz;
# - si `gamma` es `None` usa unos; si `beta` es `None`, ceros; si se dan, tienen forma `(d,)`;
# - devuelve un **array de NumPy de floats** de la misma forma que `x` (también si `x` es de enteros) y no
#   modifica sus entradas.

# %% nbgrader={"grade_id": "layer_norm", "solution": true}
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm a lo largo del último eje: gamma * (x - media) / sqrt(varianza + eps) + beta."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    media = x.mean(axis=-1, keepdims=True)
    varianza = ((x - media) ** 2).mean(axis=-1, keepdims=True)
    salida = (x - media) / np.sqrt(varianza + eps)
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    if beta is not None:
        salida = salida + np.asarray(beta, dtype=float)
    return salida
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Tres reducciones a lo largo del último eje: la media, la varianza poblacional (`((x - media)**2).mean(...)` o
# `x.var(axis=-1, keepdims=True)`, que ya divide entre `d`) y la raíz de `varianza + eps`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `salida = (x - media) / np.sqrt(varianza + eps)`; si `gamma` no es `None`, `salida = salida * gamma`; si `beta`
# no es `None`, `salida = salida + beta`. Nada de `x -= media`: crearías el resultado sobre la entrada.
#
# </details>

# %% nbgrader={"grade_id": "test_layer_norm", "grade": true, "points": 2}
# Comprobación del ejercicio 1 · tolerancia: 1e-6 (6 decimales del libro); rtol 1e-5 en los casos aleatorios.
with reference_blocked(L.layer_norm, L.rms_norm):
    ln_t = checked_call(layer_norm, [2.0, -1.0, 0.5])
    check_array(ln_t, what="layer_norm([2, -1, 0.5])", dtype="float", shape=(3,))
    check_close(ln_t, [1.224741, -1.224741, 0.0], atol=1e-6, what="layer_norm([2, -1, 0.5])",
                hint="media 0.5, varianza poblacional (divide entre d, no entre d - 1) y eps dentro de la raíz")
    check_close(checked_call(layer_norm, [2.1, -0.6, 0.3]), [1.336301, -1.069041, -0.267260], atol=1e-6,
                what="LayerNorm de la salida del residual [2.1, -0.6, 0.3]")
    check_close(checked_call(layer_norm, [[2.0, -1.0, 0.5], [2.1, -0.6, 0.3]]),
                [[1.224741, -1.224741, 0.0], [1.336301, -1.069041, -0.267260]], atol=1e-6,
                what="layer_norm de una matriz (una fila por token)",
                hint="cada fila se normaliza con su propia media y varianza: axis=-1, keepdims=True")
    check_close(checked_call(layer_norm, [2.0, -1.0, 0.5], gamma=[2.0, 2.0, 2.0], beta=[1.0, 1.0, 1.0]),
                [3.449482, -1.449482, 1.0], atol=1e-6, what="layer_norm con gamma = 2 y beta = 1",
                hint="gamma y beta se aplican DESPUÉS de normalizar")
    check_close(checked_call(layer_norm, [3.0, 3.0, 3.0]), [0.0, 0.0, 0.0], atol=1e-6,
                what="layer_norm de un vector constante", hint="sin eps dividirías 0 entre 0 y saldría NaN")
ok("layer_norm reproduce los números del capítulo")
### BEGIN HIDDEN TESTS
with hidden("layer_norm: matrices aleatorias, gamma y beta, eps, lotes y escalas grandes"):
    rng_t = np.random.default_rng(401)
    casos = []
    for _ in range(12):
        n, d = int(rng_t.integers(1, 7)), int(rng_t.integers(2, 17))
        X = rng_t.normal(rng_t.uniform(-5, 5), rng_t.uniform(0.1, 10), size=(n, d))
        casos.append((X, rng_t.normal(size=d), rng_t.normal(size=d), float(rng_t.choice([1e-5, 1e-6, 1e-2]))))
    for X in (rng_t.normal(size=(2, 3, 5)), rng_t.normal(size=(4, 4)),  # lote 3D; n == d: el eje equivocado no falla solo
              np.array([[1e-3, -1e-3, 0.0, 2e-3]]),  # varianza diminuta: eps fuera de la raíz se nota
              np.array([[7.0, 7.0, 7.0, 7.0], [1.0, 2.0, 3.0, 4.0]]), rng_t.normal(300.0, 50.0, size=(3, 8)),
              rng_t.normal(size=(2, 6)).astype(np.float32)):
        casos.append((X, None, None, 1e-5))
    casos.append((rng_t.normal(size=(2, 4)).tolist(), [1.0, 2.0, 3.0, 4.0], None, 1e-5))  # listas; gamma sin beta
    casos.append((rng_t.normal(size=(3, 4)), None, rng_t.normal(size=4), 1e-5))  # beta sin gamma
    casos.append((np.array([[1, 2, 3, 4], [5, 5, 6, 9]]), None, None, 1e-5))  # enteros: la salida es de floats
    casos.append(([[3, -1, 2], [0, 4, 4]], [1, 2, 3], [0, 1, 0], 1e-5))  # listas de enteros, gamma y beta enteros
    esperados = [L.layer_norm(X, g, b, eps=eps) for X, g, b, eps in casos]
    with reference_blocked(L.layer_norm, L.rms_norm):
        for (X, g, b, eps), esperado in zip(casos, esperados):
            obtenido = checked_call(layer_norm, X, g, b, eps=eps)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-5, atol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. RMSNorm: reescalar sin centrar
#
# Llama, Mistral o Qwen no restan la media: dividen cada vector por su **raíz cuadrática media** y lo
# escalan con $\gamma$ (no hay $\beta$):
#
# $$\mathrm{RMSNorm}(x)_i = \gamma_i\,\frac{x_i}{\sqrt{\frac{1}{d}\sum_{j=1}^{d} x_j^2 + \varepsilon}}$$
#
# Es más barata (una reducción en vez de dos) y, en la práctica, entrena igual de bien. Con el mismo
# $x = [2, -1, 0.5]$, la media de los cuadrados es $1.75$ y su raíz $1.322876$, así que el resultado es
# $[1.511854, -0.755927, 0.377963]$: a diferencia de LayerNorm, el `0.5` no se convierte en 0, porque nadie le
# ha restado la media.
#
# ### Ejercicio 2 · `rms_norm`, encuentra el error (1 punto · dificultad ★☆☆ · ~5 min)
#
# `rms_norm(x, gamma=None, eps=1e-5)` debe calcular la RMSNorm en NumPy, a lo largo del último eje, con `eps`
# dentro de la raíz y sin restar la media; si `gamma` es `None`, no escala. Devuelve un **array de NumPy de
# floats** de la forma de `x` (también si `x` es de enteros). Un compañero la escribió partiendo de su `layer_norm`, y le da `[1.225, −1.225, 0]`
# donde el capítulo dice `[1.512, −0.756, 0.378]`. Encuentra el error y corrígelo.

# %% nbgrader={"grade_id": "rms_norm", "solution": true}
def rms_norm(x, gamma=None, eps=1e-5):
    """RMSNorm a lo largo del último eje: gamma * x / sqrt(media(x²) + eps)."""
    x = np.asarray(x, dtype=float)
    ### BEGIN SOLUTION
    salida = x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    ### END SOLUTION
    ### BEGIN BUGGY
    # centrada = x - x.mean(axis=-1, keepdims=True)
    # salida = centrada / np.sqrt((centrada**2).mean(axis=-1, keepdims=True) + eps)
    ### END BUGGY
    if gamma is not None:
        salida = salida * np.asarray(gamma, dtype=float)
    return salida


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Compara la fórmula de RMSNorm con la de LayerNorm: ¿qué paso de LayerNorm **no** está en RMSNorm?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# RMSNorm no resta la media: divide `x` tal cual por `np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)`.
#
# </details>

# %% nbgrader={"grade_id": "test_rms_norm", "grade": true, "points": 1}
# Comprobación del ejercicio 2 · tolerancia: 1e-6 (6 decimales del libro); rtol 1e-5 en los casos aleatorios.
with reference_blocked(L.rms_norm, L.layer_norm):
    rms_t = checked_call(rms_norm, [2.0, -1.0, 0.5])
    check_array(rms_t, what="rms_norm([2, -1, 0.5])", dtype="float", shape=(3,))
    check_close(rms_t, [1.511854, -0.755927, 0.377963], atol=1e-6, what="rms_norm([2, -1, 0.5])",
                hint="divide por sqrt(media de x² + eps); RMSNorm NO resta la media")
    check_close(checked_call(rms_norm, [[2.0, -1.0, 0.5], [0.0, 0.0, 0.0]]),
                [[1.511854, -0.755927, 0.377963], [0.0, 0.0, 0.0]], atol=1e-6,
                what="rms_norm de una matriz con una fila de ceros", hint="cada fila por separado (axis=-1); eps evita dividir entre 0")
    check_close(checked_call(rms_norm, [2.0, -1.0, 0.5], gamma=[1.0, 0.5, 2.0]), [1.511854, -0.377963, 0.755927],
                atol=1e-6, what="rms_norm con gamma = [1, 0.5, 2]")
ok("rms_norm reproduce los números del capítulo")
### BEGIN HIDDEN TESTS
with hidden("rms_norm: matrices aleatorias, gamma, eps, lotes y escalas grandes"):
    rng_t = np.random.default_rng(402)
    casos = []
    for _ in range(12):
        forma = [int(rng_t.integers(1, 5)) for _ in range(int(rng_t.integers(1, 3)))] + [int(rng_t.integers(2, 17))]
        X = rng_t.normal(rng_t.uniform(-3, 3), rng_t.uniform(0.01, 10), size=forma)
        casos.append((X, rng_t.normal(size=forma[-1]), float(rng_t.choice([1e-5, 1e-6, 1e-2]))))
    casos += [(rng_t.normal(size=(5, 5)), None, 1e-5), (rng_t.normal(500.0, 1.0, size=(2, 6)), None, 1e-5),
              (np.array([[1e-3, 2e-3, -1e-3]]), None, 1e-5), (rng_t.normal(size=(3, 4)).astype(np.float32), None, 1e-5),
              (np.array([[1, 2, 2], [3, 0, 4]]), None, 1e-5), ([[2, -1, 1]], [1, 2, 3], 1e-5)]  # enteros
    esperados = [L.rms_norm(X, g, eps=eps) for X, g, eps in casos]
    with reference_blocked(L.rms_norm, L.layer_norm):
        for (X, g, eps), esperado in zip(casos, esperados):
            obtenido = checked_call(rms_norm, X, g, eps=eps)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-5, atol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# La figura compara las tres operaciones sobre el mismo vector: el residual suma, LayerNorm centra y
# reescala, RMSNorm solo reescala.

# %%
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.6))
pos = np.arange(3)
izq.bar(pos - 0.27, x_libro, width=0.27, label="x")
izq.bar(pos, correccion, width=0.27, label="F(x)")
izq.bar(pos + 0.27, y_residual, width=0.27, label="y = x + F(x)")
izq.set_xticks(pos, ["x₁", "x₂", "x₃"])
izq.set_title("Residual: la subcapa solo suma una corrección")
izq.legend()
der.bar(pos - 0.27, x_libro, width=0.27, label="x", color="tab:gray")
der.bar(pos, L.layer_norm(x_libro), width=0.27, label="LayerNorm")
der.bar(pos + 0.27, L.rms_norm(x_libro), width=0.27, label="RMSNorm")
der.set_xticks(pos, ["x₁", "x₂", "x₃"])
der.set_title("Normalizar [2, −1, 0.5]")
der.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 5. El MLP: una transformación por posición
#
# La atención reparte información **entre** posiciones; el MLP, en cambio, aplica la misma función a cada
# posición **por separado**, sin mirar a las demás: fila a fila. Con la convención de filas que usamos en todo el curso (una fila por token, `X @ W`):
#
# $$\mathrm{MLP}(X) = \varphi(X W_1 + b_1)\,W_2 + b_2$$
#
# $W_1$ ensancha de $d$ a $4d$ dimensiones, $\varphi$ es una no linealidad y $W_2$ vuelve a $d$. (El libro lo
# escribe con vectores columna, $W_2\,\varphi(W_1 x + b_1) + b_2$: es la misma cuenta traspuesta.) Sin
# $\varphi$, las dos capas lineales se fundirían en una sola y el ensanchamiento no serviría para nada.
#
# **¿Por qué GELU y no solo ReLU?** ReLU, $\max(0, x)$, corta en seco: todo lo negativo vale 0 y deja de
# aprender. GELU, $x\,\Phi(x)$ con $\Phi$ la función de distribución de la normal, es una versión suave que deja
# pasar un poco de lo negativo. GPT-2 usa una aproximación con `tanh`; aquí usamos la exacta con `erf`
# (`L.gelu`). Los modelos recientes prefieren variantes con **puerta** (GLU, SwiGLU): dos proyecciones en
# paralelo y una multiplica a la otra, $(\mathrm{SiLU}(xW) \odot xV)\,W_2$, de modo que una decide cuánto pasa
# de la otra.

# %%
valores = np.array([-1.0, 0.0, 1.0, 2.0])
print("GELU exacta (erf):", np.round(L.gelu(valores), 6))
print("GELU con tanh    :", np.round(L.gelu(valores, approximate=True), 6))
print("ReLU             :", L.relu(valores))

eje_x = np.linspace(-4, 4, 401)
plt.plot(eje_x, L.relu(eje_x), label="ReLU")
plt.plot(eje_x, L.gelu(eje_x), label="GELU")
plt.plot(eje_x, L.silu(eje_x), label="SiLU (la de SwiGLU)", linestyle="--")
plt.scatter(valores, L.gelu(valores), color="tab:orange", zorder=3)
plt.xlabel("entrada")
plt.ylabel("salida")
plt.title("Activaciones: GELU y SiLU son ReLU sin esquina")
plt.legend()
plt.show()

# %% [markdown]
# ### El reparto de los parámetros en un bloque
#
# Cuenta los del MLP de un bloque: $W_1$ tiene $d \cdot 4d$, $W_2$ otros $4d \cdot d$, y los sesgos $4d + d$.
# En total $8d^2 + 5d$. La atención tiene cuatro proyecciones de $d \times d$: $4d^2$. De los $\approx 12d^2$ de
# un bloque, **el MLP se lleva dos tercios**. Con $d = 4096$, un solo MLP son 134 238 208 parámetros.
#
# ### Ejercicio 3 · `mlp` y `mlp_param_count` (2 puntos · dificultad ★★☆ · ~15 min)
#
# - `mlp(X, W1, b1, W2, b2)`: el MLP de arriba con GELU exacta (puedes usar `L.gelu`), convención de filas.
#   `X` tiene forma `(n, d)` (o solo `(d,)`), `W1` `(d, h)`, `b1` `(h,)`, `W2` `(h, d)`, `b2` `(d,)`. Cada fila
#   de `X` se transforma por su cuenta. Devuelve un **array de NumPy de floats** de la forma de `X`.
# - `mlp_param_count(d, expansion=4, bias=True)`: un `int` con los parámetros de un MLP
#   `d → expansion·d → d`, con sus dos sesgos si `bias=True`.

# %% nbgrader={"grade_id": "mlp", "solution": true}
def mlp(X, W1, b1, W2, b2):
    """GELU(X @ W1 + b1) @ W2 + b2, fila a fila."""
    ### BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    oculta = L.gelu(X @ np.asarray(W1, dtype=float) + np.asarray(b1, dtype=float))
    return oculta @ np.asarray(W2, dtype=float) + np.asarray(b2, dtype=float)
    ### END SOLUTION


def mlp_param_count(d, expansion=4, bias=True):
    """Parámetros de un MLP d -> expansion·d -> d."""
    ### BEGIN SOLUTION
    h = expansion * d
    return int(d * h + h * d + ((h + d) if bias else 0))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Con la convención de filas el orden es `X @ W1`, no `W1 @ X`. La GELU va **entre** las dos proyecciones. Para
# contar, suma las dos matrices y, si hay sesgos, los dos vectores.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `L.gelu(X @ W1 + b1) @ W2 + b2`. Y `h = expansion * d`; `return int(d * h + h * d + ((h + d) if bias else 0))`.
#
# </details>

# %% nbgrader={"grade_id": "test_mlp", "grade": true, "points": 2}
# Comprobación del ejercicio 3 · tolerancia: 1e-6 (ejemplo pequeño); rtol 1e-5 en los aleatorios; cuentas exactas.
W1_mini = np.array([[1.0, -1.0, 0.5, 0.0], [0.0, 1.0, -0.5, 2.0]])  # d = 2 -> h = 4
b1_mini = np.array([0.0, 0.0, 0.0, -1.0])
W2_mini = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]])
b2_mini = np.array([0.1, -0.1])
X_mini = np.array([[1.0, 2.0], [-1.0, 0.5]])
with reference_blocked(L.mlp, L.mlp_param_count):
    salida = checked_call(mlp, X_mini, W1_mini, b1_mini, W2_mini, b2_mini)
    check_array(salida, what="mlp de 2 tokens con d = 2", dtype="float", shape=(2, 2))
    check_close(salida, [[-2.208874, 2.085051], [-0.228626, 1.129819]], atol=1e-6, what="mlp del ejemplo pequeño",
                hint="la GELU exacta va entre las dos proyecciones (no después de W2)")
    check_close(checked_call(mlp, X_mini[1], W1_mini, b1_mini, W2_mini, b2_mini), salida[1], atol=1e-6,
                what="mlp de un token solo", hint="el MLP no mezcla posiciones: cada fila va por su cuenta")
    cuenta = checked_call(mlp_param_count, 4096)
    check_type(cuenta, int, what="mlp_param_count(4096)")
    check_equal(cuenta, 134_238_208, what="parámetros del MLP con d = 4096", hint="8d² + 5d")
    check_equal(checked_call(mlp_param_count, 4096, bias=False), 134_217_728, what="el mismo MLP sin sesgos")
    check_equal(checked_call(mlp_param_count, 4, expansion=2), 76, what="un MLP 4 → 8 → 4 (expansion = 2)",
                hint="con expansion = 2 la capa oculta tiene 2d neuronas")
ok("el MLP transforma cada token por separado y se lleva 8d² + 5d parámetros")
### BEGIN HIDDEN TESTS
with hidden("mlp y mlp_param_count: casos aleatorios, n == d, posiciones independientes y otras expansiones"):
    rng_t = np.random.default_rng(403)
    casos = []
    for n, d in [(3, 5), (6, 6), (1, 4), (8, 3)]:
        X = rng_t.normal(size=(n, d))
        X2 = X.copy()
        X2[0] += 3.0  # tocar el token 0 no debe mover a los demás
        casos.append((X, X2, rng_t.normal(size=(d, 4 * d)), rng_t.normal(size=4 * d),
                      rng_t.normal(size=(4 * d, d)), rng_t.normal(size=d)))
    tallas = [(1, 4, True), (768, 4, True), (768, 4, False), (5120, 2, True), (64, 3, False)]
    esperados = [L.mlp(X, W1, b1, W2, b2) for X, _, W1, b1, W2, b2 in casos]
    cuentas = [L.mlp_param_count(d, expansion=e, bias=b) for d, e, b in tallas]
    with reference_blocked(L.mlp, L.mlp_param_count):
        for (X, X2, W1, b1, W2, b2), esperado in zip(casos, esperados):
            obtenido = checked_call(mlp, X, W1, b1, W2, b2)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-5, atol=1e-5)
            check_close(checked_call(mlp, X2, W1, b1, W2, b2)[1:], esperado[1:], rtol=1e-5, atol=1e-5)
        for (d, e, b), esperada in zip(tallas, cuentas):
            mia = checked_call(mlp_param_count, d, expansion=e, bias=b)
            check_type(mia, int)
            check_equal(mia, esperada)
### END HIDDEN TESTS

# %% [markdown]
# Con $d = 4096$ el reparto de un bloque queda así:

# %%
d_grande = 4096
atencion = 4 * d_grande**2 + 4 * d_grande  # Q, K, V y la proyección de salida, con sesgos
perceptron = L.mlp_param_count(d_grande)
print(f"atención: {fmt_int(atencion)}   MLP: {fmt_int(perceptron)}   fracción del MLP: {perceptron / (atencion + perceptron):.3f}")

plt.pie([atencion, perceptron], labels=["atención (4d²)", "MLP (8d²)"], autopct="%.1f %%",
        colors=["tab:blue", "tab:orange"], startangle=90)
plt.title("Parámetros de un bloque con d = 4096")
plt.show()

# %% [markdown]
# ### El modelo diminuto del curso
#
# En el resto del lab usaremos un modelo de verdad, pequeño: `es-base`, el modelo base que `llmlab` entrena con
# su propio corpus en español y trae dentro del paquete (`llmlab.pretrained`), de estilo Llama (RMSNorm y un
# MLP SwiGLU). Tiene menos de 2 millones de parámetros: escribe frases sencillas en español, pero sabe muy poco del
# mundo y pierde el hilo en cuanto el texto se alarga. Para ver cómo eligen palabras los mandos es perfecto. La
# celda cuenta, bloque a bloque, qué parte de sus parámetros vive en el MLP, y la compara con la fórmula de su
# arquitectura. No sale «dos tercios»: su MLP con puerta (SwiGLU) tiene **tres** matrices de `d × d_ff`, y su
# atención es más pequeña que `4d²` porque usa GQA (menos cabezas de clave y valor que de consulta). Los números
# se calculan aquí, no se copian: el modelo se puede reentrenar con otra forma.

# %% tags=["nbval-ignore-output"]
from llmlab import pretrained

modelo, tok = pretrained.load("es-base")
origen = "es-base (llmlab.pretrained), entrenado con el corpus del curso"
print("modelo:", origen)
cfg = modelo.config
print(f"{len(modelo.blocks)} bloques, d = {cfg.d_model}, vocabulario de {len(tok)} tokens, "
      f"{fmt_int(LM.count_parameters(modelo))} parámetros")
en_atencion = sum(p.numel() for b in modelo.blocks for p in b.attn.parameters())
en_mlp = sum(p.numel() for b in modelo.blocks for p in b.mlp.parameters())
print(f"en los bloques: atención {fmt_int(en_atencion)}, MLP {fmt_int(en_mlp)} → el MLP es el "
      f"{fmt_pct(en_mlp / (en_atencion + en_mlp))}")
d_kv = cfg.n_kv_heads * cfg.head_dim  # ancho de K y de V con GQA
matrices_mlp = 3 if cfg.mlp == "swiglu" else 2  # SwiGLU: puerta, subida y bajada; GELU: subida y bajada
mlp_formula = matrices_mlp * cfg.d_model * cfg.d_ff
atencion_formula = 2 * cfg.d_model * cfg.n_heads * cfg.head_dim + 2 * cfg.d_model * d_kv  # Q y O; K y V
print(f"por bloque, según la arquitectura: MLP {matrices_mlp}·d·d_ff = {fmt_int(mlp_formula)}; atención "
      f"2·d·d_q + 2·d·d_kv = {fmt_int(atencion_formula)} (d_ff = {cfg.d_ff}, d_kv = {d_kv})")
print(f"→ el MLP es el {fmt_pct(mlp_formula / (mlp_formula + atencion_formula))}, "
      f"frente al {fmt_pct(8 / 12)} de la cuenta 8d²/12d²")

# %% [markdown]
# ## 6. La cabeza de lenguaje: un logit por token del vocabulario
#
# Tras el último bloque, cada posición tiene un vector $h$ de $d$ números. Solo el de la **última** posición
# sirve para predecir el token siguiente. Una capa lineal, la *cabeza de lenguaje*, lo convierte en una
# puntuación por cada token del vocabulario (50 000 en el ejemplo del libro):
#
# $$z = h\,W_{vocab} + b$$
#
# Esas puntuaciones son los **logits**. No son probabilidades: pueden ser negativas y no suman 1. La softmax
# las convierte:
#
# $$p_i = \frac{e^{z_i}}{\sum_{j=1}^{V} e^{z_j}}$$
#
# Veámoslo en el modelo diminuto: de la forma `[lote, posiciones, vocabulario]` nos quedamos con la última
# posición. Aunque `es-base` es diminuto, los primeros candidatos ya deberían parecer continuaciones razonables
# de la frase.

# %% tags=["nbval-ignore-output"]
prompt = "Nos vemos mañana a las"
ids_prompt = torch.tensor(tok.encode(prompt))
with torch.no_grad():
    logits_todos = modelo(ids_prompt[None])  # [lote, posiciones, vocabulario]
print("tokens del prompt:", [tok.decode([i]) for i in ids_prompt.tolist()])
print("forma de los logits:", tuple(logits_todos.shape), "-> nos quedamos con la última posición")
z_ultimo = logits_todos[0, -1]
p_ultimo = torch.softmax(z_ultimo, dim=-1)
valores_top, indices_top = torch.topk(p_ultimo, 5)
for p, i in zip(valores_top.tolist(), indices_top.tolist()):
    print(f"  {tok.decode([i])!r:12} logit {z_ultimo[i].item():+.4f}   p = {p:.4f}")
print(f"uniforme sería 1/{len(tok)} = {1 / len(tok):.4f}")

# %% [markdown]
# Con un modelo entrenado, la cosa cambia. El capítulo trabaja con cuatro candidatos para «La capital de
# Francia es …»: `París` 4.0, `Madrid` 3.0, `Lyon` 1.0 y `azul` 0.0. La softmax da
# `[0.696, 0.256, 0.035, 0.013]`: `París` se lleva casi el 70 %, pero `Madrid` no tiene probabilidad cero.
# El modelo no dice «París es la capital»; dice qué continuación encaja mejor con los textos que vio.

# %%
candidatos_libro = ["París", "Madrid", "Lyon", "azul"]
z_libro = torch.tensor([4.0, 3.0, 1.0, 0.0])
p_libro = torch.softmax(z_libro, dim=-1)
for c, z, p in zip(candidatos_libro, z_libro.tolist(), lf.softmax(z_libro.numpy())):  # en float64 para imprimir
    print(f"{c:7s} logit {z:4.1f}  ->  p = {p:.6f}")

# %% [markdown]
# ## 7. Temperatura: afilar o aplanar la distribución
#
# Antes de la softmax se pueden dividir los logits por una **temperatura** $T$:
#
# $$p_i(T) = \frac{e^{z_i/T}}{\sum_j e^{z_j/T}}$$
#
# Con $T < 1$ las diferencias entre logits se agrandan y la distribución se afila; con $T > 1$ se encogen y se
# aplana. La tabla del capítulo, con los mismos cuatro logits:
#
# | token | T = 0.5 | T = 1 | T = 2 |
# |---|---|---|---|
# | París | 0.879 | 0.696 | 0.509 |
# | Madrid | 0.119 | 0.256 | 0.309 |
# | Lyon | 0.002 | 0.035 | 0.114 |
# | azul | 0.000 | 0.013 | 0.069 |
#
# Una forma de medir lo repartida que está la distribución es la entropía: 0.383, 0.773 y 1.138 nats. Su exponencial,
# 1.47, 2.17 y 3.12, se lee como el número efectivo de candidatos entre los que duda el modelo.
#
# En el ejemplo del correo pasa lo mismo. Con $T = 0.5$, `10` y `9` se reparten casi todo (64 % y 35 %) y
# `reunión` y `azul` desaparecen en la práctica; con $T = 2$, `reunión` sube a casi un 10 %.

# %%
candidatos_hora = ["10", "9", "reunión", "azul"]
z_hora4 = [4.2, 3.9, 1.1, -0.7]
for t in (0.5, 1.0, 2.0):
    fila = "   ".join(f"{c} {p:.6f}" for c, p in zip(candidatos_hora, lf.softmax(z_hora4, temperature=t)))
    print(f"T = {t}:  {fila}")

# %% [markdown]
# En `llmlab.sampling` (y en Hugging Face `transformers`), cada mando es una función que recibe un tensor de
# logits de PyTorch con forma `[..., vocabulario]` y devuelve **otro tensor de logits**. Así se pueden encadenar
# y la softmax se hace una sola vez, al final. Los mandos que eliminan candidatos ponen su logit a `-inf`, que
# tras la softmax es una probabilidad exactamente 0. Vas a escribir tus propias versiones con la misma
# semántica; las pruebas ocultas las comparan con las de `llmlab`, que reproducen las de `transformers` bit a bit.
#
# ### Ejercicio 4 · `apply_temperature` (1 punto · dificultad ★☆☆ · ~5 min)
#
# Escribe `apply_temperature(logits, temperature)`: devuelve `logits / temperature` (logits, no
# probabilidades: la softmax viene después), un **tensor nuevo** de PyTorch del mismo `dtype`, también con
# `temperature = 1` (no modifiques la entrada ni la devuelvas tal cual). Funciona con cualquier forma `[..., V]`, deja los `-inf` como `-inf` y lanza `ValueError` si
# `temperature <= 0` (temperatura 0 no es una temperatura: es quedarse siempre
# con el máximo, la decodificación **voraz** o *greedy*, y eso se hace aparte).

# %% nbgrader={"grade_id": "apply_temperature", "solution": true}
def apply_temperature(logits, temperature):
    """logits / temperature, para un tensor de logits [..., V]."""
    ### BEGIN SOLUTION
    if temperature <= 0:
        raise ValueError("la temperatura debe ser mayor que 0 (para greedy usa el argmax)")
    return logits / temperature
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Es una división. Valida la temperatura antes: `if temperature <= 0: raise ValueError(...)`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `return logits / temperature`. No uses `logits /= temperature`: eso divide el tensor de quien te llama.
#
# </details>

# %% nbgrader={"grade_id": "test_apply_temperature", "grade": true, "points": 1}
# Comprobación del ejercicio 4 · tolerancia: 1e-6 (6 decimales del libro); rtol 1e-6 en los aleatorios.
z_libro = torch.tensor([4.0, 3.0, 1.0, 0.0])
BLOQUEADAS_T = (S.apply_temperature, S.Sampler, S.sample_next_token)
with reference_blocked(*BLOQUEADAS_T):
    for t, columna in [(1.0, [0.696387, 0.256187, 0.034671, 0.012755]),
                       (0.5, [0.878619, 0.118908, 0.002178, 0.000295]),
                       (2.0, [0.508907, 0.308668, 0.113552, 0.068873])]:
        calentados = checked_call(apply_temperature, z_libro, t)
        check_tensor(calentados, what=f"apply_temperature([4, 3, 1, 0], {t})", dtype="float", shape=(4,))
        check_close(torch.softmax(calentados, dim=-1), columna, atol=1e-6,
                    what=f"softmax(apply_temperature([4, 3, 1, 0], {t}))",
                    hint="la temperatura DIVIDE los logits; si multiplicas, T = 0.5 da la columna de T = 2")
    check_close(checked_call(apply_temperature, torch.tensor([[1.0, float("-inf")], [3.0, 1.0]]), 0.5),
                [[2.0, float("-inf")], [6.0, 2.0]], atol=1e-6, what="apply_temperature con un -inf y un lote de 2 filas",
                hint="devuelve logits, no probabilidades")
    check_raises(lambda: apply_temperature(z_libro, 0), ValueError, what="apply_temperature con T = 0")
    check_raises(lambda: apply_temperature(z_libro, -1.0), ValueError, what="apply_temperature con T = -1")
ok("la temperatura reproduce las tres columnas del capítulo")
### BEGIN HIDDEN TESTS
with hidden("apply_temperature: lotes aleatorios, -inf, logits enormes, float64 y T diminutas"):
    gen_t = torch.Generator().manual_seed(404)
    casos = []
    for _ in range(15):
        z = torch.randn(int(torch.randint(1, 4, (1,), generator=gen_t)), 11, generator=gen_t) * 6
        z[0, 3] = float("-inf")
        casos.append((z, float(torch.empty(1).uniform_(0.05, 4.0, generator=gen_t))))
    casos += [(torch.tensor([1e30, -1e30, 0.0]), 0.5), (torch.randn(2, 3, 5, dtype=torch.float64, generator=gen_t), 1.7),
              (torch.tensor([2.0, 2.0]), 1.0), (torch.tensor([3.0, -2.0]), 1e-3), (torch.tensor([1.0, 0.0]), 3)]
    esperados = [S.apply_temperature(z, t) for z, t in casos]
    with reference_blocked(*BLOQUEADAS_T):
        for (z, t), esperado in zip(casos, esperados):
            obtenido = checked_call(apply_temperature, z, t)
            check_tensor(obtenido, dtype="float", shape=esperado.shape)
            check_true(obtenido.dtype == z.dtype, "mismo dtype que la entrada")
            check_close(obtenido, esperado, atol=1e-6, rtol=1e-6)
        check_raises(lambda: apply_temperature(torch.tensor([1.0, 2.0]), -1e-9), ValueError)
        for z_oculto, t_oculto in ((torch.tensor([2.0, 1.0]), 1.0), (torch.tensor([[0.5, -1.0]]), 1)):
            r_oculto = apply_temperature(z_oculto, t_oculto)  # sin copia: se mira si devuelve la misma entrada
            check_true(r_oculto is not z_oculto and r_oculto.data_ptr() != z_oculto.data_ptr(),
                       "debe devolver un tensor nuevo, también cuando no recorta nada")
### END HIDDEN TESTS

# %% [markdown]
# La figura pone lado a lado la tabla del capítulo y lo que pasa con temperaturas entre 0.1 y 5: la
# probabilidad de `París` cae y la entropía sube.

# %%
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.6))
pos = np.arange(4)
for k, t in enumerate([0.5, 1.0, 2.0]):
    izq.bar(pos + (k - 1) * 0.27, lf.softmax(z_libro.numpy(), temperature=t), width=0.27, label=f"T = {t}")
izq.set_xticks(pos, candidatos_libro)
izq.set_ylabel("probabilidad")
izq.set_title("Mismos logits [4, 3, 1, 0], tres temperaturas")
izq.legend()
temps = np.linspace(0.1, 5, 200)
curvas = np.array([lf.softmax(z_libro.numpy(), temperature=t) for t in temps])
der.plot(temps, curvas[:, 0], label="p(París)")
der.plot(temps, lf.entropy(curvas), label="entropía (nats)")
der.axhline(math.log(4), color="gray", linestyle=":", label="máximo: ln 4")
der.set_xlabel("temperatura T")
der.set_title("Subir T aplana la distribución")
der.legend()
plt.tight_layout()
plt.show()
print("entropía a T = 0.5, 1, 2:", np.round(lf.entropy([lf.softmax(z_libro.numpy(), temperature=t) for t in (0.5, 1, 2)]), 4))

# %% [markdown]
# ## 8. Top-k y top-p: recortar la cola
#
# La temperatura cambia el reparto, pero nunca deja a nadie a cero: con un vocabulario de 50 000 tokens, la
# cola de candidatos absurdos suma bastante. Los otros dos mandos **recortan** esa cola y vuelven a normalizar
# lo que queda.
#
# **Top-k** se queda con los $k$ tokens más probables. Con $k = 2$ sobreviven `París` y `Madrid`; al
# renormalizar, $0.696/(0.696+0.256) = 0.731$ y $0.269$. La regla de `transformers` con empates: se conserva
# todo token cuyo logit sea **igual** al k-ésimo más alto, así que un empate en la frontera puede dejar más de
# $k$ candidatos.
#
# ### Ejercicio 5 · `top_k_filter` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `top_k_filter(logits, k, min_tokens_to_keep=1)` sobre un tensor `[..., V]`:
#
# - devuelve un tensor **nuevo** de PyTorch, del mismo `dtype` (no modifiques la entrada ni la devuelvas tal cual,
#   aunque no se elimine nada), con los mismos logits y `-inf` en los eliminados;
# - conserva los tokens cuyo logit es mayor o igual que el k-ésimo más alto de su fila (empates incluidos);
# - `k` se sube a `min_tokens_to_keep` y se recorta al tamaño del vocabulario; `k < 1` lanza `ValueError`.
#
# Pista: `torch.topk(logits, k, dim=-1).values[..., -1:]` es el k-ésimo valor de cada fila, y
# `tensor.masked_fill(mascara, float("-inf"))` pone `-inf` donde la máscara es `True`.

# %% nbgrader={"grade_id": "top_k_filter", "solution": true}
def top_k_filter(logits, k, min_tokens_to_keep=1):
    """Deja los k logits más altos de cada fila (con empates) y pone -inf en el resto."""
    ### BEGIN SOLUTION
    if k < 1:
        raise ValueError("k debe ser al menos 1")
    k = min(max(k, min_tokens_to_keep), logits.shape[-1])
    umbral = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < umbral, float("-inf"))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Primero ajusta `k`: `k = min(max(k, min_tokens_to_keep), logits.shape[-1])`. Después, el k-ésimo valor de cada
# fila te da un umbral: quien esté por debajo, fuera.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `umbral = torch.topk(logits, k, dim=-1).values[..., -1:]` y
# `return logits.masked_fill(logits < umbral, float("-inf"))`. El `<` (no `<=`) conserva los empatados.
#
# </details>

# %% nbgrader={"grade_id": "test_top_k_filter", "grade": true, "points": 2}
# Comprobación del ejercicio 5 · tolerancia: 1e-6 (valores copiados de la entrada o probabilidades de 6 decimales).
z_libro = torch.tensor([4.0, 3.0, 1.0, 0.0])  # París, Madrid, Lyon, azul
inf = float("inf")
BLOQUEADAS_FILTROS = (S.top_k_filter, S.top_p_filter, S.min_p_filter, S.Sampler, S.sample_next_token)
with reference_blocked(*BLOQUEADAS_FILTROS):
    k2 = checked_call(top_k_filter, z_libro, 2)
    check_tensor(k2, what="top_k_filter([4, 3, 1, 0], k=2)", dtype="float", shape=(4,))
    check_close(k2, [4.0, 3.0, -inf, -inf], atol=1e-6, what="top_k_filter([4, 3, 1, 0], k=2)",
                hint="los eliminados valen -inf (no 0: un logit 0 sigue siendo un candidato)")
    check_close(torch.softmax(k2, dim=-1), [0.731059, 0.268941, 0.0, 0.0], atol=1e-6, what="probabilidades tras top-k = 2")
    check_close(torch.softmax(checked_call(top_k_filter, z_libro, 3), dim=-1), [0.705385, 0.259496, 0.035119, 0.0],
                atol=1e-6, what="probabilidades tras top-k = 3")
    check_close(checked_call(top_k_filter, torch.tensor([3.0, 1.0, 1.0, 0.0]), 2), [3.0, 1.0, 1.0, -inf], atol=1e-6,
                what="top-k = 2 con un empate en la frontera", hint="los empatados con el k-ésimo se quedan todos")
    check_close(checked_call(top_k_filter, z_libro, 10), z_libro, atol=0, what="top-k con k mayor que el vocabulario")
    check_close(checked_call(top_k_filter, torch.tensor([[1.0, 5.0, 2.0], [9.0, 0.0, 4.0]]), 1),
                [[-inf, 5.0, -inf], [9.0, -inf, -inf]], atol=0, what="top-k = 1 en un lote de 2 filas",
                hint="cada fila tiene su propio k-ésimo valor: dim=-1")
    check_close(checked_call(top_k_filter, z_libro, 1, min_tokens_to_keep=3), [4.0, 3.0, 1.0, -inf], atol=0,
                what="top-k = 1 con min_tokens_to_keep = 3", hint="k se sube a min_tokens_to_keep")
    check_raises(lambda: top_k_filter(z_libro, 0), ValueError, what="top_k_filter con k = 0")
ok("top-k deja los k mejores, con empates, y pone -inf en el resto")
### BEGIN HIDDEN TESTS
with hidden("top_k_filter: lotes aleatorios, empates, -inf, logits enormes y min_tokens_to_keep"):
    gen_t = torch.Generator().manual_seed(405)
    casos = []
    for _ in range(12):
        casos.append((torch.randn(3, 17, generator=gen_t) * 4, int(torch.randint(1, 20, (1,), generator=gen_t)), 1))
    casos.append((torch.randint(0, 4, (4, 12), generator=gen_t).float(), 3, 1))  # muchos empates
    casos.append((torch.tensor([[2.0, -inf, 2.0, -inf, 1.0], [-inf, -inf, 0.5, -inf, -inf]]), 3, 1))  # -inf
    casos.append((torch.tensor([1e30, -1e30, 0.0, 1e30]), 1, 1))
    casos.append((torch.randn(2, 3, 9, generator=gen_t), 2, 1))  # lote 3D
    casos.append((torch.randn(5, 8, generator=gen_t), 2, 4))  # min_tokens_to_keep sube k
    casos.append((torch.randn(6, dtype=torch.float64, generator=gen_t), 3, 1))
    casos.append((torch.randn(4, 6, generator=gen_t), 6, 1))  # k = vocabulario justo
    esperados = [S.top_k_filter(z, k, min_tokens_to_keep=m) for z, k, m in casos]
    with reference_blocked(*BLOQUEADAS_FILTROS):
        for (z, k, m), esperado in zip(casos, esperados):
            obtenido = checked_call(top_k_filter, z, k, min_tokens_to_keep=m)
            check_tensor(obtenido, dtype="float", shape=esperado.shape)
            check_true(obtenido.dtype == z.dtype, "mismo dtype que la entrada")
            check_close(obtenido, esperado, atol=1e-6)
        check_raises(lambda: top_k_filter(torch.randn(5), -2), ValueError)
        for z_oculto, k_oculto in ((torch.tensor([2.0, 1.0, 0.0]), 3), (torch.tensor([[0.5, -1.0]]), 50)):
            r_oculto = top_k_filter(z_oculto, k_oculto)  # sin copia: se mira si devuelve la misma entrada
            check_true(r_oculto is not z_oculto and r_oculto.data_ptr() != z_oculto.data_ptr(),
                       "debe devolver un tensor nuevo, también cuando no recorta nada")
### END HIDDEN TESTS

# %% [markdown]
# **Top-p** (*nucleus sampling*, Holtzman et al.) no fija cuántos candidatos, sino **cuánta masa** se conserva:
# ordena los tokens de más a menos probable y se queda con el conjunto **más pequeño** cuya probabilidad
# acumulada **alcanza** $p$. El token que cruza el umbral se queda dentro. Con los números del capítulo:
#
# | token | p | acumulada |
# |---|---|---|
# | París | 0.696 | 0.696 |
# | Madrid | 0.256 | 0.952 |
# | Lyon | 0.035 | 0.987 |
# | azul | 0.013 | 1.000 |
#
# Con $p = 0.9$, `París` solo no basta (0.696 < 0.9); al añadir `Madrid` se llega a 0.952 ≥ 0.9 y se para:
# quedan dos, renormalizados a `[0.731, 0.269, 0, 0]`. Con $p = 0.5$ queda uno; con $0.96$, tres; con $0.99$,
# los cuatro. La diferencia con top-k: top-k fija el número y deja variar la masa; top-p fija la masa y deja
# variar el número. Ante una distribución concentrada, top-p se queda con pocos tokens; ante una plana, con
# muchos.
#
# ### Ejercicio 6 · `top_p_filter`, encuentra el error (3 puntos · dificultad ★★★ · ~20 min)
#
# `top_p_filter(logits, p, min_tokens_to_keep=1)` trabaja sobre un tensor `[..., V]` y debe cumplir esto:
#
# - calcula las probabilidades (softmax de la fila), ordénalas de mayor a menor y quédate con el prefijo más
#   corto cuya suma alcanza `p`, **incluido el token que la cruza**; es decir, un token se queda si la masa de
#   los que van **antes** que él es menor que `p`;
# - los `min_tokens_to_keep` más probables se quedan siempre (con `p = 0` solo queda el más probable);
# - devuelve un tensor nuevo (del mismo `dtype`, sin modificar la entrada ni devolverla tal cual, también con
#   `p = 1`) con los logits de los supervivientes **en su posición original** y `-inf` en el resto; `p` fuera de
#   `[0, 1]` lanza `ValueError`.
#
# La celda trae una implementación completa, ordenada y vectorizada, que pasa casi todo... pero con `p = 0.9` se
# queda solo con `París`. Lee cada línea, encuentra el error y corrígelo (es una sola línea).

# %% nbgrader={"grade_id": "top_p_filter", "solution": true}
def top_p_filter(logits, p, min_tokens_to_keep=1):
    """Nucleus: el conjunto mínimo de tokens más probables cuya masa alcanza p; -inf en el resto."""
    if not 0.0 <= p <= 1.0:
        raise ValueError("p debe estar en [0, 1]")
    probs = torch.softmax(logits, dim=-1)
    ordenadas, indices = torch.sort(probs, descending=True, dim=-1)
    acumulada = torch.cumsum(ordenadas, dim=-1)
    ### BEGIN SOLUTION
    quitar = acumulada - ordenadas >= p  # la masa de los que van ANTES de cada token ya alcanza p
    ### END SOLUTION
    ### BEGIN BUGGY
    # quitar = acumulada >= p
    ### END BUGGY
    quitar[..., :min_tokens_to_keep] = False
    quitar = quitar.scatter(-1, indices, quitar)  # de vuelta al orden original
    return logits.masked_fill(quitar, float("-inf"))


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Haz la tabla del capítulo a mano con la regla de la celda: con `p = 0.9`, ¿qué vale `acumulada` para `Madrid`
# y qué decide la línea de `quitar`? Madrid es justo el token que **cruza** el umbral.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Un token se queda si la masa de los que van **antes** que él es menor que `p`. `acumulada` no es esa masa: ya
# incluye al propio token. ¿Cómo sacas, con los tensores que ya tienes, la masa de los anteriores?
#
# </details>

# %% nbgrader={"grade_id": "test_top_p_filter", "grade": true, "points": 3}
# Comprobación del ejercicio 6 · tolerancia: 1e-6 (logits copiados o probabilidades de 6 decimales).
z_libro = torch.tensor([4.0, 3.0, 1.0, 0.0])  # París, Madrid, Lyon, azul
inf = float("inf")
with reference_blocked(*BLOQUEADAS_FILTROS):
    p9 = checked_call(top_p_filter, z_libro, 0.9)
    check_tensor(p9, what="top_p_filter([4, 3, 1, 0], 0.9)", dtype="float", shape=(4,))
    check_close(torch.softmax(p9, dim=-1), [0.731059, 0.268941, 0.0, 0.0], atol=1e-6,
                what="top-p = 0.9 sobre [4, 3, 1, 0]",
                hint="el token que cruza el umbral se queda: la acumulada pasa de 0.696 a 0.952")
    check_close(p9, [4.0, 3.0, -inf, -inf], atol=1e-6, what="logits tras top-p = 0.9",
                hint="devuelve los logits originales de los supervivientes y -inf en el resto")
    permutados = torch.tensor([1.0, 4.0, 0.0, 3.0])  # los mismos logits, en otro orden
    check_close(checked_call(top_p_filter, permutados, 0.9), [-inf, 4.0, -inf, 3.0], atol=1e-6,
                what="top-p = 0.9 con la entrada desordenada",
                hint="ordena por probabilidad para decidir, pero devuelve cada logit en su posición original")
    for umbral, quedan in [(0.5, 1), (0.7, 2), (0.96, 3), (0.99, 4)]:
        check_equal(int(torch.isfinite(checked_call(top_p_filter, z_libro, umbral)).sum()), quedan,
                    what=f"tokens que quedan con top-p = {umbral}")
    check_close(torch.softmax(checked_call(top_p_filter, z_libro, 1.0), dim=-1), [0.696387, 0.256187, 0.034671, 0.012755],
                atol=1e-6, what="top-p = 1 (no recorta nada)")
    check_close(checked_call(top_p_filter, torch.tensor([[4.0, 3.0, 1.0, 0.0], [0.0, 0.0, 0.0, 9.0]]), 0.9),
                [[4.0, 3.0, -inf, -inf], [-inf, -inf, -inf, 9.0]], atol=1e-6, what="top-p = 0.9 en un lote de 2 filas")
    check_raises(lambda: top_p_filter(z_libro, 1.5), ValueError, what="top_p_filter con p = 1.5")
ok("top-p conserva el token que cruza el umbral y respeta el orden original")
### BEGIN HIDDEN TESTS
with hidden("top_p_filter: lotes aleatorios, empates, -inf, logits enormes, p extremos, masa justa y min_tokens_to_keep"):
    gen_t = torch.Generator().manual_seed(406)
    casos = []  # (logits, p, min_tokens_to_keep, hay empates en la frontera)
    for _ in range(15):
        z = torch.randn(3, 23, generator=gen_t) * float(torch.empty(1).uniform_(0.5, 5, generator=gen_t))
        casos.append((z, float(torch.rand(1, generator=gen_t)), 1, False))
    casos += [(torch.randn(4, 10, generator=gen_t), 0.0, 1, False),  # solo el más probable
              (torch.randn(4, 10, generator=gen_t), 1.0, 1, False),
              (torch.randn(2, 3, 9, generator=gen_t) * 3, 0.8, 1, False),  # lote 3D
              (torch.randn(5, 12, generator=gen_t) * 6, 0.3, 3, False),  # min_tokens_to_keep
              (torch.tensor([[2.0, -inf, 1.0, -inf, 0.5], [-inf, 3.0, -inf, -inf, -inf]]), 0.9, 1, False),  # -inf
              (torch.tensor([[1e4, 0.0, -1e4, 5.0], [30.0, 29.0, 28.0, -30.0]]), 0.95, 1, False),  # logits enormes
              (torch.tensor([[1.0, 1.0, 1.0, 1.0, 0.0], [2.0, 0.0, 2.0, 0.0, 2.0]]), 0.5, 1, True),
              # masa exactamente igual a p (probabilidades exactas en binario): el primero ya alcanza 0.5; con 0.75
              # hacen falta dos, y el segundo es cualquiera de los dos empatados
              (torch.log(torch.tensor([0.5, 0.25, 0.25])), 0.5, 1, False),
              (torch.log(torch.tensor([0.25, 0.5, 0.25])), 0.75, 1, True),
              (torch.randn(7, dtype=torch.float64, generator=gen_t), 0.7, 1, False)]
    esperados = [torch.softmax(S.top_p_filter(z, p, min_tokens_to_keep=m), dim=-1) for z, p, m, _ in casos]
    with reference_blocked(*BLOQUEADAS_FILTROS):
        for (z, p, m, empates), esperado in zip(casos, esperados):
            obtenido = checked_call(top_p_filter, z, p, min_tokens_to_keep=m)
            check_tensor(obtenido, dtype="float", shape=esperado.shape)
            check_true(obtenido.dtype == z.dtype, "mismo dtype que la entrada")
            obtenido = torch.softmax(obtenido, dim=-1)
            if empates:  # con empates en la frontera, cuál sobrevive es arbitrario: se compara el reparto
                obtenido, esperado = obtenido.sort(dim=-1).values, esperado.sort(dim=-1).values
            check_close(obtenido, esperado, atol=1e-6)
        check_raises(lambda: top_p_filter(torch.randn(4), -0.1), ValueError)
        for z_oculto, p_oculto in ((torch.tensor([2.0, 1.0, 0.0]), 1.0), (torch.tensor([[0.5, -1.0]]), 1)):
            r_oculto = top_p_filter(z_oculto, p_oculto)  # sin copia: se mira si devuelve la misma entrada
            check_true(r_oculto is not z_oculto and r_oculto.data_ptr() != z_oculto.data_ptr(),
                       "debe devolver un tensor nuevo, también cuando no recorta nada")
### END HIDDEN TESTS

# %% [markdown]
# En la figura, a la izquierda, los cuatro candidatos del capítulo ordenados, con la acumulada y los dos
# cortes; a la derecha, los mismos mandos sobre una distribución más plana (la del correo, con más
# candidatos): con la misma $p = 0.9$, top-p ahora se queda con muchos más tokens, mientras top-k sigue en 2.

# %%
candidatos = ["10", "9", "11", "8", "12", "cinco", "7", "reunión", "tres", "azul"]
z_hora = torch.tensor([4.2, 3.9, 3.0, 2.6, 2.2, 1.5, 1.3, 1.1, 0.4, -0.7])  # los del libro + candidatos inventados


def dibuja_nucleo(eje, nombres, z, p=0.9, k=2):
    probs = torch.softmax(z, dim=-1)
    orden = torch.argsort(probs, descending=True)
    ordenadas = probs[orden].numpy()
    acumulada = np.cumsum(ordenadas)
    dentro = torch.isfinite(S.top_p_filter(z, p))[orden].numpy()
    colores = ["tab:green" if d else "tab:gray" for d in dentro]
    eje.bar(range(len(z)), ordenadas, color=colores)
    eje.plot(range(len(z)), acumulada, marker="o", color="k", label="acumulada")
    eje.axhline(p, color="tab:red", linestyle="--", label=f"p = {p}")
    eje.axvline(k - 0.5, color="tab:purple", linestyle=":", label=f"corte de top-k = {k}")
    eje.set_xticks(range(len(z)), [nombres[i] for i in orden.tolist()], rotation=45)
    eje.set_title(f"top-p = {p}: quedan {int(dentro.sum())} (en verde)")
    eje.legend(loc="center right")


fig, (izq, der) = plt.subplots(1, 2, figsize=(12, 4))
dibuja_nucleo(izq, candidatos_libro, z_libro)
dibuja_nucleo(der, candidatos, z_hora)
plt.tight_layout()
plt.show()
print("acumulada del capítulo:", np.round(np.cumsum(lf.softmax(z_libro.numpy())), 6))

# %% [markdown]
# ### Min-p: un umbral relativo al favorito
#
# Min-p es un mando más reciente: elimina los tokens cuya probabilidad es menor que una fracción del
# **máximo**, $p_i < \text{min\_p} \cdot \max_j p_j$. Si el modelo está muy seguro, el umbral sube y corta
# mucho; si duda, baja y deja pasar más. Con el ejemplo del capítulo y `min_p = 0.1` el umbral es
# $0.1 \cdot 0.696 = 0.0696$: quedan `París` y `Madrid`. Con `min_p = 0.04` el umbral baja a $0.0279$ y también
# entra `Lyon` (0.0347).
#
# ### Ejercicio 7 · `min_p_filter` (1 punto · dificultad ★★☆ · ~15 min)
#
# Escribe `min_p_filter(logits, min_p, min_tokens_to_keep=1)`: pon `-inf` en los tokens cuya probabilidad es
# **estrictamente menor** que `min_p` por la probabilidad máxima de su fila (el que está justo en el umbral se
# queda), conserva siempre los `min_tokens_to_keep` más probables (todos, si `min_tokens_to_keep` es mayor que el
# vocabulario) y lanza `ValueError` si `min_p` no está en `[0, 1]`. Devuelve un tensor nuevo, del mismo `dtype`,
# también con `min_p = 0`, sin modificar la entrada ni devolverla tal cual.

# %% nbgrader={"grade_id": "min_p_filter", "solution": true}
def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    """Quita los tokens con probabilidad < min_p · (probabilidad máxima de la fila)."""
    ### BEGIN SOLUTION
    if not 0.0 <= min_p <= 1.0:
        raise ValueError("min_p debe estar en [0, 1]")
    probs = torch.softmax(logits, dim=-1)
    quitar = probs < min_p * probs.amax(dim=-1, keepdim=True)
    mejores = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    quitar = quitar.scatter(-1, mejores, False)
    return logits.masked_fill(quitar, float("-inf"))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Las probabilidades salen de la softmax de cada fila; el umbral de cada fila es `min_p` por su máximo
# (`probs.amax(dim=-1, keepdim=True)`). Los `min_tokens_to_keep` mejores se rescatan al final.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `quitar = probs < min_p * maximo`; `mejores = torch.topk(probs, min(min_tokens_to_keep, V), dim=-1).indices`;
# `quitar = quitar.scatter(-1, mejores, False)`; y `logits.masked_fill(quitar, float("-inf"))`.
#
# </details>

# %% nbgrader={"grade_id": "test_min_p_filter", "grade": true, "points": 1}
# Comprobación del ejercicio 7 · tolerancia: 1e-6.
z_libro = torch.tensor([4.0, 3.0, 1.0, 0.0])  # París, Madrid, Lyon, azul
inf = float("inf")
with reference_blocked(*BLOQUEADAS_FILTROS):
    m1 = checked_call(min_p_filter, z_libro, 0.1)
    check_tensor(m1, what="min_p_filter([4, 3, 1, 0], 0.1)", dtype="float", shape=(4,))
    check_close(torch.softmax(m1, dim=-1), [0.731059, 0.268941, 0.0, 0.0], atol=1e-6,
                what="min-p = 0.1 sobre [4, 3, 1, 0]", hint="el umbral es min_p por la probabilidad MÁXIMA (0.696)")
    check_close(torch.softmax(checked_call(min_p_filter, z_libro, 0.04), dim=-1), [0.705385, 0.259496, 0.035119, 0.0],
                atol=1e-6, what="min-p = 0.04 (quedan tres)")
    check_close(checked_call(min_p_filter, z_libro, 0.0), z_libro, atol=0, what="min-p = 0 (no quita nada)")
    check_close(checked_call(min_p_filter, torch.tensor([2.0, 2.0, 0.0]), 1.0), [2.0, 2.0, -inf], atol=1e-6,
                what="min-p = 1 con dos favoritos empatados", hint="el que está justo en el umbral se queda: compara con <")
    check_close(checked_call(min_p_filter, torch.tensor([9.0, 0.0, 0.0]), 0.5, min_tokens_to_keep=2), [9.0, 0.0, -inf],
                atol=1e-6, what="min-p = 0.5 con min_tokens_to_keep = 2")
    check_raises(lambda: min_p_filter(z_libro, 2.0), ValueError, what="min_p_filter con min_p = 2")
ok("min-p corta en relación con el favorito")
### BEGIN HIDDEN TESTS
with hidden("min_p_filter: lotes aleatorios, -inf, logits enormes, umbral exacto y min_tokens_to_keep"):
    gen_t = torch.Generator().manual_seed(407)
    casos = [(torch.randn(3, 15, generator=gen_t) * 3, float(torch.empty(1).uniform_(0.01, 0.6, generator=gen_t)), 1)
             for _ in range(12)]
    casos += [(torch.tensor([[3.0, -inf, 1.0, 0.0], [-inf, 2.0, 2.0, -inf]]), 0.2, 1),
              (torch.tensor([1e4, 0.0, 9999.0]), 0.5, 1), (torch.randn(2, 3, 8, generator=gen_t) * 4, 0.15, 1),
              (torch.randn(4, 9, generator=gen_t) * 8, 0.3, 3), (torch.randn(6, dtype=torch.float64, generator=gen_t), 0.4, 1),
              (torch.log(torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64)), 0.5, 1)]  # 0.25 = 0.5 · 0.5: se queda
    esperados = [S.min_p_filter(z, m_p, min_tokens_to_keep=m) for z, m_p, m in casos]
    with reference_blocked(*BLOQUEADAS_FILTROS):
        for (z, m_p, m), esperado in zip(casos, esperados):
            obtenido = checked_call(min_p_filter, z, m_p, min_tokens_to_keep=m)
            check_tensor(obtenido, dtype="float", shape=esperado.shape)
            check_true(obtenido.dtype == z.dtype, "mismo dtype que la entrada")
            check_close(obtenido, esperado, atol=1e-6)
        check_raises(lambda: min_p_filter(torch.randn(4), -0.5), ValueError)
        check_close(checked_call(min_p_filter, torch.tensor([9.0, 0.0, 0.0]), 0.5, min_tokens_to_keep=5),
                    [9.0, 0.0, 0.0], atol=1e-6)  # más que el vocabulario: se quedan todos
        check_close(checked_call(min_p_filter, torch.tensor([[9.0, 0.0], [0.0, 9.0]]), 0.9, min_tokens_to_keep=3),
                    [[9.0, 0.0], [0.0, 9.0]], atol=1e-6)
        for z_oculto, m_oculto in ((torch.tensor([2.0, 1.0, 0.0]), 0.0), (torch.tensor([[0.5, -1.0]]), 0)):
            r_oculto = min_p_filter(z_oculto, m_oculto)  # sin copia: se mira si devuelve la misma entrada
            check_true(r_oculto is not z_oculto and r_oculto.data_ptr() != z_oculto.data_ptr(),
                       "debe devolver un tensor nuevo, también cuando no recorta nada")
### END HIDDEN TESTS

# %% [markdown]
# ## 9. ¿Calentar antes o después de recortar? Depende de la biblioteca
#
# Con varios mandos a la vez, importa en qué orden se aplican, porque la temperatura cambia las probabilidades sobre
# las que deciden los recortes. Y no hay un orden universal:
#
# - **Hugging Face `transformers`** (y `llmlab`, que lo reproduce): temperatura → top-k → top-p → min-p → softmax
#   → dado. Primero se calienta, después se recorta.
# - **llama.cpp**, en su cadena por defecto: top-k → top-p → min-p → temperatura → dado (con otros filtros propios
#   por medio). Primero se recorta, y la temperatura solo reparte la probabilidad entre los supervivientes. Se puede
#   cambiar con su opción `--samplers`.
#
# Con los logits del capítulo, `T = 2` y top-p = 0.9:
#
# - **calentar y recortar** (`transformers`): a `T = 2` la acumulada es 0.509, 0.818, 0.931, así que quedan tres
#   tokens: `[0.5465, 0.3315, 0.1220, 0]`;
# - **recortar y calentar** (llama.cpp): top-p a `T = 1` deja dos, y la temperatura solo reparte entre ellos:
#   `[0.6225, 0.3775, 0, 0]`.
#
# Ninguno está mal: son dos políticas distintas con los mismos números en la configuración. La consecuencia
# práctica es que **unos mandos no se pueden copiar de una biblioteca a otra y esperar el mismo comportamiento**:
# en llama.cpp, subir la temperatura nunca añade candidatos nuevos; en `transformers`, sí.
#
# ### Ejercicio 8 · `final_probs` y `sample_next_token` (3 puntos · dificultad ★★★ · ~25 min)
#
# - `final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False)`: la
#   distribución de la que se tira el dado, un tensor de probabilidades de la forma de `logits`. Con
#   `temperature_last=False` (el orden de `transformers`) aplica la temperatura y después, en este orden, los recortes
#   que no sean `None`; con `temperature_last=True` (el de llama.cpp), primero los recortes y al final la
#   temperatura. Termina con la softmax. Puedes usar tus funciones de los ejercicios anteriores o, si alguna no te
#   ha salido, las de `llmlab.sampling` (`S.apply_temperature`, `S.top_k_filter`, …): aquí se evalúa el orden.
# - `sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None)`:
#   con `greedy=True` (decodificación voraz) devuelve el `argmax` de los logits (último eje; si hay empate, el índice
#   menor, como hace `torch.argmax`) e ignora los mandos; si
#   no, tira el dado **una vez por fila**, con las probabilidades de `final_probs` (orden de `transformers`), usando
#   `torch.multinomial(probs, num_samples=1, generator=generator)` y quitando la última dimensión (`.squeeze(-1)`).
#   Devuelve un tensor de enteros con forma `logits.shape[:-1]` (un escalar para una sola fila: `int(...)` lo
#   convierte). Pasar el mismo `generator` con la misma semilla da los mismos tokens que `llmlab.sampling`.
#
# Ninguna de las dos modifica `logits`.

# %% nbgrader={"grade_id": "sample_next_token", "solution": true}
def final_probs(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, temperature_last=False):
    """Probabilidades finales: temperatura -> top-k -> top-p -> min-p -> softmax (o la temperatura al final)."""
    ### BEGIN SOLUTION
    scores = logits if temperature_last else apply_temperature(logits, temperature)
    if top_k is not None:
        scores = top_k_filter(scores, top_k)
    if top_p is not None:
        scores = top_p_filter(scores, top_p)
    if min_p is not None:
        scores = min_p_filter(scores, min_p)
    if temperature_last:
        scores = apply_temperature(scores, temperature)
    return torch.softmax(scores, dim=-1)
    ### END SOLUTION


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, min_p=None, greedy=False, generator=None):
    """Elige el siguiente token de cada fila: argmax (voraz) o una tirada con los mandos."""
    ### BEGIN SOLUTION
    if greedy:
        return torch.argmax(logits, dim=-1)
    probs = final_probs(logits, temperature, top_k, top_p, min_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `final_probs` es una cadena de `if`: cada mando que no sea `None` transforma `scores`, y al final `torch.softmax`.
# La temperatura va al principio o al final según `temperature_last`. En `sample_next_token`, el caso voraz
# va primero y no llama a `final_probs`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `torch.multinomial` necesita probabilidades en las filas de una matriz (o un vector): con un lote `[B, V]`
# devuelve `[B, 1]`, y `.squeeze(-1)` lo deja en `[B]`; con un vector `[V]`, devuelve `[1]` y `.squeeze(-1)` un
# escalar. Pasa siempre `generator=generator`.
#
# </details>

# %% nbgrader={"grade_id": "test_sample_next_token", "grade": true, "points": 3}
# Comprobación del ejercicio 8 · tolerancias: 1e-6 y 1e-4 (según los decimales del libro); ±0.01 y ±0.015 en las
# frecuencias de 20 000 tiradas (unas 4 desviaciones típicas).
z_libro = torch.tensor([4.0, 3.0, 1.0, 0.0])  # París, Madrid, Lyon, azul
BLOQUEADAS_MUESTREO = (S.Sampler, S.sample_next_token)
with reference_blocked(*BLOQUEADAS_MUESTREO):
    sin_mandos = checked_call(final_probs, z_libro)
    check_tensor(sin_mandos, what="final_probs([4, 3, 1, 0])", dtype="float", shape=(4,))
    check_close(sin_mandos, [0.696387, 0.256187, 0.034671, 0.012755], atol=1e-6, what="final_probs sin mandos")
    check_close(checked_call(final_probs, z_libro, temperature=2.0, top_p=0.9), [0.5465, 0.3315, 0.1220, 0.0], atol=1e-4,
                what="T = 2 y top-p = 0.9, orden de transformers",
                hint="primero la temperatura, después el recorte (con T = 2 quedan 3 tokens)")
    check_close(checked_call(final_probs, z_libro, temperature=2.0, top_p=0.9, temperature_last=True),
                [0.6225, 0.3775, 0.0, 0.0], atol=1e-4, what="T = 2 y top-p = 0.9, orden de llama.cpp",
                hint="con temperature_last=True se recorta primero (quedan 2) y la temperatura va al final")
    check_close(checked_call(final_probs, z_libro, temperature=0.5, top_p=0.9), [0.8808, 0.1192, 0.0, 0.0], atol=1e-4,
                what="T = 0.5 y top-p = 0.9")
    check_close(checked_call(final_probs, z_libro, top_k=3, top_p=0.96), [0.731059, 0.268941, 0.0, 0.0], atol=1e-6,
                what="top-k = 3 y top-p = 0.96",
                hint="top-p decide sobre lo que dejó top-k, ya renormalizado: 0.705 + 0.259 = 0.965 ≥ 0.96")
    voraz_t = checked_call(sample_next_token, torch.tensor([1.0, 4.0, 0.0, 3.0]), greedy=True)
    check_tensor(voraz_t, what="sample_next_token(..., greedy=True)", dtype="int")
    check_equal(int(voraz_t), 1, what="voraz sobre [1, 4, 0, 3]", hint="voraz = argmax de los logits")
    lote_libro = z_libro.expand(20_000, 4)  # 20 000 filas iguales: 20 000 tiradas en una llamada
    fichas = checked_call(sample_next_token, lote_libro, generator=torch.Generator().manual_seed(0))
    check_tensor(fichas, what="sample_next_token de un lote de 20 000 filas", dtype="int", shape=(20_000,),
                 hint="una tirada por fila: multinomial(probs, 1).squeeze(-1)")
    check_close(torch.bincount(fichas, minlength=4) / 20_000, [0.696, 0.256, 0.035, 0.013], atol=0.01,
                what="frecuencias de 20 000 tiradas a T = 1", hint="tira el dado con las probabilidades, no con los logits")
    fichas_t2 = checked_call(sample_next_token, lote_libro, temperature=2.0, top_p=0.9,
                             generator=torch.Generator().manual_seed(1))
    check_close(torch.bincount(fichas_t2, minlength=4) / 20_000, [0.5465, 0.3315, 0.1220, 0.0], atol=0.015,
                what="frecuencias de 20 000 tiradas con T = 2 y top-p = 0.9")
    a = checked_call(sample_next_token, lote_libro[:50], generator=torch.Generator().manual_seed(7))
    b = checked_call(sample_next_token, lote_libro[:50], generator=torch.Generator().manual_seed(7))
    check_equal(a, b, what="dos tiradas con la misma semilla", hint="pasa generator=generator a torch.multinomial")
ok("el muestreo respeta el orden de los mandos y es reproducible con una semilla")
### BEGIN HIDDEN TESTS
with hidden("final_probs y sample_next_token: mandos combinados, los dos órdenes, lotes, voraz y semillas"):
    gen_t = torch.Generator().manual_seed(408)
    combinaciones = [dict(), dict(temperature=0.7), dict(temperature=1.8, top_k=5), dict(temperature=2.5, top_p=0.8),
                     dict(top_k=6, top_p=0.7), dict(temperature=0.6, min_p=0.05), dict(temperature=3.0, top_p=0.9, min_p=0.1),
                     dict(temperature=1.5, top_k=8, top_p=0.95, min_p=0.02),
                     dict(temperature=2.5, top_p=0.8, temperature_last=True), dict(temperature=0.4, top_k=4, temperature_last=True),
                     dict(temperature=3.0, top_k=6, top_p=0.9, min_p=0.1, temperature_last=True)]
    zs = [torch.randn(4, 19, generator=gen_t) * 3 for _ in combinaciones]
    probs_ref = [S.Sampler(do_sample=True, **mandos).probs(z) for z, mandos in zip(zs, combinaciones)]
    muestreo = [m for m in combinaciones if not m.get("temperature_last")]
    tiradas_ref = [S.sample_next_token(z[:1].expand(400, 19), do_sample=True, generator=torch.Generator().manual_seed(11),
                                       **mandos) for z, mandos in zip(zs, muestreo)]
    z = torch.randn(3, 11, generator=gen_t)
    una_ref = int(S.sample_next_token(z[0], do_sample=True, generator=torch.Generator().manual_seed(3)))
    z64 = torch.randn(2, 7, dtype=torch.float64, generator=gen_t) * 4
    probs64_ref = S.Sampler(do_sample=True, temperature=0.8, top_p=0.9).probs(z64)
    with reference_blocked(*BLOQUEADAS_MUESTREO):
        for z_i, mandos, esperado in zip(zs, combinaciones, probs_ref):
            obtenido = checked_call(final_probs, z_i, **mandos)
            check_tensor(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, atol=1e-5)
        check_close(checked_call(final_probs, z64, temperature=0.8, top_p=0.9), probs64_ref, atol=1e-5)
        for z_i, mandos, esperado in zip(zs, muestreo, tiradas_ref):
            obtenido = checked_call(sample_next_token, z_i[:1].expand(400, 19), generator=torch.Generator().manual_seed(11),
                                    **mandos)
            check_tensor(obtenido, dtype="int", shape=(400,))
            check_true(float((obtenido == esperado).float().mean()) >= 0.99, "misma semilla, mismas tiradas")
        check_equal(checked_call(sample_next_token, z, greedy=True), torch.argmax(z, dim=-1))
        check_equal(checked_call(sample_next_token, z, temperature=0.3, top_k=2, greedy=True), torch.argmax(z, dim=-1))
        empates_oculto = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [0.0, -1.0, 5.0, 5.0]])
        check_equal(checked_call(sample_next_token, empates_oculto, greedy=True), [1, 0, 2])
        check_equal(int(checked_call(sample_next_token, torch.tensor([4.0, 1.0, 4.0]), greedy=True)), 0)
        uno = checked_call(sample_next_token, z[0], generator=torch.Generator().manual_seed(3))
        check_true(tuple(uno.shape) == (), "una sola fila da un escalar")
        check_equal(int(uno), una_ref)
### END HIDDEN TESTS

# %%
ordenes = {
    "transformers: T = 2 y después top-p 0.9": S.Sampler(do_sample=True, temperature=2.0, top_p=0.9).probs(z_libro),
    "llama.cpp: top-p 0.9 y después T = 2": S.Sampler(do_sample=True, temperature=2.0, top_p=0.9,
                                                        temperature_last=True).probs(z_libro),
    "T = 0.5 y top-p 0.9 (los dos órdenes)": S.Sampler(do_sample=True, temperature=0.5, top_p=0.9).probs(z_libro),
}
pos = np.arange(4)
for k, (nombre, probs) in enumerate(ordenes.items()):
    plt.bar(pos + (k - 1) * 0.27, probs.numpy(), width=0.27, label=nombre)
    print(f"{nombre:42s}", np.round(probs.numpy(), 4))
plt.xticks(pos, candidatos_libro)
plt.ylabel("probabilidad final")
plt.title("Mismos mandos, dos bibliotecas, dos resultados")
plt.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 10. Mil tiradas por estrategia
#
# Las probabilidades son la teoría; lo que ve el usuario son tiradas. Tomamos el ejemplo del correo con diez
# candidatos y, para cada estrategia, tiramos el dado `N_MUESTRAS` veces (mil por defecto). Las barras son
# las frecuencias observadas; los puntos, la probabilidad final de cada candidato. Antes de ejecutar, apunta tu
# predicción (no puntúa): ¿cuántos candidatos distintos saldrán con `T = 1.5`, y cuántos con `top-k = 3`? La
# celda de las tiradas la imprime antes que los resultados.

# %%
MI_PREDICCION = ""  # p. ej. "T = 1.5: 6; top-k = 3: 3"

# %%
print("tu predicción:", MI_PREDICCION.strip() or "(no la has escrito: hazlo antes de mirar el resultado)")
estrategias = {
    "voraz": dict(do_sample=False),
    "T = 0.5": dict(do_sample=True, temperature=0.5),
    "T = 1": dict(do_sample=True),
    "T = 1.5": dict(do_sample=True, temperature=1.5),
    "top-k = 3": dict(do_sample=True, top_k=3),
    "top-p = 0.9": dict(do_sample=True, top_p=0.9),
    "min-p = 0.05": dict(do_sample=True, min_p=0.05),
    "T = 1.5 + top-p = 0.9": dict(do_sample=True, temperature=1.5, top_p=0.9),
}
lote_hora = z_hora.expand(N_MUESTRAS, len(candidatos))  # la misma distribución N veces: N tiradas de golpe
fig, ejes = plt.subplots(2, 4, figsize=(15, 6.5), sharey=True)
for eje, (nombre, mandos) in zip(ejes.flat, estrategias.items()):
    muestreador = S.Sampler(generator=torch.Generator().manual_seed(SEMILLA), **mandos)
    fichas = muestreador(lote_hora)
    frecuencias = torch.bincount(fichas, minlength=len(candidatos)).numpy() / N_MUESTRAS
    if mandos["do_sample"]:
        teoria = muestreador.probs(z_hora).numpy()
    else:
        teoria = np.eye(len(candidatos))[int(torch.argmax(z_hora))]
    eje.bar(range(len(candidatos)), frecuencias, color="tab:blue", alpha=0.8)
    eje.plot(range(len(candidatos)), teoria, "o", color="tab:red", markersize=4)
    eje.set_xticks(range(len(candidatos)), candidatos, rotation=60, fontsize=8)
    distintos = int((frecuencias > 0).sum())
    eje.set_title(f"{nombre}\n{distintos} candidatos distintos", fontsize=10)
    print(f"{nombre:22s} «10»: {frecuencias[0]:.3f}   distintos: {distintos:2d}   "
          f"fuera de 10/9: {frecuencias[2:].sum():.3f}")
fig.suptitle(f"«Nos vemos mañana a las …»: {N_MUESTRAS} tiradas por estrategia (puntos = probabilidad final)")
plt.tight_layout()
plt.show()

# %% [markdown]
# Fíjate en `T = 0.5` frente a `T = 1.5`: la primera casi no sale de `10` y `9`; la segunda visita hasta `azul`.

# %% [markdown]
# ### Juega con los mandos (opcional)
#
# La función de abajo dibuja la distribución final de los diez candidatos para unos mandos dados (en gris, la
# original a $T = 1$). La primera celda la llama con unos valores fijos; la segunda, si tienes el cuaderno
# abierto en vivo (JupyterLab, Colab o VS Code), te da **deslizadores** para moverlos a la vez y ver el efecto.
# (Cuando el cuaderno se ejecuta sin pantalla, al corregir, los deslizadores no se crean; puedes forzarlos con
# `INTERACTIVO = True` en la celda de parámetros.) Prueba a subir la temperatura con y sin top-p, o a subir
# min-p hasta dejar solo dos candidatos.

# %%
def dibuja_mandos(temperatura=1.5, top_k=0, top_p=0.9, min_p=0.0):
    """Distribución final de los diez candidatos con estos mandos (top_k = 0 y min_p = 0: apagados)."""
    muestreador = S.Sampler(do_sample=True, temperature=temperatura, top_k=int(top_k) or None,
                            top_p=top_p, min_p=min_p or None)
    final = muestreador.probs(z_hora).numpy()
    pos = np.arange(len(candidatos))
    plt.figure(figsize=(7, 3.4))
    plt.bar(pos, torch.softmax(z_hora, dim=-1).numpy(), color="lightgray", label="original (T = 1)")
    plt.bar(pos, final, width=0.5, color="tab:blue", label="final")
    plt.xticks(pos, candidatos, rotation=45)
    plt.ylim(0, 1)
    plt.ylabel("probabilidad")
    plt.title(f"T = {temperatura:.2f}, top-k = {int(top_k) or '—'}, top-p = {top_p:.2f}, min-p = {min_p:.2f}: "
              f"{int((final > 0).sum())} candidatos")
    plt.legend()
    plt.show()


dibuja_mandos(temperatura=1.5, top_k=0, top_p=0.9, min_p=0.0)

# %% tags=["nbval-ignore-output"]
# Deslizadores para quien tiene el cuaderno abierto en vivo (EN_VIVO se calcula en la celda de preparación).
try:
    import ipywidgets as widgets
except ImportError:  # sin ipywidgets: la figura estática de arriba basta
    widgets = None
if (EN_VIVO if INTERACTIVO is None else INTERACTIVO) and widgets is not None:
    etiqueta = {"description_width": "9em"}  # etiquetas enteras: sin esto, «top-k (0 = no)» sale cortada
    ancho = widgets.Layout(width="32em")
    widgets.interact(
        dibuja_mandos,
        temperatura=widgets.FloatSlider(value=1.0, min=0.1, max=3.0, step=0.05, description="temperatura",
                                        style=etiqueta, layout=ancho),
        top_k=widgets.IntSlider(value=0, min=0, max=len(candidatos), description="top-k (0 = no)", style=etiqueta,
                                layout=ancho),
        top_p=widgets.FloatSlider(value=1.0, min=0.05, max=1.0, step=0.01, description="top-p", style=etiqueta,
                                  layout=ancho),
        min_p=widgets.FloatSlider(value=0.0, min=0.0, max=0.5, step=0.01, description="min-p (0 = no)",
                                  style=etiqueta, layout=ancho),
    )
elif widgets is None:
    print("Instala ipywidgets (o abre el cuaderno en Colab) para mover los mandos con deslizadores.")
else:
    print("Sin deslizadores: el cuaderno no está abierto en vivo (fuérzalos con INTERACTIVO = True).")

# %% [markdown]
# ## 11. El bucle de generación
#
# Elegir un token es un paso; escribir un texto es repetirlo: pedir los logits del contexto, elegir, añadir el
# token elegido al contexto y volver a empezar, hasta un token de fin (EOS) o un máximo de tokens. Es el bucle
# autorregresivo del lab 01, ahora con tus mandos dentro.
#
# ### Ejercicio 9 · `generate` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling)`:
#
# - `logits_fn(ids)` recibe la lista de ids de **todo** el contexto (prompt + lo generado) y devuelve un tensor
#   1D con los logits del siguiente token;
# - en cada paso elige el token con `sample_next_token(logits, **sampling)` (tu función del ejercicio 8: los
#   mandos, `greedy` y `generator` llegan en `sampling`), lo añade y para si es `eos_id` (el EOS se queda en la
#   salida) o si ya ha generado `max_new_tokens` tokens (con `max_new_tokens = 0` no llama al modelo);
# - devuelve una **lista nueva** de `int` con el prompt y los tokens generados, también con `max_new_tokens = 0`
#   (no modifiques `prompt_ids` ni lo devuelvas tal cual).

# %% nbgrader={"grade_id": "generate", "solution": true}
def generate(logits_fn, prompt_ids, max_new_tokens, eos_id=None, **sampling):
    """Bucle autorregresivo: devuelve prompt + tokens generados, como lista de int."""
    ### BEGIN SOLUTION
    ids = [int(t) for t in prompt_ids]
    for _ in range(max_new_tokens):
        siguiente = int(sample_next_token(logits_fn(ids), **sampling))
        ids.append(siguiente)
        if eos_id is not None and siguiente == eos_id:
            break
    return ids
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Un bucle `for _ in range(max_new_tokens)`: pide los logits de **todo** el contexto, elige con tu
# `sample_next_token(logits, **sampling)`, añade el token como `int` y comprueba el EOS.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Empieza con una copia, `ids = [int(t) for t in prompt_ids]`; dentro del bucle,
# `siguiente = int(sample_next_token(logits_fn(ids), **sampling))`, `ids.append(siguiente)` y
# `if eos_id is not None and siguiente == eos_id: break`.
#
# </details>

# %% nbgrader={"grade_id": "test_generate", "grade": true, "points": 2}
# Comprobación del ejercicio 9 · resultados exactos (listas de IDs); frecuencias de 3000 tokens con ±0.03.
palabras = ["<fin>", "Nos", "vemos", "mañana", "a", "las", "10", "9"]
sigue = {1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 0, 7: 0, 0: 0}  # la continuación favorita de cada palabra
contextos = []


def modelo_espia(ids):
    """Un «modelo» de juguete que apunta cada contexto que recibe."""
    contextos.append([int(t) for t in ids])
    z = torch.zeros(len(palabras))
    z[sigue[int(ids[-1])]] = 5.0
    return z


prompt_espia = [1, 2]
with reference_blocked(LM.generate, S.Sampler, S.sample_next_token):
    texto = checked_call(generate, modelo_espia, prompt_espia, 10, eos_id=0, greedy=True)
    check_list(texto, what="lo que devuelve generate", of=int)
    check_equal(texto, [1, 2, 3, 4, 5, 6, 0], what="generación voraz de «Nos vemos …»",
                hint="añade cada token al contexto y para al generar eos_id (que se queda en la salida)")
    check_equal([len(c) for c in contextos], [2, 3, 4, 5, 6], what="longitud del contexto en cada llamada",
                hint="cada llamada recibe TODO el contexto, uno más que la anterior")
    contextos.clear()
    check_equal(checked_call(generate, modelo_espia, [1], 3, eos_id=0, greedy=True), [1, 2, 3, 4],
                what="generar con max_new_tokens = 3")
    check_equal(len(contextos), 3, what="llamadas al modelo para 3 tokens")
    uno = checked_call(generate, modelo_espia, [1], 6, generator=torch.Generator().manual_seed(5), temperature=3.0)
    dos = checked_call(generate, modelo_espia, [1], 6, generator=torch.Generator().manual_seed(5), temperature=3.0)
    check_equal(uno, dos, what="dos generaciones con la misma semilla")
    check_list(uno, what="cada token de la salida", of=int)
print(" ".join(palabras[i] for i in texto))
ok("el bucle crece de uno en uno, para en el EOS y es reproducible")
### BEGIN HIDDEN TESTS
with hidden("generate: sin EOS, cero tokens, contenido del contexto, tuplas y tensores, mandos y frecuencias"):
    with reference_blocked(LM.generate, S.Sampler, S.sample_next_token):
        contextos.clear()
        check_equal(checked_call(generate, modelo_espia, (1, 2), 0, eos_id=0), [1, 2])
        prompt_oculto = [3, 4]
        r_oculto = generate(modelo_espia, prompt_oculto, 0, eos_id=0)  # sin copia, a propósito
        check_true(r_oculto == [3, 4] and r_oculto is not prompt_oculto,
                   "con max_new_tokens = 0 se devuelve una lista nueva, no el prompt")
        check_equal(len(contextos), 0)
        salida = checked_call(generate, modelo_espia, [5], 5, greedy=True)  # sin eos_id: no para en el 0
        check_equal(salida, [5, 6, 0, 0, 0, 0])
        check_equal(contextos, [[5], [5, 6], [5, 6, 0], [5, 6, 0, 0], [5, 6, 0, 0, 0]])
        contextos.clear()
        check_equal(checked_call(generate, modelo_espia, torch.tensor([1, 2]), 2, eos_id=0, greedy=True), [1, 2, 3, 4])
        check_list(checked_call(generate, modelo_espia, torch.tensor([1]), 1, greedy=True), of=int)
        fijos = torch.tensor([1.5, 0.0, 1.0, -1.0])
        # Los mandos llegan a sample_next_token: lo que genera es lo que darían tus tiradas con esos mandos.
        tiradas, g_t = [], torch.Generator().manual_seed(4)
        for _ in range(60):
            tiradas.append(int(sample_next_token(fijos, temperature=2.0, top_k=2, generator=g_t)))
        recortado = checked_call(generate, lambda ids: fijos, [0], 60, generator=torch.Generator().manual_seed(4),
                                 temperature=2.0, top_k=2)
        check_equal(recortado[1:], tiradas)
        largo = checked_call(generate, lambda ids: fijos, [0], 3000, generator=torch.Generator().manual_seed(9))
        check_equal(len(largo), 3001)
        frecuencias = torch.bincount(torch.tensor(largo[1:]), minlength=4).float() / 3000
        check_close(frecuencias, torch.softmax(fijos, dim=-1), atol=0.03)
        a = checked_call(generate, lambda ids: fijos, [0], 40, generator=torch.Generator().manual_seed(1), temperature=2.0)
        b = checked_call(generate, lambda ids: fijos, [0], 40, generator=torch.Generator().manual_seed(2), temperature=2.0)
        check_true(a != b, "semillas distintas, textos distintos")
        check_true(all(type(t) is int for t in a), "la salida es una lista de int")
### END HIDDEN TESTS

# %% [markdown]
# ### El modelo diminuto escribe con cada preajuste
#
# `llmlab.sampling.PRESETS` recoge los **preajustes** (*presets*) de la guía de inferencia para cada tipo de trabajo:
#
# | uso | temperatura | estrategia |
# |---|---|---|
# | trabajo preciso (datos, clasificar, JSON) | baja, 0.1–0.3 | top-k restringido, pocos tokens, paradas explícitas, decodificación restringida |
# | trabajo creativo | media-alta, 0.7–1.2 | top-p amplio, varios candidatos y elegir después |
# | programación | baja, 0.1–0.5 | primera pasada conservadora; explorar solo a propósito |
# | evaluaciones y depuración | voraz (*greedy*) | siempre la misma salida |
#
# Pedimos al modelo diminuto que continúe el mismo texto de entrada con cada uno (con `LM.generate`, el bucle de
# `llmlab`, que además usa la caché KV). Es un modelo de unos pocos millones de parámetros, así que no esperes
# un texto brillante: lo interesante es comparar **cómo** cambia la salida de
# un preajuste a otro. Fíjate sobre todo en el voraz: sin nada de azar, los modelos pequeños tienden a caer en
# bucles y repetir la misma secuencia.

# %%
for nombre, preset in S.PRESETS.items():
    mandos = {k: v for k, v in preset.items() if k != "description"}
    print(f"{nombre:13s} {mandos}\n              {preset['description']}")

# %% tags=["nbval-ignore-output"]
print(f"modelo: {origen}\nprompt: {prompt!r}\n")
for nombre in S.PRESETS:
    muestreador = S.Sampler.from_preset(nombre, generator=torch.Generator().manual_seed(SEMILLA))
    salida = LM.generate(modelo, ids_prompt, N_TOKENS_DEMO, sampler=muestreador, eos_token_id=tok.eos_id)
    continuacion = tok.decode(salida[len(ids_prompt):].tolist())
    print(f"{nombre:13s} → {continuacion!r}")

# %% [markdown]
# Con un solo comienzo y pocos tokens un bucle puede no verse. Para medirlo de verdad, seis comienzos, tres
# semillas y 160 tokens con cada preajuste, y una cifra: qué parte de los grupos de cuatro tokens seguidos repite un grupo anterior de la
# misma continuación (0 % = nunca se repite; un bucle la dispara).

# %% tags=["nbval-ignore-output"]
comienzos = ["Nos vemos mañana a las", "Había una vez", "El tren sale", "Mi abuela dice que", "En verano, el río",
             "La profesora explicó"]


def repeticion(ids, n=4):
    grupos = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    return 1 - len(set(grupos)) / len(grupos)


repetido = {}
# Al corregir (nbgrader) la medida se salta: no puntúa, y sus 72 generaciones pasan del límite de tiempo por celda.
if os.environ.get("NBGRADER_EXECUTION") == "autograde":
    print("Medida saltada al corregir: no cuenta para la nota.")
    preajustes_medidos = ()
else:
    preajustes_medidos = S.PRESETS
for nombre in preajustes_medidos:
    partes = []
    for semilla in (SEMILLA, SEMILLA + 1, SEMILLA + 2):
        for comienzo in comienzos:
            ids = torch.tensor([tok.bos_id] + tok.encode(comienzo))  # como empieza cada documento del corpus
            muestreador = S.Sampler.from_preset(nombre, generator=torch.Generator().manual_seed(semilla))
            partes.append(repeticion(LM.generate(modelo, ids, 160, sampler=muestreador)[len(ids):].tolist()))
    repetido[nombre] = float(np.mean(partes))
    print(f"{nombre:13s} grupos de 4 tokens repetidos: {100 * repetido[nombre]:4.1f} % de media "
          f"(de {100 * min(partes):.0f} % a {100 * max(partes):.0f} % según el comienzo y la semilla)")

# %% [markdown]
# El voraz es el que más se repite: sin azar, en cuanto vuelve a un contexto que ya vio, vuelve a elegir lo
# mismo. Cuanto más azar, menos bucles: los preajustes de temperatura baja (preciso, código) se quedan cerca
# del voraz, y el creativo, con temperatura alta, apenas repite.

# %% [markdown]
# ## 12. Errores frecuentes
#
# Los tropiezos del capítulo, cada uno escrito como código equivocado y atrapado por la misma clase de
# comprobación que corrige tus ejercicios. Son exactamente lo que buscan las pruebas ocultas. Dos ya los has
# arreglado tú: la RMSNorm que resta la media (ejercicio 2) y el top-p que deja fuera el token que cruza el umbral
# (ejercicio 6).

# %%
atrapa = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla


# 1. LayerNorm con la desviación típica muestral (ddof=1): [1, -1, 0].
atrapa("LayerNorm con ddof=1", lambda: check_close(
    (x_libro - x_libro.mean()) / x_libro.std(ddof=1), [1.224741, -1.224741, 0.0], atol=1e-6, what="LayerNorm"))

# 2. LayerNorm a lo largo del eje equivocado (entre tokens, axis=0): mezcla información de posiciones distintas.
dos_tokens = np.array([[2.0, -1.0, 0.5], [2.1, -0.6, 0.3]])
atrapa("LayerNorm sobre axis=0", lambda: check_close(
    (dos_tokens - dos_tokens.mean(axis=0)) / np.sqrt(dos_tokens.var(axis=0) + 1e-5), L.layer_norm(dos_tokens),
    atol=1e-6, what="LayerNorm de dos tokens"))

# 3. «LayerNorm entiende el texto»: solo reescala números; un vector y su doble salen (casi) iguales.
atrapa("esperar que LayerNorm distinga significados", lambda: check_true(
    not np.allclose(L.layer_norm([2.0, -1.0, 0.5]), L.layer_norm([4.0, -2.0, 1.0]), atol=1e-4),
    "LayerNorm de [2, -1, 0.5] y de su doble deberían diferir (no lo hacen: solo reescala)"))

# 4. Un MLP que mezcla posiciones (X.T @ W1 «funciona» cuando hay tantos tokens como dimensiones).
rng_e = np.random.default_rng(SEMILLA)
X_cuadrada = rng_e.normal(size=(4, 4))
W1_e, W2_e = rng_e.normal(size=(4, 16)), rng_e.normal(size=(16, 4))
mlp_mal = lambda X: L.gelu(X.T @ W1_e) @ W2_e  # noqa: E731
X_tocada = X_cuadrada.copy()
X_tocada[3] += 1.0
atrapa("MLP a lo largo de las posiciones", lambda: check_close(
    mlp_mal(X_tocada)[0], mlp_mal(X_cuadrada)[0], atol=1e-9, what="salida del token 0 al cambiar el token 3"))

# 5. Confundir logits con probabilidades: logits / suma da «probabilidades» negativas.
z_correo = np.array([4.2, 3.9, 1.1, -0.7])
atrapa("p = logits / suma", lambda: check_true(
    (z_correo / z_correo.sum() >= 0).all(), "todas las probabilidades deben ser >= 0"))

# 6. Temperatura que multiplica: a T = 0.5 sale la columna de T = 2.
atrapa("temperatura multiplicando", lambda: check_close(
    torch.softmax(z_libro * 0.5, -1), [0.878619, 0.118908, 0.002178, 0.000295], atol=1e-6, what="T = 0.5"))

# 7. Temperatura aplicada después de la softmax (p**(1/T)) sin renormalizar: no suma 1.
atrapa("p ** (1/T) sin renormalizar", lambda: check_close(
    float((torch.softmax(z_libro, -1) ** 2).sum()), 1.0, atol=1e-6, what="suma de las probabilidades a T = 0.5"))

# 8. Top-p sin ordenar: con la entrada desordenada la acumulada no significa nada.
p_perm = torch.softmax(torch.tensor([1.0, 4.0, 0.0, 3.0]), -1)
sin_ordenar = torch.where(torch.cumsum(p_perm, -1) - p_perm < 0.9, p_perm, torch.tensor(0.0))
atrapa("top-p sin ordenar", lambda: check_close(
    sin_ordenar / sin_ordenar.sum(), [0.0, 0.731059, 0.0, 0.268941], atol=1e-6, what="top-p = 0.9, entrada desordenada"))

# 9. Top-p como si fuera top-k con k = int(p·V): 0.9 · 4 -> 3 tokens.
atrapa("top-p = top-k con k = int(p·V)", lambda: check_equal(
    int(torch.isfinite(S.top_k_filter(z_libro, int(0.9 * 4))).sum()), 2, what="tokens con top-p = 0.9"))

# 10. Recortar sin renormalizar: [0.696, 0.256, 0, 0] suma 0.952.
sin_renormalizar = torch.where(torch.isfinite(S.top_p_filter(z_libro, 0.9)), p_libro, torch.tensor(0.0))
atrapa("recortar sin renormalizar", lambda: check_close(
    sin_renormalizar, [0.731059, 0.268941, 0.0, 0.0], atol=1e-6, what="probabilidades tras top-p"))

# 11. Dar por hecho el orden de otra biblioteca: con temperature_last=False se espera el de transformers, y
#     recortar primero (el de llama.cpp) da otra distribución.
atrapa("el orden de llama.cpp donde se pide el de transformers", lambda: check_close(
    torch.softmax(S.apply_temperature(S.top_p_filter(z_libro, 0.9), 2.0), -1), [0.5465, 0.3315, 0.1220, 0.0],
    atol=1e-4, what="T = 2 y top-p = 0.9 (transformers)"))

# 12. Leer los logits de la posición equivocada: la primera predice lo que sigue al primer token, no a «a las».
with torch.no_grad():
    logits_modelo = modelo(ids_prompt[None])[0]  # [posiciones, vocabulario]
atrapa("logits de la primera posición", lambda: check_true(
    torch.equal(logits_modelo[0], logits_modelo[-1]),
    "los logits del siguiente token salen de la ÚLTIMA posición (logits[:, -1, :])"))

# %% [markdown]
# Queda el error de concepto más caro: **creer que una temperatura baja da respuestas verdaderas**. La
# temperatura solo concentra la probabilidad en lo que el modelo ya prefería. Si el favorito es falso, con
# $T \to 0$ lo dirá siempre, con total aplomo. Y la decodificación voraz tampoco es «más correcta»: nunca explora,
# así que puede quedarse en lo genérico o atascarse en bucles (mira la salida del preajuste `deterministic` de
# arriba). La
# verdad se comprueba con contexto, fuentes y validación, no con un mando de muestreo.
#
# ## 13. Pregunta para razonar (corrección manual · 3 puntos · ~15 min)
#
# Te piden configurar el mismo asistente para tres encargos: **(a)** resumir las cláusulas de un contrato de
# alquiler para un cliente, **(b)** una lluvia de ideas de nombres para una cafetería y **(c)** completar una
# función de Python dentro de un editor. Un compañero propone: «para el contrato, temperatura 0; así el resumen
# será verdadero».
#
# En 6-10 líneas: ¿qué mandos pondrías en cada caso (temperatura, top-k/top-p/min-p, número de candidatos y
# otros controles del bucle) y por qué? ¿Qué le contestas a tu compañero sobre la temperatura y la verdad?
#
# **Rúbrica (3 puntos):** 1,5 puntos por los tres encargos (medio punto cada uno: mandos razonables y el porqué); 1
# punto por explicar que la temperatura solo afila la distribución alrededor de lo que el modelo ya prefería (no
# sabe qué es verdad) y qué haría falta para un resumen fiel (el contrato en el contexto, citas, revisión); medio
# punto por mencionar que el orden de los mandos depende de la biblioteca o que la decodificación voraz puede
# atascarse. Más de 10 líneas resta medio punto.

# %% [markdown] nbgrader={"grade_id": "respuesta_mandos", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# (a) Contrato: temperatura baja (0.1-0.3) con top-k pequeño o decodificación voraz, un máximo de tokens corto y paradas
# explícitas; si el resumen alimenta otro sistema, salida en JSON con decodificación restringida. Queremos
# estabilidad: la misma cláusula debe resumirse igual cada vez. (b) Lluvia de ideas: temperatura media-alta
# (0.8-1.2) con top-p amplio (0.9-0.95) o min-p, para explorar la cola sin caer en tokens absurdos, y pedir
# varios candidatos para elegir después. (c) Código: temperatura baja (0.1-0.5) y top-p moderado en una
# primera pasada conservadora; subirla solo para buscar alternativas a propósito, y validar con tests.
#
# Al compañero: la temperatura no sabe qué es verdad. Solo afila la distribución alrededor de lo que el modelo
# ya prefería; si su favorito es una cláusula mal leída o inventada, a T = 0 la repetirá siempre, con más
# aplomo. La decodificación voraz además puede atascarse en repeticiones o respuestas genéricas, y al pasar
# la configuración a otro motor hay que revisar el orden de los mandos (llama.cpp calienta al final). Para que el resumen sea fiel
# hay que darle el contrato en el contexto, pedirle que cite la cláusula de la que sale cada afirmación y
# revisarlo (o validarlo) contra el texto original.
# ### END SOLUTION

# %% [markdown]
# ## Resumen
#
# - Un bloque pre-norm es `a = x + Atención(LN(x))` y `x' = a + MLP(LN(a))`: normalizar, calcular y **sumar**.
#   El residual, `[2, −1, 0.5] + [0.1, 0.4, −0.2] = [2.1, −0.6, 0.3]`, mantiene una vía siempre abierta.
# - LayerNorm centra y reescala cada token con su media y su varianza poblacional, ε dentro de la raíz:
#   `[2, −1, 0.5] → [1.225, −1.225, 0]`. RMSNorm solo divide por la raíz cuadrática media:
#   `[1.512, −0.756, 0.378]`.
# - El MLP ensancha a `4d`, aplica GELU y vuelve a `d`, fila a fila: `8d² + 5d` parámetros (134 238 208 con
#   `d = 4096`), dos tercios del bloque; con un MLP con puerta y GQA, como en `es-base`, la proporción sube.
# - La cabeza de lenguaje convierte el último vector en logits; la softmax, en probabilidades:
#   `[4, 3, 1, 0] → [0.696, 0.256, 0.035, 0.013]`.
# - La temperatura divide los logits (T = 0.5 afila a 0.879 para `París`; T = 2 aplana a 0.509); top-k fija
#   cuántos candidatos quedan, top-p cuánta masa (el token que cruza el umbral se queda), min-p corta en relación
#   con el favorito. Los eliminados pasan a `-inf` y lo que queda se renormaliza.
# - El orden depende de la biblioteca: `transformers` calienta y después recorta (temperatura → top-k → top-p →
#   min-p); llama.cpp recorta y calienta al final. Con `T = 2` y top-p = 0.9: `[0.5465, 0.3315, 0.1220, 0]` frente a
#   `[0.6225, 0.3775, 0, 0]`.
# - Los mandos deciden el comportamiento, no la verdad: baja temperatura para trabajo preciso y código, más
#   alta con top-p para ideas, decodificación voraz para evaluar; y la veracidad, con contexto y validación.
#
# ## Para ir más allá (opcional, sin nota y fuera del tiempo estimado)
#
# 1. **Penalizar lo ya dicho.** Añade a tu `generate` una penalización de repetición (los logits positivos de los
#    tokens ya generados se dividen por `θ`, los negativos se multiplican) y mide los grupos de 4 tokens repetidos
#    de es-base con `θ = 1`, 1.2 y 1.5 en la medida de bucles de la sección 11. Para cuando tengas la tabla de
#    repetición frente a `θ` y un ejemplo de lo que se pierde con la más fuerte.
# 2. **Búsqueda en haz.** Escribe una búsqueda en haz con `B = 1, 2, 4` para 20 tokens de es-base y compárala con
#    la voraz: suma de log-probabilidades de la secuencia y grupos repetidos. Para cuando tengas la tabla y sepas
#    decir si más probable significa menos repetitivo.
# 3. **Cuántos candidatos deja cada filtro.** Sobre 50 contextos del corpus, cuenta cuántos tokens sobreviven a
#    top-k (`k = 50`), top-p (0.9) y min-p (0.05) en la distribución de es-base. Para cuando tengas un histograma
#    por filtro y puedas decir cuál se adapta a lo seguro que está el modelo.
#
# ## Para saber más
#
# - A. Vaswani et al. (2017), *Attention is all you need*: el bloque original, con post-norm.
# - K. He, X. Zhang, S. Ren y J. Sun (2016), *Deep residual learning for image recognition*: las conexiones residuales.
# - J. L. Ba, J. R. Kiros y G. E. Hinton (2016), *Layer normalization*.
# - B. Zhang y R. Sennrich (2019), *Root mean square layer normalization* (NeurIPS 32).
# - D. Hendrycks y K. Gimpel (2016), *Gaussian error linear units (GELUs)*; N. Shazeer (2020), *GLU variants
#   improve Transformer*: GELU, GLU y SwiGLU.
# - I. Goodfellow, Y. Bengio y A. Courville (2016), *Deep learning*; C. M. Bishop (2006), *Pattern recognition and
#   machine learning*: la base de redes, activaciones y softmax.
# - A. Holtzman, J. Buys, L. Du, M. Forbes y Y. Choi (2020), *The curious case of neural text degeneration*:
#   por qué la decodificación voraz degenera y de dónde sale top-p.
# - A. Radford et al. (2019), *Language models are unsupervised multitask learners*: GPT-2 y el muestreo top-k.
# - Simuladores: B. Bycroft (2023), *LLM Visualization*, para recorrer los bloques hasta los logits; y
#   A. Cho et al. (2025), *Transformer Explainer*, para cambiar la entrada y ver moverse la distribución.
# - En `llmlab`: `llmlab.layers` (residual, normalizaciones, activaciones, MLP y un bloque completo en NumPy),
#   `llmlab.sampling` (los mandos, `Sampler` y `PRESETS`, idénticos a los de `transformers`) y
#   `llmlab.constrained` (obligar a que la salida sea JSON válido). El lab 09 vuelve a los preajustes sobre una
#   llamada completa.
