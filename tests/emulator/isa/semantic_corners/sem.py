"""Call one instruction's NumPy semantics directly (calling convention in pyptoemu.isa.arg)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoisa.machine import load_machine
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.runnable import load_isa
from pyptoemu.isa.semantics import SEMANTICS

ISA = load_isa(machine=load_machine())
T = Arg.tile
S = Arg.scalar


def call(op: str, ins: list[Arg], outs: list[Arg], attrs: dict[str, Any] | None = None) -> list[np.ndarray]:
    fn = SEMANTICS[ISA.get(op).semantics]
    return fn(ins, outs, attrs or {})


def one(op: str, ins: list[Arg], out: Arg, attrs: dict[str, Any] | None = None) -> np.ndarray:
    return call(op, ins, [out], attrs)[0]


def zeros(rows: int, cols: int, dtype: str, **kw: Any) -> Arg:
    return T(np.zeros((rows, cols)), dtype, **kw)


def row(values: list, dtype: str, **kw: Any) -> Arg:
    """A 1 x n tile holding ``values`` (converted to ``dtype``)."""
    return T(np.array([values], dtype=np.float64 if any(isinstance(v, float) for v in values) else np.int64),
             dtype, **kw)


def cvt(values: list, src: str, dst: str, rmode: str | None = None, sat: str | None = None) -> np.ndarray:
    attrs: dict[str, Any] = {}
    if rmode:
        attrs["rmode"] = rmode
    if sat:
        attrs["sat_mode"] = sat
    return one("tcvt", [row(values, src)], zeros(1, len(values), dst), attrs)[0]


def bits(values: np.ndarray) -> list[int]:
    """Raw bit patterns of a float array (exact comparison incl. signed zero and NaN)."""
    a = np.ascontiguousarray(values)
    return a.view(f"u{a.dtype.itemsize}").ravel().tolist()
