"""A linear layer y = relu(x @ w + b) with fp16 operands and an fp16 result, written the way
pypto-lib writes fused projections: one pl.at region holding the matmul and the epilogue, split
LEFT_RIGHT over the two AIVs with a 4-slot cross-core ring; M and N not multiples of 16."""
import pypto.language as pl


@pl.jit
def linear_relu(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear_relu",
               optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT), pl.cross_core_slot(slot_num=4)]):
        y[:, :] = pl.relu(pl.add(pl.matmul(x, w), b))
