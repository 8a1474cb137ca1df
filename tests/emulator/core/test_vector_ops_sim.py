"""Every same-shape vector instruction, run through the whole simulator (tload -> op -> tstore with
random shapes, dtypes and valid regions), compared with an independent NumPy expression.

The table below must name every implemented instruction of the elementwise, tile-scalar and unary
families: a new instruction in those YAML files fails `test_every_vector_op_is_covered` until it has
a reference here.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyptoemu
from ptoisa.dtypes import np_dtype
from ptoisa.machine import load_machine
from pyptoemu.isa.runnable import load_isa
from tests.emulator.core.kernels import pview, vec

ISA = load_isa(machine=load_machine("a2a3"))
F = {"f32", "f16", "bf16"}
I = {"i32", "i16", "i8"}


def _floor_rem(a, b):
    return a - np.floor(a / b) * b


# name -> (number of tile inputs, has scalar, reference(ins..., s), dtypes, input domain)
REF = {
    "tadd": (2, False, lambda a, b: a + b, F | I, "any"),
    "tsub": (2, False, lambda a, b: a - b, F | I, "any"),
    "tmul": (2, False, lambda a, b: a * b, F | I, "any"),
    "tdiv": (2, False, lambda a, b: a / b, F, "nonzero"),
    "tmax": (2, False, np.maximum, F | I, "any"),
    "tmin": (2, False, np.minimum, F | I, "any"),
    "tand": (2, False, np.bitwise_and, I, "any"),
    "tor": (2, False, np.bitwise_or, I, "any"),
    "txor": (2, False, np.bitwise_xor, I, "any"),
    "tshl": (2, False, lambda a, b: np.left_shift(a, b), I, "shift"),
    "tshr": (2, False, lambda a, b: np.right_shift(a, b), I, "shift"),
    "tfmod": (2, False, np.fmod, {"f32", "f16"}, "nonzero"),
    "trem": (2, False, _floor_rem, {"f32"}, "nonzero"),
    "tadds": (1, True, lambda a, s: a + s, F | I, "any"),
    "tsubs": (1, True, lambda a, s: a - s, F | I, "any"),
    "tmuls": (1, True, lambda a, s: a * s, F | I, "any"),
    "tdivs": (1, True, lambda a, s: a / s, F, "nonzero"),
    "tmaxs": (1, True, np.maximum, F | I, "any"),
    "tmins": (1, True, np.minimum, F | I, "any"),
    "tands": (1, True, np.bitwise_and, I, "any"),
    "tors": (1, True, np.bitwise_or, I, "any"),
    "txors": (1, True, np.bitwise_xor, I, "any"),
    "tshls": (1, True, np.left_shift, I, "shift"),
    "tshrs": (1, True, np.right_shift, I, "shift"),
    "tfmods": (1, True, np.fmod, {"f32", "f16"}, "nonzero"),
    "trems": (1, True, _floor_rem, {"f32"}, "nonzero"),
    "tlrelu": (1, True, lambda a, s: np.where(a > 0, a, a * s), {"f32", "f16"}, "any"),
    "tabs": (1, False, np.abs, {"f32", "f16"}, "any"),
    "tneg": (1, False, np.negative, F | {"i32", "i16"}, "any"),
    "texp": (1, False, np.exp, {"f32", "f16"}, "any"),
    "tlog": (1, False, np.log, {"f32", "f16"}, "positive"),
    "tsqrt": (1, False, np.sqrt, {"f32", "f16"}, "positive"),
    "trsqrt": (1, False, lambda a: 1 / np.sqrt(a), {"f32", "f16"}, "positive"),
    "trecip": (1, False, lambda a: 1 / a, {"f32", "f16"}, "nonzero"),
    "trelu": (1, False, lambda a: np.maximum(a, 0), {"f32", "f16", "i32"}, "any"),
    "tnot": (1, False, np.invert, {"i16", "i32"}, "any"),
    "taddc": (3, False, lambda a, b, c: a + b + c, F | I, "any"),
    "tsubc": (3, False, lambda a, b, c: a - b + c, F | I, "any"),
    "taddsc": (2, True, lambda a, b, s: a + s + b, F | {"i32", "i16"}, "any"),
    "tsubsc": (2, True, lambda a, b, s: a - s + b, F | {"i32", "i16"}, "any"),
}
# Covered by their own simulator tests (other shapes, or reading dst): not same-shape ops.
ELSEWHERE = {"tprelu", "tpartadd", "tpartmax", "tpartmin", "tpartmul", "texpands", "taxpy"}
TOL = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}


def test_every_vector_op_is_covered():
    fams = ISA.families()
    names = {s.mnemonic for f in ("elementwise", "tile_scalar", "unary") for s in fams[f] if s.implemented}
    assert names - ELSEWHERE <= set(REF), sorted(names - ELSEWHERE - set(REF))


def _data(rng, shape, dtype: str, domain: str) -> np.ndarray:
    npd = np_dtype(dtype)
    if dtype in I:
        if domain == "shift":
            return rng.integers(0, 5, shape).astype(npd)
        lo = 1 if domain in ("nonzero", "positive") else -20
        v = rng.integers(lo, 20, shape)
        if domain == "nonzero":
            v = v * rng.choice([-1, 1], shape)
        return v.astype(npd)
    v = rng.standard_normal(shape).astype(np.float32)
    if domain == "positive":
        v = np.abs(v) + 0.25
    elif domain == "nonzero":
        v = np.where(np.abs(v) < 0.25, 0.5, v)
    return v.astype(npd)


def _scalar_literal(v, dtype: str) -> str:
    return repr(float(v)) if dtype in F else str(int(v))


def build_kernel(op: str, n_tiles: int, scalar, dtype: str, rows: int, cols: int, vr: int, vc: int,
                 tmp: bool) -> str:
    t = vec(rows, cols, dtype, vr, vc)
    p = pview(vr, vc, dtype)
    n_args = n_tiles + 1
    lines = ["module {", "  func.func @k(" + ", ".join(f"%arg{i}: !pto.ptr<{dtype}>" for i in range(n_args))
             + ") {",
             "    %c0 = arith.constant 0 : index", "    %c1 = arith.constant 1 : index",
             f"    %cr = arith.constant {rows} : index", f"    %cc = arith.constant {cols} : index",
             f"    %cvr = arith.constant {vr} : index", f"    %cvc = arith.constant {vc} : index"]
    if scalar is not None:
        lines.append(f"    %s = arith.constant {_scalar_literal(scalar, dtype)} : {dtype}")
    for i in range(n_args):
        lines.append(f"    %v{i} = pto.make_tensor_view %arg{i}, shape = [%cr, %cc], strides = [%cc, %c1] "
                     f": !pto.tensor_view<?x?x{dtype}>")
        lines.append(f"    %p{i} = pto.partition_view %v{i}, offsets = [%c0, %c0], sizes = [%cvr, %cvc] "
                     f": !pto.tensor_view<?x?x{dtype}> -> {p}")
        lines.append(f"    %t{i} = pto.alloc_tile : {t}")
    if tmp:
        lines.append(f"    %tmp = pto.alloc_tile : {t}")
    for i in range(n_tiles):
        lines.append(f"    pto.tload ins(%p{i} : {p}) outs(%t{i} : {t})")
    lines.append("    pto.barrier <PIPE_ALL>")
    operands = [f"%t{i}" for i in range(n_tiles)]
    types = [t] * n_tiles
    if scalar is not None:
        operands.insert(1, "%s")  # `ins(%t, %s : ...)`, `taddsc ins(%a, %s, %b : ...)`
        types.insert(1, dtype)
    if tmp:
        operands.append("%tmp")
        types.append(t)
    out = f"%t{n_tiles}"
    lines.append(f"    pto.{op} ins({', '.join(operands)} : {', '.join(types)}) outs({out} : {t})")
    lines.append("    pto.barrier <PIPE_ALL>")
    lines.append(f"    pto.tstore ins({out} : {t}) outs(%p{n_tiles} : {p})")
    lines += ["    return", "  }", "}"]
    return "\n".join(lines) + "\n"


ESIZE = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i16": 2, "i8": 1}


@pytest.mark.parametrize("op", sorted(REF))
@settings(derandomize=True, deadline=None, max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_vector_op_through_the_simulator(op, data):
    n_tiles, has_scalar, ref, dtypes, domain = REF[op]
    spec = ISA.get(op)
    legal = sorted(dtypes & set(spec.dtypes)) if spec.dtypes else sorted(dtypes)
    assert legal, f"{op}: no legal dtype among {sorted(dtypes)}"
    dtype = data.draw(st.sampled_from(legal), label="dtype")
    step = 32 // ESIZE[dtype]  # ND tiles: cols * sizeof multiple of 32 bytes
    rows = data.draw(st.integers(1, 16), label="rows")
    cols = step * data.draw(st.integers(1, 4), label="col blocks")
    vr = data.draw(st.integers(1, rows), label="v_row")
    vc = data.draw(st.integers(1, cols), label="v_col")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    ins = {f"arg{i}": _data(rng, (rows, cols), dtype, domain) for i in range(n_tiles)}
    ins[f"arg{n_tiles}"] = np.zeros((rows, cols), np_dtype(dtype))
    scalar = _data(rng, (1,), dtype, domain)[0] if has_scalar else None
    tmp = any(o.name == "tmp" and not o.optional for o in spec.ins)
    text = build_kernel(op, n_tiles, scalar, dtype, rows, cols, vr, vc, tmp)
    res = pyptoemu.run(text, inputs=ins)
    got = res.outputs[f"arg{n_tiles}"]
    srcs = [ins[f"arg{i}"][:vr, :vc] for i in range(n_tiles)]
    with np.errstate(all="ignore"):
        if dtype in F:
            f32 = [s.astype(np.float32) for s in srcs]
            extra = [np.float32(scalar)] if has_scalar else []
            want = np.asarray(ref(*f32, *extra), np.float32).astype(np_dtype(dtype))
        else:
            extra = [srcs[0].dtype.type(scalar)] if has_scalar else []
            want = np.asarray(ref(*srcs, *extra)).astype(srcs[0].dtype)
    expect = ins[f"arg{n_tiles}"].copy()
    expect[:vr, :vc] = want
    if dtype in F:
        np.testing.assert_allclose(got.astype(np.float32), expect.astype(np.float32), rtol=TOL[dtype],
                                   atol=TOL[dtype])
    else:
        np.testing.assert_array_equal(got, expect)
    assert got.dtype == (ml_dtypes.bfloat16 if dtype == "bf16" else np_dtype(dtype))
