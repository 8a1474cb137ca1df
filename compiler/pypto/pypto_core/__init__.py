"""``pypto.pypto_core``: the module paths upstream's C++ core exposes (here, thin Python re-exports).

Seed 004's Python usage starts with ``from pypto.pypto_core import DataType, ir``; seed 000's with
``from pypto.pypto_core import codegen``.
"""

from pypto import ir
from pypto.dtype import DataType
from pypto.pypto_core import codegen

__all__ = ["DataType", "codegen", "ir"]
