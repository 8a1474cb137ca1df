"""Lowering of `arith`, `scf`, `func` and `memref` ops into scalar-unit steps.

Each ``lower_X(su, op)`` runs once per op and returns the step the scalar unit calls on every
execution; structured control flow returns generators so nested regions can wait on pipes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoisa.dtypes import is_float, is_known, np_dtype
from ptoisa.text import ast as A
from pyptoemu.core import arith
from pyptoemu.core.coreops import lower_alloc_tile, noted_view_dims
from pyptoemu.core.memory import PartitionView, Ptr, Tile
from pyptoemu.core.scalar import (
    Lowering,
    Return,
    ScalarUnit,
    Step,
    fail_step,
    lower_noop,
    require,
    scalar_type_name,
    values_of,
)
from pyptoemu.errors import BoundsError, KernelFault, Loc, UnsupportedOpError, VerifyError

# memref address spaces as tile locations (memref.alloc becomes an alloc_tile)
LOC_OF_SPACE = {"vec": "vec", "mat": "mat", "left": "left", "right": "right", "acc": "acc",
                "bias": "bias", "scaling": "scaling", "ub": "vec"}


def lower_constant(su: ScalarUnit, op: A.Op) -> Step:
    return prepare_constant(op, su.isa, su.machine)(su, op)


def prepare_constant(op: A.Op, isa: Any, machine: Any) -> Lowering:
    """What binding ``arith.constant`` decides from the op alone (its checks and its value), once
    per op (binding.lowering_of: the lowering returned is kept per module, ISA and machine), and
    the lowering that then only makes the step. A dense value is made anew at each binding (an
    array in a frame is not shared by runs). Once per op and not per core and run: about 300
    bytecodes less per constant bound, 0.2 M machine instructions per timing-only run of the stream
    kernel (9 constants; callgrind)."""
    require(op, results=1)
    res = op.results[0]
    v = op.attrs.get("value")
    tname = scalar_type_name(op.result_types[0]) if op.result_types else "i1"
    if isinstance(v, A.DenseAttr):
        return lambda su, op: _constant_step(su, res, np.array(v.values))
    if not isinstance(v, (bool, int, float)):
        return lambda su, op: fail_step(VerifyError(f"arith.constant with unsupported value {v!r}", op.loc))
    value = _constant_value(v, tname, op)
    return lambda su, op: _constant_step(su, res, value)


def _constant_step(su: ScalarUnit, res: str, value: Any) -> Step:
    cost = su.arith_cost

    def step(frame):
        frame[res] = value
        su.charge(cost)

    return step


def _constant_value(v: float, tname: str, op: A.Op) -> Any:
    """The literal as a value of its type; a literal the type cannot hold is an error, never
    silently rounded or wrapped (``1.5 : index``, ``-1e400 : index``, ``300 : i8``)."""
    if not arith.is_int_type(tname) and not (is_known(tname) and is_float(tname)):
        raise VerifyError(f"arith.constant of type {tname} is not supported (unknown or not a scalar type)",
                          op.loc)
    if isinstance(v, bool):
        return int(v) if tname != "i1" else bool(v)
    if is_float(tname):
        with np.errstate(over="ignore"):  # an overflow is the error said below, not a warning
            value = arith.to_float(float(v), tname) if math.isfinite(float(v)) else float(v)
        if not math.isfinite(value) and not (isinstance(v, A.BitPatternFloat) and not math.isfinite(v)):
            raise VerifyError(f"arith.constant {v} is out of range for {tname}", op.loc)
        return value
    if isinstance(v, float) and (not math.isfinite(v) or not v.is_integer()):
        raise VerifyError(f"arith.constant {v} is not an integer, but its type is {tname}", op.loc)
    if not arith.fits(int(v), tname):
        raise VerifyError(f"arith.constant {int(v)} is out of range for {tname}", op.loc)
    value = arith.wrap(int(v), tname)
    return bool(value) if tname == "i1" else value


@dataclass(frozen=True, slots=True)
class ArithOperands:
    """What every `arith` step reads: its result name, types and operand names."""

    kind: str  # the op name without 'arith.'
    res: str | None
    tname: str  # result type
    src_t: str  # first operand's type
    a: str | int | None
    b: str | int | None
    loc: Loc

    @staticmethod
    def of(op: A.Op) -> ArithOperands:
        tname = scalar_type_name(op.result_types[0]) if op.result_types else "index"
        return ArithOperands(
            kind=op.name[6:], res=op.results[0] if op.results else None, tname=tname,
            src_t=scalar_type_name(op.operand_types[0]) if op.operand_types else tname,
            a=op.operands[0] if op.operands else None, b=op.operands[1] if len(op.operands) > 1 else None,
            loc=op.loc)


def lower_arith(su: ScalarUnit, op: A.Op) -> Step:
    """Integer and float arithmetic, compares, select and casts on the scalar unit."""
    lowering = prepare_arith(op, su.isa, su.machine)
    return fail_step(lowering) if isinstance(lowering, Exception) else lowering(su, op)


def prepare_arith(op: A.Op, isa: Any, machine: Any) -> Lowering | Exception:
    """What binding an `arith` op decides from the op alone (its operands and types, their count
    checked), once per op (binding.lowering_of: kept per module, ISA and machine), and the lowering
    that then only makes the step; the error binding raises, if any."""
    o = ArithOperands.of(op)
    n_operands = 1 if o.kind == "negf" or o.kind in arith.CAST_OPS else 3 if o.kind == "select" else 2
    require(op, operands=n_operands, results=1)
    if o.kind in arith.INT_BINARY:
        return lambda su, op: _lower_int_binary(su, o)
    if o.kind in arith.FLOAT_BINARY:
        return lambda su, op: _lower_float_binary(su, o)
    if o.kind in ("cmpi", "cmpf"):
        return lambda su, op: _lower_compare(su, op, o)
    if o.kind in ("negf", "select") or o.kind in arith.CAST_OPS:
        return lambda su, op: _lower_unary_or_select(su, op, o)
    return UnsupportedOpError(f"{op.name} is not supported by the emulator yet", o.loc)


def _lower_int_binary(su: ScalarUnit, o: ArithOperands) -> Step:
    fn = arith.INT_BINARY[o.kind]
    is_bool = o.tname == "i1"
    res, tname, a_name, b_name, loc, kind, cost, get = o.res, o.tname, o.a, o.b, o.loc, o.kind, su.arith_cost, su.value
    read = values_of([a_name, b_name])
    low, high = arith.unwrapped(tname)
    wrap = arith.wrap

    def step(frame):  # (per loop iteration, an induction variable's: its calls written out)
        try:
            a, b = read(frame)
        except KeyError:  # says which is undefined
            a, b = get(frame, a_name, loc), get(frame, b_name, loc)
        try:
            r = fn(int(a), int(b), tname)
            if not low <= r <= high:  # wrap(r) is r within
                r = wrap(r, tname)
        except ZeroDivisionError:
            raise KernelFault(f"arith.{kind}: division by zero", loc) from None
        except arith.UndefinedIntegerResult as e:
            raise KernelFault(f"arith.{kind}: {e}", loc) from None
        frame[res] = bool(r) if is_bool else r
        su.vclock += cost  # su.charge(cost), inline
        su.own_busy += cost
        su.own_count += 1

    return step


def _lower_float_binary(su: ScalarUnit, o: ArithOperands) -> Step:
    fn2 = arith.FLOAT_BINARY[o.kind]
    res, tname, a_name, b_name, loc, cost, get = o.res, o.tname, o.a, o.b, o.loc, su.arith_cost, su.value

    def step(frame):
        frame[res] = arith.to_float(fn2(float(get(frame, a_name, loc)), float(get(frame, b_name, loc))),
                                    tname)
        su.charge(cost)

    return step


def _lower_compare(su: ScalarUnit, op: A.Op, o: ArithOperands) -> Step:
    res, a_name, b_name, loc, cost, get = o.res, o.a, o.b, o.loc, su.arith_cost, su.value
    pred = str(op.attrs.get("predicate"))
    if o.kind == "cmpi":
        cmp = arith.CMPI.get(pred)
        if cmp is None:
            return fail_step(VerifyError(f"arith.cmpi: unknown predicate '{pred}'", loc))
        ctype = o.src_t

        def step(frame):
            frame[res] = bool(cmp(int(get(frame, a_name, loc)), int(get(frame, b_name, loc)), ctype))
            su.charge(cost)

        return step
    if pred not in arith.CMPF_PREDICATES:
        return fail_step(VerifyError(f"arith.cmpf: unknown predicate '{pred}'", loc))

    def step_f(frame):
        frame[res] = arith.cmpf(pred, float(get(frame, a_name, loc)), float(get(frame, b_name, loc)))
        su.charge(cost)

    return step_f


def _lower_unary_or_select(su: ScalarUnit, op: A.Op, o: ArithOperands) -> Step:
    res, a_name, b_name, loc, kind, cost, get = o.res, o.a, o.b, o.loc, o.kind, su.arith_cost, su.value
    if kind == "negf":
        def step(frame):
            frame[res] = -float(get(frame, a_name, loc))
            su.charge(cost)

        return step
    if kind == "select":
        c_name = op.operands[2] if len(op.operands) > 2 else None

        def step_select(frame):
            p = get(frame, a_name, loc)
            frame[res] = get(frame, b_name, loc) if p else get(frame, c_name, loc)
            su.charge(cost)

        return step_select
    src_t, tname = o.src_t, o.tname

    def step_cast(frame):
        try:
            frame[res] = arith.cast(kind, get(frame, a_name, loc), src_t, tname)
        except ValueError as e:
            raise KernelFault(str(e), loc) from None
        su.charge(cost)

    return step_cast


def lower_for(su: ScalarUnit, op: A.Op) -> Step:
    require(op, operands=3, regions=1)
    if not op.regions[0].args:
        raise VerifyError("scf.for needs an induction variable (its body's first argument)", op.loc)
    lb, ub, st, *inits = op.operands
    body = op.regions[0]
    iv, *iter_names = body.args
    results = op.results
    loc = op.loc
    cost = su.arith_cost

    def run(frame):
        lo, hi, step_v = (int(su.value(frame, x, loc)) for x in (lb, ub, st))
        if step_v <= 0:
            raise KernelFault(f"scf.for step must be positive, got {step_v}", loc)
        carried = [su.value(frame, x, loc) for x in inits]
        i = lo
        while i < hi:
            su.count_step(op)
            frame[iv] = i
            if iter_names:  # (a zip() with a keyword costs even when there is nothing to zip)
                for n, v in zip(iter_names, carried, strict=False):
                    frame[n] = v
            frame["__yield__"] = None
            yield from su.exec_region(body, frame)
            y = frame.pop("__yield__", None)
            if iter_names:
                if y is None or len(y) != len(iter_names):
                    raise VerifyError(f"scf.for body must yield {len(iter_names)} values", loc)
                carried = y
            su.vclock += cost  # su.charge(cost), inline (per iteration)
            su.own_busy += cost
            su.own_count += 1
            i += step_v
        for n, v in zip(results, carried, strict=False):
            frame[n] = v

    return run


def lower_yield(su: ScalarUnit, op: A.Op) -> Step:
    names = op.operands
    loc = op.loc

    def step(frame):
        frame["__yield__"] = [su.value(frame, n, loc) for n in names]

    return step


def lower_if(su: ScalarUnit, op: A.Op) -> Step:
    require(op, operands=1, regions=1)
    cond = op.operands[0]
    then_r = op.regions[0]
    else_r = op.regions[1] if len(op.regions) > 1 else None
    results = op.results
    loc = op.loc

    def run(frame):
        su.charge(su.arith_cost)
        region = then_r if su.value(frame, cond, loc) else else_r
        frame["__yield__"] = None
        if region is not None:
            yield from su.exec_region(region, frame)
        y = frame.pop("__yield__", None)
        if results:
            if y is None or len(y) != len(results):
                raise VerifyError(f"scf.if must yield {len(results)} values in each branch", loc)
            for n, v in zip(results, y, strict=False):
                frame[n] = v

    return run


def lower_while(su: ScalarUnit, op: A.Op) -> Step:
    require(op, regions=2)
    before, after = op.regions[0], op.regions[1]
    inits = op.operands
    results = op.results
    loc = op.loc

    def run(frame):
        carried = [su.value(frame, x, loc) for x in inits]
        while True:
            su.count_step(op)
            for n, v in zip(before.args, carried, strict=False):
                frame[n] = v
            frame["__cond__"] = None
            yield from su.exec_region(before, frame)
            c = frame.pop("__cond__", None)
            if c is None:
                raise VerifyError("scf.while: the before region must end with scf.condition", loc)
            go, vals = c
            if not go:
                for n, v in zip(results, vals, strict=False):
                    frame[n] = v
                return
            for n, v in zip(after.args, vals, strict=False):
                frame[n] = v
            frame["__yield__"] = None
            yield from su.exec_region(after, frame)
            carried = frame.pop("__yield__", None) or []

    return run


def lower_condition(su: ScalarUnit, op: A.Op) -> Step:
    require(op, operands=1)
    cond, *rest = op.operands
    loc = op.loc

    def step(frame):
        frame["__cond__"] = (bool(su.value(frame, cond, loc)), [su.value(frame, n, loc) for n in rest])

    return step


def lower_call(su: ScalarUnit, op: A.Op) -> Step:
    callee = str(op.attrs.get("callee", "")).lstrip("@")
    loc = op.loc
    results = op.results

    def run(frame):
        fn = su.functions.get(callee)
        if fn is None:
            raise VerifyError(f"call to unknown function @{callee}", loc)
        args = [su.value(frame, n, loc) for n in op.operands]
        if len(args) != len(fn.args):
            raise VerifyError(f"@{callee} takes {len(fn.args)} arguments, {len(args)} given", loc)
        su.charge(su.arith_cost)
        inner = dict(zip(fn.args, args, strict=False))
        values: list = []
        try:
            yield from su.exec_region(fn.body, inner)
        except Return as r:
            values = r.values
        for n, v in zip(results, values, strict=False):
            frame[n] = v

    return run


def lower_return(su: ScalarUnit, op: A.Op) -> Step:
    names = op.operands
    loc = op.loc

    def step(frame):
        raise Return([su.value(frame, n, loc) for n in names])

    return step


def memref_alloc_tile_type(t: A.Type | None) -> A.TileBufType | None:
    """The tile a ``memref.alloc`` of type ``t`` is (spec §2.8: a local-space memref is a tile in
    that loc, row-major, valid = its full shape); None for a type the emulator does not allocate."""
    if not isinstance(t, A.MemRefType) or t.space == "gm" or len(t.shape) != 2 or None in t.shape:
        return None
    return A.TileBufType(loc=LOC_OF_SPACE.get(t.space, t.space), dtype=t.elem, rows=t.shape[0],
                         cols=t.shape[1], v_row=t.shape[0], v_col=t.shape[1])


def lower_memref_alloc(su: ScalarUnit, op: A.Op) -> Step:
    tile_t = memref_alloc_tile_type(op.result_types[0] if op.result_types else None)
    if tile_t is None:
        return fail_step(UnsupportedOpError("memref.alloc of this type is not supported by the emulator yet",
                                        op.loc))
    fake = A.Op("pto.alloc_tile", op.loc, results=op.results, result_types=[tile_t])
    return lower_alloc_tile(su, fake, key=op)


def lower_reinterpret_cast(su: ScalarUnit, op: A.Op) -> Step:
    """``memref.reinterpret_cast %m to offset: [o], sizes: [..], strides: [..]`` over a GM memref:
    a view of the same buffer whose element ``(k0..kn)`` is ``o + sum(k_i * s_i)`` from the buffer's
    start (MLIR: the offset replaces the source's, it does not add to it). Sizes, strides and the
    offset may be SSA values. Only GM memrefs are cast (§3.3: the corpus casts GM only)."""
    require(op, operands=1, results=1)
    t = op.result_types[0] if op.result_types else None
    loc = op.loc
    if not isinstance(t, A.MemRefType) or t.space not in (None, "gm"):
        return fail_step(UnsupportedOpError("memref.reinterpret_cast of a non-GM memref is not supported by the "
                                            "emulator yet", loc))
    src, res = op.operands[0], op.results[0]
    offsets, sizes_n, strides_n = (op.groups.get(k, []) for k in ("offsets", "sizes", "strides"))
    if len(offsets) > 1 or len(sizes_n) != len(strides_n) or not sizes_n:
        return fail_step(VerifyError(f"memref.reinterpret_cast: {len(offsets)} offsets, {len(sizes_n)} sizes and "
                                     f"{len(strides_n)} strides (one offset, as many strides as sizes)", loc))

    def step(frame):
        view = su.value(frame, src, loc)
        if not isinstance(view, PartitionView):
            raise VerifyError(f"memref.reinterpret_cast needs a GM memref operand, got {src}", loc)
        base = int(su.value(frame, offsets[0], loc)) if offsets else 0
        if base < 0:
            raise BoundsError(f"memref.reinterpret_cast: offset {base} must not be negative", loc)
        sizes, strides = noted_view_dims(su, frame, Ptr(view.gm, base), sizes_n, strides_n,
                                         "memref.reinterpret_cast", loc)
        cast = PartitionView(view.gm, base, sizes, strides)
        cast.check_bounds(loc)
        frame[res] = cast
        su.charge(su.arith_cost)

    return step


# tile_buf_config values (§2.9), by key: enum names and their integer codes
_CONFIG_CODES = {
    "blayout": ("row_major", "col_major"),
    "slayout": ("none_box", "row_major", "col_major"),
    "pad": ("null", "zero", "max", "min"),
    "compact": ("null", "normal", "row_plus_one"),
}


def _config(attr, loc: Loc) -> dict:
    """``#pto.tile_buf_config<blayout=..., slayout=..., s_fractal_size=..., pad=..., compact=...>``
    as TileBufType fields (keys in any order, enum attributes or plain integers)."""
    fields: dict = {}
    for key, value in getattr(attr, "entries", ()):
        raw = value.value if isinstance(value, A.EnumAttr) else value
        if key == "s_fractal_size":
            fields["fractal"] = int(raw)
            continue
        names = _CONFIG_CODES.get(key)
        if names is None:
            raise VerifyError(f"pto.bind_tile: unknown tile_buf_config key '{key}'", loc)
        if isinstance(raw, str) and raw in names:
            code = names.index(raw)
        elif isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < len(names):
            code = raw
        else:
            raise VerifyError(f"pto.bind_tile: {key} = {raw} (known: {', '.join(names)})", loc)
        fields[key] = names[code] if key in ("blayout", "slayout") else code
    return fields


def lower_bind_tile(su: ScalarUnit, op: A.Op) -> Step:
    """``pto.bind_tile %m, %vr, %vc {config = #pto.tile_buf_config<...>}`` (memref level, §2.8): the
    local buffer ``%m`` seen as a tile with that layout/pad and the valid region ``vr x vc``."""
    require(op, operands=3, results=1)
    loc = op.loc
    src_n, vr_n, vc_n = op.operands
    res = op.results[0]
    try:
        fields = _config(op.attrs.get("config"), loc)
    except VerifyError as e:
        return fail_step(e)

    def step(frame):
        src = su.value(frame, src_n, loc)
        if not isinstance(src, Tile):
            raise VerifyError(f"pto.bind_tile needs a local memref (memref.alloc) operand, got {src_n}", loc)
        vr, vc = int(su.value(frame, vr_n, loc)), int(su.value(frame, vc_n, loc))
        if not (0 <= vr <= src.rows and 0 <= vc <= src.cols):
            raise BoundsError(f"pto.bind_tile: valid region {vr}x{vc} outside the buffer's {src.rows}x{src.cols}", loc)
        t = A.TileBufType(loc=src.type.loc, dtype=src.type.dtype, rows=src.rows, cols=src.cols, v_row=None,
                          v_col=None, **fields)
        frame[res] = src.retyped(t, np_dtype(t.dtype), vr, vc, res)
        su.charge(su.arith_cost)

    return step


LOWERINGS: dict[str, Lowering] = {
    "arith.constant": lower_constant,
    "scf.for": lower_for,
    "scf.yield": lower_yield,
    "scf.if": lower_if,
    "scf.while": lower_while,
    "scf.condition": lower_condition,
    "func.call": lower_call,
    "func.return": lower_return,
    "memref.alloc": lower_memref_alloc,
    "memref.dealloc": lower_noop,
    "memref.reinterpret_cast": lower_reinterpret_cast,
    "pto.bind_tile": lower_bind_tile,
}

# Ops whose lowering does the work that depends on the op, the ISA and the machine alone once per
# op: (op, isa, machine) -> the lowering that makes the step, or the error binding the op raises
# (binding.lowering_of keeps the lowering per module, ISA and machine; an error is made anew)
PREPARED_LOWERINGS: dict[str, Callable[[A.Op, Any, Any], Lowering | Exception]] = {"arith.constant": prepare_constant}
for _k in list(arith.INT_BINARY) + list(arith.FLOAT_BINARY) + list(arith.CAST_OPS) + [
        "cmpi", "cmpf", "select", "negf"]:
    PREPARED_LOWERINGS["arith." + _k] = prepare_arith
