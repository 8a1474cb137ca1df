"""Command line of the emulator: ``pyptoemu run | report | lower | sync | isa``.

The ``pyptoemu`` console script is ``pyptocli.main``, which adds ``compile`` (the PyPTO compiler)
through ``extra`` below, so this package never imports the compiler. ``python -m pyptoemu`` is this
command line alone (no ``compile``).

Exit codes: 0 success; 1 the kernel faulted (deadlock, bounds, capacity, an error finding such as a
race) or ``--expect`` found a mismatch; 2 bad input (usage, parse, spec, verify errors, resource
limits, unreadable or unwritable files, a closed output pipe); 3 an internal error (a bug of the
emulator: ``internal error`` with the op and location it was processing). Errors print
``file:line:col: message`` on stderr, never a traceback. A faulted run still prints its summary (or
the full ``--json`` object) and writes its trace up to the fault.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ptoisa.suggest import did_you_mean
from pyptoemu import __version__
from pyptoemu.errors import FindingsError, InputError, InternalError, KernelFault, OutputError, PtoError

PIPE_ORDER = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
EXIT_FAULT = 1
EXIT_INPUT = 2

RUN_EXAMPLES = """\
examples:
  pyptoemu run examples/vadd_32x32.pto --trace
  pyptoemu run --json k.pto --input arg0=x.npy --arg arg3=64
  pyptoemu run k.pto --expect arg2=want.npy --rtol 1e-3
  pyptoemu run k.pto --trace out.json --report

--trace takes an optional FILE; written right before the kernel path (`--trace k.pto`) the path is
the kernel's and the trace goes to traces/<kernel>.json.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors: exit 2 without a traceback
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def _pairs(items: list[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"{flag} expects argN=VALUE, got '{item}'")
        if key.strip() in out:
            raise InputError(f"{flag} {key.strip()} is given twice ('{out[key.strip()]}' and '{value}')")
        out[key.strip()] = value
    return out


@dataclass(frozen=True)
class Subcommand:
    """A subcommand another package adds to ``pyptoemu`` (``compile`` from the compiler)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]
    epilog: str = ""


def _sub(sub, name: str, help: str, description: str, epilog: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def _add_run(sub) -> None:
    r = _sub(sub, "run", "run a .pto kernel on the emulated AI core",
             "Run a .pto kernel: real NumPy data through a cycle model of the pipes. Prints cycles, "
             "pipe utilisation, findings; writes outputs as .npy.", RUN_EXAMPLES)
    r.add_argument("kernel", help="the .pto file to run")
    r.add_argument("--entry", metavar="NAME", help="function to run (default: the one marked pto.entry, "
                   "or the only one)")
    r.add_argument("--input", action="append", metavar="argN=FILE.npy",
                   help="data for pointer argument N (repeatable); pointers not given get seeded random data")
    r.add_argument("--arg", action="append", metavar="argN=VALUE",
                   help="value of scalar argument N: an int, a float, true or false (repeatable)")
    r.add_argument("--seed", type=int, default=0, help="seed of the random stand-in inputs (default 0)")
    r.add_argument("--output-dir", metavar="DIR", help="where outputs go as argN.npy (default out/<kernel>)")
    r.add_argument("--trace", nargs="?", const="", default=None, metavar="FILE",
                   help="write a Chrome/Perfetto trace (default FILE: traces/<kernel>.json)")
    r.add_argument("--machine", default=None, metavar="NAME|FILE",
                   help="machine name in isa_specs/machines or a YAML path (default: the module's "
                   "pto.target_arch, else a2a3)")
    r.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    r.add_argument("--sync", choices=("auto", "serial", "asis"), default=None,
                   help="auto: insert synchronisation first; serial: program order, a full barrier after "
                   "every instruction (the reference auto must match); asis: run as written (default: "
                   "auto only when the kernel has no sync op)")
    r.add_argument("--races", choices=("error", "warn", "off"), default="error",
                   help="races fail the run (error, default), are reported (warn) or not checked (off)")
    r.add_argument("--max-steps", type=int, default=10_000_000, metavar="N",
                   help="stop a run after N loop iterations as endless (default 10000000)")
    r.add_argument("--expect", action="append", metavar="argN=REF.npy",
                   help="compare output N with a reference .npy; a mismatch exits 1 and prints the worst "
                   "elements (repeatable)")
    r.add_argument("--rtol", type=float, default=None, help="relative tolerance of --expect (default: by "
                   "dtype, fp32 1e-5, fp16 1e-3, bf16 1.6e-2; integers exact)")
    r.add_argument("--atol", type=float, default=None, help="absolute tolerance of --expect (default: by dtype)")
    r.add_argument("--report", action="store_true",
                   help="after the summary, print the report of the run's trace (implies --trace)")
    r.add_argument("--blocks", type=int, default=1, metavar="N",
                   help="blocks of the entry to run on the chip (each sees its get_block_idx; default 1)")
    r.add_argument("--no-data", action="store_true",
                   help="timing only: same schedule and cycles, no data generated or computed, no outputs")
    r.add_argument("--dump-passes", metavar="DIR", help="tile-level input: write the IR after each pass to DIR")
    r.add_argument("--software-pipeline", action="store_true", help="tile-level input: ping-pong its loops")
    r.add_argument("-q", "--quiet", action="store_true", help="no notes and no progress bar on stderr")


def _add_report(sub) -> None:
    rp = _sub(sub, "report", "utilisation, bottleneck and costliest source lines of a trace",
              "Read a trace written by `pyptoemu run --trace`: per-pipe and per-core utilisation, the "
              "bottleneck, the source lines that cost the most cycles, and waits per flag.",
              "examples:\n  pyptoemu report traces/vadd_32x32.json\n"
              "  pyptoemu report t.json --csv lines.csv --plot timeline.png --top 20\n")
    rp.add_argument("trace", help="a trace JSON file written by pyptoemu run --trace")
    rp.add_argument("--csv", metavar="FILE", help="also write the per-source-line table as CSV")
    rp.add_argument("--plot", metavar="FILE.png",
                    help="draw a utilisation timeline per pipe and core, as .png, .svg or .pdf by the suffix "
                    "(needs matplotlib: pip install "
                    "'pyptoemu[plot]')")
    rp.add_argument("--top", type=int, default=10, metavar="N", help="how many source lines to list (default 10)")


def _add_lower(sub) -> None:
    lo = _sub(sub, "lower", "lower a tile-level (seed 002) kernel to level-2 .pto",
              "Lower a kernel in the tile-level SSA form to the level-2 .pto the emulator runs.",
              "example:\n  pyptoemu lower tile_kernel.pto -o level2.pto --software-pipeline\n")
    lo.add_argument("kernel", help="a .pto file in the tile-level form")
    lo.add_argument("-o", "--output", required=True, metavar="OUT.pto", help="where to write the level-2 text")
    lo.add_argument("--machine", default="a2a3", metavar="NAME|FILE", help="machine (default a2a3)")
    lo.add_argument("--dump-passes", metavar="DIR", help="write the IR after each pass to DIR")
    lo.add_argument("--software-pipeline", action="store_true", help="ping-pong load/compute/store loops")


def _add_sync_and_isa(sub) -> None:
    s = _sub(sub, "sync", "insert set_flag/wait_flag/barrier into a .pto kernel",
             "Write a copy of a kernel with the synchronisation the emulator's --sync auto would insert.",
             "example:\n  pyptoemu sync examples/vadd_nosync.pto -o vadd_synced.pto\n")
    s.add_argument("kernel", help="the .pto file to synchronise")
    s.add_argument("-o", "--output", required=True, metavar="OUT.pto", help="where to write the result")
    s.add_argument("--machine", default="a2a3", metavar="NAME|FILE", help="machine (default a2a3)")
    s.add_argument("--entry", metavar="NAME", help="function to synchronise (default: the entry)")

    i = _sub(sub, "isa", "list or show instruction specs",
             "The instruction specs (isa_specs/instructions/*.yaml) as the emulator reads them.",
             "examples:\n  pyptoemu isa list\n  pyptoemu isa show TROWSUM\n")
    i.add_argument("--machine", default="a2a3", metavar="NAME|FILE", help="machine (default a2a3)")
    isub = i.add_subparsers(dest="isa_command", required=True, parser_class=_Parser, metavar="{list,show}")
    _sub(isub, "list", "every instruction, one line each", "List every instruction spec.",
         "example:\n  pyptoemu isa list\n")
    show = _sub(isub, "show", "one instruction: operands, pipe rule, timing, semantics",
                "Show one instruction spec.", "example:\n  pyptoemu isa show pto.tadd\n")
    show.add_argument("mnemonic", help="TADD, tadd or pto.tadd")


def build_parser(extra: Sequence[Subcommand] = ()) -> argparse.ArgumentParser:
    p = _Parser(prog="pyptoemu", description="Emulate PTO-ISA kernels on a SimPy model of an AI core.",
                epilog="examples:\n  pyptoemu run examples/vadd_32x32.pto --trace\n"
                       "  pyptoemu report traces/vadd_32x32.json\n  pyptoemu isa show TADD\n\n"
                       "`pyptoemu COMMAND --help` describes each command.",
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    _add_run(sub)
    _add_report(sub)
    _add_lower(sub)
    _add_sync_and_isa(sub)
    for command in extra:
        command.add_arguments(_sub(sub, command.name, command.help, command.help, command.epilog))
    return p


def normalise_argv(argv: list[str]) -> list[str]:
    """``--trace k.pto``: the ``.pto`` path is the kernel, not the trace file (``--trace`` alone)."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if arg == "--trace" and nxt.endswith(".pto"):
            out.append("--trace=")
        else:
            out.append(arg)
    return out


def safe_stem(kernel: str) -> str:
    """The kernel's name for default output paths: never ``.``/``..`` or empty (``...pto`` -> ``kernel``)."""
    stem = Path(kernel).stem.strip(".").strip()
    return stem or "kernel"


def _check_run_numbers(ns: argparse.Namespace) -> None:
    """--max-steps positive; --rtol/--atol finite and non-negative (a NaN or negative tolerance
    fails every comparison: a right result would be reported as a mismatch, exit 1)."""
    if ns.max_steps < 1:
        raise InputError(f"--max-steps must be positive, got {ns.max_steps}")
    for flag, tol in (("--rtol", ns.rtol), ("--atol", ns.atol)):
        if tol is not None and not 0 <= tol < float("inf"):
            raise InputError(f"{flag} must be a finite non-negative number, got {tol}")
    if ns.expect and ns.no_data:  # it read "the kernel did not write arg2 (outputs: none)"
        raise InputError("--expect compares computed values and --no-data computes none: drop one of them")


def cmd_run(ns: argparse.Namespace) -> int:
    from pyptoemu.api import run, save_outputs
    from pyptoemu.progress import progress_for

    inputs = _pairs(ns.input, "--input")
    args = _pairs(ns.arg, "--arg")
    expect = _pairs(ns.expect, "--expect")
    stem = safe_stem(ns.kernel)
    trace = None
    if ns.trace is not None or ns.report:
        trace = ns.trace or str(Path("traces") / f"{stem}.json")
    out_dir = Path(ns.output_dir or Path("out") / stem)
    _check_run_numbers(ns)
    fault: KernelFault | None = None
    show_progress = not (ns.quiet or ns.json) and _is_terminal(sys.stderr)
    try:
        res = run(Path(ns.kernel), inputs=inputs, args=args, machine=ns.machine, seed=ns.seed, trace=trace,
                  entry=ns.entry, sync=ns.sync, races=ns.races, max_steps=ns.max_steps, blocks=ns.blocks,
                  dump_passes=ns.dump_passes, software_pipeline=ns.software_pipeline, data=not ns.no_data,
                  progress=progress_for(sys.stderr) if show_progress else None)
    except KernelFault as e:
        if e.result is None:
            raise
        fault, res = e, e.result
    if fault is not None and not isinstance(fault, FindingsError):
        paths: dict[str, str] = {}
        _remove_stale_outputs(res, out_dir, inputs)
    else:
        paths = save_outputs(res, out_dir)
    for text in res.printed:
        print(text, file=sys.stderr if ns.json else sys.stdout)
    mismatches = _check_expected(res, expect, ns.rtol, ns.atol) if fault is None or not res.faulted else []
    if ns.json:
        doc = res.to_json(paths)
        if expect:
            doc["expect"] = {m.name: str(m) for m in mismatches}
        print(json.dumps(doc))
    else:
        print(format_summary(res, paths, data=not ns.no_data))
        if ns.report and res.trace:
            from pyptoemu.report import format_report, load_report

            print()
            print(format_report(load_report(res.trace)))
    if not ns.quiet:
        for note in res.notices:
            print(f"note: {note}", file=sys.stderr)
    if fault is not None and not isinstance(fault, FindingsError):
        print(str(fault), file=sys.stderr)
    for m in mismatches:
        print(f"mismatch: {m}", file=sys.stderr)
    return EXIT_FAULT if fault is not None or mismatches else 0


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _remove_stale_outputs(res, out_dir: Path, inputs: dict[str, str]) -> None:
    """A faulted run writes no outputs; files a previous run left under this run's output names are
    removed so that they do not look current (inputs read from there are kept)."""
    from pyptoemu.output import remove_stale

    core = res.core
    if core is None or not out_dir.is_dir():
        return
    given = {Path(v).resolve() for v in inputs.values()}
    names = [out_dir / f"{gm.name}.npy" for gm in core.memory.gm.values()]
    remove_stale([p for p in names if p.resolve() not in given])


def _check_expected(res, expect: dict[str, str], rtol: float | None, atol: float | None) -> list:
    import numpy as np

    from pyptoemu.api import read_npy_file
    from pyptoemu.compare import Mismatch, compare

    out = []
    for name, path in expect.items():
        if name not in res.outputs:
            written = ", ".join(res.outputs) or "none"
            raise InputError(f"--expect {name}: the kernel did not write {name}{did_you_mean(name, res.outputs)} "
                             f"(outputs: {written})")
        try:
            want = read_npy_file(path)
        except MemoryError:
            raise InputError(f"--expect {name}: cannot read {path}: out of memory") from None
        except (OSError, ValueError) as e:
            raise InputError(f"--expect {name}: cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
        got = res.outputs[name]
        if want.dtype.type is np.void and not want.dtype.fields:  # how np.save writes ml_dtypes (bf16, fp8)
            if got.dtype.type is np.void or want.dtype.itemsize != got.dtype.itemsize:
                raise InputError(f"--expect {name}: {path} holds raw {want.dtype.itemsize}-byte records, which cannot "
                                 f"be read as the output's {got.dtype}")
            want = want.view(got.dtype)
        elif want.dtype.kind not in "biuf":
            raise InputError(f"--expect {name}: {path} holds {want.dtype} values, not numbers to compare with the "
                             f"output's {got.dtype}")
        m = compare(name, got, want, rtol=rtol, atol=atol)
        if m is not None:
            out.append(m)
    return [m for m in out if isinstance(m, Mismatch)]


def format_summary(res, paths: dict[str, str], data: bool = True) -> str:
    from pyptoemu.report import format_launch  # (imported when used: the CLI starts without it)

    lines = [f"entry      @{res.entry}  (machine {res.machine}, sync {res.sync_mode})",
             f"simulated  {res.cycles} cycles = {res.time_us:.3f} us"
             + ("  (stopped at the fault)" if res.faulted else "")]
    launch = format_launch(res.cycles, res.launch, res.machine, res.chip.machine.clock_ghz if res.chip else 0.0)
    if launch and not res.faulted:
        lines.append(launch)
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
    if res.faulted:
        lines.append("outputs    (not written: the kernel faulted)")
    elif not data:  # --no-data: nothing was computed, so there is nothing to write (not "nothing written")
        lines.append("outputs    (none: timing only, --no-data computes no data)")
    elif paths:
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


def cmd_report(ns: argparse.Namespace) -> int:
    from pyptoemu.report import format_report, load_report, plot_format, plot_report, write_csv

    if ns.top < 0:  # a negative count sliced the table from the end: "top -1 of 8" listed 7
        raise InputError(f"--top must be 0 or more, got {ns.top}")
    # a file the report cannot be written to stops the command before the report is printed (it
    # printed the whole report, then failed with exit 2: read as a report with a stray error)
    if ns.plot:
        plot_format(ns.plot)
    for option, path in (("--csv", ns.csv), ("--plot", ns.plot)):
        if path and Path(path).is_dir():
            raise OutputError(f"cannot write {path}: is a directory ({option} names the output file)")
    report = load_report(ns.trace)
    print(format_report(report, top=ns.top))
    if ns.csv:
        print(f"wrote {write_csv(report, ns.csv)}")
    if ns.plot:
        print(f"wrote {plot_report(report, ns.plot)}")
    return 0


def cmd_sync(ns: argparse.Namespace) -> int:
    from pyptoemu.check.autosync import sync_file

    if Path(ns.output).is_dir():
        raise OutputError(f"cannot write {ns.output}: is a directory (-o names the output file)")
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
        hint = did_you_mean(ns.mnemonic.lower().removeprefix("pto."), isa.instructions)
        raise InputError(f"no instruction named '{ns.mnemonic}'{hint} (try `pyptoemu isa list`)")
    print(format_instruction(spec))
    return 0


def main(argv: list[str] | None = None, extra: Sequence[Subcommand] = ()) -> int:
    parser = build_parser(extra)
    handlers = {"run": cmd_run, "report": cmd_report, "lower": cmd_lower, "sync": cmd_sync, "isa": cmd_isa}
    handlers.update({command.name: command.handler for command in extra})
    previous = _terminate_cleanly()
    try:
        ns = parser.parse_args(normalise_argv(list(sys.argv[1:] if argv is None else argv)))
        code = handlers[ns.command](ns)
        sys.stdout.flush()
        return code
    except PtoError as e:
        print(f"pyptoemu: {e}" if e.loc is None else str(e), file=sys.stderr)
        return e.exit_code
    except BrokenPipeError:
        return _closed_pipe()
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        print(f"pyptoemu: cannot access{where}: {e.strerror or e}", file=sys.stderr)
        return EXIT_INPUT
    except InternalError as e:
        print(f"pyptoemu: {e}" if e.loc is None else str(e), file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        print(f"pyptoemu: out of memory: the {ns.command} needs more memory than this machine has",
              file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the last line of defence: our bug, said as such
        print(f"pyptoemu: {InternalError(e, f'pyptoemu {ns.command}', None)}", file=sys.stderr)
        return InternalError.exit_code
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _terminate_cleanly():
    """SIGTERM (``kill``, a batch system's time limit) ends the run as SIGINT does: by an exception,
    so a trace or output being written is discarded (``write_atomic``) instead of its temporary file
    staying behind, then exit 128 + 15. Returns the handler it replaced (None off the main thread,
    where Python cannot install one)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def _raise(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, _raise)


def _closed_pipe() -> int:
    """The reader of stdout went away (``| head``): stop quietly, without Python's exit-time
    complaint about flushing stdout (the documented recipe: point stdout at devnull)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    print("pyptoemu: output closed early (broken pipe)", file=sys.stderr)
    return EXIT_INPUT


if __name__ == "__main__":
    sys.exit(main())
