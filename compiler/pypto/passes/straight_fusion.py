"""Fusion of two fully unrolled composites: straight-line tile blocks matched per index (seed 003 §6.4,
"full unroll": after unrolling, producer/consumer pairs are matched per constant index).

ConvertTensorToBlockOps lowers a kernel of tensor ops into one straight-line block per tile window
(constant offsets, tails by valid shapes). Two such kernels merged by launch fusion read::

    A_0 ... store(p_0, [0, 0], t) ... A_1 ... store(p_1, [56, 0], t)      # producer, blocks 0 and 1
    B_0: load(t, [0, 0]) ... store(q_0, [0, 0], y) ... B_1: load(t, [56, 0]) ...

Each of B's loads of the intermediate is replaced by the tile A stored at the same window (same
offsets, tile shape, valid shape, dtype and layout), A's stores into the dead intermediate go away,
and the blocks are interleaved (A_0, B_0, A_1, B_1, ...: each consumer block right after the producer
block it needs) so that only one block's tiles are live at a time, as in a fused loop. Refused, with
the reason, on anything but straight-line code, a window A does not store, another use of the
intermediate, or other buffers the two sides share.
"""

from __future__ import annotations

from typing import Any

from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import stmt_list, substitute
from pypto.passes.ir_utils import stmt_defs, used_vars
from pypto.passes.loop_fusion import (
    FusionRefused,
    buffer_root,
    is_call,
    rooted_at,
    same_expr,
    same_tile,
    window,
)


def _accesses(stmts: list, op: str, link: dict) -> list[tuple[St.AssignStmt, Any]]:
    arg = 2 if op == "block.store" else 0
    return [(s, buffer_root(s.value.args[arg], link)) for s in stmts
            if isinstance(s, St.AssignStmt) and is_call(s.value, op)]


def _segments(stmts: list, cut: Any) -> list[list]:
    """``stmts`` split after each statement for which ``cut`` is true (``cut`` may also drop it: a
    statement for which it returns ``"drop"`` ends the segment without being kept)."""
    segs: list[list] = [[]]
    for s in stmts:
        c = cut(s)
        if c != "drop":
            segs[-1].append(s)
        if c:
            segs.append([])
    return [seg for seg in segs if seg] or [[]]


def fuse_straight(a_stmts: list, b_stmts: list, dead: set, link: dict) -> list:
    """``a_stmts`` then ``b_stmts`` (the consumer, ending with its return) with the intermediate kept
    on chip and the blocks interleaved; raises :class:`FusionRefused` when that is not legal."""
    if any(not isinstance(s, (St.AssignStmt, St.EvalStmt, St.ReturnStmt)) for s in a_stmts + b_stmts):
        raise FusionRefused("the kernels are not straight-line tile blocks")
    stores, loads = _accesses(a_stmts, "block.store", link), _accesses(b_stmts, "block.load", link)
    inter = {r for _, r in stores} & {r for _, r in loads}
    if not inter:
        raise FusionRefused("the consumer loads nothing the producer stores")
    if inter - dead:
        raise FusionRefused("the intermediate is read after the kernel (a second consumer: the caller)")
    dropped = {s for s, r in stores if r in inter}
    replaced: dict = {}
    for s, root in loads:
        if root not in inter:
            continue
        hit = [st for st in dropped if buffer_root(st.value.args[2], link) is root
               and same_expr(window(s), window(st))]
        if not hit:
            raise FusionRefused(f"a block of the consumer reads a window of '{root.name}' that no block of the "
                                "producer stores (it needs other tiles of it first)")
        tile = hit[-1].value.args[0]
        if not isinstance(tile, E.Var) or not same_tile(s.var.type, tile.type):
            raise FusionRefused(f"the consumer loads '{root.name}' as a different tile than the producer stored")
        replaced[s.var] = tile
    b_kept = list(stmt_list(substitute(St.SeqStmts(tuple(
        s for s in b_stmts if not (isinstance(s, St.AssignStmt) and s.var in replaced))), replaced)))
    a_kept = [s for s in a_stmts if s not in dropped]
    for what, node in (("the producer", a_kept), ("the consumer", b_kept)):
        v = rooted_at(St.SeqStmts(tuple(node)), inter, link)
        if v is not None:
            raise FusionRefused(f"{what} uses the intermediate '{buffer_root(v, link).name}' otherwise (as '{v.name}')")
    a_w, a_r = {r for _, r in stores}, {r for _, r in _accesses(a_stmts, "block.load", link)}
    b_w, b_r = {r for _, r in _accesses(b_stmts, "block.store", link)}, {r for _, r in loads}
    clash = (b_w & (a_r | a_w)) | ((a_w - inter) & b_r)
    if clash:
        raise FusionRefused(f"the kernels share the buffer(s) {', '.join(sorted(v.name for v in clash))}")
    return _interleave(a_stmts, dropped, b_kept)


def _interleave(a_stmts: list, dropped: set, b_kept: list) -> list:
    """A's blocks (cut where a dropped store was) and B's blocks (cut after each store), each B block
    placed right after the last A block it reads from."""
    a_segs = _segments(a_stmts, lambda s: "drop" if s in dropped else False)
    ret = [s for s in b_kept if isinstance(s, St.ReturnStmt)]
    b_body = [s for s in b_kept if not isinstance(s, St.ReturnStmt)]
    b_segs = _segments(b_body, lambda s: isinstance(s, St.AssignStmt) and is_call(s.value, "block.store"))
    seg_of = {v: k for k, seg in enumerate(a_segs) for s in seg for v in stmt_defs(s)}
    out: list = []
    emitted = 0
    for seg in b_segs:
        need = max((seg_of.get(v, -1) for s in seg for v in used_vars(s)), default=-1)
        while emitted <= need:
            out.extend(a_segs[emitted])
            emitted += 1
        out.extend(seg)
    for seg in a_segs[emitted:]:
        out.extend(seg)
    return out + ret
