"""Chunk-wise fusion of non-parallel loops (seed 003 §6.5): two pl.range loops expanded into
power-of-two chunks by ExpandPower2(expand_plain=...) run, chunk by chunk, all of the producer's
iterations and then all of the consumer's (never interleaved), with the intermediate on chip in the
unrolled chunks; FuseLoops leaves such pairs to it."""

from __future__ import annotations

import contextlib
import functools

import numpy as np

import pypto.language as pl
import pypto.runtime
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.printer import python_print
from pypto.ir.visitor import stmt_list, walk_stmts
from pypto.passes import manager
from pypto.passes.convert_to_ssa import ConvertToSSAPass
from pypto.passes.expand_power2 import ExpandPower2Pass
from pypto.passes.fuse_loops import FuseLoopsPass
from pypto.passes.manager import PassManager

BLK, COLS, N = 8, 64, 11
T = pl.Tensor[[N * BLK, COLS], pl.FP32]


@pl.program
class Scans:
    """A: a running sum of the row blocks of x (each iteration needs the one before); B: a running
    maximum of A's blocks. Both loops carry a tile from iteration to iteration."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, t: pl.Out[T], y: pl.Out[T]) -> T:
        acc0 = pl.block.full([BLK, COLS], dtype=pl.FP32, value=0.0)
        for i, (acc,) in pl.range(0, N, init_values=(acc0,)):
            s = pl.add(acc, pl.load(x, [i * BLK, 0], [BLK, COLS]))
            t = pl.store(s, [i * BLK, 0], t)
            acc_next = pl.yield_(s)  # noqa: F841 - the loop's result (unused after it)
        m0 = pl.block.full([BLK, COLS], dtype=pl.FP32, value=-1.0e30)
        for j, (m,) in pl.range(0, N, init_values=(m0,)):
            v = pl.maximum(m, pl.load(t, [j * BLK, 0], [BLK, COLS]))
            y = pl.store(v, [j * BLK, 0], y)
            m_next = pl.yield_(v)  # noqa: F841 - the loop's result (unused after it)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T) -> T:
        t: T = pl.create_tensor([N * BLK, COLS], dtype=pl.FP32)
        y: T = pl.create_tensor([N * BLK, COLS], dtype=pl.FP32)
        y = self.k(x, t, y)
        return y


PLAIN = (1, 4)  # chunks of 4, 2, 1: N = 11 is two chunks of 4, one of 2 and one of 1


@contextlib.contextmanager
def chunkwise():
    """The Default pipeline with plain loops expanded and non-parallel pairs fused chunk-wise."""
    key = manager.OptimizationStrategy.Default
    saved = manager.STRATEGIES[key]
    swap = {FuseLoopsPass: functools.partial(FuseLoopsPass, chunkwise_nonparallel=True),
            ExpandPower2Pass: functools.partial(ExpandPower2Pass, expand_plain=PLAIN)}
    manager.STRATEGIES[key] = tuple(swap.get(p, p) for p in saved)
    try:
        yield
    finally:
        manager.STRATEGIES[key] = saved


def _compile():
    with chunkwise():
        pm = PassManager.get_strategy()
    kinds = [type(p) for p in pm.passes]
    pm.passes = pm.passes[:kinds.index(ExpandPower2Pass) + 1]
    out = pm.run_passes(Scans)
    return out.get_function("k"), pm.passes[kinds.index(FuseLoopsPass)].log, pm.passes[-1].log


def _ops(stmts) -> list[str]:
    return [s.value.op.name for s in stmts if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call)
            and not isinstance(s.value.op, E.GlobalVar)]


def _want(x: np.ndarray) -> np.ndarray:
    blocks = x.reshape(N, BLK, COLS)
    return np.maximum.accumulate(np.cumsum(blocks, axis=0), axis=0).reshape(N * BLK, COLS)


def test_each_chunk_runs_all_of_the_producer_then_all_of_the_consumer():
    k, fuse_log, expand_log = _compile()
    assert any("non-parallel loops fuse chunk-wise only" in line for line in fuse_log), fuse_log
    assert len(expand_log) == 1 and "fused chunk-wise" in expand_log[0] and "stays on chip" in expand_log[0]
    top = list(stmt_list(k.body))
    loops = [s for s in top if isinstance(s, St.ForStmt)]
    assert len(loops) == 1 and E.static_int(loops[0].stop) == 2  # the two full chunks of 4: one loop
    def order(stmts) -> list[str]:
        return [o.split(".")[1] for o in _ops(stmts) if o in ("block.add", "block.maximum")]

    # the loop's chunk of 4, then the chunks of 2 and 1: in each, A's sums first, then B's maxima
    assert order(stmt_list(loops[0].body)) == ["add"] * 4 + ["maximum"] * 4
    assert order(top[top.index(loops[0]) + 1:]) == ["add", "add", "maximum", "maximum", "add", "maximum"]
    loads = [s for s in walk_stmts(k.body) if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call)
             and s.value.op.name == "block.load"]
    assert {ld.value.args[0].name for ld in loads} == {"x"}  # B reads A's tiles, never t
    stores = [s for s in walk_stmts(k.body) if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call)
              and s.value.op.name == "block.store"]
    assert len(stores) == 4 + 2 + 1  # only y: 4 in the chunk loop's body, then 2 and 1
    assert [p.name for p in k.params] == ["x", "y"]  # t has no GM buffer left


def test_chunkwise_results_match_numpy_and_keep_the_intermediate_off_gm():
    x = np.random.default_rng(5).standard_normal((N * BLK, COLS)).astype(np.float32)
    with chunkwise():
        r = pypto.runtime.run(Scans, x)
    np.testing.assert_allclose(r.outputs[0], _want(x), rtol=1e-5, atol=1e-5)
    assert r.pipes["MTE2"].instructions == N and r.pipes["MTE3"].instructions == N
    plain = pypto.runtime.run(Scans, x)  # the default pipeline: fused per iteration
    np.testing.assert_allclose(plain.outputs[0], _want(x), rtol=1e-5, atol=1e-5)


def test_a_consumer_reading_another_chunk_is_expanded_alone():
    @pl.program
    class Shifted:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, t: pl.Out[T], y: pl.Out[T]) -> T:
            for i in pl.range(0, N):
                t = pl.store(pl.exp(pl.load(x, [i * BLK, 0], [BLK, COLS])), [i * BLK, 0], t)
            for j in pl.range(0, N):
                y = pl.store(pl.relu(pl.load(t, [(N - 1 - j) * BLK, 0], [BLK, COLS])), [j * BLK, 0], y)
            return y

    p = ExpandPower2Pass(expand_plain=PLAIN)
    g = p.run_function(ConvertToSSAPass().run(Shifted).get_function("k"))
    assert len(p.log) == 1 and "not fused chunk-wise" in p.log[0], p.log
    assert "does not write in the same chunk" in p.log[0]
    assert "pl.block.load(t" in python_print(g)  # expanded one after the other: B reads t from GM
