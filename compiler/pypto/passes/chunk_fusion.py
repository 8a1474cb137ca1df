"""Chunk-wise fusion of two non-parallel loops (seed 003 §6.5), used by ExpandPower2.

A ``pl.range`` loop may carry a dependency from one iteration to the next, so its iterations are
never reordered across another loop's. When two such loops over the same extent (a producer A and
a consumer B of A's result) are expanded into power-of-two chunks, they are fused **chunk by
chunk**: one sequence of chunks, and in each chunk *all* of A's iterations (in order) and then
*all* of B's (in order). No iteration of B runs before the A iterations of its chunk, and A's and
B's iterations are never interleaved inside a chunk.

In a chunk that is unrolled (straight-line copies with constant offsets from the chunk base),
each of B's loads of the intermediate is the tile A stored at the same window in the same chunk
(the last such store: A's iterations ran in order); the load is replaced by that tile, and when
nobody reads the intermediate after the kernel A's stores into it are dropped, so it stays on chip
for the chunk. A load of a window A did not write in the chunk (an earlier chunk's, or one A never
writes) makes the pair refused: the loops are then expanded one after the other.
"""

from __future__ import annotations

from typing import Any

from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import stmt_list, substitute, walk
from pypto.passes.loop_fusion import FusionRefused, is_call, same_expr, same_tile, window


def fuse_chunk(a_stmts: list, b_stmts: list, entry: list, drop: bool) -> tuple[list, list, dict]:
    """A's and B's copies for one chunk, B's loads of the intermediate replaced by A's stored tiles.

    ``entry``: the intermediate tensors as the chunk starts (the values of A's carried tensors that B
    reads); ``drop``: whether A's stores into them may go (nobody reads them after the kernel).
    Returns A's statements, B's statements and the renaming of the dropped stores' results (each to
    the tensor it stored into), which the caller applies to A's carried values."""
    chain = set(entry)
    stores: list = []
    for s in a_stmts:
        if isinstance(s, St.AssignStmt) and is_call(s.value, "block.store") and s.value.args[2] in chain:
            chain.add(s.var)
            stores.append(s)
    replaced: dict = {}
    for s in b_stmts:
        if not (isinstance(s, St.AssignStmt) and is_call(s.value, "block.load") and s.value.args[0] in chain):
            continue
        hit = [st for st in stores if same_expr(window(s), window(st))]
        if not hit:
            raise FusionRefused("an iteration of the consumer reads a window of the intermediate that the "
                                "producer does not write in the same chunk")
        tile = hit[-1].value.args[0]
        if not isinstance(tile, E.Var) or not same_tile(s.var.type, tile.type):
            raise FusionRefused("the consumer loads the intermediate as a different tile than the producer stored")
        replaced[s.var] = tile
    b_kept = [s for s in b_stmts if not (isinstance(s, St.AssignStmt) and s.var in replaced)]
    b_kept = list(stmt_list(substitute(St.SeqStmts(tuple(b_kept)), replaced)))
    store_set = set(stores)
    reads_back = uses(St.SeqStmts(tuple(s for s in a_stmts if s not in store_set)), chain)
    if not drop or reads_back or uses(St.SeqStmts(tuple(b_kept)), chain):
        return a_stmts, b_kept, {}  # the intermediate is read otherwise: A's stores stay
    renamed: dict = {}
    for st in stores:
        target = st.value.args[2]
        renamed[st.var] = renamed.get(target, target)
    a_kept = [s for s in a_stmts if s not in store_set]
    mapping = dict(renamed)
    a_kept = list(stmt_list(substitute(St.SeqStmts(tuple(a_kept)), mapping)))
    return a_kept, b_kept, renamed


def resolve(values: list, renamed: dict) -> list:
    """``values`` with dropped stores' results replaced by the tensors they stored into."""
    return [renamed.get(v, v) if isinstance(v, E.Var) else v for v in values]


def uses(node: Any, vars_: set) -> bool:
    return any(n in vars_ for n in walk(node) if isinstance(n, E.Var))
