"""A ``pl.parallel`` loop of orchestration code that dispatches one kernel per
iteration becomes one launch of that kernel as SPMD blocks (spec pypto-jit §5).

Writing ``pl.parallel`` asserts that the iterations are independent; upstream's runtime then runs
each iteration's task on whichever core group is free, at the same time as the others. The chip
does exactly that with the blocks of one launch (block ``i`` on the first free core, more blocks
than cores in waves), so the loop

    for r in pl.parallel(0, 256, 32):          # after outlining: body = one kernel call
        k(x, y, r)

becomes ``k(x, y)`` launched as 8 blocks, with ``r = 0 + get_block_idx() * 32`` computed at the top
of the kernel. The values are those of the loop run in order (each block does what its iteration
did); the time is that of the iterations overlapping on the chip, with their shared-memory traffic
competing, instead of the sum of eight launches. A conflict between iterations, which
``pl.parallel`` promised away, is then reported as a race between blocks.

Only loops this rewrite cannot change the meaning of are converted: static bounds, a body of
scalar arithmetic on the loop variable followed by exactly one call of an InCore kernel, every
tensor argument defined before the loop, a kernel that does not read its block id itself, and
at most one carried value (``y = k(x, y, r)``: the kernel's result). Other loops run as before,
one launch per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pypto.dtype import DataType
from pypto.enums import ForKind, FunctionType
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType
from pypto.ir.visitor import stmt_list, substitute, walk
from pypto.ops import block as B
from pypto.passes.base import NameAllocator
from pypto.passes.block_rewriter import BlockRewriter

_BLOCK_ID_OPS = ("block.get_block_idx", "block.get_block_num")


@dataclass
class _Match:
    """What a convertible loop dispatches: the call, the scalar lets before it, its result and yield."""

    call: E.Call
    lets: dict  # loop-body scalar Var -> its expression
    result: E.Var | None


def _pure_scalar(e: Any) -> bool:
    return isinstance(getattr(e, "type", None), ScalarType) and not any(isinstance(n, E.Call) for n in walk(e))


def _match(loop: St.ForStmt, kernels: dict) -> _Match | None:
    """The loop's single kernel call when the loop can be one SPMD launch, else None."""
    if loop.kind is not ForKind.Parallel or loop.chunk_size is not None or len(loop.iter_args) > 1:
        return None
    if None in (E.static_int(loop.start), E.static_int(loop.stop), E.static_int(loop.step)):
        return None
    stmts = list(stmt_list(loop.body))
    tail = stmts.pop() if stmts and isinstance(stmts[-1], St.YieldStmt) else None
    if not stmts:
        return None
    last = stmts.pop()
    call = last.value if isinstance(last, St.AssignStmt) else last.expr if isinstance(last, St.EvalStmt) else None
    if not (isinstance(call, E.Call) and isinstance(call.op, E.GlobalVar) and call.op.name in kernels
            and "blocks" not in call.kwargs):
        return None
    if any(isinstance(n, E.Call) and n.op.name in _BLOCK_ID_OPS for n in walk(kernels[call.op.name].body)):
        return None  # the kernel splits its work by block id itself: launching it as blocks changes that
    lets = {}
    for s in stmts:
        if not (isinstance(s, St.AssignStmt) and _pure_scalar(s.value)):
            return None
        lets[s.var] = s.value
    result = last.var if isinstance(last, St.AssignStmt) else None
    if loop.iter_args:
        ia = loop.iter_args[0]
        if tail is None or list(tail.value) != [result] or ia not in call.args:
            return None
    elif tail is not None and tail.value:
        return None
    return _Match(call, lets, result) if _arguments_fit(loop, call, lets) else None


def _arguments_fit(loop: St.ForStmt, call: E.Call, lets: dict) -> bool:
    """Tensors from before the loop (or the carried value); scalars from the loop variable and lets,
    which read the loop variable, earlier lets and constants only."""
    local = {loop.loop_var, *lets}
    for a in call.args:
        if _moved(a, local):
            if not _pure_scalar(a) or any(isinstance(v, E.Var) and v not in local for v in walk(a)):
                return False
        elif isinstance(a, E.Var) and a not in loop.iter_args and not _defined_outside(a, loop):
            return False
    return all(not (isinstance(v, E.Var) and v not in local) for value in lets.values() for v in walk(value))


def _moved(arg: Any, local: set) -> bool:
    """Whether a call argument depends on the iteration (it is then computed in the kernel)."""
    return any(isinstance(v, E.Var) and v in local for v in walk(arg))


def _defined_outside(v: E.Var, loop: St.ForStmt) -> bool:
    return not any(isinstance(s, (St.AssignStmt,)) and s.var is v for s in walk(loop.body))


class _Rewriter(BlockRewriter):
    def __init__(self, program: St.Program):
        self.kernels = {f.name: f for f in program.functions_list if f.type is FunctionType.InCore}
        self.calls = {}
        for f in program.functions_list:
            for n in walk(f.body):
                if isinstance(n, E.Call) and isinstance(n.op, E.GlobalVar):
                    self.calls[n.op.name] = self.calls.get(n.op.name, 0) + 1
        self.names = NameAllocator({f.name for f in program.functions_list})
        self.new_kernels: dict = {}  # name -> rewritten or new kernel

    def stmt(self, s: Any) -> list:
        if isinstance(s, St.ForStmt):
            m = _match(s, self.kernels)
            if m is not None:
                return self.convert(s, m)
        return [self.descend(s)]

    def convert(self, loop: St.ForStmt, m: _Match) -> list:
        start, stop, step = (E.static_int(x) for x in (loop.start, loop.stop, loop.step))
        blocks = len(range(start, stop, step))
        if blocks == 0:
            return []
        local = {loop.loop_var, *m.lets}
        moved = [i for i, a in enumerate(m.call.args) if _moved(a, local)]
        kernel = self.kernel_for(m.call.op.name, moved, loop, m.lets, [m.call.args[i] for i in moved])
        args = tuple(loop.iter_args[0].init_value if loop.iter_args and a is loop.iter_args[0] else a
                     for i, a in enumerate(m.call.args) if i not in moved)
        call = E.Call(E.GlobalVar(kernel.name), args, {**m.call.kwargs, "blocks": blocks}, m.call.type, m.call.span)
        if loop.return_vars:
            return [St.AssignStmt(loop.return_vars[0], call, loop.span)]
        return [St.EvalStmt(call, loop.span)]

    def kernel_for(self, name: str, moved: list, loop: St.ForStmt, lets: dict, values: list) -> St.Function:
        """``name`` without the parameters at ``moved``, each computed from the block id instead."""
        old = self.kernels[name]
        span = loop.span
        idx = E.Var(f"{loop.loop_var.name}_block", ScalarType(DataType.INDEX), span)
        prologue = [St.AssignStmt(idx, B.get_block_idx(span=span), span)]
        start, step = E.static_int(loop.start), E.static_int(loop.step)
        iteration: E.Expr = idx
        if step != 1:
            iteration = E.mul(iteration, E.ConstInt(step, DataType.INDEX, span))
        if start != 0:
            iteration = E.add(E.ConstInt(start, DataType.INDEX, span), iteration)
        defs = {loop.loop_var: iteration}
        for var, value in lets.items():
            defs[var] = substitute(value, dict(defs))
        for i, arg in zip(moved, values, strict=True):
            param = old.params[i]
            value = substitute(arg, dict(defs))
            if value.type != param.type:
                value = E.cast(value, param.type.dtype, span)
            prologue.append(St.AssignStmt(param, value, span))
        keep = [(p, d) for i, (p, d) in enumerate(zip(old.params, old.param_directions, strict=True))
                if i not in moved]
        body = St.SeqStmts((*prologue, *stmt_list(old.body)), old.body.span)
        new_name = name if self.calls.get(name, 0) == 1 else self.names.fresh(f"{name}_spmd")
        kernel = replace(old, name=new_name, params=tuple(keep), body=body)
        self.new_kernels[new_name] = kernel
        return kernel


def launch_parallel_loops(program: St.Program) -> St.Program:
    """``program`` with each convertible ``pl.parallel`` loop of its orchestration code made one SPMD
    launch (run by OutlineIncoreScopes once the kernels exist, so the pass list stays as specified)."""
    r = _Rewriter(program)
    funcs = []
    for f in program.functions_list:
        funcs.append(replace(f, body=r.block(f.body)) if f.type is FunctionType.Orchestration else f)
    out = [r.new_kernels.pop(f.name, f) for f in funcs]
    out.extend(r.new_kernels.values())
    return program.with_functions(out)
