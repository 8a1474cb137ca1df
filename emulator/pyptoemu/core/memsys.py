"""The chip's shared memory system (HBM and L2): how the GM transfers of many cores slow each
other down.

Every instruction a DMA pipe (MTE2, MTE3, FIX) starts on a chip passes through
:meth:`SharedMemory.admit` with its start cycle, before its completion is fixed; it sees every
transfer of every core in start order, because all cores share one SimPy environment. ``admit``
lengthens the instruction's ``occupancy`` and ``latency`` by what sharing costs it.

The per-instruction timing (isa_specs) gives each GM transfer its cost on an idle core, with its
data in L2: a fixed part plus ``traffic`` bytes at the path's per-core ``bandwidth`` (the calibration
figures were measured that way). On a chip the transfers of all cores meet in the memory system:

- L2 behaviour (documented choice): GM is cached in ``l2_line``-byte lines. A read whose lines were
  all touched before in this run (read or written by any core) is an L2 hit; anything else goes to
  HBM, and its lines become resident. Writes go to HBM and take no room in L2 (a kernel's
  outputs are written back, not read again: the GEMM's C must not push its A and B out) unless
  all the kernel's GM fits in L2, where they stay in L2.
  Nothing is evicted: once ``l2_bytes`` are resident, new lines are no longer cached. The GM the
  kernel works on starts resident when all of it fits in L2 (the host just wrote it; the
  per-instruction calibration figures were measured on such data), else it starts in HBM.
- Shared bandwidth: HBM (``hbm_bw``) and L2 (``l2_bw``) each serve the bytes of all cores'
  transfers at their rate, and each core's port to HBM serves that core's HBM bytes at
  ``hbm_core_bw``; a transfer also never streams faster than its own per-core peak (``bandwidth``
  in the timing spec). Each is a server that moves bytes in the order transfers start (a
  reservation timeline): a stream's bytes finish no earlier than the server can have moved them
  after everything admitted before. When all cores repeat the same transfers this gives each its
  fair share (n streams on HBM: hbm_bw / n each) and never more than the server's total;
  between waves it favours the stream that started first, where true fair sharing would not.
  The streaming part of the transfer is stretched to that end; its fixed part is not (it moves
  no data).

The numbers are ``chip.shared`` in the machine file (:data:`SHARED_KEYS`); a machine file without
them keeps the per-core timing only.
"""

# ruff: noqa: PLR1730, FURB136 - per-instruction code compares where it could call max() (a call costs
# several comparisons in CPython)
from __future__ import annotations

import math

import numpy as np

from ptoisa.machine import ChipSpec, Machine
from pyptoemu.core.pipe import Instr

DMA_PIPES = frozenset({"MTE2", "MTE3", "FIX"})
SHARED_KEYS = ("hbm_bw", "hbm_core_bw", "l2_bw", "l2_bytes", "l2_line")
HBM, L2 = "hbm", "l2"


class SharedMemory:
    """The chip's HBM and L2 as seen by the DMA transfers of all cores (see the module docstring)."""

    def __init__(self, spec: ChipSpec, machine: Machine) -> None:
        self.spec = spec
        self.machine = machine
        params = spec.shared
        missing = [k for k in SHARED_KEYS if k not in params]
        self.enabled = not missing  # a machine file without these numbers keeps per-core timing only
        if missing:
            params = dict.fromkeys(SHARED_KEYS, 1)
        self.transfers = 0
        self.bytes = 0
        self.hbm_bw = float(params["hbm_bw"])
        self.hbm_core_bw = float(params["hbm_core_bw"])
        self.l2_bw = float(params["l2_bw"])
        self.l2_bytes = int(params["l2_bytes"])
        self.line = int(params["l2_line"])
        self.free_at = {HBM: 0.0, L2: 0.0}  # when each server has moved every byte admitted so far
        self.port_free: dict[object, float] = {}  # per core: its HBM port, likewise
        self.lines: dict[str, np.ndarray] = {}  # GM buffer name -> resident lines
        self.resident = 0
        self.traffic = {HBM: 0.0, L2: 0.0}  # bytes moved per medium
        self.stretched = 0  # cycles added to transfers by sharing
        self.started = False
        self.fits = False  # all GM fits in L2: writes stay there

    def start(self, gm_buffers: dict) -> None:
        """At the first transfer: GM that fits in L2 as a whole starts resident there."""
        self.started = True
        if not gm_buffers:
            return
        total = sum(gm.size * gm.dtype.itemsize for gm in gm_buffers.values())
        if total > self.l2_bytes:
            return
        self.fits = True
        for gm in gm_buffers.values():
            n = -(-gm.size * gm.dtype.itemsize // self.line)
            self._resident(gm.name, n)[:n] = True
            self.resident += n * self.line

    # ---------------------------------------------------------------------------- the L2

    def _lines(self, access: tuple) -> tuple[str, np.ndarray]:
        """(buffer, the L2 lines a GM access touches) - every contiguous run's lines."""
        name, lo, hi, footprint = access
        if footprint is None or len(footprint[1]) < 2 or footprint[2][-1] != 1:
            return name, np.arange(lo // self.line, (hi - 1) // self.line + 1, dtype=np.int64)
        base, sizes, strides = footprint
        span = 1 + sum((z - 1) * s for z, s in zip(sizes, strides, strict=False) if z > 0)
        es = max(1, (hi - lo) // max(span, 1))
        starts = np.zeros(1, dtype=np.int64) + base
        for z, s in zip(sizes[:-1], strides[:-1], strict=False):
            starts = (starts[:, None] + np.arange(z, dtype=np.int64)[None, :] * s).reshape(-1)
        first = starts * es // self.line
        last = ((starts + sizes[-1]) * es - 1) // self.line + 1
        width = int((last - first).max()) if first.size else 0
        lines = first[:, None] + np.arange(width, dtype=np.int64)[None, :]
        return name, lines[lines < last[:, None]]

    def _resident(self, name: str, upto: int) -> np.ndarray:
        arr = self.lines.get(name)
        if arr is None or arr.size < upto:
            grown = np.zeros(max(upto, 2 * (0 if arr is None else arr.size)), dtype=bool)
            if arr is not None:
                grown[:arr.size] = arr
            arr = self.lines[name] = grown
        return arr

    def _touch(self, name: str, lines: np.ndarray) -> bool:
        """Mark the lines resident (while L2 has room); True if every line already was."""
        if lines.size == 0:
            return True
        arr = self._resident(name, int(lines.max()) + 1)
        missing = lines[~arr[lines]]
        if missing.size == 0:
            return True
        new = np.unique(missing).size
        if self.resident + new * self.line <= self.l2_bytes:
            arr[missing] = True
            self.resident += new * self.line
        return False

    def medium(self, ins) -> str:
        """HBM or L2 for this transfer (and the lines it touches become resident)."""
        if self.fits:  # all of GM is resident: every read hits, writes stay
            return L2
        if any(w[3] is not None or w[0].startswith("arg") for w in ins.writes):
            return HBM
        gm_reads = [r for r in ins.reads if r[3] is not None or r[0].startswith("arg")]
        read_hit = True
        for r in gm_reads:
            read_hit = self._touch(*self._lines(r)) and read_hit
        return L2 if (gm_reads and read_hit) else HBM

    # ---------------------------------------------------------------------------- sharing

    def admit(self, core: object, ins: Instr, start: int) -> None:
        """A DMA instruction of ``core`` starts at ``start``: stretch the streaming part of a GM
        transfer to what HBM/L2 and its core's HBM port can serve.

        Called for every DMA instruction of a chip run, so written for the interpreter: a
        comparison where the formula says ``max`` (the same value, without a call)."""
        self.transfers += 1
        self.bytes += ins.nbytes
        transfer = ins.transfer
        if not transfer or not self.enabled or transfer[0] <= 0:
            return
        traffic = transfer[0]
        if not self.started:
            self.start(getattr(getattr(core, "memory", None), "gm", {}))
        # a third element names the medium outright (FIFO slots: a small GM workspace kept in L2);
        # when all of GM fits in L2, every transfer is served there (:meth:`medium`)
        if len(transfer) > 2:
            medium = transfer[2]
        else:
            medium = L2 if self.fits else self.medium(ins)
        stream = traffic / transfer[1]
        fixed = ins.occupancy - stream  # the fixed part moves no data
        begin = start + (fixed if fixed > 0.0 else 0.0)
        end = begin + stream
        free_at = self.free_at
        served = free_at[medium]
        if begin > served:
            served = begin
        served += traffic / (self.hbm_bw if medium == HBM else self.l2_bw)
        free_at[medium] = served
        if served > end:
            end = served
        if medium == HBM:
            port = self.port_free.get(core, 0.0)
            if begin > port:
                port = begin
            port += traffic / self.hbm_core_bw
            self.port_free[core] = port
            if port > end:
                end = port
        excess = end - begin - stream
        if excess > 0.0:  # (ceil of anything else adds nothing)
            extra = math.ceil(excess)
            ins.occupancy += extra
            ins.latency += extra
            self.stretched += extra
        self.traffic[medium] += traffic
