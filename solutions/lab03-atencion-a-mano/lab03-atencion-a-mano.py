# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 03 · Atención a mano: Q, K, V y la máscara causal
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab03-atencion-a-mano/lab03-atencion-a-mano.ipynb)
#
# **Capítulo 03** de *Facsímil 03 · Arquitecturas y modelos* (con la fila de atención del capítulo 02) ·
# duración estimada: **4 horas** (75 min de lectura y figuras y 2 h 45 min de ejercicios y de la pregunta
# razonada; cada ejercicio indica su tiempo y su dificultad; las secciones «(opcional)» quedan fuera de la cuenta)
#
# En el lab 02 viste cómo «banco» reparte su atención entre las palabras que tiene delante: una sola fila de
# números que suman 1. Un Transformer calcula esa fila para **todos** los tokens a la vez, con tres
# proyecciones aprendidas (Q, K y V) y una máscara que impide que un token lea lo que todavía no se ha
# escrito. Este laboratorio es el cuaderno que el capítulo propone (el libro lo titula «Atención a mano»): vas a construir la
# matriz de atención pieza a pieza con NumPy, a dibujarla, a verla volverse triangular y, al final, a
# comprobar que PyTorch y el modelo de `llmlab` calculan exactamente lo mismo.
#
# **Al terminar sabrás:**
#
# 1. calcular las puntuaciones `S = QKᵀ/√d_k` y explicar por qué se divide por `√d_k`;
# 2. construir la máscara causal y aplicarla **antes** de una softmax estable por filas;
# 3. leer una matriz de atención fila a fila y mezclar los valores `V` con sus pesos;
# 4. partir la atención en varias cabezas, y compartir claves y valores entre ellas (GQA y MQA);
# 5. generar token a token con una caché KV que da lo mismo que recalcularlo todo;
# 6. distinguir autoatención, autoatención enmascarada y atención cruzada;
# 7. reproducir todo en PyTorch y contrastarlo con `scaled_dot_product_attention` y con `llmlab.model`.
#
# **Cómo se trabaja.** Escribe tu código en las celdas que dicen `ESCRIBE TU CÓDIGO AQUÍ`; en los dos ejercicios
# «encuentra el error» la celda ya trae una función con un fallo típico que tienes que arreglar. Debajo de cada
# ejercicio hay pistas plegadas y una celda de comprobación que te explica en español qué falla. Al corregir se ejecutan además
# pruebas ocultas con entradas que no ves (matrices aleatorias con valores grandes, lotes, casos límite), así
# que tu función tiene que cumplir el enunciado, no solo los ejemplos. Puedes reutilizar tus funciones de
# ejercicios anteriores, pero no llames a las versiones de `llmlab.attention` ni a
# `torch.nn.functional.scaled_dot_product_attention`: en las pruebas ocultas están bloqueadas. No modifiques
# las celdas de comprobación; se restauran antes de corregir. Si tu función llama a una versión bloqueada, la
# comprobación visible ya te lo dice.
#
# **Predecir y medir.** Antes de la figura del trabajo con y sin caché KV (sección 8) hay una celda «Tu predicción» de una línea: escribe tu apuesta antes de
# ejecutar la medida, que la imprime delante del resultado. No puntúa; sirve para que veas qué intuición tenías.
#
# **Números.** Los decimales llevan punto, como en Python (`0.501`), y los miles un espacio fino (`16 384`).
#
# **Convención.** Como en el libro, los tokens son **filas**: `X` tiene forma `(n, d_model)` y las
# proyecciones se escriben `Q = X W_Q`. Cuando un ejercicio pide aceptar un *lote*, las entradas pueden traer
# dimensiones delante, `(..., n, d)`, y todo se calcula sobre las dos últimas.

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
import torch
from torch.nn.functional import scaled_dot_product_attention  # torch's SDPA; F below is llmlab.functional

from llmlab import attention as AT
from llmlab import cost as C
from llmlab import functional as lf
from llmlab import model as LM
from llmlab.checks import (
    EjercicioSinHacer, check_array, check_close, check_equal, check_raises, check_shape, check_tensor, check_true,
    check_type, checked_call, hidden, modifiable, ok, reference_blocked, show_caught,
)
from llmlab.spanish import fmt_int
from llmlab.checks import EjercicioSinHacer  # lo que lanza un ejercicio que aún no has hecho

# Lo que las pruebas ocultas no te dejan llamar: la atención ya hecha de llmlab y la de PyTorch.
REFERENCIAS = (
    AT.attention_scores, AT.causal_mask, AT.softmax_rows, AT.scaled_dot_product_attention, AT.causal_attention,
    AT.attention_from_X, AT.multi_head_attention, AT.grouped_query_attention, AT.cross_attention,
    AT.decode_step, AT.split_heads, AT.merge_heads, scaled_dot_product_attention,
)

plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3
np.set_printoptions(precision=4, suppress=True)

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar: los pesos "aleatorios" del cuaderno son siempre los mismos
PASOS_DECODIFICACION = 48  # tokens generados en la figura del coste con y sin caché KV
CONTEXTO_KV = 32_768  # tokens de contexto en la figura del tamaño de la caché KV

# %% [markdown]
# ## 1. De una fila a una matriz
#
# Empecemos donde lo dejó el capítulo 02. En «El banco aprobó», la palabra «banco» compara lo que busca con
# lo que ofrece cada palabra y obtiene las puntuaciones `[0.2, 2.0, 1.0]`. La softmax las convierte en pesos y
# los pesos mezclan los vectores de valor de las tres palabras:

# %%
valores_cap02 = np.array([[0.1, 0.0], [1.0, 0.2], [0.4, 1.0]])
pesos_banco, salida_banco = AT.attention_row([0.2, 2.0, 1.0], valores_cap02)
print("pesos de «banco»:", np.round(pesos_banco, 3), "   suman", round(float(pesos_banco.sum()), 6))
print("salida de «banco»:", np.round(salida_banco, 3))

# %% [markdown]
# «banco» se queda con un 65 % de sí misma, toma un 24 % de «aprobó» (el contexto que la aleja del banco del
# parque) y casi nada de «El». Su nueva representación, `[0.759, 0.370]`, ya no es la de la palabra suelta.
#
# Un Transformer hace esto mismo para **cada** token, y de golpe. Toma la frase de cinco palabras del capítulo
# 02, «El banco aprobó el préstamo», con sus vectores de entrada de juguete (`d_model = 4`; «El» y «el» tienen
# el mismo ID de token, pero distinta fila porque ocupan posiciones distintas). Tres matrices aprendidas
# proyectan cada fila a su **consulta** (qué busca), su **clave** (qué ofrece para que la encuentren) y su
# **valor** (qué entrega si la miran). Aquí las matrices no están aprendidas: las hemos elegido nosotros, con
# `d_k = d_v = 2`.

# %% nbgrader={"grade_id": "datos_frase", "locked": true}
# Datos del ejemplo (celda de solo lectura: las comprobaciones los usan).
palabras = ["El", "banco", "aprobó", "el", "préstamo"]
X_frase = np.array([
    [0.20, 0.10, -0.30, 0.40],
    [0.80, -0.20, 0.10, 0.50],
    [0.10, 0.70, 0.20, -0.10],
    [0.18, 0.08, -0.25, 0.36],
    [0.60, 0.40, 0.70, 0.20],
])
W_Q = np.array([[1.5, -0.5], [0.5, 2.0], [-1.0, 1.0], [2.0, 0.5]])
W_K = np.array([[2.0, 0.5], [-1.0, 1.5], [0.5, -2.0], [1.0, 1.0]])
W_V = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5], [-0.5, 0.5]])

Q_frase, K_frase, V_frase = X_frase @ W_Q, X_frase @ W_K, X_frase @ W_V
for M_ in (X_frase, W_Q, W_K, W_V, Q_frase, K_frase, V_frase):
    M_.setflags(write=False)  # datos compartidos por muchas celdas: de solo lectura, nadie los estropea
print(f"X: {X_frase.shape}   W_Q, W_K, W_V: {W_Q.shape}   Q, K, V: {Q_frase.shape}\n")
print(f"{'token':9s} {'Q':>16s} {'K':>16s} {'V':>16s}")
for t, q, k, v in zip(palabras, Q_frase, K_frase, V_frase):
    print(f"{t:9s} {str(np.round(q, 3)):>16s} {str(np.round(k, 3)):>16s} {str(np.round(v, 3)):>16s}")

# %% [markdown]
# Las tres proyecciones salen del **mismo** `X`. Si usáramos un único vector por token para buscar y para
# ofrecer, la atención sería simétrica: «banco» miraría a «aprobó» exactamente tanto como «aprobó» a «banco».
# Con `W_Q ≠ W_K` esa simetría se rompe, y eso es lo que permite relaciones con dirección.
#
# ## 2. Las puntuaciones: cada consulta frente a cada clave
#
# Cada consulta se compara con todas las claves mediante un producto escalar. Con todas las filas a la vez es
# un producto de matrices, y se divide por la raíz de la dimensión de las claves:
#
# $$S = \frac{Q K^\top}{\sqrt{d_k}}, \qquad S \in \mathbb{R}^{n \times n}$$
#
# `S[i, j]` dice cuánto le interesa al token `i` (fila, la consulta) el token `j` (columna, la clave). ¿Por qué
# `√d_k`? Un producto escalar suma `d_k` términos, así que su tamaño crece con `d_k`: con vectores de 128
# componentes las puntuaciones serían enormes, la softmax daría casi todo el peso a una sola columna y los
# gradientes se apagarían. Dividir por `√d_k` (8 si `d_k = 64`) mantiene las puntuaciones en una escala
# razonable sea cual sea el tamaño de la cabeza.
#
# El ejemplo trabajado del capítulo usa cuatro tokens, «El banco aprobó préstamo», ya proyectados a `d_k = 2`:
#
# | token | Q | K | V |
# |---|---|---|---|
# | El | [−0.01, −0.04] | [0.18, −0.19] | [−0.02, 0.24] |
# | banco | [0.47, 0.00] | [0.17, −0.23] | [0.51, −0.04] |
# | aprobó | [−0.03, 0.51] | [0.51, 0.21] | [0.23, 0.50] |
# | préstamo | [0.43, 0.58] | [0.45, 0.25] | [0.75, 0.16] |

# %% nbgrader={"grade_id": "datos_libro", "locked": true}
# Datos del ejemplo (celda de solo lectura: las comprobaciones los usan).
tokens_libro = ["El", "banco", "aprobó", "préstamo"]
Q_libro = np.array([[-0.01, -0.04], [0.47, 0.00], [-0.03, 0.51], [0.43, 0.58]])
K_libro = np.array([[0.18, -0.19], [0.17, -0.23], [0.51, 0.21], [0.45, 0.25]])
V_libro = np.array([[-0.02, 0.24], [0.51, -0.04], [0.23, 0.50], [0.75, 0.16]])
for M_ in (Q_libro, K_libro, V_libro):
    M_.setflags(write=False)  # de solo lectura: las comprobaciones trabajan con copias

productos = Q_libro @ K_libro.T
print("Q Kᵀ =\n", np.round(productos, 4))
print("\nS = Q Kᵀ / √2 =\n", np.round(productos / math.sqrt(2), 3))
print("\nS[banco, El] =", round(float(productos[1, 0] / math.sqrt(2)), 4),
      "= (0.47·0.18 + 0.00·(−0.19)) / 1.4142")

# %% [markdown]
# Las puntuaciones del libro son diminutas (todas por debajo de 0.25 en valor absoluto). Tenlo presente: con
# números tan pequeños, olvidar el `√d_k` cambia los pesos en la tercera cifra decimal, y por eso las pruebas
# ocultas añaden matrices con valores grandes.
#
# ### Ejercicio 1 · `attention_scores` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `attention_scores(Q, K)`, que devuelve `S = QKᵀ/√d_k`, un **array de NumPy de floats**, sin modificar sus
# entradas:
#
# - `d_k` es la **última** dimensión de `Q` (el tamaño de cada vector de consulta), no el número de tokens;
# - `Q` tiene forma `(..., n_q, d_k)` y `K` `(..., n_k, d_k)`; el resultado, `(..., n_q, n_k)`. Acepta lotes:
#   para trasponer solo las dos últimas dimensiones usa `np.swapaxes(K, -1, -2)` (con un lote, `K.T` invertiría
#   *todas* las dimensiones).

# %% nbgrader={"grade_id": "attention_scores", "solution": true}
def attention_scores(Q, K):
    """Puntuaciones Q Kᵀ / √d_k, con d_k = Q.shape[-1]."""
    ### BEGIN SOLUTION
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Con matrices 2D, `Q @ K.T` ya da la matriz de productos escalares. Piensa qué dimensión es `d_k` y cómo
# trasponer solo las dos últimas dimensiones de `K`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])`, tras convertir las dos entradas con
# `np.asarray(..., dtype=float)`.
#
# </details>

# %% nbgrader={"grade_id": "test_attention_scores", "grade": true, "points": 2}
# Comprobación del ejercicio 1 · tolerancias: 1e-5 en la tabla del libro (6 decimales); rtol 1e-5 en los casos
# aleatorios (float32 también vale).
S_esperada = np.array([
    [0.004101, 0.005303, -0.009546, -0.010253],
    [0.059821, 0.056498, 0.169493, 0.149553],
    [-0.072337, -0.086550, 0.064912, 0.080610],
    [-0.023193, -0.042639, 0.241194, 0.239356],
])
with reference_blocked(*REFERENCIAS):
    S_tuya = checked_call(attention_scores, Q_libro, K_libro)
    check_array(S_tuya, what="S del ejemplo del libro", dtype="float", shape=(4, 4))
    check_close(S_tuya, S_esperada, atol=1e-5, what="S = QKᵀ/√d_k del libro",
                hint="fila i = consulta i; columna j = clave j; divide por √2")
    check_close(checked_call(attention_scores, np.ones((1, 64)), np.ones((1, 64))), [[8.0]], atol=1e-5,
                what="dos vectores de unos con d_k = 64", hint="64 / √64 = 8")
    check_true(abs(S_tuya[1, 2] - S_tuya[2, 1]) > 0.1,
               "S no es simétrica: banco→aprobó no vale lo mismo que aprobó→banco")
    check_array(checked_call(attention_scores, np.ones((2, 3, 4)), np.ones((2, 5, 4))),
                what="un lote de 2 con 3 consultas y 5 claves", dtype="float", shape=(2, 3, 5),
                hint="con lotes, trasponer solo las dos últimas dimensiones: np.swapaxes(K, -1, -2)")
ok("las puntuaciones del libro salen bien")
### BEGIN HIDDEN TESTS
with hidden("attention_scores: matrices aleatorias grandes, rectangulares, en lote y listas"):
    rng_t = np.random.default_rng(1301)
    casos = []
    for forma_q, forma_k in [((5, 7), (3, 7)), ((6, 16), (6, 16)), ((2, 4, 9), (2, 6, 9)), ((2, 3, 5, 8), (2, 3, 5, 8)),
                             ((1, 1), (4, 1)), ((3, 2), (3, 2))]:
        casos.append((rng_t.normal(0, 4, size=forma_q), rng_t.normal(0, 4, size=forma_k)))
    casos.append((rng_t.normal(size=(2, 3)).tolist(), rng_t.normal(size=(4, 3)).tolist()))
    esperados = [AT.attention_scores(Qh, Kh) for Qh, Kh in casos]
    with reference_blocked(*REFERENCIAS):
        for (Qh, Kh), esperado in zip(casos, esperados):
            obtenido = checked_call(attention_scores, Qh, Kh)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-5, atol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# Así quedan las dos matrices de puntuaciones, la del libro y la de nuestra frase de cinco palabras. Léelas
# por filas: cada fila es un token preguntando a todos los demás, también a los que vienen **después**.

# %%
def dibuja_mapa(ax, M, filas, columnas, titulo, decimales=3, ocultar_futuro=False, cmap="viridis"):
    """Mapa de calor anotado; con ocultar_futuro, el triángulo superior sale en gris con «n/d»."""
    M = np.asarray(M, dtype=float)
    futuro = np.triu(np.ones(M.shape, dtype=bool), k=1) if ocultar_futuro else np.zeros(M.shape, dtype=bool)
    paleta = plt.get_cmap(cmap).with_extremes(bad="lightgrey")
    visibles = M[~futuro]
    bajo, alto = float(visibles.min()), float(visibles.max())
    ax.imshow(np.ma.masked_array(M, mask=futuro), cmap=paleta, vmin=bajo, vmax=alto if alto > bajo else bajo + 1)
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            if futuro[i, j]:
                ax.text(j, i, "n/d", ha="center", va="center", fontsize=8, color="dimgrey")
            else:
                claro = (M[i, j] - bajo) / (alto - bajo + 1e-12) > 0.6
                ax.text(j, i, f"{M[i, j]:.{decimales}f}", ha="center", va="center", fontsize=8,
                        color="black" if claro else "white")
    ax.set_xticks(range(M.shape[1]), columnas, rotation=40, ha="right")
    ax.set_yticks(range(M.shape[0]), filas)
    ax.set_xlabel("clave j (a quién se mira)")
    ax.set_ylabel("consulta i (quién mira)")
    ax.set_title(titulo)
    ax.grid(False)


S_libro = AT.attention_scores(Q_libro, K_libro)
S_frase = AT.attention_scores(Q_frase, K_frase)
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 4.4))
dibuja_mapa(izq, S_libro, tokens_libro, tokens_libro, "S del libro (d_k = 2)")
dibuja_mapa(der, S_frase, palabras, palabras, "S de «El banco aprobó el préstamo»", decimales=2)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 3. La máscara causal: cada token, solo hacia atrás
#
# Un modelo que genera texto aprende a predecir el token siguiente a partir de los anteriores. Si al
# entrenar la fila de «aprobó» pudiera leer «préstamo», aprendería a copiar la respuesta en lugar de a
# predecirla, y al generar (cuando «préstamo» aún no existe) no sabría qué hacer. La máscara causal no tiene
# nada de moral: es geometría. Se suma a las puntuaciones **antes** de la softmax:
#
# $$M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases} \qquad \tilde S = S + M$$
#
# Como `e^{−∞} = 0`, las posiciones futuras reciben peso exactamente cero y la softmax reparte el 100 % entre
# las permitidas. En código no se usa un `−∞` literal sino un número muy negativo, `−1e9`: da el mismo cero
# tras la exponencial y evita las operaciones inválidas (`−∞ − (−∞)` es `nan`) si alguna fila quedara
# entera tapada.
#
# **Una máscara, dos escrituras.** Esta es la máscara *aditiva*: números que se **suman** a las puntuaciones. En el
# lab 02 usaste la *booleana* de SDPA y de `llmlab.model`, `True` donde se **puede mirar**, que se aplica con
# `np.where(mascara, S, -np.inf)`. Son la misma máscara: `causal_mask(n) == np.where(np.tril(np.ones((n, n),
# dtype=bool)), 0.0, -1e9)`. (Ojo con `torch.nn.MultiheadAttention`, cuya máscara booleana significa lo
# contrario: `True` = prohibido.) Un `−∞` literal es seguro siempre que cada fila tenga al menos una posición
# permitida, como pasa con la máscara causal, donde cada token se ve a sí mismo.
#
# ### Ejercicio 2 · `causal_mask`, encuentra el error (1 punto · dificultad ★☆☆ · ~5 min)
#
# `causal_mask(n, neg=-1e9)` debe devolver un **array de NumPy de floats** de forma `(n, n)` con `0.0` en la
# diagonal y por debajo, y `neg` por encima de la diagonal (las columnas `j > i`). La versión de la celda tapa
# algo que no debe. Encuentra el error y corrígelo.

# %% nbgrader={"grade_id": "causal_mask", "solution": true}
def causal_mask(n, neg=-1e9):
    """Máscara aditiva: 0 donde j <= i, neg donde j > i."""
    ### BEGIN SOLUTION
    return np.triu(np.full((n, n), float(neg)), k=1)
    ### END SOLUTION
    ### BEGIN BUGGY
    # return np.triu(np.full((n, n), float(neg)), k=0)
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Ejecuta la comprobación y mira la fila de «El», la 0: ¿puede verse a sí mismo con esta máscara?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `np.triu(..., k=0)` conserva la diagonal y todo lo de encima; `k=1` empieza una diagonal más arriba, que es
# lo que queremos tapar: solo `j > i`.
#
# </details>

# %% nbgrader={"grade_id": "test_causal_mask", "grade": true, "points": 1}
# Comprobación del ejercicio 2 · valores exactos (atol=0).
with reference_blocked(*REFERENCIAS):
    m4 = checked_call(causal_mask, 4)
    check_array(m4, what="causal_mask(4)", dtype="float", shape=(4, 4))
    check_close(m4, [[0, -1e9, -1e9, -1e9], [0, 0, -1e9, -1e9], [0, 0, 0, -1e9], [0, 0, 0, 0]], atol=0,
                what="causal_mask(4)", hint="solo lo que queda estrictamente por encima de la diagonal: j > i")
    check_close(np.diag(checked_call(causal_mask, 6)), np.zeros(6), atol=0, what="la diagonal de causal_mask(6)",
                hint="cada token puede mirarse a sí mismo: la diagonal no se tapa")
    check_close(checked_call(causal_mask, 1), [[0.0]], atol=0, what="causal_mask(1)")
ok("la máscara tapa justo el futuro")
### BEGIN HIDDEN TESTS
with hidden("causal_mask: otros tamaños y otros valores de neg"):
    casos = [(n, neg) for n in (2, 3, 5, 9, 16) for neg in (-1e9, -np.inf, -30.0)] + [(3, -1)]
    esperados = [AT.causal_mask(n, neg=neg) for n, neg in casos]
    with reference_blocked(*REFERENCIAS):
        for (n, neg), esperado in zip(casos, esperados):
            obtenido = checked_call(causal_mask, n, neg=neg)
            check_array(obtenido, dtype="float", shape=(n, n))
            check_close(obtenido, esperado, atol=0)
        check_close(checked_call(causal_mask, 7)[6], np.zeros(7), atol=0)  # la última fila lo ve todo
### END HIDDEN TESTS

# %% [markdown]
# A la izquierda, la máscara para las cinco palabras; a la derecha, las puntuaciones del libro con el futuro
# tapado, tal como las presenta el capítulo (n/d: no disponible).

# %%
from matplotlib.colors import ListedColormap

mascara_5 = AT.causal_mask(5)
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 4.4))
izq.imshow(mascara_5 == 0, cmap=ListedColormap(["#f5d5d0", "#bfe6c4"]), vmin=0, vmax=1)
for i in range(5):
    for j in range(5):
        izq.text(j, i, "0" if mascara_5[i, j] == 0 else "−1e9", ha="center", va="center", fontsize=9)
izq.set_xticks(range(5), palabras, rotation=40, ha="right")
izq.set_yticks(range(5), palabras)
izq.set_title("Máscara causal M (verde: se puede mirar; rojo: futuro)")
izq.grid(False)
dibuja_mapa(der, S_libro, tokens_libro, tokens_libro, "S enmascarada del libro", ocultar_futuro=True)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 4. Softmax por filas, y estable
#
# Después de la máscara viene la softmax, y se aplica **a cada fila por separado**: cada consulta reparte su
# propio 100 % de atención. Normalizar por columnas o la matriz entera produce números que también suman algo,
# pero que ya no se pueden leer como «cuánto mira el token `i` a cada uno».
#
# Además tiene que ser estable. `e^{1000}` no cabe en un `float64`; como la softmax no cambia si a toda la
# fila se le resta la misma cantidad, se resta el máximo de cada fila antes de exponenciar:

# %%
fila_grande = np.array([1000.0, 999.0, 998.0])
with np.errstate(over="ignore", invalid="ignore"):
    ingenua = np.exp(fila_grande) / np.exp(fila_grande).sum()
estable = np.exp(fila_grande - fila_grande.max()) / np.exp(fila_grande - fila_grande.max()).sum()
print("softmax ingenua:", ingenua)
print("softmax estable:", np.round(estable, 6))

# %% [markdown]
# ### Ejercicio 3 · `softmax_rows` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `softmax_rows(S)`: la softmax **a lo largo del último eje** de un array de cualquier forma (un
# vector, una matriz `(n, n)` o un lote `(..., n, n)`), restando el máximo de cada fila antes de `np.exp`.
# Usa `axis=-1` y `keepdims=True`: con un lote, `axis=1` ya no es el eje de las filas. Devuelve un **array de NumPy
# de floats** de la misma forma, sin modificar la entrada (que puede ser una lista).

# %% nbgrader={"grade_id": "softmax_rows", "solution": true}
def softmax_rows(S):
    """Softmax estable de cada fila (último eje)."""
    ### BEGIN SOLUTION
    S = np.asarray(S, dtype=float)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Es la softmax del lab 01 sin temperatura. Lo importante son los ejes: `axis=-1` con `keepdims=True` en el
# máximo y en la suma.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `S = np.asarray(S, dtype=float)`, `e = np.exp(S - S.max(axis=-1, keepdims=True))` y
# `return e / e.sum(axis=-1, keepdims=True)`.
#
# </details>

# %% nbgrader={"grade_id": "test_softmax_rows", "grade": true, "points": 2}
# Comprobación del ejercicio 3 · tolerancia: 1e-6 (tabla del libro) y rtol 1e-5 en los casos aleatorios; con
# valores enormes, 1e-4 (float32 pierde cifras en el exponente).
A_esperada = np.array([
    [1.0, 0.0, 0.0, 0.0],
    [0.500831, 0.499169, 0.0, 0.0],
    [0.319183, 0.314678, 0.366139, 0.0],
    [0.218168, 0.213967, 0.284193, 0.283671],
])
S_enmascarada = AT.attention_scores(Q_libro, K_libro) + AT.causal_mask(4)
with reference_blocked(*REFERENCIAS, lf.softmax):
    A_tuya = checked_call(softmax_rows, S_enmascarada)
    check_array(A_tuya, what="softmax_rows de la S enmascarada del libro", dtype="float", shape=(4, 4))
    check_close(A_tuya, A_esperada, atol=1e-6, what="softmax por filas de la S enmascarada del libro",
                hint="cada fila se normaliza con su propia suma")
    check_close(np.sum(A_tuya, axis=-1), np.ones(4), atol=1e-6, what="la suma de cada fila")
    check_close(checked_call(softmax_rows, np.array([[1000.0, 999.0, 998.0]])), [[0.665241, 0.244728, 0.090031]],
                atol=1e-6, what="softmax_rows([[1000, 999, 998]])", hint="resta el máximo de la fila antes de np.exp")
    check_close(checked_call(softmax_rows, [0.2, 2.0, 1.0]), [0.107815, 0.652240, 0.239946], atol=1e-6,
                what="la fila de «banco» del capítulo 02 (un vector)")
    lote = checked_call(softmax_rows, np.stack([S_enmascarada, S_enmascarada]))
    check_close(lote, np.stack([A_esperada, A_esperada]), atol=1e-6, what="un lote de dos matrices (2, 4, 4)",
                hint="con un lote las filas están en el último eje: axis=-1, no axis=1")
ok("la tabla A del libro sale fila a fila")
### BEGIN HIDDEN TESTS
with hidden("softmax_rows: lotes, valores enormes y filas con máscara"):
    rng_t = np.random.default_rng(1303)
    casos = [(rng_t.normal(0, 50, size=(2, 5, 7)), 1e-4), (rng_t.normal(0, 1e4, size=(6, 6)), 1e-4),
             (rng_t.normal(0, 3, size=(3, 2, 4, 4)) + AT.causal_mask(4), 1e-6), (rng_t.normal(0, 2, size=9), 1e-6),
             (np.full((3, 3), 7.5), 1e-6), (np.array([[900.0, 899.0], [-900.0, -901.0]]), 1e-4),
             (rng_t.normal(0, 2, size=(4, 3)).astype(np.float32), 1e-6), (rng_t.normal(0, 1, size=(5, 5)).tolist(), 1e-6)]
    esperados = [lf.softmax(S_h, axis=-1) for S_h, _ in casos]
    with reference_blocked(*REFERENCIAS, lf.softmax):
        for (S_h, tol), esperado in zip(casos, esperados):
            obtenido = checked_call(softmax_rows, S_h)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-5, atol=tol)
### END HIDDEN TESTS

# %% [markdown]
# ## 5. La atención causal completa
#
# Ya están todas las piezas. La receta para leer (y calcular) la matriz es siempre la misma:
#
# 1. elige una fila: el token que pregunta;
# 2. mira qué columnas tiene permitidas: él mismo y los anteriores;
# 3. haz la softmax solo sobre esas columnas (la máscara se encarga de las demás);
# 4. usa los pesos para mezclar las filas de `V`.
#
# $$A = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right), \qquad O = A V$$
#
# `Q` y `K` deciden **cuánto** se mira; `V` decide **qué** se lleva cada token. La primera fila solo puede
# mirarse a sí misma, así que su salida es su propio valor; la última ve la frase entera.
#
# ### Ejercicio 4 · `causal_attention` (3 puntos · dificultad ★★☆ · ~20 min)
#
# Escribe `causal_attention(Q, K, V)`, que devuelve la tupla `(O, A)` de **arrays de NumPy de floats**, sin
# modificar sus entradas:
#
# - `A` son los pesos tras la máscara causal y la softmax por filas, forma `(..., n, n)`, con el triángulo
#   superior **exactamente** a cero;
# - `O = A V`, forma `(..., n, d_v)`; `d_v` (columnas de `V`) puede ser distinto de `d_k`;
# - acepta lotes `(..., n, d)` como en los ejercicios anteriores.

# %% nbgrader={"grade_id": "causal_attention", "solution": true}
def causal_attention(Q, K, V):
    """Atención con máscara causal. Devuelve (O, A)."""
    ### BEGIN SOLUTION
    Q = np.asarray(Q, dtype=float)
    K = np.asarray(K, dtype=float)
    V = np.asarray(V, dtype=float)
    n, d_k = Q.shape[-2], Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    S = S + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Junta tus tres piezas en orden: puntuaciones, máscara (sumada **antes** de la softmax) y softmax por filas.
# Después, `A @ V`. Puedes llamar a tus `attention_scores`, `causal_mask` y `softmax_rows`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `n = Q.shape[-2]`; `A = softmax_rows(attention_scores(Q, K) + causal_mask(n))`; `return A @ V, A`. La máscara
# `(n, n)` se difunde sobre cualquier lote.
#
# </details>

# %% nbgrader={"grade_id": "test_causal_attention", "grade": true, "points": 3}
# Comprobación del ejercicio 4 · tolerancias: 1e-3 y 1e-4 en las tablas del libro (3 y 6 decimales); en los
# casos aleatorios, rtol 1e-5 y atol 1e-6 (1e-4 con puntuaciones enormes, por float32).
O_esperada = np.array([[-0.02, 0.24], [0.244560, 0.100233], [0.238314, 0.247086], [0.382878, 0.231286]])
with reference_blocked(*REFERENCIAS):
    resultado = checked_call(causal_attention, Q_libro, K_libro, V_libro)
    check_type(resultado, tuple, what="lo que devuelve causal_attention")
    check_equal(len(resultado), 2, what="elementos de lo que devuelve causal_attention", hint="(O, A)")
    O_tuya, A_tuya = resultado
    check_array(O_tuya, what="O", dtype="float", shape=(4, 2))
    check_array(A_tuya, what="A", dtype="float", shape=(4, 4))
    check_close(A_tuya[1], [0.501, 0.499, 0.0, 0.0], atol=1e-3, what="A[banco]",
                hint="banco ve a El y a sí misma; el resto de su fila debe quedar a 0")
    check_close(A_tuya, A_esperada, atol=1e-4, what="la matriz A del libro",
                hint="¿divides por √d_k? ¿la máscara va antes de la softmax?")
    check_close(O_tuya, O_esperada, atol=1e-4, what="la salida O = AV del libro", hint="O = A @ V, no A @ K")
    check_close(np.triu(A_tuya, k=1), np.zeros((4, 4)), atol=0, what="el triángulo superior de A")
    check_close(O_tuya[0], V_libro[0], atol=1e-6, what="la salida de «El»", hint="el primer token solo se ve a sí mismo")
ok("A y O del libro reproducidas")
### BEGIN HIDDEN TESTS
with hidden("causal_attention: valores grandes, d_v distinto de d_k, lotes y perturbaciones del futuro"):
    rng_t = np.random.default_rng(1304)
    casos = []
    for lote, n, d_k, d_v, escala in [((), 6, 16, 5, 3), ((), 9, 3, 3, 3), ((2,), 5, 8, 4, 3), ((2, 3), 7, 4, 6, 3),
                                      ((), 1, 4, 2, 3), ((2,), 6, 8, 3, 40)]:
        casos.append((rng_t.normal(0, escala, size=(*lote, n, d_k)), rng_t.normal(0, escala, size=(*lote, n, d_k)),
                      rng_t.normal(0, 1, size=(*lote, n, d_v)), escala))
    casos.append((rng_t.normal(size=(4, 3)).astype(np.float32), rng_t.normal(size=(4, 3)).astype(np.float32),
                  rng_t.normal(size=(4, 2)).astype(np.float32), 1))
    esperados = [AT.causal_attention(Qh, Kh, Vh) for Qh, Kh, Vh, _ in casos]
    with reference_blocked(*REFERENCIAS):
        for (Qh, Kh, Vh, escala), (O_ref, A_ref) in zip(casos, esperados):
            O_h, A_h = checked_call(causal_attention, Qh, Kh, Vh)
            check_array(A_h, dtype="float", shape=A_ref.shape)
            tol = 1e-6 if escala <= 3 else 1e-4
            check_close(A_h, A_ref, rtol=1e-5, atol=tol)
            check_close(O_h, O_ref, rtol=1e-5, atol=tol)
        # Cambiar los tokens 4, 5, ... no puede cambiar las salidas de los tokens 0 a 3.
        Qh, Kh, Vh = casos[0][:3]
        Qp, Kp, Vp = Qh.copy(), Kh.copy(), Vh.copy()
        for M_h in (Qp, Kp, Vp):
            M_h[4:] += rng_t.normal(0, 10, size=M_h[4:].shape)
        check_close(checked_call(causal_attention, Qp, Kp, Vp)[0][:4], checked_call(causal_attention, Qh, Kh, Vh)[0][:4],
                    atol=1e-8)
### END HIDDEN TESTS

# %% [markdown]
# Los pesos del libro, ya triangulares, y los de la frase de cinco palabras. En la frase, «banco» se mira casi
# solo a sí misma (0.944) y la segunda «el» busca sobre todo a «banco»: con estas matrices de juguete, el
# artículo encuentra a su sustantivo. Fíjate en que «El» y «el» tienen filas muy parecidas en `X` y, sin
# embargo, no ven lo mismo: la segunda tiene más columnas permitidas.

# %%
O_libro, A_libro = AT.causal_attention(Q_libro, K_libro, V_libro)
O_frase, A_frase = AT.causal_attention(Q_frase, K_frase, V_frase)
print("A del libro:\n", np.round(A_libro, 3))
print("O del libro:\n", np.round(O_libro, 3))
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 4.4))
dibuja_mapa(izq, A_libro, tokens_libro, tokens_libro, "A del libro (4 tokens)", ocultar_futuro=True)
dibuja_mapa(der, A_frase, palabras, palabras, "A de la frase (5 tokens)", ocultar_futuro=True)
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Los valores, mezclados por los pesos
#
# Cada salida es una media ponderada de los vectores de valor que su fila puede ver. En dos dimensiones se ve
# a simple vista: la salida de «banco» cae justo entre `V[El]` y `V[banco]` (pesos 0.501 y 0.499), y la de
# «préstamo» es una mezcla de los cuatro valores.

# %%
colores = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
fig, ax = plt.subplots(figsize=(6.4, 4.6))
for t, v, o, c in zip(tokens_libro, V_libro, O_libro, colores):
    ax.scatter(*v, color=c, s=70, marker="s")
    ax.annotate(f"V[{t}]", v, textcoords="offset points", xytext=(6, 4), color=c)
    ax.scatter(*o, color=c, s=70, marker="o", edgecolor="black")
    ax.annotate(f"O[{t}]", o, textcoords="offset points", xytext=(6, -12), color=c)
for j in range(4):  # de qué valores sale O[préstamo], con su peso
    ax.annotate("", xy=O_libro[3], xytext=V_libro[j],
                arrowprops=dict(arrowstyle="->", color="grey", alpha=0.3 + A_libro[3, j]))
ax.set_xlabel("componente 1")
ax.set_ylabel("componente 2")
ax.set_title("Cuadrados: valores V · círculos: salidas O = AV")
plt.show()
for i, t in enumerate(tokens_libro):
    partes = " + ".join(f"{A_libro[i, j]:.3f}·V[{tokens_libro[j]}]" for j in range(i + 1))
    print(f"O[{t}] = {partes} = {np.round(O_libro[i], 3)}")

# %% [markdown]
# La máscara tiene una consecuencia que se puede comprobar: si cambias el último token, las salidas de los
# anteriores no se mueven ni una milésima. Cambiemos «préstamo» por una palabra inventada:

# %%
X_otra = X_frase.copy()
X_otra[4] = [-0.9, 0.3, 0.8, -0.6]
O_otra, _ = AT.attention_from_X(X_otra, W_Q, W_K, W_V)
print("¿cambian las salidas de las cuatro primeras palabras?", not np.allclose(O_otra[:4], O_frase[:4], atol=0))
print("¿cambia la de la última?                            ", not np.allclose(O_otra[4], O_frase[4], atol=1e-6))

# %% [markdown]
# ## 6. Multi-cabeza: separar, atender y volver a juntar
#
# Una sola matriz de atención tiene que resumir en un único reparto de pesos todas las relaciones que
# importan: qué artículo va con qué sustantivo, a quién se refiere un pronombre, qué paréntesis cierra cuál.
# La atención **multi-cabeza** hace `H` atenciones en paralelo, cada una con sus propias proyecciones y en un
# espacio más pequeño (`d_head = d_model / H` es lo habitual), y después junta sus resultados:
#
# $$\text{head}_h = \text{Attention}(X W_Q^{(h)}, X W_K^{(h)}, X W_V^{(h)}), \qquad
# \text{MultiHead}(X) = \text{Concat}(\text{head}_1, \dots, \text{head}_H)\, W_O$$
#
# En la práctica no hay `H` matrices separadas: `W_Q` tiene forma `(d_model, H · d_head)` y la cabeza `h` usa
# sus columnas `h·d_head … (h+1)·d_head − 1`. Para separar las cabezas de `Q = X W_Q`, de forma `(n, H·d_head)`:
#
# 1. `reshape` a `(n, H, d_head)`: parte las columnas de cada token en `H` trozos;
# 2. **trasponer** a `(H, n, d_head)`: ahora cada cabeza es una matriz de tokens.
#
# Un `reshape` directo a `(H, n, d_head)` tiene la misma forma, pero reparte los números de otro modo: mezcla
# tokens distintos dentro de una misma cabeza. Mira la diferencia con una matriz de índices:

# %%
indices = np.arange(3 * 4).reshape(3, 4)  # 3 tokens, 2 cabezas de tamaño 2: fila t = token t
bien = indices.reshape(3, 2, 2).transpose(1, 0, 2)
mal = indices.reshape(2, 3, 2)
print("Q (3 tokens × 4 columnas):\n", indices)
print("cabeza 0 con reshape + transpose:\n", bien[0], "\n  ← la columna 0-1 de cada token")
print("cabeza 0 con un reshape directo:\n", mal[0], "\n  ← ¡el token 1 aparece partido entre dos filas!")

# %% [markdown]
# Tras la atención se deshace el camino (trasponer a `(n, H, d_v)` y `reshape` a `(n, H·d_v)`), y `W_O`, de
# forma `(H·d_v, d_model)`, mezcla lo que ha encontrado cada cabeza.
#
# ### Ejercicio 5 · `split_heads`, encuentra el error (1 punto · dificultad ★★☆ · ~10 min)
#
# `split_heads(M, n_heads)` debe convertir un array `(..., n, n_heads·d)` en `(..., n_heads, n, d)`: la cabeza `h`
# recibe, de **cada** token, sus columnas `h·d … (h+1)·d − 1`. Devuelve un **array de NumPy** sin modificar `M` y
# lanza `ValueError` si `n_heads` no divide el número de columnas. La versión de la celda tiene la forma correcta
# y, sin embargo, mezcla tokens: corrígela.

# %% nbgrader={"grade_id": "split_heads", "solution": true}
def split_heads(M, n_heads):
    """(..., n, n_heads·d) -> (..., n_heads, n, d): las columnas de cada token, repartidas por cabezas."""
    M = np.asarray(M, dtype=float)
    *lote, n, columnas = M.shape
    if columnas % n_heads != 0:
        raise ValueError(f"{n_heads} cabezas no dividen {columnas} columnas")
    ### BEGIN SOLUTION
    return np.swapaxes(M.reshape(*lote, n, n_heads, columnas // n_heads), -3, -2)
    ### END SOLUTION
    ### BEGIN BUGGY
    # return M.reshape(*lote, n_heads, n, columnas // n_heads)
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Repite a mano el ejemplo de `indices` de arriba con la función de la celda: ¿qué fila de `indices` aparece
# en la cabeza 0?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Primero `reshape` a `(..., n, n_heads, d)`, que solo parte las columnas de cada token, y después
# `np.swapaxes(..., -3, -2)` para poner las cabezas delante de los tokens.
#
# </details>

# %% nbgrader={"grade_id": "test_split_heads", "grade": true, "points": 1}
# Comprobación del ejercicio 5 · valores exactos (solo se mueven números).
with reference_blocked(*REFERENCIAS):
    cabezas_t = checked_call(split_heads, np.arange(12.0).reshape(3, 4), 2)
    check_array(cabezas_t, what="split_heads de 3 tokens × 4 columnas en 2 cabezas", shape=(2, 3, 2))
    check_close(cabezas_t[0], [[0, 1], [4, 5], [8, 9]], atol=0, what="la cabeza 0",
                hint="la cabeza 0 son las columnas 0-1 de CADA token: [0, 1], [4, 5], [8, 9]")
    check_close(cabezas_t[1], [[2, 3], [6, 7], [10, 11]], atol=0, what="la cabeza 1")
    check_raises(lambda: split_heads(np.zeros((3, 4)), 3), ValueError, what="3 cabezas con 4 columnas")
ok("cada cabeza recibe sus columnas de cada token")
### BEGIN HIDDEN TESTS
with hidden("split_heads: lotes, una cabeza y listas"):
    rng_t = np.random.default_rng(1309)
    casos = [(rng_t.normal(size=(5, 12)), 3), (rng_t.normal(size=(2, 4, 8)), 4), (rng_t.normal(size=(2, 2, 3, 6)), 2),
             (rng_t.normal(size=(4, 6)), 1), (rng_t.normal(size=(3, 6)), 6), (rng_t.normal(size=(2, 4)).tolist(), 2)]
    esperados = [AT.split_heads(M_c, h_c) for M_c, h_c in casos]
    with reference_blocked(*REFERENCIAS):
        for (M_c, h_c), esperado in zip(casos, esperados):
            obtenido = checked_call(split_heads, M_c, h_c)
            check_array(obtenido, shape=esperado.shape)
            check_close(obtenido, esperado, rtol=1e-6, atol=1e-7)
        check_raises(lambda: split_heads(np.zeros((2, 3, 10)), 4), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Ejercicio 6 · `multi_head_attention` (3 puntos · dificultad ★★★ · ~25 min)
#
# Escribe `multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=True)`, que devuelve la salida
# `(..., n, d_out)` (solo la salida, no los pesos), un **array de NumPy de floats**, sin modificar sus entradas.
# Puedes usar tu `split_heads`:
#
# - `X` es `(..., n, d_model)` (acepta lotes); `W_Q` y `W_K` son `(d_model, n_heads · d_head)`, `W_V` es
#   `(d_model, n_heads · d_v)` (puede ser `d_v ≠ d_head`) y `W_O` es `(n_heads · d_v, d_out)`;
# - cada cabeza escala por `√d_head` (la dimensión de **su** consulta, no `d_model`);
# - con `causal=True` cada cabeza aplica la máscara causal; con `causal=False`, ninguna.

# %% nbgrader={"grade_id": "multi_head_attention", "solution": true}
def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads, causal=True):
    """Concat(head_1, ..., head_H) W_O, con las cabezas sacadas de columnas consecutivas."""
    ### BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    n = X.shape[-2]

    def separa(M):  # (..., n, H·d) -> (..., H, n, d)
        *lote, filas, columnas = M.shape
        return np.swapaxes(M.reshape(*lote, filas, n_heads, columnas // n_heads), -3, -2)

    q, k, v = separa(X @ W_Q), separa(X @ W_K), separa(X @ W_V)
    S = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        S = S + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    cabezas = (e / e.sum(axis=-1, keepdims=True)) @ v  # (..., H, n, d_v)
    juntas = np.swapaxes(cabezas, -3, -2)  # (..., n, H, d_v)
    return juntas.reshape(*juntas.shape[:-2], -1) @ W_O
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Cuatro pasos: separa las cabezas de `X @ W_Q`, `X @ W_K` y `X @ W_V` con `split_heads`; haz la atención en las
# cuatro dimensiones a la vez (tus funciones aceptan lotes: las cabezas son un eje de lote más); junta las
# cabezas; multiplica por `W_O`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Para juntar: `np.swapaxes(salida, -3, -2)` deja `(..., n, H, d_v)`, y `reshape(*forma[:-2], -1)` lo aplana a
# `(..., n, H·d_v)`. Sin máscara (`causal=False`), las puntuaciones van directas a la softmax.
#
# </details>

# %% nbgrader={"grade_id": "test_multi_head_attention", "grade": true, "points": 3}
# Comprobación del ejercicio 6 · tolerancia: 1e-6 frente al cálculo cabeza a cabeza; en los casos aleatorios,
# rtol 1e-5 y un atol proporcional al tamaño de la salida (float32 también vale).
rng_v = np.random.default_rng(5)
W_Q2, W_K2, W_V2, W_O2 = (rng_v.normal(0, 1, size=(4, 4)) for _ in range(4))
# Una sola cabeza es la atención de antes seguida de W_O; con dos, cada cabeza usa las columnas 0-1 y 2-3.
una = AT.causal_attention(X_frase @ W_Q2, X_frase @ W_K2, X_frase @ W_V2)[0] @ W_O2
cabeza_0 = AT.causal_attention(X_frase @ W_Q2[:, :2], X_frase @ W_K2[:, :2], X_frase @ W_V2[:, :2])[0]
cabeza_1 = AT.causal_attention(X_frase @ W_Q2[:, 2:], X_frase @ W_K2[:, 2:], X_frase @ W_V2[:, 2:])[0]
sin_mascara = AT.multi_head_attention(X_frase, W_Q2, W_K2, W_V2, W_O2, 2, causal=False)
with reference_blocked(*REFERENCIAS):
    salida = checked_call(multi_head_attention, X_frase, W_Q2, W_K2, W_V2, W_O2, n_heads=2)
    check_array(salida, what="multi_head_attention de la frase con 2 cabezas", dtype="float", shape=(5, 4))
    check_close(checked_call(multi_head_attention, X_frase, W_Q2, W_K2, W_V2, W_O2, n_heads=1), una, atol=1e-6,
                what="multi-cabeza con n_heads = 1", hint="con una cabeza, d_head = d_model")
    check_close(salida, np.concatenate([cabeza_0, cabeza_1], axis=1) @ W_O2, atol=1e-6,
                what="multi-cabeza con n_heads = 2",
                hint="cabeza h = columnas h·d_head … (h+1)·d_head − 1; reshape y después transpose")
    check_close(checked_call(multi_head_attention, X_frase, W_Q2, W_K2, W_V2, W_O2, n_heads=2, causal=False),
                sin_mascara, atol=1e-6, what="multi-cabeza con causal=False", hint="sin máscara: cada token ve a todos")
ok("las dos cabezas de la frase coinciden con el cálculo cabeza a cabeza")
### BEGIN HIDDEN TESTS
with hidden("multi_head_attention: más cabezas, lotes, d_v distinto y sin máscara"):
    rng_t = np.random.default_rng(1305)
    casos = []
    for lote, n, d_model, H, d_head, d_v, d_out, causal, escala in [
        ((), 6, 16, 4, 4, 4, 16, True, 2), ((2,), 7, 12, 3, 2, 5, 10, True, 2),
        ((), 5, 8, 2, 6, 3, 8, False, 2), ((2, 2), 4, 6, 6, 1, 2, 6, True, 2), ((2,), 5, 8, 2, 4, 4, 8, True, 25),
    ]:
        Xh = rng_t.normal(0, escala, size=(*lote, n, d_model))
        pesos_h = (rng_t.normal(size=(d_model, H * d_head)), rng_t.normal(size=(d_model, H * d_head)),
                   rng_t.normal(size=(d_model, H * d_v)), rng_t.normal(size=(H * d_v, d_out)))
        casos.append((Xh, pesos_h, H, causal, escala))
    esperados = [AT.multi_head_attention(Xh, *pesos_h, H, causal=causal) for Xh, pesos_h, H, causal, _ in casos]
    with reference_blocked(*REFERENCIAS):
        for (Xh, pesos_h, H, causal, escala), esperado in zip(casos, esperados):
            obtenido = checked_call(multi_head_attention, Xh, *pesos_h, H, causal=causal)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            tol = (1e-5 if escala <= 3 else 1e-4) * max(1.0, float(np.abs(esperado).max()))  # float32, a escala
            check_close(obtenido, esperado, rtol=1e-5, atol=tol)
### END HIDDEN TESTS

# %% [markdown]
# Cada cabeza reparte la atención a su manera. Aquí hay cuatro cabezas de tamaño 2 sobre la frase, con pesos
# aleatorios (no entrenados): ya se ve que no miran todas a los mismos sitios.

# %%
rng = np.random.default_rng(SEMILLA)
W_Q4, W_K4, W_V4 = (rng.normal(0, 1.5, size=(4, 8)) for _ in range(3))
W_O4 = rng.normal(0, 0.5, size=(8, 4))
_, A_cabezas = AT.multi_head_attention(X_frase, W_Q4, W_K4, W_V4, W_O4, 4, return_weights=True)
fig, ejes = plt.subplots(1, 4, figsize=(15, 4))
for h, ax in enumerate(ejes):
    dibuja_mapa(ax, A_cabezas[h], palabras, palabras, f"cabeza {h}", decimales=2, ocultar_futuro=True)
    if h:
        ax.set_ylabel("")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 7. GQA y MQA: menos claves y valores que consultas
#
# Al generar, el modelo guarda las claves y los valores de todos los tokens anteriores (la caché KV de la
# sección 8). Con atención multi-cabeza completa (**MHA**) cada cabeza tiene los suyos, y esa memoria crece con
# el número de cabezas. Dos variantes la recortan sin tocar las consultas, que siguen siendo una por cabeza:
#
# | variante | claves y valores | caché KV | a cambio |
# |---|---|---|---|
# | MHA | uno por cabeza | la más grande | máxima expresividad |
# | GQA | uno por **grupo** de cabezas | dividida por el tamaño del grupo | calidad casi igual; lo habitual con contexto largo |
# | MQA | uno para **todas** | mínima | algo menos expresiva |
#
# Con `H` cabezas de consulta y `H_kv` cabezas de clave/valor, cada grupo de `H / H_kv` consultas consecutivas
# comparte una. Seguimos la convención de Llama (y de `llmlab.model`): la cabeza de consulta `h` usa la cabeza
# de clave/valor `h // (H / H_kv)`. Con `H = 4` y `H_kv = 2`, las cabezas 0 y 1 usan la 0, y la 2 y la 3 usan la
# 1. En NumPy eso es `np.repeat(k, H // H_kv, axis=...)` (repetir cada una seguida), no `np.tile` (que daría
# 0, 1, 0, 1).
#
# ### Ejercicio 7 · `grouped_query_attention` (2 puntos · dificultad ★★★ · ~20 min)
#
# Escribe `grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=True)`:
#
# - como `multi_head_attention`, pero `W_K` es `(d_model, n_kv_heads · d_head)` y `W_V`
#   `(d_model, n_kv_heads · d_v)`, y la cabeza de consulta `h` usa la cabeza de clave/valor
#   `h // (n_heads // n_kv_heads)`;
# - si `n_kv_heads` no divide a `n_heads`, lanza `ValueError`; devuelve un **array de NumPy de floats**.
#
# Con `n_kv_heads = n_heads` tiene que dar lo mismo que `multi_head_attention`; con `n_kv_heads = 1` es MQA.

# %% nbgrader={"grade_id": "grouped_query_attention", "solution": true}
def grouped_query_attention(X, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads, causal=True):
    """Atención con n_heads consultas que comparten n_kv_heads cabezas de clave y valor."""
    ### BEGIN SOLUTION
    if n_kv_heads < 1 or n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads tiene que dividir a n_heads")
    X = np.asarray(X, dtype=float)
    n = X.shape[-2]

    def separa(M, cabezas):  # (..., n, cabezas·d) -> (..., cabezas, n, d)
        *lote, filas, columnas = M.shape
        return np.swapaxes(M.reshape(*lote, filas, cabezas, columnas // cabezas), -3, -2)

    grupo = n_heads // n_kv_heads
    q = separa(X @ W_Q, n_heads)
    k = np.repeat(separa(X @ W_K, n_kv_heads), grupo, axis=-3)  # 0,0,1,1,... no 0,1,0,1
    v = np.repeat(separa(X @ W_V, n_kv_heads), grupo, axis=-3)
    S = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        S = S + np.triu(np.full((n, n), -1e9), k=1)
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    juntas = np.swapaxes((e / e.sum(axis=-1, keepdims=True)) @ v, -3, -2)
    return juntas.reshape(*juntas.shape[:-2], -1) @ W_O
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Separa `Q` en `n_heads` cabezas y `K`, `V` en `n_kv_heads`; después repite cada cabeza de clave/valor
# `n_heads // n_kv_heads` veces **seguidas** en el eje de las cabezas y sigue como en la multi-cabeza.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `np.repeat(k, grupo, axis=-3)` da el orden 0, 0, 1, 1, …; `np.tile` daría 0, 1, 0, 1, … (la convención de
# otro modelo). Valida primero: `if n_heads % n_kv_heads != 0: raise ValueError(...)`.
#
# </details>

# %% nbgrader={"grade_id": "test_grouped_query_attention", "grade": true, "points": 2}
# Comprobación del ejercicio 7 · tolerancia: 1e-6 frente a la multi-cabeza equivalente; en los casos aleatorios,
# rtol 1e-5 y un atol proporcional al tamaño de la salida.
rng_v = np.random.default_rng(6)
X_g = rng_v.normal(0, 1, size=(5, 8))
W_Qg, W_Og = rng_v.normal(size=(8, 8)), rng_v.normal(size=(8, 8))
W_Kg, W_Vg = rng_v.normal(size=(8, 8)), rng_v.normal(size=(8, 8))
W_K1, W_V1 = W_Kg[:, :2], W_Vg[:, :2]  # MQA: una sola cabeza de clave/valor (d_head = 2)
mha_g = AT.multi_head_attention(X_g, W_Qg, W_Kg, W_Vg, W_Og, 4)
mqa_g = AT.multi_head_attention(X_g, W_Qg, np.tile(W_K1, 4), np.tile(W_V1, 4), W_Og, 4)
W_K2g, W_V2g = W_Kg[:, :4], W_Vg[:, :4]  # GQA: 2 cabezas de clave/valor para 4 consultas
gqa_g = AT.multi_head_attention(X_g, W_Qg, np.repeat(W_K2g.reshape(8, 2, 2), 2, axis=1).reshape(8, 8),
                                np.repeat(W_V2g.reshape(8, 2, 2), 2, axis=1).reshape(8, 8), W_Og, 4)
with reference_blocked(*REFERENCIAS):
    salida_g = checked_call(grouped_query_attention, X_g, W_Qg, W_Kg, W_Vg, W_Og, 4, 4)
    check_array(salida_g, what="grouped_query_attention con 4 cabezas", dtype="float", shape=(5, 8))
    check_close(salida_g, mha_g, atol=1e-6, what="GQA con n_kv_heads = n_heads (es MHA)")
    check_close(checked_call(grouped_query_attention, X_g, W_Qg, W_K1, W_V1, W_Og, 4, 1), mqa_g, atol=1e-6,
                what="MQA (n_kv_heads = 1)", hint="las cuatro consultas usan la misma clave y el mismo valor")
    check_close(checked_call(grouped_query_attention, X_g, W_Qg, W_K2g, W_V2g, W_Og, 4, 2), gqa_g, atol=1e-6,
                what="GQA con 2 cabezas de clave/valor",
                hint="las consultas 0 y 1 usan la clave/valor 0, y la 2 y la 3 la 1: np.repeat, no np.tile")
    check_raises(lambda: grouped_query_attention(X_g, W_Qg, W_Kg[:, :6], W_Vg[:, :6], W_Og, 4, 3), ValueError,
                 what="grouped_query_attention con 4 cabezas y 3 de clave/valor")
ok("MHA y MQA son los dos extremos de GQA")
### BEGIN HIDDEN TESTS
with hidden("grouped_query_attention: grupos intermedios, lotes, d_v distinto y valores grandes"):
    rng_t = np.random.default_rng(1306)
    casos = []
    for lote, n, d_model, H, H_kv, d_head, d_v, causal, escala in [
        ((), 6, 12, 6, 2, 2, 2, True, 2), ((2,), 5, 12, 6, 3, 2, 3, True, 2), ((), 7, 8, 4, 2, 3, 2, False, 2),
        ((2,), 4, 8, 8, 4, 1, 2, True, 2), ((), 6, 8, 4, 2, 4, 4, True, 25),
    ]:
        Xh = rng_t.normal(0, escala, size=(*lote, n, d_model))
        pesos_h = (rng_t.normal(size=(d_model, H * d_head)), rng_t.normal(size=(d_model, H_kv * d_head)),
                   rng_t.normal(size=(d_model, H_kv * d_v)), rng_t.normal(size=(H * d_v, d_model)))
        casos.append((Xh, pesos_h, H, H_kv, causal, escala))
    esperados = [AT.grouped_query_attention(Xh, *pesos_h, H, H_kv, causal=causal) for Xh, pesos_h, H, H_kv, causal, _ in casos]
    with reference_blocked(*REFERENCIAS):
        for (Xh, pesos_h, H, H_kv, causal, escala), esperado in zip(casos, esperados):
            obtenido = checked_call(grouped_query_attention, Xh, *pesos_h, H, H_kv, causal=causal)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            tol = (1e-5 if escala <= 3 else 1e-4) * max(1.0, float(np.abs(esperado).max()))  # float32, a escala
            check_close(obtenido, esperado, rtol=1e-5, atol=tol)
        check_raises(lambda: grouped_query_attention(casos[0][0], *casos[0][1], 6, 4), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ¿Cuánto se ahorra? Para un modelo de la talla de Llama 3 8B (32 capas, `d_model = 4096`, 32 cabezas de
# consulta) con `CONTEXTO_KV` tokens de contexto en FP16, la caché KV de una sola secuencia pesa:

# %%
capas, d_model_grande, cabezas = 32, 4096, 32
variantes = {"MHA (32 KV)": 32, "GQA (8 KV)": 8, "GQA (4 KV)": 4, "MQA (1 KV)": 1}
gib = {nombre: C.kv_cache_bytes(capas, CONTEXTO_KV, d_model_grande, 2, n_heads=cabezas, n_kv_heads=kv) / 2**30
       for nombre, kv in variantes.items()}
for nombre, tam in gib.items():
    print(f"{nombre:12s} {tam:7.2f} GiB")
plt.bar(list(gib), list(gib.values()), color=["tab:red", "tab:orange", "tab:olive", "tab:green"])
for x, tam in enumerate(gib.values()):
    plt.text(x, tam + 0.2, f"{tam:.2f}", ha="center")
plt.ylim(0, max(gib.values()) * 1.15)
plt.ylabel("caché KV (GiB)")
plt.title(f"Caché KV con {CONTEXTO_KV} tokens: 32 capas, d = 4096, FP16")
plt.show()

# %% [markdown]
# Con 8 cabezas de clave/valor, como Llama 3 8B, la caché es 4 veces más pequeña que con MHA: la diferencia
# entre que quepan 4 conversaciones largas en la GPU o quepa una.
#
# ## 8. La caché KV: generar sin recalcular
#
# Al generar, el modelo produce un token, lo añade y vuelve a calcular. Recalcularlo todo en cada paso sería
# tirar trabajo: gracias a la máscara causal, las claves y los valores de los tokens anteriores **no cambian**
# cuando llega uno nuevo (ninguno de ellos puede mirar al nuevo). Así que se guardan. En cada paso solo hace
# falta:
#
# 1. calcular `q`, `k` y `v` del token nuevo;
# 2. añadir `k` y `v` a la caché;
# 3. comparar `q` con **todas** las claves guardadas (la suya incluida), hacer la softmax y mezclar los valores.
#
# No hace falta máscara: el token nuevo es el último, y todo lo que hay en la caché es pasado o él mismo. Sin
# máscara causal este truco sería imposible, porque cada token nuevo cambiaría la salida de los anteriores.
#
# ### Ejercicio 8 · `KVCache` y `decode_step` (3 puntos · dificultad ★★★ · ~25 min)
#
# Completa la clase `KVCache` (una cabeza, una secuencia) y la función `decode_step`:
#
# - `KVCache()` empieza vacía; `cache.append(k, v)` guarda la clave `k` (vector `(d_k,)`) y el valor `v`
#   (vector `(d_v,)`) de un token; `len(cache)` es el número de tokens guardados; `cache.keys` y `cache.values`
#   devuelven **arrays de NumPy** `(t, d_k)` y `(t, d_v)` con lo guardado, en orden (copias: modificarlas no
#   cambia la caché);
# - `decode_step(x_t, cache, W_Q, W_K, W_V)` recibe el vector `x_t` `(d_model,)` del token nuevo, calcula su
#   `q`, `k`, `v`, añade `k` y `v` a la caché y devuelve la salida de la atención de ese token, un vector
#   `(d_v,)` (un array de NumPy de floats). Es la única función del lab que **debe** modificar una entrada: la
#   caché.
#
# Después de `t` pasos, las salidas tienen que ser las filas `0 … t−1` de la atención causal de la secuencia
# completa.

# %% nbgrader={"grade_id": "kv_cache", "solution": true}
class KVCache:
    """Claves y valores de los tokens ya procesados (una cabeza, una secuencia)."""

    def __init__(self):
        ### BEGIN SOLUTION
        self._claves = []
        self._valores = []
        ### END SOLUTION

    def append(self, k, v):
        """Guarda la clave k (d_k,) y el valor v (d_v,) de un token nuevo."""
        ### BEGIN SOLUTION
        self._claves.append(np.asarray(k, dtype=float))
        self._valores.append(np.asarray(v, dtype=float))
        ### END SOLUTION

    def __len__(self):
        ### BEGIN SOLUTION
        return len(self._claves)
        ### END SOLUTION

    @property
    def keys(self):
        """Matriz (t, d_k) con las claves guardadas."""
        ### BEGIN SOLUTION
        return np.array(self._claves)
        ### END SOLUTION

    @property
    def values(self):
        """Matriz (t, d_v) con los valores guardados."""
        ### BEGIN SOLUTION
        return np.array(self._valores)
        ### END SOLUTION


def decode_step(x_t, cache, W_Q, W_K, W_V):
    """Un paso de decodificación: añade k y v del token nuevo y devuelve su salida (d_v,)."""
    ### BEGIN SOLUTION
    x_t = np.asarray(x_t, dtype=float)
    q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V
    cache.append(k, v)
    s = cache.keys @ q / np.sqrt(q.shape[-1])
    w = np.exp(s - s.max())
    return (w / w.sum()) @ cache.values
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# La caché puede guardar dos listas de Python (una de claves, otra de valores) y convertirlas en matriz con
# `np.array(...)` cuando alguien pide `keys` o `values`. En `decode_step`, añade **antes** de atender: el token
# nuevo también se mira a sí mismo.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `q, k, v = x_t @ W_Q, x_t @ W_K, x_t @ W_V`; `cache.append(k, v)`; `s = cache.keys @ q / np.sqrt(q.shape[-1])`;
# softmax estable de `s`; y `return pesos @ cache.values`. No hace falta máscara: todo lo guardado es pasado.
#
# </details>

# %% nbgrader={"grade_id": "test_kv_cache", "grade": true, "points": 3}
# Comprobación del ejercicio 8 · tolerancias: 1e-4 frente a la tabla del libro; 1e-6 frente a la atención
# completa (rtol 1e-5 en los casos aleatorios). La caché se pasa con `modifiable(...)`: es lo único que puede cambiar.
# Truco: si cada "token" es la fila [q | k | v] del libro, unas proyecciones que solo seleccionan columnas
# reproducen exactamente el Q, K y V del capítulo.
X_qkv = np.hstack([Q_libro, K_libro, V_libro])  # (4, 6)
seleccion = np.eye(6)
completa_frase = AT.attention_from_X(X_frase, W_Q, W_K, W_V)[0]
with reference_blocked(*REFERENCIAS):
    cache = checked_call(KVCache)
    check_equal(len(cache), 0, what="len de una caché recién creada")
    salidas = []
    for t in range(4):
        salidas.append(checked_call(decode_step, X_qkv[t], modifiable(cache), seleccion[:, 0:2], seleccion[:, 2:4],
                                    seleccion[:, 4:6]))
        check_array(salidas[-1], what=f"la salida del paso {t + 1}", dtype="float", shape=(2,))
        check_equal(len(cache), t + 1, what=f"len(cache) después de {t + 1} paso(s)")
    check_close(np.array(salidas), O_esperada, atol=1e-4, what="las salidas paso a paso del libro",
                hint="añade k y v a la caché ANTES de atender: el token se mira también a sí mismo")
    check_array(cache.keys, what="cache.keys", shape=(4, 2))
    check_close(cache.keys, K_libro, atol=1e-6, what="cache.keys tras 4 pasos")
    check_close(cache.values, V_libro, atol=1e-6, what="cache.values tras 4 pasos", hint="¿guardas también v?")
    cache = checked_call(KVCache)
    paso_a_paso = np.array([checked_call(decode_step, x, modifiable(cache), W_Q, W_K, W_V) for x in X_frase])
    check_close(paso_a_paso, completa_frase, atol=1e-6,
                what="la frase decodificada token a token frente a la atención causal completa")
ok("la caché KV da lo mismo que recalcularlo todo")
### BEGIN HIDDEN TESTS
with hidden("KVCache y decode_step: secuencias largas, valores grandes, d_v distinto y copias"):
    rng_t = np.random.default_rng(1307)
    casos = []
    for n, d_model, d_k, d_v, escala in [(12, 6, 4, 3, 3), (8, 5, 16, 7, 3), (1, 3, 2, 2, 3), (6, 4, 4, 2, 30)]:
        Xh = rng_t.normal(0, escala, size=(n, d_model))
        pesos_h = (rng_t.normal(size=(d_model, d_k)), rng_t.normal(size=(d_model, d_k)), rng_t.normal(size=(d_model, d_v)))
        casos.append((Xh, pesos_h, escala, AT.attention_from_X(Xh, *pesos_h)[0]))
    with reference_blocked(*REFERENCIAS):
        for Xh, pesos_h, escala, esperado in casos:
            cache_h = checked_call(KVCache)
            filas = []
            for t in range(len(Xh)):
                filas.append(checked_call(decode_step, Xh[t], modifiable(cache_h), *pesos_h))
                check_equal(len(cache_h), t + 1)
                check_shape(cache_h.keys, (t + 1, pesos_h[1].shape[1]))
                check_shape(cache_h.values, (t + 1, pesos_h[2].shape[1]))
            check_close(np.array(filas), esperado, rtol=1e-5, atol=1e-6 if escala <= 3 else 1e-4)
            check_close(cache_h.values, Xh @ pesos_h[2], rtol=1e-5, atol=1e-6)
        # Lo que devuelven keys y values son copias: modificarlas no estropea la caché.
        claves = cache_h.keys
        claves[...] = 0.0
        check_close(cache_h.keys, casos[-1][0] @ casos[-1][1][1], rtol=1e-5, atol=1e-6)
### END HIDDEN TESTS

# %% [markdown]
# La caché no ahorra memoria, la gasta: ahorra **cálculo**. Sin ella, el paso `t` recalcula la atención de los
# `t` tokens, unos `t²` productos `q·k`; con ella, solo la fila del token nuevo, `t` productos. La figura
# acumula ese trabajo a lo largo de `PASOS_DECODIFICACION` tokens generados, y también la memoria de la caché
# (por token, una clave y un valor en cada capa). Antes de ejecutarla, apunta tu predicción (no puntúa): tras
# `PASOS_DECODIFICACION` tokens, ¿cuántas veces menos productos `q·k` hace la versión con caché? La celda la
# imprime antes que el resultado.

# %%
MI_PREDICCION = ""  # p. ej. "unas 10 veces"

# %%
print("tu predicción:", MI_PREDICCION.strip() or "(no la has escrito: hazlo antes de mirar el resultado)")
pasos = np.arange(1, PASOS_DECODIFICACION + 1)
sin_cache = np.cumsum(pasos**2)
con_cache = np.cumsum(pasos)
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.8))
izq.plot(pasos, sin_cache, label="sin caché: Σ t²")
izq.plot(pasos, con_cache, label="con caché: Σ t")
izq.set_xlabel("tokens generados")
izq.set_ylabel("productos q·k acumulados")
izq.set_title("Trabajo de la atención al generar")
izq.legend()
por_token = C.kv_cache_bytes(capas, 1, d_model_grande, 2, n_heads=cabezas, n_kv_heads=8)
der.step(pasos, pasos * por_token / 2**20, where="post")
der.set_xlabel("tokens en la caché")
der.set_ylabel("MiB")
der.set_title("Memoria de la caché (32 capas, GQA 8 KV, FP16)")
plt.tight_layout()
plt.show()
print(f"tras {PASOS_DECODIFICACION} tokens: {sin_cache[-1]} productos sin caché frente a {con_cache[-1]} con caché"
      f" ({sin_cache[-1] / con_cache[-1]:.1f} veces menos); {por_token} bytes de caché por token")

# %% [markdown]
# ## 9. Autoatención, autoatención enmascarada y atención cruzada
#
# Las tres variantes hacen la misma cuenta; lo que cambia es de dónde salen Q, K y V y si hay máscara:
#
# | variante | Q | K y V | máscara | dónde aparece |
# |---|---|---|---|---|
# | autoatención | la secuencia | la misma secuencia | no | codificador tipo BERT: cada palabra ve toda la frase |
# | autoatención enmascarada | la secuencia | la misma secuencia | causal | decodificador tipo GPT |
# | atención cruzada | la secuencia que se genera | **otra** secuencia | no | decodificador de un traductor mirando la frase original; texto mirando parches de una imagen |
#
# En la atención cruzada la matriz `A` ya no es cuadrada: tiene una fila por token que pregunta y una columna
# por token de la otra secuencia. No tiene sentido enmascararla: la otra secuencia está completa desde el
# principio.
#
# ### Ejercicio 9 · `cross_attention` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `cross_attention(X_q, Y_kv, W_Q, W_K, W_V)`, que devuelve `(O, A)`: las consultas salen de `X_q`
# `(..., n_x, d_x)` y las claves y los valores de `Y_kv` `(..., n_y, d_y)`; sin máscara. `A` tiene forma
# `(..., n_x, n_y)` y `O`, `(..., n_x, d_v)`: dos arrays de NumPy de floats.

# %% nbgrader={"grade_id": "cross_attention", "solution": true}
def cross_attention(X_q, Y_kv, W_Q, W_K, W_V):
    """Atención cruzada (sin máscara). Devuelve (O, A)."""
    ### BEGIN SOLUTION
    Q = np.asarray(X_q, dtype=float) @ W_Q
    K = np.asarray(Y_kv, dtype=float) @ W_K
    V = np.asarray(Y_kv, dtype=float) @ W_V
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    return A @ V, A
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Es la atención de siempre con `Q = X_q W_Q`, `K = Y_kv W_K` y `V = Y_kv W_V`, y sin máscara. La matriz `A`
# ya no es cuadrada.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Calcula las tres proyecciones y después `S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)`, softmax estable por
# filas y `return A @ V, A`. Con tu `softmax_rows` son tres líneas.
#
# </details>

# %% nbgrader={"grade_id": "test_cross_attention", "grade": true, "points": 2}
# Comprobación del ejercicio 9 · tolerancia: 1e-6 (rtol 1e-5 en los casos aleatorios; 1e-4 con valores enormes).
# Un traductor de juguete: tres tokens de la traducción ("The bank approved") miran la frase original.
rng_v = np.random.default_rng(8)
X_destino = rng_v.normal(0, 1, size=(3, 4))
W_Qc, W_Kc, W_Vc = rng_v.normal(size=(4, 2)), rng_v.normal(size=(4, 2)), rng_v.normal(size=(4, 3))
O_ref, A_ref = AT.scaled_dot_product_attention(X_destino @ W_Qc, X_frase @ W_Kc, X_frase @ W_Vc)
with reference_blocked(*REFERENCIAS):
    resultado_c = checked_call(cross_attention, X_destino, X_frase, W_Qc, W_Kc, W_Vc)
    check_type(resultado_c, tuple, what="lo que devuelve cross_attention")
    O_c, A_c = resultado_c
    check_array(A_c, what="A de la atención cruzada", dtype="float", shape=(3, 5))
    check_array(O_c, what="O de la atención cruzada", dtype="float", shape=(3, 3))
    check_close(np.sum(A_c, axis=-1), np.ones(3), atol=1e-6, what="la suma de cada fila de A")
    check_true(np.all(np.asarray(A_c) > 0), "en la atención cruzada no hay máscara: ningún peso es cero")
    check_close(A_c, A_ref, atol=1e-6, what="los pesos de la atención cruzada")
    check_close(O_c, O_ref, atol=1e-6, what="la salida de la atención cruzada")
ok("la traducción mira toda la frase original")
### BEGIN HIDDEN TESTS
with hidden("cross_attention: secuencias de igual longitud, lotes y valores grandes"):
    rng_t = np.random.default_rng(1308)
    casos = []
    for lote, n_x, n_y, d_x, d_y, d_k, d_v, escala in [((), 5, 5, 4, 4, 3, 2, 3), ((2,), 3, 7, 5, 6, 8, 4, 3),
                                                       ((), 6, 2, 3, 9, 16, 5, 3), ((2,), 4, 6, 4, 4, 4, 3, 25)]:
        Xh = rng_t.normal(0, escala, size=(*lote, n_x, d_x))
        Yh = rng_t.normal(0, escala, size=(*lote, n_y, d_y))
        pesos_h = (rng_t.normal(size=(d_x, d_k)), rng_t.normal(size=(d_y, d_k)), rng_t.normal(size=(d_y, d_v)))
        casos.append((Xh, Yh, pesos_h, escala))
    esperados = [AT.cross_attention(Xh, Yh, *pesos_h) for Xh, Yh, pesos_h, _ in casos]
    with reference_blocked(*REFERENCIAS):
        for (Xh, Yh, pesos_h, escala), (O_e, A_e) in zip(casos, esperados):
            O_h, A_h = checked_call(cross_attention, Xh, Yh, *pesos_h)
            check_array(A_h, dtype="float", shape=A_e.shape)
            tol = 1e-6 if escala <= 3 else 1e-3
            check_close(A_h, A_e, rtol=1e-5, atol=tol)
            check_close(O_h, O_e, rtol=1e-5, atol=tol)
### END HIDDEN TESTS

# %% [markdown]
# Las tres variantes, lado a lado, con la misma frase: la autoatención llena toda la matriz, la enmascarada
# solo el triángulo inferior y la cruzada es rectangular.

# %%
_, A_bidireccional = AT.attention_from_X(X_frase, W_Q, W_K, W_V, causal=False)
rng = np.random.default_rng(SEMILLA + 8)
X_traduccion = rng.normal(0, 1, size=(3, 4))
_, A_cruzada = AT.cross_attention(X_traduccion, X_frase, W_Q, W_K, W_V)
fig, ejes = plt.subplots(1, 3, figsize=(15, 4.4), gridspec_kw={"width_ratios": [5, 5, 5]})
dibuja_mapa(ejes[0], A_bidireccional, palabras, palabras, "autoatención (BERT)", decimales=2)
dibuja_mapa(ejes[1], A_frase, palabras, palabras, "enmascarada (GPT)", decimales=2, ocultar_futuro=True)
dibuja_mapa(ejes[2], A_cruzada, ["The", "bank", "approved"], palabras, "cruzada (traductor)", decimales=2)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 10. Lo mismo en PyTorch
#
# Los modelos reales no usan NumPy, pero la cuenta es idéntica. En PyTorch los tensores de atención suelen
# tener forma `[lote, cabezas, n, d]`; la máscara se aplica con `masked_fill` (poniendo `−∞` donde está
# prohibido mirar) y `torch.softmax(..., dim=-1)` normaliza cada fila. Aquí sí se puede usar un `−∞` de
# verdad: la fila de cada token siempre tiene al menos una posición permitida (él mismo). Fíjate en la convención:
# para `masked_fill`, `True` significa **tapar**; para SDPA (lab 02), `True` significa **puede mirar**.
#
# ### Ejercicio 10 · `causal_attention_torch` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `causal_attention_torch(q, k, v)`: la atención causal con tensores de PyTorch de forma
# `[..., n, d]`. Devuelve la tupla `(salida, pesos)` de **tensores de PyTorch** del mismo `dtype` que la entrada
# (float32 o float64), sin modificar las entradas. No uses
# `torch.nn.functional.scaled_dot_product_attention`: justo después la usaremos para contrastar el resultado.

# %% nbgrader={"grade_id": "causal_attention_torch", "solution": true}
def causal_attention_torch(q, k, v):
    """Atención causal en PyTorch. Devuelve (salida, pesos)."""
    ### BEGIN SOLUTION
    n, d_k = q.shape[-2], q.shape[-1]
    puntuaciones = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    futuro = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(diagonal=1)
    pesos = torch.softmax(puntuaciones.masked_fill(futuro, float("-inf")), dim=-1)
    return pesos @ v, pesos
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Las mismas cuentas que en NumPy: `q @ k.transpose(-2, -1)`, `torch.triu(torch.ones(n, n, dtype=torch.bool),
# diagonal=1)` marca el futuro y `masked_fill(futuro, float("-inf"))` lo tapa.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `pesos = torch.softmax(puntuaciones.masked_fill(futuro, float("-inf")), dim=-1)` y
# `return pesos @ v, pesos`. No uses `.numpy()` ni cambies el dtype: trabaja con tensores de principio a fin.
#
# </details>

# %% nbgrader={"grade_id": "test_causal_attention_torch", "grade": true, "points": 2}
# Comprobación del ejercicio 10 · tolerancias: 1e-4 frente a la tabla del libro; en los casos aleatorios 1e-9 en
# float64 y 1e-5 en float32.
q_t, k_t, v_t = (torch.tensor(M, dtype=torch.float64) for M in (Q_libro, K_libro, V_libro))
with reference_blocked(*REFERENCIAS):
    resultado = checked_call(causal_attention_torch, q_t, k_t, v_t)
    check_type(resultado, tuple, what="lo que devuelve causal_attention_torch")
    salida_t, pesos_t = resultado
    check_tensor(salida_t, what="la salida", dtype="float", shape=(4, 2))
    check_tensor(pesos_t, what="los pesos", dtype="float", shape=(4, 4))
    check_true(salida_t.dtype == torch.float64, "con entradas float64 la salida debe seguir en float64",
               hint="no conviertas a float32 ni a NumPy por el camino")
    check_close(pesos_t, A_esperada, atol=1e-4, what="los pesos del libro en PyTorch")
    check_close(salida_t, O_esperada, atol=1e-4, what="la salida del libro en PyTorch")
ok("PyTorch reproduce la tabla del libro")
### BEGIN HIDDEN TESTS
with hidden("causal_attention_torch: lotes con cabezas, float32, valores grandes y d_v distinto"):
    gen = torch.Generator().manual_seed(1309)
    casos = []
    for forma_qk, d_v, dtype, escala in [((2, 3, 6, 8), 8, torch.float64, 3.0), ((5, 4), 3, torch.float64, 3.0),
                                         ((2, 7, 16), 5, torch.float32, 3.0), ((2, 6, 4), 3, torch.float64, 40.0)]:
        qh = escala * torch.randn(*forma_qk, generator=gen, dtype=dtype)
        kh = escala * torch.randn(*forma_qk, generator=gen, dtype=dtype)
        vh = torch.randn(*forma_qk[:-1], d_v, generator=gen, dtype=dtype)
        casos.append((qh, kh, vh, scaled_dot_product_attention(qh, kh, vh, is_causal=True),
                      AT.causal_attention(qh.double().numpy(), kh.double().numpy(), vh.double().numpy())[1]))
    with reference_blocked(*REFERENCIAS):
        for qh, kh, vh, salida_ref, pesos_ref in casos:
            salida_h, pesos_h = checked_call(causal_attention_torch, qh, kh, vh)
            check_tensor(salida_h, dtype="float", shape=salida_ref.shape)
            check_tensor(pesos_h, dtype="float", shape=pesos_ref.shape)
            check_true(salida_h.dtype == qh.dtype, "mismo dtype que la entrada")
            tolerancia = 1e-9 if qh.dtype == torch.float64 else 1e-5
            check_close(salida_h, salida_ref, atol=tolerancia, rtol=1e-6)
            check_close(pesos_h, pesos_ref, atol=tolerancia, rtol=1e-6)
### END HIDDEN TESTS

# %% [markdown]
# ### Tres implementaciones, un mismo resultado
#
# Ahora contrastamos la cuenta con dos implementaciones que no hemos escrito en este cuaderno:
#
# - `torch.nn.functional.scaled_dot_product_attention` (SDPA), el núcleo fusionado que usan los modelos de
#   PyTorch; no devuelve la matriz de pesos porque no la necesita para calcular la salida;
# - `llmlab.model.CausalSelfAttention`, la capa de atención del Transformer del curso, con sus proyecciones
#   `nn.Linear`. Ojo: `nn.Linear` guarda su matriz como `(salida, entrada)` y calcula `x Wᵀ`, así que nuestras
#   matrices, pensadas para vectores fila, entran traspuestas.
#
# Todo en `float64`, para que las únicas diferencias posibles sean de redondeo.

# %%
def iguales(a, b, tolerancia=1e-12):
    """¿Coinciden dos arrays o tensores hasta la tolerancia?"""
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    return a.shape == b.shape and bool(np.allclose(a, b, atol=tolerancia, rtol=0))


# Una cabeza: la frase de cinco palabras con SDPA.
a_tensor = lambda M: torch.tensor(M)[None, None]  # noqa: E731  [lote, cabezas, n, d] (una copia)
sdpa = scaled_dot_product_attention(a_tensor(Q_frase), a_tensor(K_frase), a_tensor(V_frase), is_causal=True)
print("NumPy frente a SDPA (una cabeza):                  ", iguales(sdpa[0, 0], O_frase))

# Cuatro cabezas: las matrices de la sección 6 cargadas en la capa de atención de llmlab.model.
config = LM.ModelConfig.gpt2_style(vocab_size=2048, d_model=4, n_heads=4, head_dim=2, n_layers=1, bias=False)
capa = LM.CausalSelfAttention(config, layer_idx=0).double().eval()
with torch.no_grad():
    for lineal, W in ((capa.q_proj, W_Q4), (capa.k_proj, W_K4), (capa.v_proj, W_V4), (capa.o_proj, W_O4)):
        lineal.weight.copy_(torch.from_numpy(W.T))
    x_frase = torch.tensor(X_frase)[None]  # [lote = 1, n = 5, d_model = 4]
    salida_legible, pesos_capa = capa(x_frase, need_weights=True)  # softmax explícita, guarda los pesos
    salida_rapida, _ = capa(x_frase)  # la misma capa, con SDPA por dentro
O_mh, A_mh = AT.multi_head_attention(X_frase, W_Q4, W_K4, W_V4, W_O4, 4, return_weights=True)
print("NumPy frente a CausalSelfAttention (salida):       ", iguales(salida_legible[0], O_mh))
print("NumPy frente a CausalSelfAttention (pesos, 4 cab.):", iguales(pesos_capa[0], A_mh))
print("CausalSelfAttention con y sin SDPA:                ", iguales(salida_rapida, salida_legible))
print("forma de los pesos de la capa:", tuple(pesos_capa.shape), " [lote, cabezas, consulta, clave]")

# %% [markdown]
# ### Dentro de un Transformer completo (opcional)
#
# Por último, un Transformer de `llmlab` de dos capas, recién inicializado (sin entrenar), procesa los IDs de
# la frase del capítulo 02, `[42, 981, 774, 42, 1503]`. Con `return_attention=True` devuelve los pesos de
# atención de cada capa. Los recalculamos con NumPy a partir de la entrada de la primera capa: los embeddings
# más las posiciones, normalizados (el modelo es *pre-norm*: normaliza antes de la atención).

# %%
torch.manual_seed(SEMILLA)
config_modelo = LM.ModelConfig.gpt2_style(vocab_size=2048, d_model=16, n_heads=2, n_layers=2, max_seq_len=16,
                                          bias=False)
modelo = LM.Transformer(config_modelo).double().eval()
ids = torch.tensor([[42, 981, 774, 42, 1503]])
with torch.no_grad():
    logits, atenciones = modelo(ids, return_attention=True)
    bloque = modelo.blocks[0]
    entrada_atencion = bloque.attn_norm(modelo.tok_emb(ids) + modelo.pos_emb(torch.arange(5)))[0].numpy()
W_q, W_k, W_v = (getattr(bloque.attn, nombre).weight.detach().numpy().T for nombre in ("q_proj", "k_proj", "v_proj"))
cabezas_q, cabezas_k, cabezas_v = (AT.split_heads(entrada_atencion @ W, 2) for W in (W_q, W_k, W_v))
_, pesos_numpy = AT.causal_attention(cabezas_q, cabezas_k, cabezas_v)
print("logits:", tuple(logits.shape), "  pesos por capa:", [tuple(a.shape) for a in atenciones])
print("pesos de la capa 0: NumPy frente al modelo, ¿iguales?", iguales(pesos_numpy, atenciones[0][0]))

fig, ejes = plt.subplots(1, 2, figsize=(11, 4.4))
for h, ax in enumerate(ejes):
    dibuja_mapa(ax, atenciones[0][0, h], palabras, palabras, f"modelo sin entrenar · capa 0, cabeza {h}",
                decimales=2, ocultar_futuro=True)
plt.tight_layout()
plt.show()

# %% [markdown]
# Sin entrenar, las consultas y las claves son casi nulas (pesos iniciales de desviación 0.02), las
# puntuaciones rondan el cero y cada fila reparte su atención casi a partes iguales: 1, 1/2, 1/3, 1/4, 1/5. Los
# patrones que se ven en los mapas de modelos reales (el artículo que mira a su sustantivo, el pronombre que
# busca su referente) no vienen de la fórmula: los aprende el entrenamiento.
#
# ## 11. Errores frecuentes
#
# Cada tropiezo del capítulo aparece aquí escrito y en marcha, y la misma clase de comprobación que corrige tus
# ejercicios lo caza. Son, precisamente, los casos que buscan las pruebas ocultas. Dos ya los has arreglado tú: la
# máscara que tapa también la diagonal (ejercicio 2) y las cabezas separadas con un `reshape` sin `transpose`
# (ejercicio 5).

# %%
detecta = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla


def softmax_estable(S, eje=-1):
    e = np.exp(S - S.max(axis=eje, keepdims=True))
    return e / e.sum(axis=eje, keepdims=True)


mascara_4 = AT.causal_mask(4)
QKt = Q_libro @ K_libro.T

# 1. Olvidar √d_k. En el libro apenas se nota (las puntuaciones son diminutas), pero se nota.
A_sin_raiz = softmax_estable(QKt + mascara_4)
print("diferencia máxima con el libro sin √d_k:", round(float(np.abs(A_sin_raiz - A_libro).max()), 4))
detecta("sin √d_k", lambda: check_close(A_sin_raiz, A_libro, atol=1e-3, what="A"))

# 2. Dividir por d_k en vez de por √d_k.
detecta("dividir por d_k", lambda: check_close(softmax_estable(QKt / 2 + mascara_4), A_libro, atol=1e-3, what="A"))

# 3. Con puntuaciones grandes, olvidar la escala lo cambia todo: los pesos se vuelven casi one-hot.
rng_e = np.random.default_rng(SEMILLA + 11)
Q_g, K_g = rng_e.normal(size=(2, 6, 64))
bien = AT.softmax_rows(Q_g @ K_g.T / 8 + AT.causal_mask(6))
mal = AT.softmax_rows(Q_g @ K_g.T + AT.causal_mask(6))
print(f"d_k = 64: peso máximo medio por fila {bien.max(-1).mean():.2f} con √d_k y {mal.max(-1).mean():.2f} sin él")
detecta("sin √d_k con d_k = 64", lambda: check_close(mal, bien, atol=1e-3, what="A"))

# 4. tril en vez de triu: se tapa el pasado y se deja ver el futuro.
detecta("tril en vez de triu", lambda: check_close(
    softmax_estable(S_libro + np.tril(np.full((4, 4), -1e9), k=-1)), A_libro, atol=1e-3, what="A"))

# 5. Poner ceros DESPUÉS de la softmax sin volver a normalizar: las filas ya no suman 1.
A_ceros = np.tril(softmax_estable(S_libro))
print("sumas de las filas con ceros después:", np.round(A_ceros.sum(-1), 4))
detecta("ceros después de la softmax", lambda: check_close(A_ceros.sum(-1), np.ones(4), atol=1e-3, what="sumas"))

# 6. Softmax por columnas (axis=0) o de la matriz entera.
detecta("softmax por columnas", lambda: check_close(
    softmax_estable(S_libro + mascara_4, eje=0), A_libro, atol=1e-3, what="A"))
e_todo = np.exp(S_libro + mascara_4 - (S_libro + mascara_4).max())
detecta("softmax de toda la matriz", lambda: check_close(e_todo / e_todo.sum(), A_libro, atol=1e-3, what="A"))

# 7. Mezclar las claves en vez de los valores (A @ K), o quedarse con el token más atendido (atención dura).
detecta("A @ K en vez de A @ V", lambda: check_close(A_libro @ K_libro, O_libro, atol=1e-3, what="O"))
O_dura = V_libro[A_libro.argmax(axis=-1)]
detecta("atención dura (argmax)", lambda: check_close(O_dura[1], O_libro[1], atol=1e-3, what="O[banco]"))

# 8. Saltarse las proyecciones (Q = K = X): las puntuaciones salen simétricas.
S_sin_proyectar = AT.attention_scores(X_frase, X_frase)
detecta("Q = K = X", lambda: check_true(not np.allclose(S_sin_proyectar, S_sin_proyectar.T),
                                        "S no debería ser simétrica"))

# 9. GQA con np.tile: la cabeza 1 usa la clave/valor 1 en vez de la 0.
rng_e = np.random.default_rng(SEMILLA + 12)
X_e, W_Qe, W_Oe = rng_e.normal(size=(5, 8)), rng_e.normal(size=(8, 8)), rng_e.normal(size=(8, 8))
W_Ke, W_Ve = rng_e.normal(size=(2, 8, 4))  # 2 cabezas de clave/valor de tamaño 2
gqa_bien = AT.grouped_query_attention(X_e, W_Qe, W_Ke, W_Ve, W_Oe, 4, 2)
W_Ke_tile = np.hstack([W_Ke[:, 0:2], W_Ke[:, 2:4], W_Ke[:, 0:2], W_Ke[:, 2:4]])  # orden 0, 1, 0, 1
W_Ve_tile = np.hstack([W_Ve[:, 0:2], W_Ve[:, 2:4], W_Ve[:, 0:2], W_Ve[:, 2:4]])
gqa_tile = AT.multi_head_attention(X_e, W_Qe, W_Ke_tile, W_Ve_tile, W_Oe, 4)
detecta("GQA con tile", lambda: check_close(gqa_tile, gqa_bien, atol=1e-3, what="GQA"))

# 10. Un −∞ literal en una fila totalmente tapada: −∞ − (−∞) = nan.
with np.errstate(invalid="ignore"):
    A_nan = softmax_estable(S_libro + np.triu(np.full((4, 4), -np.inf), k=0))
detecta("−∞ literal con una fila tapada", lambda: check_close(A_nan[0], [1, 0, 0, 0], atol=1e-3, what="A[El]"))

# 11. Una caché que guarda las claves pero no los valores (usa solo el v del token nuevo).
salidas_sin_v = []
claves = []
for x in X_frase:
    claves.append(x @ W_K)
    s = np.array(claves) @ (x @ W_Q) / math.sqrt(2)
    salidas_sin_v.append((x @ W_V) * softmax_estable(s).sum())
detecta("caché sin valores", lambda: check_close(np.array(salidas_sin_v), O_frase, atol=1e-3, what="decodificación"))

# %% [markdown]
# Y dos errores de lectura, que no se cazan con un `check` pero conviene tener presentes:
#
# - **Dar a Q, K y V un significado humano fijo.** «Consulta», «clave» y «valor» son una metáfora para
#   empezar; en un modelo real son proyecciones aprendidas sin etiquetas estables.
# - **Confundir mucha atención con mucha importancia.** Un peso alto en una cabeza de una capa dice que ahí se
#   mezcló información, no que ese token «explique» la respuesta: el resultado depende de decenas de capas,
#   de cabezas y de los MLP.
#
# ## 12. Pregunta para razonar (corrección manual · 3 puntos · ~15 min)
#
# Un compañero propone ahorrarse la máscara: «calculo la softmax normal y después pongo a cero el triángulo
# superior de `A`; total, sale una matriz triangular igual».
#
# En 6-10 líneas: (a) explica qué tiene de malo su propuesta, usando la fila de «banco» del libro (la fila sin
# máscara es `[0.2377, 0.2369, 0.2653, 0.2600]`): ¿cuánto sumaría y qué le pasaría a su salida? ¿Y si
# «préstamo» cambiara? (b) ¿Por qué la máscara se suma antes de la softmax, y por qué en código se usa `−1e9` y
# no `−∞`? (c) ¿Qué variante (autoatención, autoatención enmascarada o atención cruzada) usa cada uno de estos:
# BERT, GPT, el decodificador de un traductor cuando consulta la frase original, y un modelo de visión y
# lenguaje cuando el texto mira los parches de la imagen?
#
# **Rúbrica (3 puntos):** (a) 1 punto: la fila de «banco» suma 0.4747, su salida encoge, y el denominador sigue
# incluyendo el futuro (si «préstamo» cambia, cambia «banco»: ya no es causal); (b) 1 punto: `e^{−∞} = 0` hace que
# cada fila se normalice solo sobre lo permitido, y `−1e9` evita el `nan` de una fila tapada entera; (c) 1 punto: las
# cuatro variantes bien asignadas (medio punto si hay un fallo). Más de 10 líneas resta medio punto.

# %% [markdown] nbgrader={"grade_id": "respuesta_mascara", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# (a) Si se anulan las columnas futuras después de la softmax, la fila de «banco» queda `[0.2377, 0.2369, 0, 0]`
# y suma 0.4747: ya no es una distribución, y su salida es una mezcla encogida a menos de la mitad. Peor aún,
# el denominador de la softmax incluía las puntuaciones de «aprobó» y «préstamo», así que si «préstamo» cambia,
# cambia la salida de «banco»: el futuro se sigue colando y el modelo no sería causal (ni podría usar caché KV).
# Si además se renormaliza, el resultado coincide con la máscara, pero se ha calculado y exponenciado trabajo
# inútil.
#
# (b) Sumar la máscara antes hace que `e^{−∞} = 0`: las posiciones futuras desaparecen del numerador y del
# denominador, y cada fila se normaliza sola sobre lo permitido. En código se usa `−1e9` porque da el mismo
# cero tras la exponencial y no produce `nan` (`−∞ − (−∞)`) si una fila quedara entera tapada.
#
# (c) BERT: autoatención (sin máscara, cada palabra ve toda la frase). GPT: autoatención enmascarada. El
# traductor que consulta la frase original: atención cruzada. El texto que mira la imagen en un modelo de
# visión y lenguaje: atención cruzada.
# ### END SOLUTION

# %% [markdown]
# ## Resumen
#
# - Consultas, claves y valores salen de la misma `X` con tres matrices aprendidas: `Q = XW_Q`, `K = XW_K`,
#   `V = XW_V`. Que `W_Q ≠ W_K` es lo que da dirección a las relaciones.
# - Las puntuaciones `S = QKᵀ/√d_k` comparan cada consulta con cada clave; el `√d_k` evita que la softmax se
#   sature cuando las cabezas son grandes.
# - La máscara causal aditiva (0 hasta la diagonal, `−1e9` encima) se suma **antes** de la softmax por filas, que
#   debe ser estable; es la misma que la booleana «puede mirar» del lab 02. En el libro, `A[banco] = [0.501, 0.499, 0, 0]` y `O[préstamo] = [0.383, 0.231]`.
# - `O = AV`: Q y K deciden cuánto se mira, V decide qué se lleva. La primera salida es su propio valor y
#   ninguna salida cambia si cambia un token posterior.
# - Multi-cabeza: `reshape` + `transpose` para separar las cabezas (un `reshape` solo mezcla tokens), atención en
#   cada una, concatenar y `W_O`.
#   GQA y MQA comparten claves y valores entre consultas (cabeza `h` → grupo `h // (H/H_kv)`) y dividen la
#   caché KV: de 16 GiB a 4 GiB con 32k tokens en un modelo tipo Llama 3 8B.
# - La caché KV existe gracias a la máscara: cada paso calcula solo `q, k, v` del token nuevo y da exactamente
#   las filas de la atención completa.
# - Autoatención (BERT), autoatención enmascarada (GPT) y atención cruzada (traductor, texto mirando una
#   imagen) son la misma cuenta con otra máscara u otra fuente de K y V. PyTorch, su SDPA y `llmlab.model`
#   calculan exactamente lo mismo que tus funciones.
#
# ## Para ir más allá (opcional, sin nota y fuera del tiempo estimado)
#
# 1. **La caché, cronometrada.** Genera `n` tokens de dos maneras: con tu `KVCache` y `decode_step`, y
#    recalculando `causal_attention` sobre todo el prefijo en cada paso, para `n = 64` … 1024. Mide tiempo de CPU
#    (`time.process_time`). Para cuando tengas la figura log-log de los dos tiempos y sus pendientes.
# 2. **De MHA a GQA sin reentrenar.** Con 8 cabezas de consulta, construye las claves y valores de 4, 2 y 1
#    grupos promediando las cabezas KV de cada grupo (la receta del artículo de GQA para convertir un modelo ya
#    entrenado) y compara la salida de tu `grouped_query_attention` con la de MHA (norma relativa de la
#    diferencia). Para cuando tengas la tabla de error frente a cabezas KV, junto a lo que ocupa la caché.
# 3. **Relleno en un lote.** Añade a `causal_attention` una máscara de relleno para un lote de dos secuencias de
#    longitudes distintas. Para cuando compruebes que las salidas de los tokens reales son las de cada secuencia
#    sola, con el relleno a la izquierda y a la derecha.
#
# ## Para saber más
#
# - A. Vaswani et al. (2017), *Attention is all you need*: la fórmula `softmax(QKᵀ/√d_k)V`, la máscara y la
#   atención multi-cabeza.
# - J. Alammar (2018), *The Illustrated Transformer*: Q, K y V dibujados paso a paso.
# - A. Rush (2018), *The Annotated Transformer*: el artículo original línea a línea, con su código.
# - A. Cho et al. (2025), *Transformer Explainer*: GPT-2 en el navegador, con los pesos de atención a la vista.
# - N. Shazeer (2019), *Fast transformer decoding: one write-head is all you need* (MQA), y J. Ainslie et al.
#   (2023), *GQA: training generalized multi-query transformer models from multi-head checkpoints*.
# - J. Devlin et al. (2019), *BERT*, y T. Brown et al. (2020), *Language models are few-shot learners*: un
#   codificador bidireccional frente a un decodificador causal.
# - En `llmlab`: `llmlab.attention` tiene las versiones de referencia de todo lo que has escrito hoy, y
#   `llmlab.model` la capa `CausalSelfAttention` con caché KV que usan los labs siguientes. En el lab 04 la
#   salida de la atención pasa por el MLP y termina convertida en logits.
