"""Tile-level SSA code generation (seed 002): each kernel's level-2 `.pto` raised to `pto.tile.*` form.

The compiler's lowest IR level in the seed-002 form: tiles as SSA values, GM as ``pto.memref``
arguments, no explicit synchronisation (the tile pipeline derives tokens and flags from the data
flow). Built from the level-2 module codegen produces, through the contract's raise
(:mod:`ptoisa.tile.from_level2`), and checked by the contract's verifier before it is written.
"""

from __future__ import annotations

from ptoisa.errors import PtoError
from ptoisa.isa.loader import load_isa
from ptoisa.text.parser import parse_module
from ptoisa.text.printer import print_module
from ptoisa.tile.from_level2 import raise_module
from ptoisa.tile.verify import verify
from pypto.errors import CompileError


def generate_tile_ir(pto: dict[str, str]) -> dict[str, str]:
    """Kernel name -> tile-level text, from kernel name -> level-2 `.pto` text."""
    isa = load_isa()
    out = {}
    for name, text in pto.items():
        try:
            module = raise_module(parse_module(text, f"{name}.pto"), isa)
            verify(module, isa)
        except PtoError as e:
            raise CompileError(f"kernel {name}: cannot emit the tile-level form: {e}") from None
        out[name] = print_module(module)
    return out
