"""Elementwise tile-tile, tile-scalar, unary and ternary ops (§4.3-§4.5).

Domain: dst's valid region ``VR x VC``; sources are read at the same ``(i, j)``. f16/bf16 compute in
f32 and round once; integers wrap. IEEE results for x/0 and domain errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ptoisa.dtypes import is_float
from pyptoemu.errors import OperandError
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.ieee import QUIET
from pyptoemu.isa.semantics.common import compute_dtype, finish, region, scalar_as, split_tile_scalar
from pyptoemu.isa.semantics.registry import semantics

Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """C-style integer division (toward zero); x/0 = 0."""
    safe = np.where(y == 0, 1, y)
    q = np.floor_divide(x, safe)
    fix = (np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0))
    return np.where(y == 0, 0, q + fix.astype(q.dtype))


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x / y if x.dtype.kind == "f" else _int_div(x, y)


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Floored remainder ``x - floor(x/y)*y`` (sign of y)."""
    if x.dtype.kind == "f":
        return np.mod(x, y)
    safe = np.where(y == 0, 1, y)
    return np.where(y == 0, 0, np.mod(x, safe))


def _fmod(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Truncated remainder (sign of x)."""
    if x.dtype.kind == "f":
        return np.fmod(x, y)
    safe = np.where(y == 0, 1, y)
    return np.where(y == 0, 0, np.fmod(x, safe))


def _shift_count(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    return y.astype(x.dtype)


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
    "shl": lambda x, y: np.left_shift(x, _shift_count(y, x)),
    "shr": lambda x, y: np.right_shift(x, _shift_count(y, x)),
    "rem": _rem,
    "fmod": _fmod,
    "lrelu": lambda x, s: np.where(x > 0, x, x * s),
}


def _dst_block(outs: list[Arg]) -> tuple[Arg, int, int, np.dtype]:
    d = outs[0]
    return d, d.vrow, d.vcol, compute_dtype(d.dtype_name)


def _make_binary(name: str, op: Binary, with_tile: bool = True) -> None:
    def tile_tile(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
        d, r, c, ct = _dst_block(outs)
        x, y = region(ins[0], r, c, ct), region(ins[1], r, c, ct)
        with QUIET:
            return [finish(op(x, y), d.dtype_name)]

    def tile_scalar(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
        d, r, c, ct = _dst_block(outs)
        tile, s, scalar_first = split_tile_scalar(ins)
        x = region(tile, r, c, ct)
        sv = scalar_as(s.value, tile.dtype_name)  # a NumPy scalar of the compute type
        if sv.dtype != ct:
            sv = sv.astype(ct)
        with QUIET:
            res = op(sv, x) if scalar_first else op(x, sv)
        return [finish(res, d.dtype_name)]

    tile_tile.__name__ = f"binary_{name}"
    tile_scalar.__name__ = f"scalar_{name}"
    if with_tile:
        semantics(f"binary_{name}")(tile_tile)
    semantics(f"scalar_{name}")(tile_scalar)


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
    def unary(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
        d, r, c, ct = _dst_block(outs)
        with QUIET:
            return [finish(op(region(ins[0], r, c, ct)), d.dtype_name)]

    unary.__name__ = f"unary_{name}"
    semantics(f"unary_{name}")(unary)


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


@semantics("fill_scalar")
def fill_scalar(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """texpands: fill dst's valid region with the scalar (converted to dst's dtype)."""
    d = outs[0]
    s = next(a for a in ins if a.kind == "scalar")
    return [np.full((d.vrow, d.vcol), scalar_as(s.value, d.dtype_name), dtype=d.dtype)]
