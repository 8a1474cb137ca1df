"""Matmul with any M, K, N: tails are padded (whole fractal boxes, zero fill, valid shapes) or rejected.

The cube stores its operands in fractal boxes (16 x 32/sizeof(T) for Mat/Left, 32/sizeof(T) x 16 for
Right, 16 x 16 for Acc; pto-text-format §5.2). A tile whose shape is not a whole number of boxes
still occupies whole boxes, so it overlaps the next planned tile: 100x130 @ 130x70 in FP16 used to
come back with a max error of 11.6 and no diagnostic. Tensor-level matmul now pads every dim and
keeps the true extents as valid shapes; a tile-level program gets a located error naming the padded
shape to use.
"""

import ml_dtypes
import numpy as np
import pytest
from conftest import dsl_program, needs_emulator

from pypto import DataType, ir
from pypto.errors import PyptoError
from pypto.ir import IRBuilder
from pypto.ir.op import tensor
from pypto.runtime import run

BF16 = np.dtype(ml_dtypes.bfloat16)
NP = {DataType.FP16: np.dtype(np.float16), DataType.BF16: BF16, DataType.FP32: np.dtype(np.float32)}
# relative tolerance of one product term (operand rounding is exact: NumPy sees the same rounded
# inputs; what differs is the accumulation order in FP32), scaled by K below
EPS = {DataType.FP16: 1e-6, DataType.BF16: 1e-6, DataType.FP32: 1e-6}


def tensor_matmul(m: int, k: int, n: int, dtype: DataType, a_trans: bool = False, b_trans: bool = False):
    ib = IRBuilder()
    with ib.program("RaggedMatmul") as p, ib.function("mm", type=ir.FunctionType.InCore) as f:
        a = f.param("a", ir.TensorType([k, m] if a_trans else [m, k], dtype))
        b = f.param("b", ir.TensorType([n, k] if b_trans else [k, n], dtype))
        f.return_type(ir.TensorType([m, n], DataType.FP32))
        c = ib.let("c", tensor.matmul(a, b, out_dtype=DataType.FP32, a_trans=a_trans, b_trans=b_trans))
        ib.return_stmt(c)
    return p.get_result()


def operands(m, k, n, dtype, a_trans=False, b_trans=False, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if a_trans else (m, k)).astype(NP[dtype])
    b = rng.standard_normal((n, k) if b_trans else (k, n)).astype(NP[dtype])
    want = (a.T if a_trans else a).astype(np.float64) @ (b.T if b_trans else b).astype(np.float64)
    return a, b, want


def assert_product(got, want, k):
    # FP32 accumulation of K products of magnitude ~1: error grows like sqrt(K) ulps of the sum
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-5, atol=1e-5 * k)


@needs_emulator
def test_red_team_case_100x130_at_130x70_fp16():
    """The reported case: K = 130 is not a multiple of the 16-element box (was max error 11.6)."""
    a, b, want = operands(100, 130, 70, DataType.FP16)
    r = run(tensor_matmul(100, 130, 70, DataType.FP16), a, b)
    assert not r.errors(), r.errors()
    assert_product(r.outputs[0], want, 130)


@needs_emulator
@pytest.mark.parametrize("m,k,n", [(1, 7, 3), (17, 33, 15), (31, 16, 40), (16, 130, 1), (48, 72, 20)])
@pytest.mark.parametrize("dtype", [DataType.FP16, DataType.BF16, DataType.FP32])
def test_tensor_matmul_any_shape(m, k, n, dtype):
    a, b, want = operands(m, k, n, dtype, seed=m + k + n)
    r = run(tensor_matmul(m, k, n, dtype), a, b)
    assert not r.errors(), r.errors()
    assert_product(r.outputs[0], want, k)


@needs_emulator
@pytest.mark.parametrize("a_trans,b_trans", [(True, False), (False, True), (True, True)])
def test_tensor_matmul_transposed_ragged(a_trans, b_trans):
    """Transposed operands swap which dims are rows of the Mat tile: every dim is padded to a box edge
    that fits both orientations (FP32 boxes are 16x8 one way, 8x16 the other)."""
    a, b, want = operands(20, 13, 9, DataType.FP32, a_trans, b_trans, seed=3)
    r = run(tensor_matmul(20, 13, 9, DataType.FP32, a_trans, b_trans), a, b)
    assert not r.errors(), r.errors()
    assert_product(r.outputs[0], want, 13)


MAT_LOAD = """
am = pl.load(a, [0, 0], {ash}, {avalid}target_memory=pl.MemorySpace.Mat)
bm = pl.load(b, [0, 0], {bsh}, {bvalid}target_memory=pl.MemorySpace.Mat)
r = pl.matmul(pl.move(am, target_memory=pl.MemorySpace.Left), pl.move(bm, target_memory=pl.MemorySpace.Right))
"""


def test_unaligned_cube_tile_is_rejected_with_the_padded_shape():
    body = MAT_LOAD.format(ash="[100, 130]", avalid="", bsh="[144, 80]", bvalid="valid_shapes=[130, 70], ")
    with pytest.raises(PyptoError) as e:
        dsl_program(body, {"a": ((100, 130), "FP16"), "b": ((130, 70), "FP16")}, ((100, 70), "FP32"))
    msg = e.value.render()
    assert "am = pl.load(a, [0, 0], [100, 130]" in msg.splitlines()[1]  # located at the load's line
    assert "[112, 144] with valid_shape=[100, 130]" in msg, msg  # pl.load's keyword


def test_fp32_box_is_16x8():
    """FP32 Mat boxes are 16 rows x 8 cols: [16, 8] is accepted as is, [16, 12] is not."""
    body = MAT_LOAD.format(ash="[16, 12]", avalid="", bsh="[16, 16]", bvalid="valid_shapes=[12, 16], ")
    with pytest.raises(PyptoError, match=r"multiple of \[16, 8\].*\[16, 16\] with valid_shape=\[16, 12\]"):
        dsl_program(body, {"a": ((16, 12), "FP32"), "b": ((12, 16), "FP32")}, ((16, 16), "FP32"))


@needs_emulator
def test_tile_level_padded_operands_with_valid_shapes():
    """The form the error message asks for: padded tiles, true extents as valid shapes; the Acc tile
    takes the product's valid region (M x N), so the store writes exactly [100, 70]."""
    body = MAT_LOAD.format(ash="[112, 144]", avalid="valid_shapes=[100, 130], ", bsh="[144, 80]",
                           bvalid="valid_shapes=[130, 70], ")
    prog = dsl_program(body, {"a": ((100, 130), "FP16"), "b": ((130, 70), "FP16")}, ((100, 70), "FP32"))
    a, b, want = operands(100, 130, 70, DataType.FP16, seed=5)
    r = run(prog, a, b)
    assert not r.errors(), r.errors()
    assert_product(r.outputs[0], want, 130)


@needs_emulator
def test_k_loop_with_a_ragged_last_slice():
    """K = 100 as 64 + 36: the last slice is a [32, 48] tile with valid K = 36, accumulated by matmul_acc."""
    body = """
a0 = pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
b0 = pl.load(b, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left), pl.move(b0, target_memory=pl.MemorySpace.Right))
a1 = pl.load(a, [0, 64], [32, 48], valid_shapes=[32, 36], target_memory=pl.MemorySpace.Mat)
b1 = pl.load(b, [64, 0], [48, 32], valid_shapes=[36, 32], target_memory=pl.MemorySpace.Mat)
r = pl.matmul_acc(acc, pl.move(a1, target_memory=pl.MemorySpace.Left), pl.move(b1, target_memory=pl.MemorySpace.Right))
"""
    prog = dsl_program(body, {"a": ((32, 100), "FP16"), "b": ((100, 32), "FP16")}, ((32, 32), "FP32"))
    a, b, want = operands(32, 100, 32, DataType.FP16, seed=6)
    r = run(prog, a, b)
    assert not r.errors(), r.errors()
    assert_product(r.outputs[0], want, 100)


def test_valid_k_mismatch_is_rejected():
    body = MAT_LOAD.format(ash="[16, 32]", avalid="valid_shapes=[16, 30], ", bsh="[32, 16]",
                           bvalid="valid_shapes=[31, 16], ")
    with pytest.raises(PyptoError, match=r"valid K extents differ.*\[16, 30\].*\[31, 16\]"):
        dsl_program(body, {"a": ((16, 32), "FP16"), "b": ((32, 16), "FP16")}, ((16, 16), "FP32"))
