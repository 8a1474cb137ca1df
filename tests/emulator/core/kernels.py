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
