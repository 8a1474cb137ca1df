"""Op definitions by category; importing this package registers every op."""

from pypto.ops import block, system, tensor

__all__ = ["block", "system", "tensor"]
