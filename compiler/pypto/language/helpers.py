"""DSL helpers that also behave sensibly when the decorated source runs as plain Python."""

from __future__ import annotations

import builtins
from typing import Any


def range(*args: Any, init_values: Any = None, chunk: Any = None, chunk_policy: str = "leading_full"):
    """``pl.range(stop)``, ``pl.range(start, stop[, step], init_values=...)``: a DSL loop."""
    it = builtins.range(*args)
    if init_values is None:
        return it
    return ((i, tuple(init_values)) for i in it)


parallel = range


def pipeline(*args: Any, stage: int, init_values: Any = None) -> Any:
    """``pl.pipeline(start, stop[, step], stage=F)``: a ``pl.range`` whose body is interleaved F times."""
    return range(*args, init_values=init_values)


def parallel_for_power2(extent: Any, *, min_chunk: int = 1, max_chunk: int = 64, init_values: Any = None):
    """``pl.parallel_for_power2(n, min_chunk=1, max_chunk=64)``: a parallel loop over ``range(n)`` that
    the compiler expands into power-of-two chunks plus a predicated tail (ExpandPower2)."""
    return range(extent, init_values=init_values)


def unroll(*args: Any) -> Any:
    return builtins.range(*args)


def while_(*, init_values: Any) -> Any:
    raise RuntimeError("pl.while_ only works inside a @pl.function body")


def cond(condition: Any) -> Any:
    return condition


def yield_(*values: Any) -> Any:
    return values[0] if len(values) == 1 else values


def const(value: Any, dtype: Any) -> Any:
    return value


def static_assert(condition: Any, message: str = "") -> None:
    """Plain-Python stand-in; in a kernel body the parser checks it while parsing."""
    if not condition:
        raise AssertionError(message or "static assertion failed")


def static_print(*values: Any) -> None:
    """Plain-Python stand-in; in a kernel body the parser prints while parsing."""
    builtins.print(*values)


class _Scope:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def incore() -> _Scope:
    return _Scope()


def auto_incore() -> _Scope:
    return _Scope()
