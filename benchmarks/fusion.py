"""Cross-composite loop fusion (FuseLoops, seed 003 §3.6): GM bytes moved and simulated cycles of
three composite pairs, each written as two InCore kernels called back to back, and of chains of
``pypto.lib`` calls in one kernel (``lib:`` rows: each call lowers to its own tile loops, which
FuseLoops pairs; ``lib wide`` rows: rows wider than a tile, where the composite is a two-level loop
and the following op runs in its output pass), with and without the pass.

    python benchmarks/fusion.py [--rows 512] [--cols 128] [--blk 32]

GM bytes are counted from the compiled kernels (every load and store: its valid window's bytes times
its loops' trip counts); cycles, launches and MTE2/MTE3 busy cycles come from the emulator run, which
also checks every output against NumPy.
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np

import pypto.language as pl
import pypto.runtime
from pypto.enums import FunctionType
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.compiler import compile_program
from pypto.ir.types import TileType
from pypto.ir.visitor import stmt_list
from pypto.passes import manager
from pypto.passes.fuse_loops import FuseLoopsPass


def relu_softmax(rows: int, cols: int, blk: int):
    t_ = pl.Tensor[[rows, cols], pl.FP32]

    @pl.program
    class ReluSoftmax:
        @pl.function(type=pl.FunctionType.InCore)
        def softmax(self, x: t_, y: pl.Out[t_]) -> t_:
            for r in pl.range(0, rows, blk):
                a = pl.load(x, [r, 0], [blk, cols])
                scratch = pl.create_tile([blk, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
                e = pl.exp(pl.row_expand_sub(a, pl.row_max(a, scratch)))
                y = pl.store(pl.row_expand_div(e, pl.row_sum(e, scratch)), [r, 0], y)
            return y

        @pl.function(type=pl.FunctionType.InCore)
        def relu(self, x: t_, y: pl.Out[t_]) -> t_:
            for r in pl.range(0, rows, blk):
                y = pl.store(pl.relu(pl.load(x, [r, 0], [blk, cols])), [r, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_) -> t_:
            t: t_ = pl.create_tensor([rows, cols], dtype=pl.FP32)
            t = self.softmax(x, t)
            y: t_ = pl.create_tensor([rows, cols], dtype=pl.FP32)
            y = self.relu(t, y)
            return y

    return ReluSoftmax


def softmax_bias(rows: int, cols: int, blk: int):
    t_ = pl.Tensor[[rows, cols], pl.FP32]

    @pl.program
    class SoftmaxBias:
        @pl.function(type=pl.FunctionType.InCore)
        def softmax(self, x: t_, y: pl.Out[t_]) -> t_:
            for r in pl.range(0, rows, blk):
                a = pl.load(x, [r, 0], [blk, cols])
                scratch = pl.create_tile([blk, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
                e = pl.exp(pl.row_expand_sub(a, pl.row_max(a, scratch)))
                y = pl.store(pl.row_expand_div(e, pl.row_sum(e, scratch)), [r, 0], y)
            return y

        @pl.function(type=pl.FunctionType.InCore)
        def add_bias(self, x: t_, b: t_, y: pl.Out[t_]) -> t_:
            for r in pl.range(0, rows, blk):
                s = pl.add(pl.load(x, [r, 0], [blk, cols]), pl.load(b, [r, 0], [blk, cols]))
                y = pl.store(s, [r, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_) -> t_:
            t: t_ = pl.create_tensor([rows, cols], dtype=pl.FP32)
            t = self.softmax(x, t)
            y: t_ = pl.create_tensor([rows, cols], dtype=pl.FP32)
            y = self.add_bias(t, b, y)
            return y

    return SoftmaxBias


def rms_norm_mul(rows: int, cols: int, blk: int):
    t_ = pl.Tensor[[rows, cols], pl.FP32]
    inv_cols = 1.0 / cols

    @pl.program
    class RmsNormMul:
        @pl.function(type=pl.FunctionType.InCore)
        def rms_norm(self, x: t_, y: pl.Out[t_]) -> t_:
            for r in pl.range(0, rows, blk):
                a = pl.load(x, [r, 0], [blk, cols])
                scratch = pl.create_tile([blk, cols], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
                ms = pl.mul(pl.row_sum(pl.mul(a, a), scratch), inv_cols)
                y = pl.store(pl.row_expand_mul(a, pl.rsqrt(pl.add(ms, 1e-6))), [r, 0], y)
            return y

        @pl.function(type=pl.FunctionType.InCore)
        def mul(self, x: t_, w: t_, y: pl.Out[t_]) -> t_:
            for r in pl.range(0, rows, blk):
                y = pl.store(pl.mul(pl.load(x, [r, 0], [blk, cols]), pl.load(w, [r, 0], [blk, cols])), [r, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, w: t_) -> t_:
            t: t_ = pl.create_tensor([rows, cols], dtype=pl.FP32)
            t = self.rms_norm(x, t)
            y: t_ = pl.create_tensor([rows, cols], dtype=pl.FP32)
            y = self.mul(t, w, y)
            return y

    return RmsNormMul


def lib_chains(rows: int, cols: int) -> dict:
    """Programs of one InCore kernel of ``pypto.lib`` calls each, by chain name."""
    t_ = pl.Tensor[[rows, cols], pl.FP32]
    w_ = pl.Tensor[[cols], pl.FP32]

    @pl.program
    class ExpAdd:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: t_, b: t_, w: w_) -> t_:
            y = pl.exp(x)
            z = pl.add(y, b)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_, w: w_) -> t_:
            z = self.kern(x, b, w)
            return z

    @pl.program
    class ReluSoftmax:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: t_, b: t_, w: w_) -> t_:
            s = pl.softmax(x)
            z = pl.relu(s)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_, w: w_) -> t_:
            z = self.kern(x, b, w)
            return z

    @pl.program
    class SoftmaxBias:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: t_, b: t_, w: w_) -> t_:
            s = pl.softmax(x)
            z = pl.add(s, b)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_, w: w_) -> t_:
            z = self.kern(x, b, w)
            return z

    @pl.program
    class RmsNormMul:
        @pl.function(type=pl.FunctionType.InCore)
        def kern(self, x: t_, b: t_, w: w_) -> t_:
            n = pl.rms_norm(x, w, eps=1e-6)
            z = pl.mul(n, b)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: t_, b: t_, w: w_) -> t_:
            z = self.kern(x, b, w)
            return z

    return {"exp_add": ExpAdd, "relu_softmax": ReluSoftmax, "softmax_bias": SoftmaxBias, "rms_norm_mul": RmsNormMul}


def build(rows: int, cols: int, blk: int, wide: tuple[int, int] = (37, 6000)) -> dict:
    """The programs for one shape (and the ``lib wide:`` rows for ``wide``, rows wider than a tile:
    a two-level composite whose output pass takes the following op): name -> (program, inputs,
    NumPy reference)."""
    rng = np.random.default_rng(0)
    x, b = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True)
    rms = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
    w = np.ones(cols, np.float32)
    lib = lib_chains(rows, cols)
    return {
        "relu(softmax(x))": (relu_softmax(rows, cols, blk), (x,), np.maximum(sm, 0)),
        "softmax(x)+bias": (softmax_bias(rows, cols, blk), (x, b), sm + b),
        "rms_norm(x)*w": (rms_norm_mul(rows, cols, blk), (x, b), rms * b),
        "lib: exp(x)+b": (lib["exp_add"], (x, b, w), np.exp(x) + b),
        "lib: relu(softmax)": (lib["relu_softmax"], (x, b, w), np.maximum(sm, 0)),
        "lib: softmax+bias": (lib["softmax_bias"], (x, b, w), sm + b),
        "lib: rms_norm*w": (lib["rms_norm_mul"], (x, b, w), rms * b),
        **_wide(*wide),
    }


def _wide(rows: int, cols: int) -> dict:
    rng = np.random.default_rng(1)
    x, b = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True)
    rms = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
    w = np.ones(cols, np.float32)
    lib = lib_chains(rows, cols)
    return {
        f"lib wide {rows}x{cols}: relu(softmax)": (lib["relu_softmax"], (x, b, w), np.maximum(sm, 0)),
        f"lib wide {rows}x{cols}: softmax+bias": (lib["softmax_bias"], (x, b, w), sm + b),
        f"lib wide {rows}x{cols}: rms_norm*w": (lib["rms_norm_mul"], (x, b, w), rms * b),
    }


def _gm_bytes(body, kernels: dict) -> int:
    """GM bytes the statements move: kernel calls expanded, loads/stores by their loops' trip counts."""
    total = 0
    for s in stmt_list(body):
        if isinstance(s, St.ForStmt):
            trips = -(-(E.static_int(s.stop) - E.static_int(s.start)) // E.static_int(s.step))
            total += trips * _gm_bytes(s.body, kernels)
        elif isinstance(s, St.AssignStmt) and isinstance(s.value, E.Call):
            op = s.value.op
            if isinstance(op, E.GlobalVar) and op.name in kernels:
                total += _gm_bytes(kernels[op.name].body, kernels)
            elif op.name in ("block.load", "block.store"):
                tile = s.var.type if op.name == "block.load" else s.value.args[0].type
                assert isinstance(tile, TileType)
                total += int(np.prod([E.static_int(d) for d in tile.valid_shape])) * tile.dtype.nbytes
    return total


def gm_bytes(program) -> int:
    out = compile_program(program, with_cpp=False).program
    kernels = {f.name: f for f in out.functions_list if f.type is not FunctionType.Orchestration}
    entry = next(f for f in out.functions_list if f.type is FunctionType.Orchestration)
    return _gm_bytes(entry.body, kernels)


@contextlib.contextmanager
def without_fusion():
    """The Default pipeline without FuseLoops, for the unfused baseline."""
    key = manager.OptimizationStrategy.Default
    saved = manager.STRATEGIES[key]
    manager.STRATEGIES[key] = tuple(p for p in saved if p is not FuseLoopsPass)
    try:
        yield
    finally:
        manager.STRATEGIES[key] = saved


def measure(program, inputs: tuple, want: np.ndarray) -> dict:
    r = pypto.runtime.run(program, *inputs)
    np.testing.assert_allclose(r.outputs[0], want, rtol=1e-4, atol=1e-5)
    return {"gm": gm_bytes(program), "cycles": r.cycles, "launches": r.launches,
            "mte2": r.pipes["MTE2"].busy_cycles, "mte3": r.pipes["MTE3"].busy_cycles}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--cols", type=int, default=128)
    ap.add_argument("--blk", type=int, default=32)
    ap.add_argument("--wide", type=int, nargs=2, default=(37, 6000), metavar=("ROWS", "COLS"),
                    help="shape of the lib wide rows (rows wider than a tile: two-level composites)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    print(f"x: {a.rows}x{a.cols} fp32, tiles of {a.blk} rows; machine a2a3; outputs checked against NumPy")
    head = (f"{'case':36} {'variant':8} {'GM bytes':>10} {'cycles':>8} {'launches':>8} {'MTE2 busy':>10} "
            f"{'MTE3 busy':>10}")
    print(head)
    print("-" * len(head))
    for name, (program, inputs, want) in build(a.rows, a.cols, a.blk, tuple(a.wide)).items():
        with without_fusion():
            unfused = measure(program, inputs, want)
        fused = measure(program, inputs, want)
        for variant, m in (("unfused", unfused), ("fused", fused)):
            print(f"{name:36} {variant:8} {m['gm']:>10} {m['cycles']:>8} {m['launches']:>8} {m['mte2']:>10} "
                  f"{m['mte3']:>10}")
        print(f"{'':36} {'ratio':8} {fused['gm'] / unfused['gm']:>10.2f} {fused['cycles'] / unfused['cycles']:>8.2f}")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
