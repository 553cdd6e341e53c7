"""``python -m baccarat.cli``: the same as the ``baccarat`` command."""

import sys

from baccarat.cli import main

sys.exit(main())
