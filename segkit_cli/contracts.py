"""``segkit_cli.contracts`` is ``segkit.cli.contracts`` (the command-line layer every tool of the repository shares)."""

import sys

from segkit.cli import contracts as _layer

sys.modules[__name__] = _layer
