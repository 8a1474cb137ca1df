"""A tensor-level matmul and vector ops in one kernel run (SplitCubeVector): the kernel is split at the
matmul boundaries into a cube kernel and vector kernels, the intermediates pass through GM, and the
program's result is NumPy's. A matmul with an element-wise epilogue (``relu(x @ w + b)``) stays one
group kernel instead, the product pushed to the AIVs through the C2V FIFO (tests/compiler/passes/
test_fifo_epilogue.py), and so does one whose left operand element-wise ops compute (``exp(x) @ w``:
the AIVs push it to the cube through the V2C FIFO); here they are checked to give the same results.

Covered: ``relu(x @ w + b)``, ``softmax(q @ k^T)`` (the transpose folded into the matmul),
``exp(x) @ w`` (a computed matmul operand), ``x @ w + b`` with an FP16 product, on ragged shapes, in
``@pl.program`` InCore kernels (called from orchestration, alone, storing into an ``Out``
parameter, returning two values) and in ``@pl.jit`` ``pl.at`` regions; a hypothesis test over shapes;
the split kernels' .pto passes the emulator's verifier; a kernel the split cannot take is a located
error saying why. Reference: NumPy in float64 on the same rounded inputs; a matmul's tolerance
grows with K.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_emulator
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto.language as pl
from ptoisa.machine import load_machine
from ptoisa.text.parser import parse_module
from pypto import ir
from pypto.errors import CompileError
from pypto.ir.compiler import compile_program
from pypto.runtime import run
from pyptoemu.api import choose_entry
from pyptoemu.core.verify import verify_module
from pyptoemu.isa.runnable import load_isa

M, K, N = 100, 130, 70  # ragged in every dim: no multiple of the 16-element cube granule


@pl.program
class LinearRelu:
    @pl.function(type=pl.FunctionType.InCore)
    def linear(self, x: pl.Tensor[[M, K], pl.FP32], w: pl.Tensor[[K, N], pl.FP32],
               b: pl.Tensor[[1, N], pl.FP32]) -> pl.Tensor[[M, N], pl.FP32]:
        y = pl.relu(pl.add(pl.matmul(x, w), b))
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, K], pl.FP32], w: pl.Tensor[[K, N], pl.FP32],
             b: pl.Tensor[[1, N], pl.FP32]) -> pl.Tensor[[M, N], pl.FP32]:
        y = self.linear(x, w, b)
        return y


@pl.program
class SoftmaxAlone:
    """The mixed kernel is the program's only function: it becomes the orchestration of its parts."""

    @pl.function(type=pl.FunctionType.InCore)
    def scores(self, q: pl.Tensor[[M, K], pl.FP16], k: pl.Tensor[[N, K], pl.FP16]) -> pl.Tensor[[M, N], pl.FP32]:
        s = pl.softmax(pl.matmul(q, pl.transpose(k, 0, 1), out_dtype=pl.FP32))
        return s


@pl.program
class IntoOut:
    """The vector part stores into the kernel's Out parameter, which the caller passed in."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[M, K], pl.FP16], w: pl.Tensor[[K, N], pl.FP16],
          out: pl.Out[pl.Tensor[[M, N], pl.FP16]]) -> pl.Tensor[[M, N], pl.FP16]:
        out = pl.matmul(pl.exp(x), w)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[M, K], pl.FP16], w: pl.Tensor[[K, N], pl.FP16],
             out: pl.Out[pl.Tensor[[M, N], pl.FP16]]):
        self.k(x, w, out)


@pl.program
class IntoOutThroughAnAlias:
    """The Out parameter's final value is named through an alias: the part still stores into it."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[37, 64], pl.FP32], w: pl.Tensor[[64, 20], pl.FP32],
          y: pl.Out[pl.Tensor[[37, 20], pl.FP32]]) -> pl.Tensor[[37, 20], pl.FP32]:
        t = pl.relu(pl.matmul(x, w))
        y = t
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[37, 64], pl.FP32], w: pl.Tensor[[64, 20], pl.FP32],
             y: pl.Out[pl.Tensor[[37, 20], pl.FP32]]):
        self.k(x, w, y)


@pl.program
class TwoResults:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[37, 64], pl.FP32],
          w: pl.Tensor[[64, 20], pl.FP32]) -> tuple[pl.Tensor[[37, 20], pl.FP32], pl.Tensor[[37, 20], pl.FP32]]:
        h = pl.matmul(x, w)
        r = pl.relu(h)
        return h, r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[37, 64], pl.FP32], w: pl.Tensor[[64, 20], pl.FP32]) -> pl.Tensor[[37, 20], pl.FP32]:
        h, r = self.k(x, w)
        s = pl.sub(r, h)
        return s


@pl.program
class WithTileCode:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32], w: pl.Tensor[[32, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 32])
        o = pl.store(t, [0, 0], o)
        y = pl.relu(pl.matmul(x, w))
        return y


@pl.jit
def linear_relu_region(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear"):
        y = pl.relu(pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b))
    return y


@pl.jit
def biased_fp16_product(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="biased"):
        y = pl.add(pl.matmul(x, w), b)  # FP16 x FP16 -> an FP16 product
    return y


@pl.jit
def independent_vector_op(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pre"):
        b2 = pl.relu(b)  # needs no product: a vector part of the first stage, beside the matmul
        y = pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b2)
    return y


@pl.jit
def softmax_region(q: pl.Tensor, k: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
        y = pl.softmax(pl.matmul(q, pl.transpose(k, 0, 1), out_dtype=pl.FP32))
    return y


def _rand(shape: tuple, dtype, seed: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _mm_atol(k: int) -> float:
    """FP32 accumulation of K unit-size products: a few ulps of the running sum per chunk."""
    return 2e-6 * k


def _split_log(program, tmp_path) -> str:
    ir.compile(program, output_dir=str(tmp_path), dump_passes=True)
    (dump,) = (tmp_path / "passes_dump").glob("*_after_SplitCubeVector.py")
    return "".join(line for line in dump.read_text().splitlines(keepends=True) if line.startswith("# split-"))


@needs_emulator
def test_linear_relu_in_one_kernel_matches_numpy(tmp_path):
    x, w, b = _rand((M, K), np.float32, 1), _rand((K, N), np.float32, 2), _rand((1, N), np.float32, 3)
    r = run(LinearRelu, x, w, b)
    assert r.status == "ok" and r.launches == 1  # one group kernel (was: the cube part, then the vector part)
    np.testing.assert_allclose(r.outputs[0], np.maximum(_f64(x) @ _f64(w) + b, 0), rtol=1e-5, atol=_mm_atol(K))
    log = _split_log(LinearRelu, tmp_path)
    assert "kept 'linear' whole as a group kernel" in log and "through the C2V FIFO (nothing through GM)" in log


@needs_emulator
def test_kernel_alone_becomes_the_orchestration_of_its_parts():
    q, k = _rand((M, K), np.float16, 4), _rand((N, K), np.float16, 5)
    compiled = compile_program(SoftmaxAlone, with_cpp=False)
    # the transpose is folded into the matmul (b_trans): no kernel of its own, nothing through GM for it
    assert compiled.core == {"scores_matmul": "aic", "scores_vector": "aiv"}
    scores = compiled.program.get_function("scores")
    assert scores.type is pl.FunctionType.Orchestration
    r = run(SoftmaxAlone, q, k)
    assert r.status == "ok" and r.launches == 2
    np.testing.assert_allclose(r.outputs[0], _softmax(_f64(q) @ _f64(k).T), rtol=1e-5, atol=1e-6)


@needs_emulator
def test_computed_operand_goes_to_the_cube_through_the_v2c_fifo_into_the_out_parameter():
    # exp(x) @ w: one group kernel, the AIVs push exp(x) chunk by chunk to the cube (was: through GM,
    # two launches)
    x, w = _rand((M, K), np.float16, 6, 0.3), _rand((K, N), np.float16, 7)
    out = np.zeros((M, N), np.float16)
    r = run(IntoOut, x, w, out)
    assert r.status == "ok" and r.launches == 1
    want = _f64(np.exp(x.astype(np.float32)).astype(np.float16)) @ _f64(w)  # exp on the vector core, in FP16
    # an FP16 product: the FP32 accumulator rounded once on the way out
    np.testing.assert_allclose(_f64(out), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())


@needs_emulator
def test_out_parameter_named_through_an_alias_is_written():
    x, w = _rand((37, 64), np.float32, 19), _rand((64, 20), np.float32, 20)
    y = np.zeros((37, 20), np.float32)
    r = run(IntoOutThroughAnAlias, x, w, y)
    assert r.status == "ok" and r.launches == 1  # relu(x @ w): one group kernel
    np.testing.assert_allclose(y, np.maximum(_f64(x) @ _f64(w), 0), rtol=1e-5, atol=_mm_atol(64))


@needs_emulator
def test_two_results_of_a_split_kernel():
    x, w = _rand((37, 64), np.float32, 8), _rand((64, 20), np.float32, 9)
    r = run(TwoResults, x, w)
    assert r.status == "ok"
    h = _f64(x) @ _f64(w)
    np.testing.assert_allclose(r.outputs[0], np.maximum(h, 0) - h, rtol=1e-5, atol=_mm_atol(64))


@needs_emulator
def test_jit_regions_match_numpy():
    x, w = _rand((M, K), np.float16, 10), _rand((K, N), np.float16, 11)
    b32 = _rand((1, N), np.float32, 12)
    y = np.zeros((M, N), np.float32)
    linear_relu_region(x, w, b32, y)
    np.testing.assert_allclose(y, np.maximum(_f64(x) @ _f64(w) + b32, 0), rtol=1e-5, atol=_mm_atol(K))
    assert linear_relu_region.last_result.launches == 1  # the FIFO form (was 2: through GM)

    b16 = _rand((1, N), np.float16, 13)
    y16 = np.zeros((M, N), np.float16)
    biased_fp16_product(x, w, b16, y16)
    product = (_f64(x) @ _f64(w)).astype(np.float16)  # the FP16 product the cube part stores
    want = _f64(product) + _f64(b16)
    np.testing.assert_allclose(_f64(y16), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())

    q, k = _rand((M, K), np.float16, 14), _rand((N, K), np.float16, 15)
    s = np.zeros((M, N), np.float32)
    softmax_region(q, k, s)
    np.testing.assert_allclose(s, _softmax(_f64(q) @ _f64(k).T), rtol=1e-5, atol=1e-6)
    assert set(softmax_region.compile(q, k, s).compiled.core) == {"scores_matmul", "scores_vector"}


@needs_emulator
def test_vector_op_independent_of_the_product_runs_beside_the_matmul():
    x, w, b = _rand((40, 32), np.float16, 16), _rand((32, 24), np.float16, 17), _rand((1, 24), np.float32, 18)
    y = np.zeros((40, 24), np.float32)
    independent_vector_op(x, w, b, y)
    np.testing.assert_allclose(y, _f64(x) @ _f64(w) + np.maximum(b, 0), rtol=1e-5, atol=_mm_atol(32))
    assert independent_vector_op.last_result.launches == 3  # relu(b) and the matmul, then the add


@needs_emulator
@settings(max_examples=6)
@given(m=st.sampled_from([1, 7, 16, 33, 100]), k=st.sampled_from([1, 13, 64, 130]), n=st.sampled_from([1, 5, 31, 70]),
       half=st.booleans())
def test_split_linear_over_shapes(m, k, n, half):
    dtype = np.float16 if half else np.float32
    x, w = _rand((m, k), dtype, m + k), _rand((k, n), dtype, k + n)
    b = _rand((1, n), np.float32, n)
    y = np.zeros((m, n), np.float32)
    linear_relu_region(x, w, b, y)
    np.testing.assert_allclose(y, np.maximum(_f64(x) @ _f64(w) + b, 0), rtol=1e-5, atol=_mm_atol(k))


def test_split_kernels_pass_the_emulators_verifier():
    machine = load_machine("a2a3")
    isa = load_isa(machine=machine)
    for program in (LinearRelu, SoftmaxAlone, IntoOut):
        compiled = compile_program(program, with_cpp=False)
        assert len(compiled.pto) == (2 if program is SoftmaxAlone else 1)  # the others: one group kernel each
        for name, text in compiled.pto.items():
            module = parse_module(text, f"{name}.pto")
            verify_module(module, choose_entry(module, None), isa, machine)  # raises on any error


def test_the_old_refusal_is_gone():
    for program in (LinearRelu, SoftmaxAlone, IntoOut, TwoResults):
        compiled = compile_program(program, with_cpp=False)
        kinds = sorted(compiled.core.values())
        if program in (LinearRelu, IntoOut):
            assert kinds == ["group"]  # the FIFO forms (C2V epilogue, V2C operand)
        else:
            assert kinds.count("aic") == 1 and "aiv" in kinds


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_a_kernel_the_split_cannot_take_says_why():
    with pytest.raises(CompileError) as info:
        compile_program(WithTileCode, with_cpp=False)
    msg = str(info.value)
    assert "cannot share a kernel" not in msg
    mm, load = _line_of("y = pl.relu(pl.matmul(x, w))"), _line_of("t = pl.load(x, [0, 0], [32, 32])")
    assert msg.startswith(f"{__file__}:{mm}:")
    assert (f"the kernel 'k' mixes a tensor-level pl.matmul (line {mm}) with pl.relu, and no core runs both; "
            f"it is not split into cube and vector kernels automatically because it also holds the op "
            f"block.load (line {load})") in msg
