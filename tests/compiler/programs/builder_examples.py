"""The IRBuilder examples of seed 004 and spec §5.7."""

from pypto import DataType, ir
from pypto.ir import IRBuilder
from pypto.ir.op import block, system, tensor


def block_computation() -> ir.Program:
    ib = IRBuilder()
    with ib.program("BlockComputation") as p, ib.function("block_computation", type=ir.FunctionType.InCore) as f:
        input_a = f.param("input_a", ir.TensorType([128, 128], DataType.FP32))
        input_b = f.param("input_b", ir.TensorType([128, 128], DataType.FP32))
        output = f.param("output", ir.TensorType([128, 1], DataType.FP32), direction=ir.ParamDirection.Out)
        f.return_type(ir.TensorType([128, 1], DataType.FP32))
        tile_a = ib.let("tile_a", block.load(input_a, [0, 0], [32, 128]))
        tile_b = ib.let("tile_b", block.load(input_b, [0, 0], [32, 128]))
        tile_mul = ib.let("tile_mul", block.mul(tile_a, tile_b))
        tile_sqrt = ib.let("tile_sqrt", block.sqrt(tile_mul))
        tile_sum = ib.let("tile_sum", block.sum(tile_sqrt, axis=1, keepdim=True))
        result = ib.let("result", block.store(tile_sum, [0, 0], output))
        ib.return_stmt(result)
    return p.get_result()


def tensor_example() -> ir.Function:
    ib = IRBuilder()
    with ib.function("tensor_example") as f:
        input_a = f.param("input_a", ir.TensorType([128, 64, 32], DataType.FP32))
        input_b = f.param("input_b", ir.TensorType([128, 64, 32], DataType.FP32))
        f.return_type(ir.TensorType([128, 64, 32], DataType.FP32))
        result = ib.let("result", tensor.add(input_a, input_b))
        ib.return_stmt(result)
    return f.get_result()


def sync_example() -> ir.Function:
    ib = IRBuilder()
    with ib.function("sync") as f:
        ib.emit(system.bar_all())
        ib.emit(system.sync_src(set_pipe=2, wait_pipe=4, event_id=0))
        ib.emit(system.sync_dst(set_pipe=2, wait_pipe=4, event_id=0))
    return f.get_result()


def halve() -> ir.Program:
    ib = IRBuilder()
    with ib.program("Halve") as p, ib.function("halve", type=ir.FunctionType.InCore) as f:
        src = f.param("src", ir.TensorType([16, 64], DataType.FP32))
        dst = f.param("dst", ir.TensorType([16, 64], DataType.FP32), direction=ir.ParamDirection.Out)
        f.return_type(ir.TensorType([16, 64], DataType.FP32))
        t = ib.let("t", block.load(src, [0, 0], [16, 64]))
        h = ib.let("h", block.muls(t, 0.5))
        ib.return_stmt(ib.let("r", block.store(h, [0, 0], dst)))
    return p.get_result()


def loop_with_iter_arg() -> ir.Program:
    """acc = sum over 4 row blocks of x, built with for_loop/iter_arg/yield."""
    ib = IRBuilder()
    with ib.program("LoopSum") as p, ib.function("loop_sum", type=ir.FunctionType.InCore) as f:
        x = f.param("x", ir.TensorType([64, 32], DataType.FP32))
        y = f.param("y", ir.TensorType([16, 32], DataType.FP32), direction=ir.ParamDirection.Out)
        f.return_type(ir.TensorType([16, 32], DataType.FP32))
        zero = ib.let("zero", block.full([16, 32], DataType.FP32, 0.0))
        i = ib.var("i", ir.ScalarType(DataType.INDEX))
        with ib.for_loop(i, 0, 4, 1) as loop:
            acc = loop.iter_arg("acc", zero)
            loop.return_var("acc_out")
            t = ib.let("t", block.load(x, [i * 16, 0], [16, 32]))
            nxt = ib.let("nxt", block.add(acc, t))
            ib.emit(ir.YieldStmt((nxt,)))
        ib.return_stmt(ib.let("r", block.store(loop.output(), [0, 0], y)))
    return p.get_result()
