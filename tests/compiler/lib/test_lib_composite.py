"""pypto.lib composites on the emulator against NumPy: softmax, log_softmax, rms_norm, layer_norm
(one tile loop over row blocks; a two-level loop when a row is wider than a tile) and swiglu."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lib_programs import close, data, program

from pypto import DataType
from pypto.lib import ops as L
from pypto.runtime import run

F32, F16, BF16 = DataType.FP32, DataType.FP16, DataType.BF16


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def rms_norm(x, w, eps=1e-6):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * w + b


def swiglu(g, u):
    return g / (1 + np.exp(-g)) * u


def _check(name, shape, dtype, seed=0):
    cols = shape[-1]
    x = data(shape, dtype, seed)
    args = [x]
    if name in ("rms_norm", "layer_norm"):
        args.append(data((cols,), dtype, seed + 1, 0.5, 1.5))
    if name == "layer_norm":
        args.append(data((cols,), dtype, seed + 2))
    if name == "swiglu":
        args.append(data(shape, dtype, seed + 3))
    params = [(f"a{i}", a.shape, dtype) for i, a in enumerate(args)]
    got = run(program(lambda *v: getattr(L, name)(*v), params), *args).outputs[0]
    want = globals()[name](*[a.astype(np.float64) for a in args])
    atol = {F32: 1e-5, F16: 2e-3, BF16: 2e-2}[dtype]
    close(got, want, dtype, atol=atol * (4 if name in ("layer_norm", "rms_norm", "log_softmax") else 1))


@settings(max_examples=12)
@given(name=st.sampled_from(["softmax", "log_softmax", "rms_norm", "layer_norm", "swiglu"]),
       rows=st.sampled_from([1, 3, 8, 37]), cols=st.sampled_from([1, 7, 64, 130]),
       dtype=st.sampled_from([F32, F16, BF16]))
def test_composite_matches_numpy(name, rows, cols, dtype):
    _check(name, (rows, cols), dtype, rows + cols)


@pytest.mark.parametrize("name,shape", [
    ("softmax", (37, 6000)),     # rows wider than a tile: the two-level loop
    ("softmax", (3, 100000)),
    ("log_softmax", (5, 9000)),
    ("rms_norm", (4, 10000)),
    ("layer_norm", (300, 1030)),
])
def test_composite_larger_than_a_buffer(name, shape):
    _check(name, shape, F32)


def test_softmax_of_a_3d_tensor_over_its_last_axis():
    x = data((2, 5, 300), F32, 9)
    got = run(program(lambda a: L.softmax(a), [("x", x.shape, F32)]), x).outputs[0]
    close(got, softmax(x.astype(np.float64)), F32)


@settings(max_examples=8, deadline=None)
@given(name=st.sampled_from(["softmax", "log_softmax", "rms_norm", "layer_norm", "swiglu"]),
       cols=st.sampled_from([1, 7, 64, 130, 6000]), dtype=st.sampled_from([F32, F16, BF16]))
def test_composite_of_a_vector_matches_numpy(name, cols, dtype):
    """A 1-D tensor is one row (torch.softmax(x, -1) of a vector); was refused ('tiled over [..., rows,
    features] tensors'). 6000 columns: the two-level loop over one row."""
    _check(name, (cols,), dtype, cols)
