"""``segkit_cli.parser`` is ``segkit.cli.parser`` (the command-line layer every tool of the repository shares)."""

import sys

from segkit.cli import parser as _layer

sys.modules[__name__] = _layer
