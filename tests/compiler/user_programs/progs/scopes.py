"""pl.auto_incore with chunked parallel loops (spec §3.1, §3.4, §6.3 SplitChunkedLoops/InterchangeChunkLoops)."""

import pypto.language as pl


@pl.program
class AutoChunk:
    @pl.function
    def main(self, x: pl.Tensor[[128, 32], pl.FP32]) -> pl.Tensor[[128, 32], pl.FP32]:
        out = pl.create_tensor([128, 32], dtype=pl.FP32)
        with pl.auto_incore():
            for i in pl.parallel(0, 8, 1, chunk=4):
                t = pl.load(x, [i * 16, 0], [16, 32])
                u = pl.add(t, 1.0)
                out = pl.store(u, [i * 16, 0], out)
        return out


@pl.program
class ChunkOutsideAutoIncore:
    """chunk= outside an auto_incore scope is kept but ignored (the 8 iterations run as a plain loop)."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[128, 32], pl.FP32], out: pl.Out[pl.Tensor[[128, 32], pl.FP32]]
          ) -> pl.Tensor[[128, 32], pl.FP32]:
        for i in pl.range(0, 8, 1, chunk=3):
            t = pl.load(x, [i * 16, 0], [16, 32])
            u = pl.add(t, 1.0)
            out = pl.store(u, [i * 16, 0], out)
        return out


@pl.program
class AutoChunkOutParam:
    """auto_incore writing the caller's Out buffer; 10 iterations with chunk=4 leave a remainder of 2."""

    @pl.function
    def main(self, x: pl.Tensor[[160, 32], pl.FP32], out: pl.Out[pl.Tensor[[160, 32], pl.FP32]]
             ) -> pl.Tensor[[160, 32], pl.FP32]:
        with pl.auto_incore():
            for i in pl.parallel(0, 10, 1, chunk=4):
                t = pl.load(x, [i * 16, 0], [16, 32])
                u = pl.add(t, 1.0)
                out = pl.store(u, [i * 16, 0], out)
        return out
