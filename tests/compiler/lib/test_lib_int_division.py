"""Integer tensor division is exact over the whole INT32 (and INT16) range on A2/A3, whose ``tdiv`` is
f16/f32 only (pypto.lib.elementwise.int_div_tile: an FP32 estimate, an integer remainder correction,
a final one-step fix by compare/select).

The reference is Python's integers: ``trunc(a / b)`` by ``abs(a) // abs(b)`` with the sign of ``a*b``
(``np.fix(a / b)`` is not exact past 2**53, and ``a / b`` in float64 rounds). The defined results
where the quotient is not an integer of the type: ``x / 0 = 0`` and ``MIN / -1 = MIN``, as the
tile-scalar form (tdivs) computes.

Integer ops FP32 cannot compute exactly are refused with the op's location (INT64 arithmetic, which
A2/A3 has no instruction for) or computed exactly another way (``abs`` of INT32 is ``max(x, -x)``).
"""

import numpy as np
import pytest
from conftest import needs_emulator
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from lib_programs import program

from pypto import DataType
from pypto.errors import PyptoError
from pypto.lib import ops as L
from pypto.ops import tensor as T
from pypto.runtime import run

pytestmark = needs_emulator
I32, I16 = DataType.INT32, DataType.INT16
NP = {I32: np.int32, I16: np.int16}


def truncating_division(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """Python-int reference: toward zero, x / 0 = 0, MIN / -1 wraps to MIN."""
    lo = -(1 << (bits - 1))
    a, b = np.broadcast_arrays(a, b)
    out = []
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True):
        q = 0 if y == 0 else abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        out.append(lo if q == -lo else q)
    return np.array(out, np.int64).reshape(a.shape)


def edges(bits: int) -> list[int]:
    """0, +-1, +-2, +-3, MIN, MAX and +-2**p + {-1, 0, 1} for every p: the values where an FP32
    estimate rounds, saturates or crosses an integer."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    vals = {0, 1, -1, 2, -2, 3, -3, lo, hi, lo + 1, hi - 1}
    for p in range(1, bits - 1):
        for d in (-1, 0, 1):
            vals |= {(1 << p) + d, -(1 << p) - d}
    return sorted(v for v in vals if lo <= v <= hi)


def divide(a: np.ndarray, b: np.ndarray, dtype: DataType) -> np.ndarray:
    prog = program(lambda x, y: T.div(x, y), [("a", a.shape, dtype), ("b", b.shape, dtype)])
    r = run(prog, a, b)
    assert not r.errors(), r.errors()
    return r.outputs[0]


@pytest.mark.parametrize("dtype,bits", [(I32, 32), (I16, 16)])
def test_every_pair_of_edge_values(dtype, bits):
    """The cross product of the edge values (190 x 190 for INT32): every pair divided exactly."""
    e = np.array(edges(bits), NP[dtype])
    a = np.repeat(e[:, None], len(e), axis=1)
    b = np.repeat(e[None, :], len(e), axis=0)
    got = divide(a, b, dtype)
    want = truncating_division(a, b, bits)
    bad = np.argwhere(got != want)
    assert bad.size == 0, [(int(a[i, j]), int(b[i, j]), int(got[i, j]), int(want[i, j])) for i, j in bad[:8]]


def test_the_defined_results():
    a = np.array([[7, -7, 7, -7, -2**31, -2**31, 2**31 - 1, 0, 5, -2**31, 2**24 + 1, -(2**24) - 1, 0, 0, 0, 0]],
                 np.int32)
    b = np.array([[2, 2, -2, -2, -1, 1, 0, 0, 0, 2**31 - 1, 1, 1, 1, 1, 1, 1]], np.int32)
    got = divide(a, b, I32)[0].tolist()
    assert got[:10] == [3, -3, -3, 3, -2**31, -2**31, 0, 0, 0, -1]
    assert got[10:12] == [2**24 + 1, -(2**24) - 1]  # FP32 alone gives 2**24 for both


def _values(bits: int):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return st.one_of(st.integers(lo, hi), st.sampled_from(edges(bits)), st.integers(-300, 300),
                     st.integers(0, bits - 2).flatmap(lambda p: st.integers(-(1 << p), (1 << p)).map(lambda v: v << (bits - 2 - p))))


@settings(max_examples=8, deadline=None)
@given(data=st.data(), rows=st.integers(1, 20), cols=st.integers(1, 70), dtype=st.sampled_from([I32, I16]),
       form=st.sampled_from(["same", "row", "col", "one", "vec", "left_row"]))
def test_random_division_with_broadcasting(data, rows, cols, dtype, form):
    """Any shape, the divisor or dividend a row / column vector, [1, 1] or rank 1 (NumPy broadcasting)."""
    bits = 32 if dtype is I32 else 16
    shape = {"same": (rows, cols), "row": (rows, 1), "col": (1, cols), "one": (1, 1), "vec": (cols,),
             "left_row": (rows, 1)}[form]
    full = hnp.arrays(NP[dtype], (rows, cols), elements=_values(bits))
    part = hnp.arrays(NP[dtype], shape, elements=_values(bits))
    a, b = (data.draw(part), data.draw(full)) if form == "left_row" else (data.draw(full), data.draw(part))
    got = divide(a, b, dtype)
    np.testing.assert_array_equal(got.astype(np.int64), truncating_division(a, b, bits))


def test_rank1_int32_division():
    rng = np.random.default_rng(3)
    a = rng.integers(-2**31, 2**31, 100, dtype=np.int64).astype(np.int32)
    b = rng.integers(-70000, 70000, 100).astype(np.int32)
    np.testing.assert_array_equal(divide(a, b, I32).astype(np.int64), truncating_division(a, b, 32))


@pytest.mark.parametrize("dtype,why", [(DataType.INT64, "no exact route"), (DataType.UINT32, "no exact route"),
                                       (DataType.UINT16, "converts UINT16 to no float type")])
def test_integer_division_the_target_cannot_do_exactly_is_refused_with_its_location(dtype, why):
    """INT64 / UINT32 values do not fit FP32's significand; A2/A3 convert UINT16 tiles to nothing."""
    prog_src = lambda: program(lambda x, y: T.div(x, y), [("a", (4, 8), dtype), ("b", (4, 8), dtype)])
    with pytest.raises(PyptoError, match=r"\.py:\d+:\d+: error: division of " + dtype.name + ".*" + why):
        ones = np.ones((4, 8), {DataType.INT64: np.int64, DataType.UINT32: np.uint32, DataType.UINT16: np.uint16}[dtype])
        run(prog_src(), ones, ones)


NARROW = {DataType.INT8: np.int8, DataType.UINT8: np.uint8, DataType.INT16: np.int16}


@pytest.mark.parametrize("dtype", [DataType.INT8, DataType.UINT8])
def test_every_pair_of_8_bit_values(dtype):
    """All 256 x 256 pairs: one division in FP16 (which holds every 8-bit integer), truncated back."""
    info = np.iinfo(NARROW[dtype])
    v = np.arange(info.min, info.max + 1).astype(NARROW[dtype])
    a, b = np.repeat(v[:, None], len(v), axis=1), np.repeat(v[None, :], len(v), axis=0)
    got = divide(a, b, dtype)
    assert got.dtype == NARROW[dtype]
    np.testing.assert_array_equal(got.astype(np.int64), truncating_division(a, b, 8) if info.min else
                                  np.where(b == 0, 0, a.astype(np.int64) // np.maximum(b, 1)))


def test_int16_edge_pairs_divide_in_fp32():
    """INT16 divides in FP32 (one division, exact for 16-bit values), not the INT32 sequence."""
    e = np.array(edges(16), np.int16)
    a, b = np.repeat(e[:, None], len(e), axis=1), np.repeat(e[None, :], len(e), axis=0)
    np.testing.assert_array_equal(divide(a, b, DataType.INT16).astype(np.int64), truncating_division(a, b, 16))
    from pypto.ir.compiler import compile_program

    prog = program(lambda x, y: T.div(x, y), [("a", a.shape, DataType.INT16), ("b", b.shape, DataType.INT16)])
    text = compile_program(prog, with_cpp=False).pto["kern"]
    assert "pto.tdiv " in text and "dtype=i32" not in text  # no INT32 estimate-and-correct


@settings(max_examples=6, deadline=None)
@given(data=st.data(), rows=st.integers(1, 40), cols=st.integers(1, 300), dtype=st.sampled_from(list(NARROW)),
       form=st.sampled_from(["same", "row", "col", "vec"]))
def test_random_narrow_division_with_broadcasting(data, rows, cols, dtype, form):
    info = np.iinfo(NARROW[dtype])
    shape = {"same": (rows, cols), "row": (rows, 1), "col": (1, cols), "vec": (cols,)}[form]
    a = data.draw(hnp.arrays(NARROW[dtype], (rows, cols), elements=st.integers(info.min, info.max)))
    b = data.draw(hnp.arrays(NARROW[dtype], shape, elements=st.integers(info.min, info.max)))
    want = (truncating_division(a, b, info.bits) if info.min else
            np.where(b == 0, 0, a.astype(np.int64) // np.maximum(b, 1)))
    np.testing.assert_array_equal(divide(a, b, dtype).astype(np.int64), want)


def _with_builder(fn):
    fn.with_builder = True
    return fn


@_with_builder
def _mul_div_add(ib, x, y, c):
    return T.add(ib.let("q", T.div(ib.let("s", T.mul(x, c)), y)), c)


@pytest.mark.parametrize("shape", [(1, 1), (64, 256), (300, 130), (3, 9000)])
def test_exact_int32_division_fuses_with_its_neighbours(shape):
    """(x * c) / y + c: one loop, no GM workspace for x * c or the quotient (the division's kernel
    plans every op for its live tiles, tiling.kernel_live); results exact."""
    from pypto.ir.compiler import compile_program

    prog = program(_mul_div_add, [("a", shape, I32), ("b", shape, I32), ("c", shape, I32)])
    kern = compile_program(prog, with_cpp=False).program.get_function("kern")
    assert [p.name for p in kern.params if p.name.startswith("ws")] == []
    rng = np.random.default_rng(shape[0])
    a = rng.integers(-2**28, 2**28, shape).astype(np.int32)
    b = rng.integers(-70000, 70000, shape).astype(np.int32)
    c = rng.integers(-7, 8, shape).astype(np.int32)
    s = a.astype(np.int64) * c
    r = run(prog, a, b, c)
    assert not r.errors(), r.errors()
    np.testing.assert_array_equal(r.outputs[0].astype(np.int64), truncating_division(s, b, 32) + c)


def test_int64_arithmetic_is_refused_not_rounded_through_fp32():
    prog = program(lambda x, y: T.add(x, y), [("a", (4, 8), DataType.INT64), ("b", (4, 8), DataType.INT64)])
    big = np.full((4, 8), 2**40 + 1, np.int64)
    with pytest.raises(PyptoError, match=r"\.py:\d+:\d+: error: add on INT64 tiles .* 2\*\*24"):
        run(prog, big, big)


def test_int32_abs_is_exact_past_2_to_the_24():
    x = np.array([[2**24 + 1, -(2**24) - 1, 2**31 - 1, -(2**31) + 1, -(2**31), 0, -5, 5]], np.int32)
    r = run(program(lambda t: L.abs(t), [("x", x.shape, I32)]), x)
    assert not r.errors(), r.errors()
    np.testing.assert_array_equal(r.outputs[0], np.abs(x))  # |MIN| wraps to MIN, as NumPy's does


def test_a5_divides_int32_with_its_own_tdiv():
    """A module for A5 (pto.target_arch = "a5") uses A5's INT32 tdiv: one division, no estimate and
    correction; it computes the same defined results (x / 0 = 0, MIN / -1 = MIN) by compare and
    select around the tdiv, which is not asked for them (it has no result there: a fault)."""
    from pypto.ir.compiler import compile_program

    e = np.array(edges(32)[::7], np.int32)
    a, b = np.repeat(e[:, None], len(e), axis=1), np.repeat(e[None, :], len(e), axis=0)
    prog = program(lambda x, y: T.div(x, y), [("a", a.shape, I32), ("b", b.shape, I32)])
    text = compile_program(prog, target_arch="a5", with_cpp=False).pto["kern"]
    divs = [ln for ln in text.splitlines() if "pto.tdiv " in ln]
    assert len(divs) == 1 and divs[0].count("dtype=i32") == 3 and "pto.tcvt" not in text
    r = run(prog, a, b, machine="a5")
    assert not r.errors(), r.errors()
    np.testing.assert_array_equal(r.outputs[0].astype(np.int64), truncating_division(a, b, 32))
