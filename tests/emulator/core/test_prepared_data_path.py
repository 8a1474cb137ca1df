"""The data path runs a semantics prepared once per operand shapes (isa/semantics/registry.py
``prepared``; core/tileop.py keeps the run steps per shapes): one op whose operands change shape,
pad or scalar value from one iteration to the next must still compute each iteration as NumPy
does, never with what was prepared for other shapes or converted for another value."""

from __future__ import annotations

import warnings

import numpy as np

import pyptoemu
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.semantics import SEMANTICS
from tests.emulator.core.kernels import binary_kernel, pview, vec

DYN = vec(8, 64, vr="?", vc="?", pad=1)  # pad 1: tload fills the rest of the tile with zeros
DYN_VIEW = "!pto.partition_tensor_view<?x?xf32>"
FULL_VIEW = "!pto.partition_tensor_view<8x64xf32>"


def _ragged_blocks_kernel() -> str:
    """Block k (k = 0..4) of 8 rows: tload its first k+1 rows and 64 - 8k columns into one tile,
    add k + 0.5 over that valid region, widen the valid region to the whole tile and store it."""
    return f"""func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  %half = arith.constant 5.000000e-01 : f32
  %v0 = pto.make_tensor_view %arg0, shape = [%c40, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
  %v1 = pto.make_tensor_view %arg1, shape = [%c40, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
  %t = pto.alloc_tile valid_row = %c8 valid_col = %c64 : {DYN}
  scf.for %k = %c0 to %c5 step %c1 {{
    %row = arith.muli %k, %c8 : index
    %vr = arith.addi %k, %c1 : index
    %cut = arith.muli %k, %c8 : index
    %vc = arith.subi %c64, %cut : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %s = arith.addf %kf, %half : f32
    pto.set_validshape %t, %vr, %vc : {DYN}
    %pin = pto.partition_view %v0, offsets = [%row, %c0], sizes = [%vr, %vc] : !pto.tensor_view<?x?xf32> -> {DYN_VIEW}
    %pout = pto.partition_view %v1, offsets = [%row, %c0], sizes = [%c8, %c64] : !pto.tensor_view<?x?xf32> -> {FULL_VIEW}
    pto.tload ins(%pin : {DYN_VIEW}) outs(%t : {DYN})
    pto.barrier <PIPE_ALL>
    pto.tadds ins(%t, %s : {DYN}, f32) outs(%t : {DYN})
    pto.barrier <PIPE_ALL>
    pto.set_validshape %t, %c8, %c64 : {DYN}
    pto.tstore ins(%t : {DYN}) outs(%pout : {FULL_VIEW})
    pto.barrier <PIPE_ALL>
  }}
  return
}}
"""


def test_one_op_over_changing_shapes_and_scalars_computes_each_as_numpy():
    x = np.random.default_rng(3).standard_normal((40, 64)).astype(np.float32)
    res = pyptoemu.run(_ragged_blocks_kernel(), inputs={"arg0": x, "arg1": np.zeros((40, 64), np.float32)})
    want = np.zeros((40, 64), np.float32)
    for k in range(5):
        vr, vc = k + 1, 64 - 8 * k
        want[8 * k:8 * k + vr, :vc] = x[8 * k:8 * k + vr, :vc] + np.float32(k + 0.5)
    np.testing.assert_array_equal(res.outputs["arg1"].reshape(40, 64), want)


def test_a_prepared_run_step_follows_the_values_it_is_given():
    """One run step, reused: each call computes on its own tile and its own scalar (a scalar kept
    converted from the last call is used only for that very value)."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    meta = Arg("tile", "f32", a.dtype, None, 3, 4, 2, 3, 0, "vec")
    scalar = Arg("scalar", "f32", np.dtype(np.float32), None, 0, 0, 0, 0, 0, "")
    run = SEMANTICS["scalar_mul"].prepare([meta, scalar], [meta], {})
    for value, tile in ((2.0, a), (3.0, a + 1), (2.0, a - 1)):
        got = run([tile, value])[0]
        np.testing.assert_array_equal(got, tile[:2, :3] * np.float32(value))


def test_a_prepared_step_in_a_run_computes_ieee_results_without_a_warning():
    """Run steps compute under the caller's QUIET (no errstate of their own): in the simulator
    that is the run-wide one, so an overflow gives inf silently."""
    t, p = vec(16, 64), pview(16, 64)
    body = f"""    %big = arith.constant 3.000000e+38 : f32
    %t = pto.alloc_tile : {t}
    pto.tload ins(%p0 : {p}) outs(%t : {t})
    pto.barrier <PIPE_ALL>
    pto.tmuls ins(%t, %big : {t}, f32) outs(%t : {t})
    pto.barrier <PIPE_ALL>
    pto.tstore ins(%t : {t}) outs(%p1 : {p})"""
    x = np.full((16, 64), 2.0, np.float32)
    x[0, :3] = (0.0, -2.0, np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail the test
        res = pyptoemu.run(binary_kernel(body, nargs=2), inputs={"arg0": x, "arg1": np.zeros_like(x)})
    got = res.outputs["arg1"].reshape(16, 64)
    assert np.isposinf(got[1:]).all() and got[0, 0] == 0 and np.isneginf(got[0, 1]) and np.isposinf(got[0, 2])
