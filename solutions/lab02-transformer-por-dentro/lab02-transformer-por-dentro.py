# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 02 · Dentro del Transformer: del texto a los tensores y a la atención
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab02-transformer-por-dentro/lab02-transformer-por-dentro.ipynb)
#
# **Capítulo 02** de *Facsímil 03 · Arquitecturas y modelos* · duración estimada: **3 horas y media** (60 min
# de lectura y figuras y 2 h 30 min de ejercicios y de la pregunta razonada; cada ejercicio indica su tiempo y su
# dificultad; las secciones «(opcional)» quedan fuera de la cuenta)
#
# Hay un instante, dentro de cualquier modelo de lenguaje, en el que tu frase deja de ser letras y pasa a ser
# una tabla de números. A partir de ahí todo son multiplicaciones de matrices. Este laboratorio recorre ese
# camino entero, pieza a pieza, y al final comprueba que tus piezas, montadas, dan exactamente los mismos
# números que el Transformer de `llmlab`.
#
# **Al terminar sabrás:**
#
# 1. cómo un tokenizador BPE trocea el español y por qué caracteres, bytes y tokens son cuentas distintas;
# 2. convertir IDs en vectores con la matriz de embeddings y construir la entrada `X = E[I] + P`;
# 3. las tres maneras de dar posición a un token: senoidal, aprendida y RoPE (y por qué hace falta);
# 4. calcular a mano una fila de atención (el ejemplo de «banco») y la atención completa `softmax(QKᵀ/√d_k)·V`;
# 5. qué añaden las varias cabezas, cómo es una pasada completa hasta los logits y por qué la atención cuesta `n²`.
#
# **Cómo se trabaja.** Escribe tu código en las celdas que dicen `ESCRIBE TU CÓDIGO AQUÍ`; en los dos ejercicios
# «encuentra el error» la celda ya trae una función con un fallo típico que tienes que arreglar. Debajo de cada
# ejercicio hay pistas plegadas y una celda de comprobación que te explica en español lo que falle. Al corregir se
# ejecutan además pruebas ocultas con otros datos, así que tu función tiene que cumplir el enunciado, no solo los
# ejemplos. Las celdas de comprobación se restauran al corregir: no sirve de nada editarlas. Y no llames a la
# versión de `llmlab` de lo que se te pide (`llmlab.embeddings`, `llmlab.positional`, `llmlab.attention`…): la
# comprobación te avisará, porque la idea es que la escribas tú.
#
# **Predecir y medir.** Antes de la prueba de «perro muerde hombre» (sección 6) hay una celda «Tu predicción» de una línea: escribe tu apuesta antes de
# ejecutar la medida, que la imprime delante del resultado. No puntúa; sirve para que veas qué intuición tenías.
#
# **Números.** Los decimales llevan punto, como en Python (`0.652`), y los miles se separan con un espacio fino
# (`409 600 000`).

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
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from llmlab import attention as ATT
from llmlab import corpus
from llmlab import cost as C
from llmlab import embeddings as EMB
from llmlab import functional as lf
from llmlab import model as LM
from llmlab import positional as POS
from llmlab import pretrained
from llmlab.checks import (
    EjercicioSinHacer, check_array, check_close, check_equal, check_number, check_raises, check_shape, check_true,
    check_type, checked_call, hidden, ok, reference_blocked, show_caught,
)
from llmlab.spanish import fmt_int
from llmlab.checks import EjercicioSinHacer  # lo que lanza un ejercicio que aún no has hecho
from llmlab.tokenizer import BPETokenizer, compression_stats

plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar: mismas matrices aleatorias en cada ejecución
CARACTERES_BPE = 100_000  # cuánto texto del corpus entrena el tokenizador pequeño de la sección 1
VOCAB_PEQUENO = 320  # vocabulario de ese tokenizador pequeño: 256 bytes + fusiones + tokens especiales
TAMANOS_COSTE = [256, 512, 1024, 2048]  # longitudes n para medir el coste de la atención
REPETICIONES = 5  # cuántas veces se cronometra cada n (se queda el mejor tiempo)

# %% [markdown]
# ## 0. El mapa del viaje
#
# Antes de abrir la caja conviene quitarse tres ideas equivocadas. Un Transformer **no** aplica reglas de
# gramática escritas por nadie. Tampoco lee de izquierda a derecha, palabra tras palabra, como hacían las redes
# recurrentes: procesa todas las posiciones de golpe, con operaciones de matrices que se reparten muy bien en una
# GPU. Y su «atención» no tiene nada de psicológica: es una media ponderada, con pesos calculados a partir de
# productos escalares.
#
# Lo que sí es cabe en una línea: una pila de bloques en la que cada token mira a los demás (atención), mezcla
# lo que le interesa y luego se transforma por su cuenta (MLP). Vino de un artículo, *Attention is all you
# need*, que ocho autores (siete de Google Brain y Google Research, y uno de la Universidad de Toronto que
# trabajaba con ellos) subieron a arXiv el 12 de junio de 2017 y presentaron en NeurIPS ese mismo año. Su tarea era la traducción automática, y su apuesta fue tirar por la borda la recurrencia y las
# convoluciones y quedarse solo con atención.
#
# El recorrido de este laboratorio, que es el de cualquier LLM:
#
# ```
# texto → tokens (IDs) → embeddings E[I] → + posición P → X (n × d_model)
#       → [ atención: Q, K, V → softmax(QKᵀ/√d_k) → A·V  →  MLP ] × L bloques
#       → logits del siguiente token → softmax → token elegido
# ```
#
# ## 1. Tokens: el texto se convierte en números
#
# Un modelo no ve letras: ve **IDs**, números enteros que apuntan a las piezas de su vocabulario. Quien
# trocea el texto es el tokenizador. El de `llmlab` es un BPE a nivel de byte: parte de los 256 bytes posibles
# y aprende a fusionar los pares que más se repiten en un corpus, hasta tener el vocabulario que le pidas.
#
# El curso trae el tokenizador con el que se entrenaron sus modelos diminutos (`llmlab.pretrained`): 4096 piezas
# aprendidas con la parte de entrenamiento del corpus en español del curso. Miremos cómo corta la frase del
# capítulo.

# %%
tokenizador = pretrained.load_tokenizer()
print(tokenizador)

frase = "El banco aprobó el préstamo."
ids_reales = tokenizador.encode(frase)
print(tokenizador.show(frase, with_ids=True))
print("IDs:", ids_reales)
print("de vuelta a texto:", tokenizador.decode(ids_reales))

# %% [markdown]
# Fíjate en dos cosas. Las palabras frecuentes o sus trozos habituales son una sola pieza, y las raras se
# parten en varias. Y la pieza que lleva el espacio delante (` el`) no es la misma que la del principio de la
# frase (`El`): para este tokenizador son dos IDs distintos.
#
# ### Caracteres, bytes y tokens no son lo mismo
#
# Los límites de contexto y los precios se cuentan en **tokens**. Un carácter como `ñ` o `é` ocupa dos bytes
# en UTF-8, y un emoji, cuatro. Como el tokenizador empieza desde los bytes, un texto con tildes o emojis puede
# costar más tokens de los que parece.

# %%
ejemplos = [
    "El banco aprobó el préstamo.",
    "La cigüeña y el ñandú comparten año.",
    "Ayer llovió muchísimo en Cádiz 🙂",
    "internacionalización",
]
# Un tokenizador con muy pocas fusiones, entrenado aquí mismo, para ver qué cambia con el vocabulario.
pequeno = BPETokenizer.train(corpus.load_text("train")[:CARACTERES_BPE], vocab_size=VOCAB_PEQUENO)
print(f"{'texto':40s} {'caracteres':>10s} {'bytes':>6s} {f'tokens ({len(tokenizador)})':>14s} {f'tokens ({VOCAB_PEQUENO})':>13s}")
for ejemplo in ejemplos:
    cuentas = compression_stats(tokenizador, ejemplo)
    print(f"{ejemplo:40s} {cuentas['characters']:10d} {cuentas['bytes']:6d} {cuentas['tokens']:14d} "
          f"{compression_stats(pequeno, ejemplo)['tokens']:13d}")

# %% [markdown]
# Con menos fusiones, el mismo texto cuesta más tokens: el vocabulario es un compromiso entre el tamaño de la
# tabla de embeddings (una fila por pieza) y lo largas que quedan las secuencias.

# %% [markdown]
# ### Los IDs del capítulo
#
# El capítulo usa un vocabulario de juguete en el que la frase «El banco aprobó el préstamo» se convierte en
#
# $$I = [i_1, i_2, i_3, i_4, i_5] = [42,\ 981,\ 774,\ 42,\ 1503]$$
#
# de modo que `i₂ = 981` es «banco». En ese juguete «El» y «el» comparten el ID 42 (un tokenizador real, como
# acabas de ver, suele distinguirlos). Ojo con los índices: el libro cuenta desde 1 y Python desde 0, así que
# «banco» es `I[1]`. Usaremos estos IDs en todo el laboratorio.

# %%
I_frase = [42, 981, 774, 42, 1503]
palabras = ["El", "banco", "aprobó", "el", "préstamo"]
print("i₂ (libro) = I[1] (Python) =", I_frase[1])

# %% [markdown]
# ## 2. De IDs a vectores: la matriz de embeddings
#
# Cada ID selecciona una fila de una matriz aprendida
#
# $$E \in \mathbb{R}^{V \times d_{model}}$$
#
# con `V` filas (una por pieza del vocabulario) y `d_model` columnas. Si `V = 100 000` y `d_model = 4096`, como
# en el ejemplo del capítulo, la tabla guarda 409.6 millones de números: una parte nada despreciable del modelo.
# Buscar la fila de cada ID es lo mismo que multiplicar un vector *one-hot* por `E`, solo que sin hacer la
# multiplicación. Una frase de 5 tokens se convierte en una matriz de 5 × 4096: **una fila por token**.

# %%
V_ejemplo, d_ejemplo = 100_000, 4096
print(f"parámetros de E: {fmt_int(V_ejemplo * d_ejemplo)}  (en FP16: {V_ejemplo * d_ejemplo * 2 / 1e9:.3f} GB)")

rng = np.random.default_rng(SEMILLA)
E_mini = rng.normal(size=(6, 3))  # un vocabulario de 6 piezas y d_model = 3
one_hot = np.eye(6)[[4, 1]]
print("filas 4 y 1 de E     :", np.round(E_mini[[4, 1]], 3).tolist())
print("one-hot @ E (igual)  :", np.round(one_hot @ E_mini, 3).tolist())

# %% [markdown]
# ### Ejercicio 1 · `embed` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `embed(ids, E)`, que devuelve las filas de `E` correspondientes a los IDs:
#
# - `ids` es una lista o un array de enteros con forma `(n,)` (una frase) o `(B, n)` (un lote de `B` frases);
# - devuelve un **array de NumPy de floats** (también si `E` es de enteros) con forma `(n, d_model)` o
#   `(B, n, d_model)`: una fila por token, nunca `(d_model, n)`; no modifica `ids` ni `E`;
# - si algún ID es negativo o no es menor que `V` (el número de filas de `E`), lanza `IndexError`. Cuidado:
#   NumPy acepta `E[-1]` sin rechistar y te da la última fila, que no es lo que quería el tokenizador.

# %% nbgrader={"grade_id": "embed", "solution": true}
def embed(ids, E):
    """Una fila de E por cada ID: forma (n, d_model) o (B, n, d_model)."""
    ### BEGIN SOLUTION
    ids = np.asarray(ids, dtype=int)
    E = np.asarray(E, dtype=float)
    if ids.size and (ids.min() < 0 or ids.max() >= E.shape[0]):
        raise IndexError("hay IDs fuera del vocabulario")
    return E[ids]
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# En NumPy, `E[ids]` con un array de enteros (*indexación avanzada*) ya devuelve una fila por ID, y respeta la forma
# de `ids`: con `(B, n)` sale `(B, n, d_model)`. Lo que NumPy no hace es quejarse de un ID negativo.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Convierte con `ids = np.asarray(ids)` y `E = np.asarray(E, dtype=float)`; si `ids.size` y
# `(ids.min() < 0 or ids.max() >= E.shape[0])`, `raise IndexError(...)`; si no, `return E[ids]`.
#
# </details>

# %% nbgrader={"grade_id": "test_embed", "grade": true, "points": 2}
# Comprobación del ejercicio 1 · tolerancia: 1e-6 (copiar filas es exacto; 1e-6 deja pasar un E en float32).
E_t = np.arange(2000 * 4, dtype=float).reshape(2000, 4) / 1000  # la fila i es [4i, 4i+1, 4i+2, 4i+3] / 1000
with reference_blocked(EMB.embed, EMB.build_input):
    x_t = checked_call(embed, [42, 981, 774, 42, 1503], E_t)
    check_array(x_t, what="embed de los 5 IDs de la frase", dtype="float", shape=(5, 4))
    check_close(x_t[1], [3.924, 3.925, 3.926, 3.927], atol=1e-6, what="la fila de «banco» (ID 981)")
    check_close(x_t[0], x_t[3], atol=0, what="«El» y «el», que comparten el ID 42")
    lote_t = checked_call(embed, [[1, 2, 3], [4, 5, 6]], E_t)
    check_array(lote_t, what="un lote de 2 frases de 3 tokens", dtype="float", shape=(2, 3, 4))
    check_raises(lambda: embed([5, -1], E_t), IndexError, what="embed con un ID negativo",
                 hint="E[-1] es la última fila: compruébalo tú y lanza IndexError")
    check_raises(lambda: embed([2000], E_t), IndexError, what="embed con el ID 2000 y V = 2000")
ok("cada ID encuentra su fila de E")
### BEGIN HIDDEN TESTS
with hidden("embed: vocabularios, formas, lotes, tipos de entrada e IDs inválidos en cualquier fila"):
    rng_t = np.random.default_rng(201)
    casos = []
    for _ in range(12):
        V_c, d_c = int(rng_t.integers(1, 300)), int(rng_t.integers(1, 9))
        E_c = rng_t.normal(size=(V_c, d_c))
        forma = (int(rng_t.integers(1, 12)),) if rng_t.random() < 0.5 else (int(rng_t.integers(1, 4)), int(rng_t.integers(1, 7)))
        casos.append((rng_t.integers(0, V_c, size=forma), E_c))
    casos += [([0, 7], np.eye(8)), (np.array([7], dtype=np.int32), np.eye(8)),  # el primer y el último ID valen
              (np.array([[3, 1], [0, 2]]), rng_t.normal(size=(4, 5)).astype(np.float32)),
              (np.array([5, 5, 0], dtype=np.int64), rng_t.normal(size=(6, 2)).tolist()),
              (np.array([[2, 0], [1, 1]]), np.arange(12).reshape(4, 3)), ([3, 0], [[1, 2], [3, 4], [5, 6], [7, 8]])]  # E de enteros
    esperados = [EMB.embed(ids_c, E_c) for ids_c, E_c in casos]
    with reference_blocked(EMB.embed, EMB.build_input):
        for (ids_c, E_c), esperado in zip(casos, esperados):
            obtenido = checked_call(embed, ids_c, E_c)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-6, atol=1e-7)
        check_raises(lambda: embed([3, -8], np.eye(8)), IndexError)
        check_raises(lambda: embed([[0, 1], [2, 8]], np.eye(8)), IndexError)  # el inválido, en la segunda frase
        check_raises(lambda: embed([[0, -1], [2, 3]], np.eye(8)), IndexError)
### END HIDDEN TESTS

# %% [markdown]
# ## 3. La posición hay que añadirla
#
# Con `E[I]` sola hay un problema: «El» y «el» tienen el mismo ID y, por tanto, la misma fila, estén donde estén.
# Y la atención, como verás en la sección 4, compara vectores con productos escalares, a los que les da igual el
# orden. Para el modelo, «perro muerde hombre» y «hombre muerde perro» serían la misma bolsa de palabras. Hay que
# añadir a cada token información sobre su posición:
#
# $$X = E[I] + P_{1:n}$$
#
# `P` tiene una fila por posición y el mismo ancho `d_model`; se suman solo sus `n` primeras filas, **según la
# posición** del token, no según su ID. La tabla `X` de juguete del capítulo (`n = 5`, `d_model = 4`) lo deja ver:
# «El» y «el» comparten ID y, sin embargo, sus filas no coinciden.

# %%
X_frase = np.array([
    [0.20, 0.10, -0.30, 0.40],   # El
    [0.80, -0.20, 0.10, 0.50],   # banco
    [0.10, 0.70, 0.20, -0.10],   # aprobó
    [0.18, 0.08, -0.25, 0.36],   # el
    [0.60, 0.40, 0.70, 0.20],    # préstamo
])
print("forma de X:", X_frase.shape)
print("X[«El»] − X[«el»] =", np.round(X_frase[0] - X_frase[3], 2), "← la huella de la posición")

fig, ax = plt.subplots(figsize=(5, 3.4))
im = ax.imshow(X_frase, cmap="coolwarm", vmin=-0.8, vmax=0.8)
for (fila, col), valor in np.ndenumerate(X_frase):
    ax.text(col, fila, f"{valor:.2f}", ha="center", va="center", fontsize=9)
ax.set_yticks(range(5), palabras)
ax.set_xticks(range(4), [f"dim {j}" for j in range(4)])
ax.grid(False)
ax.set_title("La X de juguete del capítulo (5 × 4)")
fig.colorbar(im, ax=ax)
plt.show()

# %% [markdown]
# Hay tres maneras habituales de construir esa información de posición:
#
# | esquema | qué es | quién lo usa |
# |---|---|---|
# | senoidal | una tabla fija de senos y cosenos; no se entrena | el Transformer original (2017) |
# | aprendida | una fila entrenable por posición; no sabe nada más allá de la longitud de entrenamiento | BERT, GPT-2 |
# | RoPE | no se suma nada: se **giran** Q y K un ángulo proporcional a la posición | Llama y casi todos los LLM actuales |
#
# ### 3.1 Posiciones senoidales
#
# El capítulo las describe con palabras; la fórmula estándar es
#
# $$PE_{pos,\,2i} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right) \qquad PE_{pos,\,2i+1} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right)$$
#
# Cada pareja de columnas `(2i, 2i+1)` es un reloj que gira a su propia velocidad: el par 0 avanza un radián por
# posición, y los siguientes cada vez más despacio (el par `i` va `10000^{2i/d}` veces más lento). Leyendo todas
# las agujas a la vez se sabe en qué posición estás, igual que las agujas de horas, minutos y segundos dan la hora.
#
# ### Ejercicio 2 · `sinusoidal_positions` (2 puntos · dificultad ★★☆ · ~20 min)
#
# Escribe `sinusoidal_positions(n, d, base=10000.0)`, que devuelve la tabla `PE`, un **array de NumPy de floats** de
# forma `(n, d)` (posiciones `0 … n−1`), con seno en las columnas pares y coseno en las impares. La base (`10000` en el artículo) es un
# parámetro. Si `d` es impar, aplica la fórmula tal cual, columna a columna: la última columna será un seno sin
# su coseno.

# %% nbgrader={"grade_id": "sinusoidal_positions", "solution": true}
def sinusoidal_positions(n, d, base=10000.0):
    """Tabla senoidal de posiciones, forma (n, d)."""
    ### BEGIN SOLUTION
    pos = np.arange(n, dtype=float)[:, None]
    columnas = np.arange(d)
    angulos = pos / base ** (2 * (columnas // 2) / d)
    return np.where(columnas % 2 == 0, np.sin(angulos), np.cos(angulos))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Construye dos arrays que se difundan el uno contra el otro: las posiciones como columna, `(n, 1)`, y el índice de
# pareja de cada columna, `columnas // 2`, como fila, `(1, d)`. El ángulo es `pos / base ** (2 * i / d)`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `angulos = pos / base ** (2 * (columnas // 2) / d)` y después
# `np.where(columnas % 2 == 0, np.sin(angulos), np.cos(angulos))`. Con `d` impar no hace falta nada especial.
#
# </details>

# %% nbgrader={"grade_id": "test_sinusoidal_positions", "grade": true, "points": 2}
# Comprobación del ejercicio 2 · tolerancia: 1e-6 en las primeras posiciones; 1e-4 en las tablas largas, donde un
# ángulo calculado en float32 ya pierde la quinta cifra (los valores están en [−1, 1]).
with reference_blocked(POS.sinusoidal_positions, LM.sinusoidal_positions):
    P_t = checked_call(sinusoidal_positions, 50, 8)
    check_array(P_t, what="sinusoidal_positions(50, 8)", dtype="float", shape=(50, 8))
    check_close(P_t[0], [0, 1, 0, 1, 0, 1, 0, 1], atol=1e-6, what="PE[0]",
                hint="en la posición 0 el seno vale 0 (columnas pares) y el coseno 1 (columnas impares)")
    check_close(P_t[1, :2], [0.841471, 0.540302], atol=1e-6, what="PE[1, 0:2] = [sin 1, cos 1]")
    check_close(P_t[3, 2:4], [0.295520, 0.955336], atol=1e-6, what="PE[3, 2:4]",
                hint="el par i = 1 usa 10000^(2·1/8) = 10: [sin(3/10), cos(3/10)]")
    check_true(np.all(np.abs(P_t) <= 1.0), "todos los valores de PE deben estar en [−1, 1]")
    check_true(len(np.unique(np.round(P_t, 4), axis=0)) == 50, "cada posición debe tener una fila distinta")
    check_close(checked_call(sinusoidal_positions, 3, 4, base=100.0)[2], [0.909297, -0.416147, 0.198669, 0.980067],
                atol=1e-6, what="PE[2] con base 100", hint="usa el parámetro base en lugar de 10000")
ok("la tabla senoidal reproduce PE[0] = [0, 1, 0, 1, …]")
### BEGIN HIDDEN TESTS
with hidden("sinusoidal_positions: tamaños, bases y d impar"):
    rng_t = np.random.default_rng(202)
    casos = [(1, 2, 10000.0), (7, 1, 10000.0), (33, 9, 10000.0), (128, 64, 10000.0), (20, 6, 500.0), (5, 3, 2.0)]
    for _ in range(6):
        casos.append((int(rng_t.integers(1, 80)), int(rng_t.integers(1, 40)), float(rng_t.choice([100.0, 10000.0, 1e6]))))
    esperados = [POS.sinusoidal_positions(n_c, d_c, base=b_c) for n_c, d_c, b_c in casos]
    with reference_blocked(POS.sinusoidal_positions, LM.sinusoidal_positions):
        for (n_c, d_c, b_c), esperado in zip(casos, esperados):
            obtenido = checked_call(sinusoidal_positions, n_c, d_c, base=b_c)
            check_array(obtenido, dtype="float", shape=(n_c, d_c))
            check_close(obtenido, esperado, atol=1e-4)
### END HIDDEN TESTS

# %% [markdown]
# La tabla entera, como imagen: cada fila es una posición y cada columna una dimensión. En el mapa de la
# izquierda, las primeras columnas cambian de color a cada paso y las últimas apenas se mueven en 100 posiciones.
# A la derecha, cuatro columnas dibujadas como curvas: las agujas del reloj, cada una a su ritmo.

# %%
P_grande = POS.sinusoidal_positions(100, 64)
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.8))
im = izq.imshow(P_grande, aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
izq.set_xlabel("dimensión")
izq.set_ylabel("posición")
izq.set_title("Posiciones senoidales (100 × 64)")
izq.grid(False)
fig.colorbar(im, ax=izq)
for columna in (4, 10, 20, 40):
    der.plot(P_grande[:, columna], label=f"columna {columna}")
der.set_xlabel("posición")
der.set_title("Cada pareja gira a su velocidad")
der.legend(fontsize=8)
plt.tight_layout()
plt.show()
print("PE[0] con d = 4:", POS.sinusoidal_positions(1, 4)[0])
print("misma tabla que llmlab.model:", np.allclose(P_grande, LM.sinusoidal_positions(100, 64).numpy(), atol=1e-5))

# %% [markdown]
# ### Ejercicio 3 · `build_input`, encuentra el error (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Ya puedes montar la entrada del Transformer. `build_input(ids, E, P)` debe devolver `X = E[ids] + P[:n]`, un
# **array de NumPy de floats**:
#
# - `P` tiene forma `(max_len, d_model)`; la fila `t` se suma al token de la posición `t`, sea cual sea su ID;
# - con un lote de IDs `(B, n)`, a cada frase se le suman las mismas `P[:n]`;
# - un ID negativo o no menor que `V` lanza `IndexError` (como en `embed`), y una frase con más tokens que filas
#   tiene `P` (`n > max_len`) lanza `ValueError`; no modifica ninguna de sus entradas.
#
# La versión de la celda pasa todas esas validaciones, pero la comprobación encuentra un fallo: con una tabla `P`
# larga, «El» y «el» acaban con la misma fila. Encuentra el error y corrígelo.

# %% nbgrader={"grade_id": "build_input", "solution": true}
def build_input(ids, E, P):
    """X = E[ids] + P[:n]: significado del token más su posición."""
    ids = np.asarray(ids)
    E = np.asarray(E, dtype=float)
    P = np.asarray(P, dtype=float)
    if ids.size and (ids.min() < 0 or ids.max() >= E.shape[0]):
        raise IndexError("hay IDs fuera del vocabulario")
    n = ids.shape[-1]
    if n > P.shape[0]:
        raise ValueError(f"{n} tokens no caben en una tabla de {P.shape[0]} posiciones")
    ### BEGIN SOLUTION
    return E[ids] + P[:n]
    ### END SOLUTION
    ### BEGIN BUGGY
    # return E[ids] + P[ids]
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# ¿Con qué se indexa `P` en la última línea? La posición de un token es su lugar en la frase (0, 1, 2, …), no su ID.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `P[ids]` toma la fila de `P` que corresponde al **ID** (las dos apariciones del 42 reciben la misma); la correcta
# es `P[:n]`, las `n` primeras filas, que se difunden sobre el lote.
#
# </details>

# %% nbgrader={"grade_id": "test_build_input", "grade": true, "points": 2}
# Comprobación del ejercicio 3 · tolerancia: 1e-6 (sumas de filas; float32 también vale).
E_t = np.arange(2000 * 4, dtype=float).reshape(2000, 4) / 1000
P_t = POS.sinusoidal_positions(2048, 4)  # una tabla larga: más filas que IDs hay en la frase
with reference_blocked(EMB.embed, EMB.build_input):
    X_t = checked_call(build_input, [42, 981, 774, 42, 1503], E_t, P_t)
    check_array(X_t, what="build_input de la frase", dtype="float", shape=(5, 4))
    check_close(X_t[0], [0.168, 1.169, 0.170, 1.171], atol=1e-6, what="la fila de «El»", hint="E[42] + P[0]")
    check_true(not np.allclose(X_t[0], X_t[3]),
               "«El» (posición 0) y «el» (posición 3) tienen el mismo ID, pero sus filas de X deben ser distintas",
               hint="suma P[:n] (por posición), no P[ids] (por ID)")
    check_close(X_t[0] - X_t[3], P_t[0] - P_t[3], atol=1e-6, what="X[«El»] − X[«el»]",
                hint="lo único que distingue esas dos filas es su posición")
    check_array(checked_call(build_input, [[1, 2], [3, 4], [5, 6]], E_t, P_t), what="un lote de 3 frases de 2 tokens",
                dtype="float", shape=(3, 2, 4))
    check_raises(lambda: build_input(list(range(7)), E_t, P_t[:6]), ValueError, what="7 tokens con solo 6 posiciones")
ok("X = E[I] + P: mismo ID, distinta posición, distinta fila")
### BEGIN HIDDEN TESTS
with hidden("build_input: lotes, bordes, posiciones por ID e IDs inválidos"):
    rng_t = np.random.default_rng(203)
    casos = []
    for _ in range(10):
        V_c, d_c, L_c = int(rng_t.integers(20, 400)), int(rng_t.integers(1, 9)), int(rng_t.integers(1, 16))
        E_c, P_c = rng_t.normal(size=(V_c, d_c)), rng_t.normal(size=(L_c, d_c))
        n_c = int(rng_t.integers(1, L_c + 1))
        casos.append((rng_t.integers(0, V_c, size=(n_c,) if rng_t.random() < 0.5 else (int(rng_t.integers(1, 4)), n_c)),
                      E_c, P_c))
    E_c, P_c = rng_t.normal(size=(50, 3)), rng_t.normal(size=(4, 3))
    casos += [([9, 9, 9, 9], E_c, P_c),  # n = max_len justo
              ([3, 1, 2], E_c.astype(np.float32), P_c.astype(np.float32)), ([[0, 49]], E_c, P_c)]
    esperados = [EMB.build_input(i_c, E2, P2) for i_c, E2, P2 in casos]
    with reference_blocked(EMB.embed, EMB.build_input):
        for (i_c, E2, P2), esperado in zip(casos, esperados):
            obtenido = checked_call(build_input, i_c, E2, P2)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-6, atol=1e-6)
        check_raises(lambda: build_input([1, 2, 3, 4, 5], E_c, P_c), ValueError)
        check_raises(lambda: build_input([[1, 2], [3, 50]], E_c, P_c), IndexError)
        check_raises(lambda: build_input([[1, -2], [3, 4]], E_c, P_c), IndexError)
### END HIDDEN TESTS

# %% [markdown]
# Así se ve la diferencia. Con una `E` aleatoria de ancho 16, las filas de «El» y «el» son idénticas en `E[I]`
# (izquierda) y dejan de serlo en `E[I] + P` (derecha).

# %%
rng = np.random.default_rng(SEMILLA)
E_demo = rng.normal(0, 0.5, size=(2000, 16))
P_demo = POS.sinusoidal_positions(32, 16)
sin_posicion = EMB.embed(I_frase, E_demo)
con_posicion = EMB.build_input(I_frase, E_demo, P_demo)
fig, ejes = plt.subplots(1, 2, figsize=(11, 3.2))
for eje, matriz, titulo in zip(ejes, [sin_posicion, con_posicion], ["E[I]: sin posición", "E[I] + P: con posición"]):
    im = eje.imshow(matriz, aspect="auto", cmap="coolwarm", vmin=-2, vmax=2)
    eje.set_yticks(range(5), palabras)
    eje.set_xlabel("dimensión")
    eje.set_title(titulo)
    eje.grid(False)
fig.colorbar(im, ax=ejes)
plt.show()
print("¿«El» y «el» iguales?  sin posición:", np.allclose(sin_posicion[0], sin_posicion[3]),
      "| con posición:", np.allclose(con_posicion[0], con_posicion[3]))

# %% [markdown]
# ### 3.2 Posiciones aprendidas
#
# GPT-2 y BERT no usan una fórmula: tienen una tabla `P` más, con una fila **entrenable** por posición, que se
# ajusta durante el entrenamiento como cualquier otro peso. Funciona bien, pero solo existe hasta la última fila:
# GPT-2 small, el de 124 millones de parámetros, tiene 1024 posiciones × 768 dimensiones = 786 432 parámetros de
# posición (sus hermanos mayores, 1024 × 1600 en el más grande) y ni una fila para el token 1025.
# En `llmlab.model` es `LearnedPositions`:

# %%
posiciones_aprendidas = LM.LearnedPositions(max_seq_len=16, d_model=8)
print("parámetros entrenables:", sum(p.numel() for p in posiciones_aprendidas.parameters()))
print("posiciones 0..2 → forma", tuple(posiciones_aprendidas(torch.arange(3)).shape))
try:
    posiciones_aprendidas(torch.tensor([16]))
except IndexError as error:
    print("posición 16 →", type(error).__name__, "(la tabla acaba en la posición 15)")

# %% [markdown]
# ### 3.3 RoPE: girar en vez de sumar
#
# RoPE (*rotary position embedding*, Su et al., 2021) no toca `X`. Dentro de la atención toma cada consulta `q` y
# cada clave `k`, las parte en parejas de coordenadas y gira cada pareja un ángulo `pos · θ_i`, con
# `θ_i = 10000^{−2i/d}` (las mismas velocidades de reloj que la tabla senoidal). El truco está en que el producto
# escalar de dos vectores girados solo depende de la **diferencia** de ángulos: la puntuación entre la posición
# `m` y la `n` depende de `m − n`, no de dónde empieza la frase. Por eso RoPE generaliza mejor a contextos largos
# y es lo que usan Llama y casi todos los modelos actuales.
#
# Un detalle práctico: **qué coordenadas forman pareja**. `llmlab` (como Hugging Face en Llama) empareja la
# dimensión `i` con la `i + d/2` (*rotate half*); el artículo original emparejaba vecinas, `(2i, 2i+1)`. Son el
# mismo giro con las coordenadas guardadas en otro orden; `POS.apply_rope(x, interleaved=True)` hace la segunda.
#
# Comprobemos la propiedad: el mismo `q` y el mismo `k`, separados siempre por 3 posiciones, dan la misma
# puntuación empiecen donde empiecen.

# %%
rng = np.random.default_rng(SEMILLA)
q_rope, k_rope = rng.normal(size=8), rng.normal(size=8)
for m, n in [(3, 0), (10, 7), (50, 47), (1000, 997)]:
    print(f"q en {m:4d}, k en {n:4d} (distancia {m - n}): {POS.rope_score(q_rope, k_rope, m, n):+.6f}")
print(f"sin girar, q·k = {q_rope @ k_rope:+.6f}; a distancia 4: {POS.rope_score(q_rope, k_rope, 4, 0):+.6f}")

x_rope = rng.normal(size=(6, 8))
cos_t, sin_t = LM.RotaryEmbedding(8)(torch.arange(6))
x_rope_torch = LM.apply_rope(torch.tensor(x_rope, dtype=torch.float32), cos_t, sin_t).numpy()
print("mismo giro que llmlab.model:", np.allclose(POS.apply_rope(x_rope), x_rope_torch, atol=1e-6))

# %% [markdown]
# A la izquierda, el vector `[1, 0]` de la pareja 0 (rápida, 1 radián por posición) y el de la pareja 1 (diez
# veces más lenta) girados en las posiciones 0 a 7. A la derecha, las puntuaciones `q·k` del mismo par de
# vectores colocados en todas las combinaciones de posiciones `(m, n)`: cada diagonal tiene un único color,
# porque solo cuenta `m − n`.

# %%
d_rope = 8
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 4.2))
colores = plt.cm.viridis(np.linspace(0, 1, 8))
for pareja, estilo in [(0, "-"), (1, "--")]:
    base = np.zeros(d_rope)
    base[pareja] = 1.0  # primera coordenada de la pareja; su compañera es pareja + d/2
    girados = POS.apply_rope(np.tile(base, (8, 1)))
    for posicion, (vector, color) in enumerate(zip(girados, colores)):
        izq.annotate("", xy=(vector[pareja], vector[pareja + d_rope // 2]), xytext=(0, 0),
                     arrowprops=dict(arrowstyle="->", color=color, linestyle=estilo))
        if pareja == 0:
            izq.text(1.1 * vector[pareja], 1.1 * vector[pareja + d_rope // 2], str(posicion), color=color, fontsize=8)
izq.set_xlim(-1.3, 1.3)
izq.set_ylim(-1.3, 1.3)
izq.set_aspect("equal")
izq.set_title("Pareja 0 (continua) y pareja 1 (discontinua)")
puntos = np.arange(16)
S_rope = POS.rope_score(q_rope, k_rope, puntos[:, None], puntos[None, :])
im = der.imshow(S_rope, cmap="magma")
der.set_xlabel("posición de k (n)")
der.set_ylabel("posición de q (m)")
der.set_title("q·k con RoPE: depende solo de m − n")
der.grid(False)
fig.colorbar(im, ax=der)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 4. Atención: una media ponderada de valores
#
# Cada token produce tres vectores a partir de su fila de `X`, con tres matrices aprendidas:
#
# $$Q = XW_Q \qquad K = XW_K \qquad V = XW_V$$
#
# - la **consulta** `q` (*query*) describe lo que ese token anda buscando;
# - la **clave** `k` (*key*) describe lo que ofrece a quien lo busque;
# - el **valor** `v` (*value*) es el contenido que aporta si le prestan atención.
#
# La puntuación entre el token `i` y el `j` es el producto escalar `q_i · k_j`. Una softmax por filas convierte
# las puntuaciones de cada token en pesos que suman 1, y la salida de cada token es la media de los valores
# ponderada con esos pesos: cada token decide cuánto toma de cada uno de los demás.
#
# ### El ejemplo del capítulo: «banco» en «El banco aprobó»
#
# «Banco» puede ser un asiento o una entidad financiera. Sus puntuaciones hacia `[El, banco, aprobó]` son
# `[0.2, 2.0, 1.0]` y los valores (de dimensión 2) son `El = [0.1, 0.0]`, `banco = [1.0, 0.2]` y
# `aprobó = [0.4, 1.0]`. El código del libro, tal cual:

# %%
def softmax_libro(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


scores = np.array([0.2, 2.0, 1.0])
values = np.array([[0.1, 0.0], [1.0, 0.2], [0.4, 1.0]])
weights = softmax_libro(scores)
o = weights @ values
print(np.round(weights, 3), np.round(o, 3))
print("desglose de o:", " + ".join(f"{w:.3f}·{v.tolist()}" for w, v in zip(weights, values)))

# %% [markdown]
# «Banco» se queda con un 65.2 % de sí mismo, toma un 24.0 % de «aprobó» (el contexto de la acción, que apunta al
# banco que presta dinero) y casi nada, un 10.8 %, de «El». Su nuevo vector, `o ≈ [0.759, 0.370]`, ya no es el
# «banco» genérico de la tabla de embeddings: es «banco» leído en esta frase.
#
# ### Ejercicio 4 · `attention_row` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `attention_row(scores, values)`, que devuelve la tupla `(weights, output)`:
#
# - `scores` tiene forma `(n,)` y `values` forma `(n, d_v)`;
# - `weights` es la softmax de `scores` (estable: resta el máximo) y `output = weights @ values`, forma `(d_v,)`;
# - los dos son **arrays de NumPy de floats**; acepta listas y no modifica sus entradas.
#
# Escribe tú la softmax (es una línea, y ya la hiciste en el lab 01): no uses `lf.softmax`.

# %% nbgrader={"grade_id": "attention_row", "solution": true}
def attention_row(scores, values):
    """Pesos de atención de un token y su salida: (softmax(scores), pesos @ values)."""
    ### BEGIN SOLUTION
    s = np.asarray(scores, dtype=float)
    e = np.exp(s - s.max())
    pesos = e / e.sum()
    return pesos, pesos @ np.asarray(values, dtype=float)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Es la softmax del lab 01 sobre un vector, seguida de un producto vector-matriz: `(n,) @ (n, d_v)` da `(d_v,)`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `s = np.asarray(scores, dtype=float)`, `e = np.exp(s - s.max())`, `pesos = e / e.sum()` y
# `return pesos, pesos @ np.asarray(values, dtype=float)`. Nada de `s -= ...`: crea arrays nuevos.
#
# </details>

# %% nbgrader={"grade_id": "test_attention_row", "grade": true, "points": 2}
# Comprobación del ejercicio 4 · tolerancia: 1e-6 (los números del libro llevan 6 decimales).
with reference_blocked(ATT.attention_row, lf.softmax, ATT.softmax_rows):
    fila_t = checked_call(attention_row, [0.2, 2.0, 1.0], [[0.1, 0.0], [1.0, 0.2], [0.4, 1.0]])
    check_type(fila_t, tuple, what="lo que devuelve attention_row")
    check_equal(len(fila_t), 2, what="elementos de lo que devuelve attention_row", hint="(weights, output)")
    pesos_t, salida_t = fila_t
    check_array(pesos_t, what="los pesos", dtype="float", shape=(3,))
    check_array(salida_t, what="la salida", dtype="float", shape=(2,))
    check_close(pesos_t, [0.107815, 0.652240, 0.239946], atol=1e-6, what="los pesos de «banco»",
                hint="exponencia las puntuaciones y divide por la suma")
    check_close(float(np.sum(pesos_t)), 1.0, atol=1e-6, what="la suma de los pesos")
    check_close(salida_t, [0.759000, 0.370394], atol=1e-6, what="la salida de «banco»",
                hint="la salida es pesos @ values: una media de las filas de values")
    check_close(checked_call(attention_row, [1000.0, 999.0, 998.0], np.eye(3))[0], [0.665241, 0.244728, 0.090031],
                atol=1e-6, what="pesos con puntuaciones [1000, 999, 998]", hint="resta el máximo antes de np.exp")
print(np.round(pesos_t, 3), np.round(salida_t, 3))
ok("la fila de atención de «banco» da [0.108, 0.652, 0.240] y o = [0.759, 0.370]")
### BEGIN HIDDEN TESTS
with hidden("attention_row: filas aleatorias, puntuaciones enormes y un solo token"):
    rng_t = np.random.default_rng(204)
    casos = []
    for escala in (0.5, 3.0, 40.0, 800.0):
        for _ in range(4):
            n_c, d_c = int(rng_t.integers(1, 12)), int(rng_t.integers(1, 6))
            casos.append((rng_t.normal(0, escala, size=n_c), rng_t.normal(size=(n_c, d_c)), escala))
    casos += [(np.array([5.0, 5.0]), np.array([[1.0], [3.0]]), 1.0), (np.array([-1e4, -1e4 - 1.0]), np.eye(2), 1e4),
              (rng_t.normal(size=4).astype(np.float32), rng_t.normal(size=(4, 3)).astype(np.float32), 1.0)]
    esperados = [ATT.attention_row(s_c, v_c) for s_c, v_c, _ in casos]
    with reference_blocked(ATT.attention_row, lf.softmax, ATT.softmax_rows):
        for (s_c, v_c, escala), (w_esp, o_esp) in zip(casos, esperados):
            w_obt, o_obt = checked_call(attention_row, s_c, v_c)
            check_array(w_obt, dtype="float", shape=w_esp.shape)
            check_array(o_obt, dtype="float", shape=o_esp.shape)
            tol = 1e-6 if escala <= 3 else 1e-4  # con puntuaciones enormes, float32 pierde cifras en el exponente
            check_close(w_obt, w_esp, rtol=1e-5, atol=tol)
            check_close(o_obt, o_esp, rtol=1e-5, atol=tol)
### END HIDDEN TESTS

# %% [markdown]
# Dos maneras de mirar el mismo cálculo. A la izquierda, los pesos de la fila de «banco». A la derecha, la suma
# de vectores: cada valor (flecha fina) se encoge según su peso y los trozos se colocan uno detrás de otro hasta
# llegar a `o` (flecha gruesa).

# %%
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.8))
barras = izq.bar(["El", "banco", "aprobó"], weights, color=["tab:gray", "tab:blue", "tab:orange"])
for barra, peso in zip(barras, weights):
    izq.text(barra.get_x() + barra.get_width() / 2, peso + 0.01, f"{peso:.3f}", ha="center")
izq.set_ylabel("peso de atención")
izq.set_ylim(0, 0.75)
izq.set_title("Fila de atención de «banco»")
inicio = np.zeros(2)
for nombre, peso, valor, color in zip(["El", "banco", "aprobó"], weights, values, ["tab:gray", "tab:blue", "tab:orange"]):
    der.annotate("", xy=valor, xytext=(0, 0), arrowprops=dict(arrowstyle="->", color=color, alpha=0.35))
    der.text(valor[0] + 0.02, valor[1], f"v({nombre})", color=color)
    der.annotate("", xy=inicio + peso * valor, xytext=inicio, arrowprops=dict(arrowstyle="->", color=color, lw=2))
    inicio = inicio + peso * valor
der.annotate("", xy=o, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", color="k", lw=2.5))
der.text(o[0] + 0.03, o[1] - 0.06, f"o = [{o[0]:.3f}, {o[1]:.3f}]")
der.set_xlim(-0.05, 1.15)
der.set_ylim(-0.1, 1.1)
der.set_aspect("equal")
der.set_title("o = 0.108·v(El) + 0.652·v(banco) + 0.240·v(aprobó)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ### De una fila a la matriz entera
#
# Con todos los tokens a la vez, las puntuaciones forman una matriz `n × n` y la atención completa es
#
# $$S = \frac{QK^\top}{\sqrt{d_k}} \qquad A = \mathrm{softmax}(S)\ \text{(por filas)} \qquad O = AV$$
#
# `A_ij` es cuánto mira el token `i` al token `j`; cada **fila** suma 1.
#
# ¿Por qué dividir por `√d_k`? Un producto escalar suma `d_k` términos, así que su tamaño crece con `d_k`: con
# componentes de varianza 1, las puntuaciones tienen desviación típica `√d_k`. Unas puntuaciones grandes
# saturan la softmax (casi todo el peso a un solo token), los gradientes se apagan y el aprendizaje se frena.
# Con `d_k = 64` se divide por `√64 = 8` y la escala vuelve a ser la de siempre:

# %%
rng = np.random.default_rng(SEMILLA)
d_k = 64
print("√d_k =", math.sqrt(d_k))
q_64, K_64 = rng.normal(size=d_k), rng.normal(size=(10, d_k))
bruto = K_64 @ q_64
escalado = bruto / math.sqrt(d_k)
print(f"desviación típica de q·k: {bruto.std():.2f} sin escalar, {escalado.std():.2f} escalado")
print("peso máximo sin escalar :", round(float(lf.softmax(bruto).max()), 4))
print("peso máximo escalado    :", round(float(lf.softmax(escalado).max()), 4))

# %% [markdown]
# ### Ejercicio 5 · `qkv_project` (1 punto · dificultad ★☆☆ · ~5 min)
#
# Escribe `qkv_project(X, W_Q, W_K, W_V)`, que devuelve la tupla `(Q, K, V)` con `Q = X W_Q`, `K = X W_K` y
# `V = X W_V` (tres **arrays de NumPy de floats**, también si `X` y las `W` son de enteros). Convención del libro: vectores fila, así que `X` tiene forma `(n, d_model)` (o `(B, n, d_model)`
# con un lote) y cada `W` tiene `d_model` filas. Las matrices no tienen por qué ser cuadradas: `W_Q` y `W_K`
# llevan a `d_k` columnas y `W_V` a `d_v`.

# %% nbgrader={"grade_id": "qkv_project", "solution": true}
def qkv_project(X, W_Q, W_K, W_V):
    """Consultas, claves y valores: (X W_Q, X W_K, X W_V)."""
    ### BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    return X @ np.asarray(W_Q, dtype=float), X @ np.asarray(W_K, dtype=float), X @ np.asarray(W_V, dtype=float)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# El operador `@` de NumPy multiplica las dos últimas dimensiones y trata las anteriores como lote: `X @ W` funciona
# igual con `X` de forma `(n, d_model)` que `(B, n, d_model)`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Convierte `X` con `np.asarray(X, dtype=float)` y devuelve la tupla `(X @ W_Q, X @ W_K, X @ W_V)`.
#
# </details>

# %% nbgrader={"grade_id": "test_qkv_project", "grade": true, "points": 1}
# Comprobación del ejercicio 5 · tolerancia: 1e-6 (rtol 1e-5 en los casos aleatorios: float32 también vale).
X_t = np.array([[0.20, 0.10, -0.30, 0.40], [0.80, -0.20, 0.10, 0.50], [0.10, 0.70, 0.20, -0.10],
                [0.18, 0.08, -0.25, 0.36], [0.60, 0.40, 0.70, 0.20]])
with reference_blocked(ATT.qkv_project, ATT.attention_from_X):
    qkv_t = checked_call(qkv_project, X_t, np.eye(4), 2 * np.eye(4), np.eye(4)[:, :2])
    check_type(qkv_t, tuple, what="lo que devuelve qkv_project")
    check_equal(len(qkv_t), 3, what="elementos de lo que devuelve qkv_project", hint="(Q, K, V)")
    Q_t, K_t, V_t = qkv_t
    for M_t, nombre in zip(qkv_t, "QKV"):
        check_array(M_t, what=nombre, dtype="float", ndim=2)
    check_close(Q_t, X_t, atol=1e-6, what="Q con W_Q = identidad")
    check_close(K_t, 2 * X_t, atol=1e-6, what="K con W_K = 2·identidad", hint="K = X @ W_K")
    check_shape(V_t, (5, 2), what="V con W_V de forma (4, 2)", hint="vectores fila: X (n, d_model) @ W (d_model, d_v)")
    check_close(V_t, X_t[:, :2], atol=1e-6, what="V con W_V = dos primeras columnas de la identidad")
ok("Q, K y V salen de X con tres matrices distintas")
### BEGIN HIDDEN TESTS
with hidden("qkv_project: matrices rectangulares, lotes y listas"):
    rng_t = np.random.default_rng(205)
    casos = []
    for forma in [(5, 4), (1, 6), (3, 7, 5), (2, 2, 3, 8)]:
        X_c = rng_t.normal(size=forma)
        d_c = forma[-1]
        casos.append((X_c, (rng_t.normal(size=(d_c, 3)), rng_t.normal(size=(d_c, 3)), rng_t.normal(size=(d_c, 5)))))
    casos.append((rng_t.normal(size=(2, 3)).tolist(), tuple(rng_t.normal(size=(3, 2)) for _ in range(3))))
    casos.append((np.arange(6).reshape(2, 3), tuple(np.arange(6).reshape(3, 2) - k for k in range(3))))  # enteros
    casos.append(([[1, 0], [2, -1]], ([[1, 2], [3, 4]], [[0, 1], [1, 0]], [[2], [5]])))  # listas de enteros
    esperados = [ATT.qkv_project(X_c, *W_c) for X_c, W_c in casos]
    with reference_blocked(ATT.qkv_project, ATT.attention_from_X):
        for (X_c, W_c), esperado in zip(casos, esperados):
            obtenido = checked_call(qkv_project, X_c, *W_c)
            check_type(obtenido, tuple)
            check_equal(len(obtenido), 3)
            for a_c, b_c in zip(obtenido, esperado):
                check_array(a_c, dtype="float", shape=b_c.shape)
                check_close(a_c, b_c, rtol=1e-5, atol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# ### Ejercicio 6 · `scaled_dot_product_attention` (3 puntos · dificultad ★★★ · ~25 min)
#
# Escribe `scaled_dot_product_attention(Q, K, V, mask=None)`, que devuelve la tupla `(O, A)`:
#
# - `Q` tiene forma `(…, n_q, d_k)`, `K` `(…, n_k, d_k)` y `V` `(…, n_k, d_v)`; los `…` son dimensiones de lote
#   (o de cabezas) que pueden aparecer delante. Para trasponer `K` con lotes usa `np.swapaxes(K, -1, -2)`, no `K.T`;
# - `A = softmax(Q Kᵀ / √d_k)` por filas (último eje), estable (restando el máximo **de cada fila**), y `O = A V`;
#   los dos, **arrays de NumPy de floats**, sin modificar las entradas;
# - `mask`, si se da, es un array booleano que se puede difundir (*broadcast*) a la forma de `A`: `True` donde la
#   consulta **puede mirar** y `False` donde no. Las posiciones `False` tienen que acabar con peso exactamente 0 (pon
#   `-np.inf` en su puntuación antes de la softmax). En los casos de este ejercicio cada fila puede mirar al menos
#   una posición.
#
# **Dos maneras de escribir una máscara.** Esta es la *booleana* («puede mirar»), la de
# `torch.nn.functional.scaled_dot_product_attention` (SDPA) y de `llmlab.model`. Cuidado:
# `torch.nn.MultiheadAttention` usa la booleana al revés (`True` = **prohibido**). La otra es la *aditiva* que verás
# en el lab 03: una matriz de números que se **suma** a las puntuaciones, `0` donde se puede mirar y un número muy
# negativo (`−1e9`) donde no. Un `−∞` literal, como el de aquí, es seguro mientras toda fila tenga al menos una
# posición permitida: si una fila entera fuera `−∞`, la softmax calcularía `−∞ − (−∞) = nan`.
#
# Escribe tu propia softmax (o reutiliza la de tu ejercicio 4); no uses `lf.softmax`.

# %% nbgrader={"grade_id": "scaled_dot_product_attention", "solution": true}
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Atención completa: (O, A) con A = softmax(Q Kᵀ / √d_k) y O = A V."""
    ### BEGIN SOLUTION
    Q, K, V = (np.asarray(M_, dtype=float) for M_ in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Tres pasos: puntuaciones `S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)`, la máscara con
# `np.where(mask, S, -np.inf)`, y la softmax estable a lo largo de `axis=-1` (con `keepdims=True`).
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `d_k` es `Q.shape[-1]`, no el número de tokens. Para la softmax:
# `e = np.exp(S - S.max(axis=-1, keepdims=True))`, `A = e / e.sum(axis=-1, keepdims=True)`, y `return A @ V, A`.
#
# </details>

# %% nbgrader={"grade_id": "test_scaled_dot_product_attention", "grade": true, "points": 3}
# Comprobación del ejercicio 6 · tolerancia: 1e-6 en los números de la frase; en las pruebas con puntuaciones
# enormes, 1e-4 (en float32 el exponente de la softmax ya pierde cifras).
BLOQUEADAS_SDPA = (ATT.scaled_dot_product_attention, ATT.attention_scores, ATT.softmax_rows, ATT.causal_attention,
                   ATT.attention_from_X, lf.softmax)
X_t = np.array([[0.20, 0.10, -0.30, 0.40], [0.80, -0.20, 0.10, 0.50], [0.10, 0.70, 0.20, -0.10],
                [0.18, 0.08, -0.25, 0.36], [0.60, 0.40, 0.70, 0.20]])
with reference_blocked(*BLOQUEADAS_SDPA):
    resultado_t = checked_call(scaled_dot_product_attention, X_t, X_t, X_t)
    check_type(resultado_t, tuple, what="lo que devuelve scaled_dot_product_attention")
    check_equal(len(resultado_t), 2, what="elementos de lo que devuelve", hint="(O, A)")
    O_t, A_t = resultado_t
    check_array(A_t, what="A de la frase (Q = K = V = X)", dtype="float", shape=(5, 5))
    check_array(O_t, what="O de la frase", dtype="float", shape=(5, 4))
    check_close(A_t.sum(axis=-1), np.ones(5), atol=1e-6, what="la suma de cada fila de A",
                hint="la softmax va fila a fila: axis=-1")
    check_close(A_t[1], [0.188168, 0.257839, 0.154059, 0.185644, 0.214291], atol=1e-6, what="la fila de «banco»",
                hint="con d_k = 4 se divide por √4 = 2")
    check_close(O_t[1], [0.421301, 0.175658, 0.103738, 0.298471], atol=1e-6, what="la salida de «banco»")
    _, A64_t = checked_call(scaled_dot_product_attention, np.ones((1, 64)), np.vstack([np.ones(64), np.zeros(64)]),
                            np.eye(2))
    check_close(A64_t, [[0.999665, 0.000335]], atol=1e-6, what="pesos con d_k = 64 y puntuaciones [64, 0]",
                hint="divide por √64 = 8, no por 64 ni por nada")
    O_c_t, A_c_t = checked_call(scaled_dot_product_attention, X_t, X_t, X_t, mask=np.tril(np.ones((5, 5), dtype=bool)))
    check_close(np.triu(A_c_t, 1), np.zeros((5, 5)), atol=0, what="A por encima de la diagonal con máscara causal",
                hint="las posiciones False de la máscara deben quedar con peso exactamente 0")
    check_close(O_c_t[0], X_t[0], atol=1e-6, what="con máscara causal, el primer token solo se ve a sí mismo")
ok("softmax(QKᵀ/√d_k)·V: filas que suman 1 y la escala de √d_k")
### BEGIN HIDDEN TESTS
with hidden("scaled_dot_product_attention: valores grandes, lotes, formas rectangulares y máscaras"):
    rng_t = np.random.default_rng(206)
    casos = []
    for forma_q, forma_k, d_v, escala in [((5, 4), (5, 4), 4, 30.0), ((3, 8), (6, 8), 2, 1.0), ((2, 4, 6), (2, 7, 6), 3, 5.0),
                                          ((2, 3, 5, 16), (2, 3, 5, 16), 16, 2.0), ((1, 64), (9, 64), 5, 1.0)]:
        Q_c, K_c = rng_t.normal(0, escala, size=forma_q), rng_t.normal(0, escala, size=forma_k)
        casos.append((Q_c, K_c, rng_t.normal(size=forma_k[:-1] + (d_v,)), None, escala))
    for n_c in (4, 7):
        Q_c, K_c, V_c = (rng_t.normal(0, 3.0, size=(2, n_c, 4)) for _ in range(3))
        m_c = rng_t.random((n_c, n_c)) < 0.5
        m_c[np.arange(n_c), np.arange(n_c)] = True  # cada fila puede mirar al menos a sí misma
        casos.append((Q_c, K_c, V_c, m_c, 3.0))
    Q_c = rng_t.normal(0, 1, size=(2, 3, 8))
    Q_c[1] *= 60.0  # una fila del lote con puntuaciones enormes y la otra normal: el máximo va por fila
    casos.append((Q_c, rng_t.normal(0, 1, size=(2, 5, 8)) * 10, rng_t.normal(size=(2, 5, 3)), None, 600.0))
    casos.append((rng_t.normal(size=(3, 4)).astype(np.float32), rng_t.normal(size=(5, 4)).astype(np.float32),
                  rng_t.normal(size=(5, 2)).astype(np.float32), np.ones((1, 5), dtype=bool), 1.0))
    esperados = [ATT.scaled_dot_product_attention(Q_c, K_c, V_c, mask=m_c) for Q_c, K_c, V_c, m_c, _ in casos]
    with reference_blocked(*BLOQUEADAS_SDPA):
        for (Q_c, K_c, V_c, m_c, escala), (O_esp, A_esp) in zip(casos, esperados):
            O_obt, A_obt = checked_call(scaled_dot_product_attention, Q_c, K_c, V_c, mask=m_c)
            check_array(A_obt, dtype="float", shape=A_esp.shape)
            check_array(O_obt, dtype="float", shape=O_esp.shape)
            tol = 1e-6 if escala <= 3 else 1e-4
            check_close(A_obt, A_esp, rtol=1e-5, atol=tol)
            check_close(O_obt, O_esp, rtol=1e-5, atol=tol)
### END HIDDEN TESTS

# %% [markdown]
# ## 5. Multi-cabeza: varias atenciones en paralelo
#
# Una sola atención produce una única forma de mirar: una sola matriz `A`. Pero en una frase hay varias
# relaciones que seguir a la vez (quién hace qué, a qué se refiere un pronombre, qué palabra va pegada a cuál).
# La atención **multi-cabeza** reparte las columnas de `W_Q`, `W_K` y `W_V` en `H` grupos: cada cabeza trabaja
# con vectores de tamaño `d_model / H`, calcula su propia `A`, y al final las salidas de todas se concatenan y se
# mezclan con una cuarta matriz, `W_O`. Con `H` cabezas de tamaño `d/H` las cuentas cuestan lo mismo que una sola
# cabeza de tamaño `d`, pero el modelo tiene `H` maneras distintas de repartir la atención. En el lab 03 lo
# escribirás tú; aquí lo miramos con `llmlab.attention.multi_head_attention` sobre la `X` del capítulo, con dos
# cabezas de tamaño 2 y matrices aleatorias.

# %%
rng = np.random.default_rng(SEMILLA + 1)
W_Q_mh, W_K_mh, W_V_mh, W_O_mh = (rng.normal(size=(4, 4)) for _ in range(4))
O_mh, A_mh = ATT.multi_head_attention(X_frase, W_Q_mh, W_K_mh, W_V_mh, W_O_mh, n_heads=2, causal=False,
                                      return_weights=True)
print("forma de A (cabezas, n, n):", A_mh.shape, "| forma de O:", O_mh.shape)
fig, ejes = plt.subplots(1, 2, figsize=(10, 4))
for cabeza, eje in enumerate(ejes):
    im = eje.imshow(A_mh[cabeza], cmap="Blues", vmin=0, vmax=1)
    for (i, j), peso in np.ndenumerate(A_mh[cabeza]):
        eje.text(j, i, f"{peso:.2f}", ha="center", va="center", fontsize=8)
    eje.set_xticks(range(5), palabras, rotation=45)
    eje.set_yticks(range(5), palabras)
    eje.set_title(f"cabeza {cabeza}: quién mira a quién")
    eje.grid(False)
plt.tight_layout()
plt.show()

# %% [markdown]
# Cada fila de cada mapa suma 1, y las dos cabezas reparten la atención de forma distinta con la misma frase.
# En `llmlab.model` esto son los campos `n_heads` y `head_dim` de `ModelConfig`.
#
# ### Ejercicio 7 · `most_attended`, encuentra el error (1 punto · dificultad ★☆☆ · ~5 min)
#
# Un mapa de atención se lee **por filas**: la fila `i` dice a quién mira el token `i`; la columna `i`, quién lo
# mira a él. `most_attended(A, i)` debe devolver el índice `j` (un `int`) del token al que **más mira** el token
# `i` en la matriz de pesos `A` de forma `(n, n)` (un array o una lista de listas), como `int` de Python (no un
# entero de NumPy); en caso de empate, el menor
# índice, y si `i` no es una fila de `A` (negativo, o `n` o más), `IndexError`. La celda trae una versión que se
# equivoca en la cuenta de la cabeza 0 de arriba: corrígela.

# %% nbgrader={"grade_id": "most_attended", "solution": true}
def most_attended(A, i):
    """Índice del token al que más atiende el token i (la fila i de A)."""
    A = np.asarray(A, dtype=float)
    if not 0 <= i < A.shape[0]:
        raise IndexError(f"el token {i} no existe en una matriz de {A.shape[0]} filas")
    ### BEGIN SOLUTION
    return int(np.argmax(A[i]))
    ### END SOLUTION
    ### BEGIN BUGGY
    # return int(np.argmax(A[:, i]))
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `A[i]` es la fila `i`; `A[:, i]` es la columna `i`. ¿Cuál de las dos reparte el 100 % de la atención del token `i`?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `int(np.argmax(A[i]))`: la fila suma 1 y su máximo es el token al que más mira. `np.argmax` ya devuelve el primer
# índice en caso de empate.
#
# </details>

# %% nbgrader={"grade_id": "test_most_attended", "grade": true, "points": 1}
# Comprobación del ejercicio 7 · respuestas exactas (índices).
A_cabeza_0 = A_mh[0]
with reference_blocked(ATT.most_attended):
    j_t = checked_call(most_attended, A_cabeza_0, 1)
    check_number(j_t, what="most_attended(A, 1)", kind="int")
    check_equal(j_t, int(np.argmax(A_cabeza_0[1])), what="a quién mira «banco» en la cabeza 0",
                hint="la fila 1 es lo que mira «banco»; la columna 1, quién mira a «banco»")
    asimetrica = [[1.0, 0.0, 0.0], [0.7, 0.3, 0.0], [0.1, 0.2, 0.7]]
    check_equal(checked_call(most_attended, asimetrica, 2), 2, what="most_attended de una matriz asimétrica, fila 2")
    check_equal(checked_call(most_attended, asimetrica, 0), 0, what="most_attended de una matriz asimétrica, fila 0")
    check_raises(lambda: most_attended(asimetrica, 3), IndexError, what="most_attended con i = 3 en una matriz 3 × 3")
print(f"«banco» mira sobre todo a «{palabras[j_t]}»")
ok("la fila i dice a quién mira el token i")
### BEGIN HIDDEN TESTS
with hidden("most_attended: matrices aleatorias, empates e índices fuera de rango"):
    rng_t = np.random.default_rng(210)
    casos = []
    for n_c in (1, 2, 5, 9):
        A_c = lf.softmax(rng_t.normal(0, 3, size=(n_c, n_c)), axis=-1)
        casos += [(A_c, int(i_c)) for i_c in range(n_c)]
    empate = np.array([[0.25, 0.25, 0.5, 0.0], [0.4, 0.1, 0.4, 0.1], [0.0, 0.5, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0]])
    casos += [(empate, 1), (empate, 2), (empate.tolist(), 3)]
    esperados = [ATT.most_attended(A_c, i_c) for A_c, i_c in casos]
    with reference_blocked(ATT.most_attended):
        for (A_c, i_c), esperado in zip(casos, esperados):
            obtenido = checked_call(most_attended, A_c, i_c)
            check_number(obtenido, kind="int")
            check_true(isinstance(obtenido, int), f"debe devolver un int de Python, no {type(obtenido).__name__}")
            check_equal(obtenido, esperado)
        check_raises(lambda: most_attended(empate, -1), IndexError)
        check_raises(lambda: most_attended(empate, 4), IndexError)
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Sin posiciones, la atención es una bolsa de palabras
#
# Ahora que tienes la atención entera, puedes demostrar lo que se anunciaba en la sección 3. Si reordenas los
# tokens de entrada, la atención sin posiciones devuelve **las mismas filas, reordenadas igual**: ni se entera del
# orden. A esa propiedad se le llama *equivarianza a permutaciones*. Una función `f` que trabaja con una matriz de
# tokens `X` la cumple si, para una permutación `perm` de las filas,
#
# $$f(X[\text{perm}]) = f(X)[\text{perm}]$$
#
# ### Ejercicio 8 · `is_permutation_equivariant` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `is_permutation_equivariant(fn, X, perm, atol=1e-8)`, que devuelve `True` o `False` (un `bool`):
#
# - `fn` recibe una matriz de tokens y devuelve una fila por token;
# - `X` tiene forma `(n, d)` o `(B, n, d)`; `perm` es una permutación de `range(n)` que se aplica al eje de los
#   tokens, el **penúltimo** (`X[..., perm, :]`), también en la salida;
# - compara `fn(X[..., perm, :])` con `fn(X)[..., perm, :]` con tolerancia **absoluta** `atol` y ninguna relativa
#   (con `np.allclose`, pasa `rtol=0`); no uses `==` con números reales: dos cuentas iguales en distinto orden
#   pueden diferir en la última cifra; no modifiques `X`.

# %% nbgrader={"grade_id": "is_permutation_equivariant", "solution": true}
def is_permutation_equivariant(fn, X, perm, atol=1e-8):
    """¿Reordenar los tokens de X solo reordena, igual, las filas de fn(X)?"""
    ### BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    perm = np.asarray(perm)
    salida = np.asarray(fn(X), dtype=float)
    salida_permutada = np.asarray(fn(X[..., perm, :]), dtype=float)
    if salida.shape != salida_permutada.shape:
        return False
    return bool(np.allclose(salida_permutada, salida[..., perm, :], rtol=0.0, atol=atol))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Hay que llamar a `fn` dos veces: una con `X` y otra con `X` reordenado. Después, reordena la primera salida con la
# misma `perm` y compara.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `np.allclose(fn(X[..., perm, :]), fn(X)[..., perm, :], rtol=0, atol=atol)`, convertido con `bool(...)`. Si las
# dos salidas no tienen la misma forma, la respuesta es `False`.
#
# </details>

# %% nbgrader={"grade_id": "test_is_permutation_equivariant", "grade": true, "points": 2}
# Comprobación del ejercicio 8 · respuestas exactas (True o False).
rng_v = np.random.default_rng(7)
X_v = rng_v.normal(size=(5, 4))
W_v = [rng_v.normal(size=(4, 4)) for _ in range(3)]
perm_v = [2, 0, 3, 4, 1]
atencion_v = lambda X: ATT.attention_from_X(X, *W_v, causal=False)[0]  # noqa: E731
con_posiciones_v = lambda X: atencion_v(X + POS.sinusoidal_positions(X.shape[-2], X.shape[-1]))  # noqa: E731
with reference_blocked(POS.is_permutation_equivariant):
    resultado_v = checked_call(is_permutation_equivariant, atencion_v, X_v, perm_v)
    check_type(resultado_v, (bool, np.bool_), what="el resultado")
    check_equal(bool(resultado_v), True, what="¿es equivariante la atención sin posiciones?",
                hint="compara fn(X[perm]) con fn(X)[perm]: la salida también se reordena")
    check_equal(bool(checked_call(is_permutation_equivariant, con_posiciones_v, X_v, perm_v)), False,
                what="¿es equivariante la atención con posiciones senoidales?")
    check_equal(bool(checked_call(is_permutation_equivariant, lambda X: np.cumsum(X, axis=-2), X_v, perm_v)), False,
                what="¿es equivariante una suma acumulada a lo largo de los tokens?")
ok("sin posiciones, la atención no distingue el orden de las palabras")
### BEGIN HIDDEN TESTS
with hidden("is_permutation_equivariant: lotes, máscaras, otras funciones y la tolerancia"):
    rng_t = np.random.default_rng(207)
    W_c = [rng_t.normal(size=(6, 6)) for _ in range(3)]
    funciones = [
        lambda X: ATT.attention_from_X(X, *W_c, causal=False)[0],
        lambda X: ATT.attention_from_X(X, *W_c, causal=True)[0],
        lambda X: np.tanh(X) @ W_c[0],
        lambda X: np.broadcast_to(X.mean(axis=-2, keepdims=True), X.shape),
        lambda X: X + POS.sinusoidal_positions(X.shape[-2], X.shape[-1]),
        lambda X: POS.apply_rope(X),
    ]
    casos = []
    for fn_c in funciones:
        for forma in [(6, 6), (3, 6, 6)]:
            X_c = rng_t.normal(size=forma)
            perm_c = np.roll(np.arange(6), int(rng_t.integers(1, 6)))  # un desplazamiento: no es su propia inversa
            casos.append((fn_c, X_c, perm_c, 1e-8, POS.is_permutation_equivariant(fn_c, X_c, perm_c)))
    casos.append((funciones[4], rng_t.normal(size=(6, 6)), np.arange(6), 1e-8, True))  # la identidad no reordena nada
    # Una función casi equivariante: difiere en 1e-6 según la posición. Lo decide la tolerancia que te pasan.
    casi = lambda X: X + 1e-6 * np.arange(X.shape[-2])[:, None]  # noqa: E731
    X_c = rng_t.normal(size=(5, 3))
    casos += [(casi, X_c, [4, 3, 2, 1, 0], 1e-8, False), (casi, X_c, [4, 3, 2, 1, 0], 1e-4, True),
              (funciones[2], rng_t.normal(size=(6, 6)).tolist(), list(np.roll(np.arange(6), 2)), 1e-8, True)]
    # Valores grandes (≈ 1000) que difieren en 1e-4 según la posición: una tolerancia relativa lo taparía.
    casi_grande_oculto = lambda X: 1e3 + X + 1e-4 * np.arange(X.shape[-2])[:, None]  # noqa: E731
    X_c = rng_t.normal(size=(5, 3))
    casos += [(casi_grande_oculto, X_c, [4, 3, 2, 1, 0], 1e-8, False),
              (casi_grande_oculto, X_c, [4, 3, 2, 1, 0], 1e-3, True)]
    with reference_blocked(POS.is_permutation_equivariant):
        for fn_c, X_c, perm_c, atol_c, esperado in casos:
            obtenido = checked_call(is_permutation_equivariant, fn_c, X_c, perm_c, atol=atol_c)
            check_type(obtenido, (bool, np.bool_))
            check_equal(bool(obtenido), bool(esperado))
### END HIDDEN TESTS

# %% [markdown]
# La misma prueba con frases: «perro muerde hombre» y «hombre muerde perro» tienen los mismos tokens en otro
# orden. Antes de ejecutar, apunta tu predicción (no puntúa): ¿saldrá igual la fila de «perro» en las dos
# frases sin posiciones? ¿Y con posiciones? La celda que lo mide la imprime primero.

# %%
MI_PREDICCION = ""  # p. ej. "sin posiciones igual, con posiciones distinta"

# %%
print("tu predicción:", MI_PREDICCION.strip() or "(no la has escrito: hazlo antes de mirar el resultado)")
rng = np.random.default_rng(SEMILLA)
E_perro = rng.normal(size=(3, 4))  # 0 = perro, 1 = muerde, 2 = hombre
W_perro = [rng.normal(size=(4, 4)) for _ in range(3)]
frase_a, frase_b = [0, 1, 2], [2, 1, 0]
for nombre, P_usada in [("sin posiciones", np.zeros((3, 4))), ("con posiciones", POS.sinusoidal_positions(3, 4))]:
    O_a = ATT.attention_from_X(EMB.build_input(frase_a, E_perro, P_usada), *W_perro, causal=False)[0]
    O_b = ATT.attention_from_X(EMB.build_input(frase_b, E_perro, P_usada), *W_perro, causal=False)[0]
    print(f"{nombre}: ¿«perro» sale igual en las dos frases? {np.allclose(O_a[0], O_b[2])}")

# %% [markdown]
# Sin posiciones, la salida de «perro» es idéntica en las dos frases; con posiciones, no.

# %% [markdown]
# ## 7. Una pasada completa, de los IDs a los logits
#
# El capítulo resume la pasada en doce pasos: tokenizar, buscar los embeddings, sumar la posición, formar `X`,
# proyectar `Q`, `K` y `V`, comparar y aplicar la softmax, mezclar los valores, sumar el residuo y normalizar,
# pasar por el MLP, repetir en cada bloque, proyectar a logits y elegir el siguiente token (con temperatura,
# top-k o top-p). Su pseudocódigo es este:
#
# ```
# ids = tokenizer(text)
# X = embeddings(ids) + position(ids)
# para cada bloque:
#     Q, K, V = X W_Q, X W_K, X W_V
#     A = softmax(Q Kᵀ / √d_k)
#     X = norm(X + A V)            # post-norm: se normaliza DESPUÉS de sumar
#     X = norm(X + MLP(X))
# logits = X_last W_vocab
# next = sample(logits)
# ```
#
# **Cuidado: `llmlab.model` no hace exactamente esto**, y los modelos modernos tampoco. Hay dos diferencias:
#
# 1. **Pre-norm.** El pseudocódigo normaliza después de sumar el residuo (*post-norm*, como el Transformer de 2017).
#    GPT-2, Llama y `llmlab.model` normalizan **antes** de cada subcapa y dejan el residuo limpio:
#    `X = X + Atención(norm(X))` y `X = X + MLP(norm(X))`, con una normalización final antes de los logits. Se
#    entrena de forma mucho más estable con muchas capas (lo verás en el capítulo 04).
# 2. **Máscara causal.** El pseudocódigo deja que cada token mire a todos, también a los que vienen después. Un
#    modelo que genera texto no puede mirar el futuro: cada token solo atiende a sí mismo y a los anteriores (la
#    máscara causal del lab 03). Sin ella, entrenar a predecir el siguiente token sería hacer trampa.
#
# Y un detalle que sí comparten: los logits del siguiente token salen **solo de la última fila**, `X[-1]`. Es la
# única posición que ha visto la frase entera.
#
# Para el ejercicio usamos un `Transformer` de `llmlab.model` de juguete: 1 bloque, 1 cabeza, `d_model = 8`,
# posiciones aprendidas, sin sesgos, la matriz de embeddings compartida con la de salida (*tied*) y el MLP
# apagado (sus pesos a cero: el MLP es cosa del lab 04). La celda siguiente, que no tienes que tocar, te da tres
# ayudas: `layer_norm`, el modelo de juguete y `params_from_model`, que saca sus pesos como arrays de NumPy.
# Fíjate en los `.T`: PyTorch guarda cada `nn.Linear` como `(salida, entrada)` y calcula `x @ W.T`; con la
# convención de vectores fila del libro, nuestra `W_Q` es su `q_proj.weight.T`.

# %% nbgrader={"grade_id": "ayudas_pasada", "locked": true}
def layer_norm(x, eps=1e-5):
    """Normaliza cada fila a media 0 y varianza 1 (la LayerNorm del capítulo 04, sin parámetros)."""
    x = np.asarray(x, dtype=float)
    media = x.mean(axis=-1, keepdims=True)
    varianza = x.var(axis=-1, keepdims=True)
    return (x - media) / np.sqrt(varianza + eps)


def modelo_de_juguete(vocab_size=2000, d_model=8, max_len=16, semilla=0):
    """Un Transformer de llmlab con 1 bloque, 1 cabeza, sin sesgos y con el MLP apagado."""
    torch.manual_seed(semilla)
    config = LM.ModelConfig.gpt2_style(vocab_size=vocab_size, d_model=d_model, n_heads=1, n_layers=1,
                                       max_seq_len=max_len, bias=False)
    modelo = LM.Transformer(config).eval()
    with torch.no_grad():
        for nombre, peso in modelo.named_parameters():
            if "norm" not in nombre:
                peso.normal_(0.0, 0.5)  # pesos más grandes que los de fábrica, para que los logits se vean
        modelo.blocks[0].mlp.up.weight.zero_()  # MLP apagado: su salida es 0
        modelo.blocks[0].mlp.down.weight.zero_()
    return modelo


def params_from_model(modelo):
    """Los pesos del modelo de juguete como arrays de NumPy, con la convención de vectores fila."""
    atencion = modelo.blocks[0].attn
    a_numpy = lambda t: t.detach().numpy().astype(float)  # noqa: E731
    return {
        "E": a_numpy(modelo.tok_emb.weight),  # (V, d_model), también es la matriz de salida
        "P": a_numpy(modelo.pos_emb.table.weight),  # (max_len, d_model), posiciones aprendidas
        "W_Q": a_numpy(atencion.q_proj.weight.T),
        "W_K": a_numpy(atencion.k_proj.weight.T),
        "W_V": a_numpy(atencion.v_proj.weight.T),
        "W_O": a_numpy(atencion.o_proj.weight.T),
    }

# %% [markdown]
# ### Ejercicio 9 · `toy_forward` (3 puntos · dificultad ★★★ · ~30 min)
#
# Escribe `toy_forward(ids, params)`, que devuelve los logits del siguiente token, un **array de NumPy de floats**
# de forma `(V,)`, para una frase `ids` de forma `(n,)` (una lista o un array), sin modificar `params`. Es la pasada pre-norm y causal del modelo de juguete:
#
# 1. `X = E[ids] + P[:n]`;
# 2. `h = layer_norm(X)` (pre-norm);
# 3. `Q, K, V = h W_Q, h W_K, h W_V` y atención causal (`mask = np.tril(np.ones((n, n), dtype=bool))`) → `O`;
# 4. residuo: `X = X + O W_O` (aquí iría `X = X + MLP(layer_norm(X))`, pero el MLP está apagado);
# 5. logits de la **última** fila: `layer_norm(X[-1]) @ Eᵀ` (normalización final y la matriz `E` compartida).
#
# Puedes reutilizar tus funciones de los ejercicios anteriores y la `layer_norm` de la celda de ayudas.

# %% nbgrader={"grade_id": "toy_forward", "solution": true}
def toy_forward(ids, params):
    """Logits del siguiente token (forma (V,)) de una pasada pre-norm y causal de 1 bloque."""
    ### BEGIN SOLUTION
    ids = np.asarray(ids, dtype=int)
    E, P = params["E"], params["P"]
    n = ids.shape[0]
    X = E[ids] + P[:n]
    h = layer_norm(X)
    Q, K, V = h @ params["W_Q"], h @ params["W_K"], h @ params["W_V"]
    S = Q @ K.T / math.sqrt(Q.shape[-1])
    S = np.where(np.tril(np.ones((n, n), dtype=bool)), S, -np.inf)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    X = X + (A @ V) @ params["W_O"]
    return layer_norm(X[-1]) @ E.T
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Sigue los cinco pasos al pie de la letra y comprueba la forma después de cada uno: `X` y `h` son `(n, d_model)`,
# `A` es `(n, n)`, la salida de la atención `(n, d_model)` y los logits `(V,)`. Puedes usar tu
# `scaled_dot_product_attention` con `mask=np.tril(np.ones((n, n), dtype=bool))`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `X = E[ids] + P[:n]`; `h = layer_norm(X)`; `O, _ = scaled_dot_product_attention(h @ W_Q, h @ W_K, h @ W_V,
# mask=...)`; `X = X + O @ W_O`; `return layer_norm(X[-1]) @ E.T`. El error más común es sacar los logits de `X[0]`.
#
# </details>

# %% nbgrader={"grade_id": "test_toy_forward", "grade": true, "points": 3}
# Comprobación del ejercicio 9 · tolerancia: 1e-4 (el modelo de PyTorch calcula en float32).
BLOQUEADAS_PASADA = (LM.Transformer, EMB.embed, EMB.build_input, ATT.scaled_dot_product_attention,
                     ATT.causal_attention, ATT.attention_from_X, ATT.multi_head_attention)
modelo_t = modelo_de_juguete(semilla=0)
params_t = params_from_model(modelo_t)
ids_t = [42, 981, 774, 42, 1503]
with torch.no_grad():
    esperado_t = modelo_t(torch.tensor([ids_t]))[0, -1].double().numpy()
with reference_blocked(*BLOQUEADAS_PASADA):
    logits_t = checked_call(toy_forward, ids_t, params_t)
    check_array(logits_t, what="los logits de «El banco aprobó el préstamo»", dtype="float", shape=(2000,))
    check_close(logits_t, esperado_t, atol=1e-4, what="tus logits frente a los de llmlab.model",
                hint="repasa el orden: posición, layer_norm, atención causal, residuo, layer_norm final, @ E.T")
    otros_t = checked_call(toy_forward, [42, 981, 774, 42, 7], params_t)
    check_true(not np.allclose(otros_t, logits_t), "si solo cambia el último token, la predicción tiene que cambiar",
               hint="los logits salen de X[-1], no de X[0]")
print("siguiente token más probable:", int(np.argmax(logits_t)), "| el de llmlab.model:", int(np.argmax(esperado_t)))
ok("tu pasada en NumPy da los mismos logits que el Transformer de llmlab")
### BEGIN HIDDEN TESTS
with hidden("toy_forward: otros modelos, longitudes y vocabularios"):
    rng_t = np.random.default_rng(208)
    casos = []
    for semilla_c, (V_c, d_c, L_c) in enumerate([(50, 8, 16), (300, 6, 10), (97, 12, 20), (2000, 8, 16)]):
        modelo_c = modelo_de_juguete(vocab_size=V_c, d_model=d_c, max_len=L_c, semilla=100 + semilla_c)
        for n_c in (1, 2, int(rng_t.integers(3, L_c + 1))):
            ids_c = rng_t.integers(0, V_c, size=n_c)
            with torch.no_grad():
                esperado = modelo_c(torch.tensor(ids_c[None]))[0, -1].double().numpy()
            casos.append((ids_c, params_from_model(modelo_c), esperado))
    with reference_blocked(*BLOQUEADAS_PASADA):
        for ids_c, params_c, esperado in casos:
            obtenido = checked_call(toy_forward, ids_c, params_c)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, atol=1e-4)
        obtenido = checked_call(toy_forward, list(casos[0][0]), casos[0][1])  # una lista de IDs también vale
        check_close(obtenido, casos[0][2], atol=1e-4)
### END HIDDEN TESTS

# %% [markdown]
# El modelo de `llmlab` puede devolver sus mapas de atención. Con la máscara causal, el triángulo superior es
# exactamente 0: nadie mira al futuro. Y fíjate en la última fila: ve toda la frase, así que para ella la máscara
# no cambia nada; cambia las filas anteriores, y con varias capas eso acaba llegando también a la última.

# %%
modelo_demo = modelo_de_juguete(semilla=0)  # el mismo modelo de la comprobación
with torch.no_grad():
    logits_modelo, atenciones = modelo_demo(torch.tensor([I_frase]), return_attention=True)
print("forma de los logits:", tuple(logits_modelo.shape), "→ nos quedamos con [0, -1]:", tuple(logits_modelo[0, -1].shape))
print(np.round(atenciones[0][0, 0].numpy(), 3))

# %% [markdown]
# ## 8. El precio: la atención cuesta n²
#
# Cada token se compara con todos los demás, así que con `n` tokens hay `n · n` puntuaciones. Con `n = 1000` son
# 1 000 000 de relaciones; si duplicas el contexto, el trabajo se multiplica por **4**. Cada puntuación es además
# un producto escalar de `d_k` términos, así que `QKᵀ` cuesta `n² · d_k` multiplicaciones con suma.
#
# Ese `n²` explica muchas cosas prácticas: por qué un prompt larguísimo tarda más y cuesta más, por qué meterlo
# todo en el contexto no sale gratis (más ruido, más coste y más latencia), y por qué hay tanta investigación en
# atenciones más baratas. Y es la otra cara de lo que hizo ganar al Transformer: todas las posiciones se calculan
# a la vez, en paralelo, y cada token llega directamente a cualquier otro, sin pasar la información de mano en
# mano como una red recurrente.
#
# ### Ejercicio 10 · `attention_cost` (1 punto · dificultad ★☆☆ · ~5 min)
#
# Escribe `attention_cost(n, d_k=1)`, que devuelve (como **`int`** de Python) el trabajo de las puntuaciones de la
# atención: `n² · d_k`. Con `d_k = 1` es el número de parejas de tokens. Si `n` es negativo o `d_k` es menor que 1,
# lanza `ValueError`.

# %% nbgrader={"grade_id": "attention_cost", "solution": true}
def attention_cost(n, d_k=1):
    """Trabajo de Q Kᵀ con n tokens: n² · d_k (con d_k = 1, el número de parejas)."""
    ### BEGIN SOLUTION
    if n < 0 or d_k < 1:
        raise ValueError("n debe ser >= 0 y d_k >= 1")
    return int(n) * int(n) * int(d_k)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Valida primero: `n = 0` es válido (ningún token, ningún trabajo); `d_k = 0` no lo es.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `if n < 0 or d_k < 1: raise ValueError(...)` y `return int(n) * int(n) * int(d_k)`.
#
# </details>

# %% nbgrader={"grade_id": "test_attention_cost", "grade": true, "points": 1}
# Comprobación del ejercicio 10 · cuentas exactas (enteros).
with reference_blocked(C.attention_cost, C.attention_flops):
    coste_t = checked_call(attention_cost, 1000)
    check_number(coste_t, what="attention_cost(1000)", kind="int")
    check_equal(coste_t, 1_000_000, what="parejas con n = 1000", hint="cada token con todos: n · n")
    check_equal(checked_call(attention_cost, 2000) // coste_t, 4, what="el coste al duplicar n",
                hint="el coste crece con n², no con n")
    check_equal(checked_call(attention_cost, 1000, d_k=64), 64_000_000, what="QKᵀ con n = 1000 y d_k = 64")
    check_raises(lambda: attention_cost(-5), ValueError, what="attention_cost con n negativo")
ok("1000 tokens, un millón de parejas; el doble de tokens, cuatro veces más trabajo")
### BEGIN HIDDEN TESTS
with hidden("attention_cost: otros tamaños y bordes"):
    rng_t = np.random.default_rng(209)
    casos = [(0, 1), (1, 1), (3, 7), (1_000_000, 128), (131_072, 64)]
    casos += [(int(rng_t.integers(1, 50_000)), int(rng_t.integers(1, 257))) for _ in range(8)]
    esperados = [C.attention_cost(n_c, d_k=dk_c) for n_c, dk_c in casos]
    with reference_blocked(C.attention_cost, C.attention_flops):
        for (n_c, dk_c), esperado in zip(casos, esperados):
            obtenido = checked_call(attention_cost, n_c, d_k=dk_c)
            check_number(obtenido, kind="int")
            check_true(isinstance(obtenido, int), f"debe devolver un int de Python, no {type(obtenido).__name__}")
            check_equal(obtenido, esperado)
        check_raises(lambda: attention_cost(10, d_k=0), ValueError)
        check_raises(lambda: attention_cost(-1, d_k=8), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Medirlo (opcional)
#
# La cuenta dice `n²`; veamos si el reloj está de acuerdo. La celda cronometra las puntuaciones y su softmax,
# `softmax(QKᵀ/√d_k)`, con `d_k = 64` y `n` cada vez mayor (en PyTorch y con un solo hilo, para que las medidas sean
# más estables). Si el coste es `t ≈ c · n^p`, en una gráfica log-log los puntos caen en una recta de pendiente
# `p`. Los tiempos cambian de una máquina a otra y de una ejecución a otra, y la pendiente no sale exactamente 2:
# con `n` pequeños pesan los costes fijos (y la pendiente baja), y cuando `A` deja de caber en la memoria caché del
# procesador cada número cuesta más de traer (y sube). Lo que no cambia es la tendencia de fondo, `n²`. La memoria
# de la matriz `A`, en cambio, no depende del reloj: son exactamente `n²` números.

# %% tags=["nbval-ignore-output"]
hilos_antes = torch.get_num_threads()
torch.set_num_threads(1)
generador = torch.Generator().manual_seed(SEMILLA)
tiempos = []
for n in TAMANOS_COSTE:
    Q_n = torch.randn(n, 64, generator=generador)
    K_n = torch.randn(n, 64, generator=generador)
    torch.softmax(Q_n @ K_n.T / 8.0, dim=-1)  # calentamiento
    medidas = []
    for _ in range(REPETICIONES):
        inicio = time.process_time()  # tiempo de CPU: lo que hagan otros programas apenas lo cambia
        A_n = torch.softmax(Q_n @ K_n.T / 8.0, dim=-1)
        medidas.append(time.process_time() - inicio)
    tiempos.append(min(medidas))
    gflops = C.attention_flops(n, 64, 64) / 2 / tiempos[-1] / 1e9  # solo QKᵀ: la mitad de las FLOPs de la cabeza
    print(f"n = {n:5d}: {tiempos[-1] * 1e3:8.2f} ms   A ocupa {A_n.numel() * 4 / 2**20:7.2f} MiB   ~{gflops:.1f} GFLOP/s en QKᵀ")
torch.set_num_threads(hilos_antes)

pendiente, ordenada = np.polyfit(np.log(TAMANOS_COSTE), np.log(tiempos), 1)
print(f"pendiente ajustada (exponente de n): {pendiente:.2f}")

n_eje = np.array(TAMANOS_COSTE, dtype=float)
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.8))
parejas = [C.attention_cost(int(n)) for n in np.geomspace(100, 10_000, 9)]
izq.loglog(np.geomspace(100, 10_000, 9), parejas, marker="o")
izq.annotate("n = 1000 → 10⁶ parejas", xy=(1000, 1e6), xytext=(150, 2e7), arrowprops=dict(arrowstyle="->"))
izq.set_xlabel("tokens de contexto n")
izq.set_ylabel("parejas (n²)")
izq.set_title("La cuenta: ×4 al duplicar n")
der.loglog(n_eje, tiempos, "o", label="medido")
der.loglog(n_eje, np.exp(ordenada) * n_eje**pendiente, "-", label=f"ajuste: pendiente {pendiente:.2f}")
der.loglog(n_eje, tiempos[0] * (n_eje / n_eje[0]) ** 2, "--", color="gray", label="referencia n²")
der.set_xticks(TAMANOS_COSTE, [str(n) for n in TAMANOS_COSTE])
der.minorticks_off()
der.set_xlabel("tokens de contexto n")
der.set_ylabel("segundos")
der.set_title("El reloj: softmax(QKᵀ/√d_k)")
der.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 9. Errores frecuentes
#
# Aquí están los tropiezos típicos del capítulo. Cada uno es código que se ejecuta sin protestar; debajo, la
# comprobación que lo pilla y el mensaje que verías. Casi todos vuelven a aparecer en las pruebas ocultas de los
# ejercicios, así que merece la pena reconocerlos.

# %%
lo_delata = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla

E_err = np.arange(2000 * 4, dtype=float).reshape(2000, 4) / 1000
P_err = POS.sinusoidal_positions(2048, 4)

# 1. El tensor como detalle de implementación: devolver (d_model, n) en lugar de (n, d_model).
lo_delata("embeddings traspuestos", lambda: check_shape(E_err[I_frase].T, (5, 4), what="E[I]"))

# 2. Fiarse de NumPy con IDs negativos: E[-1] es la última fila, sin ningún error.
lo_delata("ID negativo que se cuela", lambda: check_raises(lambda: E_err[[-1]], IndexError, what="E[[-1]]"))

# 3. Olvidar la posición: «El» y «el» quedan idénticos.
lo_delata("sin posiciones", lambda: check_true(not np.allclose(E_err[42], E_err[I_frase][3]),
                                               "«El» y «el» deben tener filas distintas"))

# 4. Seno y coseno cambiados de sitio: PE[0] sale [1, 0, 1, 0].
P_cambiada = POS.sinusoidal_positions(4, 4)[:, [1, 0, 3, 2]]
lo_delata("sin y cos intercambiados", lambda: check_close(P_cambiada[0], [0, 1, 0, 1], what="PE[0]"))

# 5. Exponente de la frecuencia sin el 2 (i/d en lugar de 2i/d): relojes con la velocidad equivocada.
P_exponente = np.sin(np.arange(4)[:, None] / 10000 ** (np.arange(4)[None, :] // 2 / 4))
lo_delata("exponente i/d", lambda: check_close(P_exponente[:, 2], POS.sinusoidal_positions(4, 4)[:, 2],
                                               atol=1e-6, what="columna 2 de PE"))

# 6. Olvidar dividir por √d_k: con d_k = 64 la softmax se satura.
lo_delata("sin / √d_k", lambda: check_close(lf.softmax([64.0, 0.0]), [0.999665, 0.000335], atol=1e-6,
                                            what="pesos con d_k = 64"))

# 7. Dividir por d_k en lugar de por √d_k: la escala se queda corta por el otro lado.
lo_delata("dividir por d_k", lambda: check_close(lf.softmax([64.0 / 64, 0.0]), [0.999665, 0.000335], atol=1e-6,
                                                 what="pesos con d_k = 64"))

# 8. Softmax sin restar el máximo: exp(1000) es infinito y aparecen NaN.
with np.errstate(over="ignore", invalid="ignore"):
    sin_maximo = np.exp([1000.0, 999.0, 998.0]) / np.exp([1000.0, 999.0, 998.0]).sum()
lo_delata("softmax sin restar el máximo", lambda: check_close(sin_maximo, [0.665241, 0.244728, 0.090031],
                                                              what="softmax([1000, 999, 998])"))

# 9. Softmax sobre toda la matriz en lugar de fila a fila: las filas ya no suman 1.
S_err = X_frase @ X_frase.T / 2
A_toda = np.exp(S_err) / np.exp(S_err).sum()
lo_delata("softmax sobre toda la matriz", lambda: check_close(A_toda.sum(axis=-1), np.ones(5), what="suma de cada fila"))

# 10. Mezclar los valores con exp(s) sin normalizar: [8.5985, 4.1961] en vez de [0.759, 0.370].
lo_delata("exp(s) @ V sin normalizar", lambda: check_close(np.exp(scores) @ values, [0.759000, 0.370394],
                                                           what="salida de «banco»"))

# 11. Pensar que el coste crece como n: al duplicar el contexto saldría ×2.
lo_delata("coste lineal en n", lambda: check_close((2000 * 64) / (1000 * 64), 4.0, what="coste al duplicar n"))

# 12. Sacar los logits de X[0] en lugar de X[-1]: cambiar el último token no cambia la predicción.
def logits_de_la_primera_fila(ids, params):
    X = params["E"][ids] + params["P"][:len(ids)]
    O = ATT.causal_attention(*ATT.qkv_project(layer_norm(X), params["W_Q"], params["W_K"], params["W_V"]))[0]
    return layer_norm((X + O @ params["W_O"])[0]) @ params["E"].T


params_err = params_from_model(modelo_de_juguete())
lo_delata("logits de X[0]", lambda: check_true(
    not np.allclose(logits_de_la_primera_fila([42, 981, 774, 42, 1503], params_err),
                    logits_de_la_primera_fila([42, 981, 774, 42, 7], params_err)),
    "la predicción debe cambiar si cambia el último token"))

# %% [markdown]
# Dos errores más ya los has arreglado tú: sumar la posición según el ID (`P[ids]`, ejercicio 3) y leer la
# columna en vez de la fila (ejercicio 7). Y uno es de interpretación: **leer la atención como una explicación.**
# Que un token ponga mucho peso en otro significa que mezcla mucha información suya, no que «lo haya entendido por
# esa razón»: los mapas de atención son una pista técnica, no una prueba.
#
# ## 10. Pregunta para razonar (corrección manual · 3 puntos · ~15 min)
#
# Una compañera defiende dos simplificaciones para un Transformer casero:
#
# - «Las posiciones sobran: la atención ya mira todas las palabras a la vez, así que el modelo ve la frase entera.»
# - «Tres matrices es un derroche: con un único vector por token, y la puntuación `x_i · x_j`, basta.»
#
# En 6-10 líneas, rebate las dos. Para la primera, usa lo que demuestra tu `is_permutation_equivariant` (y el
# ejemplo «perro muerde hombre»), y explica qué arreglan la tabla `P` y RoPE, y en qué se diferencian. Para la
# segunda, explica qué propiedad tendría la matriz de puntuaciones con un solo vector y por qué eso es un problema
# (piensa en «banco» mirando a «aprobó» y al revés).
#
# **Rúbrica (3 puntos):** 1 punto por explicar la equivarianza a permutaciones con el ejemplo (la salida de «perro»
# no cambia al reordenar); 1 punto por decir qué aportan `P` (posición absoluta, fija o aprendida, con límite de
# longitud) y RoPE (giro de `q` y `k`, distancia relativa); 1 punto por la simetría de `X Xᵀ` y por qué hace falta que
# A→B y B→A puedan ser distintos. Más de 10 líneas o afirmaciones sin justificar restan medio punto.

# %% [markdown] nbgrader={"grade_id": "respuesta_posiciones", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# Mirar todas las palabras a la vez no es lo mismo que saber en qué orden están. La atención sin posiciones es
# equivariante a permutaciones: si reordeno los tokens, cada token obtiene exactamente la misma salida, solo que en
# otro lugar. Para ella «perro muerde hombre» y «hombre muerde perro» son la misma bolsa de palabras, y la salida de
# «perro» es idéntica en las dos frases aunque en una muerde y en la otra es mordido. La tabla `P` lo arregla
# sumando a cada token un vector que depende de su posición absoluta (fijo en la versión senoidal, entrenado en la
# aprendida, que además no sirve más allá de la longitud de entrenamiento). RoPE no suma nada: gira `q` y `k` según
# su posición, de modo que la puntuación depende de la distancia relativa entre los dos tokens, lo que generaliza
# mejor a contextos largos.
#
# Con un único vector por token la puntuación `x_i · x_j` sería simétrica: `S = X Xᵀ` es igual a su traspuesta, así
# que «banco» miraría a «aprobó» con la misma puntuación con que «aprobó» mira a «banco», y cada token tendería a
# puntuarse muy alto a sí mismo. Pero lo que un token busca no es lo que ofrece: un verbo busca su sujeto, y el
# sujeto no busca al verbo del mismo modo. Con `W_Q` y `W_K` distintas, `q_i · k_j ≠ q_j · k_i` y la relación A→B
# puede ser distinta de B→A; y `W_V` separa además lo que se aporta a la mezcla de lo que sirve para decidir a
# quién mirar.
# ### END SOLUTION

# %% [markdown]
# ## Resumen
#
# - El texto entra en el modelo como IDs de un tokenizador (BPE a nivel de byte); caracteres, bytes y tokens son
#   tres cuentas distintas, y la que importa para el contexto y el precio es la de tokens.
# - Cada ID selecciona una fila de `E` (`V × d_model`); la frase se convierte en una matriz `n × d_model`, una fila
#   por token, y se le suma la posición: `X = E[I] + P[:n]`.
# - Sin posiciones, la atención es una bolsa de palabras. Tres remedios: tabla senoidal fija (`PE[0] = [0, 1, 0, 1, …]`),
#   tabla aprendida (limitada a la longitud de entrenamiento) y RoPE, que gira `q` y `k` para que solo cuente la
#   distancia relativa.
# - La atención es una media ponderada de los valores, con pesos que salen de comparar consultas y claves:
#   `A = softmax(QKᵀ/√d_k)` por filas y `O = AV`. «Banco» en «El banco aprobó» reparte `[0.108, 0.652, 0.240]` y sale `o = [0.759, 0.370]`. Con `d_k = 64` se divide por 8.
# - Varias cabezas son varias atenciones en paralelo sobre trozos de `d_model`, unidas por `W_O`.
# - Los modelos modernos son pre-norm y causales, a diferencia del pseudocódigo del capítulo; los logits salen de la
#   última fila. Tu pasada en NumPy reproduce los logits del `Transformer` de `llmlab`.
# - La atención cuesta `n²`: 1000 tokens son un millón de parejas y el doble de tokens, cuatro veces más trabajo.
#
# ## Para ir más allá (opcional, sin nota y fuera del tiempo estimado)
#
# 1. **Las posiciones solo ven la distancia.** Con `sinusoidal_positions(256, 64)`, calcula el producto escalar
#    entre el vector de la posición `p` y el de `p + k` para `k` de 0 a 128, con `p = 0`, 50 y 100. Para cuando
#    tengas las tres curvas en una figura y sepas por qué se superponen (pista: `sen a · sen b + cos a · cos b`).
# 2. **Quitar el `√d_k`.** Copia tu `scaled_dot_product_attention` sin la división y mide la entropía media de
#    las filas de atención con `Q` y `K` aleatorias para `d_k = 4`, 64 y 1024, con y sin escalar. Para cuando
#    tengas la tabla y puedas explicar por qué, sin escalar, las filas se acercan a un único 1 al crecer `d_k`.
# 3. **Qué rompe la bolsa de palabras.** Pasa a tu `is_permutation_equivariant` una atención que sume posiciones
#    antes de atender y otra con máscara causal. Para cuando tengas la tabla de 2 × 2 (con o sin posiciones, con o
#    sin máscara) y sepas cuál de las dos cosas basta para que el orden importe.
#
# ## Para saber más
#
# - A. Vaswani et al. (2017), *Attention is all you need*: el artículo original, con las posiciones senoidales.
# - I. Sutskever, O. Vinyals y Q. V. Le (2014), *Sequence to sequence learning with neural networks*; D. Bahdanau,
#   K. Cho e Y. Bengio (2015), *Neural machine translation by jointly learning to align and translate*; M.-T. Luong,
#   H. Pham y C. D. Manning (2015), *Effective approaches to attention-based neural machine translation*: de dónde
#   viene la atención.
# - J. Su et al. (2021), *RoFormer: enhanced Transformer with rotary position embedding*: RoPE.
# - J. Devlin et al. (2019), *BERT* (un codificador) y T. Brown et al. (2020), *Language models are few-shot
#   learners* (un decodificador, GPT-3).
# - K. He et al. (2016), *Deep residual learning*, y J. L. Ba, J. R. Kiros y G. E. Hinton (2016), *Layer
#   normalization*: el residuo y la normalización (lab 04).
# - Para verlo funcionando: *Transformer Explainer* (Cho et al., 2025; GPT-2 en el navegador), *LLM Visualization*
#   (B. Bycroft, 2023), *The Illustrated Transformer* (J. Alammar, 2018) y *The Annotated Transformer* (A. Rush, 2018).
# - En `llmlab`: `llmlab.embeddings`, `llmlab.positional` y `llmlab.attention` tienen las versiones de referencia de lo
#   que has escrito hoy, y `llmlab.model` el Transformer completo en PyTorch. El lab 03 sigue con Q, K, V, la máscara
#   causal y las cabezas, a mano.
