"""Property tests: data movement semantics (tload, tstore, tmov, textract, tinsert, tfillpad*,
ttrans, tsetval)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptoisa.dtypes import is_float, is_unsigned, np_dtype
from pyptoemu.errors import BoundsError
from pyptoemu.isa.arg import Accumulate, Arg

from .helpers import F64, FLOATS, INTS, assert_close, out_tile, sem, shapes, tile, values

SETTINGS = settings(derandomize=True, deadline=None, max_examples=50)


def expected_pad(dtype: str, pad: int) -> float:
    """§5.5 table, written out independently."""
    if pad in (0, 1):
        return 0.0
    if is_float(dtype):
        return np.inf if pad == 2 else -np.inf
    info = np.iinfo(np_dtype(dtype))
    if pad == 2:
        return float(info.max)
    return 0.0 if is_unsigned(dtype) else float(info.min)


@pytest.mark.parametrize("op", ["tload", "tprefetch"])
@SETTINGS
@given(data=st.data())
def test_load_with_pad(op: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(FLOATS + INTS))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    pad = data.draw(st.integers(0, 3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    window = values(rng, dtype, (vr + data.draw(st.integers(0, 2)), vc + data.draw(st.integers(0, 2))))
    view = Arg.view(window, dtype)
    loc = data.draw(st.sampled_from(["vec", "mat"]))
    (res,) = sem(op)([view], [out_tile(dtype, rows, cols, vr, vc, pad=pad, loc=loc)], {})
    if pad == 0:
        assert res.shape == (vr, vc)
    else:
        assert res.shape == (rows, cols)
        outside = np.ones((rows, cols), bool)
        outside[:vr, :vc] = False
        assert (res[outside].astype(F64) == expected_pad(dtype, pad)).all()
    np.testing.assert_array_equal(res[:vr, :vc], window[:vr, :vc])
    assert res.dtype == np_dtype(dtype)


def test_load_window_too_small() -> None:
    with pytest.raises(BoundsError):
        sem("tload")([Arg.view(np.zeros((2, 8)), "f32")], [out_tile("f32", 4, 8, 4, 8)], {})


@SETTINGS
@given(data=st.data())
def test_store(data: st.DataObject) -> None:
    src_dt, dst_dt, loc = data.draw(st.sampled_from([
        ("f32", "f32", "vec"), ("f16", "f16", "vec"), ("i32", "i32", "vec"), ("bf16", "bf16", "mat"),
        ("f32", "f32", "acc"), ("f32", "f16", "acc"), ("f32", "bf16", "acc"), ("i32", "i32", "acc"),
    ]))
    rows, cols, vr, vc = data.draw(shapes(src_dt))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, src_dt, rows, cols, vr, vc, loc=loc)
    gm = Arg.view(values(rng, dst_dt, (vr, vc)), dst_dt)
    attrs: dict = {}
    relu = loc == "acc" and data.draw(st.booleans())
    atomic = data.draw(st.booleans())
    if relu:
        attrs["reluPreMode"] = "normal_relu"
    if atomic:
        attrs["atomicType"] = "atomic_add"
    (res,) = sem("tstore")([src], [gm], attrs)
    if atomic:  # an atomic add lands as a read-modify-write of GM at completion
        assert isinstance(res, Accumulate)
        res = res.combine(gm.value[: res.shape[0], : res.shape[1]])
    x = src.valid.astype(F64)
    if relu:
        x = np.maximum(x, 0)
    x = x.astype(np_dtype(dst_dt)).astype(F64)  # conversion to the GM dtype (nearest-even)
    expected = gm.value.astype(F64) + x if atomic else x
    assert res.shape == (vr, vc)
    assert_close(res, expected, dst_dt, np.abs(gm.value.astype(F64)) + np.abs(x))


@pytest.mark.parametrize("op", ["tmov", "tmov.fp"])
@SETTINGS
@given(data=st.data())
def test_move(op: str, data: st.DataObject) -> None:
    src_dt, dst_dt, sloc, dloc = data.draw(st.sampled_from([
        ("f16", "f16", "mat", "left"), ("bf16", "bf16", "mat", "right"), ("f32", "f32", "mat", "bias"),
        ("f32", "f16", "acc", "mat"), ("f32", "bf16", "acc", "vec"), ("f32", "f32", "vec", "vec"),
        ("i32", "i32", "acc", "vec"), ("i8", "i8", "mat", "left"),
    ]))
    rows, cols, vr, vc = data.draw(shapes(src_dt))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, src_dt, rows, cols, vr, vc, loc=sloc)
    relu = data.draw(st.booleans())
    attrs = {"reluPreMode": "normal_relu"} if relu else {}
    (res,) = sem(op)([src], [out_tile(dst_dt, rows, cols, rows, cols, loc=dloc)], attrs)
    x = src.valid.astype(F64)
    expected = x.astype(np_dtype(dst_dt)).astype(F64)
    if relu:
        expected = np.maximum(expected, 0)
    assert res.shape == (vr, vc)
    assert_close(res, expected, dst_dt, 1e-30)


@SETTINGS
@given(data=st.data())
def test_extract(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(["f16", "f32", "bf16", "i8", "i32"]))
    rows, cols, _, _ = data.draw(shapes(dtype, max_rows=8, max_blocks=4))
    drows, dcols = data.draw(st.integers(1, rows)), data.draw(st.integers(1, cols))
    r0, c0 = data.draw(st.integers(0, rows - drows)), data.draw(st.integers(0, cols - dcols))
    vr, vc = data.draw(st.integers(1, drows)), data.draw(st.integers(1, dcols))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, dtype, rows, cols, rows, cols, loc="mat")
    ins = [src, Arg.scalar(r0, "index"), Arg.scalar(c0, "index")]
    (res,) = sem("textract")(ins, [out_tile(dtype, drows, dcols, vr, vc, loc="left")], {})
    np.testing.assert_array_equal(res, src.value[r0 : r0 + vr, c0 : c0 + vc])


def test_extract_out_of_bounds() -> None:
    src = Arg.tile(np.zeros((16, 16)), "f16", loc="mat")
    with pytest.raises(BoundsError):
        sem("textract")([src, Arg.scalar(8, "index"), Arg.scalar(0, "index")],
                             [out_tile("f16", 16, 16, 16, 16, loc="left")], {})


@SETTINGS
@given(data=st.data())
def test_insert(data: st.DataObject) -> None:
    src_dt, dst_dt = data.draw(st.sampled_from([("f32", "f16"), ("f32", "f32"), ("f16", "f16"), ("i32", "i32")]))
    rows, cols, _, _ = data.draw(shapes(dst_dt, max_rows=8, max_blocks=3))
    vr, vc = data.draw(st.integers(1, rows)), data.draw(st.integers(1, cols))
    r0, c0 = data.draw(st.integers(0, rows - vr)), data.draw(st.integers(0, cols - vc))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, src_dt, vr, vc, vr, vc, loc="acc")
    dst = tile(rng, dst_dt, rows, cols, rows, cols, loc="mat")
    (res,) = sem("tinsert")([src, Arg.scalar(r0, "index"), Arg.scalar(c0, "index")], [dst], {})
    full = dst.value.copy()
    full[r0 : r0 + vr, c0 : c0 + vc] = src.value.astype(np_dtype(dst_dt))
    np.testing.assert_array_equal(res, full[: res.shape[0], : res.shape[1]])
    assert res.shape == (r0 + vr, c0 + vc)


@pytest.mark.parametrize("op", ["tfillpad", "tfillpad_expand", "tfillpad_inplace"])
@SETTINGS
@given(data=st.data())
def test_fillpad(op: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(FLOATS + INTS))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    pad = data.draw(st.integers(1, 3))
    drows, dcols = rows, cols
    if op == "tfillpad_expand":
        drows += data.draw(st.integers(0, 3))
        dcols += (32 // np_dtype(dtype).itemsize) * data.draw(st.integers(0, 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, dtype, rows, cols, vr, vc)
    (res,) = sem(op)([src], [out_tile(dtype, drows, dcols, drows, dcols, pad=pad)], {})
    assert res.shape == (drows, dcols)
    np.testing.assert_array_equal(res[:vr, :vc], src.valid)
    outside = np.ones((drows, dcols), bool)
    outside[:vr, :vc] = False
    assert (res[outside].astype(F64) == expected_pad(dtype, pad)).all()


@SETTINGS
@given(data=st.data())
def test_transpose(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(FLOATS + INTS))
    rows, cols, vr, vc = data.draw(shapes(dtype))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = tile(rng, dtype, rows, cols, vr, vc)
    (res,) = sem("ttrans")([src, tile(rng, dtype, rows, cols, rows, cols)],
                                    [out_tile(dtype, cols, rows, vc, vr)], {})
    np.testing.assert_array_equal(res, src.valid.T)


@SETTINGS
@given(data=st.data())
def test_setval(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(FLOATS + INTS))
    rows, cols, _, _ = data.draw(shapes(dtype))
    off = data.draw(st.integers(0, rows * cols - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dst = tile(rng, dtype, rows, cols, rows, cols)
    v = 3.5 if is_float(dtype) else 7
    (res,) = sem("tsetval")([Arg.scalar(off, "index"), Arg.scalar(v, dtype)], [dst], {})
    full = dst.value.copy()
    full.reshape(-1)[off] = v
    np.testing.assert_array_equal(res, full[: res.shape[0]])
