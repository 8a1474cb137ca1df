"""The operand record a semantics function receives.

Calling convention of every function in :data:`pyptoemu.isa.semantics.SEMANTICS`::

    fn(ins: list[Arg], outs: list[Arg], attrs: dict) -> list[np.ndarray | None]

* tile: ``value`` is the tile's full LOGICAL ``rows x cols`` array in ``np_dtype(dtype_name)``
  (layout already undone); ``vrow/vcol`` its valid region; ``pad`` its pad code; ``loc`` its
  location (``vec``, ``mat``, ``left``, ``right``, ``acc``, ``bias``, ``scaling``).
* view (GM window): ``value`` is the 2-D window (row = linearised leading dims, col = last dim),
  ``vrow = rows``, ``vcol = cols``, ``loc = "gm"``.
* scalar: ``value`` is a Python int/float/bool, ``dtype`` its declared type; rows/cols/vrow/vcol 0.

``outs[k].value`` holds the out operand's CURRENT contents. The function returns one entry per out:
an array to be written at the top-left ``(0, 0)`` of that operand, already in its dtype, an
:class:`Accumulate` (a read-modify-write of the operand at completion: atomic adds), or ``None`` for
no write. Functions never mutate ``value`` arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ptoisa.dtypes import np_dtype


@dataclass(slots=True)
class Arg:
    kind: str  # 'tile' | 'view' | 'scalar'
    dtype_name: str
    dtype: np.dtype
    value: Any
    rows: int
    cols: int
    vrow: int
    vcol: int
    pad: int = 0
    loc: str = ""

    @property
    def valid(self) -> np.ndarray:
        """The valid region ``value[:vrow, :vcol]`` (tiles and views)."""
        return self.value[: self.vrow, : self.vcol]

    @classmethod
    def tile(cls, value: np.ndarray, dtype_name: str, vrow: int | None = None, vcol: int | None = None,
             pad: int = 0, loc: str = "vec") -> Arg:
        """A tile operand; ``value`` is converted to the dtype's NumPy type."""
        dt = np_dtype(dtype_name)
        arr = np.asarray(value).astype(dt, copy=False)
        if arr.ndim != 2:
            raise ValueError(f"tile value must be 2-D, got shape {arr.shape}")
        rows, cols = arr.shape
        return cls("tile", dtype_name, dt, arr, rows, cols, rows if vrow is None else vrow,
                   cols if vcol is None else vcol, pad, loc)

    @classmethod
    def view(cls, value: np.ndarray, dtype_name: str) -> Arg:
        """A GM window operand."""
        dt = np_dtype(dtype_name)
        arr = np.asarray(value).astype(dt, copy=False)
        rows, cols = arr.shape
        return cls("view", dtype_name, dt, arr, rows, cols, rows, cols, 0, "gm")

    @classmethod
    def scalar(cls, value: float | bool, dtype_name: str) -> Arg:
        return cls("scalar", dtype_name, np_dtype(dtype_name), value, 0, 0, 0, 0, 0, "")


_VALUE_SLOT = Arg.__dict__["value"]  # the slot behind Arg.value (LazyArg puts the value it read there)


class LazyArg(Arg):
    """An operand whose value is read only when the semantics looks at it. A GM window an op
    writes (tstore's destination) is one: reading it would draw its stand-in numbers, which the
    write then replaces. Behaves as an :class:`Arg` in every other way."""

    __slots__ = ("_read",)

    def __init__(self, read, kind: str, dtype_name: str, dtype: np.dtype, rows: int, cols: int, vrow: int,
                 vcol: int, pad: int = 0, loc: str = "") -> None:
        self._read = read  # () -> the value, called at most once
        self.kind, self.dtype_name, self.dtype = kind, dtype_name, dtype
        self.rows, self.cols, self.vrow, self.vcol, self.pad, self.loc = rows, cols, vrow, vcol, pad, loc

    @property
    def value(self) -> Any:
        read = self._read
        if read is not None:
            self._read = None
            _VALUE_SLOT.__set__(self, read())
        return _VALUE_SLOT.__get__(self)

    @value.setter
    def value(self, v: Any) -> None:
        self._read = None
        _VALUE_SLOT.__set__(self, v)


class Accumulate:
    """A result that lands as a read-modify-write when the instruction completes, not a plain
    store: ``combine(current)`` gets the destination's contents at that moment and returns the
    new ones. Atomic adds into GM use it, so adds from several cores accumulate in completion
    order instead of overwriting each other with what each read at its start."""

    __slots__ = ("combine", "shape")

    def __init__(self, shape: tuple[int, int], combine) -> None:
        self.shape = shape
        self.combine = combine
