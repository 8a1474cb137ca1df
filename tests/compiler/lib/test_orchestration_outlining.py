"""Tensor ops written in Orchestration code run as kernels (OutlineTensorOps), never on the host.

Each computing tensor op becomes an InCore kernel ``<parent>_<op>``: the emulator runs it (launches,
pipe instructions), the result is the emulator's, and the orchestration C++ submits it as a task.
The host interpreter refuses computing ops outright.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_emulator

import pypto.language as pl
from pypto.codegen.orchestration import generate_orchestration
from pypto.errors import RuntimeFault
from pypto.ir.compiler import compile_program
from pypto.runtime import run
from pypto.runtime.interpreter import Interpreter


@pl.program
class OrchAdd:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[40, 70], pl.FP32], b: pl.Tensor[[40, 70], pl.FP32]) -> pl.Tensor[[40, 70], pl.FP32]:
        c = pl.add(a, b)
        return c


@pl.program
class OrchChain:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[33, 100], pl.FP32], b: pl.Tensor[[33, 100], pl.FP32]) -> pl.Tensor[[33, 100], pl.FP32]:
        c = pl.sub(a, b)
        d = pl.exp(pl.mul(c, a))  # a nested op gets a kernel of its own, innermost first
        return d


@pl.program
class OrchLoop:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 48], pl.FP32], y: pl.Tensor[[16, 48], pl.FP32]) -> pl.Tensor[[16, 48], pl.FP32]:
        acc = y
        for _i in pl.range(3):
            acc = pl.add(acc, x)
        return acc


@pl.program
class OrchMatmul:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[150, 300], pl.FP16], b: pl.Tensor[[300, 40], pl.FP16]) -> pl.Tensor[[150, 40], pl.FP32]:
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        return c


@pl.program
class OrchIf:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             flag: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
        if flag > 0:
            c = pl.add(a, b)
        else:
            c = pl.mul(pl.sub(a, b), 2.0)
        return c


def rand(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@needs_emulator
def test_orchestration_add_runs_as_a_kernel_and_is_a_cpp_task():
    a, b = rand((40, 70), 1), rand((40, 70), 2)
    r = run(OrchAdd, a, b)
    assert r.launches == 1
    assert r.pipes["V"].instructions >= 1  # the emulator executed the add (tadd on the vector pipe)
    np.testing.assert_allclose(r.outputs[0], a + b, rtol=1e-6)
    compiled = compile_program(OrchAdd)
    assert list(compiled.pto) == ["main_add"]
    assert "pto.tadd" in compiled.pto["main_add"]
    cpp = generate_orchestration(compiled.program, compiled.core)["main"]
    assert cpp.count("pto2_rt_submit_task(") == 1
    assert "make_input_param(ext_a), make_input_param(ext_b), make_output_param(ext_out)" in cpp


@needs_emulator
def test_every_op_of_a_chain_is_a_launch():
    a, b = rand((33, 100), 3), rand((33, 100), 4)
    r = run(OrchChain, a, b)
    # each op is outlined into a launch; FuseLoops then merges the chain's launches into one kernel
    # (the intermediates stay on chip): nothing is evaluated on the host
    assert r.launches == 1
    np.testing.assert_allclose(r.outputs[0], np.exp((a - b) * a), rtol=1e-5)
    compiled = compile_program(OrchChain)
    assert sorted(compiled.pto) == ["main_sub_main_mul_main_exp"]
    cpp = generate_orchestration(compiled.program, compiled.core)["main"]
    assert cpp.count("pto2_rt_submit_task(") == 1


@needs_emulator
def test_op_in_a_host_loop_launches_per_iteration():
    x, y = rand((16, 48), 5), rand((16, 48), 6)
    r = run(OrchLoop, x, y)
    assert r.launches == 3
    np.testing.assert_allclose(r.outputs[0], y + 3 * x, rtol=1e-5)
    cpp = generate_orchestration(compile_program(OrchLoop).program, compile_program(OrchLoop).core)["main"]
    assert "for (" in cpp and cpp.count("pto2_rt_submit_task(") == 1


@needs_emulator
def test_orchestration_matmul_runs_tiled_on_the_cube():
    a, b = rand((150, 300), 7, np.float16), rand((300, 40), 8, np.float16)
    r = run(OrchMatmul, a, b)
    assert r.launches == 1 and r.pipes["M"].instructions == 4  # split-K: 4 chunks of 80 accumulated in L0C
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5, atol=2e-6 * 300)
    compiled = compile_program(OrchMatmul)
    assert compiled.core["main_matmul"] == "aic"
    assert "PTO2_WORKER_CUBE" in generate_orchestration(compiled.program, compiled.core)["main"]


@needs_emulator
@pytest.mark.parametrize("flag,launches", [(1, 1), (0, 2)])
def test_ops_in_host_branches_launch_only_when_taken(flag, launches):
    a, b = rand((16, 32), 9), rand((16, 32), 10)
    r = run(OrchIf, a, b, flag)
    assert r.launches == launches
    np.testing.assert_allclose(r.outputs[0], a + b if flag else (a - b) * 2.0, rtol=1e-6)


def test_host_interpreter_refuses_computing_ops():
    """Not compiled (so not outlined): the interpreter says the op cannot run on the host."""
    func = OrchAdd.get_function("main")
    with pytest.raises(RuntimeFault, match="tensor.add' cannot run on the host"):
        Interpreter(OrchAdd, launch=None).call(func, [np.zeros((40, 70), np.float32)] * 2)
