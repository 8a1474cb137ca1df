"""The chip's shared memory system (HBM and L2): where a core's DMA transfer asks for bandwidth.

Every instruction a DMA pipe (MTE2, MTE3, FIX) starts on a chip passes through
:meth:`SharedMemory.admit` with its start cycle, before its completion is fixed. ``admit`` may
lengthen the instruction's ``occupancy`` (how long it holds its pipe) and ``latency`` (when its
writes land) to model contention for HBM/L2 bandwidth between cores; it sees every transfer of
every core in start order, because all cores share one SimPy environment.

Today it changes nothing: the per-core costs in the machine file are the whole timing model, and
the chip-level numbers (``chip.shared`` in the machine file: ``hbm_bw``, ``l2_bw`` in bytes per
cycle) are recorded here for the timing calibration to use. That calibration replaces ``admit``'s
body; nothing else in the emulator needs to change.
"""

from __future__ import annotations

from ptoisa.machine import ChipSpec, Machine
from pyptoemu.core.pipe import Instr

DMA_PIPES = frozenset({"MTE2", "MTE3", "FIX"})


class SharedMemory:
    """HBM/L2 shared by all cores of a chip (see the module docstring)."""

    def __init__(self, spec: ChipSpec, machine: Machine) -> None:
        self.spec = spec
        self.machine = machine
        self.hbm_bw = spec.shared.get("hbm_bw")  # bytes per cycle, or None if the file gives none
        self.l2_bw = spec.shared.get("l2_bw")
        self.transfers = 0
        self.bytes = 0

    def admit(self, core, ins: Instr, start: int) -> None:
        """A DMA instruction of ``core`` starts at ``start`` and moves ``ins.nbytes`` bytes.

        The contention model goes here: adjust ``ins.occupancy`` / ``ins.latency``. Today it only
        counts the traffic."""
        self.transfers += 1
        self.bytes += ins.nbytes
