"""AllocateMemoryAddr: per memory space, addresses from 0 in MemRef id order, aligned per space.

A group kernel's FIFO consumer buffers (:func:`pypto.ops.fifo.fifo_setup`: slots x local slot size,
C2V in the AIVs' Vec, V2C in the cube's Mat) follow the tiles of their space (:func:`fifo_bases`), and a
popped tile is placed at its FIFO's base: it aliases the slot the pop binds, it has no buffer of its
own. Both count against the space's capacity."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import ALIGNMENT, CAPACITY, MemorySpace
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import MemRef
from pypto.ops import fifo
from pypto.passes.analysis import defined_vars, memref_of, popped_memrefs, retype
from pypto.passes.base import Pass, is_kernel


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


@dataclass(frozen=True)
class AllocateMemoryAddrPass(Pass):
    name: ClassVar[str] = "allocate-memory-addr"
    dump_name: ClassVar[str] = "AllocateMemoryAddr"

    def run_function(self, func: St.Function) -> St.Function:
        if not is_kernel(func):
            return func
        memrefs: dict = {}
        owner: dict = {}
        popped = popped_memrefs(func)
        for v in defined_vars(func):
            m = memref_of(v)
            if m is not None and m.memory_space is not MemorySpace.DDR and m not in popped:
                memrefs.setdefault(m.id, m)
                owner.setdefault(m, v)
        new: dict = {}
        used: dict = {}
        for m in sorted(memrefs.values(), key=lambda m: (m.memory_space, m.id)):
            sp = m.memory_space
            addr = _align(used.get(sp, 0), ALIGNMENT[sp])
            if addr + m.size > CAPACITY[sp]:
                total = addr + m.size
                v = owner[m]
                raise CompileError(
                    f"memory space {sp.name} overflows: tile '{v.name}' needs {m.size} bytes at offset {addr}, "
                    f"{total} bytes in total, but {sp.name} holds {CAPACITY[sp]} bytes",
                    v.span,
                    hint="use smaller tiles or loop over blocks",
                )
            new[m] = MemRef(sp, addr, m.size, m.id, m.span)
            used[sp] = addr + m.size
        setup = fifo.fifo_setup(func)
        if setup is not None:
            bases = fifo_bases(used, setup)
            for direction, (sp, base) in bases.items():
                size = setup.reserve(direction)
                if base + size > CAPACITY[sp]:
                    raise CompileError(
                        f"memory space {sp.name} overflows: the {direction.upper()} FIFO of the group kernel "
                        f"'{func.name}' needs {setup.slots(direction)} slots of {setup.local_slot(direction)} bytes at "
                        f"offset {base} beside "
                        f"the tiles, {base + size} bytes in total, but {sp.name} holds {CAPACITY[sp]} bytes",
                        func.span, hint="push smaller tiles")
            for m in popped:
                direction = fifo.C2V if m.memory_space is MemorySpace.Vec else fifo.V2C
                new[m] = MemRef(m.memory_space, bases[direction][1], m.size, m.id, m.span)

        def new_type(v: E.Var) -> Any:
            m = memref_of(v)
            return replace(v.type, memref=new[m]) if m in new else v.type

        return retype(func, new_type)


def fifo_bases(used: dict, setup: fifo.FifoSetup) -> dict:
    """``{direction: (space, base address)}`` of a group kernel's FIFO consumer buffers: right after
    the tiles of their space (``used``: bytes taken per space)."""
    out = {}
    for direction, sp in ((fifo.C2V, MemorySpace.Vec), (fifo.V2C, MemorySpace.Mat)):
        if setup.reserve(direction):
            out[direction] = (sp, _align(used.get(sp, 0), ALIGNMENT[sp]))
    return out


def fifo_layout(func: St.Function) -> tuple[fifo.FifoSetup | None, dict]:
    """An allocated group kernel's FIFO set-up and :func:`fifo_bases` (what the code generator prints)."""
    setup = fifo.fifo_setup(func)
    if setup is None:
        return None, {}
    popped = popped_memrefs(func)
    used: dict = {}
    for v in defined_vars(func):
        m = memref_of(v)
        if m is not None and m.memory_space is not MemorySpace.DDR and m not in popped:
            used[m.memory_space] = max(used.get(m.memory_space, 0), m.addr + m.size)
    return setup, fifo_bases(used, setup)


def memory_report(func: St.Function) -> dict:
    """Bytes used per on-chip space (after allocation)."""
    out: dict = {}
    seen = set()
    for v in defined_vars(func):
        m = memref_of(v)
        if m is not None and m.memory_space is not MemorySpace.DDR and m not in seen:
            seen.add(m)
            out[m.memory_space] = max(out.get(m.memory_space, 0), m.addr + m.size)
    return out


