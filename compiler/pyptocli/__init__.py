"""The ``pyptoemu`` command: the emulator's subcommands plus ``compile`` from the PyPTO compiler.

This is the one module that imports both packages, so that the emulator never imports the compiler
(``pyptoemu.cli`` takes ``compile`` as an extra subcommand) and the compiler imports the emulator
only in ``pypto.runtime``.
"""

from __future__ import annotations

import argparse

from pypto import cli as compiler_cli
from pyptoemu import cli as emulator_cli


def _compile_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("program", help="a Python file defining @pl.program classes")
    parser.add_argument("-o", "--output-dir", default=None, metavar="DIR",
                        help="where the .pto and C++ files go (default build_output/<program>)")
    parser.add_argument("--strategy", default="Default", metavar="NAME",
                        help="pass strategy: Default (inserts sync) or PTOAS (leaves sync to the emulator)")
    parser.add_argument("--emit", default="pto", choices=("pto", "tile-ir"),
                        help="kernel form: level-2 .pto (default) or the tile-level SSA form")


def _compile(ns: argparse.Namespace) -> int:
    argv = [ns.program] + (["-o", ns.output_dir] if ns.output_dir else []) + ["--strategy", ns.strategy,
                                                                               "--emit", ns.emit]
    return int(compiler_cli.main(argv))


COMPILE = emulator_cli.Subcommand("compile", "compile a PyPTO program (.py) to .pto and C++",
                                  _compile_arguments, _compile,
                                  epilog="example:\n  pyptoemu compile examples/row_softmax.py -o out/row_softmax\n")


def main(argv: list[str] | None = None) -> int:
    """Run ``pyptoemu run | sync | isa | compile``."""
    return emulator_cli.main(argv, extra=(COMPILE,))
