"""pyptoemu: a SimPy model of one Ascend-class AI core that runs PTO-ISA `.pto` kernels."""

from pyptoemu.errors import InputError, KernelFault, Loc, PtoError

__all__ = ["InputError", "KernelFault", "Loc", "PtoError", "run"]


def __getattr__(name: str):
    # `run` lives in api.py, which pulls in SimPy and NumPy; import it lazily so that
    # `import ptoisa.text.parser` stays cheap.
    if name == "run":
        from pyptoemu.api import run

        return run
    raise AttributeError(name)
