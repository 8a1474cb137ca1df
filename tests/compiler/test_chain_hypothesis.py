"""Random chains of elementwise / unary / reduction tile ops, compiled and checked against NumPy.

Float chains run in FP32, FP16 and BF16 (each step rounded to the tile dtype in the reference);
INT32 chains use small values so no step overflows and results must match exactly. A chain may end
in a row reduction (sum/max/min over each row) or a column reduction (sum/max/min down each column).
"""

import numpy as np
import pytest
from conftest import needs_emulator
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto import DataType, ir
from pypto.errors import PyptoTypeError
from pypto.ir import IRBuilder
from pypto.ir.expr import ConstFloat
from pypto.ir.op import block
from pypto.runtime import run

pytestmark = needs_emulator

UNARY = {"abs": np.abs, "neg": np.negative, "relu": lambda x: np.maximum(x, 0), "exp": np.exp}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}
SCALAR = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum}
INT_BINARY = {**BINARY, "and_": np.bitwise_and, "or_": np.bitwise_or, "shl": np.left_shift}
INT_SCALAR = {**SCALAR, "ands": np.bitwise_and, "ors": np.bitwise_or, "shls": np.left_shift}
REDUCE = {
    "row_sum": lambda x: x.sum(axis=1, keepdims=True), "row_max": lambda x: x.max(axis=1, keepdims=True),
    "row_min": lambda x: x.min(axis=1, keepdims=True), "col_sum": lambda x: x.sum(axis=0, keepdims=True),
    "col_max": lambda x: x.max(axis=0, keepdims=True), "col_min": lambda x: x.min(axis=0, keepdims=True),
}
# Ops each dtype supports on the target. A2/A3 has no bf16 tile-tile arithmetic (pto-text-format
# §4.3/§4.5: tadd/tsub/tneg add bf16 on A5 only): bf16 chains use the tile-scalar ops.
OPS = {
    DataType.FP32: (UNARY, BINARY, SCALAR, [-0.5, 0.25, 1.5]),
    DataType.FP16: (UNARY, BINARY, SCALAR, [-0.5, 0.25, 1.5]),
    DataType.INT32: ({"neg": np.negative, "relu": UNARY["relu"]}, INT_BINARY, INT_SCALAR, [-3, 1, 2]),
}
TOL = {DataType.FP32: 1e-5, DataType.FP16: 2e-2, DataType.BF16: 1.6e-2, DataType.INT32: 0}


@st.composite
def chains(draw):
    dtype = draw(st.sampled_from(sorted(OPS, key=lambda d: d.name)))
    unary, binary, scalar, consts = OPS[dtype]
    step = st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(sorted(unary))),
        st.tuples(st.just("binary"), st.sampled_from(sorted(binary))),
        st.tuples(st.just("scalar"), st.sampled_from(sorted(scalar)), st.sampled_from(consts)),
    )
    steps = draw(st.lists(step, min_size=1, max_size=5))
    if dtype is DataType.INT32:
        # a shift by a negative scalar is undefined; keep scalar shifts in 0..2
        steps = [(s[0], s[1], abs(s[2]) % 3) if s[1] == "shls" else s for s in steps]
    return dtype, steps


def build(rows, cols, dtype, steps, reduce):
    ib = IRBuilder()
    out = {None: [rows, cols], "row": [rows, 1], "col": [1, cols]}[reduce and reduce[:3]]
    with ib.program("Chain") as p, ib.function("chain", type=ir.FunctionType.InCore) as f:
        a = f.param("a", ir.TensorType([rows, cols], dtype))
        b = f.param("b", ir.TensorType([rows, cols], dtype))
        o = f.param("o", ir.TensorType(out, dtype), direction=ir.ParamDirection.Out)
        f.return_type(ir.TensorType(out, dtype))
        x = ib.let("x", block.load(a, [0, 0], [rows, cols]))
        y = ib.let("y", block.load(b, [0, 0], [rows, cols]))
        for i, s in enumerate(steps):
            if s[0] == "unary":
                x = ib.let(f"u{i}", getattr(block, s[1])(x))
            elif s[0] == "binary":
                x = ib.let(f"b{i}", getattr(block, s[1])(x, y))
            else:
                # a typed constant keeps FP16/BF16 chains in their dtype (a bare float literal is FP32)
                c = ConstFloat(float(s[2]), dtype) if dtype.is_float() else s[2]
                x = ib.let(f"s{i}", getattr(block, s[1])(x, c))
        if reduce and reduce.startswith("row"):
            tmp = ib.let("tmp", block.create_tile([rows, cols], dtype))
            x = ib.let("red", getattr(block, reduce)(x, tmp))
        elif reduce:
            x = ib.let("red", getattr(block, reduce[4:])(x, axis=0, keepdim=True))
        ib.return_stmt(ib.let("r", block.store(x, [0, 0], o)))
    return p.get_result()


def reference(a, b, dtype, steps, reduce):
    unary, binary, scalar, _ = OPS.get(dtype, ({}, {}, SCALAR, None))  # bf16: tile-scalar ops only
    work = np.int64 if dtype is DataType.INT32 else np.float32
    x, y = a.astype(work), b.astype(work)
    for s in steps:
        if s[0] == "unary":
            x = unary[s[1]](x)
        elif s[0] == "binary":
            x = binary[s[1]](x, y)
        else:
            x = scalar[s[1]](x, work(s[2]))
        x = x.astype(a.dtype).astype(work)
    return REDUCE[reduce](x) if reduce else x


def inputs(rows, cols, dtype):
    rng = np.random.default_rng(rows * 1000 + cols)
    if dtype is DataType.INT32:
        # small values; b doubles as a shift count, so keep it in 0..3
        return rng.integers(-8, 9, (rows, cols)).astype(np.int32), rng.integers(0, 4, (rows, cols)).astype(np.int32)
    npdt = dtype.numpy
    return (rng.random((rows, cols)) - 0.5).astype(npdt), (rng.random((rows, cols)) - 0.5).astype(npdt)


def check(rows, cols, dtype, steps, reduce, strategy):
    a, b = inputs(rows, cols, dtype)
    r = run(build(rows, cols, dtype, steps, reduce), a, b, strategy=strategy)
    assert not [f for f in r.findings if getattr(f, "severity", "") == "error"]
    want = reference(a, b, dtype, steps, reduce)
    got = r.outputs[0]
    if dtype is DataType.INT32:
        np.testing.assert_array_equal(got, want.astype(np.int32))
        return
    tol = TOL[dtype]
    span = {None: 1, "row": cols, "col": rows}[reduce and reduce[:3]]
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=tol, atol=tol * (span if "sum" in str(reduce) else 1))


@settings(derandomize=True, deadline=None, max_examples=60)
@given(
    rows=st.sampled_from([8, 16, 32]),
    cols=st.sampled_from([16, 32, 64]),
    chain=chains(),
    reduce=st.sampled_from([None, *sorted(REDUCE)]),
    strategy=st.sampled_from(["Default", "PTOAS"]),
)
def test_random_chain_matches_numpy(rows, cols, chain, reduce, strategy):
    dtype, steps = chain
    check(rows, cols, dtype, steps, reduce, strategy)


@pytest.mark.parametrize("dtype", [DataType.FP32, DataType.FP16])
def test_chain_smoke(dtype):
    steps = [("binary", "add"), ("unary", "relu"), ("scalar", "muls", 0.25)]
    check(16, 32, dtype, steps, "row_sum", "Default")


@pytest.mark.parametrize("reduce", sorted(REDUCE))
def test_int32_chain_with_every_reduction(reduce):
    steps = [("binary", "shl"), ("binary", "and_"), ("scalar", "ors", 1), ("binary", "sub"), ("scalar", "maxs", -3)]
    check(16, 32, DataType.INT32, steps, reduce, "Default")


@pytest.mark.parametrize("reduce", [None, "col_max"])
def test_bf16_chain(reduce):
    steps = [("scalar", "muls", 1.5), ("scalar", "adds", 0.25), ("scalar", "maxs", -0.5)]
    check(16, 64, DataType.BF16, steps, reduce, "Default")


@pytest.mark.parametrize("reduce", ["row_sum", "row_max"])
def test_bf16_row_reduction_is_rejected_on_a2a3_naming_the_legal_dtypes(reduce):
    """§4.6: a row reduction's source is i16, i32, f16 or f32 (no bf16 on A2/A3): reduce through FP32."""
    with pytest.raises(PyptoTypeError, match=rf"{reduce}: BF16 tiles are not supported \(supported: INT16, INT32, "
                                             r"FP16, FP32\)"):
        build(16, 64, DataType.BF16, [], reduce)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "neg"])
def test_bf16_tile_arithmetic_is_rejected_on_a2a3_naming_the_legal_dtypes(op):
    steps = [("unary", op)] if op == "neg" else [("binary", op)]
    with pytest.raises(PyptoTypeError, match=rf"{op}: BF16 tiles are not supported \(supported: INT16, INT32, "
                                             r"FP16, FP32\)"):
        build(16, 64, DataType.BF16, steps, None)
