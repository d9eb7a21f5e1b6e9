# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 05 · Arquitecturas modernas: expertos, votos, parches y memoria lineal
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab05-arquitecturas-modernas/lab05-arquitecturas-modernas.ipynb)
#
# **Capítulo 05** de *Facsímil 03 · Arquitecturas y modelos* · duración estimada: **4 horas y media**
# (84 min de lectura y figuras y 3 h 6 min de ejercicios y de la pregunta razonada; cada ejercicio indica su
# tiempo y su dificultad; repetir el experimento de la sección 4 en tu máquina y las extensiones «Para ir más allá» son
# opcionales y quedan fuera de la cuenta)
#
# Hasta ahora has construido un Transformer «clásico»: cada token atraviesa todas sus capas y todos sus
# pesos. Los modelos de hoy añaden tres ideas que cambian la cuenta de lo que cuesta y de lo que pueden
# hacer. Una mezcla de expertos (MoE) guarda muchos MLP pero solo usa unos pocos por token. Un modelo que
# «razona» gasta más cómputo al responder: prueba varias veces, vota y comprueba. Un modelo multimodal
# convierte imágenes en vectores que se parecen a tokens. Y al lado del Transformer vuelven las redes con
# estado, cuyo coste crece en línea recta con la longitud del texto. En este laboratorio vas a escribir el
# corazón de cada una con NumPy, a medir qué pasa cuando un enrutador se desequilibra y a contar, al
# parámetro, cuánto pesan y cuánto gastan por token los MoE de 2025.
#
# **Al terminar sabrás:**
#
# 1. situar una técnica en su palanca (capacidad, proceso o entrada) y un nombre en su nivel (arquitectura,
#    modelo entrenado o sistema);
# 2. escribir el enrutador top-k de un MoE y la mezcla de expertos que llama solo a los elegidos;
# 3. separar parámetros totales y activos, y deducir la parte compartida y la de cada experto;
# 4. medir el reparto de tokens entre expertos y calcular la pérdida auxiliar que lo equilibra;
# 5. distinguir cadena de pensamiento, autoconsistencia, árbol de pensamientos y verificación; sacar la
#    respuesta final de una cadena, votar entre varias, saber cuánto ayuda votar y verificar un plan;
# 6. comparar imágenes y textos con la similitud coseno, trocear una imagen en parches de ViT y seguir sus
#    formas a través del proyector hasta los tokens del LLM;
# 7. medir por qué la atención crece como `n²` y una recurrencia lineal como `n`.
#
# **Cómo se trabaja.** Escribe tu código en las celdas marcadas con `ESCRIBE TU CÓDIGO AQUÍ`; en los ejercicios
# «encuentra el error» la celda ya trae una función con un fallo típico del capítulo que tienes que arreglar. La
# celda de comprobación que va debajo te dice en español qué falla. Antes de cada comprobación hay pistas plegadas
# por si te atascas. Al corregir se ejecutan además pruebas ocultas con casos que no ves (aleatorios,
# empates, valores enormes, bordes y los errores típicos del capítulo): tu función tiene que cumplir el
# enunciado, no solo los ejemplos. No llames a las funciones de `llmlab` que hacen lo mismo que el
# ejercicio (las comprobaciones lo detectan) y no modifiques las celdas de comprobación.
#
# **Predecir y medir.** Antes del experimento de la sección 4 una celda «Tu predicción» te pide apuntar en una
# línea lo que esperas; la celda que mide la imprime antes de sus números. No puntúa: sirve para que compares
# tu intuición con la medida.
#
# **Números.** Como en Python, el separador decimal es el punto (`0.721`); los miles se separan con un
# espacio fino (`46 702 792 704`). Las memorias van en GB decimales (1 GB = 10⁹ bytes).

# %% nbgrader={"grade_id": "preparacion", "locked": true}
# Preparación: ejecuta esta celda primero y no la modifiques.
import sys
import subprocess

if "google.colab" in sys.modules:  # solo en Colab: instala llmlab desde el repositorio del curso
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "git+https://github.com/llmlab-curso/llmlab"],
        check=True,
    )

import itertools
import math
import re
import time
from collections import Counter

import matplotlib.pyplot as plt
import numpy as np
import torch

from llmlab import attention as AT
from llmlab import cost as C
from llmlab import families as FAM
from llmlab import moe as MOE
from llmlab import multimodal as MM
from llmlab import reasoning as RZ
from llmlab import recurrence as REC
from llmlab.checks import (check_array, check_close, check_equal, check_list, check_number, check_raises,
                           check_true, checked_call, hidden, ok, reference_blocked, show_caught)
from llmlab.checks import EjercicioSinHacer  # lo que lanza un ejercicio que aún no has hecho
from llmlab.model import ModelConfig, Transformer, count_parameters
from llmlab.moe_balance import load_results, run_experiment, seed_spread
from llmlab.spanish import fmt_int, fmt_num, fmt_pct

# Lo que las comprobaciones no te dejan llamar: las versiones de llmlab de cada ejercicio.
REFERENCIAS = (
    FAM.lever_of, FAM.level_of, FAM.family_of, MOE.route, MOE.top_k_renormalized, MOE.router_probs,
    MOE.moe_forward, MOE.moe_param_counts, MOE.solve_moe_split, MOE.expert_load, MOE.load_balancing_loss,
    RZ.self_consistency, RZ.extract_number, RZ.vote_over_rationales, RZ.majority_vote_accuracy, RZ.plan_start_time,
    MM.cosine_similarity, MM.zero_shot_rank, MM.patchify, REC.linear_recurrence,
)

torch.set_num_threads(1)  # tensores pequeños: un hilo basta y los números no dependen de la máquina
plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3
np.set_printoptions(precision=4, suppress=True)

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar: el mismo cuaderno da siempre los mismos números
N_TOKENS_CARGA = 10_000  # tokens sintéticos del histograma de carga (sección 4)
ENTRENAR_EN_VIVO = False  # True: repite el experimento de balanceo en tu máquina (minutos); False: usa el guardado
PASOS_EN_VIVO = 60  # pasos de entrenamiento de cada modelo si ENTRENAR_EN_VIVO
REPETICIONES_VOTO = 4000  # simulaciones por punto en la curva del voto por mayoría (sección 5)
LONGITUDES = [128, 256, 512, 1024, 2048]  # longitudes de secuencia en la medida n² frente a n (sección 7)

# %% [markdown]
# ## 1. Tres palancas y tres niveles
#
# El capítulo ordena la «modernidad» de un modelo en tres palancas. La **capacidad**: guardar más
# conocimiento sin pagarlo entero en cada token (una mezcla de expertos). El **proceso**: dedicar más cómputo
# a los problemas de varios pasos (cadenas de pensamiento, varias muestras que votan, verificación con
# herramientas). La **entrada**: trabajar con algo más que texto (imágenes, audio, acciones).
#
# Y distingue tres niveles que se confunden a menudo. Una **arquitectura neuronal** es una forma de red:
# el Transformer, una CNN, una RNN, un MoE, Mamba o un modelo de difusión. Un **modelo entrenado** es esa forma con unos pesos concretos
# (BERT, GPT-2, T5, Mixtral, CLIP). Una **arquitectura de sistema** conecta modelos, datos y herramientas (RAG,
# un agente con herramientas, una cadena multimodal, un modelo local cuantizado). RAG, por ejemplo, no es una
# capa de la red: es un buscador que le pasa documentos al modelo.
#
# El Transformer es una familia entre varias. Las que conviene reconocer por su nombre, con la idea que las
# define:
#
# | familia | idea central | dónde aparece | para recordar |
# |---|---|---|---|
# | MLP | capas densas que transforman un vector | datos tabulares; dentro de cada bloque Transformer | no mezcla posiciones |
# | CNN | filtros locales que recorren la entrada | imagen, audio, visión industrial | rinde cuando importa el vecindario |
# | RNN, LSTM, GRU | leen en orden y arrastran un estado | series temporales, el PLN de antes del Transformer | referencia histórica; hoy compite con Transformer y SSM |
# | Transformer | la atención mezcla información entre posiciones | LLM, traducción, visión, multimodal | domina el lenguaje, pero no es la única |
# | GNN | cada nodo de un grafo intercambia mensajes con sus vecinos | química, redes sociales o de transporte, grafos de conocimiento | cuando los datos ya son un grafo |
# | autocodificador, VAE | comprimir en un espacio latente y reconstruir | generación, compresión, representaciones | de aquí sale la idea de espacio latente |
# | difusión | aprender a quitar ruido paso a paso | imagen, audio, vídeo | genera deshaciendo un proceso que añade ruido |
# | SSM (Mamba) | un estado de tamaño fijo que se actualiza con cada token | secuencias largas, lengua, audio, señales | coste `O(n)`; a menudo en híbridos (sección 7) |
#
# Las arquitecturas de sistema, a su vez, se reconocen por lo que juntan:
#
# | sistema | qué junta | cuándo tiene sentido |
# |---|---|---|
# | RAG | buscador, base de documentos, generador y, a menudo, citas o validadores | conocimiento que cambia o que es privado |
# | agente con herramientas | el modelo y las herramientas que puede llamar, con sus permisos, una memoria, quien evalúa y quien orquesta | tareas de varios pasos con acciones fuera del modelo |
# | cadena multimodal | codificadores de imagen, audio o documentos, conectores y un LLM | facturas, fotos, capturas, vídeo, voz |
# | modelo local cuantizado | pesos comprimidos, un motor local y los límites del hardware | privacidad, coste, *edge*, latencia local |
#
# Un caso de soporte muestra por qué conviene separar niveles. Un cliente escribe que compró unos auriculares
# ayer, que le han llegado rotos y que quiere cambiarlos antes del viernes porque son un regalo. Cada trozo del
# mensaje pide una pieza distinta del sistema, no del modelo:
#
# | trozo del mensaje | qué pide |
# |---|---|
# | «han llegado rotos» | clasificar la incidencia: producto o envío |
# | «cambiarlos» | consultar la política de cambios y devoluciones, un documento que cambia (RAG) |
# | «antes del viernes» | un plazo con fecha, que se calcula y se comprueba (verificación) |
# | «son un regalo» | el tono: empatía y una prioridad percibida |
#
# Si además adjunta una foto de la caja, entra en juego la tercera palanca.
#
# Dentro de los Transformer de lenguaje hay familias según qué leen y qué generan:
#
# | familia | lee | genera | ejemplo |
# |---|---|---|---|
# | solo codificador | todo el texto, en ambos sentidos | (clasifica, extrae, representa) | BERT |
# | solo decodificador | solo el pasado | el token siguiente | GPT-2 |
# | codificador-decodificador | el codificador lee, el decodificador escribe | texto condicionado | T5, BART |
# | vision transformer | parches de imagen como tokens | según la tarea | ViT |
# | moe | atención más expertos en lugar del MLP | como su base, con cómputo disperso | Switch Transformer, Mixtral |
# | contexto largo | cambia atención, memoria o estado | depende | Mamba |
#
# ### Ejercicio 1 · `palanca`, `nivel` y `familia` (3 puntos · dificultad ★☆☆ · ~15 min)
#
# Escribe tres funciones que reciben un nombre (`str`, sin importar mayúsculas ni espacios, tabuladores o saltos de
# línea alrededor) y devuelven su etiqueta (`str`, en minúsculas y escrita exactamente como aquí):
#
# - `palanca(tecnica)` → `"capacidad"`, `"proceso"` o `"entrada"`, para: mezcla de expertos, enrutador top-k,
#   parámetros activos, cadena de pensamiento, autoconsistencia, árbol de pensamientos, verificación con
#   herramientas, cómputo en inferencia, parches de imagen, alineación contrastiva, conector visual, audio
#   como tokens.
# - `nivel(nombre)` → `"arquitectura neuronal"`, `"modelo entrenado"` o `"arquitectura de sistema"`, para:
#   Transformer, CNN, RNN, MoE, Mamba, difusión, BERT, GPT-2, T5, Mixtral, CLIP, RAG, agente con herramientas,
#   cadena multimodal, modelo local cuantizado.
# - `familia(modelo)` → `"solo codificador"`, `"solo decodificador"`, `"codificador-decodificador"`,
#   `"vision transformer"`, `"moe"` o `"contexto largo"`, para: BERT, GPT-2, T5, BART, ViT, Switch Transformer,
#   Mixtral, Mamba.
#
# Un diccionario por función y `nombre.strip().lower()` bastan.

# %% nbgrader={"grade_id": "quiz", "solution": true}
def palanca(tecnica):
    """La palanca del capítulo 05 que mueve una técnica."""
    ### BEGIN SOLUTION
    tabla = {
        "mezcla de expertos": "capacidad", "enrutador top-k": "capacidad", "parámetros activos": "capacidad",
        "cadena de pensamiento": "proceso", "autoconsistencia": "proceso", "árbol de pensamientos": "proceso",
        "verificación con herramientas": "proceso", "cómputo en inferencia": "proceso",
        "parches de imagen": "entrada", "alineación contrastiva": "entrada", "conector visual": "entrada",
        "audio como tokens": "entrada",
    }
    return tabla[tecnica.strip().lower()]
    ### END SOLUTION


def nivel(nombre):
    """Arquitectura neuronal, modelo entrenado o arquitectura de sistema."""
    ### BEGIN SOLUTION
    arquitecturas = ["transformer", "cnn", "rnn", "moe", "mamba", "difusión"]
    modelos = ["bert", "gpt-2", "t5", "mixtral", "clip"]
    sistemas = ["rag", "agente con herramientas", "cadena multimodal", "modelo local cuantizado"]
    clave = nombre.strip().lower()
    if clave in arquitecturas:
        return "arquitectura neuronal"
    if clave in modelos:
        return "modelo entrenado"
    if clave in sistemas:
        return "arquitectura de sistema"
    raise KeyError(nombre)
    ### END SOLUTION


def familia(modelo):
    """La familia de Transformer de un modelo conocido."""
    ### BEGIN SOLUTION
    tabla = {
        "bert": "solo codificador", "gpt-2": "solo decodificador", "t5": "codificador-decodificador",
        "bart": "codificador-decodificador", "vit": "vision transformer", "switch transformer": "moe",
        "mixtral": "moe", "mamba": "contexto largo",
    }
    return tabla[modelo.strip().lower()]
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Una palanca dice qué gana el modelo: más conocimiento almacenado (capacidad), más pasos al responder
# (proceso) o nuevos tipos de dato (entrada). Un nivel dice qué clase de cosa es el nombre: ¿se puede
# descargar con pesos (modelo), es solo una forma de red (arquitectura) o une varias piezas (sistema)?
# </details>
#
# <details><summary>Pista 2</summary>
#
# MoE es una arquitectura; Mixtral, un modelo entrenado con esa arquitectura. CLIP es un modelo con pesos. La
# autoconsistencia gasta más cómputo al responder. Normaliza la entrada con `.strip().lower()` antes de buscar.
# </details>

# %% nbgrader={"grade_id": "test_quiz", "grade": true, "points": 3}
# Comprobación del ejercicio 1
with reference_blocked(*REFERENCIAS):
    check_equal(checked_call(palanca, "mezcla de expertos"), "capacidad", what="palanca('mezcla de expertos')")
    check_equal(checked_call(palanca, "Autoconsistencia"), "proceso", what="palanca('Autoconsistencia')",
                hint="ignora mayúsculas: usa .lower()")
    check_equal(checked_call(nivel, "Transformer"), "arquitectura neuronal", what="nivel('Transformer')")
    check_equal(checked_call(nivel, " GPT-2 "), "modelo entrenado", what="nivel(' GPT-2 ')",
                hint="quita los espacios de alrededor con .strip()")
    check_equal(checked_call(familia, "BERT"), "solo codificador", what="familia('BERT')")
    check_equal(checked_call(familia, "gpt-2"), "solo decodificador", what="familia('gpt-2')")
ok("las tres funciones responden con las etiquetas del capítulo")
### BEGIN HIDDEN TESTS
with hidden("palanca, nivel y familia: todos los elementos de las tablas"):
    tablas = [(palanca, FAM.LEVERS), (nivel, FAM.LEVELS), (familia, FAM.FAMILIES)]
    with reference_blocked(*REFERENCIAS):
        for funcion, tabla in tablas:
            for i, (nombre, etiqueta) in enumerate(tabla.items()):
                variante = [nombre, nombre.upper(), f"  {nombre.title()} "][i % 3]
                check_equal(checked_call(funcion, variante), etiqueta, what=f"{funcion.__name__}({variante!r})")
        for funcion, nombre, etiqueta in [(palanca, "\tAutoconsistencia\n", "proceso"), (nivel, "\nMoE\t", "arquitectura neuronal"),
                                          (familia, " \tViT\n", "vision transformer")]:
            check_equal(checked_call(funcion, nombre), etiqueta, what=f"{funcion.__name__}({nombre!r})")
### END HIDDEN TESTS

# %% [markdown]
# ## 2. El enrutador de una mezcla de expertos
#
# En un bloque Transformer normal cada token pasa por **el** MLP. En un bloque MoE hay `n` MLP, los
# *expertos*, y una capa diminuta, el **enrutador**, decide para cada token cuáles usar:
#
# $$s = W_r\,x, \qquad g = \mathrm{softmax}(s), \qquad C_k = \mathrm{top}_k(g), \qquad
# \mathrm{MoE}(x) = \sum_{i \in C_k} \frac{g_i}{\sum_{j \in C_k} g_j}\,E_i(x)$$
#
# `W_r` tiene una fila por experto (forma `(n, d)`), así que `s` tiene una puntuación por experto. La
# softmax las convierte en probabilidades, se quedan las `k` mayores y se **renormalizan** para que los pesos
# de los elegidos sumen 1. Renormalizar así es lo mismo que hacer la softmax solo sobre los logits elegidos.
#
# El ejemplo del capítulo: para un token, el enrutador da `g = [0.62, 0.24, 0.09, 0.05]` a los expertos
# E1…E4, y con `k = 2` se queda con E1 y E2:

# %%
g_libro = np.array([0.62, 0.24, 0.09, 0.05])
elegidos = g_libro[:2]
print("suma de los dos elegidos:", round(float(elegidos.sum()), 2))
print("pesos renormalizados:", np.round(elegidos / elegidos.sum(), 3), " → MoE(x) ≈ 0.721·E1(x) + 0.279·E2(x)")

# %% [markdown]
# El 0.62 de E1 se convierte en 0.721 porque E3 y E4 ya no cuentan: su 14 % se reparte entre los elegidos en
# la misma proporción. Para reproducirlo con un enrutador «de verdad» basta un token `x = [1]` y una
# `W_r` cuya única columna sea `log g` (la softmax de `log g` es `g`).
#
# ### Ejercicio 2 · `enrutar` (3 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `enrutar(x, W_r, k=2)` para **un** token:
#
# - `x` es un vector de longitud `d` (array de NumPy o lista) y `W_r` una matriz `(n_expertos, d)`;
# - calcula los logits `W_r @ x`, su softmax **estable** (resta el máximo antes de `np.exp`), elige los `k`
#   expertos de mayor probabilidad y renormaliza sus probabilidades;
# - devuelve una tupla `(indices, pesos)`: dos arrays de NumPy de longitud `k`, `indices` de enteros en orden
#   de peso **descendente** (si dos expertos empatan, va primero el de índice menor) y `pesos` de floats que
#   suman 1;
# - lanza `ValueError` si `k < 1`, si `k > n_expertos` o si `W_r` no tiene `d` columnas.
#
# Cuidado con `np.argsort(g)[::-1]`: ordena bien, pero en los empates pone primero el índice **mayor**.
# `np.argsort(-g, kind="stable")` resuelve las dos cosas.

# %% nbgrader={"grade_id": "enrutar", "solution": true}
def enrutar(x, W_r, k=2):
    """Enrutador top-k de un token: (índices de los k expertos, pesos renormalizados)."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    W_r = np.asarray(W_r, dtype=float)
    if W_r.ndim != 2 or W_r.shape[1] != x.shape[0]:
        raise ValueError("W_r debe tener forma (n_expertos, d) con d = len(x)")
    if k < 1 or k > W_r.shape[0]:
        raise ValueError("k debe estar entre 1 y n_expertos")
    s = W_r @ x
    g = np.exp(s - s.max())
    g = g / g.sum()
    indices = np.argsort(-g, kind="stable")[:k]
    pesos = g[indices] / g[indices].sum()
    return indices, pesos
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Sigue la fórmula de arriba paso a paso: logits, probabilidades, los `k` mayores y renormalizar. Comprueba `k`
# y las formas antes de calcular nada. Si te sale `nan` con logits como `[1000, 999]`, te falta restar el máximo.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Para ordenar de mayor a menor sin perder el orden de los empates, ordena `-g` con un orden estable
# (`kind="stable"`) y quédate con los `k` primeros. Si con `g` empatadas te salen los índices `[3, 2]` en vez
# de `[0, 1]`, estás invirtiendo un `argsort` ascendente.
# </details>

# %% nbgrader={"grade_id": "test_enrutar", "grade": true, "points": 3}
# Comprobación del ejercicio 2
W_libro = np.log(g_libro)[:, None]  # una columna: log g; con x = [1], softmax(W_r x) = g
with reference_blocked(*REFERENCIAS):
    idx, pesos = checked_call(enrutar, np.array([1.0]), W_libro, 2)
    check_array(idx, what="los índices", dtype="int", shape=(2,))
    check_array(pesos, what="los pesos", dtype="float", shape=(2,))
    check_equal(idx, [0, 1], what="los expertos elegidos del ejemplo", hint="E1 y E2 son los índices 0 y 1")
    check_close(pesos, [0.720930, 0.279070], atol=1e-6, what="los pesos renormalizados",  # 0.62/0.86, 0.24/0.86
                hint="divide las probabilidades elegidas por su suma")
    idx3, pesos3 = checked_call(enrutar, [1.0], W_libro.tolist(), 3)
    check_close(pesos3, [0.652632, 0.252632, 0.094737], atol=1e-6, what="top-3 del ejemplo (entradas como listas)")
    idx_g, pesos_g = checked_call(enrutar, np.array([1.0]), np.array([[1000.0], [999.0], [-5.0]]), 2)
    check_close(pesos_g, [0.731059, 0.268941], atol=1e-6, what="logits enormes [1000, 999, -5]",
                hint="resta el máximo de los logits antes de np.exp")
check_raises(lambda: enrutar([1.0], W_libro.tolist(), 0), ValueError, what="enrutar con k = 0",
             hint="el enunciado pide este ValueError: lanzarlo es parte del ejercicio y también puntúa")
ok("el enrutador reproduce el 0.721 / 0.279 del capítulo")
### BEGIN HIDDEN TESTS
with hidden("enrutar: casos aleatorios, empates, permutaciones de W_r y errores"):
    rng_t = np.random.default_rng(501)
    casos = []
    for n, d, k in [(4, 3, 2), (8, 5, 1), (6, 16, 4), (5, 2, 5), (16, 8, 3)]:
        x_h, W_h = rng_t.normal(0, 3, size=d), rng_t.normal(0, 3, size=(n, d))
        casos.append((x_h, W_h, k, MOE.route(x_h, W_h, k)))
    perm = rng_t.permutation(8)
    x_p, W_p = rng_t.normal(size=4), rng_t.normal(size=(8, 4))
    with reference_blocked(*REFERENCIAS):
        for x_h, W_h, k, (idx_e, pesos_e) in casos:
            resultado = checked_call(enrutar, x_h, W_h, k)
            check_true(isinstance(resultado, tuple) and len(resultado) == 2, "enrutar debe devolver una tupla (indices, pesos)")
            idx_h, pesos_h = resultado
            check_array(idx_h, dtype="int", shape=(k,))
            check_equal(idx_h, idx_e)
            check_close(pesos_h, pesos_e, atol=1e-6, rtol=1e-5)
        # empates: el índice menor primero
        idx_h, pesos_h = checked_call(enrutar, np.ones(2), np.ones((4, 2)), 2)
        check_equal(idx_h, [0, 1])
        check_close(pesos_h, [0.5, 0.5], atol=1e-6)
        idx_h, _ = checked_call(enrutar, np.array([1.0]), np.array([[0.0], [3.0], [3.0], [1.0]]), 3)
        check_equal(idx_h, [1, 2, 3])
        # permutar las filas de W_r permuta la elección de la misma forma (nada de reglas fijas)
        idx_a, pesos_a = checked_call(enrutar, x_p, W_p, 3)
        idx_b, pesos_b = checked_call(enrutar, x_p, W_p[perm], 3)
        check_equal(perm[np.asarray(idx_b)], idx_a)
        check_close(pesos_b, pesos_a, atol=1e-6)
        # logits enormes
        check_close(checked_call(enrutar, np.array([1.0]), np.array([[-400.0], [500.0], [499.0]]), 2)[1],
                    [0.731059, 0.268941], atol=1e-6)
        for k_mal in (0, 5):
            check_raises(lambda: enrutar(np.ones(3), np.ones((4, 3)), k_mal), ValueError)
        check_raises(lambda: enrutar(np.ones(3), np.ones((4, 2)), 2), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# A la izquierda, las probabilidades del enrutador; a la derecha, con qué peso entra cada experto en la
# mezcla. Los que no se eligen (en gris) no se calculan: ese es todo el ahorro.

# %%
idx_dibujo, pesos_dibujo = MOE.route([1.0], W_libro, 2)
mezcla = np.zeros(4)
mezcla[idx_dibujo] = pesos_dibujo
nombres_expertos = ["E1", "E2", "E3", "E4"]
colores = ["tab:blue" if i in idx_dibujo else "lightgrey" for i in range(4)]
fig, (izq, der) = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
izq.bar(nombres_expertos, g_libro, color=colores)
izq.set_title("Probabilidades del enrutador g")
der.bar(nombres_expertos, mezcla, color=colores)
der.set_title("Pesos en la mezcla (top-2 renormalizado)")
for ax, valores in ((izq, g_libro), (der, mezcla)):
    for i, v in enumerate(valores):
        ax.text(i, v + 0.015, f"{v:.3f}", ha="center")
izq.set_ylabel("peso")
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Ejercicio 3 · `mezcla_moe` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `mezcla_moe(x, W_r, expertos, k=2)`, la salida de la capa MoE para un token: `expertos` es una lista
# de `n` funciones (cada una recibe un vector y devuelve un vector) y el resultado es
# `Σ_{i elegido} peso_i · expertos[i](x)`, un array de NumPy de floats. Puedes usar tu `enrutar`.
#
# La regla de oro: **solo se llama a los `k` expertos elegidos**. Un MoE que calcula los `n` expertos y luego
# multiplica los sobrantes por cero da el mismo número, pero cuesta como el modelo denso y se pierde todo el
# ahorro. La comprobación cuenta las llamadas.

# %% nbgrader={"grade_id": "mezcla_moe", "solution": true}
def mezcla_moe(x, W_r, expertos, k=2):
    """Salida MoE de un token: suma de los k expertos elegidos por sus pesos renormalizados."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    indices, pesos = enrutar(x, W_r, k)
    salida = 0.0
    for i, peso in zip(indices, pesos):
        salida = salida + peso * np.asarray(expertos[i](x), dtype=float)
    return np.asarray(salida, dtype=float)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Reutiliza tu `enrutar`: te dice a qué expertos llamar y con qué peso. Llamar al experto `i` es
# `expertos[i](x)`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Un bucle sobre las parejas (índice, peso) que acumula el peso por la salida de su experto. Si la comprobación
# dice que has llamado a más expertos de la cuenta, no recorras `range(len(expertos))`.
# </details>

# %% nbgrader={"grade_id": "test_mezcla_moe", "grade": true, "points": 2}
# Comprobación del ejercicio 3
llamadas = []


def experto_lineal(i, A):
    def experto(v):
        llamadas.append(i)
        return A @ v
    return experto


A_expertos = [np.diag([1.0, 2.0]) * (i + 1) for i in range(4)]  # E_i(x) = (i+1)·diag(1, 2)·x
expertos_libro = [experto_lineal(i, A) for i, A in enumerate(A_expertos)]
W_dos = np.hstack([np.log(g_libro)[:, None], np.zeros((4, 1))])  # x = [1, 0.5]: los logits siguen siendo log g
with reference_blocked(*REFERENCIAS):
    y = checked_call(mezcla_moe, np.array([1.0, 0.5]), W_dos, expertos_libro, 2)
    check_array(y, what="la salida", dtype="float", shape=(2,))
    esperado = 0.720930 * (A_expertos[0] @ [1.0, 0.5]) + 0.279070 * (A_expertos[1] @ [1.0, 0.5])
    check_close(y, esperado, atol=1e-5, what="0.721·E1(x) + 0.279·E2(x)")
    check_equal(sorted(llamadas), [0, 1], what="los expertos a los que has llamado",
                hint="llama solo a los k elegidos: es lo que hace barato a un MoE")
ok("la mezcla usa solo E1 y E2, con 0.721 y 0.279")
### BEGIN HIDDEN TESTS
with hidden("mezcla_moe: expertos aleatorios, número de llamadas y expertos idénticos"):
    rng_t = np.random.default_rng(502)
    casos = []
    for n, d, k in [(4, 3, 2), (6, 5, 3), (5, 4, 1), (3, 2, 3)]:
        mats = [rng_t.normal(size=(d, d)) for _ in range(n)]
        x_h, W_h = rng_t.normal(0, 2, size=d), rng_t.normal(0, 2, size=(n, d))
        casos.append((x_h, W_h, mats, k, MOE.moe_forward(x_h, W_h, [lambda v, M=M: M @ v for M in mats], k)))
    with reference_blocked(*REFERENCIAS):
        for x_h, W_h, mats, k, esperado in casos:
            llamadas.clear()
            obtenido = checked_call(mezcla_moe, x_h, W_h, [experto_lineal(i, M) for i, M in enumerate(mats)], k)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, atol=1e-6, rtol=1e-5)
            check_equal(len(llamadas), k)
        M = rng_t.normal(size=(3, 3))
        x_h, W_h = rng_t.normal(size=3), rng_t.normal(size=(4, 3))
        check_close(checked_call(mezcla_moe, x_h, W_h, [lambda v: M @ v] * 4, 4), M @ x_h, atol=1e-6, rtol=1e-5)
        check_close(checked_call(mezcla_moe, x_h.tolist(), W_h, [lambda v: list(M @ v)] * 4, 2), M @ x_h,
                    atol=1e-6, rtol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# Lo mismo, a escala de red: `llmlab.model` sabe construir un Transformer cuyos MLP son capas MoE
# (`llmlab.moe.SparseMoE`), con las mismas cuentas que un Mixtral o un Qwen3-MoE. Pasamos 12 tokens por un
# modelo diminuto de 4 expertos con top-2 y contamos a quién envía cada capa:

# %%
torch.manual_seed(SEMILLA)
mini_moe = Transformer(ModelConfig.llama_style(vocab_size=100, d_model=32, n_heads=4, n_layers=2, max_seq_len=32,
                                               n_experts=4, n_experts_per_token=2))
with torch.no_grad():
    mini_moe(torch.randint(0, 100, (1, 12), generator=torch.Generator().manual_seed(SEMILLA)))
for i, bloque in enumerate(mini_moe.blocks):
    print(f"capa {i}: tokens por experto {bloque.mlp.tokens_per_expert.tolist()} (12 tokens × 2 = 24 asignaciones),",
          f"FLOPs de los expertos: {fmt_int(bloque.mlp.expert_flops)}")

# %% [markdown]
# ## 3. Parámetros totales y activos
#
# Mixtral 8x7B tiene 8 expertos por capa y usa 2 por token. No son «8 × 7B»: la atención, los embeddings y
# las normalizaciones son comunes a todos los expertos. El capítulo da dos números: **≈47B** parámetros en
# total y **≈13B** activos por token. Llamemos `S` a lo compartido (lo que usa todo token) y `E` a lo que pesa
# un experto sumado en todas las capas:
#
# $$\text{total} = S + n\,E, \qquad \text{activos} = S + k\,E$$
#
# La memoria depende del total (hay que cargar los ocho expertos); el cómputo por token, de los activos.
#
# Y contar bien el total y los activos es solo la primera cuenta: un MoE trae cuatro problemas que un
# modelo denso no tiene.
#
# | problema | qué ocurre | por qué importa |
# |---|---|---|
# | equilibrio | el enrutador manda demasiados tokens a unos pocos expertos | esos se saturan y los demás apenas aprenden (sección 4) |
# | comunicación | al entrenar repartido en varios dispositivos, cada token viaja hasta el dispositivo de su experto | latencia y complejidad |
# | servir | la memoria sigue al total, pero también importa cuántos expertos toca cada lote, dónde viven y cómo se cargan | el número de parámetros no basta para planificar |
# | interpretar | un experto no tiene una etiqueta humana | «este experto sabe de medicina» no se puede afirmar sin medirlo (primer error de la sección 8) |
#
# ### Ejercicio 4 · `parametros_moe`, encuentra el error (2 puntos · dificultad ★☆☆ · ~8 min)
#
# `parametros_moe(compartidos, por_experto, n_expertos, k)` debe devolver un diccionario con las claves
# `"total"`, `"activos"` y `"fraccion_activa"` (tres `float`, también con argumentos enteros) según las dos fórmulas de arriba, y lanzar
# `ValueError` si `k < 1` o `k > n_expertos`. La versión de la celda comete el error más típico del capítulo al
# comparar modelos: con los números de Mixtral (`S = 1.667e9`, `E = 5.667e9`) no le salen los 13e9 activos.
# Ejecuta su comprobación, encuentra el error y corrígelo.

# %% nbgrader={"grade_id": "parametros_moe", "solution": true}
def parametros_moe(compartidos, por_experto, n_expertos, k):
    """Parámetros totales y activos de un MoE, y la fracción activa."""
    if k < 1 or k > n_expertos:
        raise ValueError("k debe estar entre 1 y n_expertos")
    total = float(compartidos + n_expertos * por_experto)
    ### BEGIN SOLUTION
    activos = float(compartidos + k * por_experto)
    ### END SOLUTION
    ### BEGIN BUGGY
    # activos = float(k * por_experto)
    ### END BUGGY
    return {"total": total, "activos": activos, "fraccion_activa": activos / total}


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Ejecuta la comprobación: ¿cuánto le sale de activos a Mixtral, y cuánto le falta para 13e9? Compara esa
# diferencia con `S`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Todo token atraviesa la atención, los embeddings y las normalizaciones, además de sus `k` expertos: la
# fórmula de los activos tiene los mismos dos términos que la del total.
# </details>

# %% nbgrader={"grade_id": "test_parametros_moe", "grade": true, "points": 2}
# Comprobación del ejercicio 4
with reference_blocked(*REFERENCIAS):
    r = checked_call(parametros_moe, 5e9 / 3, 17e9 / 3, 8, 2)
    check_true(isinstance(r, dict) and set(r) == {"total", "activos", "fraccion_activa"},
               "parametros_moe debe devolver un diccionario con las claves 'total', 'activos' y 'fraccion_activa'")
    check_close(r["total"], 47e9, rtol=1e-6, atol=0, what="total de Mixtral")
    check_close(r["activos"], 13e9, rtol=1e-6, atol=0, what="activos de Mixtral",
                hint="lo compartido también está activo")
    check_close(r["fraccion_activa"], 13 / 47, atol=1e-6, what="fracción activa (≈ 27.66 %)")
    check_raises(lambda: parametros_moe(1e9, 1e9, 8, 9), ValueError, what="k mayor que n_expertos")
ok("≈47B en total, ≈13B activos: 27.66 % del modelo trabaja en cada token")
### BEGIN HIDDEN TESTS
with hidden("parametros_moe: otros modelos, k = n y errores"):
    rng_t = np.random.default_rng(503)
    casos = []
    for _ in range(6):
        S_h, E_h = float(rng_t.uniform(0, 5e9)), float(rng_t.uniform(1e6, 3e9))
        n_h = int(rng_t.integers(2, 129))
        k_h = int(rng_t.integers(1, n_h + 1))
        casos.append((S_h, E_h, n_h, k_h, MOE.moe_param_counts(S_h, E_h, n_h, k_h)))
    with reference_blocked(*REFERENCIAS):
        for S_h, E_h, n_h, k_h, e in casos:
            r = checked_call(parametros_moe, S_h, E_h, n_h, k_h)
            check_close([r["total"], r["activos"], r["fraccion_activa"]], [e["total"], e["active"], e["active_fraction"]],
                        rtol=1e-6, atol=1e-9)
        r_int = checked_call(parametros_moe, 2, 3, 4, 4)
        check_true(all(isinstance(r_int[c], float) for c in ("total", "activos", "fraccion_activa")),
                   "los tres valores deben ser float, también con argumentos enteros")
        check_close([r_int["total"], r_int["activos"], r_int["fraccion_activa"]], [14.0, 14.0, 1.0], atol=1e-7)
        check_close(checked_call(parametros_moe, 0, 10, 256, 8)["fraccion_activa"], 8 / 256, atol=1e-7)
        check_raises(lambda: parametros_moe(1.0, 1.0, 4, 0), ValueError)
        check_raises(lambda: parametros_moe(1.0, 1.0, 4, 5), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Ejercicio 5 · `reparto_moe` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Los fabricantes publican el total y los activos, no `S` ni `E`. Pero con dos ecuaciones y dos incógnitas se
# despejan: restándolas, `total − activos = (n − k)·E`. Escribe `reparto_moe(total, activos, n_expertos, k)`,
# que devuelve la tupla `(S, E)` (dos `float`, también con argumentos enteros) y lanza `ValueError` si
# `k >= n_expertos` (no hay nada que despejar), si `activos > total` o si sale un `S` negativo (`S = 0` vale).

# %% nbgrader={"grade_id": "reparto_moe", "solution": true}
def reparto_moe(total, activos, n_expertos, k):
    """(compartidos, por_experto) a partir de los parámetros totales y activos."""
    ### BEGIN SOLUTION
    if k >= n_expertos:
        raise ValueError("con k >= n_expertos no se puede separar S de E")
    if activos > total:
        raise ValueError("los activos no pueden superar al total")
    por_experto = (total - activos) / (n_expertos - k)
    compartidos = activos - k * por_experto
    if compartidos < 0:
        raise ValueError("los números dan una parte compartida negativa")
    return float(compartidos), float(por_experto)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Resta las dos ecuaciones: `S` desaparece y queda una ecuación con `E` sola. Con `E` ya sabida, cualquiera de
# las dos ecuaciones te da `S`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# `E = (total − activos) / (n − k)`. Con `k == n_expertos` dividirías por cero: compruébalo antes y lanza `ValueError`, no `ZeroDivisionError`.
# </details>

# %% nbgrader={"grade_id": "test_reparto_moe", "grade": true, "points": 2}
# Comprobación del ejercicio 5
with reference_blocked(*REFERENCIAS):
    reparto = checked_call(reparto_moe, 47e9, 13e9, 8, 2)
    check_true(isinstance(reparto, tuple) and len(reparto) == 2, "reparto_moe debe devolver una tupla (S, E)")
    check_close(reparto, [5e9 / 3, 17e9 / 3], rtol=1e-6, atol=0, what="(S, E) de Mixtral",
                hint="E = (47e9 − 13e9) / 6 ≈ 5.667e9; S = 13e9 − 2·E ≈ 1.667e9")
    check_raises(lambda: reparto_moe(47e9, 13e9, 2, 2), ValueError, what="k == n_expertos")
ok("Mixtral: 1.667B compartidos y 5.667B por experto (en todas sus capas)")
### BEGIN HIDDEN TESTS
with hidden("reparto_moe: ida y vuelta con parametros_moe, y errores"):
    rng_t = np.random.default_rng(504)
    casos = []
    for _ in range(6):
        n_h = int(rng_t.integers(2, 65))
        k_h = int(rng_t.integers(1, n_h))
        S_h, E_h = float(rng_t.uniform(0, 4e9)), float(rng_t.uniform(1e7, 2e9))
        c = MOE.moe_param_counts(S_h, E_h, n_h, k_h)
        casos.append((c["total"], c["active"], n_h, k_h, MOE.solve_moe_split(c["total"], c["active"], n_h, k_h)))
    with reference_blocked(*REFERENCIAS):
        for total_h, activos_h, n_h, k_h, esperado in casos:
            check_close(checked_call(reparto_moe, total_h, activos_h, n_h, k_h), esperado, rtol=1e-6, atol=1.0)
        check_close(checked_call(reparto_moe, 10, 10, 4, 1), [10.0, 0.0], atol=1e-6)
        check_close(checked_call(reparto_moe, 8e9, 2e9, 8, 2), [0.0, 1e9], rtol=1e-9, atol=1.0)  # S = 0 exacto
        r_int = checked_call(reparto_moe, 20, 8, 4, 1)
        check_true(isinstance(r_int, tuple) and len(r_int) == 2 and all(isinstance(v, float) for v in r_int),
                   "reparto_moe debe devolver una tupla de dos float, también con argumentos enteros")
        check_close(r_int, [4.0, 4.0], atol=1e-9)
        check_raises(lambda: reparto_moe(13e9, 47e9, 8, 2), ValueError)
        check_raises(lambda: reparto_moe(47e9, 1e9, 8, 2), ValueError)
        check_raises(lambda: reparto_moe(47e9, 13e9, 4, 5), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Las cuentas exactas de los MoE de hoy
#
# `llmlab.cost` lee el `config.json` de un modelo y cuenta sus parámetros uno a uno; las pruebas del curso
# comprueban que la cuenta coincide **exactamente** con la del modelo de Hugging Face construido con esa
# configuración. Con los números exactos de Mixtral el reparto sale un poco distinto del redondeado, y
# coincide con lo que pesa de verdad un experto:

# %%
modelos_moe = ["mixtral-8x7b-v0.1", "qwen3-30b-a3b", "gpt-oss-20b", "deepseek-v3"]
especificaciones = {nombre: C.get_model(nombre) for nombre in modelos_moe}
print(f"{'modelo':<20}{'total':>20}{'activos':>18}{'sin embedding':>18}{'fracción':>10}")
for nombre, spec in especificaciones.items():
    total, activos = spec.param_count(), spec.active_param_count()
    sin_emb = spec.active_param_count(count_embedding=False)
    print(f"{nombre:<20}{fmt_int(total):>20}{fmt_int(activos):>18}{fmt_int(sin_emb):>18}{fmt_pct(activos / total):>10}")

mixtral = especificaciones["mixtral-8x7b-v0.1"]
S_exacto, E_exacto = MOE.solve_moe_split(mixtral.param_count(), mixtral.active_param_count(), 8, 2)
print(f"\nMixtral exacto: S = {fmt_num(S_exacto / 1e9, 3)}B, E = {fmt_num(E_exacto / 1e9, 3)}B;",
      f"un experto en sus 32 capas: 32·3·4096·14336 = {fmt_num(32 * 3 * 4096 * 14336 / 1e9, 3)}B")
deepseek = especificaciones["deepseek-v3"]
print(f"DeepSeek-V3: 37/671 = {fmt_pct(37 / 671)} (capítulo); con la cuenta exacta y el convenio de DeepSeek",
      f"(sin la tabla de embedding): {fmt_pct(deepseek.active_param_count(count_embedding=False) / deepseek.param_count())}")

# %% [markdown]
# Dos lecciones. Primera: «activos» no tiene una sola definición. Mistral (12.9B en Mixtral) y Qwen (3.3B en
# Qwen3-30B-A3B) cuentan la tabla de embedding, de la que cada token solo lee una fila; OpenAI (3.6B en
# gpt-oss-20b) y DeepSeek (37B en DeepSeek-V3) no. Antes de comparar dos fichas técnicas, mira qué cuentan.
# Segunda: DeepSeek-V3 es más que un Mixtral grande. Tiene un experto **compartido** que usan todos los
# tokens, sus tres primeras capas son densas y su atención «latente» guarda en la caché KV un vector comprimido
# de 576 números por capa y token en lugar de las claves y valores de sus 128 cabezas:

# %%
print(f"caché KV de DeepSeek-V3 en bf16: {fmt_int(deepseek.kv_bytes_per_token())} bytes por token;",
      f"con claves y valores por cabeza serían {fmt_int(61 * 128 * (192 + 128) * 2)}")

fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.8))
etiquetas = ["denso 7B", "Mixtral 8x7B", "DeepSeek-V3"]
totales = [7, 47, 671]
activos_b = [7, 13, 37]
pos = np.arange(len(etiquetas))
izq.bar(pos - 0.2, totales, 0.4, label="total")
izq.bar(pos + 0.2, activos_b, 0.4, label="activos por token")
izq.set_yscale("log")
izq.set_xticks(pos, etiquetas)
izq.set_ylabel("miles de millones de parámetros")
izq.set_title("Lo que se guarda frente a lo que se usa")
izq.legend()
memoria_16 = [t * 16 / 8 for t in totales]  # N·b/8 bytes → GB con N en miles de millones
memoria_4 = [t * 4 / 8 for t in totales]
der.bar(pos - 0.2, memoria_16, 0.4, label="16 bits")
der.bar(pos + 0.2, memoria_4, 0.4, label="4 bits")
der.set_yscale("log")
der.set_xticks(pos, etiquetas)
der.set_ylabel("GB para cargar todos los pesos")
der.set_title("La memoria depende del total")
der.legend()
for ax, valores in ((izq, totales), (der, memoria_16)):
    for p, v in zip(pos, valores):
        ax.text(p - 0.2, v * 1.1, f"{v:g}", ha="center", fontsize=8)
plt.tight_layout()
plt.show()
print("Mixtral: 94 GB en 16 bits y 23.5 GB en 4 bits para cargarlo; por token lee lo de un modelo de 13B (26 GB en 16 bits).")

# %% [markdown]
# ## 4. El problema incómodo: el equilibrio
#
# Nada obliga al enrutador a repartir. Si al principio del entrenamiento un experto sale un poco mejor, recibe
# más tokens, aprende más, mejora y recibe todavía más: los demás apenas aprenden y el MoE se **colapsa** en
# un modelo denso más caro. Para vigilarlo se mide la **carga** de cada experto: qué parte de las
# asignaciones recibe. Con `T` tokens y top-`k` hay `T·k` asignaciones; la carga de un experto es cuántas le
# tocan dividido por `T·k`, así que las cargas suman 1 y el reparto perfecto da `1/n` a cada uno.
#
# ### Ejercicio 6 · `carga_expertos` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `carga_expertos(logits_router, k)`: `logits_router` es una matriz `(T, n)` con los logits del
# enrutador de `T` tokens; para cada token se eligen sus `k` expertos de mayor logit (empates: índice menor)
# y se devuelve un array de NumPy de floats de longitud `n` con la carga de cada experto (suma 1). Elegir por
# los logits o por las probabilidades da lo mismo: la softmax no cambia el orden.

# %% nbgrader={"grade_id": "carga_expertos", "solution": true}
def carga_expertos(logits_router, k):
    """Parte de las T·k asignaciones que recibe cada experto."""
    ### BEGIN SOLUTION
    logits_router = np.asarray(logits_router, dtype=float)
    T, n = logits_router.shape
    elegidos = np.argsort(-logits_router, axis=1, kind="stable")[:, :k]
    cuentas = np.bincount(elegidos.reshape(-1), minlength=n)
    return cuentas / (T * k)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Para cada token (fila), busca sus `k` expertos de mayor logit; después cuenta cuántas veces sale cada
# experto en total y divide por el número de asignaciones, `T * k` (si divides por `T`, las cargas suman `k`).
# </details>
#
# <details><summary>Pista 2</summary>
#
# `np.argsort(-logits, axis=1, kind="stable")[:, :k]` da los elegidos de cada fila, y `np.bincount` con
# `minlength=n` cuenta cuántas veces aparece cada experto (también los que no salen nunca).
# </details>

# %% nbgrader={"grade_id": "test_carga_expertos", "grade": true, "points": 2}
# Comprobación del ejercicio 6
logits_ejemplo = np.array([[3.0, 2.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0], [5.0, 4.0, -1.0, 0.0]])
with reference_blocked(*REFERENCIAS):
    carga = checked_call(carga_expertos, logits_ejemplo, 2)
    check_array(carga, what="la carga", dtype="float", shape=(4,))
    check_close(carga, [2 / 6, 2 / 6, 1 / 6, 1 / 6], atol=1e-6, what="carga de 3 tokens con top-2",
                hint="token 1 → E1, E2; token 2 → E4, E3; token 3 → E1, E2")
    colapsado = np.tile([10.0, 0.0, 0.0, 0.0], (50, 1))
    check_close(checked_call(carga_expertos, colapsado, 1), [1.0, 0.0, 0.0, 0.0], atol=1e-6,
                what="un enrutador colapsado con top-1")
    check_close(float(np.sum(checked_call(carga_expertos, colapsado, 2))), 1.0, atol=1e-6,
                what="la suma de las cargas con top-2", hint="divide por T·k")
ok("la carga suma 1 y detecta el colapso")
### BEGIN HIDDEN TESTS
with hidden("carga_expertos: enrutadores aleatorios, logits enormes y empates"):
    rng_t = np.random.default_rng(505)
    casos = []
    for T, n, k in [(200, 4, 2), (64, 8, 1), (33, 6, 3), (10, 16, 8), (5, 3, 3)]:
        L_h = rng_t.normal(0, 2, size=(T, n)) + rng_t.normal(0, 1, size=n)
        casos.append((L_h, k, MOE.expert_load(L_h, k)))
    grande = rng_t.normal(0, 1, size=(40, 5)) * 1e4
    casos.append((grande, 2, MOE.expert_load(grande, 2)))
    with reference_blocked(*REFERENCIAS):
        for L_h, k, esperado in casos:
            obtenido = checked_call(carga_expertos, L_h, k)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, atol=1e-6)
        check_close(checked_call(carga_expertos, np.zeros((6, 4)), 2), [0.5, 0.5, 0.0, 0.0], atol=1e-6)
        check_close(checked_call(carga_expertos, [[1.0, 1.0, 0.0]], 1), [1.0, 0.0, 0.0], atol=1e-6)
### END HIDDEN TESTS

# %% [markdown]
# Así se ve la diferencia con `N_TOKENS_CARGA` tokens sintéticos: un enrutador con un sesgo hacia dos
# expertos frente a uno sin sesgo. `cv` es el coeficiente de variación de las cargas (desviación / media):
# 0 si el reparto es perfecto y `√(n−1)` si todo va a un experto.

# %%
rng = np.random.default_rng(SEMILLA)
n_exp = 8
logits_equilibrados = rng.normal(size=(N_TOKENS_CARGA, n_exp))
logits_sesgados = logits_equilibrados + np.array([2.0, 1.2, 0, 0, 0, 0, 0, 0])
fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), sharey=True)
for ax, nombre, L_dibujo in ((axes[0], "sin sesgo", logits_equilibrados), (axes[1], "con sesgo", logits_sesgados)):
    carga_dibujo = MOE.expert_load(L_dibujo, 2)
    stats = MOE.load_stats(carga_dibujo)
    ax.bar([f"E{i + 1}" for i in range(n_exp)], carga_dibujo, color="tab:orange" if stats["cv"] > 0.3 else "tab:green")
    ax.axhline(1 / n_exp, color="black", ls="--", lw=1, label="reparto perfecto 1/n")
    ax.set_title(f"Enrutador {nombre}: cv = {stats['cv']:.2f}, máximo {stats['max_share']:.2f}")
    ax.legend(loc="upper right")
axes[0].set_ylabel("carga (parte de las asignaciones)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ### La pérdida auxiliar de balanceo
#
# El remedio más extendido (Switch Transformer, Mixtral) es sumar a la pérdida del modelo una pequeña
# **pérdida auxiliar** que castiga el desequilibrio:
#
# $$L_{aux} = n \sum_{i=1}^{n} f_i\,P_i$$
#
# `f_i` es cuántas veces se elige el experto `i` por token (la fracción de tokens que lo usan; con top-`k`
# estas fracciones suman `k`) y `P_i` la probabilidad media que el enrutador le da. Si el reparto es perfecto,
# `L_aux = k`; si todo va a unos pocos expertos con probabilidad alta, crece hasta `n`. `f` sale de contar (no
# tiene derivada), pero `P` sí: el gradiente empuja la probabilidad lejos de los expertos saturados. Se suma
# multiplicada por un coeficiente pequeño (0.01 en Switch, 0.02 en Mixtral).
#
# ### Ejercicio 7 · `perdida_balanceo` (2 puntos · dificultad ★★☆ · ~12 min)
#
# Escribe `perdida_balanceo(logits_router, k)` para una matriz de logits `(T, n)`: `f_i` = (veces que el
# experto `i` está entre los `k` elegidos de un token) / `T`; `P_i` = media sobre los tokens de la softmax
# **estable** de cada fila; devuelve `n · Σ f_i P_i` como número (`float`). Los empates se rompen como en el
# ejercicio anterior. Es la misma cuenta que hace `transformers` (`load_balancing_loss_func`).

# %% nbgrader={"grade_id": "perdida_balanceo", "solution": true}
def perdida_balanceo(logits_router, k):
    """Pérdida auxiliar de balanceo de carga: n · Σ f_i P_i."""
    ### BEGIN SOLUTION
    logits_router = np.asarray(logits_router, dtype=float)
    T, n = logits_router.shape
    e = np.exp(logits_router - logits_router.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    elegidos = np.argsort(-logits_router, axis=1, kind="stable")[:, :k]
    f = np.bincount(elegidos.reshape(-1), minlength=n) / T
    P = probs.mean(axis=0)
    return float(n * np.sum(f * P))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Reutiliza lo de `carga_expertos`, pero divide las cuentas por `T` (no por `T·k`). `P = probs.mean(axis=0)`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Con todos los logits a cero las probabilidades son `1/n` y la pérdida vale exactamente `k`, elija quien
# elija el empate. Si te sale `k/2`, estás dividiendo `f` por `T·k`.
# </details>

# %% nbgrader={"grade_id": "test_perdida_balanceo", "grade": true, "points": 2}
# Comprobación del ejercicio 7
with reference_blocked(*REFERENCIAS):
    uniforme = checked_call(perdida_balanceo, np.zeros((8, 4)), 2)
    check_number(uniforme, what="la pérdida", kind="float")
    check_close(uniforme, 2.0, atol=1e-6, what="logits a cero con top-2 (reparto uniforme)",
                hint="con probabilidades 1/n la pérdida vale k")
    check_close(checked_call(perdida_balanceo, np.eye(4) * 5.0, 1), 1.0, atol=1e-6,
                what="cada token en su experto con top-1")
    check_close(checked_call(perdida_balanceo, np.tile([20.0, 0, 0, 0], (8, 1)), 1), 4.0, atol=1e-6,
                what="todos al mismo experto (colapso) con top-1")
    check_close(checked_call(perdida_balanceo, np.tile([1000.0, 999.0, 0.0], (5, 1)), 1), 2.193176, atol=1e-6,  # 3 · 0.7310586
                what="logits enormes", hint="resta el máximo de cada fila antes de np.exp")
ok("k si reparte bien, n si colapsa")
### BEGIN HIDDEN TESTS
with hidden("perdida_balanceo: igual que transformers en casos aleatorios"):
    rng_t = np.random.default_rng(506)
    casos = []
    for T, n, k in [(24, 4, 2), (50, 8, 1), (17, 6, 3), (9, 5, 5), (30, 16, 4)]:
        L_h = rng_t.normal(0, 3, size=(T, n)) + rng_t.normal(0, 2, size=n)
        casos.append((L_h, k, float(MOE.load_balancing_loss(torch.from_numpy(L_h), k))))
    L_g = rng_t.normal(0, 1, size=(12, 4)) * 3000  # probabilidades 0/1: con top-1 no hay empates por redondeo
    casos.append((L_g, 1, float(MOE.load_balancing_loss(torch.from_numpy(L_g), 1))))
    with reference_blocked(*REFERENCIAS):
        for L_h, k, esperado in casos:
            obtenido = checked_call(perdida_balanceo, L_h, k)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, atol=1e-6, rtol=1e-5)
        check_close(checked_call(perdida_balanceo, np.zeros((3, 6)).tolist(), 4), 4.0, atol=1e-6)
        # empate en la primera fila: gana el experto 0, y su P media no es la del experto 1
        check_close(checked_call(perdida_balanceo, [[1.0, 1.0, 0.0], [2.0, 0.0, 0.0]], 1), 1.813957, atol=1e-6)
### END HIDDEN TESTS

# %% [markdown]
# ### Un experimento de verdad: ¿se desequilibra un MoE diminuto sin la pérdida auxiliar?
#
# Para no quedarnos en la teoría, el curso entrena cuatro modelos pequeños con el corpus del curso, desde la
# misma semilla (mismos pesos iniciales y mismos lotes): tres MoE de 4 expertos con top-2, uno **sin**
# pérdida auxiliar, otro **con** ella al coeficiente de Switch (0.01) y otro con diez veces más (0.1), y un
# modelo **denso** del mismo tamaño activo (un único MLP tan ancho como dos expertos). Durante el
# entrenamiento cada capa MoE anota cuántos tokens envía a cada experto. El entrenamiento completo tarda unos
# minutos por semilla; lo hace `benchmarks/moe_load_balance.py` (con las semillas 0, 1 y 2) y el cuaderno lee sus
# resultados guardados. Con `ENTRENAR_EN_VIVO = True` (celda de parámetros) lo repites aquí con `PASOS_EN_VIVO` pasos.
#
# Los segundos de entrenamiento dependen de qué más haga la máquina en ese momento; para comparar la
# velocidad, el experimento cronometra además un paso de entrenamiento de los cuatro modelos ya entrenados,
# por turnos y con el mismo lote (la mediana de varias repeticiones), y lo divide por el del denso.
#
# **Tu predicción** (no puntúa). Antes de ejecutar la celda del experimento, escribe en una línea qué esperas:
# con top-2 de 4 expertos la carga de un experto va de 0.25 (reparto perfecto) a 0.5 (lo eligen todos los
# tokens). ¿Qué carga máxima alcanzará la capa más desequilibrada del MoE sin pérdida auxiliar? ¿Y con la
# pérdida auxiliar a 0.1? La celda del experimento imprime tu predicción antes que los números, así que se
# ve si la escribiste antes o después de mirarlos.

# %%
MI_PREDICCION = ""  # una línea, p. ej. "sin aux. llega a 0.45; con 0.1 baja a 0.30"

# %%
print("Tu predicción:", MI_PREDICCION.strip() or "(vacía: escríbela en la celda de arriba antes de mirar los números)")
if ENTRENAR_EN_VIVO:
    resultados = run_experiment(steps=PASOS_EN_VIVO, record_every=max(1, PASOS_EN_VIVO // 10),
                                progress=lambda run, paso, perdida: print(f"{run:<15} paso {paso:>4}  pérdida {perdida:.3f}"))
else:
    resultados = load_results()
ajustes = resultados["settings"]
ejecuciones = {"moe_no_aux": "MoE sin aux.", "moe_aux": f"MoE aux. {ajustes['aux_coef']}",
               "moe_aux_strong": f"MoE aux. {ajustes['aux_coef_strong']}", "dense": "denso"}
print(f"{ajustes['n_experts']} expertos, top-{ajustes['k']}, {ajustes['steps']} pasos de {ajustes['batch_size']}×"
      f"{ajustes['seq_len']} tokens, misma semilla ({ajustes['seed']}) para todos")
print(f"\n{'ejecución':<16}{'pérdida val.':>13}{'carga máx. val.':>17}{'aux. final':>12}{'paso / denso':>14}"
      f"{'parámetros':>12}{'activos':>10}")
for nombre, etiqueta in ejecuciones.items():
    r = resultados["runs"][nombre]
    carga_val = f"{r['max_share']:.3f}" if "max_share" in r else "—"
    aux_final = r["history"]["aux_loss"][-1]
    aux_texto = f"{aux_final:.3f}" if aux_final is not None else "—"
    print(f"{etiqueta:<16}{r['val_loss']:>13.4f}{carga_val:>17}{aux_texto:>12}{r['step_vs_dense']:>14.2f}"
          f"{fmt_int(r['params']):>12}{fmt_int(r['active_params']):>10}")
if "per_seed" in resultados:  # los resultados guardados repiten las cuatro ejecuciones desde otras semillas
    dispersion = seed_spread(resultados)
    semillas = [entrada["seed"] for entrada in resultados["per_seed"]]
    print(f"\nLas mismas ejecuciones desde {len(semillas)} semillas ({', '.join(map(str, semillas))}): "
          "media y, entre paréntesis, mínimo–máximo")
    print(f"{'ejecución':<16}{'pérdida val.':>24}{'carga máx. val.':>24}")
    for nombre, etiqueta in ejecuciones.items():
        columnas = []
        for medida in ("val_loss", "max_share"):
            m = dispersion[nombre].get(medida)
            columnas.append(f"{m['mean']:.3f} ({m['min']:.3f}–{m['max']:.3f})" if m else "—")
        print(f"{etiqueta:<16}{columnas[0]:>24}{columnas[1]:>24}")
else:
    print("\n(en vivo: una sola semilla; los resultados guardados traen además la dispersión entre semillas)")

# %% [markdown]
# La carga de un experto con top-2 de 4 va de 0.25 (reparto perfecto) a 0.5 (un experto elegido por
# **todos** los tokens). La figura muestra, capa a capa, la carga de cada experto a lo largo del
# entrenamiento, y debajo, la pérdida auxiliar de cada MoE (que vale `k = 2` con un reparto perfecto):

# %%
moes = [nombre for nombre in ejecuciones if nombre != "dense"]
n_capas = len(resultados["runs"]["moe_no_aux"]["history"]["share"][0])
fig, axes = plt.subplots(n_capas + 1, len(moes), figsize=(12, 2.4 * (n_capas + 1)), sharex=True, squeeze=False)
for col, nombre in enumerate(moes):
    historia = resultados["runs"][nombre]["history"]
    pasos = historia["step"]
    cargas = np.array(historia["share"])  # (registros, capas, expertos)
    for capa in range(n_capas):
        ax = axes[capa, col]
        for e in range(cargas.shape[2]):
            ax.plot(pasos, cargas[:, capa, e], label=f"E{e + 1}")
        ax.axhline(1 / cargas.shape[2], color="black", ls="--", lw=1)
        ax.set_ylim(0, 0.55)
        ax.set_title(f"{ejecuciones[nombre]} · capa {capa}", fontsize=10)
    axes[n_capas, col].plot(pasos, historia["aux_loss"], color="tab:purple")
    axes[n_capas, col].axhline(ajustes["k"], color="black", ls="--", lw=1)
    axes[n_capas, col].set_title("pérdida auxiliar (sin multiplicar por el coeficiente)", fontsize=9)
    axes[n_capas, col].set_xlabel("paso de entrenamiento")
axes[0, 0].legend(ncol=2, fontsize=8)
for fila in range(n_capas):
    axes[fila, 0].set_ylabel("carga")
plt.tight_layout()
plt.show()

# %% [markdown]
# Lee el resultado con honestidad, sin dar por hecho lo que «debería» pasar. ¿Se acerca alguna capa a 0.5 sin
# pérdida auxiliar? ¿Cuánto reparte la pérdida auxiliar con 0.01 y con 0.1, y qué cuesta en pérdida de
# validación? Fíjate también en el valor de la propia pérdida auxiliar: con top-2, `n·Σ f_i P_i` puede bajar de
# `k` sin que las cargas se igualen, si el enrutador da poca probabilidad a los expertos que elige en segundo
# lugar; es decir, la pérdida se puede «cumplir» sin repartir del todo. ¿Y el MoE frente al denso del mismo
# tamaño activo, en pérdida y en tiempo por paso? A esta escala (dos capas, unos cientos de pasos, un corpus
# pequeño) el reparto también lo mueven la semilla y el ritmo de aprendizaje, y por eso el experimento se repite
# desde tres semillas: la segunda tabla da, para cada ejecución, la media y el intervalo entre la peor y la mejor.
# Con estas tres semillas, la pérdida auxiliar a 0.01 no rebaja la carga máxima en ninguna (queda igual o un poco
# por encima de la del MoE sin ella); a 0.1 la rebaja de media, pero no en todas las semillas. Y fíjate en el
# ancho de los intervalos de pérdida: lo que cambia la pérdida de validación al pasar de una semilla a otra es más
# que lo que separa las medias de las cuatro ejecuciones, así que una sola semilla no basta para decir cuál
# «aprende mejor». La pregunta del final del lab te pide interpretarlo con los números de las dos tablas.
#
# ## 5. Razonar es un proceso: cadenas, árboles, votos y verificación
#
# Un modelo que «razona» no tiene más parámetros que otro: gasta más cómputo en cada respuesta. El capítulo
# reúne cuatro maneras de gastarlo, de la más barata a la más cara:
#
# | técnica | en qué consiste | qué cuesta |
# |---|---|---|
# | cadena de pensamiento | el modelo escribe los pasos intermedios antes de la respuesta final (porque el prompt trae ejemplos así o porque se entrenó para hacerlo) | una generación más larga |
# | autoconsistencia | se muestrean `M` cadenas independientes con temperatura mayor que cero, se saca la respuesta de cada una y se vota | `M` generaciones |
# | árbol de pensamientos | en lugar de cadenas sueltas, se ramifica: se proponen varios pasos siguientes, un evaluador puntúa cada estado a medio hacer y solo se sigue por las ramas prometedoras | muchas generaciones cortas y sus evaluaciones |
# | verificación | una herramienta fiable comprueba el resultado: aritmética, un test, una consulta SQL | lo que cueste la herramienta |
#
# ¿Por qué ayuda escribir los pasos? Un decodificador produce cada token con el mismo número de capas; si
# la respuesta sale en el primer token, el modelo dispone de una sola pasada para llegar a ella. Cada paso
# escrito es un resultado intermedio que los tokens siguientes pueden leer con la atención: la cadena
# funciona como una memoria de trabajo en el propio texto. No garantiza nada: una cadena larga puede sonar
# convincente y acabar mal, y por eso se vota o se verifica.
#
# **El giro del cómputo en inferencia.** Desde 2024 los modelos de razonamiento (o1 y o3 de OpenAI,
# DeepSeek-R1, el modo de pensamiento de Gemini) se entrenan para generar cadenas largas antes de responder,
# con los pesos fijos: más tokens por pregunta en vez de más parámetros. DeepSeek-R1 mostró que el
# aprendizaje por refuerzo con recompensas comprobables (un resultado matemático correcto, un código que pasa
# sus tests) basta para que aparezca ese comportamiento sin cadenas escritas a mano. Las ganancias son grandes
# en matemáticas y código de varios pasos y pequeñas en preguntas de sentido común o de datos; el precio es
# latencia y tokens facturados por cada respuesta.
#
# En símbolos, la autoconsistencia muestrea `M` cadenas `r⁽ᵐ⁾ ~ p(r | x)`, saca de cada una su respuesta
# `a⁽ᵐ⁾ = extraer(r⁽ᵐ⁾)` y se queda con la más votada, `â = moda(a⁽¹⁾, …, a⁽ᴹ⁾)`.
#
# Las cadenas son texto libre: antes de votar hay que encontrar en cada una su respuesta final. Primero el voto
# con las respuestas ya extraídas; el capítulo lo ilustra con cinco rutas que responden 14:30, 14:30, 14:00,
# 14:30 y 14:45.
#
# ### Ejercicio 8 · `autoconsistencia`, encuentra el error (2 puntos · dificultad ★☆☆ · ~8 min)
#
# `autoconsistencia(respuestas)` recibe una lista de respuestas (`str`), quita los espacios de alrededor de cada
# una (`"14:30 "` y `"14:30"` son la misma) y devuelve la más repetida (`str`); si hay empate gana la que
# apareció **primero**; con la lista vacía lanza `ValueError`. La versión de la celda confunde razonar con otra
# cosa: con las cinco rutas del capítulo no devuelve 14:30. Encuentra el error y corrígelo.

# %% nbgrader={"grade_id": "autoconsistencia", "solution": true}
def autoconsistencia(respuestas):
    """La respuesta más votada (empate: la primera que apareció)."""
    if len(respuestas) == 0:
        raise ValueError("no hay respuestas")
    limpias = [r.strip() for r in respuestas]
    ### BEGIN SOLUTION
    votos = Counter(limpias)
    return votos.most_common(1)[0][0]
    ### END SOLUTION
    ### BEGIN BUGGY
    # return max(limpias, key=len)  # la respuesta más elaborada
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Ejecuta la comprobación y mira qué ruta elige: ¿qué tiene «14:45 (seguro)» que no tengan las demás? Escribir
# más no es razonar mejor; votar es contar.
# </details>
#
# <details><summary>Pista 2</summary>
#
# `collections.Counter` (ya importado) cuenta los votos y recuerda el orden en que vio cada respuesta;
# `most_common` respeta ese orden en los empates. Con `max(set(...))` no: el orden de un `set` no es el de
# aparición.
# </details>

# %% nbgrader={"grade_id": "test_autoconsistencia", "grade": true, "points": 2}
# Comprobación del ejercicio 8
with reference_blocked(*REFERENCIAS):
    voto = checked_call(autoconsistencia, ["14:30", "14:30", "14:00", "14:30", "14:45 (seguro)"])
    check_equal(voto, "14:30", what="el voto de las cinco rutas", hint="cuenta votos, no letras")
    check_equal(checked_call(autoconsistencia, ["14:30 ", "14:00", " 14:30"]), "14:30", what="con espacios",
                hint="usa .strip() antes de contar")
    check_equal(checked_call(autoconsistencia, ["15:10", "15:05", "15:05", "15:10"]), "15:10", what="un empate",
                hint="en un empate gana la primera que apareció")
    check_raises(lambda: autoconsistencia([]), ValueError, what="la lista vacía")
ok("14:30 gana por 3 votos de 5")
### BEGIN HIDDEN TESTS
with hidden("autoconsistencia: votaciones aleatorias, empates y una sola respuesta"):
    rng_t = np.random.default_rng(508)
    opciones = ["14:30", "14:00", "14:45", "15:10", "sí", "no", "42"]
    casos = []
    for _ in range(12):
        lista = [str(opciones[i]) + (" " if rng_t.random() < 0.3 else "")
                 for i in rng_t.integers(0, 4, size=int(rng_t.integers(1, 9)))]
        casos.append((lista, RZ.self_consistency(lista)))
    with reference_blocked(*REFERENCIAS):
        for lista, esperado in casos:
            check_equal(checked_call(autoconsistencia, lista), esperado)
        check_equal(checked_call(autoconsistencia, ["b", "a", "a", "b"]), "b")
        check_equal(checked_call(autoconsistencia, ["no"]), "no")
        check_equal(checked_call(autoconsistencia, ["x", "yyyyyy", "x"]), "x")
### END HIDDEN TESTS

# %% [markdown]
# ### Del voto a las cadenas completas
#
# En la práctica no recibes «14:30», sino párrafos enteros. Estas siete cadenas responden a un mismo problema
# de la tienda del capítulo. Son textos escritos para este lab imitando lo que devuelve un modelo al que se
# pide pensar paso a paso con temperatura 0.8 (un modelo de este curso es demasiado pequeño para razonar):
# cuatro aciertan, dos se equivocan por caminos distintos, la más larga es una de las equivocadas y una
# no llega a dar un número.

# %% nbgrader={"grade_id": "datos_cadenas", "locked": true}
# Datos del ejemplo (celda de solo lectura: las comprobaciones los usan).
problema_tienda = ("En el almacén quedan 48 auriculares. Llegan 3 cajas de 12 y se devuelven 15 que llegaron rotos. "
                   "¿Cuántos auriculares hay ahora en el almacén?")
cadenas_tienda = (
    "Tres cajas de 12 son 36. 48 + 36 = 84. Quito los 15 rotos: 84 - 15 = 69. Respuesta: 69.",
    "Primero sumo lo que llega: 48 + 3·12 = 84. Los devueltos salen del almacén, así que 84 − 15 = 69.",
    "Llegan 3 cajas de 12, es decir 24 auriculares. 48 + 24 = 72 y 72 - 15 = 57. Quedan 57.",
    "48 + 36 = 84; 84 - 15 = 69 auriculares.",
    ("Voy a ir con cuidado porque el enunciado tiene varias partes. Hay 48 auriculares al principio. Después "
     "llegan 3 cajas de 12, que hacen 36, y el almacén pasa a 84. Los 15 devueltos vuelven al almacén para "
     "revisarlos, así que también cuentan: 84 + 15 = 99. Por tanto, en el almacén hay 99 auriculares."),
    "Hay 48 y llegan 36, total 84. Menos los 15 rotos quedan 69",
    "No tengo claro si las devoluciones entran o salen del almacén, así que no puedo dar una cifra.",
)
print(problema_tienda)
for i, cadena in enumerate(cadenas_tienda, start=1):
    print(f"  cadena {i} ({len(cadena)} caracteres): {cadena[:70]}…")

# %% [markdown]
# ### Ejercicio 9 · `extraer_respuesta` (2 puntos · dificultad ★★☆ · ~12 min)
#
# Escribe `extraer_respuesta(texto)`, que devuelve la respuesta final de una cadena de pensamiento: **el último
# número** que aparece en el texto, como `float` de Python. Un número es, exactamente:
#
# - una o más cifras ASCII `0`–`9` (aunque vayan pegadas a letras: en «E4» hay un 4);
# - opcionalmente, una parte decimal: un punto **o** una coma seguidos **inmediatamente** de una o más cifras
#   (`2,5` y `2.5` valen 2.5; en «son 3, 4 y 5» hay tres números, y el punto final de «quedan 69.» no es
#   decimal);
# - opcionalmente, un signo menos justo delante de la primera cifra, escrito `-` (guion) o `−` (el signo menos
#   tipográfico, U+2212): «−3,5» es −3.5.
#
# Si el texto no contiene ningún número devuelve `None`; si `texto` no es un `str`, lanza `TypeError`. Con el
# módulo `re` es una expresión regular y una conversión; también vale recorrer el texto carácter a carácter.

# %% nbgrader={"grade_id": "extraer_respuesta", "solution": true}
def extraer_respuesta(texto):
    """El último número del texto como float (None si no hay ninguno)."""
    ### BEGIN SOLUTION
    if not isinstance(texto, str):
        raise TypeError("texto debe ser un str")
    numeros = re.findall(r"[-−]?[0-9]+(?:[.,][0-9]+)?", texto)
    if not numeros:
        return None
    return float(numeros[-1].replace("−", "-").replace(",", "."))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Busca **todos** los números y quédate con el último: la respuesta suele estar al final, después de los
# pasos, y los números del enunciado aparecen antes. `float("2,5")` falla: cambia la coma por un punto y el
# `−` tipográfico por un guion antes de convertir.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Con `re.findall` y un patrón de tres piezas: signo opcional `[-−]?`, cifras `[0-9]+` y una parte decimal
# opcional `(?:[.,][0-9]+)?`. No uses `\d`: también acepta cifras de otras escrituras. Si la lista sale
# vacía, devuelve `None`.
# </details>

# %% nbgrader={"grade_id": "test_extraer_respuesta", "grade": true, "points": 2}
# Comprobación del ejercicio 9
with reference_blocked(*REFERENCIAS):
    r1 = checked_call(extraer_respuesta, cadenas_tienda[0])
    check_true(type(r1) is float, f"extraer_respuesta debe devolver un float de Python, pero devuelve {type(r1).__name__}")
    check_close(r1, 69.0, atol=0, what="la respuesta de la cadena 1", hint="el último número del texto")
    check_close(checked_call(extraer_respuesta, "A las 7 había −3,5 grados y subió 6: ahora hay 2,5."), 2.5, atol=0,
                what="un decimal con coma al final", hint="2,5 es un solo número: la coma va seguida de una cifra")
    check_close(checked_call(extraer_respuesta, "Bajó de 4 a -1.25"), -1.25, atol=0, what="un negativo con punto")
    check_close(checked_call(extraer_respuesta, "Los candidatos son 3, 4 y 5"), 5.0, atol=0,
                what="números separados por «, »", hint="una coma seguida de un espacio no es una coma decimal")
    check_true(checked_call(extraer_respuesta, cadenas_tienda[6]) is None,
               "un texto sin números debe devolver None")
    check_raises(lambda: extraer_respuesta(69), TypeError, what="un número en vez de un texto")
ok("el último número, con su signo y su parte decimal")
### BEGIN HIDDEN TESTS
with hidden("extraer_respuesta: textos aleatorios, signos, decimales, bordes y tipos"):
    rng_t = np.random.default_rng(514)
    palabras = ["sumo", "resto", "quedan", "total", "luego", "así que", "E", "paso", "(", ")", "=", ":", "y", "€"]
    casos = []
    for _ in range(40):
        trozos = []
        for _ in range(int(rng_t.integers(0, 7))):
            trozos.append(str(rng_t.choice(palabras)))
            if rng_t.random() < 0.7:
                entero = str(int(rng_t.integers(0, 100000)))
                signo = str(rng_t.choice(["", "", "-", "−"]))
                decimal = str(rng_t.choice(["", "", ".", ","])) 
                decimal += str(int(rng_t.integers(0, 1000))).zfill(int(rng_t.integers(1, 4))) if decimal else ""
                trozos.append(signo + entero + decimal + str(rng_t.choice(["", ".", ",", " ", "%"])))
        texto_h = " ".join(trozos)
        casos.append((texto_h, RZ.extract_number(texto_h)))
    casos += [(t, RZ.extract_number(t)) for t in (
        "", "sin cifras", "0", "-0", "007", "x-5", "2,5.", "1,5 , 2", "E4", "15:10", "24 - 3", "3 -", "– 7",
        "٣", "１２", "dos cifras: 12 y 3.14159", "12.", ".5", "-.5", "1e3")]
    with reference_blocked(*REFERENCIAS):
        for texto_h, esperado in casos:
            obtenido = checked_call(extraer_respuesta, texto_h)
            if esperado is None:
                check_true(obtenido is None, "sin números debe devolver None")
            else:
                check_true(type(obtenido) is float, "debe devolver un float de Python")
                check_close(obtenido, esperado, atol=0, rtol=0)
        for malo in (None, 3.5, ["12"], b"12"):
            check_raises(lambda malo=malo: extraer_respuesta(malo), TypeError)
### END HIDDEN TESTS

# %% [markdown]
# Con la respuesta de cada cadena ya se puede votar. Sobre muestras completas hay dos decisiones más que con
# las respuestas sueltas: qué hacer con una cadena que no llega a un número (no vota) y cuándo dos respuestas
# son la misma (cuando lo son como números: «69» y «69.0» cuentan juntas).
#
# ### Ejercicio 10 · `voto_razonado` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `voto_razonado(cadenas)`: `cadenas` es una lista (o tupla) de textos. Extrae la respuesta de cada uno
# con tu `extraer_respuesta`, descarta los que dan `None` y devuelve una **tupla** `(respuesta, votos)`: la
# respuesta más repetida (`float`) y cuántas cadenas la dieron (`int` de Python, no un entero de NumPy). Si
# hay empate gana la respuesta que apareció **primero** en la lista. Lanza `ValueError` si ninguna cadena da
# un número (también con la lista vacía).

# %% nbgrader={"grade_id": "voto_razonado", "solution": true}
def voto_razonado(cadenas):
    """Autoconsistencia sobre cadenas completas: (respuesta más votada, votos)."""
    ### BEGIN SOLUTION
    respuestas = [r for r in (extraer_respuesta(c) for c in cadenas) if r is not None]
    if not respuestas:
        raise ValueError("ninguna cadena da una respuesta")
    respuesta, votos = Counter(respuestas).most_common(1)[0]
    return respuesta, int(votos)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Es el ejercicio 8 con un paso delante: primero una lista con las respuestas (sin los `None`), después el
# recuento. Comprueba que la lista no está vacía antes de contar.
# </details>
#
# <details><summary>Pista 2</summary>
#
# `Counter(respuestas).most_common(1)[0]` ya es la pareja `(respuesta, votos)` y respeta el orden de aparición
# en los empates; conviértela en tupla con `int(votos)`. Si usas `np.unique(..., return_counts=True)`, sus
# cuentas son `np.int64` y ordena los empates por valor, no por aparición.
# </details>

# %% nbgrader={"grade_id": "test_voto_razonado", "grade": true, "points": 2}
# Comprobación del ejercicio 10
with reference_blocked(*REFERENCIAS):
    voto_tienda = checked_call(voto_razonado, list(cadenas_tienda))
    check_true(isinstance(voto_tienda, tuple) and len(voto_tienda) == 2,
               "voto_razonado debe devolver una tupla (respuesta, votos)")
    check_close(voto_tienda[0], 69.0, atol=0, what="la respuesta más votada de las siete cadenas",
                hint="cuenta respuestas, no longitudes: la cadena más larga dice 99")
    check_true(type(voto_tienda[1]) is int and voto_tienda[1] == 4,
               f"los votos deben ser el int 4, pero son {voto_tienda[1]!r} ({type(voto_tienda[1]).__name__})")
    check_equal(checked_call(voto_razonado, ["da 2", "da 3,5", "no sé", "da 3.5", "da 2"]), (2.0, 2),
                what="un empate", hint="en un empate gana la respuesta que apareció primero")
    check_raises(lambda: voto_razonado(["no lo sé", "tampoco"]), ValueError, what="ninguna cadena con número")
ok("69 gana con 4 de las 6 cadenas que responden; la más larga decía 99")
### BEGIN HIDDEN TESTS
with hidden("voto_razonado: votaciones aleatorias, empates, tuplas de entrada, tipos y errores"):
    rng_t = np.random.default_rng(515)
    plantillas = ["primero {a}, luego {b}: quedan {r}", "{a} + {b} = {r}", "no lo sé", "resultado {r}.", "{r}"]
    valores = ["69", "57", "99", "-2,5", "−2.5", "69.0", "0", "3,25"]
    casos = []
    for _ in range(25):
        lista = [str(rng_t.choice(plantillas)).format(a=int(rng_t.integers(1, 50)), b=int(rng_t.integers(1, 50)),
                                                      r=str(rng_t.choice(valores[: int(rng_t.integers(2, 9))])))
                 for _ in range(int(rng_t.integers(1, 10)))]
        if all(RZ.extract_number(c) is None for c in lista):
            lista.append("total 7")
        casos.append((lista, RZ.vote_over_rationales(lista)))
    with reference_blocked(*REFERENCIAS):
        for lista, esperado in casos:
            obtenido = checked_call(voto_razonado, lista)
            check_true(isinstance(obtenido, tuple) and len(obtenido) == 2, "debe devolver una tupla de dos")
            check_close(obtenido[0], esperado[0], atol=0, rtol=0)
            check_true(type(obtenido[1]) is int and obtenido[1] == esperado[1], "los votos: un int de Python")
        # empates: la respuesta que apareció primero, aunque la otra sea menor, mayor o salga antes más tarde
        check_equal(checked_call(voto_razonado, ["9", "1", "1", "9"]), (9.0, 2))
        check_equal(checked_call(voto_razonado, ["nada", "-1", "2", "2", "-1"]), (-1.0, 2))
        check_equal(checked_call(voto_razonado, ("uno: 1", "otro: 1,0", "1.0")), (1.0, 3))
        check_equal(checked_call(voto_razonado, ["sin número", "5"]), (5.0, 1))
        check_raises(lambda: voto_razonado([]), ValueError)
        check_raises(lambda: voto_razonado(["", "nada"]), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ¿Cuánto ayuda votar? Supón un resolvedor que acierta cada vez con probabilidad `p`, con intentos
# independientes, y que cuando falla siempre da la misma respuesta equivocada (el peor caso para votar: los
# errores no se reparten los votos). La mayoría de `M` intentos (`M` impar) acierta si aciertan más de `M/2`:
#
# $$P(\text{acierto por mayoría}) = \sum_{j > M/2} \binom{M}{j}\,p^{j}\,(1-p)^{M-j}$$
#
# ### Ejercicio 11 · `prob_mayoria` (2 puntos · dificultad ★★☆ · ~8 min)
#
# Escribe `prob_mayoria(p, M)`, que devuelve esa probabilidad (`float`, también cuando `p` llega como el entero
# `0` o `1`). Lanza `ValueError` si `p` no está en
# `[0, 1]` (un `nan` tampoco lo está) o si `M` no es un entero impar positivo. Con `p = 0.6` y `M = 5` sale 0.68256. `math.comb(M, j)`
# calcula el número combinatorio.

# %% nbgrader={"grade_id": "prob_mayoria", "solution": true}
def prob_mayoria(p, M):
    """Probabilidad de que la mayoría de M intentos independientes (acierto p) sea correcta."""
    ### BEGIN SOLUTION
    if not 0 <= p <= 1:
        raise ValueError("p debe estar en [0, 1]")
    if not isinstance(M, int) or M < 1 or M % 2 == 0:
        raise ValueError("M debe ser un entero impar positivo")
    return float(sum(math.comb(M, j) * p**j * (1 - p) ** (M - j) for j in range(M // 2 + 1, M + 1)))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Los aciertos que dan mayoría son `j = M // 2 + 1, …, M`: suma un término binomial por cada uno.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Con `M = 5` la mayoría empieza en 3 aciertos, no en 2: `range(M // 2 + 1, M + 1)`.
# </details>

# %% nbgrader={"grade_id": "test_prob_mayoria", "grade": true, "points": 2}
# Comprobación del ejercicio 11 · tolerancias: atol=2e-6, rtol=1e-5 (una cuenta en float32 también vale,
# sume como sume: cada operación en float32 pierde ~1e-7 relativo y hay hasta 51 términos)
with reference_blocked(*REFERENCIAS):
    p5 = checked_call(prob_mayoria, 0.6, 5)
    check_true(isinstance(p5, float), f"prob_mayoria debe devolver un float, pero devuelve {type(p5).__name__}")
    check_close(p5, 0.68256, atol=2e-6, rtol=1e-5, what="prob_mayoria(0.6, 5)",
                hint="10·0.6³·0.4² + 5·0.6⁴·0.4 + 0.6⁵")
    check_close(checked_call(prob_mayoria, 0.6, 1), 0.6, atol=2e-6, rtol=1e-5, what="un solo intento")
    check_raises(lambda: prob_mayoria(0.6, 4), ValueError, what="M par")
ok("cinco votos al 60 % aciertan el 68.3 % de las veces")
### BEGIN HIDDEN TESTS
with hidden("prob_mayoria: otros p y M, extremos y errores"):
    rng_t = np.random.default_rng(509)
    casos = [(float(rng_t.uniform()), int(2 * rng_t.integers(0, 30) + 1)) for _ in range(8)]
    casos += [(0.0, 7), (1.0, 9), (0.5, 21), (0.3, 101), (0.9, 59), (1, 5), (0, 3), (1, 1)]  # p entero: float igual
    esperados = [RZ.majority_vote_accuracy(p_h, M_h) for p_h, M_h in casos]
    with reference_blocked(*REFERENCIAS):
        for (p_h, M_h), esperado in zip(casos, esperados):
            obtenido = checked_call(prob_mayoria, p_h, M_h)
            check_true(isinstance(obtenido, float), "debe devolver un float (también con p entero)")
            check_close(obtenido, esperado, atol=2e-6, rtol=1e-5)
        for mal in [(1.5, 3), (-0.1, 3), (float("nan"), 3), (0.5, 0), (0.5, -3), (0.5, 2), (0.5, 3.0), (0.5, 2.5)]:
            check_raises(lambda mal=mal: prob_mayoria(*mal), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# La curva teórica frente a una simulación con `REPETICIONES_VOTO` votaciones por punto. Por encima de
# `p = 0.5` votar mejora (y cada vez más con más muestras); por debajo, **empeora**: si cada intento suele
# fallar, la mayoría falla con más seguridad. Votar amplifica, no corrige.

# %%
rng = np.random.default_rng(SEMILLA)
M_valores = list(range(1, 22, 2))
fig, ax = plt.subplots(figsize=(7, 4))
for p_dibujo, color in ((0.4, "tab:red"), (0.6, "tab:blue"), (0.8, "tab:green")):
    teoria = [RZ.majority_vote_accuracy(p_dibujo, M) for M in M_valores]
    simulada = [np.mean(rng.binomial(M, p_dibujo, size=REPETICIONES_VOTO) > M / 2) for M in M_valores]
    ax.plot(M_valores, teoria, color=color, label=f"binomial, p = {p_dibujo}")
    ax.plot(M_valores, simulada, "o", color=color, ms=4, label=f"simulación, p = {p_dibujo}")
ax.axvline(5, color="grey", ls=":", lw=1)
ax.annotate("p = 0.6, M = 5: 0.683", (5, 0.68256), xytext=(8, 0.58), arrowprops=dict(arrowstyle="->"))
ax.set_xlabel("número de muestras M")
ax.set_ylabel("acierto del voto por mayoría")
ax.set_title("Autoconsistencia: cuánto ayuda votar")
ax.legend(fontsize=8, ncol=2)
plt.tight_layout()
plt.show()

# %% [markdown]
# **Cómputo en inferencia, en tokens.** La curva dice cuánto gana el voto; la factura la pagan los tokens.
# Si cada cadena ocupa unos 400 tokens, votar entre `M` cadenas cuesta `M` veces eso, y la ganancia de cada
# cadena nueva es cada vez menor:

# %%
tokens_por_cadena = 400
for M in (1, 3, 5, 11, 21):
    print(f"M = {M:>2}: {fmt_int(M * tokens_por_cadena):>6} tokens generados;",
          "acierto con p = 0.6:", fmt_pct(RZ.majority_vote_accuracy(0.6, M)),
          " con p = 0.8:", fmt_pct(RZ.majority_vote_accuracy(0.8, M)))

# %% [markdown]
# **Un árbol de pensamientos en miniatura.** El capítulo propone planificar una agenda probando secuencias. El
# técnico del ticket tiene cuatro tareas, cada una con su duración y el minuto (desde ahora) en que debe estar
# terminada. Una cadena única propone un orden entero y lo comprueba al final; un árbol construye el orden paso a
# paso, evalúa cada plan a medio hacer y **poda** una rama en cuanto una tarea ya no puede cumplir su plazo.
# En un modelo real, proponer los pasos y evaluar los estados lo hace el propio LLM; aquí el evaluador es una
# cuenta exacta, para ver solo el efecto de podar.

# %%
tareas_ticket = {"responder al cliente": (20, 30), "pedir el cambio": (15, 40), "preparar la caja": (25, 70),
                 "avisar al mensajero": (10, 75)}  # nombre: (duración, plazo) en minutos


def plan_viable(orden):
    """¿Cumple su plazo cada tarea del plan (completo o a medio hacer)?"""
    reloj = 0
    for tarea in orden:
        reloj += tareas_ticket[tarea][0]
        if reloj > tareas_ticket[tarea][1]:
            return False
    return True


def arbol(orden=(), contador=None):
    """Búsqueda en profundidad que poda los planes parciales inviables; devuelve los planes completos viables."""
    contador["estados"] += 1
    if not plan_viable(orden):
        return []
    if len(orden) == len(tareas_ticket):
        return [orden]
    return [plan for tarea in tareas_ticket if tarea not in orden
            for plan in arbol(orden + (tarea,), contador)]


cuenta_arbol = {"estados": 0}
planes = arbol(contador=cuenta_arbol)
completos = list(itertools.permutations(tareas_ticket))
viables_fuerza_bruta = [o for o in completos if plan_viable(o)]
print("planes viables:", [" → ".join(p) for p in planes])
print(f"árbol con poda: {cuenta_arbol['estados']} estados evaluados;",
      f"probar todos los órdenes completos: {len(completos)} planes de {len(tareas_ticket)} pasos",
      f"({len(completos) * len(tareas_ticket)} pasos comprobados); mismo resultado: {planes == viables_fuerza_bruta}")

# %% [markdown]
# Votar no es la única forma de gastar cómputo en pensar. Otra es **verificar**: comprobar un resultado con
# una herramienta fiable. El capítulo planifica una salida: una reunión a las 16:00, llegar 10 minutos antes,
# 25 de taxi y 15 para prepararse. Hacia atrás: 16:00 − 10 = 15:50; − 25 = 15:25; − 15 = **15:10**.
#
# ### Ejercicio 12 · `hora_de_empezar` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15)`: `reunion` es una hora
# `"HH:MM"` de 24 horas y los otros tres argumentos son minutos (enteros). Devuelve la hora de empezar como
# texto `"HH:MM"` con dos cifras en horas y minutos, dando la vuelta a medianoche las veces que haga falta (empezar
# 45 minutos antes de las 00:20 es a las 23:35 del día anterior). Lanza `ValueError` si algún número de
# minutos es negativo.

# %% nbgrader={"grade_id": "hora_de_empezar", "solution": true}
def hora_de_empezar(reunion, antes=10, trayecto=25, preparacion=15):
    """Hora de empezar a prepararse, contando hacia atrás desde la reunión."""
    ### BEGIN SOLUTION
    for minutos in (antes, trayecto, preparacion):
        if minutos < 0:
            raise ValueError("los minutos no pueden ser negativos")
    horas, mins = reunion.strip().split(":")
    total = int(horas) * 60 + int(mins) - antes - trayecto - preparacion
    total %= 24 * 60
    return f"{total // 60:02d}:{total % 60:02d}"
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Pasa todo a minutos desde medianoche: `h * 60 + m`. Resta y vuelve a horas con `// 60` y `% 60`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Un número negativo de minutos se arregla con `% (24 * 60)`. Para las dos cifras: `f"{h:02d}:{m:02d}"`.
# </details>

# %% nbgrader={"grade_id": "test_hora_de_empezar", "grade": true, "points": 2}
# Comprobación del ejercicio 12
with reference_blocked(*REFERENCIAS):
    hora = checked_call(hora_de_empezar, "16:00")
    check_equal(hora, "15:10", what="la salida del capítulo", hint="16:00 − 10 − 25 − 15")
    check_equal(checked_call(hora_de_empezar, "00:20", 0, 45, 0), "23:35", what="cruzando la medianoche",
                hint="el resultado en minutos puede ser negativo: usa % (24 * 60)")
    check_equal(checked_call(hora_de_empezar, "09:30", 5, 10, 10), "09:05", what="con dos cifras",
                hint="f'{h:02d}:{m:02d}'")
    check_raises(lambda: hora_de_empezar("16:00", -5), ValueError, what="minutos negativos")
ok("a las 15:10, y la verificación cuadra: 15:10 + 15 + 25 + 10 = 16:00")
### BEGIN HIDDEN TESTS
with hidden("hora_de_empezar: horas aleatorias, medianoche y vuelta atrás"):
    rng_t = np.random.default_rng(510)
    casos = []
    for _ in range(10):
        reunion_h = f"{int(rng_t.integers(0, 24)):02d}:{int(rng_t.integers(0, 60)):02d}"
        mins = [int(v) for v in rng_t.integers(0, 200, size=3)]
        casos.append((reunion_h, mins, RZ.plan_start_time(reunion_h, *mins)))
    with reference_blocked(*REFERENCIAS):
        for reunion_h, mins, esperado in casos:
            obtenido = checked_call(hora_de_empezar, reunion_h, *mins)
            check_equal(obtenido, esperado)
            vuelta = (int(obtenido[:2]) * 60 + int(obtenido[3:]) + sum(mins)) % 1440
            check_equal(f"{vuelta // 60:02d}:{vuelta % 60:02d}", reunion_h)
        check_equal(checked_call(hora_de_empezar, "23:59", 0, 0, 0), "23:59")
        check_equal(checked_call(hora_de_empezar, "00:00", 1, 0, 0), "23:59")
        check_equal(checked_call(hora_de_empezar, "12:00", preparacion=60, antes=0, trayecto=0), "11:00")
        check_equal(checked_call(hora_de_empezar, "07:05", 300, 300, 300), "16:05")
        check_equal(checked_call(hora_de_empezar, "01:00", 1510, 0, 0), "23:50")  # un día y 70 minutos
        check_equal(checked_call(hora_de_empezar, "00:10", 1440, 1440, 11), "23:59")  # dos días y 11 minutos
        check_raises(lambda: hora_de_empezar("16:00", 0, -1, 0), ValueError)
        check_raises(lambda: hora_de_empezar("16:00", 0, 0, -30), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Otros mundos en forma de vectores
#
# Un modelo multimodal no «ve»: convierte la imagen en vectores que puede comparar o mezclar con los del texto.
# CLIP entrena un codificador de imágenes y uno de texto para que una foto y su descripción acaben apuntando
# en la misma dirección, y mide el parecido con la **similitud coseno**:
#
# $$\mathrm{sim}(v, t) = \frac{v \cdot t}{\lVert v\rVert\,\lVert t\rVert}$$
#
# El capítulo compara la foto de unos auriculares dañados con tres descripciones: «auriculares rotos» 0.82,
# «caja de zapatos» 0.31, «perro en un parque» 0.08. Aquí tienes vectores de juguete construidos para que
# salgan exactamente esos números; el vector de la imagen mide 3 y una cuarta descripción, «catálogo de
# electrónica», tiene un vector muy largo:

# %% nbgrader={"grade_id": "datos_clip", "locked": true}
# Datos del ejemplo (celda de solo lectura: las comprobaciones los usan).
base_clip, _ = np.linalg.qr(np.arange(1.0, 65.0).reshape(8, 8) ** 0.5 + np.eye(8))  # 8 direcciones ortonormales
descripciones = ["auriculares rotos", "caja de zapatos", "perro en un parque", "catálogo de electrónica"]
v_imagen = 3.0 * (0.82 * base_clip[:, 0] + 0.31 * base_clip[:, 1] + 0.08 * base_clip[:, 2]
                  + math.sqrt(1 - 0.82**2 - 0.31**2 - 0.08**2) * base_clip[:, 3])
t_textos = np.stack([base_clip[:, 0], base_clip[:, 1], base_clip[:, 2],
                     40.0 * (0.3 * base_clip[:, 0] + 0.3 * base_clip[:, 1] + math.sqrt(0.82) * base_clip[:, 4])])
print("longitud del vector de la imagen:", round(float(np.linalg.norm(v_imagen)), 3))
print("longitudes de los vectores de texto:", np.round(np.linalg.norm(t_textos, axis=1), 3))

# %% [markdown]
# ### Ejercicio 13 · `similitud_coseno`, encuentra el error (2 puntos · dificultad ★☆☆ · ~8 min)
#
# `similitud_coseno(v, t)` recibe dos vectores (arrays o listas) de la misma longitud y devuelve
# `v·t / (‖v‖‖t‖)` como `float`; lanza `ValueError` si alguno de los dos es el vector cero (no tiene dirección)
# o si sus longitudes no coinciden. Con la versión de la celda, el «catálogo de electrónica» le gana a
# «auriculares rotos» y los otros números cambian si la imagen mide 3 en vez de 1. Encuentra el error y
# corrígelo.

# %% nbgrader={"grade_id": "similitud_coseno", "solution": true}
def similitud_coseno(v, t):
    """Similitud coseno entre dos vectores."""
    v = np.asarray(v, dtype=float)
    t = np.asarray(t, dtype=float)
    if v.shape != t.shape:
        raise ValueError("los vectores deben tener la misma longitud")
    if not v.any() or not t.any():
        raise ValueError("el vector cero no tiene dirección")
    ### BEGIN SOLUTION
    return float(v @ t / (np.linalg.norm(v) * np.linalg.norm(t)))
    ### END SOLUTION
    ### BEGIN BUGGY
    # return float(v @ t)
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Mira las longitudes que imprime la celda de datos: el vector del catálogo mide 40. ¿Qué parte de la fórmula
# de arriba se encarga de que la longitud no cuente?
# </details>
#
# <details><summary>Pista 2</summary>
#
# `np.linalg.norm(v)` es la longitud de `v`. La similitud coseno solo mira la dirección de los dos vectores.
# </details>

# %% nbgrader={"grade_id": "test_similitud_coseno", "grade": true, "points": 2}
# Comprobación del ejercicio 13
with reference_blocked(*REFERENCIAS):
    sims = [checked_call(similitud_coseno, v_imagen, t) for t in t_textos]
    check_number(sims[0], what="la similitud", kind="float")
    check_close(sims[:3], [0.82, 0.31, 0.08], atol=1e-6, what="las tres descripciones del capítulo",
                hint="divide por las dos longitudes")
    check_true(max(range(4), key=lambda i: sims[i]) == 0,
               "«auriculares rotos» debe ganar aunque el vector del catálogo sea mucho más largo")
    check_close(checked_call(similitud_coseno, [1.0, 0.0], [0.0, 5.0]), 0.0, atol=1e-6, what="vectores perpendiculares")
    check_raises(lambda: similitud_coseno([0.0, 0.0], [1.0, 2.0]), ValueError, what="el vector cero")
ok("«auriculares rotos» gana con 0.82, pase lo que pase con las longitudes")
### BEGIN HIDDEN TESTS
with hidden("similitud_coseno: escala, vectores aleatorios, float32 y errores"):
    rng_t = np.random.default_rng(511)
    casos = []
    for d in (2, 3, 16, 64):
        v_h, t_h = rng_t.normal(size=d), rng_t.normal(size=d)
        casos.append((v_h, t_h, MM.cosine_similarity(v_h, t_h)))
    with reference_blocked(*REFERENCIAS):
        for v_h, t_h, esperado in casos:
            obtenido = checked_call(similitud_coseno, v_h, t_h)
            check_true(isinstance(obtenido, float), f"debe devolver un float de Python, no {type(obtenido).__name__}")
            check_close(obtenido, esperado, atol=1e-6)
            check_close(checked_call(similitud_coseno, 1000 * v_h, 0.01 * t_h), esperado, atol=1e-6)
            check_close(checked_call(similitud_coseno, v_h.astype(np.float32), t_h.astype(np.float32)), esperado, atol=1e-5)
        check_close(checked_call(similitud_coseno, [1, 2, 3], [-2, -4, -6]), -1.0, atol=1e-6)
        check_raises(lambda: similitud_coseno([1.0, 2.0], [0.0, 0.0]), ValueError)
        check_raises(lambda: similitud_coseno([1.0, 2.0], [1.0, 2.0, 3.0]), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# El ranking «zero-shot» de CLIP ordena las descripciones por similitud y se queda con la primera; no hizo
# falta entrenar un clasificador de «auriculares rotos». El mapa de calor compara además tres imágenes de
# juguete (la de los auriculares y dos más, construidas igual) con las cuatro descripciones:

# %%
ranking = MM.zero_shot_rank(v_imagen, t_textos, descripciones)
for puesto, (nombre, sim) in enumerate(ranking, start=1):
    print(f"{puesto}. {nombre:<26}{sim:.3f}")
imagenes = {"auriculares dañados": v_imagen, "zapatillas en su caja": 2.0 * (0.2 * base_clip[:, 0] + 0.9 * base_clip[:, 1]
            + math.sqrt(1 - 0.2**2 - 0.9**2) * base_clip[:, 5]), "perro corriendo": 5.0 * (0.05 * base_clip[:, 1]
            + 0.95 * base_clip[:, 2] + math.sqrt(1 - 0.05**2 - 0.95**2) * base_clip[:, 6])}
matriz_sim = np.array([[MM.cosine_similarity(v, t) for t in t_textos] for v in imagenes.values()])
fig, ax = plt.subplots(figsize=(7.5, 3.2))
im = ax.imshow(matriz_sim, cmap="viridis", vmin=-0.1, vmax=1)
for i in range(matriz_sim.shape[0]):
    for j in range(matriz_sim.shape[1]):
        ax.text(j, i, f"{matriz_sim[i, j]:.2f}", ha="center", va="center", color="white" if matriz_sim[i, j] < 0.6 else "black")
ax.set_xticks(range(4), descripciones, rotation=20, ha="right")
ax.set_yticks(range(3), list(imagenes))
ax.set_title("Similitud coseno imagen × descripción")
ax.grid(False)
fig.colorbar(im, ax=ax)
plt.tight_layout()
plt.show()

# %% [markdown]
# ¿Y cómo se convierte una imagen en tokens? Un Vision Transformer la corta en una rejilla de **parches**
# (típicamente de 16 × 16 píxeles), aplana cada parche en un vector y lo proyecta: «una imagen vale 16 × 16
# palabras». Una imagen de 224 × 224 píxeles con 3 canales da 14 × 14 = **196** parches de 16 · 16 · 3 = **768**
# números cada uno.
#
# ### Ejercicio 14 · `parchear` (2 puntos · dificultad ★★★ · ~15 min)
#
# Escribe `parchear(imagen, p=16)`: `imagen` es un array `(H, W, C)` (de floats o de enteros) y el resultado, un array de NumPy de
# floats de forma `(H/p · W/p, p·p·C)`. Los parches van por filas desde la esquina superior izquierda (primero
# el de arriba a la izquierda, luego el de su derecha…) y cada parche se aplana en el orden de la imagen:
# `parche.reshape(-1)`, con `parche = imagen[f*p:(f+1)*p, c*p:(c+1)*p, :]`. Lanza `ValueError` si `p` no
# divide a `H` o a `W`.
#
# Un bucle doble sobre filas y columnas de la rejilla vale. Si lo haces con `reshape`, ojo: un
# `imagen.reshape(-1, p*p*C)` directo da la forma correcta pero mezcla filas de parches distintos; hace falta
# un `transpose` entre medias.

# %% nbgrader={"grade_id": "parchear", "solution": true}
def parchear(imagen, p=16):
    """Corta una imagen (H, W, C) en parches p×p aplanados: (H/p·W/p, p·p·C)."""
    ### BEGIN SOLUTION
    imagen = np.asarray(imagen, dtype=float)
    H, W, C = imagen.shape
    if H % p or W % p:
        raise ValueError("p debe dividir al alto y al ancho")
    rejilla = imagen.reshape(H // p, p, W // p, p, C).transpose(0, 2, 1, 3, 4)
    return rejilla.reshape(-1, p * p * C)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Recorre la rejilla de parches en orden de lectura (fila a fila, de izquierda a derecha): cada parche es un
# trozo `p × p × C` de la imagen que se aplana en un vector. Dos bucles, una lista y `np.array` al final bastan.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Sin bucles: `imagen.reshape(H//p, p, W//p, p, C)` tiene los ejes (fila de la rejilla, fila dentro del parche,
# columna de la rejilla, columna dentro del parche, canal). Junta los dos de la rejilla con
# `.transpose(0, 2, 1, 3, 4)` antes del `reshape` final.
# </details>

# %% nbgrader={"grade_id": "test_parchear", "grade": true, "points": 2}
# Comprobación del ejercicio 14
imagen_vit = np.fromfunction(lambda y, x, c: np.sin(x / 17.0 + c) + np.cos(y / 23.0) + 0.01 * x * (c + 1),
                             (224, 224, 3))
with reference_blocked(*REFERENCIAS):
    parches = checked_call(parchear, imagen_vit, 16)
    check_array(parches, what="los parches", dtype="float", shape=(196, 768))
    check_close(parches[0], imagen_vit[:16, :16].reshape(-1), atol=1e-6, rtol=1e-6,
                what="el primer parche (arriba a la izquierda)")
    check_close(parches[1], imagen_vit[:16, 16:32].reshape(-1), atol=1e-6, rtol=1e-6, what="el segundo parche (a su derecha)",
                hint="recorre la rejilla por filas; un reshape directo mezcla filas de parches distintos")
    check_close(parches[14], imagen_vit[16:32, :16].reshape(-1), atol=1e-6, rtol=1e-6, what="el parche 14 (segunda fila)")
    check_raises(lambda: parchear(np.zeros((30, 32, 3)), 16), ValueError, what="un alto que 16 no divide")
ok("224×224×3 → 196 tokens de 768 números")
### BEGIN HIDDEN TESTS
with hidden("parchear: imágenes rectangulares, otros p, un canal y errores"):
    rng_t = np.random.default_rng(512)
    casos = []
    for H, W, Cn, p in [(32, 48, 3, 16), (6, 4, 2, 2), (9, 6, 1, 3), (8, 8, 4, 8), (5, 5, 3, 1)]:
        img = rng_t.normal(size=(H, W, Cn))
        casos.append((img, p, MM.patchify(img, p)))
    img_int = np.arange(4 * 6 * 2).reshape(4, 6, 2)  # una imagen de enteros: la salida sigue siendo de floats
    esperado_int = MM.patchify(img_int.astype(float), 2)
    with reference_blocked(*REFERENCIAS):
        for img, p, esperado in casos:
            obtenido = checked_call(parchear, img, p)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, atol=1e-6, rtol=1e-6)
        obtenido = checked_call(parchear, img_int, 2)
        check_array(obtenido, dtype="float", shape=(6, 8))
        check_close(obtenido, esperado_int, atol=0)
        check_raises(lambda: parchear(np.zeros((16, 20, 3)), 16), ValueError)
        check_raises(lambda: parchear(np.zeros((12, 12, 3)), 5), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# La rejilla de 14 × 14 parches sobre la imagen sintética, y los tres primeros parches como los «ve» el
# modelo: 768 números seguidos.

# %%
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [1, 1.4]})
visible = (imagen_vit - imagen_vit.min()) / (imagen_vit.max() - imagen_vit.min())
izq.imshow(visible)
for corte in range(0, 225, 16):
    izq.axhline(corte - 0.5, color="white", lw=0.6)
    izq.axvline(corte - 0.5, color="white", lw=0.6)
for n_parche in range(3):
    izq.text(8 + 16 * n_parche, 8, str(n_parche), color="black", ha="center", va="center", fontsize=8,
             bbox=dict(facecolor="white", pad=1))
izq.set_title("196 parches de 16×16")
izq.grid(False)
parches_ref = MM.patchify(imagen_vit, 16)
for n_parche in range(3):
    der.plot(parches_ref[n_parche], lw=0.7, label=f"parche {n_parche}")
der.set_xlabel("posición dentro del vector (768 = 16·16·3)")
der.set_title("Cada parche es un vector: un «token» de imagen")
der.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Del parche al token del LLM: el conector visual
#
# Los parches aún no son tokens que un LLM sepa leer. El patrón común de los modelos multimodales con conector
# (LLaVA es el ejemplo del capítulo) tiene cuatro piezas:
#
# $$u = f_{\text{visión}}(\text{parches}), \qquad \tilde u = P(u), \qquad
# y \sim p(y \mid \tilde u, x_{\text{texto}})$$
#
# 1. los parches (`196 × 768` para 224 × 224 píxeles) entran en un **codificador visual** (en LLaVA, el ViT
#    de CLIP, ya entrenado), que devuelve un vector de `d_visión` números por parche;
# 2. un **proyector** `P` (en la primera versión de LLaVA una sola capa lineal; en LLaVA-1.5, un MLP de dos
#    capas con GELU) lleva cada vector de `d_visión` a `d_model`, la anchura del LLM;
# 3. esos vectores se **concatenan** con los embeddings de los tokens del texto, como si fueran tokens más;
# 4. el LLM procesa la secuencia entera y genera la respuesta. A menudo solo se entrena el proyector (y
#    después, con cuidado, el LLM); el codificador visual se queda congelado.
#
# Otras familias conectan de otro modo: Flamingo deja la secuencia de texto como está y añade capas de
# atención cruzada que miran los vectores visuales; los modelos «encarnados» como PaLM-E meten en la misma
# secuencia texto, imágenes y lo que observa y hace un robot; y la tendencia de 2025 (Qwen-VL, InternVL, Llama 4) es la
# multimodalidad nativa o «fusión temprana»: imagen y texto se entrenan juntos desde el principio en lugar de
# pegar un codificador ya entrenado.
#
# Así se ven las formas con pesos aleatorios de tamaños pequeños (`d_visión = 256`, `d_model = 512`; en
# LLaVA-1.5 son 1024 y 4096, y su imagen de 336 píxeles en parches de 14 da 576 tokens visuales). El
# codificador es aquí una proyección lineal más posiciones, el primer paso de un ViT; uno real añade sus
# capas de Transformer sin cambiar la forma `(196, d_visión)`:

# %%
rng = np.random.default_rng(SEMILLA)
d_vision, d_modelo, vocabulario = 256, 512, 1000
parches_img = MM.patchify(imagen_vit, 16)  # (196, 768)
W_parche = rng.normal(0, 768**-0.5, size=(768, d_vision))
posiciones_vit = rng.normal(0, 0.02, size=(parches_img.shape[0], d_vision))
u_visual = parches_img @ W_parche + posiciones_vit  # salida del codificador visual: un vector por parche
W1, W2 = rng.normal(0, d_vision**-0.5, size=(d_vision, d_modelo)), rng.normal(0, d_modelo**-0.5, size=(d_modelo, d_modelo))
gelu = lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))
u_proyectado = gelu(u_visual @ W1) @ W2  # proyector MLP de dos capas, como en LLaVA-1.5
embedding_texto = rng.normal(0, 0.02, size=(vocabulario, d_modelo))
ids_pregunta = np.array([17, 402, 88, 9, 655, 31, 240, 5, 999])  # «¿Me lo cambian antes del viernes?» tokenizado
secuencia = np.concatenate([u_proyectado, embedding_texto[ids_pregunta]], axis=0)
for nombre, tensor in [("imagen", imagen_vit), ("parches", parches_img), ("salida del codificador visual u", u_visual),
                       ("tras el proyector P(u)", u_proyectado), ("tokens del texto", embedding_texto[ids_pregunta]),
                       ("secuencia que entra al LLM", secuencia)]:
    print(f"{nombre:<34}{str(tensor.shape):>16}")
print(f"la imagen ocupa {u_proyectado.shape[0]} de las {secuencia.shape[0]} posiciones; con 576 tokens por imagen,",
      f"cinco imágenes ocupan {fmt_int(5 * 576)} posiciones de contexto antes de la primera palabra")

# %% [markdown]
# ## 7. Atención `O(n²)` frente a una recurrencia `O(n)`
#
# La atención compara cada token con todos los anteriores: con `n` tokens son unos `n²/2` productos
# escalares, y duplicar el texto cuadruplica el trabajo. Los modelos de espacio de estados (SSM, como Mamba)
# llevan en cambio un **estado** de tamaño fijo que se actualiza una vez por token. La versión más simple es
# una recurrencia lineal:
#
# $$h_t = a \odot h_{t-1} + x_t, \qquad h_{-1} = 0$$
#
# `a` decide cuánto se recuerda del pasado (por canal): con `a = 0` no hay memoria y con `a = 1` el estado es
# la suma de todo lo visto. Los SSM reales hacen que `a` dependa del token («selectivos») y leen el estado con
# otra proyección; el coste es el mismo: `n` actualizaciones.
#
# ### Ejercicio 15 · `recurrencia_lineal` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `recurrencia_lineal(x, a)`: `x` es una matriz `(n, d)` (una fila por token) y `a` un número o un
# vector de longitud `d`. Devuelve un array de NumPy de floats `(n, d)` (también si `x` es de enteros) con todos los estados
# `h_0, …, h_{n−1}`. No modifiques `x`.

# %% nbgrader={"grade_id": "recurrencia_lineal", "solution": true}
def recurrencia_lineal(x, a):
    """Todos los estados de h_t = a * h_{t-1} + x_t, empezando en h_{-1} = 0."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    a = np.asarray(a, dtype=float)
    estados = np.zeros_like(x)
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = a * h + x[t]
        estados[t] = h
    return estados
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Un bucle sobre `t` con un estado `h` que empieza en ceros de longitud `d`; guarda una copia de cada estado
# en una matriz de salida nueva.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Si escribes `x[t] += a * x[t - 1]` obtienes los números correctos pero estropeas la `x` de quien te llama:
# trabaja sobre otra matriz.
# </details>

# %% nbgrader={"grade_id": "test_recurrencia_lineal", "grade": true, "points": 2}
# Comprobación del ejercicio 15
x_rec = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])
with reference_blocked(*REFERENCIAS):
    H_rec = checked_call(recurrencia_lineal, x_rec, 0.5)
    check_array(H_rec, what="los estados", dtype="float", shape=(3, 2))
    check_close(H_rec, [[1.0, 2.0], [0.5, 2.0], [3.25, 0.0]], atol=1e-6, what="a = 0.5",
                hint="h_1 = 0.5·[1, 2] + [0, 1] = [0.5, 2]")
    check_close(checked_call(recurrencia_lineal, x_rec, 0.0), x_rec, atol=1e-6, what="a = 0 (sin memoria)")
    check_close(checked_call(recurrencia_lineal, x_rec, 1.0), np.cumsum(x_rec, axis=0), atol=1e-6,
                what="a = 1 (suma acumulada)")
    check_close(checked_call(recurrencia_lineal, x_rec, np.array([0.0, 1.0])), [[1, 2], [0, 3], [3, 2]], atol=1e-6,
                what="un a por canal")
ok("un estado por token, calculado en una sola pasada")
### BEGIN HIDDEN TESTS
with hidden("recurrencia_lineal: entradas aleatorias, a por canal, listas y un solo token"):
    rng_t = np.random.default_rng(513)
    casos = []
    for n, d in [(10, 3), (1, 4), (25, 1), (7, 6)]:
        x_h = rng_t.normal(size=(n, d))
        a_h = rng_t.uniform(-1, 1, size=d)
        casos.append((x_h, a_h, REC.linear_recurrence(x_h, a_h)))
        casos.append((x_h, 0.9, REC.linear_recurrence(x_h, 0.9)))
    with reference_blocked(*REFERENCIAS):
        for x_h, a_h, esperado in casos:
            obtenido = checked_call(recurrencia_lineal, x_h, a_h)
            check_array(obtenido, dtype="float", shape=esperado.shape)
            check_close(obtenido, esperado, atol=1e-6, rtol=1e-6)
        check_close(checked_call(recurrencia_lineal, [[1.0], [1.0], [1.0]], 0.5), [[1.0], [1.5], [1.75]], atol=1e-6)
        obtenido = checked_call(recurrencia_lineal, np.array([[1], [1], [1]]), 0.5)  # x de enteros
        check_array(obtenido, dtype="float", shape=(3, 1))
        check_close(obtenido, [[1.0], [1.5], [1.75]], atol=1e-6)
### END HIDDEN TESTS

# %% [markdown]
# Ahora, a medir. Para cada longitud de `LONGITUDES` calculamos la atención causal completa (`llmlab.attention`,
# con la matriz `n × n` explícita) y la recurrencia, con vectores de 32 componentes. Los tiempos dependen de tu
# máquina, pero las pendientes no: en escala log-log, la atención sube con pendiente cercana a 2 y la
# recurrencia con pendiente 1. Para textos cortos la atención puede ganar (sus productos de matrices son muy
# rápidos y el bucle de Python no); al alargar el texto, la cuadrática acaba perdiendo.

# %% tags=["nbval-ignore-output"]
def mide(funcion, repeticiones=3):
    mejores = []
    for _ in range(repeticiones):
        inicio = time.process_time()  # tiempo de CPU: otra carga de la máquina apenas lo cambia
        funcion()
        mejores.append(time.process_time() - inicio)
    return min(mejores)


rng = np.random.default_rng(SEMILLA)
tiempos_atencion, tiempos_recurrencia = [], []
for n in LONGITUDES:
    Q_t, K_t, V_t = rng.normal(size=(3, n, 32))
    tiempos_atencion.append(mide(lambda: AT.causal_attention(Q_t, K_t, V_t)))
    tiempos_recurrencia.append(mide(lambda: REC.linear_recurrence(V_t, 0.9)))
pendiente_atencion = np.polyfit(np.log(LONGITUDES[-3:]), np.log(tiempos_atencion[-3:]), 1)[0]
pendiente_recurrencia = np.polyfit(np.log(LONGITUDES[-3:]), np.log(tiempos_recurrencia[-3:]), 1)[0]
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.8))
izq.loglog(LONGITUDES, tiempos_atencion, "o-", label=f"atención (pendiente {pendiente_atencion:.2f})")
izq.loglog(LONGITUDES, tiempos_recurrencia, "s-", label=f"recurrencia (pendiente {pendiente_recurrencia:.2f})")
izq.set_xlabel("longitud n (tokens)")
izq.set_ylabel("segundos de CPU")
izq.set_title("Medido en esta máquina")
izq.legend()
cuentas = [REC.attention_vs_recurrence_flops(n, 32) for n in LONGITUDES]
der.loglog(LONGITUDES, [c["attention"] for c in cuentas], "o-", label="atención: n(n+1)/2 · 2d")
der.loglog(LONGITUDES, [c["recurrence"] for c in cuentas], "s-", label="recurrencia: n · d")
der.set_xlabel("longitud n (tokens)")
der.set_ylabel("multiplicaciones-suma")
der.set_title("Contado")
der.legend()
plt.tight_layout()
plt.show()
print(f"de {LONGITUDES[0]} a {LONGITUDES[-1]} tokens: la atención tarda ×{tiempos_atencion[-1] / tiempos_atencion[0]:.0f},",
      f"la recurrencia ×{tiempos_recurrencia[-1] / tiempos_recurrencia[0]:.0f}")

# %% [markdown]
# Por eso la tendencia que describe el capítulo son los **híbridos**: unas pocas capas de atención (que miran
# todo el contexto con precisión) entre muchas capas de estado (baratas con textos largos), y atenciones que
# gastan menos memoria (GQA o la atención latente de DeepSeek que viste en la sección 3).
#
# ## 8. Errores frecuentes
#
# Tres tropiezos del capítulo ya los has arreglado: olvidar lo compartido al contar los activos (ejercicio 4),
# quedarse con la respuesta más larga (ejercicio 8) y comparar vectores con el producto escalar a secas
# (ejercicio 13). Aquí van los demás, escritos y en marcha; la misma clase de comprobación que corrige tus
# ejercicios los caza. Son los casos que buscan las pruebas ocultas.

# %%
detecta = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla

# 1. Pensar que los expertos son profesiones: un enrutador con reglas fijas («factura» → experto 2) en lugar
#    de puntuaciones aprendidas. Si se permutan las filas de W_r, la elección no se mueve con ellas.
def enrutador_por_palabras(x, W_r, k=2):
    return np.array([2, 0])[:k], np.array([0.5, 0.5])[:k]


rng_e = np.random.default_rng(SEMILLA + 51)
x_e, W_e = rng_e.normal(size=4), rng_e.normal(size=(6, 4))
permutacion = np.array([5, 3, 1, 0, 2, 4])
elegidos_perm = permutacion[enrutador_por_palabras(x_e, W_e[permutacion])[0]]
detecta("expertos con etiqueta fija", lambda: check_equal(elegidos_perm, MOE.route(x_e, W_e, 2)[0], what="elección"))

# 2. Comparar parámetros totales sin mirar los activos (o contar activos = total).
detecta("activos = total", lambda: check_close(47e9, 13e9, rtol=0.01, what="activos de Mixtral"))

# 3. Evaluar una arquitectura nueva con una sola nota global: el 90 % esconde un tramo al 40 %.
aciertos = {"general": [1] * 86 + [0] * 4, "enrutado": [1] * 4 + [0] * 6}
global_ = sum(sum(v) for v in aciertos.values()) / sum(len(v) for v in aciertos.values())
por_tramo = {tramo: sum(v) / len(v) for tramo, v in aciertos.items()}
print(f"nota global {global_:.2f};", ", ".join(f"tramo {t}: {a:.2f}" for t, a in por_tramo.items()))
detecta("solo la nota global", lambda: check_true(min(por_tramo.values()) >= 0.8,
                                                   "ningún tramo de la evaluación debe quedar por debajo de 0.8"))

# 4. argsort ascendente: se eligen los expertos MENOS probables.
detecta("argsort ascendente", lambda: check_equal(np.argsort(g_libro)[:2], [0, 1], what="expertos de g del libro"))

# 5. Softmax sin restar el máximo: con logits [1000, 999] sale nan.
with np.errstate(over="ignore", invalid="ignore"):
    ingenua = np.exp([1000.0, 999.0]) / np.exp([1000.0, 999.0]).sum()
detecta("softmax sin restar el máximo", lambda: check_close(ingenua, [0.731059, 0.268941], atol=1e-6, what="softmax"))

# 6. Pesar a los expertos con los logits en vez de con las probabilidades.
s_libro = np.log(g_libro)
detecta("pesos con los logits", lambda: check_close(s_libro[:2] / s_libro[:2].sum(), [0.720930, 0.279070],
                                                     atol=1e-3, what="pesos"))

# 7. Un experto de más: [:k+1].
detecta("k + 1 expertos", lambda: check_close(g_libro[:3] / g_libro[:3].sum(), [0.720930, 0.279070], atol=1e-3,
                                               what="pesos"))

# 8. Calcular todos los expertos y multiplicar los sobrantes por cero: mismo número, coste de modelo denso.
llamadas.clear()
todos = sum(w * e(np.array([1.0, 0.5])) for w, e in zip([0.720930, 0.279070, 0.0, 0.0], expertos_libro))
detecta("todos los expertos calculados", lambda: check_equal(len(llamadas), 2, what="expertos llamados"))

# %% [markdown]
# ## 9. Pregunta para razonar (corrección manual · 3 puntos · ~25 min)
#
# Un proveedor anuncia: «nuestro nuevo modelo MoE tiene 200B parámetros pero cuesta como uno de 20B». Con lo
# que has visto en este lab, en 8-12 líneas:
#
# (a) ¿En qué sentido es verdad y en qué sentido no? Habla de memoria para cargarlo y de cómputo por token
# (usa `N·b/8` con 16 y 4 bits), y di qué número de su ficha técnica necesitarías y por qué «activos» puede
# significar cosas distintas. (b) Interpreta el experimento de la sección 4 con los números de su tabla: ¿se
# desequilibró alguna capa sin la pérdida auxiliar? ¿Qué consiguió la pérdida auxiliar con cada coeficiente y
# a qué precio en pérdida de validación, y cuánto de eso se sostiene en las tres semillas? ¿Cómo queda el MoE frente al denso del mismo tamaño activo, en
# pérdida y en tiempo por paso, y por qué el tiempo no es proporcional a los parámetros activos? (c) Nombra
# dos problemas de servir un MoE que no aparecen en un modelo denso.
#
# **Rúbrica (3 puntos):** (a) 1 punto, memoria según el total y cómputo según los activos, con una cuenta y la
# ambigüedad del embedding; (b) 1 punto, lectura correcta y honesta de la tabla (carga máxima, pérdida,
# tiempo); (c) 1 punto, dos problemas concretos (equilibrio entre expertos, memoria de todos los expertos,
# comunicación entre dispositivos, lotes que tocan muchos expertos…).

# %% [markdown] nbgrader={"grade_id": "respuesta_moe", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# (a) Es verdad para el cómputo: si 20B de sus 200B parámetros están activos, cada token hace unas
# `2·20e9` operaciones, como un denso de 20B, y lee unos 40 GB de pesos en 16 bits. No lo es para la memoria:
# hay que tener cargados los 200B, 400 GB en 16 bits o 100 GB en 4 bits, frente a 40 GB / 10 GB del denso.
# Necesitaría el total y los activos exactos, el número de expertos, `k` y si hay expertos compartidos; y
# saber si «activos» incluye la tabla de embedding (Mixtral y Qwen la cuentan, gpt-oss y DeepSeek no).
#
# (b) Se lee la carga máxima de validación de cada MoE frente a 0.25 (reparto perfecto) y 0.5 (un experto
# elegido por todos los tokens) y se dice, capa a capa, si hubo desequilibrio, sin suponerlo. Se compara lo
# que baja esa carga con 0.01 y con 0.1 y lo que cambia la pérdida de validación, y se nota que la pérdida
# auxiliar puede quedar por debajo de k sin que las cargas se igualen (con top-2 basta con dar poca
# probabilidad a los segundos elegidos). El MoE tiene más parámetros totales que el denso con los mismos
# activos: si su pérdida es mejor, es por esa capacidad extra. La tabla de las tres semillas pone cada
# diferencia en su sitio: una que cabe dentro del intervalo de una semilla a otra no dice nada (con estos
# números, 0.01 no reparte en ninguna semilla y 0.1 reparte de media pero no siempre; las pérdidas de las cuatro
# ejecuciones se separan menos que lo que cambia cada una con la semilla). En el tiempo, los tres MoE tienen la
# misma arquitectura: lo que se separan entre sí sus cocientes es el ruido de la medida, y el MoE solo es más
# lento que el denso si lo es por más que eso. El tiempo por paso no tiene por qué seguir a los activos:
# repartir los tokens entre expertos (un bucle por experto, índices, copias y el enrutador) añade trabajo que
# un único producto de matrices grande no tiene, y en CPU y con modelos pequeños ese trabajo pesa.
#
# (c) El equilibrio de carga (expertos saturados y otros ociosos), la memoria de todos los expertos aunque
# cada token use pocos, y en varios dispositivos la comunicación de tokens entre expertos; además, un lote
# grande toca casi todos los expertos, así que el ahorro por token no se traslada igual a la lectura de pesos.
# ### END SOLUTION

# %% [markdown]
# ## Resumen
#
# - Tres palancas (capacidad, proceso, entrada) y tres niveles (arquitectura, modelo entrenado, sistema)
#   ordenan las novedades: MoE es una arquitectura, Mixtral un modelo y RAG un sistema.
# - Un MoE elige `k` de `n` expertos por token con un enrutador: softmax, top-k y renormalización
#   (0.62 y 0.24 → 0.721 y 0.279). Solo se calculan los elegidos.
# - `total = S + n·E` y `activos = S + k·E`: Mixtral, ≈47B y ≈13B (S ≈ 1.67B, E ≈ 5.67B); DeepSeek-V3,
#   671B y 37B, un 5.5 %. La memoria sigue al total; el cómputo, a los activos. «Activos» se cuenta con o sin
#   embedding según el fabricante.
# - Nada obliga al enrutador a repartir: la carga de cada experto se mide, y la pérdida auxiliar `n·Σ f_i P_i`
#   (k si reparte bien, hasta n si colapsa) empuja hacia el equilibrio, pero no lo garantiza. El experimento
#   de la sección 4 mide qué pasa a escala diminuta.
# - Razonar es gastar cómputo al responder: una cadena de pensamiento escribe los pasos, la autoconsistencia
#   vota entre varias cadenas, un árbol de pensamientos ramifica y poda, y la verificación lo comprueba con
#   una herramienta. Para votar sobre cadenas completas primero hay que extraer su respuesta (el último
#   número, con signo y decimales) y decidir qué hacer con las que no responden.
# - Votar (14:30 por 3 de 5; 69 por 4 de 6) ayuda si cada intento acierta más de la mitad de las veces y
#   perjudica si no, y cada cadena cuesta sus tokens; verificar con aritmética (15:10) no depende de la suerte.
# - Las imágenes se comparan con texto por dirección (similitud coseno: 0.82, 0.31, 0.08) y se convierten en
#   tokens por parches (224×224×3 → 196 × 768); un proyector lleva la salida del codificador visual a
#   `d_model` y esos vectores se concatenan con los tokens del texto (LLaVA).
# - La atención cuesta `O(n²)`; una recurrencia con estado, `O(n)`. Los modelos recientes mezclan ambas.
#
# ## Para ir más allá (opcional, sin nota y fuera del tiempo estimado)
#
# 1. **Un árbol con haz.** Añade una quinta tarea a `tareas_ticket` (por ejemplo «actualizar el pedido», 10
#    minutos, plazo 85) y cambia `arbol` para que en cada profundidad conserve solo los `B` planes parciales con
#    más margen (la menor diferencia entre plazo y reloj de sus tareas). Para cuando tengas una tabla con `B = 1,
#    2, 3` y sin límite: estados evaluados y si encuentra algún plan viable.
# 2. **Errores que no se ponen de acuerdo.** `prob_mayoria` supone que todos los fallos dan la misma respuesta.
#    Simula un resolvedor que acierta con `p = 0.4` y, cuando falla, elige al azar entre `K` respuestas
#    equivocadas, y vota con tu `autoconsistencia`. Para cuando tengas en una figura el acierto frente a `M`
#    (1 a 21, impares) para `K = 1` y `K = 5`: con errores dispersos, ¿sigue empeorando el voto por debajo de 0.5?
#
# ## Para saber más
#
# - N. Shazeer et al. (2017), *Outrageously large neural networks: the sparsely-gated mixture-of-experts
#   layer*; W. Fedus, B. Zoph y N. Shazeer (2022), *Switch Transformers* (la pérdida auxiliar de balanceo).
# - A. Q. Jiang et al. (2024), *Mixtral of experts*; DeepSeek-AI (2024), *DeepSeek-V3 technical report*
#   (expertos compartidos, atención latente y balanceo sin pérdida auxiliar).
# - X. Wang et al. (2023), *Self-consistency improves chain of thought reasoning in language models*; J. Wei
#   et al. (2022), *Chain-of-thought prompting*; S. Yao et al. (2023), *Tree of thoughts*.
# - A. Radford et al. (2021), *Learning transferable visual models from natural language supervision* (CLIP);
#   A. Dosovitskiy et al. (2021), *An image is worth 16x16 words* (ViT).
# - A. Gu y T. Dao (2023), *Mamba: linear-time sequence modeling with selective state spaces*.
# - En `llmlab`: `llmlab.moe` (enrutador, cargas, pérdida auxiliar y `SparseMoE`, comprobados contra
#   `transformers`), `llmlab.cost` (las cuentas exactas de Mixtral, Qwen3-MoE, DeepSeek-V3 y gpt-oss) y
#   `benchmarks/moe_load_balance.py` (el experimento de la sección 4).
