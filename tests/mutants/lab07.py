"""Wrong implementations of lab 07's exercises, from the quantisation mistakes of chapters 06-08.

Each must lose points: at least one test cell of its exercise has to fail. Besides the chapter's own
mistakes (scale from the mean instead of the max, forgetting to round, clipping wrong, quantising in
place, nibble order in Q4_0, GB vs GiB, a report without the error) every exercise gets the families
of LAB-CONVENTIONS: modifies its input, boundary (qmax off by one), wrong return type, ignores a
non-default argument, does not raise the documented ValueError.
"""

from functools import partial

LAB = "lab07-cuantizacion"

REFERENCES = {
    "weight_memory": "Q.weight_memory_bytes",
    "quantize_int8": "Q.quantize_int8_absmax",
    "quant_report": "Q.quant_report",
    "quantize_rows": "Q.quantize_absmax",
    "quantize_groups": "Q.quantize_groupwise",
    "quantize_affine": "Q.quantize_affine",
    "pack_q4_0": "Q.quantize_q4_0",
    "unpack_q4_0": "Q.dequantize_q4_0",
    "error_after_quantization": "Q.relative_matvec_error",
}


def _fill(template: str, correct: dict, **change) -> str:
    """The exercise's correct code (``template`` filled with ``correct``) with the pieces in ``change`` swapped."""
    return template.format(**{**correct, **change})


# ----------------------------------------------------------------------------------------------
# weight_memory
# ----------------------------------------------------------------------------------------------

_MEMORY = """
def weight_memory(n_params, bits, unit="GB"):
    {check}
    n_bytes = {bytes}
    return {ret}
"""
_MEMORY_OK = dict(
    check=(
        "if unit not in ('GB', 'GiB'):\n        raise ValueError('unit')\n"
        "    if n_params < 0 or bits <= 0:\n        raise ValueError('n')"
    ),
    bytes="n_params * bits / 8",
    ret="float(n_bytes / (1e9 if unit == 'GB' else 2**30))",
)


_memory = partial(_fill, _MEMORY, _MEMORY_OK)


# ----------------------------------------------------------------------------------------------
# quantize_int8
# ----------------------------------------------------------------------------------------------

_INT8 = """
def quantize_int8(w):
    w = {convert}
    scale = {scale}
    if scale == 0:
        return np.zeros(np.shape(w), dtype=np.int8), 0.0
    q = {codes}
    return {ret}
"""
_INT8_OK = dict(
    convert="np.asarray(w, dtype=float)",
    scale="float(np.abs(w).max()) / 127",
    codes="np.clip(np.round(w / scale), -127, 127).astype(np.int8)",
    ret="q, scale",
)


_int8 = partial(_fill, _INT8, _INT8_OK)


# ----------------------------------------------------------------------------------------------
# quant_report
# ----------------------------------------------------------------------------------------------

_REPORT = """
def quant_report(W, x):
    W = {convert}
    x = np.asarray(x, dtype=float)
    q, scale = quantize_int8(W)
    W_hat = {w_hat}
    exacto = W @ x
    return {{
        "mem_ratio": {mem},
        "rel_error": {rel},
        "max_error": {max_error},
        "scale": float(scale),
    }}
"""
_REPORT_OK = dict(
    convert="np.asarray(W, dtype=float)",
    w_hat="scale * q.astype(float)",
    mem="float(W.size * 4 / q.size)",
    rel="float(np.linalg.norm(exacto - W_hat @ x) / np.linalg.norm(exacto))",
    max_error="float(np.abs(W - W_hat).max())",
)


_report = partial(_fill, _REPORT, _REPORT_OK)


# ----------------------------------------------------------------------------------------------
# quantize_rows
# ----------------------------------------------------------------------------------------------

_ROWS = """
def quantize_rows(W, bits=8):
    {check}
    W = {convert}
    qmax = {qmax}
    scales = {scales}
    seguras = np.where(scales == 0, 1.0, scales)
    q = {codes}
    return {ret}
"""
_ROWS_OK = dict(
    check="if not 2 <= bits <= 8:\n        raise ValueError('bits')",
    convert="np.asarray(W, dtype=float)",
    qmax="2 ** (bits - 1) - 1",
    scales="np.abs(W).max(axis=1, keepdims=True) / qmax",
    codes="np.clip(np.round(W / seguras), -qmax, qmax).astype(np.int8)",
    ret="q, scales",
)


_rows = partial(_fill, _ROWS, _ROWS_OK)


# ----------------------------------------------------------------------------------------------
# quantize_groups
# ----------------------------------------------------------------------------------------------

_GROUPS = """
def quantize_groups(W, bits=4, group_size=32):
    W = np.asarray(W, dtype=float)
    m, n = W.shape
    {check}
    qmax = {qmax}
    grupos = {groups}
    scales = {scales}
    seguras = np.where(scales == 0, 1.0, scales)[:, :, None]
    q = np.clip(np.round(grupos / seguras), -qmax, qmax).astype(np.int8)
    return {ret}
"""
_GROUPS_OK = dict(
    check="if group_size < 1 or n % group_size != 0:\n        raise ValueError('group_size')",
    qmax="2 ** (bits - 1) - 1",
    groups="W.reshape(m, n // group_size, group_size)",
    scales="np.abs(grupos).max(axis=2) / qmax",
    ret="q.reshape(m, n), scales",
)


_groups = partial(_fill, _GROUPS, _GROUPS_OK)


# ----------------------------------------------------------------------------------------------
# quantize_affine
# ----------------------------------------------------------------------------------------------

_AFFINE = """
def quantize_affine(w, bits=8):
    {check}
    w = {convert}
    levels = {levels}
    lo, hi = {range}
    scale = {scale}
    if scale == 0:
        return np.zeros(w.shape, dtype=np.uint8), 0.0, 0
    zero_point = {zero}
    q = {codes}
    return {ret}
"""
_AFFINE_OK = dict(
    check="if isinstance(bits, bool) or not isinstance(bits, int) or not 2 <= bits <= 8:\n        raise ValueError('bits')",
    convert="np.asarray(w, dtype=float)",
    levels="2**bits - 1",
    range="min(float(w.min()), 0.0), max(float(w.max()), 0.0)",
    scale="(hi - lo) / levels",
    zero="int(np.round(-lo / scale))",
    codes="np.clip(np.round(w / scale) + zero_point, 0, levels).astype(np.uint8)",
    ret="q, scale, zero_point",
)


_affine = partial(_fill, _AFFINE, _AFFINE_OK)


# ----------------------------------------------------------------------------------------------
# pack_q4_0
# ----------------------------------------------------------------------------------------------

_PACK = """
def pack_q4_0(block):
    x = {convert}
    if x.size != 32:
        raise ValueError("32")
    m = {m}
    d = {d}
    if d == 0:
        c = np.full(32, 8, dtype=np.uint8)
    else:
        c = {codes}
    nibbles = {nibbles}
    escala = {scale}
    return {ret}
"""
_PACK_OK = dict(
    convert="np.asarray(block, dtype=np.float32).ravel()",
    m="x[np.argmax(np.abs(x))]",
    d="np.float32(m / np.float32(-8))",
    codes="np.minimum(15, np.trunc(x * (np.float32(1) / d) + np.float32(8.5))).astype(np.uint8)",
    nibbles="c[:16] | (c[16:] << 4)",
    scale='np.array([d], dtype="<f2").view(np.uint8)',
    ret="np.concatenate([escala, nibbles]).astype(np.uint8)",
)


_pack = partial(_fill, _PACK, _PACK_OK)


# ----------------------------------------------------------------------------------------------
# unpack_q4_0 (find the bug)
# ----------------------------------------------------------------------------------------------

_UNPACK = """
def unpack_q4_0(data):
    data = np.asarray(data, dtype=np.uint8)
    {check}
    d = {d}
    nibbles = data[2:]
    c = {codes}
    return {ret}
"""
_UNPACK_OK = dict(
    check="if data.shape != (18,):\n        raise ValueError('18')",
    d='data[:2].view("<f2")[0].astype(np.float32)',
    codes="np.concatenate([nibbles & 0x0F, nibbles >> 4])",
    ret="d * (c.astype(np.float32) - 8)",
)


_unpack = partial(_fill, _UNPACK, _UNPACK_OK)


# ----------------------------------------------------------------------------------------------
# error_after_quantization (find the bug)
# ----------------------------------------------------------------------------------------------

_ERROR = """
def error_after_quantization(W, x, bits=8):
    qmax = {qmax}
    W = {convert}
    x = np.asarray(x, dtype=float)
    escala = {scale}
    W_hat = {w_hat}
    return {ret}
"""
_ERROR_OK = dict(
    qmax="2 ** (bits - 1) - 1",
    convert="np.asarray(W, dtype=float)",
    scale="np.abs(W).max() / qmax",
    w_hat="np.clip(np.round(W / escala), -qmax, qmax) * escala",
    ret="float(np.linalg.norm(W @ x - W_hat @ x) / np.linalg.norm(W @ x))",
)


_error = partial(_fill, _ERROR, _ERROR_OK)


MUTANTS = {
    "weight_memory": {
        "GiB instead of GB": _memory(ret="float(n_bytes / 2**30)"),
        "GB instead of GiB": _memory(ret="float(n_bytes / 1e9)"),
        "1024**3 for GB": _memory(ret="float(n_bytes / (1024**3 if unit == 'GB' else 2**30))"),
        "bits taken as bytes": _memory(bytes="n_params * bits"),
        "ignores unit": _memory(check="pass", ret="float(n_bytes / 1e9)"),
        "no ValueError for a bad unit": _memory(check="if n_params < 0 or bits <= 0:\n        raise ValueError('n')"),
        "no ValueError for negative sizes": _memory(check="if unit not in ('GB', 'GiB'):\n        raise ValueError('u')"),
        "returns bytes": _memory(ret="float(n_bytes)"),
        "returns a string": _memory(ret="f'{n_bytes / (1e9 if unit == \"GB\" else 2**30):.2f}'"),
    },
    "quantize_int8": {
        "scale from the mean of |w|": _int8(scale="float(np.abs(w).mean()) / 127"),
        "forgets to round (truncates)": _int8(codes="np.clip(w / scale, -127, 127).astype(np.int8)"),
        "no clip, scale over 128": _int8(scale="float(np.abs(w).max()) / 128", codes="np.round(w / scale).astype(np.int8)"),
        "clips to the unsigned range": _int8(codes="np.clip(np.round(w / scale), 0, 255).astype(np.uint8)"),
        "qmax 255": _int8(scale="float(np.abs(w).max()) / 255", codes="np.clip(np.round(w / scale), -127, 127).astype(np.int8)"),
        "scale from max, not max|w|": _int8(scale="float(w.max()) / 127 if w.max() > 0 else float(np.abs(w).max()) / 127"),
        "quantises in place": _int8(
            convert="w if isinstance(w, np.ndarray) and w.dtype == float else np.asarray(w, dtype=float)",
            codes="np.clip(np.round(np.divide(w, scale, out=w), out=w), -127, 127).astype(np.int8)",
        ),
        "codes as floats": _int8(codes="np.clip(np.round(w / scale), -127, 127)"),
        "codes as a list": _int8(codes="np.clip(np.round(w / scale), -127, 127).astype(np.int8).tolist()"),
        "scale as an array": _int8(ret="q, np.abs(w).max(keepdims=True) / 127"),
        "returns (scale, q)": _int8(ret="scale, q"),
        "divides by a zero scale": _int8(codes="np.clip(np.round(w * (1 / scale)), -127, 127).astype(np.int8)").replace(
            "    if scale == 0:\n        return np.zeros(np.shape(w), dtype=np.int8), 0.0\n", ""),
    },
    "quant_report": {
        "report without the error": (
            "def quant_report(W, x):\n"
            "    W = np.asarray(W, dtype=float)\n"
            "    q, scale = quantize_int8(W)\n"
            "    return {'mem_ratio': float(W.size * 4 / q.size), 'scale': float(scale)}\n"
        ),
        "error on the codes, not dequantised": _report(w_hat="q.astype(float)"),
        "quantises W in place (error 0)": _report(
            convert="W if isinstance(W, np.ndarray) and W.dtype == float else np.asarray(W, dtype=float)",
            w_hat="W",
        ).replace("q, scale = quantize_int8(W)", "q, scale = quantize_int8(W)\n    W *= 0; W += scale * q"),
        "mem ratio from bits the other way": _report(mem="float(q.size / (W.size * 4))"),
        "mem ratio 8 (float64 vs int8)": _report(mem="float(W.size * 8 / q.size)"),
        "absolute error, not relative": _report(rel="float(np.linalg.norm(exacto - W_hat @ x))"),
        "relative to the quantised product": _report(rel="float(np.linalg.norm(exacto - W_hat @ x) / np.linalg.norm(W_hat @ x))"),
        "mean absolute error": _report(rel="float(np.abs(exacto - W_hat @ x).mean() / np.abs(exacto).mean())"),
        "max error as mean": _report(max_error="float(np.abs(W - W_hat).mean())"),
        "values as arrays": _report(max_error="np.abs(W - W_hat).max(keepdims=True)"),
    },
    "quantize_rows": {
        "per column (axis=0)": _rows(scales="np.abs(W).max(axis=0, keepdims=True) / qmax"),
        "ignores bits": _rows(qmax="127"),
        "qmax 2**bits - 1": _rows(qmax="2 ** bits - 1"),
        "qmax 2**(bits-1) (overflows int8)": _rows(qmax="2 ** (bits - 1)", codes="np.round(W / seguras).astype(np.int8)"),
        "clip one short (< instead of <=)": _rows(codes="np.clip(np.round(W / seguras), -qmax, qmax - 1).astype(np.int8)"),
        "scale from the row mean": _rows(scales="np.abs(W).mean(axis=1, keepdims=True) / qmax"),
        "scales with shape (m,)": _rows(ret="q, scales[:, 0]"),
        "no ValueError for bits": _rows(check="pass"),
        "quantises in place": _rows(
            convert="W if isinstance(W, np.ndarray) and W.dtype == float else np.asarray(W, dtype=float)",
            codes="np.clip(np.round(np.divide(W, seguras, out=W), out=W), -qmax, qmax).astype(np.int8)",
        ),
        "codes as floats": _rows(codes="np.clip(np.round(W / seguras), -qmax, qmax)"),
    },
    "quantize_groups": {
        "groups down the columns": _groups(groups="W.T.reshape(m, n // group_size, group_size)"),
        "ignores group_size (per row)": _groups(groups="W.reshape(m, 1, n)", ret="q.reshape(m, n), np.repeat(scales, n // group_size, axis=1)"),
        "ignores bits": _groups(qmax="7"),
        "scale from the group mean": _groups(scales="np.abs(grupos).mean(axis=2) / qmax"),
        "qmax 2**bits": _groups(qmax="2 ** bits"),
        "clip one short": _groups(qmax="2 ** (bits - 1) - 1", ret="np.minimum(q, qmax - 1).reshape(m, n).astype(np.int8), scales"),
        "no ValueError when n is not a multiple": _groups(check="pass", groups="W[:, : n - n % group_size].reshape(m, n // group_size, group_size)",
                                                           ret="np.pad(q.reshape(m, -1), ((0, 0), (0, n % group_size))), scales"),
        "scales flattened": _groups(ret="q.reshape(m, n), scales.ravel()"),
        "codes as floats": _groups(ret="q.reshape(m, n).astype(float), scales"),
    },
    "quantize_affine": {
        "zero point truncated (int)": _affine(zero="int(-lo / scale)"),
        "zero point with ceil": _affine(zero="int(np.ceil(-lo / scale))"),
        "zero point not rounded (float)": _affine(zero="-lo / scale"),
        "zero point as a NumPy integer": _affine(zero="np.round(-lo / scale).astype(np.int64)"),
        "zero point as a float": _affine(zero="float(np.round(-lo / scale))"),
        "zero point rounded half up": _affine(zero="int(np.floor(-lo / scale + 0.5))"),
        "zero point from the top of the range": _affine(zero="int(np.round(hi / scale))"),
        "zero point subtracted": _affine(codes="np.clip(np.round(w / scale) - zero_point, 0, levels).astype(np.uint8)"),
        "clip to 2**bits (one too many)": _affine(codes="np.clip(np.round(w / scale) + zero_point, 0, 2**bits).astype(np.uint8)"),
        "no clip": _affine(codes="(np.round(w / scale) + zero_point).astype(np.uint8)"),
        "clip to the signed range": _affine(codes="np.clip(np.round(w / scale) + zero_point, -128, 127).astype(np.uint8)"),
        "clip after the uint8 cast": _affine(codes="np.clip((np.round(w / scale) + zero_point).astype(np.int64).astype(np.uint8), 0, levels)"),
        "codes as int8": _affine(codes="np.clip(np.round(w / scale) + zero_point, 0, levels).astype(np.int8)"),
        "codes as int64": _affine(codes="np.clip(np.round(w / scale) + zero_point, 0, levels).astype(np.int64)"),
        "codes as floats": _affine(codes="np.clip(np.round(w / scale) + zero_point, 0, levels)"),
        "codes truncated": _affine(codes="np.clip(np.trunc(w / scale) + zero_point, 0, levels).astype(np.uint8)"),
        "range without 0 (raw min and max)": _affine(range="float(w.min()), float(w.max())"),
        "symmetric range ±max|w|": _affine(range="-float(np.abs(w).max()), float(np.abs(w).max())"),
        "levels 2**bits": _affine(levels="2**bits"),
        "levels of the signed grid": _affine(levels="2 ** (bits - 1) - 1"),
        "ignores bits": _affine(levels="255"),
        "no ValueError for bits": _affine(check="pass"),
        "accepts non-integer bits": _affine(check="if not 2 <= bits <= 8:\n        raise ValueError('bits')"),
        "scale as a 0-d array": _affine(scale="np.asarray((hi - lo) / levels)"),
        "no special case for an all-zero tensor": (
            "def quantize_affine(w, bits=8):\n"
            "    if isinstance(bits, bool) or not isinstance(bits, int) or not 2 <= bits <= 8:\n"
            "        raise ValueError('bits')\n"
            "    w = np.asarray(w, dtype=float)\n"
            "    levels = 2**bits - 1\n"
            "    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)\n"
            "    scale = (hi - lo) / levels\n"
            "    zero_point = int(np.round(-lo / scale))\n"
            "    q = np.clip(np.round(w / scale) + zero_point, 0, levels).astype(np.uint8)\n"
            "    return q, scale, zero_point\n"
        ),
        "returns (q, zero_point, scale)": _affine(ret="q, zero_point, scale"),
        "modifies its input": _affine(
            convert="w if isinstance(w, np.ndarray) and w.dtype == float else np.asarray(w, dtype=float)",
            codes="np.clip(np.round(np.divide(w, scale, out=w)) + zero_point, 0, levels).astype(np.uint8)",
        ),
    },
    "pack_q4_0": {
        "nibbles of neighbours (j, j+1)": _pack(nibbles="c[0::2] | (c[1::2] << 4)"),
        "high and low nibbles swapped": _pack(nibbles="(c[:16] << 4) | c[16:]"),
        "symmetric scale absmax / 7": _pack(d="np.float32(np.abs(m) / np.float32(7))",
                                           codes="np.clip(np.round(x / d) + 8, 0, 15).astype(np.uint8)"),
        "scale sign flipped (m / 8)": _pack(d="np.float32(m / np.float32(8))"),
        "no min(15)": _pack(codes="(np.trunc(x * (np.float32(1) / d) + np.float32(8.5)).astype(np.int64) & 0xFF).astype(np.uint8)"),
        "codes from the float16 scale": _pack(codes="np.minimum(15, np.trunc(x * (np.float32(1) / np.float32(np.float16(d))) + np.float32(8.5))).astype(np.uint8)"),
        "scale stored as float32": _pack(scale='np.array([d], dtype="<f4").view(np.uint8)'),
        "scale big endian": _pack(scale='np.array([d], dtype=">f2").view(np.uint8)'),
        "last maximum on ties": _pack(m="x[31 - np.argmax(np.abs(x[::-1]))]"),
        "returns a list": _pack(ret="np.concatenate([escala, nibbles]).astype(np.uint8).tolist()"),
        "no ValueError for a short block": _pack(convert="np.resize(np.asarray(block, dtype=np.float32).ravel(), 32)"),
        "modifies its input": _pack(
            convert="block if isinstance(block, np.ndarray) and block.dtype == np.float32 else np.asarray(block, dtype=np.float32)",
            codes="np.minimum(15, np.trunc(np.multiply(x, np.float32(1) / d, out=x) + np.float32(8.5))).astype(np.uint8)",
        ),
    },
    "unpack_q4_0": {
        "the given bug: neighbour nibbles": _unpack(codes="np.stack([nibbles & 0x0F, nibbles >> 4], axis=1).ravel()"),
        "halves swapped": _unpack(codes="np.concatenate([nibbles >> 4, nibbles & 0x0F])"),
        "offset 7 instead of 8": _unpack(ret="d * (c.astype(np.float32) - 7)"),
        "codes not centred": _unpack(ret="d * c.astype(np.float32)"),
        "scale read big endian": _unpack(d='data[:2].view(">f2")[0].astype(np.float32)'),
        "returns the integer codes": _unpack(ret="c.astype(np.int64) - 8"),
        "no ValueError for a wrong length": _unpack(check="data = np.resize(data, 18)"),
    },
    "error_after_quantization": {
        "the given bug: in place, error 0": (
            "def error_after_quantization(W, x, bits=8):\n"
            "    qmax = 2 ** (bits - 1) - 1\n"
            "    escala = np.abs(W).max() / qmax\n"
            "    W /= escala\n"
            "    np.round(W, out=W)\n"
            "    W *= escala\n"
            "    W_hat = W\n"
            "    return float(np.linalg.norm(W @ x - W_hat @ x) / np.linalg.norm(W @ x))\n"
        ),
        "ignores bits": _error(qmax="127"),
        "scale from the mean": _error(scale="np.abs(W).mean() / qmax"),
        "forgets to round": _error(w_hat="np.trunc(W / escala) * escala"),
        "qmax 2**bits - 1": _error(qmax="2 ** bits - 1"),
        "error on the codes": _error(w_hat="np.round(W / escala)"),
        "overwrites the caller's W with the quantised one": (
            "def error_after_quantization(W, x, bits=8):\n"
            "    qmax = 2 ** (bits - 1) - 1\n"
            "    x = np.asarray(x, dtype=float)\n"
            "    W_orig = np.array(W, dtype=float)\n"
            "    escala = np.abs(W_orig).max() / qmax\n"
            "    W[...] = np.clip(np.round(W_orig / escala), -qmax, qmax) * escala\n"
            "    return float(np.linalg.norm(W_orig @ x - W @ x) / np.linalg.norm(W_orig @ x))\n"
        ),
        "returns an array": _error(ret="np.array([np.linalg.norm(W @ x - W_hat @ x) / np.linalg.norm(W @ x)])"),
    },
}

# The Spanish hint the checks show when a student's answer behaves like one of these mistakes (llmlab.mistakes;
# the catalogue is built by course/tools/mistake_catalog.py). The names above stay as they are: they are ids.
HINTS = {
    "weight_memory": {
        "GiB instead of GB": "Parece que devuelves GiB cuando se piden GB: revisa la unidad (1 GB = 10**9 bytes).",
        "GB instead of GiB": "Parece que devuelves GB cuando se piden GiB: revisa la unidad (1 GiB = 2**30 bytes).",
        "1024**3 for GB": "Parece que devuelves GiB cuando se piden GB: revisa la unidad (1 GB = 10**9 bytes).",
        "bits taken as bytes": "Parece que cuentas los bits como si fueran bytes: revisa la división entre 8.",
        "ignores unit": "Parece que no haces caso de la unidad que te piden: revisa el argumento de la unidad.",
        "no ValueError for a bad unit": "Parece que una unidad desconocida no lanza ValueError: revisa la validación.",
        "no ValueError for negative sizes": "Parece que un tamaño negativo no lanza ValueError: revisa la validación.",
        "returns bytes": "Parece que devuelves bytes sin convertir a la unidad pedida: revisa la conversión final.",
        "returns a string": "Parece que devuelves un texto en vez de un número: devuelve el valor, sin formatearlo.",
    },
    "quantize_int8": {
        "scale from the mean of |w|": "Parece que la escala sale de la media de |w| en lugar del máximo: revisa absmax.",
        "forgets to round (truncates)": "Parece que truncas en vez de redondear: revisa el paso de w / escala a enteros.",
        "no clip, scale over 128": "Parece que divides el máximo entre 128 y no recortas: revisa qmax (127) y el recorte.",
        "clips to the unsigned range": "Parece que recortas al rango sin signo: int8 va de -127 a 127 en este esquema.",
        "qmax 255": "Parece que usas qmax = 255: con signo, int8 usa 127.",
        "scale from max, not max|w|": "Parece que la escala sale del máximo de w y no del máximo de |w|: revisa los negativos.",
        "quantises in place": "Parece que cuantizas sobre la entrada y la modificas: trabaja sobre una copia.",
        "codes as floats": "Parece que los códigos se quedan en float: conviértelos a int8.",
        "codes as a list": "Parece que devuelves los códigos como lista: devuelve un array de NumPy int8.",
        "scale as an array": "Parece que la escala es un array y no un número: devuélvela como float.",
        "returns (scale, q)": "Parece que devuelves (escala, códigos) en el orden contrario: revisa el enunciado.",
        "divides by a zero scale": "Parece que con una matriz de ceros divides por una escala 0: revisa ese caso.",
    },
    "quant_report": {
        "report without the error": "Parece que al informe le falta el error: revisa qué claves debe tener.",
        "error on the codes, not dequantised": "Parece que mides el error sobre los códigos sin descuantizar: multiplica por la escala antes.",
        "quantises W in place (error 0)": "Parece que cuantizas W en su sitio y por eso el error sale 0: trabaja sobre una copia.",
        "mem ratio from bits the other way": "Parece que la razón de memoria está invertida: revisa qué bits van arriba y cuáles abajo.",
        "mem ratio 8 (float64 vs int8)": "Parece que comparas con float64 (razón 8): revisa respecto a qué formato se mide.",
        "absolute error, not relative": "Parece que das el error absoluto en vez del relativo: divide por la norma de la referencia.",
        "relative to the quantised product": "Parece que el error relativo se divide por el producto cuantizado: divide por el exacto.",
        "mean absolute error": "Parece que calculas el error absoluto medio y no el que pide el enunciado: revisa la fórmula.",
        "max error as mean": "Parece que el error máximo es en realidad una media: revisa la reducción.",
        "values as arrays": "Parece que los valores del informe son arrays: conviértelos a números (float).",
    },
    "quantize_rows": {
        "per column (axis=0)": "Parece que calculas una escala por columna (axis=0): se pide una por fila.",
        "ignores bits": "Parece que no haces caso de bits: qmax depende de los bits que te pasan.",
        "qmax 2**bits - 1": "Parece que usas qmax = 2**bits - 1: con signo es 2**(bits-1) - 1.",
        "qmax 2**(bits-1) (overflows int8)": "Parece que usas qmax = 2**(bits-1), que desborda int8: réstale 1.",
        "clip one short (< instead of <=)": "Parece que el recorte se queda corto por uno: revisa los límites del rango.",
        "scale from the row mean": "Parece que la escala de cada fila sale de su media: usa el máximo de |w| de la fila.",
        "scales with shape (m,)": "Parece que las escalas tienen forma (m,): se esperan (m, 1), para que se difundan por filas.",
        "no ValueError for bits": "Parece que unos bits fuera de rango no lanzan ValueError: revisa la validación.",
        "quantises in place": "Parece que cuantizas sobre la entrada y la modificas: trabaja sobre una copia.",
        "codes as floats": "Parece que los códigos se quedan en float: conviértelos a enteros.",
    },
    "quantize_groups": {
        "groups down the columns": "Parece que agrupas por columnas: los grupos son tramos seguidos de cada fila.",
        "ignores group_size (per row)": "Parece que no haces caso de group_size y usas una escala por fila: revisa los grupos.",
        "ignores bits": "Parece que no haces caso de bits: qmax depende de los bits que te pasan.",
        "scale from the group mean": "Parece que la escala de cada grupo sale de su media: usa el máximo de |w| del grupo.",
        "qmax 2**bits": "Parece que usas qmax = 2**bits: con signo es 2**(bits-1) - 1.",
        "clip one short": "Parece que el recorte se queda corto por uno: revisa los límites del rango.",
        "no ValueError when n is not a multiple": "Parece que no lanzas ValueError cuando n no es múltiplo de group_size: revisa la validación.",
        "scales flattened": "Parece que devuelves las escalas aplanadas: revisa la forma que pide el enunciado.",
        "codes as floats": "Parece que los códigos se quedan en float: conviértelos a enteros.",
    },
    "pack_q4_0": {
        "nibbles of neighbours (j, j+1)": "Parece que empaquetas valores vecinos (j, j+1) en un byte: Q4_0 junta j y j + 16.",
        "high and low nibbles swapped": "Parece que tienes cambiados el nibble alto y el bajo: revisa qué mitad va en cada uno.",
        "symmetric scale absmax / 7": "Parece que usas la escala simétrica absmax / 7: Q4_0 usa el valor de mayor |w| dividido entre -8.",
        "scale sign flipped (m / 8)": "Parece que la escala tiene el signo cambiado (m / 8): revisa la división entre -8.",
        "no min(15)": "Parece que falta el recorte a 15: un código puede salirse de 4 bits.",
        "codes from the float16 scale": "Parece que calculas los códigos con la escala ya pasada a float16: usa la escala en float32.",
        "scale stored as float32": "Parece que guardas la escala en float32: el bloque la guarda en float16 (2 bytes).",
        "scale big endian": "Parece que escribes la escala en big endian: GGUF usa little endian.",
        "last maximum on ties": "Parece que ante empates eliges el último máximo: revisa cuál toma el formato.",
        "returns a list": "Parece que devuelves una lista: devuelve un array de NumPy de dtype uint8.",
        "no ValueError for a short block": "Parece que un bloque de tamaño equivocado no lanza ValueError: revisa la validación.",
        "modifies its input": "Parece que modificas la entrada: trabaja sobre una copia.",
    },
    "unpack_q4_0": {
        "the given bug: neighbour nibbles": "Parece que sigue el error del enunciado: los nibbles no son de valores vecinos, sino j y j + 16.",
        "halves swapped": "Parece que tienes cambiadas las dos mitades del bloque: revisa qué nibble va primero.",
        "offset 7 instead of 8": "Parece que restas 7 a los códigos: Q4_0 los centra restando 8.",
        "codes not centred": "Parece que no centras los códigos (falta restar 8): revisa la descuantización.",
        "scale read big endian": "Parece que lees la escala en big endian: GGUF usa little endian.",
        "returns the integer codes": "Parece que devuelves los códigos enteros sin multiplicar por la escala.",
        "no ValueError for a wrong length": "Parece que una longitud equivocada no lanza ValueError: revisa la validación.",
    },
    "error_after_quantization": {
        "the given bug: in place, error 0": "Parece que sigue el error del enunciado: cuantizas en su sitio y el error sale 0.",
        "ignores bits": "Parece que no haces caso de bits: qmax depende de los bits que te pasan.",
        "scale from the mean": "Parece que la escala sale de la media: usa el máximo de |w|.",
        "forgets to round": "Parece que no redondeas los códigos: revisa el paso a enteros.",
        "qmax 2**bits - 1": "Parece que usas qmax = 2**bits - 1: con signo es 2**(bits-1) - 1.",
        "error on the codes": "Parece que mides el error sobre los códigos sin descuantizar: multiplica por la escala antes.",
        "overwrites the caller's W with the quantised one": "Parece que sobrescribes la W de quien llama con la cuantizada: trabaja sobre una copia.",
        "returns an array": "Parece que devuelves un array: el error es un número (float).",
    },
}


# ----------------------------------------------------------------------------------------------
# Audit by family (issue 26): written from the statements alone. Promised types (a tuple promised, a list
# returned), exact half-steps and code boundaries, integer arithmetic where a float is promised, validation.
# ----------------------------------------------------------------------------------------------

MUTANTS["weight_memory"].update({
    "bytes with integer division (//)": _memory(bytes="n_params * bits // 8"),
    "accepts the unit in lower case": _memory(
        check=("if unit.lower() not in ('gb', 'gib'):\n        raise ValueError('unit')\n"
               "    if n_params < 0 or bits <= 0:\n        raise ValueError('n')\n    unit = {'gb': 'GB', 'gib': 'GiB'}[unit.lower()]")),
    "accepts bits = 0": _memory(
        check=("if unit not in ('GB', 'GiB'):\n        raise ValueError('unit')\n"
               "    if n_params < 0 or bits < 0:\n        raise ValueError('n')")),
    "an int for integer inputs": _memory(
        ret=("(n_params * bits // 8) // (10**9 if unit == 'GB' else 2**30) if isinstance(n_params, int) "
             "and isinstance(bits, int) else float(n_bytes / (1e9 if unit == 'GB' else 2**30))")),
    "rejects n_params = 0": _memory(
        check=("if unit not in ('GB', 'GiB'):\n        raise ValueError('unit')\n"
               "    if n_params <= 0 or bits <= 0:\n        raise ValueError('n')")),
})
MUTANTS["quantize_int8"].update({
    "returns a list [q, scale]": _int8(ret="[q, scale]"),
})
MUTANTS["quant_report"].update({
    "mem ratio as an int": _report(mem="W.size * 4 // q.size"),
    "squared norms": _report(rel="float(np.linalg.norm(exacto - W_hat @ x) ** 2 / np.linalg.norm(exacto) ** 2)"),
})
MUTANTS["quantize_rows"].update({
    "returns a list [q, scales]": _rows(ret="[q, scales]"),
    "rejects bits = 8 (range(2, 8))": _rows(check="if bits not in range(2, 8):\n        raise ValueError('bits')"),
})
MUTANTS["quantize_groups"].update({
    "returns a list [q, scales]": _groups(ret="[q.reshape(m, n), scales]"),
    "group_size = 0 divides by zero": _groups(check="if n % group_size != 0 or group_size < 1:\n        raise ValueError('group_size')"),
})
MUTANTS["quantize_affine"].update({
    "returns a list [q, scale, zero_point]": _affine(ret="[q, scale, zero_point]"),
    "codes from (w − lo) / scale": _affine(codes="np.clip(np.round((w - lo) / scale), 0, levels).astype(np.uint8)"),
})
MUTANTS["pack_q4_0"].update({
    "codes with np.round (ties to even) instead of trunc(+8.5)": _pack(
        codes="np.clip(np.round(x * (np.float32(1) / d)) + 8, 0, 15).astype(np.uint8)"),
    "returns bytes, not an array": _pack(ret="np.concatenate([escala, nibbles]).astype(np.uint8).tobytes()"),
    "m from the maximum, not the maximum |x|": _pack(m="x[np.argmax(x)]"),
})

_CLIP_TOO_WIDE = ("Parece que no recortas los códigos a [0, 2**bits − 1] (o recortas a 2**bits): un valor del borde "
                  "superior pide el código 2**bits y, al convertir a uint8, da la vuelta.")
HINTS["quantize_affine"] = {
    "zero point truncated (int)": "Parece que truncas el punto cero con int(...): redondéalo al entero más cercano.",
    "zero point with ceil": "Parece que redondeas el punto cero hacia arriba (ceil): va al entero más cercano.",
    "zero point not rounded (float)": "Parece que el punto cero se queda sin redondear: es un int, round(−lo / scale).",
    "zero point as a NumPy integer": "Parece que el punto cero es un entero de NumPy: conviértelo con int(...).",
    "zero point as a float": "Parece que el punto cero es un float: debe ser un int de Python.",
    "zero point rounded half up": "Parece que los empates del punto cero suben (4.5 → 5): van al par, como np.round (4.5 → 4).",
    "zero point from the top of the range": "Parece que el punto cero sale de hi: es el código del 0, round(−lo / scale).",
    "zero point subtracted": "Parece que restas el punto cero al cuantizar: q = round(w / scale) + zero_point.",
    "clip to 2**bits (one too many)": _CLIP_TOO_WIDE,
    "no clip": _CLIP_TOO_WIDE,
    "clip to the signed range": "Parece que recortas al rango con signo (−128…127): los códigos afines van de 0 a 2**bits − 1.",
    "clip after the uint8 cast": "Parece que recortas después de convertir a uint8: un 256 ya es 0 entonces; recorta antes.",
    "codes as int8": "Parece que los códigos son int8: son sin signo, uint8.",
    "codes as int64": "Parece que los códigos son int64: conviértelos a uint8.",
    "codes as floats": "Parece que los códigos se quedan en float: conviértelos a uint8.",
    "codes truncated": "Parece que truncas w / scale en lugar de redondearlo.",
    "range without 0 (raw min and max)": "Parece que el rango no incluye el 0: lo = min(min(w), 0) y hi = max(max(w), 0).",
    "symmetric range ±max|w|": "Parece que usas un rango simétrico ±max|w|: el afín va de lo a hi.",
    "levels 2**bits": "Parece que usas 2**bits escalones: son 2**bits − 1.",
    "levels of the signed grid": "Parece que usas los niveles de la rejilla simétrica (2**(bits−1) − 1): son 2**bits − 1.",
    "ignores bits": "Parece que no haces caso de bits: los niveles dependen de los bits que te pasan.",
    "no ValueError for bits": "Parece que unos bits fuera de 2…8 no lanzan ValueError: revisa la validación.",
    "accepts non-integer bits": "Parece que aceptas unos bits no enteros (4.5): bits tiene que ser un int.",
    "scale as a 0-d array": "Parece que la escala es un array de NumPy: devuélvela como float.",
    "no special case for an all-zero tensor": "Parece que con un tensor de ceros divides por una escala 0: trata ese caso aparte.",
    "returns (q, zero_point, scale)": "Parece que devuelves (q, zero_point, scale): el orden es (q, scale, zero_point).",
    "modifies its input": "Parece que modificas la entrada: trabaja sobre una copia.",
    "returns a list [q, scale, zero_point]": "Parece que devuelves una lista: devuelve la tupla (q, scale, zero_point).",
    "codes from (w − lo) / scale": "Parece que calculas los códigos como round((w − lo) / scale): son round(w / scale) + zero_point.",
}
HINTS["weight_memory"].update({
    "bytes with integer division (//)": "Parece que divides los bits entre 8 con //: usa /, el resultado es un float.",
    "accepts the unit in lower case": "Parece que aceptas la unidad en minúsculas ('gb'): solo valen 'GB' y 'GiB'.",
    "accepts bits = 0": "Parece que bits = 0 no lanza ValueError: los bits tienen que ser positivos.",
    "an int for integer inputs": "Parece que con argumentos enteros devuelves un int: devuelve siempre un float.",
    "rejects n_params = 0": "Parece que n_params = 0 lanza ValueError: cero pesos ocupan 0 GB, solo los negativos fallan.",
})
HINTS["quantize_int8"]["returns a list [q, scale]"] = "Parece que devuelves una lista: devuelve la tupla (q, scale)."
HINTS["quant_report"].update({
    "mem ratio as an int": "Parece que mem_ratio es un int: devuélvelo como float (4.0).",
    "squared norms": "Parece que divides las normas al cuadrado: el error relativo usa las normas, sin elevar.",
})
HINTS["quantize_rows"].update({
    "returns a list [q, scales]": "Parece que devuelves una lista: devuelve la tupla (q, scales).",
    "rejects bits = 8 (range(2, 8))": "Parece que bits = 8 lanza ValueError: el rango válido es de 2 a 8, los dos incluidos.",
})
HINTS["quantize_groups"].update({
    "returns a list [q, scales]": "Parece que devuelves una lista: devuelve la tupla (q, scales).",
    "group_size = 0 divides by zero": "Parece que group_size = 0 divide por cero antes de lanzar ValueError: valida group_size < 1 primero.",
})
HINTS["pack_q4_0"].update({
    "codes with np.round (ties to even) instead of trunc(+8.5)": (
        "Parece que redondeas los códigos con np.round: Q4_0 usa trunc(x · id + 8.5), que sube los medios escalones."),
    "returns bytes, not an array": "Parece que devuelves un objeto bytes: devuelve un array de NumPy de dtype uint8.",
    "m from the maximum, not the maximum |x|": "Parece que m sale del máximo de x: es el peso de mayor |x|, con su signo.",
})
