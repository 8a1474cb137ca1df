"""A pipe's trim finds the instructions that ended before the latest start by bisection, which holds
only because ends never decrease along a pipe. Checked here: that ends never decrease (on the
examples and on generated mixes with issue queues of depth 1 to 16), and that the trim leaves what
the straightforward one (test both cycles of every instruction from the oldest) leaves: every
instruction gets the same path, every pipe keeps the same recent instructions, and the run the same
bound."""

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


def _plain_trim(self) -> None:
    """The trim as it was written first: drop the oldest while both cycles are before the latest start."""
    recent = self.recent
    if len(recent) > 1:
        start = recent[-1].start
        k = 0
        for node in recent:
            if node.end >= start or node.done >= start:
                break
            k += 1
        del recent[:k]


def _run(kernel, **kw) -> tuple:
    """The bound, every recorded instruction's (start, pipe, path) and the recent instructions kept;
    with the ends of each pipe checked never to decrease."""
    try:
        r = pyptoemu.run(kernel, data=False, races="off", keep_log=True, **kw)
    except PtoError as e:
        r = getattr(e, "result", None)
        if r is None:  # refused before running
            return ("refused", str(e)), [], []
    waits_of = r.chip.recorder.consumers[0].waits_of  # the waits a path crossed, by kind
    rows = []
    for core in r.chip.cores:
        ends: dict[str, int] = {}
        for ins in sorted(core.trace_log, key=lambda i: (i.start, i.seq)):
            if ins.pipe != "S":
                assert ins.end >= ends.get(ins.pipe, 0), f"{ins.pipe}: an end before the previous one"
                ends[ins.pipe] = ins.end
            p = ins.path
            if type(p) is tuple:  # a pipe path (bottleneck.WAITS): as a list, up to its start
                p = bottleneck._until(ins, ins.start)
            elif type(p) is not list:  # a stall or a full barrier whose path was not asked for
                p = bottleneck._until(ins, ins.end)
            rows.append((ins.start, ins.pipe, tuple(p[:bottleneck.WAITS]), sorted(waits_of(p).items())))
    neck = r.chip.recorder.consumers[0]
    recent = [[n.seq for n in t.recent] for s in neck.cores.values() for t in s.pipes.values()]
    return r.bound, rows, recent


def _both(kernel, **kw) -> tuple[tuple, tuple]:
    with pytest.MonkeyPatch.context() as m:
        bisected = _run(kernel, **kw)
        m.setattr(bottleneck._PipeTrack, "trim", _plain_trim)
        plain = _run(kernel, **kw)
    return bisected, plain


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_bisected_trim_is_the_plain_one_on_the_examples(name):
    bisected, plain = _both(ROOT / "examples" / name, **EXAMPLES[name])
    assert len(bisected[1]) > 5
    assert bisected == plain


@settings(max_examples=25, deadline=None, derandomize=True)
@given(ops=st.lists(OPS, min_size=1, max_size=60), depth=st.sampled_from([1, 2, 3, 16]), fault=st.booleans())
def test_the_bisected_trim_is_the_plain_one_on_generated_mixes(ops, depth, fault):
    bisected, plain = _both(_program(ops, fault), machine=_machine(depth), sync="asis")
    assert bisected == plain
