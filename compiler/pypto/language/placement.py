"""``pl.Level`` and ``pl.at``: where a region of a jit program runs (spec pypto-jit §4.1).

``with pl.at(level=pl.Level.CORE_GROUP, name_hint=...)`` is one InCore task: the parser emits the same
scope as ``with pl.incore():`` and the existing outlining turns it into a kernel. Other levels build
multi-card hierarchies, which the emulator does not support; they are rejected by name.
"""

from __future__ import annotations

import ast
import enum
from typing import Any


class Level(enum.IntEnum):
    AIV = 0
    AIC = 1
    CORE_GROUP = 2
    CHIP_DIE = 3
    CHIP = 4
    HOST = 5
    CLUSTER_0 = 6
    CLUSTER_1 = 7
    CLUSTER_2 = 8
    GLOBAL = 9
    L2CACHE = 3
    PROCESSOR = 4
    UMA = 4
    NODE = 5
    POD = 6
    CLOS1 = 7
    CLOS2 = 8


class Role(enum.Enum):
    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"


class _Region:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def at(level: Level = Level.CORE_GROUP, role: Role | None = None, **_hints: Any) -> _Region:
    """Plain-Python stand-in: inside a jit body the parser reads ``pl.at`` itself."""
    return _Region()


_NO_EFFECT = ("optimizations", "dumps", "windowize", "allow_early_resolve", "name_hint")
_TASK_GRAPH = ("deps", "no_dep_args")


def check_at(p: Any, call: ast.Call) -> None:
    """Validate a ``pl.at(...)`` call in a DSL body: CORE_GROUP only, hints accepted, name_hint an identifier."""
    kwargs = dict(zip(("level", "role"), call.args, strict=False))
    kwargs.update({k.arg: k.value for k in call.keywords})
    level = p.expr(kwargs["level"]) if "level" in kwargs else Level.CORE_GROUP
    if level != Level.CORE_GROUP:
        name = Level(level).name if isinstance(level, int) else repr(level)
        raise p.error(f"pl.at(level=pl.Level.{name}) is a multi-card hierarchy scope; multi-card distribution is "
                      "not supported by the emulator (use level=pl.Level.CORE_GROUP)", call)
    if kwargs.get("role") is not None and not (isinstance(kwargs["role"], ast.Constant) and kwargs["role"].value is None):
        raise p.error("pl.at(role=...) belongs to multi-card hierarchy scopes, which the emulator does not support",
                      call)
    for k in kwargs:
        if k not in ("level", "role", *_NO_EFFECT, *_TASK_GRAPH):
            raise p.error(f"pl.at() got an unexpected keyword argument '{k}'", call)
    if "name_hint" in kwargs:
        hint = p.expr(kwargs["name_hint"])
        if not isinstance(hint, str) or (hint and not hint.isidentifier()):
            raise p.error(f"pl.at(name_hint=...) must be an identifier, got {hint!r}", kwargs["name_hint"])
    for k in _TASK_GRAPH:
        if k in kwargs:
            raise p.error(f"pl.at({k}=...) declares task-graph edges, which are not supported yet", kwargs[k])
