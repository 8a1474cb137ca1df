"""Streaming vector kernels for the published whole-chip timings: the 8192 x 8192 fp16 add and the
12288^2 fp16 GM -> UB copy, split over ``block_num`` vector cores.

Both walk a list of equal work items (tiles); block ``b`` takes items ``b, b + N, b + 2N, ...``
(N = get_block_num), two at a time through two UB buffers (double buffering: the loads of one
buffer overlap the compute / store of the other, ordered by flags as an Ascend C queue of depth 2
would), with an ``scf.if`` for the odd item at the end.
"""

from __future__ import annotations


def _tile(dtype: str, rows: int, cols: int) -> str:
    return (f"!pto.tile_buf<loc=vec, dtype={dtype}, rows={rows}, cols={cols}, v_row={rows}, v_col={cols}, "
            f"blayout=row_major, slayout=none_box, fractal=512, pad=0>")


def _header(name: str, nargs: int, dtype: str, consts: dict[str, int]) -> list[str]:
    args = ", ".join(f"%arg{i}: !pto.ptr<{dtype}>" for i in range(nargs))
    lines = [f"func.func @{name}({args}) attributes {{pto.entry, pto.kernel_kind = #pto.kernel_kind<vector>}} {{"]
    lines += [f"  %{k} = arith.constant {v} : index" for k, v in consts.items()]
    lines += ["  %bid64 = pto.get_block_idx", "  %bnum64 = pto.get_block_num",  # i64: cast to index (§2.1)
              "  %bid = arith.index_cast %bid64 : i64 to index", "  %bnum = arith.index_cast %bnum64 : i64 to index",
              "  %step = arith.muli %bnum, %c2 : index"]
    return lines


def add_kernel(rows: int = 8192, cols: int = 8192, tr: int = 64, tc: int = 128) -> str:
    """z = x + y (fp16), tiles of tr x tc, double-buffered, items = tiles in row-major order."""
    t = _tile("f16", tr, tc)
    pv = f"!pto.partition_tensor_view<{tr}x{tc}xf16>"
    per_row = cols // tc
    tb = tr * tc * 2
    lines = _header("add", 3, "f16", {"c0": 0, "c1": 1, "c2": 2, "cR": rows, "cC": cols, "cTR": tr, "cTC": tc,
                                      "cPR": per_row, "cN": rows // tr * per_row})
    for i in range(3):
        lines.append(f"  %v{i} = pto.make_tensor_view %arg{i}, shape = [%cR, %cC], strides = [%cC, %c1] "
                     f": !pto.tensor_view<?x?xf16>")
    for b in range(2):
        for k, name in enumerate("xyz"):
            lines.append(f"  %a{name}{b} = arith.constant {(3 * b + k) * tb} : i64")
            lines.append(f"  %{name}{b} = pto.alloc_tile addr = %a{name}{b} : {t}")
        lines.append(f"  pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID{b}>]")

    def item(b: int, idx: str, ind: str) -> list[str]:
        e = f"<EVENT_ID{b}>"
        body = [f"%q{b} = arith.divsi {idx}, %cPR : index", f"%m{b} = arith.remsi {idx}, %cPR : index",
                f"%r{b} = arith.muli %q{b}, %cTR : index", f"%k{b} = arith.muli %m{b}, %cTC : index"]
        body += [f"%p{n}{b} = pto.partition_view %v{j}, offsets = [%r{b}, %k{b}], sizes = [%cTR, %cTC] "
                 f": !pto.tensor_view<?x?xf16> -> {pv}" for j, n in enumerate("xyz")]
        body += [f"pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, {e}]",
                 f"pto.tload ins(%px{b} : {pv}) outs(%x{b} : {t})",
                 f"pto.tload ins(%py{b} : {pv}) outs(%y{b} : {t})",
                 f"pto.set_flag[<PIPE_MTE2>, <PIPE_V>, {e}]", f"pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, {e}]",
                 f"pto.tadd ins(%x{b}, %y{b} : {t}, {t}) outs(%z{b} : {t})",
                 f"pto.set_flag[<PIPE_V>, <PIPE_MTE3>, {e}]", f"pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, {e}]",
                 f"pto.tstore ins(%z{b} : {t}) outs(%pz{b} : {pv})",
                 f"pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, {e}]"]
        return [ind + x for x in body]

    lines += _pairs(item)
    return "\n".join(lines) + "\n"


def copy_kernel(side: int = 12288, burst_bytes: int = 131072, ub_bytes: int = 131072) -> str:
    """GM -> UB copy of a side x side fp16 matrix. Each load fills ``ub_bytes`` of UB from
    contiguous GM runs of ``burst_bytes`` (the "tile size" of the published figures): 128 KiB and
    8 KiB runs are whole row pieces; 128 B runs are 64-element columns of rows ``side`` apart."""
    cols = burst_bytes // 2
    rows = max(1, ub_bytes // burst_bytes)
    if cols > side:  # a run longer than a row: the window spans whole rows of the flat matrix
        view_rows, view_cols = side * side // cols, cols
    else:
        view_rows, view_cols = side, side
    per_row = view_cols // cols
    n_items = view_rows // rows * per_row
    t = _tile("f16", rows, cols)
    pv = f"!pto.partition_tensor_view<{rows}x{cols}xf16>"
    lines = _header("copy", 1, "f16", {"c0": 0, "c1": 1, "c2": 2, "cR": view_rows, "cC": view_cols, "cTR": rows,
                                       "cTC": cols, "cPR": per_row, "cN": n_items})
    lines.append("  %v0 = pto.make_tensor_view %arg0, shape = [%cR, %cC], strides = [%cC, %c1] "
                 ": !pto.tensor_view<?x?xf16>")
    # two buffers when they fit in UB (192 KiB); a 128 KiB tile reuses one (the loads are in order on
    # MTE2 and nothing reads the data, so only the timing matters)
    stride = ub_bytes if 2 * ub_bytes <= 196608 else 0
    for b in range(2):
        lines.append(f"  %ab{b} = arith.constant {b * stride} : i64")
        lines.append(f"  %u{b} = pto.alloc_tile addr = %ab{b} : {t}")
        lines.append(f"  pto.set_flag[<PIPE_V>, <PIPE_MTE2>, <EVENT_ID{b}>]")

    def item(b: int, idx: str, ind: str) -> list[str]:
        e = f"<EVENT_ID{b}>"
        body = [f"%q{b} = arith.divsi {idx}, %cPR : index", f"%m{b} = arith.remsi {idx}, %cPR : index",
                f"%r{b} = arith.muli %q{b}, %cTR : index", f"%k{b} = arith.muli %m{b}, %cTC : index",
                (f"%p{b} = pto.partition_view %v0, offsets = [%r{b}, %k{b}], sizes = [%cTR, %cTC] "
                 f": !pto.tensor_view<?x?xf16> -> {pv}"),
                f"pto.wait_flag[<PIPE_V>, <PIPE_MTE2>, {e}]",
                f"pto.tload ins(%p{b} : {pv}) outs(%u{b} : {t})",
                # the consumer (V) frees the buffer once the load landed
                f"pto.set_flag[<PIPE_MTE2>, <PIPE_V>, {e}]", f"pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, {e}]",
                f"pto.set_flag[<PIPE_V>, <PIPE_MTE2>, {e}]"]
        return [ind + x for x in body]

    lines += _pairs(item, last_wait=("V", "MTE2"))
    return "\n".join(lines) + "\n"


def _pairs(item, last_wait: tuple[str, str] = ("MTE3", "MTE2")) -> list[str]:
    """Block b's items b, b + N, ... two per iteration (buffers 0 and 1), the odd one in an if."""
    src, dst = last_wait
    out = ["  scf.for %i = %bid to %cN step %step {"]
    out += item(0, "%i", "    ")
    out += ["    %j = arith.addi %i, %bnum : index", "    %more = arith.cmpi slt, %j, %cN : index",
            "    scf.if %more {"]
    out += item(1, "%j", "      ")
    out += ["    }", "  }"]
    for b in range(2):
        out.append(f"  pto.wait_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID{b}>]")
    out += ["  return", "}"]
    return out
