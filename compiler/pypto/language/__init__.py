"""``import pypto.language as pl``: the PyPTO DSL."""

from pypto.dtype import DataType
from pypto.enums import (
    AtomicType,
    CmpType,
    ForKind,
    FunctionType,
    MemorySpace,
    ParamDirection,
    PipeType,
    TensorLayout,
    TileLayout,
    TilePad,
)
from pypto.language.decorators import InlineFunction, function, inline, program
from pypto.language.helpers import (
    auto_incore,
    cond,
    const,
    incore,
    parallel,
    parallel_for_power2,
    pipeline,
    range,
    static_assert,
    static_print,
    unroll,
    while_,
    yield_,
)
from pypto.language.namespace import Namespace as _Namespace
from pypto.language.namespace import OpStub as _OpStub
from pypto.language.placement import Level, Role, at, cluster, split_aiv, spmd
from pypto.language.text import loads, loads_program, parse, parse_program
from pypto.language.typing import DynVar, InOut, Out, Scalar, Tensor, Tile, dynamic
from pypto.language.typing import MemRef_ as MemRef

Mem = MemorySpace  # jit-era spelling (spec pypto-jit §11)
ND, DN, NZ = TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ
IntLike = int

BOOL = DataType.BOOL
INT4, INT8, INT16, INT32, INT64 = DataType.INT4, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64
UINT4, UINT8, UINT16 = DataType.UINT4, DataType.UINT8, DataType.UINT16
UINT32, UINT64 = DataType.UINT32, DataType.UINT64
FP4, FP8E4M3FN, FP8E5M2 = DataType.FP4, DataType.FP8E4M3FN, DataType.FP8E5M2
FP8 = DataType.FP8E4M3FN
FP16, FP32, BF16, HF4, HF8 = DataType.FP16, DataType.FP32, DataType.BF16, DataType.HF4, DataType.HF8
INDEX = DataType.INDEX

_UNIFIED = ["add", "sub", "mul", "div", "maximum", "exp", "cast", "reshape", "transpose", "view", "matmul", "row_max", "row_sum"]
_BLOCK = ["create_tile", "load", "store", "move", "neg", "sqrt", "rsqrt", "recip", "log", "abs", "relu", "matmul_acc", "matmul_bias", "gemv", "gemv_acc", "gemv_bias", "minimum", "min", "sum", "max", "cmp", "cmps", "row_min", "row_expand", "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div", "col_expand", "col_expand_mul", "col_expand_div", "col_expand_sub", "expands", "rem", "rems", "and_", "ands", "or_", "ors", "xor", "xors", "shl", "shls", "shr", "shrs", "maxs", "mins", "prelu", "not_", "addc", "subc", "addsc", "subsc", "lrelu", "sel", "sels"]
_TENSOR = ["create_tensor", "assemble", "dim"]
_IDS = ["get_block_idx", "get_block_num", "get_subblock_idx"]
# the tensor-level library (pypto.lib): pl.<name> on Tensors; names shared with tile ops dispatch on the argument
_LIB = ["sigmoid", "tanh", "gelu", "silu", "reciprocal", "pow", "mean", "broadcast_to", "slice", "concat", "softmax",
        "log_softmax", "layer_norm", "rms_norm", "swiglu"]
for _name in _UNIFIED + _BLOCK + _TENSOR + _IDS + _LIB:
    globals()[_name] = _OpStub("", _name)

block = _Namespace(
    "block",
    tuple(_BLOCK) + tuple(_UNIFIED) + tuple(_IDS) + ("full", "fillpad", "adds", "subs", "muls", "divs", "create",
                                                     "read", "write", "slice", "concat", "transpose_view", "sort32",
                                                     "mrgsort", "gather", "arange", "set_validshape",
                                                     "fillpad_expand", "fillpad_inplace"),
)
tile = block
tensor = _Namespace(
    "tensor",
    ("create", "dim", "read", "write", "slice", "view", "assemble", "add", "sub", "mul", "div", "maximum", "exp",
     "cast", "matmul", "row_max", "row_sum", "add_scalar", "sub_scalar", "mul_scalar", "div_scalar", "reshape",
     "transpose", "neg", "sqrt", "rsqrt", "reciprocal", "log", "abs", "relu", "sigmoid", "tanh", "gelu", "silu",
     "minimum", "pow", "sum", "max", "min", "mean", "broadcast_to", "concat", "softmax", "log_softmax", "layer_norm",
     "rms_norm", "swiglu"),
)
system = _Namespace("system", ("sync_src", "sync_dst", "bar_v", "bar_m", "bar_all", "task_dummy",
                               "available_cluster_count", "available_aiv_count"))

from pypto.language.jit import RUNTIME, JITFunction, jit
from pypto.language.optimizations import SplitMode
from pypto.language.surface import MaskPattern, PadValue
from pypto.language.tasks import TASK_ID, ScopeMode, TaskId, array, manual_scope, scope

tile.MaskPattern = MaskPattern  # pl.tile.MaskPattern.P0101 (spec pypto-jit §8)
for _name in ("read", "write", "slice", "concat", "transpose_view", "sort32", "mrgsort", "gather", "arange",
              "fillpad", "submit", "spmd_submit", "no_dep", "set_validshape", "split", "cross_core_slot",
              "fillpad_expand", "aiv_shard", "aic_gather"):
    globals().setdefault(_name, _OpStub("", _name))

__all__ = [
    "DN",
    "ND",
    "NZ",
    "RUNTIME",
    "TASK_ID",
    "AtomicType",
    "CmpType",
    "DataType",
    "DynVar",
    "ForKind",
    "FunctionType",
    "InOut",
    "InlineFunction",
    "IntLike",
    "JITFunction",
    "Level",
    "MaskPattern",
    "Mem",
    "MemRef",
    "MemorySpace",
    "Out",
    "PadValue",
    "ParamDirection",
    "PipeType",
    "Role",
    "Scalar",
    "ScopeMode",
    "SplitMode",
    "TaskId",
    "Tensor",
    "TensorLayout",
    "Tile",
    "TileLayout",
    "TilePad",
    "array",
    "at",
    "auto_incore",
    "block",
    "cluster",
    "cond",
    "const",
    "dynamic",
    "function",
    "incore",
    "inline",
    "jit",
    "loads",
    "loads_program",
    "manual_scope",
    "parallel",
    "parallel_for_power2",
    "parse",
    "parse_program",
    "pipeline",
    "program",
    "range",
    "scope",
    "split_aiv",
    "spmd",
    "static_assert",
    "static_print",
    "system",
    "tensor",
    "tile",
    "unroll",
    "while_",
    "yield_",
]
