"""pyptoemu: a SimPy model of one Ascend-class AI core that runs PTO-ISA `.pto` kernels."""

from pyptoemu.errors import InputError, KernelFault, Loc, PtoError

# The one place the version is written: pyproject.toml reads it (dynamic version), `--version` prints it.
__version__ = "0.1.0"

__all__ = ["InputError", "KernelFault", "Loc", "PtoError", "RunResult", "__version__", "run"]


def __getattr__(name: str):
    # `run` lives in api.py, which pulls in SimPy and NumPy; import it lazily so that
    # `import ptoisa.text.parser` stays cheap.
    if name == "run":
        from pyptoemu.api import run

        return run
    if name == "RunResult":
        from pyptoemu.result import RunResult

        return RunResult
    raise AttributeError(name)
