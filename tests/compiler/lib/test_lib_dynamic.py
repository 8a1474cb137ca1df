"""pypto.lib on dynamic shapes (issue 12 item 1): a ``pl.dynamic`` row count (or leading dim) is tiled
with a run-time trip count and run-time valid rows; the last axis stays static. Checked against
NumPy for row counts 1, primes and more than one buffer, and the refusals of what stays static."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import NP, close, data, program

from pypto import DataType
from pypto.errors import CompileError, PyptoError
from pypto.ir.compiler import compile_program
from pypto.lib import ops as L
from pypto.ops import tensor as T
from pypto.runtime import run

F32, F16, BF16 = DataType.FP32, DataType.FP16, DataType.BF16
ROWS = st.sampled_from([1, 2, 7, 37, 300])  # 300 rows of 130 fp32: several row blocks and a tail
COLS = st.sampled_from([1, 7, 64, 130])


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _with_builder(fn):
    fn.with_builder = True
    return fn


@_with_builder
def _exp_plus_vector(ib, x, b):
    return T.add(ib.let("e", T.exp(x)), b)


@_with_builder
def _minus_row_max(ib, x, b):
    return T.sub(x, ib.let("m", T.row_max(x)))


ELEMENTWISE = {
    "exp+b": (_exp_plus_vector, lambda x, b: np.exp(x) + b),
    "x-rowmax": (_minus_row_max, lambda x, b: x - x.max(-1, keepdims=True)),
    "relu*b": (lambda x, b: T.mul(x, b) if False else L.relu(x), lambda x, b: np.maximum(x, 0)),
    "sigmoid": (lambda x, b: L.sigmoid(x), lambda x, b: 1 / (1 + np.exp(-x))),
    "muls": (lambda x, b: T.muls(x, 3.0), lambda x, b: x * 3),
}


def _run_rows(build, ref, rows, cols, dtype, lead=(), seed=0):
    shape = (rows, *lead, cols)
    x, b = data(shape, dtype, seed), data((cols,), dtype, seed + 1)
    params = [("x", ("M", *lead, cols), dtype), ("b", (cols,), dtype)]
    got = run(program(build, params), x, b).outputs[0]
    want = ref(x.astype(np.float32), b.astype(np.float32)).astype(NP[dtype])
    return got, want


@settings(max_examples=14, deadline=None)
@given(name=st.sampled_from(sorted(ELEMENTWISE)), rows=ROWS, cols=COLS, dtype=st.sampled_from([F32, F16]))
def test_elementwise_on_a_dynamic_row_count_matches_numpy(name, rows, cols, dtype):
    got, want = _run_rows(*ELEMENTWISE[name], rows, cols, dtype)
    close(got, want, dtype)


REDUCTIONS = {
    "sum": (lambda x, b: L.sum(x, -1, True), lambda x, b: x.sum(-1, keepdims=True)),
    "max": (lambda x, b: L.max(x, -1, False), lambda x, b: x.max(-1)),
    "min": (lambda x, b: L.min(x, -1, True), lambda x, b: x.min(-1, keepdims=True)),
    "mean": (lambda x, b: L.mean(x, -1, False), lambda x, b: x.mean(-1)),
}


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(sorted(REDUCTIONS)), rows=ROWS, cols=COLS, dtype=st.sampled_from([F32, F16]))
def test_row_reductions_on_a_dynamic_row_count_match_numpy(name, rows, cols, dtype):
    got, want = _run_rows(*REDUCTIONS[name], rows, cols, dtype)
    close(got, want, dtype, atol=RT[dtype] * cols ** 0.5)


RT = {F32: 1e-5, F16: 2e-3, BF16: 1.6e-2}
EPS = 1e-6

COMPOSITES = {
    "softmax": (lambda x, b: L.softmax(x), lambda x, b: _softmax(x)),
    "log_softmax": (lambda x, b: L.log_softmax(x), lambda x, b: np.log(_softmax(x))),
    "rms_norm": (lambda x, b: L.rms_norm(x, b, eps=EPS),
                 lambda x, b: x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * b),
    "layer_norm": (lambda x, b: L.layer_norm(x, b, b, eps=EPS),
                   lambda x, b: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + EPS) * b + b),
}


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(sorted(COMPOSITES)), rows=ROWS, cols=COLS, dtype=st.sampled_from([F32, F16, BF16]))
def test_composites_on_a_dynamic_row_count_match_numpy(name, rows, cols, dtype):
    got, want = _run_rows(*COMPOSITES[name], rows, cols, dtype)
    close(got, want, dtype, atol=RT[dtype] * 10)


@pytest.mark.parametrize("name,rows,cols", [("softmax", 37, 6000), ("rms_norm", 3, 9000), ("sum", 5, 9000)])
def test_rows_wider_than_a_tile_on_a_dynamic_row_count(name, rows, cols):
    """The two-level loop (column chunks inside each run-time row block)."""
    build, ref = {**COMPOSITES, **REDUCTIONS}[name]
    got, want = _run_rows(build, ref, rows, cols, F32)
    close(got, want, F32, atol=1e-4)


@pytest.mark.parametrize("lead", [(5,), (1, 3)])
def test_a_dynamic_leading_dim(lead):
    """``[M, ..., C]``: the dynamic dim is a leading one, looped over with a run-time trip count."""
    got, want = _run_rows(*COMPOSITES["softmax"], 37, 64, F32, lead=lead)
    close(got, want, F32)
    got, want = _run_rows(*ELEMENTWISE["exp+b"], 37, 64, F32, lead=lead)
    close(got, want, F32)


def test_one_compiled_kernel_serves_every_row_count():
    """The row count is a kernel argument: the same program runs 1, 37 and 300 rows."""
    prog = program(_exp_plus_vector, [("x", ("M", 130), F32), ("b", (130,), F32)])
    for rows in (1, 37, 300):
        x, b = data((rows, 130), F32, rows), data((130,), F32, 2)
        close(run(prog, x, b).outputs[0], np.exp(x) + b, F32)


def test_consecutive_ops_on_a_dynamic_row_count_still_fuse():
    """exp then add over the same dynamic plan: one loop, no GM workspace for exp's result."""
    compiled = compile_program(program(_exp_plus_vector, [("x", ("M", 130), F32), ("b", (130,), F32)]))
    kern = compiled.program.get_function("kern")
    assert [p.name for p in kern.params if p.name.startswith("ws")] == []


@pytest.mark.parametrize("build,shape,message", [
    (lambda x: T.reshape(x, [64, x.type.shape[1]]), (64, "M"), "tensor.reshape of a dynamic last axis"),
    (lambda x: T.matmul(x, x, b_trans=True), ("M", 64), "tensor.matmul needs static shapes but M (got [M, 64] x [M, 64])"),
])
def test_what_stays_static_is_refused_by_name(build, shape, message):
    """A dynamic last axis, reductions over other axes and the layout ops are tiled now
    (test_lib_dynamic_width.py; exp on [4, M], sum over axis 0, softmax of [8, M] and transpose were in
    this list); a matmul's N (here the dynamic rows of B) and a reshape of a dynamic last axis stay static."""
    with pytest.raises(CompileError) as e:
        compile_program(program(build, [("x", shape, F32)]))
    assert message in str(e.value)
    assert "dynamic dims (the last axis too) are tiled for element-wise ops" in str(e.value)


def test_concat_along_a_dynamic_axis_is_refused_at_the_call():
    with pytest.raises(PyptoError, match=r"tensor.concat: along a dynamic axis .* concat along a static axis"):
        compile_program(program(lambda x: L.concat(x, x, 0), [("x", ("M", 64), F32)]))
