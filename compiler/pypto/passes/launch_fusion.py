"""Launch fusion: two kernels called back to back from an Orchestration function, the second reading the
tensor the first produced and nobody else reading it, become one kernel whose tile loops are fused, so
the intermediate never goes through GM (seed 003 §3.6: ``relu(softmax(x))`` written as two composites).

Two ``with pl.incore():`` scopes, two InCore functions, and tensor ops of two composites outlined into
two kernels all arrive here in the same shape after OutlineIncoreScopes and ConvertTensorToBlockOps::

    t = pl.tensor.create(...)
    t_1 = self.softmax_rows(x, t)       # A: returns the buffer of its Out parameter t
    y_1 = self.relu_rows(t_1, y)        # B: the only reader of t_1

The merged kernel is A's body then B's body (B's parameter bound to A's result), named
``<A>_<B>``. It replaces the two calls only when loop fusion (:mod:`pypto.passes.loop_fusion`) then
removes every access to the intermediate; otherwise the program is left as written and the reason
goes into the pass log. The ``tensor.create`` of the intermediate goes away with it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pypto.enums import FunctionType, ParamDirection
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import stmt_list, walk, walk_stmts
from pypto.passes.base import NameAllocator, is_kernel
from pypto.passes.ir_utils import clone_definitions, type_vars
from pypto.passes.loop_fusion import FusionLog, FusionRefused, buffer_links, buffer_root, fuse_block
from pypto.passes.straight_fusion import fuse_straight


def _kernel_call(s: Any, program: St.Program) -> tuple[St.Function, E.Call] | None:
    if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and isinstance(s.value.op, E.GlobalVar):
        f = program.get_function(s.value.op.name)
        if f is not None and is_kernel(f):
            return f, s.value
    return None


def _occurrences(node: Any) -> dict:
    """Variable -> how often it appears in ``node`` (its definition included)."""
    count: dict = {}
    for n in walk(node):
        if isinstance(n, E.Var):
            count[n] = count.get(n, 0) + 1
    return count


def _creates(func: St.Function) -> set:
    return {s.var for s in walk_stmts(func.body)
            if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and s.value.op.name == "tensor.create"}


def _returned_roots(func: St.Function) -> set:
    link = buffer_links(func.body)
    rets = [s for s in walk_stmts(func.body) if isinstance(s, St.ReturnStmt)]
    return {buffer_root(v, link) for r in rets for v in r.value}


def dead_out_params(program: St.Program) -> dict[str, set[int]]:
    """Kernel name -> indices of ``Out`` parameters whose buffer nobody reads after the kernel.

    Such a parameter is returned by no path of the kernel and, at every call site (there is at least
    one), is bound to a tensor its caller made with ``tensor.create`` for this call and never uses
    again. Stores into it are then invisible to the program.
    """
    sites: dict[str, list] = {}
    for caller in program.functions_list:
        counts, created = _occurrences(caller.body), _creates(caller)
        for s in walk_stmts(caller.body):
            kc = _kernel_call(s, program)
            if kc is not None:
                sites.setdefault(kc[0].name, []).append((kc[1], counts, created))
    out: dict[str, set[int]] = {}
    for f in program.functions_list:
        if not is_kernel(f) or f.name not in sites:
            continue
        returned = _returned_roots(f)
        dead = set()
        for i, (p, d) in enumerate(zip(f.params, f.param_directions, strict=False)):
            if d is not ParamDirection.Out or p in returned:
                continue
            if all(i < len(call.args) and call.args[i] in created and counts.get(call.args[i]) == 2
                   for call, counts, created in sites[f.name]):
                dead.add(i)
        out[f.name] = dead
    return out


class LaunchFuser:
    """Merges producer/consumer kernel launches of the Orchestration functions of one program."""

    def __init__(self, program: St.Program, log: FusionLog):
        self.program = program
        self.log = log
        self.dead = dead_out_params(program)
        self._merged_away: set[str] = set()

    def run(self) -> St.Program:
        changed = True
        while changed:
            changed = False
            for f in self.program.functions_list:
                if f.type is not FunctionType.Orchestration:
                    continue
                new = self._function(f)
                if new is not None:
                    self.program = new
                    self.dead = dead_out_params(new)
                    changed = True
                    break
        return self._drop_uncalled()

    def _function(self, f: St.Function) -> St.Program | None:
        """The program with one pair of launches in ``f`` merged, or None when none can be."""
        counts = _occurrences(f.body)
        created = _creates(f)
        for block in [f.body, *(s.body for s in walk_stmts(f.body) if isinstance(s, (St.ForStmt, St.WhileStmt)))]:
            stmts = list(stmt_list(block))
            for i in range(len(stmts)):
                merged = self._try(f, stmts, i, counts, created)
                if merged is not None:
                    return merged
        return None

    def _try(self, f: St.Function, stmts: list, i: int, counts: dict, created: set) -> St.Program | None:
        first = _kernel_call(stmts[i], self.program)
        if first is None:
            return None
        ka, call_a = first
        j = next((j for j in range(i + 1, len(stmts)) if stmts[i].var in _occurrences(stmts[j])), None)
        second = _kernel_call(stmts[j], self.program) if j is not None else None
        if second is None:
            return None
        kb, call_b = second
        where = f"{f.name}: launches of {ka.name} and {kb.name}"
        why = self._refusal(stmts, i, j, ka, call_a, kb, call_b, counts, created)
        if why is None and counts.get(stmts[i].var) != 2:
            why = f"the intermediate '{stmts[i].var.name}' has a second consumer"
        if why is not None:
            self._note(f"{where}: not merged: {why}")
            return None
        pa = next(k for k, p in enumerate(ka.params) if p in _returned_roots(ka))
        pb = next(k for k, a in enumerate(call_b.args) if a is stmts[i].var)
        merged, split = self._merge(ka, pa, kb, pb)
        fused_log = FusionLog([])
        dead_params = {merged.params[k] for k in self._dead_in_merged(ka, kb, pb)} | {merged.params[pa]}
        body = St.SeqStmts(tuple(fuse_block(list(stmt_list(merged.body)), dead_params, buffer_links(merged.body),
                                            fused_log, merged.name)), merged.body.span if hasattr(merged.body, "span")
                           else merged.span)
        if merged.params[pa] in _occurrences(body):
            body = self._fuse_unrolled(merged, split, dead_params, fused_log) or body
        if merged.params[pa] in _occurrences(body):
            reasons = "; ".join(line.split(": ", 1)[1] for line in fused_log.lines) or "no loops to fuse"
            self._note(f"{where}: not merged: the intermediate would still go through GM ({reasons})")
            return None
        self.log.lines.extend(fused_log.lines)
        self.log.lines.append(f"{where}: merged into {merged.name}; the intermediate "
                              f"'{call_a.args[pa].name}' stays on chip")
        self._merged_away |= {ka.name, kb.name}
        return self._rewrite(f, stmts, (i, j), replace(merged, body=body), (pa, pb), (call_a, call_b))

    def _note(self, line: str) -> None:
        """Log a refusal once (the search restarts after every merge and meets it again)."""
        if line not in self.log.lines:
            self.log.lines.append(line)

    def _refusal(self, stmts: list, i: int, j: int, ka: St.Function, call_a: E.Call, kb: St.Function,
                 call_b: E.Call, counts: dict, created: set) -> str | None:
        if len(ka.return_types) != 1 or len(kb.return_types) != 1:
            return "a kernel returns several values"
        if ka.type is not kb.type:
            return "the kernels have different function types"
        if any(type_vars(p.type) for p in (*ka.params, *kb.params)):
            return "a kernel has dynamic shapes"
        for s in stmts[i + 1:j]:
            if any(isinstance(n, E.Call) and isinstance(n.op, E.GlobalVar) for n in walk(s)):
                return "another launch lies between them"
        returned = _returned_roots(ka)
        pa = next((k for k, p in enumerate(ka.params) if p in returned), None)
        if pa is None or ka.param_directions[pa] is not ParamDirection.Out:
            return f"{ka.name} does not return the buffer of an Out parameter"
        arg = call_a.args[pa]
        if arg not in created or counts.get(arg) != 2:
            return f"the intermediate '{getattr(arg, 'name', '?')}' is not a tensor made for this call alone"
        uses = [k for k, a in enumerate(call_b.args) if a is stmts[i].var]
        if len(uses) != 1:
            return "the consumer takes the intermediate twice"
        if kb.param_directions[uses[0]] is not ParamDirection.In:
            return f"{kb.name} writes into the intermediate"
        return None

    def _dead_in_merged(self, ka: St.Function, kb: St.Function, pb: int) -> list[int]:
        """Indices (in the merged signature) of parameters that are dead in ``ka``'s or ``kb``'s own right."""
        n_a = len(ka.params)
        out = list(self.dead.get(ka.name, ()))
        for k in self.dead.get(kb.name, ()):
            if k != pb:
                out.append(n_a + k - (1 if k > pb else 0))
        return out

    def _merge(self, ka: St.Function, pa: int, kb: St.Function, pb: int) -> tuple[St.Function, int]:
        """``ka`` then ``kb`` as one function (fresh names; ``kb``'s parameter ``pb`` reads what ``ka``
        returns, the buffer of its parameter ``pa``), and how many of its statements are ``ka``'s."""
        names = NameAllocator()
        pmap: dict = {}
        params, dirs = [], []
        for p, d in zip(ka.params, ka.param_directions, strict=False):
            pmap[p] = E.Var(names.fresh(p.name), p.type, p.span)
            params.append(pmap[p])
            dirs.append(d)
        a_stmts = list(stmt_list(clone_definitions(ka.body, pmap, names)))
        ret_a = a_stmts.pop()
        bmap: dict = {kb.params[pb]: ret_a.value[0]}
        for k, (p, d) in enumerate(zip(kb.params, kb.param_directions, strict=False)):
            if k != pb:
                bmap[p] = E.Var(names.fresh(p.name), p.type, p.span)
                params.append(bmap[p])
                dirs.append(d)
        b_stmts = list(stmt_list(clone_definitions(kb.body, bmap, names)))
        name = self._fresh_function_name(f"{ka.name}_{kb.name}")
        merged = St.Function(name, tuple(params), kb.return_types, St.SeqStmts(tuple(a_stmts + b_stmts), ka.span),
                             ka.span, ka.type, tuple(dirs))
        return merged, len(a_stmts)

    @staticmethod
    def _fuse_unrolled(merged: St.Function, split: int, dead: set, log: FusionLog) -> St.SeqStmts | None:
        """The merged body with the two kernels' unrolled tile blocks fused (straight-line code, as
        ConvertTensorToBlockOps lowers tensor ops), or None with the reason logged."""
        stmts = list(stmt_list(merged.body))
        try:
            fused = fuse_straight(stmts[:split], stmts[split:], dead, buffer_links(merged.body))
        except FusionRefused as why:
            log.lines.append(f"{merged.name}: not fused: the unrolled tile blocks: {why}")
            return None
        log.lines.append(f"{merged.name}: fused the unrolled tile blocks block by block (the intermediate stays "
                         "on chip)")
        return St.SeqStmts(tuple(fused), merged.span)

    def _fresh_function_name(self, base: str) -> str:
        taken = {f.name for f in self.program.functions_list}
        return NameAllocator(taken).fresh(base)

    def _rewrite(self, f: St.Function, stmts: list, at: tuple[int, int], merged: St.Function,
                 params: tuple[int, int], calls: tuple[E.Call, E.Call]) -> St.Program:
        """The program with ``stmts[at[0]]`` gone, ``stmts[at[1]]`` calling ``merged`` and the intermediate's
        ``tensor.create`` removed."""
        (i, j), (pa, pb), (call_a, call_b) = at, params, calls
        keep = [k for k in range(len(merged.params)) if k != pa]
        merged = replace(merged, params=tuple(merged.params[k] for k in keep),
                         param_directions=tuple(merged.param_directions[k] for k in keep))
        gv = E.GlobalVar(merged.name)
        args = [a for k, a in enumerate(call_a.args) if k != pa] + [a for k, a in enumerate(call_b.args) if k != pb]
        call = E.Call(gv, tuple(args), {}, call_b.type, call_b.span)
        intermediate = call_a.args[pa]
        new_stmts = list(stmts)
        new_stmts[j] = replace(stmts[j], value=call)
        drop = {i} | {k for k, s in enumerate(stmts) if isinstance(s, St.AssignStmt) and s.var is intermediate}
        new_stmts = [s for k, s in enumerate(new_stmts) if k not in drop]
        new_body = _replace_block(f.body, stmts, new_stmts)
        funcs = [replace(f, body=new_body) if g is f else g for g in self.program.functions_list] + [merged]
        gvs = dict(self.program.global_vars)
        gvs[merged.name] = gv
        return St.Program(tuple(funcs), self.program.name, self.program.span, gvs)

    def _drop_uncalled(self) -> St.Program:
        called = {n.op.name for f in self.program.functions_list for n in walk(f.body)
                  if isinstance(n, E.Call) and isinstance(n.op, E.GlobalVar)}
        funcs = [f for f in self.program.functions_list if f.name in called or f.name not in self._merged_away]
        return self.program.with_functions(funcs)


def _replace_block(body: Any, old: list, new: list) -> Any:
    """``body`` with the statement list ``old`` (the top level or one loop's body) replaced by ``new``."""
    if list(stmt_list(body)) == old:
        return St.SeqStmts(tuple(new), getattr(body, "span", E.UNKNOWN_SPAN))
    out = []
    for s in stmt_list(body):
        if isinstance(s, (St.ForStmt, St.WhileStmt)):
            s = replace(s, body=_replace_block(s.body, old, new))
        out.append(s)
    return St.SeqStmts(tuple(out), getattr(body, "span", E.UNKNOWN_SPAN))

