"""INT8/UINT8 add, sub, mul, maximum and minimum on A2/A3, whose vector unit has no 8-bit add/mul:
computed in INT16 and wrapped to 8 bits as NumPy wraps (127 + 1 = -128, 255 + 1 = 0), never
saturated by the narrowing convert (pypto.lib.elementwise.narrow_int_binary_tile). A5 has the 8-bit
instructions and keeps them.
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
NP = {DataType.INT8: np.int8, DataType.UINT8: np.uint8}
OPS = {"add": (T.add, np.add), "sub": (T.sub, np.subtract), "mul": (T.mul, np.multiply),
       "maximum": (L.maximum, np.maximum), "minimum": (L.minimum, np.minimum)}


def compute(name: str, a: np.ndarray, b: np.ndarray, dtype: DataType, machine: str | None = None) -> np.ndarray:
    prog = program(lambda x, y: OPS[name][0](x, y), [("a", a.shape, dtype), ("b", b.shape, dtype)])
    r = run(prog, a, b, machine=machine) if machine else run(prog, a, b)
    assert not r.errors(), r.errors()
    return r.outputs[0]


@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("name", list(OPS))
def test_every_pair_of_8_bit_values(name, dtype):
    """All 256 x 256 pairs, including the wrapping ones (127 + 1, -128 - 1, 255 * 255, -128 * -1)."""
    info = np.iinfo(NP[dtype])
    v = np.arange(info.min, info.max + 1).astype(NP[dtype])
    a, b = np.repeat(v[:, None], len(v), axis=1), np.repeat(v[None, :], len(v), axis=0)
    got = compute(name, a, b, dtype)
    assert got.dtype == NP[dtype]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, OPS[name][1](a, b))


def _values(dtype: DataType) -> st.SearchStrategy:
    info = np.iinfo(NP[dtype])
    edges = [info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max]
    return st.one_of(st.sampled_from([e for e in edges if info.min <= e <= info.max]),
                     st.integers(info.min, info.max))


@settings(max_examples=12, deadline=None)
@given(data=st.data(), shape=st.sampled_from([(1, 1), (7, 13), (37, 130)]), dtype=st.sampled_from(list(NP)),
       name=st.sampled_from(list(OPS)), form=st.sampled_from(["same", "row", "col"]))
def test_random_8_bit_ops_with_broadcasting(data, shape, dtype, name, form):
    rows, cols = shape
    bshape = {"same": shape, "row": (rows, 1), "col": (1, cols)}[form]
    a = data.draw(hnp.arrays(NP[dtype], shape, elements=_values(dtype)))
    b = data.draw(hnp.arrays(NP[dtype], bshape, elements=_values(dtype)))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(compute(name, a, b, dtype), OPS[name][1](a, b))


def test_a5_keeps_its_8_bit_add():
    """A5 adds i8 tiles itself: no widening converts, and the same wrapped results."""
    from pypto.ir.compiler import compile_program

    a = np.array([[127, -128, 100, -1]], np.int8)
    b = np.array([[1, -1, 100, 1]], np.int8)
    prog = program(lambda x, y: T.add(x, y), [("a", a.shape, DataType.INT8), ("b", b.shape, DataType.INT8)])
    text = compile_program(prog, target_arch="a5", with_cpp=False).pto["kern"]
    assert "pto.tcvt" not in text and "pto.tshls" not in text
    np.testing.assert_array_equal(compute("add", a, b, DataType.INT8, machine="a5"), a + b)


def test_jit_int8_add_in_an_at_region_wraps():
    """The reported case: pl.add of two INT8 tensors in a @pl.jit pl.at region compiled (it was a
    'cast: INT8 tiles cannot be converted to FP32' error) and wraps as NumPy does."""
    import pypto.language as pl

    @pl.jit
    def add8(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:, :] = pl.add(x, y)

    x = np.array([[127, -128, -8, 0], [100, -100, 1, -1]], np.int8)
    y = np.array([[1, -1, 3, 0], [100, -100, 126, -127]], np.int8)
    o = np.zeros_like(x)
    add8(x, y, o)
    np.testing.assert_array_equal(o, x + y)  # 127 + 1 = -128, 100 + 100 = -56


def test_int8_with_uint8_is_refused_not_wrapped_to_8_bits():
    """NumPy adds int8 and uint8 in int16 (127 + 255 = 382); the result type here is 8 bits, so a
    wrapped 126 would be another number: refused at the op's location."""
    a, b = np.array([[127, -128]], np.int8), np.array([[255, 1]], np.uint8)
    prog = program(lambda x, y: T.add(x, y), [("a", a.shape, DataType.INT8), ("b", b.shape, DataType.UINT8)])
    with pytest.raises(PyptoError, match=r"\.py:\d+:\d+: error: add of UINT8 and INT8 tensors: .*INT16"):
        run(prog, a, b)
