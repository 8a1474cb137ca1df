"""Code generators (IR -> text). Codegen is not a pass and never mutates the IR."""

from pypto.codegen.cpp import CppCodegen
from pypto.codegen.pto import PTOCodegen

__all__ = ["CppCodegen", "PTOCodegen"]
