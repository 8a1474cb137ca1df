"""Call resolution for the DSL parser (spec §4.1): ``self.f(...)``, ``pl.<op>``, ``pl.<ns>.<op>``,
external ``@pl.function`` objects, ``@pl.inline`` helpers and static Python calls."""

from __future__ import annotations

import ast
import inspect
from typing import Any

from pypto.dtype import DataType
from pypto.enums import AtomicType, FunctionType
from pypto.errors import PyptoTypeError, as_written
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.stmt import Function
from pypto.ir.types import ScalarType, TensorType, TileType, TupleType, UnknownType, static_int, type_str
from pypto.language import scalar_cast, spmd, surface, tasks
from pypto.language.source import InlineFunction, Namespace, SourceInfo, is_pl_module
from pypto.language.typing import dynamic
from pypto.lib import ops as LIB
from pypto.ops import block as B
from pypto.ops import get_op, is_op_registered
from pypto.ops import system as SY
from pypto.ops import tensor as T

TENSOR_ONLY = {"create_tensor", "dim", "assemble", "add_scalar", "sub_scalar", "mul_scalar", "div_scalar", "read"}
# the tile-scalar spellings (block-only names) and the op they are on tensors
TILE_SCALAR_OPS = {"adds": "add", "subs": "sub", "muls": "mul", "divs": "div"}
BLOCK_ONLY = {
    "load", "store", "move", "neg", "sqrt", "rsqrt", "recip", "log", "relu", "abs", "matmul_acc", "matmul_bias",
    "gemv", "gemv_acc", "gemv_bias", "minimum", "cmp", "cmps", "adds", "subs", "muls", "divs", "sum", "row_min",
    "row_expand", "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div", "col_expand",
    "col_expand_mul", "col_expand_div", "col_expand_sub", "expands", "create_tile", "full", "fillpad",
    "get_block_idx", "get_block_num", "get_subblock_idx", "rem", "rems", "and_", "ands", "or_", "ors", "xor", "xors", "shl", "shls", "shr", "shrs",
    "maxs", "mins", "prelu", "not_", "addc", "subc", "addsc", "subsc", "lrelu", "sel", "sels", "create",
}
SCALAR_OF = {"add": "adds", "sub": "subs", "mul": "muls", "div": "divs", "maximum": "maxs", "minimum": "mins"}
HELPERS_ONLY_IN_STATEMENTS = {"range", "parallel", "pipeline", "unroll", "while_", "yield_", "cond", "incore",
                              "auto_incore", "at", "spmd", "cluster"}


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return list(reversed(parts))
    return None


def call(p: Any, node: ast.Call) -> Any:
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" and "self" not in p.env:
        return program_call(p, node, f.attr)
    path = _dotted(f)
    if path and len(path) >= 2 and path[0] not in p.env:
        found, root = p.ns.lookup(path[0])
        if found and is_pl_module(root) and path[1:] in (["submit"], ["spmd_submit"]):
            return tasks.submit(p, node, call, spmd.predicate, spmd=path[1] == "spmd_submit")
        if found and is_pl_module(root) and surface.claims(path):
            ns = path[1] if len(path) == 3 else ""
            args, kwargs = _args(p, node)
            handle = surface.handler(ns, path[-1], args, kwargs, getattr(p, "view_valid", {}))
            if handle is not None:
                return handle(p, node, args, kwargs)
            return _pl_or_namespace(p, node, path, root, args, kwargs)
        if found and is_pl_module(root):
            if len(path) == 2:
                return pl_call(p, node, path[1], root)
            if len(path) == 3 and path[1] in ("block", "tile", "tensor", "system"):
                return namespace_call(p, node, "block" if path[1] == "tile" else path[1], path[2])
    callee = p.expr(f)
    specialize = getattr(callee, "pypto_specialize", None)
    if specialize is not None and getattr(callee, "kind", None) != "inline":
        fn, args = specialize(p, node)  # a @pl.jit.incore callee, specialized to this call site
        return external_call(p, node, fn, args)
    if isinstance(callee, Function):
        return external_call(p, node, callee)
    if isinstance(callee, InlineFunction):
        return inline_call(p, node, callee)
    args = [p.expr(a) for a in node.args]
    kwargs = {k.arg: p.expr(k.value) for k in node.keywords}
    if callable(callee) and not any(isinstance(v, E.Expr) for v in [*args, *kwargs.values()]):
        return callee(*args, **kwargs)
    raise p.error(f"'{ast.unparse(f)}' is not a PyPTO op or function", f)


def _pl_or_namespace(p: Any, node: ast.Call, path: list, root: Any, args: list, kwargs: dict) -> Any:
    if len(path) == 2:
        return pl_call(p, node, path[1], root, args, kwargs)
    return namespace_call(p, node, "block" if path[1] == "tile" else path[1], path[2], args, kwargs)


def _args(p: Any, node: ast.Call) -> tuple[list, dict]:
    args = [p.expr(a) for a in node.args]
    kwargs = {}
    for k in node.keywords:
        if k.arg is None:
            raise p.error("**kwargs are not supported in op calls", k)
        kwargs[k.arg] = p.expr(k.value)
    return args, kwargs


def refuse_valid_shape_views(p: Any, node: ast.Call, what: str, args: list) -> None:
    """A view made with ``pl.slice(..., valid_shape=)`` in orchestration keeps its valid region for the
    loads of its windows only; any other use would read the whole window, so it says so instead."""
    views = getattr(p, "view_valid", {})
    for a in args:
        if isinstance(a, E.Var) and a in views:
            raise p.error(f"{what}: '{a.name}' is a view with a valid_shape; only loads of its windows in a pl.at "
                          "region (pl.load, pl.slice, subscripts) honour it. Load it, or slice without valid_shape",
                          node, PyptoTypeError)


def invoke(p: Any, node: ast.Call, qual: str, fn: Any, args: list, kwargs: dict) -> Any:
    refuse_valid_shape_views(p, node, qual, [*args, *kwargs.values()])
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        module = getattr(fn, "__module__", "").rsplit(".", 1)[-1]
        op = f"{module}.{fn.__name__.rstrip('_')}"
        if is_op_registered(op) and not kwargs:
            d = get_op(op)
            lo = d.min_args if d.min_args is not None else len(d.arguments)
            want = str(lo) if lo == len(d.arguments) else f"{lo} to {len(d.arguments)}"
            raise PyptoTypeError(
                f"{qual} takes {want} argument(s) ({', '.join(d.arguments)}), got {len(args)}", p.span(node)
            ) from None
        raise PyptoTypeError(f"{qual}: {e}", p.span(node)) from None
    return fn(*args, **kwargs, span=p.span(node))


def _builder(module: Any, name: str) -> Any:
    fn = getattr(module, name, None)
    if fn is None or not callable(fn) or name.startswith("_"):
        fn = getattr(module, name + "_", None)
    return fn if callable(fn) else None


def _kind(v: Any) -> str:
    t = getattr(v, "type", None)
    if isinstance(t, TileType):
        return "tile"
    if isinstance(t, TensorType):
        return "tensor"
    if isinstance(t, ScalarType) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
        return "scalar"
    return "other"


def pl_call(p: Any, node: ast.Call, name: str, pl: Any, args: list | None = None, kwargs: dict | None = None) -> Any:
    """``pl.<name>(...)``; ``pl`` is the ``pypto.language`` module the user's code refers to."""
    if name in HELPERS_ONLY_IN_STATEMENTS:
        loops = ("range", "parallel", "pipeline", "unroll", "while_")
        where = "as a for-loop iterator" if name in loops else "as a statement"
        raise p.error(f"pl.{name} can only be used {where}", node)
    if args is None:
        args, kwargs = _args(p, node)
    kwargs = kwargs if kwargs is not None else {}
    if name in _PARSE_TIME:
        return _PARSE_TIME[name](p, node, args, kwargs)
    if name == "dynamic":
        return dynamic(*args)
    first = _kind(args[0]) if args else "other"
    _refuse_tile_tensor_mix(p, node, name, args)
    refuse_implicit_promotion(p, node, name, args)
    if name in ("cast", "min", "max") and first == "scalar":
        if name == "cast":
            mode = args[2] if len(args) > 2 else kwargs.get("mode", "round")
            target = args[1] if len(args) > 1 else kwargs["target_type"]
            return scalar_cast.cast(p.to_ir(args[0], node), target, B.round_mode_code(mode, p.span(node)),
                                    p.span(node))
        builder = E.min_ if name == "min" else E.max_
        return builder(p.to_ir(args[0], node), p.to_ir(args[1], node), p.span(node))
    if first == "tensor" and name in LIB.BUILDERS:  # the tensor-level library (pypto.lib)
        return invoke(p, node, f"pl.{name}", LIB.BUILDERS[name], args, kwargs)
    if first == "tensor" and name in TILE_SCALAR_OPS:  # pl.muls(tensor, 0.5) is pl.mul(tensor, 0.5)
        return namespace_call(p, node, "tensor", TILE_SCALAR_OPS[name], args, kwargs)
    if name == "assemble" and first == "tensor":
        return assemble(p, node, args, kwargs)
    if name in TENSOR_ONLY or (name not in BLOCK_ONLY and first == "tensor"):
        return namespace_call(p, node, "tensor", "create" if name == "create_tensor" else name, args, kwargs)
    if name in BLOCK_ONLY or first == "tile":
        return _block_call(p, node, name, args, kwargs)
    if name in ("bar_v", "bar_m", "bar_all", "sync_src", "sync_dst"):
        return namespace_call(p, node, "system", name, args, kwargs)
    if not hasattr(pl, name) and _builder(B, name) is None and _builder(T, name) is None:
        raise p.error(f"unknown op 'pl.{name}'", node.func)
    got = type_str(args[0].type) if args and hasattr(args[0], "type") else (type(args[0]).__name__ if args else "none")
    raise p.error(f"pl.{name}: cannot dispatch on a first argument of type {got}", node, PyptoTypeError)


_MATMUL_ACC_PARAMS = ("acc", "a", "b", "a_trans", "b_trans", "init_cond")


def matmul_acc(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.matmul_acc(acc, a, b, a_trans=False, b_trans=False, init_cond=None)`` (spec pypto-jit §8):
    ``acc + a @ b``, and ``a @ b`` alone where ``init_cond`` holds (the ``k == 0`` step of a split-K
    loop, whose ``acc`` holds nothing yet). On tiles that is the cube accumulating in Acc (or starting
    afresh: ``block.matmul``); on tensors the product taken in ``acc``'s dtype added to ``acc``. A
    condition known while parsing (a literal, a ``pl.unroll`` index) picks one of the two; a run-time
    one (a loop variable) becomes an if that runs one of them."""
    if len(args) > len(_MATMUL_ACC_PARAMS):
        raise p.error(f"pl.matmul_acc takes at most {len(_MATMUL_ACC_PARAMS)} arguments, {len(args)} given", node,
                      PyptoTypeError)
    bound = dict(zip(_MATMUL_ACC_PARAMS, args, strict=False))
    for k, v in kwargs.items():
        if k not in _MATMUL_ACC_PARAMS or k in bound:
            what = "unexpected keyword argument" if k not in _MATMUL_ACC_PARAMS else "argument given twice:"
            raise p.error(f"pl.matmul_acc: {what} '{k}'", node, PyptoTypeError)
        bound[k] = v
    missing = [n for n in _MATMUL_ACC_PARAMS[:3] if n not in bound]
    if missing:
        raise p.error(f"pl.matmul_acc: missing {', '.join(missing)}", node, PyptoTypeError)
    acc, a, b, cond = bound["acc"], bound["a"], bound["b"], bound.get("init_cond")
    trans = {k: bound[k] for k in ("a_trans", "b_trans") if bound.get(k)}
    tensors = _kind(acc) == "tensor"

    def accumulate() -> E.Expr:
        if tensors:
            product = T.matmul(a, b, out_dtype=acc.type.dtype, **trans, span=p.span(node))
            return T.add(acc, p.temp(product, node), span=p.span(node))
        return namespace_call(p, node, "block", "matmul_acc", [acc, a, b], trans)

    def start() -> E.Expr:
        if tensors:
            return T.matmul(a, b, out_dtype=acc.type.dtype, **trans, span=p.span(node))
        return namespace_call(p, node, "block", "matmul", [a, b], trans)

    if cond is None or isinstance(cond, bool) or (isinstance(cond, E.Expr) and static_int(cond) is not None):
        first = cond if not isinstance(cond, E.Expr) else bool(static_int(cond))
        return start() if first else accumulate()
    if tensors:
        raise p.error("pl.matmul_acc: init_cond is a run-time value here, and tensor-level ops run only outside the "
                      "loops and ifs of an InCore body; give tile operands (pl.load(..., target_memory=pl.Mem.Mat) "
                      "moved to Left/Right, acc a tile in Acc), or pick the first step where it is known", node)
    cond = p.to_ir(cond, node)
    if not isinstance(cond.type, ScalarType):
        raise p.error(f"pl.matmul_acc: init_cond must be a scalar condition, got {type_str(cond.type)}", node,
                      PyptoTypeError)
    # both branches bind one name, as a name assigned in both branches of a Python if is merged after it
    span = p.span(node)
    p.tmp_counter += 1
    name = f"_t{p.tmp_counter - 1}"
    branches, result = [], None
    for build in (start, accumulate):
        p.blocks.append([])
        value = build()
        result = E.Var(name, value.type, span)
        p.emit(St.AssignStmt(result, value, span))
        branches.append(St.SeqStmts(tuple(p.blocks.pop()), span))
    p.emit(St.IfStmt(cond, branches[0], branches[1], (), span))
    return result


def _block_call(p: Any, node: ast.Call, name: str, args: list, kwargs: dict) -> Any:
    """A tile-level op. ``pl.matmul(left, right, out_dtype=D)`` on tiles: the result lands in Acc as FP32
    (INT32 for integer inputs), so an ``out_dtype`` that already says so is accepted and any other is an
    error (pypto-jit §8: a keyword only the other level takes raises, "except an out_dtype that already
    matches"). ``pl.matmul_acc`` comes here on tiles and on tensors alike (:func:`matmul_acc`)."""
    if name == "matmul_acc":
        return matmul_acc(p, node, args, kwargs)
    if name != "matmul" or "out_dtype" not in kwargs:
        return namespace_call(p, node, "block", name, args, kwargs)
    rest = {k: v for k, v in kwargs.items() if k != "out_dtype"}
    call = namespace_call(p, node, "block", "matmul", args, rest)
    want, got = kwargs["out_dtype"], call.type.dtype
    if want is not None and want is not got:
        raise p.error(f"pl.matmul: out_dtype={getattr(want, 'name', want)} with tile operands: a tile matmul "
                      f"gives {got.name} in Acc; convert the result with pl.cast", node, PyptoTypeError)
    return call


# Ops whose operands are all tiles or all tensors (a store, a load or an assemble takes one of each).
_SAME_LEVEL_OPS = frozenset({
    "add", "sub", "mul", "div", "maximum", "minimum", "matmul", "matmul_acc", "concat",
    "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div",
    "col_expand_add", "col_expand_sub", "col_expand_mul", "col_expand_div",
})


# Element-wise ops of two shaped operands: in @pl.jit code their dtypes must agree (no implicit promotion).
_SAME_DTYPE_OPS = frozenset({
    "add", "sub", "mul", "div", "maximum", "minimum", "rem", "and_", "or_", "xor", "prelu",
    "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div",
    "col_expand_add", "col_expand_sub", "col_expand_mul", "col_expand_div",
})


def refuse_implicit_promotion(p: Any, node: ast.Call, name: str, args: list) -> None:
    """In @pl.jit code an element-wise op of two tensors or tiles of different dtypes is an error at the
    user's line naming both dtypes and the fix: spec pypto-jit §3 says "no implicit promotion anywhere:
    mixing dtypes needs pl.cast". The seed surface (@pl.program) promotes (pypto-language §2.1) and
    keeps doing so."""
    if not p.fold_metadata or name not in _SAME_DTYPE_OPS:
        return
    shaped = [a.type for a in args[:2] if isinstance(getattr(a, "type", None), (TensorType, TileType))]
    if len(shaped) == 2 and shaped[0].dtype is not shaped[1].dtype:
        a, b = (t.dtype.name for t in shaped)
        raise p.error(
            f"pl.{name}: operands are {a} and {b}; @pl.jit code does not promote implicitly: cast one first, "
            f"e.g. pl.{name}(x, pl.cast(y, pl.{a}))", node, PyptoTypeError)


def _refuse_tile_tensor_mix(p: Any, node: ast.Call, name: str, args: list) -> None:
    """A binary op given a tile and a tensor (in InCore code ``x[...]`` and pl.slice load tiles, while a
    parameter or a view taken outside the region is a tensor) says so, instead of failing inside one
    level's op with "must be a Scalar, got Tile"."""
    if name not in _SAME_LEVEL_OPS:
        return
    kinds = [_kind(a) for a in args]
    if "tile" in kinds and "tensor" in kinds:
        tile, tensor = kinds.index("tile") + 1, kinds.index("tensor") + 1
        raise p.error(
            f"pl.{name}: operand {tile} is a tile and operand {tensor} a tensor; one op works on one level. In "
            f"InCore code `x[...]`, pl.slice and pl.load give tiles: take the window as a view outside the pl.at "
            f"region to keep it a tensor, or pl.load the tensor operand too", node, PyptoTypeError)


def assemble(p: Any, node: ast.Call, args: list, kwargs: dict) -> Any:
    """``pl.assemble`` into a tensor: in InCore code a write into its window (atomic if asked); in
    orchestration the host's in-place assemble, which takes no ``atomic=`` (spec pypto-jit §6.4)."""
    if p.in_incore:
        return p.incore_assemble(node, args, kwargs)
    if kwargs.get("atomic") not in (None, AtomicType.None_):
        raise p.error("pl.assemble(..., atomic=...) adds into a tensor from InCore code (a pl.at region or an InCore "
                      "function); orchestration code writes a window with a plain assemble", node, PyptoTypeError)
    return namespace_call(p, node, "tensor", "assemble", args, kwargs)


def namespace_call(p: Any, node: ast.Call, ns: str, name: str, args: list | None = None, kwargs: dict | None = None) -> Any:
    if args is None:
        args, kwargs = _args(p, node)
    module = {"block": B, "tensor": T, "system": SY}[ns]
    refuse_implicit_promotion(p, node, name, args)
    if ns == "block" and name in SCALAR_OF and len(args) > 1 and _kind(args[1]) == "scalar":
        name = SCALAR_OF[name]
    if ns == "block" and name in ("min", "max", "sum") and len(args) > 1 and _kind(args[1]) == "tile":
        name = {"min": "minimum", "max": "maximum"}.get(name, name)
    fn = _builder(module, name)
    if ns == "tensor" and name in LIB.BUILDERS:
        fn = LIB.BUILDERS[name]
    if fn is None and ns == "block" and name in LIB.BUILDERS:
        raise p.error(
            f"pl.{name} is a tensor-level op but its operand is a tile (in InCore code `x[...]`, pl.slice and "
            f"pl.load give tiles); apply it to a tensor: a parameter, or a view taken outside the pl.at region",
            node.func, PyptoTypeError)
    if fn is None:
        raise p.error(f"unknown op 'pl.{ns + '.' if ns != 'block' or _explicit(node) else ''}{name}'", node.func)
    try:
        return invoke(p, node, f"pl.{name}", fn, args, kwargs or {})
    except PyptoTypeError as e:  # pl.load on a tensor, a subscript: name what the user wrote, not block.load
        if ns != "block":
            raise
        raise as_written(e, f"block.{name}", _spelled(node, name)) from None


def _spelled(node: ast.AST, name: str) -> str:
    """How the user wrote the tile op ``name``: the call (``pl.load``, ``pl.tile.load``), else the
    expression that stands for it (a subscript ``x[0:8, :]`` that loads a window, ``a + b``)."""
    if isinstance(node, ast.Call):
        return ast.unparse(node.func)
    if isinstance(node, ast.expr):
        return f"'{ast.unparse(node)}'"
    return f"pl.{name}"


def _explicit(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Attribute)


def _static_value(v: Any) -> Any:
    """``v`` as a Python value when it is known while parsing (a folded number, a constant expression)."""
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (E.ConstInt, E.ConstFloat, E.ConstBool)):
        return v.value
    n = E.static_int(v) if isinstance(v, E.Expr) else None
    return n if n is not None else v


def static_print(p: Any, node: ast.Call, args: list, kwargs: dict) -> None:
    """``pl.static_print(...)`` prints while the body is parsed (spec pypto-jit §1.1)."""
    text = " ".join(str(_static_value(a)) for a in args)
    print(f"{p.span(node).filename}:{p.span(node).line}: {text}")


def static_assert(p: Any, node: ast.Call, args: list, kwargs: dict) -> None:
    """``pl.static_assert(cond, "message")`` runs while the body is parsed
    (spec pypto-jit §1.1): the condition must be known then, and a false one is an error at its line."""
    if kwargs or not 1 <= len(args) <= 2 or (len(args) == 2 and not isinstance(args[1], str)):
        raise p.error('pl.static_assert(condition, "message") takes a condition and a string literal', node)
    cond = _static_value(args[0])
    if isinstance(cond, E.Expr):
        raise p.error("pl.static_assert needs a condition known while parsing (shapes, constants, jit "
                      "specialization values), not a run-time value", node.args[0], PyptoTypeError)
    if not cond:
        raise p.error(f"static assertion failed: {args[1] if len(args) == 2 else ast.unparse(node.args[0])}", node)


def const(p: Any, node: ast.Call, args: list, kwargs: dict) -> E.Expr:
    if len(args) != 2 or not isinstance(args[1], DataType):
        raise p.error("pl.const(value, dtype) takes a literal and a dtype", node)
    value, dtype = args
    if dtype.is_float():
        return E.ConstFloat(float(value), dtype, p.span(node))
    if dtype is DataType.BOOL:
        return E.ConstBool(bool(value), p.span(node))
    if not isinstance(value, int):
        raise p.error(f"pl.const: {dtype.name} needs an integer literal, got {value!r}", node)
    return E.ConstInt(value, dtype, p.span(node))


# pl.<name> calls evaluated while the body is parsed
_PARSE_TIME = {"const": const, "static_assert": static_assert, "static_print": static_print}


def _call_type(rets: tuple) -> Any:
    if len(rets) == 1:
        return rets[0]
    if not rets:
        return UnknownType()
    return TupleType(tuple(rets))


def _check_args(p: Any, node: ast.Call, name: str, params: list, args: list) -> None:
    if len(args) != len(params):
        raise p.error(f"{name}() takes {len(params)} argument(s), got {len(args)}", node, PyptoTypeError)
    for prm, a, an in zip(params, args, node.args, strict=False):
        if type(prm.type) is not type(a.type):
            raise p.error(
                f"{name}(): argument '{prm.name}' expects {type_str(prm.type)}, got {type_str(a.type)}",
                an,
                PyptoTypeError,
            )


def program_call(p: Any, node: ast.Call, name: str) -> E.Call:
    if p.program is None:
        raise p.error("self.<function>(...) calls are only allowed inside a @pl.program class", node)
    if name not in p.program.signatures:
        raise p.error(f"the program has no function '{name}'", node.func)
    if node.keywords:
        raise p.error(f"self.{name}(...) takes positional arguments only", node, PyptoTypeError)
    gv, sig = p.program.signatures[name]
    args = [p.to_ir(p.expr(a), a) for a in node.args]
    _check_args(p, node, name, sig.params, args)
    call = E.Call(gv, tuple(args), {}, _call_type(sig.return_types), p.span(node))
    if p.program.kinds.get(name) is FunctionType.InCore:
        tasks.kernel_call_task(p, node, call, list(sig.directions))
    return call


def external_call(p: Any, node: ast.Call, fn: Function, args: list | None = None) -> E.Call:
    refuse_valid_shape_views(p, node, f"{fn.name}(...)", args or [])
    if p.program is None:
        raise p.error("calling another function is only allowed inside a @pl.program class", node)
    ext = p.program.externals
    if fn.name in p.program.signatures:
        raise p.error(f"external function '{fn.name}' clashes with a method of the program", node.func)
    if fn.name in ext and ext[fn.name][1] is not fn:
        raise p.error(f"two different external functions are named '{fn.name}'", node.func)
    gv = ext[fn.name][0] if fn.name in ext else E.GlobalVar(fn.name)
    ext[fn.name] = (gv, fn)
    if args is None:
        args = [p.to_ir(p.expr(a), a) for a in node.args]
    _check_args(p, node, fn.name, list(fn.params), args)
    call = E.Call(gv, tuple(args), {}, _call_type(fn.return_types), p.span(node))
    if fn.type is FunctionType.InCore:
        tasks.kernel_call_task(p, node, call, list(fn.param_directions))
    return call


def inline_call(p: Any, node: ast.Call, fn: Any) -> Any:
    src = SourceInfo(fn.pyfunc)
    params = [a.arg for a in src.node.args.args]
    args = [p.expr(a) for a in node.args]
    if node.keywords:
        raise p.error(f"inline function '{fn.pyfunc.__name__}' takes positional arguments only, got keyword "
                      f"'{node.keywords[0].arg}'", node)
    if len(args) != len(params):
        raise p.error(f"inline function '{fn.pyfunc.__name__}' takes {len(params)} positional argument(s) "
                      f"({', '.join(params)}), {len(args)} given", node)
    saved = (p.src, p.ns, p.env)
    p.src, p.ns = src, Namespace(fn.pyfunc, fn.frames)
    p.env = dict(zip(params, args, strict=False))
    result: Any = None
    try:
        for s in p._body_statements(src.node.body):
            if isinstance(s, ast.Return):
                if s.value is None:
                    result = None
                elif isinstance(s.value, ast.Tuple):
                    elems = [p.to_ir(p.expr(v), v) for v in s.value.elts]
                    result = E.MakeTuple(tuple(elems), p.span(s))
                else:
                    result = p.expr(s.value)
                break
            p.guarded(s, p.stmt, s)
    finally:
        p.src, p.ns, p.env = saved
    return result
