"""Red team 10: timing relations a hardware engineer knows, pinned.

Kernel authors use the emulator to choose between two versions of a kernel, so the *relations* must
hold even where absolute numbers are approximate. Each test runs two (or a few) kernels that differ
in one respect and checks which one is faster, by roughly how much (the figure expected from the
machine file, shared/spec/machine-a2a3.md's calibration data), and where it matters that the summary's
bound names the bottleneck. Timing only (``data=False``): the cycles are those of a run with data.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import pyptoemu
from ptoisa.machine import load_machine

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
A2A3 = load_machine("a2a3")
P = A2A3.params


def _streams():
    """benchmarks/kernels/streams.py: the double-buffered add and copy of the published timings."""
    spec = importlib.util.spec_from_file_location("streams", ROOT / "benchmarks" / "kernels" / "streams.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STREAMS = _streams()


def run(text: str | Path, **kw) -> pyptoemu.RunResult:
    kw.setdefault("data", False)
    kw.setdefault("races", "off")
    return pyptoemu.run(text, **kw)


def busy(res: pyptoemu.RunResult, pipe: str) -> int:
    return res.pipes[pipe].busy_cycles


def vt(dt: str, r: int, c: int) -> str:
    return f"!pto.tile_buf<vec, {r}x{c}x{dt}>"


def pv(dt: str, r: int, c: int) -> str:
    return f"!pto.partition_tensor_view<{r}x{c}x{dt}>"


def kernel(args: list[str], body: list[str], consts: list[int], kind: str = "vector") -> str:
    """One entry function (no sync ops: synchronised automatically) with index constants %cN."""
    cs = [f"    %c{v} = arith.constant {v} : index" for v in sorted({0, 1, *consts})]
    return ('module attributes {pto.target_arch = "a3"} {\n'
            f"  func.func @k({', '.join(args)}) attributes {{pto.entry, pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{\n"
            + "\n".join(cs + body) + "\n    return\n  }\n}\n")


def loads(rows: int, cols: int, r: int, c: int, gm_cols: int | None = None, dt: str = "f32") -> str:
    """Load the rows x cols corner of a rows x gm_cols GM matrix in r x c windows, one tile."""
    gm_cols = gm_cols or cols
    body = [(f"    %v = pto.make_tensor_view %a, shape = [%c{rows}, %c{gm_cols}], strides = [%c{gm_cols}, %c1] "
            f": !pto.tensor_view<?x?x{dt}>"),
            f"    %t = pto.alloc_tile : {vt(dt, r, c)}",
            f"    scf.for %i = %c0 to %c{rows} step %c{r} {{",
            f"      scf.for %j = %c0 to %c{cols} step %c{c} {{",
            (f"        %p = pto.partition_view %v, offsets = [%i, %j], sizes = [%c{r}, %c{c}] "
            f": !pto.tensor_view<?x?x{dt}> -> {pv(dt, r, c)}"),
            f"        pto.tload ins(%p : {pv(dt, r, c)}) outs(%t : {vt(dt, r, c)})",
            "      }", "    }"]
    return kernel([f"%a: !pto.ptr<{dt}>"], body, [rows, cols, r, c, gm_cols])


def one_vector_op(op: str, dt: str, r: int, c: int, srcs: int = 2, dst: tuple[int, int] | None = None) -> str:
    """Load ``srcs`` r x c tiles, run ``op`` on them into dst (r x c unless given)."""
    t = vt(dt, r, c)
    td = vt(dt, *(dst or (r, c)))
    body = []
    for i in range(srcs):
        body += [(f"    %v{i} = pto.make_tensor_view %a{i}, shape = [%c{r}, %c{c}], strides = [%c{c}, %c1] "
                 f": !pto.tensor_view<?x?x{dt}>"),
                 f"    %t{i} = pto.alloc_tile : {t}",
                 (f"    %p{i} = pto.partition_view %v{i}, offsets = [%c0, %c0], sizes = [%c{r}, %c{c}] "
                 f": !pto.tensor_view<?x?x{dt}> -> {pv(dt, r, c)}"),
                 f"    pto.tload ins(%p{i} : {pv(dt, r, c)}) outs(%t{i} : {t})"]
    body += [f"    %d = pto.alloc_tile : {td}",
             f"    pto.{op} ins({', '.join(f'%t{i}' for i in range(srcs))} : {', '.join([t] * srcs)}) outs(%d : {td})"]
    return kernel([f"%a{i}: !pto.ptr<{dt}>" for i in range(srcs)], body, [r, c])


def _cube_tile(loc: str, dt: str, rows: int, cols: int) -> str:
    blayout, slayout, fractal = {
        "mat": ("col_major", "row_major", 512), "left": ("row_major", "row_major", 512),
        "right": ("row_major", "col_major", 512), "acc": ("col_major", "row_major", 1024)}[loc]
    return (f"!pto.tile_buf<loc={loc}, dtype={dt}, rows={rows}, cols={cols}, v_row={rows}, v_col={cols}, "
            f"blayout={blayout}, slayout={slayout}, fractal={fractal}, pad=0>")


def matmul(m: int, k: int, n: int, steps: int, dt: str = "f16") -> str:
    """C = A @ B on one cube core: A and B loaded to L1 once, K in ``steps`` extracts + matmuls."""
    bk = k // steps
    am, bm = _cube_tile("mat", dt, m, k), _cube_tile("mat", dt, k, n)
    al, br, acc = _cube_tile("left", dt, m, bk), _cube_tile("right", dt, bk, n), _cube_tile("acc", "f32", m, n)
    body = [f"    %va = pto.make_tensor_view %a, shape = [%c{m}, %c{k}], strides = [%c{k}, %c1] : !pto.tensor_view<?x?x{dt}>",
            f"    %vb = pto.make_tensor_view %b, shape = [%c{k}, %c{n}], strides = [%c{n}, %c1] : !pto.tensor_view<?x?x{dt}>",
            f"    %vc = pto.make_tensor_view %c, shape = [%c{m}, %c{n}], strides = [%c{n}, %c1] : !pto.tensor_view<?x?xf32>",
            f"    %am = pto.alloc_tile : {am}", f"    %bm = pto.alloc_tile : {bm}", f"    %al = pto.alloc_tile : {al}",
            f"    %br = pto.alloc_tile : {br}", f"    %acc = pto.alloc_tile : {acc}",
            (f"    %pa = pto.partition_view %va, offsets = [%c0, %c0], sizes = [%c{m}, %c{k}] "
            f": !pto.tensor_view<?x?x{dt}> -> {pv(dt, m, k)}"),
            (f"    %pb = pto.partition_view %vb, offsets = [%c0, %c0], sizes = [%c{k}, %c{n}] "
            f": !pto.tensor_view<?x?x{dt}> -> {pv(dt, k, n)}"),
            (f"    %pc = pto.partition_view %vc, offsets = [%c0, %c0], sizes = [%c{m}, %c{n}] "
            f": !pto.tensor_view<?x?xf32> -> {pv('f32', m, n)}"),
            f"    pto.tload ins(%pa : {pv(dt, m, k)}) outs(%am : {am})",
            f"    pto.tload ins(%pb : {pv(dt, k, n)}) outs(%bm : {bm})"]
    for s in range(steps):
        body += [f"    %k{s} = arith.constant {s * bk} : index",
                 f"    pto.textract ins(%am, %c0, %k{s} : {am}, index, index) outs(%al : {al})",
                 f"    pto.textract ins(%bm, %k{s}, %c0 : {bm}, index, index) outs(%br : {br})",
                 (f"    pto.tmatmul ins(%al, %br : {al}, {br}) outs(%acc : {acc})" if s == 0 else
                  f"    pto.tmatmul.acc ins(%acc, %al, %br : {acc}, {al}, {br}) outs(%acc : {acc})")]
    body.append(f"    pto.tstore ins(%acc : {acc}) outs(%pc : {pv('f32', m, n)})")
    return kernel([f"%a: !pto.ptr<{dt}>", f"%b: !pto.ptr<{dt}>", "%c: !pto.ptr<f32>"], body, [m, k, n], kind="cube")


# ---------------------------------------------------------------------------------- pipelining


def test_double_buffering_nearly_halves_a_three_stage_stream():
    """Same 256 tiles, ping/pong vs one buffer: the double-buffered kernel overlaps load, compute
    and store of two tiles, so it takes about half (measured: 141716 vs 282534 cycles, 0.50)."""
    double = run(EXAMPLES / "double_buffer_1024.pto")
    single = run(EXAMPLES / "single_buffer_1024.pto")
    assert 0.45 <= double.cycles / single.cycles <= 0.6
    # the same work on every pipe: only the overlap differs
    for pipe in ("MTE2", "V"):
        assert busy(double, pipe) == pytest.approx(busy(single, pipe), rel=0.01)


def test_a_full_barrier_after_every_instruction_costs_the_overlap():
    """The double-buffered add of 16 tiles as written (flags) vs in program order (``sync='serial'``:
    a full barrier after every instruction): the flags let the next tile's loads run under this
    tile's add and store (13218 vs 22923 cycles); the flagged run is MTE2-bound."""
    text = STREAMS.add_kernel(rows=64 * 16, cols=128)
    flags, serial = run(text), run(text, sync="serial")
    assert 1.5 <= serial.cycles / flags.cycles <= 2.0
    assert flags.bound.startswith("MTE2-bound")


def test_a_stream_loop_scales_linearly_in_its_iterations():
    """8, 16, 32 tiles of the double-buffered add: each doubling adds twice the cycles of the one
    before (6914, 13218, 25826: +6304, +12608), i.e. a fixed cost per tile, two 16 KiB loads."""
    c8, c16, c32 = (run(STREAMS.add_kernel(rows=64 * n, cols=128)).cycles for n in (8, 16, 32))
    assert c32 - c16 == pytest.approx(2 * (c16 - c8), rel=0.02)
    per_tile = (c32 - c16) / 16
    two_loads = 2 * (P["lat_gm_to_ub"] + 64 * 128 * 2 / P["bw_gm_to_ub"])
    assert per_tile == pytest.approx(two_loads, rel=0.05)


def _tadds_chain(n: int, dependent: bool) -> str:
    """One 32x64 f32 load, ``n`` tadds (each on the previous result, or all on the loaded tile),
    a store of the last: synchronised automatically (a PIPE_V barrier between dependent tadds)."""
    t, p = vt("f32", 32, 64), pv("f32", 32, 64)
    body = ["    %v = pto.make_tensor_view %a, shape = [%c32, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>",
            f"    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c32, %c64] : !pto.tensor_view<?x?xf32> -> {p}",
            "    %s = arith.constant 1.0 : f32"]
    body += [f"    %t{i} = pto.alloc_tile : {t}" for i in range(n + 1)]
    body.append(f"    pto.tload ins(%p : {p}) outs(%t0 : {t})")
    body += [f"    pto.tadds ins(%t{i if dependent else 0}, %s : {t}, f32) outs(%t{i + 1} : {t})" for i in range(n)]
    body.append(f"    pto.tstore ins(%t{n} : {t}) outs(%p : {p})")
    return kernel(["%a: !pto.ptr<f32>"], body, [32, 64])


def test_dependent_vector_ops_pay_their_tail_and_a_barrier_each():
    """8 tadds on one loaded tile stream through the pipelined V pipe back to back; 8 tadds each on
    the previous result wait for its completion (tail) and a PIPE_V barrier (16 cycles) in between:
    7 x (18 + 16) = 238 cycles more (1069 vs 1307)."""
    independent, dependent = (run(_tadds_chain(8, d), races="error") for d in (False, True))
    assert dependent.cycles - independent.cycles == 7 * (P["v_adds_tail"] + A2A3.costs["barrier_v"])


def _load_scale_store(sync: str) -> str:
    """One tile loaded, scaled, stored, ordered by flag pairs or by full barriers."""
    t, p = vt("f32", 64, 64), pv("f32", 64, 64)

    def order(src: str, dst: str) -> list[str]:
        if sync == "flags":
            return [f"    pto.set_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID0>]",
                    f"    pto.wait_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID0>]"]
        return ["    pto.barrier <PIPE_ALL>"]

    body = ["    %s = arith.constant 2.0 : f32",
            "    %v = pto.make_tensor_view %a, shape = [%c64, %c64], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>",
            f"    %p = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c64, %c64] : !pto.tensor_view<?x?xf32> -> {p}",
            f"    %t = pto.alloc_tile : {t}", f"    %u = pto.alloc_tile : {t}",
            f"    pto.tload ins(%p : {p}) outs(%t : {t})", *order("MTE2", "V"),
            f"    pto.tmuls ins(%t, %s : {t}, f32) outs(%u : {t})", *order("V", "MTE3"),
            f"    pto.tstore ins(%u : {t}) outs(%p : {p})"]
    return kernel(["%a: !pto.ptr<f32>"], body, [64])


def test_a_full_barrier_costs_little_more_than_a_flag_pair_in_a_serial_chain():
    """load -> tmuls -> store ordered by two flag pairs or two PIPE_ALL barriers: nothing could
    overlap anyway, so the barriers cost only their own 16 cycles over the flags' 1 + 1 each."""
    flags, barriers = (run(_load_scale_store(s), races="error") for s in ("flags", "barriers"))
    assert 0 < barriers.cycles - flags.cycles <= 2 * A2A3.costs["barrier_all"]  # 912 vs 942


# ---------------------------------------------------------------------------------- data movement


def test_one_big_dma_beats_the_same_bytes_in_many_small_ones():
    """32 KiB in one TLOAD vs 16 of 2 KiB vs 64 of 512 B: each DMA pays the fixed part (265 cycles,
    st tload c01-c05), so the small ones cost 16 x and 64 x that on top of the same bytes."""
    big, mid, small = (busy(run(loads(64, 128, r, 128)), "MTE2") for r in (64, 4, 1))
    fixed, bw = P["lat_gm_to_ub"], P["bw_gm_to_ub"]
    assert big == pytest.approx(fixed + 32768 / bw, abs=2)
    assert mid == pytest.approx(16 * (fixed + 2048 / bw), abs=16)
    assert small == pytest.approx(64 * (fixed + 512 / bw), abs=64)
    assert big < mid < small
    assert mid / big > 8 and small / big > 30


def test_strided_windows_cost_more_than_contiguous_ones():
    """A 64x8 f32 window (2 KiB) of a 64x8 matrix is one burst; of a 64x16 or 64x1024 one it is 64
    bursts of 32 B, each costing the bandwidth of a dma_min_burst one (336 B): 281 vs 433 cycles.
    A 64x64 f32 window of a wider matrix: 64 bursts of 256 B (still below 336 B): 393 vs 433."""
    contiguous = busy(run(loads(64, 8, 64, 8)), "MTE2")
    for gm in (16, 1024):
        strided = busy(run(loads(64, 8, 64, 8, gm_cols=gm)), "MTE2")
        assert strided == pytest.approx(P["lat_gm_to_ub"] + 64 * P["dma_min_burst"] / P["bw_gm_to_ub"], abs=2)
        assert strided / contiguous > 1.4
    wide = busy(run(loads(64, 64, 64, 64)), "MTE2")
    assert busy(run(loads(64, 64, 64, 64, gm_cols=1024)), "MTE2") > wide


# ---------------------------------------------------------------------------------- vector unit


def test_row_narrow_tiles_pay_one_repeat_per_row():
    """tadd of 4096 f32 as 256x16 (64 B rows) vs 16x256 (1 KiB rows): the narrow one issues a 256 B
    repeat per row (256 repeats), the wide one 64: about 4x (st tadds f32 256x16: 266 vs 32x64: 57)."""
    narrow = busy(run(one_vector_op("tadd", "f32", 256, 16)), "V")
    wide = busy(run(one_vector_op("tadd", "f32", 16, 256)), "V")
    assert narrow / wide == pytest.approx(4, rel=0.15)


def test_unary_ops_stream_whole_tiles_whatever_the_row_width():
    """texp is not repeated per row (st texp 32x32 f16, 64 B rows: 47 cycles = 8 repeats of the
    whole 2 KiB): 256x16 and 16x256 f32 cost the same."""
    assert busy(run(one_vector_op("texp", "f32", 256, 16, srcs=1)), "V") == \
        busy(run(one_vector_op("texp", "f32", 16, 256, srcs=1)), "V")


def test_f16_halves_vector_time_only_with_full_repeats():
    """4096 elements as 32x128: f16 rows are 256 B (32 repeats), f32 rows 512 B (64): f16 about half.
    As 64x64 f16 the rows are 128 B, one repeat each plus the unaligned penalty: f16 is then no
    faster than f32 (st tadd 64x64 i16 167 vs f32 151)."""
    f16 = busy(run(one_vector_op("tadd", "f16", 32, 128)), "V")
    f32 = busy(run(one_vector_op("tadd", "f32", 32, 128)), "V")
    assert f16 / f32 == pytest.approx(0.54, abs=0.06)
    assert busy(run(one_vector_op("tadd", "f16", 64, 64)), "V") >= busy(run(one_vector_op("tadd", "f32", 64, 64)), "V")


@pytest.mark.parametrize("dt", ["f32", "f16"])
def test_row_reductions_cost_a_fixed_amount_per_row(dt):
    """trowsum of 32, 64, 128 rows of 64 elements: ~7 cycles per row (st trowsum 64x64: 492)."""
    cost = {r: busy(run(one_vector_op("trowsum", dt, r, 64, srcs=1, dst=(r, 1))), "V") for r in (32, 64, 128)}
    assert cost[128] - cost[64] == 2 * (cost[64] - cost[32])
    assert (cost[64] - cost[32]) / 32 == pytest.approx(P["v_rowred_rep"], abs=0.1)


# ---------------------------------------------------------------------------------- cube


def test_splitting_k_costs_only_the_extra_heads_and_extract_starts():
    """128x256x128 f16 in 1, 2, 4 k-steps: the cube does the same 16x16x16 steps plus a head per
    matmul, MTE1 the same bytes plus a start-up per extract; the whole kernel within 10%."""
    one, two, four = (run(matmul(128, 256, 128, s)) for s in (1, 2, 4))
    assert one.cycles < two.cycles < four.cycles < 1.1 * one.cycles
    assert busy(four, "M") - busy(one, "M") == pytest.approx(3 * P["cube_head"], abs=12)
    assert busy(four, "MTE1") - busy(one, "MTE1") == pytest.approx(6 * P["lat_l1_to_l0a"], abs=12)


def test_f32_matmul_takes_four_times_the_cube_time_of_f16():
    """fp16 16x16x16 per cycle vs fp32 16x16x4 (k0 = 8 at c = 2): 64^3 f16 78 cycles, f32 270."""
    f16, f32 = (busy(run(matmul(64, 64, 64, 1, dt)), "M") - P["cube_head"] for dt in ("f16", "f32"))
    assert f32 / f16 == pytest.approx(4, rel=0.1)


# ---------------------------------------------------------------------------------- chip


def test_bigger_stream_tiles_amortise_the_dma_fixed_part():
    """The double-buffered add of 2048x128 f16 in tiles of 16, 32, 64, 128 rows: every tile's two
    loads pay the fixed part, so time falls with the tile (76690, 42711, 25826, 17592 cycles), by
    the fixed parts saved: MTE2-bound throughout."""
    runs = {tr: run(STREAMS.add_kernel(rows=2048, cols=128, tr=tr, tc=128)) for tr in (16, 32, 64, 128)}
    cycles = [runs[tr].cycles for tr in (16, 32, 64, 128)]
    assert cycles == sorted(cycles, reverse=True)
    saved = 2 * (2048 // 16 - 2048 // 128) * P["lat_gm_to_ub"]  # two loads per tile
    assert cycles[0] - cycles[-1] == pytest.approx(saved, rel=0.1)
    assert all(r.bound.startswith("MTE2-bound") for r in runs.values())


def _gemm():
    spec = importlib.util.spec_from_file_location("gemm", ROOT / "benchmarks" / "kernels" / "gemm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_24_core_gemm_is_bound_by_its_loads_as_published():
    """GEMM 1536^3 fp16 -> fp32 on 24 cube cores (pto-isa's gemm_performance shape): the published
    per-pipe shares have TLOAD busiest (72%, then TMATMUL 55%, TEXTRACT 42%, TSTORE 8%); the emulator
    has the same order (MTE2 89%, M 73%, MTE1 57%, FIX 11% on core 0) and says MTE2-bound."""
    res = run(_gemm().gemm_kernel(1536, 1536, 1536), blocks=24)
    core0 = res.cores[0]
    share = {p: core0.pipes[p].busy_cycles / res.cycles for p in ("MTE2", "M", "MTE1", "FIX")}
    assert sorted(share, key=share.get, reverse=True) == ["MTE2", "M", "MTE1", "FIX"]
    assert res.bound.startswith("MTE2-bound")


def test_cores_speed_a_copy_up_until_the_shared_memory_saturates():
    """The 12288^2 f16 copy (288 MiB: bigger than L2, so from HBM) on 1, 24 and 48 AIV: each core's
    port carries 32 B/cycle, so 24 cores copy 24x as fast; 48 cores would need 1536 B/cycle of an
    HBM that serves 800: only ~27x, at 16.7 B/cycle per core (published: ~15.8). MTE2-bound."""
    text = STREAMS.copy_kernel(12288, 131072, 131072)
    nbytes = 12288 * 12288 * 2
    one, many, all_ = (run(text, blocks=b) for b in (1, 24, 48))
    assert nbytes / one.cycles == pytest.approx(A2A3.chip.shared["hbm_core_bw"], rel=0.1)
    assert one.cycles / many.cycles == pytest.approx(24, rel=0.02)
    assert 24 < one.cycles / all_.cycles < 30
    assert nbytes / all_.cycles <= A2A3.chip.shared["hbm_bw"]
    assert all(r.bound.startswith("MTE2-bound") for r in (one, many, all_))


def test_the_bound_says_when_shared_hbm_slowed_the_copy():
    """The 12288^2 f16 copy from HBM: on 48 AIV the shared HBM gives each core's loads ~16.7 B/cycle,
    below the 32 B/cycle of its own port, and the verdict says so with the rate the memory system
    granted (bytes over the MTE2 cycles of the loads it held); on 1 and 24 AIV each core streams at
    its port's speed and the verdict is as before."""
    text = STREAMS.copy_kernel(12288, 131072, 131072)
    nbytes = 12288 * 12288 * 2
    plain = "MTE2-bound: 100% of the makespan is MTE2 work on the critical path"
    assert run(text, blocks=1).bound == run(text, blocks=24).bound == plain
    res = run(text, blocks=48)
    per_core = nbytes / 48 / res.cycles
    assert 16 < per_core < 17
    assert res.bound == f"{plain}, at {per_core:.1f} B/cycle per core: shared HBM bandwidth (48 cores streaming)"


def test_two_cores_halve_an_l2_resident_copy():
    """The 2048^2 f16 copy (8 MiB, resident in L2) on 1 and 2 AIV: each core streams at its own
    GM -> UB rate, so 2 cores take half the time."""
    text = STREAMS.copy_kernel(2048, 131072, 131072)
    one, two = (run(text, blocks=b) for b in (1, 2))
    assert one.cycles / two.cycles == pytest.approx(2, rel=0.01)


@pytest.mark.parametrize("blocks", [49, 96, 97])
def test_blocks_in_waves_keep_the_bound_of_one_block(blocks):
    """vadd_spmd with one block's work per block: one block is MTE2-bound (80% of its makespan), and
    so are 2 or 3 waves of blocks on the 48 AIV: each block is the same on every core, and each wave
    after the first starts launch_block cycles after the one before (the block scheduler dispatching
    it), which the critical path names as block dispatch. The path of a block that follows another
    on the same core starts where the previous block drained (was: it started at the new block's
    first issue and charged every earlier cycle to the scalar unit: 'MTE2-bound: 50%' for 96 blocks,
    'issue-bound: 52%' for 97)."""
    res = run(EXAMPLES / "vadd_spmd.pto", blocks=blocks, args={"arg3": 64 * blocks})
    one = run(EXAMPLES / "vadd_spmd.pto", blocks=1, args={"arg3": 64})
    waves = -(-blocks // 48)
    dispatch = (waves - 1) * P["launch_block"]
    assert res.cycles == pytest.approx(waves * one.cycles + dispatch, rel=0.05)
    assert one.bound == "MTE2-bound: 80% of the makespan is MTE2 work on the critical path"
    mte2 = 0.8 * waves * one.cycles / res.cycles  # the MTE2 work of each wave's block on the path
    assert res.bound.startswith("MTE2-bound: "), res.bound
    assert int(res.bound.split()[1].rstrip("%")) == pytest.approx(100 * mte2, abs=3), res.bound
    assert res.bound.endswith(f"; block dispatch between waves: {dispatch / res.cycles:.0%}"), res.bound


def test_group_blocks_in_waves_keep_the_bound_of_one_block():
    """matmul_c2v_epilogue (1 AIC + 2 AIV per block): one block is 'latency-bound: 76% ... waiting
    on tpop_from_aic'; so are 2 and 3 waves of the same blocks on the 24 core groups, with the block
    scheduler's dispatch of each later wave named (were 'issue-bound: 51%' / '67%' with the scalar
    units a few percent busy: an AIV's next block started when its AIC had drained, later than the
    AIV itself)."""
    kernel = EXAMPLES / "matmul_c2v_epilogue.pto"
    one = run(kernel, blocks=1, args={"arg3": 32})
    assert one.bound.startswith("latency-bound: 76% of the makespan waiting on tpop_from_aic")
    for blocks in (25, 49):
        res = run(kernel, blocks=blocks, args={"arg3": 32 * blocks})
        waves = -(-blocks // 24)
        dispatch = (waves - 1) * P["launch_block"]
        assert res.cycles == pytest.approx(waves * one.cycles + dispatch, rel=0.05)
        assert res.bound.startswith("latency-bound: "), res.bound
        assert "waiting on tpop_from_aic at line 63" in res.bound
        assert res.bound.endswith(f"; block dispatch between waves: {dispatch / res.cycles:.0%}"), res.bound


def test_many_short_blocks_pay_the_block_dispatch_of_each_wave():
    """96 blocks of one 16-row tile vs 48 blocks of two on the 48 AIV (vadd_spmd, the same rows): the
    second wave of the 96 starts launch_block (2000) cycles after the first ended, the block
    scheduler dispatching it, so the makespan is 2 x one tile + 2000, 2.3x that of 48 blocks of two
    tiles (was 1.15x: a block started the cycle its unit freed). On hardware (with the kernel launch
    and the first wave's dispatch, RunResult.hardware_cycles) the difference is the 2000 and the
    per-block fixed part: 1.15x. The critical path names the dispatch: half the makespan."""
    kernel = EXAMPLES / "vadd_spmd.pto"
    short, long_, tile = (run(kernel, blocks=b, args={"arg3": n}) for b, n in ((96, 1536), (48, 1536), (1, 16)))
    assert short.cycles == pytest.approx(2 * tile.cycles + P["launch_block"], abs=50)
    assert short.cycles / long_.cycles == pytest.approx(2.3, abs=0.05)
    assert short.hardware_cycles == short.cycles + P["launch_kernel"] + P["launch_block"]
    assert short.hardware_cycles / long_.hardware_cycles == pytest.approx(1.15, abs=0.03)
    assert short.bound.startswith("dispatch-bound: 50% of the makespan is the block scheduler dispatching"), \
        short.bound
    assert "block dispatch" not in long_.bound
