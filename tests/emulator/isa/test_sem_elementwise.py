"""Property tests: elementwise, tile-scalar, unary and ternary semantics against NumPy float64/int64
references computed independently from the valid regions only."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoisa.dtypes import is_float, itemsize, np_dtype
from pyptoemu.isa.arg import Arg

from .helpers import F64, FLOATS, INTS, ISA, assert_close, legal, out_tile, sem, shapes, tile

SETTINGS = settings(derandomize=True, deadline=None, max_examples=50)


def _as64(arg: Arg) -> np.ndarray:
    v = arg.valid
    return v.astype(F64) if is_float(arg.dtype_name) else v.astype(np.int64)


BINARY = {
    "tadd": (lambda a, b: a + b, FLOATS + INTS, {}),
    "tsub": (lambda a, b: a - b, FLOATS + INTS, {}),
    "tmul": (lambda a, b: a * b, FLOATS + INTS, {}),
    "tdiv": (lambda a, b: a / b if a.dtype.kind == "f" else np.trunc(a / b).astype(np.int64), FLOATS + INTS,
             {"nonzero": True}),
    "tmax": (np.maximum, FLOATS + INTS, {}),
    "tmin": (np.minimum, FLOATS + INTS, {}),
    "tand": (np.bitwise_and, INTS, {}),
    "tor": (np.bitwise_or, INTS, {}),
    "txor": (np.bitwise_xor, INTS, {}),
    "tfmod": (np.fmod, FLOATS, {"nonzero": True}),
    "trem": (lambda a, b: a - np.floor(a / b) * b if a.dtype.kind == "f" else a - np.floor_divide(a, b) * b,
             FLOATS + INTS, {"nonzero": True}),
    "tprelu": (lambda a, s: np.where(a > 0, a, a * s), FLOATS, {}),
    "tshl": (lambda a, b: a << b, INTS, {"shift": True}),
    "tshr": (lambda a, b: a >> b, INTS, {"shift": True}),
}


@pytest.mark.parametrize("op", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary(op: str, data: st.DataObject) -> None:
    ref, wanted, opts = BINARY[op]
    dtype = data.draw(st.sampled_from(legal(op, wanted)))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = tile(rng, dtype, rows, cols, vr, vc)
    if opts.get("shift"):
        b = tile(rng, dtype, rows, cols, vr, vc, lo=0, hi=itemsize(dtype) * 8 - 1)
    else:
        b = tile(rng, dtype, rows, cols, vr, vc, nonzero=bool(opts.get("nonzero")))
    ins = [a, b] + ([tile(rng, dtype, rows, cols, vr, vc)] if len(ISA[op].ins) > 2 else [])
    (res,) = sem(op)(ins, [out_tile(dtype, rows, cols, vr, vc)], {})
    assert res.shape == (vr, vc)
    x, y = _as64(a), _as64(b)
    with np.errstate(all="ignore"):
        expected = ref(x, y)
    scale = np.abs(x) + np.abs(y) if op in ("tadd", "tsub") else 1e-30
    if op == "tmul" or op == "tprelu":
        scale = np.abs(x * y) + 1e-30
    assert_close(res, expected, dtype, scale)


SCALAR = {
    "tadds": (lambda t, s: t + s, FLOATS + INTS),
    "tsubs": (lambda t, s: t - s, FLOATS + INTS),
    "tmuls": (lambda t, s: t * s, FLOATS + INTS),
    "tmaxs": (np.maximum, FLOATS + INTS),
    "tmins": (np.minimum, FLOATS + INTS),
    "tands": (np.bitwise_and, INTS),
    "tors": (np.bitwise_or, INTS),
    "txors": (np.bitwise_xor, INTS),
    "tshls": (lambda t, s: t << s, INTS),
    "tshrs": (lambda t, s: t >> s, INTS),
    "tfmods": (np.fmod, FLOATS),
    "trems": (lambda t, s: t - np.floor(t / s) * s if t.dtype.kind == "f" else t - np.floor_divide(t, s) * s,
              FLOATS + INTS),
    "tlrelu": (lambda t, s: np.where(t > 0, t, t * s), FLOATS),
    "tdivs": (lambda t, s: t / s if t.dtype.kind == "f" else np.trunc(t / s).astype(np.int64), FLOATS + INTS),
}


def _scalar_value(data: st.DataObject, dtype: str, op: str) -> int | float:
    if op in ("tshls", "tshrs"):
        return data.draw(st.integers(0, itemsize(dtype) * 8 - 1))
    if is_float(dtype):
        v = data.draw(st.floats(-8, 8, allow_nan=False))
        return v if abs(v) > 0.25 else 1.5
    v = data.draw(st.integers(-100, 100))
    return v if v != 0 else 3


@pytest.mark.parametrize("op", sorted(SCALAR))
@SETTINGS
@given(data=st.data())
def test_tile_scalar(op: str, data: st.DataObject) -> None:
    ref, wanted = SCALAR[op]
    dtype = data.draw(st.sampled_from(legal(op, wanted)))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    t = tile(rng, dtype, rows, cols, vr, vc, nonzero=op == "tdivs")
    s = _scalar_value(data, dtype, op)
    sarg = Arg.scalar(s, "f32" if is_float(dtype) else "i32")
    scalar_first = op == "tdivs" and data.draw(st.booleans())
    ins = [sarg, t] if scalar_first else [t, sarg]
    if len(ISA[op].ins) > 2:
        ins.append(tile(rng, dtype, rows, cols, vr, vc))
    (res,) = sem(op)(ins, [out_tile(dtype, rows, cols, vr, vc)], {})
    x = _as64(t)
    # the scalar is converted to the tile dtype first
    s64 = np.array(s).astype(np_dtype(dtype)).astype(F64 if is_float(dtype) else np.int64)
    with np.errstate(all="ignore"):
        expected = ref(s64 + 0 * x, x) if scalar_first else ref(x, s64 + 0 * x)
    assert_close(res, expected, dtype, np.abs(x) + np.abs(s64) + 1e-30)


UNARY = {
    "texp": (np.exp, -5, 5),
    "tlog": (np.log, 0.1, 20),
    "tsqrt": (np.sqrt, 0, 50),
    "trsqrt": (lambda x: 1 / np.sqrt(x), 0.1, 50),
    "trecip": (lambda x: 1 / x, 0.5, 20),
    "tabs": (np.abs, -10, 10),
    "tneg": (np.negative, -100, 100),
    "trelu": (lambda x: np.maximum(x, 0), -100, 100),
    "tnot": (np.invert, -100, 100),
}


@pytest.mark.parametrize("op", sorted(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary(op: str, data: st.DataObject) -> None:
    ref, lo, hi = UNARY[op]
    dtype = data.draw(st.sampled_from(legal(op, FLOATS + INTS)))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    sign = data.draw(st.sampled_from([1, -1])) if op == "trecip" else 1
    a = tile(rng, dtype, rows, cols, vr, vc, lo=lo, hi=hi)
    if sign < 0:
        a = Arg.tile(-a.value, dtype, vr, vc)
    ins = [a] + ([tile(rng, dtype, rows, cols, vr, vc)] if op == "trsqrt" and data.draw(st.booleans()) else [])
    (res,) = sem(op)(ins, [out_tile(dtype, rows, cols, vr, vc)], {})
    x = _as64(a)
    assert_close(res, ref(x), dtype, 1e-30)


TERNARY = {
    "taddc": lambda a, b, c: a + b + c,
    "tsubc": lambda a, b, c: a - b + c,
}


@pytest.mark.parametrize("op", sorted(TERNARY))
@SETTINGS
@given(data=st.data())
def test_ternary(op: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(legal(op, FLOATS + INTS)))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    ts = [tile(rng, dtype, rows, cols, vr, vc) for _ in range(3)]
    (res,) = sem(op)(ts, [out_tile(dtype, rows, cols, vr, vc)], {})
    xs = [_as64(t) for t in ts]
    assert_close(res, TERNARY[op](*xs), dtype, sum(np.abs(x) for x in xs))


@pytest.mark.parametrize("op", ["taddsc", "tsubsc"])
@SETTINGS
@given(data=st.data())
def test_scalar_between(op: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(legal(op, FLOATS + INTS)))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, b = tile(rng, dtype, rows, cols, vr, vc), tile(rng, dtype, rows, cols, vr, vc)
    s = _scalar_value(data, dtype, op)
    ins = [a, Arg.scalar(s, "f32" if is_float(dtype) else "i32"), b]
    (res,) = sem(op)(ins, [out_tile(dtype, rows, cols, vr, vc)], {})
    x, y = _as64(a), _as64(b)
    s64 = np.array(s).astype(np_dtype(dtype)).astype(x.dtype)
    expected = x + s64 + y if op == "taddsc" else x - s64 + y
    assert_close(res, expected, dtype, np.abs(x) + np.abs(y) + np.abs(s64))


@pytest.mark.parametrize("op", ["tpartadd", "tpartmax", "tpartmin", "tpartmul"])
@SETTINGS
@given(data=st.data())
def test_part(op: str, data: st.DataObject) -> None:
    fn = {"tpartadd": np.add, "tpartmax": np.maximum, "tpartmin": np.minimum, "tpartmul": np.multiply}[op]
    dtype = data.draw(st.sampled_from(legal(op, FLOATS + INTS)))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    avr, avc = data.draw(st.integers(1, vr)), data.draw(st.integers(1, vc))
    bvr, bvc = data.draw(st.integers(1, vr)), data.draw(st.integers(1, vc))
    a, b = tile(rng, dtype, rows, cols, avr, avc), tile(rng, dtype, rows, cols, bvr, bvc)
    d = tile(rng, dtype, rows, cols, vr, vc)
    (res,) = sem(op)([a, b], [d], {})
    expected = d.value[:vr, :vc].astype(F64 if is_float(dtype) else np.int64).copy()
    for i in range(vr):
        for j in range(vc):
            ina, inb = i < avr and j < avc, i < bvr and j < bvc
            av, bv = a.value[i, j], b.value[i, j]
            if ina and inb:
                expected[i, j] = fn(np.float64(av), np.float64(bv)) if is_float(dtype) else fn(int(av), int(bv))
            elif ina:
                expected[i, j] = av
            elif inb:
                expected[i, j] = bv
    assert_close(res, expected, dtype, 1e-30)


@SETTINGS
@given(data=st.data())
def test_axpy(data: st.DataObject) -> None:
    tdt, ddt = data.draw(st.sampled_from([("f32", "f32"), ("f16", "f16"), ("bf16", "bf16"), ("f16", "f32")]))
    rows, cols, vr, vc = data.draw(shapes(tdt))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    t, d = tile(rng, tdt, rows, cols, vr, vc), tile(rng, ddt, rows, cols, vr, vc)
    s = data.draw(st.floats(-4, 4, allow_nan=False))
    (res,) = sem("taxpy")([t, Arg.scalar(s, tdt)], [d], {})
    s_t = float(np.array(s).astype(np_dtype(tdt)))
    expected = d.valid.astype(F64) + t.valid.astype(F64) * s_t
    assert_close(res, expected, ddt, np.abs(d.valid.astype(F64)) + np.abs(t.valid.astype(F64) * s_t))


@SETTINGS
@given(data=st.data())
def test_expands_fill(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(legal("texpands", FLOATS + INTS)))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    s = data.draw(st.floats(-100, 100, allow_nan=False)) if is_float(dtype) else data.draw(st.integers(-100, 100))
    loc = data.draw(st.sampled_from(["vec", "mat"]))
    (res,) = sem("texpands")([Arg.scalar(s, "f32" if is_float(dtype) else "i32")],
                                      [out_tile(dtype, rows, cols, vr, vc, loc=loc)], {})
    assert res.shape == (vr, vc) and res.dtype == np_dtype(dtype)
    assert (res == np.array(s).astype(np_dtype(dtype))).all()
