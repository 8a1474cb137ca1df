"""The a5 machine is a chip like A2/A3 (isa_specs/machines/a5.yaml `chip:`; core counts assumed, the
spec gives none): `--blocks N` runs blocks concurrently on its vector cores, not one after another."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pyptoemu
from ptoisa.machine import load_machine

ROOT = Path(__file__).resolve().parents[3]
A5_SPMD = (ROOT / "examples" / "vadd_spmd.pto").read_text().replace('pto.target_arch = "a3"', 'pto.target_arch = "a5"')


def _run(blocks: int, tiles: int):
    rows = 16 * tiles * blocks
    rng = np.random.default_rng(blocks)
    x, y = (rng.standard_normal((rows, 64), dtype=np.float32) for _ in range(2))
    r = pyptoemu.run(A5_SPMD, inputs={"arg0": x, "arg1": y}, args={"arg3": rows}, blocks=blocks)
    np.testing.assert_array_equal(r.outputs["arg2"].reshape(rows, 64), x + y)
    return r


def test_a5_has_cube_and_vector_cores_in_groups():
    spec = load_machine("a5").chip_spec()
    assert spec.count("aic") == 24 and spec.count("aiv") == 48 and spec.group == {"aic": 1, "aiv": 2}


def test_two_blocks_on_a5_run_concurrently_on_two_vector_cores():
    one, two = _run(1, 6), _run(2, 6)  # the same work per block
    assert one.machine == two.machine == "a5"
    assert [(c.kind, c.blocks) for c in two.cores] == [("aiv", [0]), ("aiv", [1])]
    # one after another (a5 as one combined core) took 2x; side by side only the shared HBM slows them
    assert two.cycles < 1.5 * one.cycles, (one.cycles, two.cycles)
