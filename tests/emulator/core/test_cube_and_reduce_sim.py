"""Matmul through the cube path (GM -> mat (NZ) -> left/right -> acc -> GM) and row/column
reductions and expands through the simulator, with hypothesis shapes, against NumPy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import pyptoemu
from ptoisa.dtypes import np_dtype

MAT = "!pto.tile_buf<loc=mat, dtype={t}, rows={r}, cols={c}, v_row={r}, v_col={c}, blayout=col_major, slayout=row_major, fractal=512, pad=0>"
LEFT = "!pto.tile_buf<loc=left, dtype={t}, rows={r}, cols={c}, v_row={r}, v_col={c}, blayout=row_major, slayout=row_major, fractal=512, pad=0>"
RIGHT = "!pto.tile_buf<loc=right, dtype={t}, rows={r}, cols={c}, v_row={r}, v_col={c}, blayout=row_major, slayout=col_major, fractal=512, pad=0>"
ACC = "!pto.tile_buf<loc=acc, dtype={t}, rows={r}, cols={c}, v_row={r}, v_col={c}, blayout=col_major, slayout=row_major, fractal=1024, pad=0>"
BIAS = "!pto.tile_buf<loc=bias, dtype={t}, rows=1, cols={c}, v_row=1, v_col={c}, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
MATROW = "!pto.tile_buf<loc=mat, dtype={t}, rows=1, cols={c}, v_row=1, v_col={c}, blayout=row_major, slayout=none_box, fractal=512, pad=0>"


def matmul_kernel(m: int, k: int, n: int, t: str, acc_t: str, bias: bool) -> str:
    a_mat, b_mat = MAT.format(t=t, r=m, c=k), MAT.format(t=t, r=k, c=n)
    a_l, b_r = LEFT.format(t=t, r=m, c=k), RIGHT.format(t=t, r=k, c=n)
    acc = ACC.format(t=acc_t, r=m, c=n)
    pa, pb, pc = (f"!pto.partition_tensor_view<{r}x{c}x{tt}>" for r, c, tt in ((m, k, t), (k, n, t), (m, n, acc_t)))
    body = [
        f"    %va = pto.make_tensor_view %arg0, shape = [%cm, %ck], strides = [%ck, %c1] : !pto.tensor_view<?x?x{t}>",
        f"    %vb = pto.make_tensor_view %arg1, shape = [%ck, %cn], strides = [%cn, %c1] : !pto.tensor_view<?x?x{t}>",
        f"    %vc = pto.make_tensor_view %arg2, shape = [%cm, %cn], strides = [%cn, %c1] : !pto.tensor_view<?x?x{acc_t}>",
        f"    %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%cm, %ck] : !pto.tensor_view<?x?x{t}> -> {pa}",
        f"    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%ck, %cn] : !pto.tensor_view<?x?x{t}> -> {pb}",
        f"    %pc = pto.partition_view %vc, offsets = [%c0, %c0], sizes = [%cm, %cn] : !pto.tensor_view<?x?x{acc_t}> -> {pc}",
        f"    %am = pto.alloc_tile : {a_mat}", f"    %bm = pto.alloc_tile : {b_mat}",
        f"    %al = pto.alloc_tile : {a_l}", f"    %br = pto.alloc_tile : {b_r}", f"    %acc = pto.alloc_tile : {acc}",
        f"    pto.tload ins(%pa : {pa}) outs(%am : {a_mat})",
        f"    pto.tload ins(%pb : {pb}) outs(%bm : {b_mat})",
        "    pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]",
        "    pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]",
        f"    pto.tmov ins(%am : {a_mat}) outs(%al : {a_l})",
        f"    pto.tmov ins(%bm : {b_mat}) outs(%br : {b_r})",
    ]
    if bias:
        bm, bt = MATROW.format(t=acc_t, c=n), BIAS.format(t=acc_t, c=n)
        pbias = f"!pto.partition_tensor_view<1x{n}x{acc_t}>"
        body[6:6] = [
            f"    %vbias = pto.make_tensor_view %arg3, shape = [%c1, %cn], strides = [%cn, %c1] : !pto.tensor_view<?x?x{acc_t}>",
            f"    %pbias = pto.partition_view %vbias, offsets = [%c0, %c0], sizes = [%c1, %cn] : !pto.tensor_view<?x?x{acc_t}> -> {pbias}",
            f"    %bmat = pto.alloc_tile : {bm}", f"    %bt = pto.alloc_tile : {bt}",
        ]
        body.insert(body.index("    pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, <EVENT_ID0>]"),
                    f"    pto.tload ins(%pbias : {pbias}) outs(%bmat : {bm})")
        body.append(f"    pto.tmov ins(%bmat : {bm}) outs(%bt : {bt})")
    body += ["    pto.set_flag[<PIPE_MTE1>, <PIPE_M>, <EVENT_ID0>]",
             "    pto.wait_flag[<PIPE_MTE1>, <PIPE_M>, <EVENT_ID0>]"]
    if bias:
        body.append(f"    pto.tmatmul.bias ins(%al, %br, %bt : {a_l}, {b_r}, {BIAS.format(t=acc_t, c=n)}) outs(%acc : {acc})")
    else:
        body.append(f"    pto.tmatmul ins(%al, %br : {a_l}, {b_r}) outs(%acc : {acc})")
    body += ["    pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]",
             "    pto.wait_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]",
             f"    pto.tstore ins(%acc : {acc}) outs(%pc : {pc})"]
    args = f"%arg0: !pto.ptr<{t}>, %arg1: !pto.ptr<{t}>, %arg2: !pto.ptr<{acc_t}>"
    if bias:
        args += f", %arg3: !pto.ptr<{acc_t}>"
    consts = "\n".join(f"    %c{n_} = arith.constant {v} : index" for n_, v in (("0", 0), ("1", 1)))
    consts += f"\n    %cm = arith.constant {m} : index\n    %ck = arith.constant {k} : index\n" \
              f"    %cn = arith.constant {n} : index"
    return f"func.func @mm({args}) {{\n{consts}\n" + "\n".join(body) + "\n    return\n}\n"


@settings(derandomize=True, deadline=None, max_examples=25)
@given(dt=st.sampled_from(["f16", "bf16", "f32", "i8"]), mb=st.integers(1, 4), kb=st.integers(1, 4),
       nb=st.integers(1, 4), bias=st.booleans(), seed=st.integers(0, 1000))
def test_matmul_through_the_cube(dt, mb, kb, nb, bias, seed):
    k0 = {"f16": 16, "bf16": 16, "f32": 8, "i8": 32}[dt]  # fractal box columns for this dtype
    m, k, n = 16 * mb, k0 * kb, max(16, k0) * nb  # B in L1 (NZ) needs cols % box cols == 0
    acc_t = "i32" if dt == "i8" else "f32"
    bias = bias and dt != "i8"
    rng = np.random.default_rng(seed)
    if dt == "i8":
        a = rng.integers(-8, 8, (m, k)).astype(np.int8)
        b = rng.integers(-8, 8, (k, n)).astype(np.int8)
    else:
        a = rng.standard_normal((m, k)).astype(np_dtype(dt))
        b = rng.standard_normal((k, n)).astype(np_dtype(dt))
    ins = {"arg0": a, "arg1": b}
    want = a.astype(np.float64) @ b.astype(np.float64)
    if bias:
        ins["arg3"] = rng.standard_normal((1, n)).astype(np.float32)
        want = want + ins["arg3"]
    res = pyptoemu.run(matmul_kernel(m, k, n, dt, acc_t, bias), inputs=ins)
    assert not res.findings, [str(f) for f in res.findings]
    got = res.outputs["arg2"]
    assert got.shape == (m, n)
    if dt == "i8":
        np.testing.assert_array_equal(got, want.astype(np.int32))
    else:
        tol = 1e-5 * k if dt == "f32" else 1e-3 * k
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert res.pipes["M"].instructions == 1 and res.pipes["FIX"].instructions == 1


def test_matmul_timing_matches_cost_model():
    """fp16 40x50 @ 50x60 = 62 cycles in the PTO-ISA cost model; here on padded 48x64 @ 64x64
    tiles with valid M=48: the M-pipe occupancy follows head + ceil(M/16)ceil(N/16)ceil(K/16)."""
    res = pyptoemu.run(matmul_kernel(48, 64, 64, "f16", "f32", False), keep_log=True)
    mm = next(i for i in res.core.trace_log if i.name == "tmatmul")
    head = res.core.machine.params.get("cube_head", 6)
    assert mm.occupancy == head + 3 * 4 * 4


VECROW = "!pto.tile_buf<loc=vec, dtype={t}, rows={r}, cols={c}, v_row={vr}, v_col={vc}, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
VECCOL = "!pto.tile_buf<loc=vec, dtype={t}, rows={r}, cols=1, v_row={vr}, v_col=1, blayout=col_major, slayout=none_box, fractal=512, pad=0>"

ROW_REDUCE = {"trowsum": np.sum, "trowmax": np.max, "trowmin": np.min}
ROW_EXPAND = {"trowexpandadd": np.add, "trowexpandsub": np.subtract, "trowexpandmul": np.multiply,
              "trowexpanddiv": np.divide, "trowexpandmax": np.maximum, "trowexpandmin": np.minimum}


@settings(derandomize=True, deadline=None, max_examples=30)
@given(red=st.sampled_from(sorted(ROW_REDUCE)), exp=st.sampled_from(sorted(ROW_EXPAND)),
       dt=st.sampled_from(["f32", "f16"]), rows8=st.integers(1, 4), cblocks=st.integers(1, 4),
       data=st.data())
def test_row_reduce_then_expand(red, exp, dt, rows8, cblocks, data):
    """dst = exp(x, red(x)) over a valid region, with the Rx1 column-vector (DN) reduction result."""
    es = 4 if dt == "f32" else 2
    rows, cols = 8 * rows8 * (2 if es == 2 else 1), cblocks * 32 // es
    vr = data.draw(st.integers(1, rows))
    vc = data.draw(st.integers(1, cols))
    seed = data.draw(st.integers(0, 1000))
    x = np.random.default_rng(seed).uniform(0.5, 2.0, (rows, cols)).astype(np_dtype(dt))
    t = VECROW.format(t=dt, r=rows, c=cols, vr=vr, vc=vc)
    tcol = VECCOL.format(t=dt, r=rows, vr=vr)
    pv = f"!pto.partition_tensor_view<{vr}x{vc}x{dt}>"
    text = f"""func.func @k(%arg0: !pto.ptr<{dt}>, %arg1: !pto.ptr<{dt}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cr = arith.constant {rows} : index
  %cc = arith.constant {cols} : index
  %cvr = arith.constant {vr} : index
  %cvc = arith.constant {vc} : index
  %v0 = pto.make_tensor_view %arg0, shape = [%cr, %cc], strides = [%cc, %c1] : !pto.tensor_view<?x?x{dt}>
  %v1 = pto.make_tensor_view %arg1, shape = [%cr, %cc], strides = [%cc, %c1] : !pto.tensor_view<?x?x{dt}>
  %p0 = pto.partition_view %v0, offsets = [%c0, %c0], sizes = [%cvr, %cvc] : !pto.tensor_view<?x?x{dt}> -> {pv}
  %p1 = pto.partition_view %v1, offsets = [%c0, %c0], sizes = [%cvr, %cvc] : !pto.tensor_view<?x?x{dt}> -> {pv}
  %x = pto.alloc_tile : {t}
  %tmp = pto.alloc_tile : {t}
  %y = pto.alloc_tile : {t}
  %r = pto.alloc_tile : {tcol}
  pto.tload ins(%p0 : {pv}) outs(%x : {t})
  pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
  pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
  pto.{red} ins(%x, %tmp : {t}, {t}) outs(%r : {tcol})
  pto.barrier <PIPE_V>
  pto.{exp} ins(%x, %r : {t}, {tcol}) outs(%y : {t})
  pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
  pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
  pto.tstore ins(%y : {t}) outs(%p1 : {pv})
  return
}}
"""
    res = pyptoemu.run(text, inputs={"arg0": x, "arg1": np.zeros_like(x)})
    assert not res.findings, [str(f) for f in res.findings]
    xv = x[:vr, :vc].astype(np.float32)
    r = ROW_REDUCE[red](xv, axis=1, keepdims=True).astype(np_dtype(dt)).astype(np.float32)
    want = ROW_EXPAND[exp](xv, r)
    tol = 1e-5 if dt == "f32" else 4e-3
    np.testing.assert_allclose(res.outputs["arg1"][:vr, :vc].astype(np.float32), want, rtol=tol, atol=tol)
    assert res.outputs["arg1"].dtype == (np.float32 if dt == "f32" else np.float16)
    assert ml_dtypes is not None
