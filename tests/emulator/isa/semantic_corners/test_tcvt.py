"""tcvt: every rounding mode on exact ties, saturation, narrowing floats, int->float, fp8."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.emulator.isa.semantic_corners.sem import bits, cvt

TIES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.25, -2.75]
WANT_INT = {
    "RINT": [0, 2, 2, 0, -2, -2, 2, -3],
    "CAST_RINT": [0, 2, 2, 0, -2, -2, 2, -3],
    "ROUND": [1, 2, 3, -1, -2, -3, 2, -3],
    "FLOOR": [0, 1, 2, -1, -2, -3, 2, -3],
    "CEIL": [1, 2, 3, 0, -1, -2, 3, -2],
    "TRUNC": [0, 1, 2, 0, -1, -2, 2, -2],
    "NONE": [0, 1, 2, 0, -1, -2, 2, -2],  # "no rounding step (int results truncate)"
}


@pytest.mark.parametrize("dst", ["i32", "i16", "i8"])
@pytest.mark.parametrize("mode", sorted(WANT_INT))
def test_f32_to_int_ties(mode, dst):
    assert cvt(TIES, "f32", dst, mode).tolist() == WANT_INT[mode]


def test_default_rmode_is_cast_rint():
    assert cvt(TIES, "f32", "i32").tolist() == WANT_INT["RINT"]


def test_odd_to_int_ties_go_to_the_odd_neighbour():
    got = cvt([0.5, 1.5, 2.5, -0.5, -2.5, 4.0], "f32", "i32", "ODD")
    assert got.tolist() == [1, 1, 3, -1, -3, 4]


def test_odd_to_int_non_tie_emulator_choice():
    """Spec: "ODD round to odd (tie -> odd neighbour)"; silent for non-ties. The emulator uses
    von-Neumann round-to-odd: every inexact value goes to the odd neighbour (2.25 -> 3, 3.75 -> 3)."""
    assert cvt([2.25, 3.75, -2.25], "f32", "i32", "ODD").tolist() == [3, 3, -3]


@pytest.mark.parametrize("dst,lo,hi", [("i32", -2**31, 2**31 - 1), ("i16", -32768, 32767), ("i8", -128, 127)])
@pytest.mark.parametrize("sat", [None, "ON"])
def test_f32_to_int_saturates(dst, lo, hi, sat):
    got = cvt([1e10, -1e10, np.inf, -np.inf, 3e9, -3e9], "f32", dst, None, sat)
    assert got.tolist() == [hi, lo, hi, lo, hi, lo]


def test_f32_to_i32_boundaries():
    # 2**31 is not representable in i32 -> clamp; the largest f32 below 2**31 is 2**31 - 128
    assert cvt([2.0**31, -2.0**31, 2.0**31 - 128], "f32", "i32").tolist() == [2**31 - 1, -2**31, 2**31 - 128]


def test_nan_to_int_emulator_choice():
    """Spec silent on NaN -> int; the emulator writes 0 (with and without saturation)."""
    assert cvt([np.nan], "f32", "i32").tolist() == [0]
    assert cvt([np.nan], "f32", "i16", None, "ON").tolist() == [0]
    assert cvt([np.nan], "f16", "i8").tolist() == [0]


def test_sat_off_wraps_emulator_choice():
    """sat_mode OFF: target-defined; the emulator wraps two's complement (40000 -> -25536)."""
    assert cvt([40000.0, -40000.0, 1e10], "f32", "i16", None, "OFF").tolist() == [-25536, 25536, -7168]


@pytest.mark.parametrize("sat", [None, "ON"])
def test_f32_to_i64_saturates_high(sat):
    got = cvt([1e19, np.inf, -1e19, -np.inf, 2.0**62], "f32", "i64", None, sat)
    assert got.tolist() == [2**63 - 1, 2**63 - 1, -2**63, -2**63, 2**62]


def test_f16_to_i8_u8():
    x = [-129.0, -128.5, 127.5, 300.0, 2.5, -0.5, np.inf, -np.inf]
    assert cvt(x, "f16", "i8").tolist() == [-128, -128, 127, 127, 2, 0, 127, -128]
    assert cvt([-1.0, -0.6, 255.5, 300.0, 2.5, 0.5, np.inf, -np.inf], "f16", "ui8").tolist() == \
        [0, 0, 255, 255, 2, 0, 255, 0]
    assert cvt([2.5, -2.5, 127.5], "f16", "i8", "ROUND").tolist() == [3, -3, 127]


def test_bf16_to_i32():
    x = [3e9, -3e9, 2.5, -2.5, 1.5, 16777216.0 * 3, np.inf, -np.inf]
    assert cvt(x, "bf16", "i32").tolist() == [2**31 - 1, -2**31, 2, -2, 2, 50331648, 2**31 - 1, -2**31]
    assert cvt([2.5, -2.5], "bf16", "i32", "ROUND").tolist() == [3, -3]


# f32 -> f16: 1 + 2**-11 is the tie between 1 (even) and 1 + 2**-10 (odd);
# 1 + 3*2**-11 is the tie between 1 + 2**-10 (odd) and 1 + 2**-9 (even).
H = 2.0**-10
F16_TIES = [1 + H / 2, 1 + 3 * H / 2, -(1 + H / 2), -(1 + 3 * H / 2)]
WANT_F16 = {
    "RINT": [1, 1 + 2 * H, -1, -(1 + 2 * H)],
    "ROUND": [1 + H, 1 + 2 * H, -(1 + H), -(1 + 2 * H)],
    "FLOOR": [1, 1 + H, -(1 + H), -(1 + 2 * H)],
    "CEIL": [1 + H, 1 + 2 * H, -1, -(1 + H)],
    "TRUNC": [1, 1 + H, -1, -(1 + H)],
    "ODD": [1 + H, 1 + H, -(1 + H), -(1 + H)],
}


@pytest.mark.parametrize("mode", sorted(WANT_F16))
def test_f32_to_f16_ties_with_rmode(mode):
    """Emulator choice (the spec's reference model would use nearest-even for every mode; hardware
    applies rmode): rmode applies to narrowing float conversions - documented in tcvt's YAML."""
    got = cvt(F16_TIES, "f32", "f16", mode)
    assert got.astype(np.float64).tolist() == WANT_F16[mode]


B = 2.0**-7
BF16_TIES = [1 + B / 2, 1 + 3 * B / 2, -(1 + B / 2), -(1 + 3 * B / 2)]


@pytest.mark.parametrize("mode", sorted(WANT_F16))
def test_f32_to_bf16_ties_with_rmode(mode):
    want = [(1 if v > 0 else -1) * (1 + (abs(v) - 1) / H * B) for v in WANT_F16[mode]]
    got = cvt(BF16_TIES, "f32", "bf16", mode)
    assert got.astype(np.float64).tolist() == want


def test_f32_to_f16_overflow_per_mode():
    big = [70000.0, -70000.0, 65520.0]  # 65520 = tie between 65504 (max, odd) and 65536 (inf)
    assert cvt(big, "f32", "f16").astype(np.float64).tolist() == [np.inf, -np.inf, np.inf]
    assert cvt(big, "f32", "f16", "TRUNC").astype(np.float64).tolist() == [65504, -65504, 65504]
    assert cvt(big, "f32", "f16", "FLOOR").astype(np.float64).tolist() == [65504, -np.inf, 65504]
    assert cvt(big, "f32", "f16", "CEIL").astype(np.float64).tolist() == [np.inf, -65504, np.inf]
    assert cvt(big, "f32", "f16", None, "ON").astype(np.float64).tolist() == [65504, -65504, 65504]


def test_f32_to_bf16_overflow_and_specials():
    bf_max = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    x = [3.4e38, -3.4e38, np.inf, -0.0]
    got = cvt(x, "f32", "bf16")
    assert got.astype(np.float64).tolist()[:3] == [np.inf, -np.inf, np.inf]
    assert bits(got)[3] == 0x8000
    assert cvt(x, "f32", "bf16", "TRUNC").astype(np.float64).tolist()[:2] == [bf_max, -bf_max]
    assert np.isnan(cvt([np.nan], "f32", "bf16", "FLOOR")).all()


def test_f32_to_f16_subnormal_directed():
    tiny = 2.0**-24  # smallest f16 subnormal
    got = cvt([1e-8, -1e-8, 1e-8, -1e-8], "f32", "f16", "CEIL").astype(np.float64).tolist()
    assert got[0] == tiny and got[1] == 0.0
    got = cvt([1e-8, -1e-8], "f32", "f16", "FLOOR")
    assert got.astype(np.float64).tolist() == [0.0, -tiny]


def test_int_to_float_default_is_nearest_even():
    # 2049 / 2051 are ties in f16 (spacing 2 above 2048); 2**24 + 1 a tie in f32
    assert cvt([2049, 2051, -2049, 70000], "i32", "f16").astype(np.float64).tolist() == [2048, 2052, -2048, np.inf]
    assert cvt([2**24 + 1, -(2**24 + 3)], "i32", "f32").astype(np.float64).tolist() == [2**24, -(2**24 + 4)]


def test_int_to_float_ignores_rmode():
    assert cvt([2**24 + 1, -(2**24 + 1)], "i32", "f32", "FLOOR").astype(np.float64).tolist() == [2**24, -2**24]


def test_f32_to_f32_rounding():
    got = cvt([2.5, -2.5, 1.25, -1.75], "f32", "f32", "ROUND")
    assert got.tolist() == [3.0, -3.0, 1.0, -2.0]


def test_int_narrowing_clamps_by_default():
    assert cvt([40000, -40000, 32767, -32769], "i32", "i16").tolist() == [32767, -32768, 32767, -32768]
    assert cvt([2**40, -2**40, 5], "i64", "i32").tolist() == [2**31 - 1, -2**31, 5]


def test_f32_to_f8e4m3fn_directed_overflow_saturates():
    assert cvt([1000.0, -1000.0], "f32", "f8E4M3FN", "TRUNC").astype(np.float64).tolist() == [448, -448]
    assert cvt([1000.0], "f32", "f8E4M3FN", "FLOOR").astype(np.float64).tolist() == [448]
    assert cvt([1000.0, -1000.0], "f32", "f8E4M3FN", None, "ON").astype(np.float64).tolist() == [448, -448]


def test_fp8_round_trip_and_rounding_via_ml_dtypes():
    # e4m3 (IEEE-like, max 240) and e5m2: in-range values round to nearest even
    assert cvt([17.0, 19.0, 18.5], "f32", "f8E4M3").astype(np.float64).tolist() == [16, 20, 18]
    assert cvt([1000.0, 1e6], "f32", "f8E5M2").astype(np.float64).tolist() == [1024, np.inf]
    raw = np.arange(256, dtype=np.uint8)
    for name, dt in (("f8E4M3FN", ml_dtypes.float8_e4m3fn), ("f8E5M2", ml_dtypes.float8_e5m2)):
        as_f32 = raw.view(dt).astype(np.float32)
        keep = np.isfinite(as_f32)
        back = cvt(as_f32[keep].tolist(), "f32", name)
        assert bits(back) == raw[keep].tolist(), name


def test_i64_to_f32_nearest():
    v = 2**60 + 2**36 + 1  # just above the f32 tie between 2**60 and 2**60 + 2**37
    got = cvt([v, -v], "i64", "f32")
    assert [int(x) for x in got.tolist()] == [2**60 + 2**37, -(2**60 + 2**37)]
