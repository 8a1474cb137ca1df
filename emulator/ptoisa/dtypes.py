"""PTO element types as NumPy dtypes.

Every PTO scalar/element type name (``f32``, ``bf16``, ``ui8``, ``f8E4M3FN`` ...) maps to one NumPy
dtype. ``bf16`` and the fp8 family come from ``ml_dtypes``, so arrays of them do arithmetic (through
f32) and convert with round-to-nearest-even. ``index`` is a 64-bit signed integer; ``i1`` is bool.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

_NP: dict[str, np.dtype] = {
    "f64": np.dtype(np.float64),
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f8E4M3": np.dtype(ml_dtypes.float8_e4m3),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "si8": np.dtype(np.int8),
    "si16": np.dtype(np.int16),
    "si32": np.dtype(np.int32),
    "si64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
    "index": np.dtype(np.int64),
}

_FLOAT_KINDS = frozenset(("f64", "f32", "f16", "bf16")) | frozenset(n for n in _NP if n.startswith("f8"))

DTYPE_NAMES: tuple[str, ...] = tuple(_NP)


def _check(name: str) -> str:
    if name not in _NP:
        known = ", ".join(DTYPE_NAMES)
        raise ValueError(f"unknown PTO dtype '{name}' (known: {known})")
    return name


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype that holds elements of PTO type ``name``."""
    return _NP[_check(name)]


def is_float(name: str) -> bool:
    return _check(name) in _FLOAT_KINDS


def is_int(name: str) -> bool:
    """Integer types, including ``index`` and ``i1``."""
    return not is_float(name)


def is_unsigned(name: str) -> bool:
    return _check(name).startswith("u") or name == "i1"


def itemsize(name: str) -> int:
    return int(np_dtype(name).itemsize)


def is_known(name: str) -> bool:
    return name in _NP


def dtype_info(name: str) -> np.finfo | np.iinfo | ml_dtypes.finfo:
    """``finfo``/``iinfo`` of the type (ml_dtypes' finfo for bf16 and fp8)."""
    dt = np_dtype(name)
    if is_float(name):
        return ml_dtypes.finfo(dt)
    return np.iinfo(dt)


def pad_value(dtype_name: str, pad_code: int) -> np.generic:
    """The value PTO writes for pad code ``pad_code`` (§5.5): 0 null -> 0, 1 zero -> 0,
    2 max -> +inf / type max, 3 min -> -inf / type min (0 for unsigned).

    Float types without infinities (``f8E4M3FN``...) use their largest finite magnitude.
    """
    dt = np_dtype(dtype_name)
    if pad_code in (0, 1):
        return dt.type(0)
    if pad_code not in (2, 3):
        raise ValueError(f"pad code must be 0..3, got {pad_code}")
    if dtype_name == "i1":
        return dt.type(pad_code == 2)
    if is_float(dtype_name):
        info = ml_dtypes.finfo(dt)
        has_inf = bool(np.isinf(np.array(np.inf).astype(dt)))
        big = np.array(np.inf if has_inf else float(info.max)).astype(dt)
        if pad_code == 2:
            return big[()]
        return (-big)[()] if float(info.min) < 0 else dt.type(info.min)
    info_i = np.iinfo(dt)
    return dt.type(info_i.max if pad_code == 2 else info_i.min)
