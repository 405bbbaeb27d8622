"""`python -m ragdiag` runs the command line."""

import sys

from ragdiag.cli import main

sys.exit(main())
