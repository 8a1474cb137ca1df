"""Composites built from the primitives' tile functions: softmax, log_softmax, layer_norm, rms_norm
(normalising over the last axis of a tensor of any rank; a vector is one row) and swiglu (element-wise).

A normalising composite is a **row program**: a few row statistics (``[tr, 1]`` tiles, each a
reduction of a per-block expression that may use the statistics before it), then an output
expression per block. It is one tile loop over row blocks (seed 003 §6.2: the composite's author fuses
its primitives by hand):

* when a whole row fits in a tile, each row block is loaded once and every statistic and the output
  are computed from that tile;
* when it does not (softmax of 37 x 6000 or 3 x 100000), the loop is two-level: per row block, one
  inner loop over column chunks per statistic (carrying the partial reduction, as
  :func:`pypto.lib.reduction.row_stat` does), then one inner loop producing and storing the output
  chunk by chunk. The input is read once per statistic and once for the output. The output pass is
  the grid loops an element-wise op over the same plan has, so FuseLoops runs a following
  element-wise op in it.

Formulas (NumPy references in the tests):

* ``softmax = exp(x - max) / sum(exp(x - max))``;
* ``log_softmax = x - (max + log(sum(exp(x - max))))``;
* ``rms_norm = x * rsqrt(mean(x^2) + eps) * weight``;
* ``layer_norm = (x - mean) * rsqrt(mean((x - mean)^2) + eps) * weight + bias``;
* ``swiglu(gate, up) = silu(gate) * up``.

Softmax and log_softmax compute in the input's dtype where the target allows every instruction
(f32, f16) and in f32 otherwise; the norms always accumulate in f32.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pypto.dtype import DataType
from pypto.ir import expr as E
from pypto.lib import tiling
from pypto.lib.body import Body, work_dtype
from pypto.lib.elementwise import map_blocks, silu_tile
from pypto.lib.emit import Emitter, Window, blocks, chunks, grid_shape, inverse, read, write
from pypto.lib.reduction import row_stat
from pypto.lib.registry import definition
from pypto.ops import block as B

Tiles = dict
TermFn = Callable[[Body, Tiles, dict], E.Var]


@dataclass(frozen=True)
class RowStat:
    """A ``[tr, 1]`` statistic: ``reduce`` over each row of ``term``; ``finish`` maps the full
    reduction (e.g. a sum to ``rsqrt(sum / C + eps)``)."""

    name: str
    reduce: str
    term: TermFn
    finish: Callable[[Body, E.Var, dict], E.Var] | None = None


def row_program(em: Emitter, call: E.Call, out: E.Var, stats: list[RowStat], produce: TermFn,
                work: DataType) -> E.Var:
    """``out`` = ``produce`` per block, after ``stats`` per row block (see the module docstring)."""
    x = call.args[0]
    weights = list(call.args[1:])
    shape = grid_shape(x.type, call.op.name)
    rank1 = len(shape) == 1  # a vector is one row: its [tc] tiles are viewed as [1, tc] (no data moves)
    rows, cols = (1, shape[0]) if rank1 else shape[-2:]
    plan = tiling.plan(rows, cols, [x.type.dtype, out.type.dtype, work], span=call.span)
    cache: dict = {}

    def tiles(b: Body, w: Window) -> Tiles:
        """The block's input tiles in the compute dtype, read once per (emitter, window): a whole-row
        block is loaded once for all statistics and the output."""
        co = E.static_int(w.co)
        key = (id(b.em), id(w.co) if co is None else co, w.vc)
        if key not in cache:
            xt = read(b.em, x, w)
            if rank1:
                xt = b.em.let(f"{x.name}_row", B.reshape(xt, [1, w.tc], span=b.em.span), (1, w.vc))
            t = {"x": b.cast(xt, work)}
            for i, v in enumerate(weights):
                t[f"w{i}"] = b.cast(read(b.em, v, w, "col"), work)
            cache[key] = t
        return cache[key]

    def block(e: Emitter, win: Window, carried: list) -> list:
        values: dict = {}
        for st in stats:
            v = row_stat(e, plan, win, st.reduce, lambda b, w, st=st: st.term(b, tiles(b, w), values), work)
            values[st.name] = st.finish(Body(e, win), v, values) if st.finish else v

        def emit_out(ce: Emitter, w: Window, c: list) -> list:
            b = Body(ce, w)
            r = b.cast(produce(b, tiles(b, w), values), out.type.dtype)
            if rank1:
                r = ce.let(f"{r.name}_1d", B.reshape(r, [w.tc], span=ce.span), (w.vc,))
            return [write(ce, r, c[0], w)]

        if not plan.chunked:
            return emit_out(e, win, carried)
        return chunks(e, plan, win, carried, emit_out)

    return blocks(em, plan, [out], block, cols=False, lead=tuple(shape[:-2]))[0]


def _shifted_exp(b: Body, t: Tiles, v: dict) -> E.Var:
    """``exp(x - max)`` of the block, computed once per block read (the sum and the output share it
    when a whole row is one tile)."""
    key = ("shifted_exp", id(v["max"]))
    if key not in t:
        t[key] = b.op("exp", b.op("row_expand_sub", t["x"], v["max"]))
    return t[key]


SOFTMAX_OPS = ("row_max", "row_sum", "row_expand_sub", "row_expand_div", "exp", "maximum", "add", "log")


@definition("tensor.softmax")
def _softmax(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    stats = [RowStat("max", "max", lambda b, t, v: t["x"]), RowStat("sum", "sum", _shifted_exp)]
    return row_program(em, call, out, stats, lambda b, t, v: b.op("row_expand_div", _shifted_exp(b, t, v), v["sum"]),
                       work_dtype(call.type.dtype, SOFTMAX_OPS))


@definition("tensor.log_softmax")
def _log_softmax(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    stats = [
        RowStat("max", "max", lambda b, t, v: t["x"]),
        RowStat("lse", "sum", _shifted_exp, lambda b, s, v: b.op("add", v["max"], b.op("log", s))),
    ]
    return row_program(em, call, out, stats, lambda b, t, v: b.op("row_expand_sub", t["x"], v["lse"]),
                       work_dtype(call.type.dtype, SOFTMAX_OPS))


def _rstd(cols: int | E.Expr, eps: float) -> Callable[[Body, E.Var, dict], E.Var]:
    """``sum -> rsqrt(sum / cols + eps)`` (``cols`` may be a dynamic dim)."""
    return lambda b, s, v: b.op("rsqrt", b.scalar("adds", b.scalar("muls", s, inverse(cols)), eps))


@definition("tensor.rms_norm")
def _rms_norm(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    cols = grid_shape(call.args[0].type, call.op.name)[-1]
    eps = call.kwargs.get("eps", 1e-6)
    stats = [RowStat("rstd", "sum", lambda b, t, v: b.op("mul", t["x"], t["x"]), _rstd(cols, eps))]

    def produce(b: Body, t: Tiles, v: dict) -> E.Var:
        return b.binary("mul", b.op("row_expand_mul", t["x"], v["rstd"]), t["w0"], ("full", "col"))

    return row_program(em, call, out, stats, produce, DataType.FP32)


def _square(b: Body, t: E.Var) -> E.Var:
    return b.op("mul", t, t)


@definition("tensor.layer_norm")
def _layer_norm(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    cols = grid_shape(call.args[0].type, call.op.name)[-1]
    eps = call.kwargs.get("eps", 1e-5)

    def centred(b: Body, t: Tiles, v: dict) -> E.Var:
        return b.op("row_expand_sub", t["x"], v["mean"])

    stats = [
        RowStat("mean", "sum", lambda b, t, v: t["x"], lambda b, s, v: b.scalar("muls", s, inverse(cols))),
        RowStat("rstd", "sum", lambda b, t, v: _square(b, centred(b, t, v)), _rstd(cols, eps)),
    ]

    def produce(b: Body, t: Tiles, v: dict) -> E.Var:
        y = b.op("row_expand_mul", centred(b, t, v), v["rstd"])
        return b.binary("add", b.binary("mul", y, t["w0"], ("full", "col")), t["w1"], ("full", "col"))

    return row_program(em, call, out, stats, produce, DataType.FP32)


@definition("tensor.swiglu")
def _swiglu(em: Emitter, call: E.Call, out: E.Var) -> E.Var:
    dtype = call.type.dtype
    work = work_dtype(dtype, ("exp", "neg", "recip", "adds", "mul"))

    def body(b: Body, t: list, k: list) -> E.Var:
        gate, up = b.cast(t[0], work), b.cast(t[1], work)
        return b.cast(b.binary("mul", silu_tile(b, gate), up, (k[0], k[1])), dtype)

    return map_blocks(em, call, out, list(call.args), body, work)
