"""Fifteenth red-team round: a tile-level (seed 002) loop whose carried tile is replaced by an scf.if,
each branch computing the new value from the old (``%n = scf.if .. { add %a, %t } else { max %a, %t }``,
``scf.yield %n``), was refused by bufferize ("%a is read after %n, which replaces it in the same
buffer": the if's result counted as written at the if, before its branches read %a). The branches
exclude each other, so each is compared with the value it yields. A read of the old value after the
if still gets the new value through a copy (as before); a read in a branch after that branch wrote
its replacement is still refused at the loop's line."""

from __future__ import annotations

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import PtoError

KERNEL = """module attributes {pto.target = #pto.target<a3>} {
  func.func @pick(%x: pto.memref<16x128xf32>, %o: pto.memref<16x32xf32>, %d: pto.memref<16x32xf32>) {
    %c0 = pto.constant 0 : index
    %c32 = pto.constant 32 : index
    %c64 = pto.constant 64 : index
    %c128 = pto.constant 128 : index
    %zero = pto.constant 0.0 : f32
    %a0 = pto.tile.expands %zero : f32 -> tile<16x32xf32>
    %acc = scf.for %c = %c0 to %c128 step %c32 iter_args(%ai = %a0) -> (tile<16x32xf32>) {
      %t = pto.tile.load %x[%c0, %c] : pto.memref<16x128xf32>, tile<16x32xf32>
      %lt = arith.cmpi slt, %c, %c64 : index
      %an = scf.if %lt -> (tile<16x32xf32>) {
        %s = pto.tile.add %ai, %t : tile<16x32xf32>
        scf.yield %s : tile<16x32xf32>
      } else {
        %m = pto.tile.max %ai, %t : tile<16x32xf32>
        scf.yield %m : tile<16x32xf32>
      }AFTER
      scf.yield %an : tile<16x32xf32>
    }
    pto.tile.store %acc, %o[%c0, %c0] : pto.memref<16x32xf32>, tile<16x32xf32>
    return
  }
}
"""


def _write(tmp_path, text: str):
    path = tmp_path / "pick.pto"
    path.write_text(text)
    return path


@pytest.mark.parametrize("software_pipeline", [False, True])
def test_a_carried_tile_replaced_by_an_if_whose_branches_read_it_runs(tmp_path, software_pipeline):
    x = np.random.default_rng(15).standard_normal((16, 128)).astype(np.float32)
    path = _write(tmp_path, KERNEL.replace("AFTER", ""))
    r = pyptoemu.run(path, inputs={"arg0": x}, software_pipeline=software_pipeline)
    want = np.maximum(np.maximum(x[:, 0:32] + x[:, 32:64], x[:, 64:96]), x[:, 96:128])
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 32), want)
    assert r.findings == []
    timing = pyptoemu.run(path, data=False, software_pipeline=software_pipeline)
    assert (timing.cycles, timing.bound) == (r.cycles, r.bound)


LATE = ("%late = pto.tile.add %ai, {new} : tile<16x32xf32>\n"
        "pto.tile.store %late, %d[%c0, %c0] : pto.memref<16x32xf32>, tile<16x32xf32>")


def test_the_old_value_read_after_the_if_gets_the_new_one_through_a_copy(tmp_path):
    x = np.random.default_rng(16).standard_normal((16, 128)).astype(np.float32)
    late = "\n" + "\n".join("      " + line for line in LATE.format(new="%an").splitlines())
    r = pyptoemu.run(_write(tmp_path, KERNEL.replace("AFTER", late)), inputs={"arg0": x})
    third = np.maximum(x[:, 0:32] + x[:, 32:64], x[:, 64:96])
    final = np.maximum(third, x[:, 96:128])
    np.testing.assert_array_equal(r.outputs["arg1"].reshape(16, 32), final)
    np.testing.assert_allclose(r.outputs["arg2"].reshape(16, 32), third + final, rtol=1e-6)


def test_the_old_value_read_in_a_branch_after_its_replacement_is_still_refused(tmp_path):
    late = "\n".join("        " + line for line in LATE.format(new="%m").splitlines())
    text = KERNEL.replace("AFTER", "").replace("        scf.yield %m : tile<16x32xf32>",
                                               late + "\n        scf.yield %m : tile<16x32xf32>")
    with pytest.raises(PtoError) as e:
        pyptoemu.run(_write(tmp_path, text), data=False)
    assert str(e.value).startswith(f"{tmp_path / 'pick.pto'}:9:5: error: 'scf.for' op %ai is read after %an, which replaces it"), e.value
