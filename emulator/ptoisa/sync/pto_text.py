"""Automatic sync for a `.pto` module: strip what is there, plan each function, write the plan back.

Functions are planned callees first, so that a caller knows which event ids and flags its callees
use (a caller never holds set a flag its callee sets; calls to functions with pipe work are fenced
by full barriers). The written text is checked once more by :func:`check_function`, which reads the
sync ops back from the AST, independently of the plan they came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ptoisa.errors import InputError, Loc
from ptoisa.isa.spec import ISA
from ptoisa.machine import Machine
from ptoisa.sync.insert import plan_function
from ptoisa.sync.plan import Item, Plan
from ptoisa.sync.pto import INTRA_SYNC_OPS, SYNC_OPS, FunctionModel
from ptoisa.sync.verify import Barrier, Branch, Call, FlagProblems, Loop, SetWait, While, check, used_flags
from ptoisa.text import ast as A


@dataclass
class SyncStats:
    """Counts of what one :func:`insert_sync` call inserted (for notes and tests)."""

    pairs: int = 0
    carried: int = 0
    barriers: int = 0
    fences: int = 0
    reuse_fences: int = 0
    max_ids: dict[tuple[str, str], int] = field(default_factory=dict)

    def describe(self) -> str:
        most = max(self.max_ids.values(), default=0)
        text = (f"inserted {self.pairs} set/wait pairs ({self.carried} around loop back edges), "
                f"{self.barriers} pipe barriers")
        if self.fences:
            text += f", {self.fences} full barriers around calls/unmodelled ops"
        if self.reuse_fences:
            text += f", {self.reuse_fences} full barriers where a flag is reused before its wait is known done"
        return text + f"; at most {most} event ids on one pipe pair"


def walk(region: A.Region):
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from walk(r)


def has_sync(module: A.Module) -> bool:
    """True when any function contains a sync op (flags, barriers, events, cross-core signals)."""
    return any(op.name in SYNC_OPS for fn in module.functions for op in walk(fn.body))


def strip_region(region: A.Region) -> A.Region:
    """A copy of ``region`` without intra-core sync ops (ops with regions are copied, others shared)."""
    ops = [replace(op, regions=[strip_region(r) for r in op.regions]) if op.regions else op
           for op in region.ops if op.name not in INTRA_SYNC_OPS]
    return A.Region(args=list(region.args), arg_types=list(region.arg_types), ops=ops)


def strip_sync(module: A.Module) -> A.Module:
    """A copy of ``module`` without intra-core sync ops. Cross-core ``sync.set``/``sync.wait`` are
    kept: they pair with another core's program, which this pass does not see."""
    return replace(module, functions=[replace(fn, body=strip_region(fn.body)) for fn in module.functions])


def _pipe(p: str) -> A.EnumAttr:
    return A.EnumAttr("pipe", f"PIPE_{p}")


def materialise(fn: A.Function, plan: Plan) -> A.Function:
    """``fn`` with the plan's sync ops (ids from ``plan.ids``) inserted."""

    def make(items: list[Item] | None, loc: Loc) -> list[A.Op]:
        ops = []
        for it in items or ():
            if it.kind == "barrier" or it.fence:
                ops.append(A.Op("pto.barrier", loc, attrs={"pipe": _pipe("ALL" if it.fence else it.src)}))
                if it.kind == "barrier":
                    continue
            name = "pto.set_flag" if it.kind == "set" else "pto.wait_flag"
            event = A.EnumAttr("event", f"EVENT_ID{plan.ids[it.pair]}")
            ops.append(A.Op(name, loc, attrs={"args": [_pipe(it.src), _pipe(it.dst), event]}))
        return ops

    def region(r: A.Region, owner_loc: Loc) -> A.Region:
        ops = make(plan.region_start.get(id(r)), r.ops[0].loc if r.ops else owner_loc)
        for op in r.ops:
            if op.name in INTRA_SYNC_OPS:
                continue
            ops += make(plan.before.get(id(op)), op.loc)
            ops.append(replace(op, regions=[region(x, op.loc) for x in op.regions]) if op.regions else op)
            ops += make(plan.after.get(id(op)), op.loc)
        return A.Region(args=list(r.args), arg_types=list(r.arg_types), ops=ops)

    return replace(fn, body=region(fn.body, fn.loc))


def _callees(fn: A.Function) -> list[str]:
    return [str(op.attrs.get("callee", "")).lstrip("@") for op in walk(fn.body) if op.name == "func.call"]


def _order(module: A.Module, entry: str | None) -> list[A.Function]:
    """Functions to process, callees before callers (so their event ids are known)."""
    names = {f.name: f for f in module.functions}
    out: list[A.Function] = []
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        if name not in names or state.get(name):
            return
        state[name] = 1
        for callee in _callees(names[name]):
            visit(callee)
        state[name] = 2
        out.append(names[name])

    for r in [entry] if entry else list(names):
        visit(r)
    return out


def insert_sync(module: A.Module, isa: ISA, machine: Machine, entry: str | None = None) -> tuple[A.Module, SyncStats]:
    """A new module whose functions carry automatically inserted sync (intra-core sync already present
    is replaced); ``entry`` limits the work to that function and its callees. Raises
    :class:`InputError` (located) when the kernel needs more event ids than the machine has, or
    uses ``pto.tassign``."""
    if entry is not None and module.function(entry.lstrip("@")) is None:
        raise InputError(f"no function named '{entry.lstrip('@')}'", module.loc or Loc(module.file, 1, 1))
    stats = SyncStats()
    effectful: set[str] = set()
    ids: dict[str, set[tuple[str, str, int]]] = {}
    flags: dict[str, set] = {}
    done: dict[str, A.Function] = {}
    for fn in _order(strip_sync(module), entry.lstrip("@") if entry else None):
        model = FunctionModel(fn, isa, effectful)
        if any(i.kind in ("access", "fence") for i in model.info.values()):
            effectful.add(fn.name)
        result = plan_function(model, machine, ids, flags)
        plan = result.plan
        ids[fn.name], flags[fn.name] = result.ids, result.flags
        done[fn.name] = materialise(fn, plan)
        stats.pairs += len(plan.pairs)
        stats.carried += sum(1 for p in plan.pairs if p.carried)
        stats.barriers += plan.barriers
        stats.fences += plan.fences
        stats.reuse_fences += sum(1 for lst in (*plan.before.values(), *plan.after.values()) for it in lst if it.fence)
        for src, dst, k in result.ids:
            stats.max_ids[(src, dst)] = max(stats.max_ids.get((src, dst), 0), k + 1)
    return replace(module, functions=[done.get(f.name, f) for f in module.functions]), stats


# ---------------------------------------------------------------------------- reading sync back


def _flag(op: A.Op) -> tuple[str, str, int]:
    a = op.attrs["args"]
    event = str(a[2].value)
    return (str(a[0].value).removeprefix("PIPE_"), str(a[1].value).removeprefix("PIPE_"),
            int(event.removeprefix("EVENT_ID")) if event.startswith("EVENT_ID") else -1)


def _const_ints(fn: A.Function) -> dict[str, int]:
    out = {}
    for op in walk(fn.body):
        val = op.attrs.get("value")
        if op.name == "arith.constant" and isinstance(val, int) and not isinstance(val, bool) and op.results:
            out[op.results[0]] = val
    return out


def stream(fn: A.Function) -> list:
    """The sync stream (:mod:`ptoisa.sync.verify`) of a function as written: its set/wait/barrier
    ops and its structure; race reports name the AST ops."""
    consts = _const_ints(fn)

    def trips(op: A.Op) -> int | None:
        lb, ub, step = (consts.get(x) if isinstance(x, str) else x for x in op.operands[:3])
        if not all(isinstance(v, int) for v in (lb, ub, step)) or step <= 0:
            return None
        return max(0, -(-(ub - lb) // step))

    def region(r: A.Region) -> list:
        out: list = []
        for op in r.ops:
            name, where = op.name, str(op.loc)
            if name in ("pto.set_flag", "pto.wait_flag"):
                out.append(SetWait("set" if name == "pto.set_flag" else "wait", _flag(op), op, where))
            elif name == "pto.barrier":
                attr = op.attrs.get("pipe")
                out.append(Barrier(str(getattr(attr, "value", "PIPE_ALL")).removeprefix("PIPE_")))
            elif name == "scf.for":
                out.append(Loop(region(op.regions[0]), trips(op), where))
            elif name == "scf.if":
                out.append(Branch([region(x) for x in op.regions], len(op.regions) > 1, where))
            elif name == "scf.while" and len(op.regions) == 2:
                out.append(While(region(op.regions[0]), region(op.regions[1]), where))
            elif name == "func.call":
                out.append(Call(str(op.attrs.get("callee", "")).lstrip("@"), where))
            else:
                out.extend(region(x) for x in op.regions)
        return out

    return region(fn.body)


def check_function(fn: A.Function, machine: Machine, callee_flags: dict[str, set] | None = None) -> FlagProblems:
    """The flag invariant of ``fn`` as written (:func:`ptoisa.sync.verify.check`)."""
    return check(stream(fn), tuple(machine.pipes), callee_flags, fn.name)


def check_module(module: A.Module, machine: Machine) -> list[str]:
    """Every flag-invariant problem of every function of ``module``, as text."""
    uses = {f.name: used_flags(stream(f)) for f in module.functions}
    out = []
    for fn in module.functions:
        p = check_function(fn, machine, uses)
        out += p.order + [f"{s.loc}: a set may fire before the wait at {w.loc} consumed the flag" for w, s in p.races]
    return out
