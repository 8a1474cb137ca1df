"""``pl.cast`` in every rounding mode the language allows, f32 <-> f16 / bf16 / i32 / i16, on the emulator.

The reference rounds with the textbook definitions, computed from the two representable neighbours
of each exact value (found with ``np.nextafter`` in the target type): RINT / NONE nearest-even, ROUND
nearest with ties away from zero, FLOOR, CEIL, TRUNC, ODD = the neighbour with an odd last bit
(integers: the odd one of floor/ceil). Integer results saturate to the target range.
"""

import ml_dtypes
import numpy as np
import pytest
from conftest import dsl_program, errors, needs_emulator

from pypto.runtime import run

pytestmark = needs_emulator
BF16 = np.dtype(ml_dtypes.bfloat16)
NP = {"FP32": np.dtype(np.float32), "FP16": np.dtype(np.float16), "BF16": BF16, "INT32": np.dtype(np.int32),
      "INT16": np.dtype(np.int16)}
MODES = ["none", "rint", "round", "floor", "ceil", "trunc", "odd"]
SHAPE = (16, 64)


def _odd_bits(y: np.ndarray) -> np.ndarray:
    u = {2: np.uint16, 4: np.uint32}[y.dtype.itemsize]
    return (y.view(u) & 1) == 1


def round_to_float(x: np.ndarray, dt: np.dtype, mode: str) -> np.ndarray:
    """Exact values ``x`` (float64) rounded to float type ``dt``."""
    near = x.astype(dt)  # nearest, ties to even
    nd = near.astype(np.float64)
    inf = np.array(np.inf, dt)
    lo = np.where(nd > x, np.nextafter(near, -inf), near)
    hi = np.where(nd < x, np.nextafter(near, inf), near)
    lod, hid = lo.astype(np.float64), hi.astype(np.float64)
    exact = lod == x
    if mode in ("none", "rint"):
        return near
    if mode == "floor":
        return lo
    if mode == "ceil":
        return hi
    if mode == "trunc":
        return np.where(x >= 0, lo, hi)
    if mode == "round":
        tie = (x - lod) == (hid - x)
        away = np.where(x >= 0, hi, lo)
        return np.where(exact, lo, np.where(tie, away, near))
    if mode == "odd":
        return np.where(exact, lo, np.where(_odd_bits(lo), lo, hi))
    raise AssertionError(mode)


def round_to_int(x: np.ndarray, dt: np.dtype, mode: str) -> np.ndarray:
    fl, ce = np.floor(x), np.ceil(x)
    r = {
        "none": np.trunc(x), "trunc": np.trunc(x), "rint": np.rint(x), "floor": fl, "ceil": ce,
        "round": np.where(x - fl == 0.5, np.where(x >= 0, ce, fl), np.rint(x)),
        "odd": np.where(fl == x, x, np.where(fl % 2 != 0, fl, ce)),
    }[mode]
    info = np.iinfo(dt)
    return np.clip(r, info.min, info.max).astype(dt)


def f32_sources(target: str) -> np.ndarray:
    """f32 data with exact ties and inexact values of both signs for ``target``."""
    rng = np.random.default_rng(["FP16", "BF16", "INT32", "INT16"].index(target))
    n = SHAPE[0] * SHAPE[1]
    if target in ("INT32", "INT16"):
        halves = rng.integers(-400, 400, n // 2) / 2.0  # ties at .5
        frac = rng.uniform(-300, 300, n // 2)
        vals = np.concatenate([halves, frac])
        if target == "INT16":
            vals[:8] = [40000.0, -40000.5, 32767.4, -32768.6, 1e9, -1e9, 32766.5, -32767.5]  # saturation
        return vals.astype(np.float32).reshape(SHAPE)
    dt = NP[target]
    base = rng.standard_normal(n // 2).astype(dt)
    nxt = np.nextafter(base, np.array(np.inf, dt))
    ties = ((base.astype(np.float64) + nxt.astype(np.float64)) / 2).astype(np.float32)  # exact in f32
    inexact = rng.standard_normal(n // 2).astype(np.float32) * np.float32(3.0)
    return np.concatenate([ties, inexact]).reshape(SHAPE)


def _run_cast(x: np.ndarray, src: str, dst: str, mode: str) -> np.ndarray:
    body = f"""
t = pl.load(a, [0, 0], [{SHAPE[0]}, {SHAPE[1]}])
r = pl.cast(t, pl.{dst}, mode="{mode}")
"""
    prog = dsl_program(body, {"a": (SHAPE, src)}, (SHAPE, dst))
    r = run(prog, x)
    assert not errors(r), errors(r)
    return r.outputs[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dst", ["FP16", "BF16", "INT32", "INT16"])
def test_cast_from_fp32(dst, mode):
    x = f32_sources(dst)
    got = _run_cast(x, "FP32", dst, mode)
    xd = x.astype(np.float64)
    want = round_to_float(xd, NP[dst], mode) if dst in ("FP16", "BF16") else round_to_int(xd, NP[dst], mode)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint16 if got.itemsize == 2 else np.uint32),
                                  want.view(np.uint16 if want.itemsize == 2 else np.uint32))


@pytest.mark.parametrize("mode", MODES)
def test_cast_int32_to_fp32(mode):
    """Large integers are not all representable in f32. int -> float is exact or nearest-even
    whatever the mode says (pto-text-format §4.9), so every mode gives the nearest-even result."""
    rng = np.random.default_rng(7)
    x = rng.integers(-(2**30), 2**30, SHAPE, dtype=np.int64)
    x.flat[:64] = (rng.integers(2**24, 2**25, 64) | 1) * rng.choice([-1, 1], 64)  # odd: ties between f32s
    x = x.astype(np.int32)
    got = _run_cast(x, "INT32", "FP32", mode)
    want = round_to_float(x.astype(np.float64), NP["FP32"], "rint")
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("src", ["FP16", "BF16", "INT16"])
def test_cast_to_fp32_is_exact(src):
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(SHAPE) * 100).astype(NP[src]) if src != "INT16" else \
        rng.integers(-32768, 32767, SHAPE).astype(np.int16)
    got = _run_cast(x, src, "FP32", "round")
    np.testing.assert_array_equal(got, x.astype(np.float32))


def test_reference_rounding_examples():
    """The reference itself, on hand-checked values (so the comparisons above check something)."""
    x = np.array([2.5, -2.5, 3.5, 2.2, -2.7])
    assert round_to_int(x, np.dtype(np.int32), "round").tolist() == [3, -3, 4, 2, -3]
    assert round_to_int(x, np.dtype(np.int32), "rint").tolist() == [2, -2, 4, 2, -3]
    assert round_to_int(x, np.dtype(np.int32), "odd").tolist() == [3, -3, 3, 3, -3]
    assert round_to_int(x, np.dtype(np.int32), "floor").tolist() == [2, -3, 3, 2, -3]
    one_third_ulp = 1 + 2.0**-10 / 3  # f16 has 10 fraction bits
    assert round_to_float(np.array([one_third_ulp]), np.dtype(np.float16), "ceil")[0] == 1 + 2.0**-10
    assert round_to_float(np.array([one_third_ulp]), np.dtype(np.float16), "odd")[0] == 1 + 2.0**-10
    assert round_to_float(np.array([1 + 2.0**-11]), np.dtype(np.float16), "round")[0] == 1 + 2.0**-10
    assert round_to_float(np.array([1 + 2.0**-11]), np.dtype(np.float16), "rint")[0] == 1.0
