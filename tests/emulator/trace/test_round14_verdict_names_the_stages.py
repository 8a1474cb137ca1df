"""Red team 14: what a latency-bound verdict tells an engineer deciding what to optimise.

A wait's blocked cycles are never idle time of the critical path: while a pipe waits on a flag, the
path runs through the pipes that will release it. 'latency-bound: 64% of the makespan waiting on
V->MTE3 flags (largest pipe share on the critical path: MTE3 34%)' (a load -> compute -> store chain)
read as if the flag cost 64% and no pipe mattered, when MTE2 and V worked those cycles one after
the other. The verdict now names the pipes whose work makes up the path (each at least 10% of it),
so the stages to overlap or shorten are on the line. And a share just below the bound's threshold
no longer prints as the threshold ('MTE2 50%' next to 'latency-bound', where 50% bounds)."""

from __future__ import annotations

from pathlib import Path

import pyptoemu
from pyptoemu.trace.bottleneck import BOUND_SHARE, STAGE_SHARE, Bottleneck, _verdict

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def _verdict_of(charged: dict, waits: dict | None = None, makespan: int = 1000) -> Bottleneck:
    b = Bottleneck(makespan=makespan, charged=charged, waits=waits or {})
    _verdict(b)
    return b


def test_a_serial_chain_names_each_stage_its_wait_covers():
    b = _verdict_of({("work", "MTE2"): 320, ("work", "V"): 310, ("work", "MTE3"): 340, ("work", "S"): 30},
                    {("V", "MTE3"): [640, 700, 28, 28]})
    assert b.kind == "latency-bound"
    assert b.text == ("latency-bound: 64% of the makespan waiting on V->MTE3 flags at line 28 "
                      "(pipe shares on the critical path: MTE3 34%, MTE2 32%, V 31%)")


def test_a_pipe_below_the_stage_share_is_left_out_but_the_largest_is_always_named():
    b = _verdict_of({("work", "S"): 410, ("work", "MTE3"): 390, ("work", "V"): 60, ("latency", "V"): 50,
                     ("work", "MTE2"): 90}, {("MTE2", "V"): [700, 900, 5, 9]})
    assert b.pipe == "S"
    assert b.text == ("latency-bound: 70% of the makespan waiting on MTE2->V flags at lines 5-9 "
                      "(pipe shares on the critical path: S 41%, MTE3 39%, V 11%)")  # MTE2: 9% < STAGE_SHARE
    assert STAGE_SHARE == 0.1
    lone = _verdict_of({("work", "V"): 40, ("sync", "V"): 960})
    assert lone.text == "latency-bound: no pipe works half of the makespan (pipe shares on the critical path: V 4%)"


def test_a_share_just_below_the_threshold_is_not_printed_as_the_threshold():
    assert 999 / 2000 < BOUND_SHARE and f"{999 / 2000:.0%}" == "50%"
    below = _verdict_of({("work", "MTE2"): 999, ("work", "V"): 600, ("work", "FIX"): 401},
                        {("x", "tpop_from_aic"): [1500, 1900, 63, 63]}, makespan=2000)
    assert below.text == ("latency-bound: 75% of the makespan waiting on tpop_from_aic at line 63 (pipe shares on "
                          "the critical path: MTE2 49%, V 30%, FIX 20%)")
    at = _verdict_of({("work", "MTE2"): 1000, ("work", "V"): 600, ("work", "FIX"): 400},
                     {("x", "tpop_from_aic"): [1500, 1900, 63, 63]}, makespan=2000)
    assert at.text == "MTE2-bound: 50% of the makespan is MTE2 work on the critical path"


def test_the_c2v_epilogue_reads_the_same_at_one_block_and_a_full_wave():
    """One block and 24 (one per core group, one wave) hold the same path; both verdicts name the
    cube side's stages behind the vector cores' pop (MTE2 just below half)."""
    one, wave = (pyptoemu.run(EXAMPLES / "matmul_c2v_epilogue.pto", data=False, blocks=n, args={"arg3": 32 * n})
                 for n in (1, 24))
    for r in (one, wave):
        assert r.bound == ("latency-bound: 76% of the makespan waiting on tpop_from_aic at line 63 (pipe shares "
                           "on the critical path: MTE2 49%, FIX 18%, MTE3 16%)"), r.bound
