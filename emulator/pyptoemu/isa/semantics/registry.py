"""The semantics registry: NumPy functions keyed by the name an instruction spec gives.

A semantics may be written in two steps (:func:`prepared`): a *preparation* that looks at the
operands' kinds, dtypes and shapes only (checks, result dtype, which region, which conversion) and
returns a *run* step that computes on the arrays. The simulator prepares once per operand shapes and
runs per instruction; the registered function, which tests and tools call, is the preparation
followed by its run, so there is one copy of the semantics, not a fast one beside a general one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pyptoemu.isa.arg import Arg
from pyptoemu.isa.ieee import QUIET

SemanticsFn = Callable[[list[Arg], list[Arg], dict[str, Any]], list["np.ndarray | None"]]

SEMANTICS: dict[str, SemanticsFn] = {}

# (in args, out args, attrs) -> run: the Args' values are not looked at (they may be None)
Run = Callable[[list[Any]], list["np.ndarray | None"]]  # the in operands' values -> results, one per out
PrepareFn = Callable[[list[Arg], list[Arg], dict[str, Any]], Run]


def semantics(*keys: str) -> Callable[[SemanticsFn], SemanticsFn]:
    """Register the decorated function under each of ``keys``."""

    def register(fn: SemanticsFn) -> SemanticsFn:
        for key in keys:
            if key in SEMANTICS:
                raise ValueError(f"semantics key '{key}' registered twice")
            if key.startswith("core."):
                raise ValueError(f"'core.*' keys belong to the simulator core, not to '{fn.__name__}'")
            SEMANTICS[key] = fn
        return fn

    return register


def prepared(*keys: str) -> Callable[[PrepareFn], SemanticsFn]:
    """Register a semantics given as its preparation under each of ``keys``.

    ``prepare(ins, outs, attrs)`` decides everything that depends on the operands' kinds, dtypes,
    shapes, pads and locations and on ``attrs`` (raising the same errors the semantics would), and
    returns ``run(in_values) -> results``: the in operands' values (tile / window arrays, scalar
    values) in order; out operands' current values are not available to it (a semantics that reads
    its destination is written as a plain function). ``run`` must give what the semantics gives
    for any values of those shapes. It computes under :data:`QUIET` entered by its caller (IEEE
    results, no warnings): the registered function enters it, the simulator runs every op inside
    its run-wide ``QUIET``. The registered function (``fn.prepare`` is the preparation) prepares
    and runs on each call."""

    def register(prepare: PrepareFn) -> SemanticsFn:
        def fn(ins: list[Arg], outs: list[Arg], attrs: dict[str, Any]) -> list[np.ndarray | None]:
            with QUIET:
                return prepare(ins, outs, attrs)([a.value for a in ins])

        fn.__name__, fn.__qualname__, fn.__doc__ = prepare.__name__, prepare.__qualname__, prepare.__doc__
        fn.prepare = prepare
        return semantics(*keys)(fn)

    return register
