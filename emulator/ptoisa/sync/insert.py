"""One function's sync, planned and proven: plan, allocate event ids, check, fix, repeat.

:func:`plan_function` is what both clients call (the emulator's ``--sync auto`` through
:mod:`ptoisa.sync.pto`, the compiler's InsertSync pass through its IR mirror). It returns a
:class:`~ptoisa.sync.plan.Plan` whose every item has its event id and which
:func:`ptoisa.sync.verify.check` accepts: the client only turns the items into its own sync ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoisa.errors import InputError
from ptoisa.machine import Machine
from ptoisa.sync.events import allocate
from ptoisa.sync.model import SyncModel
from ptoisa.sync.plan import Plan, Planner
from ptoisa.sync.verify import Flag, check, stream_from_plan, used_flags

MAX_FIXES = 200


@dataclass
class FunctionSync:
    """The result for one function: its plan (ids assigned), the (src, dst, id) triples it and its
    callees use, and the flags it names (for callers' checks)."""

    plan: Plan
    ids: set[tuple[str, str, int]] = field(default_factory=set)
    flags: set[Flag] = field(default_factory=set)


def plan_function(model: SyncModel, machine: Machine,
                  callee_ids: dict[str, set[tuple[str, str, int]]] | None = None,
                  callee_flags: dict[str, set[Flag]] | None = None) -> FunctionSync:
    """Plan the sync of ``model``'s function (callees already planned: their ids and flags given).

    Where a set could fire before the previous wait of its flag consumed it, the two pairs get
    different ids; where the machine has no id left for that, or a pair races with its own next
    execution, a full barrier before the set orders it. Every fix only adds order, so the loop ends;
    a program-order error would be a planner bug and is raised, never emitted."""
    callee_ids = callee_ids or {}
    callee_flags = callee_flags or {}
    plan = Planner(model, machine).build()
    apart: set[frozenset[int]] = set()
    for _ in range(MAX_FIXES):
        used, forced = allocate(model, plan, machine.event_ids, callee_ids, apart)
        stream = stream_from_plan(model, plan)
        problems = check(stream, tuple(machine.pipes), callee_flags, model.name)
        if problems.order:
            raise InputError("automatic synchronisation broke the flag invariant (a bug in the pass; "
                             "run with --sync serial): " + "; ".join(problems.order[:3]),
                             model.loc(model.body))
        if not problems.races:
            flags = used_flags(stream)
            for callee in _callees(model):
                flags |= callee_flags.get(callee, set())
                used |= callee_ids.get(callee, set())
            return FunctionSync(plan, used, flags)
        fresh: set[frozenset[int]] = set()
        for wait_item, set_item in problems.races:
            if wait_item is None:  # after a wait the author wrote: only a barrier orders it
                set_item.fence = True
                continue
            key = frozenset((wait_item.pair, set_item.pair))
            if key in fresh:
                continue  # the same two pairs the other way round: already set apart this round
            if wait_item.pair != set_item.pair and key not in apart and not key & forced:
                apart.add(key)
                fresh.add(key)
            else:
                set_item.fence = True
    raise InputError("automatic synchronisation could not make event ids safe to reuse", model.loc(model.body))


def _callees(model: SyncModel) -> set[str]:
    return {c for op in model.ops.values() if (c := model.callee(op)) is not None}
