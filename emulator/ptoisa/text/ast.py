"""Typed AST of a `.pto` module: what the parser produces and everything downstream consumes.

The AST is syntax with types resolved, nothing more: it knows nothing of the ISA, pipes or memory.
Ops are one generic record (name, operands, results, attributes, regions) so that every op form in
the text format, pretty or generic, lands in the same shape; the few op families with named operand
groups (`make_tensor_view shape=[..]`, `alloc_tile addr=..`) keep them in ``Op.groups``.

Conventions (the parser guarantees them; the emulator relies on them):

* SSA values are referred to by their full text name: ``"%c0"``, ``"%arg0"``, and for multi-result
  definitions ``"%r#0"``, ``"%r#1"``. A def ``%r:2 = ...`` lists results ``["%r#0", "%r#1"]``; a
  def ``%a, %b = ...`` lists ``["%a", "%b"]``. Uses are normalised the same way.
* Operands are SSA names (``str``) or, where the text allows literal integers in operand position
  (``sizes = [32, 32]`` of `subview`/`subset`), Python ``int``.
* DPS tile ops keep ``ins`` and ``outs`` separately (each a list of operands) with their types in
  ``in_types``/``out_types``. Non-DPS ops put their operands in ``operands`` with ``operand_types``
  where the text gives them (may be shorter or empty when the text gives no types).
* Dialect attributes are normalised: ``#pto.pipe<PIPE_V>``, ``<PIPE_V>`` -> ``EnumAttr("pipe",
  "PIPE_V")``; ``#pto<round_mode FLOOR>`` -> ``EnumAttr("round_mode", "FLOOR")``;
  ``#pto.sync_op_type<X>`` -> ``EnumAttr("pipe_event_type", "X")``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoisa.errors import Loc

# --------------------------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class ScalarType:
    """A builtin scalar type: ``index``, ``i1``, ``i8``..``i64``, ``ui8``.., ``f16``, ``bf16``,
    ``f32``, ``f64``, ``f8E4M3``, ``f8E4M3FN``, ``f8E5M2``."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class PtrType:
    """``!pto.ptr<T>``: a GM pointer with element type ``elem``."""

    elem: str

    def __str__(self) -> str:
        return f"!pto.ptr<{self.elem}>"


@dataclass(frozen=True, slots=True)
class TensorViewType:
    """``!pto.tensor_view<?x?xf32>``; ``None`` stands for a dynamic dim ``?``."""

    shape: tuple[int | None, ...]
    elem: str

    def __str__(self) -> str:
        return f"!pto.tensor_view<{_dims(self.shape)}x{self.elem}>"


@dataclass(frozen=True, slots=True)
class PartitionViewType:
    """``!pto.partition_tensor_view<16x64xf32>`` (also the legacy ``!pto.tile_view<..>``)."""

    shape: tuple[int | None, ...]
    elem: str

    def __str__(self) -> str:
        return f"!pto.partition_tensor_view<{_dims(self.shape)}x{self.elem}>"


@dataclass(frozen=True, slots=True)
class TileBufType:
    """``!pto.tile_buf<...>`` in any of its spellings, normalised.

    ``v_row``/``v_col`` are ``None`` when dynamic (``?`` or ``-1``). ``blayout`` is ``row_major`` or
    ``col_major``; ``slayout`` is ``none_box``, ``row_major`` or ``col_major``; ``pad`` and
    ``compact`` are the integer codes.
    """

    loc: str
    dtype: str
    rows: int
    cols: int
    v_row: int | None
    v_col: int | None
    blayout: str = "row_major"
    slayout: str = "none_box"
    fractal: int = 512
    pad: int = 0
    compact: int = 0

    @property
    def valid_text(self) -> str:
        """The valid shape as the text writes it, ``VRxVC`` (``?`` for a dimension known only at run time)."""
        return f"{'?' if self.v_row is None else self.v_row}x{'?' if self.v_col is None else self.v_col}"

    def __str__(self) -> str:
        vr = "?" if self.v_row is None else self.v_row
        vc = "?" if self.v_col is None else self.v_col
        text = (
            f"!pto.tile_buf<loc={self.loc}, dtype={self.dtype}, rows={self.rows}, cols={self.cols}, "
            f"v_row={vr}, v_col={vc}, blayout={self.blayout}, slayout={self.slayout}, "
            f"fractal={self.fractal}, pad={self.pad}"
        )
        return text + (f", compact={self.compact}>" if self.compact else ">")


@dataclass(frozen=True, slots=True)
class MemRefType:
    """``memref<16x16xf16, strided<[?, 1], offset: ?>, #pto.address_space<vec>>``.

    ``space`` is ``gm`` when the text gives none. ``strides``/``offset`` are ``None`` when absent;
    inside them a dynamic entry is ``None``.
    """

    shape: tuple[int | None, ...]
    elem: str
    space: str = "gm"
    strides: tuple[int | None, ...] | None = None
    offset: int | None = None

    def __str__(self) -> str:
        parts = [f"{_dims(self.shape)}x{self.elem}"]
        if self.strides is not None:
            st = ", ".join("?" if s is None else str(s) for s in self.strides)
            off = "?" if self.offset is None else self.offset
            parts.append(f"strided<[{st}], offset: {off}>")
        if self.space != "gm":
            parts.append(f"#pto.address_space<{self.space}>")
        return f"memref<{', '.join(parts)}>"


@dataclass(frozen=True, slots=True)
class OpaqueType:
    """Any other type, kept as its text: ``vector<4xi16>``, ``!pto.pipe``, ``!pto.async_session``,
    ``!pto.eventid_array<4>``, ``tensor<...>``."""

    text: str

    def __str__(self) -> str:
        return self.text


# Tile-level SSA form (seed 002): tile values, memrefs with space/layout, event tokens.
TILE_LOCS = ("Vec", "Mat", "Left", "Right", "Acc", "Bias", "Scale")
TILE_LAYOUTS = ("ND", "DN", "Zz", "Zn", "Nz", "Nn")


@dataclass(frozen=True, slots=True)
class TileType:
    """``tile<32x32xf32>`` or ``tile<16x16xf16, #pto.tile_info<loc=Left, layout=Zz>>``: an SSA tile
    value. ``None`` in ``shape`` is a dynamic dim ``?``; ``loc``/``layout`` are None until written or
    inferred (canonical spellings from :data:`TILE_LOCS` / :data:`TILE_LAYOUTS`)."""

    shape: tuple[int | None, ...]
    elem: str
    loc: str | None = None
    layout: str | None = None

    def __str__(self) -> str:
        info = ""
        if self.loc is not None or self.layout is not None:
            parts = []
            if self.loc is not None:
                parts.append(f"loc={self.loc}")
            if self.layout is not None:
                parts.append(f"layout={self.layout}")
            info = f", #pto.tile_info<{', '.join(parts)}>"
        return f"tile<{_dims(self.shape)}x{self.elem}{info}>"


@dataclass(frozen=True, slots=True)
class TileMemRefType:
    """``pto.memref<1024x1024xf32, {space = #pto.space<gm>, layout = #pto.layout<ND>}>`` or
    ``pto.memref<32x32xf32, strided<[1024, 1], offset: ?>>``. ``strides`` None = the layout's
    contiguous strides; inside ``strides``/``offset`` None is ``?``."""

    shape: tuple[int | None, ...]
    elem: str
    space: str = "gm"
    layout: str = "ND"
    strides: tuple[int | None, ...] | None = None
    offset: int | None = 0

    def __str__(self) -> str:
        parts = [f"{_dims(self.shape)}x{self.elem}"]
        if self.strides is not None:
            st = ", ".join("?" if s is None else str(s) for s in self.strides)
            off = "?" if self.offset is None else self.offset
            parts.append(f"strided<[{st}], offset: {off}>")
        if self.space != "gm" or self.layout != "ND":
            parts.append(f"{{space = #pto.space<{self.space}>, layout = #pto.layout<{self.layout}>}}")
        return f"pto.memref<{', '.join(parts)}>"


@dataclass(frozen=True, slots=True)
class EventType:
    """``!pto.event<producer = #pto.op<TLOAD>, scope = #pto.scope<intra>, eid = 0>``; every
    parameter is optional (``!pto.event`` alone is a token of unstated producer)."""

    producer: str | None = None
    scope: str | None = None
    eid: int | None = None

    def __str__(self) -> str:
        parts = []
        if self.producer is not None:
            parts.append(f"producer = #pto.op<{self.producer}>")
        if self.scope is not None:
            parts.append(f"scope = #pto.scope<{self.scope}>")
        if self.eid is not None:
            parts.append(f"eid = {self.eid}")
        return f"!pto.event<{', '.join(parts)}>" if parts else "!pto.event"


Type = (
    ScalarType | PtrType | TensorViewType | PartitionViewType | TileBufType | MemRefType | OpaqueType
    | TileType | TileMemRefType | EventType
)


def _dims(shape: tuple[int | None, ...]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape)


# ---------------------------------------------------------------------------------------- attributes


class BitPatternFloat(float):
    """A float literal written as its IEEE bit pattern (``0xFF800000 : f32``). MLIR text spells
    infinities and NaN only this way, so a non-finite value of this kind is the literal itself,
    whereas a decimal literal that comes out infinite (``1e400 : f32``) overflowed its type."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class EnumAttr:
    """A dialect enum attribute, e.g. ``EnumAttr("pipe", "PIPE_MTE2")``, ``EnumAttr("cmp", "lt")``,
    ``EnumAttr("kernel_kind", "vector")``, ``EnumAttr("address_space", "vec")``."""

    kind: str
    value: str

    def __str__(self) -> str:
        return f"#pto.{self.kind}<{self.value}>"


@dataclass(frozen=True, slots=True)
class SymbolRef:
    """``@name``."""

    name: str


@dataclass(frozen=True, slots=True)
class UnitAttr:
    """A key with no value, e.g. ``pto.entry`` in ``attributes {pto.entry}``."""


@dataclass(frozen=True, slots=True)
class TypeAttr:
    type: Type


@dataclass(frozen=True, slots=True)
class DenseAttr:
    """``dense<...>``: the literal values in order (a splat is one value)."""

    values: tuple[int | float, ...]


@dataclass(frozen=True, slots=True)
class OpaqueAttr:
    """Any other attribute (``#pto.tile_buf_config<...>``, ``array<i32: 1, 1, 0, 1>``), kept as
    text plus, where it is a key/value list, the parsed entries."""

    text: str
    entries: tuple[tuple[str, Attr], ...] = ()


# Typed integers (`7 : i32`) keep only the value; floats are Python floats; strings are str.
Attr = int | float | bool | str | EnumAttr | SymbolRef | UnitAttr | TypeAttr | DenseAttr | OpaqueAttr | list

Operand = str | int


# ------------------------------------------------------------------------------------ ops and regions


@dataclass(eq=False, slots=True)
class Region:
    """One block of ops with its block arguments (loop variables, iter args, ^bb0 args)."""

    args: list[str] = field(default_factory=list)
    arg_types: list[Type] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class Op:
    """One operation, in whatever syntax it was written.

    ``name`` is the full op name as the text spells it after normalisation: ``pto.tadd``,
    ``pto.tmatmul.acc``, ``arith.constant``, ``scf.for``, ``scf.yield``, ``func.call`` (also for
    the prefix-less ``call``), ``func.return`` (also for ``return``), ``memref.alloc``.

    Per-family operand placement (what the emulator expects):

    * DPS tile ops (``pto.tadd ins(..) outs(..)``): ``ins``/``outs``/``in_types``/``out_types``;
      inline attribute dicts inside ``ins`` are merged into ``attrs``; a trailing ``-> type``
      goes to ``result_types`` with no result names. ``tgetval``'s ``outs : T`` gives
      ``result_types=[T]``.
    * ``arith.*``: ``operands`` in order; ``arith.constant`` has ``attrs["value"]`` (int, float,
      bool or DenseAttr); ``cmpi``/``cmpf`` have ``attrs["predicate"]`` (e.g. ``"slt"``);
      ``result_types`` is always filled (for casts the target type).
    * ``scf.for``: ``operands = [lb, ub, step, *iter_inits]``, ``regions = [body]`` whose ``args``
      are ``[iv, *iter_args]``; ``result_types`` the iter_arg types.
    * ``scf.if``: ``operands = [cond]``, ``regions = [then]`` or ``[then, else]``.
    * ``scf.while``: ``operands = inits``, ``regions = [before, after]`` (before's args are the
      names bound in ``(%i = %c0, ...)``; after's args the ``^bb0`` args).
    * ``scf.yield``/``scf.condition``/``func.return``: ``operands`` (condition first for
      ``scf.condition``).
    * ``func.call``: ``attrs["callee"] = "name"`` (without ``@``), ``operands`` the arguments,
      ``operand_types``/``result_types`` from the signature.
    * ``pto.make_tensor_view``: ``operands = [ptr]``, ``groups = {"shape": [...], "strides": [...]}``.
    * ``pto.partition_view`` / legacy ``pto.subview``: ``operands = [tv]``,
      ``groups = {"offsets": [...], "sizes": [...]}``; ``operand_types = [src type]``,
      ``result_types = [result type]``.
    * ``pto.alloc_tile``: ``groups`` may hold ``"addr"``, ``"valid_row"``, ``"valid_col"`` (each a
      one-element list); ``result_types = [TileBufType]``.
    * ``pto.set_flag``/``wait_flag``/``record_event``/``wait_event``/``barrier_sync``/``get_buf``/
      ``rls_buf`` (bracket lists): ``attrs["args"]`` = the list items in order (EnumAttr or int);
      the ``_dyn`` forms put the runtime id in ``operands``. ``pto.barrier``: ``attrs["pipe"]``.
      ``pto.sync.set``/``sync.wait``: ``attrs["pipe"]`` and the id as ``attrs["id"]`` (int) or in
      ``operands``.
    * ``pto.subset %t[%r, %c] sizes [16, 16]``: ``operands = [t, r, c]``, ``groups = {"sizes":
      [16, 16]}``. ``pto.treshape``/``pto.bitcast``/``pto.tassign``/``set_validshape``/
      ``addptr``/``get_tensor_view_dim``/``load_scalar``/``store_scalar``/``eventid_array_*`` and the
      other small fixed grammars: operands in written order.
    * Ops with a region of their own (``pto.section.cube { ... }``) use ``regions``.
    * Generic form ``"pto.tmov"(%a, %b) <{...}> : (A, B) -> ()``: ``generic = True``, operands and
      ``operand_types`` as written, properties merged into ``attrs``; the emulator maps them to
      ins/outs with the op's declared operand order.
    """

    name: str
    loc: Loc
    results: list[str] = field(default_factory=list)
    result_types: list[Type] = field(default_factory=list)
    operands: list[Operand] = field(default_factory=list)
    operand_types: list[Type] = field(default_factory=list)
    ins: list[Operand] = field(default_factory=list)
    in_types: list[Type] = field(default_factory=list)
    outs: list[Operand] = field(default_factory=list)
    out_types: list[Type] = field(default_factory=list)
    groups: dict[str, list[Operand]] = field(default_factory=dict)
    attrs: dict[str, Attr] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    generic: bool = False
    is_dps: bool = False  # written with ins(...)/outs(...)
    # types written next to keyed operands (`pad_value = %v : f32`, `c2v_consumer_buf = %a : i32`),
    # by group name; only the printer needs them.
    group_types: dict[str, list[Type]] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class Function:
    name: str  # without '@'
    loc: Loc
    args: list[str]
    arg_types: list[Type]
    result_types: list[Type]
    attrs: dict[str, Attr]
    body: Region
    private: bool = False


@dataclass(eq=False, slots=True)
class Module:
    file: str
    functions: list[Function]
    attrs: dict[str, Attr] = field(default_factory=dict)
    loc: Loc | None = None

    def function(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name:
                return f
        return None
