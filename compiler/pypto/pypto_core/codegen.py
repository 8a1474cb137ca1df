"""``pypto.pypto_core.codegen.PTOCodegen().generate(program)``: the .pto text of a transformed program.

Seed 000's direct-codegen path: the program has been through the pass pipeline; the text is every
kernel's .pto module, in program order, separated by blank lines. A program that has not been through
the passes (a ``@pl.program`` class as written) is run through the default pipeline first: code
generation needs what the passes decide (tensor views, tile buffers, synchronisation), and without
them it could only fail on the first parameter it looks up.
"""

from __future__ import annotations

from pypto.codegen.pto import PTOCodegen as _KernelCodegen
from pypto.ir.compiler import compile_program
from pypto.ir.stmt import Program
from pypto.ir.types import TensorType
from pypto.passes.analysis import memref_of


def _transformed(program: Program) -> bool:
    """Whether the passes have run: InitMemRef gives every tensor parameter a memory reference."""
    return all(memref_of(p) is not None for f in program.functions_list for p in f.params
               if isinstance(p.type, TensorType))


class PTOCodegen:
    def generate(self, program: Program) -> str:
        """The .pto text of every kernel of ``program`` (run through the default passes if it was not)."""
        if not _transformed(program):
            program = compile_program(program, with_cpp=False).program
        return "\n".join(_KernelCodegen().generate(program).values())


__all__ = ["PTOCodegen"]
