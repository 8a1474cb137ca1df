"""Pipe and event names as the `.pto` text writes them (``<PIPE_V>``, ``<TLOAD>``, ``<EVENT_ID3>``),
read into the emulator's pipe names and event ids."""

from __future__ import annotations

from ptoisa.text import ast as A
from pyptoemu.errors import Loc, VerifyError

PIPE_NAMES = {
    "PIPE_S": "S", "PIPE_V": "V", "PIPE_M": "M", "PIPE_MTE1": "MTE1", "PIPE_MTE2": "MTE2",
    "PIPE_MTE3": "MTE3", "PIPE_FIX": "FIX", "PIPE_ALL": "ALL",
}
# An op class names the pipe that runs it (record_event / wait_event and the sync_op_type forms).
EVENT_CLASS_PIPE = {
    "TLOAD": "MTE2", "TSTORE_VEC": "MTE3", "TSTORE_ACC": "FIX", "TMOV_M2L": "MTE1", "TMOV_M2B": "MTE1",
    "TMOV_M2S": "FIX", "TMOV_M2V": "V", "TMOV_V2M": "FIX", "TMATMUL": "M", "TVEC": "V",
    "TVECWAIT_EVENT": "V",
}


def pipe_of(attr, loc: Loc) -> str:
    """The pipe an attribute names (a pipe or an op class), or a located error."""
    if isinstance(attr, A.EnumAttr):
        if attr.kind in ("pipe_event_type", "sync_op_type"):
            p = EVENT_CLASS_PIPE.get(attr.value)
        else:
            p = PIPE_NAMES.get(attr.value)
        if p is not None:
            return p
    raise VerifyError(f"expected a pipe (like <PIPE_V>) or an op class, got {attr}", loc)


def event_of(attr, loc: Loc) -> int | None:
    """The static event id an attribute names, or None (not a static id)."""
    if isinstance(attr, A.EnumAttr) and attr.value.startswith("EVENT_ID"):
        return int(attr.value[8:])
    if isinstance(attr, int) and not isinstance(attr, bool):
        return attr
    return None
