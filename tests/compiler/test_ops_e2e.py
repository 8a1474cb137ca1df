"""Every tile op of the language, compiled from DSL source, run on the emulator and compared with NumPy.

Each case is race-free under the Default strategy (automatic sync insertion by the compiler). Inputs
are chosen so that a wrong lowering changes the output: integer-valued data where ties matter
(compares, rounding), distinct operands where operand order matters, non-trivial pad values.
"""

import ml_dtypes
import numpy as np
import pytest
from conftest import dsl_program, errors, needs_emulator

import pyptoemu
from pypto.runtime import run

pytestmark = needs_emulator
BF16 = np.dtype(ml_dtypes.bfloat16)
PL = {
    np.dtype(np.float32): "FP32", np.dtype(np.float16): "FP16", BF16: "BF16", np.dtype(np.int32): "INT32",
    np.dtype(np.int16): "INT16", np.dtype(np.uint16): "UINT16", np.dtype(np.uint8): "UINT8",
}
NP = {v: k for k, v in PL.items()}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def ints(shape, dtype, lo=-4, hi=5, seed=0) -> np.ndarray:
    """Small integer values (exact in every dtype, frequent ties) as ``dtype``."""
    return rng(seed).integers(lo, hi, shape).astype(NP[dtype])


def normal(shape, dtype, seed=0) -> np.ndarray:
    return rng(seed).standard_normal(shape).astype(NP[dtype])


def execute(body: str, inputs: dict, out_shape: tuple, out_dtype: str, strategy: str = "Default") -> np.ndarray:
    """Compile the kernel (inputs are bound in order), run it, require a race-free run, return the output."""
    arrays = {n: np.asarray(a) for n, a in inputs.items()}
    prog = dsl_program(body, {n: (a.shape, PL[a.dtype]) for n, a in arrays.items()}, (out_shape, out_dtype))
    r = run(prog, *arrays.values(), strategy=strategy)
    assert not errors(r), errors(r)
    return r.outputs[0]


def same(got: np.ndarray, want: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


LOAD2 = """
ta = pl.load(a, [0, 0], [{R}, {C}])
tb = pl.load(b, [0, 0], [{R}, {C}])
"""

# ----------------------------------------------------------------------------- compare and select

CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
       "GE": np.greater_equal}


CMP_CASES = [(m, d, s) for m in sorted(CMP) for d, s in (("FP32", (16, 64)), ("FP16", (8, 128)), ("INT32", (4, 520)))
             if d != "INT32" or m == "EQ"]  # A2/A3 compares INT32 only for EQ (test_int32_ordering_compare_...)


@pytest.mark.parametrize("mode,dtype,shape", CMP_CASES)
def test_cmp_sel(mode, dtype, shape):
    R, C = shape
    a, b, c = ints(shape, dtype, seed=1), ints(shape, dtype, seed=2), ints(shape, dtype, 10, 20, seed=3)
    body = LOAD2.format(R=R, C=C) + f"""
tc = pl.load(c, [0, 0], [{R}, {C}])
m = pl.cmp(ta, tb, cmp_type=pl.CmpType.{mode})
r = pl.sel(m, ta, tc)
"""
    got = execute(body, {"a": a, "b": b, "c": c}, shape, dtype)
    same(got, np.where(CMP[mode](a, b), a, c))


@pytest.mark.parametrize("strategy", ["Default", "PTOAS"])
def test_sel_cmp_minimum_idiom(strategy):
    a, b = normal((16, 64), "FP32", 4), normal((16, 64), "FP32", 5)
    body = LOAD2.format(R=16, C=64) + "r = pl.sel(pl.cmp(ta, tb, cmp_type=pl.CmpType.LT), ta, tb)\n"
    same(execute(body, {"a": a, "b": b}, (16, 64), "FP32", strategy), np.where(a < b, a, b))


@pytest.mark.parametrize("shape", [(16, 64), (4, 520)])
def test_cmp_mask_layout(shape):
    """The mask is UINT8, 8 predicates per byte, LSB first, one row per data row, rows padded to 32 bytes."""
    R, C = shape
    a, b = ints(shape, "FP32", seed=6), ints(shape, "FP32", seed=7)
    mcols = ((C + 7) // 8 + 31) // 32 * 32
    got = execute(LOAD2.format(R=R, C=C) + "r = pl.cmp(ta, tb, cmp_type=pl.CmpType.GE)\n", {"a": a, "b": b},
                  (R, mcols), "UINT8")
    want = np.zeros((R, mcols), np.uint8)
    packed = np.packbits(a >= b, axis=1, bitorder="little")
    want[:, : packed.shape[1]] = packed
    same(got, want)


@pytest.mark.parametrize("mode,dtype", [(m, d) for m in sorted(CMP) for d in ("FP32", "FP16", "INT32")
                                        if d != "INT32" or m == "EQ"])
def test_cmps_sels(mode, dtype):
    a = ints((16, 64), dtype, seed=8)
    body = f"""
ta = pl.load(a, [0, 0], [16, 64])
m = pl.cmps(ta, {1 if dtype == 'INT32' else 1.0}, cmp_type=pl.CmpType.{mode})
r = pl.sels(m, ta, {-7 if dtype == 'INT32' else -7.5})
"""
    fill = -7 if dtype == "INT32" else -7.5
    same(execute(body, {"a": a}, (16, 64), dtype), np.where(CMP[mode](a, 1), a, NP[dtype].type(fill)))


def test_cmps_sel_with_scalar_threshold_from_tile_values():
    a, b = normal((8, 64), "FP16", 9), normal((8, 64), "FP16", 10)
    body = LOAD2.format(R=8, C=64) + "r = pl.sel(pl.cmps(ta, 0.25, cmp_type=pl.CmpType.GT), tb, ta)\n"
    same(execute(body, {"a": a, "b": b}, (8, 64), "FP16"), np.where(a > np.float16(0.25), b, a))


# ----------------------------------------------------------------------------- layout changes


@pytest.mark.parametrize("dtype,src,dst", [
    ("FP32", (16, 64), (32, 32)), ("INT32", (8, 64), (4, 128)), ("FP16", (16, 32), (1, 512)),
    ("FP32", (4, 32), (128, 1)),
])
def test_reshape(dtype, src, dst):
    a = ints(src, dtype, seed=11)
    body = f"""
t = pl.load(a, [0, 0], [{src[0]}, {src[1]}])
u = pl.reshape(t, [{dst[0]}, {dst[1]}])
r = pl.add(u, pl.reshape(t, [{dst[0]}, {dst[1]}]))
"""
    same(execute(body, {"a": a}, dst, dtype), (a + a).reshape(dst))


def test_reshape_round_trip_between_ops():
    a = normal((16, 64), "FP32", 12)
    body = """
t = pl.load(a, [0, 0], [16, 64])
u = pl.mul(pl.reshape(t, [32, 32]), 2.0)
v = pl.reshape(u, [16, 64])
r = pl.sub(v, t)
"""
    same(execute(body, {"a": a}, (16, 64), "FP32"), a * 2 - a)


@pytest.mark.parametrize("dtype,shape,axes", [
    ("FP32", (16, 64), (0, 1)), ("FP16", (16, 32), (-1, -2)), ("INT32", (8, 32), (1, 0)),
])
def test_transpose(dtype, shape, axes):
    a = normal(shape, dtype, 13) if dtype != "INT32" else ints(shape, dtype, -1000, 1000, 13)
    body = f"""
t = pl.load(a, [0, 0], [{shape[0]}, {shape[1]}])
u = pl.transpose(t, {axes[0]}, {axes[1]})
r = pl.add(u, u)
"""
    same(execute(body, {"a": a}, shape[::-1], dtype), (a.T + a.T).astype(a.dtype))


# ----------------------------------------------------------------------------- reductions

RED = {"sum": np.sum, "max": np.max, "min": np.min}


@pytest.mark.parametrize("fn", sorted(RED))
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32", "BF16"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_col_reduction(fn, dtype, keepdim):
    a = ints((16, 64), dtype, -8, 9, seed=14)
    body = f"""
t = pl.load(a, [0, 0], [16, 64])
r = pl.{fn}(t, axis=0, keepdim={keepdim})
"""
    got = execute(body, {"a": a}, (1, 64), dtype)
    same(got, RED[fn](a, axis=0, keepdims=True).astype(a.dtype))


@pytest.mark.parametrize("fn", sorted(RED))
def test_axis_reduction_over_rows(fn):
    a = normal((16, 64), "FP32", 15)
    body = f"""
t = pl.load(a, [0, 0], [16, 64])
r = pl.{fn}(t, axis=-1, keepdim=True)
"""
    same(execute(body, {"a": a}, (16, 1), "FP32"), RED[fn](a, axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_row_min(dtype):
    a = normal((16, 64), dtype, 16) if dtype != "INT32" else ints((16, 64), dtype, -100, 100, 16)
    body = f"""
t = pl.load(a, [0, 0], [16, 64])
tmp = pl.create_tile([16, 64], dtype=pl.{dtype}, target_memory=pl.MemorySpace.Vec)
r = pl.row_min(t, tmp)
"""
    same(execute(body, {"a": a}, (16, 1), dtype), a.min(axis=1, keepdims=True))


# ----------------------------------------------------------------------------- expand / broadcast


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_row_expand(dtype):
    a = ints((16, 64), dtype, -50, 50, 17)
    body = "t = pl.load(a, [0, 0], [16, 64])\nr = pl.row_expand(t)\n"
    same(execute(body, {"a": a}, (16, 64), dtype), np.repeat(a[:, :1], 64, axis=1))


ROW_EXPAND = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


@pytest.mark.parametrize("op", sorted(ROW_EXPAND))
@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
def test_row_expand_binary(op, dtype):
    a = normal((16, 64), dtype, 18)
    v = (rng(19).uniform(0.5, 2.0, (16, 1)) * rng(20).choice([-1, 1], (16, 1))).astype(NP[dtype])
    body = f"""
t = pl.load(a, [0, 0], [16, 64])
rv = pl.load(v, [0, 0], [16, 1])
r = pl.row_expand_{op}(t, rv)
"""
    tol = 1e-6 if dtype == "FP32" else 1e-3
    same(execute(body, {"a": a, "v": v}, (16, 64), dtype), ROW_EXPAND[op](a, v).astype(a.dtype), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_row_expand_binary_int32(op):
    a, v = ints((8, 64), "INT32", -100, 100, 21), ints((8, 1), "INT32", -9, 10, 22)
    body = f"""
t = pl.load(a, [0, 0], [8, 64])
s = pl.row_sum(pl.mul(t, 0), pl.create_tile([8, 64], dtype=pl.INT32, target_memory=pl.MemorySpace.Vec))
rv = pl.load(v, [0, 0], [8, 1])
r = pl.row_expand_{op}(t, pl.add(rv, s))
"""
    same(execute(body, {"a": a, "v": v}, (8, 64), "INT32"), ROW_EXPAND[op](a, v).astype(np.int32))


COL_EXPAND = {"mul": np.multiply, "div": np.divide, "sub": np.subtract}


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_col_expand(dtype):
    a, c = ints((16, 64), dtype, seed=23), ints((1, 64), dtype, -100, 100, 24)
    body = """
t = pl.load(a, [0, 0], [16, 64])
cv = pl.load(c, [0, 0], [1, 64])
r = pl.col_expand(t, cv)
"""
    same(execute(body, {"a": a, "c": c}, (16, 64), dtype), np.broadcast_to(c, (16, 64)).copy())


@pytest.mark.parametrize("op", sorted(COL_EXPAND))
@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
def test_col_expand_binary(op, dtype):
    a = normal((16, 64), dtype, 25)
    c = (rng(26).uniform(0.5, 2.0, (1, 64)) * rng(27).choice([-1, 1], (1, 64))).astype(NP[dtype])
    body = f"""
t = pl.load(a, [0, 0], [16, 64])
cv = pl.load(c, [0, 0], [1, 64])
r = pl.col_expand_{op}(t, cv)
"""
    tol = 1e-6 if dtype == "FP32" else 1e-3
    same(execute(body, {"a": a, "c": c}, (16, 64), dtype), COL_EXPAND[op](a, c).astype(a.dtype), rtol=tol, atol=tol)


def lit(value, dtype: str) -> str:
    """A scalar literal in ``dtype``: a bare float literal is FP32 (spec §2.1) and would promote a
    narrower float tile to FP32, so narrow floats are written as ``pl.const``."""
    return f"pl.const({value}, pl.{dtype})" if dtype in ("FP16", "BF16") else repr(value)


@pytest.mark.parametrize("dtype,value", [("FP32", 2.5), ("FP16", -0.75), ("INT32", 7), ("INT16", -3)])
def test_expands_and_full(dtype, value):
    a = ints((16, 64), dtype, seed=28)
    body = f"""
t = pl.load(a, [0, 0], [16, 64])
e = pl.expands(t, {lit(value, dtype)})
f = pl.block.full([16, 64], pl.{dtype}, {value})
r = pl.add(pl.add(e, f), t)
"""
    v = NP[dtype].type(value)
    same(execute(body, {"a": a}, (16, 64), dtype), (a + v + v).astype(a.dtype))


PADS = {"zero": (0, 0), "max": (np.inf, "max"), "min": (-np.inf, "min")}


@pytest.mark.parametrize("pad", sorted(PADS))
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_fillpad(pad, dtype):
    a = ints((16, 64), dtype, 1, 9, seed=29)
    body = f"""
t = pl.load(a, [0, 0], [16, 64], valid_shapes=[10, 20])
r = pl.block.fillpad(t, pad="{pad}")
"""
    fv, iv = PADS[pad]
    fill = fv if dtype != "INT32" else (getattr(np.iinfo(np.int32), iv) if isinstance(iv, str) else iv)
    inside = (np.arange(16)[:, None] < 10) & (np.arange(64)[None, :] < 20)
    want = np.where(inside, a, np.array(fill).astype(a.dtype))
    got = execute(body, {"a": a}, (16, 64), dtype)
    np.testing.assert_array_equal(got, want)


def test_fillpad_min_then_row_max_ignores_the_tail():
    """The ragged-tail idiom: pad with -inf, then a row max over the whole tile sees only valid data."""
    a = normal((16, 64), "FP32", 30)
    a[:, 40:] = 100.0  # outside the valid region: must not win the max
    body = """
t = pl.load(a, [0, 0], [16, 64], valid_shapes=[16, 40])
p = pl.block.fillpad(t, pad="min")
r = pl.row_max(p, pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec))
"""
    same(execute(body, {"a": a}, (16, 1), "FP32"), a[:, :40].max(axis=1, keepdims=True))


# ----------------------------------------------------------------------------- element-wise arithmetic


@pytest.mark.parametrize("op,ref", [("minimum", np.minimum), ("maximum", np.maximum)])
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32", "INT16"])
def test_minimum_maximum(op, ref, dtype):
    a = normal((16, 64), dtype, 31) if dtype.startswith("FP") else ints((16, 64), dtype, -500, 500, 31)
    b = normal((16, 64), dtype, 32) if dtype.startswith("FP") else ints((16, 64), dtype, -500, 500, 32)
    same(execute(LOAD2.format(R=16, C=64) + f"r = pl.{op}(ta, tb)\n", {"a": a, "b": b}, (16, 64), dtype), ref(a, b))


def _divisors(shape, dtype, seed):
    mag = rng(seed).choice([1, 2, 3, 5] if dtype == "INT32" else [0.5, 1.5, 2.25, 3.0], shape)
    return (mag * rng(seed + 1).choice([-1, 1], shape)).astype(NP[dtype])


@pytest.mark.parametrize("dtype", ["FP32", "INT32"])
def test_rem(dtype):
    a = ints((16, 64), dtype, -40, 40, 33)
    if dtype == "FP32":
        a = (a / 4).astype(np.float32)
    b = _divisors((16, 64), dtype, 34)
    got = execute(LOAD2.format(R=16, C=64) + "r = pl.rem(ta, tb)\n", {"a": a, "b": b}, (16, 64), dtype)
    same(got, np.mod(a, b))  # floored: the sign of the divisor


@pytest.mark.parametrize("dtype,s", [("FP32", 1.5), ("FP32", -2.25), ("INT32", 3), ("INT32", -4)])
def test_rems(dtype, s):
    a = ints((16, 64), dtype, -40, 40, 35)
    if dtype == "FP32":
        a = (a / 4).astype(np.float32)
    got = execute(f"t = pl.load(a, [0, 0], [16, 64])\nr = pl.rems(t, {s})\n", {"a": a}, (16, 64), dtype)
    same(got, np.mod(a, NP[dtype].type(s)))


BITWISE = {"and_": np.bitwise_and, "or_": np.bitwise_or, "shl": np.left_shift, "shr": np.right_shift}
BITWISE_S = {"ands": np.bitwise_and, "ors": np.bitwise_or, "shls": np.left_shift, "shrs": np.right_shift}


@pytest.mark.parametrize("op", sorted(BITWISE) + ["xor"])
@pytest.mark.parametrize("dtype", ["INT32", "INT16", "UINT16"])
def test_bitwise(op, dtype):
    a = ints((16, 64), dtype, -3000 if dtype != "UINT16" else 0, 3000, 36)
    b = ints((16, 64), dtype, 0, 8, 37) if op in ("shl", "shr") else ints((16, 64), dtype, 0, 30000, 38)
    if op == "xor":
        body = LOAD2.format(R=16, C=64) + (
            f"tmp = pl.create_tile([16, 64], dtype=pl.{dtype}, target_memory=pl.MemorySpace.Vec)\n"
            "r = pl.xor(ta, tb, tmp)\n"
        )
        want = np.bitwise_xor(a, b)
    else:
        body = LOAD2.format(R=16, C=64) + f"r = pl.{op}(ta, tb)\n"
        want = BITWISE[op](a, b).astype(a.dtype)
    same(execute(body, {"a": a, "b": b}, (16, 64), dtype), want)


@pytest.mark.parametrize("op", sorted(BITWISE_S) + ["xors"])
@pytest.mark.parametrize("dtype", ["INT32", "INT16"])
def test_bitwise_scalar(op, dtype):
    a = ints((16, 64), dtype, -3000, 3000, 39)
    s = 3 if op in ("shls", "shrs") else 0x2B5
    if op == "xors":
        body = (f"t = pl.load(a, [0, 0], [16, 64])\n"
                f"tmp = pl.create_tile([16, 64], dtype=pl.{dtype}, target_memory=pl.MemorySpace.Vec)\n"
                f"r = pl.xors(t, {s}, tmp)\n")
        want = np.bitwise_xor(a, NP[dtype].type(s))
    else:
        body = f"t = pl.load(a, [0, 0], [16, 64])\nr = pl.{op}(t, {s})\n"
        want = BITWISE_S[op](a, NP[dtype].type(s)).astype(a.dtype)
    same(execute(body, {"a": a}, (16, 64), dtype), want)


@pytest.mark.parametrize("dtype", ["INT16", "UINT16"])
def test_not(dtype):
    a = ints((16, 64), dtype, 0 if dtype == "UINT16" else -30000, 30000, 40)
    same(execute("t = pl.load(a, [0, 0], [16, 64])\nr = pl.not_(t)\n", {"a": a}, (16, 64), dtype), np.invert(a))


@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
def test_lrelu_prelu(dtype):
    a, slope = normal((16, 64), dtype, 41), rng(42).uniform(0.05, 0.5, (16, 64)).astype(NP[dtype])
    tol = 1e-6 if dtype == "FP32" else 1e-3
    body = f"t = pl.load(a, [0, 0], [16, 64])\nr = pl.lrelu(t, {lit(0.125, dtype)})\n"
    same(execute(body, {"a": a}, (16, 64), dtype), np.where(a > 0, a, a * NP[dtype].type(0.125)), rtol=tol, atol=tol)
    body = f"""
t = pl.load(a, [0, 0], [16, 64])
sl = pl.load(s, [0, 0], [16, 64])
tmp = pl.create_tile([16, 64], dtype=pl.{dtype}, target_memory=pl.MemorySpace.Vec)
r = pl.prelu(t, sl, tmp)
"""
    same(execute(body, {"a": a, "s": slope}, (16, 64), dtype), np.where(a > 0, a, a * slope), rtol=tol, atol=tol)


TERNARY = {
    "addc": ("pl.addc(ta, tb, tc)", lambda a, b, c, s: a + b + c),
    "subc": ("pl.subc(ta, tb, tc)", lambda a, b, c, s: a - b - c),
    "addsc": ("pl.addsc(ta, {s}, tc)", lambda a, b, c, s: a + s + c),
    "subsc": ("pl.subsc(ta, {s}, tc)", lambda a, b, c, s: a - s - c),
}


@pytest.mark.parametrize("op", sorted(TERNARY))
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "INT32"])
def test_three_operand(op, dtype):
    a, b, c = (ints((16, 64), dtype, -100, 100, seed) for seed in (43, 44, 45))
    s = 7 if dtype == "INT32" else 0.5
    expr, ref = TERNARY[op]
    body = LOAD2.format(R=16, C=64) + "tc = pl.load(c, [0, 0], [16, 64])\nr = " + expr.format(s=lit(s, dtype)) + "\n"
    want = ref(a, b, c, NP[dtype].type(s)).astype(a.dtype)
    same(execute(body, {"a": a, "b": b, "c": c}, (16, 64), dtype), want)


@pytest.mark.parametrize("dtype", ["FP32", "FP16"])
def test_abs_log(dtype):
    a = normal((16, 64), dtype, 46)
    tol = 1e-6 if dtype == "FP32" else 1e-3
    body = "t = pl.load(a, [0, 0], [16, 64])\nr = pl.log(pl.abs(t))\n"
    same(execute(body, {"a": a}, (16, 64), dtype), np.log(np.abs(a).astype(np.float64)).astype(a.dtype),
         rtol=tol, atol=tol)
    same(execute("t = pl.load(a, [0, 0], [16, 64])\nr = pl.abs(t)\n", {"a": a}, (16, 64), dtype), np.abs(a))


# ----------------------------------------------------------------------------- cube ops

MAT = "target_memory=pl.MemorySpace.Mat"


def _cube_body(M, K, N, op, explicit_bias=False):
    load_ab = f"""
a_m = pl.load(a, [0, 0], [{M}, {K}], {MAT})
b_m = pl.load(b, [0, 0], [{K}, {N}], {MAT})
a_l = pl.move(a_m, target_memory=pl.MemorySpace.Left)
b_r = pl.move(b_m, target_memory=pl.MemorySpace.Right)
"""
    if op in ("matmul_bias", "gemv_bias"):
        bias = f"bias_m = pl.load(bias, [0, 0], [1, {N}], {MAT})\n"
        if explicit_bias:
            bias += "bias_m = pl.move(bias_m, target_memory=pl.MemorySpace.Bias)\n"
        return load_ab + bias + f"r = pl.{op}(a_l, b_r, bias_m)\n"
    if op in ("matmul_acc", "gemv_acc"):
        base = op.split("_")[0]
        return load_ab + f"""
acc = pl.{base}(a_l, b_r)
a2_m = pl.load(a2, [0, 0], [{M}, {K}], {MAT})
a2_l = pl.move(a2_m, target_memory=pl.MemorySpace.Left)
r = pl.{op}(acc, a2_l, b_r)
"""
    return load_ab + f"r = pl.{op}(a_l, b_r)\n"


@pytest.mark.parametrize("op", ["matmul_bias", "gemv", "gemv_acc", "gemv_bias"])
@pytest.mark.parametrize("dtype", ["FP16", "FP32"])
def test_cube_ops(op, dtype):
    M = 1 if op.startswith("gemv") else 32
    K, N = 64, 32
    a, b, a2 = normal((M, K), dtype, 47), normal((K, N), dtype, 48), normal((M, K), dtype, 49)
    bias = normal((1, N), "FP32", 50)
    inputs = {"a": a, "b": b}
    f32 = [x.astype(np.float32) for x in (a, b, a2)]
    want = f32[0] @ f32[1]
    if op.endswith("_bias"):
        inputs["bias"] = bias
        want = want + bias
    if op.endswith("_acc"):
        inputs["a2"] = a2
        want = want + f32[2] @ f32[1]
    got = execute(_cube_body(M, K, N, op), inputs, (M, N), "FP32")
    same(got, want, rtol=1e-4, atol=1e-4)


def test_matmul_bias_with_explicit_bias_move():
    a, b, bias = normal((16, 32), "FP16", 51), normal((32, 64), "FP16", 52), normal((1, 64), "FP32", 53)
    got = execute(_cube_body(16, 32, 64, "matmul_bias", explicit_bias=True), {"a": a, "b": b, "bias": bias},
                  (16, 64), "FP32")
    same(got, a.astype(np.float32) @ b.astype(np.float32) + bias, rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- scalars and sync


def test_get_block_idx_is_zero_on_one_core():
    a = normal((32, 32), "FP32", 54)
    body = """
idx = pl.block.get_block_idx()
t = pl.load(a, [idx * 16, 0], [16, 32])
r = pl.adds(t, pl.cast(idx, pl.FP32))
"""
    same(execute(body, {"a": a}, (16, 32), "FP32"), a[:16])


HAND_SYNCED = """
ta = pl.load(a, [0, 0], [16, 64])
tb = pl.load(b, [0, 0], [16, 64])
{wait_loads}
t = pl.add(ta, tb)
pl.system.bar_v()
u = pl.mul(t, ta)
pl.system.bar_all()
r = pl.sub(u, tb)
pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=1)
"""
WAIT_LOADS = """pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)"""


def _hand_synced(wait_loads: str):
    a, b = normal((16, 64), "FP32", 55), normal((16, 64), "FP32", 56)
    prog = dsl_program(HAND_SYNCED.format(wait_loads=wait_loads), {"a": ((16, 64), "FP32"), "b": ((16, 64), "FP32")},
                       ((16, 64), "FP32"))
    return run(prog, a, b, strategy="PTOAS"), (a + b) * a - b


def test_hand_written_sync_under_ptoas():
    r, want = _hand_synced(WAIT_LOADS)
    assert not errors(r), errors(r)
    same(r.outputs[0], want, rtol=1e-6, atol=1e-6)


def test_hand_written_sync_is_run_as_written():
    """Without the MTE2 -> V wait the hand-synchronised kernel races: the written sync is what runs,
    and a race is a fault (pyptoemu.KernelFault carrying the result), as on the command line."""
    with pytest.raises(pyptoemu.KernelFault) as info:
        _hand_synced("")
    assert info.value.kind == "findings" and info.value.result.status == "findings"
    assert any(f.kind == "race" and f.severity == "error" for f in info.value.findings)
    assert info.value.result.launches == 1 and info.value.result.cycles > 0


def test_hand_written_sync_in_a_cube_kernel():
    a, b, a2 = normal((16, 32), "FP16", 57), normal((32, 16), "FP16", 58), normal((16, 32), "FP16", 59)
    body = f"""
a_m = pl.load(a, [0, 0], [16, 32], {MAT})
b_m = pl.load(b, [0, 0], [32, 16], {MAT})
a2_m = pl.load(a2, [0, 0], [16, 32], {MAT})
pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1, event_id=0)
a_l = pl.move(a_m, target_memory=pl.MemorySpace.Left)
b_r = pl.move(b_m, target_memory=pl.MemorySpace.Right)
a2_l = pl.move(a2_m, target_memory=pl.MemorySpace.Left)
pl.system.sync_src(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
pl.system.sync_dst(set_pipe=pl.PipeType.MTE1, wait_pipe=pl.PipeType.M, event_id=0)
acc = pl.matmul(a_l, b_r)
pl.system.bar_m()
r = pl.matmul_acc(acc, a2_l, b_r)
pl.system.sync_src(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
pl.system.sync_dst(set_pipe=pl.PipeType.M, wait_pipe=pl.PipeType.FIX, event_id=0)
"""
    got = execute(body, {"a": a, "b": b, "a2": a2}, (16, 16), "FP32", strategy="PTOAS")
    f = [x.astype(np.float32) for x in (a, b, a2)]
    same(got, f[0] @ f[1] + f[2] @ f[1], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("strategy", ["Default", "PTOAS"])
def test_scratch_ops_in_a_loop(strategy):
    from conftest import program_file

    a = (rng(60).integers(-40, 40, (64, 32)) / 4).astype(np.float32)
    b = _divisors((64, 32), "FP32", 61)
    r = run(program_file("scratch_loop").ScratchLoop, a, b, strategy=strategy)
    assert not errors(r), errors(r)
    big = np.maximum(a, b)
    same(r.outputs[0], np.mod(np.where(big >= 0, big, np.float32(-1.0)), b).T)
