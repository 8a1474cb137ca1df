"""SplitCubeVector: a kernel that mixes a tensor-level matmul with vector ops becomes cube and vector kernels.

No AI core runs both: a matmul runs on the cube core (AIC) and element-wise ops, reductions and
composites run on a vector core (AIV). A torch user writes them together anyway (``pl.relu(pl.matmul(x,
w) + b)``, ``pl.softmax(pl.matmul(q, k))``, ``pl.matmul(pl.exp(x), w)``, in one InCore function or one
``pl.at`` region), so the compiler splits such a kernel where the pipe changes:

* The kernel's top-level ops are grouped into as few parts as their dependencies allow
  (:func:`plan_parts`): matmuls make cube parts, library ops (:data:`pypto.lib.DEFINITIONS`) vector
  parts, and a new part starts only where a value crosses from one pipe to the other (or a matmul
  reads another's product). Scalar statements stay with the orchestration (the host computes them
  and passes them in).
* Each part becomes its own InCore kernel ``<kernel>_matmul`` / ``<kernel>_vector``, outlined by the
  machinery of ``pl.at`` regions (:class:`pypto.passes.outline_incore_scopes.Outliner`): what a part
  reads from an earlier part is a parameter, what a later part (or the return) reads is a result.
  The intermediates therefore go through GM tensors that the orchestration allocates (the later
  passes give each result an ``Out`` parameter), and the parts run in program order as launches
  whose task-graph dependencies are those tensors: the program's result is unchanged.
* A result that the original kernel stored into one of its ``Out`` / ``InOut`` parameters (``y =
  pl.relu(...)`` with ``y: pl.Out``) is stored there by the part that computes it.
* The original kernel disappears: each call of it in Orchestration code is replaced by the calls of
  its parts (launch options such as SPMD ``blocks`` kept on every part); a kernel nobody calls (the
  program's only function) becomes the Orchestration function that calls its parts.
* A ``pl.transpose`` of the last two axes read only as a matmul operand is folded into the matmul
  (``a_trans`` / ``b_trans``): the cube moves the operand transposed from L1 to L0 at no cost, so
  the transposed copy neither runs on a vector core nor crosses GM.

Where the vector ops are an element-wise epilogue of one matmul (``relu(x @ w + b)``), the kernel is
not split: it stays one *group kernel* whose cube section pushes each block of the product to the two
AIVs through the C2V FIFO and whose vector section finishes it (:mod:`pypto.passes.fifo_epilogue`,
lowered here to tile code); the product never goes to GM. Where they compute the matmul's left operand
from the kernel's inputs (``exp(x) @ w``), the AIVs push it chunk by chunk to the cube through the V2C
FIFO instead (:mod:`pypto.passes.fifo_prologue`). Otherwise the GM form above is
used, and the log says why the FIFO form does not apply.

The split covers kernels of tensor-level ops (and scalars): one that also holds tile code, loops
or branches is a located error saying what keeps it whole. Each split is one line of the pass log
(the first lines of ``passes_dump/NN_after_SplitCubeVector.py``): the parts, their ops, and the
values that cross GM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from pypto.enums import FunctionType, ParamDirection, ScopeKind
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TupleType, shape_str
from pypto.ir.visitor import stmt_list, walk
from pypto.lib import DEFINITIONS
from pypto.ops import tensor as T
from pypto.passes import fifo_epilogue, fifo_prologue
from pypto.passes.base import NameAllocator, Pass
from pypto.passes.block_rewriter import BlockRewriter
from pypto.passes.convert_tensor_to_block_ops import (
    CONVERTIBLE,
    _without_tensor_aliases,
    allocate_outputs,
    rebound_output_params,
)
from pypto.passes.ir_utils import all_names, clone_definitions, used_vars
from pypto.passes.outline_incore_scopes import Outliner

CUBE_OP = "tensor.matmul"


def _op_name(s: Any) -> str | None:
    """The tensor-level op a top-level statement applies (None for anything else)."""
    if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and not isinstance(s.value.op, E.GlobalVar):
        return s.value.op.name
    return None


def _is_vector_op(name: str | None) -> bool:
    return name is not None and name != CUBE_OP and (name in DEFINITIONS or name in CONVERTIBLE)


def is_mixed_kernel(func: St.Function) -> bool:
    """An InCore kernel whose top-level statements hold a tensor-level matmul and a vector op."""
    if func.type is not FunctionType.InCore:
        return False
    names = {_op_name(s) for s in stmt_list(func.body)}
    return CUBE_OP in names and any(_is_vector_op(n) for n in names)


def _short(name: str) -> str:
    return name.split(".", 1)[1].removesuffix("_scalar")


# ---------------------------------------------------------------------------------------- transposes
def _swaps_last_two(s: St.AssignStmt) -> bool:
    """``s`` is ``tensor.transpose(x, a, b)`` exchanging the last two axes of ``x``."""
    if _op_name(s) != "tensor.transpose":
        return False
    x, a, b = s.value.args
    rank = len(getattr(x.type, "shape", ()))
    axes = {E.static_int(a), E.static_int(b)}
    return rank >= 2 and None not in axes and {d % rank for d in axes} == {rank - 2, rank - 1}


def fold_operand_transposes(stmts: list, returned: set) -> tuple[list, list]:
    """``stmts`` with each last-two-axes transpose read only as a matmul operand folded into that
    matmul's ``a_trans`` / ``b_trans``, and the names of the folded values."""
    matmul_reads: dict = {}
    other_reads: set = set(returned)
    for s in stmts:
        if _op_name(s) == CUBE_OP:
            for a in s.value.args:
                matmul_reads[a] = matmul_reads.get(a, 0) + 1
            other_reads |= {v for a in s.value.args for v in used_vars(a) if v is not a}
        else:
            other_reads |= set(used_vars(s.value if isinstance(s, St.AssignStmt) else s))
    folded = {s.var: s.value.args[0] for s in stmts
              if isinstance(s, St.AssignStmt) and _swaps_last_two(s) and s.var in matmul_reads
              and s.var not in other_reads}
    if not folded:
        return stmts, []
    out = []
    for s in stmts:
        if isinstance(s, St.AssignStmt) and s.var in folded:
            continue
        if _op_name(s) == CUBE_OP and any(a in folded for a in s.value.args):
            c = s.value
            kw = dict(c.kwargs)
            a, b = c.args
            a_trans = bool(kw.get("a_trans")) != (a in folded)
            b_trans = bool(kw.get("b_trans")) != (b in folded)
            call = T.matmul(folded.get(a, a), folded.get(b, b), out_dtype=kw.get("out_dtype"), a_trans=a_trans,
                            b_trans=b_trans, c_matrix_nz=bool(kw.get("c_matrix_nz")), span=c.span)
            if call.type != s.var.type:  # cannot happen for a true axis swap; never change a type silently
                raise CompileError(f"internal: folding a transpose into the matmul changed its type to "
                                   f"{shape_str(call.type.shape)}", s.span)
            s = replace(s, value=call)
        out.append(s)
    return out, [v.name for v in folded]


def _without_unread_creates(stmts: list) -> list:
    """``stmts`` without the ``pl.create_tensor`` buffers nobody reads. In the accumulator pattern
    (``acc = pl.create_tensor(...)`` and then ``acc = pl.matmul(...)``, pypto-jit §8: "a scratch value,
    accept it in any context") the name is rebound before any use, so the buffer is never touched and
    no part of the split needs it; left in, it would keep the kernel whole as a statement that is not
    a matmul or a vector op."""
    read: set = set()
    for s in stmts:
        read |= set(used_vars(s.value if isinstance(s, St.AssignStmt) else s))
    return [s for s in stmts if not (_op_name(s) == "tensor.create" and s.var not in read)]


# ---------------------------------------------------------------------------------------- planning
@dataclass
class _Part:
    kind: str  # "cube" or "vector"
    stmts: list = field(default_factory=list)


def _why_not_splittable(stmts: list) -> str | None:
    """Why the automatic split does not apply to a mixed kernel's statements (None when it does)."""
    for s in stmts:
        if isinstance(s, St.ReturnStmt) or _op_name(s) == CUBE_OP or _is_vector_op(_op_name(s)):
            continue
        if isinstance(s, St.AssignStmt) and isinstance(s.var.type, ScalarType):
            continue
        what = type(s).__name__.removesuffix("Stmt").lower()
        if isinstance(s, (St.AssignStmt, St.EvalStmt)):
            value = s.value if isinstance(s, St.AssignStmt) else s.expr
            what = f"the op {value.op.name}" if isinstance(value, E.Call) else "a statement that is not a tensor op"
        line = getattr(getattr(s, "span", None), "line", None)
        return f"it also holds {what}{f' (line {line})' if line else ''}"
    return None


def plan_parts(stmts: list) -> list[_Part]:
    """The cube and vector parts, as few as the dependencies allow.

    Each op gets a stage: the earliest one after the ops it reads, one more than such an op when the
    pipe changes between them (a vector op reading a product, a matmul reading a vector result) or
    both are matmuls (a product read by a matmul leaves the cube first). The ops of one stage and
    kind make one part; parts run by stage (cube before vector within one), producers before their
    consumers. A vector op independent of the matmul (``relu(b)`` in ``x @ w + relu(b)``) stays in
    the first stage, a launch of its own that the task graph runs beside the cube part: moving it
    into its consumer's part saves that launch and the GM round trip of its result but serializes it
    after the matmul, which measured slower (a2a3, 40x32 @ 32x24: 2650 cycles in three launches, 2934
    in two)."""
    ops = [s for s in stmts if _op_name(s) == CUBE_OP or _is_vector_op(_op_name(s))]
    kind = {s.var: "cube" if _op_name(s) == CUBE_OP else "vector" for s in ops}
    stage: dict = {}
    parts: dict = {}
    for s in ops:
        deps = [v for v in used_vars(s.value) if v in stage]
        stage[s.var] = max((stage[d] + (kind[d] != kind[s.var] or kind[d] == "cube") for d in deps), default=0)
        parts.setdefault((stage[s.var], kind[s.var] == "vector"), _Part(kind[s.var])).stmts.append(s)
    return [parts[key] for key in sorted(parts)]


# ---------------------------------------------------------------------------------------- the split
class _Splitter:
    """Splits one mixed kernel into an Orchestration body calling its parts (``self.kernels``)."""

    def __init__(self, func: St.Function, taken: NameAllocator, log: list):
        self.func = func
        self.taken = taken
        self.log = log
        self.added: list = []  # Out parameters a group kernel gained (its callers allocate them)

    def split(self) -> tuple[St.Function, list]:
        """(the kernel as an Orchestration function calling its parts, the parts); a kernel that cannot
        be split is a located error saying why (no core could run it whole)."""
        f = self.func
        stmts = _without_unread_creates(_without_tensor_aliases(list(stmt_list(f.body))))
        rets = [s for s in stmts if isinstance(s, St.ReturnStmt)]
        returned = [v for v in (rets[-1].value if rets else ()) if isinstance(v, E.Var)]
        stmts, folded = fold_operand_transposes(stmts, set(returned))
        why = _why_not_splittable(stmts)
        if why is None:
            why = self._scalars_after_parts(stmts)
        if why is not None:
            mm = next(s for s in stmts if _op_name(s) == CUBE_OP)
            vec = next(s for s in stmts if _is_vector_op(_op_name(s)))
            raise CompileError(
                f"the kernel '{f.name}' mixes a tensor-level pl.matmul (line {mm.span.line}) with "
                f"pl.{_short(_op_name(vec))}, and no core runs both; it is not split into cube and vector kernels "
                f"automatically because {why}: put the tile code in a kernel or pl.at region of its own", vec.span)
        whole = replace(f, body=St.SeqStmts(tuple(stmts), f.body.span))
        self.not_fifo = fifo_epilogue.why_not(whole)
        not_v2c = fifo_prologue.why_not(whole) if self.not_fifo is not None else None
        if self.not_fifo is None or not_v2c is None:
            mm = next(s for s in stmts if _op_name(s) == CUBE_OP)
            ops = ", ".join(dict.fromkeys(_short(_op_name(s)) for s in stmts if _is_vector_op(_op_name(s))))
            how = ("each block of the product pushed to them through the C2V FIFO" if self.not_fifo is None else
                   "each chunk of the matmul's left operand pushed by them to the cube through the V2C FIFO")
            line = (f"kept '{f.name}' whole as a group kernel: the matmul at line {mm.span.line} on the cube, {ops} on "
                    f"the two AIVs, {how} (nothing through GM)")
            if folded:
                line += f"; transposes folded into the matmul: {', '.join(folded)}"
            self.log.append(line)
            form = fifo_epilogue if self.not_fifo is None else fifo_prologue
            lowered, self.added = form.lower(whole, self.log, written=f)
            return lowered, []
        self.not_fifo += f"; nor with a V2C FIFO because {not_v2c}"
        parts = plan_parts(stmts)
        if len(parts) < 2:  # the folds left matmuls only
            self.log.append(f"'{f.name}': transposes {', '.join(folded)} folded into its matmul; nothing to split")
            return replace(f, body=St.SeqStmts(tuple(stmts), f.body.span)), []
        final = rebound_output_params(f, returned)
        scoped = self._scoped(stmts, parts)
        outliner = Outliner(replace(f, body=scoped), self.taken)
        body = outliner.block(scoped)
        kernels, body = self._store_into_out_params(outliner.kernels, body, final)
        self._log(parts, kernels, folded, final)
        orch = replace(f, body=body, type=FunctionType.Orchestration)
        return orch, kernels

    def _scalars_after_parts(self, stmts: list) -> str | None:
        """Scalars run on the host before the parts: one computed from a part's tensor cannot."""
        computed: set = set()
        for s in stmts:
            name = _op_name(s)
            if name == CUBE_OP or _is_vector_op(name):
                computed.add(s.var)
            elif isinstance(s, St.AssignStmt) and any(v in computed for v in used_vars(s.value)):
                return f"the scalar '{s.var.name}' is computed from a tensor the kernel computes (line {s.span.line})"
        return None

    def _scoped(self, stmts: list, parts: list[_Part]) -> St.SeqStmts:
        """The kernel's body with its scalars first, then each part as an InCore scope, then the return."""
        span = getattr(self.func.body, "span", E.UNKNOWN_SPAN)
        in_parts = {id(s) for p in parts for s in p.stmts}
        out = [s for s in stmts if id(s) not in in_parts and not isinstance(s, St.ReturnStmt)]
        for p in parts:
            hint = f"{self.func.name}_{'matmul' if p.kind == 'cube' else 'vector'}"
            out.append(St.ScopeStmt(ScopeKind.InCore, St.SeqStmts(tuple(p.stmts), p.stmts[0].span),
                                    p.stmts[0].span, name_hint=hint))
        out += [s for s in stmts if isinstance(s, St.ReturnStmt)]
        return St.SeqStmts(tuple(out), span)

    def _store_into_out_params(self, kernels: list, body: St.SeqStmts, final: dict) -> tuple[list, St.SeqStmts]:
        """Each part returning a value the kernel rebound to an ``Out`` / ``InOut`` parameter ``p``
        gets ``p`` as a parameter too (``Out``, or ``InOut`` when the part also reads it), so that the
        library passes store the value into the caller's tensor rather than into a fresh one."""
        extra: dict = {}
        new_kernels = []
        for k in kernels:
            stmts = list(stmt_list(k.body))
            ret = stmts.pop()
            params, dirs = list(k.params), list(k.param_directions)
            values = list(ret.value)
            for j, r in enumerate(ret.value):
                p = final.get(r)
                if p is None:
                    continue
                if not re.fullmatch(re.escape(p.name) + r"(_\d+)?", r.name):
                    # matched through an alias (``y = t``): bind the part's result to p's name again, so
                    # that the library passes match it to the parameter too
                    alias = E.Var(NameAllocator(all_names(k)).fresh(f"{p.name}_1"), r.type, r.span)
                    stmts.append(St.AssignStmt(alias, r, r.span))
                    values[j] = alias
                i = next((i for i, q in enumerate(params) if q.name == p.name), None)
                if i is None:
                    params.append(E.Var(p.name, p.type, p.span))
                    dirs.append(ParamDirection.Out)
                    extra.setdefault(k.name, []).append(p)
                else:
                    dirs[i] = ParamDirection.InOut
            stmts.append(replace(ret, value=tuple(values)))
            new_kernels.append(replace(k, params=tuple(params), param_directions=tuple(dirs),
                                       body=St.SeqStmts(tuple(stmts), k.body.span)))
        if not extra:
            return new_kernels, body

        def with_args(s: Any) -> Any:
            value = s.value if isinstance(s, St.AssignStmt) else s.expr if isinstance(s, St.EvalStmt) else None
            if not (isinstance(value, E.Call) and isinstance(value.op, E.GlobalVar) and value.op.name in extra):
                return s
            call = replace(value, args=tuple(value.args) + tuple(extra[value.op.name]))
            return replace(s, value=call) if isinstance(s, St.AssignStmt) else replace(s, expr=call)

        return new_kernels, St.SeqStmts(tuple(with_args(s) for s in stmt_list(body)), body.span)

    def _log(self, parts: list[_Part], kernels: list, folded: list, final: dict) -> None:
        f = self.func
        mm = next(s for p in parts for s in p.stmts if _op_name(s) == CUBE_OP)
        desc = []
        for p, k in zip(parts, kernels, strict=True):
            ops = ", ".join(dict.fromkeys(_short(_op_name(s)) for s in p.stmts))
            desc.append(f"{k.name} ({'cube' if p.kind == 'cube' else 'vector'}: {ops})")
        crossing = []
        for i, p in enumerate(parts):
            later = [s for q in parts[i + 1:] for s in q.stmts]
            for s in p.stmts:
                if any(s.var in used_vars(t.value) for t in later):
                    crossing.append(f"{s.var.name} {shape_str(s.var.type.shape)} {s.var.type.dtype.name}")
        line = (f"split '{f.name}' (a tensor-level matmul at line {mm.span.line} beside vector ops; no core runs "
                f"both) into {' -> '.join(desc)}")
        if crossing:
            line += f"; through GM: {', '.join(crossing)}"
        line += f"; not one group kernel with a C2V FIFO because {self.not_fifo}"
        if folded:
            line += f"; transposes folded into the matmul: {', '.join(folded)}"
        self.log.append(line)


# ---------------------------------------------------------------------------------------- call sites
class _Inliner(BlockRewriter):
    """Replaces each call of a split kernel in one Orchestration function by the calls of its parts."""

    def __init__(self, func: St.Function, split: dict):
        self.split = split
        self.names = NameAllocator(all_names(func))
        self.pending = {}
        self.tuples: dict = {}  # a split kernel's tuple result -> its values

    def stmt(self, s: Any) -> list:
        if isinstance(s, St.AssignStmt) and isinstance(s.value, E.TupleGetItemExpr) and s.value.tuple in self.tuples:
            self.pending[s.var] = self.tuples[s.value.tuple][s.value.index]
            return []
        value = s.value if isinstance(s, St.AssignStmt) else s.expr if isinstance(s, St.EvalStmt) else None
        if not (isinstance(value, E.Call) and isinstance(value.op, E.GlobalVar) and value.op.name in self.split):
            return [self.descend(s)]
        orch = self.split[value.op.name]
        mapping = dict(zip(orch.params, value.args, strict=True))
        body = list(stmt_list(clone_definitions(orch.body, mapping, self.names)))
        ret = body.pop() if body and isinstance(body[-1], St.ReturnStmt) else St.ReturnStmt(())
        launch = {k: v for k, v in value.kwargs.items() if k == "blocks"}
        if launch:
            body = [_with_launch(x, launch) for x in body]
        if isinstance(s, St.AssignStmt):
            if isinstance(s.var.type, TupleType):
                self.tuples[s.var] = tuple(ret.value)
            else:
                self.pending[s.var] = ret.value[0]
        return body


def _with_launch(s: Any, launch: dict) -> Any:
    value = s.value if isinstance(s, St.AssignStmt) else s.expr if isinstance(s, St.EvalStmt) else None
    if not (isinstance(value, E.Call) and isinstance(value.op, E.GlobalVar)):
        return s
    call = replace(value, kwargs={**value.kwargs, **launch})
    return replace(s, value=call) if isinstance(s, St.AssignStmt) else replace(s, expr=call)


def _callers(program: St.Program, name: str) -> list[St.Function]:
    return [f for f in program.functions_list
            if any(isinstance(n, E.Call) and isinstance(n.op, E.GlobalVar) and n.op.name == name for n in walk(f.body))]


@dataclass(frozen=True)
class SplitCubeVectorPass(Pass):
    """Split every kernel mixing a tensor-level matmul with vector ops into cube and vector kernels."""

    name: ClassVar[str] = "split-cube-vector"
    dump_name: ClassVar[str] = "SplitCubeVector"
    # one line per mixed kernel: how it was split (parts, what crosses GM), or why it was left whole
    log: list = field(default_factory=list, compare=False)

    def run(self, program: St.Program) -> St.Program:
        self.log.clear()
        taken = NameAllocator({f.name for f in program.functions_list})
        split: dict = {}
        added: dict = {}
        funcs: list = []
        for f in program.functions_list:
            if not is_mixed_kernel(f):
                funcs.append(f)
                continue
            kernel_callers = [g.name for g in _callers(program, f.name) if g.type is not FunctionType.Orchestration]
            if kernel_callers:
                raise CompileError(
                    f"the kernel '{f.name}' mixes a tensor-level pl.matmul with vector ops, and no core runs both; "
                    f"it is not split into cube and vector kernels automatically because the kernel "
                    f"'{kernel_callers[0]}' calls it (only calls from orchestration code can become several "
                    "launches)", f.span)
            splitter = _Splitter(f, taken, self.log)
            orch, kernels = splitter.split()
            if not kernels:  # a group kernel, or only transposes folded: still one kernel
                funcs.append(orch)
                if splitter.added:
                    added[f.name] = splitter.added
                continue
            if _callers(program, f.name):
                split[f.name] = orch
            else:
                funcs.append(orch)  # nobody calls it: it is the entry, now orchestrating its parts
            funcs.extend(kernels)
        if split:
            funcs = [replace(g, body=_Inliner(g, split).block(g.body)) if g.type is FunctionType.Orchestration else g
                     for g in funcs]
        if added:
            funcs = [allocate_outputs(g, added) if g.type is FunctionType.Orchestration else g for g in funcs]
        return program.with_functions(funcs)
