"""``python -m zigzag ...``: see ``zigzag --help``."""

import sys

from zigzag.cli import main

sys.exit(main())
