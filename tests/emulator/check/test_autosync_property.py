"""Automatic sync insertion, checked as properties over random structured kernels (kernelgen).

1. The flag invariant (ptoisa.sync: checked on the written text, by ptoisa.sync.pto_text) holds for every generated kernel: every path
   through every region leaves every flag as it found it, no set while set, no wait without a set,
   and no set can fire before the previous wait of its flag consumed it.
2. The auto-synced run equals the program-order run (``--sync serial``) bit for bit, with no
   finding (race, double set, deadlock), for several values of the scalar arguments each.

The generator's kernels contain the shapes that broke the pass before: ifs on ``i + c < n`` inside
loops, several producer -> consumer pairs on one pipe pair, straight-line code after loops whose
bodies branch, several matmuls into separate accumulators, each stored.

Sizes: EXAMPLES_FLAGS / EXAMPLES_RUN kernels in the suite (about 25 s together); set
PYPTOEMU_SYNC_PROPERTY_SCALE=N to run N times as many offline.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from ptoisa.machine import load_machine
from ptoisa.sync.pto_text import check_module
from ptoisa.text.parser import parse_module
from ptoisa.text.printer import print_module
from pyptoemu.check import autosync
from pyptoemu.isa.runnable import load_isa
from tests.emulator.check.kernelgen import MAX_ARG, generate

SCALE = int(os.environ.get("PYPTOEMU_SYNC_PROPERTY_SCALE", "1"))
EXAMPLES_FLAGS = 150 * SCALE
EXAMPLES_RUN = 60 * SCALE
MACHINE = load_machine("a2a3")
ISA = load_isa(machine=MACHINE)
SEEDS = st.integers(min_value=0, max_value=2**31 - 1)
ARGS = st.tuples(st.integers(0, MAX_ARG), st.integers(0, MAX_ARG))


def _flag_problems(text: str) -> list[str]:
    """Read back from the printed and re-parsed text: independent of the plan it came from."""
    module = autosync.insert_sync(parse_module(text), ISA, MACHINE)
    return check_module(parse_module(print_module(module)), MACHINE)


@settings(max_examples=EXAMPLES_FLAGS)
@given(seed=SEEDS)
def test_inserted_sync_keeps_the_flag_invariant(seed):
    kernel = generate(seed)
    assert _flag_problems(kernel.text) == [], kernel.text


def _run(kernel, sync: str, n: int, m: int):
    return pyptoemu.run(kernel.text, inputs={"arg0": kernel.inputs["x"], "arg1": kernel.inputs["out"]},
                        args={"arg2": n, "arg3": m}, sync=sync, races="error")


@settings(max_examples=EXAMPLES_RUN)
@given(seed=SEEDS, args=st.lists(ARGS, min_size=3, max_size=3, unique=True))
def test_auto_sync_equals_program_order(seed, args):
    kernel = generate(seed)
    for n, m in args:
        ref = _run(kernel, "serial", n, m)
        got = _run(kernel, "auto", n, m)
        assert ref.sync_mode == "serial" and got.sync_mode == "auto"
        assert got.errors() == [] and ref.errors() == [], (n, m, kernel.text)
        assert set(got.outputs) == set(ref.outputs)
        for name, want in ref.outputs.items():
            assert np.array_equal(got.outputs[name].view(np.uint8), want.view(np.uint8)), (name, n, m, kernel.text)


def test_the_generator_reaches_the_shapes_that_broke_the_pass():
    """The seeds the property tests draw from produce the control flow this test file is about."""
    texts = [generate(s).text for s in range(60)]
    assert any("scf.while" in t for t in texts)
    assert any("func.call" in t for t in texts)
    assert any("-> (!pto.tile_buf" in t for t in texts)  # if with a tile result
    assert any("arith.cmpf" in t for t in texts)  # data-dependent condition
    assert any("alloc_tile addr =" in t for t in texts)  # level-3 tiles that alias
    assert sum("pto.tmatmul" in t for t in texts) >= 10
    assert any(t.count("pto.tmatmul") >= 3 and t.count("%acc2 = ") for t in texts)


def test_kernels_that_deadlocked_before_run():
    """Seeds whose kernels deadlocked (a flag set twice) under the previous event-id reuse."""
    for seed in (0, 18, 25):
        kernel = generate(seed)
        got, ref = _run(kernel, "auto", 0, 0), _run(kernel, "serial", 0, 0)
        assert got.errors() == []
        assert all(np.array_equal(got.outputs[k], v) for k, v in ref.outputs.items())
