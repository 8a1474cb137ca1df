"""Random structured `.pto` kernels without sync, for the automatic-sync property test.

A kernel is drawn from a seed: a vector kernel (tiles in ``vec``, loads, element-wise ops on the V
pipe, scalar reads and writes of tiles on S, stores) or a cube kernel (``mat`` -> ``left``/``right``
-> matmul into one of several ``acc`` tiles -> store, scalar reads of GM the kernel wrote). Vector
tiles are private allocations or, in some kernels, fixed addresses that alias each other whole or in
part (level 3). Control flow nests ``scf.for`` (constant, argument and zero trip counts), ``scf.if``
with and without ``else`` and with tile results, conditions on the arguments (``i + c < n``: taken
on some iterations only) and on data, ``scf.while`` and calls of helper functions. GM windows move
with loop induction variables (row blocks), so tails and in-place updates appear. Every kernel is
valid for every argument value in ``0..MAX_ARG``: loops stay within the ``BLOCKS`` row blocks of
each buffer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

MAX_ARG = 3  # scalar arguments n, m are drawn from 0..MAX_ARG
MAX_TRIP = 3  # no loop runs more often (constant trip counts and the arguments)
BLOCKS = 8  # row blocks per GM buffer: iv (< MAX_TRIP) + offset (< BLOCKS - MAX_TRIP) stays inside

VEC = "!pto.tile_buf<vec, 8x16xf32>"
ADDRESSES = (0, 256, 512, 1024, 4096)  # byte addresses of level-3 vec tiles (512 bytes each)
VROWS = 8
MAT = "!pto.tile_buf<mat, 16x16xf16, blayout=col_major, slayout=row_major>"
LEFT = "!pto.tile_buf<left, 16x16xf16, slayout=row_major>"
RIGHT = "!pto.tile_buf<right, 16x16xf16, slayout=col_major>"
ACC = "!pto.tile_buf<acc, 16x16xf32, blayout=col_major, slayout=row_major, fractal=1024>"
CROWS = 16


@dataclass
class Kernel:
    """A generated kernel: its text, inputs by argument name, and a description for failure reports."""

    text: str
    inputs: dict[str, np.ndarray]
    kind: str
    ops: int = 0


@dataclass
class _Gen:
    rng: random.Random
    cube: bool
    lines: list[str] = field(default_factory=list)
    counter: int = 0
    ops: int = 0
    helpers: list[str] = field(default_factory=list)

    def name(self, stem: str) -> str:
        self.counter += 1
        return f"%{stem}{self.counter}"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * (depth + 2) + text)

    # ------------------------------------------------------------------ pieces shared by both kinds

    def row_view(self, depth: int, ivs: list[str], view: str, rows: int, dtype: str) -> str:
        """A partition view of one row block: a constant block, or ``iv + c`` for an enclosing loop."""
        rng = self.rng
        if ivs and rng.random() < 0.7:
            iv = rng.choice(ivs)
            off = rng.randrange(BLOCKS - MAX_TRIP)
            b = self.name("b")
            self.emit(depth, f"{b} = arith.addi {iv}, %k{off} : index")
        else:
            b = f"%k{rng.randrange(BLOCKS)}"
        r = self.name("r")
        p = self.name("p")
        self.emit(depth, f"{r} = arith.muli {b}, %rows : index")
        self.emit(depth, f"{p} = pto.partition_view {view}, offsets = [{r}, %k0], sizes = [%rows, %cols] : "
                         f"!pto.tensor_view<?x?x{dtype}> -> !pto.partition_tensor_view<{rows}x16x{dtype}>")
        return p

    def condition(self, depth: int, ivs: list[str]) -> str:
        """An i1: ``iv + c < n`` (argument-dependent, true on some iterations), ``n > c``, or data."""
        rng = self.rng
        kind = rng.random()
        p = self.name("c")
        arg = rng.choice(["%n", "%m"])
        if ivs and kind < 0.5:
            s = self.name("s")
            self.emit(depth, f"{s} = arith.addi {rng.choice(ivs)}, %k{rng.randrange(3)} : index")
            self.emit(depth, f"{p} = arith.cmpi slt, {s}, {arg} : index")
        elif kind < 0.75:
            self.emit(depth, f"{p} = arith.cmpi sgt, {arg}, %k{rng.randrange(3)} : index")
        else:
            v = self.data_scalar(depth)
            self.emit(depth, f"{p} = arith.cmpf ogt, {v}, %fzero : f32")
        return p

    def loop_bound(self) -> str:
        return self.rng.choice(["%n", "%m", "%k0", "%k1", "%k2", f"%k{MAX_TRIP}"])

    def block(self, depth: int, ivs: list[str], budget: int) -> None:
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            if budget <= 0:
                return
            roll = rng.random()
            if roll < 0.55 or depth >= 3:
                self.simple(depth, ivs)
                budget -= 1
            elif roll < 0.72:
                iv = self.name("i")
                self.emit(depth, f"scf.for {iv} = %k0 to {self.loop_bound()} step %k1 {{")
                self.block(depth + 1, [*ivs, iv], budget // 2)
                self.emit(depth, "}")
                budget -= 2
            elif roll < 0.9:
                self.branch(depth, ivs, budget // 2)
                budget -= 2
            elif roll < 0.95:
                self.while_loop(depth, ivs, budget // 2)
                budget -= 2
            else:
                self.call(depth)
                budget -= 1

    def branch(self, depth: int, ivs: list[str], budget: int) -> None:
        c = self.condition(depth, ivs)
        if not self.cube and self.rng.random() < 0.25:  # an if with a tile result
            a, b = self.rng.sample(self.tiles, 2)
            r = self.name("sel")
            self.emit(depth, f"{r} = scf.if {c} -> ({VEC}) {{")
            self.block(depth + 1, ivs, budget)
            self.emit(depth + 1, f"scf.yield {a} : {VEC}")
            self.emit(depth, "} else {")
            self.emit(depth + 1, f"scf.yield {b} : {VEC}")
            self.emit(depth, "}")
            self.vec_op(depth, ivs, src=r)
            return
        self.emit(depth, f"scf.if {c} {{")
        self.block(depth + 1, ivs, budget)
        if self.rng.random() < 0.5:
            self.emit(depth, "} else {")
            self.block(depth + 1, ivs, budget)
        self.emit(depth, "}")

    def while_loop(self, depth: int, ivs: list[str], budget: int) -> None:
        w, i, j, go, nxt = (self.name(s) for s in ("w", "wi", "wj", "go", "nx"))
        self.emit(depth, f"{w} = scf.while ({i} = %k0) : (index) -> (index) {{")
        self.emit(depth + 1, f"{go} = arith.cmpi slt, {i}, {self.rng.choice(['%n', '%m', '%k2'])} : index")
        self.emit(depth + 1, f"scf.condition({go}) {i} : index")
        self.emit(depth, "} do {")
        self.emit(depth, f"^bb0({j}: index):")
        self.block(depth + 1, [*ivs, j], budget)
        self.emit(depth + 1, f"{nxt} = arith.addi {j}, %k1 : index")
        self.emit(depth + 1, f"scf.yield {nxt} : index")
        self.emit(depth, "}")

    # ------------------------------------------------------------------ vector kernels

    tiles: list[str] = field(default_factory=list)

    def simple(self, depth: int, ivs: list[str]) -> None:
        (self.cube_op if self.cube else self.vec_op)(depth, ivs)

    def data_scalar(self, depth: int) -> str:
        v = self.name("v")
        if self.cube:  # the scalar unit reads GM the kernel may have written (FIX -> S)
            ptr = self.rng.choice(["%x", "%out"])
            dt = "f16" if ptr == "%x" else "f32"
            idx = self.rng.randrange(BLOCKS * CROWS * 16)
            raw = self.name("v")
            self.emit(depth, f"{raw} = pto.load_scalar {ptr}[%k{idx % 4}] : !pto.ptr<{dt}> -> {dt}")
            if dt == "f16":
                self.emit(depth, f"{v} = arith.extf {raw} : f16 to f32")
            else:
                v = raw
            return v
        t = self.rng.choice(self.tiles)
        self.emit(depth, f"{v} = pto.tgetval ins({t}, %k{self.rng.randrange(4)} : {VEC}, index) outs : f32")
        return v

    def vec_op(self, depth: int, ivs: list[str], src: str | None = None) -> None:
        rng = self.rng
        self.ops += 1
        a = src or rng.choice(self.tiles)
        b, d = rng.choice(self.tiles), rng.choice(self.tiles)
        roll = rng.random() if src is None else 0.5
        if roll < 0.22:
            p = self.row_view(depth, ivs, "%vx", VROWS, "f32")
            self.emit(depth, f"pto.tload ins({p} : !pto.partition_tensor_view<8x16xf32>) outs({d} : {VEC})")
        elif roll < 0.44:
            p = self.row_view(depth, ivs, "%vo", VROWS, "f32")
            self.emit(depth, f"pto.tstore ins({a} : {VEC}) outs({p} : !pto.partition_tensor_view<8x16xf32>)")
        elif roll < 0.7:
            op = rng.choice(["tadd", "tmul", "tsub", "tmax"])
            self.emit(depth, f"pto.{op} ins({a}, {b} : {VEC}, {VEC}) outs({d} : {VEC})")
        elif roll < 0.85:
            op = rng.choice(["tadds", "tmuls"])
            self.emit(depth, f"pto.{op} ins({a}, %fhalf : {VEC}, f32) outs({d} : {VEC})")
        elif roll < 0.93:
            v = self.data_scalar(depth)
            self.emit(depth, f"pto.tsetval ins(%k{rng.randrange(4)}, {v} : index, f32) outs({d} : {VEC})")
        else:
            v = self.data_scalar(depth)
            self.emit(depth, f"pto.texpands ins({v} : f32) outs({d} : {VEC})")

    # ------------------------------------------------------------------ cube kernels

    mats: list[str] = field(default_factory=list)
    accs: list[str] = field(default_factory=list)

    def cube_op(self, depth: int, ivs: list[str]) -> None:
        rng = self.rng
        self.ops += 1
        roll = rng.random()
        if roll < 0.25:
            p = self.row_view(depth, ivs, "%vx", CROWS, "f16")
            m = rng.choice(self.mats)
            self.emit(depth, f"pto.tload ins({p} : !pto.partition_tensor_view<16x16xf16>) outs({m} : {MAT})")
        elif roll < 0.45:
            m = rng.choice(self.mats)
            if rng.random() < 0.5:
                self.emit(depth, f"pto.tmov ins({m} : {MAT}) outs(%left : {LEFT})")
            else:
                self.emit(depth, f"pto.tmov ins({m} : {MAT}) outs(%right : {RIGHT})")
        elif roll < 0.75:
            acc = rng.choice(self.accs)
            if rng.random() < 0.4:
                self.emit(depth, f"pto.tmatmul ins(%left, %right : {LEFT}, {RIGHT}) outs({acc} : {ACC})")
            else:
                self.emit(depth, f"pto.tmatmul.acc ins({acc}, %left, %right : {ACC}, {LEFT}, {RIGHT}) "
                                 f"outs({acc} : {ACC})")
        else:
            p = self.row_view(depth, ivs, "%vo", CROWS, "f32")
            acc = rng.choice(self.accs)
            self.emit(depth, f"pto.tstore ins({acc} : {ACC}) outs({p} : !pto.partition_tensor_view<16x16xf32>)")

    # ------------------------------------------------------------------ calls

    def call(self, depth: int) -> None:
        """A call of a helper that works on tiles passed in (the caller's tiles alias the callee's)."""
        k = len(self.helpers)
        if self.cube:
            acc = self.rng.choice(self.accs)
            self.helpers.append(
                f"  func.func private @h{k}(%l: {LEFT}, %r: {RIGHT}, %a: {ACC}) {{\n"
                f"    pto.tmatmul.acc ins(%a, %l, %r : {ACC}, {LEFT}, {RIGHT}) outs(%a : {ACC})\n"
                f"    return\n  }}")
            self.emit(depth, f"func.call @h{k}(%left, %right, {acc}) : ({LEFT}, {RIGHT}, {ACC}) -> ()")
        else:
            a, d = self.rng.choice(self.tiles), self.rng.choice(self.tiles)
            self.helpers.append(
                f"  func.func private @h{k}(%s: {VEC}, %d: {VEC}) {{\n"
                f"    %h = arith.constant 0.5 : f32\n"
                f"    pto.tadds ins(%s, %h : {VEC}, f32) outs(%d : {VEC})\n"
                f"    return\n  }}")
            self.emit(depth, f"func.call @h{k}({a}, {d}) : ({VEC}, {VEC}) -> ()")


def _prologue(g: _Gen, dtype_x: str, rows: int) -> None:
    for k in range(BLOCKS * 16 + 1):
        if k < BLOCKS or k == BLOCKS * 16:
            g.emit(0, f"%k{k} = arith.constant {k} : index")
    g.emit(0, f"%rows = arith.constant {rows} : index")
    g.emit(0, "%cols = arith.constant 16 : index")
    g.emit(0, f"%total = arith.constant {rows * BLOCKS} : index")
    g.emit(0, "%fzero = arith.constant 0.0 : f32")
    g.emit(0, "%fhalf = arith.constant 0.5 : f32")
    g.emit(0, f"%vx = pto.make_tensor_view %x, shape = [%total, %cols], strides = [%cols, %k1] : "
              f"!pto.tensor_view<?x?x{dtype_x}>")
    g.emit(0, "%vo = pto.make_tensor_view %out, shape = [%total, %cols], strides = [%cols, %k1] : "
              "!pto.tensor_view<?x?xf32>")


def generate(seed: int, budget: int = 14) -> Kernel:
    """The kernel of ``seed``: deterministic, valid for n, m in ``0..MAX_ARG``."""
    rng = random.Random(seed)
    cube = rng.random() < 0.35
    g = _Gen(rng, cube)
    if cube:
        _prologue(g, "f16", CROWS)
        g.mats = [f"%mat{k}" for k in range(rng.randint(1, 3))]
        g.accs = [f"%acc{k}" for k in range(rng.randint(1, 3))]
        for m in g.mats:
            g.emit(0, f"{m} = pto.alloc_tile : {MAT}")
        g.emit(0, f"%left = pto.alloc_tile : {LEFT}")
        g.emit(0, f"%right = pto.alloc_tile : {RIGHT}")
        for a in g.accs:
            g.emit(0, f"{a} = pto.alloc_tile : {ACC}")
        for m in g.mats:  # every tile defined before anything reads it
            p = g.row_view(0, [], "%vx", CROWS, "f16")
            g.emit(0, f"pto.tload ins({p} : !pto.partition_tensor_view<16x16xf16>) outs({m} : {MAT})")
        g.emit(0, f"pto.tmov ins({g.mats[0]} : {MAT}) outs(%left : {LEFT})")
        g.emit(0, f"pto.tmov ins({g.mats[-1]} : {MAT}) outs(%right : {RIGHT})")
        for a in g.accs:
            g.emit(0, f"pto.tmatmul ins(%left, %right : {LEFT}, {RIGHT}) outs({a} : {ACC})")
        kind, x = "cube", np.random.default_rng(seed).uniform(-1, 1, (CROWS * BLOCKS, 16)).astype(np.float16)
        rows = CROWS
    else:
        _prologue(g, "f32", VROWS)
        g.tiles = [f"%t{k}" for k in range(rng.randint(2, 4))]
        level3 = rng.random() < 0.4  # fixed addresses: some tiles alias others whole or in part
        for t in g.tiles:
            if level3:
                addr = rng.choice(ADDRESSES)
                g.emit(0, f"%a{t[2:]} = arith.constant {addr} : i64")
                g.emit(0, f"{t} = pto.alloc_tile addr = %a{t[2:]} : {VEC}")
            else:
                g.emit(0, f"{t} = pto.alloc_tile : {VEC}")
        for t in g.tiles:
            p = g.row_view(0, [], "%vx", VROWS, "f32")
            g.emit(0, f"pto.tload ins({p} : !pto.partition_tensor_view<8x16xf32>) outs({t} : {VEC})")
        kind, x = "vector", np.random.default_rng(seed).uniform(-1, 1, (VROWS * BLOCKS, 16)).astype(np.float32)
        rows = VROWS
    g.block(0, [], budget)
    dtype_x = "f16" if cube else "f32"
    head = (f"  func.func @k(%x: !pto.ptr<{dtype_x}>, %out: !pto.ptr<f32>, %n: index, %m: index)\n"
            f"      attributes {{pto.entry, pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{")
    body = "\n".join(g.lines)
    text = ("module attributes {pto.target_arch = \"a3\"} {\n" + "\n".join(g.helpers) + ("\n" if g.helpers else "")
            + head + "\n" + body + "\n    return\n  }\n}\n")
    out = np.zeros((rows * BLOCKS, 16), np.float32)
    return Kernel(text, {"x": x, "out": out}, kind, g.ops)
