"""Row/column reductions (§4.6) and row/column broadcasts (§4.7).

Reductions iterate over the SOURCE's valid region; f16/bf16 accumulate in f32, integers wrap in
their own type. Expand ops iterate over dst's valid region.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pyptoemu.errors import OperandError
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.semantics.common import compute_dtype, finish, region, region_reader
from pyptoemu.isa.semantics.registry import Run, prepared, semantics

Reducer = Callable[[np.ndarray, int], np.ndarray]


def _sum(x: np.ndarray, axis: int) -> np.ndarray:
    return np.sum(x, axis=axis, dtype=x.dtype)


def _prod(x: np.ndarray, axis: int) -> np.ndarray:
    return np.prod(x, axis=axis, dtype=x.dtype)


REDUCERS: dict[str, Reducer] = {
    "sum": _sum,
    "max": lambda x, axis: np.max(x, axis=axis),
    "min": lambda x, axis: np.min(x, axis=axis),
    "prod": _prod,
    "argmax": lambda x, axis: np.argmax(x, axis=axis),
    "argmin": lambda x, axis: np.argmin(x, axis=axis),
}


def _make_reduce(name: str, fn: Reducer) -> None:
    def row(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
        """dst[i, 0] = reduce_j src[i, j] for i < src.VR, j < src.VC."""
        src, dst = ins[0], outs[0]
        read = region_reader(src, src.vrow, src.vcol, compute_dtype(src.dtype_name))
        shape, dname = (src.vrow, 1), dst.dtype_name

        def run(values: list) -> list[np.ndarray | None]:
            return [finish(fn(read(values[0]), 1).reshape(shape), dname)]

        return run

    def col(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
        """dst[0, j] = reduce_i src[i, j] for i < src.VR, j < src.VC."""
        src, dst = ins[0], outs[0]
        read = region_reader(src, src.vrow, src.vcol, compute_dtype(src.dtype_name))
        shape, dname = (1, src.vcol), dst.dtype_name

        def run(values: list) -> list[np.ndarray | None]:
            return [finish(fn(read(values[0]), 0).reshape(shape), dname)]

        return run

    row.__name__ = f"row_{name}"
    col.__name__ = f"col_{name}"
    prepared(f"row_{name}")(row)
    prepared(f"col_{name}")(col)


for _name, _fn in REDUCERS.items():
    _make_reduce(_name, _fn)
del _name, _fn


# ------------------------------------------------------------------------------------------ expand

EXPAND_OPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": lambda a, b: a / b if a.dtype.kind == "f" else np.where(b == 0, 0, _trunc_div(a, b)),
    "max": np.maximum,
    "min": np.minimum,
    "expdif": lambda a, b: np.exp(a - b),
}


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    safe = np.where(b == 0, 1, b)
    q = np.floor_divide(a, safe)
    return q + ((np.remainder(a, safe) != 0) & ((a < 0) != (safe < 0))).astype(q.dtype)


def _row_operand(x: Arg, rows: int, cols: int, ct: np.dtype) -> Callable[[Any], np.ndarray]:
    """The reader of the per-row operand broadcast to rows x cols: mode 1 (an Rx1 column,
    ``v_col == 1``): ``r_i = x[i, 0]``; mode 2 (ND with ``v_col == 32 / sizeof``):
    ``r_ij = x[i, j mod v_col]``."""
    period = 32 // x.dtype.itemsize
    if x.vcol == 1 or x.cols == 1:
        column = region_reader(x, rows, 1, ct)
        return lambda value: np.broadcast_to(column(value), (rows, cols))
    if x.vcol == period:
        block, repeat = region_reader(x, rows, period, ct), np.arange(cols) % period
        return lambda value: block(value)[:, repeat]
    raise OperandError(f"row-broadcast operand must have v_col 1 (Rx1) or {period} (32 bytes), got {x.vcol}")


def _col_operand(x: Arg, rows: int, cols: int, ct: np.dtype) -> Callable[[Any], np.ndarray]:
    """The reader of the per-column operand (a 1 x cols row) broadcast to rows x cols."""
    line = region_reader(x, 1, cols, ct)
    return lambda value: np.broadcast_to(line(value), (rows, cols))


def _split_full(ins: list[Arg], dst: Arg) -> tuple[int, Arg, Arg]:
    """(index of the full-shape operand among the first two ins, full, broadcast operand)."""
    a, b = ins[0], ins[1]
    a_full = (a.vrow, a.vcol) == (dst.vrow, dst.vcol)
    b_full = (b.vrow, b.vcol) == (dst.vrow, dst.vcol)
    if b_full and not a_full:
        return 1, b, a
    return 0, a, b


def _make_expand(name: str, op: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
    def prepare(ins: list[Arg], outs: list[Arg], operand: Callable) -> Run:
        """Row or column expand (``operand``: how the broadcast operand is read)."""
        dst = outs[0]
        r, c, ct = dst.vrow, dst.vcol, compute_dtype(dst.dtype_name)
        which, full, bcast = _split_full(ins, dst)
        read_full, read_bcast = region_reader(full, r, c, ct), operand(bcast, r, c, ct)
        at_bcast, dname = 1 - which, dst.dtype_name

        def run(values: list) -> list[np.ndarray | None]:
            x, y = read_full(values[which]), read_bcast(values[at_bcast])
            return [finish(op(x, y) if which == 0 else op(y, x), dname)]

        return run

    def row(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
        return prepare(ins, outs, _row_operand)

    def col(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
        return prepare(ins, outs, _col_operand)

    row.__name__ = f"rowexpand_{name}"
    col.__name__ = f"colexpand_{name}"
    prepared(f"rowexpand_{name}")(row)
    prepared(f"colexpand_{name}")(col)


for _name, _op in EXPAND_OPS.items():
    _make_expand(_name, _op)
del _name, _op


@semantics("rowexpand")
def rowexpand(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """d[i, j] = s[i, 0] over dst's valid region."""
    dst = outs[0]
    block = np.broadcast_to(region(ins[0], dst.vrow, 1), (dst.vrow, dst.vcol))
    return [finish(block, dst.dtype_name)]


@semantics("colexpand")
def colexpand(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """d[i, j] = s[0, j] over dst's valid region."""
    dst = outs[0]
    block = np.broadcast_to(region(ins[0], 1, dst.vcol), (dst.vrow, dst.vcol))
    return [finish(block, dst.dtype_name)]
