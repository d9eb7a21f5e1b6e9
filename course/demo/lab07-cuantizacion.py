"""Demo class for lab 07: fictional students covering what a real class hands in.

Points per exercise: weight_memory 1, quantize_int8 2, quant_report 2, quantize_rows 2, quantize_groups 3,
quantize_affine 3, pack_q4_0 3, unpack_q4_0 2 (find the bug), error_after_quantization 2 (find the bug) (20
autograded) + 3 for the
written answer (graded by hand in formgrader). An untouched find-the-bug cell keeps its bug and scores 0, even
with the checks switched off (ines_parchea: only the exercises she solved count).
"""

# The typical mistakes of chapters 06-08, as a student would write them.
MEMORY_IN_GIB = '''
def weight_memory(n_params, bits, unit="GB"):
    """Memoria de n_params pesos de `bits` bits cada uno, en GB (1e9 bytes) o GiB (2**30 bytes)."""
    if unit not in ("GB", "GiB"):
        raise ValueError("unidad")
    return n_params * bits / 8 / 1024**3  # un giga son 1024 megas
'''

SCALE_FROM_THE_MEAN = '''
def quantize_int8(w):
    """Cuantización int8 simétrica de todo el tensor: devuelve (q int8, scale float)."""
    w = np.asarray(w, dtype=float)
    scale = float(np.abs(w).mean()) / 127  # el peso típico, no el raro
    if scale == 0:
        return np.zeros(w.shape, dtype=np.int8), 0.0
    return np.clip(np.round(w / scale), -127, 127).astype(np.int8), scale
'''

ROWS_BY_COLUMN = '''
def quantize_rows(W, bits=8):
    """Cuantización simétrica con una escala por fila: devuelve (q int8 (m, n), scales (m, 1))."""
    W = np.asarray(W, dtype=float)
    qmax = 2 ** (bits - 1) - 1
    scales = np.abs(W).max(axis=0, keepdims=True) / qmax
    q = np.clip(np.round(W / np.where(scales == 0, 1, scales)), -qmax, qmax).astype(np.int8)
    return q, scales
'''

ZERO_POINT_TRUNCATED = '''
def quantize_affine(w, bits=8):
    """Cuantización afín de todo el tensor: devuelve (q uint8, scale float, zero_point int)."""
    if not 2 <= bits <= 8:
        raise ValueError("bits")
    w = np.asarray(w, dtype=float)
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = (hi - lo) / (2**bits - 1)
    if scale == 0:
        return np.zeros(w.shape, dtype=np.uint8), 0.0, 0
    zero_point = int(-lo / scale)  # el código del cero, sin decimales
    q = np.clip(np.round(w / scale) + zero_point, 0, 2**bits - 1).astype(np.uint8)
    return q, scale, zero_point
'''

NEIGHBOUR_NIBBLES = '''
def pack_q4_0(block):
    """Los 18 bytes del bloque Q4_0 (GGUF) de 32 pesos: escala float16 + 16 bytes de nibbles."""
    x = np.asarray(block, dtype=np.float32)
    if x.size != 32:
        raise ValueError("32 pesos")
    d = x[np.argmax(np.abs(x))] / np.float32(-8)
    c = np.minimum(15, np.trunc(x / d + np.float32(8.5))).astype(np.uint8)
    bytes_codigos = c[0::2] | (c[1::2] << 4)  # dos pesos seguidos en cada byte
    return np.concatenate([np.array([d], dtype="<f2").view(np.uint8), bytes_codigos])
'''

GIVEN_UNPACK_BUG = '''
def unpack_q4_0(data):
    """Los 32 pesos d · (c − 8) de un bloque Q4_0 de 18 bytes."""
    data = np.asarray(data, dtype=np.uint8)
    if data.shape != (18,):
        raise ValueError(f"un bloque Q4_0 tiene 18 bytes, no {data.size}")
    d = data[:2].view("<f2")[0].astype(np.float32)
    nibbles = data[2:]
    c = np.stack([nibbles & 0x0F, nibbles >> 4], axis=1).ravel()
    return d * (c.astype(np.float32) - 8)
'''

IN_PLACE = '''
def error_after_quantization(W, x, bits=8):
    """Error relativo ||W x − Ŵ x|| / ||W x|| tras cuantizar W (una escala, `bits` bits)."""
    qmax = 2 ** (bits - 1) - 1
    escala = np.abs(W).max() / qmax
    W /= escala
    np.round(W, out=W)
    W *= escala
    W_hat = W
    return float(np.linalg.norm(W @ x - W_hat @ x) / np.linalg.norm(W @ x))
'''

# A student who only wraps the library's reference: visible checks fail with the blocking message.
CALLS_REFERENCE = {
    "weight_memory": (
        "def weight_memory(n_params, bits, unit='GB'):\n"
        "    return Q.weight_memory_bytes(n_params, bits) / (1e9 if unit == 'GB' else 2**30)"
    ),
    "quantize_int8": "def quantize_int8(w):\n    return Q.quantize_int8_absmax(w)",
    "quant_report": "def quant_report(W, x):\n    return Q.quant_report(W, x)",
    "quantize_rows": "def quantize_rows(W, bits=8):\n    return Q.quantize_absmax(W, bits, axis=1)",
    "quantize_groups": "def quantize_groups(W, bits=4, group_size=32):\n    return Q.quantize_groupwise(W, bits, group_size)",
    "quantize_affine": "def quantize_affine(w, bits=8):\n    return Q.quantize_affine(w, bits)",
    "pack_q4_0": "def pack_q4_0(block):\n    return Q.quantize_q4_0(np.asarray(block, dtype=np.float32))",
    "unpack_q4_0": "def unpack_q4_0(data):\n    return Q.dequantize_q4_0(np.asarray(data, dtype=np.uint8))",
    "error_after_quantization": (
        "def error_after_quantization(W, x, bits=8):\n"
        "    return Q.relative_matvec_error(W, Q.fake_quantize(W, bits), x)"
    ),
}

ALL = ["weight_memory", "quantize_int8", "quant_report", "quantize_rows", "quantize_groups", "quantize_affine",
       "pack_q4_0", "unpack_q4_0", "error_after_quantization"]

STUDENTS = {
    # Everything right, written answer included.
    "ana_correcta": {
        "answers": "solution",
        "expected": {"score": 20, "flags": ["manual"]},
    },
    # Opened the release and handed it in untouched.
    "bruno_sin_tocar": {
        "answers": {},
        "expected": {"score": 0, "flags": []},
    },
    # Did the first four exercises, and deleted a test cell further down (the grader puts it back).
    "carla_parcial": {
        "answers": {gid: "solution" for gid in ["weight_memory", "quantize_int8", "quant_report", "quantize_rows"]},
        "delete_cells": ["test_pack_q4_0"],
        "expected": {"score": 7, "flags": ["reparada"]},
    },
    # The chapter's typical mistakes. Her quant_report is right, but it calls her own quantize_int8 (scale from
    # the mean), so its numbers are wrong too; only quantize_groups is fully right.
    "diego_errores": {
        "answers": {
            "weight_memory": MEMORY_IN_GIB,
            "quantize_int8": SCALE_FROM_THE_MEAN,
            "quant_report": "solution",
            "quantize_rows": ROWS_BY_COLUMN,
            "quantize_groups": "solution",
            "quantize_affine": ZERO_POINT_TRUNCATED,
            "pack_q4_0": NEIGHBOUR_NIBBLES,
            "unpack_q4_0": GIVEN_UNPACK_BUG,
            "error_after_quantization": IN_PLACE,
            "respuesta_cuantizar": "Q4_0 ocupa 8 veces menos, así que va 8 veces más rápido y la calidad es la misma.",
        },
        "expected": {"score": 3, "flags": ["manual"]},
    },
    # Quantised per column in quantize_rows, and replaced its test cell by `assert True`: the test is restored
    # and she gets 0 points there.
    "elena_trampa": {
        "answers": {**{gid: "solution" for gid in ALL if gid != "quantize_rows"}, "quantize_rows": ROWS_BY_COLUMN,
                    "respuesta_cuantizar": "solution"},
        "edit_cells": {"test_quantize_rows": "# Comprobación del ejercicio 4\nassert True"},
        "expected": {"score": 18, "flags": ["manipulada", "manual"], "tests": {"test_quantize_rows": 0}},
    },
    # The file got truncated on upload: it cannot be read, and the rest of the class is still graded.
    "fede_roto": {
        "raw": '{"cells": [{"cell_type": "code", "source": "def quantize_int8(w',
        "expected": {"score": None, "flags": ["FALLO"]},
    },
    # Wraps llmlab's own implementations: earns nothing.
    "hugo_referencia": {
        "answers": CALLS_REFERENCE,
        "expected": {"score": 0, "flags": []},
    },
    # Disables the checks from a cell of her own: what runs scores (her three answers and the untouched unpack_q4_0,
    # whose bug her disabled checks no longer see; the untouched error_after_quantization still scores 0, because
    # checked_call itself sees it modify W in place), but the grader flags it for review.
    "ines_parchea": {
        "answers": {gid: "solution" for gid in ["weight_memory", "quantize_int8", "quant_report"]},
        "prepend_code": (
            "# las comprobaciones me daban errores\n"
            "check_close = check_equal = check_raises = check_true = check_number = check_array = lambda *a, **k: None"
        ),
        "expected": {"score": 5, "flags": ["sospechosa"],
                     "tests": {"test_unpack_q4_0": 0, "test_error_after_quantization": 0}},
    },
}
