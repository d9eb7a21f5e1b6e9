"""Values as plain data, read without running any code the student wrote.

Only exact built-in, NumPy and torch types are read (with methods captured at start-up); anything else,
subclasses included, becomes {"opaque": type name} and fails replay on the trusted side (verify.py).
"""

from __future__ import annotations

import base64
import sys
import types

MAX_ELEMENTS = 1_000_000  # larger arrays are summarised, not recorded in full
MAX_ITEMS = 10_000  # list/dict entries recorded
MAX_TEXT = 20_000


class Plain:
    """Turn a value into plain JSON data (see the module's docstring)."""

    def __init__(self):
        import numpy as np

        self.np = np
        self.ndarray = np.ndarray
        self.np_scalars = frozenset(t for t in set(np.sctypeDict.values()) if isinstance(t, type))
        self.tobytes = np.ndarray.tobytes
        self.ascontiguous = np.ascontiguousarray
        self.torch = sys.modules.get("torch")
        if self.torch is not None:
            T = self.torch.Tensor
            self.tensor_types = (T, self.torch.nn.Parameter)
            self.t_detach, self.t_cpu, self.t_numpy, self.t_float = T.detach, T.cpu, T.numpy, T.float
            self.t_dtype = T.dtype.__get__
        else:
            self.tensor_types = ()

    def __call__(self, x, depth: int = 0):
        try:
            return self._plain(x, depth)
        except Exception as exc:  # noqa: BLE001 - a value we cannot read is opaque
            return {"opaque": f"error: {type(exc).__name__}"}

    def _plain(self, x, depth):
        t = type(x)
        if x is None or t is bool or t is int:
            return x if t is not int or abs(x) < 2**62 else {"bigint": str(x)}
        if t is float:
            return x if x == x and x not in (float("inf"), float("-inf")) else {"float": repr(x)}
        if t is str:
            return x if len(x) <= MAX_TEXT else {"str_sha": __import__("hashlib").sha256(x.encode()).hexdigest(),
                                                  "len": len(x)}
        if t is complex:
            return {"complex": [x.real, x.imag]}
        if t in self.np_scalars:
            return {"npscalar": str(self.np.dtype(t)), "nd": self._array(self.np.asarray(x))["nd"]}
        if t is self.ndarray:
            return self._array(x)
        if self.tensor_types and t in self.tensor_types:
            tensor = self.t_detach(x)
            dtype = str(self.t_dtype(tensor)).replace("torch.", "")
            if dtype in ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"):
                tensor = self.t_float(tensor)
            return {"torch": dtype, **self._array(self.t_numpy(self.t_cpu(tensor)))}
        if t in (list, tuple):
            if depth > 20:
                return {"opaque": "deep"}
            items = [self._plain(v, depth + 1) for v in x[:MAX_ITEMS]]  # exact list or tuple: C slicing
            return {t.__name__: items, **({"len": len(x)} if len(x) > MAX_ITEMS else {})}
        if t is dict:
            items = list(dict.items(x))[:MAX_ITEMS]
            return {"dict": [[self._plain(k, depth + 1), self._plain(v, depth + 1)] for k, v in items]}
        if t is type:
            return {"type": f"{x.__module__}.{x.__qualname__}"}
        if t in (types.FunctionType, types.BuiltinFunctionType, types.LambdaType, types.MethodType):
            return {"opaque": "function"}
        return {"opaque": f"{t.__module__}.{t.__qualname__}"}

    def _array(self, a):
        if a.dtype.kind not in "biufc":
            return {"opaque": f"ndarray[{a.dtype}]"}
        if a.size > MAX_ELEMENTS:
            flat = a.astype(float).reshape(-1)
            return {"summary": {"shape": list(a.shape), "dtype": str(a.dtype), "sum": float(flat.sum()),
                                "min": float(flat.min()), "max": float(flat.max())}}
        data = self.tobytes(self.ascontiguous(a))
        return {"nd": {"shape": list(a.shape), "dtype": a.dtype.str, "b64": base64.b64encode(data).decode()}}



