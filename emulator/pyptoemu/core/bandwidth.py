"""Shared HBM and L2 bandwidth: how the GM transfers of many cores slow each other down.

The per-instruction timing (isa_specs) gives each GM transfer its cost on an idle core, with its
data in L2: a fixed part plus ``traffic`` bytes at the path's per-core ``bandwidth`` (the calibration
figures were measured that way). On a chip the transfers of all cores meet in the memory system:

- L2 behaviour (documented choice): GM is cached in ``l2_line``-byte lines. A read whose lines were
  all touched before in this run (read or written by any core) is an L2 hit; anything else goes to
  HBM, and its lines become resident. Writes go to HBM (write-back) and make their lines resident.
  Nothing is evicted: once ``l2_bytes`` are resident, new lines are no longer cached. The GM the
  kernel works on starts resident when all of it fits in L2 (the host just wrote it; the
  per-instruction calibration figures were measured on such data), else it starts in HBM.
- Fair share: a transfer starting at cycle t streams at min(its per-core peak, its medium's
  bandwidth / the streams of that medium active at t) - HBM ``hbm_bw``, L2 ``l2_bw`` - and an HBM
  stream also at most ``hbm_core_bw`` / the HBM streams of its own core (one core's port to HBM).
  Its streaming part is stretched accordingly; its fixed part is not (it moves no data).
- The share is decided when the transfer starts (the streams active then, it included), not
  re-balanced when others start or end later: in steady state, when every core repeats the same
  transfers, that is the fair share; at the edges of a wave it is approximate.
"""

from __future__ import annotations

import math

import numpy as np

HBM, L2 = "hbm", "l2"


class SharedBandwidth:
    """The chip's HBM and L2 as seen by the DMA transfers of all cores (see the module docstring)."""

    def __init__(self, params: dict) -> None:
        self.hbm_bw = float(params["hbm_bw"])
        self.hbm_core_bw = float(params["hbm_core_bw"])
        self.l2_bw = float(params["l2_bw"])
        self.l2_bytes = int(params["l2_bytes"])
        self.line = int(params["l2_line"])
        self.active: list[tuple[float, float, str, object]] = []  # (stream start, stream end, medium, core)
        self.lines: dict[str, np.ndarray] = {}  # GM buffer name -> resident lines
        self.resident = 0
        self.traffic = {HBM: 0.0, L2: 0.0}  # bytes moved per medium
        self.stretched = 0  # cycles added to transfers by sharing
        self.started = False

    def start(self, gm_buffers: dict) -> None:
        """At the first transfer: GM that fits in L2 as a whole starts resident there."""
        self.started = True
        total = sum(gm.size * gm.dtype.itemsize for gm in gm_buffers.values())
        if total > self.l2_bytes:
            return
        for gm in gm_buffers.values():
            n = -(-gm.size * gm.dtype.itemsize // self.line)
            self._resident(gm.name, n)[:n] = True
            self.resident += n * self.line

    # ---------------------------------------------------------------------------- the L2

    def _line_ranges(self, access: tuple) -> list[tuple[str, int, int]]:
        """(buffer, first line, last line + 1) per contiguous run of a GM access."""
        name, lo, hi, footprint = access
        if footprint is None:
            return [(name, lo // self.line, (hi - 1) // self.line + 1)]
        base, sizes, strides = footprint
        span = 1 + sum((z - 1) * s for z, s in zip(sizes, strides, strict=False) if z > 0)
        es = max(1, (hi - lo) // max(span, 1))
        if len(sizes) < 2 or strides[-1] != 1:
            return [(name, lo // self.line, (hi - 1) // self.line + 1)]
        starts = np.zeros(1, dtype=np.int64) + base
        for z, s in zip(sizes[:-1], strides[:-1], strict=False):
            starts = (starts[:, None] + np.arange(z, dtype=np.int64)[None, :] * s).reshape(-1)
        run = sizes[-1]
        first = starts * es // self.line
        last = ((starts + run) * es - 1) // self.line + 1
        return [(name, int(a), int(b)) for a, b in zip(first.tolist(), last.tolist(), strict=True)]

    def _resident(self, name: str, upto: int) -> np.ndarray:
        arr = self.lines.get(name)
        if arr is None or arr.size < upto:
            grown = np.zeros(max(upto, 2 * (0 if arr is None else arr.size)), dtype=bool)
            if arr is not None:
                grown[:arr.size] = arr
            arr = self.lines[name] = grown
        return arr

    def _touch(self, ranges: list[tuple[str, int, int]]) -> bool:
        """Mark the lines resident (while L2 has room); True if every line already was."""
        hit = True
        for name, a, b in ranges:
            arr = self._resident(name, b)
            seg = arr[a:b]
            new = int(b - a - np.count_nonzero(seg))
            if new:
                hit = False
                if self.resident + new * self.line <= self.l2_bytes:
                    seg[:] = True
                    self.resident += new * self.line
        return hit

    def medium(self, ins) -> str:
        """HBM or L2 for this transfer (and the lines it touches become resident)."""
        gm_reads = [r for r in ins.reads if r[3] is not None or r[0].startswith("arg")]
        gm_writes = [w for w in ins.writes if w[3] is not None or w[0].startswith("arg")]
        read_hit = True
        for r in gm_reads:
            read_hit = self._touch(self._line_ranges(r)) and read_hit
        for w in gm_writes:
            self._touch(self._line_ranges(w))
        if gm_writes:
            return HBM
        return L2 if (gm_reads and read_hit) else HBM

    # ---------------------------------------------------------------------------- sharing

    def admit(self, core: object, ins, start: int) -> None:
        """Stretch the streaming part of a GM transfer starting at ``start`` by its fair share."""
        transfer = getattr(ins, "transfer", None)
        if not transfer or transfer[0] <= 0:
            return
        traffic, peak = transfer
        if not self.started:
            self.start(getattr(getattr(core, "memory", None), "gm", {}))
        medium = self.medium(ins)
        stream = traffic / peak
        begin = start + max(0.0, ins.occupancy - stream)  # the fixed part moves no data
        self.active = [a for a in self.active if a[1] > begin]
        same_medium = 1 + sum(1 for a in self.active if a[2] == medium and a[0] <= begin)
        rate = min(peak, (self.hbm_bw if medium == HBM else self.l2_bw) / same_medium)
        if medium == HBM:
            same_core = 1 + sum(1 for a in self.active if a[2] == HBM and a[3] is core and a[0] <= begin)
            rate = min(rate, self.hbm_core_bw / same_core)
        extra = max(0, math.ceil(traffic / rate - stream)) if rate < peak else 0
        ins.occupancy += extra
        ins.latency += extra
        self.stretched += extra
        self.traffic[medium] += traffic
        self.active.append((begin, begin + stream + extra, medium, core))
