"""``pypto.pypto_core.codegen.PTOCodegen().generate(program)``: the .pto text of a transformed program.

Seed 000's direct-codegen path: the program has been through the pass pipeline; the text is every
kernel's .pto module, in program order, separated by blank lines.
"""

from __future__ import annotations

from pypto.codegen.pto import PTOCodegen as _KernelCodegen
from pypto.ir.stmt import Program


class PTOCodegen:
    def generate(self, program: Program) -> str:
        """The .pto text of every kernel of ``program`` (which must have gone through the passes)."""
        return "\n".join(_KernelCodegen().generate(program).values())


__all__ = ["PTOCodegen"]
