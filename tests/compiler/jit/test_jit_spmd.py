"""Placement on the chip from @pl.jit code: pl.spmd blocks, block and lane ids, atomic stores,
pl.pipeline / pl.cluster, name_hint as the kernel name (spec pypto-jit §4, §5, §6.4)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import run
from pyptoemu import KernelFault

ROWS = 16


@pl.jit
def add_rows_spmd(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    rows, cols = a.shape
    for i in pl.spmd(rows // ROWS, name_hint="add_rows"):
        r = i * ROWS
        t = pl.add(pl.load(a, [r, 0], [ROWS, cols]), pl.load(b, [r, 0], [ROWS, cols]))
        pl.store(t, [r, 0], c)


def test_spmd_loop_runs_one_block_per_core_concurrently():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    c = np.full_like(a, np.nan)
    add_rows_spmd(a, b, c)
    np.testing.assert_array_equal(c, a + b)  # each block wrote its own 16 rows
    r = add_rows_spmd.last_result
    assert r.launches == 1
    assert sorted(b for core in r.cores for b in core.blocks) == [0, 1, 2, 3]
    assert len({core.id for core in r.cores}) == 4  # four AIVs at once, not one core four times
    assert r.cycles < 2 * max(core.cycles for core in r.cores)
    assert list(add_rows_spmd.compile(a, b, c).pto) == ["add_rows"]  # name_hint names the kernel


@pl.jit
def block_ids(out: pl.Out[pl.Tensor]):
    with pl.spmd(out.shape[0] // 8):
        i = pl.get_block_idx()
        n = pl.get_block_num()
        lane = pl.get_subblock_idx()
        row = pl.full([8, 16], dtype=pl.FP32, value=0.0)
        t = pl.adds(pl.adds(row, pl.cast(i * 100 + n, pl.FP32)), pl.cast(lane * 1000, pl.FP32))
        pl.store(t, [i * 8, 0], out)


def test_inline_spmd_body_reads_block_index_count_and_lane():
    out = np.full((40, 16), -1.0, np.float32)
    block_ids(out)
    # block i of 5 wrote i*100 + 5 into its 8 rows; a vector-only kernel runs on one AIV: lane 0
    want = np.repeat(np.arange(5) * 100 + 5, 8)[:, None] * np.ones((1, 16))
    np.testing.assert_array_equal(out, want)


@pl.jit.incore
def scale_block(x: pl.Tensor, y: pl.Out[pl.Tensor], factor: pl.Scalar[pl.FP32]):
    i = pl.get_block_idx()
    t = pl.load(x, [i * ROWS, 0], [ROWS, x.shape[1]])
    y = pl.store(pl.muls(t, factor), [i * ROWS, 0], y)
    return y


@pl.jit
def scale_dispatch(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.cluster(), pl.spmd(x.shape[0] // ROWS):  # one with, two contexts: nested
        y = scale_block(x, y, 2.5)
    return y


@pl.jit
def scale_at(x: pl.Tensor, y: pl.Out[pl.Tensor], blocks: int):
    with pl.spmd(blocks, name_hint="unused_when_at_names_it"):  # noqa: SIM117  (the form upstream writes)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale_region"):
            i = pl.get_block_idx()
            t = pl.load(x, [i * ROWS, 0], [ROWS, x.shape[1]])
            pl.store(pl.muls(t, -1.0), [i * ROWS, 0], y)


def test_spmd_dispatches_one_kernel_call_or_one_at_region():
    x = np.random.default_rng(1).standard_normal((48, 32)).astype(np.float32)
    y = np.zeros_like(x)
    scale_dispatch(x, y)
    np.testing.assert_allclose(y, x * 2.5, rtol=1e-6)
    assert len(scale_dispatch.last_result.cores) == 3
    y2 = np.zeros_like(x)
    scale_at(x, y2, 2)  # two blocks: the last 16 rows stay untouched
    np.testing.assert_array_equal(y2[:32], -x[:32])
    assert not y2[32:].any()
    assert list(scale_at.compile(x, y2, 2).pto) == ["scale_region"]


@pl.jit
def splitk_sum(x: pl.Tensor, out: pl.Out[pl.Tensor], atomic: bool):
    """out = sum of the row blocks of x, one block per SPMD block, added atomically."""
    rows, cols = x.shape
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero_out"):
        pl.store(pl.full([ROWS, cols], dtype=x.dtype, value=0), [0, 0], out)
    for i in pl.spmd(rows // ROWS):
        t = pl.load(x, [i * ROWS, 0], [ROWS, cols])
        if atomic:
            pl.store(t, [0, 0], out, atomic=pl.AtomicType.Add)
        else:
            pl.store(t, [0, 0], out)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-6), (np.float16, 2e-3), (ml_dtypes.bfloat16, 1.6e-2),
                                         (np.int32, 0)])
def test_atomic_stores_accumulate_across_blocks(dtype, rtol):
    rng = np.random.default_rng(2)
    raw = rng.integers(-20, 20, (6 * ROWS, 32)) if dtype is np.int32 else rng.standard_normal((6 * ROWS, 32))
    x = raw.astype(dtype)
    out = np.full((ROWS, 32), 7, dtype)  # zeroed by the first kernel, then six adds
    splitk_sum(x, out, True)
    want = x.astype(np.float64).reshape(6, ROWS, 32).sum(axis=0)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=rtol, atol=rtol * 4)


def test_plain_stores_of_several_blocks_to_one_window_are_a_race():
    x = np.ones((4 * ROWS, 32), np.float32)
    with pytest.raises(KernelFault, match="race"):
        splitk_sum(x, np.zeros((ROWS, 32), np.float32), False)


@pl.jit
def atomic_u8(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for _ in pl.spmd(2):
        pl.store(pl.load(x, [0, 0], [ROWS, 32]), [0, 0], out, atomic=pl.AtomicType.Add)


def test_atomic_add_of_an_unsupported_dtype_is_refused():
    x = np.ones((ROWS, 32), np.uint8)
    with pytest.raises(PyptoError, match="atomic add into UINT8 is not supported"):
        atomic_u8(x, np.zeros_like(x))


@pl.jit
def pipelined(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.pipeline(0, x.shape[0], ROWS, stage=2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="neg_rows"):
            pl.store(pl.neg(pl.load(x, [r, 0], [ROWS, 32])), [r, 0], y)


def test_pipeline_loop_means_range():
    x = np.random.default_rng(3).standard_normal((48, 32)).astype(np.float32)
    y = np.zeros_like(x)
    pipelined(x, y)
    np.testing.assert_array_equal(y, -x)


@pl.jit
def misuse(x: pl.Tensor, y: pl.Out[pl.Tensor], case: int):
    """Each case is one wrong use of pl.spmd / pl.pipeline (``case`` is decided when specializing)."""
    if case == 0:
        with pl.spmd(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [0, 0], [16, 32])
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [0, 0], [16, 32])
    elif case == 1:
        with pl.spmd(2):
            t = pl.load(x, [0, 0], [16, 32])
            pl.store(t, [0, 0], y)
    elif case == 2:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.spmd(2):
                t = pl.load(x, [i, 0], [16, 32])
    elif case == 3:
        for i in pl.spmd(2):
            r = i * 16
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(x, [r, 0], [16, 32])
    elif case == 4:
        for i in pl.spmd(0):
            t = pl.load(x, [i, 0], [16, 32])
    elif case == 5:
        for i in pl.spmd(2, deps=[x]):
            t = pl.load(x, [i, 0], [16, 32])
    elif case == 6:
        with pl.spmd(2, predicate=x):
            i = pl.get_block_idx()
    elif case == 7:
        for r in pl.pipeline(0, 32, 16):
            t = pl.load(x, [r, 0], [16, 32])
    else:
        n = pl.tensor.dim(x, 0)
        for i in pl.spmd(n):
            t = pl.load(x, [i, 0], [16, 32])


@pytest.mark.parametrize("case, match", enumerate([
    "dispatches 2 kernels", "every block would do identical work", "cannot sit inside an InCore region",
    "do not nest", "must be positive", "does not accept 'deps=' here", "predicate", "needs stage=",
    "known when the program is specialized",
]))
def test_spmd_misuse_is_reported_at_the_users_line(case, match):
    x = np.ones((32, 32), np.float32)
    with pytest.raises(PyptoError, match=match) as e:
        misuse(x, np.zeros_like(x), case)
    assert "test_jit_spmd.py:" in str(e.value)  # located at the user's line


@pl.jit
def neg_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], parallel: bool, overlap: int):
    rows = x.shape[0]
    if parallel:
        for r in pl.parallel(0, rows - overlap, ROWS):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="neg_rows"):
                t = pl.load(x, [r, 0], [ROWS + overlap, 32])
                pl.store(pl.neg(t), [r, 0], y)
    else:
        for r in pl.range(0, rows, ROWS):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="neg_rows"):
                pl.store(pl.neg(pl.load(x, [r, 0], [ROWS, 32])), [r, 0], y)


def test_parallel_loop_of_one_kernel_is_one_launch_of_concurrent_blocks():
    x = np.random.default_rng(4).standard_normal((128, 32)).astype(np.float32)
    y_par, y_seq = np.zeros_like(x), np.zeros_like(x)
    neg_rows(x, y_par, True, 0)
    par = neg_rows.last_result
    neg_rows(x, y_seq, False, 0)
    seq = neg_rows.last_result
    np.testing.assert_array_equal(y_par, -x)
    np.testing.assert_array_equal(y_seq, -x)
    assert (par.launches, seq.launches) == (1, 8)  # pl.range: one launch per iteration, one after another
    assert len({core.id for core in par.cores}) == 8
    assert par.cycles * 3 < seq.cycles  # eight iterations overlap on eight AIVs


def test_iterations_of_a_parallel_loop_that_conflict_are_a_race():
    x = np.ones((64 + ROWS, 32), np.float32)
    with pytest.raises(KernelFault, match="race"):
        neg_rows(x, np.zeros_like(x), True, ROWS)  # iterations store 32 rows, 16 apart: they overlap


@pl.jit.incore
def double_rows(x: pl.Tensor, y: pl.Out[pl.Tensor], row: pl.Scalar[pl.INDEX]):
    y = pl.store(pl.muls(pl.load(x, [row, 0], [ROWS, 32]), 2.0), [row, 0], y)
    return y


@pl.jit.incore
def tag_rows(y: pl.Out[pl.Tensor], row: pl.Scalar[pl.INDEX]):
    t = pl.full([ROWS, 32], dtype=pl.FP32, value=0.0)
    y = pl.store(pl.adds(t, pl.cast(pl.get_block_idx() + 10 * pl.get_block_num(), pl.FP32)), [row, 0], y)
    return y


@pl.jit
def parallel_calls(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    for i in pl.parallel(x.shape[0] // ROWS):
        y = double_rows(x, y, i * ROWS)  # carried result: the call's Out tensor
    for i in pl.parallel(2):
        z = tag_rows(z, i * ROWS)  # reads its own block id: stays one launch per iteration
    return y


def test_parallel_calls_of_jit_kernels():
    x = np.random.default_rng(5).standard_normal((96, 32)).astype(np.float32)
    y, z = np.zeros_like(x), np.full((2 * ROWS, 32), -1.0, np.float32)
    parallel_calls(x, y, z)
    np.testing.assert_array_equal(y, 2 * x)
    np.testing.assert_array_equal(z, 10.0)  # block 0 of 1, twice
    assert parallel_calls.last_result.launches == 3


@pl.jit
def one_row_per_aiv(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for i in pl.spmd(pl.system.available_aiv_count()):
        pl.store(pl.adds(pl.load(x, [i, 0], [1, 16]), 1.0), [i, 0], y)


def test_spmd_over_every_vector_core_of_the_chip():
    x = np.arange(48 * 16, dtype=np.float32).reshape(48, 16)
    y = np.zeros_like(x)
    one_row_per_aiv(x, y)  # isa_specs/machines/a2a3.yaml: 24 groups x 2 AIV
    np.testing.assert_array_equal(y, x + 1)
    assert len({core.id for core in one_row_per_aiv.last_result.cores}) == 48


@pl.program
class SpmdProgram:
    """The older form: a program method launches a kernel as blocks with the dispatch form."""

    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
        i = pl.tile.get_block_idx()
        pl.store(pl.muls(pl.load(x, [i * 16, 0], [16, 32]), 2.0), [i * 16, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
        with pl.spmd(4):
            self.twice(x, y)


@pytest.mark.parametrize("machine", ["a2a3", "a5"])
def test_program_form_spmd_runs_its_blocks_on_four_cores_of_the_chip(machine):
    x = np.random.default_rng(6).standard_normal((64, 32)).astype(np.float32)
    r = run(SpmdProgram, x, machine=machine)
    np.testing.assert_allclose(r.arrays["y"], 2 * x, rtol=1e-6)
    assert r.machine == machine and len(r.cores) == 4  # a5.yaml is a chip too (AIC/AIV groups)


@pl.jit
def spmd_tasks(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor], declare: bool):
    with pl.manual_scope():
        with pl.spmd(2, name_hint="double") as t1:  # noqa: SIM117  (the form upstream writes)
            with pl.at(level=pl.Level.CORE_GROUP):
                i = pl.get_block_idx()
                pl.store(pl.muls(pl.load(x, [i * ROWS, 0], [ROWS, 32]), 2.0), [i * ROWS, 0], y)
        if declare:
            with pl.spmd(2, deps=[t1]):
                j = pl.get_block_idx()
                pl.store(pl.adds(pl.load(y, [j * ROWS, 0], [ROWS, 32]), 1.0), [j * ROWS, 0], z)
        else:
            with pl.spmd(2):
                j = pl.get_block_idx()
                pl.store(pl.adds(pl.load(y, [j * ROWS, 0], [ROWS, 32]), 1.0), [j * ROWS, 0], z)


def test_spmd_launches_are_tasks_of_a_manual_scope():
    x = np.random.default_rng(7).standard_normal((2 * ROWS, 32)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    spmd_tasks(x, y, z, True)  # `with pl.spmd(n, deps=[t1])`: the declared edge orders the launches
    np.testing.assert_allclose(z, 2 * x + 1, rtol=1e-6)
    with pytest.raises(PyptoError, match="race: task .* both use tensor 'y'"):
        spmd_tasks(x, y, z, False)  # the same launches with no edge: a race on hardware


@pl.jit
def loop_task(x: pl.Tensor, y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        for i in pl.spmd(2):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="triple") as t1:  # the loop's kernel and task
                pl.store(pl.muls(pl.load(x, [i * ROWS, 0], [ROWS, 32]), 3.0), [i * ROWS, 0], y)
        with pl.spmd(2, deps=[t1]):
            j = pl.get_block_idx()
            pl.store(pl.neg(pl.load(y, [j * ROWS, 0], [ROWS, 32])), [j * ROWS, 0], z)


def test_spmd_loop_region_names_its_task():
    x = np.random.default_rng(8).standard_normal((2 * ROWS, 32)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    loop_task(x, y, z)
    np.testing.assert_allclose(z, -3 * x, rtol=1e-6)
    assert "triple" in loop_task.compile(x, y, z).pto
