"""Data movement (§4.2): tload/tprefetch, tstore, tmov, textract, tinsert, tfillpad*, ttrans, tsetval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ptoisa.dtypes import is_float, pad_value
from pyptoemu.errors import BoundsError, OperandError
from pyptoemu.isa.arg import Accumulate, Arg
from pyptoemu.isa.ieee import QUIET
from pyptoemu.isa.semantics.common import (
    compute_dtype,
    convert,
    enum_value,
    finish,
    region,
    region_reader,
    reinterpret,
)
from pyptoemu.isa.semantics.registry import Run, prepared, semantics


def _same_bits_or_value(values: np.ndarray, src: Arg, dst: Arg) -> np.ndarray:
    """A plain copy between equal dtypes; a bit copy between distinct dtypes of one size."""
    if src.dtype_name == dst.dtype_name:
        return np.array(values, dtype=dst.dtype, copy=True)
    return reinterpret(values, dst.dtype_name)


def _fill(dst: Arg, block: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """dst's full shape: ``block`` in the top-left ``rows x cols``, dst's pad value elsewhere."""
    out = np.full((dst.rows, dst.cols), pad_value(dst.dtype_name, dst.pad), dtype=dst.dtype)
    out[:rows, :cols] = block
    return out


@prepared("load")
def load(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
    """tload/tprefetch: GM window -> tile over dst's valid region. With a pad code (1 zero, 2 max,
    3 min) the rest of the tile is filled with the pad value (full rows x cols written); with pad 0
    only the valid region is written (hardware leaves the rest unspecified)."""
    src, dst = ins[0], outs[0]
    r, c = dst.vrow, dst.vcol
    if r > src.rows or c > src.cols:
        raise BoundsError(f"tload: tile valid region {r}x{c} exceeds the {src.rows}x{src.cols} GM window")
    read = region_reader(src, r, c)
    padded = not (dst.pad == 0 or (r == dst.rows and c == dst.cols))

    def run(values: list) -> list[np.ndarray | None]:
        block = _same_bits_or_value(read(values[0]), src, dst)
        return [_fill(dst, block, r, c) if padded else block]

    return run


def _relu_of(attrs: dict[str, Any]) -> bool:
    """Whether ``reluPreMode`` asks for max(0, v) before the write."""
    return enum_value(attrs, "reluPreMode", "no_relu") == "normal_relu"


def _relu_max(values: np.ndarray) -> np.ndarray:
    return np.maximum(values, np.zeros((), values.dtype))


def _relu(values: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    return _relu_max(values) if _relu_of(attrs) else values


@prepared("store")
def store(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
    """tstore: tile valid region -> GM window. acc sources convert to the GM dtype (nearest-even,
    saturating), ``reluPreMode = normal_relu`` applies max(0, v) first, ``atomicType = atomic_add``
    adds to the GM contents. A pre-quant scalar operand is ignored (as the reference model does)."""
    src, dst = ins[0], outs[0]
    r, c = src.vrow, src.vcol
    if r > dst.rows or c > dst.cols:
        raise BoundsError(f"tstore: tile valid region {r}x{c} exceeds the {dst.rows}x{dst.cols} GM window")
    read = region_reader(src, r, c)
    relu = _relu_of(attrs)
    sname, dname = src.dtype_name, dst.dtype_name
    converts = sname == dname or src.loc == "acc" or src.dtype.itemsize != dst.dtype.itemsize
    atomic_add = enum_value(attrs, "atomicType", "atomic_none") == "atomic_add"
    ct = compute_dtype(dname) if atomic_add else None

    def run(values: list) -> list[np.ndarray | None]:
        block = read(values[0])
        if relu:
            block = _relu_max(block)
        gm_values = convert(block, sname, dname) if converts else reinterpret(block, dname)
        if atomic_add:
            addend = gm_values.astype(ct)

            def add_to(current: np.ndarray) -> np.ndarray:
                with QUIET:
                    return finish(current.astype(ct) + addend, dname)

            return [Accumulate(addend.shape, add_to)]  # added to GM as it is when the store completes
        return [gm_values]

    return run


@prepared("move")
def move(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> Run:
    """tmov: ``dst[i,j] = convert(src[i,j])`` over src's valid region, then relu
    (``reluPreMode``). The optional fp tile / pre-quant scalar are ignored (reference model)."""
    src, dst = ins[0], outs[0]
    read = region_reader(src, src.vrow, src.vcol)
    relu = _relu_of(attrs)
    sname, dname = src.dtype_name, dst.dtype_name

    def run(values: list) -> list[np.ndarray | None]:
        moved = convert(read(values[0]), sname, dname)
        return [_relu_max(moved) if relu else moved]

    return run


def _index_args(ins: list[Arg], first: int) -> tuple[int, int]:
    idx = [a for a in ins[first:] if a.kind == "scalar"]
    if len(idx) < 2:
        raise OperandError("expected a row and a column index operand")
    return int(idx[0].value), int(idx[1].value)


@semantics("extract")
def extract(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """textract: ``dst[i,j] = convert(src[r+i, c+j])`` over dst's valid region."""
    src, dst = ins[0], outs[0]
    r0, c0 = _index_args(ins, 1)
    if r0 < 0 or c0 < 0 or r0 + dst.vrow > src.rows or c0 + dst.vcol > src.cols:
        raise BoundsError(f"textract: window at ({r0}, {c0}) of {dst.vrow}x{dst.vcol} leaves the "
                          f"{src.rows}x{src.cols} source")
    block = np.asarray(src.value)[r0 : r0 + dst.vrow, c0 : c0 + dst.vcol]
    return [_relu(convert(block, src.dtype_name, dst.dtype_name), attrs)]


@semantics("insert")
def insert(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tinsert: ``dst[r+i, c+j] = convert(src[i,j])`` over src's valid region. Returns dst's block
    ``[0, r+VR) x [0, c+VC)`` with its current contents around the inserted window."""
    src, dst = ins[0], outs[0]
    r0, c0 = _index_args(ins, 1)
    vr, vc = src.vrow, src.vcol
    if r0 < 0 or c0 < 0 or r0 + vr > dst.rows or c0 + vc > dst.cols:
        raise BoundsError(f"tinsert: window at ({r0}, {c0}) of {vr}x{vc} leaves the {dst.rows}x{dst.cols} "
                          "destination")
    out = np.array(np.asarray(dst.value)[: r0 + vr, : c0 + vc], dtype=dst.dtype, copy=True)
    out[r0:, c0:] = _relu(convert(region(src, vr, vc), src.dtype_name, dst.dtype_name), attrs)
    return [out]


@semantics("fillpad")
def fillpad(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tfillpad / tfillpad_expand / tfillpad_inplace: ``dst[i,j] = src[i,j]`` inside src's valid
    region, dst's pad value elsewhere, over dst's whole shape."""
    src, dst = ins[0], outs[0]
    r, c = min(src.vrow, dst.rows), min(src.vcol, dst.cols)
    block = _same_bits_or_value(region(src, r, c), src, dst)
    return [_fill(dst, block, r, c)]


@semantics("transpose")
def transpose(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """ttrans: ``dst[i,j] = src[j,i]`` over src's valid region."""
    src, dst = ins[0], outs[0]
    return [_same_bits_or_value(region(src, src.vrow, src.vcol).T, src, dst)]


@semantics("setval")
def setval(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
    """tsetval: write one scalar at linear (row-major logical) element offset ``off`` of dst."""
    off_arg, val = ins[0], ins[1]
    dst = outs[0]
    off = int(off_arg.value)
    if not 0 <= off < dst.rows * dst.cols:
        raise BoundsError(f"tsetval: offset {off} outside the {dst.rows}x{dst.cols} tile")
    row, col = divmod(off, dst.cols)
    out = np.array(np.asarray(dst.value)[: row + 1], dtype=dst.dtype, copy=True)
    if is_float(dst.dtype_name):
        out[row, col] = np.array(float(val.value)).astype(dst.dtype)
    else:
        out[row, col] = convert(np.array([val.value], dtype=np.int64), "i64", dst.dtype_name, sat="OFF")[0]
    return [out]
