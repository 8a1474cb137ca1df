"""pl.parallel_for_power2 and ExpandPower2 (seed 003 §6.4-6.5): power-of-two chunks between the bounds
plus a predicated tail, a bounded number of chunk bodies whatever the extent, results equal to the
plain loop for constant and run-time extents, and two such loops fused chunk by chunk."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest

import pypto.language as pl
import pypto.runtime
from pypto.errors import PyptoError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.printer import python_print
from pypto.ir.visitor import stmt_list, walk_stmts
from pypto.passes.convert_to_ssa import ConvertToSSAPass
from pypto.passes.expand_power2 import UNROLL_LIMIT, ExpandPower2Pass, chunk_templates, plan_chunks
from pypto.passes.fuse_loops import FuseLoopsPass
from pypto.passes.manager import PassManager

BLK, COLS = 8, 64
NMAX = 48
T = pl.Tensor[[NMAX * BLK, COLS], pl.FP32]


@pytest.mark.parametrize("lo, hi", [(1, 64), (2, 16), (4, 4), (1, 1)])
def test_the_chunks_tile_every_extent_with_a_bounded_number_of_bodies(lo, hi):
    bound = int(math.log2(hi // lo)) + 2
    for n in range(1, 1001):
        plan = plan_chunks(n, lo, hi)
        assert plan[0].base == 0 and sum(c.valid for c in plan) == n
        assert all(a.base + a.size == b.base for a, b in itertools.pairwise(plan))
        assert all(lo <= c.size <= hi and c.size & (c.size - 1) == 0 for c in plan)
        rest = [c for c in plan if c.size < hi or c.valid < c.size]
        assert len({c.size for c in rest if c.valid == c.size}) == len([c for c in rest if c.valid == c.size])
        assert all(c.valid == c.size for c in plan[:-1])  # only the last chunk is predicated
        assert len(chunk_templates(n, lo, hi)) <= bound
    assert {(c.base, c.size, c.valid) for c in plan_chunks(45, 2, 16)} == {
        (0, 16, 16), (16, 16, 16), (32, 8, 8), (40, 4, 4), (44, 2, 1)}


@pl.program
class Dynamic:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, y: pl.Out[T], n: pl.Scalar[pl.INDEX]) -> T:
        for i in pl.parallel_for_power2(n, min_chunk=2, max_chunk=16):
            a = pl.load(x, [i * BLK, 0], [BLK, COLS])
            y = pl.store(pl.exp(a), [i * BLK, 0], y)
        return y


@pl.program
class Static:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, y: pl.Out[T]) -> T:
        for i in pl.parallel_for_power2(45, min_chunk=2, max_chunk=16):
            a = pl.load(x, [i * BLK, 0], [BLK, COLS])
            y = pl.store(pl.exp(a), [i * BLK, 0], y)
        return y


@pl.program
class TwoLoops:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: T, t: pl.Out[T], y: pl.Out[T], n: pl.Scalar[pl.INDEX]) -> T:
        for i in pl.parallel_for_power2(n, min_chunk=1, max_chunk=8):
            a = pl.load(x, [i * BLK, 0], [BLK, COLS])
            t = pl.store(pl.exp(a), [i * BLK, 0], t)
        for j in pl.parallel_for_power2(n, min_chunk=1, max_chunk=8):
            b = pl.load(t, [j * BLK, 0], [BLK, COLS])
            y = pl.store(pl.relu(pl.sub(b, 1.5)), [j * BLK, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: T, n: pl.Scalar[pl.INDEX]) -> T:
        t: T = pl.create_tensor([NMAX * BLK, COLS], dtype=pl.FP32)
        y: T = pl.create_tensor([NMAX * BLK, COLS], dtype=pl.FP32)
        y = self.k(x, t, y, n)
        return y


def _x() -> np.ndarray:
    return np.random.default_rng(3).standard_normal((NMAX * BLK, COLS)).astype(np.float32)


def _loads(body) -> int:
    """Loads the body executes for a constant extent: each load weighted by its loops' trip counts."""
    total = 0
    for s in stmt_list(body):
        if isinstance(s, St.ForStmt):
            total += E.static_int(s.stop) * _loads(s.body)
        elif isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and s.value.op.name == "block.load":
            total += 1
    return total


def _with_extent(n: int) -> St.Function:
    f = ConvertToSSAPass().run(Static).functions_list[0]
    loop = stmt_list(f.body)[0]
    body = St.SeqStmts((replace(loop, stop=E.ConstInt(n, loop.stop.dtype)), *stmt_list(f.body)[1:]))
    return ExpandPower2Pass().run_function(replace(f, body=body))


def test_a_constant_extent_expands_to_exactly_its_iterations_in_straight_chunks():
    for n in range(1, NMAX + 1):
        f = _with_extent(n)
        top = stmt_list(f.body)
        loops = [s for s in top if isinstance(s, St.ForStmt)]
        assert len(loops) <= 1 and not any(isinstance(s, St.IfStmt) for s in walk_stmts(f.body))
        assert _loads(f.body) == n  # a constant predicate keeps exactly the valid iterations
        if n >= 32:  # the full chunks are one loop over chunks of 16 (an inner loop: 16 > UNROLL_LIMIT)
            assert E.static_int(loops[0].stop) == n // 16 and E.static_int(stmt_list(loops[0].body)[0].stop) == 16


def test_a_runtime_extent_has_one_branch_per_chunk_size_and_a_predicated_tail():
    f = ExpandPower2Pass().run_function(ConvertToSSAPass().run(Dynamic).functions_list[0])
    top = stmt_list(f.body)
    ifs = [s for s in top if isinstance(s, St.IfStmt)]
    # sizes 8, 4, 2 (one if each) and the tail chunk of min_chunk = 2 iterations, each predicated
    assert len(ifs) == 3 + 2 and isinstance(top[0], St.ForStmt)
    assert len([s for s in top if isinstance(s, St.ForStmt)]) == 1
    assert [_loads(s.then_body) for s in ifs] == [8, 4, 2, 1, 1]
    assert 8 <= UNROLL_LIMIT < 16


def test_results_match_the_plain_loop_for_constant_and_runtime_extents():
    x = _x()
    r = pypto.runtime.run(Static, x)
    np.testing.assert_allclose(r.outputs[0][:45 * BLK], np.exp(x[:45 * BLK]), rtol=1e-5)
    assert r.pipes["MTE2"].instructions == 45
    for n in (0, 1, 6, 33):
        y0 = np.full_like(x, 7.0)
        r = pypto.runtime.run(Dynamic, x, y0, n)
        want = y0.copy()
        want[:n * BLK] = np.exp(x[:n * BLK])
        np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5)
        assert r.pipes["MTE2"].instructions == n


def test_two_power2_loops_fuse_chunk_by_chunk_and_keep_the_intermediate_on_chip():
    pm = PassManager.get_strategy()
    kinds = [type(p) for p in pm.passes]
    pm.passes = pm.passes[:kinds.index(ExpandPower2Pass) + 1]  # up to ExpandPower2
    fuse = pm.passes[kinds.index(FuseLoopsPass)]
    out = pm.run_passes(TwoLoops)
    assert any("fused the loops" in line for line in fuse.log), fuse.log
    k = out.get_function("k")
    # one expansion: the full-chunk loop and one branch per chunk size, each holding both bodies
    assert len([s for s in stmt_list(k.body) if isinstance(s, St.ForStmt)]) == 1
    assert "block.store" in python_print(k) and "pl.block.load(t" not in python_print(k)
    x = _x()
    for n in (5, 19):
        r = pypto.runtime.run(TwoLoops, x, n)
        np.testing.assert_allclose(r.outputs[0][:n * BLK], np.maximum(np.exp(x[:n * BLK]) - 1.5, 0), rtol=1e-5)
        assert r.pipes["MTE2"].instructions == n and r.pipes["MTE3"].instructions == n


def test_plain_loops_expand_the_same_way_with_the_pass_option():
    @pl.program
    class Plain:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: T, y: pl.Out[T]) -> T:
            for i in pl.range(0, 45):
                a = pl.load(x, [i * BLK, 0], [BLK, COLS])
                y = pl.store(pl.exp(a), [i * BLK, 0], y)
            return y

    f = ConvertToSSAPass().run(Plain).functions_list[0]
    assert ExpandPower2Pass().run_function(f) is f  # off by default
    g = ExpandPower2Pass(expand_plain=(2, 16)).run_function(f)
    assert _loads(g.body) == 45 and len([s for s in stmt_list(g.body) if isinstance(s, St.ForStmt)]) == 1


def test_the_printer_shows_the_construct_and_bad_bounds_are_located():
    assert "pl.parallel_for_power2(n, min_chunk=2, max_chunk=16)" in python_print(Dynamic)
    with pytest.raises(PyptoError, match=r"min_chunk must be a power of two integer literal, got 3") as e:
        @pl.function(type=pl.FunctionType.InCore)
        def bad(x: T, y: pl.Out[T]) -> T:
            for i in pl.parallel_for_power2(8, min_chunk=3, max_chunk=16):
                y = pl.store(pl.load(x, [i * BLK, 0], [BLK, COLS]), [i * BLK, 0], y)
            return y
    assert "test_power2_expansion.py" in str(e.value)
    with pytest.raises(PyptoError, match="min_chunk 16 exceeds max_chunk 4"):
        @pl.function(type=pl.FunctionType.InCore)
        def bad2(x: T, y: pl.Out[T]) -> T:
            for i in pl.parallel_for_power2(8, min_chunk=16, max_chunk=4):
                y = pl.store(pl.load(x, [i * BLK, 0], [BLK, COLS]), [i * BLK, 0], y)
            return y
