"""Typed records of the instruction specs (``isa_specs/instructions/*.yaml``).

Built once by :mod:`ptoisa.isa.loader`; everything is frozen. Timing formulas are compiled code
objects (parsed and whitelisted at load time); evaluating one runs the code object with the core's
variables, never a string.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from ptoisa.errors import Loc

# Variables the simulator core supplies to every timing formula (see isa_specs/README.md).
FORMULA_VARS: tuple[str, ...] = (
    "elems", "rows", "cols", "bytes", "esize", "src_esize", "dst_esize", "M", "N", "K", "a_esize",
    "row_bytes", "pieces", "bursts", "burst_bytes", "in_place",
)
FORMULA_FUNCS: dict[str, Any] = {"ceil": math.ceil, "floor": math.floor, "min": min, "max": max}
_DEFAULT_VARS: dict[str, float] = dict.fromkeys(FORMULA_VARS, 0)

RULE_KINDS = ("src_dst", "src", "dst")


def rule_key(by: str, src_loc: str | None, dst_loc: str | None) -> str:
    if by == "src":
        return str(src_loc)
    if by == "dst":
        return str(dst_loc)
    return f"{src_loc}->{dst_loc}"


# data: read by the op; scratch: a work tile the op overwrites, not an input; ignored: read on hardware
# but without effect here, as in the reference model (a pre-quant scalar selecting a target-defined
# quantization): a run that passes one gets a warning naming it (pyptoemu.core.verify)
OPERAND_ROLES = ("data", "scratch", "ignored")


@dataclass(frozen=True, slots=True)
class OperandSpec:
    """One operand: its kinds, the memories it may live in (``locs``), whether the form may omit
    it, its role (``scratch`` = a work tile the op overwrites, not an input; ``ignored`` = read, but
    without effect in the emulator's semantics) and, where it is narrower than the entry's
    ``dtypes``, the element dtypes this operand accepts."""

    name: str
    kinds: tuple[str, ...]  # each of tile / view / scalar / index / handle
    locs: tuple[str, ...] | None = None
    optional: bool = False
    role: str = "data"
    dtypes: tuple[str, ...] | None = None

    @property
    def is_scratch(self) -> bool:
        return self.role == "scratch"

    @property
    def is_ignored(self) -> bool:
        return self.role == "ignored"


@dataclass(frozen=True, slots=True)
class AttrSpec:
    """An attribute the op accepts: its type (enum kind like ``round_mode``, or ``bool``/``i32``)
    and the default the semantics assume when it is absent."""

    name: str
    type: str
    default: Any = None
    implemented: tuple[str, ...] | None = None  # the values the emulator executes (None: every value)


@dataclass(frozen=True, slots=True)
class PipeRule:
    """Which pipe executes the op: a fixed pipe (``by is None``), or a table keyed by the source
    loc, the destination loc or ``"src->dst"``. ``none`` = metadata op, no pipe."""

    fixed: str | None = None
    by: str | None = None
    map: dict[str, str] = field(default_factory=dict)
    default: str | None = None
    # keys of ``map`` this machine lacks -> the architectures that have them (YAML ``only_on``)
    elsewhere: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def resolve(self, src_loc: str | None, dst_loc: str | None) -> str:
        if self.by is None:
            return self.fixed or "none"
        key = rule_key(self.by, src_loc, dst_loc)
        if key in self.elsewhere:
            raise ValueError(f"{self.by} '{key}' exists only on {' and '.join(self.elsewhere[key])}")
        pipe = self.map.get(key, self.default)
        if pipe is None:
            known = ", ".join(self.map)
            raise ValueError(f"no pipe for {self.by} '{key}' (rule covers: {known})")
        return pipe

    def pipes(self) -> tuple[str, ...]:
        """Every pipe the rule can produce."""
        out = [self.fixed] if self.by is None else [*self.map.values(), self.default]
        return tuple(dict.fromkeys(p for p in out if p is not None))

    def __str__(self) -> str:
        if self.by is None:
            return str(self.fixed)
        items = ", ".join(f"{k}: {v}" + (f" (only on {'/'.join(self.elsewhere[k])})" if k in self.elsewhere else "")
                          for k, v in self.map.items())
        tail = f", default: {self.default}" if self.default else ""
        return f"by {self.by} {{{items}{tail}}}"


@dataclass(frozen=True, slots=True)
class Formula:
    """One compiled timing expression. ``consts`` = machine params + entry params."""

    text: str
    code: CodeType
    consts: dict[str, Any]

    def __call__(self, variables: dict[str, float]) -> float:
        return eval(self.code, self.consts, variables)


@dataclass(frozen=True, slots=True)
class TimingCase:
    """occupancy / latency formulas; a DMA case may also say what it asks of the shared memory
    system: ``traffic`` (bytes it moves through HBM/L2, short bursts counted at their cost) and
    ``bandwidth`` (its per-core peak in bytes/cycle, the rate its occupancy was figured at)."""

    occupancy: Formula
    latency: Formula
    params: dict[str, float] = field(default_factory=dict)
    traffic: Formula | None = None
    bandwidth: Formula | None = None

    def evaluate(self, variables: dict[str, float]) -> tuple[int, int]:
        full = {**_DEFAULT_VARS, **variables}
        occ = max(0, math.ceil(self.occupancy(full)))
        lat = max(occ, math.ceil(self.latency(full)))
        return occ, lat

    def transfer(self, variables: dict[str, float]) -> tuple[float, float] | None:
        """(traffic bytes, peak bytes/cycle) of a DMA case, None for any other."""
        if self.traffic is None or self.bandwidth is None:
            return None
        full = {**_DEFAULT_VARS, **variables}
        return float(self.traffic(full)), float(self.bandwidth(full))


@dataclass(frozen=True, slots=True)
class Timing:
    """Timing of an instruction: one (occupancy, latency) pair of formulas, or a table of them
    keyed like :class:`PipeRule` (``by`` = ``src``/``dst``/``src_dst``) when the cost depends on
    the data path (DMA ops).

    ``occupancy`` = cycles the instruction holds its pipe; ``latency`` = cycles from its start to
    the moment its writes land (always ``>= occupancy``).
    """

    case: TimingCase | None = None
    by: str | None = None
    cases: dict[str, TimingCase] = field(default_factory=dict)
    default: TimingCase | None = None

    def select(self, src_loc: str | None = None, dst_loc: str | None = None) -> TimingCase:
        """The formula pair for this data path (resolve once when lowering an instruction)."""
        if self.by is None:
            assert self.case is not None
            return self.case
        key = rule_key(self.by, src_loc, dst_loc)
        found = self.cases.get(key, self.default)
        if found is None:
            raise ValueError(f"no timing for {self.by} '{key}' (table covers: {', '.join(self.cases)})")
        return found

    def evaluate(self, variables: dict[str, float], src_loc: str | None = None,
                 dst_loc: str | None = None) -> tuple[int, int]:
        """(occupancy, latency) in whole cycles; missing formula variables count as 0."""
        return self.select(src_loc, dst_loc).evaluate(variables)

    def describe(self) -> list[str]:
        if self.by is None:
            assert self.case is not None
            return [_case_text("", self.case)]
        lines = [_case_text(f"{k}: ", c) for k, c in self.cases.items()]
        if self.default is not None:
            lines.append(_case_text("default: ", self.default))
        return lines


def _case_text(prefix: str, case: TimingCase) -> str:
    params = ", ".join(f"{k}={v:g}" for k, v in case.params.items())
    text = f"{prefix}occupancy = {case.occupancy.text}; latency = {case.latency.text}"
    return text + (f"  [{params}]" if params else "")


SYNTAX_FORMS = ("plain", "bracket", "paren")
GROUP_STYLES = ("spaced", "comma", "bare")


@dataclass(frozen=True, slots=True)
class SyntaxForm:
    """How an op is written where the text format has more than one grammar (pto-text-format §3-§4),
    for the printer; DPS tile ops (``ins(..) outs(..)``) and the generic form need none of it.

    ``form``: ``plain`` (operands after the name), ``bracket`` (``pto.set_flag[<a>, <b>, %id]``) or
    ``paren`` (``pto.tpush(%t, %p : TB, !pto.pipe)``). ``attrs_in_ins``: a DPS op's attribute dict
    sits inside ``ins(...)`` after the last operand. ``attr_dict_first``: a paren op's dict comes
    before the parentheses. ``operand_types``: ``each`` writes ``%v : T`` per paren operand, ``list``
    one ``: T, T`` after them. ``indexed``: ``(base, count)`` writes operands ``%base[%i, ...]`` from
    operand ``base`` on (``count`` None = all the rest). ``groups``: keyed operand groups separated by
    spaces (``spaced``), by commas after the operands (``comma``), or written ``key [..]`` (``bare``).
    ``scratch_last``: when the optional trailing scratch operand is written, it is the last ``ins``
    operand whatever other optional ones are left out (``tmrgsort ins(%s0, %s1, %tmp)``, §4.11).
    """

    form: str = "plain"
    attrs_in_ins: bool = False
    scratch_last: bool = False
    attr_dict_first: bool = False
    operand_types: str = "list"
    indexed: tuple[int, int | None] | None = None
    groups: str = "spaced"


PLAIN_SYNTAX = SyntaxForm()


@dataclass(frozen=True, slots=True)
class InstrSpec:
    mnemonic: str  # without `pto.`, e.g. `tmatmul.acc`
    family: str
    file: str
    description: str
    ins: tuple[OperandSpec, ...]
    outs: tuple[OperandSpec, ...]
    dtypes: tuple[str, ...]
    pipe: PipeRule
    domain: str  # dst | src | none
    timing: Timing
    semantics: str | None
    implemented: bool
    attrs: dict[str, AttrSpec] = field(default_factory=dict)
    line: int = 0
    semantics_loc: Loc | None = None
    constraints: tuple[str, ...] = ()  # checked by the core on the operands (e.g. same_dtype)
    # those of ``constraints`` that hold on the loaded machine's architecture only (target_constraints)
    target_constraints: tuple[str, ...] = ()
    cpp: str = ""  # the pto-isa C++ intrinsic (``TMATMUL_ACC``)
    # legal conversions (src dtype -> dst dtypes) of a converting op such as tcvt
    conversions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    syntax: SyntaxForm = PLAIN_SYNTAX  # how the text writes it, where more than one grammar exists
    targets: tuple[str, ...] = ()  # the architectures that have the op (machine ``arch``); () = all
    # the pipes an op that names its pipe (sync.set <PIPE_X>) may name on the loaded machine; () = any
    named_pipes: tuple[str, ...] = ()
    # legal element-type combinations of named operands (matmul: (a, b, c) in (i8, i8, i32), ...)
    dtype_tuples: DtypeTuples | None = None

    def is_required(self, operand: OperandSpec) -> bool:
        """Whether a form of the op must write ``operand``: a non-optional one, or the optional
        scratch tile on a target whose ``needs_scratch`` constraint requires it (A2/A3 row
        reductions and selects, pto-text-format §4.0)."""
        return not operand.optional or (operand.is_scratch and "needs_scratch" in self.constraints)

    def split_generic(self, operands: list, types: list) -> tuple[list, list, list, list] | None:
        """(ins, outs, in_types, out_types) of the op written in the MLIR generic form, whose operands
        follow the declared argument order (pto-text-format §1.4): the required inputs, the outputs,
        then the optional inputs (``tadd``: src0, src1, dst; ``tmov``: src, dst, fp, preQuantScalar).
        None when there are fewer operands than required inputs and outputs."""
        n_in = sum(1 for o in self.ins if not o.optional)
        n_out = len(self.outs)
        if len(operands) < n_in + n_out:
            return None
        ins = operands[:n_in] + operands[n_in + n_out:]
        in_types = types[:n_in] + types[n_in + n_out:] if types else []
        return ins, operands[n_in:n_in + n_out], in_types, types[n_in:n_in + n_out] if types else []

    @property
    def is_core(self) -> bool:
        """Executed by the simulator core itself (``core.*`` semantics), not a NumPy function."""
        return self.semantics is not None and self.semantics.startswith("core.")


@dataclass(frozen=True, slots=True)
class DtypeTuples:
    """``dtype_tuples: {operands: [a, b, c], legal: [[i8, i8, i32], ...]}``: the operands, named as in
    ``ins``/``outs``, must have one of the listed element-type combinations (an absent optional operand
    is not checked). For ops whose legal dtypes depend on each other, as matmul's (§4.8)."""

    operands: tuple[str, ...]
    legal: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class ISA:
    instructions: dict[str, InstrSpec]
    machine_name: str = ""
    # §2.9: the values of each enum kind an attribute may have as its type (``round_mode`` ->
    # ``("NONE", "RINT", ...)``), from the family files' ``attr_kinds``; compared without case
    attr_kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def get(self, mnemonic: str) -> InstrSpec | None:
        """Look up by mnemonic: case-insensitive, with or without ``pto.`` (``TROWSUM``,
        ``pto.tmatmul.acc``, ``tadd``)."""
        key = mnemonic.strip().lower()
        key = key.removeprefix("pto.")
        return self.instructions.get(key)

    def __getitem__(self, mnemonic: str) -> InstrSpec:
        spec = self.get(mnemonic)
        if spec is None:
            raise KeyError(mnemonic)
        return spec

    def __contains__(self, mnemonic: object) -> bool:
        return isinstance(mnemonic, str) and self.get(mnemonic) is not None

    def __len__(self) -> int:
        return len(self.instructions)

    def families(self) -> dict[str, list[InstrSpec]]:
        out: dict[str, list[InstrSpec]] = {}
        for spec in self.instructions.values():
            out.setdefault(spec.family, []).append(spec)
        return out
