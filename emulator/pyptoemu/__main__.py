"""``python -m pyptoemu``: the same command line as the installed ``pyptoemu`` script.

The script is ``pyptocli:main`` (the emulator's subcommands plus the compiler's ``compile``). The
emulator package must not import the compiler, so this entry point asks the installed distribution for
its ``pyptoemu`` console script instead of importing ``pyptocli`` by name; without an installed
distribution (a bare ``PYTHONPATH`` checkout) it runs the emulator's own subcommands.
"""

import sys
from importlib.metadata import entry_points

from pyptoemu.cli import main as emulator_main


def _installed_script():
    """The ``pyptoemu`` console-script callable of the installed distribution, or None."""
    for script in entry_points(group="console_scripts", name="pyptoemu"):
        try:
            return script.load()
        except ImportError:  # installed metadata whose modules are not importable here
            return None
    return None


sys.exit((_installed_script() or emulator_main)())
