"""The kernel shapes that made automatic sync set a flag twice and deadlock (issue 9), each run
under ``--sync auto`` against ``--sync serial`` for several scalar-argument values: same bits, no
finding. ``if_guard_in_loop`` and ``consecutive_pairs`` deadlocked before the fix (for some
arguments only, in the first case)."""

from pathlib import Path

import numpy as np
import pytest

import pyptoemu

HERE = Path(__file__).parent / "sync_kernels"
RNG = np.random.default_rng(9)
X32 = RNG.uniform(-1, 1, (64, 16)).astype(np.float32)
X16 = RNG.uniform(-1, 1, (128, 16)).astype(np.float16)
CASES = [
    ("if_guard_in_loop.pto", X32, (64, 16), [{"arg2": b, "arg3": n} for b in (0, 2) for n in (0, 3, 5, 8)]),
    ("consecutive_pairs.pto", X32, (64, 16), [{"arg2": 0}]),
    ("after_loop_with_branch.pto", X32, (64, 16), [{"arg2": n} for n in (0, 1, 3, 8)]),
    ("matmuls_into_accumulators.pto", X16, (384, 16), [{"arg2": n} for n in (0, 1, 2, 8)]),
]


@pytest.mark.parametrize("name,x,out_shape,argsets", CASES, ids=[c[0] for c in CASES])
def test_auto_sync_runs_and_equals_program_order(name, x, out_shape, argsets):
    for args in argsets:
        inputs = {"arg0": x, "arg1": np.zeros(out_shape, np.float32)}
        auto = pyptoemu.run(HERE / name, inputs=inputs, args=args, sync="auto")
        ref = pyptoemu.run(HERE / name, inputs=inputs, args=args, sync="serial")
        assert auto.sync_mode == "auto" and auto.errors() == [], (args, auto.findings)
        for key, want in ref.outputs.items():
            assert np.array_equal(auto.outputs[key].view(np.uint8), want.view(np.uint8)), (args, key)


def test_the_guarded_kernel_computes_only_the_guarded_blocks():
    """Independent of both runs: blocks i with base + i < n hold x + 0.5, the others stay zero."""
    out = pyptoemu.run(HERE / "if_guard_in_loop.pto", inputs={"arg0": X32, "arg1": np.zeros((64, 16), np.float32)},
                       args={"arg2": 2, "arg3": 5}, sync="auto").outputs["arg1"]
    want = np.zeros((64, 16), np.float32)
    want[:24] = X32[:24] + np.float32(0.5)
    np.testing.assert_array_equal(out, want)
