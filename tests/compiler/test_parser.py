"""The DSL front end: structure of the parsed IR and the accepted call forms."""

from conftest import example, program_file

from pypto.enums import FunctionType, ParamDirection
from pypto.ir import ForStmt, IfStmt, python_print
from pypto.ir.visitor import walk_stmts


def test_vector_add_program_structure():
    prog = example("tile_add").TileAdd
    assert prog.name == "TileAdd"
    k = prog.get_function("add_kernel")
    assert k.type is FunctionType.InCore
    assert [d for d in k.param_directions] == [ParamDirection.In, ParamDirection.In, ParamDirection.Out]
    ops = [s.value.op.name for s in k.body.stmts if hasattr(s, "value") and hasattr(s.value, "op")]
    assert ops == ["block.load", "block.load", "block.add", "block.adds", "block.store"]
    main = prog.get_function("main")
    assert main.type is FunctionType.Orchestration


def test_printer_matches_spec_form():
    text = python_print(example("tile_add").TileAdd)
    assert "tz2: pl.Tile[[128, 128], pl.FP32] = pl.block.adds(tz, 1.0)" in text
    assert "z_out: pl.Tensor[[128, 128], pl.FP32] = pl.block.store(tz2, [0, 0], z)" in text
    assert "self.add_kernel(x, y, z)" in text
    assert text.index("def add_kernel") < text.index("def main")


def test_seed_forms_positional_and_keyword():
    mod = program_file("seed000")
    va = mod.MyKernel.get_function("vector_add")
    assert va.type is FunctionType.Opaque
    kw = mod.KeywordForms.get_function("kw")
    names = [s.value.op.name for s in kw.body.stmts if hasattr(s, "value") and hasattr(s.value, "op")]
    assert names == ["block.load", "block.muls", "block.store"]


def test_loop_with_iter_args_and_if_yields():
    prog = example("iter_args_if").BlockSum
    f = prog.get_function("block_sum")
    loops = [s for s in walk_stmts(f.body) if isinstance(s, ForStmt)]
    ifs = [s for s in walk_stmts(f.body) if isinstance(s, IfStmt)]
    assert len(loops) == 1 and [a.name for a in loops[0].iter_args] == ["acc", "n"]
    assert [v.name for v in loops[0].return_vars] == ["acc_out", "n_out"]
    assert len(ifs) == 1 and [v.name for v in ifs[0].return_vars] == ["part"]


def test_closure_constants_and_loop_var_offsets():
    prog = example("row_softmax").RowSoftmax
    f = prog.get_function("softmax_rows")
    loop = next(s for s in walk_stmts(f.body) if isinstance(s, ForStmt))
    assert (loop.start.value, loop.stop.value, loop.step.value) == (0, 256, 32)
