"""Matmul for any shape: ``[.., M, K] @ [.., K, N]`` tiled over the cube buffers (seed 003 §1-§3).

``tensor.matmul`` on tensors of any static M, N, K (and NumPy batch dims, broadcast like
``numpy.matmul``) becomes a loop nest of cube tile ops. M may be a ``pl.dynamic`` dim: the M blocks
are then one loop ``range(0, M, bm)`` whose blocks have ``min(M - offset, bm)`` valid rows, ``bm`` as
large as rule 3 allows:

    for each output batch index:                   (one loop per batch dim; a size-1 operand dim is 0)
      for each M block, for each N block:          (full blocks in a loop, a ragged tail peeled)
        acc  = matmul(A[m, k0], B[k0, n])          (DDR -> Mat -> Left / Right -> Acc)
        for each further K chunk:                  (split-K: accumulate in L0C, matmul_acc)
          acc = matmul_acc(acc, A[m, k], B[k, n])
        C[m, n] = store(acc)                       (Acc -> DDR, only the valid region)

Tiling rule (:func:`plan_matmul`; every capacity is read from the machine file through
:data:`pypto.enums.CAPACITY`, no size lives here):

1. Every dim is padded to the cube granule ``g = max(16, 32 / sizeof(T))``: one fractal box edge for
   every operand layout, also when an operand is moved transposed (``_cube_granule``). A tail block
   is a tile of the padded tail size whose valid shape is the true extent; Mat loads zero-fill the
   rest of the tile, so padded K columns/rows add nothing to a product.
2. Each tile may take at most half of its buffer, so two generations of it fit (the peeled first
   chunk and the loop's, or a ping-pong pair for the pipes to overlap).
3. ``bm x bn`` (the accumulator) starts as the padded ``M x N`` and the larger side is halved (to a
   multiple of ``g``) until ``bm * bn * sizeof(acc)`` fits half of L0C (Acc).
4. ``bk`` is the largest multiple of ``g`` (at most the padded K) for which ``bm x bk`` fits half of
   L0A (Left), ``bk x bn`` half of L0B (Right) and both together half of L1 (Mat): the Mat tiles of
   one K chunk are exactly its L0 tiles (the IR has no sub-window extract from Mat to L0).
5. Each dim is then split evenly: ``n = ceil(D / b)`` blocks of ``ceil_g(D / n)``, so the tail
   block is as small as it can be (M = 300 with ``bm <= 80`` is 80, 80, 80, 60, not 128, 128, 44).
6. K chunks after the first accumulate in the same L0C tile (``matmul_acc``): split-K whenever K
   does not fit one chunk.
7. When A's whole ``bm x K`` row panel (all its K chunks) fits half of L1, it is loaded once per M
   block and every N block moves its chunks from L1 to L0A (``a_panel``; the K loop is then
   unrolled over the panel's tiles); otherwise A is reloaded per block like B. The panel is kept
   only when it fits L1 beside two generations of B's chunk (rule 8's pong buffer).
8. Ping-pong K loop: when two generations of a K chunk's buffers fit (two ``bm x bk`` Left tiles,
   two ``bk x bn`` Right tiles, and in Mat two A and two B chunks, or the panel and two B chunks),
   the K chunks run in groups of two, each group written stage by stage (both chunks' loads, then
   both chunks' moves, then both matmuls). The two chunks of a group are live at once, so
   MemoryReuse gives them distinct buffers (ping and pong), and InsertSync's flags let the MTE2
   loads and MTE1 moves of one chunk run while the M pipe multiplies the other. When they do not
   fit, when K is one chunk, or when the whole product has fewer than ``PING_PONG_MIN_STEPS`` K
   chunks (over all its blocks and batches: too few to overlap), the chunks run one by one, and the
   reason is logged. An unrolled run of chunks (the A panel case) is software-pipelined instead of
   grouped: see :meth:`MatmulEmitter.skewed`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pypto.dtype import DataType
from pypto.enums import CAPACITY, MemorySpace
from pypto.errors import CompileError, Span
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.expr import static_int
from pypto.ir.types import ScalarType, shape_str
from pypto.lib.emit import DYNAMIC_SUPPORT
from pypto.ops import block as B

# A tile may use at most 1 / SHARE of its buffer (rule 2).
SHARE = 2
# Rule 8 pipelines a product of at least this many K chunks over all its blocks. With two (one
# block, K in two chunks) the pair's first matmul waits for both chunks' loads (InsertSync sinks the
# load flag past the second load) and the run was slower than chunk by chunk (a2a3 model, 97x61 @
# 61x131 FP32: 4526 vs 3829 cycles).
PING_PONG_MIN_STEPS = 3
# A run-time M is planned with blocks of rows that leave L0A room for a K chunk of this many granules
# (a policy: without it an M block as tall as the accumulator allows left no room for K at all).
DYNAMIC_M_K = 4


def cube_granule(dtype: DataType) -> int:
    """Multiple every matmul dim is padded to: the larger fractal box edge of all cube layouts.

    Left (ZZ) boxes are ``16 x 32/sizeof``, Right (ZN) ``32/sizeof x 16``, Mat (NZ) ``16 x 32/sizeof``
    and Acc ``16 x 16`` (pto-text-format §5.2).
    """
    return max(16, 32 // dtype.nbytes)


def _ceil_to(a: int, b: int) -> int:
    return -(-a // b) * b


def _even(extent: int, cap: int, g: int) -> int:
    """The block size that splits ``extent`` into as few blocks of at most ``cap`` as possible, as
    evenly as the granule allows (rule 5)."""
    count = -(-extent // cap)
    return min(cap, _ceil_to(-(-extent // count), g))


@dataclass(frozen=True)
class MatmulTiling:
    """Block sizes (multiples of ``granule``) of one matmul: ``bm x bk`` A chunks, ``bk x bn`` B
    chunks and ``bm x bn`` accumulators."""

    bm: int
    bn: int
    bk: int
    granule: int
    a_panel: bool = False
    # K chunks per ping-pong group (rule 8): 2 = double-buffered, 1 = single-buffered (``why`` says why)
    depth: int = 1
    why: str = ""


def plan_matmul(m: int | None, n: int, k: int, dtype: DataType, acc_dtype: DataType, batch: int = 1,
                acc_bytes: int | None = None) -> MatmulTiling:
    """The block sizes of an ``[M, K] @ [K, N]`` product (``batch`` of them) by the rule in the
    module docstring; ``acc_bytes`` caps an accumulator below rule 3's half of L0C (a product pushed
    through a FIFO: its slots hold whole accumulators). ``m=None`` is an M only known at run time:
    planned as if it were larger than any block, its blocks looped over with run-time valid rows."""
    g = cube_granule(dtype)
    size, acc_size = dtype.nbytes, acc_dtype.nbytes
    np_, kp = _ceil_to(n, g), _ceil_to(k, g)
    if m is not None:
        mp = _ceil_to(m, g)
    else:  # the most rows the accumulator holds that leave L0A room for a K chunk of DYNAMIC_M_K granules
        mp = min(CAPACITY[MemorySpace.Acc] // SHARE // (g * acc_size),
                 CAPACITY[MemorySpace.Left] // SHARE // (DYNAMIC_M_K * g * size))
        mp = max(g, mp // g * g)
    bm, bn = mp, np_
    cap = CAPACITY[MemorySpace.Acc] // SHARE if acc_bytes is None else min(acc_bytes, CAPACITY[MemorySpace.Acc] // SHARE)
    while bm * bn * acc_size > cap and (bm > g or bn > g):
        if bm >= bn:
            bm = max(g, _ceil_to(bm // 2, g))
        else:
            bn = max(g, _ceil_to(bn // 2, g))
    bm, bn = (_even(m, bm, g) if m is not None else bm), _even(n, bn, g)

    def fits(bk: int) -> bool:
        return (bm * bk * size <= CAPACITY[MemorySpace.Left] // SHARE
                and bk * bn * size <= CAPACITY[MemorySpace.Right] // SHARE
                and (bm + bn) * bk * size <= CAPACITY[MemorySpace.Mat] // SHARE)

    if not fits(g):
        raise CompileError(f"matmul {m}x{k} @ {k}x{n}: a {bm}x{g} / {g}x{bn} chunk does not fit the cube buffers")
    bk = kp
    if not fits(bk):
        lo, hi = 1, kp // g  # fits(lo * g) holds, fits(hi * g) does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid * g) else (lo, mid)
        bk = lo * g
    bk = _even(k, bk, g)
    k_segs = _segments(k, bk, g)
    panel_bytes = bm * sum(seg.tile * seg.count for seg in k_segs) * size
    chunks = sum(seg.count for seg in k_segs)
    mat = CAPACITY[MemorySpace.Mat]
    # rule 7, beside rule 8's two B chunks when the K loop has more than one chunk
    a_panel = panel_bytes <= mat // SHARE and (chunks == 1 or panel_bytes + 2 * bk * bn * size <= mat)
    steps = chunks * batch * (-(-m // bm) if m is not None else 2) * -(-n // bn)  # a run-time M: >= 2 blocks
    depth, why = _ping_pong(bm, bn, bk, size, chunks, steps, panel_bytes if a_panel else None)
    return MatmulTiling(bm, bn, bk, g, a_panel=a_panel, depth=depth, why=why)


def _ping_pong(bm: int, bn: int, bk: int, size: int, chunks: int, steps: int,
               panel_bytes: int | None) -> tuple[int, str]:
    """Rule 8: (2, "") when two generations of a K chunk's buffers fit, else (1, the reason)."""
    if chunks == 1:
        return 1, "K is one chunk"
    if steps < PING_PONG_MIN_STEPS:
        return 1, (f"{steps} K chunks in all: too few to overlap (a ping-pong pair's first matmul waits "
                   "for both chunks' loads)")
    mat_bytes = (panel_bytes if panel_bytes is not None else 2 * bm * bk * size) + 2 * bk * bn * size
    need = ((MemorySpace.Left, 2 * bm * bk * size), (MemorySpace.Right, 2 * bk * bn * size),
            (MemorySpace.Mat, mat_bytes))
    for space, nbytes in need:
        if nbytes > CAPACITY[space]:
            return 1, f"two generations of the K chunk need {nbytes} bytes of {space.name}, which holds {CAPACITY[space]}"
    return 2, ""


@dataclass(frozen=True)
class _Segment:
    """``count`` blocks along one dim at offsets ``start + i * step``, each a tile of ``tile`` elements
    of which ``valid`` are data."""

    start: int
    count: int
    step: int
    tile: int
    valid: int


@dataclass(frozen=True)
class _DynamicSegment:
    """The blocks along a dim of run-time ``extent``: a loop ``range(0, extent, step)`` whose block has
    ``min(extent - offset, step)`` valid rows (a tile of ``step``)."""

    extent: Any
    step: int


def _dims(t: Any) -> tuple:
    return tuple(static_int(d) if static_int(d) is not None else d for d in t.shape)


def _segments(extent: int, block: int, g: int) -> list[_Segment]:
    full, rem = divmod(extent, block)
    segs = [_Segment(0, full, block, block, block)] if full else []
    if rem:
        segs.append(_Segment(full * block, 1, block, _ceil_to(rem, g), rem))
    return segs


def _idx(v: int) -> E.ConstInt:
    return E.ConstInt(v, DataType.INDEX)


class MatmulEmitter:
    """Emits the tiled loop nest of one ``c = tensor.matmul(a, b)`` that stores into ``out``.

    ``fresh(base)`` gives unique names in the function being built. :meth:`emit` returns the
    statements and the variable holding ``out`` after the last store (the loops carry the output
    tensor as an iteration argument, as SSA form requires).
    """

    def __init__(self, call: E.Call, fresh: Callable[[str], str], span: Span | None = None,
                 log: list | None = None, where: str = "", acc_bytes: int | None = None):
        self.call = call
        self.fresh = fresh
        self.span = span or call.span
        a, b = call.args
        self.a, self.b = a, b
        self.a_trans, self.b_trans = bool(call.kwargs.get("a_trans")), bool(call.kwargs.get("b_trans"))
        sa, sb = _dims(a.type), _dims(b.type)
        m_axis = len(sa) - (1 if self.a_trans else 2)
        if any(not isinstance(d, int) for i, d in enumerate(sa) if i != m_axis) or any(
                not isinstance(d, int) for d in sb):
            raise CompileError(f"tensor.matmul needs static shapes but M (got {shape_str(a.type.shape)} x "
                               f"{shape_str(b.type.shape)}): {DYNAMIC_SUPPORT}", self.span)
        if len(sa) < 2 or len(sb) < 2:
            raise CompileError(
                "tensor.matmul: a 1-D operand is not tiled in a kernel; reshape it to [1, K] or [K, 1] first",
                self.span)
        self.sa, self.sb = sa, sb
        self.m = sa[-1] if self.a_trans else sa[-2]
        self.k = sa[-2] if self.a_trans else sa[-1]
        self.n = sb[-2] if self.b_trans else sb[-1]
        if self.a_trans and not isinstance(self.m, int):
            raise CompileError(f"tensor.matmul with a_trans=True needs a static M (got {shape_str(a.type.shape)}): "
                               "transpose A's run-time columns outside the kernel, or pass it untransposed", self.span)
        self.batch = tuple(static_int(d) for d in call.type.shape[:-2])
        acc_dtype = B.accumulator_dtype(a.type.dtype)
        if call.type.dtype is not acc_dtype and call.type.dtype not in B.ACC_STORE_DTYPES.get(acc_dtype, ()):
            raise CompileError(
                f"tensor.matmul: the cube accumulates in {acc_dtype.name}; a {call.type.dtype.name} result would "
                f"need a cast the store cannot do (use out_dtype=pl.{acc_dtype.name})",
                self.span,
            )
        self.dynamic_m = not isinstance(self.m, int)
        self.tiling = t = plan_matmul(None if self.dynamic_m else self.m, self.n, self.k, a.type.dtype, acc_dtype,
                                      math.prod(self.batch), acc_bytes)
        if log is not None:
            buffering = "double-buffered (ping-pong)" if t.depth == 2 else f"single-buffered: {t.why}"
            log.append(f"{where}: matmul {self.m}x{self.k} @ {self.k}x{self.n}: blocks {t.bm}x{t.bn}x{t.bk}"
                       f"{', A panel in L1' if t.a_panel else ''}; K loop {buffering}")

    # ------------------------------------------------------------------ building blocks
    def let(self, base: str, call: E.Call, out: list) -> E.Var:
        v = E.Var(self.fresh(base), call.type, self.span)
        out.append(St.AssignStmt(v, call, self.span))
        return v

    def over(self, segs: list[_Segment], name: str, carried: list, inner: Callable) -> tuple[list, list]:
        """Statements running ``inner(offset, segment, carried) -> (stmts, carried)`` for every block of
        ``segs``: a one-block segment inline at a constant offset, a longer one as a loop carrying
        ``carried`` (iteration arguments in, yielded values out)."""
        stmts: list = []
        for seg in segs:
            if isinstance(seg, _DynamicSegment):  # range(0, extent, step), valid min(extent - offset, step)
                lv = E.Var(self.fresh(name), ScalarType(DataType.INDEX), self.span)
                ias = [E.IterArg(self.fresh(f"{c.name}_it"), c.type, self.span, c) for c in carried]
                here = _Segment(0, 1, seg.step, seg.step, E.min_(seg.extent - lv, seg.step))
                more, new = inner(lv, here, ias)
                body = St.SeqStmts(tuple(more + [St.YieldStmt(tuple(new), self.span)]), self.span)
                rvs = [E.Var(self.fresh(f"{c.name}_next"), c.type, self.span) for c in carried]
                stmts.append(St.ForStmt(lv, _idx(0), seg.extent, _idx(seg.step), tuple(ias), body, tuple(rvs),
                                        self.span))
                carried = rvs
                continue
            if seg.count == 1:
                more, carried = inner(_idx(seg.start), seg, carried)
                stmts += more
                continue
            lv = E.Var(self.fresh(name), ScalarType(DataType.INDEX), self.span)
            off = E.mul(lv, _idx(seg.step), self.span)
            if seg.start:
                off = E.add(off, _idx(seg.start), self.span)
            ias = [E.IterArg(self.fresh(f"{c.name}_it"), c.type, self.span, c) for c in carried]
            more, new = inner(off, seg, ias)
            body = St.SeqStmts(tuple(more + [St.YieldStmt(tuple(new), self.span)]), self.span)
            rvs = [E.Var(self.fresh(f"{c.name}_next"), c.type, self.span) for c in carried]
            stmts.append(St.ForStmt(lv, _idx(0), _idx(seg.count), _idx(1), tuple(ias), body, tuple(rvs), self.span))
            carried = rvs
        return stmts, carried

    def mat(self, x: Any, trans: bool, batch_offs: list, rows: tuple, cols: tuple, out: list) -> E.Var:
        """One operand chunk loaded to L1: ``rows``/``cols`` are (offset, segment) in the
        un-transposed orientation ([M, K] for A, [K, N] for B); a transposed operand is read the
        other way round."""
        (ro, rs), (co, cs) = (cols, rows) if trans else (rows, cols)
        load = B.load(x, batch_offs + [ro, co], [rs.tile, cs.tile], [rs.valid, cs.valid], MemorySpace.Mat,
                      span=self.span)
        return self.let(f"{x.name}_mat", load, out)

    def l0(self, mat: E.Var, trans: bool, space: MemorySpace, out: list) -> E.Var:
        """A Mat chunk moved to L0A/L0B (``transpose=True`` for a transposed operand)."""
        base = mat.name.rsplit("_mat", 1)[0]
        return self.let(f"{base}_{space.name.lower()}", B.move(mat, space, trans, span=self.span), out)

    def batch_offsets(self, x: Any, shape: tuple, idx: list) -> list:
        """Offsets of operand ``x`` along its batch dims for the output batch index ``idx``: NumPy
        broadcasting aligns batch dims from the right, and a size-1 dim is read at 0."""
        nb = len(shape) - 2
        offs = []
        for d in range(nb):
            od = len(self.batch) - nb + d
            offs.append(idx[od] if shape[d] != 1 or self.batch[od] == 1 else _idx(0))
        return offs

    # ------------------------------------------------------------------ the nest
    def emit(self, out_tensor: E.Var) -> tuple[list, E.Var]:
        t = self.tiling
        batch_segs = [[_Segment(0, d, 1, 1, 1)] for d in self.batch]
        m_segs = [_DynamicSegment(self.m, t.bm)] if self.dynamic_m else _segments(self.m, t.bm, t.granule)
        n_segs = _segments(self.n, t.bn, t.granule)

        def batch_level(level: int, idx: list) -> Callable:
            def inner(off: Any, seg: _Segment, carried: list) -> tuple[list, list]:
                here = idx + [off]
                if level + 1 < len(self.batch):
                    return self.over(batch_segs[level + 1], "bb", carried, batch_level(level + 1, here))
                return self.over(m_segs, "bm", carried, self.m_level(here, n_segs))
            return inner

        if self.batch:
            stmts, carried = self.over(batch_segs[0], "bb", [out_tensor], batch_level(0, []))
        else:
            stmts, carried = self.over(m_segs, "bm", [out_tensor], self.m_level([], n_segs))
        return stmts, carried[0]

    def m_level(self, idx: list, n_segs: list) -> Callable:
        def inner(mo: Any, ms: _Segment, carried: list) -> tuple[list, list]:
            pre: list = []
            panel = None
            if self.tiling.a_panel and sum(seg.count for seg in n_segs) > 1:
                # rule 7: A's row panel stays in L1 while every N block uses it
                a_offs = self.batch_offsets(self.a, self.sa, idx)
                panel = [self.mat(self.a, self.a_trans, a_offs, (mo, ms), k, pre) for k in self.k_chunks()]

            def n_inner(no: Any, ns: _Segment, carried2: list) -> tuple[list, list]:
                return self.block(idx, (mo, ms), (no, ns), carried2[0], panel)
            more, carried = self.over(n_segs, "bn", carried, n_inner)
            return pre + more, carried
        return inner

    def k_chunks(self) -> list[tuple[Any, _Segment]]:
        """Every K chunk as (constant offset, one-block segment), for an unrolled K loop."""
        t = self.tiling
        return [(_idx(seg.start + i * seg.step), _Segment(seg.start + i * seg.step, 1, seg.step, seg.tile, seg.valid))
                for seg in _segments(self.k, t.bk, t.granule) for i in range(seg.count)]

    def load(self, chunk: tuple, a_offs: list, b_offs: list, mrow: tuple, ncol: tuple, out: list) -> tuple:
        """The MTE2 stage of one chunk ``(offset, segment, A's panel tile or None)``: its A (unless
        the panel holds it) and B chunks loaded to Mat."""
        ko, ks, a_mat = chunk
        if a_mat is None:
            a_mat = self.mat(self.a, self.a_trans, a_offs, mrow, (ko, ks), out)
        return a_mat, self.mat(self.b, self.b_trans, b_offs, (ko, ks), ncol, out)

    def move(self, mats: tuple, out: list) -> tuple:
        """The MTE1 stage: a chunk's Mat tiles moved to Left / Right."""
        return (self.l0(mats[0], self.a_trans, MemorySpace.Left, out),
                self.l0(mats[1], self.b_trans, MemorySpace.Right, out))

    def multiply(self, l0: tuple, acc: Any, out: list) -> E.Var:
        """The M stage: the first chunk starts the accumulator, later ones add to it."""
        if acc is None:
            return self.let("acc", B.matmul(*l0, span=self.span), out)
        return self.let("acc", B.matmul_acc(acc, *l0, span=self.span), out)

    def in_turn(self, chunk: tuple, a_offs: list, b_offs: list, mrow: tuple, ncol: tuple, acc: Any,
                out: list) -> E.Var:
        """One chunk single-buffered: A loaded and moved, then B, then the matmul (B's Mat tile
        reuses A's once A is in L0A, so the chunk needs one operand's room in Mat)."""
        ko, ks, a_mat = chunk
        if a_mat is None:
            a_mat = self.mat(self.a, self.a_trans, a_offs, mrow, (ko, ks), out)
        left = self.l0(a_mat, self.a_trans, MemorySpace.Left, out)
        right = self.l0(self.mat(self.b, self.b_trans, b_offs, (ko, ks), ncol, out), self.b_trans,
                        MemorySpace.Right, out)
        return self.multiply((left, right), acc, out)

    def group(self, chunks: list, a_offs: list, b_offs: list, mrow: tuple, ncol: tuple, acc: Any,
              out: list) -> E.Var:
        """One ping-pong group of a K loop's body: two chunks written stage by stage (both loads,
        both moves, both matmuls), so their buffers are live together and get distinct (ping and
        pong) buffers, and one chunk's loads and moves can run beside the other's matmul."""
        if self.tiling.depth == 1:
            return self.in_turn(chunks[0], a_offs, b_offs, mrow, ncol, acc, out)
        mats = [self.load(c, a_offs, b_offs, mrow, ncol, out) for c in chunks]
        l0s = [self.move(m, out) for m in mats]
        for l0 in l0s:
            acc = self.multiply(l0, acc, out)
        return acc

    def skewed(self, chunks: list, a_offs: list, b_offs: list, mrow: tuple, ncol: tuple, acc: Any,
               out: list) -> E.Var:
        """An unrolled run of chunks. Double-buffered (rule 8) it is software-pipelined, each stage
        one chunk ahead of the next: load 0, load 1, move 0, load 2, move 1, matmul 0, load 3, ...
        Chunk i's Mat tiles are live until after chunk i+1's load and its L0 tiles until after
        chunk i+1's move, so MemoryReuse alternates two buffers per space (chunk i+2 takes chunk
        i's), and MTE2 streams loads while the M pipe works one chunk behind. Single-buffered,
        the chunks run one after the other."""
        if self.tiling.depth == 1:
            for c in chunks:
                acc = self.in_turn(c, a_offs, b_offs, mrow, ncol, acc, out)
            return acc
        mats = [self.load(chunks[0], a_offs, b_offs, mrow, ncol, out)]
        l0s: list = []
        for i in range(len(chunks)):
            if i + 1 < len(chunks):
                mats.append(self.load(chunks[i + 1], a_offs, b_offs, mrow, ncol, out))
            l0s.append(self.move(mats[i], out))
            if i:
                acc = self.multiply(l0s[i - 1], acc, out)
        return self.multiply(l0s[-1], acc, out)

    def block(self, idx: list, mrow: tuple, ncol: tuple, out_tensor: Any, panel: list | None) -> tuple[list, list]:
        """One ``bm x bn`` output block: the K chunks accumulated in L0C in groups of ``depth``
        (rule 8), then stored. With an A ``panel`` (its Mat tiles, one per K chunk) the K loop is
        unrolled over the panel; otherwise the first group is peeled (its first chunk starts the
        accumulator), the full groups of full-size chunks are a loop and the rest is one last group."""
        t = self.tiling
        d = t.depth
        a_offs, b_offs = self.batch_offsets(self.a, self.sa, idx), self.batch_offsets(self.b, self.sb, idx)
        chunks = [(ko, ks, a_mat) for (ko, ks), a_mat in
                  zip(self.k_chunks(), panel if panel is not None else [None] * len(self.k_chunks()), strict=True)]
        stmts: list = []
        if panel is not None:
            acc = self.skewed(chunks, a_offs, b_offs, mrow, ncol, None, stmts)
        else:
            acc = self.group(chunks[:d], a_offs, b_offs, mrow, ncol, None, stmts)
            full = _segments(self.k, t.bk, t.granule)[0]
            groups = max(0, (full.count - d) // d) if full.valid == t.bk else 0
            one = _Segment(0, 1, t.bk, t.bk, t.bk)

            def k_inner(ko: Any, ks: _Segment, carried: list) -> tuple[list, list]:
                out: list = []
                group = [(_plus(ko, i * t.bk, self.span), one, None) for i in range(d)]
                return out, [self.group(group, a_offs, b_offs, mrow, ncol, carried[0], out)]

            loop = [_Segment(d * t.bk, groups, d * t.bk, t.bk, t.bk)] if groups else []
            more, (acc,) = self.over(loop, "bk", [acc], k_inner)
            stmts += more
            rest = chunks[d + groups * d:]
            if rest:
                acc = self.group(rest, a_offs, b_offs, mrow, ncol, acc, stmts)
        return stmts, [self.finish(acc, list(idx) + [mrow[0], ncol[0]], out_tensor, stmts)]

    def finish(self, acc: E.Var, offs: list, out_tensor: Any, stmts: list) -> E.Var:
        """The end of one output block: ``acc`` stored into ``out_tensor`` at ``offs``; returns the
        tensor after the store (what the block loops carry)."""
        return self.let(f"{out_tensor.name}_st", B.store(acc, offs, out_tensor, span=self.span), stmts)


def _plus(off: Any, v: int, span: Span) -> Any:
    """``off + v``, folded when ``off`` is a constant."""
    if not v:
        return off
    if isinstance(off, E.ConstInt):
        return _idx(off.value + v)
    return E.add(off, _idx(v), span)
