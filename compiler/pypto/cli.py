"""``pyptoemu compile PROGRAM.py [-o DIR] [--strategy S] [--emit pto|tile-ir]``: compile every
@pl.program in a file."""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback

from pypto.errors import PyptoError, Span
from pypto.ir.compiler import compile as compile_ir
from pypto.ir.stmt import Program


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="pyptoemu compile", description="Compile PyPTO programs to .pto and C++.")
    ap.add_argument("program", help="a Python file defining one or more @pl.program classes")
    ap.add_argument("-o", "--output", default=None, help="output directory (default build_output/<name>)")
    ap.add_argument("--strategy", default="Default", choices=["Default", "PTOAS"])
    ap.add_argument("--no-dump", action="store_true", help="do not write pass dumps")
    ap.add_argument("--emit", default="pto", choices=["pto", "tile-ir"],
                    help="kernel form: level-2 .pto (default) or the tile-level SSA form")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0

    if not os.path.isfile(args.program):
        print(f"{args.program}: error: no such file", file=sys.stderr)
        return 2
    try:
        namespace = _run_program_file(args.program)
        programs = [v for v in namespace.values() if isinstance(v, Program)]
        if not programs:
            print(f"{args.program}: error: no @pl.program found", file=sys.stderr)
            return 2
        base = args.output or os.path.join("build_output", os.path.splitext(os.path.basename(args.program))[0])
        for prog in programs:
            out = base if len(programs) == 1 else os.path.join(base, prog.name)
            compile_ir(prog, output_dir=out, strategy=args.strategy, dump_passes=not args.no_dump, emit=args.emit)
            print(out)
    except PyptoError as e:
        print(e.render(), file=sys.stderr)
        return 2
    except SyntaxError as e:  # null bytes give no file or line: the file itself, line 1
        print(f"{e.filename or args.program}:{e.lineno or 1}:{e.offset or 1}: error: {e.msg}", file=sys.stderr)
        return 2
    except ProgramRaised as e:
        print(str(e), file=sys.stderr)
        return 2
    return 0


class ProgramRaised(Exception):
    """The user's program file raised an exception of its own while it was being run (not one of the
    compiler's: those stay internal errors)."""


def _run_program_file(path: str) -> dict:
    """Run the program file and return its globals. An exception raised by a line of that file (a
    failed assert, a missing import, ``raise``) is the program's error, located at its line: exit 2,
    not the emulator's 'internal error'."""
    try:
        return runpy.run_path(path, run_name="__pypto_compile__")
    except PyptoError as e:
        # one raised with no place (a DSL op called at the file's top level, outside any function:
        # 'error: pl.split can only be used inside ...' named no line) is placed at the file's line
        # that made the call
        if e.span is None or not e.span.is_known():
            mine = _mine(traceback.extract_tb(e.__traceback__), path)
            if mine:
                e.span = Span(path, mine[-1].lineno or 1, (getattr(mine[-1], "colno", None) or 0) + 1)
        raise
    except SyntaxError:
        raise
    except Exception as e:
        frames = traceback.extract_tb(e.__traceback__)
        mine = _mine(frames, path)
        if not mine or frames[-1] is not mine[-1]:
            raise  # raised inside a library (the compiler's front end or another): not located in the program
        raise ProgramRaised(f"{path}:{mine[-1].lineno}:1: error: the program raised {type(e).__name__}: {e}") from None


def _mine(frames: traceback.StackSummary, path: str) -> list[traceback.FrameSummary]:
    """The frames that run lines of the program file ``path``."""
    return [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(path)]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
