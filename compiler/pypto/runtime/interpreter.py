"""Host-side interpreter of Orchestration functions: tensors are NumPy arrays, kernels run on the
emulator (see :mod:`pypto.runtime.launch`). The host only orchestrates: calls, scalar control flow,
tensor allocation, views and element reads; every computing tensor op was outlined into a kernel by
the compiler (:mod:`pypto.passes.outline_tensor_ops`), so none is evaluated here."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from pypto.enums import AtomicType, FunctionType
from pypto.errors import RuntimeFault
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.visitor import stmt_list

_BIN = {
    "Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "FloatDiv": operator.truediv,
    "FloorDiv": operator.floordiv, "FloorMod": operator.mod, "Pow": operator.pow, "Eq": operator.eq,
    "Ne": operator.ne, "Lt": operator.lt, "Le": operator.le, "Gt": operator.gt, "Ge": operator.ge,
    "And": lambda a, b: a and b, "Or": lambda a, b: a or b, "Xor": operator.xor, "BitAnd": operator.and_,
    "BitOr": operator.or_, "BitXor": operator.xor, "BitShiftLeft": operator.lshift,
    "BitShiftRight": operator.rshift, "Min": min, "Max": max,
}


# Host ops that read or write tensor data (the others only allocate, view or measure).
_HOST_DATA_OPS = ("tensor.read", "tensor.write", "tensor.assemble")


class _Return(Exception):
    def __init__(self, values: tuple):
        self.values = values


class Interpreter:
    def __init__(self, program: St.Program, launch: Any):
        self.program = program
        self.launch = launch

    def call(self, func: St.Function, args: list, blocks: int = 1) -> tuple:
        """Run ``func``: an Orchestration on the host, a kernel on the chip as ``blocks`` SPMD blocks."""
        if func.type is not FunctionType.Orchestration:
            return self.launch(func, args, blocks)
        env = dict(zip(func.params, args, strict=False))
        for p, a in zip(func.params, args, strict=False):
            for axis, d in enumerate(getattr(p.type, "shape", ()) if isinstance(a, np.ndarray) else ()):
                if isinstance(d, E.Var):
                    env.setdefault(d, int(a.shape[axis]))  # a dynamic dim (pl.dynamic) is the argument's extent
        try:
            self.block(func.body, env)
        except _Return as r:
            return r.values
        return ()

    def block(self, body: Any, env: dict) -> tuple | None:
        for s in stmt_list(body):
            if isinstance(s, St.YieldStmt):
                return tuple(self.eval(v, env) for v in s.value)
            self.stmt(s, env)
        return None

    def stmt(self, s: Any, env: dict) -> None:
        if isinstance(s, St.AssignStmt):
            env[s.var] = self.eval(s.value, env)
        elif isinstance(s, St.EvalStmt):
            self.eval(s.expr, env)
        elif isinstance(s, St.ReturnStmt):
            raise _Return(tuple(self.eval(v, env) for v in s.value))
        elif isinstance(s, St.ForStmt):
            cur = [self.eval(ia.init_value, env) for ia in s.iter_args]
            lo, hi, step = (int(self.eval(x, env)) for x in (s.start, s.stop, s.step))
            for i in range(lo, hi, step):
                env[s.loop_var] = i
                env.update(zip(s.iter_args, cur, strict=False))
                ys = self.block(s.body, env)
                if s.iter_args:
                    cur = list(ys)
            env.update(zip(s.return_vars, cur, strict=False))
        elif isinstance(s, St.WhileStmt):
            cur = [self.eval(ia.init_value, env) for ia in s.iter_args]
            while True:
                env.update(zip(s.iter_args, cur, strict=False))
                if not self.eval(s.condition, env):
                    break
                cur = list(self.block(s.body, env))
            env.update(zip(s.return_vars, cur, strict=False))
        elif isinstance(s, St.IfStmt):
            body = s.then_body if self.eval(s.condition, env) else s.else_body
            ys = self.block(body, env) if body is not None else None
            if s.return_vars:
                env.update(zip(s.return_vars, ys, strict=False))
        elif isinstance(s, (St.SeqStmts, St.OpStmts, St.ScopeStmt)):
            self.block(s.body if isinstance(s, St.ScopeStmt) else s, env)
        else:
            raise RuntimeFault(f"{type(s).__name__} cannot run on the host", getattr(s, "span", None))

    def eval(self, e: Any, env: dict) -> Any:
        if isinstance(e, (E.ConstInt, E.ConstFloat, E.ConstBool)):
            return e.value
        if isinstance(e, E.Var):
            if e not in env:
                raise RuntimeFault(f"'{e.name}' has no value on the host", e.span)
            return env[e]
        if isinstance(e, E.MakeTuple):
            return [self.eval(x, env) for x in e.elements]
        if isinstance(e, E.TupleGetItemExpr):
            return self.eval(e.tuple, env)[e.index]
        if isinstance(e, E.Cast):
            v = self.eval(e.operand, env)
            return float(v) if e.dtype.is_float() else int(v)
        if isinstance(e, E.Neg):
            return -self.eval(e.operand, env)
        if isinstance(e, (E.Not, E.BitNot)):
            return not self.eval(e.operand, env)
        if isinstance(e, E.Abs):
            return abs(self.eval(e.operand, env))
        if isinstance(e, E.BinaryExpr):
            a, b = self.eval(e.left, env), self.eval(e.right, env)
            return _BIN[type(e).__name__](a, b)
        if isinstance(e, E.Call):
            return self.call_expr(e, env)
        raise RuntimeFault(f"cannot evaluate {type(e).__name__} on the host", getattr(e, "span", None))

    def call_expr(self, c: E.Call, env: dict) -> Any:
        args = [self.eval(a, env) for a in c.args]
        if isinstance(c.op, E.GlobalVar):
            callee = self.program.get_function(c.op.name)
            if callee is None:
                raise RuntimeFault(f"unknown function '{c.op.name}'", c.span)
            out = self.call(callee, args, int(c.kwargs.get("blocks", 1)))
            return out[0] if len(out) == 1 else (tuple(out) if out else None)
        return self.host_op(c, args)

    def _host_touches(self, name: str, args: list) -> None:
        """A host read or write of tensor data waits, on the program's timeline, for the launches
        it depends on (views, shapes and allocations touch no data)."""
        timeline = getattr(getattr(self.launch, "stats", None), "timeline", None)
        if timeline is None or name not in _HOST_DATA_OPS:
            return
        timeline.host_access(args[0], writes=name != "tensor.read")
        if name == "tensor.assemble":
            timeline.host_access(args[1], writes=False)

    def host_op(self, c: E.Call, args: list) -> Any:
        """A tensor op of the orchestration, on NumPy arrays."""
        name = c.op.name
        kw = c.kwargs
        self._host_touches(name, args)
        if name == "tensor.create":
            return np.zeros([int(d) for d in args[0]], dtype=kw["dtype"].numpy)
        if name == "tensor.dim":
            return int(args[0].shape[int(args[1])])
        if name == "tensor.view":
            t, shape, off = args
            return t[_window(c, t, off, shape)]
        if name == "tensor.assemble":
            # the result is the updated target: written in place, like a kernel's Out tensor
            t, src, off = args
            window = _window(c, t, off, src.shape)
            if kw.get("atomic") is AtomicType.Add:  # pl.assemble(..., atomic=pl.AtomicType.Add): adds into it
                t[window] += src
            else:
                t[window] = src
            return t
        if name == "tensor.reshape":
            return args[0].reshape([int(d) for d in args[1]])
        if name == "tensor.transpose":
            return np.swapaxes(args[0], int(args[1]), int(args[2]))
        if name == "tensor.read":
            return args[0][_element(c, args[0], args[1])].item()
        if name == "tensor.write":
            args[0][_element(c, args[0], args[1])] = args[2]
            return args[0]
        raise RuntimeFault(
            f"op '{name}' cannot run on the host: the host only orchestrates (calls, scalar control, tensor "
            "allocation and views); computing ops run as kernels (OutlineTensorOps)",
            c.span,
        )


def _window(c: E.Call, t: np.ndarray, offsets: Any, shape: Any) -> tuple:
    """The NumPy index of the window ``offsets`` + ``shape`` of ``t``, checked first: NumPy would cut a
    window running past the end (and wrap a negative offset) without a word, and the kernel given the
    view would then read or write other elements than the program names."""
    index = []
    for axis, (o, n) in enumerate(zip(offsets, shape, strict=False)):
        lo, hi = int(o), int(o) + int(n)
        if lo < 0 or hi > t.shape[axis]:
            raise RuntimeFault(f"{c.op.name.split('.')[1]}: window [{lo}, {hi}) on axis {axis} is outside the tensor's "
                               f"0..{t.shape[axis]} (shape {list(t.shape)})", c.span)
        index.append(slice(lo, hi))
    return tuple(index)


def _element(c: E.Call, t: np.ndarray, offset: Any) -> tuple:
    """The NumPy index of one element, checked: an index past the end is a located fault, and a
    negative one is not Python's count from the end (spec pypto-jit §6.1: no negative index)."""
    idx = [int(i) for i in offset] if isinstance(offset, (list, tuple)) else [int(offset)]
    if len(idx) == 1 and t.ndim > 1:  # one integer on an N-D tensor: a flat row-major index
        if not 0 <= idx[0] < t.size:
            raise RuntimeFault(f"{c.op.name.split('.')[1]}: flat index {idx[0]} is outside the tensor's {t.size} "
                               f"elements (shape {list(t.shape)})", c.span)
        return np.unravel_index(idx[0], t.shape)
    if len(idx) != t.ndim:
        raise RuntimeFault(f"{c.op.name.split('.')[1]}: {len(idx)} indices for a tensor of rank {t.ndim}", c.span)
    for axis, i in enumerate(idx):
        if not 0 <= i < t.shape[axis]:
            raise RuntimeFault(f"{c.op.name.split('.')[1]}: index {i} on axis {axis} is outside the tensor's "
                               f"0..{t.shape[axis]} (shape {list(t.shape)})", c.span)
    return tuple(idx)
