"""The `.pto` side of the sync planner: the model of a function written in the contract's AST.

For each op: its pipe, from the ISA records (the instruction's pipe rule, keyed by its operands'
locations; an op the records do not describe, or whose rule has no pipe for those locations, is a
*fence*: a full barrier before and after it), and the memory it reads and writes. Memory is
described by *atoms*:

* :class:`TileAtom` - on-chip storage in one ``loc``: a byte range (``alloc_tile addr = const``),
  a whole private allocation (``alloc_tile`` without ``addr``: level 2, never aliases another
  alloc) or ``unknown`` (anything in that loc: function arguments, FIFO slots, addresses that are
  not constants).
* :class:`GmAtom` - a GM window over one root pointer (a pointer argument, after ``addptr`` and
  ``make_tensor_view``); different pointer arguments are different buffers. Offsets are affine
  forms over SSA leaves, so two boxes written with the same loop variables (``offsets = [%row,
  %col]`` vs ``[%row, %col1]`` with ``%col1 = %col + 64``) are disjoint within one iteration, and
  a box at ``[%row, %col]`` in iteration i is disjoint from the one of iteration i + k when the
  induction variable's growth moves it past its size (an in-place double-buffered kernel).

Anything the tracing cannot see through is treated as overlapping (correctness first).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ptoisa.errors import InputError, Loc
from ptoisa.isa.spec import ISA
from ptoisa.sync.model import OpInfo, SyncModel
from ptoisa.text import ast as A

ESIZE = {
    "f64": 8, "i64": 8, "ui64": 8, "si64": 8, "u64": 8, "index": 8,
    "f32": 4, "i32": 4, "ui32": 4, "si32": 4, "u32": 4,
    "f16": 2, "bf16": 2, "i16": 2, "ui16": 2, "si16": 2, "u16": 2,
}

# Ops that synchronise pipes inside one core. `strip_sync` removes them; `has_sync` looks for them
# together with the cross-core `sync.set`/`sync.wait` (which are kept: they pair with another core).
INTRA_SYNC_OPS = frozenset({
    "pto.set_flag", "pto.wait_flag", "pto.set_flag_dyn", "pto.wait_flag_dyn", "pto.barrier",
    "pto.barrier_sync", "pto.record_event", "pto.wait_event", "pto.get_buf", "pto.rls_buf", "pto.tsync",
})
CROSS_SYNC_OPS = frozenset({"pto.sync.set", "pto.sync.wait"})
SYNC_OPS = INTRA_SYNC_OPS | CROSS_SYNC_OPS

# Ops with no memory effect that matters for ordering (views, allocation, metadata, handles).
META_OPS = frozenset({
    "pto.make_tensor_view", "pto.partition_view", "pto.subview", "pto.alloc_tile", "pto.declare_tile",
    "pto.treshape", "pto.bitcast", "pto.subset", "pto.set_validshape", "pto.get_tensor_view_dim",
    "pto.addptr", "pto.bind_tile", "pto.pointer_cast", "pto.declare_tile_memref", "pto.get_block_idx",
    "pto.get_block_num", "pto.get_subblock_idx", "pto.get_subblock_num", "pto.declare_eventid_array",
    "pto.eventid_array_get", "pto.eventid_array_set", "pto.reserve_buffer", "pto.import_reserved_buffer",
    "pto.set_ffts", "pto.print", "pto.trap", "pto.sync.set", "pto.sync.wait",
    "scf.yield", "scf.condition", "func.return", "memref.alloc", "memref.dealloc",
    "memref.reinterpret_cast",
})
ALIAS_OPS = frozenset({"pto.treshape", "pto.bitcast", "pto.subset", "pto.bind_tile"})
STRUCTURE = {"scf.for": "for", "scf.if": "if", "scf.while": "while",
             "scf.yield": "end", "scf.condition": "end", "func.return": "end"}


@dataclass(frozen=True, slots=True)
class TileAtom:
    loc: str  # "*" = unknown loc (overlaps every loc)
    kind: str  # "addr" | "alloc" | "unknown"
    key: int = 0  # alloc: id of the defining op
    lo: int = 0
    hi: int = 0


@dataclass(frozen=True, slots=True)
class GmAtom:
    """A GM window: ``root`` pointer (None = unknown: overlaps every GM atom); when the window is
    known, per dimension an affine offset ``(leaves, const)`` and a static size, over a tensor view
    with constant ``strides`` whose layout is injective (distinct indices, distinct elements)."""

    root: str | None
    base: tuple[tuple[str, int], ...] | None = None  # pointer offset leaves (addptr), const in base_c
    base_c: int = 0
    strides: tuple[int, ...] | None = None
    offsets: tuple[tuple[tuple[tuple[str, int], ...], int], ...] = ()
    sizes: tuple[int, ...] = ()


Atom = TileAtom | GmAtom


Affine = dict[str, int]  # leaf -> coefficient; "" is the constant term


def _injective(strides: list, shape: list) -> bool:
    """Does the strided layout map distinct indices to distinct elements? (Dims ordered by stride,
    each stride at least the span of the dims inside it; unknown inner extents: not provable.)"""
    dims = sorted(range(len(strides)), key=lambda d: -strides[d])
    if any(strides[d] < 1 for d in dims):
        return False
    for outer, inner in itertools.pairwise(dims):
        n = shape[inner] if inner < len(shape) else None
        if n is None or strides[outer] < strides[inner] * n:
            return False
    return True


def type_loc(t: A.Type | None) -> str | None:
    if isinstance(t, A.TileBufType):
        return t.loc
    if isinstance(t, (A.PartitionViewType, A.TensorViewType, A.PtrType)):
        return "gm"
    if isinstance(t, A.MemRefType):
        return "gm" if t.space == "gm" else t.space
    return None


class FunctionModel(SyncModel):
    """SSA definitions, structure (parents, loops) and op classification of one function."""

    def __init__(self, fn: A.Function, isa: ISA, effectful_callees: set[str]) -> None:
        super().__init__(fn.body, fn.name)
        self.fn = fn
        self.isa = isa
        self.effectful_callees = effectful_callees
        self.defs: dict[str, tuple] = {}
        self.def_loops: dict[str, tuple[int, ...]] = {}
        self.reads: dict[int, tuple[Atom, ...]] = {}
        self.writes: dict[int, tuple[Atom, ...]] = {}
        self._bases_cache: dict[str, tuple[str, ...]] = {}
        self._atoms_cache: dict[tuple[str, str], tuple[Atom, ...]] = {}
        self.loop_iv: dict[int, tuple[str, int | None]] = {}
        for i, name in enumerate(fn.args):
            self.defs[name] = ("arg", None, fn.body, i)
            self.def_loops[name] = ()
        self._index_defs(fn.body, ())
        for loop_id, (iv, _) in list(self.loop_iv.items()):
            self.loop_iv[loop_id] = (iv, self.const(self.ops[loop_id].operands[2]))
        for op_id, op in self.ops.items():
            info, reads, writes = self._classify(op)
            self.info[op_id] = info
            if reads:
                self.reads[op_id] = reads
            if writes:
                self.writes[op_id] = writes

    # ------------------------------------------------------------------------------- structure

    def _index_defs(self, region: A.Region, loops: tuple[int, ...]) -> None:
        for op in region.ops:
            for k, name in enumerate(op.results):
                self.defs[name] = ("op", op, k)
                self.def_loops[name] = loops
            inner = loops + (id(op),) if op.name in ("scf.for", "scf.while") else loops
            if op.name == "scf.for" and op.regions and op.regions[0].args:
                self.loop_iv[id(op)] = (op.regions[0].args[0], None)
            for r in op.regions:
                for k, name in enumerate(r.args):
                    self.defs[name] = ("arg", op, r, k)
                    self.def_loops[name] = inner
                self._index_defs(r, inner)

    def loc(self, node) -> Loc | None:
        return getattr(node, "loc", None) or (self.fn.loc if node is self.body else None)

    def callee(self, node) -> str | None:
        if getattr(node, "name", None) == "func.call":
            return str(node.attrs.get("callee", "")).lstrip("@")
        return None

    def conflict(self, p: A.Op, c: A.Op, varying: int | None) -> bool:
        """A write of one overlapping anything the other touches (RAW, WAR, WAW)."""
        pr, pw = self.reads.get(id(p), ()), self.writes.get(id(p), ())
        cr, cw = self.reads.get(id(c), ()), self.writes.get(id(c), ())
        ov = self.overlap
        return (any(ov(a, b, varying) for a in pw for b in cr)
                or any(ov(a, b, varying) for a in pr for b in cw)
                or any(ov(a, b, varying) for a in pw for b in cw))

    # ------------------------------------------------------------------------------- affine

    def affine(self, v: A.Operand, depth: int = 0) -> Affine:
        if isinstance(v, int):
            return {"": v}
        d = self.defs.get(v)
        if d is None or d[0] != "op" or depth > 32:
            return {v: 1}
        op = d[1]
        name = op.name
        if name == "arith.constant":
            val = op.attrs.get("value")
            if isinstance(val, bool) or not isinstance(val, int):
                return {v: 1}
            return {"": val}
        if name in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui",
                    "arith.trunci") and op.operands:
            return self.affine(op.operands[0], depth + 1)
        if name in ("arith.addi", "arith.subi") and len(op.operands) == 2:
            a = self.affine(op.operands[0], depth + 1)
            b = self.affine(op.operands[1], depth + 1)
            sign = 1 if name == "arith.addi" else -1
            out = dict(a)
            for k, c in b.items():
                out[k] = out.get(k, 0) + sign * c
            return {k: c for k, c in out.items() if c != 0 or k == ""}
        if name == "arith.muli" and len(op.operands) == 2:
            a = self.affine(op.operands[0], depth + 1)
            b = self.affine(op.operands[1], depth + 1)
            for x, y in ((a, b), (b, a)):
                if set(y) <= {""}:
                    k = y.get("", 0)
                    return {n: c * k for n, c in x.items()}
        return {v: 1}

    def const(self, v: A.Operand) -> int | None:
        a = self.affine(v)
        return a.get("", 0) if set(a) <= {""} else None

    def trip_count(self, loop: A.Op) -> int | None:
        lb, ub, step = (self.const(x) for x in loop.operands[:3])
        if lb is None or ub is None or step is None or step <= 0:
            return None
        return max(0, -(-(ub - lb) // step))

    # ------------------------------------------------------------------------------- aliasing

    def _yielded(self, region: A.Region, k: int) -> list[str]:
        if region.ops and region.ops[-1].name == "scf.yield" and k < len(region.ops[-1].operands):
            v = region.ops[-1].operands[k]
            return [v] if isinstance(v, str) else []
        return []

    def bases(self, name: str, seen: frozenset[str] = frozenset()) -> tuple[str, ...]:
        """The values whose storage ``name`` may be: through reshapes/subsets and the results and
        iteration arguments of ``scf.for``/``scf.if``."""
        if name in self._bases_cache:
            return self._bases_cache[name]
        if name in seen:
            return ()
        seen = seen | {name}
        d = self.defs.get(name)
        out: list[str] = [name]
        if d is not None and d[0] == "op":
            op, k = d[1], d[2]
            if op.name == "pto.tassign":
                raise InputError("pto.tassign rebinds a tile to another address; automatic synchronisation "
                                 "cannot follow it (run with --sync asis and write the sync by hand)", op.loc)
            if op.name in ALIAS_OPS and op.operands and isinstance(op.operands[0], str):
                out = list(self.bases(op.operands[0], seen))
            elif op.name == "scf.for":
                inits = op.operands[3:]
                cands = [inits[k]] if k < len(inits) and isinstance(inits[k], str) else []
                cands += self._yielded(op.regions[0], k)
                out = [b for c in cands for b in self.bases(c, seen)]
            elif op.name == "scf.if":
                cands = [y for r in op.regions for y in self._yielded(r, k)]
                out = [b for c in cands for b in self.bases(c, seen)] or [name]
        elif d is not None and d[0] == "arg" and d[1] is not None and d[1].name == "scf.for" and d[3] > 0:
            op, k = d[1], d[3] - 1
            inits = op.operands[3:]
            cands = [inits[k]] if k < len(inits) and isinstance(inits[k], str) else []
            cands += self._yielded(op.regions[0], k)
            out = [b for c in cands for b in self.bases(c, seen)]
        result = tuple(dict.fromkeys(out)) or (name,)
        if not seen - {name}:
            self._bases_cache[name] = result
        return result

    def atoms(self, v: A.Operand, t: A.Type | None) -> tuple[Atom, ...]:
        """Footprint of operand ``v`` of static type ``t`` (``()`` for scalars)."""
        loc = type_loc(t)
        if loc is None or not isinstance(v, str):
            return ()
        key = (v, loc)
        if key not in self._atoms_cache:
            atoms: list[Atom] = []
            for b in self.bases(v):
                atoms.append(self._gm_atom(b) if loc == "gm" else self._tile_atom(b, loc))
            self._atoms_cache[key] = tuple(dict.fromkeys(atoms))
        return self._atoms_cache[key]

    def _tile_atom(self, name: str, loc: str) -> TileAtom:
        d = self.defs.get(name)
        if d is not None and d[0] == "op":
            op = d[1]
            if op.name == "pto.alloc_tile" and op.result_types and isinstance(op.result_types[0], A.TileBufType):
                t = op.result_types[0]
                addr = op.groups.get("addr")
                if not addr:
                    return TileAtom(t.loc, "alloc", key=id(op))
                base = self.const(addr[0])
                if base is None:
                    return TileAtom(t.loc, "unknown")
                size = t.rows * t.cols * ESIZE.get(t.dtype, 1)
                return TileAtom(t.loc, "addr", lo=base, hi=base + max(size, 1))
            if op.name == "memref.alloc":
                return TileAtom(loc, "alloc", key=id(op))
        return TileAtom(loc, "unknown")

    def _ptr(self, name: str, depth: int = 0) -> tuple[str | None, Affine | None]:
        """Root pointer and element offset (affine) of a pointer / tensor-view value."""
        d = self.defs.get(name)
        if d is None or depth > 32:
            return None, None
        if d[0] == "arg":
            return (name, {"": 0}) if d[1] is None else (None, None)
        op = d[1]
        if op.name == "pto.addptr" and len(op.operands) >= 2 and isinstance(op.operands[0], str):
            root, base = self._ptr(op.operands[0], depth + 1)
            if base is not None:
                off = self.affine(op.operands[1])
                base = dict(base)
                for k, c in off.items():
                    base[k] = base.get(k, 0) + c
            return root, base
        if op.name == "pto.make_tensor_view" and op.operands and isinstance(op.operands[0], str):
            return self._ptr(op.operands[0], depth + 1)
        if op.name == "memref.reinterpret_cast" and op.operands and isinstance(op.operands[0], str):
            return self._ptr(op.operands[0], depth + 1)[0], None
        return None, None

    def _gm_atom(self, name: str) -> GmAtom:
        d = self.defs.get(name)
        if d is None:
            return GmAtom(None)
        if d[0] == "arg":
            return GmAtom(name if d[1] is None else None)
        op = d[1]
        if op.name in ("pto.partition_view", "pto.subview") and op.operands and isinstance(op.operands[0], str):
            tv = op.operands[0]
            root, base = self._ptr(tv)
            if root is None:
                return GmAtom(None)
            tvd = self.defs.get(tv)
            tv_op = tvd[1] if tvd is not None and tvd[0] == "op" else None
            if base is None or tv_op is None or tv_op.name != "pto.make_tensor_view":
                return GmAtom(root)
            strides = [self.const(x) for x in tv_op.groups.get("strides", [])]
            shape = [self.const(x) for x in tv_op.groups.get("shape", [])]
            offsets = op.groups.get("offsets", [])
            sizes = [self.const(x) for x in op.groups.get("sizes", [])]
            rank = len(offsets)
            if (None in strides or None in sizes or len(strides) != rank or len(sizes) != rank
                    or any(z < 1 for z in sizes) or not _injective(strides, shape)):
                return GmAtom(root)
            offs = []
            for o in offsets:
                aff = self.affine(o)
                c = aff.pop("", 0)
                offs.append((tuple(sorted((k, v) for k, v in aff.items() if v)), c))
            bc = base.get("", 0)
            bl = tuple(sorted((k, v) for k, v in base.items() if k and v))
            return GmAtom(root, bl, bc, tuple(strides), tuple(offs), tuple(sizes))  # type: ignore[arg-type]
        root, _ = self._ptr(name)
        return GmAtom(root)

    # ------------------------------------------------------------------------------- overlap

    def overlap(self, a: Atom, b: Atom, varying: int | None) -> bool:
        """May ``a`` and ``b`` share memory? ``varying`` = the loop in which the two accesses are in
        different iterations (values defined inside it differ between them), or None."""
        if isinstance(a, TileAtom) != isinstance(b, TileAtom):
            return False
        if isinstance(a, TileAtom):
            assert isinstance(b, TileAtom)
            if a.loc != b.loc and "*" not in (a.loc, b.loc):
                return False
            if a.kind == "unknown" or b.kind == "unknown":
                return True
            if a.kind == "alloc" and b.kind == "alloc":
                return a.key == b.key
            if a.kind == "addr" and b.kind == "addr":
                return a.lo < b.hi and b.lo < a.hi
            return True  # level-2 alloc next to a fixed address: the planner may put it anywhere
        assert isinstance(a, GmAtom) and isinstance(b, GmAtom)
        if a.root is None or b.root is None:
            return True
        if a.root != b.root:
            return False
        if (a.strides is None or a.strides != b.strides or a.base != b.base or a.base_c != b.base_c
                or (a.base and varying is not None)):
            return True
        return not any(self._dim_disjoint(ao, az, bo, bz, varying)
                       for ao, az, bo, bz in zip(a.offsets, a.sizes, b.offsets, b.sizes, strict=False))

    def _dim_disjoint(self, ao, az: int, bo, bz: int, varying: int | None) -> bool:
        """Are ``[o_a, o_a + az)`` and ``[o_b, o_b + bz)`` disjoint? ``a`` is the earlier access;
        with ``varying`` = loop L, ``b`` runs k >= 1 iterations of L later: leaves defined outside L
        are equal for both, L's induction variable has grown by k * step, anything else is unknown."""
        la, lb = dict(ao[0]), dict(bo[0])
        delta = bo[1] - ao[1]
        if varying == -1:
            if la or lb:
                return False
        elif varying is not None:
            iv, step = self.loop_iv.get(varying, (None, None))
            ka = la.pop(iv, 0) if iv is not None else 0
            kb = lb.pop(iv, 0) if iv is not None else 0
            if ka != kb or la != lb or any(varying in self.def_loops.get(k, ()) for k in la):
                return False
            if ka:
                if step is None:
                    return False
                grow = ka * step  # o_b - o_a = grow * k + delta, k >= 1: monotone in k
                return grow + delta >= az if grow > 0 else -(grow + delta) >= bz
        elif la != lb:
            return False
        return delta >= az or -delta >= bz

    # ------------------------------------------------------------------------------- classification

    def _classify(self, op: A.Op) -> tuple[OpInfo, tuple[Atom, ...], tuple[Atom, ...]]:
        """(kind and pipe, atoms read, atoms written) of ``op``."""
        name = op.name
        if name in STRUCTURE:
            return OpInfo(STRUCTURE[name]), (), ()
        if name == "pto.tassign":
            raise InputError("pto.tassign rebinds a tile to another address; automatic synchronisation "
                             "cannot follow it (run with --sync asis and write the sync by hand)", op.loc)
        if op.regions:
            return OpInfo("region"), (), ()
        if name == "func.call":
            callee = str(op.attrs.get("callee", "")).lstrip("@")
            return OpInfo("fence" if callee in self.effectful_callees else "meta"), (), ()
        if name in INTRA_SYNC_OPS or name in META_OPS or not name.startswith("pto."):
            return OpInfo("meta"), (), ()  # sync ops only when a caller plans without stripping
        if name in ("pto.load_scalar", "pto.store_scalar"):
            return self._classify_scalar_gm(op)
        if op.is_dps or op.ins or op.outs:
            return self._classify_dps(op, op.ins, op.outs, op.in_types, op.out_types)
        spec = self.isa.get(name) if op.generic else None
        split = spec.split_generic(list(op.operands), list(op.operand_types)) if spec is not None else None
        if split is not None:  # the generic form of a DPS op: its operands in declared order
            return self._classify_dps(op, *split)
        touches = any(type_loc(t) is not None for t in [*op.operand_types, *op.result_types])
        return OpInfo("fence" if touches else "meta"), (), ()

    def _pipe(self, op: A.Op, src_loc: str | None, dst_loc: str | None) -> str | None:
        """The op's pipe from its ISA record (None: not described, or no pipe for these locations)."""
        spec = self.isa.get(op.name)
        if spec is None:
            return None
        try:
            return spec.pipe.resolve(src_loc, dst_loc)
        except ValueError:
            return None

    def _classify_scalar_gm(self, op: A.Op) -> tuple[OpInfo, tuple[Atom, ...], tuple[Atom, ...]]:
        load = op.name == "pto.load_scalar"
        ptr = op.operands[0] if load else (op.operands[1] if len(op.operands) > 1 else None)
        atom = self._gm_atom(ptr) if isinstance(ptr, str) else GmAtom(None)
        if atom.root is None and isinstance(ptr, str):
            atom = GmAtom(self._ptr(ptr)[0])
        pipe = self._pipe(op, "gm", None)
        if pipe in (None, "none"):
            return OpInfo("fence"), (), ()
        return OpInfo("access", pipe), (atom,) if load else (), () if load else (atom,)

    def _classify_dps(self, op: A.Op, ins: list, outs: list, in_types: list,
                      out_types: list) -> tuple[OpInfo, tuple[Atom, ...], tuple[Atom, ...]]:
        spec = self.isa.get(op.name)
        src_loc = next((type_loc(t) for t in in_types if type_loc(t) is not None), None)
        dst_loc = next((type_loc(t) for t in out_types if type_loc(t) is not None), None)
        pipe = self._pipe(op, src_loc, dst_loc)
        if pipe == "none" and spec is not None and spec.is_core:
            return OpInfo("meta"), (), ()
        if pipe in (None, "none", "") or spec is None:
            return OpInfo("fence"), (), ()  # not in the ISA records: ordered by full barriers
        reads: list[Atom] = []
        writes: list[Atom] = []
        for i, (v, t) in enumerate(zip(ins, in_types, strict=False)):
            scratch = i < len(spec.ins) and spec.ins[i].is_scratch  # role: scratch, written not read
            (writes if scratch else reads).extend(self.atoms(v, t))
        for v, t in zip(outs, out_types, strict=False):
            writes.extend(self.atoms(v, t))
        attr = op.attrs.get("atomicType")
        if isinstance(attr, A.EnumAttr) and attr.value != "atomic_none":
            for v, t in zip(outs, out_types, strict=False):
                reads.extend(self.atoms(v, t))
        return OpInfo("access", pipe), tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(writes))
