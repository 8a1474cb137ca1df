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
# op name -> the tiles one block of the op's call keeps live, for the ops that need more than the shared
# plan's (pypto.lib.tiling.kernel_live); an op not listed needs no more
LIVE_NEEDS: dict[str, Callable[[Any], int]] = {}


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


def live_need(call: Any) -> int:
    """The tiles a block of library call ``call`` keeps live (0: no more than the shared plan's)."""
    need = LIVE_NEEDS.get(call.op.name)
    return need(call) if need is not None else 0
