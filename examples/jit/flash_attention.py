"""Flash attention for one head with @pl.jit: online softmax over key/value blocks.

For each block of ``BK`` keys the entry dispatches four tasks (``pl.at`` regions): the cube computes
``S = Q @ K_j^T`` (``pl.tile.transpose_view`` turns the ``[BK, D]`` key block into the right operand),
the vector cores update the running row max ``m``, row sum ``l`` and rescale factor, the cube computes
``P @ V_j``, and the vector cores fold it into the running output. A last task divides by ``l``. The
running state lives in DDR tensors made with ``pl.create_tensor``; fp16 inputs, fp32 accumulation.

Run: ``python examples/jit/flash_attention.py`` prints OK.
"""

import numpy as np

import pypto.language as pl

BQ, BK, D = 64, 64, 64  # query rows, keys per block, head dim
NEG = -1.0e30  # the running max before the first block (exp(NEG - m) is 0)


@pl.jit
def flash_attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
    scale = 1.0 / D**0.5
    s_buf = pl.create_tensor([BQ, BK], dtype=pl.FP32)
    p_buf = pl.create_tensor([BQ, BK], dtype=pl.FP16)
    pv_buf = pl.create_tensor([BQ, D], dtype=pl.FP32)
    m_buf = pl.create_tensor([BQ, 1], dtype=pl.FP32)
    l_buf = pl.create_tensor([BQ, 1], dtype=pl.FP32)
    a_buf = pl.create_tensor([BQ, 1], dtype=pl.FP32)
    acc = pl.create_tensor([BQ, D], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="init_state"):
        m_buf[:, :] = pl.full([BQ, 1], dtype=pl.FP32, value=NEG)
        l_buf[:, :] = pl.full([BQ, 1], dtype=pl.FP32, value=0.0)
        acc[:, :] = pl.full([BQ, D], dtype=pl.FP32, value=0.0)
    for j in pl.range(0, k.shape[0], BK):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
            qm = pl.load(q, [0, 0], [BQ, D], target_memory=pl.Mem.Mat)
            km = pl.load(k, [j, 0], [BK, D], target_memory=pl.Mem.Mat)
            kt = pl.move(pl.tile.transpose_view(km), target_memory=pl.Mem.Right)
            s_buf[:, :] = pl.matmul(pl.move(qm, target_memory=pl.Mem.Left), kt)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="online_softmax"):
            s = pl.muls(s_buf[:, :], scale)
            tmp = pl.create_tile([BQ, BK], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            m_old = m_buf[:, :]
            m_new = pl.maximum(m_old, pl.row_max(s, tmp))
            p = pl.exp(pl.row_expand_sub(s, m_new))
            alpha = pl.exp(pl.sub(m_old, m_new))
            l_buf[:, :] = pl.add(pl.mul(l_buf[:, :], alpha), pl.row_sum(p, tmp))
            m_buf[:, :] = m_new
            a_buf[:, :] = alpha
            p_buf[:, :] = pl.cast(p, pl.FP16)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="p_times_v"):
            pm = pl.load(p_buf, [0, 0], [BQ, BK], target_memory=pl.Mem.Mat)
            vm = pl.load(v, [j, 0], [BK, D], target_memory=pl.Mem.Mat)
            pv_buf[:, :] = pl.matmul(pl.move(pm, target_memory=pl.Mem.Left), pl.move(vm, target_memory=pl.Mem.Right))
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rescale_output"):
            acc[:, :] = pl.add(pl.row_expand_mul(acc[:, :], a_buf[:, :]), pv_buf[:, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="normalize"):
        o[:, :] = pl.row_expand_div(acc[:, :], l_buf[:, :])


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


def main() -> None:
    rng = np.random.default_rng(7)
    q = rng.standard_normal((BQ, D)).astype(np.float16)
    k = rng.standard_normal((4 * BK, D)).astype(np.float16)
    v = rng.standard_normal((4 * BK, D)).astype(np.float16)
    o = np.zeros((BQ, D), np.float32)
    flash_attention(q, k, v, o)
    # P is rounded to fp16 before P @ V (as on the chip): about 1e-3 relative per term
    np.testing.assert_allclose(o, reference(q, k, v), rtol=2e-3, atol=2e-3)
    r = flash_attention.last_result
    print(f"{r.cycles} cycles ({r.time_us:.2f} us), {r.launches} launches on {len(r.cores)} cores")
    print("OK")


if __name__ == "__main__":
    main()
