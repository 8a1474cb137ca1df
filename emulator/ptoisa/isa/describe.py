"""Human-readable listings of the ISA for ``pyptoemu isa list`` / ``pyptoemu isa show OP``."""

from __future__ import annotations

from ptoisa.isa.spec import ISA, InstrSpec, OperandSpec


def _operand(op: OperandSpec) -> str:
    text = f"{op.name}: {'|'.join(op.kinds)}"
    if op.locs:
        text += f" @{'/'.join(op.locs)}"
    return f"[{text}]" if op.optional else text


def format_isa_list(isa: ISA) -> str:
    """One line per instruction, grouped by family: mnemonic, pipe, status, description."""
    lines: list[str] = []
    total = len(isa)
    done = sum(1 for s in isa.instructions.values() if s.implemented)
    lines.append(f"{total} instructions, {done} implemented (machine {isa.machine_name or '-'})")
    for family, specs in isa.families().items():
        lines.append("")
        lines.append(f"{family} ({len(specs)})")
        width = max(len(s.mnemonic) for s in specs)
        for spec in specs:
            pipe = spec.pipe.fixed if spec.pipe.by is None else f"by {spec.pipe.by}"
            mark = " " if spec.implemented else "-"
            desc = spec.description if len(spec.description) <= 72 else spec.description[:69] + "..."
            lines.append(f"  {mark} {spec.mnemonic:<{width}}  {pipe:<11} {desc}")
    lines.append("")
    lines.append("('-' = parses but is not executed yet)")
    return "\n".join(lines)


def format_instruction(spec: InstrSpec) -> str:
    """Everything the spec says about one instruction."""
    lines = [
        f"pto.{spec.mnemonic}  ({spec.family}; {spec.file}:{spec.line})",
        f"  {spec.description}",
        f"  ins:         {', '.join(_operand(o) for o in spec.ins) or '-'}",
        f"  outs:        {', '.join(_operand(o) for o in spec.outs) or '-'}",
        f"  dtypes:      {' '.join(spec.dtypes) or '-'}",
        f"  pipe:        {spec.pipe}",
        f"  domain:      {spec.domain} valid region" if spec.domain != "none" else "  domain:      none",
    ]
    timing = spec.timing.describe()
    lines.append(f"  timing:      {timing[0]}")
    lines.extend(f"               {t}" for t in timing[1:])
    if spec.conversions:
        lines.append("  converts:    " + "; ".join(f"{s} -> {' '.join(d)}" for s, d in spec.conversions.items()))
    if spec.dtype_tuples:
        t = spec.dtype_tuples
        lines.append(f"  dtype sets:  ({', '.join(t.operands)}) in " + "; ".join(f"({', '.join(r)})" for r in t.legal))
    if spec.constraints:
        lines.append(f"  constraints: {', '.join(spec.constraints)}")
    if spec.targets:
        lines.append(f"  targets:     only {' and '.join(spec.targets)}")
    if spec.attrs:
        attrs = ", ".join(
            f"{a.name}: {a.type}" + (f" = {a.default}" if a.default is not None else "")
            + (f" (emulated: {' '.join(a.implemented)} only)" if a.implemented is not None else "")
            for a in spec.attrs.values()
        )
        lines.append(f"  attrs:       {attrs}")
    lines.append(f"  semantics:   {spec.semantics or '-'}")
    lines.append(f"  C++:         {spec.cpp}")
    lines.append(f"  implemented: {'yes' if spec.implemented else 'no'}")
    return "\n".join(lines)
