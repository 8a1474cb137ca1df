"""ExpandPower2: power-of-two predicated expansion of ``pl.parallel_for_power2`` loops (seed 003 §6.4-6.5).

``for i in pl.parallel_for_power2(n, min_chunk=m, max_chunk=M):`` (``m``, ``M`` powers of two) becomes

* a loop over the ``n // M`` full chunks of ``M`` iterations (chunk base ``c * M``);
* for each size ``s = M/2, ..., m`` one chunk of ``s`` iterations at base ``n - n % (2s)``, present when
  bit ``s`` of ``n`` is set (an ``if`` on ``(n // s) % 2`` for a run-time ``n``, resolved here for a
  constant one);
* when ``m > 1`` a tail chunk of ``m`` iterations at base ``n - n % m`` whose iteration ``j`` runs only
  if ``base + j < n`` (the predicate; a constant ``n`` keeps exactly the valid iterations).

So only ``log2(M/m) + 1`` chunk sizes and one predicated tail exist whatever ``n`` is: at most
``log2(M/m) + 2`` distinct chunk bodies (:func:`chunk_templates`). Inside a chunk of at most
``unroll_limit`` iterations (default :data:`UNROLL_LIMIT` = 8) the body is fully unrolled, every
index a constant offset from the chunk base, so later passes see straight-line code; larger chunks
keep an inner loop over the chunk. Loop-carried values are threaded through every chunk (and through
both branches of each ``if``).

Two ``parallel_for_power2`` loops with the same extent and bounds are fused by FuseLoops, which runs
first: the fused loop is expanded once, so the two bodies share every chunk (fusion chunk by chunk).
``expand_plain=(m, M)`` expands every plain ``pl.range`` / ``pl.parallel`` loop of a kernel the same
way (a pass option; off in the default pipelines). Two consecutive ``pl.range`` loops over the same
constant extent, the second reading what the first stores, are then fused **chunk-wise** (seed §6.5,
:mod:`pypto.passes.chunk_fusion`): per chunk, all of the first loop's iterations, then all of the
second's (non-parallel loops are never interleaved iteration by iteration; FuseLoops leaves them
alone when given ``chunkwise_nonparallel=True``). Every such decision is a line of
:attr:`ExpandPower2Pass.log`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from pypto.dtype import DataType
from pypto.enums import ForKind
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TensorType
from pypto.ir.visitor import stmt_list, substitute, walk_stmts
from pypto.passes.base import NameAllocator, Pass, is_kernel
from pypto.passes.block_rewriter import BlockRewriter, clone_iteration
from pypto.passes.chunk_fusion import fuse_chunk, resolve, uses
from pypto.passes.grid_loops import drop_unused_out_params
from pypto.passes.ir_utils import all_names, definitions, fold, used_vars
from pypto.passes.launch_fusion import dead_out_params
from pypto.passes.loop_fusion import FusionLog, FusionRefused, buffer_links, buffer_root, same_expr

# Chunks of at most this many iterations are fully unrolled (8 copies of a tile body keep the kernel
# text small; seed 003 §6.5 suggests unrolling only the small chunk sizes).
UNROLL_LIMIT = 8
POWER2_CHUNK = 4  # ForStmt.loop_origin of a loop over the iterations of one chunk
POWER2_CHUNKS = 5  # ForStmt.loop_origin of the loop over the full max-size chunks


@dataclass(frozen=True)
class Chunk:
    """``size`` iterations from ``base``; ``valid`` < ``size`` only for the predicated tail."""

    base: int
    size: int
    valid: int


def plan_chunks(extent: int, min_chunk: int, max_chunk: int) -> list[Chunk]:
    """The chunks a constant ``extent`` expands into, in order (they tile ``range(extent)`` exactly)."""
    out = [Chunk(c * max_chunk, max_chunk, max_chunk) for c in range(extent // max_chunk)]
    base = extent - extent % max_chunk
    s = max_chunk // 2
    while s >= min_chunk:
        if extent - base >= s:
            out.append(Chunk(base, s, s))
            base += s
        s //= 2
    if base < extent:
        out.append(Chunk(base, min_chunk, extent - base))
    return out


def chunk_templates(extent: int, min_chunk: int, max_chunk: int) -> set[tuple[int, bool]]:
    """The distinct chunk bodies (size, predicated) the expansion of ``extent`` generates."""
    return {(c.size, c.valid < c.size) for c in plan_chunks(extent, min_chunk, max_chunk)}


def _idx(v: int) -> E.ConstInt:
    return E.ConstInt(v, DataType.INDEX)


class _Expander(BlockRewriter):
    def __init__(self, func: St.Function, unroll_limit: int, plain: tuple[int, int] | None,
                 dead: set | None = None, log: FusionLog | None = None):
        self.func = func
        self.names = NameAllocator(all_names(func))
        self.unroll_limit = unroll_limit
        self.plain = plain
        self.dead = dead or set()  # buffers nobody reads after the kernel
        self.log = log or FusionLog([])
        self.link = buffer_links(func.body)
        self.pending: dict = {}  # return var of an expanded loop -> its value; applied to later statements

    def block(self, body: Any) -> St.SeqStmts:
        out: list = []
        stmts = list(stmt_list(body))
        k = 0
        while k < len(stmts):
            s = substitute(stmts[k], dict(self.pending)) if self.pending else stmts[k]
            j = self._next_loop(stmts, k) if self._chunkwise_candidate(s) else None
            if j is not None:
                between = [substitute(x, dict(self.pending)) if self.pending else x for x in stmts[k + 1:j + 1]]
                fused = self.pair(replace(s, body=self.block(s.body)), between[-1], stmts[j + 1:])
                if fused is not None:  # what lay between the loops (reads nothing of the first) goes first
                    out.extend(between[:-1] + fused)
                    k = j + 1
                    continue
            out.extend(self.stmt(s))
            k += 1
        return St.SeqStmts(tuple(out), getattr(body, "span", E.UNKNOWN_SPAN))

    def _next_loop(self, stmts: list, k: int) -> int | None:
        """Index of the plain non-parallel loop after loop ``stmts[k]`` when only assignments that
        neither store nor read the first loop's results lie between."""
        results = set(stmts[k].return_vars)
        for j in range(k + 1, len(stmts)):
            x = stmts[j]
            if self._chunkwise_candidate(x):
                return j
            if (not isinstance(x, St.AssignStmt) or not isinstance(x.value, E.Call)
                    or x.value.op.name == "block.store" or uses(x, results)):
                return None
        return None

    def _chunkwise_candidate(self, s: Any) -> bool:
        """A plain non-parallel loop this expansion handles (``pl.range`` with ``expand_plain``)."""
        return (self.plain is not None and isinstance(s, St.ForStmt) and s.kind is ForKind.Sequential
                and s.loop_origin == 0 and s.power2 is None and s.chunk_size is None)

    # ------------------------------------------------------------------ chunk-wise fusion (seed §6.5)
    def pair(self, a: St.ForStmt, b: St.ForStmt, later: list) -> list | None:
        """``a`` and ``b`` expanded together chunk by chunk, or None (then each is expanded alone)."""
        where = f"{self.func.name}: loops at {_line(a)} and {_line(b)}"
        b_uses = used_vars(b)
        inter = [k for k, rv in enumerate(a.return_vars) if rv in b_uses and isinstance(rv.type, TensorType)]
        if not inter:
            return None
        if any(rv in b_uses for k, rv in enumerate(a.return_vars) if k not in inter):
            self.log.lines.append(f"{where}: not fused chunk-wise: the consumer needs a value the producer only "
                                  "has after its last iteration")
            return None
        if not all(same_expr(x, y) for x, y in ((a.start, b.start), (a.stop, b.stop), (a.step, b.step))):
            self.log.lines.append(f"{where}: not fused chunk-wise: different iteration spaces")
            return None
        n = E.static_int(fold(a.stop))
        if n is None or E.static_int(fold(a.start)) != 0 or E.static_int(fold(a.step)) != 1:
            self.log.lines.append(f"{where}: not fused chunk-wise: needs a constant range(n)")
            return None
        b = replace(b, body=self.block(b.body))
        roots = {buffer_root(a.iter_args[k].init_value, self.link) for k in inter}
        drop = roots <= self.dead and not uses(St.SeqStmts(tuple(later)), set(a.return_vars))
        lo, hi = self.plain
        plan = plan_chunks(n, lo, hi)
        full = [c for c in plan if c.size == hi and c.valid == hi]
        cur = ([ia.init_value for ia in a.iter_args], [ia.init_value for ia in b.iter_args])
        out: list = []
        try:
            if len(full) > 1:
                cur = self.pair_loop(a, b, len(full), cur, out, inter, drop)
            elif full:
                cur = self.pair_chunk(a, b, _idx(0), hi, hi, cur, out, inter, drop)
            for c in plan[len(full):]:
                cur = self.pair_chunk(a, b, _idx(c.base), c.size, c.valid, cur, out, inter, drop)
        except FusionRefused as why:
            self.log.lines.append(f"{where}: not fused chunk-wise: {why}")
            return None
        self.pending.update(zip(a.return_vars, cur[0], strict=False))
        self.pending.update(zip(b.return_vars, cur[1], strict=False))
        self.pending.update(_leaked_stores(a))
        self.pending.update(_leaked_stores(b))
        kept = "the intermediate stays on chip in the unrolled chunks" if drop else "the intermediate is still stored"
        self.log.lines.append(f"{where}: fused chunk-wise (each chunk: all of the first loop's iterations, then "
                              f"all of the second's); {kept}")
        return out

    def pair_loop(self, a: St.ForStmt, b: St.ForStmt, count: int, cur: tuple, out: list, inter: list,
                  drop: bool) -> tuple:
        """One loop over ``count`` full chunks, each running ``a``'s chunk then ``b``'s."""
        hi = self.plain[1]
        c = E.Var(self.names.fresh(f"{a.loop_var.name}_chunk"), a.loop_var.type, a.loop_var.span)
        iters = tuple([E.IterArg(self.names.fresh(f"{ia.name}_c"), ia.type, ia.span, v)
                       for ia, v in zip(s.iter_args, vals, strict=False)] for s, vals in ((a, cur[0]), (b, cur[1])))
        body: list = []
        vals = self.pair_chunk(a, b, E.mul(c, hi), hi, hi, (list(iters[0]), list(iters[1])), body, inter, drop)
        ias, ys = [*iters[0], *iters[1]], [*vals[0], *vals[1]]
        # a carried value each chunk yields unchanged (the intermediate whose stores went) is not carried
        fixed = {ia: ia.init_value for ia, y in zip(ias, ys, strict=True) if y is ia}
        kept = [k for k, ia in enumerate(ias) if ia not in fixed]
        body = list(stmt_list(substitute(St.SeqStmts(tuple(body), a.span), fixed))) if fixed else body
        if kept:
            body.append(St.YieldStmt(tuple(ys[k] for k in kept), a.span))
        rvs = [E.Var(self.names.fresh(f"{ia.name}_cr"), ia.type, ia.span) for ia in (*a.iter_args, *b.iter_args)]
        out.append(St.ForStmt(c, _idx(0), _idx(count), _idx(1), tuple(ias[k] for k in kept),
                              St.SeqStmts(tuple(body), a.span), tuple(rvs[k] for k in kept), a.span, a.kind, None, 0,
                              POWER2_CHUNKS))
        after = [fixed.get(ia, rv) for ia, rv in zip(ias, rvs, strict=True)]
        return after[:len(a.iter_args)], after[len(a.iter_args):]

    def pair_chunk(self, a: St.ForStmt, b: St.ForStmt, base: Any, size: int, valid: int, cur: tuple, out: list,
                   inter: list, drop: bool) -> tuple:
        """The chunk at ``base`` of ``a`` (all its iterations), then of ``b``; returns both carried lists."""
        entry = [cur[0][k] for k in inter]
        a_stmts: list = []
        new_a = self.chunk(a, base, size, valid, list(cur[0]), a_stmts)
        b_now = replace(b, body=substitute(b.body, dict(zip(a.return_vars, new_a, strict=False))))
        b_stmts: list = []
        new_b = self.chunk(b_now, base, size, valid, list(cur[1]), b_stmts)
        if size <= self.unroll_limit:
            a_stmts, b_stmts, renamed = fuse_chunk(a_stmts, b_stmts, entry, drop)
            new_a = resolve(new_a, renamed)
        out.extend(a_stmts + b_stmts)
        return new_a, new_b

    def stmt(self, s: Any) -> list:
        s = self.descend(s)
        if not isinstance(s, St.ForStmt):
            return [s]
        bounds = s.power2
        if bounds is None and self.plain is not None and s.kind is not ForKind.Unroll and s.loop_origin == 0:
            bounds = self.plain
        return self.expand(s, bounds) if bounds is not None else [s]

    # ------------------------------------------------------------------ the chunk sequence
    def expand(self, s: St.ForStmt, bounds: tuple[int, int]) -> list:
        start, step = E.static_int(fold(s.start)), E.static_int(fold(s.step))
        if start != 0 or step != 1:
            raise CompileError("power-of-two expansion needs a loop over range(extent) (start 0, step 1)", s.span)
        lo, hi = bounds
        n = fold(s.stop)
        cur = [ia.init_value for ia in s.iter_args]
        out: list = []
        static_n = E.static_int(n)
        if static_n is not None:
            plan = plan_chunks(max(static_n, 0), lo, hi)
            full = [c for c in plan if c.size == hi and c.valid == hi]
            if len(full) > 1:
                cur = self.full_chunks(s, _idx(len(full)), hi, cur, out)
            elif full:
                cur = self.chunk(s, _idx(0), hi, hi, cur, out)
            for c in plan[len(full):]:
                cur = self.chunk(s, _idx(c.base), c.size, c.valid, cur, out)
        else:
            cur = self.full_chunks(s, E.floordiv(n, hi), hi, cur, out)
            size = hi // 2
            while size >= lo:
                cur = self.bit_chunk(s, n, size, cur, out)
                size //= 2
            if lo > 1:
                cur = self.chunk(s, E.mul(E.floordiv(n, lo), lo), lo, None, cur, out, limit=n)
        self.pending.update(zip(s.return_vars, cur, strict=False))
        self.pending.update(_leaked_stores(s))
        return out

    def full_chunks(self, s: St.ForStmt, count: Any, size: int, cur: list, out: list) -> list:
        """A loop over ``count`` chunks of ``size`` iterations; returns the carried values after it."""
        c = E.Var(self.names.fresh(f"{s.loop_var.name}_chunk"), s.loop_var.type, s.loop_var.span)
        iters = [E.IterArg(self.names.fresh(f"{ia.name}_c"), ia.type, ia.span, v) for ia, v in zip(s.iter_args, cur,
                                                                                                  strict=False)]
        body: list = []
        vals = self.chunk(s, E.mul(c, size), size, size, list(iters), body)
        if iters:
            body.append(St.YieldStmt(tuple(vals), s.span))
        rvs = [E.Var(self.names.fresh(f"{ia.name}_cr"), ia.type, ia.span) for ia in s.iter_args]
        out.append(St.ForStmt(c, _idx(0), count, _idx(1), tuple(iters), St.SeqStmts(tuple(body), s.span), tuple(rvs),
                              s.span, s.kind, None, 0, POWER2_CHUNKS))
        return rvs

    def bit_chunk(self, s: St.ForStmt, n: Any, size: int, cur: list, out: list) -> list:
        """The chunk of ``size`` iterations at ``n - n % (2 size)``, run when bit ``size`` of ``n`` is set."""
        cond = E.ne(E.mod(E.floordiv(n, size), 2), 0)
        then: list = []
        vals = self.chunk(s, E.mul(E.floordiv(n, 2 * size), 2 * size), size, size, list(cur), then)
        return self.branch(s, cond, then, vals, cur, out)

    def branch(self, s: St.ForStmt, cond: Any, then: list, vals: list, cur: list, out: list) -> list:
        """``if cond: then`` with the carried values ``vals`` after ``then`` and ``cur`` otherwise."""
        if not cur:
            out.append(St.IfStmt(cond, St.SeqStmts(tuple(then), s.span), None, (), s.span))
            return []
        then.append(St.YieldStmt(tuple(vals), s.span))
        rvs = [E.Var(self.names.fresh(f"{ia.name}_p"), ia.type, ia.span) for ia in s.iter_args]
        orelse = St.SeqStmts((St.YieldStmt(tuple(cur), s.span),), s.span)
        out.append(St.IfStmt(cond, St.SeqStmts(tuple(then), s.span), orelse, tuple(rvs), s.span))
        return rvs

    def chunk(self, s: St.ForStmt, base: Any, size: int, valid: int | None, cur: list, out: list,
              limit: Any = None) -> list:
        """``size`` iterations of ``s``'s body from ``base`` appended to ``out``; only the first ``valid``
        ones (constant) or those below ``limit`` (run time, predicated) run. Returns the carried values."""
        count = size if valid is None else valid
        if size <= self.unroll_limit:
            for j in range(count):
                idx = fold(base + j) if j else base
                if limit is None:
                    cur = self.copy(s, idx, cur, out)
                else:
                    then: list = []
                    vals = self.copy(s, idx, list(cur), then)
                    cur = self.branch(s, E.lt(idx, limit), then, vals, cur, out)
            return cur
        j = E.Var(self.names.fresh(f"{s.loop_var.name}_j"), s.loop_var.type, s.loop_var.span)
        iters = [E.IterArg(self.names.fresh(f"{ia.name}_j"), ia.type, ia.span, v) for ia, v in zip(s.iter_args, cur,
                                                                                                  strict=False)]
        body: list = []
        idx = base + j
        if limit is None:
            vals = self.copy(s, idx, list(iters), body)
        else:
            then: list = []
            vals = self.branch(s, E.lt(idx, limit), then, self.copy(s, idx, list(iters), then), list(iters), body)
        if iters:
            body.append(St.YieldStmt(tuple(vals), s.span))
        rvs = [E.Var(self.names.fresh(f"{ia.name}_jr"), ia.type, ia.span) for ia in s.iter_args]
        out.append(St.ForStmt(j, _idx(0), _idx(count), _idx(1), tuple(iters), St.SeqStmts(tuple(body), s.span),
                              tuple(rvs), s.span, s.kind, None, 0, POWER2_CHUNK))
        return rvs

    def copy(self, s: St.ForStmt, idx: Any, cur: list, out: list) -> list:
        """One copy of ``s``'s body for iteration ``idx`` (fresh definitions); returns what it yields."""
        stmts, cur = clone_iteration(s, idx, cur, self.names)
        out.extend(stmts)
        return cur


def _line(s: Any) -> str:
    sp = getattr(s, "span", None)
    return f"line {sp.line}" if sp is not None and sp.is_known() else "<unknown line>"


def _leaked_stores(s: St.ForStmt) -> dict:
    """Store results defined in ``s``'s body -> the tensor outside the loop they name.

    A loop that stores into an outer tensor without carrying it (``d = pl.store(t, ..., y)`` with ``y``
    defined before the loop) may use ``d`` after the loop; the copies define fresh names, so later
    uses read the buffer itself, which holds the same data once the chunks ran.
    """
    inside = set(definitions(s.body))
    link = buffer_links(s.body)
    out = {}
    for v in inside:
        root = buffer_root(v, link)
        if root is not v and root not in inside and isinstance(root, E.Var):
            out[v] = root
    return out


@dataclass(frozen=True)
class ExpandPower2Pass(Pass):
    """Expand ``pl.parallel_for_power2`` loops (and, with ``expand_plain``, plain kernel loops)."""

    name: ClassVar[str] = "expand-power2"
    dump_name: ClassVar[str] = "ExpandPower2"
    unroll_limit: int = UNROLL_LIMIT
    expand_plain: tuple[int, int] | None = None
    log: list = field(default_factory=list, compare=False)

    def run(self, program: St.Program) -> St.Program:
        """Return ``program`` with its power-of-two loops expanded (chunk-wise fusion knows which
        kernel buffers nobody reads afterwards)."""
        self.log.clear()
        dead = dead_out_params(program)
        out = program.with_functions([self.run_function(f, {f.params[k] for k in dead.get(f.name, ())})
                                      for f in program.functions_list])
        return drop_unused_out_params(out, dead)  # an intermediate kept on chip needs no GM buffer

    def run_function(self, func: St.Function, dead: set | None = None) -> St.Function:
        """Return ``func`` with its power-of-two loops expanded (``dead``: its parameters whose buffer
        nobody reads after it)."""
        plain = self.expand_plain if is_kernel(func) else None
        if plain is None and not any(isinstance(s, St.ForStmt) and s.power2 is not None
                                     for s in _all_loops(func.body)):
            return func
        ex = _Expander(func, self.unroll_limit, plain, dead, FusionLog(self.log))
        return replace(func, body=ex.block(func.body))


def _all_loops(body: Any) -> list:
    return [s for s in walk_stmts(body) if isinstance(s, St.ForStmt)]
