"""The op registry: one :class:`OpDef` per op, registered by decorator on its type-deduction function.

This module is the table only; the op definitions in :mod:`pypto.ops` (above it) fill it when
imported, and :mod:`pypto.ops` is where the full table is looked up.

``create_op_call`` looks the op up, checks the kwargs against the declared attribute schema, runs the
deducer and returns a typed :class:`Call`. Deducers raise :class:`PyptoTypeError` at the call's span.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pypto.dtype import DataType
from pypto.enums import AtomicType, MemorySpace, PipeType
from pypto.errors import UNKNOWN_SPAN, CompileError, PyptoTypeError, Span
from pypto.ir.expr import Call, Op

Deducer = Callable[[list, dict, Span], Any]


@dataclass(frozen=True, slots=True)
class OpDef:
    name: str
    category: str
    arguments: tuple[str, ...]
    attrs: dict = field(default_factory=dict)
    pipe: PipeType | None = None
    description: str = ""
    deduce: Deducer | None = None
    min_args: int | None = None

    @property
    def op(self) -> Op:
        return _OP_OBJECTS[self.name]


_REGISTRY: dict[str, OpDef] = {}
_OP_OBJECTS: dict[str, Op] = {}
ATTR_TYPES = (bool, int, str, float, DataType, MemorySpace, AtomicType)


def register_op(
    name: str,
    category: str,
    arguments: tuple[str, ...] | list[str] = (),
    attrs: dict | None = None,
    pipe: PipeType | None = None,
    description: str = "",
    min_args: int | None = None,
) -> Callable[[Deducer], Deducer]:
    """Register ``name``; the decorated function is its type deducer."""

    def wrap(fn: Deducer) -> Deducer:
        if name in _REGISTRY:
            raise ValueError(f"op {name} registered twice")
        for t in (attrs or {}).values():
            if t not in ATTR_TYPES:
                raise ValueError(f"op {name}: attribute type {t} is not allowed")
        _REGISTRY[name] = OpDef(
            name, category, tuple(arguments), dict(attrs or {}), pipe, description or name, fn, min_args
        )
        _OP_OBJECTS[name] = Op(name)
        return fn

    return wrap


def _canonical(name: str) -> str:
    return "block." + name[5:] if name.startswith("tile.") else name


def is_op_registered(name: str) -> bool:
    return _canonical(name) in _REGISTRY


def get_op(name: str, span: Span | None = None) -> OpDef:
    """The op's definition; an unknown name is a user error at ``span`` (the call being built)."""
    opdef = _REGISTRY.get(_canonical(name))
    if opdef is None:
        raise CompileError(f"unknown op '{name}'", span)
    return opdef


def all_ops() -> dict[str, OpDef]:
    return dict(_REGISTRY)


def _coerce_kwarg(op: str, key: str, value: Any, want: type, span: Span) -> Any:
    """Check one keyword against the op's schema; enum codes become enum members, and a code with no
    member is reported at the call (not as a bare ValueError from the enum constructor)."""
    if want in (DataType, MemorySpace, AtomicType) and isinstance(value, int) and not isinstance(value, bool):
        try:
            return want(value)
        except ValueError:
            raise PyptoTypeError(f"{op}: keyword '{key}': {value} is not a {want.__name__} code", span) from None
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if want is int and isinstance(value, bool):
        raise PyptoTypeError(f"{op}: keyword '{key}' expects int, got bool", span)
    if want is int and isinstance(value, PipeType):
        return int(value)
    if not isinstance(value, want):
        raise PyptoTypeError(
            f"{op}: keyword '{key}' expects {want.__name__}, got {type(value).__name__}", span
        )
    return value


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OP_BUILDERS = (os.path.join(_PKG, "ops") + os.sep, os.path.abspath(__file__))


def _builder_caller_span() -> Span:
    """Span of user code that called an op builder (``pypto.ir.op.block.add(...)``) without one.

    Frames of the builder modules are skipped; if the next frame is user code (outside the pypto
    package) its line is the call's span, so type-deduction errors of hand-built IR point there.
    Calls that compiler passes build stay spanless rather than blaming an unrelated user line.
    """
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_OP_BUILDERS):
        f = f.f_back
    if f is None or os.path.abspath(f.f_code.co_filename).startswith(_PKG + os.sep):
        return UNKNOWN_SPAN
    return Span(f.f_code.co_filename, f.f_lineno, 1)


def create_op_call(name: str, args: list | tuple, kwargs: dict | None = None, span: Span | None = None) -> Call:
    """Build a typed call of a registered op."""
    span = span or _builder_caller_span()
    opdef = get_op(name, span)
    kwargs = dict(kwargs or {})
    checked = {}
    for key, value in kwargs.items():
        if value is None:
            continue
        if key not in opdef.attrs:
            allowed = ", ".join(opdef.attrs) or "none"
            raise PyptoTypeError(f"{opdef.name}: unknown keyword '{key}' (allowed: {allowed})", span)
        checked[key] = _coerce_kwarg(opdef.name, key, value, opdef.attrs[key], span)
    args = list(args)
    lo = opdef.min_args if opdef.min_args is not None else len(opdef.arguments)
    if not lo <= len(args) <= len(opdef.arguments):
        want = str(len(opdef.arguments)) if lo == len(opdef.arguments) else f"{lo} to {len(opdef.arguments)}"
        names = ", ".join(opdef.arguments) or "no arguments"
        raise PyptoTypeError(
            f"{opdef.name} takes {want} argument(s) ({names}), got {len(args)}", span
        )
    rtype = opdef.deduce(args, checked, span)
    return Call(opdef.op, tuple(args), checked, rtype, span)

