"""The DSL parser: Python AST of a ``@pl.function`` -> IR ``Function``.

One ``visit`` override attaches the current node's span to any error (non-project exceptions become
``CompileError(span, msg)``), statements not in the whitelist are rejected by name, nested op calls are
hoisted into temporaries (three-address form), and names resolve DSL scope first, then the Python
scope captured at decoration time.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from pypto.dtype import DataType
from pypto.enums import AtomicType, ForKind, FunctionType, ParamDirection, ScopeKind
from pypto.errors import CompileError, ParseError, PyptoError, PyptoTypeError, Span
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import ScalarType, TensorType, TileType, TupleType, UnknownType, static_int, type_str
from pypto.ir.visitor import walk
from pypto.language import dispatch, operators, optimizations, slicing, spmd, surface, tasks
from pypto.language.placement import at_name_hint, check_at, check_cluster
from pypto.language.source import Namespace, SourceInfo, is_pl_module
from pypto.language.typing import AnnotationError, DirectionAnnotation, DynVar, to_ir_type
from pypto.ops import tensor as T

LOOP_HELPERS = {"range": ForKind.Sequential, "parallel": ForKind.Parallel, "unroll": ForKind.Unroll,
                "pipeline": ForKind.Sequential, "parallel_for_power2": ForKind.Parallel}


@dataclass
class Signature:
    name: str
    params: list
    directions: list
    return_types: tuple
    dyn_vars: dict = field(default_factory=dict)


def _assigned_names(stmts: list) -> list[str]:
    """The plain names ``stmts`` assign anywhere (nested bodies included), first assignment first."""
    assigned: list[str] = []
    for s in stmts:
        for n in ast.walk(s):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
            for t in targets:
                for leaf in ast.walk(t):
                    if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Store):
                        assigned.append(leaf.id)
    return list(dict.fromkeys(assigned))


@dataclass
class ProgramContext:
    """Callable functions of the program being parsed: name -> (GlobalVar, Signature)."""

    signatures: dict
    externals: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)  # method name -> FunctionType (a kernel call is a task)


def signature_of(src: SourceInfo, ns: Namespace, is_method: bool) -> Signature:
    fn = src.node
    args = fn.args
    if args.vararg or args.kwarg or args.kwonlyargs:
        raise ParseError("*args, **kwargs and keyword-only parameters are not supported", src.span(fn))
    params = list(args.args)
    if is_method:
        if not params or params[0].arg != "self":
            raise ParseError(f"method '{fn.name}' must take 'self' first", src.span(fn))
        params = params[1:]
    dyn: dict = {}
    out_params, dirs = [], []
    env = ns.as_dict()
    for p in params:
        if p.annotation is None:
            raise PyptoTypeError(f"parameter '{p.arg}' needs a type annotation", src.span(p))
        ann = _eval_annotation(p.annotation, env, src)
        direction = ParamDirection.In
        if isinstance(ann, DirectionAnnotation):
            direction, ann = ann.direction, ann.inner
        try:
            span = src.span(p)
            t = to_ir_type(ann, dyn, lambda n, span=span: E.Var(n, ScalarType(DataType.INDEX), span))
        except TypeError as e:
            raise PyptoTypeError(f"parameter '{p.arg}': {e}", src.span(p.annotation)) from None
        if isinstance(t, TileType):
            raise PyptoTypeError(
                f"parameter '{p.arg}' is a pl.Tile; tiles cannot be function parameters "
                "(pass a pl.Tensor and pl.load it inside the function)",
                src.span(p),
            )
        if isinstance(t, ScalarType) and direction is ParamDirection.InOut:
            raise PyptoTypeError(f"parameter '{p.arg}': pl.InOut of a scalar is not allowed", src.span(p))
        out_params.append(E.Var(p.arg, t, src.span(p)))
        dirs.append(direction)
    rets: tuple = ()
    if fn.returns is not None:
        ann = _eval_annotation(fn.returns, env, src)
        items = ann.__args__ if getattr(ann, "__origin__", None) is tuple else (ann,)
        try:
            rets = tuple(to_ir_type(a, dyn, lambda n: E.Var(n, ScalarType(DataType.INDEX))) for a in items)
        except TypeError as e:
            raise PyptoTypeError(f"return annotation: {e}", src.span(fn.returns)) from None
    return Signature(fn.name, out_params, dirs, rets, dyn)


def _eval_annotation(node: ast.AST, env: dict, src: SourceInfo) -> Any:
    try:
        return eval(compile(ast.Expression(node), src.filename, "eval"), env)
    except AnnotationError as e:
        raise PyptoTypeError(e.message, src.span(node)) from None
    except PyptoError:
        raise
    except Exception as e:  # noqa: BLE001  (annotation errors are user errors: report at the annotation)
        raise PyptoTypeError(f"invalid type annotation: {e}", src.span(node)) from None


class FunctionParser:
    """Walks one function body and builds its IR."""

    def __init__(
        self,
        src: SourceInfo,
        ns: Namespace,
        sig: Signature,
        func_type: FunctionType,
        program: ProgramContext | None,
        strict_ssa: bool = False,
    ):
        self.src = src
        self.ns = ns
        self.sig = sig
        self.func_type = func_type
        self.program = program
        self.strict_ssa = strict_ssa
        self.env: dict[str, Any] = {}
        # scalar names first assigned in a loop body -> the line there: no value after the loop
        self.loop_locals: dict[str, int] = {}
        self.blocks: list[list] = []
        self.yields: list[list] = []
        self.tmp_counter = 0
        self.cur_node: ast.AST | None = None
        self.assigned_once: set[str] = set()
        self.fold_metadata = False  # set by @pl.jit specialization
        # names assigned in a branch of the run-time ifs being parsed: never folded (see assign)
        self.branch_names: set[str] = set()
        # orchestration views made with pl.slice(..., valid_shape=/pad_value=): view var -> (valid, pad),
        # honoured by the loads of their windows in InCore code (spec pypto-jit §6.2)
        self.view_valid: dict = {}
        self.form = "@pl.function"  # the decorator the user wrote, for messages ("@pl.jit" in jit code)
        self.in_incore = func_type is FunctionType.InCore  # tensor subscripts load/store here
        self.computed_tensors: dict[str, bool] = {}  # name -> last bound to a newly computed tensor

    # ------------------------------------------------------------------ infrastructure
    def span(self, node: ast.AST | None = None) -> Span:
        return self.src.span(node if node is not None else self.cur_node or self.src.node)

    def emit(self, stmt: St.Stmt) -> None:
        tasks.note_tensor(self, stmt)
        self.blocks[-1].append(stmt)

    def error(self, msg: str, node: ast.AST | None = None, cls: type = ParseError) -> PyptoError:
        return cls(msg, self.span(node))

    def guarded(self, node: ast.AST, fn: Any, *args: Any) -> Any:
        prev = self.cur_node
        self.cur_node = node
        try:
            return fn(*args)
        except PyptoError as e:
            if e.span is None or not e.span.is_known():
                e.span = self.span(node)
            raise
        except RecursionError:
            raise
        except Exception as e:  # noqa: BLE001  (any internal failure is reported at the user's line)
            raise CompileError(f"{type(e).__name__}: {e}", self.span(node)) from None
        finally:
            self.cur_node = prev

    # ------------------------------------------------------------------ entry
    def parse(self) -> St.Function:
        for p in self.sig.params:
            self.env[p.name] = p
        for name, v in self.sig.dyn_vars.items():
            self.env.setdefault(name, v)
        body = self.block(self._body_statements(self.src.node.body))
        stmts = list(body.stmts)
        if not (stmts and isinstance(stmts[-1], St.ReturnStmt)):
            stmts += self._output_write_backs(self.src.node.body[-1] if self.src.node.body else self.src.node)
            body = St.SeqStmts(tuple(stmts), body.span)
        return St.Function(
            self.sig.name,
            tuple(zip(self.sig.params, self.sig.directions, strict=False)),
            self.sig.return_types,
            body,
            self.span(self.src.node),
            self.func_type,
        )

    @staticmethod
    def _body_statements(body: list) -> list:
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            return body[1:]
        return body

    def block(self, stmts: list) -> St.SeqStmts:
        self.blocks.append([])
        for s in stmts:
            self.guarded(s, self.stmt, s)
        out = self.blocks.pop()
        span = self.span(stmts[0]) if stmts else self.span()
        return St.SeqStmts(tuple(out), span)

    # ------------------------------------------------------------------ statements
    def stmt(self, node: ast.stmt) -> None:
        meth = getattr(self, "stmt_" + type(node).__name__, None)
        if meth is None:
            what = {
                "AugAssign": "augmented assignment (x += ...); write x = x + ...",
                "Break": "'break'",
                "Continue": "'continue'",
                "FunctionDef": "nested function definitions",
                "Try": "'try'",
                "Pass": "'pass'",
            }.get(type(node).__name__, f"'{type(node).__name__}' statements")
            raise self.error(f"unsupported syntax: {what} inside a {self.form} body", node)
        meth(node)

    def stmt_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return
        f = node.value.func if isinstance(node.value, ast.Call) else None
        if isinstance(f, ast.Attribute) and f.attr == "bind_dynamic" and self.fold_metadata:
            return  # x.bind_dynamic(axis, M): a declaration, read when the jit function is specialized
        value = self.expr(node.value, top=True)
        if (value is None or isinstance(value, E.Var)) and isinstance(node.value, ast.Call):
            return  # a statement op that emitted its own IR (pl.write, pl.set_validshape)
        if not isinstance(value, E.Call):
            raise self.error("an expression statement must be an op call", node)
        self.emit(St.EvalStmt(value, self.span(node)))

    def stmt_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1:
            raise self.error("chained assignment (a = b = ...) is not supported", node)
        self.assign(node.targets[0], node.value, None, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            raise self.error("a declaration without a value is not supported", node)
        self.assign(node.target, node.value, node.annotation, node)

    def _is_helper_call(self, node: ast.AST, name: str) -> bool:
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        return isinstance(f, ast.Attribute) and f.attr == name and self._static_is_pl(f.value)

    def _static_is_pl(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name) and node.id not in self.env:
            found, obj = self.ns.lookup(node.id)
            return found and is_pl_module(obj)
        return False

    def assign(self, target: ast.AST, value_node: ast.AST, ann: ast.AST | None, node: ast.AST) -> None:
        if isinstance(target, ast.Subscript):
            if not tasks.bind_task_array_slot(self, target, value_node, node):
                self._slice_store(target, value_node, node)
            return
        if self._is_helper_call(value_node, "yield_"):
            self.yield_stmt(target, value_node, ann, node)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            names = [self._target_name(t) for t in target.elts]
            value = self.expr(value_node, top=True)
            if isinstance(value, tuple) and len(value) == len(names):  # `M, N = a.shape`: static metadata
                for name, item in zip(names, value, strict=True):
                    if isinstance(item, E.Expr):
                        self.bind(name, item, node)
                    else:
                        self.env[name] = item
                return
            if not isinstance(getattr(value, "type", None), TupleType):
                raise self.error("tuple unpacking needs a call that returns several values", node)
            if len(value.type.types) != len(names):
                raise self.error(
                    f"cannot unpack {len(value.type.types)} values into {len(names)} names", node
                )
            tmp = E.Var("_tuple_tmp", value.type, self.span(node))
            self.emit(St.AssignStmt(tmp, value, self.span(node)))
            for i, name in enumerate(names):
                self.bind(name, E.TupleGetItemExpr(tmp, i, self.span(node)), node)
            return
        name = self._target_name(target)
        value = self.expr(value_node, top=True)
        if ann is not None:
            self._check_annotation(name, ann, value, node)
        if not isinstance(value, E.Expr):
            # A name a run-time if assigns holds after it the value of the branch taken; a number folded
            # in one branch would stand for it after the if whichever branch ran.
            folds = (not isinstance(value_node, ast.Constant) and not isinstance(self.env.get(name), E.Var)
                     and name not in self.branch_names)
            if isinstance(value, (bool, int, float)) and self.fold_metadata and folds:
                self.env[name] = value  # jit: `cols = x.shape[1]` stays a compile-time int (static shapes)
                return
            if isinstance(value, (bool, int, float)):
                value = E.as_expr(value, self.span(value_node))
            else:
                self.env[name] = value
                return
        self.bind(name, value, node)

    def materialize_rebound_constants(self, stmts: list, node: ast.AST) -> None:
        """Names folded to compile-time numbers (``best = -1.0``, ``scale = 1.0 / D``) that ``stmts`` (a
        loop or branch body) assign again become scalar variables before the loop or branch: the value
        they hold after it depends on the run (a running maximum, a branch taken), so the folded number
        must not stand in for them inside the body or after it."""
        for name in _assigned_names(stmts):
            value = self.env.get(name)
            if isinstance(value, (bool, int, float)) and not isinstance(value, E.Expr):
                self.bind(name, E.as_expr(value, self.span(node)), node)

    def _check_annotation(self, name: str, ann: ast.AST, value: Any, node: ast.AST) -> None:
        ev = _eval_annotation(ann, self.ns.as_dict(), self.src)
        if isinstance(ev, DirectionAnnotation):
            ev = ev.inner
        try:
            want = to_ir_type(ev, {}, lambda n: E.Var(n, ScalarType(DataType.INDEX)))
        except TypeError as e:
            raise self.error(f"invalid annotation for '{name}': {e}", ann, PyptoTypeError) from None
        got = getattr(value, "type", None)
        if got is not None and type(want) is not type(got) and not isinstance(got, UnknownType):
            raise self.error(
                f"'{name}' is annotated as {type_str(want)} but the value is {type_str(got)}", node, PyptoTypeError
            )

    def _target_name(self, t: ast.AST) -> str:
        if not isinstance(t, ast.Name):
            raise self.error("assignment targets must be plain names", t)
        return t.id

    def bind(self, name: str, value: E.Expr, node: ast.AST) -> E.Var:
        if self.strict_ssa and name in self.assigned_once:
            raise self.error(f"'{name}' is assigned twice (strict_ssa=True)", node)
        self.assigned_once.add(name)
        t = value.type
        if t is None:
            raise self.error(f"cannot infer the type of '{name}'", node, PyptoTypeError)
        self._check_output_rebinding(name, t, node)
        if isinstance(t, TensorType):
            self.computed_tensors[name] = _computes_a_new_tensor(value)
        var = E.Var(name, t, self.span(node))
        self.emit(St.AssignStmt(var, value, self.span(node)))
        self.env[name] = var
        if isinstance(value, E.Var) and value in self.view_valid:
            self.view_valid[var] = self.view_valid[value]
        return var

    def _check_output_rebinding(self, name: str, t: Any, node: ast.AST) -> None:
        """An Out/InOut tensor parameter rebound to a tensor keeps its dtype and static shape: its final
        value is what the caller's buffer receives (spec: "Cannot reassign 'out' with a different type")."""
        if not isinstance(t, TensorType):
            return
        for p, d in zip(self.sig.params, self.sig.directions, strict=False):
            if p.name != name or d is ParamDirection.In or not isinstance(p.type, TensorType):
                continue
            want = [static_int(x) for x in p.type.shape]
            got = [static_int(x) for x in t.shape]
            shape_differs = len(want) != len(got) or any(
                a is not None and b is not None and a != b for a, b in zip(want, got, strict=False))
            if t.dtype is not p.type.dtype or shape_differs:
                raise self.error(
                    f"Cannot reassign '{name}' with a different type: the {d.name} parameter is "
                    f"{type_str(p.type)}, the value is {type_str(t)}", node, PyptoTypeError)

    def yield_stmt(self, target: ast.AST | None, call: ast.Call, ann: ast.AST | None, node: ast.AST) -> None:
        if not self.yields:
            raise self.error("pl.yield_ is only allowed at the end of a loop or if body", node)
        if call.keywords:
            raise self.error("pl.yield_ takes no keyword arguments", node)
        values = [self.to_ir(self.expr(a), a) for a in call.args]
        if target is None:
            names = []
        elif isinstance(target, (ast.Tuple, ast.List)):
            names = [self._target_name(t) for t in target.elts]
        else:
            names = [self._target_name(target)]
        if names and len(names) != len(values):
            raise self.error(f"pl.yield_ yields {len(values)} values into {len(names)} names", node)
        ann_type = None
        if ann is not None:
            ev = _eval_annotation(ann, self.ns.as_dict(), self.src)
            ann_type = to_ir_type(ev, {}, lambda n: E.Var(n, ScalarType(DataType.INDEX)))
        self.emit(St.YieldStmt(tuple(values), self.span(node)))
        self.yields[-1].append((names, values, ann_type, node))

    def stmt_Return(self, node: ast.Return) -> None:
        if node.value is None:
            values: list = []
        elif isinstance(node.value, ast.Tuple):
            values = [self.to_ir(self.expr(v), v) for v in node.value.elts]
        else:
            values = [self.to_ir(self.expr(node.value), node.value)]
        rets = self.sig.return_types
        if rets and len(values) != len(rets):
            raise self.error(f"function returns {len(values)} values but its annotation has {len(rets)}", node)
        for v, t in zip(values, rets, strict=False):
            if type(v.type) is not type(t):
                raise self.error(
                    f"returned value is {type_str(v.type)} but the annotation says {type_str(t)}",
                    node,
                    PyptoTypeError,
                )
        for wb in self._output_write_backs(node):
            self.emit(wb)
        self.emit(St.ReturnStmt(tuple(values), self.span(node)))

    def _output_write_backs(self, node: ast.AST) -> list:
        """Host code (Orchestration/Opaque) that rebinds an Out/InOut tensor parameter to another tensor
        (``acc = pl.add(acc, x)``, a value computed in an incore scope) writes the final value into the
        parameter's buffer when it returns: the caller's tensor is the parameter (seed 003 §4.3: an
        inout is passed by reference). Kernels write their outputs themselves."""
        if self.func_type not in (FunctionType.Orchestration, FunctionType.Opaque) or self.in_incore:
            return []
        out = []
        for prm, d in zip(self.sig.params, self.sig.directions, strict=False):
            final = self.env.get(prm.name)
            if (d is ParamDirection.In or not isinstance(prm.type, TensorType) or final is prm
                    or not isinstance(final, E.Var) or not isinstance(final.type, TensorType)
                    or not self.computed_tensors.get(prm.name)):
                continue
            zeros = [0] * len(prm.type.shape)
            out.append(St.EvalStmt(T.assemble(prm, final, zeros, span=self.span(node)), self.span(node)))
        return out

    def stmt_With(self, node: ast.With) -> None:
        if len(node.items) > 1:  # `with a, b:` is `with a:` around `with b:`
            inner = ast.copy_location(ast.With(items=node.items[1:], body=node.body), node.items[1].context_expr)
            ast.fix_missing_locations(inner)
            node = ast.copy_location(ast.With(items=node.items[:1], body=[inner]), node)
        ctx = node.items[0].context_expr
        for name, kind in (("incore", ScopeKind.InCore), ("auto_incore", ScopeKind.AutoInCore)):
            if self._is_helper_call(ctx, name):
                if ctx.args or ctx.keywords:
                    raise self.error(f"pl.{name}() takes no arguments (spec §3.4)", ctx)
                body = self.block(node.body)
                self.emit(St.ScopeStmt(kind, body, self.span(node)))
                return
        if self._is_helper_call(ctx, "at"):
            self._at_region(node, ctx)
            return
        if self._is_helper_call(ctx, "manual_scope") or self._is_helper_call(ctx, "scope"):
            if node.items[0].optional_vars is not None:
                raise self.error("a runtime scope has no value to bind with 'as'", node.items[0].optional_vars)
            tasks.open_scope(self, node, tasks.scope_mode(self, ctx))
            return
        if self._is_helper_call(ctx, "spmd"):
            spmd.spmd_with(self, node, ctx)
            return
        if self._is_helper_call(ctx, "cluster"):
            check_cluster(self, ctx)  # co-scheduling on one core group: no functional effect
            for s in node.body:
                self.guarded(s, self.stmt, s)
            return
        raise self.error("only 'with pl.incore()', 'with pl.auto_incore()', 'with pl.at(...)', 'with pl.spmd(...)' "
                         "and 'with pl.cluster()' are supported", node)

    def incore_block(self, stmts: list, prologue: tuple = ()) -> St.SeqStmts:
        """``stmts`` parsed as InCore code (tensor subscripts load and store), after ``prologue``."""
        saved, self.in_incore = self.in_incore, True
        try:
            self.blocks.append(list(prologue))
            for s in stmts:
                self.guarded(s, self.stmt, s)
            out = self.blocks.pop()
        finally:
            self.in_incore = saved
        return St.SeqStmts(tuple(out), self.span(stmts[0]) if stmts else self.span())

    def _at_region(self, node: ast.With, ctx: ast.Call) -> None:
        """``with pl.at(level=CORE_GROUP, deps=[...]) as tid``: one InCore task, outlined as pl.incore is;
        ``tid`` names it for later ``deps=`` (spec §9)."""
        if self.in_incore:
            raise self.error("pl.at regions do not nest: this code already runs in an InCore kernel (the body "
                             "of a pl.at, a pl.spmd loop or an InCore function)", ctx)
        check_at(self, ctx)
        split_mode, slot_num = optimizations.check(self, ctx)
        kw = {k.arg: k.value for k in ctx.keywords}
        deps = tasks.dependencies(self, self.expr(kw["deps"]), kw["deps"]) if "deps" in kw else set()
        deps |= self.__dict__.pop("spmd_deps", set())  # a pl.at launched by `with pl.spmd(deps=...)`
        # tensor windows written with tensor-level values: assembled right after the region
        after: tuple = (len(self.blocks) + 1, [], [])
        if "spmd_deps" not in self.__dict__:  # a region launched as SPMD blocks stores tiles itself
            self.__dict__["region_after"] = after
        try:
            body = self.incore_block(node.body)
        finally:
            self.__dict__.pop("region_after", None)
        for dst, var in after[2]:
            if _used_after(body, var, dst):
                raise self.error(f"the region uses '{dst.name}' after writing a tensor-level value into a window of "
                                 "it; that write lands when the region ends: compute it last, or with tile ops",
                                 node)
        hint = at_name_hint(self, ctx)
        self.emit(St.ScopeStmt(ScopeKind.InCore, body, self.span(node), hint, split_mode=split_mode,
                               slot_num=slot_num))
        for s in after[1]:
            self.emit(s)
        task_body = St.SeqStmts((body, *after[1]), body.span) if after[1] else body
        task = self.__dict__["last_at_task"] = tasks.at_task(self, node, hint, deps, task_body)
        target = node.items[0].optional_vars
        if target is not None:
            self.env[self._target_name(target)] = task

    # ------------------------------------------------------------------ control flow
    def stmt_If(self, node: ast.If) -> None:
        cond = self.expr(node.test)
        if not isinstance(cond, E.Expr):
            taken = node.body if cond else node.orelse
            for s in taken:
                self.guarded(s, self.stmt, s)
            return
        cond = self.to_ir(cond, node.test)
        if not isinstance(cond.type, ScalarType):
            raise self.error(f"an if condition must be a scalar, got {type_str(cond.type)}", node.test, PyptoTypeError)
        self.materialize_rebound_constants([*node.body, *node.orelse], node)
        outer_branch_names = self.branch_names
        self.branch_names = outer_branch_names | set(_assigned_names([*node.body, *node.orelse]))
        # Each branch starts from the names as they were before the if: a name the then-branch assigns
        # must not be what the else-branch reads (``x = f(x)`` in both reads the x from before).
        before = dict(self.env)
        self.yields.append([])
        then_body = self.block(node.body)
        then_env = self.env
        then_y = self.yields.pop()
        self.env = dict(before)
        self.yields.append([])
        else_body = self.block(node.orelse) if node.orelse else None
        else_env = self.env
        else_y = self.yields.pop()
        self.branch_names = outer_branch_names
        # after the if, a name either branch assigned refers to that branch's definition (ConvertToSSA
        # merges the two into one value); the others are unchanged
        self.env = dict(before)
        for env in (then_env, else_env):
            self.env.update({n: v for n, v in env.items() if before.get(n) is not v})
        return_vars: list = []
        if then_y or else_y:
            if not then_y or not else_y:
                raise self.error("if one branch yields values, the other branch must yield too", node)
            (tn, tv, tann, _), (en, ev, eann, _) = then_y[-1], else_y[-1]
            names = tn or en
            if len(tv) != len(ev) or (tn and en and tn != en):
                raise self.error("both branches must yield the same names in the same order", node)
            for i, name in enumerate(names):
                t = tann or eann or tv[i].type
                if type(tv[i].type) is not type(ev[i].type):
                    raise self.error(
                        f"branches yield different kinds for '{name}': {type_str(tv[i].type)} vs "
                        f"{type_str(ev[i].type)}",
                        node,
                        PyptoTypeError,
                    )
                return_vars.append(E.Var(name, t, self.span(node)))
        self.emit(St.IfStmt(cond, then_body, else_body, tuple(return_vars), self.span(node)))
        for rv in return_vars:
            self.env[rv.name] = rv

    def stmt_For(self, node: ast.For) -> None:
        it = node.iter
        helper = None
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and self._static_is_pl(it.func.value):
            helper = it.func.attr
        special = {"while_": FunctionParser.while_loop, "spmd": spmd.spmd_loop,
                   "split_aiv": spmd.split_aiv_loop}.get(helper)
        if special is not None:
            special(self, node)
            return
        if helper not in LOOP_HELPERS:
            raise self.error("a for loop must iterate over pl.range, pl.parallel, pl.pipeline, pl.unroll, "
                             "pl.parallel_for_power2, pl.spmd, pl.split_aiv or pl.while_", it)
        self.materialize_rebound_constants(node.body, node)
        kind = LOOP_HELPERS[helper]
        kw = {k.arg: k.value for k in it.keywords}
        power2 = None
        if helper == "parallel_for_power2":
            power2 = self._power2_bounds(it, kw)
        for k in kw:
            if k not in ("init_values", "chunk", "chunk_policy") and not (helper == "pipeline" and k == "stage"):
                raise self.error(f"pl.{helper}: unknown keyword '{k}'", it)
        if helper == "pipeline":
            self._pipeline_stage(it, kw)
            kw.pop("stage")
        start, stop, step = self._loop_bounds(helper, it)
        inits, chunk = self._loop_options(kind, it, kw)
        loop_name, names = self._loop_targets(node.target, inits)
        tgt = node.target
        loop_var = E.Var(loop_name, ScalarType(DataType.INDEX), self.span(tgt))
        iter_args = [E.IterArg(n, v.type, self.span(tgt), v) for n, v in zip(names, inits, strict=False)]
        saved = {n: self.env.get(n) for n in [loop_name, *names]}
        self.env[loop_name] = loop_var
        for ia in iter_args:
            self.env[ia.name] = ia
        self.yields.append([])
        before = set(self.env)
        with tasks.LoopTasks(self, _static_trips(start, stop, step)):
            body = self.block(node.body)
        self._end_loop_scope(before, body)
        ys = self.yields.pop()
        if node.orelse:
            raise self.error("for ... else is not supported", node)
        return_vars = self._loop_results(node, body, ys, iter_args)
        for n, v in saved.items():
            if v is None:
                self.env.pop(n, None)
            else:
                self.env[n] = v
        self.emit(
            St.ForStmt(
                loop_var, start, stop, step, tuple(iter_args), body, tuple(return_vars), self.span(node),
                kind, chunk, power2=power2,
            )
        )
        if return_vars:
            for name, rv in zip(ys[-1][0] or [ia.name for ia in iter_args], return_vars, strict=False):
                self.env[name] = rv

    def _end_loop_scope(self, before: set[str], body: Any) -> None:
        """Scalar names first assigned in a loop body end with it: the generated code scopes them to
        the loop's region (a .pto ``scf.for`` hands values out only through its results), so a read
        after the loop would name a value that does not exist there. It is refused at the reading
        line (:meth:`expr_Name`), not left to fail in the generated .pto. Python would give the last
        trip's value, or a NameError when the loop runs no trip; a name assigned before the loop is
        carried through it instead. Tiles and tensors live in buffers and keep their last value."""
        for name in [n for n in self.env if n not in before]:
            value = self.env[name]
            if isinstance(value, E.Var) and isinstance(value.type, ScalarType):
                self.loop_locals[name] = value.span.line
                del self.env[name]

    def _pipeline_stage(self, it: ast.Call, kw: dict) -> None:
        """``pl.pipeline(..., stage=F)``: F copies of the body for ping-pong buffering, a performance
        choice; the loop means what ``pl.range`` means. ``stage`` is required, a positive int."""
        if "stage" not in kw:
            raise self.error("pl.pipeline needs stage=F (how many copies of the body to interleave)", it)
        stage = self.expr(kw["stage"])
        if isinstance(stage, bool) or not isinstance(stage, int) or stage <= 0:
            raise self.error(f"pl.pipeline: stage must be a positive int, got {stage!r}", kw["stage"])

    def _power2_bounds(self, it: ast.Call, kw: dict) -> tuple[int, int]:
        """``(min_chunk, max_chunk)`` of ``pl.parallel_for_power2(extent, min_chunk=, max_chunk=)``, taken
        out of ``kw``: powers of two with ``min_chunk <= max_chunk``; the extent is its only positional."""
        if len(it.args) != 1:
            raise self.error("pl.parallel_for_power2 takes one positional argument, the extent", it)
        if "chunk" in kw:
            raise self.error("pl.parallel_for_power2 chunks itself; use min_chunk= and max_chunk=", it)
        bounds = []
        for name, default in (("min_chunk", 1), ("max_chunk", 64)):
            node = kw.pop(name, None)
            v = default if node is None else self.expr(node)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1 or v & (v - 1):
                raise self.error(f"pl.parallel_for_power2: {name} must be a power of two integer literal, got "
                                 f"{v!r}", node or it)
            bounds.append(v)
        if bounds[0] > bounds[1]:
            raise self.error(f"pl.parallel_for_power2: min_chunk {bounds[0]} exceeds max_chunk {bounds[1]}", it)
        return bounds[0], bounds[1]

    def _loop_bounds(self, helper: str, it: ast.Call) -> tuple:
        """(start, stop, step) of ``pl.range(stop)`` / ``(start, stop)`` / ``(start, stop, step)``."""
        bounds = [self.loop_bound(helper, self.expr(a), a) for a in it.args]
        if not 1 <= len(bounds) <= 3:
            raise self.error(f"pl.{helper} takes 1 to 3 positional arguments, got {len(bounds)}", it)
        zero, one = E.ConstInt(0, DataType.INDEX), E.ConstInt(1, DataType.INDEX)
        start, stop, step = (
            (zero, bounds[0], one) if len(bounds) == 1 else (bounds[0], bounds[1], bounds[2] if len(bounds) > 2 else one)
        )
        if E.static_int(step) == 0:
            raise self.error(f"pl.{helper}: step must not be zero", it)
        return start, stop, step

    def _loop_options(self, kind: ForKind, it: ast.Call, kw: dict) -> tuple[list, Any]:
        """The loop's ``init_values`` (as IR) and ``chunk`` (checked with ``chunk_policy``)."""
        inits: list = []
        if "init_values" in kw:
            if kind is ForKind.Unroll:
                raise self.error("pl.unroll does not take init_values", it)
            iv = kw["init_values"]
            elts = iv.elts if isinstance(iv, (ast.Tuple, ast.List)) else [iv]
            inits = [self.to_ir(self.expr(e), e) for e in elts]
        if "chunk_policy" in kw:
            pol = self.expr(kw["chunk_policy"])
            if pol != "leading_full":
                shown = repr(pol) if isinstance(pol, (str, int, float)) else type(pol).__name__
                raise self.error(f"chunk_policy must be \"leading_full\" (the only policy), got {shown}",
                                 kw["chunk_policy"])
        chunk = None
        if "chunk" in kw:
            c = self.expr(kw["chunk"])
            if not isinstance(c, int) or c <= 0:
                raise self.error("chunk must be a positive integer literal", kw["chunk"])
            if inits:
                raise self.error("chunk cannot be combined with init_values", it)
            chunk = E.ConstInt(c, DataType.INDEX)
        return inits, chunk

    def _loop_targets(self, tgt: ast.AST, inits: list) -> tuple[str, list[str]]:
        """The loop variable's name and the loop-carried names (``for i, (a, b) in ...``)."""
        if not inits:
            return self._target_name(tgt), []
        if not (isinstance(tgt, ast.Tuple) and len(tgt.elts) == 2):
            raise self.error("a loop with init_values is written 'for i, (a, b) in pl.range(...)'", tgt)
        loop_name = self._target_name(tgt.elts[0])
        carried = tgt.elts[1]
        names = [self._target_name(t) for t in (carried.elts if isinstance(carried, ast.Tuple) else [carried])]
        if len(names) != len(inits):
            raise self.error(f"{len(names)} loop-carried names but {len(inits)} init_values", tgt)
        return loop_name, names

    def _loop_results(self, node: ast.For, body: Any, ys: list, iter_args: list) -> list:
        """The loop's result variables, after checking the closing ``pl.yield_`` against the carried values."""
        if not iter_args:
            if ys:
                raise self.error("pl.yield_ in a loop needs init_values", ys[-1][3])
            return []
        if not ys or not body.stmts or not isinstance(body.stmts[-1], St.YieldStmt):
            raise self.error("a loop with init_values must end with '... = pl.yield_(...)'", node)
        _, yvals, _, ynode = ys[-1]
        if len(yvals) != len(iter_args):
            raise self.error(
                f"pl.yield_ yields {len(yvals)} values but the loop carries {len(iter_args)}", ynode
            )
        for ia, v in zip(iter_args, yvals, strict=False):
            if type(ia.type) is not type(v.type):
                raise self.error(
                    f"loop-carried '{ia.name}' starts as {type_str(ia.type)} but is yielded as "
                    f"{type_str(v.type)}",
                    ynode,
                    PyptoTypeError,
                )
        return [E.Var(f"{ia.name}_out", ia.type, self.span(node)) for ia in iter_args]

    def while_loop(self, node: ast.For) -> None:
        it = node.iter
        kw = {k.arg: k.value for k in it.keywords}
        if it.args or set(kw) != {"init_values"}:
            raise self.error("pl.while_ takes only init_values=(...)", it)
        iv = kw["init_values"]
        elts = iv.elts if isinstance(iv, (ast.Tuple, ast.List)) else [iv]
        inits = [self.to_ir(self.expr(e), e) for e in elts]
        tgt = node.target
        names = [self._target_name(t) for t in (tgt.elts if isinstance(tgt, ast.Tuple) else [tgt])]
        if len(names) != len(inits):
            raise self.error(f"{len(names)} loop-carried names but {len(inits)} init_values", tgt)
        if not node.body or not self._is_helper_call(getattr(node.body[0], "value", None), "cond"):
            raise self.error("the first statement of a pl.while_ loop must be pl.cond(...)", node)
        iter_args = [E.IterArg(n, v.type, self.span(tgt), v) for n, v in zip(names, inits, strict=False)]
        saved = {n: self.env.get(n) for n in names}
        for ia in iter_args:
            self.env[ia.name] = ia
        cond_call = node.body[0].value
        self.blocks.append([])
        cond = self.to_ir(self.expr(cond_call.args[0]), cond_call)
        if self.blocks.pop():  # an op call's statements would run once, before the loop, on the initial values
            raise self.error("pl.cond(...) must be a scalar expression of the loop-carried values without op "
                             "calls: compute the value at the end of the body (e.g. a pl.read) and carry it "
                             "in init_values", cond_call)
        self.yields.append([])
        before = set(self.env)
        body = self.block(node.body[1:])
        self._end_loop_scope(before, body)
        ys = self.yields.pop()
        if not ys:
            raise self.error("a pl.while_ loop must end with '... = pl.yield_(...)'", node)
        for n, v in saved.items():
            if v is None:
                self.env.pop(n, None)
            else:
                self.env[n] = v
        return_vars = [E.Var(f"{ia.name}_out", ia.type, self.span(node)) for ia in iter_args]
        self.emit(St.WhileStmt(cond, tuple(iter_args), body, tuple(return_vars), self.span(node)))
        for name, rv in zip(ys[-1][0] or names, return_vars, strict=False):
            self.env[name] = rv

    def stmt_While(self, node: ast.While) -> None:
        """A natural ``while cond:`` loop: a WhileStmt without iter args (spec §3.2).

        ConvertToSSA turns the names the body re-assigns into iter args and evaluates the condition
        on them. The condition is re-evaluated every trip, so it must be a pure scalar expression:
        an op call in it would be computed once, before the loop.
        """
        if node.orelse:
            raise self.error("while ... else is not supported", node)
        self.materialize_rebound_constants(node.body, node)
        self.blocks.append([])
        cond = self.to_ir(self.expr(node.test), node.test)
        pre = self.blocks.pop()
        if pre:
            raise self.error("a while condition must be a scalar expression without op calls", node.test)
        if not isinstance(getattr(cond, "type", None), ScalarType):
            raise self.error("a while condition must be a scalar expression", node.test, PyptoTypeError)
        self.yields.append([])
        before = set(self.env)
        body = self.block(node.body)
        self._end_loop_scope(before, body)
        ys = self.yields.pop()
        if ys:
            raise self.error("pl.yield_ in a natural while loop needs pl.while_(init_values=...)", ys[-1][3])
        self.emit(St.WhileStmt(cond, (), body, (), self.span(node)))

    # ------------------------------------------------------------------ expressions
    def expr(self, node: ast.AST, top: bool = False) -> Any:
        return self.guarded(node, self._expr, node, top)

    def _expr(self, node: ast.AST, top: bool) -> Any:
        meth = getattr(self, "expr_" + type(node).__name__, None)
        if meth is None:
            raise self.error(f"unsupported expression: {type(node).__name__}", node)
        value = meth(node)
        if isinstance(value, E.Call) and not top:
            self.tmp_counter += 1
            tmp = E.Var(f"_t{self.tmp_counter - 1}", value.type, self.span(node))
            self.emit(St.AssignStmt(tmp, value, self.span(node)))
            return tmp
        return value

    def temp(self, value: E.Call, node: ast.AST) -> E.Var:
        """``value`` bound to a fresh temporary (an intermediate of a multi-op lowering)."""
        self.tmp_counter += 1
        tmp = E.Var(f"_t{self.tmp_counter - 1}", value.type, self.span(node))
        self.emit(St.AssignStmt(tmp, value, self.span(node)))
        return tmp

    def expr_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def expr_Name(self, node: ast.Name) -> Any:
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.loop_locals:
            raise self.error(f"'{node.id}' is assigned only inside a loop body (line {self.loop_locals[node.id]}) and "
                             f"has no value after the loop (Python would keep the last trip's value, or have none "
                             f"when the loop runs no trip); assign '{node.id}' before the loop so the loop carries it",
                             node)
        found, value = self.ns.lookup(node.id)
        if not found:
            raise self.error(f"name '{node.id}' is not defined", node)
        if isinstance(value, DynVar):
            if value.name in self.sig.dyn_vars:
                return self.sig.dyn_vars[value.name]
            raise self.error(f"dynamic dim '{value.name}' is not used by any parameter", node)
        return value

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        if isinstance(base, E.Expr) and node.attr in ("shape", "dtype") and isinstance(base.type, (TensorType, TileType)):
            if node.attr == "dtype":  # jit-era metadata: static dims as ints, dynamic ones as their scalar
                return base.type.dtype
            return tuple(d if static_int(d) is None else static_int(d) for d in base.type.shape)
        if isinstance(base, E.Expr) and node.attr in ("T", "mT"):
            return operators.attribute(self, node, base)
        if isinstance(base, E.Expr):
            raise self.error(f"attribute access '.{node.attr}' on IR values is not supported", node)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.error(f"'{ast.unparse(node.value)}' has no attribute '{node.attr}'", node) from None

    def expr_List(self, node: ast.List) -> list:
        return [self.expr(e) for e in node.elts]

    def expr_Tuple(self, node: ast.Tuple) -> list:
        return [self.expr(e) for e in node.elts]

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        lhs, rhs = self.expr(node.left), self.expr(node.right)
        op = type(node.op).__name__
        if not isinstance(lhs, E.Expr) and not isinstance(rhs, E.Expr):
            return _static_binop(op, lhs, rhs)
        if operators.is_array(lhs) or operators.is_array(rhs):  # x + y on tensors/tiles: the pl op it spells
            return operators.binop(self, node, lhs, rhs)
        builder = E.BINARY_BUILDERS.get(op)
        if builder is None:
            raise self.error(f"operator {op} is not supported on scalars", node)
        return builder(self.to_ir(lhs, node.left), self.to_ir(rhs, node.right), self.span(node))

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.expr(node.operand)
        if not isinstance(v, E.Expr):
            return {"USub": lambda x: -x, "UAdd": lambda x: +x, "Not": lambda x: not x}.get(
                type(node.op).__name__, lambda x: ~x
            )(v)
        if operators.is_array(v):
            return operators.unary(self, node, v)
        if isinstance(node.op, ast.USub):
            return E.neg(v, self.span(node))
        if isinstance(node.op, ast.UAdd):
            return v
        return E.bit_not(v, self.span(node))

    def expr_Compare(self, node: ast.Compare) -> Any:
        if len(node.ops) != 1:
            raise self.error("chained comparisons are not supported", node)
        lhs, rhs = self.expr(node.left), self.expr(node.comparators[0])
        op = type(node.ops[0]).__name__
        if not isinstance(lhs, E.Expr) and not isinstance(rhs, E.Expr):
            return _static_binop(op, lhs, rhs)
        if operators.is_array(lhs) or operators.is_array(rhs):
            return operators.compare(self, node, lhs, rhs)
        builder = E.BINARY_BUILDERS.get(op)
        if builder is None:
            raise self.error(f"comparison {op} is not supported", node)
        return builder(self.to_ir(lhs, node.left), self.to_ir(rhs, node.comparators[0]), self.span(node))

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:
        vals = [self.to_ir(self.expr(v), v) for v in node.values]
        out = vals[0]
        build = E.and_ if isinstance(node.op, ast.And) else E.or_
        for v in vals[1:]:
            out = build(out, v, self.span(node))
        return out

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        if slicing.is_tensor(base):
            return self._tensor_window_load(base, node)
        if slicing.is_tile(base):
            return surface.tile_window(self, node, base)
        idx = self.expr(node.slice)
        if isinstance(base, tasks.TaskArray):
            return tasks.task_array_item(self, base, idx, node)
        if isinstance(getattr(base, "type", None), TupleType):
            if not isinstance(idx, int):
                raise self.error("tuple results are indexed with a constant integer", node.slice)
            if not 0 <= idx < len(base.type.types):
                raise self.error(f"index {idx} out of range for {len(base.type.types)} results", node.slice)
            return E.TupleGetItemExpr(base, idx, self.span(node))
        if isinstance(base, E.Expr):
            raise self.error("subscripts on IR values are not supported", node)
        if isinstance(base, (list, tuple)) and isinstance(idx, E.Expr):
            k = static_int(idx)
            if k is None:
                raise self.error(f"'{ast.unparse(node.value)}' is a Python {type(base).__name__} and is indexed while "
                                 f"the body is parsed, but '{ast.unparse(node.slice)}' is a run-time value (a loop "
                                 "variable, pl.unroll's too); index it with a constant", node.slice, PyptoTypeError)
            idx = k
        return base[idx]

    def _tensor_window_load(self, base: E.Expr, node: ast.Subscript) -> Any:
        offsets, shapes = slicing.window(self, base, node.slice)
        if not self.in_incore:  # orchestration: a view of the window, rank-reduced by scalar indices
            return slicing.view(self, node, base, node.slice, offsets, shapes)
        if base in self.view_valid:  # a window of a view with a valid shape: the load narrows to it
            return surface.load_window(self, node, base, offsets, shapes, None, False, None, None)
        return dispatch.namespace_call(self, node, "block", "load", [base, offsets, shapes], {})

    def _slice_store(self, target: ast.Subscript, value_node: ast.AST, node: ast.AST) -> None:
        """``dst[a:b, c:d] = v``: store the tile ``v`` into that window of the tensor ``dst``."""
        dst = self.expr(target.value)
        if not slicing.is_tensor(dst):
            raise self.error("slice assignment needs a tensor target", target)
        value = self.expr(value_node)  # not top: a nested op call is hoisted into a tile temporary
        offsets, shapes = slicing.window(self, dst, target.slice, whole_dynamic=slicing.is_tensor(value))
        if not self.in_incore:  # orchestration: assemble the tensor into the window, in place
            self.emit(St.EvalStmt(slicing.assemble(self, node, dst, value, offsets, shapes), self.span(node)))
            return
        if slicing.is_tensor(value):  # a tensor-level result (spec §6.1: dst[...] = v is pl.assemble)
            self._region_window_write(node, value_node, dst, value, offsets, shapes)
            return
        if not slicing.is_tile(value):
            raise self.error("the value stored into a tensor window must be a tile", value_node, PyptoTypeError)
        got = [static_int(d) for d in value.type.shape]
        if got != shapes:
            raise self.error(f"value of shape {got} does not fit the window of shape {shapes}", node,
                             PyptoTypeError)
        call = dispatch.namespace_call(self, target, "block", "store", [value, offsets, dst], {})
        self.emit(St.EvalStmt(call, self.span(node)))

    def incore_assemble(self, node: ast.Call, args: list, kwargs: dict) -> E.Expr:
        """``pl.assemble(target, source, offset, atomic=...)`` on a tensor target in InCore code (spec
        pypto-jit §6.4): a tile source is stored into the window (``pl.store``); a tensor-level source is
        written as ``target[window] = source`` is. ``atomic=pl.AtomicType.Add`` adds it into the window
        instead. The result is the target (the same buffer)."""
        names = ("target", "source", "offset")
        if len(args) > 3:
            raise self.error(f"pl.assemble takes 3 positional arguments, {len(args)} given", node, PyptoTypeError)
        bound = dict(zip(names, args, strict=False))
        for k, v in kwargs.items():
            if k not in (*names, "atomic"):
                raise self.error(f"pl.assemble: unexpected keyword argument '{k}'", node, PyptoTypeError)
            if k in bound:
                raise self.error(f"pl.assemble: '{k}' given twice", node, PyptoTypeError)
            bound[k] = v
        missing = [n for n in names if n not in bound]
        if missing:
            raise self.error(f"pl.assemble: missing {', '.join(missing)}", node, PyptoTypeError)
        dst, value, offset = bound["target"], bound["source"], bound["offset"]
        atomic = bound.get("atomic")
        if atomic is not None and not isinstance(atomic, AtomicType):
            raise self.error(f"pl.assemble: atomic= takes a pl.AtomicType, got {atomic!r}", node, PyptoTypeError)
        offsets = list(offset) if isinstance(offset, (list, tuple)) else [offset]
        if slicing.is_tile(value):
            kw = {"atomic": atomic} if atomic is AtomicType.Add else {}
            self.emit(St.EvalStmt(dispatch.namespace_call(self, node, "block", "store", [value, offsets, dst], kw),
                                  self.span(node)))
            return dst
        if not slicing.is_tensor(value):
            raise self.error("pl.assemble: the source must be a tile or a tensor", node, PyptoTypeError)
        shapes = [static_int(d) for d in value.type.shape]
        if None in shapes or len(offsets) != len(shapes):
            raise self.error(f"pl.assemble: a source of static shape and one offset per axis of the target "
                             f"(rank {len(dst.type.shape)}) are needed here", node, PyptoTypeError)
        self._region_window_write(node, node, dst, value, offsets, shapes, atomic)
        return dst

    def _region_window_write(self, node: ast.AST, value_node: ast.AST, dst: E.Expr, value: E.Expr,
                             offsets: list, shapes: list, atomic: Any = None) -> None:
        """``dst[window] = v`` in a ``pl.at`` region, ``v`` a tensor-level result: the region binds ``v``
        to a name of its own (a task output held in DDR, spec §4.1 (b)) and the window is assembled from
        it as the region's last act (emitted right after the region, charged to the region's task). In an
        InCore function, ``out[:, :] = v`` on a whole ``Out``/``InOut`` parameter is ``out = v`` (the
        kernel stores its final value into the caller's tensor)."""
        after = self.__dict__.get("region_after")
        if after is None and atomic is AtomicType.Add:
            raise self.error("an atomic add of a tensor-level value into a tensor is written at the top level of a "
                             "pl.at region; in an InCore function store a tile with pl.store(..., "
                             "atomic=pl.AtomicType.Add)", value_node, PyptoTypeError)
        if after is None and self._whole_output_window(dst, offsets, shapes):
            slicing.assemble(self, node, dst, value, offsets, shapes)  # checks shape and dtype
            last = self.blocks[-1][-1] if self.blocks[-1] else None
            if isinstance(last, St.AssignStmt) and last.var is value:  # the hoisted temporary: name it dst
                self.blocks[-1].pop()
                value = last.value
            self.bind(dst.name, value, node)
            return
        if after is None or len(self.blocks) != after[0]:
            raise self.error("a tensor-level value is written into a tensor window only at the top level of a "
                             "pl.at region; here store a tile (pl.load the operands) or use pl.store", value_node,
                             PyptoTypeError)
        var = E.Var(f"{dst.name}_window_{self.span(node).line}", value.type, self.span(node))
        call = slicing.assemble(self, node, dst, var, offsets, shapes, atomic)  # checks shape and dtype
        self.emit(St.AssignStmt(var, value, self.span(node)))
        after[1].append(St.EvalStmt(call, self.span(node)))
        after[2].append((dst, var))

    def _whole_output_window(self, dst: E.Expr, offsets: list, shapes: list) -> bool:
        """Whether ``dst[offsets:+shapes]`` is all of an Out/InOut tensor parameter, written at the top
        level of an InCore function's body."""
        if self.func_type is not FunctionType.InCore or len(self.blocks) != 1:
            return False
        whole = [static_int(d) for d in dst.type.shape]
        if any(slicing._static(o) != 0 for o in offsets) or shapes != whole:
            return False
        return any(p is dst and d is not ParamDirection.In for p, d in zip(self.sig.params, self.sig.directions,
                                                                            strict=False))

    def expr_Call(self, node: ast.Call) -> Any:
        return dispatch.call(self, node)

    # ------------------------------------------------------------------ conversions
    def to_ir(self, v: Any, node: ast.AST | None = None) -> E.Expr:
        if isinstance(v, E.Expr):
            return v
        if isinstance(v, (bool, int, float)):
            return E.as_expr(v, self.span(node))
        raise self.error(f"expected an IR value, got Python {type(v).__name__}", node, PyptoTypeError)

    def loop_bound(self, helper: str, v: Any, node: ast.AST) -> E.Expr:
        """A start/stop/step of ``pl.range``-like loops: an integer, named in the error when not."""
        e = self.to_ir(v, node)
        t = e.type
        if not isinstance(t, ScalarType) or not (t.dtype.is_int() or t.dtype is DataType.INDEX):
            raise self.error(f"pl.{helper} bounds and step must be integers, got {type_str(t)}", node, PyptoTypeError)
        return e

    def to_index(self, v: Any, node: ast.AST) -> E.Expr:
        e = self.to_ir(v, node)
        t = e.type
        if not isinstance(t, ScalarType) or not (t.dtype.is_int() or t.dtype is DataType.INDEX):
            raise self.error(f"expected an integer, got {type_str(t)}", node, PyptoTypeError)
        return e


def _static_trips(start: E.Expr, stop: E.Expr, step: E.Expr) -> int | None:
    """How many times a loop runs when its bounds are compile-time integers, else None."""
    a, b, c = static_int(start), static_int(stop), static_int(step)
    if None in (a, b, c) or c == 0:
        return None
    return max(0, -(-(b - a) // c)) if c > 0 else max(0, -(-(a - b) // -c))


# Tensor ops whose result is (a view of) an existing buffer, not a newly computed tensor.
_SAME_BUFFER_OPS = {"tensor.assemble", "tensor.view", "tensor.reshape", "tensor.write", "tensor.set_validshape"}


def _used_after(body: St.SeqStmts, var: E.Var, dst: E.Expr) -> bool:
    """Whether a top-level statement of ``body`` after the one binding ``var`` uses ``dst``."""
    stmts = list(body.stmts)
    at = next(i for i, s in enumerate(stmts) if isinstance(s, St.AssignStmt) and s.var is var)
    return any(dst in walk(s) for s in stmts[at + 1:])


def _computes_a_new_tensor(value: E.Expr) -> bool:
    """Whether ``value`` is a tensor computed by a tensor op (or another tensor's value), whose buffer is
    not the one the bound name had: kernel calls and stores return the buffer they wrote."""
    if isinstance(value, E.Var):
        return True
    if not isinstance(value, E.Call) or isinstance(value.op, E.GlobalVar):
        return False
    name = value.op.name
    return name.startswith("tensor.") and name not in _SAME_BUFFER_OPS


def _static_binop(op: str, a: Any, b: Any) -> Any:
    import operator

    table = {
        "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "Div": operator.truediv,
        "FloorDiv": operator.floordiv, "Mod": operator.mod, "Pow": operator.pow, "Eq": operator.eq,
        "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge,
        "BitAnd": operator.and_, "BitOr": operator.or_, "BitXor": operator.xor, "LShift": operator.lshift,
        "RShift": operator.rshift,
    }
    return table[op](a, b)
