"""``segkit_cli.argtypes`` is ``segkit.cli.argtypes`` (the command-line layer every tool of the repository shares)."""

import sys

from segkit.cli import argtypes as _layer

sys.modules[__name__] = _layer
