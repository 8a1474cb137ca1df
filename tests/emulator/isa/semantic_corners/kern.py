"""A tiny `.pto` kernel builder for the red-team semantics tests: load GM args into vec tiles, run
body lines between two PIPE_ALL barriers, store tiles back to GM."""

from __future__ import annotations

import numpy as np

import pyptoemu
import pyptoemu.api


def vec(rows: int, cols: int, dtype: str, vr: int | None = None, vc: int | None = None, pad: int = 0,
        blayout: str = "row_major") -> str:
    vr = rows if vr is None else vr
    vc = cols if vc is None else vc
    return (f"!pto.tile_buf<loc=vec, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, v_col={vc}, "
            f"blayout={blayout}, slayout=none_box, fractal=512, pad={pad}>")


def run(args: list[tuple[str, np.ndarray]], tiles: dict[str, str],
        loads: list[tuple[int, str, int, int]], body: list[str],
        stores: list[tuple[str, int, int, int]], consts: list[str] = ()) -> pyptoemu.api.RunResult:
    """args: (dtype, array) per GM pointer %arg<i>; loads (arg, tile, vr, vc) read the top-left vr x vc
    window; stores (tile, arg, vr, vc) write it. Returns the RunResult (``.outputs["arg<i>"]``)."""
    sizes = {0, 1} | {n for _, a in args for n in a.shape}
    sizes |= {n for *_, vr, vc in list(loads) + list(stores) for n in (vr, vc)}
    lines = ["module {", "  func.func @k(" + ", ".join(f"%arg{i}: !pto.ptr<{d}>" for i, (d, _) in enumerate(args))
             + ") {"]
    lines += [f"    %i{n} = arith.constant {n} : index" for n in sorted(sizes)]
    lines += [f"    {c}" for c in consts]
    for i, (d, a) in enumerate(args):
        r, c = a.shape
        lines.append(f"    %v{i} = pto.make_tensor_view %arg{i}, shape = [%i{r}, %i{c}], strides = [%i{c}, %i1] "
                     f": !pto.tensor_view<?x?x{d}>")
    lines += [f"    %{n} = pto.alloc_tile : {t}" for n, t in tiles.items()]
    k = 0

    def window(i: int, vr: int, vc: int) -> tuple[str, str]:
        nonlocal k
        k += 1
        d = args[i][0]
        pv = f"!pto.partition_tensor_view<{vr}x{vc}x{d}>"
        lines.append(f"    %w{k} = pto.partition_view %v{i}, offsets = [%i0, %i0], sizes = [%i{vr}, %i{vc}] "
                     f": !pto.tensor_view<?x?x{d}> -> {pv}")
        return f"%w{k}", pv

    for i, t, vr, vc in loads:
        w, pv = window(i, vr, vc)
        lines.append(f"    pto.tload ins({w} : {pv}) outs(%{t} : {tiles[t]})")
    lines.append("    pto.barrier <PIPE_ALL>")
    lines += [f"    {b}" for b in body]
    lines.append("    pto.barrier <PIPE_ALL>")
    for t, i, vr, vc in stores:
        w, pv = window(i, vr, vc)
        lines.append(f"    pto.tstore ins(%{t} : {tiles[t]}) outs({w} : {pv})")
    lines += ["    return", "  }", "}"]
    text = "\n".join(lines) + "\n"
    res = pyptoemu.run(text, inputs={f"arg{i}": a for i, (_, a) in enumerate(args)})
    assert not res.errors(), [f.message for f in res.errors()]
    return res
