"""The instruction set as data: records loaded from ``isa_specs/instructions/*.yaml``."""
