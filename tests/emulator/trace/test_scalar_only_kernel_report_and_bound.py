"""The scalar unit's lane in ``pyptoemu report``. A kernel that works on the scalar unit alone
(load_scalar in an scf.while, which the inserted sync fences with full barriers each iteration):
the report must not count a cycle of the lane twice (its activity spans and the barriers and
load_scalars on it overlap: S was 171% busy), and the summary's bound must say the scalar unit holds
it up. A cube->vector kernel whose full barriers wait for long drains: the drain is the scalar unit
blocked, not busy (the report called such a kernel 'bound by S (busy 62%)' when the run's S was 5%)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.report import load_report

ROOT = Path(__file__).resolve().parents[3]
KERNELS = ROOT / "tests" / "e2e" / "user_kernels" / "kernels"
KERNEL = KERNELS / "r8_k09_scalar_gm_while_call.pto"


@pytest.fixture(scope="module")
def scalar_run(tmp_path_factory) -> tuple[Path, pyptoemu.RunResult]:
    path = tmp_path_factory.mktemp("scalar") / "k.json"
    r = pyptoemu.run(KERNEL, inputs={"arg0": np.ones(37, np.float32), "arg2": np.zeros(5, np.float32)},
                     args={"arg1": 37}, trace=path)
    return path, r


def test_no_pipe_in_the_report_is_busier_than_the_run(scalar_run):
    path, r = scalar_run
    rep = load_report(path)
    (core,) = rep.cores.values()
    assert core["S"].busy == r.pipes["S"].busy_cycles == r.cycles  # was 3007 of 1759 cycles (171%)
    assert all(use.busy <= rep.cycles for use in core.values())


def test_full_barrier_drains_are_blocked_time_of_the_scalar_unit(tmp_path):
    path = tmp_path / "c2v.json"
    r = pyptoemu.run(KERNELS / "r8_k14_c2v_bias_loop_silu_bf16.pto", data=False, trace=path)
    rep = load_report(path)
    assert sorted(pipes["S"].busy for pipes in rep.cores.values()) == sorted(c.pipes["S"].busy_cycles for c in r.cores)
    assert rep.cores["AIC0"]["S"].blocked > rep.cores["AIC0"]["S"].busy
    assert not rep.verdict().startswith("bound by S")


def test_a_scalar_only_kernel_is_bound_by_its_full_barriers(scalar_run):
    """Its 78 full barriers (16 cycles each) are 71% of its 1759 cycles, the scalar unit's issue work
    the rest: the path charges a barrier that drained nothing to the scalar unit's own path up to it
    (before: to sync from cycle 0, so the verdict read 'S 0%')."""
    _, r = scalar_run
    assert r.cycles == 1759
    assert r.bound == ("sync-bound: 71% of the makespan is the scalar unit's sync ops (full barriers, flag ops "
                       "on S) on the critical path (largest pipe share: S 29%)")
