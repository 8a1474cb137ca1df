"""Bounded issue queues (machine param ``issue_queue_depth``, a2a3: 16): the scalar unit stalls when
it would issue into a full pipe queue, so it cannot run ahead of the pipes without bound; a kernel
whose progress needs an instruction the stalled scalar unit has not issued deadlocks, as on hardware,
and says so. ``a2a3:unbounded_issue_queues`` is the model before the bound."""

from __future__ import annotations

from pathlib import Path

import pytest

import pyptoemu
from ptoisa.errors import SpecError
from ptoisa.machine import load_machine
from pyptoemu.errors import KernelFault
from tests.emulator.core.kernels import binary_kernel, vec

DEPTH = 16
N_VEC = 40  # vector ops issued back to back, far more than the queue holds


def _vec_run_then_load(wait_first: bool = False, loads: int = 1, n_vec: int = N_VEC) -> str:
    """``N_VEC`` dependent-free tadds on V, then ``loads`` tloads on MTE2. ``wait_first``: the V queue
    starts with a wait for a flag that only the set after the tload raises."""
    t = vec(16, 64)
    wait = "    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n" if wait_first else ""
    adds = "".join(f"    pto.tadds ins(%a, %cst : {t}, f32) outs(%b{i % 2} : {t})\n" for i in range(n_vec))
    body = (f"    %a = pto.alloc_tile : {t}\n    %b0 = pto.alloc_tile : {t}\n    %b1 = pto.alloc_tile : {t}\n"
            f"    %l = pto.alloc_tile : {t}\n"
            f"    pto.texpands ins(%cst : f32) outs(%a : {t})\n    pto.barrier <PIPE_V>\n"
            f"{wait}{adds}"
            + f"    pto.tload ins(%p0 : !pto.partition_tensor_view<16x64xf32>) outs(%l : {t})\n" * loads
            + ("    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n" if wait_first else ""))
    return binary_kernel(body, nargs=1, extra_consts="    %cst = arith.constant 1.0 : f32")


def _run(text: str, machine: str = "a2a3"):
    return pyptoemu.run(text, machine=machine, sync="asis", data=False, keep_log=True, races="off")


def test_the_default_machine_bounds_every_issue_queue():
    assert load_machine("a2a3").params["issue_queue_depth"] == DEPTH
    assert load_machine("a2a3:unbounded_issue_queues").params["issue_queue_depth"] == 0


def test_a_full_vector_queue_holds_back_the_next_load():
    """With the bound the tload behind 40 vector ops issues only once V has started all but the 16
    that fit its queue (and the one in its hands); without it, right after the 40 issues."""
    bounded = _run(_vec_run_then_load()).core.trace_log
    vops = [i for i in bounded if i.name == "tadds"]
    (load,) = [i for i in bounded if i.name == "tload"]
    assert len(vops) == N_VEC
    # v[k] enters the queue when V takes v[k-16] off it, which it does when v[k-17] starts
    last_in = N_VEC - 1 - DEPTH - 1
    assert vops[last_in].start < load.start <= vops[last_in].start + 2
    assert load.start < vops[last_in + 1].start

    free = _run(_vec_run_then_load(), "a2a3:unbounded_issue_queues").core.trace_log
    (free_load,) = [i for i in free if i.name == "tload"]
    assert free_load.start <= N_VEC + 20  # issued at once: a scalar cycle per op before it (constants, views)
    assert free_load.start < vops[2].start


def test_the_critical_path_runs_through_the_pipe_a_stall_waited_for():
    """The loads issue only once V made room in its queue: the path to them is V's work, not the
    scalar unit's (a stall is a sync point the path crosses into the pipe that ended it)."""
    res = _run(_vec_run_then_load(loads=2))
    assert res.bound.startswith("V-bound: 5"), res.bound  # then the two loads (~46%) on MTE2


def test_a_run_that_never_fills_a_queue_keeps_its_schedule():
    """10 vector ops never fill V's queue: every instruction starts when it did without the bound.
    40 do, and the loads behind them start (and so end) later."""
    def starts(text: str, machine: str) -> list:
        return [(i.pipe, i.name, i.start) for i in _run(text, machine).core.trace_log if i.pipe != "S"]

    few = _vec_run_then_load(loads=2, n_vec=10)
    assert starts(few, "a2a3") == starts(few, "a2a3:unbounded_issue_queues")
    many = _vec_run_then_load(loads=2)
    assert _run(many).cycles > _run(many, "a2a3:unbounded_issue_queues").cycles


def test_a_wait_whose_set_sits_behind_a_full_queue_deadlocks_and_says_why():
    text = _vec_run_then_load(wait_first=True)
    with pytest.raises(KernelFault) as err:
        _run(text)
    msg = str(err.value)
    assert "deadlock" in msg
    assert "cannot issue tadds: the V issue queue is full (16 entries, issue_queue_depth)" in msg
    assert "the scalar unit has not issued its set yet (stalled on the full V queue)" in msg
    # the same program with unbounded queues runs (the set is issued before V needs it)
    assert _run(text, "a2a3:unbounded_issue_queues").findings == []


def test_a_deadlock_behind_a_full_queue_ends_at_the_scalar_clock():
    """V blocks on a wait no one will set; the scalar unit issues tadds behind it until the queue is
    full and the next one cannot go in. It stalls at its own clock (one cycle per issue after the
    wait: DEPTH + 1 issues), not at the cycle V blocked: the run ends there, though the scalar unit
    sleeps on the queue without first bringing SimPy time up to its clock."""
    t = vec(16, 64)
    adds = "".join(f"    pto.tadds ins(%a, %cst : {t}, f32) outs(%b : {t})\n" for _ in range(N_VEC))
    body = (f"    %a = pto.alloc_tile : {t}\n    %b = pto.alloc_tile : {t}\n"
            "    pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n" + adds
            + "    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n")
    text = binary_kernel(body, nargs=1, extra_consts="    %cst = arith.constant 1.0 : f32")
    with pytest.raises(KernelFault, match="deadlock") as err:
        _run(text)
    blocked_wait = err.value.result.core.pipes["V"].current
    assert blocked_wait.name == "wait_flag"
    assert err.value.result.cycles == blocked_wait.wait_start + DEPTH + 1


def test_a_fractional_depth_is_refused(tmp_path):
    src = Path(load_machine("a2a3").file)
    text = src.read_text().replace("  issue_queue_depth: 16", "  issue_queue_depth: 2.5")
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(SpecError, match="issue_queue_depth must be a whole number"):
        load_machine(str(path))
