"""Wrong implementations of lab 09's exercises: chapter 08's and the inference guide's common mistakes, and the
families every lab covers (boundaries, units, return types, ignored optional arguments, missing errors, inputs
changed in place).

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the llmlab function
that does the same job (with the aliases of the lab's setup cell); the harness adds a mutant that merely calls it.
"""

LAB = "lab09-disecciona-una-llamada"

REFERENCES = {
    "tokens_per_word": "D.tokens_per_word",
    "words_per_second": "D.words_per_second",
    "answer_perplexity": "D.answer_perplexity",
    "generate_with_stops": "D.generate_with_stops",
    "kv_mib_per_token": "C.kv_mib_per_token",
    "kv_gib_for_context": "C.kv_gib_for_context",
    "fits_on_device": "D.fits_on_device",
    "diagnose": "D.diagnose",
    "score_options": "D.score_options",
    "kv_growth_over_turns": "D.kv_growth_over_turns",
    "recommend_model_type": "D.recommend_model_type",
}

def _filler(template, correct):
    """Source of the correct answer written as `template`, with the pieces a mutant names changed."""
    return lambda **change: template.format(**{**correct, **change})


# --- Exercise 1: tokens per word, words per second ---------------------------------------------------------------
_TPW = """
def tokens_per_word(n_words, n_tokens):
    {tpw_check}
    return {tpw}


def words_per_second(tokens_per_s, tokens_per_word):
    {wps_check}
    return {wps}
"""
_TPW_OK = dict(
    tpw_check='if n_words <= 0 or n_tokens < 0:\n        raise ValueError("mal")',
    tpw="float(n_tokens) / float(n_words)",
    wps_check='if tokens_per_s < 0 or tokens_per_word <= 0:\n        raise ValueError("mal")',
    wps="float(tokens_per_s) / float(tokens_per_word)",
)


_tpw = _filler(_TPW, _TPW_OK)


# --- Exercise 2: answer perplexity ------------------------------------------------------------------------------
_PPL = """
def answer_perplexity(model, prompt_ids, answer_ids):
    prompt = [int(t) for t in prompt_ids]
    answer = [int(t) for t in answer_ids]
    {check}
    with torch.no_grad():
        logits = model(torch.tensor([prompt + answer]))[0].double()
    logp = {logp}
    nll = [-float(logp[{position}, t]) for j, t in enumerate(answer)]
    {ret}
"""
_PPL_OK = dict(
    check='if not prompt or not answer:\n        raise ValueError("vacío")',
    logp="torch.log_softmax(logits, dim=-1)",
    position="len(prompt) - 1 + j",
    ret="return math.exp(sum(nll) / len(nll))",
)


_ppl = _filler(_PPL, _PPL_OK)


# --- Exercise 3: the decode loop and its stops ------------------------------------------------------------------
_LOOP = """
def generate_with_stops(next_token, prompt_ids, max_tokens, eos_id=None, stop_sequences=()):
    {check}
    paradas = [list(s) for s in stop_sequences]
    {empty_check}
    generados = []
    while {cond}:
        token = int(next_token({context}))
        {eos}
        generados.append(token)
        for s in paradas:
            if {match}:
                return {{"ids": {stop_ids}, "stop_reason": {stop_reason}}}
    return {{"ids": generados, "stop_reason": "max_tokens"}}
"""
_LOOP_OK = dict(
    check='if max_tokens < 0:\n        raise ValueError("max_tokens")',
    empty_check='if any(len(s) == 0 for s in paradas):\n        raise ValueError("vacía")',
    cond="len(generados) < max_tokens",
    context="list(prompt_ids) + generados",
    eos='if eos_id is not None and token == eos_id:\n            return {"ids": generados, "stop_reason": "eos"}',
    match="generados[-len(s):] == s",
    stop_ids="generados[:-len(s)]",
    stop_reason='"stop_sequence"',
)


_loop = _filler(_LOOP, _LOOP_OK)


# --- Exercise 4: the KV rule of thumb ---------------------------------------------------------------------------
_KV = """
def kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    {check}
    return {mib}


def kv_gib_for_context(tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2):
    {tokens_check}
    return {gib}
"""
_KV_OK = dict(
    check='if min(n_layers, n_kv_heads, head_dim, bytes_per_value) <= 0:\n        raise ValueError("mal")',
    mib="2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 2**20",
    tokens_check='if tokens < 0:\n        raise ValueError("mal")',
    gib="tokens * kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value) / 1024",
)


_kv = _filler(_KV, _KV_OK)


# --- Exercise 5: does it fit? -----------------------------------------------------------------------------------
_FIT = """
def fits_on_device(n_params, weight_bits, context, n_layers, n_kv_heads, head_dim, device_gb,
                   kv_bytes=2, batch=1, reserve_gb=0.0):
    {check}
    pesos_gb = {weights}
    kv_gb = {kv}
    return {ret}
"""
_FIT_OK = dict(
    check=('if (n_params < 0 or weight_bits <= 0 or context < 0 or batch < 1 or kv_bytes <= 0 or device_gb <= 0\n'
           '            or reserve_gb < 0):\n        raise ValueError("mal")'),
    weights="n_params * weight_bits / 8 / 1e9",
    kv="2 * n_layers * batch * context * n_kv_heads * head_dim * kv_bytes / 1e9",
    ret="bool(pesos_gb + kv_gb + reserve_gb <= device_gb)",
)


_fit = _filler(_FIT, _FIT_OK)


# --- Exercise 6: symptom -> stage -------------------------------------------------------------------------------
_ROWS = [
    ("respuesta cortada", "contrato de salida"), ("json inválido", "decodificación"), ("tarda en empezar", "prefill"),
    ("empieza rápido y acaba lento", "decode"), ("se queda sin memoria", "entorno de ejecución"), ("repite frases", "muestreo"),
    ("responde sin citar", "contexto"), ("seguro pero equivocado", "evaluación"),
    ("cambia entre ejecuciones", "reproducibilidad"), ("usa mal una herramienta", "herramientas"),
]


def _diagnose(rows=None, key="' '.join(str(symptom).lower().split())", unknown='raise ValueError("desconocido")'):
    table = ",\n        ".join(f"{s!r}: {e!r}" for s, e in (rows or _ROWS))
    return f"""
def diagnose(symptom):
    tabla = {{
        {table}
    }}
    clave = {key}
    if clave not in tabla:
        {unknown}
    return tabla[clave]
"""


def _swap(a, b):
    stages = dict(_ROWS)
    stages[a], stages[b] = stages[b], stages[a]
    return list(stages.items())


# --- Exercise 7: the decision matrix ----------------------------------------------------------------------------
_SCORE = """
def score_options(options, weights, minimums=None):
    {neg_check}
    total = {total}
    {zero_check}
    minimos = minimums or {{}}
    resultado = []
    for nombre, notas in options.items():
        {missing_check}
        if {excluded}:
            continue
        resultado.append((nombre, {score}))
    return {ret}
"""
_SCORE_OK = dict(
    neg_check='if any(w < 0 for w in weights.values()):\n        raise ValueError("negativo")',
    total="sum(weights.values())",
    zero_check='if total == 0:\n        raise ValueError("cero")',
    missing_check='if any(c not in notas for c in weights):\n            raise ValueError("falta")',
    excluded="any(c not in notas or notas[c] < m for c, m in minimos.items())",
    score="sum(w * notas[c] for c, w in weights.items()) / total",
    ret="sorted(resultado, key=lambda par: (-par[1], par[0]))",
)


_score = _filler(_SCORE, _SCORE_OK)


# --- Exercise 6: the KV cache of a chat, turn by turn --------------------------------------------------------------
_GROWTH = """
def kv_growth_over_turns(turn_tokens, n_layers, n_kv_heads, head_dim, bytes_per_value=2, system_tokens=0):
    {check}
    for n in {counted}:
        {count_check}
    por_token = {per_token}
    historia, crecimiento = {start}, []
    for n in turn_tokens:
        {accumulate}
        crecimiento.append({value})
    return {ret}
"""
_GROWTH_OK = dict(
    check='if min(n_layers, n_kv_heads, head_dim, bytes_per_value) <= 0:\n        raise ValueError("mal")',
    counted="[system_tokens, *turn_tokens]",
    count_check='if n < 0 or n != int(n):\n            raise ValueError("mal")',
    per_token="2 * n_layers * n_kv_heads * head_dim * bytes_per_value",
    start="system_tokens",
    accumulate="historia += n",
    value="float(historia * por_token / 2**30)",
    ret="crecimiento",
)


_growth = _filler(_GROWTH, _GROWTH_OK)


# --- Exercise 9: which kind of model to start from --------------------------------------------------------------
_TYPE = """
def recommend_model_type(turns, fine_tune=False, tools=False, reasoning=False):
    {check}
    {first}
    {second}
    {third}
    return {last}
"""
_TYPE_OK = dict(
    check='if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:\n        raise ValueError("mal")',
    first='if fine_tune:\n        return "base"',
    second='if tools:\n        return "herramientas"',
    third='if reasoning:\n        return "razonamiento"',
    last='"chat" if turns > 1 else "instruido"',
)


_type = _filler(_TYPE, _TYPE_OK)


MUTANTS = {
    "tokens_por_palabra": {
        "palabras por token (al revés)": _tpw(tpw="float(n_words) / float(n_tokens)"),
        "multiplica tok/s por tokens por palabra": _tpw(wps="float(tokens_per_s) * float(tokens_per_word)"),
        "división entera": _tpw(tpw="n_tokens // n_words", wps="tokens_per_s // tokens_per_word"),
        "devuelve un int redondeado": _tpw(tpw="round(n_tokens / n_words)"),
        "sin ValueError en tokens_per_word": _tpw(tpw_check="pass"),
        "sin ValueError en words_per_second": _tpw(wps_check="pass"),
        "acepta n_words = 0 (<= por <)": _tpw(
            tpw_check='if n_words < 0 or n_tokens < 0:\n        raise ValueError("mal")',
            tpw="float(n_tokens) / float(n_words) if n_words else 0.0"),
        "rechaza tokens_per_s = 0": _tpw(
            wps_check='if tokens_per_s <= 0 or tokens_per_word <= 0:\n        raise ValueError("mal")'),
    },
    "perplejidad_respuesta": {
        "sin desplazar (logits de la misma posición)": _ppl(position="len(prompt) + j"),
        "promedia también el prompt": _ppl(
            ret=("todos = [-float(logp[i, t]) for i, t in enumerate((prompt + answer)[1:])]\n"
                 "    return math.exp(sum(todos) / len(todos))")),
        "divide por la longitud total": _ppl(ret="return math.exp(sum(nll) / (len(prompt) + len(answer)))"),
        "sin softmax (logits crudos)": _ppl(logp="logits"),
        "softmax en float32 y después log (inestable)": _ppl(logp="torch.softmax(logits.float(), dim=-1).log()"),
        "devuelve la NLL media, sin exp": _ppl(ret="return sum(nll) / len(nll)"),
        "en base 2": _ppl(ret="return 2 ** (sum(nll) / len(nll))"),
        "media de probabilidades": _ppl(ret="return 1 / (sum(math.exp(-x) for x in nll) / len(nll))"),
        "devuelve un tensor": _ppl(ret="return torch.exp(torch.tensor(sum(nll) / len(nll)))"),
        "modifica prompt_ids": _ppl(
            check=('if not prompt or not answer:\n        raise ValueError("vacío")\n'
                   '    if isinstance(prompt_ids, list):\n        prompt_ids += answer')),
        "sin ValueError con la respuesta vacía": _ppl(
            check="if not answer:\n        return 1.0"),
    },
    "bucle_con_paradas": {
        "un token de más (<= max_tokens)": _loop(cond="len(generados) <= max_tokens"),
        "ignora el EOS": _loop(eos="pass"),
        "incluye el EOS": _loop(
            eos=('if eos_id is not None and token == eos_id:\n'
                 '            return {"ids": generados + [token], "stop_reason": "eos"}')),
        "deja la secuencia de parada": _loop(stop_ids="generados"),
        "busca la parada también en el prompt": _loop(
            match="(list(prompt_ids) + generados)[-len(s):] == s", stop_ids="generados[:len(generados) - len(s)]"),
        "el modelo solo ve lo generado": _loop(context="generados or list(prompt_ids)"),
        "motivo «length» en vez de «stop_sequence»": _loop(stop_reason='"length"'),
        "sin ValueError con max_tokens negativo": _loop(check="pass"),
        "modifica prompt_ids": _loop(context="(prompt_ids.extend(generados[-1:]) or list(prompt_ids)) if isinstance(prompt_ids, list) else list(prompt_ids) + generados"),
        "sin ValueError con una parada vacía": _loop(empty_check="paradas = [s for s in paradas if s]"),
    },
    "regla_kv": {
        "MB decimales con etiqueta MiB": _kv(mib="2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 1e6"),
        "olvida el 2 de claves y valores": _kv(mib="n_layers * n_kv_heads * head_dim * bytes_per_value / 2**20"),
        "GB decimales en el contexto": _kv(
            gib="tokens * 2 * n_layers * n_kv_heads * head_dim * bytes_per_value / 1e9"),
        "ignora bytes_per_value": _kv(mib="2 * n_layers * n_kv_heads * head_dim * 2 / 2**20"),
        "contexto en MiB (sin /1024)": _kv(gib="tokens * kv_mib_per_token(n_layers, n_kv_heads, head_dim, bytes_per_value)"),
        "división entera": _kv(mib="2 * n_layers * n_kv_heads * head_dim * bytes_per_value // 2**20"),
        "sin ValueError": _kv(check="pass", tokens_check="pass"),
        "sin ValueError con tokens negativos": _kv(tokens_check="pass"),
    },
    "cabe_en_gpu": {
        "aplica los bits de los pesos a la caché": _fit(
            kv="2 * n_layers * batch * context * n_kv_heads * head_dim * weight_bits / 8 / 1e9"),
        "ignora la caché (solo el contexto máximo)": _fit(kv="0.0"),
        "caché en GiB": _fit(kv="2 * n_layers * batch * context * n_kv_heads * head_dim * kv_bytes / 2**30"),
        "pesos en bytes por bit (sin /8)": _fit(weights="n_params * weight_bits / 1e9"),
        "justo lleno no cabe (< en vez de <=)": _fit(ret="bool(pesos_gb + kv_gb + reserve_gb < device_gb)"),
        "ignora el lote": _fit(kv="2 * n_layers * context * n_kv_heads * head_dim * kv_bytes / 1e9"),
        "ignora la reserva": _fit(ret="bool(pesos_gb + kv_gb <= device_gb)"),
        "ignora kv_bytes (siempre FP16)": _fit(kv="2 * n_layers * batch * context * n_kv_heads * head_dim * 2 / 1e9"),
        "devuelve los GB que faltan": _fit(ret="device_gb - (pesos_gb + kv_gb + reserve_gb)"),
        "sin ValueError": _fit(check="pass"),
    },
    "diagnostico": {
        "prefill y decode cambiados": _diagnose(_swap("tarda en empezar", "empieza rápido y acaba lento")),
        "JSON inválido al prefill": _diagnose(
            [(s, "prefill" if s == "json inválido" else e) for s, e in _ROWS]),
        "memoria al decode": _diagnose(_swap("se queda sin memoria", "empieza rápido y acaba lento")),
        "repeticiones a la evaluación": _diagnose(_swap("repite frases", "seguro pero equivocado")),
        "la memoria con la etiqueta inglesa «runtime»": _diagnose(
            [(s, "runtime" if s == "se queda sin memoria" else e) for s, e in _ROWS]),
        "distingue mayúsculas": _diagnose(key="str(symptom)"),
        "síntoma desconocido → evaluación": _diagnose(unknown='return "evaluación"'),
    },
    "matriz_decision": {
        "ignora los pesos (media simple)": _score(
            total="len(weights)", score="sum(notas[c] for c in weights) / total"),
        "ordena por parámetros": _score(ret="sorted(resultado, key=lambda par: -options[par[0]].get('parametros_b', 0))"),
        "no normaliza los pesos": _score(score="sum(w * notas[c] for c, w in weights.items())"),
        "de menor a mayor": _score(ret="sorted(resultado, key=lambda par: (par[1], par[0]))"),
        "empates en orden inverso": _score(ret="sorted(resultado, key=lambda par: (par[1], par[0]), reverse=True)"),
        "ignora los mínimos": _score(excluded="False"),
        "mínimo estricto (<= en vez de <)": _score(excluded="any(notas[c] <= m for c, m in minimos.items())"),
        "cuenta todos los criterios de la opción": _score(
            score="sum(weights.get(c, 1) * v for c, v in notas.items()) / total"),
        "devuelve un dict": _score(ret="dict(sorted(resultado, key=lambda par: (-par[1], par[0])))"),
        "sin ValueError con pesos negativos": _score(neg_check="pass"),
        "sin ValueError con todos los pesos a cero": _score(zero_check="total = total or 1"),
        "modifica las opciones (quita parametros_b)": _score(
            missing_check=('notas.pop("parametros_b", None)\n'
                           '        if any(c not in notas for c in weights):\n            raise ValueError("falta")')),
        "sin ValueError si falta una nota": _score(
            missing_check="pass", score="sum(w * notas.get(c, 0) for c, w in weights.items()) / total"),
    },
    "kv_por_turnos": {
        "solo el turno, sin la historia": _growth(value="float(n * por_token / 2**30)"),
        "ignora el sistema": _growth(start="0"),
        "suma el sistema en cada turno": _growth(accumulate="historia += n + system_tokens"),
        "GB decimales": _growth(value="float(historia * por_token / 1e9)"),
        "olvida el 2 de claves y valores": _growth(per_token="n_layers * n_kv_heads * head_dim * bytes_per_value"),
        "ignora bytes_per_value": _growth(per_token="2 * n_layers * n_kv_heads * head_dim * 2"),
        "devuelve un array de NumPy": _growth(ret="np.array(crecimiento)"),
        "devuelve solo el último valor": _growth(ret="crecimiento[-1] if crecimiento else 0.0"),
        "acepta tokens no enteros": _growth(count_check='if n < 0:\n            raise ValueError("mal")'),
        "no valida el sistema": _growth(counted="turn_tokens"),
        "sin ValueError en la configuración": _growth(check="pass"),
    },
    "tipo_de_modelo": {
        "herramientas antes que el ajuste fino": _type(
            first='if tools:\n        return "herramientas"', second='if fine_tune:\n        return "base"'),
        "razonamiento antes que herramientas": _type(
            second='if reasoning:\n        return "razonamiento"', third='if tools:\n        return "herramientas"'),
        "chat desde un turno (>= 1)": _type(last='"chat" if turns >= 1 else "instruido"'),
        "nombres en inglés": _type(last='"chat" if turns > 1 else "instruct"'),
        "tool-tuned en inglés": _type(second='if tools:\n        return "tool-tuned"'),
        "ignora reasoning": _type(third="pass"),
        "acepta un bool": _type(check='if not isinstance(turns, int) or turns < 1:\n        raise ValueError("mal")'),
        "acepta 1.5": _type(check='if turns < 1:\n        raise ValueError("mal")'),
        "sin ValueError": _type(check="pass"),
    },
}

# --- Audit by family (issue 26): written from the statements alone. A float promised and an int returned, a tuple
# promised and a list returned, an EOS id of 0, boundaries (a context of 0), validation. ---------------------------
MUTANTS["tokens_por_palabra"].update({
    "0 tokens dan el int 0": _tpw(tpw="0 if n_tokens == 0 else float(n_tokens) / float(n_words)"),
    "0 tok/s dan el int 0": _tpw(wps="0 if tokens_per_s == 0 else float(tokens_per_s) / float(tokens_per_word)"),
})
MUTANTS["bucle_con_paradas"].update({
    "un EOS de id 0 se toma por «sin EOS»": _loop(
        eos='if eos_id and token == eos_id:\n            return {"ids": generados, "stop_reason": "eos"}'),
})
MUTANTS["cabe_en_gpu"].update({
    "rechaza un contexto de 0 tokens": _fit(
        check=('if (n_params < 0 or weight_bits <= 0 or context <= 0 or batch < 1 or kv_bytes <= 0 or device_gb <= 0\n'
               '            or reserve_gb < 0):\n        raise ValueError("mal")')),
})
MUTANTS["matriz_decision"].update({
    "lista de listas en vez de tuplas": _score(ret="[list(par) for par in sorted(resultado, key=lambda par: (-par[1], par[0]))]"),
})
MUTANTS["kv_por_turnos"].update({
    "devuelve una tupla": _growth(ret="tuple(crecimiento)"),
})
