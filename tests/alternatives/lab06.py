"""Valid answers to lab 06's exercises, written differently from the solution: each must get full marks."""

LAB = "lab06-adaptar-modelos"

ALTERNATIVES = {
    "softmax_xent": {
        "bucles con math": """
def softmax_xent(logits, target):
    z = [float(v) for v in logits]
    if target < 0 or target >= len(z):
        raise ValueError("target")
    m = max(z)
    total = sum(math.exp(v - m) for v in z)
    p = [math.exp(v - m) / total for v in z]
    grad = np.array([p[i] - (1.0 if i == target else 0.0) for i in range(len(z))])
    return -(z[target] - m - math.log(total)), grad
""",
        "float32": """
def softmax_xent(logits, target):
    z = np.array(logits, dtype=np.float32)
    if not 0 <= target < len(z):
        raise ValueError("target")
    e = np.exp(z - z.max())
    p = e / e.sum()
    y = np.zeros_like(p)
    y[target] = 1
    return float(-(z[target] - z.max() - np.log(e.sum()))), p - y
""",
        "con torch": """
def softmax_xent(logits, target):
    z = torch.tensor(np.asarray(logits, dtype=float))
    if target not in range(z.shape[0]):
        raise ValueError("target")
    log_p = torch.log_softmax(z, dim=0)
    grad = log_p.exp() - torch.nn.functional.one_hot(torch.tensor(target), z.shape[0]).double()
    return -log_p[target].item(), grad.numpy()
""",
    },
    "linear_head_grad": {
        "bucles con math": """
def linear_head_grad(h, W, targets):
    H = [[float(v) for v in fila] for fila in h]
    W = [[float(v) for v in fila] for fila in W]
    targets = [int(t) for t in targets]
    B, d, V = len(H), len(W), len(W[0])
    if any(len(fila) != d for fila in H) or len(targets) != B:
        raise ValueError("formas")
    if any(t < 0 or t >= V for t in targets):
        raise ValueError("targets")
    G = [[0.0] * V for _ in range(d)]
    for b in range(B):
        z = [sum(H[b][i] * W[i][j] for i in range(d)) for j in range(V)]
        m = max(z)
        e = [math.exp(v - m) for v in z]
        total = sum(e)
        for j in range(V):
            delta = e[j] / total - (1.0 if j == targets[b] else 0.0)
            for i in range(d):
                G[i][j] += H[b][i] * delta / B
    return np.array(G)
""",
        "float32 y einsum, restando Y aparte": """
def linear_head_grad(h, W, targets):
    H = np.asarray(h, dtype=np.float32)
    W = np.asarray(W, dtype=np.float32)
    t = np.asarray(targets, dtype=np.int64)
    if H.shape[1] != W.shape[0] or t.shape != (H.shape[0],) or t.min() < 0 or t.max() >= W.shape[1]:
        raise ValueError("entrada")
    z = H @ W
    P = np.exp(z - z.max(axis=1, keepdims=True))
    P = P / P.sum(axis=1, keepdims=True)
    Y = np.eye(W.shape[1], dtype=np.float32)[t]
    return np.einsum("bd,bv->dv", H, P) / len(H) - np.einsum("bd,bv->dv", H, Y) / len(H)
""",
        "con torch.autograd": """
def linear_head_grad(h, W, targets):
    H = torch.tensor(np.asarray(h, dtype=float))
    W = torch.tensor(np.asarray(W, dtype=float), requires_grad=True)
    t = torch.tensor(np.asarray(targets, dtype=np.int64))
    if H.shape[1] != W.shape[0] or t.shape != (H.shape[0],) or bool((t < 0).any()) or bool((t >= W.shape[1]).any()):
        raise ValueError("entrada")
    torch.nn.functional.cross_entropy(H @ W, t).backward()
    return W.grad.numpy()
""",
    },
    "sgd_step": {
        "bucle sobre los elementos": """
def sgd_step(theta, grad, lr=2e-5):
    theta, grad = np.asarray(theta), np.asarray(grad)
    if np.shape(theta) != np.shape(grad):
        raise ValueError("formas")
    if lr < 0:
        raise ValueError("lr")
    nuevo = np.empty(theta.shape, dtype=float)
    for i in np.ndindex(theta.shape):
        nuevo[i] = float(theta[i]) - lr * float(grad[i])
    return nuevo
""",
        "float32, sumando el paso negativo": """
def sgd_step(theta, grad, lr=2e-5):
    theta = np.array(theta, dtype=np.float32)
    grad = np.array(grad, dtype=np.float32)
    if theta.shape != grad.shape or not lr >= 0:
        raise ValueError("entrada")
    paso = np.float32(-lr) * grad
    theta += paso
    return theta
""",
    },
    "answer_labels": {
        "bucle, rellenando al final": """
def answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0):
    if len(answer_ids) == 0:
        raise ValueError("vacía")
    ids, labels = [], []
    for i in prompt_ids:
        ids.append(int(i))
        labels.append(-100)
    for i in answer_ids:
        ids.append(int(i))
        labels.append(int(i))
    if max_len is not None:
        if len(ids) > max_len:
            raise ValueError("no cabe")
        while len(ids) < max_len:
            ids.append(int(pad_id))
            labels.append(-100)
    return ids, labels
""",
        "con NumPy y tolist, comprobando antes": """
def answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0):
    p = np.asarray(prompt_ids, dtype=np.int64).reshape(-1)
    a = np.asarray(answer_ids, dtype=np.int64).reshape(-1)
    if a.size == 0:
        raise ValueError("vacía")
    n = p.size + a.size if max_len is None else max_len
    if p.size + a.size > n:
        raise ValueError("no cabe")
    ids = np.full(n, pad_id, dtype=np.int64)
    labels = np.full(n, -100, dtype=np.int64)
    ids[: p.size] = p
    ids[p.size : p.size + a.size] = a
    labels[p.size : p.size + a.size] = a
    return ids.tolist(), labels.tolist()
""",
    },
    "lora_param_count": {
        "contando los elementos de A y B": """
def lora_param_count(d_out, d_in, r):
    if not 0 <= r <= min(d_out, d_in):
        raise ValueError("rango")
    forma_A, forma_B = (r, d_in), (d_out, r)
    return forma_A[0] * forma_A[1] + forma_B[0] * forma_B[1]
""",
        "con numpy, convertido a int al final": """
def lora_param_count(d_out, d_in, r):
    if r < 0 or r > np.min([d_out, d_in]):
        raise ValueError("rango")
    return int(np.prod([r, d_in]) + np.prod([d_out, r]))
""",
    },
    "LoRALinear": {
        "como PEFT (kaiming_uniform) y F.linear": """
class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.A = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))
        self.escala = alpha / r

    def forward(self, x):
        return self.base(x) + self.escala * torch.nn.functional.linear(torch.nn.functional.linear(x, self.A), self.B)
""",
        "pesos fusionados en cada forward": """
class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        for nombre, p in base.named_parameters():
            p.requires_grad = False
        d_out, d_in = base.out_features, base.in_features
        self.A = nn.Parameter((torch.rand(r, d_in) * 2 - 1) / d_in ** 0.5)
        self.B = nn.Parameter(torch.zeros(d_out, r))
        self.escala = float(alpha) / float(r)

    def forward(self, x):
        W = self.base.weight + self.escala * (self.B @ self.A)
        return torch.nn.functional.linear(x, W, self.base.bias)
""",
        "copia la base, sortea A con un generador y usa einsum": """
class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = copy.deepcopy(base)  # la capa original queda como estaba
        self.base.weight.requires_grad = False
        if self.base.bias is not None:
            self.base.bias.requires_grad = False
        d_out, d_in = self.base.weight.shape
        azar = torch.Generator().manual_seed(int(torch.randint(0, 2**31 - 1, ())))
        cota = d_in ** -0.5
        self.A = nn.Parameter(cota * (2 * torch.rand(r, d_in, generator=azar, dtype=torch.float32) - 1))
        self.B = nn.Parameter(torch.zeros(d_out, r))
        self.escala = alpha / r

    def forward(self, x):
        corto = torch.einsum("...i,ri->...r", x, self.A)
        return self.base(x) + self.escala * torch.einsum("...r,or->...o", corto, self.B)
""",
    },
    "merge_lora": {
        "bucles sobre listas": """
def merge_lora(W, A, B, alpha, r):
    W, A, B = np.asarray(W, dtype=float), np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    salida = W.copy()
    for i in range(W.shape[0]):
        for j in range(W.shape[1]):
            salida[i, j] += alpha / r * sum(B[i, k] * A[k, j] for k in range(A.shape[0]))
    return salida
""",
        "einsum conservando float32": """
def merge_lora(W, A, B, alpha, r):
    W = np.array(W, dtype=np.result_type(np.asarray(W).dtype, np.float32))
    return W + (alpha / r) * np.einsum("ik,kj->ij", np.asarray(B), np.asarray(A))
""",
    },
    "kl_divergence": {
        "bucle con math": """
def kl_divergence(p, q):
    total = 0.0
    for pi, qi in zip(p, q):
        if pi > 0:
            total += float(pi) * math.log(float(pi) / float(qi))
    return total
""",
        "np.where con errstate": """
def kl_divergence(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terminos = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
    return float(terminos.sum())
""",
    },
    "distill_loss": {
        "con torch (F.kl_div)": """
def distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5):
    s = torch.tensor(np.asarray(student_logits, dtype=float))
    t = torch.tensor(np.asarray(teacher_logits, dtype=float))
    ce = torch.nn.functional.cross_entropy(s[None], torch.tensor([y]))
    kl = torch.nn.functional.kl_div(torch.log_softmax(s / T, -1), torch.log_softmax(t / T, -1),
                                    reduction="sum", log_target=True)
    return float((1 - lam) * ce + lam * T * T * kl)
""",
        "reutilizando softmax y kl_divergence propias": """
def distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5):
    def suave(z, temp):
        z = np.asarray(z, dtype=float) / temp
        e = np.exp(z - z.max())
        return e / e.sum()

    s = np.asarray(student_logits, dtype=float)
    m = s.max()
    ce = -(s[y] - m - math.log(np.exp(s - m).sum()))
    p_t, p_s = suave(teacher_logits, T), suave(student_logits, T)
    usados = p_t > 0
    kl = float(np.sum(p_t[usados] * (np.log(p_t[usados]) - np.log(np.maximum(p_s[usados], 1e-300)))))
    return (1 - lam) * ce + lam * T ** 2 * kl
""",
    },
    "dpo_loss": {
        "softplus por ramas con math": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    z = beta * ((logp_w - ref_w) - (logp_l - ref_l))
    if z > 0:
        return math.log1p(math.exp(-z))
    return -z + math.log1p(math.exp(z))
""",
        "con torch (logsigmoid)": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    margen = (logp_w - logp_l) - (ref_w - ref_l)
    return -torch.nn.functional.logsigmoid(torch.tensor(beta * margen, dtype=torch.float64)).item()
""",
    },
    "contamination_rate": {
        "NFKD recompuesto y casefold, con una lista": """
def contamination_rate(train, test):
    if not test:
        raise ValueError("vacío")
    limpia = lambda s: " ".join(unicodedata.normalize("NFC", unicodedata.normalize("NFKD", s)).casefold().split())
    vistos = [limpia(t) for t in train]
    aciertos = 0
    for t in test:
        if limpia(t) in vistos:
            aciertos += 1
    return aciertos / len(test)
""",
        "regex para los espacios": """
import re


def contamination_rate(train, test):
    if len(test) == 0:
        raise ValueError("test vacío")

    def normaliza(s):
        return re.sub(r"\\s+", " ", unicodedata.normalize("NFKC", s).casefold()).strip()

    vistos = set(map(normaliza, train))
    return float(np.mean([normaliza(t) in vistos for t in test]))
""",
    },
    "decisiones": {
        "if encadenados": """
def openness_category(card):
    if card["weights"] and card["code"] and card["data"] and card["recipe"] \\
            and card["license"].lower() in LICENCIAS_OSI:
        return "código abierto"
    elif card["weights"]:
        return "pesos abiertos"
    else:
        return "cerrado"


def choose_adaptation(need):
    if need == "changing knowledge":
        return "RAG"
    elif need == "specific format":
        return "ajuste a instrucciones"
    elif need == "few resources":
        return "LoRA"
    elif need == "low latency":
        return "destilación"
    elif need == "local control":
        return "pesos abiertos"
    elif need == "max quality":
        return "modelo grande por API"
    raise ValueError(need)
""",
        "all() y try/except KeyError": """
def openness_category(card):
    if not card["weights"]:
        return "cerrado"
    piezas = all(card[k] for k in ("code", "data", "recipe"))
    return "código abierto" if piezas and card["license"].casefold() in LICENCIAS_OSI else "pesos abiertos"


def choose_adaptation(need):
    tabla = dict(zip(
        ["changing knowledge", "specific format", "few resources", "low latency", "local control", "max quality"],
        ["RAG", "ajuste a instrucciones", "LoRA", "destilación", "pesos abiertos", "modelo grande por API"]))
    try:
        return tabla[need]
    except KeyError:
        raise ValueError(f"necesidad desconocida {need!r}") from None
""",
    },
}


# ---------------------------------------------------------------- audit 2026-12: valid answers written from the statements

_AUDIT = {
    "softmax_xent": {
        "float32 with a loop for the sum": """
def softmax_xent(logits, target):
    z = np.array(logits, dtype=np.float32)
    if target < 0 or target >= len(z):
        raise ValueError("target")
    z = z - np.max(z)
    total = np.float32(0)
    for v in z:
        total += np.exp(v)
    p = np.exp(z) / total
    grad = p.astype(float)
    grad[target] -= 1.0
    return float(np.log(total) - z[target]), grad
""",
    },
    "lora_param_count": {
        "sum of both shapes, in any order": """
def lora_param_count(d_out, d_in, r):
    if r > min(d_in, d_out) or r < 0:
        raise ValueError("rango")
    return d_out * r + r * d_in
""",
    },
    "kl_divergence": {
        "float32, terms summed in a loop": """
def kl_divergence(p, q):
    p = np.asarray(p, dtype=np.float32)
    q = np.asarray(q, dtype=np.float32)
    total = np.float32(0)
    for pi, qi in zip(p, q):
        if pi > 0:
            total += pi * (np.log(pi) - np.log(qi))
    return float(total)
""",
    },
    "dpo_loss": {
        "margins first, then logaddexp": """
def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):
    margen = (logp_w - logp_l) - (ref_w - ref_l)
    return float(np.logaddexp(0, -beta * margen))
""",
    },
    "contamination_rate": {
        "regex whitespace, ints counted in a loop": """
import re as _re


def contamination_rate(train, test):
    if len(test) == 0:
        raise ValueError("vacío")
    def norma(t):
        return _re.sub(r"\\s+", " ", unicodedata.normalize("NFKC", t).casefold()).strip()
    vistos = set(map(norma, train))
    return float(sum(1 for t in test if norma(t) in vistos)) / len(test)
""",
    },
    "answer_labels": {
        "padding computed once, ints with operator.index": """
import operator as _op


def answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0):
    pr = [_op.index(i) for i in prompt_ids]
    an = [_op.index(i) for i in answer_ids]
    if not an:
        raise ValueError("vacía")
    n = len(pr) + len(an)
    falta = 0 if max_len is None else max_len - n
    if falta < 0:
        raise ValueError("no cabe")
    return pr + an + [_op.index(pad_id)] * falta, [-100] * len(pr) + an + [-100] * falta
""",
    },
}
for _answer, _by_name in _AUDIT.items():
    ALTERNATIVES[_answer].update(_by_name)
