"""Property tests: reductions, expands, matmul, tcvt, compare/select, gather and friends."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoisa.dtypes import is_float, itemsize, np_dtype
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.semantics import format_tile
from pyptoemu.isa.semantics.common import convert

from .helpers import F64, FLOATS, INTS, assert_close, legal, out_tile, sem, shapes, tile, values

SETTINGS = settings(derandomize=True, deadline=None, max_examples=50)


def _as64(a: Arg) -> np.ndarray:
    return a.valid.astype(F64) if is_float(a.dtype_name) else a.valid.astype(np.int64)


REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "argmax": np.argmax, "argmin": np.argmin}


@pytest.mark.parametrize("op", ["trowsum", "trowmax", "trowmin", "trowprod", "trowargmax", "trowargmin",
                                "tcolsum", "tcolmax", "tcolmin", "tcolprod", "tcolargmax", "tcolargmin"])
@SETTINGS
@given(data=st.data())
def test_reduce(op: str, data: st.DataObject) -> None:
    is_row = op.startswith("trow")
    kind = op[4:]
    dtype = data.draw(st.sampled_from(legal(op, FLOATS + ("i16", "i32"))))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lo, hi = (0.5, 1.5) if kind == "prod" and is_float(dtype) else (-10, 10)
    if kind == "prod" and not is_float(dtype):
        lo, hi = -3, 3
    src = tile(rng, dtype, rows, cols, vr, vc, lo=lo, hi=hi)
    dst_dt = "i32" if "arg" in kind else dtype
    dst = out_tile(dst_dt, rows, 1, vr, 1) if is_row else out_tile(dst_dt, 1, cols, 1, vc)
    ins = [src] + ([tile(rng, dtype, rows, cols, rows, cols)] if data.draw(st.booleans()) else [])
    (res,) = sem(op)(ins, [dst], {})
    x = _as64(src)
    expected = REDUCE[kind](x, axis=1 if is_row else 0)
    expected = expected.reshape(-1, 1) if is_row else expected.reshape(1, -1)
    assert res.shape == ((vr, 1) if is_row else (1, vc))
    scale = np.sum(np.abs(x), axis=1 if is_row else 0).reshape(expected.shape) if kind == "sum" else 1e-30
    if kind == "prod":
        scale = np.abs(expected) * x.shape[1 if is_row else 0]
    assert_close(res, expected, dst_dt, scale)


EXPAND = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
          "min": np.minimum, "expdif": lambda a, b: np.exp(a - b)}


EXPAND_OPS = ["trowexpandadd", "trowexpandsub", "trowexpandmul", "trowexpanddiv", "trowexpandmax",
              "trowexpandmin", "trowexpandexpdif", "tcolexpandadd", "tcolexpandsub", "tcolexpandmul",
              "tcolexpanddiv", "tcolexpandmax", "tcolexpandmin", "tcolexpandexpdif"]


@pytest.mark.parametrize("op", EXPAND_OPS)
@SETTINGS
@given(data=st.data())
def test_expand_binary(op: str, data: st.DataObject) -> None:
    axis, kind = op[1:4], op[len("trowexpand"):]
    wanted = FLOATS if kind in ("div", "expdif") else FLOATS + ("i16", "i32")
    dtype = data.draw(st.sampled_from(legal(op, wanted)))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lo, hi = (-2, 2) if kind == "expdif" else (-10, 10)
    full = tile(rng, dtype, rows, cols, vr, vc, lo=lo, hi=hi)
    period = 32 // itemsize(dtype)
    mode = data.draw(st.sampled_from([1, 2])) if axis == "row" else 1
    if axis == "row" and mode == 1:
        b = tile(rng, dtype, rows, 1, vr, 1, lo=lo, hi=hi, nonzero=kind == "div")
        bb = np.broadcast_to(b.value[:vr, :1].astype(F64), (vr, vc))
    elif axis == "row":
        b = tile(rng, dtype, rows, period, vr, period, lo=lo, hi=hi, nonzero=kind == "div")
        bb = b.value[:vr, np.arange(vc) % period].astype(F64)
    else:
        b = tile(rng, dtype, 1, cols, 1, vc, lo=lo, hi=hi, nonzero=kind == "div")
        bb = np.broadcast_to(b.value[:1, :vc].astype(F64), (vr, vc))
    swap = data.draw(st.booleans()) and kind not in ("expdif",) and (b.vrow, b.vcol) != (vr, vc)
    ins = [b, full] if swap else [full, b]
    (res,) = sem(op)(ins, [out_tile(dtype, rows, cols, vr, vc)], {})
    x = full.valid.astype(F64)
    with np.errstate(all="ignore"):
        expected = EXPAND[kind](bb, x) if swap else EXPAND[kind](x, bb)
    if not is_float(dtype):
        expected = expected.astype(np.int64)
    assert_close(res, expected, dtype, np.abs(x) + np.abs(bb))


@pytest.mark.parametrize("op", ["trowexpand", "tcolexpand"])
@SETTINGS
@given(data=st.data())
def test_expand_plain(op: str, data: st.DataObject) -> None:
    axis = op[1:4]
    dtype = data.draw(st.sampled_from(FLOATS + INTS))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, dtype, rows, 1, vr, 1) if axis == "row" else tile(rng, dtype, 1, cols, 1, vc)
    (res,) = sem(op)([src], [out_tile(dtype, rows, cols, vr, vc)], {})
    expected = np.broadcast_to(src.value[:vr, :1] if axis == "row" else src.value[:1, :vc], (vr, vc))
    np.testing.assert_array_equal(res, expected)


TRIPLES = [("f32", "f16"), ("f32", "bf16"), ("f32", "f32"), ("i32", "i8")]


@pytest.mark.parametrize("variant", ["tmatmul", "tmatmul.acc", "tmatmul.bias", "tgemv", "tgemv.acc", "tgemv.bias"])
@SETTINGS
@given(data=st.data())
def test_matmul(variant: str, data: st.DataObject) -> None:
    acc_dt, ab_dt = data.draw(st.sampled_from(TRIPLES))
    m = 1 if variant.startswith("tgemv") else data.draw(st.integers(1, 20))
    k, n = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 20))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    rows_a, cols_b = m + data.draw(st.integers(0, 3)), n + data.draw(st.integers(0, 3))
    kk = k + data.draw(st.integers(0, 3))
    lim = 100 if ab_dt == "i8" else 2
    a = tile(rng, ab_dt, rows_a, kk, m, k, lo=-lim, hi=lim, loc="left")
    b = tile(rng, ab_dt, kk, cols_b, k, n, lo=-lim, hi=lim, loc="right")
    c = out_tile(acc_dt, rows_a, cols_b, rows_a, cols_b, loc="acc")
    expected = a.valid.astype(F64) @ b.valid.astype(F64)
    if variant.endswith(".acc"):
        c0 = tile(rng, acc_dt, rows_a, cols_b, rows_a, cols_b, loc="acc")
        ins = [c0, a, b]
        expected = expected + c0.value[:m, :n].astype(F64)
    elif variant.endswith(".bias"):
        bias = tile(rng, acc_dt, 1, cols_b, 1, cols_b, loc="bias")
        ins = [a, b, bias]
        expected = expected + bias.value[:1, :n].astype(F64)
    else:
        ins = [a, b]
    (res,) = sem(variant)(ins, [c], {})
    assert res.shape == (m, n) and res.dtype == np_dtype(acc_dt)
    if acc_dt == "i32":
        np.testing.assert_array_equal(res, expected.astype(np.int64).astype(np.int32))
    else:
        scale = np.abs(a.valid.astype(F64)) @ np.abs(b.valid.astype(F64)) + 1e-30
        assert_close(res, expected, "f32", scale * max(1, k / 8))


def test_matmul_i8_accumulates_in_i32() -> None:
    a = Arg.tile(np.full((1, 32), 127), "i8", loc="left")
    b = Arg.tile(np.full((32, 16), 127), "i8", loc="right")
    (res,) = sem("tmatmul")([a, b], [out_tile("i32", 1, 16, 1, 16, loc="acc")], {})
    assert (res == 127 * 127 * 32).all()


# ------------------------------------------------------------------------------------------- tcvt


def _table(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """All finite values of a 16-bit float type, sorted, with their bit patterns (+0 only)."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    with np.errstate(invalid="ignore"):
        vals = bits.view(np_dtype(dtype)).astype(F64)
    keep = np.isfinite(vals) & ~((vals == 0) & (bits != 0))
    order = np.argsort(vals[keep], kind="stable")
    return vals[keep][order], bits[keep][order]


TABLES = {d: _table(d) for d in ("f16", "bf16")}


def ref_float_round(x: np.ndarray, dtype: str, mode: str) -> np.ndarray:
    vals, bits = TABLES[dtype]
    out = np.empty(x.shape, F64)
    for idx, v in np.ndenumerate(x):
        hi_i = int(np.searchsorted(vals, v, side="left"))
        if vals[hi_i] == v:
            out[idx] = v
            continue
        lo, hi = vals[hi_i - 1], vals[hi_i]
        lo_odd = bool(bits[hi_i - 1] & 1)  # the LSB of the bit pattern = oddness of the magnitude
        dlo, dhi = v - lo, hi - v
        if mode == "FLOOR":
            r = lo
        elif mode == "CEIL":
            r = hi
        elif mode == "TRUNC":
            r = lo if v > 0 else hi
        elif mode in ("RINT", "CAST_RINT", "NONE"):
            r = lo if dlo < dhi else hi if dhi < dlo else (lo if not lo_odd else hi)
        elif mode == "ROUND":
            r = lo if dlo < dhi else hi if dhi < dlo else (hi if v > 0 else lo)
        else:  # ODD
            r = lo if lo_odd else hi
        out[idx] = r
    return out


def ref_int_round(x: np.ndarray, mode: str) -> np.ndarray:
    if mode in ("RINT", "CAST_RINT"):
        return np.rint(x)
    if mode == "ROUND":
        return np.trunc(x + np.copysign(0.5, x))
    if mode == "FLOOR":
        return np.floor(x)
    if mode == "CEIL":
        return np.ceil(x)
    if mode in ("TRUNC", "NONE"):
        return np.trunc(x)
    fl = np.floor(x)
    return np.where(x == fl, x, np.where(np.mod(fl, 2) == 0, fl + 1, fl))


MODES = ["RINT", "CAST_RINT", "ROUND", "FLOOR", "CEIL", "TRUNC", "ODD", "NONE"]
PAIRS = [("f32", "f16"), ("f32", "bf16"), ("f32", "i32"), ("f32", "i16"), ("f16", "f32"), ("f16", "i32"),
         ("f16", "i16"), ("f16", "i8"), ("f16", "ui8"), ("bf16", "f32"), ("bf16", "i32"), ("i16", "f16"),
         ("i16", "f32"), ("i32", "f32"), ("i32", "i16"), ("i32", "f16"), ("i8", "f16"), ("ui8", "f16"),
         ("f32", "i8"), ("i32", "i8")]


@SETTINGS
@given(data=st.data())
def test_cvt(data: st.DataObject) -> None:
    src_dt, dst_dt = data.draw(st.sampled_from(PAIRS))
    mode = data.draw(st.sampled_from(MODES))
    sat = data.draw(st.sampled_from([None, "ON", "OFF"]))
    rows, cols, vr, vc = data.draw(shapes(src_dt))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    span = 300.0 if not is_float(dst_dt) else 1000.0
    x = values(rng, src_dt, (rows, cols), -span, span)
    if is_float(src_dt) and dst_dt in TABLES:
        # exact midpoints between neighbours of the destination type: ties for every mode
        vals = TABLES[dst_dt][0]
        pick = rng.integers(len(vals) // 4, 3 * len(vals) // 4, size=(rows, cols))
        mids = ((vals[pick] + vals[pick + 1]) / 2)
        mids = np.where(np.abs(mids) < 1e4, mids, 1.5)
        x = np.where(rng.random((rows, cols)) < 0.5, mids, x.astype(F64)).astype(np_dtype(src_dt))
    elif is_float(src_dt):
        halves = (rng.integers(-200, 200, size=(rows, cols)) + 0.5).astype(np_dtype(src_dt))
        x = np.where(rng.random((rows, cols)) < 0.5, halves, x)
    src = Arg.tile(x, src_dt, vr, vc)
    attrs: dict = {"rmode": mode}
    if sat:
        attrs["sat_mode"] = sat
    (res,) = sem("tcvt")([src], [out_tile(dst_dt, rows, cols, rows, cols)], attrs)
    xv = x[:vr, :vc].astype(F64)
    assert res.shape == (vr, vc) and res.dtype == np_dtype(dst_dt)
    if is_float(dst_dt):
        if dst_dt in TABLES and itemsize(src_dt) > itemsize(dst_dt) or (not is_float(src_dt) and dst_dt in TABLES):
            expected = ref_float_round(xv, dst_dt, mode)
        else:
            expected = xv.astype(np_dtype(dst_dt)).astype(F64)
        np.testing.assert_array_equal(res.astype(F64), expected)
    else:
        r = ref_int_round(xv, mode) if is_float(src_dt) else xv
        info = np.iinfo(np_dtype(dst_dt))
        expected = r.astype(np.int64).astype(np_dtype(dst_dt)) if sat == "OFF" else np.clip(r, info.min, info.max)
        np.testing.assert_array_equal(res.astype(np.int64), np.asarray(expected).astype(np.int64))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pair", [("f32", "f16"), ("f32", "bf16"), ("i32", "f16"), ("f16", "bf16")])
@settings(derandomize=True, deadline=None, max_examples=20)
@given(data=st.data())
def test_cvt_float_narrowing_modes(pair: tuple[str, str], mode: str, data: st.DataObject) -> None:
    """Every rounding mode on narrowing float conversions, half of the inputs exact ties."""
    src_dt, dst_dt = pair
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    vals = TABLES[dst_dt][0]
    pick = rng.integers(len(vals) // 4, 3 * len(vals) // 4, size=(4, 16))
    lo_v, hi_v = vals[pick], vals[pick + 1]
    mids = (lo_v + hi_v) / 2
    inside = lo_v + (hi_v - lo_v) * rng.random((4, 16))
    x = np.where(rng.random((4, 16)) < 0.5, mids, inside)
    if src_dt == "i32":
        x = np.round(x * 0) + rng.integers(-70000, 70000, size=(4, 16))
    x = x.astype(np_dtype(src_dt))
    xv = x.astype(F64)
    ok = np.abs(xv) < float(ml_dtypes.finfo(np_dtype(dst_dt)).max) / 2
    x = np.where(ok, x, np.zeros((), x.dtype))
    (res,) = sem("tcvt")([Arg.tile(x, src_dt)], [out_tile(dst_dt, 4, 16, 4, 16)], {"rmode": mode})
    # int -> float is exact or nearest-even whatever rmode says (§4.9); float narrowing honours it
    applied = mode if is_float(src_dt) else "RINT"
    np.testing.assert_array_equal(res.astype(F64), ref_float_round(x.astype(F64), dst_dt, applied))


def test_cvt_known_values() -> None:
    x = np.array([[2.5, -2.5, 3.5, 0.1, -0.1, 1e6, -1e6, np.nan]], np.float32)
    src = Arg.tile(x, "f32")
    def run(dst: str, mode: str, sat: str | None = None) -> list:
        attrs = {"rmode": mode} | ({"sat_mode": sat} if sat else {})
        return sem("tcvt")([src], [out_tile(dst, 1, 8, 1, 8)], attrs)[0].tolist()[0]
    assert run("i16", "RINT")[:5] == [2, -2, 4, 0, 0]
    assert run("i16", "ROUND")[:5] == [3, -3, 4, 0, 0]
    assert run("i16", "FLOOR")[:5] == [2, -3, 3, 0, -1]
    assert run("i16", "CEIL")[:5] == [3, -2, 4, 1, 0]
    assert run("i16", "TRUNC")[:5] == [2, -2, 3, 0, 0]
    assert run("i16", "ODD")[:5] == [3, -3, 3, 1, -1]
    assert run("i16", "RINT")[5:] == [32767, -32768, 0]
    assert run("i16", "RINT", "OFF")[5:7] == [int(np.int64(1_000_000).astype(np.int16)), int(np.int64(-1_000_000).astype(np.int16))]
    assert convert(np.array([1 + 2**-9], np.float32), "f32", "bf16", "CEIL")[0] == ml_dtypes.bfloat16(1 + 2**-7)
    tie = np.array([1 + 2**-11, -(1 + 2**-11)], np.float32)  # halfway between 1 and 1 + 2**-10 in f16
    assert convert(tie, "f32", "f16", "ROUND").tolist() == [1 + 2**-10, -(1 + 2**-10)]
    assert convert(tie, "f32", "f16", "RINT").tolist() == [1.0, -1.0]
    assert convert(tie, "f32", "f16", "ODD").tolist() == [1 + 2**-10, -(1 + 2**-10)]


# -------------------------------------------------------------------------------- compare / select

CMPS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def _bits(mask: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Read predicate bits with plain loops (independent of the implementation)."""
    raw = mask.view(np.uint8) if mask.dtype.itemsize == 1 else mask.astype("<u4").view(np.uint8)
    out = np.zeros((rows, cols), bool)
    for i in range(rows):
        for j in range(cols):
            out[i, j] = (int(raw[i, j // 8]) >> (j % 8)) & 1
    return out


@pytest.mark.parametrize("op", ["tcmp", "tcmps"])
@SETTINGS
@given(data=st.data())
def test_compare(op: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(["f32", "f16", "i32"]))
    mode = data.draw(st.sampled_from(sorted(CMPS)))
    mask_dt = data.draw(st.sampled_from(["ui8", "ui32"]))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = tile(rng, dtype, rows, cols, vr, vc, lo=-3, hi=3)
    if op == "tcmp":
        b = tile(rng, dtype, rows, cols, vr, vc, lo=-3, hi=3)
        other = b.valid.astype(F64)
    else:
        s = int(data.draw(st.integers(-3, 3)))
        b = Arg.scalar(s, dtype)
        other = np.full((vr, vc), float(s))
    mcols = max(1, -(-cols // (8 * itemsize(mask_dt)))) + data.draw(st.integers(0, 2))
    m = Arg.tile(np.full((rows, mcols), 0xFF), mask_dt)
    (res,) = sem(op)([a, b], [m], {"cmpMode": mode})
    assert res.shape == (vr, mcols) and res.dtype == np_dtype(mask_dt)
    width = mcols * itemsize(mask_dt) * 8
    bits = _bits(res, vr, width)
    expected = np.zeros((vr, width), bool)
    expected[:, :vc] = CMPS[mode](a.valid.astype(F64), other)
    np.testing.assert_array_equal(bits, expected)


@pytest.mark.parametrize("op", ["tsel", "tsels"])
@SETTINGS
@given(data=st.data())
def test_select(op: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(["f32", "f16", "i16", "i32", "bf16"]))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mcols = -(-cols // 8)
    m = Arg.tile(rng.integers(0, 256, size=(rows, mcols)), "ui8")
    a = tile(rng, dtype, rows, cols, vr, vc)
    pred = _bits(m.value, vr, vc)
    tmp = Arg.tile(np.zeros((1, 8)), "ui32")
    if op == "tsel":
        b = tile(rng, dtype, rows, cols, vr, vc)
        ins = [m, a, b, tmp]
        other = b.valid
    else:
        s = 2.0 if is_float(dtype) else 2
        ins = [m, a, tmp, Arg.scalar(s, dtype)]
        other = np.full((vr, vc), s).astype(np_dtype(dtype))
    (res,) = sem(op)(ins, [out_tile(dtype, rows, cols, vr, vc)], {})
    np.testing.assert_array_equal(res, np.where(pred, a.valid, other))


# ----------------------------------------------------------------------------- gather and friends


@SETTINGS
@given(data=st.data())
def test_gather_index(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(["f32", "f16", "i32", "i16"]))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, dtype, rows, cols, rows, cols)
    idx = Arg.tile(rng.integers(-3, rows * cols + 3, size=(rows, cols)), "i32", vr, vc)
    (res,) = sem("tgather")([src, idx], [out_tile(dtype, rows, cols, vr, vc)], {})
    expected = np.zeros((vr, vc), np_dtype(dtype))
    for i in range(vr):
        for j in range(vc):
            k = int(idx.value[i, j])
            if 0 <= k < rows * cols:
                expected[i, j] = src.value[k // cols, k % cols]
    np.testing.assert_array_equal(res, expected)


def test_gather_mask_and_compare_forms() -> None:
    src = Arg.tile(np.arange(16, dtype=np.float32).reshape(2, 8), "f32")
    (res,) = sem("tgather")([src], [out_tile("f32", 2, 8, 2, 4)], {"maskPattern": "P0101"})
    np.testing.assert_array_equal(res, [[0, 2, 4, 6], [8, 10, 12, 14]])  # row i kept -> row i of d
    cnt = out_tile("i32", 2, 1, 2, 1)
    res, counts = sem("tgather")([src, Arg.scalar(5.0, "f32")], [out_tile("i32", 2, 8, 2, 8), cnt],
                                      {"cmpMode": "gt", "offset": 100})
    assert res[0, :2].tolist() == [106, 107] and res[1].tolist() == list(range(100, 108))
    assert counts.ravel().tolist() == [2, 8]


@SETTINGS
@given(data=st.data())
def test_concat(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(FLOATS + INTS))
    rows, cols, vr, vca = data.draw(shapes(dtype))
    vcb = data.draw(st.integers(1, cols))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, b = tile(rng, dtype, rows, cols, vr, vca), tile(rng, dtype, rows, cols, vr, vcb)
    (res,) = sem("tconcat")([a, b], [out_tile(dtype, rows, 2 * cols, vr, vca + vcb)], {})
    np.testing.assert_array_equal(res, np.hstack([a.valid, b.value[:vr, :vcb]]))


@SETTINGS
@given(data=st.data())
def test_iota(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(["i16", "i32"]))
    _, cols, _, vc = data.draw(shapes(dtype))
    start = data.draw(st.integers(-1000, 1000))
    desc = data.draw(st.booleans())
    (res,) = sem("tci")([Arg.scalar(start, dtype)], [out_tile(dtype, 1, cols, 1, vc)], {"descending": desc})
    expected = [start - j if desc else start + j for j in range(vc)]
    assert res.tolist() == [expected]


@SETTINGS
@given(data=st.data())
def test_triangle(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(["f32", "f16", "i32"]))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    diag = data.draw(st.integers(-4, 4))
    upper = data.draw(st.integers(0, 1))
    (res,) = sem("ttri")([Arg.scalar(diag, "i32")], [out_tile(dtype, rows, cols, vr, vc)],
                                   {"upperOrLower": upper})
    for i in range(vr):
        for j in range(vc):
            want = (0 if j < i + diag else 1) if upper else (1 if j <= i + diag else 0)
            assert res[i, j] == want


@SETTINGS
@given(data=st.data())
def test_quant_dequant(data: st.DataObject) -> None:
    rows, cols, vr, vc = data.draw(shapes("f32"))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, "f32", rows, cols, vr, vc, lo=-50, hi=50)
    fp = tile(rng, "f32", rows, 1, rows, 1, lo=0.5, hi=4)
    asym = data.draw(st.booleans())
    ins = [src, fp]
    y = src.valid.astype(np.float32) * fp.value[:vr, :1].astype(np.float32)
    if asym:
        off = tile(rng, "f32", rows, 1, rows, 1, lo=0, hi=100)
        ins.append(off)
        y = y + off.value[:vr, :1]
    dst_dt = "ui8" if asym else "i8"
    (q,) = sem("tquant")(ins, [out_tile(dst_dt, rows, cols, vr, vc)], {})
    info = np.iinfo(np_dtype(dst_dt))
    np.testing.assert_array_equal(q.astype(np.int64), np.clip(np.rint(y), info.min, info.max).astype(np.int64))
    s8 = Arg.tile(rng.integers(-128, 128, size=(rows, cols)), "i8", vr, vc)
    scale, offset = tile(rng, "f32", rows, 1, rows, 1), tile(rng, "f32", rows, 1, rows, 1)
    (d,) = sem("tdequant")([s8, scale, offset], [out_tile("f32", rows, cols, vr, vc)], {})
    expected = (s8.valid.astype(F64) - offset.value[:vr, :1]) * scale.value[:vr, :1]
    assert_close(d, expected, "f32", np.abs(expected) + 1e-30)


def test_format_tile_marks_invalid_cells() -> None:
    text = format_tile(Arg.tile(np.arange(16, dtype=np.float32).reshape(2, 8), "f32", 1, 4))
    lines = text.splitlines()
    assert "valid 1x4" in lines[0] and "outside" in lines[0]
    assert lines[1].startswith("  0.00 ") and "  4.00*" in lines[1] and "  8.00*" in lines[2]
    itext = format_tile(Arg.tile(np.arange(8).reshape(1, 8), "i32"))
    assert itext.splitlines()[1].split() == [str(i) for i in range(8)]
