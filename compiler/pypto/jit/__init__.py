"""``pypto.jit``: the ``@pl.jit`` family (implemented in :mod:`pypto.language.jit`)."""

from pypto.language.jit import JITFunction, jit

__all__ = ["JITFunction", "jit"]
