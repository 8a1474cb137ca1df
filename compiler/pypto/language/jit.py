"""``@pl.jit`` and its variants: functions called directly with arrays (spec pypto-jit §2).

A call binds the arguments like Python, reads each array's shape and dtype, and looks the signature up
in the function's cache. On a miss the function is specialized: its parameters get the argument's
types, Python scalars become constants of the body, and the body is parsed by the ordinary DSL parser
as the Orchestration entry of a program. ``@pl.jit.incore`` functions it calls become InCore
functions of that program, specialized to the call site's argument types; ``@pl.jit.inline``
functions are spliced in as ``@pl.inline`` helpers are. The program is compiled once by the existing
pass pipeline and run through :mod:`pypto.runtime` on the caller's arrays, in place.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import inspect
import sys
from typing import Any

import numpy as np

from pypto.dtype import DataType, from_numpy
from pypto.enums import FunctionType, ParamDirection, ScopeKind
from pypto.errors import ParseError, PyptoTypeError, Span
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.printer import python_print
from pypto.ir.types import ScalarType, TensorType, type_str
from pypto.ir.visitor import walk, walk_stmts
from pypto.language.parser import FunctionParser, ProgramContext, Signature, _eval_annotation
from pypto.language.source import InlineFunction, Namespace, SourceInfo
from pypto.language.typing import DirectionAnnotation, DynVar, ScalarAnnotation, ShapedAnnotation
from pypto.ops import isa
from pypto.passes.outline_tensor_ops import is_compute_op
from pypto.runtime.arrays import as_numpy
from pypto.runtime.compiled import CompiledJit
from pypto.runtime.config import RunConfig

ENTRY, INCORE, INLINE, OPAQUE, HOST, EXTERN = "entry", "incore", "inline", "opaque", "host", "extern"


class _Runtime:
    """``pl.RUNTIME`` (spec pypto-jit §2.6): a scalar parameter given it (``compile(..., n=pl.RUNTIME)``) or
    defaulting to it stays a run-time parameter of the compiled program, out of the cache key; a call
    passes its value. It is a compile-time marker: a call with it as an argument is a TypeError."""

    def __repr__(self) -> str:
        return "pl.RUNTIME"


RUNTIME = _Runtime()


def _frames(depth: int, count: int = 4) -> list[dict]:
    out, frame = [], sys._getframe(depth + 1)
    while frame is not None and len(out) < count and frame.f_code.co_name != "<module>":
        out.append(dict(frame.f_locals))
        frame = frame.f_back
    return out


def _source_hash(pyfunc: Any) -> str:
    try:
        return hashlib.sha1(inspect.getsource(pyfunc).encode()).hexdigest()
    except (OSError, TypeError):
        return ""


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class LoweredProgram(St.Program):
    """What ``lower()`` returns (spec §2.6): the post-pass program, which upstream examples print with
    ``as_python()`` and inspect through ``functions`` / ``fn.name`` / ``fn.func_type``."""

    def as_python(self, prefix: str = "pl") -> str:
        """The program as DSL source text (the printer of the pass dumps)."""
        return python_print(self, prefix)


class JITFunction(InlineFunction):
    """A ``@pl.jit``-family function; ``InlineFunction`` so that inline calls reuse the parser's splice."""

    def __init__(self, pyfunc: Any, kind: str, frames: list[dict], options: dict):
        super().__init__(pyfunc, frames)
        functools.update_wrapper(self, pyfunc)
        self.kind = kind
        self.options = options
        self._cache: dict = {}
        self._returned_outs: tuple = ()  # per returned value, the Out parameter it names (or None)
        self._runtime: set = set()  # the pl.RUNTIME scalar parameters of the signature being compiled

    # ------------------------------------------------------------------ entry calls
    def _bind(self, args: tuple, kwargs: dict) -> inspect.BoundArguments:
        try:
            bound = inspect.signature(self.pyfunc).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"@pl.jit function '{self.__name__}': {e}") from None
        bound.apply_defaults()
        return bound

    def _refuse(self) -> None:
        where = f"{inspect.getsourcefile(self.pyfunc)}:{self.pyfunc.__code__.co_firstlineno}"
        if self.kind == EXTERN:
            raise NotImplementedError(
                f"@pl.jit.extern function '{self.__name__}' ({where}) is an external device kernel written in "
                "C++; external kernels are not supported by the emulator"
            )
        if self.kind == HOST:
            raise NotImplementedError(
                f"@pl.jit.host function '{self.__name__}' ({where}) is a multi-card entry; multi-card "
                "distribution is not supported by the emulator"
            )
        if self.kind != ENTRY:
            raise TypeError(f"@pl.jit.{self.kind} function '{self.__name__}' is called from a @pl.jit entry, "
                            "not from Python")

    def compile(self, *args: Any, config: RunConfig | None = None, **kwargs: Any) -> CompiledJit:
        """The cached compiled program for these arguments' shapes, dtypes and scalar values."""
        self._refuse()
        config = config if config is not None else RunConfig()
        args, kwargs = self._signature_mode(args, kwargs)
        bound = self._bind(args, kwargs)
        key, tensors, consts = self._classify(bound)
        key = (key, config.cache_key())
        if key not in self._cache:
            with isa.targeting(config.machine):  # parsing deduces types with the platform's dtypes (a5: bf16 add)
                program = self._specialize(tensors, consts)
            compiled = CompiledJit(program, config.strategy, config.machine, entry=self.__name__)
            compiled.returned_outs = self._returned_outs
            compiled.signature = tuple((n, "tensor" if n in tensors else "const" if n in consts else "runtime")
                                       for n in bound.arguments)
            compiled.constants = dict(consts)
            self._cache[key] = compiled
        return self._cache[key]

    def lower(self, *args: Any, config: RunConfig | None = None, **kwargs: Any) -> LoweredProgram:
        """The post-pass program for these arguments (no cache, no run), printable with ``as_python()``."""
        self._refuse()
        args, kwargs = self._signature_mode(args, kwargs)
        bound = self._bind(args, kwargs)
        _, tensors, consts = self._classify(bound)
        config = config or RunConfig()
        with isa.targeting(config.machine):
            specialized = self._specialize(tensors, consts)
        program = CompiledJit(specialized, config.strategy, config.machine, entry=self.__name__).compiled.program
        return LoweredProgram(program.functions_list, program.name, program.span, program.global_vars)

    def __call__(self, *args: Any, config: RunConfig | None = None, **kwargs: Any) -> None:
        """Run on the given arrays in place (torch CPU tensors or NumPy arrays); returns None."""
        config = config if config is not None else RunConfig()
        try:
            given = inspect.signature(self.pyfunc).bind_partial(*args, **kwargs).arguments
        except TypeError as e:  # an unexpected or repeated argument: named as _bind names the others
            raise TypeError(f"@pl.jit function '{self.__name__}': {e}") from None
        marked = [name for name, value in given.items() if value is RUNTIME]
        if marked:
            raise TypeError(f"@pl.jit function '{self.__name__}': pl.RUNTIME is a compile-time marker "
                            f"(fn.compile(..., {marked[0]}=pl.RUNTIME)); a call passes the value of '{marked[0]}'")
        compiled = self.compile(*args, config=config, **kwargs)
        bound = self._bind(args, kwargs)
        compiled.call_in_place([bound.arguments[name] for name in compiled.tensor_params], config,
                               {name: bound.arguments[name] for name in compiled.scalar_params})
        self.last_result = compiled.last_result

    def _signature_mode(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """``compile()`` / ``lower()`` with no positional argument and no tensor keyword (spec pypto-jit
        §2.6, signature mode): every tensor parameter's shape and dtype come from its annotation (a
        stand-in array of that type is bound; a dynamic dimension gets extent 1, which the cache key
        leaves out), scalars from keywords or defaults. A bare ``pl.Tensor`` parameter is a TypeError."""
        if args or any(not isinstance(v, (bool, int, float)) and v is not RUNTIME for v in kwargs.values()):
            return args, kwargs
        src = SourceInfo(self.pyfunc)
        env = Namespace(self.pyfunc, self.frames).as_dict()
        filled = dict(kwargs)
        for a in src.node.args.args:
            ann = _eval_annotation(a.annotation, env, src) if a.annotation is not None else None
            ann = ann.inner if isinstance(ann, DirectionAnnotation) else ann
            if a.arg in filled or isinstance(ann, (ScalarAnnotation, DataType)):
                continue
            if not isinstance(ann, ShapedAnnotation) or ann.dtype is None or not ann.shape:
                raise TypeError(f"@pl.jit function '{self.__name__}': compile() without arguments takes shapes from "
                                f"the annotations, but parameter '{a.arg}' is not fully annotated "
                                "(pl.Tensor[[dims...], dtype]); pass arrays instead")
            shape = [1 if isinstance(d, DynVar) else int(d) for d in ann.shape]
            filled[a.arg] = np.zeros(shape, ann.dtype.numpy)
        return (), filled

    def _classify(self, bound: inspect.BoundArguments) -> tuple[tuple, dict, dict]:
        tensors: dict = {}
        consts: dict = {}
        key: list = [_source_hash(self.pyfunc)]
        defaults = {n: p.default for n, p in inspect.signature(self.pyfunc).parameters.items()}
        self._runtime = set()
        for name, value in bound.arguments.items():
            if value is RUNTIME or defaults.get(name) is RUNTIME:  # a run-time scalar: not in the key
                self._runtime.add(name)
                key.append((name, "runtime"))
                continue
            if isinstance(value, (bool, int, float, np.integer, np.floating)):
                consts[name] = value.item() if isinstance(value, np.generic) else value
                key.append((name, type(consts[name]).__name__, consts[name]))
                continue
            try:
                arr, _ = as_numpy(value)
            except TypeError:
                raise TypeError(f"@pl.jit function '{self.__name__}': argument '{name}' is a "
                                f"{type(value).__name__}; pass a NumPy array, a torch tensor or a Python "
                                "int/float/bool") from None
            try:
                dtype = from_numpy(arr.dtype)
            except ValueError:
                # spec §2.4: a dtype outside the table (float64, complex, ...) is a TypeError
                raise TypeError(f"@pl.jit function '{self.__name__}': argument '{name}' has unsupported dtype "
                                f"{arr.dtype} (PyPTO has no {arr.dtype} type; cast it, e.g. to float32, "
                                "before the call)") from None
            tensors[name] = (tuple(int(d) for d in arr.shape), dtype)
            dyn = self._dynamic_axes().get(name, {})
            if any(axis >= arr.ndim for axis in dyn):
                raise TypeError(f"@pl.jit function '{self.__name__}': argument '{name}' has rank {arr.ndim}, but "
                                f"its dynamic dims name axis {max(dyn)}")
            # a dynamic extent is not part of the key: a new extent reuses the compiled program
            shape_key = tuple(None if axis in dyn else d for axis, d in enumerate(tensors[name][0]))
            key.append((name, shape_key, dtype.name))
        return tuple(key), tensors, consts

    def _dynamic_axes(self) -> dict[str, dict[int, str]]:
        """param -> {axis: dynamic dim name}, from ``pl.Tensor[[M, ...], dt]`` annotations whose entry is a
        ``pl.dynamic`` and from ``x.bind_dynamic(axis, M)`` declarations in the body (spec §3)."""
        if self.__dict__.get("_dyn") is None:
            src = SourceInfo(self.pyfunc)
            env = Namespace(self.pyfunc, self.frames).as_dict()
            out: dict = {}
            for a in src.node.args.args:
                ann = _eval_annotation(a.annotation, env, src) if a.annotation is not None else None
                ann = ann.inner if isinstance(ann, DirectionAnnotation) else ann
                for axis, d in enumerate(getattr(ann, "shape", ()) if isinstance(ann, ShapedAnnotation) else ()):
                    if isinstance(d, DynVar):
                        out.setdefault(a.arg, {})[axis] = d.name
            for node in ast.walk(src.node):
                bound = _bind_dynamic(node, env)
                if bound is not None:
                    out.setdefault(bound[0], {})[bound[1]] = bound[2]
            self._dyn = out
        return self._dyn

    # ------------------------------------------------------------------ specialization
    def _specialize(self, tensors: dict, consts: dict) -> St.Program:
        src = SourceInfo(self.pyfunc)
        ns = Namespace(self.pyfunc, [dict(consts), *self.frames])
        params, dirs = [], []
        env = ns.as_dict()
        dyn_vars: dict = {}
        for a in src.node.args.args:
            if a.arg in consts:
                continue
            if a.arg in self._runtime:
                params.append(E.Var(a.arg, ScalarType(_runtime_dtype(a, env, src)), src.span(a)))
                dirs.append(ParamDirection.In)
                continue
            if a.arg not in tensors:
                raise PyptoTypeError(f"parameter '{a.arg}' has no argument", src.span(a))
            direction = _direction_of(a, env, src)
            shape, dtype = tensors[a.arg]
            dyn = self._dynamic_axes().get(a.arg, {})
            dims = [dyn_vars.setdefault(dyn[axis], E.Var(dyn[axis], ScalarType(DataType.INDEX), src.span(a)))
                    if axis in dyn else d for axis, d in enumerate(shape)]
            params.append(E.Var(a.arg, TensorType(tuple(dims), dtype), src.span(a)))
            dirs.append(direction)
        self._returned_outs = _return_final_outs(src, [p.name for p, d in zip(params, dirs, strict=True)
                                                       if d is not ParamDirection.In])
        sig = Signature(self.__name__, params, dirs, (), dyn_vars)
        ctx = ProgramContext({})
        ctx.signatures[self.__name__] = (E.GlobalVar(self.__name__), sig)
        entry = _with_returns(_parser(src, ns, sig, FunctionType.Orchestration, ctx, "@pl.jit function").parse())
        _check_out_rebindings(entry, {p.name: p.type for p, d in zip(params, dirs, strict=True)
                                      if d is not ParamDirection.In})
        _refuse_misplaced_tensor_ops(entry)
        funcs = [entry, *(fn for _, fn in ctx.externals.values())]
        gvs = {n: gv for n, (gv, _) in ctx.signatures.items()}
        gvs.update({n: gv for n, (gv, _) in ctx.externals.items()})
        return St.Program(tuple(funcs), self.__name__, Span(src.filename, src.first_line, 1), gvs)

    def pypto_specialize(self, p: Any, node: ast.Call) -> tuple[St.Function, list]:
        """Parser hook: the InCore function for this call site's argument types, and the IR arguments."""
        if self.kind in (EXTERN, HOST):
            self._refuse()
        if self.kind == ENTRY:
            raise p.error(f"'{self.__name__}' is a @pl.jit entry; an entry cannot call another entry "
                          "(make the callee @pl.jit.incore or @pl.jit.inline)", node.func)
        if node.keywords:
            raise p.error(f"{self.__name__}(...) takes positional arguments only", node, PyptoTypeError)
        args = [p.to_ir(p.expr(a), a) for a in node.args]
        src = SourceInfo(self.pyfunc)
        names = [a.arg for a in src.node.args.args]
        if len(args) != len(names):
            raise p.error(f"{self.__name__}() takes {len(names)} argument(s), got {len(args)}", node, PyptoTypeError)
        specs = p.program.__dict__.setdefault("jit_specializations", {})
        key = (id(self), tuple(type_str(a.type) for a in args))
        if key not in specs:
            specs[key] = self._specialize_callee(p, src, names, args, len(specs))
        return specs[key], args

    def _specialize_callee(self, p: Any, src: SourceInfo, names: list, args: list, count: int) -> St.Function:
        ns = Namespace(self.pyfunc, self.frames)
        env = ns.as_dict()
        params, dirs = [], []
        for a, value in zip(src.node.args.args, args, strict=True):
            t = value.type
            params.append(E.Var(a.arg, t, src.span(a)))
            dirs.append(_direction_of(a, env, src) if isinstance(t, TensorType) else ParamDirection.In)
        name = self.__name__ if count == 0 else f"{self.__name__}_{count}"
        sig = Signature(name, params, dirs, (), {})
        ftype = FunctionType.Opaque if self.kind == OPAQUE else FunctionType.InCore
        return _with_returns(_parser(src, ns, sig, ftype, p.program, f"@pl.jit.{self.kind} function").parse())


def _bind_dynamic(node: ast.AST, env: dict) -> tuple[str, int, str] | None:
    """(param, axis, dim name) of a ``param.bind_dynamic(axis, DYNVAR)`` statement, else None."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "bind_dynamic"
            and isinstance(call.func.value, ast.Name) and len(call.args) == 2):
        return None
    axis, dyn = call.args
    var = env.get(dyn.id) if isinstance(dyn, ast.Name) else None
    if not (isinstance(axis, ast.Constant) and isinstance(axis.value, int) and isinstance(var, DynVar)):
        return None
    return call.func.value.id, axis.value, var.name


def _parser(src: SourceInfo, ns: Namespace, sig: Signature, ftype: FunctionType, ctx: Any,
            form: str) -> FunctionParser:
    parser = FunctionParser(src, ns, sig, ftype, ctx)
    parser.fold_metadata = True
    parser.form = form
    return parser


def _runtime_dtype(arg: ast.arg, env: dict, src: SourceInfo) -> DataType:
    """The dtype of a pl.RUNTIME scalar parameter, from its annotation (``pl.Scalar[pl.FP32]``, ``pl.INDEX``)."""
    ann = _eval_annotation(arg.annotation, env, src) if arg.annotation is not None else None
    if isinstance(ann, ScalarAnnotation):
        return ann.dtype
    if isinstance(ann, DataType):
        return ann
    raise PyptoTypeError(f"parameter '{arg.arg}' is given pl.RUNTIME, so it stays a run-time scalar: annotate its "
                         "dtype (pl.Scalar[pl.FP32], pl.INDEX, ...)", src.span(arg))


def _direction_of(arg: ast.arg, env: dict, src: SourceInfo) -> ParamDirection:
    if arg.annotation is None:
        return ParamDirection.In
    ann = _eval_annotation(arg.annotation, env, src)
    if isinstance(ann, DirectionAnnotation):
        return ann.direction
    if isinstance(ann, (ScalarAnnotation, DataType)):
        raise PyptoTypeError(f"parameter '{arg.arg}' is a scalar; pass a Python int/float/bool for it "
                             "(a tensor was given)", src.span(arg))
    return ParamDirection.In


def _return_final_outs(src: SourceInfo, outs: list[str]) -> tuple:
    """Per value the entry returns, the Out parameter it names (or None). An entry without a
    ``return`` gets ``return <its Out parameters>`` appended to its source tree, so that an Out
    parameter rebound by a tensor op (``z = pl.add(x, y)``) reaches the caller's array instead of
    being silently dropped."""
    body = src.node.body
    if not any(isinstance(s, ast.Return) for s in ast.walk(src.node)):
        if not outs:
            return ()
        last = body[-1]
        names = [ast.Name(id=o, ctx=ast.Load()) for o in outs]
        ret = ast.Return(value=names[0] if len(names) == 1 else ast.Tuple(elts=names, ctx=ast.Load()))
        ast.copy_location(ret, last)
        for n in [*names, ret.value]:
            ast.copy_location(n, last)
        body.append(ret)
        return tuple(outs)
    last = [s for s in body if isinstance(s, ast.Return)]
    value = last[-1].value if last else None
    elts = value.elts if isinstance(value, ast.Tuple) else [value]
    return tuple(e.id if isinstance(e, ast.Name) and e.id in outs else None for e in elts)


def _check_out_rebindings(entry: St.Function, outs: dict) -> None:
    """An ``Out``/``InOut`` parameter rebound to a value of another dtype or shape is an error (spec
    §3: "Cannot reassign 'out' with a different type"): its final value is copied into the caller's
    array, and converting it there would silently lose precision (an FP32 ``pl.add(fp16, fp32)``
    written into an FP16 output) or reshape it. ``pl.cast`` states a narrowing on purpose."""
    for s in walk_stmts(entry.body):
        if not (isinstance(s, St.AssignStmt) and s.var.name in outs and isinstance(s.var.type, TensorType)):
            continue
        want, got = outs[s.var.name], s.var.type
        same_shape = [E.static_int(d) for d in want.shape] == [E.static_int(d) for d in got.shape]
        if got.dtype is not want.dtype or not same_shape:
            raise PyptoTypeError(f"Cannot reassign '{s.var.name}' with a different type: the parameter is "
                                 f"{type_str(want)}, the value is {type_str(got)} (the caller's array keeps its "
                                 f"dtype and shape; convert explicitly, e.g. pl.cast(..., pl.{want.dtype.name}))",
                                 s.span)


def _refuse_misplaced_tensor_ops(entry: St.Function) -> None:
    """pypto-jit §1.2: the entry body outside ``pl.at`` is the control plane, which allocates, takes
    views, reads and writes elements and dispatches; a computing tensor op written there is refused
    with ``Misplaced tensor op``, as upstream's compile() does. (The seed-era Orchestration functions
    of ``@pl.program`` keep having theirs outlined into kernels: passes/outline_tensor_ops.py.)"""
    in_core = {id(n) for s in walk(entry.body)
               if isinstance(s, St.ScopeStmt) and s.scope_kind in (ScopeKind.InCore, ScopeKind.AutoInCore)
               for n in walk(s.body)}
    for n in walk(entry.body):
        if id(n) not in in_core and is_compute_op(n):
            op = n.op.name.split(".", 1)[1]
            raise PyptoTypeError(f"Misplaced tensor op: pl.{op} on the control plane (the @pl.jit body outside "
                                 f"pl.at); compute runs on a core group: put it inside "
                                 f"`with pl.at(level=pl.Level.CORE_GROUP):` or an @pl.jit.incore function", n.span)


def _with_returns(fn: St.Function) -> St.Function:
    """``fn`` with return types read from its last ``return`` (jit functions need no return annotation)."""
    rets = [s for s in walk_stmts(fn.body) if isinstance(s, St.ReturnStmt)]
    if not rets or fn.return_types:
        return fn
    types = tuple(v.type for v in rets[-1].value)
    return dataclasses.replace(fn, params=tuple(zip(fn.params, fn.param_directions, strict=True)),
                               return_types=types)


def _decorator(kind: str, allowed: tuple) -> Any:
    def deco(func: Any = None, **options: Any) -> Any:
        bad = [k for k in options if k not in allowed]
        if bad:
            name = "pl.jit" if kind == ENTRY else f"pl.jit.{kind}"
            raise TypeError(f"@{name} got an unexpected keyword argument '{bad[0]}'")

        def wrap(pyfunc: Any) -> JITFunction:
            return JITFunction(pyfunc, kind, _frames(1), options)

        if func is not None:
            return JITFunction(func, kind, _frames(1), options)
        return wrap

    return deco


class _Jit:
    """``pl.jit``: the entry decorator, with the variants as attributes."""

    def __init__(self) -> None:
        self._entry = _decorator(ENTRY, ("auto_scope",))
        self.incore = _decorator(INCORE, ("level",))
        self.inline = _decorator(INLINE, ("auto_scope",))
        self.opaque = _decorator(OPAQUE, ())
        self.host = _decorator(HOST, ("auto_scope",))
        self.extern = _decorator(EXTERN, ("source", "core_type", "aic_source", "aiv_source",
                                          "dual_aiv_dispatch", "include_dirs"))

    def __call__(self, func: Any = None, **options: Any) -> Any:
        return self._entry(func, **options)


jit = _Jit()

__all__ = ["JITFunction", "ParseError", "RunConfig", "jit"]
