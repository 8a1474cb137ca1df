"""FuseLoops: cross-composite loop fusion (seed 003 §3.6; issue 12 item 3).

Two composites each lower to their own tile loop; written one after the other (two ``pypto.lib`` or
``@pl.inline`` calls in a kernel, two ``with pl.incore():`` scopes, two InCore functions called back to
back) the second loop reads, tile by tile, what the first wrote. The pass

1. merges producer/consumer kernel launches of Orchestration functions into one kernel
   (:mod:`pypto.passes.launch_fusion`), when that lets the loops fuse;
2. fuses producer/consumer loop pairs inside every kernel (:mod:`pypto.passes.loop_fusion`): one
   loop, both bodies per tile, the intermediate tile handed over on chip and its stores dropped when
   nobody reads the intermediate after the kernel; two library calls over the same plan are paired
   grid nest by grid nest (full blocks with full blocks, tail with tail);
3. inlines the library's one-block grid loops and removes the ``Out`` parameters (and their
   ``tensor.create``) that fusion left unused (:mod:`pypto.passes.grid_loops`).

Every decision, fused or refused with the reason, is a line of :attr:`FuseLoopsPass.log`; the pass
manager writes it at the top of this pass's dump (``--dump-passes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from pypto.ir import stmt as St
from pypto.ir.visitor import stmt_list
from pypto.passes.base import Pass, is_kernel
from pypto.passes.grid_loops import drop_unused_out_params, inline_one_block_loops
from pypto.passes.launch_fusion import LaunchFuser, dead_out_params
from pypto.passes.loop_fusion import FusionLog, buffer_links, fuse_block


@dataclass(frozen=True)
class FuseLoopsPass(Pass):
    """Fuse producer/consumer tile loops, across kernel launches too; ``log`` says what happened."""

    name: ClassVar[str] = "fuse-loops"
    dump_name: ClassVar[str] = "FuseLoops"
    log: list = field(default_factory=list, compare=False)
    # leave pairs of pl.range loops to ExpandPower2(expand_plain=...), which fuses them chunk-wise
    chunkwise_nonparallel: bool = False

    def run(self, program: St.Program) -> St.Program:
        """Return ``program`` with its fusable launches merged and loops fused."""
        self.log.clear()
        fusion_log = FusionLog(self.log)
        program = LaunchFuser(program, fusion_log).run()
        dead = dead_out_params(program)
        funcs = []
        for f in program.functions_list:
            if is_kernel(f):
                dead_params = {f.params[k] for k in dead.get(f.name, ())}
                stmts = list(stmt_list(f.body))
                fused = fuse_block(stmts, dead_params, buffer_links(f.body), fusion_log, f.name,
                                   self.chunkwise_nonparallel)
                if len(fused) != len(stmts) or any(a is not b for a, b in zip(fused, stmts, strict=True)):
                    f = replace(f, body=St.SeqStmts(tuple(fused), f.body.span))
                f = replace(f, body=inline_one_block_loops(f.body))
            funcs.append(f)
        return drop_unused_out_params(program.with_functions(funcs), dead)
