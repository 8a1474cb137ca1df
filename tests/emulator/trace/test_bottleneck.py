"""The summary's bound comes from the critical path, not from the busiest pipe."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pyptoemu
from tests.emulator.core.kernels import binary_kernel, pview, vec

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _loads(n: int) -> str:
    tile = vec(64, 64)
    loads = "\n".join(f"    pto.tload ins(%p0 : {pview(64, 64)}) outs(%t : {tile})" for _ in range(n))
    return binary_kernel(f"    %t = pto.alloc_tile : {tile}\n{loads}", rows=64, cols=64, nargs=1)


def test_a_stream_of_loads_is_bound_by_mte2_work():
    res = pyptoemu.run(_loads(6))
    assert res.bound_pipe == "MTE2"
    assert res.bound.startswith("MTE2-bound: ")
    share = int(res.bound.split(": ")[1].split("%")[0])
    busy = 100 * res.pipes["MTE2"].busy_cycles / res.cycles
    assert share >= 95 and abs(share - busy) <= 2


def test_a_single_buffered_chain_is_latency_bound_on_its_flags():
    """load -> scale -> store with one buffer: every pipe waits for the one before, so no pipe is
    busy half the time; V spends most of the run blocked on the MTE2 -> V flag at line 38."""
    kernel = EXAMPLES / "single_buffer_1024.pto"
    res = pyptoemu.run(kernel)
    assert max(p.busy_cycles for p in res.pipes.values()) < 0.5 * res.cycles
    assert res.bound.startswith("latency-bound: ")
    assert "waiting on MTE2->V flags at line 38" in res.bound
    wait_line = kernel.read_text().splitlines()[37]
    assert "pto.wait_flag[<PIPE_MTE2>, <PIPE_V>" in wait_line
    share = int(res.bound.split(": ")[1].split("%")[0])
    assert 60 <= share <= 95


def test_a_short_one_shot_kernel_is_bound_by_its_two_loads():
    res = pyptoemu.run(EXAMPLES / "vadd_32x32.pto")
    assert res.bound.startswith("MTE2-bound: ")  # two loads then a short add and one store
    assert res.bound_pipe == "MTE2"


def test_on_a_chip_the_path_follows_the_hand_off_to_the_other_core():
    """The vector cores finish last, but what held them up is the cube core's work, which reaches
    them through the FIFO: the verdict names the pop they waited on (a path confined to the core
    that finished last could only call the time the scalar unit's)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    kernel = EXAMPLES / "matmul_c2v_epilogue.pto"
    res = pyptoemu.run(kernel, inputs={"arg0": a, "arg1": b}, args={"arg3": 32})
    assert res.bound.startswith("latency-bound: ")
    assert "of the makespan waiting on tpop_from_aic at line 63" in res.bound
    assert "pto.tpop_from_aic" in kernel.read_text().splitlines()[62]
    share = int(res.bound.split(": ")[1].split("%")[0])
    assert 50 <= share <= 95


def test_a_full_barrier_reached_after_the_pipes_drained_follows_the_scalar_units_work():
    """One load, then 4000 iterations of scalar arithmetic, then a full barrier: the load completed
    long before the scalar unit got to the barrier, so what led to it is the scalar unit issuing
    (the path used to go through the load and call the scalar unit's time sync on S)."""
    tile = vec(64, 64)
    body = f"""    %t = pto.alloc_tile : {tile}
    pto.tload ins(%p0 : {pview(64, 64)}) outs(%t : {tile})
    %n = arith.constant 4000 : index
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {{
      %a = arith.addi %acc, %i : index
      scf.yield %a : index
    }}
    pto.barrier <PIPE_ALL>"""
    res = pyptoemu.run(binary_kernel(body, rows=64, cols=64, nargs=1), data=False)
    assert res.pipes["MTE2"].busy_cycles < 0.2 * res.cycles
    assert res.bound.startswith("issue-bound: "), res.bound
    share = int(res.bound.split(": ")[1].split("%")[0])
    assert share >= 90
