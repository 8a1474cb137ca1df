"""Placement: on which kind of core a kernel runs, decided from its text before the run.

A2/A3 has cube cores (AIC) and vector cores (AIV) but no core with both. The rules (issue 7,
pto-text-format §4.13):

* a function marked ``pto.kernel_kind = cube`` runs on an AIC, ``vector`` on an AIV;
* an entry that calls a cube kernel and a vector kernel (or has ``section.cube`` and
  ``section.vector`` bodies) is a mixed kernel: each block runs on one core group, the cube build on
  the AIC and the vector build on both AIVs, concurrently;
* a function without a kind runs where its buffers live (vec tiles: AIV; mat/left/right/acc/bias/
  scaling tiles: AIC; none: AIV);
* a function that needs cube and vector buffers at once, outside sections and kernels of a kind,
  runs on a combined core (the older organisation the text format can still express), with a
  one-line notice that A2/A3 has no such core.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoisa.text import ast as A
from pyptoemu.core.pipenames import EVENT_CLASS_PIPE, PIPE_NAMES

VECTOR_LOCS = frozenset({"vec"})
CUBE_LOCS = frozenset({"mat", "left", "right", "acc", "bias", "scaling"})
# FIFO ops name their side even when they allocate nothing (§4.13).
CUBE_OPS = frozenset({"pto.aic_initialize_pipe", "pto.tpush_to_aiv", "pto.tpop_from_aiv", "pto.tfree_from_aiv"})
VECTOR_OPS = frozenset({"pto.aiv_initialize_pipe", "pto.tpush_to_aic", "pto.tpop_from_aic", "pto.tfree_from_aic"})
# Pipes only one side has (machine-a2a3.md, core organisation); flags and barriers name them.
PIPE_SIDE = {"V": "vector", "M": "cube", "MTE1": "cube", "FIX": "cube"}


def kernel_kind(fn: A.Function) -> str | None:
    """``cube`` / ``vector`` from ``pto.kernel_kind``, else None."""
    attr = fn.attrs.get("pto.kernel_kind")
    if isinstance(attr, A.EnumAttr):
        return attr.value if attr.value in ("cube", "vector") else None
    if isinstance(attr, str) and attr in ("cube", "vector"):
        return attr
    return None


@dataclass(frozen=True, slots=True)
class Launch:
    """``mode``: ``aiv`` / ``aic`` (one core per block), ``group`` (AIC + 2 AIV per block) or
    ``combined`` (one combined core per block); ``notice``: a line for the user, or None."""

    mode: str
    notice: str | None = None


@dataclass(slots=True)
class _Needs:
    plain: set  # "cube" / "vector" needed outside sections and kernels of a kind
    sided: set  # sides reached through sections and calls of kernels with a kind


def _pipe_sides(op: A.Op) -> set:
    """Sides of the pipes a flag, barrier or sync op names (``set_flag[<PIPE_M>, <PIPE_V>, ...]``)."""
    items = op.attrs.get("args")
    attrs = list(items) if isinstance(items, list) else []
    if "pipe" in op.attrs:
        attrs.append(op.attrs["pipe"])
    out = set()
    for a in attrs:
        if isinstance(a, A.EnumAttr):
            pipe = PIPE_NAMES.get(a.value) or EVENT_CLASS_PIPE.get(a.value)
            if pipe in PIPE_SIDE:
                out.add(PIPE_SIDE[pipe])
    return out


def _side_of_op(op: A.Op) -> set:
    if op.name in CUBE_OPS:
        return {"cube"}
    if op.name in VECTOR_OPS:
        return {"vector"}
    sides = _pipe_sides(op) if ("args" in op.attrs or "pipe" in op.attrs) else set()
    for t in list(op.result_types) + list(op.out_types):
        loc = t.loc if isinstance(t, A.TileBufType) else (
            t.space if isinstance(t, A.MemRefType) and t.space != "gm" else None)
        if loc in VECTOR_LOCS or loc == "ub":
            sides.add("vector")
        if loc in CUBE_LOCS:
            sides.add("cube")
    return sides


def _walk(module: A.Module, region: A.Region, needs: _Needs, side: str | None, seen: set) -> None:
    for op in region.ops:
        name = op.name
        if name in ("pto.section.cube", "pto.section.vector"):
            inner = name[12:]
            needs.sided.add(inner)
            for r in op.regions:
                _walk(module, r, needs, inner, seen)
            continue
        if name == "func.call":
            callee = module.function(str(op.attrs.get("callee", "")).lstrip("@"))
            if callee is not None:
                kind = kernel_kind(callee)
                if kind is not None:
                    needs.sided.add(kind)
                elif (callee.name, side) not in seen:
                    seen.add((callee.name, side))
                    _walk(module, callee.body, needs, side, seen)
            continue
        s = _side_of_op(op)
        if s:
            (needs.sided if side is not None else needs.plain).update(s)
        for r in op.regions:
            _walk(module, r, needs, side, seen)


def plan_launch(module: A.Module, fn: A.Function, machine: str) -> Launch:
    """Where each block of the entry ``fn`` runs on the ``machine`` (its name, for the notice)."""
    needs = _Needs(set(), set())
    declared = kernel_kind(fn)
    _walk(module, fn.body, needs, None, {(fn.name, None)})
    if declared is not None:
        other = "vector" if declared == "cube" else "cube"
        if other in needs.plain:
            return Launch("combined", f"@{fn.name} is marked pto.kernel_kind {declared} but uses {other} "
                                      f"buffers: it runs on a combined core, which the {machine} chip does not have")
        return Launch("aic" if declared == "cube" else "aiv")
    if needs.plain == {"cube", "vector"}:
        return Launch("combined", f"@{fn.name} uses cube and vector buffers in one function: it runs on a "
                                  f"combined core, which the {machine} chip does not have (split it into cube and vector "
                                  f"kernels, or sections, to run on an AIC and its AIVs)")
    sides = needs.plain | needs.sided
    if needs.sided and sides == {"cube", "vector"}:
        return Launch("group")
    return Launch("aic" if sides == {"cube"} else "aiv")
