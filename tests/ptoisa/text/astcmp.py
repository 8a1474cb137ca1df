"""Field-by-field AST comparison that ignores source locations (for round-trip tests)."""

from __future__ import annotations

from ptoisa.text.ast import Function, Module, Op, Region


def op_diff(a: Op, b: Op, path: str) -> str | None:
    for field in Op.__slots__:
        if field == "loc":
            continue
        va, vb = getattr(a, field), getattr(b, field)
        if field == "regions":
            if len(va) != len(vb):
                return f"{path}.regions: {len(va)} != {len(vb)}"
            for i, (ra, rb) in enumerate(zip(va, vb, strict=False)):
                diff = region_diff(ra, rb, f"{path}.regions[{i}]")
                if diff:
                    return diff
        elif va != vb:
            return f"{path}.{field}: {va!r} != {vb!r}"
    return None


def region_diff(a: Region, b: Region, path: str) -> str | None:
    if a.args != b.args or a.arg_types != b.arg_types:
        return f"{path}.args: {a.args}/{a.arg_types} != {b.args}/{b.arg_types}"
    if len(a.ops) != len(b.ops):
        return f"{path}: {len(a.ops)} ops != {len(b.ops)} ops"
    for i, (oa, ob) in enumerate(zip(a.ops, b.ops, strict=False)):
        diff = op_diff(oa, ob, f"{path}.ops[{i}]({oa.name})")
        if diff:
            return diff
    return None


def function_diff(a: Function, b: Function, path: str) -> str | None:
    for field in ("name", "args", "arg_types", "result_types", "attrs", "private"):
        if getattr(a, field) != getattr(b, field):
            return f"{path}.{field}: {getattr(a, field)!r} != {getattr(b, field)!r}"
    return region_diff(a.body, b.body, f"{path}.body")


def module_diff(a: Module, b: Module) -> str | None:
    """None when equal (locations ignored), else a path to the first difference."""
    if a.attrs != b.attrs:
        return f"module.attrs: {a.attrs!r} != {b.attrs!r}"
    if len(a.functions) != len(b.functions):
        return f"module: {len(a.functions)} functions != {len(b.functions)}"
    for fa, fb in zip(a.functions, b.functions, strict=False):
        diff = function_diff(fa, fb, f"@{fa.name}")
        if diff:
            return diff
    return None
