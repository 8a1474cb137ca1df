"""The speed paths of the data path give what the general paths give: ``QUIET`` is
``np.errstate(all="ignore")`` (also nested, also restored), a scalar converted to f32/f64 by NumPy's
scalar constructor has the bits the array cast gives, and a GM window sliced from a kept rows view
is the same memory as the window built over the buffer."""

from __future__ import annotations

import struct
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pyptoemu.core.memory import GMBuffer, PartitionView, window
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.ieee import QUIET
from pyptoemu.isa.semantics import SEMANTICS
from pyptoemu.isa.semantics.common import F64, scalar_as


def _tile(a: np.ndarray) -> Arg:
    return Arg("tile", "f32", a.dtype, a, a.shape[0], a.shape[1], a.shape[0], a.shape[1], 0, "vec")


def test_quiet_is_errstate_ignore_and_restores_the_callers_state():
    before = np.geterr()
    with QUIET:
        assert set(np.geterr().values()) == {"ignore"}
        with QUIET:  # nested: still quiet, and leaving it does not end the outer one
            assert set(np.geterr().values()) == {"ignore"}
        assert set(np.geterr().values()) == {"ignore"}
    assert np.geterr() == before


def test_an_overflowing_op_warns_nothing_outside_and_inside_a_run_wide_quiet():
    big = np.full((2, 4), 3e38, np.float32)
    two = Arg("scalar", "f32", np.dtype(np.float32), 2.0, 0, 0, 0, 0, 0, "")
    mul = SEMANTICS["scalar_mul"]
    for outer in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a RuntimeWarning would fail the test
            if outer:
                with QUIET:
                    out = mul([_tile(big), two], [_tile(big.copy())], {})[0]
            else:
                out = mul([_tile(big), two], [_tile(big.copy())], {})[0]
        assert np.isinf(out).all() and out.dtype == np.float32


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_scalar_as_f32_f64_has_the_array_casts_bits(bits):
    v = _double(bits)
    with np.errstate(all="ignore"):
        for name, dt in (("f32", np.float32), ("f64", np.float64)):
            want = np.array(v, dtype=F64).astype(dt)[()]
            got = scalar_as(v, name)
            assert got.dtype == dt and got.tobytes() == want.tobytes()


def test_scalar_as_f32_edges():
    for v in (0.0, -0.0, 1e300, -1e300, 3.4028235677973366e38, 2.0**-150, 2.0**-149 * 1.5):
        with np.errstate(all="ignore"):  # an overflow to inf warns in both paths alike
            want = np.array(v, dtype=F64).astype(np.float32)[()]
            got = scalar_as(v, "f32")
        assert got.tobytes() == want.tobytes()


@settings(max_examples=200, deadline=None)
@given(pitch=st.integers(1, 40), base=st.integers(0, 300), rows=st.integers(0, 9), cols=st.integers(1, 40),
       n=st.integers(1, 600))
def test_a_window_is_the_buffer_window_it_stands_for(pitch, base, rows, cols, n):
    flat = np.arange(n, dtype=np.float32)
    if base + max(rows - 1, 0) * pitch + cols > n:  # out of bounds: views are checked before this
        return
    kept: dict = {}
    got = window(flat, base, (rows, cols), (pitch, 1), kept)
    want = np.ndarray((rows, cols), flat.dtype, buffer=flat, offset=base * 4, strides=(pitch * 4, 4))
    assert got.shape == want.shape and np.array_equal(got, want)
    if got.size:
        got[...] = -1  # the same memory: a write lands in the buffer
        assert (want == -1).all()


def test_a_kept_rows_view_follows_a_new_array():
    kept: dict = {}
    a = np.zeros(64, np.float32)
    window(a, 8, (2, 4), (16, 1), kept)[...] = 1
    b = np.zeros(64, np.float32)
    window(b, 8, (2, 4), (16, 1), kept)[...] = 2  # same pitch, another array: not a's rows
    assert a.sum() == 8 and b.sum() == 16


def test_a_tstore_window_writes_the_elements_of_its_view():
    gm = GMBuffer(1, "f32", np.dtype(np.float32))
    gm.reserve_standin(40 * 24, 0)
    v = PartitionView(gm, 3 * 24 + 5, (4, 7), (24, 1))
    v.write(np.full((4, 7), 9.0, np.float32))
    grid = gm.data.reshape(40, 24)
    assert (grid[3:7, 5:12] == 9).all()
    assert (grid[3:7, 12:] != 9).all() and (grid[:3] != 9).all()
