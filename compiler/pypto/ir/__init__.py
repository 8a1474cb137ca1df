"""The PyPTO IR: nodes, types, op registry, builder, printer, verifier and ``compile``."""

from pypto.dtype import DataType
from pypto.enums import ForKind, FunctionType, MemorySpace, ParamDirection, PipeType, ScopeKind
from pypto.errors import Span
from pypto.ir.expr import (
    Abs, Add, And, BinaryExpr, BitAnd, BitNot, BitOr, BitShiftLeft, BitShiftRight, BitXor, Call, Cast,
    ConstBool, ConstFloat, ConstInt, Eq, Expr, FloatDiv, FloorDiv, FloorMod, Ge, GlobalVar, Gt, IterArg, Le,
    Lt, MakeTuple, Max, Min, Mul, Ne, Neg, Not, Op, Or, Pow, Sub, TupleGetItemExpr, UnaryExpr, Var, Xor,
)
from pypto.ir.registry import OpDef, create_op_call, get_op, is_op_registered, register_op
from pypto.ir.scalar import (
    add, bit_and, bit_not, bit_or, bit_shift_left, bit_shift_right, bit_xor, cast, eq, floordiv, ge, gt, le, lt,
    max_, min_, mod, mul, ne, neg, pow, sub, truediv,
)
from pypto.ir.stmt import (
    AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ForStmt, Function, IfStmt, OpStmts, Program, ReturnStmt,
    ScopeStmt, SeqStmts, Stmt, WhileStmt, YieldStmt,
)
from pypto.ir.types import (
    MemRef, MemRefType, ScalarType, TensorType, TensorView, TileType, TileView, TupleType, UnknownType,
)


def __getattr__(name: str):
    # Heavier entry points are imported lazily to keep `import pypto.ir` cheap and acyclic.
    if name == "IRBuilder":
        from pypto.ir.builder import IRBuilder

        return IRBuilder
    if name in ("python_print",):
        from pypto.ir.printer import python_print

        return python_print
    if name in ("compile", "OptimizationStrategy", "BackendType"):
        from pypto.ir import compile as _c

        return getattr(_c, name)
    if name in ("verify", "structural_equal", "assert_structural_equal"):
        from pypto.ir import verifier

        return getattr(verifier, name)
    raise AttributeError(name)
