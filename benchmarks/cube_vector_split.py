"""The automatic cube/vector split (SplitCubeVector) against the same program split by hand.

Each pattern is written twice as a ``@pl.jit`` entry: once as one ``pl.at`` region that mixes the
matmul with vector ops, once as two regions written by hand (the matmul in one, the vector ops in
the other: the GM form, the intermediate stored to GM and loaded back). In the one-region form the
compiler keeps a matmul with an element-wise epilogue (``relu(x@w+b)``) as one group kernel whose
cube pushes each block of the product to the two AIVs through the C2V FIFO, and a matmul whose left
operand element-wise ops compute (``exp(x)@w``) as one whose AIVs push the operand chunk by chunk to
the cube through the V2C FIFO (the FIFO forms); a softmax of the product (it needs whole rows) is
split into ``<region>_matmul`` and ``<region>_vector`` kernels, the GM form. Both run on the emulator; the table gives simulated
cycles, launches, the GM bytes the kernels' loads and stores move (counted from the compiled
kernels: each load's and store's valid window times its loops' trip counts, a group kernel's vector
section once per AIV), the bytes pushed through the FIFOs (each pushed tile's valid region; on A2/A3 the cube and vector cores
share only GM/L2, so the machine model stages these through L2 slots: ``fifo_gm_staging``), and the
worst error against NumPy (float64 on the same rounded inputs).

    python benchmarks/cube_vector_split.py [--platform a2a3sim|a5sim] [--large]

``--large`` adds 512x256 @ 256x512 shapes.
"""

from __future__ import annotations

import argparse

import numpy as np

import pypto.language as pl
from pypto.enums import FunctionType, ScopeKind
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.types import TileType
from pypto.ir.visitor import stmt_list
from pypto.runtime import RunConfig


@pl.jit
def linear_split(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="linear"):
        y = pl.relu(pl.add(pl.matmul(x, w, out_dtype=pl.FP32), b))
    return y


@pl.jit
def linear_by_hand(x: pl.Tensor, w: pl.Tensor, b: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="project"):
        h = pl.matmul(x, w, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bias_relu"):
        y = pl.relu(pl.add(h, b))
    return y


@pl.jit
def scores_split(q: pl.Tensor, k: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scores"):
        y = pl.softmax(pl.matmul(q, pl.transpose(k, 0, 1), out_dtype=pl.FP32))
    return y


@pl.jit
def scores_by_hand(q: pl.Tensor, k: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="qk"):
        s = pl.matmul(q, k, out_dtype=pl.FP32, b_trans=True)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax"):
        y = pl.softmax(s)
    return y


@pl.jit
def exp_operand_split(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="expmm"):
        y = pl.matmul(pl.exp(x), w, out_dtype=pl.FP32)
    return y


@pl.jit
def exp_operand_by_hand(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp"):
        e = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        y = pl.matmul(e, w, out_dtype=pl.FP32)
    return y


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cases(m: int, k: int, n: int, rng: np.random.Generator) -> list:
    """(name, split entry, hand-split entry, inputs, output shape, NumPy reference)."""
    x = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((k, n)).astype(np.float16)
    kt = rng.standard_normal((n, k)).astype(np.float16)
    b = rng.standard_normal((1, n)).astype(np.float32)
    xs = (x * 0.3).astype(np.float16)
    f = lambda a: a.astype(np.float64)
    e16 = np.exp(xs.astype(np.float32)).astype(np.float16)
    return [
        (f"relu(x@w+b) {m}x{k}@{k}x{n}", linear_split, linear_by_hand, (x, w, b), np.maximum(f(x) @ f(w) + b, 0)),
        (f"softmax(q@k^T) {m}x{k}@{k}x{n}", scores_split, scores_by_hand, (x, kt), _softmax(f(x) @ f(kt).T)),
        (f"exp(x)@w {m}x{k}@{k}x{n}", exp_operand_split, exp_operand_by_hand, (xs, w), f(e16) @ f(w)),
    ]


def _value(e: object, env: dict) -> int:
    """An index expression's value with the lane (``env``) known: every other value is a constant."""
    if isinstance(e, int):
        return e
    if isinstance(e, E.ConstInt):
        return e.value
    if isinstance(e, E.Var):
        return env[e]
    ops = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b, "Min": min, "Max": max,
           "Eq": lambda a, b: int(a == b)}
    return ops[type(e).__name__](_value(e.left, env), _value(e.right, env))


def _moved(body: object, env: dict, kernels: dict, totals: dict) -> None:
    """Add the GM bytes of ``body``'s loads and stores (and the bytes it pushes to the AIVs) to ``totals``."""
    for s in stmt_list(body):
        if isinstance(s, St.ForStmt):
            for i in range(_value(s.start, env), _value(s.stop, env), _value(s.step, env)):
                _moved(s.body, {**env, s.loop_var: i}, kernels, totals)
        elif isinstance(s, St.IfStmt):
            branch = s.then_body if _value(s.condition, env) else s.else_body
            if branch is not None:
                _moved(branch, env, kernels, totals)
        elif isinstance(s, St.ScopeStmt) and s.scope_kind is ScopeKind.VectorSection:
            for lane in (0, 1):  # each AIV of the group runs the vector section
                _moved(s.body, {**env, "lane": lane}, kernels, totals)
        elif isinstance(s, (St.ScopeStmt, St.SeqStmts)):
            _moved(s.body if isinstance(s, St.ScopeStmt) else s, env, kernels, totals)
        elif isinstance(s, (St.AssignStmt, St.EvalStmt)):
            call = s.value if isinstance(s, St.AssignStmt) else s.expr
            if not isinstance(call, E.Call):
                if isinstance(s, St.AssignStmt) and s.var.type.__class__.__name__ == "ScalarType":
                    env[s.var] = _value(s.value, env)
                continue
            name = call.op.name
            if isinstance(call.op, E.GlobalVar) and name in kernels:
                _moved(kernels[name].body, {}, kernels, totals)
            elif name in ("block.get_subblock_idx", "block.get_aiv_lane"):
                env[s.var] = env.get("lane", 0)
            elif name in ("block.load", "block.store", "block.tpush_to_aiv", "block.tpush_to_aic"):
                tile = s.var.type if name == "block.load" else call.args[0].type
                assert isinstance(tile, TileType)
                n = int(np.prod([_value(d, env) for d in tile.valid_shape])) * tile.dtype.nbytes
                key = "fifo" if name.startswith("block.tpush_") else "gm"
                totals[key] += n


def bytes_moved(fn, inputs: tuple, y: np.ndarray, config: RunConfig) -> dict:
    """``{"gm": bytes, "fifo": bytes}`` of one program, from its compiled kernels."""
    program = fn.compile(*inputs, y, config=config).program
    kernels = {f.name: f for f in program.functions_list if f.type is not FunctionType.Orchestration}
    entry = next(f for f in program.functions_list if f.type is FunctionType.Orchestration)
    totals = {"gm": 0, "fifo": 0}
    _moved(entry.body, {}, kernels, totals)
    return totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", default="a2a3sim", help="RunConfig.platform: the machine model")
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args()
    config = RunConfig(platform=args.platform)
    shapes = [(100, 130, 70)] + ([(512, 256, 512)] if args.large else [])
    rng = np.random.default_rng(0)
    print(f"{'pattern':34} {'form':5} {'cycles':>8} {'by hand':>8} {'ratio':>6} {'launches':>9} "
          f"{'GM bytes':>9} {'by hand':>9} {'FIFO bytes':>10} {'max err':>9}")
    for m, k, n in shapes:
        for name, split, by_hand, inputs, want in cases(m, k, n, rng):
            row = []
            for fn in (split, by_hand):
                y = np.zeros(want.shape, np.float32)
                fn(*inputs, y, config=config)
                r = fn.last_result
                err = float(np.abs(y - want).max())
                if r.status != "ok" or not np.allclose(y, want, rtol=1e-4, atol=2e-6 * k + 1e-5):
                    raise SystemExit(f"{name}: {fn.__name__} does not match NumPy (max error {err})")
                row.append((r.cycles, r.launches, err, bytes_moved(fn, inputs, y, config)))
            (c1, l1, e1, b1), (c2, l2, e2, b2) = row
            form = "FIFO" if b1["fifo"] else "GM"
            print(f"{name:34} {form:5} {c1:>8} {c2:>8} {c1 / c2:>6.3f} {f'{l1}/{l2}':>9} {b1['gm']:>9} {b2['gm']:>9} "
                  f"{b1['fifo']:>10} {max(e1, e2):>9.2e}")


if __name__ == "__main__":
    main()
