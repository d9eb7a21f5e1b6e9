"""Wrong implementations of lab 06's exercises, taken from chapter 06's common mistakes (6-M1 … 6-M7) and the
families every lab covers (input modified in place, wrong return type, boundaries, instability, ignored
arguments, missing ValueError).

Each must lose points: at least one test cell of its exercise has to fail. REFERENCES names the llmlab
function that does the same job (with the aliases the lab's setup cell imports); the harness adds a mutant
that merely calls it.
"""

LAB = "lab06-adaptar-modelos"

REFERENCES = {
    "softmax_xent": "DI.softmax_xent",
    "linear_head_grad": "TS.linear_head_grad",
    "sgd_step": "TS.sgd_step",
    "answer_labels": "TS.answer_labels",
    "lora_param_count": "lora.lora_param_count",
    "LoRALinear": "lora.LoRALinear",
    "merge_lora": "lora.merge_lora",
    "kl_divergence": "DI.kl_divergence",
    "distill_loss": "DI.distill_loss",
    "dpo_loss": "DI.dpo_loss",
    "contamination_rate": "DS.contamination_rate",
    "openness_category": "AD.openness_category",
    "choose_adaptation": "AD.choose_adaptation",
}

# ----------------------------------------------------------------------------------------------
# Templates: the correct code with one piece replaced ({...}).
# ----------------------------------------------------------------------------------------------

_XENT = """
def softmax_xent(logits, target):
    {copy}
    {check}
    {shift}
    log_p = z - np.log(np.exp(z).sum())
    grad = np.exp(log_p)
    {grad}
    return {ret}
"""
_XENT_OK = dict(
    copy="z = np.array(logits, dtype=float)",
    check='if not 0 <= target < z.shape[0]:\n        raise ValueError("target")',
    shift="z = z - z.max()",
    grad="grad[target] -= 1.0",
    ret="float(-log_p[target]), grad",
)

_LORA = """
class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        {freeze}
        d_out, d_in = base.weight.shape
        cota = 1.0 / math.sqrt(d_in)
        self.A = {A}
        self.B = {B}
        self.escala = {scale}

    def forward(self, x):
        return {forward}
"""
_LORA_OK = dict(
    freeze="for p in self.base.parameters():\n            p.requires_grad_(False)",
    A="nn.Parameter(torch.empty(r, d_in).uniform_(-cota, cota))",
    B="nn.Parameter(torch.zeros(d_out, r))",
    scale="alpha / r",
    forward="self.base(x) + self.escala * ((x @ self.A.T) @ self.B.T)",
)

_DISTILL = """
def distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5):
    def log_softmax(z):
        z = np.asarray(z, dtype=float)
        {shift}
        return z - np.log(np.exp(z).sum())

    s = np.asarray(student_logits, dtype=float)
    t = np.asarray(teacher_logits, dtype=float)
    {teacher}
    ce = -log_softmax({ce_input})[y]
    log_pt, log_ps = log_softmax(t / {T}), log_softmax(s / {T})
    kl = float(np.sum({kl}))
    return float({combine})
"""
_DISTILL_OK = dict(
    shift="z = z - z.max()",
    teacher="pass",
    ce_input="s",
    T="T",
    kl="np.exp(log_pt) * (log_pt - log_ps)",
    combine="(1 - lam) * ce + lam * T**2 * kl",
)

_CONTAM = """
def contamination_rate(train, test):
    {check}

    def normaliza(texto):
        return {norm}

    vistos = {{normaliza(t) for t in train}}
    {count}
"""
_CONTAM_OK = dict(
    check='if len(test) == 0:\n        raise ValueError("test")',
    norm='" ".join(unicodedata.normalize("NFKC", texto).casefold().split())',
    count="return sum(normaliza(t) in vistos for t in test) / len(test)",
)

_OPEN = """
def openness_category(card):
    if not card["weights"]:
        return "cerrado"
    todo = {todo}
    if todo and {license_ok}:
        return "código abierto"
    return "pesos abiertos"


def choose_adaptation(need):
    tabla = {{
        "changing knowledge": {knowledge},
        "specific format": "ajuste a instrucciones",
        "few resources": "LoRA",
        "low latency": "destilación",
        "local control": "pesos abiertos",
        "max quality": "modelo grande por API",
    }}
    {lookup}
"""
_OPEN_OK = dict(
    todo='card["code"] and card["data"] and card["recipe"]',
    license_ok='str(card["license"]).lower() in LICENCIAS_OSI',
    knowledge='"RAG"',
    lookup='if need not in tabla:\n        raise ValueError(need)\n    return tabla[need]',
)

_HEAD = """
def linear_head_grad(h, W, targets):
    H = {H}
    W = np.asarray(W, dtype=float)
    t = np.asarray(targets)
    if H.ndim != 2 or W.ndim != 2 or H.shape[1] != W.shape[0]:
        raise ValueError("formas")
    {check}
    z = H @ W
    {shift}
    P = np.exp(z)
    P /= P.sum(axis=1, keepdims=True)
    {onehot}
    return {ret}
"""
_HEAD_OK = dict(
    H="np.array(h, dtype=float)",
    check='if t.shape != (H.shape[0],) or np.any(t < 0) or np.any(t >= W.shape[1]):\n        raise ValueError("targets")',
    shift="z = z - z.max(axis=1, keepdims=True)",
    onehot="P[np.arange(H.shape[0]), t] -= 1.0",
    ret="H.T @ P / H.shape[0]",
)

_SGD = """
def sgd_step(theta, grad, lr=2e-5):
    theta = {theta}
    grad = np.asarray(grad, dtype=float)
    {check_shape}
    {check_lr}
    {ret}
"""
_SGD_OK = dict(
    theta="np.asarray(theta, dtype=float)",
    check_shape='if theta.shape != grad.shape:\n        raise ValueError("formas")',
    check_lr='if lr < 0:\n        raise ValueError("lr")',
    ret="return theta - lr * grad",
)

_LABELS = """
def answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0):
    prompt = {prompt}
    answer = [int(i) for i in answer_ids]
    {check_empty}
    ids = prompt + answer
    labels = {labels}
    if max_len is not None:
        {check_fit}
        relleno = max_len - len(ids)
        ids = ids + [int(pad_id)] * relleno
        labels = labels + {pad_label} * relleno
    return {ret}
"""
_LABELS_OK = dict(
    prompt="[int(i) for i in prompt_ids]",
    check_empty='if len(answer) == 0:\n        raise ValueError("vacía")',
    labels="[-100] * len(prompt) + answer",
    check_fit='if len(ids) > max_len:\n            raise ValueError("no cabe")',
    pad_label="[-100]",
    ret="ids, labels",
)


def _fill(template, ok, **change):
    return template.format(**{**ok, **change})


MUTANTS = {
    "softmax_xent": {
        "gradiente y − p (signo al revés)": _fill(_XENT, _XENT_OK, grad="grad = -grad\n    grad[target] += 1.0"),
        "logaritmo en base 10": _fill(_XENT, _XENT_OK, ret="float(-log_p[target] / np.log(10)), grad"),
        "no resta el máximo (desborda con logits grandes)": _fill(_XENT, _XENT_OK, shift="pass"),
        "modifica logits en su sitio": _fill(
            _XENT, _XENT_OK, copy="z = logits if isinstance(logits, np.ndarray) else np.array(logits, dtype=float)",
            shift="z -= z.max()"),
        "devuelve el gradiente como lista": _fill(_XENT, _XENT_OK, ret="float(-log_p[target]), grad.tolist()"),
        "devuelve la pérdida como array": _fill(_XENT, _XENT_OK, ret="-log_p[target:target + 1], grad"),
        "no lanza ValueError con un target fuera de rango": _fill(_XENT, _XENT_OK, check="pass"),
        "olvida restar y (devuelve p)": _fill(_XENT, _XENT_OK, grad="pass"),
    },
    "linear_head_grad": {
        "olvida la media del lote": _fill(_HEAD, _HEAD_OK, ret="H.T @ P"),
        "signo cambiado (Y − P)": _fill(_HEAD, _HEAD_OK, ret="-(H.T @ P) / H.shape[0]"),
        "orientación al revés (P − Y)ᵀ H": _fill(_HEAD, _HEAD_OK, ret="P.T @ H / H.shape[0]"),
        "máximo global en vez de por fila": _fill(_HEAD, _HEAD_OK, shift="z = z - z.max()"),
        "softmax sin restar el máximo": _fill(_HEAD, _HEAD_OK, shift="pass"),
        "no comprueba los índices (−1 da la vuelta)": _fill(_HEAD, _HEAD_OK, check="pass"),
        "divide entre V en vez de B": _fill(_HEAD, _HEAD_OK, ret="H.T @ P / W.shape[1]"),
        "modifica h en su sitio": _fill(_HEAD, _HEAD_OK, H="np.asarray(h, dtype=float)",
                                        onehot="P[np.arange(H.shape[0]), t] -= 1.0\n    H /= H.shape[0]", ret="H.T @ P"),
        "sin la media y con el gradiente de los logits": _fill(_HEAD, _HEAD_OK, ret="P"),
        "devuelve una lista": _fill(_HEAD, _HEAD_OK, ret="(H.T @ P / H.shape[0]).tolist()"),
    },
    "sgd_step": {
        "modifica theta en su sitio": _fill(_SGD, _SGD_OK, theta="np.asarray(theta)", ret="theta -= lr * grad\n    return theta"),
        "signo cambiado (sube por el gradiente)": _fill(_SGD, _SGD_OK, ret="return theta + lr * grad"),
        "ignora lr (siempre 2e-5)": _fill(_SGD, _SGD_OK, ret="return theta - 2e-5 * grad"),
        "devuelve una lista": _fill(_SGD, _SGD_OK, ret="return (theta - lr * grad).tolist()"),
        "conserva los enteros": _fill(_SGD, _SGD_OK, theta="np.asarray(theta)",
                                      ret="return (theta - lr * grad).astype(theta.dtype)"),
        "deja hacer broadcasting": _fill(_SGD, _SGD_OK, check_shape="pass"),
        "acepta lr negativo": _fill(_SGD, _SGD_OK, check_lr="pass"),
    },
    "answer_labels": {
        "enmascara un token de menos (desplazamiento mal entendido)": _fill(
            _LABELS, _LABELS_OK, labels="[-100] * (len(prompt) - 1) + ids[len(prompt) - 1:] if prompt else list(answer)"),
        "enmascara un token de más": _fill(_LABELS, _LABELS_OK, labels="[-100] * (len(prompt) + 1) + answer[1:]"),
        "entrena también la pregunta": _fill(_LABELS, _LABELS_OK, labels="list(ids)"),
        "decide el relleno por el valor del token": _fill(
            _LABELS, _LABELS_OK, labels="[-100] * len(prompt) + [-100 if i == pad_id else i for i in answer]"),
        "rellena labels con pad_id": _fill(_LABELS, _LABELS_OK, pad_label="[int(pad_id)]"),
        "recorta en vez de lanzar ValueError": _fill(
            _LABELS, _LABELS_OK, check_fit="ids, labels = ids[:max_len], labels[:max_len]"),
        "no lanza ValueError con la respuesta vacía": _fill(_LABELS, _LABELS_OK, check_empty="pass"),
        "deja los np.int64 tal cual": _fill(_LABELS, _LABELS_OK, prompt="list(prompt_ids)"),
        "devuelve una lista en vez de una tupla": _fill(_LABELS, _LABELS_OK, ret="[ids, labels]"),
        "devuelve arrays de NumPy": _fill(_LABELS, _LABELS_OK, ret="np.array(ids), np.array(labels)"),
        "ignora max_len": _fill(_LABELS, _LABELS_OK, check_fit="max_len = len(ids)"),
    },
    "lora_param_count": {
        "r·d_out·d_in": """
def lora_param_count(d_out, d_in, r):
    if r < 0 or r > min(d_out, d_in):
        raise ValueError("r")
    return r * d_out * d_in
""",
        "2·r·d (solo vale para matrices cuadradas)": """
def lora_param_count(d_out, d_in, r):
    if r < 0 or r > min(d_out, d_in):
        raise ValueError("r")
    return 2 * r * d_out
""",
        "solo cuenta A": """
def lora_param_count(d_out, d_in, r):
    if r < 0 or r > min(d_out, d_in):
        raise ValueError("r")
    return r * d_in
""",
        "devuelve un float": """
def lora_param_count(d_out, d_in, r):
    if r < 0 or r > min(d_out, d_in):
        raise ValueError("r")
    return r * (d_in + d_out) / 1
""",
        "no comprueba el rango": """
def lora_param_count(d_out, d_in, r):
    return r * (d_in + d_out)
""",
        "rechaza r = min(d_out, d_in) (>= en vez de >)": """
def lora_param_count(d_out, d_in, r):
    if r < 0 or r >= min(d_out, d_in):
        raise ValueError("r")
    return r * (d_in + d_out)
""",
        "acepta r negativo": """
def lora_param_count(d_out, d_in, r):
    if r > min(d_out, d_in):
        raise ValueError("r")
    return r * (d_in + d_out)
""",
    },
    "LoRALinear": {
        "B aleatoria al empezar": _fill(_LORA, _LORA_OK, B="nn.Parameter(torch.randn(d_out, r) * 0.01)"),
        "sin dividir por r (escala = alpha)": _fill(_LORA, _LORA_OK, scale="alpha"),
        "escala al revés (r / alpha)": _fill(_LORA, _LORA_OK, scale="r / alpha"),
        "no congela la base": _fill(_LORA, _LORA_OK, freeze="pass"),
        "congela el peso pero no el sesgo": _fill(_LORA, _LORA_OK, freeze="self.base.weight.requires_grad_(False)"),
        "A y B a ceros (B nunca aprende)": _fill(_LORA, _LORA_OK, A="nn.Parameter(torch.zeros(r, d_in))"),
        "A sin escalar (normal estándar)": _fill(_LORA, _LORA_OK, A="nn.Parameter(torch.randn(r, d_in))"),
        "olvida el sesgo de la base": _fill(
            _LORA, _LORA_OK, forward="x @ self.base.weight.T + self.escala * ((x @ self.A.T) @ self.B.T)"),
        "B no es un parámetro": _fill(_LORA, _LORA_OK, B="torch.zeros(d_out, r)"),
        "A con la forma traspuesta": _fill(_LORA, _LORA_OK, A="nn.Parameter(torch.empty(d_in, r).uniform_(-cota, cota))",
                                           forward="self.base(x) + self.escala * ((x @ self.A) @ self.B.T)"),
        "fusiona en el peso de la base en cada forward": _fill(
            _LORA, _LORA_OK, forward="self._suma(x)",
            ) + """
    def _suma(self, x):
        with torch.no_grad():
            self.base.weight += self.escala * (self.B @ self.A)
        return self.base(x)
""",
        "modifica base al construir (reinicia el sesgo)": _fill(
            _LORA, _LORA_OK, freeze="for p in self.base.parameters():\n            p.requires_grad_(False)\n"
            "        if self.base.bias is not None:\n            torch.nn.init.zeros_(self.base.bias)"),
    },
    "merge_lora": {
        "el código con errores, sin tocar": """
def merge_lora(W, A, B, alpha, r):
    W += B @ A
    return W
""",
        "sin la escala α/r": """
def merge_lora(W, A, B, alpha, r):
    return np.asarray(W, dtype=float) + np.asarray(B, dtype=float) @ np.asarray(A, dtype=float)
""",
        "escala bien pero modifica W en su sitio": """
def merge_lora(W, A, B, alpha, r):
    W += (alpha / r) * (np.asarray(B) @ np.asarray(A))
    return W
""",
        "escala al revés (r/α)": """
def merge_lora(W, A, B, alpha, r):
    return np.asarray(W, dtype=float) + (r / alpha) * (np.asarray(B, dtype=float) @ np.asarray(A, dtype=float))
""",
        "A B en vez de B A": """
def merge_lora(W, A, B, alpha, r):
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    return np.asarray(W, dtype=float) + (alpha / r) * (A.T @ B.T)
""",
        "devuelve una lista": """
def merge_lora(W, A, B, alpha, r):
    return (np.asarray(W, dtype=float) + (alpha / r) * (np.asarray(B) @ np.asarray(A))).tolist()
""",
    },
    "kl_divergence": {
        "KL al revés (alumno ‖ profesor)": """
def kl_divergence(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    usados = q > 0
    return float(np.sum(q[usados] * np.log(q[usados] / p[usados])))
""",
        "logaritmo en base 2": """
def kl_divergence(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    usados = p > 0
    return float(np.sum(p[usados] * np.log2(p[usados] / q[usados])))
""",
        "no trata p_i = 0 (nan)": """
def kl_divergence(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return float(np.sum(p * np.log(p / q)))
""",
        "devuelve los términos sin sumar": """
def kl_divergence(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / np.where(p > 0, q, 1)), 0.0)
""",
        "modifica p en su sitio (recorta los ceros)": """
def kl_divergence(p, q):
    if isinstance(p, np.ndarray):
        p[p < 1e-12] = 1e-12
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    usados = p > 0
    return float(np.sum(p[usados] * np.log(p[usados] / q[usados])))
""",
        "diferencia de entropías en vez de KL": """
def kl_divergence(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    h = lambda d: -float(np.sum(d[d > 0] * np.log(d[d > 0])))
    return h(q) - h(p)
""",
    },
    "distill_loss": {
        "sin T²": _fill(_DISTILL, _DISTILL_OK, combine="(1 - lam) * ce + lam * kl"),
        "etiqueta dura del profesor (argmax)": _fill(
            _DISTILL, _DISTILL_OK, teacher="t = np.where(np.arange(len(t)) == np.argmax(t), 50.0, -50.0)"),
        "CE a temperatura T": _fill(_DISTILL, _DISTILL_OK, ce_input="s / T"),
        "KL al revés": _fill(_DISTILL, _DISTILL_OK, kl="np.exp(log_ps) * (log_ps - log_pt)"),
        "λ cambiada de lado": _fill(_DISTILL, _DISTILL_OK, combine="lam * ce + (1 - lam) * T**2 * kl"),
        "ignora T (siempre 2)": _fill(_DISTILL, _DISTILL_OK, T="2.0", combine="(1 - lam) * ce + lam * 4.0 * kl"),
        "softmax sin restar el máximo": _fill(_DISTILL, _DISTILL_OK, shift="pass"),
        "T en vez de T²": _fill(_DISTILL, _DISTILL_OK, combine="(1 - lam) * ce + lam * T * kl"),
        "modifica student_logits en su sitio (resta el máximo con -=)": _fill(
            _DISTILL, _DISTILL_OK,
            teacher="if isinstance(student_logits, np.ndarray) and student_logits.dtype == float:\n"
                    "        student_logits -= student_logits.max()\n        s = student_logits"),
    },
    "dpo_loss": {
        "el código con errores, sin tocar": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    z = beta * ((logp_l - ref_l) - (logp_w - ref_w))
    return float(-np.log(1 / (1 + np.exp(-z))))
""",
        "solo corrige el signo (desborda)": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    z = beta * ((logp_w - ref_w) - (logp_l - ref_l))
    return float(-np.log(1 / (1 + np.exp(-z))))
""",
        "solo corrige el desbordamiento (premia la rechazada)": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    z = beta * ((logp_l - ref_l) - (logp_w - ref_w))
    return float(np.logaddexp(0.0, -z))
""",
        "sin β": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    z = (logp_w - ref_w) - (logp_l - ref_l)
    return float(np.logaddexp(0.0, -z))
""",
        "ignora el modelo de referencia": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    z = beta * (logp_w - logp_l)
    return float(np.logaddexp(0.0, -z))
""",
        "devuelve σ(z) en vez de −log σ(z)": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    z = beta * ((logp_w - ref_w) - (logp_l - ref_l))
    return float(1 / (1 + np.exp(-z)))
""",
    },
    "contamination_rate": {
        "compara sin normalizar": _fill(_CONTAM, _CONTAM_OK, norm="texto"),
        "solo minúsculas (no colapsa espacios)": _fill(_CONTAM, _CONTAM_OK, norm="texto.lower()"),
        "sin normalizar Unicode (acentos descompuestos)": _fill(_CONTAM, _CONTAM_OK, norm='" ".join(texto.lower().split())'),
        "cuenta los repetidos de test una sola vez": _fill(
            _CONTAM, _CONTAM_OK, count="unicos = {normaliza(t) for t in test}\n    return len(unicos & vistos) / len(unicos)"),
        "devuelve el número, no la fracción": _fill(_CONTAM, _CONTAM_OK, count="return sum(normaliza(t) in vistos for t in test)"),
        "devuelve un porcentaje": _fill(
            _CONTAM, _CONTAM_OK, count="return 100 * sum(normaliza(t) in vistos for t in test) / len(test)"),
        "divide entre len(train)": _fill(
            _CONTAM, _CONTAM_OK, count="return sum(normaliza(t) in vistos for t in test) / max(len(train), 1)"),
        "no lanza ValueError con test vacío": _fill(_CONTAM, _CONTAM_OK, check="pass"),
        "normaliza test en su sitio": _fill(
            _CONTAM, _CONTAM_OK,
            count="for i, t in enumerate(test):\n        test[i] = normaliza(t)\n"
                  "    return sum(t in vistos for t in test) / len(test)"),
    },
    "decisiones": {
        "«open source» con solo los pesos": _fill(_OPEN, _OPEN_OK, todo="True", license_ok="True"),
        "ignora la licencia": _fill(_OPEN, _OPEN_OK, license_ok="True"),
        "ignora los datos y la receta": _fill(_OPEN, _OPEN_OK, todo='card["code"]'),
        "licencia comparada sin pasar a minúsculas": _fill(_OPEN, _OPEN_OK, license_ok='card["license"] in LICENCIAS_OSI'),
        "fine-tuning para conocimiento que cambia": _fill(_OPEN, _OPEN_OK, knowledge='"fine-tuning"'),
        "no lanza ValueError con una necesidad desconocida": _fill(_OPEN, _OPEN_OK, lookup="return tabla.get(need)"),
        "pasa la licencia a minúsculas en la ficha": _fill(
            _OPEN, _OPEN_OK, license_ok='card.update(license=str(card["license"]).lower()) is None '
                                        'and card["license"] in LICENCIAS_OSI'),
    },
}

# ---------------------------------------------------------------- audit 2026-12: wrong answers by family
# Written from the statements (issue 26, «Graders by family»): promised types, normalisation weaker than
# promised, boundaries and validation.

_AUDIT = {
    "softmax_xent": {
        "returns a list, not a tuple": _fill(_XENT, _XENT_OK, ret="[float(-log_p[target]), grad]"),
        "loss as np.float32": _fill(_XENT, _XENT_OK, ret="np.float32(-log_p[target]), grad"),
    },
    "lora_param_count": {
        "returns np.int64": """
def lora_param_count(d_out, d_in, r):
    if r < 0 or r > min(d_out, d_in):
        raise ValueError("r")
    return np.int64(r) * (d_in + d_out)
""",
    },
    "answer_labels": {
        "pad_id left as np.int64": """
def answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0):
    prompt = [int(i) for i in prompt_ids]
    answer = [int(i) for i in answer_ids]
    if not answer:
        raise ValueError("vacía")
    ids = prompt + answer
    labels = [-100] * len(prompt) + answer
    if max_len is not None:
        if len(ids) > max_len:
            raise ValueError("no cabe")
        ids = ids + [pad_id] * (max_len - len(ids))
        labels = labels + [-100] * (max_len - len(labels))
    return ids, labels
""",
    },
    "kl_divergence": {
        "returns np.float32": """
def kl_divergence(p, q):
    p = np.asarray(p, dtype=np.float32)
    q = np.asarray(q, dtype=np.float32)
    m = p > 0
    return np.sum(p[m] * np.log(p[m] / q[m]))
""",
    },
    "distill_loss": {
        "returns np.float32": """
def distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5):
    def log_softmax(z):
        z = np.asarray(z, dtype=np.float64)
        z = z - z.max()
        return z - np.log(np.exp(z).sum())
    s = np.asarray(student_logits, dtype=float)
    t = np.asarray(teacher_logits, dtype=float)
    ce = -log_softmax(s)[y]
    log_pt, log_ps = log_softmax(t / T), log_softmax(s / T)
    kl = np.sum(np.exp(log_pt) * (log_pt - log_ps))
    return np.float32((1 - lam) * ce + lam * T**2 * kl)
""",
    },
    "dpo_loss": {
        "returns np.float32": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    z = beta * ((logp_w - ref_w) - (logp_l - ref_l))
    return np.float32(np.logaddexp(0.0, -z))
""",
    },
    "contamination_rate": {
        "NFC instead of NFKC": _fill(_CONTAM, _CONTAM_OK, norm='" ".join(unicodedata.normalize("NFC", texto).casefold().split())'),
        "lower instead of casefold": _fill(_CONTAM, _CONTAM_OK, norm='" ".join(unicodedata.normalize("NFKC", texto).lower().split())'),
        "splits only on spaces": _fill(_CONTAM, _CONTAM_OK,
                                       norm='" ".join(w for w in unicodedata.normalize("NFKC", texto).casefold().split(" ") if w)'),
    },
    "decisiones": {
        "strips the need before looking it up": _fill(
            _OPEN, _OPEN_OK, lookup='need = need.strip()\n    if need not in tabla:\n        raise ValueError(need)\n    return tabla[need]'),
    },
}
for _answer, _by_name in _AUDIT.items():
    MUTANTS[_answer].update(_by_name)
