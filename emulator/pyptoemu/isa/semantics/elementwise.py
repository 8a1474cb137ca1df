"""Elementwise tile-tile, tile-scalar, unary and ternary ops (§4.3-§4.5).

Domain: dst's valid region ``VR x VC``; sources are read at the same ``(i, j)``. f16/bf16 compute in
f32 and round once; integers wrap. IEEE results for float x/0 and domain errors. Integer results
that have no value are faults naming the element and its operands (exit 1), as the scalar arith ops
fault (core/arith.py): division, remainder and fmod by 0, the signed quotient min / -1, a shift by a
count outside [0, bit width).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ptoisa.dtypes import is_float
from pyptoemu.errors import OperandError, UndefinedResultError
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.ieee import QUIET
from pyptoemu.isa.semantics.common import (
    compute_dtype,
    finish,
    region,
    region_reader,
    scalar_as,
    split_tile_scalar,
)
from pyptoemu.isa.semantics.registry import Run, prepared, semantics

Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _undefined_at(bad: np.ndarray, x: np.ndarray, y: np.ndarray, what: str, sign: str) -> UndefinedResultError:
    """The fault for the first element (row-major) of the destination's valid region whose integer
    result is undefined: its index and both operand values, so the author can find the bad data."""
    xb, yb, bb = np.broadcast_arrays(x, y, bad)
    idx = tuple(int(i) for i in np.argwhere(bb)[0])
    where = f"element {idx}" if idx else "the element"
    return UndefinedResultError(f"{what} at {where}: {int(xb[idx])} {sign} {int(yb[idx])} (the result is undefined; "
                        f"{int(np.count_nonzero(bb))} element(s) of the valid region are affected)")


def _check_int_divisor(x: np.ndarray, y: np.ndarray, sign: str, quotient: bool) -> None:
    """Integer division and remainder by 0 have no result, and neither has the signed quotient
    min / -1 (it does not fit): a fault, as the scalar ``arith.divsi`` / ``remsi`` (core/arith.py),
    never the 0 or -1 one machine happens to give. min % -1 is 0 (exact, it fits)."""
    zero = y == 0
    if np.any(zero):
        raise _undefined_at(zero, x, y, "integer division by zero", sign)
    if quotient and x.dtype.kind == "i":
        over = (x == np.iinfo(x.dtype).min) & (y == -1)
        if np.any(over):
            raise _undefined_at(over, x, y, f"signed division overflow (the quotient does not fit {x.dtype})",
                                sign)


def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """C-style integer division (toward zero); by 0 and min / -1 are faults."""
    _check_int_divisor(x, y, "/", quotient=True)
    q = np.floor_divide(x, y)
    fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
    return q + fix.astype(q.dtype)


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x / y if x.dtype.kind == "f" else _int_div(x, y)


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Floored remainder ``x - floor(x/y)*y`` (sign of y); integer by 0 is a fault."""
    if x.dtype.kind == "f":
        return np.mod(x, y)
    _check_int_divisor(x, y, "%", quotient=False)
    return np.mod(x, y)


def _fmod(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Truncated remainder (sign of x); integer by 0 is a fault."""
    if x.dtype.kind == "f":
        return np.fmod(x, y)
    _check_int_divisor(x, y, "fmod", quotient=False)
    return np.fmod(x, y)


def _shift_count(y: np.ndarray, x: np.ndarray, sign: str) -> np.ndarray:
    """The shift counts as ``x``'s type, when every one is in ``[0, bit width)``: a count outside
    has no defined result (C and MLIR's shli/shrsi leave it undefined), so it is a fault, as the
    scalar ``arith.shli`` (core/arith.py), not the 0 / -1 NumPy happens to give."""
    bits = x.dtype.itemsize * 8
    wide = np.asarray(y).astype(np.int64)
    bad = (wide < 0) | (wide >= bits)
    if np.any(bad):
        raise _undefined_at(bad, x, wide, f"shift amount outside [0, {bits}) for {x.dtype}", sign)
    return np.asarray(y).astype(x.dtype)


BINARY: dict[str, Binary] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _div,
    "max": np.maximum,
    "min": np.minimum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "shl": lambda x, y: np.left_shift(x, _shift_count(y, x, "<<")),
    "shr": lambda x, y: np.right_shift(x, _shift_count(y, x, ">>")),
    "rem": _rem,
    "fmod": _fmod,
    "lrelu": lambda x, s: np.where(x > 0, x, x * s),
}


def _dst_block(outs: list[Arg]) -> tuple[Arg, int, int, np.dtype]:
    d = outs[0]
    return d, d.vrow, d.vcol, compute_dtype(d.dtype_name)


def _make_binary(name: str, op: Binary, with_tile: bool = True) -> None:
    def tile_tile(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
        d, r, c, ct = _dst_block(outs)
        read_x, read_y = region_reader(ins[0], r, c, ct), region_reader(ins[1], r, c, ct)
        dname = d.dtype_name

        def run(values: list) -> list[np.ndarray | None]:
            return [finish(op(read_x(values[0]), read_y(values[1])), dname)]

        return run

    def tile_scalar(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
        d, r, c, ct = _dst_block(outs)
        tile, _scalar, scalar_first = split_tile_scalar(ins)
        at, at_scalar = (1, 0) if scalar_first else (0, 1)
        read = region_reader(tile, r, c, ct)
        tname, dname = tile.dtype_name, d.dtype_name

        last = [None, None]  # the last scalar value and its conversion (a constant stays the same object)

        def run(values: list) -> list[np.ndarray | None]:
            x = read(values[at])
            v = values[at_scalar]
            if v is last[0]:
                sv = last[1]
            else:
                sv = scalar_as(v, tname)  # a NumPy scalar of the compute type
                if sv.dtype != ct:
                    sv = sv.astype(ct)
                last[0], last[1] = v, sv
            return [finish(op(sv, x) if scalar_first else op(x, sv), dname)]

        return run

    tile_tile.__name__ = f"binary_{name}"
    tile_scalar.__name__ = f"scalar_{name}"
    if with_tile:
        prepared(f"binary_{name}")(tile_tile)
    prepared(f"scalar_{name}")(tile_scalar)


for _name, _op in BINARY.items():
    _make_binary(_name, _op, with_tile=_name != "lrelu")
del _name, _op


@semantics("binary_prelu")
def binary_prelu(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """``a > 0 ? a : a * slope`` with a per-element slope tile."""
    d, r, c, ct = _dst_block(outs)
    x, s = region(ins[0], r, c, ct), region(ins[1], r, c, ct)
    with QUIET:
        return [finish(np.where(x > 0, x, x * s), d.dtype_name)]


_PART: dict[str, Binary] = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}


def _make_part(name: str, op: Binary) -> None:
    def part(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
        """Where both sources are valid: op(a, b); where only one is: its value; else untouched."""
        d, r, c, ct = _dst_block(outs)
        a, b = ins[0], ins[1]
        rows, cols = np.ogrid[:r, :c]
        in_a = (rows < a.vrow) & (cols < a.vcol)
        in_b = (rows < b.vrow) & (cols < b.vcol)
        x = _padded(a, r, c, ct)
        y = _padded(b, r, c, ct)
        cur = region(d, r, c, ct)
        with QUIET:
            res = np.where(in_a & in_b, op(x, y), np.where(in_a, x, np.where(in_b, y, cur)))
        return [finish(res, d.dtype_name)]

    part.__name__ = f"part_{name}"
    semantics(f"part_{name}")(part)


def _padded(arg: Arg, rows: int, cols: int, dtype: np.dtype) -> np.ndarray:
    """``arg.value`` cut or zero-extended to rows x cols (cells outside its shape are unused)."""
    out = np.zeros((rows, cols), dtype)
    rr, cc = min(rows, arg.rows), min(cols, arg.cols)
    out[:rr, :cc] = np.asarray(arg.value)[:rr, :cc]
    return out


for _name, _op in _PART.items():
    _make_part(_name, _op)
del _name, _op


# ------------------------------------------------------------------------------------------- unary


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "recip": lambda x: 1 / x if x.dtype.kind == "f" else _int_div(np.ones_like(x), x),
    "abs": np.abs,
    "neg": np.negative,
    "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "not": np.invert,
}


def _make_unary(name: str, op: Callable[[np.ndarray], np.ndarray]) -> None:
    def unary(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
        d, r, c, ct = _dst_block(outs)
        read, dname = region_reader(ins[0], r, c, ct), d.dtype_name

        def run(values: list) -> list[np.ndarray | None]:
            return [finish(op(read(values[0])), dname)]

        return run

    unary.__name__ = f"unary_{name}"
    prepared(f"unary_{name}")(unary)


for _name, _uop in UNARY.items():
    _make_unary(_name, _uop)
del _name, _uop


# ----------------------------------------------------------------------------------------- ternary


@semantics("ternary_addc")
def ternary_addc(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """``a + b + c``."""
    d, r, c, ct = _dst_block(outs)
    x, y, z = (region(t, r, c, ct) for t in ins[:3])
    with QUIET:
        return [finish(x + y + z, d.dtype_name)]


@semantics("ternary_subc")
def ternary_subc(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """``a - b + c``."""
    d, r, c, ct = _dst_block(outs)
    x, y, z = (region(t, r, c, ct) for t in ins[:3])
    with QUIET:
        return [finish(x - y + z, d.dtype_name)]


def _scalar_between(ins: list[Arg]) -> tuple[Arg, Arg, Arg]:
    a, s, b = ins[0], ins[1], ins[2]
    if s.kind != "scalar":
        raise OperandError("expected ins (tile, scalar, tile)")
    return a, s, b


@semantics("ternary_addsc")
def ternary_addsc(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """``a + s + b``."""
    d, r, c, ct = _dst_block(outs)
    a, s, b = _scalar_between(ins)
    sv = np.asarray(scalar_as(s.value, a.dtype_name)).astype(ct)
    with QUIET:
        return [finish(region(a, r, c, ct) + sv + region(b, r, c, ct), d.dtype_name)]


@semantics("ternary_subsc")
def ternary_subsc(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """``a - s + b``."""
    d, r, c, ct = _dst_block(outs)
    a, s, b = _scalar_between(ins)
    sv = np.asarray(scalar_as(s.value, a.dtype_name)).astype(ct)
    with QUIET:
        return [finish(region(a, r, c, ct) - sv + region(b, r, c, ct), d.dtype_name)]


@semantics("axpy")
def axpy(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """``d = d + t * s`` (reads dst); the scalar takes t's dtype; computed in f32 for floats."""
    d, r, c, _ = _dst_block(outs)
    t, s, _first = split_tile_scalar(ins)
    ct = compute_dtype(d.dtype_name) if is_float(d.dtype_name) else compute_dtype(t.dtype_name)
    sv = np.asarray(scalar_as(s.value, t.dtype_name)).astype(ct)
    with QUIET:
        return [finish(region(d, r, c, ct) + region(t, r, c, ct) * sv, d.dtype_name)]


@prepared("fill_scalar")
def fill_scalar(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
    """texpands: fill dst's valid region with the scalar (converted to dst's dtype)."""
    d = outs[0]
    at = next(i for i, a in enumerate(ins) if a.kind == "scalar")
    shape, dname, dt = (d.vrow, d.vcol), d.dtype_name, d.dtype

    def run(values: list) -> list[np.ndarray | None]:
        return [np.full(shape, scalar_as(values[at], dname), dtype=dt)]

    return run
