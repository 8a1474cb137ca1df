"""Lowering of the cross-core ops (semantics keys ``core.*`` of multicore.yaml and sync.yaml):
FIFO setup, push, pop and free; ``sync.set`` / ``sync.wait``; ``get_buf`` / ``rls_buf``; async GM
sessions. The state they act on and its semantics are in :mod:`pyptoemu.core.crosscore`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ptoisa.dtypes import np_dtype

# The element type names the FIFO values can have (those of tile_dtypes in multicore.yaml).
NAME_OF_DTYPE = {np_dtype(n): n for n in ("i8", "i16", "i32", "ui8", "ui16", "ui32", "f16", "bf16", "f32")}
from ptoisa.text import ast as A
from pyptoemu.core.crosscore import C2V, V2C, Entry, FreeRelease, SignalSet, SignalWait, SlotWatch, SpaceGate
from pyptoemu.core.memory import PartitionView, Ptr, Tile
from pyptoemu.core.memsys import L2
from pyptoemu.core.pipe import OP, XSET, XWAIT, Instr, make_instr
from pyptoemu.core.pipenames import EVENT_CLASS_PIPE, pipe_of
from pyptoemu.core.scalar import ScalarUnit, Step, fail_step
from pyptoemu.core.tileop import TILE, OperandSnap, _timing_vars
from pyptoemu.errors import BoundsError, KernelFault, VerifyError
from pyptoemu.isa.semantics.common import convert

SIDE_OF = {"tpush_to_aiv": (C2V, "producer"), "tpop_from_aic": (C2V, "consumer"), "tfree_from_aic": (C2V, "consumer"),
           "tpush_to_aic": (V2C, "producer"), "tpop_from_aiv": (V2C, "consumer"), "tfree_from_aiv": (V2C, "consumer")}
EXPLICIT = ("tpush", "tpop", "tfree")  # ops on an explicit pipe object: the direction follows the core


class PipeObject:
    """The ``!pto.pipe`` value of ``initialize_l2g2l_pipe`` / ``initialize_l2l_pipe``: the FIFO of
    each direction it declares. On the cube core a push goes C2V and a pop / free comes V2C; on a
    vector core the reverse."""

    def __init__(self, fifos: dict[str, object], name: str) -> None:
        self.fifos, self.name = fifos, name

    def fifo(self, core, producer: bool, op: A.Op):
        direction = C2V if (core.kind.name == "aic") == producer else V2C
        f = self.fifos.get(direction)
        if f is None:
            raise VerifyError(f"{op.name} on {core.label} ({core.kind.name}) uses the {direction} direction, which "
                              f"the pipe {self.name} does not declare (dir_mask)", op.loc)
        return f


class DeclaredTile:
    """The value of ``declare_tile``: a tile handle with no storage until a ``tpop`` binds it."""

    def __init__(self, type_: A.TileBufType, name: str) -> None:
        self.type, self.name = type_, name

    @property
    def unbound_message(self) -> str:
        return f"the declare_tile handle {self.name} has no storage until a tpop binds it to a FIFO slot"


def _fifo_of(su: ScalarUnit, frame: dict, op: A.Op, mnemonic: str, handle: str | None, producer: bool):
    """The FIFO a push, pop or free acts on: the group's aic_/aiv_ FIFO of its direction, or the one
    of the explicit pipe object it names."""
    core = su.core
    if mnemonic not in EXPLICIT:
        return core.crosscore.fifo(core, SIDE_OF[mnemonic][0], op.loc)
    pipe = su.value(frame, handle, op.loc) if handle is not None else None
    if not isinstance(pipe, PipeObject):
        raise VerifyError(f"{op.name} needs the !pto.pipe of an initialize_l2g2l_pipe / initialize_l2l_pipe, "
                          f"got {handle}", op.loc)
    return pipe.fifo(core, producer, op)


def _int_attr(op: A.Op, key: str, default: int | None = None) -> int:
    v = op.attrs.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise VerifyError(f"{op.name}: attribute {key} must be an integer, got {v!r}", op.loc)
    return v


def _scalar_wait(su: ScalarUnit, instr: Instr, gate):
    """The scalar unit blocks until ``gate`` opens (a pop from an empty FIFO, a sync.wait on S):
    recorded as a wait that later instructions are ordered after."""
    core = su.core
    env = core.env
    su.charge(su.issue_cost)
    yield from su.sync_time()
    instr.issue = instr.wait_start = int(env.now)
    instr.pidx = su.s_accesses
    instr.sepoch = len(su.epochs)
    su.issued_total += 1
    instr.iseq = su.issued_total
    if not gate.ready():
        core.blocked_scalar = instr
        while not gate.ready():
            yield gate.event()
        core.blocked_scalar = None
        su.resume_at_now()
    instr.released_by = gate.take(instr)
    su.epochs.append(("wait", instr))
    instr.start = int(env.now)
    su.charge(instr.occupancy)
    instr.end = instr.done = instr.start + instr.occupancy
    core.commits.flush(env.now)
    core.record(instr)


# ------------------------------------------------------------------------- buffers and setup


def _reserves(region: A.Region, section: str = "") -> Iterator[tuple[str, A.Op]]:
    """(section kind, op) of every reserve_buffer in ``region``: "" outside ``pto.section.*``."""
    for op in region.ops:
        if op.name == "pto.reserve_buffer":
            yield section, op
        inner = op.name.removeprefix("pto.section.") if op.name.startswith("pto.section.") else section
        for r in op.regions:
            yield from _reserves(r, inner)


def _reserve_errors(su: ScalarUnit, op: A.Op) -> VerifyError | None:
    """§4.13: a function (each section build of a mixed one) reserves at most one FIFO buffer."""
    for fn in su.module.functions:
        found = list(_reserves(fn.body))
        mine = next((sec for sec, r in found if r is op), None)
        if mine is None:
            continue
        others = [r for sec, r in found if sec == mine and r is not op]
        if others:
            first = others[0]
            return VerifyError(f"reserve_buffer: @{fn.name} already reserves \"{first.attrs.get('name', '')}\" at "
                               f"{first.loc}; a function reserves at most one FIFO buffer", op.loc)
        return None
    return None


def lower_reserve_buffer(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    name = str(op.attrs.get("name", ""))
    size = _int_attr(op, "size")
    twice = _reserve_errors(su, op)
    if twice is not None:
        return fail_step(twice)
    where = op.attrs.get("location")
    space = where.value if isinstance(where, A.EnumAttr) else str(where or "vec")
    auto = op.attrs.get("auto", True)
    res = op.results[0] if op.results else None
    if auto is False and "base" not in op.attrs:
        return fail_step(VerifyError("reserve_buffer with auto = false needs base", loc))
    if auto is not False and "base" in op.attrs:
        return fail_step(VerifyError("reserve_buffer with auto = true takes no base", loc))

    def step(frame):
        core = su.core
        buf = core.memory.onchip.get("vec" if space == "ub" else space)
        if buf is None:
            raise VerifyError(f"reserve_buffer: {core.label} ({core.kind.name}) has no {space} buffer", loc)
        if auto is False:
            addr = _int_attr(op, "base")
            buf.check_placement(addr, size, name, loc)
            buf.allocations.setdefault(op, (addr, size, name))
        else:
            addr = buf.allocate(op, size, name, loc)
        core.note_alloc(buf)
        cc = core.crosscore
        cc.reserved.setdefault((core.group, name), []).append((core, addr))
        cc.reserve_size[(core.label, addr)] = size
        cc.reserve_waiters.wake()
        if res is not None:
            frame[res] = addr
        su.charge(su.arith_cost)

    return step


class _Reserved:
    """Gate: the peer function's reserve_buffer of that name has run in this core group."""

    def __init__(self, cc, group: int, name: str) -> None:
        self.cc, self.key, self.name = cc, (group, name), name

    def ready(self) -> bool:
        return bool(self.cc.reserved.get(self.key))

    def event(self):
        return self.cc.reserve_waiters.event()

    def take(self, waiter: Instr) -> list:
        return []

    def describe(self) -> str:
        return f"for reserve_buffer \"{self.name}\" in the peer function, which never runs it"


def lower_import_reserved_buffer(su: ScalarUnit, op: A.Op) -> Step:
    name = str(op.attrs.get("name", ""))
    res = op.results[0] if op.results else None
    peer_ref = op.attrs.get("peer_func")
    peer_name = peer_ref.name if isinstance(peer_ref, A.SymbolRef) else str(peer_ref or "").lstrip("@")
    peer = su.functions.get(peer_name) if peer_ref is not None else None
    if peer_ref is not None and peer is None:
        return fail_step(VerifyError(f"import_reserved_buffer: peer_func @{peer_name} is not a function of this "
                                     f"module", op.loc))
    if peer is not None and not any(str(r.attrs.get("name", "")) == name for _, r in _reserves(peer.body)):
        return fail_step(VerifyError(f"import_reserved_buffer: @{peer.name} has no reserve_buffer named \"{name}\"",
                                     op.loc))

    def step(frame):
        core = su.core
        gate = _Reserved(core.crosscore, core.group, name)
        instr = make_instr(XWAIT, "import_reserved_buffer", op.loc, "S", 0, flag=gate)
        if not gate.ready():
            yield from _scalar_wait(su, instr, gate)
        else:
            su.charge(su.arith_cost)
        if res is not None:
            frame[res] = core.crosscore.reserved[gate.key][0][1]

    return step


_PIPE_OPERANDS = ("gm_slot_buffer", "c2v_consumer_buf", "v2c_consumer_buf")  # their declared order


def _pipe_operands(op: A.Op) -> tuple:
    """(gm_slot_buffer, c2v_consumer_buf, v2c_consumer_buf) of an ``aic_/aiv_initialize_pipe``, None
    where absent: the pretty form names them; the generic form lists them in declared order, split
    by ``operandSegmentSizes`` (``array<i32: 0, 1, 1>``) or, without it, two operands are the
    consumer buffers and three start with the GM slot buffer."""
    if not op.generic or op.groups:
        return tuple(op.groups.get(k, [None])[0] for k in _PIPE_OPERANDS)
    names = list(op.operands)
    seg = op.attrs.get("operandSegmentSizes")
    if isinstance(seg, A.OpaqueAttr) and ":" in seg.text:
        sizes = [int(x) for x in seg.text.split(":", 1)[1].rstrip(">").split(",")]
    elif len(names) in (2, 3):
        sizes = [len(names) - 2, 1, 1]
    else:
        sizes = []
    if len(sizes) != 3 or sum(sizes) != len(names) or any(z not in (0, 1) for z in sizes):
        raise VerifyError(f"{op.name}: {len(names)} operands do not split into gm_slot_buffer, c2v_consumer_buf "
                          f"and v2c_consumer_buf (give operandSegmentSizes = array<i32: G, 1, 1>)", op.loc)
    out, k = [], 0
    for z in sizes:
        out.append(names[k] if z else None)
        k += z
    return tuple(out)


def lower_initialize_pipe(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    if op.name not in ("pto.aic_initialize_pipe", "pto.aiv_initialize_pipe"):
        return lower_initialize_pipe_object(su, op)
    cube = op.name == "pto.aic_initialize_pipe"
    dir_mask = op.attrs.get("dir_mask")
    slot_size = op.attrs.get("slot_size")
    if dir_mask not in (1, 2, 3) or not isinstance(slot_size, int) or slot_size <= 0:
        return fail_step(VerifyError(f"{op.name} needs dir_mask 1, 2 or 3 and a positive slot_size", loc))
    try:
        gm_n, c2v_n, v2c_n = _pipe_operands(op)
    except VerifyError as e:
        return fail_step(e)
    bufs = {C2V: c2v_n, V2C: v2c_n}

    def step(frame):
        core = su.core
        if (core.kind.name == "aic") != cube:
            raise VerifyError(f"{op.name} runs on {core.label} ({core.kind.name}); "
                              f"{'aic_' if cube else 'aiv_'} belongs in the {'cube' if cube else 'vector'} function", loc)
        cc = core.crosscore
        slots = cc.slots_one_way if dir_mask in (1, 2) else cc.slots_two_way
        for direction, bit in ((C2V, 1), (V2C, 2)):
            if not dir_mask & bit:
                continue
            fifo = cc.fifo(core, direction, loc, create=(slot_size, slots, None))
            consumer = (direction == C2V) != cube
            if consumer and bufs[direction] is not None:
                fifo.base[cc.lane_of(core)] = int(su.value(frame, bufs[direction], loc))
            if gm_n is not None:
                ptr = su.value(frame, gm_n, loc)
                if not isinstance(ptr, Ptr):
                    raise VerifyError(f"{op.name}: gm_slot_buffer must be a !pto.ptr", loc)
                # a workspace given no data gets stand-in data for every slot of every direction it stages
                staged = slots * slot_size * (2 if dir_mask == 3 else 1)
                core.memory.note_element(ptr, ptr.offset + -(-staged // ptr.gm.dtype.itemsize) - 1, loc)
                fifo.stage_at(ptr, None, 1 if direction == V2C and dir_mask == 3 else 0)
        su.charge(su.arith_cost)

    return step


def lower_initialize_pipe_object(su: ScalarUnit, op: A.Op) -> Step:
    """``initialize_l2g2l_pipe`` (staged through ``slot_num`` GM slots, ``local_slot_num`` slots in
    the consumer's buffer) and ``initialize_l2l_pipe`` (local to local, ``slot_num`` slots): both
    sides of a core group call it with the same ``flag_base``, which names the pipe; the consumer's
    ``local`` operand is its slot region (the producer's is ignored: it addresses the peer)."""
    loc = op.loc
    staged = op.name == "pto.initialize_l2g2l_pipe"
    attrs = {k: op.attrs.get(k) for k in ("dir_mask", "slot_size", "slot_num", "local_slot_num", "flag_base")}
    bad = [k for k, v in attrs.items() if v is not None and (isinstance(v, bool) or not isinstance(v, int))]
    dir_mask, slot_size = attrs["dir_mask"], attrs["slot_size"]
    if bad or dir_mask not in (1, 2, 3) or slot_size is None or slot_size <= 0:
        return fail_step(VerifyError(f"{op.name} needs integer attributes dir_mask 1, 2 or 3 and a positive "
                                     f"slot_size", loc))
    for k in ("slot_num", "local_slot_num"):
        if attrs[k] is not None and attrs[k] <= 0:
            return fail_step(VerifyError(f"{op.name}: {k} must be positive, got {attrs[k]}", loc))
    names = list(op.operands)
    if len(names) < (2 if staged else 1) or not op.results:
        return fail_step(VerifyError(f"{op.name} needs ({'%gm, ' if staged else ''}%local[, %peer_local]) and a "
                                     f"!pto.pipe result", loc))
    gm_n, local_n = (names[0], names[1]) if staged else (None, names[0])
    nosplit = op.attrs.get("nosplit", False) is True
    flag_base = attrs["flag_base"] or 0
    label = f"flag_base {flag_base}"
    res = op.results[0]

    def step(frame):
        core = su.core
        cc = core.crosscore
        cube = core.kind.name == "aic"
        slots = attrs["slot_num"] or (cc.slots_one_way if dir_mask in (1, 2) else cc.slots_two_way)
        local_slots = (attrs["local_slot_num"] or slots) if staged else None
        gm = _staging(su.value(frame, gm_n, loc), op, loc) if staged else None
        fifos = {}
        for direction, bit in ((C2V, 1), (V2C, 2)):
            if dir_mask & bit:
                fifo = fifos[direction] = cc.fifo(core, direction, loc, create=(slot_size, slots, local_slots),
                                                  label=label)
                if direction == C2V and not nosplit:
                    fifo.local_stride = slot_size // 2
                if (direction == C2V) != cube:  # this side consumes: its local operand is the slot region
                    fifo.base[cc.lane_of(core)] = int(su.value(frame, local_n, loc))
                if gm is not None:
                    fifo.stage_at(*gm, 1 if direction == V2C and dir_mask == 3 else 0)
        frame[res] = PipeObject(fifos, label)
        su.charge(su.arith_cost)

    return step


def _staging(value, op: A.Op, loc) -> tuple:
    """(Ptr, elements it may hold) of a GM staging operand: a pointer or a GM window."""
    if isinstance(value, Ptr):
        return value, None
    if isinstance(value, PartitionView):
        return Ptr(value.gm, value.lo), value.hi - value.lo + 1
    raise VerifyError(f"{op.name}: the GM slot buffer must be a GM memref or !pto.ptr", loc)


def lower_declare_tile(su: ScalarUnit, op: A.Op) -> Step:
    t = op.result_types[0] if op.result_types else None
    res = op.results[0] if op.results else None
    if not isinstance(t, A.TileBufType) or res is None:
        return fail_step(VerifyError(f"{op.name} needs a -> !pto.tile_buf result", op.loc))

    def step(frame):
        frame[res] = DeclaredTile(t, res)
        su.charge(su.arith_cost)

    return step


# --------------------------------------------------------------------------------------- push


class _PushBinding:
    """What the pipe runs for a push: read the tile at start, deliver it to the lanes at completion."""

    def __init__(self, fifo, tile: Tile, split: int, lanes: tuple, ticket: dict, core, loc) -> None:
        self.fifo, self.tile, self.split, self.lanes, self.ticket = fifo, tile, split, lanes, ticket
        self.core, self.loc = core, loc
        self.names = [tile.name]

    def start(self, instr: Instr) -> list:
        self.core.memory.note_reads(instr.reads, instr)
        return [np.array(self.tile.logical()[: self.tile.vrow, : self.tile.vcol])]

    def commit(self, instr: Instr, results: list) -> None:
        values = results[0]
        fifo = self.fifo
        slot = self.ticket["slot"]
        half = fifo.slot_size // 2
        if fifo.direction == C2V:  # the cube's tile, cut for the vector cores
            parts = _split(values, self.split, self.tile.rows if self.split == 1 else self.tile.cols, self.loc)
            for lane, part in zip(self.lanes, parts, strict=True):
                entry = Entry(slot, part, instr, self.lanes, lane, lane * half if self.split else 0)
                _stage(fifo, entry, self.core.data)
                fifo.deliver(lane, entry)
        else:  # one vector core's part
            lane = self.lanes[0]
            entry = Entry(slot, values, instr, self.lanes, lane, lane * half if self.split else 0)
            _stage(fifo, entry, self.core.data)
            fifo.deliver(lane, entry)


class _Delivered:
    """The marker behind a push: once every earlier instruction of its pipe completed (the push
    included), the completed writes land, so the pushed tile is in its lanes and the consumer wakes."""

    def __init__(self, core, fifo) -> None:
        self.core, self.fifo = core, fifo

    def fire(self, setter: Instr) -> None:
        self.core.commits.flush(self.core.env.now)
        self.fifo.waiters.wake()

    def describe(self) -> str:
        return f"delivery of a {self.fifo.name} push"


def _split(values: np.ndarray, split: int, extent: int, loc) -> list[np.ndarray]:
    """The two vector cores' parts of a pushed tile's valid region ``values``: the tile is cut at
    half its static rows (split 1) or columns (split 2), ``extent``, so a ragged tile's tail falls in
    the half it lies in (rows 0..15 and 16..19 of a 32-row tile with 20 valid: 16 and 4), as the
    hardware moves each half of the physical tile."""
    if split == 0:
        return [values]
    axis = 0 if split == 1 else 1
    if extent % 2:
        raise KernelFault(f"split {split} halves the tile's {'rows' if axis == 0 else 'columns'}, but it has {extent}",
                          loc)
    half = extent // 2
    if axis == 0:
        return [values[:half], values[half:]]
    return [values[:, :half], values[:, half:]]


def _gm_slot(fifo, entry: Entry, size: int) -> int:
    """Element index in the GM staging buffer where ``entry`` lies: slot ``k`` holds bytes
    ``[k * slot_size, (k + 1) * slot_size)``, a split half at ``part`` within it."""
    gm = fifo.gm.gm
    es = gm.dtype.itemsize
    start = fifo.gm.offset + (entry.slot * fifo.slot_size + entry.part) // es
    end = start + -(-size // es)
    limit = gm.size if fifo.gm_limit is None else min(gm.size, fifo.gm.offset + fifo.gm_limit)
    if end > limit:
        raise BoundsError(f"{fifo.name} FIFO: the GM slot buffer over {gm.name} is too small for slot {entry.slot} "
                          f"(needs element {end - 1}, holds {limit - fifo.gm.offset} from its start)", fifo.loc)
    return start


def _stage(fifo, entry: Entry, data: bool) -> None:
    """A2/A3 GM staging: the tile lands in its GM slot as well (bytes reinterpreted in the staging
    buffer's element type; checked to fit even in a run without data)."""
    if fifo.gm is None:
        return
    values = entry.values
    start = _gm_slot(fifo, entry, values.size * values.dtype.itemsize)
    if not data:
        return
    gm = fifo.gm.gm
    raw = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    dst = gm.writable()[start:].view(np.uint8)
    dst[:raw.size] = raw


def _unstage_one(fifo, entry: Entry) -> np.ndarray:
    if fifo.gm is None:
        return entry.values
    values = entry.values
    start = _gm_slot(fifo, entry, values.size * values.dtype.itemsize)
    gm = fifo.gm.gm
    if gm.data is None:
        return values
    raw = gm.data[start:].view(np.uint8)[:values.size * values.dtype.itemsize]
    return raw.view(values.dtype).reshape(values.shape).copy()


def _dtype_name(dt: np.dtype) -> str:
    return NAME_OF_DTYPE[np.dtype(dt)]


def _hand_off_cost(spec, core, snap: OperandSnap, src_loc, dst_loc, loc) -> tuple:
    """(pipe, occupancy, latency, shared-memory transfer) of a FIFO hand-off (a push's store into
    the slot, a pop's load of it) from the op's ISA record: on A2/A3 a DMA through a GM slot
    (multicore.yaml ``fifo_push`` / ``fifo_pop``). The slots are a small GM workspace reused slot by
    slot, so their traffic is served by L2."""
    try:
        pipe = spec.pipe.resolve(src_loc, dst_loc)
        case = spec.timing.select(src_loc, dst_loc)
    except ValueError as e:
        raise VerifyError(f"{spec.mnemonic}: {e}", loc) from None
    if pipe not in core.pipes:
        raise VerifyError(f"pto.{spec.mnemonic} runs on pipe {pipe}, which {core.label} ({core.kind.name}) lacks",
                          loc)
    variables = _timing_vars(snap, [snap], [])
    occ, lat = case.evaluate(variables)
    transfer = case.transfer(variables)
    if transfer is not None:
        transfer = (*transfer, L2)
    return pipe, int(occ), int(lat), transfer


def lower_tpush(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    mnemonic = op.name[4:]
    split = op.attrs.get("split", 0)
    spec = su.isa.get(op.name)
    t_name = op.operands[0] if op.operands else None
    handle = op.operands[1] if mnemonic in EXPLICIT and len(op.operands) > 1 else None
    if split not in (0, 1, 2) or t_name is None or (mnemonic in EXPLICIT and handle is None):
        return fail_step(VerifyError(f"{op.name} needs a tile operand{' and a pipe' if mnemonic in EXPLICIT else ''} "
                                     f"and split 0, 1 or 2", loc))

    def step(frame):
        core = su.core
        cc = core.crosscore
        tile = su.value(frame, t_name, loc)
        if not isinstance(tile, Tile):
            raise VerifyError(f"{op.name} pushes a tile, got {t_name}", loc)
        fifo = _fifo_of(su, frame, op, mnemonic, handle, producer=True)
        direction = fifo.direction
        lanes = fifo.lanes_of(split) if direction == C2V else (cc.lane_of(core),)
        if direction == V2C and split == 0 and lanes[0] != 0:
            raise KernelFault(f"{op.name} {{split = 0}} on sub-block {lanes[0]}: an unsplit tile travels "
                              f"between the cube core and sub-block 0 only", loc)
        nbytes = tile.vrow * tile.vcol * tile.esize
        unsplit = nbytes * (2 if direction == V2C and split else 1)
        if unsplit > fifo.slot_size:
            core.findings.add("fifo-misuse", "error",
                              f"{op.name}: the tile is {unsplit} bytes but a {fifo.name} slot holds "
                              f"{fifo.slot_size} (slot_size)", [loc])
        snap = OperandSnap(TILE, tile, tile.vrow, tile.vcol, tile.type.dtype, tile.loc)
        pipe, occ, lat, transfer = _hand_off_cost(spec, core, snap, tile.loc, None, loc)
        ticket: dict = {}
        gate = SpaceGate(fifo, lanes, ticket)
        su.issue(pipe, make_instr(XWAIT, mnemonic, loc, pipe, 0, flag=gate))
        bound = _PushBinding(fifo, tile, split, lanes, ticket, core, loc)
        rng = ((tile.buffer.spec.name, tile.addr, tile.addr + tile.nbytes, None),)
        instr = make_instr(OP, mnemonic, loc, pipe, 0, occ, lat, bound=bound, reads=rng, operands=[snap], nbytes=nbytes)
        instr.transfer = transfer
        su.issue(pipe, instr)
        # the tile reaches the consumer when the push completes: a marker behind it on its pipe makes
        # that moment an event (a pipe's completions are otherwise only applied when something runs)
        su.issue(pipe, make_instr(XSET, mnemonic, loc, pipe, 0, flag=_Delivered(core, fifo)))

    return step


# ---------------------------------------------------------------------------------------- pop


class _PopGate:
    """A pop's wait: a tile in every lane it takes, and (explicit pipes) the local slot it lands in
    released by the free of the tile popped there before (every instruction before that free done)."""

    def __init__(self, fifo, lanes: tuple, who: str, consumer_lane: int, pending=None) -> None:
        self.fifo, self.lanes, self.who, self.entries = fifo, lanes, who, []
        self.consumer_lane = consumer_lane  # whose free releases this pop
        self.pending = pending  # FreeRelease of the local slot's previous tile, or None

    def ready(self) -> bool:
        if self.pending is not None and self.pending.left:
            return False
        return all(self.fifo.lanes[ln].filled for ln in self.lanes)

    def event(self):
        return self.fifo.waiters.event()

    def take(self, waiter: Instr) -> list:
        self.fifo.cc.active = True
        self.entries = []
        for ln in self.lanes:
            lane = self.fifo.lanes[ln]
            self.entries.append(lane.filled.popleft())
            lane.pops += 1
        self.fifo.lanes[self.consumer_lane].popped.append(self.entries)
        return [e.push for e in self.entries] + (self.pending.fired if self.pending is not None else [])

    def misuse(self) -> str | None:
        f = self.fifo
        if sum(f.lanes[ln].pushes for ln in self.lanes) == 0:
            return f"pop from the {f.name} FIFO, but no push into it ever ran"
        return None

    def describe(self) -> str:
        f = self.fifo
        pushed = sum(f.lanes[ln].pushes for ln in self.lanes)
        if pushed == 0:
            return f"for a {f.name} tile, but no push into this FIFO ever ran ({self.who} never pushes)"
        return f"for a {f.name} tile: all {pushed} pushed so far were popped already ({self.who} pushes no more)"


def lower_tpop(su: ScalarUnit, op: A.Op) -> Step:
    """``tpop_from_aic`` / ``tpop_from_aiv`` (result: a tile aliasing the slot) and ``tpop`` on an
    explicit pipe (binds its ``declare_tile`` handle to the next local slot)."""
    loc = op.loc
    mnemonic = op.name[4:]
    explicit = mnemonic in EXPLICIT
    split = op.attrs.get("split", 0)
    if explicit:
        t = op.operand_types[0] if op.operand_types else None
        res = op.operands[0] if op.operands else None
        handle = op.operands[1] if len(op.operands) > 1 else None
        dyn: list = []
    else:
        t = op.result_types[0] if op.result_types else None
        res = op.results[0] if op.results else None
        handle, dyn = None, list(op.operands)
    if not isinstance(t, A.TileBufType) or res is None or split not in (0, 1, 2) or (explicit and handle is None):
        form = "(%tile, %pipe : !pto.tile_buf, !pto.pipe)" if explicit else "a -> !pto.tile_buf result"
        return fail_step(VerifyError(f"{op.name} needs {form} and split 0, 1 or 2", loc))
    dtype = np_dtype(t.dtype)
    spec = su.isa.get(op.name)

    def step(frame):
        core = su.core
        cc = core.crosscore
        if explicit and not isinstance(frame.get(res), DeclaredTile | Tile):
            raise VerifyError(f"{op.name} binds a declare_tile handle, got {res}", loc)
        fifo = _fifo_of(su, frame, op, mnemonic, handle, producer=False)
        direction = fifo.direction
        if direction == C2V:
            lane = cc.lane_of(core)
            if split == 0 and lane != 0:
                raise KernelFault(f"{op.name} {{split = 0}} on sub-block {lane}: an unsplit tile travels between "
                                  f"the cube core and sub-block 0 only", loc)
            lanes, base_lane, who = (lane,), lane, cc.group_of(core)[0].label
        else:
            lanes, base_lane, who = fifo.lanes_of(split), 0, " and ".join(c.label for c in cc.group_of(core)[1])
        base = fifo.base.get(base_lane)
        if base is None:
            raise KernelFault(f"{op.name}: {core.label} initialised no {direction} consumer buffer "
                              f"({'its local operand' if explicit else 'c2v_consumer_buf / v2c_consumer_buf'})", loc)
        watch = core.slot_watch
        if watch is None:
            watch = core.slot_watch = SlotWatch(core)
        pending, local = None, -1
        if fifo.local_slots is not None:  # explicit pipe: the next slot of the local ring, once released
            local = fifo.next_local_slot(base_lane)
            if watch.reuse(fifo, base_lane, local, loc):
                pending = fifo.local_release.get((base_lane, local))
        gate = _PopGate(fifo, lanes, who, base_lane, pending)
        instr = make_instr(XWAIT, mnemonic, loc, "S", 0, flag=gate)
        yield from _scalar_wait(su, instr, gate)
        h, w = _popped_shape(gate.entries, split)
        if local < 0:
            local = gate.entries[0].slot
        for e in gate.entries:
            e.local = local
        buf = core.memory.onchip.get(t.loc)
        if buf is None:
            raise VerifyError(f"{op.name}: {core.label} has no {t.loc} buffer", loc)
        vr = int(su.value(frame, dyn[0], loc)) if dyn else (t.v_row if t.v_row is not None else h)
        vc = int(su.value(frame, dyn[1], loc)) if len(dyn) > 1 else (t.v_col if t.v_col is not None else w)
        _check_pop_shape(op.name, direction, split, "handle" if explicit else "result", t, (h, w, vr, vc), loc)
        tile = Tile(buf, 0, t, dtype, vr, vc, res)
        tile.addr = base + local * fifo.local_stride
        buf.check_placement(tile.addr, tile.nbytes, res, loc)
        _check_in_reserve(core, fifo, base, local, tile, loc)
        watch.bind(fifo, base_lane, local, buf.spec.name, tile.addr, tile.addr + tile.nbytes, loc)
        frame[res] = tile
        yield from _load_slot(su, spec, tile, _PopLoad(fifo, gate.entries, split, tile, core), mnemonic, loc)

    return step


def _check_pop_shape(name: str, direction: str, split: int, what: str, t: A.TileBufType, dims: tuple, loc) -> None:
    """The delivered ``h x w`` tile and the popped valid region ``vr x vc`` fit the declared type,
    and the valid region lies in what was delivered: cells past it would be whatever the slot held
    before."""
    h, w, vr, vc = dims
    if h > t.rows or w > t.cols or vr > t.rows or vc > t.cols:
        raise BoundsError(f"{name}: the {direction} tile is {h}x{w} (valid {vr}x{vc}) but the "
                          f"{what} type holds {t.rows}x{t.cols}", loc)
    if vr > h or vc > w:
        raise BoundsError(f"{name}: the {direction} tile delivered here is {h}x{w}{_SPLIT_NOTE.get(split, '')} "
                          f"but the popped tile's valid region is {vr}x{vc}: pop with valid dims within "
                          f"{h}x{w}, or declare the {what} as {h}x{w}", loc)


# Why a popped tile is smaller than the pushed one (the pushed tile is cut between the two AIVs).
_SPLIT_NOTE = {1: " (split = 1: each vector core has half the rows)", 2: " (split = 2: each vector core has half the columns)"}


def _check_in_reserve(core, fifo, base: int, local: int, tile: Tile, loc) -> None:
    """A popped tile must fit its local slot, and lie in the consumer's reserve_buffer region (when
    its base is one): past its end the slot overlaps whatever else lives there."""
    if tile.nbytes > fifo.local_stride:
        core.findings.add("fifo-misuse", "error",
                          f"the popped tile ({tile.nbytes} bytes) is larger than a local slot of the {fifo.name} "
                          f"FIFO ({fifo.local_stride} bytes: on a split pipe each vector core keeps half a slot; "
                          f"declare the pipe nosplit to pop whole tiles)", [loc])
    size = core.crosscore.reserve_size.get((core.label, base))
    if size is not None and tile.addr + tile.nbytes > base + size:
        slots = fifo.slots if fifo.local_slots is None else fifo.local_slots
        stride = fifo.local_stride
        core.findings.add("fifo-misuse", "error",
                          f"local slot {local} of the {fifo.name} FIFO, bytes [{tile.addr}, {tile.addr + tile.nbytes}), "
                          f"lies past the end of its reserve_buffer ({size} bytes at {base}): the reserve needs "
                          f"local slot size x slots = {stride} x {slots} = {stride * slots} bytes", [loc])


def _popped_shape(entries: list, split: int) -> tuple[int, int]:
    """Rows and columns of the tile a pop returns (the halves joined again for the cube)."""
    shapes = [e.values.shape for e in entries]
    if len(shapes) == 1:
        return shapes[0]
    if split == 1:
        return sum(r for r, _ in shapes), shapes[0][1]
    return shapes[0][0], sum(c for _, c in shapes)


class _PopLoad:
    """What the consumer's MTE2 runs for a pop: read the slot (from the GM staging buffer, if the
    kernel gave one) at start, write the tile into the consumer's slot at completion."""

    def __init__(self, fifo, entries: list, split: int, tile: Tile, core) -> None:
        self.fifo, self.entries, self.split, self.tile, self.core = fifo, entries, split, tile, core
        self.names = [tile.name]

    def start(self, instr: Instr) -> list:
        return [_unstage(self.fifo, self.entries, self.split)]

    def commit(self, instr: Instr, results: list) -> None:
        values = results[0]
        tile = self.tile
        tile.write(convert(values, _dtype_name(values.dtype), tile.type.dtype))
        self.core.memory.note_writes(((tile.buffer.spec.name, tile.addr, tile.addr + tile.nbytes, None),))


def _load_slot(su: ScalarUnit, spec, tile: Tile, bound, mnemonic: str, loc):
    """The consumer's DMA of a slot into ``tile`` (A2/A3: GM -> UB / L1 on MTE2), issued after the
    pop's wait; the scalar unit then waits for it, as the library's TPOP does, so every later
    instruction sees the tile."""
    core = su.core
    snap = OperandSnap(TILE, tile, tile.vrow, tile.vcol, tile.type.dtype, tile.loc)
    pipe, occ, lat, transfer = _hand_off_cost(spec, core, snap, None, tile.loc, loc)
    load = make_instr(OP, mnemonic, loc, pipe, 0, occ, lat, bound=bound, operands=[snap],
                 nbytes=tile.vrow * tile.vcol * tile.esize)
    load.transfer = transfer
    su.issue(pipe, load)
    done = _AsyncDone(load, core.env)
    yield from _scalar_wait(su, make_instr(XWAIT, mnemonic, loc, "S", 0, flag=done), done)


def _unstage(fifo, entries: list, split: int) -> np.ndarray:
    """The popped tile: with GM staging read back from the GM slots, else as delivered."""
    parts = [_unstage_one(fifo, e) for e in entries]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0 if split == 1 else 1)


# --------------------------------------------------------------------------------------- free


def lower_tfree(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    mnemonic = op.name[4:]
    handle = (op.operands[0] if op.operands else None) if mnemonic in EXPLICIT else None
    if mnemonic in EXPLICIT and handle is None:
        return fail_step(VerifyError(f"{op.name} needs the pipe it frees a slot of", loc))

    def step(frame):
        core = su.core
        cc = core.crosscore
        fifo = _fifo_of(su, frame, op, mnemonic, handle, producer=False)
        direction = fifo.direction
        lane = cc.lane_of(core) if direction == C2V else 0
        popped = fifo.lanes[lane].popped
        if not popped:
            core.findings.add("fifo-misuse", "error",
                              f"{op.name} with no popped {fifo.name} slot to free (a free without a pop)", [loc])
            su.charge(su.arith_cost)
            return
        entries = popped.popleft()  # a cube free releases the slot of every vector core it popped from
        if core.slot_watch is not None:
            core.slot_watch.release(fifo, lane, entries[0].local, loc)
        pipes = list(core.pipes)
        release = FreeRelease(fifo, entries, len(pipes))
        fifo.local_release[(lane, entries[0].local)] = release
        for p in pipes:  # the slot is free once everything issued before has completed
            su.issue(p, make_instr(XSET, mnemonic, loc, p, 0, flag=release))

    return step


# ------------------------------------------------------------------------------------ signals


def _sync_pipe(op: A.Op):
    attr = op.attrs.get("pipe")
    return pipe_of(attr, op.loc) if attr is not None else None


def lower_sync(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    is_set = op.name == "pto.sync.set"
    try:
        pipe = _sync_pipe(op)
    except VerifyError as e:
        return fail_step(e)
    if pipe is None or pipe == "ALL":
        return fail_step(VerifyError(f"{op.name} needs a pipe (like <PIPE_FIX>)", loc))
    spec = su.isa.get(op.name)
    named = spec.named_pipes if spec is not None else ()
    if named and pipe not in named:  # the target's rule (isa_specs target_pipes)
        return fail_step(VerifyError(f"{op.name} on {su.machine.name}: pipe {pipe} cannot "
                                     f"{'raise' if is_set else 'wait for'} a cross-core signal "
                                     f"(legal: {', '.join(named)})", loc))
    static_id = op.attrs.get("id")
    dyn = op.operands[0] if op.operands else None
    if static_id is None and dyn is None:
        return fail_step(VerifyError(f"{op.name} needs a signal id", loc))
    n_ids = int(su.machine.params.get("cross_core_ids", 16))
    name = op.name[4:]
    if dyn is None and not 0 <= int(static_id) < n_ids:  # a literal id is checked before running
        return fail_step(VerifyError(f"{op.name}: signal id {int(static_id)} is out of range: {su.machine.name} has "
                                     f"ids 0..{n_ids - 1}", loc))

    def step(frame):
        core = su.core
        sid = int(static_id if dyn is None else su.value(frame, dyn, loc))
        if not 0 <= sid < n_ids:  # a fault, as a dynamic flag event id out of range is
            raise KernelFault(f"{name}: signal id {sid} is outside the machine's range 0..{n_ids - 1}", loc)
        cc = core.crosscore
        if pipe != "S" and pipe not in core.pipes:
            raise VerifyError(f"{op.name} on pipe {pipe}, which {core.label} ({core.kind.name}) lacks", loc)
        if is_set:
            gate = SignalSet(cc, core, sid)
            instr = make_instr(XSET, name, loc, pipe, 0, su.set_cost, flag=gate)
            if pipe == "S":
                return _scalar_set(su, instr, gate)
        else:
            gate = SignalWait(cc, core, sid)
            instr = make_instr(XWAIT, name, loc, pipe, 0, su.wait_cost, flag=gate)
            if pipe == "S":
                return _scalar_wait(su, instr, gate)
        su.issue(pipe, instr)
        return None

    return step


def _scalar_set(su: ScalarUnit, instr: Instr, gate):
    core = su.core
    su.charge(su.issue_cost)
    yield from su.sync_time()
    instr.issue = instr.start = int(core.env.now)
    instr.pidx = su.s_accesses
    instr.sepoch = len(su.epochs)
    su.issued_total += 1
    instr.iseq = su.issued_total
    su.charge(instr.occupancy)
    instr.end = instr.done = instr.start + instr.occupancy
    gate.fire(instr)
    core.record(instr)


# ------------------------------------------------------------------------- get_buf / rls_buf


class _BufToken:
    """A buffer id held by at most one pipe of a core at a time; granted in program order
    (get_buf acquires, rls_buf releases once its pipe's earlier work has completed)."""

    def __init__(self, core, bid: int) -> None:
        self.core, self.bid = core, bid
        self.holder: str | None = None
        self.queue: list = []  # acquires in program order, not yet granted
        self.released_by: list = []
        self.waiters = core.crosscore.signal_waiters

    def fire(self, setter: Instr) -> None:
        self.holder = None
        self.released_by = [setter]
        self.waiters.wake()

    def describe(self) -> str:
        return f"for buffer id {self.bid}, held by pipe {self.holder}, which never releases it"


class _BufAcquire:
    """One get_buf: granted when the id is free and every earlier get_buf of it was granted."""

    def __init__(self, token: _BufToken) -> None:
        self.token = token
        token.queue.append(self)

    def ready(self) -> bool:
        return self.token.holder is None and self.token.queue[0] is self

    def event(self):
        return self.token.waiters.event()

    def take(self, waiter: Instr) -> list:
        t = self.token
        t.queue.pop(0)
        t.holder = waiter.pipe
        out, t.released_by = t.released_by, []
        t.waiters.wake()
        return out

    def describe(self) -> str:
        return self.token.describe()


def lower_buf_token(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    items = op.attrs.get("args", [])
    acquire = op.name == "pto.get_buf"
    if len(items) < 2 or not isinstance(items[1], int):
        return fail_step(VerifyError(f"{op.name} needs [op class, buffer id]", loc))
    cls = items[0]
    pipe = EVENT_CLASS_PIPE.get(cls.value) if isinstance(cls, A.EnumAttr) else None
    if pipe is None:
        try:
            pipe = pipe_of(cls, loc)
        except VerifyError as e:
            return fail_step(e)
    bid = items[1]
    name = op.name[4:]

    def step(frame):
        core = su.core
        if pipe not in core.pipes:
            raise VerifyError(f"{op.name} on pipe {pipe}, which {core.label} ({core.kind.name}) lacks", loc)
        tokens = core.crosscore.tokens
        token = tokens.get((core.label, bid))
        if token is None:
            token = tokens[(core.label, bid)] = _BufToken(core, bid)
        gate = _BufAcquire(token) if acquire else token
        su.issue(pipe, make_instr(XWAIT if acquire else XSET, name, loc, pipe, 0, flag=gate))

    return step


# ---------------------------------------------------------------------------------- async GM


class _AsyncEvent:
    def __init__(self, instr: Instr) -> None:
        self.instr = instr


class _AsyncCopy:
    """A 1-D GM -> GM copy run by the DMA: reads the source at start, writes at completion (in a
    timing-only run, ``data`` False, it moves nothing)."""

    def __init__(self, dst: PartitionView, src: PartitionView, data: bool = True) -> None:
        self.dst, self.src, self.data = dst, src, data
        self.names = ["dst", "src"]

    def start(self, instr: Instr) -> list:
        return [np.array(self.src.read()) if self.data else None]

    def commit(self, instr: Instr, results: list) -> None:
        if results[0] is not None:
            self.dst.write(results[0].reshape(self.dst.rows, self.dst.cols))


def lower_async_session(su: ScalarUnit, op: A.Op) -> Step:
    res = op.results[0] if op.results else None

    def step(frame):
        if res is not None:
            frame[res] = {"session": op.loc}
        su.charge(su.arith_cost)

    return step


def lower_async_copy(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    names = list(op.operands) or list(op.ins)
    res = op.results[0] if op.results else None
    if len(names) < 2:
        return fail_step(VerifyError(f"{op.name} needs (dst, src, session)", loc))
    spec = su.isa.get(op.name)
    pipe, case = spec.pipe.resolve(None, None), spec.timing.select(None, None)

    def step(frame):
        dst, src = su.value(frame, names[0], loc), su.value(frame, names[1], loc)
        if not isinstance(dst, PartitionView) or not isinstance(src, PartitionView):
            raise VerifyError(f"{op.name} copies between GM views", loc)
        if dst.rows * dst.cols != src.rows * src.cols:
            raise BoundsError(f"{op.name}: {src.rows * src.cols} source elements into {dst.rows * dst.cols}", loc)
        nbytes = src.rows * src.cols * src.gm.dtype.itemsize
        reads = ((src.gm.name, *src.byte_range(), (src.base, src.sizes, src.strides)),)
        writes = ((dst.gm.name, *dst.byte_range(), (dst.base, dst.sizes, dst.strides)),)
        occ, lat = case.evaluate({"bytes": nbytes})
        instr = make_instr(OP, op.name[4:], loc, pipe, 0, occ, lat, bound=_AsyncCopy(dst, src, su.core.data), reads=reads,
                      writes=writes, nbytes=nbytes)
        instr.transfer = case.transfer({"bytes": nbytes})
        if su.core.data:  # timing only: no values, nothing to make writable
            dst.gm.writable()
        su.issue(pipe, instr)
        if res is not None:
            frame[res] = _AsyncEvent(instr)

    return step


class _AsyncDone:
    def __init__(self, instr: Instr, env) -> None:
        self.instr, self.env = instr, env

    def ready(self) -> bool:
        return 0 <= self.instr.done <= self.env.now

    def event(self):
        return self.env.timeout(max(1, (self.instr.done - self.env.now) if self.instr.done >= 0 else 1))

    def take(self, waiter: Instr) -> list:
        return [self.instr]

    def describe(self) -> str:
        return "for an async GM copy that never completes"


def lower_async_wait(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    names = list(op.operands) or list(op.ins)
    res = op.results[0] if op.results else None
    poll = op.name == "pto.test_async_event"

    def step(frame):
        ev = su.value(frame, names[0], loc) if names else None
        if not isinstance(ev, _AsyncEvent):
            raise VerifyError(f"{op.name} needs the event of a tput_async / tget_async", loc)
        core = su.core
        gate = _AsyncDone(ev.instr, core.env)
        if poll:
            su.charge(su.arith_cost)

            def check():
                # the poll happens at the scalar unit's time: catching SimPy up to it lets the copy
                # progress (a polling loop that never yields would spin at one instant forever)
                yield from su.sync_time()
                if res is not None:
                    frame[res] = gate.ready()

            return check()
        instr = make_instr(XWAIT, op.name[4:], loc, "S", 0, flag=gate)

        def run():
            yield from _scalar_wait(su, instr, gate)
            if res is not None:
                frame[res] = True

        return run()

    return step


CROSS_CORE_OPS = {
    "reserve_buffer": lower_reserve_buffer,
    "import_reserved_buffer": lower_import_reserved_buffer,
    "initialize_pipe": lower_initialize_pipe,
    "tpush": lower_tpush,
    "tpop": lower_tpop,
    "tfree": lower_tfree,
    "declare_tile": lower_declare_tile,
    "sync_set": lower_sync,
    "sync_wait": lower_sync,
    "get_buf": lower_buf_token,
    "rls_buf": lower_buf_token,
    "async_session": lower_async_session,
    "async_copy": lower_async_copy,
    "async_wait": lower_async_wait,
    "async_test": lower_async_wait,
}
