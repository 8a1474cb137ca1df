"""SplitSections: a group kernel's body becomes its cube section and its vector section.

A group kernel (:func:`pypto.ops.fifo.is_group_kernel`) is written as one body in which cube work
(Mat/Left/Right/Acc tiles) and vector work (Vec tiles) interleave in program order, handing tiles over
through the C2V / V2C FIFOs. No core runs both: the cube core runs the cube section and each AIV the
vector section (``pto.section.cube`` / ``pto.section.vector`` of one function, pto-text-format §4.13),
so this pass, once every tile has its memory (after InitMemRef), projects the body onto each side:

* an op statement belongs to the side of the memory it computes in (its tile result, or the tile it
  stores or pushes; pops and frees to their consumer); scalar statements (index arithmetic, block and
  lane ids) are kept on both sides, as a pto-isa author repeats them in both sections;
* a loop or branch is kept on a side that has statements in it (or reads scalars it produces), with
  only that side's loop-carried tiles; a GM tensor the other side stores into is carried unchanged;
* after a popped tile's last use in its block, the consumer frees its slot (``tfree_from_*``), so the
  producer may refill it while the consumer goes on.

The result is ``SeqStmts(ScopeStmt(CubeSection, ...), ScopeStmt(VectorSection, ...))``: the later
passes plan synchronisation and memory for each section as the code of one core, and the PTO code
generator prints the sections with the FIFOs' set-up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import CUBE_SPACES, MemorySpace, PipeType, ScopeKind
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ir.visitor import stmt_list, substitute, walk
from pypto.ops import fifo
from pypto.passes.analysis import memref_of, op_call
from pypto.passes.base import Pass, is_kernel

CUBE, VECTOR, BOTH = "cube", "vector", "both"
SECTION = {CUBE: ScopeKind.CubeSection, VECTOR: ScopeKind.VectorSection}
_CUBE_PIPES = {PipeType.M, PipeType.MTE1, PipeType.FIX}
_FIFO_SIDE = {"block.tpush_to_aiv": CUBE, "block.tpop_from_aiv": CUBE, "block.tfree_from_aiv": CUBE,
              "block.tpush_to_aic": VECTOR, "block.tpop_from_aic": VECTOR, "block.tfree_from_aic": VECTOR}


def side_of_space(space: MemorySpace | None) -> str:
    if space is None or space is MemorySpace.DDR:
        return BOTH
    return CUBE if space in CUBE_SPACES else VECTOR


def _tile_side(v: Any) -> str:
    m = memref_of(v)
    return side_of_space(m.memory_space if m is not None else None) if isinstance(v.type, TileType) else BOTH


def side_of(s: Any) -> str:
    """The side an op statement runs on (BOTH for scalar code)."""
    call = op_call(s)
    if call is None:
        if isinstance(s, St.AssignStmt) and isinstance(s.var.type, TileType):
            return _tile_side(s.var)
        return BOTH
    name = call.op.name
    if name in _FIFO_SIDE:
        return _FIFO_SIDE[name]
    if name.startswith("system."):
        pipes = {PipeType(call.kwargs[k]) for k in ("set_pipe", "wait_pipe") if k in call.kwargs}
        if name == "system.bar_m" or pipes & _CUBE_PIPES:
            return CUBE
        return VECTOR
    if isinstance(s, St.AssignStmt) and isinstance(s.var.type, TileType):
        return _tile_side(s.var)
    for a in call.args:
        if isinstance(getattr(a, "type", None), TileType):
            return _tile_side(a)
    return BOTH


class _Projector:
    """The statements of one side (see the module docstring)."""

    def __init__(self, side: str):
        self.side = side
        self.mapping: dict = {}  # a dropped store's result -> the tensor it stored into

    def keeps(self, v: Any) -> bool:
        """A loop-carried or branch result value this side carries."""
        t = v.type
        if isinstance(t, TileType):
            return _tile_side(v) in (self.side, BOTH)
        return True

    def block(self, body: Any) -> tuple[St.SeqStmts, bool]:
        """The side's statements of ``body`` and whether any of them is an op of the side."""
        out: list = []
        busy = False
        for s in stmt_list(body):
            kept, own = self.stmt(s)
            out.extend(kept)
            busy |= own
        out = _with_frees(out)
        return St.SeqStmts(tuple(out), getattr(body, "span", E.UNKNOWN_SPAN)), busy

    def stmt(self, s: Any) -> tuple[list, bool]:
        if isinstance(s, (St.ForStmt, St.WhileStmt)):
            return self.loop(s)
        if isinstance(s, St.IfStmt):
            return self.branch(s)
        if isinstance(s, St.YieldStmt):
            return [], False  # rebuilt by the enclosing loop or branch
        s = substitute(s, self.mapping) if self.mapping else s
        side = side_of(s)
        if side in (self.side, BOTH):
            return [s], side == self.side
        if isinstance(s, St.AssignStmt) and isinstance(s.var.type, TensorType):
            call = op_call(s)
            if call is not None and call.op.name == "block.store":
                self.mapping[s.var] = call.args[2]  # the other side's store: the tensor as it was
        return [], False

    def iters(self, iter_args: tuple, keep: list[int]) -> tuple:
        """The kept iteration arguments, their initial values as this side has them (a new argument,
        which the body then reads, when the initial value differs)."""
        out = []
        for i in keep:
            ia = iter_args[i]
            init = substitute(ia.init_value, self.mapping) if self.mapping else ia.init_value
            if init is not ia.init_value:
                new = E.IterArg(ia.name, ia.type, ia.span, init)
                self.mapping[ia] = new
                ia = new
            out.append(ia)
        return tuple(out)

    def carried(self, iter_args: tuple, return_vars: tuple) -> list[int]:
        return [i for i, ia in enumerate(iter_args) if self.keeps(ia)]

    def yielded(self, body: Any, keep: list[int]) -> St.YieldStmt | None:
        stmts = stmt_list(body)
        y = stmts[-1] if stmts and isinstance(stmts[-1], St.YieldStmt) else None
        if y is None:
            return None
        return St.YieldStmt(tuple(substitute(y.value[i], self.mapping) for i in keep), y.span)

    def loop(self, s: St.ForStmt | St.WhileStmt) -> tuple[list, bool]:
        """A for or while loop: the carried values this side keeps, its body for this side."""
        keep = self.carried(s.iter_args, s.return_vars)
        iters = self.iters(s.iter_args, keep)
        body, busy = self.block(s.body)
        y = self.yielded(s.body, keep)
        if y is not None and keep:
            body = St.SeqStmts(tuple(body.stmts) + (y,), body.span)
        rvs = tuple(s.return_vars[i] for i in keep)
        if not busy and not any(isinstance(v.type, ScalarType) for v in rvs):
            self.drop_results(s.return_vars, s.iter_args)
            return [], False
        return [replace(s, iter_args=iters, body=body, return_vars=rvs)], busy

    def branch(self, s: St.IfStmt) -> tuple[list, bool]:
        keep = [i for i, rv in enumerate(s.return_vars) if self.keeps(rv)]
        then, busy = self.block(s.then_body)
        y = self.yielded(s.then_body, keep)
        if y is not None and keep:
            then = St.SeqStmts(tuple(then.stmts) + (y,), then.span)
        other = None
        if s.else_body is not None:
            other, busy2 = self.block(s.else_body)
            busy |= busy2
            y = self.yielded(s.else_body, keep)
            if y is not None and keep:
                other = St.SeqStmts(tuple(other.stmts) + (y,), other.span)
        rvs = tuple(s.return_vars[i] for i in keep)
        if not busy and not any(isinstance(v.type, ScalarType) for v in rvs):
            # nothing of this side in the branch: its GM tensor results are what the branch yields here
            stmts = stmt_list(s.then_body)
            y = stmts[-1] if stmts and isinstance(stmts[-1], St.YieldStmt) else None
            for i, rv in enumerate(s.return_vars):
                if isinstance(rv.type, TensorType) and y is not None:
                    self.mapping[rv] = substitute(y.value[i], self.mapping)
            return [], False
        return [replace(s, condition=substitute(s.condition, self.mapping), then_body=then, else_body=other,
                        return_vars=rvs)], busy

    def drop_results(self, return_vars: tuple, iter_args: tuple) -> None:
        """A dropped loop's GM tensor results are the tensors it started from."""
        for rv, ia in zip(return_vars, iter_args, strict=False):
            if isinstance(rv.type, TensorType):
                self.mapping[rv] = substitute(ia.init_value, self.mapping)


def _with_frees(stmts: list) -> list:
    """``stmts`` with each popped slot freed after the popped tile's last use in them."""
    frees: dict[int, list] = {}
    for i, s in enumerate(stmts):
        call = op_call(s)
        if call is None or call.op.name not in fifo.POPS:
            continue
        names = {s.var}  # the popped tile and its other names (``g = _t3``)
        last = i
        for j in range(i + 1, len(stmts)):
            if any(n in names for n in walk(stmts[j]) if isinstance(n, E.Var)):
                last = j
                if isinstance(stmts[j], St.AssignStmt) and stmts[j].value in names:
                    names.add(stmts[j].var)
        if isinstance(stmts[last], St.YieldStmt):
            last -= 1
        frees.setdefault(last, []).append(St.EvalStmt(fifo.free(fifo.POPS[call.op.name], call.kwargs["split"],
                                                                 s.span), s.span))
    if not frees:
        return stmts
    out: list = []
    for i, s in enumerate(stmts):
        out.append(s)
        out.extend(frees.get(i, []))
    return out


def split_sections(func: St.Function) -> St.Function:
    span = getattr(func.body, "span", E.UNKNOWN_SPAN)
    stmts = list(stmt_list(func.body))
    ret = [s for s in stmts if isinstance(s, St.ReturnStmt)]
    body = St.SeqStmts(tuple(s for s in stmts if not isinstance(s, St.ReturnStmt)), span)
    sections = []
    for side in (CUBE, VECTOR):
        projector = _Projector(side)
        projected, _ = projector.block(body)
        sections.append(St.ScopeStmt(SECTION[side], projected, span))
    # each section defines its own values: a returned GM tensor is named by the parameter it lives in
    params = {memref_of(p): p for p in func.params if isinstance(p.type, TensorType)}
    tail = [replace(r, value=tuple(params.get(memref_of(v), v) for v in r.value)) for r in ret]
    return replace(func, body=St.SeqStmts(tuple(sections + tail), span))


@dataclass(frozen=True)
class SplitSectionsPass(Pass):
    """Project every group kernel's body onto its cube section and its vector section."""

    name: ClassVar[str] = "split-sections"
    dump_name: ClassVar[str] = "SplitSections"

    def run_function(self, func: St.Function) -> St.Function:
        if not is_kernel(func) or not fifo.is_group_kernel(func):
            return func
        return split_sections(func)
