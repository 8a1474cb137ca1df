"""The tiling rule of pypto.lib.tiling (no emulator): sizes from the UB capacity, alignment, tails,
chunked rows; and the pad a reduction's tail tile gets (its identity)."""

import pytest
from lib_programs import program

from pypto import DataType
from pypto.enums import CAPACITY, MemorySpace, TilePad
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import walk, walk_stmts
from pypto.lib import ops as L
from pypto.lib import tiling
from pypto.ops import tensor as T
from pypto.passes.manager import PassManager

F32, F16 = DataType.FP32, DataType.FP16


def test_blocks_fit_the_budget_read_from_the_machine():
    ub = CAPACITY[MemorySpace.Vec]
    for rows, cols, dtype, live in [(300, 1030, F32, 6), (37, 6000, F32, 3), (3, 100000, F16, 5), (1, 7, F32, 6)]:
        p = tiling.plan(rows, cols, [dtype], live)
        tile = p.tr * p.tc * dtype.nbytes
        assert tile * live <= ub // 2 and tile <= ub // 6, (rows, cols, p)
        assert p.tc % tiling.col_align(dtype) == 0
        assert p.tr % tiling.row_align(dtype) == 0 or p.tr == 1


def test_whole_rows_when_they_fit_chunks_when_not():
    p = tiling.plan(300, 1001, [F32], 3)
    assert p.tc == 1008 and not p.chunked  # 1001 padded to 32 bytes
    assert [s for s in p.segments(0)][-1][2] == 300 % p.tr  # the tail block's valid rows
    q = tiling.plan(37, 6000, [F32], 3)
    assert q.chunked and q.tr == 8 and q.tc < 6000
    assert sum(c * v for _, c, v in q.segments(1)) == 6000


def _ir_after_materialize(build, params):
    pm = PassManager.get_strategy()
    names = pm.get_pass_names()
    pm.passes = pm.passes[: names.index("MaterializeTileViews") + 1]
    return pm.run_passes(program(build, params))


def _fillpads(prog):
    return [n.kwargs.get("pad") for f in prog.functions_list for n in walk(f.body)
            if getattr(getattr(n, "op", None), "name", None) == "block.fillpad"]


def test_reduction_tails_are_padded_with_the_identity():
    shape = [("x", (100, 100), F32)]  # 100 columns in a 104-column tile; 72 + 28 rows: two blocks
    assert _fillpads(_ir_after_materialize(lambda a: L.max(a, -1, keepdim=True), shape)) == [int(TilePad.min)] * 2
    assert _fillpads(_ir_after_materialize(lambda a: L.min(a, -1, keepdim=True), shape)) == [int(TilePad.max)] * 2
    assert _fillpads(_ir_after_materialize(lambda a: L.sum(a, -1, keepdim=True), shape)) == [int(TilePad.zero)] * 2
    # an element-wise op reads no padding: none is filled
    assert _fillpads(_ir_after_materialize(lambda a: L.relu(a), shape)) == []


def _load_shapes(prog) -> set:
    """Tile shapes of the kernel's loads of its first parameter."""
    kern = next(f for f in prog.functions_list if f.name == "kern")
    return {tuple(E.static_int(d) for d in n.var.type.shape) for n in walk_stmts(kern.body)
            if isinstance(n, St.AssignStmt) and getattr(getattr(n.value, "op", None), "name", None) == "block.load"
            and n.value.args[0] is kern.params[0]}


@pytest.mark.parametrize("rows, cols", [(37, 130), (300, 64), (1, 7)])
def test_element_wise_ops_reductions_and_composites_share_one_plan(rows, cols):
    """One block shape per tensor shape, whichever primitive or composite reads it: FuseLoops can
    then pair the loops of consecutive library calls."""
    params = [("x", (rows, cols), F32), ("w", (cols,), F32)]
    op = L.BUILDERS
    builds = [lambda x, w: T.exp(x), lambda x, w: T.mul(x, w), lambda x, w: op["softmax"](x),
              lambda x, w: op["rms_norm"](x, w), lambda x, w: op["max"](x, -1, keepdim=True),
              lambda x, w: op["layer_norm"](x, w, w), lambda x, w: op["sigmoid"](x)]
    shapes = [_load_shapes(_ir_after_materialize(b, params)) for b in builds]
    assert all(len(s) == 1 for s in shapes) and len(set().union(*shapes)) == 1, shapes
