"""Synchronisation ops (spec §4.11): set/wait flags between pipes and pipe barriers."""

from __future__ import annotations

from typing import Any

from pypto.enums import PipeType
from pypto.errors import PyptoTypeError, Span
from pypto.ir.expr import Call
from pypto.ir.registry import create_op_call, register_op
from pypto.ir.types import UnknownType
from pypto.ops import isa

SYNC = "SyncOp"
_FLAG_ATTRS = {"set_pipe": int, "wait_pipe": int, "event_id": int}


def _flag(name: str):
    def deduce(args: list, kw: dict, span: Span) -> UnknownType:
        for key in _FLAG_ATTRS:
            if key not in kw:
                raise PyptoTypeError(f"{name} requires keyword '{key}'", span)
        for key in ("set_pipe", "wait_pipe"):
            if not 0 <= kw[key] <= 7:
                raise PyptoTypeError(f"{name}: {key} must be a PipeType (0..7), got {kw[key]}", span)
        if not 0 <= kw["event_id"] <= 7:
            raise PyptoTypeError(f"{name}: event_id must be 0..7, got {kw['event_id']}", span)
        return UnknownType()

    register_op(name, SYNC, (), attrs=_FLAG_ATTRS, pipe=PipeType.S)(deduce)


_flag("system.sync_src")
_flag("system.sync_dst")


def _barrier(name: str):
    register_op(name, SYNC, (), pipe=PipeType.S)(lambda args, kw, span: UnknownType())


for _n in ("bar_v", "bar_m", "bar_all"):
    _barrier("system." + _n)


def _pipe(v: Any) -> int:
    return int(v)


def sync_src(set_pipe: Any, wait_pipe: Any, event_id: int, span: Span | None = None) -> Call:
    kw = {"set_pipe": _pipe(set_pipe), "wait_pipe": _pipe(wait_pipe), "event_id": int(event_id)}
    return create_op_call("system.sync_src", [], kw, span)


def sync_dst(set_pipe: Any, wait_pipe: Any, event_id: int, span: Span | None = None) -> Call:
    kw = {"set_pipe": _pipe(set_pipe), "wait_pipe": _pipe(wait_pipe), "event_id": int(event_id)}
    return create_op_call("system.sync_dst", [], kw, span)


def bar_v(span: Span | None = None) -> Call:
    return create_op_call("system.bar_v", [], {}, span)


def bar_m(span: Span | None = None) -> Call:
    return create_op_call("system.bar_m", [], {}, span)


def bar_all(span: Span | None = None) -> Call:
    return create_op_call("system.bar_all", [], {}, span)


def fence(span: Span | None = None) -> Call:
    """``pl.system.fence()`` (pypto-jit §8): the core's earlier memory operations complete before its
    later ones start: a full barrier."""
    return bar_all(span)


def cacheinvalid(span: Span | None = None) -> Call:
    """``pl.system.cacheinvalid()`` (pypto-jit §8): cache upkeep before reading data another core
    wrote. The emulator's global memory has no cache to invalidate (a no-op, spec §8); it is kept as
    a full barrier so that the reads after it are ordered after everything before it, as on hardware."""
    return bar_all(span)


def available_cluster_count(span: Span | None = None) -> int:
    """Core groups (1 AIC + 2 AIV) on the target chip: a ``pl.spmd`` count known when compiling."""
    return isa.chip_cores("aic")


def available_aiv_count(span: Span | None = None) -> int:
    """Vector cores on the target chip: a ``pl.spmd`` count known when compiling."""
    return isa.chip_cores("aiv")
