"""Random chains of elementwise / unary / reduction tile ops, compiled and checked against NumPy."""

import numpy as np
import pytest
from conftest import needs_emulator
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto import DataType, ir
from pypto.ir import IRBuilder
from pypto.ir.op import block
from pypto.runtime import run

pytestmark = needs_emulator

UNARY = {"abs": np.abs, "neg": np.negative, "relu": lambda x: np.maximum(x, 0), "exp": np.exp}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}
SCALAR = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum}
REDUCE = {"row_sum": lambda x: x.sum(axis=1, keepdims=True), "row_max": lambda x: x.max(axis=1, keepdims=True)}

step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY))),
    st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY))),
    st.tuples(st.just("scalar"), st.sampled_from(sorted(SCALAR)), st.sampled_from([-0.5, 0.25, 1.5])),
)


def build(rows, cols, dtype, steps, reduce):
    ib = IRBuilder()
    out_cols = 1 if reduce else cols
    with ib.program("Chain") as p, ib.function("chain", type=ir.FunctionType.InCore) as f:
        a = f.param("a", ir.TensorType([rows, cols], dtype))
        b = f.param("b", ir.TensorType([rows, cols], dtype))
        o = f.param("o", ir.TensorType([rows, out_cols], dtype), direction=ir.ParamDirection.Out)
        f.return_type(ir.TensorType([rows, out_cols], dtype))
        x = ib.let("x", block.load(a, [0, 0], [rows, cols]))
        y = ib.let("y", block.load(b, [0, 0], [rows, cols]))
        for i, s in enumerate(steps):
            if s[0] == "unary":
                x = ib.let(f"u{i}", getattr(block, s[1])(x))
            elif s[0] == "binary":
                x = ib.let(f"b{i}", getattr(block, s[1])(x, y))
            else:
                x = ib.let(f"s{i}", getattr(block, s[1])(x, s[2]))
        if reduce:
            tmp = ib.let("tmp", block.create_tile([rows, cols], dtype))
            x = ib.let("red", getattr(block, reduce)(x, tmp))
        ib.return_stmt(ib.let("r", block.store(x, [0, 0], o)))
    return p.get_result()


def reference(a, b, steps, reduce):
    x = a.astype(np.float32)
    y = b.astype(np.float32)
    for s in steps:
        if s[0] == "unary":
            x = UNARY[s[1]](x)
        elif s[0] == "binary":
            x = BINARY[s[1]](x, y)
        else:
            x = SCALAR[s[1]](x, s[2])
        x = x.astype(a.dtype).astype(np.float32)
    return REDUCE[reduce](x) if reduce else x


@settings(derandomize=True, deadline=None, max_examples=25)
@given(
    rows=st.sampled_from([8, 16, 32]),
    cols=st.sampled_from([16, 32, 64]),
    dtype=st.sampled_from([DataType.FP32, DataType.FP16]),
    steps=st.lists(step, min_size=1, max_size=5),
    reduce=st.sampled_from([None, "row_sum", "row_max"]),
    strategy=st.sampled_from(["Default", "PTOAS"]),
)
def test_random_chain_matches_numpy(rows, cols, dtype, steps, reduce, strategy):
    rng = np.random.default_rng(rows * 1000 + cols)
    npdt = dtype.numpy
    a = (rng.random((rows, cols)) - 0.5).astype(npdt)
    b = (rng.random((rows, cols)) - 0.5).astype(npdt)
    r = run(build(rows, cols, dtype, steps, reduce), a, b, strategy=strategy)
    assert not [f for f in r.findings if getattr(f, "severity", "") == "error"]
    want = reference(a, b, steps, reduce)
    tol = 1e-5 if dtype is DataType.FP32 else 2e-2
    np.testing.assert_allclose(r.outputs[0].astype(np.float32), want, rtol=tol, atol=tol * (cols if reduce else 1))


@pytest.mark.parametrize("dtype", [DataType.FP32, DataType.FP16])
def test_chain_smoke(dtype):
    steps = [("binary", "add"), ("unary", "relu"), ("scalar", "muls", 0.25)]
    a = np.linspace(-1, 1, 16 * 32).reshape(16, 32).astype(dtype.numpy)
    r = run(build(16, 32, dtype, steps, "row_sum"), a, a)
    np.testing.assert_allclose(r.outputs[0].astype(np.float32), reference(a, a, steps, "row_sum"), rtol=2e-2, atol=2e-2)
