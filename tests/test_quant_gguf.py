"""GGUF block formats, byte for byte: llmlab.quant against the gguf package (and llama.cpp's C code).

- Q8_0 and Q4_0: every byte equal to ``gguf.quants.quantize`` (the PyPI package, itself bit-exact
  with ggml-quants.c), on random tensors of several shapes and dtypes and on adversarial ones:
  all zeros, one huge outlier, +max and -max tied in a block, subnormals, round-half ties, values
  near the float16 limit; NaN/Inf rejected; decoding equal to ``gguf.quants.dequantize``.
- Q6_K: the gguf package only decodes k-quants, so decoding is compared with it, and encoding with
  bytes made by llama.cpp's C quantiser (a stored fixture, plus a live comparison when
  llama-cpp-python is installed).
"""

import pathlib

import numpy as np
import pytest

gguf = pytest.importorskip("gguf", reason="the gguf package (test extra) is needed for byte comparisons")
from gguf import GGMLQuantizationType as T  # noqa: E402

from llmlab.quant import (  # noqa: E402
    BLOCK_FORMATS,
    dequantize_blocks,
    dequantize_q4_0,
    dequantize_q6_k,
    pack_q4_0_block,
    quantize_blocks,
    quantize_q4_0,
    quantize_q6_k,
    quantize_q8_0,
    round_half_away,
    unpack_q4_0_block,
)

import ggml_reference  # noqa: E402  (tests/ is on sys.path: rootdir-relative imports, as labharness)

GGUF_TYPES = {"q8_0": T.Q8_0, "q4_0": T.Q4_0}
FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "q6_k_llama_cpp.npz"


def gguf_bytes(x, fmt):
    with np.errstate(all="ignore"):  # gguf's NumPy code warns on subnormal blocks; the bytes are what counts
        return gguf.quants.quantize(np.asarray(x, dtype=np.float32), GGUF_TYPES[fmt])


def adversarial_tensors():
    """Name -> float32 [rows, 256]: the cases where a re-implementation usually drifts."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal((4, 256)).astype(np.float32)
    cases = {"zeros": np.zeros((3, 256), np.float32)}
    outlier = base.copy()
    outlier[1, 17] = 1e5
    cases["one huge outlier"] = outlier
    ties = np.tile(np.array([3.0, -3.0] + [0.5] * 30, np.float32), (2, 8))
    cases["+max before -max"] = ties
    cases["-max before +max"] = -ties
    cases["subnormals"] = (base * 1e-40).astype(np.float32)
    cases["tiny normals"] = (base * 1e-37).astype(np.float32)
    cases["one subnormal in zeros"] = np.where(np.arange(256) % 32 == 5, np.float32(1e-45), np.float32(0)).astype(np.float32)[None]
    halves = ((np.arange(256, dtype=np.float32) - 128) / 2)[None]  # x / d lands on .5 for many weights
    cases["round-half ties"] = np.concatenate([halves, halves * np.float32(127 / 64)])
    cases["near the float16 limit"] = np.full((1, 256), 65504 * 7.9, np.float32) * np.sign(base[:1])
    cases["constant blocks"] = np.full((2, 256), -0.3, np.float32)
    cases["huge dynamic range"] = (base * np.float32(10.0) ** rng.integers(-30, 3, (4, 256))).astype(np.float32)
    return cases


# ----------------------------------------------------------------------------------------------
# Q8_0 and Q4_0 against the gguf package
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["q8_0", "q4_0"])
@pytest.mark.parametrize("shape", [(32,), (3, 64), (2, 5, 96), (64, 512)])
def test_random_tensors_byte_exact(fmt, shape):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32) * 0.05
    ours = quantize_blocks(x, fmt)
    assert ours.dtype == np.uint8 and ours.shape == shape[:-1] + (shape[-1] // 32 * BLOCK_FORMATS[fmt].type_size,)
    np.testing.assert_array_equal(ours, gguf_bytes(x, fmt))
    np.testing.assert_array_equal(dequantize_blocks(ours, fmt), gguf.quants.dequantize(ours, GGUF_TYPES[fmt]))


@pytest.mark.parametrize("fmt", ["q8_0", "q4_0"])
@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32])
def test_other_input_dtypes_go_through_float32_like_gguf(fmt, dtype):
    x = (np.random.default_rng(3).standard_normal((4, 64)) * 20).astype(dtype)
    np.testing.assert_array_equal(quantize_blocks(x, fmt), gguf_bytes(x, fmt))


@pytest.mark.parametrize("fmt", ["q8_0", "q4_0"])
@pytest.mark.parametrize("name", list(adversarial_tensors()))
def test_adversarial_tensors_byte_exact(fmt, name):
    x = adversarial_tensors()[name]
    if fmt == "q4_0" and name == "near the float16 limit":
        pytest.skip("Q4_0's scale is max/8: these values overflow it (covered by the overflow test)")
    ours = quantize_blocks(x, fmt)
    np.testing.assert_array_equal(ours, gguf_bytes(x, fmt))
    np.testing.assert_array_equal(dequantize_blocks(ours, fmt), gguf.quants.dequantize(ours, GGUF_TYPES[fmt]))


@pytest.mark.parametrize("fmt", ["q8_0", "q4_0", "q6_k"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_rejected(fmt, bad):
    x = np.zeros((2, 256), np.float32)
    x[1, 100] = bad
    with pytest.raises(ValueError, match="NaN or Inf"):
        quantize_blocks(x, fmt)


@pytest.mark.parametrize("fmt, limit", [("q8_0", 65520 * 127), ("q4_0", 65520 * 8), ("q6_k", 1e9)])
def test_scale_overflowing_float16_is_an_error_not_inf(fmt, limit):
    x = np.full((1, 256), limit, np.float32)
    with pytest.raises(ValueError, match="float16"):
        quantize_blocks(x, fmt)
    if fmt in GGUF_TYPES:  # what llama.cpp would have written: an infinite scale
        d = gguf_bytes(x, fmt)[0, :2].view(np.float16)[0]
        assert np.isinf(d)


def test_wrong_shapes_and_types():
    with pytest.raises(ValueError, match="multiple of the block size 32"):
        quantize_q8_0(np.ones((2, 48)))
    with pytest.raises(ValueError, match="multiple of the block size 256"):
        quantize_q6_k(np.ones(128))
    with pytest.raises(TypeError):
        quantize_q4_0(np.array(["a"] * 32))
    with pytest.raises(TypeError, match="uint8"):
        dequantize_q4_0(np.zeros(18, np.int8))
    with pytest.raises(ValueError, match="unknown GGUF block format"):
        quantize_blocks(np.ones(32), "q5_0")


def test_input_is_not_modified():
    x = np.random.default_rng(0).standard_normal((2, 256)).astype(np.float32)
    before = x.copy()
    for fmt in BLOCK_FORMATS:
        quantize_blocks(x, fmt)
    np.testing.assert_array_equal(x, before)


# ----------------------------------------------------------------------------------------------
# The layouts, by hand
# ----------------------------------------------------------------------------------------------


def test_q8_0_block_layout_and_rounding():
    x = np.zeros(32, np.float32)
    x[0], x[1], x[2] = 127.0, 2.5, -2.5  # d = 1 exactly: ties round away from zero (C's roundf)
    block = quantize_q8_0(x)
    assert block.shape == (34,)
    assert block[:2].view(np.float16)[0] == 1.0
    assert block[2:5].view(np.int8).tolist() == [127, 3, -3]
    assert round_half_away(np.array([0.49999997, 0.5, -0.5, 1.5], np.float32)).tolist() == [0.0, 1.0, -1.0, 2.0]


def test_q4_0_nibble_order_element_j_and_j_plus_16_share_a_byte():
    x = np.zeros(32, np.float32)
    x[0] = -8.0  # the largest magnitude, negative: d = -8 / -8 = 1
    x[16] = 3.0
    x[1] = 7.0
    block = quantize_q4_0(x)
    d, codes = unpack_q4_0_block(block)
    assert d == 1.0
    assert codes[0] == 0 and codes[16] == 11 and codes[1] == 15 and codes[2] == 8
    assert block[2] == 0 | (11 << 4)  # element 0 low nibble, element 16 high nibble
    np.testing.assert_array_equal(pack_q4_0_block(d, codes), block)
    np.testing.assert_array_equal(d * (codes.astype(np.float32) - 8), dequantize_q4_0(block))
    # A positive extreme flips the sign of d: the largest weight always lands on code 0.
    d_pos, codes_pos = unpack_q4_0_block(quantize_q4_0(-x))
    assert d_pos == -1.0 and codes_pos[0] == 0
    with pytest.raises(ValueError):
        pack_q4_0_block(1.0, np.arange(32))  # codes above 15


# ----------------------------------------------------------------------------------------------
# Q6_K
# ----------------------------------------------------------------------------------------------


def random_q6_k_bytes(n_blocks, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, (n_blocks, 210), dtype=np.uint8)
    data[:, 208:210] = rng.uniform(1e-4, 1.0, (n_blocks, 1)).astype(np.float16).view(np.uint8)  # a finite scale
    return data


def test_q6_k_decoding_equals_gguf_on_arbitrary_blocks():
    data = random_q6_k_bytes(64)
    np.testing.assert_array_equal(dequantize_q6_k(data), gguf.quants.dequantize(data, T.Q6_K))


@pytest.mark.parametrize("name", list(adversarial_tensors()) + ["random"])
def test_q6_k_round_trip_is_close_and_decodes_like_gguf(name):
    x = adversarial_tensors().get(name, np.random.default_rng(5).standard_normal((8, 512)).astype(np.float32))
    if name == "near the float16 limit":
        x = x / 1000  # Q6_K's super-scale is max / 128 of the sub-block scales
    data = quantize_q6_k(x)
    assert data.shape == x.shape[:-1] + (x.shape[-1] // 256 * 210,)
    back = dequantize_q6_k(data)
    np.testing.assert_array_equal(back, gguf.quants.dequantize(data, T.Q6_K))
    # About 6 bits per weight: the error is a small fraction of the block's range.
    blocks = np.abs(x.reshape(-1, 256)).max(axis=1, keepdims=True)
    err = np.abs(back - x).reshape(-1, 256)
    assert (err <= blocks / 20 + 1e-30).all()


def test_q6_k_encoding_equals_llama_cpp_fixture():
    fixture = np.load(FIXTURE)
    for key in fixture.files:
        if key.startswith("x_"):
            name = key[2:]
            np.testing.assert_array_equal(quantize_q6_k(fixture[key]), fixture["q_" + name], err_msg=name)


@pytest.mark.parametrize("fmt", ["q8_0", "q4_0", "q6_k"])
def test_encoding_equals_llama_cpp_live(fmt):
    lib = ggml_reference.load()
    if lib is None:
        pytest.skip("llama-cpp-python is not installed (optional: it compiles llama.cpp); the fixture test covers Q6_K")
    cases = dict(adversarial_tensors())
    cases["random"] = np.random.default_rng(11).standard_normal((32, 1024)).astype(np.float32)
    for name, x in cases.items():
        try:
            ours = quantize_blocks(x, fmt)
        except ValueError:
            continue  # float16 overflow: llama.cpp writes inf, we refuse
        np.testing.assert_array_equal(ours, ggml_reference.quantize(lib, x.reshape(-1, x.shape[-1]), fmt).reshape(ours.shape), err_msg=name)
