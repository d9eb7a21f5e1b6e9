"""llama.cpp's own C quantiser, reached through the shared library that llama-cpp-python ships.

``ggml_quantize_chunk`` (ggml.c) calls the reference quantisers of ggml-quants.c
(``quantize_row_q8_0_ref``, ``quantize_row_q4_0_ref``, ``quantize_row_q6_K_ref`` without an
importance matrix): the code that writes real GGUF files. ``load()`` returns ``None`` when
llama-cpp-python is not installed (it compiles llama.cpp from source, so it is not a test
dependency); the tests that need it skip, and the Q6_K fixture made with it keeps the byte
comparison running everywhere (``tests/fixtures/make_q6_k_fixture.py``).
"""

from __future__ import annotations

import ctypes
import pathlib

import numpy as np

GGML_TYPES = {"q4_0": 2, "q8_0": 8, "q6_k": 14}
TYPE_SIZES = {"q4_0": (32, 18), "q8_0": (32, 34), "q6_k": (256, 210)}


def load():
    """The ``libggml-base`` of an installed llama-cpp-python, or ``None``."""
    try:
        import llama_cpp
    except ImportError:
        return None
    lib_dir = pathlib.Path(llama_cpp.__file__).parent / "lib"
    candidates = sorted(lib_dir.glob("libggml-base.*")) + sorted(lib_dir.glob("libggml.*"))
    for path in candidates:
        try:
            lib = ctypes.CDLL(str(path))
            fn = lib.ggml_quantize_chunk
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_size_t
        fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
        return lib
    return None


def quantize(lib, x: np.ndarray, fmt: str) -> np.ndarray:
    """llama.cpp's bytes for the float32 matrix ``x`` ``[rows, n]`` in format ``fmt``."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    rows, n = x.shape
    block, size = TYPE_SIZES[fmt]
    out = np.zeros((rows, n // block * size), dtype=np.uint8)
    written = lib.ggml_quantize_chunk(GGML_TYPES[fmt], x.ctypes.data, out.ctypes.data, 0, rows, n, None)
    assert written == out.nbytes, (written, out.nbytes)
    return out
