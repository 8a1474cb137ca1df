"""Lowering of the `pto` ops the core executes itself (semantics keys ``core.*`` in the ISA specs):
views and pointers, tile allocation and aliasing, flags and barriers, scalar tile access, debug
printing. Tile instructions with NumPy semantics are lowered in ``tileop``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from ptoisa.dtypes import np_dtype
from ptoisa.machine import Machine
from ptoisa.text import ast as A
from pyptoemu.core.crossops import CROSS_CORE_OPS
from pyptoemu.core.memory import OnChipBuffer, PartitionView, Ptr, TensorView, Tile
from pyptoemu.core.pipe import BARRIER, SET, WAIT, Instr, make_instr
from pyptoemu.core.pipenames import event_of, pipe_of
from pyptoemu.core.printf import compile_format
from pyptoemu.core.scalar import Lowering, ScalarUnit, Step, fail_step, lower_noop, require, values_of
from pyptoemu.errors import BoundsError, InputError, KernelFault, Loc, UnsupportedOpError, VerifyError
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.semantics import format_tile


def noted_view_dims(su: ScalarUnit, frame: dict, start: Ptr, size_names: list, stride_names: list, what: str,
                    loc: Loc) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The sizes and strides of a GM view from their operands, checked non-negative and noted with the
    memory (which bounds the stand-in data a kernel's views can reach) before the view is built: shared by
    ``make_tensor_view`` and ``memref.reinterpret_cast``, the two ops that make a view from scalars."""
    sizes = tuple(int(su.value(frame, n, loc)) for n in size_names)
    strides = tuple(int(su.value(frame, n, loc)) for n in stride_names)
    if any(d < 0 for d in sizes):
        raise BoundsError(f"{what}: negative dimension in sizes {list(sizes)}", loc)
    su.core.memory.note_view(start, sizes, strides, loc)
    return sizes, strides


def lower_make_tensor_view(su: ScalarUnit, op: A.Op) -> Step:
    require(op, operands=1, results=1)
    ptr_name = op.operands[0]
    shape_n = op.groups.get("shape", [])
    stride_n = op.groups.get("strides", [])
    res = op.results[0]
    loc = op.loc
    if len(shape_n) != len(stride_n):
        return fail_step(VerifyError(f"make_tensor_view: {len(shape_n)} shape operands but "
                                 f"{len(stride_n)} strides", loc))

    def step(frame):
        ptr = su.value(frame, ptr_name, loc)
        if not isinstance(ptr, Ptr):
            raise VerifyError(f"make_tensor_view needs a !pto.ptr operand, got {ptr_name}", loc)
        shape, strides = noted_view_dims(su, frame, ptr, shape_n, stride_n, "make_tensor_view", loc)
        frame[res] = TensorView(ptr, shape, strides)
        su.charge(su.arith_cost)

    return step


def lower_partition_view(su: ScalarUnit, op: A.Op) -> Step:
    return prepare_partition_view(op, su.isa, su.machine)(su, op)


def prepare_partition_view(op: A.Op, isa: Any, machine: Machine) -> Lowering:
    """What binding ``partition_view`` decides from the op alone (its operand names and readers),
    once per op (binding.lowering_of: kept per module, ISA and machine); the lowering then only
    makes the step (:func:`_partition_view_step`)."""
    require(op, operands=1, results=1)
    off_n = op.groups.get("offsets", [])
    size_n = op.groups.get("sizes", [])
    operands = (op.operands[0], off_n, size_n, op.results[0], op.loc, values_of(off_n), values_of(size_n))
    return lambda su, op: _partition_view_step(su, *operands)


def _partition_view_step(su: ScalarUnit, tv_name: str, off_n: list, size_n: list, res: str, loc: Loc,
                         get_offsets: Callable, get_sizes: Callable) -> Step:
    """The step of a ``partition_view`` on ``su``: a window of the tensor view ``tv_name`` at the
    offsets ``off_n``, of the sizes ``size_n``, into ``res``."""
    value = su.value
    cost = su.arith_cost
    # The last window this op made, and what it was made from: a loop stepping a window along a
    # tensor gives the same parent and sizes with new offsets, so only the offsets are checked
    # and the last window is moved (step); anything else goes the whole way (make).
    last_parent = last_sizes = last_window = None
    last_base0 = 0
    last_strides: tuple = ()
    last_most: tuple = ()  # per dimension: the largest offset the window fits at
    dims: tuple = ()  # the dimensions of the last window, by index
    # the base elements at which the last window lies within its GM buffer as it was then (a
    # buffer only grows: outside them, the whole way says whether it still does)
    base_lo, base_hi = 0, -1

    def step(frame):
        try:
            tv = frame[tv_name]
            sizes = get_sizes(frame)
            offsets = get_offsets(frame)
        except KeyError:
            return make(frame)  # says which value is undefined
        # (as many offsets as the last window's dimensions: make checked them against its rank)
        if tv is last_parent and sizes == last_sizes:
            base = last_base0
            for d in dims:
                o = offsets[d]
                if o.__class__ is not int or o < 0 or o > last_most[d]:
                    return make(frame)  # outside (or not an int): the whole way says what is wrong
                base += o * last_strides[d]
            if base < base_lo or base > base_hi:
                return make(frame)
            frame[res] = last_window.moved(base)
            su.vclock += cost  # su.charge(cost), inline
            su.own_busy += cost
            su.own_count += 1
            return None
        return make(frame)

    def make(frame):
        nonlocal last_parent, last_sizes, last_window, last_base0, last_strides, last_most, dims, base_lo, base_hi
        tv = value(frame, tv_name, loc)
        offs = [int(value(frame, n, loc)) for n in off_n]
        sizes = tuple([int(value(frame, n, loc)) for n in size_n])
        if isinstance(tv, PartitionView):  # a window of a window
            parent_strides, base0, parent_shape = tv.strides, tv.base, tv.sizes
            gm = tv.gm
        elif isinstance(tv, TensorView):
            parent_strides, base0, parent_shape = tv.strides, tv.ptr.offset, tv.shape
            gm = tv.ptr.gm
        else:
            raise VerifyError(f"partition_view needs a tensor view, got {tv_name}", loc)
        if len(offs) != len(parent_shape) or len(sizes) != len(parent_shape):
            raise VerifyError(f"partition_view: view has rank {len(parent_shape)} but "
                              f"{len(offs)} offsets and {len(sizes)} sizes were given", loc)
        base = base0
        for d, o in enumerate(offs):
            z, n = sizes[d], parent_shape[d]
            if o < 0 or z < 0 or o + z > n:
                raise BoundsError(f"partition_view: dim {d} window [{o}, {o + z}) is outside the "
                                  f"view's size {n}", loc)
            base += o * parent_strides[d]
        pv = PartitionView(gm, base, sizes, tuple(parent_strides))
        pv.check_bounds(loc)
        last_parent, last_sizes, last_window, last_base0 = tv, sizes, pv, base0
        last_strides = tuple(parent_strides)
        last_most = tuple(n - z for z, n in zip(sizes, parent_shape, strict=True))
        dims = tuple(range(len(sizes)))
        if 0 in sizes:  # an empty window touches nothing: anywhere is within
            base_lo, base_hi = -math.inf, math.inf
        else:  # pv.check_bounds, as a range of bases: lo >= 0 and hi < the buffer's size
            base_lo, base_hi = base - pv.lo, gm.size - 1 - (pv.hi - base)
        frame[res] = pv
        su.charge(su.arith_cost)

    return step


def lower_alloc_tile(su: ScalarUnit, op: A.Op, key: object | None = None) -> Step:
    t = op.result_types[0] if op.result_types else None
    loc = op.loc
    if not isinstance(t, A.TileBufType):
        return fail_step(VerifyError("alloc_tile needs a !pto.tile_buf result type", loc))
    require(op, results=1)
    res = op.results[0]
    if t.loc == "left":  # the assembler forces left tiles to ZZ on A2/A3 and NZ on A5 (§2.5)
        forced = "col_major" if su.machine.name.startswith("a5") else "row_major"
        if t.blayout != forced:
            t = dataclasses.replace(t, blayout=forced)
    buf = su.core.memory.onchip.get(t.loc)
    if buf is None:
        return fail_step(VerifyError(f"no on-chip buffer for loc={t.loc} on machine "
                                 f"{su.machine.name}", loc))
    try:
        dtype = np_dtype(t.dtype)
    except ValueError as e:
        return fail_step(VerifyError(str(e), loc))
    capacity_error = _static_capacity_error(t, dtype, buf, op)
    if capacity_error is not None:
        return fail_step(capacity_error)
    if (t.v_row is not None and t.v_row > t.rows) or (t.v_col is not None and t.v_col > t.cols):
        return fail_step(VerifyError(f"valid region {t.valid_text} exceeds tile shape "
                                     f"{t.rows}x{t.cols}", loc))
    addr_n = op.groups.get("addr", [None])[0]
    vr_n = op.groups.get("valid_row", [None])[0]
    vc_n = op.groups.get("valid_col", [None])[0]
    # §4.1: valid_row is present iff the type says v_row=? (same for columns)
    for dim, given, static in (("row", vr_n, t.v_row), ("col", vc_n, t.v_col)):
        if (given is None) != (static is not None):
            what = (f"the type has v_{dim}=? but no valid_{dim} operand is given" if given is None
                    else f"valid_{dim} is given but the type's v_{dim} is static ({static})")
            return fail_step(VerifyError(f"alloc_tile: {what}", loc))
    akey = key if key is not None else op

    def step(frame):
        vrow = t.v_row if t.v_row is not None else (
            int(su.value(frame, vr_n, loc)) if vr_n is not None else t.rows)
        vcol = t.v_col if t.v_col is not None else (
            int(su.value(frame, vc_n, loc)) if vc_n is not None else t.cols)
        if not (0 <= vrow <= t.rows and 0 <= vcol <= t.cols):
            raise BoundsError(f"{res}: valid region {vrow}x{vcol} outside tile shape {t.rows}x{t.cols}",
                              loc)
        tile = Tile(buf, 0, t, dtype, vrow, vcol, res)
        if addr_n is not None:
            addr = int(su.value(frame, addr_n, loc))
            buf.check_placement(addr, tile.nbytes, res, loc)
            buf.allocations.setdefault(akey, (addr, tile.nbytes, res))
        else:
            addr = buf.allocate(akey, tile.nbytes, res, loc)
        tile.addr = addr
        su.core.note_alloc(buf)
        frame[res] = tile
        su.charge(su.arith_cost)

    return step


def _static_capacity_error(t: A.TileBufType, dtype, buf: OnChipBuffer, op: A.Op) -> VerifyError | None:
    """A tile type whose elements alone exceed its buffer can never be placed: said before anything
    runs, and before its layout (one offset per element) is built."""
    if t.rows < 0 or t.cols < 0:
        return VerifyError(f"{op.name}: tile shape {t.rows}x{t.cols} is negative", op.loc)
    need = t.rows * t.cols * dtype.itemsize
    if need > buf.spec.size:
        return VerifyError(f"{op.name}: a {t.rows}x{t.cols}x{t.dtype} tile needs at least {need} bytes but "
                           f"{buf.spec.name} ({t.loc}) holds {buf.spec.size}", op.loc)
    return None


def lower_set_validshape(su: ScalarUnit, op: A.Op) -> Step:
    require(op, operands=3)
    t_n, vr_n, vc_n = op.operands[:3]
    loc = op.loc

    def step(frame):
        tile = su.value(frame, t_n, loc)
        if not isinstance(tile, Tile):
            raise VerifyError(f"set_validshape needs a tile, got {t_n}", loc)
        if tile.type.v_row is not None or tile.type.v_col is not None:
            raise VerifyError(f"set_validshape: {t_n} has a static valid shape "
                              f"({tile.type.valid_text}); the type must say v_row=?, v_col=?",
                              loc)
        vr, vc = int(su.value(frame, vr_n, loc)), int(su.value(frame, vc_n, loc))
        if not (0 <= vr <= tile.rows and 0 <= vc <= tile.cols):
            raise BoundsError(f"set_validshape {vr}x{vc} outside tile shape {tile.rows}x{tile.cols}", loc)
        tile.vrow, tile.vcol = vr, vc
        su.charge(su.arith_cost)

    return step


def lower_alias(su: ScalarUnit, op: A.Op) -> Step:
    """treshape / bitcast / tassign: the same bytes seen through another tile type."""
    src_n = op.operands[0] if op.operands else (op.ins[0] if op.ins else None)
    res = op.results[0] if op.results else (op.outs[0] if op.outs else None)
    t = op.result_types[0] if op.result_types else (op.out_types[0] if op.out_types else None)
    loc = op.loc
    addr_n = op.operands[1] if op.name == "pto.tassign" and len(op.operands) > 1 else None
    if src_n is None:
        return fail_step(VerifyError(f"{op.name} needs a source tile operand", loc))
    if not isinstance(t, A.TileBufType) or res is None:
        return fail_step(VerifyError(f"{op.name} needs a !pto.tile_buf result type", loc))
    try:
        dtype = np_dtype(t.dtype)
    except ValueError as e:
        return fail_step(VerifyError(str(e), loc))
    buf = su.core.memory.onchip.get(t.loc)
    capacity_error = _static_capacity_error(t, dtype, buf, op) if buf is not None else None
    if capacity_error is not None:
        return fail_step(capacity_error)

    def step(frame):
        src = su.value(frame, src_n, loc)
        if not isinstance(src, Tile):
            raise VerifyError(f"{op.name} needs a tile operand", loc)
        vr = t.v_row if t.v_row is not None else src.vrow
        vc = t.v_col if t.v_col is not None else src.vcol
        new = src.retyped(t, dtype, vr, vc, res)
        if addr_n is not None:
            new.addr = int(su.value(frame, addr_n, loc))
            src.buffer.check_placement(new.addr, new.nbytes, res, loc)
        elif new.nbytes > src.nbytes and op.name != "pto.tassign":
            raise VerifyError(f"{op.name}: {t} needs {new.nbytes} bytes but the source tile has "
                              f"{src.nbytes}", loc)
        frame[res] = new
        su.charge(su.arith_cost)

    return step


def lower_subset(su: ScalarUnit, op: A.Op) -> Step:
    require(op, operands=3, results=1)
    t_n, r_n, c_n = op.operands[:3]
    sizes = op.groups.get("sizes", [])
    res = op.results[0]
    loc = op.loc

    def step(frame):
        src = su.value(frame, t_n, loc)
        r, c = int(su.value(frame, r_n, loc)), int(su.value(frame, c_n, loc))
        h, w = (int(su.value(frame, s, loc)) for s in sizes)
        if r < 0 or c < 0 or r + h > src.rows or c + w > src.cols:
            raise BoundsError(f"subset [{r}:{r + h}, {c}:{c + w}] outside tile {src.rows}x{src.cols}", loc)
        if src.type.slayout != "none_box" or src.type.blayout != "row_major":
            raise UnsupportedOpError("pto.subset of boxed or column-major tiles is not supported by the "
                                     "emulator yet", loc)
        if w != src.cols:
            raise UnsupportedOpError("pto.subset narrower than its row-major parent is not supported "
                                     "by the emulator yet", loc)
        t = A.TileBufType(src.type.loc, src.type.dtype, h, w, h, w, src.type.blayout, src.type.slayout,
                          src.type.fractal, src.type.pad)
        vr = max(0, min(h, src.vrow - r))
        vc = max(0, min(w, src.vcol - c))
        new = src.retyped(t, src.dtype, vr, vc, res)
        new.addr = src.addr + (r * src.cols + c) * src.esize
        frame[res] = new
        su.charge(su.arith_cost)

    return step


def lower_addptr(su: ScalarUnit, op: A.Op) -> Step:
    require(op, operands=2, results=1)
    p_n, o_n = op.operands[:2]
    res = op.results[0]
    loc = op.loc

    def step(frame):
        p = su.value(frame, p_n, loc)
        if not isinstance(p, Ptr):
            raise VerifyError(f"addptr needs a !pto.ptr operand, got {p_n}", loc)
        frame[res] = Ptr(p.gm, p.offset + int(su.value(frame, o_n, loc)))
        su.charge(su.arith_cost)

    return step


def lower_get_tensor_view_dim(su: ScalarUnit, op: A.Op) -> Step:
    require(op, operands=2, results=1)
    tv_n, d_n = op.operands[:2]
    res = op.results[0]
    loc = op.loc

    def step(frame):
        tv = su.value(frame, tv_n, loc)
        d = int(su.value(frame, d_n, loc))
        if not isinstance(tv, (TensorView, PartitionView)):
            raise VerifyError(f"get_tensor_view_dim needs a tensor or partition view, got {tv_n}", loc)
        shape = tv.shape if isinstance(tv, TensorView) else tv.sizes
        if not 0 <= d < len(shape):
            raise BoundsError(f"get_tensor_view_dim: dim {d} of a rank-{len(shape)} view", loc)
        frame[res] = shape[d]
        su.charge(su.arith_cost)

    return step


def lower_block_const(value_attr: str) -> Lowering:
    def lower(su: ScalarUnit, op: A.Op) -> Step:
        require(op, results=1)
        res = op.results[0]

        def step(frame):
            frame[res] = int(getattr(su.core, value_attr))
            su.charge(su.arith_cost)

        return step

    return lower


def lower_flag(su: ScalarUnit, op: A.Op) -> Step:
    """set_flag / wait_flag / record_event / wait_event and their _dyn forms (:func:`prepare_flag`)."""
    lowering = prepare_flag(op, su.isa, su.machine)
    return fail_step(lowering) if isinstance(lowering, Exception) else lowering(su, op)


def prepare_flag(op: A.Op, isa: Any, machine: Machine) -> Lowering | Exception:
    """What binding a flag op decides from the op and the machine alone (its pipes, its event id,
    their checks), once per op (binding.lowering_of: kept per module, ISA and machine), and the
    lowering that then only makes the step on a scalar unit; the error binding raises, if any.
    Once per op and not per core and run: 24 flag ops per run of the stream kernel, about 3 K
    bytecodes less per run (callgrind: see the commit)."""
    parsed = _flag_operands(op, machine)
    if isinstance(parsed, Exception):
        return parsed
    is_set, src, dst, static_id, dyn = parsed
    name = op.name[4:]
    loc = op.loc
    n_ids = machine.event_ids
    kind, pipe = (SET, src) if is_set else (WAIT, dst)
    static_flag = (src, dst, static_id) if dyn is None else None
    if static_flag is not None and pipe != "S":  # nearly every flag op: nothing to decide per execution
        if kind == WAIT:
            def bind_static_wait(su: ScalarUnit, op: A.Op) -> Step:
                issue_new = su.issue_new
                order = su.flag_order(static_flag)

                def step_static_wait(frame):  # FlagOrder.on_wait, inline (a call less per wait)
                    order.balance -= 1
                    issue_new(pipe, WAIT, name, loc, 0, 0, None, (), (), static_flag)

                return step_static_wait

            return bind_static_wait

        def bind_static(su: ScalarUnit, op: A.Op) -> Step:
            issue_new = su.issue_new
            order = su.flag_order(static_flag)

            def step_static(frame):
                # (noted once issued: the same as before, as issuing a flag op touches nothing noting reads)
                instr = issue_new(pipe, kind, name, loc, 0, 0, None, (), (), static_flag)
                if order.balance >= 1:  # set already: FlagOrder.on_set says so
                    order.on_set(instr)
                else:  # FlagOrder.on_set, inline (a call less per set: 770 per run of the stream kernel)
                    order.balance += 1
                    order.last = instr

            return step_static

        return bind_static

    def bind(su: ScalarUnit, op: A.Op) -> Step:
        def step(frame):
            flag = static_flag
            if flag is None:
                eid = int(su.value(frame, dyn, loc))
                if not 0 <= eid < n_ids:  # a fault, as every other value the op cannot use: the run stops here
                    raise KernelFault(f"{name}: event id {eid} is outside the machine's range 0..{n_ids - 1}", loc)
                flag = (src, dst, eid)
            instr = make_instr(kind, name, loc, pipe, 0, 0, 0, None, (), (), flag)
            su.note_flag_order(instr)
            if pipe == "S":
                return su_flag_on_scalar(su, instr)
            su.issue(pipe, instr)
            return None

        return step

    return bind


def _flag_operands(op: A.Op, machine: Machine) -> tuple | Exception:
    """(is a set, source pipe, destination pipe, static event id or None, dynamic id operand or
    None) of a flag op, or the error its binding raises."""
    is_set = op.name in ("pto.set_flag", "pto.record_event", "pto.set_flag_dyn")
    items = op.attrs.get("args", [])
    loc = op.loc
    if len(items) < 2:
        return VerifyError(f"{op.name} needs [src pipe, dst pipe, event id]", loc)
    src, dst = pipe_of(items[0], loc), pipe_of(items[1], loc)
    if "ALL" in (src, dst):
        return VerifyError(f"{op.name}: PIPE_ALL is only valid in barriers", loc)
    if src == dst:  # a flag joins two pipes (pto-text-format §6.2: "8 ids per ordered pipe pair")
        return VerifyError(f"{op.name}: a flag from PIPE_{src} to itself: a flag orders two different "
                           f"pipes; ops of one pipe are ordered by pto.barrier <PIPE_{src}>", loc)
    static_id = event_of(items[2], loc) if len(items) > 2 else None
    dyn = op.operands[0] if op.operands else None
    if static_id is None and dyn is None:
        return VerifyError(f"{op.name} needs an event id like <EVENT_ID0>", loc)
    n_ids = machine.event_ids
    if static_id is not None and dyn is None and not 0 <= static_id < n_ids:
        return VerifyError(f"{op.name}: event id {static_id} is out of range: {machine.name} has "
                           f"EVENT_ID0..EVENT_ID{n_ids - 1}", loc)
    return is_set, src, dst, static_id, dyn


def su_flag_on_scalar(su: ScalarUnit, instr: Instr):
    """A set_flag from, or wait_flag on, the scalar pipe: executed by the scalar unit itself."""
    env = su.core.env
    su.charge(su.issue_cost)
    yield from su.sync_time()
    instr.issue = instr.start = int(env.now)
    instr.pidx = su.s_accesses
    instr.sepoch = len(su.epochs)
    su.issued_total += 1
    instr.iseq = su.issued_total
    if instr.kind == SET:
        su.charge(su.set_cost)
        instr.end = instr.done = instr.start + su.set_cost
        su.core.flags.set(instr.flag, instr)
    else:
        instr.wait_start = instr.start
        setter = su.core.flags.try_consume(instr.flag)
        if setter is None:
            su.core.blocked_scalar = instr
            yield su.core.flags.wait_event(instr.flag)
            su.core.blocked_scalar = None
            setter = su.core.flags.try_consume(instr.flag)
            su.resume_at_now()
        instr.released_by = setter
        su.epochs.append(("wait", instr))
        instr.start = int(env.now)
        su.charge(su.wait_cost)
        instr.end = instr.done = instr.start + su.wait_cost
        su.core.commits.flush(env.now)
    su.core.record(instr)


def lower_barrier(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    items = op.attrs.get("args")
    attr = items[0] if items else op.attrs.get("pipe")
    pipe = pipe_of(attr, loc) if attr is not None else None
    if pipe is None:
        return fail_step(VerifyError(f"{op.name} needs a pipe", loc))

    if pipe == "ALL":
        return lambda frame: _barrier_all(su, op)
    if pipe == "S":
        def step_scalar(frame):
            su.charge(su.issue_cost)

        return step_scalar
    issue_new = su.issue_new

    def step(frame):  # issue(pipe, make_instr(...)) in one call (one barrier per tile of the stream kernel)
        issue_new(pipe, BARRIER, "barrier", loc)

    return step


def _barrier_all(su: ScalarUnit, op: A.Op):
    su.charge(su.issue_cost)
    yield from su.settle()  # the clock is exact
    start = su.pending_start = su.vclock
    yield from su.drain_all()
    su.epochs.append(("all", su.issued))  # (a new dict each time: ScalarUnit.issued)
    su.charge(su.barrier_all_cost)
    instr = make_instr(BARRIER, "barrier", op.loc, "S", start)
    instr.start, instr.end, instr.done = start, su.vclock, su.vclock
    su.pending_start = None
    su.core.record(instr)


def lower_tprint(su: ScalarUnit, op: A.Op) -> Step:
    """tprint: a full barrier, then print the tile (or GM view) as the hardware debug print does."""
    if not op.ins:
        require(op, operands=1)
    src_n = op.ins[0] if op.ins else op.operands[0]
    loc = op.loc

    def run(frame):
        yield from _barrier_all(su, op)
        v = su.value(frame, src_n, loc)
        if not su.core.data:
            su.core.printed.append(f"{loc}: tprint {src_n}\n(timing-only run: no data)")
            return
        if isinstance(v, Tile):
            arg = Arg("tile", v.type.dtype, v.dtype, v.logical(), v.rows, v.cols, v.vrow, v.vcol,
                      v.type.pad, v.loc)
        elif isinstance(v, PartitionView):
            arr = v.read()
            arg = Arg("view", v.gm.dtype_name, v.gm.dtype, arr, v.rows, v.cols, v.rows, v.cols, 0, "gm")
        else:
            raise VerifyError("tprint needs a tile or a view", loc)
        su.core.printed.append(f"{loc}: tprint {src_n}\n{format_tile(arg)}")

    return run


def _needs_data(su: ScalarUnit, what: str, loc: Loc) -> None:
    """A scalar read of data (it may steer control flow) cannot be timed without the data."""
    if not su.core.data:
        raise InputError(f"{what} reads a value into the scalar unit; a timing-only run (--no-data) "
                         f"computes no values, so a kernel that reads data into scalars needs a run "
                         f"with data", loc)


def lower_tgetval(su: ScalarUnit, op: A.Op) -> Step:
    require(op, ins=2, results=1)
    t_n, off_n = op.ins[:2]
    res = op.results[0] if op.results else None
    loc = op.loc

    def run(frame):
        su.charge(su.issue_cost)
        yield from su.sync_time()
        su.core.commits.flush(su.core.env.now)
        tile = su.value(frame, t_n, loc)
        off = int(su.value(frame, off_n, loc))
        if not 0 <= off < tile.rows * tile.cols:
            raise BoundsError(f"tgetval offset {off} outside tile of {tile.rows * tile.cols} elements", loc)
        _needs_data(su, "tgetval", loc)
        v = tile.logical().reshape(-1)[off].item()
        frame[res] = v
        su.core.record_scalar_access(op, tile, reads=True)

    return run


def lower_tsetval(su: ScalarUnit, op: A.Op) -> Step:
    require(op, ins=2, outs=1)
    off_n, v_n = op.ins[:2]
    t_n = op.outs[0]
    loc = op.loc

    def run(frame):
        su.charge(su.issue_cost)
        yield from su.sync_time()
        su.core.commits.flush(su.core.env.now)
        tile = su.value(frame, t_n, loc)
        off = int(su.value(frame, off_n, loc))
        if not 0 <= off < tile.rows * tile.cols:
            raise BoundsError(f"tsetval offset {off} outside tile of {tile.rows * tile.cols} elements", loc)
        if su.core.data:
            arr = tile.logical().copy()
            arr.reshape(-1)[off] = su.value(frame, v_n, loc)
            tile.write(arr)
        su.core.record_scalar_access(op, tile, reads=False)

    return run


def lower_eventid_array(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    if op.name == "pto.declare_eventid_array":
        require(op, results=1)
        res = op.results[0]

        def step(frame):
            frame[res] = {}

        return step
    if op.name == "pto.eventid_array_set":
        require(op, operands=3)
        arr_n, idx_n, v_n = op.operands[:3]

        def step(frame):
            su.value(frame, arr_n, loc)[int(su.value(frame, idx_n, loc))] = int(su.value(frame, v_n, loc))
            su.charge(su.arith_cost)

        return step
    require(op, operands=2, results=1)
    arr_n, idx_n = op.operands[:2]
    res = op.results[0]

    def step(frame):
        arr = su.value(frame, arr_n, loc)
        i = int(su.value(frame, idx_n, loc))
        if i not in arr:
            raise KernelFault(f"eventid_array_get: element {i} was never set", loc)
        frame[res] = arr[i]
        su.charge(su.arith_cost)

    return step


def lower_load_scalar(su: ScalarUnit, op: A.Op) -> Step:
    loc = op.loc
    is_load = op.name == "pto.load_scalar"
    require(op, operands=1 if is_load else 2, results=1 if is_load else 0)

    def run(frame):
        su.charge(su.issue_cost)
        yield from su.sync_time()
        su.core.commits.flush(su.core.env.now)
        if is_load:
            p = su.value(frame, op.operands[0], loc)
            off = int(su.value(frame, op.operands[1], loc)) if len(op.operands) > 1 else 0
        else:
            v = su.value(frame, op.operands[0], loc)
            p = su.value(frame, op.operands[1], loc)
            off = int(su.value(frame, op.operands[2], loc)) if len(op.operands) > 2 else 0
        if not isinstance(p, Ptr):
            raise VerifyError(f"{op.name} needs a !pto.ptr operand, got {p!r}", loc)
        gm = p.gm
        i = p.offset + off
        su.core.memory.note_element(p, i, loc)  # an argument given no data gets stand-in data here too
        if not 0 <= i < gm.size:
            raise BoundsError(f"{op.name}: element {i} outside {gm.name}", loc)
        if is_load:
            _needs_data(su, op.name[4:], loc)
            gm.ensure(i, i + 1)
            frame[op.results[0]] = gm.store[i].item()
        elif su.core.data:
            gm.writable(i, i + 1)[i] = v
        # a scalar GM access: visible to the race detector like any other (one element window)
        es = gm.dtype.itemsize
        access = ((gm.name, i * es, (i + 1) * es, (i, (1,), (1,))),)
        instr = make_instr(0, op.name[4:], loc, "S", su.vclock)
        if is_load:
            instr.reads = access
        else:
            instr.writes = access
        instr.start = instr.end = instr.done = int(su.core.env.now)
        su.core.record_on_scalar(instr)

    return run


def lower_trap(su: ScalarUnit, op: A.Op) -> Step:
    return fail_step(KernelFault("pto.trap: the kernel aborted", op.loc))


def lower_print(su: ScalarUnit, op: A.Op) -> Step:
    """printf of scalars (C's formatting, checked here, before anything runs: pyptoemu.core.printf)."""
    loc = op.loc
    names = [x for x in op.ins if isinstance(x, str) and x.startswith("%")]
    fmt = op.attrs.get("format", next((x for x in op.ins if isinstance(x, str) and not x.startswith("%")), None))
    if fmt is None:
        def render(vals: list) -> str:
            return " ".join(str(v) for v in vals)
    else:
        types = [t.name if isinstance(t, A.ScalarType) else str(t) for t in op.in_types]
        if len(types) != len(names):
            return fail_step(VerifyError(f"pto.print: {len(names)} value(s) but {len(types)} type(s)", loc))
        try:
            render = compile_format(str(fmt), types)
        except ValueError as e:
            return fail_step(VerifyError(f"pto.print: format {str(fmt)!r}: {e}", loc))

    def step(frame):
        su.core.printed.append(f"{loc}: {render([su.value(frame, x, loc) for x in names])}")

    return step


def lower_section(su: ScalarUnit, op: A.Op) -> Step:
    def run(frame):
        for r in op.regions:
            yield from su.exec_region(r, frame)

    return run


CORE_OPS: dict[str, Lowering] = {
    "make_tensor_view": lower_make_tensor_view,
    "alloc_tile": lower_alloc_tile,
    "set_validshape": lower_set_validshape,
    "alias": lower_alias,
    "treshape": lower_alias,
    "bitcast": lower_alias,
    "tassign": lower_alias,
    "subset": lower_subset,
    "addptr": lower_addptr,
    "get_tensor_view_dim": lower_get_tensor_view_dim,
    "get_block_idx": lower_block_const("block_idx"),
    "get_block_num": lower_block_const("block_num"),
    "get_subblock_idx": lower_block_const("subblock_idx"),
    "get_subblock_num": lower_block_const("subblock_num"),
    "barrier": lower_barrier,
    "barrier_sync": lower_barrier,
    "tsync": lambda su, op: (lambda frame: _barrier_all(su, op)),
    "tprint": lower_tprint,
    "tgetval": lower_tgetval,
    "tsetval": lower_tsetval,
    "declare_eventid_array": lower_eventid_array,
    "eventid_array_get": lower_eventid_array,
    "eventid_array_set": lower_eventid_array,
    "load_scalar": lower_load_scalar,
    "store_scalar": lower_load_scalar,
    "trap": lower_trap,
    "print": lower_print,
    "section": lower_section,
    "section.cube": lower_section,
    "section.vector": lower_section,
    "noop": lower_noop,
    "set_ffts": lower_noop,
    **CROSS_CORE_OPS,  # FIFOs, cross-core signals, buffer tokens, async GM (pyptoemu.core.crossops)
}

# Core ops whose lowering does the work that depends on the op, the ISA and the machine alone once
# per op: (op, isa, machine) -> the lowering that makes the step, or the error binding the op raises
# (binding.lowering_of keeps the lowering per module, ISA and machine; an error is made anew)
PREPARED_CORE_OPS: dict[str, Callable[[A.Op, Any, Machine], Lowering | Exception]] = {
    "partition_view": prepare_partition_view,
    "subview": prepare_partition_view,
    "set_flag": prepare_flag,
    "wait_flag": prepare_flag,
    "set_flag_dyn": prepare_flag,
    "wait_flag_dyn": prepare_flag,
    "record_event": prepare_flag,
    "wait_event": prepare_flag,
    "flag": prepare_flag,
}
