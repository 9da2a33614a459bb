"""``python -m polars_fairmetrics``: the command-line interface."""

import sys

from polars_fairmetrics.cli import main

sys.exit(main())
