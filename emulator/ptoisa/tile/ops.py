"""The op vocabulary of the tile-level SSA form: what each ``pto.tile.*`` op is, as data.

An op is its shape rule (how operand shapes relate to the result's), the level-2 instruction it
lowers to (whose ISA record gives pipe, dtypes, legal locations and scratch operands), and for the
``mov`` family the source and destination locations the name fixes. The vector ops are not listed
one by one: ``pto.tile.X`` is the vector instruction ``tX`` of the ISA records, its rule read from
the record's family and name, so a new vector instruction in ``isa_specs`` is a new tile op.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoisa.isa.spec import ISA, InstrSpec
from ptoisa.text.tile_syntax import TILE_PREFIX

# Tile-level location name -> the level-2 tile_buf `loc`.
LOC_TO_BUF = {"Vec": "vec", "Mat": "mat", "Left": "left", "Right": "right", "Acc": "acc", "Bias": "bias",
              "Scale": "scaling"}
BUF_TO_LOC = {v: k for k, v in LOC_TO_BUF.items()}
# Layout name -> (blayout, slayout) of the tile_buf (pto-text-format.md §5.3: ND, DN, NZ, ZN, ZZ).
LAYOUT_TO_BUF = {"ND": ("row_major", "none_box"), "DN": ("col_major", "none_box"),
                 "Nz": ("col_major", "row_major"), "Zn": ("row_major", "col_major"),
                 "Zz": ("row_major", "row_major"), "Nn": ("col_major", "col_major")}

# mov.X: (source loc, destination loc).
MOV_KINDS = {"m2l": ("Mat", "Left"), "m2r": ("Mat", "Right"), "m2b": ("Mat", "Bias"), "m2s": ("Mat", "Scale"),
             "a2v": ("Acc", "Vec"), "v2v": ("Vec", "Vec")}
# Vector families whose ops map generically (`pto.tile.X` -> `tX`).
_VECTOR_FAMILIES = ("elementwise", "unary", "tile_scalar", "reduction", "expand")
_SKIP = frozenset({"trowexpand", "tcolexpand", "tdivs", "taxpy", "taddsc", "tsubsc",
                   "trowargmax", "trowargmin", "tcolargmax", "tcolargmin"})


@dataclass(frozen=True, slots=True)
class TileOpDef:
    """``rule`` is one of load, store, mov, extract, matmul, matmul_acc, matmul_bias, cvt, same,
    scalar, row_reduce, col_reduce, row_expand, col_expand. ``tiles``/``scalars`` count the tile
    and scalar operands in written order (tiles first); ``scratch`` names the instruction's required
    temporary tiles, which bufferization provides."""

    name: str
    mnemonic: str
    rule: str
    tiles: int
    scalars: int = 0
    src_loc: str | None = None
    dst_loc: str | None = None
    scratch: tuple[str, ...] = ()


_FIXED = {
    "pto.tile.load": TileOpDef("pto.tile.load", "tload", "load", 0),
    "pto.tile.store": TileOpDef("pto.tile.store", "tstore", "store", 1),
    "pto.tile.extract": TileOpDef("pto.tile.extract", "textract", "extract", 1),
    "pto.tile.matmul": TileOpDef("pto.tile.matmul", "tmatmul", "matmul", 2),
    "pto.tile.matmul.acc": TileOpDef("pto.tile.matmul.acc", "tmatmul.acc", "matmul_acc", 3),
    "pto.tile.matmul.bias": TileOpDef("pto.tile.matmul.bias", "tmatmul.bias", "matmul_bias", 3),
    "pto.tile.cvt": TileOpDef("pto.tile.cvt", "tcvt", "cvt", 1),
    **{f"pto.tile.mov.{k}": TileOpDef(f"pto.tile.mov.{k}", "tmov", "mov", 1, src_loc=s, dst_loc=d)
       for k, (s, d) in MOV_KINDS.items()},
}


def tile_op(name: str, isa: ISA) -> TileOpDef | None:
    """The definition of tile op ``name`` (``pto.tile.add``), None when there is no such op."""
    fixed = _FIXED.get(name)
    if fixed is not None:
        return fixed
    if not name.startswith(TILE_PREFIX):
        return None
    mnemonic = "t" + name[len(TILE_PREFIX):]
    spec = isa.get(mnemonic)
    if spec is None or spec.family not in _VECTOR_FAMILIES or mnemonic in _SKIP or not spec.implemented:
        return None
    return _vector_op(name, spec)


def _vector_op(name: str, spec: InstrSpec) -> TileOpDef:
    required = [o for o in spec.ins if spec.is_required(o)]
    scratch = tuple(o.name for o in required if o.name == "tmp")
    operands = [o for o in required if o.name != "tmp"]
    tiles = sum(1 for o in operands if "tile" in o.kinds)
    scalars = len(operands) - tiles
    m = spec.mnemonic
    if spec.family == "reduction":
        rule = "row_reduce" if m.startswith("trow") else "col_reduce"
    elif spec.family == "expand":
        rule = "row_expand" if m.startswith("trow") else "col_expand"
    elif scalars:
        rule = "scalar"
    else:
        rule = "same"
    return TileOpDef(name, m, rule, tiles, scalars, scratch=scratch)


def producer_opcode(op_def: TileOpDef, src_loc: str | None) -> str:
    """The opcode an event token of this op names (``TLOAD``, ``TADD``, ``TSTORE_VEC``...)."""
    if op_def.rule == "store":
        return f"TSTORE_{(src_loc or 'Vec').upper()}"
    return op_def.mnemonic.upper().replace(".", "_")
