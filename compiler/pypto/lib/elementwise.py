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
from pypto.ir import expr as E
from pypto.ir.expr import static_int
from pypto.lib import tiling
from pypto.lib.body import Body, work_dtype
from pypto.lib.emit import Emitter, Window, blocks, kind, read, shape2, write
from pypto.lib.registry import definition

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
    work = work_dtype(t.type.dtype, used)
    return b.cast(fn(b, b.cast(t, work)), out_dtype)


def binary_tile(b: Body, name: str, x: E.Var, y: E.Var, kinds: tuple[str, str], out_dtype: object) -> E.Var:
    work = work_dtype(out_dtype, BINARY[name] + BROADCAST_OPS)
    if work is out_dtype:  # the tile op promotes mixed operands itself (u32 + i32 -> i32)
        return b.binary(name, x, y, kinds)
    result = b.binary(name, b.cast(x, work), b.cast(y, work), kinds)
    if name == "div" and not out_dtype.is_float():
        # Integer division truncates toward zero, as the tile-scalar form (divs) and A5's integer tdiv
        # do; the FP32 quotient is correctly rounded, so for |operands| < 2**24 truncating it is exact.
        # The default cast rounds to nearest, which made 7 / 2 = 4.
        return b.op("cast", result, out_dtype, mode="trunc")
    return b.cast(result, out_dtype)


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
               work: DataType) -> E.Var:
    """``out`` with ``body(b, tiles, kinds)`` computed for every block of the result's tiling (the
    shared plan of :mod:`pypto.lib.tiling`, sized for the operands, the result and the ``work`` dtype
    the body computes in)."""
    out_shape = shape2(call.type)
    rows, cols, rank1, lead = grid_of(out_shape)
    kinds = [kind(x, out_shape[-2:]) for x in operands]
    dtypes = [x.type.dtype for x in operands] + [call.type.dtype, work]
    plan = tiling.plan(rows, cols, dtypes, row_vectors=not rank1, span=call.span)

    def block(e: Emitter, win: Window, carried: list) -> list:
        b = Body(e, win)
        tiles = [read(e, x, win, k) for x, k in zip(operands, kinds, strict=True)]
        return [write(e, body(b, tiles, kinds), carried[0], win)]

    return blocks(em, plan, [out], block, rank1=rank1, lead=lead)[0]


def _unary_def(name: str) -> None:
    @definition("tensor." + name)
    def define(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
        dtype = call.type.dtype
        return map_blocks(em, call, out, [call.args[0]],
                          lambda b, t, k: unary_tile(b, name, t[0], dtype),
                          work_dtype(call.args[0].type.dtype, UNARY[name][1]))


for _n in UNARY:
    _unary_def(_n)


def _binary_def(name: str) -> None:
    @definition("tensor." + name)
    def define(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
        dtype = call.type.dtype
        return map_blocks(em, call, out, list(call.args),
                          lambda b, t, k: binary_tile(b, name, t[0], t[1], (k[0], k[1]), dtype),
                          work_dtype(dtype, BINARY[name] + BROADCAST_OPS))


for _n in BINARY:
    _binary_def(_n)


def _scalar_def(name: str, block_op: str) -> None:
    @definition("tensor." + name)
    def define(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
        dtype = call.type.dtype
        s = call.args[1]

        def body(b: Body, t: list, k: list) -> E.Var:
            x = b.cast(t[0], work_dtype(dtype, (block_op,)))
            return b.cast(b.scalar(block_op, x, s), dtype)

        return map_blocks(em, call, out, [call.args[0]], body, work_dtype(dtype, (block_op,)))


for _n, _op in SCALAR.items():
    _scalar_def(_n, _op)


@definition("tensor.pow")
def _pow(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    n = static_int(call.args[1])
    dtype = call.type.dtype

    work = work_dtype(dtype, ("mul", "recip") if n < 0 else ("mul",))

    def body(b: Body, t: list, k: list) -> E.Var:
        return b.cast(pow_tile(b, b.cast(t[0], work), n), dtype)

    return map_blocks(em, call, out, [call.args[0]], body, work)


@definition("tensor.cast")
def _cast(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    mode = call.kwargs.get("mode", 2)
    target = call.type.dtype
    return map_blocks(em, call, out, [call.args[0]],
                      lambda b, t, k: t[0] if t[0].type.dtype is target else b.op("cast", t[0], target, mode),
                      target)
