"""Valid answers to lab 07's exercises written differently from the solution: each must get full marks.

Loops instead of vectorised code, `math` instead of NumPy, float32 arithmetic, half-away-from-zero
rounding (the statements never depend on exact ties), another correct order of operations.
"""

LAB = "lab07-cuantizacion"

ALTERNATIVES = {
    "weight_memory": {
        "dictionary of units": (
            "def weight_memory(n_params, bits, unit='GB'):\n"
            "    unidades = {'GB': 10**9, 'GiB': 1024**3}\n"
            "    if unit not in unidades:\n"
            "        raise ValueError(unit)\n"
            "    if n_params < 0 or not bits > 0:\n"
            "        raise ValueError('tamaños')\n"
            "    return n_params / unidades[unit] * (bits / 8)\n"
        ),
        "bytes first with math": (
            "import math as _m\n"
            "def weight_memory(n_params, bits, unit='GB'):\n"
            "    if unit == 'GB':\n"
            "        divisor = _m.pow(10, 9)\n"
            "    elif unit == 'GiB':\n"
            "        divisor = _m.pow(2, 30)\n"
            "    else:\n"
            "        raise ValueError('unidad desconocida')\n"
            "    if n_params < 0:\n"
            "        raise ValueError('n_params')\n"
            "    if bits <= 0:\n"
            "        raise ValueError('bits')\n"
            "    total_bits = n_params * bits\n"
            "    return float(total_bits / 8 / divisor)\n"
        ),
    },
    "quantize_int8": {
        "loop over a flat copy, round half away": (
            "def quantize_int8(w):\n"
            "    arr = np.array(w, dtype=float)\n"
            "    plano = arr.ravel()\n"
            "    maximo = max(abs(v) for v in plano)\n"
            "    escala = maximo / 127\n"
            "    codigos = np.zeros(plano.size, dtype=np.int8)\n"
            "    if escala > 0:\n"
            "        for i, v in enumerate(plano):\n"
            "            r = math.floor(abs(v) / escala + 0.5) * (1 if v >= 0 else -1)\n"
            "            codigos[i] = max(-127, min(127, r))\n"
            "    return codigos.reshape(arr.shape), float(escala)\n"
        ),
        "float32 arithmetic with rint": (
            "def quantize_int8(w):\n"
            "    x = np.asarray(w)\n"
            "    x = x.astype(np.float64) if x.dtype != np.float32 else x.copy()\n"
            "    amax = np.max(np.abs(x))\n"
            "    if amax == 0:\n"
            "        return np.zeros_like(x, dtype=np.int8), 0.0\n"
            "    s = amax / 127\n"
            "    return np.rint(x / s).clip(-127, 127).astype(np.int8), float(s)\n"
        ),
    },
    "quant_report": {
        "inline quantisation with loops for the norms": (
            "def quant_report(W, x):\n"
            "    W = np.array(W, dtype=float)\n"
            "    x = np.array(x, dtype=float)\n"
            "    escala = np.abs(W).max() / 127\n"
            "    q = np.clip(np.round(W / escala), -127, 127).astype(np.int8) if escala else np.zeros(W.shape, np.int8)\n"
            "    W_hat = q * escala\n"
            "    y, y_hat = W @ x, W_hat @ x\n"
            "    num = math.sqrt(sum((a - b) ** 2 for a, b in zip(y, y_hat)))\n"
            "    den = math.sqrt(sum(a * a for a in y))\n"
            "    return {'mem_ratio': 32 / 8, 'rel_error': num / den, 'max_error': float(np.max(np.abs(W_hat - W))),\n"
            "            'scale': float(escala)}\n"
        ),
        "uses quantize_int8 and nbytes": (
            "def quant_report(W, x):\n"
            "    W32 = np.asarray(W, dtype=np.float32)\n"
            "    W = np.asarray(W, dtype=float)\n"
            "    q, s = quantize_int8(W)\n"
            "    error = W @ np.asarray(x, dtype=float) - (q.astype(float) * s) @ np.asarray(x, dtype=float)\n"
            "    informe = dict(scale=float(s))\n"
            "    informe['mem_ratio'] = W32.nbytes / q.nbytes\n"
            "    informe['rel_error'] = float(np.sqrt(np.sum(error**2)) / np.sqrt(np.sum((W @ np.asarray(x, dtype=float))**2)))\n"
            "    informe['max_error'] = float(np.max(np.abs(W - q * s)))\n"
            "    return informe\n"
        ),
    },
    "quantize_rows": {
        "row by row with a loop": (
            "def quantize_rows(W, bits=8):\n"
            "    if bits < 2 or bits > 8:\n"
            "        raise ValueError('bits')\n"
            "    A = np.array(W, dtype=float)\n"
            "    qmax = (1 << (bits - 1)) - 1\n"
            "    q = np.zeros(A.shape, dtype=np.int8)\n"
            "    escalas = np.zeros((A.shape[0], 1))\n"
            "    for i, fila in enumerate(A):\n"
            "        s = np.abs(fila).max() / qmax\n"
            "        escalas[i, 0] = s\n"
            "        if s > 0:\n"
            "            q[i] = np.clip(np.round(fila / s), -qmax, qmax)\n"
            "    return q, escalas\n"
        ),
        "errstate and nan_to_num": (
            "def quantize_rows(W, bits=8):\n"
            "    if bits not in range(2, 9):\n"
            "        raise ValueError('bits fuera de rango')\n"
            "    W = np.asarray(W, dtype=float)\n"
            "    qmax = 2 ** (bits - 1) - 1\n"
            "    s = np.max(np.abs(W), axis=-1)[:, None] / qmax\n"
            "    with np.errstate(divide='ignore', invalid='ignore'):\n"
            "        q = np.nan_to_num(np.round(W / s))\n"
            "    return np.clip(q, -qmax, qmax).astype(np.int8), s\n"
        ),
    },
    "quantize_groups": {
        "loop over groups with slices": (
            "def quantize_groups(W, bits=4, group_size=32):\n"
            "    W = np.array(W, dtype=float)\n"
            "    m, n = W.shape\n"
            "    if group_size <= 0 or n % group_size:\n"
            "        raise ValueError('group_size')\n"
            "    qmax = 2 ** (bits - 1) - 1\n"
            "    G = n // group_size\n"
            "    q = np.zeros((m, n), dtype=np.int8)\n"
            "    escalas = np.zeros((m, G))\n"
            "    for i in range(m):\n"
            "        for g in range(G):\n"
            "            trozo = W[i, g * group_size:(g + 1) * group_size]\n"
            "            s = np.abs(trozo).max() / qmax\n"
            "            escalas[i, g] = s\n"
            "            if s:\n"
            "                q[i, g * group_size:(g + 1) * group_size] = np.clip(np.round(trozo / s), -qmax, qmax)\n"
            "    return q, escalas\n"
        ),
        "reshape to (-1, g) and repeat the scales": (
            "def quantize_groups(W, bits=4, group_size=32):\n"
            "    W = np.asarray(W, dtype=float)\n"
            "    m, n = W.shape\n"
            "    if group_size < 1 or n % group_size != 0:\n"
            "        raise ValueError('n no es múltiplo de group_size')\n"
            "    qmax = 2 ** (bits - 1) - 1\n"
            "    s = np.abs(W.reshape(-1, group_size)).max(axis=1) / qmax\n"
            "    por_peso = np.repeat(s, group_size).reshape(m, n)\n"
            "    q = np.where(por_peso > 0, np.round(W / np.where(por_peso > 0, por_peso, 1)), 0)\n"
            "    return np.clip(q, -qmax, qmax).astype(np.int8), s.reshape(m, n // group_size)\n"
        ),
    },
    "quantize_affine": {
        "loop with round() and min/max": (
            "def quantize_affine(w, bits=8):\n"
            "    if type(bits) is not int or bits < 2 or bits > 8:\n"
            "        raise ValueError('bits')\n"
            "    arr = np.array(w, dtype=float)\n"
            "    plano = arr.ravel().tolist()\n"
            "    lo = min(min(plano), 0.0)\n"
            "    hi = max(max(plano), 0.0)\n"
            "    top = 2 ** bits - 1\n"
            "    if hi == lo:\n"
            "        return np.zeros(arr.shape, dtype=np.uint8), 0.0, 0\n"
            "    s = (hi - lo) / top\n"
            "    z = round(-lo / s)\n"
            "    codigos = [max(0, min(top, round(v / s) + z)) for v in plano]\n"
            "    return np.array(codigos, dtype=np.uint8).reshape(arr.shape), float(s), int(z)\n"
        ),
        "rint of w/scale + z, float32 kept for float32 input": (
            "def quantize_affine(w, bits=8):\n"
            "    if bits not in range(2, 9) or isinstance(bits, (bool, float)):\n"
            "        raise ValueError('bits')\n"
            "    x = np.asarray(w)\n"
            "    x = x.astype(np.float64) if x.dtype != np.float32 else x.copy()\n"
            "    lo, hi = np.minimum(x.min(), 0), np.maximum(x.max(), 0)\n"
            "    n = (1 << bits) - 1\n"
            "    scale = float((hi - lo) / n)\n"
            "    if scale == 0.0:\n"
            "        return np.zeros(x.shape, np.uint8), 0.0, 0\n"
            "    zp = int(np.rint(-float(lo) / scale))\n"
            "    return np.rint(x / x.dtype.type(scale) + zp).clip(0, n).astype(np.uint8), scale, zp\n"
        ),
        "dictionary of ranges and where": (
            "def quantize_affine(w, bits=8):\n"
            "    niveles = {b: 2**b - 1 for b in range(2, 9)}\n"
            "    if isinstance(bits, bool) or bits not in niveles or int(bits) != bits or not isinstance(bits, int):\n"
            "        raise ValueError('bits')\n"
            "    v = np.array(w, dtype=np.float64, copy=True)\n"
            "    inferior = min(0.0, float(np.min(v)))\n"
            "    superior = max(0.0, float(np.max(v)))\n"
            "    paso = (superior - inferior) / niveles[bits]\n"
            "    seguro = paso if paso > 0 else 1.0\n"
            "    cero = int(np.round(-inferior / seguro))\n"
            "    q = np.where(v == v, np.round(v / seguro) + cero, 0)\n"
            "    q = np.minimum(np.maximum(q, 0), niveles[bits])\n"
            "    return q.astype(np.uint8), float(paso), cero\n"
        ),
    },
    "pack_q4_0": {
        "byte by byte with struct": (
            "import struct as _struct\n"
            "def pack_q4_0(block):\n"
            "    x = np.array(block, dtype=np.float32).reshape(-1)\n"
            "    if len(x) != 32:\n"
            "        raise ValueError('32 pesos')\n"
            "    i_max = 0\n"
            "    for i in range(32):\n"
            "        if abs(x[i]) > abs(x[i_max]):\n"
            "            i_max = i\n"
            "    d = np.float32(x[i_max]) / np.float32(-8.0)\n"
            "    inv = np.float32(1.0) / d if d != 0 else np.float32(0.0)\n"
            "    codigos = [min(15, int(np.float32(x[j] * inv) + np.float32(8.5))) for j in range(32)]\n"
            "    cabeza = _struct.pack('<e', float(d))\n"
            "    cuerpo = bytes(codigos[j] | (codigos[j + 16] << 4) for j in range(16))\n"
            "    return np.frombuffer(cabeza + cuerpo, dtype=np.uint8).copy()\n"
        ),
        "d zero handled by the inverse, view of float16": (
            "def pack_q4_0(block):\n"
            "    x = np.asarray(block, dtype=np.float32)\n"
            "    if x.shape != (32,):\n"
            "        raise ValueError('un bloque son 32 valores')\n"
            "    m = x[np.abs(x).argmax()]\n"
            "    d = m / np.float32(-8)\n"
            "    inv = np.float32(0) if d == 0 else np.float32(1) / d\n"
            "    c = np.clip(np.trunc(x * inv + np.float32(8.5)), 0, 15).astype(np.uint8)\n"
            "    out = np.empty(18, dtype=np.uint8)\n"
            "    out[:2] = np.float16(d).reshape(1).view(np.uint8)\n"
            "    out[2:] = c[:16] + 16 * c[16:]\n"
            "    return out\n"
        ),
    },
    "unpack_q4_0": {
        "loop over the 16 bytes": (
            "def unpack_q4_0(data):\n"
            "    data = np.asarray(data, dtype=np.uint8)\n"
            "    if data.size != 18 or data.ndim != 1:\n"
            "        raise ValueError('18 bytes')\n"
            "    d = float(data[:2].view(np.float16)[0])\n"
            "    pesos = np.zeros(32, dtype=np.float32)\n"
            "    for j, b in enumerate(data[2:]):\n"
            "        pesos[j] = d * ((int(b) & 15) - 8)\n"
            "        pesos[j + 16] = d * ((int(b) >> 4) - 8)\n"
            "    return pesos\n"
        ),
        "divmod by 16 in float64": (
            "def unpack_q4_0(data):\n"
            "    data = np.asarray(data, dtype=np.uint8)\n"
            "    if data.shape != (18,):\n"
            "        raise ValueError('18 bytes')\n"
            "    d = np.float64(data[:2].view('<f2')[0])\n"
            "    altos, bajos = np.divmod(data[2:].astype(np.int64), 16)\n"
            "    return d * (np.concatenate([bajos, altos]) - 8.0)\n"
        ),
        "the minimal fix of the given code: stack along axis 0": (
            "def unpack_q4_0(data):\n"
            "    data = np.asarray(data, dtype=np.uint8)\n"
            "    if data.shape != (18,):\n"
            "        raise ValueError(f'un bloque Q4_0 tiene 18 bytes, no {data.size}')\n"
            "    d = data[:2].view('<f2')[0].astype(np.float32)\n"
            "    nibbles = data[2:]\n"
            "    c = np.stack([nibbles & 0x0F, nibbles >> 4], axis=0).ravel()\n"
            "    return d * (c.astype(np.float32) - 8)\n"
        ),
    },
    "error_after_quantization": {
        "copy first, then the same in-place steps": (
            "def error_after_quantization(W, x, bits=8):\n"
            "    qmax = 2 ** (bits - 1) - 1\n"
            "    W = np.array(W, dtype=float)\n"
            "    W_hat = W.copy()\n"
            "    escala = np.abs(W).max() / qmax\n"
            "    W_hat /= escala\n"
            "    np.round(W_hat, out=W_hat)\n"
            "    W_hat *= escala\n"
            "    return float(np.linalg.norm(W @ x - W_hat @ x) / np.linalg.norm(W @ x))\n"
        ),
        "difference matrix first": (
            "def error_after_quantization(W, x, bits=8):\n"
            "    W = np.asarray(W, dtype=float)\n"
            "    x = np.asarray(x, dtype=float)\n"
            "    qmax = 2 ** (bits - 1) - 1\n"
            "    s = np.max(np.abs(W)) / qmax\n"
            "    delta = W - s * np.clip(np.rint(W / s), -qmax, qmax)\n"
            "    return float(np.sqrt(((delta @ x) ** 2).sum() / ((W @ x) ** 2).sum()))\n"
        ),
    },
}

# Audit by family (issue 26): written from the statements alone.
ALTERNATIVES["weight_memory"]["NumPy float64 scalars"] = """
def weight_memory(n_params, bits, unit="GB"):
    divisores = {"GB": np.float64(1e9), "GiB": np.float64(2.0) ** 30}
    if unit not in divisores:
        raise ValueError("unidad")
    if n_params < 0 or bits <= 0:
        raise ValueError("tamaño")
    return np.float64(n_params) * bits / 8 / divisores[unit]
"""
ALTERNATIVES["quantize_int8"]["a namedtuple (q, scale)"] = """
from collections import namedtuple as _nt
_Cuant = _nt("Cuant", "q scale")
def quantize_int8(w):
    w = np.array(w, dtype=np.float64)
    m = float(np.max(np.abs(w)))
    if m == 0.0:
        return _Cuant(np.zeros(w.shape, np.int8), 0.0)
    scale = m / 127
    return _Cuant(np.clip(np.rint(w / scale), -127, 127).astype(np.int8), scale)
"""
ALTERNATIVES["quant_report"]["products in float32, mem_ratio written as 4.0"] = """
def quant_report(W, x):
    W = np.asarray(W, dtype=float)
    q, scale = quantize_int8(W)
    W32, x32 = W.astype(np.float32), np.asarray(x, dtype=np.float32)
    W_hat32 = np.float32(scale) * q.astype(np.float32)
    exacto = W32 @ x32
    rel = np.linalg.norm(exacto - W_hat32 @ x32) / np.linalg.norm(exacto)
    return {"mem_ratio": 4.0, "rel_error": float(rel), "max_error": float(np.abs(W - scale * q).max()),
            "scale": float(scale)}
"""
ALTERNATIVES["quantize_affine"]["operator.index for bits, Python round for the zero point"] = """
import operator as _op
def quantize_affine(w, bits=8):
    if isinstance(bits, bool):
        raise ValueError("bits")
    try:
        b = _op.index(bits)
    except TypeError:
        raise ValueError("bits") from None
    if b < 2 or b > 8:
        raise ValueError("bits")
    arr = np.array(w, dtype=np.float64)
    lo, hi = min(arr.min(), 0.0), max(arr.max(), 0.0)
    levels = (1 << b) - 1
    if hi == lo:
        return np.zeros(arr.shape, dtype=np.uint8), 0.0, 0
    scale = float((hi - lo) / levels)
    z = round(float(-lo) / scale)
    q = np.minimum(np.maximum(np.rint(arr / scale) + z, 0), levels).astype(np.uint8)
    return q, scale, z
"""
ALTERNATIVES["pack_q4_0"]["np.floor (x · id + 8.5 > 0) and nibbles by addition"] = """
def pack_q4_0(block):
    x = np.array(block, dtype=np.float32).reshape(-1)
    if len(x) != 32:
        raise ValueError("32 pesos")
    d = x[int(np.argmax(np.abs(x)))] / np.float32(-8.0)
    if d == 0:
        codes = np.full(32, 8, np.uint8)
    else:
        codes = np.minimum(np.floor(x * (np.float32(1.0) / d) + np.float32(8.5)), 15).astype(np.uint8)
    out = np.empty(18, np.uint8)
    out[:2] = np.array([d], dtype="<f2").view(np.uint8)
    out[2:] = codes[:16] + 16 * codes[16:]
    return out
"""
