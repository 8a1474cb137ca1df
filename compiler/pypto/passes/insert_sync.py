"""InsertSync: set/wait flags between pipes and barriers within pipes, planned by the contract's
planner (:mod:`ptoisa.sync`, the same algorithm as the emulator's ``--sync auto``).

This pass only translates. It mirrors a kernel's statements as the planner's tree (an op statement
is an access on the pipe of the instruction it lowers to, reading and writing its buffers; ``for``,
``if``, ``while`` and scopes are structure; yields and returns end their block), lets
:func:`ptoisa.sync.insert.plan_function` plan, allocate event ids and prove the flag invariant
(every path through every block leaves every flag as it found it; no flag is set again before its
previous wait consumed it), and writes the plan back as ``system.sync_src`` / ``sync_dst`` /
``bar_*`` statements, which both the PTO and the C++ back ends print.

Hand-written ``pl.system`` sync is honoured rather than duplicated: it is part of the tree (its flags
carry the setting pipe's knowledge to the waiting pipe, its barriers complete their pipe), so a
hazard the user already ordered gets no second flag, and the planner never picks an event id the
user's code uses for the same pipe pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ptoisa.errors import InputError, Loc
from ptoisa.machine import Machine, load_machine
from ptoisa.sync.insert import plan_function
from ptoisa.sync.model import OpInfo, SyncModel
from ptoisa.sync.plan import Item, Plan
from pypto.enums import PipeType
from pypto.errors import CompileError
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ir.visitor import stmt_list
from pypto.ops import system
from pypto.passes.analysis import effects, op_call, pipe_of
from pypto.passes.base import Pass, is_kernel

TARGET_MACHINE = "a2a3"
# Tile ops that run on the scalar unit and touch buffers (element access): they take flags like any pipe.
SCALAR_ACCESSES = frozenset({"block.getval", "block.setval", "block.read_gm", "block.write_gm"})
BARRIERS = {"V": system.bar_v, "M": system.bar_m}  # other pipes complete in order: a full barrier


@dataclass(eq=False)
class _Block:
    """A mirrored block: the planner's region (``ops``) and the statement it came from."""

    body: Any
    ops: list = field(default_factory=list)


@dataclass(eq=False)
class _Node:
    """A mirrored statement (``name`` for the planner's messages)."""

    stmt: Any
    regions: list = field(default_factory=list)
    name: str = ""


class KernelModel(SyncModel):
    """The planner's view of one kernel function."""

    def __init__(self, func: St.Function) -> None:
        self.func = func
        self.rw: dict[int, tuple[list, list]] = {}
        self.user: dict[int, tuple] = {}  # id(node) -> hand-written sync (kind, src, dst, event)
        root = self._mirror(func.body)
        super().__init__(root, func.name)
        for node in self.ops.values():
            self.info[id(node)] = self._classify(node)

    def _mirror(self, body: Any) -> _Block:
        block = _Block(body)
        for s in stmt_list(body):
            node = _Node(s, name=type(s).__name__)
            if isinstance(s, (St.ForStmt, St.ScopeStmt)):
                node.regions = [self._mirror(s.body)]
            elif isinstance(s, St.WhileStmt):
                node.regions = [_Block(None), self._mirror(s.body)]  # the condition is scalar code
            elif isinstance(s, St.IfStmt):
                node.regions = [self._mirror(s.then_body)] + ([self._mirror(s.else_body)] if s.else_body else [])
            elif isinstance(s, (St.BreakStmt, St.ContinueStmt)):
                raise CompileError("break/continue in a kernel loop: automatic synchronisation needs "
                                   "structured loops", s.span)
            block.ops.append(node)
        return block

    def _classify(self, node: _Node) -> OpInfo:
        s = node.stmt
        if isinstance(s, St.ForStmt):
            return OpInfo("for")
        if isinstance(s, St.WhileStmt):
            return OpInfo("while")
        if isinstance(s, St.IfStmt):
            return OpInfo("if")
        if isinstance(s, St.ScopeStmt):
            return OpInfo("region")
        if isinstance(s, (St.YieldStmt, St.ReturnStmt)):
            return OpInfo("end")
        call = op_call(s)
        if call is None:
            return OpInfo("meta")
        node.name = call.op.name
        if call.op.name.startswith("system."):
            return self._user_sync(node, call)
        pipe = pipe_of(call, getattr(s, "var", None))
        reads, writes = effects(s)
        if not (reads or writes) or (pipe is PipeType.S and call.op.name not in SCALAR_ACCESSES):
            # other scalar-unit statements are declarations and index arithmetic: they order nothing
            return OpInfo("meta")
        self.rw[id(node)] = (reads, writes)
        return OpInfo("access", pipe.name)

    def _user_sync(self, node: _Node, call: Any) -> OpInfo:
        short = call.op.name.split(".", 1)[1]
        kw = call.kwargs
        if short in ("sync_src", "sync_dst"):
            src, dst = PipeType(kw["set_pipe"]).name, PipeType(kw["wait_pipe"]).name
            self.user[id(node)] = ("set" if short == "sync_src" else "wait", src, dst, int(kw["event_id"]))
            return OpInfo("sync")
        if short in ("bar_v", "bar_m", "bar_all"):
            self.user[id(node)] = ("barrier", {"bar_v": "V", "bar_m": "M"}.get(short, "ALL"), "", -1)
            return OpInfo("sync")
        return OpInfo("meta")

    # ------------------------------------------------------------------ SyncModel

    def conflict(self, p: Any, c: Any, varying: int | None) -> bool:
        """Two statements conflict when one writes a buffer the other reads or writes (buffers are
        compared whole: the IR has no finer footprint before addresses are allocated)."""
        pr, pw = self.rw.get(id(p), ((), ()))
        cr, cw = self.rw.get(id(c), ((), ()))
        return any(m in cr or m in cw for m in pw) or any(m in cw for m in pr)

    def trip_count(self, loop: Any) -> int | None:
        s = loop.stmt
        lb, ub, step = static_int(s.start), static_int(s.stop), static_int(s.step)
        if lb is None or ub is None or step is None or step <= 0:
            return None
        return max(0, -(-(ub - lb) // step))

    def loc(self, node: Any) -> Loc | None:
        span = getattr(getattr(node, "stmt", None), "span", None) or getattr(self.func, "span", None)
        return Loc(span.filename, span.line, span.col) if span is not None else None

    def user_sync(self, node: Any) -> tuple | None:
        return self.user.get(id(node))


def _span(node: Any, fallback: Any) -> Any:
    return getattr(getattr(node, "stmt", None), "span", None) or fallback


def _stmt(item: Item, event: int, span: Any) -> list:
    """The IR statements of one plan item."""
    out = []
    if item.fence or item.kind == "barrier":
        pipe = "ALL" if item.fence else item.src
        out.append(St.EvalStmt(BARRIERS.get(pipe, system.bar_all)(span), span))
        if item.kind == "barrier":
            return out
    build = system.sync_src if item.kind == "set" else system.sync_dst
    out.append(St.EvalStmt(build(int(PipeType[item.src]), int(PipeType[item.dst]), event, span), span))
    return out


def _rebuild(model: KernelModel, plan: Plan, block: _Block, span: Any) -> Any:
    def items(lst: list[Item] | None, at: Any) -> list:
        return [st for it in lst or () for st in _stmt(it, plan.ids.get(it.pair, 0), at)]

    out = items(plan.region_start.get(id(block)), span)
    for node in block.ops:
        s = node.stmt
        at = _span(node, span)
        out += items(plan.before.get(id(node)), at)
        if isinstance(s, St.WhileStmt):  # the condition region's items: before the loop and at body start
            out += items(plan.region_start.get(id(node.regions[0])), at)
            s = replace(s, body=_rebuild(model, plan, node.regions[1], at))
        elif isinstance(s, (St.ForStmt, St.ScopeStmt)):
            s = replace(s, body=_rebuild(model, plan, node.regions[0], at))
        elif isinstance(s, St.IfStmt):
            tb = _rebuild(model, plan, node.regions[0], at)
            eb = _rebuild(model, plan, node.regions[1], at) if len(node.regions) > 1 else None
            s = replace(s, then_body=tb, else_body=eb)
        out.append(s)
        out += items(plan.after.get(id(node)), at)
    if block.body is None and not out:
        return None
    return St.SeqStmts(tuple(out), getattr(block.body, "span", None) or span)


_MACHINE: list[Machine] = []


def _machine() -> Machine:
    if not _MACHINE:
        _MACHINE.append(load_machine(TARGET_MACHINE))
    return _MACHINE[0]


@dataclass(frozen=True)
class InsertSyncPass(Pass):
    name: ClassVar[str] = "insert-sync"
    dump_name: ClassVar[str] = "InsertSync"

    def run_function(self, func: St.Function) -> St.Function:
        if not is_kernel(func):
            return func
        model = KernelModel(func)
        try:
            plan = plan_function(model, _machine()).plan
        except InputError as e:
            raise CompileError(e.message, func.span) from None
        return replace(func, body=_rebuild(model, plan, model.body, func.span))
