"""A pipe's leap (``pyptoemu.core.pipe.LEAP``): a pipe that would sleep on its own timeout until a
cycle no other event is due by sets the clock there itself instead. SimPy would have popped that
timeout next, so the run must be the same in every respect: cycles, every record's timing and
record order (``seq``, which orders the consumers' ties), findings, bottleneck text and outputs,
with leaps and with every such wait a timeout (``LEAP = False``), on every example kernel (group
kernels through FIFOs and several blocks on a chip included) and on generated ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
import pyptoemu.core.pipe as pipe_mod
from pyptoemu.errors import PtoError
from tests.emulator.core.test_deferred_stalls import EXAMPLES, OPS, _machine, _program

ROOT = Path(__file__).resolve().parents[3]


def _outcome(kernel, machine="a2a3", **kw) -> tuple:
    """Everything a run shows, and how many SimPy event ids it took (``events``: not compared)."""
    try:
        res = pyptoemu.run(kernel, machine=machine, keep_log=True, **kw)
    except PtoError as e:
        res = getattr(e, "result", None)
        return ("error", type(e).__name__, str(e), res.cycles if res is not None else None), 0
    rows = [[(i.seq, i.start, i.iseq, i.pipe, i.name, i.issue, i.wait_start, i.end, i.done,
              getattr(i.released_by, "seq", None)) for i in c.trace_log] for c in res.chip.cores]
    outputs = {k: np.asarray(v).tobytes() for k, v in (res.outputs or {}).items()}
    shown = (res.cycles, rows, [str(f) for f in res.findings], res.bound, res.status, outputs)
    return shown, next(res.chip.env._eid)


def _both(kernel, **kw) -> tuple[tuple, tuple]:
    leaping = _outcome(kernel, **kw)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(pipe_mod, "LEAP", False)
        waiting = _outcome(kernel, **kw)
    return leaping, waiting


@pytest.mark.parametrize("data", [False, True])
@pytest.mark.parametrize("name", EXAMPLES)
def test_leaps_leave_every_example_run_unchanged(name, data):
    (leaping, leap_events), (waiting, wait_events) = _both(ROOT / "examples" / name, data=data, **EXAMPLES[name])
    assert leaping[0] != "error", leaping
    assert leaping == waiting
    assert leap_events <= wait_events
    if name == "double_buffer_1024.pto":  # the stream: hundreds of timeouts are leaps
        assert wait_events - leap_events > 500


@settings(max_examples=25, deadline=None, derandomize=True)
@given(ops=st.lists(OPS, min_size=1, max_size=60), depth=st.sampled_from([1, 2, 16]), fault=st.booleans())
def test_leaps_leave_generated_runs_unchanged(ops, depth, fault):
    """Generated mixes of vector ops, loads, stores, flag pairs and barriers, shallow queues or not,
    a fault at the end or not; races checked."""
    text = _program(ops, fault)
    (leaping, _), (waiting, _) = _both(text, machine=_machine(depth), sync="asis", data=False)
    assert leaping == waiting
