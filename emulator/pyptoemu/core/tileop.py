"""Binding of a tile instruction (a `pto.*` op with NumPy semantics): bound once into a
:class:`TileOpBinding`, whose three named steps a reader can follow:

- :meth:`TileOpBinding.issue` (the scalar unit, in program order): resolves operands to tiles / GM
  windows / scalars (:class:`OperandSnap`, captured at issue), chooses the pipe from the spec's rule,
  evaluates the timing formula and pushes an :class:`Instr` that carries the binding;
- :meth:`TileOpBinding.start` (the pipe, when the instruction starts): reads memory as it is at that
  cycle and runs the semantics function;
- :meth:`TileOpBinding.commit` (the commit queue, at completion): writes the results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import is_, itemgetter
from types import MethodType
from typing import Any

import numpy as np

from ptoisa.dtypes import is_float, np_dtype
from ptoisa.dtypes import itemsize as _itemsize
from ptoisa.isa.spec import InstrSpec, OperandSpec
from ptoisa.text import ast as A
from pyptoemu.core.memory import PartitionView, Tile
from pyptoemu.core.pipe import OP, Instr, make_instr
from pyptoemu.core.scalar import ScalarUnit, Step, fail_step, values_of
from pyptoemu.errors import (
    BoundsError,
    InternalError,
    KernelFault,
    Loc,
    OperandError,
    PtoError,
    ResourceError,
    UndefinedResultError,
    UnsupportedOpError,
    VerifyError,
)
from pyptoemu.isa.arg import Arg, LazyArg
from pyptoemu.isa.ieee import QUIET

TILE, VIEW, SCALAR = 0, 1, 2
_ESIZE: dict[str, int] = {}


def itemsize(name: str) -> int:
    """Element size by dtype name, memoised: it is asked several times per issued instruction."""
    v = _ESIZE.get(name)
    if v is None:
        v = _ESIZE[name] = _itemsize(name)
    return v


def _picker(positions: list[int]) -> Callable[[list], tuple]:
    """A reader of the items at ``positions`` of a list, as a tuple (one C call for two or more)."""
    if len(positions) >= 2:
        return itemgetter(*positions)
    if positions:
        i = positions[0]
        return lambda items: (items[i],)
    return lambda items: ()


@dataclass(slots=True)
class OperandSnap:
    """One operand of an issued tile op as it was at issue (valid shapes act in program order)."""

    kind: int  # TILE, VIEW or SCALAR
    obj: Any  # the Tile, the PartitionView or the scalar value
    vrow: int  # valid rows (a view's rows; 0 for a scalar)
    vcol: int
    dtype: str  # element type name
    loc: str | None  # tile location, "gm" for a view, None for a scalar
    # the Arg the semantics last got for it (a snapshot is reused while its tile or scalar is the
    # same; the Arg too while it holds the same array: Args are never mutated, see isa/arg.py)
    arg: Any = field(default=None, compare=False, repr=False)

    def timing_key(self) -> tuple:
        """What pipe and timing depend on: kind, valid shape, dtype, location and, for a GM view,
        its sizes and strides (they decide the DMA's pieces and bursts)."""
        if self.kind == VIEW:
            return (self.kind, self.vrow, self.vcol, self.dtype, self.loc, self.obj.sizes, self.obj.strides)
        return (self.kind, self.vrow, self.vcol, self.dtype, self.loc)


_new_snap = object.__new__
_NEVER = object()  # no instruction's key (TileOpBinding.off_chip_reads: none known)


def _operand_lists(op: A.Op, spec: InstrSpec) -> tuple[list, list, list]:
    """(ins, outs, in_types) of a DPS op. A generic-form op lists its operands in the op's declared
    argument order (spec §1.4): the required inputs, then the outputs, then the optional inputs
    (``tadd``: src0, src1, dst; ``tmov``: src, dst, fp, preQuantScalar)."""
    if op.is_dps or op.ins or op.outs:
        return list(op.ins), list(op.outs), list(op.in_types)
    split = spec.split_generic(list(op.operands), list(op.operand_types))
    if split is None:
        n = sum(1 for o in spec.ins if not o.optional) + len(spec.outs)
        raise VerifyError(f"{op.name}: expected at least {n} operands (inputs, then outputs), "
                          f"got {len(op.operands)}", op.loc)
    return split[0], split[1], split[2]


def bind_tile_op(su: ScalarUnit, op: A.Op, spec: InstrSpec, semantics: Callable) -> Step:
    """Match the op's operands to its spec once; the step is the binding's :meth:`issue`.

    On a chip the cores of one kind share the work: the first core binds the op and leaves its
    :meth:`~TileOpBinding.detached` template in the chip's shared bindings; the others take a copy
    of it that shares its operand matching and its caches of checked shapes, timings and prepared
    semantics (what they hold depends on the op, the shapes and the kind's pipes, not on the core),
    so a 48-core run checks and times each shape once, not 48 times. ``pyptoemu.run`` hands the
    chip the shared bindings of the previous runs of the same module on the same ISA and machine
    (api._Prepared), so a repeated run binds, checks and times nothing it did before."""
    shared = su.core.shared_bindings
    if shared is not None:
        shared = shared.tile_ops
        key = (su.core.kind.name, op)
        template = shared.get(key)
        if template is not None:
            return template.for_core(su).issue
    step = _bind_tile_op(su, op, spec, semantics)
    if shared is not None and isinstance(step, MethodType):
        shared[key] = step.__self__.detached()
    return step


def _bind_tile_op(su: ScalarUnit, op: A.Op, spec: InstrSpec, semantics: Callable) -> Step:
    try:
        ins, outs, in_types = _operand_lists(op, spec)
    except VerifyError as e:
        return fail_step(e)
    n_required_outs = sum(1 for o in spec.outs if not o.optional)
    if len(outs) < n_required_outs:
        return fail_step(VerifyError(f"{op.name} needs {n_required_outs} outs operand(s), got {len(outs)}",
                                     op.loc))
    bad_count = _ins_count_error(op, spec, len(ins))
    if bad_count is not None:
        return fail_step(bad_count)
    # Operand specs matched to the operands as written (optional ones may be left out).
    in_specs = _align(spec.ins, len(ins), spec.syntax.scratch_last)
    if "needs_scratch" in spec.constraints and not any(o.is_scratch for o in in_specs):
        scratch = next((o.name for o in spec.ins if o.is_scratch), "tmp")
        where = f" on {su.machine.name}" if "needs_scratch" in spec.target_constraints else ""
        return fail_step(VerifyError(f"{op.name}{where} needs its scratch operand {scratch} "
                                     f"(a work tile the op overwrites), which this form leaves out", op.loc))
    scratch = [i < len(in_specs) and in_specs[i].is_scratch for i in range(len(ins))]
    padded_types = in_types + [None] * (len(ins) - len(in_types))
    binding = TileOpBinding(
        su=su, op=op, spec=spec, semantics=semantics, ins=ins, outs=outs, in_types=in_types,
        in_specs=in_specs, out_specs=_align(spec.outs, len(outs)),
        # Which ins are scratch (role: scratch in the spec): written, not read, by the op.
        scratch=scratch,
        scalar_types=[(t.name if isinstance(t, A.ScalarType) else None) if i < len(in_types) else None
                      for i, t in enumerate(padded_types)],
        attrs=dict(op.attrs), names=tuple(str(x) for x in list(ins) + list(outs)),
    )
    return binding.issue


def _ins_count_error(op: A.Op, spec: InstrSpec, n: int) -> VerifyError | None:
    """An ins list shorter than the op's required operands, or longer than all of them: a missing
    source would otherwise reach the semantics as an index error (an internal error, exit 3), an
    extra one would be ignored without a word (``tadd ins(%a, %b, %c ...)``)."""
    required = [o.name for o in spec.ins if not o.optional]
    if len(required) <= n <= len(spec.ins):
        return None
    names = ", ".join(o.name if not o.optional else f"[{o.name}]" for o in spec.ins)
    return VerifyError(f"{op.name} takes {_count_text(len(required), len(spec.ins))} ins operand(s) ({names}), "
                       f"got {n}", op.loc)


def _count_text(low: int, high: int) -> str:
    return str(low) if low == high else f"{low} to {high}"


@dataclass(slots=True, eq=False)
class TileOpBinding:
    """A tile op bound once: its operands matched to the spec, its semantics function, and the pipe
    and timing per operand shape (memoised: they depend only on shapes, dtypes and locations)."""

    su: ScalarUnit
    op: A.Op
    spec: InstrSpec
    semantics: Callable  # (in args, out args, attrs) -> results, one per out
    ins: list  # operand names (or literal ints) as written
    outs: list
    in_types: list  # types written at the use
    in_specs: tuple[OperandSpec, ...]
    out_specs: tuple[OperandSpec, ...]
    scratch: list[bool]  # per in: a scratch operand (written, not read)
    scalar_types: list[str | None]  # per in: the scalar type written at the use
    attrs: dict
    names: tuple[str, ...]  # ins + outs, for the trace
    pipe_cache: dict[tuple, tuple] = field(default_factory=dict)
    timing_cache: dict[tuple, tuple] = field(default_factory=dict)
    shapes_checked: set = field(default_factory=set)  # timing-only: operand shapes the semantics accepted
    checked_key: Any = None  # the last key checked (or found in shapes_checked)
    # the reads and the writes (the same tuple, while an op is issued on the same tiles) last found
    # known written in full on this core: that never reverts (aicore.Memories), so they are not
    # looked up again
    reads_known: tuple | None = None
    writes_known: tuple | None = None
    # per scalar operand name: (the value object, its snapshot, its timing key) at its last issue
    scalar_memo: dict = field(default_factory=dict)
    # What the last issue made of its operands: an op issued again on the very values, its tiles
    # unchanged, reuses the snapshots whole; one on new values with the very key parts, the timing.
    last_values: tuple = ()  # the operand values (empty if one was not a tile, a GM window or a plain scalar)
    last_scalars: list[int] = field(default_factory=list)  # the positions of the plain scalars among them
    last_tiles: list[tuple] = field(default_factory=list)  # (tile, valid rows, valid columns, address) per distinct tile
    last_result: tuple = ()  # (snapshots, timing key, timing, reads, writes)
    # the issue template of the last issue: what its Instr is made of (:meth:`_template`)
    template: tuple | None = None
    last_parts: list | None = None  # the timing key parts
    last_spans: list = field(default_factory=list)  # the byte range per operand (None for a scalar)
    last_views: tuple[int, ...] = ()  # the positions of the GM windows among the values (none: not reusable)
    last_others: tuple[int, ...] = ()  # the positions of everything else
    views_read: bool = False  # whether the op reads a GM window (else moving one leaves the reads as they are)
    views_written: bool = False  # whether it writes one
    # Timing only: the shape key (Instr.key) of the last issue whose reads (writes) are all GM
    # windows, else _NEVER. aicore.Memories follows on-chip buffers only, so noting such ranges
    # changes nothing and says they are noted; a key fixes each operand's kind, so every
    # instruction of that key is such an instruction and :meth:`start` notes nothing for it (a
    # load reads a new window each time, a store writes one: 512 calls per run of the stream
    # kernel). reads_off_chip (writes_off_chip): whether the last issue's are.
    off_chip_reads: Any = _NEVER
    off_chip_writes: Any = _NEVER
    reads_off_chip: bool = False
    writes_off_chip: bool = False
    pick_reads: Callable | None = None  # per-operand byte ranges -> the ranges read
    pick_writes: Callable | None = None  # per-operand byte ranges -> the ranges written
    # (sizes, strides, GM buffer, element size, timing key part) of the last GM window operand: a
    # window moved along its tensor keeps them, and so its key part (the same object)
    view_shape: tuple | None = None
    # Derived once at binding, read on every issue:
    fetch: tuple = ()  # (operand name or literal int, scalar type written at the use), ins then outs
    read_values: Callable = None  # frame -> the operand values in ``fetch`` order (KeyError: one is undefined)
    n_ins: int = 0
    has_outs: bool = False
    read_idx: tuple[int, ...] = ()  # operands the op reads: ins that are not scratch
    write_idx: tuple[int, ...] = ()  # operands it writes: outs, then scratch ins
    short_name: str = ""  # the op name without 'pto.', as instructions are named
    memory: Any = None  # the core's memories (pyptoemu.core.aicore.Memories)
    data: bool = True  # False: a timing-only run computes nothing
    index_pos: tuple[int, ...] = ()  # operands written as index scalars (their values shape the result)
    times_in_place: bool = False  # the timing formulas read ``in_place`` (else the key leaves it out)
    # The data path of a semantics written in two steps (registry.prepared): its preparation, the
    # run steps it gave per operand shapes, and (the operands, the run step) of the last start
    prepare: Callable | None = None
    plans: dict = field(default_factory=dict)
    last_plan: tuple | None = None

    def detached(self) -> TileOpBinding:
        """What the cores of one kind share of this binding, in this run and in later runs of the
        same module on the same ISA and machine: the operand matching and the caches (pipe and
        timing per operand shapes, the shapes checked, the prepared semantics), which depend on the
        op, the shapes and the kind's pipes only. Nothing of a run is kept: no scalar unit, memory,
        tile, window or operand value (a template, :meth:`for_core` makes a binding of it)."""
        other = self._copy()
        other.su = other.memory = None
        other.reads_known = other.writes_known = other.checked_key = None
        other.last_values, other.last_scalars, other.last_tiles, other.last_result = (), [], [], ()
        other.template = other.last_parts = other.view_shape = other.last_plan = None
        other.last_spans, other.last_views, other.last_others = [], (), ()
        other.pick_reads = other.pick_writes = None
        other.off_chip_reads = other.off_chip_writes = _NEVER
        other.scalar_memo = {}
        return other

    def for_core(self, su: ScalarUnit) -> TileOpBinding:
        """A binding of this :meth:`detached` template on the scalar unit ``su``: the template's
        operand matching and caches shared, the core's own scalar unit and memories."""
        other = self._copy()
        other.su = su
        other.memory = su.core.memory
        other.data = su.core.data
        other.scalar_memo = {}  # (the values this core's issues held)
        return other

    def _copy(self) -> TileOpBinding:
        """A shallow copy (every run makes one per tile op and core, :meth:`for_core`)."""
        return _copy_binding(self)

    def __post_init__(self) -> None:
        n = len(self.ins)
        self.fetch = tuple((x, self.scalar_types[i]) for i, x in enumerate(self.ins)) + tuple(
            (x, None) for x in self.outs)
        self.read_values = values_of([x for x, _ in self.fetch])
        self.n_ins = n
        self.has_outs = bool(self.outs)
        self.read_idx = tuple(i for i in range(n) if not self.scratch[i])
        self.write_idx = tuple(range(n, n + len(self.outs))) + tuple(i for i in range(n) if self.scratch[i])
        self.short_name = self.op.name[4:]
        self.memory = self.su.core.memory
        self.data = self.su.core.data
        self.index_pos = tuple(i for i, (_, st) in enumerate(self.fetch) if st == "index")
        self.times_in_place = self.has_outs and _formulas_read(self.spec.timing, "in_place")
        self.prepare = getattr(self.semantics, "prepare", None)
        self.off_chip_reads = self.off_chip_writes = _NEVER

    # ---- issue: the scalar unit, in program order

    def issue(self, frame: dict):
        """Snapshot the operands, check and time them (once per shape), push the instruction.

        The per-issue path: the operand values in one read of the frame; issued on the very values
        of its last issue (the same tiles, valid shapes and addresses unchanged, the same scalars:
        a loop over in-place compute), the op reuses that issue's snapshots, timing and byte ranges
        whole. Otherwise one snapshot per operand, a timing key built from what the snapshot already
        read (pipe, cost and checks are looked up by it, computed only the first time a shape is
        seen), the byte ranges, one :class:`Instr`. Tiles and GM windows (nearly every operand) are
        read here directly; anything else goes through :func:`_snap`."""
        try:
            values = self.read_values(frame)
        except KeyError:
            raise VerifyError(f"undefined SSA value {self._undefined(frame)}", self.op.loc) from None
        template = None
        last = self.last_values
        if values == last:  # tiles and windows compare by identity
            template = self.template
            for i in self.last_scalars:  # a scalar by identity too: equal is not the same (0.0 == -0.0 == False)
                if values[i] is not last[i]:
                    template = None
            for tile, vrow, vcol, addr in self.last_tiles:  # each tile's valid shape and address as then
                if tile.vrow != vrow or tile.vcol != vcol or tile.addr != addr:
                    template = None
        elif self.last_views:
            template = self._moved(values)
        pipe, occ, lat, reads, writes, snaps, nbytes, transfer, shape_key = template or self._snapshot(values)
        if pipe == "S":
            return _run_on_scalar(self.su, make_instr(OP, self.short_name, self.op.loc, pipe, 0, occ, lat, self, reads,
                                                      writes, None, snaps, nbytes, transfer, shape_key))
        self.su.issue_new(pipe, OP, self.short_name, self.op.loc, occ, lat, self, reads, writes, None, snaps, nbytes,
                          transfer, shape_key)
        return None

    def _undefined(self, frame: dict) -> str:
        """The first operand name the frame does not hold."""
        return next(x for x, _ in self.fetch if x.__class__ is not int and x not in frame)

    def _moved(self, values: tuple) -> tuple | None:
        """The last issue with its GM windows moved along their tensors (a loop loading or storing
        tile after tile of a tensor; the tiles and scalars the very same): new snapshots and byte
        ranges for the windows, everything else of that issue kept (its timing too: a window's key
        part is its shape, not its place). None if anything else changed: :meth:`_snapshot` then
        (which gives what this gives, checked by tests/emulator/core/test_issue_reuse.py)."""
        last = self.last_values
        for i in self.last_others:
            if values[i] is not last[i]:
                return None
        for tile, vrow, vcol, addr in self.last_tiles:
            if tile.vrow != vrow or tile.vcol != vcol or tile.addr != addr:
                return None
        snaps, key, hit, last_reads, last_writes = self.last_result
        snaps = snaps.copy()  # (the last issue's Instr holds the old list: never mutated)
        # the byte ranges are the binding's own (only pick_reads and pick_writes read them): updated
        # in place, no list copied per issue; a window that cannot be moved leaves them half
        # updated, and _snapshot then makes them anew
        spans = self.last_spans
        shape = self.view_shape
        for i in self.last_views:
            v, was = values[i], last[i]
            if v.__class__ is not PartitionView:
                return None
            gm, sizes, strides = v.gm, v.sizes, v.strides
            if sizes is not was.sizes or strides is not was.strides or gm is not was.gm:
                return None
            # the window's last snapshot, for the window moved: OperandSnap(VIEW, v, ...) filled in
            # field by field (the dataclass __init__ is Python code CPython 3.11 calls from C, in a
            # new interpreter frame; see pipe.Instr)
            was = snaps[i]
            snap = snaps[i] = _new_snap(OperandSnap)
            snap.kind = VIEW
            snap.obj = v
            snap.vrow = was.vrow
            snap.vcol = was.vcol
            snap.dtype = was.dtype
            snap.loc = "gm"
            snap.arg = None
            # the element size as _snapshot kept it with the window's shape (numpy's dtype.itemsize
            # is a descriptor call), else read
            es = shape[3] if shape[2] is gm else gm.dtype.itemsize
            spans[i] = (gm.name, v.lo * es, (v.hi + 1) * es, (v.base, sizes, strides))
        reads, writes = last_reads, last_writes
        if self.views_read:
            reads = self.pick_reads(spans)
            if reads == last_reads:  # the same tuples while they are equal (start knows them by identity)
                reads = last_reads
        if self.views_written:
            writes = self.pick_writes(spans)
            if writes == last_writes:
                writes = last_writes
        self.last_result = (snaps, key, hit, reads, writes)
        self.last_values = values
        # the last template with the new reads, writes and snapshots: what :meth:`_template` gives
        # (pipe, timing and shape key are those of the very key, the index operands the very
        # values), without its call and unpacking (508 per run of the stream kernel)
        t = self.template
        template = self.template = (t[0], t[1], t[2], reads, writes, snaps, t[6], t[7], t[8])
        return template

    def _template(self) -> tuple:
        """The issue template of the last issue (:attr:`last_result`): what its :class:`Instr` is
        made of (pipe, occupancy, latency, reads, writes, operands, bytes, GM transfer) and, in a
        timing-only run, what its shape check is remembered by (index operands: their values too)."""
        snaps, key, hit, reads, writes = self.last_result
        pipe, occ, lat, nbytes, transfer = hit
        index_pos = self.index_pos
        shape_key = None if self.data else key if not index_pos else (key, tuple([snaps[i].obj for i in index_pos]))
        if shape_key is not None:
            if self.reads_off_chip:
                self.off_chip_reads = shape_key
            if self.writes_off_chip:
                self.off_chip_writes = shape_key
        template = self.template = (pipe, occ, lat, reads, writes, snaps, nbytes, transfer, shape_key)
        return template

    def _snapshot(self, values: tuple) -> tuple:
        """(snapshots, timing key, timing, reads, writes) of an issue on ``values`` (the operands
        in ``fetch`` order), kept as the binding's last issue; its issue template."""
        op = self.op
        snaps = []
        key = []
        spans = []  # per operand: its byte range (_range), None for a scalar
        tiles = []  # (tile, valid rows, valid columns, address) per tile operand: what decides a reuse
        scalars = []  # the positions of the plain scalars
        reusable = True  # every operand a tile, a GM window or a plain scalar: reusable while they stay
        scalar_memo = self.scalar_memo
        for v, (x, scalar_type) in zip(values, self.fetch):  # noqa: B905 - as many of each
            cls = v.__class__
            if cls is Tile:
                vrow, vcol, addr = v.vrow, v.vcol, v.addr
                if not any(t[0] is v for t in tiles):  # once per tile (an op in place has it twice)
                    tiles.append((v, vrow, vcol, addr))
                tile_last = v.issued  # what the tile's previous issue made of it, unchanged while its
                if tile_last is not None and tile_last[0] == vrow and tile_last[1] == vcol and tile_last[2] == addr:
                    snaps.append(tile_last[3])  # valid shape and address are (snapshots are never mutated)
                    key.append(tile_last[4])
                    spans.append(tile_last[5])
                    continue
                t = v.type
                dtype, tloc = t.dtype, t.loc
                snap = OperandSnap(TILE, v, vrow, vcol, dtype, tloc)
                tkey = (TILE, vrow, vcol, dtype, tloc)
                span = (v.buffer.spec.name, addr, addr + v.nbytes, None)
                v.issued = (vrow, vcol, addr, snap, tkey, span)
                snaps.append(snap)
                key.append(tkey)
                spans.append(span)
            elif cls is PartitionView and (v.gm.store is not None or v.gm.size):
                gm = v.gm
                sizes, strides = v.sizes, v.strides
                shape = self.view_shape  # the last window's: a window moved along a tensor keeps it
                if shape is None or shape[0] is not sizes or shape[1] is not strides or shape[2] is not gm:
                    shape = self.view_shape = (sizes, strides, gm, gm.dtype.itemsize,
                                               (VIEW, v.rows, v.cols, gm.dtype_name, "gm", sizes, strides))
                tkey = shape[4]
                snaps.append(OperandSnap(VIEW, v, tkey[1], tkey[2], tkey[3], "gm"))
                key.append(tkey)
                es = shape[3]
                spans.append((gm.name, v.lo * es, (v.hi + 1) * es, (v.base, sizes, strides)))
            else:
                if cls is float or cls is int or cls is bool:  # a scalar: its snapshot kept while
                    scalars.append(len(snaps))
                    memo = scalar_memo.get(x)  # the operand holds the same object (a constant does)
                    if memo is not None and memo[0] is v:
                        snaps.append(memo[1])
                        key.append(memo[2])
                        spans.append(None)
                        continue
                else:
                    reusable = False
                s = _snap(v, scalar_type, op.loc, op)
                tkey = s.timing_key()
                if s.kind == SCALAR:
                    scalar_memo[x] = (v, s, tkey)
                snaps.append(s)
                key.append(tkey)
                spans.append(None if s.kind == SCALAR else _range(s))
        parts = key
        last = self.last_parts
        if last is not None and not self.times_in_place and all(map(is_, parts, last)):
            # the very key parts (a window moved along its tensor): the same timing, and the byte
            # ranges at the same positions
            key, hit = self.last_result[1], self.last_result[2]
        else:
            key, hit = self._timing_of(parts, snaps)
            self.pick_reads = _picker([i for i in self.read_idx if spans[i] is not None])
            self.pick_writes = _picker([i for i in self.write_idx if spans[i] is not None])
        reads, writes = self.pick_reads(spans), self.pick_writes(spans)
        if self.last_result:  # the same ranges as last time: the same tuples (start knows them by identity)
            if reads == self.last_result[3]:
                reads = self.last_result[3]
            if writes == self.last_result[4]:
                writes = self.last_result[4]
        self.last_result = (snaps, key, hit, reads, writes)
        self.last_values = values if reusable else ()
        self.last_scalars, self.last_tiles, self.last_parts, self.last_spans = scalars, tiles, parts, spans
        views = tuple([i for i, s in enumerate(snaps) if s.kind == VIEW]) if reusable else ()
        self.last_views = views
        self.last_others = tuple([i for i in range(len(snaps)) if i not in views])
        self.views_read = any(i in views for i in self.read_idx)
        self.views_written = any(i in views for i in self.write_idx)
        self.reads_off_chip = all(snaps[i].kind == VIEW for i in self.read_idx if spans[i] is not None)
        self.writes_off_chip = all(snaps[i].kind == VIEW for i in self.write_idx if spans[i] is not None)
        return self._template()

    def _timing_of(self, parts: list, snaps: list) -> tuple[tuple, tuple]:
        """(timing key, (pipe, occupancy, latency, bytes, GM transfer)) of operands whose
        timing key parts are ``parts``: checked and timed the first time the key is seen."""
        n_ins = self.n_ins
        # (a GM view's strides decide its bursts; a result over its own source runs in place)
        key = (*parts, _in_place(snaps[:n_ins], snaps[n_ins:])
               if self.times_in_place and snaps[n_ins].kind == TILE else 0)
        hit = self.timing_cache.get(key)
        if hit is None:
            hit = self.timing_cache[key] = self._check_and_time(snaps[:n_ins], snaps[n_ins:])
        return key, hit

    def _check_and_time(self, in_snap: list, out_snap: list) -> tuple:
        """(pipe, occupancy, latency, bytes, GM transfer or None) of the op on these operand
        shapes, after checking them."""
        pipe, case, dom = self._check_and_place(in_snap, out_snap)
        variables = _timing_vars(dom, in_snap, out_snap)
        occ, lat = case.evaluate(variables)
        return (pipe, occ, lat, int(variables["bytes"]), case.transfer(variables))

    def _check_and_place(self, in_snap: list, out_snap: list) -> tuple:
        """Every check of the operands, then (pipe, timing case, the operand whose shape and dtype
        the op's domain follows)."""
        self._check_operands(in_snap, out_snap)
        spec = self.spec
        src_loc = next((s.loc for s in in_snap if s.kind != SCALAR), None)
        dst_loc = out_snap[0].loc if out_snap else None
        pipe, case = self._resolve_pipe(src_loc, dst_loc)  # an illegal move is said before its shape rules
        self._check(in_snap, out_snap)
        dom = out_snap[0] if spec.domain == "dst" and out_snap else next(
            (s for s in in_snap if s.kind != SCALAR), out_snap[0] if out_snap else None)
        legal = tuple(spec.dtypes)
        if legal and spec.domain != "none" and dom is not None and dom.dtype not in legal:
            which = "destination" if dom in out_snap else "source"
            raise VerifyError(f"{self.op.name}: {which} element type {dom.dtype} is not supported "
                              f"(legal: {', '.join(legal)})", self.op.loc)
        self._check_scratch_is_not_read()
        return pipe, case, dom

    def _check_scratch_is_not_read(self) -> None:
        """A scratch operand that is also an operand the op reads: where the target uses its scratch
        (machine param vec_scratch_used) the op overwrites it while reading it."""
        if not self.su.machine.params.get("vec_scratch_used", 1):
            return
        ins, scratch = self.ins, self.scratch
        read = {x for x, is_scratch in zip(ins, scratch, strict=True) if not is_scratch and isinstance(x, str)}
        clash = next((i for i, x in enumerate(ins) if scratch[i] and x in read), None)
        if clash is not None:
            raise VerifyError(f"{self.op.name}: the scratch operand {self.in_specs[clash].name} is {ins[clash]}, which "
                              f"the op also reads: on {self.su.machine.name} the op overwrites its scratch tile while "
                              f"it runs (its contents afterwards are unspecified); give it a tile of its own",
                              self.op.loc)

    def _check_operands(self, in_snap: list, out_snap: list) -> None:
        """Operand kinds, locations and declared types."""
        op, loc = self.op, self.op.loc
        _check_kinds(op, self.in_specs, in_snap, self.ins, "ins", loc)
        _check_kinds(op, self.out_specs, out_snap, self.outs, "outs", loc)
        _check_declared_types(op, in_snap, self.in_types, out_snap, op.out_types, loc)

    def _check(self, in_snap: list, out_snap: list) -> None:
        """The spec's constraints, shapes and windows (after :meth:`_check_operands`)."""
        op, loc, spec, machine = self.op, self.op.loc, self.spec, self.su.machine
        if ("i32_compare_eq_only" in spec.constraints and machine.params.get("cmp_i32_eq_only")
                and in_snap and in_snap[0].dtype == "i32" and _cmp_mode(self.attrs) != "eq"):
            raise VerifyError(f"{op.name}: on {machine.name} the vector unit compares i32 tiles only "
                              f"for eq, not {_cmp_mode(self.attrs)}", loc)
        if "same_dtype" in spec.constraints:
            _check_same_dtype(op, [s for i, s in enumerate(in_snap) if not self.scratch[i]] + out_snap, loc)
        _check_float_scalar_on_int_tiles(op, [s for i, s in enumerate(in_snap) if not self.scratch[i]] + out_snap, loc)
        if spec.dtype_tuples:
            _check_dtype_tuples(op, spec.dtype_tuples, self.in_specs, in_snap, self.out_specs, out_snap, loc)
        if "nd_tiles" in spec.constraints:
            _check_nd(op, in_snap + out_snap, self.names, loc)
        if "same_valid" in spec.constraints:
            _check_same_valid(op, [s for i, s in enumerate(in_snap) if not self.scratch[i]], out_snap, loc)
        self._check_sources(in_snap, out_snap)
        if "one_src_matches_dst" in spec.constraints:
            _check_one_src_matches_dst(op, in_snap, out_snap, machine.name, loc)
        if "one_scalar" in spec.constraints and sum(s.kind == SCALAR for s in in_snap[:2]) != 1:
            raise VerifyError(f"{op.name}: exactly one of the two operands is a scalar (the other a tile)", loc)
        for name in spec.constraints:
            shape_rule = _SHAPE_RULES.get(name)
            if shape_rule is not None and out_snap and out_snap[0].kind != SCALAR:
                src = next((s for i, s in enumerate(in_snap) if s.kind != SCALAR and not self.scratch[i]), None)
                problem = shape_rule(src, out_snap[0], self.attrs)
                if problem:
                    where = f" on {machine.name}" if name in spec.target_constraints else ""
                    raise VerifyError(f"{op.name}{where}: {problem}", loc)
        if spec.conversions:
            _check_conversion(op, spec.conversions, in_snap, out_snap, machine.name, loc)
        _check_matmul_shapes(op, in_snap, out_snap, loc)
        if spec.semantics in ("load", "store"):
            _check_windows(op, in_snap + out_snap, loc)

    def _check_sources(self, in_snap: list, out_snap: list) -> None:
        """The constraints on all data sources together (their rows or columns against dst's, what
        tconcat puts side by side) and on a source when the scratch operand is left out."""
        op, loc, constraints = self.op, self.op.loc, self.spec.constraints
        data = [s for i, s in enumerate(in_snap) if not self.scratch[i]]
        for name, axis in (("sources_rows_match", 0), ("sources_cols_match", 1)):
            if name in constraints:
                _check_sources_match(op, data, out_snap, axis, loc)
        if "concat_fits_dst" in constraints:
            _check_concat_fits(op, data, out_snap, loc)
        if "whole_blocks_without_scratch" in constraints and not any(self.scratch) and in_snap:
            _check_whole_blocks(op, in_snap[0], loc)
        if "distinct_src_dst" in constraints:
            where = f" on {self.su.machine.name}" if "distinct_src_dst" in self.spec.target_constraints else ""
            _check_distinct_storage(op, data, out_snap, where, loc)

    def _resolve_pipe(self, src_loc: str | None, dst_loc: str | None) -> tuple:
        key = (src_loc, dst_loc)
        hit = self.pipe_cache.get(key)
        if hit is None:
            op = self.op
            try:
                pipe = self.spec.pipe.resolve(src_loc, dst_loc)
                case = self.spec.timing.select(src_loc, dst_loc)
            except ValueError as e:
                raise VerifyError(f"{op.name}: {e}", op.loc) from None
            if pipe not in self.su.core.pipes and pipe != "S":
                raise UnsupportedOpError(f"{op.name} on pipe {pipe} is not supported by the emulator "
                                         f"yet", op.loc)
            hit = self.pipe_cache[key] = (pipe, case)
        return hit

    def check_static(self, type_of: Callable[[str], Any]) -> None:
        """The issue step's checks, made before anything runs on the operand types the text gives
        (a value's defining type, else the type written at the use; valid shapes taken as written
        or as the full tile). An op with an operand whose type is not known statically is left to
        its issue step."""
        declared_out = list(self.op.out_types)
        in_snap = [_static_snap(x, type_of(x) if isinstance(x, str) else None,
                                self.in_types[i] if i < len(self.in_types) else None, self.scalar_types[i])
                   for i, x in enumerate(self.ins)]
        out_snap = [_static_snap(x, type_of(x) if isinstance(x, str) else None,
                                 declared_out[i] if i < len(declared_out) else None, None)
                    for i, x in enumerate(self.outs)]
        if all(s is not None for s in in_snap + out_snap):
            self._check_and_place(in_snap, out_snap)

    # ---- start: the pipe, when the instruction starts (reads happen now)

    def start(self, instr: Instr) -> list | None:
        """Read the operands as memory holds them now and run the semantics; the results wait for
        :meth:`commit` (None: there is nothing to commit, see Pipe.BoundOp). One frame, not a
        wrapper around a compute step: it runs for every instruction of every pipe."""
        try:
            reads = instr.reads
            if reads is not self.reads_known and (instr.key is self.off_chip_reads
                                                  or self.memory.note_reads(reads, instr)):
                self.reads_known = reads  # known written (or off chip): noting them again would change nothing
            if not self.data:  # timing only: nothing to compute, only the faults shapes alone decide
                key = instr.key
                if key is not self.checked_key:  # (the same key object as the last start's, nearly always)
                    if key not in self.shapes_checked:
                        self._check_shapes(instr.operands, key)
                    self.checked_key = key
                writes = instr.writes
                if writes is self.writes_known or key is self.off_chip_writes or self.memory.writes_noted(writes):
                    self.writes_known = writes
                    return None  # nothing to commit
                return []
            snaps = instr.operands
            n_ins = self.n_ins
            if self.prepare is not None:  # read the ins, then run what was prepared for their shapes
                values = _values(snaps, n_ins)
                res = self._plan(snaps)(values)
            else:
                res = self.semantics([_arg(s) for s in snaps[:n_ins]], [_out_arg(s) for s in snaps[n_ins:]],
                                     self.attrs)
            for r in res:
                if r is not None and isinstance(r, np.ndarray) and not r.flags.owndata:
                    # results must not alias memory that may change before commit
                    return [_owned(r) for r in res]
            return res
        except OperandError as e:  # the semantics said why: at this op
            e.message, e.loc = f"{self.op.name}: {e.message}", e.loc or self.op.loc
            raise
        except PtoError as e:  # e.g. a semantics-level BoundsError: give it this op's location
            if e.loc is None:
                e.loc = self.op.loc
            raise
        except MemoryError:
            raise ResourceError(f"{self.op.name}: out of memory while computing the result", self.op.loc) from None
        except Exception as e:
            raise InternalError(e, self.op.name, self.op.loc) from e

    def _plan(self, snaps: list) -> Callable:
        """The run step of the semantics prepared for these operands' kinds, dtypes and shapes:
        prepared the first time they are seen; the last start's is reused while its operands are
        the same or of the same shapes (a loop over in-place compute, a window moved along its
        tensor)."""
        last = self.last_plan
        if last is not None and (all(map(is_, snaps, last[0])) or all(map(_same_shape, snaps, last[0]))):
            return last[1]
        key = tuple(map(_shape_key, snaps))
        plans = self.plans
        plan = plans.get(key)
        if plan is None:
            if len(plans) >= _SHAPES_REMEMBERED:
                plans.clear()
            n = self.n_ins
            plan = plans[key] = self.prepare([_meta_arg(s) for s in snaps[:n]], [_meta_arg(s) for s in snaps[n:]],
                                             self.attrs)
        self.last_plan = (snaps, plan)
        return plan

    def _check_shapes(self, snaps: list, key: tuple) -> None:
        """Timing-only runs still find the faults that need no data (a window leaving its source,
        a result that does not fit its tile): the semantics run once per operand shapes and index
        operands (``key``: the issue's timing key, with the index operands' values) on zero
        stand-ins (calloc'd, so untouched pages cost nothing)."""
        if len(self.shapes_checked) >= _SHAPES_REMEMBERED:  # bounded: a loop of offsets re-checks
            self.shapes_checked.clear()
        n = self.n_ins
        for s in snaps:  # a window the DMA cannot move (with data: found where it is read or written)
            if s.kind == VIEW:
                s.obj.check_strides()
        with QUIET:
            try:
                results = self.semantics([_standin(s) for s in snaps[:n]], [_standin(s) for s in snaps[n:]],
                                         self.attrs)
            except UndefinedResultError:  # the stand-ins' zeros, not the kernel's data: nothing known
                results = []
        for s, r in zip(snaps[n:], results, strict=False):
            if s.kind == TILE and isinstance(r, np.ndarray) and r.ndim == 2:
                try:
                    s.obj.check_fits(r.shape)
                except ValueError as e:
                    raise self._unfit(e) from None
        self.shapes_checked.add(key)

    # ---- commit: the commit queue, at completion

    def commit(self, instr: Instr, results: list) -> None:
        """Write the results into the out operands."""
        try:
            if results:
                outs = instr.operands[self.n_ins:]
                for s, r in zip(outs, results, strict=False):
                    if r is not None:
                        try:
                            s.obj.write(r)
                        except ValueError as e:  # Tile.write: the result does not fit the tile
                            raise self._unfit(e) from None
            self.memory.note_writes(instr.writes)
        except PtoError as e:
            if e.loc is None:
                e.loc = self.op.loc
            raise
        except Exception as e:
            raise InternalError(e, self.op.name, self.op.loc) from e

    def _unfit(self, e: ValueError) -> KernelFault:
        return KernelFault(f"{self.op.name}: {e}", self.op.loc)


def _slot_copier(cls: type) -> Callable[[Any], Any]:
    """A function making a shallow copy of an instance of the slotted class ``cls``: one attribute
    copy per slot, written out as ``dataclasses`` writes ``__init__``. ``copy.copy`` goes through
    ``__reduce_ex__``, and a loop of ``setattr`` over the slots runs about 12 bytecodes per slot
    (600 per TileOpBinding) where this runs 4: about 0.25 M machine instructions less per
    timing-only run of the stream kernel (8 tile ops; callgrind), more with more cores."""
    lines = [f"    other.{name} = self.{name}" for name in cls.__slots__]
    source = "def copy(self):\n    other = new(cls)\n" + "\n".join(lines) + "\n    return other\n"
    namespace = {"new": object.__new__, "cls": cls}
    exec(source, namespace)  # noqa: S102 - the source is built from the class's own slot names
    return namespace["copy"]


_copy_binding = _slot_copier(TileOpBinding)

KIND_NAME = {TILE: "tile", VIEW: "view", SCALAR: "scalar"}


def _align(specs: tuple, n: int, scratch_last: bool = False) -> tuple:
    """The operand specs that ``n`` written operands fill: optional ones are dropped, last first,
    until the counts agree (``tsels ins(%m, %a, %s)`` leaves out its optional tmp). With
    ``scratch_last`` (the spec's syntax) a trailing scratch operand is dropped last: when written it
    is the last operand (``tmrgsort ins(%s0, %s1, %tmp)`` leaves out s2 and s3, §4.11)."""
    specs = list(specs)
    keep_last = scratch_last and bool(specs) and specs[-1].optional and specs[-1].is_scratch
    for sparing_last in ((True, False) if keep_last else (False,)):
        for k in range(len(specs) - 1, -1, -1):
            if len(specs) <= n:
                break
            if specs[k].optional and not (sparing_last and k == len(specs) - 1):
                del specs[k]
    return tuple(specs)


def _check_kinds(op: A.Op, specs: tuple, snaps: list, names: list, role: str, loc: Loc) -> None:
    """Each operand must be of a kind (tile / view / scalar) and in a location the spec allows."""
    for k, (s, name) in enumerate(zip(snaps, names, strict=False)):
        if k >= len(specs):
            return
        spec = specs[k]
        kinds = {"index": "scalar", "handle": None}
        allowed = {kinds.get(x, x) for x in spec.kinds}
        got = KIND_NAME[s.kind]
        if got not in allowed and None not in allowed:
            raise VerifyError(f"{op.name}: {role} operand {k} ({name}) must be a "
                              f"{' or '.join(sorted(a for a in allowed if a))}, got a {got}", loc)
        if s.kind != SCALAR and spec.locs and s.loc not in spec.locs:
            raise VerifyError(f"{op.name}: {role} operand {k} ({name}) is in {s.loc}; this op takes "
                              f"{' or '.join(spec.locs)} there", loc)


def _run_on_scalar(su: ScalarUnit, instr: Instr):
    """A tile op on PIPE_S (e.g. tscatter on A2/A3): the scalar unit executes it itself, in program
    order: reads at its cycle, its writes land before the scalar unit goes on."""
    core = su.core
    su.charge(su.issue_cost)
    yield from su.sync_time()
    now = int(core.env.now)
    core.commits.flush(now)
    instr.issue = instr.start = su.pending_start = now
    results = instr.bound.start(instr)
    if instr.latency:
        yield core.env.timeout(instr.latency)
    su.pending_start = None
    instr.bound.commit(instr, results)
    instr.end = now + instr.occupancy
    instr.done = now + instr.latency
    su.own_busy += instr.occupancy
    su.resume_at_now()
    core.record_on_scalar(instr)


def _cmp_mode(attrs: dict) -> str:
    mode = attrs.get("cmpMode", "eq")
    return str(getattr(mode, "value", mode)).lower()


def _check_declared_types(op: A.Op, in_snap: list, in_types: list, out_snap: list, out_types: list,
                          loc) -> None:
    """The tile types written at the use must describe the tile the SSA value holds."""
    for snaps, types in ((in_snap, in_types), (out_snap, out_types)):
        for s, t in zip(snaps, types, strict=False):
            if s.kind != TILE or not isinstance(t, A.TileBufType):
                continue
            have = s.obj.type
            if (t.loc, t.dtype, t.rows, t.cols) != (have.loc, have.dtype, have.rows, have.cols):
                raise VerifyError(f"{op.name}: {s.obj.name} is written here as {t.loc} {t.rows}x{t.cols}x{t.dtype} "
                                  f"but holds a {have.loc} {have.rows}x{have.cols}x{have.dtype} tile", loc)


def _check_same_dtype(op: A.Op, snaps: list, loc) -> None:
    tiles = [s for s in snaps if s.kind == TILE]
    kinds = {s.dtype for s in tiles}
    if len(kinds) > 1:
        listing = ", ".join(f"{s.obj.name}: {s.dtype}" for s in tiles)
        raise VerifyError(f"{op.name}: tile operands must share one element type ({listing})", loc)


def _check_float_scalar_on_int_tiles(op: A.Op, snaps: list, loc) -> None:
    """A float scalar combined with integer tiles only (``tands %t, %f : i32 tile, f32``) would be
    truncated to the tile's type; integer tiles take integer scalars (pto-text-format §4.4)."""
    tiles = [s.dtype for s in snaps if s.kind == TILE]
    if tiles and not any(is_float(d) for d in tiles):
        for s in snaps:
            if s.kind == SCALAR and s.dtype and is_float(s.dtype):
                raise VerifyError(f"{op.name}: the scalar operand is {s.dtype} but the tiles are {tiles[0]}; "
                                  f"an integer tile op takes an integer scalar (convert with arith.fptosi)", loc)


def _check_dtype_tuples(op: A.Op, tuples, in_specs, in_snap: list, out_specs, out_snap: list, loc) -> None:
    """Operands whose legal dtypes depend on each other (matmul's a, b, c) have a listed combination."""
    by_name = {s.name: snap for specs, snaps in ((in_specs, in_snap), (out_specs, out_snap))
               for s, snap in zip(specs, snaps, strict=False)}
    present = [(n, by_name[n].dtype) for n in tuples.operands if n in by_name and by_name[n].kind == TILE]
    names = [n for n, _ in present]
    have = tuple(d for _, d in present)
    idx = [tuples.operands.index(n) for n in names]
    if any(tuple(row[i] for i in idx) == have for row in tuples.legal):
        return
    legal = "; ".join(f"({', '.join(row[i] for i in idx)})" for row in tuples.legal)
    raise VerifyError(f"{op.name}: ({', '.join(names)}) have element types ({', '.join(have)}); "
                      f"legal: {legal}", loc)


def _check_nd(op: A.Op, snaps: list, names: tuple, loc) -> None:
    """Elementwise ops read and write ND tiles (row_major, none_box; pto-text-format §4.3)."""
    for name, s in zip(names, snaps, strict=False):
        if s.kind == TILE and (s.obj.type.blayout != "row_major" or s.obj.type.slayout != "none_box"):
            raise VerifyError(f"{op.name}: {name} is {s.obj.type.blayout}/{s.obj.type.slayout}; this op takes ND "
                              f"tiles (blayout=row_major, slayout=none_box)", loc)


def _known_valid(s: OperandSnap) -> bool:
    """A tile whose valid shape is known: at issue always, before running only when written."""
    if not isinstance(s.obj, StaticTile):
        return True
    return s.obj.type.v_row is not None and s.obj.type.v_col is not None


def _check_same_valid(op: A.Op, ins: list, outs: list, loc) -> None:
    """The sources' valid regions equal the destination's (pto-text-format §4.3: "the reference
    model requires the sources' valid regions to equal dst's")."""
    if not outs or outs[0].kind != TILE or not _known_valid(outs[0]):
        return
    d = outs[0]
    for s in ins:
        if s.kind == TILE and _known_valid(s) and (s.vrow, s.vcol) != (d.vrow, d.vcol):
            raise VerifyError(f"{op.name}: source valid region {s.vrow}x{s.vcol} differs from the destination's "
                              f"{d.vrow}x{d.vcol} (elementwise ops need equal valid regions)", loc)


def _check_sources_match(op: A.Op, ins: list, outs: list, axis: int, loc) -> None:
    """Every source has a row for each of the destination's valid rows (axis 0: trowexpand<op>,
    whose per-row operand gives row i's value to row i of dst) or a column for each valid column
    (axis 1: tcolexpand<op>), pto-text-format §4.7. A per-row column of 8 rows for a 16-row
    destination was a run-time fault saying 'tile of shape 8x1 has no 16x1 region', though the types
    decide it. (A source whose valid region is shorter but whose storage has the rows is read there,
    as the compiler's broadcast of a ragged column onto a whole tile does.)"""
    if not outs or outs[0].kind != TILE or not _known_valid(outs[0]):
        return
    d = outs[0]
    what, want = ("rows", d.vrow) if axis == 0 else ("columns", d.vcol)
    for s in ins:
        have = (s.obj.rows if axis == 0 else s.obj.cols) if s.kind == TILE else want
        if have < want:
            raise VerifyError(f"{op.name}: {s.obj.name} has {have} {what} but the destination's valid region has "
                              f"{want}; each source gives dst's {what} their values", loc)


def _check_concat_fits(op: A.Op, ins: list, outs: list, loc) -> None:
    """tconcat writes the sources' valid columns side by side into each row of dst (pto-text-format
    §4.11): dst needs as many columns as they have together. Decided by the types when every valid
    region is known, so refused before running (it was a fault at the op: 'result 16x128 does not
    fit tile 16x64')."""
    tiles = [s for s in ins if s.kind == TILE]
    if not outs or outs[0].kind != TILE or not all(_known_valid(s) for s in tiles):
        return
    need = sum(s.vcol for s in tiles)
    if need > outs[0].obj.cols:
        widths = " + ".join(str(s.vcol) for s in tiles)
        raise VerifyError(f"{op.name}: the sources' valid columns ({widths} = {need}) do not fit the "
                          f"{outs[0].obj.cols} columns of {outs[0].obj.name}", loc)


def _check_distinct_storage(op: A.Op, ins: list, outs: list, where: str, loc) -> None:
    """The destination shares no storage with a data source (pto-text-format §4.5: A3's ``trecip``
    forbids src == dst storage). Before running, a tile written both as a source and as dst (one SSA
    value) is refused; at issue, tiles whose bytes overlap in one buffer (two allocations at one
    address) are."""
    if not outs or outs[0].kind != TILE:
        return
    dst = outs[0].obj
    for s in ins:
        if s.kind != TILE:
            continue
        src = s.obj
        if isinstance(dst, StaticTile):
            shared = isinstance(src, StaticTile) and src.name == dst.name
        else:
            shared = (not isinstance(src, StaticTile) and src.buffer is dst.buffer
                      and src.addr < dst.addr + dst.nbytes and dst.addr < src.addr + src.nbytes)
        if shared:
            raise VerifyError(f"{op.name}{where}: the source and the destination share storage (written in "
                              f"place), which {'this target' if where else 'the op'} forbids: write the result to "
                              f"another tile", loc)


def _check_whole_blocks(op: A.Op, src: OperandSnap, loc) -> None:
    """tsort32 without its tmp tile sorts whole 32-element blocks of each row (pto-text-format
    §4.11: "Without tmp src.VC % 32 == 0"; with tmp the tail block is padded with -inf): decided
    by the types when src's valid columns are known (it was a fault at the op)."""
    if src.kind == TILE and _known_valid(src) and src.vcol % 32:
        raise VerifyError(f"{op.name}: without a tmp tile the valid columns of {src.obj.name} must be a multiple "
                          f"of 32, not {src.vcol} (pass a tmp tile: the tail block is then padded with -inf)", loc)


def _check_one_src_matches_dst(op: A.Op, ins: list, outs: list, machine: str, loc) -> None:
    """At least one source's valid region equals the destination's (pto-text-format §4.3, tpart* on
    A3): the other may be smaller. Checked when every valid region is known."""
    tiles = [s for s in ins if s.kind == TILE]
    if not outs or outs[0].kind != TILE or not tiles or not all(_known_valid(s) for s in [*tiles, outs[0]]):
        return
    d = outs[0]
    if all((s.vrow, s.vcol) != (d.vrow, d.vcol) for s in tiles):
        have = " and ".join(f"{s.vrow}x{s.vcol}" for s in tiles)
        raise VerifyError(f"{op.name} on {machine}: one source's valid region must equal the destination's "
                          f"{d.vrow}x{d.vcol}; the sources' are {have}", loc)


def _tile_type(s: OperandSnap | None) -> A.TileBufType | None:
    return s.obj.type if s is not None and s.kind == TILE else None


def _nd_src(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    t = _tile_type(src)
    if t is not None and (t.blayout != "row_major" or t.slayout != "none_box"):
        return f"the source is {t.blayout}/{t.slayout}; this op reads an ND tile (blayout=row_major, slayout=none_box)"
    return None


def _both_tiles(src: OperandSnap | None, dst: OperandSnap) -> bool:
    return src is not None and src.kind == TILE and dst.kind == TILE


def _rows_match(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    if _both_tiles(src, dst) and _known_valid(src) and _known_valid(dst) and src.vrow != dst.vrow:
        return f"the source has {src.vrow} valid rows but the destination {dst.vrow} (src.VR == dst.VR)"
    return None


def _cols_match(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    if _both_tiles(src, dst) and _known_valid(src) and _known_valid(dst) and src.vcol != dst.vcol:
        return f"the source has {src.vcol} valid columns but the destination {dst.vcol} (src.VC == dst.VC)"
    return None


def _same_shape(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    if _both_tiles(src, dst) and (src.obj.rows, src.obj.cols) != (dst.obj.rows, dst.obj.cols):
        return (f"the source is {src.obj.rows}x{src.obj.cols} but the destination {dst.obj.rows}x{dst.obj.cols} "
                f"(same rows/cols)")
    return None


def _dst_covers_src(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    if _both_tiles(src, dst) and (src.obj.rows > dst.obj.rows or src.obj.cols > dst.obj.cols):
        return (f"the source is {src.obj.rows}x{src.obj.cols} but the destination only {dst.obj.rows}x"
                f"{dst.obj.cols} (dst rows/cols >= the source's)")
    return None


def _pad_dst(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    if dst.kind == TILE and dst.obj.type.pad == 0:
        return "the destination has pad=0 (null); this op fills with dst's pad value, which must be 1, 2 or 3"
    return None


def _one_row_dst(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    if dst.kind == TILE and dst.obj.rows != 1:
        return f"the destination is {dst.obj.rows}x{dst.obj.cols}; this op writes a one-row tile"
    return None


def _row_major_dst(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    if dst.kind == TILE and dst.obj.type.blayout != "row_major":
        return f"the destination is {dst.obj.type.blayout}; this op writes a row-major tile"
    return None


def _same_esize(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    if src is not None and itemsize(src.dtype) != itemsize(dst.dtype):
        return (f"the source's elements are {src.dtype} ({itemsize(src.dtype)} bytes) but the destination's "
                f"{dst.dtype} ({itemsize(dst.dtype)} bytes); this op needs equal element sizes")
    return None


def _relu_needs_acc(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    mode = attrs.get("reluPreMode")
    if mode is not None and str(getattr(mode, "value", mode)).lower() != "no_relu" and src is not None \
            and src.loc != "acc":
        return f"reluPreMode needs an acc source, not {src.loc}"
    return None


def _copy_keeps_dtype(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    """Only the fixpipe (a move out of acc) and the bias-table load convert elements; MTE1
    (mat -> left/right/scaling) and the vector unit (vec -> vec) copy them as they are, so a move
    that changes the element type there would feed the next op bytes of another type (pto-text-format
    §4.2 tmov: the "convert" of its semantics happens on the acc paths; tstore lists the acc
    conversions)."""
    if _both_tiles(src, dst) and src.loc != "acc" and dst.loc != "bias" and src.dtype != dst.dtype:
        return (f"{src.loc} {src.dtype} -> {dst.loc} {dst.dtype}: a move out of {src.loc} copies elements "
                f"unchanged (only a move out of acc converts); give both tiles one element type")
    return None


def _store_keeps_esize(src: OperandSnap | None, dst: OperandSnap, attrs: dict) -> str | None:
    """A store from vec or mat goes through MTE3, which copies bytes: elements of another size in GM
    would need a conversion only the fixpipe makes (pto-text-format §4.2 tstore: "acc sources
    convert to the GM dtype"). An f32 tile stored to an f16 view ran converted, as if from acc."""
    if src is not None and src.kind == TILE and src.loc != "acc" and itemsize(src.dtype) != itemsize(dst.dtype):
        return (f"a {src.loc} {src.dtype} tile stored to a {dst.dtype} window: a store from {src.loc} copies "
                f"elements unchanged (only an acc source converts to the GM type); convert it first with "
                f"pto.tcvt")
    return None


# Constraints of the instruction specs (ptoisa.isa.loader.CONSTRAINTS) on the first data source
# and the destination: a message saying what is wrong, or None. (ptoisa.isa.loader.CONSTRAINTS), each on the first
# data source and the destination: a message saying what is wrong, or None.
_SHAPE_RULES: dict[str, Callable] = {
    "nd_src": _nd_src, "rows_match": _rows_match, "cols_match": _cols_match, "same_shape": _same_shape,
    "dst_covers_src": _dst_covers_src,
    "pad_dst": _pad_dst, "one_row_dst": _one_row_dst, "row_major_dst": _row_major_dst, "same_esize": _same_esize,
    "relu_needs_acc": _relu_needs_acc, "copy_keeps_dtype": _copy_keeps_dtype, "store_keeps_esize": _store_keeps_esize,
}


def _check_conversion(op: A.Op, conversions: dict, in_snap: list, out_snap: list, machine: str, loc) -> None:
    """A converting op (tcvt) converts only the dtype pairs its spec lists for the target."""
    src = next((s for s in in_snap if s.kind != SCALAR), None)
    if src is None or not out_snap:
        return
    legal = conversions.get(src.dtype, ())
    if out_snap[0].dtype not in legal:
        to = ", ".join(legal) if legal else "nothing"
        raise VerifyError(f"{op.name}: {machine} does not convert {src.dtype} to {out_snap[0].dtype} "
                          f"({src.dtype} converts to {to})", loc)


def _check_matmul_shapes(op: A.Op, in_snap: list, out_snap: list, loc) -> None:
    """Static shapes of a cube op: a.rows == c.rows, a.cols == b.rows, b.cols == c.cols (§4.8)."""
    left = next((s.obj for s in in_snap if s.kind == TILE and s.loc == "left"), None)
    right = next((s.obj for s in in_snap if s.kind == TILE and s.loc == "right"), None)
    acc = next((s.obj for s in out_snap if s.kind == TILE and s.loc == "acc"), None)
    if left is None or right is None:
        return
    if left.cols != right.rows:
        raise VerifyError(f"{op.name}: the left tile {left.name} is {left.rows}x{left.cols} but the right tile "
                          f"{right.name} is {right.rows}x{right.cols} (K must agree)", loc)
    if acc is not None and (acc.rows != left.rows or acc.cols != right.cols):
        raise VerifyError(f"{op.name}: the result {acc.name} is {acc.rows}x{acc.cols} but "
                          f"{left.rows}x{left.cols} @ {right.rows}x{right.cols} is {left.rows}x{right.cols}",
                          loc)


def _check_windows(op: A.Op, snaps: list, loc) -> None:
    """A GM window loaded into or stored from a tile cannot hold more elements than the tile."""
    tile = next((s.obj for s in snaps if s.kind == TILE), None)
    if tile is None:
        return
    for s in snaps:
        if s.kind == VIEW and s.vrow * s.vcol > tile.rows * tile.cols:
            raise BoundsError(f"{op.name}: the GM window is {s.vrow}x{s.vcol} but the tile holds only "
                              f"{tile.rows}x{tile.cols} elements", loc)


def _snap(v, scalar_type: str | None, loc: Loc, op: A.Op) -> OperandSnap:
    """The operand as it is at issue time."""
    if isinstance(v, Tile):
        return OperandSnap(TILE, v, v.vrow, v.vcol, v.type.dtype, v.loc)
    if isinstance(v, PartitionView):
        if v.gm.store is None and v.gm.size == 0:
            raise BoundsError(f"view over {v.gm.name} has no data", loc)
        return OperandSnap(VIEW, v, v.rows, v.cols, v.gm.dtype_name, "gm")
    if isinstance(v, (int, float, bool, np.generic)):
        t = scalar_type or ("f32" if isinstance(v, float) else "i32")
        return OperandSnap(SCALAR, v, 0, 0, t, None)
    if isinstance(v, np.ndarray) and v.ndim == 1:  # a vector<4xi16>: tmrgsort's executed-count out (§2)
        return OperandSnap(SCALAR, v, 0, 0, scalar_type or f"i{8 * v.dtype.itemsize}", None)
    unbound = getattr(v, "unbound_message", None)  # a declare_tile handle no tpop has bound yet
    if unbound is not None:
        raise KernelFault(f"{op.name}: {unbound}", loc)
    raise VerifyError(f"{op.name}: operand of unexpected kind {type(v).__name__}", loc)


@dataclass(frozen=True, slots=True)
class StaticTile:
    """What the checks read of a tile, known from its type before anything runs."""

    type: A.TileBufType
    name: str
    rows: int
    cols: int


def _static_snap(name, held, declared, scalar_type: str | None) -> OperandSnap | None:
    """The snapshot an operand will have at issue, as far as its types tell; None if they do not."""
    if isinstance(name, int):
        return OperandSnap(SCALAR, name, 0, 0, scalar_type or "i32", None)
    t = held if held is not None else declared
    if isinstance(t, A.TileBufType):
        vrow = t.v_row if t.v_row is not None else t.rows
        vcol = t.v_col if t.v_col is not None else t.cols
        return OperandSnap(TILE, StaticTile(t, str(name), t.rows, t.cols), vrow, vcol, t.dtype, t.loc)
    if isinstance(t, (A.PartitionViewType, A.MemRefType)) and getattr(t, "space", "gm") == "gm":
        if not t.shape or None in t.shape:
            return None
        rows = 1
        for d in t.shape[:-1]:
            rows *= d
        return OperandSnap(VIEW, None, rows, t.shape[-1], t.elem, "gm")
    if isinstance(t, A.ScalarType):
        return OperandSnap(SCALAR, None, 0, 0, scalar_type or ("f32" if t.name.startswith(("f", "bf"))
                                                              else "i32"), None)
    return None


_SHAPES_REMEMBERED = 1024


def _standin(s: OperandSnap) -> Arg:
    """A timing-only operand: the shape and dtype of the real one, zeros for data."""
    kind, obj = s.kind, s.obj
    if kind == TILE:
        return Arg("tile", s.dtype, obj.dtype, np.zeros((obj.rows, obj.cols), obj.dtype), obj.rows, obj.cols,
                   s.vrow, s.vcol, obj.type.pad, s.loc)
    if kind == VIEW:
        dt = np_dtype(s.dtype)
        return Arg("view", s.dtype, dt, np.zeros((obj.rows, obj.cols), dt), obj.rows, obj.cols, obj.rows, obj.cols,
                   0, "gm")
    return _arg(s)


def _owned(r):
    """A result that owns its memory (a copy of a view; anything else as it is)."""
    if r is not None and isinstance(r, np.ndarray) and not r.flags.owndata:
        return r.copy()
    return r


def _arg(s: OperandSnap) -> Arg:
    kind, obj = s.kind, s.obj
    if kind == TILE:
        value = obj.logical()  # an unboxed tile: the same view while its buffer array is the same
        kept = s.arg
        if kept is not None and kept.value is value:
            return kept
        arg = s.arg = Arg("tile", s.dtype, obj.dtype, value, obj.rows, obj.cols, s.vrow, s.vcol, obj.type.pad,
                          s.loc)
        return arg
    if kind == VIEW:
        return Arg("view", s.dtype, obj.gm.dtype, obj.read(), obj.rows, obj.cols, obj.rows, obj.cols, 0, "gm")
    kept = s.arg
    if kept is None:
        kept = s.arg = Arg("scalar", s.dtype, np_dtype(s.dtype), obj, 0, 0, 0, 0, 0, "")
    return kept


def _values(snaps: list, n: int) -> list:
    """The first ``n`` operands' values as a semantics reads them (:func:`_arg`'s ``value``)."""
    values = []
    for s in snaps[:n]:
        kind = s.kind
        values.append(s.obj.logical() if kind == TILE else s.obj.read() if kind == VIEW else s.obj)
    return values


def _meta_arg(s: OperandSnap) -> Arg:
    """What a semantics' preparation may look at of an operand: its :func:`_arg` without a value."""
    kind, obj = s.kind, s.obj
    if kind == TILE:
        return Arg("tile", s.dtype, obj.dtype, None, obj.rows, obj.cols, s.vrow, s.vcol, obj.type.pad, s.loc)
    if kind == VIEW:
        return Arg("view", s.dtype, obj.gm.dtype, None, obj.rows, obj.cols, obj.rows, obj.cols, 0, "gm")
    return Arg("scalar", s.dtype, np_dtype(s.dtype), None, 0, 0, 0, 0, 0, "")


def _shape_key(s: OperandSnap) -> tuple:
    """Everything of an operand that :func:`_meta_arg` reads (a tile's type gives its shape, pad and
    location), as a key of prepared run steps."""
    kind, obj = s.kind, s.obj
    if kind == TILE:
        return (kind, s.dtype, obj.type, obj.dtype, s.vrow, s.vcol)
    if kind == VIEW:
        return (kind, s.dtype, obj.rows, obj.cols, obj.gm.dtype)
    return (kind, s.dtype)


def _same_shape(s: OperandSnap, last: OperandSnap) -> bool:
    """Whether ``s`` has the :func:`_shape_key` of ``last`` (the same snapshot has, nearly always)."""
    if s is last:
        return True
    kind, obj, was = s.kind, s.obj, last.obj
    if kind != last.kind or s.dtype != last.dtype:
        return False
    if kind == TILE:
        return (obj.type is was.type and obj.dtype is was.dtype and s.vrow == last.vrow
                and s.vcol == last.vcol)
    if kind == VIEW:
        return obj.rows == was.rows and obj.cols == was.cols and obj.gm.dtype is was.gm.dtype
    return True


def _out_arg(s: OperandSnap) -> Arg:
    """An out operand: a GM window's current contents are read only if the semantics asks for them
    (a tstore replaces them without looking, and reading would draw their stand-in numbers)."""
    if s.kind != VIEW:
        return _arg(s)
    obj = s.obj
    return LazyArg(obj.read, "view", s.dtype, obj.gm.dtype, obj.rows, obj.cols, obj.rows, obj.cols, 0, "gm")


def _range(s: OperandSnap) -> tuple:
    """(buffer, lo byte, hi byte, footprint): GM windows also carry (base, sizes, strides) in
    elements so that overlap can be decided exactly, not by bounding range."""
    kind, obj = s.kind, s.obj
    if kind == TILE:
        return (obj.buffer.spec.name, obj.addr, obj.addr + obj.nbytes, None)
    lo, hi = obj.byte_range()
    return (obj.gm.name, lo, hi, (obj.base, obj.sizes, obj.strides))


def describe_operands(instr: Instr) -> list[tuple]:
    """(name, buffer, address or value, bytes) per operand of a tile instruction, for the trace."""
    if instr.bound is None:
        return []
    return [_describe(n, s) for n, s in zip(instr.bound.names, instr.operands, strict=False)]


def _describe(name: str, s: OperandSnap) -> tuple:
    kind, obj = s.kind, s.obj
    if kind == TILE:
        return (str(name), obj.buffer.spec.name, obj.addr, obj.nbytes)
    if kind == VIEW:
        lo, hi = obj.byte_range()
        return (str(name), obj.gm.name, lo, hi - lo)
    return (str(name), "scalar", obj, 0)


def _formulas_read(timing, name: str) -> bool:
    """Whether any timing formula of the op reads the variable ``name``."""
    cases = [timing.case, timing.default, *timing.cases.values()]
    return any(f is not None and name in f.code.co_names
               for c in cases if c is not None for f in (c.occupancy, c.latency, c.traffic, c.bandwidth))


def _in_place(in_snap: list, out_snap: list) -> int:
    """1 when the first result tile is one of the source tiles (same buffer, same address)."""
    if not out_snap or out_snap[0].kind != TILE:
        return 0
    out = out_snap[0].obj
    for s in in_snap:
        if s.kind == TILE and s.obj.addr == out.addr and s.obj.buffer is out.buffer:
            return 1
    return 0


def dma_geometry(sizes: tuple, strides: tuple) -> tuple[int, int, int]:
    """(pieces, bursts, elements per burst) of a transfer over a GM window.

    pieces: the A2/A3 TLOAD/TSTORE issue one DMA per element of the dimensions before the last two
    (pto-isa ``TLoad.hpp`` loops over the outer dimensions of its 5-D view). bursts: the
    contiguous runs of GM the window is made of; the last two dimensions merge into one run when
    the rows lie back to back."""
    total = 1
    for z in sizes:
        total *= z
    if total == 0:
        return 0, 0, 0
    pieces = 1
    for z in sizes[:-2]:
        pieces *= z
    inner = list(zip(sizes[-2:], strides[-2:], strict=True))
    if len(inner) == 2 and inner[0][1] == 1 and inner[0][0] > 1:  # column-major (DN) window
        inner.reverse()
    run = 1
    for z, st in reversed(inner):  # grow the run outwards while each dimension continues it
        if z != 1 and st != run:
            break
        run *= z
    return pieces, total // run, run


def _timing_vars(dom, in_snap, out_snap) -> dict:
    if dom is None:
        rows = cols = 0
        esize = 0
    else:
        rows, cols = dom.vrow, dom.vcol
        esize = itemsize(dom.dtype)
        if dom.kind == TILE and dom.obj.type.blayout == "col_major" and dom.obj.type.slayout == "none_box":
            rows, cols = cols, rows  # DN: the lines the vector unit repeats over are the columns
    elems = rows * cols
    src = next((s for s in in_snap if s.kind != SCALAR), None)
    dst = out_snap[0] if out_snap else None
    v = {
        "elems": elems, "rows": rows, "cols": cols, "esize": esize, "bytes": elems * esize,
        "src_esize": itemsize(src.dtype) if src else esize, "dst_esize": itemsize(dst.dtype) if dst else esize,
        "M": 0, "N": 0, "K": 0, "a_esize": 0, "row_bytes": cols * esize,
        "pieces": 1, "bursts": 1, "burst_bytes": elems * esize, "in_place": _in_place(in_snap, out_snap),
    }
    view = next((s for s in (*in_snap, *out_snap) if s.kind == VIEW), None)
    if view is not None:
        pieces, bursts, run = dma_geometry(view.obj.sizes, view.obj.strides)
        v["pieces"], v["bursts"], v["burst_bytes"] = pieces, bursts, run * itemsize(view.dtype)
    left = next((s for s in in_snap if s.kind == TILE and s.loc == "left"), None)
    right = next((s for s in in_snap if s.kind == TILE and s.loc == "right"), None)
    if left is not None:
        v["M"], v["K"], v["a_esize"] = left.vrow, left.vcol, itemsize(left.dtype)
        if right is not None:
            v["N"] = right.vcol
    return v
