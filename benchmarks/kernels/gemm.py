"""GEMM fp16 -> fp32 on the cube cores, shaped like pto-isa's a2a3 gemm_performance kernel: C tiles
of 128 x 256 handed out round-robin to the blocks; per tile, K in steps of 256 loaded to L1 (A
128x256, B 256x256, two L1 buffers), each split into 4 k-steps of 64 extracted to L0A / L0B (two
L0 buffers each) and multiplied into one 128 x 256 f32 accumulator, stored by the fixpipe. Flags:
MTE2<->MTE1 per L1 buffer, MTE1<->M per L0 buffer, M<->FIX for the accumulator.
"""

from __future__ import annotations

BM, BN, BK, STEP_K = 128, 256, 64, 4
KB = BK * STEP_K


def _t(loc: str, dtype: str, rows: int, cols: int) -> str:
    blayout, slayout, fractal = {
        "mat": ("col_major", "row_major", 512), "left": ("row_major", "row_major", 512),
        "right": ("row_major", "col_major", 512), "acc": ("col_major", "row_major", 1024)}[loc]
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={rows}, v_col={cols}, "
            f"blayout={blayout}, slayout={slayout}, fractal={fractal}, pad=0>")


def gemm_kernel(m: int, k: int, n: int) -> str:
    if m % BM or n % BN or k % (2 * KB):
        raise ValueError(f"gemm {m}x{k}x{n}: M must be a multiple of {BM}, N of {BN}, K of {2 * KB}")
    am, bm_, al, br, acc = (_t("mat", "f16", BM, KB), _t("mat", "f16", KB, BN), _t("left", "f16", BM, BK),
                            _t("right", "f16", BK, BN), _t("acc", "f32", BM, BN))
    pa, pb, pc = (f"!pto.partition_tensor_view<{BM}x{KB}xf16>", f"!pto.partition_tensor_view<{KB}x{BN}xf16>",
                  f"!pto.partition_tensor_view<{BM}x{BN}xf32>")
    consts = {"c0": 0, "c1": 1, "c2": 2, "cM": m, "cK": k, "cN": n, "cBM": BM, "cBN": BN, "cKB": KB,
              "cTN": n // BN, "cT": (m // BM) * (n // BN), "cNK": k // KB}
    consts.update({f"cs{s}": s * BK for s in range(STEP_K)})
    out = [("func.func @gemm(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f32>) "
            "attributes {pto.entry, pto.kernel_kind = #pto.kernel_kind<cube>} {")]
    out += [f"  %{name} = arith.constant {v} : index" for name, v in consts.items()]
    out += ["  %va = pto.make_tensor_view %arg0, shape = [%cM, %cK], strides = [%cK, %c1] : !pto.tensor_view<?x?xf16>",
            "  %vb = pto.make_tensor_view %arg1, shape = [%cK, %cN], strides = [%cN, %c1] : !pto.tensor_view<?x?xf16>",
            "  %vc = pto.make_tensor_view %arg2, shape = [%cM, %cN], strides = [%cN, %c1] : !pto.tensor_view<?x?xf32>"]
    addr = {"mat": 0, "left": 0, "right": 0}
    for b in range(2):
        for name, loc, t, size in (("am", "mat", am, BM * KB * 2), ("bm", "mat", bm_, KB * BN * 2),
                                   ("al", "left", al, BM * BK * 2), ("br", "right", br, BK * BN * 2)):
            out.append(f"  %a_{name}{b} = arith.constant {addr[loc]} : i64")
            out.append(f"  %{name}{b} = pto.alloc_tile addr = %a_{name}{b} : {t}")
            addr[loc] += size
    out += ["  %a_acc = arith.constant 0 : i64", f"  %acc = pto.alloc_tile addr = %a_acc : {acc}"]
    out += ["  %bid64 = pto.get_block_idx", "  %bnum64 = pto.get_block_num",  # i64: cast to index (§2.1, §3.2)
            "  %bid = arith.index_cast %bid64 : i64 to index", "  %bnum = arith.index_cast %bnum64 : i64 to index"]
    for b in range(2):
        out += [f"  pto.set_flag[<PIPE_MTE1>, <PIPE_MTE2>, <EVENT_ID{b}>]",
                f"  pto.set_flag[<PIPE_M>, <PIPE_MTE1>, <EVENT_ID{b}>]"]
    out.append("  pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]")
    out += ["  scf.for %t = %bid to %cT step %bnum {",
            "    %tq = arith.divsi %t, %cTN : index", "    %tr = arith.remsi %t, %cTN : index",
            "    %row = arith.muli %tq, %cBM : index", "    %col = arith.muli %tr, %cBN : index",
            "    pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]",
            "    scf.for %kk = %c0 to %cNK step %c2 {",
            "      %first = arith.cmpi eq, %kk, %c0 : index"]
    for b in range(2):
        e = f"<EVENT_ID{b}>"
        out += [f"      %kx{b} = arith.addi %kk, %c{b} : index" if b else "      %kx0 = arith.addi %kk, %c0 : index",
                f"      %ko{b} = arith.muli %kx{b}, %cKB : index",
                (f"      %pa{b} = pto.partition_view %va, offsets = [%row, %ko{b}], sizes = [%cBM, %cKB] "
                 f": !pto.tensor_view<?x?xf16> -> {pa}"),
                (f"      %pb{b} = pto.partition_view %vb, offsets = [%ko{b}, %col], sizes = [%cKB, %cBN] "
                 f": !pto.tensor_view<?x?xf16> -> {pb}"),
                f"      pto.wait_flag[<PIPE_MTE1>, <PIPE_MTE2>, {e}]",
                f"      pto.tload ins(%pa{b} : {pa}) outs(%am{b} : {am})",
                f"      pto.tload ins(%pb{b} : {pb}) outs(%bm{b} : {bm_})",
                f"      pto.set_flag[<PIPE_MTE2>, <PIPE_MTE1>, {e}]",
                f"      pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE1>, {e}]"]
        for s in range(STEP_K):
            q = s % 2
            eq = f"<EVENT_ID{q}>"
            out += [f"      pto.wait_flag[<PIPE_M>, <PIPE_MTE1>, {eq}]",
                    f"      pto.textract ins(%am{b}, %c0, %cs{s} : {am}, index, index) outs(%al{q} : {al})",
                    f"      pto.textract ins(%bm{b}, %cs{s}, %c0 : {bm_}, index, index) outs(%br{q} : {br})",
                    f"      pto.set_flag[<PIPE_MTE1>, <PIPE_M>, {eq}]",
                    f"      pto.wait_flag[<PIPE_MTE1>, <PIPE_M>, {eq}]"]
            mm_acc = f"pto.tmatmul.acc ins(%acc, %al{q}, %br{q} : {acc}, {al}, {br}) outs(%acc : {acc})"
            if b == 0 and s == 0:
                out += ["      scf.if %first {",
                        f"        pto.tmatmul ins(%al{q}, %br{q} : {al}, {br}) outs(%acc : {acc})",
                        "      } else {", f"        {mm_acc}", "      }"]
            else:
                out.append(f"      {mm_acc}")
            out.append(f"      pto.set_flag[<PIPE_M>, <PIPE_MTE1>, {eq}]")
        out.append(f"      pto.set_flag[<PIPE_MTE1>, <PIPE_MTE2>, {e}]")
    out += ["    }",
            (f"    %pc = pto.partition_view %vc, offsets = [%row, %col], sizes = [%cBM, %cBN] "
             f": !pto.tensor_view<?x?xf32> -> {pc}"),
            "    pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]", "    pto.wait_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]",
            f"    pto.tstore ins(%acc : {acc}) outs(%pc : {pc})",
            "    pto.set_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]", "  }"]
    for b in range(2):
        out += [f"  pto.wait_flag[<PIPE_MTE1>, <PIPE_MTE2>, <EVENT_ID{b}>]",
                f"  pto.wait_flag[<PIPE_M>, <PIPE_MTE1>, <EVENT_ID{b}>]"]
    out += ["  pto.wait_flag[<PIPE_FIX>, <PIPE_M>, <EVENT_ID0>]", "  return", "}"]
    return "\n".join(out) + "\n"
