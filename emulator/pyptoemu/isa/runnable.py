"""The ISA as the emulator runs it: the contract's records, each semantics key checked against the
NumPy functions registered here (the contract itself knows no Python implementation)."""

from __future__ import annotations

from pathlib import Path

from ptoisa.errors import Loc, SpecError
from ptoisa.isa import loader
from ptoisa.isa.spec import ISA
from ptoisa.machine import Machine
from pyptoemu.isa.semantics import SEMANTICS

_CHECKED: set[int] = set()


def load_isa(spec_dir: Path | str | None = None, machine: Machine | None = None) -> ISA:
    """:func:`ptoisa.isa.loader.load_isa`, plus: every semantics key names a registered NumPy
    function or a ``core.*`` behaviour of the simulator."""
    isa = loader.load_isa(spec_dir, machine)
    if id(isa) in _CHECKED:
        return isa
    for spec in isa.instructions.values():
        key = spec.semantics
        if key is not None and not key.startswith("core.") and key not in SEMANTICS:
            loc = spec.semantics_loc or Loc(spec.file, spec.line, 1)
            raise SpecError(f"{Path(spec.file).name}: entry '{spec.mnemonic}': unknown semantics key "
                            f"'{key}' (not registered, not core.*)", loc)
    _CHECKED.add(id(isa))
    return isa
