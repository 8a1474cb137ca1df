"""Cube <-> vector FIFO ops of a mixed group kernel (pto-text-format §4.13).

A core group is one cube core (AIC) and two vector cores (AIVs). A *mixed group kernel* is one InCore
function holding both sides' code: the cube section (Mat/Left/Right/Acc tiles, pipes MTE1/M/FIX) and
the vector section (Vec tiles, pipe V), which the code generator prints as ``pto.section.cube`` and
``pto.section.vector`` of one function. The sides hand tiles over through two FIFOs in the group:

* C2V: ``block.tpush_to_aiv(acc, split)`` on the cube appends a tile; ``block.tpop_from_aic(shape,
  valid, dtype, split)`` on each AIV returns its share of the next one as a Vec tile aliasing the
  FIFO slot (no copy, no buffer of its own);
* V2C: ``block.tpush_to_aic(vec, split)`` on each AIV appends its share; ``block.tpop_from_aiv(shape,
  valid, dtype, split)`` on the cube returns the joined tile as a Mat tile aliasing its slot.

``split`` says how the pushed tile is shared between the AIVs: 0 none, 1 up/down (each AIV owns half of
the rows), 2 left/right (half of the columns). A popped slot is released by ``block.tfree_from_aic`` /
``block.tfree_from_aiv`` after the popped tile's last use (:mod:`pypto.passes.split_sections` places
them). The pipe set-up (``reserve_buffer``, ``import_reserved_buffer``, ``aic/aiv_initialize_pipe``)
follows from the pushes and is printed by the code generator (:func:`fifo_setup`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ptoisa.machine import load_machine
from pypto.dtype import DataType
from pypto.enums import MemorySpace
from pypto.errors import PyptoTypeError, Span
from pypto.ir import expr as E
from pypto.ir import stmt as St
from pypto.ir.registry import create_op_call, register_op
from pypto.ir.type_rules import int_list, tile, view_for_space
from pypto.ir.types import TileType, UnknownType, nbytes
from pypto.ir.visitor import walk

FIFO = "FifoOp"
C2V, V2C = "c2v", "v2c"
PUSHES = {"block.tpush_to_aiv": C2V, "block.tpush_to_aic": V2C}
POPS = {"block.tpop_from_aic": C2V, "block.tpop_from_aiv": V2C}
FREES = {C2V: "block.tfree_from_aic", V2C: "block.tfree_from_aiv"}
SPLITS = {0: "none", 1: "up/down (rows)", 2: "left/right (columns)"}


def _split(name: str, kw: dict, span: Span) -> int:
    split = kw.get("split", 0)
    if split not in SPLITS:
        raise PyptoTypeError(f"{name}: split must be 0, 1 or 2, got {split!r}", span)
    return split


def _push(name: str) -> None:
    @register_op(name, FIFO, ("tile",), attrs={"split": int})
    def deduce(args: list, kw: dict, span: Span) -> UnknownType:
        tile(name, args, 0, ("tile",), span)
        _split(name, kw, span)
        return UnknownType()


def _pop(name: str, space: MemorySpace) -> None:
    @register_op(name, FIFO, ("shape", "valid_shape"), attrs={"dtype": DataType, "split": int})
    def deduce(args: list, kw: dict, span: Span) -> TileType:
        shape = int_list(name, args[0], "shape", span)
        valid = int_list(name, args[1], "valid_shape", span)
        _split(name, kw, span)
        if len(shape) != 2 or len(valid) != 2 or any(E.static_int(d) is None for d in shape):
            raise PyptoTypeError(f"{name}: a FIFO slot holds a 2-D tile of static shape", span)
        return TileType(shape, kw["dtype"], tile_view=view_for_space(space, tuple(shape), tuple(valid)))


def _free(name: str) -> None:
    register_op(name, FIFO, (), attrs={"split": int})(lambda args, kw, span: UnknownType())


_push("block.tpush_to_aiv")
_push("block.tpush_to_aic")
_pop("block.tpop_from_aic", MemorySpace.Vec)
_pop("block.tpop_from_aiv", MemorySpace.Mat)
_free("block.tfree_from_aic")
_free("block.tfree_from_aiv")


def push(direction: str, t: E.Expr, split: int, span: Span | None = None) -> E.Call:
    """Append tile ``t`` (the cube's Acc tile for C2V, an AIV's Vec tile for V2C) to the FIFO."""
    name = "block.tpush_to_aiv" if direction == C2V else "block.tpush_to_aic"
    return create_op_call(name, [t], {"split": split}, span)


def pop(direction: str, shape: list, valid: list, dtype: DataType, split: int, span: Span | None = None) -> E.Call:
    """The consumer's share of the next tile (``shape`` / ``valid``: as the consumer sees it)."""
    name = "block.tpop_from_aic" if direction == C2V else "block.tpop_from_aiv"
    return create_op_call(name, [E.MakeTuple(tuple(_index(d) for d in shape)),
                                 E.MakeTuple(tuple(_index(d) for d in valid))],
                          {"dtype": dtype, "split": split}, span)


def free(direction: str, split: int, span: Span | None = None) -> E.Call:
    return create_op_call(FREES[direction], [], {"split": split}, span)


def _index(d: Any) -> E.Expr:
    return E.ConstInt(d, DataType.INDEX) if isinstance(d, int) else d


def fifo_call(s: Any) -> E.Call | None:
    """The FIFO op a statement applies (None for any other statement)."""
    v = s.value if isinstance(s, St.AssignStmt) else s.expr if isinstance(s, St.EvalStmt) else None
    if isinstance(v, E.Call) and not isinstance(v.op, E.GlobalVar) and v.op.name.startswith(("block.tpush_",
                                                                                            "block.tpop_",
                                                                                            "block.tfree_")):
        return v
    return None


def is_group_kernel(func: St.Function) -> bool:
    """A kernel that pushes tiles between its cube and vector sections (a mixed group kernel)."""
    return any(isinstance(n, E.Call) and not isinstance(n.op, E.GlobalVar) and n.op.name in PUSHES
               for n in walk(func.body))


# Slots of the C2V ring: the default ring depth of ``pl.cross_core_slot`` (pypto-jit §4.1, 2 per
# direction). The C2V direction is an explicit pipe (``initialize_l2l_pipe``) of this many slots, each
# AIV keeping its half of a slot; the V2C direction uses the group's pipe (``aic/aiv_initialize_pipe``),
# whose depth is the machine's ``fifo_slots_one_way``.
C2V_SLOTS = 2


@functools.cache
def fifo_slots(two_way: bool, machine: str = "a2a3") -> int:
    """Slots of one FIFO direction: the machine's ``fifo_slots_one_way`` / ``fifo_slots_two_way``."""
    params = load_machine(machine).params
    return int(params["fifo_slots_two_way" if two_way else "fifo_slots_one_way"])


@dataclass(frozen=True)
class FifoSetup:
    """The pipes of a group kernel: per direction used, the bytes of one unsplit tile (the largest
    pushed: ``slot_size``), whether the AIVs share it (``split``) and the slots."""

    slot_size: dict  # direction -> bytes
    split: dict  # direction -> the split of its pushes (0, 1 or 2)
    c2v_slots: int = C2V_SLOTS  # pl.cross_core_slot(slot_num=) of the kernel's pl.at, else the default

    def slots(self, direction: str) -> int:
        return self.c2v_slots if direction == C2V else fifo_slots(False)

    def local_slot(self, direction: str) -> int:
        """Bytes of one slot in a consumer's buffer: on the C2V pipe each AIV keeps its half of a split tile."""
        size = self.slot_size[direction]
        return size // 2 if direction == C2V and self.split[direction] else size

    def reserve(self, direction: str) -> int:
        """Bytes the consumer of ``direction`` reserves for its slots (0 if the direction is unused)."""
        if direction not in self.slot_size:
            return 0
        return self.local_slot(direction) * self.slots(direction)


def fifo_setup(func: St.Function) -> FifoSetup | None:
    """The FIFO set-up a kernel's pushes need (None when it pushes nothing)."""
    sizes: dict = {}
    splits: dict = {}
    for n in walk(func.body):
        if isinstance(n, E.Call) and not isinstance(n.op, E.GlobalVar) and n.op.name in PUSHES:
            direction = PUSHES[n.op.name]
            split = n.kwargs.get("split", 0)
            whole = nbytes(n.args[0].type) or 0
            if direction == V2C and split:
                whole *= 2  # each AIV pushes its half of the tile the cube pops
            sizes[direction] = max(sizes.get(direction, 0), whole)
            if splits.setdefault(direction, split) != split:
                raise PyptoTypeError(f"a group kernel pushes {direction.upper()} tiles with splits {splits[direction]} "
                                     f"and {split}: one pipe has one split", n.span)
    if not sizes:
        return None
    slots = getattr(func, "slot_num", None)
    if slots is not None and V2C in sizes and slots != fifo_slots(False):
        raise PyptoTypeError(f"pl.cross_core_slot(slot_num={slots}) of '{func.name}': its V2C direction is the core "
                             f"group's pipe, whose depth is the machine's {fifo_slots(False)} slots "
                             "(fifo_slots_one_way); only the C2V ring's depth can be chosen", func.span)
    return FifoSetup(sizes, splits, slots or C2V_SLOTS)
