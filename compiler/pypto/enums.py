"""Closed enumerations of the IR (spec §2.4-2.6, §5)."""

from __future__ import annotations

import enum


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

# Capacity (bytes) and address alignment per on-chip space: read from the emulator's default
# machine file (isa_specs/machines/a2a3.yaml), the one place these numbers live.
_LOC = {MemorySpace.Vec: "vec", MemorySpace.Mat: "mat", MemorySpace.Left: "left", MemorySpace.Right: "right",
        MemorySpace.Acc: "acc", MemorySpace.Bias: "bias"}


def _buffers() -> tuple[dict, dict]:
    from ptoisa.machine import load_machine

    buffers = load_machine("a2a3").buffers
    return ({sp: buffers[loc].size for sp, loc in _LOC.items()},
            {sp: buffers[loc].align for sp, loc in _LOC.items()})


CAPACITY, ALIGNMENT = _buffers()
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


class CmpType(enum.IntEnum):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


ROUND_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd")
