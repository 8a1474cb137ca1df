"""``optimizations=[...]`` of ``pl.at`` / ``pl.spmd`` (spec pypto-jit §4.1): ``pl.split(pl.SplitMode.X)``
and ``pl.cross_core_slot(slot_num=N)``.

Both only shape how a mixed cube/vector region is scheduled on hardware (the vector half split over
the two AIVs, the depth of the cross-core ring); results must equal the unsplit region, which is what
the emulator computes. They are checked here as upstream checks them (a list literal at the call
site, known entries, a positive slot count) and carried on the region's kernel: SplitCubeVector's FIFO
forms split the AIVs' work by rows or columns and size the ring by them (or say why they cannot). There is no op that splits
a tensor: ``pl.split`` is only this entry.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass
from typing import Any

from pypto.errors import PyptoTypeError


class SplitMode(enum.Enum):
    NONE = "NONE"
    UP_DOWN = "UP_DOWN"
    LEFT_RIGHT = "LEFT_RIGHT"


@dataclass(frozen=True)
class Split:
    mode: SplitMode
    slot_num: int | None = None


@dataclass(frozen=True)
class CrossCoreSlot:
    slot_num: int


def split(p: Any, node: ast.Call, args: list, kwargs: dict) -> Split:
    """``pl.split(mode)`` (``slot_num=`` is the deprecated spelling of pl.cross_core_slot)."""
    mode = args[0] if args else kwargs.get("mode")
    if len(args) > 1 or set(kwargs) - {"mode", "slot_num"} or not isinstance(mode, SplitMode):
        raise p.error("pl.split(mode) takes one pl.SplitMode (NONE, UP_DOWN or LEFT_RIGHT); it is an entry of "
                      "optimizations=[...], not an op that splits a tensor", node, PyptoTypeError)
    slots = kwargs.get("slot_num")
    if slots is not None:
        _check_slots(p, node, slots)
    return Split(mode, slots)


def cross_core_slot(p: Any, node: ast.Call, args: list, kwargs: dict) -> CrossCoreSlot:
    slots = args[0] if args else kwargs.get("slot_num")
    if len(args) + len(kwargs) != 1 or (kwargs and "slot_num" not in kwargs):
        raise p.error("pl.cross_core_slot(slot_num=N) takes one slot count", node, PyptoTypeError)
    _check_slots(p, node, slots)
    return CrossCoreSlot(slots)


def _check_slots(p: Any, node: ast.AST, slots: Any) -> None:
    if isinstance(slots, bool) or not isinstance(slots, int) or slots <= 0:
        raise p.error(f"slot_num must be a positive integer, got {slots!r}", node, PyptoTypeError)


def check(p: Any, call: ast.Call) -> tuple[str, int | None]:
    """Validate the ``optimizations=`` keyword of a ``pl.at(...)`` / ``pl.spmd(...)`` call, if any, and
    return what it asks: the split mode's name ("" when no pl.split is given) and the ring depth (None
    when not given). SplitCubeVector honours them in its FIFO forms."""
    value = next((k.value for k in call.keywords if k.arg == "optimizations"), None)
    if value is None:
        return "", None
    if not isinstance(value, ast.List):
        raise p.error("optimizations= must be a list literal written at the call site", value)
    mode, slots = "", None
    for item in value.elts:
        entry = p.expr(item)
        if not isinstance(entry, (Split, CrossCoreSlot)):
            raise p.error("optimizations=[...] entries are pl.split(...) and pl.cross_core_slot(...)", item)
        if isinstance(entry, Split):
            mode = entry.mode.name
        if entry.slot_num is not None:
            slots = entry.slot_num
    return mode, slots
