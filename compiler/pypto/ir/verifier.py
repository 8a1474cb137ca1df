"""IR verifier: definitions before uses, SSA, type kinds, loop/if yields, memory properties."""

from __future__ import annotations

import dataclasses
from typing import Any

from pypto.enums import CAPACITY, FunctionType, MemorySpace, ScopeKind
from pypto.errors import VerifyError
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.printer import python_print
from pypto.ir.types import TileType, UnknownType, type_kind, type_str
from pypto.ir.visitor import stmt_list, walk

PROPERTIES = ("SSAForm", "TypeChecked", "HasMemRefs", "AllocatedMemoryAddr", "SplitIncoreOrch", "IncoreBlockOps")
# Tensor ops an InCore kernel may still contain once IncoreBlockOps holds: they only read a descriptor.
# tensor.as_shape: a second view of a kernel argument (pypto.lib.ops), printed as a make_tensor_view
KERNEL_TENSOR_OPS = frozenset({"tensor.dim", "tensor.as_shape"})


class _Checker:
    def __init__(self, func: St.Function, props: set[str]):
        self.func = func
        self.props = props
        self.defined: set = set()
        self.def_names: dict = {}
        self.errors: list[tuple[str, Any]] = []

    def fail(self, msg: str, span: Any) -> None:
        self.errors.append((f"{self.func.name}: {msg}", span))

    def define(self, v: E.Var, span: Any) -> None:
        if "SSAForm" in self.props and v in self.defined:
            self.fail(f"'{v.name}' is defined twice (SSA)", span)
        elif "SSAForm" in self.props and v.name in self.def_names and self.def_names[v.name] is not v:
            self.fail(f"two definitions share the name '{v.name}' (SSA)", span)
        self.defined.add(v)
        self.def_names[v.name] = v
        if "HasMemRefs" in self.props and isinstance(v.type, TileType) and v.type.memref is None:
            self.fail(f"tile '{v.name}' has no MemRef", span)
        m = getattr(v.type, "memref", None)
        on_chip = m is not None and m.memory_space is not MemorySpace.DDR
        if "AllocatedMemoryAddr" in self.props and on_chip and (m.addr < 0 or m.addr + m.size > CAPACITY[m.memory_space]):
            self.fail(f"'{v.name}' has buffer {m.name} at {m.addr} outside {m.memory_space.name}", span)

    def use(self, e: Any, span: Any) -> None:
        for n in walk(e) if e is not None else ():
            if isinstance(n, E.Var) and n not in self.defined and not self._is_dim(n):
                self.fail(f"'{n.name}' is used before it is defined", span)

    def _is_dim(self, v: E.Var) -> bool:
        return any(v is d for p in self.func.params for d in getattr(p.type, "shape", ()))

    def run(self) -> None:
        for p in self.func.params:
            self.define(p, p.span)
        self.block(self.func.body, None)
        self.structure()

    def structure(self) -> None:
        """SplitIncoreOrch: no ``with pl.incore():`` scope is left; IncoreBlockOps: an InCore kernel
        computes with tile ops only (tensor-level ops have no on-chip lowering)."""
        for n in walk(self.func.body):
            if "SplitIncoreOrch" in self.props and isinstance(n, St.ScopeStmt) and n.scope_kind is ScopeKind.InCore:
                self.fail("a `with pl.incore():` scope was not outlined", n.span)
            if (
                "IncoreBlockOps" in self.props and self.func.type is FunctionType.InCore and isinstance(n, E.Call)
                and not isinstance(n.op, E.GlobalVar) and n.op.name.startswith("tensor.")
                and n.op.name not in KERNEL_TENSOR_OPS
            ):
                self.fail(f"tensor op {n.op.name} is left in an InCore function", n.span)

    def block(self, body: Any, expect_yield: int | None) -> None:
        stmts = stmt_list(body)
        for s in stmts:
            self.stmt(s)
        if expect_yield:
            last = stmts[-1] if stmts else None
            if not isinstance(last, St.YieldStmt):
                self.fail("a body with loop-carried/if results must end with a yield", getattr(body, "span", None))
            elif len(last.value) != expect_yield:
                self.fail(f"yield has {len(last.value)} values, expected {expect_yield}", last.span)

    def stmt(self, s: Any) -> None:
        if isinstance(s, St.AssignStmt):
            self.assign(s)
        elif isinstance(s, (St.EvalStmt,)):
            self.use(s.expr, s.span)
        elif isinstance(s, (St.ReturnStmt, St.YieldStmt)):
            for v in s.value:
                self.use(v, s.span)
        elif isinstance(s, St.ForStmt):
            self.for_stmt(s)
        elif isinstance(s, St.WhileStmt):
            for ia in s.iter_args:
                self.use(ia.init_value, s.span)
                self.define(ia, s.span)
            self.use(s.condition, s.span)
            self.block(s.body, len(s.iter_args))
            for rv in s.return_vars:
                self.define(rv, s.span)
        elif isinstance(s, St.IfStmt):
            self.if_stmt(s)
        elif isinstance(s, St.ScopeStmt) and s.scope_kind in (ScopeKind.CubeSection, ScopeKind.VectorSection):
            # the sections of a group kernel run on different cores: each defines its own values
            # (scalars such as loop indices are repeated in both) and none is visible after it
            saved = set(self.defined), dict(self.def_names)
            self.block(s.body, None)
            self.defined, self.def_names = saved
        elif isinstance(s, St.ScopeStmt):
            self.block(s.body, None)
        elif isinstance(s, (St.SeqStmts, St.OpStmts)):
            self.block(s, None)

    def assign(self, s: St.AssignStmt) -> None:
        self.use(s.value, s.span)
        vt = getattr(s.value, "type", None)
        checked = "TypeChecked" in self.props and vt is not None and not isinstance(vt, UnknownType)
        if checked and type_kind(vt) != type_kind(s.var.type):
            self.fail(f"'{s.var.name}' is {type_str(s.var.type)} but its value is {type_str(vt)}", s.span)
        self.define(s.var, s.span)

    def for_stmt(self, s: St.ForStmt) -> None:
        for x in (s.start, s.stop, s.step):
            self.use(x, s.span)
        for ia in s.iter_args:
            self.use(ia.init_value, s.span)
        self.define(s.loop_var, s.span)
        for ia in s.iter_args:
            self.define(ia, s.span)
        if len(s.iter_args) != len(s.return_vars):
            self.fail("a loop needs one return var per iter arg", s.span)
        self.block(s.body, len(s.iter_args))
        for rv in s.return_vars:
            self.define(rv, s.span)

    def if_stmt(self, s: St.IfStmt) -> None:
        self.use(s.condition, s.span)
        self.block(s.then_body, len(s.return_vars))
        if s.else_body is not None:
            self.block(s.else_body, len(s.return_vars))
        if "TypeChecked" in self.props:
            self.branch_types(s)
        elif s.return_vars:
            self.fail("an if with results needs an else branch", s.span)
        for rv in s.return_vars:
            self.define(rv, s.span)

    def branch_types(self, s: St.IfStmt) -> None:
        """TypeCheck across branches (spec §5.10): what each branch yields for one result must have
        the result's type kind (101), dtype (102) and rank (103)."""
        for name, body in (("then", s.then_body), ("else", s.else_body)):
            stmts = stmt_list(body) if body is not None else []
            last = stmts[-1] if stmts else None
            if not isinstance(last, St.YieldStmt):
                continue
            for rv, v in zip(s.return_vars, last.value, strict=False):
                vt, rt = getattr(v, "type", None), rv.type
                if vt is None or isinstance(vt, UnknownType) or isinstance(rt, UnknownType):
                    continue
                what = None
                if type_kind(vt) != type_kind(rt):
                    what = "type kind (101)"
                elif getattr(vt, "dtype", None) is not getattr(rt, "dtype", None):
                    what = "dtype (102)"
                elif len(getattr(vt, "shape", ())) != len(getattr(rt, "shape", ())):
                    what = "rank (103)"
                if what is not None:
                    self.fail(
                        f"the {name} branch yields {type_str(vt)} for '{rv.name}' of type {type_str(rt)}: "
                        f"{what} mismatch",
                        last.span,
                    )


def verify(node: Any, properties: set[str] | tuple = ("TypeChecked",)) -> None:
    """Raise VerifyError listing every violation of the given properties."""
    funcs = node.functions_list if isinstance(node, St.Program) else [node]
    errors = []
    for f in funcs:
        c = _Checker(f, set(properties))
        c.run()
        errors.extend(c.errors)
    if errors:
        msg, span = errors[0]
        more = "" if len(errors) == 1 else f" (and {len(errors) - 1} more: " + "; ".join(m for m, _ in errors[1:4]) + ")"
        raise VerifyError(msg + more, span)


def structural_equal(a: Any, b: Any) -> bool:
    """Compare two IR trees by content (spec §5.1).

    The trees are walked in lockstep over every dataclass field except spans. Variables are matched
    by position, not by name: the first time a variable of ``a`` meets one of ``b`` (its definition
    site, since definitions precede uses in a walk) the two are paired, and every later occurrence
    must meet its partner. So renaming locals keeps IR equal, while types, layouts and constant
    dtypes (INDEX vs INT64) all take part. Comparing printed text would do the opposite on both.
    """
    return _StructEq().eq(a, b)


class _StructEq:
    def __init__(self) -> None:
        self.fwd: dict[int, Any] = {}
        self.back: dict[int, Any] = {}

    def var(self, a: Any, b: Any) -> bool:
        pa, pb = self.fwd.get(id(a)), self.back.get(id(b))
        if pa is not None or pb is not None:
            return pa is b and pb is a
        self.fwd[id(a)], self.back[id(b)] = b, a
        return self.fields(a, b, skip=("span", "name"))

    def fields(self, a: Any, b: Any, skip: tuple = ("span",)) -> bool:
        return all(
            self.eq(getattr(a, f.name), getattr(b, f.name))
            for f in dataclasses.fields(a) if f.name not in skip
        )

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if type(a) is not type(b):
            return False
        if isinstance(a, E.Var):
            return self.var(a, b)
        if isinstance(a, (list, tuple)):
            return len(a) == len(b) and all(self.eq(x, y) for x, y in zip(a, b, strict=False))
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(self.eq(a[k], b[k]) for k in a)
        if isinstance(a, St.Program):
            # function order is not semantic (the printer reorders callees first)
            fa, fb = (sorted(p.functions_list, key=lambda f: f.name) for p in (a, b))
            return a.name == b.name and self.eq(fa, fb)
        if dataclasses.is_dataclass(a):
            return self.fields(a, b)
        return bool(a == b)


def assert_structural_equal(a: Any, b: Any) -> None:
    if not structural_equal(a, b):
        raise AssertionError(f"IR differs:\n{python_print(a)}\n---\n{python_print(b)}")
