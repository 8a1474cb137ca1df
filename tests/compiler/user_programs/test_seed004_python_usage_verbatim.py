"""Seed 004's "Python Usage" block, verbatim, starts with ``from pypto.pypto_core import DataType, ir``
(an ImportError before). Its matmul example is itself inconsistent: ``a`` is [64, 128] and
``a_trans=True`` makes K = 64 against ``b``'s 128 rows, so that line must fail with a message that
says so; with ``a`` given as [128, 64] the same call deduces [64, 64]."""

from __future__ import annotations

import pytest

from pypto.errors import PyptoTypeError


def test_seed004_python_usage_runs_up_to_its_inconsistent_matmul():
    from pypto.ir import op
    from pypto.pypto_core import DataType, ir

    span = ir.Span.unknown()
    dim4, dim8 = ir.ConstInt(4, DataType.INT32, span), ir.ConstInt(8, DataType.INT32, span)
    dim64, dim128 = ir.ConstInt(64, DataType.INT32, span), ir.ConstInt(128, DataType.INT32, span)

    tensor_a = ir.Var("a", ir.TensorType([dim4, dim8], DataType.FP32), span)
    tensor_b = ir.Var("b", ir.TensorType([dim8], DataType.FP32), span)
    result = op.tensor.add(tensor_a, tensor_b)  # Broadcasting: [4,8] + [8] -> [4,8]
    assert [d.value for d in result.type.shape] == [4, 8]

    a = ir.Var("a", ir.TensorType([dim64, dim128], DataType.FP16), span)
    b = ir.Var("b", ir.TensorType([dim128, dim64], DataType.FP16), span)
    with pytest.raises(PyptoTypeError, match=r"K dims differ: \[64, 128\] x \[128, 64\], a_trans=True "
                                             r"\(K = 64 and 128\)"):
        op.tensor.matmul(a, b, out_dtype=DataType.FP32, a_trans=True)
    a = ir.Var("a", ir.TensorType([dim128, dim64], DataType.FP16), span)
    matmul = op.tensor.matmul(a, b, out_dtype=DataType.FP32, a_trans=True)
    assert [d.value for d in matmul.type.shape] == [64, 64]
    assert matmul.type.dtype is DataType.FP32
    assert matmul.kwargs == {"out_dtype": DataType.FP32, "a_trans": True}

    assert ir.is_op_registered("tensor.add")
    assert ir.get_op("tensor.add").name == "tensor.add"
