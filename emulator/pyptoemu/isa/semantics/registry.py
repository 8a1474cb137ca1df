"""The semantics registry: NumPy functions keyed by the name an instruction spec gives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pyptoemu.isa.arg import Arg

SemanticsFn = Callable[[list[Arg], list[Arg], dict[str, Any]], list["np.ndarray | None"]]

SEMANTICS: dict[str, SemanticsFn] = {}


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
