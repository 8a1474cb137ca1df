"""``pyptoemu compile PROGRAM.py [-o DIR] [--strategy S] [--emit pto|tile-ir]``: compile every
@pl.program in a file."""

from __future__ import annotations

import argparse
import os
import runpy
import sys

from pypto.errors import PyptoError
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
        namespace = runpy.run_path(args.program, run_name="__pypto_compile__")
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
    except SyntaxError as e:
        print(f"{e.filename}:{e.lineno}:{e.offset}: error: {e.msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
