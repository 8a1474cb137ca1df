"""Tensor-level matmul for any M, N, K and NumPy batch dims (pypto.lib.matmul), on the emulator.

Shapes larger than one L0 buffer are split over M, N and K (split-K accumulates in L0C), ragged
tails are zero-padded fractal boxes with valid shapes, batch dims broadcast like ``numpy.matmul``.
The reference is NumPy in float64 on the same (rounded) inputs; the error of an FP32 accumulation of
K products grows with K, so the tolerance scales with K.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from conftest import needs_emulator
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from pypto import DataType, ir
from pypto.enums import CAPACITY, MemorySpace
from pypto.errors import PyptoError
from pypto.ir import IRBuilder
from pypto.ir.compiler import compile_program
from pypto.ir.op import tensor
from pypto.lib.matmul import SHARE, cube_granule, plan_matmul
from pypto.runtime import run

NP = {DataType.FP16: np.dtype(np.float16), DataType.BF16: np.dtype(ml_dtypes.bfloat16),
      DataType.FP32: np.dtype(np.float32)}
# sizes: 1, primes, a granule edge, and more than one block of every buffer
DIMS = [1, 2, 3, 7, 13, 16, 31, 61, 97, 131, 257]


def matmul_program(sa: tuple, sb: tuple, dtype: DataType, a_trans: bool = False, b_trans: bool = False):
    ib = IRBuilder()
    with ib.program("Matmul") as p, ib.function("mm", type=ir.FunctionType.InCore) as f:
        a = f.param("a", ir.TensorType(list(sa), dtype))
        b = f.param("b", ir.TensorType(list(sb), dtype))
        c = tensor.matmul(a, b, out_dtype=DataType.FP32, a_trans=a_trans, b_trans=b_trans)
        f.return_type(c.type)
        ib.return_stmt(ib.let("c", c))
    return p.get_result()


def check_matmul(sa: tuple, sb: tuple, dtype: DataType, a_trans: bool = False, b_trans: bool = False, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(sa).astype(NP[dtype])
    b = rng.standard_normal(sb).astype(NP[dtype])
    la, lb = a.astype(np.float64), b.astype(np.float64)
    want = np.matmul(np.swapaxes(la, -1, -2) if a_trans else la, np.swapaxes(lb, -1, -2) if b_trans else lb)
    r = run(matmul_program(sa, sb, dtype, a_trans, b_trans), a, b)
    assert r.status == "ok" and r.launches == 1
    got = r.outputs[0]
    assert got.shape == want.shape and got.dtype == np.float32
    k = sa[-2] if a_trans else sa[-1]
    # FP32 accumulation of K unit-size products: a few ulps of the running sum per chunk
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-5, atol=2e-6 * k)
    return r


@needs_emulator
@settings(max_examples=12)
@given(m=st.sampled_from(DIMS), n=st.sampled_from(DIMS), k=st.sampled_from(DIMS + [700, 1031]),
       dtype=st.sampled_from([DataType.FP16, DataType.BF16, DataType.FP32]))
def test_any_mnk_matches_numpy(m, n, k, dtype):
    check_matmul((m, k), (k, n), dtype, seed=m * 7 + n * 3 + k)


@needs_emulator
@pytest.mark.parametrize("sa,sb,dtype", [
    ((256, 512), (512, 384), DataType.FP16),   # was "does not fit in Left": 2 x 4 blocks of 128 x 96, 4 K chunks
    ((100, 130), (130, 70), DataType.FP16),    # ragged in every dim
    ((1, 4096), (4096, 1), DataType.FP16),     # a dot product: split-K over 4 chunks of 1024
    ((3, 64, 300), (3, 300, 50), DataType.BF16),  # batched
    ((97, 61), (61, 131), DataType.FP32),      # FP32 operands (8-element boxes padded to 16)
])
def test_issue_shapes(sa, sb, dtype):
    check_matmul(sa, sb, dtype)


@needs_emulator
@pytest.mark.parametrize("sa,sb", [
    ((2, 1, 20, 30), (3, 30, 17)),   # batch dims broadcast both ways: [2, 3]
    ((5, 16, 8), (8, 4)),            # a plain matrix against a batch
    ((24, 40), (4, 40, 9)),          # the batch on the right only
])
def test_batch_dims_broadcast_like_numpy(sa, sb):
    check_matmul(sa, sb, DataType.FP16, seed=len(sa) + len(sb))


@needs_emulator
@pytest.mark.parametrize("a_trans,b_trans", [(True, False), (False, True), (True, True)])
def test_transposed_operands_over_several_blocks(a_trans, b_trans):
    """Transposed operands are read as [K, M] / [N, K] windows and moved with transpose=True."""
    m, k, n = 150, 600, 40
    check_matmul((k, m) if a_trans else (m, k), (n, k) if b_trans else (k, n), DataType.FP32, a_trans, b_trans)


@needs_emulator
def test_batched_transposed_rhs_broadcast():
    check_matmul((2, 13, 20), (9, 13), DataType.BF16, a_trans=True, b_trans=True)


@needs_emulator
def test_large_product_is_a_loop_nest_with_split_k_and_an_l1_panel():
    """256 x 512 @ 512 x 384 in FP16 does not fit L0 as whole operands: 2 x 4 blocks of 128 x 96,
    each accumulating 4 K chunks of 128 in one L0C tile (32 cube ops, 8 stores). A's 128 x 512 row
    panel fits half of L1, so it is loaded once per M block: 2 x 4 A loads + 32 B loads, not 64."""
    compiled = compile_program(matmul_program((256, 512), (512, 384), DataType.FP16), with_cpp=False)
    pto = compiled.pto["mm"]
    assert "scf.for" in pto
    assert pto.count("pto.tmatmul.acc") >= 1 and "pto.tmatmul ins" in pto
    r = pyptoemu.run(pto, entry="mm", data=False)  # timing only: the schedule, no values
    assert r.pipes["M"].instructions == 32 and r.pipes["FIX"].instructions == 8
    assert r.pipes["MTE2"].instructions == 8 + 32


@settings(max_examples=60)
@given(m=st.integers(1, 5000), n=st.integers(1, 5000), k=st.integers(1, 100000),
       dtype=st.sampled_from([DataType.FP16, DataType.BF16, DataType.FP32, DataType.INT8]))
def test_plan_fits_the_buffers(m, n, k, dtype):
    """The tiling rule: granule multiples, each tile within half its buffer (capacities from the
    machine file), no block larger than its padded dim, blocks split evenly."""
    acc = DataType.FP32 if dtype.is_float() else DataType.INT32
    t = plan_matmul(m, n, k, dtype, acc)
    g = cube_granule(dtype)
    assert t.granule == g and t.bm % g == 0 and t.bn % g == 0 and t.bk % g == 0
    size = dtype.nbytes
    assert t.bm * t.bn * acc.nbytes <= CAPACITY[MemorySpace.Acc] // SHARE
    assert t.bm * t.bk * size <= CAPACITY[MemorySpace.Left] // SHARE
    assert t.bk * t.bn * size <= CAPACITY[MemorySpace.Right] // SHARE
    assert (t.bm + t.bn) * t.bk * size <= CAPACITY[MemorySpace.Mat] // SHARE
    for extent, block in ((m, t.bm), (n, t.bn), (k, t.bk)):
        assert block <= -(-extent // g) * g
        count = -(-extent // block)
        # even split: the blocks could not be one granule smaller with the same count
        assert block - g < -(-extent // count)


def _plain_matmul(sa: tuple, sb: tuple, dtype: DataType):
    """``a @ b`` with the default result dtype (the operands')."""
    ib = IRBuilder()
    with ib.program("Matmul") as p, ib.function("mm", type=ir.FunctionType.InCore) as f:
        a = f.param("a", ir.TensorType(list(sa), dtype))
        b = f.param("b", ir.TensorType(list(sb), dtype))
        c = tensor.matmul(a, b)
        f.return_type(c.type)
        ib.return_stmt(ib.let("c", c))
    return p.get_result()


@needs_emulator
@pytest.mark.parametrize("dtype", [DataType.FP16, DataType.BF16])
def test_half_result_is_converted_by_the_store(dtype):
    """``a @ b`` of FP16/BF16 operands is an FP16/BF16 tensor, as in NumPy/torch: the FP32 accumulator
    is converted by the fixpipe store (one rounding of the FP32 sum)."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((100, 130)).astype(NP[dtype])
    b = rng.standard_normal((130, 70)).astype(NP[dtype])
    r = run(_plain_matmul((100, 130), (130, 70), dtype), a, b)
    got = r.outputs[0]
    assert got.dtype == NP[dtype]
    want = a.astype(np.float64) @ b.astype(np.float64)
    rtol = 1e-3 if dtype is DataType.FP16 else 1.6e-2
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_int8_result_names_the_fix():
    """INT8 operands accumulate in INT32; the store does not narrow integers, so the error says what
    to write instead."""
    with pytest.raises(PyptoError, match=r"accumulates in INT32.*out_dtype=pl.INT32"):
        compile_program(_plain_matmul((300, 40), (40, 20), DataType.INT8), with_cpp=False)
