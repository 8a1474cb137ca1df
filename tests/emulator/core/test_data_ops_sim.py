"""The §4.11 data ops (tsort32, tmrgsort, thistogram, trandom, tgatherb, tscatter) and tpack, mgather,
mscatter (§4.2) through the whole simulator: tload inputs -> barrier -> op -> barrier -> tstore (or
the op writing GM itself), compared with plain NumPy / Python references. These check that the
core binds each form's operands (views in ins and outs, typed scalar operands, inline attribute
dicts, enum attributes) and that results land in GM as the semantics define."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pytest

import pyptoemu
from ptoisa.dtypes import np_dtype
from pyptoemu.errors import KernelFault
from tests.emulator.core.kernels import pview, vec

U32 = 0xFFFFFFFF


@dataclass
class Gm:
    """A pointer argument viewed as one row-major ``rows x cols`` tensor."""

    dtype: str
    rows: int
    cols: int


def kernel(gms: list[Gm], tiles: dict[str, str], loads: list[tuple[int, str, int, int]], body: list[str],
           stores: list[tuple[str, int, int, int]], consts: tuple[str, ...] = ()) -> str:
    """A kernel @k(%arg0..): tensor view %v<i> per Gm; ``loads`` (gm, tile, vr, vc) and ``stores``
    (tile, gm, vr, vc) go through partitions of size vr x vc at the origin; ``body`` is the op line(s)
    between the two PIPE_ALL barriers; ``%p<i>`` is a full-window partition of Gm i."""
    sizes = sorted({n for g in gms for n in (g.rows, g.cols)} | {vr for *_, vr, _ in loads + stores}
                   | {vc for *_, vc in loads + stores} | {0, 1})
    lines = ["module {", "  func.func @k(" + ", ".join(f"%arg{i}: !pto.ptr<{g.dtype}>" for i, g in enumerate(gms))
             + ") {"]
    lines += [f"    %i{n} = arith.constant {n} : index" for n in sizes] + [f"    {c}" for c in consts]
    for i, g in enumerate(gms):
        tv = f"!pto.tensor_view<?x?x{g.dtype}>"
        lines.append(f"    %v{i} = pto.make_tensor_view %arg{i}, shape = [%i{g.rows}, %i{g.cols}], "
                     f"strides = [%i{g.cols}, %i1] : {tv}")
        lines.append(f"    %p{i} = pto.partition_view %v{i}, offsets = [%i0, %i0], sizes = [%i{g.rows}, %i{g.cols}] "
                     f": {tv} -> {pview(g.rows, g.cols, g.dtype)}")
    lines += [f"    %{name} = pto.alloc_tile : {ty}" for name, ty in tiles.items()]

    def part(i: int, vr: int, vc: int, stem: str) -> tuple[str, str]:
        g = gms[i]
        tv = f"!pto.tensor_view<?x?x{g.dtype}>"
        name = f"%{stem}{i}_{vr}_{vc}"  # load and store windows named apart: an SSA name is defined once
        return name, (f"    {name} = pto.partition_view %v{i}, offsets = [%i0, %i0], sizes = [%i{vr}, %i{vc}] "
                      f": {tv} -> {pview(vr, vc, g.dtype)}")

    for i, t, vr, vc in loads:
        name, decl = part(i, vr, vc, "w")
        lines += [decl, f"    pto.tload ins({name} : {pview(vr, vc, gms[i].dtype)}) outs(%{t} : {tiles[t]})"]
    lines.append("    pto.barrier <PIPE_ALL>")
    lines += [f"    {b}" for b in body]
    lines.append("    pto.barrier <PIPE_ALL>")
    for t, i, vr, vc in stores:
        name, decl = part(i, vr, vc, "ws")
        lines += [decl, f"    pto.tstore ins(%{t} : {tiles[t]}) outs({name} : {pview(vr, vc, gms[i].dtype)})"]
    lines += ["    return", "  }", "}"]
    return "\n".join(lines) + "\n"


def _records(rows: list[list[tuple[float, int]]], dtype: str) -> np.ndarray:
    raw = b"".join((struct.pack("<f", v) if dtype == "f32" else struct.pack("<e", v) + b"\0\0")
                   + struct.pack("<I", k) for row in rows for v, k in row)
    return np.frombuffer(raw, np_dtype(dtype).newbyteorder("<")).reshape(len(rows), -1).astype(np_dtype(dtype))


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()


# ------------------------------------------------------------------------------------------- sort


@pytest.mark.parametrize(("dtype", "vc", "with_tmp"), [("f32", 40, True), ("f16", 32, False), ("f32", 64, False)])
def test_tsort32(dtype: str, vc: int, with_tmp: bool) -> None:
    rng = np.random.default_rng(1)
    rows, cols = 3, 64
    cells = 8 // np.dtype(np_dtype(dtype)).itemsize
    width = -(-vc // 32) * 32
    x = rng.choice(np.arange(-8, 8) / 4, size=(rows, cols)).astype(np_dtype(dtype))
    ids = rng.integers(0, 2**32, size=(1, cols), dtype=np.uint64).astype(np.uint32)
    src_t, idx_t = vec(rows, cols, dtype, rows, vc), vec(1, cols, "ui32")
    dst_t = vec(rows, cols * cells, dtype, rows, width * cells)
    tiles = {"s": src_t, "ix": idx_t, "d": dst_t} | ({"tmp": vec(rows, cols, dtype)} if with_tmp else {})
    ins = "%s, %ix" + (", %tmp" if with_tmp else "")
    types = f"{src_t}, {idx_t}" + (f", {tiles['tmp']}" if with_tmp else "")
    text = kernel([Gm(dtype, rows, cols), Gm("ui32", 1, cols), Gm(dtype, rows, cols * cells)], tiles,
                  [(0, "s", rows, vc), (1, "ix", 1, cols)], [f"pto.tsort32 ins({ins} : {types}) outs(%d : {dst_t})"],
                  [("d", 2, rows, width * cells)])
    out0 = np.zeros((rows, cols * cells), np_dtype(dtype))
    res = pyptoemu.run(text, inputs={"arg0": x, "arg1": ids, "arg2": out0})
    expected = []
    for i in range(rows):
        row: list[tuple[float, int]] = []
        for b in range(0, width, 32):
            blk = [(float(x[i, j]) if j < vc else -np.inf, j) for j in range(b, b + 32)]
            row += [(v, int(ids[0, j])) for v, j in sorted(blk, key=lambda p: (-p[0], p[1]))]
        expected.append(row)
    got = res.outputs["arg2"][:, : width * cells]
    assert _bits(got) == _bits(_records(expected, dtype))


def test_tsort32_then_tmrgsort_sorts_a_row() -> None:
    """tsort32 makes 4 sorted 32-record runs (64 f32 cells each); tmrgsort blockLen=64 merges them:
    the row ends fully sorted descending, indices following their values."""
    rng = np.random.default_rng(2)
    x = rng.permutation(128).astype(np.float32).reshape(1, 128) / 8
    ids = np.arange(1000, 1128, dtype=np.uint32).reshape(1, 128)
    s_t, i_t, r_t = vec(1, 128, "f32"), vec(1, 128, "ui32"), vec(1, 256, "f32")
    body = [f"pto.tsort32 ins(%s, %ix : {s_t}, {i_t}) outs(%r : {r_t})", "pto.barrier <PIPE_ALL>",
            f"pto.tmrgsort ins(%r, %bl : {r_t}, i32) outs(%m : {r_t})"]
    text = kernel([Gm("f32", 1, 128), Gm("ui32", 1, 128), Gm("f32", 1, 256)], {"s": s_t, "ix": i_t, "r": r_t, "m": r_t},
                  [(0, "s", 1, 128), (1, "ix", 1, 128)], body, [("m", 2, 1, 256)],
                  consts=("%bl = arith.constant 64 : i32",))
    res = pyptoemu.run(text, inputs={"arg0": x, "arg1": ids, "arg2": np.zeros((1, 256), np.float32)})
    out = res.outputs["arg2"]
    order = np.argsort(-x[0], kind="stable")
    np.testing.assert_array_equal(out[0, 0::2], x[0, order])
    np.testing.assert_array_equal(out[0, 1::2].view(np.uint32), ids[0, order])


def test_tmrgsort_f16_runs_from_gm() -> None:
    rng = np.random.default_rng(3)
    runs = [sorted(((float(v), int(k)) for v, k in zip(rng.integers(-20, 20, 16) / 2, rng.integers(0, 2**32, 16), strict=False)),
                   key=lambda r: -r[0]) for _ in range(4)]
    src = _records([[r for run in runs for r in run]], "f16")  # 4 runs of 16 records = 64 f16 cells
    t = vec(1, 256, "f16")
    text = kernel([Gm("f16", 1, 256), Gm("f16", 1, 256)], {"s": t, "d": t}, [(0, "s", 1, 256)],
                  [f"pto.tmrgsort ins(%s, %bl : {t}, i32) outs(%d : {t})"], [("d", 1, 1, 256)],
                  consts=("%bl = arith.constant 64 : i32",))
    res = pyptoemu.run(text, inputs={"arg0": src, "arg1": np.zeros((1, 256), np.float16)})
    merged = sorted((r for run in runs for r in run), key=lambda r: -r[0])  # stable: run 0 first on ties
    assert _bits(res.outputs["arg1"]) == _bits(_records([merged], "f16"))


# -------------------------------------------------------------------------------- histogram, random


def test_thistogram_both_byte_modes() -> None:
    rng = np.random.default_rng(4)
    rows, cols, vc = 4, 64, 50
    x = (rng.integers(0, 3, (rows, cols)) * 256 + rng.integers(0, 256, (rows, cols))).astype(np.uint16)
    sel = rng.integers(0, 3, (rows, 32)).astype(np.uint8)
    s_t, i_t, d_t = vec(rows, cols, "ui16", rows, vc), vec(rows, 32, "ui8", rows, 1), vec(rows, 256, "ui32")
    body = [f"pto.thistogram ins(%s, %ix : {s_t}, {i_t}) outs(%hi : {d_t})",
            f"pto.thistogram ins(%s, %ix : {s_t}, {i_t}) outs(%lo : {d_t}) {{isMSB = false}}"]
    text = kernel([Gm("ui16", rows, cols), Gm("ui8", rows, 32), Gm("ui32", rows, 256), Gm("ui32", rows, 256)],
                  {"s": s_t, "ix": i_t, "hi": d_t, "lo": d_t}, [(0, "s", rows, vc), (1, "ix", rows, 1)], body,
                  [("hi", 2, rows, 256), ("lo", 3, rows, 256)])
    res = pyptoemu.run(text, inputs={"arg0": x, "arg1": sel}, machine="a5")  # A5 only
    v = x[:, :vc].astype(np.int64)
    want_hi = np.stack([np.bincount(v[i] >> 8, minlength=256) for i in range(rows)])
    want_lo = np.stack([np.bincount((v[i] & 255)[(v[i] >> 8) == sel[i, 0]], minlength=256) for i in range(rows)])
    np.testing.assert_array_equal(res.outputs["arg2"], want_hi)
    np.testing.assert_array_equal(res.outputs["arg3"], want_lo)


def _philox(ctr: list[int], key: list[int], rounds: int) -> list[int]:
    c, k = list(ctr), list(key)
    for r in range(rounds):
        if r:
            k = [(k[0] + 0x9E3779B9) & U32, (k[1] + 0xBB67AE85) & U32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & U32, (p0 >> 32) ^ c[3] ^ k[1], p0 & U32]
    return c


@pytest.mark.parametrize(("dtype", "rounds"), [("ui32", 7), ("i32", 10), ("i32", None)])
def test_trandom(dtype: str, rounds: int | None) -> None:
    words = [0x12345678, -1, -2, 7, 0, 1]  # i32 operands: -1 is the word 0xFFFFFFFF; c0 = -2 carries
    d_t = vec(4, 16, dtype, 3, 10)
    consts = tuple(f"%w{n} = arith.constant {w} : i32" for n, w in enumerate(words))
    attr = f" {{rounds = {rounds} : i32}}" if rounds else ""
    body = [f"pto.trandom ins(%w0, %w1, %w2, %w3, %w4, %w5{attr} : i32, i32, i32, i32, i32, i32) outs(%d : {d_t})"]
    text = kernel([Gm(dtype, 3, 10)], {"d": d_t}, [], body, [("d", 0, 3, 10)], consts=consts)
    res = pyptoemu.run(text, inputs={"arg0": np.zeros((3, 10), np_dtype(dtype))}, machine="a5")  # A5 only
    u = [w & U32 for w in words]
    start = u[2] | u[3] << 32 | u[4] << 64 | u[5] << 96
    stream = []
    for b in range(8):
        n = start + b
        stream += _philox([(n >> (32 * i)) & U32 for i in range(4)], u[:2], rounds or 10)
    want = np.array(stream[:30], np.uint64).astype(np.uint32).view(np_dtype(dtype)).reshape(3, 10)
    np.testing.assert_array_equal(res.outputs["arg0"], want)


# ---------------------------------------------------------------------------- gather/scatter/pack


def test_tgatherb_byte_offsets() -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(-(2**31), 2**31, (4, 16)).astype(np.int32)
    off = rng.integers(0, 4 * 64 - 3, (4, 16)).astype(np.uint32)  # unaligned offsets too
    s_t, o_t, d_t = vec(4, 16, "i32"), vec(4, 16, "ui32"), vec(4, 16, "i32", 3, 9)
    text = kernel([Gm("i32", 4, 16), Gm("ui32", 4, 16), Gm("i32", 4, 16)], {"s": s_t, "o": o_t, "d": d_t},
                  [(0, "s", 4, 16), (1, "o", 4, 16)], [f"pto.tgatherb ins(%s, %o : {s_t}, {o_t}) outs(%d : {d_t})"],
                  [("d", 2, 3, 9)])
    res = pyptoemu.run(text, inputs={"arg0": x, "arg1": off, "arg2": np.zeros((4, 16), np.int32)})
    raw = x.astype("<i4").tobytes()
    want = np.array([[int.from_bytes(raw[int(off[i, j]): int(off[i, j]) + 4], "little", signed=True)
                      for j in range(9)] for i in range(3)], np.int32)
    np.testing.assert_array_equal(res.outputs["arg2"][:3, :9], want)
    assert (res.outputs["arg2"][3:] == 0).all() and (res.outputs["arg2"][:, 9:] == 0).all()


def test_tscatter_rows_last_writer_wins() -> None:
    rng = np.random.default_rng(6)
    src = rng.standard_normal((4, 16)).astype(np.float32)
    idx = rng.integers(0, 6, (4, 16)).astype(np.int32)
    before = rng.standard_normal((6, 16)).astype(np.float32)
    s_t, i_t, d_t = vec(4, 16, "f32"), vec(4, 16, "i32"), vec(6, 16, "f32")
    text = kernel([Gm("f32", 4, 16), Gm("i32", 4, 16), Gm("f32", 6, 16)], {"s": s_t, "ix": i_t, "d": d_t},
                  [(0, "s", 4, 16), (1, "ix", 4, 16), (2, "d", 6, 16)],
                  [f"pto.tscatter ins(%s, %ix : {s_t}, {i_t}) outs(%d : {d_t})"], [("d", 2, 6, 16)])
    res = pyptoemu.run(text, inputs={"arg0": src, "arg1": idx, "arg2": before.copy()})
    want = before.copy()
    for i in range(4):
        for j in range(16):
            want[idx[i, j], j] = src[i, j]
    np.testing.assert_array_equal(res.outputs["arg2"], want)


@pytest.mark.parametrize(("src_dt", "dst_dt"), [("i32", "i16"), ("ui32", "ui8"), ("i16", "i8")])
def test_tpack_truncates(src_dt: str, dst_dt: str) -> None:
    rng = np.random.default_rng(7)
    info = np.iinfo(np_dtype(src_dt))
    x = rng.integers(info.min, info.max, (4, 32), endpoint=True).astype(np_dtype(src_dt))
    s_t, d_t = vec(4, 32, src_dt, 4, 20), vec(4, 32, dst_dt, 4, 20)
    text = kernel([Gm(src_dt, 4, 32), Gm(dst_dt, 4, 32)], {"s": s_t, "d": d_t}, [(0, "s", 4, 20)],
                  [f"pto.tpack ins(%s : {s_t}) outs(%d : {d_t})"], [("d", 1, 4, 20)])
    res = pyptoemu.run(text, inputs={"arg0": x, "arg1": np.zeros((4, 32), np_dtype(dst_dt))}, machine="a5")  # A5 only
    bits = 8 * np.dtype(np_dtype(dst_dt)).itemsize
    low = [[(int(v) & ((1 << bits) - 1)) for v in row[:20]] for row in x]
    want = np.array(low, np.int64).astype(np.dtype(f"u{bits // 8}")).view(np_dtype(dst_dt))
    np.testing.assert_array_equal(res.outputs["arg1"][:, :20], want)


def test_mgather_wraps_out_of_range_indices() -> None:
    rng = np.random.default_rng(8)
    mem = rng.standard_normal((8, 16)).astype(np.float32)
    idx = rng.integers(-300, 300, (4, 16)).astype(np.int32)
    i_t, d_t = vec(4, 16, "i32"), vec(4, 16, "f32")
    body = [(f"pto.mgather ins(%p0, %ix : {pview(8, 16, 'f32')}, {i_t}) outs(%d : {d_t}) "
             "{gatherOob = #pto<gather_oob wrap>}")]
    text = kernel([Gm("f32", 8, 16), Gm("i32", 4, 16), Gm("f32", 4, 16)], {"ix": i_t, "d": d_t},
                  [(1, "ix", 4, 16)], body, [("d", 2, 4, 16)])
    res = pyptoemu.run(text, inputs={"arg0": mem, "arg1": idx}, machine="a5")  # A5 only
    np.testing.assert_array_equal(res.outputs["arg2"], mem.reshape(-1)[idx % 128])


def test_mgather_undefined_oob_is_a_bounds_fault() -> None:
    i_t, d_t = vec(1, 16, "i32"), vec(1, 16, "f32")
    body = [f"pto.mgather ins(%p0, %ix : {pview(2, 8, 'f32')}, {i_t}) outs(%d : {d_t})"]
    text = kernel([Gm("f32", 2, 8), Gm("i32", 1, 16), Gm("f32", 1, 16)], {"ix": i_t, "d": d_t},
                  [(1, "ix", 1, 16)], body, [("d", 2, 1, 16)])
    idx = np.arange(16, dtype=np.int32).reshape(1, 16)  # 16 is one past the 16-element view
    idx[0, 15] = 16
    with pytest.raises(KernelFault, match="mgather"):
        pyptoemu.run(text, inputs={"arg0": np.zeros((2, 8), np.float32), "arg1": idx}, machine="a5")


def test_mscatter_atomic_add_skips_out_of_range() -> None:
    rng = np.random.default_rng(9)
    src = rng.integers(-50, 50, (4, 16)).astype(np.int32)
    idx = rng.integers(-10, 40, (4, 16)).astype(np.int32)
    mem = rng.integers(-50, 50, (4, 8)).astype(np.int32)
    s_t, i_t = vec(4, 16, "i32"), vec(4, 16, "i32")
    body = [(f"pto.mscatter ins(%s, %ix : {s_t}, {i_t}) outs(%p2 : {pview(4, 8, 'i32')}) "
             "{scatterAtomicOp = #pto<scatter_atomic_op add>, scatterOob = #pto<scatter_oob skip>}")]
    text = kernel([Gm("i32", 4, 16), Gm("i32", 4, 16), Gm("i32", 4, 8)], {"s": s_t, "ix": i_t},
                  [(0, "s", 4, 16), (1, "ix", 4, 16)], body, [])
    res = pyptoemu.run(text, inputs={"arg0": src, "arg1": idx, "arg2": mem.copy()}, machine="a5")  # A5 only
    want = mem.reshape(-1).copy()
    for i in range(4):
        for j in range(16):
            if 0 <= idx[i, j] < 32:
                want[idx[i, j]] += src[i, j]
    np.testing.assert_array_equal(res.outputs["arg2"].reshape(-1), want)
