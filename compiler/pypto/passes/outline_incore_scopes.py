"""OutlineIncoreScopes: each ``with pl.incore():`` region of an Opaque/Orchestration function becomes an
InCore function ``<parent>_incore_<k>`` (or the scope's ``name_hint``, made unique) plus a call to it
where the region was (spec §3.4, seed 003 §4). A scope launched as SPMD blocks (``pl.spmd(n)``) keeps
its block count on the call as ``kwargs["blocks"]``, which the runtime passes to the chip. Last, a
``pl.parallel`` loop that dispatches one kernel per iteration becomes one SPMD launch
(:mod:`pypto.passes.parallel_to_spmd`).

The scope is a boundary the user moves freely, so the kernel's signature is derived from how
variables cross it (seed 003 §4.2), on SSA form where each variable object has one definition:

* a variable defined outside and read inside is a parameter: ``In`` when the kernel only reads it,
  ``InOut`` when it also writes the tensor's buffer (a ``store`` into it, directly or through a
  loop-carried / stored alias), ``Out`` when it is only written (the caller's buffer, typically a
  ``pl.create_tensor`` made before the scope, filled by the kernel);
* a variable defined inside and used after the scope is a result of the kernel: the call's value
  (a tuple for several) is bound to it. A stored tensor result names the parameter's buffer; a
  tensor-level op result becomes an ``Out`` parameter later (ConvertTensorToBlockOps). A tile or
  scalar result is a task output held in DDR (pypto-jit §4.1 (b)): the parent allocates a tensor
  (the tile's shape and dtype; one element for a scalar, INDEX kept as INT64) before the call, the
  kernel stores the value into it (an ``Out`` parameter), and a later kernel that reads the value
  loads it back from that tensor; the host reads a carried scalar it uses (a loop bound) from it.
  Booleans cannot leave a kernel and are rejected with the variable named.

A parent from which a scope was outlined becomes Orchestration: what is left of it runs on the host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.dtype import DataType
from pypto.enums import FunctionType, ParamDirection, ScopeKind
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TensorType, TileType, TupleType, UnknownType, type_str
from pypto.ir.visitor import stmt_list, substitute, walk_stmts
from pypto.ops import block as B
from pypto.ops import tensor as T
from pypto.ops import tile_data as D
from pypto.passes.base import NameAllocator, Pass
from pypto.passes.block_rewriter import BlockRewriter
from pypto.passes.ir_utils import all_names, definitions, type_vars, used_vars
from pypto.passes.parallel_to_spmd import launch_parallel_loops


def _is_incore_scope(s: Any) -> bool:
    return isinstance(s, St.ScopeStmt) and s.scope_kind is ScopeKind.InCore


def _last_yield(body: Any) -> St.YieldStmt | None:
    stmts = stmt_list(body)
    return stmts[-1] if stmts and isinstance(stmts[-1], St.YieldStmt) else None


# Ops that write a tensor, and which argument is the tensor (its result names the same buffer).
TENSOR_WRITES = {"block.store": 2, "block.write_gm": 1}


def _buffer_roots(body: Any) -> dict:
    """Tensor variable defined in ``body`` -> the variable whose buffer it names.

    A store's result is its output tensor; a loop's iter arg and return var are its init value; an
    if's return var is what its then-branch yields. Following these links from a store target finds
    the variable (possibly outside the scope) whose memory is written.
    """
    link: dict = {}
    for s in walk_stmts(body):
        if isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call) and s.value.op.name in TENSOR_WRITES:
            link[s.var] = s.value.args[TENSOR_WRITES[s.value.op.name]]
        elif isinstance(s, (St.ForStmt, St.WhileStmt)):
            for ia, rv in zip(s.iter_args, s.return_vars, strict=False):
                if isinstance(ia.type, TensorType):
                    link[ia] = ia.init_value
                    link[rv] = ia
        elif isinstance(s, St.IfStmt):
            y = _last_yield(s.then_body)
            for i, rv in enumerate(s.return_vars):
                if y is not None and i < len(y.value) and isinstance(rv.type, TensorType):
                    link[rv] = y.value[i]
    return link


def _root(v: Any, link: dict) -> Any:
    seen = 0
    while isinstance(v, E.Var) and v in link and seen < 1000:
        v, seen = link[v], seen + 1
    return v


def _written_and_read(body: Any) -> tuple[set, set]:
    """The tensor buffers a scope body stores into, and those it reads (through any alias)."""
    link = _buffer_roots(body)
    written, read = set(), set()
    for s in walk_stmts(body):
        call = _tensor_write(s)
        if call is not None:
            written.add(_root(call.args[TENSOR_WRITES[call.op.name]], link))
    # every reference that is not a store target or an alias link reads the buffer it names
    for s in walk_stmts(body):
        for e in _read_exprs(s):
            for v in used_vars(e):
                read.add(_root(v, link))
    return written, read


def _tensor_write(s: Any) -> E.Call | None:
    """The tensor-writing call statement ``s`` makes (bound to a name or not), else None."""
    v = s.value if isinstance(s, St.AssignStmt) else s.expr if isinstance(s, St.EvalStmt) else None
    return v if isinstance(v, E.Call) and v.op.name in TENSOR_WRITES else None


def _read_exprs(s: Any) -> list:
    """The expressions of statement ``s`` whose variables it reads."""
    call = _tensor_write(s)
    if call is not None:
        target = TENSOR_WRITES[call.op.name]
        return [a for i, a in enumerate(call.args) if i != target]
    if isinstance(s, St.AssignStmt):
        return [] if isinstance(s.value, E.Var) else [s.value]
    if isinstance(s, St.EvalStmt):
        return [s.expr]
    if isinstance(s, (St.ForStmt, St.WhileStmt, St.IfStmt)):
        return [getattr(s, a) for a in ("start", "stop", "step", "condition") if hasattr(s, a)]
    if isinstance(s, St.ReturnStmt):
        return list(s.value)
    return []


def _carriable(t: Any) -> bool:
    """Whether a value of type ``t`` can be a kernel's result (tensors; tiles and numeric scalars
    through DDR)."""
    if isinstance(t, (TensorType, TileType)):
        return True
    return isinstance(t, ScalarType) and t.dtype is not DataType.BOOL


def _stored_dtype(dtype: DataType) -> DataType:
    """The element type a carried scalar is kept in: INDEX has no tensor dtype, so INT64."""
    return DataType.INT64 if dtype is DataType.INDEX else dtype


def _as(value: E.Expr, dtype: DataType, span: Any) -> E.Expr:
    """``value`` (read from its DDR tensor) as the carried scalar's own dtype."""
    return value if value.type.dtype is dtype else E.cast(value, dtype, span)


def _save(value: E.Expr, ddr: E.Var, span: Any) -> E.Call:
    """The kernel's store of a carried tile or scalar into its DDR tensor."""
    if isinstance(value.type, TileType):
        return B.store(value, [0] * len(value.type.shape), ddr, span=span)
    return D.write_gm(_as(value, ddr.type.dtype, span), ddr, 0, span=span)


class Outliner(BlockRewriter):
    """Outlines the InCore scopes of one function into kernels (``self.kernels``)."""

    def __init__(self, func: St.Function, taken: NameAllocator):
        self.func = func
        self.taken = taken
        self.local = NameAllocator(all_names(func))  # names of the parent's new locals
        self.kernels: list[St.Function] = []
        self.count = 0
        self.spilled: dict = {}  # tile computed by an earlier kernel -> the DDR tensor that holds it

    def stmt(self, s: Any) -> list:
        if _is_incore_scope(s):
            return self.outline(s)
        if isinstance(s, (St.ForStmt, St.WhileStmt, St.IfStmt)):
            reads, header = [], {}
            for a in ("start", "stop", "step", "condition"):
                if isinstance(getattr(s, a, None), E.Expr):
                    more, header[a] = self.host_reads(getattr(s, a))
                    reads += more
            return [*reads, self.descend(replace(s, **header))]
        if isinstance(s, St.ScopeStmt):
            return [self.descend(s)]
        reads, s = self.host_reads(s)
        return [*reads, s]

    def outline(self, scope: St.ScopeStmt) -> list:
        name = self.taken.fresh(scope.name_hint or f"{self.func.name}_incore_{self.count}")
        self.count += 1
        inside = set(definitions(scope.body))
        dims = {d for p in self.func.params for d in type_vars(p.type)}
        free = [v for v in used_vars(scope.body) if v not in inside and v not in dims]
        for v in inside:
            free += [d for d in type_vars(v.type) if d not in inside and d not in dims and d not in free]

        written, read = _written_and_read(scope.body)

        after = used_vars(self.func.body, skip=scope)
        results = [v for v in definitions(scope.body) if v in after]
        for r in results:
            if not _carriable(r.type):
                kind = type_str(r.type)
                raise CompileError(
                    f"'{r.name}' ({kind}) is computed inside `with pl.incore():` and used after it; only tensors, "
                    "tiles and numeric scalars can leave a kernel (store the value into a tensor, or compute it "
                    "outside the scope)",
                    scope.span,
                )
        spills = [r for r in results if not isinstance(r.type, TensorType)]
        results = [r for r in results if r not in spills]
        allocs = [self.spill_tensor(r, scope.span) for r in spills]

        params, mapping, prologue = [], {}, []
        for v in free:
            if v in self.spilled:  # a value an earlier kernel left in DDR: load it back
                p, mapping[v], reload = self.reload(v, scope.span)
                prologue.append(reload)
                params.append((p, ParamDirection.In))
                continue
            direction = ParamDirection.In
            if isinstance(v.type, TensorType) and v in written:
                direction = ParamDirection.InOut if v in read else ParamDirection.Out
            p = E.Var(v.name, v.type, v.span)
            mapping[v] = p
            params.append((p, direction))
        epilogue = []
        for r, (_, ddr) in zip(spills, allocs, strict=True):
            p = E.Var(ddr.name, ddr.type, scope.span)
            params.append((p, ParamDirection.Out))
            epilogue.append(St.EvalStmt(_save(substitute(r, dict(mapping)), p, scope.span), scope.span))
        body = substitute(scope.body, dict(mapping))
        stmts = prologue + list(stmt_list(body)) + epilogue
        stmts.append(St.ReturnStmt(tuple(substitute(r, dict(mapping)) for r in results), scope.span))
        kernel = St.Function(name, tuple(params), tuple(r.type for r in results), St.SeqStmts(tuple(stmts), scope.span),
                             scope.span, FunctionType.InCore, split_mode=scope.split_mode, slot_num=scope.slot_num)
        self.kernels.append(kernel)
        args = [self.spilled.get(v, v) for v in free] + [ddr for _, ddr in allocs]
        self.spilled.update({r: ddr for r, (_, ddr) in zip(spills, allocs, strict=True)})
        return [alloc for alloc, _ in allocs] + self.call(name, args, results, scope)

    def reload(self, v: E.Var, span: Any) -> tuple:
        """(the kernel parameter for the DDR tensor holding ``v``, the kernel's ``v``, its load)."""
        ddr = self.spilled[v]
        p = E.Var(ddr.name, ddr.type, v.span)
        if isinstance(v.type, TileType):
            load = B.load(p, [0] * len(v.type.shape), v.type.shape, v.type.valid_shape, span=span)
        else:
            load = _as(D.read_gm(p, 0, span=span), v.type.dtype, span)
        local = E.Var(v.name, load.type, v.span)
        return p, local, St.AssignStmt(local, load, span)

    def host_reads(self, s: Any) -> tuple[list, Any]:
        """Host reads of the carried scalars statement ``s`` uses, and ``s`` reading them (a carried
        tile used by the host is its DDR tensor)."""
        reads, mapping = [], {}
        for v in used_vars(s):
            ddr = self.spilled.get(v)
            if ddr is None:
                continue
            if isinstance(v.type, TileType):
                mapping[v] = ddr
                continue
            value = _as(T.read(ddr, [0], span=v.span), v.type.dtype, v.span)
            mapping[v] = E.Var(self.local.fresh(f"{v.name}_host"), value.type, v.span)
            reads.append(St.AssignStmt(mapping[v], value, v.span))
        return reads, substitute(s, mapping)

    def spill_tensor(self, value: E.Var, span: Any) -> tuple:
        """The host allocation of the DDR tensor that carries ``value`` from its kernel to later ones."""
        if isinstance(value.type, TileType):
            create = T.create(value.type.shape, value.type.dtype, span=span)
        else:
            create = T.create([1], _stored_dtype(value.type.dtype), span=span)
        ddr = E.Var(self.local.fresh(f"{value.name}_ddr"), create.type, span)
        return St.AssignStmt(ddr, create, span), ddr

    def call(self, name: str, args: list, results: list, scope: St.ScopeStmt) -> list:
        """The statements that dispatch kernel ``name`` and bind its results."""
        rtype = results[0].type if len(results) == 1 else TupleType(tuple(r.type for r in results)) if results \
            else UnknownType()
        launch = {"blocks": scope.blocks} if scope.blocks is not None else {}
        call = E.Call(E.GlobalVar(name), tuple(args), launch, rtype, scope.span)
        if not results:
            return [St.EvalStmt(call, scope.span)]
        if len(results) == 1:
            return [St.AssignStmt(results[0], call, scope.span)]
        tmp = E.Var(self.local.fresh(f"{name}_results"), rtype, scope.span)
        out = [St.AssignStmt(tmp, call, scope.span)]
        out += [St.AssignStmt(r, E.TupleGetItemExpr(tmp, i, scope.span), scope.span) for i, r in enumerate(results)]
        return out


@dataclass(frozen=True)
class OutlineIncoreScopesPass(Pass):
    name: ClassVar[str] = "outline-incore-scopes"
    dump_name: ClassVar[str] = "OutlineIncoreScopes"

    def run(self, program: St.Program) -> St.Program:
        return launch_parallel_loops(outline_functions(program, _has_incore_scope, lambda f: f))


def _has_incore_scope(f: St.Function) -> bool:
    return f.type is not FunctionType.InCore and any(_is_incore_scope(s) for s in walk_stmts(f.body))


def outline_functions(program: St.Program, selected: Callable[[St.Function], bool],
                      scoped: Callable[[St.Function], St.Function]) -> St.Program:
    """``program`` with the InCore scopes of each ``selected`` function (after ``scoped`` put its
    scopes in) outlined into kernels (:class:`Outliner`); the function becomes Orchestration code."""
    taken = NameAllocator({f.name for f in program.functions_list})
    funcs: list = []
    for f in program.functions_list:
        if not selected(f):
            funcs.append(f)
            continue
        f = scoped(f)
        o = Outliner(f, taken)
        funcs.append(replace(f, body=o.block(f.body), type=FunctionType.Orchestration))
        funcs.extend(o.kernels)
    return program.with_functions(funcs)
