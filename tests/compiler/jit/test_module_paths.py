"""The module paths jit-era and seed programs import: pypto.backend, pypto.pypto_core.codegen."""

from __future__ import annotations

import pypto.language as pl
from pypto import backend, ir
from pypto.ir.compiler import compile_program
from pypto.pypto_core import codegen
from pypto.runtime import RunConfig


@pl.program
class AddOne:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        y = pl.store(pl.adds(t, 1.0), [0, 0], y)
        return y


def test_pto_codegen_returns_the_kernel_text():
    transformed = compile_program(AddOne, with_cpp=False).program
    text = codegen.PTOCodegen().generate(transformed)
    assert isinstance(text, str)
    assert "add_one" in text and "tadds" in text


def test_backend_type_and_platform_mapping():
    backend.reset_for_testing()
    assert not backend.is_backend_configured()
    backend.set_backend_type(backend.BackendType.Ascend910B)
    assert backend.get_backend_type() is backend.BackendType.Ascend910B
    backend.reset_for_testing()
    assert ir.BackendType is backend.BackendType and backend.BackendType.PTO.value == "PTO"
    assert RunConfig(platform="a5").backend_type is backend.BackendType.Ascend950
    assert RunConfig().backend_type is backend.BackendType.Ascend910B
