"""One paged-attention decode step with @pl.jit: the query heads of one token attend to a KV cache
stored in fixed-size pages, found through a block table.

The entry reads the block table on the host (``pl.read``), and for each page the context uses it
dispatches: the cube's ``S = Q @ K_page^T`` (``pl.tile.transpose_view``), the vector cores' online
softmax over the page's valid keys (the last page is partial: ``valid_shape=`` plus
``pl.fillpad(pad_value=pl.PadValue.min)``, so its tail contributes ``exp(-inf) = 0``), the cube's
``P @ V_page`` and the vector cores' rescaled accumulation. All query heads share one KV head.

Run: ``python examples/jit/paged_attention_decode.py`` prints OK.
"""

import numpy as np

import pypto.language as pl

HEADS, D, PAGE = 16, 64, 32  # query heads, head dim, tokens per page
NEG = -1.0e30


@pl.jit
def paged_attention_decode(q: pl.Tensor, k_cache: pl.Tensor, v_cache: pl.Tensor, block_table: pl.Tensor,
                           o: pl.Out[pl.Tensor], context_len: int):
    scale = 1.0 / D**0.5
    s_buf = pl.create_tensor([HEADS, PAGE], dtype=pl.FP32)
    p_buf = pl.create_tensor([HEADS, PAGE], dtype=pl.FP16)
    pv_buf = pl.create_tensor([HEADS, D], dtype=pl.FP32)
    m_buf = pl.create_tensor([HEADS, 1], dtype=pl.FP32)
    l_buf = pl.create_tensor([HEADS, 1], dtype=pl.FP32)
    a_buf = pl.create_tensor([HEADS, 1], dtype=pl.FP32)
    acc = pl.create_tensor([HEADS, D], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="init_state"):
        m_buf[:, :] = pl.full([HEADS, 1], dtype=pl.FP32, value=NEG)
        l_buf[:, :] = pl.full([HEADS, 1], dtype=pl.FP32, value=0.0)
        acc[:, :] = pl.full([HEADS, D], dtype=pl.FP32, value=0.0)
    pages = (context_len + PAGE - 1) // PAGE
    for b in pl.range(pages):
        page = pl.cast(pl.read(block_table, b), pl.INDEX)
        row = page * PAGE
        valid = pl.min(context_len - b * PAGE, PAGE)  # keys of this page the context uses
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="page_scores"):
            qm = pl.load(q, [0, 0], [HEADS, D], target_memory=pl.Mem.Mat)
            km = pl.load(k_cache, [row, 0], [PAGE, D], target_memory=pl.Mem.Mat)
            kt = pl.move(pl.tile.transpose_view(km), target_memory=pl.Mem.Right)
            s_buf[:, :] = pl.matmul(pl.move(qm, target_memory=pl.Mem.Left), kt)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="page_softmax"):
            raw = pl.load(s_buf, [0, 0], [HEADS, PAGE], valid_shape=[HEADS, valid])
            s = pl.muls(pl.fillpad(raw, pad_value=pl.PadValue.min), scale)
            tmp = pl.create_tile([HEADS, PAGE], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            m_old = m_buf[:, :]
            m_new = pl.maximum(m_old, pl.row_max(s, tmp))
            p = pl.exp(pl.row_expand_sub(s, m_new))
            alpha = pl.exp(pl.sub(m_old, m_new))
            l_buf[:, :] = pl.add(pl.mul(l_buf[:, :], alpha), pl.row_sum(p, tmp))
            m_buf[:, :] = m_new
            a_buf[:, :] = alpha
            p_buf[:, :] = pl.cast(p, pl.FP16)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="page_values"):
            pm = pl.load(p_buf, [0, 0], [HEADS, PAGE], target_memory=pl.Mem.Mat)
            vm = pl.load(v_cache, [row, 0], [PAGE, D], target_memory=pl.Mem.Mat)
            pv_buf[:, :] = pl.matmul(pl.move(pm, target_memory=pl.Mem.Left), pl.move(vm, target_memory=pl.Mem.Right))
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="page_accumulate"):
            acc[:, :] = pl.add(pl.row_expand_mul(acc[:, :], a_buf[:, :]), pv_buf[:, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="normalize"):
        o[:, :] = pl.row_expand_div(acc[:, :], l_buf[:, :])


def reference(q: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray, block_table: np.ndarray,
              context_len: int) -> np.ndarray:
    """Gather the context's keys and values page by page, then ordinary softmax attention."""
    pages = -(-context_len // PAGE)
    rows = np.concatenate([np.arange(p * PAGE, p * PAGE + PAGE) for p in block_table[:pages]])[:context_len]
    k, v = k_cache[rows].astype(np.float64), v_cache[rows].astype(np.float64)
    s = q.astype(np.float64) @ k.T / np.sqrt(D)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


def main() -> None:
    rng = np.random.default_rng(11)
    num_pages, context_len = 8, 100  # 4 pages used, the last one holds 4 tokens
    q = rng.standard_normal((HEADS, D)).astype(np.float16)
    k_cache = rng.standard_normal((num_pages * PAGE, D)).astype(np.float16)
    v_cache = rng.standard_normal((num_pages * PAGE, D)).astype(np.float16)
    block_table = rng.permutation(num_pages).astype(np.int32)
    o = np.zeros((HEADS, D), np.float32)
    paged_attention_decode(q, k_cache, v_cache, block_table, o, context_len)
    np.testing.assert_allclose(o, reference(q, k_cache, v_cache, block_table, context_len), rtol=2e-3, atol=2e-3)
    r = paged_attention_decode.last_result
    print(f"{r.cycles} cycles ({r.time_us:.2f} us), {r.launches} launches on {len(r.cores)} cores")
    print("OK")


if __name__ == "__main__":
    main()
