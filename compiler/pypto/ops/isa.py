"""The compiler's op table: which instruction each tile op lowers to, and every fact about that
instruction read from its ISA spec (``isa_specs/instructions/*.yaml``) through ``ptoisa``.

The spec is the one place for an instruction's pipe rule, legal dtypes and conversions, operand
roles (which operand is scratch) and memories, and C++ spelling; this module only adds what is the
compiler's own business: the lowering of each IR op (``block.sels`` -> ``tsels``, with the order in
which the op's arguments fill the instruction's ``ins``) and the dtypes the compiler itself makes
legal by re-typing (``tnot`` on UINT16 runs on an INT16 view of the same bytes).

The spec is read on first use (``PYPTOEMU_ISA_DIR`` selects another spec directory), so importing
the compiler reads no file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ptoisa.isa.loader import load_isa
from ptoisa.isa.spec import ISA, InstrSpec
from ptoisa.machine import Machine, load_machine
from pypto.dtype import DataType
from pypto.enums import MemorySpace, PipeType


@dataclass(frozen=True)
class Lowering:
    """An IR op's instruction; ``args[i]`` is the op argument that fills the instruction's i-th
    ``ins`` operand (``None``: the arguments in their own order)."""

    mnemonic: str
    args: tuple[int, ...] | None = None

    def arg_of_operand(self, index: int) -> int:
        return index if self.args is None else self.args[index]


def _same(*names: str, prefix: str = "t") -> dict[str, Lowering]:
    """Ops whose instruction is ``t<name without '_'>`` with the arguments in their own order."""
    return {f"block.{n}": Lowering(prefix + n.replace("_", "")) for n in names}


LOWERINGS: dict[str, Lowering] = {
    **_same("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr"),
    **_same("adds", "subs", "muls", "divs", "rems", "ands", "ors", "xors", "shls", "shrs", "maxs", "mins"),
    **_same("addc", "subc", "addsc", "subsc", "sel", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "neg",
            "not", "relu", "lrelu", "prelu", "fillpad", "row_sum", "row_max", "row_min", "row_expand",
            "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div", "col_expand_mul",
            "col_expand_div", "col_expand_sub", "reshape", "expands", "load", "store"),
    "block.maximum": Lowering("tmax"),
    "block.minimum": Lowering("tmin"),
    "block.move": Lowering("tmov"),
    "block.matmul": Lowering("tmatmul"),
    "block.matmul_acc": Lowering("tmatmul.acc"),
    "block.matmul_bias": Lowering("tmatmul.bias"),
    "block.gemv": Lowering("tgemv"),
    "block.gemv_acc": Lowering("tgemv.acc"),
    "block.gemv_bias": Lowering("tgemv.bias"),
    "block.cast": Lowering("tcvt", (0,)),
    "block.cmp": Lowering("tcmp"),
    "block.cmps": Lowering("tcmps"),
    "block.full": Lowering("texpands", (1,)),
    "block.expands": Lowering("texpands", (1,)),
    "block.col_expand": Lowering("tcolexpand", (1,)),
    "block.sels": Lowering("tsels", (0, 1, 3, 2)),  # (mask, lhs, rhs, tmp) -> ins(mask, a, tmp, scalar)
    "block.transpose": Lowering("ttrans", (0, 3)),  # (tile, axis1, axis2, tmp) -> ins(src, tmp)
    # axis-0 reductions are column reductions (axis 1 is lowered to row_* before codegen)
    "block.sum": Lowering("tcolsum", (0,)),
    "block.max": Lowering("tcolmax", (0,)),
    "block.min": Lowering("tcolmin", (0,)),
    # jit-era tile data ops (pypto.ops.tile_data)
    "block.getval": Lowering("tgetval"),
    "block.setval": Lowering("tsetval", (1, 2)),  # (tile, offset, value) -> ins(offset, value) outs(tile)
    "block.read_gm": Lowering("load_scalar"),
    "block.write_gm": Lowering("store_scalar"),
    "block.extract": Lowering("textract", (0, 1, 2)),  # (tile, row, col, shape[, valid]) -> ins(src, row, col)
    "block.concat": Lowering("tconcat"),
    "block.transpose_view": Lowering("treshape"),
    "block.sort32": Lowering("tsort32"),
    "block.mrgsort": Lowering("tmrgsort"),
    "block.mrgsort_lists": Lowering("tmrgsort"),  # format 2: ins(s0, s1[, s2[, s3]], tmp)
    "block.gather_mask": Lowering("tgather", (0,)),
    "block.gather_cmp": Lowering("tgather", (0, 1)),  # compare form: outs (indices, counts)
    "block.gather_index": Lowering("tgather", (0, 1)),
    "block.fillpad_expand": Lowering("tfillpad_expand", (0,)),
    "block.fillpad_inplace": Lowering("tfillpad_inplace"),
    "block.arange": Lowering("tci", (0,)),
    # cube <-> vector FIFOs of a group kernel (pypto.ops.fifo; printed by the code generator)
    "block.tpush_to_aiv": Lowering("tpush_to_aiv"),
    "block.tpush_to_aic": Lowering("tpush_to_aic"),
    "block.tpop_from_aic": Lowering("tpop_from_aic"),
    "block.tpop_from_aiv": Lowering("tpop_from_aiv"),
    "block.tfree_from_aic": Lowering("tfree_from_aic"),
    "block.tfree_from_aiv": Lowering("tfree_from_aiv"),
}

TARGET_MACHINE = "a2a3"  # the machine the compiler targets (pto.target_arch of the modules it writes)

# Dtypes the compiler makes legal beyond the instruction's own: the op runs on a same-width view.
RETYPED: dict[str, dict[DataType, DataType]] = {
    "block.not": {DataType.UINT16: DataType.INT16},
    "block.arange": {DataType.UINT32: DataType.INT32},  # pypto-lib's top-k index row is UINT32
}

_BY_SPELLING: dict[str, DataType] = {}
for _d in DataType:
    try:
        _BY_SPELLING[_d.mlir] = _d
    except ValueError:
        continue
_SPELLING_OF = {d: n for n, d in _BY_SPELLING.items()}
_SPACE_OF_LOC = {space.loc: space for space in MemorySpace}
# The order dtype lists are reported in (signed, unsigned, then floats narrow to wide).
_REPORT_ORDER = (DataType.BOOL, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64, DataType.UINT8,
                 DataType.UINT16, DataType.UINT32, DataType.UINT64, DataType.FP8E4M3FN, DataType.FP8E5M2,
                 DataType.FP16, DataType.BF16, DataType.FP32)


def _report_order(dtypes: tuple[DataType, ...]) -> tuple[DataType, ...]:
    return tuple(sorted(set(dtypes), key=_REPORT_ORDER.index))


def dtypes_of(names: tuple[str, ...]) -> tuple[DataType, ...]:
    """The compiler's dtypes of spec dtype names (ones it has no type for are left out)."""
    return tuple(_BY_SPELLING[n] for n in names if n in _BY_SPELLING)


_LOADED: dict[tuple[str, str], tuple[ISA, Machine]] = {}
_ARCH: list[str] = []  # the target arch of the compilation in progress (innermost last)


@contextmanager
def targeting(arch: str) -> Iterator[None]:
    """Within the block, instruction facts (legal dtypes, conversions, compare modes) are those of
    the ``arch`` machine's ISA (``a5``: integer ``tdiv``, ordered INT32 compares, ...), so that a
    module written for ``pto.target_arch = arch`` uses what that arch has. The chip facts
    (:func:`chip_cores`) stay :data:`TARGET_MACHINE`'s."""
    _ARCH.append(arch)
    try:
        yield
    finally:
        _ARCH.pop()


def _target(arch: str = TARGET_MACHINE) -> tuple[ISA, Machine]:
    """The ISA and the machine of ``arch``, loaded once per spec directory (``PYPTOEMU_ISA_DIR``)."""
    key = (os.environ.get("PYPTOEMU_ISA_DIR", ""), arch)
    found = _LOADED.get(key)
    if found is None:
        machine = load_machine(arch)
        found = _LOADED[key] = (load_isa(machine=machine), machine)
    return found


def _arch_target() -> tuple[ISA, Machine]:
    """The ISA and machine of the compilation in progress (:func:`targeting`)."""
    return _target(_ARCH[-1] if _ARCH else TARGET_MACHINE)


def chip_cores(kind: str) -> int:
    """How many cores of ``kind`` (``aic``, ``aiv``) the target chip has (its machine file's ``chip:``)."""
    return _target()[1].chip_spec().count(kind)


def instruction(mnemonic: str) -> InstrSpec:
    """The ISA spec of ``mnemonic`` (``tadd``, ``pto.tmatmul.acc``) on the target arch; KeyError when
    there is none."""
    return _arch_target()[0][mnemonic]


def lowering(op: str) -> Lowering | None:
    return LOWERINGS.get(op)


def op_instruction(op: str) -> InstrSpec | None:
    """The ISA spec of the instruction IR op ``op`` lowers to (None: the op emits none)."""
    low = LOWERINGS.get(op)
    return None if low is None else instruction(low.mnemonic)


def legal_dtypes(op: str) -> tuple[DataType, ...] | None:
    """Element dtypes IR op ``op`` accepts (None: not checked here)."""
    spec = op_instruction(op)
    if spec is None:
        return None
    return _report_order(dtypes_of(spec.dtypes) + tuple(RETYPED.get(op, {})))


def operand_dtypes(op: str, operand: str) -> tuple[DataType, ...]:
    """Dtypes of the instruction's ins operand named ``operand`` (its own list, else the entry's)."""
    spec = op_instruction(op)
    if spec is None:
        raise KeyError(op)
    own = next(o for o in spec.ins if o.name == operand).dtypes
    return _report_order(dtypes_of(own if own is not None else spec.dtypes))


def conversions(op: str, src: DataType) -> tuple[DataType, ...]:
    """Destination dtypes a converting op takes ``src`` to (empty when none)."""
    spec = op_instruction(op)
    if spec is None or src not in _SPELLING_OF:
        return ()
    return dtypes_of(spec.conversions.get(_SPELLING_OF[src], ()))



def scratch_arg(op: str) -> int | None:
    """Which argument of IR op ``op`` is the scratch tile the instruction overwrites (role scratch)."""
    low = LOWERINGS.get(op)
    if low is None:
        return None
    for i, operand in enumerate(instruction(low.mnemonic).ins):
        if operand.is_scratch and (low.args is None or i < len(low.args)):
            return low.arg_of_operand(i)
    return None


def operand_spaces(op: str) -> tuple[MemorySpace | None, ...] | None:
    """The memory each argument of ``op`` must be in, where the spec names exactly one loc."""
    low = LOWERINGS.get(op)
    if low is None:
        return None
    out: list[MemorySpace | None] = []
    for i, operand in enumerate(instruction(low.mnemonic).ins):
        if low.args is not None and i >= len(low.args):
            break
        locs = operand.locs or ()
        out.append(_SPACE_OF_LOC.get(locs[0]) if len(locs) == 1 else None)
    return tuple(out)


def compares_i32_for_eq_only(op: str) -> bool:
    """Whether ``op``'s instruction carries the ``i32_compare_eq_only`` constraint and the target
    machine (a2a3) sets ``params.cmp_i32_eq_only``: i32 tiles then compare only for EQ."""
    spec = op_instruction(op)
    return (spec is not None and "i32_compare_eq_only" in spec.constraints
            and bool(_arch_target()[1].params.get("cmp_i32_eq_only", 0)))


def result_space(op: str) -> MemorySpace | None:
    """The memory the result of ``op`` lives in when the spec allows exactly one (``acc`` for matmul)."""
    spec = op_instruction(op)
    locs = (spec.outs[0].locs or ()) if spec is not None and spec.outs else ()
    return _SPACE_OF_LOC.get(locs[0]) if len(locs) == 1 else None


def pipe(op: str, src: MemorySpace | None, dst: MemorySpace | None) -> PipeType:
    """The pipe that runs IR op ``op`` whose first tile input is in ``src`` and result in ``dst``
    (the spec's pipe rule; ``none`` and ops without an instruction run on the scalar unit)."""
    spec = op_instruction(op)
    if spec is None:
        return PipeType.S
    name = spec.pipe.resolve(src.loc if src is not None else None, dst.loc if dst is not None else None)
    return PipeType.S if name == "none" else PipeType[name]


def cpp_name(op: str) -> str | None:
    """The pto-isa C++ intrinsic of the instruction ``op`` lowers to."""
    spec = op_instruction(op)
    return None if spec is None else spec.cpp


def pto_name(op: str) -> str | None:
    """The ``.pto`` mnemonic (without ``pto.``) of the instruction ``op`` lowers to."""
    low = LOWERINGS.get(op)
    return None if low is None else low.mnemonic


@dataclass(frozen=True)
class InstructionFacts:
    """What the compiler knows of one instruction, all of it from the spec."""

    mnemonic: str
    pipes: tuple[PipeType, ...]
    dtypes: tuple[DataType, ...]
    cpp: str
    scratch: tuple[str, ...]


def describe(mnemonic: str) -> InstructionFacts:
    """The compiler's view of instruction ``mnemonic``: pipes, dtypes, C++ spelling, scratch operands."""
    spec = instruction(mnemonic)
    pipes = tuple(PipeType.S if p == "none" else PipeType[p] for p in spec.pipe.pipes())
    return InstructionFacts(spec.mnemonic, pipes, dtypes_of(spec.dtypes), spec.cpp,
                            tuple(o.name for o in spec.ins if o.is_scratch))
