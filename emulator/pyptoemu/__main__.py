"""``python -m pyptoemu``: the same command line as the ``pyptoemu`` script."""

import sys

from pyptoemu.cli import main

sys.exit(main())
