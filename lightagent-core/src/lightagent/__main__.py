"""``python -m lightagent``: the same command line as the ``lightagent`` script."""

from __future__ import annotations

import sys

from lightagent.cli import main

if __name__ == "__main__":
    sys.exit(main())
