"""llmlab.quant.basics: absmax, zero point, groups, and the chapter's error measures.

Worked values: the syllabus' [DER] numbers (chapter 08's notebook and §S.1): the toy vector
[0.5, -1.27, 0.03, 1.0] -> scale 0.01 and codes [50, -127, 3, 100]; the affine toy
[-1, 0, 0.6, 2] -> scale 3/255, zero point 85, codes [0, 85, 136, 255]; Gaussian 256x256 per-tensor
int8 -> relative mat-vec error about 0.011, int4 about 0.20, int8 with one outlier of 100 about 0.22.
"""

import numpy as np
import pytest

from llmlab.quant import (
    GB,
    GiB,
    dequantize,
    dequantize_affine,
    dequantize_groupwise,
    fake_quantize,
    max_abs_error,
    qmax_for_bits,
    quant_report,
    quantize_absmax,
    quantize_affine,
    quantize_groupwise,
    quantize_int8_absmax,
    quantized_nbytes,
    relative_matvec_error,
    weight_memory_bytes,
)


def gaussian(shape=(256, 256), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_weight_memory_formula_textbook_numbers():
    assert weight_memory_bytes(7e9, 16) == 14e9
    assert weight_memory_bytes(7e9, 8) == 7e9
    assert weight_memory_bytes(7e9, 4) == 3.5e9
    assert weight_memory_bytes(7e9, 16) / GiB == pytest.approx(13.04, abs=5e-3)
    assert weight_memory_bytes(47e9, 4) / GB == pytest.approx(23.5)
    assert weight_memory_bytes(7e9, 4 + 16 / 64) / GB == pytest.approx(3.71875)  # 4-bit g64 with fp16 scales
    with pytest.raises(ValueError):
        weight_memory_bytes(-1, 8)
    with pytest.raises(TypeError):
        weight_memory_bytes("7e9", 8)


def test_absmax_toy_vector_exact_codes():
    w = [0.5, -1.27, 0.03, 1.0]
    q, scale = quantize_int8_absmax(w)
    assert scale == pytest.approx(0.01, rel=1e-12)
    assert q.dtype == np.int8 and q.tolist() == [50, -127, 3, 100]
    np.testing.assert_allclose(dequantize(q, scale), w, rtol=0, atol=1e-12)


def test_qmax_per_bits():
    assert [qmax_for_bits(b) for b in (2, 3, 4, 8)] == [1, 3, 7, 127]
    with pytest.raises(ValueError):
        qmax_for_bits(1)


def test_gaussian_matvec_error_matches_chapter():
    w, x = gaussian(), np.random.default_rng(1).standard_normal(256)
    int8 = relative_matvec_error(w, fake_quantize(w, 8), x)
    int4 = relative_matvec_error(w, fake_quantize(w, 4), x)
    assert 0.005 < int8 < 0.02  # about 1 % (0.0111 in the syllabus' derivation)
    assert 0.15 < int4 < 0.3  # about 0.20
    assert int4 > 10 * int8
    outlier = w.copy()
    outlier[3, 7] = 100.0
    spoiled = relative_matvec_error(outlier, fake_quantize(outlier, 8), x)
    assert 0.15 < spoiled < 0.3  # the outlier inflates the one shared scale


def test_per_channel_protects_the_rows_without_the_outlier():
    w, x = gaussian(), np.random.default_rng(1).standard_normal(256)
    w[3, :] *= 50.0  # one row of large weights
    per_tensor = relative_matvec_error(np.delete(w, 3, 0), np.delete(fake_quantize(w, 8), 3, 0), x)
    per_row = relative_matvec_error(np.delete(w, 3, 0), np.delete(fake_quantize(w, 8, axis=1), 3, 0), x)
    assert per_row < per_tensor / 10
    q, scale = quantize_absmax(w, 8, axis=1)
    assert scale.shape == (256, 1) and q.shape == w.shape


def test_error_never_exceeds_half_a_step():
    for bits in (2, 3, 4, 8):
        w = gaussian((64, 128), seed=bits)
        for axis in (None, 0, 1):
            q, scale = quantize_absmax(w, bits, axis=axis)
            bound = np.broadcast_to(np.asarray(scale) / 2, w.shape)
            assert (np.abs(w - dequantize(q, scale)) <= bound * (1 + 1e-12)).all()
            qmax = qmax_for_bits(bits)
            assert np.abs(q).max() == qmax  # the largest weight uses the last code


def test_inputs_are_never_modified():
    w = gaussian((32, 64))
    before = w.copy()
    x = np.ones(64)
    quantize_absmax(w, 4, axis=1)
    quantize_affine(w, 8)
    quantize_groupwise(w, 4, 32)
    fake_quantize(w, 3, group_size=32)
    quant_report(w, x)
    np.testing.assert_array_equal(w, before)


def test_float32_stays_float32_and_lists_work():
    w32 = gaussian((8, 32)).astype(np.float32)
    q, scale = quantize_absmax(w32, axis=1)
    assert scale.dtype == np.float32 and dequantize(q, scale).dtype == np.float32
    assert fake_quantize(w32, 8).dtype == np.float32
    assert fake_quantize([[1.0, -2.0], [0.5, 0.25]], 8).dtype == np.float64


def test_zeros_and_bad_input():
    q, scale = quantize_absmax(np.zeros((4, 4)))
    assert scale == 0 and (q == 0).all()
    q, scale = quantize_absmax(np.array([[0.0, 0.0], [1.0, -2.0]]), axis=1)
    assert scale[0, 0] == 0 and q[0].tolist() == [0, 0]
    for bad in ([1.0, np.nan], [np.inf, 1.0]):
        with pytest.raises(ValueError, match="NaN or Inf"):
            quantize_absmax(bad)
    with pytest.raises(ValueError):
        quantize_absmax([])
    with pytest.raises(TypeError):
        quantize_absmax(["a", "b"])
    with pytest.raises(ValueError, match="out of range"):
        quantize_absmax(np.ones((2, 2)), axis=2)


def test_affine_toy_and_round_trip():
    q, scale, zero = quantize_affine([-1.0, 0.0, 0.6, 2.0])
    assert scale == pytest.approx(3 / 255, rel=1e-12) and zero == 85
    assert q.dtype == np.uint8 and q.tolist() == [0, 85, 136, 255]
    np.testing.assert_allclose(dequantize_affine(q, scale, zero), [-1.0, 0.0, 0.6, 2.0], atol=1e-12)
    # Zero is always representable exactly, even for all-positive data.
    q, scale, zero = quantize_affine([0.5, 1.0, 2.0])
    assert zero == 0 and dequantize_affine(q, scale, zero).min() == pytest.approx(0.5, abs=scale / 2)
    # Per row: every row gets its own range.
    w = gaussian((16, 64)) + np.arange(16)[:, None]
    q, scale, zero = quantize_affine(w, 4, axis=1)
    assert scale.shape == (16, 1) and zero.shape == (16, 1)
    assert (np.abs(dequantize_affine(q, scale, zero) - w) <= scale / 2 + 1e-12).all()


def test_affine_beats_symmetric_on_one_sided_data():
    w = np.abs(gaussian((64, 64)))  # ReLU-like: no negative values
    x = np.ones(64)
    sym = relative_matvec_error(w, fake_quantize(w, 4), x)
    asym = relative_matvec_error(w, fake_quantize(w, 4, symmetric=False), x)
    assert asym < sym


def test_groupwise_shapes_and_outlier_isolation():
    w = gaussian((8, 256))
    q, scales = quantize_groupwise(w, 4, 32)
    assert q.shape == w.shape and scales.shape == (8, 8)
    w[0, 5] = 100.0
    q, scales = quantize_groupwise(w, 4, 32)
    w_hat = dequantize_groupwise(q, scales, 32)
    # Only the outlier's group loses precision; the other 31 groups of row 0 keep theirs.
    assert np.abs(w_hat[0, 32:] - w[0, 32:]).max() < 0.5
    assert np.abs(w_hat[0, 1:32] - w[0, 1:32]).max() > 1.0
    with pytest.raises(ValueError, match="multiple of group_size"):
        quantize_groupwise(np.ones((2, 30)), 4, 32)
    with pytest.raises(ValueError, match="shape"):
        dequantize_groupwise(q, scales[:, :3], 32)


def test_error_falls_with_bits_and_with_smaller_groups():
    w, x = gaussian(), np.random.default_rng(2).standard_normal(256)
    errors = [relative_matvec_error(w, fake_quantize(w, b), x) for b in (2, 3, 4, 5, 6, 7, 8)]
    assert all(a > b for a, b in zip(errors, errors[1:]))
    w[0, 0] = 100.0
    by_group = [relative_matvec_error(w, fake_quantize(w, 4, group_size=g), x) for g in (256, 128, 32)]
    assert by_group[0] > by_group[1] > by_group[2]


def test_quant_report_has_memory_and_error():
    w, x = gaussian(), np.random.default_rng(1).standard_normal(256)
    report = quant_report(w, x)
    assert report["mem_ratio"] == 4.0
    assert report["mem_ratio_with_scales"] == pytest.approx(256 * 256 * 4 / (256 * 256 + 4))
    assert 0.005 < report["rel_error"] < 0.02
    assert report["max_error"] <= report["error_bound"] * (1 + 1e-12)
    g = quant_report(w, x, 4, group_size=32)
    assert g["mem_ratio_with_scales"] == pytest.approx(32 / 4.5)
    assert quantized_nbytes((256, 256), 4, axis=1) == 256 * 128 + 256 * 4


def test_relative_error_checks_shapes():
    with pytest.raises(ValueError):
        relative_matvec_error(np.ones((2, 3)), np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match="zero"):
        relative_matvec_error(np.zeros((2, 2)), np.zeros((2, 2)), np.ones(2))
    assert max_abs_error([1.0, 2.0], [1.5, 2.0]) == 0.5
