"""The IR types that hold no expression (scalar and tuple types).

They sit below :mod:`pypto.ir.expr` so that an expression can name its own type, while the shaped
types in :mod:`pypto.ir.types` (whose shapes are expressions) sit above it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pypto.dtype import DataType


@dataclass(frozen=True, slots=True)
class ScalarType:
    dtype: DataType


@dataclass(frozen=True, slots=True)
class TupleType:
    types: tuple
