"""A pipe's instruction holds its critical path as a *pipe path* (``(base, work, latency, sync)``: its
pipe's three slots apart from a base list shared along the pipe; see ``bottleneck.WAITS``). Checked
against the straightforward formulation, every pipe instruction's path worked out by the general
lookup (``CriticalPath._path_to_start``) and kept as a list of its own: on the examples and on
generated mixes with issue queues of depth 1 to 16, every recorded instruction gets the same path
and the run the same bound (with stalls recorded and with stalls handed on as marks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from pyptoemu.errors import PtoError
from pyptoemu.trace import bottleneck
from tests.emulator.core.test_deferred_stalls import EXAMPLES, OPS, _machine, _program

ROOT = Path(__file__).resolve().parents[3]


class _ListPaths(bottleneck.CriticalPath):
    """The critical path with every pipe instruction's path a list made by the general lookup: the
    scalar unit's records go through ``CriticalPath.consume_batch`` one at a time (a trim and the
    marks taken after each: what one per batch leaves), the pipes' through ``_path_to_start``."""

    def consume_batch(self, batch) -> None:
        for ins in batch:
            if ins.pipe == "S":
                super().consume_batch((ins,))
                continue
            state = self.cores.get(id(ins.core)) or self._new_state(ins.core)
            self._core, self._state = ins.core, state
            if state.draining and state.draining[0].end < ins.start:
                state.settle(ins.start)
            track = state.pipes.get(ins.pipe) or state.track(ins.pipe)
            path = self._path_to_start(ins, state)
            assert type(path) is list
            ins.path = path
            track.recent.append(ins)
            track.last = ins
            if state.draining:
                state.note_drained(ins)
            for each in self.cores.values():
                for t in each.pipes.values():
                    t.trim()
                if each.marks:
                    each.take_marks(ins.start, ins.seq)


def _start_path(ins) -> list:
    """The path an instruction holds, as a list: up to its start (a stall or a full barrier whose
    path was not asked for yet: up to its end)."""
    p = ins.path
    if type(p) is tuple:
        return bottleneck._until(ins, ins.start)
    if type(p) is not list:
        return bottleneck._until(ins, ins.end)
    return p


def _run(kernel, **kw) -> tuple:
    """The bound with stalls handed on as marks; with stalls recorded (``keep_log``), the bound and
    every recorded instruction's (start, pipe, path), the number of pipe paths among them."""
    try:
        bound = pyptoemu.run(kernel, data=False, races="off", **kw).bound
        r = pyptoemu.run(kernel, data=False, races="off", keep_log=True, **kw)
    except PtoError as e:
        return ("error", str(e)), [], 0
    waits_of = r.chip.recorder.consumers[0].waits_of
    rows, tuples = [], 0
    for core in r.chip.cores:
        for ins in sorted(core.trace_log, key=lambda i: (i.start, i.seq)):
            tuples += type(ins.path) is tuple
            p = _start_path(ins)
            rows.append((ins.start, ins.pipe, tuple(p[:bottleneck.WAITS]), sorted(waits_of(p).items())))
    return (bound, r.bound), rows, tuples


def _both(kernel, **kw) -> tuple[tuple, tuple]:
    with pytest.MonkeyPatch.context() as m:
        piped = _run(kernel, **kw)
        m.setattr(pyptoemu.api, "CriticalPath", _ListPaths)
        plain = _run(kernel, **kw)
    assert plain[2] == 0  # no pipe path made: the straightforward formulation throughout
    return piped, plain


@pytest.mark.parametrize("name", EXAMPLES)
def test_pipe_paths_are_the_plain_lists_on_the_examples(name):
    piped, plain = _both(ROOT / "examples" / name, **EXAMPLES[name])
    assert piped[2] > 5 and any(r[2] != piped[1][0][2] for r in piped[1])  # pipe paths, paths that grow
    assert piped[:2] == plain[:2]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(ops=st.lists(OPS, min_size=1, max_size=60), depth=st.sampled_from([1, 2, 3, 16]), fault=st.booleans())
def test_pipe_paths_are_the_plain_lists_on_generated_mixes(ops, depth, fault):
    piped, plain = _both(_program(ops, fault), machine=_machine(depth), sync="asis")
    assert piped[:2] == plain[:2]
