"""Random PyPTO programs for differential testing: a plan, its DSL source, its NumPy reference.

A plan is plain data (hypothesis draws it); ``source()`` writes it as a ``@pl.program`` the way a user
would, and ``reference()`` computes what NumPy says it means. Three kinds of kernels:

* ``tile``: ``pl.load`` of ragged tiles (the tile shape padded to the 32-byte row alignment, the true
  extent in ``valid_shapes``), a chain of steps, an optional reduction, ``pl.store``. Steps are unary,
  binary, tile-scalar and broadcasting ops (``[R, 1]`` / ``[1, C]`` operands, either side), cast round
  trips, aliases, ``if``/``else`` whose else nests a second ``if`` (the same name assigned in every
  branch, chosen by a scalar argument) and ``pl.range`` loops.
* ``tensor``: the same kind of chain written with tensor-level ops on whole tensors of any shape, with
  ``[R, 1]``, ``[1, C]`` and ``[C]`` broadcast operands, tiled by the compiler.
* ``matmul``: ``pl.matmul`` of tensors with any M, K, N (the compiler pads the fractal tails).

Each step is rounded to the tile dtype in the reference, as the hardware rounds each instruction. Casts
use ``mode="rint"`` (nearest, ties to even: NumPy's ``astype``); the default ``"round"`` breaks ties away
from zero, which NumPy has no cast for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

BF16 = np.dtype(ml_dtypes.bfloat16)
NP = {"FP32": np.dtype(np.float32), "FP16": np.dtype(np.float16), "BF16": BF16, "INT32": np.dtype(np.int32)}
ELEM_BYTES = {"FP32": 4, "FP16": 2, "BF16": 2, "INT32": 4}
# relative error of one rounding step in each dtype (the tolerance grows with the number of steps)
STEP_EPS = {"FP32": 2e-7, "FP16": 1e-3, "BF16": 8e-3, "INT32": 0.0}

UNARY = {"abs": np.abs, "neg": np.negative, "relu": lambda x: np.maximum(x, 0), "exp": np.exp}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "maximum": np.maximum, "minimum": np.minimum}
SCALAR = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum}
INT_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
              "minimum": np.minimum, "and_": np.bitwise_and, "or_": np.bitwise_or}


def truncating_division(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """INT32 division as the compiler defines it: toward zero, x / 0 = 0 (MIN / -1 wraps in _round)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe))


# Tensor-level INT32 ops beyond the tile-level ones: division (exact on A2/A3 through the library's
# FP32 estimate and integer correction; a tile-level INT32 pl.div has no A2/A3 instruction).
INT_TENSOR_BINARY = {"div": truncating_division}
BCAST = ("add", "sub", "mul", "div", "maximum")
# What A2/A3 computes per dtype (i32: no div, no exp/abs). No bf16: A2/A3 has no bf16 tile-tile
# arithmetic (pto-text-format §4.3, tadd/tsub/tneg add bf16 on A5 only); bf16 is covered by matmul plans.
OPS = {
    "FP32": (UNARY, BINARY, SCALAR, BCAST),
    "FP16": (UNARY, BINARY, SCALAR, BCAST),
    "INT32": ({"neg": np.negative, "relu": UNARY["relu"]}, INT_BINARY, SCALAR, ("add", "sub", "mul", "maximum")),
}
# ops a loop may repeat without blowing up or collapsing the values
LOOP_SAFE = {"FP32": ("maximum", "minimum", "add"), "FP16": ("maximum", "minimum"), "BF16": ("add",),
             "INT32": ("maximum", "minimum", "add")}
CAST_VIA = {"FP32": ("FP16", "BF16"), "FP16": ("FP32",), "BF16": ("FP32",), "INT32": ("FP32",)}
CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
       "GE": np.greater_equal}
# compare modes per dtype (A2/A3 compares INT32 only for equality; no BF16 compare in the chains)
CMP_MODES = {"FP32": tuple(CMP), "FP16": tuple(CMP), "INT32": ("EQ",)}
REDUCE = {"row_sum": lambda x: x.sum(1, keepdims=True), "row_max": lambda x: x.max(1, keepdims=True),
          "col_sum": lambda x: x.sum(0, keepdims=True), "col_max": lambda x: x.max(0, keepdims=True)}


@dataclass(frozen=True)
class Step:
    """One statement of a chain: ``kind`` in unary, binary, scalar, bcast, cast, alias, branch, loop."""

    kind: str
    op: str = ""
    value: float = 0.0
    which: str = ""  # bcast: 'row' ([R, 1]), 'col' ([1, C]) or 'vec' ([C], tensor level)
    left: bool = False  # bcast: the vector is the left operand
    via: str = ""  # cast: the dtype of the round trip
    arms: tuple = ()  # branch: three steps; loop: one step
    limits: tuple = ()  # branch: thresholds on n; loop: (trip count,)


@dataclass
class Plan:
    kind: str  # 'tile', 'tensor' or 'matmul'
    dtype: str
    rows: int
    cols: int
    steps: tuple = ()
    reduce: str | None = None
    n: int = 0  # the scalar argument branches test
    k: int = 0  # matmul: K
    seed: int = 0
    vectors: tuple = field(default=())  # broadcast operands the steps use ('row', 'col', 'vec')
    block: int = 0  # tile kernels: rows per block of a pl.range loop over the rows (0: one tile)


# ----------------------------------------------------------------------------- strategies


# Tensor-level ops the compiler tiles (ConvertTensorToBlockOps): exp is the one unary op, and tensor
# scalars are FP32 literals (an FP16 tensor plus 0.5 promotes to FP32), so scalar steps are FP32 only.
TENSOR_UNARY = ("exp",)
TENSOR_BINARY = ("add", "sub", "mul", "div", "maximum")
TENSOR_SCALAR = ("adds", "muls")


def _leaf(draw, dtype: str, kind: str, vectors: set, loop: bool = False) -> Step:
    unary, binary, scalar, bcast = OPS[dtype]
    if "exp" in vectors:  # one exp per program: a chain of them amplifies every rounding error
        unary = {k: v for k, v in unary.items() if k != "exp"}
    if kind == "tensor" and dtype == "INT32":
        binary, bcast = {**binary, **INT_TENSOR_BINARY}, (*bcast, *INT_TENSOR_BINARY)
    if kind == "tensor":
        unary = {k: v for k, v in unary.items() if k in TENSOR_UNARY}
        binary = {k: v for k, v in binary.items() if k in TENSOR_BINARY}
        scalar = {k: v for k, v in scalar.items() if k in TENSOR_SCALAR and dtype == "FP32"}
    choices = [c for c, ops in (("unary", unary), ("binary", binary), ("scalar", scalar), ("bcast", bcast)) if ops]
    if kind == "tile" and dtype in CMP_MODES:
        choices.append("select")
    if loop:
        return Step("binary", draw(st.sampled_from(LOOP_SAFE[dtype])))
    what = draw(st.sampled_from(choices))
    if what == "unary":
        op = draw(st.sampled_from(sorted(unary)))
        if op == "exp":
            vectors.add("exp")
        return Step("unary", op)
    if what == "binary":
        return Step("binary", draw(st.sampled_from(sorted(binary))))
    if what == "scalar":
        consts = [-3.0, 1.0, 2.0] if dtype == "INT32" else [-0.5, 0.25, 1.5]
        return Step("scalar", draw(st.sampled_from(sorted(scalar))), draw(st.sampled_from(consts)))
    if what == "select":  # sel(cmp(x, y), x, y) or sels(cmps(x, c), x, c2)
        mode = draw(st.sampled_from(CMP_MODES[dtype]))
        if draw(st.booleans()):
            return Step("select", mode)
        consts = [0.0, 1.0] if dtype != "INT32" else [0, 1]
        return Step("selects", mode, value=draw(st.sampled_from(consts)))
    which = draw(st.sampled_from(["row", "col", "vec"] if kind == "tensor" else ["row", "col"]))
    vectors.add(which)
    return Step("bcast", draw(st.sampled_from(bcast)), which=which, left=draw(st.booleans()))


@st.composite
def plans(draw, kinds=("tile", "tensor", "matmul", "tile_matmul")) -> Plan:
    kind = draw(st.sampled_from(kinds))
    seed = draw(st.integers(0, 2**16))
    if kind in ("matmul", "tile_matmul"):
        dtype = draw(st.sampled_from(["FP16", "BF16", "FP32"]))
        m, k, n = (draw(st.integers(1, 70)) for _ in range(3))
        return Plan(kind, dtype, m, n, k=k, seed=seed)
    dtype = draw(st.sampled_from(sorted(OPS)))
    rows = draw(st.integers(1, 40))
    cols = draw(st.integers(1, 80))
    if kind == "tensor" and draw(st.integers(0, 3)) == 0:
        # big enough that the compiler tiles it into a grid of blocks with ragged last blocks
        rows, cols = draw(st.integers(100, 260)), draw(st.integers(60, 140))
    vectors: set = set()
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        shape = draw(st.sampled_from(["leaf", "leaf", "cast", "alias", "branch", "loop"]))
        if shape == "cast" and dtype != "INT32":
            steps.append(Step("cast", via=draw(st.sampled_from(CAST_VIA[dtype]))))
        elif shape == "alias" and kind == "tile":
            steps.append(Step("alias"))
        elif shape == "branch" and kind == "tile":
            arms = tuple(_leaf(draw, dtype, kind, vectors) for _ in range(3))
            t1 = draw(st.integers(0, 3))
            steps.append(Step("branch", arms=arms, limits=(t1, t1 + draw(st.integers(1, 3)))))
        elif shape == "loop" and kind == "tile":
            steps.append(Step("loop", arms=(_leaf(draw, dtype, kind, vectors, loop=True),),
                              limits=(draw(st.integers(1, 3)),)))
        else:
            steps.append(_leaf(draw, dtype, kind, vectors))
    reduce = None
    if dtype in ("FP32", "FP16"):
        reduce = draw(st.sampled_from([None, None, *sorted(REDUCE)]))
        if kind == "tensor" and reduce and not reduce.startswith("row"):
            reduce = None  # tensor level reduces rows only (row_sum / row_max)
    block = 0
    if kind == "tile" and rows > 8 and (reduce is None or reduce.startswith("row")) and draw(st.booleans()):
        block = draw(st.sampled_from([8, 16]))  # row blocks in a loop, the last one a valid-shape tail
    vectors.discard("exp")
    return Plan(kind, dtype, rows, cols, tuple(steps), reduce, draw(st.integers(0, 6)), seed=seed,
                vectors=tuple(sorted(vectors)), block=block)


# ----------------------------------------------------------------------------- inputs and reference


def inputs(plan: Plan) -> dict:
    rng = np.random.default_rng(plan.seed)
    dt = NP[plan.dtype]
    r, c = plan.rows, plan.cols
    if plan.kind in ("matmul", "tile_matmul"):
        return {"a": rng.standard_normal((r, plan.k)).astype(dt), "b": rng.standard_normal((plan.k, c)).astype(dt)}

    # INT32 tensor kernels that divide draw from the whole range half the time (the quotient of an
    # FP32 estimate is off past 2**24), with small divisors among full-range ones and zeros
    wide = plan.kind == "tensor" and plan.dtype == "INT32" and _divides(plan) and rng.random() < 0.5

    def data(shape, lo=-1.0, hi=1.0):
        if wide:
            return rng.integers(-2**31, 2**31, shape, dtype=np.int64).astype(np.int32)
        if plan.dtype == "INT32":
            return rng.integers(-8, 9, shape).astype(np.int32)
        return rng.uniform(lo, hi, shape).astype(dt)

    def divisor(shape):  # |v| in [0.5, 1.5], either sign: every division is well conditioned
        if wide:
            return np.where(rng.random(shape) < 0.5, rng.integers(-5, 6, shape),
                            rng.integers(-2**31, 2**31, shape, dtype=np.int64)).astype(np.int32)
        if plan.dtype == "INT32":
            return rng.integers(1, 4, shape).astype(np.int32)
        return (rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)).astype(dt)

    out = {"a": data((r, c)), "b": divisor((r, c))}
    shapes = {"row": (r, 1), "col": (1, c), "vec": (c,)}
    for v in plan.vectors:
        out[v] = divisor(shapes[v])
    return out


def _divides(plan: Plan) -> bool:
    def divides(step: Step) -> bool:
        return step.op == "div" or any(divides(a) for a in step.arms)

    return any(divides(s) for s in plan.steps)


def _round(x: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "INT32":  # two's complement: INT32 arithmetic wraps, as the vector unit's does
        return (np.asarray(x).astype(np.int64) + 2**31) % 2**32 - 2**31
    with np.errstate(over="ignore"):  # FP16 exp chains may overflow to inf, as the hardware does
        return x.astype(NP[dtype]).astype(np.float64)


def _apply(step: Step, x: np.ndarray, env: dict, dtype: str, n: int) -> np.ndarray:
    unary, binary, scalar, _ = OPS[dtype]
    if step.kind == "unary":
        if step.op == "exp":
            # exp turns an absolute error e of x into a relative error e of the result: the error
            # carried so far grows by max|x| (the tolerance must follow, or any ulp fails it)
            finite = np.abs(x[np.isfinite(x)])
            env["_amp"] = env.get("_amp", 1.0) * max(1.0, float(finite.max()) if finite.size else 1.0)
        with np.errstate(over="ignore"):
            return _round(unary[step.op](x), dtype)
    if dtype == "INT32":
        binary = {**binary, **INT_TENSOR_BINARY}
    if step.kind == "binary":
        return _round(binary[step.op](x, env["b"]), dtype)
    if step.kind == "scalar":
        c = int(step.value) if dtype == "INT32" else _round(np.array(step.value), dtype)
        return _round(scalar[step.op](x, c), dtype)
    if step.kind == "bcast":
        v = env[step.which]
        f = binary[step.op] if dtype == "INT32" else BINARY[step.op]
        return _round(f(v, x) if step.left else f(x, v), dtype)
    if step.kind == "cast":
        mid = x.astype(NP[step.via]).astype(np.float64) if step.via != "INT32" else x
        return _round(mid, dtype)
    if step.kind == "select":
        return np.where(CMP[step.op](x, env["b"]), x, env["b"])
    if step.kind == "selects":
        c = _round(np.array(step.value), dtype)
        return np.where(CMP[step.op](x, c), x, _round(np.array(-step.value - 0.5 if dtype != "INT32" else -3), dtype))
    if step.kind == "alias":
        return x
    if step.kind == "branch":
        t1, t2 = step.limits
        arm = step.arms[0] if n < t1 else step.arms[1] if n < t2 else step.arms[2]
        return _apply(arm, x, env, dtype, n)
    if step.kind == "loop":
        for _ in range(step.limits[0]):
            x = _apply(step.arms[0], x, env, dtype, n)
        return x
    raise AssertionError(step)


def evaluate(plan: Plan, ins: dict) -> tuple[np.ndarray, float]:
    """The expected output, in float64 (int64 for INT32), each step rounded to the plan's dtype, and
    how much the chain amplifies relative errors (exp steps multiply them by max|x|)."""
    if plan.kind in ("matmul", "tile_matmul"):
        return ins["a"].astype(np.float64) @ ins["b"].astype(np.float64), 1.0
    work = np.int64 if plan.dtype == "INT32" else np.float64
    env = {k: v.astype(work) for k, v in ins.items()}
    x = env["a"]
    with np.errstate(all="ignore"):  # x / 0 and overflow give inf as on the hardware; compared as such
        for s in plan.steps:
            x = _apply(s, x, env, plan.dtype, plan.n)
        if plan.reduce:
            x = _round(REDUCE[plan.reduce](x), plan.dtype)
    return x, env.get("_amp", 1.0)


def reference(plan: Plan, ins: dict) -> np.ndarray:
    return evaluate(plan, ins)[0]


def tolerance(plan: Plan, want: np.ndarray, amplification: float = 1.0) -> tuple[float, float]:
    """(rtol, atol): one rounding per step in the dtype, more for sums over a row/column, for K and
    for error amplification by exp."""
    if plan.kind in ("matmul", "tile_matmul"):
        return 1e-5, 1e-5 * plan.k * (8 if plan.dtype != "FP32" else 1)
    if plan.dtype == "INT32":
        return 0.0, 0.0
    depth = 1 + sum(s.limits[0] if s.kind == "loop" else 1 for s in plan.steps)
    span = {None: 1, "row_sum": plan.cols, "col_sum": plan.rows}.get(plan.reduce, 1)
    # a cast round trip through a narrower type rounds to that type: one ulp there can flip a value
    # by one of its ulps (double rounding of a value that the kernel computed an ulp away)
    narrowest = max([STEP_EPS[plan.dtype]] + [STEP_EPS[s.via] for s in plan.steps if s.kind == "cast"])
    eps = narrowest * 2 * depth * amplification
    finite = np.abs(want[np.isfinite(want)])  # an overflow to inf must match exactly, not widen atol
    scale = float(finite.max()) if finite.size else 1.0
    return eps, eps * max(1.0, scale) * span


# ----------------------------------------------------------------------------- source


def _pad(n: int, dtype: str) -> int:
    per_row = 32 // ELEM_BYTES[dtype]
    return -(-n // per_row) * per_row


def _ty(shape: tuple, dtype: str) -> str:
    return f"pl.Tensor[[{', '.join(map(str, shape))}], pl.{dtype}]"


def out_shape(plan: Plan) -> tuple:
    if plan.kind in ("matmul", "tile_matmul"):
        return (plan.rows, plan.cols)
    if plan.reduce and plan.reduce.startswith("row"):
        return (plan.rows, 1)
    if plan.reduce:
        return (1, plan.cols)
    return (plan.rows, plan.cols)


def _tile_expr(step: Step, dtype: str) -> str:
    if step.kind == "unary":
        return f"pl.{step.op}(x)"
    if step.kind == "binary":
        return f"pl.{step.op}(x, y)"
    if step.kind == "scalar":
        # a typed constant keeps FP16/BF16 chains in their dtype (a bare float literal is FP32)
        c = int(step.value) if dtype == "INT32" else f"pl.const({step.value}, pl.{dtype})"
        return f"pl.{step.op}(x, {c})"
    if step.kind == "bcast":
        v = {"row": "rv", "col": "cv"}[step.which]
        return f"pl.{step.op}({v}, x)" if step.left else f"pl.{step.op}(x, {v})"
    if step.kind == "cast":
        return f"pl.cast(pl.cast(x, pl.{step.via}, mode=\"rint\"), pl.{dtype}, mode=\"rint\")"
    if step.kind == "select":
        return f"pl.sel(pl.cmp(x, y, cmp_type=pl.CmpType.{step.op}), x, y)"
    if step.kind == "selects":
        c = int(step.value) if dtype == "INT32" else f"pl.const({step.value}, pl.{dtype})"
        other = -3 if dtype == "INT32" else f"pl.const({-step.value - 0.5}, pl.{dtype})"
        return f"pl.sels(pl.cmps(x, {c}, cmp_type=pl.CmpType.{step.op}), x, {other})"
    raise AssertionError(step)


def _tile_stmts(step: Step, dtype: str, i: int, indent: str) -> list[str]:
    if step.kind == "alias":
        return [f"{indent}x_alias{i} = x", f"{indent}x = x_alias{i}"]
    if step.kind == "branch":
        t1, t2 = step.limits
        a, b, c = (_tile_expr(s, dtype) for s in step.arms)
        return [f"{indent}if n < {t1}:", f"{indent}    x = {a}", f"{indent}else:", f"{indent}    if n < {t2}:",
                f"{indent}        x = {b}", f"{indent}    else:", f"{indent}        x = {c}"]
    if step.kind == "loop":
        return [f"{indent}for i{i} in pl.range(0, {step.limits[0]}):", f"{indent}    x = {_tile_expr(step.arms[0], dtype)}"]
    return [f"{indent}x = {_tile_expr(step, dtype)}"]


def _tile_block(plan: Plan, row0: str, tr: int, vr: int | str, indent: str, out: str) -> list[str]:
    """Load rows ``[row0, row0 + vr)`` as a ``[tr, tc]`` tile, run the chain, store into ``out``."""
    c, dt = plan.cols, plan.dtype
    tc = _pad(c, dt)
    body = [f"{indent}x = pl.load(a, [{row0}, 0], [{tr}, {tc}], valid_shapes=[{vr}, {c}])",
            f"{indent}y = pl.load(b, [{row0}, 0], [{tr}, {tc}], valid_shapes=[{vr}, {c}])"]
    for v in plan.vectors:
        if v == "row":
            body.append(f"{indent}rv = pl.load(row, [{row0}, 0], [{tr}, 1], valid_shapes=[{vr}, 1])")
        else:
            body.append(f"{indent}cv = pl.load(col, [0, 0], [1, {tc}], valid_shapes=[1, {c}])")
    for i, s in enumerate(plan.steps):
        body += _tile_stmts(s, dt, i, indent)
    if plan.reduce and plan.reduce.startswith("row"):
        body.append(f"{indent}tmp = pl.create_tile([{tr}, {tc}], dtype=pl.{dt}, target_memory=pl.MemorySpace.Vec)")
        body.append(f"{indent}x = pl.{plan.reduce}(x, tmp)")
    elif plan.reduce:
        body.append(f"{indent}x = pl.{plan.reduce[4:]}(x, axis=0, keepdim=True)")
    body.append(f"{indent}{out} = pl.store(x, [{row0}, 0], o)")
    return body


def _tile_source(plan: Plan) -> str:
    r, c, dt = plan.rows, plan.cols, plan.dtype
    params = [f"a: {_ty((r, c), dt)}", f"b: {_ty((r, c), dt)}"]
    shapes = {"row": (r, 1), "col": (1, c)}
    params += [f"{v}: {_ty(shapes[v], dt)}" for v in plan.vectors]  # in argument order
    out = out_shape(plan)
    params += ["n: pl.Scalar[pl.INDEX]", f"o: pl.Out[{_ty(out, dt)}]"]
    if not plan.block:
        tr = r if r == 1 else -(-r // 8) * 8
        body = _tile_block(plan, "0", tr, r, " " * 8, "done")
    else:
        bsz = plan.block
        full, tail = divmod(r, bsz)
        body = [f"        for blk in pl.range(0, {full}):"]
        body += _tile_block(plan, f"blk * {bsz}", bsz, bsz, " " * 12, "o")
        if tail:
            body += _tile_block(plan, str(full * bsz), bsz, tail, " " * 8, "o")
        body.append("        done = o")
    body.append("        return done")
    return _wrap(params, _ty(out, dt), body)


def _tensor_expr(step: Step, dtype: str) -> str:
    names = {"row": "row", "col": "col", "vec": "vec"}
    if step.kind == "unary":
        return f"pl.{step.op}(x)"
    if step.kind == "binary":
        return f"pl.{step.op}(x, b)"
    if step.kind == "scalar":
        return f"pl.{ {'adds': 'add', 'muls': 'mul'}[step.op]}(x, {step.value})"
    if step.kind == "bcast":
        v = names[step.which]
        return f"pl.{step.op}({v}, x)" if step.left else f"pl.{step.op}(x, {v})"
    if step.kind == "cast":
        return f"pl.cast(pl.cast(x, pl.{step.via}, mode=\"rint\"), pl.{dtype}, mode=\"rint\")"
    raise AssertionError(step)


def _tensor_source(plan: Plan) -> str:
    r, c, dt = plan.rows, plan.cols, plan.dtype
    params = [f"a: {_ty((r, c), dt)}", f"b: {_ty((r, c), dt)}"]
    shapes = {"row": (r, 1), "col": (1, c), "vec": (c,)}
    params += [f"{v}: {_ty(shapes[v], dt)}" for v in plan.vectors]
    body = ["        x = a"]
    for s in plan.steps:
        body.append(f"        x = {_tensor_expr(s, dt)}")
    if plan.reduce:
        body.append(f"        x = pl.{plan.reduce}(x)")
    body.append("        return x")
    return _wrap(params, _ty(out_shape(plan), dt), body)


def _matmul_source(plan: Plan) -> str:
    m, k, n, dt = plan.rows, plan.k, plan.cols, plan.dtype
    params = [f"a: {_ty((m, k), dt)}", f"b: {_ty((k, n), dt)}"]
    body = ["        c = pl.matmul(a, b, out_dtype=pl.FP32)", "        return c"]
    return _wrap(params, _ty((m, n), "FP32"), body)


def _tile_matmul_source(plan: Plan) -> str:
    """The cube path by hand: padded Mat tiles with the true extents as valid shapes."""
    m, k, n, dt = plan.rows, plan.k, plan.cols, plan.dtype
    g = max(16, 32 // ELEM_BYTES[dt])
    mp, kp, np_ = (-(-d // g) * g for d in (m, k, n))
    params = [f"a: {_ty((m, k), dt)}", f"b: {_ty((k, n), dt)}", f"o: pl.Out[{_ty((m, n), 'FP32')}]"]
    body = [f"        am = pl.load(a, [0, 0], [{mp}, {kp}], valid_shapes=[{m}, {k}], target_memory=pl.MemorySpace.Mat)",
            f"        bm = pl.load(b, [0, 0], [{kp}, {np_}], valid_shapes=[{k}, {n}], target_memory=pl.MemorySpace.Mat)",
            "        al = pl.move(am, target_memory=pl.MemorySpace.Left)",
            "        br = pl.move(bm, target_memory=pl.MemorySpace.Right)",
            "        c = pl.matmul(al, br)",
            "        return pl.store(c, [0, 0], o)"]
    return _wrap(params, _ty((m, n), "FP32"), body)


def _wrap(params: list, ret: str, body: list) -> str:
    return ("import pypto.language as pl\n\n\n@pl.program\nclass Generated:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            f"    def k(self, {', '.join(params)}) -> {ret}:\n" + "\n".join(body) + "\n")


def source(plan: Plan) -> str:
    kinds = {"tile": _tile_source, "tensor": _tensor_source, "matmul": _matmul_source,
             "tile_matmul": _tile_matmul_source}
    return kinds[plan.kind](plan)


def arguments(plan: Plan, ins: dict) -> list:
    """The kernel's positional arguments: arrays in parameter order, then ``n`` for tile kernels."""
    if plan.kind in ("matmul", "tile_matmul"):
        return [ins["a"], ins["b"]]
    args = [ins["a"], ins["b"]] + [ins[v] for v in plan.vectors]
    return args + ([plan.n] if plan.kind == "tile" else [])
