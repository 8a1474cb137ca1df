"""IRBuilder end to end (programs with loops, ifs, while loops and a call built by hand, then compiled and run),
the printer (round trip through the parser), structural_equal and the verifier."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import pypto.language as pl
from pypto import DataType, ir
from pypto.enums import ForKind, TensorLayout
from pypto.errors import PyptoError
from pypto.ir import IRBuilder
from pypto.ir.compiler import compile_program
from pypto.ir.op import block, tensor
from pypto.runtime import run
from tests.compiler.user_programs.helpers import STRATEGIES, bad_findings, load_file, normal, prog

F, IDX = DataType.FP32, DataType.INDEX
THIS = os.path.abspath(__file__)


def loop_if_program() -> ir.Program:
    """kern: acc = sum_i (x_i if i < n else -x_i) over 4 row blocks; main: create_tensor + call."""
    ib = IRBuilder()
    with ib.program("BLoopIf") as p:
        gk = p.declare_function("kern")
        with ib.function("kern", type=ir.FunctionType.InCore) as f:
            x = f.param("x", ir.TensorType([64, 32], F))
            n = f.param("n", ir.ScalarType(IDX))
            y = f.param("y", ir.TensorType([16, 32], F), direction=ir.ParamDirection.Out)
            f.return_type(ir.TensorType([16, 32], F))
            zero = ib.let("zero", block.full([16, 32], F, 0.0))
            i = ib.var("i", ir.ScalarType(IDX))
            with ib.for_loop(i, 0, 4, 1) as loop:
                acc = loop.iter_arg("acc", zero)
                loop.return_var("acc_out")
                t = ib.let("t", block.load(x, [i * 16, 0], [16, 32]))
                with ib.if_stmt(i < n) as b:
                    b.return_var("part", t.type)
                    ib.emit(ir.YieldStmt((t,)))
                    b.else_()
                    neg = ib.let("neg", block.muls(t, -1.0))
                    ib.emit(ir.YieldStmt((neg,)))
                nxt = ib.let("nxt", block.add(acc, b.output()))
                ib.emit(ir.YieldStmt((nxt,)))
            ib.return_stmt(ib.let("r", block.store(loop.output(), [0, 0], y)))
        with ib.function("main", type=ir.FunctionType.Orchestration) as g:
            x = g.param("x", ir.TensorType([64, 32], F))
            n = g.param("n", ir.ScalarType(IDX))
            g.return_type(ir.TensorType([16, 32], F))
            yb = ib.let("y", tensor.create([16, 32], F))
            call = ir.Call(gk, (x, n, yb), {}, ir.TensorType([16, 32], F))
            ib.return_stmt(ib.let("y2", call))
    return p.get_result()


def while_program() -> ir.Program:
    """acc doubles n times in a while loop with two iter args."""
    ib = IRBuilder()
    with ib.program("BWhile") as p, ib.function("k", type=ir.FunctionType.InCore) as f:
        x = f.param("x", ir.TensorType([16, 32], F))
        n = f.param("n", ir.ScalarType(IDX))
        y = f.param("y", ir.TensorType([16, 32], F), direction=ir.ParamDirection.Out)
        f.return_type(ir.TensorType([16, 32], F))
        t0 = ib.let("t0", block.load(x, [0, 0], [16, 32]))
        with ib.while_loop() as w:
            k = w.iter_arg("k", ir.ConstInt(0, IDX))
            acc = w.iter_arg("acc", t0)
            w.set_condition(k < n)
            w.return_var("k_out")
            w.return_var("acc_out")
            a2 = ib.let("a2", block.add(acc, acc))
            k2 = ib.let("k2", k + 1)
            ib.emit(ir.YieldStmt((k2, a2)))
        ib.return_stmt(ib.let("r", block.store(w.output(1), [0, 0], y)))
    return p.get_result()


def kernel_fn(vname="t", c=0.5, kind=ForKind.Sequential, loopvar="i", layout=None) -> ir.Function:
    ib = IRBuilder()
    view = ir.TensorView((), layout) if layout is not None else None
    with ib.function("f", type=ir.FunctionType.InCore) as f:
        x = f.param("x", ir.TensorType([64, 32], F, None, view))
        y = f.param("y", ir.TensorType([16, 32], F), direction=ir.ParamDirection.Out)
        f.return_type(ir.TensorType([16, 32], F))
        z = ib.let("z", block.full([16, 32], F, 0.0))
        i = ib.var(loopvar, ir.ScalarType(IDX))
        with ib.for_loop(i, 0, 4, 1, kind=kind) as lp:
            a = lp.iter_arg("a", z)
            lp.return_var("a_out")
            t = ib.let(vname, block.load(x, [i * 16, 0], [16, 32]))
            u = ib.let("u", block.muls(t, c))
            ib.emit(ir.YieldStmt((block.add(a, u),)))
        ib.return_stmt(ib.let("r", block.store(lp.output(), [0, 0], y)))
    return f.get_result()


def reparse(node, tmp_path, name: str):
    """Print ``node``, write the text to a file and import it (the way pl.loads would)."""
    path = tmp_path / f"{name}.py"
    path.write_text(ir.python_print(node))
    return getattr(load_file(str(path), tag=str(abs(hash(str(tmp_path))))), name)


# ----------------------------------------------------------------------------- builder end to end


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [0, 2, 4])
def test_builder_loop_if_call_program_runs(strategy, n):
    x = normal((64, 32), seed=30)
    xb = x.reshape(4, 16, 32)
    want = sum(xb[i] if i < n else -xb[i] for i in range(4))
    r = run(loop_if_program(), x, n, strategy=strategy)
    assert not bad_findings(r)
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_builder_while_program_runs(strategy):
    x = normal((16, 32), seed=31)
    r = run(while_program(), x, 3, strategy=strategy)
    assert not bad_findings(r)
    np.testing.assert_allclose(r.outputs[0], x * 8, rtol=1e-6)


def test_builder_program_prints_spec_forms():
    text = ir.python_print(loop_if_program())
    assert "for i, (acc,) in pl.range(4, init_values=(zero,)):" in text
    assert "part: pl.Tile[[16, 32], pl.FP32] = pl.yield_(t)" in text
    assert "acc_out: pl.Tile[[16, 32], pl.FP32] = pl.yield_(nxt)" in text
    assert "y2: pl.Tensor[[16, 32], pl.FP32] = self.kern(x, n, y)" in text
    assert text.index("def kern(") < text.index("def main(")
    w = ir.python_print(while_program())
    assert "for (k, acc,) in pl.while_(init_values=(0, t0,)):" in w or "for (k, acc) in pl.while_(" in w
    assert "pl.cond(k < n)" in w


def test_builder_spans_point_at_the_builder_lines():
    p = loop_if_program()
    k = p.get_function("kern")
    assert k.span.filename == THIS and k.span.line > 0
    for s in k.body.stmts:
        assert s.span.filename == THIS, s


def test_builder_memory_overflow_points_at_the_let():
    ib = IRBuilder()
    with ib.program("Ov") as p, ib.function("k", type=ir.FunctionType.InCore) as f:
        x = f.param("x", ir.TensorType([256, 256], F))
        y = f.param("y", ir.TensorType([256, 256], F), direction=ir.ParamDirection.Out)
        f.return_type(ir.TensorType([256, 256], F))
        a = ib.let("a", block.load(x, [0, 0], [256, 256]))
        line = inspect.currentframe().f_lineno - 1
        ib.return_stmt(ib.let("r", block.store(a, [0, 0], y)))
    with pytest.raises(PyptoError, match="memory space Vec overflows") as e:
        compile_program(p.get_result())
    assert str(e.value).startswith(f"{THIS}:{line}:")


def test_builder_misuse_errors():
    ib = IRBuilder()
    with pytest.raises(PyptoError, match="inside a function"):
        ib.let("a", ir.ConstInt(1, IDX))
    with pytest.raises(PyptoError, match="cannot nest"), ib.function("k"), ib.function("g"):
        pass
    ib = IRBuilder()
    with pytest.raises(PyptoError, match="type override must be a Tensor"), ib.function("k") as f:
        x = f.param("x", ir.TensorType([16, 32], F))
        ib.let("a", x, type=ir.ScalarType(F))


def test_builder_op_error_has_callers_span():
    ib = IRBuilder()
    with pytest.raises(PyptoError) as e, ib.function("k", type=ir.FunctionType.InCore) as f:
        x = f.param("x", ir.TensorType([16, 32], F))
        a = ib.let("a", block.load(x, [0, 0], [16, 32]))
        b = ib.let("b", block.load(x, [0, 0], [16, 16]))
        ib.let("c", block.add(a, b))
    assert str(e.value).startswith(f"{THIS}:"), str(e.value)


# ----------------------------------------------------------------------------- verifier


def test_verifier_missing_yield_and_double_definition():
    ib = IRBuilder()
    with ib.function("k") as f:
        n = f.param("n", ir.ScalarType(IDX))
        f.return_type(ir.ScalarType(IDX))
        with ib.if_stmt(n > 3) as b:
            b.return_var("r", ir.ScalarType(IDX))
            ib.emit(ir.YieldStmt((n * 2,)))
            b.else_()
            ib.let("q", n + 1)
        ib.return_stmt(b.output())
    with pytest.raises(PyptoError, match="must end with a yield"):
        ir.verify(f.get_result(), {"SSAForm", "TypeChecked"})
    ib = IRBuilder()
    with ib.function("k") as f:
        n = f.param("n", ir.ScalarType(IDX))
        v = ib.var("v", ir.ScalarType(IDX))
        ib.assign(v, n + 1)
        ib.assign(v, n + 2)
        ib.return_stmt(v)
    with pytest.raises(PyptoError, match="'v' is defined twice"):
        ir.verify(f.get_result(), {"SSAForm"})


def test_verifier_rejects_branch_dtype_mismatch():
    ib = IRBuilder()
    with ib.function("k") as f:
        n = f.param("n", ir.ScalarType(IDX))
        f.return_type(ir.ScalarType(IDX))
        with ib.if_stmt(n > 3) as b:
            b.return_var("r", ir.ScalarType(IDX))
            ib.emit(ir.YieldStmt((n * 2,)))
            b.else_()
            ib.emit(ir.YieldStmt((ir.ConstFloat(1.0, F),)))
        ib.return_stmt(b.output())
    with pytest.raises(PyptoError):
        ir.verify(f.get_result(), {"TypeChecked"})


# ----------------------------------------------------------------------------- structural_equal


def test_structural_equal_detects_content_changes():
    base = kernel_fn()
    assert ir.structural_equal(base, kernel_fn())
    assert not ir.structural_equal(base, kernel_fn(c=0.25))
    assert not ir.structural_equal(base, kernel_fn(kind=ForKind.Parallel))


def test_structural_equal_matches_definition_sites_not_names():
    assert ir.structural_equal(kernel_fn(), kernel_fn(vname="tt", loopvar="j"))


def test_structural_equal_sees_layout_and_const_dtype():
    assert not ir.structural_equal(kernel_fn(layout=TensorLayout.DN), kernel_fn())
    assert not ir.structural_equal(ir.ConstInt(1, DataType.INDEX), ir.ConstInt(1, DataType.INT64))


# ----------------------------------------------------------------------------- printer round trip


def test_text_parser_entry_points_exist():
    text = ir.python_print(prog("orchestration", "InOutTwice"))
    p2 = pl.parse(text)
    assert ir.structural_equal(p2, prog("orchestration", "InOutTwice"))
    assert callable(pl.loads) and callable(pl.parse_program) and callable(pl.loads_program)


def test_round_trip_builder_program_without_full(tmp_path):
    p = while_program()
    p2 = reparse(p, tmp_path, "BWhile")
    assert ir.python_print(p2) == ir.python_print(p)


def test_round_trip_block_full(tmp_path):
    p = prog("printer_forms", "FullTile")
    assert ir.structural_equal(reparse(p, tmp_path, "FullTile"), p)


def test_round_trip_natural_while(tmp_path):
    p = prog("printer_forms", "NaturalWhile")
    assert ir.structural_equal(reparse(p, tmp_path, "NaturalWhile"), p)


def test_round_trip_tuple_unpacking_call(tmp_path):
    p = prog("printer_forms", "TupleCall")
    assert ir.structural_equal(reparse(p, tmp_path, "TupleCall"), p)


def test_round_trip_dynamic_dims(tmp_path):
    p = prog("printer_forms", "DynRows")
    assert ir.python_print(reparse(p, tmp_path, "DynRows")) == ir.python_print(p)


def test_printer_keeps_tensor_layout():
    text = ir.python_print(prog("printer_forms", "DNLayout").get_function("k"))
    param = text[text.index("x: "):text.index(", o: ")]
    assert "DN" in param, param


@pytest.mark.parametrize("example", ["tile_add", "matmul", "row_softmax"])
def test_round_trip_examples(tmp_path, example):
    root = os.path.dirname(os.path.dirname(os.path.dirname(THIS)))
    mod = load_file(os.path.join(root, "examples", example + ".py"), tag="ex_")
    p = next(v for v in vars(mod).values() if isinstance(v, ir.Program))
    p2 = reparse(p, tmp_path, p.name)
    assert ir.structural_equal(p2, p)
