"""The per-instruction calibration cases of shared/spec/machine-a2a3.md ("Calibration data
(measured)"), each as a one-instruction `.pto` kernel run on one idle emulated core.

A case names the instruction, the shape, the measured cycles and their source, builds its kernel
text and says what to read from the run: ``latency`` (an ``st`` profiling figure: one instruction
run alone, from its start until its writes land) or ``busy`` (a ``gemm`` figure: pipe busy share x
time / instructions, i.e. the cycles the instructions hold their pipe).

Used by benchmarks/timing_fidelity.py (prints the table) and tests/emulator/core/test_calibration.py
(pins it: every case within +-15%).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyptoemu

ALIGN = {"vec": 32, "mat": 32, "left": 512, "right": 512, "acc": 64}
ESIZE = {"f32": 4, "i32": 4, "f16": 2, "i16": 2, "u8": 1, "ui8": 1}
LAYOUTS = {  # (blayout, slayout, fractal) per location, as the cube path needs them
    "mat": ("col_major", "row_major", 512),
    "left": ("row_major", "row_major", 512),
    "right": ("row_major", "col_major", 512),
    "acc": ("col_major", "row_major", 1024),
}


def tile_type(loc: str, dtype: str, rows: int, cols: int, vcol: int | None = None, dn: bool = False) -> str:
    blayout, slayout, fractal = LAYOUTS.get(loc, ("col_major" if dn else "row_major", "none_box", 512))
    vc = cols if vcol is None else vcol
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={rows}, v_col={vc}, "
            f"blayout={blayout}, slayout={slayout}, fractal={fractal}, pad=0>")


class KernelText:
    """Builds a one-function kernel: GM pointer arguments with views, tiles at explicit addresses,
    then the body ops."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.consts: dict[tuple[int, str], str] = {}
        self.lines: list[str] = []
        self.next_addr: dict[str, int] = {}
        self.types: dict[str, str] = {}

    def const(self, value: int, kind: str = "index") -> str:
        name = f"%c{value}" if kind == "index" else f"%c{value}_{kind}"
        self.consts.setdefault((value, kind), f"    {name} = arith.constant {value} : {kind}")
        return name

    def view(self, dtype: str, shape: tuple[int, ...], strides: tuple[int, ...], window: tuple[int, ...]) -> str:
        """A GM argument holding ``shape`` (with ``strides``) and a window of ``window`` at offset 0."""
        i = len(self.args)
        self.args.append(f"%arg{i}: !pto.ptr<{dtype}>")
        rank = "x".join("?" * len(shape))
        tv = f"!pto.tensor_view<{rank}x{dtype}>"
        dims = ", ".join(self.const(d) for d in shape)
        strd = ", ".join(self.const(s) for s in strides)
        offs = ", ".join(self.const(0) for _ in shape)
        sizes = ", ".join(self.const(d) for d in window)
        pv = f"!pto.partition_tensor_view<{'x'.join(str(d) for d in window)}x{dtype}>"
        self.lines.append(f"    %v{i} = pto.make_tensor_view %arg{i}, shape = [{dims}], strides = [{strd}] : {tv}")
        self.lines.append(f"    %p{i} = pto.partition_view %v{i}, offsets = [{offs}], sizes = [{sizes}] : {tv} -> {pv}")
        self.types[f"%p{i}"] = pv
        return f"%p{i}"

    def tile(self, name: str, loc: str, dtype: str, rows: int, cols: int, vcol: int | None = None,
             dn: bool = False) -> str:
        t = tile_type(loc, dtype, rows, cols, vcol, dn)
        addr = self.next_addr.get(loc, 0)
        nbytes = rows * cols * ESIZE[dtype]
        self.next_addr[loc] = addr + (nbytes + ALIGN[loc] - 1) // ALIGN[loc] * ALIGN[loc]
        self.lines.append(f"    %{name} = pto.alloc_tile addr = {self.const(addr, 'i64')} : {t}")
        self.types[f"%{name}"] = t
        return f"%{name}"

    def op(self, mnemonic: str, ins: list[str], outs: list[str]) -> None:
        def typed(names: list[str]) -> str:
            return f"{', '.join(names)} : {', '.join(self.types.get(n, 'f32') for n in names)}"

        self.lines.append(f"    pto.{mnemonic} ins({typed(ins)}) outs({typed(outs)})")

    def raw(self, line: str) -> None:
        self.lines.append(f"    {line}")

    def text(self) -> str:
        consts = "\n".join(self.consts.values())
        body = "\n".join(self.lines)
        return (f"module {{\n  func.func @k({', '.join(self.args)}) {{\n{consts}\n{body}\n"
                f"    return\n  }}\n}}\n")


def sync(k: KernelText, src: str, dst: str) -> None:
    k.raw(f"pto.set_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID0>]")
    k.raw(f"pto.wait_flag[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID0>]")


def loaded_vec(k: KernelText, name: str, dtype: str, rows: int, cols: int) -> str:
    """A UB tile filled from GM (so the measured op computes on real data)."""
    t = k.tile(name, "vec", dtype, rows, cols)
    k.op("tload", [k.view(dtype, (rows, cols), (cols, 1), (rows, cols))], [t])
    return t


@dataclass
class Case:
    """One calibration figure: what was measured, how to rebuild it, what to read from the run."""

    instruction: str
    shape: str
    measured: float
    source: str
    kernel: KernelText
    names: tuple[str, ...]  # the mnemonics whose cycles make up the figure
    metric: str = "latency"  # latency (st) or busy (gemm)
    predicted: float = field(default=0.0)

    @property
    def ratio(self) -> float:
        return self.predicted / self.measured


def _vec_case(instr: str, shape: str, measured: float, source: str, mnemonic: str, dtype: str,
              rows: int, cols: int, arity: int = 2, in_place: bool = False) -> Case:
    k = KernelText()
    srcs = [loaded_vec(k, f"s{i}", dtype, rows, cols) for i in range(arity)]
    if arity == 1 and mnemonic in ("tadds", "tmuls"):
        k.raw("%sc = arith.constant 1.5 : f32")
        k.types["%sc"] = "f32"
        srcs.append("%sc")
    dst = srcs[0] if in_place else k.tile("d", "vec", dtype, rows, cols)
    sync(k, "MTE2", "V")
    k.op(mnemonic, srcs, [dst])
    return Case(instr, shape, measured, source, k, (mnemonic,))


def _rowred_case(mnemonic: str, dtype: str, rows: int, cols: int, measured: float) -> Case:
    k = KernelText()
    src = loaded_vec(k, "s", dtype, rows, cols)
    tmp = k.tile("t", "vec", dtype, rows, cols)
    dst = k.tile("d", "vec", dtype, rows, 1, dn=True)
    sync(k, "MTE2", "V")
    k.op(mnemonic, [src, tmp], [dst])
    return Case(mnemonic.upper(), f"{rows}x{cols} {dtype}", measured, f"st {mnemonic}", k, (mnemonic,))


def _rowexpand_case(dtype: str) -> Case:
    k = KernelText()
    src = k.tile("s", "vec", dtype, 64, 1, dn=True)
    k.op("tload", [k.view(dtype, (64, 1), (1, 1), (64, 1))], [src])
    dst = k.tile("d", "vec", dtype, 64, 64)
    sync(k, "MTE2", "V")
    k.op("trowexpand", [src], [dst])
    return Case("TROWEXPAND", f"64x1 -> 64x64 {dtype}", 933, "st trowexpand", k, ("trowexpand",))


def _tcvt_case(src_dt: str, dst_dt: str) -> Case:
    k = KernelText()
    src = loaded_vec(k, "s", src_dt, 4, 64)
    dst = k.tile("d", "vec", dst_dt, 4, 64)
    sync(k, "MTE2", "V")
    k.op("tcvt", [src], [dst])
    return Case("TCVT", f"4x64 {src_dt}->{dst_dt}", 33, "st tcvt", k, ("tcvt",))


def _tmov_case() -> Case:
    k = KernelText()
    src = loaded_vec(k, "s", "f32", 64, 128)
    dst = k.tile("d", "vec", "f32", 64, 128)
    sync(k, "MTE2", "V")
    k.op("tmov", [src], [dst])
    return Case("TMOV vec->vec", "64x128 f32", 1029, "st tmov c01-c08", k, ("tmov",))


def _ttrans_case() -> Case:
    k = KernelText()
    src = loaded_vec(k, "s", "f32", 128, 128)
    tmp = k.tile("t", "vec", "f32", 8, 128)
    dst = k.tile("d", "vec", "f32", 128, 128)
    sync(k, "MTE2", "V")
    k.op("ttrans", [src, tmp], [dst])
    return Case("TTRANS", "128x128 f32", 501, "st ttrans", k, ("ttrans",))


def _tload_case(shape: str, measured: float, source: str, dtype: str, gm_shape: tuple, strides: tuple,
                rows: int, cols: int, vcol: int | None = None, dn: bool = False) -> Case:
    k = KernelText()
    view = k.view(dtype, gm_shape, strides, gm_shape)
    dst = k.tile("d", "vec", dtype, rows, cols, vcol, dn)
    k.op("tload", [view], [dst])
    return Case("TLOAD GM->UB", shape, measured, source, k, ("tload",))


def _row_major(shape: tuple) -> tuple:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


GEMM_SIZES = (1536, 3072, 6144, 7680)


def _gemm_cases() -> list[Case]:
    """One k-step of the 24-core GEMM (base 128 x 64 x 256 fp16, stepK 4), per pipe."""
    mm = (543, 524.5, 524.2, 524.9)
    ext = (421, 412, 412, 410)
    st = (1842, 1848, 1799, 1875)
    ld = (2879, 2414, 2302, 2563)
    out = []
    for i, n in enumerate(GEMM_SIZES):
        src = f"gemm {n}"
        k = KernelText()
        a = k.tile("a", "left", "f16", 128, 64)
        b = k.tile("b", "right", "f16", 64, 256)
        c = k.tile("c", "acc", "f32", 128, 256)
        k.op("tmatmul", [a, b], [c])
        out.append(Case("TMATMUL", "128x64x256 f16 -> f32", mm[i], src, k, ("tmatmul",), "busy"))

        k = KernelText()
        am = k.tile("am", "mat", "f16", 128, 256)
        bm = k.tile("bm", "mat", "f16", 256, 256)
        al = k.tile("al", "left", "f16", 128, 64)
        br = k.tile("br", "right", "f16", 64, 256)
        k.types["%c0"] = "index"
        zero = k.const(0)
        k.lines.append(f"    pto.textract ins({am}, {zero}, {zero} : {k.types[am]}, index, index) outs({al} : {k.types[al]})")
        k.lines.append(f"    pto.textract ins({bm}, {zero}, {zero} : {k.types[bm]}, index, index) outs({br} : {k.types[br]})")
        out.append(Case("TEXTRACT pair", "L1->L0A 128x64 + L1->L0B 64x256 f16", ext[i], src, k, ("textract",),
                        "busy"))

        k = KernelText()
        c = k.tile("c", "acc", "f32", 128, 256)
        view = k.view("f32", (128, n), (n, 1), (128, 256))  # a 128 x 256 window of rows n wide
        k.op("tstore", [c], [view])
        out.append(Case("TSTORE L0C->GM", "128x256 f32 (128 KiB)", st[i], src, k, ("tstore",), "busy"))

        k = KernelText()
        am = k.tile("am", "mat", "f16", 128, 256)
        bm = k.tile("bm", "mat", "f16", 256, 256)
        k.op("tload", [k.view("f16", (128, n), (n, 1), (128, 256))], [am])
        k.op("tload", [k.view("f16", (256, n), (n, 1), (256, 256))], [bm])
        out.append(Case("TLOAD GM->L1 pair", "A 128x256 + B 256x256 f16, 24 cores loading", ld[i], src, k,
                        ("tload",), "busy"))
    return out


def cases() -> list[Case]:
    """Every calibration figure of the spec that one emulated core can reproduce."""
    out = [
        _vec_case("TADD", "64x64 f32", 160, "st tadd", "tadd", "f32", 64, 64),
        _vec_case("TADD", "64x64 i32", 151, "st tadd", "tadd", "i32", 64, 64),
        _vec_case("TADD", "16x256 f16", 92, "st tadd", "tadd", "f16", 16, 256),
        _vec_case("TADD", "64x64 i16", 167, "st tadd", "tadd", "i16", 64, 64),
        _vec_case("TSUB", "64x64 f32", 153, "st tsub", "tsub", "f32", 64, 64),
        _vec_case("TMUL", "64x64 f32", 168, "st tmul", "tmul", "f32", 64, 64),
        _vec_case("TMUL", "16x256 f16", 96, "st tmul", "tmul", "f16", 16, 256),
        _vec_case("TMUL", "64x64 i16", 168, "st tmul", "tmul", "i16", 64, 64),
        _vec_case("TDIV", "64x64 f32", 288, "st tdiv", "tdiv", "f32", 64, 64),
        _vec_case("TDIV", "64x64 f16", 304, "st tdiv", "tdiv", "f16", 64, 64),
    ]
    for mnemonic, figures in (("tadds", (57, 77, 266)), ("tmuls", (58, 77, 266))):
        for (rows, cols), measured in zip(((32, 64), (7, 448), (256, 16)), figures, strict=True):
            out.append(_vec_case(mnemonic.upper(), f"{rows}x{cols} f32", measured, f"st {mnemonic}", mnemonic,
                                 "f32", rows, cols, arity=1))
    for dtype, n, measured in (("f32", 64, 159), ("f16", 64, 95), ("f16", 32, 47), ("f32", 32, 63)):
        out.append(_vec_case("TEXP", f"{n}x{n} {dtype}", measured, "st texp", "texp", dtype, n, n, arity=1))
    out.append(_vec_case("TSQRT", "64x64 f32, separate dst", 160, "st tsqrt", "tsqrt", "f32", 64, 64, arity=1))
    out.append(_vec_case("TSQRT", "64x64 f32, in place", 198, "st tsqrt", "tsqrt", "f32", 64, 64, arity=1,
                         in_place=True))
    out += [_rowred_case("trowsum", "f32", 64, 64, 492), _rowred_case("trowmax", "f32", 64, 64, 480),
            _rowred_case("trowsum", "f16", 64, 128, 495), _rowred_case("trowmax", "f16", 64, 128, 481)]
    out += [_rowexpand_case("f32"), _rowexpand_case("f16"), _tcvt_case("f32", "f16"), _tcvt_case("f16", "f32"),
            _tmov_case(), _ttrans_case()]
    out += [
        _tload_case("128x127 u8 (16256 B)", 392, "st tload c05", "ui8", (128, 127), (127, 1), 128, 128, 127),
        _tload_case("128x127 i16 (32512 B)", 519, "st tload c04", "i16", (128, 127), (127, 1), 128, 128, 127),
        _tload_case("128x128 f32 (64 KiB)", 776, "st tload c01", "f32", (128, 128), (128, 1), 128, 128),
        _tload_case("128x127 f32", 773, "st tload c03", "f32", (128, 127), (127, 1), 128, 128, 127),
        _tload_case("5-D: 32 pieces of 2x128 i16", 8576, "st tload c06, c07", "i16", (1, 4, 8, 2, 128),
                    _row_major((1, 4, 8, 2, 128)), 64, 128),
        _tload_case("5-D: 8 pieces of 32x64 f32", 2624, "st tload c02", "f32", (1, 1, 8, 32, 64),
                    _row_major((1, 1, 8, 32, 64)), 256, 64),
        _tload_case("5-D: 8 pieces of 32x60 f32", 2497, "st tload c08", "f32", (1, 1, 8, 32, 60),
                    _row_major((1, 1, 8, 32, 60)), 256, 64, 60),
        # DN: each 64x4 piece is column-major in GM (rows contiguous), so one 1 KiB burst per piece
        _tload_case("DN: 32 pieces of 64x4 f32", 8704, "st tload c09", "f32", (1, 4, 8, 64, 4),
                    (8192, 2048, 256, 1, 64),
                    2048, 4, dn=True),
    ]
    out += _gemm_cases()
    return out


def measure(case: Case, machine: str = "a2a3") -> float:
    """Run the case's kernel and read the figure it is compared with."""
    res = pyptoemu.run(case.kernel.text(), machine=machine, races="off", sync="asis", keep_log=True)
    instrs = [i for i in res.core.trace_log if i.name in case.names]
    if not instrs:
        raise RuntimeError(f"{case.instruction}: no {case.names} in the run")
    if case.metric == "busy":
        case.predicted = float(sum(i.end - i.start for i in instrs))
    else:
        case.predicted = float(sum(i.done - i.start for i in instrs))
    return case.predicted
