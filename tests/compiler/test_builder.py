"""The IRBuilder API of seed 004."""

from programs import builder_examples as bx

from pypto import DataType, ir
from pypto.ir import ForStmt, IRBuilder, python_print
from pypto.ir.types import static_shape
from pypto.ir.verifier import verify


def test_tensor_example_broadcast_types():
    f = bx.tensor_example()
    assign = f.body.stmts[0]
    assert static_shape(assign.var.type) == (128, 64, 32)
    assert "pl.tensor.add(input_a, input_b)" in python_print(f)


def test_sync_ops_are_eval_statements():
    text = python_print(bx.sync_example())
    assert "pl.system.bar_all()" in text
    assert "pl.system.sync_src(set_pipe=pl.PipeType.MTE3, wait_pipe=pl.PipeType.V, event_id=0)" in text


def test_loop_builder_produces_verifiable_ir():
    prog = bx.loop_with_iter_arg()
    f = prog.get_function("loop_sum")
    loop = next(s for s in f.body.stmts if isinstance(s, ForStmt))
    assert [a.name for a in loop.iter_args] == ["acc"] and loop.return_vars[0].name == "acc_out"
    verify(prog, {"TypeChecked", "SSAForm"})


def test_if_builder_and_spans():
    ib = IRBuilder()
    with ib.function("choose") as f:
        n = f.param("n", ir.ScalarType(DataType.INDEX))
        f.return_type(ir.ScalarType(DataType.INDEX))
        with ib.if_stmt(n > 3) as b:
            b.return_var("r", ir.ScalarType(DataType.INDEX))
            ib.emit(ir.YieldStmt((n * 2,)))
            b.else_()
            ib.emit(ir.YieldStmt((n + 1,)))
        ib.return_stmt(b.output())
    fn = f.get_result()
    verify(fn, {"TypeChecked"})
    assert fn.span.filename.endswith("test_builder.py") and fn.span.line > 0
    assert "if n > 3:" in python_print(fn)
