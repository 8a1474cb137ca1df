"""Event ids for the planned set/wait pairs.

Ids are allocated after the sync ops are laid out: every pair's lifetime is the interval between its
first and last op in a pre-order walk of the function (a carried pair spans its whole loop nest).
Because each pair's set and waits sit in one region (or around one loop), any other op that runs
between them dynamically lies inside that interval, so pairs on the same pipe pair whose intervals
do not intersect *may* share an id in program order. Whether they may share it in *time* is a
second question - a set runs on its source pipe and can fire before the previous wait of the same
id (on another pipe) consumed it - answered by :mod:`ptoisa.sync.verify`; pairs it finds racing
are kept ``apart`` (different ids) on the next allocation. Greedy colouring by interval start;
needing more ids than the machine has is an error at the consumer that needed one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ptoisa.errors import InputError
from ptoisa.sync.model import SyncModel
from ptoisa.sync.plan import Item, Plan


@dataclass(slots=True)
class Layout:
    """Pre-order positions of the plan's sync items and of calls to functions that use flags."""

    pair_pos: dict[int, list[int]] = field(default_factory=dict)
    calls: list[tuple[int, str]] = field(default_factory=list)  # (position, callee)


def layout(model: SyncModel, plan: Plan) -> Layout:
    out = Layout()
    pos = 0

    def items(lst: list[Item] | None) -> None:
        nonlocal pos
        for it in lst or ():
            pos += 2 if it.fence else 1
            if it.kind != "barrier":
                out.pair_pos.setdefault(it.pair, []).append(pos)

    def region(r: Any) -> None:
        nonlocal pos
        items(plan.region_start.get(id(r)))
        for op in r.ops:
            items(plan.before.get(id(op)))
            pos += 1
            callee = model.callee(op) if model.info[id(op)].kind == "fence" else None
            if callee is not None:
                out.calls.append((pos, callee))
            for x in op.regions:
                region(x)
            items(plan.after.get(id(op)))

    region(model.body)
    return out


def allocate(model: SyncModel, plan: Plan, limit: int, callee_ids: dict[str, set[tuple[str, str, int]]],
             apart: set[frozenset[int]] | None = None) -> tuple[set[tuple[str, str, int]], set[int]]:
    """Fill ``plan.ids``. Returns the (src, dst, id) triples used (callees' included, so that a caller
    never holds an id its callee sets) and the pairs whose id had to ignore an ``apart`` constraint
    (no other id was free: the caller orders those by other means)."""
    lay = layout(model, plan)
    apart = apart or set()
    used: set[tuple[str, str, int]] = set()
    forced: set[int] = set()
    plan.ids.clear()
    by_pipes: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    for pair in plan.pairs:
        positions = lay.pair_pos.get(pair.pid)
        if positions:
            by_pipes.setdefault((pair.src, pair.dst), []).append((min(positions), max(positions), pair.pid))
    reserved: dict[tuple[str, str], list[tuple[int, int]]] = {}
    always: dict[tuple[str, str], set[int]] = {}
    for node in model.ops.values():  # the author's own flags: never shared with a planned pair
        sync = model.user_sync(node) if model.info[id(node)].kind == "sync" else None
        if sync is not None and sync[0] != "barrier":
            always.setdefault((sync[1], sync[2]), set()).add(sync[3])
            used.add((sync[1], sync[2], sync[3]))
    for at, callee in lay.calls:
        for src, dst, k in callee_ids.get(callee, set()):
            reserved.setdefault((src, dst), []).append((at, k))
            used.add((src, dst, k))
    for pipes, intervals in by_pipes.items():
        intervals.sort()
        active: list[tuple[int, int]] = []  # (end, id)
        for start, end, pid in intervals:
            active = [(e, k) for e, k in active if e >= start]
            taken = {k for _, k in active} | {k for at, k in reserved.get(pipes, ()) if start <= at <= end}
            taken |= always.get(pipes, set())
            avoid = {plan.ids[q] for q in plan.ids if frozenset((pid, q)) in apart}
            k = next((i for i in range(limit) if i not in taken and i not in avoid), None)
            if k is None:
                k = next((i for i in range(limit) if i not in taken), None)
                forced.add(pid)
            if k is None:
                pair = plan.pairs[pid]
                raise InputError(
                    f"automatic synchronisation needs more than {limit} event ids live at once on "
                    f"PIPE_{pipes[0]} -> PIPE_{pipes[1]} (the machine has {limit}); this hazard from "
                    f"{getattr(pair.producer, 'name', '?')} ({model.loc(pair.producer)}) would need another "
                    f"one - split the work or synchronise by hand", model.loc(pair.consumer))
            active.append((end, k))
            plan.ids[pid] = k
            used.add((pipes[0], pipes[1], k))
    return used, forced
