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


@functools.cache
def fifo_slots(two_way: bool, machine: str = "a2a3") -> int:
    """Slots of one FIFO direction: the machine's ``fifo_slots_one_way`` / ``fifo_slots_two_way``."""
    params = load_machine(machine).params
    return int(params["fifo_slots_two_way" if two_way else "fifo_slots_one_way"])


@dataclass(frozen=True)
class FifoSetup:
    """The pipes of a group kernel: ``dir_mask`` (1 C2V, 2 V2C, 3 both), the bytes of one unsplit
    tile (``slot_size``, the largest pushed), and the slots per direction."""

    dir_mask: int
    slot_size: int
    slots: int

    def reserve(self, direction: str) -> int:
        """Bytes the consumer of ``direction`` reserves for its slots (0 if the direction is unused)."""
        bit = 1 if direction == C2V else 2
        return self.slot_size * self.slots if self.dir_mask & bit else 0


def fifo_setup(func: St.Function) -> FifoSetup | None:
    """The FIFO set-up a kernel's pushes need (None when it pushes nothing)."""
    mask, size = 0, 0
    for n in walk(func.body):
        if isinstance(n, E.Call) and not isinstance(n.op, E.GlobalVar) and n.op.name in PUSHES:
            direction = PUSHES[n.op.name]
            mask |= 1 if direction == C2V else 2
            t = n.args[0].type
            whole = nbytes(t) or 0
            if direction == V2C and n.kwargs.get("split", 0):
                whole *= 2  # each AIV pushes its half of the tile the cube pops
            size = max(size, whole)
    if not mask:
        return None
    return FifoSetup(mask, size, fifo_slots(mask == 3))
