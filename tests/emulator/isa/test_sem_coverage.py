"""Every implemented NumPy-semantics instruction has a property test naming it."""

from __future__ import annotations

from pathlib import Path

from pyptoemu.isa.runnable import load_isa


def test_every_implemented_op_has_a_semantics_test() -> None:
    here = Path(__file__).parent
    source = "".join(p.read_text() for p in sorted(here.glob("test_sem_*.py")) if p.name != Path(__file__).name)
    missing = [
        s.mnemonic for s in load_isa().instructions.values()
        if s.implemented and not s.is_core and f'"{s.mnemonic}"' not in source
    ]
    assert missing == []
