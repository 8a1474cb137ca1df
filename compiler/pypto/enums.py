"""Closed enumerations of the IR (spec §2.4-2.6, §5)."""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterator, Mapping

from ptoisa.machine import load_machine


class MemorySpace(enum.IntEnum):
    DDR = 0
    Vec = 1
    Mat = 2
    Left = 3
    Right = 4
    Acc = 5
    Bias = 6  # extension: the cube's bias table (matmul_bias / gemv_bias operand)

    @property
    def loc(self) -> str:
        return _LOC[self]


_LOC = {
    MemorySpace.DDR: "gm",
    MemorySpace.Vec: "vec",
    MemorySpace.Mat: "mat",
    MemorySpace.Left: "left",
    MemorySpace.Right: "right",
    MemorySpace.Acc: "acc",
    MemorySpace.Bias: "bias",
}

# Design-note aliases.
MEMORY_SPACE_ALIASES = {
    "GM": MemorySpace.DDR,
    "UB": MemorySpace.Vec,
    "L1": MemorySpace.Mat,
    "L0A": MemorySpace.Left,
    "L0B": MemorySpace.Right,
    "L0C": MemorySpace.Acc,
}

class _BufferTable(Mapping):
    """Capacity (bytes) or address alignment per on-chip space, read from the default machine file
    (isa_specs/machines/a2a3.yaml, the one place these numbers live) through ``ptoisa`` on first use,
    so importing the compiler reads no file."""

    def __init__(self, field: str):
        self._field = field

    def _table(self) -> dict:
        return {space: getattr(buffer, self._field) for space, buffer in _machine_buffers().items()}

    def __getitem__(self, space: MemorySpace) -> int:
        return self._table()[space]

    def __iter__(self) -> Iterator[MemorySpace]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


@functools.cache
def _machine_buffers() -> dict:
    buffers = load_machine("a2a3").buffers
    return {space: buffers[space.loc] for space in MemorySpace if space is not MemorySpace.DDR}


CAPACITY = _BufferTable("size")
ALIGNMENT = _BufferTable("align")
CUBE_SPACES = frozenset(
    {MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias}
)


class PipeType(enum.IntEnum):
    MTE1 = 0
    MTE2 = 1
    MTE3 = 2
    M = 3
    V = 4
    S = 5
    FIX = 6
    ALL = 7

    @property
    def cname(self) -> str:
        return f"PIPE_{self.name}"


class CoreType(enum.IntEnum):
    CUBE = 0
    VECTOR = 1


class FunctionType(enum.IntEnum):
    Opaque = 0
    Orchestration = 1
    InCore = 2


class ParamDirection(enum.IntEnum):
    In = 0
    Out = 1
    InOut = 2


class ForKind(enum.IntEnum):
    Sequential = 0
    Parallel = 1
    Unroll = 2


class ScopeKind(enum.IntEnum):
    InCore = 0
    AutoInCore = 1
    # the two sections of a group kernel (passes.split_sections): the code of the cube core, of each AIV
    CubeSection = 2
    VectorSection = 3


class TensorLayout(enum.IntEnum):
    ND = 0
    DN = 1
    NZ = 2


class TileLayout(enum.IntEnum):
    none_box = 0
    row_major = 1
    col_major = 2


class TilePad(enum.IntEnum):
    null = 0
    zero = 1
    max = 2
    min = 3


class AtomicType(enum.IntEnum):
    """How a store into a tensor lands (``pl.AtomicType``): overwrite, or add to what is there."""

    None_ = 0
    Add = 1


class CmpType(enum.IntEnum):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


ROUND_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")
