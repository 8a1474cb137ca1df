"""Element-wise primitives: unary ops, binary ops with NumPy broadcasting and scalar operands,
integer powers, and cast.

Each op is a *tile function* (``Body, tiles -> tile``, the block ops of one block) plus the generic
tensor-level lowering :func:`map_blocks`, which runs the tile function over every block of the
result's tiling (:mod:`pypto.lib.tiling`) and assembles the results. Composites call the same tile
functions inside their own loops.

Composed unary ops (no single instruction exists):

* ``sigmoid(x) = 1 / (1 + exp(-x))`` (exp overflow to +inf gives the exact limit 0);
* ``tanh(x) = 2 * sigmoid(2x) - 1``;
* ``silu(x) = x * sigmoid(x)``;
* ``gelu(x)``: the tanh approximation (PyTorch ``gelu(approximate='tanh')``),
  ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` = ``x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pypto.dtype import DataType
from pypto.enums import CmpType
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir.expr import static_int
from pypto.lib import tiling
from pypto.lib.body import Body, legal, work_dtype
from pypto.lib.broadcast import as_2d, expand
from pypto.lib.emit import Emitter, Window, blocks, grid_shape, kind, read, write
from pypto.lib.registry import LIVE_NEEDS, definition
from pypto.ops import block as B
from pypto.ops import isa

TileFn = Callable[..., E.Var]


# ----------------------------------------------------------------------------- tile functions


def sigmoid_tile(b: Body, t: E.Var) -> E.Var:
    e = b.op("exp", b.op("neg", t))
    return b.op("recip", b.scalar("adds", e, 1.0))


def tanh_tile(b: Body, t: E.Var) -> E.Var:
    s = sigmoid_tile(b, b.scalar("muls", t, 2.0))
    return b.scalar("adds", b.scalar("muls", s, 2.0), -1.0)


def silu_tile(b: Body, t: E.Var) -> E.Var:
    return b.op("mul", t, sigmoid_tile(b, t))


GELU_K = 2.0 * math.sqrt(2.0 / math.pi)  # the tanh form's sqrt(2/pi), doubled by tanh(z) = 2 sigmoid(2z) - 1
GELU_C = 0.044715


def gelu_tile(b: Body, t: E.Var) -> E.Var:
    cube = b.op("mul", b.op("mul", t, t), t)
    inner = b.op("add", t, b.scalar("muls", cube, GELU_C))
    return b.op("mul", t, sigmoid_tile(b, b.scalar("muls", inner, GELU_K)))


def _direct(name: str) -> TileFn:
    return lambda b, t: b.op(name, t)


# name -> (tile function, the block ops it uses: they decide the compute dtype)
UNARY: dict[str, tuple[TileFn, tuple[str, ...]]] = {
    "exp": (_direct("exp"), ("exp",)),
    "neg": (_direct("neg"), ("neg",)),
    "sqrt": (_direct("sqrt"), ("sqrt",)),
    "rsqrt": (_direct("rsqrt"), ("sqrt",)),
    "reciprocal": (_direct("recip"), ("recip",)),
    "log": (_direct("log"), ("log",)),
    "abs": (_direct("abs"), ("abs",)),
    "relu": (_direct("relu"), ("relu",)),
    "sigmoid": (sigmoid_tile, ("exp", "neg", "recip", "adds")),
    "tanh": (tanh_tile, ("exp", "neg", "recip", "adds", "muls")),
    "silu": (silu_tile, ("exp", "neg", "recip", "adds", "mul")),
    "gelu": (gelu_tile, ("exp", "neg", "recip", "adds", "mul", "muls", "add")),
}

BINARY = {"add": ("add",), "sub": ("sub",), "mul": ("mul",), "div": ("div",), "maximum": ("maximum",),
          "minimum": ("minimum",)}
BROADCAST_OPS = ("row_expand_add", "col_expand")  # what a binary op with a vector operand also runs
SCALAR = {"add_scalar": "adds", "sub_scalar": "subs", "mul_scalar": "muls", "div_scalar": "divs",
          "maximum_scalar": "maxs", "minimum_scalar": "mins"}


def unary_tile(b: Body, name: str, t: E.Var, out_dtype: object) -> E.Var:
    """``name`` on tile ``t``, in a dtype the target computes it in, cast to ``out_dtype``."""
    fn, used = UNARY[name]
    dtype = t.type.dtype
    if name == "abs" and dtype.is_int() and legal(INT_ABS_OPS, dtype):
        # |x| = max(x, -x), exact in the integer type (|MIN| wraps to MIN, as NumPy's abs does); the
        # FP32 route would round every |x| > 2**24 of an INT32 tile
        return b.cast(b.op("maximum", t, b.op("neg", t)), out_dtype)
    work = work_dtype(dtype, used, b.em.span)
    return b.cast(fn(b, b.cast(t, work)), out_dtype)


INT_ABS_OPS = ("neg", "maximum")


def binary_tile(b: Body, name: str, x: E.Var, y: E.Var, kinds: tuple[str, str], out_dtype: object) -> E.Var:
    if name == "div" and out_dtype.is_int():
        if legal(BINARY[name] + BROADCAST_OPS, out_dtype):
            return guarded_int_div_tile(b, x, y, kinds, out_dtype)  # (A5, compiled for it, has an integer tdiv)
        if narrow_div_dtype(out_dtype) is not None:
            return narrow_int_div_tile(b, x, y, kinds, out_dtype)
        return int_div_tile(b, x, y, kinds, out_dtype)
    if narrow_int_dtype(name, out_dtype, b.em.span) is not None:
        return narrow_int_binary_tile(b, name, x, y, kinds, out_dtype)
    work = work_dtype(out_dtype, BINARY[name] + BROADCAST_OPS, b.em.span)
    if work is out_dtype:  # the tile op promotes mixed operands itself (u32 + i32 -> i32)
        return b.binary(name, x, y, kinds)
    return b.cast(b.binary(name, b.cast(x, work), b.cast(y, work), kinds), out_dtype)


# 8-bit integer add/sub/mul/maximum/minimum where the target has no 8-bit instruction (A2/A3: the
# vector unit adds i16/i32/f16/f32). FP32 would give the right number only before the narrowing
# convert, which saturates (127 + 1 -> 127), while NumPy wraps (127 + 1 = -128). So the op runs in
# INT16 (exact for the wrapped low byte: INT16 arithmetic wraps mod 2**16, and 2**8 divides 2**16),
# the result is wrapped to the 8-bit range with bit ops (signed: shift the low byte to the top and
# back, arithmetically; unsigned: and 0xFF), and the then in-range value converts back exactly
# (INT16 -> FP16 -> INT8/UINT8, the only narrowing route A2/A3 have).
NARROW_INT_DTYPES = (DataType.INT8, DataType.UINT8)
NARROW_INT_WORK = DataType.INT16
NARROW_WRAP_OPS = ("shls", "shrs", "ands")


def narrow_int_dtype(name: str, out_dtype: DataType, span: object = None) -> DataType | None:
    """The integer type an 8-bit ``name`` (add/sub/mul/maximum/minimum) result is computed in and
    wrapped from, where the target has no 8-bit instruction for it; ``None`` where it has one (A5) or
    the result is no 8-bit integer. Refuses (never a different number) when the target lacks the
    INT16 ops or the conversions the route needs."""
    if name == "div" or out_dtype not in NARROW_INT_DTYPES or legal(BINARY[name] + BROADCAST_OPS, out_dtype):
        return None
    work = NARROW_INT_WORK
    if not (legal(BINARY[name] + BROADCAST_OPS + NARROW_WRAP_OPS, work) and _converts(out_dtype, work)
            and _converts_back(work, out_dtype)):
        raise CompileError(f"{name} of {out_dtype.name} tensors: the target has no {out_dtype.name} {name} and no "
                           f"exact {work.name} route (convert, {name}, wrap to 8 bits, convert back)", span)
    return work


def narrow_int_binary_tile(b: Body, name: str, x: E.Var, y: E.Var, kinds: tuple[str, str],
                           out_dtype: DataType) -> E.Var:
    """``name(x, y)`` on 8-bit integer tiles with NumPy's wrap-around (see ``NARROW_INT_DTYPES``)."""
    work = narrow_int_dtype(name, out_dtype, b.em.span)
    mixed = [t.type.dtype for t in (x, y) if t.type.dtype is not out_dtype]
    if mixed:  # INT8 with UINT8: NumPy's result is INT16, so wrapping to this result's 8 bits is another number
        raise CompileError(f"{name} of {mixed[0].name} and {out_dtype.name} tensors: the result type here is "
                           f"{out_dtype.name}, NumPy's is INT16; cast both operands to INT16 first", b.em.span)
    r = b.binary(name, _to(b, x, work, mode="trunc"), _to(b, y, work, mode="trunc"), kinds)
    shift = work.bits - out_dtype.bits
    if out_dtype.is_signed():
        r = b.scalar("shrs", b.scalar("shls", r, shift), shift)
    else:
        r = b.scalar("ands", r, (1 << out_dtype.bits) - 1)
    return _to(b, r, out_dtype, mode="trunc")


# Integer division where the target has no integer tdiv (A2/A3: f16/f32 only): the dtypes the
# estimate-and-correct sequence is exact for (through INT32), and the live-tile count its kernel's
# shared plan takes (tiling.kernel_live: the plan's half-UB budget over 5, i.e. tiles of a tenth of the
# UB; the sequence keeps about 6 tiles and its masks live at its peak, which leaves room for the tiles
# of the element-wise ops fused with it; 3, the default, overflows the UB by a mask). Narrower integers
# divide in a float type instead (narrow_div_dtype).
INT_DIV_DTYPES = (DataType.INT32,)
INT_DIV_LIVE = 5
# IEEE significand bits (a format fact, not a machine number): FP16 holds 11, FP32 24
FLOAT_PRECISION = {DataType.FP16: 11, DataType.FP32: 24}


def narrow_div_dtype(dtype: DataType) -> DataType | None:
    """The float type in which ``trunc(fl(a) / fl(b))`` is the exact integer quotient of any two
    ``dtype`` values, and that the target converts ``dtype`` to and back from (directly or through
    FP16); ``None`` when there is none (INT32 takes :func:`int_div_tile`; UINT16/UINT32 have no
    conversion on A2/A3).

    Why it is exact: with ``|a|, |b| < 2**(p-2)`` (``p`` the significand bits) the quotient ``a/b``
    is either an integer (representable, so the division gives it exactly) or lies at least ``1/|b|``
    from the integers around it, while the rounded division is off by at most a few ulps,
    ``<= 4 |a/b| 2**-p < 1/|b|``: it stays strictly between the same two integers, and truncating it
    gives the truncated quotient. FP16 (p = 11) covers INT8/UINT8, FP32 (p = 24) INT16/UINT16."""
    for work, p in FLOAT_PRECISION.items():
        if dtype.bits <= p - 2 and _converts(dtype, work) and _converts_back(work, dtype):
            return work
    return None


def _converts(src: DataType, dst: DataType) -> bool:
    direct = isa.conversions("block.cast", src)
    return dst in direct or (DataType.FP16 in direct and dst in isa.conversions("block.cast", DataType.FP16))


def _converts_back(src: DataType, dst: DataType) -> bool:
    return dst in isa.conversions("block.cast", src) or (
        DataType.FP16 in isa.conversions("block.cast", src) and dst in isa.conversions("block.cast", DataType.FP16))


def _to(b: Body, t: E.Var, dtype: DataType, mode: str | None = None) -> E.Var:
    """``t`` converted to ``dtype``, through FP16 where the target has no direct conversion (exact for
    the narrow integers and their quotients, which FP16 holds)."""
    if t.type.dtype is dtype:
        return t
    if dtype not in isa.conversions("block.cast", t.type.dtype):
        t = b.cast(t, DataType.FP16)
    return b.op("cast", t, dtype, mode=mode) if mode else b.cast(t, dtype)


def narrow_int_div_tile(b: Body, x: E.Var, y: E.Var, kinds: tuple[str, str], out_dtype: DataType) -> E.Var:
    """``x / y`` on 8- and 16-bit integer tiles, truncating toward zero, exactly: one division in
    the float type :func:`narrow_div_dtype` names, truncated back. The defined results are those of
    :func:`int_div_tile`: ``x / 0 = 0`` and ``MIN / -1 = MIN`` (the quotient -MIN wraps)."""
    work = narrow_div_dtype(out_dtype)
    fx, fy = _full_pair(b, _to(b, x, work), _to(b, y, work), kinds)
    q = b.op("div", fx, fy)
    q = b.op("sels", _mask(b, fy, CmpType.NE), q, E.ConstFloat(0.0, work))  # x / 0 = 0 (not inf / nan)
    if out_dtype.is_signed():
        lo = -(1 << (out_dtype.bits - 1))
        q = b.op("sels", _mask(b, q, CmpType.NE, -lo), q, E.ConstFloat(float(lo), work))
    q = _to(b, q, out_dtype, mode="trunc")
    if b.win.rank1 and len(q.type.shape) == 2:
        q = b.op("reshape", q, [b.win.tc])
    return q


def int_div_tile(b: Body, x: E.Var, y: E.Var, kinds: tuple[str, str], out_dtype: DataType) -> E.Var:
    """``x / y`` on integer tiles, truncating toward zero, exact for every INT32 value (narrower operands widened).

    The FP32 quotient alone is exact only below 2**24 (``fl(a) / fl(b)`` is within 3 * 2**-24 of
    ``a / b`` relatively; past 2**24 it is off by up to ~385 for INT32). So, with integer arithmetic
    in INT32 (it wraps, as the hardware's does) and FP32 only for estimates:

    1. ``q = trunc(fl(a) / fl(b))`` (the cast saturates at 2**31): ``|a/b - q| < 1 + 385``;
    2. ``r = a - q*b`` is exact (it fits INT32), and ``q += trunc(fl(r) / fl(b))``: now
       ``|a/b - q| < 1`` (``|r| < 2**24`` makes that trunc exact; larger ``|b|`` keep ``|a/b| < 2**8``);
    3. ``r = a - q*b`` again: ``q`` is one step beyond ``a/b`` (away from zero) exactly when ``r`` and
       ``a`` have opposite signs; it then moves one step toward ``a/b``, i.e. by the sign of ``r*b``.
       The sign tests compare FP32 products (FP32 keeps signs; A2/A3 compares INT32 for EQ only).

    Defined results where the quotient is not an integer of the type: ``x / 0 = 0`` and ``MIN / -1 =
    MIN`` (the quotient 2**31 wraps), what the tile-scalar form (``tdivs``) and A5's integer ``tdiv``
    compute (pto-text-format §4.3: integer division truncates; x/0 is target-defined).
    """
    if out_dtype not in INT_DIV_DTYPES:
        why = (f"converts {out_dtype.name} to no float type" if out_dtype.bits <= 16 else
               f"has no exact route to one (FP32 holds {out_dtype.name} values only below 2**24)")
        raise CompileError(f"division of {out_dtype.name} tensors: the target has no {out_dtype.name} division and "
                           f"{why}; integer division is exact for INT32 (an FP32 estimate and integer corrections) "
                           f"and for the 8- and 16-bit integers the target converts to a float type and back",
                           b.em.span)
    i32, f32 = DataType.INT32, DataType.FP32
    a, d = _full_pair(b, _as_int32(b, x), _as_int32(b, y), kinds)
    fd = b.cast(d, f32)

    def towards(q: E.Var) -> E.Var:  # q + trunc(fl(a - q*d) / fl(d))
        r = b.op("sub", a, b.op("mul", q, d))
        return b.op("add", q, b.op("cast", b.op("div", b.cast(r, f32), fd), i32, mode="trunc"))

    # fl(a) is made twice rather than kept: one tile fewer live across the corrections (INT_DIV_LIVE)
    q = towards(b.op("cast", b.op("div", b.cast(a, f32), fd), i32, mode="trunc"))
    fr = b.cast(b.op("sub", a, b.op("mul", q, d)), f32)
    beyond = _mask(b, b.op("mul", fr, b.cast(a, f32)), CmpType.LT)
    down = _mask(b, b.op("mul", fr, fd), CmpType.LT)
    q = b.op("sel", beyond, b.op("sel", down, b.scalar("adds", q, -1), b.scalar("adds", q, 1)), q)
    q = b.op("sels", _mask(b, fd, CmpType.NE), q, E.ConstInt(0, i32))  # x / 0 = 0
    if b.win.rank1 and len(q.type.shape) == 2:
        q = b.op("reshape", q, [b.win.tc])
    return q


def guarded_int_div_tile(b: Body, x: E.Var, y: E.Var, kinds: tuple[str, str], out_dtype: DataType) -> E.Var:
    """``x / y`` with the target's integer ``tdiv`` (A5), giving the library's defined results where
    the quotient is no integer of the type (``x / 0 = 0``, ``MIN / -1 = MIN``, as
    :func:`int_div_tile`) without asking ``tdiv`` for them: the instruction has no result there
    (the emulator faults, naming the element). Divisors 0 and -1 are replaced by 1, the quotient
    by -x where the divisor is -1 (it wraps MIN to MIN) and by 0 where it is 0."""
    a, d = _full_pair(b, b.cast(x, out_dtype), b.cast(y, out_dtype), kinds)
    nonzero, not_minus_one = _mask(b, d, CmpType.NE), _mask(b, d, CmpType.NE, -1)
    one = E.ConstInt(1, out_dtype)
    safe = b.op("sels", not_minus_one, b.op("sels", nonzero, d, one), one)
    q = b.op("sel", not_minus_one, b.op("div", a, safe), b.scalar("muls", a, -1))
    q = b.op("sels", nonzero, q, E.ConstInt(0, out_dtype))
    if b.win.rank1 and len(q.type.shape) == 2:
        q = b.op("reshape", q, [b.win.tc])
    return q


def _as_int32(b: Body, t: E.Var) -> E.Var:
    """``t`` as INT32, exactly: directly where the target converts, else through FP32 (an INT16 tile
    has no INT16 -> INT32 conversion on A2/A3; FP32 holds every 16-bit integer)."""
    dtype = t.type.dtype
    if dtype is DataType.INT32 or DataType.INT32 in isa.conversions("block.cast", dtype):
        return b.cast(t, DataType.INT32)
    return b.op("cast", b.cast(t, DataType.FP32), DataType.INT32, mode="trunc")


def _full_pair(b: Body, x: E.Var, y: E.Var, kinds: tuple[str, str]) -> tuple[E.Var, E.Var]:
    """``x`` and ``y`` as tiles of the block's full 2-D shape (row / column vectors and ``[1, 1]``
    tiles broadcast as NumPy does; a rank-1 block is its ``[1, tc]`` row)."""
    w = b.win
    full = [1, w.tc] if w.rank1 else [w.tr, w.tc]
    span = b.em.span
    x, y = as_2d(x, b.bind, span), as_2d(y, b.bind, span)
    return expand(x, kinds[0], full, b.bind, span), expand(y, kinds[1], full, b.bind, span)


def _mask(b: Body, t: E.Var, mode: CmpType, value: float = 0) -> E.Var:
    """The packed predicate ``t <mode> value`` (valid over ``t``'s valid rows)."""
    const = E.ConstFloat(float(value), t.type.dtype) if t.type.dtype.is_float() else E.ConstInt(int(value), t.type.dtype)
    call = B.cmps(t, const, cmp_type=int(mode), span=b.em.span)
    return b.em.let("mask", call, tuple(call.type.valid_shape))


def pow_tile(b: Body, t: E.Var, n: int) -> E.Var:
    """``t ** n`` by squaring (``2 log2 |n|`` multiplies); a negative ``n`` takes the reciprocal."""
    if n == 0:
        return b.scalar("adds", b.scalar("muls", t, 0.0), 1.0)
    result, base, k = None, t, abs(n)
    while k:
        if k & 1:
            result = base if result is None else b.op("mul", result, base)
        k >>= 1
        if k:
            base = b.op("mul", base, base)
    return b.op("recip", result) if n < 0 else result


# ----------------------------------------------------------------------------- tensor-level lowering


def grid_of(out_shape: tuple) -> tuple[int, int, bool, tuple]:
    """``(R, C, rank1, lead)`` of the 2-D view a result is tiled over: its last two dims (a vector is
    one row); ``lead`` are the extents of the dims before them, each looped over."""
    if len(out_shape) == 1:
        return 1, out_shape[0], True, ()
    return out_shape[-2], out_shape[-1], False, tuple(out_shape[:-2])


def map_blocks(em: Emitter, call: E.Call, out: E.Var, operands: list, body: Callable[[Body, list, list], E.Var],
               work: DataType, live: int | None = None) -> E.Var:
    """``out`` with ``body(b, tiles, kinds)`` computed for every block of the result's tiling (the
    shared plan of :mod:`pypto.lib.tiling`, sized for the operands, the result and the ``work`` dtype
    the body computes in; a body that keeps more than the shared plan's tiles live passes ``live``)."""
    out_shape = grid_shape(call.type, call.op.name)
    rows, cols, rank1, lead = grid_of(out_shape)
    kinds = [kind(x, out_shape[-2:]) for x in operands]
    dtypes = [x.type.dtype for x in operands] + [call.type.dtype, work]
    plan = tiling.plan(rows, cols, dtypes, live, row_vectors=not rank1, span=call.span)

    def block(e: Emitter, win: Window, carried: list) -> list:
        b = Body(e, win)
        tiles = [read(e, x, win, k) for x, k in zip(operands, kinds, strict=True)]
        return [write(e, body(b, tiles, kinds), carried[0], win)]

    return blocks(em, plan, [out], block, rank1=rank1, lead=lead)[0]


def _unary_def(name: str) -> None:
    @definition("tensor." + name)
    def define(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
        dtype, src = call.type.dtype, call.args[0].type.dtype
        exact_int = name == "abs" and src.is_int() and legal(INT_ABS_OPS, src)
        return map_blocks(em, call, out, [call.args[0]],
                          lambda b, t, k: unary_tile(b, name, t[0], dtype),
                          src if exact_int else work_dtype(src, UNARY[name][1], call.span))


for _n in UNARY:
    _unary_def(_n)


def _binary_def(name: str) -> None:
    @definition("tensor." + name)
    def define(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
        dtype = call.type.dtype
        body = lambda b, t, k: binary_tile(b, name, t[0], t[1], (k[0], k[1]), dtype)
        if name == "div" and dtype.is_int() and not legal(BINARY[name] + BROADCAST_OPS, dtype):
            narrow = narrow_div_dtype(dtype)
            if narrow is not None:  # a few tiles live, like any element-wise op: the shared plan
                return map_blocks(em, call, out, list(call.args), body, narrow)
            return map_blocks(em, call, out, list(call.args), body, DataType.FP32)
        narrow = narrow_int_dtype(name, dtype, call.span)
        if narrow is not None:
            return map_blocks(em, call, out, list(call.args), body, narrow)
        return map_blocks(em, call, out, list(call.args), body, work_dtype(dtype, BINARY[name] + BROADCAST_OPS, call.span))


for _n in BINARY:
    _binary_def(_n)


def _int_div_live(call: E.Call) -> int:
    """The exact INT32 division sequence keeps more tiles of a block live than the shared plan allows
    for; every shared-plan op of its kernel plans for that (tiling.kernel_live), so it fuses with them
    like any element-wise op (a plan of its own could not be fused)."""
    dtype = call.type.dtype
    exact_sequence = (dtype.is_int() and not legal(BINARY["div"] + BROADCAST_OPS, dtype)
                      and narrow_div_dtype(dtype) is None)
    return INT_DIV_LIVE if exact_sequence else 0


LIVE_NEEDS["tensor.div"] = LIVE_NEEDS["tensor.rdiv_scalar"] = _int_div_live


def _scalar_def(name: str, block_op: str) -> None:
    @definition("tensor." + name)
    def define(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
        dtype = call.type.dtype
        s = call.args[1]

        work = work_dtype(dtype, (block_op,), call.span)

        def body(b: Body, t: list, k: list) -> E.Var:
            return b.cast(b.scalar(block_op, b.cast(t[0], work), s), dtype)

        return map_blocks(em, call, out, [call.args[0]], body, work)


for _n, _op in SCALAR.items():
    _scalar_def(_n, _op)


@definition("tensor.rdiv_scalar")
def _rdiv_scalar(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    """``s / x``: the block of ``s`` (``full``) divided by the block of ``x``, one rounding per element."""
    dtype = call.type.dtype
    s = call.args[1]

    def body(b: Body, t: list, k: list) -> E.Var:
        x = b.cast(t[0], dtype)
        value = s.value if isinstance(s, (E.ConstFloat, E.ConstInt)) else s
        full = b.op("full", [static_int(d) for d in x.type.shape], dtype, value)
        return binary_tile(b, "div", full, x, ("full", "full"), dtype)

    if dtype.is_int() and not legal(BINARY["div"] + BROADCAST_OPS, dtype):
        return map_blocks(em, call, out, [call.args[0]], body, narrow_div_dtype(dtype) or DataType.FP32)
    return map_blocks(em, call, out, [call.args[0]], body, work_dtype(dtype, BINARY["div"] + BROADCAST_OPS, call.span))


@definition("tensor.pow")
def _pow(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    n = static_int(call.args[1])
    dtype = call.type.dtype

    work = work_dtype(dtype, ("mul", "recip") if n < 0 else ("mul",), call.span)

    def body(b: Body, t: list, k: list) -> E.Var:
        return b.cast(pow_tile(b, b.cast(t[0], work), n), dtype)

    return map_blocks(em, call, out, [call.args[0]], body, work)


def conversion_path(src: DataType, target: DataType) -> list[DataType] | None:
    """The dtypes a cast from ``src`` to ``target`` passes through, ``target`` last: one step where the
    target's vector unit converts directly, else the shortest chain of legal conversions (FP32 -> INT8
    on A2/A3 goes through FP16, as its hardware does); None if no chain exists."""
    paths: dict[DataType, list[DataType]] = {src: []}
    frontier = [src]
    while frontier and target not in paths:
        nxt = []
        for d in frontier:
            for to in isa.conversions("block.cast", d):
                if to not in paths:
                    paths[to] = [*paths[d], to]
                    nxt.append(to)
        frontier = nxt
    return paths.get(target)


NEAREST_MODES = (1, 2)  # rint, round (pypto.enums.ROUND_MODES)
ROUND_TO_ODD = 6


def cast_tile(b: Body, t: E.Var, target: DataType, mode: int) -> E.Var:
    """``t`` converted to ``target`` with rounding ``mode``, through intermediate dtypes where the
    target has no direct conversion. Intermediate narrowing steps round to odd when the last step
    rounds to nearest (then the chain rounds as one direct conversion would, the intermediate having
    at least two more bits than the result) and use ``mode`` itself when it is directed (floor, ceil
    and trunc commute with the exact-integer grid of the intermediate)."""
    path = conversion_path(t.type.dtype, target) or [target]  # no chain: block.cast names the problem
    for i, step in enumerate(path):
        last = i == len(path) - 1
        t = b.op("cast", t, step, mode if last or mode not in NEAREST_MODES else ROUND_TO_ODD)
    return t


@definition("tensor.cast")
def _cast(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    mode = call.kwargs.get("mode", 2)
    target = call.type.dtype
    return map_blocks(em, call, out, [call.args[0]],
                      lambda b, t, k: t[0] if t[0].type.dtype is target else cast_tile(b, t[0], target, mode),
                      target)
