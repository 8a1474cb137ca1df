"""Block (tile) ops: registration with type deduction, plus the IR builder functions (spec §4)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.dtype import DataType, promote
from pypto.enums import ROUND_MODES, AtomicType, CmpType, MemorySpace, PipeType, TilePad
from pypto.errors import PyptoTypeError, Span
from pypto.ir.expr import Call, ConstFloat, ConstInt, Expr, as_expr, static_int
from pypto.ir.registry import create_op_call, register_op
from pypto.ir.type_rules import (
    broadcast_shapes,
    check_boxes,
    check_broadcast_lowerable,
    int_list,
    scalar,
    tensor,
    tile,
    vec_view,
    view_for_space,
)
from pypto.ir.types import ScalarType, TensorType, TileType, dims_equal, shape_str
from pypto.ops.common import dtype_of, scalar_arg, to_tuple
from pypto.ops.isa import compares_i32_for_eq_only, conversions, legal_dtypes, operand_dtypes

BLOCK = "BlockOp"

D = DataType


def check_dtype(name: str, dtype: DataType, span: Span, what: str = "tiles") -> None:
    """Raise at ``span`` when ``name`` does not support ``dtype`` (the legal dtypes of the instruction
    it lowers to, from the ISA spec)."""
    allowed = legal_dtypes(name)
    if allowed is not None and dtype not in allowed:
        short = name.split(".", 1)[1]
        raise PyptoTypeError(
            f"{short}: {dtype.name} {what} are not supported (supported: {', '.join(d.name for d in allowed)})",
            span,
        )


def mask_shape(shape: tuple, span: Span) -> tuple:
    """Shape of the packed predicate tile that ``cmp``/``cmps`` produce for data of ``shape``.

    The compare writes one bit per element, eight per byte, least-significant bit first, one mask row
    per data row (pto-text-format §4.10). The mask is a UINT8 tile with the data's rows and
    ``ceil(C / 8)`` bytes per row, rounded up to 32 bytes so the row meets the vector alignment rule:
    a [16, 64] FP32 compare gives a [16, 32] UINT8 mask, a [8, 512] one a [8, 64] mask. ``sel`` and
    ``sels`` read it back; storing it gives the raw bit pattern.
    """
    cols = static_int(shape[-1])
    if cols is None:
        raise PyptoTypeError("cmp: the last dim of a compared tile must be static", span)
    mask_bytes = (cols + 7) // 8
    mcols = (mask_bytes + 31) // 32 * 32
    return tuple(shape[:-1]) + (ConstInt(mcols, DataType.INDEX),)

def check_own_scratch(name: str, args: list, names: tuple, span: Span) -> None:
    """A scratch operand (``tmp``, ``tmp_tile``) that is also an operand the op reads: the A2/A3
    instruction overwrites its scratch while it reads, so the scratch must be a tile of its own."""
    for i, n in enumerate(names):
        if n.startswith("tmp") and i < len(args) and any(args[i] is args[j] for j in range(len(args)) if j != i):
            raise PyptoTypeError(f"{name}: the scratch tile '{n}' is also an operand it reads; the op overwrites "
                                 f"its scratch while it runs: give it a tile of its own (pl.create_tile)", span)


# ----------------------------------------------------------------------------- elementwise


def _tt(name: str, tmp: bool = False):
    names = ("lhs", "rhs", "tmp") if tmp else ("lhs", "rhs")

    def deduce(args: list, kw: dict, span: Span) -> TileType:
        a, b = tile(name, args, 0, names, span), tile(name, args, 1, names, span)
        shape = broadcast_shapes(a.shape, b.shape, name, span)
        check_broadcast_lowerable(name, a.shape, b.shape, shape, span)
        dt = promote(a.dtype, b.dtype)
        check_dtype(name, dt, span)
        return TileType(shape, dt, tile_view=vec_view(shape, _broadcast_valid(shape, a, b)))

    register_op(name, BLOCK, names, pipe=PipeType.V, min_args=2)(deduce)


def _broadcast_valid(shape: tuple, a: TileType, b: TileType) -> tuple:
    """Valid shape of a broadcast result: that of the operand spanning the whole result (a ``[1, N]``
    operand's single valid row must not shrink an ``[M, N]`` result), else the full shape. When both
    span it, the common part of their valid regions (where both operands hold data), dim by dim for
    static extents: outside it one of the operands would be read in its padding."""
    full = [t for t in (a, b) if len(t.shape) == len(shape)
            and all(dims_equal(x, y) for x, y in zip(t.shape, shape, strict=False))]
    if not full:
        return shape
    valid = list(full[0].valid_shape)
    for t in full[1:]:
        for i, (x, y) in enumerate(zip(valid, t.valid_shape, strict=False)):
            sx, sy = static_int(x), static_int(y)
            if sx is not None and sy is not None and sy < sx:
                valid[i] = y
    return tuple(valid)


def _ts(name: str, tmp: bool = False):
    names = ("lhs", "rhs", "tmp") if tmp else ("lhs", "rhs")

    def deduce(args: list, kw: dict, span: Span) -> TileType:
        a, s = tile(name, args, 0, names, span), scalar(name, args, 1, names, span)
        dt = promote(a.dtype, s.dtype) if not a.dtype.is_int() else a.dtype
        check_dtype(name, a.dtype, span)
        if a.dtype.is_int() and s.dtype.is_float():
            raise PyptoTypeError(f"{name.split('.', 1)[1]}: a {a.dtype.name} tile needs an integer scalar", span)
        return TileType(a.shape, dt, tile_view=vec_view(a.shape, a.valid_shape))

    register_op(name, BLOCK, names, pipe=PipeType.V, min_args=2)(deduce)


def _three(name: str, kinds: str, names: tuple):
    """Three-operand ops; kinds is a string of 't' (tile) / 's' (scalar) per operand."""

    def deduce(args: list, kw: dict, span: Span) -> TileType:
        check_own_scratch(name, args, names, span)
        shape, dt = None, None
        for i, k in enumerate(kinds):
            t = tile(name, args, i, names, span) if k == "t" else scalar(name, args, i, names, span)
            if names[i] == "tmp":
                continue
            dt = t.dtype if dt is None else promote(dt, t.dtype)
            if k == "t" and shape is None:
                shape = t.shape
            elif k == "t":
                # the three-operand instructions have no broadcasting form: operands must match
                check_broadcast_lowerable(name, shape, t.shape, broadcast_shapes(shape, t.shape, name, span), span)
        check_dtype(name, dt, span)
        first = args[0].type
        return TileType(shape, dt, tile_view=vec_view(shape, first.valid_shape))

    register_op(name, BLOCK, names, pipe=PipeType.V)(deduce)


# rem/rems take an optional scratch tile (appended by the compiler before memory planning).
for _n in ("add", "sub", "mul", "div", "maximum", "minimum", "and", "or", "shl", "shr"):
    _tt("block." + _n)
_tt("block.rem", tmp=True)
for _n in ("adds", "subs", "muls", "divs", "maxs", "mins", "lrelu", "ands", "ors", "shls", "shrs"):
    _ts("block." + _n)
_ts("block.rems", tmp=True)
_three("block.addc", "ttt", ("lhs", "rhs", "rhs2"))
_three("block.subc", "ttt", ("lhs", "rhs", "rhs2"))
_three("block.addsc", "tst", ("lhs", "rhs", "rhs2"))
_three("block.subsc", "tst", ("lhs", "rhs", "rhs2"))
_three("block.xor", "ttt", ("lhs", "rhs", "tmp"))
_three("block.xors", "tst", ("lhs", "rhs", "tmp"))
_three("block.prelu", "ttt", ("tile", "slope", "tmp"))


def _unary(name: str):
    names = ("tile",)

    def deduce(args: list, kw: dict, span: Span) -> TileType:
        t = tile(name, args, 0, names, span)
        check_dtype(name, t.dtype, span)
        return TileType(t.shape, t.dtype, tile_view=vec_view(t.shape, t.valid_shape))

    register_op(name, BLOCK, names, pipe=PipeType.V)(deduce)


for _n in ("exp", "neg", "sqrt", "rsqrt", "recip", "log", "abs", "relu", "row_expand", "not"):
    _unary("block." + _n)


@register_op("block.fillpad", BLOCK, ("tile",), attrs={"pad": int}, pipe=PipeType.V)
def _fillpad(args: list, kw: dict, span: Span) -> TileType:
    """Copy of ``tile`` over its full shape: the valid region is kept, the rest gets the pad value."""
    t = tile("block.fillpad", args, 0, ("tile",), span)
    check_dtype("block.fillpad", t.dtype, span)
    pad = TilePad(kw.get("pad", int(TilePad.zero)))
    if pad is TilePad.null:
        raise PyptoTypeError("fillpad: the pad value must be zero, max or min", span)
    return TileType(t.shape, t.dtype, tile_view=vec_view(t.shape, pad=pad))


# ----------------------------------------------------------------------------- reductions


def _row_reduce(name: str):
    names = ("tile", "tmp_tile")

    def deduce(args: list, kw: dict, span: Span) -> TileType:
        t = tile(name, args, 0, names, span)
        tile(name, args, 1, names, span)
        check_own_scratch(name, args, names, span)
        check_dtype(name, t.dtype, span)
        if len(t.shape) < 2:
            raise PyptoTypeError(f"{name}: needs a tile of rank >= 2, got {shape_str(t.shape)}", span)
        shape = t.shape[:-1] + (ConstInt(1, DataType.INDEX),)
        # one result row per valid source row (trowsum & co. write dst[i, 0] for i < src.VR)
        return TileType(shape, t.dtype, tile_view=vec_view(shape, t.valid_shape[:-1] + shape[-1:]))

    register_op(name, BLOCK, names, pipe=PipeType.V)(deduce)


for _n in ("row_sum", "row_max", "row_min"):
    _row_reduce("block." + _n)


def _axis_reduce(name: str):
    names = ("tile",)

    def deduce(args: list, kw: dict, span: Span) -> Any:
        t = tile(name, args, 0, names, span)
        check_dtype(name, t.dtype, span)
        rank = len(t.shape)
        axis = kw.get("axis", 0)
        if not -rank <= axis < rank:
            raise PyptoTypeError(f"{name}: axis {axis} out of range for a rank-{rank} tile", span)
        axis %= rank
        one = (ConstInt(1, DataType.INDEX),)
        if kw.get("keepdim", False):
            shape = t.shape[:axis] + one + t.shape[axis + 1 :]
            valid = t.valid_shape[:axis] + one + t.valid_shape[axis + 1 :]
        else:
            shape = t.shape[:axis] + t.shape[axis + 1 :]
            valid = t.valid_shape[:axis] + t.valid_shape[axis + 1 :]
        if rank != 2 or (axis == 1 and not kw.get("keepdim", False)):
            raise PyptoTypeError(
                f"{name.split('.', 1)[1]}: supported on 2-D tiles over axis 0 (a column reduction) or over "
                f"axis 1 with keepdim=True (a row reduction), got axis {axis} of a rank-{rank} tile"
                + ("" if rank != 2 else " without keepdim"),
                span,
            )
        return TileType(shape, t.dtype, tile_view=vec_view(shape, valid))

    register_op(name, BLOCK, names, attrs={"axis": int, "keepdim": bool}, pipe=PipeType.V)(deduce)


for _n in ("sum", "max", "min"):
    _axis_reduce("block." + _n)

# ----------------------------------------------------------------------------- expand


def _expand(name: str, vec_kind: str):
    names = ("tile", "row_vec" if vec_kind == "row" else "col_vec")

    def deduce(args: list, kw: dict, span: Span) -> TileType:
        t, v = tile(name, args, 0, names, span), tile(name, args, 1, names, span)
        if len(t.shape) != 2 or len(v.shape) != 2:
            raise PyptoTypeError(f"{name}: needs 2-D tiles", span)
        if vec_kind == "row":
            ok = static_int(v.shape[1]) == 1 and (
                dims_equal(v.shape[0], t.shape[0]) or None in (static_int(v.shape[0]), static_int(t.shape[0]))
            )
            want = f"[{shape_str(t.shape[:1])[1:-1]}, 1]"
        else:
            ok = static_int(v.shape[0]) == 1 and dims_equal(v.shape[1], t.shape[1])
            want = f"[1, {shape_str(t.shape[1:])[1:-1]}]"
        if not ok:
            raise PyptoTypeError(
                f"{name}: '{names[1]}' must have shape {want}, got {shape_str(v.shape)}", span
            )
        dt = promote(t.dtype, v.dtype)
        check_dtype(name, dt, span)
        return TileType(t.shape, dt, tile_view=vec_view(t.shape, t.valid_shape))

    register_op(name, BLOCK, names, pipe=PipeType.V)(deduce)


for _n in ("add", "sub", "mul", "div"):
    _expand(f"block.row_expand_{_n}", "row")
for _n in ("mul", "div", "sub"):
    _expand(f"block.col_expand_{_n}", "col")
_expand("block.col_expand", "col")


@register_op("block.expands", BLOCK, ("target", "scalar"), pipe=PipeType.V)
def _expands(args: list, kw: dict, span: Span) -> TileType:
    t = tile("block.expands", args, 0, ("target", "scalar"), span)
    s = scalar("block.expands", args, 1, ("target", "scalar"), span)
    dt = promote(t.dtype, s.dtype) if not t.dtype.is_int() else t.dtype
    check_dtype("block.expands", dt, span)
    return TileType(t.shape, dt, tile_view=vec_view(t.shape, t.valid_shape))


# ----------------------------------------------------------------------------- matmul


def _mm_dtype(name: str, a: TileType, b: TileType, span: Span) -> DataType:
    if a.dtype is not b.dtype:
        raise PyptoTypeError(f"{name}: operand dtypes differ ({a.dtype.name} vs {b.dtype.name})", span)
    legal = operand_dtypes(name, "a")
    if a.dtype not in legal:
        allowed = ", ".join(d.name for d in legal)
        raise PyptoTypeError(f"{name}: {a.dtype.name} operands are not supported (supported: {allowed})", span)
    return accumulator_dtype(a.dtype)


def accumulator_dtype(operand: DataType) -> DataType:
    """The dtype the cube accumulates products of ``operand`` tiles in (L0C holds FP32 or INT32)."""
    return DataType.FP32 if operand.is_float() else DataType.INT32


def _mm_check(name: str, a: TileType, b: TileType, span: Span) -> None:
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise PyptoTypeError(f"{name}: operands must be 2-D tiles", span)
    if not dims_equal(a.shape[1], b.shape[0]) and None not in (static_int(a.shape[1]), static_int(b.shape[0])):
        raise PyptoTypeError(
            f"{name}: K dims differ: lhs is {shape_str(a.shape)}, rhs is {shape_str(b.shape)}", span
        )
    if name.startswith("block.gemv") and static_int(a.shape[0]) != 1:
        raise PyptoTypeError(f"{name}: lhs must be a [1, K] row, got {shape_str(a.shape)}", span)
    # The cube multiplies the valid regions: M = lhs valid rows, K = lhs valid cols, N = rhs valid cols
    # (pto-text-format §4.8), so the two K extents must agree where both are known.
    ka, kb = static_int(a.valid_shape[1]), static_int(b.valid_shape[0])
    if None not in (ka, kb) and ka != kb:
        raise PyptoTypeError(
            f"{name}: valid K extents differ: lhs valid shape is {shape_str(a.valid_shape)}, rhs valid shape "
            f"is {shape_str(b.valid_shape)}",
            span,
        )


def _acc_tile(shape: tuple, dtype: DataType, valid: tuple | None = None) -> TileType:
    return TileType(shape, dtype, tile_view=view_for_space(MemorySpace.Acc, shape, valid))


def _mm_valid(a: TileType, b: TileType) -> tuple:
    """Valid region of a product: the lhs valid rows by the rhs valid cols."""
    return (a.valid_shape[0], b.valid_shape[1])


def _check_acc_valid(name: str, c: TileType, a: TileType, b: TileType, span: Span) -> None:
    """The accumulator's valid region must be the product's: the cube accumulates over (M, N) only."""
    want = _mm_valid(a, b)
    for have, need in zip(c.valid_shape, want, strict=False):
        sh, sn = static_int(have), static_int(need)
        if None not in (sh, sn) and sh != sn:
            raise PyptoTypeError(
                f"{name}: acc valid shape {shape_str(c.valid_shape)} differs from the product's "
                f"{shape_str(want)} (lhs valid rows x rhs valid cols)",
                span,
            )


def _register_mm(kind: str) -> None:
    base = "block." + kind

    @register_op(base, BLOCK, ("lhs", "rhs"), pipe=PipeType.M)
    def _mm(args: list, kw: dict, span: Span) -> TileType:
        a, b = tile(base, args, 0, ("lhs", "rhs"), span), tile(base, args, 1, ("lhs", "rhs"), span)
        _mm_check(base, a, b, span)
        return _acc_tile((a.shape[0], b.shape[1]), _mm_dtype(base, a, b, span), _mm_valid(a, b))

    names = ("acc", "lhs", "rhs")

    @register_op(base + "_acc", BLOCK, names, pipe=PipeType.M)
    def _mm_acc(args: list, kw: dict, span: Span) -> TileType:
        c = tile(base + "_acc", args, 0, names, span)
        a, b = tile(base + "_acc", args, 1, names, span), tile(base + "_acc", args, 2, names, span)
        _mm_check(base + "_acc", a, b, span)
        if not (dims_equal(c.shape[0], a.shape[0]) and dims_equal(c.shape[1], b.shape[1])):
            raise PyptoTypeError(
                f"{base}_acc: acc shape {shape_str(c.shape)} does not match "
                f"[{shape_str(a.shape[:1])[1:-1]}, {shape_str(b.shape[1:])[1:-1]}]",
                span,
            )
        _check_acc_valid(base + "_acc", c, a, b, span)
        return _acc_tile(c.shape, _mm_dtype(base + "_acc", a, b, span), c.valid_shape)

    bnames = ("lhs", "rhs", "bias")

    @register_op(base + "_bias", BLOCK, bnames, pipe=PipeType.M)
    def _mm_bias(args: list, kw: dict, span: Span) -> TileType:
        a, b = tile(base + "_bias", args, 0, bnames, span), tile(base + "_bias", args, 1, bnames, span)
        bias = tile(base + "_bias", args, 2, bnames, span)
        _mm_check(base + "_bias", a, b, span)
        acc = _mm_dtype(base + "_bias", a, b, span)
        if len(bias.shape) != 2 or static_int(bias.shape[0]) != 1 or not dims_equal(bias.shape[1], b.shape[1]):
            raise PyptoTypeError(
                f"{base}_bias: bias must have shape [1, {shape_str(b.shape[1:])[1:-1]}], got {shape_str(bias.shape)}",
                span,
            )
        if bias.dtype is not acc:
            raise PyptoTypeError(f"{base}_bias: bias must be {acc.name} (the accumulator dtype), got {bias.dtype.name}",
                                 span)
        return _acc_tile((a.shape[0], b.shape[1]), acc, _mm_valid(a, b))


_register_mm("matmul")
_register_mm("gemv")

# ----------------------------------------------------------------------------- cast, compare, select


def check_round_mode(name: str, kw: dict, span: Span) -> None:
    """Rounding modes are checked by the op itself, so IR built without the Python wrapper (the
    builder, the text parser) cannot carry an undefined mode into code generation."""
    mode = kw.get("mode", 2)
    if not 0 <= mode < len(ROUND_MODES):
        names = ", ".join(f"{k}={v}" for v, k in enumerate(ROUND_MODES))
        raise PyptoTypeError(f"{name.split('.', 1)[1]}: unknown rounding mode {mode} (use {names})", span)


@register_op("block.cast", BLOCK, ("tile",), attrs={"target_type": DataType, "mode": int}, pipe=PipeType.V)
def _cast(args: list, kw: dict, span: Span) -> TileType:
    t = tile("block.cast", args, 0, ("tile",), span)
    if "target_type" not in kw:
        raise PyptoTypeError("block.cast requires 'target_type'", span)
    dst = kw["target_type"]
    check_round_mode("block.cast", kw, span)
    legal = conversions("block.cast", t.dtype)
    if dst not in legal:
        to = ", ".join(d.name for d in legal) or "nothing"
        raise PyptoTypeError(f"cast: {t.dtype.name} tiles cannot be converted to {dst.name} (supported: {to})", span)
    return TileType(t.shape, dst, tile_view=vec_view(t.shape, t.valid_shape))


def _mask_type(data: TileType, span: Span) -> TileType:
    """The packed mask of a compare over ``data``: one mask row per valid data row (the compare
    writes rows ``i < VR`` only), each row whole (the compare zero-fills it before packing)."""
    mshape = mask_shape(data.shape, span)
    return TileType(mshape, DataType.UINT8, tile_view=vec_view(mshape, tuple(data.valid_shape[:-1]) + mshape[-1:]))


@register_op("block.cmp", BLOCK, ("lhs", "rhs"), attrs={"cmp_type": int}, pipe=PipeType.V)
def _cmp(args: list, kw: dict, span: Span) -> TileType:
    """Element-wise compare into a packed UINT8 predicate mask (see :func:`mask_shape`)."""
    a, b = tile("block.cmp", args, 0, ("lhs", "rhs"), span), tile("block.cmp", args, 1, ("lhs", "rhs"), span)
    if len(a.shape) != len(b.shape) or not all(dims_equal(x, y) for x, y in zip(a.shape, b.shape, strict=False)):
        raise PyptoTypeError(f"cmp: operand shapes differ: {shape_str(a.shape)} and {shape_str(b.shape)}", span)
    if a.dtype is not b.dtype:
        raise PyptoTypeError(f"cmp: operand dtypes differ ({a.dtype.name} vs {b.dtype.name})", span)
    check_dtype("block.cmp", a.dtype, span)
    _cmp_mode("block.cmp", kw, span, a.dtype)
    return _mask_type(a, span)


@register_op("block.cmps", BLOCK, ("lhs", "rhs"), attrs={"cmp_type": int}, pipe=PipeType.V)
def _cmps(args: list, kw: dict, span: Span) -> TileType:
    """Tile-versus-scalar compare into a packed UINT8 predicate mask (see :func:`mask_shape`)."""
    a = tile("block.cmps", args, 0, ("lhs", "rhs"), span)
    scalar("block.cmps", args, 1, ("lhs", "rhs"), span)
    check_dtype("block.cmps", a.dtype, span)
    _cmp_mode("block.cmps", kw, span, a.dtype)
    return _mask_type(a, span)


def _cmp_mode(name: str, kw: dict, span: Span, dtype: DataType) -> None:
    mode = kw.get("cmp_type", 0)
    if not 0 <= mode <= 5:
        raise PyptoTypeError(f"cmp: cmp_type must be 0..5 (EQ, NE, LT, LE, GT, GE), got {mode}", span)
    if dtype is D.INT32 and mode != 0 and compares_i32_for_eq_only(name):
        # pto-text-format §4.10: the A2/A3 vector unit compares i32 only for equality
        raise PyptoTypeError("cmp: the A2/A3 vector unit compares INT32 tiles only for EQ; compare INT16 or "
                             "FP32 tiles (pl.cast) for ordering", span)


def _check_mask(name: str, mask: TileType, data: tuple, span: Span) -> None:
    want = mask_shape(data, span)
    ok = mask.dtype in (DataType.UINT8, DataType.INT8) and len(mask.shape) == len(data) and all(
        dims_equal(x, y) for x, y in zip(mask.shape[:-1], data[:-1], strict=False)
    )
    if not ok or (static_int(mask.shape[-1]) or 0) * 8 < (static_int(data[-1]) or 0):
        raise PyptoTypeError(
            f"{name}: 'mask' must be a UINT8 predicate tile of shape {shape_str(want)} (the result of cmp/cmps "
            f"on {shape_str(data)} data), got {mask.dtype.name} {shape_str(mask.shape)}",
            span,
        )


@register_op("block.sel", BLOCK, ("mask", "lhs", "rhs", "tmp"), pipe=PipeType.V, min_args=3)
def _sel(args: list, kw: dict, span: Span) -> TileType:
    """``where(mask, lhs, rhs)``; ``tmp`` is the scratch tile the compiler appends."""
    names = ("mask", "lhs", "rhs", "tmp")
    check_own_scratch("block.sel", args, names, span)
    m = tile("block.sel", args, 0, names, span)
    a, b = tile("block.sel", args, 1, names, span), tile("block.sel", args, 2, names, span)
    if len(a.shape) != len(b.shape) or not all(dims_equal(x, y) for x, y in zip(a.shape, b.shape, strict=False)):
        raise PyptoTypeError(f"sel: operand shapes differ: {shape_str(a.shape)} and {shape_str(b.shape)}", span)
    if a.dtype is not b.dtype:
        raise PyptoTypeError(f"sel: operand dtypes differ ({a.dtype.name} vs {b.dtype.name})", span)
    check_dtype("block.sel", a.dtype, span)
    _check_mask("sel", m, a.shape, span)
    return TileType(a.shape, a.dtype, tile_view=vec_view(a.shape, _broadcast_valid(a.shape, a, b)))


@register_op("block.sels", BLOCK, ("mask", "lhs", "rhs", "tmp"), pipe=PipeType.V, min_args=3)
def _sels(args: list, kw: dict, span: Span) -> TileType:
    """``where(mask, lhs, rhs)`` with a scalar ``rhs``; ``tmp`` is the scratch tile the compiler appends."""
    names = ("mask", "lhs", "rhs", "tmp")
    check_own_scratch("block.sels", args, names, span)
    m = tile("block.sels", args, 0, names, span)
    a = tile("block.sels", args, 1, names, span)
    scalar("block.sels", args, 2, names, span)
    check_dtype("block.sels", a.dtype, span)
    _check_mask("sels", m, a.shape, span)
    return TileType(a.shape, a.dtype, tile_view=vec_view(a.shape, a.valid_shape))


# ----------------------------------------------------------------------------- memory


@register_op(
    "block.load",
    BLOCK,
    ("tensor", "offsets", "shapes", "valid_shapes"),
    attrs={"target_memory": MemorySpace, "pad": int},
    pipe=PipeType.MTE2,
    min_args=3,
)
def _load(args: list, kw: dict, span: Span) -> TileType:
    t = tensor("block.load", args, 0, ("tensor",), span)
    offs = int_list("block.load", args[1], "offsets", span)
    shapes = int_list("block.load", args[2], "shapes", span)
    valid = int_list("block.load", args[3], "valid_shapes", span) if len(args) > 3 else shapes
    if not offs or not shapes or len(shapes) != len(valid) or len(shapes) > len(offs):
        raise PyptoTypeError(
            f"block.load: offsets, shapes and valid_shapes need the same non-zero length (shapes may "
            f"leave out leading unit dims), got {len(offs)}, {len(shapes)} and {len(valid)}",
            span,
        )
    if len(offs) != len(t.shape):
        raise PyptoTypeError(
            f"block.load: tensor has rank {len(t.shape)} but {len(offs)} offsets were given", span
        )
    # A tile of lower rank than the tensor (a [M, K] tile of a [B, M, K] tensor) takes one element
    # along each leading dim, like a store of a lower-rank tile.
    lead = len(offs) - len(shapes)
    one = ConstInt(1, DataType.INDEX)
    # Only the valid region is transferred (the rest of the tile is padding), so a partial tail tile
    # may overhang the tensor: the bounds check uses the valid shape, not the tile shape.
    for i, (o, s, v, d) in enumerate(zip(offs, (one,) * lead + tuple(shapes), (one,) * lead + tuple(valid), t.shape,
                                         strict=False)):
        so, ss, sv, sd = static_int(o), static_int(s), static_int(v), static_int(d)
        if sv is not None and ss is not None and not 0 < sv <= ss:
            raise PyptoTypeError(
                f"block.load: valid_shapes[{i}] = {sv} must be in [1, {ss}] (the tile shape)", span
            )
        if sv is not None and sd is not None and so is not None and so + sv > sd:
            what = "window" if sv == ss else "valid window"
            raise PyptoTypeError(
                f"block.load: {what} [{so}, {so + sv}) exceeds dim {i} of size {sd} of the tensor", span
            )
    space = kw.get("target_memory", MemorySpace.Vec)
    if space not in (MemorySpace.Vec, MemorySpace.Mat):
        raise PyptoTypeError(f"block.load: target_memory must be Vec or Mat, got {space.name}", span)
    view = view_for_space(space, shapes, valid)
    check_boxes("block.load", space, shapes, view, t.dtype, span)
    if space is MemorySpace.Mat and any(not dims_equal(v, s) for v, s in zip(valid, shapes, strict=False)):
        # a partial cube operand: its tail is zero-filled on the way in, so whole fractal boxes can go
        # to the cube without the box padding ever adding to a product
        view = replace(view, pad=TilePad.zero)
    if "pad" in kw:  # tload writes the pad value outside the valid region (jit pl.slice(pad_value=...))
        view = replace(view, pad=TilePad(kw["pad"]))
    return TileType(shapes, t.dtype, tile_view=view)


# Element types an atomic add to GM accepts (pypto-jit.md §6.4: fp32, bf16 on A2/A3, fp16, int32,
# int16, int8).
ATOMIC_ADD_DTYPES = (DataType.FP32, DataType.BF16, DataType.FP16, DataType.INT32, DataType.INT16, DataType.INT8)


@register_op("block.store", BLOCK, ("tile", "offsets", "output_tensor"), attrs={"atomic": AtomicType})
def _store(args: list, kw: dict, span: Span) -> TensorType:
    names = ("tile", "offsets", "output_tensor")
    t = tile("block.store", args, 0, names, span)
    offs = int_list("block.store", args[1], "offsets", span)
    out = tensor("block.store", args, 2, names, span)
    if len(offs) != len(out.shape):
        raise PyptoTypeError(
            f"block.store: output tensor has rank {len(out.shape)} but {len(offs)} offsets were given", span
        )
    # tstore writes the tile's valid region only, so that is what must fit into the output tensor.
    for i, (o, s, d) in enumerate(zip(offs, _padded(t.valid_shape, len(offs)), out.shape, strict=False)):
        so, ss, sd = static_int(o), static_int(s), static_int(d)
        if None not in (so, ss, sd) and so + ss > sd:
            raise PyptoTypeError(
                f"block.store: tile valid region {shape_str(t.valid_shape)} at offset {so} exceeds dim {i} "
                f"of size {sd} of the output tensor",
                span,
            )
    if t.dtype is not out.dtype and not (is_accumulator(t) and out.dtype in ACC_STORE_DTYPES.get(t.dtype, ())):
        raise PyptoTypeError(
            f"block.store: tile dtype {t.dtype.name} differs from output tensor dtype {out.dtype.name}", span
        )
    if kw.get("atomic", AtomicType.None_) is AtomicType.Add and out.dtype not in ATOMIC_ADD_DTYPES:
        allowed = ", ".join(d.name for d in ATOMIC_ADD_DTYPES)
        raise PyptoTypeError(f"block.store: an atomic add into {out.dtype.name} is not supported (atomic adds "
                             f"take {allowed})", span)
    return out


# An accumulator (L0C) tile is stored through the fixpipe, which converts it to the GM dtype on the
# way out (tstore: "acc sources convert to the GM dtype", isa_specs/instructions/data_movement.yaml).
ACC_STORE_DTYPES = {DataType.FP32: (DataType.FP16, DataType.BF16)}


def is_accumulator(t: TileType) -> bool:
    """Whether ``t`` lives in L0C: Acc tiles, and only they, use 1024-byte fractals."""
    return t.view.fractal == 1024


def _padded(shape: tuple, rank: int) -> tuple:
    return (ConstInt(1, DataType.INDEX),) * (rank - len(shape)) + tuple(shape)


@register_op(
    "block.move", BLOCK, ("tile",), attrs={"target_memory": MemorySpace, "transpose": bool}
)
def _move(args: list, kw: dict, span: Span) -> TileType:
    t = tile("block.move", args, 0, ("tile",), span)
    if "target_memory" not in kw:
        raise PyptoTypeError("block.move requires 'target_memory'", span)
    space = kw["target_memory"]
    shape, valid = t.shape, t.valid_shape
    if kw.get("transpose") and len(shape) == 2:
        shape, valid = (shape[1], shape[0]), (valid[1], valid[0])
    view = view_for_space(space, shape, valid)
    check_boxes("block.move", space, shape, view, t.dtype, span)
    return TileType(shape, t.dtype, tile_view=view)


@register_op("block.create_tile", BLOCK, ("shape",), attrs={"dtype": DataType, "target_memory": MemorySpace})
def _create_tile(args: list, kw: dict, span: Span) -> TileType:
    shape = int_list("block.create_tile", args[0], "shape", span, static=True)
    if "dtype" not in kw:
        raise PyptoTypeError("block.create_tile requires 'dtype'", span)
    space = kw.get("target_memory", MemorySpace.Vec)
    view = view_for_space(space, shape)
    check_boxes("block.create_tile", space, shape, view, kw["dtype"], span)
    return TileType(shape, kw["dtype"], tile_view=view)


@register_op("block.full", BLOCK, ("shape", "value"), attrs={"dtype": DataType}, pipe=PipeType.V)
def _full(args: list, kw: dict, span: Span) -> TileType:
    shape = int_list("block.full", args[0], "shape", span, static=True)
    if "dtype" not in kw:
        raise PyptoTypeError("block.full requires 'dtype'", span)
    scalar("block.full", args, 1, ("shape", "value"), span)
    if not isinstance(args[1], (ConstInt, ConstFloat)):
        raise PyptoTypeError("block.full: 'value' must be a constant", span)
    check_dtype("block.full", kw["dtype"], span)
    return TileType(shape, kw["dtype"], tile_view=vec_view(shape))


@register_op("block.get_block_idx", BLOCK, (), attrs={"axis": int})
def _get_block_idx(args: list, kw: dict, span: Span) -> ScalarType:
    """This block's index in ``[0, get_block_num())`` (an INDEX scalar, as upstream returns it)."""
    return ScalarType(DataType.INDEX)


@register_op("block.get_block_num", BLOCK, ())
def _get_block_num(args: list, kw: dict, span: Span) -> ScalarType:
    """How many blocks the kernel was launched as (``pl.spmd(n)``: n; an ordinary task: 1)."""
    return ScalarType(DataType.INDEX)


@register_op("block.get_subblock_idx", BLOCK, ())
def _get_subblock_idx(args: list, kw: dict, span: Span) -> ScalarType:
    """The vector lane (AIV 0 or 1) of the core group; 0 on the cube side."""
    return ScalarType(DataType.INDEX)


@register_op("block.get_aiv_lane", BLOCK, ())
def _get_aiv_lane(args: list, kw: dict, span: Span) -> ScalarType:
    """The lane index of a ``pl.split_aiv`` region: the AIV (0 or 1) of the core group running it. A
    kernel that reads it is launched on both AIVs of a group (its code generation says so)."""
    return ScalarType(DataType.INDEX)


@register_op("block.reshape", BLOCK, ("tile", "shape"), attrs={"dtype": DataType}, pipe=PipeType.V)
def _reshape(args: list, kw: dict, span: Span) -> TileType:
    """Same bytes, new shape; the compiler-only ``dtype`` attribute also re-types them as another
    element type of the same width (how a UINT32 tile becomes INT32: tcvt has no such pair)."""
    t = tile("block.reshape", args, 0, ("tile", "shape"), span)
    check_dtype("block.reshape", t.dtype, span)
    dtype = kw.get("dtype", t.dtype)
    if dtype.nbytes != t.dtype.nbytes or not (dtype.is_int() and t.dtype.is_int()) and dtype is not t.dtype:
        raise PyptoTypeError(f"block.reshape: {t.dtype.name} cannot be re-typed as {dtype.name}", span)
    shape = int_list("block.reshape", args[1], "shape", span, static=True)
    n_old, n_new = 1, 1
    for d in t.shape:
        n_old = n_old * static_int(d) if static_int(d) is not None and n_old is not None else None
    for d in shape:
        n_new *= static_int(d)
    if n_old is not None and n_old != n_new:
        raise PyptoTypeError(f"block.reshape: {shape_str(t.shape)} has {n_old} elements, not {n_new}", span)
    return TileType(shape, dtype, tile_view=vec_view(shape))


@register_op("block.transpose", BLOCK, ("tile", "axis1", "axis2", "tmp"), pipe=PipeType.V, min_args=3)
def _transpose(args: list, kw: dict, span: Span) -> TileType:
    """Swap two axes; ``tmp`` is the scratch tile the compiler appends (ttrans needs one on A2/A3)."""
    t = tile("block.transpose", args, 0, ("tile",), span)
    check_dtype("block.transpose", t.dtype, span)
    a1, a2 = static_int(args[1]), static_int(args[2])
    rank = len(t.shape)
    if rank != 2 or a1 is None or a2 is None or not -rank <= a1 < rank or not -rank <= a2 < rank or a1 % rank == a2 % rank:
        raise PyptoTypeError("transpose: tiles must be 2-D and the two axes different constants in [-2, 1]", span)
    shape, valid = list(t.shape), list(t.valid_shape)
    shape[a1 % rank], shape[a2 % rank] = shape[a2 % rank], shape[a1 % rank]
    valid[a1 % rank], valid[a2 % rank] = valid[a2 % rank], valid[a1 % rank]
    return TileType(tuple(shape), t.dtype, tile_view=vec_view(tuple(shape), tuple(valid)))


# ----------------------------------------------------------------------------- builder functions


def _span(span: Span | None) -> Span | None:
    return span


def load(
    tensor: Expr,
    offsets: Any,
    shapes: Any,
    valid_shapes: Any = None,
    target_memory: MemorySpace | None = None,
    pad: TilePad | None = None,
    span: Span | None = None,
) -> Call:
    if isinstance(valid_shapes, MemorySpace):
        valid_shapes, target_memory = target_memory, valid_shapes
    args = [tensor, to_tuple(offsets, span, "offsets"), to_tuple(shapes, span, "shapes")]
    args.append(to_tuple(valid_shapes, span, "valid_shapes") if valid_shapes is not None else args[2])
    kw = {"target_memory": target_memory if target_memory is not None else MemorySpace.Vec}
    if pad is not None:
        kw["pad"] = int(pad)
    return create_op_call("block.load", args, kw, span)


def store(
    tile: Expr,
    offsets: Any,
    shapes_or_output: Any = None,
    output_tensor: Any = None,
    shapes: Any = None,
    atomic: Any = None,
    span: Span | None = None,
) -> Call:
    """``tile``'s valid region into ``output_tensor`` at ``offsets``; ``atomic=AtomicType.Add`` adds
    it to what the tensor holds (blocks of one launch accumulating into one output)."""
    if isinstance(getattr(shapes_or_output, "type", None), TensorType):
        if output_tensor is not None:
            raise PyptoTypeError("block.store: output tensor given twice", span)
        output_tensor = shapes_or_output
    elif isinstance(getattr(shapes_or_output, "type", None), TileType):
        name = getattr(shapes_or_output, "name", "")
        raise PyptoTypeError(f"block.store: the output {name or 'given'} is a tile, not a tensor (a tensor's name "
                             "rebound to a tile?): pl.store writes a tile into a tensor", span)
    elif shapes_or_output is not None:
        shapes = shapes_or_output
    if output_tensor is None:
        raise PyptoTypeError("block.store: missing the output tensor", span)
    if atomic is not None and not isinstance(atomic, AtomicType):
        raise PyptoTypeError(f"block.store: atomic= takes a pl.AtomicType, got {atomic!r}", span)
    kw = {"atomic": AtomicType.Add} if atomic is AtomicType.Add else {}
    call = create_op_call("block.store", [tile, to_tuple(offsets, span, "offsets"), output_tensor], kw, span)
    if shapes is not None:
        given = to_tuple(shapes, span, "shapes").elements
        have = _padded(tile.type.valid_shape, len(given))
        if len(given) != len(have) or not all(dims_equal(a, b) or static_int(a) is None for a, b in zip(given, have, strict=False)):
            raise PyptoTypeError(
                f"block.store: shapes {shape_str(given)} do not match the tile's shape "
                f"{shape_str(tile.type.valid_shape)}",
                span,
            )
    return call


def move(tile: Expr, target_memory: MemorySpace, transpose: bool = False, span: Span | None = None) -> Call:
    kw = {"target_memory": target_memory}
    if transpose:
        kw["transpose"] = True
    return create_op_call("block.move", [tile], kw, span)


def create_tile(
    shape: Any, dtype: DataType, target_memory: MemorySpace = MemorySpace.Vec, span: Span | None = None
) -> Call:
    return create_op_call(
        "block.create_tile", [to_tuple(shape, span, "shape")], {"dtype": dtype, "target_memory": target_memory}, span
    )


create = create_tile


def full(shape: Any, dtype: DataType, value: Any, span: Span | None = None) -> Call:
    return create_op_call(
        "block.full", [to_tuple(shape, span, "shape"), scalar_arg(value, dtype, span)], {"dtype": dtype}, span
    )


def get_block_idx(axis: int | None = None, span: Span | None = None) -> Call:
    return create_op_call("block.get_block_idx", [], {"axis": axis}, span)


def get_block_num(span: Span | None = None) -> Call:
    return create_op_call("block.get_block_num", [], {}, span)


def get_subblock_idx(span: Span | None = None) -> Call:
    return create_op_call("block.get_subblock_idx", [], {}, span)


def get_aiv_lane(span: Span | None = None) -> Call:
    return create_op_call("block.get_aiv_lane", [], {}, span)


def _binary_builder(op: str):
    def build(lhs: Expr, rhs: Any, span: Span | None = None) -> Call:
        return create_op_call("block." + op, [lhs, rhs], {}, span)

    build.__name__ = op
    return build


def _scalar_builder(op: str):
    def build(lhs: Expr, rhs: Any, span: Span | None = None) -> Call:
        return create_op_call("block." + op, [lhs, scalar_arg(rhs, dtype_of(lhs), span, promote=True)], {}, span)

    build.__name__ = op
    return build


def _unary_builder(op: str):
    def build(tile: Expr, span: Span | None = None) -> Call:
        return create_op_call("block." + op, [tile], {}, span)

    build.__name__ = op
    return build


add, sub, mul, div = (_binary_builder(n) for n in ("add", "sub", "mul", "div"))
maximum, minimum = _binary_builder("maximum"), _binary_builder("minimum")
and_, or_, shl, shr = (_binary_builder(n) for n in ("and", "or", "shl", "shr"))
adds, subs, muls, divs = (_scalar_builder(n) for n in ("adds", "subs", "muls", "divs"))
maxs, mins, lrelu = (_scalar_builder(n) for n in ("maxs", "mins", "lrelu"))
ands, ors, shls, shrs = (_scalar_builder(n) for n in ("ands", "ors", "shls", "shrs"))
exp, neg, sqrt, rsqrt = (_unary_builder(n) for n in ("exp", "neg", "sqrt", "rsqrt"))
recip, log, abs, relu = (_unary_builder(n) for n in ("recip", "log", "abs", "relu"))
not_, row_expand = _unary_builder("not"), _unary_builder("row_expand")


def fillpad(tile: Expr, pad: Any = "zero", span: Span | None = None) -> Call:
    """``tile`` over its full shape, elements outside its valid region set to ``pad``
    (``"zero"``, ``"max"`` = +inf / type max, ``"min"`` = -inf / type min, or a ``pl.TilePad``)."""
    if isinstance(pad, str):
        if pad not in ("zero", "max", "min"):
            raise PyptoTypeError(f"fillpad: pad must be 'zero', 'max' or 'min', got '{pad}'", span)
        pad = TilePad[pad]
    return create_op_call("block.fillpad", [tile], {"pad": int(pad)}, span)


def expands(target: Expr, scalar: Any, span: Span | None = None) -> Call:
    return create_op_call("block.expands", [target, scalar_arg(scalar, dtype_of(target), span, promote=True)], {},
                          span)


def _pair_builder(op: str):
    def build(a: Expr, b: Expr, span: Span | None = None) -> Call:
        return create_op_call("block." + op, [a, b], {}, span)

    build.__name__ = op
    return build


row_sum, row_max, row_min = (_pair_builder(n) for n in ("row_sum", "row_max", "row_min"))
row_expand_add, row_expand_sub = _pair_builder("row_expand_add"), _pair_builder("row_expand_sub")
row_expand_mul, row_expand_div = _pair_builder("row_expand_mul"), _pair_builder("row_expand_div")
col_expand, col_expand_mul = _pair_builder("col_expand"), _pair_builder("col_expand_mul")
col_expand_div, col_expand_sub = _pair_builder("col_expand_div"), _pair_builder("col_expand_sub")
matmul, gemv = _pair_builder("matmul"), _pair_builder("gemv")


def _triple_builder(op: str, scalar_pos: int | None = None):
    def build(a: Expr, b: Any, c: Expr, span: Span | None = None) -> Call:
        args = [a, b, c]
        if scalar_pos is not None:
            args[scalar_pos] = scalar_arg(args[scalar_pos], dtype_of(a), span, promote=True)
        return create_op_call("block." + op, args, {}, span)

    build.__name__ = op
    return build


matmul_acc, matmul_bias = _triple_builder("matmul_acc"), _triple_builder("matmul_bias")
gemv_acc, gemv_bias = _triple_builder("gemv_acc"), _triple_builder("gemv_bias")
addc, subc, xor, prelu = (_triple_builder(n) for n in ("addc", "subc", "xor", "prelu"))
addsc, subsc, xors = (_triple_builder(n, 1) for n in ("addsc", "subsc", "xors"))


def _tmp(args: list, tmp: Expr | None) -> list:
    return args if tmp is None else [*args, tmp]


def sel(mask: Expr, lhs: Expr, rhs: Expr, tmp: Expr | None = None, span: Span | None = None) -> Call:
    """``where(mask, lhs, rhs)`` for a predicate ``mask`` made by :func:`cmp` / :func:`cmps`.
    ``tmp`` (normally left out) is the scratch tile; the compiler adds one when it is missing."""
    return create_op_call("block.sel", _tmp([mask, lhs, rhs], tmp), {}, span)


def sels(mask: Expr, lhs: Expr, rhs: Any, tmp: Expr | None = None, span: Span | None = None) -> Call:
    """``where(mask, lhs, rhs)`` with a scalar ``rhs`` (pto.tsels): elements whose predicate bit is
    clear take the scalar. ``mask`` comes from :func:`cmp` / :func:`cmps`; ``tmp`` as for :func:`sel`."""
    return create_op_call("block.sels", _tmp([mask, lhs, scalar_arg(rhs, dtype_of(lhs), span)], tmp), {}, span)


def rem(lhs: Expr, rhs: Expr, tmp: Expr | None = None, span: Span | None = None) -> Call:
    """Floored remainder ``lhs - floor(lhs / rhs) * rhs``; ``tmp`` as for :func:`sel`."""
    return create_op_call("block.rem", _tmp([lhs, rhs], tmp), {}, span)


def rems(lhs: Expr, rhs: Any, tmp: Expr | None = None, span: Span | None = None) -> Call:
    """Floored remainder by a scalar; ``tmp`` as for :func:`sel`."""
    return create_op_call("block.rems", _tmp([lhs, scalar_arg(rhs, dtype_of(lhs), span, promote=True)], tmp), {},
                          span)


def _reduce_builder(op: str):
    def build(tile: Expr, axis: int = 0, keepdim: bool = False, span: Span | None = None) -> Call:
        return create_op_call("block." + op, [tile], {"axis": int(axis), "keepdim": bool(keepdim)}, span)

    build.__name__ = op
    return build


sum, max, min = (_reduce_builder(n) for n in ("sum", "max", "min"))


def round_mode_code(mode: Any, span: Span | None) -> int:
    if isinstance(mode, str):
        if mode.lower() not in ROUND_MODES:
            raise PyptoTypeError(f"cast: unknown rounding mode '{mode}' (use one of {', '.join(ROUND_MODES)})", span)
        return ROUND_MODES.index(mode.lower())
    if not isinstance(mode, int) or not 0 <= mode < len(ROUND_MODES):
        raise PyptoTypeError(f"cast: rounding mode must be 0..6 or a name, got {mode!r}", span)
    return mode


def cast(tile: Expr, target_type: DataType, mode: Any = "round", span: Span | None = None) -> Call:
    return create_op_call("block.cast", [tile], {"target_type": target_type, "mode": round_mode_code(mode, span)}, span)


def _cmp_type(v: Any) -> int:
    return int(v) if not isinstance(v, str) else int(CmpType[v.upper()])


def cmp(lhs: Expr, rhs: Expr, cmp_type: Any = 0, span: Span | None = None) -> Call:
    return create_op_call("block.cmp", [lhs, rhs], {"cmp_type": _cmp_type(cmp_type)}, span)


def cmps(lhs: Expr, rhs: Any, cmp_type: Any = 0, span: Span | None = None) -> Call:
    return create_op_call(
        "block.cmps", [lhs, scalar_arg(rhs, dtype_of(lhs), span)], {"cmp_type": _cmp_type(cmp_type)}, span
    )


def reshape(tile: Expr, shape: Any, span: Span | None = None) -> Call:
    return create_op_call("block.reshape", [tile, to_tuple(shape, span, "shape")], {}, span)


def transpose(tile: Expr, axis1: Any, axis2: Any, tmp: Expr | None = None, span: Span | None = None) -> Call:
    """Swap two axes of a 2-D tile; ``tmp`` as for :func:`sel`."""
    args = [tile, as_expr(axis1, span), as_expr(axis2, span)]
    return create_op_call("block.transpose", _tmp(args, tmp), {}, span)
