"""NumPy references for the example kernels in this directory.

For every kernel file name (the key of each table):

* ``INPUTS[name]``  - GM input arguments: ``{"argN": (shape, numpy dtype name)}``. The kernel's
  pointer arguments are bound to C-contiguous arrays of these shapes (the kernels address them as
  dense row-major matrices).
* ``OUTPUTS[name]`` - GM output arguments, same format; allocate them (e.g. zero-filled) before the
  run and compare them afterwards.
* ``ARGS[name]``    - scalar (non-pointer) arguments: ``{"argN": value}`` (``i1`` -> bool,
  ``index`` -> int). Missing entry = no scalar arguments.
* ``REFERENCES[name]`` - ``f(a) -> {"argN": expected array}``; ``a`` maps every input name AND
  every scalar argument name to its value.
* ``TOLERANCES[name]`` - ``(rtol, atol)`` for ``numpy.allclose(actual, expected, rtol, atol)``.
* ``ENTRY[name]``   - the function to run (every file has exactly one function, marked
  ``pto.entry`` in the sync-annotated kernels; the name is given for convenience).
* ``SYNC[name]``    - ``"explicit"`` (hand-synchronised level-3 kernel: the emulator must honour
  the flags and report no hazard) or ``"auto"`` (no sync op; level 2, needs automatic sync
  insertion or program-order execution).

``make_inputs(name, seed)`` builds a deterministic input set. All references compute in float32
(the f16 matmul converts its operands to float32 first, as the cube accumulates in f32).
"""

from __future__ import annotations

import numpy as np


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def _matmul_splitk(a: dict) -> dict:
    c = a["arg0"].astype(np.float32) @ a["arg1"].astype(np.float32)
    if a["arg4"]:
        c = c + a["arg2"].astype(np.float32)  # bias is 1x32, broadcast over rows
    return {"arg3": c.astype(np.float32)}


def _block_sum(a: dict) -> dict:
    x = a["arg0"].astype(np.float32)
    acc = np.zeros((16, 64), np.float32)
    for b in range(8):  # same order as the kernel: acc = ((0 + x0) + x1) + ...
        acc = acc + x[16 * b:16 * (b + 1), :]
    return {"arg1": acc}


def _scale_shift(a: dict) -> dict:
    x = a["arg0"].astype(np.float32)
    return {"arg1": (x * np.float32(2.0) + np.float32(1.0)).astype(np.float32)}


INPUTS: dict[str, dict[str, tuple[tuple[int, ...], str]]] = {
    "vadd_32x32.pto": {"arg0": ((32, 32), "float32"), "arg1": ((32, 32), "float32")},
    "vadd_nosync.pto": {"arg0": ((32, 32), "float32"), "arg1": ((32, 32), "float32")},
    "softmax_rows_64x128.pto": {"arg0": ((64, 128), "float32")},
    "softmax_nosync.pto": {"arg0": ((64, 64), "float32")},
    "matmul_splitk.pto": {
        "arg0": ((32, 128), "float16"),
        "arg1": ((128, 32), "float16"),
        "arg2": ((1, 32), "float32"),
    },
    "double_buffer_1024.pto": {"arg0": ((1024, 1024), "float32")},
    "single_buffer_1024.pto": {"arg0": ((1024, 1024), "float32")},
    "iter_args_accumulate.pto": {"arg0": ((128, 64), "float32")},
}

OUTPUTS: dict[str, dict[str, tuple[tuple[int, ...], str]]] = {
    "vadd_32x32.pto": {"arg2": ((32, 32), "float32")},
    "vadd_nosync.pto": {"arg2": ((32, 32), "float32")},
    "softmax_rows_64x128.pto": {"arg1": ((64, 128), "float32")},
    "softmax_nosync.pto": {"arg1": ((64, 64), "float32")},
    "matmul_splitk.pto": {"arg3": ((32, 32), "float32")},
    "double_buffer_1024.pto": {"arg1": ((1024, 1024), "float32")},
    "single_buffer_1024.pto": {"arg1": ((1024, 1024), "float32")},
    "iter_args_accumulate.pto": {"arg1": ((16, 64), "float32")},
}

ARGS: dict[str, dict[str, object]] = {
    "matmul_splitk.pto": {"arg4": True},  # also valid with False (tmatmul without bias)
    "softmax_nosync.pto": {"arg2": 64},   # N rows; must be a multiple of 16 and match INPUTS
}

REFERENCES = {
    "vadd_32x32.pto": lambda a: {"arg2": (a["arg0"] + a["arg1"]).astype(np.float32)},
    "vadd_nosync.pto": lambda a: {"arg2": (a["arg0"] + a["arg1"]).astype(np.float32)},
    "softmax_rows_64x128.pto": lambda a: {"arg1": _softmax_rows(a["arg0"])},
    "softmax_nosync.pto": lambda a: {"arg1": _softmax_rows(a["arg0"][: a["arg2"]])},
    "matmul_splitk.pto": _matmul_splitk,
    "double_buffer_1024.pto": _scale_shift,
    "single_buffer_1024.pto": _scale_shift,
    "iter_args_accumulate.pto": _block_sum,
}

TOLERANCES: dict[str, tuple[float, float]] = {
    "vadd_32x32.pto": (1e-6, 1e-6),
    "vadd_nosync.pto": (1e-6, 1e-6),
    "softmax_rows_64x128.pto": (1e-5, 1e-6),
    "softmax_nosync.pto": (1e-5, 1e-6),
    "matmul_splitk.pto": (1e-3, 1e-3),
    "double_buffer_1024.pto": (1e-6, 1e-6),
    "single_buffer_1024.pto": (1e-6, 1e-6),
    "iter_args_accumulate.pto": (1e-5, 1e-5),
}

ENTRY: dict[str, str] = {
    "vadd_32x32.pto": "vadd",
    "vadd_nosync.pto": "vadd",
    "softmax_rows_64x128.pto": "softmax_rows",
    "softmax_nosync.pto": "row_softmax",
    "matmul_splitk.pto": "matmul_splitk",
    "double_buffer_1024.pto": "scale_shift_db",
    "single_buffer_1024.pto": "scale_shift_sb",
    "iter_args_accumulate.pto": "block_sum",
}

SYNC: dict[str, str] = {
    "vadd_32x32.pto": "explicit",
    "vadd_nosync.pto": "auto",
    "softmax_rows_64x128.pto": "explicit",
    "softmax_nosync.pto": "auto",
    "matmul_splitk.pto": "explicit",
    "double_buffer_1024.pto": "explicit",
    "single_buffer_1024.pto": "explicit",
    "iter_args_accumulate.pto": "explicit",
}


def make_input(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Deterministic test data: uniform in [-1, 1), rounded to ``dtype``."""
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def make_inputs(name: str, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: make_input(shape, dt, rng) for k, (shape, dt) in INPUTS[name].items()}


def make_outputs(name: str) -> dict[str, np.ndarray]:
    return {k: np.zeros(shape, dt) for k, (shape, dt) in OUTPUTS[name].items()}


def expected(name: str, inputs: dict[str, np.ndarray], args: dict[str, object] | None = None) -> dict:
    """Expected outputs for ``inputs`` and scalar ``args`` (default ``ARGS[name]``)."""
    a = dict(inputs)
    a.update(ARGS.get(name, {}) if args is None else args)
    return REFERENCES[name](a)
