"""`arith` dialect semantics on Python scalars (pto-text-format §3.1).

Integers are Python ints wrapped to their bit width (two's complement; ``index`` is 64-bit); floats
are rounded to their type through NumPy scalars, so ``arith.addf`` on ``f16`` rounds like hardware.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ptoisa.dtypes import np_dtype
from pyptoemu.isa.ieee import QUIET

INT_BITS = {"index": 64, "i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
            "ui8": 8, "ui16": 16, "ui32": 32, "ui64": 64}


def wrap(value: int, type_name: str) -> int:
    """Two's-complement wrap of ``value`` to the width of ``type_name`` (i1 stays 0/1)."""
    bits = INT_BITS.get(type_name, 64)
    if bits == 1:
        return int(value) & 1
    mask = (1 << bits) - 1
    v = int(value) & mask
    if not type_name.startswith("ui") and v >> (bits - 1):
        v -= 1 << bits
    return v


def unwrapped(type_name: str) -> tuple[int, int]:
    """(lowest, highest): the integers :func:`wrap` leaves as they are for ``type_name`` (those of
    its width, signed or, for ``ui*`` and i1, unsigned). A scalar step compares its result with
    them and calls ``wrap`` only outside, where it changes something: nearly never (an induction
    variable, an offset) and so a call less per integer op (tests/emulator/core/test_arith_wrap.py)."""
    bits = INT_BITS.get(type_name, 64)
    if bits == 1 or type_name.startswith("ui"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def fits(value: int, type_name: str) -> bool:
    """Whether an integer literal is representable in ``type_name``: its signed or its unsigned
    reading (``0xFFFFFFFF : i32`` is -1, as in MLIR); i1 takes 0, 1 and -1."""
    bits = INT_BITS.get(type_name, 64)
    return -(1 << (bits - 1)) <= value < (1 << bits) if bits > 1 else value in (-1, 0, 1)


def unsigned(value: int, type_name: str) -> int:
    bits = INT_BITS.get(type_name, 64)
    return int(value) & ((1 << bits) - 1)


def to_float(value: float, type_name: str) -> float:
    """Round a Python float to ``type_name`` (f16/bf16/f32 keep their precision)."""
    if type_name == "f64":
        return float(value)
    return float(np.asarray(value, dtype=np.float64).astype(np_dtype(type_name)))


class UndefinedIntegerResult(ArithmeticError):
    """An integer op whose result MLIR leaves undefined (signed division overflow, a shift by the bit
    width or more): reported as a fault rather than answered with one machine's guess."""


def _check_signed_quotient(q: int, t: str) -> int:
    """``q`` unchanged if it fits ``t``; the one overflowing signed quotient is min // -1."""
    bits = INT_BITS.get(t, 64)
    if bits > 1 and q >= 1 << (bits - 1) and not t.startswith("ui"):  # i1 is held as 0/1 here
        raise UndefinedIntegerResult(f"signed division overflow: the quotient {q} does not fit {t} "
                                     "(the minimum value divided by -1 is undefined)")
    return q


def _shift_amount(b: int, t: str) -> int:
    """The shift count ``b`` (read unsigned) when it is below the bit width of ``t``."""
    bits = INT_BITS.get(t, 64)
    if not 0 <= unsigned(b, t) < bits:
        raise UndefinedIntegerResult(f"shift amount {b} is outside [0, {bits}) for {t} (the result is undefined)")
    return unsigned(b, t)


def _tdiv(a: int, b: int) -> int:
    """Signed division truncating toward zero."""
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trem(a: int, b: int) -> int:
    return a - _tdiv(a, b) * b


def _floordiv(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    return a // b


def _ceildiv(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    return -((-a) // b)


# Binary integer ops: f(a, b, type) on already-wrapped ints; result wrapped by the caller.
INT_BINARY: dict[str, Callable[[int, int, str], int]] = {
    "addi": lambda a, b, t: a + b,
    "subi": lambda a, b, t: a - b,
    "muli": lambda a, b, t: a * b,
    "divsi": lambda a, b, t: _check_signed_quotient(_tdiv(a, b), t),
    "divui": lambda a, b, t: _floordiv(unsigned(a, t), unsigned(b, t)),
    "remsi": lambda a, b, t: _trem(a, b),
    "remui": lambda a, b, t: unsigned(a, t) % unsigned(b, t) if unsigned(b, t) else _floordiv(1, 0),
    "ceildivsi": lambda a, b, t: _check_signed_quotient(_ceildiv(a, b), t),
    "ceildivui": lambda a, b, t: _ceildiv(unsigned(a, t), unsigned(b, t)),
    "floordivsi": lambda a, b, t: _check_signed_quotient(_floordiv(a, b), t),
    "minsi": lambda a, b, t: min(a, b),
    "maxsi": lambda a, b, t: max(a, b),
    "minui": lambda a, b, t: a if unsigned(a, t) <= unsigned(b, t) else b,
    "maxui": lambda a, b, t: a if unsigned(a, t) >= unsigned(b, t) else b,
    "andi": lambda a, b, t: a & b,
    "ori": lambda a, b, t: a | b,
    "xori": lambda a, b, t: a ^ b,
    "shli": lambda a, b, t: a << _shift_amount(b, t),
    "shrsi": lambda a, b, t: a >> _shift_amount(b, t),
    "shrui": lambda a, b, t: unsigned(a, t) >> _shift_amount(b, t),
}


def _fmax(a: float, b: float) -> float:
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def _fmin(a: float, b: float) -> float:
    return math.nan if math.isnan(a) or math.isnan(b) else min(a, b)


def _fdiv(a: float, b: float) -> float:
    with QUIET:
        return float(np.float64(a) / np.float64(b))


FLOAT_BINARY: dict[str, Callable[[float, float], float]] = {
    "addf": lambda a, b: a + b,
    "subf": lambda a, b: a - b,
    "mulf": lambda a, b: a * b,
    "divf": _fdiv,
    "remf": lambda a, b: math.fmod(a, b) if b != 0 else math.nan,
    "maximumf": _fmax,
    "minimumf": _fmin,
    "maxnumf": lambda a, b: b if math.isnan(a) else a if math.isnan(b) else max(a, b),
    "minnumf": lambda a, b: b if math.isnan(a) else a if math.isnan(b) else min(a, b),
}

CMPI: dict[str, Callable[[int, int, str], bool]] = {
    "eq": lambda a, b, t: a == b,
    "ne": lambda a, b, t: a != b,
    "slt": lambda a, b, t: a < b,
    "sle": lambda a, b, t: a <= b,
    "sgt": lambda a, b, t: a > b,
    "sge": lambda a, b, t: a >= b,
    "ult": lambda a, b, t: unsigned(a, t) < unsigned(b, t),
    "ule": lambda a, b, t: unsigned(a, t) <= unsigned(b, t),
    "ugt": lambda a, b, t: unsigned(a, t) > unsigned(b, t),
    "uge": lambda a, b, t: unsigned(a, t) >= unsigned(b, t),
}


def cmpf(pred: str, a: float, b: float) -> bool:
    unordered = math.isnan(a) or math.isnan(b)
    if pred == "false":
        return False
    if pred == "true":
        return True
    if pred == "ord":
        return not unordered
    if pred == "uno":
        return unordered
    base = {"eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b, "ne": a != b}[pred[1:]]
    if pred[0] == "o":
        return (not unordered) and base
    return unordered or base


CMPF_PREDICATES = {"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                   "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"}


def is_int_type(name: str) -> bool:
    return name in INT_BITS


def cast(op: str, value, src: str, dst: str):
    """The arith cast ops (`index_cast`, `extsi`, `sitofp`, ...)."""
    if op in ("index_cast", "extsi", "trunci"):
        return wrap(value, dst)
    if op in ("index_castui", "extui"):
        return wrap(unsigned(value, src), dst)
    if op == "sitofp":
        return to_float(float(value), dst)
    if op == "uitofp":
        return to_float(float(unsigned(value, src)), dst)
    if op in ("fptosi", "fptoui"):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"arith.{op} of {value}")
        return wrap(int(value), dst)
    if op in ("extf", "truncf"):
        return to_float(value, dst)
    if op == "bitcast":
        src_dt, dst_dt = np_dtype(src), np_dtype(dst)
        raw = np.asarray(value, dtype=src_dt).view(dst_dt)
        return raw.item() if dst_dt.kind != "f" else float(raw)
    raise KeyError(op)


CAST_OPS = {"index_cast", "index_castui", "extsi", "extui", "trunci", "sitofp", "uitofp",
            "fptosi", "fptoui", "extf", "truncf", "bitcast"}
