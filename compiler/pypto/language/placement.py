"""``pl.Level``, ``pl.at``, ``pl.spmd``, ``pl.cluster``: where a region of a program runs (spec
pypto-jit §4).

``with pl.at(level=pl.Level.CORE_GROUP, name_hint=...)`` is one InCore task: the parser emits the same
scope as ``with pl.incore():`` (named ``name_hint``) and the existing outlining turns it into a
kernel. Other levels build multi-card hierarchies, which the emulator does not support; they are
rejected by name.

``pl.spmd(n)`` launches one kernel as ``n`` blocks on the chip (``pyptoemu.run(..., blocks=n)``):
block ``i`` sees ``get_block_idx() == i`` and ``get_block_num() == n``; more blocks than cores run in
waves. The block count must be known when the program is specialized (an int, a shape, a scalar
parameter of a jit call): the emulator launches a fixed number of blocks. ``pl.cluster()`` only
co-schedules the kernels it holds on one core group and has no functional effect.
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


def spmd(core_num: int, **_options: Any) -> Any:
    """Plain-Python stand-in (``for i in pl.spmd(n)`` iterates the block ids); the parser reads it."""
    return range(core_num)


def split_aiv(n: int = 2, mode: Any = None) -> Any:
    """Plain-Python stand-in (``for lane in pl.split_aiv(2, mode=...)``); the parser reads it."""
    return range(n)


def cluster(name_hint: str = "") -> _Region:
    """Plain-Python stand-in: ``with pl.cluster():`` has no functional effect."""
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
_SPMD_HINTS = ("sync_start", "name_hint", "optimizations", "allow_early_resolve", "predicate")


def check_spmd(p: Any, call: ast.Call, with_form: bool = False) -> tuple[int, str]:
    """The block count and name hint of a ``pl.spmd(core_num, ...)`` call in a DSL body.

    ``sync_start`` (every block starts together) is what the chip does anyway while there are free
    cores; ``optimizations`` and ``allow_early_resolve`` are performance hints. ``deps=`` is legal
    only in the ``with pl.spmd(n, deps=[...]) as tid`` form (the caller reads it); ``predicate=`` (a
    task skipped when one tensor element fails a comparison) is read by the caller too
    (:func:`pypto.language.spmd.predicate`).
    """
    if p.in_incore:
        raise p.error("pl.spmd launches blocks from orchestration code; it cannot sit inside an InCore region "
                      "(put the pl.at region inside the pl.spmd instead)", call)
    kwargs = {k.arg: k.value for k in call.keywords}
    if len(call.args) != 1 and not (not call.args and "core_num" in kwargs):
        raise p.error(f"pl.spmd takes one block count, got {len(call.args)} positional arguments", call)
    count_node = call.args[0] if call.args else kwargs.pop("core_num")
    for k, value in kwargs.items():
        if k == "deps" and not with_form:
            raise p.error("pl.spmd() does not accept 'deps=' here (only in `with pl.spmd(n, deps=[...]) as tid:`)",
                          value)
        if k not in (*_SPMD_HINTS, "deps"):
            raise p.error(f"pl.spmd() got an unexpected keyword argument '{k}'", call)
    n = p.expr(count_node)
    if isinstance(n, bool) or not isinstance(n, int):
        raise p.error("pl.spmd's block count must be known when the program is specialized (an int, a shape, or a "
                      "scalar argument of the jit call); a count computed at run time is not supported by the "
                      "emulator", count_node)
    if n <= 0:
        raise p.error(f"pl.spmd's block count must be positive, got {n}", count_node)
    hint = p.expr(kwargs["name_hint"]) if "name_hint" in kwargs else ""
    if not isinstance(hint, str) or (hint and not hint.isidentifier()):
        raise p.error(f"pl.spmd(name_hint=...) must be an identifier, got {hint!r}", kwargs["name_hint"])
    return n, hint


def check_cluster(p: Any, call: ast.Call) -> None:
    """``pl.cluster(name_hint="")``: accepted anywhere in orchestration, no functional effect."""
    if call.args or any(k.arg != "name_hint" for k in call.keywords):
        raise p.error("pl.cluster() takes only name_hint=", call)


def at_name_hint(p: Any, call: ast.Call) -> str:
    """The ``name_hint`` of a checked ``pl.at(...)`` call ("" when none)."""
    for k in call.keywords:
        if k.arg == "name_hint":
            return p.expr(k.value)
    return ""
