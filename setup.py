"""Build hook: ship the top-level ``isa_specs/`` inside the installed ``ptoisa`` package.

The YAML specs stay at the repository top level (the layout in the architecture document); every
other setting is in ``pyproject.toml``. A wheel (``pip install .``, ``python -m build``) copies
``isa_specs/`` to ``ptoisa/isa_specs/``, where :func:`ptoisa.machine.isa_dir` looks first. An editable
install copies nothing: ``isa_dir`` finds the top-level directory of the checkout instead.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SPEC_DIR = Path(__file__).resolve().parent / "isa_specs"
SPEC_PATTERNS = ("README.md", "instructions/*.yaml", "machines/*.yaml")


class BuildPyWithSpecs(build_py):
    """``build_py`` that also copies the ISA and machine specs into ``ptoisa/isa_specs``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "ptoisa" / "isa_specs"
        for pattern in SPEC_PATTERNS:
            for source in sorted(SPEC_DIR.glob(pattern)):
                dest = target / source.relative_to(SPEC_DIR)
                self.mkpath(str(dest.parent))
                self.copy_file(str(source), str(dest))


setup(cmdclass={"build_py": BuildPyWithSpecs})
