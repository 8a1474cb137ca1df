"""Read generated pto-isa C++ precisely and report the instructions whose operands are in a form the
instruction does not take (the ISA spec's constraints, pto-text-format §4.3, §4.6, §4.7):

* ``nd_tiles``: an elementwise tile-tile instruction on a ``ColMajor`` ``[R, 1]`` column vector;
* ``same_valid``: a source of an elementwise instruction whose valid extents are not the destination's;
* ``rows_match`` / ``cols_match``: a reduction or expand whose destination's valid rows / columns are not
  the source's.

The C++ generator declares every tile as ``using nType = Tile<TileType::Vec, T, R, C, BLayout::L, -1, -1,
...>;`` and constructs it with its valid extents, ``nType n(VR, VC);``; a run-time extent is set again
where the tile is defined (``n = nType(VR, VC);``). Reading the body in order therefore gives every
tile's type and current valid extents at each instruction (extents compared as C++ text: ``10`` and
``valid`` are different, ``valid`` and ``valid`` the same).
"""

from __future__ import annotations

import re

from pypto.ops import isa

_TYPE = re.compile(r"^using (\w+)Type = Tile<TileType::\w+, [\w:]+, (\d+), (\d+), BLayout::(\w+),")
_DECL = re.compile(r"^(\w+)Type (\w+)\((.*)\);$")
_RESET = re.compile(r"^(\w+) = (\w+)Type\((.*)\);$")
_CALL = re.compile(r"^([A-Z][A-Z0-9_]*)(?:<[^>]*>)?\((.*)\);$")


def _constraint_table() -> dict[str, tuple[frozenset, frozenset]]:
    """C++ intrinsic -> (the form constraints of its instruction, the positions of its scratch ``ins``),
    over every instruction the compiler emits."""
    table: dict[str, tuple[frozenset, frozenset]] = {}
    for low in isa.LOWERINGS.values():
        spec = isa.instruction(low.mnemonic)
        keys = frozenset(spec.constraints) & {"nd_tiles", "same_valid", "rows_match", "cols_match"}
        if keys and spec.cpp:
            table[spec.cpp.upper()] = (keys, frozenset(i for i, o in enumerate(spec.ins) if o.is_scratch))
    return table


def split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments (commas inside parentheses or template brackets stay)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<{":
            depth += 1
        elif ch in ")>}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def illegal_forms(text: str) -> list[str]:
    """Every instruction of C++ ``text`` whose operands break a form constraint, as readable lines."""
    table = _constraint_table()
    types: dict[str, tuple[int, int, str]] = {}  # type name -> (rows, cols, BLayout)
    tiles: dict[str, dict] = {}
    problems: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if m := _TYPE.match(line):
            types[m.group(1)] = (int(m.group(2)), int(m.group(3)), m.group(4))
        elif (m := _DECL.match(line)) and m.group(1) in types:
            rows, cols, layout = types[m.group(1)]
            tiles[m.group(2)] = {"rows": rows, "cols": cols, "layout": layout, "valid": tuple(split_args(m.group(3)))}
        elif (m := _RESET.match(line)) and m.group(1) in tiles:
            tiles[m.group(1)]["valid"] = tuple(split_args(m.group(3)))
        elif (m := _CALL.match(line)) and m.group(1) in table:
            args = [a for a in split_args(m.group(2)) if a in tiles]
            keys, scratch = table[m.group(1)]
            problems += _check(keys, scratch, [tiles[a] | {"name": a} for a in args], line)
    return problems


def _check(keys: frozenset, scratch: frozenset, operands: list[dict], line: str) -> list[str]:
    if not operands:
        return []
    dst, srcs = operands[0], [t for i, t in enumerate(operands[1:]) if i not in scratch]
    out = []
    if "nd_tiles" in keys:
        out += [f"{line}: {t['name']} is a ColMajor [{t['rows']}, 1] column vector" for t in operands
                if t["layout"] == "ColMajor" and t["cols"] == 1 and t["rows"] > 1]
    if "same_valid" in keys:
        out += [f"{line}: {t['name']} valid {t['valid']} != dst {dst['valid']}" for t in srcs
                if t["valid"] != dst["valid"]]
    if srcs and "rows_match" in keys and srcs[0]["valid"][0] != dst["valid"][0]:
        out.append(f"{line}: valid rows {srcs[0]['valid'][0]} != dst's {dst['valid'][0]}")
    if srcs and "cols_match" in keys and srcs[0]["valid"][1] != dst["valid"][1]:
        out.append(f"{line}: valid cols {srcs[0]['valid'][1]} != dst's {dst['valid'][1]}")
    return out
