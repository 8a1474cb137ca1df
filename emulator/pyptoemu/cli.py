"""Command line of the emulator: ``pyptoemu run | lower | sync | isa``.

The ``pyptoemu`` console script is ``pyptocli.main``, which adds ``compile`` (the PyPTO compiler)
through ``extra`` below, so this package never imports the compiler.

Exit codes: 0 success, 1 the kernel faulted (deadlock, bounds, capacity, an error finding such as a
race), 2 bad input (usage, parse, spec errors). Errors print ``file:line:col: message`` on stderr,
never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyptoemu import __version__
from pyptoemu.errors import InputError, PtoError

PIPE_ORDER = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors: exit 2 without a traceback
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _pairs(items: list[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"{flag} expects argN=VALUE, got '{item}'")
        out[key.strip()] = value
    return out


@dataclass(frozen=True)
class Subcommand:
    """A subcommand another package adds to ``pyptoemu`` (``compile`` from the compiler)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]


def build_parser(extra: Sequence[Subcommand] = ()) -> argparse.ArgumentParser:
    p = _Parser(prog="pyptoemu", description="Emulate PTO-ISA kernels on a SimPy model of an AI core.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="run a .pto kernel")
    r.add_argument("kernel")
    r.add_argument("--entry")
    r.add_argument("--input", action="append", metavar="argN=FILE.npy")
    r.add_argument("--arg", action="append", metavar="argN=VALUE")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--output-dir")
    r.add_argument("--trace", nargs="?", const="", default=None, metavar="FILE")
    r.add_argument("--machine", default=None,
                   help="machine name or YAML file (default: the module's pto.target_arch, else a2a3)")
    r.add_argument("--json", action="store_true")
    r.add_argument("--sync", choices=("auto", "serial", "asis"), default=None)
    r.add_argument("--races", choices=("error", "warn", "off"), default="error")
    r.add_argument("--no-data", action="store_true",
                   help="timing only: same schedule and cycles, no data generated or computed, no outputs")
    r.add_argument("--blocks", type=int, default=1, metavar="N", help="blocks of the entry to run on the chip")
    r.add_argument("--dump-passes", metavar="DIR", help="tile-level input: write the IR after each pass to DIR")
    r.add_argument("--software-pipeline", action="store_true", help="tile-level input: ping-pong its loops")

    lo = sub.add_parser("lower", help="lower a tile-level (seed 002) kernel to level-2 .pto")
    lo.add_argument("kernel")
    lo.add_argument("-o", "--output", required=True)
    lo.add_argument("--machine", default="a2a3")
    lo.add_argument("--dump-passes", metavar="DIR", help="write the IR after each pass to DIR")
    lo.add_argument("--software-pipeline", action="store_true", help="ping-pong load/compute/store loops")

    s = sub.add_parser("sync", help="insert synchronisation into a .pto kernel")
    s.add_argument("kernel")
    s.add_argument("-o", "--output", required=True)
    s.add_argument("--machine", default="a2a3")
    s.add_argument("--entry")

    i = sub.add_parser("isa", help="list or show instruction specs")
    isub = i.add_subparsers(dest="isa_command", required=True, parser_class=_Parser)
    isub.add_parser("list")
    show = isub.add_parser("show")
    show.add_argument("mnemonic")
    i.add_argument("--machine", default="a2a3")

    for command in extra:
        command.add_arguments(sub.add_parser(command.name, help=command.help))
    return p


def cmd_run(ns: argparse.Namespace) -> int:
    from pyptoemu.api import run, save_outputs
    from pyptoemu.trace.chrome import default_trace_path

    inputs = _pairs(ns.input, "--input")
    args = _pairs(ns.arg, "--arg")
    kernel = Path(ns.kernel)
    trace = None
    if ns.trace is not None:
        trace = ns.trace or str(default_trace_path(ns.kernel))
    out_dir = ns.output_dir or str(Path("out") / kernel.stem)
    res = run(kernel, inputs=inputs, args=args, machine=ns.machine, seed=ns.seed, trace=trace,
              entry=ns.entry, sync=ns.sync, races=ns.races, blocks=ns.blocks, dump_passes=ns.dump_passes,
              software_pipeline=ns.software_pipeline, data=not ns.no_data)
    paths = save_outputs(res, out_dir)
    for text in res.printed:
        print(text, file=sys.stderr if ns.json else sys.stdout)
    if ns.json:
        doc = {
            "entry": res.entry, "cycles": res.cycles, "time_us": res.time_us,
            "pipes": {p: res.pipes[p].to_json() for p in PIPE_ORDER},
            "bound_pipe": res.bound_pipe, "bound": res.bound, "outputs": paths, "trace": res.trace,
            "findings": [f.to_json() for f in res.findings],
            "machine": res.machine, "sync": res.sync_mode,
            "blocks": res.blocks, "cores": [c.to_json() for c in res.cores],
        }
        print(json.dumps(doc))
    else:
        print(format_summary(res, paths))
    for note in res.notices:
        print(f"note: {note}", file=sys.stderr)
    return 1 if res.errors() else 0


def format_summary(res, paths: dict[str, str]) -> str:
    lines = [f"entry      @{res.entry}  (machine {res.machine}, sync {res.sync_mode})",
             f"simulated  {res.cycles} cycles = {res.time_us:.3f} us"]
    total = max(res.cycles, 1) * max(len(res.cores), 1)  # share of the time of every core that ran
    lines.append("pipes      busy   share  instrs" + ("  (sums over cores)" if len(res.cores) > 1 else ""))
    for p in PIPE_ORDER:
        st = res.pipes[p]
        bar = "#" * round(20 * st.busy_cycles / total)
        lines.append(f"  {p:<5} {st.busy_cycles:>9} {100 * st.busy_cycles / total:6.1f}% {st.instructions:>7}  "
                     f"{bar}")
    lines.append(f"bound      {res.bound or res.bound_pipe}")
    if len(res.cores) > 1:
        lines.extend(format_cores(res))
    if paths:
        lines.append("outputs    " + ", ".join(f"{k} -> {v}" for k, v in paths.items()))
    else:
        lines.append("outputs    (the kernel wrote no pointer argument)")
    lines.append(f"trace      {res.trace or '(not written; pass --trace)'}")
    if res.findings:
        lines.append(f"findings   {len(res.findings)}")
        lines.extend(f"  {f}" for f in res.findings)
    else:
        lines.append("findings   none")
    return "\n".join(lines)


def format_cores(res, busiest: int = 4) -> list[str]:
    """The chip lines of the summary: blocks, cores used, makespan, the busiest cores."""
    kinds: dict[str, int] = {}
    for c in res.cores:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    used = ", ".join(f"{n} {k.upper()}" for k, n in kinds.items())
    lines = [f"chip       {res.blocks} blocks on {used}; makespan {res.cycles} cycles"]

    def busy(c) -> int:
        return max(st.busy_cycles for st in c.pipes.values())

    for c in sorted(res.cores, key=lambda c: (-busy(c), c.id))[:busiest]:
        top = max(c.pipes, key=lambda p: c.pipes[p].busy_cycles)
        blocks = ",".join(str(b) for b in c.blocks)
        lines.append(f"  {c.id:<7} block {blocks:<8} done at {c.cycles:>9}  busiest pipe {top} "
                     f"{c.pipes[top].busy_cycles}")
    return lines


def cmd_lower(ns: argparse.Namespace) -> int:
    from pyptoemu.api import lower

    _text, notes = lower(ns.kernel, ns.output, machine=ns.machine, dump_passes=ns.dump_passes,
                         software_pipeline=ns.software_pipeline)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(ns.output)
    return 0


def cmd_sync(ns: argparse.Namespace) -> int:
    from pyptoemu.check.autosync import sync_file

    notes = sync_file(ns.kernel, ns.output, machine=ns.machine, entry=ns.entry)
    for n in notes:
        print(n)
    return 0


def cmd_isa(ns: argparse.Namespace) -> int:
    from ptoisa.isa.describe import format_instruction, format_isa_list
    from ptoisa.machine import load_machine
    from pyptoemu.isa.runnable import load_isa

    isa = load_isa(machine=load_machine(ns.machine))
    if ns.isa_command == "list":
        print(format_isa_list(isa))
        return 0
    spec = isa.get(ns.mnemonic)
    if spec is None:
        raise InputError(f"no instruction named '{ns.mnemonic}' (try `pyptoemu isa list`)")
    print(format_instruction(spec))
    return 0


def main(argv: list[str] | None = None, extra: Sequence[Subcommand] = ()) -> int:
    parser = build_parser(extra)
    ns = parser.parse_args(argv)
    handlers = {"run": cmd_run, "sync": cmd_sync, "isa": cmd_isa, "lower": cmd_lower}
    handlers.update({command.name: command.handler for command in extra})
    try:
        return handlers[ns.command](ns)
    except PtoError as e:
        print(f"pyptoemu: {e}" if e.loc is None else str(e), file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
