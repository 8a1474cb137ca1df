"""Constant folding of integer ``arith`` ops for the checks made before anything runs.

A window or an address computed from constants (``%off = arith.muli %c4, %c16 : index``) is as
fixed as a literal one, so the whole-module verifier should check it before the run, as MLIR's
folder would see through it. :func:`fold_integer` gives the value of an integer arith op whose
operands are all known constants, computed by the same functions the scalar unit runs
(:mod:`pyptoemu.core.arith`), wrapped to the result type. What has no value (division by zero,
min / -1, a shift by the width or more) is not folded: the run faults there, at the op.
"""

from __future__ import annotations

from collections.abc import Mapping

from ptoisa.text import ast as A
from pyptoemu.core import arith

_INT_CASTS = ("index_cast", "index_castui", "extsi", "extui", "trunci")


def _type_name(t) -> str | None:
    return t.name if isinstance(t, A.ScalarType) else None


def _value(x: A.Operand, constants: Mapping[str, int]) -> int | None:
    if isinstance(x, bool):
        return None
    return x if isinstance(x, int) else constants.get(x)


def fold_integer(op: A.Op, constants: Mapping[str, int]) -> int | None:
    """The integer value of ``op``'s one result when its operands are constants, else None."""
    if not op.name.startswith("arith.") or len(op.results) != 1 or not op.result_types:
        return None
    kind, res_t = op.name[6:], _type_name(op.result_types[0])
    if res_t is None or not arith.is_int_type(res_t) or res_t == "i1":
        return None
    values = [_value(x, constants) for x in op.operands]
    if not values or None in values:
        return None
    try:
        if kind in arith.INT_BINARY and len(values) == 2:
            return arith.wrap(arith.INT_BINARY[kind](values[0], values[1], res_t), res_t)
        if kind in _INT_CASTS and len(values) == 1:
            src_t = _type_name(op.operand_types[0]) if op.operand_types else None
            if src_t is None or not arith.is_int_type(src_t):
                return None
            return arith.cast(kind, values[0], src_t, res_t)
    except (ZeroDivisionError, arith.UndefinedIntegerResult):
        return None
    return None
