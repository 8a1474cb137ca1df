"""Deferred issue-queue stalls (``ScalarUnit.issue``, ``DeferredStall``): when an issue goes over a
full queue, the scalar unit does not wait for the pipe but goes on issuing; what it issues carries
its issue cycle once the stall is resolved. The schedule must be the one of a scalar unit that
waits at every stall: ``MAX_DEFERRED_STALLS = 0`` makes it settle after each op that stalled, which
is that, and every instruction's timing, program order and stall record must come out the same."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
import pyptoemu.core.pipe as pipe_mod
import pyptoemu.core.scalar as scalar_mod
from ptoisa.machine import load_machine
from pyptoemu.errors import PtoError
from tests.emulator.core.kernels import binary_kernel, vec

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = {  # name: run arguments
    "double_buffer_1024.pto": {}, "single_buffer_1024.pto": {}, "softmax_rows_64x128.pto": {},
    "matmul_splitk.pto": {"args": {"arg4": True}}, "vadd_32x32.pto": {}, "iter_args_accumulate.pto": {},
    # group kernels: a cube and two vector cores per block through FIFOs, each core its own scalar unit
    "matmul_c2v_epilogue.pto": {"args": {"arg3": 128}, "blocks": 4},
    "v2c_scale_matmul.pto": {"args": {"arg3": 96}, "blocks": 3},
}


def _machine(depth: int):
    base = load_machine("a2a3")
    return dataclasses.replace(base, params={**base.params, "issue_queue_depth": depth})


def _outcome(kernel, machine="a2a3", **kw) -> tuple:
    """Cycles, stall count and every recorded instruction's timing in (start, program order), or
    the error and the cycle it ended at."""
    try:
        res = pyptoemu.run(kernel, machine=machine, data=False, keep_log=True, races="off", **kw)
    except PtoError as e:
        res = getattr(e, "result", None)
        return ("error", type(e).__name__, str(e), res.cycles if res is not None else None)
    cores = res.chip.cores
    rows = [sorted((i.start, i.iseq, i.pipe, i.name, i.issue, i.wait_start, i.end, i.done) for i in c.trace_log)
            for c in cores]
    return res.cycles, [c.scalar.stalls for c in cores], rows


def _waiting(kernel, monkeypatch, machine="a2a3", **kw) -> tuple:
    """The same run with a scalar unit that waits at every stall (settles after each op)."""
    with monkeypatch.context() as m:
        m.setattr(scalar_mod, "MAX_DEFERRED_STALLS", 0)
        return _outcome(kernel, machine, **kw)


@pytest.mark.parametrize("depth", [16, 2])
@pytest.mark.parametrize("name", EXAMPLES)
def test_deferring_stalls_leaves_every_example_schedule_unchanged(name, depth, monkeypatch):
    path = ROOT / "examples" / name
    deferred = _outcome(path, _machine(depth), **EXAMPLES[name])
    assert deferred[0] != "error", deferred
    assert deferred == _waiting(path, monkeypatch, machine=_machine(depth), **EXAMPLES[name])
    if name == "double_buffer_1024.pto":  # the stream outruns its DMA queues: hundreds of stalls
        assert deferred[1][0] > 500
    if depth == 2 and name != "vadd_32x32.pto":  # stalls on shallow queues (the 32x32 add is too short)
        assert max(deferred[1]) > 0


def test_the_stream_defers_its_stalls_and_holds_a_bounded_number(monkeypatch):
    """The stream kernel stalls on nearly every issue; deferred, the scalar unit runs ahead by at
    most MAX_DEFERRED_STALLS stalls, and is settled (nothing deferred) when the run ends."""
    seen = []
    original = scalar_mod.ScalarUnit.settle

    def settle(self):
        seen.append(len(self.deferred))
        yield from original(self)
        assert not self.deferred and self.lag == 0

    monkeypatch.setattr(scalar_mod.ScalarUnit, "settle", settle)
    pyptoemu.run(ROOT / "examples" / "double_buffer_1024.pto", data=False, races="off")
    assert max(seen) == scalar_mod.MAX_DEFERRED_STALLS + 1
    assert len(seen) < 20  # a few long bursts, not a wait per stall


def _checking_resolve(checks: dict):
    """``ScalarUnit.resolve`` checked against the straightforward formulation at every call: each
    stall not taken yet is an instruction queued depth places or more behind the head, with the one
    whose taking ends it (depth places ahead) still queued, and a queued instruction that far back is
    such a stall (``Pipe.run`` finds the stall a taking ends by that); the stalls are resolved oldest
    first, each one's lag the running maximum of its take cycle - low (its clock), a stall recorded
    (or handed on as a mark, numbered a half above the last record) exactly when that maximum grows,
    and the next stall, issued right after the last one resolved, gets its issue cycle from it."""
    original = scalar_mod.ScalarUnit.resolve

    def resolve(self, taken, made_by):
        lag, count, recorded = self.lag, len(self.deferred), self.stalls
        marks, number = len(self.pending_marks), self.recorder.seq + 0.5
        oldest = self.deferred[0]
        assert oldest.stall_taken is None  # taken now: handed over, not stored
        ready = [(oldest, taken, made_by)]
        for stall in list(self.deferred)[1:]:
            if stall.stall_taken is None:
                break
            ready.append((stall, stall.stall_taken, stall.stall_made_by))
        original(self, taken, made_by)
        assert len(self.deferred) == count - len(ready)
        expected_marks = []
        for stall, at, made in ready:
            late = at - stall.low
            if late > lag:  # taken after the scalar clock (delayed by the stalls before) got there
                lag = late
                expected_marks.append((at, number, made))
            assert stall.stall_lag == lag
        assert self.stalls - recorded == len(expected_marks)
        if self.stall_marks:
            assert self.pending_marks[marks:] == expected_marks
        if self.deferred:  # the next one was issued right after the last resolved: its issue cycle is known
            nxt = self.deferred[0]
            assert nxt.issue == nxt.low + lag and nxt.iseq > ready[-1][0].iseq
        pipes = self.core.pipes
        deferred = {id(stall) for stall in self.deferred}
        for pipe in pipes.values():  # queued depth places or more back: a stall not taken yet
            queue = list(pipe.queue)
            for k, i in enumerate(queue):
                if pipe.depth and k >= pipe.depth:
                    assert id(i) in deferred and i.stall_taken is None
                    assert queue[k - pipe.depth].pidx == i.pidx - pipe.depth
            checks["pipes"] += 1
        for stall in self.deferred:  # not taken yet exactly while the instruction depth places ahead is queued
            ahead = stall.pidx - pipes[stall.pipe].depth
            assert any(i.pidx == ahead for i in pipes[stall.pipe].queue) == (stall.stall_taken is None)
        checks["resolved"] += len(ready)
        checks["marks"] += len(expected_marks)

    return resolve


def test_each_stall_ends_with_its_maker_and_stalls_resolve_in_program_order(monkeypatch):
    """:func:`_checking_resolve` at every resolution of the stream kernel on queues of depth 2 and 16."""
    checks = {"pipes": 0, "resolved": 0, "marks": 0}
    monkeypatch.setattr(scalar_mod.ScalarUnit, "resolve", _checking_resolve(checks))
    for depth in (2, 16):
        pyptoemu.run(ROOT / "examples" / "double_buffer_1024.pto", machine=_machine(depth), data=False,
                     races="off")
    assert checks["resolved"] > 2000 and checks["pipes"] > 1000 and checks["marks"] > 500


OPS = st.sampled_from(["vadd", "vadd", "vadd", "load", "store", "sync_load_v", "sync_v_store", "barrier_v",
                       "sync_store_load"])


def _program(ops: list[str], fault: bool) -> str:
    t = vec(16, 64)
    lines = [f"    %a = pto.alloc_tile : {t}", f"    %b = pto.alloc_tile : {t}",
             f"    pto.texpands ins(%cst : f32) outs(%a : {t})", "    pto.barrier <PIPE_V>"]
    flags = {"sync_load_v": ("MTE2", "V"), "sync_v_store": ("V", "MTE3"), "sync_store_load": ("MTE3", "MTE2")}
    for op in ops:
        if op == "vadd":
            lines.append(f"    pto.tadds ins(%a, %cst : {t}, f32) outs(%b : {t})")
        elif op == "load":
            lines.append(f"    pto.tload ins(%p0 : !pto.partition_tensor_view<16x64xf32>) outs(%a : {t})")
        elif op == "store":
            lines.append(f"    pto.tstore ins(%b : {t}) outs(%p1 : !pto.partition_tensor_view<16x64xf32>)")
        elif op == "barrier_v":
            lines.append("    pto.barrier <PIPE_V>")
        else:
            src, dst = flags[op]
            lines.append(f"    pto.set_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID0>]")
            lines.append(f"    pto.wait_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID0>]")
    if fault:  # a view past the tensor, after everything above was issued: faults in the scalar unit
        lines.append("    %bad = pto.partition_view %v0, offsets = [%cc, %c0], sizes = [%cr, %cc] "
                     ": !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32>")
        lines.append(f"    pto.tload ins(%bad : !pto.partition_tensor_view<16x64xf32>) outs(%a : {t})")
    return binary_kernel("\n".join(lines) + "\n", nargs=2, extra_consts="    %cst = arith.constant 1.0 : f32")


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(OPS, min_size=1, max_size=60), depth=st.sampled_from([1, 2, 3, 16]), fault=st.booleans())
def test_deferring_stalls_leaves_generated_schedules_unchanged(ops, depth, fault):
    """Generated mixes of vector ops, loads, stores, flag pairs and barriers, with shallow queues
    (many stalls, several deferred per op) and a fault at the end or not."""
    text = _program(ops, fault)
    machine = _machine(depth)
    deferred = _outcome(text, machine, sync="asis")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(scalar_mod, "MAX_DEFERRED_STALLS", 0)
        waiting = _outcome(text, machine, sync="asis")
    assert deferred == waiting
    if fault:
        assert deferred[0] == "error"


@pytest.mark.parametrize("depth", [16, 2])
def test_a_stall_takes_no_number_and_sorts_right_after_the_instruction_it_held(depth):
    """Program order (``iseq``) as it would be numbered with no stalls at all: the issued
    instructions are numbered 1, 2, ... with no gaps (whether a deferred stall turns out to be
    recorded changes no number), and each recorded stall sorts right after the instruction it held
    (a half above it: the instruction of that number is on the stall's pipe, at its line)."""
    r = pyptoemu.run(ROOT / "examples" / "double_buffer_1024.pto", machine=_machine(depth), data=False,
                     races="off", keep_log=True)
    core = r.chip.cores[0]
    stalls = [i for i in core.trace_log if i.flag.__class__ is pipe_mod.QueueRoom]
    issued = {i.iseq: i for i in core.trace_log if i.flag.__class__ is not pipe_mod.QueueRoom}
    assert len(stalls) == core.scalar.stalls > 100
    assert sorted(issued) == list(range(1, core.scalar.issued_total + 1))
    for stall in stalls:
        held = issued[stall.iseq - 0.5]
        assert (held.pipe, held.loc) == (stall.flag.pipe.name, stall.loc)


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(OPS, min_size=1, max_size=60), depth=st.sampled_from([1, 2, 3, 16]),
       keep_log=st.booleans())
def test_generated_stalls_resolve_as_the_straightforward_formulation(ops, depth, keep_log):
    """:func:`_checking_resolve` on generated mixes with shallow queues, stalls recorded (keep_log)
    or handed on as marks."""
    checks = {"pipes": 0, "resolved": 0, "marks": 0}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(scalar_mod.ScalarUnit, "resolve", _checking_resolve(checks))
        try:
            pyptoemu.run(_program(ops, False), machine=_machine(depth), data=False, races="off", sync="asis",
                         keep_log=keep_log)
        except PtoError:  # a mix that deadlocks or sets a flag twice: checked up to there all the same
            pass
