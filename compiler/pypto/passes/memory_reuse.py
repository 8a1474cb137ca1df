"""MemoryReuse: lifetime-based sharing of buffers within a memory space (linear scan).

A buffer's live range runs from its first definition to its last use in program order; a range that
touches a loop from outside is extended to the whole loop. A buffer whose range starts after another
buffer of the same space has ended (and that fits into it) takes that buffer over (the smallest
such), except that a small vector tile does not take over a much larger buffer (:data:`WASTE`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import MemorySpace
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import MemRef
from pypto.ir.visitor import stmt_list, walk
from pypto.passes.analysis import memref_of, popped_memrefs, retype
from pypto.passes.base import Pass, is_kernel

# A small vector tile (a row statistic, at most SMALL bytes) does not take over a freed UB buffer more
# than WASTE times its size: an [8, 1] statistic held across a loop would pin a whole 32 KiB block
# tile's buffer (a two-level softmax fused with the next op overflowed the UB so). Larger tiles and
# the cube buffers reuse as before (a matmul's tail chunk takes over a full chunk's buffer).
SMALL = 1024
WASTE = 8


def _wasted(m: MemRef, size: int) -> bool:
    return m.memory_space is MemorySpace.Vec and m.size <= SMALL and size > m.size * WASTE


class _Liveness:
    def __init__(self, func: St.Function):
        self.pos = 0
        self.first: dict = {}
        self.last: dict = {}
        self.loops: list[tuple[int, int]] = []
        for p in func.params:
            self.touch(p)
        self.block(func.body)

    def touch(self, node: Any) -> None:
        for n in walk(node) if not isinstance(node, E.Var) else [node]:
            m = memref_of(n) if isinstance(n, E.Var) else None
            if m is not None and m.memory_space is not MemorySpace.DDR:
                self.first.setdefault(m, self.pos)
                self.last[m] = self.pos

    def block(self, body: Any) -> None:
        for s in stmt_list(body):
            self.pos += 1
            if isinstance(s, (St.ForStmt, St.WhileStmt)):
                start = self.pos
                for ia in s.iter_args:
                    self.touch(ia.init_value)
                    self.touch(ia)
                if isinstance(s, St.WhileStmt):
                    self.touch(s.condition)
                self.block(s.body)
                self.pos += 1
                for rv in s.return_vars:
                    self.touch(rv)
                self.loops.append((start, self.pos))
            elif isinstance(s, St.IfStmt):
                self.touch(s.condition)
                self.block(s.then_body)
                if s.else_body is not None:
                    self.block(s.else_body)
                self.pos += 1
                for rv in s.return_vars:
                    self.touch(rv)
            elif isinstance(s, St.ScopeStmt):
                self.block(s.body)
            else:
                self.touch(s)

    def ranges(self) -> dict:
        out = {m: [self.first[m], self.last[m]] for m in self.first}
        changed = True
        while changed:
            changed = False
            for lo, hi in self.loops:
                for r in out.values():
                    if r[0] < lo <= r[1] < hi:
                        r[1] = hi
                        changed = True
        return out


@dataclass(frozen=True)
class MemoryReusePass(Pass):
    name: ClassVar[str] = "memory-reuse"
    dump_name: ClassVar[str] = "MemoryReuse"

    def run_function(self, func: St.Function) -> St.Function:
        if not is_kernel(func):
            return func
        ranges = _Liveness(func).ranges()
        # a popped FIFO tile is the FIFO's slot (AllocateMemoryAddr places it there): no buffer to share
        popped = popped_memrefs(func)
        order = sorted((m for m in ranges if m not in popped), key=lambda m: (ranges[m][0], m.id))
        buffers: list[list] = []  # [representative, size, end]
        assign: dict = {}
        for m in order:
            start, end = ranges[m]
            fits = [b for b in buffers if b[0].memory_space is m.memory_space and b[2] < start and b[1] >= m.size
                    and not _wasted(m, b[1])]
            if fits:
                best = min(fits, key=lambda b: (b[1], b[0].id))
                best[2] = end
                assign[m] = best
            else:
                b = [m, m.size, end]
                buffers.append(b)
                assign[m] = b
        final = {id(b): MemRef(b[0].memory_space, b[0].addr, b[1], b[0].id, b[0].span) for b in buffers}
        remap = {m: final[id(b)] for m, b in assign.items()}

        def new_type(v: E.Var) -> Any:
            m = memref_of(v)
            return replace(v.type, memref=remap[m]) if m in remap else v.type

        return retype(func, new_type)
