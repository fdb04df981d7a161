"""``python -m segkit_cli ...``: the ``segkit`` command without the installed script."""

import sys

from segkit_cli.main import main

sys.exit(main())
