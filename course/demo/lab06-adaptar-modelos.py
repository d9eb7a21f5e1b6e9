"""Demo class for lab 06: fictional students covering what a real class hands in.

Points per exercise: softmax_xent 2, linear_head_grad 3, sgd_step 1, answer_labels 2, lora_param_count 1, LoRALinear 3, merge_lora 2, kl_divergence 2,
distill_loss 3, dpo_loss 2, contamination_rate 2, decisiones 2 (25 autograded) + 3 for the written answer
(graded by hand in formgrader).
"""

# The typical mistakes of chapter 06, as a student would write them.
GRADIENT_SIGN_FLIPPED = '''
def softmax_xent(logits, target):
    """Pérdida de entropía cruzada y su gradiente respecto a los logits: (−log p_target, p − y)."""
    z = np.array(logits, dtype=float)
    p = np.exp(z - z.max())
    p = p / p.sum()
    y = np.zeros(len(z))
    y[target] = 1
    return float(-np.log(p[target])), y - p
'''

GRADIENT_NOT_AVERAGED = '''
def linear_head_grad(h, W, targets):
    """∂L/∂W de la entropía cruzada media de la cabeza z = h W: Hᵀ(P − Y) / B."""
    H, W = np.asarray(h, dtype=float), np.asarray(W, dtype=float)
    z = H @ W
    P = np.exp(z - z.max(axis=1, keepdims=True))
    P = P / P.sum(axis=1, keepdims=True)
    P[np.arange(len(H)), targets] -= 1.0
    return H.T @ P  # la suma del lote: falta dividir entre B
'''

STEP_IN_PLACE = '''
def sgd_step(theta, grad, lr=2e-5):
    """θ − lr·∇, en un array nuevo de floats."""
    theta -= lr * np.asarray(grad)  # como hace el optimizador... pero aquí se pedía un array nuevo
    return theta
'''

MASK_OFF_BY_ONE = '''
def answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0):
    """(input_ids, labels) de un ejemplo de SFT: −100 fuera de la respuesta."""
    ids = [int(i) for i in prompt_ids] + [int(i) for i in answer_ids]
    n = len(prompt_ids) - 1  # «el modelo predice el siguiente», así que uno menos
    labels = [-100] * n + ids[n:]
    if max_len is not None:
        ids = ids + [pad_id] * (max_len - len(ids))
        labels = labels + [-100] * (max_len - len(labels))
    return ids, labels
'''

COUNTS_EVERY_WEIGHT = '''
def lora_param_count(d_out, d_in, r):
    """Parámetros entrenables de LoRA de rango r sobre una matriz d_out × d_in."""
    return r * d_out * d_in
'''

B_STARTS_RANDOM = '''
class LoRALinear(nn.Module):
    """Una capa lineal congelada más una corrección entrenable de rango r: base(x) + (alpha/r)·B A x."""

    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad = False
        d_out, d_in = base.weight.shape
        self.A = nn.Parameter(torch.randn(r, d_in) / d_in ** 0.5)
        self.B = nn.Parameter(torch.randn(d_out, r) / r ** 0.5)  # las dos al azar, «para que aprenda antes»
        self.escala = alpha / r

    def forward(self, x):
        return self.base(x) + self.escala * (x @ self.A.T @ self.B.T)
'''

MERGE_WITHOUT_SCALE = '''
def merge_lora(W, A, B, alpha, r):
    """W' = W + (alpha/r)·B A, sin modificar W."""
    return np.array(W, dtype=float) + np.array(B) @ np.array(A)  # ya no modifica W... pero sigue sin α/r
'''

KL_REVERSED = '''
def kl_divergence(p, q):
    """KL(p ‖ q) = Σ p_i log(p_i / q_i), en nats; los términos con p_i = 0 no cuentan."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return float(np.sum(q * np.log(q / p)))
'''

HARD_LABELS = '''
def distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5):
    """(1 − lam)·CE(y, softmax(alumno)) + lam·T²·KL(softmax(profesor/T) ‖ softmax(alumno/T))."""
    s = np.asarray(student_logits, dtype=float)
    p = np.exp(s - s.max())
    p = p / p.sum()
    ce = -np.log(p[y])
    favorita = int(np.argmax(teacher_logits))  # lo que dice el profesor
    return float((1 - lam) * ce + lam * -np.log(p[favorita]))
'''

RAW_STRINGS = '''
def contamination_rate(train, test):
    """Fracción de test cuyo texto normalizado aparece en train."""
    return sum(t in train for t in test) / len(test)
'''

OPEN_SOURCE_FOR_WEIGHTS = '''
def openness_category(card):
    """"cerrado", "pesos abiertos" u "código abierto" según las piezas publicadas y la licencia."""
    return "código abierto" if card["weights"] else "cerrado"


def choose_adaptation(need):
    """La primera técnica que conviene probar para una necesidad."""
    return "fine-tuning"
'''

# A student who only wraps the library's reference: visible checks fail before grading, and so do the hidden ones.
CALLS_REFERENCE = {
    "softmax_xent": "def softmax_xent(logits, target):\n    return DI.softmax_xent(logits, target)",
    "linear_head_grad": "def linear_head_grad(h, W, targets):\n    return TS.linear_head_grad(h, W, targets)",
    "sgd_step": "def sgd_step(theta, grad, lr=2e-5):\n    return TS.sgd_step(theta, grad, lr)",
    "answer_labels": (
        "def answer_labels(prompt_ids, answer_ids, max_len=None, pad_id=0):\n"
        "    return TS.answer_labels(prompt_ids, answer_ids, max_len, pad_id)"
    ),
    "lora_param_count": "def lora_param_count(d_out, d_in, r):\n    return lora.lora_param_count(d_out, d_in, r)",
    "LoRALinear": (
        "class LoRALinear(lora.LoRALinear):\n"
        "    def __init__(self, base, r, alpha):\n"
        "        super().__init__(base, r, alpha)\n"
        "        self.base, self.A, self.B, self.escala = self.base_layer, self.lora_A.weight, self.lora_B.weight, self.scaling"
    ),
    "merge_lora": "def merge_lora(W, A, B, alpha, r):\n    return lora.merge_lora(np.asarray(W), np.asarray(A), np.asarray(B), alpha, r)",
    "kl_divergence": "def kl_divergence(p, q):\n    return DI.kl_divergence(p, q)",
    "distill_loss": (
        "def distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5):\n"
        "    return DI.distill_loss(student_logits, teacher_logits, y, T=T, lam=lam)"
    ),
    "dpo_loss": "def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta=0.1):\n    return DI.dpo_loss(logp_w, logp_l, ref_w, ref_l, beta)",
    "contamination_rate": "def contamination_rate(train, test):\n    return DS.contamination_rate(train, test)",
    "decisiones": (
        "def openness_category(card):\n    return AD.openness_category(card)\n\n\n"
        "def choose_adaptation(need):\n    return AD.choose_adaptation(need)"
    ),
}

STUDENTS = {
    # Everything right, written answer included.
    "ana_correcta": {
        "answers": "solution",
        "expected": {"score": 25, "flags": ["manual"]},
    },
    # Opened the release and handed it in untouched (the find-the-bug cells keep their bugs).
    "bruno_sin_tocar": {
        "answers": {},
        "expected": {"score": 0, "flags": []},
    },
    # Did the first four exercises (the training step included), and deleted a test cell further down (the grader puts it back).
    "carla_parcial": {
        "answers": {gid: "solution" for gid in ["softmax_xent", "linear_head_grad", "sgd_step", "answer_labels"]},
        "delete_cells": ["test_contamination_rate"],
        "expected": {"score": 8, "flags": ["reparada"]},
    },
    # The chapter's typical mistakes; only dpo_loss and contamination_rate right.
    "diego_errores": {
        "answers": {
            "softmax_xent": GRADIENT_SIGN_FLIPPED,
            "linear_head_grad": GRADIENT_NOT_AVERAGED,
            "sgd_step": STEP_IN_PLACE,
            "answer_labels": MASK_OFF_BY_ONE,
            "lora_param_count": COUNTS_EVERY_WEIGHT,
            "LoRALinear": B_STARTS_RANDOM,
            "merge_lora": MERGE_WITHOUT_SCALE,
            "kl_divergence": KL_REVERSED,
            "distill_loss": HARD_LABELS,
            "dpo_loss": "solution",
            "contamination_rate": "solution",
            "decisiones": OPEN_SOURCE_FOR_WEIGHTS,
            "respuesta_soporte": "Con 3 000 respuestas ya se puede ajustar el modelo entero y meterle también los precios.",
        },
        "expected": {"score": 4, "flags": ["manual"]},
    },
    # Forgot T² in distill_loss, and replaced its test cell by `assert True`: the test is restored and she
    # gets 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in [
            "softmax_xent", "linear_head_grad", "sgd_step", "answer_labels", "lora_param_count", "LoRALinear",
            "merge_lora", "kl_divergence", "dpo_loss",
            "contamination_rate", "decisiones", "respuesta_soporte"]},
            "distill_loss": (
                "def distill_loss(student_logits, teacher_logits, y, T=2.0, lam=0.5):\n"
                "    def ls(z):\n"
                "        z = np.asarray(z, dtype=float)\n"
                "        z = z - z.max()\n"
                "        return z - np.log(np.exp(z).sum())\n"
                "    s, t = np.asarray(student_logits, dtype=float), np.asarray(teacher_logits, dtype=float)\n"
                "    pt = np.exp(ls(t / T))\n"
                "    kl = float(np.sum(pt * (ls(t / T) - ls(s / T))))\n"
                "    return float((1 - lam) * -ls(s)[y] + lam * kl)"
            )},
        "edit_cells": {"test_distill_loss": "# Comprobación del ejercicio 9\nassert True"},
        "expected": {"score": 22, "flags": ["manipulada", "manual"], "tests": {"test_distill_loss": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def softmax_xent(logits, targ',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: earns nothing.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: she scores, but the grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["softmax_xent", "lora_param_count", "LoRALinear"]},
        "prepend_code": (
            "# las comprobaciones me daban errores\n"
            "check_close = check_equal = check_raises = check_true = check_shape = check_number = lambda *a, **k: None"
        ),
        "expected": {"score": 6, "flags": ["sospechosa"]},
    },
}
