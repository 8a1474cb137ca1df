"""PyPTO: a Python DSL for tile kernels, compiled to PTO text (.pto) and pto-isa C++."""

from pypto.dtype import DataType
from pypto.errors import CompileError, PyptoError, PyptoTypeError, Span

__all__ = ["CompileError", "DataType", "PyptoError", "PyptoTypeError", "Span", "cli_compile"]


def cli_compile(argv: list[str]) -> int:
    """``pyptoemu compile PROGRAM.py [-o DIR]``: compile every @pl.program in a file."""
    from pypto.cli import main

    return main(argv)
