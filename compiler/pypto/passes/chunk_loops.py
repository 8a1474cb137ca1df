"""SplitChunkedLoops and InterchangeChunkLoops (spec §3.4, §6.3).

Inside ``with pl.auto_incore():`` a loop written with ``chunk=C`` is split (policy ``leading_full``:
full chunks first, the remainder last) into

* an outer sequential loop ``<i>_out`` over ``trip // C`` (``LoopOrigin.ChunkOuter``),
* an inner loop ``<i>_in`` over ``C`` keeping the original kind (``ChunkInner``),
* when ``trip % C > 0`` a remainder loop ``<i>_rem`` (``ChunkRemainder``),

the body reading ``i = start + (i_out * C + i_in) * step``. Iter args are threaded through the new
loops and the original return vars become those of the last loop. InterchangeChunkLoops then wraps
each parallel inner chunk (and each parallel remainder loop) in an InCore scope, so that
OutlineIncoreScopes turns the chunk into a kernel called once per outer iteration, and removes the
AutoInCore scope. Chunked loops outside an AutoInCore scope keep their annotation and run unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import ForKind, ScopeKind
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import stmt_list, substitute
from pypto.passes.base import NameAllocator, Pass
from pypto.passes.ir_utils import all_names, clone_definitions, fold

CHUNK_OUTER, CHUNK_INNER, CHUNK_REMAINDER = 1, 2, 3


def _const(v: int, like: E.Var, span: Any) -> E.ConstInt:
    dtype = getattr(like.type, "dtype", None)
    return E.ConstInt(v, dtype, span) if dtype is not None else E.ConstInt(v, span=span)


def _index(start: int, k: Any, step: int) -> Any:
    """``start + k * step`` without the identity terms."""
    e = k * step if step != 1 else k
    return e + start if start else e


class _Splitter:
    """Rewrites the chunked loops of one function that sit inside an AutoInCore scope."""

    def __init__(self, func: St.Function):
        self.names = NameAllocator(all_names(func))

    def block(self, body: Any, auto: bool) -> St.SeqStmts:
        out: list = []
        for s in stmt_list(body):
            out.extend(self.stmt(s, auto))
        return St.SeqStmts(tuple(out), getattr(body, "span", E.UNKNOWN_SPAN))

    def stmt(self, s: Any, auto: bool) -> list:
        if isinstance(s, St.ForStmt):
            s = replace(s, body=self.block(s.body, auto))
            if auto and s.chunk_size is not None and s.loop_origin == 0:
                return self.split(s)
            return [s]
        if isinstance(s, St.WhileStmt):
            return [replace(s, body=self.block(s.body, auto))]
        if isinstance(s, St.IfStmt):
            eb = self.block(s.else_body, auto) if s.else_body is not None else None
            return [replace(s, then_body=self.block(s.then_body, auto), else_body=eb)]
        if isinstance(s, St.ScopeStmt):
            inner = auto or s.scope_kind is ScopeKind.AutoInCore
            return [replace(s, body=self.block(s.body, inner))]
        return [s]

    def _loop(self, s: St.ForStmt, suffix: str, count: int, origin: int, inits: list, index: Any,
              fresh_defs: bool) -> tuple[St.ForStmt, list]:
        """One loop over ``range(count)`` running ``s``'s body with the loop variable = ``index(var)``."""
        span = s.span
        var = E.Var(self.names.fresh(f"{s.loop_var.name}{suffix}"), s.loop_var.type, s.loop_var.span)
        iters = [E.IterArg(self.names.fresh(f"{ia.name}{suffix}"), ia.type, ia.span, init)
                 for ia, init in zip(s.iter_args, inits, strict=False)]
        mapping: dict = {s.loop_var: fold(index(var))}
        mapping.update(zip(s.iter_args, iters, strict=False))
        if fresh_defs:
            body = clone_definitions(s.body, mapping, self.names, "")
        else:
            body = fold(substitute(s.body, dict(mapping)))
        rvs = [E.Var(self.names.fresh(f"{rv.name}{suffix}_rv"), rv.type, rv.span) for rv in s.return_vars]
        kind = s.kind if origin != CHUNK_OUTER else ForKind.Sequential
        loop = St.ForStmt(var, _const(0, s.loop_var, span), _const(count, s.loop_var, span),
                          _const(1, s.loop_var, span), tuple(iters), body, tuple(rvs), span, kind, None,
                          s.chunk_policy, origin)
        return loop, rvs

    def split(self, s: St.ForStmt) -> list:
        bounds = [E.static_int(fold(x)) for x in (s.start, s.stop, s.step)]
        chunk = E.static_int(s.chunk_size)
        if any(b is None for b in bounds):
            raise CompileError("a chunked loop inside `with pl.auto_incore():` needs constant bounds", s.span)
        if chunk is None or chunk <= 0:
            raise CompileError("chunk= must be a positive integer literal", s.span)
        start, stop, step = bounds
        if step == 0:
            raise CompileError("a chunked loop needs a non-zero step", s.span)
        trip = max(0, -(-(stop - start) // step)) if step > 0 else max(0, -(-(start - stop) // -step))
        full, rem = divmod(trip, chunk)
        out: list = []
        inits = [ia.init_value for ia in s.iter_args]
        last_rvs: list = list(inits)
        used_body = False
        if full > 0:
            span = s.span
            ovar = E.Var(self.names.fresh(f"{s.loop_var.name}_out"), s.loop_var.type, s.loop_var.span)
            oiters = [E.IterArg(self.names.fresh(f"{ia.name}_outer"), ia.type, ia.span, init)
                      for ia, init in zip(s.iter_args, inits, strict=False)]
            inner, irvs = self._loop(
                s, "_in", chunk, CHUNK_INNER, list(oiters),
                lambda v: _index(start, ovar * chunk + v, step), fresh_defs=False)
            used_body = True
            orvs = [E.Var(self.names.fresh(f"{rv.name}_outer_rv"), rv.type, rv.span) for rv in s.return_vars]
            obody: list = [inner]
            if s.iter_args:
                obody.append(St.YieldStmt(tuple(irvs), span))
            outer = St.ForStmt(ovar, _const(0, s.loop_var, span), _const(full, s.loop_var, span),
                               _const(1, s.loop_var, span), tuple(oiters), St.SeqStmts(tuple(obody), span),
                               tuple(orvs), span, ForKind.Sequential, None, s.chunk_policy, CHUNK_OUTER)
            out.append(outer)
            last_rvs = orvs
        if rem > 0:
            base = full * chunk
            loop, rrvs = self._loop(s, "_rem", rem, CHUNK_REMAINDER, list(last_rvs),
                                    lambda v: _index(start, v + base if base else v, step),
                                    fresh_defs=used_body)
            out.append(loop)
            last_rvs = rrvs
        # the original return vars now name the last loop's results
        out += [St.AssignStmt(rv, val, s.span) for rv, val in zip(s.return_vars, last_rvs, strict=False)]
        return out


@dataclass(frozen=True)
class SplitChunkedLoopsPass(Pass):
    """Split chunked loops inside AutoInCore scopes into outer/inner/remainder loops."""

    name: ClassVar[str] = "split-chunked-loops"
    dump_name: ClassVar[str] = "SplitChunkedLoops"

    def run_function(self, func: St.Function) -> St.Function:
        """Return ``func`` with its auto_incore chunked loops split."""
        return replace(func, body=_Splitter(func).block(func.body, False))


def _wrap(loop: St.ForStmt) -> St.ScopeStmt:
    return St.ScopeStmt(ScopeKind.InCore, St.SeqStmts((loop,), loop.span), loop.span)


class _Interchanger:
    def block(self, body: Any, auto: bool, in_incore: bool) -> St.SeqStmts:
        out: list = []
        for s in stmt_list(body):
            out.extend(self.stmt(s, auto, in_incore))
        return St.SeqStmts(tuple(out), getattr(body, "span", E.UNKNOWN_SPAN))

    def stmt(self, s: Any, auto: bool, in_incore: bool) -> list:
        if isinstance(s, St.ScopeStmt):
            if s.scope_kind is ScopeKind.AutoInCore:
                return list(stmt_list(self.block(s.body, True, in_incore)))
            return [replace(s, body=self.block(s.body, auto, in_incore or s.scope_kind is ScopeKind.InCore))]
        if isinstance(s, St.ForStmt):
            if (auto and not in_incore and s.kind is ForKind.Parallel
                    and s.loop_origin in (CHUNK_INNER, CHUNK_REMAINDER)):
                return [_wrap(s)]
            return [replace(s, body=self.block(s.body, auto, in_incore))]
        if isinstance(s, St.WhileStmt):
            return [replace(s, body=self.block(s.body, auto, in_incore))]
        if isinstance(s, St.IfStmt):
            eb = self.block(s.else_body, auto, in_incore) if s.else_body is not None else None
            return [replace(s, then_body=self.block(s.then_body, auto, in_incore), else_body=eb)]
        return [s]


@dataclass(frozen=True)
class InterchangeChunkLoopsPass(Pass):
    """Wrap parallel chunk loops of AutoInCore scopes in InCore scopes and drop the AutoInCore scope."""

    name: ClassVar[str] = "interchange-chunk-loops"
    dump_name: ClassVar[str] = "InterchangeChunkLoops"

    def run_function(self, func: St.Function) -> St.Function:
        """Return ``func`` with InCore scopes around its parallel chunks and no AutoInCore scope."""
        return replace(func, body=_Interchanger().block(func.body, False, False))
