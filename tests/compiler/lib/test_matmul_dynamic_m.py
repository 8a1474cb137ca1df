"""Matmul on a dynamic M (issue 12, lib12b item 2): ``[M, K] @ [K, N]`` with ``M`` a ``pl.dynamic`` dim is
one loop ``range(0, M, bm)`` of blocks with run-time valid rows (pypto.lib.matmul), the output
allocated by the caller from ``tensor.dim``; one program for every M. Against NumPy over M (1, primes,
more than one block), K and N (1, primes, more than one chunk) and fp32/fp16/bf16."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import data, program

import pypto.language as pl
from pypto import DataType
from pypto.errors import PyptoError
from pypto.ir.compiler import compile_program
from pypto.ops import tensor as T
from pypto.runtime import run

F32, F16, BF16 = DataType.FP32, DataType.FP16, DataType.BF16
NP = {F32: np.float32, F16: np.float16, BF16: ml_dtypes.bfloat16}


def _product(a, b, b_trans=False):
    return a.astype(np.float64) @ (b.T if b_trans else b).astype(np.float64)


@settings(max_examples=8, deadline=None)
@given(m=st.sampled_from([1, 7, 37, 300]), k=st.sampled_from([1, 13, 64, 700]), n=st.sampled_from([1, 29, 130]),
       dtype=st.sampled_from([F32, F16, BF16]), b_trans=st.booleans())
def test_a_dynamic_m_matches_numpy(m, k, n, dtype, b_trans):
    a, b = data((m, k), dtype, m + k), data((n, k) if b_trans else (k, n), dtype, n)
    prog = program(lambda x, y: T.matmul(x, y, b_trans=b_trans, out_dtype=F32),
                   [("a", ("M", k), dtype), ("b", b.shape, dtype)])
    got = run(prog, a, b).outputs[0]
    np.testing.assert_allclose(got, _product(a, b, b_trans), rtol=1e-5, atol=2e-6 * k ** 0.5 * 4)


def test_one_program_for_every_m():
    prog = program(lambda x, y: T.matmul(x, y), [("a", ("M", 300), F32), ("b", (300, 130), F32)])
    b = data((300, 130), F32, 1)
    for m in (1, 80, 500):  # 500: several M blocks and a run-time tail
        a = data((m, 300), F32, m)
        np.testing.assert_allclose(run(prog, a, b).outputs[0], _product(a, b), rtol=1e-5, atol=1e-4)


M = pl.dynamic("M")


@pl.jit
def project(x: pl.Tensor[[M, 96], pl.FP16], w: pl.Tensor[[96, 80], pl.FP16],
            y: pl.Out[pl.Tensor[[M, 80], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y = pl.matmul(x, w, out_dtype=pl.FP32)
    return y


def test_jit_matmul_on_a_dynamic_m_compiles_once():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((96, 80)).astype(np.float16)
    for m in (1, 64, 200):
        x = rng.standard_normal((m, 96)).astype(np.float16)
        y = np.zeros((m, 80), np.float32)
        project(x, w, y)
        np.testing.assert_allclose(y, _product(x, w), rtol=1e-4, atol=1e-3)
    assert len(project._cache) == 1


@pytest.mark.parametrize("params,message", [
    ([("a", (64, "M"), F32), ("b", (64, 48), F32)], "with a_trans=True needs a static M"),
    ([("a", (37, 64), F32), ("b", (64, "N"), F32)], "needs static shapes but M (got [37, 64] x [64, N])"),
])
def test_what_stays_static_in_a_matmul_is_refused_by_name(params, message):
    a_trans = params[0][1][0] == 64
    with pytest.raises(PyptoError) as e:
        compile_program(program(lambda x, y: T.matmul(x, y, a_trans=a_trans), params))
    assert message in str(e.value)
