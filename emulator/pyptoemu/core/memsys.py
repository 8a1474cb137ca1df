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
  all read before in this run (by any core) is an L2 hit; anything else goes to HBM, and its lines
  become resident once HBM has delivered them (the HBM server's end for its bytes). A read of lines
  another transfer is still fetching merges with that miss (as a cache's miss handling does): it
  streams from L2 but cannot end before the fill has landed. The fill is limited by HBM, not by the
  fetching core's own port (``hbm_core_bw`` bounds what that core receives): the GEMM calibration
  figures have 24 cores loading shared A and B panels at ~85 B/cycle each (machine-a2a3.md, "TLOAD
  GM->L1 pair"), above the 32 B/cycle port, so the cores that share a panel are not held to the
  speed of the one that fetched it. Writes go to HBM and take no room in L2 (a kernel's
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

What sharing took is kept per pipe (:class:`Held`): the transfers whose end the shared HBM or L2
server fixed, beyond what the transfer's own per-core peak and its core's port allowed, and the
rate they were granted. The critical path's verdict names it (``SharedMemory.held_back``): "at 16.7
B/cycle per core: shared HBM bandwidth (48 cores streaming)".
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
# Cycles a transfer's shared-memory end may exceed its own by float rounding alone: the servers'
# timelines are sums of bytes / rate (``end - begin - stream`` of an unstretched transfer can come
# out as 1e-13, and the ceil of that was a whole cycle: 88 of the stream kernel's 256 tstores were
# once stretched by 1 cycle that sharing never took). Far below a cycle, far above the error.
ROUNDING = 1e-6


class Fill:
    """Lines one transfer is fetching from HBM into L2 (sorted, unique), and when HBM will have
    delivered them: a read of any of them before then waits for it."""

    __slots__ = ("hi", "lines", "lo", "name", "ready")

    def __init__(self, name: str, lines: np.ndarray, ready: float) -> None:
        self.name, self.lines, self.ready = name, lines, ready
        self.lo, self.hi = int(lines[0]), int(lines[-1])

    def holds_any(self, name: str, lines: np.ndarray, lo: int, hi: int) -> bool:
        if name != self.name or hi < self.lo or lo > self.hi:
            return False
        mine = self.lines
        at = np.minimum(np.searchsorted(mine, lines), mine.size - 1)
        return bool((mine[at] == lines).any())


class Held:
    """The transfers of one pipe (over all cores) that a shared server (HBM or L2 as a whole) held
    below their own peak: their GM bytes per medium and their pipe occupancy as granted (the
    DMA's fixed part included)."""

    __slots__ = ("bytes", "occupancy")

    def __init__(self) -> None:
        self.bytes = {HBM: 0.0, L2: 0.0}
        self.occupancy = 0

    def note(self, medium: str, traffic: float, occupancy: int) -> None:
        self.bytes[medium] += traffic
        self.occupancy += occupancy


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
        self.lines: dict[str, np.ndarray] = {}  # GM buffer name -> resident lines (or being fetched)
        self.fills: list[Fill] = []  # fetches from HBM into L2 not delivered yet (by the latest start)
        self.resident = 0
        self.traffic = {HBM: 0.0, L2: 0.0}  # bytes moved per medium
        self.stretched = 0  # cycles added to transfers by sharing
        self.held: dict[str, Held] = {}  # per pipe: the transfers a shared server held back (Held)
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

    def _look_up(self, name: str, lines: np.ndarray) -> tuple[float, np.ndarray | None]:
        """When every line is in L2 by (0: now; later: a fill in flight), or the lines that are not
        resident (a miss: they become resident, while L2 has room, once this transfer's fill lands)."""
        if lines.size == 0:
            return 0.0, None
        arr = self._resident(name, int(lines.max()) + 1)
        missing = lines[~arr[lines]]
        if missing.size:
            missing = np.unique(missing)
            if self.resident + missing.size * self.line > self.l2_bytes:
                return 0.0, missing[:0]  # a miss that L2 has no room to keep
            arr[missing] = True
            self.resident += missing.size * self.line
            return 0.0, missing
        ready = 0.0
        if self.fills:
            lo, hi = int(lines.min()), int(lines.max())
            for fill in self.fills:
                if fill.ready > ready and fill.holds_any(name, lines, lo, hi):
                    ready = fill.ready
        return ready, None

    def medium(self, ins) -> tuple[str, float, list]:
        """HBM or L2 for this transfer; for L2, the cycle its lines are there by (a fill another
        transfer has in flight); for HBM, the (buffer, lines) it fetches into L2."""
        if self.fits:  # all of GM is resident: every read hits, writes stay
            return L2, 0.0, []
        if any(w[3] is not None or w[0].startswith("arg") for w in ins.writes):
            return HBM, 0.0, []
        gm_reads = [r for r in ins.reads if r[3] is not None or r[0].startswith("arg")]
        if not gm_reads:
            return HBM, 0.0, []
        ready = 0.0
        fills = []
        for r in gm_reads:
            name, lines = self._lines(r)
            at, missing = self._look_up(name, lines)
            if missing is not None:
                fills.append((name, missing))
            elif at > ready:
                ready = at
        return (HBM, 0.0, fills) if fills else (L2, ready, fills)

    # ---------------------------------------------------------------------------- sharing

    def admit(self, core: object, ins: Instr, start: int) -> None:
        """A DMA instruction of ``core`` starts at ``start``: stretch the streaming part of a GM
        transfer to what HBM/L2 and its core's HBM port can serve.

        Called for every DMA instruction of a chip run, so written for the interpreter: a
        comparison where the formula says ``max`` (the same value, without a call). When all of
        GM is resident in L2 (``start`` found it fits, before any fill could be made), L2 alone
        serves the transfer, with no fill to wait for and no HBM port: :meth:`_admit_shared` with
        the medium L2, its float operations in the same order, here without its medium, fill and
        port steps and without a call (every DMA of a kernel whose GM fits in L2, a one-core run's
        nearly always: -0.6 M machine instructions per timing-only run of the stream kernel, 512
        transfers; callgrind)."""
        self.transfers += 1
        self.bytes += ins.nbytes
        transfer = ins.transfer
        if not transfer or not self.enabled or transfer[0] <= 0:
            return
        if not self.fits or len(transfer) > 2:
            self._admit_shared(core, ins, start, transfer)
            return
        traffic = transfer[0]
        stream = traffic / transfer[1]
        fixed = ins.occupancy - stream  # the fixed part moves no data
        begin = start + (fixed if fixed > 0.0 else 0.0)
        end = begin + stream
        free_at = self.free_at
        served = free_at[L2]
        if begin > served:
            served = begin
        served += traffic / self.l2_bw
        free_at[L2] = served
        if served > end:
            end = served
        excess = end - begin - stream
        if excess > ROUNDING:  # (less is the floats' rounding, not sharing: see ROUNDING)
            self._stretch(ins, excess, L2 if end == served else None, traffic, served - begin)
        self.traffic[L2] += traffic

    def _admit_shared(self, core: object, ins: Instr, start: int, transfer: tuple) -> None:
        """:meth:`admit` of a GM transfer in general: HBM or L2 (a fill in flight to wait for, or
        lines to fetch from HBM), and on HBM its core's port."""
        traffic = transfer[0]
        if not self.started:
            self.start(getattr(getattr(core, "memory", None), "gm", {}))
        if self.fills:  # transfers come in start order: a fill delivered by now is plain L2 from now on
            self.fills = [f for f in self.fills if f.ready > start]
        # a third element names the medium outright (FIFO slots: a small GM workspace kept in L2);
        # when all of GM fits in L2, every transfer is served there (:meth:`medium`)
        ready, fills = 0.0, None
        if len(transfer) > 2:
            medium = transfer[2]
        else:
            medium, ready, fills = self.medium(ins)
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
        if ready > end:  # its lines are still being fetched by another transfer: it waits for that fill
            end = ready
        if medium == HBM:
            port = self.port_free.get(core, 0.0)
            if begin > port:
                port = begin
            port += traffic / self.hbm_core_bw
            self.port_free[core] = port
            if port > end:
                end = port
        if fills:  # what it fetched is in L2 once HBM has moved it (its own port's limit is its own)
            self.fills.extend(Fill(name, missing, served) for name, missing in fills if missing.size)
        excess = end - begin - stream
        if excess > ROUNDING:  # (less is the floats' rounding, not sharing: see ROUNDING)
            self._stretch(ins, excess, medium if end == served else None, traffic, served - begin)
        self.traffic[medium] += traffic

    def _stretch(self, ins: Instr, excess: float, held_by: str | None, traffic: float, granted: float) -> None:
        """Add to ``ins`` the whole cycles (``excess``, less its rounding) sharing took beyond its own
        end; ``held_by``: the shared server (HBM or L2) that fixed its end after ``granted`` cycles
        of streaming, else None (its port or a fill in flight did)."""
        extra = math.ceil(excess - ROUNDING)
        ins.occupancy += extra
        ins.latency += extra
        self.stretched += extra
        if held_by is not None:
            self._note_held(ins, held_by, traffic, granted)

    def _note_held(self, ins: Instr, medium: str, traffic: float, granted: float) -> None:
        """A transfer whose end the shared server fixed after ``granted`` cycles of streaming: kept
        per pipe (:class:`Held`) if that is more than its core's HBM port alone would have taken (a
        port busy with the core's own transfers is not sharing)."""
        if medium == HBM and granted <= traffic / self.hbm_core_bw + ROUNDING:
            return
        held = self.held.get(ins.pipe)
        if held is None:
            held = self.held[ins.pipe] = Held()
        held.note(medium, traffic, ins.occupancy)

    def held_back(self, busy: dict[str, int], streaming: int) -> dict[str, tuple[float, str, int]]:
        """Per pipe whose work sharing slowed: (bytes per cycle per core its held transfers moved,
        ``"hbm"`` or ``"l2"``: the server that held most of their bytes, ``streaming``: the cores
        moving GM data). A pipe counts when the transfers a shared server held make up at least
        half of its ``busy`` cycles (summed over cores). The rate is what the memory system granted
        them, not a formula: their bytes over the pipe cycles they took (fixed part included, as a
        per-core bandwidth measured on the board counts it)."""
        out = {}
        for pipe, held in self.held.items():
            if not held.occupancy or 2 * held.occupancy < busy.get(pipe, 0):
                continue
            medium = HBM if held.bytes[HBM] >= held.bytes[L2] else L2
            out[pipe] = ((held.bytes[HBM] + held.bytes[L2]) / held.occupancy, medium, streaming)
        return out
