"""The op registry API (create_op_call, is_op_registered, kwargs schema) and type-deduction corner cases:
broadcasting [M,1]/[1,N], dynamic dims, dtype promotion, tensor matmul/reduction rules (spec §2.1, §4, §5.6)."""

from __future__ import annotations

import pytest

from pypto import DataType, ir
from pypto.enums import MemorySpace
from pypto.errors import PyptoError, PyptoTypeError, Span
from pypto.ir import ScalarType, TensorType, TileType, Var, create_op_call, get_op, is_op_registered
from pypto.ir.op import block, tensor
from pypto.ir.types import static_shape

S = Span("user.py", 12, 5)
F, I32, U32, IDX = DataType.FP32, DataType.INT32, DataType.UINT32, DataType.INDEX


def tile(shape, dtype=F, name="t"):
    return Var(name, TileType(shape, dtype))


def ten(shape, dtype=F, name="a"):
    return Var(name, TensorType(shape, dtype))


def shp(*dims):
    return ir.MakeTuple(tuple(ir.ConstInt(d, IDX) for d in dims))


# ----------------------------------------------------------------------------- registry


def test_registry_queries():
    for name in ("block.add", "tile.add", "tensor.matmul", "system.sync_src", "block.load", "tensor.view"):
        assert is_op_registered(name), name
    assert not is_op_registered("block.nope") and not is_op_registered("tensor.nope")
    assert get_op("tile.exp").name == "block.exp"
    assert get_op("tensor.matmul").category == "TensorOp"


@pytest.mark.parametrize("name,args,kwargs,message", [
    ("block.cast", "t", {"target_type": "fp16"}, "keyword 'target_type' expects DataType, got str"),
    ("block.cast", "t", {"target_type": DataType.FP16, "mode": 1.5}, "keyword 'mode' expects int, got float"),
    ("block.sum", "t", {"axis": "1"}, "keyword 'axis' expects int, got str"),
    ("block.sum", "t", {"axis": 1, "keepdim": 1}, "keyword 'keepdim' expects bool, got int"),
    ("block.sum", "t", {"axis": 5}, "axis 5 out of range"),
    ("block.exp", "t", {"bogus": 1}, "unknown keyword 'bogus'"),
    ("tensor.matmul", "TT", {"a_trans": 1}, "keyword 'a_trans' expects bool, got int"),
    ("system.sync_src", "", {"set_pipe": "MTE2", "wait_pipe": 4, "event_id": 0}, "'set_pipe' expects int, got str"),
    ("system.sync_src", "", {"set_pipe": 1, "wait_pipe": 4, "event_id": 9}, "event_id must be 0..7"),
    ("system.sync_src", "", {"set_pipe": 42, "wait_pipe": 4, "event_id": 0}, "set_pipe must be a PipeType"),
    ("block.cmp", "tt", {"cmp_type": 7}, "cmp_type must be 0..5"),
    ("block.exp", "tt", {}, "takes 1 argument"),
])
def test_bad_kwargs_give_precise_errors_at_the_span(name, args, kwargs, message):
    vals = {"t": tile([16, 16]), "T": ten([16, 16])}
    with pytest.raises(PyptoTypeError) as e:
        create_op_call(name, [vals[c] for c in args], kwargs, S)
    assert str(e.value).startswith("user.py:12:5:") and message in str(e.value), str(e.value)


def test_datatype_attribute_accepts_int_code():
    c = create_op_call("tensor.matmul", [ten([16, 32]), ten([32, 8])], {"out_dtype": F.value}, S)
    assert c.kwargs["out_dtype"] is F and static_shape(c.type) == (16, 8)


def test_load_target_memory_restricted():
    with pytest.raises(PyptoTypeError, match="target_memory must be Vec or Mat, got Left"):
        create_op_call("block.load", [ten([16, 16]), shp(0, 0), shp(16, 16)], {"target_memory": MemorySpace.Left}, S)


@pytest.mark.parametrize("name,args,kwargs", [
    ("block.load", "load", {"target_memory": 99}),
    ("tensor.matmul", "mm", {"out_dtype": 12345}),
])
def test_bad_enum_code_is_a_pypto_error(name, args, kwargs):
    vals = {"load": [ten([16, 16]), shp(0, 0), shp(16, 16)], "mm": [ten([16, 16]), ten([16, 16])]}
    with pytest.raises(PyptoError) as e:
        create_op_call(name, vals[args], kwargs, S)
    assert str(e.value).startswith("user.py:12:5:")


def test_cast_mode_range_checked_by_registry():
    with pytest.raises(PyptoError):
        create_op_call("block.cast", [tile([16, 16])], {"target_type": DataType.FP16, "mode": 9}, S)


def test_unknown_op_error_has_span():
    with pytest.raises(PyptoError) as e:
        create_op_call("block.nope", [tile([16, 16])], {}, S)
    assert str(e.value).startswith("user.py:12:5:") and "block.nope" in str(e.value)


def test_tensor_structural_ops_registered():
    for name in ("tensor.assemble", "tensor.reshape", "tensor.transpose"):
        assert is_op_registered(name), name


# ----------------------------------------------------------------------------- broadcasting


@pytest.mark.parametrize("make", [tile, ten])
def test_broadcast_column_and_row_vectors(make):
    add = block.add if make is tile else tensor.add
    c = add(make([16, 1], name="c"), make([1, 32], name="r"))
    assert static_shape(c.type) == (16, 32) and c.type.dtype is F
    c = add(make([16, 32], name="x"), make([16, 1], name="c"))
    assert static_shape(c.type) == (16, 32)
    with pytest.raises(PyptoTypeError, match=r"\[16, 32\] and \[8, 1\]"):
        add(make([16, 32], name="x"), make([8, 1], name="c"))


def test_broadcast_dynamic_dims():
    m, n = Var("M", ScalarType(IDX)), Var("N", ScalarType(IDX))
    c = tensor.add(ten([m, 1]), ten([1, n]))
    assert c.type.shape[0] is m and c.type.shape[1] is n
    assert tensor.add(ten([m, 8]), ten([1, 8])).type.shape[0] is m
    with pytest.raises(PyptoTypeError, match="dims M and N differ"):
        tensor.add(ten([m, 8]), ten([n, 8]))
    with pytest.raises(PyptoTypeError, match="dims M and 16 differ"):
        tensor.add(ten([m, 8]), ten([16, 8]))


def test_row_and_col_vector_shape_checks():
    assert static_shape(block.row_expand_add(tile([16, 32]), tile([16, 1], name="v")).type) == (16, 32)
    with pytest.raises(PyptoTypeError, match=r"must have shape \[16, 1\], got \[8, 1\]"):
        block.row_expand_add(tile([16, 32]), tile([8, 1], name="v"))
    with pytest.raises(PyptoTypeError, match=r"must have shape \[1, 32\], got \[1, 16\]"):
        block.col_expand_mul(tile([16, 32]), tile([1, 16], name="v"))


# ----------------------------------------------------------------------------- promotion


PROMOTIONS = [
    (I32, F, F), (F, I32, F), (U32, I32, I32), (I32, U32, I32), (DataType.FP16, F, F),
]
# promotions whose result A2/A3 cannot add as tiles (no i8 tadd, no 64-bit vector ops): tensor level only
WIDE = [(DataType.INT8, DataType.UINT8, DataType.INT8), (DataType.UINT16, DataType.INT8, DataType.UINT16), (I32, DataType.INT64, DataType.INT64)]


@pytest.mark.parametrize("a,b,want", PROMOTIONS)
def test_promotion_in_tile_deduction(a, b, want):
    assert block.add(tile([16, 16], a, "x"), tile([16, 16], b, "y")).type.dtype is want


@pytest.mark.parametrize("a,b,want", PROMOTIONS + WIDE)
def test_promotion_in_tensor_deduction(a, b, want):
    assert tensor.add(ten([16, 16], a, "x"), ten([16, 16], b, "y")).type.dtype is want


def test_tile_scalar_promotion_and_int_tile_float_scalar():
    assert block.adds(tile([16, 16], I32), 2).type.dtype is I32
    assert tensor.add(ten([16, 16], I32), 2).type.dtype is I32
    with pytest.raises(PyptoTypeError, match="INT32 tile needs an integer scalar"):
        block.adds(tile([16, 16], I32), 1.5)
    assert tensor.exp(ten([16, 16], I32)).type.dtype is F


# ----------------------------------------------------------------------------- tensor matmul / reductions


def test_tensor_matmul_2d_and_transposes():
    c = tensor.matmul(ten([32, 16]), ten([8, 32]), a_trans=True, b_trans=True)
    assert static_shape(c.type) == (16, 8)
    with pytest.raises(PyptoTypeError, match="K dims differ"):
        tensor.matmul(ten([16, 32]), ten([16, 8]))


@pytest.mark.parametrize("a,b,want", [
    ([32], [32], ()), ([16, 32], [32], (16,)), ([32], [32, 8], (8,)), ([4, 1, 16, 32], [3, 32, 8], (4, 3, 16, 8)),
])
def test_tensor_matmul_1d_and_batched(a, b, want):
    assert static_shape(tensor.matmul(ten(a), ten(b, name="b")).type) == want


def test_tensor_row_reduction_keep_dim_false():
    assert static_shape(tensor.row_max(ten([16, 32]), keep_dim=False).type) == (16,)


def test_tensor_row_reduction_keeps_dim_by_default():
    assert static_shape(tensor.row_sum(ten([16, 32])).type) == (16, 1)
