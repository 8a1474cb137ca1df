"""Cross-core state of a chip: cube<->vector FIFOs, cross-core signals, reserved FIFO buffers.

Semantics (pto-text-format §4.13, §6.3):

* **Signals** (``sync.set <P>, id`` / ``sync.wait <P>, id``): a set is raised once every earlier
  instruction of its pipe has completed. In a core group, a set on the cube core reaches each of
  the two vector cores; the cube's wait for an id consumes one set from *each* vector core (the
  A2/A3 group mode). Outside a group a core signals itself. Signals count (a second set before
  the wait is kept, not lost).
* **FIFOs** (``tpush_to_aiv`` / ``tpop_from_aic`` / ``tfree_from_aic`` and the V2C mirror): one
  C2V and one V2C FIFO per core group, ``slots`` deep (machine params ``fifo_slots_one_way`` /
  ``fifo_slots_two_way``), ``slot_size`` bytes per unsplit tile, a lane per vector core. A push
  first waits, on its own pipe, for a slot every lane it feeds has freed (a full FIFO blocks the
  producer's pipe), then copies the tile; at its completion the tile (or each half, by ``split``:
  1 = rows, 2 = columns; 0 = unsplit, between the cube and sub-block 0 only) is in the lane. A pop
  blocks the consumer's scalar unit until its lane has a tile (an empty FIFO blocks the consumer)
  and returns a tile aliasing the slot ``base + slot * slot_size`` of the consumer's buffer. A free
  releases the oldest popped slot once every earlier instruction of the consumer has completed
  (one marker per pipe). With ``gm_slot_buffer`` (A2/A3 staging) each tile also travels through
  the GM buffer given, slot by slot, where it can be inspected.

Each wait records the instructions that released it (``Instr.released_by``, a list), which the
race detector follows across cores and the trace draws as arrows.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
import simpy

from pyptoemu.core.pipe import Instr
from pyptoemu.errors import KernelFault, Loc, VerifyError

C2V, V2C = "C2V", "V2C"


class _Waiters:
    """Events to wake when something a waiter depends on changes."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.events: list[simpy.Event] = []

    def event(self) -> simpy.Event:
        ev = self.env.event()
        self.events.append(ev)
        return ev

    def wake(self) -> None:
        events, self.events = self.events, []
        for ev in events:
            ev.succeed()


# ------------------------------------------------------------------------------------ signals


class SignalSet:
    """The gate of a ``sync.set``: delivers the signal when it fires."""

    def __init__(self, cc: CrossCore, core, sid: int) -> None:
        self.cc, self.core, self.sid = cc, core, sid

    def fire(self, setter: Instr) -> None:
        self.cc.deliver_signal(self.core, self.sid, setter)

    def describe(self) -> str:
        return f"id {self.sid}"


class SignalWait:
    """The gate of a ``sync.wait``: ready when every expected sender has set the id."""

    def __init__(self, cc: CrossCore, core, sid: int) -> None:
        self.cc, self.core, self.sid = cc, core, sid

    def _queues(self) -> list[deque]:
        return [self.cc.signal_queue(self.core.label, self.sid, lane) for lane in self.cc.signal_lanes(self.core)]

    def ready(self) -> bool:
        return all(self._queues())

    def event(self) -> simpy.Event:
        return self.cc.signal_waiters.event()

    def take(self, waiter: Instr) -> list:
        self.cc.active = True
        return [q.popleft() for q in self._queues()]

    def describe(self) -> str:
        senders = self.cc.signal_senders(self.core)
        return f"for cross-core signal id {self.sid} from {senders}, which never sets it"


# -------------------------------------------------------------------------------------- FIFOs


@dataclass(slots=True)
class Entry:
    """One pushed tile (or half) in a lane: its slot, its values, the push that delivered it."""

    slot: int
    values: np.ndarray
    push: Instr
    lanes: tuple[int, ...]  # lanes this push fed (a free releases the slot in these)
    lane: int  # the lane this entry is in
    part: int = 0  # byte offset of this half in its GM staging slot (0, or slot_size / 2 for a split half)
    local: int = -1  # the consumer's local slot it was popped into


@dataclass(slots=True)
class Lane:
    filled: deque = field(default_factory=deque)  # delivered, not popped
    popped: deque = field(default_factory=deque)  # pops by this lane's consumer not freed yet: [Entry, ...]
    in_use: int = 0  # slots reserved by pushes and not yet freed
    pushes: int = 0
    pops: int = 0


class Fifo:
    """One logical pipe of a core group (C2V or V2C); see the module docstring."""

    def __init__(self, cc: CrossCore, group: int, direction: str, slot_size: int, slots: int, loc: Loc,
                 local_slots: int | None = None, label: str = "") -> None:
        self.cc = cc
        self.group = group
        self.direction = direction
        self.slot_size = slot_size
        self.slots = slots
        # Explicit pipe objects (initialize_l2g2l_pipe) have their own, smaller, ring of local slots
        # in the consumer's buffer, taken in pop order; None: the local slot is the pushed slot.
        self.local_slots = local_slots
        # Bytes between the consumer's local slots: slot_size, except on an explicit pipe's C2V side
        # without nosplit, where each vector core receives half a slot and keeps only that
        self.local_stride = slot_size
        self.label = label  # "" for the aic_/aiv_ FIFO, else the pipe object's name
        self.loc = loc
        self.lanes = [Lane(), Lane()]
        self.base: dict[int, int] = {}  # consumer lane (0 for the cube) -> slot region base address
        self.gm = None  # Ptr of the GM staging buffer, if any
        self.gm_limit: int | None = None  # elements of the staging buffer from gm.offset (None: to its end)
        self.next_slot = [0, 0]
        self.local_pops = [0, 0]  # pops per consumer lane so far (explicit pipes: the local ring)
        self.local_release: dict[tuple[int, int], FreeRelease] = {}  # (lane, local slot) -> its latest free
        self.waiters = _Waiters(cc.env)

    @property
    def name(self) -> str:
        return f"{self.direction} pipe {self.label}" if self.label else self.direction

    def next_local_slot(self, lane: int) -> int:
        """Explicit pipes: the consumer's local slot the next pop of ``lane`` lands in (a ring)."""
        n = self.local_pops[lane] % self.local_slots
        self.local_pops[lane] += 1
        return n

    def stage_at(self, gm, limit: int | None, direction_index: int) -> None:
        """Stage through GM ``gm`` (a Ptr; ``limit`` elements from it, None: to its end). With both
        directions in one buffer (dir_mask 3), V2C's slots follow C2V's."""
        shift = direction_index * self.slots * self.slot_size // gm.gm.dtype.itemsize
        self.gm = type(gm)(gm.gm, gm.offset + shift)
        self.gm_limit = None if limit is None else max(0, limit - shift)

    def lanes_of(self, split: int) -> tuple[int, ...]:
        return (0,) if split == 0 else (0, 1)

    # producer side
    def has_space(self, lanes: tuple[int, ...]) -> bool:
        return all(self.lanes[ln].in_use < self.slots for ln in lanes)

    def reserve(self, lanes: tuple[int, ...]) -> int:
        slot = self.next_slot[lanes[0]]
        for ln in lanes:
            self.lanes[ln].in_use += 1
            self.next_slot[ln] = (self.next_slot[ln] + 1) % self.slots
        return slot

    def deliver(self, lane: int, entry: Entry) -> None:
        self.lanes[lane].filled.append(entry)
        self.lanes[lane].pushes += 1
        self.waiters.wake()

    # consumer side
    def release(self, entries: list) -> None:
        """A free: each popped entry's slot becomes free in its own lane."""
        for e in entries:
            self.lanes[e.lane].in_use -= 1
        self.waiters.wake()


class SpaceGate:
    """A push's wait for a free slot in every lane it feeds (a full FIFO blocks the producer's pipe)."""

    def __init__(self, fifo: Fifo, lanes: tuple[int, ...], ticket: dict) -> None:
        self.fifo, self.lanes, self.ticket = fifo, lanes, ticket

    def ready(self) -> bool:
        return self.fifo.has_space(self.lanes)

    def event(self) -> simpy.Event:
        return self.fifo.waiters.event()

    def take(self, waiter: Instr) -> list:
        self.fifo.cc.active = True
        self.ticket["slot"] = self.fifo.reserve(self.lanes)
        freed = self.fifo.cc.freed_by  # the frees that made room last, per lane
        return [m for ln in self.lanes for m in freed.get((id(self.fifo), ln), [])]

    def describe(self) -> str:
        f = self.fifo
        popped = min(f.lanes[ln].pops for ln in self.lanes)
        return (f"for a free {f.name} slot: all {f.slots} slots hold tiles the consumer has not freed "
                f"({popped} popped so far)")

    def misuse(self) -> str:
        f = self.fifo
        return (f"more pushes into the {f.name} FIFO than its {f.slots} slots with none of them freed: the "
                f"producer waits for a slot forever")


class FreeRelease:
    """The markers of a ``tfree_*``: the slot is released when every marker has fired."""

    def __init__(self, fifo: Fifo, entries: list, markers: int) -> None:
        self.fifo, self.entries, self.left, self.fired = fifo, entries, markers, []

    def fire(self, setter: Instr) -> None:
        self.fired.append(setter)
        self.left -= 1
        if self.left == 0:
            for e in self.entries:
                self.fifo.cc.freed_by[(id(self.fifo), e.lane)] = self.fired
            self.fifo.release(self.entries)

    def describe(self) -> str:
        return f"release of a {self.fifo.name} slot"


# ------------------------------------------------------------------------------ slot checking


class SlotWatch:
    """FIFO misuse on one consumer core's slots, checked in program order (the race detector
    does not follow the cross-core hand-offs that order slot reuse, so it is done here).

    A pop binds a tile to a local slot range; its free releases it to the producer, who may refill
    it at any moment after. Found: an instruction issued after the free that reads or writes the
    freed slot (``fifo-misuse``: a read of a freed slot), and a pop into a local slot whose previous
    tile was never freed (a slot overwritten before it is consumed)."""

    def __init__(self, core) -> None:
        self.core = core
        self.slots: dict[tuple, list] = {}  # (fifo id, lane, local slot) -> [buffer, lo, hi, freed-at loc or None, pop loc]
        self.freed: list[list] = []  # the records currently freed (checked on every issue)

    def reuse(self, fifo: Fifo, lane: int, slot: int, loc: Loc) -> bool:
        """A pop into local slot ``slot`` of an explicit pipe: False (and a finding) when the tile
        popped there before was not freed (in program order)."""
        old = self.slots.get((id(fifo), lane, slot))
        if old is None or old[3] is not None:
            return True
        self.core.findings.add(
            "fifo-misuse", "error",
            f"this pop overwrites local slot {slot} of the {fifo.name} FIFO while the tile popped into it "
            f"at {old[4]} is not freed yet (local_slot_num {fifo.local_slots} is fewer than the tiles "
            f"held at once): free before popping again", [loc, old[4]])
        return False

    def bind(self, fifo: Fifo, lane: int, slot: int, buffer: str, lo: int, hi: int, loc: Loc) -> None:
        key = (id(fifo), lane, slot)
        old = self.slots.get(key)
        if old is not None and old in self.freed:
            self.freed.remove(old)
        self.slots[key] = [buffer, lo, hi, None, loc]

    def release(self, fifo: Fifo, lane: int, slot: int, loc: Loc) -> None:
        rec = self.slots.get((id(fifo), lane, slot))
        if rec is not None and rec[3] is None:
            rec[3] = loc
            self.freed.append(rec)

    def check(self, instr: Instr) -> None:
        """An instruction being issued: does it touch a slot that was freed?"""
        for ranges, verb in ((instr.reads, "reads"), (instr.writes, "writes")):
            for acc in ranges:
                name, lo, hi = acc[0], acc[1], acc[2]
                for rec in self.freed:
                    if rec[0] == name and lo < rec[2] and rec[1] < hi:
                        self.core.findings.add(
                            "fifo-misuse", "error",
                            f"{instr.name} {verb} {name} bytes [{max(lo, rec[1])}, {min(hi, rec[2])}) of a FIFO slot "
                            f"that tfree at {rec[3]} already released: the producer may refill it at any time "
                            f"(the tile was popped at {rec[4]}); free the slot after its last use",
                            [instr.loc, rec[3]], [instr.pipe])


# ---------------------------------------------------------------------------------- the state


class CrossCore:
    """Everything the cores of a chip share besides GM (see the module docstring)."""

    def __init__(self, chip) -> None:
        self.chip = chip
        self.env = chip.env
        self.active = False  # a cross-core wait happened: deadlocks then name every core
        self.signals: dict[tuple, deque] = {}
        self.signal_waiters = _Waiters(self.env)
        self.fifos: dict[tuple[int, str], Fifo] = {}
        self.reserved: dict[tuple[int, str], list] = {}  # (group, name) -> [(core, address)]
        self.reserve_waiters = _Waiters(self.env)
        self.reserve_size: dict[tuple, int] = {}  # (core label, address) -> bytes of its reserve_buffer
        self.freed_by: dict[tuple, list] = {}  # (fifo, lane) -> markers of its latest free
        self.tokens: dict[tuple, object] = {}  # (core label, buffer id) -> get_buf token
        machine = chip.machine
        self.slots_one_way = int(machine.params.get("fifo_slots_one_way", 8))
        self.slots_two_way = int(machine.params.get("fifo_slots_two_way", 4))

    # the group of a core -----------------------------------------------------------------

    def group_of(self, core) -> tuple | None:
        """(AIC, [AIV0, AIV1]) of ``core``'s group in a group launch, else None."""
        if self.chip.launch.mode != "group" or core.kind.name not in ("aic", "aiv"):
            return None
        return self.chip.group_cores(core.group)

    def lane_of(self, core) -> int:
        return core.subblock_idx if core.kind.name == "aiv" else 0

    # signals ------------------------------------------------------------------------------

    def signal_queue(self, label: str, sid: int, lane: int) -> deque:
        key = (label, sid, lane)
        q = self.signals.get(key)
        if q is None:
            q = self.signals[key] = deque()
        return q

    def signal_lanes(self, core) -> range:
        g = self.group_of(core)
        if g is not None and core.kind.name == "aic":
            return range(len(g[1]))
        return range(1)

    def signal_senders(self, core) -> str:
        g = self.group_of(core)
        if g is None:
            return f"{core.label} itself"
        if core.kind.name == "aic":
            return " and ".join(c.label for c in g[1])
        return g[0].label

    def deliver_signal(self, core, sid: int, setter: Instr) -> None:
        g = self.group_of(core)
        if g is None:
            self.signal_queue(core.label, sid, 0).append(setter)
        elif core.kind.name == "aic":
            for aiv in g[1]:
                self.signal_queue(aiv.label, sid, 0).append(setter)
        else:
            self.signal_queue(g[0].label, sid, core.subblock_idx).append(setter)
        self.signal_waiters.wake()

    # FIFOs ----------------------------------------------------------------------------------

    def fifo(self, core, direction: str, loc: Loc, create: tuple | None = None, label: str = "") -> Fifo:
        """The group's FIFO of ``direction`` (``label``: an explicit pipe object's, else the
        aic_/aiv_ one); ``create`` = (slot_size, slots, local slots or None) from an initialize."""
        g = self.group_of(core)
        if g is None:
            raise KernelFault(f"cube<->vector FIFOs need a cube kernel and a vector kernel running as a core "
                              f"group; {core.label} runs alone (launch mode {self.chip.launch.mode})", loc)
        key = (core.group, direction, label)
        f = self.fifos.get(key)
        if create is not None:
            slot_size, slots, local_slots = create
            if f is None:
                f = self.fifos[key] = Fifo(self, core.group, direction, slot_size, slots, loc, local_slots, label)
            elif (f.slot_size, f.slots, f.local_slots) != (slot_size, slots, local_slots):
                raise VerifyError(f"{f.name} FIFO initialised here with slot_size {slot_size} and {slots} "
                                  f"slots, but at {f.loc} with slot_size {f.slot_size} and {f.slots} slots", loc)
        if f is None:
            bit = 1 if direction == C2V else 2
            raise KernelFault(f"{direction} FIFO used, but no aic_initialize_pipe / aiv_initialize_pipe of this core "
                              f"group has declared that direction before it (dir_mask {bit} or 3; 1 = C2V, 2 = V2C)",
                              loc)
        return f

    def finish(self) -> None:
        """End of the run: tiles pushed and never popped, slots popped and never freed."""
        findings = self.chip.findings
        for f in self.fifos.values():
            for ln, lane in enumerate(f.lanes):
                if lane.filled:
                    e = lane.filled[0]
                    findings.add("fifo-misuse", "warning",
                                 f"{f.name} FIFO of group {f.group}: {len(lane.filled)} tile(s) pushed here "
                                 f"were never popped (lane {ln})", [e.push.loc], [e.push.pipe])
                if lane.popped:
                    e = lane.popped[0][0]
                    findings.add("fifo-misuse", "warning",
                                 f"{f.name} FIFO of group {f.group}: {len(lane.popped)} slot(s) popped were "
                                 f"never freed (lane {ln}; tile pushed here)", [e.push.loc], [e.push.pipe])
