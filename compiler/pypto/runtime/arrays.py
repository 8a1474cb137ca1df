"""NumPy views of call arguments: NumPy arrays as they are, torch CPU tensors without a copy.

torch stays optional: it is imported only when the argument is not a NumPy array and torch is
installed. bf16 tensors cannot call ``.numpy()``; they are viewed as int16 and reinterpreted as
``ml_dtypes.bfloat16`` (same memory). A non-contiguous argument is worked on as a contiguous copy
that :func:`write_back` copies into the caller's object afterwards.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def as_numpy(value: Any) -> tuple[np.ndarray, Any]:
    """(a C-contiguous array sharing memory with ``value`` when possible, the object to write back to)."""
    if isinstance(value, np.ndarray):
        if value.flags.c_contiguous:
            return value, None
        return np.ascontiguousarray(value), value
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            raise TypeError(f"torch tensors must live on the CPU, got device {value.device}")
        t = value if value.is_contiguous() else value.contiguous()
        if t.dtype == torch.bfloat16:
            arr = t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        else:
            arr = t.numpy()
        return arr, (value if t is not value else None)
    raise TypeError(f"unsupported argument type {type(value).__name__}")


def write_back(work: np.ndarray, target: Any) -> None:
    """Copy ``work`` into ``target`` when the run used a copy of the caller's object."""
    if target is None:
        return
    if isinstance(target, np.ndarray):
        target[...] = work
        return
    torch = _torch()
    if target.dtype == torch.bfloat16:
        target.copy_(torch.from_numpy(work.view(np.int16)).view(torch.bfloat16))
    else:
        target.copy_(torch.from_numpy(work))
