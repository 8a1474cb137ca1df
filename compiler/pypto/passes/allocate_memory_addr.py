"""AllocateMemoryAddr: per memory space, addresses from 0 in MemRef id order, aligned per space."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import ALIGNMENT, CAPACITY, MemorySpace
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import MemRef
from pypto.passes.analysis import defined_vars, memref_of, retype
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
        for v in defined_vars(func):
            m = memref_of(v)
            if m is not None and m.memory_space is not MemorySpace.DDR:
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

        def new_type(v: E.Var) -> Any:
            m = memref_of(v)
            return replace(v.type, memref=new[m]) if m in new else v.type

        return retype(func, new_type)


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


