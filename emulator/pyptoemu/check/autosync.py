"""Automatic synchronisation for the emulator (``--sync auto``, ``--sync serial``, ``pyptoemu sync``).

Kernels written at level 2 (and the many level-3 kernels that rely on the toolchain) carry no
set_flag/wait_flag/barrier: the assembler inserts them (pto-text-format.md §6.5). The planner is the
contract's (:mod:`ptoisa.sync`, shared with the compiler's InsertSync pass): it strips whatever
intra-core sync is present, orders every RAW/WAR/WAW hazard across pipes, loop back edges, if arms
and calls with the fewest flags and barriers, and proves the flag invariant of what it wrote. This
module is the interface the runner and the CLI call: mode selection, the program-order reference
(``serial``), and the ``sync`` subcommand.
"""

from __future__ import annotations

import os
from dataclasses import replace

from ptoisa.isa.spec import ISA
from ptoisa.machine import Machine, load_machine
from ptoisa.sync.pto_text import SyncStats, has_sync, strip_sync
from ptoisa.sync.pto_text import insert_sync as _insert
from ptoisa.text import ast as A
from ptoisa.text.parser import parse_file
from ptoisa.text.printer import print_module
from pyptoemu.errors import InputError, Loc
from pyptoemu.isa.runnable import load_isa

__all__ = ["SyncStats", "has_sync", "insert_sync", "insert_sync_with_stats", "prepare", "serialise",
           "strip_sync", "sync_file"]


def insert_sync(module: A.Module, isa: ISA | None, machine: Machine | str, entry: str | None = None) -> A.Module:
    """A new module whose functions carry automatically inserted sync (any intra-core sync already
    present is replaced). ``entry`` limits the work to that function and its callees; other functions
    are copied unchanged. Raises :class:`InputError` (with the op's location) when the kernel needs
    more event ids than the machine has, or uses ``pto.tassign``."""
    return insert_sync_with_stats(module, isa, machine, entry)[0]


def insert_sync_with_stats(module: A.Module, isa: ISA | None, machine: Machine | str,
                           entry: str | None = None) -> tuple[A.Module, SyncStats]:
    """:func:`insert_sync`, also returning counts of what it inserted."""
    mach = machine if isinstance(machine, Machine) else load_machine(str(machine))
    return _insert(module, isa if isa is not None else load_isa(machine=mach), mach, entry)


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
    isa = isa if isa is not None else load_isa(machine=mach)

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
