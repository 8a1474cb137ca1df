"""SplitChunkedLoops + InterchangeChunkLoops (spec §3.4, §6.3): chunked loops inside pl.auto_incore."""

from __future__ import annotations

import pypto.language as pl
from pypto.enums import ForKind, FunctionType, ScopeKind
from pypto.ir import stmt as St
from pypto.ir.visitor import walk_stmts
from pypto.passes import (
    ConvertToSSAPass,
    InterchangeChunkLoopsPass,
    OutlineIncoreScopesPass,
    SplitChunkedLoopsPass,
    UnrollLoopsPass,
)


@pl.program
class Chunked:
    @pl.function
    def main(self, x: pl.Tensor[[160, 32], pl.FP32]) -> pl.Tensor[[160, 32], pl.FP32]:
        out = pl.create_tensor([160, 32], dtype=pl.FP32)
        with pl.auto_incore():
            for i in pl.parallel(0, 10, 1, chunk=4):
                t = pl.load(x, [i * 16, 0], [16, 32])
                u = pl.add(t, 1.0)
                out = pl.store(u, [i * 16, 0], out)
        return out


@pl.program
class SequentialChunks:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[128, 32], pl.FP32], out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]
          ) -> pl.Tensor[[128, 32], pl.FP32]:
        with pl.auto_incore():
            for i in pl.range(0, 8, 1, chunk=4):
                t = pl.load(x, [i * 16, 0], [16, 32])
                out = pl.store(t, [i * 16, 0], out)
        return out


def _loops(func: St.Function) -> list[St.ForStmt]:
    return [s for s in walk_stmts(func.body) if isinstance(s, St.ForStmt)]


def _split(program):
    p = UnrollLoopsPass().run(ConvertToSSAPass().run(program))
    return SplitChunkedLoopsPass().run(p)


def test_split_leading_full_then_remainder():
    main = _split(Chunked).functions_list[0]
    loops = _loops(main)
    shape = [(s.loop_var.name, s.stop.value, s.kind, s.loop_origin) for s in loops]
    assert shape == [("i_out", 2, ForKind.Sequential, 1), ("i_in", 4, ForKind.Parallel, 2),
                     ("i_rem", 2, ForKind.Parallel, 3)]
    assert all(s.chunk_size is None for s in loops)
    # the remainder threads the outer loop's result
    assert loops[2].iter_args[0].init_value is loops[0].return_vars[0]


def test_interchange_wraps_parallel_chunks_and_outlines_them():
    p = InterchangeChunkLoopsPass().run(_split(Chunked))
    scopes = [s for s in walk_stmts(p.functions_list[0].body) if isinstance(s, St.ScopeStmt)]
    assert [s.scope_kind for s in scopes] == [ScopeKind.InCore, ScopeKind.InCore]
    out = OutlineIncoreScopesPass().run(p)
    kinds = {f.name: f.type for f in out.functions_list}
    assert kinds == {"main": FunctionType.Orchestration, "main_incore_0": FunctionType.InCore,
                     "main_incore_1": FunctionType.InCore}


def test_sequential_chunks_stay_in_place_and_scope_is_removed():
    p = InterchangeChunkLoopsPass().run(_split(SequentialChunks))
    k = p.functions_list[0]
    assert not any(isinstance(s, St.ScopeStmt) for s in walk_stmts(k.body))
    assert [s.loop_origin for s in _loops(k)] == [1, 2]
