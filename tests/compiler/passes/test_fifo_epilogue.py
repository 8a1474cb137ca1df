"""A matmul with an element-wise epilogue in one kernel or ``pl.at`` region stays one group kernel
(pypto.passes.fifo_epilogue): the cube pushes each block of the product to the two AIVs through the
C2V FIFO, each AIV finishes its rows and stores them; the product never goes to GM. Checked against
NumPy (float64 on the same rounded inputs; the tolerance grows with K) on ragged shapes, in the
generated .pto (FIFO ops in the right sections, no GM workspace), and in the pass log (the form
chosen, or why the GM form was kept)."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto.passes.manager import PassManager


@pl.jit
def linear_relu(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear"):
        y = pl.relu(pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b))
    return y


@pl.jit
def gated_residual(x: pl.Tensor, w: pl.Tensor, r: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gated"):
        y = pl.add(pl.sigmoid(pl.mul(pl.matmul(x, w, out_dtype=pl.FP32), 0.5)), r)
    return y


@pl.jit
def row_scaled_fp16(x: pl.Tensor, w: pl.Tensor, s: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scaled"):
        y = pl.cast(pl.mul(pl.matmul(x, w, out_dtype=pl.FP32), s), pl.FP16)
    return y


@pl.jit
def softmax_of_product(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
        y = pl.softmax(pl.matmul(x, w, out_dtype=pl.FP32))
    return y


def _rand(shape: tuple, dtype, seed: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def _atol(k: int) -> float:
    return 2e-6 * k + 1e-6


def test_linear_relu_is_one_group_kernel_and_matches_numpy():
    x, w, b = _rand((100, 130), np.float16, 1), _rand((130, 70), np.float16, 2), _rand((1, 70), np.float32, 3)
    y = np.zeros((100, 70), np.float32)
    linear_relu(x, w, b, y)
    np.testing.assert_allclose(y, np.maximum(_f64(x) @ _f64(w) + b, 0), rtol=1e-5, atol=_atol(130))
    r = linear_relu.last_result
    assert r.launches == 1
    assert {c.id for c in r.cores if c.cycles > 0} == {"AIC0", "AIV0", "AIV1"}


def test_other_element_wise_epilogues():
    x, w, res = _rand((37, 64), np.float32, 4), _rand((64, 50), np.float32, 5), _rand((37, 50), np.float32, 6)
    y = np.zeros((37, 50), np.float32)
    gated_residual(x, w, res, y)
    want = 1.0 / (1.0 + np.exp(-0.5 * (_f64(x) @ _f64(w)))) + res
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=_atol(64))
    assert gated_residual.last_result.launches == 1
    # a row-vector operand ([M, 1]: each AIV loads its rows of it) and an FP16 result
    x16, w16, s = _rand((45, 32), np.float16, 7), _rand((32, 24), np.float16, 8), _rand((45, 1), np.float32, 9)
    y16 = np.zeros((45, 24), np.float16)
    row_scaled_fp16(x16, w16, s, y16)
    want16 = (_f64(x16) @ _f64(w16)) * s
    np.testing.assert_allclose(_f64(y16), want16, rtol=2e-3, atol=2e-3 * np.abs(want16).max())


@settings(max_examples=6, deadline=None)
@example(m=1, k=13, n=5)  # one valid row: the second AIV only pops and frees
@example(m=33, k=64, n=70)  # a ragged block with rows for both AIVs
@given(m=st.sampled_from([1, 9, 16, 33, 300]), k=st.sampled_from([1, 13, 64]), n=st.sampled_from([1, 5, 31, 70]))
def test_ragged_shapes_split_between_the_aivs(m, k, n):
    # a block's valid rows are shared by the two AIVs (up to half each); when the second half is
    # empty the second AIV only pops and frees its slot
    x, w, b = _rand((m, k), np.float32, m + k), _rand((k, n), np.float32, k + n), _rand((1, n), np.float32, n)
    y = np.full((m, n), 7.0, np.float32)
    linear_relu(x, w, b, y)
    np.testing.assert_allclose(y, np.maximum(_f64(x) @ _f64(w) + b, 0), rtol=1e-5, atol=_atol(k))


def test_the_pto_pushes_the_product_through_the_c2v_fifo():
    x, w, b = np.zeros((100, 130), np.float16), np.zeros((130, 70), np.float16), np.zeros((1, 70), np.float32)
    compiled = linear_relu.compile(x, w, b, np.zeros((100, 70), np.float32)).compiled
    (text,) = compiled.pto.values()
    cube, vector = text.split("pto.section.vector")
    assert "pto.section.cube" in cube
    # an explicit C2V pipe of 2 slots (pl.cross_core_slot's default depth): the cube imports the AIVs' ring
    assert re.search(r"pto\.import_reserved_buffer \{name = \"c2v_fifo\"", cube)
    assert re.search(r"pto\.initialize_l2l_pipe \{dir_mask = 1, slot_size = \d+, slot_num = 2\}", cube)
    assert re.search(r"pto\.reserve_buffer \{name = \"c2v_fifo\".*location = #pto\.address_space<vec>", vector)
    assert re.search(r"pto\.tpush\(%\d+, %\d+ : !pto\.tile_buf<loc=acc.*, !pto\.pipe\) \{split = 1\}", cube)
    assert "pto.declare_tile" in vector and "pto.tpop(" in vector and re.search(r"pto\.tfree\(%\d+ : !pto\.pipe\)", vector)
    assert "tstore" not in cube  # the cube stores nothing: the product leaves it only through the FIFO
    assert "tmatmul" in cube and "tmatmul" not in vector and "tadd" in vector and "trelu" in vector
    # the kernel's GM arguments are x, w, b, y: no workspace for the product
    assert re.search(r"func\.func @\w+\(%arg0: !pto\.ptr<f16>, %arg1: !pto\.ptr<f16>, %arg2: !pto\.ptr<f32>, "
                     r"%arg3: !pto\.ptr<f32>\)", text)


def test_the_pass_log_says_which_form_and_why(tmp_path):
    x, w = np.zeros((64, 96), np.float16), np.zeros((96, 80), np.float16)
    y = np.zeros((64, 80), np.float32)
    source = softmax_of_product.compile(x, w, y).source_program
    PassManager.get_strategy().run_passes(source, dump_ir=True, output_dir=str(tmp_path))
    (dump,) = (tmp_path / "passes_dump").glob("*_after_SplitCubeVector.py")
    log = "".join(line for line in dump.read_text().splitlines(keepends=True) if line.startswith("# split-"))
    assert "split 'scores" in log and "through GM" in log
    assert "not one group kernel with a C2V FIFO because pl.softmax" in log and "is not element-wise" in log


@pl.jit
def biased_fp16_product(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="biased16"):
        y = pl.add(pl.matmul(x, w), b)  # FP16 x FP16 -> an FP16 product
    return y


def test_a_product_of_another_dtype_is_cast_by_the_aivs():
    # was the GM form (two launches: "the product is FP16, not the cube's FP32 accumulator"): the FIFO
    # carries the FP32 accumulator, each AIV rounds its half to FP16 once and adds the FP16 bias
    x, w, b = _rand((33, 40), np.float16, 21, 0.5), _rand((40, 70), np.float16, 22), _rand((1, 70), np.float16, 23)
    y = np.zeros((33, 70), np.float16)
    biased_fp16_product(x, w, b, y)
    assert biased_fp16_product.last_result.launches == 1
    product = (_f64(x) @ _f64(w)).astype(np.float16)
    want = _f64((product.astype(np.float32) + b.astype(np.float32)).astype(np.float16))
    np.testing.assert_allclose(_f64(y), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
    (text,) = biased_fp16_product.compile(x, w, b, y).compiled.pto.values()
    cube, vector = text.split("pto.section.vector")
    assert re.search(r"pto\.tpush\(%\d+, %\d+ : !pto\.tile_buf<loc=acc, dtype=f32", cube)
    popped = re.search(r"pto\.tpop\((%\d+), %\d+ : !pto\.tile_buf<loc=vec, dtype=f32", vector).group(1)
    assert re.search(rf"pto\.tcvt ins\({popped} [^:]*: !pto\.tile_buf<loc=vec, dtype=f32.*outs\(%\d+ : "
                     r"!pto\.tile_buf<loc=vec, dtype=f16", vector)
    assert "tstore" not in cube
