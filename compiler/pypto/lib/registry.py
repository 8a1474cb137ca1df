"""The library's definitions: one lowering per tensor-level op, keyed by the op's IR name.

A definition is ``define(em, call, out) -> result``: given the op's call (its arguments and
attributes) and the tensor ``out`` the result must land in, it appends the op's PyPTO IR (tile loops
over block ops) to the :class:`~pypto.lib.emit.Emitter` and returns the final value of ``out``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Definition = Callable[[Any, Any, Any], Any]
DEFINITIONS: dict[str, Definition] = {}


def definition(*names: str) -> Callable[[Definition], Definition]:
    """Register the decorated function as the definition of each op in ``names``."""

    def wrap(fn: Definition) -> Definition:
        for n in names:
            if n in DEFINITIONS:
                raise ValueError(f"library op {n} defined twice")
            DEFINITIONS[n] = fn
        return fn

    return wrap


def defined(name: str) -> bool:
    return name in DEFINITIONS
