"""A loop-carried tile rebound through a plain name (``m = mn`` at the end of the body) while its old
value is still read after ``mn`` is computed: the old value must survive (it was silently overwritten,
because the alias put ``mn`` into the carried buffer). Written as users write online softmax."""

from __future__ import annotations

import numpy as np

import pypto.language as pl

CHUNK = 64


@pl.jit
def online_softmax(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    rows, cols = x.shape
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="online_softmax"):
        scratch = pl.create_tile([rows, CHUNK], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        m = pl.full([rows, 1], dtype=pl.FP32, value=-1e30)
        s = pl.full([rows, 1], dtype=pl.FP32, value=0.0)
        for c in pl.range(0, cols, CHUNK):
            w = pl.min(CHUNK, cols - c)
            t = pl.fillpad(pl.load(x, [0, c], [rows, CHUNK], valid_shape=[rows, w]), pad_value=pl.PadValue.min)
            m_new = pl.maximum(m, pl.row_max(t, scratch))
            s = pl.add(pl.mul(s, pl.exp(pl.sub(m, m_new))),
                       pl.row_sum(pl.exp(pl.row_expand_sub(t, m_new)), scratch))
            m = m_new
        for c in pl.range(0, cols, CHUNK):
            w = pl.min(CHUNK, cols - c)
            t = pl.load(x, [0, c], [rows, CHUNK], valid_shape=[rows, w])
            pl.store(pl.row_expand_div(pl.exp(pl.row_expand_sub(t, m)), s), [0, c], y)


def test_online_softmax_over_column_chunks_with_a_ragged_tail():
    x = np.random.default_rng(40).standard_normal((16, 300)).astype(np.float32)
    y = np.zeros_like(x)
    online_softmax(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pl.program
class RunningMaxGain:
    @pl.function(type=pl.FunctionType.InCore)
    def kern(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        m = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        acc = pl.full([16, 16], dtype=pl.FP32, value=0.0)
        for c in pl.range(0, 64, 16):
            t = pl.load(x, [0, c], [16, 16])
            mn = pl.maximum(m, t)
            acc = pl.add(acc, pl.sub(mn, m))  # reads the old m after mn exists
            m = mn
        pl.store(acc, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        self.kern(x, out)


def test_program_form_running_max_gain():
    from pypto.runtime import run

    x = np.random.default_rng(41).standard_normal((16, 64)).astype(np.float32)
    r = run(RunningMaxGain, x, np.zeros((16, 16), np.float32))
    # the gains telescope: sum of (max_k - max_{k-1}) = final running max - 0
    want = np.maximum(x.reshape(16, 4, 16).max(axis=1), 0.0)
    np.testing.assert_allclose(r.arrays["out"], want, rtol=1e-6, atol=1e-6)
