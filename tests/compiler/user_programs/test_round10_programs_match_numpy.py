"""Tenth red-team round: PyPTO programs written from the specs as upstream and pypto-lib users write
them (tests/compiler/user_programs/progs/r10_*.py, the docstring of each says what it computes)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pypto.errors import PyptoError, PyptoTypeError

from .helpers import HERE, load_file


def _prog(name: str):
    return load_file(os.path.join(HERE, "progs", f"r10_{name}.py"), "r10")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize(("mode", "scale"), [(3, 2.0), (0, -1.0), (-2, -1.0)])
def test_a_literal_bound_in_both_branches_of_a_host_if_keeps_the_branch_taken(mode, scale):
    """`s = -1.0` in the else branch was folded to a compile-time number that replaced the then
    branch's `s = 2.0` after the if: every mode scaled by -1."""
    mod = _prog("scale_picked_by_host_read")
    x = _rng(1).standard_normal((8, 16)).astype(np.float32)
    y = np.full_like(x, np.nan)
    mod.scale_by_mode(x, np.array([[mode]], np.int32), y)
    np.testing.assert_array_equal(y, x * np.float32(scale))


@pytest.mark.parametrize(("mode", "offset"), [(1, 3.0), (0, 0.5)])
def test_constants_computed_in_both_branches_of_a_host_if_keep_the_branch_taken(mode, offset):
    mod = _prog("offset_picked_in_branches")
    x = _rng(2).standard_normal((4, 32)).astype(np.float32)
    y = np.full_like(x, np.nan)
    mod.offset_by_mode(x, np.array([[mode]], np.int32), y)
    np.testing.assert_array_equal(y, x + np.float32(offset))


def test_a_tile_matmul_may_name_the_acc_dtype_as_its_out_dtype():
    """pypto-jit §8: out_dtype with tile operands raises "except an out_dtype that already matches";
    out_dtype=pl.FP32 on fp16 tiles was refused as an unexpected keyword."""
    mod = _prog("tile_gemm_out_dtype")
    a = _rng(3).standard_normal((16, 96)).astype(np.float16)
    b = _rng(4).standard_normal((96, 48)).astype(np.float16)
    c = np.full((16, 48), np.nan, np.float32)
    mod.gemm_k_loop(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3 * 96 ** 0.5)


def test_a_tile_matmul_out_dtype_other_than_acc_is_refused_at_its_line():
    mod = _prog("tile_gemm_out_dtype")
    a, b = np.zeros((16, 32), np.float16), np.zeros((32, 16), np.float16)
    with pytest.raises(PyptoTypeError) as e:
        mod.gemm_fp16_out(a, b, np.zeros((16, 16), np.float16))
    assert "r10_tile_gemm_out_dtype.py:32:" in str(e.value)
    assert ("pl.matmul: out_dtype=FP16 with tile operands: a tile matmul gives FP32 in Acc; convert the result "
            "with pl.cast") in str(e.value)


@pytest.mark.parametrize(("start", "steps"), [(13.0, 4), (0.5, 0), (1.0, 1)])
def test_a_while_loop_whose_condition_is_a_carried_scalar_read_from_the_tile(start, steps):
    mod = _prog("while_halving")
    x = np.full((1, 16), start, np.float32)
    y, n = np.full_like(x, np.nan), np.full((1, 1), -1, np.int32)
    mod.halve_below_one(x, y, n)
    np.testing.assert_array_equal(y, x / np.float32(2 ** steps))
    assert n[0, 0] == steps


def test_a_while_condition_that_calls_an_op_is_refused_at_its_line():
    """The read in pl.cond(...) was emitted once before the loop, on a name the loop defines: the error
    said "'v' is used before it is defined" (or, with a name defined before, the loop never re-read it)."""
    mod = _prog("while_halving")
    with pytest.raises(PyptoError) as e:
        mod.halve_cond_reads_tile(np.full((1, 16), 13.0, np.float32), np.zeros((1, 16), np.float32))
    assert "r10_while_halving.py:26:13:" in str(e.value)
    assert "pl.cond(...) must be a scalar expression of the loop-carried values without op calls" in str(e.value)
