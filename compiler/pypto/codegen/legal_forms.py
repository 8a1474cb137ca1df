"""The operand forms an instruction requires, decided once for both code generators.

The IR is free to keep forms the instructions do not take:

* ``[R, 1]`` vectors (row reductions' results) are DN column vectors, the layout the reductions and the
  ``trowexpand*`` ops read, but an elementwise tile-tile op takes ND tiles only (spec constraint
  ``nd_tiles``, pto-text-format §4.3). The op runs on the ``[1, R]`` ND row vectors that are the same
  bytes (§5.2: a ``16x1`` col_major vector is a ``1x16`` row_major one; no data moves).
* The sources of an elementwise op must have the destination's valid region (``same_valid``, §4.3),
  while the IR gives a result of two tails the region where both are valid. A source is then read
  through an alias with the destination's valid region: the op reads the sources at the destination's
  ``(i, j)`` anyway, so the numbers are the same.
* A reduction or expand whose valid rows (``rows_match``) or columns (``cols_match``) must be the
  source's (§4.6, §4.7) may have a destination with more (a broadcast into a full-size temporary). The
  op then writes through an alias of its destination with the source's: it writes the elements the
  source defines; the rest were never meaningful.

:func:`operand_forms` says through which alias type (an IR ``TileType`` on the same buffer) each operand
of one instruction is read and its destination written. The ``.pto`` generator realises an alias with
``pto.treshape`` (plus ``pto.set_validshape`` for a run-time valid region), the C++ generator with a
``Tile`` of that type bound by ``TRESHAPE``: one decision, two spellings, so the back ends cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pypto.codegen.common import tile_dims, valid_dims
from pypto.dtype import DataType
from pypto.enums import TileLayout
from pypto.ir import expr as E
from pypto.ir.expr import static_int
from pypto.ir.types import TileType
from pypto.ops import isa

# The constraints this module makes hold (the ISA spec's names, isa_specs/README.md).
HANDLED = frozenset({"nd_tiles", "same_valid", "rows_match", "cols_match"})


@dataclass(frozen=True)
class Forms:
    """Per ``ins`` operand of the instruction the alias type it is read through (None: as it is), and
    the alias type its destination is written through (None: as it is)."""

    ins: tuple[TileType | None, ...]
    out: TileType | None

    @property
    def any(self) -> bool:
        return self.out is not None or any(f is not None for f in self.ins)


def operand_forms(mnemonic: str, ins: list, out: Any) -> Forms:
    """The forms instruction ``mnemonic`` needs for operands ``ins`` (its ``ins`` in order: tiles and
    scalars) and destination ``out`` (the IR variable it defines)."""
    spec = isa.instruction(mnemonic)
    constraints = set(spec.constraints) & HANDLED
    forms: list[TileType | None] = [None] * len(ins)
    out_type = getattr(out, "type", None)
    if not constraints or not isinstance(out_type, TileType):
        return Forms(tuple(forms), None)
    tiles = [i for i, a in enumerate(ins) if isinstance(getattr(a, "type", None), TileType)]
    dst: TileType | None = None
    if "nd_tiles" in constraints or "same_valid" in constraints:
        dst = _elementwise(spec, constraints, ins, tiles, out_type, forms)
    if ("rows_match" in constraints or "cols_match" in constraints) and tiles:
        dst = _matched_dst(constraints, ins[tiles[0]].type, out_type)
    return Forms(tuple(forms), dst)


def _elementwise(spec: Any, constraints: set, ins: list, tiles: list[int], out: TileType,
                 forms: list[TileType | None]) -> TileType | None:
    """Fill ``forms`` for an elementwise op; return the destination's form."""
    dst: TileType | None = None
    types = {i: ins[i].type for i in tiles}
    if "nd_tiles" in constraints and column_vector(out):
        for i in tiles:
            if column_vector(types[i]):
                types[i] = forms[i] = row_vector(types[i])
        dst = row_vector(out)
    dst_valid = valid_pair(dst if dst is not None else out)
    if "same_valid" in constraints:
        for i in tiles:
            scratch = i < len(spec.ins) and spec.ins[i].is_scratch
            if not scratch and not same_valid(valid_pair(types[i]), dst_valid):
                forms[i] = with_valid(types[i], dst_valid)
    return dst


def _matched_dst(constraints: set, src: TileType, out: TileType) -> TileType | None:
    have, want = valid_pair(out), valid_pair(src)
    target = (want[0] if "rows_match" in constraints else have[0], want[1] if "cols_match" in constraints else have[1])
    return None if same_valid(target, have) else with_valid(out, target)


# ----------------------------------------------------------------------------- facts and aliases


def column_vector(t: TileType) -> bool:
    """A DN column vector: ``[R, 1]`` (R > 1), ``col_major``, not boxed (what row reductions write)."""
    rows, cols = tile_dims(t)
    view = t.view
    return cols == 1 and rows > 1 and view.blayout is TileLayout.col_major and view.slayout is TileLayout.none_box


def valid_pair(t: TileType) -> tuple:
    """A tile's valid region as the 2-D ``(rows, cols)`` it is stored as (leading dims folded into the
    rows), each an int or the expression giving it at run time."""
    vs = list(t.valid_shape)
    if len(vs) == 1:
        vs = [1, *vs]
    rows: Any = valid_dims(t)[0]
    if rows is None:  # a run-time extent among the leading dims: their product
        rows = vs[0]
        for d in vs[1:-1]:
            rows = E.Mul(rows, d, DataType.INDEX)
    cols: Any = vs[-1]
    return tuple(static_int(d) if static_int(d) is not None else d for d in (rows, cols))


def same_valid(a: tuple, b: tuple) -> bool:
    """Equal valid regions: equal static dims, or the same run-time expression."""
    return all(x == y if isinstance(x, int) and isinstance(y, int) else x is y for x, y in zip(a, b, strict=True))


def with_valid(t: TileType, valid: tuple) -> TileType:
    """``t`` as the 2-D tile it is stored as, with valid region ``valid``."""
    rows, cols = tile_dims(t)
    return replace(t, shape=(rows, cols), tile_view=replace(t.view, valid_shape=tuple(valid)))


def row_vector(t: TileType) -> TileType:
    """The ND ``[1, R]`` view of a DN ``[R, 1]`` column vector (the same bytes, §5.2), valid ``1 x VR``."""
    rows, _ = tile_dims(t)
    vr = valid_pair(t)[0]
    view = replace(t.view, valid_shape=(1, vr), blayout=TileLayout.row_major)
    return replace(t, shape=(1, rows), tile_view=view)
