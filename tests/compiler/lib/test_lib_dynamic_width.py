"""pypto.lib on a dynamic last axis and dynamic dims of reductions over any axes (issue 12, lib12b item
2): a run-time width is walked in column chunks of a static tile width (tiling.DYNAMIC_COL_ROWS rows
of the widest chunk that fits) with run-time valid columns; a reduction over a dynamic axis loops with
run-time bounds. Checked against NumPy over widths 1, primes, more than one tile, and dtypes; one
compiled program (and one @pl.jit compile) for every width."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import NP, close, data, program

import pypto.language as pl
from pypto import DataType
from pypto.ir.compiler import compile_program
from pypto.lib import ops as L
from pypto.ops import tensor as T
from pypto.runtime import run

F32, F16, BF16 = DataType.FP32, DataType.FP16, DataType.BF16
RT = {F32: 1e-5, F16: 2e-3, BF16: 1.6e-2}
SHAPES = st.sampled_from([(1, 1), (37, 1), (1, 130), (7, 13), (5, 3000), (300, 131)])  # 3000: > one chunk


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _with_builder(fn):
    fn.with_builder = True
    return fn


@_with_builder
def _exp_plus_vector(ib, x, b):
    return T.add(ib.let("e", T.exp(x)), b)


OPS = {
    "exp+b": (_exp_plus_vector, lambda x, b: np.exp(x) + b, 1),
    "sigmoid": (lambda x, b: L.sigmoid(x), lambda x, b: 1 / (1 + np.exp(-x)), 1),
    "sum": (lambda x, b: L.sum(x, -1, True), lambda x, b: x.sum(-1, keepdims=True), 60),
    "max": (lambda x, b: L.max(x, -1, False), lambda x, b: x.max(-1), 1),
    "mean": (lambda x, b: L.mean(x, -1, True), lambda x, b: x.mean(-1, keepdims=True), 10),
    "softmax": (lambda x, b: L.softmax(x), lambda x, b: _softmax(x), 10),
    "log_softmax": (lambda x, b: L.log_softmax(x), lambda x, b: np.log(_softmax(x)), 10),
    "rms_norm": (lambda x, b: L.rms_norm(x, b, eps=1e-6),
                 lambda x, b: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * b, 10),
    "layer_norm": (lambda x, b: L.layer_norm(x, b, b, eps=1e-6),
                   lambda x, b: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-6) * b + b,
                   10),
}


def _run(name, rows, cols, dtype, dyn_rows=True):
    build, ref, _ = OPS[name]
    x, b = data((rows, cols), dtype, rows + cols), data((cols,), dtype, 1)
    params = [("x", ("M" if dyn_rows else rows, "N"), dtype), ("b", ("N",), dtype)]
    got = run(program(build, params), x, b).outputs[0]
    return got, ref(x.astype(np.float32), b.astype(np.float32)).astype(NP[dtype])


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(sorted(OPS)), shape=SHAPES, dtype=st.sampled_from([F32, F16]), dyn_rows=st.booleans())
def test_a_dynamic_last_axis_matches_numpy(name, shape, dtype, dyn_rows):
    got, want = _run(name, *shape, dtype, dyn_rows)
    close(got, want, dtype, atol=RT[dtype] * OPS[name][2])


@pytest.mark.parametrize("name", ["softmax", "rms_norm", "exp+b"])
def test_bf16_on_a_dynamic_last_axis(name):
    got, want = _run(name, 37, 300, BF16)
    close(got, want, BF16, atol=0.05)


def test_one_compiled_kernel_serves_every_width():
    prog = program(lambda x, b: L.softmax(x), [("x", ("M", "N"), F32), ("b", ("N",), F32)])
    for rows, cols in ((1, 1), (3, 7), (37, 130), (2, 5000)):
        x = data((rows, cols), F32, cols)
        close(run(prog, x, data((cols,), F32, 0)).outputs[0], _softmax(x), F32, atol=1e-5)


def test_consecutive_ops_on_a_dynamic_width_still_fuse():
    compiled = compile_program(program(_exp_plus_vector, [("x", ("M", "N"), F32), ("b", ("N",), F32)]))
    kern = compiled.program.get_function("kern")
    assert [p.name for p in kern.params if p.name.startswith("ws")] == []


REDUCE = {
    "sum0": (lambda x: L.sum(x, 0, True), lambda x: x.sum(0, keepdims=True), ("M", "N")),
    "max0": (lambda x: L.max(x, 0, False), lambda x: x.max(0), ("M", "N")),
    "mean0": (lambda x: L.mean(x, 0, True), lambda x: x.mean(0, keepdims=True), ("M", "N")),
    "sum_all": (lambda x: L.sum(x, (0, 1), True), lambda x: x.sum((0, 1), keepdims=True), ("M", "N")),
    "mean_02": (lambda x: L.mean(x, (0, 2), True), lambda x: x.mean((0, 2), keepdims=True), ("M", 3, "N")),
    "min_1": (lambda x: L.min(x, 1, True), lambda x: x.min(1, keepdims=True), ("M", 7, "N")),
    "sum_lead": (lambda x: L.sum(x, 0, True), lambda x: x.sum(0, keepdims=True), ("M", 3, "N")),
}


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(sorted(REDUCE)), m=st.sampled_from([1, 2, 37, 300]), n=st.sampled_from([1, 13, 130, 1300]),
       dtype=st.sampled_from([F32, F16]))
def test_reductions_over_dynamic_non_last_axes_match_numpy(name, m, n, dtype):
    build, ref, pshape = REDUCE[name]
    shape = tuple(m if d == "M" else n if d == "N" else d for d in pshape)
    x = data(shape, dtype, m * n)
    got = run(program(build, [("x", pshape, dtype)]), x).outputs[0]
    want = ref(x.astype(np.float32))
    count = x.size / want.size
    close(got, want.astype(NP[dtype]), dtype, atol=RT[dtype] * 2 * count ** 0.5)


M, N = pl.dynamic("M"), pl.dynamic("N")


@pl.jit
def softmax_rows(x: pl.Tensor[[M, N], pl.FP32], y: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.softmax(x)
    return y


def test_jit_compiles_once_for_every_shape_of_its_dynamic_dims():
    """pypto-jit §3: dims declared pl.dynamic stay symbolic: one compile serves every shape."""
    rng = np.random.default_rng(4)
    for rows, cols in ((1, 1), (37, 130), (5, 3000), (64, 16)):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        y = np.zeros_like(x)
        softmax_rows(x, y)
        np.testing.assert_allclose(y, _softmax(x), rtol=1e-5, atol=1e-6)
    assert len(softmax_rows._cache) == 1


@pytest.mark.parametrize("n", [1, 7, 20000])
def test_a_dynamic_vector_length(n):
    """A 1-D tensor of run-time length: one row, chunks of the widest tile (not DYNAMIC_COL_ROWS rows)."""
    x = data((n,), F32, n)
    got = run(program(lambda v: L.softmax(v), [("x", ("N",), F32)]), x).outputs[0]
    close(got, _softmax(x), F32, atol=1e-6)
    got = run(program(lambda v: L.relu(v), [("x", ("N",), F32)]), x).outputs[0]
    np.testing.assert_array_equal(got, np.maximum(x, 0))


LAYOUT = {  # name: (build, NumPy, parameter shapes (strings are dynamic dims), run shapes from (m, n))
    "transpose": (lambda x: T.transpose(x, 0, 1), lambda x: x.T, [("M", "N")], lambda m, n: [(m, n)]),
    "transpose_keep_last": (lambda x: T.transpose(x, 0, 1), lambda x: x.transpose(1, 0, 2), [("M", 5, "N")],
                            lambda m, n: [(m, 5, n)]),
    "transpose_last_two": (lambda x: T.transpose(x, 1, 2), lambda x: x.transpose(0, 2, 1), [("M", 5, 16)],
                           lambda m, n: [(m, 5, 16)]),
    "transpose_outer": (lambda x: T.transpose(x, 0, 2), lambda x: x.transpose(2, 1, 0), [("M", 3, 16)],
                        lambda m, n: [(m, 3, 16)]),
    "concat_last": (lambda x, y: L.concat(x, y, 1), lambda x, y: np.concatenate([x, y], 1), [("M", 64), ("M", 30)],
                    lambda m, n: [(m, 64), (m, 30)]),
    "concat_rows": (lambda x, y: L.concat(x, y, 0), lambda x, y: np.concatenate([x, y], 0), [(3, "N"), (5, "N")],
                    lambda m, n: [(3, n), (5, n)]),
    "slice": (lambda x: L.slice(x, [1, 1], [0, 0]), lambda x: x[:1, :1], [("M", "N")], lambda m, n: [(m, n)]),
    "broadcast_rows": (lambda x, b: L.broadcast_to(b, list(x.type.shape)), lambda x, b: np.broadcast_to(b, x.shape),
                       [("M", "N"), ("M", 1)], lambda m, n: [(m, n), (m, 1)]),
    "broadcast_vector": (lambda x, b: L.broadcast_to(b, list(x.type.shape)), lambda x, b: np.broadcast_to(b, x.shape),
                         [("M", "N"), ("N",)], lambda m, n: [(m, n), (n,)]),
    "reshape_merge": (lambda x: T.reshape(x, [x.type.shape[0], 192]), lambda x: x.reshape(len(x), 192),
                      [("M", 3, 64)], lambda m, n: [(m, 3, 64)]),
    "reshape_split": (lambda x: T.reshape(x, [x.type.shape[0], 4, 15]), lambda x: x.reshape(len(x), 4, 15),
                      [("M", 6, 10)], lambda m, n: [(m, 6, 10)]),
    "sum_drop_dim": (lambda x: L.sum(x, 1, False), lambda x: x.sum(1), [("M", 5, 16)], lambda m, n: [(m, 5, 16)]),
}


@settings(max_examples=14, deadline=None)
@given(name=st.sampled_from(sorted(LAYOUT)), m=st.sampled_from([1, 2, 37]), n=st.sampled_from([1, 13, 130]),
       dtype=st.sampled_from([F32, F16]))
def test_layout_ops_on_dynamic_dims_match_numpy(name, m, n, dtype):
    build, ref, pshapes, shapes = LAYOUT[name]
    xs = [data(s, dtype, i) for i, s in enumerate(shapes(m, n))]
    got = run(program(build, [(f"x{i}", p, dtype) for i, p in enumerate(pshapes)]), *xs).outputs[0]
    want = ref(*xs)
    assert got.shape == want.shape
    close(got, want.astype(NP[dtype]), dtype, atol=RT[dtype] * 8)


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_each_layout_op_on_dynamic_dims(name):
    test_layout_ops_on_dynamic_dims_match_numpy.hypothesis.inner_test(name=name, m=37, n=13, dtype=F32)


def test_dropping_reduced_dims_over_a_dynamic_last_axis_is_refused_at_the_call():
    from pypto.errors import PyptoError

    with pytest.raises(PyptoError, match=r"sum over axes \(1,\) of \[M, 5, N\] without keepdim: .* pass keepdim=True"):
        compile_program(program(lambda x: L.sum(x, 1, False), [("x", ("M", 5, "N"), F32)]))
