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


@pl.program
class MulKernelAsWritten:  # seed 000's example, not run through the passes
    @pl.function
    def mul_kernel_2d(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
                      c: pl.Tensor[[32, 32], pl.FP32]):
        tile_a = pl.load(a, [0, 0], [32, 32])
        tile_b = pl.load(b, [0, 0], [32, 32])
        pl.store(pl.mul(tile_a, tile_b), [0, 0], [32, 32], c)


def test_pto_codegen_of_a_program_as_written_runs_the_passes_first():
    # it failed with "'a' does not resolve to a tensor parameter" at the first load
    text = codegen.PTOCodegen().generate(MulKernelAsWritten)
    assert text == codegen.PTOCodegen().generate(compile_program(MulKernelAsWritten, with_cpp=False).program)
    assert "pto.tmul" in text and "mul_kernel_2d" in text
