"""Tile shapes the back end warns about: the alignment rules of pto-text-format §5.3.

The assembler accepts these shapes; the back-end library checks them and warns, because the vector
unit moves whole 32-byte blocks (the UB block, the machine file's ``buffers.vec.align``):

- an ND tile (``row_major``, ``none_box``) whose row, ``cols * sizeof(T)``, is not a whole number
  of blocks;
- a DN tile (``col_major``, ``none_box``) whose column, ``rows * sizeof(T)``, is not (so an f32
  ``Rx1`` column vector needs ``R % 8 == 0``).

§5.3's third rule (boxed tiles are whole fractal boxes) is not reported here: kernels written for
the cube routinely hold partial boxes in L1 that the toolchain pads; the compiler and the tile-level
verifier reject partial boxes in what they generate.

The emulator computes such tiles exactly (it models the logical layout), so these are warnings: a
located finding of severity ``warning`` (kind ``alignment``), one per declaring op, which changes
no exit code. They are found statically, from the tile types every op declares, before anything
runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from ptoisa.dtypes import is_known, itemsize
from ptoisa.machine import Machine
from ptoisa.text import ast as A
from pyptoemu.errors import Loc


def alignment_warnings(module: A.Module, machine: Machine) -> list[tuple[str, Loc]]:
    """(message, location) per op that declares a tile type §5.3 warns about, in text order."""
    vec = machine.buffers.get("vec")
    if vec is None:
        return []
    block = vec.align
    found: list[tuple[str, Loc]] = []
    seen: set[tuple] = set()
    for fn in module.functions:
        for op in _walk(fn.body):
            for t in op.result_types:
                if not isinstance(t, A.TileBufType) or not is_known(t.dtype):
                    continue
                key = (op.loc.line, op.loc.col, str(t)) if op.loc else (id(op), str(t))
                problem = tile_alignment_problem(t, block)
                if problem is not None and key not in seen:
                    seen.add(key)
                    found.append((f"{op.name}: {problem} (pto-text-format §5.3: the back end warns)", op.loc))
    return found


def tile_alignment_problem(t: A.TileBufType, block: int) -> str | None:
    """What §5.3 says is misaligned about tile type ``t`` (``block``: bytes per vector block), or
    None when it is aligned."""
    esize = itemsize(t.dtype)
    shape = f"{t.rows}x{t.cols}x{t.dtype}"
    if t.slayout == "none_box" and t.blayout == "row_major":
        if (t.cols * esize) % block:
            return (f"ND tile {shape} has rows of {t.cols * esize} bytes, not a multiple of {block} "
                    f"(cols a multiple of {_per_block(block, esize)} for {t.dtype})")
        return None
    if t.slayout == "none_box":
        if (t.rows * esize) % block:
            return (f"DN tile {shape} has columns of {t.rows * esize} bytes, not a multiple of {block} "
                    f"(rows a multiple of {_per_block(block, esize)} for {t.dtype})")
        return None
    return None  # boxed tiles: the cube side's whole-box rule is the compiler's and tile IR's (an error there)


def _per_block(block: int, esize: int) -> int:
    return max(1, block // esize)


def _walk(region: A.Region) -> Iterator[A.Op]:
    for op in region.ops:
        yield op
        for r in op.regions:
            yield from _walk(r)
