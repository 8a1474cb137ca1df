"""Loops that step GM windows, found worth pinning by differential runs of the emulator before and
after the speed work of issue 8 item 7 (a moved window reissues its op's last issue, partition_view
steps checked as a range of base elements, issue templates for tile ops, flags and barriers).

Each kernel is the hand-synchronised load -> scalar op -> store loop users write, with what the
fast paths must not miss: windows stepped by rows, columns or both, the source alternating between
two GM buffers of the same shape (the window moved to another buffer), a view remade every
iteration with another row stride (same sizes, other strides), a tile's valid shape changing under
a window of fixed size, a loop-carried scalar, a view running out of its tensor only on a late
iteration, and issue queues one or two entries deep. Outputs are checked against NumPy; cycles,
bound text and fault locations are the values both emulators gave (checked equal on 5000+
generated kernels, all corpus kernels on four machine variants)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyptoemu
from pyptoemu.errors import BoundsError
from tests.emulator.core.kernels import vec

MACHINES = Path(__file__).resolve().parents[3] / "isa_specs" / "machines"
TV = "!pto.tensor_view<?x?xf32>"


def stepped_kernel(n: int, rstep: int, cstep: int, rows: int, cols: int, view_rows: int, *,
                   alternate: bool = False, strides: bool = False, valid_dr: int = 0) -> str:
    """``n`` iterations of: window [i*rstep, i*cstep] of 8x16 from A (or from B on odd iterations
    with ``alternate``; with ``strides`` A is viewed anew each iteration with row stride ``cols``
    or ``2*cols``), tload, tmuls by a scalar that grows by 0.5 each iteration (from 1.25), tstore
    into O at the same place. ``valid_dr``: on odd iterations the tile's valid rows are 8 - that
    (the window stays 8x16). A: ``view_rows`` x ``cols`` (stride ``2*cols`` with ``strides``),
    B and O: ``rows`` x ``cols``."""
    tile = vec(8, 16, vr="?", vc="?")
    pv = "!pto.partition_tensor_view<8x16xf32>"
    a_stride = 2 * cols if strides else cols
    src = "%va"
    per_iter = ""
    if strides:
        per_iter += f"""
      %sm = arith.addi %odd, %c1 : index
      %st = arith.muli %sm, %ccols : index
      %vs = pto.make_tensor_view %arg0, shape = [%cvrows, %ccols], strides = [%st, %c1] : {TV}"""
        src = "%vs"
    if alternate:
        per_iter += f"""
      %src = scf.if %isodd -> ({TV}) {{
        scf.yield %vb : {TV}
      }} else {{
        scf.yield {src} : {TV}
      }}"""
        src = "%src"
    return f"""module {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %cn = arith.constant {n} : index
    %crs = arith.constant {rstep} : index
    %ccs = arith.constant {cstep} : index
    %cdr = arith.constant {valid_dr} : index
    %crows = arith.constant {rows} : index
    %cvrows = arith.constant {view_rows} : index
    %ccols = arith.constant {cols} : index
    %castr = arith.constant {a_stride} : index
    %c0_i64 = arith.constant 0 : i64
    %s0 = arith.constant 1.250000e+00 : f32
    %sd = arith.constant 5.000000e-01 : f32
    %va = pto.make_tensor_view %arg0, shape = [%cvrows, %ccols], strides = [%castr, %c1] : {TV}
    %vb = pto.make_tensor_view %arg1, shape = [%crows, %ccols], strides = [%ccols, %c1] : {TV}
    %vo = pto.make_tensor_view %arg2, shape = [%crows, %ccols], strides = [%ccols, %c1] : {TV}
    %t = pto.alloc_tile addr = %c0_i64 valid_row = %c8 valid_col = %c16 : {tile}
    pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
    %sfin = scf.for %i = %c0 to %cn step %c1 iter_args(%s = %s0) -> (f32) {{
      %odd = arith.remui %i, %c2 : index
      %isodd = arith.cmpi eq, %odd, %c1 : index
      %r = arith.muli %i, %crs : index
      %c = arith.muli %i, %ccs : index
      %less = arith.muli %odd, %cdr : index
      %vr = arith.subi %c8, %less : index{per_iter}
      %pa = pto.partition_view {src}, offsets = [%r, %c], sizes = [%c8, %c16] : {TV} -> {pv}
      %po = pto.partition_view %vo, offsets = [%r, %c], sizes = [%c8, %c16] : {TV} -> {pv}
      pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
      pto.set_validshape %t, %vr, %c16 : {tile}
      pto.tload ins(%pa : {pv}) outs(%t : {tile})
      pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
      pto.tmuls ins(%t, %s : {tile}, f32) outs(%t : {tile})
      pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.tstore ins(%t : {tile}) outs(%po : {pv})
      pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
      %sn = arith.addf %s, %sd : f32
      scf.yield %sn : f32
    }}
    pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
    return
  }}
}}
"""


def expected(a: np.ndarray, b: np.ndarray, out: np.ndarray, n: int, rstep: int, cstep: int, *,
             alternate: bool, strides: bool, valid_dr: int) -> np.ndarray:
    """What the loop leaves in O: later windows overwrite earlier ones where they overlap."""
    out = out.copy()
    cols = out.shape[1]
    s = np.float32(1.25)
    for i in range(n):
        odd = i % 2
        r, c = i * rstep, i * cstep
        if alternate and odd:
            src = b
        else:
            stride = (odd + 1) * cols if strides else a.shape[1]
            src = np.lib.stride_tricks.as_strided(a.ravel(), (a.size // stride, cols), (stride * 4, 4))
        vr = 8 - odd * valid_dr
        out[r:r + vr, c:c + 16] = src[r:r + vr, c:c + 16] * s
        s = np.float32(s + np.float32(0.5))
    return out


# (n, rstep, cstep, rows, cols, alternate, strides, valid_dr): cycles with data and without
CASES = {
    "rows": ((6, 8, 0, 48, 16, False, False, 0), 3506),
    "columns": ((5, 0, 16, 8, 80, False, False, 0), 3112),
    "both overlapping": ((7, 4, 8, 32, 72, False, False, 0), 4344),
    "two buffers alternating": ((6, 8, 16, 48, 96, True, False, 0), 3729),
    "strides alternating": ((6, 8, 0, 48, 16, False, True, 0), 3560),
    "valid rows alternating": ((6, 8, 16, 48, 96, True, True, 5), 3717),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_stepped_window_loop_computes_numpy_and_takes_its_cycles(name):
    (n, rstep, cstep, rows, cols, alternate, strides, valid_dr), cycles = CASES[name]
    view_rows = rows
    text = stepped_kernel(n, rstep, cstep, rows, cols, view_rows, alternate=alternate, strides=strides,
                          valid_dr=valid_dr)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((view_rows * (2 if strides else 1), cols)).astype(np.float32)
    b = rng.standard_normal((rows, cols)).astype(np.float32)
    o = rng.standard_normal((rows, cols)).astype(np.float32)
    res = pyptoemu.run(text, inputs={"arg0": a, "arg1": b, "arg2": o})
    want = expected(a, b, o, n, rstep, cstep, alternate=alternate, strides=strides, valid_dr=valid_dr)
    np.testing.assert_array_equal(res.outputs["arg2"].reshape(rows, cols), want)
    timing = pyptoemu.run(text, data=False)
    assert (res.cycles, timing.cycles) == (cycles, cycles)


def test_a_window_stepped_out_of_its_view_on_the_last_iteration_faults_at_its_line():
    """Rows 0, 8, .., 40 of a 45-row view: the sixth window [40, 48) is out; the first five were
    moved along the tensor without the whole check, the sixth must still be caught, at its op."""
    text = stepped_kernel(6, 8, 0, 48, 16, 45)
    for data in (True, False):
        with pytest.raises(BoundsError) as e:
            pyptoemu.run(text, data=data)
        assert str(e.value) == ("<string>:31:7: partition_view: dim 0 window [40, 48) is outside the "
                                "view's size 45")


@pytest.mark.parametrize(("depth", "share"), [(1, 46), (2, 86), (16, 86), (0, 86)])
def test_a_stepped_loop_takes_the_same_cycles_at_every_issue_queue_depth(tmp_path, depth, share):
    """This loop is bound by its flags, not by its issue queue: the same cycles at every depth; at
    depth 1 the scalar unit waits for room before each flag, and the flag waits take a smaller
    share of the critical path (the rest is the scalar unit's stalls)."""
    path = tmp_path / "a2a3.yaml"  # the file name names the machine (the module asks for a2a3)
    yaml = (MACHINES / "a2a3.yaml").read_text()
    assert "\n  issue_queue_depth: 16\n" in yaml
    path.write_text(yaml.replace("\n  issue_queue_depth: 16\n", f"\n  issue_queue_depth: {depth}\n"))
    text = stepped_kernel(6, 8, 16, 48, 96, 48, alternate=True, strides=True, valid_dr=5)
    res = pyptoemu.run(text, data=False, machine=str(path))
    assert res.cycles == 3717
    assert res.bound == (f"latency-bound: {share}% of the makespan waiting on MTE2->V flags at line 45 "
                         "(pipe shares on the critical path: MTE3 47%, MTE2 46%)")


def negative_stride_kernel(n: int) -> str:
    """``n`` 2x16 windows stepped down rows 0, 2, 4, .. of a view whose rows run backwards from
    element 96 of A (row stride -16): the window at row 6 reaches element -16."""
    tile = vec(2, 16)
    pv = "!pto.partition_tensor_view<2x16xf32>"
    return f"""module {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %cm16 = arith.constant -16 : index
    %c96 = arith.constant 96 : index
    %cn = arith.constant {n} : index
    %c0_i64 = arith.constant 0 : i64
    %top = pto.addptr %arg0, %c96 : !pto.ptr<f32> -> !pto.ptr<f32>
    %up = pto.make_tensor_view %top, shape = [%c8, %c16], strides = [%cm16, %c1] : {TV}
    %vo = pto.make_tensor_view %arg1, shape = [%c16, %c16], strides = [%c16, %c1] : {TV}
    %t = pto.alloc_tile addr = %c0_i64 : {tile}
    scf.for %i = %c0 to %cn step %c1 {{
      %r = arith.muli %i, %c2 : index
      %p = pto.partition_view %up, offsets = [%r, %c0], sizes = [%c2, %c16] : {TV} -> {pv}
      %po = pto.partition_view %vo, offsets = [%r, %c0], sizes = [%c2, %c16] : {TV} -> {pv}
      pto.tload ins(%p : {pv}) outs(%t : {tile})
      pto.barrier <PIPE_ALL>
      pto.tstore ins(%t : {tile}) outs(%po : {pv})
      pto.barrier <PIPE_ALL>
    }}
    return
  }}
}}
"""


def test_a_window_stepped_below_its_buffer_on_a_late_iteration_faults_at_its_line():
    """The backwards windows are made but not moved (the DMA uses the forward view: a backwards
    one would fault at its first tload). The first three lie in A (elements 0..111 of a
    timing-only run: as far as the views reach); the fourth, stepped like the others (same view,
    same sizes), reaches below element 0: the step's range of bases must catch it, with the whole
    check's message, with data and without."""
    def kernel(n: int) -> str:
        return negative_stride_kernel(n).replace("pto.tload ins(%p ", "pto.tload ins(%po ")

    inputs = {"arg0": np.zeros(128, np.float32)}
    assert pyptoemu.run(kernel(3), data=False).cycles == pyptoemu.run(kernel(3), inputs=inputs).cycles == 1738
    for data, size in ((False, 112), (True, 128)):
        with pytest.raises(BoundsError) as e:
            pyptoemu.run(kernel(4), inputs=inputs if data else None, data=data)
        assert str(e.value) == f"<string>:18:7: view over arg0 reaches elements [-16, 15] but the buffer holds {size} elements"


def test_a_timing_only_run_rejects_a_negative_stride_view_as_a_run_with_data_does():
    """A fault that does not depend on data must be found without data too (timing-only runs:
    'data-independent faults still found'): the first tload of the backwards view fails in both,
    at its line and cycle. A tstore into it fails at its line in both: with data when its write
    lands, without data when it starts (nothing lands in a timing-only run)."""
    loads = negative_stride_kernel(3)
    stores = loads.replace("pto.tload ins(%p ", "pto.tload ins(%po ").replace("outs(%po : ", "outs(%p : ")
    for kernel, line, cycles in ((loads, 20, (17, 17)), (stores, 22, (574, 302))):
        for data, cycle in zip((True, False), cycles, strict=True):
            inputs = {"arg0": np.zeros(128, np.float32)} if data else None
            with pytest.raises(BoundsError) as e:
                pyptoemu.run(kernel, inputs=inputs, data=data)
            assert str(e.value) == f"<string>:{line}:7: negative strides are not supported in views over arg0"
            assert [(f.kind, f.cycle) for f in e.value.result.findings] == [("bounds", cycle)]
