"""Automatic synchronisation insertion (``--sync auto``, ``pyptoemu sync``).

Kernels written at level 2 (and the many level-3 kernels that rely on the toolchain) carry no
set_flag/wait_flag/barrier: the assembler inserts them (pto-text-format.md §6.5). To run such a
kernel on the pipe-accurate core, and to measure what the inserted sync costs, this module does the
same job: strip whatever intra-core sync is present, analyse RAW/WAR/WAW hazards between
instructions on overlapping memory (tiles and GM windows) across pipes, loop back edges, if arms
and calls, and insert the fewest flags and barriers that order them. The machinery lives in
:mod:`pyptoemu.check.syncpass`; this module is the interface the runner and the CLI call.
"""

from __future__ import annotations

import os
from dataclasses import replace

from ptoisa.isa.spec import ISA
from ptoisa.machine import Machine, load_machine
from ptoisa.text import ast as A
from pyptoemu.check.syncpass.emit import Emitted, allocate_events, materialise, strip_region
from pyptoemu.check.syncpass.model import SYNC_OPS, FunctionModel
from pyptoemu.check.syncpass.plan import Plan, Planner
from pyptoemu.check.syncpass.verify import check_flags, used_flags
from pyptoemu.errors import InputError, Loc

__all__ = ["SyncStats", "has_sync", "insert_sync", "insert_sync_with_stats", "prepare", "strip_sync", "sync_file"]


class SyncStats:
    """Counts of what the last :func:`insert_sync` call inserted (for notes and tests)."""

    def __init__(self) -> None:
        self.pairs = 0
        self.carried = 0
        self.barriers = 0
        self.fences = 0
        self.max_ids: dict[tuple[str, str], int] = {}

    def describe(self) -> str:
        most = max(self.max_ids.values(), default=0)
        text = (f"inserted {self.pairs} set/wait pairs ({self.carried} around loop back edges), "
                f"{self.barriers} pipe barriers")
        if self.fences:
            text += f", {self.fences} full barriers around calls/unmodelled ops"
        return text + f"; at most {most} event ids on one pipe pair"


def _walk(region: A.Region):
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from _walk(r)


def has_sync(module: A.Module) -> bool:
    """True when any function contains a sync op (flags, barriers, events, cross-core signals)."""
    return any(op.name in SYNC_OPS for fn in module.functions for op in _walk(fn.body))


def strip_sync(module: A.Module) -> A.Module:
    """A copy of ``module`` without intra-core sync ops. Cross-core ``sync.set``/``sync.wait`` are
    kept: they pair with another core's program, which this pass does not see."""
    return replace(module, functions=[replace(fn, body=strip_region(fn.body)) for fn in module.functions])


def _callees(fn: A.Function) -> list[str]:
    return [str(op.attrs.get("callee", "")) for op in _walk(fn.body) if op.name == "func.call"]


def _order(module: A.Module, entry: str | None) -> list[A.Function]:
    """Functions to process, callees before callers (so their event ids are known)."""
    names = {f.name: f for f in module.functions}
    roots = [entry] if entry else [f.name for f in module.functions]
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

    for r in roots:
        visit(r)
    return out


MAX_FIXES = 200


def _emit_checked(fn: A.Function, plan: Plan, effectful: set[str], limit: int,
                  ids: dict[str, set[tuple[str, str, int]]],
                  flags: dict[str, set[tuple]]) -> tuple[Emitted, set[tuple[str, str, int]]]:
    """Materialise ``plan`` with event ids and check the flag invariant (:mod:`.syncpass.verify`).

    Where a set could fire before the previous wait of its flag consumed it, the two pairs get
    different ids; where the machine has no id left for that, or the pair races with itself (its
    next execution), a full barrier before the set orders it. Every fix only adds order, so the loop
    ends; a program-order error would be a planner bug and is reported, never run."""
    apart: set[frozenset[int]] = set()
    for _ in range(MAX_FIXES):
        emitted = materialise(fn, plan, effectful)
        used = allocate_events(emitted, plan, limit, ids, apart)
        problems = check_flags(emitted.fn, flags)
        if problems.order:
            raise InputError("automatic synchronisation broke the flag invariant (a bug in the pass; "
                             "run with --sync serial): " + "; ".join(problems.order[:3]), fn.loc)
        if not problems.races:
            return emitted, used
        fresh: set[frozenset[int]] = set()
        for wait_op, set_op in problems.races:
            pw, ps = emitted.pair_of[id(wait_op)], emitted.pair_of[id(set_op)]
            key = frozenset((pw, ps))
            if key in fresh:
                continue  # the same two pairs the other way round: already set apart this round
            if pw != ps and key not in apart and not {pw, ps} & emitted.forced:
                apart.add(key)
                fresh.add(key)
            else:
                emitted.item_of[id(set_op)].fence = True
    raise InputError("automatic synchronisation could not make event ids safe to reuse", fn.loc)


def insert_sync(module: A.Module, isa: ISA | None, machine: Machine | str, entry: str | None = None) -> A.Module:
    """The pass: a new module whose functions carry automatically inserted sync (any intra-core
    sync already present is replaced). ``entry`` limits the work to that function and its callees;
    other functions are copied unchanged. Raises :class:`InputError` (with the op's location) when
    the kernel needs more event ids than the machine has, or uses ``pto.tassign``."""
    return insert_sync_with_stats(module, isa, machine, entry)[0]


def insert_sync_with_stats(module: A.Module, isa: ISA | None, machine: Machine | str,
                           entry: str | None = None) -> tuple[A.Module, SyncStats]:
    """:func:`insert_sync`, also returning counts of what it inserted."""
    mach = machine if isinstance(machine, Machine) else load_machine(str(machine))
    if isa is None:
        from pyptoemu.isa.runnable import load_isa

        isa = load_isa(machine=mach)
    if entry is not None and module.function(entry.lstrip("@")) is None:
        raise InputError(f"no function named '{entry.lstrip('@')}'", module.loc or Loc(module.file, 1, 1))
    stats = SyncStats()
    effectful: set[str] = set()
    ids: dict[str, set[tuple[str, str, int]]] = {}
    flags: dict[str, set[tuple]] = {}
    done: dict[str, A.Function] = {}
    stripped = strip_sync(module)  # existing sync is replaced, never planned around
    for fn in _order(stripped, entry.lstrip("@") if entry else None):
        model = FunctionModel(fn, isa, effectful)
        if any(i.kind in ("access", "fence") for i in model.info.values()):
            effectful.add(fn.name)
        plan = Planner(model, mach).build()
        emitted, used = _emit_checked(fn, plan, effectful, mach.event_ids, ids, flags)
        flags[fn.name] = used_flags(emitted.fn)
        for callee in _callees(fn):
            used |= ids.get(callee, set())
            flags[fn.name] |= flags.get(callee, set())
        ids[fn.name] = used
        done[fn.name] = emitted.fn
        stats.pairs += len(plan.pairs)
        stats.carried += sum(1 for p in plan.pairs if p.carried)
        stats.barriers += plan.barriers
        stats.fences += plan.fences
        for src, dst, k in used:
            stats.max_ids[(src, dst)] = max(stats.max_ids.get((src, dst), 0), k + 1)
    functions = [done.get(f.name, f) for f in module.functions]
    return replace(module, functions=functions), stats


def prepare(module: A.Module, fn: A.Function, sync: str | None, isa: ISA | None,
            machine: Machine | str) -> tuple[A.Module, A.Function, str, list[str]]:
    """Called by ``pyptoemu.run`` before execution: decide the sync mode and apply it.

    ``sync=None`` means ``auto`` when the kernel has no sync op at all (the author relied on the
    toolchain's insertion; a one-line notice says so) and ``asis`` otherwise. ``asis`` returns the
    module untouched; ``auto`` returns a new module (the input is not mutated) and its copy of ``fn``.
    """
    notices: list[str] = []
    if sync is None:
        if has_sync(module):
            return module, fn, "asis", notices
        sync = "auto"
        notices.append(f"{module.file}: no sync ops in the kernel; inserted synchronisation automatically "
                       f"(--sync asis to run as written)")
    if sync == "asis":
        return module, fn, "asis", notices
    if sync == "serial":
        new = serialise(strip_sync(module), isa, machine)
        new_fn = new.function(fn.name)
        assert new_fn is not None
        return new, new_fn, "serial", notices
    if sync != "auto":
        raise InputError(f"unknown sync mode '{sync}' (auto, serial or asis)", module.loc or Loc(module.file, 1, 1))
    try:
        new = insert_sync(module, isa, machine)
        mode = "auto"
    except InputError as e:
        if not notices:  # the user asked for --sync auto: say why it cannot be done
            raise
        # The author relied on the toolchain, which could not help here either (tassign, too many
        # live flags): run in program order so the numbers are still exact.
        new = serialise(module, isa, machine)
        mode = "serial"
        notices[-1] = (f"{module.file}: no sync ops in the kernel and automatic insertion is not possible "
                       f"({e}); ran in program order with a full barrier after every instruction "
                       f"(functionally exact, timing pessimistic)")
    new_fn = new.function(fn.name)
    assert new_fn is not None
    return new, new_fn, mode, notices


def serialise(module: A.Module, isa: ISA | None, machine: Machine | str) -> A.Module:
    """A copy of ``module`` with `pto.barrier <PIPE_ALL>` after every instruction a pipe executes:
    program order, so results equal a sequential reference whatever the pipes' timing."""
    mach = machine if isinstance(machine, Machine) else load_machine(str(machine))
    if isa is None:
        from pyptoemu.isa.runnable import load_isa

        isa = load_isa(machine=mach)

    def region(r: A.Region) -> A.Region:
        ops: list[A.Op] = []
        for op in r.ops:
            if op.regions:
                op = replace(op, regions=[region(x) for x in op.regions])
            ops.append(op)
            spec = isa.get(op.name) if op.name.startswith("pto.") else None
            if spec is not None and not spec.is_core:
                ops.append(A.Op("pto.barrier", op.loc, attrs={"pipe": A.EnumAttr("pipe", "PIPE_ALL")}))
        return replace(r, ops=ops)

    return replace(module, functions=[replace(fn, body=region(fn.body)) for fn in module.functions])


def sync_file(path: str | os.PathLike, out_path: str | os.PathLike, machine: str = "a2a3",
              entry: str | None = None) -> list[str]:
    """``pyptoemu sync``: parse, strip, insert, print to ``out_path``; returns notes for the user."""
    from ptoisa.text.parser import parse_file
    from ptoisa.text.printer import print_module
    from pyptoemu.isa.runnable import load_isa

    mach = load_machine(machine)
    module = parse_file(os.fspath(path))
    had = has_sync(module)
    new, stats = insert_sync_with_stats(strip_sync(module), load_isa(machine=mach), mach, entry=entry)
    text = print_module(new)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    notes = []
    if had:
        notes.append(f"{os.fspath(path)}: removed the existing intra-core sync ops")
    notes.append(f"{os.fspath(path)}: {stats.describe()}")
    notes.append(f"wrote {os.fspath(out_path)}")
    return notes
