"""Lowering of `arith`, `scf`, `func` and `memref` ops into scalar-unit steps.

Each ``lower_X(su, op)`` runs once per op and returns the step the scalar unit calls on every
execution; structured control flow returns generators so nested regions can wait on pipes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ptoisa.text import ast as A
from pyptoemu.core import arith
from pyptoemu.core.coreops import lower_alloc_tile
from pyptoemu.core.scalar import LOC_OF_SPACE, Return, ScalarUnit, _fail, _scalar_type_name, lower_noop
from pyptoemu.errors import KernelFault, UnsupportedOpError, VerifyError


def lower_constant(su: ScalarUnit, op: A.Op) -> Callable:
    res = op.results[0]
    v = op.attrs.get("value")
    tname = _scalar_type_name(op.result_types[0]) if op.result_types else "i1"
    if isinstance(v, bool):
        value: Any = int(v) if tname != "i1" else bool(v)
    elif isinstance(v, int):
        value = arith.to_float(v, tname) if tname.startswith(("f", "bf")) else arith.wrap(v, tname)
        if tname == "i1":
            value = bool(value)
    elif isinstance(v, float):
        value = arith.to_float(v, tname) if not arith.is_int_type(tname) else arith.wrap(int(v), tname)
    elif isinstance(v, A.DenseAttr):
        value = np.array(v.values)
    else:
        return _fail(VerifyError(f"arith.constant with unsupported value {v!r}", op.loc))
    cost = su.arith_cost

    def step(frame):
        frame[res] = value
        su.charge(cost)

    return step


def lower_arith(su: ScalarUnit, op: A.Op) -> Callable:
    kind = op.name[6:]
    res = op.results[0] if op.results else None
    tname = _scalar_type_name(op.result_types[0]) if op.result_types else "index"
    src_t = _scalar_type_name(op.operand_types[0]) if op.operand_types else tname
    a_name = op.operands[0] if op.operands else None
    b_name = op.operands[1] if len(op.operands) > 1 else None
    cost = su.arith_cost
    loc = op.loc
    get = su.value

    if kind in arith.INT_BINARY:
        fn = arith.INT_BINARY[kind]
        is_bool = tname == "i1"

        def step(frame):
            a, b = get(frame, a_name, loc), get(frame, b_name, loc)
            try:
                r = arith.wrap(fn(int(a), int(b), tname), tname)
            except ZeroDivisionError:
                raise KernelFault(f"arith.{kind}: division by zero", loc) from None
            frame[res] = bool(r) if is_bool else r
            su.charge(cost)

        return step
    if kind in arith.FLOAT_BINARY:
        fn2 = arith.FLOAT_BINARY[kind]

        def step(frame):
            frame[res] = arith.to_float(fn2(float(get(frame, a_name, loc)), float(get(frame, b_name, loc))),
                                        tname)
            su.charge(cost)

        return step
    if kind == "negf":
        def step(frame):
            frame[res] = -float(get(frame, a_name, loc))
            su.charge(cost)

        return step
    if kind == "cmpi":
        pred = str(op.attrs.get("predicate"))
        cmp = arith.CMPI.get(pred)
        if cmp is None:
            return _fail(VerifyError(f"arith.cmpi: unknown predicate '{pred}'", loc))
        ctype = src_t

        def step(frame):
            frame[res] = bool(cmp(int(get(frame, a_name, loc)), int(get(frame, b_name, loc)), ctype))
            su.charge(cost)

        return step
    if kind == "cmpf":
        pred = str(op.attrs.get("predicate"))
        if pred not in arith.CMPF_PREDICATES:
            return _fail(VerifyError(f"arith.cmpf: unknown predicate '{pred}'", loc))

        def step(frame):
            frame[res] = arith.cmpf(pred, float(get(frame, a_name, loc)), float(get(frame, b_name, loc)))
            su.charge(cost)

        return step
    if kind == "select":
        c_name = op.operands[2] if len(op.operands) > 2 else None

        def step(frame):
            p = get(frame, a_name, loc)
            frame[res] = get(frame, b_name, loc) if p else get(frame, c_name, loc)
            su.charge(cost)

        return step
    if kind in arith.CAST_OPS:
        def step(frame):
            try:
                frame[res] = arith.cast(kind, get(frame, a_name, loc), src_t, tname)
            except ValueError as e:
                raise KernelFault(str(e), loc) from None
            su.charge(cost)

        return step
    return _fail(UnsupportedOpError(f"{op.name} is not supported by the emulator yet", loc))


def lower_for(su: ScalarUnit, op: A.Op) -> Callable:
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
            for n, v in zip(iter_names, carried, strict=False):
                frame[n] = v
            frame["__yield__"] = None
            yield from su.exec_region(body, frame)
            y = frame.pop("__yield__", None)
            if iter_names:
                if y is None or len(y) != len(iter_names):
                    raise VerifyError(f"scf.for body must yield {len(iter_names)} values", loc)
                carried = y
            su.charge(cost)
            i += step_v
        for n, v in zip(results, carried, strict=False):
            frame[n] = v

    return run


def lower_yield(su: ScalarUnit, op: A.Op) -> Callable:
    names = op.operands
    loc = op.loc

    def step(frame):
        frame["__yield__"] = [su.value(frame, n, loc) for n in names]

    return step


def lower_if(su: ScalarUnit, op: A.Op) -> Callable:
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


def lower_while(su: ScalarUnit, op: A.Op) -> Callable:
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


def lower_condition(su: ScalarUnit, op: A.Op) -> Callable:
    cond, *rest = op.operands
    loc = op.loc

    def step(frame):
        frame["__cond__"] = (bool(su.value(frame, cond, loc)), [su.value(frame, n, loc) for n in rest])

    return step


def lower_call(su: ScalarUnit, op: A.Op) -> Callable:
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


def lower_return(su: ScalarUnit, op: A.Op) -> Callable:
    names = op.operands
    loc = op.loc

    def step(frame):
        raise Return([su.value(frame, n, loc) for n in names])

    return step


def lower_memref_alloc(su: ScalarUnit, op: A.Op) -> Callable:
    t = op.result_types[0] if op.result_types else None
    if not isinstance(t, A.MemRefType) or t.space == "gm" or len(t.shape) != 2 or None in t.shape:
        return _fail(UnsupportedOpError("memref.alloc of this type is not supported by the emulator yet",
                                        op.loc))
    tile_t = A.TileBufType(loc=LOC_OF_SPACE.get(t.space, t.space), dtype=t.elem, rows=t.shape[0],
                           cols=t.shape[1], v_row=t.shape[0], v_col=t.shape[1])
    fake = A.Op("pto.alloc_tile", op.loc, results=op.results, result_types=[tile_t])
    return lower_alloc_tile(su, fake, key=op)


LOWERINGS: dict[str, Callable[[ScalarUnit, A.Op], Callable]] = {
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
}
for _k in list(arith.INT_BINARY) + list(arith.FLOAT_BINARY) + list(arith.CAST_OPS) + [
        "cmpi", "cmpf", "select", "negf"]:
    LOWERINGS["arith." + _k] = lower_arith
