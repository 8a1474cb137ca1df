"""Lowering of a tile instruction (a `pto.*` op with NumPy semantics) into an issue step.

At issue time the step resolves operands to tiles / GM windows / scalars, chooses the pipe from the
spec's rule, evaluates the timing formula and pushes an :class:`Instr`. At start the pipe calls
``compute`` (reads happen then: the semantics function sees memory as it is at that cycle); at
completion ``commit`` writes the results.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptoisa.dtypes import itemsize as _itemsize
from ptoisa.dtypes import np_dtype
from ptoisa.text import ast as A
from pyptoemu.core.memory import PartitionView, Tile
from pyptoemu.core.pipe import OP, Instr
from pyptoemu.core.scalar import _fail
from pyptoemu.errors import BoundsError, KernelFault, PtoError, UnsupportedOpError, VerifyError
from pyptoemu.isa.arg import Arg

TILE, VIEW, SCALAR = 0, 1, 2
_ESIZE: dict[str, int] = {}


def itemsize(name: str) -> int:
    """Element size by dtype name, memoised: it is asked several times per issued instruction."""
    v = _ESIZE.get(name)
    if v is None:
        v = _ESIZE[name] = _itemsize(name)
    return v


def _operand_lists(op: A.Op, spec) -> tuple[list, list, list]:
    """(ins, outs, in_types) of a DPS op; generic-form ops are mapped by position (src, dst, ...)."""
    if op.is_dps or op.ins or op.outs:
        return list(op.ins), list(op.outs), list(op.in_types)
    ops = list(op.operands)
    types = list(op.operand_types)
    n_out = len(spec.outs)
    if len(ops) < 1 + n_out:
        raise VerifyError(f"{op.name}: expected at least {1 + n_out} operands", op.loc)
    ins = ops[:1] + ops[1 + n_out:]
    in_types = types[:1] + types[1 + n_out:] if types else []
    return ins, ops[1:1 + n_out], in_types


def lower_tile_op(su, op: A.Op, spec, fn: Callable) -> Callable:
    loc = op.loc
    try:
        ins, outs, in_types = _operand_lists(op, spec)
    except VerifyError as e:
        return _fail(e)
    attrs = dict(op.attrs)
    n_required_outs = sum(1 for o in spec.outs if not o.optional)
    if len(outs) < n_required_outs:
        return _fail(VerifyError(f"{op.name} needs {n_required_outs} outs operand(s), got {len(outs)}", loc))
    # Operand specs matched to the operands as written (optional ones may be left out).
    in_specs = _align(spec.ins, len(ins))
    out_specs = _align(spec.outs, len(outs))
    # Which ins are scratch (tmp): written, not read, by the op.
    spec_in_names = [o.name for o in in_specs]
    scratch = [i < len(spec_in_names) and spec_in_names[i] == "tmp" for i in range(len(ins))]
    scalar_types = [
        (t.name if isinstance(t, A.ScalarType) else None) if i < len(in_types) else None
        for i, t in enumerate(in_types + [None] * (len(ins) - len(in_types)))
    ]
    domain = spec.domain
    legal_dtypes = tuple(spec.dtypes)
    name = op.name[4:]
    pipes = su.core.pipes
    pipe_cache: dict[tuple, tuple] = {}
    timing_cache: dict[tuple, tuple] = {}
    mem = su.core.memory

    def resolve_pipe(src_loc, dst_loc):
        key = (src_loc, dst_loc)
        hit = pipe_cache.get(key)
        if hit is None:
            try:
                pipe = spec.pipe.resolve(src_loc, dst_loc)
                case = spec.timing.select(src_loc, dst_loc)
            except ValueError as e:
                raise VerifyError(f"{op.name}: {e}", loc) from None
            if pipe not in pipes and pipe != "S":
                raise UnsupportedOpError(f"{op.name} on pipe {pipe} is not supported by the emulator "
                                         f"yet", loc)
            hit = pipe_cache[key] = (pipe, case)
        return hit

    get = su.value
    all_names = tuple(str(x) for x in list(ins) + list(outs))

    def step(frame):
        in_vals = [get(frame, x, loc) for x in ins]
        out_vals = [get(frame, x, loc) for x in outs]
        # snapshot valid regions at issue (set_validshape acts in program order)
        in_snap = [_snap(v, scalar_types[i], loc, op) for i, v in enumerate(in_vals)]
        out_snap = [_snap(v, None, loc, op) for v in out_vals]
        # pipe and timing depend only on shapes, dtypes and locations: memoised per op
        key = tuple((s[0], s[2], s[3], s[4], s[5]) for s in in_snap) + tuple(
            (s[0], s[2], s[3], s[4], s[5]) for s in out_snap)
        hit = timing_cache.get(key)
        if hit is None:
            _check_kinds(op, in_specs, in_snap, ins, "ins", loc)
            _check_kinds(op, out_specs, out_snap, outs, "outs", loc)
            _check_declared_types(op, in_snap, in_types, out_snap, op.out_types, loc)
            if ("i32_compare_eq_only" in spec.constraints and su.machine.params.get("cmp_i32_eq_only")
                    and in_snap and in_snap[0][4] == "i32" and _cmp_mode(attrs) != "eq"):
                raise VerifyError(f"{op.name}: on {su.machine.name} the vector unit compares i32 tiles only "
                                  f"for eq, not {_cmp_mode(attrs)}", loc)
            if "same_dtype" in spec.constraints:
                _check_same_dtype(op, [s for i, s in enumerate(in_snap) if not scratch[i]] + out_snap, loc)
            _check_matmul_shapes(op, in_snap, out_snap, loc)
            if spec.semantics in ("load", "store"):
                _check_windows(op, in_snap + out_snap, loc)
            src_loc = next((s[5] for s in in_snap if s[0] != SCALAR), None)
            dst_loc = out_snap[0][5] if out_snap else None
            pipe, case = resolve_pipe(src_loc, dst_loc)
            dom = out_snap[0] if domain == "dst" and out_snap else next(
                (s for s in in_snap if s[0] != SCALAR), out_snap[0] if out_snap else None)
            if legal_dtypes and domain != "none" and dom is not None and dom[4] not in legal_dtypes:
                which = "destination" if dom in out_snap else "source"
                raise VerifyError(f"{op.name}: {which} element type {dom[4]} is not supported "
                                  f"(legal: {', '.join(legal_dtypes)})", loc)
            variables = _timing_vars(dom, in_snap, out_snap)
            occ, lat = case.evaluate(variables)
            hit = timing_cache[key] = (pipe, occ, lat, int(variables["bytes"]))
        pipe, occ, lat, nbytes = hit
        reads = tuple(_range(s) for i, s in enumerate(in_snap) if s[0] != SCALAR and not scratch[i])
        writes = tuple(_range(s) for s in out_snap) + tuple(
            _range(s) for i, s in enumerate(in_snap) if s[0] != SCALAR and scratch[i])
        instr = Instr(OP, name, loc, pipe, 0, occ, lat, compute, commit, reads, writes,
                      operands=(all_names, in_snap + out_snap), nbytes=nbytes)
        if pipe == "S":
            return _run_on_scalar(su, instr)
        su.issue(pipe, instr)
        return None

    # compute / commit are shared by every issue of this op: the instruction carries its operands
    def compute(instr: Instr) -> list:
        snaps = instr.operands[1]
        in_args = [_arg(s) for s in snaps[:n_ins]]
        out_args = [_arg(s) for s in snaps[n_ins:]]
        mem.note_reads(instr.reads, instr)
        try:
            res = fn(in_args, out_args, attrs)
        except PtoError as e:  # e.g. a semantics-level BoundsError: give it this op's location
            if e.loc is None:
                e.loc = loc
            raise
        except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError) as e:
            raise KernelFault(f"{op.name}: {e}", loc) from None
        fixed = []
        for r in res:
            if r is not None and isinstance(r, np.ndarray) and not r.flags.owndata:
                r = r.copy()  # results must not alias memory that may change before commit
            fixed.append(r)
        return fixed

    def commit(instr: Instr, results: list) -> None:
        for s, r in zip(instr.operands[1][n_ins:], results, strict=False):
            if r is None:
                continue
            try:
                s[1].write(r)
            except ValueError as e:
                raise KernelFault(f"{op.name}: {e}", loc) from None
        mem.note_writes(instr.writes)

    n_ins = len(ins)
    return step


KIND_NAME = {TILE: "tile", VIEW: "view", SCALAR: "scalar"}


def _align(specs: tuple, n: int) -> tuple:
    """The operand specs that ``n`` written operands fill: optional ones are dropped, last first,
    until the counts agree (``tsels ins(%m, %a, %s)`` leaves out its optional tmp)."""
    specs = list(specs)
    for k in range(len(specs) - 1, -1, -1):
        if len(specs) <= n:
            break
        if specs[k].optional:
            del specs[k]
    return tuple(specs)


def _check_kinds(op: A.Op, specs: tuple, snaps: list, names: list, role: str, loc) -> None:
    """Each operand must be of a kind (tile / view / scalar) and in a location the spec allows."""
    for k, (s, name) in enumerate(zip(snaps, names, strict=False)):
        if k >= len(specs):
            return
        spec = specs[k]
        kinds = {"index": "scalar", "handle": None}
        allowed = {kinds.get(x, x) for x in spec.kinds}
        got = KIND_NAME[s[0]]
        if got not in allowed and None not in allowed:
            raise VerifyError(f"{op.name}: {role} operand {k} ({name}) must be a "
                              f"{' or '.join(sorted(a for a in allowed if a))}, got a {got}", loc)
        if s[0] != SCALAR and spec.locs and s[5] not in spec.locs:
            raise VerifyError(f"{op.name}: {role} operand {k} ({name}) is in {s[5]}; this op takes "
                              f"{' or '.join(spec.locs)} there", loc)


def _run_on_scalar(su, instr: Instr):
    """A tile op on PIPE_S (e.g. tscatter on A2/A3): the scalar unit executes it itself, in program
    order: reads at its cycle, its writes land before the scalar unit goes on."""
    core = su.core
    su.charge(su.issue_cost)
    yield from su.sync_time()
    now = int(core.env.now)
    core.commits.flush(now)
    instr.issue = instr.start = now
    results = instr.compute(instr)
    if instr.latency:
        yield core.env.timeout(instr.latency)
    instr.commit(instr, results)
    instr.end = now + instr.occupancy
    instr.done = now + instr.latency
    su.busy += instr.occupancy
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
            if s[0] != TILE or not isinstance(t, A.TileBufType):
                continue
            have = s[1].type
            if (t.loc, t.dtype, t.rows, t.cols) != (have.loc, have.dtype, have.rows, have.cols):
                raise VerifyError(f"{op.name}: {s[1].name} is written here as {t.loc} {t.rows}x{t.cols}x{t.dtype} "
                                  f"but holds a {have.loc} {have.rows}x{have.cols}x{have.dtype} tile", loc)


def _check_same_dtype(op: A.Op, snaps: list, loc) -> None:
    tiles = [s for s in snaps if s[0] == TILE]
    kinds = {s[4] for s in tiles}
    if len(kinds) > 1:
        listing = ", ".join(f"{s[1].name}: {s[4]}" for s in tiles)
        raise VerifyError(f"{op.name}: tile operands must share one element type ({listing})", loc)


def _check_matmul_shapes(op: A.Op, in_snap: list, out_snap: list, loc) -> None:
    """Static shapes of a cube op: a.rows == c.rows, a.cols == b.rows, b.cols == c.cols (§4.8)."""
    left = next((s[1] for s in in_snap if s[0] == TILE and s[5] == "left"), None)
    right = next((s[1] for s in in_snap if s[0] == TILE and s[5] == "right"), None)
    acc = next((s[1] for s in out_snap if s[0] == TILE and s[5] == "acc"), None)
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
    tile = next((s for s in snaps if s[0] == TILE), None)
    if tile is None:
        return
    for s in snaps:
        if s[0] == VIEW and s[2] * s[3] > tile[1].rows * tile[1].cols:
            raise BoundsError(f"{op.name}: the GM window is {s[2]}x{s[3]} but the tile holds only "
                              f"{tile[1].rows}x{tile[1].cols} elements", loc)


def _snap(v, scalar_type, loc, op):
    """(kind, object, vrow, vcol, dtype name, loc, extra) captured at issue time."""
    if isinstance(v, Tile):
        return (TILE, v, v.vrow, v.vcol, v.type.dtype, v.loc, None)
    if isinstance(v, PartitionView):
        if v.gm.data is None:
            raise BoundsError(f"view over {v.gm.name} has no data", loc)
        return (VIEW, v, v.rows, v.cols, v.gm.dtype_name, "gm", None)
    if isinstance(v, (int, float, bool, np.generic)):
        t = scalar_type or ("f32" if isinstance(v, float) else "i32")
        return (SCALAR, v, 0, 0, t, None, None)
    raise VerifyError(f"{op.name}: operand of unexpected kind {type(v).__name__}", loc)


def _arg(s) -> Arg:
    kind, obj, vr, vc, tname, loc, _ = s
    if kind == TILE:
        return Arg("tile", tname, obj.dtype, obj.logical(), obj.rows, obj.cols, vr, vc, obj.type.pad, loc)
    if kind == VIEW:
        return Arg("view", tname, obj.gm.dtype, obj.read(), obj.rows, obj.cols, obj.rows, obj.cols, 0, "gm")
    return Arg("scalar", tname, np_dtype(tname), obj, 0, 0, 0, 0, 0, "")


def _range(s) -> tuple:
    """(buffer, lo byte, hi byte, footprint): GM windows also carry (base, sizes, strides) in
    elements so that overlap can be decided exactly, not by bounding range."""
    kind, obj = s[0], s[1]
    if kind == TILE:
        return (obj.buffer.spec.name, obj.addr, obj.addr + obj.nbytes, None)
    lo, hi = obj.byte_range()
    return (obj.gm.name, lo, hi, (obj.base, obj.sizes, obj.strides))


def describe_operands(operands: tuple) -> list[tuple]:
    """(name, buffer, address or value, bytes) per operand, for the trace."""
    names, snaps = operands
    return [_describe(n, s) for n, s in zip(names, snaps, strict=False)]


def _describe(name, s) -> tuple:
    kind, obj = s[0], s[1]
    if kind == TILE:
        return (str(name), obj.buffer.spec.name, obj.addr, obj.nbytes)
    if kind == VIEW:
        lo, hi = obj.byte_range()
        return (str(name), obj.gm.name, lo, hi - lo)
    return (str(name), "scalar", obj, 0)


def _timing_vars(dom, in_snap, out_snap) -> dict:
    if dom is None:
        rows = cols = 0
        esize = 0
    else:
        rows, cols = dom[2], dom[3]
        esize = itemsize(dom[4])
    elems = rows * cols
    src = next((s for s in in_snap if s[0] != SCALAR), None)
    dst = out_snap[0] if out_snap else None
    v = {
        "elems": elems, "rows": rows, "cols": cols, "esize": esize, "bytes": elems * esize,
        "src_esize": itemsize(src[4]) if src else esize, "dst_esize": itemsize(dst[4]) if dst else esize,
        "M": 0, "N": 0, "K": 0, "a_esize": 0,
    }
    left = next((s for s in in_snap if s[0] == TILE and s[5] == "left"), None)
    right = next((s for s in in_snap if s[0] == TILE and s[5] == "right"), None)
    if left is not None:
        v["M"], v["K"], v["a_esize"] = left[2], left[3], itemsize(left[4])
        if right is not None:
            v["N"] = right[3]
    return v
