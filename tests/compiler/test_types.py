"""Promotion, broadcasting and the op registry."""

import pytest

from pypto.dtype import DataType, promote
from pypto.errors import PyptoTypeError, Span
from pypto.ir import TensorType, TileType, Var, create_op_call, get_op, is_op_registered
from pypto.ir.expr import ConstFloat
from pypto.ir.type_rules import broadcast_shapes
from pypto.ir.types import static_shape
from pypto.ops import block, tensor

S = Span("t.py", 3, 1)


@pytest.mark.parametrize(
    "a,b,want",
    [
        (DataType.INT32, DataType.INT32, DataType.INT32),
        (DataType.INT32, DataType.FP32, DataType.FP32),
        (DataType.INT32, DataType.INT64, DataType.INT64),
        (DataType.UINT32, DataType.INT32, DataType.INT32),
        (DataType.FP16, DataType.FP32, DataType.FP32),
        (DataType.BF16, DataType.FP16, DataType.BF16),
    ],
)
def test_promote(a, b, want):
    assert promote(a, b) is want


def test_promote_is_symmetric_except_equal_width_floats():
    for a in DataType:
        for b in DataType:
            if a.is_float() and b.is_float() and a.bits == b.bits and a is not b:
                continue
            if a.is_unsigned() == b.is_unsigned() and a.bits == b.bits and a is not b and not a.is_float():
                continue
            assert promote(a, b) is promote(b, a), (a, b)


@pytest.mark.parametrize(
    "a,b,want",
    [([4, 8], [4, 8], (4, 8)), ([4, 8], [8], (4, 8)), ([4, 1], [8], (4, 8)), ([1, 8], [4, 8], (4, 8))],
)
def test_broadcast(a, b, want):
    got = broadcast_shapes(TensorType(a, DataType.FP32).shape, TensorType(b, DataType.FP32).shape, "x", S)
    assert static_shape(TensorType(got, DataType.FP32)) == want


def test_broadcast_error_names_both_shapes():
    with pytest.raises(PyptoTypeError, match=r"\[4, 8\] and \[5\]"):
        broadcast_shapes(TensorType([4, 8], DataType.FP32).shape, TensorType([5], DataType.FP32).shape, "op", S)


def test_tensor_add_broadcasts():
    a = Var("a", TensorType([4, 8], DataType.FP32))
    b = Var("b", TensorType([8], DataType.INT32))
    c = tensor.add(a, b)
    assert static_shape(c.type) == (4, 8) and c.type.dtype is DataType.FP32


def test_dynamic_dims_compare_by_identity():
    m = Var("M", __import__("pypto.ir", fromlist=["ScalarType"]).ScalarType(DataType.INDEX))
    a = Var("a", TensorType([m, 8], DataType.FP32))
    b = Var("b", TensorType([m, 8], DataType.FP32))
    assert tensor.add(a, b).type.shape[0] is m


def test_registry_metadata():
    assert is_op_registered("block.add") and is_op_registered("tile.add")
    op = get_op("block.load")
    assert op.category == "BlockOp" and "target_memory" in op.attrs
    assert get_op("system.sync_src").category == "SyncOp"


def test_kwarg_schema_checked():
    t = Var("t", TileType([16, 16], DataType.FP32))
    with pytest.raises(PyptoTypeError, match="unknown keyword 'bogus'"):
        create_op_call("block.exp", [t], {"bogus": 1}, S)
    with pytest.raises(PyptoTypeError, match="takes 1 argument"):
        create_op_call("block.exp", [t, t], {}, S)


def test_tile_shape_mismatch_error():
    a = Var("a", TileType([32, 64], DataType.FP32))
    b = Var("b", TileType([32, 32], DataType.FP32))
    with pytest.raises(PyptoTypeError, match="cannot be broadcast") as e:
        block.add(a, b, span=S)
    assert str(e.value).startswith("t.py:3:1:")


def test_matmul_types():
    from pypto.enums import MemorySpace

    a = Var("a", TileType([64, 32], DataType.FP16))
    b = Var("b", TileType([32, 16], DataType.FP16))
    c = block.matmul(a, b)
    assert static_shape(c.type) == (64, 16) and c.type.dtype is DataType.FP32
    assert c.type.tile_view.fractal == 1024
    bad = Var("bad", TileType([16, 16], DataType.FP16))
    with pytest.raises(PyptoTypeError, match="K dims differ"):
        block.matmul(a, bad)
    t = Var("t", TensorType([64, 64], DataType.FP16))
    assert block.load(t, [0, 0], [32, 32], target_memory=MemorySpace.Mat).type.tile_view.blayout.name == "col_major"


def test_row_reduction_is_column_vector():
    t = Var("t", TileType([32, 64], DataType.FP32))
    tmp = Var("tmp", TileType([32, 64], DataType.FP32))
    r = block.row_max(t, tmp)
    assert static_shape(r.type) == (32, 1) and r.type.tile_view.blayout.name == "col_major"


def test_float_literal_promotes_and_const_keeps_tile_dtype():
    """Spec §2.1: a float literal is FP32, so FP16 x 0.5 deduces FP32; an int literal or a typed
    constant keeps the tile's dtype."""
    t = Var("t", TileType([16, 16], DataType.FP16))
    assert block.muls(t, 0.5).type.dtype is DataType.FP32
    assert block.muls(t, 2).type.dtype is DataType.FP16
    assert block.muls(t, ConstFloat(0.5, DataType.FP16)).type.dtype is DataType.FP16
    assert block.cmps(t, 0.5).args[1].dtype is DataType.FP16
