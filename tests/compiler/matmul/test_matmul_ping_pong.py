"""The tiled matmul's K loop is double-buffered (pypto.lib.matmul rule 8).

Two generations of a K chunk's buffers (Mat, Left, Right) are planned when the machine file's
capacities hold them: chunk k+1's MTE2 loads and MTE1 moves use the other (pong) buffers while the M
pipe multiplies chunk k, and InsertSync orders each buffer with its own flag (no PIPE_ALL barrier).
When two generations do not fit, the K loop is single-buffered and the pass log says why.
"""

import re

import numpy as np
from conftest import needs_emulator
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto.lib.matmul as mm
import pyptoemu
from pypto import DataType, ir
from pypto.ir import IRBuilder
from pypto.ir.compiler import compile_program
from pypto.ir.op import tensor
from pypto.passes.convert_tensor_to_block_ops import ConvertTensorToBlockOpsPass
from pypto.passes.manager import PassManager
from pypto.runtime import run


def matmul_program(m: int, k: int, n: int):
    ib = IRBuilder()
    with ib.program("PingPong") as p, ib.function("mm", type=ir.FunctionType.InCore) as f:
        a = f.param("a", ir.TensorType([m, k], DataType.FP16))
        b = f.param("b", ir.TensorType([k, n], DataType.FP16))
        c = tensor.matmul(a, b, out_dtype=DataType.FP32)
        f.return_type(c.type)
        ib.return_stmt(ib.let("c", c))
    return p.get_result()


def check(m: int, k: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    r = run(matmul_program(m, k, n), a, b)
    assert r.status == "ok", r.errors()
    # the FP16 operands are exact in FP32; the FP32 sum of K unit-size products drifts with K
    np.testing.assert_allclose(r.outputs[0].astype(np.float64), want, rtol=1e-5, atol=2e-6 * k)


def matmul_log(program) -> list[str]:
    pm = PassManager.get_strategy()
    pm.passes = pm.passes[:[type(p) for p in pm.passes].index(ConvertTensorToBlockOpsPass) + 1]
    pm.run_passes(program)
    return pm.passes[-1].log


@needs_emulator
@settings(max_examples=6, deadline=None)
@given(m=st.sampled_from([1, 17, 100]), n=st.sampled_from([1, 30, 131, 300]),
       k=st.sampled_from([2100, 2600, 3100]))
def test_double_buffered_k_loop_matches_numpy(m, n, k):
    """Ragged M, N and K, K over several chunks (more than one L1 tile: the K loop, its peeled first
    group and its tail group), one N block (K loop) or several (A panel, unrolled K)."""
    t = mm.plan_matmul(m, n, k, DataType.FP16, DataType.FP32)
    assert t.depth == 2 and t.bk < k
    check(m, k, n, seed=m + n + k)


def _loop_body(pto: str) -> str:
    return pto[pto.index("scf.for"):]


def test_k_loop_alternates_two_buffers_per_space_with_flags_not_barriers():
    """64 x 4096 @ 4096 x 64: 16 K chunks of 256, a loop of two-chunk groups. Inside the loop the two
    chunks load into four distinct Mat tiles and move into two Left and two Right tiles; each Mat
    buffer has its own MTE1 -> MTE2 event and each L0 pair its own M -> MTE1 event."""
    assert matmul_log(matmul_program(64, 4096, 64)) == [
        "mm: matmul 64x4096 @ 4096x64: blocks 64x64x256; K loop double-buffered (ping-pong)"]
    pto = compile_program(matmul_program(64, 4096, 64), with_cpp=False).pto["mm"]
    assert "barrier" not in pto
    body = _loop_body(pto)
    tiles = {v: (loc, addr) for v, addr, loc in
             re.findall(r"(%\d+) = pto.alloc_tile addr = (%c\d+)_i64 : !pto.tile_buf<loc=(\w+)", pto)}
    loaded = re.findall(r"pto.tload ins\([^)]*\) outs\((%\d+)", body)
    moved = re.findall(r"pto.tmov ins\((%\d+)[^)]*\) outs\((%\d+)", body)
    assert len(loaded) == 4 and len({tiles[v] for v in loaded}) == 4
    assert len({tiles[d] for _, d in moved if tiles[d][0] == "left"}) == 2
    assert len({tiles[d] for _, d in moved if tiles[d][0] == "right"}) == 2
    waits = set(re.findall(r"wait_flag\[<PIPE_MTE1>, <PIPE_MTE2>, <EVENT_ID(\d)>\]", body))
    assert len(waits) == 4
    assert len(set(re.findall(r"wait_flag\[<PIPE_M>, <PIPE_MTE1>, <EVENT_ID(\d)>\]", body))) == 2


def test_loads_of_the_next_chunk_overlap_the_matmul():
    """On the a2a3 model the MTE2 loads run while the cube multiplies: the run is shorter than the
    M and MTE2 work back to back (single-buffered it was 27723 cycles for 19292 MTE2 + 4355 M busy:
    the pipes took turns)."""
    pto = compile_program(matmul_program(64, 4096, 64), with_cpp=False).pto["mm"]
    r = pyptoemu.run(pto, entry="mm", data=False)
    m_busy, mte2_busy = r.pipes["M"].busy_cycles, r.pipes["MTE2"].busy_cycles
    assert r.cycles < m_busy + mte2_busy
    assert r.pipes["M"].instructions == 16


@needs_emulator
def test_single_buffered_when_two_generations_do_not_fit(monkeypatch):
    """With tiles allowed the whole buffer (SHARE = 1) a second generation cannot fit: the K loop
    falls back to one chunk at a time, says why in the pass log, and is still right."""
    monkeypatch.setattr(mm, "SHARE", 1)
    t = mm.plan_matmul(128, 128, 1000, DataType.FP16, DataType.FP32)
    assert t.depth == 1 and "two generations of the K chunk need" in t.why
    log = matmul_log(matmul_program(128, 1000, 128))
    assert len(log) == 1 and "K loop single-buffered: two generations of the K chunk need" in log[0], log
    check(128, 1000, 128, seed=4)


def test_one_chunk_is_not_pipelined():
    assert matmul_log(matmul_program(100, 130, 70)) == [
        "mm: matmul 100x130 @ 130x70: blocks 112x80x144, A panel in L1; K loop single-buffered: K is one chunk"]
