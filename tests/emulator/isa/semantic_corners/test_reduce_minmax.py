"""Max/min with NaN and signed zero (spec silent: pins the emulator's choices), reductions over tiny
valid regions, f16/bf16 accumulation, arg-reductions, expand mode 2."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tests.emulator.isa.semantic_corners.sem import S, T, bits, one, row, zeros


def test_tmax_tmin_propagate_nan_emulator_choice():
    """Spec §4.3 only says max(a,b)/min(a,b); the emulator propagates NaN from either side (IEEE
    754-2019 maximum/minimum, NumPy np.maximum), not maxNum's 'return the number'."""
    a, b = row([np.nan, 1.0, np.nan], "f32"), row([1.0, np.nan, np.nan], "f32")
    assert np.isnan(one("tmax", [a, b], zeros(1, 3, "f32"))).all()
    assert np.isnan(one("tmin", [a, b], zeros(1, 3, "f32"))).all()
    assert np.isnan(one("tmaxs", [row([1.0, -np.inf], "f32"), S(float("nan"), "f32")], zeros(1, 2, "f32"))).all()
    assert np.isnan(one("trelu", [row([np.nan], "f32")], zeros(1, 1, "f32"))).all()


def test_tmax_inf():
    got = one("tmax", [row([np.inf, -np.inf, -np.inf], "f32"), row([1.0, 1.0, -np.inf], "f32")], zeros(1, 3, "f32"))
    assert got[0].tolist() == [np.inf, 1.0, -np.inf]
    got = one("tmins", [row([np.inf, -np.inf], "f16"), S(0.0, "f16")], zeros(1, 2, "f16"))
    assert got[0].astype(np.float64).tolist() == [0.0, -np.inf]


def test_tmax_signed_zero_emulator_choice():
    """Spec silent. The emulator returns the SECOND operand when the two compare equal, so
    max(+0, -0) = -0 (IEEE 754-2019 maximum would give +0) and the result depends on operand order."""
    got = one("tmax", [row([-0.0, 0.0], "f32"), row([0.0, -0.0], "f32")], zeros(1, 2, "f32"))
    assert bits(got) == [0x00000000, 0x80000000]
    got = one("tmin", [row([-0.0, 0.0], "f32"), row([0.0, -0.0], "f32")], zeros(1, 2, "f32"))
    assert bits(got) == [0x00000000, 0x80000000]


def test_row_col_max_nan_emulator_choice():
    x = T(np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, -np.inf]], np.float32), "f32")
    got = one("trowmax", [x, x], zeros(2, 1, "f32"))
    assert np.isnan(got[0, 0]) and got[1, 0] == np.inf
    got = one("tcolmin", [x], zeros(1, 3, "f32"))
    assert got[0, 0] == 1.0 and np.isnan(got[0, 1]) and got[0, 2] == -np.inf


def test_argmax_first_occurrence_and_nan():
    x = T(np.array([[3.0, 1.0, 3.0, 3.0], [1.0, np.nan, 5.0, np.nan]], np.float32), "f32")
    got = one("trowargmax", [x, x], zeros(2, 1, "i32"))
    # ties -> first occurrence (spec); NaN -> index of the first NaN (emulator choice, spec silent)
    assert got[:, 0].tolist() == [0, 1]
    got = one("trowargmin", [T(np.array([[2.0, -0.0, 0.0, -0.0]], np.float32), "f32"), x], zeros(1, 1, "ui32"))
    assert got.tolist() == [[1]] and got.dtype == np.uint32
    got = one("tcolargmax", [T(np.array([[1.0], [7.0], [7.0]], np.float32), "f32"), x], zeros(1, 1, "i32"))
    assert got.tolist() == [[1]]


def test_reductions_over_a_single_valid_element():
    x = np.array([[5.0, 7.0, 1.0], [9.0, 1.0, 2.0]], np.float32)
    src = T(x, "f32", 1, 1)
    for op, want in (("trowsum", 5.0), ("trowmax", 5.0), ("trowmin", 5.0), ("trowprod", 5.0)):
        got = one(op, [src, src], zeros(2, 1, "f32", vrow=1, vcol=1))
        assert got.shape == (1, 1) and got[0, 0] == want, op
    for op in ("trowargmax", "trowargmin"):
        assert one(op, [src, src], zeros(2, 1, "i32", vrow=1, vcol=1)).tolist() == [[0]]
    for op in ("tcolsum", "tcolmax", "tcolmin", "tcolprod"):
        assert one(op, [src], zeros(1, 3, "f32", vrow=1, vcol=1)).tolist() == [[5.0]], op


def test_f16_row_and_col_sum_accumulate_in_f32():
    # sequential f16 accumulation would stick at 2048 (2048 + 1 rounds back to 2048);
    # f32 accumulation gives 2063, rounded once to f16 (spacing 2): tie -> even 2064
    x = np.array([[2048.0] + [1.0] * 15], np.float16)
    assert one("trowsum", [T(x, "f16"), T(x, "f16")], zeros(1, 1, "f16")).astype(np.float64).tolist() == [[2064.0]]
    assert one("tcolsum", [T(x.T.copy(), "f16")], zeros(1, 1, "f16")).astype(np.float64).tolist() == [[2064.0]]
    xb = np.array([[256.0] + [1.0] * 15], ml_dtypes.bfloat16)  # bf16 spacing 2 at 256: 271 -> 272
    assert one("trowsum", [T(xb, "bf16"), T(xb, "bf16")], zeros(1, 1, "bf16")).astype(np.float64).tolist() == [[272.0]]


def test_f16_sum_overflow_only_at_the_end():
    # 65504 + 65504 - 65504 = 65504 in f32 (an f16 accumulator would overflow to inf)
    x = np.array([[65504.0, 65504.0, -65504.0]], np.float16)
    assert one("trowsum", [T(x, "f16"), T(x, "f16")], zeros(1, 1, "f16")).astype(np.float64).tolist() == [[65504.0]]


def test_f32_rowsum_order_emulator_choice():
    """Spec silent on the f32 summation order: 2**24 + seven 1.0 gives 2**24 sequentially,
    2**24 + 8 correctly rounded; the emulator (NumPy pairwise summation) gives 2**24 + 6."""
    x = np.array([[2.0**24] + [1.0] * 7], np.float32)
    got = one("trowsum", [T(x, "f32"), T(x, "f32")], zeros(1, 1, "f32"))
    assert float(got[0, 0]) == 2.0**24 + 6


def test_int_row_reductions_wrap_in_tile_dtype():
    """Spec: same dtype; the emulator accumulates i16 in i16 (wraps) - spec silent on the accumulator."""
    x = T(np.array([[30000, 30000, -1]]), "i16")
    assert one("trowsum", [x, x], zeros(1, 1, "i16")).tolist() == [[60000 - 65536 - 1]]
    y = T(np.array([[65536, 65536, 3]]), "i32")
    assert one("trowprod", [y, y], zeros(1, 1, "i32")).tolist() == [[0]]


def test_rowexpand_mode2_f32_and_f16_operand_order():
    a = np.arange(32, dtype=np.float32).reshape(2, 16)
    r = (np.arange(16, dtype=np.float32) * 100).reshape(2, 8)
    got = one("trowexpandsub", [T(a, "f32"), T(r, "f32")], zeros(2, 16, "f32"))
    want = a - r[:, np.arange(16) % 8]
    np.testing.assert_array_equal(got, want)
    # broadcast operand written first: d = r - a (written order kept)
    af = np.arange(64, dtype=np.float16).reshape(2, 32)
    rf = (np.arange(32) * 10).reshape(2, 16).astype(np.float16)
    got = one("trowexpandsub", [T(rf, "f16"), T(af, "f16")], zeros(2, 32, "f16"))
    want = rf[:, np.arange(32) % 16].astype(np.float32) - af.astype(np.float32)
    np.testing.assert_array_equal(got.astype(np.float32), want)


def test_rowexpand_mode1_dn_column_and_expdif():
    a = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]], np.float32)
    col = T(np.array([[1.0]], np.float32), "f32", loc="vec")
    got = one("trowexpandexpdif", [T(a, "f32"), col], zeros(1, 8, "f32"))
    np.testing.assert_allclose(got[0], np.exp(a[0].astype(np.float64) - 1.0), rtol=1e-6)
    got = one("trowexpandmax", [T(np.array([[np.nan, -0.0, 2.0, 0.5]], np.float32), "f32", vcol=4),
                                T(np.array([[1.0]], np.float32), "f32")], zeros(1, 4, "f32"))
    assert np.isnan(got[0, 0]) and got[0, 1:].tolist() == [1.0, 2.0, 1.0]
