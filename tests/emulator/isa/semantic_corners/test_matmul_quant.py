"""tmatmul corner cases (i8 extremes, bf16, K < tile, fused f32 accumulation), taxpy mixed
precision, tquant/tdequant rounding and saturation."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np

from tests.emulator.isa.semantic_corners.sem import S, T, one, row, zeros


def _mm(op, ins, m, n, acc="f32"):
    return one(op, ins, zeros(m, n, acc, loc="acc"))


def test_matmul_i8_extremes_accumulate_in_i32():
    k = 64
    a = T(np.full((2, k), -128), "i8", loc="left")
    b = T(np.full((k, 2), -128), "i8", loc="right")
    assert _mm("tmatmul", [a, b], 2, 2, "i32").tolist() == [[64 * 16384] * 2] * 2
    b2 = T(np.full((k, 1), 127), "i8", loc="right")
    assert _mm("tmatmul", [a, b2], 2, 1, "i32").tolist() == [[-64 * 128 * 127]] * 2


def test_matmul_acc_i32_wraps():
    a = T(np.full((1, 32), -128), "i8", loc="left")
    b = T(np.full((32, 1), -128), "i8", loc="right")
    c0 = T(np.array([[2**31 - 1]]), "i32", loc="acc")
    got = one("tmatmul.acc", [c0, a, b], zeros(1, 1, "i32", loc="acc"))
    assert got.tolist() == [[(2**31 - 1 + 32 * 16384) - 2**32]]


def test_matmul_bf16_inputs_exact_products():
    # (1 + 2**-7)**2 - 1 = 2**-6 + 2**-14: exact in f32 (a bf16 product has at most 16 significant bits)
    a = T(np.array([[1 + 2**-7, 1.0]], ml_dtypes.bfloat16), "bf16", loc="left")
    b = T(np.array([[1 + 2**-7], [-1.0]], ml_dtypes.bfloat16), "bf16", loc="right")
    assert float(_mm("tmatmul", [a, b], 1, 1)[0, 0]) == 2**-6 + 2**-14


def test_matmul_valid_k_smaller_than_tile_ignores_garbage():
    """K = a.VC = 5 inside 32-wide tiles whose cells beyond the valid region hold NaN."""
    a = np.full((2, 32), np.nan, np.float16)
    a[:, :5] = 1.0
    b = np.full((32, 16), np.nan, np.float16)
    b[:5, :] = 2.0
    got = _mm("tmatmul", [T(a, "f16", 2, 5, loc="left"), T(b, "f16", 5, 16, loc="right")], 2, 16)
    assert got.tolist() == [[10.0] * 16] * 2


def test_matmul_bias_starts_from_bias():
    a = T(np.array([[1.0, 2.0]], np.float32), "f32", loc="left")
    b = T(np.array([[3.0], [4.0]], np.float32), "f32", loc="right")
    bias = T(np.array([[0.5]], np.float32), "f32", loc="bias")
    assert one("tmatmul.bias", [a, b, bias], zeros(1, 1, "f32", loc="acc")).tolist() == [[11.5]]


# A * B = 2**47 + 254047 with A, B < 2**24: a*b = 2**-24 * (1 + 254047 * 2**-47) exactly.
_A, _B = 8390625, 16773183


def test_matmul_f32_accumulation_is_fused():
    a = np.float32(_A * 2.0**-35)
    b = np.float32(_B * 2.0**-36)
    exact = 1 + Fraction(float(a)) * Fraction(float(b))
    assert Fraction(1) + Fraction(1, 2**24) < exact < Fraction(1) + Fraction(1, 2**23)  # just above the tie
    c0 = T(np.ones((1, 1), np.float32), "f32", loc="acc")
    got = one("tmatmul.acc", [c0, T(np.array([[a]]), "f32", loc="left"), T(np.array([[b]]), "f32", loc="right")],
              zeros(1, 1, "f32", loc="acc"))
    assert float(got[0, 0]) == 1 + 2.0**-23


def test_taxpy_f16_src_f32_dst():
    t = np.array([[0.1, 1000.0, -3.0]], np.float16)
    d = np.array([[1.0, 1e-4, 0.0]], np.float32)
    got = one("taxpy", [T(t, "f16"), S(3.0, "f16")], T(d, "f32"))
    # t*s is exact in f32 (f16 x f16 product); one rounding of d + t*s in f32
    want = [float(np.float32(Fraction(float(d[0, j])) + Fraction(float(t[0, j])) * 3)) for j in range(3)]
    assert got[0].astype(np.float64).tolist() == want
    assert got.dtype == np.float32


def test_taxpy_scalar_takes_src_dtype():
    got = one("taxpy", [row([1.0], "f16"), S(0.1, "f16")], zeros(1, 1, "f32"))
    assert float(got[0, 0]) == float(np.float16(0.1))  # 0.0999755859375, not f32(0.1)


def test_tquant_sym_rint_and_saturation():
    s = row([0.5, 1.5, 2.5, -0.5, -2.5, 200.0, -200.0, 127.5], "f32")
    got = one("tquant", [s, T(np.ones((1, 1)), "f32")], zeros(1, 8, "i8"), {"quant_type": "INT8_SYM"})
    assert got.tolist() == [[0, 2, 2, 0, -2, 127, -128, 127]]
    got = one("tquant", [row([0.3, -0.3], "f32"), T(np.full((1, 1), 5.0), "f32")], zeros(1, 2, "i8"))
    assert got.tolist() == [[2, -2]]  # 1.5 -> 2, -1.5 -> -2 (ties to even)


def test_tquant_asym_offset_and_u8_saturation():
    s = row([0.5, 1.5, -200.0, 200.0, -128.5, 127.5], "f32")
    got = one("tquant", [s, T(np.ones((1, 1)), "f32"), T(np.full((1, 1), 128.0), "f32")], zeros(1, 6, "ui8"),
              {"quant_type": "INT8_ASYM"})
    # 128.5 -> 128, 129.5 -> 130, -72 -> 0, 328 -> 255, -0.5 -> 0 (rint -0 -> 0), 255.5 -> 256 -> 255
    assert got.tolist() == [[128, 130, 0, 255, 0, 255]]


def test_tquant_nan_emulator_choice():
    """Spec silent on NaN input: the emulator quantizes NaN to 0."""
    got = one("tquant", [row([np.nan, np.inf, -np.inf], "f32"), T(np.ones((1, 1)), "f32")], zeros(1, 3, "i8"))
    assert got.tolist() == [[0, 127, -128]]


def test_tdequant_i8_and_i16_extremes():
    got = one("tdequant", [row([-128, 127, 0], "i8"), T(np.full((1, 1), 0.5), "f32"), T(np.ones((1, 1)), "f32")],
              zeros(1, 3, "f32"))
    assert got.tolist() == [[-64.5, 63.0, -0.5]]
    got = one("tdequant", [row([-32768, 32767], "i16"), T(np.full((1, 1), 0.5), "f32"),
                           T(np.full((1, 1), -1.0), "f32")], zeros(1, 2, "f32"))
    assert got.tolist() == [[-16383.5, 16384.0]]
