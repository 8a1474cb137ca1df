"""Integer wrap-around (no promotion), integer/float remainders, division and shifts."""

from __future__ import annotations

import numpy as np
import pytest

from pyptoemu.errors import UndefinedResultError
from tests.emulator.isa.semantic_corners.sem import S, one, row, zeros


@pytest.mark.parametrize("dtype,a,b,want", [
    ("i16", [32767, -32768, 100, -1], [1, -1, 200, -32768], [-32768, 32767, 300, 32767]),
    ("i32", [2**31 - 1, -2**31, 5, -1], [1, -1, 6, -2**31], [-2**31, 2**31 - 1, 11, 2**31 - 1]),
    ("i8", [127, -128, 100, -100], [1, -1, 100, -100], [-128, 127, -56, 56]),
])
def test_tadd_wraps_in_tile_dtype(dtype, a, b, want):
    got = one("tadd", [row(a, dtype), row(b, dtype)], zeros(1, 4, dtype))
    assert got.dtype == np.dtype(dtype.replace("i", "int"))
    assert got[0].tolist() == want


def test_tmul_i16_and_i32_wrap():
    # 300 * 300 = 90000 = 0x15F90 -> low 16 bits 0x5F90 = 24464; -32768 * -1 = 32768 -> -32768
    got = one("tmul", [row([300, -32768, 181, 256], "i16"), row([300, -1, 181, 256], "i16")], zeros(1, 4, "i16"))
    assert got[0].tolist() == [24464, -32768, 32761, 0]
    # 65536 * 65536 = 2**32 -> 0; 46341**2 = 2147488281 -> 2147488281 - 2**32 = -2147479015
    got = one("tmul", [row([65536, 46341], "i32"), row([65536, 46341], "i32")], zeros(1, 2, "i32"))
    assert got[0].tolist() == [0, -2147479015]


def test_tneg_of_int_min_wraps_to_itself():
    got = one("tneg", [row([-32768, 32767, 0, 1], "i16")], zeros(1, 4, "i16"))
    assert got[0].tolist() == [-32768, -32767, 0, -1]
    got = one("tneg", [row([-2**31, 2**31 - 1], "i32")], zeros(1, 2, "i32"))
    assert got[0].tolist() == [-2**31, -(2**31 - 1)]


def test_tile_scalar_int_ops_wrap():
    got = one("tadds", [row([32767, -32768], "i16"), S(1, "i16")], zeros(1, 2, "i16"))
    assert got[0].tolist() == [-32768, -32767]
    got = one("tmuls", [row([2**30, -2**31, 3], "i32"), S(4, "i32")], zeros(1, 3, "i32"))
    assert got[0].tolist() == [0, 0, 12]
    # taddc / tsubc on i16 also wrap: 30000 + 30000 + 10000 = 70000 -> 70000 - 65536 = 4464
    got = one("taddc", [row([30000], "i16"), row([30000], "i16"), row([10000], "i16")], zeros(1, 1, "i16"))
    assert got[0].tolist() == [4464]


@pytest.mark.parametrize("dtype", ["i32", "f32"])
def test_trem_is_floored_sign_of_divisor(dtype):
    a, b = [7, -7, 7, -7, 6, -6], [3, 3, -3, -3, 3, -3]
    got = one("trem", [row(a, dtype), row(b, dtype), zeros(1, 6, dtype)], zeros(1, 6, dtype))
    assert got[0].tolist() == [1, 2, -2, -1, 0, 0]


def test_trems_floored_f32():
    got = one("trems", [row([7.5, -7.5, 0.25], "f32"), S(2.0, "f32"), zeros(1, 3, "f32")], zeros(1, 3, "f32"))
    assert got[0].tolist() == [1.5, 0.5, 0.25]


def test_trem_i32_extremes():
    # INT_MIN rem -1 = 0 (no trap); floored: -2**31 mod 3 = 1 (since -2**31 = -715827883*3 + 1)
    got = one("trem", [row([-2**31, -2**31, 2**31 - 1], "i32"), row([-1, 3, -2], "i32"), zeros(1, 3, "i32")],
              zeros(1, 3, "i32"))
    assert got[0].tolist() == [0, 1, -1]


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_tfmod_is_truncated_sign_of_dividend(dtype):
    a, b = [7.0, -7.0, 7.0, -7.0, -0.0, 5.5], [3.0, 3.0, -3.0, -3.0, 3.0, 2.0]
    got = one("tfmod", [row(a, dtype), row(b, dtype)], zeros(1, 6, dtype))
    assert got[0].astype(np.float64).tolist() == [1.0, -1.0, 1.0, -1.0, 0.0, 1.5]
    assert np.signbit(got[0, 4])  # fmod(-0, 3) = -0 (sign of the dividend)


def test_float_remainders_by_zero_are_nan_ieee():
    z = zeros(1, 3, "f32")
    a, b = row([1.0, -1.0, 0.0], "f32"), row([0.0, 0.0, 0.0], "f32")
    assert np.isnan(one("tfmod", [a, b], z)).all()
    assert np.isnan(one("trem", [a, b, z], z)).all()


def test_tfmod_by_infinity_returns_dividend():
    got = one("tfmod", [row([1.0, -1.0, 5.0], "f32"), row([np.inf, np.inf, -np.inf], "f32")], zeros(1, 3, "f32"))
    assert got[0].tolist() == [1.0, -1.0, 5.0]


def test_trem_by_infinity_emulator_choice():
    """Spec silent on b = +-inf (its formula a - floor(a/b)*b would give NaN); the emulator follows
    Python's floored modulo: x mod +inf = x for x >= 0, +inf for x < 0."""
    got = one("trem", [row([1.0, -1.0], "f32"), row([np.inf, np.inf], "f32"), zeros(1, 2, "f32")], zeros(1, 2, "f32"))
    assert got[0].tolist() == [1.0, np.inf]


def test_tdiv_float_by_zero_ieee():
    got = one("tdiv", [row([1.0, -1.0, 0.0, -0.0], "f32"), row([0.0, 0.0, 0.0, -0.0], "f32")], zeros(1, 4, "f32"))
    assert got[0, 0] == np.inf and got[0, 1] == -np.inf and np.isnan(got[0, 2]) and np.isnan(got[0, 3])
    # signed zero divisor: 1 / -0 = -inf
    got = one("tdivs", [S(1.0, "f32"), row([-0.0, 0.0], "f32")], zeros(1, 2, "f32"))
    assert got[0].tolist() == [-np.inf, np.inf]


def test_int_remainder_by_zero_is_a_fault():
    """Spec silent (trem/tfmod are float/i32 ops; x/0 target-defined): the emulator faults, naming
    the element and its operands, as the scalar arith.remsi does (it returned 0)."""
    with pytest.raises(UndefinedResultError, match=r"integer division by zero at element \(0, 0\): 7 % 0"):
        one("trem", [row([7, -7], "i32"), row([0, 0], "i32"), zeros(1, 2, "i32")], zeros(1, 2, "i32"))
    with pytest.raises(UndefinedResultError, match=r"element \(0, 1\): -7 fmod 0"):
        one("tfmod", [row([7, -7], "i32"), row([2, 0], "i32")], zeros(1, 2, "i32"))


def test_shifts_in_range():
    got = one("tshl", [row([1, -1, 0x4000, 3], "i16"), row([15, 15, 1, 2], "i16")], zeros(1, 4, "i16"))
    assert got[0].tolist() == [-32768, -32768, -32768, 12]
    got = one("tshrs", [row([-8, 8, -1, 0x7FFF], "i16"), S(1, "i16")], zeros(1, 4, "i16"))
    # emulator choice (spec: signless `a >> b`): arithmetic shift for signed tiles
    assert got[0].tolist() == [-4, 4, -1, 0x3FFF]


def test_shift_count_out_of_range_is_a_fault():
    """Spec silent on counts >= width or < 0: the emulator faults, naming the element and its
    operands, as the scalar arith.shli/shrsi do (NumPy's answer was 0 / sign fill)."""
    with pytest.raises(UndefinedResultError, match=r"outside \[0, 16\) for int16 at element \(0, 0\): 1 << 16"):
        one("tshl", [row([1, -8, 1, 1], "i16"), row([16, 16, 17, -1], "i16")], zeros(1, 4, "i16"))
    with pytest.raises(UndefinedResultError, match=r"at element \(0, 3\): 8 >> -1"):
        one("tshr", [row([1, -8, -8, 8], "i16"), row([1, 2, 3, -1], "i16")], zeros(1, 4, "i16"))
    with pytest.raises(UndefinedResultError, match=r"outside \[0, 32\) for int32 at element \(0, 0\): 1 << 32"):
        one("tshls", [row([1, 3], "i32"), S(32, "i32")], zeros(1, 2, "i32"))
    got = one("tshl", [row([1, -8], "i16"), row([15, 0], "i16")], zeros(1, 2, "i16"))  # the last counts in range
    assert got[0].tolist() == [-32768, -8]


