"""Helpers shared by the semantics modules: compute dtypes, scalar conversion, attribute reading,
and the one element conversion routine (rounding modes and saturation) used by tcvt, tmov, tstore.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ptoisa.dtypes import dtype_info, is_float, is_unsigned, np_dtype
from pyptoemu.errors import OperandError
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.ieee import QUIET

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


_COMPUTE: dict[str, np.dtype] = {}  # compute_dtype by name (asked by every elementwise op)
_DTYPE: dict[str, np.dtype] = {}  # np_dtype by name (asked by every finish)


def compute_dtype(dtype_name: str) -> np.dtype:
    """Arithmetic precision for a tile dtype: f16/bf16/fp8 compute in f32 and round once at the end;
    f32/f64 and integers compute in their own type (integers wrap)."""
    dt = _COMPUTE.get(dtype_name)
    if dt is None:
        dt = (F64 if dtype_name == "f64" else F32) if is_float(dtype_name) else np_dtype(dtype_name)
        _COMPUTE[dtype_name] = dt
    return dt


def region(arg: Arg, rows: int, cols: int, dtype: np.dtype | None = None) -> np.ndarray:
    """``arg.value[:rows, :cols]``, optionally converted to ``dtype``: a copy only when converted,
    else a view of the operand (read-only, as every operand: semantics never mutate what they
    read), so an op computing in the tile's own type reads it without copying it first."""
    value = arg.value
    return region_reader(arg, rows, cols, dtype)(value if value.__class__ is np.ndarray else np.asarray(value))


def whole(value: Any) -> Any:
    """The region reader of an operand read whole in its own type: the value itself."""
    return value


def region_reader(arg: Arg, rows: int, cols: int, dtype: np.dtype | None = None) -> Callable[[Any], np.ndarray]:
    """What :func:`region` does to a value of ``arg``'s shape and dtype, decided from the shape and
    dtype alone (the value is not looked at): the reader of that region (:func:`whole` when it is
    the entire value in its own type). An operand's value is its (rows, cols) array in its dtype
    (isa/arg.py), so a region it cannot hold is said here; the reader takes that array."""
    if not (0 <= rows <= arg.rows and 0 <= cols <= arg.cols):
        raise OperandError(f"{arg.kind} of shape {arg.rows}x{arg.cols} has no {rows}x{cols} region")
    if dtype is not None and arg.dtype == dtype:
        dtype = None
    if rows == arg.rows and cols == arg.cols:
        return whole if dtype is None else lambda value: value.astype(dtype)
    if dtype is None:
        return lambda value: value[:rows, :cols]
    return lambda value: value[:rows, :cols].astype(dtype)


def _dtype(name: str) -> np.dtype:
    """``np_dtype(name)``, memoised (asked by every finish and every plain copy)."""
    dt = _DTYPE.get(name)
    if dt is None:
        dt = _DTYPE[name] = np_dtype(name)
    return dt


def finish(values: np.ndarray, dtype_name: str) -> np.ndarray:
    """Round/wrap computed values into ``dtype_name`` (nearest-even for floats)."""
    dt = _dtype(dtype_name)
    if (values.__class__ is np.ndarray and values.dtype == dt and values.flags.owndata
            and values.flags.c_contiguous):
        return values  # a fresh result of the type already (an op's own array): nothing to convert or copy
    with QUIET:
        return np.ascontiguousarray(np.asarray(values).astype(dt))


# Float types a scalar converts to by NumPy's own scalar constructor: a C cast from the double,
# nearest-even, as the array cast is (checked bit for bit over random doubles and the edges). The
# narrower floats (f16, bf16, fp8) keep the array path: their constructors need not round once.
_DIRECT_FLOAT = {"f32": np.float32, "f64": np.float64}


def scalar_as(value: Any, dtype_name: str) -> np.generic:
    """A scalar operand converted to ``dtype_name`` (floats round to nearest-even, ints wrap)."""
    direct = _DIRECT_FLOAT.get(dtype_name)
    if direct is not None:  # one C cast from the double: what the round trip below does, ~20x cheaper
        return direct(float(value))
    dt = np_dtype(dtype_name)
    if is_float(dtype_name):
        return np.array(float(value), dtype=F64).astype(dt)[()]
    if dtype_name == "i1":
        return np.bool_(bool(value))
    ival = int(value)
    bits = dt.itemsize * 8
    ival &= (1 << bits) - 1
    if not is_unsigned(dtype_name) and ival >= 1 << (bits - 1):
        ival -= 1 << bits
    return dt.type(ival)


def split_tile_scalar(ins: list[Arg]) -> tuple[Arg, Arg, bool]:
    """(tile, scalar, scalar_first) from the first two ``ins`` of a tile-scalar op."""
    a, b = ins[0], ins[1]
    if a.kind == "scalar" and b.kind != "scalar":
        return b, a, True
    if b.kind == "scalar":
        return a, b, False
    raise OperandError("tile-scalar op needs exactly one scalar among its first two operands")


def enum_value(attrs: dict[str, Any], key: str, default: str | None = None) -> str | None:
    """The value of an enum attribute (``EnumAttr.value``), a plain string, or ``default``."""
    v = attrs.get(key)
    if v is None:
        return default
    return str(getattr(v, "value", v))


def int_attr(attrs: dict[str, Any], key: str, default: int) -> int:
    v = attrs.get(key, default)
    return int(getattr(v, "value", v))


def bool_attr(attrs: dict[str, Any], key: str, default: bool) -> bool:
    v = attrs.get(key, default)
    v = getattr(v, "value", v)
    if isinstance(v, str):
        return v.lower() in ("true", "1")
    return bool(v)


# ---------------------------------------------------------------------------------------- conversion

ROUND_MODES = ("NONE", "RINT", "ROUND", "FLOOR", "CEIL", "TRUNC", "ODD", "CAST_RINT")
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _step(y: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The next representable value of y's float type toward +inf (``up``) or -inf."""
    ut = _UINT_OF_SIZE[y.dtype.itemsize]
    bits = y.view(ut).astype(np.int64)
    sign_bit = 1 << (8 * y.dtype.itemsize - 1)
    neg = (bits & sign_bit) != 0
    zero = (bits & (sign_bit - 1)) == 0
    grow = np.where(up, ~neg, neg)  # magnitude grows when moving away from zero
    out = np.where(grow, bits + 1, bits - 1)
    out = np.where(zero, np.where(up, 1, sign_bit | 1), out)
    return out.astype(ut).view(y.dtype)


def _magnitude_step(y: np.ndarray, delta: int) -> np.ndarray:
    ut = _UINT_OF_SIZE[y.dtype.itemsize]
    return (y.view(ut).astype(np.int64) + delta).astype(ut).view(y.dtype)


def _round_to_float(x: np.ndarray, dst: str, rmode: str) -> np.ndarray:
    """Round f64 values ``x`` to float type ``dst`` with a PTO rounding mode."""
    dt = np_dtype(dst)
    with QUIET:
        y = x.astype(dt)
    if rmode in ("RINT", "CAST_RINT", "NONE") or x.size == 0:
        return y
    yd = y.astype(F64)
    finite = np.isfinite(x)
    if rmode == "FLOOR":
        return np.where(finite & (yd > x), _step(y, np.zeros_like(x, bool)), y)
    if rmode == "CEIL":
        return np.where(finite & (yd < x), _step(y, np.ones_like(x, bool)), y)
    if rmode == "TRUNC":
        return np.where(finite & (np.abs(yd) > np.abs(x)), _magnitude_step(y, -1), y)
    if rmode == "ROUND":
        away = _magnitude_step(y, 1)
        with QUIET:
            tie = finite & (np.abs(yd) < np.abs(x)) & ((x - yd) == (away.astype(F64) - x))
        return np.where(tie, away, y)
    if rmode == "ODD":
        neighbour = _step(y, yd < x)
        ut = _UINT_OF_SIZE[dt.itemsize]
        y_odd = (y.view(ut) & 1) == 1
        inexact = finite & (yd != x)
        return np.where(inexact & ~y_odd, neighbour, y)
    raise OperandError(f"unknown round mode '{rmode}' (known: {', '.join(ROUND_MODES)})")


def _round_to_int(x: np.ndarray, rmode: str) -> np.ndarray:
    if rmode in ("RINT", "CAST_RINT"):
        return np.rint(x)
    if rmode == "ROUND":
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    if rmode == "FLOOR":
        return np.floor(x)
    if rmode == "CEIL":
        return np.ceil(x)
    if rmode in ("TRUNC", "NONE"):
        return np.trunc(x)
    if rmode == "ODD":
        fl = np.floor(x)
        return np.where(x == fl, x, np.where(np.fmod(fl, 2) != 0, fl, fl + 1))
    raise OperandError(f"unknown round mode '{rmode}' (known: {', '.join(ROUND_MODES)})")


def convert(values: np.ndarray, src: str, dst: str, rmode: str | None = None,
            sat: str | None = None) -> np.ndarray:
    """Convert ``values`` (dtype ``src``) to ``dst`` as tcvt does (§4.9).

    ``rmode``: RINT/CAST_RINT (default) ties-to-even, ROUND ties-away, FLOOR, CEIL, TRUNC, ODD
    (round to odd), NONE (no rounding step: float->int truncates). It applies to float->int and to
    narrowing float->float (and int->float) conversions, as hardware does.
    ``sat``: "ON" clamps to the destination range (NaN -> 0 for ints); "OFF" wraps integers
    (two's complement) and lets floats overflow to inf; None (absent) clamps integers and lets
    floats overflow (IEEE).
    """
    arr = np.asarray(values)
    if src == dst:  # (rmode None, nearly every tstore / tmov: a copy, nothing else looked up)
        if rmode is not None and is_float(src):  # "f32 rounding": to an integral value, same type
            with QUIET:
                return _round_to_int(arr.astype(F64), rmode.upper()).astype(np_dtype(dst))
        return arr.astype(_dtype(dst), copy=True)
    mode = (rmode or "CAST_RINT").upper()
    ddt = np_dtype(dst)
    with QUIET:
        if is_float(dst) and not is_float(src):
            # int -> float is exact or nearest-even (§4.9), whatever rmode says; a direct cast
            # rounds once (through f64 a 64-bit integer would be rounded twice)
            return np.ascontiguousarray(arr.astype(ddt))
        if is_float(dst):
            xf = arr.astype(F64)  # exact for every float source
            y = _round_to_float(xf, dst, mode)
            big = float(dtype_info(dst).max)
            over = np.isfinite(xf) & (np.abs(xf) > big) & ~np.isfinite(y.astype(F64))
            # a finite value beyond the range: rounding toward zero (or toward the range) stops at
            # the largest finite value (IEEE directed rounding); saturation clamps in every mode
            toward = {"TRUNC": over, "FLOOR": over & (xf > 0), "CEIL": over & (xf < 0)}.get(mode)
            clamp = over if sat == "ON" else toward
            if clamp is not None:
                y = np.where(clamp, np.sign(xf) * big, y.astype(F64)).astype(ddt)
            return np.ascontiguousarray(y.astype(ddt))
        info = np.iinfo(ddt) if dst != "i1" else None
        if is_float(src):
            r = _round_to_int(arr.astype(F64), mode)
            r = np.where(np.isnan(r), 0.0, r)
            if info is None:
                return (r != 0).astype(ddt)
            if sat == "OFF":
                r = np.clip(r, -(2.0**63), 2.0**63 - 1024)
                return r.astype(np.int64).astype(ddt)
            return _saturate_to_int(r, info, ddt)
        xi = arr.astype(np.int64) if np_dtype(src) != np.uint64 else arr
        if info is None:
            return (xi != 0).astype(ddt)
        if sat == "OFF":
            return xi.astype(ddt)
        return np.clip(xi, info.min, info.max).astype(ddt)


def _saturate_to_int(r: np.ndarray, info: np.iinfo, ddt: np.dtype) -> np.ndarray:
    """Integral float values -> integers, clamped to the type's range. Compares in float but
    assigns the bounds as integers: float(2**63 - 1) is 2**63, which would wrap if cast."""
    out = np.empty(r.shape, ddt)
    over = r >= float(info.max)
    under = r <= float(info.min)
    mid = ~(over | under)
    out[mid] = r[mid].astype(ddt)
    out[over] = info.max
    out[under] = info.min
    return out


def reinterpret(values: np.ndarray, dst: str) -> np.ndarray:
    """Same bits, dtype ``dst`` of the same element size."""
    dt = np_dtype(dst)
    arr = np.ascontiguousarray(values)
    if arr.dtype == dt:
        return arr.copy()
    if arr.dtype.itemsize != dt.itemsize:
        raise OperandError(f"cannot reinterpret {arr.dtype} as {dst}: element sizes differ")
    return arr.view(dt).copy()
