"""Small `.pto` kernels built from templates for the core tests."""

from __future__ import annotations


def vec(rows: int, cols: int, dtype: str = "f32", vr: int | str | None = None, vc: int | str | None = None,
        pad: int = 0, blayout: str = "row_major") -> str:
    vr = rows if vr is None else vr
    vc = cols if vc is None else vc
    return (f"!pto.tile_buf<loc=vec, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, v_col={vc}, "
            f"blayout={blayout}, slayout=none_box, fractal=512, pad={pad}>")


def pview(rows: int, cols: int, dtype: str = "f32") -> str:
    return f"!pto.partition_tensor_view<{rows}x{cols}x{dtype}>"


def binary_kernel(body: str, rows: int = 16, cols: int = 64, dtype: str = "f32", nargs: int = 3,
                  extra_consts: str = "") -> str:
    """A kernel @k(%arg0..%arg{nargs-1}: ptr) with views %v0.. and partitions %p0.. over rows x cols."""
    args = ", ".join(f"%arg{i}: !pto.ptr<{dtype}>" for i in range(nargs))
    views = "\n".join(
        f"    %v{i} = pto.make_tensor_view %arg{i}, shape = [%cr, %cc], strides = [%cc, %c1] "
        f": !pto.tensor_view<?x?x{dtype}>\n"
        f"    %p{i} = pto.partition_view %v{i}, offsets = [%c0, %c0], sizes = [%cr, %cc] "
        f": !pto.tensor_view<?x?x{dtype}> -> {pview(rows, cols, dtype)}"
        for i in range(nargs))
    return f"""module {{
  func.func @k({args}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cr = arith.constant {rows} : index
    %cc = arith.constant {cols} : index
{extra_consts}
{views}
{body}
    return
  }}
}}
"""


def copy_loop(n: int, late_race: bool, every: int = 0, windows: int = 0) -> str:
    """``n`` load -> store copies of 16x64 f32 windows (MTE2 -> MTE3 flags); first, V writes a
    tile %x; last, MTE3 stores %x: with ``late_race`` no V -> MTE3 flag orders the two. ``every``
    copies a full barrier lets the pipes catch up with the scalar unit (with bounded issue queues,
    machine param ``issue_queue_depth``, the loop runs in bounded memory without it too).
    ``windows``: copy only that many distinct windows, round and round (default: ``n``)."""
    barrier = ""
    if every:
        barrier = """
      %cut = arith.remui %i, %cevery : index
      %at = arith.cmpi eq, %cut, %c0 : index
      scf.if %at {
        pto.barrier <PIPE_ALL>
      }"""
    sync = "" if late_race else """
    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID1>]
    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID1>]"""
    tile, view = vec(16, 64), pview(16, 64)
    return f"""module {{
  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %cn = arith.constant {n} : index
    %cevery = arith.constant {max(every, 1)} : index
    %cwin = arith.constant {windows or n} : index
    %crows = arith.constant {16 * (windows or n)} : index
    %cst = arith.constant 1.000000e+00 : f32
    %c0_i64 = arith.constant 0 : i64
    %c4096_i64 = arith.constant 4096 : i64
    %vin = pto.make_tensor_view %arg0, shape = [%crows, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %vout = pto.make_tensor_view %arg1, shape = [%crows, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %t = pto.alloc_tile addr = %c0_i64 : {tile}
    %x = pto.alloc_tile addr = %c4096_i64 : {tile}
    pto.texpands ins(%cst : f32) outs(%x : {tile})
    pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
    scf.for %i = %c0 to %cn step %c1 {{
      %w = arith.remui %i, %cwin : index
      %row = arith.muli %w, %c16 : index
      %pin = pto.partition_view %vin, offsets = [%row, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> {view}
      %pout = pto.partition_view %vout, offsets = [%row, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> {view}
      pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
      pto.tload ins(%pin : {view}) outs(%t : {tile})
      pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
      pto.tstore ins(%t : {tile}) outs(%pout : {view})
      pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]{barrier}
    }}
    pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]{sync}
    %plast = pto.partition_view %vout, offsets = [%c0, %c0], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> {view}
    pto.tstore ins(%x : {tile}) outs(%plast : {view})
    return
  }}
}}
"""
