"""``python -m pyptocli``: the same as the ``pyptoemu`` console script."""

import sys

from pyptocli import main

sys.exit(main())
