"""``pypto.pypto_core``: the module paths upstream's C++ core exposes (here, thin Python re-exports)."""

from pypto.pypto_core import codegen

__all__ = ["codegen"]
