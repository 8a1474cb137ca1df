"""NumPy semantics of the tile instructions, registered by key (see :mod:`.registry`).

Importing this package imports every semantics module, which fills :data:`SEMANTICS`. The calling
convention is documented in :mod:`pyptoemu.isa.arg`.
"""

from pyptoemu.isa.semantics import (  # noqa: F401  (registration)
    data,
    elementwise,
    matmul,
    misc,
    movement,
    reduce,
)
from pyptoemu.isa.semantics.misc import format_tile
from pyptoemu.isa.semantics.registry import SEMANTICS, SemanticsFn, semantics

__all__ = ["SEMANTICS", "SemanticsFn", "format_tile", "semantics"]
