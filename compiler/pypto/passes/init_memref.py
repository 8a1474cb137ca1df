"""InitMemRef: attach a MemRef to every tile and tensor variable of the kernels.

Variables that must share storage are grouped first (union-find): a store's result and its output
tensor, a loop's init value / iter arg / yielded value / return var, an if's yielded values and return
var, a reshape and its input. Each group gets one MemRef whose space comes from its defining ops:
tensors -> DDR; load/move/create_tile -> their target_memory; the matmul family -> Acc; other tile ops
-> Vec.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pypto.enums import MemorySpace
from pypto.errors import CompileError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import MemRef, TensorType, TileType, nbytes, type_str
from pypto.ir.visitor import stmt_list, walk_stmts
from pypto.ops import isa
from pypto.passes.analysis import defined_vars, retype, space_of_def
from pypto.passes.base import Pass, is_kernel
from pypto.passes.normalize import normalize


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict = {}

    def find(self, x: Any) -> Any:
        self.parent.setdefault(x, x)
        while self.parent[x] is not x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: Any, b: Any) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[rb] = ra


def _shaped(v: Any) -> bool:
    return isinstance(v, E.Var) and isinstance(v.type, (TensorType, TileType))


def _last_yield(body: Any) -> St.YieldStmt | None:
    stmts = stmt_list(body)
    return stmts[-1] if stmts and isinstance(stmts[-1], St.YieldStmt) else None


def _cube_operand_spaces(op: str) -> tuple | None:
    """The memory each argument of a cube (pipe M) op must be in, from its ISA spec's operand locs."""
    spec = isa.op_instruction(op)
    if spec is None or spec.pipe.pipes() != ("M",):
        return None
    return isa.operand_spaces(op)


def _check_cube_operands(func: St.Function, space_of: Any) -> None:
    """Reject a cube op whose operands are not in Left/Right (Acc for the accumulator) at its line.

    Without this, a matmul on two Vec tiles only surfaces at code generation as "kernel mixes vector
    and cube tiles", reported at the function definition, which does not point at the mistake.
    """
    for s in walk_stmts(func.body):
        if not (isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call)):
            continue
        want = _cube_operand_spaces(getattr(s.value.op, "name", ""))
        if want is None:
            continue
        short = s.value.op.name.split(".", 1)[1]
        wrong = [(a, sp) for a, sp in zip(s.value.args, want, strict=False) if _shaped(a) and space_of(a) is not sp]
        if not wrong:
            continue
        got = ", ".join(f"'{a.name}' is in {space_of(a).name} (needs {sp.name})" for a, sp in wrong)
        if any(sp in (MemorySpace.Left, MemorySpace.Right) for _, sp in wrong):
            raise CompileError(
                f"{short}: operands must be in Left/Right (use pl.move(..., "
                f"target_memory=pl.MemorySpace.Left)); {got}",
                s.span,
            )
        raise CompileError(f"{short}: {got}", s.span)


def _sharing_groups(func: St.Function) -> tuple[_UnionFind, dict]:
    """Union the variables that must share storage, and the memory space each definition asks for."""
    uf = _UnionFind()
    space: dict = {}
    for v in defined_vars(func):
        if _shaped(v):
            uf.find(v)
            if isinstance(v.type, TensorType):
                space[v] = MemorySpace.DDR
    for s in walk_stmts(func.body):
        if isinstance(s, St.AssignStmt) and _shaped(s.var):
            _union_assign(uf, space, s)
        elif isinstance(s, (St.ForStmt, St.WhileStmt)):
            _union_loop(uf, s)
        elif isinstance(s, St.IfStmt):
            for body in (s.then_body, s.else_body):
                y = _last_yield(body) if body is not None else None
                for i, rv in enumerate(s.return_vars):
                    if _shaped(rv) and y is not None and i < len(y.value) and _shaped(y.value[i]):
                        uf.union(rv, y.value[i])
    return uf, space


# Ops whose result is the same buffer as one argument (by position): stores and scalar writes update it,
# reshape and transpose_view read its bytes another way.
_IN_PLACE = {"block.store": 2, "block.write_gm": 1, "block.reshape": 0, "block.setval": 0,
             "block.transpose_view": 0, "block.set_validshape": 0,
             "block.fillpad_inplace": 0}


def _union_assign(uf: _UnionFind, space: dict, s: St.AssignStmt) -> None:
    """A store's result shares its output tensor, a reshape its input, an alias its value."""
    value = s.value
    if isinstance(value, E.Call) and value.op.name in _IN_PLACE and _shaped(value.args[_IN_PLACE[value.op.name]]):
        uf.union(value.args[_IN_PLACE[value.op.name]], s.var)
    elif isinstance(value, E.Var) and _shaped(value):
        uf.union(value, s.var)
    sp = space_of_def(value)
    if sp is not None and isinstance(s.var.type, TileType):
        space[s.var] = sp


def _union_loop(uf: _UnionFind, s: Any) -> None:
    """A loop's iter arg shares its init value, its yielded value and the loop's result."""
    y = _last_yield(s.body)
    for i, (ia, rv) in enumerate(zip(s.iter_args, s.return_vars, strict=False)):
        if _shaped(ia):
            uf.union(ia, rv)
            if _shaped(ia.init_value):
                uf.union(ia, ia.init_value)
            if y is not None and i < len(y.value) and _shaped(y.value[i]):
                uf.union(ia, y.value[i])


def _memrefs(func: St.Function, uf: _UnionFind, space: dict) -> dict:
    """One MemRef per group (keyed by its root), in definition order, sized for its largest member."""
    groups: dict = {}
    for v in uf.parent:
        groups.setdefault(uf.find(v), []).append(v)
    memrefs: dict = {}
    for v in defined_vars(func):
        if not _shaped(v) or uf.find(v) in memrefs:
            continue
        members = groups[uf.find(v)]
        spaces = {space[m] for m in members if m in space}
        if len(spaces) > 1:
            names = ", ".join(f"{m.name} ({space[m].name})" for m in members if m in space)
            raise CompileError(f"values that must share a buffer live in different memory spaces: {names}", v.span)
        sp = spaces.pop() if spaces else (MemorySpace.DDR if isinstance(v.type, TensorType) else MemorySpace.Vec)
        sizes = [nbytes(m.type) for m in members]
        if sp is not MemorySpace.DDR and any(n is None for n in sizes):
            raise CompileError(f"tile '{v.name}' has a dynamic shape {type_str(v.type)}; tiles need static shapes", v.span)
        memrefs[uf.find(v)] = MemRef(sp, -1, max(n or 0 for n in sizes), len(memrefs), v.span)
    return memrefs


@dataclass(frozen=True)
class InitMemRefPass(Pass):
    name: ClassVar[str] = "init-memref"
    dump_name: ClassVar[str] = "InitMemRef"

    def run_function(self, func: St.Function) -> St.Function:
        if not is_kernel(func):
            return func
        func = normalize(func)
        uf, space = _sharing_groups(func)
        memrefs = _memrefs(func, uf, space)
        _check_cube_operands(func, lambda v: memrefs[uf.find(v)].memory_space)

        def new_type(v: E.Var) -> Any:
            if not _shaped(v):
                return v.type
            return replace(v.type, memref=memrefs[uf.find(v)])

        return retype(func, new_type)
