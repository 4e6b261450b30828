"""``python -m fusionviz``: the same as the ``fusionviz`` command (``fusionviz.cli.main``)."""

import sys

from fusionviz.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
