"""Shared strategies and reference helpers for the ISA tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ptoisa.dtypes import is_float, is_unsigned, np_dtype
from pyptoemu.isa.arg import Arg
from pyptoemu.isa.runnable import load_isa
from pyptoemu.isa.semantics import SEMANTICS, SemanticsFn
from pyptoemu.testing.strategies import tiles

F64 = np.float64
TOL = {"f32": 1e-5, "f16": 1e-3, "bf16": 1.6e-2, "f64": 1e-12}

ISA = load_isa()


def sem(mnemonic: str) -> SemanticsFn:
    """The semantics function the spec of ``mnemonic`` names."""
    return SEMANTICS[ISA[mnemonic].semantics]


def legal(mnemonic: str, wanted: tuple[str, ...]) -> list[str]:
    """The dtypes of ``wanted`` that the spec allows for ``mnemonic`` (spec order)."""
    allowed = ISA[mnemonic].dtypes
    out = [d for d in allowed if d in wanted]
    assert out, f"{mnemonic}: none of {wanted} in {allowed}"
    return out


FLOATS = ("f32", "f16", "bf16")
INTS = ("i8", "i16", "i32", "ui8", "ui16", "ui32")


def shapes(dtype: str, max_rows: int = 6, max_blocks: int = 3) -> st.SearchStrategy[tuple[int, int, int, int]]:
    """(rows, cols, vrow, vcol) of an ND tile: cols * esize a multiple of the UB's 32-byte unit, valid
    region inside (the strategy users get from pyptoemu.testing.strategies)."""
    return tiles(dtype, max_rows=max_rows, max_units=max_blocks)


def values(rng: np.random.Generator, dtype: str, shape: tuple[int, ...], lo: float = -10, hi: float = 10,
           nonzero: bool = False) -> np.ndarray:
    """Random values of ``dtype`` (floats uniform in [lo, hi]; ints over [lo, hi] clipped to range)."""
    dt = np_dtype(dtype)
    if is_float(dtype):
        x = rng.uniform(lo, hi, size=shape)
        if nonzero:
            x = np.where(np.abs(x) < 0.5, np.copysign(0.5, x) + x, x)
        return x.astype(dt)
    info = np.iinfo(dt)
    a, b = max(int(lo), int(info.min)), min(int(hi), int(info.max))
    x = rng.integers(a, b, size=shape, endpoint=True)
    if nonzero:
        x = np.where(x == 0, 1, x)
    return x.astype(dt)


def garbage(arr: np.ndarray, vrow: int, vcol: int, rng: np.random.Generator) -> np.ndarray:
    """``arr`` with every cell outside [:vrow, :vcol] overwritten by junk (NaN / extreme ints)."""
    out = arr.copy()
    mask = np.ones(arr.shape, bool)
    mask[:vrow, :vcol] = False
    if arr.dtype.kind == "f" or not np.issubdtype(arr.dtype, np.integer):
        try:
            out[mask] = np.array(np.nan).astype(arr.dtype)
        except (ValueError, OverflowError):
            out[mask] = 0
    else:
        out[mask] = np.iinfo(arr.dtype).max
    return out


def tile(rng: np.random.Generator, dtype: str, rows: int, cols: int, vrow: int, vcol: int, **kw) -> Arg:
    lo, hi, nonzero = kw.pop("lo", -10), kw.pop("hi", 10), kw.pop("nonzero", False)
    data = garbage(values(rng, dtype, (rows, cols), lo, hi, nonzero), vrow, vcol, rng)
    return Arg.tile(data, dtype, vrow, vcol, **kw)


def out_tile(dtype: str, rows: int, cols: int, vrow: int, vcol: int, pad: int = 0, loc: str = "vec") -> Arg:
    return Arg.tile(np.zeros((rows, cols)), dtype, vrow, vcol, pad=pad, loc=loc)


def wrap(x: np.ndarray, dtype: str) -> np.ndarray:
    """Integers reduced modulo 2**bits into ``dtype`` (two's complement)."""
    return np.asarray(x, dtype=np.int64).astype(np_dtype(dtype))


def assert_close(actual: np.ndarray, expected_f64: np.ndarray, dtype: str, scale: np.ndarray | float = 1.0) -> None:
    """Compare a result in ``dtype`` with a float64/int64 reference.

    Floats: |actual - expected| <= tol * (|expected| + scale); ints: exact after wrapping.
    """
    assert actual.dtype == np_dtype(dtype), (actual.dtype, dtype)
    if is_float(dtype):
        exp = np.asarray(expected_f64, F64)
        act = actual.astype(F64)
        tol = TOL[dtype]
        both_nan = np.isnan(act) & np.isnan(exp)
        same_inf = np.isinf(exp) & (act == exp)
        ok = both_nan | same_inf | (np.abs(act - exp) <= tol * (np.abs(exp) + scale))
        assert ok.all(), f"{dtype}: max err {np.nanmax(np.abs(act - exp))}\nactual={act}\nexpected={exp}"
    else:
        exp = wrap(expected_f64, dtype) if not is_unsigned(dtype) else np.asarray(expected_f64).astype(np.int64).astype(np_dtype(dtype))
        np.testing.assert_array_equal(actual, exp)
