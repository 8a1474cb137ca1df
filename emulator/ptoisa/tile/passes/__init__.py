"""The passes of the tile-level form (seed 002 §8), each a class with a ``name`` and ``apply``."""
