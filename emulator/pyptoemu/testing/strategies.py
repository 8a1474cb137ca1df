"""Hypothesis strategies for kernel tests: dtypes, tile shapes, valid regions and input arrays.

Tile shapes follow the machine file: a row of a vec tile is a whole number of the UB's alignment
unit (``buffers.vec.align`` bytes, 32 on A2/A3), so ``cols * itemsize`` is a multiple of it. Needs
hypothesis (``pip install 'pyptoemu[test]'``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ptoisa.dtypes import is_float, itemsize, np_dtype
from ptoisa.machine import load_machine

FLOAT_DTYPES = ("f32", "f16", "bf16")
INT_DTYPES = ("i8", "i16", "i32", "ui8", "ui16", "ui32")


def dtypes(names: Sequence[str] = FLOAT_DTYPES + INT_DTYPES) -> st.SearchStrategy[str]:
    """PTO element type names (``"f32"``, ``"bf16"`` ...); ``ptoisa.dtypes.np_dtype`` gives NumPy's."""
    return st.sampled_from(tuple(names))


def row_unit(dtype: str, machine: str = "a2a3", loc: str = "vec") -> int:
    """Elements per alignment unit of a tile row in ``loc`` (8 f32 or 16 f16 on A2/A3's UB)."""
    return max(load_machine(machine).buffers[loc].align // itemsize(dtype), 1)


@st.composite
def tile_shapes(draw, dtype: str, max_rows: int = 16, max_units: int = 4, machine: str = "a2a3",
                loc: str = "vec") -> tuple[int, int]:
    """(rows, cols) of a row-major tile: 1..max_rows rows, cols a multiple of :func:`row_unit`."""
    rows = draw(st.integers(1, max_rows))
    cols = row_unit(dtype, machine, loc) * draw(st.integers(1, max_units))
    return rows, cols


@st.composite
def valid_regions(draw, rows: int, cols: int) -> tuple[int, int]:
    """(v_row, v_col) inside a rows x cols tile, at least one element."""
    return draw(st.integers(1, rows)), draw(st.integers(1, cols))


@st.composite
def tiles(draw, dtype: str, max_rows: int = 6, max_units: int = 3, machine: str = "a2a3",
          loc: str = "vec") -> tuple[int, int, int, int]:
    """(rows, cols, v_row, v_col): a tile shape and a valid region inside it."""
    rows, cols = draw(tile_shapes(dtype, max_rows, max_units, machine, loc))
    vrow, vcol = draw(valid_regions(rows, cols))
    return rows, cols, vrow, vcol


def arrays(dtype: str, shape: tuple[int, ...], lo: float = -10, hi: float = 10) -> st.SearchStrategy[np.ndarray]:
    """Arrays of ``dtype`` with finite values in [lo, hi] (floats drawn as f32, then rounded to the
    dtype; integers clipped to the dtype's range)."""
    want = np_dtype(dtype)
    if is_float(dtype):
        elements = st.floats(lo, hi, width=32, allow_nan=False, allow_infinity=False)
        return hnp.arrays(np.float32, shape, elements=elements).map(lambda a: a.astype(want))
    info = np.iinfo(want)
    elements = st.integers(max(int(lo), int(info.min)), min(int(hi), int(info.max)))
    return hnp.arrays(want, shape, elements=elements)


def kernel_inputs(dtypes_by_arg: dict[str, str], shape: tuple[int, ...], lo: float = -10,
                  hi: float = 10) -> st.SearchStrategy[dict[str, np.ndarray]]:
    """``{"arg0": array, ...}`` for :func:`pyptoemu.run`: one array per named argument."""
    return st.fixed_dictionaries({name: arrays(dt, shape, lo, hi) for name, dt in dtypes_by_arg.items()})


__all__ = ["FLOAT_DTYPES", "INT_DTYPES", "arrays", "dtypes", "kernel_inputs", "row_unit", "tile_shapes", "tiles",
           "valid_regions"]
