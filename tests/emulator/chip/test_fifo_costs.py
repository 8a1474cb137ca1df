"""FIFO hand-offs and async GM copies cost what their A2/A3 data path costs: a C2V push is an
L0C -> GM store on the cube's FIX pipe, each pop a GM -> UB load on the vector core's MTE2 (the
slot staged through GM), an async put a GM -> UB -> GM copy; the numbers come from the machine
file, so these tests recompute them from there."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import pyptoemu
from ptoisa.machine import load_machine
from pyptoemu.core.pipe import OP

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
FORMS = Path(__file__).parent / "forms"
P = load_machine("a2a3").params


def _dma(lat: str, bw: str, nbytes: int) -> int:
    return int(P[lat] + math.ceil(max(nbytes, P["dma_min_burst"]) / P[bw]))


def _ops(r, core_kind: str, name: str) -> list:
    return [i for c in r.chip.cores if c.kind.name == core_kind for i in c.trace_log if i.name == name
            and i.kind == OP]


def test_c2v_push_is_an_l0c_to_gm_store_and_each_pop_a_gm_to_ub_load():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((32, 32)).astype(np.float16)
    r = pyptoemu.run(EXAMPLES / "matmul_c2v_epilogue.pto", inputs={"arg0": a, "arg1": b}, args={"arg3": 32},
                     keep_log=True)
    ref = 0.5 * np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(32, 32), ref, rtol=1e-3, atol=1e-3)
    (push,) = _ops(r, "aic", "tpush_to_aiv")
    assert (push.pipe, push.occupancy) == ("FIX", _dma("lat_l0c_to_gm", "bw_l0c_to_gm", 32 * 32 * 4))
    pops = _ops(r, "aiv", "tpop_from_aic")
    assert len(pops) == 2  # one 16x32 f32 half per vector core
    for pop in pops:
        assert (pop.pipe, pop.occupancy) == ("MTE2", _dma("lat_gm_to_ub", "bw_gm_to_ub", 16 * 32 * 4))
        assert pop.start >= push.done  # the slot is loaded only after the push landed in GM
    # the vector pipe reads the popped tile only after its load completed
    for c in r.chip.cores:
        if c.kind.name == "aiv":
            pop = next(i for i in c.trace_log if i.name == "tpop_from_aic" and i.kind == OP)
            first_v = min(i.start for i in c.trace_log if i.pipe == "V")
            assert first_v >= pop.done


def test_async_put_costs_a_load_and_a_store_through_the_scratch_tile():
    x = np.random.default_rng(3).standard_normal(128).astype(np.float32)
    r = pyptoemu.run(FORMS / "async_put.pto", inputs={"arg1": x}, keep_log=True)
    np.testing.assert_array_equal(r.outputs["arg0"].reshape(-1), x)
    (put,) = [i for i in r.core.trace_log if i.name == "tput_async"]
    want = _dma("lat_gm_to_ub", "bw_gm_to_ub", 512) + _dma("lat_ub_to_gm", "bw_ub_to_gm", 512)
    assert put.occupancy == want
    assert r.cycles >= want  # the wait_async_event really waited for it
