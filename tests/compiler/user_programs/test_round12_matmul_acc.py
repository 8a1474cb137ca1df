"""``pl.matmul_acc(acc, a, b, a_trans=False, b_trans=False, init_cond=None)`` (spec pypto-jit §8):
``acc + a @ b``, and ``a @ b`` alone where ``init_cond`` holds (the ``k == 0`` step of a split-K loop).
Red team 12 found ``init_cond`` refused as an unexpected keyword, and ``pl.matmul_acc`` of tensors
refused ("argument 'acc' must be a Tile"), though the unified name dispatches on its operands."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError

K_STEP = 32


@pl.jit
def splitk_by_init_cond(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c = a @ b as a K loop of tile matmuls, the first step picked by init_cond at run time."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="splitk"):
        acc = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for k in pl.range(128 // K_STEP):
            ta = pl.load(a, [0, k * K_STEP], [16, K_STEP], target_memory=pl.Mem.Mat)
            tb = pl.load(b, [k * K_STEP, 0], [K_STEP, 32], target_memory=pl.Mem.Mat)
            acc = pl.matmul_acc(acc, pl.move(ta, target_memory=pl.Mem.Left),
                                pl.move(tb, target_memory=pl.Mem.Right), init_cond=(k == 0))
        pl.store(acc, [0, 0], c)


@pl.jit
def splitk_unrolled(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """The same with pl.unroll: init_cond is known while parsing and picks one op per step."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="splitk_unrolled"):
        acc = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for k in pl.unroll(128 // K_STEP):
            ta = pl.load(a, [0, k * K_STEP], [16, K_STEP], target_memory=pl.Mem.Mat)
            tb = pl.load(b, [k * K_STEP, 0], [K_STEP, 32], target_memory=pl.Mem.Mat)
            acc = pl.matmul_acc(acc, pl.move(ta, target_memory=pl.Mem.Left),
                                pl.move(tb, target_memory=pl.Mem.Right), init_cond=k == 0)
        pl.store(acc, [0, 0], c)


@pl.jit
def two_products_of_tensors(a: pl.Tensor, b: pl.Tensor, a2: pl.Tensor, b2: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c = a @ b + a2 @ b2^T at tensor level: pl.matmul, then pl.matmul_acc with b_trans."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="two_products"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        c[:, :] = pl.matmul_acc(acc, a2, b2, b_trans=True)


@pl.jit
def runtime_init_cond_on_tensors(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    acc = pl.create_tensor([16, 32], dtype=pl.FP32)
    for k in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="kstep"):
            acc = pl.matmul_acc(acc, a, b, init_cond=(k == 0))
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="out"):
        c[:, :] = acc


@pl.jit
def stray_keyword(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stray"):
        c[:, :] = pl.matmul_acc(pl.matmul(a, b, out_dtype=pl.FP32), a, b, init=True)


def _ab(k: int = 128) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(22)
    return rng.standard_normal((16, k)).astype(np.float16), rng.standard_normal((k, 32)).astype(np.float16)


@pytest.mark.parametrize("program", [splitk_by_init_cond, splitk_unrolled])
def test_the_first_k_step_starts_afresh_and_the_others_accumulate(program):
    a, b = _ab()
    c = np.full((16, 32), np.nan, np.float32)
    program(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-4 * 128)


def test_matmul_acc_of_tensors_adds_the_product_to_acc():
    a, b = _ab(32)
    a2, b2t = _ab(48)[0], np.random.default_rng(23).standard_normal((32, 48)).astype(np.float16)
    c = np.full((16, 32), np.nan, np.float32)
    two_products_of_tensors(a, b, a2, b2t, c)
    f = np.float32
    np.testing.assert_allclose(c, a.astype(f) @ b.astype(f) + a2.astype(f) @ b2t.astype(f).T, rtol=1e-5, atol=1e-3)


def test_a_run_time_init_cond_on_tensors_is_refused_at_its_line_saying_what_works():
    a, b = _ab(32)
    with pytest.raises(PyptoError, match=r"test_round12_matmul_acc.py:\d+:\d+: .*pl.matmul_acc: init_cond is a "
                                         r"run-time value here.*give tile operands"):
        runtime_init_cond_on_tensors(a, b, np.zeros((16, 32), np.float32))


def test_an_unknown_keyword_is_named():
    a, b = _ab(32)
    with pytest.raises(PyptoError, match=r"pl.matmul_acc: unexpected keyword argument 'init'"):
        stray_keyword(a[:, :32].copy(), b, np.zeros((16, 32), np.float32))
